"""JSON: the documented machine-readable shape (docs/json-format.md)."""

from __future__ import annotations

import json

from dra_migrate import __version__
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
    if report.plan is not None:
        data["plan"] = report.plan.to_dict()
    if report.cluster is not None:
        data["cluster"] = report.cluster.to_dict()
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
