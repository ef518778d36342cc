"""Cluster mode: read what runs today, from the API server or from ``kubectl get`` dumps.

Two readers give the same objects, as the API's JSON (camelCase dicts):
``LiveReader`` asks the API server through the official ``kubernetes`` client
(credentials from the kubeconfig or the in-cluster service account, as the
client finds them; lists paged with ``limit``/``continue``; only ``get`` and
``list``, never a write), and ``DumpReader`` reads ``kubectl get ... -o yaml``
(or ``-o json``) files. ``build_inventory`` turns either into the
``ClusterInventory`` of ``report/inventory.py``; ``slice_devices`` gives
``validate --cluster`` the live devices to evaluate classes and claims on.

Every call goes through the ``RESOURCES`` table; the read-only ClusterRole in
docs/cluster.md grants exactly what it lists (a test checks both).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote, urlencode

from dra_migrate.convert.mapping import Config, Context
from dra_migrate.k8s.quantity import parse_quantity, whole_count
from dra_migrate.repo import discover
from dra_migrate.repo.discover import DEFAULT_MAX_FILE_SIZE
from dra_migrate.report.findings import Finding, InputProblem, finding
from dra_migrate.report.inventory import (
    ClusterInventory,
    DeviceClassInfo,
    DeviceGroup,
    GpuRequest,
    NodeGpus,
    PendingClaim,
    Workload,
    age_text,
)
from dra_migrate.report.model import EXIT_UNPROCESSED, EXIT_USAGE, FileResult, Report, Status

if TYPE_CHECKING:
    from dra_migrate.cel import Device

DRA_GROUP = "resource.k8s.io"
# Versions read, best first.
DRA_VERSIONS = ("v1", "v1beta2", "v1beta1")
DEFAULT_PAGE_SIZE = 500
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RESPONSE = 64 * 2**20  # bytes of one answer (one page of a list)
DEFAULT_MAX_PAGES = 10_000  # pages of one list: 5 million objects at the default page size
DEFAULT_PENDING_AFTER = 300
DISCOVERY_URL = "/apis/resource.k8s.io"
_CHUNK = 1 << 16  # bytes read at a time from an answer


@dataclass(frozen=True)
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

# The attribute that names a device's product, per driver convention, first found wins.
PRODUCT_ATTRIBUTES = ("productName", "model", "marketingName", "family", "type")
# Node labels that name the GPU product (GPU feature discovery and its peers).
PRODUCT_LABELS = ("nvidia.com/gpu.product", "amd.com/gpu.product-name", "gpu.intel.com/product")
# Pod phases whose pods hold their devices.
HOLDING = ("Pending", "Running")

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
_DRIVER_SELECTOR = re.compile(r"""device\.driver\s*==\s*(["'])([^"']+)\1""")
_DURATION = re.compile(r"(\d+)(s|m|h|d)")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class ClusterError(Exception):
    """The cluster cannot be read: one line, and the exit status of its code."""

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.finding = finding(code, "", 0, 0, message, hint)
        self.exit_code = EXIT_CODES[code]


def parse_duration(text: str) -> int:
    """``90s``, ``5m``, ``1h30m``, ``2d`` (or plain seconds) as seconds."""
    text = text.strip()
    if len(text) > 40:
        raise ValueError(f"{text[:40]!r}... is too long for a duration")
    if text.isdigit():
        return int(text)
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"{text!r} is not a duration such as 90s, 5m, 1h30m or 2d")
    return sum(int(n) * _UNITS[u] for n, u in parts)


# --- readers -------------------------------------------------------------------------


class Reader(Protocol):
    """Objects as the API's JSON, whichever way they were read."""

    source: str
    dra_version: str | None
    dra_note: str  # why there is no DRA version, when there is none

    def list(self, resource: str, namespace: str | None) -> Iterator[dict[str, Any]]: ...

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None: ...


@dataclass(frozen=True)
class Connection:
    kubeconfig: str | None = None
    context: str | None = None
    timeout: float = DEFAULT_TIMEOUT  # seconds: a deadline for each whole request
    page_size: int = DEFAULT_PAGE_SIZE
    max_response: int = DEFAULT_MAX_RESPONSE  # bytes of one answer
    max_pages: int = DEFAULT_MAX_PAGES  # pages of one list


class LiveReader:
    """Reads the API server with the official client's connection and credentials:
    only GET requests, each with a deadline and a size limit (``_request``)."""

    def __init__(self, connection: Connection) -> None:
        from kubernetes.client import rest

        self.connection = connection
        configuration, self.source, self.default_namespace = _configure(connection)
        self.configuration = configuration
        # the client's connection pool: its TLS (CA, client certificate), proxy, retries
        self.pool = rest.RESTClientObject(configuration).pool_manager
        self.host = _safe_url(configuration.host)
        self.dra_version, self.dra_note = self._discover()

    def close(self) -> None:
        self.pool.clear()

    def _discover(self) -> tuple[str | None, str]:
        """The best resource.k8s.io version the server serves (discovery, GET only)."""
        group = self._call("get", DISCOVERY_URL, DISCOVERY_URL, {}, missing_ok=True)
        if group is None:
            return None, "the cluster serves no resource.k8s.io API (DRA is off or older than 1.32)"
        served = [v.get("version") for v in _list(group.get("versions")) if isinstance(v, dict)]
        for version in DRA_VERSIONS:
            if version in served:
                return version, ""
        listed = ", ".join(f"{DRA_GROUP}/{v}" for v in served if v) or "no version"
        return None, f"the cluster serves {listed}; dra-migrate reads v1, v1beta2 and v1beta1"

    def _version(self, spec: Resource) -> str:
        return (self.dra_version or "v1") if spec.version == "dra" else spec.version

    def list(self, resource: str, namespace: str | None) -> Iterator[dict[str, Any]]:
        """Every object of a list, page by page (``limit``/``continue``): at most
        ``max_pages`` pages, and a continue token given twice is a list without end."""
        spec = RESOURCES[resource]
        scoped = spec.namespaced and namespace is not None
        what = _scope(spec, namespace if scoped else None)
        path = spec.path(self._version(spec), namespace if scoped else None)
        seen: set[str] = set()
        token: str | None = None
        for _page in range(self.connection.max_pages):
            query = {"limit": str(self.connection.page_size)}
            if token:
                query["continue"] = token
            page = self._call(
                "list", what, path, query, spec=spec, namespace=namespace if scoped else None
            )
            assert page is not None
            items = page.get("items")
            if not isinstance(items, list):
                raise ClusterError("DRA605", f"list {what}: the answer has no items list")
            list_version = str(page.get("apiVersion") or "")
            for item in items:
                if isinstance(item, dict):
                    # as kubectl does: a list's items carry no kind and apiVersion
                    item.setdefault("apiVersion", list_version)
                    item.setdefault("kind", spec.kind)
                    yield item
            meta = page.get("metadata")
            token = meta.get("continue") if isinstance(meta, dict) else None
            if not token:
                return
            if not isinstance(token, str):
                raise ClusterError("DRA605", f"list {what}: the continue token is not a string")
            if token in seen:
                raise ClusterError(
                    "DRA612",
                    f"list {what}: the API server gave the continue token of an earlier page "
                    "again; the list would never end",
                    "the server or a proxy in front of it misbehaves: read the cluster directly",
                )
            seen.add(token)
        raise ClusterError(
            "DRA612",
            f"list {what}: more than {self.connection.max_pages} pages "
            f"of {self.connection.page_size} (--max-pages), and the server has more",
            "a larger --page-size needs fewer pages; --max-pages raises the bound",
        )

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        spec = RESOURCES[resource]
        what = f"{spec.plural}{'.' + spec.group if spec.group else ''} {namespace}/{name}"
        path = spec.path(self._version(spec), namespace, name)
        return self._call("get", what, path, {}, missing_ok=True, spec=spec, namespace=namespace)

    def _call(
        self,
        verb: str,
        what: str,
        path: str,
        query: dict[str, str],
        missing_ok: bool = False,
        spec: Resource | None = None,
        namespace: str | None = None,
    ) -> dict[str, Any] | None:
        """One GET as JSON: None for 404 when ``missing_ok``, else a ``ClusterError``."""
        status, reason, body = self._request(f"{verb} {what}", path, query)
        if status == 404 and missing_ok:
            return None
        if not 200 <= status <= 299:
            raise _api_error(status, reason, body, verb, what, self.host, spec, namespace)
        try:
            data = parse_json(body)
        except TooDeep:
            raise ClusterError(
                "DRA605", f"{verb} {what}: the API server's answer nests too deeply"
            ) from None
        except ValueError:
            raise ClusterError(
                "DRA605", f"{verb} {what}: the API server's answer is not JSON"
            ) from None
        if not isinstance(data, dict):
            raise ClusterError("DRA605", f"{verb} {what}: the API server's answer is not an object")
        return data

    def _headers(self) -> dict[str, str]:
        headers = {
            "Accept": "application/json",
            "Accept-Encoding": "identity",  # an answer is read as it comes, never inflated
            "User-Agent": "dra-migrate",
        }
        # the kubeconfig's token (an exec plugin's, refreshed as the client refreshes it)
        for auth in self.configuration.auth_settings().values():
            if auth.get("in") == "header" and auth.get("value"):
                headers[auth["key"]] = auth["value"]
        return headers

    def _request(self, asked: str, path: str, query: dict[str, str]) -> tuple[int, str, bytes]:
        """(status, reason, body) of one GET, within ``timeout`` seconds from start to
        the last byte (a server that sends a byte at a time does not hold it longer)
        and at most ``max_response`` bytes of body, read as they come.

        The request runs in a thread of its own, so the deadline holds whatever the
        socket does; past it, the answer is left unread and its socket shut down."""
        import threading

        url = self.configuration.host.rstrip("/") + path + ("?" + urlencode(query) if query else "")
        exchange = _Exchange(self.pool, url, self._headers(), self.connection)
        worker = threading.Thread(target=exchange.run, name="dra-migrate-request", daemon=True)
        worker.start()
        if not exchange.done.wait(self.connection.timeout):
            exchange.abandon()
            raise ClusterError(
                "DRA602",
                f"{asked}: the API server at {self.host} did not answer within "
                f"{self.connection.timeout:g} seconds (--request-timeout, for the whole answer)",
                "check the network and the server's load; --request-timeout allows longer",
            )
        error = exchange.error
        if error is not None:
            raise ClusterError(
                "DRA602",
                f"cannot reach the API server at {self.host}: {_reason(error)}",
                "check the network, the server address and the kubeconfig context",
            )
        if exchange.too_large:
            raise ClusterError(
                "DRA611",
                f"{asked}: the API server's answer is larger than "
                f"{_size(self.connection.max_response)} (--max-response-size); not read further",
                "a smaller --page-size gives smaller pages; --max-response-size raises the limit",
            )
        if exchange.encoding:
            raise ClusterError(
                "DRA605",
                f"{asked}: the API server's answer is compressed ({exchange.encoding}), "
                "which was not asked for",
            )
        return exchange.status, exchange.reason, exchange.body


class _Exchange:
    """One GET in its own thread: the answer's status and at most ``max_response``
    bytes of its body, or the exception that ended it."""

    def __init__(self, pool: Any, url: str, headers: dict[str, str], connection: Connection):
        import threading

        self.pool, self.url, self.headers, self.connection = pool, url, headers, connection
        self.done = threading.Event()
        self.abandoned = threading.Event()
        self.response: Any = None
        self.status, self.reason, self.body = 0, "", b""
        self.too_large = False
        self.encoding = ""  # a Content-Encoding that was not asked for
        self.whole = False  # read to its end: the connection can serve the next request
        self.error: BaseException | None = None

    def run(self) -> None:
        import urllib3

        try:
            self.response = self.pool.request(
                "GET",
                self.url,
                headers=self.headers,
                preload_content=False,
                redirect=False,
                timeout=urllib3.Timeout(
                    connect=self.connection.timeout, read=self.connection.timeout
                ),
            )
            self.status = int(self.response.status)
            self.reason = str(self.response.reason or "")
            self.body = self._read(self.response)
        except Exception as exc:  # reported by the waiting thread
            self.error = exc
        finally:
            if self.response is not None:
                if self.whole and not self.abandoned.is_set():
                    self.response.release_conn()
                else:
                    self.response.close()  # not read to its end: the connection is not reused
            self.done.set()

    def _read(self, response: Any) -> bytes:
        """The body, read as it arrives, up to the limit: empty and ``too_large`` past
        it, empty and ``encoding`` set for a compressed answer (never inflated)."""
        limit = self.connection.max_response
        encoding = str(response.headers.get("Content-Encoding") or "identity").lower()
        if encoding != "identity":
            self.encoding = encoding
            return b""
        declared = str(response.headers.get("Content-Length") or "")
        if declared.isdigit() and (len(declared) > 20 or int(declared) > limit):
            self.too_large = True
            return b""
        chunks: list[bytes] = []
        size = 0
        while not self.abandoned.is_set():
            chunk = response.read1(_CHUNK, decode_content=False)
            if not chunk:
                self.whole = True
                break
            size += len(chunk)
            if size > limit:
                self.too_large = True
                return b""
            chunks.append(chunk)
        return b"".join(chunks)

    def abandon(self) -> None:
        """Past the deadline: stop reading, and wake a read that waits on the socket."""
        self.abandoned.set()
        response = self.response
        if response is not None:
            response.shutdown()


def _size(limit: int) -> str:
    for unit, factor in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if limit % factor == 0:
            return f"{limit // factor}{unit}"
    return f"{limit} bytes"


def _scope(spec: Resource, namespace: str | None) -> str:
    name = spec.plural + (f".{spec.group}" if spec.group else "")
    if not spec.namespaced:
        return name
    return f"{name} in namespace {namespace}" if namespace else f"{name} in all namespaces"


def _api_error(
    status: int,
    reason: str,
    body: bytes,
    verb: str,
    what: str,
    host: str,
    spec: Resource | None,
    namespace: str | None,
) -> ClusterError:
    server = _status_message(body)
    if status == 401:
        return ClusterError(
            "DRA603",
            f"the API server at {host} rejected the credentials (401 Unauthorized)",
            "the token or client certificate has expired or is invalid: log in again "
            "or refresh the kubeconfig",
        )
    if status == 403:
        group = spec.group if spec else (DRA_GROUP if what == DISCOVERY_URL else "")
        missing = (
            f"get on the non-resource URL {what}"
            if what.startswith("/")
            else f"{verb} on {(spec.plural if spec else what.split()[0].split('.')[0])}"
            f" in API group {group or 'core'}" + (f" in namespace {namespace}" if namespace else "")
        )
        return ClusterError(
            "DRA604",
            f"forbidden: {verb} {what} (403); missing permission: {missing}"
            + (f"; the server says: {server}" if server else ""),
            "bind the read-only ClusterRole of docs/cluster.md to this account",
        )
    if status == 410:
        return ClusterError(
            "DRA605",
            f"{verb} {what}: the list changed too much while it was paged (410 Gone)",
            "run again; a larger --page-size needs fewer pages",
        )
    return ClusterError(
        "DRA605",
        f"{verb} {what}: the API server answered {status} {reason}".rstrip()
        + (f": {server}" if server else ""),
    )


def _status_message(body: bytes) -> str:
    """The ``message`` of a Kubernetes Status answer, on one line."""
    try:
        data = parse_json(body) if body else None
    except ValueError:
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return " ".join(str(message).split()) if message else ""


def _reason(exc: BaseException) -> str:
    """The innermost cause of a connection failure, without the request's URL."""
    todo: list[BaseException] = [exc]
    seen: set[int] = set()
    names: list[str] = []
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        strerror = getattr(current, "strerror", None)
        if strerror:
            return str(strerror).lower()
        names.append(type(current).__name__)
        for inner in (getattr(current, "reason", None), current.__cause__, current.__context__):
            if isinstance(inner, BaseException):
                todo.append(inner)
    if any("Timeout" in n for n in names):
        return "timed out"
    if any("NameResolution" in n or n == "gaierror" for n in names):
        return "the server name does not resolve"
    return names[-1] if names else "connection failed"


def _safe_url(url: str) -> str:
    """The server address without any user information in it."""
    return re.sub(r"//[^/@]*@", "//", url or "")


def _configure(connection: Connection) -> tuple[Any, str, str]:
    """Client configuration, a description of where it came from, and its namespace."""
    from kubernetes import client, config

    configuration = client.Configuration()
    explicit = connection.kubeconfig is not None or connection.context is not None
    default_files = [
        p for p in os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep) if p
    ]
    have_file = any(Path(p).expanduser().is_file() for p in default_files)
    in_cluster = bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
    if connection.kubeconfig is not None and not Path(connection.kubeconfig).is_file():
        raise ClusterError("DRA601", f"--kubeconfig {connection.kubeconfig}: no such file")
    try:
        if explicit or have_file or not in_cluster:
            if not explicit and not have_file:
                raise ClusterError(
                    "DRA601",
                    "no kubeconfig (KUBECONFIG or ~/.kube/config) and not running in a pod",
                    "pass --kubeconfig FILE, or run where kubectl works",
                )
            config.load_kube_config(
                config_file=connection.kubeconfig,
                context=connection.context,
                client_configuration=configuration,
                persist_config=False,
            )
            contexts, active = config.list_kube_config_contexts(config_file=connection.kubeconfig)
            chosen = active
            if connection.context is not None:
                chosen = next((c for c in contexts if c.get("name") == connection.context), active)
            name = (chosen or {}).get("name", "?")
            namespace = ((chosen or {}).get("context") or {}).get("namespace") or "default"
            source = f"context {name} ({_safe_url(configuration.host)})"
        else:
            config.load_incluster_config(client_configuration=configuration)
            namespace = _in_cluster_namespace()
            source = f"in-cluster service account ({_safe_url(configuration.host)})"
    except ClusterError:
        raise
    except config.ConfigException as exc:
        raise ClusterError("DRA601", f"cannot use the kubeconfig: {_one_line(exc)}") from None
    except Exception as exc:
        # whatever the client's loader raises on a broken kubeconfig (YAML errors, a
        # missing certificate file, bad base64, an exec plugin that fails) is configuration
        raise ClusterError(
            "DRA601", f"cannot use the kubeconfig: {type(exc).__name__}: {_one_line(exc)}"
        ) from None
    return configuration, source, namespace


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _in_cluster_namespace() -> str:
    path = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    try:
        return path.read_text(encoding="utf-8").strip() or "default"
    except OSError:
        return "default"


class DumpReader:
    """``kubectl get ... -o yaml`` (or ``-o json``) files: the offline path."""

    def __init__(self, paths: Sequence[str], limit: int = DEFAULT_MAX_FILE_SIZE) -> None:
        self.source = "files " + ", ".join(paths)
        self.files: list[FileResult] = []
        self.objects: dict[str, list[dict[str, Any]]] = {r: [] for r in RESOURCES}
        self.index: dict[tuple[str, str, str], dict[str, Any]] = {}
        versions: set[str] = set()
        for path in paths:
            result = FileResult(path, Status.UNCHANGED)
            self.files.append(result)
            try:
                docs = _read_dump(path, limit)
            except InputProblem as problem:
                result.status = Status.FAILED
                result.findings.append(problem.finding)
                continue
            found = 0
            for obj in _objects(docs):
                api_version = str(obj.get("apiVersion") or "")
                group = api_version.rpartition("/")[0]
                resource = KIND_TO_RESOURCE.get((group, str(obj.get("kind") or "")))
                if resource is None:
                    continue
                found += 1
                self.objects[resource].append(obj)
                key = (resource, str(_meta(obj, "namespace") or ""), str(_meta(obj, "name") or ""))
                self.index[key] = obj
                if group == DRA_GROUP:
                    versions.add(api_version.rpartition("/")[2])
            if not found:
                result.findings.append(
                    finding(
                        "DRA609",
                        path,
                        1,
                        1,
                        "no Pod, Node, owner, DeviceClass, ResourceSlice or ResourceClaim in it",
                        "dump with kubectl get " + ",".join(RESOURCES) + " -A -o yaml",
                    )
                )
        known = [v for v in DRA_VERSIONS if v in versions]
        self.dra_version = known[0] if known else None
        self.dra_note = (
            ""
            if known
            else "the input holds no DeviceClass, ResourceSlice or ResourceClaim of "
            "resource.k8s.io v1, v1beta2 or v1beta1"
        )

    def list(self, resource: str, namespace: str | None) -> Iterator[dict[str, Any]]:
        namespaced = RESOURCES[resource].namespaced
        for obj in self.objects[resource]:
            if namespaced and namespace is not None and _meta(obj, "namespace") != namespace:
                continue
            yield obj

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self.index.get((resource, namespace, name))


def _read_dump(path: str, limit: int) -> list[Any]:
    """The documents of a dump, read as manifests are (``discover.read_file``: regular
    files only, without blocking, at most ``limit`` bytes)."""
    from dra_migrate.manifests import compose, sources, trees

    try:
        raw = discover.read_file(path, limit)
    except discover.Unreadable as exc:
        raise InputProblem(finding(exc.code, path, 1, 1, exc.message)) from None
    try:  # kubectl -o json is read fastest by json
        return [parse_json(raw)]
    except TooDeep:
        raise InputProblem(
            finding("DRA004", path, 1, 1, f"JSON nested more than {compose.MAX_DEPTH} levels deep")
        ) from None
    except ValueError:
        pass
    source = sources.decode(path, raw)
    return [trees.to_data(d.root) for d in compose.parse(source) if d.root is not None]


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


def _objects(docs: Iterable[Any]) -> Iterator[dict[str, Any]]:
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        items = doc.get("items")
        if str(doc.get("kind") or "").endswith("List") and isinstance(items, list):
            yield from _objects(items)
        else:
            yield doc


# --- the inventory -------------------------------------------------------------------


def _meta(obj: Mapping[str, Any], key: str) -> Any:
    meta = obj.get("metadata")
    return meta.get(key) if isinstance(meta, dict) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def build_inventory(
    reader: Reader,
    config: Config,
    namespace: str | None,
    pending_after: int = DEFAULT_PENDING_AFTER,
    now: datetime | None = None,
) -> tuple[ClusterInventory, list[Finding]]:
    """The inventory of a cluster (or of dumps), and the findings about it."""
    now = now or datetime.now(UTC)
    inventory = ClusterInventory(reader.source, namespace, None, pending_after)
    findings: list[Finding] = []
    inventory.workloads, inventory.pods_read = _workloads(reader, config, namespace)
    nodes, inventory.nodes_read = _nodes(reader, config)
    if reader.dra_version is None:
        findings.append(
            finding(
                "DRA606",
                "",
                0,
                0,
                f"{reader.dra_note}: inventory of the extended-resource side only",
                "DRA needs Kubernetes 1.32 or later with the resource.k8s.io API served",
            )
        )
    else:
        inventory.dra_version = f"{DRA_GROUP}/{reader.dra_version}"
        inventory.device_classes = _device_classes(reader)
        devices = slice_devices(reader)
        inventory.devices = _device_groups(devices)
        _attach_drivers(nodes, devices)
        inventory.pending_claims = _pending_claims(reader, namespace, pending_after, now)
    _served_twice(nodes, config, inventory.device_classes)
    inventory.nodes = [nodes[name] for name in sorted(nodes)]
    for node in inventory.nodes:
        if node.both:
            findings.append(
                finding(
                    "DRA607",
                    "",
                    0,
                    0,
                    f"node {node.name} has GPUs from the device plugin ({', '.join(node.both)}) "
                    f"and from the DRA driver ({', '.join(node.dra_drivers)}): the same GPUs can "
                    "be allocated twice, once to a pod's extended resource and once to a claim",
                    "run one of them per node: keep the device plugin's DaemonSet off the "
                    "nodes where the DRA driver publishes GPUs (node labels and selectors)",
                )
            )
    for claim in inventory.pending_claims:
        who = f" for {', '.join(claim.reserved_for)}" if claim.reserved_for else ""
        findings.append(
            finding(
                "DRA608",
                "",
                0,
                0,
                f"ResourceClaim {claim.namespace}/{claim.name}{who} has no allocation after "
                f"{age_text(claim.age_seconds)} (classes: {', '.join(claim.device_classes) or '-'})",
                "no device matches it, or all that match are taken: kubectl describe the pod "
                "and run dra-migrate validate --cluster on the claim",
            )
        )
    return inventory, findings


def _containers(spec: Mapping[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    for c in _list(spec.get("initContainers")):
        if isinstance(c, dict):
            yield c, "sidecar" if c.get("restartPolicy") == "Always" else "init"
    for c in _list(spec.get("containers")):
        if isinstance(c, dict):
            yield c, "app"


class _GpuNames:
    """``config.is_gpu`` once a resource name: a cluster repeats a few names many times."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.known: dict[str, bool] = {}

    def __call__(self, name: str) -> bool:
        found = self.known.get(name)
        if found is None:
            found = self.known[name] = self.config.is_gpu(name)
        return found


def _gpu_requests(pod: Mapping[str, Any], config: Config, is_gpu: _GpuNames) -> list[GpuRequest]:
    spec = _dict(pod.get("spec"))
    ctx = Context(
        namespace=_meta(pod, "namespace"),
        labels={str(k): str(v) for k, v in _dict(_meta(pod, "labels")).items()},
        node_selector={
            str(k): frozenset([str(v)]) for k, v in _dict(spec.get("nodeSelector")).items()
        },
    )
    found: list[GpuRequest] = []
    for container, role in _containers(spec):
        resources = _dict(container.get("resources"))
        limits = _dict(resources.get("limits"))
        requests = _dict(resources.get("requests"))
        for name in sorted({*limits, *requests}):
            if not is_gpu(str(name)):
                continue
            value = str(limits.get(name, requests.get(name)))
            choice = config.choose(str(name), ctx)
            found.append(
                GpuRequest(
                    str(container.get("name") or ""),
                    role,
                    str(name),
                    whole_count(value),
                    value,
                    choice.device_class if choice else None,
                )
            )
    return found


def _pod_gpus(requests: Sequence[GpuRequest]) -> dict[str, int]:
    """Devices a pod holds per resource, as the device plugin counts them:
    the larger of the biggest init container and the app containers with sidecars."""
    held: dict[str, int] = {}
    for resource in {r.resource for r in requests}:
        mine = [r for r in requests if r.resource == resource and r.count is not None]
        running = sum(r.count or 0 for r in mine if r.role != "init")
        init = max((r.count or 0 for r in mine if r.role == "init"), default=0)
        if max(running, init):
            held[resource] = max(running, init)
    return held


def _workloads(reader: Reader, config: Config, namespace: str | None) -> tuple[list[Workload], int]:
    owners: dict[tuple[str, str, str, str], tuple[str, str, str]] = {}
    by_key: dict[tuple[str, str, str, str], Workload] = {}
    nodes: dict[tuple[str, str, str, str], set[str]] = {}
    read = 0
    is_gpu = _GpuNames(config)
    for pod in reader.list("pods", namespace):
        read += 1
        requests = _gpu_requests(pod, config, is_gpu)
        if not requests:
            continue
        ns = str(_meta(pod, "namespace") or "")
        api_version, kind, name = _top_owner(reader, pod, ns, owners)
        key = (ns, api_version, kind, name)
        workload = by_key.get(key)
        if workload is None:
            workload = by_key[key] = Workload(ns, api_version, kind, name)
        workload.pods += 1
        phase = str(_dict(pod.get("status")).get("phase") or "Unknown")
        workload.phases[phase] = workload.phases.get(phase, 0) + 1
        for request in requests:
            if request not in workload.requests:
                workload.requests.append(request)
        if phase in HOLDING:
            for resource, count in _pod_gpus(requests).items():
                workload.gpus[resource] = workload.gpus.get(resource, 0) + count
        node = _dict(pod.get("spec")).get("nodeName")
        if isinstance(node, str) and node:
            nodes.setdefault(key, set()).add(node)
    for key, workload in by_key.items():
        workload.requests.sort()
        workload.nodes = sorted(nodes.get(key, ()))
    return [by_key[k] for k in sorted(by_key)], read


def _controller(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    for ref in _list(_meta(obj, "ownerReferences")):
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def _top_owner(
    reader: Reader,
    pod: Mapping[str, Any],
    namespace: str,
    cache: dict[tuple[str, str, str, str], tuple[str, str, str]],
) -> tuple[str, str, str]:
    """(apiVersion, kind, name) of the workload at the top of the pod's owner references."""
    ref = _controller(pod)
    if ref is None:
        return "v1", "Pod", str(_meta(pod, "name") or "")
    chain: list[tuple[str, str, str, str]] = []
    top = (str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""), str(ref.get("name")))
    for _ in range(8):  # owner chains are short; a cycle must not loop forever
        api_version, kind, name = top
        key = (namespace, api_version, kind, name)
        if key in cache:
            top = cache[key]
            break
        chain.append(key)
        resource = OWNER_HOPS.get((api_version.rpartition("/")[0], kind))
        if resource is None:
            break
        owner = reader.get(resource, namespace, name)
        up = _controller(owner) if owner is not None else None
        if up is None:
            break
        top = (str(up.get("apiVersion") or ""), str(up.get("kind") or ""), str(up.get("name")))
    for key in chain:
        cache[key] = top
    return top


def _nodes(reader: Reader, config: Config) -> tuple[dict[str, NodeGpus], int]:
    nodes: dict[str, NodeGpus] = {}
    read = 0
    is_gpu = _GpuNames(config)
    for node in reader.list("nodes", None):
        read += 1
        status = _dict(node.get("status"))
        capacity = {
            str(k): str(v) for k, v in _dict(status.get("capacity")).items() if is_gpu(str(k))
        }
        allocatable = {
            str(k): str(v) for k, v in _dict(status.get("allocatable")).items() if is_gpu(str(k))
        }
        labels = _dict(_meta(node, "labels"))
        product = next((str(labels[k]) for k in PRODUCT_LABELS if labels.get(k)), None)
        name = str(_meta(node, "name") or "")
        nodes[name] = NodeGpus(name, product, capacity, allocatable)
    for name in [n for n, v in nodes.items() if not v.capacity and not v.allocatable]:
        del nodes[name]  # kept back in _attach_drivers when a DRA driver serves it
    return nodes, read


def _device_classes(reader: Reader) -> list[DeviceClassInfo]:
    classes = []
    for obj in reader.list("deviceclasses", None):
        spec = _dict(obj.get("spec"))
        selectors = tuple(
            str(_dict(s.get("cel")).get("expression") or "")
            for s in _list(spec.get("selectors"))
            if isinstance(s, dict) and isinstance(s.get("cel"), dict)
        )
        driver = next((m.group(2) for e in selectors if (m := _DRIVER_SELECTOR.search(e))), None)
        ext = spec.get("extendedResourceName")
        classes.append(
            DeviceClassInfo(
                str(_meta(obj, "name") or ""),
                selectors,
                str(ext) if isinstance(ext, str) and ext else None,
                driver,
            )
        )
    return sorted(classes, key=lambda c: c.name)


def current_slices(slices: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Slices of the newest generation of each pool: the scheduler ignores older ones."""
    kept = list(slices)
    newest: dict[tuple[str, str], int] = {}

    def pool(obj: Mapping[str, Any]) -> tuple[tuple[str, str], int]:
        spec = _dict(obj.get("spec"))
        p = _dict(spec.get("pool"))
        generation = p.get("generation")
        return (
            (str(spec.get("driver") or ""), str(p.get("name") or "")),
            generation if isinstance(generation, int) else 0,
        )

    for obj in kept:
        key, generation = pool(obj)
        newest[key] = max(newest.get(key, generation), generation)
    return [obj for obj in kept if pool(obj)[1] >= newest[pool(obj)[0]]]


def _device_groups(devices: Sequence[Device]) -> list[DeviceGroup]:
    counts: dict[tuple[str, str], list[int]] = {}
    nodes: dict[tuple[str, str], set[str]] = {}
    for device in devices:
        own = device.attributes.get(device.driver, {})
        product = next((str(own[a]) for a in PRODUCT_ATTRIBUTES if a in own), "(unnamed)")
        key = (device.driver, product)
        entry = counts.setdefault(key, [0, 0])
        entry[0] += 1
        if device.node is None:
            entry[1] += 1
        else:
            nodes.setdefault(key, set()).add(device.node)
    return sorted(
        DeviceGroup(driver, product, n, len(nodes.get((driver, product), ())), shared)
        for (driver, product), (n, shared) in counts.items()
    )


def _attach_drivers(nodes: dict[str, NodeGpus], devices: Sequence[Device]) -> None:
    drivers: dict[str, set[str]] = {}
    for device in devices:
        if device.node is None:
            continue
        drivers.setdefault(device.node, set()).add(device.driver)
        node = nodes.get(device.node)
        if node is None:
            node = nodes[device.node] = NodeGpus(device.node, None)
        node.dra_devices += 1
    for name, found in drivers.items():
        nodes[name].dra_drivers = sorted(found)


def _served_twice(
    nodes: Mapping[str, NodeGpus], config: Config, classes: Sequence[DeviceClassInfo]
) -> None:
    """Resources the device plugin advertises on a node whose DRA driver serves that class."""
    from dra_migrate.k8s.catalog import load_catalog

    class_driver = {c.name: c.driver for c in load_catalog().device_classes}
    class_driver.update({c.name: c.driver for c in classes if c.driver})
    for node in nodes.values():
        if not node.dra_drivers:
            continue
        for resource, value in sorted(node.capacity.items()):
            amount = parse_quantity(value)
            if not amount:
                continue
            choice = config.choose(resource, Context())
            driver = class_driver.get(choice.device_class) if choice else None
            if driver is not None and driver in node.dra_drivers:
                node.both.append(resource)


def _timestamp(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _pending_claims(
    reader: Reader, namespace: str | None, pending_after: int, now: datetime
) -> list[PendingClaim]:
    pending = []
    for claim in reader.list("resourceclaims", namespace):
        status = _dict(claim.get("status"))
        if status.get("allocation"):
            continue
        created = _timestamp(_meta(claim, "creationTimestamp"))
        if created is None:
            continue
        age = int((now - created).total_seconds())
        if age < pending_after:
            continue
        classes: list[str] = []
        for request in _list(_dict(_dict(claim.get("spec")).get("devices")).get("requests")):
            if not isinstance(request, dict):
                continue
            exact = _dict(request.get("exactly")) or request  # v1/v1beta2, or v1beta1 flat
            options = [
                exact,
                *(o for o in _list(request.get("firstAvailable")) if isinstance(o, dict)),
            ]
            for option in options:
                name = option.get("deviceClassName")
                if isinstance(name, str) and name and name not in classes:
                    classes.append(name)
        consumers = tuple(
            f"{c.get('resource', 'pods')}/{c.get('name')}"
            for c in _list(status.get("reservedFor"))
            if isinstance(c, dict)
        )
        pending.append(
            PendingClaim(
                str(_meta(claim, "namespace") or ""),
                str(_meta(claim, "name") or ""),
                age,
                tuple(classes),
                consumers,
            )
        )
    return sorted(pending)


def slice_devices(reader: Reader) -> list[Device]:
    """The devices of the cluster's current ResourceSlices, for ``validate --cluster``."""
    from dra_migrate.cel import devices_from_resource_slices

    if reader.dra_version is None:
        return []
    return devices_from_resource_slices(current_slices(reader.list("resourceslices", None)))


def permissions() -> list[tuple[str, str, str]]:
    """(API group, resource, verb) of every request the readers make, discovery aside."""
    return sorted((r.group, r.plural, r.verb) for r in RESOURCES.values())


def inventory_report(
    reader: Reader,
    config: Config,
    namespace: str | None,
    pending_after: int = DEFAULT_PENDING_AFTER,
    now: datetime | None = None,
) -> Report:
    """``dra-migrate inventory``: the inventory in the one report model."""
    inventory, findings = build_inventory(reader, config, namespace, pending_after, now)
    files = list(getattr(reader, "files", []))
    return Report(files=files, findings=findings, cluster=inventory)
