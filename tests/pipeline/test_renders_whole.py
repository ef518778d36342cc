"""``convert --verify-helm`` proves whole objects (issue 39): every field of every
object up to the names a chart gives its own claims, so a recipe writes what
``convert`` writes (the toleration ExtendedResourceToleration gave the pod, DRA224;
Ray's num-gpus); a proof that cannot render (a count key that is a map) is not a
proof, and nothing is written unless ``--accept-unproven``.

The charts are the reduced real ones of tests/fixtures/charts (SOURCE beside each),
run through the CLI with the real helm."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from dra_migrate.pipeline import renders
from tests.conftest import FIXTURES, REPO
from tests.helpers.cli_runner import invoke

CHARTS = FIXTURES / "charts"
EXAMPLE = REPO / "examples" / "charts" / "inference"


@pytest.fixture
def helm(tools: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    found = shutil.which("helm")
    if found is None:
        pytest.skip("helm is not installed: scripts/install-test-tools.sh installs it")
    return found


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--verify-helm", "--jobs", "1", *args, "."])
    assert "Traceback" not in done.output, done.output
    return done.exit_code, done.stderr


def test_ollama_amd_gets_the_toleration_convert_writes(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ollama-helm with type amd: the chart writes no toleration of amd.com/gpu (only
    of nvidiaResource, for type nvidia); convert - of the rendering before writes one
    (DRA224), so the recipe extends the values' tolerations with it, and the proof,
    which compares the tolerations too, holds."""
    chart = tmp_path / "ollama"
    shutil.copytree(CHARTS / "ollama", chart)
    values = chart / "values.yaml"
    values.write_text(values.read_text().replace("type: 'nvidia'", "type: 'amd'"))
    status, err = _run(tmp_path, monkeypatch, "--write")
    assert "DRA245 info: chart ollama 1.77.0 (recipe)" in err, err
    assert "DRA244" not in err and "DRA248" not in err, err
    assert status == 0, err
    written = yaml.safe_load(values.read_text())
    assert written["tolerations"] == [
        {"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert written["ollama"]["gpu"]["draDriverClass"] == "gpu.amd.com"


def test_ollama_nvidia_keeps_the_charts_own_toleration(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For type nvidia the chart writes the toleration itself: nothing is added."""
    chart = tmp_path / "ollama"
    shutil.copytree(CHARTS / "ollama", chart)
    status, err = _run(tmp_path, monkeypatch, "--write")
    assert "DRA245 info: chart ollama 1.77.0 (recipe)" in err and status == 0, err
    assert "tolerations" not in (yaml.safe_load((chart / "values.yaml").read_text()) or {}) or (
        yaml.safe_load((chart / "values.yaml").read_text())["tolerations"] in ([], None)
    )


def test_llm_d_is_proven_through_a_count_that_is_not_a_map(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """llm-d-modelservice: the roles get the toleration, and the decode role's GPU
    count (dataLocal x tensor) is raised through decode.parallelism.tensor, not
    decode.parallelism (a map helm's --set would replace: the rendering fails)."""
    chart = tmp_path / "llm-d-modelservice"
    shutil.copytree(CHARTS / "llm-d-modelservice", chart)
    status, err = _run(tmp_path, monkeypatch, "--write")
    assert (
        "DRA245 info: chart llm-d-modelservice v0.4.12 (recipe): 2 rendering(s) proven "
        "(default values, --set decode.parallelism.tensor=3; compare: claims)"
    ) in err, err
    assert "DRA248" not in err and status == 0, err
    written = yaml.safe_load((chart / "values.yaml").read_text())
    toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    assert written["decode"]["tolerations"] == [toleration]
    assert written["prefill"]["tolerations"] == [toleration]


def test_ray_cluster_is_proven_with_the_templates_it_applies_beside(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kuberay's ray-cluster renders no ResourceClaimTemplate: the recipe writes them
    beside the values, and the proof adds those the release's pods name to the
    rendering after (they are applied with it)."""
    chart = tmp_path / "ray-cluster"
    shutil.copytree(CHARTS / "ray-cluster", chart)
    status, err = _run(tmp_path, monkeypatch, "--write")
    assert "DRA245 info: chart ray-cluster 1.7.0 (recipe): 3 rendering(s) proven" in err, err
    assert "DRA244" not in err and status == 0, err
    assert (chart / "resourceclaimtemplates-dra.yaml").is_file()


def test_a_count_key_that_is_a_map_is_named() -> None:
    values = {"decode": {"parallelism": {"tensor": 2}}, "gpu": {"count": "2"}}
    assert renders._raise(values, "gpu.count") == "--set gpu.count=3"
    assert renders._raise(values, "decode.parallelism.tensor") == (
        "--set decode.parallelism.tensor=3"
    )
    assert renders._raise(values, "decode.parallelism") == (
        "its GPU count key decode.parallelism holds a map in values.yaml: --set "
        "decode.parallelism=N would replace it whole, so the count cannot be raised through it"
    )
    # keys that hold one count are raised together
    assert renders._raise({"a": {"l": 1, "r": 1}}, "a.l,a.r") == "--set a.l=2,a.r=2"


def _unrenderable(tmp_path: Path) -> Path:
    """The example chart with a dependency missing from charts/: helm cannot render it."""
    chart = tmp_path / "charts" / "inference"
    shutil.copytree(EXAMPLE, chart)
    with (chart / "Chart.yaml").open("a") as handle:
        handle.write(
            "dependencies:\n  - name: redis\n    version: 18.x\n"
            "    repository: https://charts.bitnami.com/bitnami\n"
        )
    return chart


def test_a_chart_the_proof_cannot_render_is_not_written(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart = _unrenderable(tmp_path)
    before = {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()}
    status, err = _run(tmp_path, monkeypatch, "--write")
    assert "DRA248 warning: chart inference" in err, err
    assert "nothing is written: a proof that cannot render is not a proof" in err, err
    assert "DRA291 error: nothing is written: 1 chart(s) of the run not proven" in err, err
    assert status == 1, err
    assert {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()} == before


def test_accept_unproven_writes_it_unchecked(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart = _unrenderable(tmp_path)
    deployment = (chart / "templates" / "deployment.yaml").read_bytes()
    status, err = _run(tmp_path, monkeypatch, "--write", "--accept-unproven")
    assert "DRA248 warning: chart inference" in err and status == 0, err
    assert (chart / "templates" / "deployment.yaml").read_bytes() != deployment


def test_accept_unproven_needs_verify_helm(tmp_path: Path) -> None:
    done = invoke(["convert", "--accept-unproven", str(tmp_path)])
    assert done.exit_code == 2, done.output
    assert "--accept-unproven is for --verify-helm" in done.stderr, done.stderr


def _ollama(tmp_path: Path, gpus: bool = True, kind: str = "nvidia") -> Path:
    chart = tmp_path / "ollama"
    shutil.copytree(CHARTS / "ollama", chart)
    values = chart / "values.yaml"
    text = values.read_text()
    if not gpus:  # as upstream: GPUs off, turned on at install time with --set
        text = text.replace("    enabled: true\n", "    enabled: false\n", 1)
    values.write_text(text.replace("type: 'nvidia'", f"type: '{kind}'"))
    return chart


def test_ollama_with_gpus_off_gets_its_switch_and_is_proven_with_them_on(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GPUs off in values.yaml: setting the chart's own switch renders the same bytes
    while they are off and claims once they are on, so the recipe sets it (not the
    bridge), and the proof renders a variant with them on."""
    chart = _ollama(tmp_path, gpus=False)
    status, err = _run(tmp_path, monkeypatch, "--write")
    assert "DRA242" not in err and status == 0, err
    assert "--set ollama.gpu.enabled=true, --set ollama.gpu.enabled=true,ollama.gpu.number=" in (
        err
    ), err
    gpu = yaml.safe_load((chart / "values.yaml").read_text())["ollama"]["gpu"]
    assert gpu["enabled"] is False and gpu["draEnabled"] is True


def test_ollama_amd_with_gpus_off_is_told_why_not(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For amd the pod needs the toleration convert writes, which the chart renders
    whether GPUs are on or not: the recipe does not fit, and says so."""
    _ollama(tmp_path, gpus=False, kind="amd")
    _status, err = _run(tmp_path, monkeypatch, "--check")
    assert "DRA242 warning: chart ollama 1.77.0 is left on the device plugin" in err, err
    assert "GPUs are off (ollama.gpu.enabled) and the pod would need the toleration" in (
        " ".join(err.split())
    ), err


def test_a_job_the_charts_switch_does_not_cover_is_named(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ollama 1.77's ci/test-knative-values.yaml renders the Knative model bootstrap Job,
    which asks for nvidia.com/gpu whatever ollama.gpu.draEnabled says: DRA244 names the
    Job, not a defect of the tool."""
    chart = _ollama(tmp_path)
    shutil.copytree(CHARTS / "ollama-knative", chart, dirs_exist_ok=True)
    (chart / "SOURCE").unlink()
    _status, err = _run(tmp_path, monkeypatch, "--check")
    flat = " ".join(err.split())
    assert (
        "with -f ci/test-knative-values.yaml: Job dra-migrate/release-ollama-model-bootstrap"
        in (flat)
    ), err
    assert "still asks for nvidia.com/gpu after the migration" in flat, err
    assert "the chart's DRA switch does not cover it" in flat, err
    assert "please report" not in flat, err
