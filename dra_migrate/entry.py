"""The process of the ``dra-migrate`` command: settled before the CLI is imported."""

from __future__ import annotations

import gc

# A run is a short process that makes many objects and few reference cycles. At
# Python's default (a collection every 700 new objects), the cyclic collector
# spent 5 to 7 percent of a one-file hook run and of a scan walking the same
# long-lived objects (modules, classes, the parsed trees) again and again. It
# still runs, every 50,000 new objects; the parsing of a file pauses it too
# (``load.no_collector``).
YOUNG_OBJECTS = 50_000


def main() -> None:
    """``dra-migrate``: the CLI, once the collector is set."""
    _threshold, *older = gc.get_threshold()
    gc.set_threshold(YOUNG_OBJECTS, *older)
    from dra_migrate.cli import main as cli

    cli()
