"""Real kubectl kustomize and helm template around the converter, as users chain them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from dra_migrate.convert.mapping import Settings, load_config
from dra_migrate.k8s import schemas
from dra_migrate.pipeline.one_file import process
from dra_migrate.repo.roles import Role
from tests.conftest import REPO, run_cli
from tests.helpers.invariants import check_conversion, load_all, objects

EXAMPLES = REPO / "examples"


def _tool(tools: Path, *args: str, cwd: Path | None = None) -> bytes:
    return subprocess.run(
        [str(tools / args[0]), *args[1:]], cwd=cwd, capture_output=True, check=True, timeout=120
    ).stdout


def _pods(built: list[dict]) -> list[dict]:
    return [o["spec"]["template"]["spec"] for o in built if o["kind"] == "Deployment"]


def test_kustomize_base_and_its_overlay_convert_as_one_unit(tools: Path, tmp_path: Path) -> None:
    """kubernetes-engine-samples llm-serving-gemma shape: the base converts, and the prod
    overlay that raises its count gets a template of its own (a new name) and a patch
    that points the claim at it; both builds are valid and never ask for claims and
    nvidia.com/gpu at once."""
    work = tmp_path / "kustomize"
    shutil.copytree(EXAMPLES / "kustomize", work)

    done = run_cli(["convert", "--write", "."], work)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "overlays/prod/gpu-patch.yaml:17:15: DRA230 info:" in err
    base = objects(load_all(_tool(tools, "kubectl", "kustomize", "base", cwd=work).decode()))
    prod = objects(
        load_all(_tool(tools, "kubectl", "kustomize", "overlays/prod", cwd=work).decode())
    )
    for built, template, count in ((base, "ocr-server-gpu", 1), (prod, "ocr-server-gpu-x2", 2)):
        (pod,) = _pods(built)
        assert pod["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": template}]
        assert "nvidia.com/gpu" not in pod["containers"][0]["resources"].get("limits", {})
        templates = [o for o in built if o["kind"] == "ResourceClaimTemplate"]
        assert [t["metadata"]["name"] for t in templates] == [template]  # no other in the build
        assert templates[0]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == count
        for obj in built:
            if obj["kind"] in ("Deployment", "ResourceClaimTemplate"):
                assert schemas.validate_object(obj) == [], obj["kind"]
    # the migrated repository passes in CI
    check = run_cli(["convert", "--check", "."], work)
    assert check.returncode == 0, check.stderr.decode()
    assert b"DRA222" not in check.stderr and b"DRA202" not in check.stderr


def test_helm_rendered_stream_through_stdin(tools: Path) -> None:
    rendered = _tool(tools, "helm", "template", "demo", str(EXAMPLES / "charts" / "inference"))
    done = run_cli(
        ["convert", "-", "--target", "v1", "--stdin-filename", "rendered.yaml"], REPO, rendered
    )
    assert done.returncode == 0, done.stderr
    converted = done.stdout.decode()
    assert "# Source: inference/templates/deployment.yaml" in converted
    result = process("rendered.yaml", rendered, Role(), Settings("v1", load_config(None)))
    check_conversion(rendered.decode(), converted, result.inventory)
    for obj in objects(load_all(converted)):
        if obj["kind"] in ("Deployment", "ResourceClaimTemplate"):
            assert schemas.validate_object(obj, "1.34") == [], obj["kind"]


def test_helm_chart_sources_are_migrated_and_render_as_before_with_the_switch_off(
    tools: Path, tmp_path: Path
) -> None:
    """The bundled chart through the real CLI and the real helm: its templates gain the
    DRA switch (DRA241); off, the chart renders what it rendered; on, it renders
    claims and no extended resource."""
    chart = tmp_path / "inference"
    shutil.copytree(EXAMPLES / "charts" / "inference", chart)
    before = _tool(tools, "helm", "template", "demo", str(chart))
    done = run_cli(["convert", "--write", "."], tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "inference/Chart.yaml:1:1: DRA241" in err and "DRA203" not in err
    assert (chart / "templates" / "inference-resourceclaimtemplate.yaml").is_file()
    assert _tool(tools, "helm", "template", "demo", str(chart)) == before
    on = _tool(tools, "helm", "template", "demo", str(chart), "--set", "dra.enabled=true")
    assert b"nvidia.com/gpu: 1" not in on and b"kind: ResourceClaimTemplate" in on
    assert b"resourceClaimTemplateName: demo-inference-gpu" in on


def test_name_prefix_gets_the_name_reference_the_conversion_writes(
    tools: Path, tmp_path: Path
) -> None:
    work = tmp_path / "kustomize"
    shutil.copytree(EXAMPLES / "kustomize" / "base", work / "base")
    (work / "prod").mkdir()
    (work / "prod" / "kustomization.yaml").write_text("resources:\n- ../base\nnamePrefix: prod-\n")
    before = (work / "base" / "deployment.yaml").read_bytes()
    # the hook's form: the overlay read from the context, not the run's to write
    done = run_cli(["convert", "--write", "--context", ".", "base/deployment.yaml"], work)
    assert b"base/deployment.yaml:4:9: DRA219" in done.stderr, done.stderr
    # an error on the overlay keeps the base it would break unwritten
    assert (work / "base" / "deployment.yaml").read_bytes() == before

    def refs() -> tuple[str, str]:
        built = objects(load_all(_tool(tools, "kubectl", "kustomize", "prod", cwd=work).decode()))
        template = next(o for o in built if o["kind"] == "ResourceClaimTemplate")
        pod = next(o for o in built if o["kind"] == "Deployment")["spec"]["template"]["spec"]
        return template["metadata"]["name"], pod["resourceClaims"][0]["resourceClaimTemplateName"]

    # the overlay among the run's files: the conversion writes the configuration (DRA290)
    done = run_cli(["convert", "--write", "."], work)
    assert b"prod/kustomization.yaml:3:1: DRA290" in done.stderr, done.stderr
    assert b"DRA219" not in done.stderr and done.returncode == 0, done.stderr
    assert (
        (work / "prod" / "kustomization.yaml")
        .read_text()
        .endswith("configurations:\n  - dra-name-reference.yaml\n")
    )
    name, ref = refs()
    assert name.startswith("prod-") and ref == name  # real kustomize
    assert b"DRA219" not in run_cli(["convert", "--check", "."], work).stderr
    # without it, the real build breaks the reference: what DRA219 says, validate too
    (work / "prod" / "kustomization.yaml").write_text("resources:\n- ../base\nnamePrefix: prod-\n")
    name, ref = refs()
    assert name.startswith("prod-") and ref != name
    assert b"DRA219" in run_cli(["validate", "."], work).stdout


def test_report_kustomize_configuration_renames_references(tools: Path, tmp_path: Path) -> None:
    """The nameReference configuration of the report makes namePrefix/nameSuffix work."""
    import json

    base = tmp_path / "base"
    base.mkdir()
    shutil.copy(EXAMPLES / "apps" / "training-job.yaml", base / "job.yaml")
    shutil.copy(EXAMPLES / "apps" / "inference-deployment.yaml", base / "deploy.yaml")
    shutil.copy(EXAMPLES / "apps" / "pytorchjob.yaml", base / "pytorchjob.yaml")
    (base / "kustomization.yaml").write_text(
        "resources:\n  - job.yaml\n  - deploy.yaml\n  - pytorchjob.yaml\n"
    )
    prod = tmp_path / "prod"
    prod.mkdir()
    (prod / "kustomization.yaml").write_text(
        "resources:\n  - ../base\nnamePrefix: prod-\nnameSuffix: -v2\n"
    )
    report = run_cli(["report", "--format", "json", "."], tmp_path)
    config = json.loads(report.stdout)["plan"]["stages"]["rollout"]["kustomizeConfiguration"]
    assert config, report.stdout[-2000:]
    converted = run_cli(["convert", "--write", "base"], tmp_path)
    assert converted.returncode == 0, converted.stderr

    def build() -> list[dict[str, object]]:
        return objects(
            load_all(_tool(tools, "kubectl", "kustomize", "prod", cwd=tmp_path).decode())
        )

    def references(objs: list[dict[str, object]]) -> tuple[set[str], set[str]]:
        templates = {
            o["metadata"]["name"]  # type: ignore[index]
            for o in objs
            if o["kind"] == "ResourceClaimTemplate"
        }
        text = json.dumps([o for o in objs if o["kind"] != "ResourceClaimTemplate"])
        used = set(re.findall(r'"resourceClaimTemplateName": "([^"]+)"', text))
        return templates, used

    templates, used = references(build())
    assert all(t.startswith("prod-") for t in templates)
    assert used and not used <= templates  # without the configuration the pods keep old names

    (prod / "dra-name-reference.yaml").write_text(config)
    (prod / "kustomization.yaml").write_text(
        "resources:\n  - ../base\nnamePrefix: prod-\nnameSuffix: -v2\n"
        "configurations:\n  - dra-name-reference.yaml\n"
    )
    templates, used = references(build())
    assert len(used) == 4 and used <= templates  # Job, Deployment, PyTorchJob Master and Worker
