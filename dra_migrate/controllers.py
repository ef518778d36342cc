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
same facts for users; tests/test_controllers.py holds a golden case per row.
"""

from __future__ import annotations

from collections.abc import Callable

from yaml.nodes import MappingNode

from dra_migrate import load
from dra_migrate.findings import Finding, finding
from dra_migrate.kinds import api_group
from dra_migrate.load import entries, get, get_path, items, scalar
from dra_migrate.locate import APP, PodSite
from dra_migrate.record import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)
if TYPE_CHECKING:
    from typing import Any

    from dra_migrate.mapping import Config
    from dra_migrate.operations import Edit
    from dra_migrate.plan import Ask


class Outcome(NamedTuple):
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
    from dra_migrate.operations import add_items

    if not enabled:
        return NOTHING
    resources = sorted({a.resource for a in asks if not _tolerated(site.pod, a.resource)})
    if not resources:
        return NOTHING
    values = tuple(
        {"key": r, "operator": TOLERATION_OPERATOR, "effect": TOLERATION_EFFECT} for r in resources
    )
    line, col = load.position(site.pod)
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


class Scheduler(NamedTuple):
    name: str  # schedulerName
    product: str
    claims: bool  # allocates ResourceClaims as released
    needs: str  # what it takes for DRA pods to be scheduled
    source: str


# The default scheduler (and schedulers built on its framework with the
# DynamicResources plugin enabled) allocates claims; these are the others users
# run GPU workloads on. `draSchedulers` in .dra-migrate.yaml names more that do.
SCHEDULERS: tuple[Scheduler, ...] = (
    Scheduler(
        "kai-scheduler",
        "NVIDIA KAI-Scheduler",
        False,
        "KAI-Scheduler allocates ResourceClaims only from its DRA support (v0.6 and later, "
        "with the resource.k8s.io API it was built for); check the release you run",
        "NVIDIA/KAI-Scheduler docs/dra",
    ),
    Scheduler(
        "volcano",
        "Volcano",
        False,
        "Volcano's scheduler allocates claims only with its DRA support turned on (v1.12 and "
        "later: the predicates plugin with DynamicResourceAllocation enabled)",
        "volcano-sh/volcano pkg/scheduler/plugins/predicates",
    ),
    Scheduler(
        "yunikorn",
        "Apache YuniKorn",
        False,
        "YuniKorn does not allocate ResourceClaims: run these pods on the default scheduler",
        "apache/yunikorn-k8shim",
    ),
    Scheduler(
        "hami-scheduler",
        "HAMi",
        False,
        "HAMi schedules its own vGPU resources from extended resources, not ResourceClaims",
        "Project-HAMi/HAMi",
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
    if entry is not None and entry.claims:
        return NOTHING
    what = (
        f"{entry.product} ({name}): {entry.needs}"
        if entry is not None
        else f"{name!r}, a scheduler dra-migrate does not know; only a scheduler with the "
        "DynamicResources plugin allocates ResourceClaims"
    )
    line, col = load.position(node)
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
# claim is counted only through Kueue's DRA support (feature gate
# DynamicResourceAllocation, resources.deviceClassMappings in its Configuration).
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def queue(site: PodSite, asks: list[Ask], path: str) -> Outcome:
    """DRA226 when a Kueue queue counted the GPUs of this pod spec."""
    workload = site.workload
    labels = {**workload.labels, **site.template_labels}
    name = labels.get(KUEUE_QUEUE_LABEL)
    if not name:
        return NOTHING
    node = get_path(workload.root, "metadata", "labels", KUEUE_QUEUE_LABEL)
    line, col = load.position(node) if node is not None else workload.position
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
                "rewrite the pods ask for ResourceClaims, which that quota does not count "
                "unless Kueue's DRA accounting is set up",
                "turn on Kueue's DynamicResourceAllocation feature and map the device class "
                "to a quota resource in resources.deviceClassMappings of its Configuration, "
                "then give that resource the quota in the ClusterQueue (DRA223 names the "
                "entry where the ClusterQueue is in the input)",
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
    from dra_migrate.operations import AppendEntry, RemoveEntry

    group = site.group
    gpus = _group_gpus(site, asks)
    if group is None or gpus == 0:
        return NOTHING
    params = get(group, "rayStartParams")
    if get(params, "num-gpus") is not None:
        return NOTHING
    line, col = load.position(group)
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


class Derivation(NamedTuple):
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
