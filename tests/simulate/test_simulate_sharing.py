"""Shared GPU pools in the simulation, without a control plane: what the fake nodes
advertise before (the NVIDIA device plugin's rules, NVIDIA/k8s-device-plugin
internal/rm/device_map.go, api/config/v1/replicas.go, internal/lm/resource.go and
mig-strategy.go) and what the DRA driver publishes after
(dra-driver-nvidia-gpu cmd/gpu-kubelet-plugin/consumable_shares.go at 95932046), the
shares stage 2 of the plan sets, and DRA812."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dra_migrate.convert.mapping import load_config
from dra_migrate.k8s.catalog import load_catalog
from dra_migrate.repo.sharing import SHARED_PRODUCT, Pool, SharingModel
from dra_migrate.repo.sharing import Fleet as SharingFleet
from dra_migrate.report.findings import ConfigError, finding
from dra_migrate.report.simulation import Placement, SimulatedWorkload
from dra_migrate.simulate import devices, fleet, session, sharing
from tests.conftest import FIXTURES

SHARING_FLEET = FIXTURES / "simulate" / "sharing-fleet.yaml"
# GFD's product suffix on a shared GPU not renamed (internal/lm/resource.go getProductName)
SUFFIX = SHARED_PRODUCT


def _fleet(pool: str, tmp_path: Path) -> fleet.Fleet:
    path = tmp_path / "fleet.yaml"
    path.write_text(f"kind: Fleet\npools:\n  - {pool}\n", encoding="utf-8")
    return session.read_fleet([str(path)], 1 << 20)


def _node(pool: str, tmp_path: Path) -> fleet.FleetNode:
    return _fleet(pool, tmp_path).nodes[0]


def _phase(node: fleet.FleetNode, after: bool) -> devices.NodeObjects:
    return devices.phase_nodes((node,), "p.", "p", after, "now")[0]


def _devices(made: devices.NodeObjects) -> list[dict[str, Any]]:
    return [d for s in made.slices for d in s["spec"]["devices"]]


TS = "{name: ts, gpus: 2, product: NVIDIA A10G, sharing: {strategy: time-slicing, replicas: 4}"


def test_time_slicing_advertises_each_gpu_replicas_times_and_gfd_says_shared(
    tmp_path: Path,
) -> None:
    node = _node(TS + "}", tmp_path)
    before = _phase(node, after=False)
    assert before.status["allocatable"]["nvidia.com/gpu"] == "8"  # 2 GPUs x 4 replicas
    labels = before.node["metadata"]["labels"]
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A10G" + SUFFIX  # shared, not renamed
    assert labels["nvidia.com/gpu.replicas"] == "4"
    assert labels["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
    assert labels["nvidia.com/gpu.count"] == "2"  # GPUs, not replicas
    assert not before.slices


def test_rename_by_default_advertises_the_shared_name_and_keeps_the_product(
    tmp_path: Path,
) -> None:
    node = _node(TS.replace("replicas: 4}", "replicas: 4, renameByDefault: true}") + "}", tmp_path)
    assert node.plugin_resources() == {"nvidia.com/gpu.shared": 8}
    labels = _phase(node, after=False).node["metadata"]["labels"]
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A10G"  # renamed: no suffix


def test_mps_renames_as_time_slicing_does_and_stays_on_the_device_plugin_after(
    tmp_path: Path,
) -> None:
    # api/config/v1/config.go applies renameByDefault to sharing.mps as to timeSlicing
    node = _node(
        "{name: m, gpus: 1, product: NVIDIA A10G, "
        "sharing: {strategy: mps, replicas: 4, renameByDefault: true}}",
        tmp_path,
    )
    assert node.plugin_resources() == {"nvidia.com/gpu.shared": 4}
    after = _phase(node, after=True)  # DRA263: stage 2 keeps MPS on the device plugin
    assert after.status["allocatable"]["nvidia.com/gpu.shared"] == "4"
    assert after.node["metadata"]["labels"]["nvidia.com/gpu.sharing-strategy"] == "mps"
    assert not after.slices
    plain = _node(
        "{name: m, gpus: 2, product: NVIDIA A10G, sharing: {strategy: mps, replicas: 2}}", tmp_path
    )
    assert plain.plugin_resources() == {"nvidia.com/gpu": 4}


def test_after_a_time_sliced_gpu_is_one_device_without_shares_unless_the_driver_has_them(
    tmp_path: Path,
) -> None:
    node = _node(TS + "}", tmp_path)
    after = _phase(node, after=True)
    assert "nvidia.com/gpu" not in after.status["allocatable"]
    labels = after.node["metadata"]["labels"]
    # GPU feature discovery keeps the device plugin's configuration under the GPU Operator
    # (gpu-operator controllers/object_controls.go handleDevicePluginConfig)
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A10G" + SUFFIX
    assert labels["nvidia.com/gpu.replicas"] == "4"
    published = _devices(after)
    assert [d["name"] for d in published] == ["gpu-0", "gpu-1"]  # never the replicas
    assert all("allowMultipleAllocations" not in d for d in published)
    assert all("shares" not in d["capacity"] for d in published)


def test_consumable_shares_publish_what_apply_consumable_shares_sets(tmp_path: Path) -> None:
    node = _node(TS + ", consumableShares: 4}", tmp_path)
    published = _devices(_phase(node, after=True))
    assert len(published) == 2
    for device in published:
        assert device["allowMultipleAllocations"] is True
        memory = device["capacity"]["memory"]
        assert memory["requestPolicy"] == {
            "default": "0",
            "validRange": {"min": "0", "max": memory["value"], "step": "1Mi"},
        }
        assert device["capacity"]["shares"] == {
            "value": "4",
            "requestPolicy": {"default": "1", "validRange": {"min": "1", "max": "4", "step": "1"}},
        }
    domain = load_catalog().domains[devices.DRIVER]
    assert domain.has_capacity("shares")


@pytest.mark.parametrize(
    ("mode", "default", "low"),
    [("memory", "whole", "1Mi"), ("unlimited", "0", "0")],
)
def test_the_memory_and_unlimited_modes_publish_no_shares(
    mode: str, default: str, low: str, tmp_path: Path
) -> None:
    node = _node(TS + f", consumableShares: {mode}}}", tmp_path)
    for device in _devices(_phase(node, after=True)):
        memory = device["capacity"]["memory"]
        assert "shares" not in device["capacity"]
        assert memory["requestPolicy"]["default"] == (
            memory["value"] if default == "whole" else default
        )
        assert memory["requestPolicy"]["validRange"]["min"] == low


def test_a_device_without_memory_gets_only_multiple_allocations(tmp_path: Path) -> None:
    # a product the table does not know publishes no memory capacity: the driver returns
    # before the shares (consumable_shares.go: "if !hasMemory { return }")
    node = _node(
        "{name: u, gpus: 1, product: NVIDIA Unknown, consumableShares: 4, "
        "sharing: {strategy: time-slicing, replicas: 4}}",
        tmp_path,
    )
    [device] = _devices(_phase(node, after=True))
    assert device["allowMultipleAllocations"] is True
    assert "capacity" not in device


def test_mig_single_is_nvidia_com_gpu_per_mig_device_named_by_its_profile(
    tmp_path: Path,
) -> None:
    node = _node(
        "{name: s, gpus: 2, product: NVIDIA A100-SXM4-40GB, mig: [3g.20gb, 3g.20gb], "
        "migStrategy: single}",
        tmp_path,
    )
    before = _phase(node, after=False)
    assert before.status["allocatable"]["nvidia.com/gpu"] == "4"
    labels = before.node["metadata"]["labels"]
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB-MIG-3g.20gb"
    assert labels["nvidia.com/gpu.count"] == "4"
    published = _devices(_phase(node, after=True))
    assert {d["attributes"]["profile"]["string"] for d in published} == {"3g.20gb"}
    assert len(published) == 4
    assert node.devices() == 4


def test_mig_mixed_with_whole_gpus_beside_the_mig_ones(tmp_path: Path) -> None:
    node = _node(
        "{name: x, gpus: 2, migGpus: 1, product: NVIDIA A100-SXM4-40GB, "
        "mig: [1g.5gb, 1g.5gb, 2g.10gb]}",
        tmp_path,
    )
    assert node.plugin_resources() == {
        "nvidia.com/gpu": 1,
        "nvidia.com/mig-1g.5gb": 2,
        "nvidia.com/mig-2g.10gb": 1,
    }
    published = _devices(_phase(node, after=True))
    assert [d["attributes"]["type"]["string"] for d in published] == ["mig"] * 3 + ["gpu"]
    assert published[-1]["name"] == "gpu-1"
    assert node.devices() == 4


@pytest.mark.parametrize(
    ("pool", "said"),
    [
        (TS.replace("replicas: 4", "replicas: 1") + "}", "2 or more"),
        (TS.replace("time-slicing", "fractions") + "}", "one of time-slicing, mps"),
        (TS.replace("replicas: 4", "replicas: 4, devices: all") + "}", "unknown key 'devices'"),
        ("{name: a, sharing: {strategy: mps, replicas: 2}}", "without GPUs"),
        (
            "{name: a, gpus: 1, product: NVIDIA L4, consumableShares: 4, "
            "sharing: {strategy: mps, replicas: 2}}",
            "stays on the device plugin",
        ),
        (TS + ", consumableShares: 0}", "positive count"),
        (TS + ", dra: true}", "dra: true"),
        (
            "{name: a, gpus: 2, product: NVIDIA A100-SXM4-40GB, migStrategy: single, "
            "mig: [3g.20gb, 1g.5gb]}",
            "one profile",
        ),
        (
            "{name: a, gpus: 2, migGpus: 1, product: NVIDIA A100-SXM4-40GB, "
            "migStrategy: single, mig: [3g.20gb]}",
            "every GPU in MIG mode",
        ),
        ("{name: a, gpus: 1, migGpus: 2, product: NVIDIA L4, mig: [1g.5gb]}", "at most"),
        ("{name: a, gpus: 1, migGpus: 1, product: NVIDIA L4}", "with a mig layout"),
        (
            "{name: a, gpus: 1, product: NVIDIA A100-SXM4-40GB, mig: [3g.20gb], "
            "sharing: {strategy: mps, replicas: 2}}",
            "no MIG device with MPS",
        ),
    ],
)
def test_a_sharing_the_device_plugin_cannot_have_is_a_usage_error(
    pool: str, said: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=said):
        _fleet(pool, tmp_path)


def test_a_dumped_time_sliced_node_has_its_gpus_not_its_replicas(tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text(
        """apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata:
      name: g5-a
      labels:
        karpenter.sh/nodepool: gpu-ts
        nvidia.com/gpu.product: NVIDIA-A10G{SUFFIX}
        nvidia.com/gpu.count: "1"
        nvidia.com/gpu.replicas: "4"
        nvidia.com/gpu.sharing-strategy: time-slicing
    status:
      allocatable: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "4"}
""".replace("{SUFFIX}", SUFFIX),
        encoding="utf-8",
    )
    [node] = session.read_fleet([str(path)], 1 << 20).nodes
    assert (node.gpus, node.sharing, node.replicas, node.product) == (
        1,
        "time-slicing",
        4,
        "NVIDIA A10G",
    )
    assert node.plugin_resources() == {"nvidia.com/gpu": 4}
    assert len(_devices(_phase(node, after=True))) == 1
    before = _phase(node, after=False).node["metadata"]["labels"]
    assert before["nvidia.com/gpu.product"] == "NVIDIA-A10G" + SUFFIX


def test_the_fleets_gpus_are_devices_not_replicas() -> None:
    model = session.read_fleet([str(SHARING_FLEET)], 1 << 20)
    # gpu-ts 1, ts-shared 2, mps-4 1, mig-single 2 x 2 MIG, mig-mixed 7 MIG + 1 whole
    assert model.gpus() == 1 + 2 + 1 + 4 + 8


def _config(tmp_path: Path, text: str) -> Any:
    path = tmp_path / ".dra-migrate.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(str(path))


TS_POOL = SharingFleet(
    (Pool("gpu-ts", (("NodePool", frozenset({"gpu-ts"})),), SharingModel("time-slicing", 4)),)
)


@pytest.mark.parametrize(
    ("config", "model", "shares", "why"),
    [
        ('drivers: {gpu.nvidia.com: "0.5"}\n', TS_POOL, "4", "stage 2 of the plan"),
        ("version: 1\n", TS_POOL, "disabled", "cannot share"),  # release 0.4 assumed
        ('drivers: {gpu.nvidia.com: "0.5"}\n', None, "disabled", "exclusive"),
    ],
)
def test_the_shares_after_are_those_stage_2_sets_for_the_pool(
    config: str, model: SharingFleet | None, shares: str, why: str, tmp_path: Path
) -> None:
    the_fleet = _fleet(TS + ", labels: {NodePool: gpu-ts}}", tmp_path)
    [node] = sharing.planned(the_fleet, model, _config(tmp_path, config)).nodes
    assert node.consumable_shares == shares
    assert why in node.shares_why


def test_the_fleets_own_consumable_shares_win(tmp_path: Path) -> None:
    the_fleet = _fleet(TS + ", consumableShares: 2, labels: {NodePool: gpu-ts}}", tmp_path)
    config = _config(tmp_path, 'drivers: {gpu.nvidia.com: "0.5"}\n')
    [node] = sharing.planned(the_fleet, TS_POOL, config).nodes
    assert node.consumable_shares == "2"


def _row(nodes: tuple[str, ...]) -> SimulatedWorkload:
    def placed(bound: int) -> Placement:
        return Placement(4, bound, ("ts",), nodes[:bound], (), (), ())

    return SimulatedWorkload(
        "a.yaml", 3, 1, "Deployment", "", "nb", "spec", "", placed(4), placed(1)
    )


def _fewer(reason: str) -> Any:
    return finding(
        "DRA801",
        "a.yaml",
        3,
        1,
        f"Deployment/nb: 1 of its pods bound after; the scheduler: {reason}",
        "",
    )


UNALLOCATED = _fewer("0/2 nodes are available: 1 cannot allocate all claims, 1 untolerated")
TAINTED = _fewer("0/2 nodes are available: 2 node(s) had untolerated taint(s)")


def test_dra812_says_what_the_shared_pool_advertised_and_what_the_driver_publishes(
    tmp_path: Path,
) -> None:
    the_fleet = sharing.planned(_fleet(TS + "}", tmp_path), None, _config(tmp_path, "version: 1\n"))
    row = _row(("ts-00",) * 4)
    [said] = sharing.explain([row], [UNALLOCATED], the_fleet)
    assert said.code == "DRA812"
    assert "nvidia.com/gpu: 8 on 2 GPU(s) (time-slicing, 4 replicas per GPU)" in said.message
    assert "2 device(s), one a GPU or MIG device, without consumable shares" in said.message
    assert "stage 2 sets no shares" in said.message
    assert "DRA260" in said.hint
    # no DRA801, a reason that is not the pool's, a pool that does not share: nothing
    assert not sharing.explain([row], [], the_fleet)
    assert not sharing.explain([row], [TAINTED], the_fleet)
    plain = _fleet("{name: ts, gpus: 2, product: NVIDIA A10G}", tmp_path)
    assert not sharing.explain([row], [UNALLOCATED], plain)
    mps = _fleet(TS.replace("time-slicing", "mps") + "}", tmp_path)
    assert not sharing.explain([row], [UNALLOCATED], mps)  # stays on the device plugin
    # as many shares as replicas, and claims not allocated: a request left as
    # nvidia.com/gpu takes whole devices through the class's extendedResourceName
    held = _fleet(TS + ", consumableShares: 4}", tmp_path)
    [said] = sharing.explain([row], [UNALLOCATED], held)
    assert "as many as the replicas" in said.message and "one device a unit" in said.message
    fewer_shares = _fleet(TS + ", consumableShares: 3}", tmp_path)
    [said] = sharing.explain([row], [UNALLOCATED], fewer_shares)
    assert "2 device(s) of 3 consumable shares each" in said.message
    assert "not the 4 the device plugin had" in said.message
    by_memory = _fleet(TS + ", consumableShares: memory}", tmp_path)
    [said] = sharing.explain([row], [UNALLOCATED], by_memory)
    assert "without a shares capacity" in said.message and "finds no device" in said.message


@pytest.mark.parametrize(
    ("result", "counted"),
    [
        ({"device": "gpu-0"}, 1),
        ({"device": "gpu-0", "consumedCapacity": {"shares": "2", "memory": "0"}}, 2),
        ({"device": "gpu-0", "consumedCapacity": {"memory": "81920Mi"}}, 1),
    ],
)
def test_a_container_counts_the_shares_its_claim_took(result: dict[str, Any], counted: int) -> None:
    """k time-sliced replicas before are k consumable shares after (DRA260, packed): the
    devices compared (DRA803) count a claim's shares of a device, else the device."""
    from dra_migrate.simulate import place

    assert place._shares(result) == counted
