"""Kustomize patches rewritten for a converted base (``overlays.py`` drives them).

Each GPU patch of an overlay is planned against the base it patches: the base's
pod spec with the counts the patch sets goes through the planner as ``convert``
would plan the built object, and the patch is rewritten to point the pod's claim
at the template that plan makes (strategic-merge patches lose their GPU keys and
repeat the base's ``resourceClaims``, which kustomize replaces whole; JSON 6902
operations are rewritten in place). A construct this cannot rewrite safely raises
``Blocked`` with where it is and what it is.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from dra_migrate.convert.edit import apply_regions
from dra_migrate.convert.mapping import Settings
from dra_migrate.convert.naming import Names
from dra_migrate.convert.operations import AppendEntry, Edit, RemoveEntry
from dra_migrate.convert.plan import PodPlan, plan_site
from dra_migrate.k8s.names import DNS_SUBDOMAIN
from dra_migrate.manifests import compose, locate, sources
from dra_migrate.manifests.sources import Document, Source
from dra_migrate.manifests.trees import entries, get, items, position, to_data
from dra_migrate.repo import roles
from dra_migrate.report.findings import Finding, InputProblem
from dra_migrate.report.model import OVERLAY_UNIT, FileResult, Status

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

SECTIONS = ("limits", "requests")


class Blocked(Exception):
    """A construct that stops the unit: where it is and what it is."""

    def __init__(self, path: str, line: int, col: int, message: str) -> None:
        super().__init__(message)
        self.path, self.line, self.col, self.message = path, line, col, message


class Bridging(Exception):
    """The patched base is bridged by the strategy (DRA514): the patch keeps its extended
    resource too, as it is."""


# what the strategy said of a base pod spec it bridges (pipeline/one_file.py)
BRIDGED, NOT_SERVED = "DRA514", ("DRA515", "DRA516")


@dataclass(frozen=True, slots=True)
class Base:
    """A base workload an overlay patches: its file, its object before the run and, when
    the run converts it, after (None: it asks for no GPU, so the overlay adds them)."""

    real: str
    path: str  # as shown
    before: locate.Workload
    after: locate.Workload | None
    original: bytes | None = None  # the bytes the run read, when its result holds them


@dataclass(slots=True)
class Unit:
    """What one overlay's conversion writes. Not frozen: filled in patch by patch."""

    kustomization: str  # real path
    display: str
    bases: set[str] = field(default_factory=set)  # real paths of the base files it needs
    patch_files: set[str] = field(default_factory=set)  # its GPU patches' files (or itself)
    where: dict[str, tuple[int, int]] = field(default_factory=dict)  # patch -> first GPU key
    files: dict[str, tuple[str, bytes, bytes | None]] = field(default_factory=dict)
    templates: list[dict[str, Any]] = field(default_factory=list)  # new, for the overlay
    replaced: list[dict[str, Any]] = field(default_factory=list)  # base templates deleted
    notes: list[Finding] = field(default_factory=list)
    stopped: Blocked | None = None  # what kept it (and its bases) as it is
    bridged: set[str] = field(default_factory=set)  # patches left: their base is bridged

    @property
    def label(self) -> str:
        """The unit as a write's findings name it: its kind and its kustomization."""
        return OVERLAY_UNIT + self.display


@dataclass(frozen=True, slots=True)
class Patch:
    """One GPU patch entry of a kustomization."""

    entry: Node  # the list item in the kustomization
    text: str  # the patch's text
    real: str | None  # its file; None: inline in the kustomization
    display: str
    json6902: bool
    target: tuple[str, str] | None  # (kind, name) from the entry's target


# --- the bases --------------------------------------------------------------------


class Bases:
    """The workloads of the files an overlay builds, by (kind, name): converted by the
    run, or asking for no GPU (read here: such a file is no candidate of the run)."""

    def __init__(self, built: set[str], results: dict[str, FileResult], in_run: set[str]) -> None:
        self.built, self.results, self.in_run = built, results, in_run
        self.found: dict[tuple[str, str], Base] | None = None
        self.held: dict[tuple[str, str], str] = {}  # kept by their own findings
        self.outside: dict[tuple[str, str], str] = {}  # in files the run was not given
        self.bridged: dict[tuple[str, str], str] = {}  # the strategy's code, by workload

    def get(self, kind: str, name: str) -> Base | None:
        if self.found is None:
            self.found = {}
            for real in sorted(self.built):
                result = self.results.get(real)
                shown = result.path if result is not None else real
                if result is None and real not in self.in_run:
                    for obj in _objects(real, None):
                        self.outside.setdefault((obj.kind, obj.name), real)
                    continue
                original = result.original if result is not None else None
                before = _objects(real, original)
                if result is not None:
                    self._bridges(result, before)
                if result is not None and result.status is not Status.UNCHANGED:
                    if result.status is not Status.CHANGED or result.converted is None:
                        for obj in before:
                            self.held.setdefault((obj.kind, obj.name), shown)
                        continue
                    after = {(o.kind, o.name): o for o in _objects(real, result.converted)}
                else:
                    after = {}
                for obj in before:
                    key = (obj.kind, obj.name)
                    self.found.setdefault(key, Base(real, shown, obj, after.get(key), original))
        return self.found.get((kind, name))

    def _bridges(self, result: FileResult, objects: list[locate.Workload]) -> None:
        """The workloads of the file the strategy bridged: its DRA514 to DRA516 lie in
        their documents."""
        for f in result.findings:
            if f.code != BRIDGED and f.code not in NOT_SERVED:
                continue
            for obj in objects:
                start, end = obj.root.start_mark.line + 1, obj.root.end_mark.line + 1
                if start <= f.line <= end:
                    self.bridged.setdefault((obj.kind, obj.name), f.code)

    def converted(self) -> set[str]:
        return {r for r in self.built if (f := self.results.get(r)) and f.status is Status.CHANGED}


def _objects(real: str, data: bytes | None) -> list[locate.Workload]:
    if data is None:
        data = roles.read_bytes(real)
    try:
        docs = compose.parse(sources.decode(real, data))
    except InputProblem:
        return []
    return [o for d in docs for o in locate.objects(d)]


# --- strategic-merge patches ------------------------------------------------------


def strategic(
    unit: Unit, patch: Patch, docs: list[Document], bases: Bases, settings: Settings
) -> list[Edit]:
    edits: list[Edit] = []
    for doc in docs:
        for obj in locate.objects(doc):
            keys = _gpu_keys(obj, settings)
            if not keys:
                continue
            _no_directives(obj.root, patch.display)
            kind, name = patch.target or (obj.kind, obj.name)
            base = base_of(bases, kind, name, patch.display, obj.root)
            unit.bases.add(base.real)
            for site in locate.pod_sites(obj):
                site_keys = [k for k in keys if _inside(k.key, site.pod)]
                if not site_keys:
                    continue
                if patch.real is not None:  # (an inline patch's lines are its own)
                    unit.where.setdefault(patch.display, position(site_keys[0].key))
                if get(site.pod, "resourceClaims") is not None:
                    line, col = position(get(site.pod, "resourceClaims") or site.pod)
                    raise Blocked(patch.display, line, col, "the patch sets resourceClaims itself")
                sets = [k.set() for k in site_keys]
                before, planned = replan(base, site.path, sets, settings, patch.display)
                after = planned.plan
                more = extras(base, site.path, planned, site.pod, site.pod, patch.display)
                if before is not None and spec_of(before.plan.template_object) == spec_of(
                    after.template_object
                ):
                    edits.extend(_removals(site_keys, keep_resources=False))
                    edits.extend(AppendEntry(site.pod, k, v) for k, v in more.items())
                    continue  # the base's claim asks for what the patch sets
                edits.extend(_removals(site_keys, keep_resources=before is None))
                claims = _pod_claims(base, site.path, before)
                template = dict(after.template_object)
                new_name = record(unit, after.claim, template, claims, before is not None)
                edits.append(
                    AppendEntry(
                        site.pod,
                        "resourceClaims",
                        _pointed(claims, after.claim, new_name),
                    )
                )
                edits.extend(AppendEntry(site.pod, k, v) for k, v in more.items())
                if before is None:  # the base asks for no GPU: the containers get claims
                    edits.extend(_container_claims(site_keys, after, patch.display))
    return edits


def _pod_claims(base: Base, path: str, before: _Planned | None) -> list[Any]:
    """The pod's resourceClaims as the converted base has them (as the base has them
    when it asks for no GPU): a strategic merge replaces the list whole."""
    obj = base.after if before is not None and base.after is not None else base.before
    return [to_data(c) for c in items(get(pod_of(obj, path), "resourceClaims"))]


def _pointed(claims: list[Any], claim: str, template: str) -> list[Any]:
    entry = {"name": claim, "resourceClaimTemplateName": template}
    if not any(isinstance(c, dict) and c.get("name") == claim for c in claims):
        return [*claims, entry]
    return [entry if isinstance(c, dict) and c.get("name") == claim else c for c in claims]


def _container_claims(keys: list[_Key], plan: PodPlan, display: str) -> list[Edit]:
    """``resources.claims`` of the patch's containers, for a base that asked for no GPU."""
    edits: list[Edit] = []
    done: set[int] = set()
    for key in keys:
        if id(key.resources) in done:
            continue
        done.add(id(key.resources))
        names = plan.refs.get(key.container) or []
        if get(key.resources, "claims") is not None:
            line, col = position(key.resources)
            raise Blocked(display, line, col, "the patch sets resources.claims itself")
        claims = [{"name": plan.claim, "request": n} for n in names]
        edits.append(AppendEntry(key.resources, "claims", claims))
    return edits


@dataclass(frozen=True, slots=True)
class Wanted:
    """A GPU value a patch sets: on which container, in which section."""

    container: str
    section: str  # limits or requests
    resource: str
    value: Node  # in the patch


@dataclass(frozen=True, slots=True)
class _Key:
    container: str
    section: str
    resource: str
    mapping: MappingNode  # limits or requests
    key: Node
    value: Node
    resources: MappingNode
    container_node: MappingNode

    def set(self) -> Wanted:
        return Wanted(self.container, self.section, self.resource, self.value)


def _gpu_keys(obj: locate.Workload, settings: Settings) -> list[_Key]:
    config = settings.config
    found = []
    for site in locate.pod_sites(obj):
        for container in site.containers:
            resources = get(container.node, "resources")
            if not isinstance(resources, MappingNode):
                continue
            for section in SECTIONS:
                mapping = get(resources, section)
                if not isinstance(mapping, MappingNode):
                    continue
                for name, key, value in entries(mapping):
                    if config.maps(name):
                        found.append(
                            _Key(
                                container.name,
                                section,
                                name,
                                mapping,
                                key,
                                value,
                                resources,
                                container.node,
                            )
                        )
    return found


def _inside(node: Node, outer: Node) -> bool:
    return outer.start_mark.index <= node.start_mark.index < outer.end_mark.index


def _no_directives(root: Node, display: str) -> None:
    """A ``$patch``, ``$setElementOrder`` or ``$deleteFromPrimitiveList`` directive in a
    GPU patch: what it removes or reorders is not planned here."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, MappingNode):
            for name, key, value in entries(node):
                if name.startswith("$"):
                    line, col = position(key)
                    raise Blocked(display, line, col, f"the patch holds a {name} directive")
                stack.append(value)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)


def base_of(bases: Bases, kind: str, name: str, display: str, at: Node) -> Base:
    base = bases.get(kind, name)
    code = bases.bridged.get((kind, name))
    if code == BRIDGED:
        raise Bridging
    if code is not None:
        line, col = position(at)
        raise Blocked(
            display,
            line,
            col,
            f"its base {kind} {name} is bridged, but the bridge is not served ({code})",
        )
    if base is None:
        line, col = position(at)
        if (kind, name) in bases.outside:
            why = (
                f"{kind} {name} is in {bases.outside[(kind, name)]}, outside the paths given: "
                "a base and its overlays are converted in one run (give the folder that "
                "holds them all)"
            )
        elif (kind, name) in bases.held:
            why = (
                f"{kind} {name} ({bases.held[(kind, name)]}) is not converted: its own "
                "findings keep it as it is"
            )
        else:
            why = f"the overlay builds no {kind} {name} from the files of this run"
        raise Blocked(display, line, col, why)
    return base


def pod_of(obj: locate.Workload, path: str) -> MappingNode:
    site = next((s for s in locate.pod_sites(obj) if s.path == path), None)
    assert site is not None
    return site.pod


def replan(
    base: Base, path: str, keys: list[Wanted], settings: Settings, display: str
) -> tuple[_Planned | None, _Planned]:
    """The base's plan (None: it asks for no GPU) and the plan of what the overlay
    builds: the base with the patch's GPU keys merged in as a strategic merge does (a
    key the patch sets replaces the base's or is added; the base's others stay)."""
    source = _base_source(base)
    docs = compose.parse(source)
    obj = _same(docs, base.before)
    site = next((s for s in locate.pod_sites(obj) if s.path == path), None)
    if site is None:
        raise Blocked(display, 1, 1, f"the base {obj.kind} {obj.name} has no {path}")
    edits: list[Edit] = []
    for key in keys:
        if not isinstance(key.value, ScalarNode) or key.value.tag.endswith(":null"):
            line, col = position(key.value)
            raise Blocked(display, line, col, f"the patch removes {key.resource} (a null value)")
        container = next((c for c in site.containers if c.name == key.container), None)
        if container is None:
            line, col = position(key.value)
            raise Blocked(
                display,
                line,
                col,
                f"the patch adds container {key.container}, which the base does not have",
            )
        value = to_data(key.value)
        resources = get(container.node, "resources")
        section = get(resources, key.section)
        if isinstance(section, MappingNode):
            edits.extend(
                RemoveEntry(section, k) for n, k, _v in entries(section) if n == key.resource
            )
            edits.append(AppendEntry(section, key.resource, value))
        elif isinstance(resources, MappingNode):
            edits.extend(add_items_free(resources, key.section, {key.resource: value}))
        else:
            edits.extend(
                add_items_free(container.node, "resources", {key.section: {key.resource: value}})
            )
    text, _regions = apply_regions(source, docs, _merged(edits))
    before = _plan(source, base, path, settings)
    refused: list[str] = []
    after = _plan(dataclasses.replace(source, text=text), base, path, settings, refused)
    if after is None:
        line, col = position(keys[0].value)
        why = f" ({refused[0]})" if refused else " (a count of 0)"
        raise Blocked(
            display,
            line,
            col,
            f"the pod the overlay builds would not be converted{why}",
        )
    if before is not None and (
        before.plan.claim != after.plan.claim or before.plan.refs != after.plan.refs
    ):
        line, col = position(keys[0].value)
        raise Blocked(
            display,
            line,
            col,
            "the patch changes which devices the containers ask for (another resource), "
            "not only how many",
        )
    return before, after


def add_items_free(mapping: MappingNode, key: str, value: Any) -> list[Edit]:
    """Set ``key: value`` in ``mapping`` (an empty ``key:`` is replaced)."""
    edits: list[Edit] = [RemoveEntry(mapping, k) for n, k, _v in entries(mapping) if n == key]
    return [*edits, AppendEntry(mapping, key, value)]


def _merged(edits: list[Edit]) -> list[Edit]:
    """Two keys added to one new mapping (limits and requests of one container) are one
    added mapping."""
    out: list[Edit] = []
    for edit in edits:
        previous = next(
            (
                e
                for e in out
                if isinstance(e, AppendEntry)
                and isinstance(edit, AppendEntry)
                and e.mapping is edit.mapping
                and e.key == edit.key
                and isinstance(e.value, dict)
                and isinstance(edit.value, dict)
            ),
            None,
        )
        if previous is not None:
            assert isinstance(edit, AppendEntry)
            out[out.index(previous)] = dataclasses.replace(
                previous, value=_deep_merge(previous.value, edit.value)
            )
        else:
            out.append(edit)
    return out


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    merged = dict(a)
    for k, v in b.items():
        merged[k] = _deep_merge(merged[k], v) if isinstance(merged.get(k), dict) else v
    return merged


def _same(docs: list[Document], obj: locate.Workload) -> locate.Workload:
    found = next(
        (o for d in docs for o in locate.objects(d) if (o.kind, o.name) == (obj.kind, obj.name)),
        None,
    )
    assert found is not None
    return found


def _base_source(base: Base) -> Source:
    """The base as the run read it: its held text, else the file (nothing is written
    before every file is planned)."""
    return sources.decode(base.path, base.original or roles.read_bytes(base.real))


@dataclass(frozen=True, slots=True)
class _Planned:
    """A pod spec's plan and the workload as ``convert`` writes it with that plan."""

    plan: PodPlan
    written: Any  # the converted workload, as data


def _plan(
    source: Source, base: Base, path: str, settings: Settings, refused: list[str] | None = None
) -> _Planned | None:
    """The plan, or None (``refused`` gets the reasons the planner gave)."""
    docs = compose.parse(source)
    obj = _same(docs, base.before)
    site = next((s for s in locate.pod_sites(obj) if s.path == path), None)
    plan, found = plan_site(site, settings, Names(), source.path) if site else (None, [])
    if plan is None:
        if refused is not None:
            refused.extend(f"{f.code}: {f.message}" for f in found if f.severity.value != "info")
        return None
    text, _regions = apply_regions(source, docs, plan.edits)
    written = _same(compose.parse(dataclasses.replace(source, text=text)), base.before)
    return _Planned(plan, to_data(written.root))


def extras(
    base: Base, path: str, after: _Planned, patch_pod: MappingNode | None, at: Node, display: str
) -> dict[str, Any]:
    """Pod-spec fields beyond the claims that the conversion of the overlay's build
    writes and the base's conversion does not (a toleration for GPUs the overlay adds):
    the patch sets them. A difference elsewhere (outside the pod spec, or in the
    containers beyond their resources) cannot be said by this patch: Blocked."""
    steps = _steps(path)
    converted = base.after if base.after is not None else base.before
    old, new, original = to_data(converted.root), after.written, to_data(base.before.root)
    if _without(old, steps) != _without(new, steps):
        line, col = position(at)
        raise Blocked(
            display,
            line,
            col,
            f"with the patch's counts the conversion also changes {converted.kind} "
            f"{converted.name} outside its pod spec ({_first(_without(old, steps), _without(new, steps))})",
        )
    old_pod, new_pod, first_pod = _at(old, steps), _at(new, steps), _at(original, steps)
    patched = {name for name, _k, _v in entries(patch_pod)}  # (None: a JSON 6902 patch)
    extras: dict[str, Any] = {}
    for key in sorted(set(old_pod) | set(new_pod) | set(first_pod)):
        if key == "resourceClaims":
            continue
        if key in ("containers", "initContainers", "ephemeralContainers"):
            if _bare(old_pod.get(key)) != _bare(new_pod.get(key)):
                line, col = position(at)
                raise Blocked(
                    display,
                    line,
                    col,
                    f"with the patch's counts the conversion also changes the pod's {key} "
                    "beyond their resources",
                )
            continue
        changed_here = old_pod.get(key) != new_pod.get(key)
        changed_by_base = first_pod.get(key) != old_pod.get(key)
        if (changed_here or changed_by_base) and key in patched:
            line, col = position(get(patch_pod, key) or at)
            raise Blocked(
                display,
                line,
                col,
                f"the patch sets {key}, which the conversion of the pod also writes",
            )
        if changed_here:
            if key not in new_pod:
                line, col = position(at)
                raise Blocked(display, line, col, f"the conversion would remove the pod's {key}")
            extras[key] = new_pod[key]
    return extras


def _steps(path: str) -> list[str | int]:
    return [int(s) if s.isdigit() else s for s in pointer_steps(path)]


def _at(data: Any, steps: list[str | int]) -> dict[str, Any]:
    for step in steps:
        data = data[step]
    return data if isinstance(data, dict) else {}


def _without(data: Any, steps: list[str | int]) -> Any:
    """A copy of ``data`` with the pod spec at ``steps`` taken out."""
    if not steps:
        return None
    head, rest = steps[0], steps[1:]
    if isinstance(data, dict) and isinstance(head, str):
        return {k: (_without(v, rest) if k == head else v) for k, v in data.items()}
    if isinstance(data, list) and isinstance(head, int):
        return [_without(v, rest) if i == head else v for i, v in enumerate(data)]
    return data


def _bare(containers: Any) -> Any:
    """Containers by name, without their resources."""
    if not isinstance(containers, list):
        return containers
    return {
        c.get("name"): {k: v for k, v in c.items() if k != "resources"}
        for c in containers
        if isinstance(c, dict)
    }


def _first(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key) != b.get(key):
                return _first(a.get(key), b.get(key), f"{path}/{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first(x, y, f"{path}/{i}")
    return path or "/"


def spec_of(obj: Mapping[str, Any]) -> Any:
    return {k: v for k, v in obj.items() if k != "metadata"}


def _removals(keys: list[_Key], keep_resources: bool) -> list[Edit]:
    """Take the GPU keys out of the patch; a mapping left empty goes with them (an
    empty ``limits:`` would be null, which a strategic merge reads as a deletion), the
    container's ``resources`` too unless claims are added to it (``keep_resources``)."""
    edits: list[Edit] = []
    by_mapping: dict[int, list[_Key]] = {}
    for key in keys:
        by_mapping.setdefault(id(key.mapping), []).append(key)
    emptied: dict[int, list[_Key]] = {}
    for group in by_mapping.values():
        mapping = group[0].mapping
        if len(group) == len(mapping.value):
            emptied.setdefault(id(group[0].resources), []).append(group[0])
        else:
            edits.extend(RemoveEntry(mapping, k.key) for k in group)
    for group in emptied.values():
        resources = group[0].resources
        section_keys = [
            k for name, k, _v in entries(resources) if any(g.section == name for g in group)
        ]
        if len(section_keys) == len(resources.value) and not keep_resources:
            container = group[0].container_node
            key = next(k for name, k, _v in entries(container) if name == "resources")
            edits.append(RemoveEntry(container, key))
        else:
            edits.extend(RemoveEntry(resources, k) for k in section_keys)
    return edits


def record(
    unit: Unit, claim: str, template: dict[str, Any], claims: list[Any], replaces: bool
) -> str:
    """The overlay's template, under a name of its own, and (``replaces``) the base's
    template it takes the place of in the overlay's build."""
    old_name = next(
        (
            c.get("resourceClaimTemplateName")
            for c in claims
            if isinstance(c, dict) and c.get("name") == claim
        ),
        None,
    )
    if not isinstance(old_name, str):  # the base asks for no GPU: the plan's name
        old_name = str((template.get("metadata") or {}).get("name") or claim)
    digest = hashlib.sha256(repr(sorted(spec_of(template).items())).encode()).hexdigest()[:6]
    counts = _counts_of(template)
    name = old_name + ("-x" + "-x".join(str(c) for c in counts) if counts else "-" + digest)
    namespace = (template.get("metadata") or {}).get("namespace")
    clash = any(
        t["metadata"].get("name") == name and spec_of(t) != spec_of(template)
        for t in unit.templates
    )
    if clash or len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
        name = f"{old_name[: 253 - 7]}-{digest}"
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    if not any(t["metadata"] == metadata for t in unit.templates):
        unit.templates.append({**template, "metadata": metadata})
    if replaces:
        deleted: dict[str, Any] = {"name": old_name}
        if namespace:
            deleted["namespace"] = namespace
        gone = {
            "$patch": "delete",
            "apiVersion": template.get("apiVersion", "resource.k8s.io/v1"),
            "kind": "ResourceClaimTemplate",
            "metadata": deleted,
        }
        if gone not in unit.replaced:
            unit.replaced.append(gone)
    return name


def _counts_of(template: Mapping[str, Any]) -> list[int]:
    spec = ((template.get("spec") or {}).get("spec") or {}).get("devices") or {}
    counts = []
    for request in spec.get("requests") or []:
        exactly = request.get("exactly") if isinstance(request, dict) else None
        if not isinstance(exactly, dict) or not isinstance(exactly.get("count"), int):
            return []
        counts.append(exactly["count"])
    return counts


def pointer_steps(path: str) -> list[str]:
    """``spec.template.spec`` -> ["spec", "template", "spec"]; ``a[0].b`` -> a, 0, b."""
    out: list[str] = []
    for part in path.split("."):
        name, _bracket, rest = part.partition("[")
        out.append(name)
        while rest:
            index, _close, rest = rest.partition("]")
            out.append(index)
            rest = rest.removeprefix("[")
    return out
