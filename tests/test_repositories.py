"""What whole-repository trials found (issue 7): behaviour on reduced copies of real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.test_cli import DEPLOYMENT

# ai-on-eks / kubernetes-engine-samples shapes: Neuron and TPU serving pods
NEURON = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-inf2
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: public.ecr.aws/neuron/pytorch-inference-neuronx:2.1.2
        resources:
          limits:
            aws.amazon.com/neuron: 6
"""

TPU = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: jetstream
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-tpu-topology: 2x4
      containers:
      - name: maxengine
        image: us-docker.pkg.dev/cloud-tpu-images/inference/maxengine-server:v0.2.2
        resources:
          limits:
            google.com/tpu: 8
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def test_summary_names_api_version_mapping_and_next_step(tmp_path: Path) -> None:
    _write(tmp_path, {"infer.yaml": DEPLOYMENT})
    done = run_cli(["convert", "."], tmp_path)
    err = done.stderr.decode()
    assert "writes resource.k8s.io/v1 ResourceClaimTemplates, with the built-in mapping" in err
    assert "next: review the diff, then apply it with dra-migrate convert --write" in err
    (tmp_path / ".dra-migrate.yaml").write_text("target: v1beta2\n")
    done = run_cli(["convert", "--write", "."], tmp_path)
    err = done.stderr.decode()
    assert "wrote resource.k8s.io/v1beta2 ResourceClaimTemplates, with mapping " in err
    assert ".dra-migrate.yaml" in err
    assert "next: review the changes, then check them with dra-migrate validate" in err
    again = run_cli(["convert", "--check", "."], tmp_path)
    assert again.returncode == 0
    assert "next: nothing to do" in again.stderr.decode()


def test_summary_lists_files_that_need_manual_action(tmp_path: Path) -> None:
    bad = DEPLOYMENT.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 500m")
    _write(tmp_path, {"ok.yaml": DEPLOYMENT, "bad.yaml": bad})
    done = run_cli(["convert", "."], tmp_path)
    err = done.stderr.decode()
    assert "bad.yaml:14:29: DRA101 error: container 'server' sets" in err
    assert "dra-migrate: 1 file(s) need manual action:" in err
    assert "dra-migrate: manual action: bad.yaml (DRA101)" in err
    assert "manual action: ok.yaml" not in err
    assert err.rstrip().endswith("run dra-migrate convert --check again.")


def test_requests_without_limits_is_an_invalid_manifest_exit_1(tmp_path: Path) -> None:
    bad = DEPLOYMENT.replace("limits:", "requests:")
    _write(tmp_path, {"bad.yaml": bad})
    done = run_cli(["convert", "--write", "."], tmp_path)
    assert done.returncode == 1, done.stderr
    assert b"DRA103 error:" in done.stderr
    assert (tmp_path / "bad.yaml").read_text() == bad  # left untouched
    # unreadable input keeps 123
    (tmp_path / "broken.yaml").write_text("kind: Pod\nspec: [\n  nvidia.com/gpu: 1\n")
    assert run_cli(["convert", "."], tmp_path).returncode == 123


def test_tpu_and_neuron_are_not_counted_as_gpus(tmp_path: Path) -> None:
    _write(tmp_path, {"infer.yaml": DEPLOYMENT, "neuron.yaml": NEURON, "tpu.yaml": TPU})
    done = run_cli(["scan", "."], tmp_path)
    out = done.stdout.decode()
    assert "1 GPU request(s) in 1 file(s) (and 2 request(s) of other accelerators, " in out
    assert "aws.amazon.com/neuron, google.com/tpu, not counted)" in out
    data = json.loads(run_cli(["scan", "--format", "json", "."], tmp_path).stdout)
    assert data["summary"]["requests"] == 1
    assert data["summary"]["other_requests"] == 2
    assert len(data["inventory"]) == 3  # still listed


@pytest.mark.parametrize(
    ("version", "said"),
    [
        ("1.31", "resource.k8s.io/v1alpha3"),
        ("1.30", "alpha extension of resource.k8s.io/v1alpha2"),
        ("1.27", "classic DRA"),
        ("1.25", "has no Dynamic Resource Allocation"),
    ],
)
def test_old_kube_version_says_what_it_had(tmp_path: Path, version: str, said: str) -> None:
    _write(tmp_path, {"infer.yaml": DEPLOYMENT})
    for extra in ([], ["--target", "v1beta1"]):
        done = run_cli(["convert", "--kube-version", version, *extra, "."], tmp_path)
        assert done.returncode == 2
        err = done.stderr.decode()
        assert said in err, err
        if version != "1.25":
            assert "not absent" in err and "does not support alpha APIs" in err
