"""What real DRA drivers publish: attribute and capacity names per domain.

The data lives in YAML files in the ``catalog/`` folder next to this module (see
``catalog/README.md`` for the format); this module only loads, validates and
indexes it. ``load_catalog()`` is cached, so callers may call it freely.

Terms: a *qualified name* is ``domain/name``; an unqualified attribute or capacity
name in a ResourceSlice belongs to the slice's driver domain. In CEL the domain is
the outer map key: ``device.attributes["gpu.nvidia.com"].productName``.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dra_migrate.k8s.names import is_dns_subdomain
from dra_migrate.package_data import package_file

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from os import PathLike
    from typing import Any

CATALOG_DIR = package_file("catalog")

ATTRIBUTE_TYPES = frozenset({"string", "int", "bool", "version"})
STALE_WHERE = frozenset({"attribute", "capacity", "opaque-apiVersion", "field"})


class CatalogError(ValueError):
    """A catalog data file is malformed."""


@dataclass(frozen=True, slots=True)
class Release:
    """One release of a driver the catalog describes, and where its facts were read."""

    release: str  # major.minor, as the driver numbers its feature gates ("0.5")
    tag: str  # the newest tag of that line, "" for a release not yet tagged (main)
    commit: str  # the driver commit the catalog's facts for it were read at


@dataclass(frozen=True, slots=True)
class Lifetime:
    """The releases of its driver that publish a name: from ``since`` (its domain's
    first catalogued release when empty) up to, not including, ``until``; ``gate`` is
    the driver feature gate it needs; ``deprecated`` the release that deprecated it,
    with ``replacement`` the name to use instead (still published until ``until``)."""

    since: str = ""
    until: str = ""
    gate: str = ""
    deprecated: str = ""
    replacement: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class AttributeInfo:
    """One attribute a driver publishes."""

    domain: str
    name: str
    type: str  # string | int | bool | version
    values: tuple[str, ...] = ()  # known values, when the set is closed
    devices: tuple[str, ...] = ()  # device kinds that carry it (informational)
    description: str = ""
    lifetime: Lifetime | None = None  # the driver releases that publish it (None: every one)

    @property
    def qualified_name(self) -> str:
        return f"{self.domain}/{self.name}"


@dataclass(frozen=True, slots=True)
class CapacityInfo:
    """One capacity a driver publishes (always a Quantity)."""

    domain: str
    name: str
    devices: tuple[str, ...] = ()
    description: str = ""
    lifetime: Lifetime | None = None

    @property
    def qualified_name(self) -> str:
        return f"{self.domain}/{self.name}"


@dataclass(frozen=True, slots=True)
class DomainInfo:
    """Attributes and capacities under one domain."""

    domain: str
    vendor: str
    is_driver: bool  # the domain is also a driver name (device.driver)
    complete: bool  # names not listed are unknown (else: only misspellings are reported)
    source: str
    attributes: Mapping[str, AttributeInfo]
    capacity: Mapping[str, CapacityInfo]
    capacity_patterns: tuple[re.Pattern[str], ...] = ()
    # the releases catalogued, oldest first; a run assumes ``default_release`` unless the
    # configuration (``drivers: {domain: release}``) or the ResourceSlices say otherwise
    releases: tuple[Release, ...] = ()
    default_release: str = ""

    def has_capacity(self, name: str) -> bool:
        return name in self.capacity or any(p.fullmatch(name) for p in self.capacity_patterns)

    def release(self, name: str) -> Release | None:
        return next((r for r in self.releases if r.release == name), None)

    def lifetime(self, name: str) -> Lifetime | None:
        """The releases that publish attribute or capacity ``name`` (None: all of them)."""
        info = self.attributes.get(name) or self.capacity.get(name)
        return info.lifetime if info is not None else None

    def published_on(self, name: str, release: str) -> bool:
        """Whether ``release`` of the driver publishes ``name`` (a catalogued name)."""
        life = self.lifetime(name)
        if life is None or not self.releases:
            return True
        order = [r.release for r in self.releases]
        at = order.index(release) if release in order else len(order) - 1
        start = order.index(life.since) if life.since in order else 0
        end = order.index(life.until) if life.until in order else len(order)
        return start <= at < end


@dataclass(frozen=True, slots=True)
class StaleName:
    """A name that is wrong or no longer published, with its replacement."""

    name: str  # the exact name, or the pattern's text
    where: str  # attribute | capacity | opaque-apiVersion | field
    domains: tuple[str, ...]
    replacement: str | None
    explanation: str
    replacement_cel: str = ""
    pattern: re.Pattern[str] | None = None
    examples: tuple[str, ...] = ()  # names a pattern matches, for documentation and tests

    @property
    def sample_names(self) -> tuple[str, ...]:
        """Concrete names this entry covers (the name, or the pattern's examples)."""
        return self.examples if self.pattern is not None else (self.name,)

    def matches(self, name: str) -> bool:
        if self.pattern is not None:
            return self.pattern.fullmatch(name) is not None
        return name == self.name

    def cel_replacement(self, domain: str) -> str:
        """The CEL spelling of the replacement for ``domain`` ('' when there is none)."""
        return self.replacement_cel.replace("{domain}", domain)


@dataclass(frozen=True, slots=True)
class WrongDomain:
    domain: str
    replacement: str
    explanation: str


@dataclass(frozen=True, slots=True)
class DeviceClassInfo:
    name: str
    driver: str
    selector: str
    extended_resource_name: str = ""
    note: str = ""
    # the resource.k8s.io versions on which the driver's chart sets
    # extendedResourceName by default (empty: only when its values ask for it)
    bridges_by_default_on: tuple[str, ...] = ()
    # where the fact was read: the chart template or demo, at the driver commit
    source: str = ""
    # a shape the driver's demos show, not a class its chart installs: ``name`` and
    # ``extended_resource_name`` hold ``{placeholder}``s, filled from the extended
    # resource name (``nvidia.com/mig-{profile}`` -> ``mig-{profile}.gpu.nvidia.com``)
    opt_in: bool = False

    def shaped(self, resource: str) -> tuple[str, str] | None:
        """This opt-in shape for ``resource``: the class name and its selector, the
        placeholders filled (in the name a value's dots become dashes, as the demos
        write ``mig-1g-12gb.gpu.nvidia.com``); None when the shape does not take it."""
        if not self.opt_in or not self.extended_resource_name:
            return None
        pattern = re.escape(self.extended_resource_name)
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[A-Za-z0-9][-A-Za-z0-9_.]*)", pattern)
        match = re.fullmatch(pattern, resource)
        if match is None:
            return None
        name, selector = self.name, self.selector
        for key, value in match.groupdict().items():
            name = name.replace("{" + key + "}", value.lower().replace(".", "-"))
            selector = selector.replace("{" + key + "}", value)
        return name, selector


@dataclass(frozen=True, slots=True)
class ConfigField:
    """A field of a driver's opaque configuration that only some releases decode."""

    driver: str
    kinds: tuple[str, ...]  # the configuration kinds (parameters.kind) that have it
    path: str  # dotted, under parameters: sharing.mpsConfig.multiUser
    since: str
    note: str = ""

    def value_in(self, parameters: Mapping[str, Any]) -> bool:
        """Whether ``parameters`` (one opaque config's) sets this field."""
        if self.kinds and parameters.get("kind") not in self.kinds:
            return False
        node: Any = parameters
        for part in self.path.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return False
            node = node[part]
        return True


@dataclass(frozen=True, slots=True)
class Catalog:
    domains: Mapping[str, DomainInfo]
    stale: tuple[StaleName, ...]
    wrong_domains: Mapping[str, WrongDomain]
    other_drivers: Mapping[str, str]
    device_classes: tuple[DeviceClassInfo, ...] = ()
    config_fields: tuple[ConfigField, ...] = ()

    # -- drivers and domains -------------------------------------------------
    def known_drivers(self) -> frozenset[str]:
        """Driver names (``device.driver`` values) that exist."""
        drivers = {d.domain for d in self.domains.values() if d.is_driver}
        return frozenset(drivers | set(self.other_drivers))

    def is_known_domain(self, domain: str) -> bool:
        return domain in self.domains or domain in self.other_drivers

    def wrong_domain(self, domain: str) -> WrongDomain | None:
        return self.wrong_domains.get(domain)

    def similar_domains(self, domain: str) -> list[str]:
        """Known domains that ``domain`` is probably a misspelling or shortening of."""
        known = sorted(set(self.domains) | set(self.other_drivers))
        lowered = domain.lower()
        out = [k for k in known if k == lowered and k != domain]
        out += [k for k in known if k.endswith("." + lowered) or lowered.endswith("." + k)]
        for k in difflib.get_close_matches(lowered, known, n=3, cutoff=0.8):
            if k not in out:
                out.append(k)
        return out

    def driver_bridge(self, resource: str, target: str) -> DeviceClassInfo | None:
        """The DeviceClass a known driver installs that maps the extended resource
        ``resource`` by default when its chart renders resource.k8s.io ``target``
        (the bridge strategy needs no class of its own then); None when none does."""
        for info in self.device_classes:
            if info.opt_in:
                continue
            if info.extended_resource_name == resource and target in info.bridges_by_default_on:
                return info
        return None

    def bridge_shape(self, resource: str) -> tuple[DeviceClassInfo, str, str] | None:
        """The opt-in class shape a driver's demos give ``resource`` (the shape, the class
        name, its selector), or None: ``nvidia.com/mig-1g.12gb`` ->
        ``mig-1g-12gb.gpu.nvidia.com`` with the MIG profile's selector."""
        for info in self.device_classes:
            shaped = info.shaped(resource)
            if shaped is not None:
                return info, *shaped
        return None

    def opt_in_bridges(self, resource: str) -> list[DeviceClassInfo]:
        """Installed classes that map ``resource`` only when the chart's values ask."""
        return [
            c
            for c in self.device_classes
            if not c.opt_in and c.extended_resource_name == resource and not c.bridges_by_default_on
        ]

    # -- driver releases --------------------------------------------------------
    def assumed_releases(
        self, configured: Mapping[str, str], published: Iterable[str] = ()
    ) -> dict[str, tuple[str, str]]:
        """Driver domain -> (release, why) for every domain with catalogued releases:
        the configuration's ``drivers: {domain: release}`` first, then what the
        ResourceSlices publish (the newest release whose own names they show, or
        the oldest that still has a name they show and later releases dropped),
        else the domain's default (its newest tagged release)."""
        shown = frozenset(published)
        out: dict[str, tuple[str, str]] = {}
        for domain, info in self.domains.items():
            if not info.releases:
                continue
            if domain in configured:
                out[domain] = (configured[domain], "drivers: in the configuration")
                continue
            from_slices = _release_from_names(info, shown)
            if from_slices:
                out[domain] = (from_slices, "read from the ResourceSlices")
                continue
            tag = info.release(info.default_release)
            why = f"the newest tagged release, {tag.tag}" if tag and tag.tag else "the default"
            out[domain] = (info.default_release, why)
        return out

    def release_problem(self, domain: str, name: str, release: str) -> str:
        """Why ``release`` of ``domain``'s driver does not publish the catalogued ``name``
        ("" when it does): the release that added or removed it, and its gate."""
        info = self.domains.get(domain)
        if info is None or info.published_on(name, release):
            return ""
        life = info.lifetime(name)
        assert life is not None  # published_on holds for names without one
        order = [r.release for r in info.releases]
        if life.since and order.index(life.since) > order.index(release):
            text = f"{domain} publishes {name!r} from driver release {life.since}"
            if life.gate:
                text += f" (driver feature gate {life.gate})"
        else:
            text = f"{domain} stopped publishing {name!r} in driver release {life.until}"
            if life.replacement:
                text += f" (use {life.replacement})"
        return text + (f"; {life.note}" if life.note else "")

    # -- names ----------------------------------------------------------------
    def attribute(self, domain: str, name: str) -> AttributeInfo | None:
        info = self.domains.get(domain)
        return info.attributes.get(name) if info else None

    def capacity(self, domain: str, name: str) -> CapacityInfo | None:
        info = self.domains.get(domain)
        return info.capacity.get(name) if info else None

    def find_stale(self, domain: str, name: str, where: str = "attribute") -> StaleName | None:
        """The stale-name entry for ``name`` in ``domain`` (``where`` as in the data)."""
        for entry in self.stale:
            if entry.where != where:
                continue
            if entry.domains and domain not in entry.domains:
                continue
            if entry.matches(name):
                return entry
        return None

    def stale_opaque_api_version(self, api_version: str) -> StaleName | None:
        """The entry for an opaque-config ``parameters.apiVersion`` that is stale."""
        for entry in self.stale:
            if entry.where == "opaque-apiVersion" and entry.matches(api_version):
                return entry
        return None


def _release_from_names(info: DomainInfo, shown: frozenset[str]) -> str:
    """The release of ``info``'s driver that the published names ``shown`` point to
    ("" when they show none of its release-bound names)."""
    order = [r.release for r in info.releases]
    names = {n: info.lifetime(n) for n in (*info.attributes, *info.capacity)}
    seen = [(n, life) for n, life in names.items() if life and f"{info.domain}/{n}" in shown]
    added = [order.index(life.since) for _n, life in seen if life.since in order]
    if added:
        return order[max(added)]
    dropped = [order.index(life.until) - 1 for _n, life in seen if life.until in order]
    return order[max(0, min(dropped))] if dropped else ""


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    """``'gpu.nvidia.com/productName'`` → ``('gpu.nvidia.com', 'productName')``.

    An unqualified name belongs to ``default_domain`` (the driver), as in Kubernetes.
    """
    domain, sep, ident = name.partition("/")
    if not sep:
        return default_domain, name
    return domain, ident


# --------------------------------------------------------------------------
# loading


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise CatalogError(f"{where}: expected a string, got {value!r}")
    return value


def _str_tuple(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise CatalogError(f"{where}: expected a list, got {value!r}")
    return tuple(_str(v, where) for v in value)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise CatalogError(f"{where}: expected a mapping, got {value!r}")
    return value


_LIFETIME_KEYS = ("since", "until", "gate", "deprecated", "replacement", "note")


def _lifetime(spec: Mapping[str, Any], releases: list[str], where: str) -> Lifetime | None:
    """The ``since``/``until``/``gate``/``deprecated``/``replacement``/``note`` of a name."""
    if not any(k in spec for k in _LIFETIME_KEYS):
        return None
    values = {k: str(spec.get(k) or "") for k in _LIFETIME_KEYS}
    for key in ("since", "until", "deprecated"):
        if values[key] and values[key] not in releases:
            raise CatalogError(
                f"{where}.{key}: {values[key]!r} is not one of the releases {releases}"
            )
    since, until = values["since"], values["until"]
    if since and until and releases.index(since) >= releases.index(until):
        raise CatalogError(f"{where}: since must come before until")
    return Lifetime(**values)


def _parse_releases(body: Mapping[str, Any], where: str) -> tuple[tuple[Release, ...], str]:
    releases = []
    for i, spec in enumerate(body.get("releases") or []):
        spec_map = _mapping(spec, f"{where}.releases[{i}]")
        releases.append(
            Release(
                release=_str(spec_map.get("release"), f"{where}.releases[{i}].release"),
                tag=str(spec_map.get("tag") or ""),
                commit=_str(spec_map.get("commit"), f"{where}.releases[{i}].commit"),
            )
        )
    default = str(body.get("default_release") or "")
    names = [r.release for r in releases]
    if releases and default not in names:
        raise CatalogError(f"{where}.default_release: {default!r} is not one of {names}")
    if default and not releases:
        raise CatalogError(f"{where}: default_release without releases")
    return tuple(releases), default


def _parse_domain(domain: str, raw: Any, where: str) -> DomainInfo:
    body = _mapping(raw, where)
    if not is_dns_subdomain(domain):
        raise CatalogError(f"{where}: {domain!r} is not a DNS subdomain")
    releases, default_release = _parse_releases(body, where)
    order = [r.release for r in releases]
    attributes: dict[str, AttributeInfo] = {}
    for name, spec in _mapping(body.get("attributes"), f"{where}.attributes").items():
        spec_map = _mapping(spec, f"{where}.attributes.{name}")
        typ = _str(spec_map.get("type"), f"{where}.attributes.{name}.type")
        if typ not in ATTRIBUTE_TYPES:
            raise CatalogError(
                f"{where}.attributes.{name}.type: {typ!r} is not one of {sorted(ATTRIBUTE_TYPES)}"
            )
        attributes[str(name)] = AttributeInfo(
            domain=domain,
            name=str(name),
            type=typ,
            values=_str_tuple(spec_map.get("values"), f"{where}.attributes.{name}.values"),
            devices=_str_tuple(spec_map.get("devices"), f"{where}.attributes.{name}.devices"),
            description=str(spec_map.get("description", "")),
            lifetime=_lifetime(spec_map, order, f"{where}.attributes.{name}"),
        )
    capacity: dict[str, CapacityInfo] = {}
    for name, spec in _mapping(body.get("capacity"), f"{where}.capacity").items():
        spec_map = _mapping(spec, f"{where}.capacity.{name}")
        if str(name) in attributes:
            raise CatalogError(f"{where}: {name!r} is both an attribute and a capacity")
        capacity[str(name)] = CapacityInfo(
            domain=domain,
            name=str(name),
            devices=_str_tuple(spec_map.get("devices"), f"{where}.capacity.{name}.devices"),
            description=str(spec_map.get("description", "")),
            lifetime=_lifetime(spec_map, order, f"{where}.capacity.{name}"),
        )
    patterns: list[re.Pattern[str]] = []
    for i, spec in enumerate(body.get("capacity_patterns") or []):
        spec_map = _mapping(spec, f"{where}.capacity_patterns[{i}]")
        patterns.append(
            re.compile(_str(spec_map.get("pattern"), f"{where}.capacity_patterns[{i}].pattern"))
        )
    return DomainInfo(
        domain=domain,
        vendor=str(body.get("vendor", "")),
        is_driver=bool(body.get("driver", False)),
        complete=bool(body.get("complete", False)),
        source=str(body.get("source", "")),
        attributes=attributes,
        capacity=capacity,
        capacity_patterns=tuple(patterns),
        releases=releases,
        default_release=default_release,
    )


def _parse_stale(raw: Any, where: str) -> StaleName:
    body = _mapping(raw, where)
    name = body.get("name")
    pattern_text = body.get("pattern")
    if (name is None) == (pattern_text is None):
        raise CatalogError(f"{where}: give exactly one of 'name' and 'pattern'")
    kind = _str(body.get("where"), f"{where}.where")
    if kind not in STALE_WHERE:
        raise CatalogError(f"{where}.where: {kind!r} is not one of {sorted(STALE_WHERE)}")
    if pattern_text is not None and not body.get("examples"):
        raise CatalogError(f"{where}: a pattern needs 'examples'")
    replacement = body.get("replacement")
    if replacement is not None:
        replacement = _str(replacement, f"{where}.replacement")
    return StaleName(
        name=_str(name if name is not None else pattern_text, f"{where}.name"),
        where=kind,
        domains=_str_tuple(body.get("domains"), f"{where}.domains"),
        replacement=replacement,
        explanation=_str(body.get("explanation"), f"{where}.explanation"),
        replacement_cel=str(body.get("replacement_cel") or ""),
        pattern=re.compile(_str(pattern_text, f"{where}.pattern"))
        if pattern_text is not None
        else None,
        examples=_str_tuple(body.get("examples"), f"{where}.examples"),
    )


def _load_yaml(path: str) -> Any:
    import yaml  # lazy: keep ``import dra_migrate.k8s.catalog`` cheap

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle.read(), Loader=loader)


def parse_catalog(documents: Iterable[tuple[str, Any]]) -> Catalog:
    """Build a catalog from ``(source name, parsed YAML)`` pairs (merged in order)."""
    domains: dict[str, DomainInfo] = {}
    stale: list[StaleName] = []
    wrong: dict[str, WrongDomain] = {}
    other: dict[str, str] = {}
    classes: list[DeviceClassInfo] = []
    fields: list[ConfigField] = []
    for source, data in documents:
        body = _mapping(data, source)
        unknown = set(body) - {
            "domains",
            "stale",
            "wrong_domains",
            "other_drivers",
            "device_classes",
            "config_fields",
        }
        if unknown:
            raise CatalogError(f"{source}: unknown top-level keys {sorted(unknown)}")
        for domain, spec in _mapping(body.get("domains"), f"{source}: domains").items():
            if domain in domains:
                raise CatalogError(f"{source}: domain {domain!r} defined twice")
            domains[str(domain)] = _parse_domain(str(domain), spec, f"{source}: domains.{domain}")
        for i, entry in enumerate(body.get("stale") or []):
            stale.append(_parse_stale(entry, f"{source}: stale[{i}]"))
        for domain, spec in _mapping(body.get("wrong_domains"), f"{source}: wrong_domains").items():
            spec_map = _mapping(spec, f"{source}: wrong_domains.{domain}")
            wrong[str(domain)] = WrongDomain(
                domain=str(domain),
                replacement=_str(
                    spec_map.get("replacement"), f"{source}: wrong_domains.{domain}.replacement"
                ),
                explanation=_str(
                    spec_map.get("explanation"), f"{source}: wrong_domains.{domain}.explanation"
                ),
            )
        for name, description in _mapping(
            body.get("other_drivers"), f"{source}: other_drivers"
        ).items():
            other[str(name)] = str(description)
        for i, spec in enumerate(body.get("device_classes") or []):
            spec_map = _mapping(spec, f"{source}: device_classes[{i}]")
            classes.append(
                DeviceClassInfo(
                    name=_str(spec_map.get("name"), f"{source}: device_classes[{i}].name"),
                    driver=_str(spec_map.get("driver"), f"{source}: device_classes[{i}].driver"),
                    selector=_str(
                        spec_map.get("selector"), f"{source}: device_classes[{i}].selector"
                    ),
                    extended_resource_name=str(spec_map.get("extended_resource_name") or ""),
                    note=str(spec_map.get("note") or ""),
                    bridges_by_default_on=_str_tuple(
                        spec_map.get("bridges_by_default_on") or [],
                        f"{source}: device_classes[{i}].bridges_by_default_on",
                    ),
                    source=str(spec_map.get("source") or ""),
                    opt_in=bool(spec_map.get("opt_in", False)),
                )
            )
            if classes[-1].opt_in and "{" not in classes[-1].extended_resource_name:
                raise CatalogError(
                    f"{source}: device_classes[{i}]: an opt_in shape names its extended "
                    "resource with a {placeholder}"
                )
        for i, spec in enumerate(body.get("config_fields") or []):
            at = f"{source}: config_fields[{i}]"
            spec_map = _mapping(spec, at)
            fields.append(
                ConfigField(
                    driver=_str(spec_map.get("driver"), f"{at}.driver"),
                    kinds=_str_tuple(spec_map.get("kinds"), f"{at}.kinds"),
                    path=_str(spec_map.get("path"), f"{at}.path"),
                    since=_str(spec_map.get("since"), f"{at}.since"),
                    note=str(spec_map.get("note") or ""),
                )
            )
    for entry in fields:
        owner = domains.get(entry.driver)
        if owner is None or owner.release(entry.since) is None:
            raise CatalogError(
                f"config field {entry.path!r}: {entry.since!r} is not a release of {entry.driver}"
            )
    for entry in stale:
        for example in entry.examples:
            if not entry.matches(example):
                raise CatalogError(
                    f"stale entry {entry.name!r}: example {example!r} does not match"
                )
        for domain in entry.domains:
            if domain not in domains:
                raise CatalogError(f"stale entry {entry.name!r}: unknown domain {domain!r}")
            info = domains[domain]
            listed = info.attributes if entry.where == "attribute" else info.capacity
            if entry.where in ("attribute", "capacity") and any(entry.matches(n) for n in listed):
                raise CatalogError(
                    f"stale entry {entry.name!r} matches a published {entry.where} of {domain}"
                )
    return Catalog(
        domains=domains,
        stale=tuple(stale),
        wrong_domains=wrong,
        other_drivers=other,
        device_classes=tuple(classes),
        config_fields=tuple(fields),
    )


@functools.lru_cache(maxsize=1)
def load_catalog(directory: str | PathLike[str] | None = None) -> Catalog:
    """Load and merge every ``*.yaml`` file of the catalog folder (cached)."""
    folder = os.fspath(directory or CATALOG_DIR)
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    files = sorted(os.path.join(folder, n) for n in names if n.endswith(".yaml"))
    if not files:
        raise CatalogError(f"no catalog files in {folder}")
    return parse_catalog(catalog_documents(files))


# the catalog's YAML files as JSON, in the package (scripts/build_data.py): reading them
# with the YAML library costs about 5 ms, the JSON 0.3 ms. It holds the digest of each
# file it was made from: a catalog folder that differs (an edit, another folder) is
# read as YAML.
CATALOG_JSON = package_file("built", "catalog.json")


def catalog_documents(files: list[str]) -> list[tuple[str, Any]]:
    """``(file name, data)`` of each catalog file: from ``CATALOG_JSON`` when it was
    made from these very files, else read from their YAML."""
    import json

    from dra_migrate import cache

    try:
        sources = []
        for path in files:
            with open(path, "rb") as handle:
                sources.append([os.path.basename(path), cache.digest(handle.read())])
        with open(CATALOG_JSON, encoding="utf-8") as handle:
            built = json.load(handle)
        if built["sources"] == sources:
            return [(name, data) for name, data in built["documents"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # a catalog edited since, or another one: its YAML is read
    return [(os.path.basename(path), _load_yaml(path)) for path in files]
