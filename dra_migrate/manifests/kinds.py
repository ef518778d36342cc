"""The workload kinds that embed pod specs, as a table.

Adding a kind is adding one ``Kind`` entry. A site pattern is a dotted path
from the object root to a pod spec (the mapping that gets
``resourceClaims``), where a step is

- ``key``: a mapping key;
- ``*``: every value of a mapping (the key names the site, e.g. ``Worker``);
- ``[field]``: every item of a sequence (the item's ``field`` names the site,
  the index does when it is missing).

``label`` names the site in generated names: ``""`` for the only pod template
of a workload, a fixed word (``head``), or ``{}`` for the name the wildcard
step found.
"""

from __future__ import annotations

from dataclasses import dataclass

# How the pod's containers are laid out and where pod-level claims go.
POD = "pod"  # a core/v1 PodSpec: containers, initContainers, resourceClaims
KSERVE = "kserve"  # PodSpec inlined in a component, plus single-container framework fields
ARGO = "argo"  # an Argo template: container/script/containerSet; claims via podSpecPatch

# KServe component fields that hold one container (the "kserve-container").
KSERVE_CONTAINER_FIELDS = (
    "model",
    "pytorch",
    "tensorflow",
    "sklearn",
    "xgboost",
    "onnx",
    "triton",
    "pmml",
    "lightgbm",
    "paddle",
    "huggingface",
)


# Knative Serving rejects resources.claims and resourceClaims in every version
# (knative/serving#15332): workloads it runs are reported and left alone.
KNATIVE = "knative"  # always runs on Knative Serving
KSERVE_MODE = "kserve"  # runs on Knative unless its deployment mode says otherwise
# serving.kserve.io/deploymentMode values that do not use Knative (Standard is the
# newer name of RawDeployment); absent, KServe's default is Serverless.
KSERVE_RAW_MODES = ("RawDeployment", "Standard", "ModelMesh")
KSERVE_MODE_ANNOTATION = "serving.kserve.io/deploymentMode"


@dataclass(frozen=True, slots=True)
class Site:
    path: str
    label: str = ""
    style: str = POD


@dataclass(frozen=True, slots=True)
class Kind:
    group: str  # API group without version; "" for core
    kind: str
    sites: tuple[Site, ...]
    knative: str = ""  # KNATIVE or KSERVE_MODE: may run on Knative Serving (never converted there)
    cluster_scoped: bool = False  # its pods run in the namespaces of the objects that use it
    outside: tuple[str, ...] = ()  # resource fields outside pod templates


def _replicas(field_name: str) -> tuple[Site, ...]:
    return (Site(f"spec.{field_name}.*.template.spec", "{}"),)


def _ray(prefix: str) -> tuple[Site, ...]:
    return (
        Site(f"{prefix}.headGroupSpec.template.spec", "head"),
        Site(f"{prefix}.workerGroupSpecs[groupName].template.spec", "{}"),
    )


def _argo(prefix: str) -> tuple[Site, ...]:
    return (Site(f"{prefix}.templates[name]", "{}", ARGO),)


_TEMPLATE = (Site("spec.template.spec"),)
_JOBSET = (Site("spec.replicatedJobs[name].template.spec.template.spec", "{}"),)
_KSERVE = (
    Site("spec.predictor", "predictor", KSERVE),
    Site("spec.predictor.workerSpec", "predictor-worker", KSERVE),
    Site("spec.transformer", "transformer", KSERVE),
    Site("spec.explainer", "explainer", KSERVE),
)
_LLMISVC = (
    Site("spec.template", ""),
    Site("spec.worker", "worker"),
    Site("spec.prefill.template", "prefill"),
    Site("spec.prefill.worker", "prefill-worker"),
)

KINDS: tuple[Kind, ...] = (
    Kind("", "Pod", (Site("spec"),)),
    Kind("", "PodTemplate", (Site("template.spec"),)),
    Kind("", "ReplicationController", _TEMPLATE),
    Kind("apps", "Deployment", _TEMPLATE),
    Kind("apps", "StatefulSet", _TEMPLATE),
    Kind("apps", "DaemonSet", _TEMPLATE),
    Kind("apps", "ReplicaSet", _TEMPLATE),
    Kind("batch", "Job", _TEMPLATE),
    Kind("batch", "CronJob", (Site("spec.jobTemplate.spec.template.spec"),)),
    Kind("kubeflow.org", "PyTorchJob", _replicas("pytorchReplicaSpecs")),
    Kind("kubeflow.org", "TFJob", _replicas("tfReplicaSpecs")),
    Kind("kubeflow.org", "MPIJob", _replicas("mpiReplicaSpecs")),
    Kind("kubeflow.org", "XGBoostJob", _replicas("xgbReplicaSpecs")),
    Kind("kubeflow.org", "PaddleJob", _replicas("paddleReplicaSpecs")),
    Kind("kubeflow.org", "MXJob", _replicas("mxReplicaSpecs")),
    Kind("trainer.kubeflow.org", "TrainJob", (), outside=("spec.trainer.resourcesPerNode",)),
    Kind(
        "trainer.kubeflow.org",
        "TrainingRuntime",
        (Site("spec.template.spec.replicatedJobs[name].template.spec.template.spec", "{}"),),
    ),
    Kind(
        "trainer.kubeflow.org",
        "ClusterTrainingRuntime",
        (Site("spec.template.spec.replicatedJobs[name].template.spec.template.spec", "{}"),),
        cluster_scoped=True,
    ),
    Kind("ray.io", "RayCluster", _ray("spec")),
    Kind(
        "ray.io",
        "RayJob",
        (*_ray("spec.rayClusterSpec"), Site("spec.submitterPodTemplate.spec", "submitter")),
    ),
    Kind("ray.io", "RayService", _ray("spec.rayClusterConfig")),
    # aibrix: a fleet of RayClusters from one RayCluster spec
    Kind("orchestration.aibrix.ai", "RayClusterFleet", _ray("spec.template.spec")),
    Kind("jobset.x-k8s.io", "JobSet", _JOBSET),
    Kind(
        "leaderworkerset.x-k8s.io",
        "LeaderWorkerSet",
        (
            Site("spec.leaderWorkerTemplate.leaderTemplate.spec", "leader"),
            Site("spec.leaderWorkerTemplate.workerTemplate.spec", "worker"),
        ),
    ),
    Kind("argoproj.io", "Workflow", _argo("spec")),
    Kind("argoproj.io", "WorkflowTemplate", _argo("spec")),
    Kind("argoproj.io", "ClusterWorkflowTemplate", _argo("spec"), cluster_scoped=True),
    Kind("argoproj.io", "CronWorkflow", _argo("spec.workflowSpec")),
    Kind("batch.volcano.sh", "Job", (Site("spec.tasks[name].template.spec", "{}"),)),
    Kind("serving.kserve.io", "InferenceService", _KSERVE, knative=KSERVE_MODE),
    Kind("serving.kserve.io", "LLMInferenceService", _LLMISVC),
    Kind("serving.knative.dev", "Service", _TEMPLATE, knative=KNATIVE),
    Kind("serving.knative.dev", "Configuration", _TEMPLATE, knative=KNATIVE),
    Kind("serving.knative.dev", "Revision", (Site("spec"),), knative=KNATIVE),
    Kind("apps.nvidia.com", "NIMService", (), outside=("spec.resources",)),
)

_BY_KEY: dict[tuple[str, str], Kind] = {(k.group, k.kind): k for k in KINDS}


def api_group(api_version: str) -> str:
    """``apps/v1`` -> ``apps``; ``v1`` -> ``""``."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def lookup(api_version: str, kind: str) -> Kind | None:
    return _BY_KEY.get((api_group(api_version), kind))


def on_knative(entry: Kind | None, annotations: dict[str, str]) -> str | None:
    """Why this workload runs on Knative Serving, or None when it does not."""
    if entry is None or not entry.knative:
        return None
    if entry.knative == KNATIVE:
        return f"a Knative {entry.kind}"
    mode = annotations.get(KSERVE_MODE_ANNOTATION)
    if mode in KSERVE_RAW_MODES:
        return None
    if mode is not None:
        return f"a KServe {entry.kind} in {mode} mode ({KSERVE_MODE_ANNOTATION})"
    knative = sorted(a for a in annotations if a.startswith("autoscaling.knative.dev/"))
    if knative:
        return f"a KServe {entry.kind} with Knative annotations ({', '.join(knative)})"
    return (
        f"a KServe {entry.kind} in Serverless mode (KServe's default: no {KSERVE_MODE_ANNOTATION})"
    )
