"""The objects each phase's fleet is made of, derived from the fleet model.

Before: the device-plugin fleet, each node advertising its GPUs as extended resources
(``nvidia.com/gpu``, ``nvidia.com/mig-<profile>`` with the mixed strategy) in
``status.capacity`` and ``status.allocatable``. After: the same nodes without them,
their GPUs published by the NVIDIA DRA driver as one ResourceSlice a node, with the
attributes the driver publishes for the product and MIG layout
(``catalog/nvidia.yaml``: dra-driver-nvidia-gpu ``cmd/gpu-kubelet-plugin/deviceinfo.go``),
and the DeviceClasses its chart installs (the catalog's ``device_classes``) beside
those the run writes. Nodes that already run the driver (``dra: true``, or a dump's
ResourceSlices) have their slices in both phases.

Every node is fake (no kubelet): its Ready condition is set through the status
subresource and never renewed, which holds because the control plane runs without the
node lifecycle controller (docs/simulate.md#nodes-without-a-kubelet).
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from typing import Any

from dra_migrate.simulate.fleet import PRODUCTS, FleetNode

DRIVER = "gpu.nvidia.com"
DRA_API = "resource.k8s.io/v1"
SIM_LABEL = "dra-migrate.dev/simulation"  # on every object a run creates: "<run>-<phase>"
DRIVER_VERSION = "580.95.5"  # what the fake devices report (a driver of the 0.4 release)
CUDA_DRIVER_VERSION = "13.0.0"


@dataclass(frozen=True, slots=True)
class NodeObjects:
    """A node of one phase: the Node, its status (set through the status subresource)
    and its ResourceSlices."""

    name: str  # the Node's name in this phase
    node: dict[str, Any]
    status: dict[str, Any]
    slices: tuple[dict[str, Any], ...]


def node_name(prefix: str, node: FleetNode) -> str:
    """The phase's name of a fleet node (``<prefix><name>``), a DNS subdomain."""
    return f"{prefix}{node.name}"[:253]


def phase_nodes(
    nodes: tuple[FleetNode, ...], prefix: str, tag: str, dra: bool, now: str
) -> list[NodeObjects]:
    """The Node objects of one phase: ``dra`` False is the device-plugin fleet (before),
    True the DRA fleet (after). ``tag`` labels and taints every node of the phase
    (``SIM_LABEL``) so that the phase's pods, and only they, land there."""
    return [_node(n, prefix, tag, dra, now) for n in nodes]


def _node(n: FleetNode, prefix: str, tag: str, dra: bool, now: str) -> NodeObjects:
    name = node_name(prefix, n)
    capacity: dict[str, str] = dict(n.capacity)
    plugin = n.on_plugin(after=dra)
    # GFD writes the sharing labels from the device plugin's configuration, which the
    # GPU Operator gives it whether the device plugin runs on the node or not
    # (NVIDIA/gpu-operator controllers/object_controls.go TransformGPUDiscoveryPlugin,
    # handleDevicePluginConfig): both phases carry them
    labels = n.labels | n.sharing_labels
    if plugin:
        capacity |= {k: str(v) for k, v in n.plugin_resources().items()}
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {**labels, SIM_LABEL: tag},
            # KWOK keeps the nodes it manages Ready (its default node selector)
            "annotations": {"kwok.x-k8s.io/node": "fake"},
        },
        "spec": {"taints": [*map(dict, n.taints), _sim_taint(tag)]},
    }
    status = {
        "capacity": capacity,
        "allocatable": dict(capacity),
        "conditions": [
            _condition("Ready", "True", "KubeletReady", now),
            _condition("MemoryPressure", "False", "KubeletHasSufficientMemory", now),
            _condition("DiskPressure", "False", "KubeletHasNoDiskPressure", now),
            _condition("PIDPressure", "False", "KubeletHasSufficientPID", now),
        ],
        "nodeInfo": {
            "architecture": n.labels.get("kubernetes.io/arch", "amd64"),
            "operatingSystem": "linux",
            "kubeletVersion": "v1.37.2",
            "kubeProxyVersion": "",
            "bootID": "",
            "containerRuntimeVersion": "",
            "kernelVersion": "",
            "machineID": "",
            "osImage": "dra-migrate simulate",
            "systemUUID": "",
        },
    }
    slices: tuple[dict[str, Any], ...] = ()
    if n.slices:
        slices = tuple(_renamed_slice(s, name, tag) for s in n.slices)
    elif (dra or n.dra) and not plugin and n.gpus:
        slices = (_slice(n, name, tag),)
    return NodeObjects(name, node, status, slices)


def _sim_taint(tag: str) -> dict[str, str]:
    return {"key": SIM_LABEL, "value": tag, "effect": "NoSchedule"}


def sim_toleration(tag: str) -> dict[str, str]:
    """What every pod of the phase tolerates: the phase's own taint, nothing else."""
    return {"key": SIM_LABEL, "operator": "Equal", "value": tag, "effect": "NoSchedule"}


def _condition(kind: str, status: str, reason: str, now: str) -> dict[str, str]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": "dra-migrate simulate: a node without a kubelet",
        "lastHeartbeatTime": now,
        "lastTransitionTime": now,
    }


def _uuid(kind: str, *parts: str) -> str:
    digest = hashlib.blake2b("/".join(parts).encode(), digest_size=16).hexdigest()
    return f"{kind}-{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _attributes(n: FleetNode) -> dict[str, dict[str, Any]]:
    product = PRODUCTS.get(n.product)
    attrs: dict[str, dict[str, Any]] = {
        "productName": {"string": n.product},
        "driverVersion": {"version": DRIVER_VERSION},
        "cudaDriverVersion": {"version": CUDA_DRIVER_VERSION},
    }
    if product is not None:
        attrs |= {
            "brand": {"string": product.brand},
            "architecture": {"string": product.architecture},
            "cudaComputeCapability": {"version": product.compute_capability + ".0"},
        }
    for key, value in n.attributes.items():
        kind = "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "string"
        attrs[str(key)] = {kind: value}
    return attrs


def _slice(n: FleetNode, name: str, tag: str) -> dict[str, Any]:
    """The driver's ResourceSlice of a node: a full GPU device ``gpu-<i>`` for each GPU
    without MIG; for a MIG-enabled GPU its MIG devices ``gpu-<i>-mig-<j>`` (type
    ``mig``, ``profile``, ``parentUUID``) and not the parent GPU. One device a GPU or MIG
    device whatever the device plugin's replicas were: time-slicing and MPS are claim
    configurations (``GpuConfig``), and consumable shares a capacity of that device."""
    common = _attributes(n)
    product = PRODUCTS.get(n.product)
    devices = []
    for i in range(n.gpus):
        parent = _uuid("GPU", n.name, str(i))
        if i >= n.migrated:
            device: dict[str, Any] = {
                "name": f"gpu-{i}",
                "attributes": {"type": {"string": "gpu"}, "uuid": {"string": parent}, **common},
            }
            if product is not None:
                device["capacity"] = {"memory": {"value": f"{product.memory_mib}Mi"}}
            devices.append(_shared(device, n.shares()))
            continue
        for j, profile in enumerate(n.mig):
            memory = profile.split(".", 1)[1].split("gb", 1)[0]
            mig_device = {
                "name": f"gpu-{i}-mig-{j}",
                "attributes": {
                    "type": {"string": "mig"},
                    "uuid": {"string": _uuid("MIG", n.name, str(i), str(j))},
                    "parentUUID": {"string": parent},
                    "profile": {"string": profile},
                    **common,
                },
                "capacity": {"memory": {"value": f"{int(memory) * 1024}Mi"}},
            }
            devices.append(_shared(mig_device, n.shares()))
    return {
        "apiVersion": DRA_API,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{name}-{DRIVER}"[:253], "labels": {SIM_LABEL: tag}},
        "spec": {
            "driver": DRIVER,
            "nodeName": name,
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _policy(default: str, low: str, high: str, step: str) -> dict[str, Any]:
    return {"default": default, "validRange": {"min": low, "max": high, "step": step}}


def _shared(device: dict[str, Any], shares: str) -> dict[str, Any]:
    """``device`` as the driver publishes it under ``--consumable-shares=shares``
    (dra-driver-nvidia-gpu cmd/gpu-kubelet-plugin/consumable_shares.go
    ``applyConsumableShares``, at 95932046): ``allowMultipleAllocations``; with a
    ``memory`` capacity, its request policy in steps of 1Mi and, for a count N, a
    ``shares`` capacity of N whose request policy is a default of 1, 1 to N in steps
    of 1 (a device without a memory capacity gets neither). "" leaves it exclusive."""
    if not shares:
        return device
    device["allowMultipleAllocations"] = True
    memory = (device.get("capacity") or {}).get("memory")
    if memory is None:
        return device
    high = memory["value"]  # whole MiB already: the driver's round-down changes nothing
    if shares == "memory":
        memory["requestPolicy"] = _policy(high, "1Mi", high, "1Mi")
    else:
        memory["requestPolicy"] = _policy("0", "0", high, "1Mi")
    if shares not in ("memory", "unlimited"):
        device["capacity"]["shares"] = {
            "value": shares,
            "requestPolicy": _policy("1", "1", shares, "1"),
        }
    return device


def _renamed_slice(obj: dict[str, Any], name: str, tag: str) -> dict[str, Any]:
    """A dump's slice for the phase's node: its devices as they are."""
    spec = copy.deepcopy(obj.get("spec") or {})
    spec["nodeName"] = name
    pool = spec.get("pool") or {}
    spec["pool"] = {
        "name": f"{name}-{pool.get('name', '')}"[:253],
        "generation": 1,
        "resourceSliceCount": pool.get("resourceSliceCount", 1),
    }
    original = str((obj.get("metadata") or {}).get("name") or "slice")
    return {
        "apiVersion": DRA_API,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{name}-{original}"[:253], "labels": {SIM_LABEL: tag}},
        "spec": spec,
    }


def driver_classes() -> list[dict[str, Any]]:
    """The DeviceClasses the NVIDIA driver's chart installs (the catalog's, opt-in
    shapes aside), ``extendedResourceName`` where the chart sets it on v1."""
    from dra_migrate.k8s.catalog import load_catalog

    out = []
    for info in load_catalog().device_classes:
        if info.driver != DRIVER or info.opt_in:
            continue
        spec: dict[str, Any] = {"selectors": [{"cel": {"expression": info.selector}}]}
        if info.extended_resource_name and "v1" in info.bridges_by_default_on:
            spec["extendedResourceName"] = info.extended_resource_name
        out.append(
            {
                "apiVersion": DRA_API,
                "kind": "DeviceClass",
                "metadata": {"name": info.name},
                "spec": spec,
            }
        )
    return out
