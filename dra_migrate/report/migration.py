"""The staged migration plan: the part of the report model ``dra-migrate report`` fills.

Five stages (inventory, prerequisites, DeviceClasses, pilot wave, full
conversion and rollback) plus the risks. ``stages.py`` builds it; the format
modules render it; ``to_dict`` is the JSON form, described by
``schemas/report.schema.json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dra_migrate.report.charts import ChartPlan
from dra_migrate.report.deployed import Deployed
from dra_migrate.report.fields import REQUEST, Location, as_json, location_dict

if TYPE_CHECKING:  # created only where a pod spec selects an nvidia.com/ label
    from dra_migrate.report.selections import LabelSelection

PLAN_VERSION = 1


@dataclass(frozen=True, slots=True)
class GpuContainer:
    container: str
    role: str  # app, init or sidecar
    resource: str
    count: int | None
    device_class: str | None
    selectors: tuple[str, ...] = ()
    shared: bool = False  # count is consumable shares of one device (convert/sharing.py)

    def to_dict(self) -> dict[str, Any]:
        # as scan's rows, without the value as written (counts only here)
        fields = tuple(f for f in REQUEST if f[0] != "value")
        return {**as_json(self, fields), "selectors": list(self.selectors)}


@dataclass(slots=True)
class Workload(Location):
    """One pod spec that asks for GPUs (a workload has one, or one per role). Not
    frozen: the stages fill in its strategy, risk and wave after reading the scan."""

    containers: list[GpuContainer]
    gpus_per_pod: int  # max(largest init container, app containers + sidecars)
    replicas: int | None  # None: one pod per node (DaemonSet), or not a fixed number
    strategy: str = ""
    reasons: list[str] = field(default_factory=list)
    risk: int = 0
    risk_factors: list[str] = field(default_factory=list)
    wave: int = 0
    # node selectors on the labels GFD computes from the sharing configuration (stage 2)
    sharing_labels: tuple[LabelSelection, ...] = ()

    @property
    def display(self) -> str:
        if not self.kind and not self.name:  # a values file's ask, a document of no kind
            return "(no kind)"
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"

    @property
    def pods(self) -> str:
        """Pods at once, as a table shows it."""
        if self.replicas is not None:
            return str(self.replicas)
        return "per node" if self.kind == "DaemonSet" else "unknown"

    @property
    def gpus(self) -> int | None:
        """GPUs all its pods hold at once; None when the pod count is not fixed."""
        return None if self.replicas is None else self.gpus_per_pod * self.replicas

    def to_dict(self) -> dict[str, Any]:
        return {
            **location_dict(self),
            "containers": [c.to_dict() for c in self.containers],
            "gpusPerPod": self.gpus_per_pod,
            "replicas": self.replicas,
            "gpus": self.gpus,
            "strategy": self.strategy,
            "reasons": list(self.reasons),
            "risk": self.risk,
            "riskFactors": list(self.risk_factors),
            "wave": self.wave,
        }


@dataclass(frozen=True, slots=True)
class Total:
    """GPUs asked for, grouped by one key (namespace, resource or product)."""

    key: str
    workloads: int
    gpus: int  # pods with a fixed count
    per_node: int = 0  # workloads whose pod count is one per node (not in ``gpus``)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "workloads": self.workloads,
            "gpus": self.gpus,
            "perNodeWorkloads": self.per_node,
        }


def total(totals: list[Total], workloads: int) -> Total:
    """The row under a table of totals: the workloads of the plan (a workload with two
    resources is a row of each, once here) and the GPUs of every row."""
    return Total("Total", workloads, sum(t.gpus for t in totals), sum(t.per_node for t in totals))


@dataclass(frozen=True, slots=True)
class Unanalysed:
    path: str
    line: int
    col: int
    code: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "code": self.code,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Prerequisite:
    topic: str  # "Kubernetes", "API", "Feature gate", "DRA driver", "Device plugin"
    requirement: str
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"topic": self.topic, "requirement": self.requirement, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class CapacityRow:
    """Demand and supply of one device class (with the mapping's selectors)."""

    device_class: str
    selectors: tuple[str, ...]
    gpus: int  # devices the repository asks for (fixed pod counts)
    devices: int  # devices of the ResourceSlices that match
    nodes: tuple[tuple[str, int], ...]  # node -> matching devices
    pending: tuple[str, ...]  # workloads with pods that find no node

    @property
    def fits(self) -> bool:
        return not self.pending

    def to_dict(self) -> dict[str, Any]:
        return {
            "deviceClass": self.device_class,
            "selectors": list(self.selectors),
            "gpus": self.gpus,
            "devices": self.devices,
            "nodes": [{"node": n, "devices": c} for n, c in self.nodes],
            "pending": list(self.pending),
            "fits": self.fits,
        }


@dataclass(frozen=True, slots=True)
class Capacity:
    source: str  # the --resource-slices file, or the live inventory
    devices: int
    nodes: int
    rows: tuple[CapacityRow, ...]
    pending: tuple[str, ...]  # every workload with a pod that stays Pending

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "devices": self.devices,
            "nodes": self.nodes,
            "rows": [r.to_dict() for r in self.rows],
            "pending": list(self.pending),
        }


@dataclass(frozen=True, slots=True)
class Wave:
    number: int  # 1 is the pilot
    title: str
    workloads: tuple[str, ...]  # Workload.display, in rank order
    gpus: int
    rollback: tuple[str, ...]
    # what its workloads need first (migration/waves.py), and the commands that move it
    prerequisites: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "title": self.title,
            "workloads": list(self.workloads),
            "gpus": self.gpus,
            "prerequisites": list(self.prerequisites),
            "commands": list(self.commands),
            "rollback": list(self.rollback),
        }


@dataclass(frozen=True, slots=True)
class Risk:
    code: str  # the finding code that evidences it
    title: str
    detail: str  # why it matters and what replaces it
    where: tuple[str, ...]  # path:line:col of each occurrence

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "title": self.title,
            "detail": self.detail,
            "where": list(self.where),
        }


@dataclass(frozen=True, slots=True)
class LiveNode:
    name: str
    allocatable: tuple[tuple[str, int], ...]  # extended resources the node advertises
    labels: tuple[tuple[str, str], ...] = ()  # its labels: the sharing model (repo/sharing.py)


@dataclass(frozen=True, slots=True)
class LiveInventory:
    """What a running cluster says: merged into stages 1 and 2.

    Filled from ``--resource-slices`` and ``--nodes`` dumps today, or from a
    live cluster inventory (``inventory --cluster``).
    """

    source: str
    kube_version: str | None = None
    devices: list[Any] = field(default_factory=list)  # cel.Device
    nodes: list[LiveNode] = field(default_factory=list)
    drivers: dict[str, str] = field(default_factory=dict)  # DRA driver -> version, when known

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "kubeVersion": self.kube_version,
            "devices": len(self.devices),
            "nodes": [{"name": n.name, "allocatable": dict(n.allocatable)} for n in self.nodes],
            "drivers": dict(self.drivers),
        }


@dataclass(frozen=True, slots=True)
class MigrationPlan:
    """The five-stage migration plan of ``report``, as every format renders it."""

    strategy: str  # as requested: rewrite, bridge or auto
    kube_version: str | None
    target: str
    workloads: list[Workload]
    namespaces: list[Total]
    resources: list[Total]
    products: list[Total]
    unanalysed: list[Unanalysed]
    prerequisites: list[Prerequisite]
    capacity: Capacity | None
    classes: list[dict[str, Any]]  # PlannedClass.to_dict of each class to create
    installed_classes: list[dict[str, Any]]
    classes_yaml: str
    waves: list[Wave]
    risks: list[Risk]
    kustomize_config: str  # nameReference configuration, "" when no overlay renames
    live: LiveInventory | None = None
    charts: list[ChartPlan] = field(default_factory=list)  # Helm charts and their ways
    deployed: Deployed | None = None  # what builds and renderings deploy (report/deployed.py)

    @property
    def pilot(self) -> Wave | None:
        return self.waves[0] if self.waves else None

    def by_display(self) -> dict[str, Workload]:
        return {w.display + " " + w.pod_path: w for w in self.workloads}

    def members(self, wave: Wave) -> list[Workload]:
        """The workloads of ``wave``, in its order. Each name of ``wave.workloads`` is
        paired with a workload of that wave by name, each workload once: two workloads
        of one name (one Deployment name in ten files) stay two, each with its file."""
        left = [w for w in self.workloads if w.wave == wave.number]
        out = []
        for name in wave.workloads:
            at = next(i for i, w in enumerate(left) if f"{w.display} ({w.pod_path})" == name)
            out.append(left.pop(at))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": PLAN_VERSION,
            "strategy": self.strategy,
            "kubeVersion": self.kube_version,
            "target": self.target,
            "stages": {
                "inventory": {
                    "workloads": [w.to_dict() for w in self.workloads],
                    "namespaces": [t.to_dict() for t in self.namespaces],
                    "resources": [t.to_dict() for t in self.resources],
                    "products": [t.to_dict() for t in self.products],
                    "unanalysed": [u.to_dict() for u in self.unanalysed],
                    "charts": [c.to_dict() for c in self.charts],
                    "deployed": self.deployed.to_dict() if self.deployed else None,
                },
                "prerequisites": {
                    "requirements": [p.to_dict() for p in self.prerequisites],
                    "capacity": self.capacity.to_dict() if self.capacity else None,
                },
                "deviceClasses": {
                    "create": self.classes,
                    "installed": self.installed_classes,
                    "yaml": self.classes_yaml,
                },
                "pilot": self.waves[0].to_dict() if self.waves else None,
                "rollout": {
                    "waves": [w.to_dict() for w in self.waves[1:]],
                    "kustomizeConfiguration": self.kustomize_config,
                },
            },
            "risks": [r.to_dict() for r in self.risks],
            "live": self.live.to_dict() if self.live else None,
        }
