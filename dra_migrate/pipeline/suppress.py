"""Suppressions: findings silenced by ignore comments and ``.dra-migrate.yaml`` entries.

Part of the report stage: nothing is lost, a silenced finding moves from the
findings to ``Report.suppressed`` (counted in every format's summary, listed
with ``--show-suppressed``).

- An inline comment ``# dra-migrate: ignore`` or ``# dra-migrate:
  ignore[DRA201,DRA208]`` on the first line of an object (or in the comment
  lines right above it) or on the line of one of its GPU requests silences
  those codes (all codes without brackets) for the whole object; on any other
  line, for the findings of that line. ``convert`` leaves an object whose
  ignore covers DRA401 (or all codes) as it is: it stays on the device plugin.
- An ``ignore`` entry of ``.dra-migrate.yaml`` with ``path`` (a gitignore-style
  pattern, relative to the folder of the file) and ``codes`` (all when absent).

Only those forms silence: nothing but the end of the line may follow the
marker, and a comment that starts like one in any other form (``ignore (only
DRA205)``, ``ignore:DRA205``, ``ignore[DRA205`` or text after it) silences
nothing and is a warning (DRA405). A marker counts only in a real YAML
comment: inside a quoted or block scalar it is text, also in a file that does
not parse (its scalars are found by the scanner, up to where it fails).

An ignore that silences nothing in a run that can report its codes is a note
(DRA402 inline, DRA403 in the config), so stale ones get cleaned up; an
unknown code in an ignore is a warning (DRA404).
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field

from dra_migrate.convert.mapping import Config, IgnoreEntry
from dra_migrate.report.findings import CODES, Finding, InputProblem, finding
from dra_migrate.report.model import HELD, FileResult, Report, Suppressed

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

if TYPE_CHECKING:  # the parser is imported where a file with ignore comments is parsed
    from yaml.nodes import Node

    from dra_migrate.manifests import sources

# files with an ignore comment are read even when they mention no GPU (a stale ignore is a note)
MARKER = b"dra-migrate"  # every ignore comment, in any form, holds it: what a byte search looks for
_MARK = re.compile(rb"dra-migrate[ \t]*:?[ \t]*(?i:ignore)")
# what starts like an ignore comment, in any form (the colon forgotten, any case)
_COMMENT = re.compile(r"(?:^|(?<=[ \t]))#[ \t]*dra-migrate[ \t]*:?[ \t]*(?i:ignore)", re.MULTILINE)
# the documented forms, which alone silence: ignore, or ignore[CODES], then the line ends
_DOCUMENTED = re.compile(
    r"#[ \t]*dra-migrate:[ \t]*ignore(?:\[(?P<codes>[^\]\n]*)\])?[ \t]*\r?$", re.MULTILINE
)
_CODE = re.compile(r"^DRA\d{3}$")
HOLD = HELD  # an ignore of this code (or of all) keeps the object on the device plugin

# the series of codes a command reports: an ignore of other codes is never stale in it
SERIES = {"convert": "0129", "validate": "039"}


@dataclass(slots=True)
class Marker:
    """One ignore comment and what it covers. Not frozen: ``used`` collects the codes it
    silenced as findings are checked against it."""

    line: int
    col: int
    codes: frozenset[str] | None  # None: every code
    first: int  # lines covered, inclusive
    last: int
    whole_object: bool
    unknown: tuple[str, ...] = ()
    used: set[str] = field(default_factory=set)  # codes it silenced ("*" for any)
    malformed: str = ""  # not a documented form: what it says (it silences nothing)

    def covers(self, f: Finding) -> bool:
        return self.first <= f.line <= self.last and (self.codes is None or f.code in self.codes)

    @property
    def source(self) -> str:
        return f"{self.line}:{self.col}"


def has_marker(data: bytes) -> bool:
    """Whether ``data`` may hold an ignore comment (a cheap byte search)."""
    return MARKER in data and _MARK.search(data) is not None


def reportable(command: str, check: bool = False) -> frozenset[str]:
    series = SERIES.get(command, "")
    codes = {c for c in CODES if c[3] in series}
    if check:
        codes.add(HOLD)
    return frozenset(codes)


def _line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in re.finditer(r"\n", text))]


def _scalar_spans(docs: list[sources.Document]) -> list[tuple[int, int]]:
    from yaml.nodes import ScalarNode

    from dra_migrate.manifests import trees

    spans = [
        (node.start_mark.index, node.end_mark.index)
        for doc in docs
        if doc.root is not None
        for node in trees.walk(doc.root)
        if isinstance(node, ScalarNode)
    ]
    return sorted(spans)


def _inside(spans: list[tuple[int, int]], starts: list[int], index: int) -> bool:
    i = bisect_right(starts, index) - 1
    return i >= 0 and spans[i][0] <= index < spans[i][1]


def _objects(docs: list[sources.Document], lines: list[str]) -> list[tuple[set[int], int, int]]:
    """(head lines, first line, last line) of each object.

    The head is where an ignore comment covers the whole object: its first line,
    the comment lines right above it, and the lines of its apiVersion, kind and
    metadata.name.
    """
    from dra_migrate.manifests import locate, trees

    found = []
    for doc in docs:
        for obj in locate.objects(doc):
            first, last = object_lines(obj.root)
            head = {first}
            above = first
            while above > 1 and _comment_only(lines[above - 2]):
                above -= 1
                head.add(above)
            for key, key_node, value in trees.entries(obj.root):
                if key in ("apiVersion", "kind"):
                    head.add(key_node.start_mark.line + 1)
                elif key == "metadata":
                    name = next((k for n, k, _v in trees.entries(value) if n == "name"), None)
                    if name is not None:
                        head.add(name.start_mark.line + 1)
            found.append((head, first, last))
    return found


def _comment_only(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("#") or (stripped.startswith("---") and "#" in stripped)


def markers(
    text: str, docs: list[sources.Document] | None, request_lines: Iterable[int] = ()
) -> list[Marker]:
    """The ignore comments of a file. ``docs`` is None when the file does not parse."""
    hits = list(_COMMENT.finditer(text))
    if not hits:
        return []
    lines = text.split("\n")
    line_starts = _line_starts(text)
    # a file that does not parse: its scalars as the scanner finds them, and nothing
    # after where it fails counts (an unclosed quote may hold the rest of the file)
    spans, limit = (_scalar_spans(docs), len(text)) if docs is not None else _scanned(text)
    span_starts = [s for s, _e in spans]
    objects = _objects(docs, lines) if docs else []
    requests = set(request_lines)
    found = []
    for hit in hits:
        if hit.start() >= limit or (spans and _inside(spans, span_starts, hit.start())):
            continue  # inside a quoted or block scalar: text, not a comment
        line = bisect_right(line_starts, hit.start())
        col = hit.start() - line_starts[line - 1] + 1
        documented = _DOCUMENTED.match(text, hit.start())
        named = (
            [c.strip() for c in documented["codes"].split(",") if c.strip()]
            if documented is not None and documented["codes"] is not None
            else []
        )
        if documented is None or (documented["codes"] is not None and not named):
            said = text[hit.start() : line_end(text, hit.start())].rstrip("\r")
            found.append(Marker(line, col, frozenset(), line, line, False, malformed=said))
            continue
        codes: frozenset[str] | None = None
        unknown: tuple[str, ...] = ()
        if documented["codes"] is not None:
            unknown = tuple(c for c in named if c not in CODES)
            codes = frozenset(c for c in named if c in CODES)
        first, last, whole = line, line, False
        for head, start, end in objects:
            if line in head or (start <= line <= end and line in requests):
                first, last, whole = start, end, True
                break
        found.append(Marker(line, col, codes, first, last, whole, unknown))
    return found


def line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    return len(text) if end < 0 else end


def _scanned(text: str) -> tuple[list[tuple[int, int]], int]:
    """(spans of the scalars, where scanning failed) of a text that does not parse,
    as YAML's scanner reads it: up to its first error every comment is known."""
    import yaml

    spans: list[tuple[int, int]] = []
    scanner = yaml.SafeLoader(text)
    try:
        while scanner.check_token():
            token = scanner.get_token()
            if isinstance(token, yaml.ScalarToken):
                spans.append((token.start_mark.index, token.end_mark.index))
    except yaml.MarkedYAMLError as exc:
        marks = [m.index for m in (exc.context_mark, exc.problem_mark) if m is not None]
        return spans, min(marks, default=0)
    except yaml.reader.ReaderError as exc:  # a character YAML refuses: where it is
        return spans, exc.position
    except yaml.YAMLError:
        return spans, 0
    finally:
        scanner.dispose()
    return spans, len(text)


def object_lines(root: Node) -> tuple[int, int]:
    """First and last line of an object."""
    start, end = root.start_mark, root.end_mark
    first = start.line + 1
    last = end.line if end.column == 0 else end.line + 1
    return first, max(first, last)


def holds(found: list[Marker], root: Node) -> bool:
    """Whether an ignore keeps the object at ``root`` as it is (not converted)."""
    first, last = object_lines(root)
    return any(
        m.whole_object
        and (m.first, m.last) == (first, last)
        and (m.codes is None or HOLD in m.codes)
        for m in found
    )


def file_markers(result: FileResult) -> list[Marker]:
    """The ignore comments of a result's file: found in its text, or given with it (a
    stream processed part by part keeps its markers, not its text)."""
    if result.markers is not None:
        return result.markers
    if result.original is None or not has_marker(result.original):
        return []
    from dra_migrate.manifests import compose, sources

    try:
        source = sources.decode(result.path, result.original)
    except InputProblem:
        return []
    try:
        docs: list[sources.Document] | None = compose.parse(source)
    except (InputProblem, RecursionError):
        docs = None
    return markers(source.text, docs, {item.line for item in result.inventory})


def apply(report: Report, config: Config, command: str, check: bool = False) -> None:
    """Move silenced findings to ``report.suppressed``; add the notes on stale ignores."""
    codes_run = reportable(command, check)
    entries = [_Entry(e, config) for e in config.suppressions]
    for result in report.files:
        found = file_markers(result)
        kept: list[Finding] = []
        for f in result.findings:
            marker = next((m for m in found if m.covers(f)), None)
            if marker is not None:
                marker.used.add(f.code)
                report.suppressed.append(Suppressed(f, "inline", f"{result.path}:{marker.source}"))
                continue
            entry = next((e for e in entries if e.covers(f)), None)
            if entry is not None:
                entry.used = True
                report.suppressed.append(Suppressed(f, "config", entry.source))
                continue
            kept.append(f)
        for entry in entries:
            if entry.matches(result.path):
                entry.looked_at = True
                # an entry that keeps GPU requests on the device plugin is in use
                entry.used |= command == "convert" and entry.holding and bool(result.inventory)
        requests = {item.line for item in result.inventory} if command == "convert" else set()
        kept.extend(_inline_notes(result, found, codes_run, requests))
        result.findings = sorted(kept, key=lambda f: (f.line, f.col, f.code, f.message))
    # the run's findings at a file of their own: the configuration's (DRA532, DRA533)
    run_level: list[Finding] = []
    for f in report.findings:
        entry = next((e for e in entries if e.covers(f)), None) if f.path else None
        if entry is None:
            run_level.append(f)
            continue
        entry.used = entry.looked_at = True
        report.suppressed.append(Suppressed(f, "config", entry.source))
    report.findings[:] = run_level
    for entry in entries:
        report.findings.extend(entry.notes(codes_run))


def _inline_notes(
    result: FileResult, found: list[Marker], codes_run: frozenset[str], requests: set[int]
) -> list[Finding]:
    notes = []
    for m in found:
        if m.malformed:
            notes.append(
                finding(
                    "DRA405",
                    result.path,
                    m.line,
                    m.col,
                    f"{m.malformed!r} is not an ignore comment dra-migrate reads: it silences "
                    "nothing",
                    "write # dra-migrate: ignore[DRA205,DRA208] (or # dra-migrate: ignore for "
                    "every code), with nothing after it on the line",
                )
            )
            continue
        if m.unknown:
            notes.append(
                finding(
                    "DRA404",
                    result.path,
                    m.line,
                    m.col,
                    f"ignore names {', '.join(m.unknown)}, which is not a dra-migrate finding code",
                    "codes are DRA and three digits, listed in docs/findings.md",
                )
            )
        if not codes_run:
            continue
        holding = m.whole_object and (m.codes is None or HOLD in m.codes)
        if holding and any(m.first <= line <= m.last for line in requests):
            continue  # it keeps the object's GPU requests on the device plugin: in use
        if m.codes is None:
            stale = [] if m.used else ["every code"]
        else:
            stale = sorted((m.codes & codes_run) - m.used)
        if stale:
            what = "it" if m.codes is None else ", ".join(stale)
            notes.append(
                finding(
                    "DRA402",
                    result.path,
                    m.line,
                    m.col,
                    f"this ignore comment silences nothing here ({what}): no such finding "
                    f"{'in this object' if m.whole_object else 'on this line'} any more",
                    "remove it (or the codes that no longer apply)",
                )
            )
    return notes


def _matches(folder: Path, spec: Any, path: str) -> bool:
    from pathlib import Path  # a configuration with ignore entries only (resources.py)

    if not path or path == "-":
        return False
    try:
        relative = Path(os.path.abspath(path)).resolve().relative_to(folder).as_posix()
    except ValueError:
        return False
    return bool(spec.match_file(relative))


def config_holds(config: Config, path: str) -> bool:
    """Whether an ``ignore`` entry of all codes, or of DRA401, keeps the file as it is."""
    from pathlib import Path

    import pathspec

    folder = Path(config.path or ".").resolve().parent
    return any(
        (not e.codes or HOLD in e.codes)
        and _matches(folder, pathspec.GitIgnoreSpec.from_lines([e.path]), path)
        for e in config.suppressions
    )


class _Entry:
    """An ``ignore`` entry of the configuration, while a run is checked against it."""

    def __init__(self, entry: IgnoreEntry, config: Config) -> None:
        from pathlib import Path

        import pathspec

        self.entry = entry
        self.folder = Path(config.path or ".").resolve().parent
        self.spec = pathspec.GitIgnoreSpec.from_lines([entry.path])
        self.line, self.col = _position(config.path, entry.place)
        self.used = False
        self.looked_at = False
        self.display = _shown(config.path or ".dra-migrate.yaml")
        self.source = f"{self.display}:{self.line}:{self.col}"

    def matches(self, path: str) -> bool:
        return _matches(self.folder, self.spec, path)

    @property
    def holding(self) -> bool:
        return not self.entry.codes or HOLD in self.entry.codes

    def covers(self, f: Finding) -> bool:
        codes = self.entry.codes
        return (not codes or f.code in codes) and self.matches(f.path)

    def notes(self, codes_run: frozenset[str]) -> list[Finding]:
        found = []
        unknown = [c for c in self.entry.codes if c not in CODES]
        if unknown:
            found.append(
                finding(
                    "DRA404",
                    self.display,
                    self.line,
                    self.col,
                    f"ignore entry names {', '.join(unknown)}, which is not a dra-migrate "
                    "finding code",
                    "codes are DRA and three digits, listed in docs/findings.md",
                )
            )
        relevant = not self.entry.codes or any(c in codes_run for c in self.entry.codes)
        if codes_run and relevant and self.looked_at and not self.used:
            found.append(
                finding(
                    "DRA403",
                    self.display,
                    self.line,
                    self.col,
                    f"ignore entry for {self.entry.path} silences nothing: no file it matches has "
                    f"{'those findings' if self.entry.codes else 'findings'} any more",
                    "remove the entry (or the codes that no longer apply)",
                )
            )
        return found


def _shown(path: str) -> str:
    """A path relative to the working folder when it is inside it."""
    relative = os.path.relpath(os.path.abspath(path))
    return path if relative.startswith("..") else relative


def _position(path: str | None, index: int) -> tuple[int, int]:
    """Line and column of ``ignore[index]`` in the configuration file."""
    if path is None:
        return 1, 1
    from dra_migrate.manifests import compose, sources, trees

    try:
        with open(path, "rb") as handle:
            source = sources.decode(path, handle.read())
        docs = compose.parse(source)
        root = next(d.root for d in docs if d.root is not None)
        return trees.position(trees.node_at(root, ("ignore", index)))
    except (OSError, InputProblem, StopIteration, KeyError, IndexError, ValueError):
        return 1, 1
