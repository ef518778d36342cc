"""The placement run: both phases' fleets and workloads created on one API server, the
controllers and the scheduler left to place them until quiet, then read back.

Both phases run at once, apart: each phase's nodes carry its label and taint
(``devices.SIM_LABEL``), each phase's pods get a ``nodeSelector`` on that label and a
toleration of that taint, nothing else (a ``nodeSelector`` entry is ANDed with the
pod's own selector and affinity, so the pod's placement among the phase's nodes is
its own), and each repository namespace becomes one namespace a phase
(``<run>-<phase>-<namespace>``), so quotas, limit ranges and names stay apart.

What is changed in what is created, the same in both phases: a StatefulSet's pods are
created in parallel (``podManagementPolicy: Parallel``: without a kubelet no pod gets
Ready, so ``OrderedReady`` would stop at the first); a CronJob is created as the Job
of its ``jobTemplate``; a volume of a PersistentVolumeClaim is an ``emptyDir`` (no
storage is simulated); a custom resource whose operator is absent is a Job a pod
template, with the template's replicas as parallelism; a pod's ``spec.nodeName`` is the
phase's name of that node.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.report.simulation import Placement
from dra_migrate.simulate import devices
from dra_migrate.simulate.api import Api, ApiError
from dra_migrate.simulate.deploys import Deployable, Tree
from dra_migrate.simulate.fleet import GPU, MIG_PREFIX, SHARED_SUFFIX, Fleet

GPUS = (GPU, GPU + SHARED_SUFFIX)  # a GPU, or a time-sliced share of one (renameByDefault)

UNIT_LABEL = "dra-migrate.dev/unit"  # on every pod: which placed unit made it
POLL = 1.0  # seconds between looks at the pods
QUIET_POLLS = 3  # looks in a row without a change
STILL_POLLS = 15  # the same, while some pod is neither bound nor said unschedulable
# the same, while some pod was said unschedulable: the scheduler tries it again once an
# event may make it fit (another claim's allocation, a slice) after its backoff, at most
# podMaxBackoffSeconds, 10 s by default (kubernetes pkg/scheduler/apis/config/v1/
# defaults.go); a pod that lost a race for a device's last shares is placed then
BACKOFF_POLLS = 12
WORKERS = 8  # requests at once
DEFAULT_TIMEOUT = 180.0  # seconds for the scheduler to settle


@dataclass(slots=True)
class Unit:
    """One pod template of one object, as created in one phase. Not frozen: creating it
    fills ``refused``."""

    index: int
    item: Deployable
    site: str
    placed_as: str
    obj: dict[str, Any]
    namespace: str  # the phase's namespace
    refused: str = ""


@dataclass(slots=True)
class Phase:
    name: str  # before or after
    tree: Tree
    dra: bool  # the DRA fleet (after) or the device-plugin fleet (before)
    tag: str = ""
    fleet: Fleet | None = None  # a fleet of its own, else the run's
    units: list[Unit] = field(default_factory=list)
    support_refused: dict[tuple[str, str, str], str] = field(default_factory=dict)
    node_names: dict[str, str] = field(default_factory=dict)  # phase name -> fleet name
    units_of: dict[str, int] = field(default_factory=dict)  # chart or kustomization -> number
    # cluster-scoped objects of the tree the phase made (PriorityClasses, DeviceClasses)
    made: list[tuple[str, str, str]] = field(default_factory=list)

    def namespace(self, item: Deployable, namespace: str | None = None) -> str:
        """The phase's namespace of ``item`` (or of ``namespace`` in its unit)."""
        number = self.units_of.setdefault(item.unit, len(self.units_of)) if item.unit else 0
        return namespace_of(self.tag, item.namespace if namespace is None else namespace, number)


@dataclass(slots=True)
class Outcome:
    placements: dict[str, dict[int, Placement]]  # phase tag -> unit index -> placement
    quiet: bool
    seconds: dict[str, float]


def namespace_of(tag: str, namespace: str, unit: int = 0) -> str:
    """The phase's namespace for a namespace of the tree: each chart and kustomization
    of the tree (``unit``, 0 for plain files) has namespaces of its own, as the
    environments several overlays build are deployed apart."""
    name = f"{tag}-{f'u{unit}-' if unit else ''}{namespace or 'default'}"
    if len(name) <= 63:
        return name
    digest = hashlib.blake2b(name.encode(), digest_size=4).hexdigest()
    return f"{name[:54]}-{digest}"


def run(
    api: Api,
    fleet: Fleet,
    phases: list[Phase],
    classes: list[dict[str, Any]],
    timeout: float = DEFAULT_TIMEOUT,
) -> Outcome:
    """Create, settle, record; the objects are left for ``cleanup``. Each phase has a
    ``tag`` of its own (several runs' phases may be placed at once, apart); the
    placements are keyed by it."""
    seconds: dict[str, float] = {}
    start = time.monotonic()
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for phase in phases:
            nodes = (phase.fleet or fleet).nodes
            made = devices.phase_nodes(nodes, f"{phase.tag}.", phase.tag, phase.dra, now)
            phase.node_names = {m.name: n.name for m, n in zip(made, nodes, strict=True)}
            list(pool.map(lambda m: _create_node(api, m), made))
        for obj in classes:
            _create_quietly(api, obj)
        for phase in phases:
            _prepare(phase)
            _create_support(api, phase, pool)
            list(pool.map(lambda u: _create_unit(api, u), _first_of_each(phase.units)))
        seconds["create"] = time.monotonic() - start
        settle = time.monotonic()
        quiet = _settle(api, phases, timeout)
        seconds["settle"] = time.monotonic() - settle
        record = time.monotonic()
        placements = {p.tag: _record(api, p, p.fleet or fleet) for p in phases}
        seconds["record"] = time.monotonic() - record
    return Outcome(placements, quiet, seconds)


def cleanup(api: Api, phases: list[Phase], classes: Iterable[str]) -> None:
    """Everything the run made on a cluster it was given: its pods (at once: no kubelet
    confirms a graceful deletion), its namespaces (with all in them), its nodes, slices
    and the DeviceClasses it created."""
    selector = f"{devices.SIM_LABEL} in ({','.join(p.tag for p in phases)})"
    made = {namespace_of(p.tag, "") for p in phases}
    made |= {p.namespace(i) for p in phases for i in p.tree.objects}
    for namespace in sorted(made):
        api.delete("v1", "Namespace", namespace)
        with contextlib.suppress(ApiError):  # the namespace is gone, or had no pods
            api.request(
                "DELETE",
                f"/api/v1/namespaces/{namespace}/pods",
                query={"gracePeriodSeconds": "0"},
            )
    for obj in list(api.list("v1", "Node", selector=selector)):
        api.delete("v1", "Node", obj["metadata"]["name"])
    for obj in list(api.list(devices.DRA_API, "ResourceSlice", selector=selector)):
        api.delete(devices.DRA_API, "ResourceSlice", obj["metadata"]["name"])
    for name in classes:
        api.delete(devices.DRA_API, "DeviceClass", name)
    for phase in phases:
        for api_version, kind, name in phase.made:
            api.delete(api_version, kind, name)


# --- creating -------------------------------------------------------------------


def _create_node(api: Api, made: devices.NodeObjects) -> None:
    api.create(made.node)
    api.patch_status("v1", "Node", made.name, made.status)
    for obj in made.slices:
        api.create(obj)


def _create_quietly(
    api: Api,
    obj: dict[str, Any],
    namespace: str = "",
    made: list[tuple[str, str, str]] | None = None,
) -> str:
    """Create; an object of that name already there is no error. The refusal, else "".
    A cluster-scoped object this call made is added to ``made`` (the cleanup's list)."""
    try:
        api.create(obj, namespace)
    except ApiError as error:
        if error.status != 409:
            return error.message
        return ""
    if made is not None and not namespace and obj.get("kind") != "Namespace":
        made.append((str(obj["apiVersion"]), str(obj["kind"]), str(obj["metadata"]["name"])))
    return ""


def _prepare(phase: Phase) -> None:
    """The units of the phase: each native workload as it is, each pod template of a
    custom resource as a Job, with the phase's selector, toleration and labels."""
    index = 0
    for item in phase.tree.objects:
        if item.native:
            obj = _native(item)
            if obj is None:
                continue
            spec, site = _pod_spec_of(obj)
            placed = "controller" if item.kind != "CronJob" else "Job of its jobTemplate"
            units = [(site, obj, spec, placed)]
        elif item.sites:
            units = []
            for path, replicas, pod, labels in item.sites:
                job = _job_for(item, path, replicas, pod, labels)
                units.append(
                    (path, job, job["spec"]["template"]["spec"], "Job of its pod template")
                )
        else:
            continue
        for site, obj, spec, placed in units:
            namespace = phase.namespace(item)
            _fence(obj, spec, phase, index, namespace)
            phase.units.append(Unit(index, item, site, placed, obj, namespace))
            index += 1


def _native(item: Deployable) -> dict[str, Any] | None:
    obj = copy.deepcopy(item.obj)
    if item.kind == "CronJob":
        template = (obj.get("spec") or {}).get("jobTemplate") or {}
        obj = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": item.name,
                "labels": (template.get("metadata") or {}).get("labels") or {},
            },
            "spec": copy.deepcopy(template.get("spec") or {}),
        }
    if obj.get("kind") == "Job" and (obj.get("spec") or {}).get("suspend"):
        obj["spec"]["suspend"] = False  # a queue (Kueue) would admit it: it is not simulated
    if item.kind == "StatefulSet":
        spec = obj.setdefault("spec", {})
        spec["podManagementPolicy"] = "Parallel"
        claims = spec.pop("volumeClaimTemplates", None) or []
        pod = spec.setdefault("template", {}).setdefault("spec", {})
        volumes = pod.setdefault("volumes", [])
        for claim in claims:  # no storage is simulated: each claim's volume an emptyDir
            name = (claim.get("metadata") or {}).get("name") if isinstance(claim, dict) else None
            if name and not any(isinstance(v, dict) and v.get("name") == name for v in volumes):
                volumes.append({"name": name, "emptyDir": {}})
    return obj


def _pod_spec_of(obj: dict[str, Any]) -> tuple[dict[str, Any], str]:
    if obj.get("kind") == "Pod":
        return obj.setdefault("spec", {}), "spec"
    template = obj.setdefault("spec", {}).setdefault("template", {})
    return template.setdefault("spec", {}), "spec.template.spec"


def _job_for(
    item: Deployable, path: str, replicas: int, pod: dict[str, Any], labels: dict[str, str]
) -> dict[str, Any]:
    spec = copy.deepcopy(pod)
    if spec.get("restartPolicy") not in ("Never", "OnFailure"):
        spec["restartPolicy"] = "Never"  # a Job's pods may not restart Always
    name = f"{item.name}-{hashlib.blake2b(path.encode(), digest_size=3).hexdigest()}"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name[:63].rstrip("-.")},
        "spec": {
            "parallelism": replicas,
            "completions": replicas,
            "backoffLimit": 0,
            "template": {"metadata": {"labels": dict(labels)}, "spec": spec},
        },
    }


def _fence(
    obj: dict[str, Any], spec: dict[str, Any], phase: Phase, index: int, namespace: str
) -> None:
    """The phase's selector, toleration and labels on the pod spec; the object in the
    phase's namespace; PVC volumes as emptyDir; a nodeName as the phase's node."""
    meta = obj.setdefault("metadata", {})
    meta["namespace"] = namespace
    for key in ("resourceVersion", "uid", "creationTimestamp", "selfLink", "managedFields"):
        meta.pop(key, None)
    obj.pop("status", None)
    selector = spec.get("nodeSelector")
    spec["nodeSelector"] = {
        **(selector if isinstance(selector, dict) else {}),
        devices.SIM_LABEL: phase.tag,
    }
    tolerations = spec.get("tolerations")
    spec["tolerations"] = [
        *(tolerations if isinstance(tolerations, list) else []),
        devices.sim_toleration(phase.tag),
    ]
    if spec.get("nodeName"):
        spec["nodeName"] = f"{phase.tag}.{spec['nodeName']}"
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict) and (
            "persistentVolumeClaim" in volume or "ephemeral" in volume
        ):
            volume.pop("persistentVolumeClaim", None)
            volume.pop("ephemeral", None)
            volume["emptyDir"] = {}
    labels = {devices.SIM_LABEL: phase.tag, UNIT_LABEL: str(index)}
    if obj.get("kind") == "Pod":
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
    else:
        template = obj["spec"]["template"].setdefault("metadata", {})
        template["labels"] = {**(template.get("labels") or {}), **labels}


def _create_support(api: Api, phase: Phase, pool: ThreadPoolExecutor) -> None:
    """Namespaces, then what pods need to be admitted: service accounts, priority
    classes, quotas, limit ranges, claims, templates, classes of the tree."""
    namespaces: dict[str, dict[str, Any]] = {namespace_of(phase.tag, ""): {}}
    for item in phase.tree.objects:
        namespaces.setdefault(phase.namespace(item), {})
        if item.kind == "Namespace" and item.support:
            namespaces[phase.namespace(item, item.name)] = item.obj
    accounts: dict[str, set[str]] = {}
    priorities: set[str] = set()
    for unit in phase.units:
        spec, _ = _pod_spec_of(unit.obj) if unit.obj.get("kind") != "CronJob" else ({}, "")
        accounts.setdefault(unit.namespace, {"default"}).add(
            str(spec.get("serviceAccountName") or spec.get("serviceAccount") or "default")
        )
        if spec.get("priorityClassName"):
            priorities.add(str(spec["priorityClassName"]))

    def namespace(item: tuple[str, dict[str, Any]]) -> None:
        made, source = item
        meta = source.get("metadata") or {}
        labels = {**(meta.get("labels") or {}), devices.SIM_LABEL: phase.tag}
        _create_quietly(
            api,
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": made,
                    "labels": labels,
                    "annotations": meta.get("annotations") or {},
                },
            },
        )

    list(pool.map(namespace, namespaces.items()))
    supports = [i for i in phase.tree.objects if i.support]
    defined = {(i.kind, i.namespace, i.name) for i in supports}
    for ns, names in accounts.items():
        for name in names:
            obj = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
            if not any(k == "ServiceAccount" and n == name for k, _, n in defined):
                _create_quietly(api, obj, ns)
    for name in sorted(priorities):
        if ("PriorityClass", "", name) not in defined:
            _create_quietly(
                api,
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": name},
                    "value": 0,
                },
                made=phase.made,
            )
    order = ("ServiceAccount", "PriorityClass", "DeviceClass", "LimitRange", "ResourceQuota")
    supports.sort(key=lambda i: order.index(i.kind) if i.kind in order else len(order))

    def support(item: Deployable) -> None:
        if item.kind == "Namespace":
            return
        obj = copy.deepcopy(item.obj)
        meta = obj.setdefault("metadata", {})
        scoped = _namespaced(obj)
        ns = phase.namespace(item) if scoped else ""
        if scoped:
            meta["namespace"] = ns
        meta.pop("resourceVersion", None)
        meta.pop("uid", None)
        obj.pop("status", None)
        refused = _create_quietly(api, obj, ns, made=phase.made)
        if refused:
            phase.support_refused[item.key] = refused

    quotas = [i for i in supports if i.kind in order]
    rest = [i for i in supports if i.kind not in order]
    list(pool.map(support, quotas))
    list(pool.map(support, rest))


def _namespaced(obj: dict[str, Any]) -> bool:
    from dra_migrate.simulate.api import KINDS

    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    spec = KINDS.get((group, str(obj.get("kind"))))
    return spec.namespaced if spec is not None else True


def _first_of_each(units: list[Unit]) -> list[Unit]:
    """The units to create: an object of the same kind, namespace and name as an earlier
    one (two files define it) is refused here, in the tree's order, as the API server
    would refuse the second one created (created at once, which is second would be a
    race)."""
    first: dict[tuple[str, str, str, str], Unit] = {}
    out = []
    for unit in units:
        meta = unit.obj.get("metadata") or {}
        key = (str(unit.obj.get("kind")), unit.namespace, str(meta.get("name") or ""), "")
        if not key[2]:  # generateName: every one is new
            out.append(unit)
            continue
        if key in first:
            earlier = first[key].item
            unit.refused = (
                f"{key[0]} {key[2]} already exists: {earlier.path}:{earlier.line} defines it too"
            )
            continue
        first[key] = unit
        out.append(unit)
    return out


def _create_unit(api: Api, unit: Unit) -> None:
    try:
        api.create(unit.obj, unit.namespace)
    except ApiError as error:
        unit.refused = error.message


# --- settling -------------------------------------------------------------------


def _settle(api: Api, phases: list[Phase], timeout: float) -> bool:
    """Until every pod is bound or the scheduler has said why not, and nothing changed
    for ``QUIET_POLLS`` looks in a row (``BACKOFF_POLLS`` when it said why not for one:
    it may try that pod again), or nothing changed for ``STILL_POLLS`` looks (a pod the
    scheduler never tries: its claim cannot be made); False when ``timeout`` passed
    first."""
    deadline = time.monotonic() + timeout
    selector = f"{devices.SIM_LABEL} in ({','.join(p.tag for p in phases)})"
    last: tuple[int, int, int] | None = None
    same = 0
    pause = POLL
    while time.monotonic() < deadline:
        time.sleep(pause)
        looked = time.monotonic()
        pods = list(api.list("v1", "Pod", selector=selector))
        # a look costs the API server and this process what the scheduler needs: with
        # many pods, look less often (at most a fifth of the time spent looking)
        pause = max(POLL, 4 * (time.monotonic() - looked))
        bound = sum(1 for p in pods if (p.get("spec") or {}).get("nodeName"))
        said = sum(1 for p in pods if _unschedulable(p))
        state = (len(pods), bound, said)
        same = same + 1 if state == last else 0
        last = state
        settled = bound + said == len(pods)
        quiet = (BACKOFF_POLLS if said else QUIET_POLLS) if settled else STILL_POLLS
        if same >= quiet:
            return True
    return False


def _unschedulable(pod: dict[str, Any]) -> str:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("message") or condition.get("reason") or "unschedulable")
    return ""


# --- recording ------------------------------------------------------------------


def _record(api: Api, phase: Phase, fleet: Fleet) -> dict[int, Placement]:
    pools = {n.name: n.pool for n in fleet.nodes}
    pods: dict[int, list[dict[str, Any]]] = {}
    namespaces = sorted({u.namespace for u in phase.units})
    claims: dict[tuple[str, str], dict[str, Any]] = {}
    events: dict[str, list[str]] = {}
    for ns in namespaces:
        for pod in api.list("v1", "Pod", ns, selector=f"{devices.SIM_LABEL}={phase.tag}"):
            label = ((pod.get("metadata") or {}).get("labels") or {}).get(UNIT_LABEL)
            if label is not None and label.isdigit():
                pods.setdefault(int(label), []).append(pod)
        for claim in api.list(devices.DRA_API, "ResourceClaim", ns):
            claims[(ns, claim["metadata"]["name"])] = claim
        for event in api.list("v1", "Event", ns):
            if event.get("type") == "Warning" and event.get("reason") != "FailedScheduling":
                involved = (event.get("involvedObject") or {}).get("name") or ""
                events.setdefault(f"{ns}/{involved}", []).append(str(event.get("message") or ""))
    out = {}
    for unit in phase.units:
        mine = sorted(pods.get(unit.index, []), key=lambda p: p["metadata"]["name"])
        bound = [p for p in mine if (p.get("spec") or {}).get("nodeName")]
        nodes = sorted(
            {phase.node_names.get(p["spec"]["nodeName"], p["spec"]["nodeName"]) for p in bound}
        )
        reasons = sorted(
            {r for p in mine if (r := _unschedulable(p)) and not p["spec"].get("nodeName")}
        )
        for p in mine:  # a pod the scheduler never tried: what its events say
            if not p["spec"].get("nodeName") and not _unschedulable(p):
                said = events.get(f"{unit.namespace}/{p['metadata']['name']}") or [
                    "not scheduled: the scheduler never tried it"
                ]
                reasons = sorted(set(reasons) | {_short(m) for m in said})
        meta = unit.obj["metadata"]
        name = str(meta.get("name") or meta.get("generateName") or "")
        failed = events.get(f"{unit.namespace}/{name}", [])
        for key, messages in events.items():  # a Deployment's pods: its ReplicaSet's
            if key.startswith(f"{unit.namespace}/{name}-") and unit.item.kind == "Deployment":
                failed.extend(messages)
        reasons = sorted(set(reasons) | {_short(m) for m in failed})
        first = bound[0] if bound else None
        counted, allocated = (
            _devices(first, unit.namespace, claims, fleet, phase) if first else ((), ())
        )
        out[unit.index] = Placement(
            created=len(mine),
            bound=len(bound),
            pools=tuple(sorted({pools.get(n, "?") for n in nodes})),
            nodes=tuple(nodes),
            devices=counted,
            claims=allocated,
            reasons=tuple(reasons),
            refused=unit.refused,
        )
    return out


def _shares(result: dict[str, Any]) -> int:
    """What one allocated device counts for its container: the consumable shares the
    claim took of it (``consumedCapacity.shares``, KEP-5075: k shares where the device
    plugin gave k time-sliced replicas, DRA260), else one device."""
    taken = str((result.get("consumedCapacity") or {}).get("shares") or "1")
    return int(taken) if taken.isdigit() and int(taken) > 0 else 1


def _short(message: str) -> str:
    return " ".join(message.split())[:500]


def _devices(
    pod: dict[str, Any],
    namespace: str,
    claims: dict[tuple[str, str], dict[str, Any]],
    fleet: Fleet,
    phase: Phase,
) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
    """Devices (GPUs) of each container of a bound pod: the extended GPU resources its
    node advertises, and the devices allocated to the claims it uses (the bridge's
    claim too)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    node = phase.node_names.get(spec.get("nodeName", ""), "")
    fleet_node = next((n for n in fleet.nodes if n.name == node), None)
    advertised = (
        set(fleet_node.plugin_resources())
        if fleet_node and fleet_node.on_plugin(after=phase.dra)
        else set()
    )
    claim_names = {
        s.get("name"): s.get("resourceClaimName")
        for s in status.get("resourceClaimStatuses") or []
        if isinstance(s, dict)
    }
    for entry in spec.get("resourceClaims") or []:
        if isinstance(entry, dict) and entry.get("resourceClaimName"):
            claim_names[entry.get("name")] = entry["resourceClaimName"]
    results: dict[str, list[dict[str, Any]]] = {}
    allocated: list[str] = []
    for pod_name, claim_name in claim_names.items():
        claim = claims.get((namespace, str(claim_name)))
        found = ((claim or {}).get("status") or {}).get("allocation") or {}
        got = (found.get("devices") or {}).get("results") or []
        results[str(pod_name)] = got
        for r in got:
            allocated.append(f"{pod_name} {r.get('request')}: {r.get('driver')}/{r.get('device')}")
    bridge = status.get("extendedResourceClaimStatus") or {}
    bridged = (claims.get((namespace, str(bridge.get("resourceClaimName")))) or {}).get(
        "status"
    ) or {}
    bridge_results = ((bridged.get("allocation") or {}).get("devices") or {}).get("results") or []
    for r in bridge_results:
        allocated.append(
            f"(extended resource) {r.get('request')}: {r.get('driver')}/{r.get('device')}"
        )
    counts = []
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        name = str(container.get("name"))
        resources = container.get("resources") or {}
        limits = resources.get("limits") or {}
        total = 0
        for key, value in limits.items():
            if key in advertised and (key in GPUS or str(key).startswith(MIG_PREFIX)):
                total += int(str(value)) if str(value).isdigit() else 0
        for ref in resources.get("claims") or []:
            request = ref.get("request") if isinstance(ref, dict) else None
            for r in results.get(str(ref.get("name") if isinstance(ref, dict) else ""), []):
                asked = str(r.get("request") or "")
                if not request or asked == request or asked.startswith(f"{request}/"):
                    total += _shares(r)
        for mapping in bridge.get("requestMappings") or []:
            if mapping.get("containerName") == name:
                total += sum(
                    1 for r in bridge_results if r.get("request") == mapping.get("requestName")
                )
        if total or resources.get("claims") or any("/" in str(k) for k in limits):
            counts.append((name, total))
    return tuple(counts), tuple(sorted(allocated))
