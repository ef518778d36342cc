"""Cluster mode against a real API server: kube-apiserver 1.37 with etcd, the scheduler
and the controller manager (tests/helpers/control_plane.py), so lists are paged with
the server's own continue tokens, refusals come from its RBAC authorizer, expiry from
an etcd compaction, and the objects read are the ones its controllers made.

The control plane is shared with other tests: every assertion looks only at the
objects made here (namespaces and names that start with ``live``; the devices of a
product no other test uses). What a real server never does (hostile or broken
answers, a server without DRA or with only older versions) stays in test_cluster.py
with the stand-in server.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate import cluster
from dra_migrate.simulate import control_plane as cp
from tests.conftest import REPO
from tests.helpers.cli_runner import Result, invoke
from tests.helpers.control_plane import READER, api, create, wait_for

DOCS = REPO / "docs" / "cluster.md"
PRODUCT = "LIVE-TEST H100 80GB"  # the devices of this module's slices, and no other test's
OLD_PRODUCT = "LIVE-TEST A100 80GB"
CLASS = "live.gpu.nvidia.com"
GPU_CLASS = f"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].productName == '{PRODUCT}'"
MANY = 60  # pods of the paged namespace


def run(*args: str) -> Result:
    result = invoke(list(args))
    assert result.exception is None, result.output
    assert "Traceback" not in result.output
    return result


def inventory(kubeconfig: Path, *extra: str) -> dict[str, Any]:
    result = run(
        "inventory", "--cluster", "--kubeconfig", str(kubeconfig), "--format", "json", *extra
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def ours(data: dict[str, Any]) -> dict[str, Any]:
    """The inventory's rows of this module's objects, without ages and sources."""
    return {
        "workloads": [w for w in data["workloads"] if w["namespace"].startswith("live-")],
        "nodes": [n for n in data["nodes"] if n["name"].startswith("live-")],
        "devices": [d for d in data["devices"] if d["product"].startswith("LIVE-TEST")],
        "deviceClasses": [c for c in data["deviceClasses"] if c["name"] == CLASS],
        "pendingClaims": [
            {k: v for k, v in c.items() if k != "ageSeconds"}
            for c in data["pendingClaims"]
            if c["namespace"].startswith("live-")
        ],
    }


# --- the cluster -------------------------------------------------------------------------------


def _node(name: str, gpus: int = 0, product: str | None = None) -> dict[str, Any]:
    capacity = {"cpu": "96", "memory": "1056Gi", "pods": "110"}
    labels = {"kubernetes.io/hostname": name, "live": "yes"}
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
    if product:
        labels["nvidia.com/gpu.product"] = product
    return {
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def _container(gpus: dict[str, str] | None = None, claims: tuple[str, ...] = ()) -> dict[str, Any]:
    resources: dict[str, Any] = {"limits": {"cpu": "1", **(gpus or {})}}
    if claims:
        resources["claims"] = [{"name": c} for c in claims]
    return {"name": "main", "image": "registry.k8s.io/pause:3.10", "resources": resources}


def _template(app: str, gpus: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {
            "containers": [_container(gpus)],
            "nodeSelector": {"live": "yes"},
            **spec,
        },
    }


def _slice(node_name: str, generation: int, count: int, product: str) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{node_name}-gpu.nvidia.com-g{generation}"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {"productName": {"string": product}, "type": {"string": "gpu"}},
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for i in range(count)
            ],
        },
    }


def _namespace(plane: cp.ControlPlane, name: str) -> None:
    create(plane, "/api/v1/namespaces", {"metadata": {"name": name}})
    wait_for(
        f"the default ServiceAccount of {name}",
        lambda: api(plane, "GET", f"/api/v1/namespaces/{name}/serviceaccounts/default")[0] == 200,
    )


def _pods(plane: cp.ControlPlane, namespace: str) -> list[dict[str, Any]]:
    return api(plane, "GET", f"/api/v1/namespaces/{namespace}/pods")[1]["items"]


@pytest.fixture(scope="module")
def live(control_plane: cp.ControlPlane) -> cp.ControlPlane:
    """Nodes, slices, a class and workloads made through the API; the controllers
    make their pods and claims, the scheduler binds what fits."""
    plane = control_plane
    for name in ("live-serving", "live-train", "live-ray", "live-many"):
        _namespace(plane, name)
    create(plane, "/api/v1/nodes", _node("live-gpu-a", 8, "NVIDIA-A100-SXM4-80GB"))
    create(plane, "/api/v1/nodes", _node("live-gpu-b", 8, "NVIDIA-A100-SXM4-80GB"))
    create(plane, "/api/v1/nodes", _node("live-dra-0"))
    create(plane, "/api/v1/nodes", _node("live-cpu-0"))
    create(plane, "/api/v1/nodes", _node("live-dra-1"))
    # a node whose GPUs both the device plugin and the DRA driver publish
    create(plane, "/api/v1/nodes", _node("live-gpu-both", 4, "NVIDIA-H100-80GB-HBM3"))
    for node_name, generation, count, product in (
        ("live-dra-0", 1, 4, PRODUCT),
        ("live-dra-1", 1, 8, OLD_PRODUCT),  # the pool's older generation: not counted
        ("live-dra-1", 2, 4, PRODUCT),
        ("live-gpu-both", 1, 4, PRODUCT),
    ):
        create(
            plane,
            "/apis/resource.k8s.io/v1/resourceslices",
            _slice(node_name, generation, count, product),
        )
    create(
        plane,
        "/apis/resource.k8s.io/v1/deviceclasses",
        {
            "metadata": {"name": CLASS},
            "spec": {
                "selectors": [{"cel": {"expression": GPU_CLASS}}],
                "extendedResourceName": "live.example.com/gpu",
            },
        },
    )
    # Deployment -> ReplicaSet -> 3 pods, one GPU each, on the device-plugin nodes
    create(
        plane,
        "/apis/apps/v1/namespaces/live-serving/deployments",
        {
            "metadata": {"name": "chat"},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "chat"}},
                "template": _template("chat", {"nvidia.com/gpu": "1"}),
            },
        },
    )
    # CronJob -> Job -> 2 pods (the Job made by hand, owned by the CronJob, as the
    # CronJob controller would at its schedule)
    job_template = _template("nightly", {"nvidia.com/gpu": "4"}, restartPolicy="Never")
    warmup = {**_container({"nvidia.com/gpu": "2"}), "name": "warmup"}
    job_template["spec"]["initContainers"] = [warmup]
    cronjob = create(
        plane,
        "/apis/batch/v1/namespaces/live-train/cronjobs",
        {
            "metadata": {"name": "nightly"},
            "spec": {
                "schedule": "0 0 1 1 *",
                "suspend": True,
                "jobTemplate": {"spec": {"template": job_template}},
            },
        },
    )
    create(
        plane,
        "/apis/batch/v1/namespaces/live-train/jobs",
        {
            "metadata": {
                "name": "nightly-1",
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "CronJob",
                        "name": "nightly",
                        "uid": cronjob["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {"parallelism": 2, "completions": 2, "template": job_template},
        },
    )
    # StatefulSet -> 1 pod with 2 GPUs
    create(
        plane,
        "/apis/apps/v1/namespaces/live-train/statefulsets",
        {
            "metadata": {"name": "bert"},
            "spec": {
                "serviceName": "bert",
                "replicas": 1,
                "selector": {"matchLabels": {"app": "bert"}},
                "template": _template("bert", {"nvidia.com/gpu": "2"}),
            },
        },
    )
    # DRA: a pod whose claim is allocated, and one whose claim cannot be (8 of 4 devices)
    for name, count in (("one", 1), ("eight", 8)):
        create(
            plane,
            "/apis/resource.k8s.io/v1/namespaces/live-train/resourceclaimtemplates",
            {
                "metadata": {"name": name},
                "spec": {
                    "spec": {
                        "devices": {
                            "requests": [
                                {
                                    "name": "gpu",
                                    "exactly": {"deviceClassName": CLASS, "count": count},
                                }
                            ]
                        }
                    }
                },
            },
        )
        create(
            plane,
            "/api/v1/namespaces/live-train/pods",
            {
                "metadata": {"name": f"dra-{name}"},
                "spec": {
                    "containers": [_container(claims=("gpu",))],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": name}],
                },
            },
        )
    # a custom resource's pod: RayCluster of ray.io (a CRD), the pod owned by it
    create(
        plane,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        {
            "metadata": {"name": "rayclusters.ray.io"},
            "spec": {
                "group": "ray.io",
                "names": {"kind": "RayCluster", "plural": "rayclusters"},
                "scope": "Namespaced",
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            }
                        },
                    }
                ],
            },
        },
    )
    ray = wait_for(
        "the RayCluster API served",
        lambda: (lambda status, data: data if status == 201 else None)(
            *api(
                plane,
                "POST",
                "/apis/ray.io/v1/namespaces/live-ray/rayclusters",
                {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "llm"}},
            )
        ),
    )
    create(
        plane,
        "/api/v1/namespaces/live-ray/pods",
        {
            "metadata": {
                "name": "llm-head",
                "ownerReferences": [
                    {
                        "apiVersion": "ray.io/v1",
                        "kind": "RayCluster",
                        "name": "llm",
                        "uid": ray["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "containers": [_container({"nvidia.com/gpu": "1"})],
                "nodeSelector": {"live": "yes"},
            },
        },
    )
    # many bare pods, never scheduled (no node has their label), for paging
    for i in range(MANY):
        create(
            plane,
            "/api/v1/namespaces/live-many/pods",
            {
                "metadata": {"name": f"p-{i:03d}"},
                "spec": {
                    "containers": [_container({"nvidia.com/gpu": "1"})],
                    "nodeSelector": {"nowhere": "true"},
                },
            },
        )

    def settled() -> bool:
        serving = [p for p in _pods(plane, "live-serving") if p["spec"].get("nodeName")]
        train = _pods(plane, "live-train")
        bound = {p["metadata"]["name"] for p in train if p["spec"].get("nodeName")}
        refused = any(
            c.get("reason") == "Unschedulable"
            for p in train
            if p["metadata"]["name"] == "dra-eight"
            for c in p.get("status", {}).get("conditions", [])
        )
        return (
            len(serving) == 3
            and {"bert-0", "dra-one"} <= bound
            and len([n for n in bound if n.startswith("nightly-1-")]) == 2
            and refused
            and bool(_pods(plane, "live-ray")[0]["spec"].get("nodeName"))
        )

    wait_for("the controllers' pods placed", settled, timeout=90)
    # one of the Job's pods ends, as its kubelet would report: it holds no GPU then
    (done, *_rest) = sorted(
        p["metadata"]["name"]
        for p in _pods(plane, "live-train")
        if p["metadata"]["name"].startswith("nightly-1-")
    )
    status, answer = api(
        plane,
        "PATCH",
        f"/api/v1/namespaces/live-train/pods/{done}/status",
        {"status": {"phase": "Succeeded"}},
        content_type="application/merge-patch+json",
    )
    assert status == 200, answer
    return plane


# --- the inventory of real objects ---------------------------------------------------------------


def test_inventory_of_what_the_controllers_made(live: cp.ControlPlane) -> None:
    data = inventory(live.kubeconfig, "-A", "--pending-after", "0")
    mine = ours(data["cluster"])
    workloads = {(w["namespace"], w["kind"], w["name"]): w for w in mine["workloads"]}
    assert set(workloads) == {
        ("live-serving", "Deployment", "chat"),  # Pod -> ReplicaSet -> Deployment
        ("live-train", "CronJob", "nightly"),  # Pod -> Job -> CronJob
        ("live-train", "StatefulSet", "bert"),
        ("live-ray", "RayCluster", "llm"),  # a custom resource stops the chain
        ("live-many", "Pod", "p-000"),
        *(("live-many", "Pod", f"p-{i:03d}") for i in range(1, MANY)),
    }
    chat = workloads["live-serving", "Deployment", "chat"]
    assert chat["pods"] == 3 and chat["phases"] == {"Pending": 3}  # bound, never run
    assert chat["gpus"] == {"nvidia.com/gpu": 3}
    assert set(chat["nodes"]) <= {"live-gpu-a", "live-gpu-b", "live-gpu-both"} and chat["nodes"]
    nightly = workloads["live-train", "CronJob", "nightly"]
    assert nightly["pods"] == 2 and nightly["phases"] == {"Pending": 1, "Succeeded": 1}
    # the Succeeded pod holds nothing; the init container's 2 fit inside the app's 4
    assert nightly["gpus"] == {"nvidia.com/gpu": 4}
    assert {(r["container"], r["role"]) for r in nightly["requests"]} == {
        ("main", "app"),
        ("warmup", "init"),
    }
    assert workloads["live-ray", "RayCluster", "llm"]["apiVersion"] == "ray.io/v1"
    # dra-one and dra-eight ask through claims, not for a device plugin's resource:
    # not GPU workloads to migrate; dra-eight's claim is a pending one (below)
    nodes = {n["name"]: n for n in mine["nodes"]}
    # live-cpu-0 has no GPU of either kind
    assert set(nodes) == {"live-gpu-a", "live-gpu-b", "live-gpu-both", "live-dra-0", "live-dra-1"}
    assert nodes["live-gpu-a"]["devicePlugin"] and nodes["live-gpu-a"]["capacity"] == {
        "nvidia.com/gpu": "8"
    }
    assert nodes["live-gpu-a"]["product"] == "NVIDIA-A100-SXM4-80GB"
    assert nodes["live-dra-0"]["draDrivers"] == ["gpu.nvidia.com"]
    assert nodes["live-dra-0"]["draDevices"] == 4
    assert nodes["live-dra-1"]["draDevices"] == 4  # the newest generation of its pool
    assert nodes["live-gpu-both"]["servedTwice"] == ["nvidia.com/gpu"]
    assert mine["devices"] == [
        {
            "driver": "gpu.nvidia.com",
            "product": PRODUCT,
            "devices": 12,
            "nodes": 3,
            "notNodeLocal": 0,
        }
    ]
    (klass,) = mine["deviceClasses"]
    assert klass["extendedResourceName"] == "live.example.com/gpu"
    # the claim of dra-eight: made by the resource claim controller, never allocated
    (pending,) = mine["pendingClaims"]
    assert pending["namespace"] == "live-train" and pending["name"].startswith("dra-eight-gpu-")
    assert pending["reservedFor"] == []
    messages = {(f["code"], f["message"].split(" ")[1]) for f in data["findings"]}
    assert ("DRA607", "live-gpu-both") in messages
    assert ("DRA608", f"live-train/{pending['name']}") in messages


def test_a_kubectl_dump_gives_the_same_inventory(
    live: cp.ControlPlane, tools: Path, tmp_path: Path
) -> None:
    """The same objects read live and from ``kubectl get -o json`` (real kubectl)."""
    kinds = "pods,nodes,replicasets,deployments,statefulsets,jobs,deviceclasses,resourceslices,resourceclaims"
    dump = subprocess.run(
        [
            str(tools / "kubectl"),
            "--kubeconfig",
            str(live.kubeconfig),
            "get",
            kinds,
            "-A",
            "-o",
            "json",
        ],
        capture_output=True,
        check=True,
        timeout=60,
    )
    path = tmp_path / "cluster.json"
    path.write_bytes(dump.stdout)
    offline = run("inventory", str(path), "--format", "json", "--pending-after", "0")
    assert offline.exit_code == 0, offline.output
    live_data = inventory(live.kubeconfig, "-A", "--pending-after", "0")
    assert ours(json.loads(offline.stdout)["cluster"]) == ours(live_data["cluster"])


def test_namespace_from_the_context(live: cp.ControlPlane, tmp_path: Path) -> None:
    config = json.loads(live.kubeconfig.read_text())
    config["contexts"][0]["context"]["namespace"] = "live-train"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps(config))
    data = inventory(kubeconfig)["cluster"]
    assert data["namespace"] == "live-train"
    assert {w["namespace"] for w in data["workloads"]} == {"live-train"}


# --- paging with the server's continue tokens --------------------------------------------------


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, dict[str, str], int]]]:
    """Every request the live reader makes: (path, query, status)."""
    calls: list[tuple[str, dict[str, str], int]] = []
    original = cluster.LiveReader._request

    def request(self: Any, asked: str, path: str, query: dict[str, str]) -> Any:
        answer = original(self, asked, path, query)
        calls.append((path, dict(query), answer[0]))
        return answer

    monkeypatch.setattr(cluster.LiveReader, "_request", request)
    yield calls


def test_lists_are_paged_with_the_servers_tokens(
    live: cp.ControlPlane, recorded: list[tuple[str, dict[str, str], int]]
) -> None:
    reader = cluster.LiveReader(cluster.Connection(str(live.kubeconfig), page_size=7))
    try:
        names = [p["metadata"]["name"] for p in reader.list("pods", "live-many")]
    finally:
        reader.close()
    assert names == [f"p-{i:03d}" for i in range(MANY)]  # each once, in the server's order
    pages = [q for path, q, _status in recorded if path == "/api/v1/namespaces/live-many/pods"]
    assert len(pages) == -(-MANY // 7)
    assert all(q["limit"] == "7" for q in pages)
    assert "continue" not in pages[0]
    tokens = [q["continue"] for q in pages[1:]]
    assert len(set(tokens)) == len(tokens)  # the server's opaque tokens, each new


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(page_size=st.integers(min_value=1, max_value=25))
def test_any_page_size_gives_the_same_inventory(live: cp.ControlPlane, page_size: int) -> None:
    whole = ours(inventory(live.kubeconfig, "-A", "--pending-after", "0")["cluster"])
    paged = ours(
        inventory(live.kubeconfig, "-A", "--pending-after", "0", "--page-size", str(page_size))[
            "cluster"
        ]
    )
    assert paged == whole


def test_an_expired_continue_token(live: cp.ControlPlane, monkeypatch: pytest.MonkeyPatch) -> None:
    """etcd compacted while a list is paged (as kube-apiserver compacts every 5 minutes):
    the next page is 410 Gone, and the run says why in one line."""
    original = cluster.LiveReader._request
    compacted: list[str] = []

    def request(self: Any, asked: str, path: str, query: dict[str, str]) -> Any:
        if "continue" in query and not compacted and path.endswith("/live-many/pods"):
            live.compact_etcd()
            compacted.append(query["continue"])
            # the API server's watch cache drops older snapshots within 15 seconds
            wait_for(
                "the continue token expired",
                lambda: (
                    api(
                        live,
                        "GET",
                        f"/api/v1/namespaces/live-many/pods?limit=7&continue={quote(query['continue'])}",
                    )[0]
                    == 410
                ),
                timeout=40,
            )
        return original(self, asked, path, query)

    monkeypatch.setattr(cluster.LiveReader, "_request", request)
    result = run(
        "inventory", "--cluster", "--kubeconfig", str(live.kubeconfig), "-n", "live-many",
        "--page-size", "7",
    )  # fmt: skip
    assert compacted
    assert result.exit_code == 123, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("dra-migrate: DRA605 ")
    assert "list pods in namespace live-many" in line and "410" in line
    assert "compact" in line  # why: older versions were compacted away
    assert "--page-size" in line


# --- RBAC: the documented role, refusals, credentials --------------------------------------------


def _docs_objects() -> list[dict[str, Any]]:
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    return [d for b in blocks for d in yaml.safe_load_all(b) if isinstance(d, dict)]


_PATHS = {
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "ServiceAccount": "/api/v1/namespaces/{namespace}/serviceaccounts",
    "Namespace": "/api/v1/namespaces",
}


def _allowed(plane: cp.ControlPlane, token: str, attributes: dict[str, str]) -> bool:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    return bool(api(plane, "POST", path, review, token=token)[1]["status"].get("allowed"))


@pytest.fixture(scope="module")
def docs_account(live: cp.ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs/cluster.md's ClusterRole, ServiceAccount and binding, applied as written; a
    kubeconfig with a token of that ServiceAccount (TokenRequest)."""
    objects = _docs_objects()
    namespaces = {o["metadata"].get("namespace") for o in objects} - {None}
    for ns in namespaces:
        _namespace(live, str(ns))
    for obj in objects:
        path = _PATHS[obj["kind"]].format(namespace=obj["metadata"].get("namespace"))
        create(live, path, obj)
    (account,) = [o for o in objects if o["kind"] == "ServiceAccount"]
    ns, name = account["metadata"]["namespace"], account["metadata"]["name"]
    token = create(
        live,
        f"/api/v1/namespaces/{ns}/serviceaccounts/{name}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )["status"]["token"]
    wait_for(
        "the role bound",
        lambda: _allowed(live, token, {"verb": "list", "resource": "pods"}),
    )
    config = json.loads(live.kubeconfig.read_text())
    config["users"][0]["user"]["token"] = token
    path = tmp_path_factory.mktemp("docs-account") / "kubeconfig"
    path.write_text(json.dumps(config))
    return path


# the class in the input too: validate --cluster reads the cluster's slices, not its classes
RCT = f"""\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: {CLASS}
spec:
  selectors:
  - cel:
      expression: "{GPU_CLASS}"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: h100
  namespace: live-train
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: {CLASS}
          count: 2
          selectors:
          - cel:
              expression: device.attributes['gpu.nvidia.com'].productName == '{PRODUCT}'
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: b200
  namespace: live-train
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: {CLASS}
          selectors:
          - cel:
              expression: device.attributes['gpu.nvidia.com'].productName.startsWith('LIVE-TEST B200')
"""


def test_the_documented_role_reads_everything(
    live: cp.ControlPlane, docs_account: Path, tools: Path, tmp_path: Path
) -> None:
    """inventory, validate and report --cluster with only docs/cluster.md's ClusterRole,
    as its ServiceAccount: no refusal, and what the admin reads."""
    as_reader = ours(inventory(docs_account, "-A", "--pending-after", "0")["cluster"])
    assert as_reader == ours(inventory(live.kubeconfig, "-A", "--pending-after", "0")["cluster"])
    manifest = tmp_path / "rct.yaml"
    manifest.write_text(RCT)
    result = run("validate", "--cluster", "--kubeconfig", str(docs_account), str(manifest))
    assert result.exit_code == 1, result.output  # b200 matches nothing
    assert re.search(r"rct\.yaml:\d+:\d+: DRA343 .*h100.*live-dra-0 4", result.stdout), (
        result.stdout
    )
    assert re.search(r"rct\.yaml:\d+:\d+: DRA340 .*b200", result.stdout), result.stdout
    # the same verdicts as --resource-slices on kubectl's dump of the live slices
    slices = tmp_path / "slices.json"
    slices.write_bytes(
        subprocess.run(
            [
                str(tools / "kubectl"),
                "--kubeconfig",
                str(live.kubeconfig),
                "get",
                "resourceslices",
                "-o",
                "json",
            ],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    )
    offline = run("validate", "--resource-slices", str(slices), str(manifest))
    assert [line for line in result.stdout.splitlines() if "rct.yaml" in line] == [
        line for line in offline.stdout.splitlines() if "rct.yaml" in line
    ]
    report = run(
        "report", "--cluster", "--kubeconfig", str(docs_account), "--format", "json",
        str(REPO / "examples"),
    )  # fmt: skip
    assert report.exit_code in (0, 1), report.output
    nodes = {
        n["name"]: n["allocatable"] for n in json.loads(report.stdout)["plan"]["live"]["nodes"]
    }
    assert nodes["live-gpu-a"] == {"nvidia.com/gpu": 8}
    assert "live-cpu-0" in nodes and nodes["live-cpu-0"] == {}


def test_in_cluster_service_account(
    live: cp.ControlPlane, docs_account: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No kubeconfig, in a pod: the service account's token and CA files, over TLS."""
    from kubernetes.config import incluster_config

    token = json.loads(docs_account.read_text())["users"][0]["user"]["token"]
    (tmp_path / "token").write_text(token)
    host, port = live.server.removeprefix("https://").split(":")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(tmp_path / "token"))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(live.ca_file))
    result = run("inventory", "--cluster", "-n", "live-train", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)["cluster"]
    assert data["source"].startswith("in-cluster service account (https://127.0.0.1:")
    assert ("StatefulSet", "bert") in {(w["kind"], w["name"]) for w in data["workloads"]}
    assert token not in result.output


def _one_line(result: Result, code: str, status: int) -> str:
    assert result.exit_code == status, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dra-migrate: {code} "), result.stderr
    assert result.stdout == ""
    return lines[0]


@pytest.mark.parametrize(
    ("dropped", "args", "permission"),
    [
        (
            ("resource.k8s.io", "resourceclaims"),
            ["inventory", "-A"],
            "list on resourceclaims in API group resource.k8s.io",
        ),
        (("", "pods"), ["inventory", "-A"], "list on pods in API group core"),
        (
            ("apps", "replicasets"),
            ["inventory", "-n", "live-serving"],
            "get on replicasets in API group apps in namespace live-serving",
        ),
        (
            ("resource.k8s.io", "resourceslices"),
            ["validate", "{manifest}"],
            "list on resourceslices in API group resource.k8s.io",
        ),
        (("", "nodes"), ["report", str(REPO / "examples")], "list on nodes in API group core"),
    ],
)
def test_a_refusal_names_the_missing_permission(
    live: cp.ControlPlane,
    tmp_path: Path,
    dropped: tuple[str, str],
    args: list[str],
    permission: str,
) -> None:
    """The documented role without one resource, bound to a user of the token file: the
    server's RBAC refuses, and the one line says which permission is missing."""
    (role,) = [o for o in _docs_objects() if o["kind"] == "ClusterRole"]
    group, resource = dropped
    rules = []
    for rule in role["rules"]:
        if group in rule.get("apiGroups", []) and resource in rule.get("resources", []):
            rule = {**rule, "resources": [r for r in rule["resources"] if r != resource]}
        rules.append(rule)
    name = "live-limited"
    limited = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": rules,
    }
    status, _ = api(live, "PUT", f"{_PATHS['ClusterRole']}/{name}", limited)
    assert status in (200, 201)
    binding = {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": READER}],
    }
    api(live, "POST", _PATHS["ClusterRoleBinding"], binding)  # 409 once it exists
    token = live.tokens[READER]
    verb = "get" if resource == "replicasets" else "list"

    def in_force() -> bool:  # RBAC's informers have the new role: every grant as it says
        return all(
            _allowed(live, token, {"verb": v, "group": g, "resource": r})
            == ((g, r) != (group, resource))
            for g, r, v in cluster.permissions()
        )

    wait_for("the role in force", in_force)
    manifest = tmp_path / "rct.yaml"
    manifest.write_text(RCT)
    command, *rest = [a.format(manifest=manifest) for a in args]
    kubeconfig = live.kubeconfig_for(READER)
    line = _one_line(run(command, "--cluster", "--kubeconfig", str(kubeconfig), *rest), "DRA604", 2)
    assert f"missing permission: {permission}" in line
    assert f'User "{READER}" cannot {verb} resource "{resource}"' in line  # the server's words
    assert "docs/cluster.md" in line
    assert token not in line


@pytest.mark.parametrize("command", ["inventory", "validate"])
def test_a_rejected_token(live: cp.ControlPlane, tmp_path: Path, command: str) -> None:
    config = json.loads(live.kubeconfig.read_text())
    config["users"][0]["user"]["token"] = "not-a-token-the-server-knows"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps(config))
    args = [command, "--cluster", "--kubeconfig", str(kubeconfig)]
    if command == "validate":
        (tmp_path / "rct.yaml").write_text(RCT)
        args.append(str(tmp_path / "rct.yaml"))
    line = _one_line(run(*args), "DRA603", 2)
    assert "401" in line and "not-a-token" not in line
