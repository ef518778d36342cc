"""action.yml: the steps of the composite GitHub Action, run with bash as a runner would.

The setup and upload steps are GitHub's own actions; the shell steps are run
here with the environment a runner gives them, and a dra-migrate that runs
this checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = {step.get("name", step.get("uses", "")): step for step in ACTION["runs"]["steps"]}

LEGACY = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: registry.example.com/train:1
        resources:
          limits:
            nvidia.com/gpu: 8
"""


def test_inputs_and_steps() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert {"paths", "command", "format", "fail-on", "upload-sarif", "changed-since"} <= set(
        ACTION["inputs"]
    )
    assert ACTION["inputs"]["format"]["default"] == "github"
    uses = [step.get("uses", "") for step in ACTION["runs"]["steps"]]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    assert "pip install" in STEPS["Install dra-migrate"]["run"]


def _inputs(**given: str) -> dict[str, str]:
    defaults = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    return {**defaults, **given}


def _run_step(name: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    return subprocess.run(
        ["bash", "-e", "-c", STEPS[name]["run"]],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def runner(tmp_path: Path) -> dict[str, Path]:
    """RUNNER_TEMP with the venv the install step would make, running this checkout."""
    temp = tmp_path / "runner-temp"
    bin_dir = temp / "dra-migrate-venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    tool = bin_dir / "dra-migrate"
    tool.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m dra_migrate "$@"\n')
    tool.chmod(0o755)
    work = tmp_path / "workspace"
    (work / "k8s").mkdir(parents=True)
    (work / "k8s" / "train.yaml").write_text(LEGACY)
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    return {"temp": temp, "work": work, "output": tmp_path / "output", "summary": tmp_path / "sum"}


def _env(runner: dict[str, Path], inputs: dict[str, str]) -> dict[str, str]:
    return {
        "RUNNER_TEMP": str(runner["temp"]),
        "GITHUB_OUTPUT": str(runner["output"]),
        "GITHUB_STEP_SUMMARY": str(runner["summary"]),
        "GITHUB_WORKSPACE": str(runner["work"]),
        "DRA_PATHS": inputs["paths"],
        "DRA_COMMAND": inputs["command"],
        "DRA_FORMAT": inputs["format"],
        "DRA_FAIL_ON": inputs["fail-on"],
        "DRA_CHANGED_SINCE": inputs["changed-since"],
        "DRA_UPLOAD_SARIF": inputs["upload-sarif"],
        "DRA_ARGS": inputs["args"],
        "DRA_STRATEGY": inputs["strategy"],
        "DRA_KUBE_VERSION": inputs["kube-version"],
    }


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def test_run_annotates_summarises_and_fails_on_a_request_left(runner: dict[str, Path]) -> None:
    env = _env(runner, _inputs(paths="k8s", **{"upload-sarif": "true"}))
    done = _run_step("Run dra-migrate", env, runner["work"])
    assert done.returncode == 0, done.stderr  # the threshold is applied by the last step
    assert "::error file=k8s/train.yaml,line=14,col=13,title=DRA401" in done.stdout
    outputs = _outputs(runner["output"])
    assert outputs["exit-code"] == "1"
    sarif = Path(outputs["sarif-file"])
    assert sarif.is_file() and sarif.is_relative_to(runner["temp"])  # never in the checkout
    assert runner["summary"].read_text().startswith("### :x: dra-migrate convert")
    threshold = _run_step(
        "Apply the failure threshold",
        {"DRA_FAIL_ON": "error", "DRA_STATUS": outputs["exit-code"], "DRA_WARNINGS": "0"},
        runner["work"],
    )
    assert threshold.returncode == 1
    never = _run_step(
        "Apply the failure threshold",
        {"DRA_FAIL_ON": "never", "DRA_STATUS": "1", "DRA_WARNINGS": "0"},
        runner["work"],
    )
    assert never.returncode == 0


def test_a_bridged_workload_passes_the_check(runner: dict[str, Path]) -> None:
    """strategy: bridge with a Kubernetes version that serves it: the workload is left as
    it is (a notice), and the check passes; the same before 1.36 fails with DRA516."""
    inputs = _inputs(paths="k8s", strategy="bridge", **{"kube-version": "1.36"})
    done = _run_step("Run dra-migrate", _env(runner, inputs), runner["work"])
    assert done.returncode == 0, done.stderr
    assert "::notice file=k8s/train.yaml,line=14,col=13,title=DRA514" in done.stdout
    assert _outputs(runner["output"])["exit-code"] == "0"
    inputs = _inputs(paths="k8s", strategy="bridge", **{"kube-version": "1.35"})
    done = _run_step("Run dra-migrate", _env(runner, inputs), runner["work"])
    assert "title=DRA516" in done.stdout, done.stdout
    assert _outputs(runner["output"])["exit-code"] == "1"
    inputs = _inputs(paths="k8s", strategy="sometimes")
    done = _run_step("Run dra-migrate", _env(runner, inputs), runner["work"])
    assert done.returncode == 2 and "strategy must be rewrite, bridge or auto" in done.stdout


def test_warning_threshold(runner: dict[str, Path]) -> None:
    (runner["work"] / "k8s" / "train.yaml").write_text(
        LEGACY.replace("nvidia.com/gpu: 8", "example.com/fpga: 1")
    )
    config = "version: 1\ndetect:\n  - example.com/*\n"
    (runner["work"] / ".dra-migrate.yaml").write_text(config)
    env = _env(runner, _inputs(paths="k8s", command="scan", **{"fail-on": "warning"}))
    done = _run_step("Run dra-migrate", env, runner["work"])
    assert done.returncode == 0, done.stderr
    outputs = _outputs(runner["output"])
    assert outputs["exit-code"] == "0" and outputs["warnings"] == "1"
    threshold = _run_step(
        "Apply the failure threshold",
        {"DRA_FAIL_ON": "warning", "DRA_STATUS": "0", "DRA_WARNINGS": outputs["warnings"]},
        runner["work"],
    )
    assert threshold.returncode == 1
    assert "fail-on: warning" in threshold.stdout


def test_bad_inputs_are_reported(runner: dict[str, Path]) -> None:
    env = _env(runner, _inputs(command="fix"))
    done = _run_step("Run dra-migrate", env, runner["work"])
    assert done.returncode == 2
    assert "::error title=dra-migrate::command must be" in done.stdout


def test_a_committed_sarif_file_is_never_uploaded(runner: dict[str, Path]) -> None:
    """The SARIF run fails (here: a usage error): nothing is uploaded, least of all a
    dra-migrate.sarif the pull request committed; the summary is not one either."""
    forged = '{"version": "2.1.0", "runs": []}\n'
    (runner["work"] / "dra-migrate.sarif").write_text(forged)
    (runner["temp"] / "dra-migrate.md").write_text("### :white_check_mark: forged\n")
    inputs = _inputs(paths="k8s", args="--kube-version 1.20", **{"upload-sarif": "true"})
    done = _run_step("Run dra-migrate", _env(runner, inputs), runner["work"])
    assert done.returncode == 0, done.stderr
    outputs = _outputs(runner["output"])
    assert outputs["exit-code"] == "2"
    assert "sarif-file" not in outputs
    assert "SARIF report could not be made" in done.stdout
    assert not runner["summary"].exists() or "forged" not in runner["summary"].read_text()
    assert (runner["work"] / "dra-migrate.sarif").read_text() == forged


def test_paths_named_like_options_stay_paths(runner: dict[str, Path]) -> None:
    (runner["work"] / "--format=json").mkdir()
    inputs = _inputs(paths="k8s --format=json")
    done = _run_step("Run dra-migrate", _env(runner, inputs), runner["work"])
    assert "::error file=k8s/train.yaml,line=14,col=13,title=DRA401" in done.stdout
    assert _outputs(runner["output"])["exit-code"] == "1"
