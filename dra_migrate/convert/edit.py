"""Stage 5, edit: turn plans into splices on the original text.

Nothing is dumped back through a YAML emitter: every byte outside the
changed regions stays as it was. Inserted text follows the file's own style
(indent width, sequence indentation, quoting, line endings, JSON or YAML),
and a comment on a removed line is kept: on the claim reference that replaces
the GPU line, or else on a line of its own.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from dra_migrate.convert.operations import (
    AddObject,
    AppendEntry,
    AppendItems,
    Edit,
    RemoveEntry,
    Replaced,
)
from dra_migrate.manifests.sources import Document, Source, line_end, line_start
from dra_migrate.manifests.trees import content_end, entry_end, is_flow, walk
from dra_migrate.report.findings import escape, has_unsafe, unsafe

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any


class EditError(Exception):
    """The plan cannot be applied to this text (a bug, or input the editor cannot place)."""


@dataclass(frozen=True, slots=True)
class Style:
    indent: int = 2  # columns from a key to the keys of its mapping value
    seq_offset: int = 0  # columns from a key to the dashes of its sequence value
    quote: str = "'"  # preferred quote for strings that need one
    quote_keys: bool = False
    quote_all: bool = False  # every string value is quoted in this file
    newline: str = "\n"
    json: bool = False


@dataclass(frozen=True, order=True, slots=True)
class Splice:
    """Replace text[start:end] with ``text``.

    At one offset, insertions go before a removal that starts there, and an
    insertion into an inner node before one into the node around it (``rank``
    is minus the target node's start), so nested additions stay nested.
    """

    start: int
    end: int
    rank: int
    order: int
    text: str


# --- style detection -------------------------------------------------------------


def detect_style(source: Source, docs: Iterable[Document]) -> Style:
    indents: Counter[int] = Counter()
    offsets: Counter[int] = Counter()
    quotes: Counter[str] = Counter()
    keys_quoted = keys_total = values_quoted = values_total = 0
    for root in (d.root for d in docs if d.root is not None):
        for node in walk(root):
            if not isinstance(node, MappingNode):
                continue
            for key, value in node.value:
                if isinstance(key, ScalarNode):
                    keys_total += 1
                    keys_quoted += key.style in ("'", '"')
                if isinstance(value, MappingNode) and value.value and not is_flow(value):
                    indents[value.value[0][0].start_mark.column - key.start_mark.column] += 1
                elif isinstance(value, SequenceNode) and value.value and not is_flow(value):
                    offsets[value.start_mark.column - key.start_mark.column] += 1
                elif isinstance(value, ScalarNode) and str(value.tag).endswith(":str"):
                    if value.style in ("'", '"'):
                        quotes[value.style] += 1
                    if not _is_number(value.value):
                        values_total += 1
                        values_quoted += value.style in ("'", '"')
    indent = _mode(indents, 2, lambda n: 1 <= n <= 8)
    offset = _mode(offsets, 0, lambda n: 0 <= n <= 8)
    quote = quotes.most_common(1)[0][0] if quotes else "'"
    return Style(
        indent=indent,
        seq_offset=offset,
        quote=quote,
        quote_keys=keys_total > 0 and keys_quoted / keys_total > 0.9,
        quote_all=values_total > 3 and values_quoted / values_total > 0.9,
        newline=source.newline,
        json=source.is_json,
    )


def _mode(counter: Counter[int], default: int, ok: Any) -> int:
    for value, _count in counter.most_common():
        if ok(value):
            return value
    return default


def _is_number(text: str) -> bool:
    return bool(re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?", text))


# --- scalar and collection rendering ---------------------------------------------

_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*(?:[ ][A-Za-z0-9_./()-]+)*")
_RESERVED = re.compile(
    r"(?i:y|n|yes|no|on|off|true|false|null|~)|[-+]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o[0-7]+"
)


def scalar_text(value: Any, style: Style, flow: bool = False, key: bool = False) -> str:
    if style.json:
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value is None:
        return "null"
    text = str(value)
    quoted = style.quote_keys if key else style.quote_all
    plain = not quoted and _PLAIN.fullmatch(text) and not _RESERVED.fullmatch(text)
    if plain and not (flow and any(c in text for c in ",[]{}")):
        return text
    if has_unsafe(text):
        return double_quoted(text)  # single quotes would fold line breaks and keep controls
    if "'" in text and '"' not in text and "\\" not in text:
        return double_quoted(text)
    if style.quote == "'" or '"' in text:
        return "'" + text.replace("'", "''") + "'"
    return double_quoted(text)


def double_quoted(text: str) -> str:
    """A YAML double-quoted scalar that loads back to exactly ``text``: backslash,
    double quote and every control, format or separator character escaped
    (YAML escapes, not JSON's: no surrogate pairs)."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif unsafe(char):
            out.append(escape(char))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


# a comment moved to an inserted line: the blanks before its ``#``, and the comment
Carried = list[tuple[str, str]]
# the place of a value in a generated object: its keys and indices from the top
Path = tuple[str | int, ...]
# comments moved onto scalar entries of a generated object (a count), by their path
Notes = Mapping[Path, Carried]
NO_NOTES: Notes = {}


def render_flow(value: Any, style: Style) -> str:
    if style.json:
        return json.dumps(value, separators=(", ", ": "))
    if isinstance(value, Mapping):
        inner = ", ".join(
            f"{scalar_text(k, style, True, key=True)}: {render_flow(v, style)}"
            for k, v in value.items()
        )
        return "{" + inner + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(render_flow(v, style) for v in value) + "]"
    return scalar_text(value, style, flow=True)


def render_entry(
    key: str, value: Any, column: int, style: Style, notes: Notes = NO_NOTES, at: Path = ()
) -> list[str]:
    """Lines of a block mapping entry whose key starts at ``column``; ``notes`` are the
    comments moved onto the scalar entries of the value rendered at ``at`` (its path:
    keys and indices), by the path of each entry."""
    pad = " " * column
    head = f"{pad}{scalar_text(key, style, key=True)}:"
    here = (*at, key)
    if isinstance(value, Mapping) and value:
        return [head, *render_mapping(value, column + style.indent, style, notes, here)]
    if isinstance(value, (list, tuple)) and value:
        return [head, *render_sequence(value, column + style.seq_offset, style, notes, here)]
    if here in notes:
        return _carry([f"{head} {render_flow(value, style)}"], 0, notes[here])
    if isinstance(value, str) and not style.json and _literal_ok(value):
        # a multi-line string (a CEL selector with // comments) as a literal block
        chomp = "" if value.endswith("\n") else "-"
        body = " " * (column + style.indent)
        lines = [body + line if line else "" for line in value.removesuffix("\n").split("\n")]
        return [f"{head} |{chomp}", *lines]
    return [f"{head} {render_flow(value, style)}"]


def _literal_ok(text: str) -> bool:
    """A literal block scalar loads back to exactly ``text``: several lines, nothing
    but printable characters and tabs, no leading space on the first line (it would
    need an indentation indicator), no blank last lines (they would need ``|+``)."""
    return (
        "\n" in text.rstrip("\n")
        and not text.endswith("\n\n")
        and not text.startswith((" ", "\t", "\n"))
        and not has_unsafe(text.replace("\n", "").replace("\t", ""))
    )


def render_mapping(
    value: Mapping[str, Any], column: int, style: Style, notes: Notes = NO_NOTES, at: Path = ()
) -> list[str]:
    lines: list[str] = []
    for key, item in value.items():
        lines.extend(render_entry(key, item, column, style, notes, at))
    return lines


def render_sequence(
    values: Sequence[Any], column: int, style: Style, notes: Notes = NO_NOTES, at: Path = ()
) -> list[str]:
    """Lines of block sequence items whose dashes sit at ``column``."""
    lines: list[str] = []
    pad = " " * column
    for index, item in enumerate(values):
        if isinstance(item, Mapping) and item:
            body = render_mapping(item, column + 2, style, notes, (*at, index))
            lines.append(f"{pad}- {body[0][column + 2 :]}")
            lines.extend(body[1:])
        elif isinstance(item, (list, tuple)) and item:
            body = render_sequence(item, column + 2, style, notes, (*at, index))
            lines.append(f"{pad}- {body[0][column + 2 :]}")
            lines.extend(body[1:])
        else:
            lines.append(f"{pad}- {render_flow(item, style)}")
    return lines


def comment_line(comment: str) -> str:
    """A generated comment: one line whatever the names in it hold."""
    return "# " + escape(comment)


def render_document(
    obj: Mapping[str, Any], comment: str, style: Style, notes: Notes = NO_NOTES
) -> str:
    nl = style.newline
    if style.json:
        return json.dumps(obj, indent=style.indent) + nl
    lines = [comment_line(comment)] if comment else []
    lines += render_mapping(obj, 0, style, notes)
    return nl.join(lines) + nl


# --- applying edits --------------------------------------------------------------


# (first old line, end old line, first new line, end new line), 0-based, end exclusive
Region = tuple[int, int, int, int]


def apply(source: Source, docs: Sequence[Document], edits: Sequence[Edit]) -> str:
    """The new text of ``source`` with every edit applied."""
    return apply_regions(source, docs, edits)[0]


def apply_regions(
    source: Source, docs: Sequence[Document], edits: Sequence[Edit]
) -> tuple[str, list[Region]]:
    """The new text, and the line ranges each splice changed (for a linear diff)."""
    if not edits:
        return source.text, []
    style = detect_style(source, docs)
    text = source.text
    # Work as if the file ended with a newline; take it away again at the end.
    missing_newline = bool(text) and not text.endswith("\n")
    if missing_newline:
        text += style.newline
    splices: list[Splice] = []
    order = 0

    def add(start: int, end: int, new: str, target: Node | None = None) -> None:
        nonlocal order
        rank = -target.start_mark.index if target is not None else 1
        splices.append(Splice(start, end, rank, order, new))
        order += 1

    moved, notes, skip = _moved_comments(text, edits, style)

    # Group per mapping so removals and additions on one flow mapping agree.
    removals: dict[int, list[RemoveEntry]] = {}
    additions: dict[int, list[AppendEntry]] = {}
    mappings: dict[int, MappingNode] = {}
    for edit in edits:
        if isinstance(edit, RemoveEntry):
            removals.setdefault(id(edit.mapping), []).append(edit)
            mappings[id(edit.mapping)] = edit.mapping
        elif isinstance(edit, AppendEntry):
            additions.setdefault(id(edit.mapping), []).append(edit)
            mappings[id(edit.mapping)] = edit.mapping

    for ident, mapping in mappings.items():
        removed = {id(e.key) for e in removals.get(ident, [])}
        added = additions.get(ident, [])
        if is_flow(mapping):
            for start, end, new in _flow_mapping(text, mapping, removed, added, style):
                add(start, end, new, mapping)
        else:
            block = _block_mapping(text, mapping, removed, added, style, moved, skip)
            for start, end, new in block:
                add(start, end, new, mapping)

    by_doc: dict[int, list[AddObject]] = {}
    for edit in edits:
        if isinstance(edit, AppendItems):
            start, end, new = _append_items(
                text, edit.sequence, edit.values, style, moved=moved.get(id(edit), [])
            )
            add(start, end, new, edit.sequence)
        elif isinstance(edit, AddObject):
            by_doc.setdefault(id(edit.workload.doc), []).append(edit)

    for adds in by_doc.values():
        for edit in adds:
            workload = edit.workload
            if workload.list_item:
                from dra_migrate.manifests.trees import get

                seq = get(workload.doc.root, "items")
                assert isinstance(seq, SequenceNode)
                item = {(0, *path): c for path, c in notes.get(id(edit), {}).items()}
                start, end, new = _append_items(
                    text, seq, (edit.obj,), style, edit.comment, notes=item
                )
                add(start, end, new, seq)
                continue
            if style.json:
                raise EditError("a JSON file holds one object; there is no place for another")
            at = workload.doc.end if workload.doc.end < len(source.text) else len(text)
            prefix = "" if at == 0 or text[at - 1] == "\n" else style.newline
            add(
                at,
                at,
                prefix
                + "---"
                + style.newline
                + render_document(edit.obj, edit.comment, style, notes.get(id(edit), {})),
            )

    result, regions = _splice(text, splices)
    if missing_newline:  # the file had no final newline: neither has the output
        result = result[: -len(style.newline)] if result.endswith(style.newline) else result
    return result, regions


def _splice(text: str, splices: list[Splice]) -> tuple[str, list[Region]]:
    out: list[str] = []
    regions: list[Region] = []
    pos = 0
    old_lines = new_lines = 0  # newlines before pos in the old text, and in the new one
    for s in sorted(splices):
        if s.start < pos:
            raise EditError(f"overlapping edits at offset {s.start}")
        gap = text.count("\n", pos, s.start)
        old_lines += gap
        new_lines += gap
        removed = text.count("\n", s.start, s.end)
        added = s.text.count("\n")
        # the lines holding the splice's start and end, in both texts
        regions.append((old_lines, old_lines + removed + 1, new_lines, new_lines + added + 1))
        old_lines += removed
        new_lines += added
        out.append(text[pos : s.start])
        out.append(s.text)
        pos = s.end
    out.append(text[pos:])
    return "".join(out), regions


def _lines(lines: list[str], style: Style) -> str:
    return "".join(line + style.newline for line in lines)


def _moved_comments(
    text: str, edits: Sequence[Edit], style: Style
) -> tuple[dict[int, Carried], dict[int, dict[Path, Carried]], set[int]]:
    """The comments on removed lines that move: onto the count of a generated template
    that the removed line asked for (per ``AddObject``, by the count's path), else onto
    the item replacing the line (a comment on ``nvidia.com/gpu: 1`` follows the claim
    reference), per edit; and the offsets of the lines they leave. A comment moves only
    between block lines, and only off a line that is removed; anywhere else it stays
    where it was, on a line of its own."""
    removed: list[tuple[int, int]] = []
    for edit in edits:
        if isinstance(edit, RemoveEntry) and not is_flow(edit.mapping):
            for key, value in edit.mapping.value:
                if key is edit.key:
                    start = line_start(text, key.start_mark.index)
                    removed.append((start, line_end(text, entry_end(key, value, text))))
    moved: dict[int, Carried] = {}
    notes: dict[int, dict[Path, Carried]] = {}
    skip: set[int] = set()
    if style.json:
        return moved, notes, skip
    # is [start, end) inside a removed range? The ranges by start, with the furthest
    # end among those that start there or before: one bisection a question (a big
    # stream has thousands of edits)
    removed.sort()
    starts = [a for a, _b in removed]
    reach = list(itertools.accumulate((b for _a, b in removed), max))

    def inside_removed(start: int, end: int) -> bool:
        at = bisect.bisect_right(starts, start) - 1
        return at >= 0 and reach[at] >= end

    def carry(replaces: Replaced) -> Carried:
        carried: Carried = []
        for mapping, key, value in replaces:
            if is_flow(mapping):
                continue
            start = line_start(text, key.start_mark.index)
            end = line_end(text, entry_end(key, value, text))
            if not inside_removed(start, end):
                continue
            at = start
            for raw in text[start:end].splitlines(keepends=True):
                line = raw.rstrip("\r\n")
                comment = None if line.lstrip().startswith("#") else _trailing_comment(line)
                if comment and at not in skip:
                    before = line[: len(line) - len(comment)]
                    gap = before[len(before.rstrip()) :] or " "
                    if all(c != comment for _g, c in carried):
                        carried.append((gap, comment))
                    skip.add(at)
                at += len(raw)
        return carried

    for edit in edits:  # the counts first: a comment there is about the number
        if isinstance(edit, AddObject):
            found = {path: c for path, replaces in edit.counts if (c := carry(replaces))}
            if found:
                notes[id(edit)] = found
    for edit in edits:
        if isinstance(edit, AppendEntry):
            target: Node = edit.mapping
        elif isinstance(edit, AppendItems):
            target = edit.sequence
        else:
            continue
        if is_flow(target):
            continue
        carried = carry(edit.replaces)
        if carried:
            moved[id(edit)] = carried
    return moved, notes, skip


def _carry(lines: list[str], at: int, carried: Carried) -> list[str]:
    """``lines`` with the moved comments on line ``at`` (the last one trailing it, any
    before it on lines of their own above it)."""
    if not carried:
        return lines
    pad = lines[at][: len(lines[at]) - len(lines[at].lstrip(" "))]
    above = [pad + comment for _gap, comment in carried[:-1]]
    gap, last = carried[-1]
    return [*lines[:at], *above, lines[at] + gap + last, *lines[at + 1 :]]


def _block_mapping(
    text: str,
    mapping: MappingNode,
    removed: set[int],
    added: list[AppendEntry],
    style: Style,
    moved: Mapping[int, Carried],
    skip: set[int],
) -> list[tuple[int, int, str]]:
    result: list[tuple[int, int, str]] = []
    column = mapping.value[0][0].start_mark.column if mapping.value else mapping.start_mark.column
    for key, value in mapping.value:
        if id(key) not in removed:
            continue
        key_at = key.start_mark.index
        start = line_start(text, key_at)
        if text[start:key_at].strip() not in ("", "-"):
            raise EditError("a removed key shares its line with other content")
        if text[start:key_at].strip() == "-":
            raise EditError("a removed key starts a sequence item")
        end = line_end(text, entry_end(key, value, text))
        kept = _kept_comments(text, start, end, " " * key.start_mark.column, style, skip)
        result.append((start, end, kept))
    if added:
        at = line_end(text, content_end(mapping, text))
        lines: list[str] = []
        for edit in added:
            rendered = render_entry(edit.key, edit.value, column, style)
            # the comments go to the first item of a list value (the claim reference)
            item = 1 if len(rendered) > 1 and isinstance(edit.value, list) else 0
            lines.extend(_carry(rendered, item, moved.get(id(edit), [])))
        prefix = "" if at == 0 or text[at - 1] == "\n" else style.newline
        result.append((at, at, prefix + _lines(lines, style)))
    return result


def _kept_comments(
    text: str, start: int, end: int, pad: str, style: Style, skip: Set[int] = frozenset()
) -> str:
    """The comments of the removed lines text[start:end], each on a line of its own
    (but those of lines in ``skip``: they moved to an inserted line)."""
    kept: list[str] = []
    at = start
    for raw in text[start:end].splitlines(keepends=True):
        line_at, at = at, at + len(raw)
        line = raw.rstrip("\r\n")
        if line.lstrip().startswith("#"):
            kept.append(line)
            continue
        comment = _trailing_comment(line)
        if comment and line_at not in skip:
            kept.append(pad + comment)
    return _lines(kept, style)


def _trailing_comment(line: str) -> str | None:
    quote: str | None = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                if quote == "'" and line[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                quote = None
        elif c in "'\"" and (i == 0 or line[i - 1] in " \t:[{,-"):
            quote = c
        elif c == "#" and i > 0 and line[i - 1] in " \t":
            return line[i:]
        i += 1
    return None


def _flow_mapping(
    text: str, mapping: MappingNode, removed: set[int], added: list[AppendEntry], style: Style
) -> list[tuple[int, int, str]]:
    entries = mapping.value
    start, end = mapping.start_mark.index, mapping.end_mark.index
    pretty = style.json and text.count("\n", start, end) > 0
    column = (
        entries[0][0].start_mark.column if entries else mapping.start_mark.column + style.indent
    )
    new_entries = [
        f"{scalar_text(e.key, style, True, key=True)}: "
        + (_indent_json(e.value, column, style) if pretty else render_flow(e.value, style))
        for e in added
    ]
    kept = [i for i, (k, _v) in enumerate(entries) if id(k) not in removed]
    if not kept:
        padded = text[start + 1 : start + 2] == " "
        pad = " " if padded and new_entries else ""
        return [(start + 1, end - 1, pad + ", ".join(new_entries) + pad)]
    result: list[tuple[int, int, str]] = []
    i = 0
    while i < len(entries):
        if id(entries[i][0]) not in removed:
            i += 1
            continue
        j = i
        while j + 1 < len(entries) and id(entries[j + 1][0]) in removed:
            j += 1
        result.extend(_flow_cut(text, entries, kept, i, j, style))
        i = j + 1
    if new_entries:
        last_key, last_value = entries[kept[-1]]
        at = last_value.end_mark.index
        multiline = text.count("\n", start, last_key.start_mark.index) > 0
        trailing = re.match(r"[ \t]*,", text[at:end])  # a comma after the last entry
        if multiline:
            pad = style.newline + " " * last_key.start_mark.column
            if trailing:  # keep the file's trailing-comma style
                at += trailing.end()
                new = "".join(pad + e + "," for e in new_entries)
            else:
                new = "".join("," + pad + e for e in new_entries)
        else:
            new = "".join(", " + e for e in new_entries)
        result.append((at, at, new))
    return result


def _own_lines(text: str, key: Node, value: Node) -> bool:
    """The entry starts its line and nothing but a comma or a comment follows it."""
    before = text[line_start(text, key.start_mark.index) : key.start_mark.index]
    rest = text[value.end_mark.index : line_end(text, value.end_mark.index)]
    return not before.strip() and bool(re.fullmatch(r"[ \t]*,?[ \t]*(#.*)?\r?\n?", rest))


def _flow_cut(
    text: str, entries: list[tuple[Node, Node]], kept: list[int], i: int, j: int, style: Style
) -> list[tuple[int, int, str]]:
    """Splices that take entries i..j out of a flow mapping with at least one kept entry."""
    before = [k for k in kept if k < i]
    after = [k for k in kept if k > j]
    run = entries[i : j + 1]
    if all(_own_lines(text, k, v) for k, v in run):
        # one entry a line: remove the lines, keep their comments as comment lines
        cut_from = line_start(text, run[0][0].start_mark.index)
        cut_to = line_end(text, run[-1][1].end_mark.index)
        pad = " " * run[0][0].start_mark.column
        cuts = [(cut_from, cut_to, _kept_comments(text, cut_from, cut_to, pad, style))]
        if not after and before:  # the last entries went: so goes the comma before them
            prev_end = entries[before[-1]][1].end_mark.index
            comma = re.match(r"[ \t]*,", text[prev_end:cut_from])
            if comma:
                cuts.append((prev_end, prev_end + comma.end(), ""))
        return cuts
    if before:
        cut_from = entries[before[-1]][1].end_mark.index
        cut_to = entries[j][1].end_mark.index
    else:
        cut_from = entries[i][0].start_mark.index
        cut_to = entries[after[0]][0].start_mark.index
    return [(cut_from, cut_to, _flow_comments(text[cut_from:cut_to], style))]


def _flow_comments(removed_text: str, style: Style) -> str:
    comments = [
        c for c in (_trailing_comment(" " + line) for line in removed_text.splitlines()) if c
    ]
    return "".join(f" {c}{style.newline}" for c in comments)


def _append_items(
    text: str,
    seq: SequenceNode,
    values: Sequence[Any],
    style: Style,
    comment: str = "",
    moved: Carried | None = None,
    notes: Notes = NO_NOTES,
) -> tuple[int, int, str]:
    if is_flow(seq):
        start, end = seq.start_mark.index, seq.end_mark.index
        if style.json and any(isinstance(v, Mapping) and len(v) > 3 for v in values):
            column = (
                seq.value[0].start_mark.column
                if seq.value
                else seq.start_mark.column + style.indent
            )
            rendered = [_indent_json(v, column, style) for v in values]
        else:
            rendered = [render_flow(v, style) for v in values]
        if not seq.value:
            return (start + 1, end - 1, ", ".join(rendered))
        last = seq.value[-1]
        at = last.end_mark.index
        multiline = text.count("\n", start, last.start_mark.index) > 0
        if multiline:
            pad = style.newline + " " * last.start_mark.column
            return (at, at, "".join("," + pad + r for r in rendered))
        return (at, at, "".join(", " + r for r in rendered))
    column = seq.start_mark.column
    at = line_end(text, content_end(seq, text))
    lines = [" " * column + comment_line(comment)] if comment else []
    rendered = render_sequence(list(values), column, style, notes)
    lines += _carry(rendered, 0, moved or [])
    prefix = "" if at == 0 or text[at - 1] == "\n" else style.newline
    return (at, at, prefix + _lines(lines, style))


def _indent_json(value: Any, column: int, style: Style) -> str:
    lines = json.dumps(value, indent=style.indent).split("\n")
    return (style.newline + " " * column).join(lines)
