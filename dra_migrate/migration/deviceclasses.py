"""DeviceClasses the migration needs: which, checked, and rendered from ``templates/``.

Three sources: classes the project defines (``deviceClasses`` in the
configuration: a class per GPU product or MIG profile, with optional opaque
driver config), classes the bridge strategy needs (``spec.extendedResourceName``,
one per extended resource, so one per MIG profile), and the classes known
drivers install themselves (never rendered, only checked against the others).

Every value is checked before rendering (DNS names, the extended resource name,
CEL), every scalar is rendered as a double-quoted string that reads back as
the same value, and the rendered text is read back and compared with the
values: nothing a user writes in the mapping can add YAML to the output.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.convert.mapping import ClassDefinition, Config
from dra_migrate.k8s.catalog import DeviceClassInfo
from dra_migrate.k8s.names import DNS_SUBDOMAIN
from dra_migrate.report.findings import Finding, escape, finding, has_unsafe, unsafe
from dra_migrate.report.model import BridgeClass

# An extended resource name: a domain-prefixed qualified name, not in kubernetes.io
# (the API server rejects those), and not the quota form ``requests.<name>``.
EXTENDED_RESOURCE = re.compile(
    r"(?P<domain>[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)"
    r"/(?P<name>[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)"
)
# YAML 1.1 line breaks and characters a YAML reader refuses or folds: always escaped.
# Driver sharing strategies and the driver feature gate each needs (NVIDIA driver,
# pkg/featuregates: both alpha and off by default).
SHARING_GATES = {"TimeSlicing": "TimeSlicingSettings", "MPS": "MPSSupport"}

CONFIGURATION, BRIDGE = "configuration", "bridge"

# The rule of coexistence, for the plan's prerequisites. Sources: kubernetes/enhancements
# keps/sig-scheduling/5004-dra-extended-resource/README.md @64765b4b (non-goals; "one
# node in a cluster cannot have both ..."; device plugins "can be replaced with DRA
# drivers for the same devices on a per-node basis, one node at a time"); the NVIDIA GPU
# Operator docs, dra-intro-install ("either a GPUCluster resource for DRA or a
# ClusterPolicy resource for the Device Plugin, but not both": per cluster, where
# issue 26 said per node); the AMD GPU Operator docs, device_plugin/device-plugin (the
# device plugin "cannot be enabled at the same time as the DRA driver").
COEXISTENCE = (
    "a node must not serve a name from the device plugin and a DRA driver at once "
    "(KEP-5004: a node advertises it in status.capacity or in ResourceSlices, not both; "
    "both on one node hand out the same GPUs twice): migrate node by node, labelling the "
    "nodes each wave moves and taking the device plugin off them before the DRA driver "
    "starts there. The GPU operators refuse both stacks: NVIDIA's takes a GPUCluster (DRA) "
    "or a ClusterPolicy (device plugin), not both, in a cluster; AMD's DeviceConfig cannot "
    "enable both"
)
# The rollback of a bridge served by a class its driver installs with the name.
DRIVER_CLASS_ROLLBACK = (
    "is the driver's own class, whose chart maps the name whatever its values say: move the "
    "wave's nodes back to the device plugin (the DRA driver's kubelet plugin off them first), "
    "as a node serves a name from one of the two (KEP-5004)"
)


def release_note(driver: str, configured: Iterable[tuple[str, str]]) -> str:
    """'; selectors are checked against its release R (why)' for a driver the catalog
    versions, '' for another: the release a run assumes (``drivers:``, else the newest tag)."""
    from dra_migrate.k8s.catalog import load_catalog

    assumed = load_catalog().assumed_releases(dict(configured))
    if driver not in assumed:
        return ""
    release, why = assumed[driver]
    return f"; selectors are checked against its release {release} ({why})"


@dataclass(frozen=True, slots=True)
class PlannedClass:
    """A DeviceClass to create."""

    name: str
    driver: str
    selectors: tuple[str, ...]
    config: tuple[Mapping[str, Any], ...]
    extended_resource_name: str | None
    origin: str  # CONFIGURATION or BRIDGE
    description: str = ""
    path: str = ""  # where it is defined (the configuration file), "" when generated
    line: int = 0
    col: int = 0

    def to_object(self, target: str) -> dict[str, Any]:
        spec: dict[str, Any] = {}
        if self.selectors:
            spec["selectors"] = [{"cel": {"expression": s}} for s in self.selectors]
        if self.config:
            spec["config"] = [
                {"opaque": {"driver": c["driver"], "parameters": c["parameters"]}}
                for c in self.config
            ]
        if self.extended_resource_name:
            spec["extendedResourceName"] = self.extended_resource_name
        return {
            "apiVersion": f"resource.k8s.io/{target}",
            "kind": "DeviceClass",
            "metadata": {"name": self.name},
            "spec": spec,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "driver": self.driver,
            "origin": self.origin,
            "selectors": list(self.selectors),
            "extendedResourceName": self.extended_resource_name,
            "description": self.description,
        }


@dataclass(frozen=True, slots=True)
class InstalledClass:
    """A class a known driver installs, that the mapping uses."""

    name: str
    driver: str
    extended_resource_name: str | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "driver": self.driver,
            "extendedResourceName": self.extended_resource_name,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class Bridged:
    """An extended resource served through the bridge: its mapped class and selectors."""

    resource: str
    device_class: str
    selectors: tuple[str, ...] = ()
    config: tuple[Mapping[str, Any], ...] = ()


@dataclass(slots=True)
class ClassPlan:
    """The DeviceClasses a migration needs, and what is wrong with them. Not frozen:
    ``plan_classes`` fills it in, one class or finding at a time."""

    classes: list[PlannedClass] = field(default_factory=list)
    installed: list[InstalledClass] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    yaml: str = ""  # the rendered manifests of ``classes``, "" when there are none
    # extended resource -> the class that serves it through the bridge
    bridge: dict[str, str] = field(default_factory=dict)

    def selectors(self) -> dict[str, list[str]]:
        """Class name -> CEL selectors, for the classes this plan creates."""
        return {c.name: list(c.selectors) for c in self.classes}


def plan_classes(
    config: Config,
    used: Iterable[str],
    bridged: Sequence[Bridged] = (),
    target: str = "v1",
    kube_version: str | None = None,
    repository: Sequence[BridgeClass] = (),
) -> ClassPlan:
    """The classes to create for the classes ``used`` by the mapping and the ``bridged`` names.

    A name a known driver's installed class maps by default on ``target`` gets no
    class of its own (only one class may map a name, KEP-5004): DRA518 says which
    class serves it; nor does a name a ``repository`` class maps. A name an opt-in
    shape of a driver's demos covers gets the shape's name (``nvidia.com/mig-1g.12gb``
    -> ``mig-1g-12gb.gpu.nvidia.com``)."""
    from dra_migrate.k8s.catalog import load_catalog

    known = load_catalog()
    catalog = {c.name: c for c in known.device_classes if not c.opt_in}
    plan = ClassPlan()
    where = config.path or ""
    for definition in config.device_classes:
        plan.classes.append(_from_configuration(definition, where))
    defined = {c.name: c for c in plan.classes}
    used = sorted(set(used) | {b.device_class for b in bridged})
    for name in used:
        if name in defined:
            continue
        info = catalog.get(name)
        if info is not None:
            plan.installed.append(_installed(info, target))
            continue
        plan.findings.append(
            finding(
                "DRA504",
                where,
                1 if where else 0,
                1 if where else 0,
                f"the mapping names DeviceClass {name}, which no known driver installs and "
                "deviceClasses does not define: requests for it are never allocated",
                "define it under deviceClasses (driver and CEL selectors) or map to an "
                "installed class",
            )
        )
    for item in bridged:
        served = [c for c in plan.classes if c.extended_resource_name == item.resource]
        if served:
            plan.bridge[item.resource] = served[0].name
            continue
        driver_class = known.driver_bridge(item.resource, target)
        if driver_class is not None:
            plan.bridge[item.resource] = driver_class.name
            if not any(i.name == driver_class.name for i in plan.installed):
                plan.installed.append(_installed(driver_class, target))
            plan.findings.append(_served_by_driver(item, driver_class, target, where))
            continue
        own = [c for c in repository if c.resource == item.resource]
        if own:  # the repository defines it: nothing to create
            plan.bridge[item.resource] = own[0].name
            continue
        base = defined.get(item.device_class)
        info = catalog.get(item.device_class)
        if base is None and info is None:
            plan.findings.append(
                finding(
                    "DRA511",
                    where,
                    0,
                    0,
                    f"{item.resource} is bridged, but its DeviceClass {item.device_class} is "
                    "unknown: no class with extendedResourceName can be made for it",
                    "define the class under deviceClasses, or use --strategy rewrite",
                )
            )
            continue
        driver = base.driver if base else info.driver  # type: ignore[union-attr]
        class_selectors = base.selectors if base else (info.selector,)  # type: ignore[union-attr]
        shape = known.bridge_shape(item.resource) if base is None else None
        description = f"bridge: pods asking for {item.resource} get a device of this class"
        if shape is not None:
            description += f" (named as the {driver} driver's demos name it)"
        created = PlannedClass(
            name=shape[1] if shape is not None else bridge_class_name(item.resource),
            driver=driver,
            selectors=(*class_selectors, *item.selectors),
            config=item.config,
            extended_resource_name=item.resource,
            origin=BRIDGE,
            description=description,
        )
        plan.classes.append(created)
        plan.bridge[item.resource] = created.name
    plan.findings.extend(_duplicates(plan, target))
    for planned in plan.classes:
        problems = check_class(planned, dict(config.driver_releases))
        if not any(p.code == "DRA501" for p in problems):
            problems += schema_findings(planned, target, kube_version)
        plan.findings.extend(problems)
    if not any(f.code in ("DRA501", "DRA502") for f in plan.findings) and plan.classes:
        text, problems = render(plan.classes, target)
        plan.findings.extend(problems)
        plan.yaml = "" if problems else text
    return plan


def _installed(info: DeviceClassInfo, target: str) -> InstalledClass:
    """A class a driver installs, with the name it maps by default on ``target`` (an
    opt-in name is not mapped until the chart's values ask, so it is not shown)."""
    maps = info.extended_resource_name if target in info.bridges_by_default_on else ""
    return InstalledClass(info.name, info.driver, maps or None, info.note)


def _served_by_driver(item: Bridged, info: DeviceClassInfo, target: str, where: str) -> Finding:
    """DRA518: the driver's own class bridges ``item.resource``; none is generated."""
    message = (
        f"{item.resource} is bridged by DeviceClass {info.name}, which the {info.driver} "
        f"driver's chart installs with extendedResourceName: {item.resource} on "
        f"resource.k8s.io/{target}: no class is generated for it (one class may map a "
        "name, KEP-5004)"
    )
    hint = "pods that keep the name in their limits get a device of that class"
    if item.selectors or item.config or item.device_class != info.name:
        message += (
            f"; the mapping's class {item.device_class}"
            + (", selectors" if item.selectors else "")
            + (", config" if item.config else "")
            + " do not apply to them: they get any device of "
            + info.name
        )
        hint = "convert the workloads that need the mapping's choice with --strategy rewrite"
    return finding("DRA518", where, 0, 0, message, hint)


def classes_for_mapping(
    config: Config, flag: str | None, target: str = "v1", kube_version: str | None = None
) -> ClassPlan:
    """The classes of the mapping itself, without a repository: every class it names,
    and a class per extended resource it names literally that the strategy bridges
    (``--strategy``, or the configuration's for that name: ``strategy.asked_for_resource``)."""
    from dra_migrate.migration import strategy

    used: set[str] = set()
    bridged: list[Bridged] = []
    for m in config.resources:
        names = [m.device_class, *(r.device_class for r in m.rules if r.device_class)]
        used.update(n for n in names if "{" not in n)
        literal = "{" not in m.name
        wanted = strategy.asked_for_resource(config.strategy, flag, m.name)
        if wanted == strategy.BRIDGE and literal and "{" not in m.device_class:
            bridged.append(Bridged(m.name, m.device_class, m.selectors, m.config))
    return plan_classes(config, used, bridged, target, kube_version)


def _from_configuration(definition: ClassDefinition, where: str) -> PlannedClass:
    return PlannedClass(
        name=definition.name,
        driver=definition.driver,
        selectors=definition.selectors,
        config=definition.config,
        extended_resource_name=definition.extended_resource_name,
        origin=CONFIGURATION,
        description=definition.description,
        path=where,
        line=definition.line,
        col=definition.col,
    )


def bridge_class_name(resource: str) -> str:
    """``nvidia.com/mig-1g.10gb`` -> ``mig-1g-10gb.extended.nvidia.com`` (a DNS subdomain)."""
    domain, _slash, local = resource.partition("/")
    slug = re.sub(r"[^a-z0-9-]+", "-", local.lower()).strip("-")
    name = f"{slug}.extended.{domain.lower()}"
    if len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
        digest = hashlib.sha256(resource.encode()).hexdigest()[:10]
        name = f"extended-{digest}"
    return name


def _duplicates(plan: ClassPlan, target: str) -> list[Finding]:
    """Only one class may map an extended resource name (KEP-5004): the classes of
    the plan, and those a known driver installs that map it by default on ``target``
    (installed whether the mapping uses them or not)."""
    from dra_migrate.k8s.catalog import load_catalog

    owners: dict[str, list[str]] = {}
    where: dict[str, tuple[str, int, int]] = {}
    for c in plan.classes:
        if c.extended_resource_name:
            owners.setdefault(c.extended_resource_name, []).append(c.name)
            where.setdefault(c.extended_resource_name, (c.path, c.line, c.col))
    installed: dict[str, str] = {i.name: i.extended_resource_name or "" for i in plan.installed}
    for resource in list(owners):
        driver_class = load_catalog().driver_bridge(resource, target)
        if driver_class is not None:
            installed.setdefault(driver_class.name, resource)
    for name, mapped in installed.items():
        if mapped:
            owners.setdefault(mapped, []).append(f"{name} (installed)")
    found = []
    for resource, names in sorted(owners.items()):
        if len(names) > 1:
            path, line, col = where.get(resource, ("", 0, 0))
            found.append(
                finding(
                    "DRA510",
                    path,
                    line,
                    col,
                    f"{len(names)} DeviceClasses map extended resource {resource}: "
                    f"{', '.join(names)}; the scheduler uses only one of them (the newest, "
                    "then the first by name)",
                    "give each extended resource name to one class; a class a driver installs "
                    "keeps its name unless its chart can turn it off (NVIDIA's gpu.nvidia.com "
                    "maps nvidia.com/gpu whenever the chart renders resource.k8s.io/v1)",
                )
            )
    return found


def check_class(c: PlannedClass, releases: Mapping[str, str] | None = None) -> list[Finding]:
    """DRA501 for names and the extended resource name, DRA502 for CEL, DRA505 for gates,
    DRA506 for config fields the driver release (``releases``, else the catalog's
    default) does not decode."""
    from dra_migrate.cel import check_selector
    from dra_migrate.k8s.catalog import load_catalog

    found: list[Finding] = []

    def add(code: str, message: str, hint: str = "") -> None:
        found.append(finding(code, c.path, c.line, c.col, message, hint))

    if len(c.name) > 253 or not DNS_SUBDOMAIN.fullmatch(c.name):
        add("DRA501", f"DeviceClass name {c.name!r} is not a DNS subdomain")
    if len(c.driver) > 63 or not DNS_SUBDOMAIN.fullmatch(c.driver):
        add("DRA501", f"DeviceClass {c.name}: driver {c.driver!r} is not a DNS subdomain")
    ext = c.extended_resource_name
    if ext is not None:
        match = EXTENDED_RESOURCE.fullmatch(ext)
        problem = ""
        if match is None or len(match["domain"]) > 253 or len(match["name"]) > 63:
            problem = "is not an extended resource name (domain/name)"
        elif match["domain"] == "kubernetes.io" or match["domain"].endswith(".kubernetes.io"):
            problem = "is in the kubernetes.io domain, which extended resources may not use"
        elif match["name"].startswith("requests."):
            problem = "starts with requests., the quota form of a name"
        if problem:
            add("DRA501", f"DeviceClass {c.name}: extendedResourceName {ext!r} {problem}")
    for expression in c.selectors:
        for p in check_selector(expression):
            if p.severity == "error":
                add(
                    "DRA502",
                    f"DeviceClass {c.name}: selector {_short(expression)}: {p.message}",
                    p.hint,
                )
    for entry in c.config:
        parameters = entry.get("parameters")
        sharing = parameters.get("sharing") if isinstance(parameters, Mapping) else None
        strategy = sharing.get("strategy") if isinstance(sharing, Mapping) else None
        gate = SHARING_GATES.get(strategy) if isinstance(strategy, str) else None
        if gate:
            add(
                "DRA505",
                f"DeviceClass {c.name}: sharing strategy {strategy} needs the driver feature "
                f"gate {gate} (alpha, off by default); without it the driver rejects the claim",
                f"install the driver with featureGates.{gate}=true",
            )
        if isinstance(parameters, Mapping):
            catalog = load_catalog()
            assumed = catalog.assumed_releases(releases or {})
            for field_ in catalog.config_fields:
                if field_.driver != entry.get("driver") or not field_.value_in(parameters):
                    continue
                release, why = assumed.get(field_.driver, ("", ""))
                order = [r.release for r in catalog.domains[field_.driver].releases]
                if release in order and order.index(release) < order.index(field_.since):
                    add(
                        "DRA506",
                        f"DeviceClass {c.name}: {field_.path} is decoded by {field_.driver} "
                        f"from driver release {field_.since}; this run assumes {release} "
                        f"({why}), whose strict decoding rejects the config ({field_.note})",
                        f"drop {field_.path}, or say the release the cluster runs: drivers: "
                        f'{{{field_.driver}: "{field_.since}"}} in .dra-migrate.yaml',
                    )
    return found


def _short(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


# --- rendering -------------------------------------------------------------------


def yaml_string(value: str) -> str:
    """A double-quoted YAML scalar that reads back as ``value`` in YAML 1.1 and 1.2,
    with every unsafe character (``findings.unsafe``: controls, bidirectional and
    other format characters, line separators, surrogates, unassigned and private
    code points) written as a YAML escape: none reaches a reader's screen raw."""
    text = json.dumps(value, ensure_ascii=False)
    if not has_unsafe(text):
        return text
    return "".join(_yaml_escape(c) if unsafe(c) else c for c in text)


def _yaml_escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def yaml_flow(value: Any) -> str:
    """A JSON value as a YAML flow node (strings quoted as ``yaml_string``)."""
    if isinstance(value, str):
        return yaml_string(value)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, Mapping):
        return (
            "{"
            + ", ".join(f"{yaml_string(str(k))}: {yaml_flow(v)}" for k, v in value.items())
            + "}"
        )
    if isinstance(value, list | tuple):
        return "[" + ", ".join(yaml_flow(v) for v in value) + "]"
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _float(value: float) -> str:
    """A float in the form YAML 1.1 reads as a float (it needs a dot: ``1.0e+20``)."""
    if value != value or value in (float("inf"), float("-inf")):
        raise TypeError(f"{value} is not a JSON number")
    text = repr(value)
    mantissa, _e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    if exponent and exponent[0] not in "+-":
        exponent = "+" + exponent
    return mantissa + (f"e{exponent}" if exponent else "")


def yaml_comment(text: str) -> list[str]:
    """Comment lines for untrusted text: every line break a YAML reader knows splits it."""
    lines = re.split(r"\r\n|[\r\n\x85\u2028\u2029]", text)
    return [escape(line).rstrip() for line in lines]  # the text view's escapes


def render(classes: Sequence[PlannedClass], target: str) -> tuple[str, list[Finding]]:
    """The manifests of ``classes``, and DRA503 for any that does not read back as its values."""
    from dra_migrate.manifests import compose, sources, trees
    from dra_migrate.package_data import jinja_environment
    from dra_migrate.report.findings import InputProblem

    env = jinja_environment()
    env.filters["q"] = yaml_string
    env.filters["flow"] = yaml_flow
    env.filters["comment"] = yaml_comment
    template = env.get_template("deviceclass.yaml.j2")
    found: list[Finding] = []
    texts: list[str] = []
    for c in classes:
        try:
            text = template.render(c=c, target=target, origin=c.origin)
        except TypeError as exc:
            found.append(_unreadable(c, f"its config parameters cannot be written: {exc}"))
            continue
        try:
            docs = compose.parse(sources.decode(c.name, text.encode("utf-8")))
            back = [trees.to_data(d.root) for d in docs if d.root is not None]
        except InputProblem as problem:
            found.append(_unreadable(c, problem.finding.message))
            continue
        if back != [c.to_object(target)]:
            found.append(_unreadable(c, "a value reads back differently"))
            continue
        texts.append(text)
    return "---\n".join(texts), found


def _unreadable(c: PlannedClass, why: str) -> Finding:
    return finding(
        "DRA503",
        c.path,
        c.line,
        c.col,
        f"DeviceClass {c.name} was not written: the rendered YAML does not read back as the "
        f"values given ({why})",
        "write the value as a plain string or number",
    )


def schema_findings(c: PlannedClass, target: str, kube_version: str | None) -> list[Finding]:
    """The strict schema of the target release for the rendered object (DRA501)."""
    from dra_migrate.k8s import schemas

    try:
        errors = schemas.validate_object(c.to_object(target), kube_version)
    except (schemas.SchemaNotFound, ValueError) as exc:
        return [finding("DRA501", c.path, c.line, c.col, f"DeviceClass {c.name}: {exc}")]
    return [
        finding(
            "DRA501",
            c.path,
            c.line,
            c.col,
            f"DeviceClass {c.name} fails the resource.k8s.io/{target} schema: "
            f"{schemas.format_path(e.path)}: {e.message}",
        )
        for e in errors
    ]
