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
    """The classes to create for the classes ``used`` by the mapping and the ``bridged``
    names; a name a driver's class maps on ``target`` (``catalog.driver_bridge``), or a
    ``repository`` class maps, needs none."""
    from dra_migrate.k8s.catalog import load_catalog

    known = load_catalog()
    catalog = {c.name: c for c in known.device_classes}
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
            plan.installed.append(
                InstalledClass(
                    info.name, info.driver, info.extended_resource_name or None, info.note
                )
            )
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
        maps = known.driver_bridge(item.resource, target)
        served_installed = [
            c
            for c in plan.installed
            if maps is not None and c.name == maps.name and not item.selectors
        ]
        if served or served_installed:
            plan.bridge[item.resource] = (served or served_installed)[0].name
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
        created = PlannedClass(
            name=bridge_class_name(item.resource),
            driver=driver,
            selectors=(*class_selectors, *item.selectors),
            config=item.config,
            extended_resource_name=item.resource,
            origin=BRIDGE,
            description=f"bridge: pods asking for {item.resource} get a device of this class",
        )
        plan.classes.append(created)
        plan.bridge[item.resource] = created.name
    plan.findings.extend(_duplicates(plan, target))
    for planned in plan.classes:
        problems = check_class(planned)
        if not any(p.code == "DRA501" for p in problems):
            problems += schema_findings(planned, target, kube_version)
        plan.findings.extend(problems)
    if not any(f.code in ("DRA501", "DRA502") for f in plan.findings) and plan.classes:
        text, problems = render(plan.classes, target)
        plan.findings.extend(problems)
        plan.yaml = "" if problems else text
    return plan


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
    """Only one class may map an extended resource name (KEP-5004); an installed class
    counts where its driver maps the name for ``target`` (``catalog.driver_bridge``)."""
    from dra_migrate.k8s.catalog import load_catalog

    known = load_catalog()
    owners: dict[str, list[str]] = {}
    where: dict[str, tuple[str, int, int]] = {}
    for c in plan.classes:
        if c.extended_resource_name:
            owners.setdefault(c.extended_resource_name, []).append(c.name)
            where.setdefault(c.extended_resource_name, (c.path, c.line, c.col))
    for i in plan.installed:
        maps = known.driver_bridge(i.extended_resource_name or "", target)
        if i.extended_resource_name and maps is not None and maps.name == i.name:
            owners.setdefault(i.extended_resource_name, []).append(f"{i.name} (installed)")
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
                    "give each extended resource name to one class; for an installed class, "
                    "turn its extendedResourceName off in the driver's chart values",
                )
            )
    return found


def check_class(c: PlannedClass) -> list[Finding]:
    """DRA501 for names and the extended resource name, DRA502 for CEL, DRA505 for gates."""
    from dra_migrate.cel import check_selector

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
