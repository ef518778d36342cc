"""What the migration plan says about the provisioners, managed node pools and operators
that convert/provisioners.py finds: a risk a finding code, the prerequisites of stage 2
(each provisioner and operator named, with where the repository has it), and what
cluster-autoscaler and the managed node groups need for DRA scale-up.

Kept apart from convert/provisioners.py so that a conversion imports only the rules.
"""

from __future__ import annotations

from dra_migrate.convert.outside_counts import OUTSIDE
from dra_migrate.convert.provisioners import HELD_KINDS, SELECTED_BY
from dra_migrate.report.findings import Finding

# What the plan says about each code of this module: (title, why, prerequisite or "").
PLAN_NOTES: dict[str, tuple[str, str, str]] = {
    "DRA270": (
        "Pods pinned to Karpenter node pools",
        "Karpenter does not provision nodes for pods with ResourceClaims while "
        "--ignore-dra-requests is on (its default up to v1.14; v1.14.0 adds a DRA allocator "
        "behind it, and the cloud provider must describe the devices of its instance types). "
        "These pods stay on the device plugin until their pool is static or Karpenter "
        "accounts for claims.",
        "Karpenter: --ignore-dra-requests=false (v1.14.0 or later) and a cloud provider that "
        "describes DRA devices per instance type, or static GPU node pools, before pods with "
        "claims run on Karpenter's nodes",
    ),
    "DRA271": (
        "Pods that select GKE's managed driver or a compute class",
        "GKE's DRA node pools run without the managed driver (gpu-driver-version=disabled); "
        "a pod that selects a driver version or a compute class never lands on one, and node "
        "auto-provisioning does not create DRA node pools.",
        "GKE: a Standard node pool created with gpu-driver-version=disabled and the NVIDIA "
        "DRA driver installed; node auto-provisioning and Autopilot do not provide DRA GPUs",
    ),
    "DRA272": (
        "KAITO Workspaces",
        "KAITO waits for nvidia.com/gpu capacity (the device plugin's) on its nodes and "
        "builds pods that ask for nvidia.com/gpu: its workloads stay on the device plugin.",
        "KAITO: keep the device plugin on the nodes KAITO provisions",
    ),
    "DRA273": (
        "Operators that read the GPU count of the pods they build or select",
        "aibrix's warm pool, llmaz's Service controller and KServe's LLMInferenceServiceConfig "
        "presets read or write nvidia.com/gpu of the pods: they stay on the device plugin "
        "until the operator reads claims.",
        "",
    ),
    "DRA275": (
        "GPU counts operators read outside pod specs",
        "OME runtimes and llmaz models hold the GPU count the operator puts into pods and "
        "derives settings from (PARALLELISM_SIZE, the model-runner's limits): left as they are.",
        "",
    ),
    "DRA278": (
        "KubeAI resource profiles",
        "KubeAI builds its model pods from a resource profile's requests and limits times a "
        "Model's multiple; it writes no ResourceClaims, so its pods keep asking for the "
        "extended resource whatever the chart's way.",
        "KubeAI: a DeviceClass with extendedResourceName for the profiles' resources (the "
        "bridge: Kubernetes 1.36, or 1.34 and 1.35 with DRAExtendedResource) or the device "
        "plugin on the nodes the profiles select",
    ),
    "DRA279": (
        "KubeAI Models",
        "A Model asks for GPUs through its resource profile: the KubeAI operator builds the "
        "pods, with the extended resource; nothing in the Model converts.",
        "KubeAI: serve the Models' pods as its resource profiles are served (the bridge, or "
        "the device plugin)",
    ),
    "DRA276": (
        "Karpenter NodePools with GPU limits",
        "A NodePool's spec.limits caps the GPUs of the nodes it launches; it is not a request. "
        "Karpenter launches nodes for device-plugin pods only (DRA270).",
        "Karpenter NodePools with nvidia.com/gpu limits: keep their nodes on the device plugin, "
        "or give DRA workloads a static node pool",
    ),
}

# cluster-autoscaler and the managed node groups, for the plan's prerequisites: what each
# does for pods with ResourceClaims, from its sources and docs.
AUTOSCALERS: tuple[tuple[str, str], ...] = (
    (
        "cluster-autoscaler",
        "handles ResourceClaims in its scale-up simulation only with "
        "--enable-dynamic-resource-allocation: off by default where main.go defines it, "
        "locked to true (the flag deprecated) in later releases; check the release you run "
        "(kubernetes/autoscaler cluster-autoscaler/main.go, config/flags/flags.go)",
    ),
    (
        "EKS managed node groups, AKS node pools",
        "scale through cluster-autoscaler (EKS: self-managed; AKS: the managed autoscaler): "
        "DRA scale-up needs the cluster-autoscaler release and flag above; dra-migrate did not "
        "read the providers' sources for how a node group's devices are templated",
    ),
)


def prerequisites(findings: list[Finding]) -> list[tuple[str, str, str]]:
    """The plan's prerequisites (topic, requirement, detail) for the provisioners, pools
    and operators the run found, each with where the repository names them."""
    where: dict[str, list[str]] = {}
    for f in findings:
        if f.code in PLAN_NOTES or f.code == "DRA277":
            where.setdefault(f.code, []).append(f"{f.path}:{f.line}:{f.col}")
    out = []
    for code, (title, _why, requirement) in PLAN_NOTES.items():
        if code in where and requirement:
            out.append((title, requirement, "named at " + ", ".join(dict.fromkeys(where[code]))))
    if "DRA277" in where:
        spots = ", ".join(dict.fromkeys(where["DRA277"]))
        for name, detail in AUTOSCALERS:
            out.append((f"Autoscaler: {name}", detail, f"pools selected at {spots}"))
    # each operator that reads the count, by the name its findings carry
    named: dict[str, tuple[str, list[str]]] = {}
    for f in findings:
        if f.code not in ("DRA272", "DRA273", "DRA275"):
            continue
        for operator, fix in _operators():
            if f": {operator} " in f.message:
                named.setdefault(operator, (fix, []))[1].append(f"{f.path}:{f.line}:{f.col}")
                break
    for operator, (fix, spots_of) in named.items():
        spots = ", ".join(dict.fromkeys(spots_of))
        out.append((f"Operator: {operator}", fix, f"held at {spots}"))
    return out


def _operators() -> tuple[tuple[str, str], ...]:
    """(operator, way out) of every reader, longest name first (a name that holds another
    is tried first); an operator with several rules gets one general way out."""
    fixes: dict[str, set[str]] = {}
    for r in (*HELD_KINDS.values(), *SELECTED_BY.values()):
        fixes.setdefault(r.operator, set()).add(r.fix)
    for o in OUTSIDE:
        if o.ask:
            fixes.setdefault(o.operator, set()).add(o.fix)
    return tuple(
        (
            name,
            next(iter(ways))
            if len(ways) == 1
            else f"keep these workloads on the device "
            f"plugin until {name} reads ResourceClaims (each finding says what it reads)",
        )
        for name, ways in sorted(fixes.items(), key=lambda item: -len(item[0]))
    )
