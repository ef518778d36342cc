"""Operators that read the GPU count of a component's pod template when a field of the
component turns a reader on: NVIDIA Dynamo v1beta1 (DynamoGraphDeployment
``spec.components[].podTemplate``, DynamoComponentDeployment ``spec.podTemplate``) sizes a
component that spans nodes from the main container's GPU count, and its GPU Memory Service
and checkpoint job read that container's ``nvidia.com/gpu`` limit. Such a pod template is
held on the device plugin (DRA273, naming the reader); other components are converted.

Imported by ``provisioners.readers`` only for the kinds of ``provisioners.COMPONENT_KINDS``
(these keys). docs/conversion.md (the NVIDIA Dynamo row) renders the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass

from yaml.nodes import Node

from dra_migrate.manifests import locate
from dra_migrate.manifests.kinds import api_group
from dra_migrate.manifests.locate import PodSite
from dra_migrate.manifests.trees import get_path, scalar


@dataclass(frozen=True, slots=True)
class Reader:
    """An operator's reader of a component's GPU count (as ``provisioners.Reader``)."""

    operator: str
    what: str  # kinds and fields it reads
    reads: str  # what it does with the count
    does: str  # what dra-migrate does
    source: str
    code: str = "DRA273"
    fix: str = ""


# kinds whose operator reads the main container's GPU count of a component's pod template
# when a field of the component turns a reader on: "group/Kind" -> the rules, each (path from
# the component to the field, what turns it on: "above-one" a count above 1, "present" the
# field set, "true" a YAML true, the reader). Components no rule turns on are converted.
_DYNAMO_V1BETA1 = "deploy/operator/api/v1beta1/common.go (ExperimentalSpec) at 02911c8"
_DYNAMO_MULTINODE = Reader(
    "NVIDIA Dynamo",
    "nvidia.com DynamoGraphDeployment and DynamoComponentDeployment pod templates",
    "sizes a component that spans nodes (multinode.nodeCount above 1) from its main "
    "container's GPU count (nvidia.com/gpu or any */gpu name, requests first): TRT-LLM's "
    "mpirun -n, vLLM's multi-node tensor- and data-parallel flags (--data-parallel-size-local "
    "is the GPUs over TP x PP); with no GPU resource it injects none (getGPUQuantity, "
    "getGPUsPerNode)",
    "holds the pod template (DRA273)",
    "ai-dynamo/dynamo deploy/operator/internal/dynamo/backend_vllm.go "
    "(updateVLLMMultinodeArgs, getGPUQuantity) at 003d1ee, backend_trtllm.go (getGPUsPerNode), "
    "deploy/operator/api/v1beta1 (GetNumberOfNodes)",
    "DRA273",
    "keep multi-node components on the device plugin until Dynamo counts claimed devices "
    "(components no Dynamo reader turns on are converted)",
)
_DYNAMO_GMS = Reader(
    "NVIDIA Dynamo GPU Memory Service",
    "nvidia.com DynamoGraphDeployment and DynamoComponentDeployment components with "
    "experimental.gpuMemoryService",
    "replaces the main container's GPU resources with a DRA ResourceClaim of its own, sized "
    "from that container's nvidia.com/gpu limit (GPUMemoryServiceSpec); after the rewrite "
    "it finds no GPU to move into its claim (experimental.failover needs it too)",
    "holds the pod template (DRA273)",
    f"ai-dynamo/dynamo {_DYNAMO_V1BETA1}, GPUMemoryServiceSpec",
    "DRA273",
    "keep the component on the device plugin and let Dynamo's GPU Memory Service write the "
    "claim (it asks DeviceClass gpuMemoryService.deviceClassName, gpu.nvidia.com by default)",
)
_DYNAMO_CHECKPOINT = Reader(
    "NVIDIA Dynamo checkpointing",
    "nvidia.com DynamoGraphDeployment and DynamoComponentDeployment components with "
    "experimental.checkpoint.enabled: true",
    "starts the checkpoint job from the main container (ComponentCheckpointConfig: the "
    "workload container is snapshotted and restored) and reads its nvidia.com/gpu limit "
    "for the GPUs to checkpoint (cuda-checkpoint above one GPU); after the rewrite it sees "
    "none",
    "holds the pod template (DRA273)",
    f"ai-dynamo/dynamo {_DYNAMO_V1BETA1}, ComponentCheckpointConfig",
    "DRA273",
    "keep checkpointed components on the device plugin until Dynamo's checkpoint job "
    "counts claimed devices",
)
COMPONENT_READERS: dict[str, tuple[tuple[tuple[str, ...], str, Reader], ...]] = {
    f"nvidia.com/{kind}": (
        (("multinode", "nodeCount"), "above-one", _DYNAMO_MULTINODE),
        (("experimental", "gpuMemoryService"), "present", _DYNAMO_GMS),
        (("experimental", "checkpoint", "enabled"), "true", _DYNAMO_CHECKPOINT),
    )
    for kind in ("DynamoGraphDeployment", "DynamoComponentDeployment")
}


def _turns_on(how: str, node: Node | None) -> bool:
    """Whether the field ``node`` turns its reader on, as ``how`` says."""
    text = scalar(node)
    if how == "above-one":
        return bool(text and text.isdigit() and int(text) > 1)
    if how == "true":
        return (text or "").lower() in ("true", "yes", "on", "y")
    return node is not None and (text is None or text.lower() not in ("", "null", "~"))


def reader(site: PodSite) -> Reader | None:
    """The first reader a field of the pod template's component turns on (Dynamo: a
    component that spans nodes, the GPU Memory Service, checkpointing)."""
    rules = COMPONENT_READERS.get(f"{api_group(site.workload.api_version)}/{site.workload.kind}")
    if rules is None or ".podTemplate" not in site.path:
        return None
    component = locate.node_at(site.workload.root, site.path.rsplit(".podTemplate", 1)[0])
    if component is None:
        return None
    for field, turns_on, reader in rules:
        if _turns_on(turns_on, get_path(component, *field)):
            return reader
    return None
