"""The ``dra-migrate`` process (and ``python -m dra_migrate``)."""

from __future__ import annotations

import gc
import sys

from dra_migrate import git


def main() -> None:
    """``dra-migrate``: git's searches started, then the CLI imported and run.

    git answers what the run will ask it while Python imports the CLI
    (``git.prestart``); the searches the run never took are stopped at the end.
    Importing makes most of the objects a short run ever makes (modules, classes,
    functions), all long-lived, none garbage: the cyclic garbage collector is paused
    while the CLI is imported and what it imported is frozen, never walked again (at
    Python's default the collector ran 36 times during a one-file hook run, walking
    those same objects); it runs as usual on what the run makes after.
    """
    git.prestart(sys.argv[1:])
    try:
        gc.disable()
        try:
            from dra_migrate.cli.app import main as cli

            gc.freeze()
        finally:
            gc.enable()
        cli()
    finally:
        git.stop_unclaimed()


if __name__ == "__main__":
    main()
