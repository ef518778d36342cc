"""The first hour of a new user (issue 40): usage errors that point at the mistake."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.cli_runner import invoke

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
            nvidia.com/gpu: 1
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "infer.yaml").write_text(DEPLOYMENT)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("command", "fmt"),
    [
        (["report", "."], "json"),
        (["scan", "."], "json"),
        (["validate", "."], "sarif"),
        (["deviceclasses", "."], "yaml"),
        (["report", "."], "md"),
    ],
)
def test_a_format_given_to_o_is_a_usage_error_that_names_format(
    repo: Path, command: list[str], fmt: str
) -> None:
    done = invoke([*command, "-o", fmt])
    assert done.exit_code == 2, done.output
    assert "did you mean --format" in done.stderr
    assert not (repo / fmt).exists()  # never a file named after the format


def test_a_file_named_like_a_format_is_written_when_spelled_as_a_path(repo: Path) -> None:
    done = invoke(["report", ".", "-o", "./json", "--format", "json"])
    assert done.exit_code == 0, done.output
    assert (repo / "json").read_text().startswith("{")


def test_output_into_a_missing_folder_is_refused_and_nothing_is_created(repo: Path) -> None:
    done = invoke(["report", ".", "--format", "html", "-o", "missing/dir/plan.html"])
    assert done.exit_code == 2, done.output
    assert "missing/dir does not exist" in done.stderr
    assert not (repo / "missing").exists()


def _configure(repo: Path, selector: str, drivers: str = "") -> None:
    (repo / ".dra-migrate.yaml").write_text(
        "resources:\n"
        "- name: nvidia.com/gpu\n"
        "  deviceClass: gpu.nvidia.com\n"
        "  rules:\n"
        "  - when: {namespaces: [ml]}\n"
        "    selectors:\n"
        f"    - {selector}\n" + drivers
    )


@pytest.mark.parametrize("command", ["convert", "scan", "validate", "report"])
def test_a_selector_on_a_name_the_driver_does_not_publish_fails_at_the_config_line(
    repo: Path, command: str
) -> None:
    _configure(repo, "device.attributes['gpu.nvidia.com'].migProfile == '1g.10gb'")
    done = invoke([command, "."])
    assert done.exit_code == 2, done.output
    assert ".dra-migrate.yaml:7:7: invalid configuration at resources.0.rules.0.selectors.0" in (
        done.stderr
    )
    assert "migProfile" in done.stderr and "use profile" in done.stderr  # what it publishes
    assert "DRA901" not in done.output  # never reported against the manifests


def test_a_capacity_looked_up_as_an_attribute_fails_at_the_config_line(repo: Path) -> None:
    _configure(repo, "device.attributes['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0")
    done = invoke(["convert", "."])
    assert done.exit_code == 2, done.output
    assert ".dra-migrate.yaml:7:7:" in done.stderr


def test_a_name_the_configuration_declares_for_its_driver_is_accepted(repo: Path) -> None:
    _configure(
        repo,
        "device.attributes['gpu.example.com'].tier == 'gold'",
        "drivers:\n  gpu.example.com: {attributes: [tier]}\n",
    )
    assert invoke(["scan", "."]).exit_code == 0


SGR = re.compile(r"\x1b\[[0-9;]*m")


def test_convert_summary_wraps_at_spaces_on_a_terminal(repo: Path) -> None:
    plain = invoke(["convert", "--color", "never", "."])
    laid = invoke(["convert", "--color", "always", "."], env={"COLUMNS": "50"})
    summary = [line for line in plain.stderr.splitlines() if line.startswith("dra-migrate:")]
    assert max(len(line) for line in summary) > 50  # there is something to wrap
    wrapped = SGR.sub("", laid.stderr).splitlines()
    tail = wrapped[-len(summary) * 3 :]
    assert all(len(line) <= 50 for line in tail), tail
    # every word whole: the wrapped text is the plain text, re-spaced
    assert " ".join(" ".join(tail).split()).endswith(" ".join(" ".join(summary).split()))


def test_the_diff_is_coloured_on_request_and_plain_in_a_pipe(repo: Path) -> None:
    plain = invoke(["convert", "."])  # CliRunner's stdout is no terminal: as git apply reads
    assert "\x1b[" not in plain.stdout
    painted = invoke(["convert", "--color", "always", "."])
    assert "\x1b[32m+          claims:\x1b[m" in painted.stdout
    assert "\x1b[31m-            nvidia.com/gpu: 1\x1b[m" in painted.stdout
    assert "\x1b[1m--- a/infer.yaml\x1b[m" in painted.stdout
    assert SGR.sub("", painted.stdout) == plain.stdout  # the text itself unchanged
    never = invoke(["convert", "--color", "auto", "."], env={"NO_COLOR": "1"})
    assert "\x1b[" not in never.stdout


@given(st.lists(st.sampled_from(["-- x", "++ y", " z", "-", "+", "--- a", "+++ b"]), max_size=8))
def test_a_painted_diff_is_the_diff_and_counts_its_hunks(body: list[str]) -> None:
    from dra_migrate.report.terminal import paint_diff

    removed = sum(1 for line in body if not line.startswith("+"))
    added = sum(1 for line in body if not line.startswith("-"))
    hunk = [line if line[:1] in "+-" else " " + line for line in body]
    diff = f"--- a/f\n+++ b/f\n@@ -1,{removed} +1,{added} @@\n" + "".join(
        line + "\n" for line in hunk
    )
    painted = paint_diff(diff)
    assert SGR.sub("", painted) == diff
    for line in painted.splitlines()[3:]:  # inside the hunk: never a file header's bold
        assert not line.startswith("\x1b[1m")


def test_deviceclasses_needs_a_path_as_every_command_or_says_whole_mapping(repo: Path) -> None:
    done = invoke(["deviceclasses"])
    assert done.exit_code == 2
    assert "no path given" in done.stderr and "--whole-mapping" in done.stderr
    # with the path: what the repository asks for (NVIDIA only), not every vendor
    asked = invoke(["deviceclasses", "--strategy", "bridge", "--kube-version", "1.36", "."])
    whole = invoke(["deviceclasses", "--whole-mapping", "--strategy", "bridge"])
    assert asked.exit_code == whole.exit_code == 0, asked.output + whole.output
    assert "amd.com" not in asked.stdout and "amd.com" in whole.stdout
    assert invoke(["deviceclasses", "--whole-mapping", "."]).exit_code == 2


# the second rule names a real product that no workload selects (a misspelled one is a
# configuration error: tests/cli/test_product_names.py)
RULE_ON_A_TYPO = """\
resources:
- name: nvidia.com/gpu
  deviceClass: gpu.nvidia.com
  rules:
  - when: {namespaces: [ml]}
    selectors: ["device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')"]
  - when:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    deviceClass: h100.nvidia.com
"""


@pytest.mark.parametrize("command", ["scan", "convert", "report"])
def test_a_rule_that_matches_no_workload_of_the_run_says_so(repo: Path, command: str) -> None:
    (repo / ".dra-migrate.yaml").write_text(RULE_ON_A_TYPO)
    done = invoke([command, "."])
    said = [line for line in done.output.splitlines() if "DRA532" in line]
    assert len(said) == 1, done.output  # the first rule matches Deployment ml/infer
    assert said[0].startswith(".dra-migrate.yaml:7:5: DRA532 info: rule 2 of nvidia.com/gpu")


def test_a_run_that_reads_part_of_the_repository_says_nothing_of_unused_rules(
    repo: Path,
) -> None:
    (repo / ".dra-migrate.yaml").write_text(RULE_ON_A_TYPO)
    (repo / "sub").mkdir()
    (repo / "sub" / "other.yaml").write_text(DEPLOYMENT.replace("namespace: ml", "namespace: x"))
    for args in (["scan", "sub"], ["scan", "sub/other.yaml"], ["scan", "--context", ".", "sub"]):
        assert "DRA532" not in invoke(args).output, args


@pytest.mark.parametrize(
    ("when", "said"),
    [
        (
            "nodeSelector: {nvidia.com/gpu.product: [NVIDIA H100 80GB HBM3]}",
            "did you mean 'NVIDIA-H100-80GB-HBM3'?",
        ),
        ("labels: {team: a b c d}", "did you mean 'a-b-c-d'?"),
        ("labels: {'bad key!': x}", "'bad key!' is not a label key"),
    ],
)
def test_rule_values_no_label_can_hold_fail_at_the_config_line(
    repo: Path, when: str, said: str
) -> None:
    (repo / ".dra-migrate.yaml").write_text(
        "resources:\n- name: nvidia.com/gpu\n  deviceClass: gpu.nvidia.com\n  rules:\n"
        f"  - when: {{{when}}}\n    deviceClass: h100.nvidia.com\n"
    )
    done = invoke(["scan", "."])
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith("dra-migrate: error: .dra-migrate.yaml:5:")
    assert said in done.stderr
