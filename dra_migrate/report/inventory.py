"""The cluster inventory: what runs today, read from a live cluster or from dumps.

``dra_migrate.cluster`` fills it (``inventory --cluster``, or ``kubectl get ...
-o yaml`` dumps given as files); the report renderers print it, and ``report
--cluster`` merges it into its stages. Plain dataclasses, no client objects:
the same values whichever way they were read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dra_migrate.report.fields import REQUEST, as_json


def age_text(seconds: int) -> str:
    """``2540247`` seconds as ``29d9h``: the two largest units, as kubectl prints ages."""
    days, rest = divmod(max(seconds, 0), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "m"), (secs, "s")]
    shown = [f"{n}{u}" for n, u in parts if n][:2]
    return "".join(shown) or "0s"


@dataclass(frozen=True, order=True, slots=True)
class GpuRequest:
    """One container's extended GPU resource, as the pods of a workload ask for it."""

    container: str
    role: str  # app, init or sidecar
    resource: str
    count: int | None  # None when the value is not a whole count
    value: str  # as the pod spec has it
    device_class: str | None  # the mapping's DeviceClass, None when not mapped

    def to_dict(self) -> dict[str, Any]:
        return as_json(self, REQUEST)


@dataclass(slots=True)
class Workload:
    """Pods that use extended GPU resources, grouped under their top owner. Not frozen:
    the cluster inventory counts its pods, phases, GPUs and nodes as it reads them."""

    namespace: str
    api_version: str
    kind: str
    name: str
    pods: int = 0
    phases: dict[str, int] = field(default_factory=dict)
    requests: list[GpuRequest] = field(default_factory=list)
    gpus: dict[str, int] = field(default_factory=dict)  # held by Pending and Running pods
    nodes: list[str] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "pods": self.pods,
            "phases": dict(sorted(self.phases.items())),
            "requests": [r.to_dict() for r in self.requests],
            "gpus": dict(sorted(self.gpus.items())),
            "nodes": list(self.nodes),
        }


@dataclass(slots=True)
class NodeGpus:
    """A node with GPU extended resources, DRA devices, or both. Not frozen: the
    cluster inventory adds its DRA drivers and devices as it reads ResourceSlices."""

    name: str
    product: str | None  # from the GPU feature discovery label, when there is one
    capacity: dict[str, str] = field(default_factory=dict)  # GPU extended resources only
    allocatable: dict[str, str] = field(default_factory=dict)
    dra_drivers: list[str] = field(default_factory=list)  # drivers with a slice on the node
    dra_devices: int = 0
    both: list[str] = field(default_factory=list)  # resources a DRA driver serves too
    # how the device plugin shares its GPUs, from GFD's labels or allocatable against the
    # GPU count (repo/sharing.py); "" where it hands out whole GPUs or nothing says
    sharing: str = ""

    @property
    def device_plugin(self) -> bool:
        """Whether a device plugin advertises GPUs here (capacity above zero)."""
        return any(v not in ("0", "") for v in self.capacity.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "product": self.product,
            "capacity": dict(sorted(self.capacity.items())),
            "allocatable": dict(sorted(self.allocatable.items())),
            "devicePlugin": self.device_plugin,
            "draDrivers": list(self.dra_drivers),
            "draDevices": self.dra_devices,
            "servedTwice": list(self.both),
            "sharing": self.sharing or None,
        }


@dataclass(frozen=True, slots=True)
class DeviceClassInfo:
    name: str
    selectors: tuple[str, ...]
    extended_resource_name: str | None
    driver: str | None  # from a ``device.driver == "..."`` selector

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "driver": self.driver,
            "selectors": list(self.selectors),
            "extendedResourceName": self.extended_resource_name,
        }


@dataclass(frozen=True, order=True, slots=True)
class DeviceGroup:
    """Devices of one driver and product in the ResourceSlices."""

    driver: str
    product: str
    devices: int
    nodes: int  # nodes they are on; devices of all nodes or a node selector count none
    shared: int  # devices not tied to one node (allNodes, nodeSelector)

    def to_dict(self) -> dict[str, Any]:
        return {
            "driver": self.driver,
            "product": self.product,
            "devices": self.devices,
            "nodes": self.nodes,
            "notNodeLocal": self.shared,
        }


@dataclass(frozen=True, order=True, slots=True)
class PendingClaim:
    """A ResourceClaim without an allocation, older than the threshold."""

    namespace: str
    name: str
    age_seconds: int
    device_classes: tuple[str, ...]
    reserved_for: tuple[str, ...]  # consumers (pods) waiting for it

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "ageSeconds": self.age_seconds,
            "deviceClasses": list(self.device_classes),
            "reservedFor": list(self.reserved_for),
        }


@dataclass(slots=True)
class ClusterInventory:
    """What a cluster says about its GPU workloads, nodes, classes, devices and claims.
    Not frozen: ``build_inventory`` fills in each part as it reads it."""

    source: str  # "context NAME (server)" or the dump files; never a credential
    namespace: str | None  # None: all namespaces
    dra_version: str | None  # resource.k8s.io/v1, v1beta2, v1beta1; None: no DRA API
    pending_after: int  # seconds
    workloads: list[Workload] = field(default_factory=list)
    nodes: list[NodeGpus] = field(default_factory=list)
    device_classes: list[DeviceClassInfo] = field(default_factory=list)
    devices: list[DeviceGroup] = field(default_factory=list)
    pending_claims: list[PendingClaim] = field(default_factory=list)
    pods_read: int = 0
    nodes_read: int = 0

    def summary(self) -> dict[str, int]:
        return {
            "workloads": len(self.workloads),
            "gpuPods": sum(w.pods for w in self.workloads),
            "gpusInUse": sum(sum(w.gpus.values()) for w in self.workloads),
            "gpuNodes": len(self.nodes),
            "devicePluginNodes": sum(1 for n in self.nodes if n.device_plugin),
            "draNodes": sum(1 for n in self.nodes if n.dra_drivers),
            "nodesServedTwice": sum(1 for n in self.nodes if n.both),
            "deviceClasses": len(self.device_classes),
            "draDevices": sum(g.devices for g in self.devices),
            "pendingClaims": len(self.pending_claims),
            "podsRead": self.pods_read,
            "nodesRead": self.nodes_read,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "namespace": self.namespace,
            "draVersion": self.dra_version,
            "pendingAfterSeconds": self.pending_after,
            "summary": self.summary(),
            "workloads": [w.to_dict() for w in self.workloads],
            "nodes": [n.to_dict() for n in self.nodes],
            "deviceClasses": [c.to_dict() for c in self.device_classes],
            "devices": [g.to_dict() for g in self.devices],
            "pendingClaims": [c.to_dict() for c in self.pending_claims],
        }
