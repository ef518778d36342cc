"""dra-migrate report: the five stages, strategies with reasons, capacity, risks, formats."""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import REPO


@dataclass
class Done:
    returncode: int
    stdout: bytes
    stderr: bytes


def run_cli(args: list[str], cwd: Path, stdin: bytes | None = None) -> Done:
    """The CLI in this process (as a subprocess would run it), from folder ``cwd``."""
    from tests.helpers.cli_runner import invoke

    previous = os.getcwd()
    os.chdir(cwd)
    try:
        result = invoke([*args[:1], "--jobs", "1", *args[1:]], input=stdin)
    finally:
        os.chdir(previous)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return Done(result.exit_code, result.stdout_bytes, result.stderr_bytes)


EXAMPLES = REPO / "examples"
SCHEMA = json.loads((REPO / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
HOSTILE = '"><img src=x onerror=alert(1)><script>alert(2)</script>*[x](y)|`'

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {namespace}
spec:
  replicas: {replicas}
  template:
    spec:
      containers:
        - name: server
          image: registry.example.com/ml/server:1.0
          resources:
            limits:
              {resource}: {count}
"""

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {namespace}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: registry.example.com/ml/train:1.0
          resources:
            limits:
              nvidia.com/gpu: {count}
"""


def slices(nodes: dict[str, int], product: str = "NVIDIA A100-SXM4-80GB") -> str:
    docs = []
    for node, count in nodes.items():
        devices = "".join(
            f"    - name: gpu-{i}\n"
            f"      attributes:\n"
            f"        type: {{string: gpu}}\n"
            f"        productName: {{string: {product}}}\n"
            for i in range(count)
        )
        docs.append(
            "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
            f"metadata:\n  name: {node}-gpu.nvidia.com\n"
            f"spec:\n  driver: gpu.nvidia.com\n  nodeName: {node}\n"
            f"  pool:\n    name: {node}\n    generation: 1\n    resourceSliceCount: 1\n"
            f"  devices:\n{devices}"
        )
    return "---\n".join(docs)


def deployment(**values: Any) -> str:
    base = {"namespace": "team-a", "replicas": 1, "resource": "nvidia.com/gpu", "count": 1}
    return DEPLOYMENT.format(**{**base, **values})


def report_json(root: Path, *args: str) -> dict[str, Any]:
    done = run_cli(["report", "--format", "json", *args, "."], root)
    assert done.returncode in (0, 1), done.stderr.decode()
    data: dict[str, Any] = json.loads(done.stdout)
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    return data


def by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {w["name"]: w for w in data["plan"]["stages"]["inventory"]["workloads"]}


def codes(data: dict[str, Any]) -> list[str]:
    return [f["code"] for f in data["findings"]]


def test_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_examples_report_has_every_stage_in_every_format(tmp_path: Path) -> None:
    json_out = run_cli(["report", "--format", "json", "--kube-version", "1.36", "examples"], REPO)
    data = json.loads(json_out.stdout)
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    stages = data["plan"]["stages"]
    assert set(stages) == {"inventory", "prerequisites", "deviceClasses", "pilot", "rollout"}
    assert len(stages["inventory"]["workloads"]) == 12
    assert stages["pilot"]["number"] == 1 and stages["pilot"]["workloads"]
    # nothing is left unanalysed: the chart is migrated (template edits behind its switch,
    # which the plan says to set), the kustomize base converts with its overlay
    assert stages["inventory"]["unanalysed"] == []
    assert [(c["root"], c["way"], c["setKeys"]) for c in stages["inventory"]["charts"]] == [
        ("examples/charts/inference", "template", [{"key": "dra.enabled", "value": "true"}])
    ]
    ocr = [w for w in stages["inventory"]["workloads"] if w["name"] == "ocr-server"]
    assert [w["strategy"] for w in ocr] != ["manual"] and ocr[0]["wave"]
    for fmt, marks in {
        "text": ["== Stage 1", "== Stage 2", "== Stage 3", "== Stage 4", "== Stage 5", "== Risks"],
        "markdown": ["### Stage 1", "### Stage 2", "### Stage 3", "### Stage 4", "### Stage 5"],
        "html": ['id="stage-1"', 'id="stage-2"', 'id="stage-3"', 'id="stage-4"', 'id="stage-5"'],
    }.items():
        done = run_cli(["report", "--format", fmt, "--kube-version", "1.36", "examples"], REPO)
        out = done.stdout.decode()
        assert done.returncode == 0
        for mark in marks:
            assert mark in out, (fmt, mark)
        assert "dra.enabled=true" in out, fmt  # the charts table: the values to set


def test_scan_json_matches_the_published_schema() -> None:
    done = run_cli(["scan", "--format", "json", "examples"], REPO)
    jsonschema.validate(json.loads(done.stdout), SCHEMA, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize(
    ("kube", "expected", "reason"),
    [
        ("1.33", "rewrite", "no extendedResourceName"),
        ("1.35", "rewrite", "alpha and off by default"),
        ("1.36", "bridge", "needs nothing DRA-only"),
        ("1.37", "bridge", "GA"),
    ],
)
def test_auto_strategy_follows_the_cluster_version(
    tmp_path: Path, kube: str, expected: str, reason: str
) -> None:
    (tmp_path / "app.yaml").write_text(deployment(name="plain"))
    target = ["--target", "v1beta2"] if kube == "1.33" else []
    data = report_json(tmp_path, "--strategy", "auto", "--kube-version", kube, *target)
    plain = by_name(data)["plain"]
    assert plain["strategy"] == expected
    assert any(reason in r for r in plain["reasons"]), plain["reasons"]


def test_auto_rewrites_what_only_a_claim_can_say(tmp_path: Path) -> None:
    (tmp_path / "plain.yaml").write_text(deployment(name="plain"))
    (tmp_path / "mig.yaml").write_text(deployment(name="mig", resource="nvidia.com/mig-1g.10gb"))
    (tmp_path / "shared.yaml").write_text(
        deployment(name="shared", resource="nvidia.com/gpu.shared")
    )
    two = deployment(name="two").replace(
        "              nvidia.com/gpu: 1\n",
        "              nvidia.com/gpu: 1\n"
        "        - name: helper\n"
        "          image: registry.example.com/ml/helper:1.0\n"
        "          resources:\n"
        "            limits:\n"
        "              nvidia.com/gpu: 1\n",
    )
    (tmp_path / "two.yaml").write_text(two)
    data = report_json(tmp_path, "--strategy", "auto", "--kube-version", "1.36")
    workloads = by_name(data)
    assert workloads["plain"]["strategy"] == "bridge"
    assert workloads["mig"]["strategy"] == "rewrite"
    assert "MIG" in workloads["mig"]["reasons"][0]
    # convert leaves a time-sliced share without a sharing config (DRA205): so does the plan
    assert workloads["shared"]["strategy"] == "manual"
    assert "DRA205" in workloads["shared"]["reasons"][0]
    assert workloads["two"]["strategy"] == "rewrite"
    assert "one node" in workloads["two"]["reasons"][0]
    assert "DRA205" in codes(data)  # the shared GPU is a risk too
    risks = {r["code"] for r in data["plan"]["risks"]}
    assert "DRA205" in risks


def test_bridge_classes_one_per_mig_profile(tmp_path: Path) -> None:
    for profile in ("1g.10gb", "3g.40gb"):
        (tmp_path / f"{profile}.yaml").write_text(
            deployment(name=f"nb-{profile.replace('.', '-')}", resource=f"nvidia.com/mig-{profile}")
        )
    data = report_json(tmp_path, "--kube-version", "1.36", "--strategy", "bridge")
    created = data["plan"]["stages"]["deviceClasses"]["create"]
    assert sorted(c["extendedResourceName"] for c in created) == [
        "nvidia.com/mig-1g.10gb",
        "nvidia.com/mig-3g.40gb",
    ]
    assert len({c["name"] for c in created}) == 2
    for c in created:
        assert any(c["extendedResourceName"].split("-", 1)[1] in s for s in c["selectors"])
    assert "DRA513" not in codes(data)


def test_forced_bridge_on_an_old_cluster_warns(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(deployment(name="plain"))
    data = report_json(tmp_path, "--kube-version", "1.34", "--strategy", "bridge")
    assert "DRA513" in codes(data)
    # convert leaves it and fails the check (DRA516): the plan says manual, no wave
    plain = by_name(data)["plain"]
    assert plain["strategy"] == "manual" and "DRA516" in plain["reasons"][0]
    assert plain["wave"] == 0 and data["plan"]["stages"]["pilot"] is None
    assert "DRA516" in codes(data)


def test_two_classes_for_one_extended_resource(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(deployment(name="plain"))
    (tmp_path / ".dra-migrate.yaml").write_text(
        "deviceClasses:\n"
        "  - name: a100.nvidia.com\n"
        "    driver: gpu.nvidia.com\n"
        "    extendedResourceName: nvidia.com/gpu\n"
    )
    data = report_json(tmp_path, "--kube-version", "1.36")
    assert "DRA510" in codes(data)  # the driver's gpu.nvidia.com maps nvidia.com/gpu too


def test_node_that_still_runs_the_device_plugin(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(deployment(name="plain"))
    nodes = tmp_path / "nodes.json"
    nodes.write_text(
        json.dumps(
            {
                "kind": "List",
                "items": [
                    {
                        "kind": "Node",
                        "metadata": {"name": "old-1"},
                        "status": {"allocatable": {"cpu": "8", "nvidia.com/gpu": "4"}},
                    },
                    {
                        "kind": "Node",
                        "metadata": {"name": "dra-1"},
                        "status": {"allocatable": {"cpu": "8"}},
                    },
                ],
            }
        )
    )
    (tmp_path / "app-dir").mkdir()
    (tmp_path / "app.yaml").rename(tmp_path / "app-dir" / "app.yaml")
    done = run_cli(
        [
            "report",
            "--format",
            "json",
            "--strategy",
            "auto",
            "--kube-version",
            "1.36",
            "--nodes",
            "nodes.json",
            "app-dir",
        ],
        tmp_path,
    )
    data = json.loads(done.stdout)
    found = [f for f in data["findings"] if f["code"] == "DRA512"]
    assert len(found) == 1 and "old-1" in found[0]["message"] and "dra-1" not in found[0]["message"]
    assert data["plan"]["live"]["nodes"][0]["allocatable"] == {"nvidia.com/gpu": 4}


def test_capacity_node_by_node(tmp_path: Path) -> None:
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / "serve.yaml").write_text(deployment(name="serve", replicas=3, count=2))
    (apps / "big.yaml").write_text(JOB.format(name="big", namespace="team-a", count=8))
    (tmp_path / "slices.yaml").write_text(slices({"node-a": 4, "node-b": 4}))
    done = run_cli(
        ["report", "--format", "json", "--resource-slices", "slices.yaml", "apps"], tmp_path
    )
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    capacity = data["plan"]["stages"]["prerequisites"]["capacity"]
    assert capacity["devices"] == 8 and capacity["nodes"] == 2
    (row,) = capacity["rows"]
    assert row["deviceClass"] == "gpu.nvidia.com" and row["gpus"] == 14 and row["devices"] == 8
    assert capacity["pending"] == ["Job/team-a/big"]  # 8 on one node: no node has 8
    pending = [f for f in data["findings"] if f["code"] == "DRA530"]
    assert [f["path"] for f in pending] == ["apps/big.yaml"]


def test_capacity_fits_when_nodes_are_big_enough(tmp_path: Path) -> None:
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / "serve.yaml").write_text(deployment(name="serve", replicas=3, count=2))
    (apps / "big.yaml").write_text(JOB.format(name="big", namespace="team-a", count=8))
    (tmp_path / "slices.yaml").write_text(slices({"node-a": 8, "node-b": 8}))
    done = run_cli(
        ["report", "--format", "json", "--resource-slices", "slices.yaml", "apps"], tmp_path
    )
    data = json.loads(done.stdout)
    assert data["plan"]["stages"]["prerequisites"]["capacity"]["pending"] == []
    assert "DRA530" not in codes(data) and "DRA531" in codes(data)
    assert done.returncode == 0, done.stdout


def test_capacity_respects_product_selectors(tmp_path: Path) -> None:
    """A class for H100s finds no device on a cluster of A100s."""
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / "serve.yaml").write_text(deployment(name="serve"))
    # .dra-migrate.yaml is found above the folder given only up to the repository root
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".dra-migrate.yaml").write_text(
        "resources:\n"
        "  - name: nvidia.com/gpu\n"
        "    deviceClass: gpu.nvidia.com\n"
        "    selectors:\n"
        "      - device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'\n"
    )
    (tmp_path / "slices.yaml").write_text(slices({"node-a": 8}))
    data = report_json(tmp_path / "apps", "--resource-slices", "../slices.yaml")
    assert data["plan"]["stages"]["prerequisites"]["capacity"]["pending"] == [
        "Deployment/team-a/serve"
    ]


def test_waves_rank_by_risk_lowest_first(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB.format(name="smoke", namespace="dev", count=1))
    (tmp_path / "prod.yaml").write_text(
        deployment(name="serving", namespace="prod", replicas=12, count=8)
    )
    (tmp_path / "mid.yaml").write_text(deployment(name="batch", namespace="research", count=2))
    data = report_json(tmp_path, "--kube-version", "1.36")
    stages = data["plan"]["stages"]
    assert stages["pilot"]["workloads"] == ["Job/dev/smoke (spec.template.spec)"]
    later = [name for wave in stages["rollout"]["waves"] for name in wave["workloads"]]
    assert later == [
        "Deployment/research/batch (spec.template.spec)",
        "Deployment/prod/serving (spec.template.spec)",
    ]
    serving = by_name(data)["serving"]
    assert "production namespace prod" in serving["riskFactors"]
    assert serving["gpus"] == 96
    assert all(wave["rollback"] for wave in stages["rollout"]["waves"])
    assert "DRA520" in codes(data)  # 12 replicas


def test_quota_and_kustomize_renames_are_risks_with_the_configuration(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text("resources:\n  - job.yaml\n")
    (base / "job.yaml").write_text(JOB.format(name="train", namespace="ml", count=1))
    (base / "quota.yaml").write_text(
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\n  namespace: ml\n"
        "spec:\n  hard:\n    requests.nvidia.com/gpu: '8'\n"
    )
    prod = tmp_path / "prod"
    prod.mkdir()
    (prod / "kustomization.yaml").write_text("resources:\n  - ../base\nnamePrefix: prod-\n")
    data = report_json(tmp_path)
    risks = {r["code"]: r for r in data["plan"]["risks"]}
    assert {"DRA206", "DRA219"} <= set(risks)
    assert "deviceclass.resource.k8s.io/devices" in risks["DRA206"]["detail"]
    config = data["plan"]["stages"]["rollout"]["kustomizeConfiguration"]
    assert (
        "{group: batch, kind: Job, path: spec/template/spec/resourceClaims/resourceClaimTemplateName}"
        in config
    )


def test_hostile_names_are_escaped_in_html_and_markdown(tmp_path: Path) -> None:
    text = deployment(name="x", namespace="team").replace(
        "  name: x\n  namespace: team\n", f"  name: '{HOSTILE}'\n  namespace: '{HOSTILE}'\n"
    )
    (tmp_path / "evil.yaml").write_text(text)
    html_out = run_cli(["report", "--format", "html", "."], tmp_path).stdout.decode()
    assert "<script>alert" not in html_out and "<img src=x" not in html_out
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html_out
    assert "<script" not in html_out.lower()  # the page itself has no script at all
    md = run_cli(["report", "--format", "markdown", "."], tmp_path).stdout.decode()
    assert "<script>" not in md and "<img" not in md
    assert "&lt;script&gt;" in md


def test_output_file_and_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(deployment(name="plain"))
    done = run_cli(["report", "--format", "html", "--output", "plan.html", "."], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    assert (tmp_path / "plan.html").read_text().startswith("<!DOCTYPE html>")
    done = run_cli(["report", "--resource-slices", "missing.yaml", "."], tmp_path)
    assert done.returncode == 2 and b"missing.yaml" in done.stderr
    assert b"Traceback" not in done.stderr
    done = run_cli(["report", "-"], tmp_path, stdin=b"")
    assert done.returncode == 2 and b"report reads a repository" in done.stderr


def test_daemonset_pods_are_per_node(tmp_path: Path) -> None:
    daemonset = (
        deployment(name="dcgm", namespace="monitoring")
        .replace("kind: Deployment", "kind: DaemonSet")
        .replace("  replicas: 1\n", "")
    )
    (tmp_path / "ds.yaml").write_text(daemonset)
    data = report_json(tmp_path)
    dcgm = by_name(data)["dcgm"]
    assert dcgm["replicas"] is None and dcgm["gpus"] is None
    (ns,) = data["plan"]["stages"]["inventory"]["namespaces"]
    assert (ns["gpus"], ns["perNodeWorkloads"]) == (0, 1)
    text = run_cli(["report", "."], tmp_path).stdout.decode()
    assert re.search(r"DaemonSet/monitoring/dcgm .* per node ", text)


def test_prerequisites_say_what_claims_count_against_in_a_quota(tmp_path: Path) -> None:
    # pkg/quota/v1/evaluator/core/resource_claims.go (kubernetes PR 134210, 1.35)
    (tmp_path / "job.yaml").write_text(JOB.format(name="train", namespace="ml", count=1))
    data = report_json(tmp_path, "--kube-version", "1.36")
    rows = data["plan"]["stages"]["prerequisites"]["requirements"]
    (quota,) = [r for r in rows if r["topic"] == "ResourceQuota"]
    assert "gpu.nvidia.com.deviceclass.resource.k8s.io/devices" in quota["requirement"]
    assert "requests.deviceclass.resource.kubernetes.io/gpu.nvidia.com" in quota["detail"]
    assert "from Kubernetes 1.35" in quota["detail"] and "1.36" in quota["detail"]


# --- the plan a lead forwards (issue 27) ----------------------------------------------

DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: node-check
  namespace: ops
spec:
  template:
    spec:
      containers:
        - name: check
          image: registry.example.com/ops/check:1.0
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def _report(root: Path, fmt: str, *args: str) -> str:
    done = run_cli(["report", "--format", fmt, *args, "."], root)
    assert done.returncode in (0, 1), done.stderr.decode()
    return done.stdout.decode()


def _cells(html: str, table: str) -> list[list[str]]:
    body = html.split(f'<table id="{table}">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    return [
        [
            re.sub(r"<[^>]+>", "", c.replace("<br>", " ")).strip()
            for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, re.S)
        ]
        for r in rows
    ]


def test_html_groups_workloads_that_share_a_strategy_and_reason() -> None:
    args = ["report", "--format", "html", "--strategy", "auto", "--kube-version", "1.36"]
    html = run_cli([*args, "examples"], REPO)
    page = html.stdout.decode()
    reason = "the workload needs nothing DRA-only"
    stage1 = page.split('id="stage-1"', 1)[1].split('id="stage-2"', 1)[0]
    assert stage1.count(reason) == 1  # said once, for its 9 workloads
    rows = _cells(page, "workloads")
    assert rows[0] == ["Workload", "Pod spec", "Location", "GPUs/pod", "Pods"]
    groups = [r[0] for r in rows if len(r) == 1]
    assert len(groups) == 4 and "(9 workload(s))" in next(g for g in groups if reason in g)
    assert len([r for r in rows[1:] if len(r) == 5]) == 12
    # paths may break after a / only, field paths after a .: no cell breaks a name
    assert "examples/<wbr>apps/<wbr>inference-deployment.yaml:53:13" in page
    assert "spec.<wbr>jobTemplate.<wbr>spec.<wbr>template.<wbr>spec" in page


def test_html_says_what_is_asked_for_and_where_it_goes_with_totals_that_add_up() -> None:
    page = run_cli(["report", "--format", "html", "--kube-version", "1.36", "examples"], REPO)
    html = page.stdout.decode()
    assert "Resource or product" not in html
    card = int(re.search(r'<div class="card"><b>(\d+)</b>GPUs', html)[1])  # type: ignore[index]
    for table, title in (
        ("namespaces", "Namespace"),
        ("asked", "Extended resource"),
        ("goes", "Device class"),
    ):
        rows = _cells(html, table)
        assert rows[0][0] == title
        *body, last = rows[1:]
        assert last[0] == "Total" and int(last[2]) == card == sum(int(r[2]) for r in body)
        assert int(last[1]) == 12
    asked = [r[0] for r in _cells(html, "asked")[1:-1]]
    goes = [r[0].split()[0] for r in _cells(html, "goes")[1:-1]]
    assert asked == ["amd.com/gpu", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"]
    assert goes == ["gpu.amd.com", "gpu.nvidia.com", "mig.nvidia.com"]


def test_waves_name_same_named_workloads_with_their_file(tmp_path: Path) -> None:
    for folder in ("gke-a", "gke-b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "deploy.yaml").write_text(deployment(name="tgi-gemma-deployment"))
    text = _report(tmp_path, "text")
    name = "Deployment/team-a/tgi-gemma-deployment (spec.template.spec)"
    assert f"  - {name} in gke-a/deploy.yaml:15 [" in text
    assert f"  - {name} in gke-b/deploy.yaml:15 [" in text
    markdown = _report(tmp_path, "markdown")
    assert f"1. {name} in `gke-a/deploy.yaml:15`," in markdown
    assert f"1. {name} in `gke-b/deploy.yaml:15`," in markdown
    html = _report(tmp_path, "html")
    for folder in ("gke-a", "gke-b"):
        assert f"in <code>{folder}/<wbr>deploy.yaml:15</code>" in html
    # a name no other workload has needs no file
    (tmp_path / "gke-b" / "deploy.yaml").write_text(deployment(name="other"))
    assert " in gke-a/deploy.yaml" not in _report(tmp_path, "text")


def test_a_plan_of_one_pilot_wave_still_has_its_stage_5(tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(deployment(name="serving"))
    text = _report(tmp_path, "text")
    assert "Wave 1: Pilot" in text and "Wave 2" not in text
    stage5 = text.split("== Stage 5: full conversion and rollback\n", 1)[1]
    assert stage5.startswith("the pilot wave holds every workload\n")
    markdown = _report(tmp_path, "markdown")
    assert (
        "### Stage 5: full conversion and rollback\n\nThe pilot wave holds every workload."
        in markdown
    )
    assert "The pilot wave holds every workload." in _report(tmp_path, "html")


def test_text_per_node_column_is_filled_or_left_out(tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(deployment(name="serving"))
    text = _report(tmp_path, "text")
    assert "PER-NODE" not in text  # no DaemonSet: no column that would stay empty
    assert re.search(r"^NAMESPACE +WORKLOADS +GPUS *$", text, re.M)
    (tmp_path / "daemonset.yaml").write_text(DAEMONSET)
    text = _report(tmp_path, "text")
    assert re.search(r"^NAMESPACE +WORKLOADS +GPUS +PER-NODE WORKLOADS *$", text, re.M)
    assert re.search(r"^ops +1 +0 +1 *$", text, re.M)  # the DaemonSet: one pod on every node
    assert re.search(r"^team-a +1 +1 +0 *$", text, re.M)
