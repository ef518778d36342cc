"""The inventory of a cluster whose GPU nodes share: each node's sharing model from
the labels GPU feature discovery writes (NVIDIA/k8s-device-plugin internal/lm), or
from allocatable nvidia.com/gpu against nvidia.com/gpu.count, on the fake API server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dra_migrate.repo.sharing import SHARED_PRODUCT
from tests.helpers.cli_runner import invoke
from tests.helpers.fake_apiserver import dump, node, sample_cluster, serve, write_kubeconfig


def _labelled(name: str, gpus: int, advertised: int, labels: dict[str, str]) -> dict[str, Any]:
    obj = node(name, gpus)
    obj["metadata"]["labels"].update(labels)
    for key in ("capacity", "allocatable"):
        obj["status"][key]["nvidia.com/gpu"] = str(advertised)
    return obj


def _renamed(obj: dict[str, Any]) -> dict[str, Any]:
    for key in ("capacity", "allocatable"):
        obj["status"][key]["nvidia.com/gpu.shared"] = obj["status"][key].pop("nvidia.com/gpu")
    return obj


def test_each_nodes_sharing_from_its_labels(tmp_path: Path) -> None:
    state = sample_cluster()
    state.objects["nodes"] += [
        # time-slicing 4 ways, not renamed: GFD's replicas, strategy and shared product suffix
        _labelled(
            "ts-0",
            1,
            4,
            {
                "nvidia.com/gpu.count": "1",
                "nvidia.com/gpu.replicas": "4",
                "nvidia.com/gpu.sharing-strategy": "time-slicing",
                "nvidia.com/gpu.product": "NVIDIA-A10G" + SHARED_PRODUCT,
            },
        ),
        # no sharing labels (an older GFD): 16 advertised for 4 GPUs
        _labelled("ts-1", 4, 16, {"nvidia.com/gpu.count": "4"}),
        _labelled(
            "mig-0",
            8,
            8,
            {
                "nvidia.com/mig.strategy": "single",
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
            },
        ),
        _labelled("mps-0", 2, 4, {"nvidia.com/gpu.sharing-strategy": "mps"}),
        # MPS with renameByDefault: the shares are nvidia.com/gpu.shared (the device
        # plugin's README "With CUDA MPS"), the product has no shared suffix
        _renamed(
            _labelled(
                "mps-1",
                2,
                8,
                {
                    "nvidia.com/gpu.count": "2",
                    "nvidia.com/gpu.replicas": "4",
                    "nvidia.com/gpu.sharing-strategy": "mps",
                    "nvidia.com/gpu.product": "NVIDIA-A10G",
                },
            )
        ),
    ]
    with serve(state) as url:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", url)
        result = invoke(
            ["inventory", "--cluster", "--kubeconfig", str(kubeconfig), "--format", "json", "-A"]
        )
        text = invoke(["inventory", "--cluster", "--kubeconfig", str(kubeconfig), "-A"])
    assert result.exit_code == 0, result.output
    nodes = {n["name"]: n for n in json.loads(result.stdout)["cluster"]["nodes"]}
    # kubectl's dumps of the same cluster say the same
    (tmp_path / "cluster.json").write_text(json.dumps(dump(state)), encoding="utf-8")
    offline = invoke(["inventory", str(tmp_path / "cluster.json"), "--format", "json"])
    dumped = {n["name"]: n for n in json.loads(offline.stdout)["cluster"]["nodes"]}
    assert {k: v["sharing"] for k, v in dumped.items()} == {
        k: v["sharing"] for k, v in nodes.items()
    }
    assert nodes["ts-0"]["sharing"] == "time-slicing (4 replicas per GPU)"
    assert nodes["ts-1"]["sharing"] == "time-slicing (4 replicas per GPU)"
    assert nodes["mig-0"]["sharing"] == "MIG, single strategy (profile 1g.5gb)"
    assert nodes["mps-0"]["sharing"].startswith("MPS")
    assert nodes["mps-1"]["sharing"] == "MPS (4 replicas per GPU, renamed to .shared)"
    assert nodes["gpu-a"]["sharing"] is None  # whole GPUs
    assert "SHARING" in text.stdout and "time-slicing (4 replicas per GPU)" in text.stdout
