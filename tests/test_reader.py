"""The reader through the CLI: every reader applies Kubernetes' limits, and what
Kubernetes resolves (merge keys) is what the commands see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dra_migrate.cli import main
from tests.test_load import ALIAS_BOMB

POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: c
      image: x
      resources:
        limits: {<<: &gpulim {nvidia.com/gpu: 1}, memory: 1Gi}
"""
CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: t
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly: {deviceClassName: gpu.nvidia.com}
"""


def _invoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_gpu_limit_through_a_merge_key_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kubernetes resolves ``<<``: the pod asks for a GPU. scan counts it; convert
    refuses to edit the shared block (DRA008) instead of missing it."""
    (tmp_path / "pod.yaml").write_text(POD)
    code, out = _invoke(tmp_path, monkeypatch, ["scan", "--format", "json", "pod.yaml"])
    report = json.loads(out)
    assert [(i["resource"], i["count"]) for i in report["inventory"]] == [("nvidia.com/gpu", 1)]
    code, out = _invoke(tmp_path, monkeypatch, ["convert", "pod.yaml"])
    assert code != 0 and "DRA008" in out


@pytest.mark.parametrize("where", ["manifest", "config", "slices", "validate"])
def test_alias_bomb_is_refused_by_every_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    bomb = ALIAS_BOMB + "kind: Pod\nnote: nvidia.com/gpu resource.k8s.io ResourceClaimTemplate\n"
    (tmp_path / "ok.yaml").write_text(CLAIM)
    if where == "manifest":
        (tmp_path / "bomb.yaml").write_text(bomb)
        code, out = _invoke(tmp_path, monkeypatch, ["scan", "bomb.yaml"])
    elif where == "config":
        (tmp_path / ".dra-migrate.yaml").write_text(ALIAS_BOMB)
        code, out = _invoke(tmp_path, monkeypatch, ["scan", "ok.yaml"])
        assert code == 2
    elif where == "slices":
        (tmp_path / "slices.yaml").write_text(ALIAS_BOMB)
        code, out = _invoke(
            tmp_path, monkeypatch, ["validate", "--resource-slices", "slices.yaml", "ok.yaml"]
        )
        assert code == 2
    else:
        (tmp_path / "bomb.yaml").write_text(bomb)
        code, out = _invoke(tmp_path, monkeypatch, ["validate", "bomb.yaml"])
    assert code != 0
    assert "DRA030" in out or "excessive aliasing" in out, out


def test_deeply_nested_resource_slices_are_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ok.yaml").write_text(CLAIM)
    (tmp_path / "slices.json").write_text("[" * 100_000)
    code, out = _invoke(
        tmp_path, monkeypatch, ["validate", "--resource-slices", "slices.json", "ok.yaml"]
    )
    assert code == 2 and "slices.json:1:" in out and "nesting" in out
