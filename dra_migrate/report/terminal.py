"""The terminal view: the text view's content laid out with rich (tables that fit the
terminal's width, severities in colour), and the choice between it and the plain text.

The content comes from ``text_format.show``, the one place that says what the text
view holds: this module only lays it out. rich is imported inside the functions that
lay out, never by importing this module (a run that is not on a terminal never pays
for it: tests/cli/test_startup.py).
"""

from __future__ import annotations

import io
import os
import re

from dra_migrate.report import text_format
from dra_migrate.report.findings import escape, inert

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO

    from dra_migrate.report.model import Report

CHOICES = ("auto", "always", "never")  # --color
MIN_WIDTH = 40  # a terminal narrower than this gets lines of this width
DEFAULT_WIDTH = 80  # when the terminal does not say its width
INDENT = "  "  # before the continuation lines of a wrapped line
HANGING = len(INDENT) + 3  # cells a wrapped line leaves free (``spans``)
UNBOUNDED = 1 << 20  # a width no table needs: rich measures a table's words within it
# text_format's styles, as rich styles: severities by colour, titles bold
# spaces at the end of a line, before the SGR sequences that end it
_TRAILING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)
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
    report: Report, command: str, stream: TextIO, choice: str, environ: Mapping[str, str]
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
                self.rich.print(Text.assemble(INDENT, piece) if i else piece)

    def layout(self, columns: tuple[str, ...], cells: list[tuple[str, ...]]) -> None:
        """A framed table, as wide as it needs up to the terminal's width, its cells
        wrapped at spaces; when even that does not fit (no word of a cell broken),
        each row in a frame of its own, one line a column (``COLUMN  value``). Cells
        that are longer than the room left are folded, never cut. In a frame no cell
        starts a line: none can read as a CI runner's workflow command."""
        from rich.measure import Measurement

        table = self._table(columns)
        for row in cells:
            table.add_row(*(self._cell(cell) for cell in row))
        unbounded = self.rich.options.update_width(UNBOUNDED)  # measured as if room enough
        if Measurement.get(self.rich, unbounded, table).minimum > self.rich.width:
            table = self._table(("", ""), show_header=False)
            for row in cells:
                for i, (title, cell) in enumerate(zip(columns, row, strict=True)):
                    table.add_row(self._cell(title, STYLES["title"]), self._cell(cell))
                    table.rows[-1].end_section = i == len(columns) - 1
        self.rich.print(table)

    def _table(self, columns: tuple[str, ...], show_header: bool = True) -> Any:
        from rich import box
        from rich.table import Table

        table = Table(
            box=box.ROUNDED,
            header_style=STYLES["title"],
            show_header=show_header,
            safe_box=True,
        )
        for title in columns:
            table.add_column(self._cell(title), overflow="fold")
        return table

    @staticmethod
    def _cell(text: str, style: str = "") -> Any:
        from rich.text import Text

        return Text(inert(_safe(text), starts_line=False), style, overflow="fold")

    def text(self) -> str:
        """What rich wrote, without the spaces it leaves at the end of wrapped lines."""
        return _TRAILING.sub(r"\1", self.out.getvalue())
