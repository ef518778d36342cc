"""GPU counts outside pod specs that an operator reads: custom resources that carry a GPU
count outside any pod spec, and the operator that reads it (OME runtimes, llmaz models,
the NIM Operator, Kubeflow Trainer, the Spark operator, NVIDIA Dynamo, Karpenter NodePool
limits), named by what reads it (DRA275, DRA276) instead of DRA212's generic "move it
into a pod template", and counted in the inventory as refused (``OUTSIDE``).
``COUNT_FIELDS``: an operator's own count fields inside a requests/limits mapping (NVIDIA
Dynamo's ``gpu``, ``gpuType`` and ``custom``), counted as the resource they become in the
pods. ``VALUES_KEYS``: keys of a chart's values whose GPU requests an operator, not the
chart's templates, turns into pods (KubeAI's resource profiles: DRA278).

Kept apart from convert/provisioners.py (the rules a conversion applies to each pod
spec): ``convert/unconverted.py`` imports this module only where a GPU count stands
outside every pod spec it located, ``convert/values_asks.py`` where a values key sets
GPUs. docs/conversion.md ("Where converted pods land")
renders the same facts for users; tests/convert/test_provisioners.py holds a reduced real
case per row.
"""

from __future__ import annotations

from dataclasses import dataclass

from dra_migrate.manifests import trees
from dra_migrate.manifests.kinds import api_group
from dra_migrate.report.findings import Finding, finding

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from yaml.nodes import Node

    from dra_migrate.manifests.locate import Workload
    from dra_migrate.report.model import InventoryItem


@dataclass(frozen=True, slots=True)
class Outside:
    """A field outside any pod spec that holds a GPU count an operator reads."""

    kinds: tuple[str, ...]  # "group/Kind"
    code: str
    operator: str
    reads: str
    fix: str
    source: str
    ask: bool = True  # a count that pods get (counted as refused); False: a cap


OUTSIDE: tuple[Outside, ...] = (
    Outside(
        ("karpenter.sh/NodePool",),
        "DRA276",
        "Karpenter",
        "caps what the capacity of the pool's nodes adds up to (spec.limits: any resource "
        "name, or nodes): the instance type's capacity until a node is initialized, then the "
        "node's status.capacity. A cap, not a request; a node whose GPUs a DRA driver serves "
        "reports no nvidia.com/gpu capacity, so once initialized it stops counting against "
        "this limit",
        "keep the cap while the pool runs device-plugin nodes (pods that select the pool are "
        "held, DRA270); when the pool moves to DRA, cap it with limits.nodes, which counts "
        "every node",
        "kubernetes-sigs/karpenter pkg/apis/v1/nodepool.go (Limits, ExceededBy), "
        "pkg/controllers/state/cluster.go (updateNodePoolResources), "
        "pkg/controllers/state/statenode.go (Capacity), at v1.14.1",
        ask=False,
    ),
    Outside(
        ("ome.io/ClusterServingRuntime", "ome.io/ServingRuntime"),
        "DRA275",
        "OME",
        "builds the engine and decoder pods from the runner and sets PARALLELISM_SIZE to the "
        "runner's nvidia.com/gpu count times the leader and worker pods "
        "(setParallelismEnvVarForEngine, GetGpuCountFromContainer): without the count the "
        "engine gets no PARALLELISM_SIZE",
        "keep the runtime on the device plugin until OME reads claims",
        "sgl-project/ome pkg/controller/v1beta1/inferenceservice/components/engine.go, "
        "decoder.go, pkg/controller/v1beta1/inferenceservice/utils/container.go",
    ),
    Outside(
        ("ome.io/InferenceService",),
        "DRA275",
        "OME",
        "merges the engine's and decoder's runner into the runtime's and sets "
        "PARALLELISM_SIZE from the merged runner's nvidia.com/gpu count",
        "keep the service on the device plugin until OME reads claims",
        "sgl-project/ome pkg/controller/v1beta1/inferenceservice/components/engine.go",
    ),
    Outside(
        ("llmaz.io/OpenModel",),
        "DRA275",
        "llmaz",
        "writes the flavor's limits into the model-runner container of every Service that "
        "claims the model (injectModelFlavor), requests and limits",
        "keep the model's flavors on the device plugin until llmaz writes claims",
        "InftyAI/llmaz pkg/controller/inference/service_controller.go (injectModelFlavor)",
    ),
    Outside(
        ("inference.llmaz.io/BackendRuntime", "inference.llmaz.io/Playground"),
        "DRA275",
        "llmaz",
        "merges a Playground's backendRuntimeConfig resources over the runtime's recommended "
        "config into the model-runner container of the Service it builds",
        "keep the runtime's recommended resources on the device plugin until llmaz writes claims",
        "InftyAI/llmaz pkg/controller/inference/playground_controller.go (buildTemplate)",
    ),
)
OUTSIDE += (
    Outside(
        ("apps.nvidia.com/NIMService",),
        "DRA275",
        "the NIM Operator",
        "gives the NIM container spec.resources, or nvidia.com/gpu limits of the profile's "
        "tensor parallelism when it sets none",
        "move the GPUs to spec.draResources (NIM Operator v3.0.0 and later) and drop them from "
        "spec.resources",
        "NVIDIA/k8s-nim-operator internal/controller/platform/standalone/nimservice.go",
    ),
    Outside(
        ("trainer.kubeflow.org/TrainJob",),
        "DRA275",
        "Kubeflow Trainer",
        "sets the node container's resources from spec.trainer.resourcesPerNode (over the "
        "runtime's) and derives processes per node from its GPU count: a claim in the "
        "runtime would come with the extended resource beside it",
        "drop the GPU from resourcesPerNode once the runtime is converted (its claim gives the "
        "node its devices; set numProcPerNode), or keep both on the device plugin",
        "kubeflow/trainer pkg/runtime/framework/plugins/jobset/builder.go (Trainer), "
        "pkg/runtime/runtime.go (GetNumGPUPerNode)",
    ),
    Outside(
        ("sparkoperator.k8s.io/SparkApplication", "sparkoperator.k8s.io/ScheduledSparkApplication"),
        "DRA275",
        "the Spark operator",
        "adds the driver's or executor's gpu (name, quantity) to the Spark container's limits "
        "in its pod webhook (addGPU): a claim in the pod template would come with the extended "
        "resource beside it",
        "keep the application's gpu field on the device plugin until the operator writes "
        "claims; pod templates of the application with GPUs are held too",
        "kubeflow/spark-operator internal/webhook/sparkpod_defaulter.go (addGPU), "
        "api/v1beta2/sparkapplication_types.go (GPUSpec)",
    ),
)
_DYNAMO = ("nvidia.com/DynamoGraphDeployment", "nvidia.com/DynamoComponentDeployment")
OUTSIDE += (
    Outside(
        _DYNAMO,
        "DRA275",
        "NVIDIA Dynamo",
        "writes the component's resources.limits.gpu and requests.gpu into its main container "
        "as nvidia.com/gpu (gpuType when set; custom names as they are) when it builds the "
        "pods (GetResourcesConfig), and TRT-LLM multinode components size mpirun -n from that "
        "count (getGPUsPerNode)",
        "give the component a claim as Dynamo's DRA examples do (extraPodSpec.resourceClaims "
        "and extraPodSpec.mainContainer.resources.claims, with a ResourceClaimTemplate) and "
        "drop resources.gpu, except on TRT-LLM multinode components, which size mpirun from "
        "it; or keep the device plugin",
        "ai-dynamo/dynamo deploy/operator/internal/controller_common/resource.go "
        "(GetResourcesConfig), deploy/operator/api/v1alpha1/common.go (ResourceItem), "
        "deploy/operator/internal/dynamo/backend_trtllm.go (getGPUsPerNode), "
        "examples/backends/vllm/deploy/agg_xpu_dra.yaml",
    ),
)
_OUTSIDE = {kind: rule for rule in OUTSIDE for kind in rule.kinds}


@dataclass(frozen=True, slots=True)
class CountField:
    """An operator's own GPU count inside a requests/limits mapping, and the resource name it
    becomes in the pods the operator builds."""

    kinds: tuple[str, ...]  # "group/Kind"
    field: str  # the count: gpu: "1"
    type_field: str  # the resource it becomes, when set: gpuType: gpu.intel.com/xe
    default: str  # else this resource
    raw: str  # a mapping of resource names written as they are: custom: {name: count}


# NVIDIA Dynamo's ResourceItem (deploy/operator/api/v1alpha1/common.go), turned into the main
# container's resources by GetResourcesConfig (internal/controller_common/resource.go).
COUNT_FIELDS: tuple[CountField, ...] = (
    CountField(_DYNAMO, "gpu", "gpuType", "nvidia.com/gpu", "custom"),
)
_COUNT_FIELDS = {kind: rule for rule in COUNT_FIELDS for kind in rule.kinds}


def operator_counts(workload: Workload, mapping: Node) -> list[tuple[str, str, Node, Node]]:
    """(field, resource, node to point at, count) of each count ``mapping`` (a requests or
    limits mapping of ``workload``) holds in the operator's own fields: the resource each
    becomes in the pods."""
    rule = _COUNT_FIELDS.get(f"{api_group(workload.api_version)}/{workload.kind}")
    if rule is None:
        return []
    out: list[tuple[str, str, Node, Node]] = []
    for key, key_node, value in trees.entries(mapping):
        if key == rule.field:
            kind = trees.scalar(trees.get(mapping, rule.type_field)) or rule.default
            out.append((key, kind, key_node, value))
        elif key == rule.raw:
            for name, name_node, amount in trees.entries(value):
                out.append((f"{key}.{name}", name, name_node, amount))
    return out


def outside_rule(workload: Workload) -> Outside | None:
    """The operator that reads this object's GPU counts outside its pod specs, if known."""
    return _OUTSIDE.get(f"{api_group(workload.api_version)}/{workload.kind}")


def outside_finding(
    rule: Outside, workload: Workload, where: str, name: str, node: Node, path: str
) -> Finding:
    """DRA275 or DRA276 for one GPU key of ``workload`` at ``where``."""
    line, col = trees.position(node)
    value = f"{workload.kind} {workload.name}".strip()
    if rule.ask:
        message = (
            f"{value} asks for {name} at {where}, outside any pod spec: {rule.operator} "
            f"{rule.reads}; it is left as it is"
        )
    else:
        message = f"{value} sets {name} at {where}: {rule.operator} {rule.reads}"
    return finding(rule.code, path, line, col, message, rule.fix)


# --- values keys an operator reads --------------------------------------------------


@dataclass(frozen=True, slots=True)
class ValuesKey:
    """A key of a chart's values whose GPU requests an operator turns into pods, not a
    template of the chart: a chart edit can never reach them (convert/values_asks.py)."""

    holder: tuple[str, ...]  # the steps that end at the mapping holding the resources
    code: str
    operator: str
    reads: str
    fix: str
    source: str


VALUES_KEYS: tuple[ValuesKey, ...] = (
    ValuesKey(
        ("resourceProfiles", "*"),  # also under a parent chart's key (kubeai.resourceProfiles)
        "DRA278",
        "KubeAI",
        "resource profile: the model controller multiplies the profile's requests and limits "
        "by the N of each Model's resourceProfile (name:N) and sets them on the model pods it "
        "creates, with the profile's nodeSelector and tolerations; it writes no ResourceClaims",
        "serve the model pods' extended resource through a DeviceClass with "
        "extendedResourceName (the chart's bridge: DRA242), or keep them on the device "
        "plugin; a template edit of the chart cannot reach pods the operator builds",
        "kubeai-project/kubeai internal/modelcontroller/model_controller.go (getModelConfig), "
        "internal/config/system.go (ResourceProfile), charts/kubeai/templates/configmap.yaml",
    ),
)


def values_rule(holder: tuple[str, ...]) -> ValuesKey | None:
    """The operator that reads the GPU requests of the values mapping at ``holder`` (its
    steps as messages show them), if known: the rule's steps end the holder's, ``*``
    any one step."""
    for rule in VALUES_KEYS:
        tail = holder[-len(rule.holder) :]
        if len(tail) == len(rule.holder) and all(
            want in ("*", got) for want, got in zip(rule.holder, tail, strict=True)
        ):
            return rule
    return None


def values_finding(rule: ValuesKey, key: str, row: InventoryItem, path: str) -> Finding:
    """DRA278 for one GPU ask of a values file (its row, at ``key``) that ``rule``'s
    operator reads."""
    return finding(
        rule.code,
        path,
        row.line,
        row.col,
        f"values key {key} sets {row.resource}: {row.value}, a {rule.operator} {rule.reads}; "
        "it is left as it is",
        rule.fix,
    )


def config_finding(
    rule: ValuesKey, key: str, name: str, amount: Node, node: Node, path: str
) -> Finding:
    """DRA278 for one GPU key of an operator's configuration file (a document of no
    kind: KubeAI's system.yaml) that ``rule``'s operator reads."""
    line, col = trees.position(node)
    value = trees.scalar(amount) or "…"
    return finding(
        rule.code,
        path,
        line,
        col,
        f"{key} sets {name}: {value}, a {rule.operator} {rule.reads}; it is left as it is",
        rule.fix,
    )
