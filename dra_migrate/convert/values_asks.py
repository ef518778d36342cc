"""The GPU asks of a Helm chart's values files: a finding for each key (DRA204, and
DRA278 where ``outside_counts.VALUES_KEYS`` knows the operator that reads the key
instead of a template) and an inventory row for each ask, so ``scan`` counts every GPU
ask it sees.

A row is one mapping that holds the resources and one resource, limits first (a
profile that sets ``limits`` and ``requests`` of ``nvidia.com/gpu`` asks once), at the
key's line. The file's own pass cannot know what the chart pass will make of the chart
(``helm/unit.py``), so each row starts kept by its finding (``REPORTED``: DRA204, or
DRA278); the chart pass then gives it the chart's way (``helm/unit.py`` ``_settle``):
converted by a recipe or a template edit, bridged (DRA242), refused by a manual
chart's reason (DRA243, DRA249, ...), or gone with a chart migrated already. A row of an operator's key
(DRA278) keeps its reason under every way but the bridge: no edit of the chart reaches
the pods the operator builds.
"""

from __future__ import annotations

from yaml.nodes import Node

from dra_migrate.convert.mapping import Config, Context
from dra_migrate.convert.unconverted import RESOURCE_PARENT, gpu_reported
from dra_migrate.k8s.quantity import whole_count
from dra_migrate.manifests import scalars, trees
from dra_migrate.manifests.sources import Document, Source
from dra_migrate.manifests.trees import entries, items, scalar
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.model import InventoryItem

VALUES_CODE = "DRA204"  # a values key that sets GPUs, as the file's own pass leaves it
REPORTED = (VALUES_CODE, "DRA278")  # the codes a row starts kept by (the chart pass settles)

# (the steps to the mapping that holds the key, as messages show them; that mapping's
# key; the key's node; the key; the amount's node)
Ask = tuple[tuple[str, ...], str, Node, str, Node]


def helm_values(
    source: Source, docs: list[Document], config: Config
) -> tuple[list[Finding], list[InventoryItem]]:
    """DRA204 for each GPU key where resources are set (DRA278 beside it for a key an
    operator reads), and one row a mapping and resource (limits win over requests)."""
    found: list[Finding] = []
    rows: dict[tuple[tuple[str, ...], str], tuple[InventoryItem, str]] = {}
    for doc in docs:
        for steps, parent, key_node, name, amount in _asks(doc.root, ()):
            if not gpu_reported(config, name):
                continue
            shown = ".".join((*steps, _step(name)))
            line, col = trees.position(key_node)
            found.append(
                finding(
                    VALUES_CODE,
                    source.path,
                    line,
                    col,
                    f"values key {shown} sets {name}: {scalar(amount) or '…'}; it is left as it is",
                    "the chart's templates turn it into an extended resource; the chart's "
                    "finding says why it is left and the way out",
                )
            )
            holder = steps[:-1] if _limits_or_requests(parent) else steps
            if len(holder) > 1 and holder[-1] == "resources":  # its container-like mapping
                holder = holder[:-1]
            if (holder, name) in rows and "limit" not in parent.lower():
                continue  # limits win over requests
            choice = config.choose(name, Context())
            row = InventoryItem(
                path=source.path,
                line=line,
                col=col,
                api_version="",
                kind="",
                namespace=None,
                name="",
                pod_path=".".join(holder) or "(document)",
                container="",
                role="app",
                resource=name,
                count=whole_count(scalars.quantity_text(amount) or ""),
                value=scalar(amount) or "",
                device_class=choice.device_class if choice else None,
                replicas=None,
                kept=VALUES_CODE,
            )
            rows[(holder, name)] = (row, shown)
    if rows:
        from dra_migrate.convert import outside_counts  # only where a values key asks

        for (holder, _name), (row, shown) in rows.items():
            rule = outside_counts.values_rule(holder)
            if rule is not None:  # once an ask, at the key its row counts
                found.append(outside_counts.values_finding(rule, shown, row, source.path))
                row.kept = rule.code
    ordered = sorted((r for r, _shown in rows.values()), key=lambda r: (r.line, r.col))
    return sorted(found, key=lambda f: (f.line, f.col, f.code)), ordered


def _asks(node: Node | None, steps: tuple[str, ...], parent: str = "") -> list[Ask]:
    """The keys of a values tree that sit where resources are set: under a parent key
    such as ``limits``, ``requests``, ``resources`` or ``extra_resource_limits`` (a
    ``nodeSelector`` on ``nvidia.com/gpu.product`` is not a request), as ``_keys`` of
    convert/unconverted.py finds them, with the nodes a row needs."""
    out: list[Ask] = []
    for key, key_node, value in entries(node):
        if RESOURCE_PARENT.search(parent):
            out.append((steps, parent, key_node, key, value))
        out.extend(_asks(value, (*steps, _step(key)), key))
    for i, item in enumerate(items(node)):
        here = (*steps[:-1], f"{steps[-1]}[{i}]") if steps else (f"[{i}]",)
        out.extend(_asks(item, here, parent))
    return out


def _limits_or_requests(key: str) -> bool:
    """A parent that is one side of a resources mapping (``limits``, ``requests``,
    ``extra_resource_guarantees``): the ask is the mapping above it, once."""
    low = key.lower()
    return "limit" in low or "request" in low or "guarantee" in low


def _step(key: str) -> str:
    """A step of a values key as messages show it (joined by dots): quoted when it
    holds a dot or a slash."""
    return f'"{key}"' if "." in key or "/" in key else key
