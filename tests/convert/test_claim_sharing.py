"""DRA535: a GPU the pods shared, or a mapping's sharing config, converted to a claim
per pod. The driver applies a claim's sharing config to that claim's devices only, and
a device goes to one claim at a time without consumable shares: the pods stop sharing.
Convert writes what the mapping says, and says so."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from dra_migrate.convert.mapping import Settings, load_config
from dra_migrate.pipeline.one_file import process
from dra_migrate.repo.roles import Role
from dra_migrate.repo.sharing import MPS, TIME_SLICING, Fleet, Pool, SharingModel
from dra_migrate.report.model import Status

POOL_LABEL = "example.com/pool"


def _mapping(name: str, sharing: str, shared: bool) -> str:
    lines = [
        "version: 1",
        "resources:",
        f"- name: {name}",
        "  deviceClass: gpu.nvidia.com",
        f"  shared: {str(shared).lower()}",
        "  config:",
        "  - driver: gpu.nvidia.com",
        "    parameters:",
        "      apiVersion: resource.nvidia.com/v1beta1",
        "      kind: GpuConfig",
    ]
    if sharing:
        lines += ["      sharing:", f"        strategy: {sharing}"]
    return "\n".join(lines) + "\n"


def _deployment(name: str, pool: str) -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ns\n"
        "spec:\n  replicas: 8\n  template:\n    spec:\n"
        f"      nodeSelector:\n        {POOL_LABEL}: {pool}\n"
        "      containers:\n      - name: app\n        image: x\n        resources:\n"
        f"          limits:\n            {name}: 1\n"
    )


CASES = {
    # (resource, the mapping's sharing strategy, shared: true, the pool's model): DRA535
    "time-slicing config on a whole GPU": ("nvidia.com/gpu", "TimeSlicing", False, None, True),
    "MPS config on a whole GPU": ("nvidia.com/gpu", "MPS", False, None, True),
    "the golden case: a renamed share with TimeSlicing": (
        "nvidia.com/gpu.shared",
        "TimeSlicing",
        True,
        None,
        True,
    ),
    "a share, config without sharing": ("nvidia.com/gpu.shared", "", True, None, True),
    "a time-sliced pool, config without sharing": (
        "nvidia.com/gpu",
        "",
        False,
        SharingModel(TIME_SLICING, 4),
        True,
    ),
    "an MPS pool, config without sharing": (
        "nvidia.com/gpu",
        "",
        False,
        SharingModel(MPS, 4),
        True,
    ),
    "an exclusive GPU, config without sharing": ("nvidia.com/gpu", "", False, None, False),
    "an exclusive pool, config without sharing": (
        "nvidia.com/gpu",
        "",
        False,
        SharingModel(),
        False,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_pods_that_shared_a_gpu_get_a_claim_each_and_convert_says_so(
    case: str, tmp_path: Path
) -> None:
    resource, strategy, shared, model, says = CASES[case]
    mapping = tmp_path / ".dra-migrate.yaml"
    mapping.write_text(_mapping(resource, strategy, shared), encoding="utf-8")
    config = load_config(mapping)
    if model is not None:
        pool = Pool("pool", ((POOL_LABEL, frozenset(["pool"])),), model)
        config = dataclasses.replace(config, sharing=Fleet((pool,)))
    text = _deployment(resource, "pool")
    result = process("deploy.yaml", text.encode(), Role(), Settings("v1", config))
    # written as the mapping says: a claim per pod, with the mapping's config
    assert result.status is Status.CHANGED, [f.format() for f in result.findings]
    assert result.converted is not None
    docs = [d for d in yaml.safe_load_all(result.converted) if d]
    template = next(d for d in docs if d["kind"] == "ResourceClaimTemplate")
    devices = template["spec"]["spec"]["devices"]
    assert devices["config"][0]["opaque"]["parameters"]["kind"] == "GpuConfig"
    assert "capacity" not in devices["requests"][0]["exactly"]  # no consumable shares
    found = [f for f in result.findings if f.code == "DRA535"]
    if not says:
        assert not found, [f.format() for f in found]
        return
    assert len(found) == 1, [f.format() for f in result.findings]
    one = found[0]
    assert (one.line, one.col) == (17, 13)  # the resource's key in limits
    assert f"from ResourceClaimTemplate {template['metadata']['name']}" in one.message
    # release 0.4, the one assumed: no consumable shares, so whole devices for sure
    assert "one claim at a time" in one.message and "release 0.4" in one.message
    if strategy:
        assert f"sets sharing {strategy} on its claim" in one.message
    # the two ways that do share, with the trade-off of the first
    assert "one ResourceClaim the pods reference by resourceClaimName" in one.hint
    assert "the claim outlives the workload" in one.hint
    assert "consumable shares" in one.hint and "DRA260" in one.hint


@pytest.mark.parametrize(("strategy", "refused"), [("TimeSlicing", False), ("MPS", True)])
def test_on_a_release_with_shares_a_driver_setting_decides(
    strategy: str, refused: bool, tmp_path: Path
) -> None:
    """On release 0.5 a request that names no ``shares`` capacity takes the device's
    default share only where the kubelet plugin runs with consumable shares (the
    allocator's ``fillEmptyRequest``): the output does not say, so DRA535 still warns;
    an MPS config is refused by the driver on a shared device (PR #1257)."""
    mapping = tmp_path / ".dra-migrate.yaml"
    mapping.write_text(_mapping("nvidia.com/gpu", strategy, False), encoding="utf-8")
    config = dataclasses.replace(load_config(mapping), driver_releases=(("gpu.nvidia.com", "0.5"),))
    text = _deployment("nvidia.com/gpu", "pool")
    result = process("deploy.yaml", text.encode(), Role(), Settings("v1", config))
    assert result.status is Status.CHANGED
    (one,) = [f for f in result.findings if f.code == "DRA535"]
    assert "unless the kubelet plugin runs with consumable shares" in one.message
    assert ("refuses an MPS config" in one.message) is refused


CLASS_CONFIG = """\
version: 1
deviceClasses:
- name: shared.gpu.nvidia.com
  driver: gpu.nvidia.com
  selectors: ["device.driver == 'gpu.nvidia.com'"]
  config:
  - driver: gpu.nvidia.com
    parameters:
      apiVersion: resource.nvidia.com/v1beta1
      kind: GpuConfig
      sharing: {strategy: TimeSlicing, timeSlicingConfig: {interval: Long}}
resources:
- name: nvidia.com/gpu
  deviceClass: shared.gpu.nvidia.com
"""


def test_a_project_device_class_with_a_sharing_config_says_it_too(tmp_path: Path) -> None:
    """The driver gets a class's config with each claim's allocation, so a project
    DeviceClass whose config sets sharing shares no GPU between claims either."""
    mapping = tmp_path / ".dra-migrate.yaml"
    mapping.write_text(CLASS_CONFIG, encoding="utf-8")
    config = load_config(mapping)
    text = _deployment("nvidia.com/gpu", "pool")
    result = process("deploy.yaml", text.encode(), Role(), Settings("v1", config))
    assert result.status is Status.CHANGED, [f.format() for f in result.findings]
    (one,) = [f for f in result.findings if f.code == "DRA535"]
    assert "DeviceClass shared.gpu.nvidia.com's config sets sharing TimeSlicing" in one.message
