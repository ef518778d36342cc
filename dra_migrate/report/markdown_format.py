"""Markdown, through the jinja2 template ``templates/report.md.j2`` (for PR comments)."""

from __future__ import annotations

from dra_migrate import __version__
from dra_migrate.findings import escape
from dra_migrate.report.model import Report
from dra_migrate.resources import template_dir


def render(report: Report, command: str) -> str:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["cell"] = lambda text: escape(str(text)).replace("|", "\\|").replace("`", "'")
    return env.get_template("report.md.j2").render(
        report=report,
        summary=report.summary(),
        inventory=report.inventory,
        findings=report.all_findings,
        command=command,
        version=__version__,
    )
