"""The fields every row of the report model shares, with their JSON keys: where a pod
spec is (``LOCATION``) and what a container asks for (``REQUEST``)."""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any


@dataclass(slots=True)
class Location:
    """The pod spec a row is about: the first fields of every row of the model that
    is about one (an inventory row, a workload of the plan), in ``LOCATION``'s order."""

    path: str
    line: int
    col: int
    api_version: str
    kind: str
    namespace: str | None
    name: str
    pod_path: str


# The pod spec a row is about, as every report model names it: (field, JSON key).
LOCATION = (
    ("path", "path"),
    ("line", "line"),
    ("col", "col"),
    ("api_version", "apiVersion"),
    ("kind", "kind"),
    ("namespace", "namespace"),
    ("name", "name"),
    ("pod_path", "podPath"),
)


def location(obj: Any) -> dict[str, Any]:
    """The location fields of an inventory row or a workload, as keyword arguments."""
    return {name: getattr(obj, name) for name, _key in LOCATION}


# A container's GPU request, as every report model names it: (field, JSON key).
REQUEST = (
    ("container", "container"),
    ("role", "role"),
    ("resource", "resource"),
    ("count", "count"),
    ("value", "value"),
    ("device_class", "deviceClass"),
)


def as_json(obj: Any, table: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """The fields of ``table`` of a report row, with the keys of the JSON formats."""
    return {key: getattr(obj, name) for name, key in table}


def location_dict(obj: Any) -> dict[str, Any]:
    """The location fields with the keys of the JSON formats."""
    return as_json(obj, LOCATION)
