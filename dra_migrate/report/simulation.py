"""``simulate``'s part of the report model: each workload as the control plane placed it
before and after the conversion, and the fleet it was placed on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Placement:
    """One workload's pods in one phase, as the API server, its controllers and its
    scheduler left them."""

    created: int  # pods the controllers (or simulate) created
    bound: int  # of them, bound to a node
    pools: tuple[str, ...]  # node pools of the bound pods, sorted
    nodes: tuple[str, ...]  # fleet names of their nodes, sorted
    devices: tuple[tuple[str, int], ...]  # (container, devices or GPUs) of a bound pod
    claims: tuple[str, ...]  # "claim request: driver/pool/device" of a bound pod
    reasons: tuple[str, ...]  # the scheduler's (and controllers') reasons, distinct
    refused: str = ""  # the API server's answer when it refused the object

    def to_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "bound": self.bound,
            "pools": list(self.pools),
            "nodes": list(self.nodes),
            "devices": {name: count for name, count in self.devices},
            "claims": list(self.claims),
            "reasons": list(self.reasons),
            "refused": self.refused or None,
        }


@dataclass(slots=True)
class SimulatedWorkload:
    """A workload (one pod template of it) placed before and after. Not frozen: the
    comparison sets ``holds``."""

    path: str
    line: int
    col: int
    kind: str
    namespace: str
    name: str
    site: str  # the pod template's path in the object (spec.template.spec, ...)
    placed_as: str  # "controller", or how simulate stood in for an absent operator
    before: Placement | None
    after: Placement | None
    holds: bool = False

    @property
    def display(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "kind": self.kind,
            "namespace": self.namespace or None,
            "name": self.name,
            "podPath": self.site,
            "placedAs": self.placed_as,
            "holds": self.holds,
            "before": self.before.to_dict() if self.before else None,
            "after": self.after.to_dict() if self.after else None,
        }


@dataclass(slots=True)
class Simulation:
    """The run: where it ran, on what fleet, and every workload. Not frozen: the command
    fills it in stage by stage."""

    control_plane: str  # "local v1.37.2 (...)" or the kubeconfig context
    fleet: str  # the fleet file(s)
    nodes: int
    pools: dict[str, int]
    gpus: int
    after_source: str  # "converted by this run" or the --after paths
    workloads: list[SimulatedWorkload] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # create, settle, record
    quiet: bool = True  # the scheduler settled within the deadline

    def differ(self) -> list[SimulatedWorkload]:
        return [w for w in self.workloads if not w.holds]

    def to_dict(self) -> dict[str, Any]:
        return {
            "controlPlane": self.control_plane,
            "fleet": {
                "source": self.fleet,
                "nodes": self.nodes,
                "pools": dict(sorted(self.pools.items())),
                "gpus": self.gpus,
            },
            "after": self.after_source,
            "quiet": self.quiet,
            "seconds": {k: round(v, 2) for k, v in self.seconds.items()},
            "holds": sum(1 for w in self.workloads if w.holds),
            "differs": len(self.differ()),
            "workloads": [w.to_dict() for w in self.workloads],
        }
