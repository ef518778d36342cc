"""The one-line summary every format shows, suppressed findings included."""

from __future__ import annotations

from dra_migrate.report.model import Report


def summary_line(report: Report, command: str) -> str:
    s = report.summary()
    head = (
        f"{s['requests']} GPU request(s) in {s['files']} file(s) looked at"
        if command == "scan"
        else f"{s['files']} file(s) checked, {s['failed']} unreadable"
    )
    if report.simulation is not None:
        sim = report.simulation
        differ = len(sim.differ())
        head = f"{len(sim.workloads) - differ} workload(s) hold, {differ} differ"
    text = (
        f"dra-migrate {command}: {head}; {s['error']} error(s), {s['warning']} warning(s), "
        f"{s['info']} note(s)"
    )
    if s["suppressed"]:
        text += f", {s['suppressed']} suppressed"
    return text
