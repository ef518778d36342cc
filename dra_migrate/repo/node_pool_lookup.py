"""The search for the Karpenter NodePools of a repository, started when a run starts:
light (no records), so a run whose repository defines none never imports the NodePools'
model (``repo/node_pools.py``), which parses what it finds.

Asked like the bridge classes (context.py's ``BridgeLookup``): in a git work tree
``git grep`` finds the files that mention ``karpenter.sh/`` while the run reads its own;
outside one the files are walked and searched. Only those files are parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dra_migrate.repo import discover

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from dra_migrate.repo.discover import Trees
    from dra_migrate.repo.node_pools import NodePool

NEEDLE = b"karpenter.sh/"


class NodePoolLookup:
    """The NodePools under ``roots`` (the paths of the run and its --context), each file
    once, asked now and answered by ``result``."""

    def __init__(
        self, roots: Iterable[str], excludes: Iterable[str], limit: int, trees: Trees | None = None
    ) -> None:
        self.roots = [r for r in roots if r != "-"]
        self.excludes, self.limit = list(excludes), limit
        self.search = discover.Search(self.roots, NEEDLE.decode(), self.excludes, trees)

    def result(self, gpu: Callable[[str], bool]) -> tuple[NodePool, ...]:
        found: list[NodePool] = []
        for path, _real, data in self.search.files(self.limit):
            from dra_migrate.repo.node_pools import defined_node_pools

            found += defined_node_pools(data, path, gpu)
        return tuple(found)

    def cancel(self) -> None:
        self.search.cancel()
