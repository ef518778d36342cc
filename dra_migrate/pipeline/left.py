"""``convert --check``: what the plan leaves on the device plugin fails the check.

``many_files.mark_pending`` makes each GPU request ``convert`` would rewrite a DRA401
error. What ``convert`` leaves as it is for a reason a person must act on (the plan's
``manual``: a workload a refusal keeps, DRA205, DRA515, ...; a Helm chart of way
``manual``, DRA243, DRA249, a recipe that does not fit) would otherwise pass the check
with a warning, and a new chart asking for ``nvidia.com/gpu`` would slip in. Each such
GPU request is a DRA401 error too (``mark``, before the suppression stage), unless

- an ignore of DRA401 (or of every code) holds it, as for any DRA401;
- the strategy keeps it: a bridged workload (DRA514) or chart (way ``bridge``,
  DRA242) is served by a DeviceClass and is not manual;
- an ignore silences the reason itself (``settle``, after the suppression stage:
  the DRA401 moves to the suppressed findings with the reason's ignore), as the
  plan's ``held`` counts a request kept by a silenced finding.

A chart's DRA401 is said at each GPU line of its templates and values files (DRA203,
DRA204), else where its reason is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from dra_migrate.helm.model import MANUAL
from dra_migrate.report.findings import CODES, Finding, Severity, finding
from dra_migrate.report.model import HELD, Report, Suppressed

LEFT = "DRA401"
_GPU_LINES = ("DRA203", "DRA204")  # a chart template's, a values file's GPU line left


@dataclass(frozen=True, slots=True)
class Left:
    """A DRA401 this module added, and the reason it stands on."""

    finding: Finding
    codes: tuple[str, ...]  # the reason's codes
    where: str  # the path (a file) or folder (a chart) the reason's findings are in


def mark(report: Report) -> list[Left]:
    """Add DRA401 for each GPU request the plan leaves manual (see the module)."""
    added: list[Left] = []
    by_path = {r.path: r for r in report.files}
    manual = [os.path.normpath(p.root) for p in report.charts if p.way == MANUAL]
    for result in report.files:
        seen: set[tuple[int, int]] = set()
        if any(_inside(result.path, root) for root in manual):  # the chart's DRA401 says
            seen = {(f.line, f.col) for f in result.findings if f.code in _GPU_LINES}  # them
        for item in result.inventory:
            if not item.gpu or not item.kept or item.kept == HELD or item.device_class is None:
                continue  # (an unmapped resource is not the plan's manual: none converts it)
            reasons = [f for f in result.findings if f.code == item.kept]
            if reasons and all(f.severity is Severity.ERROR for f in reasons):
                continue  # the reason fails the check already
            if (item.line, item.col) in seen:
                continue
            seen.add((item.line, item.col))
            left = finding(
                LEFT,
                item.path,
                item.line,
                item.col,
                f"{item.who} asks for "
                f"{item.resource}: {item.value} through the device plugin, and convert "
                f"leaves it there ({item.kept}: {CODES[item.kept].title})",
                f"act on {item.kept}, bridge it (strategy: bridge, or auto), or hold it on "
                "the device plugin with # dra-migrate: ignore[DRA401]",
            )
            result.findings.append(left)
            added.append(Left(left, (item.kept,), result.path))
    for plan in report.charts:
        if plan.way != MANUAL:
            continue
        root = os.path.normpath(plan.root)
        lines = [
            (r, f)
            for r in report.files
            if _inside(r.path, root)
            for f in r.findings
            if f.code in _GPU_LINES
        ]
        why = ", ".join(f"{c} ({CODES[c].title})" for c in plan.codes if c in CODES)
        message = (
            f"chart {plan.name} {plan.version} is left on the device plugin, manual: "
            f"{why or 'no way migrates it'}"
        )
        hint = (
            "act on the chart's finding, keep it on the device plugin through the bridge "
            "(strategy: bridge), or hold it with # dra-migrate: ignore[DRA401]"
        )
        if not lines:  # no GPU line found: where the reason is
            reason = _reason(report, plan.codes, root)
            path, line, col = (
                (reason.path, reason.line, reason.col)
                if reason is not None
                else (os.path.join(plan.root, "Chart.yaml"), 1, 1)
            )
            left = finding(LEFT, path, line, col, message, hint)
            holder = by_path.get(path)
            (holder.findings if holder is not None else report.findings).append(left)
            added.append(Left(left, plan.codes, root))
            continue
        for result, gpu in lines:
            left = finding(LEFT, gpu.path, gpu.line, gpu.col, f"{message}: {gpu.message}", hint)
            result.findings.append(left)
            added.append(Left(left, plan.codes, root))
    for result in report.files:
        result.findings.sort(key=lambda f: (f.line, f.col, f.code, f.message))
    return added


def settle(report: Report, added: list[Left]) -> None:
    """After the suppression stage: a DRA401 whose reason an ignore silenced (none of
    its reason's findings left, one of them suppressed) is suppressed with it."""
    for left in added:
        silenced = [
            s
            for s in report.suppressed
            if s.finding.code in left.codes and _inside(s.finding.path, left.where)
        ]
        if not silenced or _remaining(report, left):
            continue
        holders = [report.findings, *(r.findings for r in report.files)]
        for holder in holders:
            if left.finding in holder:
                holder.remove(left.finding)
                report.suppressed.append(
                    Suppressed(left.finding, silenced[0].kind, silenced[0].source)
                )
                break


def _remaining(report: Report, left: Left) -> bool:
    every = [*report.findings, *(f for r in report.files for f in r.findings)]
    return any(f.code in left.codes and _inside(f.path, left.where) for f in every)


def _reason(report: Report, codes: tuple[str, ...], root: str) -> Finding | None:
    every = [*report.findings, *(f for r in report.files for f in r.findings)]
    return next((f for f in every if f.code in codes and _inside(f.path, root)), None)


def _inside(path: str, where: str) -> bool:
    path = os.path.normpath(path)
    return path == where or path.startswith(where.rstrip(os.sep) + os.sep)
