"""Stage 2, load, the text: bytes to text (UTF-8 only: UTF-16 and UTF-32 refused,
a byte-order mark and CRLF or CR line ends kept aside for the writer), the
``Source`` and ``Document`` records, the line breaks only YAML sees, and line
offsets."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dra_migrate.report.findings import Finding, InputProblem, finding

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from collections.abc import Set as AbstractSet

    from yaml.nodes import Node


BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Source:
    """One input: a file, or the stream read from stdin (``path == "-"``)."""

    path: str
    text: str
    bom: bool = False
    newline: str = "\n"
    is_json: bool = False
    cr_only: bool = False  # classic Mac line ends: read as \n (same offsets), written as \r

    def encode(self, text: str) -> bytes:
        if self.cr_only:
            text = text.replace("\n", "\r")
        return ((BOM if self.bom else "") + text).encode("utf-8")


@dataclass(slots=True)
class Document:
    """One YAML document of a stream: its root node and where it ends (slots: a big
    stream has tens of thousands). Not frozen: composition sets ``end`` and
    ``aliased`` once the document's tree has been checked."""

    index: int
    root: Node | None
    end: int  # offset where the document's own text ends (before the next separator)
    aliased: AbstractSet[int] = frozenset()  # ids of nodes reachable more than once


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


def line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def line_end(text: str, index: int) -> int:
    """Offset just after the newline of the line holding ``index`` (or len(text))."""
    if index > 0 and text[index - 1] == "\n":
        return index
    nl = text.find("\n", index)
    return len(text) if nl < 0 else nl + 1
