"""Text: a table of GPU requests for people, findings as ``path:line:col: CODE`` lines."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from dra_migrate.findings import escape, quote_path
from dra_migrate.report.model import Report


def _cell(text: str) -> Text:
    """A table cell as it is written: no markup, no control or bidirectional characters."""
    return Text(escape(text))


def render(report: Report, command: str) -> str:
    out = io.StringIO()
    console = Console(file=out, width=1000, color_system=None, highlight=False, soft_wrap=True)
    rows = report.inventory
    if command != "scan":
        for f in report.all_findings:
            console.print(f.format(), markup=False)
        s = report.summary()
        console.print(
            f"dra-migrate {command}: {s['files']} file(s) checked, {s['failed']} unreadable; "
            f"{s['error']} error(s), {s['warning']} warning(s), {s['info']} note(s)",
            markup=False,
        )
        return out.getvalue()
    if rows:
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
        for column in (
            "LOCATION",
            "WORKLOAD",
            "POD SPEC",
            "CONTAINER",
            "ROLE",
            "RESOURCE",
            "COUNT",
            "DEVICE CLASS",
        ):
            table.add_column(column, no_wrap=True)
        for item in rows:
            ns = f"{item.namespace}/" if item.namespace else ""
            table.add_row(
                _cell(f"{quote_path(item.path)}:{item.line}:{item.col}"),
                _cell(f"{item.kind}/{ns}{item.name}"),
                _cell(item.pod_path),
                _cell(item.container),
                _cell(item.role),
                _cell(item.resource),
                _cell(str(item.count) if item.count is not None else f"{item.value!r}?"),
                _cell(item.device_class or "(not mapped)"),
            )
        console.print(table)
    else:
        console.print("No extended GPU requests found.")
    findings = report.all_findings
    if findings:
        console.print()
        for f in findings:
            console.print(f.format(), markup=False)
    s = report.summary()
    console.print()
    console.print(
        f"{s['requests']} GPU request(s) in {len({i.path for i in rows})} file(s); "
        f"{s['files']} file(s) looked at; {s['error']} error(s), {s['warning']} warning(s), "
        f"{s['info']} note(s)",
        markup=False,
    )
    return out.getvalue()
