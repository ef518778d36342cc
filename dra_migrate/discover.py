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
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

EXTENSIONS = (".yaml", ".yml", ".json", ".tpl")  # .tpl: Helm helpers, reported only
_ALWAYS_SKIPPED = {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox"}


@dataclass(frozen=True)
class Candidate:
    path: Path
    display: str  # as the user will see it: relative to where they named it
    explicit: bool  # named on the command line (not found by walking a directory)


def expand(paths: Iterable[str], excludes: Iterable[str]) -> Iterator[Candidate]:
    """Files under ``paths`` in a stable order, excludes and .gitignore applied."""
    spec = _Excludes(list(excludes))
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for file in _walk(path):
                rel = _display(file, path, raw)
                if spec.match_file(rel) or spec.match_file(file.relative_to(path).as_posix()):
                    continue
                real = file.resolve()
                if real not in seen:
                    seen.add(real)
                    yield Candidate(file, rel, explicit=False)
        else:
            display = raw
            if spec.match_file(Path(raw).as_posix()):
                continue
            real = path.resolve()
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
        return sorted(p for p in tracked if p.suffix.lower() in EXTENSIONS and p.is_file())
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
