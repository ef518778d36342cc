"""The shapes of a chart template a template edit recognises, read from its text.

A template is not YAML until it is rendered, so it is read as lines and actions: each
``{{ ... }}`` action with its offsets, the control structure around each line (``if``,
``else``, ``with``, ``range``, ``define``, ``end``), and the indentation of the lines
that hold YAML keys. ``template_edit.py`` uses what this module finds to splice the
switch into the text; anything it does not recognise exactly is reported by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# An action: {{ ... }} or {{- ... -}}, comments included (they never hold "}}").
ACTION = re.compile(r"\{\{-?(?P<body>.*?)-?\}\}", re.S)
_OPEN = re.compile(r"^\s*(if|with|range|define|block)\b")
_ELSE = re.compile(r"^\s*else\b")
_END = re.compile(r"^\s*end\b")
# What a count the edit can copy may hold: values, the chart, the release, a default,
# a cast; nothing that computes (arithmetic, helpers, lookup, tpl, variables).
COMPUTING = re.compile(
    r"\b(add1?|sub|mul|div|mod|max|min|floor|ceil|round|addf|subf|mulf|divf|maxf|minf|"
    r"include|template|tpl|lookup|len|atoi|float64)\b|\$[A-Za-z_]\w*"
)
UNSAFE = re.compile(r"\b(lookup|tpl)\b")
VAR = "$draGpus"  # the count a migrated template renders as claims (0: the switch is off)
CLAIM = "gpu"  # the pod's claim, as convert names it (convert/naming.py claim_name)


class Refused(Exception):
    """A construct the edit does not follow exactly: (path, line, col, what, values key)."""

    def __init__(self, path: str, line: int, what: str, key: str = "") -> None:
        super().__init__(what)
        self.path, self.line, self.what, self.key = path, line, what, key


@dataclass(frozen=True, slots=True)
class Control:
    """One open control structure around a line: its keyword, the action that opened
    it, and the ``else``/``else if`` actions before the line's branch."""

    keyword: str  # if, with, range, define, block
    opening: str  # the action's text as written: {{- if .Values.gpu.enabled }}
    elses: tuple[str, ...] = ()  # the else actions before the line, as written


@dataclass(frozen=True, slots=True)
class Line:
    number: int  # 0-based
    text: str  # without its line break
    start: int  # offset of its first character in the file
    indent: int
    actions_only: bool  # nothing but actions and blanks (no YAML of its own)
    controls: tuple[Control, ...]  # the structures open at the line's start


def lines_of(text: str) -> list[Line]:
    """The lines of a template, each with the control structures open at its start."""
    spans = [(m.start(), m.end(), m.group("body"), m.group(0)) for m in ACTION.finditer(text)]
    stack: list[tuple[str, str, list[str]]] = []  # (keyword, opening, elses)
    out: list[Line] = []
    offset = 0
    index = 0
    for number, raw in enumerate(text.split("\n")):
        end = offset + len(raw)
        controls = tuple(Control(k, o, tuple(e)) for k, o, e in stack)
        stripped = ACTION.sub("", raw).strip()
        out.append(
            Line(number, raw, offset, len(raw) - len(raw.lstrip(" ")), not stripped, controls)
        )
        while index < len(spans) and spans[index][0] < end + 1:
            _s, _e, body, whole = spans[index]
            if not body.lstrip().startswith("/*"):
                opened = _OPEN.match(body)
                if opened:
                    stack.append((opened.group(1), whole, []))
                elif _ELSE.match(body) and stack:
                    stack[-1][2].append(whole)
                elif _END.match(body) and stack:
                    stack.pop()
            index += 1
        offset = end + 1
    return out


def balanced(lines: list[Line], first: int, last: int) -> bool:
    """The lines first..last (inclusive) open and close the same structures: a splice
    around or after them stays in the same branch."""
    if last + 1 >= len(lines):
        return lines[first].controls == ()
    return lines[first].controls == lines[last + 1].controls


def key_of(line: Line) -> str | None:
    """The YAML key a line starts (``- `` of a sequence item aside), or None."""
    if line.actions_only:
        return None
    m = re.match(r"""^\s*(?:-\s+)?["']?([A-Za-z0-9_.\-/]+)["']?\s*:(?:\s|$)""", line.text)
    return m.group(1) if m else None


def value_of(line: Line) -> str:
    """The text after a line's first ``key:``, its comment aside."""
    m = re.match(r"""^\s*(?:-\s+)?["']?[A-Za-z0-9_.\-/]+["']?\s*:\s?(.*)$""", line.text)
    value = m.group(1) if m else ""
    cut = re.search(r"\s+#", value)
    return (value[: cut.start()] if cut else value).strip()


def block_end(lines: list[Line], index: int) -> int:
    """The last line of the block of the key at ``index``: the lines after it that are
    blank or indented more (action lines included), and, for a key with no value of its
    own, the sequence items at its own indent (``kubectl create -o yaml`` writes
    ``containers:`` and its ``- name:`` items at one indent)."""
    indent = lines[index].indent
    compact = _holds_compact(lines[index])
    last = index
    for line in lines[index + 1 :]:
        if not line.text.strip():
            continue
        if line.indent < indent or (line.indent == indent and not _compact_item(line, compact)):
            break
        if line.indent == indent and line.actions_only:
            if len(line.controls) > len(lines[index].controls):
                last = line.number  # it closes (or continues) a structure the block opened
            continue  # else an action between items: the block's when an item follows
        last = line.number
    return last


def parent(lines: list[Line], index: int) -> int | None:
    """The line of the key whose block holds line ``index``: the nearest line before
    it indented less, or, for a sequence item, the key at its own indent that holds
    it (its earlier items aside)."""
    indent = lines[index].indent
    item = _is_item(lines[index])
    for line in reversed(lines[:index]):
        if not line.text.strip() or line.actions_only:
            continue
        if line.indent < indent:
            return line.number
        if item and line.indent == indent:
            if _is_item(line):
                continue  # an earlier item of the same sequence
            return line.number if _holds_compact(line) else None
    return None


def _is_item(line: Line) -> bool:
    stripped = line.text.lstrip()
    return stripped == "-" or stripped.startswith("- ")


def _holds_compact(line: Line) -> bool:
    """A ``key:`` line with no value of its own (not an item): it may hold a sequence
    whose items sit at its indent."""
    if line.actions_only or _is_item(line) or key_of(line) is None:
        return False
    return value_of(line) == ""


def _compact_item(line: Line, compact: bool) -> bool:
    """A line at the key's indent that belongs to its block: an item of its sequence."""
    return compact and (_is_item(line) or line.actions_only)


def single_action(value: str) -> str | None:
    """The pipeline of a value that is one action, quoted or not (``{{ .Values.x }}``,
    ``"{{ .Values.x | default 1 }}"``), or the value itself when it is a plain integer;
    None for anything else."""
    if re.fullmatch(r"[0-9]+", value):
        return value
    m = re.fullmatch(r"""(["']?)\{\{-?\s*(?P<pipe>[^{}]*?)\s*-?\}\}\1""", value)
    if m is None:
        return None
    return m.group("pipe")


def root_scope(controls: tuple[Control, ...]) -> bool:
    """No ``with``, ``range`` or ``define`` around: ``.`` is the chart's root."""
    return all(c.keyword == "if" for c in controls)


def values_path(expr: str) -> str | None:
    """The values key of ``.Values.a.b`` (or ``$.Values.a.b``) an expression starts with."""
    m = re.match(r"^\$?\.Values\.([A-Za-z0-9_.]+)", expr.strip())
    return m.group(1) if m else None


def count_lines(controls: tuple[Control, ...], assignment: str, var: str = "$draGpus") -> str:
    """The template lines that set ``var`` on the same branch as a GPU line: its open
    ``if`` structures, as written, around ``{{- var = assignment }}``."""
    out = []
    for control in controls:
        out.append(_trimmed(control.opening))
        out.extend(_trimmed(e) for e in control.elses)
    out.append(f"{{{{- {var} = {assignment} }}}}")
    out.extend("{{- end }}" for _ in controls)
    return "\n".join(out)


def _trimmed(action: str) -> str:
    """An action with its left side trimming (it must emit nothing around it)."""
    body = ACTION.match(action)
    assert body is not None
    return "{{- " + body.group("body").strip() + " }}"
