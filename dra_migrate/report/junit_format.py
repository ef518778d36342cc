"""JUnit XML, for CI systems that show test reports (GitLab, Jenkins, Azure DevOps).

One test case per file looked at, a ``failure`` per error finding in it;
warnings and notes go to the case's ``system-out`` (with ``--show-suppressed``, the
suppressed findings too, each marked; the summary counts them either way). Findings about the run
itself (no file) make a case of their own, named ``dra-migrate``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from dra_migrate.report.findings import XML_INERT, Finding, Severity, escape, inert, utf8
from dra_migrate.report.model import Report, Suppressed
from dra_migrate.report.summary import summary_line

# XML 1.0 cannot hold most control characters, even escaped
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", utf8(text))


def _case(
    suite: ET.Element,
    command: str,
    name: str,
    findings: list[Finding],
    suppressed: list[Suppressed] | None = None,
    file: str | None = None,
) -> tuple[int, int]:
    case = ET.SubElement(
        suite, "testcase", classname=f"dra-migrate.{command}", name=_clean(name), time="0"
    )
    if name != "dra-migrate":
        case.set("file", _clean(file or name))
    failures = 0
    others = []
    for f in findings:
        if f.severity is Severity.ERROR:
            failures += 1
            failure = ET.SubElement(
                case, "failure", type=f.code, message=_clean(f"{f.code} {f.message}")
            )
            failure.text = _clean(f.format())
        else:
            others.append(_clean(f"{f.severity.value}: {f.format()}"))
    others += [
        _clean(f"suppressed: {s.finding.format()} [suppressed by {escape(s.source)}]")
        for s in suppressed or ()
    ]
    if others:
        ET.SubElement(case, "system-out").text = "\n".join(others) + "\n"
    return 1, failures


def render(report: Report, command: str) -> str:
    name = f"dra-migrate {command}"
    root = ET.Element("testsuites", name=name)
    suite = ET.SubElement(root, "testsuite", name=name)
    tests = failures = 0
    run_level = report.findings
    if report.simulation is not None:  # a test case a workload, its findings in it
        run_level = []
        by_place: dict[tuple[str, int, int], list[Finding]] = {}
        for x in report.findings:
            by_place.setdefault((x.path, x.line, x.col), []).append(x)
        placed = {(w.path, w.line, w.col) for w in report.simulation.workloads}
        run_level = [x for x in report.findings if (x.path, x.line, x.col) not in placed]
        for w in report.simulation.workloads:
            mine = [
                x
                for x in by_place.pop((w.path, w.line, w.col), [])
                if w.site in x.message or "(" not in x.message.split(":", 1)[0]
            ]
            name = f"{w.path}:{w.line} {w.display} {w.site}"
            t, f = _case(suite, command, name, mine, file=w.path)
            tests, failures = tests + t, failures + f
    if run_level:
        t, f = _case(suite, command, "dra-migrate", run_level)
        tests, failures = tests + t, failures + f
    silenced: dict[str, list[Suppressed]] = {}
    if report.show_suppressed:
        for s in report.suppressed:
            silenced.setdefault(s.finding.path, []).append(s)
    for result in report.files:
        t, f = _case(suite, command, result.path, result.findings, silenced.get(result.path, []))
        tests, failures = tests + t, failures + f
    ET.SubElement(suite, "system-out").text = summary_line(report, command) + "\n"
    for element in (root, suite):
        element.set("tests", str(tests))
        element.set("failures", str(failures))
        element.set("errors", "0")
    suite.set("skipped", "0")
    ET.indent(root)
    body = inert(ET.tostring(root, encoding="unicode"), XML_INERT)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
