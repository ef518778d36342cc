"""Stage 1, discover: which files to look at, and which of them to parse.

Directories are walked for ``.yaml``, ``.yml`` and ``.json``; inside a git
work tree the files git would ignore are skipped (``git ls-files`` is asked,
so every ``.gitignore`` rule applies exactly as git applies it). A cheap byte
search for the configured resource names then decides which files are parsed
at all: most files of a real repository never mention a GPU.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from dra_migrate import git

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:  # nor pathlib: paths are strings here (resources.py)
    from os import PathLike
    from pathlib import Path
    from typing import Any, Protocol

    class Trees(Protocol):  # context.Trees (which imports this module)
        def search(self, raw: str, needles: Sequence[bytes]) -> Any: ...


EXTENSIONS = git.EXTENSIONS  # .tpl: Helm helpers, reported only
DEFAULT_MAX_FILE_SIZE = 64 * 2**20  # bytes; rendered charts of thousands of objects fit
_ALWAYS_SKIPPED = {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox"}


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str  # as found: the path named, or joined below it
    display: str  # as the user will see it: relative to where they named it
    explicit: bool  # named on the command line (not found by walking a directory)
    real: str  # links resolved: tells two names of one file apart
    # git grep read it as text and found none of the patterns of ``expand(unless=...)``:
    # nothing in it needs reading again
    ruled_out: bool = False
    # inside a git work tree, git listed it (and searched it); False for a file of a
    # repository inside the work tree, walked as a plain folder, and outside git
    listed: bool = True


class Unreadable(Exception):
    """A path that is not read: ``code`` (DRA001, DRA010, DRA011) and why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def read_file(path: str | PathLike[str], limit: int = DEFAULT_MAX_FILE_SIZE) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, or ``Unreadable``.

    The file is opened without blocking (a FIFO named ``x.yaml`` would wait for a
    writer forever) and checked on the open descriptor, so a symbolic link to
    ``/dev/zero`` is refused before a byte is read, and a file that grows past
    the limit while it is read is refused too.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise Unreadable("DRA001", f"cannot read file: {_reason(exc)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
            raise Unreadable("DRA010", f"not a regular file: {kind}; only regular files are read")
        if info.st_size > limit:
            raise Unreadable("DRA011", _too_large(info.st_size, limit))
        chunks = []
        want = min(info.st_size, limit) + 1  # one byte more: a file that grew is seen
        got = 0
        while True:
            try:
                chunk = os.read(fd, want - got)
            except OSError as exc:
                raise Unreadable("DRA001", f"cannot read file: {_reason(exc)}") from None
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            if got >= want:
                if got > limit:
                    break
                want = min(2 * want, limit + 1)  # it grew: read on, up to the limit
    finally:
        os.close(fd)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if len(data) > limit:
        raise Unreadable("DRA011", _too_large(len(data), limit))
    return data


_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _too_large(size: int, limit: int) -> str:
    return (
        f"file is {size} bytes, more than the limit of {limit} "
        "(--max-file-size, or maxFileSize in .dra-migrate.yaml)"
    )


def excluded(spec: Excludes, name: str) -> bool:
    """gitignore matching for any file name, also one that is not UTF-8 (the bytes
    that do not decode match wildcards only)."""
    try:
        return spec.match_file(name)
    except UnicodeError:
        safe = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return spec.match_file(safe)


def real_path(path: Path) -> Path:
    """The path with links resolved, for telling two names of one file apart; a link
    loop keeps its own name (reading it is reported, DRA001)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def _posix(path: str) -> str:
    """The path as ``PurePath.as_posix`` gives it (``./a//b`` is ``a/b``)."""
    from pathlib import PurePath

    return PurePath(path).as_posix()


def real_name(path: str) -> str:
    """``real_path`` for a string path."""
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, RuntimeError):  # missing, or a link loop: keeps its own name
        return os.path.abspath(path)


def expand(
    paths: Iterable[str],
    excludes: Iterable[str],
    skip: Iterable[str | Path] = (),
    unless: Sequence[bytes] = (),
    limit: int = DEFAULT_MAX_FILE_SIZE,
    reals: list[str] | None = None,
) -> Iterator[Candidate]:
    """Files under ``paths`` in a stable order, excludes and .gitignore applied.

    ``skip``: folders never walked into (the ``--output-dir`` of the run).
    ``unless``: byte strings the caller reads files for. Inside a git work tree,
    ``git grep`` (C, every core) searches the folder meanwhile, and a file it
    read as text without finding one of them, nor a backslash or a UTF-16
    byte-order mark (``mentions``, ``foreign_encoding``), comes ``ruled_out``:
    most files of a repository are then never read by Python at all. Files
    named on the command line, links, and files over ``limit`` (reading them
    reports it) are never ruled out.
    Paths stay strings on the way: a repository has tens of thousands of files,
    and each ``Path`` object or ``realpath`` call per file would cost more than
    reading it. A folder's real path is found once; a file's is its folder's
    plus its name unless the file is itself a link. ``reals``: when given, the
    real path of every file is appended to it, in the same order, and a file
    ruled out is not yielded (most files of a repository: the caller needs no
    more of them than where they are).
    """
    spec = Excludes(list(excludes))
    skipped = [real_name(str(p)) + os.sep for p in skip]
    seen: set[str] = set()
    for raw in paths:
        if os.path.isdir(raw):
            prefix = "" if raw in (".", "./") else raw.rstrip("/") + "/"
            top = raw if raw.endswith("/") else raw + "/"
            for rel, real, ruled_out, listed in _walk(raw, unless, limit):
                display = prefix + rel
                if spec.spec is not None and (excluded(spec, display) or excluded(spec, rel)):
                    continue
                if skipped and any((real + os.sep).startswith(s) for s in skipped):
                    continue
                if real not in seen:
                    seen.add(real)
                    if reals is not None:
                        reals.append(real)
                        if ruled_out:
                            continue
                    yield Candidate(top + rel, display, False, real, ruled_out, listed)
        else:
            if spec.spec is not None and excluded(spec, _posix(raw)):
                continue
            real = real_name(raw)
            if real not in seen:
                seen.add(real)
                if reals is not None:
                    reals.append(real)
                yield Candidate(raw, raw, True, real)


class Excludes:
    """gitignore-style patterns; pathspec is imported only when there are some."""

    def __init__(self, patterns: list[str]) -> None:
        self.spec = None
        if patterns:
            import pathspec

            self.spec = pathspec.GitIgnoreSpec.from_lines(patterns)

    def match_file(self, path: str) -> bool:
        return self.spec is not None and bool(self.spec.match_file(path))


def _walk(
    root: str, unless: Sequence[bytes] = (), limit: int = DEFAULT_MAX_FILE_SIZE
) -> list[tuple[str, str, bool, bool]]:
    """(path relative to ``root`` with ``/``, real path, ruled out, listed by git) of
    the files to look at, sorted (``expand`` says what ruled out means).

    Inside a git work tree, what git tracks or would add; links and special
    files too (reading them says what they are: DRA001, DRA010), and every file
    of a repository git finds inside it (not ignored), walked as a plain folder:
    git never runs in it (git.trust). Elsewhere every folder but the
    always-skipped ones; linked folders are not entered.
    """
    real_root = real_name(root)
    grep = git.without(root, unless) if unless else None  # runs while git lists the files
    tracked = _git_files(root)
    found: list[tuple[str, str, bool]] = []
    if tracked is None:
        if grep is not None:
            grep.cancel()
        _scan(root, "", real_root, found)
        found.sort()
        return [(rel, real, False, False) for rel, real, _plain in found]
    top = real_root if real_root.endswith("/") else real_root + "/"
    base = root if root.endswith("/") else root + "/"
    lstat, regular, kind = os.lstat, stat.S_IFREG, stat.S_IFMT
    nested: list[tuple[str, str, bool]] = []  # files of repositories inside it
    for rel in tracked:  # one lstat a file: thousands of them, so the loop is kept lean
        if not rel.endswith(EXTENSIONS) and not rel.lower().endswith(EXTENSIONS):
            if rel.endswith("/"):  # a repository inside the work tree: a plain folder
                _scan(base + rel[:-1], rel, top + rel[:-1], nested)
            continue  # (a kustomization named Kustomization, from a shared listing)
        try:
            info = lstat(base + rel)
        except OSError:  # tracked, deleted in the work tree
            continue
        if kind(info.st_mode) == regular:  # git never records a path through a linked folder
            found.append((rel, top + rel, info.st_size <= limit))
        elif stat.S_ISLNK(info.st_mode):
            if not os.path.isdir(base + rel):
                found.append((rel, real_name(top + rel), False))
        elif not stat.S_ISDIR(info.st_mode):  # a FIFO, a socket: reading it says so
            found.append((rel, top + rel, False))
    without = set((grep.names(ok=(0, 1)) or []) if grep is not None else ())
    listed = [(rel, real, plain and rel in without, True) for rel, real, plain in found]
    if not nested:
        return listed
    return sorted(listed + [(rel, real, False, False) for rel, real, _plain in nested])


def _scan(folder: str, rel: str, real: str, found: list[tuple[str, str, bool]]) -> None:
    try:
        with os.scandir(folder) as entries:
            listed = sorted(entries, key=lambda e: e.name)
    except OSError:  # unreadable folder: nothing under it is found, as with os.walk
        return
    for entry in listed:
        name = entry.name
        if _is_folder(entry, follow=False):
            if name not in _ALWAYS_SKIPPED:
                _scan(entry.path, rel + name + "/", os.path.join(real, name), found)
            continue
        if not name.lower().endswith(EXTENSIONS):
            continue
        if not _is_link(entry):
            found.append((rel + name, os.path.join(real, name), False))
        elif not _is_folder(entry, follow=True):  # a link to a folder is not entered
            # a link to a file, a dangling link or a link loop: reading it says which
            found.append((rel + name, real_name(entry.path), False))


def _is_folder(entry: os.DirEntry[str], follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:  # a link loop, or gone since it was listed
        return False


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _git_files(root: str) -> list[str] | None:
    """Files git tracks or would add under ``root``, relative to ``root``, sorted; None
    outside a git work tree."""
    names = git.files(root).names()
    if names is None:
        return None
    names.sort()  # git lists sorted runs (tracked, then untracked): a merge, not a sort
    return list(dict.fromkeys(names))  # a path in conflict is listed once a stage


def containing(paths: Iterable[str], needle: str, excludes: Iterable[str] = ()) -> set[str] | None:
    """Real paths of the files under ``paths`` (tracked, or untracked and not
    ignored; ``excludes`` applied) whose text may contain ``needle`` (``mentions``:
    it, or an escape that may spell it), as ``git grep``
    finds them (in C, on every core); None where a folder is outside a git work
    tree. A file named in ``paths`` is in when it contains the needle."""
    return Search(paths, needle, excludes).result()


class Search:
    """The running searches of ``containing``: ``result`` waits for them, ``cancel``
    stops them. With ``trees`` (the run's, context.Trees) a folder of a work tree
    whose answer is kept is answered from it instead of ``git grep``."""

    def __init__(
        self,
        paths: Iterable[str],
        needle: str | Sequence[str],
        excludes: Iterable[str],
        trees: Trees | None = None,
    ) -> None:
        self.excludes = list(excludes)
        self.paths = list(paths)
        self.found: set[str] = set()
        self.searches: list[tuple[str, Any]] = []  # git.Git, or what answers as one
        # the real paths found by a search of the index (context.Trees), each with its
        # search and its name there: read as the index holds them
        self.staged: dict[str, tuple[Any, str]] = {}
        needles = [n.encode() for n in ([needle] if isinstance(needle, str) else needle)]
        self.needles = tuple(needles)
        for raw in self.paths:
            if os.path.isdir(raw):
                kept = trees.search(raw, needles) if trees is not None else None
                self.searches.append((raw, kept or git.containing(raw, needles)))
                continue
            with contextlib.suppress(Unreadable):
                if mentions(read_file(raw), needles):
                    self.found.add(real_name(raw))

    def result(self) -> set[str] | None:
        """The real paths found; None where a folder is outside a git work tree."""
        spec = Excludes(self.excludes)
        for raw, search in self.searches:
            names = search.names(ok=(0, 1))
            if names is None:  # outside git: the caller reads the files itself
                self.cancel()
                self.staged.clear()  # (a walk reads them all from disk)
                return None
            root = real_name(raw)
            for rel in names:
                if rel.lower().endswith(EXTENSIONS) and not excluded(spec, rel):
                    real = real_name(os.path.join(root, rel))
                    self.found.add(real)
                    if getattr(search, "staged", False):
                        self.staged[real] = (search, rel)
        return self.found

    def cancel(self) -> None:
        for _raw, search in self.searches:
            search.cancel()

    def files(
        self, limit: int, extra: Iterable[str] = (), extensions: tuple[str, ...] = EXTENSIONS
    ) -> Iterator[tuple[str, str, bytes]]:
        """Each file that mentions a needle, once: its path, real name and bytes. git
        grep's answer where the paths are in a work tree; outside one the files walked
        and each searched; then ``extra`` (files named apart). A file that cannot be read
        is passed over: the run whose paths hold it reports it."""
        found = self.result()
        if found is None:
            walked = expand(self.paths, self.excludes, (), self.needles, limit)
            paths = [c.path for c in walked if not c.ruled_out]
        else:
            paths = sorted(found)
        from_index: dict[str, bytes] = {}  # real path -> content, of the index's files
        asked: dict[Any, list[tuple[str, str]]] = {}  # each search's (real path, name)
        for real, (search, rel) in self.staged.items():
            asked.setdefault(search, []).append((real, rel))
        for search, pairs in asked.items():
            held = search.read([rel for _real, rel in pairs], limit)
            from_index.update((real, held[rel]) for real, rel in pairs if rel in held)
        seen: set[str] = set()
        for path in [*paths, *extra]:
            real = real_name(path)
            if real in seen or not path.lower().endswith(extensions):
                continue
            seen.add(real)
            if real in self.staged:
                if real not in from_index:
                    continue  # over the limit, or gone from the index
                data = from_index[real]
            else:
                try:
                    data = read_file(path, limit)
                except Unreadable:
                    continue
            if mentions(data, self.needles):  # (git grep's backslash matches; a walk's files)
                yield path, real, data


# A backslash escape in a JSON or double-quoted YAML string can spell any
# character ("nvidia.com\u002fgpu", "Resource\x43laimTemplate"), and an escaped
# line break joins two lines with nothing between ("Resource\<break>ClaimTemplate";
# YAML's breaks: LF, CR, CRLF, NEL, LS, PS in UTF-8): bytes with one are parsed,
# never ruled out. No other YAML escape gives a character a needle holds.
_ESCAPE = re.compile(rb"\\(?:[uUx/\r\n]|\xc2\x85|\xe2\x80[\xa8\xa9])")


def mentions(data: bytes, needles: Iterable[bytes]) -> bool:
    """Whether the bytes may mention a needle: the prefilter before parsing (a needle,
    or an escape that may spell one: ``_ESCAPE``). Every byte search that decides
    whether a file is parsed asks this, so it may widen what is parsed, never narrow it."""
    return any(n in data for n in needles) or (b"\\" in data and _ESCAPE.search(data) is not None)


def may_define_templates(data: bytes) -> bool:
    """Whether the bytes may define a ResourceClaimTemplate (``mentions`` of its kind):
    what decides whether a file is parsed for the names it reserves."""
    return mentions(data, (git.TEMPLATE_KIND,))


def foreign_encoding(data: bytes) -> bool:
    """UTF-16 or UTF-32 text, with or without a byte-order mark: never skipped
    unread (the byte search cannot see into it), reported instead (DRA002)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    if b"\x00" not in data[:4096]:  # text without a NUL byte is not UTF-16 or UTF-32
        return False
    from dra_migrate.manifests.sources import utf16_without_bom

    return bool(utf16_without_bom(data))
