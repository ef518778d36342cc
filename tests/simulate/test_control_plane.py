"""The real control plane of ``dra_migrate/simulate/control_plane.py``: what it runs
(release, admission plugins, controllers, the scheduler with DRA, no kubelet), how it
fails (the failing component's log), and that its processes never outlive it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dra_migrate.simulate import control_plane as cp
from tests.conftest import REPO
from tests.helpers.control_plane import api, binaries, create, wait_for

DRIVER = "gpu.example.com"


def test_missing_binaries_say_how_to_build_them(tmp_path: Path) -> None:
    (tmp_path / "etcd").write_text("")  # present but not executable
    with pytest.raises(cp.MissingControlPlane) as raised:
        cp.find_binaries(tmp_path)
    message = str(raised.value)
    assert cp.BUILD_COMMAND in message and str(tmp_path) in message
    assert "etcd, kube-apiserver, kube-scheduler, kube-controller-manager" in message


def test_the_release_gates_pinned_are_beta_and_on() -> None:
    gates = cp.release_gates()
    assert {"DRAConsumableCapacity", "DRAPartitionableDevices"} <= set(gates)
    assert all(gates.values())
    # GA gates (on, some locked) are never set: a GA gate set is a warning in every log
    assert not {"DRAExtendedResource", "DRAPrioritizedList", "DRAAdminAccess"} & set(gates)


# --- the running control plane -------------------------------------------------------------


def node(name: str, gpus: int = 0, labels: dict[str, str] | None = None) -> dict[str, Any]:
    capacity = {"cpu": "16", "memory": "64Gi", "pods": "110"}
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def pod(name: str, resources: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10", **resources}],
            **spec,
        },
    }


def namespace(plane: cp.ControlPlane, name: str) -> str:
    create(plane, "/api/v1/namespaces", {"metadata": {"name": name}})
    wait_for(
        f"the default ServiceAccount of {name}",
        lambda: api(plane, "GET", f"/api/v1/namespaces/{name}/serviceaccounts/default")[0] == 200,
    )
    return name


def bound(plane: cp.ControlPlane, ns: str, name: str) -> dict[str, Any] | None:
    _status, data = api(plane, "GET", f"/api/v1/namespaces/{ns}/pods/{name}")
    return data if data.get("spec", {}).get("nodeName") else None


def test_release_and_apis(control_plane: cp.ControlPlane) -> None:
    assert control_plane.version == cp.KUBERNETES_VERSION
    _status, group = api(control_plane, "GET", "/apis/resource.k8s.io")
    assert group["preferredVersion"]["version"] == "v1"
    # no kubelet: no Node exists until one is created through the API
    _status, nodes = api(control_plane, "GET", "/api/v1/nodes")
    assert all(not n["metadata"]["name"].startswith("kubelet") for n in nodes["items"])


def test_admission_and_scheduler_place_a_gpu_pod(control_plane: cp.ControlPlane) -> None:
    """ExtendedResourceToleration adds the GPU toleration, so the pod lands on the
    tainted GPU node; the scheduler binds it and nothing runs it."""
    plane = control_plane
    ns = namespace(plane, "admission")
    gpu = node("adm-gpu", gpus=4)
    gpu["spec"] = {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}
    create(plane, "/api/v1/nodes", gpu)
    create(plane, "/api/v1/nodes", node("adm-cpu"))
    created = create(
        plane,
        f"/api/v1/namespaces/{ns}/pods",
        pod(
            "trainer",
            {"resources": {"limits": {"nvidia.com/gpu": "2"}}},
            nodeSelector={"kubernetes.io/hostname": "adm-gpu"},
        ),
    )
    tolerations = {(t.get("key"), t.get("effect")) for t in created["spec"]["tolerations"]}
    assert ("nvidia.com/gpu", "NoSchedule") in tolerations  # ExtendedResourceToleration
    assert ("node.kubernetes.io/not-ready", "NoExecute") in tolerations  # DefaultTolerationSeconds
    placed = wait_for("the pod bound", lambda: bound(plane, ns, "trainer"))
    assert placed["spec"]["nodeName"] == "adm-gpu"
    assert placed["status"].get("phase") == "Pending"  # bound, never run
    # the node was created without the not-ready taint TaintNodesByCondition would add
    _status, stored = api(plane, "GET", "/api/v1/nodes/adm-cpu")
    assert not stored["spec"].get("taints")


def test_controllers_and_dra_allocation(control_plane: cp.ControlPlane) -> None:
    """A Deployment's pods come from the ReplicaSet controller, their claims from the
    resource claim controller, their devices from the scheduler's DynamicResources
    plugin, on a ResourceSlice published through the API."""
    plane = control_plane
    ns = namespace(plane, "dra")
    create(plane, "/api/v1/nodes", node("dra-node"))
    create(
        plane,
        "/apis/resource.k8s.io/v1/resourceslices",
        {
            "metadata": {"name": "dra-node-gpus"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "dra-node",
                "pool": {"name": "dra-node", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {"name": f"gpu-{i}", "attributes": {"productName": {"string": "H100"}}}
                    for i in range(2)
                ],
            },
        },
    )
    create(
        plane,
        "/apis/resource.k8s.io/v1/deviceclasses",
        {
            "metadata": {"name": DRIVER},
            "spec": {
                "selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}],
                "extendedResourceName": "example.com/gpu",
            },
        },
    )
    create(
        plane,
        f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaimtemplates",
        {
            "metadata": {"name": "one-gpu"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]
                    }
                }
            },
        },
    )
    template = pod(
        "x",
        {"resources": {"claims": [{"name": "gpu"}]}},
        resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
    )
    create(
        plane,
        f"/apis/apps/v1/namespaces/{ns}/deployments",
        {
            "metadata": {"name": "serve"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "serve"}},
                "template": {"metadata": {"labels": {"app": "serve"}}, "spec": template["spec"]},
            },
        },
    )

    def pods_bound() -> list[dict[str, Any]] | None:
        _status, pods = api(plane, "GET", f"/api/v1/namespaces/{ns}/pods?labelSelector=app%3Dserve")
        items = pods["items"]
        return items if len(items) == 2 and all(p["spec"].get("nodeName") for p in items) else None

    pods = wait_for("both replicas bound", pods_bound)
    assert {p["spec"]["nodeName"] for p in pods} == {"dra-node"}
    _status, claims = api(plane, "GET", f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims")
    devices = sorted(
        r["device"]
        for c in claims["items"]
        for r in c["status"]["allocation"]["devices"]["results"]
    )
    assert devices == ["gpu-0", "gpu-1"]
    # a third replica finds no device left: the scheduler's own reason
    api(
        plane,
        "PATCH",
        f"/apis/apps/v1/namespaces/{ns}/deployments/serve",
        {"spec": {"replicas": 3}},
        content_type="application/merge-patch+json",
    )

    def unschedulable() -> str:
        _status, pods = api(plane, "GET", f"/api/v1/namespaces/{ns}/pods?labelSelector=app%3Dserve")
        for p in pods["items"]:
            for condition in p.get("status", {}).get("conditions", []):
                if condition.get("reason") == "Unschedulable":
                    return str(condition.get("message", ""))
        return ""

    assert "cannot allocate all claims" in wait_for("the third replica refused", unschedulable)

    # the bridge: example.com/gpu served by the DeviceClass's extendedResourceName
    create(
        plane,
        f"/api/v1/namespaces/{ns}/pods",
        pod("bridged", {"resources": {"limits": {"example.com/gpu": "1"}}}),
    )
    assert "cannot allocate" in wait_for(
        "the bridged pod refused (both devices taken)",
        lambda: next(
            (
                c.get("message", "")
                for c in api(plane, "GET", f"/api/v1/namespaces/{ns}/pods/bridged")[1]
                .get("status", {})
                .get("conditions", [])
                if c.get("reason") == "Unschedulable"
            ),
            "",
        ),
    )


# --- failures and processes ------------------------------------------------------------------


def _group_gone(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    return False


def _running_in(folder: Path) -> list[int]:
    """Processes whose command line names ``folder`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(folder).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.control_plane
def test_a_component_that_fails_says_why_with_its_log(tmp_path: Path) -> None:
    found = binaries()
    before = set(cp._LIVE)
    with pytest.raises(cp.ControlPlaneError) as raised:
        cp.start(found, tmp_path / "cp", feature_gates={"NoSuchGate": True}, timeout=60)
    message = str(raised.value)
    assert message.startswith("kube-apiserver exited with status")
    assert "kube-apiserver.log" in message and "NoSuchGate" in message  # its log's tail
    assert "etcd.log" not in message  # only the failing component's log
    assert before == cp._LIVE
    assert not _running_in(tmp_path / "cp")  # etcd, started first, was stopped


CHILD = """
import sys, time
from pathlib import Path
from dra_migrate.simulate import control_plane as cp
plane = cp.start(cp.find_binaries(Path(sys.argv[1])), Path(sys.argv[2]))
print(plane._group, flush=True)
time.sleep(600)
"""


@pytest.mark.control_plane
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_never_left_behind(tmp_path: Path, sig: int) -> None:
    """The parent ended by a signal it handles (SIGTERM, SIGINT) or cannot (SIGKILL):
    the four processes end with it."""
    found = binaries()
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CHILD), str(found.folder), str(tmp_path / "cp")],
        stdout=subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    group = 0
    try:
        assert child.stdout is not None
        group = int(child.stdout.readline())
        assert not _group_gone(group)
        child.send_signal(sig)
        child.wait(30)
        wait_for("the control plane's processes gone", lambda: _group_gone(group), timeout=30)
        if sig != signal.SIGKILL:
            # stopped in order by the handler, not killed with the parent: the API
            # server shut down gracefully and said so
            log = (tmp_path / "cp" / "logs" / "kube-apiserver.log").read_text()
            assert "Shutting down" in log
    finally:
        child.kill()
        child.wait()
        if group and not _group_gone(group):  # the test failed: leave nothing behind
            os.killpg(group, signal.SIGKILL)
