"""The benchmark script runs (tiny sizes), so that it cannot rot. Not a timed test:
the figures live in docs/performance.md."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

BENCH = REPO / "benchmarks" / "bench.py"


def _bench() -> object:
    spec = importlib.util.spec_from_file_location("bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench"] = module
    spec.loader.exec_module(module)
    return module


def test_generated_repository_has_the_promised_shape(tmp_path: Path) -> None:
    bench = _bench()
    bench.generate(tmp_path, 50, 1, bundle_mb=1.1)  # type: ignore[attr-defined]
    manifests = sorted((tmp_path / "apps").rglob("*.yaml"))
    assert len(manifests) == 50
    assert sum(b"nvidia.com/gpu" in p.read_bytes() for p in manifests) == 5
    assert (tmp_path / "charts" / "chart0" / "templates" / "deployment.yaml").is_file()
    assert (tmp_path / "kustomize" / "app0" / "overlays" / "prod" / "gpu.yaml").is_file()
    [bundle] = (tmp_path / "install").rglob("bundle.yaml")
    text = bundle.read_text()
    assert len(text) >= 1_000_000 and "nvidia.com/gpu" in text
    assert "kind: CustomResourceDefinition" in text and "nvidia.com/gpu: " not in text
    # what real bundles have: look-alikes the needles catch, template text in strings
    assert "custom.com/gpu" in text and "example.com/gpu" in text
    from dra_migrate.manifests import sources, templates

    source = sources.decode("bundle.yaml", text.encode())
    assert 21 <= sum(1 for _ in templates._template_actions(text)) <= 89
    assert not templates.is_template(source)
    [rules] = (tmp_path / "install").rglob("gpu-alerts.yaml")
    assert rules.read_text().count("{{ $labels") >= 3000


def test_benchmark_runs_and_prints_ratios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = _bench()
    real = tmp_path / "snapshot"  # --real-repo: any folder of manifests
    real.mkdir()
    (real / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        image: x\n"
        "        resources:\n          limits:\n            nvidia.com/gpu: 1\n"
    )
    argv = ["--files", "20", "--bundles", "1", "--bundle-mb", "1", "--big-mb", "1"]
    argv += ["--template-actions", "320", "--real-repo", str(real)]
    argv += [
        "--stream-docs",
        "20",
        "--pods",
        "5",
        "--repeat",
        "1",
        "--no-corpus",
        "--json",
        str(tmp_path / "b.json"),
    ]
    assert bench.main(argv) == 0  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    for what in ("convert --check", "scan, no GPU requests", "pre-commit hook on one file with"):
        assert what in out
    assert "scan, kserve-like" in out and "convert - (stdin), 20 documents" in out
    assert "scan, with GPU requests" in out and "empty cache folder" in out
    assert "scan of an empty folder (the tool's start-up)" in out
    assert "(vs read as a process)" in out  # scan's targets: start-up on both sides
    assert "actions in one file" in out and "scan, snapshot (real)" in out
    assert "the same C loader as a process" in out and "one-GPU Pods in one file" in out
    assert "convert -j 1, 20 in one file" in out  # --pods 5: 5 and 20 Pods
    assert "<= 0.5" in out and ("met" in out or "MISSED" in out)
    assert (tmp_path / "b.json").read_text().startswith("[")


def test_start_up_rows_against_the_peers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--only startup_against_peers``: the hook on a file with and without a GPU
    request, each against black --check on a module of that size, beside yamllint."""
    bench = _bench()
    argv = ["--files", "20", "--repeat", "1", "--only", "startup_against_peers"]
    assert bench.main([*argv, "--keep", str(tmp_path / "work")]) == 0  # type: ignore[attr-defined]
    out, err = capsys.readouterr()
    if importlib.util.find_spec("black") is None or importlib.util.find_spec("yamllint") is None:
        assert "rows are skipped" in err and "the hook on one file" not in out
        return
    for label in ("with a GPU request", "without one"):
        assert f"the hook on one file {label}" in out
    assert out.count("black --check, a formatted module of") == 2
    assert out.count("yamllint on the same file") == 2
    assert out.count("(vs black --check)") == 2  # a target each: met or MISSED
    assert "convert --check" not in out  # the other rows did not run
    # the module black checks is formatted: black's run is a pre-commit run on a clean file
    [module, *_] = sorted((tmp_path / "work").glob("peer-*.py"))
    black = subprocess.run([sys.executable, "-m", "black", "--check", "-q", str(module)])
    assert black.returncode == 0


def test_schema_baselines_run_on_dra_objects(tmp_path: Path) -> None:
    """The validate row's baselines (jsonschema, and the tool's compiled check) read the
    bundled schemas: held here too, since the runs above leave the DRA corpus out."""
    bench = _bench()
    claim = tmp_path / "claim.yaml"
    claim.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
        "metadata:\n  name: gpu\nspec:\n  spec:\n    devices:\n      requests:\n"
        "      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n"
    )
    for reference in (True, False):
        seconds = bench.schema_baseline([claim], reference=reference)  # type: ignore[attr-defined]
        assert seconds > 0
    # the same check as a process, the validate row's target baseline (a failing script
    # raises: run_process checks the exit status)
    script, here = bench._SCHEMA_PROCESS, bench.HERE  # type: ignore[attr-defined]
    command = [sys.executable, "-c", script, here, str(claim)]
    seconds, _peak = bench.run_process(command, tmp_path)  # type: ignore[attr-defined]
    assert seconds > 0
