"""Stage 2's capacity check: every pod of the plan placed on the devices of the
target cluster's ResourceSlices (best fit, biggest pods first)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dra_migrate.k8s.quantity import whole_count
from dra_migrate.migration import strategy
from dra_migrate.migration.deviceclasses import ClassPlan
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.migration import Capacity, CapacityRow, LiveInventory, Workload

Key = tuple[str, tuple[str, ...]]  # a request's device class and selectors


def place(
    workloads: Sequence[Workload], classes: ClassPlan, live: LiveInventory
) -> tuple[Capacity, list[Finding]]:
    """Place every pod's devices on the nodes of the ResourceSlices (best fit, biggest first)."""
    from dra_migrate.validate import devices_for

    devices = live.devices
    defined = classes.selectors()
    groups: dict[Key, list[int] | None] = {}
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
    # what each device has left: every share of a consumable-shares device (capacity
    # ``shares``, convert/sharing.py), 1 for another; a whole-device request takes a
    # device no claim has touched, a shares request k shares of one device
    published = [_shares(d) for d in devices]
    total = [n or 1 for n in published]
    shareable = [n > 0 for n in published]
    left = list(total)
    on_node: dict[str, list[int]] = {}
    for i, node in enumerate(node_of):
        on_node.setdefault(node, []).append(i)
    pods: list[tuple[int, Workload, dict[Key, int], list[tuple[Key, int]]]] = []
    for w in workloads:
        if w.strategy in strategy.LEFT:
            continue
        need: dict[Key, int] = {}
        shares: list[tuple[Key, int]] = []
        for c in w.containers:
            if c.device_class is None:
                continue
            key = (c.device_class, c.selectors)
            if c.shared:  # one device, c.count of its shares (an init container's too)
                shares.append((key, c.count or 0))
            elif c.role != "init":
                need[key] = need.get(key, 0) + (c.count or 0)
        for c in w.containers:
            if c.role == "init" and c.device_class is not None and not c.shared:
                key = (c.device_class, c.selectors)
                need[key] = max(need.get(key, 0), c.count or 0)
        need = {k: v for k, v in need.items() if v > 0}
        shares = sorted(((k, n) for k, n in shares if n > 0), key=lambda s: -s[1])
        for _ in range(w.replicas if w.replicas is not None else 1):
            pods.append((sum(need.values()) + len(shares), w, need, shares))
    pods.sort(key=lambda p: -p[0])
    shared_keys = {k for _t, _w, _n, shares in pods for k, _c in shares}
    pending: dict[str, set[Key]] = {}
    for _total, w, need, shares in pods:
        best: tuple[int, str, dict[int, int]] | None = None
        for node, indices in on_node.items():
            taken = _fit(indices, groups, need, shares, left, (total, shareable))
            if taken is not None:
                spare = sum(left[i] for i in indices) - sum(taken.values())
                if best is None or spare < best[0]:
                    best = (spare, node, taken)
        if best is None:
            pending.setdefault(w.display, set()).update(need, (k for k, _n in shares))
            continue
        for i, used in best[2].items():
            left[i] -= used
    rows = []
    found: list[Finding] = []
    for key, matching in sorted(groups.items()):
        asked = sum(
            (w.replicas or 0) * per_pod(w, lambda c, key=key: (c.device_class, c.selectors) == key)
            for w in workloads
            if w.strategy not in strategy.LEFT
        )
        in_shares = key in shared_keys  # asked in shares: published counted in shares too
        unit = "share(s)" if in_shares else "device(s)"
        offered = sum(total[i] for i in matching or []) if in_shares else len(matching or [])
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
                f"{label}: the repository asks for {asked} {unit}; the ResourceSlices "
                f"publish {offered} matching{unknown}"
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


def _shares(device: Any) -> int:
    """The consumable shares a device publishes (0: none, a whole device)."""
    for capacity in device.capacity.values():
        found = whole_count(str(capacity.get("shares", "")))
        if found:
            return found
    return 0


def _fit(
    indices: list[int],
    groups: Mapping[Key, list[int] | None],
    need: Mapping[Key, int],
    shares: Sequence[tuple[Key, int]],
    left: list[int],
    devices: tuple[list[int], list[bool]],
) -> dict[int, int] | None:
    """What one pod takes of a node's devices (device -> shares), or None when it does
    not fit: whole devices no claim has touched, then each shares request on the
    device that leaves least (best fit), a device serving one request of the pod."""
    total, shareable = devices
    taken: dict[int, int] = {}
    for key, count in need.items():
        matching = set(groups.get(key) or ())
        whole = [i for i in indices if i in matching and i not in taken and left[i] == total[i]]
        if len(whole) < count:
            return None
        for i in whole[:count]:
            taken[i] = total[i]
    for key, count in shares:
        matching = set(groups.get(key) or ())
        fits = [
            i
            for i in indices
            if i in matching and i not in taken and shareable[i] and left[i] >= count
        ]
        if not fits:
            return None
        taken[min(fits, key=lambda i: left[i])] = count
    return taken


def per_pod(w: Workload, match: Any) -> int:
    """GPUs per pod of the containers ``match`` selects (init containers reuse)."""
    running = sum(c.count or 0 for c in w.containers if c.role != "init" and match(c))
    init = max((c.count or 0 for c in w.containers if c.role == "init" and match(c)), default=0)
    return max(running, init)
