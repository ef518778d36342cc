"""The Karpenter NodePools a repository defines: their names, the labels their nodes get
and the GPU resources their limits cap (convert/provisioners.py holds the pods they
would launch nodes for).

The repository's search for them is ``repo/node_pool_lookup.py`` (no records): a run
whose repository defines none never imports this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

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
