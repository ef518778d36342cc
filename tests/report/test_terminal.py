"""The terminal view (report/terminal.py): the text view's content laid out with rich.

The reports are the ones real runs make (the CLI run in this process on the golden
cases, the examples and a dumped cluster), taken from the text renderer as the run
calls it. The terminal view must hold everything the plain view holds, in lines no
wider than the terminal; a stream that is not a terminal gets the plain view's bytes.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.report import terminal, text_format
from dra_migrate.report.findings import Severity, finding, quote_path
from dra_migrate.report.model import FileResult, InventoryItem, Report, Status
from tests.cli.test_cli import NO_GPU
from tests.conftest import FIXTURES, REPO
from tests.helpers.cli_runner import invoke
from tests.helpers.fake_apiserver import dump, sample_cluster

WIDTHS = (60, 100, 200)
SGR = re.compile(r"\x1b\[[0-9;]*m")
FRAME = "│"  # the frame's vertical line: a table's lines start with it
RULES = frozenset("╭╮╰╯├┤┬┴┼─ ")  # the lines of a frame that hold no cell


def captured(folder: Path, args: tuple[str, ...], tmp: Path) -> tuple[Report, str]:
    """The report and command a run of ``dra-migrate ARGS`` in a copy of ``folder``
    renders as text (the last one, when it renders several)."""
    work = tmp / folder.name
    shutil.copytree(folder, work)
    seen: list[tuple[Report, str]] = []
    plain = text_format.render

    def grab(report: Report, command: str) -> str:
        seen.append((report, command))
        return plain(report, command)

    old = os.getcwd()
    os.chdir(work)
    try:
        with mock.patch.object(text_format, "render", grab):
            result = invoke(list(args))
    finally:
        os.chdir(old)
    assert result.exception is None, result.output
    assert seen, result.output
    return seen[-1]


# each report: the folder the run reads (a copy of it) and the command line
VENDORED = {
    "Chart.yaml": "apiVersion: v2\nname: nim-llm\nversion: 1.3.0\n",
    "values.yaml": "resources:\n  limits:\n    nvidia.com/gpu: 1\n",
    "templates/statefulset.yaml": (
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: {{ .Release.Name }}\n"
        "spec:\n  template:\n    spec:\n      containers:\n        - name: nim\n"
        "          image: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3\n"
        "          resources:\n            {{- toYaml .Values.resources | nindent 12 }}\n"
    ),
}
RUNS = {
    "scan examples": ("examples", ("scan", ".")),
    "convert examples": ("examples", ("convert", "--jobs", "1", "--output", "out.txt", ".")),
    "validate examples": ("examples", ("validate", ".")),
    "report examples": ("examples", ("report", ".", "--kube-version", "1.36")),
    "scan suppressed": ("suppressed", ("scan", "--show-suppressed", ".")),
    "scan bad count": ("bad-count", ("scan", ".")),
    "scan nothing": ("nothing", ("scan", ".")),
    "report nothing": ("nothing", ("report", ".")),
    "inventory cluster": ("cluster", ("inventory", "cluster.json")),
}
REPORTS = tuple(RUNS)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Report, str]]:
    tmp = tmp_path_factory.mktemp("reports")
    folders = {
        "examples": tmp / "examples",
        "bad-count": FIXTURES / "convert" / "bad-count-fraction" / "input",
    }
    # the bundled examples, every file of which converts, and a vendored upstream chart
    # left for the bridge, whose warnings the views colour (DRA204, DRA242)
    shutil.copytree(REPO / "examples", folders["examples"])
    for name, text in VENDORED.items():
        path = folders["examples"] / "charts" / "nim-llm" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for name in ("suppressed", "nothing", "cluster"):
        folders[name] = tmp / name
    shutil.copytree(folders["examples"], folders["suppressed"])  # with an ignore comment
    deployment = folders["suppressed"] / "apps" / "inference-deployment.yaml"
    deployment.write_text(
        deployment.read_text().replace(
            "kind: Deployment\n", "kind: Deployment  # dra-migrate: ignore[DRA208]\n", 1
        )
    )
    folders["nothing"].mkdir()
    (folders["nothing"] / "settings.yaml").write_text(NO_GPU)
    folders["cluster"].mkdir()
    (folders["cluster"] / "cluster.json").write_text(json.dumps(dump(sample_cluster())))
    return {
        name: captured(folders[folder], args, tmp / name.replace(" ", "-"))
        for name, (folder, args) in RUNS.items()
    }


def cells(line: str) -> int:
    """The width of a line in terminal cells (East Asian wide characters take two)."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
        for c in SGR.sub("", line)
    )


def unwrapped(view: str) -> str:
    """The view's text with the wrapping undone and no white space: free lines joined,
    and each table's columns read top to bottom (a folded cell's pieces are in one
    column, one line after the other)."""
    out: list[str] = []
    columns: dict[int, list[str]] = {}

    def flush() -> None:
        out.extend("".join(columns[i]) for i in sorted(columns))
        columns.clear()

    for line in SGR.sub("", view).splitlines():
        if line.startswith(FRAME):
            for i, cell in enumerate(line.split(FRAME)):
                columns.setdefault(i, []).append(cell.strip())
        elif line and set(line) <= RULES:
            flush()
        else:
            flush()
            out.append(line.strip())
    flush()
    return re.sub(r"\s+", "", "".join(out))


def locations(plain: str, flat: str) -> tuple[dict[str, int], dict[str, int]]:
    """How often each ``path:line:col`` of the plain view is in it and in ``flat``."""
    found = set(re.findall(r"[\w./-]+:\d+:\d+", plain))
    plain_flat = re.sub(r"\s+", "", plain)
    return {at: plain_flat.count(at) for at in found}, {at: flat.count(at) for at in found}


def codes(text: str) -> Counter[str]:
    return Counter(re.findall(r"DRA\d{3}", re.sub(r"\s+", "", text)))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", REPORTS)
def test_the_terminal_view_holds_the_plain_view_in_the_width(
    reports: dict[str, tuple[Report, str]], name: str, width: int
) -> None:
    report, command = reports[name]
    # the terminal view moves a finding's hint to the lines below it: "; hint: " there
    # is "hint: " at the start of a line
    plain = text_format.render(report, command).replace("; hint: ", " hint: ")
    view = terminal.render(report, command, width=width, color=False)
    too_wide = [line for line in view.splitlines() if cells(line) > width]
    assert too_wide == []
    assert "\x1b" not in view  # no colour, no other escape sequence
    flat = unwrapped(view)
    # every word of the plain view, as often (paths, names, counts, messages) ...
    words = Counter(plain.split())
    missing = [w for w, n in words.items() if flat.count(re.sub(r"\s", "", w)) < n]
    assert missing == []
    # ... each location and code exactly as often: nothing lost, nothing twice
    in_plain, in_view = locations(plain, flat)
    assert in_view == in_plain
    assert codes(flat) == codes(plain)


def test_the_reports_are_the_ones_the_cases_describe(
    reports: dict[str, tuple[Report, str]],
) -> None:
    """The test above reads tables, findings of each severity, a plan, a cluster and
    suppressed findings: the reports hold them."""
    text = {name: text_format.render(*reports[name]) for name in REPORTS}
    severities = {f.severity for r, _ in reports.values() for f in r.all_findings}
    assert severities == set(Severity)
    assert "LOCATION" in text["scan examples"]
    assert "== Stage 5" in text["report examples"]
    assert "Nodes:" in text["inventory cluster"]
    assert "[suppressed by " in text["scan suppressed"]
    assert "No extended GPU requests found." in text["scan nothing"]
    assert "DRA101" in text["scan bad count"]


HEADERS = (
    "LOCATION",
    "WORKLOAD",
    "POD SPEC",
    "CONTAINER",
    "ROLE",
    "RESOURCE",
    "COUNT",
    "DEVICE CLASS",
    "STATE",
)


def test_a_table_that_fits_is_a_grid_and_one_that_does_not_a_row_per_frame(
    reports: dict[str, tuple[Report, str]],
) -> None:
    report, command = reports["scan examples"]
    wide = terminal.render(report, command, width=250, color=False).splitlines()
    header = [line for line in wide if "LOCATION" in line]
    assert len(header) == 1
    assert [cell.strip() for cell in header[0].split(FRAME)[1:-1]] == list(HEADERS)
    narrow = terminal.render(report, command, width=60, color=False).splitlines()
    rows = [line for line in narrow if line.startswith(f"{FRAME} LOCATION ")]
    assert len(rows) == len(report.inventory)  # one frame section a row


def _sgr_before(view: str, text: str) -> set[str]:
    """The SGR parameters in force where ``text`` starts, at each place it is in."""
    found = set()
    for match in re.finditer(r"\x1b\[([0-9;]*)m((?:\x1b\[[0-9;]*m)*)" + re.escape(text), view):
        found.add(match.group(1))
    return found


@pytest.mark.parametrize("name", ["scan examples", "report examples", "convert examples"])
def test_severities_in_colour(reports: dict[str, tuple[Report, str]], name: str) -> None:
    report, command = reports[name]
    view = terminal.render(report, command, width=100, color=True)
    colour = {Severity.ERROR: {"31", "91"}, Severity.WARNING: {"33", "93"}}
    checked = 0
    for f in report.all_findings:
        params = _sgr_before(view, f.code)  # (a code in a message is not coloured)
        assert params, f.code
        if f.severity in colour:
            assert all(set(p.split(";")) & colour[f.severity] for p in params), (f.code, params)
            checked += 1
    assert checked
    assert SGR.sub("", view) == terminal.render(report, command, width=100, color=False)


def test_colour_does_not_depend_on_the_environment(
    reports: dict[str, tuple[Report, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """rich reads NO_COLOR, TERM, FORCE_COLOR and COLUMNS itself: render is told."""
    report, command = reports["scan bad count"]  # an error finding: red
    expected = {c: terminal.render(report, command, width=100, color=c) for c in (True, False)}
    assert "\x1b[31m" in expected[True]
    for name, value in (("NO_COLOR", "1"), ("TERM", "dumb"), ("FORCE_COLOR", "1")):
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COLUMNS", "20")
    for color in (True, False):
        assert terminal.render(report, command, width=100, color=color) == expected[color]


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("tty", "choice", "environ", "expected"),
    [
        (True, "auto", {}, True),
        (True, "auto", {"TERM": "xterm-256color"}, True),
        (True, "auto", {"NO_COLOR": ""}, True),  # empty: unset
        (True, "auto", {"NO_COLOR": "1"}, False),
        (True, "auto", {"NO_COLOR": "0"}, False),  # any value but empty
        (True, "auto", {"TERM": "dumb"}, False),
        (False, "auto", {}, False),
        (True, "never", {}, False),
        (False, "never", {}, False),
        (True, "always", {}, True),
        (False, "always", {}, True),
        (False, "always", {"NO_COLOR": "1", "TERM": "dumb"}, True),  # always wins
        (True, "never", {"FORCE_COLOR": "1"}, False),
    ],
)
def test_wants_color(tty: bool, choice: str, environ: dict[str, str], expected: bool) -> None:
    assert terminal.wants_color(Stream(tty), choice, environ) is expected


def test_wants_color_on_odd_streams() -> None:
    real_closed = io.StringIO()
    real_closed.close()
    assert terminal.wants_color(real_closed, "auto", {}) is False  # isatty raises
    assert terminal.wants_color(object(), "auto", {}) is False  # no isatty
    with pytest.raises(ValueError, match="auto, always, never"):
        terminal.wants_color(Stream(True), "yes", {})


@pytest.mark.parametrize("name", REPORTS)
@pytest.mark.parametrize(
    ("choice", "environ"),
    [("auto", {}), ("never", {}), ("auto", {"NO_COLOR": "1"}), ("never", {"FORCE_COLOR": "1"})],
)
def test_a_stream_that_is_not_a_terminal_gets_the_plain_view(
    reports: dict[str, tuple[Report, str]], name: str, choice: str, environ: dict[str, str]
) -> None:
    report, command = reports[name]
    stream = Stream(False)
    terminal.render_to(report, command, stream, choice, environ)
    assert stream.getvalue() == text_format.render(report, command)


def test_a_terminal_gets_the_terminal_view(reports: dict[str, tuple[Report, str]]) -> None:
    report, command = reports["scan examples"]
    cases = [
        (Stream(True), "auto", {"COLUMNS": "90"}, 90, True),
        (Stream(True), "auto", {"COLUMNS": "90", "NO_COLOR": "1"}, 90, False),
        (Stream(True), "auto", {"COLUMNS": "90", "TERM": "dumb"}, 90, False),
        (Stream(True), "never", {"COLUMNS": "120"}, 120, False),
        (Stream(True), "auto", {"COLUMNS": "12"}, terminal.MIN_WIDTH, True),
        (Stream(True), "auto", {}, terminal.DEFAULT_WIDTH, True),  # no fileno: 80
        # --color always asks for colour where a pipe leads (less -R, a CI log that shows it)
        (Stream(False), "always", {"COLUMNS": "90"}, 90, True),
    ]
    for stream, choice, environ, width, color in cases:
        terminal.render_to(report, command, stream, choice, environ)
        expected = terminal.render(report, command, width=width, color=color)
        assert stream.getvalue() == expected, (choice, environ)
        assert ("\x1b[" in expected) is color
        assert FRAME in expected


@pytest.fixture
def pty_stream() -> Iterator[io.TextIOWrapper]:
    """The writing end of a pseudo-terminal 70 columns wide (POSIX)."""
    fcntl = pytest.importorskip("fcntl")
    termios = pytest.importorskip("termios")
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 70, 0, 0))
    stream = open(follower, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        yield stream
    finally:
        stream.close()
        os.close(leader)


def test_a_real_terminal(pty_stream: io.TextIOWrapper) -> None:
    assert terminal.wants_color(pty_stream, "auto", {}) is True
    assert terminal.wants_color(pty_stream, "auto", {"NO_COLOR": "x"}) is False
    assert terminal.terminal_width(pty_stream, {}) == 70
    assert terminal.terminal_width(pty_stream, {"COLUMNS": "132"}) == 132
    assert terminal.terminal_width(pty_stream, {"COLUMNS": "wide"}) == 70
    assert terminal.terminal_width(io.StringIO(), {}) == terminal.DEFAULT_WIDTH


def test_hostile_names_reach_the_terminal_escaped() -> None:
    """A name or message with escape sequences or line breaks moves no cursor and
    starts no line; a name made to read as a CI workflow command is inert."""
    path = "apps/\x1b[2Jevil\nname.yaml"
    item = _item(path, 3, "Deployment", "x\x1b]0;title\x07")
    bad = finding("DRA104", path, 3, 5, "##[error]forged\r\n::error::x, then ::error::forged " * 3)
    report = Report(
        [FileResult(path=path, status=Status.UNCHANGED, findings=[bad], inventory=[item])]
    )
    for width in range(40, 121):
        view = terminal.render(report, "scan", width=width, color=True)
        assert [line for line in view.splitlines() if cells(line) > width] == []
        assert "\x1b[2J" not in view and "\x1b]" not in view and "\x07" not in view
        assert not re.search(r"^\s*::", SGR.sub("", view), re.MULTILINE)
        assert "##[" not in SGR.sub("", view)
        assert quote_path(path) in unwrapped(view)


def test_rich_is_imported_only_to_lay_out() -> None:
    """Importing the module and writing to a stream that is not a terminal never
    imports rich (a hook's start-up); writing to a terminal does."""
    program = """\
import io, sys
from dra_migrate.report import terminal
from dra_migrate.report.model import Report
terminal.render_to(Report([]), "scan", io.StringIO(), "auto", {"TERM": "xterm"})
print("rich" in sys.modules)
class Tty(io.StringIO):
    def isatty(self): return True
terminal.render_to(Report([]), "scan", Tty(), "auto", {})
print("rich" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", program],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["False", "True"]


def _item(path: str, line: int, kind: str, name: str) -> InventoryItem:
    return InventoryItem(
        path=path,
        line=line,
        col=7,
        api_version="apps/v1",
        kind=kind,
        namespace="ml",
        name=name,
        pod_path="spec.template.spec",
        container="server",
        role="app",
        resource="nvidia.com/gpu",
        count=2,
        value="2",
        device_class="gpu.nvidia.com",
    )


# path segments: ASCII, a letter with an accent, wide CJK characters, a space
SEGMENT = st.text(alphabet=st.sampled_from("abcxyz0189-_.é日本 "), min_size=1, max_size=40).filter(
    lambda s: s.strip(" ") == s
)
PATH = st.lists(SEGMENT, min_size=1, max_size=6).map("/".join).map(lambda p: p + ".yaml")


@settings(max_examples=150, deadline=None)
@given(
    width=st.integers(min_value=40, max_value=250),
    paths=st.lists(PATH, min_size=1, max_size=4, unique=True),
    command=st.sampled_from(["scan", "convert"]),
)
def test_any_width_and_path_length_fits_and_loses_no_path(
    width: int, paths: list[str], command: str
) -> None:
    files = [
        FileResult(
            path=path,
            status=Status.UNCHANGED,
            findings=[finding("DRA104" if i % 2 else "DRA101", path, i + 1, 3, f"about {path}")],
            inventory=[_item(path, i + 1, "Deployment", f"w{i}")],
        )
        for i, path in enumerate(paths)
    ]
    report = Report(files)
    view = terminal.render(report, command, width=width, color=False)
    assert [line for line in view.splitlines() if cells(line) > width] == []
    flat = unwrapped(view)
    for path in paths:
        quoted = re.sub(r"\s", "", quote_path(path))
        # the table row (scan) and the finding's location and message
        assert flat.count(quoted) >= (3 if command == "scan" else 2), path


def test_grid_widths() -> None:
    rows = [["NAME", "DETAIL"], ["gpu", "one two three"], ["a-long-name", "x"]]
    frame = terminal.frame(2)
    assert frame == 7  # │ a │ b │
    assert terminal.grid_widths(rows, 11 + 13 + frame) == [11, 13]  # as wide as they are
    # narrowed from the widest column, down to its longest word ("DETAIL")
    assert terminal.grid_widths(rows, 11 + 9 + frame) == [11, 9]
    assert terminal.grid_widths(rows, 11 + 6 + frame) == [11, 6]
    assert terminal.grid_widths(rows, 11 + 5 + frame) is None  # "DETAIL" would break
    even = terminal.grid_widths([["A", "B"], ["abc def", "abc def"]], 7 + frame)
    assert even is not None and sorted(even) == [3, 4]  # the widest give first, in turn
    assert terminal.grid_widths([["日本語"], ["x"]], 6 + terminal.frame(1)) == [6]  # cells


# --- long hints (issue 27) -------------------------------------------------------

LONG_HINT = "convert the base and its overlays together by hand " * 8  # 400 characters


def _hinted() -> Report:
    path = "deploy/train.yaml"
    bad = finding("DRA104", path, 3, 5, "container 'train' uses example.com/gpu", LONG_HINT)
    return Report([FileResult(path=path, status=Status.UNCHANGED, findings=[bad])])


def test_a_hint_follows_its_finding_on_lines_of_its_own_in_the_width() -> None:
    view = terminal.render(_hinted(), "validate", width=60, color=False).splitlines()
    at = next(i for i, line in enumerate(view) if "DRA104" in line)
    assert view[at] == "deploy/train.yaml:3:5: DRA104 warning: container"
    assert view[at + 1] == "  'train' uses example.com/gpu"
    assert view[at + 2].startswith("  hint: convert the base and its overlays")
    hint = list(itertools.takewhile(lambda line: line.startswith("  "), view[at + 2 :]))
    assert " ".join(line.strip() for line in hint) == "hint: " + LONG_HINT.strip()
    assert all(cells(line) <= 60 for line in view)
    assert "; hint:" not in "\n".join(view)


def test_plain_output_keeps_each_finding_on_one_line() -> None:
    plain = text_format.render(_hinted(), "validate").splitlines()
    line = "deploy/train.yaml:3:5: DRA104 warning: container 'train' uses example.com/gpu"
    assert plain[0] == f"{line}; hint: {LONG_HINT}"


def test_convert_lays_its_findings_out_for_a_terminal_and_not_for_a_pipe(tmp_path: Path) -> None:
    """convert prints its findings on stderr: on a terminal (``--color always`` stands
    for one here) each hint goes below its finding, wrapped to COLUMNS; in a pipe or a
    CI log each finding stays one line, as before."""
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    # a held kustomize unit: its DRA222 has a long message and hint
    patch = tmp_path / "examples" / "kustomize" / "overlays" / "prod" / "gpu-patch.yaml"
    patch.write_text(patch.read_text().replace("- name: ocr", "- name: warmup"))
    args = ["convert", str(tmp_path / "examples")]
    piped = invoke(args).stderr.splitlines()
    dra222 = next(line for line in piped if " DRA222 " in line)
    assert "; hint: change that construct" in dra222
    assert len(dra222) > 300
    shown = invoke([*args, "--color", "always"], env={"COLUMNS": "72"}).stderr
    lines = SGR.sub("", shown).splitlines()
    lines = lines[: next(i for i, x in enumerate(lines) if x.startswith("dra-migrate: "))]
    assert all(cells(line) <= 72 for line in lines), [x for x in lines if cells(x) > 72]
    at = next(i for i, line in enumerate(lines) if " DRA222 " in line)
    hint = next(i for i in range(at, len(lines)) if lines[i].startswith("  hint: "))
    assert not any("hint:" in line for line in lines[at:hint])
    assert lines[hint].startswith("  hint: change that construct")
    assert "\x1b[31mDRA222 error\x1b[0m" in shown  # coloured as the terminal view is
