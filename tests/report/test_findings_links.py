"""Every link to docs/findings.md that the tool emits lands on a section that exists, and
``dra-migrate explain`` prints a code's section from the installed package (issue 27).

docs/findings.md is rendered with a real CommonMark library (markdown-it-py, the
parser rich uses) and the anchors GitHub gives it are collected: the explicit
``<a id="dra222"></a>`` before each code's heading, and each heading's slug by
GitHub's rules (lower case, punctuation dropped, spaces to ``-``, a repeated slug
numbered). Then the links are gathered where the tool makes them: the SARIF rules
(``helpUri``, the help text and its Markdown), the Markdown reports of real runs,
the hints and templates in the package's source, and the other pages of the docs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from dra_migrate.report.findings import CODES
from dra_migrate.report.sarif_format import _rule
from tests.conftest import REPO
from tests.helpers.cli_runner import invoke

DOC = REPO / "docs" / "findings.md"
LINK = re.compile(r"findings\.md#([A-Za-z0-9_-]+)")
EXPLICIT = re.compile(r'<a id="([^"]+)"></a>')


def _slug(text: str) -> str:
    """GitHub's heading anchor: lower case, every character that is not a letter, digit,
    space, ``-`` or ``_`` dropped, each space a ``-``."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(markdown: str) -> dict[str, int]:
    """The anchors of ``markdown`` as GitHub renders it, each with the line it is on."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    found: dict[str, int] = {}
    seen: dict[str, int] = {}
    for i, token in enumerate(tokens):
        line = token.map[0] + 1 if token.map else 0
        if token.type == "heading_open":
            inline = tokens[i + 1]
            text = "".join(c.content for c in inline.children or [] if c.type != "softbreak")
            slug = _slug(text)
            number = seen.get(slug, 0)
            seen[slug] = number + 1
            found[slug if not number else f"{slug}-{number}"] = line
        if token.type in ("inline", "html_block"):
            for match in EXPLICIT.finditer(token.content):
                assert match[1] not in found, f"anchor {match[1]} twice"
                found[match[1]] = line
    return found


ANCHORS = anchors(DOC.read_text(encoding="utf-8"))


def test_every_code_has_its_own_anchor_just_before_its_heading() -> None:
    lines = DOC.read_text(encoding="utf-8").split("\n")
    for code in CODES:
        assert code.lower() in ANCHORS, code
        at = ANCHORS[code.lower()]  # 1-based: the heading follows a blank line
        assert lines[at + 1].startswith(f"## {code}: "), (code, lines[at - 1 : at + 2])


def _links(text: str) -> set[str]:
    return set(LINK.findall(text))


def _check(links: set[str], where: str) -> None:
    missing = sorted(a for a in links if a not in ANCHORS)
    assert not missing, f"{where} links to anchors docs/findings.md does not have: {missing}"


def test_sarif_rules_link_every_code_to_its_section() -> None:
    for code in CODES:
        rule = _rule(code)
        assert rule["helpUri"].endswith(f"docs/findings.md#{code.lower()}")
        emitted = _links(rule["helpUri"]) | _links(rule["help"]["text"])
        emitted |= _links(rule["help"]["markdown"])
        assert emitted == {code.lower()}, (code, emitted)
        _check(emitted, f"the SARIF rule of {code}")


def test_links_in_the_reports_of_real_runs_resolve(tmp_path: Path) -> None:
    seen: set[str] = set()
    runs = [
        ["convert", "--check", "--format", "markdown", "examples"],
        [
            "convert",
            "--check",
            "--format",
            "sarif",
            "--output",
            str(tmp_path / "c.sarif"),
            "examples",
        ],
        ["validate", "--format", "markdown", "examples"],
        ["report", "--format", "markdown", "examples"],
        ["report", "--format", "html", "examples"],
    ]
    for args in runs:
        result = invoke(args)
        assert result.exception is None, result.output
        seen |= _links(result.output)
    sarif = (tmp_path / "c.sarif").read_text(encoding="utf-8")
    [run] = json.loads(sarif)["runs"]
    rules = {rule["id"].lower() for rule in run["tool"]["driver"]["rules"]}
    assert rules == {result["ruleId"].lower() for result in run["results"]}
    assert _links(sarif) == rules  # each rule it carries links to its section
    seen |= _links(sarif)
    _check(seen, "a report")


def test_links_in_hints_templates_and_docs_resolve() -> None:
    sources = [*(REPO / "dra_migrate").rglob("*.py"), *(REPO / "templates").glob("*.j2")]
    in_source = set().union(*(_links(p.read_text(encoding="utf-8")) for p in sources))
    assert {"dra219", "dra222"} <= in_source  # the hints that name a section
    _check(in_source, "a hint or template")
    pages = [REPO / "README.md", *(REPO / "docs").glob("*.md"), *(REPO / "examples").glob("*.md")]
    for page in pages:
        _check(_links(page.read_text(encoding="utf-8")), str(page.relative_to(REPO)))


# --- dra-migrate explain ----------------------------------------------------------


def test_explain_prints_the_section_of_a_code() -> None:
    result = invoke(["explain", "DRA222"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("\n")
    assert lines[0] == f"## DRA222: {CODES['DRA222'].title}"
    assert "Severity: error, blocks the file" in result.stdout
    assert "Triggers it:" in result.stdout and "# file: base/kustomization.yaml" in result.stdout
    assert "## DRA223" not in result.stdout and '<a id="' not in result.stdout
    assert result.stdout.rstrip().endswith("docs/findings.md#dra222")
    assert (
        invoke(["explain", "dra222"]).stdout == invoke(["explain", "222"]).stdout == result.stdout
    )


def test_explain_knows_every_code() -> None:
    for code in CODES:
        result = invoke(["explain", code])
        assert result.exit_code == 0 and "Severity: " in result.stdout, code


def test_explain_without_a_code_lists_the_codes() -> None:
    result = invoke(["explain"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == len(CODES)
    assert lines[0].split() == ["DRA001", "error", "file", "cannot", "be", "read"]


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("DRA2222", "no finding code 'DRA2222' (did you mean DRA222 or "),
        ("DRA99", "no finding code 'DRA99' (did you mean "),
        (
            "gpu",
            "no finding code 'gpu': codes are DRA and three digits; dra-migrate explain lists them",
        ),
    ],
)
def test_an_unknown_code_is_a_usage_error_that_suggests(code: str, said: str) -> None:
    result = invoke(["explain", code])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert f"dra-migrate explain: error: {said}" in result.stderr
    assert "Traceback" not in result.output


def test_explain_reads_the_docs_shipped_in_the_wheel(tmp_path: Path) -> None:
    """A real wheel, built by pip from the checkout, holds docs/findings.md as package
    data, and explain reads it from an installation that has no checkout beside it."""
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        pytest.skip(
            f"pip could not build the wheel (no hatchling to install?): {built.stderr[-300:]}"
        )
    (wheel,) = tmp_path.glob("dra_migrate-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("dra_migrate/_data/docs/findings.md") == DOC.read_bytes()
        archive.extractall(tmp_path / "site")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from dra_migrate.cli.app import main; main(['explain', 'DRA103'])"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "site")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith(f"## DRA103: {CODES['DRA103'].title}\n")
    assert "Triggers it:" in ran.stdout
    assert "No such file" not in ran.stderr
