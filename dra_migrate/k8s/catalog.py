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
class AttributeInfo:
    """One attribute a driver publishes."""

    domain: str
    name: str
    type: str  # string | int | bool | version
    values: tuple[str, ...] = ()  # known values, when the set is closed
    devices: tuple[str, ...] = ()  # device kinds that carry it (informational)
    description: str = ""

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

    def has_capacity(self, name: str) -> bool:
        return name in self.capacity or any(p.fullmatch(name) for p in self.capacity_patterns)


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


@dataclass(frozen=True, slots=True)
class Catalog:
    domains: Mapping[str, DomainInfo]
    stale: tuple[StaleName, ...]
    wrong_domains: Mapping[str, WrongDomain]
    other_drivers: Mapping[str, str]
    device_classes: tuple[DeviceClassInfo, ...] = ()

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
            if info.extended_resource_name == resource and target in info.bridges_by_default_on:
                return info
        return None

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


def _parse_domain(domain: str, raw: Any, where: str) -> DomainInfo:
    body = _mapping(raw, where)
    if not is_dns_subdomain(domain):
        raise CatalogError(f"{where}: {domain!r} is not a DNS subdomain")
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
    for source, data in documents:
        body = _mapping(data, source)
        unknown = set(body) - {
            "domains",
            "stale",
            "wrong_domains",
            "other_drivers",
            "device_classes",
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
                )
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
