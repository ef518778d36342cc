"""The plan's part of the fleet's sharing model: stage 1 says when it was assumed,
stage 2 gives per node pool the DRA driver settings that reproduce today's sharing,
the GPU Operator's path and what else reads the device plugin's view.

Sources (read at the commits the catalog and docs/conversion.md#gpu-sharing name):

- kubernetes-sigs/dra-driver-nvidia-gpu: deployments/helm/dra-driver-nvidia-gpu/
  values.yaml ``consumableShares`` (rendered as the kubelet plugin's
  ``CONSUMABLE_SHARES``, templates/kubeletplugin.yaml) and ``featureGates``
  (``FEATURE_GATES``); cmd/gpu-kubelet-plugin/consumable_shares.go.
- NVIDIA/gpu-operator: api/nvidia/v1alpha1/gpucluster_types.go (``spec.draDriver.
  featureGates``, ``spec.draDriver.gpus.kubeletPlugin.env``);
  controllers/gpucluster_controller.go ``validatePrerequisites`` ("a ClusterPolicy CR
  and GPUCluster CR may not exist at the same time"); manifests/state-dcgm-exporter/
  0700_daemonset.yaml (``KUBERNETES_ENABLE_DRA``); the node label
  ``nvidia.com/gpu.deploy.device-plugin`` its node labelling reads.
- NVIDIA/gpu-operator controllers/object_controls.go ``TransformGPUDiscoveryPlugin``
  calls ``handleDevicePluginConfig`` (GPU feature discovery reads the device plugin's
  configuration, selected per node by ``nvidia.com/device-plugin.config``, on nodes
  labelled ``nvidia.com/gpu.deploy.device-plugin=false`` too); controllers/
  state_manager.go ``gpuClusterStateLabels`` (no GPU feature discovery in the
  GPUCluster's stack) and ``devicePluginOnlyStateLabelKeys`` (its deploy label swept
  off DRA nodes); NVIDIA/k8s-device-plugin internal/lm/resource.go (the labels from
  the configuration) and deployments/helm/nvidia-device-plugin/templates/
  daemonset-gfd.yml (``gfd.enabled`` apart from ``devicePlugin.enabled``, the same
  ``config``).
- NVIDIA/dcgm-exporter: ``KUBERNETES_VIRTUAL_GPUS`` ("virtual GPUs exposed by
  Kubernetes device plugins when using GPU sharing strategies").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dra_migrate.convert.mapping import Config
from dra_migrate.convert.sharing import shares_problem
from dra_migrate.migration import strategy
from dra_migrate.repo.sharing import (
    EXCLUSIVE,
    GPU,
    MIG_MIXED,
    MIG_SINGLE,
    MPS,
    TIME_SLICING,
    Fleet,
    Pool,
)
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.migration import LiveInventory, Prerequisite, Workload

TOPIC = "GPU sharing"
CONFIRM = (
    "kubectl get nodes -L nvidia.com/gpu.replicas,nvidia.com/gpu.sharing-strategy,"
    "nvidia.com/mig.strategy,nvidia.com/gpu.product"
)
OPERATOR = (
    "GPU Operator: its controller refuses a GPUCluster while a ClusterPolicy exists "
    "(NVIDIA/gpu-operator controllers/gpucluster_controller.go validatePrerequisites), so "
    "during the waves keep the ClusterPolicy for the device-plugin nodes, label the nodes "
    "that move nvidia.com/gpu.deploy.device-plugin=false, and run the DRA driver there "
    "from its own chart; move to a GPUCluster (spec.draDriver) once the last wave has left "
    "the device plugin. Never the device plugin and the DRA driver on one node"
)
MONITORING = (
    "dcgm-exporter: on DRA nodes it attributes GPUs to pods through ResourceSlices "
    "(KUBERNETES_ENABLE_DRA=true, as the GPU Operator's GPUCluster sets it) instead of "
    "the device plugin's replica IDs (KUBERNETES_VIRTUAL_GPUS). GPU feature discovery "
    "keeps writing nvidia.com/gpu.replicas, nvidia.com/gpu.sharing-strategy and the "
    "-SHARED product on the nodes a wave moves: it computes them from the device "
    "plugin's configuration, not from the device plugin, and the GPU Operator gives it "
    "that configuration whether the device plugin runs on the node or not "
    "(controllers/object_controls.go TransformGPUDiscoveryPlugin, "
    "handleDevicePluginConfig; the device plugin chart's gfd reads its config alike, on "
    "the chart's nodeSelector), so "
    "node selectors on them keep matching. They change when the sharing configuration "
    "leaves the node (the ClusterPolicy's devicePlugin.config, its ConfigMap, or the "
    "node's nvidia.com/device-plugin.config label: replicas 1, strategy none, no "
    "-SHARED), and go with GPU feature discovery when a GPUCluster replaces the "
    "ClusterPolicy (its stack runs none: the operator sweeps "
    "nvidia.com/gpu.deploy.gpu-feature-discovery off DRA nodes): keep the sharing "
    "configuration until node selectors, dashboards and alerts on those labels have "
    "moved to labels of your own"
)


def settings_for(pool: Pool, config: Config) -> tuple[str, str]:
    """(what the pool needs, the detail) for stage 2."""
    model = pool.model
    shown = pool.shown_selector()
    named = pool.name if pool.name == shown else f"{pool.name} ({shown})"
    where = f"{named}: {model.describe()}"
    if model.kind == TIME_SLICING:
        n = model.replicas
        problem = shares_problem(config, "gpu.nvidia.com")
        driver = (
            f'DRA driver Helm values consumableShares: "{n}" and featureGates: '
            "{ConsumableShares: true} on this pool's kubelet plugins, a release of its own "
            "(kubeletPlugin.nodeSelector on the pool): the mode applies to every GPU of a "
            "release, and a request without shares takes one; GPUCluster (after the last "
            "wave, one mode for the cluster): "
            "spec.draDriver.featureGates.ConsumableShares: true and "
            f"spec.draDriver.gpus.kubeletPlugin.env CONSUMABLE_SHARES={n}. Each GPU then "
            f"publishes allowMultipleAllocations and a shares capacity of {n}; a converted "
            "request takes the one share its replica was (k under a packed policy, DRA260); "
            "Kubernetes 1.34+ "
            "with DRAConsumableCapacity (on by default from 1.36)"
        )
        if problem:
            driver = f"not convertible yet: {problem}. Once it is: {driver}"
        if model.per_gpu:
            driver = "stays on the device plugin: replica counts differ between GPUs (DRA262)"
        return where, driver
    if model.kind == MPS:
        return where, (
            "stays on the device plugin's MPS (DRA263): the DRA driver rejects MPS on claims "
            "while consumable shares are on; pods that must share through MPS need one "
            "ResourceClaim between them with a GpuConfig sharing {strategy: MPS} (driver "
            "feature gate MPSSupport)"
        )
    if model.kind == MIG_SINGLE:
        profile = f" of profile {model.profile}" if model.profile else ""
        return where, (
            f"the DRA driver publishes the MIG devices{profile} in the mig.nvidia.com class "
            "(DRA266); keep the MIG layout (mig-manager's nvidia.com/mig.config) as it is"
        )
    if model.kind == MIG_MIXED:
        return where, (
            "nvidia.com/mig-<profile> becomes the mig.nvidia.com class with the profile's "
            "selector; nvidia.com/gpu stays whole GPUs; keep the MIG layout"
        )
    return where, "exclusive GPUs: the DRA driver's defaults (gpu.nvidia.com)"


def prerequisites(config: Config, workloads: Sequence[Workload]) -> list[Prerequisite]:
    """Stage 2's lines for the sharing model: one per known pool, the GPU Operator's
    path and what reads the device plugin's view, when any pool shares."""
    if not any(c.resource.startswith("nvidia.com/") for w in workloads for c in w.containers):
        return []
    fleet = config.sharing or Fleet()
    pools = list(fleet.pools)
    if not fleet.default.assumed:
        pools.append(Pool("default", (), fleet.default))
    out = [Prerequisite(TOPIC, *settings_for(pool, config)) for pool in pools]
    if fleet.default.assumed:
        out.append(
            Prerequisite(
                TOPIC,
                "exclusive GPUs (assumed: DRA540)" + (" on the other GPU nodes" if pools else ""),
                f"nothing read says the device plugin shares GPUs there; confirm with {CONFIRM}",
            )
        )
    if any(p.model.kind != EXCLUSIVE for p in pools):
        out.append(Prerequisite(TOPIC, "GPU Operator: one stack per node", OPERATOR))
        out.append(Prerequisite(TOPIC, "what reads the device plugin's view", MONITORING))
    return out + selectors(workloads)


SELECTED = (
    "GPU feature discovery keeps writing this label while the device plugin's sharing "
    "configuration stays on the node, after the workload's wave too, and changes it when "
    "the configuration leaves the node (replicas 1, strategy none, no -SHARED); under a "
    "GPUCluster no GPU feature discovery writes it: keep the sharing configuration until "
    "these selectors move to labels of your own"
)


def selectors(workloads: Sequence[Workload]) -> list[Prerequisite]:
    """A line per node selector of a workload the waves move on a label GFD computes
    from the sharing configuration: where it is, and to keep the configuration."""
    return [
        Prerequisite(
            TOPIC,
            f"{w.display} selects {s.describe()}",
            f"{w.path}:{s.line}: {SELECTED}",
        )
        for w in workloads
        if w.strategy not in strategy.LEFT
        for s in w.sharing_labels
    ]


def findings(
    config: Config, workloads: Sequence[Workload], bridged: Iterable[str]
) -> list[Finding]:
    """DRA540 when the model was assumed; DRA541 for each bridged name a pool shares."""
    out: list[Finding] = []
    nvidia = [
        w for w in workloads if any(c.resource.startswith("nvidia.com/") for c in w.containers)
    ]
    fleet = config.sharing or Fleet()
    if nvidia and fleet.default.assumed:
        known = fleet.pools
        where = (
            f"on nodes outside the known pools ({', '.join(p.name for p in known)})"
            if known
            else "anywhere"
        )
        out.append(
            finding(
                "DRA540",
                "",
                0,
                0,
                f"{len(nvidia)} workload(s) ask for NVIDIA GPUs and nothing read says how the "
                f"device plugin hands them out {where}: there each nvidia.com/gpu is taken as "
                "one whole, exclusive GPU",
                f"confirm it ({CONFIRM}: replicas 1, strategy none, no -SHARED or -MIG- "
                "product), or describe the shared pools in .dra-migrate.yaml sharing:",
            )
        )
    pools = [*fleet.pools, Pool("default", (), fleet.default)]
    for resource in sorted(set(bridged)):
        sharing = [p for p in pools if p.model.applies_to(resource)]
        if sharing:
            shown = "; ".join(f"{p.name}: {p.model.describe()}" for p in sharing)
            out.append(
                finding(
                    "DRA541",
                    "",
                    0,
                    0,
                    f"{resource} is bridged, and pools share it on the device plugin ({shown}): "
                    "a DeviceClass with extendedResourceName allocates one whole device per "
                    "unit, so bridged pods there would each hold a GPU they shared",
                    "rewrite these workloads (a shares request, DRA260), or keep the pool on "
                    "the device plugin",
                )
            )
    return out


__all__ = ["GPU", "findings", "prerequisites", "selectors", "settings_for", "with_live"]


def with_live(config: Config, live: LiveInventory | None) -> Config:
    """The configuration with the pools the cluster's nodes show (their GFD labels, or
    allocatable against the GPU count) after those the run read."""
    if live is None or not live.nodes:
        return config
    from dataclasses import replace

    from dra_migrate.repo.sharing import fleet_from_nodes

    fleet = fleet_from_nodes(
        (n.name, dict(n.labels), {k: str(v) for k, v in n.allocatable}) for n in live.nodes
    )
    if not fleet.known:
        return config
    return replace(config, sharing=config.sharing.merged(fleet) if config.sharing else fleet)
