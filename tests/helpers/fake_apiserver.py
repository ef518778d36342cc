"""A Kubernetes API server stand-in on 127.0.0.1, for the real ``kubernetes`` client.

It serves what ``dra-migrate``'s cluster mode reads, shaped after the API
reference: discovery of ``resource.k8s.io``, lists of pods, nodes,
deviceclasses, resourceslices and resourceclaims (all namespaces or one) with
``limit``/``continue`` paging, ``get`` of ReplicaSets, Deployments,
StatefulSets and Jobs, Status objects for 401, 403 and 404. List items carry
no ``kind``/``apiVersion``, as the real server's lists. It records every
request, so tests can assert that only GET was used, and refuses any other
method with 405.

``sample_cluster`` builds a small cluster with every case the inventory must
handle; ``large_cluster`` the benchmark's 5,000 pods and 500 nodes.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "s3cr3t-token-never-printed"
SA_USER = "system:serviceaccount:ci:dra-migrate"
DRA_GROUP = "resource.k8s.io"
# resource -> (group, version, kind, namespaced); DRA resources take the served version.
KINDS = {
    "pods": ("", "v1", "Pod", True),
    "nodes": ("", "v1", "Node", False),
    "replicasets": ("apps", "v1", "ReplicaSet", True),
    "deployments": ("apps", "v1", "Deployment", True),
    "statefulsets": ("apps", "v1", "StatefulSet", True),
    "jobs": ("batch", "v1", "Job", True),
    "deviceclasses": (DRA_GROUP, "", "DeviceClass", False),
    "resourceslices": (DRA_GROUP, "", "ResourceSlice", False),
    "resourceclaims": (DRA_GROUP, "", "ResourceClaim", True),
}
_LIST = re.compile(
    r"^/(?:api/v1|apis/(?P<group>[a-z0-9.]+)/(?P<version>v[0-9a-z]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<resource>[a-z]+)(?:/(?P<name>[^/]+))?$"
)


@dataclass
class FakeCluster:
    """Objects (as stored, with kind and apiVersion of v1 DRA) and how the server behaves."""

    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    dra_versions: tuple[str, ...] = ("v1", "v1beta2", "v1beta1")
    token: str = TOKEN
    forbidden: set[str] = field(default_factory=set)  # resources answered with 403
    failing: set[str] = field(default_factory=set)  # resources answered with 500
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path?query)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Misbehaving servers (hostile or broken), for the bounds of cluster mode:
    continue_mode: str = ""  # "endless": a new token on every page; "repeat": the same one
    drip: str = ""  # "headers" or "body": answers sent a byte every drip_interval seconds
    drip_interval: float = 0.05
    stream_padding: int = 0  # list answers sent chunked, with this many bytes of padding
    raw: dict[str, bytes] = field(default_factory=dict)  # resource -> its list answer, as is
    content_encoding: str = ""  # sent with the raw answers, asked for or not (gzip)
    closed: threading.Event = field(default_factory=threading.Event)  # set when serve() ends

    def served_objects(self, resource: str, version: str) -> list[dict[str, Any]]:
        items = self.objects.get(resource, [])
        if KINDS[resource][0] == DRA_GROUP and version != "v1":
            return [to_version(obj, version) for obj in items]
        return items


def to_version(obj: dict[str, Any], version: str) -> dict[str, Any]:
    """A v1 DRA object in an older version's shape (v1beta1 wraps devices in ``basic``
    and flattens requests; v1beta2 is v1's shape)."""
    out = copy.deepcopy(obj)
    out["apiVersion"] = f"{DRA_GROUP}/{version}"
    if version != "v1beta1":
        return out
    spec = out.get("spec") or {}
    if out.get("kind") == "ResourceSlice":
        spec["devices"] = [
            {"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}}
            for d in spec.get("devices") or []
        ]
    if out.get("kind") == "ResourceClaim":
        requests = (spec.get("devices") or {}).get("requests") or []
        for request in requests:
            request.update(request.pop("exactly", {}))
    return out


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def _handler(cluster: FakeCluster) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def handle(self) -> None:
            # a client that closes without reading all of an answer it refuses, as it may
            with contextlib.suppress(ConnectionError):
                super().handle()

        def _send(self, code: int, body: dict[str, Any] | bytes, encoding: str = "") -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            head = (
                f"HTTP/1.1 {code} {self.responses.get(code, ('',))[0]}\r\n"
                "Content-Type: application/json\r\n"
                + (f"Content-Encoding: {encoding}\r\n" if encoding else "")
                + f"Content-Length: {len(data)}\r\n\r\n"
            ).encode()
            if cluster.drip:
                self._drip(head, data)
                return
            try:
                self.wfile.write(head + data)
            except OSError:  # the client stopped reading (an answer it refuses)
                self.close_connection = True

        def _drip(self, head: bytes, data: bytes) -> None:
            """A byte at a time (from the status line, or from the body), each well within
            any read timeout, until all is sent or the server closes."""
            self.close_connection = True
            slow = head + data if cluster.drip == "headers" else data
            try:
                if cluster.drip != "headers":
                    self.wfile.write(head)
                    self.wfile.flush()
                for i in range(len(slow)):
                    if cluster.closed.wait(cluster.drip_interval):
                        return
                    self.wfile.write(slow[i : i + 1])
                    self.wfile.flush()
            except OSError:  # the client gave up
                return

        def _stream(self, prefix: bytes) -> None:
            """A list answer without Content-Length, of ``stream_padding`` bytes and more."""
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b" " * 65536
            sent = 0
            try:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(prefix), prefix))
                while sent < cluster.stream_padding and not cluster.closed.is_set():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    sent += len(chunk)
                self.wfile.write(b"2\r\n]}\r\n0\r\n\r\n")
            except OSError:  # the client stopped reading, as it should
                return

        def _refuse(self) -> None:
            with cluster.lock:
                cluster.requests.append((self.command, self.path))
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self._send(405, _status(405, "MethodNotAllowed", "read-only test server"))

        do_POST = do_PUT = do_PATCH = do_DELETE = _refuse

        def do_GET(self) -> None:
            with cluster.lock:
                cluster.requests.append(("GET", self.path))
            scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
            if scheme.lower() != "bearer" or token != cluster.token:
                self._send(401, _status(401, "Unauthorized", "Unauthorized"))
                return
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            path = url.path.rstrip("/")
            if path == f"/apis/{DRA_GROUP}":
                self._discovery()
                return
            match = _LIST.match(path)
            if match is None or match["resource"] not in KINDS:
                self._send(404, _status(404, "NotFound", "the server could not find the resource"))
                return
            resource, ns, name = match["resource"], match["ns"], match["name"]
            group, version, kind, namespaced = KINDS[resource]
            if (match["group"] or "") != group or (
                group != DRA_GROUP and (match["version"] or "v1") != version
            ):
                self._send(404, _status(404, "NotFound", "the server could not find the resource"))
                return
            if group == DRA_GROUP:
                version = match["version"]
                if version not in cluster.dra_versions:
                    self._send(
                        404, _status(404, "NotFound", "the server could not find the resource")
                    )
                    return
            verb = "get" if name else "list"
            if resource in cluster.forbidden:
                scope = f'in the namespace "{ns}"' if ns else "at the cluster scope"
                named = f" {json.dumps(name)}" if name else ""
                message = (
                    f"{resource}{'.' + group if group else ''}{named} is forbidden: "
                    f'User "{SA_USER}" cannot {verb} resource "{resource}" '
                    f'in API group "{group}" {scope}'
                )
                self._send(403, _status(403, "Forbidden", message))
                return
            if resource in cluster.failing:
                self._send(500, _status(500, "InternalError", "etcdserver: request timed out"))
                return
            if not name and resource in cluster.raw:
                self._send(200, cluster.raw[resource], cluster.content_encoding)
                return
            if not name and cluster.stream_padding:
                self._stream(f'{{"kind": "{kind}List", "apiVersion": "v1", "items": ['.encode())
                return
            items = [
                o
                for o in cluster.served_objects(resource, version)
                if not (namespaced and ns) or o["metadata"].get("namespace") == ns
            ]
            api_version = f"{group}/{version}" if group else version
            if name:
                found = next((o for o in items if o["metadata"]["name"] == name), None)
                if found is None:
                    self._send(404, _status(404, "NotFound", f'{resource} "{name}" not found'))
                else:
                    self._send(200, found)
                return
            self._list(items, api_version, kind, query)

        def _discovery(self) -> None:
            if not cluster.dra_versions:
                self._send(
                    404,
                    _status(404, "NotFound", "the server could not find the requested resource"),
                )
                return
            versions = [
                {"groupVersion": f"{DRA_GROUP}/{v}", "version": v} for v in cluster.dra_versions
            ]
            self._send(
                200,
                {
                    "kind": "APIGroup",
                    "apiVersion": "v1",
                    "name": DRA_GROUP,
                    "versions": versions,
                    "preferredVersion": versions[0],
                },
            )

        def _list(
            self, items: list[dict[str, Any]], api_version: str, kind: str, query: dict[str, str]
        ) -> None:
            start = serial = 0
            if "continue" in query:
                try:
                    state = json.loads(base64.urlsafe_b64decode(query["continue"]))
                    start, serial = state["start"], state.get("n", 0)
                except (ValueError, KeyError):
                    self._send(
                        410, _status(410, "Expired", "the provided continue parameter is too old")
                    )
                    return
            limit = int(query.get("limit") or 0) or len(items) or 1
            page = items[start : start + limit]
            meta: dict[str, Any] = {"resourceVersion": "48213"}
            if start + limit < len(items) or cluster.continue_mode:
                # "endless" goes round the items again, with a token never given before;
                # "repeat" gives the token of the second page on every page
                after = start + limit if start + limit < len(items) else 0
                if cluster.continue_mode == "repeat":
                    after = min(limit, len(items))
                state: dict[str, Any] = {"start": after, "rv": 48213}
                if cluster.continue_mode == "endless":
                    state["n"] = serial + 1
                token = json.dumps(state).encode()
                meta["continue"] = base64.urlsafe_b64encode(token).decode()
                meta["remainingItemCount"] = max(len(items) - start - limit, 1)
            listed = []
            for obj in page:
                item = dict(obj)
                item.pop("kind", None)  # the server's lists leave these to the list
                item.pop("apiVersion", None)
                listed.append(item)
            self._send(
                200,
                {
                    "kind": f"{kind}List",
                    "apiVersion": api_version,
                    "metadata": meta,
                    "items": listed,
                },
            )

    return Handler


@contextmanager
def serve(cluster: FakeCluster) -> Iterator[str]:
    """Run the server in a thread; yields its URL (http://127.0.0.1:PORT)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(cluster))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        cluster.closed.set()  # ends any answer still dripping or streaming
        server.shutdown()
        server.server_close()


def write_kubeconfig(
    path: Path, server: str, token: str = TOKEN, namespace: str | None = None
) -> Path:
    context: dict[str, Any] = {"cluster": "test", "user": "ci"}
    if namespace:
        context["namespace"] = namespace
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "test", "cluster": {"server": server}}],
        "users": [{"name": "ci", "user": {"token": token}}],
        "contexts": [{"name": "test-ctx", "context": context}],
        "current-context": "test-ctx",
    }
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def dump(cluster: FakeCluster) -> dict[str, Any]:
    """What ``kubectl get pods,nodes,...,resourceclaims -A -o json`` prints: one List."""
    items = [obj for resource in KINDS for obj in cluster.objects.get(resource, [])]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


# --- objects -------------------------------------------------------------------------


def _meta(name: str, namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "uid": f"uid-{namespace or ''}-{name}",
        "resourceVersion": "1",
        "creationTimestamp": "2026-11-01T10:00:00Z",
    }
    if namespace:
        meta["namespace"] = namespace
    meta.update(extra)
    return meta


def owner(api_version: str, kind: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": f"uid-{kind}-{name}",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod(
    name: str,
    namespace: str,
    gpus: dict[str, str] | None = None,
    owned_by: dict[str, Any] | None = None,
    node: str | None = None,
    phase: str = "Running",
    init_gpus: dict[str, str] | None = None,
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "main",
        "image": "nvcr.io/nvidia/pytorch:24.05-py3",
        "resources": {"limits": {"cpu": "4", "memory": "16Gi", **(gpus or {})}},
    }
    spec: dict[str, Any] = {"containers": [container], "restartPolicy": "Always"}
    if init_gpus:
        spec["initContainers"] = [
            {"name": "warmup", "image": "busybox", "resources": {"limits": dict(init_gpus)}}
        ]
    if node:
        spec["nodeName"] = node
    meta = _meta(name, namespace, labels={"app": name.rsplit("-", 2)[0]})
    if owned_by:
        meta["ownerReferences"] = [owned_by]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase, "qosClass": "Burstable"},
    }


def node(name: str, gpus: int = 0, product: str | None = None) -> dict[str, Any]:
    capacity = {"cpu": "96", "memory": "1056Gi", "pods": "110"}
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
    if product:
        labels["nvidia.com/gpu.product"] = product
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _meta(name, labels=labels),
        "spec": {"podCIDR": "10.244.0.0/24"},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def workload(
    api_version: str, kind: str, name: str, namespace: str, owned_by: dict[str, Any] | None = None
) -> dict[str, Any]:
    meta = _meta(name, namespace)
    if owned_by:
        meta["ownerReferences"] = [owned_by]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": {}, "status": {}}


def gpu_slice(
    node_name: str, count: int, product: str = "NVIDIA A100-SXM4-80GB", generation: int = 1
) -> dict[str, Any]:
    """A gpu.nvidia.com slice shaped after the real dumps in ../shared/corpus/dra."""
    devices = [
        {
            "name": f"gpu-{i}",
            "attributes": {
                "architecture": {"string": "Ampere"},
                "brand": {"string": "Nvidia"},
                "cudaComputeCapability": {"version": "8.0.0"},
                "driverVersion": {"version": "580.126.9"},
                "productName": {"string": product},
                "resource.kubernetes.io/pciBusID": {"string": f"0000:{i + 3:02x}:00.0"},
                "type": {"string": "gpu"},
                "uuid": {"string": f"GPU-{node_name}-{i:04d}"},
            },
            "capacity": {"memory": {"value": "80Gi"}},
        }
        for i in range(count)
    ]
    return {
        "apiVersion": f"{DRA_GROUP}/v1",
        "kind": "ResourceSlice",
        "metadata": _meta(
            f"{node_name}-gpu.nvidia.com-g{generation}",
            ownerReferences=[
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": node_name,
                    "uid": f"uid-{node_name}",
                    "controller": True,
                }
            ],
        ),
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def device_class(name: str, expression: str, extended: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expression}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {
        "apiVersion": f"{DRA_GROUP}/v1",
        "kind": "DeviceClass",
        "metadata": _meta(name),
        "spec": spec,
    }


def claim(
    name: str,
    namespace: str,
    device_class_name: str,
    created: str,
    allocated: bool,
    for_pod: str | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if allocated:
        status["allocation"] = {
            "devices": {
                "results": [
                    {
                        "request": "gpu",
                        "driver": "gpu.nvidia.com",
                        "pool": "dra-0",
                        "device": "gpu-0",
                    }
                ]
            }
        }
    if for_pod:
        status["reservedFor"] = [{"resource": "pods", "name": for_pod, "uid": f"uid-{for_pod}"}]
    return {
        "apiVersion": f"{DRA_GROUP}/v1",
        "kind": "ResourceClaim",
        "metadata": _meta(name, namespace, creationTimestamp=created),
        "spec": {
            "devices": {
                "requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": device_class_name, "count": 1}}
                ]
            }
        },
        "status": status,
    }


GPU_CLASS = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"


def sample_cluster() -> FakeCluster:
    """Every case at small scale: owner chains, phases, both-served node, pending claims."""
    rs = owner("apps/v1", "ReplicaSet", "chat-vllm-7d4b9c")
    objects: dict[str, list[dict[str, Any]]] = {
        "nodes": [
            node("gpu-a", 8, "NVIDIA-A100-SXM4-80GB"),
            node("gpu-b", 8, "NVIDIA-A100-SXM4-80GB"),
            node("gpu-both", 4, "NVIDIA-H100-80GB-HBM3"),
            node("dra-0"),
            node("dra-1"),
            node("cpu-0"),
        ],
        "pods": [
            pod("chat-vllm-7d4b9c-abcde", "ml-serving", {"nvidia.com/gpu": "1"}, rs, "gpu-a"),
            pod("chat-vllm-7d4b9c-fghij", "ml-serving", {"nvidia.com/gpu": "1"}, rs, "gpu-b"),
            pod(
                "chat-vllm-7d4b9c-klmno", "ml-serving", {"nvidia.com/gpu": "1"}, rs, None, "Pending"
            ),
            pod(
                "nightly-29000000-x1y2z",
                "ml-train",
                {"nvidia.com/gpu": "4"},
                owner("batch/v1", "Job", "nightly-29000000"),
                "gpu-a",
                init_gpus={"nvidia.com/gpu": "2"},
            ),
            pod(
                "old-nightly-28990000-aaaaa",
                "ml-train",
                {"nvidia.com/gpu": "4"},
                owner("batch/v1", "Job", "nightly-28990000"),
                "gpu-b",
                "Succeeded",
            ),
            pod(
                "bert-0",
                "ml-train",
                {"nvidia.com/gpu": "2"},
                owner("apps/v1", "StatefulSet", "bert"),
                "gpu-both",
            ),
            pod(
                "ray-head-abcde",
                "ray",
                {"nvidia.com/mig-1g.10gb": "1"},
                owner("ray.io/v1", "RayCluster", "llm"),
                "gpu-b",
            ),
            pod("debug", "default", {"amd.com/gpu": "1"}, None, None, "Pending"),
            pod("half", "default", {"nvidia.com/gpu": "0.5"}, None, None, "Pending"),
            pod("web-5f6d-abcde", "web", None, owner("apps/v1", "ReplicaSet", "web-5f6d"), "cpu-0"),
            pod(
                "orphan-rs-abcde",
                "ml-serving",
                {"nvidia.com/gpu": "1"},
                owner("apps/v1", "ReplicaSet", "gone-123"),
                "gpu-a",
            ),
        ],
        "replicasets": [
            workload(
                "apps/v1",
                "ReplicaSet",
                "chat-vllm-7d4b9c",
                "ml-serving",
                owner("apps/v1", "Deployment", "chat-vllm"),
            ),
            workload(
                "apps/v1", "ReplicaSet", "web-5f6d", "web", owner("apps/v1", "Deployment", "web")
            ),
        ],
        "deployments": [
            workload("apps/v1", "Deployment", "chat-vllm", "ml-serving"),
            workload("apps/v1", "Deployment", "web", "web"),
        ],
        "statefulsets": [workload("apps/v1", "StatefulSet", "bert", "ml-train")],
        "jobs": [
            workload(
                "batch/v1",
                "Job",
                "nightly-29000000",
                "ml-train",
                owner("batch/v1", "CronJob", "nightly"),
            ),
            workload(
                "batch/v1",
                "Job",
                "nightly-28990000",
                "ml-train",
                owner("batch/v1", "CronJob", "nightly"),
            ),
        ],
        "deviceclasses": [
            device_class("gpu.nvidia.com", GPU_CLASS, "nvidia.com/gpu"),
            device_class(
                "mig.nvidia.com",
                "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
            ),
        ],
        "resourceslices": [
            gpu_slice("dra-0", 8),
            gpu_slice("dra-1", 8, generation=1),
            gpu_slice("dra-1", 4, "NVIDIA H100 80GB HBM3", generation=2),  # the pool's newest
            gpu_slice("gpu-both", 4, "NVIDIA H100 80GB HBM3"),
        ],
        "resourceclaims": [
            claim(
                "train-gpu-abcde",
                "ml-train",
                "gpu.nvidia.com",
                "2026-11-01T10:00:00Z",
                True,
                "train-0",
            ),
            claim(
                "stuck-gpu-fghij",
                "ml-train",
                "gpu.nvidia.com",
                "2026-11-01T10:00:00Z",
                False,
                "stuck-0",
            ),
            claim("fresh-gpu-klmno", "ml-serving", "gpu.nvidia.com", "2999-01-01T00:00:00Z", False),
        ],
    }
    return FakeCluster(objects)


def large_cluster(pods: int = 5000, nodes: int = 500) -> FakeCluster:
    """The benchmark's cluster: GPU Deployments and Jobs spread over GPU and DRA nodes."""
    cluster = FakeCluster({r: [] for r in KINDS})
    o = cluster.objects
    half = nodes // 2
    for i in range(nodes):
        name = f"node-{i:04d}"
        o["nodes"].append(
            node(name, 8 if i < half else 0, "NVIDIA-A100-SXM4-80GB" if i < half else None)
        )
        if i >= half:
            o["resourceslices"].append(gpu_slice(name, 8))
    deployments = max(1, pods // 50)
    for d in range(deployments):
        ns = f"team-{d % 20:02d}"
        o["deployments"].append(workload("apps/v1", "Deployment", f"svc-{d}", ns))
        o["replicasets"].append(
            workload(
                "apps/v1",
                "ReplicaSet",
                f"svc-{d}-abc",
                ns,
                owner("apps/v1", "Deployment", f"svc-{d}"),
            )
        )
    for p in range(pods):
        d = p % deployments
        ns = f"team-{d % 20:02d}"
        gpus = {"nvidia.com/gpu": str(1 + p % 4)} if p % 5 else None
        o["pods"].append(
            pod(
                f"svc-{d}-abc-{p:05d}",
                ns,
                gpus,
                owner("apps/v1", "ReplicaSet", f"svc-{d}-abc"),
                f"node-{p % half:04d}",
            )
        )
    o["deviceclasses"].append(device_class("gpu.nvidia.com", GPU_CLASS, "nvidia.com/gpu"))
    for c in range(200):
        o["resourceclaims"].append(
            claim(
                f"claim-{c}",
                f"team-{c % 20:02d}",
                "gpu.nvidia.com",
                "2026-11-01T10:00:00Z",
                c % 10 != 0,
            )
        )
    return cluster
