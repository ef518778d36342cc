"""``convert --verify-builds``: what kustomize builds is what the conversion meant.

For every kustomization under the paths that builds a file the run changes,
``kubectl kustomize`` (or ``kustomize build``) of the tree as it is, converted
object by object as ``convert -`` converts a stream, must equal the build of the
tree as the run would write it (a copy in a temporary folder), up to the names the
conversion gives ResourceClaimTemplates: a template is compared by what it asks
for and by the pod claims that refer to it, never by its name (nor by the labels
and annotations the kustomization's transformers give it). Both builds run on
copies of the repository's own files, offline and within the run's time budget
(processes.py); a kustomization that names a remote base, or reads a file
through a link out of the repository, is not built (DRA251, DRA250); nothing is
written to the repository.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from dra_migrate.pipeline import compare, processes
from dra_migrate.repo import discover, roles
from dra_migrate.report.findings import finding
from dra_migrate.report.model import FileResult, Report, Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from dra_migrate.convert.mapping import Settings


def builder() -> list[str] | None:
    """The command that builds a kustomization folder: kubectl, else kustomize (found
    on the absolute entries of PATH only: processes.which)."""
    kubectl = processes.which("kubectl")
    if kubectl:
        return [kubectl, "kustomize"]
    kustomize = processes.which("kustomize")
    return [kustomize, "build"] if kustomize else None


def verify(
    report: Report,
    paths: Sequence[str],
    settings: Settings,
    command: list[str],
    excludes: Sequence[str] = (),
    budget: processes.Budget | None = None,
) -> None:
    """Add DRA231 (a build that differs or fails after the conversion), DRA252 (one
    not verified: not copied, or failing before the conversion), DRA232 (the
    builds proven equal, or one not verified), DRA250 (a build that reads a file
    outside the repository: not copied, not built) and DRA251 (a kustomization that
    names a remote or missing base: not built) to the report's run-level findings.
    The kustomizations are found as the run finds files (.gitignore, the
    configuration's and ``excludes``).

    Both builds run on copies of the repository's own files (processes.copy_tree:
    links kept as links inside it, nothing outside it), in an environment of the
    proofs' own (offline), within the run's time budget; kubectl's error text is
    never shown (processes.kustomize_failure)."""
    changed = {
        os.path.realpath(r.path): r
        for r in report.files
        if r.status is Status.CHANGED and r.converted is not None
    }
    if not changed:
        return
    every_exclude = [*settings.config.exclude, *excludes]
    used = {os.path.realpath(k): roles.references(k) for k in _kustomizations(paths, every_exclude)}
    folders = sorted(
        {os.path.dirname(k) for k, files in used.items() if files & set(changed) or k in changed}
    )
    if not folders:
        return
    repository = processes.repository(paths)
    read: set[str] = set()  # every real path a build reads (through its bases too)
    buildable: list[str] = []
    for folder in folders:
        reads, problem = _closure(_in(folder), repository)
        if problem is not None:
            report.findings.append(problem)
            continue
        read |= reads | used.get(_in(folder), set())
        buildable.append(folder)
    if not buildable:
        return
    # the copy: the smallest folder of the repository that holds everything built
    inner = [p for p in read if processes.inside(p, repository)]
    root = os.path.commonpath(
        [*buildable, *(os.path.dirname(p) for p in changed), *(os.path.dirname(p) for p in inner)]
    )
    if not processes.inside(root, repository):
        root = repository
    run = budget or processes.Budget()
    proven: list[str] = []
    with processes.workspace("dra-migrate-builds-") as tmp:
        before_copy, after_copy = os.path.join(tmp, "before"), os.path.join(tmp, "after")
        try:  # (links inside the repository kept, and what they point at copied)
            before_copy = processes.copy_tree(root, before_copy, repository).root
            after_copy = processes.copy_tree(root, after_copy, repository).root
        except (processes.TooLarge, processes.Outside) as exc:
            report.findings.append(
                finding(
                    "DRA252",
                    "",
                    0,
                    0,
                    f"not verified: the tree to build is too large to copy ({exc})",
                )
            )
            return
        except OSError as exc:
            report.findings.append(
                finding(
                    "DRA252",
                    "",
                    0,
                    0,
                    f"not verified: the tree to build cannot be copied ({exc.strerror or type(exc).__name__})",
                )
            )
            return
        for real, result in changed.items():
            if not processes.inside(real, root):
                continue
            target = os.path.join(after_copy, os.path.relpath(real, root))
            if os.path.islink(target):  # a link inside the copy: its file is written
                target = os.path.join(
                    after_copy, os.path.relpath(os.path.realpath(target), after_copy)
                )
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                assert result.converted is not None
                handle.write(result.converted)
        env = processes.environment(os.path.join(tmp, "home"))
        limit = settings.config.max_file_size
        shown_root = os.path.relpath(root)
        for folder in buildable:
            shown = os.path.relpath(folder)
            inner_path = os.path.relpath(folder, root)
            before, error = _build(command, before_copy, inner_path, env, run, limit, shown_root)
            if before is None:
                report.findings.append(
                    finding(
                        "DRA252",
                        shown,
                        0,
                        0,
                        f"not verified: the build before the conversion fails: {error} "
                        f"({_named(command)})",
                    )
                )
                continue
            after, error = _build(command, after_copy, inner_path, env, run, limit, shown_root)
            if after is None:
                report.findings.append(
                    finding(
                        "DRA231",
                        shown,
                        0,
                        0,
                        f"the kustomize build fails after the conversion: {error} ({_named(command)})",
                        "nothing is written; please report this with the kustomization",
                    )
                )
                continue
            try:
                found = difference(_converted(before, shown, settings), after)
            except Exception as exc:  # a build that does not load (an alias bomb): said
                found = f"a build does not load as YAML ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
            if found:
                report.findings.append(
                    finding(
                        "DRA231",
                        shown,
                        0,
                        0,
                        "the kustomize build after the conversion differs from the "
                        f"conversion of the build before: {found} ({_named(command)})",
                        "nothing is written; please report this with the kustomization",
                    )
                )
            else:
                proven.append(shown)
    if proven:
        report.findings.append(
            finding(
                "DRA232",
                "",
                0,
                0,
                f"{len(proven)} kustomize build(s) proven equal before and after the "
                f"conversion: {', '.join(proven)} ({_named(command)})",
            )
        )


def _named(command: list[str]) -> str:
    """The binary that made the builds, as the proof's findings name it."""
    return f"built with {' '.join(command)}"


# kustomization fields that name files or folders kustomize loads (api/types/
# kustomization.go): each is loaded through kustomize's loader, which fetches a URL
# (http, https) and clones a git remote (api/internal/git/repospec.go's forms)
_LISTS = (
    "resources",
    "bases",
    "components",
    "crds",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "patchesStrategicMerge",
)
_ITEM_PATHS = ("patches", "patchesJson6902", "replacements")  # items with a ``path``
_GENERATORS = ("configMapGenerator", "secretGenerator")  # items with files, envs, env
_FOLDERS = ("resources", "bases", "components", "generators", "transformers", "validators")
# a remote in any of kustomize's forms: a scheme (https://, ssh://, file://, git::),
# scp-like ``user@host:path``, the implicit hosts, ``?ref=`` and the other query
# parameters, a ``//`` subfolder, Azure's ``_git/``
_REMOTE = re.compile(
    r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|[^/\s]*@[^/\s]*:|gh:|(?:www\.)?(?:github|gitlab|bitbucket)\.(?:com|org)\b)"
    r"|[?]|//|(?:^|/)_git/"
)


def _entries(data: Any) -> Iterable[tuple[str, bool]]:
    """(entry, whether it may be a kustomization folder) of every file a kustomization's
    data names."""
    if not isinstance(data, dict):
        return
    for key in _LISTS:
        for item in data.get(key) or () if isinstance(data.get(key), list) else ():
            if (
                isinstance(item, str)
                and "\n" not in item
                and not item.lstrip().startswith(("apiVersion", "{"))
            ):
                yield item, key in _FOLDERS
    for key in _ITEM_PATHS:
        for item in data.get(key) or () if isinstance(data.get(key), list) else ():
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                yield item["path"], False
    for key in _GENERATORS:
        for item in data.get(key) or () if isinstance(data.get(key), list) else ():
            if not isinstance(item, dict):
                continue
            names = [*(item.get("files") or ()), *(item.get("envs") or ())]
            if isinstance(item.get("env"), str):
                names.append(item["env"])
            for name in names:
                if isinstance(name, str):
                    yield name.split("=", 1)[-1], False
    openapi = data.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        yield openapi["path"], False


def _closure(kustomization: str, repository: str) -> tuple[set[str], Any]:
    """The real paths a kustomization reads, through the kustomizations it names; or a
    finding that stops its build: DRA251 for an entry that is remote (or names nothing
    of the repository: kustomize would try it as a remote), DRA250 for one whose real
    path leaves the repository (a link to a runner's file)."""
    from dra_migrate.manifests.compose import load_data
    from dra_migrate.report.findings import InputProblem

    shown_top = os.path.relpath(os.path.dirname(kustomization))
    seen: set[str] = set()
    reads: set[str] = set()
    stack = [kustomization]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        reads.add(current)
        shown = os.path.relpath(current)
        try:
            docs = load_data(discover.read_file(current), shown)
        except (discover.Unreadable, InputProblem):
            continue  # (the build says what it makes of it)
        folder = os.path.dirname(current)
        for entry, may_be_folder in _entries(docs[0] if docs else None):
            target = os.path.normpath(os.path.join(folder, entry))
            if _REMOTE.search(entry) or not os.path.lexists(target):
                return reads, _remote(shown_top, shown, entry)
            real = os.path.realpath(target)
            if not processes.inside(real, repository):
                return reads, _outside(shown_top, shown, entry)
            reads.add(real)
            if may_be_folder and os.path.isdir(real):
                inner = _in(real)
                if inner != real:
                    stack.append(inner)
    return reads, None


def _remote(folder: str, shown: str, entry: str) -> Any:
    return finding(
        "DRA251",
        shown,
        1,
        1,
        f"not built: {shown} names {entry!r}, which is no file or folder of the "
        f"repository (a remote base or file kustomize would fetch, or a missing one); "
        f"the build of {folder} is not verified: a proof never reaches the network",
        "vendor the remote base into the repository to have the build verified",
    )


def _outside(folder: str, shown: str, entry: str) -> Any:
    return finding(
        "DRA250",
        shown,
        1,
        1,
        f"not built: {shown} names {entry!r}, which leads outside the repository "
        f"(a symbolic link); the build of {folder} is not copied nor verified, and "
        "nothing is written",
        "make it a file of the repository",
    )


def _in(folder: str) -> str:
    """The kustomization file of a folder (any of its three names)."""
    for name in roles.KUSTOMIZATION_NAMES:
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    return folder


def _kustomizations(paths: Sequence[str], excludes: Sequence[str]) -> Iterable[str]:
    """The kustomizations under ``paths`` that build something of their own (not a
    component), found as the run finds its files: excluded folders are not built."""
    for candidate in discover.expand(paths, excludes):
        path = candidate.path
        if os.path.basename(path) in roles.KUSTOMIZATION_NAMES and (
            candidate.explicit or not _component(path)
        ):
            yield path


def _component(path: str) -> bool:
    """A ``kind: Component`` kustomization (read once)."""
    data = roles.read_bytes(path)
    return b"Component" in data and any(
        line.replace(" ", "") == "kind:Component"
        for line in data.decode("utf-8", "replace").splitlines()
    )


def _build(
    command: list[str],
    copy: str,
    inner: str,
    env: dict[str, str],
    budget: processes.Budget,
    limit: int,
    shown: str,
) -> tuple[bytes | None, str]:
    """One build of the folder ``inner`` of a ``copy``: its output, or None and why in the tool's
    words (a path it names shown as ``shown`` + its place in the copy)."""
    share = budget.next_share()
    if share <= 0:
        return None, budget.spent()
    done = processes.run([*command, os.path.join(copy, inner)], copy, env, share, limit)
    if done.stdout is None:
        return None, processes.kustomize_failure(done, copy, shown)
    return done.stdout, ""


def _converted(built: bytes, shown: str, settings: Settings) -> bytes:
    """The build converted as ``convert -`` would convert it."""
    from dra_migrate.pipeline.one_file import process
    from dra_migrate.repo.roles import Role

    result: FileResult = process(f"kustomize build of {shown}", built, Role(), settings)
    if result.status is Status.CHANGED and result.converted is not None:
        return result.converted
    return built


def difference(expected: bytes, actual: bytes) -> str:
    """The first difference between two builds, names of templates aside; "" when none."""
    return compare.difference(
        compare.keyed(compare.loaded(expected)), compare.keyed(compare.loaded(actual))
    )
