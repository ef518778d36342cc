"""Stage 2, load: bytes to text to YAML node trees with exact positions.

The parser is used for structure and positions only; nothing is ever dumped
back. Every node keeps ``start_mark``/``end_mark`` (character offsets into the
decoded text), which is what the edit stage splices against.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from dra_migrate.findings import Finding, InputProblem, finding

BOM = "\ufeff"
_TRAILING_TAB = re.compile(r"\t(?=[ \t]*(?:#|\r?$))", re.M)
_DOC_SEPARATOR = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)
# Helm (Go template) actions: {{ .Values.x }}, {{- include ... }}, {{ if }}, {{/* */}}.
# Argo's {{inputs.parameters.x}} and {{workflow.name}} are not: no dot, no keyword.
_TEMPLATE_SYNTAX = re.compile(
    r"\{\{-?\s*(?:[.$]|/\*|(?:include|template|if|else|end|range|with|define|block|toYaml"
    r"|toJson|tpl|required|default|printf|quote|nindent|indent|lookup|fail)\b)"
)


@dataclass
class Source:
    """One input: a file, or the stream read from stdin (``path == "-"``)."""

    path: str
    text: str
    bom: bool = False
    newline: str = "\n"
    is_json: bool = False

    def encode(self, text: str) -> bytes:
        return ((BOM if self.bom else "") + text).encode("utf-8")


@dataclass
class Document:
    """One YAML document of a stream: its root node and where it ends."""

    index: int
    root: Node | None
    end: int  # offset where the document's own text ends (before the next separator)
    aliased: set[int] = field(default_factory=set)  # ids of nodes reachable more than once


def decode(path: str, raw: bytes) -> Source:
    """Decode bytes, keeping what the writer needs to give the bytes back."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputProblem(
            finding(
                "DRA002",
                path,
                1,
                1,
                "UTF-16 text; Kubernetes manifests here must be UTF-8",
                "save it as UTF-8",
            )
        )
    if b"\x00" in raw[:8192]:
        raise InputProblem(finding("DRA003", path, 1, 1, "binary file (NUL byte); left untouched"))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputProblem(
            finding("DRA002", path, line, col, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
        ) from None
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    crlf = text.count("\r\n")
    newline = "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"
    # JSON by name; a stream with no telling name (stdin) by its first character.
    # A .yaml file may well start with a flow mapping.
    named_yaml = path.endswith((".yaml", ".yml"))
    is_json = path.endswith(".json") or (not named_yaml and text.lstrip().startswith(("{", "[")))
    return Source(path=path, text=text, bom=bom, newline=newline, is_json=is_json)


def looks_like_template(text: str) -> bool:
    """Go template syntax outside comments (a cheap first look; see is_template)."""
    return any(True for _ in _template_actions(text))


def _template_actions(text: str) -> Iterator[int]:
    """Offsets of Helm template actions on lines that are not comments."""
    offset = 0
    for line in text.splitlines(keepends=True):
        if "{{" in line and not line.lstrip().startswith("#"):
            for match in _TEMPLATE_SYNTAX.finditer(line):
                yield offset + match.start()
        offset += len(line)


def is_template(source: Source) -> bool:
    """A Helm chart template, not a manifest: template actions that are YAML
    structure (``replicas: {{ .Values.n }}``, ``{{- if }}`` lines) or that make
    the file unparsable. Actions inside string values (a PrometheusRule's
    ``summary: "{{ $labels.node }}"``) are data of a manifest."""
    actions = list(_template_actions(source.text))
    if not actions:
        return False
    try:
        docs = parse(source)
    except InputProblem:
        return True
    spans = [
        (node.start_mark.index, node.end_mark.index)
        for doc in docs
        if doc.root is not None
        for node in walk(doc.root)
        if isinstance(node, ScalarNode)
    ]
    return any(not any(a <= at < b for a, b in spans) for at in actions)


def _yaml() -> YAML:
    yaml = YAML(typ="safe", pure=True)  # no comment gathering: the text keeps the comments
    yaml.allow_duplicate_keys = True  # duplicates are found on the node tree, with a better message
    return yaml


def parse(source: Source) -> list[Document]:
    """Compose every document of the stream, or raise ``InputProblem``."""
    # ruamel.yaml rejects a tab before a comment or at the end of a line, which
    # YAML allows (and kubectl reads); a space of the same width keeps every offset.
    text = _TRAILING_TAB.sub(" ", source.text)
    try:
        roots = list(_yaml().compose_all(text))
    except MarkedYAMLError as exc:
        raise InputProblem(_syntax_finding(source, exc)) from None
    except YAMLError as exc:  # pragma: no cover - unmarked errors are rare
        raise InputProblem(finding("DRA004", source.path, 1, 1, f"malformed YAML: {exc}")) from None
    except RecursionError:
        raise InputProblem(
            finding("DRA004", source.path, 1, 1, "YAML nested too deeply to process")
        ) from None
    docs: list[Document] = []
    for index, root in enumerate(roots):
        _unmark_folds(root)
        _check_duplicates(source, root)
        docs.append(Document(index=index, root=root, end=0, aliased=_aliased(root)))
    _set_ends(text, docs)
    return docs


def walk(root: Node) -> Iterator[Node]:
    """Every node of a tree once (an aliased node is shared, not repeated)."""
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, MappingNode):
            for key, value in reversed(node.value):
                stack.extend((value, key))
        elif isinstance(node, SequenceNode):
            stack.extend(reversed(node.value))


def _unmark_folds(root: Node) -> None:
    """ruamel.yaml's round-trip composer marks the line folds of ``>`` scalars with
    BEL characters (to dump them back folded); the value itself has none."""
    for node in walk(root):
        if isinstance(node, ScalarNode) and node.style == ">" and "\a" in node.value:
            node.value = node.value.replace("\a", "")


def _syntax_finding(source: Source, exc: MarkedYAMLError) -> Finding:
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = exc.problem or exc.context or "malformed YAML"
    if "\t" in problem or "'\\t'" in problem:
        return finding("DRA006", source.path, line, col, "tab character where YAML needs spaces")
    what = "JSON" if source.is_json else "YAML"
    context = f" ({exc.context})" if exc.context and exc.problem else ""
    return finding("DRA004", source.path, line, col, f"malformed {what}: {problem}{context}")


def _check_duplicates(source: Source, root: Node) -> None:
    for node in walk(root):
        if not isinstance(node, MappingNode):
            continue
        keys: dict[Any, Node] = {}
        for key, _value in node.value:
            if isinstance(key, ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                ident = key.value
                if ident in keys:
                    first = keys[ident].start_mark
                    raise InputProblem(
                        finding(
                            "DRA005",
                            source.path,
                            key.start_mark.line + 1,
                            key.start_mark.column + 1,
                            f"duplicate key {ident!r} (first at line {first.line + 1})",
                        )
                    )
                keys[ident] = key


def _aliased(root: Node) -> set[int]:
    """Ids of nodes that appear more than once in the tree (anchors with aliases)."""
    counts: dict[int, int] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        counts[id(node)] = counts.get(id(node), 0) + 1
        if counts[id(node)] > 1:
            continue
        if isinstance(node, MappingNode):
            for key, value in node.value:
                stack.append(value)
                stack.append(key)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return {ident for ident, count in counts.items() if count > 1}


def _set_ends(text: str, docs: list[Document]) -> None:
    for doc in docs:
        if doc.root is None:
            continue
        last = content_end(doc.root, text)
        sep = _DOC_SEPARATOR.search(text, line_end(text, last))
        doc.end = sep.start() if sep else len(text)


# --- node helpers: read a composed tree without constructing Python objects ---


def line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def line_end(text: str, index: int) -> int:
    """Offset just after the newline of the line holding ``index`` (or len(text))."""
    if index > 0 and text[index - 1] == "\n":
        return index
    nl = text.find("\n", index)
    return len(text) if nl < 0 else nl + 1


_ALIAS_TOKEN = re.compile(r"\*[^\s,\[\]{}]+")


def _empty(node: Node) -> bool:
    """A value written as nothing at all (``key:``): its marks lie at the next token."""
    return isinstance(node, ScalarNode) and node.value == "" and node.style is None


def entry_end(key: Node, value: Node, text: str) -> int:
    """Offset just after the last character of a mapping entry, in this text.

    An alias value (``requests: *req``) is a node that lives at its anchor,
    earlier in the file: the entry ends with the alias token. An empty value
    ends with its key.
    """
    key_end: int = key.end_mark.index
    if value.start_mark.index < key_end:
        alias = _ALIAS_TOKEN.search(text, key_end)
        return alias.end() if alias else key_end
    if _empty(value):
        return key_end
    return content_end(value, text)


def content_end(node: Node, text: str) -> int:
    """Offset just after the last character of the node's own content.

    A block collection's end mark lies at the next token, after blank lines
    and comments that belong to whatever follows; the last leaf's end does not.
    """
    if isinstance(node, MappingNode) and node.value and node.flow_style is not True:
        key, value = node.value[-1]
        return entry_end(key, value, text)
    if isinstance(node, SequenceNode) and node.value and node.flow_style is not True:
        item = node.value[-1]
        bound = content_end(node.value[-2], text) if len(node.value) > 1 else node.start_mark.index
        if item.start_mark.index < bound:  # an alias item (- *name)
            alias = _ALIAS_TOKEN.search(text, bound)
            return alias.end() if alias else bound
        return content_end(item, text)
    end: int = node.end_mark.index
    return end


def is_seq(node: Node | None) -> bool:
    return isinstance(node, SequenceNode)


def is_flow(node: Node) -> bool:
    return bool(getattr(node, "flow_style", False))


def scalar(node: Node | None) -> str | None:
    if isinstance(node, ScalarNode):
        value: str = node.value
        return value
    return None


def entries(node: Node | None) -> Iterator[tuple[str, Node, Node]]:
    """(key text, key node, value node) of a mapping node; other keys skipped."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                yield key.value, key, value


def get(node: Node | None, key: str) -> Node | None:
    for name, _key, value in entries(node):
        if name == key:
            return value
    return None


def get_path(node: Node | None, *keys: str) -> Node | None:
    for key in keys:
        node = get(node, key)
        if node is None:
            return None
    return node


def has_merge(node: Node | None) -> bool:
    return isinstance(node, MappingNode) and any(
        getattr(k, "tag", None) == "tag:yaml.org,2002:merge" or scalar(k) == "<<"
        for k, _ in node.value
    )


def items(node: Node | None) -> list[Node]:
    return list(node.value) if isinstance(node, SequenceNode) else []


def to_python(node: Node | None) -> Any:
    """A plain Python value (strings for scalars; enough for matching rules)."""
    if isinstance(node, MappingNode):
        return {scalar(k): to_python(v) for k, v in node.value if scalar(k) is not None}
    if isinstance(node, SequenceNode):
        return [to_python(v) for v in node.value]
    if isinstance(node, ScalarNode):
        return node.value
    return None


def position(node: Node) -> tuple[int, int]:
    mark = node.start_mark
    return mark.line + 1, mark.column + 1


_INT = re.compile(r"[-+]?(?:0|[1-9][0-9_]*)")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")


def to_data(node: Node | None) -> Any:
    """The value with YAML 1.2 core types (ints, floats, booleans, null), as the
    API server reads it: what JSON Schemas need. Unknown tags keep the text."""
    if isinstance(node, MappingNode):
        return {k.value: to_data(v) for k, v in node.value if isinstance(k, ScalarNode)}
    if isinstance(node, SequenceNode):
        return [to_data(v) for v in node.value]
    if not isinstance(node, ScalarNode):
        return None
    text: str = node.value
    tag = str(node.tag)
    if node.style in ("'", '"', "|", ">") or tag.endswith(":str"):
        return text
    if tag.endswith(":int") or (
        (tag.endswith(":resolve") or "!" not in tag) and _INT.fullmatch(text)
    ):
        try:
            return int(text.replace("_", ""))
        except ValueError:
            return text
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if _FLOAT.fullmatch(text) and any(c in text for c in ".eE"):
        return float(text)
    return text


def node_at(root: Node, path: tuple[str | int, ...]) -> Node:
    """The deepest node along ``path`` (a key's node when the key has no value)."""
    node = root
    for step in path:
        if isinstance(step, int) and isinstance(node, SequenceNode):
            if step >= len(node.value):
                break
            node = node.value[step]
            continue
        for key, _key_node, value in entries(node):
            if key == step:
                node = value
                break
        else:
            break
    return node


def key_at(root: Node, path: tuple[str | int, ...]) -> Node:
    """The key node of the last step of ``path`` when it is a mapping key; else the node."""
    if path and isinstance(path[-1], str):
        parent = node_at(root, path[:-1])
        for key, key_node, _value in entries(parent):
            if key == path[-1]:
                return key_node
    return node_at(root, path)
