"""The classes the plan and ``deviceclasses`` create follow the one strategy decision:
the configuration's ``strategy:`` counts, and a name a DeviceClass of the repository (or
the driver's class, on v1) maps already gets no class of its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli_runner import invoke

ROCM = """\
apiVersion: v1
kind: Pod
metadata:
  name: rocm-smoke-test
spec:
  containers:
    - name: rocm
      image: rocm/rocm-terminal:6.2
      resources:
        limits:
          amd.com/gpu: 1
"""
AMD_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: rocm-bridge.example.com
spec:
  selectors:
    - cel:
        expression: device.driver == "gpu.amd.com"
  extendedResourceName: amd.com/gpu
"""


def _plan(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> dict[str, Any]:
    monkeypatch.chdir(root)
    done = invoke(["report", "--jobs", "1", "--format", "json", *args, "."])
    assert done.exception is None, done.output
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_a_repository_class_is_not_planned_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rocm.yaml").write_text(ROCM)
    options = ("--strategy", "bridge", "--kube-version", "1.36")
    plan = _plan(tmp_path, monkeypatch, *options)["plan"]
    rocm = plan["stages"]["inventory"]["workloads"][0]
    assert rocm["strategy"] == "manual" and "DRA515" in rocm["reasons"][0]
    assert [c["extendedResourceName"] for c in plan["stages"]["deviceClasses"]["create"]] == [
        "amd.com/gpu"
    ]  # the class to create, so that the bridge becomes real
    (tmp_path / "classes.yaml").write_text(AMD_CLASS)
    plan = _plan(tmp_path, monkeypatch, *options)["plan"]
    assert plan["stages"]["inventory"]["workloads"][0]["strategy"] == "bridge"
    assert plan["stages"]["deviceClasses"]["create"] == []
    assert plan["stages"]["pilot"]["workloads"] == ["Pod/rocm-smoke-test (spec)"]


def test_deviceclasses_follows_the_configured_strategy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".dra-migrate.yaml").write_text("strategy:\n  resources:\n    amd.com/*: bridge\n")
    done = invoke(["deviceclasses", "--whole-mapping", "--config", ".dra-migrate.yaml"])
    assert done.exit_code == 0, done.output
    assert 'extendedResourceName: "amd.com/gpu"' in done.stdout
    assert "nvidia.com/gpu" not in done.stdout  # rewritten: no bridge class
    # --strategy bridge: every literal name, but nvidia.com/gpu is the driver's on v1
    done = invoke(
        [
            "deviceclasses",
            "--whole-mapping",
            "--config",
            ".dra-migrate.yaml",
            "--strategy",
            "bridge",
        ]
    )
    assert 'extendedResourceName: "nvidia.com/gpu"' not in done.stdout, done.output
    # on v1beta2 the driver's class maps nothing (its chart sets it only on v1): no DRA510
    # against it, and the class the bridge would need is one v1beta2 cannot hold (DRA501)
    done = invoke(
        [
            "deviceclasses",
            "--whole-mapping",
            "--strategy",
            "bridge",
            "--target",
            "v1beta2",
            "--kube-version",
            "1.33",
        ]
    )
    assert "DRA510" not in done.output
    assert "DeviceClass gpu.extended.nvidia.com fails the resource.k8s.io/v1beta2 schema" in (
        done.output
    )
