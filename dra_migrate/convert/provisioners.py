"""Where converted pods land, and operators that read the GPU count of the pods they select.

``controllers.py`` holds what the cluster does *inside* a pod because it asks for an
extended resource (admission, schedulers, queues, operators deriving a field). This
module holds what happens *around* it, as tables with their upstream sources:

- ``LANDINGS``: node labels a pod selects that tie it to a node provisioner or a
  managed node pool that cannot give it DRA devices (Karpenter's pools, GKE's
  driver-version label and Autopilot's compute classes). A converted pod that selects one
  would stay Pending, or never get a node: it is held on the device plugin (DRA270,
  DRA271). Managed node pools and GKE custom compute classes: converted, with a note the
  plan turns into a prerequisite (DRA277, DRA285).
- ``HELD_KINDS``: kinds whose operator builds pods from the template and reads or
  writes their GPU count (KAITO, llmaz, KServe's LLMInferenceServiceConfig presets):
  held (DRA272, DRA273).
- ``SELECTED_BY``: labels an operator selects pods by and then reads their GPU count
  (aibrix's warm pool): the general shape "a label next to a GPU count"; held (DRA273).
- ``COMPONENT_KINDS`` (rules in ``convert/component_readers.py``): kinds whose operator
  reads a component's pod template GPU count when a field of the component turns a reader on (NVIDIA Dynamo: a component that spans
  nodes, the GPU Memory Service, checkpointing); held (DRA273), other components converted.
- ``MERGED_FROM``: kinds whose pods merge presets the object names (KServe's baseRefs):
  converted, with a warning that a preset's GPU survives the merge (DRA286). A preset in
  a namespace other than its operator's own is converted with a note (DRA284).
- ``OUTSIDE`` (``convert/outside_counts.py``, imported only where a GPU count stands
  outside every pod spec): custom resources that carry a GPU count outside any pod spec
  and the operator that reads it (OME runtimes, llmaz models, Karpenter NodePool
  limits): named by what reads it (DRA275, DRA276) instead of DRA212's generic "move it
  into a pod template", and counted in the inventory as refused.

docs/conversion.md ("Where converted pods land") renders the same facts for users;
tests/convert/test_provisioners.py holds a reduced real case per row.
"""

from __future__ import annotations

from dataclasses import dataclass

from yaml.nodes import MappingNode, Node

from dra_migrate.convert.controllers import NOTHING, Outcome
from dra_migrate.manifests import locate, trees
from dra_migrate.manifests.kinds import api_group
from dra_migrate.manifests.locate import PodSite, Workload
from dra_migrate.manifests.trees import get, get_path, items, scalar
from dra_migrate.report.findings import Finding, finding

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from dra_migrate.convert.asks import Ask
    from dra_migrate.convert.mapping import Settings
    from dra_migrate.repo.node_pools import NodePool

BRIDGE_WAY = (
    "or serve it from DRA devices with the bridge strategy (a DeviceClass with "
    "extendedResourceName keeps the extended resource)"
)


# --- node provisioners and managed node pools ---------------------------------------


@dataclass(frozen=True, slots=True)
class Landing:
    """A node label that ties a pod to a provisioner or pool without DRA scale-up."""

    key: str  # the label key; ending in "/": every key with that prefix
    code: str
    provisioner: str
    why: str  # why a pod with a claim would not land there
    fix: str  # the way out
    source: str
    fine: frozenset[str] = frozenset()  # values that do land on DRA nodes
    hold: bool = True  # False: a note (DRA277, DRA285), the pod is converted
    only: frozenset[str] = frozenset()  # the row is about these values alone (others: next row)

    def matches(self, key: str) -> bool:
        return key.startswith(self.key) if self.key.endswith("/") else key == self.key

    def applies(self, key: str, values: frozenset[str] | None) -> bool:
        """The row is about this selector: its key, and its values where it names some."""
        return self.matches(key) and (not self.only or bool(values and values <= self.only))


_KARPENTER_WHY = (
    "Karpenter launches nodes for pending pods from their requests; from v1.7.0 a pod with a "
    "ResourceClaim is skipped ('pod has Dynamic Resource Allocation requirements that are not "
    "yet supported by Karpenter') while --ignore-dra-requests is on, its default in every "
    "release up to v1.14.1 and on main; before v1.7.0, and with the flag off up to v1.13, it "
    "launches nodes without looking at the claim (a node without the device), and v1.14.0's "
    "DRA allocator finds devices only on instance types whose cloud provider describes them (aws/karpenter-provider-aws up to v1.14.1 and "
    "Azure/karpenter-provider-azure up to v1.14.2 describe none)"
)
_KARPENTER_FIX = (
    "keep it on the device plugin until the pool's nodes are static (consolidation and "
    "scale-up off) or Karpenter v1.14.0 or later runs with --ignore-dra-requests=false on a "
    "cloud provider that describes its instance types' DRA devices"
)
_KARPENTER_SOURCE = (
    "kubernetes-sigs/karpenter pkg/operator/options/options.go (IgnoreDRARequests), "
    "pkg/controllers/provisioning/scheduling/scheduler.go (DRAError), "
    "pkg/controllers/provisioning/provisioner.go, pkg/cloudprovider/dynamicresources.go, "
    "tags v1.7.0 to v1.14.1 and 2266468"
)
_GKE_DRA = (
    "GKE creates DRA GPU node pools with the managed driver off (gpu-driver-version=disabled, "
    "node label gke-no-default-nvidia-gpu-device-plugin=true)"
)

LANDINGS: tuple[Landing, ...] = (
    Landing(  # karpenter.sh/nodepool, capacity-type; provisioner-name before v0.32
        "karpenter.sh/",
        "DRA270",
        "Karpenter",
        _KARPENTER_WHY,
        _KARPENTER_FIX,
        _KARPENTER_SOURCE,
    ),
    # labels only Karpenter's cloud providers put on the nodes they launch
    Landing(
        "karpenter.k8s.aws/",
        "DRA270",
        "Karpenter (AWS provider)",
        _KARPENTER_WHY,
        _KARPENTER_FIX,
        _KARPENTER_SOURCE,
    ),
    Landing(
        "karpenter.azure.com/",
        "DRA270",
        "Karpenter (Azure provider, AKS node auto-provisioning)",
        _KARPENTER_WHY,
        _KARPENTER_FIX,
        _KARPENTER_SOURCE,
    ),
    Landing(
        "cloud.google.com/gke-gpu-driver-version",
        "DRA271",
        "GKE GPU driver installation",
        f"{_GKE_DRA}; a pod that selects a driver version GKE installs selects nodes "
        "that run GKE's device plugin and never publish DRA devices",
        "drop the selector and select the DRA node pool (its cloud.google.com/gke-nodepool "
        "or cloud.google.com/gke-accelerator label) when you convert",
        "GoogleCloudPlatform/kubernetes-engine-samples autoscaling/custom-compute-classes/dra/"
        "README.md (DRA node pools: gpu-driver-version=disabled, "
        "gke-no-default-nvidia-gpu-device-plugin=true) at 2b50365; "
        "GoogleCloudPlatform/container-engine-accelerators nvidia-driver-installer/cos/"
        "daemonset-preloaded.yaml (the installer for pools without GKE's driver runs where "
        "the label does not exist) at 992db81; cloud.google.com/kubernetes-engine/docs/how-to/"
        "set-up-dra",
        frozenset({"disabled"}),
    ),
    Landing(
        "cloud.google.com/compute-class",
        "DRA271",
        "a GKE Autopilot compute class",
        f"{_GKE_DRA} by hand; Autopilot creates the nodes of its compute classes from the "
        "pod's extended resource requests, with GKE's driver and device plugin, and creates "
        "no DRA node pools",
        "move the workload to a custom compute class, or a Standard node pool, whose node "
        "pools are created for DRA, and select that",
        "cloud.google.com/kubernetes-engine/docs/concepts/autopilot-compute-classes, "
        "about-built-in-compute-classes, docs/how-to/set-up-dra (limitations: node "
        "auto-provisioning, Autopilot)",
        only=frozenset(
            {"autopilot", "autopilot-spot", "Accelerator", "Balanced", "Performance", "Scale-Out"}
        ),
    ),
    Landing(  # any other class: a custom compute class, which GKE's own DRA sample uses
        "cloud.google.com/compute-class",
        "DRA285",
        "a GKE custom compute class",
        "GKE's DRA sample runs pods with claims on a custom compute class whose node pools "
        "were created by hand for DRA (gpu-driver-version=disabled, node labels "
        "cloud.google.com/compute-class, gke-no-default-nvidia-gpu-device-plugin=true, the "
        "NVIDIA DRA driver installed); node pools the class auto-creates get GKE's driver and "
        "device plugin (the sample: 'we cannot use the Node Autoprovisioning feature of CCC "
        "with DRA')",
        "create the class's GPU node pools for DRA and keep its nodePoolAutoCreation off before "
        "this wave",
        "GoogleCloudPlatform/kubernetes-engine-samples autoscaling/custom-compute-classes/dra "
        "(README.md, deployment.yaml), at 2b50365",
        hold=False,
    ),
)


# Managed node pools scaled by cluster-autoscaler (or the provider's own autoscaler):
# converted, with a note the plan turns into a prerequisite (migration/provisioning.py).
# cluster-autoscaler simulates claims only with --enable-dynamic-resource-allocation (off
# by default up to 1.34, locked on from 1.35.0: config/flags/flags.go), and a node group
# scales up from zero nodes for a pod with a claim only where its cloud provider's
# TemplateNodeInfo returns the ResourceSlices the node will publish
# (cluster-autoscaler/docs/dra_support.md); up to 1.36.1 only clusterapi (and CoreWeave's
# rack instances) do, AWS and Azure return none.
_CA = (
    "cluster-autoscaler handles pods with ResourceClaims only with "
    "--enable-dynamic-resource-allocation (off by default up to 1.34, locked on from 1.35.0)"
)
_FROM_ZERO = (
    "no ResourceSlices, so the group never scales up from zero nodes for a pod with a claim; "
    "from one node on, new nodes are templated on that node's slices"
)
_MIN_ONE = (
    "keep the group's minimum size at 1 or more, run cluster-autoscaler 1.35.0 or later (or "
    "--enable-dynamic-resource-allocation=true), and install the DRA driver on the group "
    "before this wave"
)
_CA_SOURCE = "kubernetes/autoscaler cluster-autoscaler/docs/dra_support.md, config/flags/flags.go"
LANDINGS += tuple(
    Landing(key, "DRA277", pool, why, fix, source, hold=False)
    for key, pool, why, fix, source in (
        (
            "eks.amazonaws.com/nodegroup",
            "an EKS managed node group",
            f"{_CA}; its AWS provider builds a template node for an empty group from the "
            "instance type (nvidia.com/gpu capacity) and the ASG tags "
            "k8s.io/cluster-autoscaler/node-template/resources/*, with " + _FROM_ZERO,
            _MIN_ONE,
            f"{_CA_SOURCE}, cloudprovider/aws/aws_manager.go (buildNodeFromTemplate), "
            "aws_cloud_provider.go (TemplateNodeInfo), at cluster-autoscaler-1.36.1 and 55c37cd",
        ),
        (
            "kubernetes.azure.com/agentpool",
            "an AKS node pool",
            f"AKS scales it with cluster-autoscaler's Azure provider: {_CA}; the provider "
            "builds a template node for an empty pool from the VM SKU (nvidia.com/gpu "
            "capacity), with " + _FROM_ZERO,
            "keep the pool's minimum count at 1 or more, check that the cluster-autoscaler "
            "release AKS runs simulates claims (1.35.0 or later), and install the DRA driver on "
            "the pool before this wave",
            f"{_CA_SOURCE}, cloudprovider/azure/azure_template.go, azure_scale_set.go and "
            "azure_vms_pool.go (TemplateNodeInfo), at cluster-autoscaler-1.36.1 and 55c37cd",
        ),
        (
            "cloud.google.com/gke-nodepool",
            "a GKE node pool",
            "GKE's autoscaler (not open source) scales it; GKE's DRA guide creates DRA node "
            "pools by hand and lists node auto-provisioning under its limitations",
            "create the pool for DRA (gpu-driver-version=disabled, the DRA driver installed) "
            "and keep it at one node or more unless GKE documents scale-up from zero with "
            "DRA",
            "cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra",
        ),
    )
)


def _selected(pod: MappingNode) -> list[tuple[str, frozenset[str] | None, Node]]:
    """(key, values or None for Exists, node) of every node label the pod requires
    (``locate.required_labels``): nodeSelector and the required node affinity's
    matchExpressions (In, Exists)."""
    out: list[tuple[str, frozenset[str] | None, Node]] = []
    for label, operator, values, node in locate.required_labels(pod):
        if operator == "Exists":
            out.append((label, None, node))
        elif operator == "In":
            out.append((label, frozenset(values), node))
        elif not operator:  # nodeSelector: one value, "" included
            out.append((label, frozenset(values or ("",)), node))
    return out


def _held(site: PodSite, node: Node, code: str, what: str, fix: str, path: str) -> Outcome:
    line, col = trees.position(node)
    where = f" ({site.path})" if site.label else ""
    return Outcome(
        findings=(
            finding(
                code,
                path,
                line,
                col,
                f"{site.workload.kind} {site.workload.name}{where}: {what}; the pod spec is "
                "held on the device plugin",
                f"{fix}; {BRIDGE_WAY}",
            ),
        ),
        refused=True,
    )


def landing(
    site: PodSite, path: str, pools: tuple[NodePool, ...] = (), served: frozenset[str] = frozenset()
) -> Outcome:
    """DRA270/DRA271: the pod selects nodes that a provisioner or pool without DRA
    scale-up makes, or the repository's Karpenter NodePools cap GPUs and the pod selects
    no other pool (held); DRA277: a managed node pool (a note for the plan). ``pools``:
    the repository's NodePools; ``served``: those draNodePools names as serving claims."""
    notes: list[Finding] = []
    selected = _selected(site.pod)
    pinned = _pinned(selected, pools, served)
    if pinned is not None:
        pool, node = pinned
        return _held(
            site,
            node,
            "DRA270",
            f"it selects the nodes of Karpenter NodePool {pool.name} ({pool.where}): "
            f"{_KARPENTER_WHY}",
            f"{_KARPENTER_FIX}; then list {pool.name} under draNodePools in .dra-migrate.yaml",
            path,
        )
    for key, values, node in selected:
        rule = next((r for r in LANDINGS if r.applies(key, values)), None)
        if rule is None or (values is not None and values and values <= rule.fine):
            continue
        if key == "karpenter.sh/nodepool" and values and values <= served:
            continue  # a pool the configuration says serves claims
        shown = f"{key}={','.join(sorted(values))}" if values else f"{key} (Exists)"
        if not rule.hold:
            line, col = trees.position(node)
            where = f" ({site.path})" if site.label else ""
            note = finding(
                rule.code,
                path,
                line,
                col,
                f"{site.workload.kind} {site.workload.name}{where} selects {shown}, "
                f"{rule.provisioner}: {rule.why}",
                rule.fix,
            )
            notes.append(note)
            continue
        return _held(
            site,
            node,
            rule.code,
            f"it selects {shown}, nodes of {rule.provisioner}: {rule.why}",
            rule.fix,
            path,
        )
    if notes:
        return Outcome(findings=tuple(notes[:1]))  # it selects a managed pool: not Karpenter's
    gpu_pools = [p for p in pools if p.gpu_limits and p.name not in served]
    elsewhere = any(
        r.matches(k) and r.code != "DRA270" for k, _v, _n in selected for r in LANDINGS
    )  # it selects nodes of a pool that is not Karpenter's (GKE's, a managed group)
    karpenter = any(k.startswith("karpenter.") for k, _v, _n in selected)
    if gpu_pools and not elsewhere and not karpenter:
        names = ", ".join(f"{p.name} ({p.where})" for p in gpu_pools)
        return _held(
            site,
            site.pod,
            "DRA270",
            f"the repository's Karpenter NodePools {names} cap "
            f"{', '.join(sorted({g for p in gpu_pools for g in p.gpu_limits}))}: Karpenter "
            f"launches the GPU nodes for pending pods, and {_KARPENTER_WHY}",
            f"{_KARPENTER_FIX}; then list the pools under draNodePools in .dra-migrate.yaml, "
            "or select a static pool",
            path,
        )
    return NOTHING


def _pinned(
    selected: list[tuple[str, frozenset[str] | None, Node]],
    pools: tuple[NodePool, ...],
    served: frozenset[str],
) -> tuple[NodePool, Node] | None:
    """The repository's NodePool whose nodes carry a label the pod requires."""
    for key, values, node in selected:
        if values is None or len(values) != 1:
            continue
        (value,) = values
        for pool in pools:
            if pool.name in served:
                continue
            by_name = key == "karpenter.sh/nodepool" and value == pool.name
            if by_name or (key, value) in pool.labels:
                return pool, node
    return None


# --- operators that build pods from the template and read their GPU count -----------


@dataclass(frozen=True, slots=True)
class Reader:
    """An operator that reads the GPU count of pods it selects or builds."""

    operator: str
    what: str  # kinds, labels or fields it reads
    reads: str  # what it does with the count
    does: str  # what dra-migrate does
    source: str
    code: str = "DRA273"
    fix: str = ""
    # namespaces whose objects the operator lends to every namespace: an object in another
    # namespace it names serves that namespace alone, and is converted with a note (DRA284)
    scope: tuple[str, ...] = ()


# kinds whose pod templates an operator reads or rewrites: "group/Kind" -> Reader
HELD_KINDS: dict[str, Reader] = {
    "kaito.sh/Workspace": Reader(
        "KAITO",
        "kaito.sh Workspace",
        "waits until every node of the Workspace has nvidia.com/gpu capacity in its status "
        "(the device plugin's) before it deploys, and builds preset pods with nvidia.com/gpu "
        "requests of the SKU's GPU count",
        "holds the Workspace (DRA272)",
        "kaito-project/kaito pkg/workspace/resource/node.go (node plugins ready), "
        "pkg/workspace/inference/preset_inferences.go",
        "DRA272",
        "keep KAITO's nodes on the device plugin until KAITO reads DRA devices",
    ),
    "kaito.sh/RAGEngine": Reader(
        "KAITO",
        "kaito.sh RAGEngine",
        "checks nvidia.com/gpu capacity on its nodes (CheckNvidiaPlugin) and builds pods "
        "with the SKU's nvidia.com/gpu count",
        "holds the RAGEngine (DRA272)",
        "kaito-project/kaito pkg/utils/nodes/nodes.go (CheckNvidiaPlugin), "
        "pkg/ragengine/controllers/preset_rag.go",
        "DRA272",
        "keep KAITO's nodes on the device plugin until KAITO reads DRA devices",
    ),
    "inference.llmaz.io/Service": Reader(
        "llmaz",
        "inference.llmaz.io Service workloadTemplate",
        "overwrites the model-runner container's requests and limits with the OpenModel "
        "flavor's limits (injectModelFlavor) when it builds the LeaderWorkerSet: a converted "
        "template gets nvidia.com/gpu back beside its claim, twice the GPUs",
        "holds the Service (DRA273)",
        "InftyAI/llmaz pkg/controller/inference/service_controller.go (injectModelFlavor)",
        "DRA273",
        "convert after llmaz stops writing the flavor's GPU limit (remove the GPU from the "
        "OpenModel's flavors first)",
    ),
    "serving.kserve.io/LLMInferenceServiceConfig": Reader(
        "KServe",
        "serving.kserve.io LLMInferenceServiceConfig",
        "looks a preset up by name in the LLMInferenceService's namespace first, then in its "
        "own namespace (POD_NAMESPACE, kserve by default), and strategic-merges it under the "
        "service's spec: a preset in KServe's namespace (or one whose namespace the manifest "
        "does not say) serves services of every namespace, and the ResourceClaimTemplate "
        "written beside it exists in one namespace only, so the pods of the others name a "
        "template their namespace lacks",
        "holds the preset (DRA273)",
        "kserve/kserve pkg/controller/v1alpha2/llmisvc/config_merge.go (getConfig, mergeSpecs, "
        "ReplaceVariables), managed_dra.go, pkg/constants/constants.go, at v0.20.0",
        "DRA273",
        "drop the GPU from the preset and give each LLMInferenceService its claim: KServe's "
        "Managed DRA (v0.20.0 and later: the annotation serving.kserve.io/exp-dra-device-class "
        "makes a ResourceClaimTemplate <name>-managed-dra in the service's namespace and adds "
        "it to every workload pod template), or a claim in the service's own template with a "
        "ResourceClaimTemplate in its namespace; or give the preset a namespace other than "
        "KServe's, whose services alone merge it",
        scope=("kserve", "kubeflow"),  # config/overlays/*/kustomization.yaml at v0.20.0
    ),
    **{
        f"sparkoperator.k8s.io/{kind}": Reader(
            "the Spark operator",
            f"sparkoperator.k8s.io {kind} driver and executor templates",
            "adds spec.driver.gpu and spec.executor.gpu (name, quantity) to the Spark "
            "container's limits in its pod webhook (addGPU), beside the template's claim",
            "holds the template (DRA273)",
            "kubeflow/spark-operator internal/webhook/sparkpod_defaulter.go (addGPU)",
            "DRA273",
            "keep the application on the device plugin until the Spark operator writes claims",
        )
        for kind in ("SparkApplication", "ScheduledSparkApplication")
    },
}

# labels (or annotations) an operator selects pods by, and reads their GPU count:
# (key, value or "" for any) -> Reader
SELECTED_BY: dict[tuple[str, str], Reader] = {
    ("claim.model.aibrix.ai/enabled", "true"): Reader(
        "aibrix ModelClaim warm pool",
        "pods labelled claim.model.aibrix.ai/enabled: true",
        "places a ModelClaim only on a warm pod whose nvidia.com/gpu count equals tensor x "
        "pipeline parallelism; a pod with 0 GPUs matches any parallelism "
        "(podSupportsVLLMParallelism)",
        "holds the warm pool (DRA273)",
        "vllm-project/aibrix pkg/controller/modelclaim/parallelism.go, pkg/constants/model.go",
        "DRA273",
        "keep the warm pool on the device plugin until aibrix counts claimed devices",
    ),
    **{
        (annotation, ""): Reader(
            "Kueue topology-aware scheduling",
            f"pod templates annotated {annotation}",
            "fits the pod set into a topology domain by the nodes' allocatable and the pods' "
            "requests (tas_topology_tree.go, tas_flavor_snapshot.go); DRA devices are not in "
            "allocatable and Kueue's DRA support has no topology part (pkg/dra), so after the "
            "rewrite the GPUs no longer decide the domain (or, with a deviceClassMappings "
            "name, no domain has them)",
            "holds the pod set (DRA273)",
            "kubernetes-sigs/kueue pkg/cache/scheduler/tas_topology_tree.go, "
            "tas_flavor_snapshot.go, apis/kueue/v1beta2/topology_types.go",
            "DRA273",
            "keep topology-aware pod sets on the device plugin until Kueue places DRA devices "
            "by topology",
        )
        for annotation in (
            "kueue.x-k8s.io/podset-required-topology",
            "kueue.x-k8s.io/podset-preferred-topology",
            "kueue.x-k8s.io/podset-slice-required-topology",
        )
    },
    ("pool.aibrix.ai/enabled", "true"): Reader(
        "aibrix ModelClaim warm pool (earlier label)",
        "pods labelled pool.aibrix.ai/enabled: true",
        "as claim.model.aibrix.ai/enabled: matches a ModelClaim's parallelism against the "
        "pod's nvidia.com/gpu count, any parallelism when it is 0",
        "holds the warm pool (DRA273)",
        "vllm-project/aibrix pkg/controller/modelclaim/parallelism.go, pkg/constants/model.go",
        "DRA273",
        "keep the warm pool on the device plugin until aibrix counts claimed devices",
    ),
}


# kinds whose operator reads a component's pod template GPU count when a field of the
# component turns a reader on (NVIDIA Dynamo): the rules are convert/component_readers.py,
# imported only for these kinds
COMPONENT_KINDS = frozenset(
    {"nvidia.com/DynamoGraphDeployment", "nvidia.com/DynamoComponentDeployment"}
)


# kinds whose pods an operator merges from presets the object names: "group/Kind" -> (the
# field that names them, the operator, what the merge keeps, the way out). The object's own
# pod template is converted; a GPU a preset sets survives the merge (DRA286).
MERGED_FROM: dict[str, tuple[tuple[str, ...], str, str, str]] = {
    "serving.kserve.io/LLMInferenceService": (
        ("spec", "baseRefs"),
        "KServe",
        "strategic-merges the presets it names under its spec (kserve/kserve "
        "pkg/controller/v1alpha2/llmisvc/config_merge.go mergeSpecs, at v0.20.0): a preset's "
        "resources.limits merge key by key, so an nvidia.com/gpu limit a preset sets stays in "
        "the pods beside the claim written here (this spec no longer overrides it), and a "
        "preset's claim of another name is allocated too",
        "drop the GPU from the presets named (KServe's own kserve-config-llm-* presets set none "
        "at v0.20.0), or convert them with this service: a claim of the same name (dra-migrate "
        "writes gpu) replaces theirs",
    ),
}


def _merged_from(site: PodSite, path: str) -> Finding | None:
    """DRA286: the object names presets its operator merges into its pods."""
    rule = MERGED_FROM.get(_kind(site.workload))
    if rule is None:
        return None
    field, operator, keeps, fix = rule
    refs = get_path(site.workload.root, *field)
    names = [n for n in (scalar(get(i, "name")) for i in items(refs)) if n]
    if refs is None or not names:
        return None
    line, col = trees.position(refs)
    return finding(
        "DRA286",
        path,
        line,
        col,
        f"{site.workload.kind} {site.workload.name} merges {', '.join(names)} "
        f"({'.'.join(field)}): {operator} {keeps}",
        fix,
    )


def _namespaced(site: PodSite, rule: Reader, namespace: str, node: Node, path: str) -> Outcome:
    """DRA284: a preset in a namespace of its own, merged into the services of that
    namespace alone (KServe's getConfig): converted, its template written beside it."""
    line, col = trees.position(node)
    where = f" ({site.path})" if site.label else ""
    return Outcome(
        findings=(
            finding(
                "DRA284",
                path,
                line,
                col,
                f"{site.workload.kind} {site.workload.name}{where} is in namespace {namespace}: "
                f"{rule.operator} merges it only into services of {namespace} (those of other "
                f"namespaces look in its own namespace: {', '.join(rule.scope)} unless "
                "kserveNamespaces says more), where the ResourceClaimTemplate written beside it "
                "is; converted",
                "KServe strategic-merges the service over the preset: a claim of the service "
                "with the same name (dra-migrate writes gpu) replaces the preset's, one of "
                "another name is allocated beside it, and a service that still asks for "
                "nvidia.com/gpu gets both: convert the services of the namespace that merge "
                "this preset with it (DRA286 names them); if KServe runs in this namespace, "
                "list it under kserveNamespaces in .dra-migrate.yaml",
            ),
        )
    )


def _kind(workload: Workload) -> str:
    return f"{api_group(workload.api_version)}/{workload.kind}"


def readers(
    site: PodSite, asks: list[Ask], path: str, shared: frozenset[str] = frozenset()
) -> Outcome:
    """DRA272/DRA273: an operator builds pods from this template, or selects them by a
    label, and reads their GPU count. ``shared``: namespaces the configuration adds to an
    operator's own (``kserveNamespaces``)."""
    if not asks:
        return NOTHING
    rule = HELD_KINDS.get(_kind(site.workload))
    if rule is not None:
        name = get_path(site.workload.root, "metadata", "name") or site.pod
        namespace = site.workload.namespace
        if rule.scope and namespace and namespace not in {*rule.scope, *shared}:
            return _namespaced(site, rule, namespace, name, path)
        return _held(site, name, rule.code, f"{rule.operator} {rule.reads}", rule.fix, path)
    component = None
    if _kind(site.workload) in COMPONENT_KINDS:
        from dra_migrate.convert import component_readers

        component = component_readers.reader(site)
    if component is not None:
        what = f"{component.operator} {component.reads}"
        return _held(site, site.pod, component.code, what, component.fix, path)
    merged = _merged_from(site, path)
    notes = (merged,) if merged is not None else ()
    labels = {**site.workload.labels, **site.template_labels}
    template = locate.node_at(site.workload.root, site.path.removesuffix("spec").rstrip("."))
    annotations = {
        **(trees.to_python(get_path(site.workload.root, "metadata", "annotations")) or {}),
        **(trees.to_python(get_path(template, "metadata", "annotations")) or {}),
    }
    for (key, value), rule in SELECTED_BY.items():
        got = labels.get(key, annotations.get(key))
        if got is not None and (not value or got == value):
            return _held(site, site.pod, rule.code, f"{rule.operator} {rule.reads}", rule.fix, path)
    return Outcome(findings=notes) if notes else NOTHING


def after_rewrite(
    site: PodSite, asks: list[Ask], path: str, before: Outcome, settings: Settings
) -> Outcome:
    """Every rule of this module for one pod spec, after ``controllers.after_rewrite``
    (``before``): the first that holds it wins; else ``before`` with the notes added."""
    held = readers(site, asks, path, settings.config.kserve_namespaces)
    if held.refused:
        return held
    lands = landing(site, path, settings.node_pools, settings.config.dra_node_pools)
    if lands.refused:
        return lands
    return Outcome(before.edits, before.findings + held.findings + lands.findings)
