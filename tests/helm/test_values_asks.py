"""GPU asks in a chart's values files are counted (convert/values_asks.py), each with the
state the chart pass gives it (helm/unit.py ``_settle``): converted by a recipe or a
template edit, bridged, refused by the chart's reason or an operator's (DRA278), gone
once the chart is migrated. The KubeAI case is a reduced copy of the real chart
(tests/fixtures/charts/kubeai-profiles/SOURCE)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.convert import outside_counts
from tests.conftest import FIXTURES, REPO
from tests.helpers.cli_runner import invoke

KUBEAI = FIXTURES / "charts" / "kubeai-profiles"
SCHEMA = json.loads((REPO / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
PROFILES = ["nvidia-gpu-l4", "nvidia-gpu-h100", "amd-gpu-mi300x"]
OWN = ("--config", ".dra-migrate.yaml")  # written by _kubeai(own=True)


def _run(command: str, *args: str) -> dict[str, Any]:
    done = invoke([command, "--format", "json", *args])
    assert done.exit_code in (0, 1), done.output
    return json.loads(done.stdout)


def _rows(report: dict[str, Any]) -> dict[str, tuple[str, str | None, str]]:
    """podPath -> (resource, kept, state) of the inventory."""
    return {r["podPath"]: (r["resource"], r["kept"], r["state"]) for r in report["inventory"]}


def _kubeai(tmp_path: Path, own: bool = False) -> Path:
    chart = tmp_path / "charts" / "kubeai"
    shutil.copytree(KUBEAI, chart, ignore=shutil.ignore_patterns("SOURCE"))
    if own:  # a team's copy of the chart: no bridge by name
        (tmp_path / ".dra-migrate.yaml").write_text("helm:\n  own: [charts/kubeai]\n")
    return chart


def test_kubeai_profiles_are_counted_and_bridged_with_their_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real chart: 14 values keys and a summary of 0 requests before; now one ask a
    profile and resource (limits and requests of a profile ask once), bridged as the
    chart pass bridges the upstream chart (DRA242), each named by its reader (DRA278),
    and the TPU profile of values-gke.yaml not a GPU request."""
    _kubeai(tmp_path)
    monkeypatch.chdir(tmp_path)
    found = _run("scan", "charts")
    assert found["summary"]["requests"] == 3
    assert _rows(found) == {
        "resourceProfiles.nvidia-gpu-l4": ("nvidia.com/gpu", None, "bridged"),
        "resourceProfiles.nvidia-gpu-h100": ("nvidia.com/gpu", None, "bridged"),
        "resourceProfiles.amd-gpu-mi300x": ("amd.com/gpu", None, "bridged"),
    }
    [chart] = found["charts"]
    assert (chart["way"], chart["codes"]) == ("bridge", ["DRA242"])
    operator = [f for f in found["findings"] if f["code"] == "DRA278"]
    assert [(f["line"], f["col"]) for f in operator] == [
        (r["line"], r["col"]) for r in found["inventory"]
    ]
    assert all("KubeAI resource profile" in f["message"] for f in operator)
    assert sum(f["code"] == "DRA204" for f in found["findings"]) == 4  # each key, as before
    jsonschema.validate(found, SCHEMA)
    planned = _run("report", "--kube-version", "1.36", "charts")
    jsonschema.validate(planned, SCHEMA)
    plan = planned["plan"]["stages"]["inventory"]
    assert {w["podPath"]: w["strategy"] for w in plan["workloads"]} == {
        f"resourceProfiles.{p}": "bridge" for p in PROFILES
    }


def test_a_team_copy_of_kubeai_keeps_the_profiles_by_their_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the team's own chart no template renders a GPU line (the ConfigMap holds the
    profiles as text): the chart is manual, and the profiles are refused by what reads
    them (DRA278), not the chart's reason; convert --check fails once a GPU line."""
    _kubeai(tmp_path, own=True)
    monkeypatch.chdir(tmp_path)
    found = _run("scan", *OWN, "charts")
    assert found["summary"]["requests"] == 3
    assert {state for _r, _k, state in _rows(found).values()} == {"refused"}
    assert {kept for _r, kept, _s in _rows(found).values()} == {"DRA278"}
    [chart] = found["charts"]
    assert chart["way"] == "manual"
    checked = invoke(["convert", "--check", "--format", "json", *OWN, "charts"])
    assert checked.exit_code == 1
    left = [f for f in json.loads(checked.stdout)["findings"] if f["code"] == "DRA401"]
    places = [(f["path"], f["line"], f["col"]) for f in left]
    assert len(places) == len(set(places)) == 4  # the chart's DRA401 at each key, once


def test_without_the_operator_rule_the_team_copy_falls_back_to_the_chart_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule is what names the reader: without it the rows are refused by the
    chart's own reason, and no DRA278 is said."""
    monkeypatch.setattr(outside_counts, "VALUES_KEYS", ())
    _kubeai(tmp_path, own=True)
    monkeypatch.chdir(tmp_path)
    found = _run("scan", *OWN, "charts")
    [chart] = found["charts"]
    assert {kept for _r, kept, _s in _rows(found).values()} == set(chart["codes"])
    assert "DRA278" not in {f["code"] for f in found["findings"]}


def test_a_recipe_converts_the_values_asks_and_they_are_gone_once_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ray-cluster's recipe: the worker's GPUs in values.yaml and in ci/gpu-values.yaml
    (a values file the file pass reads as a document of no kind, DRA212) are converted
    asks; after convert --write the chart asks for no extended resource."""
    shutil.copytree(FIXTURES / "charts" / "ray-cluster", tmp_path / "charts" / "ray-cluster")
    monkeypatch.chdir(tmp_path)
    found = _run("scan", "charts")
    assert found["charts"][0]["way"] == "recipe"
    assert found["summary"]["requests"] == 2
    assert {r["state"] for r in found["inventory"]} == {"converted"}
    assert invoke(["convert", "--write", "charts"]).exit_code == 0
    assert _run("scan", "charts")["summary"]["requests"] == 0


def test_a_template_edit_converts_the_values_asks_and_a_migrated_chart_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart = tmp_path / "charts" / "server"
    shutil.copytree(FIXTURES / "charts" / "shapes" / "toyaml-resources" / "before", chart)
    monkeypatch.chdir(tmp_path)
    found = _run("scan", "charts")
    assert found["charts"][0]["way"] == "template"
    assert _rows(found) == {"resources": ("nvidia.com/gpu", None, "converted")}
    assert invoke(["convert", "--write", "charts"]).exit_code == 0
    again = _run("scan", "charts")
    assert again["charts"][0]["way"] == "done"
    assert again["summary"]["requests"] == 0 and not again["inventory"]


def test_a_manual_chart_refuses_its_values_asks_by_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library chart is left as it is (DRA243): its values' asks are refused by it."""
    chart = tmp_path / "charts" / "common"
    chart.mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: common\nversion: 1.0.0\ntype: library\n"
    )
    (chart / "values.yaml").write_text(
        "worker:\n  resources:\n    requests:\n      nvidia.com/gpu: 2\n"
        "    limits:\n      nvidia.com/gpu: 2\n"
    )
    monkeypatch.chdir(tmp_path)
    found = _run("scan", "charts")
    assert found["summary"]["requests"] == 1  # requests and limits: one ask
    [row] = found["inventory"]
    assert (row["podPath"], row["line"], row["count"]) == ("worker", 6, 2)  # at the limit
    assert (row["kept"], row["state"]) == ("DRA243", "refused")


def test_a_parent_values_ask_takes_its_dependency_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A platform chart vendoring KubeAI sets a profile under the dependency's key: the
    dependency's way (the bridge) settles it, and the reader is named through the key."""
    parent = tmp_path / "platform"
    parent.mkdir()
    (parent / "Chart.yaml").write_text(
        "apiVersion: v2\nname: platform\nversion: 0.1.0\ndependencies:\n"
        "  - name: kubeai\n    version: 0.22.1\n    repository: https://www.kubeai.org\n"
    )
    (parent / "values.yaml").write_text(
        "kubeai:\n  resourceProfiles:\n    nvidia-gpu-a100-80gb:\n      limits:\n"
        '        nvidia.com/gpu: "8"\n'
    )
    _kubeai(parent)
    monkeypatch.chdir(tmp_path)
    found = _run("scan", "platform")
    rows = _rows(found)
    assert rows["kubeai.resourceProfiles.nvidia-gpu-a100-80gb"] == (
        "nvidia.com/gpu",
        None,
        "bridged",
    )
    assert found["summary"]["requests"] == 4
    assert [c["name"] for c in found["charts"]] == ["kubeai"]


def test_the_fixture_names_its_source_and_the_docs_cite_the_reader() -> None:
    """The fixture's SOURCE names the real chart; the docs' operator table cites it."""
    source = (KUBEAI / "SOURCE").read_text()
    assert "f442a2cd620cc0c903d0d0a5145bb70fb050503b" in source
    conversion = (REPO / "docs" / "conversion.md").read_text()
    assert "DRA278" in conversion and "model_controller.go" in conversion


MODELS = FIXTURES / "kubeai-models"


def test_kubeai_models_are_counted_through_their_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Models alone (the real manifests/models): no resource name in them, so they were
    never read; now each GPU profile's ask is counted with KubeAI's default profile
    times the multiple, refused by DRA279, and the cpu profile asks for nothing."""
    found = _run("scan", str(MODELS))
    assert found["summary"]["requests"] == 2
    rows = {
        r["name"]: (r["resource"], r["count"], r["kept"], r["state"]) for r in found["inventory"]
    }
    assert rows == {
        "llama-3.1-405b-instruct-fp8-h100": ("nvidia.com/gpu", 8, "DRA279", "refused"),
        "llama-3.1-8b-instruct-fp8-l4": ("nvidia.com/gpu", 1, "DRA279", "refused"),
    }
    assert {f["code"] for f in found["findings"]} == {"DRA279"}


def test_kubeai_models_take_the_profiles_the_run_defines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the chart's values in the run a Model takes the profile defined there: its
    resource and count per multiple (a team's values.yaml that gives the H100 profile
    two GPUs makes the 405B model ask for 16) and its state (bridged with the chart)."""
    chart = _kubeai(tmp_path)
    values = chart / "values.yaml"
    values.write_text(
        values.read_text().replace(
            'nvidia-gpu-h100:\n    imageName: "nvidia-gpu"\n    limits:\n      nvidia.com/gpu: "1"',
            'nvidia-gpu-h100:\n    imageName: "nvidia-gpu"\n    limits:\n      nvidia.com/gpu: "2"',
        )
    )
    shutil.copytree(MODELS, tmp_path / "models", ignore=shutil.ignore_patterns("SOURCE"))
    monkeypatch.chdir(tmp_path)
    found = _run("scan", ".")
    models = {r["name"]: (r["count"], r["state"]) for r in found["inventory"] if r["kind"]}
    assert models == {
        "llama-3.1-405b-instruct-fp8-h100": (16, "bridged"),
        "llama-3.1-8b-instruct-fp8-l4": (1, "bridged"),
    }
    assert found["summary"]["requests"] == 5  # three profiles, two Models


def test_a_model_naming_an_unknown_profile_is_counted_under_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Model whose profile neither KubeAI's defaults nor the run's values define: one
    refused ask (DRA279) under the profile's name, its resource and count unknown (it was
    not counted at all); once the chart's values in the run define the profile, the
    row takes its resource, count and state, and the finding no longer says unknown."""
    model = (MODELS / "llama-3.1-8b-instruct-fp8-l4.yaml").read_text()
    assert "resourceProfile: nvidia-gpu-l4:1" in model
    (tmp_path / "model.yaml").write_text(
        model.replace("resourceProfile: nvidia-gpu-l4:1", "resourceProfile: team-a10:2")
    )
    monkeypatch.chdir(tmp_path)
    alone = _run("scan", "model.yaml")
    assert alone["summary"]["requests"] == 1
    [row] = alone["inventory"]
    assert (row["resource"], row["count"], row["value"], row["kept"], row["state"]) == (
        "resourceProfile:team-a10",
        None,
        "team-a10:2",
        "DRA279",
        "refused",
    )
    [said] = alone["findings"]
    assert said["code"] == "DRA279" and "resourceProfile:team-a10" in said["message"]
    assert "unknown" in said["message"]
    values = _kubeai(tmp_path) / "values.yaml"
    values.write_text(
        values.read_text().replace(
            "  nvidia-gpu-h100:\n",
            '  team-a10:\n    limits:\n      nvidia.com/gpu: "1"\n  nvidia-gpu-h100:\n',
            1,
        )
    )
    found = _run("scan", ".")
    [row] = [r for r in found["inventory"] if r["kind"]]
    assert (row["resource"], row["count"], row["state"]) == ("nvidia.com/gpu", 2, "bridged")
    [said] = [f for f in found["findings"] if f["path"] == "model.yaml"]
    assert "unknown" not in said["message"] and "team-a10 times 2" in said["message"]


def test_kubeai_configuration_files_name_the_reader() -> None:
    """KubeAI's own configuration (system.yaml, a document of no kind: the real
    hack/dev-configs/gke.yaml) holds the same profiles: named by their reader (DRA278,
    not DRA212's "move it into a pod template"), one refused ask a profile."""
    found = _run("scan", str(FIXTURES / "kubeai-config"))
    assert _rows(found) == {
        "resourceProfiles.nvidia-gpu-l4": ("nvidia.com/gpu", "DRA278", "refused")
    }
    assert {f["code"] for f in found["findings"]} == {"DRA278"}


def test_the_views_show_each_ask_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The text table and the Markdown report say what the run makes of each ask."""
    _kubeai(tmp_path, own=True)
    monkeypatch.chdir(tmp_path)
    text = invoke(["scan", *OWN, "charts"]).stdout
    table = [line for line in text.splitlines() if " app " in line and " DRA" not in line]
    assert "STATE" in text and table and all(line.rstrip().endswith("refused") for line in table)
    assert all("(no kind)" in line for line in table)
    markdown = invoke(["scan", "--format", "markdown", *OWN, "charts"]).stdout
    assert "| State |" in markdown and "| refused |" in markdown


_KEYS = st.sampled_from(
    ["worker", "resources", "limits", "requests", "resourceProfiles", "gpu-a", "nodeSelector"]
)
_LEAVES = st.sampled_from(['"1"', "2", "0.5", "x", "{}"])
_RESOURCES = st.sampled_from(["nvidia.com/gpu", "amd.com/gpu", "google.com/tpu", "cpu"])


def _tree(depth: int) -> st.SearchStrategy[Any]:
    leaf = st.dictionaries(_RESOURCES, _LEAVES, max_size=3)
    if depth == 0:
        return leaf
    return st.dictionaries(_KEYS, st.one_of(leaf, _tree(depth - 1)), max_size=3)


def _yaml(value: Any, indent: int = 0) -> str:
    if not isinstance(value, dict):
        return f" {value}\n"
    if not value:
        return " {}\n"
    pad = " " * indent
    return "\n" + "".join(f"{pad}{k}:{_yaml(v, indent + 2)}" for k, v in value.items())


@settings(max_examples=150, deadline=None)
@given(_tree(3))
def test_every_values_ask_is_one_row_at_one_of_its_keys(tree: dict[str, Any]) -> None:
    """Whatever the values: each row stands at a GPU key DRA204 names, one row a
    mapping and GPU resource (requests and limits of one mapping ask once), and a TPU
    or cpu key is never a row (limits before requests: the manual chart's case)."""
    from dra_migrate.convert import values_asks
    from dra_migrate.convert.mapping import load_config
    from dra_migrate.manifests import compose, sources

    text = _yaml(tree).lstrip("\n") or "{}\n"
    source = sources.decode("values.yaml", text.encode())
    found, rows = values_asks.helm_values(source, compose.parse(source), load_config(None))
    keys = {(f.line, f.col) for f in found if f.code == "DRA204"}
    assert {(r.line, r.col) for r in rows} <= keys
    assert all(r.resource in ("nvidia.com/gpu", "amd.com/gpu") for r in rows)
    assert len({(r.pod_path, r.resource) for r in rows}) == len(rows)
    assert len(rows) <= len(keys)
    assert bool(rows) == bool(keys)  # a GPU key is an ask


MODELS_CHART = FIXTURES / "charts" / "kubeai-models-chart"


def test_the_models_chart_counts_the_models_its_values_turn_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KubeAI's models chart renders a Model for each catalog entry turned on: its own
    values turn none on (nothing counted), all.enabled turns every one on (the GPU
    profiles counted, not cpu), and a team's values file that lists a model turned on
    counts it with its profile and multiple."""
    chart = tmp_path / "models"
    shutil.copytree(MODELS_CHART, chart, ignore=shutil.ignore_patterns("SOURCE"))
    monkeypatch.chdir(tmp_path)
    assert _run("scan", "models")["summary"]["requests"] == 0
    values = chart / "values.yaml"
    values.write_text(values.read_text().replace("all:\n  enabled: false", "all:\n  enabled: true"))
    found = _run("scan", "models")
    assert _rows(found) == {
        "catalog.llama-3.2-11b-vision-instruct-l4": ("nvidia.com/gpu", "DRA279", "refused"),
        "catalog.mistral-small-24b-instruct-h100": ("nvidia.com/gpu", "DRA279", "refused"),
    }
    values.write_text(values.read_text().replace("all:\n  enabled: true", "all:\n  enabled: false"))
    (chart / "values-team.yaml").write_text(
        "catalog:\n  llama-3.1-8b-instruct-fp8-l4:\n    enabled: true\n"
        "    engine: VLLM\n    resourceProfile: nvidia-gpu-l4:2\n"
    )
    [row] = _run("scan", "models")["inventory"]
    assert (row["path"], row["count"], row["value"]) == (
        "models/values-team.yaml",
        2,
        "nvidia-gpu-l4:2",
    )


@pytest.mark.parametrize(
    ("overlay", "expected"),
    [
        (  # the entry turned on alone: its profile is the chart's (nvidia-gpu-l4:1)
            "catalog:\n  llama-3.2-11b-vision-instruct-l4:\n    enabled: true\n",
            {("catalog.llama-3.2-11b-vision-instruct-l4", 3, "nvidia-gpu-l4:1")},
        ),
        (  # every entry: the GPU ones, at all.enabled (cpu asks for none)
            "all:\n  enabled: true\n",
            {
                ("catalog.llama-3.2-11b-vision-instruct-l4", 2, "nvidia-gpu-l4:1"),
                ("catalog.mistral-small-24b-instruct-h100", 2, "nvidia-gpu-h100:1"),
            },
        ),
        (  # the overlay repeats the profile: counted once, with the overlay's own
            "catalog:\n  llama-3.2-11b-vision-instruct-l4:\n    enabled: true\n"
            "    resourceProfile: nvidia-gpu-l4:2\n",
            {("catalog.llama-3.2-11b-vision-instruct-l4", 4, "nvidia-gpu-l4:2")},
        ),
        (  # an entry deleted (a null) is not rendered; all.enabled renders the rest
            "all:\n  enabled: true\ncatalog:\n  llama-3.2-11b-vision-instruct-l4: null\n",
            {("catalog.mistral-small-24b-instruct-h100", 2, "nvidia-gpu-h100:1")},
        ),
        (  # an entry the overlay leaves off: nothing
            "catalog:\n  mistral-small-24b-instruct-h100:\n    enabled: false\n",
            set(),
        ),
    ],
)
def test_a_models_chart_overlay_that_turns_an_entry_on_is_counted(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    overlay: str,
    expected: set[tuple[str, int, str]],
) -> None:
    """An overlay values file that turns a catalog entry on without repeating its
    resourceProfile: the chart's values.yaml coalesced with it as Helm does (read only)
    gives the profile; counted on the overlay (DRA279), at the key that turns it on."""
    chart = tmp_path / "models"
    shutil.copytree(MODELS_CHART, chart, ignore=shutil.ignore_patterns("SOURCE"))
    (chart / "values-team.yaml").write_text(overlay)
    before = {p.name: p.read_bytes() for p in chart.iterdir() if p.is_file()}
    monkeypatch.chdir(tmp_path)
    found = _run("scan", "models")
    rows = {(r["podPath"], r["line"], r["value"]) for r in found["inventory"]}
    assert rows == expected
    assert all(r["path"] == "models/values-team.yaml" for r in found["inventory"])
    assert all(
        (r["kept"], r["state"], r["resource"]) == ("DRA279", "refused", "nvidia.com/gpu")
        for r in found["inventory"]
    )
    assert found["summary"]["requests"] == len(expected)
    said = {(f["path"], f["line"]) for f in found["findings"] if f["code"] == "DRA279"}
    assert said == {("models/values-team.yaml", line) for _key, line, _value in expected}
    assert {p.name: p.read_bytes() for p in chart.iterdir() if p.is_file()} == before
