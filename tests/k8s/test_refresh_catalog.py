"""scripts/refresh_catalog.py on a small driver tree: what it finds and what it writes."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from dra_migrate.k8s.catalog import CATALOG_DIR, load_catalog
from tests.conftest import FIXTURES, REPO

TREE = FIXTURES / "refresh_catalog" / "nvidia"
COMMIT = "f" * 40


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refresh_catalog", REPO / "scripts" / "refresh_catalog.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["refresh_catalog"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    folder = tmp_path / "catalog"
    shutil.copytree(CATALOG_DIR, folder)
    return folder


def _run(catalog: Path, *extra: str) -> int:
    args = ["nvidia", str(TREE), "--release", "0.6", "--commit", COMMIT, "--catalog", str(catalog)]
    return _script().main([*args, *extra])


def test_it_reads_attributes_kinds_and_the_chart_classes() -> None:
    script = _script()
    found = script.read_checkout(script.DRIVERS["nvidia"], str(TREE))
    assert found.attributes == {
        "type": "string",
        "uuid": "string",
        "productName": "string",
        "cudaComputeCapability": "version",
        "gpuFabricID": "int",
        "parentUUID": "string",
        "profile": "string",
    }  # not the test file's, not the names built at run time
    gpu = next(c for c in found.classes if c["name"] == "gpu.nvidia.com")
    assert gpu["extended_resource_name"] == "nvidia.com/gpu"
    assert gpu["bridges_by_default_on"] == ["v1"]


def test_a_new_release_is_written_with_its_names_and_commit(
    catalog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(catalog, "--check") == 1
    out = capsys.readouterr().out
    assert "gpu.nvidia.com 0.6: publishes gpuFabricID (int), not in the catalog" in out
    assert "gpu.nvidia.com 0.6: no longer publishes brand" in out
    assert (
        "class fabric.gpu.nvidia.com (deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-fabric.yaml) is not catalogued (edit by hand)"
        in out
    )
    assert "partition2" not in out  # built at run time: never called dropped

    assert _run(catalog, "--write") == 0
    load_catalog.cache_clear()
    try:
        written = load_catalog(catalog)
    finally:
        load_catalog.cache_clear()
    info = written.domains["gpu.nvidia.com"]
    assert [r.release for r in info.releases] == ["0.4", "0.5", "0.6"]
    assert info.release("0.6").commit == COMMIT
    assert info.attributes["gpuFabricID"].type == "int"
    assert not info.published_on("gpuFabricID", "0.5") and info.published_on("gpuFabricID", "0.6")
    assert info.published_on("brand", "0.5") and not info.published_on("brand", "0.6")
    assert info.published_on("partition2", "0.6") and info.published_on("uuid", "0.6")
    text = (catalog / "nvidia.yaml").read_text()
    assert "# NVIDIA DRA driver" in text  # what people wrote stays
    readme = (catalog / "README.md").read_text()
    assert f"| nvidia.yaml | gpu.nvidia.com | 0.6 | (not tagged: main) | {COMMIT} |" in readme
    assert _run(catalog, "--check") == 0  # and now it is current


def test_the_bundled_catalog_readme_lists_the_driver_commits() -> None:
    script = _script()
    assert script.readme_current(str(CATALOG_DIR)), "run scripts/refresh_catalog.py --write"
