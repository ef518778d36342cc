"""Less noise, same information (issue 40): repeated notes said once with their count
and places (``--every-note`` lists each), ``--severity`` for the text view, and
``report``'s text view names each finding once."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from dra_migrate.report import noise
from dra_migrate.report.findings import Finding, Severity
from tests.conftest import REPO
from tests.helpers.cli_runner import invoke

EXAMPLES = str(REPO / "examples")
CODES = ["DRA224", "DRA209", "DRA204", "DRA202"]  # notes, a warning, an error


def _finding(code: str, line: int) -> Finding:
    return Finding(f"f{line}.yaml", line, 1, code, f"message {line}")


@given(st.lists(st.tuples(st.sampled_from(CODES), st.integers(1, 50)), max_size=20))
def test_grouping_keeps_every_warning_and_error_and_counts_every_note(
    drawn: list[tuple[str, int]],
) -> None:
    findings = [_finding(code, line) for code, line in drawn]
    listed = noise.shown(findings)
    serious = [f for f in findings if f.severity is not Severity.INFO]
    assert [f for f in listed if f.severity is not Severity.INFO] == serious
    for code in {f.code for f in findings if f.severity is Severity.INFO}:
        notes = [f for f in findings if f.code == code]
        said = [f for f in listed if f.code == code]
        if len(notes) >= noise.GROUP_FROM:
            [one] = said
            assert f"{len(notes)} times" in one.message
            assert (one.path, one.line) == (notes[0].path, notes[0].line)
        else:
            assert said == notes
    assert noise.shown(findings, every_note=True) == findings
    assert noise.shown(findings, "error") == [f for f in findings if f.code == "DRA202"]


def _lines(text: str, code: str) -> list[str]:
    return [line for line in text.splitlines() if re.search(rf": {code} \w+: ", line)]


def test_convert_says_repeated_notes_once_and_lists_them_on_request() -> None:
    done = invoke(["convert", EXAMPLES])
    [grouped] = _lines(done.stderr, "DRA224")
    assert "4 times" in grouped and "and 1 more" in grouped and "--every-note" in grouped
    assert len(_lines(invoke(["convert", "--every-note", EXAMPLES]).stderr, "DRA224")) == 4
    # the counts and the machine formats keep every finding
    assert "4 toleration(s)" in done.stderr


def test_severity_filters_the_text_view_only() -> None:
    done = invoke(["scan", "--severity", "warning", EXAMPLES])
    assert done.exit_code == 0, done.output
    assert not re.search(r": DRA\d{3} info: ", done.stdout)
    assert re.search(r"\b9 note\(s\)", invoke(["scan", EXAMPLES]).stdout)  # counted still
    assert re.search(r"\b9 note\(s\)", done.stdout)


def test_report_lists_after_the_risks_only_what_they_do_not_say() -> None:
    done = invoke(["report", EXAMPLES])
    assert done.exit_code == 0, done.output
    rest = done.stdout.partition("== Risks")[2]
    assert "\nDRA224 " in rest  # a risk, with its places
    after = rest.split("\n\n", 1)[1]
    assert not _lines(after, "DRA224") and not _lines(after, "DRA207")  # said as risks
    assert _lines(after, "DRA209")  # not a risk: listed once
    quiet = invoke(["report", "--severity", "warning", EXAMPLES])
    assert not re.search(r": DRA\d{3} info: ", quiet.stdout)
