"""Locate the data shipped with the package: ``schemas/`` and ``templates/``.

In a wheel they sit inside the package (``dra_migrate/_data/schemas``); in a source
checkout or an editable install they are top-level folders of the repository.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

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


def jinja_environment(autoescape: bool = False) -> Any:
    """The jinja2 environment of every template in ``templates/`` (strict undefined names)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        autoescape=autoescape,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
