"""``convert --write`` of units: the files that must change together (a kustomize base
with its overlays' patches, kustomization and new templates: convert/overlays.py; a
Helm chart's values and templates: helm/unit.py) written whole or not at all.

Every file of a unit is staged first (its new bytes in a temporary file beside it,
the old file kept aside: staging.stage_in_place, staging.stage_new), then all are put
in place with SIGINT and SIGTERM held (staging.commit); a file that cannot be staged
or put in place leaves every file of the unit as it was (what was replaced put back,
what was created removed), and the findings say so, naming the unit's kind. Where
even putting back fails, DRA016 says which file is in which state. A file of no
unit is a unit of one.
"""

from __future__ import annotations

from dra_migrate.convert import staging, writer
from dra_migrate.report.findings import finding
from dra_migrate.report.model import FileResult, Status

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from pathlib import Path


def groups(files: list[FileResult]) -> list[list[FileResult]]:
    """The changed files in units written whole: the files that share a unit (a
    kustomize overlay with its base, a Helm chart's values and templates; a base two
    overlays patch ties them together), each other file alone; in the run's order,
    a unit's new files first."""
    changed = [r for r in files if r.status is Status.CHANGED and r.converted is not None]
    owner: dict[str, int] = {}  # a unit's label -> its group
    groups: list[list[FileResult]] = []
    for result in changed:
        joined = sorted({owner[u] for u in result.units if u in owner})
        if not joined:
            groups.append([result])
            index = len(groups) - 1
        else:
            index = joined[0]
            for other in joined[1:]:  # a file that ties two groups: one group
                groups[index].extend(groups[other])
                groups[other] = []
                for label, at in owner.items():
                    if at == other:
                        owner[label] = index
            groups[index].append(result)
        for label in result.units:
            owner[label] = index
    return [sorted(g, key=lambda r: not r.created) for g in groups if g]


def collisions(files: list[FileResult], output_dir: Path) -> dict[Path, list[str]]:
    """``--output-dir``: the paths of the changed files each output path would take."""
    out: dict[Path, list[str]] = {}
    for result in files:
        if result.status is Status.CHANGED:
            out.setdefault(writer.output_path(output_dir, result.path), []).append(result.path)
    return out


def write(
    group: list[FileResult],
    roots: tuple[str, ...],
    through_links: bool,
    written: list[str],
    output_dir: Path | None = None,
    outputs: dict[Path, list[str]] | None = None,
) -> None:
    """``--write`` (or ``--output-dir``) of one unit: every file staged (its new bytes
    beside it, the old one kept aside), then all put in place (staging.commit); a file
    that cannot be staged or put in place leaves every file of the unit as it was, and
    says so."""
    from pathlib import Path  # a run that writes (resources.py)

    paths = tuple(Path(p) for p in roots)
    staged: list[staging.Staged] = []
    current = group[0]
    try:
        for current in group:
            assert current.converted is not None and current.original is not None
            where = Path(current.path)
            if output_dir is not None:
                target = writer.output_path(output_dir, current.path)
                others = [p for p in (outputs or {}).get(target, []) if p != current.path]
                if others:
                    raise writer.Refused(
                        "DRA015",
                        f"{target} is also the output of {', '.join(others)}; none is written",
                    )
                staged.append(
                    staging.stage_copy(output_dir, current.path, current.converted, where)
                )
            elif current.created:
                staged.append(
                    staging.stage_new(where, current.converted, paths, through_links, current.path)
                )
            else:
                staged.append(
                    staging.stage_in_place(
                        where,
                        current.converted,
                        current.original,
                        paths,
                        through_links,
                        current.path,
                    )
                )
    except (writer.Refused, OSError) as exc:
        staging.discard_all(staged)
        _unit_failed(group, current, exc, {}, output_dir)
        return
    except BaseException:
        staging.discard_all(staged)
        raise
    try:
        staging.commit(staged, written)
    except staging.UnitFailed as failed:
        if not isinstance(failed.cause, (writer.Refused, OSError)):
            raise failed.cause from None  # an interrupt: every file of the unit as it was
        failing = next(r for r in group if r.path == failed.failed.shown)
        states = {s.shown: s.state for s in failed.staged}
        _unit_failed(group, failing, failed.cause, states, output_dir)


def _unit_failed(
    group: list[FileResult],
    failing: FileResult,
    exc: BaseException,
    states: dict[str, str],
    output_dir: Path | None,
) -> None:
    """The findings of a unit not written: the file that failed says why (its own code,
    DRA009 for an error of the system), the others that they are as they were (DRA012)
    or, where a file could not be put back, which file is in which state (DRA016)."""
    if isinstance(exc, writer.Refused):
        code, why = exc.code, exc.message
    else:
        assert isinstance(exc, OSError)
        where = writer.output_path(output_dir, failing.path) if output_dir else failing.path
        code, why = "DRA009", f"cannot write {where}: {exc.strerror or exc}"
    labels = ", ".join(sorted({u for r in group for u in r.units})) or "unit"
    left = [path for path, state in states.items() if state == "left written"]
    for result in group:
        result.status = Status.FAILED
        if result is failing:
            result.findings.append(finding(code, result.path, 1, 1, why))
        elif not left:
            result.findings.append(
                finding(
                    "DRA012",
                    result.path,
                    1,
                    1,
                    f"not written: another file of its unit ({labels}), {failing.path}, could "
                    "not be; every file of the unit is as it was",
                )
            )
    if left:
        as_was = [p for p, state in states.items() if state != "left written"]
        for result in group:
            result.findings.append(
                finding(
                    "DRA016",
                    result.path,
                    1,
                    1,
                    f"unit {labels} is half written (putting back failed): {failing.path} "
                    f"could not be written; left written: {', '.join(left)}; as it was: "
                    f"{', '.join(as_was) or 'none'}",
                    "restore the written files from version control (git checkout) and run again",
                )
            )
