"""Writing results: unified diffs, atomic in-place writes, output folders."""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import tempfile
from pathlib import Path, PurePosixPath


def unified_diff(path: str, old: bytes, new: bytes) -> str:
    """A ``git apply``-able unified diff of one file (``\\ No newline`` markers included)."""
    a = _lines(old)
    b = _lines(new)
    out: list[str] = []
    for line in difflib.unified_diff(a, b, f"a/{path}", f"b/{path}", n=3):
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\n") + "\n")
            continue
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "surrogateescape").splitlines(keepends=True)


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
