"""What the cluster does after the rewrite (dra_migrate/controllers.py): placement, quota,
the operators that read the GPU limit, and what scan must see. The golden cases of
these rules are tests/fixtures/convert/cluster-*; these tests hold the rules themselves."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.convert import controllers
from tests.conftest import REPO
from tests.helpers.cli_runner import invoke

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
{labels}spec:
  template:
    spec:
{pod}      restartPolicy: Never
      containers:
        - name: train
          image: ghcr.io/example/train:1.0
          resources:
            limits:
              nvidia.com/gpu: 2
"""


def job(pod: str = "", labels: str = "") -> str:
    return JOB.format(pod=pod, labels=labels)


def run(tmp_path: Path, args: list[str], files: dict[str, str]) -> Any:
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        return invoke(args)
    finally:
        os.chdir(old)


def codes_of(text: str) -> list[str]:
    return re.findall(r":\d+:\d+: (DRA\d{3}) ", text)


def converted(tmp_path: Path, text: str, config: str | None = None) -> tuple[Any, list[Any]]:
    files = {"job.yaml": text}
    if config is not None:
        files[".dra-migrate.yaml"] = config
    result = run(tmp_path, ["convert", "--write", "."], files)
    assert result.exit_code in (0, 1), result.output
    return result, list(yaml.safe_load_all((tmp_path / "job.yaml").read_text()))


# --- tolerations: what ExtendedResourceToleration added ---------------------------------


def _tolerates(toleration: dict[str, str], key: str, value: str, effect: str) -> bool:
    """Kubernetes' ToleratesTaint (k8s.io/api/core/v1 toleration.go), as the oracle."""
    if toleration.get("effect") and toleration["effect"] != effect:
        return False
    operator = toleration.get("operator") or "Equal"
    if toleration.get("key", "") == "" and operator == "Exists":
        return True
    if toleration.get("key", "") != key:
        return False
    if operator == "Exists":
        return True
    return operator == "Equal" and toleration.get("value", "") == value


TOLERATIONS = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "key": st.sampled_from(["", "nvidia.com/gpu", "amd.com/gpu", "spot"]),
            "operator": st.sampled_from(["Exists", "Equal"]),
            "value": st.sampled_from(["", "present", "true"]),
            "effect": st.sampled_from(["", "NoSchedule", "NoExecute", "PreferNoSchedule"]),
        },
    ),
    max_size=3,
)


@settings(max_examples=60, deadline=None)
@given(TOLERATIONS)
def test_a_toleration_is_written_exactly_when_the_pod_does_not_tolerate_every_gpu_taint(
    tolerations: list[dict[str, str]],
) -> None:
    """After the rewrite the pod tolerates every nvidia.com/gpu NoSchedule taint, whatever
    its value (what the plugin's Exists toleration did); a toleration is written only when
    the pod's own did not do so already."""
    import tempfile

    pod = ""
    if tolerations:
        pod = "      tolerations:\n" + "".join(
            "        - " + json.dumps(t) + "\n" if t else "        - {}\n" for t in tolerations
        )
    with tempfile.TemporaryDirectory() as folder:
        result, docs = converted(Path(folder), job(pod))
    spec = docs[0]["spec"]["template"]["spec"]
    after = spec.get("tolerations") or []
    values = ("present", "true", "")
    before_ok = all(
        any(_tolerates(t, "nvidia.com/gpu", v, "NoSchedule") for t in tolerations) for v in values
    )
    assert all(any(_tolerates(t, "nvidia.com/gpu", v, "NoSchedule") for t in after) for v in values)
    written = len(after) - len(tolerations)
    assert written == (0 if before_ok else 1), (tolerations, after)
    assert ("DRA224" in codes_of(result.stderr)) == (written == 1)


def test_the_toleration_is_configurable_and_said(tmp_path: Path) -> None:
    result, docs = converted(tmp_path, job(), "extendedResourceToleration: false\n")
    assert "tolerations" not in docs[0]["spec"]["template"]["spec"]
    assert "DRA224" not in codes_of(result.stderr)
    result = run(tmp_path / "on", ["convert", "."], {"job.yaml": job()})
    assert "DRA224" in codes_of(result.stderr)
    assert "1 toleration(s) that ExtendedResourceToleration added (DRA224)" in result.stderr


def test_a_refused_pod_spec_says_nothing_was_written(tmp_path: Path) -> None:
    """A pod spec left on the device plugin (here: an overlay removes its GPU count, a
    JSON 6902 operation that is not rewritten) gets no note that a toleration or
    num-gpus was written."""
    files = {
        "base/job.yaml": job(),
        "base/kustomization.yaml": "resources: [job.yaml]\n",
        "prod/kustomization.yaml": (
            "resources: [../base]\npatches:\n- target: {kind: Job, name: train}\n  patch: |-\n"
            "    - op: remove\n      path: /spec/template/spec/containers/0/resources/limits/"
            "nvidia.com~1gpu\n"
        ),
    }
    result = run(tmp_path, ["convert", "."], files)
    found = codes_of(result.stderr)
    assert "DRA222" in found and "DRA224" not in found, result.stderr


# --- schedulers and queues --------------------------------------------------------------


@pytest.mark.parametrize(
    ("scheduler", "config", "warned"),
    [
        ("", None, False),
        ("default-scheduler", None, False),
        ("yunikorn", None, True),
        ("kai-scheduler", None, True),
        ("my-batch-scheduler", None, True),  # unknown: cannot be assumed to allocate claims
        ("my-batch-scheduler", "draSchedulers: [my-batch-scheduler]\n", False),
    ],
)
def test_schedulers_that_may_not_allocate_claims(
    tmp_path: Path, scheduler: str, config: str | None, warned: bool
) -> None:
    pod = f"      schedulerName: {scheduler}\n" if scheduler else ""
    result, _docs = converted(tmp_path, job(pod), config)
    assert ("DRA225" in codes_of(result.stderr)) is warned, result.stderr


def test_every_scheduler_of_the_table_is_documented() -> None:
    doc = (REPO / "docs" / "conversion.md").read_text()
    for entry in controllers.SCHEDULERS:
        assert f"| `{entry.name}` | {entry.product} |" in doc


def test_every_operator_rule_is_documented_with_its_source() -> None:
    doc = (REPO / "docs" / "conversion.md").read_text()
    for rule in controllers.DERIVED:
        assert f"| {rule.controller} |" in doc, rule.controller
        assert rule.source.split()[0] in doc, rule.source


@pytest.mark.parametrize("where", ["workload", "template"])
def test_a_kueue_queue_label_warns_wherever_it_is(tmp_path: Path, where: str) -> None:
    label = "    kueue.x-k8s.io/queue-name: user-queue\n"
    text = (
        job(labels="  labels:\n" + label)
        if where == "workload"
        else job().replace(
            "  template:\n    spec:\n",
            "  template:\n    metadata:\n      labels:\n    " + label + "    spec:\n",
        )
    )
    result, _docs = converted(tmp_path, text)
    assert "DRA226" in codes_of(result.stderr), result.stderr


# --- what scan must see ---------------------------------------------------------------


def test_a_gpu_request_inside_a_string_is_listed_at_its_line(tmp_path: Path) -> None:
    inner = job().replace("\n", "\n    ")
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: jobs\ndata:\n  job.yaml: |\n    {inner}\n"
    result = run(tmp_path, ["scan", "."], {"cm.yaml": text})
    lines = text.split("\n")
    (hit,) = [f for f in result.stdout.splitlines() + result.stderr.splitlines() if "DRA227" in f]
    line = int(hit.split(":")[1])
    assert "nvidia.com/gpu: 2" in lines[line - 1], hit
    # never converted: the file stays as it is
    result = run(tmp_path, ["convert", "--write", "."], {})
    assert (tmp_path / "cm.yaml").read_text() == text


@pytest.mark.parametrize(
    ("patch", "reported"),
    [
        ("nodeSelector:\n        intel.feature.node.kubernetes.io/gpu: 'true'\n", False),
        ("nodeSelector:\n        gpu.intel.com/family: A_Series\n", False),
        ("tolerations:\n      - key: nvidia.com/gpu\n        operator: Exists\n", False),
        (
            "containers:\n      - name: c\n        resources:\n          limits:\n"
            "            nvidia.com/gpu: 4\n",
            True,
        ),
    ],
)
def test_only_resources_in_a_patch_are_requests(tmp_path: Path, patch: str, reported: bool) -> None:
    files = {
        "base/deploy.yaml": (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n"
            "    spec:\n      containers:\n      - name: c\n        image: x\n"
        ),
        "base/kustomization.yaml": "resources: [deploy.yaml]\n",
        "ov/kustomization.yaml": "resources: [../base]\npatches:\n- path: patch.yaml\n",
        "ov/patch.yaml": (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n"
            "    spec:\n      " + patch
        ),
    }
    result = run(tmp_path, ["convert", "--check", "."], files)
    # a request is converted with its base (DRA230), so the check has work left (exit 1)
    assert ("DRA230" in codes_of(result.stderr)) is reported, result.stderr
    assert result.exit_code == (1 if reported else 0), result.output


@pytest.mark.parametrize("resource", ["example.com/gpu", "nvidia.com/gpucores", "google.com/tpu"])
def test_names_that_are_no_gpu_are_not_counted(tmp_path: Path, resource: str) -> None:
    text = job().replace("nvidia.com/gpu: 2", f"{resource}: 2")
    result = run(tmp_path, ["scan", "--format", "json", "."], {"job.yaml": text})
    summary = json.loads(result.stdout)["summary"]
    assert summary["requests"] == 0 and summary["other_requests"] == 1


# --- the plan agrees with what convert does -----------------------------------------------


def _plan(tmp_path: Path, files: dict[str, str]) -> dict[str, Any]:
    result = run(tmp_path, ["report", "--format", "json", "."], files)
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_a_refused_workload_is_manual_never_in_a_wave(tmp_path: Path) -> None:
    refused = (
        job()
        .replace("nvidia.com/gpu: 2", "nvidia.com/gpu: ${GPUS}")
        .replace("name: train", "name: templated")
    )
    data = _plan(tmp_path, {"a/refused.yaml": refused, "b/fine.yaml": job()})
    stages = data["plan"]["stages"]
    strategy = {w["name"]: w["strategy"] for w in stages["inventory"]["workloads"]}
    assert strategy == {"templated": "manual", "train": "rewrite"}
    waved = [stages["pilot"]["workloads"]] + [w["workloads"] for w in stages["rollout"]["waves"]]
    assert not any("templated" in name for wave in waved for name in wave)
    (manual,) = [w for w in stages["inventory"]["workloads"] if w["name"] == "templated"]
    assert "DRA106" in " ".join(manual["reasons"])


def test_a_tpu_workload_is_no_risk_of_the_gpu_migration(tmp_path: Path) -> None:
    tpu = job().replace("nvidia.com/gpu: 2", "google.com/tpu: 4")
    data = _plan(tmp_path, {"tpu.yaml": tpu, "gpu.yaml": job().replace("train", "gpu")})
    risks = {r["code"] for r in data["plan"]["risks"]}
    assert "DRA104" not in risks


def test_an_overlay_that_renames_templates_gets_the_name_reference(tmp_path: Path) -> None:
    files = {
        "base/job.yaml": job(),
        "base/kustomization.yaml": "resources: [job.yaml]\n",
        "prod/kustomization.yaml": "namePrefix: prod-\nresources: [../base]\n",
    }
    result = run(tmp_path, ["convert", "--write", "."], files)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "base/job.yaml").read_text() != job()
    assert "prod/kustomization.yaml:1:1: DRA290 info:" in result.stderr, result.stderr
    assert (
        (tmp_path / "prod/kustomization.yaml")
        .read_text()
        .endswith("configurations:\n  - dra-name-reference.yaml\n")
    )
    assert "resourceClaimTemplateName" in (tmp_path / "prod/dra-name-reference.yaml").read_text()


def test_an_overlay_outside_the_run_that_renames_templates_keeps_its_base_unwritten(
    tmp_path: Path,
) -> None:
    """The hook's form: one staged file, the overlay read from the context only."""
    files = {
        "base/job.yaml": job(),
        "base/kustomization.yaml": "resources: [job.yaml]\n",
        "prod/kustomization.yaml": "namePrefix: prod-\nresources: [../base]\n",
    }
    result = run(tmp_path, ["convert", "--write", "--context", ".", "base/job.yaml"], files)
    assert result.exit_code == 1, result.output
    assert (tmp_path / "base/job.yaml").read_text() == job()  # not written
    found = [line for line in result.stderr.splitlines() if "DRA219" in line]
    assert any(line.startswith("base/job.yaml:") for line in found), result.stderr
    assert not (tmp_path / "prod/dra-name-reference.yaml").exists()


def test_validate_sees_a_renamed_template_reference(tmp_path: Path) -> None:
    """A hand conversion that an overlay's namePrefix breaks: validate reports it."""
    run(tmp_path / "first", ["convert", "--write", "."], {"job.yaml": job()})
    files = {
        "base/job.yaml": (tmp_path / "first" / "job.yaml").read_text(),
        "base/kustomization.yaml": "resources: [job.yaml]\n",
        "prod/kustomization.yaml": "namePrefix: prod-\nresources: [../base]\n",
    }
    result = run(tmp_path / "second", ["validate", "."], files)
    assert "DRA219" in result.output and result.exit_code == 1, result.output


@pytest.mark.parametrize(
    ("resource", "written"), [("nvidia.com/gpu", True), ("amd.com/gpu", False)]
)
def test_the_gke_node_selector_is_written_where_kserve_added_it(
    tmp_path: Path, resource: str, written: bool
) -> None:
    """KServe's pod webhook adds the annotation's node selector only for nvidia.com/gpu."""
    text = (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: m\n"
        "  annotations:\n    serving.kserve.io/deploymentMode: Standard\n"
        "    serving.kserve.io/gke-accelerator: nvidia-l4\nspec:\n  predictor:\n"
        "    containers:\n    - name: kserve-container\n      image: ghcr.io/example/serve:1\n"
        f"      resources:\n        limits:\n          {resource}: 1\n"
    )
    result = run(tmp_path, ["convert", "--write", "."], {"isvc.yaml": text})
    assert result.exit_code == 0, result.output
    (isvc, _template) = yaml.safe_load_all((tmp_path / "isvc.yaml").read_text())
    selector = isvc["spec"]["predictor"].get("nodeSelector") or {}
    assert (selector.get("cloud.google.com/gke-accelerator") == "nvidia-l4") is written
    assert ("DRA229" in codes_of(result.stderr)) is written
