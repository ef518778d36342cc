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
  ResourceClaims and DeviceClasses a changed file names.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from dra_migrate import discover, layout
from dra_migrate.findings import ConfigError, InputProblem
from dra_migrate.report.model import Report

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)

if TYPE_CHECKING:  # the parser is imported where a changed file is parsed
    from dra_migrate import load

# keys whose value names an object another file may define, and the kind it names
REFERENCE_KEYS = {
    "resourceClaimTemplateName": "ResourceClaimTemplate",
    "resourceClaimName": "ResourceClaim",
    "deviceClassName": "DeviceClass",
}


def _git(args: list[str], cwd: str) -> str:
    import subprocess

    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, check=True, timeout=120, text=True
        ).stdout
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or "").strip().splitlines()
        raise ConfigError(
            f"git {' '.join(args[:2])} failed: {detail[-1] if detail else exc}"
        ) from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise ConfigError(f"--changed-since needs git: {exc}") from None


def changed_since(ref: str, start: str) -> set[str]:
    """Real paths of the files changed since the merge base of ``ref`` and HEAD, the
    working tree included."""
    folder = start if os.path.isdir(start) else os.path.dirname(os.path.abspath(start))
    top = _git(["rev-parse", "--show-toplevel"], folder).strip()
    try:
        base = _git(["merge-base", ref, "HEAD"], top).strip()
    except ConfigError:
        raise ConfigError(
            f"--changed-since {ref}: not a commit of this repository (fetch it first, e.g. "
            f"actions/checkout with fetch-depth: 0)"
        ) from None
    changed = _git(["diff", "--name-only", "-z", "--no-renames", "--diff-filter=d", base], top)
    untracked = _git(["ls-files", "-z", "--others", "--exclude-standard"], top)
    names = [n for n in (changed + untracked).split("\0") if n]
    return {os.path.realpath(os.path.join(top, name)) for name in names}


def files_under(paths: Iterable[str], excludes: Iterable[str]) -> set[str]:
    """Real paths of the files under ``paths`` (strings, as every path of a run)."""
    return {c.real for c in discover.expand(paths, excludes)}


def referenced(files: set[str], universe: set[str]) -> set[str]:
    """Files of ``universe`` that ``files`` reference (kustomize entries, names of DRA objects)."""
    found: set[str] = set()
    wanted: set[tuple[str, str]] = set()
    for path in files:
        if os.path.basename(path) in layout.KUSTOMIZATION_NAMES:
            found |= layout.references(path) & universe
            continue
        data = layout.read_bytes(path)
        if any(key.encode() in data for key in REFERENCE_KEYS):
            wanted |= _names(path, data)
    if wanted:
        kinds = {kind.encode() for _name, kind in wanted}
        for path in universe - files:
            data = layout.read_bytes(path)
            if any(k in data for k in kinds) and _defines(path, data) & wanted:
                found.add(path)
    return found


def _docs(path: str, data: bytes) -> list[load.Document]:
    from dra_migrate import load

    try:
        return load.parse(load.decode(path, data))
    except (InputProblem, RecursionError):
        return []


def _names(path: str, data: bytes) -> set[tuple[str, str]]:
    """(name, kind) of the objects a file names through REFERENCE_KEYS."""
    from dra_migrate import load

    names = set()
    for doc in _docs(path, data):
        if doc.root is None:
            continue
        for node in load.walk(doc.root):
            for key, _k, value in load.entries(node):
                name = load.scalar(value) if key in REFERENCE_KEYS else None
                if name:
                    names.add((name, REFERENCE_KEYS[key]))
    return names


def _defines(path: str, data: bytes) -> set[tuple[str, str]]:
    from dra_migrate import locate

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
