"""Template edits for the team's own charts (dra_migrate/helm/template_edit.py), proven
with the real helm: with the switch off the rendering after is byte for byte the one
before; with it on it equals ``dra-migrate convert -`` of the rendering before, object
by object (generated names aside), for the default values, every values file of the
chart folder and ci/, and a changed GPU count. Unsafe constructs leave the chart as it
is with DRA243 naming them."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from dra_migrate.convert import unconverted
from dra_migrate.convert.mapping import HelmConfig, Settings, load_config
from dra_migrate.helm import chart as chart_module
from dra_migrate.helm import template_edit, template_text
from dra_migrate.helm.model import DONE, MANUAL, TEMPLATE, ChartEdit, Options
from dra_migrate.manifests import sources
from tests.conftest import FIXTURES, REPO
from tests.helpers.helm_render import converted, difference, render

CHARTS = FIXTURES / "charts"
GOLDEN = CHARTS / "golden" / "inference"
SETTINGS = Settings(target="v1", config=load_config(None))


def _read(path: str) -> bytes:
    return Path(path).read_bytes()


@dataclass(frozen=True)
class Case:
    name: str
    folder: Path
    count_set: tuple[str, ...]  # --set (and -f) that changes the GPU count
    count_keys: tuple[str, ...]


CASES = [
    Case("inference", REPO / "examples" / "charts" / "inference", ("gpu.count=3",), ("gpu.count",)),
    Case("triton-gcp", CHARTS / "triton-gcp", ("image.numGpus=2",), ("image.numGpus",)),
    Case(
        "kubeai",
        CHARTS / "kubeai",
        ("-f=ci/gpu-values.yaml", "resources.limits.nvidia\\.com/gpu=4"),
        ("resources.limits.nvidia.com/gpu",),
    ),
]


def _chart(folder: Path) -> chart_module.Chart:
    return chart_module.read(str(folder), str(folder), _read, HelmConfig())


def _migrate(
    case_folder: Path, tmp: Path, options: Options | None = None
) -> tuple[Path, ChartEdit]:
    """A copy of the chart, migrated (the edit's files written into it)."""
    work = tmp / case_folder.name
    shutil.copytree(case_folder, work)
    edit = template_edit.plan(_chart(work), SETTINGS, options or Options(), _read)
    for path, data in {**edit.changed, **edit.created}.items():
        Path(path).write_bytes(data)
    return work, edit


def _variants(folder: Path, case: Case) -> list[tuple[list[Path], list[str]]]:
    """(values files, --set) of every rendering the proof makes."""
    files = [p for p in sorted(folder.glob("values*.yaml")) if p.name != "values.yaml"]
    files += sorted((folder / "ci").glob("*.yaml"))
    out: list[tuple[list[Path], list[str]]] = [([], [])]
    out += [([p], []) for p in files]
    extra_files = [folder / s[3:] for s in case.count_set if s.startswith("-f=")]
    out.append((extra_files, [s for s in case.count_set if not s.startswith("-f=")]))
    return out


def _relative(values: list[Path], old: Path, new: Path) -> list[Path]:
    return [new / p.relative_to(old) for p in values]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rendering_proves_the_edit(case: Case, tools: Path, tmp_path: Path) -> None:
    helm = tools / "helm"
    work, edit = _migrate(case.folder, tmp_path)
    assert edit.plan.way == TEMPLATE and not edit.findings[1:], edit.findings
    gpu_renderings = 0
    for values, sets in _variants(case.folder, case):
        before = render(helm, case.folder, values, sets)
        after_off = render(helm, work, _relative(values, case.folder, work), sets)
        assert after_off == before, f"switch off changes the rendering for {values} {sets}"
        after_on = render(
            helm, work, _relative(values, case.folder, work), [*sets, "dra.enabled=true"]
        )
        expected = converted(before)
        if expected != before:  # the proof must be able to fail: GPUs were converted
            gpu_renderings += 1
            assert difference(before, expected) != ""
            assert b"ResourceClaimTemplate" in after_on
        assert difference(expected, after_on) == "", (values, sets, after_on.decode())
    assert gpu_renderings >= 2  # the default or a values file, and the changed count


def test_the_plan_says_what_changed(tmp_path: Path) -> None:
    work, edit = _migrate(REPO / "examples" / "charts" / "inference", tmp_path)
    plan = edit.plan
    assert (plan.way, plan.switch, plan.switch_on, plan.compare) == (
        TEMPLATE,
        "dra.enabled",
        False,
        "exact",
    )
    assert plan.set_keys == (("dra.enabled", "true"),)
    assert plan.count_keys == ("gpu.count",)
    assert sorted(edit.changed) == [
        str(work / "templates" / "deployment.yaml"),
        str(work / "values.yaml"),
    ]
    assert list(edit.created) == [str(work / "templates" / "inference-resourceclaimtemplate.yaml")]
    assert set(plan.files) == {str(Path(p)) for p in [*edit.changed, *edit.created]}
    (note,) = edit.findings
    assert note.code == "DRA241" and note.path == str(work / "Chart.yaml")
    assert "dra.enabled (off by default)" in note.message and "gpu.count" in note.message
    assert "0.4.0 -> 0.5.0" in note.hint
    values = (work / "values.yaml").read_text()
    assert values.startswith((REPO / "examples/charts/inference/values.yaml").read_text())
    assert "\n# dra-migrate: Dynamic Resource Allocation" in values
    assert values.endswith(
        'dra:\n  enabled: false\n  deviceClassName: "gpu.nvidia.com"\n  selectors: []\n'
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_migrated_chart_is_done_and_quiet(case: Case, tmp_path: Path) -> None:
    work, _edit = _migrate(case.folder, tmp_path)
    again = template_edit.plan(_chart(work), SETTINGS, Options(), _read)
    assert again.plan.way == DONE and not again.changed and not again.created
    config = SETTINGS.config
    for name in ("deployment.yaml",):
        old = sources.decode(name, (case.folder / "templates" / name).read_bytes())
        new = sources.decode(name, (work / "templates" / name).read_bytes())
        before = [f.code for f in unconverted.helm_template(old, config)]
        assert before == (["DRA203"] if case.name != "kubeai" else [])
        # the guarded lines are quiet; one note says the template is migrated (the chart
        # pass turns it into the chart's DRA246 on Chart.yaml)
        assert [f.code for f in unconverted.helm_template(new, config)] == ["DRA246"]
    made = next(iter(_edit.created))
    new_template = sources.decode(made, Path(made).read_bytes())
    assert {f.code for f in unconverted.helm_template(new_template, config)} <= {"DRA246"}


def test_the_switch_on_by_default(tools: Path, tmp_path: Path) -> None:
    folder = REPO / "examples" / "charts" / "inference"
    work, edit = _migrate(folder, tmp_path, Options(switch_on=True))
    assert edit.plan.switch_on and edit.plan.set_keys == ()
    assert "dra:\n  enabled: true\n" in (work / "values.yaml").read_text()
    before = render(tools / "helm", folder)
    assert difference(converted(before), render(tools / "helm", work)) == ""
    assert render(tools / "helm", work, sets=["dra.enabled=false"]) == before


def test_another_switch_key(tools: Path, tmp_path: Path) -> None:
    folder = CHARTS / "triton-gcp"
    work, edit = _migrate(folder, tmp_path, Options(switch_key="gpu.dra.enabled"))
    assert edit.plan.set_keys == (("gpu.dra.enabled", "true"),)
    assert "gpu:\n  dra:\n    enabled: false\n" in (work / "values.yaml").read_text()
    before = render(tools / "helm", folder)
    assert render(tools / "helm", work) == before
    after = render(tools / "helm", work, sets=["gpu.dra.enabled=true"])
    assert difference(converted(before), after) == ""


def test_the_schema_gains_the_keys(tools: Path, tmp_path: Path) -> None:
    folder = tmp_path / "src" / "inference"
    shutil.copytree(REPO / "examples" / "charts" / "inference", folder)
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": True,
        "properties": {
            "gpu": {"type": "object", "properties": {"count": {"type": "integer"}}},
            **{
                k: {}
                for k in (
                    "replicaCount",
                    "image",
                    "modelRepository",
                    "resources",
                    "ports",
                    "nodeSelector",
                    "tolerations",
                )
            },
        },
    }
    text = json.dumps(schema, indent=4) + "\n"
    (folder / "values.schema.json").write_text(text)
    # a schema that refuses unknown top-level keys: helm fails when dra is missing from it
    strict = text.replace('"additionalProperties": true', '"additionalProperties": false')
    (folder / "values.schema.json").write_text(strict)
    work, edit = _migrate(folder, tmp_path)
    new = (work / "values.schema.json").read_text()
    assert str(work / "values.schema.json") in edit.changed
    assert new.startswith(strict[: strict.index('"gpu"')])  # the bytes before kept
    assert '\n        "dra": {\n            "type": "object",' in new  # 4 spaces, as the file
    data = json.loads(new)
    assert data["properties"]["dra"]["properties"]["enabled"] == {"type": "boolean"}
    before = render(tools / "helm", folder)
    assert render(tools / "helm", work) == before  # helm checks the values on the schema
    on = render(tools / "helm", work, sets=["dra.enabled=true"])
    assert difference(converted(before), on) == ""


def test_schema_edit_keeps_two_space_json() -> None:
    text = '{\n  "type": "object",\n  "properties": {\n    "a": {"type": "string"}\n  }\n}\n'
    new = template_text.schema_edit(text, "dra.enabled")
    assert new.startswith('{\n  "type": "object",\n  "properties": {\n    "a": {"type": "string"},')
    assert json.loads(new)["properties"]["dra"]["type"] == "object"
    assert new.endswith("\n  }\n}\n")


def test_golden_template_diff(tmp_path: Path, update_goldens: bool) -> None:
    work, edit = _migrate(REPO / "examples" / "charts" / "inference", tmp_path)
    got = {
        Path(p).relative_to(work).as_posix(): data
        for p, data in {**edit.changed, **edit.created}.items()
    }
    if update_goldens:
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for rel, data in got.items():
            (GOLDEN / rel).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / rel).write_bytes(data)
    want = {
        p.relative_to(GOLDEN).as_posix(): p.read_bytes() for p in GOLDEN.rglob("*") if p.is_file()
    }
    assert got == want


def test_several_workloads_get_a_template_each(tools: Path, tmp_path: Path) -> None:
    folder = tmp_path / "src" / "inference"
    shutil.copytree(REPO / "examples" / "charts" / "inference", folder)
    deployment = (folder / "templates" / "deployment.yaml").read_text()
    (folder / "templates" / "canary.yaml").write_text(
        deployment.replace(
            'include "inference.fullname" . }}', 'include "inference.fullname" . }}-canary', 1
        )
    )
    work, edit = _migrate(folder, tmp_path)
    assert sorted(Path(p).name for p in edit.created) == [
        "canary-resourceclaimtemplate.yaml",
        "deployment-resourceclaimtemplate.yaml",
    ]
    before = render(tools / "helm", folder)
    assert render(tools / "helm", work) == before
    on = render(tools / "helm", work, sets=["dra.enabled=true"])
    assert on.count(b"kind: ResourceClaimTemplate") == 2
    assert difference(converted(before), on) == ""


# --- charts left as they are -----------------------------------------------------------

EXAMPLE_LINE = "              nvidia.com/gpu: {{ .Values.gpu.count }}"


def _unsafe(
    tmp_path: Path, line: str = EXAMPLE_LINE, helpers: str = "", chart_type: str = ""
) -> ChartEdit:
    folder = tmp_path / "inference"
    shutil.copytree(REPO / "examples" / "charts" / "inference", folder)
    deployment = folder / "templates" / "deployment.yaml"
    deployment.write_text(deployment.read_text().replace(EXAMPLE_LINE, line))
    if helpers:
        (folder / "templates" / "_gpu.tpl").write_text(helpers)
    if chart_type:
        chart_yaml = folder / "Chart.yaml"
        chart_yaml.write_text(chart_yaml.read_text().replace("type: application", chart_type))
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    edit = template_edit.plan(_chart(folder), SETTINGS, Options(), _read)
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
    return edit


@pytest.mark.parametrize(
    ("line", "helpers", "construct", "key"),
    [
        (
            "              nvidia.com/gpu: {{ mul .Values.gpu.count 2 }}",
            "",
            "a GPU count computed in the template (mul)",
            "gpu.count",
        ),
        (
            "              nvidia.com/gpu: {{ add .Values.gpu.count .Values.gpu.extra }}",
            "",
            "a GPU count computed in the template (add)",
            "gpu.count",
        ),
        (
            '              nvidia.com/gpu: {{ (lookup "v1" "ConfigMap" "gpu" "count").data.n }}',
            "",
            "lookup in the template",
            "",
        ),
        (
            "              nvidia.com/gpu: {{ tpl .Values.gpu.count . }}",
            "",
            "tpl in the template",
            "",
        ),
        (
            '              {{- include "inference.gpu" . | nindent 14 }}',
            '{{- define "inference.gpu" -}}\nnvidia.com/gpu: {{ .Values.gpu.count }}\n{{- end }}\n',
            'the helper "inference.gpu" included in limits: the edit follows a helper that '
            "renders a container's resources, or their limits and requests",
            "",
        ),
        (
            "              nvidia.com/gpu: {{ $gpus }}",
            "",
            "a GPU count computed in the template ($gpus)",
            "",
        ),
        (
            "              nvidia.com/gpu: {{ .Values.gpu.count }}{{ .Values.gpu.suffix }}",
            "",
            "a GPU value that is not one action",
            "gpu.count",
        ),
    ],
    ids=["mul", "add", "lookup", "tpl", "helper-define", "variable", "two-actions"],
)
def test_unsafe_constructs_are_named(
    tmp_path: Path, line: str, helpers: str, construct: str, key: str
) -> None:
    edit = _unsafe(tmp_path, line, helpers)
    assert edit.plan.way == MANUAL and edit.plan.codes == ("DRA243",)
    assert not edit.changed and not edit.created
    (note,) = edit.findings
    assert note.code == "DRA243"
    assert construct in note.message, note.message
    if key:
        assert f"(values key {key})" in note.message
    assert "bridge" in note.hint and "extendedResourceName" in note.hint


def test_a_library_chart_is_left_as_it_is(tmp_path: Path) -> None:
    edit = _unsafe(tmp_path, chart_type="type: library")
    (note,) = edit.findings
    assert note.code == "DRA243" and "a library chart (type: library)" in note.message
    assert note.path.endswith("Chart.yaml")


def test_a_values_key_of_the_switch_name_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "inference"
    shutil.copytree(REPO / "examples" / "charts" / "inference", folder)
    with (folder / "values.yaml").open("a") as f:
        f.write("dra:\n  owner: platform\n")
    edit = template_edit.plan(_chart(folder), SETTINGS, Options(), _read)
    (note,) = edit.findings
    assert note.code == "DRA243" and "values.yaml has a key dra already" in note.message
    assert note.line == len((folder / "values.yaml").read_text().splitlines()) - 1


# --- if/else blocks that choose the count, or whether the GPU line is there -------------

CHOOSE = """              {{- if .Values.gpu.large }}
              nvidia.com/gpu: {{ .Values.gpu.largeCount | default 8 }}
              {{- else }}
              nvidia.com/gpu: "{{ .Values.gpu.count }}"
              {{- end }}"""
PRESENCE = """              {{- if .Values.gpu.enabled }}
              nvidia.com/gpu: {{ .Values.gpu.count | int }}
              {{- end }}"""


@pytest.mark.parametrize(
    ("block", "variants"),
    [
        (CHOOSE, [[], ["gpu.large=true"], ["gpu.large=true", "gpu.largeCount=4"]]),
        (PRESENCE, [[], ["gpu.enabled=true"], ["gpu.enabled=true", "gpu.count=2"]]),
    ],
    ids=["count", "presence"],
)
def test_if_else_blocks(tools: Path, tmp_path: Path, block: str, variants: list[list[str]]) -> None:
    folder = tmp_path / "src" / "inference"
    shutil.copytree(REPO / "examples" / "charts" / "inference", folder)
    deployment = folder / "templates" / "deployment.yaml"
    deployment.write_text(deployment.read_text().replace(EXAMPLE_LINE, block))
    work, edit = _migrate(folder, tmp_path)
    assert edit.plan.way == TEMPLATE, edit.findings
    converted_any = False
    for sets in variants:
        before = render(tools / "helm", folder, sets=sets)
        assert render(tools / "helm", work, sets=sets) == before
        on = render(tools / "helm", work, sets=[*sets, "dra.enabled=true"])
        expected = converted(before)
        converted_any |= expected != before
        assert difference(expected, on) == "", (sets, on.decode())
    assert converted_any


def test_a_values_file_with_a_count_the_edit_cannot_follow(tmp_path: Path) -> None:
    folder = tmp_path / "src" / "inference"
    shutil.copytree(REPO / "examples" / "charts" / "inference", folder)
    (folder / "values-big.yaml").write_text("replicaCount: 1\ngpu:\n  count: 1.5\n")
    _work, edit = _migrate(folder, tmp_path)
    assert edit.plan.way == TEMPLATE
    odd = [f for f in edit.findings if f.code == "DRA247"]
    assert [(Path(f.path).name, f.line) for f in odd] == [("values-big.yaml", 3)]
    assert "values key gpu.count sets it to 1.5" in odd[0].message


def test_a_ci_file_with_requests_unlike_limits(tmp_path: Path) -> None:
    folder = tmp_path / "src" / "kubeai"
    shutil.copytree(CHARTS / "kubeai", folder)
    (folder / "ci" / "odd-values.yaml").write_text(
        "resources:\n  limits:\n    nvidia.com/gpu: 2\n  requests:\n    nvidia.com/gpu: 1\n"
    )
    _work, edit = _migrate(folder, tmp_path)
    (odd,) = [f for f in edit.findings if f.code == "DRA247"]
    assert Path(odd.path).name == "odd-values.yaml" and odd.line == 5
    assert 'resources.requests."nvidia.com/gpu" sets GPU limits 2 and requests 1' in odd.message


def test_resources_inside_a_with_block(tools: Path, tmp_path: Path) -> None:
    folder = tmp_path / "src" / "kubeai"
    shutil.copytree(CHARTS / "kubeai", folder)
    deployment = folder / "templates" / "deployment.yaml"
    text = deployment.read_text()
    old = "          resources:\n            {{- toYaml .Values.resources | nindent 12 }}\n"
    new = (
        "          {{- with .Values.resources }}\n          resources:\n"
        "            {{- toYaml . | nindent 12 }}\n          {{- end }}\n"
    )
    assert old in text
    deployment.write_text(text.replace(old, new))
    work, edit = _migrate(folder, tmp_path)
    assert edit.plan.way == TEMPLATE, edit.findings
    for values in (
        [],
        [folder / "ci" / "gpu-values.yaml"],
        [folder / "ci" / "gpu-tolerations-values.yaml"],
    ):
        before = render(tools / "helm", folder, values)
        shifted = _relative(values, folder, work)
        assert render(tools / "helm", work, shifted) == before
        on = render(tools / "helm", work, shifted, ["dra.enabled=true"])
        assert difference(converted(before), on) == "", on.decode()


def test_a_subchart_of_the_team_renders_through_its_parent(tools: Path, tmp_path: Path) -> None:
    """A chart vendored with file:// is the team's own: edited, and its switch is set
    through the parent's values key for it."""
    parent = tmp_path / "src" / "serving"
    shutil.copytree(REPO / "examples" / "charts" / "inference", parent / "charts" / "triton")
    (parent / "Chart.yaml").write_text(
        "apiVersion: v2\nname: serving\nversion: 1.0.0\ndependencies:\n"
        "  - name: inference\n    alias: triton\n    version: 0.4.0\n"
        "    repository: file://charts/triton\n"
    )
    (parent / "values.yaml").write_text("triton:\n  gpu:\n    count: 2\n")
    chart = chart_module.read(
        str(parent / "charts" / "triton"), "charts/triton", _read, HelmConfig()
    )
    assert not chart.upstream and chart.values_key == "triton"
    before = render(tools / "helm", parent)
    work = tmp_path / "work" / "serving"
    shutil.copytree(parent, work)
    edit = template_edit.plan(
        chart_module.read(str(work / "charts" / "triton"), "charts/triton", _read, HelmConfig()),
        SETTINGS,
        Options(),
        _read,
    )
    assert edit.plan.way == TEMPLATE
    for path, data in {**edit.changed, **edit.created}.items():
        Path(path).write_bytes(data)
    assert render(tools / "helm", work) == before
    on = render(tools / "helm", work, sets=["triton.dra.enabled=true"])
    assert b"count: 2" in on
    assert difference(converted(before), on) == ""


def test_an_unreadable_template_holds_the_chart(tmp_path: Path) -> None:
    folder = tmp_path / "inference"
    shutil.copytree(REPO / "examples" / "charts" / "inference", folder)
    (folder / "templates" / "job.yaml").write_bytes(b"kind: Job\n\xff\xfe nvidia.com/gpu: 1\n")
    edit = template_edit.plan(_chart(folder), SETTINGS, Options(), _read)
    assert edit.plan.way == MANUAL and not edit.changed and not edit.created
    (problem,) = edit.findings
    assert problem.path.endswith("templates/job.yaml") and problem.line >= 1
    assert edit.plan.codes == (problem.code,)


MAPPING = """resources:
  - name: nvidia.com/gpu
    deviceClass: a100.nvidia.com
    selectors:
      - >-
        device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100") &&
        device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0
    config:
      - driver: gpu.nvidia.com
        parameters:
          apiVersion: resource.nvidia.com/v1beta1
          kind: GpuConfig
          sharing: {strategy: TimeSlicing, timeSlicingConfig: {interval: Long}}
"""


@pytest.mark.parametrize("target", ["v1", "v1beta1"])
def test_the_mapping_gives_class_selectors_and_config(
    tools: Path, tmp_path: Path, target: str
) -> None:
    (tmp_path / ".dra-migrate.yaml").write_text(MAPPING)
    settings = Settings(target=target, config=load_config(tmp_path / ".dra-migrate.yaml"))
    folder = CHARTS / "triton-gcp"
    work = tmp_path / "triton-gcp"
    shutil.copytree(folder, work)
    edit = template_edit.plan(_chart(work), settings, Options(), _read)
    assert edit.plan.way == TEMPLATE, edit.findings
    for path, data in {**edit.changed, **edit.created}.items():
        Path(path).write_bytes(data)
    values = (work / "values.yaml").read_text()
    assert 'deviceClassName: "a100.nvidia.com"\n  selectors:\n    - "device.attributes' in values
    before = render(tools / "helm", folder)
    assert render(tools / "helm", work) == before
    on = render(tools / "helm", work, sets=["dra.enabled=true"])
    expected = converted(before, settings)
    assert b"startsWith" in expected and b"GpuConfig" in expected
    assert difference(expected, on) == "", on.decode()


def test_a_template_of_several_documents_in_an_if(tools: Path, tmp_path: Path) -> None:
    """The whole file in {{- if }} and a Service after the Deployment: the Deployment's
    document is edited, the if holds the claims and the new template too."""
    folder = tmp_path / "src" / "inference"
    shutil.copytree(REPO / "examples" / "charts" / "inference", folder)
    deployment = folder / "templates" / "deployment.yaml"
    service = (
        "---\napiVersion: v1\nkind: Service\nmetadata:\n"
        '  name: {{ include "inference.fullname" . }}\nspec:\n  ports:\n'
        "    - port: {{ .Values.ports.httpPort }}\n"
    )
    deployment.write_text(
        "{{- if .Values.serve }}\n" + deployment.read_text() + service + "{{- end }}\n"
    )
    with (folder / "values.yaml").open("a") as f:
        f.write("\nserve: true\n")
    work, edit = _migrate(folder, tmp_path)
    assert edit.plan.way == TEMPLATE, edit.findings
    for sets in ([], ["serve=false"], ["gpu.count=2"]):
        before = render(tools / "helm", folder, sets=sets)
        assert render(tools / "helm", work, sets=sets) == before
        on = render(tools / "helm", work, sets=[*sets, "dra.enabled=true"])
        assert difference(converted(before), on) == "", on.decode()
        assert (b"ResourceClaimTemplate" in on) == ("serve=false" not in sets)
