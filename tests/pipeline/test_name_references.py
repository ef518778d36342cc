"""An overlay that renames what it builds (namePrefix, nameSuffix) gets the name
reference configuration of the ResourceClaimTemplates (pipeline/name_references.py,
DRA290), and the real kubectl proves the builds (--verify-builds)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from dra_migrate.pipeline.name_references import _listed
from tests.helpers.cli_runner import invoke

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: registry.example.com/ml/train:1.0
          resources:
            limits:
              nvidia.com/gpu: 1
"""
CRON = """\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: eval
              image: registry.example.com/ml/eval:1.0
              resources:
                limits:
                  nvidia.com/gpu: 2
"""
OWN = "nameReference:\n  - kind: Secret\n    fieldSpecs:\n      - {kind: Job, path: spec/x}\n"


@pytest.fixture
def kubectl(tools: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not installed: scripts/install-test-tools.sh installs it")
    return found


def _tree(root: Path) -> None:
    (root / "base").mkdir(parents=True)
    (root / "prod").mkdir()
    (root / "base" / "job.yaml").write_text(JOB)
    (root / "base" / "cron.yaml").write_text(CRON)
    (root / "base" / "kustomization.yaml").write_text("resources:\n  - job.yaml\n  - cron.yaml\n")
    (root / "prod" / "own.yaml").write_text(OWN)
    (root / "prod" / "kustomization.yaml").write_text(
        "resources:\n- ../base\nnamePrefix: prod-\nnameSuffix: -v2\nconfigurations:\n- own.yaml\n"
    )


def test_the_overlay_is_taught_the_references_and_the_builds_are_proven(
    tmp_path: Path, kubectl: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--write", "--verify-builds", "."])
    assert done.exit_code == 0, done.output
    assert "DRA232 info: 2 kustomize build(s) proven equal" in done.stderr, done.stderr
    assert "prod/kustomization.yaml:3:1: DRA290 info:" in done.stderr, done.stderr
    kustomization = (tmp_path / "prod" / "kustomization.yaml").read_text()
    assert kustomization.endswith("configurations:\n- own.yaml\n- dra-name-reference.yaml\n")
    config = yaml.safe_load((tmp_path / "prod" / "dra-name-reference.yaml").read_text())
    specs = config["nameReference"][0]["fieldSpecs"]
    assert {
        "kind": "CronJob",
        "path": "spec/jobTemplate/spec/template/spec/resourceClaims/resourceClaimTemplateName",
    } in specs
    assert {
        "kind": "Job",
        "path": "spec/template/spec/resourceClaims/resourceClaimTemplateName",
    } in specs
    built = subprocess.run(
        [kubectl, "kustomize", "prod"], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    objects = {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(built)}
    templates = {name for kind, name in objects if kind == "ResourceClaimTemplate"}
    job = objects[("Job", "prod-train-v2")]["spec"]["template"]["spec"]
    cron = objects[("CronJob", "prod-nightly-v2")]["spec"]["jobTemplate"]["spec"]["template"]
    for pod in (job, cron["spec"]):
        (claim,) = pod["resourceClaims"]
        assert claim["resourceClaimTemplateName"] in templates, (claim, templates)
        assert claim["resourceClaimTemplateName"].startswith("prod-")


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("namePrefix: p-\n", "namePrefix: p-\nconfigurations:\n  - dra-name-reference.yaml\n"),
        ("namePrefix: p-", "namePrefix: p-\nconfigurations:\n  - dra-name-reference.yaml\n"),
        (
            "configurations:\n  - a.yaml  # ours\n\nnamePrefix: p-\n",
            "configurations:\n  - a.yaml  # ours\n  - dra-name-reference.yaml\n\nnamePrefix: p-\n",
        ),
        ("a: 1\r\n", "a: 1\r\nconfigurations:\r\n  - dra-name-reference.yaml\r\n"),
        ("configurations: [a.yaml]\n", None),  # a flow list: DRA219 as before
        ('{"namePrefix": "p-"}\n', None),  # JSON
    ],
)
def test_the_kustomization_lists_the_configuration(before: str, after: str | None) -> None:
    got = _listed(before.encode())
    assert (got.decode() if got is not None else None) == after
