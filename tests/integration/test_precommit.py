"""The hooks of .pre-commit-hooks.yaml, run by the real pre-commit framework.

Each test makes a git repository in a temporary folder, stages manifests and
runs ``pre-commit try-repo`` against a snapshot of this checkout (its
working tree, uncommitted changes included), as a user adding the hooks
would. pre-commit builds the hook's environment with pip from PyPI once per
session; without PyPI the tests skip and say so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.cli.test_cli import DEPLOYMENT
from tests.conftest import REPO
from tests.helpers.invariants import claim_template

# one worker builds the hook environment once for all (pytest-xdist --dist loadgroup)
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.precommit,
    pytest.mark.xdist_group("precommit"),
]


TEMPLATE = claim_template("shared-gpu")

CLAIMING_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: user
  namespace: ml
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: shared-gpu
  containers:
  - name: c
    image: registry.example.com/cuda:12
    resources:
      claims:
      - name: gpu
"""


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture(scope="session")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's working tree as a committed repository, so pre-commit caches its env."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    try:
        import pre_commit  # noqa: F401
    except ImportError:
        pytest.skip("pre-commit is not installed (it is in the test extra)")
    try:
        urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=15).close()
    except OSError as exc:
        pytest.skip(f"PyPI is not reachable ({exc}): pre-commit cannot build the hook environment")
    snapshot = tmp_path_factory.mktemp("dra-migrate-checkout")
    listed = _git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            target = snapshot / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    _git(snapshot, "init", "-q")
    _git(snapshot, "add", "-A")
    _git(snapshot, "commit", "-q", "-m", "snapshot")
    return snapshot


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "manifests"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "README.md").write_text("manifests\n")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-q", "-m", "init")
    return repo


def _write(repo: Path, files: dict[str, str], stage: bool = True) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
        if stage:
            _git(repo, "add", "--", name)


def _pre_commit(
    repo: Path, home: Path, *args: str, command: str = "run"
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", command, *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    if "An unexpected error has occurred" in done.stdout + done.stderr:
        log = home / "pre-commit.log"
        pytest.fail(f"pre-commit failed:\n{done.stdout}\n{log.read_text() if log.exists() else ''}")
    return done


def _configure(repo: Path, hooks_repo: Path) -> None:
    """The three lines a repository owner adds (and pre-commit's own layout around them)."""
    rev = _git(hooks_repo, "rev-parse", "HEAD").strip()
    _write(
        repo,
        {
            ".pre-commit-config.yaml": (
                f"repos:\n- repo: {hooks_repo}\n  rev: {rev}\n  hooks:\n"
                "  - id: dra-migrate-check\n  - id: dra-migrate-validate\n"
            )
        },
    )


def test_try_repo_check_fails_with_the_diff_and_fix_converts(
    user_repo: Path, hooks_repo: Path, tmp_path: Path
) -> None:
    """``pre-commit try-repo`` runs every hook of the checkout on the staged legacy manifest."""
    _write(user_repo, {"deploy/infer.yaml": DEPLOYMENT})
    done = _pre_commit(user_repo, tmp_path / "home", str(hooks_repo), "-v", command="try-repo")
    out = done.stdout
    assert done.returncode == 1, out
    check, _, rest = out.partition("dra-migrate fix")
    assert "dra-migrate check" in check and "Failed" in check
    assert "-            nvidia.com/gpu: 2" in check  # the diff of what would change
    assert "+        resourceClaimTemplateName: infer-gpu" in check
    fix, _, validate = rest.partition("dra-migrate validate")
    assert "files were modified by this hook" in fix  # the commit stops, as with formatters
    assert "Passed" in validate  # what fix wrote is valid DRA
    converted = (user_repo / "deploy" / "infer.yaml").read_text()
    assert "nvidia.com/gpu: " not in converted  # the toleration keeps the key
    assert "kind: ResourceClaimTemplate" in converted


def test_committing_a_converted_file_passes(
    user_repo: Path, hooks_repo: Path, pre_commit_home: Path
) -> None:
    _configure(user_repo, hooks_repo)
    _pre_commit(user_repo, pre_commit_home, command="install")
    _write(user_repo, {"deploy/infer.yaml": DEPLOYMENT})
    env = {**os.environ, "PRE_COMMIT_HOME": str(pre_commit_home), "PRE_COMMIT_COLOR": "never"}
    commit = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-m", "x"]
    refused = subprocess.run(commit, cwd=user_repo, capture_output=True, text=True, env=env)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "+        resourceClaimTemplateName: infer-gpu" in refused.stdout + refused.stderr
    assert len(_git(user_repo, "log", "--oneline").splitlines()) == 1  # nothing committed

    converted = subprocess.run(
        [sys.executable, "-m", "dra_migrate", "convert", "--write", "deploy"],
        cwd=user_repo,
        capture_output=True,
        env={**env, "PYTHONPATH": str(REPO)},
    )
    assert converted.returncode == 0, converted.stderr
    _git(user_repo, "add", "deploy/infer.yaml")
    done = subprocess.run(commit, cwd=user_repo, capture_output=True, text=True, env=env)
    hooks = done.stdout + done.stderr
    assert done.returncode == 0, hooks
    assert "dra-migrate check" in hooks and "Passed" in hooks


def test_excludes_apply_to_the_files_the_hook_is_given(
    user_repo: Path, hooks_repo: Path, pre_commit_home: Path
) -> None:
    _configure(user_repo, hooks_repo)
    _write(
        user_repo,
        {
            ".dra-migrate.yaml": "version: 1\nexclude:\n  - vendor/**\n",
            "vendor/upstream/infer.yaml": DEPLOYMENT,
        },
    )
    done = _pre_commit(user_repo, pre_commit_home, "dra-migrate-check", "-v")
    assert done.returncode == 0, done.stdout
    assert "Passed" in done.stdout
    assert "dra-migrate:" not in done.stdout  # a hook that passes prints nothing, even with -v


def test_cross_file_references_see_the_whole_repository(
    user_repo: Path, hooks_repo: Path, pre_commit_home: Path
) -> None:
    _configure(user_repo, hooks_repo)
    # the template is committed already; only the pod that uses it is staged
    _write(user_repo, {"dra/template.yaml": TEMPLATE})
    _git(user_repo, "commit", "-q", "-m", "template")
    _write(user_repo, {"apps/user.yaml": CLAIMING_POD})
    done = _pre_commit(user_repo, pre_commit_home, "dra-migrate-validate", "-v")
    assert done.returncode == 0, done.stdout
    assert "DRA318" not in done.stdout and "Passed" in done.stdout
    assert "file(s) checked" not in done.stdout  # a hook that passes prints nothing

    # a claim on a template that exists nowhere fails the commit (--fail-on warning)
    _write(user_repo, {"apps/user.yaml": CLAIMING_POD.replace("shared-gpu", "missing-gpu")})
    done = _pre_commit(user_repo, pre_commit_home, "dra-migrate-validate", "-v")
    assert done.returncode == 1, done.stdout
    assert "apps/user.yaml:9:32: DRA318" in done.stdout
    assert "1 file(s) checked" in done.stdout  # only the staged file is reported


KUSTOMIZATION = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"


@pytest.mark.parametrize("hook", ["dra-migrate-check", "dra-migrate-validate"])
def test_file_names_are_never_options(
    user_repo: Path, hooks_repo: Path, pre_commit_home: Path, hook: str
) -> None:
    """Staged files named like options stay file names: the hook's entry ends with --.
    Without it, ``--output=kustomization.yaml`` overwrote kustomization.yaml with the
    report and ``--exclude=*.yaml`` made the hook check nothing and pass."""
    _configure(user_repo, hooks_repo)
    _write(user_repo, {"kustomization.yaml": KUSTOMIZATION})
    _git(user_repo, "commit", "-q", "-m", "kustomization")
    # what each hook reports: a request left to migrate, a claim on a missing template
    text, code = (
        (DEPLOYMENT, "DRA401")
        if hook == "dra-migrate-check"
        else (CLAIMING_POD.replace("shared-gpu", "missing-gpu"), "DRA318")
    )
    names = ["--output=kustomization.yaml", "--exclude=*.yaml", "deploy/infer.yaml"]
    _write(user_repo, dict.fromkeys(names, text))
    done = _pre_commit(user_repo, pre_commit_home, hook, "-v")
    assert (user_repo / "kustomization.yaml").read_text() == KUSTOMIZATION
    for name in names:  # every staged file is checked
        assert f"{name}:" in done.stdout and f": {code} " in done.stdout, done.stdout
    if hook == "dra-migrate-check":
        assert done.returncode == 1, done.stdout
        assert "3 file(s) would be converted" in done.stdout
    else:
        assert "3 file(s) checked" in done.stdout, done.stdout


ROCM = """\
apiVersion: v1
kind: Pod
metadata:
  name: rocm-smoke-test
spec:
  containers:
  - name: rocm
    image: rocm/rocm-terminal:6.2
    resources:
      limits:
        amd.com/gpu: 1
"""
AMD_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.extended.amd.com
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.amd.com"
  extendedResourceName: amd.com/gpu
"""


def test_the_check_hook_with_strategy_bridge_passes_a_real_bridge(
    user_repo: Path, hooks_repo: Path, pre_commit_home: Path
) -> None:
    """args: [--strategy, bridge, --kube-version, "1.36", --]: a staged workload the bridge
    serves passes the hook unchanged (the driver's gpu.nvidia.com, or the repository's
    class for amd.com/gpu, read through --context); without a class it fails (DRA515)."""
    rev = _git(hooks_repo, "rev-parse", "HEAD").strip()
    args = '[--strategy, bridge, --kube-version, "1.36", --]'
    _write(
        user_repo,
        {
            ".pre-commit-config.yaml": (
                f"repos:\n- repo: {hooks_repo}\n  rev: {rev}\n  hooks:\n"
                f"  - id: dra-migrate-check\n    args: {args}\n"
            )
        },
    )
    _git(user_repo, "commit", "-q", "-m", "hooks")
    _write(user_repo, {"deploy/infer.yaml": DEPLOYMENT, "deploy/rocm.yaml": ROCM})
    failed = _pre_commit(user_repo, pre_commit_home, "dra-migrate-check", "-v")
    assert failed.returncode == 1, failed.stdout
    assert "deploy/infer.yaml:14:13: DRA514 info" in failed.stdout
    assert "deploy/rocm.yaml:11:9: DRA515 error" in failed.stdout
    _write(user_repo, {"platform/amd-class.yaml": AMD_CLASS})
    # committed alone: the workloads stay staged, and the hook reads the class (--context .)
    _git(user_repo, "commit", "-q", "-m", "amd.com/gpu's class", "--", "platform/amd-class.yaml")
    done = _pre_commit(user_repo, pre_commit_home, "dra-migrate-check", "-v")
    assert done.returncode == 0, done.stdout
    # a hook that passes prints nothing (PRE_COMMIT=1), -v or not: no finding, no summary
    assert "DRA51" not in done.stdout and "dra-migrate:" not in done.stdout, done.stdout
    assert (user_repo / "deploy" / "rocm.yaml").read_text() == ROCM  # left as it is
