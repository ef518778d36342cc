"""Run the CLI in this process with click's ``CliRunner``, as a shell would see it: what
went to stdout, to stderr, both in the order written, and the exit status."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from click.testing import CliRunner


class Result(NamedTuple):
    exit_code: int
    stdout: str
    stderr: str
    output: str  # stdout and stderr as written, interleaved
    exception: BaseException | None  # raised by the run (never SystemExit)
    stdout_bytes: bytes
    stderr_bytes: bytes


def invoke(
    args: Sequence[str],
    input: str | bytes | None = None,
    env: Mapping[str, str | None] | None = None,
) -> Result:
    """``dra-migrate ARGS`` with ``input`` on stdin (and ``env`` over the environment)."""
    from dra_migrate.cli.app import PROG, cli

    done = CliRunner().invoke(cli, list(args), input=input or b"", env=env, prog_name=PROG)
    raised = None if isinstance(done.exception, SystemExit) else done.exception

    def decoded(raw: bytes) -> str:  # CliRunner's own properties turn CRLF into LF
        return raw.decode("utf-8", "replace")

    return Result(
        done.exit_code,
        decoded(done.stdout_bytes),
        decoded(done.stderr_bytes),
        decoded(done.output_bytes),
        raised,
        done.stdout_bytes,
        done.stderr_bytes,
    )
