"""JSON: the documented machine-readable shape (docs/json-format.md)."""

from __future__ import annotations

import json

from dra_migrate import __version__
from dra_migrate.report.findings import JSON_INERT, inert, utf8
from dra_migrate.report.model import REPORT_VERSION, Report


def render(report: Report, command: str) -> str:
    data: dict[str, object] = {
        "version": REPORT_VERSION,
        "tool": {"name": "dra-migrate", "version": __version__},
        "command": command,
        "summary": report.summary(),
        "files": [{"path": f.path, "status": f.status.value} for f in report.files],
        "inventory": [item.to_dict() for item in report.inventory],
        "findings": [f.to_dict() for f in report.all_findings],
        "suppressed": [s.to_dict() for s in report.suppressed],
    }
    if report.charts and report.plan is None:  # (the plan lists them in its inventory)
        data["charts"] = [c.to_dict() for c in report.charts]
    if report.plan is not None:
        data["plan"] = report.plan.to_dict()
    if report.cluster is not None:
        data["cluster"] = report.cluster.to_dict()
    if report.simulation is not None:
        data["simulation"] = report.simulation.to_dict()
    return dumps(data)


def dumps(data: object) -> str:
    """JSON text every reader can take: a name that is not UTF-8 written with the text
    view's escapes (``utf8``), no workflow command in any line (``inert``)."""
    return inert(json.dumps(text_only(data), indent=2, ensure_ascii=False), JSON_INERT) + "\n"


def text_only(data: object) -> object:
    """``data`` with every string, key or value, one that UTF-8 can hold."""
    if isinstance(data, str):
        return utf8(data)
    if isinstance(data, dict):
        return {text_only(k): text_only(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [text_only(v) for v in data]
    return data
