"""helm/recipes.py: charts with a DRA switch of their own migrated by a values change.

Each recipe runs on a reduced copy of the real chart (tests/fixtures/charts/<name>,
with SOURCE); the chart is rendered with the real helm before and after, for every
values file: after, no container asks for a GPU extended resource, each container that
had N GPUs has a claim whose ResourceClaimTemplate asks for N devices of the mapped
class, and everything not about GPUs is equal. The values edits are golden files
(tests/fixtures/charts/expected/<case>/) so a reviewer sees the text diff.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from dra_migrate.convert.mapping import Settings, load_config
from dra_migrate.helm import chart as chart_files
from dra_migrate.helm import recipes
from dra_migrate.helm.model import DONE, RECIPE, Chart, ChartEdit, Options
from dra_migrate.report.findings import InputProblem
from tests.conftest import FIXTURES

CHARTS = FIXTURES / "charts"
EXPECTED = CHARTS / "expected"
KUBE = "1.34.0"  # the charts pick resource.k8s.io/v1 from 1.34
SETTINGS = Settings(target="v1", config=load_config(None))
GPU_NAMES = ("nvidia.com/gpu", "amd.com/gpu")


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _chart(root: Path, display: str = "chart") -> Chart:
    known = chart_files.KNOWN_UPSTREAM | recipes.names()
    return chart_files.read(str(root), display, _read, SETTINGS.config.helm, known)


def _copy(name: str, tmp_path: Path) -> Path:
    folder = tmp_path / name
    shutil.copytree(CHARTS / name, folder)
    return folder


def _write(edit: ChartEdit) -> None:
    for path, data in {**edit.changed, **edit.created}.items():
        Path(path).write_bytes(data)


def _plan(root: Path, mode: str = "edit", display: str = "chart") -> ChartEdit | None:
    return recipes.plan(_chart(root, display), SETTINGS, Options(values=mode), _read)


@pytest.fixture(scope="module")
def helm(tools: Path) -> str:
    found = tools / "helm"
    if not found.is_file():
        pytest.skip("helm is not installed (scripts/install-test-tools.sh)")
    return str(found)


def _render(helm: str, chart: Path, values: list[Path]) -> list[dict[str, Any]]:
    args = [helm, "template", "r", str(chart), "--kube-version", KUBE]
    for file in values:
        args += ["-f", str(file)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def _pods(obj: Any, at: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every pod spec inside an object (a dict with a containers list), by its path."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(obj, dict):
        if isinstance(obj.get("containers"), list):
            found.append((at, obj))
        for key, value in obj.items():
            found.extend(_pods(value, f"{at}.{key}"))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            found.extend(_pods(value, f"{at}[{i}]"))
    return found


def _gpus(container: dict[str, Any]) -> tuple[str, int] | None:
    resources = container.get("resources") or {}
    for part in ("limits", "requests"):
        for name in GPU_NAMES:
            if name in (resources.get(part) or {}):
                return name, int(resources[part][name])
    return None


def _without_gpus(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rendering with everything about GPUs taken out: extended resources, claims,
    ResourceClaimTemplates, Ray's num-gpus; empty resources parts dropped."""
    out = []
    for obj in yaml.safe_load(yaml.safe_dump(objs)):
        if obj.get("kind") == "ResourceClaimTemplate":
            continue
        for _at, pod in _pods(obj):
            pod.pop("resourceClaims", None)
            kept = [t for t in pod.get("tolerations") or [] if t.get("key") not in GPU_NAMES]
            pod.pop("tolerations", None)
            if kept:
                pod["tolerations"] = kept
            for container in pod["containers"] + pod.get("initContainers", []):
                resources = container.get("resources")
                if not isinstance(resources, dict):
                    continue
                resources.pop("claims", None)
                for part in ("limits", "requests"):
                    for name in GPU_NAMES:
                        (resources.get(part) or {}).pop(name, None)
                    if not resources.get(part):
                        resources.pop(part, None)
        for group in _ray_groups(obj):
            params = group.get("rayStartParams") or {}
            params.pop("num-gpus", None)
            if not params:
                group.pop("rayStartParams", None)
        out.append(obj)
    return out


def _ray_groups(obj: dict[str, Any]) -> list[dict[str, Any]]:
    if obj.get("kind") != "RayCluster":
        return []
    spec = obj["spec"]
    return [spec["headGroupSpec"], *spec.get("workerGroupSpecs", [])]


def _check_migrated(
    before: list[dict[str, Any]], after: list[dict[str, Any]], extra: list[dict[str, Any]]
) -> int:
    """The rendering after migrates the one before (see the module docstring); the
    number of containers that had GPUs."""
    assert _without_gpus(before) == _without_gpus(after)
    templates = {
        o["metadata"]["name"]: o for o in after + extra if o.get("kind") == "ResourceClaimTemplate"
    }
    pods_before = {_where(o, at): pod for o in before for at, pod in _pods(o)}
    migrated = 0
    for obj in after:
        for at, pod in _pods(obj):
            old = pods_before[_where(obj, at)]
            claims = {c["name"]: c for c in pod.get("resourceClaims", [])}
            for new, was in zip(pod["containers"], old["containers"], strict=True):
                assert _gpus(new) is None, new
                had = _gpus(was)
                if had is None:
                    assert not (new.get("resources") or {}).get("claims")
                    continue
                resource, count = had
                (claim,) = new["resources"]["claims"]
                template = templates[claims[claim["name"]]["resourceClaimTemplateName"]]
                (request,) = template["spec"]["spec"]["devices"]["requests"]
                choice = SETTINGS.config.choose(resource, _context())
                assert choice is not None
                wanted_class = choice.device_class
                assert request["exactly"]["count"] == count
                assert request["exactly"]["deviceClassName"] == wanted_class
                # the toleration convert writes (DRA224): the pod keeps its GPU nodes
                assert any(
                    t.get("key") == resource and t.get("operator") == "Exists"
                    for t in pod.get("tolerations") or []
                ), pod.get("tolerations")
                migrated += 1
            if obj["kind"] == "RayCluster":
                group = _group_of(obj, at)
                had = _gpus(old["containers"][0])
                if had:
                    assert group["rayStartParams"]["num-gpus"] == str(had[1])
    return migrated


def _where(obj: dict[str, Any], at: str) -> tuple[str, str, str]:
    return obj["kind"], obj["metadata"]["name"], at


def _context() -> Any:
    from dra_migrate.convert.mapping import Context

    return Context()


def _group_of(obj: dict[str, Any], at: str) -> dict[str, Any]:
    spec = obj["spec"]
    if at.startswith(".spec.headGroupSpec"):
        return spec["headGroupSpec"]
    index = int(at.split("workerGroupSpecs[", 1)[1].split("]", 1)[0])
    return spec["workerGroupSpecs"][index]


def _side(folder: Path) -> list[dict[str, Any]]:
    side = folder / "resourceclaimtemplates-dra.yaml"
    return [d for d in yaml.safe_load_all(side.read_text())] if side.is_file() else []


def _golden(case: str, folder: Path, edit: ChartEdit) -> None:
    """The edited and created files equal tests/fixtures/charts/expected/<case>/."""
    expected = EXPECTED / case
    written = {
        os.path.relpath(p, folder): data for p, data in {**edit.changed, **edit.created}.items()
    }
    if os.environ.get("DRA_MIGRATE_WRITE_GOLDEN"):  # regenerate, then review the diff
        for relative, data in written.items():
            (expected / relative).parent.mkdir(parents=True, exist_ok=True)
            (expected / relative).write_bytes(data)
    files = sorted(str(p.relative_to(expected)) for p in expected.rglob("*") if p.is_file())
    assert sorted(written) == files
    for relative, data in written.items():
        assert data.decode() == (expected / relative).read_text(), relative


# --- ollama ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["edit", "file"])
def test_ollama_is_migrated_by_its_switch_and_renders_the_claims(
    helm: str, tmp_path: Path, mode: str
) -> None:
    folder = _copy("ollama", tmp_path)
    values = [[], [folder / "ci" / "test-values.yaml"]]
    before = [_render(helm, folder, v) for v in values]
    edit = _plan(folder, mode)
    assert edit is not None
    plan = edit.plan
    assert (plan.way, plan.recipe, plan.compare) == (RECIPE, "ollama", "claims")
    assert plan.count_keys == ("ollama.gpu.number",)
    assert [f.code for f in edit.findings] == ["DRA240"]
    _golden(f"ollama-{mode}", folder, edit)
    if mode == "edit":
        assert list(edit.changed) == [str(folder / "values.yaml")] and not edit.created
        assert plan.files == ("chart/values.yaml",) and plan.values_overlay == ""
        assert edit.findings[0].path == "chart/values.yaml"
    else:
        overlay = folder / "values-dra.yaml"
        assert not edit.changed and list(edit.created) == [str(overlay)]
        assert plan.values_overlay == "chart/values-dra.yaml"
    _write(edit)
    overlay_args = [folder / "values-dra.yaml"] if mode == "file" else []
    for was, files in zip(before, values, strict=True):
        after = _render(helm, folder, files + overlay_args)
        assert _check_migrated(was, after, []) == 1
    # a second run changes nothing
    again = _plan(folder, mode)
    assert again is not None and again.plan.way == DONE
    assert not again.changed and not again.created
    assert [f.code for f in again.findings] == ["DRA246"]


def test_ollama_maps_the_gpu_type_to_its_class(tmp_path: Path) -> None:
    folder = _copy("ollama", tmp_path)
    values = folder / "values.yaml"
    values.write_text(values.read_text().replace("type: 'nvidia'", "type: 'amd'"))
    edit = _plan(folder)
    assert edit is not None
    text = edit.changed[str(values)].decode()
    assert 'draDriverClass: "gpu.amd.com"' in text


def test_ollama_with_mig_or_outside_the_range_gets_no_recipe(tmp_path: Path) -> None:
    folder = _copy("ollama", tmp_path)
    values = folder / "values.yaml"
    original = values.read_text()
    values.write_text(original.replace("      enabled: false\n", "      enabled: true\n", 1))
    assert "mig:\n      # -- Enable multiple mig devices" in original
    # mig.enabled: the chart's DRA template ignores MIG; the reason is DRA242's
    with pytest.raises(recipes.NotFit, match=r"recipe ollama does not fit .*mig\.enabled is set"):
        _plan(folder)
    values.write_text(original)
    chart_yaml = folder / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace("version: 1.77.0", "version: 1.55.0"))
    assert _plan(folder) is None  # before 1.56.0 the template is refused on Kubernetes 1.34
    chart = _chart(folder, "chart")
    assert recipes.unserved(chart) == (
        "the values recipe for ollama serves versions >=1.56.0, not 1.55.0"
    )


def test_ollama_with_gpus_off_gets_the_switch_for_when_they_are_on(tmp_path: Path) -> None:
    """GPUs off in values.yaml (turned on at install time): the switch is set all the
    same, and the plan says which key turns GPUs on (the proof renders it)."""
    folder = _copy("ollama", tmp_path)
    values = folder / "values.yaml"
    values.write_text(values.read_text().replace("    enabled: true\n", "    enabled: false\n", 1))
    edit = _plan(folder)
    assert edit is not None and edit.plan.enable_keys == ("ollama.gpu.enabled",)
    assert "draEnabled: true" in edit.changed[str(values)].decode()


# --- ray-cluster -----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["edit", "file"])
def test_ray_cluster_groups_get_claims_and_templates_beside_the_values(
    helm: str, tmp_path: Path, mode: str
) -> None:
    folder = _copy("ray-cluster", tmp_path)
    values = [[], [folder / "ci" / "ci-values.yaml"], [folder / "ci" / "gpu-values.yaml"]]
    before = [_render(helm, folder, v) for v in values]
    edit = _plan(folder, mode)
    assert edit is not None
    plan = edit.plan
    assert (plan.way, plan.recipe, plan.compare) == (RECIPE, "ray-cluster", "claims")
    assert plan.count_keys == ()  # the count moves into the template and num-gpus
    _golden(f"ray-cluster-{mode}", folder, edit)
    _write(edit)
    overlay = [folder / "values-dra.yaml"] if mode == "file" else []
    checked = values if mode == "edit" else values[:2]
    for was, files in zip(before, checked, strict=False):
        after = _render(helm, folder, files + overlay)
        assert _check_migrated(was, after, _side(folder)) == 1
    if mode == "file":
        # one overlay serves the values it was made from: the file asking for two GPUs
        # a worker is named as not served
        (message,) = [f.message for f in edit.findings]
        assert "chart/ci/gpu-values.yaml asks for other GPUs than values.yaml" in message
    again = _plan(folder, mode)
    assert again is not None and again.plan.way == DONE
    assert [f.code for f in again.findings] == ["DRA246"]


def test_ray_cluster_head_and_additional_groups_each_get_their_template(
    helm: str, tmp_path: Path
) -> None:
    folder = _copy("ray-cluster", tmp_path)
    values = folder / "values.yaml"
    text = values.read_text()
    text = text.replace("    disabled: true\n", "    disabled: false\n", 1)
    text = text.replace(
        '      limits:\n        cpu: 1\n        memory: "1Gi"\n',
        '      limits:\n        cpu: 1\n        memory: "1Gi"\n        nvidia.com/gpu: 4\n',
        1,
    )
    head = '    limits:\n      cpu: "1"\n      # To avoid'
    text = text.replace(
        head, '    limits:\n      nvidia.com/gpu: 1\n      cpu: "1"\n      # To avoid', 1
    )
    values.write_text(text)
    before = _render(helm, folder, [])
    edit = _plan(folder)
    assert edit is not None
    _write(edit)
    after = _render(helm, folder, [])
    assert _check_migrated(before, after, _side(folder)) == 3
    names = sorted(o["metadata"]["name"] for o in _side(folder))
    assert names == [
        "ray-cluster-head-gpu-1",
        "ray-cluster-smallgroup-gpu-4",
        "ray-cluster-worker-gpu-1",
        "ray-cluster-worker-gpu-2",  # ci/gpu-values.yaml's two GPUs a worker
    ]


def test_ray_cluster_before_resource_claims_gets_no_recipe(tmp_path: Path) -> None:
    folder = _copy("ray-cluster", tmp_path)
    chart_yaml = folder / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace("version: 1.7.0", "version: 1.5.1"))
    values = folder / "values.yaml"  # 1.5.1's values have no resourceClaims
    values.write_text(values.read_text().replace("resourceClaims: []", "other: []"))
    assert _plan(folder) is None


# --- llm-d-modelservice ------------------------------------------------------------


@pytest.mark.parametrize("mode", ["edit", "file"])
def test_llm_d_roles_are_migrated_by_the_accelerator_switch(
    helm: str, tmp_path: Path, mode: str
) -> None:
    folder = _copy("llm-d-modelservice", tmp_path)
    before = _render(helm, folder, [])
    edit = _plan(folder, mode)
    assert edit is not None
    plan = edit.plan
    assert (plan.way, plan.recipe) == (RECIPE, "llm-d-modelservice")
    assert plan.count_keys == ("decode.parallelism.tensor",)  # prefill sets its own
    (note,) = edit.findings
    assert "sets accelerator.dra" in note.message
    assert "drops prefill.containers[0].resources.limits.nvidia\\.com/gpu" in note.message
    _golden(f"llm-d-modelservice-{mode}", folder, edit)
    _write(edit)
    overlay = [folder / "values-dra.yaml"] if mode == "file" else []
    assert _check_migrated(before, _render(helm, folder, overlay), []) == 2
    again = _plan(folder, mode)
    assert again is not None and again.plan.way == DONE


def test_llm_d_role_counts_the_template_cannot_hold_get_no_recipe(tmp_path: Path) -> None:
    folder = _copy("llm-d-modelservice", tmp_path)
    values = folder / "values.yaml"
    # prefill's explicit limit now differs from its parallelism (1): the nvidia template's
    # count must say 3, and decode's 2 (from its parallelism) cannot be said with it
    values.write_text(values.read_text().replace("nvidia.com/gpu: 1  #", "nvidia.com/gpu: 3  #"))
    with pytest.raises(recipes.NotFit, match="recipe llm-d-modelservice does not fit"):
        _plan(folder)


def test_llm_d_a_role_without_gpus_keeps_dra_off(helm: str, tmp_path: Path) -> None:
    folder = _copy("llm-d-modelservice", tmp_path)
    values = folder / "values.yaml"
    text = values.read_text()
    at = text.index("prefill:\n")
    head, tail = text[:at], text[at:]
    tail = tail.replace(
        "ghcr.io/llm-d/llm-d-cuda:v0.4.0", "ghcr.io/llm-d/llm-d-inference-sim:latest", 1
    )
    tail = tail.replace("nvidia.com/gpu: 1  # one card for prefill", "cpu: 1", 1)
    values.write_text(head + tail)
    before = _render(helm, folder, [])
    edit = _plan(folder)
    assert edit is not None
    _write(edit)
    after = _render(helm, folder, [])
    assert _check_migrated(before, after, []) == 1
    assert yaml.safe_load(values.read_text())["prefill"]["accelerator"] == {"dra": False}


# --- a vendored dependency --------------------------------------------------------


@pytest.mark.parametrize("mode", ["edit", "file"])
def test_a_vendored_chart_is_migrated_through_the_parent_values_under_its_alias(
    helm: str, tmp_path: Path, mode: str
) -> None:
    parent = tmp_path / "platform"
    shutil.copytree(CHARTS / "parent-ollama", parent)
    shutil.copytree(CHARTS / "ollama", parent / "charts" / "ollama")
    upstream = parent / "charts" / "ollama" / "values.yaml"  # as published: no GPUs
    text = upstream.read_text().replace("    enabled: true\n", "    enabled: false\n", 1)
    upstream.write_text(text.replace("    number: 2\n", "    number: 1\n", 1))
    child_values = upstream.read_bytes()
    before = _render(helm, parent, [])
    chart = _chart(parent / "charts" / "ollama", "platform/charts/ollama")
    assert chart.upstream and chart.values_key == "llm"
    edit = recipes.plan(chart, SETTINGS, Options(values=mode), _read)
    assert edit is not None
    shown = "platform/values.yaml" if mode == "edit" else "platform/values-dra.yaml"
    assert [str(p) for p in [*edit.changed, *edit.created]] == [
        str(parent / shown.removeprefix("platform/"))
    ]
    assert edit.plan.files == (shown,)
    assert edit.findings[0].path == shown
    assert "sets llm.ollama.gpu.draEnabled" in edit.findings[0].message
    _golden(f"parent-ollama-{mode}", parent, edit)
    _write(edit)
    assert upstream.read_bytes() == child_values  # the vendored chart is never forked
    overlay = [parent / "values-dra.yaml"] if mode == "file" else []
    assert _check_migrated(before, _render(helm, parent, overlay), []) == 1
    again = recipes.plan(chart, SETTINGS, Options(values=mode), _read)
    assert again is not None and again.plan.way == DONE


# --- semver ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "constraint", "ok"),
    [
        ("1.56.0", ">=1.56.0", True),
        ("1.55.9", ">=1.56.0", False),
        ("v0.4.12", ">=0.4.4", True),
        ("v0.4.3", ">=0.4.4", False),
        ("1.6.0-rc.0", ">=1.6.0-rc.0", True),
        ("1.6.0-alpha", ">=1.6.0-rc.0", False),
        ("1.6.0", ">=1.6.0-rc.0", True),
        ("1.10.0", ">=1.9.0, <2.0.0", True),
        ("2.0.0", ">=1.9.0, <2.0.0", False),
        ("2.0.0-rc.1", "<2.0.0", True),
        ("1.0.0-rc.10", ">1.0.0-rc.9", True),
        ("latest", ">=0.0.0", False),
    ],
)
def test_versions_compare_as_semver(version: str, constraint: str, ok: bool) -> None:
    assert recipes.satisfies(version, constraint) is ok


def test_every_recipe_loads_and_names_its_chart() -> None:
    assert {r.name for r in recipes.families()} >= {"ollama", "ray-cluster"}
    assert {"ollama", "ray-cluster"} <= recipes.names()
    for recipe in recipes.families():
        text = (Path(recipes.RECIPES_DIR) / recipe.file).read_text()
        assert "commit" in text and "github.com/" in text, recipe.file  # its source cited
    with pytest.raises(ValueError, match="not a version constraint"):
        recipes.parse_constraint(">= one")


def test_an_alias_on_a_key_the_recipe_edits_is_refused_with_its_position(
    tmp_path: Path,
) -> None:
    folder = _copy("ollama", tmp_path)
    values = folder / "values.yaml"
    text = values.read_text().replace("  gpu:\n", "  gpu: &gpu\n", 1) + "copy: *gpu\n"
    values.write_text(text)
    with pytest.raises(InputProblem) as raised:
        _plan(folder)
    problem = raised.value.finding
    assert (problem.code, problem.path) == ("DRA008", "chart/values.yaml")


def test_ray_cluster_is_recognised_by_what_its_values_offer(tmp_path: Path) -> None:
    """kuberay's default branch says version 1.1.0 in Chart.yaml while its values carry
    resourceClaims: the recipe serves it; a 1.1.0 without them is told why not."""
    folder = _copy("ray-cluster", tmp_path)
    chart_yaml = folder / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace("version: 1.7.0", "version: 1.1.0"))
    edit = _plan(folder)
    assert edit is not None and edit.plan.recipe == "ray-cluster"
    values = folder / "values.yaml"
    values.write_text(values.read_text().replace("resourceClaims: []", "other: []"))
    assert _plan(folder) is None
    why = recipes.unserved(_chart(folder))
    assert why.endswith(
        "not 1.1.0, and its values.yaml has no head.resourceClaims or worker.resourceClaims"
    ), why
