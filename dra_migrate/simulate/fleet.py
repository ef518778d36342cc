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
from collections.abc import Callable
from dataclasses import dataclass, field, replace
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
    | {"memory", "pods", "dra", "attributes", "ephemeralStorage", "migGpus", "sharing"}
    | {"consumableShares"}
)
# The device plugin's sharing (NVIDIA/k8s-device-plugin api/config/v1/sharing.go): each
# GPU (or MIG device) advertised ``replicas`` times (internal/rm/device_map.go), under
# ``<name>.shared`` with ``renameByDefault`` (api/config/v1/replicas.go, for
# timeSlicing and mps alike: api/config/v1/config.go DisableResourceNamingInConfig). GPU feature discovery labels the outcome
# (internal/lm/resource.go ``baseLabeler``): replicas, sharing-strategy, and the product
# with ``-SHARED`` when shared and not renamed.
TIME_SLICING, MPS = "time-slicing", "mps"
SHARING_STRATEGIES = (TIME_SLICING, MPS)
_SHARING_KEYS = frozenset({"strategy", "replicas", "renameByDefault"})
SHARED_SUFFIX = ".shared"
REPLICAS_LABEL = "nvidia.com/gpu.replicas"
SHARING_LABEL = "nvidia.com/gpu.sharing-strategy"
# the DRA driver's --consumable-shares modes besides a count
# (cmd/gpu-kubelet-plugin/consumable_shares.go): off, every claim the whole memory by
# default, any number of claims
SHARE_MODES = ("disabled", "memory", "unlimited")
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
    after, but for the labels GPU feature discovery writes from the device plugin's
    sharing: only who publishes its GPUs changes)."""

    name: str
    pool: str
    labels: dict[str, str]
    taints: tuple[dict[str, str], ...]
    capacity: dict[str, str]  # cpu, memory, pods and extended resources other than GPUs
    gpus: int = 0
    product: str = ""
    mig: tuple[str, ...] = ()  # MIG profiles of each MIG-enabled GPU (the same layout)
    mig_strategy: str = "mixed"
    dra: bool = False  # already runs the DRA driver before the migration
    attributes: dict[str, Any] = field(default_factory=dict)  # extra device attributes
    # ResourceSlices of the dump for this node (kept as they are, both phases)
    slices: tuple[dict[str, Any], ...] = ()
    mig_gpus: int = -1  # GPUs with MIG enabled (-1: all of them, when ``mig`` is given)
    sharing: str = ""  # the device plugin's sharing: "", time-slicing or mps
    replicas: int = 1  # references the device plugin advertises per GPU
    renamed: bool = False  # renameByDefault: nvidia.com/gpu.shared
    # the DRA driver's --consumable-shares after the migration: a count, one of
    # SHARE_MODES, or "" for what stage 2 of the plan sets (``with_planned_shares``)
    consumable_shares: str = ""
    sharing_labels: dict[str, str] = field(default_factory=dict)  # GFD's, device plugin on
    shares_why: str = ""  # where ``consumable_shares`` came from

    @property
    def migrated(self) -> int:
        """GPUs with MIG enabled."""
        if not self.mig:
            return 0
        return self.gpus if self.mig_gpus < 0 else min(self.mig_gpus, self.gpus)

    def devices(self) -> int:
        """GPUs and MIG devices: what the DRA driver publishes (never the replicas)."""
        return self.gpus - self.migrated + self.migrated * len(self.mig)

    def stays_on_plugin(self) -> bool:
        """Whether the node keeps the device plugin after the migration: an MPS pool
        does (stage 2 of the plan, DRA263: the DRA driver rejects MPS on claims while
        consumable shares are on)."""
        return self.sharing == MPS and not self.dra

    def on_plugin(self, after: bool) -> bool:
        """Whether the device plugin advertises the node's GPUs in that phase."""
        return not self.dra and bool(self.gpus) and (not after or self.stays_on_plugin())

    def plugin_resources(self) -> dict[str, int]:
        """What the NVIDIA device plugin advertises for the node's GPUs
        (k8s-device-plugin: MIG strategies ``mixed`` and ``single``, internal/rm; each
        shared ``nvidia.com/gpu`` advertised ``replicas`` times, internal/rm/device_map.go,
        renamed ``nvidia.com/gpu.shared`` with renameByDefault)."""
        if self.dra or not self.gpus:
            return {}
        counts: dict[str, int] = {}
        if self.mig and self.mig_strategy == "single":
            counts[GPU] = self.migrated * len(self.mig)
        else:
            if self.gpus - self.migrated:
                counts[GPU] = self.gpus - self.migrated
            for profile in self.mig:
                key = MIG_PREFIX + profile
                counts[key] = counts.get(key, 0) + self.migrated
        if self.sharing and GPU in counts:
            name = GPU + SHARED_SUFFIX if self.renamed else GPU
            counts[name] = counts.pop(GPU) * self.replicas
        return counts

    def shares(self) -> str:
        """The driver's consumable-shares setting after the migration ("" for off)."""
        value = self.consumable_shares
        return "" if value in ("", "disabled", "0") else value


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
        """GPUs and MIG devices of the fleet (not the replicas a device plugin shares)."""
        return sum(n.devices() for n in self.nodes)


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
    if "migGpus" in pool and not mig:
        raise ConfigError(f"{where}.migGpus: the GPUs in MIG mode, with a mig layout")
    mig_gpus = _count(pool.get("migGpus", gpus), f"{where}.migGpus") if mig else -1
    if mig and mig_gpus > gpus:
        raise ConfigError(f"{where}.migGpus: at most the pool's {gpus} GPU(s)")
    if mig and strategy == "single" and (mig_gpus != gpus or len(set(mig)) != 1):
        # k8s-device-plugin internal/lm/mig-strategy.go newMigStrategySingleLabeler:
        # "devices with MIG enabled and disable detected", "more than one MIG device type"
        raise ConfigError(
            f"{where}: migStrategy single needs every GPU in MIG mode with one profile "
            "(the device plugin labels any other layout mig-strategy invalid)"
        )
    sharing, replicas, renamed = _sharing(pool.get("sharing"), f"{where}.sharing")
    if sharing == MPS and mig:
        # README.md: "Sharing with MPS is currently not supported on devices with MIG"
        raise ConfigError(f"{where}.sharing: the device plugin shares no MIG device with MPS")
    if sharing and not gpus:
        raise ConfigError(f"{where}.sharing: a pool without GPUs shares none")
    if sharing and pool.get("dra"):
        raise ConfigError(
            f"{where}.sharing: the device plugin's sharing, and dra: true says the pool runs "
            "the DRA driver (give consumableShares for its shares)"
        )
    shares = _shares(pool.get("consumableShares"), f"{where}.consumableShares")
    if shares and sharing == MPS:
        raise ConfigError(
            f"{where}.consumableShares: an MPS pool stays on the device plugin after the "
            "migration (DRA263: the DRA driver rejects MPS on claims while shares are on)"
        )
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
    single = bool(mig) and strategy == "single"
    gfd: dict[str, str] = {}
    if gpus:  # what GPU feature discovery labels (both fleets run it)
        gfd = {
            # single: the MIG devices are the nvidia.com/gpu, named <model>-MIG-<profile>
            # (internal/lm/resource.go NewMIGResourceLabeler)
            PRODUCT_LABEL: gfd_label(product) + (f"-MIG-{mig[0]}" if single else ""),
            "nvidia.com/gpu.count": str(gpus * len(mig) if single else gpus),
            "nvidia.com/gpu.present": "true",
        }
        if product in PRODUCTS and not single:
            gfd["nvidia.com/gpu.memory"] = str(PRODUCTS[product].memory_mib)
        if mig:
            gfd["nvidia.com/mig.strategy"] = strategy
    shared_labels: dict[str, str] = {}
    if sharing:  # internal/lm/resource.go baseLabeler, getProductName
        shared_labels = {REPLICAS_LABEL: str(replicas), SHARING_LABEL: sharing}
        if not renamed:
            shared_labels[PRODUCT_LABEL] = gfd[PRODUCT_LABEL] + "-SHARED"
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
        node_labels |= gfd
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
                mig_gpus=mig_gpus,
                sharing=sharing,
                replicas=replicas,
                renamed=renamed,
                consumable_shares=shares,
                sharing_labels={k: v for k, v in shared_labels.items() if k not in labels},
            )
        )
    return out


def _sharing(value: Any, where: str) -> tuple[str, int, bool]:
    """(strategy, replicas, renamed) of a pool's ``sharing:``; ("", 1, False) without."""
    if value is None:
        return "", 1, False
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: a mapping with strategy and replicas")
    unknown = sorted(set(value) - _SHARING_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (docs/simulate.md)")
    strategy = value.get("strategy")
    if strategy not in SHARING_STRATEGIES:
        raise ConfigError(f"{where}.strategy: one of {', '.join(SHARING_STRATEGIES)}")
    replicas = _count(value.get("replicas"), f"{where}.replicas")
    if replicas < 2:
        # api/config/v1/replicas.go: "number of replicas must be >= 2"
        raise ConfigError(f"{where}.replicas: 2 or more (the device plugin refuses fewer)")
    renamed = value.get("renameByDefault", False)
    if not isinstance(renamed, bool):
        raise ConfigError(f"{where}.renameByDefault: true or false")
    return str(strategy), replicas, renamed


def _shares(value: Any, where: str) -> str:
    """A pool's ``consumableShares``: a count, one of SHARE_MODES, or "" (unset)."""
    if value is None:
        return ""
    if isinstance(value, str) and value in SHARE_MODES:
        return value
    count = _count(value, where)
    if count < 1:
        raise ConfigError(f"{where}: a positive count or one of {', '.join(SHARE_MODES)}")
    return str(count)


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
            or (
                "/" in str(k)
                and k not in (GPU, GPU + SHARED_SUFFIX)
                and not str(k).startswith(MIG_PREFIX)
            )
        }
        gpus = whole_count(str(allocatable.get(GPU, "0"))) or 0
        sharing, replicas, renamed = _dumped_sharing(labels, allocatable)
        if sharing:  # the device plugin advertised each GPU replicas times
            shared = allocatable.get(GPU + SHARED_SUFFIX) if renamed else allocatable.get(GPU)
            gpus = (whole_count(str(shared or "0")) or 0) // replicas
        mig = _mig_layout(allocatable)
        node_slices = tuple(slices.get(name, ()))
        base = _without_sharing(labels) if sharing else labels
        product = product_of_label(base.get(PRODUCT_LABEL, ""))
        strategy = labels.get("nvidia.com/mig.strategy", "mixed")
        if mig:  # the node's MIG devices, kept as one GPU's layout (their count is kept)
            gpus = 1
        out.append(
            FleetNode(
                name,
                _pool(labels),
                base,
                taints,
                capacity,
                gpus,
                product,
                mig,
                strategy if strategy in MIG_STRATEGIES else "mixed",
                bool(node_slices) and not gpus and not mig,
                {},
                node_slices,
                sharing=sharing,
                replicas=replicas,
                renamed=renamed,
                # the dump's labels are those of the device plugin's nodes: GFD's
                # sharing ones go where the device plugin no longer runs
                sharing_labels={k: v for k, v in labels.items() if base.get(k) != v},
            )
        )
    return Fleet(tuple(out), classes, ", ".join(paths))


def _dumped_sharing(labels: dict[str, str], allocatable: dict[str, Any]) -> tuple[str, int, bool]:
    """A dumped node's sharing, as the inventory reads it (repo/sharing.py
    ``node_model``: GFD's labels, else allocatable a whole multiple of the GPU count)."""
    from dra_migrate.repo.sharing import MPS as MODEL_MPS
    from dra_migrate.repo.sharing import node_model

    model = node_model(labels, {str(k): str(v) for k, v in allocatable.items()})
    if model is None or not model.shared or model.replicas < 2:
        return "", 1, False
    kind = MPS if model.kind == MODEL_MPS else TIME_SLICING
    return kind, model.replicas, model.renamed  # renamed: the inventory's reading too


def _without_sharing(labels: dict[str, str]) -> dict[str, str]:
    out = {k: v for k, v in labels.items() if k not in (REPLICAS_LABEL, SHARING_LABEL)}
    if out.get(PRODUCT_LABEL, "").endswith("-SHARED"):
        out[PRODUCT_LABEL] = out[PRODUCT_LABEL][: -len("-SHARED")]
    return out


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


def with_planned_shares(
    fleet: Fleet, planned: Callable[[dict[str, str]], tuple[str, str]]
) -> Fleet:
    """The fleet with each GPU node's consumable-shares setting after the migration
    resolved: what the pool says (``consumableShares``), else ``planned`` of the node's
    labels as the device plugin's nodes carry them: (the setting stage 2 of the plan
    gives the node's pool, "" for none; why)."""
    out = []
    for n in fleet.nodes:
        if not n.gpus or n.dra or n.stays_on_plugin():
            out.append(n)
        elif n.consumable_shares:
            out.append(replace(n, shares_why="the fleet's consumableShares"))
        else:
            value, why = planned(n.labels | n.sharing_labels)
            out.append(replace(n, consumable_shares=value or "disabled", shares_why=why))
    return replace(fleet, nodes=tuple(out))
