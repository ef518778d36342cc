"""What is reported and never converted: Helm chart templates and values files,
kustomize patches, ResourceQuotas, and GPU requests outside any pod spec.

Each function reads one file (or one object) and returns findings; the
pipeline decides which applies from the file's role (``layout.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from yaml.nodes import MappingNode, Node

from dra_migrate import lazyre, load, locate
from dra_migrate.findings import Finding, finding
from dra_migrate.load import Document, Source, entries, get, items, scalar
from dra_migrate.mapping import Config, Context

# Mappings of resource name to quantity: a pod's requests and limits, and KubeSpawner's
# extra_resource_limits/guarantees (JupyterHub profiles, kubespawner_override).
RESOURCE_FIELDS = ("limits", "requests", "extra_resource_limits", "extra_resource_guarantees")

_VALUES_REF = lazyre.compile(r"\.Values((?:\.[A-Za-z0-9_]+|\[\s*\"[^\"]+\"\s*\])+)")


def outside(
    workload: locate.Workload, covered: list[Node], config: Config, path: str
) -> list[Finding]:
    """GPU resources in a requests/limits mapping that no located container holds."""
    found: list[Finding] = []
    inside = {id(n) for n in covered}
    stack: list[tuple[str, Node]] = [("", workload.root)]
    while stack:
        where, node = stack.pop()
        if id(node) in inside:
            continue
        if isinstance(node, MappingNode):
            for key, _key_node, value in entries(node):
                here = f"{where}.{key}" if where else key
                if key in RESOURCE_FIELDS and isinstance(value, MappingNode):
                    for name, name_node, _v in entries(value):
                        if config.is_gpu(name):
                            line, col = load.position(name_node)
                            who = (
                                f"{workload.kind} {workload.name}".strip()
                                if workload.kind
                                else "a document without kind (a values or config file?)"
                            )
                            found.append(
                                finding(
                                    "DRA212",
                                    path,
                                    line,
                                    col,
                                    f"{who} asks for {name} at {here}, "
                                    "outside any pod spec dra-migrate can convert",
                                    (
                                        "the operator of this kind turns it into pod resources: move "
                                        "the request to a pod template it supports, or keep the "
                                        "device plugin for it"
                                        if workload.kind
                                        else "whatever renders it into pods (a chart, a spawner) "
                                        "must write claims: convert its rendered output"
                                    ),
                                )
                            )
                    continue
                stack.append((here, value))
        else:
            for i, item in enumerate(items(node)):
                stack.append((f"{where}[{i}]", item))
    return sorted(found)


def quota(workload: locate.Workload, config: Config, path: str) -> list[Finding]:
    found: list[Finding] = []
    for key, key_node, value in entries(load.get_path(workload.root, "spec", "hard")):
        resource = key.removeprefix("requests.").removeprefix("limits.")
        if not config.is_gpu(resource):
            continue
        choice = config.choose(resource, Context(namespace=workload.namespace))
        quota_key = (
            f"{choice.device_class}.deviceclass.resource.k8s.io/devices"
            if choice
            else "<device-class>.deviceclass.resource.k8s.io/devices"
        )
        line, col = load.position(key_node)
        found.append(
            finding(
                "DRA206",
                path,
                line,
                col,
                f"ResourceQuota {workload.name} limits {key}: {scalar(value)}, which DRA claims do not count against",
                f"add {quota_key}: {scalar(value)} to spec.hard",
            )
        )
    return found


def kueue_quota(workload: locate.Workload, config: Config, path: str) -> list[Finding]:
    """A Kueue ClusterQueue whose flavors give a GPU extended resource a quota: converted
    jobs ask for claims, which Kueue counts only through its deviceClassMappings."""
    found = []
    for group in items(load.get_path(workload.root, "spec", "resourceGroups")):
        for flavor in items(get(group, "flavors")):
            flavor_name = scalar(get(flavor, "name")) or "?"
            for resource in items(get(flavor, "resources")):
                name_node = get(resource, "name")
                name = scalar(name_node) or ""
                if name_node is None or not config.is_gpu(name):
                    continue
                choice = config.choose(name, Context(namespace=workload.namespace))
                device_class = choice.device_class if choice else "<device-class>"
                quota = scalar(get(resource, "nominalQuota")) or "?"
                line, col = load.position(name_node)
                found.append(
                    finding(
                        "DRA223",
                        path,
                        line,
                        col,
                        f"ClusterQueue {workload.name} gives {name} a quota of {quota} in "
                        f"flavor {flavor_name}; converted jobs ask for DRA claims instead, "
                        "which this quota does not count, so they stop counting against it",
                        "Kueue counts claims only through deviceClassMappings in its "
                        "Configuration (its DynamicResourceAllocation feature): map device "
                        f"class {device_class} to a resource name and give that name the quota "
                        "here; keep the old entry while jobs still use the device plugin",
                    )
                )
    return found


def limit_range(workload: locate.Workload, config: Config, path: str) -> list[Finding]:
    """A LimitRange that gives containers a GPU default (or minimum) puts the
    extended resource back into every converted container."""
    found = []
    for limit in items(load.get_path(workload.root, "spec", "limits")):
        for field in ("default", "defaultRequest", "min"):
            for key, key_node, value in entries(get(limit, field)):
                if not config.is_gpu(key):
                    continue
                line, col = load.position(key_node)
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


def _gpu_mentions(
    source: Source, config: Config, template: bool = False
) -> list[tuple[int, int, str, str, int]]:
    """(line, col, resource, line text, offset) for every resource-name token in the text."""
    # overlapping candidates, each starting at a token boundary: in a JSON
    # pointer (/resources/limits/nvidia.com~1gpu) the name follows a "/"
    token = re.compile(r"(?<![A-Za-z0-9.-])(?=([A-Za-z0-9.-]+(?:/|~1)[A-Za-z0-9._-]+))")
    found = []
    offset = 0
    for number, line in enumerate(source.text.split("\n"), 1):  # lines as YAML counts them
        if not line.lstrip().startswith("#"):
            for m in token.finditer(line):
                name = m.group(1).replace("~1", "/")  # JSON pointer escape
                if config.is_gpu(name) and (
                    _as_resource(line, m.start(), m.group(1))
                    or (template and _template_string(line, m.start(), m.group(1)))
                ):
                    found.append((number, m.start() + 1, name, line, offset + m.start()))
        offset += len(line) + 1
    return found


_KEY_AFTER = lazyre.compile(r"""\s*["']?\s*:(?:\s|$)""")


def _as_resource(line: str, start: int, token: str) -> bool:
    """The name is used as a resource: a mapping key, or the last step of a
    JSON pointer into limits or requests (a toleration ``key: nvidia.com/gpu``
    is only a mention)."""
    if _KEY_AFTER.match(line, start + len(token)):
        return True
    before = line[:start]
    return before.endswith(("/limits/", "/requests/"))


def _template_string(line: str, start: int, token: str) -> bool:
    """A quoted resource name inside a template action: ``default "nvidia.com/gpu" ...``
    in a helper picks the resource a chart asks for."""
    quoted = (
        line[start - 1 : start] == '"' and line[start + len(token) : start + len(token) + 1] == '"'
    )
    return quoted and "{{" in line[:start]


def helm_template(source: Source, config: Config) -> list[Finding]:
    found = []
    for line, col, name, text, _at in _gpu_mentions(source, config, template=True):
        ref = _VALUES_REF.search(text)
        where = f"values key {ref.group(1).lstrip('.')}" if ref else "a literal in the template"
        found.append(
            finding(
                "DRA203",
                source.path,
                line,
                col,
                f"Helm chart template sets {name} ({where}); chart templates are never modified",
                "change the template to render resourceClaims and a ResourceClaimTemplate, "
                "or convert the rendered output (helm template ... | dra-migrate convert -)",
            )
        )
    return found


def _gpu_keys(
    docs: list[Document], config: Config
) -> Iterator[tuple[Document, str, int, int, str, str]]:
    """(document, key path, line, col, resource, value) of GPU keys where resources are set."""
    for doc in docs:
        for path, key_node, name, value in _keys(doc.root, ""):
            if config.is_gpu(name):
                line, col = load.position(key_node)
                yield doc, path, line, col, name, value


def helm_values(source: Source, docs: list[Document], config: Config) -> list[Finding]:
    return [
        finding(
            "DRA204",
            source.path,
            line,
            col,
            f"values key {path} sets {name}: {value}; values files are never modified",
            "the chart's templates turn it into an extended resource: convert the chart, "
            "or convert its rendered output",
        )
        for _doc, path, line, col, name, value in _gpu_keys(docs, config)
    ]


_RESOURCE_PARENT = lazyre.compile(r"limit|request|resource|guarantee", re.I)


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


PATCH_HINT = (
    "migrate the base and this overlay together by hand: give the overlay a "
    "ResourceClaimTemplate of its own for this count (a new name: a template's spec is "
    "immutable, so patching the count of a live one is rejected), and make this patch set "
    "the pod's resourceClaims and the container's resources.claims instead of the extended "
    "resource"
)


def kustomize_patch(
    source: Source, docs: list[Document], config: Config, via: str
) -> list[Finding]:
    found = []
    for doc, _path, line, col, name, value in _gpu_keys(docs, config):
        kind = scalar(get(doc.root, "kind")) or "object"
        target = f"{kind} {scalar(load.get_path(doc.root, 'metadata', 'name')) or ''}".strip()
        found.append(
            finding(
                "DRA202",
                source.path,
                line,
                col,
                f"kustomize patch (applied by {via}) sets {name}: {value} on {target}; "
                "patches are never converted, and the objects it patches stay on the device "
                "plugin with it (DRA222 where the base asks for GPUs)",
                PATCH_HINT,
            )
        )
    if not found:  # a JSON6902 patch names the resource in a path string
        for line, col, name, _text, _at in _gpu_mentions(source, config):
            found.append(
                finding(
                    "DRA202",
                    source.path,
                    line,
                    col,
                    f"kustomize patch (applied by {via}) touches {name}; the objects it patches "
                    "stay on the device plugin with it (DRA222 where the base asks for GPUs)",
                    PATCH_HINT,
                )
            )
    return found


def kustomization(source: Source, docs: list[Document], config: Config) -> list[Finding]:
    """Inline patches in a kustomization that touch GPU resources."""
    found = []
    spans: list[tuple[int, int]] = []
    for doc in docs:
        for key in ("patches", "patchesStrategicMerge", "patchesJson6902"):
            node = get(doc.root, key)
            if node is not None:
                spans.append((node.start_mark.index, node.end_mark.index))
    for line, col, name, _text, at in _gpu_mentions(source, config):
        if any(a <= at < b for a, b in spans):
            found.append(
                finding(
                    "DRA202",
                    source.path,
                    line,
                    col,
                    f"inline kustomize patch touches {name}; the objects it patches stay on the "
                    "device plugin with it (DRA222 where the base asks for GPUs)",
                    PATCH_HINT,
                )
            )
    return found


# Objects that limit or default GPU extended resources for others: reported, never edited.
POLICY_KINDS = {
    ("", "ResourceQuota"): quota,
    ("", "LimitRange"): limit_range,
    ("kueue.x-k8s.io", "ClusterQueue"): kueue_quota,
}
