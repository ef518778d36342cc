"""The report model and one renderer module per output format."""

from __future__ import annotations

from collections.abc import Callable

from dra_migrate.report.model import Report

Renderer = Callable[[Report, str], str]


def renderer(fmt: str) -> Renderer:
    """The render function of a format; formats are modules of this package."""
    if fmt == "json":
        from dra_migrate.report import json_format

        return json_format.render
    if fmt == "html":
        from dra_migrate.report import html_format

        return html_format.render
    if fmt == "markdown":
        from dra_migrate.report import markdown_format

        return markdown_format.render
    from dra_migrate.report import text_format

    return text_format.render
