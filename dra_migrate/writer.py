"""Writing results: unified diffs, atomic in-place writes, output folders."""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from dra_migrate.findings import quote_path

Region = tuple[int, int, int, int]  # old start, old end, new start, new end (0-based lines)
Opcode = tuple[Any, int, int, int, int]  # difflib's (tag, i1, i2, j1, j2)


def unified_diff(path: str, old: bytes, new: bytes, regions: Sequence[Region] | None = None) -> str:
    """A ``git apply``-able unified diff of one file (``\\ No newline`` markers included).

    ``regions`` are the line ranges the edits changed (``FileResult.regions``):
    only they are compared line by line, so a file of 100,000 documents with a
    change in each costs time in proportion to its size, not its square.
    Without them (or when they do not describe the two texts) the whole file
    is compared.
    """
    a = _lines(old)
    b = _lines(new)
    opcodes = _opcodes(a, b, regions) if regions is not None else None
    matcher: difflib.SequenceMatcher[str] = (
        difflib.SequenceMatcher(None, a, b, autojunk=False) if opcodes is None else _Known(opcodes)
    )
    groups = list(matcher.get_grouped_opcodes(3))
    if not groups:
        return ""
    out = [f"--- {quote_path('a/' + path)}\n", f"+++ {quote_path('b/' + path)}\n"]
    for group in groups:
        first, last = group[0], group[-1]
        old_range = _range(first[1], last[2])
        new_range = _range(first[3], last[4])
        out.append(f"@@ -{old_range} +{new_range} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(_marked(" ", a[i1:i2]))
                continue
            out.extend(_marked("-", a[i1:i2]))
            out.extend(_marked("+", b[j1:j2]))
    return "".join(out)


class _Known(difflib.SequenceMatcher[str]):
    """A matcher whose opcodes are known already: only difflib's hunk grouping is used."""

    def __init__(self, opcodes: list[Opcode]) -> None:
        super().__init__(None, [], [])
        self.known = opcodes

    def get_opcodes(self) -> list[Opcode]:
        return self.known


def _opcodes(a: list[str], b: list[str], regions: Sequence[Region]) -> list[Opcode] | None:
    """difflib opcodes from the changed regions: equal between them, compared inside."""
    merged: list[list[int]] = []
    for a0, a1, b0, b1 in sorted(regions):
        a1, b1 = min(a1, len(a)), min(b1, len(b))
        if merged and a0 <= merged[-1][1]:
            last = merged[-1]
            last[1], last[3] = max(last[1], a1), max(last[3], b1)
        else:
            merged.append([a0, a1, b0, b1])
    ops: list[Opcode] = []
    i = j = 0
    for a0, a1, b0, b1 in merged:
        if a0 < i or b0 < j or a0 - i != b0 - j or a[i:a0] != b[j:b0]:
            return None  # the regions do not describe these texts
        if a0 > i:
            ops.append(("equal", i, a0, j, b0))
        inner = difflib.SequenceMatcher(None, a[a0:a1], b[b0:b1], autojunk=False)
        for tag, i1, i2, j1, j2 in inner.get_opcodes():
            ops.append((tag, a0 + i1, a0 + i2, b0 + j1, b0 + j2))
        i, j = max(i, a1), max(j, b1)
    if len(a) - i != len(b) - j or a[i:] != b[j:]:
        return None
    if i < len(a):
        ops.append(("equal", i, len(a), j, len(b)))
    return ops or [("equal", 0, 0, 0, 0)]


def _range(start: int, stop: int) -> str:
    """A hunk range as difflib writes it."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _marked(mark: str, lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(mark + line)
        else:
            out.append(mark + line + "\n\\ No newline at end of file\n")
    return out


def _lines(data: bytes) -> list[str]:
    """Lines as diff and patch see them: ended by ``\\n`` only (``\\r``, NEL and
    U+2028 are characters of a line)."""
    text = data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def write_atomic(target: Path, data: bytes) -> None:
    """Write through a temporary file in the same folder and rename it over ``target``.

    The file mode of an existing target is kept; a reader never sees half a file.
    A symbolic link is written through: its target changes, the link stays.
    """
    if target.is_symlink():
        target = target.resolve()
    mode = None
    with contextlib.suppress(FileNotFoundError):
        mode = stat.S_IMODE(target.stat().st_mode)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".dra-migrate", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def output_path(output_dir: Path, display: str) -> Path:
    """Where ``display`` goes under ``output_dir``: the same relative layout, never outside it."""
    parts = [
        p for p in PurePosixPath(display.replace(os.sep, "/")).parts if p not in ("/", "..", ".")
    ]
    return output_dir.joinpath(*parts)
