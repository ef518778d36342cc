"""``dra-migrate simulate`` on a time-sliced pool, end to end on the shared control
plane: the DRA driver's consumable shares after the migration are those stage 2 of the
plan sets from the run's sharing model (converted by the run, or with ``--after``), and
a fleet whose driver publishes fewer shares than the device plugin had replicas is
DRA801 with the scheduler's reason and DRA812."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import FIXTURES
from tests.helpers.cli_runner import invoke

CASE = FIXTURES / "convert" / "sharing-ai-on-eks-time-slicing"
ALLOW = "--allow-real-nodes"  # other tests leave nodes of their own on the shared plane
# awslabs/ai-on-eks's gpu-ts NodePool: one A10G a node, time-sliced four ways
POOL = """kind: Fleet
pools:
  - name: gpu-ts
    gpus: 1
    product: NVIDIA A10G
    labels: {NodePool: gpu-ts}
    taints:
      - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
      - {key: hub.jupyter.org/dedicated, value: user, effect: NoSchedule}
    sharing: {strategy: time-slicing, replicas: 4}
"""


def _four(tmp_path: Path, folder: str) -> Path:
    """The case's ``folder`` with four replicas of the Deployment: the four references
    the device plugin advertises for the node's one GPU."""
    tree = tmp_path / folder
    shutil.copytree(CASE / folder, tree)
    shutil.copy(CASE / "input" / ".dra-migrate.yaml", tree / ".dra-migrate.yaml")
    path = tree / "timeslicing-test.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("replicas: 2", "replicas: 4", 1), encoding="utf-8")
    return tree


def _simulate(kubeconfig: str, fleet: Path, *paths: str) -> tuple[int, dict]:
    options = ["--kubeconfig", kubeconfig, ALLOW, "--fleet", str(fleet), "--format", "json"]
    result = invoke(["simulate", *options, *paths])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def test_four_shares_of_one_gpu_place_as_four_time_slices(kubeconfig: str, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(POOL, encoding="utf-8")
    code, data = _simulate(kubeconfig, fleet, str(_four(tmp_path, "input")))
    (row,) = data["simulation"]["workloads"]
    assert code == 0, data["findings"]
    assert row["before"]["bound"] == row["after"]["bound"] == 4
    # four claims, each one share of the one device the driver publishes
    assert row["after"]["claims"] == ["gpu cuda-sample-vector-add: gpu.nvidia.com/gpu-0"]
    assert row["after"]["devices"] == {"cuda-sample-vector-add": 1}


def test_a_tree_converted_by_hand_gets_the_shares_of_the_repositorys_model(
    kubeconfig: str, tmp_path: Path
) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(POOL, encoding="utf-8")
    before, after = _four(tmp_path, "input"), _four(tmp_path, "expected")
    code, data = _simulate(kubeconfig, fleet, str(before), "--after", str(after))
    assert code == 0, data["findings"]
    (row,) = data["simulation"]["workloads"]
    assert row["before"]["bound"] == row["after"]["bound"] == 4


def test_fewer_shares_than_replicas_is_dra801_with_dra812(kubeconfig: str, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(POOL + "    consumableShares: 2\n", encoding="utf-8")
    code, data = _simulate(kubeconfig, fleet, str(_four(tmp_path, "input")))
    assert code == 1
    (row,) = data["simulation"]["workloads"]
    assert (row["before"]["bound"], row["after"]["bound"]) == (4, 2)
    said = {f["code"]: f["message"] for f in data["findings"]}
    assert "cannot allocate all claims" in said["DRA801"]
    assert "1 device(s) of 2 consumable shares each" in said["DRA812"]
    assert "not the 4 the device plugin had" in said["DRA812"]
