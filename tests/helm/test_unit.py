"""The chart pass through the CLI (helm/unit.py): which way a chart takes, what the run
writes and reports for it, and that a chart is written whole or not at all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO
from tests.helpers.cli_runner import invoke

EXAMPLE = REPO / "examples" / "charts" / "inference"

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-triton
spec:
  template:
    spec:
      containers:
        - name: triton
          image: nvcr.io/nvidia/tritonserver:24.08-py3
          resources:
            limits:
              nvidia.com/gpu: {{ .Values.gpu.count }}
"""


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _codes(output: str) -> list[str]:
    return [line.split(" ")[1] for line in output.splitlines() if ": DRA" in line]


def test_the_example_chart_is_migrated_written_and_quiet_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart = tmp_path / "charts" / "inference"
    shutil.copytree(EXAMPLE, chart)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--write", "charts/"])
    assert done.exit_code == 0, done.output
    assert "DRA241" in done.stderr and "DRA203" not in done.stderr
    assert (chart / "templates" / "inference-resourceclaimtemplate.yaml").is_file()
    assert "dra:\n  enabled: false" in (chart / "values.yaml").read_text()
    after = _snapshot(tmp_path)
    again = invoke(["convert", "--check", "charts/"])
    assert again.exit_code == 0, again.output
    assert "DRA203" not in again.stderr and "DRA241" not in again.stderr
    scan = invoke(["scan", "--format", "json", "charts/"])
    data = json.loads(scan.stdout)
    assert [(f["path"], f["code"]) for f in data["findings"]] == [
        ("charts/inference/Chart.yaml", "DRA246")
    ]
    assert "dra.enabled=true renders DRA claims" in data["findings"][0]["message"]
    assert [(c["way"], c["switch"]) for c in data["charts"]] == [("done", "dra.enabled")]
    assert _snapshot(tmp_path) == after


def test_a_chart_given_in_part_is_left_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook passes the staged template alone; the template edit would change the
    values file too, so nothing of the chart is written (DRA249)."""
    _tree(
        tmp_path,
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: serve\nversion: 0.1.0\n",
            "chart/values.yaml": "gpu:\n  count: 1\n",
            "chart/templates/deployment.yaml": DEPLOYMENT,
        },
    )
    before = _snapshot(tmp_path)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--write", "chart/templates/deployment.yaml"])
    assert "DRA249" in done.stderr and "chart/values.yaml" in done.stderr, done.output
    assert "DRA203" in done.stderr  # the line stays reported
    assert _snapshot(tmp_path) == before
    whole = invoke(["convert", "--write", "chart"])
    assert whole.exit_code == 0 and "DRA241" in whole.stderr, whole.output
    assert _snapshot(tmp_path) != before


def test_a_library_chart_and_the_bridge_leave_charts_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(
        tmp_path,
        {
            "lib/Chart.yaml": "apiVersion: v2\nname: gpu-lib\nversion: 0.1.0\ntype: library\n",
            "lib/templates/_pod.tpl": '{{- define "gpu-lib.pod" -}}\n'
            "resources:\n  limits:\n    nvidia.com/gpu: {{ .Values.gpus }}\n{{- end -}}\n",
            "own/Chart.yaml": "apiVersion: v2\nname: serve\nversion: 0.1.0\n",
            "own/values.yaml": "gpu:\n  count: 1\n",
            "own/templates/deployment.yaml": DEPLOYMENT,
        },
    )
    before = _snapshot(tmp_path)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--write", "--strategy", "bridge", "."])
    lines = [line for line in done.stderr.splitlines() if "DRA24" in line]
    assert any(line.startswith("lib/Chart.yaml:1:1: DRA243") for line in lines), done.output
    assert any("library chart" in line for line in lines)
    assert any(line.startswith("own/Chart.yaml:1:1: DRA242") for line in lines), done.output
    assert _snapshot(tmp_path) == before
    report = invoke(["report", "--format", "json", "."])
    charts = json.loads(report.stdout)["plan"]["stages"]["inventory"]["charts"]
    assert sorted((c["root"], c["way"]) for c in charts) == [("lib", "manual"), ("own", "template")]


def test_an_upstream_name_is_bridged_unless_the_configuration_says_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "charts/nim-llm/Chart.yaml": "apiVersion: v2\nname: nim-llm\nversion: 1.3.0\n",
        "charts/nim-llm/values.yaml": "gpu:\n  count: 1\n",
        "charts/nim-llm/templates/deployment.yaml": DEPLOYMENT,
    }
    _tree(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    bridged = invoke(["convert", "charts/"])
    assert "DRA242" in bridged.stderr and "upstream chart nim-llm" in bridged.stderr
    (tmp_path / ".dra-migrate.yaml").write_text("helm:\n  own: [charts/nim-llm]\n")
    own = invoke(["convert", "--config", ".dra-migrate.yaml", "charts/"])
    assert "DRA241" in own.stderr and "DRA242" not in own.stderr, own.output


def test_a_vendored_dependency_is_migrated_through_its_parents_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ollama-helm vendored under an umbrella chart (from a repository, aliased llm): its
    recipe edits the umbrella's values under llm, where the team configures it."""
    fixtures = REPO / "tests" / "fixtures" / "charts"
    shutil.copytree(fixtures / "parent-ollama", tmp_path / "p")
    shutil.copytree(fixtures / "ollama", tmp_path / "p" / "charts" / "ollama")
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--format", "json", "p"])
    data = json.loads(done.stdout)
    ways = [(c["root"], c["way"], c["recipe"]) for c in data["charts"]]
    assert ways == [("p/charts/ollama", "recipe", "ollama")], (ways, done.stderr)
    changed = {f["path"] for f in data["files"] if f["status"] == "changed"}
    assert changed == {"p/values.yaml"}, data["files"]


def test_a_dependency_whose_gpus_only_its_parent_sets_is_migrated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kuberay's ray-cluster vendored with no GPU of its own: the umbrella's values give
    its worker group a GPU. The dependency is migrated (its recipe, through the
    umbrella's values); the umbrella, whose only GPU keys are its dependency's, has no
    way of its own."""
    fixtures = REPO / "tests" / "fixtures" / "charts"
    vendored = tmp_path / "p" / "charts" / "ray-cluster"
    shutil.copytree(fixtures / "ray-cluster", vendored)
    shutil.rmtree(vendored / "ci")
    values = vendored / "values.yaml"
    text = values.read_text().replace("      nvidia.com/gpu: 1  # one GPU a worker\n", "")
    values.write_text(text.replace("      nvidia.com/gpu: 1\n", ""))
    assert "nvidia.com/gpu" not in values.read_text()
    _tree(
        tmp_path / "p",
        {
            "Chart.yaml": "apiVersion: v2\nname: platform\nversion: 0.3.0\ndependencies:\n"
            "  - name: ray-cluster\n    version: 1.7.0\n"
            "    repository: https://ray-project.github.io/kuberay-helm/\n",
            "values.yaml": "ray-cluster:\n  worker:\n    resources:\n      limits:\n"
            "        nvidia.com/gpu: 2\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--format", "json", "p"])
    data = json.loads(done.stdout)
    ways = [(c["root"], c["way"], c["recipe"]) for c in data["charts"]]
    assert ways == [("p/charts/ray-cluster", "recipe", "ray-cluster")], (ways, done.stderr)
    assert "DRA204" not in done.stderr, done.stderr


def test_an_internal_error_in_a_way_leaves_the_chart_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dra_migrate.helm import template_edit

    def broken(*_args: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(template_edit, "plan", broken)
    shutil.copytree(EXAMPLE, tmp_path / "inference")
    before = _snapshot(tmp_path)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--write", "inference"])
    assert done.exception is None, done.exception
    assert "DRA243" in done.stderr and "internal error (KeyError" in done.stderr, done.output
    assert _snapshot(tmp_path) == before


def test_an_upstream_chart_whose_recipe_does_not_fit_is_bridged_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chart a recipe knows but cannot migrate (ollama with MIG devices, or a version
    outside the recipe's range) takes the bridge, and DRA242 says why: not "without a
    DRA switch the recipes know", which is not true of it."""
    folder = tmp_path / "ollama"
    shutil.copytree(FIXTURES / "charts" / "ollama", folder)
    values = folder / "values.yaml"
    values.write_text(
        values.read_text().replace("      enabled: false\n", "      enabled: true\n", 1)
    )
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "ollama"])
    [bridged] = [line for line in done.stderr.splitlines() if "DRA242" in line]
    assert bridged.startswith("ollama/Chart.yaml:1:1: DRA242"), done.output
    assert "the values recipe ollama does not fit its values: ollama.gpu.mig.enabled is set" in (
        bridged
    )
    assert "without a DRA switch" not in bridged
    chart_yaml = folder / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace("version: 1.77.0", "version: 1.55.0"))
    values.write_text(
        values.read_text().replace("      enabled: true\n", "      enabled: false\n", 1)
    )
    done = invoke(["convert", "ollama"])
    [bridged] = [line for line in done.stderr.splitlines() if "DRA242" in line]
    assert "the values recipe for ollama serves versions >=1.56.0, not 1.55.0" in bridged
