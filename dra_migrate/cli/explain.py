"""``dra-migrate explain [CODE]``: a finding code's documentation, offline.

The section of ``docs/findings.md`` the package ships (``report/docs.py``): what the
code means, what to do, and the example that triggers it; without a code, every code
with its severity and title. An unknown code is a usage error (exit 2) that names the
codes it is closest to."""

from __future__ import annotations

import difflib
import re
import sys

import click

from dra_migrate.cli import run
from dra_migrate.cli.options import Command
from dra_migrate.report.findings import CODES, inert

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_CODE = re.compile(r"(?:dra)?(\d{3})", re.IGNORECASE)
SUGGESTIONS = 3  # codes a "did you mean" names at most


def complete_code(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
    """``explain DRA22<TAB>``: the codes that start so (``dra22`` and ``22`` too), each
    with its title for the shells that show one."""
    from click.shell_completion import CompletionItem

    typed = incomplete.strip().upper()
    prefix = typed if typed.startswith("DRA") or not typed.isdigit() else f"DRA{typed}"
    return [
        CompletionItem(code, help=spec.title)
        for code, spec in CODES.items()
        if code.startswith(prefix)
    ]


@click.command("explain", cls=Command)
@click.argument("code", required=False, metavar="[CODE]", shell_complete=complete_code)
def explain(code: str | None) -> None:
    """Print the documentation of a finding code (DRA222), or list the codes."""
    from dra_migrate.report import docs

    if code is None:
        width = max(len(c.severity.value) for c in CODES.values())
        lines = [f"{c.code}  {c.severity.value:<{width}}  {c.title}" for c in CODES.values()]
        run.out("\n".join(lines) + "\n")
        sys.exit(0)
    name = normalise(code)
    if name not in CODES:
        raise click.BadParameter(unknown(code), param_hint="CODE")
    text = docs.section(name)
    if text is None:  # an installation without its package data
        raise click.UsageError(
            f"{name}: {CODES[name].title}; its documentation is not installed "
            f"(docs/findings.md): {docs.FINDINGS_URL}#{name.lower()}"
        )
    run.out(inert(text + f"\nOnline: {docs.FINDINGS_URL}#{name.lower()}\n"))
    sys.exit(0)


def normalise(code: str) -> str:
    """``dra222``, ``DRA222`` and ``222`` are DRA222; anything else as given, upper case."""
    match = _CODE.fullmatch(code.strip())
    return f"DRA{match[1]}" if match else code.strip().upper()


def unknown(code: str) -> str:
    """The message for a code that is not in the table: the closest codes by spelling,
    else where the list is."""
    name = normalise(code)
    close = difflib.get_close_matches(name, list(CODES), n=SUGGESTIONS, cutoff=0.6)
    said = f"no finding code {code!r}"
    if close:
        return f"{said} (did you mean {' or '.join(close)}?)"
    return f"{said}: codes are DRA and three digits; dra-migrate explain lists them"
