"""Shared GPU pools in the simulation: the DRA driver's consumable-shares setting each
node gets after the migration (what stage 2 of the plan sets for its pool), and why a
workload on a shared pool bound fewer pods after (DRA812).

Before, the device plugin advertises each GPU of a time-sliced or MPS pool
``replicas`` times (``FleetNode.plugin_resources``). After, the DRA driver publishes
one device a GPU or MIG device, whatever the replicas were: it shares a device between
claims only with ``--consumable-shares`` (``allowMultipleAllocations`` and a ``shares``
capacity, ``devices._shared``), which stage 2 of the plan sets to the replicas of a pool
the run's sharing model knows to be time-sliced, on a driver release that has it
(migration/sharing.py ``settings_for``, convert/sharing.py ``shares_problem``). An MPS
pool stays on the device plugin (DRA263).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dra_migrate.convert.mapping import Config
from dra_migrate.convert.sharing import shares_problem
from dra_migrate.repo.sharing import TIME_SLICING, SharingModel
from dra_migrate.repo.sharing import Fleet as SharingFleet
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.simulation import SimulatedWorkload
from dra_migrate.simulate.fleet import MPS, Fleet, FleetNode

CLASS = "gpu.nvidia.com"
# the scheduler's DRA plugin, in DRA801's reason (kubernetes v1.37.2
# pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go)
UNALLOCATED = "cannot allocate all claims"


def model_of(model: SharingFleet, labels: Mapping[str, str]) -> SharingModel:
    """The run's model of a node with ``labels``: the first pool whose selector holds
    it, else the fleet's default (as stage 2 of the plan lists the pools)."""
    for pool in model.pools:
        if pool.selector and pool.holds(labels):
            return pool.model
    return model.default


def planner(
    model: SharingFleet | None, config: Config
) -> Callable[[dict[str, str]], tuple[str, str]]:
    """What stage 2 of the plan sets as the driver's consumable shares on a node with
    those labels, and why: the replicas of a time-sliced pool on a release with shares,
    else "" (the driver's defaults: one claim a device)."""
    problem = shares_problem(config, CLASS)

    def planned(labels: dict[str, str]) -> tuple[str, str]:
        known = model_of(model, labels) if model is not None else None
        if known is None or known.kind != TIME_SLICING:
            said = known.describe() if known is not None else "exclusive GPUs (assumed)"
            return "", f"the run's sharing model says {said} there: stage 2 sets no shares"
        if known.per_gpu or known.replicas < 2:
            return "", f"{known.describe()}: stage 2 keeps the driver's defaults"
        if problem:
            return "", f"{known.describe()}, but {problem}"
        return str(known.replicas), f"stage 2 of the plan for {known.describe()}"

    return planned


def planned(fleet: Fleet, model: SharingFleet | None, config: Config) -> Fleet:
    """``fleet`` with each node's shares after the migration as the plan sets them."""
    from dra_migrate.simulate.fleet import with_planned_shares

    return with_planned_shares(fleet, planner(model, config))


def _before(node: FleetNode) -> str:
    advertised = ", ".join(f"{k}: {v}" for k, v in sorted(node.plugin_resources().items()))
    if node.sharing:
        name = "time-slicing" if node.sharing != MPS else "MPS"
        how = f"{name}, {node.replicas} replicas per GPU"
    else:
        how = f"MIG, single strategy, profile {node.mig[0]}"
    return f"{advertised} on {node.gpus} GPU(s) ({how})"


def _after(node: FleetNode) -> str:
    devices = node.devices()
    if node.stays_on_plugin():
        return "the pool stays on the device plugin's MPS (DRA263)"
    if node.mig and node.mig_strategy == "single" and not node.sharing:
        return (
            f"the DRA driver publishes its {devices} MIG device(s) in the mig.nvidia.com "
            "class: a request converted to them (DRA266) gets them, one left as "
            f"nvidia.com/gpu (DRA265) is served by {CLASS}'s extendedResourceName with a "
            "whole GPU, which the pool does not have"
        )
    shares = node.shares()
    why = f" ({node.shares_why})" if node.shares_why else ""
    if not shares:
        return (
            f"the DRA driver publishes {devices} device(s), one a GPU or MIG device, without consumable "
            f"shares{why}: each device goes to one claim"
        )
    if shares.isdigit() and int(shares) != node.replicas:
        return (
            f"the DRA driver publishes {devices} device(s) of {shares} consumable shares "
            f"each{why}, not the {node.replicas} the device plugin had"
        )
    if not shares.isdigit():  # memory or unlimited: consumable memory, no shares capacity
        return (
            f"the DRA driver publishes {devices} device(s) shared by memory ({shares} "
            f"mode{why}) and without a shares capacity: a request of "
            "capacity.requests.shares (DRA260) finds no device"
            + (
                ", and a claim takes a device's whole memory by default"
                if shares == "memory"
                else ""
            )
        )
    return (
        f"the DRA driver publishes {devices} device(s) of {shares} consumable shares each, "
        "as many as the replicas: a request left as nvidia.com/gpu (DRA264, DRA541) is "
        f"served by {CLASS}'s extendedResourceName one device a unit, so a pod that took k "
        "replicas of one GPU needs k devices"
    )


def explain(rows: list[SimulatedWorkload], found: list[Finding], fleet: Fleet) -> list[Finding]:
    """DRA812 for each workload that bound fewer pods after (DRA801) while its pods
    were on a pool whose GPUs the device plugin shared (time-slicing) or handed out as
    MIG devices (single strategy), where the scheduler's reason is claims it could not
    allocate: what the pool advertised before, what the driver publishes after. An MPS
    pool stays on the device plugin: nothing of it changed."""
    nodes = {n.name: n for n in fleet.nodes}
    fewer = {
        (f.path, f.line, f.col, f.message.split(":", 1)[0]): f.message
        for f in found
        if f.code == "DRA801"
    }
    out = []
    for row in rows:
        said = fewer.get((row.path, row.line, row.col, row.display))
        if said is None or row.before is None or UNALLOCATED not in said:
            continue
        shared = [nodes[n] for n in dict.fromkeys(row.before.nodes) if n in nodes]
        node = next((n for n in shared if _changed(n)), None)
        if node is None:
            continue
        out.append(
            finding(
                "DRA812",
                row.path,
                row.line,
                row.col,
                f"{row.display}: its pods were on pool {node.pool}, whose device plugin "
                f"advertised {_before(node)}; after, {_after(node)}",
                _hint(node),
            )
        )
    return out


def _changed(node: FleetNode) -> bool:
    """Whether the DRA driver hands out the node's GPUs after otherwise than the device
    plugin did: time-sliced (one device a GPU, shared by claims only with consumable
    shares, and a request left as nvidia.com/gpu served one device a unit), MIG single
    (its nvidia.com/gpu were MIG devices). Not an MPS pool: it stays on the device
    plugin."""
    if node.stays_on_plugin():
        return False
    return bool(node.sharing) or (bool(node.mig) and node.mig_strategy == "single")


def _hint(node: FleetNode) -> str:
    if node.mig and node.mig_strategy == "single" and not node.sharing:
        return (
            "select the pool by nvidia.com/gpu.product (<model>-MIG-<profile>) or give its "
            "profile in .dra-migrate.yaml sharing.pools, so that the request becomes MIG "
            "devices (DRA266); or keep the pool on the device plugin"
        )
    return (
        "give the pool in .dra-migrate.yaml sharing.pools (strategy: time-slicing, "
        'replicas) with drivers: {gpu.nvidia.com: "0.5"}: its requests become consumable '
        "shares (DRA260) and stage 2 sets the driver's consumableShares; or one "
        "ResourceClaim the pods share"
    )
