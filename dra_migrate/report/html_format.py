"""HTML: one self-contained page (inline CSS, inline SVG charts, no script, no external asset).

Rendered by ``templates/plan.html.j2`` with autoescaping on: names, paths and
comments from a manifest repository are untrusted text. Charts are computed
here as plain numbers and drawn by the template.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dra_migrate import __version__
from dra_migrate.package_data import jinja_environment
from dra_migrate.report.findings import XML_INERT, inert, utf8
from dra_migrate.report.model import Report

BAR_WIDTH = 360  # pixels of the longest bar


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: int
    width: int  # pixels


def bars(items: list[tuple[str, int]]) -> list[Bar]:
    top = max((v for _, v in items), default=0) or 1
    return [Bar(label, value, max(2, round(BAR_WIDTH * value / top))) for label, value in items]


def render(report: Report, command: str) -> str:
    env = jinja_environment(autoescape=True)
    env.finalize = _utf8  # every value printed: a name that is not UTF-8 escaped
    plan = report.plan
    context: dict[str, Any] = {
        "report": report,
        "plan": plan,
        "command": command,
        "summary": report.summary(),
        "findings": report.all_findings,
        "version": __version__,
    }
    if plan is not None:
        context.update(
            gpus=sum(t.gpus for t in plan.namespaces),
            by_name={f"{w.display} ({w.pod_path})": w for w in plan.workloads},
            namespace_bars=bars([(t.key, t.gpus) for t in plan.namespaces]),
            wave_bars=bars([(f"Wave {w.number}: {w.title}", len(w.workloads)) for w in plan.waves]),
        )
    return inert(env.get_template("plan.html.j2").render(**context), XML_INERT)


def _utf8(value: Any) -> Any:
    return utf8(value) if isinstance(value, str) else value
