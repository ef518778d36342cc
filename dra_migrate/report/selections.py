"""The node labels a pod spec selects that the device plugin's sharing configuration
decides, as the plan carries them from the inventory rows to stage 2
(``migration/sharing.py``). A module of its own, imported for a pod spec with a nodeSelector or an
affinity (pipeline/selectors.py): a run whose pod specs have none never creates the
class (start-up).

GPU feature discovery computes ``nvidia.com/gpu.replicas``,
``nvidia.com/gpu.sharing-strategy``, ``nvidia.com/mig.strategy`` and the ``-SHARED``
suffix of ``nvidia.com/gpu.product`` from that configuration (NVIDIA/k8s-device-plugin
internal/lm/resource.go; the names as repo/sharing.py reads them): they change when
it leaves a node.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SHARING_LABELS = frozenset(
    {"nvidia.com/gpu.replicas", "nvidia.com/gpu.sharing-strategy", "nvidia.com/mig.strategy"}
)
PRODUCT_LABEL = "nvidia.com/gpu.product"
SHARED_PRODUCT = "-SHARED"  # the product's suffix on a shared, not renamed GPU


def selects_sharing(label: str, values: Iterable[str]) -> bool:
    """Whether a node selector on ``label`` with ``values`` selects what the device
    plugin's sharing configuration makes GFD write (``SHARING_LABELS``, a -SHARED
    product; a product selected by Exists, or without the suffix, matches either way)."""
    if label in SHARING_LABELS:
        return True
    return label == PRODUCT_LABEL and any(v.endswith(SHARED_PRODUCT) for v in values)


@dataclass(frozen=True, slots=True)
class LabelSelection:
    """A node label a pod spec selects (``pipeline/selectors.py`` ``label_selections``),
    at ``line`` of the row's file: here one GPU feature discovery computes from the
    device plugin's sharing configuration (``selects_sharing``)."""

    label: str
    operator: str  # a matchExpression's (In, NotIn, Exists, ...); "" for nodeSelector
    values: tuple[str, ...]
    line: int

    def describe(self) -> str:
        """The selection as the pod spec writes it, and where in the pod spec."""
        if not self.operator:
            return f"{self.label}={','.join(self.values)} (nodeSelector)"
        values = f" {','.join(self.values)}" if self.values else ""
        return f"{self.label} {self.operator}{values} (required node affinity)"
