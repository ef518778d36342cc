"""simulate without a control plane: the fleet file, the fleets derived from it, the
report's JSON against its schema, the command line's refusals."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from dra_migrate.k8s.catalog import load_catalog
from dra_migrate.report import json_format
from dra_migrate.report.findings import ConfigError
from dra_migrate.report.model import Report
from dra_migrate.report.simulation import Placement, SimulatedWorkload, Simulation
from dra_migrate.simulate import devices, fleet, session
from tests.conftest import FIXTURES, REPO
from tests.helpers.cli_runner import invoke

FLEET = FIXTURES / "simulate" / "fleet.yaml"
SCHEMA = json.loads((REPO / "schemas" / "report.schema.json").read_text(encoding="utf-8"))


def _fleet(text: str, tmp_path: Path) -> fleet.Fleet:
    path = tmp_path / "fleet.yaml"
    path.write_text(text, encoding="utf-8")
    return session.read_fleet([str(path)], 1 << 20)


def test_a_pool_is_its_count_of_nodes_with_what_gpu_feature_discovery_labels() -> None:
    model = session.read_fleet([str(FLEET)], 1 << 20)
    a100 = [n for n in model.nodes if n.pool == "a100"]
    assert [n.name for n in a100] == ["a100-00", "a100-01"]
    node = a100[0]
    assert node.labels[fleet.PRODUCT_LABEL] == "NVIDIA-A100-SXM4-80GB"
    assert node.labels["nvidia.com/gpu.count"] == "8"
    assert node.taints == ({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},)
    assert node.plugin_resources() == {"nvidia.com/gpu": 8}
    mig = next(n for n in model.nodes if n.pool == "a100-mig")
    assert mig.plugin_resources() == {"nvidia.com/mig-1g.10gb": 14}  # mixed: 7 a GPU


@pytest.mark.parametrize(
    ("pool", "said"),
    [
        ("{name: a, gpus: 2}", "product"),
        ("{name: a, gpus: 2, product: NVIDIA L4, mig: [half]}", "MIG profiles"),
        ("{name: a, colour: red}", "unknown key 'colour'"),
        ("{name: A_B}", "DNS label"),
        ("{name: a, count: -1}", "whole number"),
        ("{name: a, taints: [{key: k, effect: Sometimes}]}", "NoSchedule"),
    ],
)
def test_a_pool_the_model_cannot_hold_is_a_usage_error(
    pool: str, said: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=said):
        _fleet(f"kind: Fleet\npools:\n  - {pool}\n", tmp_path)


def test_nodes_of_a_dump_keep_their_pool_labels_and_a_drivers_slices(tmp_path: Path) -> None:
    dump = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": "gke-a",
                    "labels": {
                        "cloud.google.com/gke-nodepool": "l4-pool",
                        fleet.PRODUCT_LABEL: "NVIDIA-L4",
                    },
                },
                "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"}},
            },
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "dra-b", "labels": {"karpenter.sh/nodepool": "h100"}},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi"}},
            },
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": "dra-b-gpu"},
                "spec": {
                    "driver": "gpu.nvidia.com",
                    "nodeName": "dra-b",
                    "pool": {"name": "dra-b", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": "gpu-0"}],
                },
            },
        ],
    }
    model = _fleet(json.dumps(dump), tmp_path)
    gke, dra = model.nodes
    assert (gke.pool, gke.product, gke.gpus, gke.dra) == ("l4-pool", "NVIDIA L4", 1, False)
    assert (dra.pool, dra.dra, len(dra.slices)) == ("h100", True, 1)
    made = devices.phase_nodes(model.nodes, "x.", "x", False, "now")
    assert made[0].status["allocatable"]["nvidia.com/gpu"] == "1"
    assert made[1].slices[0]["spec"]["nodeName"] == "x.dra-b"  # the dump's slice, both phases


def test_the_dra_fleet_publishes_what_the_driver_publishes_and_nothing_else() -> None:
    """Every attribute and capacity of the derived ResourceSlices is one the catalog says
    dra-driver-nvidia-gpu publishes for that kind of device."""
    model = session.read_fleet([str(FLEET)], 1 << 20)
    domain = load_catalog().domains[devices.DRIVER]
    made = devices.phase_nodes(model.nodes, "a.", "a", True, "now")
    seen = set()
    for node in made:
        assert "nvidia.com/gpu" not in node.status["allocatable"]  # no device plugin after
        for obj in node.slices:
            for device in obj["spec"]["devices"]:
                kind = device["attributes"]["type"]["string"]
                seen.add(kind)
                for name in device["attributes"]:
                    info = domain.attributes[name]
                    assert not info.devices or kind in info.devices, (name, kind)
                for name in device.get("capacity", {}):
                    assert domain.has_capacity(name), name
    assert seen == {"gpu", "mig"}


def test_the_report_of_a_simulation_is_valid_json_of_its_schema() -> None:
    placed = Placement(2, 2, ("a100",), ("a100-00",), (("server", 2),), ("gpu server: x",), ())
    row = SimulatedWorkload(
        "a.yaml",
        3,
        9,
        "Deployment",
        "ml",
        "infer",
        "spec.template.spec",
        "controller",
        placed,
        placed,
        holds=True,
    )
    sim = Simulation(
        "a local control plane",
        "fleet.yaml",
        2,
        {"a100": 2},
        16,
        "converted by this run",
        [row],
        {"create": 1.0},
    )
    data = json.loads(json_format.render(Report(files=[], simulation=sim), "simulate"))
    jsonschema.validate(data, SCHEMA)
    assert data["simulation"]["workloads"][0]["before"]["devices"] == {"server": 2}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["simulate", "."], "--fleet FILE is required"),
        (["simulate", "--fleet", str(FLEET), "--kube-context", "x", "."], "needs --kubeconfig"),
        (["simulate", "--fleet", str(FLEET), "--allow-real-nodes", "."], "needs --kubeconfig"),
        (["simulate", "--fleet", str(FLEET), "-"], "not - (stdin)"),
    ],
)
def test_the_command_line_refuses_in_one_line(args: list[str], said: str) -> None:
    result = invoke(args)
    assert result.exit_code == 2
    assert said in result.stderr and "Traceback" not in result.stderr


def test_without_the_kubernetes_client_simulate_says_how_to_install_it(tmp_path: Path) -> None:
    """The client is the ``cluster`` extra: one line, exit 2, as cluster mode says it."""
    from tests.cli.test_cli import DEPLOYMENT
    from tests.cluster.test_without_client import INSTALL, _run

    (tmp_path / "gpu.yaml").write_text(DEPLOYMENT)
    done = _run(tmp_path, "hide", "simulate", "--fleet", str(FLEET), "gpu.yaml")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and INSTALL in lines[0], done.stderr


def _two_workloads() -> Report:
    from dra_migrate.report.findings import finding

    ok = Placement(2, 2, ("a100",), ("a100-00",), (("server", 2),), (), ())
    short = Placement(2, 1, ("a100",), ("a100-00",), (("server", 2),), (), ("0/3 nodes",))
    rows = [
        SimulatedWorkload(
            "a.yaml",
            3,
            9,
            "Deployment",
            "ml",
            "infer",
            "spec.template.spec",
            "controller",
            ok,
            ok,
            holds=True,
        ),
        SimulatedWorkload(
            "b.yaml",
            4,
            9,
            "Job",
            "ml",
            "train",
            "spec.template.spec",
            "controller",
            ok,
            short,
            holds=False,
        ),
    ]
    sim = Simulation("x", "f.yaml", 2, {"a100": 2}, 16, "converted by this run", rows, {})
    lost = finding("DRA801", "b.yaml", 4, 9, "Job/ml/train: 1 of its pods bound after")
    return Report(files=[], findings=[lost], simulation=sim)


def test_every_format_renders_a_simulation_and_junit_has_a_case_a_workload() -> None:
    from xml.etree import ElementTree

    from dra_migrate.report import FORMATS, renderer

    report = _two_workloads()
    for name in FORMATS:
        assert renderer(name)(report, "simulate")
    text = renderer("text")(report, "simulate")
    assert "1 workload(s) hold, 1 differ" in text and "NO" in text
    suite = ElementTree.fromstring(renderer("junit")(report, "simulate")).find("testsuite")
    assert suite is not None
    cases = {c.get("file"): c for c in suite.iter("testcase")}
    assert set(cases) == {"a.yaml", "b.yaml"}
    assert cases["b.yaml"].find("failure") is not None and cases["a.yaml"].find("failure") is None
    assert report.exit_code() == 1


def test_a_chart_deploys_once_a_values_file(
    tmp_path: Path, tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chart with values overlays deploys once per overlay, each over values.yaml (as
    a kustomize base deploys once per overlay; ``ci/`` holds test values, never
    deployed), with values-dra.yaml given last to each; a chart without overlays deploys
    its values.yaml alone. ``report --deploys`` counts these same units."""
    import os

    from dra_migrate.simulate import deploys

    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n"
        "  labels:\n    mode: {{{{ .Values.mode }}}}\nspec:\n  containers:\n"
        "    - name: server\n      image: x\n      resources:\n        limits:\n"
        "          nvidia.com/gpu: {{{{ .Values.gpus }}}}\n"
    )
    for name in ("chart", "plain"):
        chart = tmp_path / name
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
        (chart / "values.yaml").write_text("gpus: 1\nmode: plugin\n")
        (chart / "templates" / "pod.yaml").write_text(pod.format(name=name))
    chart = tmp_path / "chart"
    (chart / "values-prod.yaml").write_text("gpus: 4\nmode: prod\n")
    (chart / "values.staging.yaml").write_text("gpus: 2\n")
    (chart / "ci").mkdir()
    (chart / "ci" / "test-values.yaml").write_text("gpus: 8\n")
    (chart / "values-dra.yaml").write_text("mode: dra\n")
    tree = deploys.read_tree(str(tmp_path), ["."])
    assert not tree.findings
    units = {
        o.unit: (
            o.obj["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"],
            o.obj["metadata"]["labels"]["mode"],
        )
        for o in tree.objects
    }
    assert units == {
        "chart/Chart.yaml with values-prod.yaml": (4, "dra"),
        "chart/Chart.yaml with values.staging.yaml": (2, "dra"),
        "plain/Chart.yaml": (1, "plugin"),
    }
    assert {o.path for o in tree.objects} == {
        "chart/templates/pod.yaml",
        "plain/templates/pod.yaml",
    }
