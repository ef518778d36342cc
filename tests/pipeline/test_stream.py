"""Standard input is processed part by part, and the result is the whole stream's.

``convert -`` copies the stream to a temporary file and converts a part of whole
documents at a time, so memory does not grow with the number of documents
(benchmarks/bench.py measures it). Users must not be able to tell: the
converted stream, the diff, the findings and their lines, the exit status are
those of converting the stream in one piece.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from dra_migrate.pipeline import stream as stream_stage
from tests.helpers.cli_runner import invoke
from tests.helpers.invariants import claim_template, gpu_job


def job(name: str, count: int = 1, extra: str = "") -> str:
    return gpu_job(name, count, container=f"train{extra}", comment=f"job {name}")


def config_map(i: int) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  k: v{i}\n"


TEMPLATE_LATE = claim_template("a-gpu")


def stream(*docs: str) -> str:
    return "---\n".join(docs)


def run(
    monkeypatch: pytest.MonkeyPatch, part: int, text: str, *args: str
) -> tuple[int, bytes, str]:
    monkeypatch.setattr(stream_stage, "STREAM_PART", part)
    result = invoke([*args, "-"], input=text.encode())
    return result.exit_code, result.stdout_bytes, result.stderr


def both(
    monkeypatch: pytest.MonkeyPatch, text: str, *args: str
) -> tuple[tuple[int, bytes, str], tuple[int, bytes, str]]:
    whole = run(monkeypatch, 1 << 30, text, *args)
    parts = run(monkeypatch, 64, text, *args)  # a part per document or two
    return whole, parts


CASES: dict[str, str] = {
    "plain": stream(*(job(f"j{i}", i % 3 + 1) if i % 2 else config_map(i) for i in range(12))),
    # the same workload name twice: the second template takes another name
    "same names": stream(job("a"), config_map(1), job("a", 2), config_map(2), job("a", 3)),
    # a template defined at the end takes the name the first job would be given
    "defined late": stream(job("a"), *(config_map(i) for i in range(5)), TEMPLATE_LATE),
    # an ignore comment in a later part keeps that job on the device plugin
    "ignored": stream(
        job("a"), config_map(1), job("b", extra="  # dra-migrate: ignore[DRA401]"), job("c")
    ),
    # a directive belongs to the document after it: the stream is never cut between them
    "directives": stream(job("a"), config_map(1) + "...\n%YAML 1.1\n", job("b"), config_map(2)),
    # a count Kubernetes reads as octal, in a later part
    "octal": stream(*(config_map(i) for i in range(4)), job("o", extra="").replace(": 1", ": 010")),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize(
    "args", [("convert",), ("convert", "--check"), ("scan",)], ids=lambda a: " ".join(a)
)
def test_parts_give_the_whole_streams_answer(
    monkeypatch: pytest.MonkeyPatch, name: str, args: tuple[str, ...]
) -> None:
    whole, parts = both(monkeypatch, CASES[name], *args)
    assert parts == whole


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_diff_of_a_stream_in_parts_applies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str
) -> None:
    """Where an inserted template meets a document separator a diff may align either
    way; the parts' diff must turn the stream into the converted stream, in hunks
    that never overlap (git apply refuses those)."""
    whole, parts = both(monkeypatch, CASES[name], "convert", "--diff")
    assert (parts[0], parts[2]) == (whole[0], whole[2])
    converted = run(monkeypatch, 64, CASES[name], "convert")[1]
    (tmp_path / "-").write_text(CASES[name])
    (tmp_path / "d.patch").write_bytes(parts[1])
    done = subprocess.run(["git", "apply", "d.patch"], cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "-").read_bytes() == converted
    assert parts[1].count(b"\n@@ ") == whole[1].count(b"\n@@ ")  # hunks merge as whole


def test_a_blocking_finding_in_a_late_part_leaves_stdout_empty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = stream(job("a"), *(config_map(i) for i in range(4)), job("b").replace(": 1", ": -1"))
    whole, parts = both(monkeypatch, text, "convert")
    assert parts == whole
    code, out, err = parts
    assert out == b"" and code != 0
    assert "-:" in err and "DRA" in err


def test_lines_of_later_parts_count_from_the_start_of_the_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docs = [config_map(i) for i in range(6)] + [job("late", 2)]
    text = stream(*docs)
    code, _out, err = run(monkeypatch, 64, text, "convert", "--check")
    line = text.splitlines().index("              nvidia.com/gpu: 2") + 1
    assert code == 1
    assert f"-:{line}:15: DRA401" in err


def test_a_document_over_the_limit_is_refused_and_the_rest_is_not_read_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    big = config_map(0) + "  blob: " + "x" * 5000 + "\n"
    text = stream(config_map(1), big, config_map(2))
    code, out, err = run(monkeypatch, 64, text, "convert", "--max-file-size", "4000")
    assert code == 123 and out == b""
    assert "a document of standard input is larger than the limit of 4000 bytes" in err
    # every document under the limit: the stream as a whole may be larger
    small = stream(*(config_map(i) for i in range(100)))
    assert len(small) > 4000
    code, out, _err = run(monkeypatch, 64, small, "convert", "--max-file-size", "4000")
    assert code == 0 and out == small.encode()


def test_json_on_stdin_is_one_value_and_never_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    items: list[Any] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}} for i in range(50)
    ]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2)
    whole, parts = both(monkeypatch, text, "convert")
    assert parts == whole and whole[0] == 0
    assert parts[1] == text.encode()


def test_split_stream_cuts_only_at_document_starts() -> None:
    import io

    text = stream(*(config_map(i) for i in range(40))).encode()
    spool = io.BytesIO()
    parts = stream_stage.split_stream(io.BytesIO(text), spool, 1 << 20)
    assert spool.getvalue() == text
    assert [p.start for p in parts] == sorted(p.start for p in parts)
    assert parts[0].start == 0 and parts[-1].end == len(text)
    for part in parts:
        assert part.line == text[: part.start].count(b"\n")
        if part.start:
            assert text[part.start : part.start + 4] == b"---\n"


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 20])
def test_split_stream_does_not_depend_on_how_the_stream_is_read(
    monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    import io

    text = (stream(*(config_map(i) for i in range(30))) + "# no newline at the end").encode()
    monkeypatch.setattr(stream_stage, "STREAM_PART", 100)
    monkeypatch.setattr(stream_stage, "_STREAM_BLOCK", 1 << 20)
    expected = stream_stage.split_stream(io.BytesIO(text), io.BytesIO(), 1 << 20)
    monkeypatch.setattr(stream_stage, "_STREAM_BLOCK", block)
    spool = io.BytesIO()
    assert stream_stage.split_stream(io.BytesIO(text), spool, 1 << 20) == expected
    assert spool.getvalue() == text and len(expected) > 5
    with pytest.raises(stream_stage.discover.Unreadable):
        stream_stage.split_stream(io.BytesIO(text), io.BytesIO(), 60)  # every document is larger
