"""scan's results kept by content in the user's cache folder (``pipeline/kept.py``): a
warm run says byte for byte what a cold one says, parses only what changed, and
anything it cannot trust is computed again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dra_migrate.pipeline import one_file
from tests.cli.test_cli import DEPLOYMENT
from tests.helpers.cli_runner import invoke

IGNORED = DEPLOYMENT.replace("  name: infer\n", "  name: kept  # dra-migrate: ignore[DRA401]\n")
BROKEN = "apiVersion: v1\nkind: Pod\nspec: {containers: [\n  nvidia.com/gpu: 1\n"
CHART_TEMPLATE = DEPLOYMENT.replace("name: infer", "name: {{ .Release.Name }}")
JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.0
        resources:
          limits:
            nvidia.com/gpu: 8
"""
PATCH = """\
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
        resources:
          limits:
            nvidia.com/gpu: 4
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Files of every kind scan reports, a kustomize base its overlay patches, and an
    empty cache folder of the test's own."""
    root = tmp_path / "repo"
    files = {
        "apps/infer.yaml": DEPLOYMENT,
        "apps/kept.yaml": IGNORED,
        "apps/train.json": json.dumps({"apiVersion": "v1", "kind": "List", "items": []}),
        "apps/job.yaml": JOB,
        "apps/broken.yaml": BROKEN,
        "charts/llm/Chart.yaml": "apiVersion: v2\nname: llm\nversion: 0.1.0\n",
        "charts/llm/values.yaml": "resources:\n  limits:\n    nvidia.com/gpu: 1\n",
        "charts/llm/templates/deployment.yaml": CHART_TEMPLATE,
        "base/deployment.yaml": DEPLOYMENT.replace("name: infer", "name: based"),
        "base/kustomization.yaml": "resources: [deployment.yaml]\n",
        "overlay/kustomization.yaml": "resources: [../base]\npatches:\n  - path: gpu.yaml\n",
        "overlay/gpu.yaml": PATCH.replace("name: infer", "name: based"),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    monkeypatch.chdir(root)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return root


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the file stage is run on (``many_files._map`` imports it when called)."""
    seen: list[str] = []
    real = one_file.process_job

    def counted(job: one_file.Job, settings: object) -> object:
        seen.append(job.display)
        return real(job, settings)  # type: ignore[arg-type]

    monkeypatch.setattr(one_file, "process_job", counted)
    return seen


def _scan(*args: str) -> tuple[int, bytes, bytes]:
    done = invoke(["scan", "-j", "1", *args, "."])
    assert done.exception is None, done.exception
    return done.exit_code, done.stdout_bytes, done.stderr_bytes


def _kept_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "dra-migrate").glob("scan-results-*.json"))


def test_a_warm_scan_says_what_a_cold_one_says_and_parses_only_the_base(
    repo: Path, parsed: list[str], tmp_path: Path
) -> None:
    import shutil

    text = _scan()  # cold: every file with a GPU request is parsed
    assert len(parsed) == 8
    assert len(_kept_files(tmp_path)) == 1
    parsed.clear()
    # warm, in another format (what is kept is the file stage's result, not a rendering):
    # only the base an overlay patches is planned again (its result holds the converted
    # text the overlay's plan reads)
    warm_json = _scan("--format", "json")
    assert parsed == ["base/deployment.yaml"]
    shutil.rmtree(tmp_path / "cache")
    parsed.clear()
    cold = [text, _scan("--format", "json")]
    assert len(parsed) == 8
    parsed.clear()
    warm = [_scan(), warm_json]
    assert parsed == ["base/deployment.yaml"]
    assert warm == cold  # exit status, stdout and stderr, byte for byte
    files = {f["path"]: f["status"] for f in json.loads(cold[1][1])["files"]}
    assert files["apps/broken.yaml"] == "failed"
    # a chart template (its containers: items at the key's indent): a template edit
    assert files["charts/llm/templates/deployment.yaml"] == "changed"
    assert files["apps/infer.yaml"] == "changed"


def test_a_changed_file_and_a_changed_mapping_are_parsed_again(
    repo: Path, parsed: list[str]
) -> None:
    _scan("--format", "json")
    (repo / "apps/job.yaml").write_text(JOB.replace("gpu: 8", "gpu: 4"))
    parsed.clear()
    _code, out, _err = _scan("--format", "json")
    assert sorted(parsed) == ["apps/job.yaml", "base/deployment.yaml"]
    counts = {row["name"]: row["count"] for row in json.loads(out)["inventory"]}
    assert counts["train"] == 4  # not the 8 kept for the file's old bytes
    # another mapping: every result was computed with the old one
    (repo / ".dra-migrate.yaml").write_text(
        "version: 1\nresources:\n  - name: nvidia.com/gpu\n    deviceClass: gpu.example.com\n"
    )
    parsed.clear()
    _code, out, _err = _scan("--format", "json")
    assert len(parsed) == 9  # every file again, and the configuration (it names the GPU)
    classes = {row["deviceClass"] for row in json.loads(out)["inventory"] if row["deviceClass"]}
    assert classes == {"gpu.example.com"}


def test_what_the_cache_holds_is_never_trusted_blindly(
    repo: Path, parsed: list[str], tmp_path: Path
) -> None:
    """A damaged kept file, an entry that is not a result, a result of the right shape
    under another stamp: each is a miss, computed again, and the report is the same."""
    first = _scan("--format", "json")
    [kept] = _kept_files(tmp_path)
    held = json.loads(kept.read_text())
    entries = held["value"]
    assert len(entries) == 7  # every file with a GPU request but the base

    def rewrite(value: object) -> None:
        kept.write_text(json.dumps(value))
        os.chmod(kept, 0o600)

    for damaged in (
        {**held, "value": {key: {"result": 1, "original": False} for key in entries}},
        {**held, "value": {key: {"result": {"list": []}, "original": True} for key in entries}},
        {**held, "stamp": "another version of the code"},
        "not even a kept file",
    ):
        rewrite(damaged)
        parsed.clear()
        assert _scan("--format", "json") == first
        assert len(parsed) == 8, damaged
    # a kept file another user could write is never read
    rewrite(held)
    os.chmod(kept, 0o644)
    parsed.clear()
    assert _scan("--format", "json") == first
    assert len(parsed) == 8


def test_convert_keeps_no_result(repo: Path, tmp_path: Path) -> None:
    """A run that writes (convert, and its --check) checks what it writes on every run."""
    invoke(["convert", "--check", "-j", "1", "."])
    assert _kept_files(tmp_path) == []


def test_every_field_of_a_kept_record_is_kept() -> None:
    """The records are kept field by field, each an argument of its class: a field
    made by the class itself (``init=False``) would be lost on the way back."""
    import dataclasses

    from dra_migrate.pipeline import kept

    for cls in kept._RECORDS.values():
        fields = dataclasses.fields(cls)
        assert all(f.init for f in fields), cls
        assert kept._FIELDS[cls] == tuple(f.name for f in fields)
