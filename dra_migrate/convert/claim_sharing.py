"""DRA535: a GPU that pods shared, converted to per-pod claims that each take a whole one.

``convert`` writes a ResourceClaimTemplate: every pod gets a claim of its own. A
sharing configuration on that claim (the NVIDIA DRA driver's ``GpuConfig`` or
``MigDeviceConfig`` with ``sharing: {strategy: TimeSlicing | MPS}``) is applied by the
kubelet plugin to the devices allocated to that one claim
(kubernetes-sigs/dra-driver-nvidia-gpu ``cmd/gpu-kubelet-plugin/device_state.go``
``applySharingConfig``: the time-slice interval of the claim's GPUs, or an MPS daemon
for the claim's containers). It does not make the device allocatable to a second
claim: the scheduler's allocator skips a device in use by another claim
(kubernetes/kubernetes ``staging/src/k8s.io/dynamic-resource-allocation/structured/
internal/stable/allocator_stable.go``, ``deviceInUse``) unless the driver publishes it
with ``allowMultipleAllocations`` (consumable capacity, KEP-5075, feature gate
``DRAConsumableCapacity``: alpha in 1.34, beta and on by default from 1.36), which the
NVIDIA driver does only with consumable shares (``consumable_shares.go``
``applyConsumableShares``, release 0.5). So eight time-sliced replicas that fitted on
two GPUs need eight GPUs: nothing in the output says so unless this does. On a release
with consumable shares, a request that names no ``shares`` capacity takes the device's
default share (``structured/internal/experimental/consumable_capacity.go``
``fillEmptyRequest``) only where the kubelet plugin runs with them, which the output
does not show, and the driver refuses an MPS config on a shared device (PR #1257).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dra_migrate.convert.asks import Ask
from dra_migrate.convert.mapping import Config, Context
from dra_migrate.manifests import trees
from dra_migrate.repo.sharing import PRODUCT_LABEL, SHARED_PRODUCT, Fleet
from dra_migrate.report.findings import Finding, finding

SHARES = "shares"


def sharing_strategy(config: tuple[Mapping[str, Any], ...]) -> str:
    """The sharing strategy a mapping's driver config sets on a claim ("" for none)."""
    for item in config:
        parameters = item.get("parameters")
        sharing = parameters.get("sharing") if isinstance(parameters, Mapping) else None
        if isinstance(sharing, Mapping):
            return str(sharing.get("strategy") or "a sharing configuration")
    return ""


def _shared_before(ask: Ask, ctx: Context, config: Config) -> str:
    """How the device plugin shared this GPU for the pod ("" when it did not, or nothing
    says so)."""
    if ask.choice.shared:
        return "a time-sliced share on the device plugin"
    if any(p.endswith(SHARED_PRODUCT) for p in ctx.node_selector.get(PRODUCT_LABEL) or ()):
        return f"a GPU the device plugin shares: the nodes' product label ends in {SHARED_PRODUCT}"
    if config.sharing is None and not ctx.gpu_labels:
        return ""
    model = (config.sharing or Fleet()).model_for(ctx.node_selector)
    if model.shared and model.applies_to(ask.resource):
        return f"a GPU the device plugin shares: {model.describe()}"
    return ""


def _whole(ask: Ask, strategy: str, config: Config) -> str:
    """Why each claim takes whole devices: the release publishes no consumable shares,
    or it may, and then only a driver setting the output does not show decides."""
    from dra_migrate.convert.sharing import shares_problem

    problem = shares_problem(config, ask.choice.device_class)
    if problem:
        return (
            f"each claim takes {ask.count} whole device(s), as a device goes to one claim "
            "at a time unless its driver publishes it with allowMultipleAllocations "
            f"(consumable shares), and {problem}"
        )
    mps = "; and the driver refuses an MPS config on a shared device" if strategy == "MPS" else ""
    return (
        f"each claim takes {ask.count} whole device(s) unless the kubelet plugin runs with "
        "consumable shares (the request names no shares capacity: it then takes the "
        f"device's default of one share{mps})"
    )


def _sharing_config(ask: Ask, config: Config) -> tuple[str, str]:
    """The sharing strategy set on the ask's claim and which config sets it: the
    mapping's, else that of the project's DeviceClass it names (("", "") for none)."""
    strategy = sharing_strategy(ask.choice.config)
    if strategy:
        return strategy, f"the mapping's config sets sharing {strategy} on its claim"
    for defined in config.device_classes:
        strategy = sharing_strategy(defined.config)
        if defined.name == ask.choice.device_class and strategy:
            return strategy, f"DeviceClass {defined.name}'s config sets sharing {strategy}"
    return "", ""


def per_pod_claims(
    asks: list[Ask], ctx: Context, config: Config, kind: str, name: str, template: str, path: str
) -> list[Finding]:
    """DRA535 for each ask the device plugin shared, or whose claim gets a sharing
    config (the mapping's, or its project DeviceClass's), that a claim per pod turns
    into whole devices (no consumable shares)."""
    found = []
    for ask in asks:
        if any(k == SHARES for k, _v in ask.choice.capacity):
            continue  # consumable shares: pods share the device
        # a share without a config of its own was DRA205, shares or refused before this
        before = _shared_before(ask, ctx, config) if ask.choice.config else ""
        strategy, where = _sharing_config(ask, config)
        if not where and not before:
            continue
        why = "; ".join(part for part in (before, where) if part)
        found.append(
            finding(
                "DRA535",
                path,
                *trees.position(ask.key),
                f"container {ask.container.name!r} asks for {ask.resource}: {ask.count} "
                f"({why}), but every pod of {kind} {name} gets a claim of its own from "
                f"ResourceClaimTemplate {template}, and a claim's sharing config only says "
                f"how the containers of that claim share its devices: {_whole(ask, strategy, config)}",
                "to share between pods: one ResourceClaim the pods reference by "
                "resourceClaimName (every replica then shares that claim's devices, on the "
                "node that holds them: replicas scale on those devices only, and the claim "
                "outlives the workload), or consumable shares on a driver release that "
                'publishes them (drivers: {gpu.nvidia.com: "0.5"} and sharing: in '
                ".dra-migrate.yaml, the resource mapped without a config: DRA260; "
                "docs/conversion.md#gpu-sharing)",
            )
        )
    return found
