"""``convert --verify-builds``: what kustomize builds is what the conversion meant.

For every kustomization under the paths that builds a file the run changes,
``kubectl kustomize`` (or ``kustomize build``) of the tree as it is, converted
object by object as ``convert -`` converts a stream, must equal the build of the
tree as the run would write it (a copy in a temporary folder), up to the names the
conversion gives ResourceClaimTemplates: a template is compared by what it asks
for and by the pod claims that refer to it, never by its name (nor by the labels
and annotations the kustomization's transformers give it). Kustomize is run as
the user has it; nothing is written to the repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence

from dra_migrate.pipeline import compare
from dra_migrate.repo import discover, roles
from dra_migrate.report.findings import finding
from dra_migrate.report.model import FileResult, Report, Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dra_migrate.convert.mapping import Settings

TIMEOUT = 120  # seconds for one build
_SKIPPED = (".git", "node_modules", ".venv", "__pycache__")


def builder() -> list[str] | None:
    """The command that builds a kustomization folder: kubectl, else kustomize."""
    kubectl = shutil.which("kubectl")
    if kubectl:
        return [kubectl, "kustomize"]
    kustomize = shutil.which("kustomize")
    return [kustomize, "build"] if kustomize else None


def verify(
    report: Report,
    paths: Sequence[str],
    settings: Settings,
    command: list[str],
    excludes: Sequence[str] = (),
) -> None:
    """Add DRA231 (a build that differs or fails after the conversion) and DRA232 (the
    builds proven equal) to the report's run-level findings. The kustomizations are
    found as the run finds files (.gitignore, the configuration's and ``excludes``)."""
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
    # the copy holds every file the builds read: what they build through their bases too
    read = {f for k in folders for f in used.get(_in(k), set())}
    root = os.path.commonpath(
        [*folders, *(os.path.dirname(p) for p in changed), *(os.path.dirname(f) for f in read)]
    )
    import tempfile

    proven: list[str] = []
    with tempfile.TemporaryDirectory(prefix="dra-migrate-builds-") as tmp:
        copy = os.path.join(tmp, "tree")
        shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(*_SKIPPED))
        for real, result in changed.items():
            target = os.path.join(copy, os.path.relpath(real, root))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                assert result.converted is not None
                handle.write(result.converted)
        for folder in folders:
            shown = os.path.relpath(folder)
            before, error = _build(command, folder)
            if before is None:
                report.findings.append(
                    finding(
                        "DRA232",
                        shown,
                        0,
                        0,
                        f"not verified: the build fails before the conversion ({error})",
                    )
                )
                continue
            after, error = _build(command, os.path.join(copy, os.path.relpath(folder, root)))
            if after is None:
                report.findings.append(
                    finding(
                        "DRA231",
                        shown,
                        0,
                        0,
                        f"the kustomize build fails after the conversion: {error}",
                        "nothing is written; please report this with the kustomization",
                    )
                )
                continue
            found = difference(_converted(before, shown, settings), after)
            if found:
                report.findings.append(
                    finding(
                        "DRA231",
                        shown,
                        0,
                        0,
                        "the kustomize build after the conversion differs from the "
                        f"conversion of the build before: {found}",
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
                f"conversion: {', '.join(proven)}",
            )
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


def _build(command: list[str], folder: str) -> tuple[bytes | None, str]:
    try:
        done = subprocess.run([*command, folder], capture_output=True, timeout=TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    if done.returncode != 0:  # the error, not a deprecation warning before it
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        errors = [x for x in lines if x.lower().startswith("error")]
        return None, (errors or lines or [f"exit {done.returncode}"])[-1]
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
