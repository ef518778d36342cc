"""Locate the data shipped with the package: ``schemas/`` and ``templates/``.

In a wheel they sit inside the package (``dra_migrate/_data/schemas``); in a source
checkout or an editable install they are top-level folders of the repository.
"""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from collections.abc import Callable
from functools import cache

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)
if TYPE_CHECKING:
    from os import PathLike
    from typing import Any

# paths are strings: pathlib (with urllib.parse and ipaddress, about 8 ms) is imported
# only where a run writes files
_PACKAGE_DIR = os.path.dirname(os.path.realpath(__file__))


@cache
def data_dir(name: str) -> str:
    """Return the folder ``name`` (``schemas`` or ``templates``)."""
    for candidate in (
        os.path.join(_PACKAGE_DIR, "_data", name),
        os.path.join(os.path.dirname(_PACKAGE_DIR), name),
    ):
        if os.path.isdir(candidate):
            return candidate
    raise FileNotFoundError(f"dra-migrate data folder {name!r} is missing from the installation")


def schema_path(relative: str) -> str:
    return os.path.join(data_dir("schemas"), relative)


def template_dir() -> str:
    return data_dir("templates")


def jinja_environment(autoescape: bool = False) -> Any:
    """The jinja2 environment of every template in ``templates/`` (strict undefined names)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir()),
        autoescape=autoescape,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def cache_file(name: str) -> str | None:
    """A file of the user's own cache folder (``$XDG_CACHE_HOME/dra-migrate``), where a
    run keeps what the next one would build again: the analysed CEL grammar, the driver
    catalog as JSON. Never a shared temporary folder, since a file another user could
    write would steer the run (the grammar is a pickle: it would run their code). None
    when no private folder can be had (the caller builds what it needs)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "dra-migrate")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.stat(folder)
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        return None  # not ours, or others may write there
    return os.path.join(folder, name)


def keep(path: str, data: bytes) -> None:
    """Write ``data`` to the cache file ``path`` whole or not at all (parallel workers
    read it); a cache that cannot be written is no error."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def cached_documents(
    kind: str, files: list[str], read: Callable[[str], Any]
) -> list[tuple[str, Any]]:
    """``(file name, data)`` of each of our own YAML data files (``read`` loads one).

    Loading YAML costs a run more than what it does with the data (the driver
    catalog: about 5 ms; the built-in mapping: the import of the YAML library on
    a run that parses nothing else), so the data is also kept as JSON in the
    user's cache folder (about 0.3 ms to read), for files of the very size and
    modification time they have now (what Python checks of its bytecode cache).
    Only what JSON gives back unchanged is kept.
    """
    stamp = repr([(os.path.realpath(p), *_size_and_time(p)) for p in files])
    cached = cache_file(f"{kind}-{zlib.crc32(stamp.encode()):08x}.json")
    if cached is not None:
        try:
            with open(cached, encoding="utf-8") as handle:
                kept = json.load(handle)
            if kept["stamp"] == stamp:
                return [(name, data) for name, data in kept["documents"]]
        except (OSError, ValueError, KeyError, TypeError):
            pass  # missing, partial or of another layout: the YAML is read
    documents = [(os.path.basename(path), read(path)) for path in files]
    if cached is not None:
        try:
            text = json.dumps({"stamp": stamp, "documents": documents})
        except (TypeError, ValueError):
            return documents  # a value JSON cannot hold (a date): nothing is kept
        if json.loads(text)["documents"] == [[name, data] for name, data in documents]:
            keep(cached, text.encode())
    return documents


def _size_and_time(path: str | PathLike[str]) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns


def cached_answer(kind: str, stamp: str, question: str, answer: Callable[[], Any]) -> Any:
    """``answer()``, the answer to ``question``, kept in the user's cache folder (one
    small JSON file a question) and taken from there while ``stamp`` (what the answer
    depends on besides the question: code, data and library files, by size and
    modification time) is the same. What JSON cannot hold is not kept."""
    question_id = zlib.crc32(question.encode("utf-8", "surrogatepass"))
    path = cache_file(f"{kind}-{zlib.crc32(stamp.encode()):08x}-{question_id:08x}.json")
    if path is not None:
        try:
            with open(path, encoding="utf-8") as handle:
                kept = json.load(handle)
            if kept["stamp"] == stamp and kept["question"] == question:
                return kept["answer"]
        except (OSError, ValueError, KeyError, TypeError):
            pass  # missing, partial, another question of the same crc: answered again
    value = answer()
    if path is not None:
        try:
            text = json.dumps({"stamp": stamp, "question": question, "answer": value})
        except (TypeError, ValueError):
            return value
        keep(path, text.encode())
    return value


@cache
def package_stamp() -> str | None:
    """This package's code as a ``cached_answer`` stamp: the Python version and the
    size and modification time of each of its modules; None where they cannot be
    listed (nothing is kept)."""
    import sys

    here = _PACKAGE_DIR
    try:
        names = sorted(n for n in os.listdir(here) if n.endswith(".py"))
    except OSError:
        return None
    stamp = files_stamp([os.path.join(here, n) for n in names])
    return None if stamp is None else f"{sys.version} {stamp}"


def files_stamp(paths: list[str]) -> str | None:
    """The size and modification time of each of ``paths`` (a ``cached_answer``
    stamp); None when one cannot be read."""
    try:
        return repr([(p, *_size_and_time(p)) for p in paths])
    except OSError:
        return None
