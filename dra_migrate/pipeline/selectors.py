"""The node labels a pod spec selects that the device plugin's sharing configuration
decides (report/selections.py), for its inventory rows. A module of its own, imported
only for a pod spec with a nodeSelector or an affinity (start-up)."""

from __future__ import annotations

from yaml.nodes import MappingNode

from dra_migrate.manifests import locate, trees
from dra_migrate.report.selections import LabelSelection, selects_sharing


def label_selections(pod: MappingNode) -> list[LabelSelection]:
    """Every node label the pod spec requires (``locate.required_labels``), at the line
    of its key."""
    return [
        LabelSelection(label, operator, values, trees.position(node)[0])
        for label, operator, values, node in locate.required_labels(pod)
    ]


def sharing_labels(pod: MappingNode) -> tuple[LabelSelection, ...]:
    """The pod spec's selections on labels GPU feature discovery computes from the
    device plugin's sharing configuration (``selects_sharing``)."""
    return tuple(s for s in label_selections(pod) if selects_sharing(s.label, s.values))
