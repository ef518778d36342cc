"""Cluster mode's table and contract: every kind it reads and how (``RESOURCES``: the
read-only ClusterRole of docs/cluster.md grants exactly these), the ``Reader``
protocol both readers follow, ``ClusterError`` and its exit statuses, and the API's
JSON read without recursion limits."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote

from dra_migrate.report.findings import finding
from dra_migrate.report.model import EXIT_UNPROCESSED, EXIT_USAGE

DRA_GROUP = "resource.k8s.io"
# Versions read, best first.
DRA_VERSIONS = ("v1", "v1beta2", "v1beta1")


DISCOVERY_URL = "/apis/resource.k8s.io"


@dataclass(frozen=True, slots=True)
class Resource:
    """One kind the cluster mode reads, and how: a row of the table, not a branch."""

    group: str  # "" is the core group
    plural: str
    kind: str
    namespaced: bool
    verb: str  # list or get: the only verbs used
    version: str  # "dra": the resource.k8s.io version the server serves

    def path(self, version: str, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path of the collection (in ``namespace``), or of the object ``name``."""
        base = f"/apis/{self.group}/{version}" if self.group else f"/api/{version}"
        scope = f"/namespaces/{quote(namespace, safe='')}" if namespace is not None else ""
        item = f"/{quote(name, safe='')}" if name is not None else ""
        return f"{base}{scope}/{self.plural}{item}"


RESOURCES: dict[str, Resource] = {
    r.plural: r
    for r in (
        Resource("", "pods", "Pod", True, "list", "v1"),
        Resource("", "nodes", "Node", False, "list", "v1"),
        Resource("apps", "replicasets", "ReplicaSet", True, "get", "v1"),
        Resource("apps", "deployments", "Deployment", True, "get", "v1"),
        Resource("apps", "statefulsets", "StatefulSet", True, "get", "v1"),
        Resource("batch", "jobs", "Job", True, "get", "v1"),
        Resource(DRA_GROUP, "deviceclasses", "DeviceClass", False, "list", "dra"),
        Resource(DRA_GROUP, "resourceslices", "ResourceSlice", False, "list", "dra"),
        Resource(DRA_GROUP, "resourceclaims", "ResourceClaim", True, "list", "dra"),
    )
}
KIND_TO_RESOURCE = {(r.group, r.kind): r.plural for r in RESOURCES.values()}
DRA_RESOURCES = tuple(p for p, r in RESOURCES.items() if r.group == DRA_GROUP)

# Owners followed up the owner references: (group, kind) -> resource. The chain
# stops at any other owner (CronJob, DaemonSet, RayCluster, JobSet, ...), which
# is then the workload, named by the reference itself.
OWNER_HOPS = {(r.group, r.kind): r.plural for r in RESOURCES.values() if r.verb == "get"}


# Fatal cluster findings -> exit status: configuration (2) or could not read (123).
EXIT_CODES = {
    "DRA601": EXIT_USAGE,
    "DRA602": EXIT_UNPROCESSED,
    "DRA603": EXIT_USAGE,
    "DRA604": EXIT_USAGE,
    "DRA605": EXIT_UNPROCESSED,
    "DRA611": EXIT_UNPROCESSED,
    "DRA612": EXIT_UNPROCESSED,
}


class ClusterError(Exception):
    """The cluster cannot be read: one line, and the exit status of its code."""

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.finding = finding(code, "", 0, 0, message, hint)
        self.exit_code = EXIT_CODES[code]


class Reader(Protocol):
    """Objects as the API's JSON, whichever way they were read."""

    source: str
    dra_version: str | None
    dra_note: str  # why there is no DRA version, when there is none

    def list(self, resource: str, namespace: str | None) -> Iterator[dict[str, Any]]: ...

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None: ...


class TooDeep(ValueError):
    """JSON nested more deeply than ``compose.MAX_DEPTH``: no API object does."""


def _json_int(digits: str) -> int | float:
    """A JSON integer as Kubernetes' unstructured decoding gives it: an int64 when it
    fits, else a float (infinite when huge); a long one is never converted to int."""
    return int(digits) if len(digits) <= 20 else float(digits)


def parse_json(raw: bytes | str) -> Any:
    """JSON of any size and any nesting, without RecursionError: ValueError when it is
    not JSON, ``TooDeep`` when it nests more than ``compose.MAX_DEPTH`` levels."""
    from dra_migrate.manifests import compose

    try:
        data = json.loads(raw, parse_int=_json_int)
    except RecursionError:
        raise TooDeep from None
    if compose.data_depth(data) > compose.MAX_DEPTH:
        raise TooDeep
    return data


def metadata_field(obj: Mapping[str, Any], key: str) -> Any:
    meta = obj.get("metadata")
    return meta.get(key) if isinstance(meta, dict) else None


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def permissions() -> list[tuple[str, str, str]]:
    """(API group, resource, verb) of every request the readers make, discovery aside."""
    return sorted((r.group, r.plural, r.verb) for r in RESOURCES.values())
