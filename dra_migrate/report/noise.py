"""What the text views list of a run's findings: those at or above the severity asked
for (``--severity``), and the notes of one code that repeat (``GROUP_FROM`` or more)
said once, with their count and where, unless each is asked for (``--every-note``).
Warnings and errors are never grouped: each is a thing to do. The machine formats
(JSON, SARIF, JUnit, GitHub) always carry every finding."""

from __future__ import annotations

from dra_migrate.report.findings import CODES, Finding, Severity, quote_path

GROUP_FROM = 3  # notes of one code from which they are said once
NAMED = 3  # places a grouped note names before "and N more"
RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
SEVERITIES = ("info", "warning", "error")  # --severity, the least shown


def shown(
    findings: list[Finding], severity: str = "info", every_note: bool = False
) -> list[Finding]:
    """The findings a text view lists, in their order: those of ``severity`` or worse,
    and each group of repeated notes as one note where the first of them was."""
    floor = RANK[Severity(severity)]
    kept = [f for f in findings if RANK[f.severity] <= floor]
    if every_note:
        return kept
    counts: dict[str, int] = {}
    for f in kept:
        if f.severity is Severity.INFO:
            counts[f.code] = counts.get(f.code, 0) + 1
    out: list[Finding] = []
    done: set[str] = set()
    for f in kept:
        if f.severity is not Severity.INFO or counts[f.code] < GROUP_FROM:
            out.append(f)
        elif f.code not in done:
            done.add(f.code)
            out.append(grouped([g for g in kept if g.code == f.code]))
    return out


def grouped(notes: list[Finding]) -> Finding:
    """One note for ``notes`` (all of one code): what the code means (or what it
    writes), how many, and the first places, at the first one's position."""
    first = notes[0]
    spec = CODES[first.code]
    places = [_place(f) for f in notes]
    named = ", ".join(places[:NAMED])
    more = f" and {len(places) - NAMED} more" if len(places) > NAMED else ""
    said = f"{spec.title}: {len(notes)} times"
    return Finding(
        first.path,
        first.line,
        first.col,
        first.code,
        f"{said}: at {named}{more}",
        "--every-note lists each",
    )


def _place(f: Finding) -> str:
    return f"{quote_path(f.path)}:{f.line}" if f.path else "(run)"
