"""Kubernetes resource quantities (``2``, ``"2"``, ``500m``, ``1k``, ``1e3``, ``4Gi``) as exact fractions."""

from __future__ import annotations

import re
from fractions import Fraction

_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?"
)
_SUFFIX = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}


INT64_MAX = 2**63 - 1  # the largest count the API server stores (int64)
_MAX_EXPONENT = 1000  # keeps Fraction arithmetic bounded; real values are far smaller


def parse_quantity(text: str) -> Fraction | None:
    """The exact value of a quantity string, or None when Kubernetes would reject it
    (``200K``, ``Mi``, ``1,5G``, spaces)."""
    match = _QUANTITY.fullmatch(text)
    if match is None:
        return None
    number = Fraction(match.group("number"))
    suffix = match.group("suffix") or ""
    if suffix in _SUFFIX:  # "E" and "Ei" are suffixes, "E3" an exponent
        return number * _SUFFIX[suffix]
    exponent = int(suffix[1:])
    return None if abs(exponent) > _MAX_EXPONENT else number * Fraction(10) ** exponent


def whole_count(text: str) -> int | None:
    """A device count: a quantity with a whole, non-negative value; None otherwise."""
    value = parse_quantity(text)
    if value is None or value < 0 or value.denominator != 1:
        return None
    return int(value)
