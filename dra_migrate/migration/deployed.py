"""The plan's totals of what deploys (``report --deploys``): each workload of a build or
a rendering joined to the wave of the workload its source file defines, then summed by
namespace, wave and stage. The counting itself is ``simulate/counts.py``'s."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence

from dra_migrate.report.deployed import Deployed, DeployedTotal, DeployedWorkload
from dra_migrate.report.migration import Workload

NO_NAMESPACE = "(no namespace)"
NO_WAVE = "(no wave)"
# stage -> the waves it moves (None: every workload)
STAGES: tuple[tuple[str, Callable[[int], bool]], ...] = (
    ("inventory", lambda wave: True),
    ("pilot", lambda wave: wave == 1),
    ("rollout", lambda wave: wave > 1),
    ("left out of the waves", lambda wave: wave == 0),
)


def fill(deployed: Deployed, workloads: Sequence[Workload]) -> Deployed:
    """``deployed`` with each workload's wave and the totals."""
    if not deployed.counted:
        return deployed
    rows = [dataclasses.replace(r, wave=_wave(r, workloads)) for r in deployed.workloads]
    deployed.workloads = rows
    deployed.namespaces = _totals(rows, lambda r: r.namespace or NO_NAMESPACE)
    deployed.waves = _totals(rows, lambda r: f"wave {r.wave}" if r.wave else NO_WAVE)
    deployed.stages = [_total(stage, [r for r in rows if moves(r.wave)]) for stage, moves in STAGES]
    return deployed


def _wave(row: DeployedWorkload, workloads: Sequence[Workload]) -> int:
    """The wave of the plan's workload the row comes from: same file, kind, pod spec and
    a name the build kept or prefixed; else (an overlay's patch is its source) the one
    workload of that kind, pod spec and name; else 0 (a chart template's, or several)."""
    path = row.source.rsplit(":", 2)[0]
    same = [
        w
        for w in workloads
        if w.kind == row.kind and w.pod_path == row.pod_path and w.name in row.name
    ]
    here = [w for w in same if w.path == path]
    if here:
        return min(here, key=lambda w: w.name != row.name).wave
    named = [w for w in same if w.name == row.name] or same
    return named[0].wave if len({w.wave for w in named}) == 1 else 0


def _totals(
    rows: Iterable[DeployedWorkload], key: Callable[[DeployedWorkload], str]
) -> list[DeployedTotal]:
    groups: dict[str, list[DeployedWorkload]] = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    return [_total(k, groups[k]) for k in sorted(groups)]


def _total(key: str, rows: Sequence[DeployedWorkload]) -> DeployedTotal:
    known = [r.gpus for r in rows if r.gpus is not None]
    return DeployedTotal(key, len(rows), sum(known), len(rows) - len(known))
