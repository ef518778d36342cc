"""Markdown, through jinja2 templates in ``templates/`` (for pull request comments).

``report.md.j2`` renders scan, convert and validate for ``$GITHUB_STEP_SUMMARY``
and pull request comments: the summary and a count per code first, the GPU
requests and findings folded in ``<details>``; ``plan.md.j2`` the migration plan.
Text from a repository or a cluster is untrusted, and every value of it goes
through one of two filters: ``|text`` escapes Markdown and HTML (and what GitHub
would turn into a link by itself: ``www.``, ``scheme:``, ``user@host``),
``|code`` makes a code span that no backtick in the value can close; a ``|``
of either cannot end a table cell. A name that is not UTF-8 is written with
the text view's escapes, and no line is a workflow command (``inert``).
"""

from __future__ import annotations

import html
import re
from collections import Counter

from dra_migrate import __version__
from dra_migrate.package_data import jinja_environment
from dra_migrate.report.docs import FINDINGS_URL
from dra_migrate.report.findings import CODES, XML_INERT, escape, inert
from dra_migrate.report.migration import total
from dra_migrate.report.model import Report

_MARKDOWN = re.compile(r"([\\`*_\[\]|~:@])")
_WWW = re.compile(r"(?i)\b(www)\.")  # GitHub links www.example.com by itself


def text(value: object) -> str:
    """Plain text in a Markdown table cell or list item."""
    one_line = escape(re.sub(r"[ \t\r\n]+", " ", str(value)))
    if one_line and not one_line.strip():  # blanks alone: CommonMark would drop them
        return "".join(f"&#{ord(c)};" for c in one_line)
    return _WWW.sub(r"\1\\.", _MARKDOWN.sub(r"\\\1", html.escape(one_line, quote=False)))


def code(value: object) -> str:
    """A code span: fenced with more backticks than the value's longest run."""
    one_line = escape(re.sub(r"[ \t\r\n]+", " ", str(value))).replace("|", "\\|")
    if not one_line:
        return ""
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", one_line)), default=0) + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") else ""
    return f"{ticks}{pad}{one_line}{pad}{ticks}"


def render(report: Report, command: str) -> str:
    return inert(_render(report, command), XML_INERT)


def _render(report: Report, command: str) -> str:
    env = jinja_environment()
    env.filters["text"] = text
    env.filters["code"] = code
    if report.plan is not None:
        plan = report.plan
        runs = re.findall(r"`+", plan.classes_yaml)
        return env.get_template("plan.md.j2").render(
            plan=plan,
            summary=report.summary(),
            findings=report.all_findings,
            gpus=sum(t.gpus for t in plan.namespaces),
            asked_total=total(plan.resources, len(plan.workloads)),
            goes_total=total(plan.products, len(plan.workloads)),
            members={w.number: plan.members(w) for w in plan.waves},
            shared_names={
                name
                for name, n in Counter(
                    f"{w.display} ({w.pod_path})" for w in plan.workloads
                ).items()
                if n > 1
            },
            fence="`" * max(3, max((len(r) + 1 for r in runs), default=0)),
            command_fence="`"
            * max(
                3,
                max(
                    (
                        len(r) + 1
                        for w in plan.waves
                        for c in w.commands
                        for r in re.findall(r"`+", c)
                    ),
                    default=0,
                ),
            ),
            version=__version__,
        )
    findings = report.all_findings
    counts = Counter(f.code for f in findings)
    return env.get_template("report.md.j2").render(
        report=report,
        summary=report.summary(),
        inventory=report.inventory,
        findings=findings,
        codes=[(code, CODES[code], counts[code]) for code in sorted(counts)],
        suppressed=report.suppressed if report.show_suppressed else [],
        # the workloads an ignore keeps on the device plugin, each once
        held=list(
            dict.fromkeys(
                (i.path, f"{i.kind} {i.namespace + '/' if i.namespace else ''}{i.name}")
                for i in report.held()
            )
        ),
        docs_url=FINDINGS_URL,
        command=command,
        cluster=report.cluster,
        simulation=report.simulation,
        version=__version__,
    )
