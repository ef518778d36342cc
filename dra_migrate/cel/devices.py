"""The device a selector sees: :class:`Device`, and the devices of ResourceSlice
objects (v1beta1 ``basic`` devices, v1beta2/v1 flat ones, ``kind: List``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.cel.values import (
    InvalidVersion,
    SemVer,
)


@dataclass(frozen=True, slots=True)
class Device:
    """One device of a ResourceSlice, as the CEL environment sees it.

    ``attributes`` maps domain → name → value, where a value is ``str``, ``int``,
    ``bool`` or :class:`SemVer` (a ``version`` attribute). ``capacity`` maps
    domain → name → Quantity string (``"40Gi"``).
    """

    driver: str
    name: str
    node: str | None
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict)
    capacity: dict[str, dict[str, str]] = field(default_factory=dict)


# --------------------------------------------------------------------------
# ResourceSlices → devices


def _attribute_value(raw: Any) -> Any:
    if not isinstance(raw, Mapping):
        return None
    if "bool" in raw:
        return bool(raw["bool"])
    if "int" in raw:
        number = raw["int"]
        if isinstance(number, str) and len(number) > 20:
            return None  # longer than any int64: not converted
        try:
            return int(number)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite float
            return None
    if "string" in raw:
        return "" if raw["string"] is None else str(raw["string"])
    if "version" in raw:
        text = str(raw["version"])
        try:
            return SemVer.parse(text)
        except ValueError as exc:
            return InvalidVersion(text, str(exc))
    for list_key in ("strings", "ints", "bools", "versions"):  # 1.36 alpha list attributes
        if list_key in raw and isinstance(raw[list_key], list):
            return list(raw[list_key])
    return None


def _capacity_value(raw: Any) -> str | None:
    if isinstance(raw, Mapping):
        raw = raw.get("value")
    if raw is None or isinstance(raw, bool):
        return None
    return str(raw)


def _by_domain(raw: Any, driver: str, convert: Callable[[Any], Any]) -> dict[str, dict[str, Any]]:
    """A ResourceSlice device's ``attributes`` or ``capacity`` as domain → name → value:
    unqualified names belong to ``driver``; a value ``convert`` makes None of is left out."""
    from dra_migrate.k8s.catalog import split_qualified_name

    found: dict[str, dict[str, Any]] = {}
    if isinstance(raw, Mapping):
        for qualified, value in raw.items():
            domain, name = split_qualified_name(str(qualified), driver)
            converted = convert(value)
            if converted is not None:
                found.setdefault(domain, {})[name] = converted
    return found


def _iter_slices(docs: Iterable[Any]) -> Iterator[Mapping[str, Any]]:
    for doc in docs:
        if isinstance(doc, list):
            yield from _iter_slices(doc)
            continue
        if not isinstance(doc, Mapping):
            continue
        kind = doc.get("kind")
        if kind == "ResourceSlice":
            yield doc
        elif isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            yield from _iter_slices(doc["items"])


def devices_from_resource_slices(
    docs: Iterable[Mapping[str, Any]], *, default_driver: str = ""
) -> list[Device]:
    """Devices of every ResourceSlice in ``docs``.

    ``docs`` may hold ResourceSlice objects and ``List`` / ``ResourceSliceList``
    objects (``kubectl get resourceslices -o yaml``). Devices may be flat
    (v1beta2, v1) or wrapped in ``basic`` (v1alpha3, v1beta1). Unqualified names
    belong to the slice's driver (``default_driver`` when the slice has none);
    ``node`` is ``spec.nodeName`` (or the device's own ``nodeName`` with
    per-device node selection), ``None`` for ``allNodes`` / ``nodeSelector``.
    Entries that are not device mappings are skipped.
    """
    devices: list[Device] = []
    for obj in _iter_slices(docs):
        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            continue
        raw_driver = spec.get("driver")
        driver: str = raw_driver if isinstance(raw_driver, str) else default_driver
        raw_node = spec.get("nodeName")
        slice_node = raw_node if isinstance(raw_node, str) else None
        raw_devices = spec.get("devices")
        if not isinstance(raw_devices, list):
            continue
        for raw in raw_devices:
            if not isinstance(raw, Mapping):
                continue
            basic = raw.get("basic")
            body: Mapping[str, Any] = basic if isinstance(basic, Mapping) else raw
            attributes = _by_domain(body.get("attributes"), driver, _attribute_value)
            capacity = _by_domain(body.get("capacity"), driver, _capacity_value)
            own_node = raw.get("nodeName")
            node = own_node if isinstance(own_node, str) else slice_node
            devices.append(
                Device(
                    driver=driver,
                    name=str(raw.get("name") or ""),
                    node=node,
                    attributes=attributes,
                    capacity=capacity,
                )
            )
    return devices
