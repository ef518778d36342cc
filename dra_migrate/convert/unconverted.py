"""What is reported and never converted: Helm chart templates, kustomize patches,
ResourceQuotas, and GPU requests outside any pod spec (a chart's values files:
convert/values_asks.py).

Each function reads one file (or one object) and returns findings; the
pipeline decides which applies from the file's role (``layout.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from dra_migrate.convert.mapping import Config, Context, Settings
from dra_migrate.k8s.quantity import whole_count
from dra_migrate.manifests import compose, locate, scalars, sources, trees
from dra_migrate.manifests.sources import Document, Source
from dra_migrate.manifests.trees import entries, get, items, scalar
from dra_migrate.report.findings import Finding, InputProblem, finding
from dra_migrate.report.model import InventoryItem, gpu_request

# Mappings of resource name to quantity: a pod's requests and limits, and KubeSpawner's
# extra_resource_limits/guarantees (JupyterHub profiles, kubespawner_override).
RESOURCE_FIELDS = ("limits", "requests", "extra_resource_limits", "extra_resource_guarantees")


def _reported(config: Config, resource: str) -> bool:
    """A resource these reports are about: a GPU the mapping knows or detects (TPUs,
    HAMi's shares and example names are listed by scan, never a file to edit)."""
    return config.is_gpu(resource) and gpu_request(resource, config.maps(resource))


_VALUES_REF = re.compile(r"\.Values((?:\.[A-Za-z0-9_]+|\[\s*\"[^\"]+\"\s*\])+)")


def outside(
    workload: locate.Workload, covered: list[Node], config: Config, path: str
) -> list[Finding]:
    """GPU resources in a requests/limits mapping that no located container holds."""
    return outside_asks(workload, covered, config, path)[0]


def outside_asks(
    workload: locate.Workload, covered: list[Node], config: Config, path: str
) -> tuple[list[Finding], list[InventoryItem]]:
    """GPU resources in a requests/limits mapping that no located container holds: a
    finding for each key (DRA212; DRA275 or DRA276 where ``outside_counts.OUTSIDE``
    knows the operator that reads it), and an inventory row for each ask (one a mapping
    and resource, limits first), kept by its finding: scan counts every ask it sees. A
    NodePool's limits are a cap, not an ask: no row. The operators' table is imported at
    the first such key (start-up: a run without one never imports it)."""
    found: list[Finding] = []
    rows: dict[tuple[str, str], InventoryItem] = {}
    inside = {id(n) for n in covered}

    def take(
        here: str, where: str, node: Node, name: str, name_node: Node, amount: Node, key: str
    ) -> None:
        if not _reported(config, name):
            return
        from dra_migrate.convert import outside_counts

        rule = outside_counts.outside_rule(workload)
        read = None if rule or workload.kind else outside_counts.values_rule(_steps(where))
        if rule is not None:
            made = outside_counts.outside_finding(rule, workload, here, name, name_node, path)
        elif read is not None:  # an operator's configuration (KubeAI's system.yaml)
            made = outside_counts.config_finding(read, here, name, amount, name_node, path)
        else:
            made = _generic_outside(workload, here, name, name_node, path)
        found.append(made)
        if rule is None or rule.ask:
            row = _outside_row(workload, where, node, name, name_node, amount, config, path)
            row.kept = made.code
            if (where, name) not in rows or "limit" in key:  # limits win over requests
                rows[(where, name)] = row

    stack: list[tuple[str, Node]] = [("", workload.root)]
    while stack:
        where, node = stack.pop()
        if id(node) in inside:
            continue
        if isinstance(node, MappingNode):
            for key, _key_node, value in entries(node):
                here = f"{where}.{key}" if where else key
                if key in RESOURCE_FIELDS and isinstance(value, MappingNode):
                    for name, name_node, amount in entries(value):
                        take(here, where, node, name, name_node, amount, key)
                    if get(value, "gpu") is not None or get(value, "custom") is not None:
                        # an operator's own count (Dynamo's gpu: "1"): the resource it writes
                        from dra_migrate.convert import outside_counts

                        for field, name, name_node, amount in outside_counts.operator_counts(
                            workload, value
                        ):
                            take(f"{here}.{field}", where, node, name, name_node, amount, key)
                    continue
                spark = _named_count(key, value)  # Spark operator: gpu: {name, quantity}
                if spark is not None:
                    take(here, here, node, *spark, "limits")
                    continue
                stack.append((here, value))
        else:
            for i, item in enumerate(items(node)):
                stack.append((f"{where}[{i}]", item))
    return sorted(found), sorted(rows.values(), key=lambda r: (r.line, r.col))


def _steps(where: str) -> tuple[str, ...]:
    """The steps of a dotted path (an index stays on its step: ``a[0].b``)."""
    return tuple(where.split(".")) if where else ()


def _named_count(key: str, value: Node) -> tuple[str, Node, Node] | None:
    """(resource, its node, the count's node) of a ``gpu: {name: <resource>, quantity:
    <count>}`` mapping: the Spark operator's GPUSpec, which its webhook turns into the
    container's limits (kubeflow/spark-operator api/v1beta2/sparkapplication_types.go,
    internal/webhook/sparkpod_defaulter.go addGPU)."""
    if key != "gpu" or not isinstance(value, MappingNode):
        return None
    name, quantity = get(value, "name"), get(value, "quantity")
    if name is None or quantity is None:
        return None
    return scalar(name) or "", name, quantity


def _generic_outside(
    workload: locate.Workload, here: str, name: str, name_node: Node, path: str
) -> Finding:
    line, col = trees.position(name_node)
    who = (
        f"{workload.kind} {workload.name}".strip()
        if workload.kind
        else "a document without kind (a values or config file?)"
    )
    return finding(
        "DRA212",
        path,
        line,
        col,
        f"{who} asks for {name} at {here}, outside any pod spec dra-migrate can convert",
        (
            "the operator of this kind turns it into pod resources: move the request to a "
            "pod template it supports, or keep the device plugin for it"
            if workload.kind
            else "whatever renders it into pods (a chart, a spawner) must write claims: "
            "convert its rendered output"
        ),
    )


def _outside_row(
    workload: locate.Workload,
    where: str,
    holder: Node,
    name: str,
    name_node: Node,
    amount: Node,
    config: Config,
    path: str,
) -> InventoryItem:
    """The inventory row of a GPU ask outside any pod spec (``where``: the mapping that
    holds the resources, a container-like object when it has a ``name``)."""
    line, col = trees.position(name_node)
    choice = config.choose(name, Context(namespace=workload.namespace))
    owner = where.rsplit(".resources", 1)[0] if where.endswith(".resources") else where
    container = locate.node_at(workload.root, owner) if owner != where else holder
    return InventoryItem(
        path=path,
        line=line,
        col=col,
        api_version=workload.api_version,
        kind=workload.kind,
        namespace=workload.namespace,
        name=workload.name,
        pod_path=owner or "(document)",
        container=scalar(get(container, "name")) or "",
        role="app",
        resource=name,
        count=whole_count(scalars.quantity_text(amount) or ""),
        value=scalar(amount) or "",
        device_class=choice.device_class if choice else None,
        replicas=None,
    )


def embedded(workload: locate.Workload, source: Source, config: Config) -> list[Finding]:
    """GPU requests inside strings of an object (``embedded_asks``' findings)."""
    return embedded_asks(workload, source, config)[0]


def embedded_asks(
    workload: locate.Workload, source: Source, config: Config
) -> tuple[list[Finding], list[InventoryItem]]:
    """GPU requests inside strings of an object: a Job or MPIJob manifest held in a
    ConfigMap's data, an Argo ``resource.manifest``, a pod patch in an annotation or a
    ``podSpecPatch``. Never converted (the text is another program's input), always
    listed, so an inventory that trusts scan misses nothing: a finding for each key, a
    row for each ask (one a string, object and resource), kept by DRA227."""
    found: list[Finding] = []
    rows: dict[tuple[str, str, str], InventoryItem] = {}
    if workload.kind == "CustomResourceDefinition":  # a schema's prose, not a manifest
        return found, []
    needles = tuple(n.decode("utf-8", "replace") for n in config.needles())
    for node in trees.text_scalars(workload.root):
        text = node.value
        if not any(n in text for n in needles):
            continue
        try:
            inner = compose.parse(
                sources.decode(source.path, text.encode("utf-8", "surrogatepass"))
            )
        except InputProblem:
            continue  # not YAML or JSON: prose that mentions a GPU
        if not any(isinstance(d.root, (MappingNode, SequenceNode)) for d in inner):
            continue
        where = _inside_scalar(source.text, node)
        for target, line, col, name, value in _patch_requests(inner, config, where):
            field = _field_of(workload.root, node)
            found.append(
                finding(
                    "DRA227",
                    source.path,
                    line,
                    col,
                    f"{workload.kind} {workload.name}: the string at {field} holds "
                    f"{target} asking for {name}: {value}; text inside a string is another "
                    "program's input and is never converted",
                    "migrate what reads this string (the manifest it holds, or the program "
                    "that applies it) to ResourceClaims, or keep it on the device plugin",
                )
            )
            choice = config.choose(name, Context(namespace=workload.namespace))
            rows.setdefault(
                (field, target, name),
                InventoryItem(
                    path=source.path,
                    line=line,
                    col=col,
                    api_version=workload.api_version,
                    kind=workload.kind,
                    namespace=workload.namespace,
                    name=workload.name,
                    pod_path=f"{field} ({target})",
                    container="",
                    role="app",
                    resource=name,
                    count=whole_count(value),
                    value=value,
                    device_class=choice.device_class if choice else None,
                    replicas=None,
                    kept="DRA227",
                ),
            )
    return found, [r for r in rows.values() if _reported(config, r.resource)]


def _field_of(root: Node, wanted: Node) -> str:
    """The dotted path of ``wanted`` under ``root``."""
    stack: list[tuple[str, Node]] = [("", root)]
    while stack:
        where, node = stack.pop()
        if node is wanted:
            return where or "(the object)"
        for key, _k, value in entries(node):
            stack.append((f"{where}.{key}" if where else key, value))
        for i, item in enumerate(items(node)):
            stack.append((f"{where}[{i}]", item))
    return "?"


# --- quota ----------------------------------------------------------------------------
#
# What a ResourceClaim counts against in a ResourceQuota, as the API server's claim
# evaluator charges it (kubernetes/kubernetes pkg/quota/v1/evaluator/core/
# resource_claims.go; PR 134210, Kubernetes 1.35): every claim against
# ``<class>.deviceclass.resource.k8s.io/devices`` (k8s.io/api core/v1
# ResourceClaimsPerClass, in every release dra-migrate writes for); with DRAExtendedResource
# on (from 1.35; on by default from 1.36, GA 1.37) also against
# ``requests.deviceclass.resource.kubernetes.io/<class>`` (ResourceImplicitExtendedClaimsPerClass;
# the PR's release note says resource.k8s.io, the constant kubernetes.io: the code wins) and,
# for a class with ``extendedResourceName``, against ``requests.<that name>``, so a quota on
# requests.nvidia.com/gpu keeps counting the GPUs of claims from a class that maps it.
QUOTA_FROM = 35  # PR 134210
PER_CLASS = "{}.deviceclass.resource.k8s.io/devices"
IMPLICIT_PER_CLASS = "requests.deviceclass.resource.kubernetes.io/{}"


def maps_resource(settings: Settings, device_class: str, resource: str) -> bool:
    """Whether ``device_class`` has ``extendedResourceName: resource``: a DeviceClass of
    the configuration (deviceClasses), or the class a known driver installs that maps the
    name by default on the target (the catalog's ``driver_bridge``)."""
    for defined in settings.config.device_classes:
        if defined.name == device_class:
            return defined.extended_resource_name == resource
    from dra_migrate.k8s.catalog import load_catalog

    installed = load_catalog().driver_bridge(resource, settings.target)
    return installed is not None and installed.name == device_class


def quota_prerequisite(classes: list[str], minor: int | None) -> tuple[str, str, str]:
    """The plan's prerequisite on quota: what claims of ``classes`` count against."""
    later = ", ".join(IMPLICIT_PER_CLASS.format(c) for c in classes)
    return (
        "ResourceQuota",
        "claims count against " + ", ".join(PER_CLASS.format(c) for c in classes),
        f"from Kubernetes 1.{QUOTA_FROM} with DRAExtendedResource on (the default from 1.36) "
        f"also against {later}, and those of a class with extendedResourceName against "
        "requests.<that name>, so a quota on the extended resource keeps counting them"
        + (f"; the cluster is 1.{minor}" if minor is not None else ""),
    )


def quota(workload: locate.Workload, settings: Settings, path: str) -> list[Finding]:
    """DRA206: a ResourceQuota key on a GPU extended resource that claims of the mapped
    class do not count against in the release (``--kube-version``, the newest when none)."""
    from dra_migrate.k8s.versions import GATES, NEWEST_MINOR, GateState, parse_kube_version

    config = settings.config
    kube = settings.kube_version or config.kube_version
    minor = parse_kube_version(kube) if kube else NEWEST_MINOR
    gates = GateState(minor, config.feature_gates, release_given=kube is not None)
    counting = minor >= QUOTA_FROM and gates.enabled("DRAExtendedResource")
    release = f"Kubernetes 1.{minor}" + ("" if kube else " (assumed: no --kube-version)")
    found: list[Finding] = []
    # namespace/name: the plan (migration/waves.py) tells the waves of that namespace
    quota_name = f"{workload.namespace}/{workload.name}" if workload.namespace else workload.name
    for key, key_node, value in entries(trees.get_path(workload.root, "spec", "hard")):
        resource = key.removeprefix("requests.").removeprefix("limits.")
        if not _reported(config, resource):
            continue
        choice = config.choose(resource, Context(namespace=workload.namespace))
        device_class = choice.device_class if choice else "<device-class>"
        amount = scalar(value)
        bridged = (
            choice is not None
            and key.startswith("requests.")
            and maps_resource(settings, device_class, resource)
        )
        per_class = f"add {PER_CLASS.format(device_class)}: {amount} to spec.hard"
        if bridged and counting and kube:
            continue  # the API server charges claims of the class to requests.<resource>
        if bridged and counting:
            message = (
                f"ResourceQuota {quota_name} limits {key}: {amount}; claims from "
                f"DeviceClass {device_class}, which maps {resource} (extendedResourceName), "
                f"count against it only from Kubernetes 1.{QUOTA_FROM} with "
                f"DRAExtendedResource on (the default from 1.{GATES['DRAExtendedResource'].on}), "
                "not on older clusters"
            )
            hint = f"pass --kube-version to check your release; in every release, {per_class}"
        elif counting:
            message = (
                f"ResourceQuota {quota_name} limits {key}: {amount}, which claims from "
                f"DeviceClass {device_class} do not count against in {release}: the class "
                f"has no extendedResourceName {resource}"
            )
            hint = (
                f"{per_class} (or {IMPLICIT_PER_CLASS.format(device_class)}: {amount}); or "
                f"give {device_class} extendedResourceName: {resource} (one class a name)"
            )
        else:
            why = (
                gates.why_off("DRAExtendedResource")
                if minor >= QUOTA_FROM
                else f"claims count against requests.{resource} only from 1.{QUOTA_FROM}"
            )
            message = (
                f"ResourceQuota {quota_name} limits {key}: {amount}, which DRA claims do "
                f"not count against in {release}: {why}"
            )
            hint = per_class
        line, col = trees.position(key_node)
        found.append(finding("DRA206", path, line, col, message, hint))
    return found


def kueue_quota(workload: locate.Workload, settings: Settings, path: str) -> list[Finding]:
    """A Kueue ClusterQueue whose flavors give a GPU extended resource a quota: converted
    jobs ask for claims from templates, which Kueue counts only through deviceClassMappings
    in its Configuration (kubernetes-sigs/kueue keps/2941-DRA; pkg/features/kube_features.go:
    KueueDRAIntegration beta and on from v0.18, before it DynamicResourceAllocation, alpha,
    v0.14 to v0.17). Pods that keep the extended resource (the bridge) count against it as
    before; with KueueDRAIntegrationExtendedResource (alpha v0.18, beta and on v0.19) Kueue
    charges a DRA-backed name to the mapped name of its class, or to the name itself."""
    config = settings.config
    found = []
    for group in items(trees.get_path(workload.root, "spec", "resourceGroups")):
        for flavor in items(get(group, "flavors")):
            flavor_name = scalar(get(flavor, "name")) or "?"
            for resource in items(get(flavor, "resources")):
                name_node = get(resource, "name")
                name = scalar(name_node) or ""
                if name_node is None or not _reported(config, name):
                    continue
                choice = config.choose(name, Context(namespace=workload.namespace))
                device_class = choice.device_class if choice else "<device-class>"
                bridged = choice is not None and maps_resource(settings, device_class, name)
                quota = scalar(get(resource, "nominalQuota")) or "?"
                line, col = trees.position(name_node)
                mapping = (
                    f"map device class {device_class} to the name {name} in "
                    "resources.deviceClassMappings of Kueue's Configuration (name: "
                    f"{name}, deviceClassNames: [{device_class}])"
                )
                found.append(
                    finding(
                        "DRA223",
                        path,
                        line,
                        col,
                        f"ClusterQueue {workload.name} gives {name} a quota of {quota} in "
                        f"flavor {flavor_name}; converted jobs ask for DRA claims instead, "
                        "which Kueue counts only through deviceClassMappings (KueueDRAIntegration, "
                        "on from v0.18; DynamicResourceAllocation, alpha, v0.14 to v0.17), so "
                        "they stop counting against it"
                        + (
                            f"; pods that keep {name} (the bridge, DeviceClass {device_class} "
                            "maps it) still count against it (with "
                            "KueueDRAIntegrationExtendedResource, on from v0.19, against the "
                            "name deviceClassMappings gives the class, if any)"
                            if bridged
                            else ""
                        ),
                        mapping
                        + (
                            ": claims from templates and bridged requests then share this quota"
                            if bridged
                            else "; keep the old entry while jobs still use the device plugin"
                        ),
                    )
                )
    return found


def limit_range(workload: locate.Workload, settings: Settings, path: str) -> list[Finding]:
    """A LimitRange that gives containers a GPU default (or minimum) puts the
    extended resource back into every converted container."""
    config = settings.config
    found = []
    for limit in items(trees.get_path(workload.root, "spec", "limits")):
        for field in ("default", "defaultRequest", "min"):
            for key, key_node, value in entries(get(limit, field)):
                if not _reported(config, key):
                    continue
                line, col = trees.position(key_node)
                found.append(
                    finding(
                        "DRA218",
                        path,
                        line,
                        col,
                        f"LimitRange {workload.name} sets {field} {key}: {scalar(value)}; the "
                        "LimitRanger adds it to every container that has none, so converted "
                        "pods would ask the device plugin for GPUs again (or be rejected)",
                        f"remove {key} from {field} once the namespace runs on DRA claims",
                    )
                )
    return found


def _gpu_mentions(source: Source, config: Config) -> list[tuple[int, int, str, str]]:
    """(line, col, resource, line text) for every resource name a chart template sets
    as a resource: a key under limits or requests, a JSON pointer step into them, or a
    quoted name inside a template action (a helper picking the resource name)."""
    # overlapping candidates, each starting at a token boundary: in a JSON
    # pointer (/resources/limits/nvidia.com~1gpu) the name follows a "/"
    token = re.compile(r"(?<![A-Za-z0-9.-])(?=([A-Za-z0-9.-]+(?:/|~1)[A-Za-z0-9._-]+))")
    found = []
    lines = source.text.split("\n")  # lines as YAML counts them
    for number, line in enumerate(lines, 1):
        if not line.lstrip().startswith("#"):
            for m in token.finditer(line):
                name = m.group(1).replace("~1", "/")  # JSON pointer escape
                if _reported(config, name) and (
                    _as_resource(lines, number - 1, m.start(), m.group(1))
                    or _template_string(line, m.start(), m.group(1))
                ):
                    found.append((number, m.start() + 1, name, line))
    return found


gpu_mentions = _gpu_mentions  # the lines of a manifest template (convert/file_templates.py)

_KEY_AFTER = re.compile(r"""\s*["']?\s*:(?:\s|$)""")
_FLOW_PARENT = re.compile(r"""([A-Za-z0-9_.\-/]+)["']?\s*:\s*\{(?:[^{}]|\{\{[^{}]*\}\})*$""")
_BLOCK_KEY = re.compile(r"""\s*(?:-\s+)*["']?([A-Za-z0-9_.\-/]+)["']?\s*:(?:\s|$)""")
_DEFINE = re.compile(r'\{\{-?\s*define\s+"([^"]*)"')


def _as_resource(lines: list[str], index: int, start: int, token: str) -> bool:
    """The name is set as a resource: the last step of a JSON pointer into limits or
    requests, or a mapping key whose parent key is where resources are set (limits,
    requests, resources). A node selector, label or toleration on a GPU-like name is
    not a request (``intel.feature.node.kubernetes.io/gpu: "true"``)."""
    line = lines[index]
    before = line[:start]
    if before.endswith(("/limits/", "/requests/")):
        return True
    if not _KEY_AFTER.match(line, start + len(token)):
        return False
    flow = _FLOW_PARENT.search(before)
    if flow is not None:
        return bool(_RESOURCE_PARENT.search(flow.group(1)))
    parent = _block_parent(lines, index, len(line) - len(line.lstrip(" -")))
    return parent is None or bool(_RESOURCE_PARENT.search(parent))


def _block_parent(lines: list[str], index: int, indent: int) -> str | None:
    """The key of the nearest line above with less indentation (template-only, blank
    and comment lines passed over); for a helper's top-level line, the name of its
    ``define`` when that names something other than resources (a node selector); None
    when there is none (the text stands where an include puts it: it may be resources)."""
    for above in (lines[i] for i in range(index - 1, -1, -1)):
        stripped = above.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("{{") and stripped.endswith("}}"):
            define = _DEFINE.search(stripped)
            if define is not None and indent == 0:  # a helper's own text
                return define.group(1) if _NOT_RESOURCES.search(define.group(1)) else None
            continue
        own = len(above) - len(above.lstrip(" "))
        if own < indent:
            key = _BLOCK_KEY.match(above)
            return key.group(1) if key else ""
    return None


# Helper names that hold something other than resources.
_NOT_RESOURCES = re.compile(r"selector|label|affinit|toleration|annotation", re.I)


def _template_string(line: str, start: int, token: str) -> bool:
    """A quoted resource name inside a template action: ``default "nvidia.com/gpu" ...``
    in a helper picks the resource a chart asks for."""
    quoted = (
        line[start - 1 : start] == '"' and line[start + len(token) : start + len(token) + 1] == '"'
    )
    return quoted and "{{" in line[:start]


# The guards a template edit writes (dra_migrate/helm/template_edit.py): the lines
# inside them render the GPU resource only while the chart's DRA switch is off.
_GUARDS = (r"\{\{-\s*if not \$draGpus\s*\}\}", r"\{\{-\s*if \$\.Values\.%s\s*\}\}")
_ACTION_OPEN = re.compile(r"\{\{-?\s*(if|with|range|define|block)\b")
_ACTION_END = re.compile(r"\{\{-?\s*end\b")


def _guarded(source: Source, config: Config) -> set[int]:
    """The line numbers inside the blocks a template edit guards with the chart's DRA
    switch, when the template has the switch: the migrated chart's GPU lines."""
    switch = config.helm.switch_key
    if f".Values.{switch}" not in source.text or "$draGpus" not in source.text:
        return set()
    guard = re.compile("|".join(g % re.escape(switch) if "%s" in g else g for g in _GUARDS))
    inside: set[int] = set()
    depth = 0  # structures open inside the outermost guard (0: outside every guard)
    for number, line in enumerate(source.text.split("\n"), 1):
        if depth:
            inside.add(number)
        for m in re.finditer(r"\{\{-?.*?-?\}\}", line):
            action = m.group(0)
            if depth == 0 and guard.fullmatch(action):
                depth = 1
            elif depth and _ACTION_OPEN.match(action):
                depth += 1
            elif depth and _ACTION_END.match(action):
                depth -= 1
    return inside


def helm_template(source: Source, config: Config) -> list[Finding]:
    """DRA203 for each GPU line of a template; DRA246, once, at the first line the DRA
    switch of a template edit guards (the chart pass then says the chart's way: a
    migrated chart is listed, and its lines are quiet)."""
    found = []
    guarded = _guarded(source, config)
    first_guarded: tuple[int, int] | None = None
    for line, col, name, text in _gpu_mentions(source, config):
        if line in guarded:
            first_guarded = first_guarded or (line, col)
            continue
        ref = _VALUES_REF.search(text)
        where = f"values key {ref.group(1).lstrip('.')}" if ref else "a literal in the template"
        found.append(
            finding(
                "DRA203",
                source.path,
                line,
                col,
                f"Helm chart template sets {name} ({where}); it is left as it is",
                "the chart's finding says why and the way out; else change the template to "
                "render resourceClaims and a ResourceClaimTemplate, or convert the rendered "
                "output (helm template ... | dra-migrate convert -)",
            )
        )
    if first_guarded is not None:
        found.append(
            finding(
                "DRA246",
                source.path,
                *first_guarded,
                f"Helm chart template's GPU lines render only while {config.helm.switch_key} "
                "is off: migrated already (template edits)",
            )
        )
    return found


def _gpu_keys(
    docs: list[Document], config: Config
) -> Iterator[tuple[Document, str, int, int, str, str]]:
    """(document, key path, line, col, resource, value) of GPU keys where resources are set."""
    for doc in docs:
        for path, key_node, name, value in _keys(doc.root, ""):
            if _reported(config, name):
                line, col = trees.position(key_node)
                yield doc, path, line, col, name, value


_RESOURCE_PARENT = re.compile(r"limit|request|resource|guarantee", re.I)
RESOURCE_PARENT = _RESOURCE_PARENT  # where a values file's asks sit (convert/values_asks.py)
gpu_reported = _reported  # a GPU these reports are about (convert/values_asks.py)


def _keys(node: Node | None, prefix: str, parent: str = "") -> list[tuple[str, Node, str, str]]:
    """(path, key node, key, value) of the keys that sit where resources are set:
    under a parent key such as ``limits``, ``requests`` or ``extra_resource_limits``
    (a ``nodeSelector`` on ``nvidia.com/gpu.product`` is not a request)."""
    out: list[tuple[str, Node, str, str]] = []
    for key, key_node, value in entries(node):
        shown = f'"{key}"' if "." in key or "/" in key else key
        here = f"{prefix}.{shown}" if prefix else shown
        if _RESOURCE_PARENT.search(parent):
            out.append((here, key_node, key, scalar(value) or "…"))
        out.extend(_keys(value, here, key))
    for i, item in enumerate(items(node)):
        out.extend(_keys(item, f"{prefix}[{i}]", parent))
    return out


# (what stopped it is added where the overlays are converted: convert/overlays.py)
PATCH_HINT = (
    "convert runs the base and its overlays as one unit: change what stopped it, or "
    "migrate the unit by hand as docs/conversion.md#kustomize-overlays shows"
)


def kustomize_patch(
    source: Source, docs: list[Document], config: Config, via: str
) -> list[Finding]:
    return [
        finding(
            "DRA202",
            source.path,
            line,
            col,
            f"kustomize patch (applied by {via}) sets {name}: {value} on {target} and is "
            "not converted with its base"
            + ("" if config.maps(name) else f" ({name} is not in the mapping)"),
            PATCH_HINT,
        )
        for target, line, col, name, value in _patch_requests(docs, config)
    ]


def _patch_requests(
    docs: list[Document], config: Config, moved: Callable[[int, int], tuple[int, int]] | None = None
) -> Iterator[tuple[str, int, int, str, str]]:
    """(target, line, col, resource, value) of the GPU resources a patch sets: keys under
    limits and requests (a strategic-merge patch), and JSON 6902 operations whose path
    leads into them. A node selector or label with a GPU-like name is not a request."""
    for doc in docs:
        kind = scalar(get(doc.root, "kind")) or "object"
        target = f"{kind} {scalar(trees.get_path(doc.root, 'metadata', 'name')) or ''}".strip()
        found = [
            (target, line, col, name, value)
            for _d, _p, line, col, name, value in _gpu_keys([doc], config)
        ]
        for op in items(doc.root):
            path_node = get(op, "path")
            steps = [
                step.replace("~1", "/").replace("~0", "~")
                for step in (scalar(path_node) or "").split("/")
            ]
            if path_node is None or len(steps) < 2:
                continue
            value = get(op, "value")
            where = f"{scalar(get(op, 'op')) or 'patch'} {scalar(path_node)}"
            if _reported(config, steps[-1]) and _RESOURCE_PARENT.search(steps[-2]):
                line, col = trees.position(path_node)  # at the name: after the last "/"
                quoted = getattr(path_node, "style", None) in ('"', "'")
                col += (scalar(path_node) or "").rfind("/") + 1 + quoted
                found.append((where, line, col, steps[-1], scalar(value) or "…"))
            elif _RESOURCE_PARENT.search(steps[-1]):  # value: {nvidia.com/gpu: 2}
                for key, key_node, amount in entries(value):
                    if _reported(config, key):
                        line, col = trees.position(key_node)
                        found.append((where, line, col, key, scalar(amount) or "…"))
        for target, line, col, name, value in found:
            if moved is not None:
                line, col = moved(line, col)
            yield target, line, col, name, value


def kustomization(source: Source, docs: list[Document], config: Config) -> list[Finding]:
    """Inline patches in a kustomization that set GPU resources: each patch text is
    read as the patch file it stands for, and its findings point into the kustomization."""
    found = []
    for doc in docs:
        for node in _inline_patches(doc):
            text = scalar(node) or ""
            if not any(n.decode("utf-8", "replace") in text for n in config.needles()):
                continue
            try:
                patch_docs = compose.parse(sources.decode(source.path, text.encode()))
            except InputProblem:
                continue  # not YAML: kustomize refuses it too
            for _target, line, col, name, value in _patch_requests(
                patch_docs, config, _inside_scalar(source.text, node)
            ):
                found.append(
                    finding(
                        "DRA202",
                        source.path,
                        line,
                        col,
                        f"inline kustomize patch sets {name}: {value} and is not converted "
                        "with its base",
                        PATCH_HINT,
                    )
                )
    return found


def _inline_patches(doc: Document) -> Iterator[Node]:
    """The scalars of a kustomization that hold a patch's text."""
    for key in ("patches", "patchesJson6902"):
        for entry in items(get(doc.root, key)):
            patch = get(entry, "patch")
            if isinstance(patch, ScalarNode):
                yield patch
    for entry in items(get(doc.root, "patchesStrategicMerge")):
        if isinstance(entry, ScalarNode) and "\n" in (scalar(entry) or ""):
            yield entry  # an inline patch, not a file name


_BLOCK_INDENT = re.compile(r"(?:[ \t]*\n)*( *)")  # blank lines, then the indentation


def _inside_scalar(text: str, node: Node) -> Callable[[int, int], tuple[int, int]]:
    """Where (line, col) of a scalar's value stands in the file: for a literal block
    scalar (``|``: its lines are the value's lines), a line of its indented text; else
    the scalar itself (a folded or quoted value's lines are not the file's)."""
    start = trees.position(node)
    if getattr(node, "style", None) != "|":
        return lambda line, col: start
    first = text.find("\n", node.start_mark.index) + 1
    match = _BLOCK_INDENT.match(text, first)
    indent = len(match.group(1)) if match else 0
    return lambda line, col: (start[0] + line, indent + col)


# Objects that limit or default GPU extended resources for others: reported, never edited.
POLICY_KINDS = {
    ("", "ResourceQuota"): quota,
    ("", "LimitRange"): limit_range,
    ("kueue.x-k8s.io", "ClusterQueue"): kueue_quota,
}
