"""What a GPU request on a shared node pool becomes: the same sharing, or nothing.

The model of the pool comes from ``repo/sharing.py`` (the pod's node selector, the
configuration's pools, the repository's device plugin configurations). The DRA
equivalents, as the NVIDIA DRA driver's source has them
(kubernetes-sigs/dra-driver-nvidia-gpu, formerly NVIDIA/k8s-dra-driver-gpu):

- time-slicing with N replicas: the kubelet plugin run with ``--consumable-shares=N``
  (Helm ``consumableShares: N`` and ``featureGates.ConsumableShares: true``) marks
  each full GPU and MIG device ``allowMultipleAllocations`` and publishes a ``shares``
  capacity of N whose request policy defaults to 1, from 1 to N in steps of 1
  (cmd/gpu-kubelet-plugin/consumable_shares.go, demo/specs/consumable-shares). A
  container that asked for ``k`` replicas gets one request of the same class with
  ``capacity.requests.shares: k``: it holds k of the device's N shares, as it held k
  of the N references the device plugin advertised per GPU. Where the plugin spread
  k replicas over several GPUs, DRA keeps them on one; so k above N cannot be placed
  and is refused. With ``failRequestsGreaterThanOne`` the device plugin refused a
  request above one at admission (internal/rm/rm.go): such a pod never ran, and is
  refused here too;
- MPS: the driver rejects an MPS ``GpuConfig`` on a claim while consumable shares are
  on ("MPS sharing is not supported when consumable shares is enabled", PR #1257;
  the driver's docs: "Do not use an MPS configuration on claims that use a shared
  device"): independent pods cannot share a GPU through MPS, so MPS is refused with
  the way out named (one ResourceClaim the pods share, with the MPS ``GpuConfig``);
- MIG single: ``nvidia.com/gpu: k`` was k MIG devices of the node's one profile: the
  ``mig.nvidia.com`` class (deployments/helm/dra-driver-nvidia-gpu/templates/
  deviceclass-mig.yaml) with a selector on that profile, the product label's suffix.

A release without the ``shares`` capacity (the catalog records since when a release
publishes it), a class of another driver, replica counts per GPU: refused, never
turned into whole GPUs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from dra_migrate.convert.asks import Ask
from dra_migrate.convert.mapping import Choice, Config, Context
from dra_migrate.manifests import trees
from dra_migrate.repo.sharing import (
    EXCLUSIVE,
    MIG_MIXED,
    MIG_SINGLE,
    MPS,
    SHARED_SUFFIX,
    TIME_SLICING,
    Fleet,
    SharingModel,
)
from dra_migrate.report.findings import Finding, finding

NVIDIA = "gpu.nvidia.com"
MIG_CLASS = "mig.nvidia.com"
SHARES = "shares"
SHARES_GATE = "ConsumableShares"


def driver_of(device_class: str) -> str | None:
    """The driver behind a DeviceClass the catalog knows (its chart installs it)."""
    from dra_migrate.k8s.catalog import load_catalog

    for info in load_catalog().device_classes:
        if info.name == device_class:
            return info.driver
    return None


def release_of(config: Config, driver: str) -> tuple[str, str]:
    """The driver release a run assumes, and why (``drivers:``, else the catalog's
    default)."""
    from dra_migrate.k8s.catalog import load_catalog

    configured = dict(config.driver_releases)
    found = load_catalog().assumed_releases(configured).get(driver)
    return found if found else ("", "")


def shares_problem(config: Config, device_class: str) -> str:
    """Why the driver behind ``device_class`` cannot publish consumable shares on the
    release in use ("" when it can)."""
    from dra_migrate.k8s.catalog import load_catalog

    driver = driver_of(device_class)
    if driver is None:
        return (
            f"DeviceClass {device_class} is not one the catalog knows: no driver release "
            "is known to publish consumable shares through it"
        )
    info = load_catalog().domains.get(driver)
    if info is None or not info.has_capacity(SHARES):
        return f"the {driver} driver publishes no consumable shares (capacity {SHARES!r})"
    release, why = release_of(config, driver)
    problem = load_catalog().release_problem(driver, SHARES, release) if release else ""
    if problem:
        return f"{driver} release {release} ({why}) cannot share: {problem}"
    return ""


def apply(
    asks: Sequence[Ask], ctx: Context, config: Config, path: str, findings: list[Finding]
) -> list[Ask] | None:
    """The asks of one pod spec under the sharing model of the nodes it may land on,
    its findings added to ``findings``; None when the pod spec is refused (left on the
    device plugin)."""
    model = (config.sharing or Fleet()).model_for(ctx.node_selector)
    out: list[Ask] = []
    refused = False
    for ask in asks:
        if ask.choice.config or not model.applies_to(ask.resource):
            out.append(ask)  # exclusive, or the mapping gives its own sharing config
            continue
        changed, more, stop = _one(_unrenamed(ask, config, ctx), model, config, path)
        findings += more
        refused = refused or stop
        out.append(changed)
    return None if refused else out


def _base_choice(choice: Choice, config: Config, ctx: Context) -> Choice:
    """A renamed share (``<name>.shared``, renameByDefault) is a share of ``<name>``'s
    device: the class and selectors the mapping gives ``<name>`` (``nvidia.com/mig-
    1g.5gb.shared`` is a 1g.5gb MIG device, not a profile named ``1g.5gb.shared``)."""
    if not choice.resource.endswith(SHARED_SUFFIX):
        return choice
    base = config.choose(choice.resource[: -len(SHARED_SUFFIX)], ctx)
    if base is None or base.config:
        return choice
    return dataclasses.replace(
        choice, device_class=base.device_class, selectors=base.selectors, capacity=base.capacity
    )


def _unrenamed(ask: Ask, config: Config, ctx: Context) -> Ask:
    return dataclasses.replace(ask, choice=_base_choice(ask.choice, config, ctx))


def shares_choice(choice: Choice, count: int) -> Choice:
    """``choice`` taking ``count`` consumable shares of one device (marked shared: the
    plan ranks and places it as a share)."""
    capacity = tuple((k, v) for k, v in choice.capacity if k != SHARES)
    return dataclasses.replace(choice, capacity=(*capacity, (SHARES, str(count))), shared=True)


def mig_choice(choice: Choice, profile: str) -> Choice:
    """``choice`` as MIG devices of ``profile`` (the driver's ``mig.nvidia.com`` class)."""
    selector = f"device.attributes['{NVIDIA}'].profile == '{profile}'"
    return Choice(choice.resource, MIG_CLASS, (selector,), choice.config, False, choice.rule)


def choose(config: Config, resource: str, ctx: Context, count: int | None) -> Choice | None:
    """What the mapping chooses for ``resource`` where the pod may run, as the sharing
    model of those nodes converts it (the inventory's rows and the plan read this):
    shares on a time-sliced pool, MIG devices on a MIG-single pool with a profile."""
    choice = config.choose(resource, ctx)
    if choice is None or choice.config:
        return choice
    model = (config.sharing or Fleet()).model_for(ctx.node_selector)
    if not model.applies_to(resource):
        return choice
    if model.kind == MIG_SINGLE and model.profile:
        return mig_choice(choice, model.profile)
    if model.kind == TIME_SLICING and model.replicas > 1 and not model.per_gpu:
        return shares_choice(_base_choice(choice, config, ctx), count or 1)
    return choice


def _one(
    ask: Ask, model: SharingModel, config: Config, path: str
) -> tuple[Ask, list[Finding], bool]:
    who = f"container {ask.container.name!r} asks for {ask.resource}: {ask.count}"
    where = trees.position(ask.key)
    if model.kind == MIG_SINGLE:
        return _mig(ask, model, who, path, where)
    if model.kind in (EXCLUSIVE, MIG_MIXED):
        return ask, [], False
    if model.replicas < 2:  # shared, but how many ways is not known: DRA205's case
        return ask, [], False
    what = f"{who} on nodes with {model.describe()} ({model.source})"

    def refuse(code: str, why: str, way_out: str) -> tuple[Ask, list[Finding], bool]:
        return (
            ask,
            [finding(code, path, *where, f"{what}: {why}; left on the device plugin", way_out)],
            True,
        )

    if model.kind == MPS:
        return refuse(
            "DRA263",
            "the NVIDIA DRA driver rejects an MPS GpuConfig on a claim while consumable "
            "shares are on, and consumable shares are the only way pods with claims of "
            "their own share a GPU",
            "keep the pool on the device plugin's MPS; or share one ResourceClaim between "
            "the pods by hand with a GpuConfig sharing {strategy: MPS} (driver feature gate "
            "MPSSupport), which gives them one MPS daemon",
        )
    if model.per_gpu:
        return refuse(
            "DRA262",
            "the replica count differs between devices of a node (resources of different "
            "counts, such as whole GPUs and MIG devices), and the DRA driver's "
            "--consumable-shares is one count for every GPU and MIG device of a kubelet plugin",
            "give every resource of the pool the same replica count, or keep the pool on the "
            "device plugin",
        )
    problem = shares_problem(config, ask.choice.device_class)
    if problem:
        return refuse(
            "DRA261",
            problem,
            "run a driver release with consumable shares (gpu.nvidia.com 0.5: Helm "
            "consumableShares and featureGates.ConsumableShares) and say so in "
            '.dra-migrate.yaml (drivers: {gpu.nvidia.com: "0.5"}); until then the pool '
            "stays on the device plugin",
        )
    if model.fail_over_one and ask.count > 1:
        return refuse(
            "DRA264",
            f"failRequestsGreaterThanOne makes the device plugin fail a request of "
            f"{ask.count} shares at admission (UnexpectedAdmissionError): this pod never ran",
            "ask for 1, then convert again",
        )
    if ask.count > 1 and not model.packed:
        return refuse(
            "DRA264",
            f"the device plugin spreads a pod's {ask.count} replicas over the node's GPUs "
            "(sharedDevicesAllocationPolicy distributed, its default: internal/rm/allocate.go), "
            f"and no DRA request repeats that: {ask.count} shares of one GPU, or "
            f"{ask.count} GPUs",
            "ask for 1 share; or, where the device plugin packs replicas "
            "(sharedDevicesAllocationPolicy: packed, in its config or .dra-migrate.yaml "
            "sharing: allocationPolicy), convert again for shares of one GPU",
        )
    if ask.count > model.replicas:
        return refuse(
            "DRA264",
            f"{ask.count} shares are more than the {model.replicas} one GPU holds: the device "
            "plugin spread them over several GPUs, and a DRA request takes its shares of "
            "one device",
            f"ask for at most {model.replicas}, or for whole GPUs on an exclusive pool",
        )
    choice = shares_choice(ask.choice, ask.count)
    note = finding(
        "DRA260",
        path,
        *where,
        f"{what}: converted to {ask.count} of the {model.replicas} consumable shares of one "
        f"{ask.choice.device_class} device (capacity.requests.shares: {ask.count})",
        f"the pool's DRA driver must publish {model.replicas} shares per GPU: Helm "
        f"consumableShares: {model.replicas} with featureGates.{SHARES_GATE}: true (stage 2 "
        "of the plan)",
    )
    return dataclasses.replace(ask, count=1, choice=choice), [note], False


def _mig(
    ask: Ask, model: SharingModel, who: str, path: str, where: tuple[int, int]
) -> tuple[Ask, list[Finding], bool]:
    what = f"{who} on nodes with {model.describe()} ({model.source})"
    if not model.profile:
        return (
            ask,
            [
                finding(
                    "DRA265",
                    path,
                    *where,
                    f"{what}: each nvidia.com/gpu there is a MIG device, but no profile is "
                    "known; left on the device plugin",
                    "select the nodes by nvidia.com/gpu.product (<model>-MIG-<profile>), or "
                    "give the pool's profile in .dra-migrate.yaml sharing.pools",
                )
            ],
            True,
        )
    choice = mig_choice(ask.choice, model.profile)
    note = finding(
        "DRA266",
        path,
        *where,
        f"{what}: converted to {ask.count} MIG device(s) of profile {model.profile} "
        f"(DeviceClass {MIG_CLASS})",
        "",
    )
    return dataclasses.replace(ask, choice=choice), [note], False
