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
from dra_migrate.report.docs import FINDINGS_URL
from dra_migrate.report.findings import CODES, XML_INERT, Finding, inert, utf8
from dra_migrate.report.migration import MigrationPlan, Wave, Workload, total
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


# the stacks' colours, one a namespace (past the last: the rest, grey)
PALETTE = ("#3b6fb6", "#2e8b57", "#c77d1a", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d")
OTHERS = "other namespaces"


@dataclass(frozen=True, slots=True)
class Segment:
    label: str  # the namespace
    gpus: int
    x: int  # pixels from the bar's start
    width: int
    color: str


@dataclass(frozen=True, slots=True)
class Stack:
    """A wave's bar: its GPUs, stacked by namespace (workloads with one pod a node
    counted aside: they have no fixed number)."""

    label: str
    gpus: int
    per_node: int
    segments: tuple[Segment, ...]


def wave_stacks(plan: MigrationPlan) -> tuple[list[Stack], list[tuple[str, str]]]:
    """The GPUs each wave moves, stacked by namespace, and the legend (namespace,
    colour): the namespaces with the most GPUs a colour each, the rest one grey."""
    by_wave: list[tuple[Wave, Counter[str], int]] = []
    overall: Counter[str] = Counter()
    for wave in plan.waves:
        gpus: Counter[str] = Counter()
        per_node = 0
        for w in plan.members(wave):
            if w.gpus is None:
                per_node += 1
            else:
                gpus[w.namespace or "(no namespace)"] += w.gpus
        overall.update(gpus)
        by_wave.append((wave, gpus, per_node))
    ranked = [name for name, _ in overall.most_common()]
    named = ranked if len(ranked) <= len(PALETTE) else ranked[: len(PALETTE) - 1]
    colors = {name: PALETTE[i] for i, name in enumerate(named)}
    top = max((sum(g.values()) for _, g, _ in by_wave), default=0) or 1
    stacks = []
    for wave, gpus, per_node in by_wave:
        parts: Counter[str] = Counter()
        for name in ranked:  # the legend's order in every bar
            if gpus[name]:
                parts[name if name in colors else OTHERS] += gpus[name]
        x, segments = 0, []
        for name, value in parts.items():
            width = max(2, round(BAR_WIDTH * value / top))
            segments.append(Segment(name, value, x, width, colors.get(name, PALETTE[-1])))
            x += width
        label = f"Wave {wave.number}: {wave.title}"
        stacks.append(Stack(label, sum(gpus.values()), per_node, tuple(segments)))
    legend = [(name, colors[name]) for name in named]
    if len(named) < len(ranked):
        legend.append((OTHERS, PALETTE[-1]))
    return stacks, legend


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


def breaks(value: Any, after: str = "/") -> Any:
    """A path, escaped, that may break only after a ``/`` (``<wbr>``), never inside a
    name; a field path (``spec.template.spec``) with ``after="."``."""
    from markupsafe import Markup, escape

    return Markup(str(escape(_utf8(value))).replace(after, after + "<wbr>"))


def code_link(code: str) -> Any:
    """A finding code as a link to its section of docs/findings.md, its title on hover
    (the code stays on one line)."""
    from markupsafe import Markup, escape

    spec = CODES.get(code)
    if spec is None:  # not a code (a name): as text
        return escape(code)
    return Markup(
        f'<a class="code finding-code" href="{FINDINGS_URL}#{code.lower()}" '
        f'title="{escape(spec.title)}">{code}</a>'
    )


def codes_linked(text: str) -> Any:
    """Text, escaped, with each finding code it names (``exclusive GPUs (assumed:
    DRA540)``) a link as ``code_link`` makes it: no code on the page without one."""
    import re

    from markupsafe import Markup, escape

    shown = str(escape(_utf8(text)))
    return Markup(re.sub(r"\bDRA\d{3}\b", lambda m: str(code_link(m.group())), shown))


def code_meaning(code: str) -> str:
    """What a code means, in the few words of its title."""
    spec = CODES.get(code)
    return spec.title if spec is not None else ""


def render(report: Report, command: str) -> str:
    env = jinja_environment(autoescape=True)
    env.finalize = _utf8  # every value printed: a name that is not UTF-8 escaped
    env.filters["breaks"] = breaks
    env.filters["code_link"] = code_link
    env.filters["codes_linked"] = codes_linked
    env.filters["meaning"] = code_meaning
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
        )
        context["wave_stacks"], context["wave_legend"] = wave_stacks(plan)
    return inert(env.get_template("plan.html.j2").render(**context), XML_INERT)


def _utf8(value: Any) -> Any:
    return utf8(value) if isinstance(value, str) else value
