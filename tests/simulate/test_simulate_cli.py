"""``dra-migrate simulate`` end to end on the shared control plane, as a cluster the user
gives (``--kubeconfig``): the comparison, ``--after``, the exit status, the JSON, and
that the run leaves nothing behind and refuses a cluster with real nodes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema

from dra_migrate.simulate.control_plane import ControlPlane
from tests.conftest import FIXTURES, REPO
from tests.helpers.cli_runner import invoke
from tests.helpers.control_plane import api

FLEET = str(FIXTURES / "simulate" / "fleet.yaml")
CASE = FIXTURES / "convert" / "kind-deployment"
# other tests of the session leave nodes of their own on the shared control plane: the
# runs here place beside them (their pods go only to the run's nodes all the same)
ALLOW = "--allow-real-nodes"
SCHEMA = json.loads((REPO / "schemas" / "report.schema.json").read_text(encoding="utf-8"))


def _left(plane: ControlPlane) -> list[str]:
    """Nodes and live namespaces of simulate runs still on the server."""
    _, nodes = api(plane, "GET", "/api/v1/nodes?labelSelector=dra-migrate.dev/simulation")
    _, spaces = api(plane, "GET", "/api/v1/namespaces?labelSelector=dra-migrate.dev/simulation")
    live = [
        n["metadata"]["name"] for n in spaces["items"] if not n["metadata"].get("deletionTimestamp")
    ]
    return [n["metadata"]["name"] for n in nodes["items"]] + live


def test_a_conversion_that_holds_exits_0_with_its_json_and_leaves_nothing(
    control_plane: ControlPlane, kubeconfig: str
) -> None:
    result = invoke(
        [
            "simulate",
            "--kubeconfig",
            kubeconfig,
            ALLOW,
            "--fleet",
            FLEET,
            "--format",
            "json",
            str(CASE / "input"),
        ]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    jsonschema.validate(data, SCHEMA)
    (row,) = data["simulation"]["workloads"]
    assert row["holds"] and row["before"]["bound"] == row["after"]["bound"] == 2
    assert row["after"]["devices"] == {"server": 2} and len(row["after"]["claims"]) == 2
    assert _left(control_plane) == []


def test_after_compares_with_a_tree_converted_by_hand(kubeconfig: str, tmp_path: Path) -> None:
    held = invoke(
        [
            "simulate",
            "--kubeconfig",
            kubeconfig,
            ALLOW,
            "--fleet",
            FLEET,
            str(CASE / "input"),
            "--after",
            str(CASE / "expected"),
        ]
    )
    assert held.exit_code == 0, held.output
    broken = tmp_path / "by-hand"
    shutil.copytree(CASE / "expected", broken)
    text = (broken / "inference.yaml").read_text(encoding="utf-8")
    (broken / "inference.yaml").write_text(text.replace("count: 2", "count: 1"), encoding="utf-8")
    differs = invoke(
        [
            "simulate",
            "--kubeconfig",
            kubeconfig,
            ALLOW,
            "--fleet",
            FLEET,
            str(CASE / "input"),
            "--after",
            str(broken),
        ]
    )
    assert differs.exit_code == 1, differs.output
    assert "DRA803 error" in differs.stdout and "server: 1 after" in differs.stdout


def test_a_cluster_with_real_nodes_is_refused_unless_allowed(
    control_plane: ControlPlane, kubeconfig: str
) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "real-node-1"}}
    status, _ = api(control_plane, "POST", "/api/v1/nodes", node)
    assert status == 201
    try:
        args = ["simulate", "--kubeconfig", kubeconfig, "--fleet", FLEET, str(CASE / "input")]
        refused = invoke(args)
        assert refused.exit_code == 2
        assert "the cluster has real nodes (" in refused.stderr
        allowed = invoke([*args, "--allow-real-nodes"])
        assert allowed.exit_code == 0, allowed.output
    finally:
        api(control_plane, "DELETE", "/api/v1/nodes/real-node-1")
