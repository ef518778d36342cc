"""report --deploys: what each kustomize overlay and chart rendering deploys, counted,
checked against totals computed independently from the real ``kubectl kustomize`` and
``helm template`` of the same tree (the ``tools`` fixture)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.report.test_report import SCHEMA, run_cli

TREE = {
    # a base at 1 replica x 1 GPU, a prod overlay patching it to 4 x 2, a staging
    # overlay whose HorizontalPodAutoscaler sets the replicas
    "app/base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
    "app/base/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: infer
spec:
  replicas: 1
  selector:
    matchLabels: {app: infer}
  template:
    metadata:
      labels: {app: infer}
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai:v0.6.0
          resources:
            limits:
              nvidia.com/gpu: 1
""",
    "app/overlays/prod/kustomization.yaml": """\
namespace: prod
resources:
  - ../../base
patches:
  - path: gpus.yaml
""",
    "app/overlays/prod/gpus.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: infer
spec:
  replicas: 4
  template:
    spec:
      containers:
        - name: server
          resources:
            limits:
              nvidia.com/gpu: 2
""",
    "app/overlays/staging/kustomization.yaml": """\
namespace: staging
resources:
  - ../../base
  - hpa.yaml
""",
    "app/overlays/staging/hpa.yaml": """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: infer
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: infer}
  minReplicas: 1
  maxReplicas: 6
""",
    # a chart whose Job runs 5 in parallel toward 3 completions (3 pods at once), with
    # a values overlay; and a Deployment whose replicas are a key without a default
    "charts/trainer/Chart.yaml": "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
    "charts/trainer/values.yaml": "workers: 5\ncompletions: 3\ngpus: 2\nserve: {}\n",
    "charts/trainer/values-prod.yaml": "gpus: 4\n",
    "charts/trainer/templates/job.yaml": """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-train
spec:
  parallelism: {{ .Values.workers }}
  completions: {{ .Values.completions }}
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: pytorch/pytorch:2.4.0
          resources:
            limits:
              nvidia.com/gpu: {{ .Values.gpus }}
""",
    "charts/trainer/templates/serve.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-serve
spec:
  replicas: {{ .Values.serve.replicas }}
  selector:
    matchLabels: {app: serve}
  template:
    metadata:
      labels: {app: serve}
    spec:
      containers:
        - name: serve
          image: vllm/vllm-openai:v0.6.0
          resources:
            limits:
              nvidia.com/gpu: 1
""",
    # a plain file, read as it is
    "jobs/cron.yaml": """\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
  namespace: batch
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      parallelism: 2
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: eval
              image: pytorch/pytorch:2.4.0
              resources:
                limits:
                  nvidia.com/gpu: 1
""",
}


def write(root: Path) -> None:
    for name, text in TREE.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture()
def on_path(tools: Path) -> Iterator[Path]:
    previous = os.environ["PATH"]
    os.environ["PATH"] = f"{tools}{os.pathsep}{previous}"
    try:
        yield tools
    finally:
        os.environ["PATH"] = previous


def report(root: Path, *args: str) -> dict[str, Any]:
    import json

    import jsonschema

    done = run_cli(["report", "--format", "json", *args, "."], root)
    assert done.returncode in (0, 1), done.stderr.decode()
    data: dict[str, Any] = json.loads(done.stdout)
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    return data


# --- the independent count: the tools' output, read with yaml ---------------------------


def _pod_gpus(spec: dict[str, Any]) -> int:
    def gpus(c: dict[str, Any]) -> int:
        return int(((c.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu", 0))

    running = sum(gpus(c) for c in spec.get("containers") or [])
    return max([running, *(gpus(c) for c in spec.get("initContainers") or [])])


def _independent(stream: bytes, release_namespace: str = "") -> list[tuple[str, int | None]]:
    """(namespace, GPUs or None when unknown) of each workload with GPUs."""
    docs = [d for d in yaml.safe_load_all(stream) if isinstance(d, dict)]
    scaled = {
        (d["metadata"].get("namespace", ""), d["spec"]["scaleTargetRef"]["name"])
        for d in docs
        if d["kind"] == "HorizontalPodAutoscaler"
    }
    out: list[tuple[str, int | None]] = []
    for d in docs:
        ns = d["metadata"].get("namespace", "")
        ns = "" if ns == release_namespace else ns
        spec = d.get("spec") or {}
        if d["kind"] == "CronJob":
            spec = spec["jobTemplate"]["spec"]
        if d["kind"] in ("Deployment", "StatefulSet", "ReplicaSet"):
            pods: int | None = spec.get("replicas", 1) if "replicas" in spec else 1
            if spec.get("replicas", 1) is None:
                pods = None  # rendered empty: given at install time
        elif d["kind"] in ("Job", "CronJob"):
            pods = min(spec.get("parallelism", 1), spec.get("completions") or 10**9)
        else:
            continue
        per_pod = _pod_gpus(spec["template"]["spec"])
        if not per_pod:
            continue
        if (ns, d["metadata"]["name"]) in scaled:
            pods = None
        out.append((ns, None if pods is None else pods * per_pod))
    return out


def _by_namespace(rows: list[tuple[str, int | None]]) -> dict[str, tuple[int, int, int]]:
    acc: dict[str, list[int]] = {}
    for ns, gpus in rows:
        entry = acc.setdefault(ns or "(no namespace)", [0, 0, 0])
        entry[0] += 1
        if gpus is None:
            entry[2] += 1
        else:
            entry[1] += gpus
    return {k: (v[0], v[1], v[2]) for k, v in acc.items()}


def _tools_count(root: Path, tools: Path) -> dict[str, tuple[int, int, int]]:
    def run(argv: list[str], cwd: Path) -> bytes:
        return subprocess.run(argv, cwd=cwd, capture_output=True, check=True, timeout=120).stdout

    rows: list[tuple[str, int | None]] = []
    for overlay in ("prod", "staging"):
        rows += _independent(
            run([str(tools / "kubectl"), "kustomize", "."], root / "app/overlays" / overlay)
        )
    chart = root / "charts/trainer"
    rows += _independent(
        run(
            [str(tools / "helm"), "template", "r", ".", "-n", "rel", "-f", "values-prod.yaml"],
            chart,
        ),
        "rel",
    )
    rows += _independent((root / "jobs/cron.yaml").read_bytes())
    return _by_namespace(rows)


# --- the tests --------------------------------------------------------------------------


def test_totals_agree_with_kubectl_kustomize_and_helm_template(
    tmp_path: Path, on_path: Path
) -> None:
    write(tmp_path)
    deployed = report(tmp_path, "--deploys")["plan"]["stages"]["inventory"]["deployed"]
    assert deployed["counted"] and not deployed["uncounted"]
    got = {
        t["key"]: (t["workloads"], t["gpus"], t["unknownWorkloads"]) for t in deployed["namespaces"]
    }
    expected = _tools_count(tmp_path, on_path)
    assert got == expected
    # the numbers themselves: prod 4 x 2, the chart's Job 3 x 4 (values-prod.yaml), the
    # CronJob 2 x 1; staging's Deployment under its HPA and the chart's serve unknown
    assert expected == {
        "prod": (1, 8, 0),
        "staging": (1, 0, 1),
        "(no namespace)": (2, 12, 1),
        "batch": (1, 2, 0),
    }
    stages = {
        t["key"]: (t["workloads"], t["gpus"], t["unknownWorkloads"]) for t in deployed["stages"]
    }
    assert stages["inventory"] == (5, 22, 2)
    waves = deployed["waves"]
    assert sum(t["gpus"] for t in waves) == 22
    assert sum(t["workloads"] for t in waves) == 5


def test_rows_name_their_unit_source_and_why_unknown(tmp_path: Path, on_path: Path) -> None:
    write(tmp_path)
    data = report(tmp_path, "--deploys")
    rows = {
        (w["unit"], w["name"]): w
        for w in data["plan"]["stages"]["inventory"]["deployed"]["workloads"]
    }
    prod = rows[("app/overlays/prod/kustomization.yaml", "infer")]
    assert (prod["namespace"], prod["pods"], prod["gpusPerPod"], prod["gpus"]) == ("prod", 4, 2, 8)
    assert prod["source"].startswith("app/overlays/prod/gpus.yaml:")  # the overlay's patch
    # the plan's wave of the base's Deployment
    base = [w for w in data["plan"]["stages"]["inventory"]["workloads"] if w["name"] == "infer"]
    assert prod["wave"] == base[0]["wave"] > 0
    staging = rows[("app/overlays/staging/kustomization.yaml", "infer")]
    assert staging["pods"] is None and "HorizontalPodAutoscaler infer" in staging["unknown"]
    unit = "charts/trainer/Chart.yaml with values-prod.yaml"
    train = rows[(unit, "release-train")]
    assert (train["pods"], train["gpusPerPod"], train["source"]) == (
        3,
        4,
        "charts/trainer/templates/job.yaml:1:1",
    )
    serve = rows[(unit, "release-serve")]
    assert serve["pods"] is None and "set at install" in serve["unknown"]
    assert rows[("", "nightly")]["source"] == "jobs/cron.yaml:4:9"
    # a base that overlays use is no unit of its own
    assert not any(u.startswith("app/base") for u, _ in rows)


def test_without_deploys_the_plan_names_what_it_does_not_count(tmp_path: Path) -> None:
    write(tmp_path)
    deployed = report(tmp_path)["plan"]["stages"]["inventory"]["deployed"]
    assert not deployed["counted"] and not deployed["workloads"]
    assert {(u["unit"], u["tool"]) for u in deployed["uncounted"]} == {
        ("app/overlays/prod/kustomization.yaml", "kustomize"),
        ("app/overlays/staging/kustomization.yaml", "kustomize"),
        ("charts/trainer/Chart.yaml with values-prod.yaml", "helm"),
    }
    text = run_cli(["report", "."], tmp_path).stdout.decode()
    assert "Not counted (give --deploys)" in text
    assert "app/overlays/prod/kustomization.yaml (kustomize)" in text


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_every_format_shows_the_totals(tmp_path: Path, on_path: Path, fmt: str) -> None:
    write(tmp_path)
    out = run_cli(["report", "--deploys", "--format", fmt, "."], tmp_path).stdout.decode()
    out = out.replace("<wbr>", "")  # html: where a long path may break
    assert "What deploys" in out
    assert "charts/trainer/templates/job.yaml:1:1" in out
    assert "HorizontalPodAutoscaler infer scales it (1 to 6 replicas)" in out


def test_simulate_deploys_each_overlay_never_the_base_on_its_own(
    tmp_path: Path, on_path: Path
) -> None:
    """One notion of what deploys: simulate's objects are report's (``deploys.units``);
    the base that two overlays use is not built a third time into no namespace."""
    from dra_migrate.simulate import deploys

    write(tmp_path)
    tree = deploys.read_tree(str(tmp_path), ["."])
    infer = sorted(
        o.namespace for o in tree.objects if o.name == "infer" and o.kind == "Deployment"
    )
    assert infer == ["prod", "staging"]
    units = {o.unit for o in tree.objects if o.unit.startswith("charts/")}
    assert units == {"charts/trainer/Chart.yaml with values-prod.yaml"}


CUSTOM = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain, namespace: train}
spec:
  replicatedJobs:
    - name: workers
      replicas: 4
      template:
        spec:
          parallelism: 3
          completions: 2
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: w
                  image: nvcr.io/nvidia/pytorch:24.05-py3
                  resources: {limits: {nvidia.com/gpu: 8}}
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: serve, namespace: serve}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 4
    leaderTemplate:
      spec:
        containers:
          - name: leader
            image: vllm/vllm-openai:v0.6.0
            resources: {limits: {nvidia.com/gpu: 1}}
    workerTemplate:
      spec:
        containers:
          - name: worker
            image: vllm/vllm-openai:v0.6.0
            resources: {limits: {nvidia.com/gpu: 8}}
"""


def test_custom_resources_count_their_groups_and_jobs(tmp_path: Path) -> None:
    """A JobSet's Jobs (replicas x min(parallelism, completions)), a LeaderWorkerSet's
    groups (a leader and size - 1 workers each)."""
    (tmp_path / "cr.yaml").write_text(CUSTOM, encoding="utf-8")
    deployed = report(tmp_path, "--deploys")["plan"]["stages"]["inventory"]["deployed"]
    pods = {
        (w["name"], w["podPath"].split(".")[-2]): (w["pods"], w["gpus"])
        for w in deployed["workloads"]
    }
    assert pods == {
        ("pretrain", "template"): (8, 64),
        ("serve", "leaderTemplate"): (2, 2),
        ("serve", "workerTemplate"): (6, 48),
    }
    totals = {t["key"]: t["gpus"] for t in deployed["namespaces"]}
    assert totals == {"train": 64, "serve": 50}


def test_a_unit_whose_tool_is_missing_is_named_not_counted(tmp_path: Path) -> None:
    write(tmp_path)
    previous = os.environ["PATH"]
    os.environ["PATH"] = str(tmp_path / "no-tools")
    try:
        deployed = report(tmp_path, "--deploys")["plan"]["stages"]["inventory"]["deployed"]
    finally:
        os.environ["PATH"] = previous
    reasons = {u["unit"]: u["reason"] for u in deployed["uncounted"]}
    assert reasons["charts/trainer/Chart.yaml with values-prod.yaml"] == "helm is not on PATH"
    assert "not on PATH" in reasons["app/overlays/prod/kustomization.yaml"]
    assert [w["name"] for w in deployed["workloads"]] == ["nightly"]  # the plain file


def test_totals_add_up_whatever_the_rows() -> None:
    """Invariants of the totals: namespaces, waves and the stages that split the waves
    (pilot, rollout, left out) each add up to the inventory; unknown counts stay out."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from dra_migrate.migration import deployed as totals
    from dra_migrate.report.deployed import Deployed, DeployedWorkload

    row = st.builds(
        DeployedWorkload,
        unit=st.sampled_from(["", "a/kustomization.yaml"]),
        tool=st.just("kustomize"),
        kind=st.sampled_from(["Deployment", "Job"]),
        namespace=st.sampled_from(["", "prod", "dev"]),
        name=st.sampled_from(["a", "b"]),
        pod_path=st.just("spec.template.spec"),
        source=st.sampled_from(["a.yaml:1:1", "b.yaml:2:3"]),
        gpus_per_pod=st.one_of(st.none(), st.integers(0, 8)),
        pods=st.one_of(st.none(), st.integers(0, 100)),
    )

    @settings(max_examples=200, deadline=None)
    @given(st.lists(row, max_size=12))
    def check(rows: list[DeployedWorkload]) -> None:
        done = totals.fill(Deployed(counted=True, workloads=rows), [])
        stage = {t.key: t for t in done.stages}
        whole = stage["inventory"]
        assert whole.gpus == sum(r.gpus or 0 for r in rows)
        assert whole.unknown == sum(r.gpus is None for r in rows)
        for group in (done.namespaces, done.waves):
            assert sum(t.gpus for t in group) == whole.gpus
            assert sum(t.workloads for t in group) == whole.workloads == len(rows)
        parts = [stage["pilot"], stage["rollout"], stage["left out of the waves"]]
        assert sum(t.gpus for t in parts) == whole.gpus
        assert sum(t.unknown for t in parts) == whole.unknown

    check()


def test_the_summary_line_says_what_deploys(tmp_path: Path, on_path: Path) -> None:
    write(tmp_path)
    text = run_cli(["report", "--deploys", "."], tmp_path).stdout.decode()
    assert "(deploys 22 GPU(s), 2 workload(s) of unknown count)" in text.splitlines()[-1]
    plain = run_cli(["report", "."], tmp_path).stdout.decode()
    assert "3 overlay(s) and chart rendering(s) not counted: give --deploys" in plain
