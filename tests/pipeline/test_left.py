"""``convert --check`` fails on what the plan leaves manual (pipeline/left.py): a
chart of way manual and a workload a refusal keeps are DRA401 errors, unless held
by an ignore of DRA401, silenced through their reason, or served by the bridge."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli_runner import invoke

CHART = "apiVersion: v2\nname: app\nversion: 0.1.0\n"
# GPUs in an init container: no template edit renders it exactly (DRA243)
JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-warm
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
        - name: warm{WARM}
          image: warm:1
          resources:
            limits:
              nvidia.com/gpu: {{ .Values.gpus }}{GPU}
      containers:
        - name: main
          image: main:1
"""
TIME_SLICED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: tiny
spec:
  template:
    spec:
      containers:
        - name: app
          image: app:1
          resources:
            limits:
              nvidia.com/gpu.shared: 1
"""


def _chart(root: Path, warm: str = "", gpu: str = "") -> Path:
    chart = root / "charts" / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(CHART)
    (chart / "values.yaml").write_text("gpus: 1\n")
    job = JOB.replace("{WARM}", warm).replace("{GPU}", gpu)
    (chart / "templates" / "job.yaml").write_text(job)
    return chart


def _check(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    monkeypatch.chdir(root)
    done = invoke(["convert", "--check", "--show-suppressed", *args])
    assert "Traceback" not in done.output, done.output
    return done.exit_code, done.stderr


def test_a_manual_chart_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _chart(tmp_path)
    status, err = _check(tmp_path, monkeypatch, ".")
    assert status == 1, err
    assert (
        "charts/app/templates/job.yaml:14:15: DRA401 error: chart app 0.1.0 is left on "
        "the device plugin, manual: DRA243"
    ) in err, err


def test_the_check_hook_on_one_template_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _chart(tmp_path)
    status, err = _check(
        tmp_path, monkeypatch, "--diff", "--context", ".", "--", "charts/app/templates/job.yaml"
    )
    assert status == 1 and "DRA401 error: chart app 0.1.0" in err, err


@pytest.mark.parametrize(
    ("warm", "gpu"),
    [("", "  # dra-migrate: ignore[DRA401]"), ("  # dra-migrate: ignore[DRA243]", "")],
    ids=["held", "reason-silenced"],
)
def test_an_ignore_passes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: str, gpu: str
) -> None:
    _chart(tmp_path, warm=warm, gpu=gpu)
    status, err = _check(tmp_path, monkeypatch, ".")
    assert status == 0, err
    assert "DRA401 error" in err and "[suppressed by charts/app/templates/job.yaml:" in err, err


def test_a_bridged_chart_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _chart(tmp_path)
    status, err = _check(
        tmp_path, monkeypatch, "--strategy", "bridge", "--kube-version", "1.36", "."
    )
    assert status == 0 and "DRA401" not in err, err


def test_a_workload_a_refusal_keeps_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "shared.yaml").write_text(TIME_SLICED)
    status, err = _check(tmp_path, monkeypatch, ".")
    assert status == 1, err
    assert (
        "shared.yaml:13:15: DRA401 error: Deployment tiny: container 'app' asks for "
        "nvidia.com/gpu.shared: 1 through the device plugin, and convert leaves it there "
        "(DRA205: "
    ) in err, err


def test_convert_without_check_is_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _chart(tmp_path)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "."])
    assert "DRA401" not in done.stderr and done.exit_code == 0, done.output
