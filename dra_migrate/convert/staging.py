"""Writing files in place, new, or as copies, one file or a unit of several at once:
each file staged first (its new bytes in a temporary file beside it, the old file kept
aside), then all put in place together (``commit``, with SIGINT and SIGTERM held), or,
on a failure, every one put back. The checks and the steps on one open folder are
writer.py's; this module is imported only by a run that writes.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from dra_migrate.convert import writer

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from pathlib import Path


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
    """A commit that stopped at ``failed`` (``cause``: a ``writer.Refused`` or an ``OSError``,
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
        writer._link_new(item.folder, item.tmp, item.name)
    else:
        if item.expect is not None:  # (an --output-dir copy replaces what is there)
            writer._unchanged(item.folder, item.name, item.expect)
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
        keep = f".{name}.{os.getpid()}.{secrets.token_hex(4)}{writer.TEMP_SUFFIX}"
        try:
            os.link(name, keep, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
            return keep
        except FileExistsError:
            continue
        except OSError:  # no hard links here: a copy
            return writer._stage_in(folder, name, original, None, writer.PERMISSIONS)


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
        raise writer.Refused("DRA012", "the file vanished during the run; not written")
    target = real_path(path)  # through every link, of the file or of a folder above it
    if not through_links and not any(writer._under(target, r) for r in roots):
        raise writer.Refused(
            "DRA013",
            f"this path leads through a symbolic link to {target}, outside the paths given; "
            "not written (--write-through-links writes through it)",
        )
    folder = writer._checked_folder(str(target.parent))
    try:
        try:
            info = os.stat(target.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            raise writer.Refused(
                "DRA012", "the file vanished during the run; not written"
            ) from None
        if not stat.S_ISREG(info.st_mode):
            raise writer.Refused("DRA012", "the file is no longer a regular file; not written")
        if not info.st_mode & stat.S_IWUSR:
            raise writer.Refused(
                "DRA014", "the file is read-only; not replaced (make it writable first)"
            )
    except BaseException:
        os.close(folder)
        raise
    staged = Staged(shown or str(path), folder, target.name, expect=original)
    try:
        staged.tmp = writer._stage_in(folder, target.name, data, None, writer.PERMISSIONS)
        staged.undo = _keep_old(folder, target.name, original)
    except BaseException:
        discard_all([staged])  # (closes the folder)
        raise
    return staged


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
        raise writer.Refused("DRA012", "a file of this name appeared during the run; not written")
    folder_real = real_path(path.parent)
    if not through_links and not any(writer._under(folder_real, r) for r in roots):
        raise writer.Refused(
            "DRA013",
            f"this folder leads through a symbolic link to {folder_real}, outside the paths "
            "given; not written (--write-through-links writes through it)",
        )
    folder = writer._checked_folder(str(folder_real))
    try:
        if writer._exists_in(folder, path.name):
            raise writer.Refused(
                "DRA012", "a file of this name appeared during the run; not written"
            )
        staged = Staged(shown or str(path), folder, path.name, created=True)
        staged.tmp = writer._stage_in(folder, path.name, data, None, writer.PERMISSIONS)
    except BaseException:
        os.close(folder)
        raise
    return staged


def write_copy(output_dir: Path, display: str, data: bytes, source: Path | None) -> Path:
    """``--output-dir`` of one file: ``stage_copy`` and ``commit``."""
    try:
        commit([stage_copy(output_dir, display, data, source)], [])
    except UnitFailed as failed:
        raise failed.cause from None
    return writer.output_path(output_dir, display)


def stage_copy(output_dir: Path, display: str, data: bytes, source: Path | None) -> Staged:
    """``--output-dir``: stage a converted copy (put in place by ``commit``, what was
    there kept aside); links inside the folder are never followed (DRA015) and the copy
    gets the source's permission bits."""
    target = writer.output_path(output_dir, display)
    here = output_dir
    for part in target.relative_to(output_dir).parts:
        here = here / part
        if here.is_symlink():
            raise writer.Refused(
                "DRA015",
                f"{here} in the output folder is a symbolic link; not followed, not written",
            )
    mode = None
    if source is not None:
        with contextlib.suppress(OSError):
            mode = source.stat().st_mode & writer.PERMISSIONS
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = os.open(target.parent, writer._FOLDER_FLAGS)
    staged = Staged(display, folder, target.name, record=str(target))
    try:
        staged.tmp = writer._stage_in(folder, target.name, data, mode, writer.PERMISSIONS)
        if writer._exists_in(folder, target.name):  # an earlier copy: kept aside, to put back
            staged.undo = _keep_old(folder, target.name, _old_copy(folder, target.name))
    except BaseException:
        discard_all([staged])
        raise
    return staged


def _old_copy(folder: int, name: str) -> bytes:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()
