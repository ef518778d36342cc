"""What the migration plan says about the provisioners, managed node pools and operators
that convert/provisioners.py finds: a risk a finding code, the prerequisites of stage 2
(each provisioner and operator named, with where the repository has it), and what
cluster-autoscaler and the managed node groups need for DRA scale-up (from the Landing rows
of convert/provisioners.py, one prerequisite a kind of pool the run selects).

Kept apart from convert/provisioners.py so that a conversion imports only the rules.
"""

from __future__ import annotations

from dra_migrate.convert.outside_counts import OUTSIDE
from dra_migrate.convert.provisioners import HELD_KINDS, LANDINGS, SELECTED_BY
from dra_migrate.report.findings import Finding

# What the plan says about each code of this module: (title, why, prerequisite or "").
PLAN_NOTES: dict[str, tuple[str, str, str]] = {
    "DRA270": (
        "Pods pinned to Karpenter node pools",
        "Karpenter skips pods with ResourceClaims while --ignore-dra-requests is on (from "
        "v1.7.0; its default up to v1.14.1 and on main); with the flag off it launches nodes "
        "without looking at the claim up to v1.13, and v1.14.0's DRA allocator needs a cloud "
        "provider that describes its instance types' devices (aws/karpenter-provider-aws "
        "up to v1.14.1 and Azure/karpenter-provider-azure up to v1.14.2 describe none). These pods stay on the device plugin until their pool "
        "is static or Karpenter accounts for claims.",
        "Karpenter: v1.14.0 or later with --ignore-dra-requests=false (Helm value "
        "settings.ignoreDRARequests: false) and a cloud provider that describes DRA devices per "
        "instance type, or static GPU node pools, before pods with claims run on Karpenter's "
        "nodes",
    ),
    "DRA271": (
        "Pods that select GKE's managed driver or an Autopilot compute class",
        "GKE's DRA node pools run without the managed driver (gpu-driver-version=disabled); "
        "a pod that selects a driver version GKE installs or an Autopilot compute class never "
        "lands on one, and node auto-provisioning does not create DRA node pools.",
        "GKE: a Standard node pool (or a custom compute class over such pools) created with "
        "gpu-driver-version=disabled and the NVIDIA DRA driver installed; node "
        "auto-provisioning and Autopilot do not provide DRA GPUs",
    ),
    "DRA285": (
        "Pods that select a GKE custom compute class",
        "GKE's DRA sample runs pods with claims on a custom compute class whose node pools were "
        "created by hand for DRA; node pools the class auto-creates get GKE's driver and device "
        "plugin.",
        "GKE custom compute classes: create their GPU node pools with "
        "gpu-driver-version=disabled, the node label gke-no-default-nvidia-gpu-device-plugin=true "
        "and the NVIDIA DRA driver, and keep the class's nodePoolAutoCreation off",
    ),
    "DRA284": (
        "KServe presets converted in a namespace of their own",
        "KServe merges a preset only into services of its namespace when it is not in KServe's "
        "own: converted, with its ResourceClaimTemplate beside it; the services that merge it "
        "are converted with it (DRA286 names those that still merge presets).",
        "",
    ),
    "DRA286": (
        "KServe services that merge presets",
        "KServe strategic-merges the presets an LLMInferenceService names (baseRefs) under its "
        "spec: a GPU limit a preset sets stays in the converted service's pods beside its claim.",
        "KServe presets that converted LLMInferenceServices name: drop their nvidia.com/gpu, or "
        "convert them in the services' namespace with the services",
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
        "A NodePool's spec.limits caps what its nodes' capacity adds up to; it is not a "
        "request. A node whose GPUs a DRA driver serves reports no nvidia.com/gpu capacity "
        "once initialized, so a GPU limit stops counting it. Karpenter launches nodes for "
        "device-plugin pods only (DRA270).",
        "Karpenter NodePools with nvidia.com/gpu limits: keep their nodes on the device plugin; "
        "a pool that moves to DRA is capped by limits.nodes (every node counts one), not by "
        "its GPU limit",
    ),
}


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
    # each managed pool kind the run selects, with what its autoscaler needs for claims
    # (the Landing rows of convert/provisioners.py, from the autoscalers' sources)
    for pool in (r for r in LANDINGS if r.code == "DRA277"):
        selected = [
            f"{f.path}:{f.line}:{f.col}"
            for f in findings
            if f.code == "DRA277" and f" selects {pool.key}" in f.message
        ]
        if selected:
            out.append(
                (
                    f"Autoscaler of {pool.provisioner}",
                    f"{pool.fix}: {pool.why} ({pool.source})",
                    "pools selected at " + ", ".join(dict.fromkeys(selected)),
                )
            )
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
