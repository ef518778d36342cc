"""The search for the device plugin's configurations in a repository, started when a
run starts: light (no records), so a run whose repository holds none never imports
the sharing model (``repo/sharing.py``), which parses what it finds."""

from __future__ import annotations

from collections.abc import Iterable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from dra_migrate.repo.discover import Trees
    from dra_migrate.repo.sharing import Fleet

_EXTENSIONS = (".yaml", ".yml", ".json")


# What git is asked for first: every configuration that shares or sets MIG holds one
# of the first three (a ConfigMap's data and the charts' values embed the file's
# text); a ClusterPolicy or the GPU Operator's values that only name the default
# configuration hold devicePlugin.
SEARCHED = ("timeSlicing", "migStrategy", "mps:", "devicePlugin")


# ...and what a configuration that matters names: the replicas it shares by, its MIG
# strategy, or (a ClusterPolicy, the GPU Operator's values) the device plugin
NAMED = (b"replicas", b"migStrategy", b"devicePlugin")


class SharingLookup:
    """The device plugin configurations under ``roots``, asked now and answered by
    ``result``: in a git work tree ``git grep`` finds the files that mention them while
    the run reads its own (as ``context.BridgeLookup``); outside one the files are
    walked and searched. Only those files are parsed."""

    def __init__(
        self, roots: Iterable[str], excludes: Iterable[str], limit: int, trees: Trees | None = None
    ) -> None:
        from dra_migrate.repo import discover

        self.roots = [r for r in roots if r != "-"]
        self.excludes, self.limit = list(excludes), limit
        # one search a folder for all of them: the run's kept answer (``trees``), or
        # one git grep
        self.search = discover.Search(self.roots, SEARCHED, self.excludes, trees)

    def cancel(self) -> None:
        self.search.cancel()

    def result(self) -> tuple[Fleet | None, tuple[str, ...]]:
        """The pools the configurations define, and the files they were read from:
        ConfigMaps whose data holds a configuration (what the plugin reads through
        ``--config-file`` or the config manager), the device plugin chart's values
        (``config.map``, ``config.default``), the GPU Operator's values and ClusterPolicy
        (``devicePlugin.config.data`` and ``default``). Nothing in them is run;
        unreadable or unparsable files are skipped (the run that converts them reports
        them)."""
        import os

        gathered = None
        files: list[str] = []
        for path, _real, data in self.search.files(self.limit, extensions=_EXTENSIONS):
            if not any(n in data for n in NAMED):
                continue  # no count of replicas, no strategy
            from dra_migrate.repo.sharing import Found, read_documents

            display = os.path.normpath(os.path.relpath(path))
            more = read_documents(data, display)
            if not more.empty:
                files.append(display)
            gathered = gathered or Found()
            gathered.add(more)
        return (gathered.fleet() if gathered is not None else None), tuple(files)


def read_repository(
    roots: Iterable[str], excludes: Iterable[str], limit: int
) -> tuple[Fleet | None, tuple[str, ...]]:
    """``SharingLookup(...).result()`` at once."""
    return SharingLookup(roots, excludes, limit).result()


def configured_fleet(data: Any, path: str) -> Fleet | None:
    """``sharing:`` of the configuration as read (the schema has checked it); None
    without one: the model (repo/sharing.py) is imported only for a file that has it."""
    if not data:
        return None
    from dra_migrate.repo.sharing import fleet_from_config

    return fleet_from_config(data, path)
