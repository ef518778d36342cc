"""Stage 1, discover: which files to look at, and which of them to parse.

Directories are walked for ``.yaml``, ``.yml`` and ``.json``; inside a git
work tree the files git would ignore are skipped (``git ls-files`` is asked,
so every ``.gitignore`` rule applies exactly as git applies it). A cheap byte
search for the configured resource names then decides which files are parsed
at all: most files of a real repository never mention a GPU.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

EXTENSIONS = (".yaml", ".yml", ".json", ".tpl")  # .tpl: Helm helpers, reported only
DEFAULT_MAX_FILE_SIZE = 64 * 2**20  # bytes; rendered charts of thousands of objects fit
_ALWAYS_SKIPPED = {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox"}


@dataclass(frozen=True)
class Candidate:
    path: Path
    display: str  # as the user will see it: relative to where they named it
    explicit: bool  # named on the command line (not found by walking a directory)


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


def read_file(path: Path | str, limit: int = DEFAULT_MAX_FILE_SIZE) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, or ``Unreadable``.

    The file is opened without blocking (a FIFO named ``x.yaml`` would wait for a
    writer forever) and checked on the open descriptor, so a symbolic link to
    ``/dev/zero`` is refused before a byte is read, and a file that grows past
    the limit while it is read is refused too.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise Unreadable("DRA001", f"cannot read file: {_reason(exc)}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
            raise Unreadable("DRA010", f"not a regular file: {kind}; only regular files are read")
        if info.st_size > limit:
            raise Unreadable("DRA011", _too_large(info.st_size, limit))
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise Unreadable("DRA001", f"cannot read file: {_reason(exc)}") from None
    if len(data) > limit:
        raise Unreadable("DRA011", _too_large(len(data), limit))
    return data


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _too_large(size: int, limit: int) -> str:
    return (
        f"file is {size} bytes, more than the limit of {limit} "
        "(--max-file-size, or maxFileSize in .dra-migrate.yaml)"
    )


def _matches(spec: _Excludes, name: str) -> bool:
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


def expand(
    paths: Iterable[str], excludes: Iterable[str], skip: Iterable[Path] = ()
) -> Iterator[Candidate]:
    """Files under ``paths`` in a stable order, excludes and .gitignore applied.

    ``skip``: folders never walked into (the ``--output-dir`` of the run).
    """
    spec = _Excludes(list(excludes))
    skipped = [real_path(p) for p in skip]
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for file in _walk(path):
                rel = _display(file, path, raw)
                if _matches(spec, rel) or _matches(spec, file.relative_to(path).as_posix()):
                    continue
                real = real_path(file)
                if any(real.is_relative_to(s) for s in skipped):
                    continue
                if real not in seen:
                    seen.add(real)
                    yield Candidate(file, rel, explicit=False)
        else:
            display = raw
            if _matches(spec, Path(raw).as_posix()):
                continue
            real = real_path(path)
            if real not in seen:
                seen.add(real)
                yield Candidate(path, display, explicit=True)


class _Excludes:
    """gitignore-style patterns; pathspec is imported only when there are some."""

    def __init__(self, patterns: list[str]) -> None:
        self.spec = None
        if patterns:
            import pathspec

            self.spec = pathspec.PathSpec.from_lines("gitwildmatch", patterns)

    def match_file(self, path: str) -> bool:
        return self.spec is not None and bool(self.spec.match_file(path))


def _display(file: Path, root: Path, raw: str) -> str:
    rel = file.relative_to(root).as_posix()
    if raw in (".", "./"):
        return rel
    return f"{raw.rstrip('/')}/{rel}"


def _walk(root: Path) -> list[Path]:
    tracked = _git_files(root)
    if tracked is not None:
        # links and special files too: reading them says what they are (DRA001, DRA010)
        return sorted(
            p
            for p in tracked
            if p.suffix.lower() in EXTENSIONS and os.path.lexists(p) and not p.is_dir()
        )
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _ALWAYS_SKIPPED)
        for name in sorted(files):
            if name.lower().endswith(EXTENSIONS):
                found.append(Path(folder) / name)
    return sorted(found)


def _git_files(root: Path, patterns: tuple[str, ...] = (".",)) -> list[Path] | None:
    """Files git tracks or would add under ``root`` (matching the pathspec ``patterns``);
    None outside a git work tree."""
    try:
        out = subprocess.run(
            [
                "git",
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
                "--",
                *patterns,
            ],
            cwd=root,
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [
        root / name
        for name in sorted(set(out.decode("utf-8", "surrogateescape").split("\0")))
        if name
    ]


# A backslash escape in a JSON or double-quoted YAML string can spell any
# character ("nvidia.com\u002fgpu"): bytes with one are parsed, not ruled out.
_ESCAPE = re.compile(rb"\\(?:[uUx/]|\r?\n)")


def mentions(data: bytes, needles: Iterable[bytes]) -> bool:
    """Whether the bytes may mention a needle: the prefilter before parsing."""
    return any(n in data for n in needles) or _ESCAPE.search(data) is not None


def foreign_encoding(data: bytes) -> bool:
    """UTF-16 or UTF-32 text, with or without a byte-order mark: never skipped
    unread (the byte search cannot see into it), reported instead (DRA002)."""
    from dra_migrate.load import utf16_without_bom

    return data.startswith((b"\xff\xfe", b"\xfe\xff")) or bool(utf16_without_bom(data))
