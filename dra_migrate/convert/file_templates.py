"""Manifest templates a folder walk finds: ``*.yaml-template``, ``*.yaml.tmpl``,
``*.yaml.j2`` and the like (``git.TEMPLATE_EXTENSIONS``).

A pipeline renders them (envsubst, Jinja, ``configure_file``) before ``kubectl
apply``; their GPU counts are often placeholders (``nvidia.com/gpu: $GPU_PER_NODE``).
A walk lists them and counts every GPU ask they hold (inventory rows kept by DRA274,
state ``refused``) and never rewrites them: a placeholder count cannot be written into
a claim, and a Jinja file is not YAML. Named on the command line, a template is read
as the manifest it is and converted like any file (literal counts; ``${VAR}`` names
are kept by the naming rules, convert/naming.py).

The rows come from the parsed objects where the text parses as YAML (envsubst
templates do), else from the lines that set a GPU resource (Jinja).
"""

from __future__ import annotations

import re

from dra_migrate.convert.mapping import Config, Context
from dra_migrate.convert.unconverted import gpu_mentions
from dra_migrate.k8s.quantity import whole_count
from dra_migrate.manifests.sources import Source
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.model import InventoryItem

CODE = "DRA274"
HINT = (
    "render it and convert the rendering to see the edit (envsubst < FILE | dra-migrate "
    "convert -), then make it in the template; or name the file on the command line to "
    "convert it as a manifest when its GPU counts are literal"
)
_VALUE = re.compile(r"""^\s*["']?([^"'\s#]*)["']?\s*(?:#.*)?$""")


def findings(display: str, rows: list[InventoryItem]) -> list[Finding]:
    """DRA274 for each GPU ask of a template's parsed objects."""
    return [
        finding(
            CODE,
            display,
            r.line,
            r.col,
            f"manifest template: {r.kind} {r.name} ({r.pod_path}) asks for {r.resource}: "
            f"{r.value}; a template a folder walk finds is listed, never converted",
            HINT,
        )
        for r in rows
    ]


def text_asks(
    display: str, source: Source, config: Config
) -> tuple[list[Finding], list[InventoryItem]]:
    """A template that does not parse as YAML: each line that sets a GPU resource is an
    ask (a ``requests`` line is left out where a ``limits`` line sets the same
    resource in the document: one ask)."""
    found: list[Finding] = []
    rows: list[InventoryItem] = []
    mentions = gpu_mentions(source, config)
    lines = source.text.split("\n")
    limited = {
        (_document(lines, n), name)
        for n, _c, name, text in mentions
        if "limit" in _parent(lines, n)
    }
    for number, col, name, text in mentions:
        if "request" in _parent(lines, number) and (_document(lines, number), name) in limited:
            continue
        raw = text[col - 1 + len(name) :].lstrip("\"'").lstrip().removeprefix(":")
        match = _VALUE.match(raw)
        value = match.group(1) if match else raw.strip()
        choice = config.choose(name, Context())
        rows.append(
            InventoryItem(
                path=display,
                line=number,
                col=col,
                api_version="",
                kind="",
                namespace=None,
                name="",
                pod_path="(template)",
                container="",
                role="app",
                resource=name,
                count=whole_count(value),
                value=value,
                device_class=choice.device_class if choice else None,
                replicas=None,
                kept=CODE,
            )
        )
        found.append(
            finding(
                CODE,
                display,
                number,
                col,
                f"manifest template sets {name}: {value or '…'}; a template a folder walk "
                "finds is listed, never converted",
                HINT,
            )
        )
    return found, rows


def _document(lines: list[str], number: int) -> int:
    """The index of the YAML document line ``number`` (1-based) stands in."""
    return sum(1 for line in lines[: number - 1] if line.startswith("---"))


def _parent(lines: list[str], number: int) -> str:
    """The key of the nearest line above with less indentation."""
    line = lines[number - 1]
    indent = len(line) - len(line.lstrip(" -"))
    for above in reversed(lines[: number - 1]):
        stripped = above.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(above) - len(above.lstrip(" ")) < indent:
            return stripped.split(":", 1)[0].strip("\"' -").lower()
    return ""
