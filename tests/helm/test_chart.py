"""``helm/chart.py``: a chart folder read as the chart pass needs it: its values files
in the order helm's users render them, its parent and values key when vendored, and
whether it is an upstream chart (never forked by a template edit)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dra_migrate.convert.mapping import HelmConfig
from dra_migrate.helm import chart
from dra_migrate.report.findings import InputProblem


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _read(root: Path, config: HelmConfig | None = None) -> chart.Chart:
    real = os.path.realpath(root)
    return chart.read(real, str(root), lambda p: Path(p).read_bytes(), config or HelmConfig())


def test_values_files_come_in_the_order_a_chart_is_rendered_with(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "Chart.yaml": "apiVersion: v2\nname: serve\nversion: 1.2.3\nappVersion: '0.9'\n",
            "values-prod.yaml": "gpu: 2\n",
            "values.yaml": "gpu: 1\n",
            "ci/b-values.yaml": "gpu: 4\n",
            "ci/a-values.yaml": "gpu: 3\n",
            "ci/README.md": "not values\n",
            "templates/deployment.yaml": "kind: Deployment\n",
            "templates/_helpers.tpl": '{{- define "x" -}}{{- end -}}\n',
            "templates/NOTES.md": "ignored\n",
            "values.schema.json": "{}\n",
        },
    )
    found = _read(tmp_path)
    names = [os.path.relpath(p, os.path.realpath(tmp_path)) for p in found.values_files]
    assert names == ["values.yaml", "values-prod.yaml", "ci/a-values.yaml", "ci/b-values.yaml"]
    assert [os.path.basename(p) for p in found.templates] == ["_helpers.tpl", "deployment.yaml"]
    assert (found.name, found.version, found.app_version) == ("serve", "1.2.3", "0.9")
    assert found.schema is not None and found.schema.endswith("values.schema.json")
    assert not found.upstream and found.parent is None


def test_a_dependency_fetched_from_a_repository_is_upstream_under_its_alias(
    tmp_path: Path,
) -> None:
    _write(
        tmp_path,
        {
            "Chart.yaml": (
                "apiVersion: v2\nname: platform\nversion: 0.1.0\ndependencies:\n"
                "  - name: ollama\n    version: 1.20.0\n"
                "    repository: https://otwld.github.io/ollama-helm/\n    alias: llm\n"
                "  - name: local\n    version: 0.1.0\n    repository: file://charts/local\n"
            ),
            "charts/ollama/Chart.yaml": "apiVersion: v2\nname: ollama\nversion: 1.20.0\n",
            "charts/local/Chart.yaml": "apiVersion: v2\nname: local\nversion: 0.1.0\n",
        },
    )
    vendored = _read(tmp_path / "charts" / "ollama")
    assert vendored.upstream and "https://otwld.github.io/ollama-helm/" in vendored.why_upstream
    assert vendored.parent == os.path.realpath(tmp_path) and vendored.values_key == "llm"
    local = _read(tmp_path / "charts" / "local")
    assert not local.upstream and local.values_key == "local"  # file://: the team's own


def test_a_known_name_is_upstream_unless_the_configuration_says_own(tmp_path: Path) -> None:
    _write(tmp_path, {"charts/ray-cluster/Chart.yaml": "name: ray-cluster\nversion: 1.3.0\n"})
    root = tmp_path / "charts" / "ray-cluster"
    assert _read(root).upstream
    folder = os.path.realpath(tmp_path)
    own = HelmConfig(own=("charts/ray-cluster",), folder=folder)
    assert not _read(root, own).upstream
    _write(tmp_path, {"vendor/serve/Chart.yaml": "name: serve\nversion: 1.0.0\n"})
    upstream = HelmConfig(upstream=("vendor/",), folder=folder)
    assert _read(tmp_path / "vendor" / "serve", upstream).upstream
    assert not _read(tmp_path / "vendor" / "serve").upstream


def test_a_chart_yaml_that_is_not_a_mapping_is_an_input_problem(tmp_path: Path) -> None:
    _write(tmp_path, {"Chart.yaml": "# a chart\n- name: serve\n"})
    with pytest.raises(InputProblem) as problem:
        _read(tmp_path)
    assert problem.value.finding.code == "DRA004"
    assert (problem.value.finding.line, problem.value.finding.col) == (2, 1)
    assert problem.value.finding.path.endswith("Chart.yaml")
    _write(tmp_path, {"Chart.yaml": "name: [serve\n"})
    with pytest.raises(InputProblem) as broken:
        _read(tmp_path)
    assert broken.value.finding.code == "DRA004"
