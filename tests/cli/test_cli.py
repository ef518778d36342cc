"""The command line as users drive it: modes, stdin, exit codes, atomic writes, errors."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tests.helpers.cli_runner import invoke
from tests.helpers.invariants import TRAIN_JOB as _JOB
from tests.helpers.invariants import claim_template

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: infer
  namespace: ml
spec:
  template:
    spec:
      containers:
      - name: server
        image: vllm/vllm-openai:v0.6.0
        resources:
          limits:
            nvidia.com/gpu: 2  # two GPUs for tensor parallelism
"""

NO_GPU = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "infer.yaml").write_text(DEPLOYMENT)
    (tmp_path / "apps" / "settings.yaml").write_text(NO_GPU)
    return tmp_path


def test_default_mode_is_diff_and_writes_nothing(repo: Path) -> None:
    done = run_cli(["convert", "apps"], repo)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert out.startswith("--- a/apps/infer.yaml\n+++ b/apps/infer.yaml\n")
    assert "-            nvidia.com/gpu: 2  # two GPUs for tensor parallelism" in out
    # the comment stays with the count, now in the template (issue 27)
    assert "+          claims:\n+          - name: gpu\n" in out
    assert "+          count: 2  # two GPUs for tensor parallelism\n" in out
    assert "+kind: ResourceClaimTemplate" in out
    assert (repo / "apps" / "infer.yaml").read_text() == DEPLOYMENT


def test_diff_applies_with_git_apply(repo: Path) -> None:
    diff = run_cli(["convert", "--diff", "apps"], repo).stdout
    converted = run_cli(["convert", "--output-dir", "out", "apps"], repo)
    assert converted.returncode == 0
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "apply"], cwd=repo, input=diff, check=True)
    assert (repo / "apps" / "infer.yaml").read_bytes() == (
        repo / "out" / "apps" / "infer.yaml"
    ).read_bytes()


def test_check_exits_1_and_writes_nothing(repo: Path) -> None:
    done = run_cli(["convert", "--check", "apps"], repo)
    assert done.returncode == 1
    assert done.stdout == b""
    assert (repo / "apps" / "infer.yaml").read_text() == DEPLOYMENT
    assert b"1 file(s) would be converted" in done.stderr


def test_check_passes_on_converted_repo(repo: Path) -> None:
    assert run_cli(["convert", "--write", "apps"], repo).returncode == 0
    done = run_cli(["convert", "--check", "apps"], repo)
    assert done.returncode == 0, done.stderr


def test_write_is_atomic_and_keeps_mode(repo: Path) -> None:
    target = repo / "apps" / "infer.yaml"
    os.chmod(target, 0o640)
    inode_before = target.stat().st_ino
    done = run_cli(["convert", "--write", "apps"], repo)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.stat().st_ino != inode_before  # replaced by rename, not rewritten in place
    assert "resourceClaimTemplateName: infer-gpu" in target.read_text()
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".")]
    assert (repo / "apps" / "settings.yaml").read_text() == NO_GPU


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_a_new_output_file_gets_the_mode_open_would_give(repo: Path, umask: int) -> None:
    """--output writes through a temporary file (0600): the report it leaves is made
    as open() would make it under the user's umask, not private by accident."""
    import sys

    subprocess.run(
        [
            sys.executable,
            "-m",
            "dra_migrate",
            "scan",
            "--format",
            "json",
            "--output",
            "r.json",
            "apps",
        ],
        cwd=repo,
        umask=umask,
        capture_output=True,
        check=True,
    )
    assert stat.S_IMODE((repo / "r.json").stat().st_mode) == 0o666 & ~umask


def test_output_dir_keeps_layout_and_sources(repo: Path) -> None:
    done = run_cli(["convert", "--output-dir", "converted", "."], repo)
    assert done.returncode == 0, done.stderr
    assert (repo / "converted" / "apps" / "infer.yaml").is_file()
    assert not (repo / "converted" / "apps" / "settings.yaml").exists()
    assert (repo / "apps" / "infer.yaml").read_text() == DEPLOYMENT


def test_stdin_stream_round_trip(repo: Path) -> None:
    stream = (NO_GPU + "---\n" + DEPLOYMENT).encode()
    done = run_cli(["convert", "-"], repo, stdin=stream)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert out.startswith(NO_GPU + "---\n")
    assert out.count("\n---\n") == 2
    unchanged = run_cli(["convert", "-"], repo, stdin=NO_GPU.encode())
    assert unchanged.stdout == NO_GPU.encode()


def test_stdin_failure_prints_nothing_on_stdout(repo: Path) -> None:
    bad = DEPLOYMENT.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 500m")
    done = run_cli(["convert", "-", "--stdin-filename", "rendered.yaml"], repo, stdin=bad.encode())
    assert done.returncode == 1  # an invalid manifest, not unreadable input
    assert done.stdout == b""
    assert b"rendered.yaml:14:29: DRA101 error:" in done.stderr


def test_bad_input_is_a_finding_never_a_traceback(repo: Path) -> None:
    (repo / "apps" / "broken.yaml").write_text("kind: Pod\nspec: [\n  nvidia.com/gpu: 1\n")
    (repo / "apps" / "latin1.yaml").write_bytes("nvidia.com/gpu: 1 # caf\xe9\n".encode("latin-1"))
    done = run_cli(["convert", "--write", "apps"], repo)
    assert done.returncode == 123
    err = done.stderr.decode()
    assert "Traceback" not in err
    assert "apps/broken.yaml:" in err and "DRA004" in err
    assert "apps/latin1.yaml:1:24: DRA002" in err
    # the good file was still converted
    assert "claims:" in (repo / "apps" / "infer.yaml").read_text()


def test_scan_json_shape(repo: Path) -> None:
    done = run_cli(["scan", "--format", "json", "."], repo)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["version"] == 1
    assert data["summary"]["requests"] == 1
    [item] = data["inventory"]
    assert item == {
        "path": "apps/infer.yaml",
        "line": 14,
        "col": 13,
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": "ml",
        "name": "infer",
        "podPath": "spec.template.spec",
        "container": "server",
        "role": "app",
        "resource": "nvidia.com/gpu",
        "count": 2,
        "value": "2",
        "deviceClass": "gpu.nvidia.com",
        "kept": None,  # convert rewrites it
        "state": "converted",
    }


def test_scan_text_table(repo: Path) -> None:
    out = run_cli(["scan", "apps"], repo).stdout.decode()
    assert "apps/infer.yaml:14:13" in out and "Deployment/ml/infer" in out
    assert "gpu.nvidia.com" in out


def test_scan_exit_0_even_with_error_findings(repo: Path) -> None:
    (repo / "apps" / "quota.yaml").write_text(
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\nspec:\n  hard:\n"
        "    requests.nvidia.com/gpu: 4\n"
    )
    done = run_cli(["scan", "apps"], repo)
    assert done.returncode == 0
    assert b"DRA206" in done.stdout


def test_usage_errors_exit_2(repo: Path) -> None:
    assert run_cli(["convert"], repo).returncode == 2
    assert run_cli(["convert", "-", "apps"], repo).returncode == 2
    assert run_cli(["convert", "--target", "v2", "apps"], repo).returncode == 2
    done = run_cli(["convert", "--kube-version", "1.30", "apps"], repo)
    assert done.returncode == 2 and b"1.30" in done.stderr
    done = run_cli(["convert", "--target", "v1", "--kube-version", "1.33", "apps"], repo)
    assert done.returncode == 2


def test_kube_version_picks_target_and_warns(repo: Path) -> None:
    done = run_cli(["convert", "--kube-version", "1.34", "apps"], repo)
    assert b"apiVersion: resource.k8s.io/v1\n" in done.stdout
    assert b"exactly:" in done.stdout
    done = run_cli(["convert", "--kube-version", "1.33", "apps"], repo)
    assert b"resource.k8s.io/v1beta2" in done.stdout
    assert b"DRA214" in done.stderr and b"runtime-config" in done.stderr
    done = run_cli(["convert", "--target", "v1beta1", "--kube-version", "1.36", "apps"], repo)
    assert b"deprecated" in done.stderr


def test_config_errors_point_at_the_line(repo: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)  # found up to the repo root
    (repo / ".dra-migrate.yaml").write_text(
        "resources:\n  - name: nvidia.com/gpu\n    deviceClass: Not_A_Name\n"
    )
    done = run_cli(["convert", "apps"], repo)
    assert done.returncode == 2
    assert (
        b".dra-migrate.yaml:3:18: invalid configuration at resources.0.deviceClass" in done.stderr
    )


def test_config_is_found_upward(repo: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)  # up to the repository root
    (repo / ".dra-migrate.yaml").write_text(
        "resources:\n  - name: nvidia.com/gpu\n    deviceClass: h100.nvidia.com\n"
    )
    done = run_cli(["convert", "apps/infer.yaml"], repo)
    assert b"deviceClassName: h100.nvidia.com" in done.stdout


def test_gitignore_and_exclude(repo: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / ".gitignore").write_text("ignored/\n")
    (repo / "ignored").mkdir()
    (repo / "ignored" / "x.yaml").write_text(DEPLOYMENT)
    (repo / "skip").mkdir()
    (repo / "skip" / "y.yaml").write_text(DEPLOYMENT)
    out = run_cli(["scan", "--format", "json", "--exclude", "skip/", "."], repo).stdout
    paths = {i["path"] for i in json.loads(out)["inventory"]}
    assert paths == {"apps/infer.yaml"}


def test_version_and_help() -> None:
    assert invoke(["--version"]).output.startswith("dra-migrate, version ")
    overview = invoke(["--help"])
    assert overview.exit_code == 0
    for command in ("scan", "convert", "validate", "report", "deviceclasses", "inventory"):
        assert f"\n  {command} " in overview.stdout
        helped = invoke([command, "--help"])  # click's layout
        assert helped.exit_code == 0 and f"Usage: dra-migrate {command}" in helped.stdout
    assert invoke([]).exit_code == 2  # a command is needed: the overview goes to stderr


def test_options_and_paths_mix_in_any_order(repo: Path) -> None:
    # pre-commit appends file names after the hook's args; users put options anywhere
    first = run_cli(["scan", "--format", "json", "-j", "1", "apps"], repo)
    mixed = run_cli(["scan", "apps", "--format", "json", "--jobs=1"], repo)
    split = run_cli(
        ["scan", "apps/infer.yaml", "-j1", "--format", "json", "apps/settings.yaml"], repo
    )
    assert first.returncode == mixed.returncode == split.returncode == 0
    assert first.stdout == mixed.stdout
    assert {i["path"] for i in json.loads(split.stdout)["inventory"]} == {"apps/infer.yaml"}
    dashed = run_cli(["scan", "--format", "json", "--", "apps"], repo)
    assert dashed.stdout == first.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["nosuch", "apps"], b"no such command 'nosuch'"),
        (["scan", "--form", "json", "apps"], b"unrecognized arguments: --form"),  # no abbreviation
        (["scan", "--jobs", "0", "apps"], b"argument --jobs/-j: 0 is lower than 1"),
        (["scan", "--jobs", "two", "apps"], b"argument --jobs/-j: 'two' is not a valid int"),
        (["scan", "--format", "yaml", "apps"], b"argument --format: invalid choice: 'yaml'"),
        (["scan", "--context", "missing", "apps"], b"argument --context: missing does not exist"),
        (["scan", "--config", "apps", "apps"], b"argument --config: apps is a folder, not a file"),
        (
            ["scan", "--output", "apps", "apps"],
            b"argument --output/-o: apps is a folder, not a file",
        ),
        (["convert", "--output-dir", "apps/infer.yaml", "apps"], b"is a file, not a folder"),
        (["validate", "--request-timeout", "0", "apps"], b"0 is lower than 0.1"),
        (["convert", "--target"], b"argument --target: expected one argument"),
    ],
)
def test_the_parser_refuses_bad_options_with_status_2(
    repo: Path, args: list[str], said: bytes
) -> None:
    done = run_cli(args, repo)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr, done.stderr
    assert b"Traceback" not in done.stderr


def test_scan_markdown_for_pull_requests(repo: Path) -> None:
    out = run_cli(["scan", "--format", "markdown", "apps"], repo).stdout.decode()
    assert out.startswith("### dra-migrate scan\n")
    assert "| `apps/infer.yaml:14` | Deployment/ml/infer | `spec.template.spec` | server |" in out


def test_patch_file_given_alone_is_known_from_its_kustomization(tmp_path: Path) -> None:
    """pre-commit passes changed files one by one: the overlay's kustomization
    is found in the patch's folder and reported, not converted."""
    (tmp_path / "prod").mkdir()
    (tmp_path / "prod" / "kustomization.yaml").write_text(
        "resources:\n- ../base\npatches:\n- path: gpu.yaml\n"
    )
    patch = DEPLOYMENT.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 4")
    (tmp_path / "prod" / "gpu.yaml").write_text(patch)
    done = run_cli(["convert", "--write", "prod/gpu.yaml"], tmp_path)
    assert done.returncode == 1
    assert b"prod/gpu.yaml:14:13: DRA202" in done.stderr
    assert b"applied by prod/kustomization.yaml" in done.stderr
    assert (tmp_path / "prod" / "gpu.yaml").read_text() == patch


def test_in_a_work_tree_the_kustomizations_are_those_git_lists(tmp_path: Path) -> None:
    """Inside a git work tree the layout is read from the kustomizations git tracks or
    would add, the files of the run: an untracked one applies, a .gitignored one (not
    part of the repository, CI never sees it) does not."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "prod" / "deep").mkdir(parents=True)
    (tmp_path / "prod" / "kustomization.yaml").write_text(
        "resources:\n- ../base\npatches:\n- path: deep/gpu.yaml\n"
    )
    (tmp_path / "prod" / "deep" / "gpu.yaml").write_text(DEPLOYMENT)
    done = run_cli(["scan", "prod/deep/gpu.yaml"], tmp_path)
    assert b"DRA202" in done.stdout, done.stdout.decode()
    (tmp_path / ".gitignore").write_text("kustomization.yaml\n")
    done = run_cli(["scan", "prod/deep/gpu.yaml"], tmp_path)
    # a plain manifest now: its GPU request is listed for conversion
    assert b"DRA202" not in done.stdout, done.stdout.decode()
    assert b"prod/deep/gpu.yaml:14:13  Deployment/ml/infer" in done.stdout


def test_generated_names_never_take_a_template_defined_elsewhere(repo: Path) -> None:
    (repo / "apps" / "handmade.yaml").write_text(
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\n"
        "metadata: {name: infer-gpu, namespace: ml}\n"
        "spec:\n  spec:\n    devices:\n      requests:\n"
        "      - {name: x, deviceClassName: gpu.nvidia.com, count: 8}\n"
    )
    done = run_cli(["convert", "apps"], repo)
    out = done.stdout.decode()
    assert "resourceClaimTemplateName: infer-gpu-" in out
    assert "resourceClaimTemplateName: infer-gpu\n" not in out
    assert b"DRA210" in done.stderr


def test_conflicting_modes_are_usage_errors(repo: Path) -> None:
    for flags in (["--check", "--write"], ["--diff", "--write"], ["--write", "--output-dir", "o"]):
        done = run_cli(["convert", *flags, "apps"], repo)
        assert done.returncode == 2, flags
    assert (repo / "apps" / "infer.yaml").read_text() == DEPLOYMENT


def test_write_through_a_symlink(repo: Path) -> None:
    real = repo / "apps" / "infer.yaml"
    (repo / "link.yaml").symlink_to(real)
    assert run_cli(["convert", "--write", "link.yaml"], repo).returncode == 0
    assert (repo / "link.yaml").is_symlink()
    assert "resourceClaimTemplateName: infer-gpu" in real.read_text()


def test_a_yaml_file_may_start_with_a_flow_mapping(repo: Path) -> None:
    flow = (
        "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: "
        "[{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}}\n"
    )
    (repo / "flow.yaml").write_text(flow)
    done = run_cli(["convert", "--write", "flow.yaml"], repo)
    assert done.returncode == 0, done.stderr
    assert "\n---\n" in (repo / "flow.yaml").read_text()


# --- --context: the rest of the repository is read for references, not converted ------


_DEFINED = claim_template("train-gpu")


@pytest.mark.parametrize("in_git", [True, False], ids=["git work tree", "plain folder"])
def test_context_names_avoid_templates_defined_in_untouched_files(
    tmp_path: Path, in_git: bool
) -> None:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "job.yaml").write_text(_JOB)
    (tmp_path / "apps" / "other.yaml").write_text(_JOB.replace("train", "other"))
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "templates.yaml").write_text(_DEFINED)
    if in_git:
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "x"]):
            subprocess.run([*git, *args], cwd=tmp_path, check=True)
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = invoke(["convert", "--check", "--diff", "--context", ".", "apps/job.yaml"])
    finally:
        os.chdir(old)
    assert result.exit_code == 1, result.output
    # the name the staged file would take is defined elsewhere: another is generated
    assert "resourceClaimTemplateName: train-gpu-" in result.stdout
    assert "DRA210" in result.stderr
    # only the staged file is reported (and the other GPU file is not converted)
    assert "other.yaml" not in result.stdout + result.stderr


def test_a_reader_that_closes_the_pipe_ends_the_run_quietly(tmp_path: Path) -> None:
    """``helm template ... | dra-migrate convert - | head -1``: no "Broken pipe" line
    and no traceback, status 141 (128 + SIGPIPE) as git and grep end. The stream is
    many times what a pipe holds, so the run meets the closed pipe while it writes."""
    stream = tmp_path / "stream.yaml"
    document = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  k: v\n"
    stream.write_text("---\n".join(document.format(i=i) for i in range(20_000)))
    with stream.open("rb") as stdin:
        done = subprocess.Popen(
            [sys.executable, "-m", "dra_migrate", "convert", "-"],
            cwd=tmp_path,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert done.stdout is not None and done.stderr is not None
        assert done.stdout.readline() == b"apiVersion: v1\n"
        done.stdout.close()
        err = done.stderr.read().decode()
        assert done.wait(timeout=120) == 141
    assert "Broken pipe" not in err and "Traceback" not in err and "error" not in err


def test_write_with_stdin_is_a_usage_error(repo: Path) -> None:
    """``convert --write -``: there is no file to write (the stream goes to stdout)."""
    done = run_cli(["convert", "--write", "-"], repo, stdin=DEPLOYMENT.encode())
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"--write needs paths" in done.stderr


@pytest.mark.parametrize(
    ("args", "step"),
    [
        (["convert", "-"], "review the converted stream on stdout"),
        (["convert", "--check", "-"], "run dra-migrate convert - without --check"),
    ],
)
def test_a_stream_ends_with_a_next_step_that_applies_to_a_stream(
    repo: Path, args: list[str], step: str
) -> None:
    """``helm template ... | convert -`` printed YAML, not a diff: the next step says
    what to do with a stream, never ``convert --write``."""
    done = run_cli(args, repo, stdin=DEPLOYMENT.encode())
    last = done.stderr.decode().splitlines()[-1]
    assert last.startswith("dra-migrate: next: " + step), last
    assert "--write" not in last


def test_scan_json_says_what_keeps_a_request_on_the_device_plugin(tmp_path: Path) -> None:
    """inventory[].kept: the code of what keeps a request on the device plugin, as the
    text report's held lines say it (an ignore of DRA401 here), null where convert
    rewrites it; the report's JSON schema holds the field."""
    import jsonschema

    held = DEPLOYMENT.replace("  name: infer\n", "  name: kept  # dra-migrate: ignore[DRA401]\n")
    (tmp_path / "held.yaml").write_text(held)
    (tmp_path / "infer.yaml").write_text(DEPLOYMENT)
    done = run_cli(["scan", "--format", "json", "."], tmp_path)
    data = json.loads(done.stdout)
    assert sorted((i["name"], i["kept"]) for i in data["inventory"]) == [
        ("infer", None),
        ("kept", "DRA401"),
    ]
    schema = json.loads((REPO / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(data, schema)
    text = run_cli(["convert", "--check", "held.yaml"], tmp_path).stderr.decode()
    assert "held: held.yaml: Deployment ml/kept (DRA401)" in text
