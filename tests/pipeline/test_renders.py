"""``convert --verify-helm`` (pipeline/renders.py), with the real helm: a chart the run
migrates is rendered before and after, and the rendering after must be the conversion
of the rendering before (and, with the switch off, the rendering before itself).

The chart pairs are made by hand (the bundled example chart before, the same chart as
a team would edit it after), with the ``Report`` a run would make of them: the chart
pass that fills ``Report.charts`` is built beside this module."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dra_migrate.convert.mapping import Settings, load_config
from dra_migrate.pipeline import renders
from dra_migrate.pipeline.options import RunOptions
from dra_migrate.report.model import ChartPlan, FileResult, Report, Status
from tests.conftest import REPO
from tests.helpers.cli_runner import invoke

EXAMPLE = REPO / "examples" / "charts" / "inference"
CHART = "charts/inference"

# The template edit behind a switch the tool adds (dra.enabled, off by default): the
# device-plugin line only when the switch is off, the claims when it is on.
GPU_LINE = """\
              # One device-plugin GPU per count; see values.yaml.
              nvidia.com/gpu: {{ .Values.gpu.count }}
"""
GPU_SWITCHED = """\
              {{- if not .Values.dra.enabled }}
              # One device-plugin GPU per count; see values.yaml.
              nvidia.com/gpu: {{ .Values.gpu.count }}
              {{- end }}
            {{- if .Values.dra.enabled }}
            claims:
              - name: gpu
                request: triton
            {{- end }}
"""
TOLERATIONS = """\
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
"""
POD_CLAIMS = """\
      {{- if .Values.dra.enabled }}
      resourceClaims:
        - name: gpu
          resourceClaimTemplateName: {{ include "inference.fullname" . }}-gpu
      {{- end }}
"""
TEMPLATE = """\
{{- if .Values.dra.enabled }}
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {{ include "inference.fullname" . }}-gpu
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "inference.labels" . | nindent 4 }}
spec:
  spec:
    devices:
      requests:
        - name: triton
          exactly:
            deviceClassName: gpu.nvidia.com
            count: COUNT
{{- end }}
"""
SWITCH = "\n# dra-migrate: claim the GPUs through DRA (resource.k8s.io) instead.\ndra:\n  enabled: false\n"


@pytest.fixture
def helm(tools: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The real helm on PATH (installed as the tests install kubectl), else skip."""
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    found = shutil.which("helm")
    if found is None:
        pytest.skip("helm is not installed: scripts/install-test-tools.sh installs it")
    return found


def _before(root: Path) -> Path:
    """The example chart, with a CI values file that renders two GPUs."""
    chart = root / CHART
    shutil.copytree(EXAMPLE, chart)
    (chart / "ci").mkdir()
    (chart / "ci" / "two-gpus-values.yaml").write_text("gpu:\n  count: 2\nreplicaCount: 1\n")
    return chart


def test_every_values_file_is_rendered(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """values*.yaml beside values.yaml and every ci/ file, a ci/values.yaml too."""
    chart = _before(tmp_path)
    (chart / "values-prod.yaml").write_text("replicaCount: 4\n")
    (chart / "ci" / "values.yaml").write_text("gpu:\n  count: 3\n")
    found = _verify(tmp_path, _report(chart, _template_edit(chart), _plan()), helm, monkeypatch)
    (note,) = found["DRA245"]
    assert "5 rendering(s) proven (default values, -f values-prod.yaml, " in note, note
    assert "-f ci/two-gpus-values.yaml, -f ci/values.yaml, --set gpu.count=2;" in note, note


def _template_edit(chart: Path, count: str = "{{ .Values.gpu.count }}") -> dict[str, bytes]:
    """The chart's files after a template edit (as a team would make it), by path."""
    deployment = (chart / "templates" / "deployment.yaml").read_text()
    assert GPU_LINE in deployment and TOLERATIONS in deployment
    deployment = deployment.replace(GPU_LINE, GPU_SWITCHED).replace(
        TOLERATIONS, TOLERATIONS + POD_CLAIMS
    )
    return {
        "templates/deployment.yaml": deployment.encode(),
        "templates/inference-resourceclaimtemplate.yaml": TEMPLATE.replace("COUNT", count).encode(),
        "values.yaml": ((chart / "values.yaml").read_text() + SWITCH).encode(),
    }


def _plan(**fields: object) -> ChartPlan:
    values: dict[str, object] = {
        "root": CHART,
        "name": "inference",
        "version": "0.4.0",
        "way": "template",
        "set_keys": (("dra.enabled", "true"),),
        "count_keys": ("gpu.count",),
        "switch": "dra.enabled",
        "files": (
            f"{CHART}/templates/deployment.yaml",
            f"{CHART}/templates/inference-resourceclaimtemplate.yaml",
            f"{CHART}/values.yaml",
        ),
    }
    values.update(fields)
    return ChartPlan(**values)  # type: ignore[arg-type]


def _report(chart: Path, after: dict[str, bytes], plan: ChartPlan) -> Report:
    """The report a run makes of the chart: each file of ``after`` changed or created."""
    files = []
    for name, data in after.items():
        path = f"{CHART}/{name}"
        exists = (chart / name).is_file()
        original = (chart / name).read_bytes() if exists else b""
        files.append(
            FileResult(path, Status.CHANGED, original=original, converted=data, created=not exists)
        )
    return Report(files, charts=[plan])


def _options(jobs: int | None = 2) -> RunOptions:
    return RunOptions(paths=(".",), settings=Settings("v1", load_config(None)), jobs=jobs)


def _verify(
    tmp_path: Path, report: Report, helm: str, monkeypatch: pytest.MonkeyPatch
) -> dict[str, list[str]]:
    monkeypatch.chdir(tmp_path)
    passed = renders.verify(report, _options(), helm)
    out: dict[str, list[str]] = {}
    for f in report.findings:
        out.setdefault(f.code, []).append(f.format())
    # what verify says: the run may write; a chart not proven (DRA248) is not written
    assert passed is not ({"DRA244", "DRA248"} & set(out)), out
    accepted = renders.verdict(report.findings, accept_unproven=True)
    assert accepted is ("DRA244" not in out), out  # --accept-unproven: DRA248 is written
    return out


def test_a_right_template_edit_is_proven(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Default values, the CI values file and the raised count: each rendering after
    is the conversion of the rendering before, and with the switch off the rendering
    before itself."""
    chart = _before(tmp_path)
    found = _verify(tmp_path, _report(chart, _template_edit(chart), _plan()), helm, monkeypatch)
    assert set(found) == {"DRA245"}, found
    (note,) = found["DRA245"]
    assert note.startswith(f"{CHART}/Chart.yaml:1:1: DRA245 info: chart inference 0.4.0"), note
    assert "3 rendering(s) proven" in note, note
    assert "default values, -f ci/two-gpus-values.yaml, --set gpu.count=2" in note, note
    assert "with dra.enabled=false byte for byte" in note, note
    # nothing of the chart is touched: the copies are in a temporary folder
    assert b"dra.enabled" not in (chart / "templates" / "deployment.yaml").read_bytes()


def test_a_wrong_count_in_the_new_template_is_named(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new template says count: 1 whatever the values: the default values pass,
    the CI file's two GPUs do not, and DRA244 names the object, field and values."""
    chart = _before(tmp_path)
    after = _template_edit(chart, count="1")
    found = _verify(tmp_path, _report(chart, after, _plan()), helm, monkeypatch)
    assert set(found) == {"DRA244"}, found
    (error,) = found["DRA244"]
    assert error.startswith(f"{CHART}/Chart.yaml:1:1: DRA244 error: chart inference 0.4.0"), error
    assert "with -f ci/two-gpus-values.yaml" in error, error
    assert "ResourceClaimTemplate dra-migrate/<template of Deployment/release-inference" in error
    assert "/spec/spec/devices/requests/0/exactly/count: 2 expected, 1 after" in error, error
    assert "1 other rendering(s) differ too" in error, error  # --set gpu.count=2
    assert "nothing is written" in error, error


def test_a_switch_off_that_changes_a_byte(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With dra.enabled=false the rendering after must be the rendering before byte for
    byte: a `-` trimmed wrongly (the comment's line break) is found, with the line."""
    chart = _before(tmp_path)
    after = _template_edit(chart)
    deployment = after["templates/deployment.yaml"].decode()
    after["templates/deployment.yaml"] = deployment.replace(
        "{{- if not .Values.dra.enabled }}\n              # One",
        "{{- if not .Values.dra.enabled -}}\n              # One",
    ).encode()
    found = _verify(tmp_path, _report(chart, after, _plan()), helm, monkeypatch)
    assert set(found) == {"DRA244"}, found
    (error,) = found["DRA244"]
    assert "with dra.enabled=false the rendering after is not the rendering before byte" in error
    assert "line 47: '              memory: 16Gi' before, '              memory: 16Gi# One" in error
    assert "2 other rendering(s) differ too" in error, error


def test_a_chart_helm_cannot_render(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dependency that is not in charts/ (helm dependency build is never run): the
    chart is not proven, with helm's error, and nothing blocks the run."""
    chart = _before(tmp_path)
    with (chart / "Chart.yaml").open("a") as handle:
        handle.write(
            "dependencies:\n  - name: redis\n    version: 18.x\n"
            "    repository: https://charts.bitnami.com/bitnami\n"
        )
    found = _verify(tmp_path, _report(chart, _template_edit(chart), _plan()), helm, monkeypatch)
    assert set(found) == {"DRA248", "DRA291"}, found  # DRA291: nothing is written
    (first,) = found["DRA248"]  # one a chart
    assert first.startswith(
        f"{CHART}/Chart.yaml:1:1: DRA248 warning: chart inference 0.4.0 "
        "is not proven by rendering: helm template fails with default values: "
    )
    assert (
        "default values: exit status 1; a dependency of Chart.yaml is missing from charts/; "
        "2 other rendering(s) not made" in first
    ), first


# A chart with a DRA switch of its own (as ollama-helm's gpu.draEnabled), migrated by a
# recipe that writes values-dra.yaml beside values.yaml: its claim and template are the
# chart's (other names, another request name), so what is compared is what each
# container is allocated.
OWN_SWITCH = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-ollama
spec:
  template:
    spec:
      containers:
        - name: ollama
          image: ollama/ollama:0.6.0
          resources:
            limits:
              memory: 8Gi
              {{- if not .Values.gpu.draEnabled }}
              nvidia.com/gpu: {{ .Values.gpu.number }}
              {{- else }}
            claims:
              - name: accelerator
              {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if .Values.gpu.draEnabled }}
      resourceClaims:
        - name: accelerator
          resourceClaimTemplateName: {{ .Release.Name }}-ollama-accelerator
      {{- end }}
{{- if .Values.gpu.draEnabled }}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {{ .Release.Name }}-ollama-accelerator
  labels:
    app.kubernetes.io/name: ollama
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: {{ .Values.gpu.draDriverClass }}
            count: {{ .Values.gpu.number }}
{{- end }}
"""
OWN_VALUES = "gpu:\n  number: 1\n  draEnabled: false\n  draDriverClass: gpu.nvidia.com\n"


# the toleration ExtendedResourceToleration gave the pod before (convert writes it, DRA224)
OWN_TOLERATION = "tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"


def _recipe_chart(
    root: Path, driver_class: str = "gpu.nvidia.com", tolerations: str = OWN_TOLERATION
) -> tuple[Path, Report]:
    chart = root / "charts" / "ollama"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: ollama\nversion: 1.12.0\n")
    (chart / "values.yaml").write_text(OWN_VALUES)
    (chart / "templates" / "deployment.yaml").write_text(OWN_SWITCH)
    overlay = f"gpu:\n  draEnabled: true\n  draDriverClass: {driver_class}\n{tolerations}"
    plan = ChartPlan(
        root="charts/ollama",
        name="ollama",
        version="1.12.0",
        way="recipe",
        recipe="ollama",
        count_keys=("gpu.number",),
        values_overlay="charts/ollama/values-dra.yaml",
        compare="claims",
        files=("charts/ollama/values-dra.yaml",),
    )
    created = FileResult(
        "charts/ollama/values-dra.yaml",
        Status.CHANGED,
        original=b"",
        converted=overlay.encode(),
        created=True,
    )
    return chart, Report([created], charts=[plan])


def test_a_recipe_with_a_values_overlay_compares_the_claims(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart, report = _recipe_chart(tmp_path)
    found = _verify(tmp_path, report, helm, monkeypatch)
    assert set(found) == {"DRA245"}, found
    (note,) = found["DRA245"]
    assert "chart ollama 1.12.0 (recipe): 2 rendering(s) proven" in note, note
    assert "(default values, --set gpu.number=2; compare: claims)" in note, note
    assert not (chart / "values-dra.yaml").exists()


def test_a_recipe_without_the_toleration_convert_writes_differs(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The proof compares whole objects, not only the claims: the conversion of the
    rendering before writes the GPU toleration (DRA224), the chart's switch alone does
    not, and the migration is not proven."""
    _chart, report = _recipe_chart(tmp_path, tolerations="")
    found = _verify(tmp_path, report, helm, monkeypatch)
    assert set(found) == {"DRA244"}, found
    (error,) = found["DRA244"]
    assert (
        "Deployment dra-migrate/release-ollama differs at /spec/template/spec/tolerations: "
        '[{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}] '
        "expected, nothing after (compare: claims)"
    ) in error, error


def test_the_same_recipe_compared_exactly_differs(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chart's own template is not the one convert writes (its request is named
    gpu, not after the container): the claims compare passes, the exact one cannot."""
    _chart, report = _recipe_chart(tmp_path)
    report.charts[0] = ChartPlan(**{**_fields(report.charts[0]), "compare": "exact"})
    found = _verify(tmp_path, report, helm, monkeypatch)
    assert set(found) == {"DRA244"}, found
    (error,) = found["DRA244"]
    assert '/containers/0/resources/claims/0/name: "gpu" expected, "accelerator" after' in error


def test_a_recipe_with_the_wrong_device_class(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _chart, report = _recipe_chart(tmp_path, driver_class="gpu.example.com")
    found = _verify(tmp_path, report, helm, monkeypatch)
    (error,) = found["DRA244"]
    assert (
        "Deployment dra-migrate/release-ollama differs at /spec/template/spec/containers/0/(allocated)/0/spec/devices/requests/0/deviceClassName"
        in error
    ), error
    assert '"gpu.nvidia.com" expected, "gpu.example.com" after (compare: claims)' in error, error


def _fields(plan: ChartPlan) -> dict[str, object]:
    import dataclasses

    return {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan)}


def test_ways_that_change_nothing_are_not_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bridged or manual chart is left as it is: helm is never asked."""
    chart = _before(tmp_path)
    report = _report(chart, {}, _plan(way="bridge"))
    found = _verify(tmp_path, report, "/nonexistent/helm", monkeypatch)
    assert found == {}


# --- through the command line ----------------------------------------------------------


def _with_charts(monkeypatch: pytest.MonkeyPatch, after: dict[str, bytes], plan: ChartPlan) -> None:
    """The run's report as the chart pass will make it: ``run.execute`` as it is, then
    the chart's files changed and its plan (until the chart pass is on this branch)."""
    from dra_migrate.cli import run

    execute = run.execute

    def with_charts(*args: object, **kwargs: object) -> Report:
        report = execute(*args, **kwargs)  # type: ignore[arg-type]
        chart = Path(CHART)
        made = _report(chart, after, plan)
        kept = [f for f in report.files if f.path not in {m.path for m in made.files}]
        report.files = kept + made.files
        report.charts = made.charts
        return report

    monkeypatch.setattr(run, "execute", with_charts)


def test_cli_a_differing_rendering_writes_nothing(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart = _before(tmp_path)
    before = {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()}
    _with_charts(monkeypatch, _template_edit(chart, count="1"), _plan())
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--write", "--verify-helm", "--jobs", "1", "."])
    assert done.exit_code == 1, done.output
    assert "DRA244 error: chart inference 0.4.0" in done.stderr, done.stderr
    assert {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()} == before
    assert not (chart / "templates" / "inference-resourceclaimtemplate.yaml").exists()


def test_cli_a_proven_chart_is_written(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart = _before(tmp_path)
    after = _template_edit(chart)
    _with_charts(monkeypatch, after, _plan())
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--write", "--verify-helm", "--jobs", "1", "."])
    assert "DRA245 info: chart inference 0.4.0 (template): 3 rendering(s) proven" in done.stderr
    assert done.exit_code == 0, done.output
    for name, data in after.items():
        assert (chart / name).read_bytes() == data, name


def test_cli_check_proves_without_writing(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart = _before(tmp_path)
    _with_charts(monkeypatch, _template_edit(chart, count="1"), _plan())
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--check", "--verify-helm", "."])
    assert done.exit_code == 1 and "DRA244" in done.stderr, done.output
    assert not (chart / "templates" / "inference-resourceclaimtemplate.yaml").exists()


def test_verify_helm_needs_helm(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n")
    done = subprocess.run(
        [sys.executable, "-m", "dra_migrate", "convert", "--verify-helm", "."],
        cwd=tmp_path,
        env={**os.environ, "PATH": str(tmp_path / "nothing")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "--verify-helm needs helm on PATH to render the charts" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_verify_helm_needs_paths() -> None:
    done = invoke(["convert", "--verify-helm", "-"], input=b"")
    assert done.exit_code == 2 and "--verify-helm needs paths, not - (stdin)" in done.stderr


def test_end_to_end_the_example_chart_is_migrated_and_proven(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bundled example chart through the CLI alone: converted, proven, written."""
    chart = _before(tmp_path)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--write", "--verify-helm", "."])
    assert done.exit_code == 0, done.output
    assert "DRA245" in done.stderr and "DRA244" not in done.stderr, done.stderr
    assert "DRA248" not in done.stderr, done.stderr
    assert (chart / "templates" / "deployment.yaml").read_bytes() != (
        EXAMPLE / "templates" / "deployment.yaml"
    ).read_bytes()


def test_a_chart_that_renders_differently_each_time(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A random value in a rendering (a generated password) makes every comparison
    fail whatever the migration: the chart is not proven (DRA248), nothing blocked."""
    chart = _before(tmp_path)
    (chart / "templates" / "secret.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\n"
        "stringData:\n  token: {{ randAlphaNum 24 | quote }}\n"
    )
    found = _verify(tmp_path, _report(chart, _template_edit(chart), _plan()), helm, monkeypatch)
    assert set(found) == {"DRA248", "DRA291"}, found  # DRA291: nothing is written
    (warning,) = found["DRA248"]
    assert "helm template renders it differently each time with default values (line " in warning
    assert "  token: " in warning and "randAlphaNum, now or uuidv4" in warning, warning


def test_a_vendored_chart_whose_values_are_the_parents(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recipe for a chart in another chart's charts/ folder edits the parent's values:
    the parent is what is copied and rendered, its values keys as --set takes them."""
    stack = tmp_path / "charts" / "stack"
    _recipe_chart(stack)  # stack/charts/ollama
    (stack / "Chart.yaml").write_text(
        "apiVersion: v2\nname: stack\nversion: 0.1.0\ndependencies:\n  - name: ollama\n"
        "    version: 1.12.0\n    repository: https://otwld.github.io/ollama-helm/\n"
    )
    values = "ollama:\n  gpu:\n    number: 2\n"
    (stack / "values.yaml").write_text(values)
    plan = ChartPlan(
        root="charts/stack/charts/ollama",
        name="ollama",
        version="1.12.0",
        way="recipe",
        recipe="ollama",
        count_keys=("ollama.gpu.number",),
        compare="claims",
        files=("charts/stack/values.yaml",),
    )
    edited = FileResult(
        "charts/stack/values.yaml",
        Status.CHANGED,
        original=values.encode(),
        converted=(
            values + "    draEnabled: true\n  tolerations:\n"
            "    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
        ).encode(),
    )
    found = _verify(tmp_path, Report([edited], charts=[plan]), helm, monkeypatch)
    assert set(found) == {"DRA245"}, found
    (note,) = found["DRA245"]
    assert note.startswith("charts/stack/charts/ollama/Chart.yaml:1:1: DRA245 info:"), note
    assert "(default values, --set ollama.gpu.number=3; compare: claims)" in note, note


SCHEMA = """\
{
  "$schema": "https://json-schema.org/draft-07/schema#",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "replicaCount": {"type": "integer"}, "image": {"type": "object"},
    "modelRepository": {"type": "string"}, "gpu": {"type": "object"},
    "resources": {"type": "object"}, "ports": {"type": "object"},
    "nodeSelector": {"type": "object"}, "tolerations": {"type": "array"}DRA
  }
}
"""


@pytest.mark.parametrize("with_key", [True, False])
def test_a_chart_with_a_values_schema(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch, with_key: bool
) -> None:
    """helm checks the values against values.schema.json: a template edit that adds
    the switch to values.yaml but not to a closed schema fails after the migration."""
    chart = _before(tmp_path)
    (chart / "values.schema.json").write_text(SCHEMA.replace("DRA", ""))
    after = _template_edit(chart)
    files = (*_plan().files, f"{CHART}/values.schema.json")
    if with_key:
        dra = ',\n    "dra": {"type": "object", "properties": {"enabled": {"type": "boolean"}}}'
        after["values.schema.json"] = SCHEMA.replace("DRA", dra).encode()
    found = _verify(tmp_path, _report(chart, after, _plan(files=files)), helm, monkeypatch)
    if with_key:
        assert set(found) == {"DRA245"}, found
        return
    assert set(found) == {"DRA244"}, found
    (error,) = found["DRA244"]
    assert "with default values: helm template fails after the migration: " in error, error
    # helm's own words are never shown (they may hold what the chart read): the kind
    assert "exit status 1; the values do not meet values.schema.json;" in error, error


def test_an_object_without_a_namespace_is_in_the_releases(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new template names no namespace while the Deployment says
    {{ .Release.Namespace }}: helm install puts both in the release's namespace, so
    the template is the one the conversion writes beside the Deployment."""
    chart = _before(tmp_path)
    after = _template_edit(chart)
    new = "templates/inference-resourceclaimtemplate.yaml"
    line = b"  namespace: {{ .Release.Namespace }}\n"
    assert line in after[new]
    after[new] = after[new].replace(line, b"")
    found = _verify(tmp_path, _report(chart, after, _plan()), helm, monkeypatch)
    assert set(found) == {"DRA245"}, found


# --- the comparisons alone -------------------------------------------------------------

CONVERTED = b"""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: ml}
spec:
  template:
    spec:
      containers:
        - name: llm
          image: llm:1
          resources:
            limits: {memory: 8Gi}
            claims: [{name: gpu, request: llm}]
      resourceClaims: [{name: gpu, resourceClaimTemplateName: llm-gpu}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: llm-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
        - name: llm
          exactly: {deviceClassName: gpu.nvidia.com, count: 2}
"""
# the chart's own claim: other names, the v1beta1 form, labels of its own
OWN = b"""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: ml}
spec:
  template:
    spec:
      containers:
        - name: llm
          image: llm:1
          resources:
            limits: {memory: 8Gi}
            claims: [{name: accelerator}]
      resourceClaims: [{name: accelerator, resourceClaimTemplateName: chart-accelerator}]
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: chart-accelerator, namespace: ml, labels: {app: llm}}
spec:
  spec:
    devices:
      requests:
        - {name: gpu, deviceClassName: gpu.nvidia.com, count: 2}
"""


def _gpu(name: str) -> bool:
    return load_config(None).maps(name)


def test_claims_compare_what_is_allocated() -> None:
    assert renders.claims_difference(CONVERTED, OWN, _gpu) == ""
    assert renders.exact_difference(CONVERTED, OWN, _gpu) != ""


def test_claims_compare_a_field_not_about_gpus() -> None:
    found = renders.claims_difference(CONVERTED, OWN.replace(b"llm:1", b"llm:2"), _gpu)
    assert found == (
        "Deployment ml/llm differs at /spec/template/spec/containers/0/image: "
        '"llm:1" expected, "llm:2" after'
    )


def test_claims_compare_an_extended_resource_left_beside_the_claim() -> None:
    """A chart that renders the claim and keeps the device-plugin limit asks twice."""
    both = OWN.replace(b"{memory: 8Gi}", b"{memory: 8Gi, nvidia.com/gpu: 2}")
    found = renders.claims_difference(CONVERTED, both, _gpu)
    assert found == (
        "Deployment ml/llm differs at /spec/template/spec/containers/0/(allocated)/0/"
        'extendedResource: nothing expected, "nvidia.com/gpu" after'
    ), found


def test_the_first_byte_that_differs() -> None:
    assert renders.byte_difference(b"a\nb\n", b"a\nb\n") == ""
    assert renders.byte_difference(b"a\nb\n", b"a\nc\n") == "line 2: 'b' before, 'c' after"
    assert renders.byte_difference(b"a\n", b"a\n\n") == "line 2: the end before, '' after"
    assert renders.byte_difference(b"a\n", b"a") == "the line breaks differ"


def test_a_proof_that_fails_inside_is_said_and_blocks(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug of the comparison is DRA900 on the chart, never a traceback, and the run
    writes nothing (verify says False)."""
    chart = _before(tmp_path)
    report = _report(chart, _template_edit(chart), _plan())

    def broken(*_args: object) -> str:
        raise ValueError("broken on purpose")

    monkeypatch.setattr(renders, "exact_difference", broken)
    monkeypatch.chdir(tmp_path)
    assert renders.verify(report, _options(), helm) is False
    (internal,) = [f.format() for f in report.findings]
    assert internal.startswith(
        f"{CHART}/Chart.yaml:1:1: DRA900 error: internal error while "
        "proving chart inference (ValueError: broken on purpose)"
    ), internal


OLLAMA = REPO / "tests" / "fixtures" / "charts" / "ollama-helm-renders"


@pytest.mark.parametrize("compare", ["claims", "exact"])
def test_the_real_ollama_chart_with_its_own_dra_switch(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch, compare: str
) -> None:
    """otwld/ollama-helm (reduced): ollama.gpu.draEnabled, turned on by a values-dra.yaml,
    renders the chart's own claim (request gpu, template named after the release) and
    keeps the GPU toleration: what each container is allocated is what the conversion
    gives it, while the objects themselves are not the ones convert writes."""
    chart = tmp_path / "charts" / "ollama"
    shutil.copytree(OLLAMA, chart)
    plan = ChartPlan(
        root="charts/ollama",
        name="ollama",
        version="1.77.0",
        way="recipe",
        recipe="ollama",
        count_keys=("ollama.gpu.number",),
        values_overlay="charts/ollama/values-dra.yaml",
        compare=compare,
        files=("charts/ollama/values-dra.yaml",),
    )
    overlay = FileResult(
        "charts/ollama/values-dra.yaml",
        Status.CHANGED,
        original=b"",
        converted=b"ollama:\n  gpu:\n    draEnabled: true\n",
        created=True,
    )
    found = _verify(tmp_path, Report([overlay], charts=[plan]), helm, monkeypatch)
    if compare == "claims":
        assert set(found) == {"DRA245"}, found
        assert (
            "(default values, -f ci/gpu-values.yaml, --set ollama.gpu.number=2;"
            in (found["DRA245"][0])
        )
        return
    (error,) = found["DRA244"]
    assert "with -f ci/gpu-values.yaml: " in error, error
    assert '/containers/0/resources/claims/0/request: "ollama" expected, nothing after' in error


def test_a_link_out_of_the_chart_is_followed(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helpers are a link to a folder beside the chart (a monorepo's shared
    templates): the copy keeps the link as a link, and copies what it points at (a
    file of the repository) at its place beside the chart."""
    chart = _before(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    helpers = chart / "templates" / "_helpers.tpl"
    helpers.rename(shared / "_helpers.tpl")
    helpers.symlink_to(Path("..", "..", "..", "shared", "_helpers.tpl"))
    found = _verify(tmp_path, _report(chart, _template_edit(chart), _plan()), helm, monkeypatch)
    assert set(found) == {"DRA245"}, found


def test_a_chart_that_cannot_be_copied(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart = _before(tmp_path)
    (chart / "templates" / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    found = _verify(tmp_path, _report(chart, _template_edit(chart), _plan()), helm, monkeypatch)
    (warning,) = found["DRA248"]
    assert "is not proven by rendering: the chart cannot be copied: " in warning, warning
    assert f"copied: {CHART}/templates/gone.yaml is a link to nothing (helm: " in warning
