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
    finally:
        git.stop_unclaimed()
