"""Cluster mode's inventory: ``build_inventory`` turns what a reader gives (live or
dumps) into the ``ClusterInventory`` of ``report/inventory.py`` and its findings (GPU
workloads up their owner chains, nodes, DeviceClasses, devices, pending claims);
``slice_devices`` gives ``validate --cluster`` the devices of the current slices."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from dra_migrate.cluster.resources import (
    DRA_GROUP,
    OWNER_HOPS,
    Reader,
    as_dict,
    as_list,
    metadata_field,
)
from dra_migrate.convert.mapping import Config, Context
from dra_migrate.k8s.quantity import parse_quantity, whole_count
from dra_migrate.repo.sharing import node_sharing
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.inventory import (
    ClusterInventory,
    DeviceClassInfo,
    DeviceGroup,
    GpuRequest,
    NodeGpus,
    PendingClaim,
    Workload,
    age_text,
)
from dra_migrate.report.model import Report

if TYPE_CHECKING:
    from dra_migrate.cel import Device


DEFAULT_PENDING_AFTER = 300


# The attribute that names a device's product, per driver convention, first found wins.
PRODUCT_ATTRIBUTES = ("productName", "model", "marketingName", "family", "type")
# Node labels that name the GPU product (GPU feature discovery and its peers).
PRODUCT_LABELS = ("nvidia.com/gpu.product", "amd.com/gpu.product-name", "gpu.intel.com/product")
# Pod phases whose pods hold their devices.
HOLDING = ("Pending", "Running")


_DRIVER_SELECTOR = re.compile(r"""device\.driver\s*==\s*(["'])([^"']+)\1""")
_DURATION = re.compile(r"(\d+)(s|m|h|d)")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> int:
    """``90s``, ``5m``, ``1h30m``, ``2d`` (or plain seconds) as seconds."""
    text = text.strip()
    if len(text) > 40:
        raise ValueError(f"{text[:40]!r}... is too long for a duration")
    if text.isdigit():
        return int(text)
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"{text!r} is not a duration such as 90s, 5m, 1h30m or 2d")
    return sum(int(n) * _UNITS[u] for n, u in parts)


def build_inventory(
    reader: Reader,
    config: Config,
    namespace: str | None,
    pending_after: int = DEFAULT_PENDING_AFTER,
    now: datetime | None = None,
) -> tuple[ClusterInventory, list[Finding]]:
    """The inventory of a cluster (or of dumps), and the findings about it."""
    now = now or datetime.now(UTC)
    inventory = ClusterInventory(reader.source, namespace, None, pending_after)
    findings: list[Finding] = []
    inventory.workloads, inventory.pods_read = _workloads(reader, config, namespace)
    nodes, inventory.nodes_read = _nodes(reader, config)
    if reader.dra_version is None:
        findings.append(
            finding(
                "DRA606",
                "",
                0,
                0,
                f"{reader.dra_note}: inventory of the extended-resource side only",
                "DRA needs Kubernetes 1.32 or later with the resource.k8s.io API served",
            )
        )
    else:
        inventory.dra_version = f"{DRA_GROUP}/{reader.dra_version}"
        inventory.device_classes = _device_classes(reader)
        devices = slice_devices(reader)
        inventory.devices = _device_groups(devices)
        _attach_drivers(nodes, devices)
        inventory.pending_claims = _pending_claims(reader, namespace, pending_after, now)
    _served_twice(nodes, config, inventory.device_classes)
    inventory.nodes = [nodes[name] for name in sorted(nodes)]
    for node in inventory.nodes:
        if node.both:
            findings.append(
                finding(
                    "DRA607",
                    "",
                    0,
                    0,
                    f"node {node.name} has GPUs from the device plugin ({', '.join(node.both)}) "
                    f"and from the DRA driver ({', '.join(node.dra_drivers)}): the same GPUs can "
                    "be allocated twice, once to a pod's extended resource and once to a claim",
                    "run one of them per node: keep the device plugin's DaemonSet off the "
                    "nodes where the DRA driver publishes GPUs (node labels and selectors)",
                )
            )
    for claim in inventory.pending_claims:
        who = f" for {', '.join(claim.reserved_for)}" if claim.reserved_for else ""
        findings.append(
            finding(
                "DRA608",
                "",
                0,
                0,
                f"ResourceClaim {claim.namespace}/{claim.name}{who} has no allocation after "
                f"{age_text(claim.age_seconds)} (classes: {', '.join(claim.device_classes) or '-'})",
                "no device matches it, or all that match are taken: kubectl describe the pod "
                "and run dra-migrate validate --cluster on the claim",
            )
        )
    return inventory, findings


def _containers(spec: Mapping[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    for c in as_list(spec.get("initContainers")):
        if isinstance(c, dict):
            yield c, "sidecar" if c.get("restartPolicy") == "Always" else "init"
    for c in as_list(spec.get("containers")):
        if isinstance(c, dict):
            yield c, "app"


class _GpuNames:
    """``config.is_gpu`` once a resource name: a cluster repeats a few names many times."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.known: dict[str, bool] = {}

    def __call__(self, name: str) -> bool:
        found = self.known.get(name)
        if found is None:
            found = self.known[name] = self.config.is_gpu(name)
        return found


def _gpu_requests(pod: Mapping[str, Any], config: Config, is_gpu: _GpuNames) -> list[GpuRequest]:
    spec = as_dict(pod.get("spec"))
    ctx = Context(
        namespace=metadata_field(pod, "namespace"),
        labels={str(k): str(v) for k, v in as_dict(metadata_field(pod, "labels")).items()},
        node_selector={
            str(k): frozenset([str(v)]) for k, v in as_dict(spec.get("nodeSelector")).items()
        },
    )
    found: list[GpuRequest] = []
    for container, role in _containers(spec):
        resources = as_dict(container.get("resources"))
        limits = as_dict(resources.get("limits"))
        requests = as_dict(resources.get("requests"))
        for name in sorted({*limits, *requests}):
            if not is_gpu(str(name)):
                continue
            value = str(limits.get(name, requests.get(name)))
            choice = config.choose(str(name), ctx)
            found.append(
                GpuRequest(
                    str(container.get("name") or ""),
                    role,
                    str(name),
                    whole_count(value),
                    value,
                    choice.device_class if choice else None,
                )
            )
    return found


def _pod_gpus(requests: Sequence[GpuRequest]) -> dict[str, int]:
    """Devices a pod holds per resource, as the device plugin counts them:
    the larger of the biggest init container and the app containers with sidecars."""
    held: dict[str, int] = {}
    for resource in {r.resource for r in requests}:
        mine = [r for r in requests if r.resource == resource and r.count is not None]
        running = sum(r.count or 0 for r in mine if r.role != "init")
        init = max((r.count or 0 for r in mine if r.role == "init"), default=0)
        if max(running, init):
            held[resource] = max(running, init)
    return held


def _workloads(reader: Reader, config: Config, namespace: str | None) -> tuple[list[Workload], int]:
    owners: dict[tuple[str, str, str, str], tuple[str, str, str]] = {}
    by_key: dict[tuple[str, str, str, str], Workload] = {}
    nodes: dict[tuple[str, str, str, str], set[str]] = {}
    read = 0
    is_gpu = _GpuNames(config)
    for pod in reader.list("pods", namespace):
        read += 1
        requests = _gpu_requests(pod, config, is_gpu)
        if not requests:
            continue
        ns = str(metadata_field(pod, "namespace") or "")
        api_version, kind, name = _top_owner(reader, pod, ns, owners)
        key = (ns, api_version, kind, name)
        workload = by_key.get(key)
        if workload is None:
            workload = by_key[key] = Workload(ns, api_version, kind, name)
        workload.pods += 1
        phase = str(as_dict(pod.get("status")).get("phase") or "Unknown")
        workload.phases[phase] = workload.phases.get(phase, 0) + 1
        for request in requests:
            if request not in workload.requests:
                workload.requests.append(request)
        if phase in HOLDING:
            for resource, count in _pod_gpus(requests).items():
                workload.gpus[resource] = workload.gpus.get(resource, 0) + count
        node = as_dict(pod.get("spec")).get("nodeName")
        if isinstance(node, str) and node:
            nodes.setdefault(key, set()).add(node)
    for key, workload in by_key.items():
        workload.requests.sort()
        workload.nodes = sorted(nodes.get(key, ()))
    return [by_key[k] for k in sorted(by_key)], read


def _controller(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    for ref in as_list(metadata_field(obj, "ownerReferences")):
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def _top_owner(
    reader: Reader,
    pod: Mapping[str, Any],
    namespace: str,
    cache: dict[tuple[str, str, str, str], tuple[str, str, str]],
) -> tuple[str, str, str]:
    """(apiVersion, kind, name) of the workload at the top of the pod's owner references."""
    ref = _controller(pod)
    if ref is None:
        return "v1", "Pod", str(metadata_field(pod, "name") or "")
    chain: list[tuple[str, str, str, str]] = []
    top = (str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""), str(ref.get("name")))
    for _ in range(8):  # owner chains are short; a cycle must not loop forever
        api_version, kind, name = top
        key = (namespace, api_version, kind, name)
        if key in cache:
            top = cache[key]
            break
        chain.append(key)
        resource = OWNER_HOPS.get((api_version.rpartition("/")[0], kind))
        if resource is None:
            break
        owner = reader.get(resource, namespace, name)
        up = _controller(owner) if owner is not None else None
        if up is None:
            break
        top = (str(up.get("apiVersion") or ""), str(up.get("kind") or ""), str(up.get("name")))
    for key in chain:
        cache[key] = top
    return top


def _nodes(reader: Reader, config: Config) -> tuple[dict[str, NodeGpus], int]:
    nodes: dict[str, NodeGpus] = {}
    read = 0
    is_gpu = _GpuNames(config)
    for node in reader.list("nodes", None):
        read += 1
        status = as_dict(node.get("status"))
        capacity = {
            str(k): str(v) for k, v in as_dict(status.get("capacity")).items() if is_gpu(str(k))
        }
        allocatable = {
            str(k): str(v) for k, v in as_dict(status.get("allocatable")).items() if is_gpu(str(k))
        }
        labels = as_dict(metadata_field(node, "labels"))
        product = next((str(labels[k]) for k in PRODUCT_LABELS if labels.get(k)), None)
        name = str(metadata_field(node, "name") or "")
        nodes[name] = NodeGpus(name, product, capacity, allocatable)
        nodes[name].sharing = node_sharing({str(k): str(v) for k, v in labels.items()}, allocatable)
    for name in [n for n, v in nodes.items() if not v.capacity and not v.allocatable]:
        del nodes[name]  # kept back in _attach_drivers when a DRA driver serves it
    return nodes, read


def _device_classes(reader: Reader) -> list[DeviceClassInfo]:
    classes = []
    for obj in reader.list("deviceclasses", None):
        spec = as_dict(obj.get("spec"))
        selectors = tuple(
            str(as_dict(s.get("cel")).get("expression") or "")
            for s in as_list(spec.get("selectors"))
            if isinstance(s, dict) and isinstance(s.get("cel"), dict)
        )
        driver = next((m.group(2) for e in selectors if (m := _DRIVER_SELECTOR.search(e))), None)
        ext = spec.get("extendedResourceName")
        classes.append(
            DeviceClassInfo(
                str(metadata_field(obj, "name") or ""),
                selectors,
                str(ext) if isinstance(ext, str) and ext else None,
                driver,
            )
        )
    return sorted(classes, key=lambda c: c.name)


def current_slices(slices: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Slices of the newest generation of each pool: the scheduler ignores older ones."""
    kept = list(slices)
    newest: dict[tuple[str, str], int] = {}

    def pool(obj: Mapping[str, Any]) -> tuple[tuple[str, str], int]:
        spec = as_dict(obj.get("spec"))
        p = as_dict(spec.get("pool"))
        generation = p.get("generation")
        return (
            (str(spec.get("driver") or ""), str(p.get("name") or "")),
            generation if isinstance(generation, int) else 0,
        )

    for obj in kept:
        key, generation = pool(obj)
        newest[key] = max(newest.get(key, generation), generation)
    return [obj for obj in kept if pool(obj)[1] >= newest[pool(obj)[0]]]


def _device_groups(devices: Sequence[Device]) -> list[DeviceGroup]:
    counts: dict[tuple[str, str], list[int]] = {}
    nodes: dict[tuple[str, str], set[str]] = {}
    for device in devices:
        own = device.attributes.get(device.driver, {})
        product = next((str(own[a]) for a in PRODUCT_ATTRIBUTES if a in own), "(unnamed)")
        key = (device.driver, product)
        entry = counts.setdefault(key, [0, 0])
        entry[0] += 1
        if device.node is None:
            entry[1] += 1
        else:
            nodes.setdefault(key, set()).add(device.node)
    return sorted(
        DeviceGroup(driver, product, n, len(nodes.get((driver, product), ())), shared)
        for (driver, product), (n, shared) in counts.items()
    )


def _attach_drivers(nodes: dict[str, NodeGpus], devices: Sequence[Device]) -> None:
    drivers: dict[str, set[str]] = {}
    for device in devices:
        if device.node is None:
            continue
        drivers.setdefault(device.node, set()).add(device.driver)
        node = nodes.get(device.node)
        if node is None:
            node = nodes[device.node] = NodeGpus(device.node, None)
        node.dra_devices += 1
    for name, found in drivers.items():
        nodes[name].dra_drivers = sorted(found)


def _served_twice(
    nodes: Mapping[str, NodeGpus], config: Config, classes: Sequence[DeviceClassInfo]
) -> None:
    """Resources the device plugin advertises on a node whose DRA driver serves that class."""
    from dra_migrate.k8s.catalog import load_catalog

    class_driver = {c.name: c.driver for c in load_catalog().device_classes}
    class_driver.update({c.name: c.driver for c in classes if c.driver})
    for node in nodes.values():
        if not node.dra_drivers:
            continue
        for resource, value in sorted(node.capacity.items()):
            amount = parse_quantity(value)
            if not amount:
                continue
            choice = config.choose(resource, Context())
            driver = class_driver.get(choice.device_class) if choice else None
            if driver is not None and driver in node.dra_drivers:
                node.both.append(resource)


def _timestamp(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _pending_claims(
    reader: Reader, namespace: str | None, pending_after: int, now: datetime
) -> list[PendingClaim]:
    pending = []
    for claim in reader.list("resourceclaims", namespace):
        status = as_dict(claim.get("status"))
        if status.get("allocation"):
            continue
        created = _timestamp(metadata_field(claim, "creationTimestamp"))
        if created is None:
            continue
        age = int((now - created).total_seconds())
        if age < pending_after:
            continue
        classes: list[str] = []
        for request in as_list(as_dict(as_dict(claim.get("spec")).get("devices")).get("requests")):
            if not isinstance(request, dict):
                continue
            exact = as_dict(request.get("exactly")) or request  # v1/v1beta2, or v1beta1 flat
            options = [
                exact,
                *(o for o in as_list(request.get("firstAvailable")) if isinstance(o, dict)),
            ]
            for option in options:
                name = option.get("deviceClassName")
                if isinstance(name, str) and name and name not in classes:
                    classes.append(name)
        consumers = tuple(
            f"{c.get('resource', 'pods')}/{c.get('name')}"
            for c in as_list(status.get("reservedFor"))
            if isinstance(c, dict)
        )
        pending.append(
            PendingClaim(
                str(metadata_field(claim, "namespace") or ""),
                str(metadata_field(claim, "name") or ""),
                age,
                tuple(classes),
                consumers,
            )
        )
    return sorted(pending)


def slice_devices(reader: Reader) -> list[Device]:
    """The devices of the cluster's current ResourceSlices, for ``validate --cluster``."""
    from dra_migrate.cel import devices_from_resource_slices

    if reader.dra_version is None:
        return []
    return devices_from_resource_slices(current_slices(reader.list("resourceslices", None)))


def cluster_classes(reader: Reader) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The cluster's DeviceClasses as name and CEL selectors, for ``validate --cluster``:
    a request may name a class that only the cluster defines, and its devices are the
    ones that class selects."""
    if reader.dra_version is None:
        return ()
    found = []
    for obj in reader.list("deviceclasses", None):
        name = (obj.get("metadata") or {}).get("name")
        spec = obj.get("spec") or {}
        if not isinstance(name, str) or not isinstance(spec, dict):
            continue
        selectors = spec.get("selectors")
        cels = [s.get("cel") for s in selectors or () if isinstance(s, dict)]
        expressions = tuple(
            c["expression"]
            for c in cels
            if isinstance(c, dict) and isinstance(c.get("expression"), str)
        )
        found.append((name, expressions))
    return tuple(sorted(found))


def inventory_report(
    reader: Reader,
    config: Config,
    namespace: str | None,
    pending_after: int = DEFAULT_PENDING_AFTER,
    now: datetime | None = None,
) -> Report:
    """``dra-migrate inventory``: the inventory in the one report model."""
    inventory, findings = build_inventory(reader, config, namespace, pending_after, now)
    files = list(getattr(reader, "files", []))
    return Report(files=files, findings=findings, cluster=inventory)
