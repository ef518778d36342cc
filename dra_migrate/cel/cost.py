"""The cost estimate of a selector, in the spirit of cel-go's ``EstimateCost``: the
API server refuses one over :data:`COST_LIMIT` (DRA345).
"""

from __future__ import annotations

from typing import Any

from dra_migrate.cel.problems import (
    COST_LIMIT,
    MAX_ATTRIBUTE_STRING,
    MAX_ATTRIBUTES_PER_DEVICE,
    MAX_LIST_ATTRIBUTE_VALUES,
)
from dra_migrate.cel.tree import (
    _COMPREHENSIONS,
    _DEVICE_MAPS,
    _ident_name,
    _unwrap,
)


def _device_depth(node: Any) -> int | None:
    """How deep into ``device`` a member chain reads: 1 ``device.attributes``,
    2 ``device.attributes[d]``, 3 an attribute value; None for anything else."""
    inner = _unwrap(node)
    if inner is None:
        return None
    if inner.data in ("member_dot", "member_index") and len(inner.children) == 2:
        receiver, key = inner.children
        if inner.data == "member_dot" and _ident_name(receiver) == "device":
            return 1 if str(key.value) in _DEVICE_MAPS else None
        depth = _device_depth(receiver)
        return depth + 1 if depth in (1, 2) else None
    return None


def estimate_cost(tree: Any) -> int:
    """A worst-case cost estimate in the spirit of cel-go's ``EstimateCost``.

    One unit for each operation, variable and member access; a comprehension costs
    its range once plus, for each element the range can hold, its condition and
    step. Range sizes are the API's bounds: 32 attributes or domains a device,
    64 values a list attribute (the bound Kubernetes' estimator assumes), the
    length of a list literal. The API server rejects a selector whose estimate
    exceeds :data:`COST_LIMIT` ("too complex, exceeds cost limit").
    """

    def est(node: Any) -> tuple[int, int | None]:
        if not hasattr(node, "data"):
            return 0, None
        data, children = node.data, node.children
        if data == "list_lit":
            elements = list(children[0].children) if children else []
            return sum(est(e)[0] for e in elements) + 10, len(elements)
        if data == "map_lit":
            entries = list(children[0].children) if children else []
            return sum(est(e)[0] for e in entries) + 30, len(entries) // 2
        if data in ("member_dot", "member_index"):
            depth = _device_depth(node)
            cost = sum(est(c)[0] for c in children) + 1
            if depth in (1, 2):
                return cost, MAX_ATTRIBUTES_PER_DEVICE
            if depth == 3:
                return cost, MAX_LIST_ATTRIBUTE_VALUES
            return cost, None
        if data == "member_dot_arg":
            receiver, method = children[0], str(children[1].value)
            args = list(children[2].children) if len(children) > 2 else []
            receiver_cost, size = est(receiver)
            if method in _COMPREHENSIONS and args:
                n = MAX_LIST_ATTRIBUTE_VALUES if size is None else size
                body = sum(est(a)[0] for a in args)
                return receiver_cost + 1 + n * (body + 2), n if method.startswith(
                    ("map", "filter", "transform")
                ) else None
            if method == "bind" and _ident_name(receiver) == "cel" and len(args) == 3:
                init, (body, body_size) = est(args[1]), est(args[2])
                return init[0] + body + 1, body_size
            cost = receiver_cost + sum(est(a)[0] for a in args) + 1
            if method in ("split", "includes"):
                cost += MAX_LIST_ATTRIBUTE_VALUES - 16
            return cost, (MAX_ATTRIBUTE_STRING if method == "split" else None)
        if data == "ident":
            return 1, None
        if data == "literal":
            return 0, None
        results = [est(c) for c in children]
        cost = sum(r[0] for r in results)
        if len(children) == 1:
            return cost, results[0][1] if results else None
        return cost + 1, None

    try:
        return est(tree)[0]
    except RecursionError:
        return COST_LIMIT + 1
