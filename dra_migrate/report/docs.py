"""The help of a finding code, from its section of docs/findings.md (shipped with the package)."""

from __future__ import annotations

import os
import re
from functools import cache

from dra_migrate.package_data import data_dir
from dra_migrate.report.findings import CODES

# Where docs/findings.md is published; SARIF rules and Markdown reports link each code there.
FINDINGS_URL = "https://github.com/dra-migrate/dra-migrate/blob/main/docs/findings.md"
_HEADING = re.compile(r"^## (DRA\d{3}): ", re.MULTILINE)
# Each code's stable anchor, on its own line before its heading: ``<a id="dra222"></a>``.
# An explicit id, not a heading that is only the code: the headings keep their titles
# (GitHub's outline and the links into them from the other pages), and the anchor is
# the code whatever the title becomes (GitHub prefixes ``user-content-`` to the id and
# still scrolls to ``#dra222``).
ANCHOR = re.compile(r'^<a id="(dra\d{3})"></a>$', re.MULTILINE)


@cache
def _sections() -> dict[str, str]:
    try:
        with open(os.path.join(data_dir("docs"), "findings.md"), encoding="utf-8") as handle:
            text = handle.read()
    except (FileNotFoundError, OSError):
        return {}
    sections: dict[str, str] = {}
    starts = list(_HEADING.finditer(text))
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        body = text[match.end() : end].split("\n", 1)[1] if "\n" in text[match.end() : end] else ""
        body = re.split(r"^## ", body, flags=re.MULTILINE)[0]  # stop at the next other heading
        sections[match[1]] = ANCHOR.sub("", body).strip()
    return sections


def anchor(code: str) -> str:
    """The link to ``code``'s section of docs/findings.md, relative to the repository."""
    return f"docs/findings.md#{code.lower()}"


def section(code: str) -> str | None:
    """The Markdown of ``code``'s section of the shipped docs/findings.md (heading,
    severity, explanation, examples), or None when the page has none for it."""
    body = _sections().get(code)
    if body is None:
        return None
    return f"## {code}: {CODES[code].title}\n\n{body}\n"


def help_text(code: str) -> tuple[str, str]:
    """(plain text, markdown) help of ``code``: its title, explanation and examples."""
    spec = CODES[code]
    body = _sections().get(code, "")
    link = f"{FINDINGS_URL}#{code.lower()}"
    markdown = f"**{code}: {spec.title}**\n\n{body}\n\n[{anchor(code)}]({link})"
    prose = body.split("Triggers it:", 1)[0].strip()
    text = f"{code}: {spec.title}. {prose}" if prose else f"{code}: {spec.title}."
    return f"{text}\n\nSee {anchor(code)}", markdown.strip()
