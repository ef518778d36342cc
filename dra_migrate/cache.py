"""The user's cache folder: what one run keeps for the next, as data and nothing else.

Every file kept between runs is read and written here, under these rules:

- Where: ``$XDG_CACHE_HOME/dra-migrate`` (an absolute ``XDG_CACHE_HOME`` only, as
  the XDG specification says), else ``~/.cache/dra-migrate``. The folder is made
  with mode 0700 and used only when it is a real folder (not a link), owned by the
  user and closed to everyone else (no group or other permission bit); it is
  opened once and every file is reached through that descriptor, so the folder
  checked is the folder used. Otherwise no cache is used: every run computes
  everything, which is only slower.
- Never inside what a run reads: a folder that lies inside a path the run is given,
  or inside the git work tree of one (a CI recipe that keeps the cache inside the
  checkout), is not used, since files a pull request commits there would steer
  the run (``keep_out_of``).
- Data only: JSON, never a pickle or anything else that runs code. A file is
  written to a new temporary file (``O_CREAT | O_EXCL | O_NOFOLLOW``, mode 0600)
  and renamed into place, so a reader sees all of it or none; it is read with
  ``O_NOFOLLOW`` and checked on the open descriptor (a regular file, the user's,
  mode 0600 or narrower, at most ``MAX_FILE`` bytes) before a byte is read.
  Each holds the package's version and code stamp, its kind and the whole key
  it answers (a name is a digest of the key: two keys never share an answer),
  and the caller's ``shape`` validates what it holds: anything else is a miss,
  rebuilt silently.
- Bounded: at most ``MAX_FILES`` files and ``MAX_BYTES`` bytes; past that the
  least recently used are removed (a file read is marked used at most once an
  hour, by its modification time). Temporary files that killed runs left behind
  are removed after an hour.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import dataclass
from functools import cache

from dra_migrate import __version__

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

MAX_FILE = 16 * 2**20  # bytes of one kept file (a repository's kustomization facts fit)
MAX_FILES = 4096
MAX_BYTES = 256 * 2**20
PRUNE_EVERY = 64  # files written by a process between two looks at the folder's size
FORMAT = 2  # the layout of a kept file (1: the files before this module)
TOUCH_AFTER = 3600  # seconds: a file read is marked used when its mark is older
STALE_TEMPORARY = 3600  # seconds: a temporary file older than this was left by a killed run
_SUFFIX = ".json"
_TEMPORARY = ".tmp"

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = (
    os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
)
# what the folder's descriptor is used for (os.replace is renameat, as os.rename, which
# stands for it in the table): every platform this runs on has them, one that lacks any
# keeps no cache
_SUPPORTED = {os.open, os.rename, os.unlink, os.stat, os.utime} <= os.supports_dir_fd and (
    os.listdir in os.supports_fd
)


@dataclass(slots=True)
class _State:
    """The folder of this process, opened when first needed (``fd``: None where no
    cache is used; ``where``: the location it was opened at), and the real paths
    the run reads, which it must not lie inside. Not frozen: the run changes it as
    it opens the folder and writes files (``written``: files written so far)."""

    fd: int | None = None
    where: str | None = None
    opened: bool = False
    outside: tuple[str, ...] = ()
    written: int = 0


_state = _State()


def location() -> str | None:
    """Where the cache folder is (whether or not it can be used); None without a home."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the specification: a relative value is ignored
        home = os.path.expanduser("~")
        if home == "~":  # no HOME and no passwd entry
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "dra-migrate")


def keep_out_of(paths: Iterable[str]) -> None:
    """The run reads ``paths`` (``-``: standard input): no cache inside any of them,
    nor inside the git work tree one is in. Asked before a file is read or kept;
    replaces what an earlier run of the process said."""
    from dra_migrate import git

    outside: set[str] = set()
    folders: set[str] = set()  # a hook names hundreds of files in a few folders
    for path in paths:
        if path == "-":
            continue
        if os.path.isdir(path):
            outside.add(os.path.realpath(path))
            folders.add(path)
        else:  # nothing lies inside a file: its work tree only
            folders.add(os.path.dirname(path) or ".")
    for folder in folders:
        top = git.work_tree_top(folder)
        if top is not None:
            outside.add(top)
    adopt(tuple(sorted(outside)))


def outside() -> tuple[str, ...]:
    """The real paths the cache folder must not lie inside (for ``adopt``)."""
    return _state.outside


def adopt(paths: tuple[str, ...]) -> None:
    """Take ``outside()`` of the process that started this one (a worker of the pool:
    a new interpreter where the pool does not fork)."""
    _close()
    _state.outside = paths
    _state.written = 0


def _close() -> None:
    if _state.fd is not None:
        os.close(_state.fd)
    _state.fd = None
    _state.opened = False


def _folder() -> int | None:
    """The descriptor of the cache folder, opened once a location; None where none is
    used."""
    where = location()
    if not _state.opened or where != _state.where:
        _close()
        _state.opened, _state.where = True, where
        _state.fd = _open_folder(where)
    return _state.fd


def _open_folder(where: str | None) -> int | None:
    if where is None or not _SUPPORTED or _inside():  # (inside: not even made there)
        return None
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
        fd = os.open(where, _DIRECTORY)
    except OSError:  # a link, a file, no room, no permission
        return None
    try:
        info = os.fstat(fd)
        ours = stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
        if ours and not info.st_mode & 0o077:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _inside() -> bool:
    """Whether the folder lies inside a path the run reads (or its work tree)."""
    here = os.path.realpath(location() or os.sep).rstrip(os.sep) + os.sep
    return any(here.startswith(p.rstrip(os.sep) + os.sep) for p in _state.outside)


def digest(data: bytes) -> str:
    """BLAKE2b of ``data`` (32 bytes, hex): what names and keys kept answers. From the
    standard library's own implementation, which ``hashlib.blake2b`` is too (importing
    ``hashlib`` loads OpenSSL first: 5 ms of a one-file hook run)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter without the module: hashlib's
        from hashlib import blake2b
    return blake2b(data, digest_size=32).hexdigest()


def _name(kind: str, key: str) -> str:
    return f"{kind}-{digest(key.encode('utf-8', 'surrogatepass'))[:40]}{_SUFFIX}"


def read(kind: str, key: str, stamp: str, shape: Callable[[Any], Any]) -> Any:
    """What was kept for ``key`` (of the kind ``kind``, computed by code and data of
    ``stamp``), as ``shape`` makes it of the JSON value (raising ValueError,
    TypeError, KeyError or IndexError where it is not what it must be); None when
    nothing valid is kept."""
    fd = _folder()
    if fd is None:
        return None
    name = _name(kind, key)
    try:
        handle = os.open(name, _READ, dir_fd=fd)
    except OSError:
        return None
    try:
        info = os.fstat(handle)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or info.st_mode & 0o077
            or info.st_size > MAX_FILE
        ):
            return None
        data = _read_all(handle, info.st_size)
    except OSError:
        return None
    finally:
        os.close(handle)
    if data is None:
        return None
    try:
        held = json.loads(data)
        if not (
            isinstance(held, dict)
            and held.get("format") == FORMAT
            and held.get("version") == __version__
            and held.get("kind") == kind
            and held.get("stamp") == stamp
            and held.get("key") == key
        ):
            return None
        value = shape(held["value"])
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
        return None  # partial, forged, of another layout: computed again
    _mark_used(fd, name, info.st_mtime)
    return value


def _read_all(handle: int, size: int) -> bytes | None:
    """The file's bytes, at most MAX_FILE; None when it grew past that meanwhile."""
    chunks = []
    got = 0
    while True:
        chunk = os.read(handle, max(size + 1 - got, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
        if got > MAX_FILE:
            return None
    return b"".join(chunks)


def _mark_used(fd: int, name: str, mtime: float) -> None:
    import time

    now = time.time()
    if now - mtime > TOUCH_AFTER:
        with contextlib.suppress(OSError, NotImplementedError):
            os.utime(name, dir_fd=fd, follow_symlinks=False)


def write(kind: str, key: str, stamp: str, value: Any) -> None:
    """Keep ``value`` (what JSON holds) for ``key``; a cache that cannot be written, or
    a value JSON cannot hold, is no error: nothing is kept."""
    fd = _folder()
    if fd is None:
        return
    try:
        data = json.dumps(
            {
                "format": FORMAT,
                "version": __version__,
                "kind": kind,
                "stamp": stamp,
                "key": key,
                "value": value,
            },
            ensure_ascii=False,
        ).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError, RecursionError, UnicodeError):
        return
    if len(data) > MAX_FILE:
        return
    name = _name(kind, key)
    temporary = f".{name}.{os.getpid()}.{digest(os.urandom(16))[:12]}{_TEMPORARY}"
    try:
        handle = os.open(temporary, _CREATE, 0o600, dir_fd=fd)
    except OSError:
        return
    try:
        with open(handle, "wb", closefd=True) as out:
            out.write(data)
        os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=fd)
        return
    _state.written += 1
    if _state.written % PRUNE_EVERY == 1:  # the first file a process writes, then every 64th
        prune()


def prune(max_files: int | None = None, max_bytes: int | None = None) -> None:
    """Remove the least recently used files past ``max_files`` files or ``max_bytes``
    bytes (``MAX_FILES``, ``MAX_BYTES``), what is not a kept file of ours (another
    layout, a link), and temporary files left behind."""
    fd = _folder()
    if fd is None:
        return
    max_files = MAX_FILES if max_files is None else max_files
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    import time

    now = time.time()
    kept: list[tuple[float, int, str]] = []
    try:
        names = os.listdir(fd)
    except OSError:
        return
    for name in names:
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        if name.endswith(_TEMPORARY) and name.startswith("."):
            if now - info.st_mtime > STALE_TEMPORARY:
                _remove(fd, name)
            continue
        if not stat.S_ISREG(info.st_mode) or not name.endswith(_SUFFIX):
            if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                _remove(fd, name)  # a pickle of old, a link: never read, so not kept
            continue
        kept.append((info.st_mtime, info.st_size, name))
    kept.sort(reverse=True)  # the most recently used first
    total = 0
    for count, (_mtime, size, name) in enumerate(kept):
        total += size
        if count >= max_files or total > max_bytes:
            _remove(fd, name)


def _remove(fd: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=fd)


@cache
def package_stamp() -> str | None:
    """This package's code: the Python version and the size and modification time of
    each module; None where they cannot be listed (nothing is kept)."""
    import sys

    here = os.path.dirname(os.path.realpath(__file__))
    modules = [
        os.path.join(folder, n)
        for folder, subfolders, names in os.walk(here)
        if not subfolders.sort() and os.path.basename(folder) != "__pycache__"
        for n in sorted(names)
        if n.endswith(".py")
    ]
    if not modules:
        return None
    files = files_stamp(modules)
    return None if files is None else f"{sys.version} {files}"


def files_stamp(paths: list[str]) -> str | None:
    """The size and modification time of each of ``paths`` (part of a stamp); None
    when one cannot be read."""
    try:
        return repr([(p, *_size_and_time(p)) for p in paths])
    except OSError:
        return None


def _size_and_time(path: str) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns
