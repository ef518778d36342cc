"""The report model and one renderer module per output format."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from dra_migrate.report.model import Report

Renderer = Callable[[Report, str], str]

# --format value -> the module under dra_migrate.report that renders it
FORMATS: dict[str, str] = {
    "text": "text_format",
    "json": "json_format",
    "markdown": "markdown_format",
    "html": "html_format",
    "github": "github_format",
    "sarif": "sarif_format",
    "junit": "junit_format",
}


def renderer(fmt: str) -> Renderer:
    """The render function of a format; formats are modules of this package."""
    module = importlib.import_module(f"dra_migrate.report.{FORMATS[fmt]}")
    render: Renderer = module.render
    return render
