"""The number rules have one home: the int64 bounds in k8s/names.py, the milli-value
rules of resource.Quantity in k8s/quantity.py; no other module spells them again."""

from __future__ import annotations

import ast
from fractions import Fraction
from pathlib import Path

from dra_migrate.k8s import quantity
from dra_migrate.k8s.names import INT64_MAX, INT64_MIN, UINT64_MAX

PACKAGE = Path(__file__).resolve().parents[2] / "dra_migrate"
HOME = PACKAGE / "k8s" / "names.py"
BOUNDS = {INT64_MAX, -INT64_MIN, UINT64_MAX, INT64_MAX // 1000, 2**64}


def _spelled_bounds(tree: ast.AST) -> list[int]:
    """Line numbers of ``2**63``-like powers and int64 literals written out."""
    return [node.lineno for node in ast.walk(tree) if _power(node) or _literal(node)]


def _power(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Pow)
        and isinstance(node.left, ast.Constant)
        and node.left.value == 2
        and isinstance(node.right, ast.Constant)
        and node.right.value in (31, 32, 63, 64)
    )


def _literal(node: ast.AST) -> bool:
    if not isinstance(node, ast.Constant):
        return False
    if isinstance(node.value, int):
        return node.value in BOUNDS
    return isinstance(node.value, str) and any(
        str(bound) in node.value for bound in (INT64_MAX, UINT64_MAX)
    )


def test_no_module_but_names_spells_the_int64_bounds() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(PACKAGE)}:{line}" for line in _spelled_bounds(tree)]
    assert not found, f"import the bounds from dra_migrate/k8s/names.py: {found}"


def test_milli_values_as_the_api_server_keeps_them() -> None:
    assert quantity.MAX_MILLI == 9223372036854775  # resource.MaxMilliValue
    assert quantity.whole_milli(Fraction(1, 1000))
    assert not quantity.whole_milli(Fraction(1, 10000))
    assert quantity.whole_milli(Fraction(quantity.MAX_MILLI))
    assert not quantity.whole_milli(Fraction(quantity.MAX_MILLI + 1))


def test_rounded_up_away_from_zero() -> None:
    assert quantity.rounded_up(Fraction(3, 2)) == 2
    assert quantity.rounded_up(Fraction(-3, 2)) == -2
    assert quantity.rounded_up(Fraction(4)) == 4
