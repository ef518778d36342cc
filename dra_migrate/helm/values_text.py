"""A Helm values file edited as text: keys set, scalars replaced, keys deleted, and every
comment and untouched byte kept (a reviewer sees the migration and nothing else).

The file is composed with PyYAML (``manifests/compose.py``: positions, duplicate keys
refused as DRA005, malformed YAML as DRA004) and changed by splices; a new key goes at
the end of the mapping it extends, in the file's own style, through ``convert/edit.py``
(``AppendEntry``, ``RemoveEntry`` for flow mappings, ``detect_style``, the renderers).
After every edit the text is composed again, so the next one sees the new positions.

What it does not edit, it refuses with ``InputProblem`` at the node's line:col:
an anchor, alias or merge key on the path (DRA008: the change would reach other keys
too), a path through a value that is neither a mapping nor null (DRA004), a values file
of several documents (DRA004).

Paths are tuples of keys (strings; a key may hold dots, ``nvidia.com/gpu``) and list
indices (ints).
"""

from __future__ import annotations

import dataclasses
import re

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from dra_migrate.convert import edit
from dra_migrate.convert.operations import AppendEntry, RemoveEntry
from dra_migrate.manifests import compose, sources
from dra_migrate.manifests.scalars import MERGE
from dra_migrate.manifests.sources import Document, Source, line_end, line_start
from dra_migrate.manifests.trees import content_end, entry_end, is_flow, to_data
from dra_migrate.report.findings import InputProblem, finding, has_unsafe

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

Path = tuple[str | int, ...]
MISSING = object()  # ``get`` of a path the file does not hold


def dotted(path: Path) -> str:
    """A path as Helm's ``--set`` writes it (``a.b[0].c``; a key with a dot escaped)."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out += ("." if out else "") + step.replace(".", "\\.")
    return out


class ValuesText:
    """One values file being edited. Not frozen: every edit replaces ``source``."""

    __slots__ = ("_doc", "source")

    def __init__(self, source: Source) -> None:
        self.source = source
        self._doc = self._compose()

    @classmethod
    def decode(cls, display: str, raw: bytes) -> ValuesText:
        return cls(sources.decode(display, raw))

    @property
    def text(self) -> str:
        return self.source.text

    def encode(self) -> bytes:
        return self.source.encode(self.source.text)

    @property
    def data(self) -> Any:
        """The file's values (go-yaml v2 resolution, as Helm reads them); {} when empty."""
        root = self._doc.root if self._doc is not None else None
        value = to_data(root) if root is not None else None
        return {} if value is None else value

    def get(self, path: Path) -> Any:
        """The value at ``path``, or ``MISSING``."""
        value: Any = self.data
        for step in path:
            if isinstance(step, int):
                if not isinstance(value, list) or not 0 <= step < len(value):
                    return MISSING
            elif not isinstance(value, dict) or step not in value:
                return MISSING
            value = value[step]
        return value

    # --- edits -------------------------------------------------------------------

    def set(self, path: Path, value: Any) -> None:
        """Set ``path`` to ``value``, creating the mappings it needs (block or flow, as
        the mapping it extends is written). A scalar or an empty collection there is
        replaced in place; a value of another shape is replaced by a new entry."""
        if not path:
            raise ValueError("an empty path")
        if _same(self.get(path), value):
            return
        root = self._doc.root if self._doc is not None else None
        if root is None:
            self._append_top(path, value)
            return
        node: Node = root
        for depth, step in enumerate(path):
            self._editable(node)
            if isinstance(step, int):
                if not isinstance(node, SequenceNode) or not 0 <= step < len(node.value):
                    self._refuse_shape(node, path[: depth + 1], "a list holding that item")
                child = node.value[step]
                if depth == len(path) - 1:
                    self._replace(None, child, value)
                    return
                node = child
                continue
            if _is_null(node):
                self._fill_null(node, path[depth:], value)
                return
            if not isinstance(node, MappingNode):
                self._refuse_shape(node, path[:depth], "a mapping")
            found = _entry(node, step)
            if found is None:
                self._apply([AppendEntry(node, step, _nest(path[depth + 1 :], value))])
                return
            key, child = found
            if depth == len(path) - 1:
                self._replace(key, child, value)
                return
            if _empty_flow(child) and not self._inside_flow(child):
                # ``resources: {}`` in a block mapping: the new keys go in block style
                self._replace(key, child, _nest(path[depth + 1 :], value))
                return
            node = child
        raise AssertionError("unreachable")  # pragma: no cover

    def delete(self, path: Path, prune: bool = True) -> bool:
        """Delete the key at ``path`` with its value (comment lines kept, a comment on
        the key's own line goes with it); with ``prune``, a mapping left empty goes
        too, up to the top-level key. False when the file does not hold the path."""
        found = self._parent_entry(path)
        if found is None:
            return False
        mapping, key, value = found
        self._editable(key)
        self._editable(value)
        if prune and len(path) > 1 and len(mapping.value) == 1 and isinstance(path[-2], str):
            parent = self._parent_entry(path[:-1])
            if parent is not None and not is_flow(parent[0]):
                return self.delete(path[:-1], prune)
        if is_flow(mapping):
            self._apply([RemoveEntry(mapping, key)])
            return True
        text = self.text
        start = line_start(text, key.start_mark.index)
        before = text[start : key.start_mark.index]
        if before.strip():
            raise InputProblem(
                self._at(
                    key,
                    "DRA008",
                    f"{dotted(path)} shares its line with other content "
                    "(the first key of a list item): it cannot be deleted as text",
                )
            )
        end = line_end(text, entry_end(key, value, text))
        kept = [
            line
            for line in text[start:end].splitlines(keepends=True)
            if line.lstrip().startswith("#")
        ]
        self._splice(start, end, "".join(kept))
        return True

    # --- internals ---------------------------------------------------------------

    def _compose(self) -> Document | None:
        docs = [d for d in compose.parse(self.source) if d.root is not None]
        if len(docs) > 1:
            root = docs[1].root
            assert root is not None
            raise InputProblem(self._at(root, "DRA004", "a values file of several YAML documents"))
        return docs[0] if docs else None

    def _at(self, node: Node, code: str, message: str, hint: str = "") -> Any:
        mark = node.start_mark
        return finding(code, self.source.path, mark.line + 1, mark.column + 1, message, hint)

    def _editable(self, node: Node) -> None:
        doc = self._doc
        if doc is not None and id(node) in doc.aliased:
            raise InputProblem(
                self._at(
                    node,
                    "DRA008",
                    "an anchor or alias on a values key the migration must edit",
                    "write the values out in full there, without & and *",
                )
            )
        if isinstance(node, MappingNode) and any(k.tag == MERGE for k, _v in node.value):
            raise InputProblem(
                self._at(
                    node,
                    "DRA008",
                    "a merge key (<<) in a values mapping the migration must edit",
                    "write the values out in full there, without & and *",
                )
            )
        if self.text[node.start_mark.index : node.start_mark.index + 1] in ("&", "*"):
            raise InputProblem(
                self._at(node, "DRA008", "an anchor on a values key the migration must edit")
            )

    def _refuse_shape(self, node: Node, path: Path, wanted: str) -> Any:
        raise InputProblem(
            self._at(
                node,
                "DRA004",
                f"{dotted(path) or 'the values file'} is not {wanted}: the recipe's keys "
                "cannot be set under it",
            )
        )

    def node(self, path: Path) -> Node | None:
        """The node at ``path`` in the current text, or None."""
        node = self._doc.root if self._doc is not None else None
        for step in path:
            if isinstance(step, int):
                if not isinstance(node, SequenceNode) or not 0 <= step < len(node.value):
                    return None
                node = node.value[step]
            else:
                found = _entry(node, step) if isinstance(node, MappingNode) else None
                if found is None:
                    return None
                node = found[1]
        return node

    def position(self, path: Path) -> tuple[int, int]:
        """1-based line and column of the key at ``path`` (of its value for a list item),
        or 1:1 when the path is not in the text."""
        parent = self.node(path[:-1]) if path else None
        found = (
            _entry(parent, path[-1])
            if path and isinstance(path[-1], str) and isinstance(parent, MappingNode)
            else None
        )
        node = found[0] if found is not None else self.node(path)
        if node is None:
            return 1, 1
        return node.start_mark.line + 1, node.start_mark.column + 1

    def _parent_entry(self, path: Path) -> tuple[MappingNode, Node, Node] | None:
        if not path or not isinstance(path[-1], str):
            return None
        parent = self.node(path[:-1])
        if not isinstance(parent, MappingNode):
            return None
        self._editable(parent)
        found = _entry(parent, path[-1])
        return None if found is None else (parent, *found)

    def _style(self) -> edit.Style:
        docs = [self._doc] if self._doc is not None else []
        return edit.detect_style(self.source, docs)

    def _apply(self, edits: list[Any]) -> None:
        docs = [self._doc] if self._doc is not None else []
        try:
            new = edit.apply(self.source, docs, edits)
        except edit.EditError as exc:
            node = edits[0].mapping
            problem = self._at(node, "DRA008", f"cannot be edited as text: {exc}")
            raise InputProblem(problem) from None
        self._replace_text(new)

    def _splice(self, start: int, end: int, new: str) -> None:
        text = self.text
        self._replace_text(text[:start] + new + text[end:])

    def _replace_text(self, text: str) -> None:
        self.source = dataclasses.replace(self.source, text=text)
        self._doc = self._compose()

    def _append_top(self, path: Path, value: Any) -> None:
        style = self._style()
        if isinstance(path[0], int):
            raise ValueError("a values file is a mapping, not a list")
        lines = edit.render_entry(path[0], _nest(path[1:], value), 0, style)
        text = self.text
        prefix = "" if not text or text.endswith("\n") else style.newline
        self._replace_text(text + prefix + "".join(line + style.newline for line in lines))

    def _replace(self, key: Node | None, node: Node, value: Any) -> None:
        """The value ``node`` (of ``key``, None for a list item) replaced by ``value``."""
        self._editable(node)
        style = self._style()
        collection = isinstance(value, (dict, list, tuple)) and bool(value)
        in_flow = self._inside_flow(node)
        plain_spot = isinstance(node, ScalarNode) or is_flow(node)
        if in_flow or style.json or (not collection and plain_spot):
            new = (
                edit.render_flow(value, style)
                if collection
                else _scalar(value, style, in_flow, node)
            )
            if _is_empty_value(node):  # ``key:`` with nothing after it
                self._splice(node.start_mark.index, node.start_mark.index, " " + new)
                return
            self._splice(node.start_mark.index, _node_end(node, self.text), new)
            return
        if key is None:
            raise InputProblem(
                self._at(node, "DRA008", "a list item's value cannot be replaced as text")
            )
        self._replace_block(key, node, value, style)

    def _replace_block(self, key: Node, node: Node, value: Any, style: edit.Style) -> None:
        """The value of a block mapping's ``key`` rewritten from its colon on: a scalar
        on the key's line, or a block on the lines below it; the comment that trailed
        the old value's first line stays on the key's line."""
        column = key.start_mark.column
        collection = isinstance(value, (dict, list, tuple)) and bool(value)
        body: list[str] = []
        inline = ""
        if isinstance(value, dict) and value:
            body = edit.render_mapping(value, column + style.indent, style)
        elif collection:
            body = edit.render_sequence(list(value), column + style.seq_offset, style)
        else:
            inline = " " + _scalar(value, style, False, node)
        text = self.text
        colon = text.index(":", key.end_mark.index)
        if _is_empty_value(node):
            end = colon + 1
        elif isinstance(node, ScalarNode) or is_flow(node):
            end = _node_end(node, text)
        else:
            end = content_end(node, text)
        first_line = text[colon + 1 : line_end(text, colon + 1)]
        tail = text[end : line_end(text, end)]
        comment = next((c.strip() for c in (first_line, tail) if c.strip().startswith("#")), "")
        at = line_end(text, end)
        block = "".join(line + style.newline for line in body)
        head = text[: colon + 1] + inline + ("  " + comment if comment else "")
        if at == len(text) and not text.endswith("\n"):
            self._replace_text(head + (style.newline + block.rstrip("\r\n") if body else ""))
            return
        self._replace_text(head + style.newline + block + text[at:])

    def _owner(self, key: Node) -> tuple[MappingNode, str] | None:
        root = self._doc.root if self._doc is not None else None
        stack = [root] if root is not None else []
        while stack:
            node = stack.pop()
            if isinstance(node, MappingNode):
                for k, v in node.value:
                    if k is key and isinstance(k, ScalarNode):
                        return node, k.value
                    stack.append(v)
            elif isinstance(node, SequenceNode):
                stack.extend(node.value)
        return None

    def _inside_flow(self, node: Node) -> bool:
        """Is ``node`` an item or a value of a flow collection (or a flow one itself)?"""
        root = self._doc.root if self._doc is not None else None
        stack: list[tuple[Node, bool]] = [(root, False)] if root is not None else []
        while stack:
            current, flow = stack.pop()
            if current is node:
                return flow
            inner = flow or (not isinstance(current, ScalarNode) and is_flow(current))
            if isinstance(current, MappingNode):
                stack.extend((v, inner) for _k, v in current.value)
            elif isinstance(current, SequenceNode):
                stack.extend((v, inner) for v in current.value)
        return False

    def _fill_null(self, node: Node, rest: Path, value: Any) -> None:
        """A null value on the path (``gpu:``, ``gpu: ~``) becomes the mappings it needs."""
        found = self._owner_of_value(node)
        if found is None:
            raise InputProblem(self._at(node, "DRA008", "a null list item cannot be filled"))
        key = found
        first = rest[0]
        if isinstance(first, int):
            self._refuse_shape(node, (), "a mapping")
        self._replace(key, node, _nest(rest, value))

    def _owner_of_value(self, node: Node) -> Node | None:
        root = self._doc.root if self._doc is not None else None
        stack = [root] if root is not None else []
        while stack:
            current = stack.pop()
            if isinstance(current, MappingNode):
                for k, v in current.value:
                    if v is node:
                        return k
                    stack.append(v)
            elif isinstance(current, SequenceNode):
                stack.extend(current.value)
        return None


def _entry(mapping: Node | None, name: str) -> tuple[Node, Node] | None:
    if not isinstance(mapping, MappingNode):
        return None
    for key, value in mapping.value:
        if isinstance(key, ScalarNode) and key.tag != MERGE and key.value == name:
            return key, value
    return None


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types (``True`` is not ``1`` here)."""
    import json

    return a is not MISSING and json.dumps(a, sort_keys=True, default=str) == json.dumps(
        b, sort_keys=True, default=str
    )


def _nest(path: Path, value: Any) -> Any:
    for step in reversed(path):
        if isinstance(step, int):
            raise ValueError("a list item the values file does not hold cannot be created")
        value = {step: value}
    return value


def _is_null(node: Node) -> bool:
    return (
        isinstance(node, ScalarNode)
        and not node.style
        and node.value in ("", "~", "null", "Null", "NULL")
    )


def _is_empty_value(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.value == "" and not node.style


def _empty_flow(node: Node) -> bool:
    return isinstance(node, (MappingNode, SequenceNode)) and is_flow(node) and not node.value


_BLOCK_INDICATOR = re.compile(r"[|>]")


def _node_end(node: Node, text: str) -> int:
    """Where a replaced value's text ends: a plain or quoted scalar ends at its mark;
    a block scalar (``|``) takes its lines."""
    if isinstance(node, ScalarNode) and node.style in ("|", ">"):
        return line_end(text, node.end_mark.index - 1) if node.end_mark.index else 0
    return node.end_mark.index


def _scalar(value: Any, style: edit.Style, flow: bool, old: Node) -> str:
    """A scalar's new text; a string replacing a quoted one keeps its quotes."""
    if isinstance(value, (dict, list, tuple)):  # an empty collection
        return "{}" if isinstance(value, dict) else "[]"
    if isinstance(value, str) and isinstance(old, ScalarNode) and old.style in ("'", '"'):
        if old.style == '"' or has_unsafe(value):
            return edit.double_quoted(value)
        return "'" + value.replace("'", "''") + "'"
    return edit.scalar_text(value, style, flow=flow)
