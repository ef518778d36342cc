"""``--strategy`` and ``strategy:`` in ``convert``, ``--check`` and ``scan``: a bridged pod
spec is left as it is, and the check passes for it only when the bridge is real."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli_runner import Result, invoke

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
SERVE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm-serve
  namespace: inference
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.3
          resources:
            limits:
              nvidia.com/gpu: 1
"""
AMD_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.extended.amd.com
spec:
  selectors:
    - cel:
        expression: device.driver == "gpu.amd.com"
  extendedResourceName: amd.com/gpu
"""


def _run(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    monkeypatch.chdir(root)
    done = invoke([*args[:1], "--jobs", "1", *args[1:]])
    assert done.exception is None, done.output
    return done


def _codes(done: Result) -> list[str]:
    return [line.split(": ")[1].split()[0] for line in done.output.splitlines() if ": DRA" in line]


def test_check_passes_on_a_bridge_a_repository_class_makes_real(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rocm-pod.yaml").write_text(ROCM)
    (tmp_path / "platform").mkdir()
    (tmp_path / "platform" / "amd.yaml").write_text(AMD_CLASS)
    done = _run(tmp_path, monkeypatch, "convert", "--check", "--strategy", "bridge",
                "--kube-version", "1.36", ".")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert (
        "rocm-pod.yaml:11:11: DRA514 info: Pod/rocm-smoke-test is bridged, left as it is "
        "(--strategy bridge); DeviceClass gpu.extended.amd.com (platform/amd.yaml:9) maps "
        "amd.com/gpu"
    ) in done.stderr
    assert (tmp_path / "rocm-pod.yaml").read_text() == ROCM
    # --write leaves it as it is too
    done = _run(tmp_path, monkeypatch, "convert", "--write", "--strategy", "bridge",
                "--kube-version", "1.36", "rocm-pod.yaml", "--context", ".")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert (tmp_path / "rocm-pod.yaml").read_text() == ROCM


def test_check_fails_without_a_class_and_before_1_36(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rocm-pod.yaml").write_text(ROCM)
    done = _run(tmp_path, monkeypatch, "convert", "--check", "--strategy", "bridge",
                "--kube-version", "1.36", ".")  # fmt: skip
    assert done.exit_code == 1, done.output
    assert _codes(done) == ["DRA515"]
    assert "no DeviceClass maps amd.com/gpu" in done.stderr
    (tmp_path / "platform.yaml").write_text(AMD_CLASS)
    for kube, reason in (("1.35", "alpha and off by default"), ("1.33", "no extendedResource")):
        target = ["--target", "v1beta2"] if kube == "1.33" else []
        done = _run(tmp_path, monkeypatch, "convert", "--check", "--strategy", "bridge",
                    "--kube-version", kube, *target, ".")  # fmt: skip
        assert done.exit_code == 1, done.output
        assert "DRA516" in _codes(done) and "DRA515" not in _codes(done), done.output
        assert reason in done.stderr
    done = _run(tmp_path, monkeypatch, "convert", "--check", "--strategy", "bridge", ".")
    assert done.exit_code == 1 and _codes(done) == ["DRA516"], done.output
    assert "cluster version unknown" in done.stderr


def test_the_driver_class_bridges_nvidia_gpu_only_on_v1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "serve.yaml").write_text(SERVE)
    done = _run(tmp_path, monkeypatch, "convert", "--check", "--strategy", "auto",
                "--kube-version", "1.36", ".")  # fmt: skip
    assert done.exit_code == 0 and _codes(done) == ["DRA514"], done.output
    assert "DeviceClass gpu.nvidia.com (installed by its driver) maps nvidia.com/gpu" in (
        done.stderr
    )
    assert done.stderr.endswith(
        "dra-migrate: 1 workload(s) bridged: left on their extended resource, served through "
        "a DeviceClass with extendedResourceName (DRA514).\n"
        "dra-migrate: next: nothing to do: every GPU request left is served through the bridge.\n"
    )
    # auto on 1.35 rewrites (the check fails: a file would change), bridge fails
    done = _run(tmp_path, monkeypatch, "convert", "--check", "--strategy", "auto",
                "--kube-version", "1.35", ".")  # fmt: skip
    assert done.exit_code == 1 and "DRA401" in _codes(done), done.output
    done = _run(tmp_path, monkeypatch, "convert", "--check", "--strategy", "bridge",
                "--kube-version", "1.36", "--target", "v1beta2", ".")  # fmt: skip
    assert done.exit_code == 1, done.output
    assert set(_codes(done)) >= {"DRA515", "DRA516"}


def test_a_per_workload_override_beats_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "serve.yaml").write_text(SERVE)
    (tmp_path / "rocm-pod.yaml").write_text(ROCM)
    (tmp_path / ".dra-migrate.yaml").write_text(
        "strategy:\n  default: bridge\n  workloads:\n    Pod/rocm-*: rewrite\n"
    )
    done = _run(tmp_path, monkeypatch, "convert", "--kube-version", "1.36", ".")
    assert done.exit_code == 0, done.output
    assert "+      resourceClaimTemplateName: rocm-smoke-test-gpu" in done.stdout
    assert "serve.yaml" not in done.stdout  # bridged: no diff
    assert "DRA514" in _codes(done)
    # the flag replaces the default (serve.yaml is rewritten), never the override
    done = _run(tmp_path, monkeypatch, "convert", "--strategy", "bridge", "--kube-version",
                "1.36", ".")  # fmt: skip
    assert "resourceClaimTemplateName: rocm-smoke-test" in done.stdout
    done = _run(tmp_path, monkeypatch, "convert", "--strategy", "rewrite", "--kube-version",
                "1.36", ".")  # fmt: skip
    assert "resourceClaimTemplateName: llm-serve" in done.stdout
    assert "resourceClaimTemplateName: rocm-smoke-test" in done.stdout


def test_the_configured_deviceclasses_file_and_the_context_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook run names one file: the class is found in the file ``strategy.deviceClasses``
    names, or in --context."""
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    (repo / "apps" / "rocm-pod.yaml").write_text(ROCM)
    (tmp_path / "platform").mkdir()
    (tmp_path / "platform" / "classes.yaml").write_text(AMD_CLASS)
    args = ("convert", "--check", "--strategy", "bridge", "--kube-version", "1.36")
    assert _run(repo, monkeypatch, *args, "apps/rocm-pod.yaml").exit_code == 1
    done = _run(repo, monkeypatch, *args, "--context", "../platform", "apps/rocm-pod.yaml")
    assert done.exit_code == 0 and _codes(done) == ["DRA514"], done.output
    (repo / ".dra-migrate.yaml").write_text(
        "strategy:\n  deviceClasses: ../platform/classes.yaml\n"
    )
    configured = ("--config", ".dra-migrate.yaml", "apps/rocm-pod.yaml")
    done = _run(repo, monkeypatch, *args, *configured)
    assert done.exit_code == 0 and _codes(done) == ["DRA514"], done.output
    # a file named there that does not exist serves nothing
    (repo / ".dra-migrate.yaml").write_text("strategy:\n  deviceClasses: ../platform/gone.yaml\n")
    assert _run(repo, monkeypatch, *args, *configured).exit_code == 1


def test_stdin_and_scan_say_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    stream = f"{AMD_CLASS}---\n{ROCM}".encode()
    done = invoke(["convert", "--strategy", "bridge", "--kube-version", "1.36", "-"], input=stream)
    assert done.exit_code == 0, done.output
    assert done.stdout_bytes == stream  # the stream passes through unchanged
    assert "-:21:11: DRA514" in done.stderr
    (tmp_path / "rocm-pod.yaml").write_text(ROCM)
    done = _run(
        tmp_path, monkeypatch, "scan", "--strategy", "bridge", "--kube-version", "1.36", "."
    )
    assert done.exit_code == 0 and "DRA515" in _codes(done), done.output


def test_a_repository_class_a_driver_class_duplicates_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "serve.yaml").write_text(SERVE)
    (tmp_path / "a100.yaml").write_text(
        AMD_CLASS.replace("gpu.extended.amd.com", "a100.nvidia.com").replace(
            "amd.com/gpu", "nvidia.com/gpu"
        )
    )
    done = _run(tmp_path, monkeypatch, "convert", "--check", "--strategy", "auto",
                "--kube-version", "1.36", ".")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert (
        "a100.yaml:9:25: DRA517 warning: DeviceClass a100.nvidia.com maps nvidia.com/gpu, "
        "which the class its driver installs maps already"
    ) in done.stderr
    # the default strategy rewrites: nothing about bridges is read
    done = _run(tmp_path, monkeypatch, "convert", "--check", "--kube-version", "1.36", ".")
    assert "DRA517" not in done.stderr and "DRA401" in done.stderr
