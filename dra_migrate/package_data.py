"""Locate the data shipped with the package: ``schemas/`` and ``templates/``.

In a wheel they sit inside the package (``dra_migrate/_data/schemas``); in a source
checkout or an editable install they are top-level folders of the repository.
"""

from __future__ import annotations

import os
from functools import cache

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

# paths are strings: pathlib (with urllib.parse and ipaddress, about 8 ms) is imported
# only where a run writes files
_PACKAGE_DIR = os.path.dirname(os.path.realpath(__file__))


def package_file(*parts: str) -> str:
    """A file or folder of the package itself (``catalog/``, ``built/``, ``defaults.yaml``)."""
    return os.path.join(_PACKAGE_DIR, *parts)


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
