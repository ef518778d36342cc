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
