"""The Karpenter NodePools a repository defines: their names, the labels their nodes get
and the GPU resources their limits cap (convert/provisioners.py holds the pods they
would launch nodes for).

Asked like the bridge classes (context.py's ``BridgeLookup``): in a git work tree
``git grep`` finds the files that mention ``karpenter.sh/`` while the run reads its own;
outside one the files are walked and searched. Only those files are parsed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dra_migrate import git
from dra_migrate.repo import discover

NEEDLE = b"karpenter.sh/"
GROUP = "karpenter.sh"


@dataclass(frozen=True, slots=True)
class NodePool:
    """A Karpenter NodePool of the repository."""

    name: str
    labels: tuple[tuple[str, str], ...]  # spec.template.metadata.labels: its nodes get them
    gpu_limits: tuple[str, ...]  # the GPU resources spec.limits caps
    path: str  # as the run shows paths
    line: int
    col: int

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


def defined_node_pools(data: bytes, path: str, gpu: Callable[[str], bool]) -> list[NodePool]:
    """The NodePools of one file (none when it does not parse: the run reports that)."""
    from dra_migrate.manifests import compose, locate, sources, trees
    from dra_migrate.manifests.kinds import api_group
    from dra_migrate.report.findings import InputProblem

    try:
        docs = compose.parse(sources.decode(path, data), ("NodePool",))
    except InputProblem:
        return []
    found = []
    for doc in docs:
        for obj in locate.objects(doc):
            if obj.kind != "NodePool" or api_group(obj.api_version) != GROUP:
                continue
            labels = trees.to_python(
                trees.get_path(obj.root, "spec", "template", "metadata", "labels")
            )
            limits = [k for k, _n, _v in trees.entries(trees.get_path(obj.root, "spec", "limits"))]
            line, col = obj.position
            found.append(
                NodePool(
                    obj.name,
                    tuple(sorted((str(k), str(v)) for k, v in (labels or {}).items())),
                    tuple(sorted(k for k in limits if gpu(k))),
                    os.path.relpath(path) if os.path.isabs(path) else path,
                    line,
                    col,
                )
            )
    return found


class NodePoolLookup:
    """The NodePools under ``roots`` (the paths of the run and its --context), each file
    once, asked now and answered by ``result``."""

    def __init__(self, roots: Iterable[str], excludes: Iterable[str], limit: int) -> None:
        self.roots = [r for r in roots if r != "-"]
        self.excludes, self.limit = list(excludes), limit
        self.search = discover.Search(self.roots, NEEDLE.decode(), self.excludes)

    def result(self, gpu: Callable[[str], bool]) -> tuple[NodePool, ...]:
        found_paths = self.search.result()
        if found_paths is None:  # outside git: walked, and each file searched
            walked = discover.expand(self.roots, self.excludes, (), (NEEDLE,), self.limit)
            paths = [c.path for c in walked if not c.ruled_out]
        else:
            paths = sorted(found_paths)
        seen: set[str] = set()
        found: list[NodePool] = []
        for path in paths:
            real = discover.real_name(path)
            if real in seen or not path.lower().endswith(git.EXTENSIONS):
                continue
            seen.add(real)
            try:
                data = discover.read_file(path, self.limit)
            except discover.Unreadable:
                continue  # reported by the run whose paths hold it
            if discover.mentions(data, (NEEDLE,)):
                found += defined_node_pools(data, path, gpu)
        return tuple(found)

    def cancel(self) -> None:
        self.search.cancel()
