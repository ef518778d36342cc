"""Semantic versions and version ranges as Helm writes them (``>=1.56.0``,
``">=1.6.0-rc.0, <2"``): what a values recipe's ``versions`` say of a chart."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_SEMVER = re.compile(
    r"v?(?P<major>\d+)(?:\.(?P<minor>\d+))?(?:\.(?P<patch>\d+))?"
    r"(?:-(?P<pre>[0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?"
)
_CLAUSE = re.compile(r"\s*(>=|<=|!=|==|=|>|<)?\s*(v?\d[0-9A-Za-z.+-]*)\s*")
Version = tuple[int, int, int, tuple[tuple[int, int | str], ...]]


def parse_version(text: str) -> Version | None:
    """A semantic version (a leading ``v`` allowed, as Helm allows it), or None."""
    match = _SEMVER.fullmatch(text.strip())
    if match is None:
        return None
    pre: tuple[tuple[int, int | str], ...] = ()
    if match["pre"]:
        # semver 2.0.0, 11: numeric identifiers sort before alphanumeric ones, by value
        pre = tuple((0, int(p)) if p.isdigit() else (1, p) for p in match["pre"].split("."))
    return int(match["major"]), int(match["minor"] or 0), int(match["patch"] or 0), pre


def _order(version: Version) -> tuple[Any, ...]:
    major, minor, patch, pre = version
    # a release sorts after every pre-release of it
    return (major, minor, patch, 0 if pre else 1, pre)


def parse_constraint(text: str) -> list[tuple[str, Version]]:
    """``">=1.6.0-rc.0, <2"`` as (operator, version) clauses, all of which must hold."""
    clauses: list[tuple[str, Version]] = []
    for part in re.split(r"[,\s]+(?=[<>=!v\d])", text.strip()):
        match = _CLAUSE.fullmatch(part)
        version = parse_version(match[2]) if match else None
        if match is None or version is None:
            raise ValueError(f"not a version constraint: {text!r}")
        clauses.append((match[1] or "=", version))
    return clauses


_COMPARE: dict[str, Callable[[tuple[Any, ...], tuple[Any, ...]], bool]] = {
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    "=": lambda a, b: a == b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def satisfies(version: str, constraint: str) -> bool:
    """Does ``version`` meet every clause of ``constraint``? A version that is not
    semver meets none."""
    parsed = parse_version(version)
    if parsed is None:
        return False
    return all(
        _COMPARE[op](_order(parsed), _order(bound)) for op, bound in parse_constraint(constraint)
    )
