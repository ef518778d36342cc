"""The fleet's GPU sharing model: what ``nvidia.com/gpu: 1`` means on a node pool.

The NVIDIA device plugin (NVIDIA/k8s-device-plugin) advertises one GPU as one
``nvidia.com/gpu`` by default; its configuration file changes that:

- ``sharing.timeSlicing.resources: [{name, replicas}]`` advertises ``replicas``
  references to each GPU (api/config/v1/replicas.go), under ``<name>.shared`` when
  ``renameByDefault`` is set; ``failRequestsGreaterThanOne`` makes a request of more
  than one replica fail at admission (internal/rm/rm.go), false by default for
  time-slicing;
- ``sharing.mps`` does the same through an MPS control daemon, each replica limited
  to 1/replicas of the memory and compute, and under ``<name>.shared`` with
  ``renameByDefault`` as well (the same ReplicatedResources type, replicas.go; the
  README's "With CUDA MPS"; internal/rm/device_map.go advertises a replicated
  resource under its ``rename``); ``failRequestsGreaterThanOne`` defaults to true
  there (api/config/v1/config.go);
- ``flags.migStrategy: single`` advertises each MIG device of a node that has one MIG
  profile as ``nvidia.com/gpu``; ``mixed`` as ``nvidia.com/mig-<profile>``.

GPU feature discovery writes the outcome on each node (internal/lm/resource.go):
``nvidia.com/gpu.replicas``, ``nvidia.com/gpu.sharing-strategy`` (``none``,
``time-slicing``, ``mps``), ``nvidia.com/mig.strategy``, and
``nvidia.com/gpu.product`` with ``-SHARED`` appended when the name is shared and not
renamed, or ``<model>-MIG-<profile>`` under the single strategy. A node picks one of
several named configurations by the label ``nvidia.com/device-plugin.config``
(cmd/config-manager/main.go).

This module reads those facts (from configuration data, from labels, from the
repository's ConfigMaps, Helm values and ClusterPolicies) into one ``Fleet``: node
pools, each with a ``SharingModel``. Deciding what a workload on a pool becomes is
``convert/sharing.py``; the plan's stage 2 is ``migration/sharing.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EXCLUSIVE = "exclusive"
TIME_SLICING = "time-slicing"
MPS = "mps"
MIG_SINGLE = "mig-single"
MIG_MIXED = "mig-mixed"
KINDS = (EXCLUSIVE, TIME_SLICING, MPS, MIG_SINGLE, MIG_MIXED)

GPU = "nvidia.com/gpu"
SHARED_SUFFIX = ".shared"
CONFIG_LABEL = "nvidia.com/device-plugin.config"  # cmd/config-manager/main.go
REPLICAS_LABEL = "nvidia.com/gpu.replicas"
STRATEGY_LABEL = "nvidia.com/gpu.sharing-strategy"
MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
PRODUCT_LABEL = "nvidia.com/gpu.product"
COUNT_LABEL = "nvidia.com/gpu.count"
SHARED_PRODUCT = "-SHARED"  # the product label's suffix on a shared, not renamed GPU
# GFD's nvidia.com/gpu.sharing-strategy values (api/config/v1/sharing.go)
_LABEL_KINDS = {"time-slicing": TIME_SLICING, "mps": MPS}


@dataclass(frozen=True, slots=True)
class SharingModel:
    """How the device plugin hands out one GPU on a node pool.

    ``replicas``: advertised references per GPU (1: exclusive); ``renamed``: under
    ``<name>.shared``; ``fail_over_one``: a request of more than one replica fails at
    admission; ``per_gpu``: the replica count differs between GPUs of a node (the
    ``devices`` field of a resource), which one node-wide DRA setting cannot repeat;
    ``resources``: the names the sharing applies to (``nvidia.com/gpu``,
    ``nvidia.com/mig-1g.5gb``), empty for all; ``profile``: the MIG profile under the
    single strategy, from the product label; ``source``: where it was learned;
    ``assumed``: nothing said, exclusive by default."""

    kind: str = EXCLUSIVE
    replicas: int = 1
    renamed: bool = False
    fail_over_one: bool = False
    per_gpu: bool = False
    resources: tuple[str, ...] = ()
    profile: str = ""
    source: str = ""
    assumed: bool = False
    # flags.plugin.sharedDevicesAllocationPolicy: packed puts a pod's replicas on as few
    # GPUs as it can; distributed (the default) spreads them (internal/rm/allocate.go)
    packed: bool = False

    @property
    def shared(self) -> bool:
        return self.kind in (TIME_SLICING, MPS)

    def applies_to(self, resource: str) -> bool:
        """Whether this model changes what ``resource`` means."""
        if self.kind in (MIG_SINGLE, MIG_MIXED):
            return resource == GPU and self.kind == MIG_SINGLE
        if not self.shared:
            return False
        names = self.resources or (GPU,)  # GFD's labels and sharing: speak of nvidia.com/gpu
        if resource.endswith(SHARED_SUFFIX):
            return resource[: -len(SHARED_SUFFIX)] in names
        return not self.renamed and resource in names

    def describe(self) -> str:
        if self.kind == EXCLUSIVE:
            return "exclusive GPUs" + (" (assumed: nothing says otherwise)" if self.assumed else "")
        if self.kind == MIG_SINGLE:
            return "MIG, single strategy" + (f" (profile {self.profile})" if self.profile else "")
        if self.kind == MIG_MIXED:
            return "MIG, mixed strategy"
        name = "time-slicing" if self.kind == TIME_SLICING else "MPS"
        extra = [f"{self.replicas} replicas per GPU" if self.replicas > 1 else "replicas unknown"]
        if self.renamed:
            extra.append("renamed to .shared")
        if self.fail_over_one:
            extra.append("failRequestsGreaterThanOne")
        if self.per_gpu:
            extra.append("replica counts differ between devices")
        if self.packed:
            extra.append("packed")
        return f"{name} ({', '.join(extra)})"


ASSUMED = SharingModel(assumed=True, source="nothing says otherwise")


@dataclass(frozen=True, slots=True)
class Pool:
    """Nodes that share one way: the labels that select them (every key's value among
    the values given) and their model. ``selector`` empty: the fleet's default."""

    name: str
    selector: tuple[tuple[str, frozenset[str]], ...]
    model: SharingModel

    def covers(self, node_selector: Mapping[str, frozenset[str]]) -> bool:
        """Whether every node a pod with ``node_selector`` may land on is in this pool."""
        for key, allowed in self.selector:
            values = node_selector.get(key)
            if not values or not values <= allowed:
                return False
        return True

    def holds(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` is in this pool."""
        return all(labels.get(key) in allowed for key, allowed in self.selector)

    def shown_selector(self) -> str:
        if not self.selector:
            return "every GPU node"
        return ", ".join(f"{k}={'|'.join(sorted(v))}" for k, v in self.selector)


@dataclass(frozen=True, slots=True)
class Fleet:
    """The node pools whose sharing is known, most specific first, and the default."""

    pools: tuple[Pool, ...] = ()
    default: SharingModel = field(default_factory=lambda: ASSUMED)

    @property
    def known(self) -> bool:
        return bool(self.pools) or not self.default.assumed

    def model_for(self, node_selector: Mapping[str, frozenset[str]]) -> SharingModel:
        """The model a pod with ``node_selector`` runs under: what the GFD labels it
        selects say, else the first pool that holds every node it may land on, else
        the fleet default (exclusive, assumed, when nothing is known)."""
        from_labels = model_from_selector(node_selector)
        if from_labels is not None and (not from_labels.shared or from_labels.replicas > 1):
            return from_labels
        # a -SHARED product says the pool shares, not how many ways: a pool may say it
        for pool in self.pools:
            if (
                pool.selector
                and pool.covers(node_selector)
                and (from_labels is None or pool.model.kind == from_labels.kind)
            ):
                return pool.model
        return from_labels or self.default

    def merged(self, other: Fleet) -> Fleet:
        """These pools first (the configuration), then ``other``'s (what was read)."""
        default = self.default if not self.default.assumed else other.default
        names = {p.name for p in self.pools}
        return Fleet(self.pools + tuple(p for p in other.pools if p.name not in names), default)


# --- labels ---------------------------------------------------------------------


def _one(values: Iterable[str] | None) -> str | None:
    found = set(values or ())
    return found.pop() if len(found) == 1 else None


def model_from_labels(labels: Mapping[str, str], source: str = "") -> SharingModel | None:
    """The model GPU feature discovery's labels of one node say, None when they say
    nothing (no GFD labels)."""
    return model_from_selector({k: frozenset([v]) for k, v in labels.items()}, source)


def model_from_selector(
    selector: Mapping[str, frozenset[str]], source: str = ""
) -> SharingModel | None:
    """The model a node selector on GFD labels says (one value each), else None."""
    where = source or "the pod's node selector"
    strategy = _one(selector.get(STRATEGY_LABEL))
    replicas_text = _one(selector.get(REPLICAS_LABEL))
    product = _one(selector.get(PRODUCT_LABEL)) or ""
    mig = _one(selector.get(MIG_STRATEGY_LABEL))
    replicas = int(replicas_text) if replicas_text and replicas_text.isdigit() else 0
    if strategy in _LABEL_KINDS:
        return SharingModel(
            _LABEL_KINDS[strategy], max(replicas, 0), source=f"{where}: {STRATEGY_LABEL}"
        )
    if product.endswith(SHARED_PRODUCT):
        return SharingModel(TIME_SLICING, replicas, source=f"{where}: {PRODUCT_LABEL}")
    if replicas > 1:
        return SharingModel(TIME_SLICING, replicas, source=f"{where}: {REPLICAS_LABEL}")
    if mig == "single" or "-MIG-" in product:
        profile = product.rsplit("-MIG-", 1)[1] if "-MIG-" in product else ""
        return SharingModel(MIG_SINGLE, profile=profile, source=f"{where}: {PRODUCT_LABEL}")
    if mig == "mixed":
        return SharingModel(MIG_MIXED, source=f"{where}: {MIG_STRATEGY_LABEL}")
    if strategy == "none" or replicas == 1 or mig == "none":
        return SharingModel(source=f"{where}: GPU feature discovery labels")
    return None


# --- the device plugin's configuration file -----------------------------------------


class NotAConfig(ValueError):
    """The data is not a device plugin configuration (api/config/v1)."""


def model_from_config(data: Any, source: str) -> SharingModel:
    """The model one device plugin configuration file (``version: v1``) sets, as
    api/config/v1 reads it; NotAConfig when it is none."""
    if not isinstance(data, Mapping) or not (
        "sharing" in data or "flags" in data or data.get("version") == "v1"
    ):
        raise NotAConfig(f"{source}: not a device plugin configuration")
    mig = str(_get(data, "flags", "migStrategy") or "none")
    mps = _get(data, "sharing", "mps")
    slicing = _get(data, "sharing", "timeSlicing")
    packed = _get(data, "flags", "plugin", "sharedDevicesAllocationPolicy") == "packed"
    for kind, body in ((MPS, mps), (TIME_SLICING, slicing)):  # MPS wins (sharing.go)
        model = _replicated(kind, body, source)
        if model is not None:
            return dataclasses.replace(model, packed=packed)
    if mig == "single":
        return SharingModel(MIG_SINGLE, source=source)
    if mig == "mixed":
        return SharingModel(MIG_MIXED, source=source)
    return SharingModel(source=source)


def _replicated(kind: str, body: Any, source: str) -> SharingModel | None:
    if not isinstance(body, Mapping):
        return None
    resources = [r for r in body.get("resources") or () if isinstance(r, Mapping)]
    replicated = [r for r in resources if _int(r.get("replicas")) > 1]
    if not replicated:
        return None  # isReplicated: no resource with more than one replica
    counts = {_int(r.get("replicas")) for r in replicated}
    names = tuple(dict.fromkeys(str(r.get("name") or GPU) for r in replicated))
    # resources of different counts (nvidia.com/gpu 2, nvidia.com/mig-1g.5gb 4 in the
    # mixed strategy) share devices of a node differently. A resource's ``devices`` and
    # ``rename`` are ignored: the plugin resets them to every GPU and to renameByDefault
    # (config.go DisableResourceNamingInConfig, replicas.go disableResoureRenaming), for
    # timeSlicing and mps alike: only renameByDefault renames, to <name>.shared
    per_gpu = len(counts) > 1
    fail = body.get("failRequestsGreaterThanOne")
    renamed = body.get("renameByDefault") is True
    # config.go: MPS keeps failRequestsGreaterThanOne true unless set
    fail_over_one = fail is not False if kind == MPS else fail is True
    return SharingModel(
        kind,
        max(counts) if len(counts) == 1 else min(counts),
        renamed=renamed,
        fail_over_one=fail_over_one,
        per_gpu=per_gpu,
        resources=names,
        source=source,
    )


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return 0


def pools_from_configs(
    configs: Mapping[str, Any], default: str | None, source: str
) -> tuple[list[Pool], SharingModel | None]:
    """Named configurations (a ConfigMap's data, ``config.map`` of the device plugin's
    chart, ``devicePlugin.config.data`` of the GPU Operator's) as pools chosen by the
    ``nvidia.com/device-plugin.config`` label, and the default one's model (the one
    named ``default``, else the only one: the plugin's fallback "single")."""
    pools: list[Pool] = []
    models: dict[str, SharingModel] = {}
    for name, text in configs.items():
        data = _yaml(text) if isinstance(text, str) else text
        try:
            model = model_from_config(data, f"{source} ({name})")
        except NotAConfig:
            continue
        models[str(name)] = model
        pools.append(
            Pool(f"{CONFIG_LABEL}={name}", ((CONFIG_LABEL, frozenset([str(name)])),), model)
        )
    chosen = default if default in models else ("default" if "default" in models else None)
    if chosen is None and len(models) == 1:
        chosen = next(iter(models))
    return pools, models.get(chosen) if chosen else None


def _yaml(text: str) -> Any:
    """A configuration string's data (go-yaml's plain scalars), None when unreadable."""
    from dra_migrate.manifests import compose, sources, trees
    from dra_migrate.report.findings import InputProblem

    try:
        docs = compose.parse(sources.decode("-", text.encode()))
    except InputProblem:
        return None
    roots = [d.root for d in docs if d.root is not None]
    return trees.to_data(roots[0]) if len(roots) == 1 else None


# --- the repository ------------------------------------------------------------------


@dataclass(slots=True)
class Found:
    """What the repository's files say, gathered file by file (not frozen: each file
    adds to it): the pools of named configurations, the default configuration's model,
    the name a ClusterPolicy or a chart gives its default when the configurations are
    elsewhere (a ConfigMap made ``--from-file``), and the standalone configuration files
    (each a configuration named by its file name, as ``--from-file`` names the key)."""

    pools: list[Pool] = field(default_factory=list)
    default: SharingModel | None = None
    wanted: str | None = None
    standalone: list[Pool] = field(default_factory=list)

    def add(self, other: Found) -> None:
        names = {p.name for p in self.pools}
        self.pools += [p for p in other.pools if p.name not in names]
        self.default = self.default or other.default
        self.wanted = self.wanted or other.wanted
        self.standalone += other.standalone

    @property
    def empty(self) -> bool:
        return not (self.pools or self.default or self.wanted or self.standalone)

    def fleet(self) -> Fleet:
        """The fleet: the named configurations and the standalone files as pools by the
        ``nvidia.com/device-plugin.config`` label; the default configuration, else the
        one the ClusterPolicy names, else the only standalone file (the plugin's
        "single" fallback)."""
        names = {p.name for p in self.pools}
        pools = self.pools + [p for p in self.standalone if p.name not in names]
        default = self.default
        if default is None and self.wanted is not None:
            default = next((p.model for p in pools if p.name == _pool_name(self.wanted)), None)
        if default is None and len(self.standalone) == 1 and self.wanted is None:
            default = self.standalone[0].model
        if default is not None and default.kind == MIG_SINGLE:
            default = _whole_gpus(default)
        return Fleet(tuple(pools), default or ASSUMED)


def _pool_name(config: str) -> str:
    return f"{CONFIG_LABEL}={config}"


def read_documents(data: bytes, display: str) -> Found:
    """What the YAML documents of one file define."""
    import os

    from dra_migrate.manifests import compose, sources, trees
    from dra_migrate.report.findings import InputProblem

    found = Found()
    try:
        docs = compose.parse(sources.decode(display, data))
    except InputProblem:
        return found
    for doc in docs:
        if doc.root is None:
            continue
        line = trees.position(doc.root)[0]
        obj = trees.to_data(doc.root)
        if isinstance(obj, Mapping):
            found.add(_object(obj, f"{display}:{line}", os.path.basename(display)))
    return found


def _get(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


def _object(obj: Mapping[str, Any], where: str, file_name: str) -> Found:
    kind = obj.get("kind")
    if kind == "ConfigMap":
        data = obj.get("data")
        if not isinstance(data, Mapping):
            return Found()
        name = _get(obj, "metadata", "name") or "ConfigMap"
        return _configs(data, None, f"{where} ConfigMap {name}")
    if kind == "ClusterPolicy":
        return _operator(_get(obj, "spec"), f"{where} ClusterPolicy")
    if kind is not None:
        return Found()
    if isinstance(_get(obj, "config", "map"), Mapping):  # the device plugin's chart
        return _configs(
            _get(obj, "config", "map"), _get(obj, "config", "default"), f"{where} config.map"
        )
    if isinstance(_get(obj, "devicePlugin"), Mapping):  # the GPU Operator's chart
        return _operator(obj, f"{where} GPU Operator values")
    if "version" in obj and ("sharing" in obj or "flags" in obj):  # a config file itself
        try:
            model = model_from_config(obj, where)
        except NotAConfig:
            return Found()
        pool = Pool(_pool_name(file_name), ((CONFIG_LABEL, frozenset([file_name])),), model)
        return Found(standalone=[pool])
    return Found()


def _operator(spec: Any, where: str) -> Found:
    data = _get(spec, "devicePlugin", "config", "data")
    default_name = _get(spec, "devicePlugin", "config", "default")
    if isinstance(data, Mapping):
        return _configs(data, default_name, f"{where} devicePlugin.config.data")
    # the configurations are in a ConfigMap of their own (devicePlugin.config.name)
    return Found(wanted=default_name if isinstance(default_name, str) else None)


def _configs(data: Mapping[str, Any], default: Any, where: str) -> Found:
    pools, model = pools_from_configs(data, default if isinstance(default, str) else None, where)
    return Found(pools=pools, default=_whole_gpus(model) if model else None)


def _whole_gpus(model: SharingModel) -> SharingModel:
    """A default configuration's model: migStrategy single on a node without MIG
    advertises whole GPUs, and only the product label (-MIG-<profile>) says a node has
    slices."""
    if model.kind != MIG_SINGLE:
        return model
    return SharingModel(source=model.source + " (migStrategy single: whole GPUs where MIG is off)")


# --- the configuration ---------------------------------------------------------------


def fleet_from_config(data: Any, display: str) -> Fleet:
    """``sharing:`` of ``.dra-migrate.yaml`` (the schema has checked its shape)."""
    if not isinstance(data, Mapping):
        return Fleet()
    pools = []
    for i, entry in enumerate(data.get("pools") or ()):
        selector = tuple(
            (str(k), frozenset([v] if isinstance(v, str) else v))
            for k, v in sorted(entry["nodeSelector"].items())
        )
        model = _configured(entry, f"{display} sharing.pools[{i}]")
        name = entry.get("name") or ", ".join(f"{k}={'|'.join(sorted(v))}" for k, v in selector)
        pools.append(Pool(name, selector, model))
    default = data.get("default")
    return Fleet(
        tuple(pools),
        _configured(default, f"{display} sharing.default") if default else ASSUMED,
    )


def _configured(entry: Mapping[str, Any], source: str) -> SharingModel:
    kind = entry["strategy"]
    fail = entry.get("failRequestsGreaterThanOne")
    return SharingModel(
        kind,
        int(entry.get("replicas") or (1 if kind == EXCLUSIVE else 0)),
        renamed=bool(entry.get("renameByDefault", False)),
        fail_over_one=(fail is not False) if kind == MPS else bool(fail),
        per_gpu=bool(entry.get("perGpu", False)),
        resources=tuple(entry.get("resources") or ()),
        profile=str(entry.get("profile") or ""),
        source=source,
        packed=entry.get("allocationPolicy") == "packed",
    )


# --- a node of the cluster ------------------------------------------------------------


def node_model(labels: Mapping[str, str], allocatable: Mapping[str, str]) -> SharingModel | None:
    """The model of one node: what GFD's labels say; else, where GFD counted the GPUs
    (``nvidia.com/gpu.count``), allocatable ``nvidia.com/gpu`` a whole multiple of it
    (the device plugin advertises each GPU ``replicas`` times); None when neither says."""
    name = labels.get("kubernetes.io/hostname") or "the node"
    found = model_from_labels(labels, f"node {name} labels")
    # the shares are nvidia.com/gpu.shared (renameByDefault, time-slicing and MPS alike):
    # the labels do not say it, the allocatable does (a name the plugin advertised before
    # may stay at 0)
    renamed = _int(allocatable.get(GPU + SHARED_SUFFIX)) > 0 and not _int(allocatable.get(GPU))
    if found is not None:
        return dataclasses.replace(found, renamed=True) if found.shared and renamed else found
    count = _int(labels.get(COUNT_LABEL))
    advertised = _int(allocatable.get(GPU)) or _int(allocatable.get(GPU + SHARED_SUFFIX))
    if count > 0 and advertised > count and advertised % count == 0:
        return SharingModel(
            TIME_SLICING,
            advertised // count,
            renamed=renamed,
            source=f"node {name}: allocatable {advertised} for {count} GPU(s)",
        )
    return None


def node_sharing(labels: Mapping[str, str], allocatable: Mapping[str, str]) -> str:
    """``node_model`` as the inventory shows it: "" for whole GPUs or when unknown."""
    model = node_model(labels, allocatable)
    return "" if model is None or model.kind == EXCLUSIVE else model.describe()


# Labels that name a node pool, most telling first: the device plugin's per-node
# configuration, then the pools of provisioners and managed node groups.
POOL_LABELS = (
    CONFIG_LABEL,
    "karpenter.sh/nodepool",
    "NodePool",
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool",
    "node.kubernetes.io/instance-type",
)
HOSTNAME = "kubernetes.io/hostname"


def fleet_from_nodes(
    nodes: Iterable[tuple[str, Mapping[str, str], Mapping[str, str]]],
) -> Fleet:
    """The pools a cluster's GPU nodes (name, labels, allocatable) make: nodes grouped
    by the model their labels say (``node_model``), each group selected by the first
    pool label whose values no other group's nodes carry, else by host name. When
    every GPU node says its model, the default is whole GPUs where some node has them
    (a shared pool is chosen by its labels), else the one shared model."""
    groups: dict[SharingModel, list[tuple[str, Mapping[str, str]]]] = {}
    unknown = 0
    for name, labels, allocatable in nodes:
        if not any(k.startswith("nvidia.com/") for k in allocatable) and not any(
            k.startswith("nvidia.com/gpu.") for k in labels
        ):
            continue  # not an NVIDIA GPU node
        model = node_model(labels, allocatable)
        if model is None:
            unknown += 1
            continue
        key = dataclasses.replace(model, source="")
        groups.setdefault(key, []).append((name, labels))
    pools: list[Pool] = []
    for key, members in sorted(groups.items(), key=lambda g: g[0].kind != EXCLUSIVE):
        others = {
            (label, labels.get(label))
            for other, rest in groups.items()
            if other != key
            for _n, labels in rest
            for label in POOL_LABELS
        }
        selector: tuple[tuple[str, frozenset[str]], ...] = ()
        for label in POOL_LABELS:
            values = {labels.get(label) for _n, labels in members}
            if None not in values and not any((label, v) in others for v in values):
                selector = ((label, frozenset(v for v in values if v is not None)),)
                break
        if not selector:
            selector = ((HOSTNAME, frozenset(n for n, _l in members)),)
        names = sorted(n for n, _l in members)
        source = f"the cluster's nodes ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"
        model = dataclasses.replace(key, source=source)
        pools.append(
            Pool(", ".join(f"{k}={'|'.join(sorted(v))}" for k, v in selector), selector, model)
        )
    # every GPU node known: a pod that selects no pool lands on whole GPUs where there
    # are any (shared pools are chosen by their labels), else on the one shared model
    default = ASSUMED
    if pools and not unknown:
        whole = [p.model for p in pools if p.model.kind == EXCLUSIVE]
        default = whole[0] if whole else (pools[0].model if len(pools) == 1 else ASSUMED)
    return Fleet(tuple(pools), default)
