"""The first hour of a new user (issue 40): usage errors that point at the mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

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
