"""Run the CLI in this process, as a shell would see it: what went to stdout, to
stderr, both in the order written, and the exit status."""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence
from typing import NamedTuple


class Result(NamedTuple):
    exit_code: int
    stdout: str
    stderr: str
    output: str  # stdout and stderr as written, interleaved
    exception: BaseException | None  # raised by the run (never SystemExit)
    stdout_bytes: bytes
    stderr_bytes: bytes


class _Sink(io.RawIOBase):
    """Bytes written to one stream, also kept in the order of both."""

    def __init__(self, both: bytearray) -> None:
        self.own = bytearray()
        self.both = both

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        chunk = bytes(data)  # type: ignore[call-overload]
        self.own += chunk
        self.both += chunk
        return len(chunk)


def _text(sink: _Sink) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BufferedWriter(sink), encoding="utf-8", write_through=True)


def invoke(args: Sequence[str], input: str | bytes | None = None) -> Result:
    """``dra-migrate ARGS`` with ``input`` on stdin."""
    from dra_migrate.cli.app import main

    both = bytearray()
    out, err = _Sink(both), _Sink(both)
    data = input.encode() if isinstance(input, str) else (input or b"")
    stdin = io.TextIOWrapper(io.BufferedReader(io.BytesIO(data)), encoding="utf-8")
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, _text(out), _text(err)
    code, exception = 0, None
    try:
        main(list(args))
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except Exception as raised:
        code, exception = 1, raised
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        sys.stdin, sys.stdout, sys.stderr = saved

    def decoded(raw: bytearray) -> str:
        return raw.decode("utf-8", "replace")

    return Result(
        code,
        decoded(out.own),
        decoded(err.own),
        decoded(both),
        exception,
        bytes(out.own),
        bytes(err.own),
    )
