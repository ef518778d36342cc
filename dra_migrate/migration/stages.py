"""The staged migration plan of ``dra-migrate report``, from the scan of a repository.

Stage 1, inventory: workloads (one per pod spec), GPUs per namespace, resource
and product, what could not be analysed. Stage 2, prerequisites: versions,
API, feature gates, drivers, the device plugin during coexistence, and the
capacity check on ResourceSlices. Stage 3, the DeviceClasses to create
(``deviceclasses.py``). Stage 4, the pilot wave: workloads ranked by risk,
lowest first. Stage 5, the other waves with their rollback. Risks come from a
table keyed by finding code, so every risk points at the file that shows it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dra_migrate.convert.mapping import Config
from dra_migrate.convert.unconverted import quota_prerequisite
from dra_migrate.migration import deployed as deployed_totals
from dra_migrate.migration import deviceclasses as dc
from dra_migrate.migration import sharing, strategy, waves
from dra_migrate.migration.capacity import per_pod, place
from dra_migrate.migration.deviceclasses import Bridged, ClassPlan, plan_classes
from dra_migrate.migration.provisioning import PLAN_NOTES
from dra_migrate.migration.provisioning import prerequisites as provisioner_prerequisites
from dra_migrate.report.deployed import Deployed
from dra_migrate.report.fields import location
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.migration import (
    GpuContainer,
    LiveInventory,
    MigrationPlan,
    Prerequisite,
    Risk,
    Total,
    Unanalysed,
    Wave,
    Workload,
)
from dra_migrate.report.model import BridgeClass, InventoryItem, Report, Status

MANY_REPLICAS = 10  # DRA520 from this many pods of one pod spec
NO_NAMESPACE = "(no namespace)"

# Risk of a workload's kind: restartable batch first, long-running services later.
KIND_RISK = {"Pod": 0, "Job": 0, "CronJob": 0, "Deployment": 2, "ReplicaSet": 2}
KIND_RISK_DEFAULT = 1  # training operators and other custom resources
KIND_RISK_HIGH = {"StatefulSet": 3, "DaemonSet": 3, "InferenceService": 3}
PRODUCTION = re.compile(r"(^|[-_.])(prod|production|prd|live)([-_.]|$)")
NON_PRODUCTION = re.compile(
    r"(^|[-_.])(dev|devel|test|testing|staging|stage|sandbox|qa|ci|demo|experiments?)([-_.]|$)"
)
WAVE_BANDS = ((3, "low risk"), (6, "medium risk"), (math.inf, "high risk"))
PILOT_MAX = 3

# Risks evidenced by a finding code: (title, why it matters and what replaces it).
RISKS: dict[str, tuple[str, str]] = {
    "DRA205": (
        "Time-sliced or renamed shared GPUs",
        "A device-plugin time slice (nvidia.com/gpu.shared, sharing replicas) made 1 a "
        "fraction of a GPU; an exclusive DRA GPU is not a time slice, so the same pods need "
        "more GPUs. Say how many ways the pool shares (sharing: in .dra-migrate.yaml) to "
        "convert them to the DRA driver's consumable shares (release 0.5), or keep them on "
        "the device plugin.",
    ),
    "DRA206": (
        "ResourceQuota on an extended GPU resource",
        "requests.nvidia.com/gpu limits claims only from 1.35 with DRAExtendedResource on (the "
        "default from 1.36), and only of a class with that extendedResourceName. Limit the rest "
        "with <class>.deviceclass.resource.k8s.io/devices (any release; count/resourceclaims."
        "resource.k8s.io counts claims); drop the old key once no pod uses the device plugin.",
    ),
    "DRA520": (
        "Many replicas against claim quotas",
        "Every pod of a ResourceClaimTemplate gets its own ResourceClaim: a scale-up creates "
        "that many claims at once, which count against count/resourceclaims.resource.k8s.io "
        "and the device-class quota of the namespace. Size those quotas for the largest scale.",
    ),
    "DRA207": (
        "Init containers with GPUs",
        "The device plugin let an init container reuse the GPUs of the app containers. The "
        "rewrite keeps that by pointing the init container at the app container's request; "
        "the bridge relies on the scheduler fix of kubernetes#134882 (1.35 cycle).",
    ),
    "DRA521": (
        "Sidecars with GPUs",
        "A sidecar (restartPolicy: Always) runs beside the app containers and holds its own "
        "devices for the whole pod lifetime: the pod needs the sum of both.",
    ),
    "DRA219": (
        "kustomize namePrefix/nameSuffix overlays",
        "An overlay that renames objects renames the ResourceClaimTemplates but not the "
        "resourceClaimTemplateName references of the pods: ship the nameReference "
        "configuration of stage 5 with the overlay (listed under configurations:).",
    ),
    "DRA104": (
        "Unknown extended resources",
        "Extended resources that look like accelerators but are not in the mapping stay on "
        "the device plugin: add them to .dra-migrate.yaml, or keep their device plugin.",
    ),
    "DRA110": (
        "Workloads on HAMi's shared GPUs",
        "No DRA driver publishes HAMi's GPU shares (nvidia.com/gpumem, gpucores): keep these "
        "workloads on HAMi until HAMi-DRA or the driver's GPU sharing serves them.",
    ),
    "DRA202": (
        "kustomize patches that set GPUs",
        "A patch that sets the extended resource would add it back after the base is "
        "converted: patch the ResourceClaimTemplate's request count instead.",
    ),
    "DRA224": (
        "Tolerations that admission added for the GPU resource",
        "The ExtendedResourceToleration admission plugin tolerated the GPU taint of pods that "
        "asked for the extended resource; converted pods no longer do, so the rewrite writes "
        "the toleration (harmless where nodes carry no such taint).",
    ),
    "DRA225": (
        "Schedulers that may not allocate claims",
        "A ResourceClaim is allocated by the scheduler that places the pod: a pod handed to a "
        "scheduler without DRA support stays Pending. Check the scheduler's release and DRA "
        "setting before its wave, or keep those workloads on the device plugin.",
    ),
    "DRA226": (
        "Kueue queues that counted the GPU limit",
        "Kueue admits queued workloads against the ClusterQueue's quota of what pods request; "
        "claims count only through Kueue's DRA accounting (deviceClassMappings). Set it up "
        "before the queue's workloads move, or their GPUs stop counting.",
    ),
    "DRA227": (
        "GPU requests inside strings",
        "Manifests held in ConfigMaps, Argo resource manifests and pod patches in strings "
        "are another program's input and are never converted: migrate what applies them.",
    ),
    "DRA203": (
        "Helm chart templates left as they are that set GPUs",
        "These charts keep the device plugin (the bridge, or a construct no template edit "
        "follows exactly: the Helm charts table says which): serve them with a DeviceClass "
        "with extendedResourceName, or change the template by hand.",
    ),
}
# provisioners, managed pools and operators that read the GPU count (convert/provisioners.py)
RISKS.update({code: (title, why) for code, (title, why, _req) in PLAN_NOTES.items()})
# Findings that mean part of the repository was not analysed (beside unreadable files).
UNANALYSED = ("DRA104", "DRA106", "DRA202", "DRA203", "DRA204", "DRA212", "DRA213")
# Drivers: where to get them and what the report should say about their versions.
DRIVERS = {
    "gpu.nvidia.com": "NVIDIA DRA driver (kubernetes-sigs/dra-driver-nvidia-gpu): its chart "
    "needs kubeVersion 1.32 or later and renders the newest resource.k8s.io version the "
    "cluster serves; gpu.nvidia.com gets extendedResourceName nvidia.com/gpu only when "
    "rendered as v1",
    "gpu.amd.com": "AMD GPU DRA driver (ROCm/k8s-gpu-dra-driver): gpu.amd.com has no "
    "extendedResourceName unless deviceClass.extendedResourceName is set in its values",
    "gpu.intel.com": "Intel resource drivers for Kubernetes (intel-resource-drivers-for-"
    "kubernetes): gpu.intel.com maps intel.com/gpu only with enableDRAExtendedResources: true",
}


@dataclass(frozen=True, slots=True)
class PlanSettings:
    strategy: str | None = None  # --strategy; None: the configuration's, else rewrite
    kube_version: str | None = None  # "1.36"
    target: str = "v1"


def build(
    report: Report,
    config: Config,
    settings: PlanSettings,
    live: LiveInventory | None = None,
    deployed: Deployed | None = None,
) -> tuple[MigrationPlan, list[Finding]]:
    """The migration plan of a scanned repository, and the findings the plan adds;
    ``deployed``: what the builds and renderings deploy (``migration/deployed.py``)."""
    from dra_migrate.k8s.versions import parse_kube_version

    minor = parse_kube_version(settings.kube_version) if settings.kube_version else None
    config = sharing.with_live(config, live)  # the pools the cluster's nodes show
    found: list[Finding] = []
    gpu_rows = [row for row in report.inventory if row.gpu]  # TPUs and the like stay out
    workloads = _workloads(gpu_rows)
    rows_of = _rows_by_workload(gpu_rows)
    chosen = config.strategy
    for w in workloads:
        # convert's decision (one_file.py); what it refuses is kept (manual here)
        decision = strategy.for_pod(
            rows_of[_key_of(w)], chosen, settings.strategy, minor, settings.target
        )
        w.strategy, w.reasons = decision.strategy, list(decision.reasons)
    found += _row_findings(workloads)
    asked = settings.strategy or chosen.default or strategy.REWRITE
    if asked == strategy.BRIDGE:
        blocked = strategy.cluster_blocks_bridge(minor, settings.target)
        if blocked:
            found.append(
                finding(
                    "DRA513",
                    "",
                    0,
                    0,
                    f"--strategy bridge: {blocked}",
                    "use --strategy auto to bridge only where the cluster serves it",
                )
            )
    classes = _classes(config, workloads, rows_of, settings, report.bridge_classes)
    found += classes.findings
    found += _device_plugin_nodes(workloads, rows_of, live)
    bridged = {c.resource for w in workloads if w.strategy == strategy.BRIDGE for c in w.containers}
    found += sharing.findings(config, workloads, bridged)  # DRA540, DRA541
    capacity = None
    if live is not None and live.devices:
        capacity, more = place(workloads, classes, live)
        found += more
    _rank(workloads)
    all_findings = report.all_findings + found
    waves.hold_back(workloads, all_findings, classes)  # unmet prerequisites rank higher
    planned = waves.with_steps(
        _waves(workloads, classes),
        workloads,
        all_findings,
        classes,
        report.files,
        [c.root for c in report.charts],
        waves.CommandSettings(settings.strategy, settings.kube_version, settings.target),
    )
    plan = MigrationPlan(
        strategy=asked,
        kube_version=settings.kube_version,
        target=settings.target,
        workloads=workloads,
        namespaces=_totals(workloads, lambda w: [w.namespace or NO_NAMESPACE]),
        resources=_resource_totals(workloads),
        products=_product_totals(workloads),
        unanalysed=_unanalysed(report),
        charts=list(report.charts),
        prerequisites=_prerequisites(workloads, classes, settings, minor, live, config)
        + sharing.prerequisites(config, workloads)
        + strategy.auto_note(
            asked,
            [rows_of[_key_of(w)] for w in workloads],
            chosen,
            minor,
            settings.target,
            report.bridge_classes,
        )
        + [Prerequisite(*p) for p in provisioner_prerequisites(report.all_findings)],
        capacity=capacity,
        classes=[c.to_dict() for c in classes.classes],
        installed_classes=[c.to_dict() for c in classes.installed],
        classes_yaml=classes.yaml,
        waves=planned,
        risks=_risks(all_findings, report.inventory),
        kustomize_config=(
            name_reference_config({(w.api_version, w.kind) for w in workloads})
            if any(f.code == "DRA219" for f in all_findings)
            else ""
        ),
        live=live,
        deployed=deployed_totals.fill(deployed, workloads) if deployed else None,
    )
    return plan, found


# --- stage 1: inventory -------------------------------------------------------------


def _key(item: InventoryItem) -> tuple[str, str, str, str, str]:
    return (item.path, item.kind, item.namespace or "", item.name, item.pod_path)


def _key_of(w: Workload) -> tuple[str, str, str, str, str]:
    return (w.path, w.kind, w.namespace or "", w.name, w.pod_path)


def _rows_by_workload(
    rows: Iterable[InventoryItem],
) -> dict[tuple[str, str, str, str, str], list[InventoryItem]]:
    grouped: dict[tuple[str, str, str, str, str], list[InventoryItem]] = {}
    for row in rows:
        grouped.setdefault(_key(row), []).append(row)
    return grouped


def _workloads(rows: Sequence[InventoryItem]) -> list[Workload]:
    workloads = []
    for group in _rows_by_workload(rows).values():
        first = group[0]
        running = sum(r.count or 0 for r in group if r.role != "init")
        init = max((r.count or 0 for r in group if r.role == "init"), default=0)
        workloads.append(
            Workload(
                **location(first),
                containers=[
                    GpuContainer(
                        r.container,
                        r.role,
                        r.resource,
                        r.count,
                        r.device_class,
                        r.selectors,
                        r.shared and not r.driver_config and r.device_class is not None,
                    )
                    for r in group
                ],
                gpus_per_pod=max(running, init),
                replicas=first.replicas,
                sharing_labels=first.sharing_labels,
            )
        )
    return workloads


def _row_findings(workloads: Sequence[Workload]) -> list[Finding]:
    found = []
    for w in workloads:
        if (
            w.strategy not in strategy.LEFT
            and w.replicas is not None
            and w.replicas >= MANY_REPLICAS
        ):
            found.append(
                finding(
                    "DRA520",
                    w.path,
                    w.line,
                    w.col,
                    f"{w.display} runs {w.replicas} pods at once: {w.replicas} ResourceClaims "
                    f"of {w.gpus_per_pod} device(s) each",
                    "check count/resourceclaims.resource.k8s.io and the device-class quota of "
                    "the namespace",
                )
            )
        for c in w.containers:
            if c.role == "sidecar" and (c.count or 0) > 0:
                found.append(
                    finding(
                        "DRA521",
                        w.path,
                        w.line,
                        w.col,
                        f"sidecar {c.container!r} of {w.display} holds {c.count} device(s) of "
                        "its own for the life of the pod",
                    )
                )
    return found


def _totals(workloads: Iterable[Workload], keys: Any, count: Any = None) -> list[Total]:
    acc: dict[str, list[int]] = {}
    for w in workloads:
        for key in keys(w):
            entry = acc.setdefault(key, [0, 0, 0])
            entry[0] += 1
            gpus = count(w, key) if count else w.gpus_per_pod
            if w.replicas is None:
                entry[2] += 1
            else:
                entry[1] += gpus * w.replicas
    return [Total(k, v[0], v[1], v[2]) for k, v in sorted(acc.items())]


def _resource_totals(workloads: Sequence[Workload]) -> list[Total]:
    return _totals(
        workloads,
        lambda w: sorted({c.resource for c in w.containers}),
        lambda w, key: per_pod(w, lambda c: c.resource == key),
    )


def product(c: GpuContainer) -> str:
    """The product key of a request: its class, and the selectors that narrow it."""
    if c.device_class is None:
        return f"{c.resource} (not mapped)"
    return c.device_class + (f" [{' && '.join(c.selectors)}]" if c.selectors else "")


def _product_totals(workloads: Sequence[Workload]) -> list[Total]:
    return _totals(
        workloads,
        lambda w: sorted({product(c) for c in w.containers}),
        lambda w, key: per_pod(w, lambda c: product(c) == key),
    )


def _unanalysed(report: Report) -> list[Unanalysed]:
    out = []
    for result in report.files:
        for f in result.findings:
            if (result.status is Status.FAILED and f.blocks) or f.code in UNANALYSED:
                out.append(Unanalysed(f.path, f.line, f.col, f.code, f.message))
    return out


# --- stage 3: device classes ----------------------------------------------------------


def _classes(
    config: Config,
    workloads: Sequence[Workload],
    rows_of: Mapping[tuple[str, str, str, str, str], list[InventoryItem]],
    settings: PlanSettings,
    repository: Sequence[BridgeClass] = (),
) -> ClassPlan:
    used: set[str] = set()
    bridged: dict[str, Bridged] = {}
    for w in workloads:
        for row in rows_of[_key_of(w)]:
            if row.device_class is None:
                continue
            # bridged, or left for want of a class (DRA515): the class to create
            if w.strategy == strategy.BRIDGE or row.kept == "DRA515":
                if row.shared:  # a share: no exclusive class serves it (migration/sharing.py)
                    continue
                bridged.setdefault(
                    row.resource, Bridged(row.resource, row.device_class, row.selectors)
                )
            else:
                used.add(row.device_class)
    return plan_classes(
        config, used, list(bridged.values()), settings.target, settings.kube_version, repository
    )


def _device_plugin_nodes(
    workloads: Sequence[Workload],
    rows_of: Mapping[tuple[str, str, str, str, str], list[InventoryItem]],
    live: LiveInventory | None,
) -> list[Finding]:
    """DRA512: a node advertising a bridged name from the device plugin."""
    if live is None or not live.nodes:
        return []
    bridged = sorted(
        {
            row.resource
            for w in workloads
            if w.strategy == strategy.BRIDGE
            for row in rows_of[_key_of(w)]
        }
    )
    found = []
    for resource in bridged:
        nodes = [n.name for n in live.nodes if dict(n.allocatable).get(resource, 0) > 0]
        if nodes:
            found.append(
                finding(
                    "DRA512",
                    "",
                    0,
                    0,
                    f"{len(nodes)} node(s) still advertise {resource} from the device plugin "
                    f"({', '.join(nodes[:5])}{', ...' if len(nodes) > 5 else ''}): the scheduler "
                    "serves the bridged name from the device plugin there, and a DRA driver on "
                    "the same node would hand out the same GPUs twice",
                    "run the device plugin and the DRA driver on disjoint nodes; move nodes "
                    "wave by wave",
                )
            )
    return found


# --- stage 2: prerequisites and capacity -----------------------------------------------


def _prerequisites(
    workloads: Sequence[Workload],
    classes: ClassPlan,
    settings: PlanSettings,
    minor: int | None,
    live: LiveInventory | None,
    config: Config | None = None,
) -> list[Prerequisite]:
    from dra_migrate.k8s.versions import APIS, warnings

    out: list[Prerequisite] = []
    strategies = {w.strategy for w in workloads}
    api = APIS[settings.target]
    if strategy.REWRITE in strategies:
        out.append(
            Prerequisite(
                "Kubernetes",
                f"1.{api.introduced} or later for the rewritten workloads",
                f"they use resource.k8s.io/{settings.target} ResourceClaimTemplates"
                + ("" if api.default_on else "; not served by default (needs --runtime-config)"),
            )
        )
        if minor is not None and minor >= api.introduced:
            for note in warnings(settings.target, minor):
                out.append(Prerequisite("API", f"resource.k8s.io/{settings.target}", note))
    if strategy.BRIDGE in strategies:
        out.append(
            Prerequisite(
                "Kubernetes",
                "1.36 or later for the bridged workloads (1.34 and 1.35 with the alpha gate)",
                "DeviceClass spec.extendedResourceName (KEP-5004), resource.k8s.io/v1",
            )
        )
    gates = [("DynamicResourceAllocation", "GA in 1.34; on 1.32 and 1.33 enable it by hand")]
    if strategy.BRIDGE in strategies:
        gates.append(
            ("DRAExtendedResource", "alpha (off) in 1.34 and 1.35, beta (on) in 1.36, GA in 1.37")
        )
    for gate, detail in gates:
        out.append(Prerequisite("Feature gate", gate, detail))
    for f in classes.findings:
        if f.code == "DRA505":
            out.append(Prerequisite("Driver feature gate", f.hint, f.message))
    drivers = sorted(
        {c["driver"] for c in [*[x.to_dict() for x in classes.classes]]}
        | {c.driver for c in classes.installed}
    )
    for driver in drivers:
        version = live.drivers.get(driver) if live else None
        detail = DRIVERS.get(driver, "install the DRA driver that publishes these devices")
        if version:
            detail += f"; the cluster runs {version}"
        detail += dc.release_note(driver, config.driver_releases if config else ())
        out.append(Prerequisite("DRA driver", driver, detail))
    moved = {c.device_class for w in workloads for c in w.containers if c.device_class}
    if moved and strategies - set(strategy.LEFT):  # unconverted.quota: DRA206's facts
        out.append(Prerequisite(*quota_prerequisite(sorted(moved), minor)))
    plugin = sorted({c.resource for w in workloads for c in w.containers})
    if plugin:
        out.append(
            Prerequisite(
                "Device plugin",
                f"keep it for {', '.join(plugin)} until the last wave",
                dc.COEXISTENCE,
            )
        )
    return out


# --- stages 4 and 5: risk, waves, rollback ---------------------------------------------


def risk_factors(w: Workload) -> list[tuple[int, str]]:
    """(weight, reason) of each risk factor of a workload."""
    out: list[tuple[int, str]] = []
    if w.kind in KIND_RISK_HIGH:
        out.append((KIND_RISK_HIGH[w.kind], f"{w.kind}: long-running, stateful or per node"))
    elif KIND_RISK.get(w.kind, KIND_RISK_DEFAULT):
        out.append(
            (
                KIND_RISK.get(w.kind, KIND_RISK_DEFAULT),
                f"{w.kind or 'a value read by an operator or a chart'}: long-running or "
                "operator-managed",
            )
        )
    gpus = w.gpus_per_pod
    if gpus > 1:
        out.append((1 if gpus <= 4 else 2 if gpus <= 8 else 3, f"{gpus} GPUs per pod"))
    ns = w.namespace or ""
    if PRODUCTION.search(ns):
        out.append((3, f"production namespace {ns}"))
    elif not ns:
        out.append((1, "no namespace: lands wherever it is applied"))
    elif not NON_PRODUCTION.search(ns):
        out.append((1, f"namespace {ns} may serve production"))
    if any(c.resource.split("/")[-1].startswith("mig-") for c in w.containers):
        out.append((2, "MIG"))
    if any("shared" in c.resource or c.shared for c in w.containers) or any(
        "share" in r for r in w.reasons
    ):
        out.append((3, "GPU sharing"))
    if any(c.role in ("init", "sidecar") for c in w.containers):
        out.append((1, "init container or sidecar with GPUs"))
    if w.replicas is not None and w.replicas >= MANY_REPLICAS:
        out.append((1, f"{w.replicas} replicas"))
    return out


def _rank(workloads: Sequence[Workload]) -> None:
    ranked = waves.ranking(workloads, [risk_factors(w) for w in workloads])
    for w, factors in zip(workloads, ranked, strict=True):
        w.risk = sum(weight for weight, _ in factors)
        w.risk_factors = [text for _, text in factors]


def _waves(workloads: Sequence[Workload], classes: ClassPlan) -> list[Wave]:
    movable = sorted(
        (w for w in workloads if w.strategy not in strategy.LEFT),
        key=lambda w: (w.risk, w.gpus_per_pod, w.display, w.pod_path),
    )
    if not movable:
        return []
    size = min(PILOT_MAX, max(1, math.ceil(len(movable) / 10)))
    groups: list[tuple[str, list[Workload]]] = [("Pilot", movable[:size])]
    rest = movable[size:]
    low = 0
    for high, title in WAVE_BANDS:
        band = [w for w in rest if low < w.risk <= high or (low == 0 and w.risk == 0)]
        if band:
            groups.append((title.capitalize(), band))
        low = high  # type: ignore[assignment]
    out = []
    for number, (title, members) in enumerate(groups, start=1):
        for w in members:
            w.wave = number
        out.append(
            Wave(
                number=number,
                title=title,
                workloads=tuple(f"{w.display} ({w.pod_path})" for w in members),
                gpus=sum(w.gpus or 0 for w in members),
                rollback=tuple(_rollback(members, classes)),
            )
        )
    return out


def _rollback(members: Sequence[Workload], classes: ClassPlan) -> list[str]:
    steps = []
    rewritten = [w for w in members if w.strategy == strategy.REWRITE]
    bridged = [w for w in members if w.strategy == strategy.BRIDGE]
    if rewritten:
        files = sorted({w.path for w in rewritten})
        steps.append(
            "Rewritten: revert the wave's conversion commit (git revert) for "
            f"{', '.join(files[:6])}{' ...' if len(files) > 6 else ''} and apply it: the pods "
            "ask for the extended resource again and the device plugin serves them; then delete "
            "the ResourceClaimTemplates the conversion added."
        )
    if bridged:
        created = {c.name for c in classes.classes}
        names = {
            classes.bridge[c.resource]
            for w in bridged
            for c in w.containers
            if c.resource in classes.bridge
        }
        undo = []
        if names & created:
            undo.append(f"delete DeviceClass(es) {', '.join(sorted(names & created))}")
        if names - created:
            undo.append(f"{', '.join(sorted(names - created))} {dc.DRIVER_CLASS_ROLLBACK}")
        steps.append(
            "Bridged: "
            + ("; ".join(undo) or "remove the extendedResourceName of their classes")
            + ", and keep the device plugin advertising the resource on their nodes: new pods are "
            "served by the device plugin again; running pods keep their claim until restarted."
        )
    steps.append(
        "Keep the device plugin on enough nodes for this wave until it has run one full cycle "
        "(a Job to completion, a Deployment through a rollout) on DRA."
    )
    return steps


def _risks(findings: Sequence[Finding], inventory: Sequence[InventoryItem]) -> list[Risk]:
    # a finding about a request that is no GPU (a TPU left unmapped) is no risk of this move
    not_gpu = {(r.path, r.line, r.col) for r in inventory if not r.gpu}
    where: dict[str, list[str]] = {}
    for f in findings:
        if f.code in RISKS and (f.path, f.line, f.col) not in not_gpu:
            spot = f"{f.path}:{f.line}:{f.col}" if f.path else "(run)"
            where.setdefault(f.code, []).append(spot)
    return [
        Risk(code, RISKS[code][0], RISKS[code][1], tuple(dict.fromkeys(where[code])))
        for code in RISKS
        if code in where
    ]


# --- kustomize ------------------------------------------------------------------------


def name_reference_config(kinds: Iterable[tuple[str, str]]) -> str:
    """kustomize ``configurations:`` that renames resourceClaimTemplateName with the templates.

    One fieldSpec for every pod template of the kinds given (apiVersion, kind), from
    the kind table (of every kind of the table when none of those given is in it: a
    configuration with no fieldSpecs would rename nothing); map-keyed replica specs
    (Kubeflow) get the usual role names.
    """
    from dra_migrate.manifests import kinds as kind_table

    roles = ("Master", "Worker", "Chief", "PS", "Evaluator", "Launcher")
    lines = [
        "# kustomize configuration: list this file under configurations: in every",
        "# kustomization that sets namePrefix or nameSuffix, so that pods follow the",
        "# renamed ResourceClaimTemplates (dra-migrate report, stage 5).",
        "nameReference:",
        "  - kind: ResourceClaimTemplate",
        "    fieldSpecs:",
    ]
    known = sorted(k for k in kinds if kind_table.lookup(*k) is not None)
    if not known:  # no kind of the table among them: every kind it knows, never none
        known = sorted(
            (f"{k.group}/v1" if k.group else "v1", k.kind) for k in kind_table.KINDS if k.sites
        )
    seen = set()
    for api_version, kind in known:
        entry = kind_table.lookup(api_version, kind)
        if entry is None:
            continue
        group = kind_table.api_group(api_version)
        for site in entry.sites:
            path = re.sub(r"\[[^\]]*\]", "", site.path)
            paths = [path.replace("*", role) for role in roles] if "*" in path else [path]
            for p in paths:
                field = p.replace(".", "/") + "/resourceClaims/resourceClaimTemplateName"
                if (group, kind, field) in seen:
                    continue
                seen.add((group, kind, field))
                spec = (
                    f"{{group: {group}, kind: {kind}, path: {field}}}"
                    if group
                    else (f"{{kind: {kind}, path: {field}}}")
                )
                lines.append(f"      - {spec}")
    return "\n".join(lines) + "\n"
