"""The reader through the CLI: every reader applies Kubernetes' limits, and what
Kubernetes resolves (merge keys) is what the commands see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers.cli_runner import invoke
from tests.manifests.test_load import ALIAS_BOMB

POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
    - name: c
      image: x
      resources:
        limits: {<<: &gpulim {nvidia.com/gpu: 1}, memory: 1Gi}
"""
CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: t
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly: {deviceClassName: gpu.nvidia.com}
"""


def _invoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    result = invoke(args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_gpu_limit_through_a_merge_key_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kubernetes resolves ``<<``: the pod asks for a GPU. scan counts it; convert
    refuses to edit the shared block (DRA008) instead of missing it."""
    (tmp_path / "pod.yaml").write_text(POD)
    code, out = _invoke(tmp_path, monkeypatch, ["scan", "--format", "json", "pod.yaml"])
    report = json.loads(out)
    assert [(i["resource"], i["count"]) for i in report["inventory"]] == [("nvidia.com/gpu", 1)]
    code, out = _invoke(tmp_path, monkeypatch, ["convert", "pod.yaml"])
    assert code != 0 and "DRA008" in out


@pytest.mark.parametrize("where", ["manifest", "config", "slices", "validate"])
def test_alias_bomb_is_refused_by_every_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    bomb = ALIAS_BOMB + "kind: Pod\nnote: nvidia.com/gpu resource.k8s.io ResourceClaimTemplate\n"
    (tmp_path / "ok.yaml").write_text(CLAIM)
    if where == "manifest":
        (tmp_path / "bomb.yaml").write_text(bomb)
        code, out = _invoke(tmp_path, monkeypatch, ["scan", "bomb.yaml"])
    elif where == "config":
        (tmp_path / ".dra-migrate.yaml").write_text(ALIAS_BOMB)
        code, out = _invoke(tmp_path, monkeypatch, ["scan", "ok.yaml"])
        assert code == 2
    elif where == "slices":
        (tmp_path / "slices.yaml").write_text(ALIAS_BOMB)
        code, out = _invoke(
            tmp_path, monkeypatch, ["validate", "--resource-slices", "slices.yaml", "ok.yaml"]
        )
        assert code == 2
    else:
        (tmp_path / "bomb.yaml").write_text(bomb)
        code, out = _invoke(tmp_path, monkeypatch, ["validate", "bomb.yaml"])
    assert code != 0
    assert "DRA030" in out or "excessive aliasing" in out, out


def test_deeply_nested_resource_slices_are_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ok.yaml").write_text(CLAIM)
    (tmp_path / "slices.json").write_text("[" * 100_000)
    code, out = _invoke(
        tmp_path, monkeypatch, ["validate", "--resource-slices", "slices.json", "ok.yaml"]
    )
    assert code == 2 and "slices.json:1:" in out and "nesting" in out


GPU_POD = POD.replace("{<<: &gpulim {nvidia.com/gpu: 1}, memory: 1Gi}", "{nvidia.com/gpu: 1}")


def test_cr_only_line_ends_convert_and_stay_cr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """YAML reads a lone CR as a line break; the splices work on LF at the same
    offsets and the file is written back with CR line ends."""
    (tmp_path / "pod.yaml").write_bytes(GPU_POD.replace("\n", "\r").encode())
    code, out = _invoke(tmp_path, monkeypatch, ["convert", "--write", "pod.yaml"])
    assert code == 0, out
    written = (tmp_path / "pod.yaml").read_bytes()
    assert b"\n" not in written and b"resourceClaimTemplateName: p-gpu\r" in written
    code, out = _invoke(tmp_path, monkeypatch, ["convert", "--check", "pod.yaml"])
    assert code == 0, out  # converting again finds nothing to do


@pytest.mark.parametrize("brk", ["\x85", "\u2028", "\u2029", "\r"])
def test_line_break_only_yaml_sees_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, brk: str
) -> None:
    """A break the text splices cannot see (in an LF file) gives DRA032 at its
    place, never DRA900, and the file is left as it was."""
    text = GPU_POD.replace("image: x", f'image: "x{brk}y"')
    (tmp_path / "pod.yaml").write_bytes(text.encode())
    code, out = _invoke(tmp_path, monkeypatch, ["convert", "--write", "pod.yaml"])
    assert code != 0
    assert "pod.yaml:8:" in out and "DRA032" in out and "DRA900" not in out, out
    assert (tmp_path / "pod.yaml").read_bytes() == text.encode()


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le"])
def test_wide_text_without_bom_is_reported_not_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "pod.yaml").write_bytes(GPU_POD.encode(encoding))
    for target in ("dir/pod.yaml", "dir"):
        code, out = _invoke(tmp_path, monkeypatch, ["scan", target])
        assert code != 0
        assert "DRA002" in out and "without a byte-order mark" in out, (target, out)


def test_json_escape_in_a_resource_name_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bytes never say nvidia.com/gpu; the parsed key does."""
    pod = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "resources": {"limits": {"X": 1}}}]},
            }
        ],
    }
    text = json.dumps(pod).replace('"X"', '"nvidia.com\\u002fgpu"')
    assert "nvidia.com/gpu" not in text
    (tmp_path / "pods.json").write_text(text)
    _code, out = _invoke(tmp_path, monkeypatch, ["scan", "--format", "json", "."])
    assert [i["resource"] for i in json.loads(out)["inventory"]] == ["nvidia.com/gpu"]


CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  description: set nvidia.com/gpu in limits
  description: a duplicate key nobody parses
"""


def test_custom_resource_definitions_are_not_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CRD that mentions a resource name is recognised from its head and never
    composed (its duplicate key would be DRA005); the pod beside it converts, and
    its line numbers are those of the whole stream."""
    (tmp_path / "bundle.yaml").write_text(CRD + "---\n" + GPU_POD + "---\n" + CRD)
    code, out = _invoke(tmp_path, monkeypatch, ["scan", "--format", "json", "bundle.yaml"])
    report = json.loads(out)
    assert [i["line"] for i in report["inventory"]] == [18], out
    assert not [f for f in report.get("findings", []) if f["code"] == "DRA005"], out
    code, out = _invoke(tmp_path, monkeypatch, ["convert", "--write", "bundle.yaml"])
    assert code == 0, out
    text = (tmp_path / "bundle.yaml").read_text()
    assert text.startswith(CRD) and text.endswith(CRD) and "resourceClaimTemplateName" in text


def test_progress_bar_only_on_a_terminal_and_for_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from dra_migrate.cli import run as cli

    with cli.progress_bar("text") as progress:
        assert progress is None  # stderr is not a terminal under pytest
    monkeypatch.setattr(cli.sys.stderr, "isatty", lambda: True, raising=False)
    for fmt in ("json", "markdown"):
        with cli.progress_bar(fmt) as progress:
            assert progress is None
    with cli.progress_bar("text") as progress:
        assert progress is not None
        progress(1, 10)  # below PROGRESS_FROM files: no bar is added
        progress(1, cli.PROGRESS_FROM)


def test_pipeline_reports_progress(tmp_path: Path) -> None:
    from dra_migrate.convert.mapping import Settings, load_config
    from dra_migrate.pipeline import many_files
    from dra_migrate.pipeline.options import RunOptions

    for i in range(3):
        (tmp_path / f"p{i}.yaml").write_text(GPU_POD)
    seen: list[tuple[int, int]] = []
    settings = Settings(target="v1", config=load_config(None))

    def progress(done: int, total: int) -> None:
        seen.append((done, total))

    many_files.run(RunOptions((str(tmp_path),), settings, jobs=1, progress=progress))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def _stderr_on_a_terminal(cwd: Path, *args: str) -> bytes:
    """What ``dra-migrate ARGS`` writes on stderr when stderr is a terminal (a pty)."""
    import os
    import subprocess
    import sys

    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    done = subprocess.Popen(
        [sys.executable, "-m", "dra_migrate", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env={**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm"},
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the run ended: the pty is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    done.wait(timeout=120)
    return b"".join(chunks)


def test_a_short_run_on_a_terminal_leaves_the_cursor_alone(tmp_path: Path) -> None:
    """No progress bar below PROGRESS_FROM files, and none of its escapes: the cursor is
    never hidden (rich's live display hid it on every run on a terminal)."""
    (tmp_path / "p.yaml").write_text(GPU_POD)
    err = _stderr_on_a_terminal(tmp_path, "scan", "p.yaml")
    assert b"p.yaml" in err or b"dra-migrate" in err  # the run did write to the terminal
    assert b"\x1b[?25l" not in err


def test_a_long_run_on_a_terminal_shows_the_bar(tmp_path: Path) -> None:
    from dra_migrate.cli.run import PROGRESS_FROM

    for i in range(PROGRESS_FROM):
        (tmp_path / f"p{i:03}.yaml").write_text(GPU_POD)
    err = _stderr_on_a_terminal(tmp_path, "scan", ".", "--jobs", "1")
    assert b"\x1b[?25l" in err and b"\x1b[?25h" in err  # hidden while shown, then back
