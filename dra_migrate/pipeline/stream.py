"""The stdin mode of the pipeline: one stream (``helm template | dra-migrate convert -``)
of any length, processed part by part (``run_stream``): copied to a temporary file,
split at document starts into parts of about ``STREAM_PART`` bytes (``split_stream``),
each part through the stages of ``one_file``, the results put back into one file's
result at their lines. Out of ``many_files`` (the walk over many files), which it
shares the bridge lookup and the templates' keys with.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass

from dra_migrate.pipeline.many_files import _bridge_lookup, _template_key, _with_bridges
from dra_migrate.pipeline.options import Job
from dra_migrate.repo import discover
from dra_migrate.report.findings import Finding
from dra_migrate.report.model import FileResult, Report, Status

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import BinaryIO

    from dra_migrate.pipeline.options import RunOptions


STREAM_PART = 1 << 20  # bytes of whole documents a stream is processed by
_STREAM_DOC_STARTS = re.compile(rb"^---(?=[ \t\r\n]|$)", re.M)
_STREAM_BLOCK = 1 << 20

# a part's result, its text still at hand: convert writes the stream (or its diff)
# from these, part by part
Sink = Callable[[FileResult], None]


@dataclass(frozen=True, slots=True)
class Part:
    """Whole documents of a stream: bytes ``start`` to ``end`` of its copy, after
    ``line`` lines."""

    start: int
    end: int
    line: int


def split_stream(stream: BinaryIO, spool: BinaryIO, limit: int) -> list[Part]:
    """Copy ``stream`` to ``spool``, cut at document starts into parts of about
    ``STREAM_PART`` bytes. A document larger than ``limit`` is refused
    (``Unreadable``, DRA011); so is a stream that cannot be cut (JSON, UTF-16) and is
    larger than the limit as a whole. Read a block at a time: a Python step per
    line would cost more than processing the parts."""
    parts: list[Part] = []
    start = doc = pos = line = part_line = 0
    whole: bool | None = None  # decided by the first line with content
    carry = b""  # an unfinished line, read on with the next block
    while True:
        block = stream.read(_STREAM_BLOCK)
        data = carry + block if carry else block
        cut = len(data) if not block else data.rfind(b"\n") + 1
        done, carry = data[:cut], data[cut:]
        if whole is None:
            whole = _uncuttable(done if block else data)
        if not whole:
            for match in _STREAM_DOC_STARTS.finditer(done):
                at = pos + match.start()
                if at <= doc:
                    continue
                if at - doc > limit:
                    break  # refused below
                doc = at
                # a directive (%YAML, %TAG) belongs to the document after it: no cut there
                previous = done.rfind(b"\n", 0, max(match.start() - 1, 0)) + 1
                if done.startswith(b"%", previous) and previous < match.start():
                    continue
                if at - start >= STREAM_PART:
                    parts.append(Part(start, at, part_line))
                    start, part_line = at, line + done.count(b"\n", 0, match.start())
        spool.write(done)
        pos += len(done)
        line += done.count(b"\n")
        if pos + len(carry) - (start if whole else doc) > limit:
            what = "standard input" if whole else "a document of standard input"
            raise discover.Unreadable(
                "DRA011", f"{what} is larger than the limit of {limit} bytes (--max-file-size)"
            )
        if not block:
            break
    parts.append(Part(start, pos, part_line))
    return parts


def _uncuttable(head: bytes) -> bool | None:
    """A stream that is one value (JSON) or not UTF-8 (UTF-16, UTF-32): never cut.
    None: nothing with content yet."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head[:4096]:
        return True
    for raw in head.split(b"\n"):
        text = raw.strip()
        if text and not text.startswith(b"#"):
            return text.startswith((b"{", b"["))
    return None


def run_stream(stream: BinaryIO, options: RunOptions, sink: Sink | None = None) -> Report:
    """The stdin mode: one stream, processed whatever it mentions, part by part.

    The stream is copied to a temporary file and processed a part of whole
    documents at a time, so memory does not grow with the number of documents:
    each part's text is handed to ``sink`` and dropped, its findings and
    inventory (at their lines in the whole stream) kept in one result. Names of
    templates defined anywhere in the stream, or generated for an earlier part,
    are not generated again.
    """
    import tempfile

    from dra_migrate.manifests.locate import defined_templates
    from dra_migrate.pipeline.one_file import process_job
    from dra_migrate.repo.roles import Role

    display, settings, edit = options.stdin_filename, options.settings, options.edit

    with tempfile.TemporaryFile() as spool:
        try:
            parts = split_stream(stream, spool, settings.config.max_file_size)
        except discover.Unreadable as exc:
            return Report([FileResult.unreadable(display, exc.code, exc.message)])

        def read(part: Part) -> bytes:
            spool.seek(part.start)
            return spool.read(part.end - part.start)

        whole = read(parts[0]) if len(parts) == 1 else b""
        duplicated: list[Finding] = []
        if settings.config.strategy.may_bridge(settings.strategy):  # the stream's classes too
            classes = [d for d in map(read, parts) if b"extendedResourceName" in d]
            stream_classes = whole or b"\n---\n".join(classes)
            excludes = [*settings.config.exclude, *options.excludes]
            lookup = _bridge_lookup(settings, options.context, excludes)
            settings, duplicated = _with_bridges(settings, lookup, stream_classes)
        if len(parts) == 1:
            result = process_job(Job("", display, Role(), whole, edit), settings)
            if sink is not None:
                sink(result)
            return Report([result], duplicated, bridge_classes=settings.bridges)
        taken: set[tuple[str, str]] = set()  # defined in the stream, or generated for it
        for part in parts:
            data = read(part)
            if discover.may_define_templates(data):
                taken |= defined_templates(data)
        merged = FileResult(display, Status.UNCHANGED, markers=[])
        for part in parts:
            here = dataclasses.replace(settings, file_taken=frozenset(taken))
            result = process_job(Job("", display, Role(), read(part), edit), here)
            taken.update(_template_key(t) for t in result.templates)
            if sink is not None:
                sink(result)
            _absorb(merged, result, part.line)
        if merged.status is not Status.CHANGED:  # nothing of the stream is written
            merged.findings = [f for f in merged.findings if not f.spec.writes]
        return Report([merged], duplicated, bridge_classes=settings.bridges)


def _absorb(merged: FileResult, part: FileResult, offset: int) -> None:
    """Add a part's result to the stream's, its lines counted from the stream's start."""
    from dra_migrate.pipeline import suppress

    def moved(line: int) -> int:
        return line + offset if line > 0 else line

    markers = suppress.file_markers(part)  # while the part's text is at hand
    for m in markers:
        m.line, m.first, m.last = moved(m.line), moved(m.first), moved(m.last)
    assert merged.markers is not None
    merged.markers.extend(markers)
    merged.findings.extend(dataclasses.replace(f, line=moved(f.line)) for f in part.findings)
    merged.inventory.extend(dataclasses.replace(i, line=moved(i.line)) for i in part.inventory)
    # the generated templates are not kept: their names are taken (run_stream), and a
    # stream has no other file whose templates could collide with them
    ranks = (Status.UNCHANGED, Status.CHANGED, Status.REPORTED, Status.FAILED)
    if ranks.index(part.status) > ranks.index(merged.status):
        merged.status = part.status  # a part left untouched leaves the whole stream so


# --- validate ---------------------------------------------------------------------
