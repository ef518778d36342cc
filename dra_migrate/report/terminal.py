"""The terminal view: the text view's content laid out with rich (tables that fit the
terminal's width, severities in colour), and the choice between it and the plain text.

The content comes from ``text_format.show``, the one place that says what the text
view holds: this module only lays it out. rich is imported inside the functions that
lay out, never by importing this module: a run that is not on a terminal never pays
for it (tests/report/test_terminal.py, test_rich_is_imported_only_to_lay_out).
"""

from __future__ import annotations

import dataclasses
import io
import os
import re

from dra_migrate.report import text_format
from dra_migrate.report.findings import escape, inert

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any

    from dra_migrate.report.findings import Finding
    from dra_migrate.report.model import Report

CHOICES = ("auto", "always", "never")  # --color
MIN_WIDTH = 40  # a terminal narrower than this gets lines of this width
DEFAULT_WIDTH = 80  # when the terminal does not say its width
INDENT = "  "  # before the continuation lines of a wrapped line
HANGING = len(INDENT) + 3  # cells a wrapped line leaves free (``spans``)
# spaces at the end of a line, before the SGR sequences that end it
_TRAILING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)
# text_format's styles, as rich styles: severities by colour, titles bold
STYLES = {
    "error": "red",
    "warning": "yellow",
    "info": "cyan",
    "title": "bold",
    "dim": "dim",
}


def wants_color(stream: object, choice: str, environ: Mapping[str, str]) -> bool:
    """Whether to colour what goes to ``stream``: ``always`` yes, ``never`` no, ``auto``
    only on a terminal, with ``NO_COLOR`` unset or empty and ``TERM`` not ``dumb``
    (https://no-color.org: ``NO_COLOR`` turns ``auto`` off, not ``always``)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if choice != "auto":
        raise ValueError(f"--color must be one of {', '.join(CHOICES)}, not {choice!r}")
    return _isatty(stream) and not environ.get("NO_COLOR") and environ.get("TERM") != "dumb"


def render(report: Report, command: str, *, width: int, color: bool) -> str:
    """The text view of ``report`` laid out with rich for a terminal ``width`` cells
    wide: every row, finding and count of ``text_format.render``, tables whose long
    cells are wrapped or folded (never cut), no line wider than ``width`` (at least
    ``MIN_WIDTH``); SGR colours when ``color``, no escape sequence otherwise."""
    console = _RichConsole(max(width, MIN_WIDTH), color)
    text_format.show(report, command, console)
    return inert(console.text())


def render_to(
    report: Report, command: str, stream: IO[str], choice: str, environ: Mapping[str, str]
) -> None:
    """Write the text view of ``report`` to ``stream``: laid out with rich on a terminal
    (or with ``--color always``), else exactly ``text_format.render``'s text (CI logs,
    pipes, files)."""
    color = wants_color(stream, choice, environ)
    if color or _isatty(stream):
        text = render(report, command, width=terminal_width(stream, environ), color=color)
    else:
        text = text_format.render(report, command)
    stream.write(text)
    stream.flush()


def render_findings(findings: list[Finding], *, width: int, color: bool) -> str:
    """Findings laid out as the terminal view lays them out (``_RichConsole.finding``):
    the finding on its line, its hint on the lines below, wrapped to ``width``."""
    console = _RichConsole(max(width, MIN_WIDTH), color)
    for f in findings:
        console.finding(f)
    return inert(console.text())


def findings_to(
    findings: list[Finding], stream: IO[str], choice: str, environ: Mapping[str, str]
) -> None:
    """Write ``findings`` to ``stream``: laid out for a terminal on one (or with
    ``--color always``), else one ``f.format()`` line each, as they always were (CI
    logs, pipes, files, editors' problem matchers)."""
    if not findings:
        return
    color = wants_color(stream, choice, environ)
    if color or _isatty(stream):
        text = render_findings(findings, width=terminal_width(stream, environ), color=color)
    else:
        text = "".join(inert(f.format()) + "\n" for f in findings)
    stream.write(text)
    stream.flush()


def lines_to(text: str, stream: IO[str], choice: str, environ: Mapping[str, str]) -> None:
    """Lines of prose (``convert``'s summary) to ``stream``: on a terminal (or with
    ``--color always``) each wrapped at spaces to its width, its continuation lines
    indented, never cut inside a word; elsewhere as they are, one line each."""
    if choice != "always" and not _isatty(stream):
        stream.write(inert(text) + "\n")
        stream.flush()
        return
    console = _RichConsole(max(terminal_width(stream, environ), MIN_WIDTH), color=False)
    for line in text.split("\n"):
        console.print(line)
    stream.write(inert(console.text()))
    stream.flush()


# git diff's colours: file headers bold, hunk headers cyan, removals red, additions green
_DIFF_COLORS = {"header": "\x1b[1m", "hunk": "\x1b[36m", "-": "\x1b[31m", "+": "\x1b[32m"}
_RESET = "\x1b[m"
_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def paint_diff(diff: str) -> str:
    """A unified diff in git's colours: SGR sequences around each line, its text
    unchanged. A hunk's lines are counted from its header, so that a removed line
    that reads ``-- x`` is a removal, not a file header."""
    lines = []
    old = new = 0  # lines of the current hunk still to come
    for line in diff.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        kind = ""
        if body.startswith("\\"):  # "\ No newline at end of file": no line of either side
            pass
        elif old or new:
            kind = body[:1] if body[:1] in "+-" else ""
            old -= kind != "+"
            new -= kind != "-"
        elif (hunk := _HUNK.match(body)) is not None:
            kind = "hunk"
            old = int(hunk[1] if hunk[1] is not None else 1)
            new = int(hunk[2] if hunk[2] is not None else 1)
        elif body.startswith(("--- ", "+++ ")):
            kind = "header"
        sgr = _DIFF_COLORS.get(kind, "")
        lines.append(f"{sgr}{body}{_RESET}{line[len(body) :]}" if sgr else line)
    return "".join(lines)


def terminal_width(stream: object, environ: Mapping[str, str]) -> int:
    """``COLUMNS`` when set to a positive number, else the width of the terminal behind
    ``stream``, else ``DEFAULT_WIDTH``."""
    columns = environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(stream.fileno()).columns  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return DEFAULT_WIDTH


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):  # no isatty, or closed
        return False


def frame(columns: int) -> int:
    """The cells a frame of ``columns`` columns takes: a line beside each column and
    one cell of padding on either side of each."""
    return 3 * columns + 1


def grid_widths(rows: list[list[str]], width: int) -> list[int] | None:
    """The widths of a grid of these rows (the titles first) in ``width`` cells: each
    column as wide as its widest cell when they fit; else the widest columns narrowed,
    one cell at a time, down to no narrower than their longest word; None when even
    that does not fit."""
    columns = range(len(rows[0]))
    natural = [max(_cell_len(row[i]) for row in rows) for i in columns]
    least = [
        max(_cell_len(word) for row in rows for word in [*row[i].split(), ""]) for i in columns
    ]
    room = width - frame(len(natural))
    if sum(least) > room:
        return None
    widths = list(natural)
    for _ in range(sum(widths) - room):
        widest = max((i for i in columns if widths[i] > least[i]), key=lambda i: widths[i])
        widths[widest] -= 1
    return widths


def _cell_len(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(text)


def _safe(text: str) -> str:
    """Each line of ``text`` escaped (``escape``): nothing reaches the terminal that
    could move its cursor or change its colours, whoever built the line."""
    return "\n".join(escape(line) for line in text.split("\n"))


class _RichConsole(text_format.Console):
    """``text_format.Console``'s calls, printed with rich to a string."""

    def __init__(self, width: int, color: bool) -> None:
        super().__init__()
        from rich.console import Console

        self.out = io.StringIO()
        self.pending: list[Any] = []  # lines (rich.text.Text) not printed yet
        self.rich = Console(
            file=self.out,
            width=width,
            height=25,  # given, so that rich never asks the terminal (nor TERM) for a size
            color_system="standard" if color else None,
            force_terminal=color,
            no_color=not color,  # given, so that NO_COLOR cannot override --color always
            highlight=False,
            soft_wrap=False,
            markup=False,
            emoji=False,
        )

    def print(self, text: str = "", style: str = "") -> None:
        self.spans((text, style))

    def finding(self, f: Finding, suffix: str = "") -> None:
        """The finding on its line (location, code, severity, message), short; its hint
        on a line of its own below, indented, both wrapped to the width (a hint can be
        several hundred characters: the plain view keeps it on the finding's line)."""
        super().finding(dataclasses.replace(f, hint=""), suffix)
        if f.hint:
            self.spans((f"{INDENT}hint: ", "dim"), (escape(f.hint), ""))

    def spans(self, *parts: tuple[str, str]) -> None:
        """Each line wrapped at spaces (a word longer than the width folded), its
        continuation lines indented. They are wrapped ``HANGING`` cells short: the
        last pass of ``inert`` may write a continuation line's leading ``:`` in three
        cells more (``\\x3a``), and the line still fits."""
        from rich.text import Text

        line = Text()
        for i, (text, style) in enumerate(parts):
            line.append(inert(_safe(text), starts_line=i == 0), STYLES.get(style, ""))
        for paragraph in line.split("\n", allow_blank=True):
            pieces = paragraph.wrap(self.rich, self.rich.width - HANGING, overflow="fold")
            for i, piece in enumerate(pieces or [Text()]):
                self.pending.append(Text.assemble(INDENT, piece) if i else piece)

    def layout(self, columns: tuple[str, ...], cells: list[tuple[str, ...]]) -> None:
        """A framed table, as wide as it needs up to the terminal's width, its cells
        wrapped at spaces; when even that does not fit (no word of a cell broken),
        each row in a frame of its own, one line a column (``COLUMN  value``). Cells
        that are longer than the room left are folded, never cut. In a frame no cell
        starts a line: none can read as a CI runner's workflow command."""
        rows = [[inert(_safe(c), starts_line=False) for c in row] for row in [columns, *cells]]
        widths = grid_widths(rows, self.rich.width)
        if widths is not None:
            table = self._table(widths)
            for i, row in enumerate(rows):
                table.add_row(*(self._cell(c, "" if i else STYLES["title"]) for c in row))
            table.rows[0].end_section = True  # under the titles
        else:
            keys = max(_cell_len(title) for title in rows[0])
            values = max((_cell_len(c) for row in rows[1:] for c in row), default=1)
            table = self._table([keys, min(values, self.rich.width - keys - frame(2))])
            for row in rows[1:] or [[""] * len(columns)]:  # no row: the titles still
                for title, cell in zip(rows[0], row, strict=True):
                    table.add_row(self._cell(title, STYLES["title"]), self._cell(cell))
                table.rows[-1].end_section = True
        self._flush()
        self.rich.print(table)

    @staticmethod
    def _table(widths: list[int]) -> Any:
        """A frame of columns of these widths; the titles are its first row (wrapped
        as the cells are, within the widths ``grid_widths`` gave)."""
        from rich import box
        from rich.table import Table

        table = Table(box=box.ROUNDED, show_header=False, safe_box=True)
        for width in widths:
            table.add_column(width=max(width, 1))
        return table

    @staticmethod
    def _cell(text: str, style: str = "") -> Any:
        from rich.text import Text

        return Text(text, style, overflow="fold")

    def _flush(self) -> None:
        """Print the lines said since the last table, at once (a print costs rich
        more than the lines it prints)."""
        if self.pending:
            from rich.text import Text

            self.rich.print(Text("\n").join(self.pending), no_wrap=True, crop=False)
            self.pending.clear()

    def text(self) -> str:
        """What rich wrote, without the spaces it leaves at the end of wrapped lines."""
        self._flush()
        return _TRAILING.sub(r"\1", self.out.getvalue())
