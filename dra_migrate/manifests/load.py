"""Stage 2, load: bytes to text to YAML node trees with exact positions.

The parser is used for structure and positions only; nothing is ever dumped
back. Every node keeps ``start_mark``/``end_mark`` (character offsets into the
decoded text), which is what the edit stage splices against.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import itertools
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from dra_migrate.k8s.names import INT64_MIN, UINT64_MAX
from dra_migrate.record import Record
from dra_migrate.report.findings import Finding, InputProblem, finding

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)
if TYPE_CHECKING:
    from typing import Any

BOM = "\ufeff"
_TRAILING_TAB = re.compile(r"\t(?=[ \t]*(?:#|\r?$))", re.M)
_DOC_SEPARATOR = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)
# Helm (Go template) actions: {{ .Values.x }}, {{- include ... }}, {{ if }}, {{/* */}}.
# Argo's {{inputs.parameters.x}} and {{workflow.name}} are not: no dot, no keyword.
_TEMPLATE_SYNTAX = re.compile(
    r"\{\{-?\s*(?:[.$]|/\*|(?:include|template|if|else|end|range|with|define|block|toYaml"
    r"|toJson|tpl|required|default|printf|quote|nindent|indent|lookup|fail)\b)"
)
# The line breaks of ``str.splitlines`` but "\n" (a "\r" met on a line is a break
# of its own), and what ``str.lstrip`` keeps.
_RARE_BREAK = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_NON_SPACE = re.compile(r"\S")


class Source(Record):
    """One input: a file, or the stream read from stdin (``path == "-"``)."""

    __slots__ = _fields = ("path", "text", "bom", "newline", "is_json", "cr_only")

    def __init__(
        self,
        path: str,
        text: str,
        bom: bool = False,
        newline: str = "\n",
        is_json: bool = False,
        cr_only: bool = False,  # classic Mac line ends: read as \n (same offsets), written as \r
    ) -> None:
        self.path = path
        self.text = text
        self.bom = bom
        self.newline = newline
        self.is_json = is_json
        self.cr_only = cr_only

    def encode(self, text: str) -> bytes:
        if self.cr_only:
            text = text.replace("\n", "\r")
        return ((BOM if self.bom else "") + text).encode("utf-8")


class Document(Record):
    """One YAML document of a stream: its root node and where it ends (slots: a big
    stream has tens of thousands)."""

    __slots__ = _fields = ("index", "root", "end", "aliased")

    def __init__(
        self,
        index: int,
        root: Node | None,
        end: int,  # offset where the document's own text ends (before the next separator)
        aliased: AbstractSet[int] = frozenset(),  # ids of nodes reachable more than once
    ) -> None:
        self.index = index
        self.root = root
        self.end = end
        self.aliased = aliased


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
    wide = utf16_without_bom(raw)
    if wide:
        raise InputProblem(
            finding(
                "DRA002",
                path,
                1,
                1,
                f"{wide} text without a byte-order mark; Kubernetes manifests here must be UTF-8",
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
    # CR-only line ends (YAML reads a lone CR as a line break): worked on as LF,
    # which keeps every offset, and given back as CR by ``encode``.
    cr_only = "\r" in text and "\n" not in text
    if cr_only:
        text = text.replace("\r", "\n")
    crlf = text.count("\r\n")
    newline = "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"
    # JSON by name; a stream with no telling name (stdin) by its first character.
    # A .yaml file may well start with a flow mapping.
    named_yaml = path.endswith((".yaml", ".yml"))
    is_json = path.endswith(".json") or (not named_yaml and text.lstrip().startswith(("{", "[")))
    return Source(path=path, text=text, bom=bom, newline=newline, is_json=is_json, cr_only=cr_only)


def utf16_without_bom(raw: bytes) -> str:
    """ "UTF-16" or "UTF-32" when the bytes look like mostly-ASCII text in that
    encoding without a byte-order mark (NUL bytes in a fixed pattern); else ""."""
    sample = raw[:4096]
    if len(sample) < 8 or sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return ""

    def zeros(start: int, step: int) -> float:
        part = sample[start::step]
        return part.count(0) / len(part)

    if min(zeros(1, 4), zeros(2, 4)) > 0.9 and min(zeros(0, 4), zeros(3, 4)) < 0.1:
        return "UTF-32"
    if max(zeros(0, 2), zeros(1, 2)) > 0.9 and min(zeros(0, 2), zeros(1, 2)) < 0.1:
        return "UTF-16"
    return ""


# Line breaks YAML (libyaml, go-yaml) reads but the text splices do not: NEL,
# U+2028, U+2029, and a CR without LF in a file that also has LF line ends.
_FOREIGN_BREAK = re.compile("[\x85\u2028\u2029]|\r(?!\n)")


def foreign_break_at(text: str) -> int:
    """Offset of the first line break only YAML sees, or -1. Plain string searches
    rule most texts out first: the expression alone crawls through a big file."""
    lone_cr = "\r" in text and text.count("\r") != text.count("\r\n")
    if lone_cr or "\x85" in text or "\u2028" in text or "\u2029" in text:
        match = _FOREIGN_BREAK.search(text)
        if match is not None:
            return match.start()
    return -1


def foreign_line_break(source: Source) -> Finding | None:
    """DRA032 at the first line break only YAML sees, for a file to be edited."""
    at = foreign_break_at(source.text)
    if at < 0:
        return None
    char = source.text[at]
    line = source.text.count("\n", 0, at) + 1
    col = at - line_start(source.text, at) + 1
    return finding(
        "DRA032",
        source.path,
        line,
        col,
        f"U+{ord(char):04X} here is a line break to YAML (and Kubernetes) but not to "
        "editors and diffs; the file is not edited",
        "replace it with a plain line end (or, inside a double-quoted string, write it "
        f"as \\u{ord(char):04x})",
    )


def looks_like_template(text: str) -> bool:
    """Go template syntax outside comments (a cheap first look; see is_template)."""
    return any(True for _ in _template_actions(text))


def _template_actions(text: str) -> Iterator[int]:
    """Offsets of Helm template actions on lines that are not comments (lines as
    ``str.splitlines`` cuts them). Linear: the text between two actions is searched
    once for the last line break (in C: ``rfind``, then the rare breaks after it),
    and a line's first character is looked at once however many actions it holds
    (a one-line JSON bundle may hold thousands)."""
    begin = scanned = 0  # where the line of the last action begins; text searched up to
    known, comment = -1, False  # the line whose first character was looked at, and it
    for match in _TEMPLATE_SYNTAX.finditer(text):
        at = match.start()
        newline = text.rfind("\n", scanned, at)
        if newline >= 0:
            begin = newline + 1
        for brk in _RARE_BREAK.finditer(text, max(scanned, begin), at):
            begin = brk.end()
        scanned = at
        if begin != known:
            known = begin
            first = _NON_SPACE.search(text, begin, at + 1)  # at the latest the action's "{"
            comment = first is not None and text[first.start()] == "#"
        if not comment:
            yield at


def is_template(source: Source) -> bool:
    """A Helm chart template, not a manifest: template actions that are YAML
    structure (``replicas: {{ .Values.n }}``, ``{{- if }}`` lines) or that make
    their document unparsable. Actions inside string values (a PrometheusRule's
    ``summary: "{{ $labels.node }}"``) are data of a manifest.

    Only the documents that hold an action are composed, each alone as ``parse``
    composes them: a document without one (a CustomResourceDefinition of an
    install bundle) is never composed because another document of the file holds
    template text. Each action is looked up among the scalars' spans, sorted."""
    actions = list(_template_actions(source.text))
    if not actions:
        return False
    try:
        docs = _parse(source, lambda bounds: _holding(bounds, actions))
    except InputProblem:
        return True
    with no_collector():  # the spans of a big tree: as for composing it
        scalars = Spans(span for doc in docs for span in _scalar_spans(doc.root))
    return not all(at in scalars for at in actions)


def _scalar_spans(root: Node | None) -> list[tuple[int, int]]:
    """``(start, end)`` of every scalar of a tree (a collection reached again through
    an alias is not walked again)."""
    spans: list[tuple[int, int]] = []
    stack = [] if root is None else [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, ScalarNode):
            spans.append((node.start_mark.index, node.end_mark.index))
        elif id(node) not in seen:
            seen.add(id(node))
            if isinstance(node, MappingNode):
                for key, value in node.value:
                    stack.append(key)
                    stack.append(value)
            elif isinstance(node, SequenceNode):
                stack.extend(node.value)
    return spans


def _holding(bounds: list[int], offsets: list[int]) -> list[bool]:
    """For each part between ``bounds``: does it hold one of the ``offsets``?"""
    held = [False] * (len(bounds) - 1)
    for at in offsets:
        held[bisect.bisect_right(bounds, at) - 1] = True
    return held


class Spans:
    """Half-open spans ``[a, b)``, sorted by start, each with the furthest end of the
    spans up to it: whether an offset lies inside any of them is one bisection,
    where testing every span made a bundle's check grow with actions times
    scalars."""

    __slots__ = ("reach", "starts")

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self.starts = [a for a, _b in ordered]
        self.reach = list(itertools.accumulate((b for _a, b in ordered), max))

    def __contains__(self, at: int) -> bool:
        last = bisect.bisect_right(self.starts, at) - 1  # the last span starting at or before
        return last >= 0 and self.reach[last] > at


_TAG = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL, MERGE = (
    _TAG + "str",
    _TAG + "int",
    _TAG + "float",
    _TAG + "bool",
    _TAG + "null",
    _TAG + "merge",
)
# go-yaml v2's resolve table (what sigs.k8s.io/yaml, and so Kubernetes, reads):
# YAML 1.1 booleans including y/n/on/off, no sexagesimal numbers, timestamps kept
# as strings when decoded into an interface (which is what YAML-to-JSON does).
_WORDS: dict[str, tuple[str, Any]] = {
    **{w: (BOOL, True) for w in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE")},
    **{w: (BOOL, True) for w in ("on", "On", "ON")},
    **{w: (BOOL, False) for w in ("n", "N", "no", "No", "NO", "false", "False", "FALSE")},
    **{w: (BOOL, False) for w in ("off", "Off", "OFF")},
    **{w: (NULL, None) for w in ("", "~", "null", "Null", "NULL")},
    **{w: (FLOAT, math.nan) for w in (".nan", ".NaN", ".NAN")},
    **{w: (FLOAT, math.inf) for w in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{w: (FLOAT, -math.inf) for w in ("-.inf", "-.Inf", "-.INF")},
    "<<": (MERGE, "<<"),
}
_HINTED = frozenset("+-.0123456789yYnNtTfFoO~<")
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_GO_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_GO_INT_DIGITS = 64  # the most digits a uint64 has, in base 2: longer is out of range


def _go_int(plain: str) -> int | None:
    """strconv.ParseInt(plain, 0, 64), then ParseUint: Go's base prefixes and a
    leading 0 for octal; None where Go would not read an integer."""
    if not _GO_INT.fullmatch(plain):
        return None
    sign = -1 if plain[0] == "-" else 1
    digits = plain.lstrip("+-")
    base = 10
    if len(digits) > 1 and digits[0] == "0":
        base = {"x": 16, "o": 8, "b": 2}.get(digits[1].lower(), 8)
        digits = digits[1:] if base == 8 and digits[1] not in "oO" else digits[2:]
    if len(digits.lstrip("0")) > _GO_INT_DIGITS:
        return None  # past uint64 in any base: never converted (int() is quadratic in digits)
    value = sign * int(digits, base)
    return value if INT64_MIN <= value <= UINT64_MAX else None


def resolve(text: str) -> tuple[str, Any]:
    """(tag, value) of a plain scalar as go-yaml v2 resolves it."""
    if not text or text[0] not in _HINTED:
        return (NULL, None) if not text else (STR, text)
    word = _WORDS.get(text)
    if word is not None:
        return word
    if text[0] == ".":
        return (FLOAT, float(text)) if _GO_FLOAT.fullmatch(text) else (STR, text)
    if text[0] in "+-0123456789":
        plain = text.replace("_", "")
        number = _go_int(plain)
        if number is not None:
            return INT, number
        if _GO_FLOAT.fullmatch(plain):
            return FLOAT, float(plain)
    return STR, text


class _KubeResolver:
    """Tags plain scalars as Kubernetes' YAML reader would (see ``resolve``);
    quoted and block scalars are strings. Composition only: no Python objects."""

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            return resolve(value)[0] if implicit[0] else STR
        return _TAG + ("seq" if kind is SequenceNode else "map")

    def descend_resolver(self, parent: Any, index: Any) -> None:
        """No path-dependent resolvers here (the pure composer asks for them)."""

    def ascend_resolver(self) -> None:
        pass


_CComposer: Any = None
if yaml.__with_libyaml__:

    class _LibyamlComposer(_KubeResolver, yaml.CBaseLoader):
        pass

    _CComposer = _LibyamlComposer


class _PureComposer(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    yaml.composer.Composer,
    _KubeResolver,
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
    """(key text, key node, value node) of a mapping node; other keys skipped.

    Merge keys (``<<: *base``) are resolved as Kubernetes' reader (go-yaml v2)
    resolves them: the merged entries take the merge key's place, later keys
    override earlier ones, and of a merged list the earlier mappings win.
    """
    if not isinstance(node, MappingNode):
        return
    if not any(k.tag == MERGE for k, _v in node.value):
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                yield key.value, key, value
        return
    yield from _merged(node).values()


def _merged(node: MappingNode) -> dict[str, tuple[str, Node, Node]]:
    out: dict[str, tuple[str, Node, Node]] = {}
    for key, value in node.value:
        if key.tag == MERGE:
            sources = list(reversed(value.value)) if isinstance(value, SequenceNode) else [value]
            for merged in sources:
                out.update((name, (name, k, v)) for name, k, v in entries(merged))
        elif isinstance(key, ScalarNode):
            out[key.value] = (key.value, key, value)
    return out


def get(node: Node | None, key: str) -> Node | None:
    """The value of ``key`` in a mapping node (merge keys resolved as ``entries`` does)."""
    if not isinstance(node, MappingNode):
        return None
    found = None
    for k, v in node.value:  # one pass, no generator: the hottest lookup of a run
        if k.tag == MERGE:
            hit = _merged(node).get(key)
            return hit[2] if hit is not None else None
        if found is None and k.value == key and isinstance(k, ScalarNode):
            found = v
    return found


def get_path(node: Node | None, *keys: str) -> Node | None:
    for key in keys:
        node = get(node, key)
        if node is None:
            return None
    return node


def has_merge(node: Node | None) -> bool:
    return isinstance(node, MappingNode) and any(k.tag == MERGE for k, _ in node.value)


def items(node: Node | None) -> list[Node]:
    return list(node.value) if isinstance(node, SequenceNode) else []


def to_python(node: Node | None) -> Any:
    """A plain Python value (strings for scalars; enough for matching rules)."""
    if isinstance(node, MappingNode):
        return {name: to_python(v) for name, _k, v in entries(node)}
    if isinstance(node, SequenceNode):
        return [to_python(v) for v in node.value]
    if isinstance(node, ScalarNode):
        return node.value
    return None


def position(node: Node) -> tuple[int, int]:
    mark = node.start_mark
    return mark.line + 1, mark.column + 1


def to_data(node: Node | None) -> Any:
    """The value as Kubernetes reads it (sigs.k8s.io/yaml, go-yaml v2's YAML 1.1
    resolution: ``010`` is 8, ``0x2`` is 2, ``1_0`` is 10, ``yes`` is true; merge
    keys resolved): what JSON Schemas need. Unknown tags keep the text."""
    if isinstance(node, MappingNode):
        return {name: to_data(v) for name, _k, v in entries(node)}
    if isinstance(node, SequenceNode):
        return [to_data(v) for v in node.value]
    if not isinstance(node, ScalarNode):
        return None
    return scalar_value(node)


def scalar_value(node: ScalarNode) -> Any:
    """A scalar's value: its text for strings, the number, boolean or null of its tag."""
    text: str = node.value
    tag = str(node.tag)
    if tag == STR or not tag.startswith(_TAG):
        return text
    resolved_tag, value = resolve(text)
    if resolved_tag == tag or (tag == FLOAT and resolved_tag == INT):
        return value
    return text  # an explicit tag the text does not fit (Kubernetes refuses it too)


def octal_surprise(node: Node) -> bool:
    """A plain ``010``: YAML 1.1 (and so Kubernetes) reads the octal number 8."""
    if not isinstance(node, ScalarNode) or node.tag != INT:
        return False
    digits = node.value.replace("_", "").lstrip("+-")
    return (
        len(digits) > 1 and digits[0] == "0" and digits[1].isdigit() and digits != "0" * len(digits)
    )


def quantity_text(node: Node | None) -> str | None:
    """The text of a resource quantity as the API server receives it: a plain
    ``010`` reaches it as the JSON number 8 (YAML 1.1 octal), ``0x2`` as 2,
    ``1e3`` as 1000, while a quoted ``"010"`` stays the string 010 (that is,
    10). None for what no quantity can be (booleans, null, infinities,
    collections)."""
    if not isinstance(node, ScalarNode):
        return None
    value = scalar_value(node)
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return None
    if math.isinf(value):  # 1e400: the text says how large (Kubernetes cannot encode it)
        return str(node.value).replace("_", "")
    if value.is_integer() and abs(value) < 1e21:  # Go's encoding/json: no exponent here
        return str(int(value))
    return repr(value)


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
