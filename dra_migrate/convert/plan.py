"""Stage 4, plan: decide, per pod spec, the claims, requests and edits.

Pure data: the plan names the nodes to change and the objects to add; the
edit stage turns it into text. The semantics of the migration live here:

- one request per GPU container (and per resource), so that containers that
  each had their own GPUs keep distinct devices;
- counts are whole quantities taken from ``limits``; ``requests``, when
  present, must be equal; ``0`` needs no claim;
- a non-sidecar init container reuses the devices of app containers, as the
  device plugin did (the pod holds max(init, sum of app and sidecars));
- one ResourceClaimTemplate per pod template, in the workload's namespace
  (its name, the claim's and the requests' are made by ``naming.py``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from yaml.nodes import MappingNode, Node

from dra_migrate.convert import controllers, provisioners
from dra_migrate.convert.asks import HAMI_RESOURCES, Ask, fraction_hint, hami_finding
from dra_migrate.convert.mapping import Choice, Config, Context, Settings
from dra_migrate.convert.naming import (
    PLACEHOLDER,
    Names,
    claim_name,
    dns_label,
    invalid_names,
    template_name,
    unique,
)
from dra_migrate.convert.operations import (
    AddObject,
    AppendEntry,
    Edit,
    RemoveEntry,
    Replaced,
    add_items,
)
from dra_migrate.convert.product_selector import PRODUCT_LABEL, product_findings
from dra_migrate.k8s import quantity
from dra_migrate.k8s.quantity import INT64_MAX, whole_count
from dra_migrate.manifests import scalars, trees
from dra_migrate.manifests.kinds import ARGO, KSERVE_MODE_ANNOTATION, on_knative
from dra_migrate.manifests.locate import APP, INIT, SIDECAR, Container, PodSite, Workload
from dra_migrate.manifests.trees import entries, get, scalar
from dra_migrate.report.findings import Finding, finding

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

MAX_REQUESTS = 32  # DeviceRequestsMaxSize


# --- the plan -------------------------------------------------------------------


@dataclass(slots=True)
class DeviceRequest:
    """One request of a generated claim: a device class and a count. Not frozen: the
    plan fills in ``containers`` (the containers that use it) after creating it."""

    name: str
    choice: Choice
    count: int
    containers: list[str] = field(default_factory=list)
    ask: Ask | None = None  # the one ask whose count this is (an app container's, a sidecar's)


@dataclass(frozen=True, slots=True)
class PodPlan:
    site: PodSite
    claim: str
    template: str
    requests: list[DeviceRequest]
    refs: dict[str, list[str]]  # container name -> request names it uses
    asks: list[Ask]
    edits: list[Edit]
    findings: list[Finding]

    @property
    def template_object(self) -> Mapping[str, Any]:
        obj = next(e.obj for e in self.edits if isinstance(e, AddObject))
        return obj


def plan_site(
    site: PodSite, settings: Settings, names: Names, path: str
) -> tuple[PodPlan | None, list[Finding]]:
    """The plan for one pod spec, or None when it asks for no mapped GPU.

    Findings that block the file (bad counts, aliases) come back with no plan. A pod
    spec held after its sharing model converted an ask (another ask refused, a Karpenter
    pool, an operator) keeps no note that says it was converted (DRA260, DRA266).
    """
    plan, findings = _plan_site(site, settings, names, path)
    if plan is None:
        findings = [f for f in findings if f.code not in ("DRA260", "DRA266")]
    return plan, findings


def _plan_site(
    site: PodSite, settings: Settings, names: Names, path: str
) -> tuple[PodPlan | None, list[Finding]]:
    config = settings.config
    ctx = Context(
        namespace=site.workload.namespace,
        labels={**site.workload.labels, **site.template_labels},
        node_selector=site.node_selector,
    )
    findings: list[Finding] = []
    asks: list[Ask] = []
    removals: list[RemoveEntry] = []
    for container in site.containers:
        found = _container_asks(container, config, ctx, site, path, findings, removals)
        asks.extend(found)
    if not asks or any(f.blocks for f in findings):
        return None, findings
    knative = on_knative(site.workload.entry, _annotations(site.workload))
    if knative is not None:
        line, col = site.workload.position
        findings.append(
            finding(
                "DRA215",
                path,
                line,
                col,
                f"{site.workload.kind} {site.workload.name} is {knative}: Knative Serving "
                "rejects resourceClaims and resources.claims in every version "
                "(knative/serving#15332), so it is left on the device plugin",
                "keep it on the device plugin; to move it to DRA, run it without Knative "
                f"(a Deployment, or KServe with {KSERVE_MODE_ANNOTATION}: RawDeployment)",
            )
        )
        return None, findings
    if config.sharing is not None or ctx.gpu_labels:  # the sharing model of its nodes
        from dra_migrate.convert import sharing  # (imported only where one may say)

        asks = sharing.apply(asks, ctx, config, path, findings) or []  # [] when refused
    if not asks:
        return None, findings
    fractional = _fractional(site, asks, ctx, config, path)
    if fractional:
        return None, findings + fractional

    shared = _shared(site, asks, removals)
    if shared is not None:
        line, col = trees.position(shared)
        findings.append(
            finding(
                "DRA008",
                path,
                line,
                col,
                "this pod spec, container or resources block is shared through a YAML "
                "anchor/alias or merge key; editing it would change every place that uses it",
                "expand the alias by hand, then run again",
            )
        )
        return None, findings

    refused = invalid_names(site.workload, path)
    if refused is not None:
        findings.append(refused)
        return None, findings

    after = controllers.after_rewrite(site, asks, config, path)
    if not after.refused:  # where the pod lands, who reads its count (DRA270-DRA277)
        after = provisioners.after_rewrite(site, asks, path, after, settings)
    if after.refused:
        return None, findings + list(after.findings)

    requests, refs = _requests(site, asks, path, findings)
    if len(requests) > MAX_REQUESTS:
        line, col = trees.position(site.pod)
        findings.append(
            finding(
                "DRA107",
                path,
                line,
                col,
                f"this pod needs {len(requests)} device requests; a claim holds at most "
                f"{MAX_REQUESTS}",
                "split the pod, or give containers that may share devices one request by hand",
            )
        )
        return None, findings

    workload = site.workload
    claim = claim_name(site.pod)
    template = template_name(workload, site, names, path, findings, settings.reserved)
    obj = resource_claim_template(template, workload.namespace, requests, settings.target)
    edits: list[Edit] = list(removals)
    edits.extend(_container_edits(site, refs, claim, asks))
    pod_claim = {"name": claim, "resourceClaimTemplateName": template}
    if site.style == ARGO:
        edits.extend(_argo_claim(site, pod_claim, path, findings))
    else:
        edits.extend(add_items(site.pod, "resourceClaims", (pod_claim,)))
    where = f" ({site.path})" if site.label else ""
    edits.append(
        AddObject(
            workload,
            obj,
            f"dra-migrate: GPUs of {workload.kind} {workload.name}{where}",
            _counts(requests, settings.target),
        )
    )
    edits.extend(after.edits)
    findings.extend(after.findings)
    _notes(site, asks, ctx, path, findings)
    if config.device_classes or any(a.choice.config for a in asks):  # shares no GPU
        from dra_migrate.convert.claim_sharing import per_pod_claims

        findings += per_pod_claims(asks, ctx, config, workload.kind, workload.name, template, path)
    return PodPlan(site, claim, template, requests, refs, asks, edits, findings), findings


def _fractional(
    site: PodSite, asks: list[Ask], ctx: Context, config: Config, path: str
) -> list[Finding]:
    """DRA205 for shares of a GPU no model converts (a claim would make them whole GPUs)."""
    found = []
    products: list[str] = list(ctx.node_selector.get(PRODUCT_LABEL) or ())
    for ask in asks:
        if ask.choice.config or any(k == "shares" for k, _v in ask.choice.capacity):
            continue  # converted as the mapping says (DRA535 when pods shared), or shares
        resources = get(ask.container.node, "resources")
        domain = ask.resource.split("/", 1)[0]
        companions = sorted(
            {
                name
                for section in ("limits", "requests")
                for name, _kn, _v in entries(get(resources, section))
                if name.split("/", 1)[0] == domain
                and config.detects(name)
                and not config.maps(name)
            }
        )
        who = f"container {ask.container.name!r}"
        if companions:
            what = (
                f"{who} sets {', '.join(companions)} next to {ask.resource}: a fraction of a "
                f"GPU (vGPU slices of a sharing scheduler such as HAMi)"
            )
        elif ask.choice.shared or any(p.endswith("-SHARED") for p in products):
            what = f"{who} asks for {ask.resource}: {ask.count}, a time-sliced share of a GPU"
        else:
            continue
        found.append(
            finding(
                "DRA205",
                path,
                *trees.position(ask.key),
                f"{what}; a claim would allocate {ask.count} whole GPU(s) of its own to every "
                "pod, so the pod is left on the device plugin",
                fraction_hint(bool(companions)),
            )
        )
    return found


def _annotations(workload: Workload) -> dict[str, str]:
    return {
        k: scalar(v) or ""
        for k, _kn, v in entries(trees.get_path(workload.root, "metadata", "annotations"))
    }


def _shared(site: PodSite, asks: list[Ask], removals: list[RemoveEntry]) -> Node | None:
    """A node the edits would change that other places share (anchor and alias)."""
    aliased = site.workload.doc.aliased
    nodes: list[Node | None] = [site.pod]
    for ask in asks:
        resources = get(ask.container.node, "resources")
        # limits and requests count only when edited: the removals name them below
        nodes += [ask.container.node, resources, get(resources, "claims")]
    nodes.append(get(site.pod, "resourceClaims"))
    nodes += [r.mapping for r in removals]
    for node in nodes:
        if node is not None and (id(node) in aliased or trees.has_merge(node)):
            return node
    return None


# --- reading the asks -------------------------------------------------------------


def _container_asks(
    container: Container,
    config: Config,
    ctx: Context,
    site: PodSite,
    path: str,
    findings: list[Finding],
    removals: list[RemoveEntry],
) -> list[Ask]:
    resources = get(container.node, "resources")
    limits, requests = get(resources, "limits"), get(resources, "requests")
    limit_entries = {k: (kn, v) for k, kn, v in entries(limits) if config.is_gpu(k)}
    request_entries = {k: (kn, v) for k, kn, v in entries(requests) if config.is_gpu(k)}
    asks: list[Ask] = []
    unmapped: list[str] = []
    removed: dict[int, list[Node]] = {}
    who = f"container {container.name!r}"
    for name in sorted(set(limit_entries) | set(request_entries), key=_order(limit_entries)):
        if name not in limit_entries:
            key, _value = request_entries[name]
            line, col = trees.position(key)
            findings.append(
                finding(
                    "DRA103",
                    path,
                    line,
                    col,
                    f"{who} sets {name} in requests but not in limits; extended resources are set in limits",
                    "move the count to limits",
                )
            )
            continue
        key, value = limit_entries[name]
        line, col = trees.position(value)
        if not config.maps(name) and name in HAMI_RESOURCES:
            findings.append(hami_finding(who, name, path, key))
            unmapped.append(name)
            continue
        if not config.maps(name):
            findings.append(
                finding(
                    "DRA104",
                    path,
                    *trees.position(key),
                    f"{who} uses {name}, which the mapping does not convert; left as it is",
                    "add it to .dra-migrate.yaml resources if it should become a DRA request",
                )
            )
            unmapped.append(name)
            continue
        count = _count(value, name, who, path, findings)
        if count is None:
            continue
        if name in request_entries:
            req_value = request_entries[name][1]
            asked = scalars.quantity_text(req_value) or ""
            if not quantity.equal(asked, scalars.quantity_text(value) or ""):
                findings.append(
                    finding(
                        "DRA102",
                        path,
                        *trees.position(req_value),
                        f"{who} requests {scalar(req_value)!r} of {name} but its limit is "
                        f"{scalar(value)!r}; they must be equal",
                    )
                )
                continue
        if count == 0:
            findings.append(
                finding(
                    "DRA105",
                    path,
                    line,
                    col,
                    f"{who} sets {name} to 0: no device is needed, nothing converted",
                )
            )
            continue
        choice = config.choose(name, ctx)
        assert choice is not None  # config.maps(name) held
        asks.append(Ask(container, name, count, choice, key))
        removed.setdefault(id(limits), []).append(key)
        if name in request_entries:
            removed.setdefault(id(requests), []).append(request_entries[name][0])
    for mapping, parent_key in ((limits, "limits"), (requests, "requests")):
        if not isinstance(mapping, MappingNode) or id(mapping) not in removed:
            continue
        gone = removed[id(mapping)]
        if len(gone) == len(mapping.value):
            key_node = next(kn for k, kn, _v in entries(resources) if k == parent_key)
            assert isinstance(resources, MappingNode)
            removals.append(RemoveEntry(resources, key_node))
        else:
            removals.extend(RemoveEntry(mapping, k) for k in gone)
    return asks


def _order(limit_entries: Mapping[str, tuple[Node, Node]]) -> Any:
    def key(name: str) -> tuple[int, int]:
        if name in limit_entries:
            return (0, limit_entries[name][0].start_mark.index)
        return (1, 0)

    return key


def _shown(text: str) -> str:
    """A value for a message: quoted, and cut in the middle when long."""
    if len(text) <= 60:
        return repr(text)
    return f"{text[:24]!r}...{text[-12:]!r} ({len(text)} characters)"


def _count(value: Node, name: str, who: str, path: str, findings: list[Finding]) -> int | None:
    text = scalar(value)
    line, col = trees.position(value)
    if text is not None and PLACEHOLDER.search(text):
        findings.append(
            finding(
                "DRA106",
                path,
                line,
                col,
                f"{who} sets {name} from the template expression {text!r}; the count is not known",
                "render the template first, or convert the template's source by hand",
            )
        )
        return None
    written = scalars.quantity_text(value)
    count = whole_count(written) if written is not None else None
    # too_large also judges a number too long for whole_count to convert
    if count > INT64_MAX if count is not None else quantity.too_large(written or ""):
        findings.append(
            finding(
                "DRA108",
                path,
                line,
                col,
                f"{who} sets {name} to {_shown(text or written or '')}, more than Kubernetes "
                "can hold in a count "
                f"(at most {INT64_MAX})",
                "write the number of devices the container needs",
            )
        )
        return None
    if count is not None and text is not None and scalars.octal_surprise(value):
        findings.append(
            finding(
                "DRA031",
                path,
                line,
                col,
                f"{who} sets {name} to {text}, which Kubernetes reads as the YAML 1.1 octal "
                f"number {count}: the claim asks for {count}",
                f"if {int(text.replace('_', '').lstrip('+-0') or '0')} was meant, quote it "
                f'("{text}") or drop the leading zero, and convert again',
            )
        )
    if count is None:
        shown = _shown(text) if text is not None else repr("a non-scalar value")
        findings.append(
            finding(
                "DRA101",
                path,
                line,
                col,
                f"{who} sets {name} to {shown}; a device count must be a whole number of 0 or more",
            )
        )
    return count


# --- requests, and who uses them ----------------------------------------------------


def _requests(
    site: PodSite, asks: list[Ask], path: str, findings: list[Finding]
) -> tuple[list[DeviceRequest], dict[str, list[str]]]:
    requests: list[DeviceRequest] = []
    refs: dict[str, list[str]] = {}
    used: set[str] = set()
    per_container: dict[str, list[Ask]] = {}
    for ask in asks:
        per_container.setdefault(ask.container.name, []).append(ask)

    def new_request(base: str, choice: Choice, count: int) -> DeviceRequest:
        name = unique(dns_label(base), used)
        used.add(name)
        request = DeviceRequest(name, choice, count)
        requests.append(request)
        return request

    # App containers and sidecars run together: each gets its own request.
    for ask in asks:
        if ask.container.role in (APP, SIDECAR):
            several = len(per_container[ask.container.name]) > 1
            base = ask.container.name + (f"-{_resource_slug(ask.resource)}" if several else "")
            request = new_request(base, ask.choice, ask.count)
            request.ask = ask
            request.containers.append(ask.container.name)
            refs.setdefault(ask.container.name, []).append(request.name)

    # Init containers run one at a time, before the app containers start: they
    # may reuse the devices of app containers, and of sidecars declared after
    # them (those start later); never of a sidecar that already runs beside them.
    # The pod then holds what Kubernetes accounts for it: the larger of the
    # app containers plus sidecars and, for each init container, its own count
    # plus the sidecars started before it.
    order = {c.name: i for i, c in enumerate(site.containers)}
    role = {a.container.name: a.container.role for a in asks}
    extra: dict[tuple[Any, ...], DeviceRequest] = {}
    init_asks = [a for a in asks if a.container.role == INIT]

    def pool_of(ask: Ask) -> list[DeviceRequest]:
        key = _choice_key(ask.choice)
        return [
            r
            for r in requests
            if r not in extra.values()
            and _choice_key(r.choice) == key
            and (
                role.get(r.containers[0]) == APP
                or order.get(r.containers[0], -1) > order[ask.container.name]
            )
        ]

    deficits: dict[tuple[Any, ...], int] = {}
    for ask in init_asks:
        key = _choice_key(ask.choice)
        missing = ask.count - sum(r.count for r in pool_of(ask))
        deficits[key] = max(deficits.get(key, 0), missing)
    for ask in init_asks:
        key = _choice_key(ask.choice)
        pool = pool_of(ask)
        subset = _cover(pool, ask.count)
        chosen = list(subset) if subset is not None else list(pool)
        if subset is None:
            if key not in extra:
                extra[key] = new_request(ask.container.name, ask.choice, deficits[key])
            chosen.append(extra[key])
        for request in chosen:
            request.containers.append(ask.container.name)
            refs.setdefault(ask.container.name, []).append(request.name)
        seen = sum(r.count for r in chosen)
        reused = [r.name for r in chosen if r.containers[0] != ask.container.name]
        if reused:
            line, col = trees.position(ask.key)
            own = [r.name for r in chosen if r.containers[0] == ask.container.name]
            own_note = f" plus its own request {own[0]} for the rest" if own else ""
            more = (
                f"; it sees {seen} devices where it asked for {ask.count}"
                if seen > ask.count
                else ""
            )
            findings.append(
                finding(
                    "DRA207",
                    path,
                    line,
                    col,
                    f"init container {ask.container.name!r} uses request(s) {', '.join(reused)} "
                    f"of containers that start after it{own_note}, as the device plugin reused their GPUs{more}",
                )
            )
    return requests, refs


def _cover(pool: list[DeviceRequest], need: int) -> tuple[DeviceRequest, ...] | None:
    """The requests whose counts cover ``need`` with the least surplus (then the fewest)."""
    if sum(r.count for r in pool) < need:
        return None
    if len(pool) > 16:  # subsets explode; take the largest first
        picked: list[DeviceRequest] = []
        for request in sorted(pool, key=lambda r: -r.count):
            if sum(r.count for r in picked) >= need:
                break
            picked.append(request)
        return tuple(picked)
    best: tuple[int, int, tuple[DeviceRequest, ...]] | None = None
    for size in range(1, len(pool) + 1):
        for combo in itertools.combinations(pool, size):
            total = sum(r.count for r in combo)
            if total >= need and (best is None or (total - need, size) < best[:2]):
                best = (total - need, size, combo)
    return best[2] if best else None


def _choice_key(choice: Choice) -> tuple[Any, ...]:
    return (
        choice.device_class,
        choice.selectors,
        json.dumps(choice.config, sort_keys=True, default=str),
    )


def _resource_slug(resource: str) -> str:
    return resource.rsplit("/", 1)[-1]


# --- edits ------------------------------------------------------------------------


def _container_edits(
    site: PodSite, refs: Mapping[str, list[str]], claim: str, asks: list[Ask]
) -> list[Edit]:
    edits: list[Edit] = []
    for container in site.containers:
        names = refs.get(container.name)
        if not names:
            continue
        claims = tuple({"name": claim, "request": n} for n in names)
        resources = get(container.node, "resources")
        assert isinstance(resources, MappingNode)
        asked = {a.resource for a in asks if a.container is container}
        replaced = tuple(
            (section, k, v)
            # the limit's comment last: it trails the claim reference
            for section in (get(resources, "requests"), get(resources, "limits"))
            if isinstance(section, MappingNode)
            for name, k, v in entries(section)
            if name in asked
        )
        edits.extend(add_items(resources, "claims", claims, replaced))
    return edits


def _counts(
    requests: list[DeviceRequest], target: str
) -> tuple[tuple[tuple[str | int, ...], Replaced], ...]:
    """Where each request's count sits in the template, and the entries it replaces (its
    container's ``requests`` and ``limits`` entries of the resource, the limit last):
    their line comments move onto the count they describe. A request that several asks
    add up to (an init container's extra devices) takes none."""
    counts: list[tuple[tuple[str | int, ...], Replaced]] = []
    for index, request in enumerate(requests):
        ask = request.ask
        if ask is None:
            continue
        resources = get(ask.container.node, "resources")
        replaced = tuple(
            (section, k, v)
            for section in (get(resources, "requests"), get(resources, "limits"))
            if isinstance(section, MappingNode)
            for name, k, v in entries(section)
            if name == ask.resource
        )
        body: tuple[str, ...] = () if target == "v1beta1" else ("exactly",)
        path: tuple[str | int, ...] = ("spec", "spec", "devices", "requests", index, *body, "count")
        counts.append((path, replaced))
    return tuple(counts)


def _argo_claim(
    site: PodSite, pod_claim: Mapping[str, str], path: str, findings: list[Finding]
) -> list[Edit]:
    if get(site.pod, "podSpecPatch") is not None:
        line, col = trees.position(get(site.pod, "podSpecPatch") or site.pod)
        findings.append(
            finding(
                "DRA213",
                path,
                line,
                col,
                f"Argo template {site.label!r} has a podSpecPatch; add "
                f"resourceClaims {json.dumps([pod_claim])} to it by hand",
            )
        )
        return []
    patch = json.dumps({"resourceClaims": [pod_claim]}, separators=(",", ":"))
    return [AppendEntry(site.pod, "podSpecPatch", patch)]


def _notes(
    site: PodSite, asks: list[Ask], ctx: Context, path: str, findings: list[Finding]
) -> None:
    workload = site.workload
    line, col = trees.position(site.pod)
    if site.generic:
        findings.append(
            finding(
                "DRA201",
                path,
                line,
                col,
                (
                    f"{workload.kind} is not in the kind table; converted the pod spec at {site.path}"
                    if workload.entry is None
                    else f"{workload.kind} has a pod spec at {site.path}, where the kind table "
                    "expects none; converted it"
                ),
                "check that the operator of this kind passes resourceClaims through to its pods",
            )
        )
    node_name = get(site.pod, "nodeName")
    if node_name is not None:
        findings.append(
            finding(
                "DRA220",
                path,
                *trees.position(node_name),
                f"{workload.kind} {workload.name} sets nodeName {scalar(node_name)!r}: it skips "
                "the scheduler, which is what allocates ResourceClaims, so its claim stays "
                "unallocated and the pod does not start",
                "select the node with nodeSelector or node affinity instead",
            )
        )
    if workload.entry is not None and workload.entry.cluster_scoped:
        findings.append(
            finding(
                "DRA216",
                path,
                line,
                col,
                f"{workload.kind} {workload.name} is cluster-scoped; its pods run in the namespaces "
                "of the objects that use it, and a pod can only use a ResourceClaimTemplate of "
                "its own namespace",
                "apply the generated ResourceClaimTemplate (without namespace) in every namespace "
                "that runs this template",
            )
        )
    meta = get(workload.root, "metadata")
    generate = get(meta, "generateName")
    if generate is not None and not scalar(get(meta, "name")):
        findings.append(
            finding(
                "DRA221",
                path,
                *trees.position(generate),
                f"{workload.kind} {workload.name} has generateName: its file is created again "
                "and again (kubectl create -f), but the ResourceClaimTemplate written into the "
                "same file has a fixed name, so every create after the first fails with "
                "AlreadyExists",
                "move the ResourceClaimTemplate to a file applied once per namespace (kubectl "
                "apply, with the namespace's setup) and keep only the workload in this file",
            )
        )
    chosen = [a.choice.device_class for a in asks if a.choice.rule is not None]
    findings += product_findings(ctx, chosen, path, line, col)


# --- the generated object ---------------------------------------------------------


def resource_claim_template(
    name: str, namespace: str | None, requests: Iterable[DeviceRequest], target: str
) -> dict[str, Any]:
    """A ResourceClaimTemplate for the target API version, as plain data."""
    requests = list(requests)
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    device_requests = [_device_request(r, target) for r in requests]
    devices: dict[str, Any] = {"requests": device_requests}
    config = _config(requests)
    if config:
        devices["config"] = config
    return {
        "apiVersion": f"resource.k8s.io/{target}",
        "kind": "ResourceClaimTemplate",
        "metadata": meta,
        "spec": {"spec": {"devices": devices}},
    }


def _device_request(request: DeviceRequest, target: str) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": request.choice.device_class}
    if request.choice.selectors:
        body["selectors"] = [{"cel": {"expression": s}} for s in request.choice.selectors]
    body["count"] = request.count
    if request.choice.capacity:
        body["capacity"] = {"requests": dict(request.choice.capacity)}
    if target == "v1beta1":
        return {"name": request.name, **body}
    return {"name": request.name, "exactly": body}


def _config(requests: list[DeviceRequest]) -> list[dict[str, Any]]:
    grouped: dict[str, tuple[Mapping[str, Any], list[str]]] = {}
    for request in requests:
        for opaque in request.choice.config:
            key = json.dumps(opaque, sort_keys=True, default=str)
            grouped.setdefault(key, (opaque, []))[1].append(request.name)
    return [
        {"requests": names, "opaque": {"driver": o["driver"], "parameters": o["parameters"]}}
        for o, names in grouped.values()
    ]
