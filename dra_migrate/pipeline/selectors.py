"""The node labels a pod spec selects that the device plugin's sharing configuration
decides (report/selections.py), for its inventory rows. A module of its own, imported
only for a pod spec with a nodeSelector or an affinity (start-up)."""

from __future__ import annotations

from yaml.nodes import MappingNode

from dra_migrate.manifests import trees
from dra_migrate.manifests.trees import entries, get, get_path, items, scalar
from dra_migrate.report.selections import LabelSelection, selects_sharing


def label_selections(pod: MappingNode) -> list[LabelSelection]:
    """Every node label the pod spec selects: ``nodeSelector`` keys (operator ""), and
    the required node affinity's matchExpressions whatever their operator (In, NotIn,
    Exists, DoesNotExist, Gt, Lt), at the line of the key."""
    found: list[LabelSelection] = []
    for key, key_node, value in entries(get(pod, "nodeSelector")):
        text = scalar(value)
        found.append(LabelSelection(key, "", (text,) if text else (), trees.position(key_node)[0]))
    terms = items(
        get_path(
            pod,
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        )
    )
    for term in terms:
        for expr in items(get(term, "matchExpressions")):
            key_node = get(expr, "key")
            key = scalar(key_node) or ""
            if not key or key_node is None:
                continue
            operator = scalar(get(expr, "operator")) or "?"
            values = tuple(v for v in (scalar(x) for x in items(get(expr, "values"))) if v)
            found.append(LabelSelection(key, operator, values, trees.position(key_node)[0]))
    return found


def sharing_labels(pod: MappingNode) -> tuple[LabelSelection, ...]:
    """The pod spec's selections on labels GPU feature discovery computes from the
    device plugin's sharing configuration (``selects_sharing``)."""
    return tuple(s for s in label_selections(pod) if selects_sharing(s.label, s.values))
