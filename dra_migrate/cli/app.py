"""The command line: the click group (``dra-migrate COMMAND``), the version, shell
completion, and the top-level error handling (usage errors exit 2 with one line naming
the option, output that cannot be written exits 123, a closed pipe 141 quietly,
never a traceback). Each command
is a module of this package, imported only when it is the one named."""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import sys
from collections.abc import Sequence

import click

from dra_migrate import __version__, cache, git
from dra_migrate.cli.run import err
from dra_migrate.report.model import (
    EXIT_CLOSED_PIPE,
    EXIT_INTERRUPTED,
    EXIT_UNPROCESSED,
    EXIT_USAGE,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

PROG = "dra-migrate"
COMPLETE_VAR = "_DRA_MIGRATE_COMPLETE"  # click's shell completion (README: Shell completion)

# name: (module of dra_migrate.cli, the one line of the overview)
COMMANDS = {
    "scan": ("scan", "List every pod spec that asks for GPUs."),
    "convert": ("convert", "Rewrite GPU requests as DRA claims."),
    "validate": ("validate", "Check DRA objects and their pods."),
    "report": ("report", "The staged migration plan."),
    "deviceclasses": ("deviceclasses", "Render the DeviceClasses the mapping needs."),
    "inventory": ("inventory", "What runs today, from a cluster or dumps."),
    "simulate": ("simulate", "Place the workloads before and after on a control plane."),
    "explain": ("explain", "The documentation of a finding code (offline)."),
}
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
_OUTPUT_ERRORS = {errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT}


class Commands(click.Group):
    """The commands of ``COMMANDS``, each imported from its module when named."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(f"dra_migrate.cli.{COMMANDS[cmd_name][0]}")
        command: click.Command = getattr(module, cmd_name)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0]
        if name not in COMMANDS and not ctx.resilient_parsing:  # completion: no error
            raise click.UsageError(
                f"no such command {name!r} (choose from {', '.join(COMMANDS)}; --help for more)",
                ctx,
            )
        return super().resolve_command(ctx, args)

    def main(self, args: Sequence[str] | None = None, *_: Any, **__: Any) -> NoReturn:
        """click's entry point (``CliRunner.invoke`` calls it): the CLI's own ``main``."""
        main(args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The overview's list, from the table: no command module is imported for it."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, line) for name, (_module, line) in COMMANDS.items()])


@click.group(cls=Commands, context_settings=CONTEXT, no_args_is_help=True)
@click.version_option(
    __version__, "--version", prog_name=PROG, message="%(prog)s, version %(version)s"
)
def cli() -> None:
    """Move GPU workloads from device-plugin extended resources to DRA.

    dra-migrate COMMAND --help shows a command's options."""


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """``dra-migrate COMMAND ...``: one command's options parsed, the command run.

    Output that cannot be written (a full disk) ends the run with one line on stderr
    and exit status 123, never a traceback; a pipe its reader closed (``| head``)
    ends it quietly, with status 141 as SIGPIPE would."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if os.environ.get(COMPLETE_VAR):
            _complete()
        _dispatch(args)
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRORS:
            raise
        with contextlib.suppress(OSError):  # nothing more may reach the broken stream
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        if exc.errno == errno.EPIPE:  # the reader has what it wanted (| head): quietly,
            sys.exit(EXIT_CLOSED_PIPE)  # with the status of a process SIGPIPE ended
        with contextlib.suppress(OSError):
            err(f"dra-migrate: error: cannot write the output: {exc.strerror}")
        sys.exit(EXIT_UNPROCESSED)
    except KeyboardInterrupt:
        err("dra-migrate: interrupted")
        sys.exit(EXIT_INTERRUPTED)
    finally:  # what this run trusted ends with it (a process may run the CLI again)
        git.trust(None)
        cache.adopt(())
    sys.exit(0)


def _dispatch(args: list[str]) -> None:
    """Parse and run, as click's ``main`` does without its own endings (it turns Ctrl-C
    and a closed pipe into other statuses): a usage error is printed here."""
    try:
        with cli.make_context(PROG, args) as ctx:
            cli.invoke(ctx)
    except click.exceptions.NoArgsIsHelpError as error:  # no command: the overview, status 2
        assert error.ctx is not None
        err(error.ctx.get_help())
        sys.exit(EXIT_USAGE)
    except click.UsageError as error:
        _usage_error(error)
    except click.exceptions.Exit as done:  # --help, --version
        sys.exit(done.exit_code)
    except click.Abort:
        raise KeyboardInterrupt from None


def _usage_error(error: click.UsageError) -> NoReturn:
    """The command's usage and one line saying what is wrong, naming the option."""
    ctx = error.ctx
    if ctx is not None:
        err(ctx.get_usage())
        err(f"Try '{ctx.command_path} --help' for help.")
    where = ctx.command_path if ctx is not None else PROG
    err(f"{where}: error: {_message(error)}")
    sys.exit(EXIT_USAGE)


def _message(error: click.UsageError) -> str:
    """What argparse said for the same mistake: scripts and users read these lines."""
    if isinstance(error, click.NoSuchOption):
        said = f"unrecognized arguments: {error.option_name}"
        if error.possibilities:
            said += f" (did you mean {' or '.join(sorted(error.possibilities))}?)"
        return said
    if isinstance(error, click.BadParameter) and error.param is not None:
        return f"argument {_names(error.param)}: {error.message}"
    if isinstance(error, click.BadOptionUsage) and error.ctx is not None:
        for param in error.ctx.command.params:
            if error.option_name in param.opts:
                return f"argument {_names(param)}: expected one argument"
    return error.message


def _names(param: click.Parameter) -> str:
    return "/".join(param.opts) if isinstance(param, click.Option) else (param.name or "")


def _complete() -> NoReturn:
    """Shell completion (bash, zsh, fish): click answers what the shell asks for in
    ``_DRA_MIGRATE_COMPLETE`` (``bash_source``, ``zsh_complete``, ...)."""
    from click.shell_completion import shell_complete

    instruction = os.environ[COMPLETE_VAR]
    sys.exit(shell_complete(cli, {}, PROG, COMPLETE_VAR, instruction))


def command(name: str) -> click.Command:
    """The click command ``name`` (tests and git's reading of the command line)."""
    found = cli.get_command(click.Context(cli), name)
    assert found is not None, name
    return found
