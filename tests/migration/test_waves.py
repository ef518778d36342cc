"""The plan says what to run, and when (issue 40): each wave lists what its workloads
need first and the command that moves it; a workload whose prerequisite is unmet is
not in the pilot; risk factors that every workload shares rank nothing and are left out."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dra_migrate.migration import waves
from dra_migrate.report.migration import Workload
from tests.conftest import REPO
from tests.helpers.cli_runner import invoke

QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu-quota
  namespace: ml
spec:
  hard:
    requests.nvidia.com/gpu: 8
"""


def _job(name: str, namespace: str, labels: str = "") -> str:
    return (
        f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: {namespace}\n"
        + labels
        + "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
        "      - name: main\n        image: busybox\n        resources:\n          limits:\n"
        "            nvidia.com/gpu: 1\n"
    )


def _plan(*args: str) -> dict:
    done = invoke(["report", "--format", "json", *args])
    assert done.exit_code in (0, 1), done.output
    stages = json.loads(done.stdout)["plan"]["stages"]
    return stages


def _waves(stages: dict) -> list[dict]:
    return [stages["pilot"], *stages["rollout"]["waves"]]


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "quota.yaml").write_text(QUOTA)
    (tmp_path / "train.yaml").write_text(_job("train", "ml"))
    (tmp_path / "probe.yaml").write_text(_job("probe", "dev"))
    queue = "  labels:\n    kueue.x-k8s.io/queue-name: team-a\n"
    (tmp_path / "queued.yaml").write_text(_job("queued", "batch", queue))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_each_wave_lists_what_its_workloads_need_first(fleet: Path) -> None:
    stages = _plan("--kube-version", "1.34", ".")
    by_name = {w["name"]: w for w in stages["inventory"]["workloads"]}
    wave_of = {w["number"]: w for w in _waves(stages)}
    train = wave_of[by_name["train"]["wave"]]
    quota = "quota key gpu.nvidia.com.deviceclass.resource.k8s.io/devices: 8 (DRA206)"
    assert quota in train["prerequisites"]
    queued = wave_of[by_name["queued"]["wave"]]
    assert any(
        p.startswith("Kueue deviceClassMappings for gpu.nvidia.com") and "DRA226" in p
        for p in queued["prerequisites"]
    )
    # the driver and its class: every wave that moves a GPU workload
    for wave in _waves(stages):
        assert (
            "DRA driver gpu.nvidia.com with its DeviceClass gpu.nvidia.com"
            in (wave["prerequisites"])
        )
    # the pilot's workload needs no quota key nor mapping: they are not listed there
    assert by_name["probe"]["wave"] == 1
    assert quota not in stages["pilot"]["prerequisites"]


def test_a_workload_whose_prerequisite_is_unmet_is_not_in_the_pilot(fleet: Path) -> None:
    stages = _plan("--kube-version", "1.34", ".")
    by_name = {w["name"]: w for w in stages["inventory"]["workloads"]}
    for name in ("train", "queued"):
        assert by_name[name]["wave"] > 1
        assert any(f.startswith("needs first: ") for f in by_name[name]["riskFactors"])
        assert by_name[name]["risk"] > by_name["probe"]["risk"]
    # on 1.36 the quota counts claims of the class that maps the name: nothing unmet
    later = _plan("--kube-version", "1.36", "--strategy", "bridge", ".")
    train = next(w for w in later["inventory"]["workloads"] if w["name"] == "train")
    assert not any(f.startswith("needs first: quota") for f in train["riskFactors"])


def test_every_wave_command_runs_and_together_they_move_every_workload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "examples"
    shutil.copytree(REPO / "examples", repo)
    monkeypatch.chdir(repo)
    stages = _plan(".")
    commands = [c for wave in _waves(stages) for c in wave["commands"] if not c.startswith("#")]
    assert len(commands) == len(_waves(stages))
    # a kustomize base with its overlay's folder, never the base alone
    assert any("kustomize/base/deployment.yaml kustomize/overlays/prod" in c for c in commands)
    for command in commands:
        words = shlex.split(command)
        assert words[:3] == ["dra-migrate", "convert", "--write"]
        done = invoke(words[1:])
        assert done.exit_code == 0, (command, done.output)
    # what is left is the Helm chart, which moves with its own way (stage 1), no workload
    left = invoke(["convert", "."])
    changed = {line[6:] for line in left.stdout.splitlines() if line.startswith("+++ b/")}
    assert changed and all(path.startswith("charts/inference/") for path in changed), changed


def _workload(namespace: str) -> Workload:
    return Workload(
        path="a.yaml",
        line=1,
        col=1,
        api_version="batch/v1",
        kind="Job",
        namespace=namespace,
        name="x",
        pod_path="spec.template.spec",
        containers=[],
        gpus_per_pod=1,
        replicas=1,
        strategy="rewrite",
    )


@given(
    st.lists(
        st.tuples(st.sampled_from(["ml", "team", ""]), st.integers(1, 16)), min_size=2, max_size=8
    )
)
def test_a_factor_every_workload_shares_ranks_nothing_and_is_left_out(
    drawn: list[tuple[str, int]],
) -> None:
    workloads = [_workload(ns) for ns, _ in drawn]
    factors = [
        [(1, f"namespace {ns} may serve production" if ns else "no namespace: lands wherever")]
        + ([(1, f"{gpus} GPUs per pod")] if gpus > 1 else [])
        for ns, gpus in drawn
    ]
    ranked = waves.ranking(workloads, factors)
    assert all(not any("namespace" in text for _, text in f) for f in ranked)  # constant: out
    # the GPU factor ranks whenever some have it and some do not: kept as it was
    has_gpus = [gpus > 1 for _, gpus in drawn]
    if any(has_gpus) and not all(has_gpus):
        assert [any("GPUs per pod" in t for _, t in f) for f in ranked] == has_gpus
