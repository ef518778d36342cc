"""Stage 2 of the plan for a shared fleet: the pools' DRA driver settings, the GPU
Operator's path and what reads the device plugin's view; DRA540 when the model was
assumed, DRA541 when a bridge would serve a shared name with whole GPUs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES
from tests.helpers.cli_runner import invoke

CASES = FIXTURES / "convert"


def _report(folder: Path, *args: str) -> dict[str, Any]:
    old = os.getcwd()
    os.chdir(folder)
    try:
        result = invoke(["report", "--format", "json", *args, "."])
    finally:
        os.chdir(old)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _sharing(data: dict[str, Any]) -> list[dict[str, str]]:
    needs = data["plan"]["stages"]["prerequisites"]["requirements"]
    return [n for n in needs if n["topic"] == "GPU sharing"]


def test_stage_2_gives_each_pool_its_driver_settings(tmp_path: Path) -> None:
    shutil.copytree(CASES / "sharing-time-slicing-rename-per-node" / "input", tmp_path / "r")
    data = _report(tmp_path / "r")
    lines = {n["requirement"]: n["detail"] for n in _sharing(data)}
    ts10 = next(d for r, d in lines.items() if "ts-shared-10" in r)
    assert 'consumableShares: "10"' in ts10 and "ConsumableShares: true" in ts10
    assert "CONSUMABLE_SHARES=10" in ts10  # the GPUCluster's spelling
    assert any("one stack per node" in r for r in lines)
    assert any("KUBERNETES_ENABLE_DRA" in d for d in lines.values())
    codes = {f["code"] for f in data["findings"]}
    assert "DRA540" not in codes  # the repository says how the fleet shares


def test_stage_2_keeps_gfds_sharing_labels_while_the_configuration_stays(
    tmp_path: Path,
) -> None:
    """GPU feature discovery computes nvidia.com/gpu.replicas, sharing-strategy and the
    shared product suffix from the device plugin's configuration, which the GPU Operator
    gives it whether the device plugin runs on the node or not (NVIDIA/gpu-operator
    controllers/object_controls.go TransformGPUDiscoveryPlugin calls
    handleDevicePluginConfig, at a22dbf67): a wave does not take them away, removing the
    sharing configuration or moving to a GPUCluster (no GFD in its stack) does."""
    shutil.copytree(CASES / "sharing-time-slicing-rename-per-node" / "input", tmp_path / "r")
    lines = {n["requirement"]: n["detail"] for n in _sharing(_report(tmp_path / "r"))}
    view = lines["what reads the device plugin's view"]
    assert "stops writing" not in view
    assert "keeps writing nvidia.com/gpu.replicas" in view and "handleDevicePluginConfig" in view
    # what changes them, and what the user does about it
    assert "nvidia.com/device-plugin.config" in view and "GPUCluster replaces" in view
    assert "keep the sharing configuration until node selectors" in view


def test_an_unknown_fleet_is_assumed_exclusive_and_the_plan_says_so(tmp_path: Path) -> None:
    (tmp_path / "d.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: c\n    image: x\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    data = _report(tmp_path)
    assumed = [f for f in data["findings"] if f["code"] == "DRA540"]
    assert assumed and "nvidia.com/gpu.sharing-strategy" in assumed[0]["hint"]
    assert any("assumed" in n["requirement"] for n in _sharing(data))


def test_a_bridge_of_a_shared_name_is_called_out(tmp_path: Path) -> None:
    shutil.copytree(CASES / "sharing-ai-on-eks-time-slicing" / "input", tmp_path / "r")
    data = _report(tmp_path / "r", "--strategy", "bridge", "--kube-version", "1.36")
    bridged = [f for f in data["findings"] if f["code"] == "DRA541"]
    assert bridged and "gpu-ts" in bridged[0]["message"]


def _slices(shares: int | None) -> str:
    """One g5.2xlarge-like node: one GPU, with the driver's consumable shares or not
    (cmd/gpu-kubelet-plugin/consumable_shares.go publishes capacity shares: N)."""
    capacity = f", capacity: {{shares: {{value: '{shares}'}}}}" if shares else ""
    extra = ", allowMultipleAllocations: true" if shares else ""
    return (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ts-0}\n"
        "spec:\n  driver: gpu.nvidia.com\n  nodeName: ts-0\n"
        "  pool: {name: ts-0, generation: 1, resourceSliceCount: 1}\n  devices:\n"
        f"  - {{name: gpu-0, attributes: {{type: {{string: gpu}}}}{capacity}{extra}}}\n"
    )


def _placed(tmp_path: Path, replicas: int, shares: int | None) -> set[str]:
    work = tmp_path / f"r{replicas}-{shares}"
    shutil.copytree(CASES / "sharing-ai-on-eks-time-slicing" / "input", work)
    deployment = work / "timeslicing-test.yaml"
    deployment.write_text(deployment.read_text().replace("replicas: 2", f"replicas: {replicas}"))
    (tmp_path / f"slices-{replicas}-{shares}.yaml").write_text(_slices(shares))
    data = _report(work, "--resource-slices", str(tmp_path / f"slices-{replicas}-{shares}.yaml"))
    return {f["code"] for f in data["findings"]}


def test_capacity_counts_shares_of_one_gpu(tmp_path: Path) -> None:
    # four pods of one share each fit the node's one GPU of four shares ...
    assert "DRA530" not in _placed(tmp_path, 4, 4)
    # ... a fifth does not, and a GPU without consumable shares takes none of them
    assert "DRA530" in _placed(tmp_path, 5, 4)
    assert "DRA530" in _placed(tmp_path, 1, None)


def test_the_nodes_labels_give_the_plan_its_pools(tmp_path: Path) -> None:
    """report --nodes: a kubectl dump whose GPU nodes carry GFD's labels; nothing in the
    repository describes the fleet, so the nodes say it (no DRA540)."""
    (tmp_path / "d.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: c\n    image: x\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )

    def node(name: str, pool: str, labels: dict[str, str], gpus: int) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, "karpenter.sh/nodepool": pool, **labels},
            },
            "status": {"allocatable": {"nvidia.com/gpu": str(gpus)}},
        }

    ts = {"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}
    whole = {"nvidia.com/gpu.replicas": "1", "nvidia.com/gpu.sharing-strategy": "none"}
    dump = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            node("ts-a", "gpu-ts", ts, 4),
            node("ts-b", "gpu-ts", ts, 4),
            node("big-a", "gpu-train", whole, 8),
        ],
    }
    nodes = tmp_path.parent / f"{tmp_path.name}-nodes.json"
    nodes.write_text(json.dumps(dump))
    data = _report(tmp_path, "--nodes", str(nodes))
    lines = {n["requirement"]: n["detail"] for n in _sharing(data)}
    pool = next(r for r in lines if "karpenter.sh/nodepool=gpu-ts" in r)
    assert "time-slicing (4 replicas per GPU)" in pool
    assert 'consumableShares: "4"' in lines[pool]
    assert "DRA540" not in {f["code"] for f in data["findings"]}
