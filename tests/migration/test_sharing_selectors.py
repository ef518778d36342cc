"""Stage 2 names each workload the waves move that selects a label GPU feature
discovery computes from the device plugin's sharing configuration (nvidia.com/gpu.replicas,
nvidia.com/gpu.sharing-strategy, nvidia.com/mig.strategy, a shared-suffixed
nvidia.com/gpu.product: NVIDIA/k8s-device-plugin internal/lm/resource.go): the labels
stay while the configuration does and change when it leaves the node, so the plan says
where each selector is and to keep the configuration until it moves. One report model,
every format."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dra_migrate.report.selections import SHARED_PRODUCT, selects_sharing
from tests.helpers.cli_runner import invoke

A10G = f"NVIDIA-A10G{SHARED_PRODUCT}"  # the product GFD writes on a time-sliced A10G

CONFIG = f"""\
drivers: {{gpu.nvidia.com: "0.5"}}
sharing:
  default: {{strategy: exclusive}}
  pools:
    - name: a10g-ts
      nodeSelector: {{nvidia.com/gpu.product: {A10G}}}
      strategy: time-slicing
      replicas: 4
"""

# on the time-sliced pool by its shared product (line 15), and a replica count of the
# pool by required node affinity (line 21); a second workload selects the plain product
# of an exclusive pool, which no sharing configuration changes
WORKLOADS = f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: embed
  namespace: ml
spec:
  replicas: 2
  selector:
    matchLabels: {{app: embed}}
  template:
    metadata:
      labels: {{app: embed}}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: {A10G}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - key: nvidia.com/gpu.replicas
                    operator: Exists
      containers:
        - name: server
          image: example.com/embed:1
          resources:
            limits:
              nvidia.com/gpu: 1
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: train
  namespace: ml
spec:
  selector:
    matchLabels: {{app: train}}
  template:
    metadata:
      labels: {{app: train}}
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: trainer
          image: example.com/train:1
          resources:
            limits:
              nvidia.com/gpu: 8
"""


def _report(folder: Path, fmt: str) -> str:
    (folder / ".dra-migrate.yaml").write_text(CONFIG)
    (folder / "app.yaml").write_text(WORKLOADS)
    old = os.getcwd()
    os.chdir(folder)
    try:
        result = invoke(["report", "--format", fmt, "."])
    finally:
        os.chdir(old)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.stdout


def test_json_names_the_workload_the_label_and_where(tmp_path: Path) -> None:
    data = json.loads(_report(tmp_path, "json"))
    needs = data["plan"]["stages"]["prerequisites"]["requirements"]
    named = {n["requirement"]: n["detail"] for n in needs if "selects" in n["requirement"]}
    product = f"Deployment/ml/embed selects nvidia.com/gpu.product={A10G} (nodeSelector)"
    replicas = "Deployment/ml/embed selects nvidia.com/gpu.replicas Exists (required node affinity)"
    assert set(named) == {product, replicas}  # not train: an exclusive pool's product
    assert named[product].startswith("app.yaml:15: ")
    assert named[replicas].startswith("app.yaml:21: ")
    assert "keep the sharing configuration until these selectors move" in named[product]
    assert all(n["topic"] == "GPU sharing" for n in needs if "selects" in n["requirement"])


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_every_format_names_them(tmp_path: Path, fmt: str) -> None:
    out = _report(tmp_path, fmt)
    stage_2 = out[out.lower().index("stage 2") : out.lower().index("stage 3")]
    assert f"Deployment/ml/embed selects nvidia.com/gpu.product={A10G}" in stage_2
    assert "nvidia.com/gpu.replicas Exists" in stage_2
    assert "until these selectors move to labels of your own" in stage_2
    assert "app.yaml" in stage_2 and "15" in stage_2
    assert "Deployment/ml/train selects" not in out


def test_a_workload_left_on_the_device_plugin_is_not_named(tmp_path: Path) -> None:
    """An ignore of DRA401 keeps it on the device plugin (strategy manual): no wave
    moves it, so its selectors hold no configuration back."""
    (tmp_path / "app.yaml").write_text(WORKLOADS)
    (tmp_path / ".dra-migrate.yaml").write_text(
        CONFIG + "ignore:\n  - {path: app.yaml, codes: [DRA401], reason: held}\n"
    )
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = invoke(["report", "--format", "json", "."])
    finally:
        os.chdir(old)
    data = json.loads(result.stdout)
    workloads = data["plan"]["stages"]["inventory"]["workloads"]
    assert {w["name"]: w["strategy"] for w in workloads} == {"embed": "manual", "train": "manual"}
    needs = data["plan"]["stages"]["prerequisites"]["requirements"]
    assert not [n for n in needs if "selects" in n["requirement"]]


@pytest.mark.parametrize(
    ("label", "values", "selects"),
    [
        ("nvidia.com/gpu.replicas", ("4",), True),
        ("nvidia.com/gpu.sharing-strategy", ("time-slicing",), True),
        ("nvidia.com/mig.strategy", ("single",), True),
        ("nvidia.com/gpu.product", (A10G,), True),
        ("nvidia.com/gpu.product", ("NVIDIA-A10G", f"NVIDIA-L4{SHARED_PRODUCT}"), True),
        ("nvidia.com/gpu.product", ("NVIDIA-A10G",), False),  # the same without sharing
        ("nvidia.com/gpu.product", (), False),  # Exists: holds either way
        ("nvidia.com/gpu.count", ("8",), False),
        ("nvidia.com/device-plugin.config", ("ts-4",), False),  # the user's own label
    ],
)
def test_which_selectors_the_sharing_configuration_decides(
    label: str, values: tuple[str, ...], selects: bool
) -> None:
    assert selects_sharing(label, values) is selects
