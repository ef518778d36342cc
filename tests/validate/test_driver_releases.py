"""The catalog per driver release: a name of one release used against another.

Each case is named after the upstream source of its fact:
kubernetes-sigs/dra-driver-nvidia-gpu at v0.4.1 (9036620f) and main (95932046,
0.5.0-dev), intel/intel-resource-drivers-for-kubernetes at gpu-v0.11.0 and 1da939fa.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_migrate.convert.mapping import ConfigError, Settings, load_config
from dra_migrate.k8s.catalog import load_catalog
from dra_migrate.pipeline.many_files import run_validate
from dra_migrate.pipeline.options import RunOptions
from dra_migrate.validate import ValidateSettings

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: fm
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: {cls}
          count: 2
          selectors:
          - cel:
              expression: "{expr}"
"""
NV = "device.attributes['gpu.nvidia.com']"


def _validate(tmp_path: Path, doc: str, config: str | None = None, devices=None) -> list[str]:
    (tmp_path / "claim.yaml").write_text(doc)
    path = None
    if config is not None:
        path = tmp_path / ".dra-migrate.yaml"
        path.write_text(config)
    options = RunOptions(
        (str(tmp_path / "claim.yaml"),), Settings(target="v1", config=load_config(path)), jobs=1
    )
    report = run_validate(options, ValidateSettings(), devices)
    return [f"{f.code} {f.message}" for f in report.all_findings]


def test_nvidia_main_gpu_module_id_against_the_newest_tag_says_which_release(
    tmp_path: Path,
) -> None:
    """cmd/gpu-kubelet-plugin/deviceinfo.go addFabricManagerAttributes (main, not v0.4.1)."""
    [line] = _validate(tmp_path, CLAIM.format(cls="gpu.nvidia.com", expr=f"{NV}.gpuModuleID > 0"))
    assert line.startswith("DRA336 ")
    assert "from driver release 0.5 (driver feature gate FabricManagerPartitioning)" in line
    assert "this run assumes gpu.nvidia.com 0.4 (the newest tagged release, v0.4.1)" in line
    assert "DRA332" not in line  # not "unknown"


def test_nvidia_main_release_configured_knows_its_names(tmp_path: Path) -> None:
    """drivers: {gpu.nvidia.com: "0.5"}: shares (consumable_shares.go) and partition4."""
    expr = f"device.capacity['gpu.nvidia.com'].shares.compareTo(quantity('1')) >= 0 && {NV}.partition4 >= 0"
    doc = CLAIM.format(cls="gpu.nvidia.com", expr=expr)
    assert _validate(tmp_path, doc, 'drivers: {gpu.nvidia.com: "0.5"}\n') == []
    found = _validate(tmp_path, doc)
    assert [f.split(" ", 1)[0] for f in found] == ["DRA336", "DRA336"]


def test_nvidia_main_dropped_vfio_numa(tmp_path: Path) -> None:
    """d693b8a6 'remove the previous numa attribute': 0.5 has resource.kubernetes.io/numaNode."""
    doc = CLAIM.format(cls="vfio.gpu.nvidia.com", expr=f"{NV}.numa == 0")
    assert _validate(tmp_path, doc) == []  # 0.4 (v0.4.1) publishes it
    [line] = _validate(tmp_path, doc, 'drivers: {gpu.nvidia.com: "0.5"}\n')
    assert (
        "stopped publishing 'numa' in driver release 0.5 (use resource.kubernetes.io/numaNode)"
        in line
    )
    assert "drivers: in the configuration" in line


def test_nvidia_release_read_from_the_resource_slices(tmp_path: Path) -> None:
    """A device that publishes gpu.nvidia.com/shares is a 0.5 driver's: partition2 is known."""
    from dra_migrate.cel.devices import devices_from_resource_slices

    slices = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "node-a-gpu"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "nodeName": "node-a",
                "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": "gpu-0",
                        "attributes": {"type": {"string": "gpu"}},
                        "capacity": {"shares": {"value": "4"}, "memory": {"value": "80Gi"}},
                    }
                ],
            },
        }
    ]
    devices = devices_from_resource_slices(slices)
    doc = CLAIM.format(cls="gpu.nvidia.com", expr=f"{NV}.partition2 >= 0")
    found = [f for f in _validate(tmp_path, doc, devices=devices) if f.startswith("DRA336")]
    assert found == []
    assumed = load_catalog().assumed_releases({}, ["gpu.nvidia.com/shares"])
    assert assumed["gpu.nvidia.com"] == ("0.5", "read from the ResourceSlices")


def test_intel_gpu_v0_11_type_is_known_and_pci_address_is_deprecated(tmp_path: Path) -> None:
    """node_state.go GetResources at gpu-v0.11.0: type gpu|vf; USAGE.md deprecations."""
    doc = CLAIM.format(
        cls="gpu.intel.com",
        expr="device.attributes['gpu.intel.com'].type == 'vf' && device.attributes['gpu.intel.com'].pciAddress != ''",
    )
    [line] = _validate(tmp_path, doc)
    assert line.startswith("DRA337 ")
    assert "'pciAddress' is deprecated by gpu.intel.com since driver release 0.11" in line
    assert "resource.kubernetes.io/pciBusID" in line
    doc = CLAIM.format(
        cls="gpu.intel.com", expr="device.attributes['gpu.intel.com'].pciRoot == '00'"
    )
    [line] = _validate(tmp_path, doc)
    assert "since driver release 0.10: use resource.kubernetes.io/pcieRoot" in line


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"0.7"', "gpu.nvidia.com release '0.7' is not one the catalog knows: 0.4, 0.5"),
        ('"1.0"', "dra.net is not a driver whose releases the catalog knows"),
    ],
)
def test_a_release_the_catalog_does_not_know_is_a_configuration_error(
    tmp_path: Path, value: str, message: str
) -> None:
    domain = "dra.net" if "dra.net" in message else "gpu.nvidia.com"
    path = tmp_path / ".dra-migrate.yaml"
    path.write_text(f"drivers:\n  {domain}: {value}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert message in str(caught.value)
    assert caught.value.line == 2


MPS_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: shared
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
      config:
      - requests: [gpu]
        opaque:
          driver: gpu.nvidia.com
          parameters:
            apiVersion: resource.nvidia.com/v1beta1
            kind: {kind}
            sharing:
              strategy: MPS
              mpsConfig: {{multiUser: true, defaultActiveThreadPercentage: 50}}
"""


def test_a_config_field_of_a_later_release_is_an_error_in_a_claim(tmp_path: Path) -> None:
    """api/nvidia.com/resource/v1beta1/sharing.go MpsConfig.MultiUser (main, not v0.4.1):
    the driver decodes strictly, so validate says so of a claim as deviceclasses says
    it of a class (DRA506), at the field's key."""
    [line] = _validate(tmp_path, MPS_CLAIM.format(kind="GpuConfig"))
    assert line.startswith("DRA338 ResourceClaimTemplate shared: sharing.mpsConfig.multiUser")
    assert "this run assumes 0.4 (the newest tagged release, v0.4.1)" in line
    report_config = 'drivers:\n  gpu.nvidia.com: "0.5"\n'
    assert _validate(tmp_path, MPS_CLAIM.format(kind="GpuConfig"), report_config) == []


def test_a_config_field_of_another_kind_is_not_that_field(tmp_path: Path) -> None:
    """The field belongs to GpuConfig and MigDeviceConfig: another kind's parameters of
    the same shape are not checked against it."""
    assert _validate(tmp_path, MPS_CLAIM.format(kind="VfioDeviceConfig")) == []
