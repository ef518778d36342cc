"""Part of discovery: the files a run reports on, when it reads more than it reports.

A pre-commit hook is given the staged files, and a pull request check should
look at what the pull request touches; but a claim may name a template
defined in another file, a patch belongs to a kustomization elsewhere, and a
generated name must not take one defined in an untouched file. So the run
reads every file under its paths and ``--context`` paths, and the report (and,
for ``convert --write``, the files written) is narrowed to:

- the files under the paths given, with ``--context``;
- with ``--changed-since REF``, the files under the paths that changed since
  the merge base of REF and HEAD (committed, staged, unstaged or untracked),
  plus the files those reference: the resources and patches of a changed
  kustomization, and the files that define the ResourceClaimTemplates,
  ResourceClaims and DeviceClasses a changed file names; and the files that
  reference the changed ones: the kustomizations that build or patch one, and
  the files that name an object a changed or deleted file defines or defined
  at the merge base (a template renamed or deleted under a claim).

REF is validated (never read as an option: ``--end-of-options``), and git runs
with the repository's helpers off (git.py): comparing the work tree with the
base switches off by name every filter driver the configuration defines.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from dra_migrate.repo import discover, roles
from dra_migrate.report.findings import ConfigError, InputProblem, quote_path
from dra_migrate.report.model import Report

TYPE_CHECKING = False  # typing is not imported at run time (start-up)

if TYPE_CHECKING:  # the parser is imported where a changed file is parsed
    from dra_migrate.manifests import sources

# keys whose value names an object another file may define, and the kind it names
REFERENCE_KEYS = {
    "resourceClaimTemplateName": "ResourceClaimTemplate",
    "resourceClaimName": "ResourceClaim",
    "deviceClassName": "DeviceClass",
}


def _git(
    args: list[str], top: str, check: bool = True, config: dict[str, str] | None = None
) -> str:
    """What ``git ARGS`` printed in the work tree ``top`` (git.py's safe options and
    environment, ``config`` on top; a trusted work tree only); ConfigError where it
    failed."""
    import subprocess

    from dra_migrate import git

    if not git.trusted(top):
        raise ConfigError(f"--changed-since: {top} is a repository inside the work tree")
    program = git.which("git")  # (absolute PATH entries only)
    if program is None:
        raise ConfigError("--changed-since needs git on PATH")
    try:
        done = subprocess.run(
            [program, *(a.decode() for a in git.SAFE), *args],
            cwd=top,
            env={**git.environment(), **(config or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise ConfigError(f"--changed-since needs git: {exc}") from None
    if check and done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ConfigError(f"git {args[0]} failed: {detail[-1] if detail else done.returncode}")
    return done.stdout.decode("utf-8", "surrogateescape")


def _no_filters(top: str) -> tuple[list[str], dict[str, str]]:
    """``-c`` options and environment that switch off every filter driver the
    repository's configuration defines (``filter.NAME.clean``, ``smudge``,
    ``process``): comparing the work tree with a commit hashes files, and git would
    run a driver's program for each. The environment (``GIT_CONFIG_KEY_n``, git 2.31
    and later) holds any name, one with ``=`` too, which ``-c`` would cut there; the
    options serve an older git for every other name."""
    listed = _git(["config", "-z", "--name-only", "--get-regexp", r"^filter\."], top, check=False)
    keys = []
    for key in listed.split("\0"):
        _name, dot, field = key[len("filter.") :].rpartition(".")
        if key.startswith("filter.") and dot and field in ("clean", "smudge", "process"):
            keys.append(key)
    keys = sorted(set(keys))
    options = [a for key in keys if "=" not in key for a in ("-c", f"{key}=")]
    try:  # entries the user's environment holds already stay first
        first = int(os.environ.get("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        first = 0
    config = {"GIT_CONFIG_COUNT": str(first + len(keys))} if keys else {}
    for number, key in enumerate(keys, first):
        config[f"GIT_CONFIG_KEY_{number}"] = key
        config[f"GIT_CONFIG_VALUE_{number}"] = ""
    return options, config


def valid_ref(ref: str) -> str:
    """``ref`` as the command line gave it, or ConfigError (a usage error): an empty
    one, one that git would read as an option, one with a character no ref holds."""
    if not ref or ref.startswith("-") or any(c in ref for c in "\0\n\r"):
        raise ConfigError(
            f"--changed-since {quote_path(ref)}: not a git ref or commit (a branch, tag or "
            "commit, e.g. origin/main)"
        )
    return ref


def _base(ref: str, top: str) -> str:
    """The merge base of ``ref`` and HEAD, or ConfigError."""
    not_found = ConfigError(
        f"--changed-since {quote_path(ref)}: not a commit of this repository (fetch it "
        "first, e.g. actions/checkout with fetch-depth: 0)"
    )
    commit = _git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", valid_ref(ref) + "^{commit}"],
        top,
        check=False,
    ).strip()
    if not _OBJECT_ID.fullmatch(commit):
        raise not_found
    base = _git(["merge-base", "--end-of-options", commit, "HEAD"], top, check=False).strip()
    if not _OBJECT_ID.fullmatch(base):
        raise not_found
    return base


@dataclass(frozen=True, slots=True)
class Changes:
    """What changed since the merge base: the real paths of the files changed (added,
    modified, untracked, deleted: a deleted one no longer exists), and each changed
    or deleted file's content at the base (what it defined may be gone)."""

    paths: set[str]
    before: dict[str, bytes]


def changes(ref: str, start: str, limit: int = discover.DEFAULT_MAX_FILE_SIZE) -> Changes:
    """``Changes`` since the merge base of ``ref`` and HEAD, the working tree included."""
    from dra_migrate import git
    from dra_migrate.repo import context

    folder = start if os.path.isdir(start) else os.path.dirname(os.path.abspath(start))
    top = git.work_tree_top(folder)
    if top is None:
        raise ConfigError(f"--changed-since: {quote_path(start)} is not in a git work tree")
    base = _base(ref, top)
    args = ["diff-index", "--name-only", "-z", "--no-renames", base, "--"]
    options, config = _no_filters(top)
    changed = _git([*options, *args], top, config=config)
    untracked = _git(["ls-files", "-z", "--others", "--exclude-standard"], top)
    names = [n for n in changed.split("\0") if n]
    paths = {os.path.realpath(os.path.join(top, n)) for n in names}
    paths |= {os.path.realpath(os.path.join(top, n)) for n in untracked.split("\0") if n}
    wanted = [n for n in names if n.lower().endswith(git.EXTENSIONS)]
    before = {
        os.path.realpath(os.path.join(top, name)): data
        for name, _size, data in context._blobs(top, base.encode() + b":", wanted, limit)
        if data is not None
    }
    return Changes(paths, before)


_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def files_under(paths: Iterable[str], excludes: Iterable[str]) -> set[str]:
    """Real paths of the files under ``paths`` (strings, as every path of a run)."""
    return {c.real for c in discover.expand(paths, excludes)}


def referenced(
    files: set[str], universe: set[str], before: dict[str, bytes] | None = None
) -> set[str]:
    """Files of ``universe`` that ``files`` reference, and that reference them.

    Forward: the resources and patches of a kustomization among ``files``, the files
    that define the DRA objects ``files`` name. Back: the kustomizations that build
    or patch one of ``files``, and the files that name an object one of ``files``
    defines, or defined at the base (``before``: the content of changed and deleted
    files there), so that a claim whose template was renamed, changed or deleted is
    checked with it."""
    found: set[str] = set()
    wanted: set[tuple[str, str]] = set()  # named by the files
    defined: set[tuple[str, str]] = set()  # defined by them, now or at the base
    keys = [key.encode() for key in REFERENCE_KEYS]
    kinds = [kind.encode() for kind in REFERENCE_KEYS.values()]
    for path in files:
        if os.path.basename(path) in roles.KUSTOMIZATION_NAMES:
            found |= roles.references(path) & universe
            continue
        data = roles.read_bytes(path)
        if discover.mentions(data, keys):
            wanted |= _names(path, data)
        if discover.mentions(data, kinds):
            defined |= _defines(path, data)
    for path, data in (before or {}).items():
        if discover.mentions(data, kinds):
            defined |= _defines(path, data)
    for path in universe - files:
        if os.path.basename(path) in roles.KUSTOMIZATION_NAMES:
            if roles.references(path) & files:
                found.add(path)
            continue
        data = roles.read_bytes(path)
        defines = wanted and discover.mentions(data, kinds) and _defines(path, data) & wanted
        if defines or (defined and discover.mentions(data, keys) and _names(path, data) & defined):
            found.add(path)
    return found


def _docs(path: str, data: bytes) -> list[sources.Document]:
    from dra_migrate.manifests import compose, sources

    try:
        return compose.parse(sources.decode(path, data))
    except (InputProblem, RecursionError):
        return []


def _names(path: str, data: bytes) -> set[tuple[str, str]]:
    """(name, kind) of the objects a file names through REFERENCE_KEYS."""
    from dra_migrate.manifests import trees

    names = set()
    for doc in _docs(path, data):
        if doc.root is None:
            continue
        for node in trees.walk(doc.root):
            for key, _k, value in trees.entries(node):
                name = trees.scalar(value) if key in REFERENCE_KEYS else None
                if name:
                    names.add((name, REFERENCE_KEYS[key]))
    return names


def _defines(path: str, data: bytes) -> set[tuple[str, str]]:
    from dra_migrate.manifests import locate

    return {
        (obj.name, obj.kind)
        for doc in _docs(path, data)
        for obj in locate.objects(doc)
        if obj.kind in REFERENCE_KEYS.values()
    }


def narrow(report: Report, keep: set[str]) -> None:
    """Keep the files of ``keep`` (real paths; and the findings about them or about no
    file)."""

    def kept(display: str) -> bool:
        return os.path.realpath(display) in keep

    report.files = [f for f in report.files if kept(f.path)]
    report.findings = [f for f in report.findings if not f.path or kept(f.path)]
