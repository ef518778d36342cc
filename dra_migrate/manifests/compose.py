"""Stage 2, load: YAML composition with exact positions. libyaml's composer (PyYAML's
pure-Python one where libyaml is missing) turns a ``Source`` into ``Document`` trees
whose marks are offsets into the text, every document or only those that mention a
needle (each composed alone, its marks moved to the whole text); Kubernetes' alias
and depth limits, duplicate keys, and the reader's findings.

The parser is used for structure and positions only; nothing is ever dumped back.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from dra_migrate.manifests.scalars import MERGE, KubeResolver
from dra_migrate.manifests.sources import Document, Source, foreign_break_at, line_end, line_start
from dra_migrate.manifests.trees import content_end, position
from dra_migrate.report.findings import Finding, InputProblem, finding

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any


_TRAILING_TAB = re.compile(r"\t(?=[ \t]*(?:#|\r?$))", re.M)
_DOC_SEPARATOR = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)


_CComposer: Any = None
if yaml.__with_libyaml__:

    class _LibyamlComposer(KubeResolver, yaml.CBaseLoader):
        pass

    _CComposer = _LibyamlComposer


class _PureComposer(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    yaml.composer.Composer,
    KubeResolver,
):
    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)


_FORCE_PURE = os.environ.get("DRA_MIGRATE_PURE_YAML", "") not in ("", "0")
_warned = False


def use_pure(pure: bool) -> None:
    """Force the pure-Python composer (how the tests exercise the fallback)."""
    global _FORCE_PURE
    _FORCE_PURE = pure


# what loads YAML as plain data (the package's own files, what helm and kubectl print):
# libyaml's loader where PyYAML has it, as documents are composed by libyaml
DATA_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def libyaml() -> bool:
    """Whether documents are composed by libyaml (C) rather than pure Python."""
    return _CComposer is not None and not _FORCE_PURE


def _composer(text: str) -> Any:
    """libyaml's composer, or PyYAML's pure-Python one where libyaml is missing."""
    global _warned
    if libyaml():
        return _CComposer(text)
    if not _warned and not _FORCE_PURE:
        _warned = True
        print(
            "dra-migrate: PyYAML was built without libyaml; using its pure-Python parser "
            "(the same results, several times slower)",
            file=sys.stderr,
        )
    return _PureComposer(text)


def load_data(raw: bytes | str, path: str) -> list[Any]:
    """Every document of a YAML stream as data, as Kubernetes reads it (go-yaml v2's
    resolution, merge keys resolved; ``trees.to_data``), through the limits every
    reader of YAML here applies (``parse``: go-yaml's alias limits, depth, duplicate
    keys); ``InputProblem`` (a finding on ``path``) when the stream breaks one. The one
    loader for YAML the tool reads as data: a 350-byte alias bomb costs nothing."""
    from dra_migrate.manifests.sources import decode
    from dra_migrate.manifests.trees import to_data

    data = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else raw
    return [to_data(doc.root) for doc in parse(decode(path, data)) if doc.root is not None]


def compose_all(text: str) -> list[Node | None]:
    """Every document's root node, None for an empty document."""
    loader = _composer(text)
    try:
        roots: list[Node | None] = []
        while loader.check_node():
            roots.append(loader.get_node())
        return roots
    finally:
        loader.dispose()


@contextlib.contextmanager
def no_collector() -> Iterator[None]:
    """Python's cyclic garbage collector paused for a while: composing and planning a
    file make many objects that live on and no reference cycles, and the collector,
    run meanwhile, would only walk the trees composed so far again and again (a
    third of the time of a big file). The few cycles made are collected after."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def parse(source: Source, needles: Iterable[str] | None = None) -> list[Document]:
    """Compose every document of the stream, or raise ``InputProblem``.

    With ``needles``, only the documents that contain one of them (or a
    backslash escape that could spell one) are composed, each on its own, and
    never a CustomResourceDefinition (recognised from its head: its
    descriptions mention resource names, its schema holds no workload). The
    others come back with no root. Marks, line numbers and ends are those of
    the whole text either way.
    """
    if needles is None:
        return _parse(source, None)
    wanted = tuple(needles)
    return _parse(source, lambda bounds: _wanted(source.text, bounds, wanted))


def parse_holding(source: Source, offsets: list[int]) -> list[Document]:
    """``parse`` of only the documents that hold one of the ``offsets``, each composed
    alone (template detection: the documents holding an action); the others come
    back with no root."""
    return _parse(source, lambda bounds: _holding(bounds, offsets))


def _holding(bounds: list[int], offsets: list[int]) -> list[bool]:
    """For each part between ``bounds``: does it hold one of the ``offsets``?"""
    held = [False] * (len(bounds) - 1)
    for at in offsets:
        held[bisect.bisect_right(bounds, at) - 1] = True
    return held


@no_collector()
def _parse(source: Source, pick: Callable[[list[int]], list[bool]] | None) -> list[Document]:
    """``parse``: every document, or (``pick``: which of the parts between these
    bounds to compose) only the parts picked, each alone."""
    text = source.text
    try:
        if pick is None or foreign_break_at(text) >= 0:
            # a break only YAML sees moves YAML's line numbers off the text's own,
            # and may start a document the text does not show: compose it all
            docs = [
                Document(
                    index, root, 0, _check_tree(source, root) if root is not None else frozenset()
                )
                for index, root in enumerate(_compose_at(text, 0, len(text), 0))
            ]
            _set_ends(text, docs)
        else:
            docs = _compose_picked(source, pick)
    except yaml.MarkedYAMLError as exc:
        raise InputProblem(_syntax_finding(source, exc)) from None
    except yaml.reader.ReaderError as exc:
        raise InputProblem(_reader_finding(source, exc)) from None
    except yaml.YAMLError as exc:  # pragma: no cover - unmarked errors are rare
        raise InputProblem(finding("DRA004", source.path, 1, 1, f"malformed YAML: {exc}")) from None
    except RecursionError:
        raise InputProblem(
            finding("DRA004", source.path, 1, 1, "YAML nested too deeply to process")
        ) from None
    return docs


def _compose_picked(source: Source, pick: Callable[[list[int]], list[bool]]) -> list[Document]:
    """The documents of ``_parts`` that ``pick`` picks (``_wanted``: those that mention
    a needle; ``_holding``: those that hold a template action), composed alone and their
    marks moved to the whole text; the others with no root. A part that begins with
    directives is composed together with the part before it: what a directive line
    is (a directive, or the text of an unclosed flow collection or plain scalar
    above it) only the composer can tell. A document ends at the first separator
    after its content or where its part ends, before the directives of the next (a
    part that starts the text without ``---`` and is not composed holds no
    document, as a stream of comments holds none)."""
    text = source.text
    bounds = _parts(text)
    wanted = pick(bounds)
    count = len(bounds) - 1
    docs: list[Document] = []
    composed: list[tuple[Document, Node, int, int]] = []
    line = at = first = 0
    while first < count:
        last = first
        while last + 1 < count and text.startswith("%", bounds[last + 1]):
            last += 1
        if last == first and not wanted[first]:  # most parts of a big stream
            if first > 0 or text.startswith(("---", "%")):
                docs.append(Document(len(docs), None, bounds[first + 1]))
            first += 1
            continue
        group = list(range(first, last + 1))
        roots: list[Node | None] = []
        begin = bounds[first]
        if any(wanted[number] for number in group):
            line += text.count("\n", at, begin)
            at = begin
            roots = _compose_at(text, begin, bounds[last + 1], line)
        # a part holds one document; only a first part of comments holds none
        holders = group[max(len(group) - len(roots), 0) :]
        holders[:0] = [first] * (len(roots) - len(holders))
        held = dict(zip(holders, roots, strict=True))
        for number in group:
            root = held.get(number) if wanted[number] else None
            end = bounds[number + 1]
            if root is not None:
                docs.append(Document(len(docs), root, end))
                composed.append((docs[-1], root, begin, line))
            elif number > 0 or text.startswith(("---", "%")):
                docs.append(Document(len(docs), None, end))
        first = last + 1
    # every syntax error first, then the trees' checks: as a whole text is read
    for doc, root, begin, line in composed:
        doc.aliased = _check_tree(source, root, begin, line)
        sep = _DOC_SEPARATOR.search(text, line_end(text, content_end(root, text)), doc.end)
        doc.end = sep.start() if sep else doc.end
    return docs


def _compose_at(text: str, base: int, end: int, lines: int) -> list[Node | None]:
    """The roots of ``text[base:end]``, which starts after ``lines`` lines; an error
    reads as in the whole text: its marks moved there (the nodes' marks are moved by
    ``_check_tree``), and where the part ends, the whole text goes on with the
    next document (``---``), not the end of the stream."""
    part = text[base:end] if base or end < len(text) else text
    # PyYAML's pure-Python scanner rejects a tab before a comment or at the end of
    # a line, which YAML allows (libyaml and kubectl read it); a space of the same
    # width keeps every offset.
    if not libyaml():
        part = _TRAILING_TAB.sub(" ", part)
    try:
        return compose_all(part)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        if end < len(text) and exc.problem and mark is not None and mark.index == len(part):
            exc.problem = exc.problem.replace("'<stream end>'", "'<document start>'")
        exc.problem_mark = _moved(mark, base, lines)
        exc.context_mark = _moved(exc.context_mark, base, lines)
        raise
    except yaml.reader.ReaderError as exc:
        exc.position += base
        raise


def _moved(mark: Any, base: int, lines: int) -> Any:
    """A copy of a mark ``base`` characters and ``lines`` lines further on (libyaml's
    marks are read-only; a copy also never moves a mark two nodes share twice). A
    part starts at a line start, so the column stays."""
    if mark is None:
        return None
    return type(mark)(mark.name, mark.index + base, mark.line + lines, mark.column, None, None)


_DOC_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.M)
_CRD_HEAD = re.compile(
    r"^kind:[ \t]*([\"']?)CustomResourceDefinition\1[ \t]*(?:#[^\n]*)?\r?$", re.M
)
# A backslash escape in a double-quoted YAML or a JSON string could spell a
# needle ("nvidia.com\u002fgpu"), an escaped line break (any of YAML's) join one:
# the search cannot rule such a text out.
ESCAPE = re.compile("\\\\[uUx/\r\n\x85\u2028\u2029]")  # discover._ESCAPE, in text


def mentions(text: str, needles: tuple[str, ...]) -> bool:
    return any(n in text for n in needles) or ESCAPE.search(text) is not None


def doc_starts(text: str) -> Iterator[int]:
    """Offsets of the ``---`` lines that start documents, as ``_DOC_START`` finds them
    (a string search: several times faster than the regular expression on a big
    text)."""
    if _DOC_START.match(text):
        yield 0
    at = text.find("\n---")
    while at >= 0:
        after = at + 4
        if after == len(text) or text[after] in " \t\r\n":
            yield at + 1
        at = text.find("\n---", after)


def _parts(text: str) -> list[int]:
    """Where the text is cut into parts of one document each: at every document
    start, or before the directives (``%YAML``, ``%TAG``) that belong to it."""
    bounds = [0]
    for start in doc_starts(text):
        cut = _directives_before(text, start)
        if cut > bounds[-1]:
            bounds.append(cut)
    bounds.append(len(text))
    return bounds


def _directives_before(text: str, start: int) -> int:
    """Where the directives of the document at ``start`` begin: the first directive
    line before it with only directives, comments and blank lines between; else
    ``start``."""
    cut = end = start
    while end > 0:
        begin = text.rfind("\n", 0, end - 1) + 1
        if text.startswith("%", begin):
            cut = begin
        else:
            line = text[begin:end].lstrip()
            if line and not line.startswith("#"):
                break
        end = begin
    return cut


def _wanted(text: str, bounds: list[int], needles: tuple[str, ...]) -> list[bool]:
    """For each part: composed? It mentions a needle (or holds an escape that could
    spell one) and has no CustomResourceDefinition head. One search of the whole
    text a needle, skipping the rest of a part once it is known."""
    found = [False] * (len(bounds) - 1)
    crd = [False] * (len(bounds) - 1)

    def mark(flags: list[bool], find: Any) -> None:
        at = find(0)
        while at >= 0:
            part = bisect.bisect_right(bounds, at) - 1
            flags[part] = True
            at = find(bounds[part + 1])

    for needle in needles:
        mark(found, lambda at, n=needle: text.find(n, at))
    mark(found, lambda at: _next_match(ESCAPE, "\\", text, at))
    mark(crd, lambda at: _next_match(_CRD_HEAD, "CustomResourceDefinition", text, at))
    return [f and not c for f, c in zip(found, crd, strict=True)]


def _next_match(pattern: re.Pattern[str], literal: str, text: str, at: int) -> int:
    """Where ``pattern`` next matches (-1: nowhere), found through the next place the
    ``literal`` it needs occurs: in the line holding it for a pattern anchored at a
    line start, else at the literal."""
    anchored = pattern.pattern.startswith("^")
    while True:
        at = text.find(literal, at)
        if at < 0:
            return -1
        if anchored:
            newline = text.find("\n", at)
            end = len(text) if newline < 0 else newline + 1
            match = pattern.search(text, text.rfind("\n", 0, at) + 1, end)
        else:
            match = pattern.match(text, at)
        if match is not None:
            return match.start()
        at += 1


def _reader_finding(source: Source, exc: Any) -> Finding:
    """A character YAML does not allow in a stream (control characters)."""
    at = min(max(int(exc.position), 0), len(source.text))
    line = source.text.count("\n", 0, at) + 1
    col = at - line_start(source.text, at) + 1
    char = exc.character if isinstance(exc.character, str) else chr(exc.character)
    return finding(
        "DRA004",
        source.path,
        line,
        col,
        f"malformed YAML: control character U+{ord(char):04X} is not allowed in YAML",
        "remove it, or write it as an escape in a double-quoted string",
    )


def _syntax_finding(source: Source, exc: yaml.MarkedYAMLError) -> Finding:
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = exc.problem or exc.context or "malformed YAML"
    at = mark.index if mark is not None else -1
    if (
        "\\t" in problem
        or "'\t'" in problem
        or (0 <= at < len(source.text) and source.text[at] == "\t")
    ):
        return finding("DRA006", source.path, line, col, "tab character where YAML needs spaces")
    what = "JSON" if source.is_json else "YAML"
    context = f" ({exc.context})" if exc.context and exc.problem else ""
    return finding("DRA004", source.path, line, col, f"malformed {what}: {problem}{context}")


def _duplicate(source: Source, node: MappingNode) -> Finding | None:
    """The first key of a mapping that repeats an earlier one (DRA005), if any."""
    keys: dict[Any, Node] = {}
    for key, _value in node.value:
        if isinstance(key, ScalarNode) and key.tag != MERGE:
            ident = key.value
            if ident in keys:
                first = keys[ident].start_mark
                return finding(
                    "DRA005",
                    source.path,
                    key.start_mark.line + 1,
                    key.start_mark.column + 1,
                    f"duplicate key {ident!r} (first at line {first.line + 1})",
                )
            keys[ident] = key
    return None


# go-yaml v2 (decode.go) refuses a document when too much of it comes from
# alias expansion: up to 99% below 400,000 decoded nodes, falling to 10% at
# 4,000,000; and an alias inside its own anchor. Kubernetes reads manifests
# with it, so these are the limits every reader here applies.
_ALIAS_LOW, _ALIAS_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_LOW:
        return 0.99
    if decoded >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW)


def _check_tree(source: Source, root: Node, base: int = 0, lines: int = 0) -> set[int]:
    """Ids of nodes that appear more than once (anchors with aliases), in one walk of
    the tree that also moves every mark ``base`` characters and ``lines`` lines on
    (a document composed alone, see ``_moved``) and checks depth and duplicate keys;
    raises ``InputProblem``: DRA004 too deep, DRA030 a recursive alias or excessive
    aliasing, DRA005 the first duplicate key of the document."""
    counts: dict[int, int] = {}
    mappings: list[MappingNode] = []
    stack = [(root, 1)]
    mark = type(root.start_mark)
    while stack:
        node, depth = stack.pop()
        ident = id(node)
        seen = counts.get(ident, 0) + 1
        counts[ident] = seen
        if seen > 1:
            continue
        if base or lines:
            at = node.start_mark
            node.start_mark = mark(at.name, at.index + base, at.line + lines, at.column, None, None)
            at = node.end_mark
            node.end_mark = mark(at.name, at.index + base, at.line + lines, at.column, None, None)
        if depth > MAX_DEPTH:
            _too_deep(source, node)
        if isinstance(node, MappingNode):
            for key, value in node.value:
                stack.append((value, depth + 1))
                stack.append((key, depth + 1))
            if len(node.value) > 1:
                mappings.append(node)
        elif isinstance(node, SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
    aliased = {ident for ident, count in counts.items() if count > 1}
    if aliased:
        _expand_as_go_yaml(source, root)
    duplicates = [found for node in mappings if (found := _duplicate(source, node)) is not None]
    if duplicates:
        raise InputProblem(min(duplicates, key=lambda found: (found.line, found.col)))
    return aliased


# Deeper than any manifest (a CRD's schema nests a few dozen levels), shallow
# enough for every recursive reader here to stay far from Python's stack limit.
MAX_DEPTH = 200


def data_depth(value: Any) -> int:
    """How deeply plain data (from json) nests, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def _too_deep(source: Source, node: Node) -> None:
    raise InputProblem(
        finding(
            "DRA004",
            source.path,
            *position(node),
            f"YAML nested more than {MAX_DEPTH} levels deep; no manifest needs that",
        )
    )


def _expand_as_go_yaml(source: Source, root: Node) -> None:
    """Walk the document as go-yaml's decoder does, aliases expanded, counting
    decoded nodes, and stop where it stops. Bounded: the walk ends at the first
    node past the ratio."""
    decoded = from_aliases = 0
    seen: set[int] = set()  # nodes met once: meeting one again is an alias
    open_: set[int] = set()  # collections on the current path
    # node, alias depth, the outermost alias being expanded, leaving?
    stack: list[tuple[Node, int, Node, bool]] = [(root, 0, root, False)]
    while stack:
        node, depth, via, leaving = stack.pop()
        if leaving:
            open_.discard(id(node))
            continue
        if id(node) in open_:
            raise InputProblem(
                finding(
                    "DRA030",
                    source.path,
                    *position(node),
                    f"the anchor {_anchor_name(source.text, node)}holds an alias to itself "
                    "(a recursive structure); Kubernetes refuses it",
                    "write the value out instead of referring to it from inside itself",
                )
            )
        if id(node) in seen:  # an alias: the alias node, then its target again
            decoded += 1
            from_aliases += depth > 0
            if depth == 0:
                via = node
            depth += 1
        seen.add(id(node))
        decoded += 1
        from_aliases += depth > 0
        if (
            from_aliases > 100
            and decoded > 1000
            and from_aliases / decoded > _allowed_alias_ratio(decoded)
        ):
            raise InputProblem(
                finding(
                    "DRA030",
                    source.path,
                    *position(via),
                    f"excessive aliasing: {from_aliases:,} of the first {decoded:,} values "
                    f"come from aliases (expanding the anchor {_anchor_name(source.text, via)}"
                    "here); Kubernetes refuses such a document",
                    "write the repeated values out, or use fewer levels of aliases",
                )
            )
        if isinstance(node, MappingNode | SequenceNode):
            if len(open_) >= MAX_DEPTH:
                _too_deep(source, node)
            open_.add(id(node))
            stack.append((node, depth, via, True))
            if isinstance(node, MappingNode):
                for key, value in reversed(node.value):
                    stack.append((value, depth, via, False))
                    stack.append((key, depth, via, False))
            else:
                for item in reversed(node.value):
                    stack.append((item, depth, via, False))


_ANCHOR = re.compile(r"&([^\s,\[\]{}]+)")


def _anchor_name(text: str, node: Node) -> str:
    """``&name `` of the anchor a node was defined with, when it is at its mark."""
    match = _ANCHOR.match(text, node.start_mark.index)
    return f"&{match.group(1)} " if match else ""


def _set_ends(text: str, docs: list[Document]) -> None:
    for doc in docs:
        if doc.root is None:
            continue
        last = content_end(doc.root, text)
        sep = _DOC_SEPARATOR.search(text, line_end(text, last))
        doc.end = sep.start() if sep else len(text)
