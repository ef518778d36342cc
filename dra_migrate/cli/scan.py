"""``dra-migrate scan``: list every pod spec that asks for GPUs through extended resources."""

from __future__ import annotations

import sys

import click

from dra_migrate.cli import run
from dra_migrate.cli.options import (
    Command,
    common_options,
    resolve,
    strategy_option,
    workflow_options,
)
from dra_migrate.report.findings import ConfigError
from dra_migrate.report.model import EXIT_UNPROCESSED, Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@click.command("scan", cls=Command)
@common_options
@workflow_options
@strategy_option
def scan(**params: Any) -> None:
    """List every pod spec that asks for GPUs through extended resources."""
    try:
        options = resolve(params, edit=False)
        report = run.execute(options)
    except ConfigError as error:
        run.fail_usage(error)
    run.suppress(report, options, "scan")
    run.emit_report(report, "scan", options)
    if options.fmt == "text" and not options.quiet:
        run.err(run.config_used(options.settings.config))
    sys.exit(EXIT_UNPROCESSED if report.count(Status.FAILED) else 0)
