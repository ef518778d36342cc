"""What deploys, counted: the record ``report --deploys`` fills (``simulate/counts.py``)
from each kustomize build and chart rendering, and the plan sums by namespace, wave and
stage (``migration/deployed.py``). Without ``--deploys`` it names the overlays and the
charts whose totals are not counted."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class DeployedWorkload:
    """One pod spec with GPUs of what a unit (or a plain file) deploys."""

    unit: str  # the kustomization or chart rendering; "" for a plain file
    tool: str  # "kustomize", "helm" or "" (a plain file)
    kind: str
    namespace: str  # "" when none is set (helm: the release namespace)
    name: str
    pod_path: str
    source: str  # path:line:col of the file that defines it (a base, a template)
    gpus_per_pod: int | None  # None: a count the rendering leaves empty
    pods: int | None  # None: unknown (an HPA, a per-node kind, an empty count)
    unknown: str = ""  # why the count is unknown
    wave: int = 0  # the plan's wave of its source workload; 0: in no wave

    @property
    def gpus(self) -> int | None:
        if self.pods is None or self.gpus_per_pod is None:
            return None
        return self.pods * self.gpus_per_pod

    @property
    def display(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "tool": self.tool,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "podPath": self.pod_path,
            "source": self.source,
            "gpusPerPod": self.gpus_per_pod,
            "pods": self.pods,
            "gpus": self.gpus,
            "unknown": self.unknown,
            "wave": self.wave,
        }


@dataclass(frozen=True, slots=True)
class DeployedTotal:
    """GPUs of what deploys, grouped by one key (a namespace, a wave, a stage)."""

    key: str
    workloads: int
    gpus: int  # of the workloads whose count is known
    unknown: int = 0  # workloads whose count is unknown (not in ``gpus``)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "workloads": self.workloads,
            "gpus": self.gpus,
            "unknownWorkloads": self.unknown,
        }


@dataclass(frozen=True, slots=True)
class Uncounted:
    """A unit whose workloads are not in the totals, and why."""

    unit: str
    tool: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "tool": self.tool, "reason": self.reason}


@dataclass(slots=True)
class Deployed:
    """Stage 1's count of what deploys. ``counted`` False: ``--deploys`` was not given,
    and ``uncounted`` names every overlay and chart rendering left out."""

    counted: bool
    workloads: list[DeployedWorkload] = field(default_factory=list)
    uncounted: list[Uncounted] = field(default_factory=list)
    namespaces: list[DeployedTotal] = field(default_factory=list)
    waves: list[DeployedTotal] = field(default_factory=list)
    stages: list[DeployedTotal] = field(default_factory=list)

    @property
    def summary(self) -> str:
        """One clause for a plan's summary line ("" when nothing is left to say)."""
        if not self.counted:
            n = len(self.uncounted)
            return f"{n} overlay(s) and chart rendering(s) not counted: give --deploys" if n else ""
        whole = next((t for t in self.stages if t.key == "inventory"), None)
        gpus = whole.gpus if whole else 0
        unknown = (
            f", {whole.unknown} workload(s) of unknown count" if whole and whole.unknown else ""
        )
        left = f", {len(self.uncounted)} unit(s) not counted" if self.uncounted else ""
        return f"deploys {gpus} GPU(s){unknown}{left}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "counted": self.counted,
            "workloads": [w.to_dict() for w in self.workloads],
            "uncounted": [u.to_dict() for u in self.uncounted],
            "namespaces": [t.to_dict() for t in self.namespaces],
            "waves": [t.to_dict() for t in self.waves],
            "stages": [t.to_dict() for t in self.stages],
        }
