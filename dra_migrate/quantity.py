"""Kubernetes resource quantities (``2``, ``"2"``, ``500m``, ``1k``, ``1e3``, ``4Gi``) as exact fractions."""

from __future__ import annotations

from dra_migrate import lazyre

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)
if TYPE_CHECKING:
    from fractions import Fraction

_QUANTITY = lazyre.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?"
)
_SUFFIX = {  # the value of each suffix, as (numerator, denominator)
    "": (1, 1),
    "n": (1, 10**9),
    "u": (1, 10**6),
    "m": (1, 1000),
    "k": (10**3, 1),
    "M": (10**6, 1),
    "G": (10**9, 1),
    "T": (10**12, 1),
    "P": (10**15, 1),
    "E": (10**18, 1),
    "Ki": (2**10, 1),
    "Mi": (2**20, 1),
    "Gi": (2**30, 1),
    "Ti": (2**40, 1),
    "Pi": (2**50, 1),
    "Ei": (2**60, 1),
}


INT64_MAX = 2**63 - 1  # the largest count the API server stores (int64)
_MAX_EXPONENT = 1000  # keeps Fraction arithmetic bounded; real values are far smaller


def parse_quantity(text: str) -> Fraction | None:
    """The exact value of a quantity string, or None when Kubernetes would reject it
    (``200K``, ``Mi``, ``1,5G``, spaces)."""
    from fractions import Fraction  # a few milliseconds to import: not for plain counts

    match = _QUANTITY.fullmatch(text)
    if match is None:
        return None
    number = Fraction(match.group("number"))
    suffix = match.group("suffix") or ""
    if suffix in _SUFFIX:  # "E" and "Ei" are suffixes, "E3" an exponent
        return number * Fraction(*_SUFFIX[suffix])
    exponent = int(suffix[1:])
    return None if abs(exponent) > _MAX_EXPONENT else number * Fraction(10) ** exponent


def equal(a: str, b: str) -> bool:
    """Whether both quantities are valid and of one value (``1`` and ``1000m``)."""
    if a.isascii() and a.isdigit() and b.isascii() and b.isdigit():
        return int(a) == int(b)
    value = parse_quantity(a)
    return value is not None and value == parse_quantity(b)


def whole_count(text: str) -> int | None:
    """A device count: a quantity with a whole, non-negative value; None otherwise."""
    if text.isascii() and text.isdigit():  # the usual "2" (a quantity "010" is 10)
        return int(text)
    value = parse_quantity(text)
    if value is None or value < 0 or value.denominator != 1:
        return None
    return int(value)
