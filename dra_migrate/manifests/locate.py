"""Stage 3, locate: every pod spec in a document, with its containers.

Known kinds come from the table in ``kinds.py``; anything else that holds a
mapping with a ``containers`` list is found by the generic fallback, and the
fallback also runs over known kinds so that a pod template the table misses
is still found (and reported as such).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from yaml.nodes import MappingNode, Node

from dra_migrate.manifests import compose, kinds, sources, trees
from dra_migrate.manifests.kinds import ARGO, KSERVE, KSERVE_CONTAINER_FIELDS, Kind, Site
from dra_migrate.manifests.sources import Document
from dra_migrate.manifests.trees import entries, get, get_path, items, scalar
from dra_migrate.report.findings import InputProblem

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

    _Steps = tuple[Any, str | int]  # (the parent's steps or None, this key or index)

APP, INIT, SIDECAR = "app", "init", "sidecar"


@dataclass(frozen=True, slots=True)
class Workload:
    """A Kubernetes object (a document, or an item of a ``kind: List``)."""

    doc: Document
    root: MappingNode
    api_version: str
    kind: str
    name: str
    namespace: str | None
    labels: dict[str, str]
    entry: Kind | None
    list_item: bool = False

    @property
    def display(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"

    @property
    def position(self) -> tuple[int, int]:
        """Where a finding about the whole object points: its name (``metadata.name``,
        else ``generateName``), else its ``kind``, else its first key; never the
        file's 1:1 when the object has a better place."""
        meta = get(self.root, "metadata")
        for node in (get(meta, "name"), get(meta, "generateName"), get(self.root, "kind")):
            if node is not None:
                return trees.position(node)
        return trees.position(self.root)


@dataclass(frozen=True, slots=True)
class Container:
    node: MappingNode
    name: str
    role: str  # app, init or sidecar
    field: str  # where it sits in the pod spec, e.g. "containers[1]" or "model"


@dataclass(frozen=True, slots=True)
class PodSite:
    workload: Workload
    pod: MappingNode  # the mapping that gets resourceClaims (an Argo template for ARGO)
    path: str  # from the object root, indices resolved: spec.workerGroupSpecs[0].template.spec
    label: str  # names the site in generated names; "" for the only one
    style: str
    containers: list[Container]
    template_labels: dict[str, str]
    group: MappingNode | None = None  # KubeRay: the head or worker group (any kind)
    generic: bool = False

    @property
    def node_selector(self) -> dict[str, frozenset[str]]:
        return node_selector(self.pod)


def objects(doc: Document) -> Iterator[Workload]:
    """The Kubernetes objects of a document (items of a List one by one)."""
    root = doc.root
    if not isinstance(root, MappingNode):
        return
    kind = scalar(get(root, "kind")) or ""
    if kind == "List" or (kind.endswith("List") and trees.is_seq(get(root, "items"))):
        for item in items(get(root, "items")):
            if isinstance(item, MappingNode):
                yield _workload(doc, item, list_item=True)
        return
    yield _workload(doc, root)


def _workload(doc: Document, root: MappingNode, list_item: bool = False) -> Workload:
    api_version = scalar(get(root, "apiVersion")) or ""
    kind = scalar(get(root, "kind")) or ""
    meta = get(root, "metadata")
    labels = trees.to_python(get(meta, "labels"))
    return Workload(
        doc=doc,
        root=root,
        api_version=api_version,
        kind=kind,
        name=scalar(get(meta, "name")) or scalar(get(meta, "generateName")) or "",
        namespace=scalar(get(meta, "namespace")) or None,
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {},
        entry=kinds.lookup(api_version, kind),
        list_item=list_item,
    )


def pod_sites(workload: Workload) -> list[PodSite]:
    """Every pod spec of the object: from the kind table, then the fallback."""
    sites: list[PodSite] = []
    if workload.entry is not None:
        for site in workload.entry.sites:
            sites.extend(_walk_site(workload, site))
    if not workload.kind:
        return sites  # not a Kubernetes object (a values or config file): reported, not converted
    seen = {id(s.pod) for s in sites}
    # Kinds in the table whose pod specs all sit where the table says get no
    # fallback hits; a pod spec elsewhere is still found and reported.
    for path, node in _generic(workload.root):
        if id(node) in seen or any(_inside(node, s.pod) for s in sites):
            continue
        seen.add(id(node))
        label = _generic_label(path, workload.root)
        sites.append(_site(workload, node, path, label, kinds.POD, generic=True))
    return sites


def _inside(node: Node, outer: Node) -> bool:
    return bool(
        outer.start_mark.index <= node.start_mark.index
        and node.end_mark.index <= outer.end_mark.index
    )


# Fields that name an item of a list of pod templates (roles, groups, replicas).
_ITEM_NAMES = ("name", "role", "roleName", "groupName", "componentName", "replicaType")


def _generic_label(path: str, root: Node | None = None) -> str:
    """The role a generic pod spec plays, for generated names: the name of the list item
    it sits in (``prefill``, ``decode``), else the last steps of its path."""
    parts = [p for p in path.replace("[", ".").replace("]", "").split(".") if p]
    node = root
    named = ""
    for part in parts:
        if node is None:
            break
        if part.isdigit():
            items_ = items(node)
            node = items_[int(part)] if int(part) < len(items_) else None
            ident = next((scalar(get(node, f)) for f in _ITEM_NAMES if scalar(get(node, f))), None)
            if ident:
                named = ident
        else:
            node = get(node, part)
    if named:
        return named.lower()
    words = [p for p in parts if p not in ("spec", "template", "podTemplate", "pod")]
    return "-".join(words[-2:]) if words else ""


def _generic(node: Node) -> Iterator[tuple[str, MappingNode]]:
    """Mappings that look like pod specs: a ``containers`` list of mappings with an image."""
    # a node's path is kept as (parent's, key or index) and spelled out only for the
    # pod specs found: most nodes of a document are none
    stack: list[tuple[_Steps, Node]] = [((None, ""), node)]
    visited: set[int] = set()
    while stack:
        where, current = stack.pop()
        if id(current) in visited:
            continue
        visited.add(id(current))
        if isinstance(current, MappingNode):
            containers = get(current, "containers")
            if any(
                isinstance(c, MappingNode) and get(c, "image") is not None
                for c in items(containers)
            ):
                yield _spelled(where), current
                continue
            for key, _k, value in reversed(list(entries(current))):
                stack.append(((where, key), value))
        elif trees.is_seq(current):
            for i, item in reversed(list(enumerate(items(current)))):
                stack.append(((where, i), item))


def _spelled(steps: _Steps) -> str:
    """``spec.template.spec``, ``spec.workerGroupSpecs[0].template.spec``."""
    parts: list[str | int] = []
    current: _Steps | None = steps
    while current is not None:
        current, step = current
        parts.append(step)
    path = ""
    for step in reversed(parts):
        if isinstance(step, int):
            path += f"[{step}]"
        else:
            path = f"{path}.{step}" if path else step
    return path


def _walk_site(workload: Workload, site: Site) -> Iterator[PodSite]:
    steps = [s for s in re.split(r"\.|(?=\[)", site.path) if s]
    frontier: list[tuple[Node, str, str]] = [(workload.root, "", "")]
    for step in steps:
        following: list[tuple[Node, str, str]] = []
        for node, path, name in frontier:
            if step == "*":
                for key, _k, value in entries(node):
                    following.append((value, f"{path}.{key}", key))
            elif step.startswith("["):
                key_field = step[1:-1]
                for i, item in enumerate(items(node)):
                    ident = scalar(get(item, key_field)) if key_field else None
                    following.append((item, f"{path}[{i}]", ident or str(i)))
            else:
                child = get(node, step)
                if child is not None:
                    following.append((child, f"{path}.{step}" if path else step, name))
        frontier = following
    for node, path, name in frontier:
        if isinstance(node, MappingNode):
            label = site.label.replace("{}", name.lower()) if "{}" in site.label else site.label
            yield _site(workload, node, path, label, site.style)


# A KubeRay head or worker group's pod template: RayCluster, RayJob, RayService and every
# kind built on KubeRay's cluster spec (aibrix's RayClusterFleet, or one the fallback finds).
_RAY_GROUP = re.compile(r"(^|\.)(headGroupSpec|workerGroupSpecs\[\d+\])\.template\.spec$")


def _site(
    workload: Workload, pod: MappingNode, path: str, label: str, style: str, generic: bool = False
) -> PodSite:
    template_labels: dict[str, str] = {}
    group: MappingNode | None = None
    parent_path = path.rsplit(".", 1)[0] if "." in path else ""
    parent = node_at(workload.root, parent_path) if parent_path else None
    if path.endswith(".spec") and isinstance(parent, MappingNode):
        labels = trees.to_python(get_path(parent, "metadata", "labels"))
        if isinstance(labels, dict):
            template_labels = {str(k): str(v) for k, v in labels.items()}
    if _RAY_GROUP.search(path):
        group_node = node_at(workload.root, path[: -len(".template.spec")])
        group = group_node if isinstance(group_node, MappingNode) else None
    return PodSite(
        workload=workload,
        pod=pod,
        path=path,
        label=label,
        style=style,
        containers=list(_containers(pod, style)),
        template_labels=template_labels,
        group=group,
        generic=generic,
    )


def node_at(root: Node, path: str) -> Node | None:
    """The node at a dotted path with indices (``spec.workerGroupSpecs[0].template``)."""
    node: Node | None = root
    for part in path.replace("]", "").split("."):
        if not part:
            continue
        key, _, index = part.partition("[")
        if key:
            node = get(node, key)
        if index and node is not None:
            seq = items(node)
            node = seq[int(index)] if int(index) < len(seq) else None
        if node is None:
            return None
    return node


def _containers(pod: MappingNode, style: str) -> Iterator[Container]:
    if style == ARGO:
        yield from _argo_containers(pod)
        return
    for i, node in enumerate(items(get(pod, "initContainers"))):
        if isinstance(node, MappingNode):
            role = SIDECAR if scalar(get(node, "restartPolicy")) == "Always" else INIT
            yield Container(node, scalar(get(node, "name")) or "", role, f"initContainers[{i}]")
    for i, node in enumerate(items(get(pod, "containers"))):
        if isinstance(node, MappingNode):
            yield Container(node, scalar(get(node, "name")) or "", APP, f"containers[{i}]")
    if style == KSERVE:
        for name in KSERVE_CONTAINER_FIELDS:
            single = get(pod, name)
            if isinstance(single, MappingNode):
                yield Container(
                    single, scalar(get(single, "name")) or "kserve-container", APP, name
                )


def _argo_containers(template: MappingNode) -> Iterator[Container]:
    for i, node in enumerate(items(get(template, "initContainers"))):
        if isinstance(node, MappingNode):
            yield Container(node, scalar(get(node, "name")) or "", INIT, f"initContainers[{i}]")
    for name in ("container", "script"):
        single = get(template, name)
        if isinstance(single, MappingNode):
            yield Container(single, scalar(get(single, "name")) or "main", APP, name)
    for i, node in enumerate(items(get_path(template, "containerSet", "containers"))):
        if isinstance(node, MappingNode):
            yield Container(
                node, scalar(get(node, "name")) or "", APP, f"containerSet.containers[{i}]"
            )
    for i, node in enumerate(items(get(template, "sidecars"))):
        if isinstance(node, MappingNode):
            yield Container(node, scalar(get(node, "name")) or "", SIDECAR, f"sidecars[{i}]")


def required_labels(pod: MappingNode) -> Iterator[tuple[str, str, tuple[str, ...], Node]]:
    """(label, operator, values, the key's node) of each node label the pod spec
    requires, as written: ``nodeSelector`` entries (operator "") and the required node
    affinity's matchExpressions, whatever their operator (In, NotIn, Exists, ...)."""
    for key, key_node, value in entries(get(pod, "nodeSelector")):
        text = scalar(value)
        yield key, "", (text,) if text else (), key_node
    terms = get_path(
        pod,
        "affinity",
        "nodeAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
        "nodeSelectorTerms",
    )
    for term in items(terms):
        for expr in items(get(term, "matchExpressions")):
            expr_key = get(expr, "key")
            label = scalar(expr_key) or ""
            if not label or expr_key is None:
                continue
            values = tuple(v for v in (scalar(x) for x in items(get(expr, "values"))) if v)
            yield label, scalar(get(expr, "operator")) or "?", values, expr_key


def node_selector(pod: MappingNode) -> dict[str, frozenset[str]]:
    """Label key -> the values a pod may land on, from nodeSelector and required affinity."""
    result: dict[str, frozenset[str]] = {}
    for key, value in (trees.to_python(get(pod, "nodeSelector")) or {}).items():
        if isinstance(value, str):
            result[str(key)] = frozenset([value])
    terms = items(
        get_path(
            pod,
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        )
    )
    # Terms are ORed: a key constrains the pod only when every term constrains it.
    per_term: list[dict[str, frozenset[str]]] = []
    for term in terms:
        found: dict[str, frozenset[str]] = {}
        for expr in items(get(term, "matchExpressions")):
            if scalar(get(expr, "operator")) == "In":
                key = scalar(get(expr, "key")) or ""
                values = frozenset(v for v in (scalar(x) for x in items(get(expr, "values"))) if v)
                found[key] = found[key] & values if key in found else values
        per_term.append(found)
    if per_term:
        common = set.intersection(*(set(t) for t in per_term))
        for key in common:
            union = frozenset().union(*(t[key] for t in per_term))
            result[key] = result[key] & union if key in result else union
    return result


def defined_templates(data: bytes) -> set[tuple[str, str]]:
    """(namespace, name) of the ResourceClaimTemplates a file defines already."""
    try:
        docs = compose.parse(sources.decode("", data), ("ResourceClaimTemplate",))
    except InputProblem:
        return set()
    return {
        (obj.namespace or "", obj.name)
        for doc in docs
        for obj in objects(doc)
        if obj.kind == "ResourceClaimTemplate"
    }


def defined_bridges(data: bytes, path: str = "") -> list[tuple[str, str, int, int]]:
    """(name, extendedResourceName, line, col) of each DeviceClass the file defines with
    ``spec.extendedResourceName`` (the bridge, KEP-5004), where that field is."""
    try:
        docs = compose.parse(sources.decode(path, data), ("extendedResourceName",))
    except InputProblem:
        return []
    found = []
    for doc in docs:
        for obj in objects(doc):
            if obj.kind != "DeviceClass" or not obj.api_version.startswith("resource.k8s.io/"):
                continue
            node = get_path(obj.root, "spec", "extendedResourceName")
            resource = scalar(node) if node is not None else None
            if node is not None and resource:
                line, col = trees.position(node)
                found.append((obj.name, resource, line, col))
    return found
