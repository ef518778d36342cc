"""The fleet ``simulate`` places workloads on: its nodes (labels, taints, resources), the
GPUs each has (product, MIG layout) and the node pool each belongs to.

Two inputs make one model:

- a fleet description (``kind: Fleet``, docs/simulate.md#the-fleet-file): node pools,
  each a count of identical nodes, for a fleet that is planned rather than running;
- ``kubectl get nodes,resourceslices,deviceclasses -o yaml`` output (or the dumps
  ``inventory`` reads): the nodes as they are, their pools from the pool labels the
  managed offerings set, and for nodes that already run a DRA driver, its
  ResourceSlices and DeviceClasses as they are.

``devices.py`` derives from the model the objects each phase creates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.k8s import names
from dra_migrate.k8s.quantity import whole_count
from dra_migrate.report.findings import ConfigError

FLEET_KIND = "Fleet"
GPU = "nvidia.com/gpu"
MIG_PREFIX = "nvidia.com/mig-"
PRODUCT_LABEL = "nvidia.com/gpu.product"  # GPU feature discovery's label
MIG_STRATEGIES = ("mixed", "single")
MAX_NODES = 20_000
# Labels that name a node's pool, most specific first: GKE, EKS managed node groups,
# Karpenter, AKS, OpenShift machine sets; else the instance type stands for the pool.
POOL_LABELS = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "machine.openshift.io/cluster-api-machineset",
    "node.kubernetes.io/instance-type",
)
_POOL_KEYS = frozenset(
    {"name", "count", "gpus", "product", "labels", "taints", "mig", "migStrategy", "cpu"}
    | {"memory", "pods", "dra", "attributes", "ephemeralStorage"}
)
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PROFILE = re.compile(r"\d+g\.\d+gb(\+me)?")


@dataclass(frozen=True, slots=True)
class Product:
    """What NVML reports for a GPU product, as the DRA driver publishes it
    (``cmd/gpu-kubelet-plugin/deviceinfo.go``): architecture, compute capability,
    memory (MiB)."""

    name: str
    architecture: str
    compute_capability: str  # major.minor
    memory_mib: int
    brand: str = "Nvidia"


# NVIDIA's data sheets (memory as NVML reports it, MiB) and CUDA's compute capability
# table (developer.nvidia.com/cuda-gpus). Product names are NVML's (nvidia-smi -L).
PRODUCTS = {
    p.name: p
    for p in (
        Product("Tesla T4", "Turing", "7.5", 15360, "Tesla"),
        Product("Tesla V100-SXM2-16GB", "Volta", "7.0", 16384, "Tesla"),
        Product("NVIDIA A10G", "Ampere", "8.6", 23028),
        Product("NVIDIA A100-PCIE-40GB", "Ampere", "8.0", 40960),
        Product("NVIDIA A100-SXM4-40GB", "Ampere", "8.0", 40960),
        Product("NVIDIA A100-SXM4-80GB", "Ampere", "8.0", 81920),
        Product("NVIDIA A100 80GB PCIe", "Ampere", "8.0", 81920),
        Product("NVIDIA L4", "Ada Lovelace", "8.9", 23034),
        Product("NVIDIA L40S", "Ada Lovelace", "8.9", 46068),
        Product("NVIDIA H100 80GB HBM3", "Hopper", "9.0", 81559),
        Product("NVIDIA H100 PCIe", "Hopper", "9.0", 81559),
        Product("NVIDIA H200", "Hopper", "9.0", 143771),
        Product("NVIDIA B200", "Blackwell", "10.0", 183359),
        Product("NVIDIA GB200", "Blackwell", "10.0", 189471),
    )
}


def gfd_label(product: str) -> str:
    """GPU feature discovery's ``nvidia.com/gpu.product`` value: runs of spaces become
    dashes, characters a label cannot hold are dropped (k8s/products.py)."""
    from dra_migrate.k8s.products import gfd_label as label

    return label(product)


def product_of_label(value: str) -> str:
    """The NVML name behind a GFD product label (the catalogued one it was made from),
    else the label as it is."""
    for name in PRODUCTS:
        if gfd_label(name) == value:
            return name
    return value


@dataclass(frozen=True, slots=True)
class FleetNode:
    """One node, as both fleets have it (labels and taints are the same before and
    after: only who publishes its GPUs changes)."""

    name: str
    pool: str
    labels: dict[str, str]
    taints: tuple[dict[str, str], ...]
    capacity: dict[str, str]  # cpu, memory, pods and extended resources other than GPUs
    gpus: int = 0
    product: str = ""
    mig: tuple[str, ...] = ()  # MIG profiles of each GPU (every GPU the same layout)
    mig_strategy: str = "mixed"
    dra: bool = False  # already runs the DRA driver before the migration
    attributes: dict[str, Any] = field(default_factory=dict)  # extra device attributes
    # ResourceSlices of the dump for this node (kept as they are, both phases)
    slices: tuple[dict[str, Any], ...] = ()

    def plugin_resources(self) -> dict[str, int]:
        """What the NVIDIA device plugin advertises for the node's GPUs
        (k8s-device-plugin, MIG strategies ``mixed`` and ``single``)."""
        if self.dra or not self.gpus:
            return {}
        if not self.mig:
            return {GPU: self.gpus}
        if self.mig_strategy == "single":
            return {GPU: self.gpus * len(self.mig)}
        counts: dict[str, int] = {}
        for profile in self.mig:
            key = MIG_PREFIX + profile
            counts[key] = counts.get(key, 0) + self.gpus
        return counts


@dataclass(frozen=True, slots=True)
class Fleet:
    nodes: tuple[FleetNode, ...]
    device_classes: tuple[dict[str, Any], ...] = ()  # DeviceClasses of a dump
    source: str = ""  # the file(s) read

    @property
    def pools(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for node in self.nodes:
            counts[node.pool] = counts.get(node.pool, 0) + 1
        return counts

    def gpus(self) -> int:
        return sum(n.gpus * max(1, len(n.mig)) for n in self.nodes)


def load(paths: tuple[str, ...], data: list[tuple[str, list[dict[str, Any]]]]) -> Fleet:
    """The fleet of ``data`` (each file's documents): a ``kind: Fleet`` description, or
    Node, ResourceSlice and DeviceClass objects (lists too), not both."""
    described = [(p, d) for p, docs in data for d in docs if d.get("kind") == FLEET_KIND]
    if described:
        if len(described) > 1 or any(d.get("kind") != FLEET_KIND for _, docs in data for d in docs):
            raise ConfigError(
                "--fleet: give one kind: Fleet description, or kubectl get -o yaml objects"
            )
        path, doc = described[0]
        return Fleet(_described(path, doc), source=", ".join(paths))
    return _dumped(paths, [d for _, docs in data for d in _items(docs)])


def _items(docs: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        items = doc.get("items")
        if str(doc.get("kind") or "").endswith("List") and isinstance(items, list):
            out.extend(_items(items))
        else:
            out.append(doc)
    return out


# --- the fleet description ---------------------------------------------------------


def _described(path: str, doc: dict[str, Any]) -> tuple[FleetNode, ...]:
    pools = doc.get("pools")
    if not isinstance(pools, list) or not pools:
        raise ConfigError(f"--fleet {path}: pools: a list of node pools is required")
    nodes: list[FleetNode] = []
    seen: set[str] = set()
    for index, pool in enumerate(pools):
        where = f"--fleet {path}: pools[{index}]"
        if not isinstance(pool, dict):
            raise ConfigError(f"{where}: a mapping is required")
        unknown = sorted(set(pool) - _POOL_KEYS)
        if unknown:
            raise ConfigError(f"{where}: unknown key {unknown[0]!r} (docs/simulate.md)")
        name = _text(pool.get("name"), f"{where}.name")
        if name in seen or not names.is_dns_label(name):
            raise ConfigError(f"{where}.name: {name!r} is taken or not a DNS label")
        seen.add(name)
        count = _count(pool.get("count", 1), f"{where}.count")
        if len(nodes) + count > MAX_NODES:
            raise ConfigError(f"--fleet {path}: more than {MAX_NODES} nodes")
        nodes.extend(_pool_nodes(name, count, pool, where))
    return tuple(nodes)


def _pool_nodes(name: str, count: int, pool: dict[str, Any], where: str) -> list[FleetNode]:
    gpus = _count(pool.get("gpus", 0), f"{where}.gpus")
    product = str(pool.get("product") or "")
    if gpus and not product:
        raise ConfigError(f"{where}.product: the GPU product is required with gpus")
    mig = pool.get("mig") or []
    if not isinstance(mig, list) or not all(
        isinstance(p, str) and _PROFILE.fullmatch(p) for p in mig
    ):
        raise ConfigError(f"{where}.mig: a list of MIG profiles such as 1g.10gb")
    strategy = str(pool.get("migStrategy") or "mixed")
    if strategy not in MIG_STRATEGIES:
        raise ConfigError(f"{where}.migStrategy: one of {', '.join(MIG_STRATEGIES)}")
    labels = _strings(pool.get("labels") or {}, f"{where}.labels")
    taints = tuple(
        _taint(t, f"{where}.taints[{i}]") for i, t in enumerate(pool.get("taints") or [])
    )
    attributes = pool.get("attributes") or {}
    if not isinstance(attributes, dict):
        raise ConfigError(f"{where}.attributes: a mapping of attribute to value")
    capacity = {
        "cpu": str(pool.get("cpu", "64")),
        "memory": str(pool.get("memory", "512Gi")),
        "pods": str(pool.get("pods", "110")),
        "ephemeral-storage": str(pool.get("ephemeralStorage", "500Gi")),
    }
    out = []
    width = max(2, len(str(count - 1)))
    for i in range(count):
        node = f"{name}-{i:0{width}d}"
        node_labels = {
            "kubernetes.io/hostname": node,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "dra-migrate.dev/pool": name,
        }
        if gpus:  # what GPU feature discovery labels (both fleets run it)
            node_labels |= {
                PRODUCT_LABEL: gfd_label(product),
                "nvidia.com/gpu.count": str(gpus),
                "nvidia.com/gpu.present": "true",
            }
            if product in PRODUCTS:
                node_labels["nvidia.com/gpu.memory"] = str(PRODUCTS[product].memory_mib)
            if mig:
                node_labels["nvidia.com/mig.strategy"] = strategy
        node_labels |= labels
        out.append(
            FleetNode(
                node,
                name,
                node_labels,
                taints,
                dict(capacity),
                gpus,
                product,
                tuple(mig),
                strategy,
                bool(pool.get("dra", False)),
                dict(attributes),
            )
        )
    return out


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: a non-empty string is required")
    return value


def _count(value: Any, where: str) -> int:
    count = whole_count(str(value)) if not isinstance(value, bool) else None
    if count is None or count > MAX_NODES * 64:
        raise ConfigError(f"{where}: a whole number is required, not {value!r}")
    return count


def _strings(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: a mapping of strings")
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _taint(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not value.get("key"):
        raise ConfigError(f"{where}: a taint needs key and effect")
    effect = str(value.get("effect") or "")
    if effect not in _TAINT_EFFECTS:
        raise ConfigError(f"{where}.effect: one of {', '.join(_TAINT_EFFECTS)}")
    taint = {"key": str(value["key"]), "effect": effect}
    if value.get("value") not in (None, ""):
        taint["value"] = str(value["value"])
    return taint


# --- kubectl dumps --------------------------------------------------------------------


def _dumped(paths: tuple[str, ...], objects: list[dict[str, Any]]) -> Fleet:
    nodes = [o for o in objects if o.get("kind") == "Node"]
    if not nodes:
        raise ConfigError(
            f"--fleet {', '.join(paths)}: no Node objects and no kind: Fleet description "
            "(kubectl get nodes,resourceslices,deviceclasses -o yaml)"
        )
    slices: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        if obj.get("kind") == "ResourceSlice":
            spec = obj.get("spec") or {}
            node_name = str(spec.get("nodeName") or "")
            if node_name:
                slices.setdefault(node_name, []).append(obj)
    classes = tuple(o for o in objects if o.get("kind") == "DeviceClass")
    out = []
    for obj in nodes:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        taints = tuple(
            {k: str(v) for k, v in t.items() if k in ("key", "value", "effect")}
            for t in spec.get("taints") or []
            if isinstance(t, dict) and not str(t.get("key", "")).startswith("node.kubernetes.io/")
        )
        allocatable = status.get("allocatable") or status.get("capacity") or {}
        capacity = {
            str(k): str(v)
            for k, v in allocatable.items()
            if k in ("cpu", "memory", "pods", "ephemeral-storage")
            or ("/" in str(k) and k != GPU and not str(k).startswith(MIG_PREFIX))
        }
        gpus = whole_count(str(allocatable.get(GPU, "0"))) or 0
        mig = _mig_layout(allocatable)
        node_slices = tuple(slices.get(name, ()))
        product = product_of_label(labels.get(PRODUCT_LABEL, ""))
        strategy = labels.get("nvidia.com/mig.strategy", "mixed")
        if mig:  # the node's MIG devices, kept as one GPU's layout (their count is kept)
            gpus = 1
        out.append(
            FleetNode(
                name,
                _pool(labels),
                labels,
                taints,
                capacity,
                gpus,
                product,
                mig,
                strategy if strategy in MIG_STRATEGIES else "mixed",
                bool(node_slices) and not gpus and not mig,
                {},
                node_slices,
            )
        )
    return Fleet(tuple(out), classes, ", ".join(paths))


def _mig_layout(allocatable: dict[str, Any]) -> tuple[str, ...]:
    """The MIG profiles a mixed-strategy node advertises, as one GPU's layout when the
    GPU count label says how many GPUs share them (else as one GPU's)."""
    layout: list[str] = []
    for key, value in sorted(allocatable.items()):
        if str(key).startswith(MIG_PREFIX):
            layout.extend([str(key)[len(MIG_PREFIX) :]] * (whole_count(str(value)) or 0))
    return tuple(layout)


def _pool(labels: dict[str, str]) -> str:
    for key in POOL_LABELS:
        if labels.get(key):
            return labels[key]
    return "(no pool label)"
