"""The plan of ``report`` is what ``convert`` does with the same options, workload by workload.

``report --format json`` gives each workload (pod spec) a strategy; ``convert --check
--format json`` with the same options says, at the same file:line:col (the first GPU
request of the pod spec), what it does with it: DRA401 (it would rewrite it), DRA514 (it
leaves it, bridged, and the check passes for it), or a refusal whose code the plan's
reason names (``manual``). A workload the plan lists as manual is in no wave.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.helpers.cli_runner import invoke

EXAMPLES = REPO / "examples"
OPTIONS = [
    ("--strategy", "auto", "--kube-version", "1.36"),
    ("--strategy", "bridge", "--kube-version", "1.36"),
    ("--strategy", "bridge", "--kube-version", "1.35"),
    ("--kube-version", "1.36"),  # the default: rewrite
    (),
]
REFUSAL = re.compile(r"convert leaves it as it is: (DRA\d{3})")


def _json(args: list[str], root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.chdir(root)
    done = invoke([*args[:1], "--jobs", "1", *args[1:]])
    assert done.exception is None, done.output
    assert done.exit_code in (0, 1), done.output
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _compare(root: Path, options: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What differs between the plan and the check (empty: they agree), and the check
    passes exactly when no workload of the plan is manual (nor anything else fails)."""
    plan = _json(["report", "--format", "json", *options, "."], root, monkeypatch)
    check = _json(["convert", "--check", "--format", "json", *options, "."], root, monkeypatch)
    at: dict[tuple[str, int, int], set[str]] = {}
    in_file: dict[str, set[str]] = {}
    for f in check["findings"]:
        at.setdefault((f["path"], f["line"], f["col"]), set()).add(f["code"])
        in_file.setdefault(f["path"], set()).add(f["code"])
    stages = plan["plan"]["stages"]
    waves = [w for w in [stages["pilot"], *stages["rollout"]["waves"]] if w]
    in_waves = {name for wave in waves for name in wave["workloads"]}
    problems = []
    for w in plan["plan"]["stages"]["inventory"]["workloads"]:
        codes = at.get((w["path"], w["line"], w["col"]), set())
        where = f"{w['kind']}/{w['name']} {w['podPath']} ({w['strategy']}): convert says {codes}"
        if w["strategy"] == "rewrite":
            ok = "DRA401" in codes and "DRA514" not in codes
        elif w["strategy"] == "bridge":
            ok = "DRA514" in codes and "DRA401" not in codes
        elif w["strategy"] == "manual":
            refusal = REFUSAL.search(w["reasons"][0])
            ok = (
                refusal is not None
                and refusal[1] in in_file.get(w["path"], set())
                and not codes & {"DRA401", "DRA514"}
                and w["wave"] == 0
            )
        else:  # none: not in the mapping
            ok = not codes & {"DRA401", "DRA514"}
        if not ok:
            problems.append(where)
        namespace = f"{w['namespace']}/" if w.get("namespace") else ""
        listed = f"{w['kind']}/{namespace}{w['name']} ({w['podPath']})" in in_waves
        if listed != (w["strategy"] in ("rewrite", "bridge")):
            problems.append(f"{where}: in a wave: {listed}")
    return problems


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: " ".join(o) or "defaults")
def test_plan_and_check_agree_on_the_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: tuple[str, ...]
) -> None:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root)
    assert _compare(root, options, monkeypatch) == []


GENERATED = {
    "plain.yaml": """\
apiVersion: batch/v1
kind: Job
metadata:
  name: plain
  namespace: batch
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: registry.example.com/train:1
          resources:
            limits:
              nvidia.com/gpu: 2
""",
    "mig.yaml": """\
apiVersion: v1
kind: Pod
metadata:
  name: notebook
spec:
  containers:
    - name: nb
      image: registry.example.com/nb:1
      resources:
        limits:
          nvidia.com/mig-1g.10gb: 1
""",
    "amd.yaml": """\
apiVersion: v1
kind: Pod
metadata:
  name: rocm
spec:
  containers:
    - name: rocm
      image: rocm/rocm-terminal:6.2
      resources:
        limits:
          amd.com/gpu: 1
""",
    "intel.yaml": """\
apiVersion: v1
kind: Pod
metadata:
  name: arc
spec:
  containers:
    - name: arc
      image: registry.example.com/arc:1
      resources:
        limits:
          gpu.intel.com/i915: 1
""",
    "platform/amd-bridge.yaml": """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.extended.amd.com
spec:
  selectors:
    - cel:
        expression: device.driver == "gpu.amd.com"
  extendedResourceName: amd.com/gpu
""",
    "two/pods.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve
  namespace: prod
spec:
  replicas: 12
  template:
    spec:
      containers:
        - name: a
          image: registry.example.com/a:1
          resources:
            limits:
              nvidia.com/gpu: 1
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
  namespace: prod
spec:
  template:
    spec:
      containers:
        - name: b
          image: registry.example.com/b:1
          resources:
            requests:
              nvidia.com/gpu: 1
            limits:
              nvidia.com/gpu: 2
""",
    "kustomize/base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
    "kustomize/base/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ocr
spec:
  template:
    spec:
      containers:
        - name: ocr
          image: registry.example.com/ocr:1
          resources:
            limits:
              nvidia.com/gpu: 1
""",
    "kustomize/overlays/big/kustomization.yaml": (
        "resources:\n  - ../../base\npatches:\n  - path: gpu.yaml\n"
    ),
    "kustomize/overlays/big/gpu.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ocr
spec:
  template:
    spec:
      containers:
        - name: ocr
          resources:
            limits:
              nvidia.com/gpu: 4
""",
}
CONFIGS = {
    "none": None,
    "overrides": (
        "strategy:\n"
        "  default: auto\n"
        "  resources:\n"
        "    gpu.intel.com/*: rewrite\n"
        "  paths:\n"
        "    two/**: bridge\n"
        "  workloads:\n"
        "    Job/batch/plain: rewrite\n"
    ),
}


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: " ".join(o) or "defaults")
def test_plan_and_check_agree_on_a_generated_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: tuple[str, ...], config: str
) -> None:
    for name, text in GENERATED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    if CONFIGS[config] is not None:
        (tmp_path / ".dra-migrate.yaml").write_text(CONFIGS[config] or "")
    assert _compare(tmp_path, options, monkeypatch) == []


def test_a_base_convert_refuses_is_in_no_wave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kustomize base whose overlay cannot be converted with it (DRA222: the patch adds
    a container): convert leaves it, so the plan says manual, gives no rollback for it
    and puts it in no wave (it used to be wave 2)."""
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root)
    patch = root / "kustomize" / "overlays" / "prod" / "gpu-patch.yaml"
    patch.write_text(patch.read_text().replace("- name: ocr", "- name: warmup"))
    plan = _json(["report", "--format", "json", "--kube-version", "1.36", "."], root, monkeypatch)
    stages = plan["plan"]["stages"]
    ocr = next(w for w in stages["inventory"]["workloads"] if w["name"] == "ocr-server")
    assert ocr["strategy"] == "manual" and "DRA222" in ocr["reasons"][0]
    assert ocr["wave"] == 0
    waves = [stages["pilot"], *stages["rollout"]["waves"]]
    assert not any("ocr-server" in name for wave in waves for name in wave["workloads"])
    assert not any("kustomize/base" in step for wave in waves for step in wave["rollback"])


def test_the_default_plan_says_what_auto_would_bridge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """report defaults to rewrite, as convert does; its prerequisites say how many
    workloads --strategy auto would bridge for real (as the plan of auto says)."""
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root)
    plan = _json(["report", "--format", "json", "--kube-version", "1.36", "."], root, monkeypatch)
    assert plan["plan"]["strategy"] == "rewrite"
    notes = [
        p["requirement"]
        for p in plan["plan"]["stages"]["prerequisites"]["requirements"]
        if p["topic"] == "Strategy"
    ]
    auto = _json(
        ["report", "--format", "json", "--strategy", "auto", "--kube-version", "1.36", "."],
        root,
        monkeypatch,
    )
    bridged = [
        w for w in auto["plan"]["stages"]["inventory"]["workloads"] if w["strategy"] == "bridge"
    ]
    assert len(bridged) == 9
    assert notes == ["--strategy auto would bridge 9 of the 12 workload(s)"]
    # no version: auto bridges nothing, and the plan does not say it would
    plan = _json(["report", "--format", "json", "."], root, monkeypatch)
    assert not any(
        p["topic"] == "Strategy" for p in plan["plan"]["stages"]["prerequisites"]["requirements"]
    )
