"""The process of the ``dra-migrate`` command: settled before the CLI is imported."""

from __future__ import annotations

import gc
import sys

from dra_migrate import git


def main() -> None:
    """``dra-migrate``: the CLI, imported with the cyclic garbage collector paused.

    Importing makes most of the objects a short run ever makes (modules,
    classes, functions), all long-lived, none garbage. At Python's default the
    collector ran 36 times during a one-file hook run and 56 times during a
    ``scan``, 12 to 25 ms of each run spent walking those same objects again and
    again. They are frozen once imported (never walked again), and the collector
    runs as usual on what the run makes after: a stream of any length keeps its
    flat memory. The parsing of a file pauses it too (``load.no_collector``).

    git answers what the run will ask it meanwhile (``git.prestart``).
    """
    git.prestart(sys.argv[1:])
    try:
        gc.disable()
        try:
            from dra_migrate.cli import main as cli

            gc.freeze()
        finally:
            gc.enable()
        cli()
    except SystemExit as done:
        git.stop_unclaimed()
        leave(done.code)
        raise
    finally:
        git.stop_unclaimed()


def leave(code: object) -> None:
    """End the process with ``code`` as ``sys.exit`` would, without the interpreter's
    teardown: freeing every module, class and object one by one took a run 5 to 10
    ms, after its last line was written. What an ending must do is done: the exit
    functions (``atexit``, ``weakref.finalize``) run and the standard streams are
    flushed. Left to the interpreter (returns) while another thread runs, or when a
    stream cannot be flushed."""
    import atexit
    import os
    import threading

    if threading.active_count() > 1:
        return
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code & 0xFF
    else:  # sys.exit("message"): the message on stderr, status 1
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return  # the interpreter reports it, as it would have
    os._exit(status)
