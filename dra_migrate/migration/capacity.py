"""Stage 2's capacity check: every pod of the plan placed on the devices of the
target cluster's ResourceSlices (best fit, biggest pods first)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dra_migrate.migration import strategy
from dra_migrate.migration.deviceclasses import ClassPlan
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.migration import Capacity, CapacityRow, LiveInventory, Workload


def place(
    workloads: Sequence[Workload], classes: ClassPlan, live: LiveInventory
) -> tuple[Capacity, list[Finding]]:
    """Place every pod's devices on the nodes of the ResourceSlices (best fit, biggest first)."""
    from dra_migrate.validate import devices_for

    devices = live.devices
    defined = classes.selectors()
    groups: dict[tuple[str, tuple[str, ...]], list[int] | None] = {}
    index = {id(d): i for i, d in enumerate(devices)}
    node_of = [d.node or "(any node)" for d in devices]
    for w in workloads:
        for c in w.containers:
            if c.device_class is None or w.strategy in strategy.LEFT:
                continue
            key = (c.device_class, c.selectors)
            if key not in groups:
                match = devices_for(devices, c.device_class, c.selectors, defined)
                groups[key] = None if match is None else [index[id(d)] for d in match]
    free: dict[str, set[int]] = {}
    for i, node in enumerate(node_of):
        free.setdefault(node, set()).add(i)
    pods: list[tuple[int, Workload, dict[tuple[str, tuple[str, ...]], int]]] = []
    for w in workloads:
        if w.strategy in strategy.LEFT:
            continue
        need: dict[tuple[str, tuple[str, ...]], int] = {}
        for c in w.containers:
            if c.device_class is None:
                continue
            key = (c.device_class, c.selectors)
            need[key] = max(need.get(key, 0), 0) + (c.count or 0) * (c.role != "init")
        for c in w.containers:
            if c.role == "init" and c.device_class is not None:
                key = (c.device_class, c.selectors)
                need[key] = max(need.get(key, 0), c.count or 0)
        need = {k: v for k, v in need.items() if v > 0}
        for _ in range(w.replicas if w.replicas is not None else 1):
            pods.append((sum(need.values()), w, need))
    pods.sort(key=lambda p: -p[0])
    pending: dict[str, set[tuple[str, tuple[str, ...]]]] = {}
    for _total, w, need in pods:
        best: tuple[int, str] | None = None
        for node, available in free.items():
            fits, spare = True, 0
            for key, count in need.items():
                matching = groups.get(key)
                have = len(available & set(matching)) if matching is not None else 0
                if have < count:
                    fits = False
                    break
                spare += have - count
            if fits and (best is None or spare < best[0]):
                best = (spare, node)
        if best is None:
            pending.setdefault(w.display, set()).update(need)
            continue
        taken = free[best[1]]
        for key, count in need.items():
            matching = groups[key] or []
            chosen = [i for i in matching if i in taken][:count]
            taken.difference_update(chosen)
    rows = []
    found: list[Finding] = []
    for key, matching in sorted(groups.items()):
        asked = sum(
            (w.replicas or 0) * per_pod(w, lambda c, key=key: (c.device_class, c.selectors) == key)
            for w in workloads
            if w.strategy not in strategy.LEFT
        )
        per_node: dict[str, int] = {}
        for i in matching or []:
            per_node[node_of[i]] = per_node.get(node_of[i], 0) + 1
        stuck = tuple(sorted(d for d, keys in pending.items() if key in keys))
        rows.append(
            CapacityRow(
                key[0], key[1], asked, len(matching or []), tuple(sorted(per_node.items())), stuck
            )
        )
        label = key[0] + (f" [{' && '.join(key[1])}]" if key[1] else "")
        unknown = (
            " (unknown class, or a selector that cannot be evaluated)" if matching is None else ""
        )
        found.append(
            finding(
                "DRA531",
                "",
                0,
                0,
                f"{label}: the repository asks for {asked} device(s); the ResourceSlices "
                f"publish {len(matching or [])} matching{unknown}"
                + (
                    f" ({', '.join(f'{n} {c}' for n, c in sorted(per_node.items()))})"
                    if per_node
                    else ""
                ),
            )
        )
    for w in workloads:
        if w.display in pending:
            found.append(
                finding(
                    "DRA530",
                    w.path,
                    w.line,
                    w.col,
                    f"{w.display}: pods that need {w.gpus_per_pod} device(s) each find no node "
                    "with enough free matching devices in the ResourceSlices: they would stay "
                    "Pending after the migration",
                    "add nodes or devices, lower replicas, or migrate this workload in a "
                    "later wave",
                )
            )
    capacity = Capacity(
        source=live.source,
        devices=len(devices),
        nodes=len({n for n in node_of}),
        rows=tuple(rows),
        pending=tuple(sorted(pending)),
    )
    return capacity, found


def per_pod(w: Workload, match: Any) -> int:
    """GPUs per pod of the containers ``match`` selects (init containers reuse)."""
    running = sum(c.count or 0 for c in w.containers if c.role != "init" and match(c))
    init = max((c.count or 0 for c in w.containers if c.role == "init" and match(c)), default=0)
    return max(running, init)
