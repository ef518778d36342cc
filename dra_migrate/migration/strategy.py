"""Rewrite or bridge, per workload, with the reason.

``rewrite`` turns GPU requests into ResourceClaimTemplates (what ``convert``
does). ``bridge`` leaves the workload as it is and lets a DeviceClass with
``spec.extendedResourceName`` (KEP-5004, feature gate DRAExtendedResource:
alpha in 1.34 and 1.35, beta and on by default in 1.36, GA in 1.37; only in
``resource.k8s.io/v1`` output here) serve the extended resource from DRA
devices. ``auto`` bridges where the cluster serves it by default and the
workload needs nothing only a claim can say.

One decision for every command: ``asked`` resolves what the configuration's
``strategy:`` and ``--strategy`` ask for a pod spec, ``decide`` turns it into
rewrite or bridge, and ``check_bridge`` says whether a bridge is real (a class
maps the name, and the target version serves it). ``convert``, ``scan`` and the
hooks leave a bridged pod spec as it is (pipeline/one_file.py); ``report``'s plan
and ``deviceclasses`` read the same answers.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dra_migrate.k8s.versions import GATES
from dra_migrate.report.migration import Prerequisite
from dra_migrate.report.model import BridgeClass, InventoryItem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dra_migrate.convert.mapping import StrategyConfig

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
        return (
            "a share of a time-sliced GPU: only a claim asks for consumable shares "
            "(capacity.requests.shares); a bridge class would give it a whole GPU"
        )
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
    rows: Sequence[InventoryItem],
    requested: str,
    minor: int | None,
    target: str,
    source: str = "",
) -> Decision:
    """The strategy of one pod spec (its inventory rows); ``source``: where ``requested``
    comes from (``asked``), ``--strategy <requested>`` when not said."""
    source = source or f"--strategy {requested}"
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
        return Decision(REWRITE, (source, *needs))
    if requested == BRIDGE:
        blocked = cluster_blocks_bridge(minor, target)
        notes = [f"bridged although: {text}" for text in needs]
        if blocked:
            notes.append(f"the cluster must be ready first: {blocked}")
        return Decision(BRIDGE, (source, *notes))
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
            "and the workload needs nothing DRA-only",
        ),
    )


# --- what is asked for: the configuration's strategy: and --strategy ---------------


@dataclass(frozen=True, slots=True)
class Asked:
    strategy: str  # REWRITE, BRIDGE or "auto"
    source: str  # where it comes from, as a reason says it


def asked(config: StrategyConfig, flag: str | None, rows: Sequence[InventoryItem]) -> Asked:
    """What is asked for one pod spec (its inventory rows): an override of the
    configuration for its workload (``Kind/namespace/name`` or ``Kind/name``, globs),
    else for its path, else for its resource names, else --strategy, else the
    configuration's default, else rewrite. The flag replaces the default, never an
    override. A pod spec whose resource names ask for different strategies is
    rewritten if one of them asks for rewrite, else decided by auto."""
    fallback = (
        Asked(flag, f"--strategy {flag}")
        if flag
        else Asked(config.default, f"strategy: {config.default} (configuration)")
        if config.default
        else Asked(REWRITE, "rewrite (the default)")
    )
    if not rows or not config.overrides:
        return fallback
    first = rows[0]
    for pattern, chosen in config.workloads:
        if _workload_matches(pattern, first.kind, first.namespace or "", first.name):
            return Asked(chosen, f"strategy.workloads {pattern}: {chosen}")
    for pattern, chosen in config.paths:
        if path_matches(pattern, config.folder, first.path):
            return Asked(chosen, f"strategy.paths {pattern}: {chosen}")
    per: dict[str, Asked] = {}
    for resource in sorted({r.resource for r in rows}):
        for pattern, chosen in config.resources:
            if fnmatch.fnmatchcase(resource, pattern):
                per[resource] = Asked(chosen, f"strategy.resources {pattern}: {chosen}")
                break
    if not per:
        return fallback
    answers = [per.get(r, fallback) for r in sorted({r.resource for r in rows})]
    if len({a.strategy for a in answers}) == 1:
        return answers[0]
    mixed = "; ".join(dict.fromkeys(a.source for a in answers))
    if any(a.strategy == REWRITE for a in answers):
        return Asked(REWRITE, f"{mixed}: a pod spec is rewritten whole")
    return Asked("auto", f"{mixed}: decided by auto")


def asked_for_resource(config: StrategyConfig, flag: str | None, resource: str) -> str:
    """What is asked for a resource name outside any workload (``deviceclasses`` without
    paths): its ``strategy.resources`` override, else --strategy, else the default."""
    for pattern, chosen in config.resources:
        if fnmatch.fnmatchcase(resource, pattern):
            return chosen
    return flag or config.default or REWRITE


def _workload_matches(pattern: str, kind: str, namespace: str, name: str) -> bool:
    parts = pattern.split("/")
    if len(parts) == 2:  # Kind/name: in any namespace
        return fnmatch.fnmatchcase(kind, parts[0]) and fnmatch.fnmatchcase(name, parts[1])
    return (
        fnmatch.fnmatchcase(kind, parts[0])
        and fnmatch.fnmatchcase(namespace, parts[1])
        and fnmatch.fnmatchcase(name, parts[2])
    )


def path_matches(pattern: str, folder: str, path: str) -> bool:
    """``path`` (as the run names it) under the configuration's folder matches the
    gitignore-style ``pattern``."""
    if not path or path == "-":
        return False
    import pathspec

    relative = os.path.relpath(os.path.realpath(path), folder or os.getcwd())
    if relative.startswith(".."):
        return False
    return bool(pathspec.GitIgnoreSpec.from_lines([pattern]).match_file(relative))


def for_pod(
    rows: Sequence[InventoryItem],
    config: StrategyConfig,
    flag: str | None,
    minor: int | None,
    target: str,
) -> Decision:
    """The one decision of every command for a pod spec: ``asked``, then ``decide``.
    Rows the run left on the extended resource already (``bridged``: a Helm chart's
    values the chart pass bridges, DRA242) are bridged whatever is asked."""
    wanted = asked(config, flag, rows)
    decision = decide(rows, wanted.strategy, minor, target, wanted.source)
    if rows and all(r.bridged for r in rows) and decision.strategy == REWRITE:
        return Decision(
            BRIDGE,
            (
                "left on the extended resource by the run, served by a DeviceClass with "
                "extendedResourceName (its Helm chart's way: DRA242)",
            ),
        )
    return decision


def may_bridge(config: StrategyConfig, flag: str | None) -> bool:
    """Whether any pod spec of a run can be bridged (``StrategyConfig.may_bridge``)."""
    return config.may_bridge(flag)


# --- whether a bridge is real --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BridgeCheck:
    """What serves each bridged name (resource -> the class, as a message says it),
    which names no class maps, and why the target version does not serve the bridge
    ("" when it does)."""

    served: tuple[tuple[str, str], ...]
    missing: tuple[str, ...]
    blocked: str


def check_bridge(
    resources: Sequence[str],
    classes: Sequence[BridgeClass],
    minor: int | None,
    target: str,
    where: Callable[[str], str] = str,
) -> BridgeCheck:
    """Whether pods that keep asking for ``resources`` get DRA devices: a DeviceClass
    maps each name (one a known driver installs with that mapping for ``target``,
    ``catalog.driver_bridge``, or one of ``classes``, the repository's), and the
    target version serves extendedResourceName by default (``cluster_blocks_bridge``).
    ``where``: a class's path as messages show it."""
    from dra_migrate.k8s.catalog import load_catalog

    catalog = load_catalog()
    served, missing = [], []
    for resource in sorted(set(resources)):
        driver = catalog.driver_bridge(resource, target)
        own = [c for c in classes if c.resource == resource]
        if driver is not None:
            served.append((resource, f"DeviceClass {driver.name} (installed by its driver)"))
        elif own:
            c = own[0]
            served.append((resource, f"DeviceClass {c.name} ({where(c.path)}:{c.line})"))
        else:
            missing.append(resource)
    return BridgeCheck(tuple(served), tuple(missing), cluster_blocks_bridge(minor, target))


def duplicated_by_driver(classes: Sequence[BridgeClass], target: str) -> list[BridgeClass]:
    """The repository's classes that map a name a known driver's class maps already."""
    from dra_migrate.k8s.catalog import load_catalog

    catalog = load_catalog()
    return [c for c in classes if catalog.driver_bridge(c.resource, target) is not None]


def auto_note(
    asked: str,
    pods: Sequence[Sequence[InventoryItem]],
    config: StrategyConfig,
    minor: int | None,
    target: str,
    classes: Sequence[BridgeClass],
) -> list[Prerequisite]:
    """With rewrite asked for: how many pod specs ``auto`` would bridge for real (the
    cluster serves it, they need nothing DRA-only, a class maps their names), as a
    line of the plan's prerequisites; none when no pod spec would be."""
    if asked != REWRITE or cluster_blocks_bridge(minor, target):
        return []
    bridged = 0
    for rows in pods:  # as convert --strategy auto would see them: nothing kept yet
        fresh = [dataclasses.replace(r, kept="") for r in rows]
        if for_pod(fresh, config, "auto", minor, target).strategy == BRIDGE:
            names = sorted({r.resource for r in rows if r.device_class is not None})
            bridged += not check_bridge(names, classes, minor, target).missing
    if not bridged:
        return []
    return [
        Prerequisite(
            "Strategy",
            f"--strategy auto would bridge {bridged} of the {len(pods)} workload(s)",
            "they need nothing only a claim can say, Kubernetes 1."
            f"{minor} serves extendedResourceName and a DeviceClass maps their resource: "
            "they could stay as they are (strategy: auto, or per resource, path or workload)",
        )
    ]
