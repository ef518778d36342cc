"""A file named on the command line is always read, checked and counted (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli_runner import invoke

BROKEN_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  labels: {team: [ml}
spec:
  containers:
  - name: c
    image: registry.example.com/cuda:12
    resources:
      limits:
        nvidia.com/gpu: 1
"""

CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"


@pytest.mark.parametrize("command", [["validate"], ["convert", "--check"]])
def test_a_named_pod_with_a_yaml_error_is_dra004_and_exit_123(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    (tmp_path / "broken.yaml").write_text(BROKEN_POD)
    monkeypatch.chdir(tmp_path)
    done = invoke([*command, "broken.yaml"])
    assert done.exit_code == 123, done.output
    assert "broken.yaml:5:21: DRA004 error: malformed YAML" in done.stderr + done.stdout


def test_validate_counts_every_file_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken.yaml").write_text(BROKEN_POD)
    (tmp_path / "settings.yaml").write_text(CONFIG_MAP)
    monkeypatch.chdir(tmp_path)
    done = invoke(["validate", "broken.yaml", "settings.yaml"])
    assert "dra-migrate validate: 2 file(s) checked, 1 unreadable; 1 error(s)" in done.stdout
    clean = invoke(["validate", "settings.yaml"])
    assert clean.exit_code == 0
    assert "dra-migrate validate: 1 file(s) checked, 0 unreadable" in clean.stdout


def test_convert_counts_a_named_file_without_gpus_as_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "settings.yaml").write_text(CONFIG_MAP)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "settings.yaml"])
    assert done.exit_code == 0
    assert "0 file(s) would be converted, 1 unchanged" in done.stderr


def test_a_hook_run_checks_the_staged_file_with_the_context_around_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "broken.yaml").write_text(BROKEN_POD)
    (tmp_path / "deploy" / "settings.yaml").write_text(CONFIG_MAP)
    monkeypatch.chdir(tmp_path)
    done = invoke(["validate", "--context", ".", "--", "deploy/broken.yaml"])
    assert done.exit_code == 123 and "deploy/broken.yaml:5:21: DRA004" in done.stdout
    assert "1 file(s) checked" in done.stdout
