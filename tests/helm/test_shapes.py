"""Chart shapes teams write (tests/fixtures/charts/shapes/<case>/): each case's chart
is migrated through the CLI with ``convert --write --verify-helm`` and the real helm;
the files written are golden (``after/``, regenerated with DRA_MIGRATE_WRITE_GOLDEN=1
and reviewed), and the render proof holds (DRA245, no DRA244 or DRA248)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import FIXTURES
from tests.helpers.cli_runner import invoke

SHAPES = FIXTURES / "charts" / "shapes"
CASES = sorted(p.name for p in SHAPES.iterdir() if (p / "before").is_dir())
# a case with refused.txt is refused: the file holds what the finding must say
MIGRATED = [c for c in CASES if not (SHAPES / c / "refused.txt").is_file()]
REFUSED = [c for c in CASES if (SHAPES / c / "refused.txt").is_file()]


@pytest.fixture
def helm(tools: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    found = shutil.which("helm")
    if found is None:
        pytest.skip("helm is not installed: scripts/install-test-tools.sh installs it")
    return found


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _run(tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, int, str]:
    chart = tmp_path / "charts" / case
    shutil.copytree(SHAPES / case / "before", chart)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--write", "--verify-helm", "--jobs", "1", "."])
    assert "Traceback" not in done.output, done.output
    return chart, done.exit_code, done.stderr


@pytest.mark.parametrize("case", MIGRATED)
def test_a_shape_is_migrated_and_proven(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    chart, status, err = _run(tmp_path, case, monkeypatch)
    assert "DRA245 info: chart" in err, err
    assert "DRA244" not in err and "DRA248" not in err and "DRA243" not in err, err
    assert status == 0, err
    written = _files(chart)
    after = SHAPES / case / "after"
    if os.environ.get("DRA_MIGRATE_WRITE_GOLDEN"):
        shutil.rmtree(after, ignore_errors=True)
        before = _files(SHAPES / case / "before")
        for name, data in written.items():
            if before.get(name) != data:
                (after / name).parent.mkdir(parents=True, exist_ok=True)
                (after / name).write_bytes(data)
    expected = {**_files(SHAPES / case / "before"), **_files(after)}
    assert sorted(written) == sorted(expected)
    for name, data in expected.items():
        assert written[name].decode() == data.decode(), name


@pytest.mark.parametrize("case", REFUSED)
def test_a_shape_is_refused_by_name(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    chart, _status, err = _run(tmp_path, case, monkeypatch)
    said = (SHAPES / case / "refused.txt").read_text().strip()
    assert said in " ".join(err.split()), err
    assert _files(chart) == _files(SHAPES / case / "before")  # nothing written


COMPACT = """\
    spec:
      containers:
      - name: a
        image: a:1
      {{- if .Values.b }}
      - name: b
      {{- end }}
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
"""


def test_compact_sequence_items_belong_to_their_key() -> None:
    from dra_migrate.helm import template_shapes as shapes

    lines = shapes.lines_of(COMPACT)
    assert shapes.parent(lines, 2) == 1 and shapes.parent(lines, 5) == 1  # items: containers
    assert shapes.parent(lines, 1) == 0
    # the block holds the items and the if between them, not the with after them
    assert shapes.block_end(lines, 1) == 6
    assert shapes.parent(lines, 8) == 0  # nodeSelector is the pod spec's


def _helm(helm: str, chart: Path, *args: str) -> tuple[int, str]:
    import subprocess

    done = subprocess.run(
        [helm, "template", "r", str(chart), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("extra", "refused"),
    [
        ("nvidia.com/mig-1g.5gb", True),  # a MIG profile the mapping maps
        ("nvidia.com/gpu.shared", True),  # mapped, though detection ignores nvidia.com/gpu.*
        ("example.org/gpu", True),  # detected: */gpu
        ("ephemeral-storage", False),
    ],
)
def test_a_to_yaml_template_refuses_other_gpu_keys_with_dra_on(
    tmp_path: Path, helm: str, monkeypatch: pytest.MonkeyPatch, extra: str, refused: bool
) -> None:
    """toYaml .Values.resources keyed on nvidia.com/gpu: values that add another GPU
    resource at install time would render a claim and the extended resource; with DRA
    on the rendering fails and names it (with DRA off it renders as before)."""
    chart, status, err = _run(tmp_path, "toyaml-resources", monkeypatch)
    assert status == 0, err
    key = "resources.limits." + extra.replace(".", "\\.")
    on = ("--set", "dra.enabled=true", "--set", f"{key}=1")
    code, out = _helm(helm, chart, *on)
    if refused:
        assert code != 0, out
        assert (
            f"resources.limits.{extra}: with DRA on the chart migrates only nvidia.com/gpu" in out
        ), out
    else:
        assert code == 0 and f"{extra}: 1" in out, out
    code, out = _helm(helm, chart, "--set", f"{key}=1")
    assert code == 0 and f"{extra}: 1" in out and "nvidia.com/gpu: 1" in out, out


NAMES = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)


@given(
    items=st.lists(st.lists(NAMES, min_size=1, max_size=3, unique=True), min_size=1, max_size=4),
    compact=st.booleans(),
)
def test_a_sequence_belongs_to_its_key_at_either_indent(
    items: list[list[str]], compact: bool
) -> None:
    """Items at the key's indent (kubectl create -o yaml) or two deeper: each item's
    parent is the key, and the key's block ends at the last item's last line."""
    from dra_migrate.helm import template_shapes as shapes

    pad = "      " if compact else "        "
    out = ["    spec:", "      containers:"]
    item_lines = []
    for keys in items:
        item_lines.append(len(out))
        out.append(f"{pad}- {keys[0]}: x")
        out.extend(f"{pad}  {k}: y" for k in keys[1:])
    last = len(out) - 1
    out.append("      restartPolicy: Never")
    lines = shapes.lines_of("\n".join(out) + "\n")
    assert [shapes.parent(lines, n) for n in item_lines] == [1] * len(item_lines)
    assert shapes.block_end(lines, 1) == last
    assert shapes.parent(lines, last + 1) == 0
