"""The chart pass: every Helm chart a run reports on (a template or values file that
sets GPU resources: DRA203, DRA204) taken as one unit, its way chosen, and what the
way makes of it turned into the run's file results.

The way, in this order:

1. a library chart renders nothing of its own: manual (DRA243);
2. ``--strategy bridge`` (or the configuration's default): the bridge (DRA242);
3. a values recipe for the chart's family and version (``recipes.py``): recipe;
4. a vendored upstream chart (``chart.py`` says which) without one: the bridge
   (DRA242), never a template edit, which would fork it;
5. the team's own chart: template edits behind a switch (``template_edit.py``), or
   manual with the construct named.

A chart whose migration would change a file outside the paths given (a hook run on
one staged file of it) is left as it is (DRA249), as a kustomize unit is: its files
are written together or not at all. Vendored dependencies come before the charts
that hold them, so a recipe's edit of a parent's values is what the parent's own
way reads.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
from collections.abc import Callable

from dra_migrate.convert.mapping import HelmConfig, Settings
from dra_migrate.helm import chart as charts
from dra_migrate.helm.model import BRIDGE, DONE, MANUAL, RECIPE, Chart, ChartEdit, Options
from dra_migrate.repo import discover, roles
from dra_migrate.report.findings import Finding, InputProblem, finding
from dra_migrate.report.model import ChartPlan, FileResult, InventoryItem, Status

REPORTED_CODES = ("DRA203", "DRA204")  # a chart's GPU lines, as a file's own pass finds them
GUARDED = "DRA246"  # a template's lines behind the switch a template edit wrote
CI_FOLDER = "ci"  # values files a chart's CI renders it with (chart.py reads them too)
KINDLESS = "DRA212"  # what the file pass says of a ci/ values file's GPU ask
TRIGGERS = (*REPORTED_CODES, GUARDED)  # what makes a file's chart one the pass looks at


def carry_out(
    layout: roles.Layout,
    results: dict[str, FileResult],
    in_run: set[str],
    settings: Settings,
    bridged: Callable[[Chart], bool] = lambda _chart: False,
) -> tuple[list[FileResult], list[ChartPlan]]:
    """Migrate every chart with a file in ``results`` (real path -> result) that sets
    GPU resources. ``in_run``: the real paths of every file of the run. Returns the
    results of the files the ways change or add that the run had no result for, and
    one plan a chart; ``results`` is updated in place."""
    members = _members(layout, results)
    found = {root for root, files in members.items() if any(map(_reported, files.values()))}
    if not found:
        return [], []
    helm = settings.config.helm
    options = Options(helm.values, helm.switch == "on", helm.switch_key)
    pending: dict[str, bytes] = {}  # bytes a chart's way wrote, which the next one reads

    def read_bytes(real: str) -> bytes:
        if real in pending:
            return pending[real]
        if not os.path.lexists(real):  # (Read's contract: a file that is not there)
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), real)
        return discover.read_file(real, settings.config.max_file_size)

    wanted: set[str] = set()  # dependencies whose GPUs only their parents' values set
    for root in list(found):
        wanted |= _dependencies_set(root, members, read_bytes)
    found |= wanted
    roots = sorted(found, key=lambda r: (-r.count(os.sep), r))  # dependencies first

    added: dict[str, FileResult] = {}
    plans = []
    for root in roots:
        display = _shown(root, members, results)
        if root not in wanted and not _own_lines(root, members, read_bytes):
            continue  # its GPU keys are its dependencies' values, which their ways took
        try:
            edit = _way(root, display, read_bytes, settings, options, bridged)
        except InputProblem as problem:
            edit = _manual(root, display, problem.finding)
        except discover.Unreadable as exc:
            edit = _manual(root, display, finding(exc.code, display, 1, 1, exc.message))
        except Exception as exc:  # a bug: the chart is left as it is, never a traceback
            edit = _manual(
                root,
                display,
                finding(
                    "DRA243",
                    os.path.join(display, charts.CHART_FILE),
                    1,
                    1,
                    f"chart left as it is: internal error ({type(exc).__name__}: {exc}); "
                    "please report this with the chart",
                ),
            )
        outside = sorted(p for p in (*edit.changed, *edit.created) if not _in_run(p, in_run))
        if outside and (edit.changed or edit.created):
            edit = _held(edit, root, display, outside[0])
        for real, data in edit.changed.items():
            pending[real] = data
        _apply(edit, root, display, results, members, added)
        _settle(edit.plan.way, edit.plan.codes, root, members, read_bytes)
        plans.append(edit.plan)
    return list(added.values()), plans


def _settle(
    way: str,
    codes: tuple[str, ...],
    root: str,
    members: dict[str, dict[str, FileResult]],
    read_bytes: Callable[[str], bytes],
) -> None:
    """The chart's way given to the GPU asks of its values files that the file pass
    left for it (convert/values_asks.py: rows kept by DRA204, or DRA278; a ``ci/``
    values file, which the file pass reads as a document of no kind, DRA212), and to
    those of a parent's values under the chart's key (a vendored dependency comes
    first, so a row it settles is no longer left for the parent's way): a recipe or
    template edit converts them, the bridge serves them, a chart migrated already asks
    for no extended resource, a manual chart keeps them by its reason. An operator's
    key (DRA278) keeps its reason unless the chart is bridged: no chart edit reaches
    the pods the operator builds."""
    from dra_migrate.convert.values_asks import REPORTED, VALUES_CODE

    ci = os.path.join(root, CI_FOLDER) + os.sep
    rows = [
        (result, row)
        for chart, under in _holders(root, members, read_bytes)
        for real, result in members[chart].items()
        for row in result.inventory
        if (row.kept in REPORTED and (not under or _first_key(row) in under))
        or (chart == root and real.startswith(ci) and row.kept == KINDLESS and not row.kind)
    ]
    for result, row in rows:
        if way == BRIDGE:
            row.kept, row.bridged = "", True
        elif row.kept not in (VALUES_CODE, KINDLESS):
            continue  # an operator's key (DRA278): its own reason stands
        elif way == DONE:
            result.inventory.remove(row)
        elif way == MANUAL:
            row.kept = codes[0] if codes else row.kept
        else:  # RECIPE, TEMPLATE
            row.kept = ""


def _holders(
    root: str, members: dict[str, dict[str, FileResult]], read_bytes: Callable[[str], bytes]
) -> list[tuple[str, set[str]]]:
    """The charts whose values files may set the GPUs of the chart at ``root``: itself
    (every key), and each chart above it that vendors it (the keys that hold its values:
    its alias or name)."""
    out: list[tuple[str, set[str]]] = [(root, set())] if root in members else []
    for chart in members:
        if chart != root and _within(root, chart):
            keys = {
                k for k, folder in _dependency_keys(chart, read_bytes).items() if folder == root
            }
            if keys:
                out.append((chart, keys))
    return out


def _first_key(row: InventoryItem) -> str:
    """The first step of the values key a values file's row is at."""
    return row.pod_path.split(".", 1)[0].split("[", 1)[0]


def _reported(result: FileResult) -> bool:
    return any(f.code in TRIGGERS for f in result.findings)


def _members(
    layout: roles.Layout, results: dict[str, FileResult]
) -> dict[str, dict[str, FileResult]]:
    """The results by the chart their file belongs to (the innermost chart's folder),
    in the run's order: asked of the layout once a file, not once a chart and file."""
    members: dict[str, dict[str, FileResult]] = {}
    for real, result in results.items():
        root = layout.chart_of(real)
        if root is not None:
            members.setdefault(root, {})[real] = result
    return members


_VALUES_KEY = re.compile(r"values key (\S+) sets ")  # DRA204's message (unconverted.py)


def _own_lines(
    root: str,
    members: dict[str, dict[str, FileResult]],
    read_bytes: Callable[[str], bytes],
) -> bool:
    """Whether the chart at ``root`` still has GPU lines of its own: a template's, or a
    values key outside the keys of its dependencies (``<alias>.resources...``: the
    dependency's way migrates those)."""
    files = members.get(root, {})
    if any(f.code == GUARDED for result in files.values() for f in result.findings):
        return True  # migrated by a template edit: its way says so
    keys: dict[str, str] | None = None
    for key in _values_keys(files):
        if key is None:
            return True
        if keys is None:
            keys = _dependency_keys(root, read_bytes)
        if key.split(".")[0] not in keys:
            return True
    return False


def _dependencies_set(
    root: str,
    members: dict[str, dict[str, FileResult]],
    read_bytes: Callable[[str], bytes],
) -> set[str]:
    """The folders of the vendored dependencies whose values the chart at ``root`` sets
    GPUs in (the dependency's own files may not name the resource at all)."""
    keys: dict[str, str] | None = None
    out = set()
    for key in _values_keys(members.get(root, {})):
        if key is None:
            continue
        if keys is None:
            keys = _dependency_keys(root, read_bytes)
        folder = keys.get(key.split(".")[0])
        if folder is not None:
            out.add(folder)
    return out


def _values_keys(files: dict[str, FileResult]) -> list[str | None]:
    """The values key of each GPU line a chart's files (``files``) still report (None:
    a template's line, or a key the message does not name)."""
    out: list[str | None] = []
    for result in files.values():
        for found in result.findings:
            if found.code in REPORTED_CODES:
                key = _VALUES_KEY.match(found.message) if found.code == "DRA204" else None
                out.append(key.group(1) if key else None)
    return out


def _dependency_keys(root: str, read_bytes: Callable[[str], bytes]) -> dict[str, str]:
    """The keys of a chart's values that hold its vendored dependencies' values, each
    with the dependency's folder (real path)."""
    try:
        chart = charts.read(root, root, read_bytes, HelmConfig())
    except InputProblem:
        return {}
    vendored = {os.path.basename(p): p for p in charts.subcharts(chart)}
    return {d.key: vendored[d.name] for d in chart.dependencies if d.name in vendored}


def _in_run(real: str, in_run: set[str]) -> bool:
    """A file the run may write: one of its files, or a new file in a folder of one."""
    if real in in_run:
        return True
    if os.path.lexists(real):
        return False
    folder = os.path.dirname(real)
    return any(os.path.dirname(p) == folder for p in in_run)


def _shown(
    root: str, members: dict[str, dict[str, FileResult]], results: dict[str, FileResult]
) -> str:
    """The chart's folder as the run shows its files' paths: from the result of the
    file nearest to it (in it, or in a folder above it, as a dependency's parent). A
    file of the chart's own is as near as any, so the others are looked at only when
    the run has none of its files (a dependency that only its parent's values set)."""
    for real, result in members.get(root, {}).items():
        here = _shown_from(root, real, result)
        if here is not None:
            return here[1]
    best: tuple[int, str] | None = None
    for real, result in results.items():
        here = _shown_from(root, real, result)
        if here is not None and (best is None or here[0] > best[0]):
            best = here
    return best[1] if best else os.path.relpath(root)


def _shown_from(root: str, real: str, result: FileResult) -> tuple[int, str] | None:
    """The chart's folder as the result of the file ``real`` shows it, with the length
    of the folder the file and the chart share (None: its path says nothing of it)."""
    common = os.path.commonpath([real, root])
    tail = os.path.relpath(real, common)  # the file, from the common folder
    below = os.path.relpath(root, common)  # the chart, from there
    shown = os.path.normpath(result.path)
    if shown == tail:
        base = ""
    elif shown.endswith(os.sep + tail):
        base = shown[: -len(tail) - 1]
    else:
        return None
    return len(common), (os.path.normpath(os.path.join(base, below)) if base else below)


def _way(
    root: str,
    display: str,
    read_bytes: Callable[[str], bytes],
    settings: Settings,
    options: Options,
    bridged: Callable[[Chart], bool],
) -> ChartEdit:
    from dra_migrate.helm import recipes

    known = charts.KNOWN_UPSTREAM | recipes.names()
    chart = charts.read(root, display, read_bytes, settings.config.helm, known)
    chart_file = os.path.join(display, charts.CHART_FILE)
    if chart.type == "library":
        return _manual(
            root,
            display,
            finding(
                "DRA243",
                chart_file,
                1,
                1,
                f"chart {chart.name} is a library chart: its templates render in the charts "
                "that use it, so it is left as it is",
                "migrate the charts that include it; or keep the GPU on the device plugin, "
                "served by a DeviceClass with extendedResourceName (--strategy bridge)",
            ),
            chart,
        )
    if bridged(chart):
        return _bridge(chart, "the strategy bridges it")
    try:
        recipe = recipes.plan(chart, settings, options, read_bytes)
        missed = recipes.unserved(chart) if recipe is None else ""
    except recipes.NotFit as why:
        recipe, missed = None, str(why)
    if recipe is not None:
        return recipe
    if chart.upstream:
        return _bridge(
            chart, f"{chart.why_upstream}, {missed or 'without a DRA switch the recipes know'}"
        )
    from dra_migrate.helm import template_edit

    return template_edit.plan(chart, settings, options, read_bytes)


def _bridge(chart: Chart, why: str) -> ChartEdit:
    found = finding(
        "DRA242",
        os.path.join(chart.display, charts.CHART_FILE),
        1,
        1,
        f"chart {chart.name} {chart.version} is left on the device plugin ({why}): a "
        "DeviceClass with extendedResourceName serves its extended resource requests",
        "make sure such a class exists on the cluster (the driver's own on "
        "resource.k8s.io/v1, or dra-migrate deviceclasses --strategy bridge .); a values "
        "recipe or the chart's own DRA switch, when it gains one, migrates it",
    )
    plan = ChartPlan(chart.display, chart.name, chart.version, BRIDGE, codes=("DRA242",))
    return ChartEdit(plan, findings=[found])


def _manual(root: str, display: str, why: Finding, chart: Chart | None = None) -> ChartEdit:
    name, version = (chart.name, chart.version) if chart else (os.path.basename(root), "")
    plan = ChartPlan(display, name, version, MANUAL, codes=(why.code,))
    return ChartEdit(plan, findings=[why])


def _held(edit: ChartEdit, root: str, display: str, outside: str) -> ChartEdit:
    """A chart whose way would change a file outside the paths given: left as it is."""
    shown = os.path.normpath(os.path.join(display, os.path.relpath(outside, root)))
    found = finding(
        "DRA249",
        os.path.join(display, charts.CHART_FILE),
        1,
        1,
        f"chart {edit.plan.name} is left as it is: its migration ({edit.plan.way}) changes "
        f"{shown}, which is outside the paths given",
        "run dra-migrate on the chart's folder (a pre-commit hook given one file of a "
        "chart sees only that file)",
    )
    plan = dataclasses.replace(edit.plan, way=MANUAL, files=(), codes=("DRA249",))
    return ChartEdit(plan, findings=[found])


def _apply(
    edit: ChartEdit,
    root: str,
    display: str,
    results: dict[str, FileResult],
    members: dict[str, dict[str, FileResult]],
    added: dict[str, FileResult],
) -> None:
    """The edit's files and findings in the run's results: a changed file's result is
    CHANGED with the new bytes (its DRA203/DRA204 replaced by the way's findings), a
    new file is a created result, and a way that changes nothing keeps the files'
    findings, with its own beside them."""

    def shown(real: str) -> str:  # (a parent's values: above the chart's folder)
        return os.path.normpath(os.path.join(display, os.path.relpath(real, root)))

    def result_of(real: str, path: str) -> FileResult:
        found = results.get(real) or added.get(real)
        if found is None:
            found = added[real] = FileResult(path, Status.UNCHANGED)
        return found

    writes = {**edit.changed, **edit.created}
    if edit.plan.way == DONE and not edit.findings:
        edit.findings.append(_done(edit.plan, display))
    by_path: dict[str, list[Finding]] = {}
    for found in edit.findings:
        by_path.setdefault(found.path, []).append(found)
    touched: set[str] = set()
    for real, data in writes.items():
        path = shown(real)
        result = result_of(real, path)
        created = real in edit.created
        keep = [f for f in result.findings if f.code not in TRIGGERS]
        result.findings = _sorted([*keep, *by_path.pop(result.path, [])])
        if not created and result.original is None:
            result.original = discover.read_file(real)
        if created:
            result.original = b""
        result.converted = data
        result.status = Status.CHANGED
        result.created = created
        result.regions = None
        result.units.add(f"Helm chart {display}")  # (the unit written whole, by its kind)
        touched.add(real)
    if edit.plan.way in (DONE, RECIPE):  # the chart's own switch guards its GPU lines
        inside = (
            f for chart, files in members.items() if _within(chart, root) for f in files.items()
        )
        for real, result in inside:
            if real not in touched:
                result.findings = [f for f in result.findings if f.code not in TRIGGERS]
                if result.status is Status.REPORTED and not result.findings:
                    result.status = Status.UNCHANGED
    for path, more in by_path.items():  # findings on files the way does not write
        real = discover.real_name(path) if os.path.exists(path) else os.path.join(root, path)
        result = result_of(real, path)
        result.findings = _sorted([*result.findings, *more])


def _within(folder: str, root: str) -> bool:
    """Whether ``folder`` is the chart folder ``root`` or one below it."""
    return folder == root or folder.startswith(root + os.sep)


_DONE_WAYS = {True: "template edits behind its DRA switch", False: "its values"}


def _done(plan: ChartPlan, display: str) -> Finding:
    """DRA246 on Chart.yaml for a chart migrated already, with what turns DRA on."""
    turn = f"; {plan.to_set} renders DRA claims" if plan.to_set else ""
    return finding(
        "DRA246",
        os.path.join(display, charts.CHART_FILE),
        1,
        1,
        f"chart {plan.name} is migrated already ({_DONE_WAYS.get(bool(plan.switch), 'values recipe')}){turn}",
    )


def _sorted(found: list[Finding]) -> list[Finding]:
    return sorted(found, key=lambda f: (f.line, f.col, f.code, f.message))
