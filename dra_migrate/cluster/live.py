"""Cluster mode's live reader: ``LiveReader`` asks the API server through the
official ``kubernetes`` client's connection pool and credentials (the kubeconfig or
the in-cluster service account), GET only, each answer within a deadline and a size
limit, lists paged with ``limit``/``continue`` and bounded in pages."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from dra_migrate.cluster.resources import (
    DISCOVERY_URL,
    DRA_GROUP,
    DRA_VERSIONS,
    RESOURCES,
    ClusterError,
    Resource,
    TooDeep,
    as_list,
    parse_json,
)

DEFAULT_PAGE_SIZE = 500
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RESPONSE = 64 * 2**20  # bytes of one answer (one page of a list)
DEFAULT_MAX_PAGES = 10_000  # pages of one list: 5 million objects at the default page size
_CHUNK = 1 << 16  # bytes read at a time from an answer


@dataclass(frozen=True, slots=True)
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
        rest = _client_rest()
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
        served = [v.get("version") for v in as_list(group.get("versions")) if isinstance(v, dict)]
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


INSTALL = "pip install 'dra-migrate[cluster]'"


def _client_rest() -> Any:
    """The ``kubernetes`` client's REST module, or a ``ClusterError`` that says how to
    install it: the client is the ``cluster`` extra, which most installs (the
    pre-commit hooks, CI checks) never need."""
    try:
        from kubernetes.client import rest
    except ImportError as exc:
        raise ClusterError(
            "DRA601",
            "cluster mode needs the kubernetes Python client, which is not installed "
            f"({_one_line(exc)})",
            f"{INSTALL} installs it (the cluster extra); the pre-commit hooks never need it",
        ) from None
    return rest


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
        # kube-apiserver keeps old versions until it compacts etcd (every 5 minutes by
        # default); a continue token older than the compaction is refused, and the rest
        # of the list could only be read from a later state (apiserver
        # pkg/storage/etcd3/errors.go, handleCompactedErrorForPaging)
        return ClusterError(
            "DRA605",
            f"{verb} {what}: the continue token expired (410 Gone): the list took longer "
            "than the API server keeps older versions (it compacts etcd, every 5 minutes "
            "by default), so its remaining pages would not be one consistent list"
            + (f"; the server says: {server}" if server else ""),
            "run again; a larger --page-size needs fewer pages and less time",
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
