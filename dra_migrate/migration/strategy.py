"""Rewrite or bridge, per workload, with the reason.

``rewrite`` turns GPU requests into ResourceClaimTemplates (what ``convert``
does). ``bridge`` leaves the workload as it is and lets a DeviceClass with
``spec.extendedResourceName`` (KEP-5004, feature gate DRAExtendedResource:
alpha in 1.34 and 1.35, beta and on by default in 1.36, GA in 1.37; only in
``resource.k8s.io/v1`` output here) serve the extended resource from DRA
devices. ``auto`` bridges where the cluster serves it by default and the
workload needs nothing only a claim can say.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dra_migrate.k8s.versions import GATES
from dra_migrate.report.model import InventoryItem

REWRITE, BRIDGE, NONE = "rewrite", "bridge", "none"
MANUAL = "manual"  # convert leaves it as it is, for a reason a person must act on
LEFT = (NONE, MANUAL)  # no wave moves these
STRATEGIES = (REWRITE, BRIDGE, "auto")

# KEP-5004 DRAExtendedResource: alpha (off) in 1.34-1.35, beta (on) 1.36, GA 1.37
# (the gate table of versions.py)
BRIDGE_ALPHA = GATES["DRAExtendedResource"].alpha
BRIDGE_DEFAULT: int = GATES["DRAExtendedResource"].on or 0
MIG_RESOURCES = ("*/mig-*",)


@dataclass(frozen=True, slots=True)
class Decision:
    strategy: str  # REWRITE, BRIDGE or NONE (nothing converts it)
    reasons: tuple[str, ...]


def _mig(rows: Sequence[InventoryItem]) -> str:
    found = sorted(
        {r.resource for r in rows if any(fnmatch.fnmatchcase(r.resource, p) for p in MIG_RESOURCES)}
    )
    return f"MIG profile ({', '.join(found)}): a claim selects the profile by CEL" if found else ""


def _selectors(rows: Sequence[InventoryItem]) -> str:
    if any(r.selectors for r in rows) and not _mig(rows):
        return "product-specific selection: the mapping adds CEL selectors to the request"
    return ""


def _rule(rows: Sequence[InventoryItem]) -> str:
    if any(r.rule for r in rows):
        return "a mapping rule picks the class for this workload's namespace, labels or nodes"
    return ""


def _sharing(rows: Sequence[InventoryItem]) -> str:
    if any(r.driver_config for r in rows):
        return "driver configuration (time-slicing or MPS sharing) goes into the claim"
    if any(r.shared for r in rows):
        return "time-sliced GPU share: a claim with the driver's sharing config keeps it shared"
    return ""


def _linked(rows: Sequence[InventoryItem]) -> str:
    containers = {r.container for r in rows if r.role != "init" and (r.count or 0) > 0}
    if len(containers) > 1:
        return (
            f"{len(containers)} GPU containers whose devices must sit on one node together: "
            "one claim with a request per container says so"
        )
    return ""


# What only a ResourceClaim can express: any of these makes ``auto`` rewrite.
DRA_ONLY: tuple[Callable[[Sequence[InventoryItem]], str], ...] = (
    _mig,
    _selectors,
    _rule,
    _sharing,
    _linked,
)


def cluster_blocks_bridge(minor: int | None, target: str) -> str:
    """Why the cluster cannot take the bridge by default; "" when it can."""
    if minor is None:
        return (
            "cluster version unknown (give --kube-version): the bridge needs Kubernetes 1.36 or "
            "later, where DRAExtendedResource is on by default"
        )
    if minor < BRIDGE_ALPHA:
        return f"Kubernetes 1.{minor} has no extendedResourceName (KEP-5004 arrives in 1.34)"
    if target != "v1":
        return f"the bridge needs resource.k8s.io/v1 DeviceClasses (target is {target})"
    if minor < BRIDGE_DEFAULT:
        return (
            f"DRAExtendedResource is alpha and off by default in Kubernetes 1.{minor}: the "
            "scheduler and API server need --feature-gates=DRAExtendedResource=true"
        )
    return ""


def decide(
    rows: Sequence[InventoryItem], requested: str, minor: int | None, target: str
) -> Decision:
    """The strategy of one pod spec (its inventory rows)."""
    unmapped = sorted({r.resource for r in rows if r.device_class is None})
    if unmapped and len(unmapped) == len({r.resource for r in rows}):
        return Decision(NONE, (f"not in the mapping: {', '.join(unmapped)}",))
    kept = sorted({r.kept for r in rows if r.kept})
    if kept:
        from dra_migrate.report.findings import CODES

        return Decision(
            MANUAL,
            tuple(f"convert leaves it as it is: {code} {CODES[code].title}" for code in kept),
        )
    needs = [text for check in DRA_ONLY if (text := check(rows))]
    if requested == REWRITE:
        return Decision(REWRITE, ("--strategy rewrite", *needs))
    if requested == BRIDGE:
        blocked = cluster_blocks_bridge(minor, target)
        notes = [f"bridged although: {text}" for text in needs]
        if blocked:
            notes.append(f"the cluster must be ready first: {blocked}")
        return Decision(BRIDGE, ("--strategy bridge", *notes))
    blocked = cluster_blocks_bridge(minor, target)
    if blocked:
        return Decision(REWRITE, (blocked, *needs))
    if needs:
        return Decision(REWRITE, tuple(needs))
    version = "GA" if minor is not None and minor >= 37 else "beta, on by default"
    return Decision(
        BRIDGE,
        (
            f"Kubernetes 1.{minor} serves extendedResourceName (DRAExtendedResource {version}) "
            "and the workload needs nothing DRA-only: it stays as it is",
        ),
    )
