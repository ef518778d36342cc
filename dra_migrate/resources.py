"""Locate the data shipped with the package: ``schemas/`` and ``templates/``.

In a wheel they sit inside the package (``dra_migrate/_data/schemas``); in a source
checkout or an editable install they are top-level folders of the repository.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """Return the folder ``name`` (``schemas`` or ``templates``)."""
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"dra-migrate data folder {name!r} is missing from the installation")


def schema_path(relative: str) -> Path:
    return data_dir("schemas") / relative


def template_dir() -> Path:
    return data_dir("templates")
