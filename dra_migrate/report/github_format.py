"""GitHub Actions: workflow commands that annotate the lines of a pull request.

``::error file=path,line=l,col=c,title=DRAnnn::message`` per finding (``warning``
and ``notice`` for the other severities), paths relative to the repository root;
``scan`` adds a notice per GPU request still to migrate. With ``--show-suppressed``
each suppressed finding is a plain line of the log (no annotation). The last line is
the summary, as plain text for the log.

Every field from the input is untrusted: unsafe characters are escaped as the
text view escapes them, and no ``::`` or ``##[`` in a name can start a command
of its own (``findings.inert``); the runner's ``%`` escapes come last.
"""

from __future__ import annotations

from dra_migrate.report.findings import Finding, Severity, escape, inert
from dra_migrate.report.locations import repo_relative
from dra_migrate.report.model import InventoryItem, Report
from dra_migrate.report.summary import summary_line

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(text: str) -> str:
    """Text of an annotation: the runner's own escapes (line breaks as ``%0A``, which
    it shows as breaks), every other unsafe character escaped (no raw ESC, RLO or
    DEL), no workflow command inside (``inert``)."""
    return "%0A".join(
        "%0D".join(inert(escape(part), starts_line=False) for part in line.split("\r"))
        for line in text.replace("%", "%25").split("\n")
    )


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _command(
    level: str, message: str, title: str, path: str = "", line: int = 0, col: int = 0
) -> str:
    props = []
    if path:
        props.append(f"file={_property(repo_relative(path))}")
        if line:
            props += [f"line={line}", f"col={max(col, 1)}"]
    props.append(f"title={_property(title)}")
    return f"::{level} {','.join(props)}::{_data(message)}"


def annotation(f: Finding) -> str:
    message = f.message + (f" (hint: {f.hint})" if f.hint else "")
    title = f"{f.code} {f.spec.title}"
    return _command(LEVELS[f.severity], message, title, f.path, f.line, f.col)


def request(item: InventoryItem) -> str:
    ns = f"{item.namespace}/" if item.namespace else ""
    target = f"DeviceClass {item.device_class}" if item.device_class else "no DeviceClass mapped"
    message = (
        f"{item.kind}/{ns}{item.name}, container {item.container!r}: "
        f"{item.resource}: {item.value} (device plugin) -> {target}"
    )
    return _command("notice", message, "GPU request to migrate", item.path, item.line, item.col)


def render(report: Report, command: str) -> str:
    lines = [annotation(f) for f in report.all_findings]
    if command == "scan":
        lines += [request(item) for item in report.inventory]
    if report.show_suppressed:  # plain lines of the log: an annotation would undo the ignore
        lines += [
            inert(f"{s.finding.format()} [suppressed by {escape(s.source)}]")
            for s in report.suppressed
        ]
    lines.append(inert(summary_line(report, command)))
    return "\n".join(lines) + "\n"
