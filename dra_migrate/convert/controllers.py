"""What the cluster does because a container asks for a GPU extended resource.

A conversion is correct only if the cluster places and runs the workload as it
did before. Parts of Kubernetes and of the operators that run GPU workloads
read the extended resource itself; once it is gone they behave differently.
This module holds those behaviours as tables, beside the kind table
(``kinds.py``), and the plan stage (``plan.py``) asks them about every pod
spec it converts:

- ``ADMISSION``: admission plugins that added something to the pod because it
  asked for an extended resource (the toleration of ExtendedResourceToleration);
  the conversion writes what they added.
- ``SCHEDULERS``: schedulers by ``schedulerName``, and whether they allocate
  ResourceClaims; a pod handed to one that does not would stay Pending.
- ``QUEUES``: queueing systems that counted the extended resource against a
  quota (Kueue); their quota stops counting the pod.
- ``DERIVED``: operators that derive a field from the GPU limit (KubeRay's
  ``num-gpus``, Kubeflow Trainer's processes per node, KServe's serving image),
  and those checked that derive nothing. Each row says what the conversion
  writes for it, or why it refuses, and the upstream source it was read from.

docs/conversion.md ("What the cluster does after the rewrite") renders the
same facts for users; tests/convert/test_controllers.py holds a golden case per row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from yaml.nodes import MappingNode, Node

from dra_migrate.convert.operations import AppendEntry, Edit, RemoveEntry, add_items
from dra_migrate.manifests import locate, trees
from dra_migrate.manifests.kinds import KSERVE, api_group
from dra_migrate.manifests.locate import APP, PodSite
from dra_migrate.manifests.trees import entries, get, get_path, items, scalar
from dra_migrate.report.findings import Finding, finding

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

    from dra_migrate.convert.asks import Ask
    from dra_migrate.convert.mapping import Config


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a rule makes of one pod spec: edits to add, findings, and whether the
    conversion must be refused (the pod spec stays on the device plugin)."""

    edits: tuple[Any, ...] = ()
    findings: tuple[Finding, ...] = ()
    refused: bool = False


NOTHING = Outcome()


# --- admission ----------------------------------------------------------------------

# ExtendedResourceToleration (kubernetes/kubernetes
# plugin/pkg/admission/extendedresourcetoleration/admission.go): for every extended
# resource in the requests of a container or init container (extended resources'
# requests default to their limits), it adds, through AddOrUpdateTolerationInPod,
#   {key: <resource name>, operator: Exists, effect: NoSchedule}
# GKE and EKS enable it and taint GPU nodes nvidia.com/gpu=present:NoSchedule, so a
# converted pod that no longer asks for the resource loses the toleration and is kept
# off every GPU node. A toleration without a matching taint changes nothing, so
# writing it is safe on every cluster.
TOLERATION_OPERATOR, TOLERATION_EFFECT = "Exists", "NoSchedule"


def _tolerated(pod: MappingNode, resource: str) -> bool:
    """The pod tolerates every ``resource`` taint with effect NoSchedule already: an
    ``Exists`` toleration of that key (or of every key), for NoSchedule or every effect."""
    for toleration in items(get(pod, "tolerations")):
        key = scalar(get(toleration, "key")) or ""
        operator = scalar(get(toleration, "operator")) or "Equal"
        effect = scalar(get(toleration, "effect")) or ""
        if operator == "Exists" and key in ("", resource) and effect in ("", TOLERATION_EFFECT):
            return True
    return False


def extended_resource_toleration(
    site: PodSite, asks: list[Ask], enabled: bool, path: str
) -> Outcome:
    """The tolerations ExtendedResourceToleration added for the converted resources."""
    if not enabled:
        return NOTHING
    resources = sorted({a.resource for a in asks if not _tolerated(site.pod, a.resource)})
    if not resources:
        return NOTHING
    values = tuple(
        {"key": r, "operator": TOLERATION_OPERATOR, "effect": TOLERATION_EFFECT} for r in resources
    )
    line, col = trees.position(site.pod)
    note = finding(
        "DRA224",
        path,
        line,
        col,
        f"{site.workload.kind} {site.workload.name}{_where(site)}: toleration "
        f"{', '.join(f'{r}:{TOLERATION_OPERATOR}:{TOLERATION_EFFECT}' for r in resources)} "
        "written, as the ExtendedResourceToleration admission plugin added it while the pod "
        "asked for the extended resource (GPU node pools are commonly tainted NoSchedule)",
        "a toleration without a matching taint changes nothing; extendedResourceToleration: "
        "false in .dra-migrate.yaml leaves tolerations as they are",
    )
    return Outcome(tuple(add_items(site.pod, "tolerations", values)), (note,))


# --- schedulers -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scheduler:
    name: str  # schedulerName
    product: str
    needs: str  # what it takes for pods with claims to be scheduled
    source: str


# The default scheduler (and any built on its framework with the DynamicResources
# plugin, GA in Kubernetes 1.34) allocates claims; these are the others users run GPU
# workloads on, each with what its releases need (read in their sources, 2026-12).
# `draSchedulers` in .dra-migrate.yaml names schedulers a cluster runs that allocate
# claims, and silences DRA225 for them.
SCHEDULERS: tuple[Scheduler, ...] = (
    Scheduler(
        "kai-scheduler",
        "NVIDIA KAI-Scheduler",
        "resource.k8s.io/v1 claims need v0.10.0 or later, and queues count DRA GPUs "
        "against their quota only from v0.13.0",
        "NVIDIA/KAI-Scheduler pkg/scheduler/plugins/dynamicresources, CHANGELOG.md",
    ),
    Scheduler(
        "volcano",
        "Volcano",
        "claims are allocated from v1.12.0 with predicate.DynamicResourceAllocationEnable: "
        "true in the scheduler configuration (off by default up to v1.14) and the "
        "DynamicResourceAllocation feature gate; capacity.DynamicResourceAllocationEnable "
        "counts them in queue capacity",
        "volcano-sh/volcano cmd/scheduler/app/options/options.go",
    ),
    Scheduler(
        "yunikorn",
        "Apache YuniKorn",
        "no release up to v1.9.0 allocates ResourceClaims; run these pods on the default scheduler",
        "apache/yunikorn-k8shim pkg/cache/context.go",
    ),
    Scheduler(
        "koord-scheduler",
        "Koordinator",
        "releases before v1.8.0 are built on Kubernetes 1.28, which has no resource.k8s.io/v1",
        "koordinator-sh/koordinator pkg/features/scheduler_features.go",
    ),
    Scheduler(
        "hami-scheduler",
        "HAMi",
        "HAMi schedules its vGPU extended resources; claims need the separate HAMi-DRA "
        "project (HAMi v2.8.0 and later)",
        "Project-HAMi/HAMi charts/hami/README.md",
    ),
    Scheduler(
        "runai-scheduler",
        "NVIDIA Run:ai",
        "check with the Run:ai release notes that it allocates ResourceClaims",
        "(closed source)",
    ),
)
_SCHEDULERS = {s.name: s for s in SCHEDULERS}
DEFAULT_SCHEDULER = "default-scheduler"


def scheduler(site: PodSite, known: frozenset[str], path: str) -> Outcome:
    """DRA225 when the pod's scheduler may not allocate ResourceClaims."""
    node = get(site.pod, "schedulerName")
    name = scalar(node) or ""
    if node is None or name in ("", DEFAULT_SCHEDULER) or name in known:
        return NOTHING
    entry = _SCHEDULERS.get(name)
    what = (
        f"{entry.product} ({name}): {entry.needs}"
        if entry is not None
        else f"{name!r}, a scheduler dra-migrate does not know; only a scheduler with the "
        "DynamicResources plugin allocates ResourceClaims"
    )
    line, col = trees.position(node)
    return Outcome(
        findings=(
            finding(
                "DRA225",
                path,
                line,
                col,
                f"{site.workload.kind} {site.workload.name}{_where(site)} is scheduled by "
                f"{what}; a claim no scheduler allocates keeps the pod Pending",
                "check that this scheduler allocates DRA claims, then list it under "
                "draSchedulers in .dra-migrate.yaml; or keep the workload on the device "
                "plugin (the bridge strategy) until it does",
            ),
        )
    )


# --- quota ----------------------------------------------------------------------------

# Kueue admits a job against its ClusterQueue's quota of what its pods request; a
# claim is counted only through resources.deviceClassMappings in Kueue's Configuration
# (kubernetes-sigs/kueue pkg/features/kube_features.go, pkg/dra/claims.go): feature gate
# DynamicResourceAllocation, alpha and off, v0.14 to v0.17; KueueDRAIntegration, beta
# and on, from v0.18, where a workload whose device class has no mapping is
# inadmissible. A mapping named after the old extended resource keeps its quota.
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def queue(site: PodSite, asks: list[Ask], path: str) -> Outcome:
    """DRA226 when a Kueue queue counted the GPUs of this pod spec."""
    workload = site.workload
    labels = {**workload.labels, **site.template_labels}
    name = labels.get(KUEUE_QUEUE_LABEL)
    if not name:
        return NOTHING
    node = get_path(workload.root, "metadata", "labels", KUEUE_QUEUE_LABEL)
    line, col = trees.position(node) if node is not None else workload.position
    resources = ", ".join(sorted({a.resource for a in asks}))
    return Outcome(
        findings=(
            finding(
                "DRA226",
                path,
                line,
                col,
                f"{workload.kind} {workload.name} is queued by Kueue (LocalQueue {name!r}), "
                f"whose ClusterQueue counted its {resources} against a quota; after the "
                "rewrite the pods ask for ResourceClaims, which Kueue counts only through "
                "resources.deviceClassMappings in its Configuration (before v0.18 they are not "
                "counted at all; from v0.18, KueueDRAIntegration, a workload whose device class "
                "has no mapping is inadmissible)",
                f"map the device class to the name {resources.split(', ')[0]} in "
                "resources.deviceClassMappings (name: the quota key, deviceClassNames: the "
                "class), so the ClusterQueue's existing quota keeps counting; with Kueue "
                "v0.14 to v0.17 turn on its DynamicResourceAllocation feature gate",
            ),
        )
    )


# --- operators that derive a field from the GPU limit ---------------------------------


def _group_gpus(site: PodSite, asks: list[Ask]) -> int:
    """GPUs of the Ray container of a KubeRay group: its first app container."""
    ray = next((c for c in site.containers if c.role == APP), None)
    return sum(a.count for a in asks if a.container is ray) if ray is not None else 0


def ray_num_gpus(site: PodSite, asks: list[Ask], path: str) -> Outcome:
    """KubeRay: ``num-gpus`` in ``rayStartParams`` from the Ray container's GPU limit."""
    group = site.group
    gpus = _group_gpus(site, asks)
    if group is None or gpus == 0:
        return NOTHING
    params = get(group, "rayStartParams")
    if get(params, "num-gpus") is not None:
        return NOTHING
    line, col = trees.position(group)
    note = finding(
        "DRA209",
        path,
        line,
        col,
        f"KubeRay read the GPU count of {site.label or 'the group'} from the "
        f"GPU limit; rayStartParams num-gpus is set to {gpus} to keep Ray's view",
    )
    edits: list[Edit]
    if isinstance(params, MappingNode):
        edits = [AppendEntry(params, "num-gpus", str(gpus))]
    else:
        edits = [
            RemoveEntry(group, k) for name, k, _v in entries(group) if name == "rayStartParams"
        ]
        edits.append(AppendEntry(group, "rayStartParams", {"num-gpus": str(gpus)}))
    return Outcome(tuple(edits), (note,))


def _refused(site: PodSite, node: Node, what: str, fix: str, path: str) -> Outcome:
    """DRA228: the pod spec stays on the device plugin, with the reason and the way out."""
    line, col = trees.position(node)
    return Outcome(
        findings=(
            finding(
                "DRA228",
                path,
                line,
                col,
                f"{site.workload.kind} {site.workload.name}{_where(site)}: {what}; the pod spec "
                "is left on the device plugin",
                f"{fix}; or keep it on the device plugin and serve it from DRA devices with the "
                "bridge strategy (a DeviceClass with extendedResourceName)",
            ),
        ),
        refused=True,
    )


def _wrote(site: PodSite, node: Node, what: str, edits: list[Edit], path: str) -> Outcome:
    line, col = trees.position(node)
    note = finding(
        "DRA229",
        path,
        line,
        col,
        f"{site.workload.kind} {site.workload.name}{_where(site)}: {what}",
    )
    return Outcome(tuple(edits), (note,))


# Kubeflow Trainer (kubeflow/trainer pkg/runtime/runtime.go ExtractResourcePerNodeFromRuntime,
# GetNumGPUPerNode; plugins torch, torchtune, mpi, xgboost, flux): the GPU count of the
# container "node" of the replicated job "node" (or the one labelled as the trainer step)
# drives the processes per node.
TRAINER_NODE = "node"
TRAINER_STEP = ("trainer.kubeflow.org/trainjob-ancestor-step", "trainer")


def trainer_processes(site: PodSite, asks: list[Ask], path: str) -> Outcome:
    """Kubeflow Trainer runtimes: what the trainer derives from the node's GPU count."""
    job = locate.node_at(site.workload.root, site.path.removesuffix(".spec.template.spec"))
    labels = trees.to_python(get_path(job, "metadata", "labels")) or {}
    if site.label != TRAINER_NODE and labels.get(TRAINER_STEP[0]) != TRAINER_STEP[1]:
        return NOTHING
    node = next((c for c in site.containers if c.name == TRAINER_NODE), None)
    gpus = sum(a.count for a in asks if a.container is node)
    if node is None or gpus == 0:
        return NOTHING
    policy = get_path(site.workload.root, "spec", "mlPolicy")
    torch, mpi = get(policy, "torch"), get(policy, "mpi")
    if torch is not None:
        procs = scalar(get(torch, "numProcPerNode"))
        if procs is not None and procs.isdigit():
            return NOTHING  # processes and torchtune recipe follow the number given
        return _refused(
            site,
            torch,
            f"Kubeflow Trainer derives torchrun's processes per node (numProcPerNode "
            f"{procs or 'auto'}) and the torchtune recipe from the node container's GPU count, "
            f"and without the limit a {gpus}-GPU node would run one process per CPU",
            f"set numProcPerNode: {gpus} in the TrainJobs that use this runtime "
            "(spec.trainer.numProcPerNode, Trainer v2.2 and later) or in mlPolicy.torch "
            "(v2.1 and earlier), then convert",
            path,
        )
    if mpi is not None:
        procs_node = get(mpi, "numProcPerNode")
        if gpus == 1 or scalar(procs_node) not in (None, "1"):
            return NOTHING
        edits: list[Edit] = [
            RemoveEntry(mpi, k) for name, k, _v in entries(mpi) if name == "numProcPerNode"
        ]
        edits.append(AppendEntry(mpi, "numProcPerNode", gpus))
        return _wrote(
            site,
            mpi,
            f"Kubeflow Trainer raised mlPolicy.mpi.numProcPerNode (MPI slots) from 1 to the "
            f"node container's GPU count; numProcPerNode: {gpus} is written to keep it",
            edits,
            path,
        )
    for plugin in ("xgboost", "flux"):
        if get(policy, plugin) is not None:
            return _refused(
                site,
                get(policy, plugin) or site.pod,
                f"Kubeflow Trainer's {plugin} plugin sizes the job from the node container's "
                "GPU count",
                "move the runtime to DRA when its plugin reads the claim",
                path,
            )
    return NOTHING


# KServe (kserve/kserve pkg/utils/utils.go IsGPUEnabled: limits nvidia.com/gpu or
# nvidia.com/mig-*; pkg/controller/v1beta1/inferenceservice/utils/utils.go UpdateImageTag):
# with a GPU limit the serving runtimes below get the "-gpu" image tag, unless the image
# is pinned (runtimeVersion, a digest, a tag ending in -gpu); KServe v0.20 gives the vLLM
# runtime its "-cpu" image without one. Old-style tensorflow and pytorch predictors are
# also held by the webhook: a -gpu runtimeVersion needs the GPU limit.
KSERVE_GPU_RUNTIMES = {
    "kserve-tensorflow-serving": "tensorflow",
    "kserve-torchserve": "pytorch",
    "kserve-huggingfaceserver": "huggingface",
    "kserve-vllmserver": "vllm",
}
KSERVE_WEBHOOK_FIELDS = ("tensorflow", "pytorch")
KSERVE_GKE_ACCELERATOR = "serving.kserve.io/gke-accelerator"
NVIDIA_GPU = "nvidia.com/gpu"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


def kserve_image(site: PodSite, asks: list[Ask], path: str) -> Outcome:
    """KServe InferenceService components: the image and node selector it derives."""
    if site.style != KSERVE:
        return NOTHING
    if site.label.endswith("worker") or get(site.pod, "workerSpec") is not None:
        return _refused(
            site,
            site.pod,
            "KServe's multi-node predictor sizes its Ray cluster from the GPU requests and "
            "writes nvidia.com/gpu limits back into its deployments",
            "keep the multi-node predictor on the device plugin until KServe reads claims",
            path,
        )
    for container in dict.fromkeys(a.container for a in asks):
        if container.field in KSERVE_WEBHOOK_FIELDS:
            return _refused(
                site,
                container.node,
                f"KServe's webhook ties the {container.field} predictor's -gpu runtimeVersion "
                "to the GPU limit, and without either it runs the CPU image",
                f"move the predictor to spec.predictor.model with modelFormat {container.field} "
                "and a pinned GPU image, then convert",
                path,
            )
        fmt = _kserve_format(container)
        if fmt is None or _pinned(container.node):
            continue
        return _refused(
            site,
            container.node,
            f"KServe picks the {fmt} serving image from the GPU limit (the -gpu tag"
            + (", and its -cpu vLLM image without one" if fmt == "vllm" else "")
            + "), so without the limit the pod would run the CPU image",
            "pin the image first (runtimeVersion set to the runtime's GPU tag, or an image "
            "by digest or with a -gpu tag), then convert",
            path,
        )
    if not any(a.resource == NVIDIA_GPU for a in asks):
        return NOTHING  # the injector looks at nvidia.com/gpu only
    return _gke_accelerator(site, path)


def _kserve_format(container: Any) -> str | None:
    """The GPU-tagged runtime a KServe container runs, or None."""
    if container.field == "huggingface":
        return "huggingface"
    if container.field != "model":
        return None
    runtime = scalar(get(container.node, "runtime"))
    if runtime is not None:
        return KSERVE_GPU_RUNTIMES.get(runtime)
    fmt = scalar(get_path(container.node, "modelFormat", "name")) or ""
    return fmt if fmt in KSERVE_GPU_RUNTIMES.values() else None


def _pinned(container: Node) -> bool:
    if scalar(get(container, "runtimeVersion")):
        return True  # the tag is replaced by it, whatever the GPU limit
    image = scalar(get(container, "image")) or ""
    tag = image.rpartition("/")[2].partition(":")[2]
    return "@sha256:" in image or tag.endswith("-gpu")


def _gke_accelerator(site: PodSite, path: str) -> Outcome:
    """KServe's pod webhook (accelerator_injector.go) adds the GKE accelerator node
    selector of its annotation only to pods with an nvidia.com/gpu limit: written."""
    value = get_path(site.workload.root, "metadata", "annotations", KSERVE_GKE_ACCELERATOR)
    selector = get(site.pod, "nodeSelector")
    if scalar(value) is None or get(selector, GKE_ACCELERATOR_LABEL) is not None:
        return NOTHING
    accelerator = scalar(value) or ""
    edits: list[Edit] = (
        [AppendEntry(selector, GKE_ACCELERATOR_LABEL, accelerator)]
        if isinstance(selector, MappingNode)
        else [AppendEntry(site.pod, "nodeSelector", {GKE_ACCELERATOR_LABEL: accelerator})]
    )
    return _wrote(
        site,
        value,
        f"KServe added nodeSelector {GKE_ACCELERATOR_LABEL}: {accelerator} from its "
        f"{KSERVE_GKE_ACCELERATOR} annotation to pods with an nvidia.com/gpu limit; it is "
        "written, so the pods still land on those nodes",
        edits,
        path,
    )


@dataclass(frozen=True, slots=True)
class Derivation:
    """One operator behaviour that depends on the GPU limit."""

    controller: str
    kinds: tuple[str, ...]  # "group/Kind", or a shape ("headGroupSpec/workerGroupSpecs")
    reads: str  # what it derives from the GPU limit
    does: str  # what the conversion does about it
    source: str  # the upstream source read
    applies: Callable[[PodSite], bool]
    check: Callable[[PodSite, list[Any], str], Outcome] | None = None


def _kind_in(*names: str) -> Callable[[PodSite], bool]:
    wanted = frozenset(names)

    def applies(site: PodSite) -> bool:
        workload = site.workload
        return f"{api_group(workload.api_version)}/{workload.kind}" in wanted

    return applies


def _where(site: PodSite) -> str:
    return f" ({site.path})" if site.label else ""


def _is_ray_group(site: PodSite) -> bool:
    return site.group is not None


DERIVED: tuple[Derivation, ...] = (
    Derivation(
        "KServe",
        ("serving.kserve.io/InferenceService",),
        "the serving image (the -gpu tag of the TFServing, TorchServe, Hugging Face and vLLM "
        "runtimes), the GKE accelerator node selector of its annotation, the multi-node "
        "predictor's size",
        "converts a component whose image is pinned (runtimeVersion, digest, -gpu tag) and "
        "writes the node selector (DRA229); refuses the rest (DRA228)",
        "kserve/kserve pkg/controller/v1beta1/inferenceservice/utils/utils.go (UpdateImageTag), "
        "pkg/webhook/admission/pod/accelerator_injector.go",
        _kind_in("serving.kserve.io/InferenceService"),
        kserve_image,
    ),
    Derivation(
        "Kubeflow Trainer",
        ("trainer.kubeflow.org/TrainingRuntime", "trainer.kubeflow.org/ClusterTrainingRuntime"),
        "torchrun's processes per node and the torchtune recipe (numProcPerNode auto), MPI "
        "slots (mlPolicy.mpi.numProcPerNode 1), xgboost and flux sizes, from the node "
        "container's GPU count",
        "writes mlPolicy.mpi.numProcPerNode (DRA229); converts a torch runtime whose "
        "numProcPerNode is a number; refuses auto and the xgboost and flux plugins (DRA228)",
        "kubeflow/trainer pkg/runtime/framework/plugins/{torch,mpi}/ (GetNumGPUPerNode)",
        _kind_in(
            "trainer.kubeflow.org/TrainingRuntime", "trainer.kubeflow.org/ClusterTrainingRuntime"
        ),
        trainer_processes,
    ),
    Derivation(
        "KubeRay",
        (
            "ray.io/RayCluster",
            "ray.io/RayJob",
            "ray.io/RayService",
            "headGroupSpec/workerGroupSpecs",
        ),
        "rayStartParams num-gpus (Ray's GPU resource of the node) from the Ray container's "
        "GPU limit, when num-gpus is not set",
        "writes num-gpus with the old count (DRA209)",
        "ray-project/kuberay ray-operator/controllers/ray/common/pod.go (addWellKnownAcceleratorResources)",
        _is_ray_group,
        ray_num_gpus,
    ),
    # checked, and nothing is derived from the GPU limit: converted as they are
    Derivation(
        "NVIDIA NIM Operator",
        ("apps.nvidia.com/NIMService",),
        "adds nvidia.com/gpu limits of the profile's tensor parallelism unless spec.resources "
        "sets them or spec.draResources is given (v3.0.0)",
        "nothing to write: spec.resources is never converted (DRA275 names the way: "
        "spec.draResources)",
        "NVIDIA/k8s-nim-operator internal/controller/platform/standalone/nimservice.go",
        _kind_in("apps.nvidia.com/NIMService"),
    ),
    Derivation(
        "LeaderWorkerSet, JobSet",
        ("leaderworkerset.x-k8s.io/LeaderWorkerSet", "jobset.x-k8s.io/JobSet"),
        "nothing (no GPU resource name appears outside their tests)",
        "converts as usual",
        "kubernetes-sigs/lws, kubernetes-sigs/jobset",
        _kind_in("leaderworkerset.x-k8s.io/LeaderWorkerSet", "jobset.x-k8s.io/JobSet"),
    ),
    Derivation(
        "Volcano",
        ("batch.volcano.sh/Job",),
        "the PodGroup's minResources, the sum of the tasks' pod requests (every resource), "
        "which the enqueue check holds against the queue: without the GPUs it stops waiting "
        "for GPU room",
        "converts as usual (the scheduler allocates the claim: DRA225's row)",
        "volcano-sh/volcano pkg/controllers/job/job_controller_actions.go (calcPGMinResources)",
        _kind_in("batch.volcano.sh/Job"),
    ),
    Derivation(
        "Argo Workflows",
        (
            "argoproj.io/Workflow",
            "argoproj.io/WorkflowTemplate",
            "argoproj.io/ClusterWorkflowTemplate",
            "argoproj.io/CronWorkflow",
        ),
        "resourcesDuration: every resource of the pods, summed for cost accounting",
        "converts as usual; GPU time leaves resourcesDuration",
        "argoproj/argo-workflows util/resource/duration.go (DurationForPod)",
        _kind_in(
            "argoproj.io/Workflow",
            "argoproj.io/WorkflowTemplate",
            "argoproj.io/ClusterWorkflowTemplate",
            "argoproj.io/CronWorkflow",
        ),
    ),
    Derivation(
        "Kubeflow training-operator v1, MPI Operator v2",
        ("kubeflow.org/PyTorchJob", "kubeflow.org/MPIJob"),
        "nothing: PET_NPROC_PER_NODE comes from spec.nprocPerNode, slotsPerWorker from the spec",
        "converts as usual",
        "kubeflow/training-operator pkg/controller.v1/pytorch/envvar.go, kubeflow/mpi-operator",
        _kind_in("kubeflow.org/PyTorchJob", "kubeflow.org/MPIJob"),
    ),
    Derivation(
        "KServe LLMInferenceService",
        ("serving.kserve.io/LLMInferenceService",),
        "nothing: parallelism comes from spec.parallelism",
        "converts as usual",
        "kserve/kserve pkg/controller/v1alpha2/llmisvc",
        _kind_in("serving.kserve.io/LLMInferenceService"),
    ),
)


def derived(site: PodSite, asks: list[Ask], path: str) -> Outcome:
    """Every ``DERIVED`` rule that applies to the pod spec, combined."""
    edits: list[Any] = []
    found: list[Finding] = []
    refused = False
    for rule in DERIVED:
        if rule.check is None or not rule.applies(site):
            continue
        outcome = rule.check(site, asks, path)
        edits.extend(outcome.edits)
        found.extend(outcome.findings)
        refused = refused or outcome.refused
    if refused:  # nothing is written after all
        return Outcome((), tuple(f for f in found if not f.spec.writes), True)
    return Outcome(tuple(edits), tuple(found))


def after_rewrite(site: PodSite, asks: list[Ask], config: Config, path: str) -> Outcome:
    """What the rewrite of this pod spec must write besides the claims, and what the
    cluster would do differently: every table of this module, asked once."""
    rules = derived(site, asks, path)
    if rules.refused:
        return rules
    parts = (
        rules,
        extended_resource_toleration(site, asks, config.extended_resource_toleration, path),
        scheduler(site, config.dra_schedulers, path),
        queue(site, asks, path),
    )
    return Outcome(
        tuple(e for p in parts for e in p.edits), tuple(f for p in parts for f in p.findings)
    )
