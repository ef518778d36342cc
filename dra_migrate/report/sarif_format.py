"""SARIF 2.1.0, for GitHub code scanning and other static-analysis dashboards.

One rule per finding code the results use (title, help text from docs/findings.md
and a link to its section: a run with two results carries two rules, not the whole
table), one result per finding with its region, and a ``partialFingerprints``
entry that keeps a finding's identity when lines move: it hashes the code, the
file and the message with positions taken out. Suppressed findings are
results too, with a ``suppressions`` entry, so a dashboard shows them as
dismissed instead of losing them.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Any

from dra_migrate import __version__
from dra_migrate.report.docs import FINDINGS_URL, help_text
from dra_migrate.report.findings import CODES, Finding, Severity
from dra_migrate.report.json_format import dumps
from dra_migrate.report.locations import repo_relative
from dra_migrate.report.model import Report, Suppressed

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
FINGERPRINT = "draMigrateFinding/v1"
# positions and counts inside a message change when lines move: not part of the identity
_POSITIONS = re.compile(r"\b(?:line|lines|column|col)\s+\d+\b|\b\d+:\d+\b")


def _rule(code: str) -> dict[str, Any]:
    spec = CODES[code]
    text, markdown = help_text(code)
    return {
        "id": code,
        "name": code,
        "shortDescription": {"text": spec.title},
        "fullDescription": {"text": text.split("\n\n", 1)[0]},
        "help": {"text": text, "markdown": markdown},
        "helpUri": f"{FINDINGS_URL}#{code.lower()}",
        "defaultConfiguration": {"level": LEVELS[spec.severity]},
        "properties": {"tags": ["kubernetes", "dra", "gpu"], "blocksFile": spec.blocks},
    }


def _fingerprint(f: Finding, path: str, seen: Counter[str]) -> str:
    identity = "\0".join((f.code, path, _POSITIONS.sub("#", f.message)))
    digest = hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    seen[digest] += 1  # the same finding twice in one file: keep both, distinctly
    return f"{digest}:{seen[digest]}"


def _result(
    f: Finding, index: dict[str, int], seen: Counter[str], suppressed: Suppressed | None = None
) -> dict[str, Any]:
    path = repo_relative(f.path)
    text = f.message + (f" (hint: {f.hint})" if f.hint else "")
    result: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": LEVELS[f.severity],
        "message": {"text": text},
    }
    if f.path:
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(path)}}
        if f.line >= 1:
            physical["region"] = {"startLine": f.line, "startColumn": max(f.col, 1)}
        result["locations"] = [{"physicalLocation": physical}]
    result["partialFingerprints"] = {FINGERPRINT: _fingerprint(f, path, seen)}
    if suppressed is not None:
        result["suppressions"] = [
            {
                "kind": "inSource" if suppressed.kind == "inline" else "external",
                "justification": f"dra-migrate ignore at {suppressed.source}",
            }
        ]
    return result


def _uri(path: str) -> str:
    from urllib.parse import quote

    return quote(path.encode("utf-8", "surrogateescape"), safe="/")  # a name's own bytes


def render(report: Report, command: str) -> str:
    used = {f.code for f in report.all_findings} | {s.finding.code for s in report.suppressed}
    codes = sorted(code for code in CODES if code in used)
    index = {code: i for i, code in enumerate(codes)}
    seen: Counter[str] = Counter()
    results = [_result(f, index, seen) for f in report.all_findings]
    results += [_result(s.finding, index, seen, s) for s in report.suppressed]
    failed = [f for f in report.files if f.status.value == "failed"]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "dra-migrate",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": FINDINGS_URL,
                "rules": [_rule(code) for code in codes],
            }
        },
        "automationDetails": {"id": f"dra-migrate/{command}/"},
        "results": results,
        "invocations": [
            {
                "executionSuccessful": not failed,
                "properties": {"command": command, "summary": report.summary()},
            }
        ],
    }
    document = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return dumps(document)
