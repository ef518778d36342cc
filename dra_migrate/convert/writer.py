"""Writing results: unified diffs, atomic in-place writes, output folders."""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

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


@dataclass(slots=True)
class Staged:
    """A file of a write, staged: its folder (open, every step relative to it), its
    name, the temporary file with the new bytes (``tmp``), and for a file replaced the
    old one kept aside (``undo``: a hard link to it, else a copy) to put back. ``state``
    is what the file is now: ``staged`` (as it was), ``written``, ``put back``, or
    ``left written`` (it could not be put back)."""

    shown: str  # the path as the run shows it
    folder: int
    name: str
    expect: bytes | None = None  # what an existing file must still hold
    created: bool = False
    tmp: str | None = None
    undo: str | None = None
    state: str = "staged"
    record: str = ""  # what ``written`` lists (an --output-dir copy: its path); else shown


class UnitFailed(Exception):
    """A commit that stopped at ``failed`` (``cause``: a ``Refused`` or an ``OSError``,
    or an interrupt); every file of it is as its ``state`` says."""

    def __init__(self, failed: Staged, cause: BaseException, staged: list[Staged]) -> None:
        super().__init__(str(cause))
        self.failed, self.cause, self.staged = failed, cause, staged


def commit(staged: list[Staged], written: list[str]) -> None:
    """Put the staged files in place, in order (a unit: every file of it staged first),
    with SIGINT and SIGTERM held until the unit is whole (a signal that comes meanwhile
    is taken after, and ``written``, which lists each file as it is put in place, is
    true when it is). On a failure, what was replaced is put back and what was created
    removed, newest first, and ``UnitFailed`` says which file failed and the state of
    each (``left written`` where even putting back failed). The temporary files and
    the folders are released either way."""
    done: list[Staged] = []
    current = staged[0] if staged else None
    try:
        with signals_held():
            try:
                for current in staged:
                    _place(current)
                    done.append(current)
                    written.append(current.record or current.shown)
            except BaseException as exc:
                _put_back(done, written)
                assert current is not None
                raise UnitFailed(current, exc, staged) from None
    finally:
        discard_all(staged)


def _place(item: Staged) -> None:
    assert item.tmp is not None
    if item.created:
        _link_new(item.folder, item.tmp, item.name)
    else:
        if item.expect is not None:  # (an --output-dir copy replaces what is there)
            _unchanged(item.folder, item.name, item.expect)
        os.replace(item.tmp, item.name, src_dir_fd=item.folder, dst_dir_fd=item.folder)
    item.tmp = None
    item.state = "written"


def _put_back(done: list[Staged], written: list[str]) -> None:
    """The files of ``done`` as they were, newest first: a replaced file's old one
    renamed back over it, a created file removed."""
    for item in reversed(done):
        try:
            if item.undo is None:  # a new file (or a copy where there was none): removed
                os.unlink(item.name, dir_fd=item.folder)
            else:
                os.replace(item.undo, item.name, src_dir_fd=item.folder, dst_dir_fd=item.folder)
                item.undo = None
        except OSError:
            item.state = "left written"
            continue
        item.state = "put back"
        with contextlib.suppress(ValueError):
            written.remove(item.shown)


def discard_all(staged: list[Staged]) -> None:
    """Temporary and kept-aside files removed, folders closed."""
    for item in staged:
        for leftover in (item.tmp, item.undo):
            if leftover is not None:
                with contextlib.suppress(OSError):
                    os.unlink(leftover, dir_fd=item.folder)
        item.tmp = item.undo = None
        if item.folder >= 0:
            with contextlib.suppress(OSError):
                os.close(item.folder)
            item.folder = -1


def _keep_old(folder: int, name: str, original: bytes) -> str:
    """The file ``name`` kept aside under a temporary name, to be put back: a hard link
    to it (no byte copied, its inode and mode as they are), else a copy of
    ``original`` with its mode."""
    import secrets

    while True:
        keep = f".{name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            os.link(name, keep, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
            return keep
        except FileExistsError:
            continue
        except OSError:  # no hard links here: a copy
            return _stage_in(folder, name, original, None, PERMISSIONS)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held while the block runs in the main thread: blocked there
    (and one another thread takes meanwhile only noted); when the block ends, the
    first one that came is raised again, for the handler that was in place."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "pthread_sigmask"
    ):
        yield
        return
    held = (signal.SIGINT, signal.SIGTERM)
    noted: list[int] = []
    previous = {signum: signal.signal(signum, lambda n, _f: noted.append(n)) for signum in held}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set(held))
    try:
        yield
    finally:
        noted.extend(sorted(signal.sigpending() & set(held)))  # blocked, waiting
        for signum in held:  # (delivered when unblocked: discarded, they are noted)
            signal.signal(signum, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if noted:
            signal.raise_signal(noted[0])


TEMP_SUFFIX = ".dra-migrate"
STALE_AFTER = 3600  # seconds: a temp file of ours without a live writer is removed after this


def write_in_place(
    path: Path, data: bytes, original: bytes, roots: Sequence[Path], through_links: bool
) -> None:
    """``--write`` of one file: ``stage_in_place`` and ``commit``."""
    try:
        commit([stage_in_place(path, data, original, roots, through_links)], [])
    except UnitFailed as failed:
        raise failed.cause from None


def stage_in_place(
    path: Path,
    data: bytes,
    original: bytes,
    roots: Sequence[Path],
    through_links: bool,
    shown: str = "",
) -> Staged:
    """``--write``: stage the replacement of ``path`` with ``data`` (put in place by
    ``commit`` when it still holds ``original``).

    A symbolic link is written through to its target only when the target lies
    under one of ``roots`` (the paths given) or ``through_links`` is set
    (DRA013); a read-only file is not replaced (DRA014); a file that changed
    or vanished since it was read is not written (DRA012, checked again just
    before the rename).

    What is checked is what is written: the target's folder is opened once,
    along its real path with no link followed (``O_NOFOLLOW`` at every step),
    and every later step is relative to that open folder. A folder swapped for
    a link after the check is refused (DRA012), never written through.
    """
    from dra_migrate.repo.discover import real_path

    if not os.path.lexists(path):
        raise Refused("DRA012", "the file vanished during the run; not written")
    target = real_path(path)  # through every link, of the file or of a folder above it
    if not through_links and not any(_under(target, r) for r in roots):
        raise Refused(
            "DRA013",
            f"this path leads through a symbolic link to {target}, outside the paths given; "
            "not written (--write-through-links writes through it)",
        )
    folder = _checked_folder(str(target.parent))
    try:
        try:
            info = os.stat(target.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            raise Refused("DRA012", "the file vanished during the run; not written") from None
        if not stat.S_ISREG(info.st_mode):
            raise Refused("DRA012", "the file is no longer a regular file; not written")
        if not info.st_mode & stat.S_IWUSR:
            raise Refused("DRA014", "the file is read-only; not replaced (make it writable first)")
    except BaseException:
        os.close(folder)
        raise
    staged = Staged(shown or str(path), folder, target.name, expect=original)
    try:
        staged.tmp = _stage_in(folder, target.name, data, None, PERMISSIONS)
        staged.undo = _keep_old(folder, target.name, original)
    except BaseException:
        discard_all([staged])  # (closes the folder)
        raise
    return staged


_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def write_new(path: Path, data: bytes, roots: Sequence[Path], through_links: bool) -> None:
    """``--write`` of one new file: ``stage_new`` and ``commit``."""
    try:
        commit([stage_new(path, data, roots, through_links)], [])
    except UnitFailed as failed:
        raise failed.cause from None


def stage_new(
    path: Path, data: bytes, roots: Sequence[Path], through_links: bool, shown: str = ""
) -> Staged:
    """``--write`` of a file the conversion adds (a kustomize overlay's templates): only
    where no file of that name exists, in a folder under the paths given; staged, put
    in place by ``commit``."""
    from dra_migrate.repo.discover import real_path

    if os.path.lexists(path):
        raise Refused("DRA012", "a file of this name appeared during the run; not written")
    folder_real = real_path(path.parent)
    if not through_links and not any(_under(folder_real, r) for r in roots):
        raise Refused(
            "DRA013",
            f"this folder leads through a symbolic link to {folder_real}, outside the paths "
            "given; not written (--write-through-links writes through it)",
        )
    folder = _checked_folder(str(folder_real))
    try:
        if _exists_in(folder, path.name):
            raise Refused("DRA012", "a file of this name appeared during the run; not written")
        staged = Staged(shown or str(path), folder, path.name, created=True)
        staged.tmp = _stage_in(folder, path.name, data, None, PERMISSIONS)
    except BaseException:
        os.close(folder)
        raise
    return staged


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


def write_copy(output_dir: Path, display: str, data: bytes, source: Path | None) -> Path:
    """``--output-dir`` of one file: ``stage_copy`` and ``commit``."""
    try:
        commit([stage_copy(output_dir, display, data, source)], [])
    except UnitFailed as failed:
        raise failed.cause from None
    return output_path(output_dir, display)


def stage_copy(output_dir: Path, display: str, data: bytes, source: Path | None) -> Staged:
    """``--output-dir``: stage a converted copy (put in place by ``commit``, what was
    there kept aside); links inside the folder are never followed (DRA015) and the copy
    gets the source's permission bits."""
    target = output_path(output_dir, display)
    here = output_dir
    for part in target.relative_to(output_dir).parts:
        here = here / part
        if here.is_symlink():
            raise Refused(
                "DRA015",
                f"{here} in the output folder is a symbolic link; not followed, not written",
            )
    mode = None
    if source is not None:
        with contextlib.suppress(OSError):
            mode = source.stat().st_mode & PERMISSIONS
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = os.open(target.parent, _FOLDER_FLAGS)
    staged = Staged(display, folder, target.name, record=str(target))
    try:
        staged.tmp = _stage_in(folder, target.name, data, mode, PERMISSIONS)
        if _exists_in(folder, target.name):  # an earlier copy: kept aside, to put back
            staged.undo = _keep_old(folder, target.name, _old_copy(folder, target.name))
    except BaseException:
        discard_all([staged])
        raise
    return staged


def _old_copy(folder: int, name: str) -> bytes:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


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
