"""What a new user meets on the command line (issue 27): paths that do not exist,
commands given nothing to do, configuration errors, quiet runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli_runner import invoke


@pytest.mark.parametrize(
    "args",
    [
        ["scan", "nope.yaml"],
        ["convert", "nope.yaml"],
        ["convert", "--check", ".", "nope.yaml"],
        ["validate", "nope.yaml"],
        ["report", "nope/"],
        ["deviceclasses", "nope.yaml"],
        ["inventory", "nope.yaml"],
    ],
)
def test_a_path_that_does_not_exist_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke(args)
    missing = next(a for a in args if a.startswith("nope"))
    assert done.exit_code == 2, done.output
    assert done.stderr == f"dra-migrate: error: {missing}: path does not exist\n"
    assert "DRA001" not in done.output and done.stdout == ""


def test_a_broken_link_is_still_a_file_that_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "gpu-job.yaml").symlink_to(tmp_path / "generated" / "gpu-job.yaml")
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "gpu-job.yaml"])
    assert done.exit_code == 123 and "gpu-job.yaml:1:1: DRA001" in done.stderr


def test_bare_inventory_says_what_to_give(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke(["inventory"])
    assert done.exit_code == 2
    assert "not both" not in done.stderr
    assert done.stderr.startswith("dra-migrate: error: nothing to read: give --cluster")
    assert "dump files of kubectl get pods,nodes" in done.stderr
    (tmp_path / "cluster.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    both = invoke(["inventory", "--cluster", "cluster.yaml"])
    assert both.exit_code == 2 and "not both" in both.stderr


def test_bare_deviceclasses_says_there_is_nothing_to_create_and_names_the_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke(["deviceclasses", "--whole-mapping"])
    assert done.exit_code == 0 and done.stdout == ""
    assert done.stderr.startswith(
        "dra-migrate: no DeviceClass to create: the mapping needs no class the drivers do "
        "not install; it uses the classes their drivers install: "
    )
    assert "gpu.nvidia.com (driver gpu.nvidia.com)" in done.stderr
    assert "mig.nvidia.com (driver gpu.nvidia.com)" in done.stderr
    assert invoke(["deviceclasses", "--whole-mapping", "--quiet"]).stderr == ""
    # a class to create: the YAML, and no such line
    made = invoke(["deviceclasses", "--whole-mapping", "--strategy", "bridge"])
    assert "kind: DeviceClass" in made.stdout and "no DeviceClass to create" not in made.stderr


# --- configuration errors: the path as given, the documented prefix, did you mean ---

TYPOS = [
    (
        "version: 1\nresorces:\n  - name: nvidia.com/gpu\n    deviceClass: gpu.nvidia.com\n",
        "2:1: invalid configuration at (top level): unknown key 'resorces': did you mean "
        "'resources'?",
    ),
    (
        "resources:\n  - name: nvidia.com/gpu\n    deviceClas: gpu.nvidia.com\n",
        "3:5: invalid configuration at resources.0: unknown key 'deviceClas': did you mean "
        "'deviceClass'?",
    ),
    (
        "resources:\n  - name: nvidia.com/gpu\n    deviceClass: gpu.nvidia.com\n    rules:\n"
        "      - whne: {namespaces: [ml]}\n        deviceClass: h100.nvidia.com\n",
        "5:9: invalid configuration at resources.0.rules.0: unknown key 'whne': did you mean "
        "'when'?",
    ),
    (
        "ignore:\n  - path: vendor/**\n    code: [DRA205]\n",
        "3:5: invalid configuration at ignore.0: unknown key 'code': did you mean 'codes'?",
    ),
    (
        "drivers:\n  gpu.example.com:\n    atributes: [model]\n",
        "3:5: invalid configuration at drivers.gpu.example.com: unknown key 'atributes': did "
        "you mean 'attributes'?",
    ),
]


@pytest.mark.parametrize(("text", "expected"), TYPOS)
def test_a_typo_of_a_known_key_gets_did_you_mean_with_the_path_as_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: str
) -> None:
    (tmp_path / ".git").mkdir()  # the configuration is found up to the repository root
    (tmp_path / ".dra-migrate.yaml").write_text(text)
    (tmp_path / "apps").mkdir()
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "apps"])
    assert done.exit_code == 2
    # relative, as docs/configuration.md shows it, after the prefix of every usage error
    assert done.stderr == f"dra-migrate: error: .dra-migrate.yaml:{expected}\n"


def test_a_given_configuration_is_shown_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "mapping.yaml").write_text("version: 1\nzzz: 1\n")
    monkeypatch.chdir(tmp_path)
    done = invoke(["scan", "--config", "ci/mapping.yaml", "."])
    assert done.exit_code == 2
    assert done.stderr.startswith(
        "dra-migrate: error: ci/mapping.yaml:2:1: invalid configuration at (top level): "
        "unknown key 'zzz' (the keys here: builtins, "
    )
    assert str(tmp_path) not in done.stderr


def test_the_documented_configuration_errors_are_what_the_cli_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import REPO

    doc = (REPO / "docs" / "configuration.md").read_text()
    shown = [line for line in doc.splitlines() if "invalid configuration at" in line]
    assert shown and all(
        line.startswith("dra-migrate: error: .dra-migrate.yaml:") for line in shown
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / ".dra-migrate.yaml").write_text("version: 1\nresorces: []\n")
    monkeypatch.chdir(tmp_path)
    printed = invoke(["validate", "."]).stderr.rstrip("\n")
    assert printed in shown


# --- --fail-on, and quiet when all is well ---------------------------------------------

CLAIMING_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: user
  namespace: ml
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: shared-gpus
  containers:
  - name: c
    image: registry.example.com/cuda:12
    resources:
      claims:
      - name: gpu
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: infer
spec:
  selector:
    matchLabels: {app: infer}
  template:
    metadata:
      labels: {app: infer}
    spec:
      containers:
      - name: server
        image: registry.example.com/infer:1
        resources:
          limits:
            nvidia.com/gpu: 1
"""

CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"


def test_fail_on_warning_fails_a_template_name_no_file_defines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pod.yaml").write_text(CLAIMING_POD)
    monkeypatch.chdir(tmp_path)
    default = invoke(["validate", "pod.yaml"])
    assert default.exit_code == 0 and "pod.yaml:9:32: DRA318 warning" in default.stdout
    strict = invoke(["validate", "--fail-on", "warning", "--context", ".", "--", "pod.yaml"])
    assert strict.exit_code == 1 and "pod.yaml:9:32: DRA318 warning" in strict.stdout
    assert (
        invoke(["validate", "--fail-on", "warning", "--external-templates", "pod.yaml"]).exit_code
        == 0
    )
    bad = invoke(["validate", "--fail-on", "fatal", "pod.yaml"])
    assert bad.exit_code == 2 and "invalid choice: 'fatal'" in bad.stderr


def test_fail_on_never_reports_only_but_unreadable_input_still_exits_123(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "infer.yaml").write_text(DEPLOYMENT)
    monkeypatch.chdir(tmp_path)
    assert invoke(["convert", "--check", "infer.yaml"]).exit_code == 1
    never = invoke(["convert", "--check", "--fail-on", "never", "infer.yaml"])
    assert never.exit_code == 0 and "infer.yaml:17:13: DRA401 error" in never.stderr
    (tmp_path / "broken.yaml").write_text(DEPLOYMENT.replace("{app: infer}", "{app: [infer}", 1))
    assert invoke(["validate", "--fail-on", "never", "broken.yaml"]).exit_code == 123
    assert invoke(["convert", "--fail-on", "never", "broken.yaml"]).exit_code == 123


def test_a_clean_check_prints_one_summary_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "settings.yaml").write_text(CONFIG_MAP)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--check", "settings.yaml"])
    assert done.exit_code == 0 and done.stdout == ""
    assert done.stderr == (
        "dra-migrate: 0 file(s) would be converted, 1 unchanged: nothing to do: no GPU "
        "extended resource is left to convert.\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["convert", "--check", "--diff", "--context", ".", "--", "settings.yaml"],
        ["convert", "--write", "--context", ".", "--", "settings.yaml"],
        ["validate", "--context", ".", "--fail-on", "warning", "--", "settings.yaml"],
    ],
)
def test_a_hook_that_passes_prints_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    (tmp_path / "settings.yaml").write_text(CONFIG_MAP)
    monkeypatch.chdir(tmp_path)
    outside = invoke(args)
    assert outside.exit_code == 0 and outside.output  # a summary outside a hook
    done = invoke(args, env={"PRE_COMMIT": "1"})
    assert (done.exit_code, done.stdout, done.stderr) == (0, "", "")


def test_a_hook_that_fails_or_writes_says_what_to_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "infer.yaml").write_text(DEPLOYMENT)
    (tmp_path / "pod.yaml").write_text(CLAIMING_POD)
    monkeypatch.chdir(tmp_path)
    hook = {"PRE_COMMIT": "1"}
    check = invoke(["convert", "--check", "--diff", "--", "infer.yaml"], env=hook)
    assert check.exit_code == 1 and "DRA401" in check.stderr and "+++ b/infer.yaml" in check.stdout
    assert "1 file(s) would be converted" in check.stderr
    validate = invoke(["validate", "--fail-on", "warning", "--", "pod.yaml"], env=hook)
    assert validate.exit_code == 1 and "DRA318" in validate.stdout
    fixed = invoke(["convert", "--write", "--", "infer.yaml"], env=hook)
    assert "1 file(s) converted" in fixed.stderr  # pre-commit fails it: files were modified


def test_a_passing_hook_still_writes_the_report_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "settings.yaml").write_text(CONFIG_MAP)
    monkeypatch.chdir(tmp_path)
    hook = {"PRE_COMMIT": "1"}
    done = invoke(["validate", "--format", "sarif", "-o", "out.sarif", "settings.yaml"], env=hook)
    assert (done.exit_code, done.output) == (0, "")
    assert '"version": "2.1.0"' in (tmp_path / "out.sarif").read_text()
    on_stdout = invoke(["validate", "--format", "json", "settings.yaml"], env=hook)
    assert '"summary"' in on_stdout.stdout  # a format on stdout is what was asked


def test_the_validate_hook_fails_on_warnings() -> None:
    import yaml

    from tests.conftest import REPO

    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    validate = hooks["dra-migrate-validate"]
    assert validate["entry"].split()[-2:] == ["--fail-on", "warning"]
    assert validate["args"] == ["--"]  # file names after it are never options
