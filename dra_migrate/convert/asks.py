"""What a pod spec asks for, as the plan reads it: one extended resource of one
container, with the mapping's choice for it (``plan.py`` makes them, the controller
rules of ``controllers.py`` read them)."""

from __future__ import annotations

from dataclasses import dataclass

from yaml.nodes import Node

from dra_migrate.convert.mapping import Choice
from dra_migrate.manifests.locate import Container
from dra_migrate.report.findings import Finding, finding


@dataclass(frozen=True, slots=True)
class Ask:
    """One extended resource asked for by one container."""

    container: Container
    resource: str
    count: int
    choice: Choice
    key: Node  # the key node in limits, where findings point


# HAMi's pseudo-resources for NVIDIA GPUs (Project-HAMi/HAMi charts/hami/values.yaml
# resourceMem, resourceMemPercentage, resourceCores, resourcePriority @4707fb02): its
# scheduler extender and device plugin read them as a share of the GPU the container
# asks for with nvidia.com/gpu, not as devices. No DRA driver publishes them: DRA110
# says so where DRA104 would call them unknown.
HAMI_RESOURCES = {
    "nvidia.com/gpumem": "the GPU memory of the share, in MiB",
    "nvidia.com/gpumem-percentage": "the GPU memory of the share, in percent of the GPU",
    "nvidia.com/gpucores": "the compute of the share, in percent of the GPU",
    "nvidia.com/priority": "the task priority of the share",
}


def fraction_hint(scheduler: bool) -> str:
    """DRA205's way out: a sharing scheduler's fractions (HAMi) stay with it; a time
    slice converts once its pool's replica count is known."""
    if scheduler:
        return (
            "keep it on its sharing scheduler: no DRA driver publishes its fractions (or "
            "map the resource in .dra-migrate.yaml with a config of its own)"
        )
    return (
        "say how many ways its pool shares a GPU (.dra-migrate.yaml sharing:, or the device "
        "plugin's config in the repository) to convert it to consumable shares "
        "(docs/conversion.md#gpu-sharing), or keep it on the device plugin"
    )


def hami_finding(who: str, name: str, path: str, key: Node) -> Finding:
    """DRA110: a HAMi pseudo-resource, not a device a mapping could convert."""
    from dra_migrate.manifests import trees

    return finding(
        "DRA110",
        path,
        *trees.position(key),
        f"{who} uses {name}, a HAMi resource ({HAMI_RESOURCES[name]}): HAMi (Project-HAMi, "
        "a CNCF project) shares GPUs through its own scheduler extender and device plugin, "
        "which read it as a share of the GPU the container asks for with nvidia.com/gpu; no "
        "DRA driver publishes it, so it is left as it is",
        "keep the workload on HAMi, or move it to DRA whole: HAMi-DRA (HAMi v2.8.0 and "
        "later) or the NVIDIA DRA driver's GPU sharing (GpuConfig TimeSlicing or MPS), and "
        "drop the HAMi resources from its limits",
    )
