"""HTML: one self-contained page (inline CSS, inline SVG charts, no script, no external asset).

Rendered by ``templates/plan.html.j2`` with autoescaping on: names, paths and
comments from a manifest repository are untrusted text. Charts are computed
here as plain numbers and drawn by the template.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from dra_migrate import __version__
from dra_migrate.package_data import jinja_environment
from dra_migrate.report.findings import XML_INERT, Finding, inert, utf8
from dra_migrate.report.migration import MigrationPlan, Total, Workload
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


@dataclass(frozen=True, slots=True)
class Group:
    """Workloads of stage 1 that share a strategy and its reasons: the page says the
    reason once, above their rows."""

    strategy: str
    reasons: tuple[str, ...]
    workloads: tuple[Workload, ...]


def groups(plan: MigrationPlan) -> list[Group]:
    """The workloads grouped by strategy and reasons, the groups in the order of their
    first workload, each group's workloads in the plan's order."""
    found: dict[tuple[str, tuple[str, ...]], list[Workload]] = {}
    for w in plan.workloads:
        found.setdefault((w.strategy, tuple(w.reasons)), []).append(w)
    return [Group(s, r, tuple(ws)) for (s, r), ws in found.items()]


@dataclass(frozen=True, slots=True)
class FindingGroup:
    """Findings of one code: its severity and title said once, and its hint once when
    every finding of the group has the same one ("" when they differ)."""

    code: str
    severity: str
    title: str
    hint: str
    findings: tuple[Finding, ...]


def finding_groups(findings: list[Finding]) -> list[FindingGroup]:
    """The findings by code, the codes in the order of their first finding."""
    found: dict[str, list[Finding]] = {}
    for f in findings:
        found.setdefault(f.code, []).append(f)
    out = []
    for code, group in found.items():
        hints = {f.hint for f in group}
        hint = hints.pop() if len(hints) == 1 else ""
        spec = group[0].spec
        out.append(FindingGroup(code, spec.severity.value, spec.title, hint, tuple(group)))
    return out


def total(totals: list[Total], workloads: int) -> Total:
    """The row under a table of totals: the workloads of the plan (a workload with two
    resources is a row of each, once here) and the GPUs of every row."""
    return Total("Total", workloads, sum(t.gpus for t in totals), sum(t.per_node for t in totals))


def breaks(value: Any, after: str = "/") -> Any:
    """A path, escaped, that may break only after a ``/`` (``<wbr>``), never inside a
    name; a field path (``spec.template.spec``) with ``after="."``."""
    from markupsafe import Markup, escape

    return Markup(str(escape(_utf8(value))).replace(after, after + "<wbr>"))


def render(report: Report, command: str) -> str:
    env = jinja_environment(autoescape=True)
    env.finalize = _utf8  # every value printed: a name that is not UTF-8 escaped
    env.filters["breaks"] = breaks
    plan = report.plan
    context: dict[str, Any] = {
        "report": report,
        "plan": plan,
        "command": command,
        "summary": report.summary(),
        "findings": report.all_findings,
        "finding_groups": finding_groups(report.all_findings),
        "version": __version__,
    }
    if plan is not None:
        context.update(
            gpus=sum(t.gpus for t in plan.namespaces),
            groups=groups(plan),
            asked_total=total(plan.resources, len(plan.workloads)),
            goes_total=total(plan.products, len(plan.workloads)),
            members={w.number: plan.members(w) for w in plan.waves},
            # names of more than one pod spec: a wave names their pod spec and file too
            shared_names={
                name for name, n in Counter(w.display for w in plan.workloads).items() if n > 1
            },
            namespace_bars=bars([(t.key, t.gpus) for t in plan.namespaces]),
            wave_bars=bars([(f"Wave {w.number}: {w.title}", len(w.workloads)) for w in plan.waves]),
        )
    return inert(env.get_template("plan.html.j2").render(**context), XML_INERT)


def _utf8(value: Any) -> Any:
    return utf8(value) if isinstance(value, str) else value
