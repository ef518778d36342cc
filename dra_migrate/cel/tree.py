"""Reading the Lark syntax tree: single-child wrappers, identifiers, namespaces,
comprehension macros, and the fixed paths of ``device`` an expression reads.
"""

from __future__ import annotations

from typing import Any

from dra_migrate.cel.environment import (
    _MACROS_1VAR,
    _MACROS_2VAR,
    _NAMESPACES,
)
from dra_migrate.cel.parse import (
    _decode_string,
)


def _unwrap(node: Any) -> Any:
    """The innermost node of a chain of single-child wrappers (expr → … → member)."""
    while hasattr(node, "data") and node.data in (
        "expr",
        "conditionalor",
        "conditionaland",
        "relation",
        "addition",
        "multiplication",
        "unary",
        "member",
        "primary",
    ):
        if len(node.children) != 1:
            return node
        node = node.children[0]
    return node if hasattr(node, "data") else None


def _ident_name(node: Any) -> str | None:
    inner = _unwrap(node)
    if inner is not None and inner.data == "ident":
        return str(inner.children[0].value)
    return None


def _namespace_of(receiver_node: Any) -> str | None:
    name = _ident_name(receiver_node)
    return name if name in _NAMESPACES else None


_COMPREHENSIONS = _MACROS_1VAR | _MACROS_2VAR | {"optMap", "optFlatMap"}
_MACROS_2VAR_ONLY = frozenset({"transformList", "transformMap", "transformMapEntry"})


def _macro_vars(method: str, args: list[Any]) -> int:
    """How many variables a comprehension macro call binds; 0 when it is no macro.

    One-variable macros take (x, expr) or, for map(), (x, filter, expr); the
    two-variable ones (ext.TwoVarComprehensions) take (k, v, expr) or, for the
    transforms, (k, v, filter, expr). optMap/optFlatMap take (x, expr).
    """
    n = len(args)
    if method in _MACROS_2VAR_ONLY:
        count = 2 if n in (3, 4) else 0
    elif method in ("all", "exists", "existsOne", "exists_one"):
        count = {2: 1, 3: 2}.get(n, 0)
    elif method == "map":
        count = 1 if n in (2, 3) else 0
    elif method in ("filter", "optMap", "optFlatMap"):
        count = 1 if n == 2 else 0
    else:
        return 0
    return count if count and all(_ident_name(a) for a in args[:count]) else 0


_DEVICE_MAPS = frozenset({"attributes", "capacity"})


def _string_literal(node: Any) -> str | None:
    """The value of a string literal node (through wrappers); None for anything else."""
    inner = _unwrap(node)
    if inner is None or inner.data != "literal":
        return None
    token = inner.children[0]
    if token.type not in ("STRING_LIT", "MLSTRING_LIT"):
        return None
    return _decode_string(str(token.value))[0]


def _device_path(node: Any) -> tuple[str, ...] | None:
    """The fixed path of ``device`` a member node reads, or None.

    ``("driver",)`` for ``device.driver``; ``("attributes", domain, name)`` for
    ``device.attributes["domain"].name`` or ``...["name"]``; the same with
    ``"capacity"``.
    """
    if node.data not in ("member_dot", "member_index") or len(node.children) != 2:
        return None
    receiver, key = node.children
    if node.data == "member_dot" and _ident_name(receiver) == "device":
        return ("driver",) if str(key.value) == "driver" else None
    name = str(key.value) if node.data == "member_dot" else _string_literal(key)
    inner = _unwrap(receiver)
    if name is None or inner is None or inner.data != "member_index":
        return None
    table, domain = inner.children
    table_inner = _unwrap(table)
    domain_name = _string_literal(domain)
    if (
        domain_name is None
        or table_inner is None
        or table_inner.data != "member_dot"
        or _ident_name(table_inner.children[0]) != "device"
        or str(table_inner.children[1].value) not in _DEVICE_MAPS
    ):
        return None
    return (str(table_inner.children[1].value), domain_name, name)


def _read_paths(tree: Any) -> tuple[tuple[str, ...], ...] | None:
    """The fixed paths an expression reads of ``device``; None when it reads it otherwise."""
    paths: set[tuple[str, ...]] = set()

    def walk(node: Any) -> bool:
        if not hasattr(node, "data"):
            return True
        path = _device_path(node)
        if path is not None:
            paths.add(path)
            return True
        if node.data == "ident" and str(node.children[0].value) == "device":
            return False
        return all(walk(child) for child in node.children)

    try:
        return tuple(sorted(paths)) if walk(tree) else None
    except RecursionError:
        return None
