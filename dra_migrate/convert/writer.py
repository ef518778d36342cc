"""Writing results: unified diffs, atomic in-place writes, output folders."""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
from collections.abc import Iterator, Sequence

from dra_migrate.report.findings import quote_path

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:  # nor pathlib: the functions that write are given Paths (resources.py)
    from pathlib import Path
    from typing import Any

    Opcode = tuple[Any, int, int, int, int]  # difflib's (tag, i1, i2, j1, j2)

Region = tuple[int, int, int, int]  # old start, old end, new start, new end (0-based lines)


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
        difflib.SequenceMatcher(None, a, b) if opcodes is None else _Known(opcodes)
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


class StreamDiff:
    """The unified diff of a stream converted part by part (``convert --diff -``): each
    part's opcodes, placed in the whole stream, are grouped into hunks as for one
    text, so hunks near a part boundary merge as they would; the lines are read
    back from copies of the two streams on disk, so memory holds the opcodes only."""

    def __init__(self, path: str) -> None:
        import tempfile

        self.path = path
        self.ops: list[Opcode] = []
        self.old = tempfile.TemporaryFile()  # noqa: SIM115 (closed by render)
        self.new = tempfile.TemporaryFile()  # noqa: SIM115
        self.lines = (0, 0)

    def add(self, old: bytes, new: bytes, regions: Sequence[Region] | None) -> None:
        a, b = _lines(old), _lines(new)
        ops = _opcodes(a, b, regions) if regions is not None else None
        if ops is None:
            ops = difflib.SequenceMatcher(None, a, b).get_opcodes()
        i0, j0 = self.lines
        for tag, i1, i2, j1, j2 in ops:
            if i1 == i2 and j1 == j2:
                continue
            op = (tag, i1 + i0, i2 + i0, j1 + j0, j2 + j0)
            last = self.ops[-1] if self.ops else None
            if last is not None and tag == "equal" == last[0]:
                self.ops[-1] = ("equal", last[1], op[2], last[3], op[4])
            else:
                self.ops.append(op)
        self.lines = (i0 + len(a), j0 + len(b))
        self.old.write(old)
        self.new.write(new)

    def render(self) -> Iterator[str]:
        """The diff, hunk by hunk ("" when nothing changed)."""
        with self.old, self.new:
            groups = _Known(self.ops or [("equal", 0, 0, 0, 0)]).get_grouped_opcodes(3)
            old, new = _Cursor(self.old), _Cursor(self.new)
            header = True
            for group in groups:
                if header:
                    yield f"--- {quote_path('a/' + self.path)}\n"
                    yield f"+++ {quote_path('b/' + self.path)}\n"
                    header = False
                first, last = group[0], group[-1]
                yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
                for tag, i1, i2, j1, j2 in group:
                    if tag == "equal":
                        yield from _marked(" ", old.take(i1, i2))
                        new.take(j1, j2)
                        continue
                    yield from _marked("-", old.take(i1, i2))
                    yield from _marked("+", new.take(j1, j2))


class _Cursor:
    """Lines of a file on disk, read forward only (hunks come in order)."""

    def __init__(self, handle: Any) -> None:
        handle.seek(0)
        self.lines = iter(handle)
        self.at = 0

    def take(self, start: int, stop: int) -> list[str]:
        while self.at < start:
            next(self.lines)
            self.at += 1
        out = [next(self.lines).decode("utf-8", "surrogateescape") for _ in range(stop - start)]
        self.at = max(self.at, stop)
        return out


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
        for tag, i1, i2, j1, j2 in _fewest(a[a0:a1], b[b0:b1]):
            ops.append((tag, a0 + i1, a0 + i2, b0 + j1, b0 + j2))
        i, j = max(i, a1), max(j, b1)
    if len(a) - i != len(b) - j or a[i:] != b[j:]:
        return None
    if i < len(a):
        ops.append(("equal", i, len(a), j, len(b)))
    return ops or [("equal", 0, 0, 0, 0)]


# Regions larger than this (old lines times new lines) are compared by difflib's
# matcher, which is fast but not always minimal; an edit's region is far smaller.
MINIMAL_CELLS = 250_000


def _fewest(a: list[str], b: list[str]) -> list[Opcode]:
    """Opcodes that show the fewest removed and added lines (a longest common
    subsequence): difflib's matcher takes the longest block first, which can show
    unchanged lines as removed and added again."""
    if len(a) * len(b) > MINIMAL_CELLS:
        return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    n, m = len(a), len(b)
    # lcs[i][j]: the longest common subsequence of a[i:] and b[j:]
    lcs = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = lcs[i], lcs[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    ops: list[Opcode] = []
    i = j = 0
    si = sj = 0  # where the current run of changes started

    def flush() -> None:
        if i > si and j > sj:
            ops.append(("replace", si, i, sj, j))
        elif i > si:
            ops.append(("delete", si, i, sj, j))
        elif j > sj:
            ops.append(("insert", si, i, sj, j))

    while i < n or j < m:
        if i < n and j < m and a[i] == b[j] and lcs[i][j] == lcs[i + 1][j + 1] + 1:
            flush()
            if ops and ops[-1][0] == "equal":
                tag, i1, _i2, j1, _j2 = ops.pop()
                ops.append((tag, i1, i + 1, j1, j + 1))
            else:
                ops.append(("equal", i, i + 1, j, j + 1))
            i, j = i + 1, j + 1
            si, sj = i, j
        elif i < n and (j == m or lcs[i + 1][j] >= lcs[i][j + 1]):
            i += 1
        else:
            j += 1
    flush()
    return ops


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


class Refused(Exception):
    """A converted file that is deliberately not written: ``code`` and why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


TEMP_SUFFIX = ".dra-migrate"
STALE_AFTER = 3600  # seconds: a temp file of ours without a live writer is removed after this


_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def _checked_folder(real: str) -> int:
    """``_open_real_folder``, or DRA012 where the folder changed since it was checked."""
    try:
        return _open_real_folder(real)
    except OSError:
        raise Refused(
            "DRA012", "a folder of this path changed during the run (a link now?); not written"
        ) from None


def _exists_in(folder: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _open_real_folder(real: str) -> int:
    """The folder at the real path ``real``, opened from the root one name at a time
    without following a link: the folder opened is the one at that path, now."""
    fd = os.open(os.sep, _FOLDER_FLAGS)
    try:
        for part in [p for p in real.split(os.sep) if p]:
            inner = os.open(part, _FOLDER_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _under(path: Path, root: Path) -> bool:
    from dra_migrate.repo.discover import real_path

    real_root = real_path(root)
    return path == real_root or path.is_relative_to(real_root)


PERMISSIONS = 0o777  # the bits a written file keeps: never setuid, setgid or sticky
REPORT_PERMISSIONS = 0o666  # a report (--output) is read and written, never run


def write_atomic(
    target: Path,
    data: bytes,
    expect: bytes | None = None,
    mode: int | None = None,
    folder: int | None = None,
    keep: int = PERMISSIONS,
    exclusive: bool = False,
) -> None:
    """Write through a temporary file in the same folder and rename it over ``target``
    (``exclusive``: link it to ``target``'s name, which fails where a file of that name
    appeared meanwhile: DRA012; a new file never replaces one).

    The folder is opened once (``folder``, when the caller opened it already) and
    every step is relative to it: the temporary file is made there with
    ``O_EXCL | O_NOFOLLOW``, the file read again and renamed there, so a folder
    swapped meanwhile changes nothing. An existing regular file's permission bits
    are kept (those of ``keep``: never setuid, setgid or sticky); a new file, or a
    link that is replaced, gets ``mode``, else what ``open`` would give it under
    the umask. A reader never sees half a file. With ``expect``, the target must
    still hold exactly those bytes just before the rename, or nothing is written
    (DRA012). Temporary files of earlier runs that were killed are removed.
    """
    own = folder is None
    if folder is None:
        target.parent.mkdir(parents=True, exist_ok=True)
        folder = os.open(target.parent, _FOLDER_FLAGS)
    try:
        _write_in(folder, target.name, data, expect, mode, keep, exclusive)
    finally:
        if own:
            os.close(folder)


def _write_in(
    folder: int,
    name: str,
    data: bytes,
    expect: bytes | None,
    mode: int | None,
    keep: int,
    exclusive: bool = False,
) -> None:
    tmp = _stage_in(folder, name, data, mode, keep)
    try:
        if expect is not None:
            _unchanged(folder, name, expect)
        if exclusive:
            _link_new(folder, tmp, name)
        else:
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=folder)
        raise


def _stage_in(folder: int, name: str, data: bytes, mode: int | None, keep: int) -> str:
    """A temporary file beside ``name`` in ``folder`` holding ``data`` (written, its
    mode set, synced); its name. An existing regular file's mode bits are kept."""
    with contextlib.suppress(FileNotFoundError):
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if stat.S_ISREG(info.st_mode):  # a link is replaced, not its target's mode copied
            mode = info.st_mode & keep
    if mode is None:  # a new file: as open() would make it (the temporary file is 0600)
        mode = 0o666 & ~_umask()
    clean_stale_in(folder, name)
    import secrets  # here: a run that writes nothing does not pay for its import

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = f".{name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            fd = os.open(tmp, flags, 0o600, dir_fd=folder)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=folder)
        raise
    return tmp


def _link_new(folder: int, tmp: str, name: str) -> None:
    """The temporary file under ``name`` only if no file has that name (a hard link
    never replaces one, as a rename would), then the temporary name gone. A file
    system without hard links gets the check and the rename (a race of a moment)."""
    try:
        os.link(tmp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except FileExistsError:
        raise Refused(
            "DRA012", "a file of this name appeared during the run; not written"
        ) from None
    except OSError:  # no hard links here (EPERM, ENOTSUP): as close as a rename gets
        if _exists_in(folder, name):
            raise Refused(
                "DRA012", "a file of this name appeared during the run; not written"
            ) from None
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        return
    os.unlink(tmp, dir_fd=folder)


def _umask() -> int:
    """The process's umask (read by setting it, and set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _unchanged(folder: int, name: str, expect: bytes) -> None:
    """``name`` in ``folder`` still holds ``expect`` (read without following a link)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except FileNotFoundError:
        raise Refused("DRA012", "the file vanished during the run; not written") from None
    except OSError as exc:
        raise Refused(
            "DRA012", f"the file cannot be read again: {exc.strerror or exc}; not written"
        ) from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise Refused("DRA012", "the file is no longer a regular file; not written")
        now = handle.read(len(expect) + 1)
    if now != expect:
        raise Refused("DRA012", "the file changed during the run; not written (run again)")


def clean_stale_in(folder: int, name: str) -> list[str]:
    """Remove temporary files of ``name`` in ``folder`` that runs of ours left behind
    (SIGKILL, power loss): those whose writing process is gone, or that are older
    than an hour. Only regular files are removed, by name in that folder."""
    import time

    removed: list[str] = []
    prefix = f".{name}."
    try:
        leftovers = [n for n in os.listdir(folder) if n.startswith(prefix)]
    except OSError:
        return removed
    for leftover in leftovers:
        if not leftover.endswith(TEMP_SUFFIX) or len(leftover) <= len(prefix) + len(TEMP_SUFFIX):
            continue
        middle = leftover[len(prefix) : -len(TEMP_SUFFIX)]
        pid = middle.split(".", 1)[0]
        try:
            info = os.stat(leftover, dir_fd=folder, follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        alive = pid.isdigit() and _alive(int(pid))
        if alive and time.time() - info.st_mtime < STALE_AFTER:
            continue
        with contextlib.suppress(OSError):
            os.unlink(leftover, dir_fd=folder)
            removed.append(leftover)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True


def output_path(output_dir: Path, display: str) -> Path:
    """Where ``display`` goes under ``output_dir``: the same relative layout, never outside it."""
    from pathlib import PurePosixPath

    parts = [
        p for p in PurePosixPath(display.replace(os.sep, "/")).parts if p not in ("/", "..", ".")
    ]
    return output_dir.joinpath(*parts)
