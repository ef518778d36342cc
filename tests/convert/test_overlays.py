"""Kustomize overlays converted with their bases, proven with the real kubectl: for every
kustomization, ``kubectl kustomize`` after the conversion equals the conversion of
``kubectl kustomize`` before (``convert --verify-builds`` and, independently, here),
and a construct that cannot be rewritten keeps the whole unit as it is."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate.convert import overlays
from dra_migrate.pipeline import builds
from tests.conftest import FIXTURES, REPO, run_cli

KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def _kustomization_dirs(root: Path) -> list[Path]:
    """The folders kubectl can build (a Component is built by what includes it)."""
    return sorted(
        {
            p.parent
            for name in KUSTOMIZATIONS
            for p in root.rglob(name)
            if "kind: Component" not in p.read_text()
        }
    )


def _with_kustomize() -> list[str]:
    cases = FIXTURES / "convert"
    return sorted(c.name for c in cases.iterdir() if _kustomization_dirs(c / "input"))


def _env(tools: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}


def _cli(args: list[str], cwd: Path, tools: Path) -> subprocess.CompletedProcess[str]:
    import sys

    return subprocess.run(
        [sys.executable, "-m", "dra_migrate", *args],
        cwd=cwd,
        env=_env(tools),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _build(folder: Path, tools: Path) -> bytes:
    done = subprocess.run(
        [str(tools / "kubectl"), "kustomize", str(folder)], capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def _proven(root: Path, tools: Path) -> tuple[str, list[Path]]:
    """Convert ``root`` in place with --verify-builds; check every build independently:
    the build after equals the conversion of the build before, names aside."""
    before = {d: _build(d, tools) for d in _kustomization_dirs(root)}
    done = _cli(["convert", "--write", "--verify-builds", "--jobs", "1", "."], root, tools)
    assert "DRA231" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    changed = []
    for folder, built in before.items():
        after = _build(folder, tools)
        if after == built:  # nothing of it converted (or its unit held as it is)
            continue
        converted = run_cli(["convert", "-"], root, stdin=built).stdout
        assert builds.difference(converted, after) == "", folder
        changed.append(folder)
    return done.stderr, changed


@pytest.mark.parametrize("case", _with_kustomize())
def test_every_golden_kustomization_builds_what_its_conversion_means(
    case: str, tmp_path: Path, tools: Path
) -> None:
    root = tmp_path / "input"
    shutil.copytree(FIXTURES / "convert" / case / "input", root)
    stderr, changed = _proven(root, tools)
    for folder in changed:  # every build the run changed was verified by the run itself
        assert os.path.relpath(folder, root) in stderr, (folder, stderr)


def test_the_bundled_example_overlay_converts_with_its_base(tmp_path: Path, tools: Path) -> None:
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples", root)
    _stderr, changed = _proven(root, tools)
    assert {p.relative_to(root).as_posix() for p in changed} == {
        "kustomize/base",
        "kustomize/overlays/prod",
    }
    overlay = root / "kustomize" / "overlays" / "prod"
    assert (overlay / overlays.TEMPLATES_FILE).is_file()
    assert "nvidia.com/gpu" not in (overlay / "gpu-patch.yaml").read_text()
    # a second run has nothing left to do, and the check passes
    again = _cli(["convert", "--check", "kustomize"], root, tools)
    assert again.returncode == 0, again.stderr


BASE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
  labels: {app: llm}
spec:
  selector:
    matchLabels: {app: llm}
  template:
    metadata:
      labels: {app: llm}
    spec:
      containers:
        - name: server
          image: registry.example.com/llm:1.0
          resources:
            limits:
              memory: 16Gi
              nvidia.com/gpu: 1  # one GPU in dev
"""


def _patch(count: int, memory: str = "32Gi") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      containers:
        - name: server
          resources:
            limits:
              memory: {memory}
              nvidia.com/gpu: {count}
"""


def _tree(root: Path, files: dict[str, str | None]) -> None:
    for name, text in files.items():
        if text is None:  # (a file of the default tree the case does without)
            continue
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _generated(root: Path, small: int, large: int, component: int) -> None:
    """A base, two overlays of different counts, and a component that a third overlay
    includes (its patch sets the count)."""
    _tree(
        root,
        {
            "base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
            "base/deployment.yaml": BASE,
            "overlays/small/kustomization.yaml": (
                "namespace: small\nresources:\n  - ../../base\npatches:\n  - path: gpu.yaml\n"
            ),
            "overlays/small/gpu.yaml": _patch(small),
            "overlays/large/kustomization.yaml": (
                "namespace: large\nresources:\n  - ../../base\npatches:\n"
                "  - target: {kind: Deployment, name: llm}\n    patch: |-\n"
                "      - op: replace\n"
                "        path: /spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu\n"
                f"        value: {large}\n"
            ),
            "components/gpus/kustomization.yaml": (
                "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                "patches:\n  - path: gpu.yaml\n"
            ),
            "components/gpus/gpu.yaml": _patch(component, "64Gi"),
            "overlays/with-component/kustomization.yaml": (
                "namespace: comp\nresources:\n  - ../../base\ncomponents:\n"
                "  - ../../components/gpus\n"
            ),
        },
    )


def test_a_base_two_overlays_and_a_component(tmp_path: Path, tools: Path) -> None:
    _generated(tmp_path, 2, 4, 8)
    stderr, changed = _proven(tmp_path, tools)
    assert len(changed) == 4, stderr  # the base and the three overlays
    # each count has a template of its own name, the base's is taken out of each build
    for folder, count in (("overlays/small", 2), ("components/gpus", 8)):
        templates = (tmp_path / folder / overlays.TEMPLATES_FILE).read_text()
        assert f"name: llm-gpu-x{count}" in templates and f"count: {count}" in templates
        assert (tmp_path / folder / overlays.REPLACED_FILE).is_file()
    large = (tmp_path / "overlays/large/kustomization.yaml").read_text()
    assert "path: /spec/template/spec/resourceClaims/0/resourceClaimTemplateName" in large
    assert "value: llm-gpu-x4" in large
    small = (tmp_path / "overlays/small/gpu.yaml").read_text()
    assert "memory: 32Gi" in small and "nvidia.com/gpu" not in small  # the rest is kept


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(1, 8), st.integers(1, 8), st.integers(1, 8))
def test_any_counts_build_what_their_conversion_means(
    tmp_path_factory: pytest.TempPathFactory, tools: Path, small: int, large: int, component: int
) -> None:
    root = tmp_path_factory.mktemp("counts")
    _generated(root, small, large, component)
    _proven(root, tools)


@pytest.mark.parametrize(
    ("files", "construct"),
    [
        (
            {"overlay/gpu.yaml": "$patch: replace\n" + _patch(2)},
            "$patch directive",
        ),
        (
            {
                "overlay/gpu.yaml": _patch(2).replace(
                    "        - name: server\n", "        - name: server\n          $patch: delete\n"
                )
            },
            "$patch directive",
        ),
        ({"overlay/gpu.yaml": _patch(0)}, "would not be converted"),
        (
            {"overlay/gpu.yaml": _patch(2).replace("name: server", "name: sidecar")},
            "adds container sidecar",
        ),
        (
            {
                "overlay/kustomization.yaml": (
                    "resources: [../base]\npatches:\n  - path: gpu.yaml\n"
                    "    target: {kind: Deployment, labelSelector: app=llm}\n"
                )
            },
            "not one object by kind and name",
        ),
        (
            {
                "overlay/kustomization.yaml": (
                    "resources: [../base]\npatches:\n  - target: {kind: Deployment, name: llm}\n"
                    "    patch: |-\n      - op: remove\n        path: /spec/template/spec/"
                    "containers/0/resources/limits/nvidia.com~1gpu\n"
                ),
                "overlay/gpu.yaml": None,
            },
            "JSON 6902 remove",
        ),
        ({"overlay/resourceclaimtemplates.yaml": "# mine\n"}, "exists beside it"),
    ],
    ids=[
        "patch-replace",
        "container-delete",
        "count-0",
        "new-container",
        "selector",
        "remove",
        "taken",
    ],
)
def test_a_construct_that_cannot_be_rewritten_keeps_the_unit(
    tmp_path: Path, files: dict[str, str | None], construct: str
) -> None:
    tree: dict[str, str | None] = {
        "base/kustomization.yaml": "resources: [deployment.yaml]\n",
        "base/deployment.yaml": BASE,
        "overlay/kustomization.yaml": "resources: [../base]\npatches:\n  - path: gpu.yaml\n",
        "overlay/gpu.yaml": _patch(2),
        **files,
    }
    _tree(tmp_path, tree)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    done = run_cli(["convert", "--write", "."], tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    assert "DRA222" in stderr and construct in stderr, stderr
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before  # the base, the patch and the overlay: all as they were


def test_a_base_given_without_its_overlay_is_held(tmp_path: Path) -> None:
    """A hook that gets the base alone: converting it would break the overlay's build."""
    _tree(
        tmp_path,
        {
            "base/kustomization.yaml": "resources: [deployment.yaml]\n",
            "base/deployment.yaml": BASE,
            "overlay/kustomization.yaml": "resources: [../base]\npatches:\n  - path: gpu.yaml\n",
            "overlay/gpu.yaml": _patch(2),
        },
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    done = run_cli(["convert", "--check", "base/deployment.yaml"], tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 1 and "DRA222" in stderr, stderr
    assert "outside the paths given" in stderr, stderr


def test_verify_builds_needs_kubectl(tmp_path: Path) -> None:
    _tree(tmp_path, {"pod.yaml": BASE})
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "dra_migrate", "convert", "--verify-builds", "."],
        cwd=tmp_path,
        env={**os.environ, "PATH": str(tmp_path / "nothing")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "needs kubectl" in done.stderr, done.stderr


def test_a_build_that_differs_writes_nothing(tmp_path: Path, tools: Path) -> None:
    """DRA231: the proof is checked, not assumed. A replacement copies the GPU limit
    into a ConfigMap: after the conversion there is no limit to copy and the build
    fails, so nothing is written."""
    _tree(
        tmp_path,
        {
            "kustomization.yaml": (
                "resources: [deployment.yaml, config.yaml]\nreplacements:\n"
                "  - source:\n      kind: Deployment\n      name: llm\n"
                "      fieldPath: spec.template.spec.containers.0.resources.limits."
                "[nvidia.com/gpu]\n"
                "    targets:\n      - select: {kind: ConfigMap, name: gpus}\n"
                "        fieldPaths: [data.count]\n"
            ),
            "deployment.yaml": BASE,
            "config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gpus}\n"
            "data: {count: '0'}\n",
        },
    )
    before = (tmp_path / "deployment.yaml").read_bytes()
    done = _cli(["convert", "--write", "--verify-builds", "."], tmp_path, tools)
    assert done.returncode == 1 and "DRA231" in done.stderr, done.stderr
    assert (tmp_path / "deployment.yaml").read_bytes() == before


def test_an_overlay_that_renames_with_the_name_reference_configuration(
    tmp_path: Path, tools: Path
) -> None:
    """namePrefix renames the overlay's template and the base's; the nameReference
    configuration the report writes makes kustomize rename the pods' references too."""
    from dra_migrate.migration.stages import name_reference_config

    _tree(
        tmp_path,
        {
            "base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
            "base/deployment.yaml": BASE,
            "overlays/prod/kustomization.yaml": (
                "namePrefix: prod-\nnamespace: prod\nresources:\n  - ../../base\n"
                "configurations:\n  - namereference.yaml\npatches:\n  - path: gpu.yaml\n"
            ),
            "overlays/prod/namereference.yaml": name_reference_config([("apps/v1", "Deployment")]),
            "overlays/prod/gpu.yaml": _patch(4),
        },
    )
    _stderr, changed = _proven(tmp_path, tools)
    assert len(changed) == 2
    built = _build(tmp_path / "overlays" / "prod", tools).decode()
    assert (
        "name: prod-llm-gpu-x4" in built and "resourceClaimTemplateName: prod-llm-gpu-x4" in built
    )
    assert "name: prod-llm-gpu\n" not in built  # the base's template: not in this build


def test_a_renaming_overlay_without_it_gets_it_and_is_proven(tmp_path: Path, tools: Path) -> None:
    """The overlay renames, patches the count and lists no name reference: the
    conversion writes dra-name-reference.yaml with the unit (DRA290), and the real
    kubectl proves its build (the pods refer to the renamed templates)."""
    _tree(
        tmp_path,
        {
            "base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
            "base/deployment.yaml": BASE,
            "overlays/prod/kustomization.yaml": (
                "namePrefix: prod-\nresources:\n  - ../../base\npatches:\n  - path: gpu.yaml\n"
            ),
            "overlays/prod/gpu.yaml": _patch(4),
        },
    )
    stderr, _changed = _proven(tmp_path, tools)
    assert "overlays/prod/kustomization.yaml:1:1: DRA290 info:" in stderr, stderr
    built = _build(tmp_path / "overlays" / "prod", tools).decode()
    assert (
        "name: prod-llm-gpu-x4" in built and "resourceClaimTemplateName: prod-llm-gpu-x4" in built
    )


def test_a_renaming_overlay_outside_the_run_holds_the_unit(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
            "base/deployment.yaml": BASE,
            "overlays/prod/kustomization.yaml": (
                "namePrefix: prod-\nresources:\n  - ../../base\npatches:\n  - path: gpu.yaml\n"
            ),
            "overlays/prod/gpu.yaml": _patch(4),
        },
    )
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    done = run_cli(["convert", "--write", "--context", ".", "base/deployment.yaml"], tmp_path)
    stderr = done.stderr.decode()
    assert done.returncode == 1 and "DRA219" in stderr, stderr
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_a_bridged_base_keeps_its_overlays_patches_and_the_check_passes(tmp_path: Path) -> None:
    """The plan bridges the example's kustomize base on 1.36 (auto): convert leaves the
    base and its overlay's patch as they are (DRA514, DRA233) and the check passes."""
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / "kustomize", root)
    args = ["--strategy", "auto", "--kube-version", "1.36"]
    done = run_cli(["convert", "--check", *args, "."], root)
    stderr = done.stderr.decode()
    assert done.returncode == 0, stderr
    assert "base/deployment.yaml" in stderr and "DRA514" in stderr
    assert "overlays/prod/gpu-patch.yaml:17:15: DRA233 info" in stderr, stderr
    assert "DRA202" not in stderr
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    run_cli(["convert", "--write", *args, "."], root)
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_a_patch_that_cannot_be_read_holds_the_unit_without_a_traceback(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "base/kustomization.yaml": "resources: [deployment.yaml]\n",
            "base/deployment.yaml": BASE,
            "overlay/kustomization.yaml": "resources: [../base]\npatches:\n  - path: gpu.yaml\n",
        },
    )
    (tmp_path / "overlay" / "gpu.yaml").write_bytes(_patch(2).encode("utf-16"))
    done = run_cli(["convert", "--write", "."], tmp_path)
    stderr = done.stderr.decode()
    assert b"Traceback" not in done.stderr and done.returncode in (1, 123), stderr
    assert "DRA222" in stderr and "cannot be read" in stderr, stderr
    assert (tmp_path / "base" / "deployment.yaml").read_text() == BASE


def test_verify_builds_leaves_out_the_folders_the_run_excludes(tmp_path: Path, tools: Path) -> None:
    """--verify-builds finds kustomizations as the run finds files: an excluded folder's
    kustomization (here one that copies the GPU limit into a ConfigMap, which the
    conversion breaks) is not built; without the exclude it is, and stops the writes."""
    _tree(
        tmp_path,
        {
            "app/kustomization.yaml": "resources: [deployment.yaml]\n",
            "app/deployment.yaml": BASE,
            "legacy/kustomization.yaml": (
                "resources: [../app, config.yaml]\nreplacements:\n"
                "  - source:\n      kind: Deployment\n      name: llm\n"
                "      fieldPath: spec.template.spec.containers.0.resources.limits."
                "[nvidia.com/gpu]\n"
                "    targets:\n      - select: {kind: ConfigMap, name: gpus}\n"
                "        fieldPaths: [data.count]\n"
            ),
            "legacy/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gpus}\n"
            "data: {count: '0'}\n",
        },
    )
    before = (tmp_path / "app" / "deployment.yaml").read_bytes()
    done = _cli(["convert", "--check", "--verify-builds", "."], tmp_path, tools)
    assert "DRA231" in done.stderr and "legacy" in done.stderr, done.stderr
    done = _cli(
        ["convert", "--write", "--verify-builds", "--exclude", "legacy/", "."], tmp_path, tools
    )
    assert done.returncode == 0, done.stderr
    assert "DRA231" not in done.stderr
    assert (tmp_path / "app" / "deployment.yaml").read_bytes() != before
