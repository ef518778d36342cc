"""validate checks the bridge classes of the repository: one DeviceClass an extended
resource name, across files and with the classes known drivers install (DRA510), and a
MIG profile's class selects that profile (DRA324)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli_runner import Result, invoke


def _class(name: str, resource: str, selector: str = 'device.driver == "gpu.nvidia.com"') -> str:
    return (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
        f"metadata:\n  name: {name}\nspec:\n  selectors:\n    - cel:\n"
        f"        expression: {selector}\n  extendedResourceName: {resource}\n"
    )


def _validate(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    monkeypatch.chdir(root)
    done = invoke(["validate", "--jobs", "1", *args])
    assert done.exception is None, done.output
    return done


def test_two_files_mapping_one_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.yaml").write_text(_class("gpu.extended.amd.com", "amd.com/gpu"))
    (tmp_path / "b.yaml").write_text(_class("rocm.example.com", "amd.com/gpu"))
    done = _validate(tmp_path, monkeypatch, ".")
    assert done.exit_code == 1, done.output
    assert (
        "a.yaml:9:25: DRA510 error: DeviceClass gpu.extended.amd.com maps extended resource "
        "amd.com/gpu, and so does rocm.example.com"
    ) in done.stdout
    assert "b.yaml:9:25: DRA510 error: DeviceClass rocm.example.com" in done.stdout
    # one of them alone is fine: the AMD driver maps nothing by default
    (tmp_path / "b.yaml").unlink()
    done = _validate(tmp_path, monkeypatch, ".")
    assert done.exit_code == 0 and "DRA510" not in done.stdout, done.output


def test_a_class_beside_the_drivers_own_mapping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a100.yaml").write_text(_class("a100.nvidia.com", "nvidia.com/gpu"))
    done = _validate(tmp_path, monkeypatch, ".")
    assert done.exit_code == 1
    assert "and so does gpu.nvidia.com (installed by its driver)" in done.stdout
    # the driver's class maps nvidia.com/gpu only when its chart renders v1
    beta = (
        (tmp_path / "a100.yaml")
        .read_text()
        .replace("resource.k8s.io/v1", "resource.k8s.io/v1beta2")
    )
    (tmp_path / "a100.yaml").write_text(
        beta.replace(
            '  selectors:\n    - cel:\n        expression: device.driver == "gpu.nvidia.com"\n', ""
        )
    )
    done = _validate(tmp_path, monkeypatch, "--target", "v1beta2", ".")
    assert "DRA510" not in done.stdout, done.output


def test_one_class_per_mig_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mig.yaml").write_text(
        _class("mig-small", "nvidia.com/mig-1g.10gb")
        + "---\n"
        + _class(
            "mig-3g-40gb.extended.nvidia.com",
            "nvidia.com/mig-3g.40gb",
            "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'",
        )
    )
    done = _validate(tmp_path, monkeypatch, ".")
    assert done.exit_code == 0, done.output  # a warning
    assert (
        "mig.yaml:9:25: DRA324 warning: DeviceClass mig-small maps MIG profile "
        "nvidia.com/mig-1g.10gb but none of its selectors names profile '1g.10gb'"
    ) in done.stdout
    assert done.stdout.count("DRA324") == 1
