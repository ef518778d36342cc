"""Kubernetes resource quantities (``2``, ``"2"``, ``500m``, ``1k``, ``1e3``, ``4Gi``) as exact fractions."""

from __future__ import annotations

import re

from dra_migrate.k8s.names import INT64_MAX

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from fractions import Fraction

_QUANTITY = re.compile(
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


_MAX_EXPONENT = 1000  # keeps Fraction arithmetic bounded; real values are far smaller
# Significant digits of a quantity's number that are read exactly. Kubernetes keeps at
# most an int64 at nano precision (28 digits); a longer number is refused here rather
# than converted, as converting text to int is quadratic in its length.
MAX_DIGITS = 100
_DECIMAL_EXPONENT = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def _digits(number: str) -> tuple[int, str, str]:
    """Sign, integer digits without leading zeros, fraction digits without trailing zeros."""
    sign = -1 if number[0] == "-" else 1
    whole, _, fraction = number.lstrip("+-").partition(".")
    return sign, whole.lstrip("0"), fraction.rstrip("0")


def parse_quantity(text: str) -> Fraction | None:
    """The exact value of a quantity string, or None when Kubernetes would reject it
    (``200K``, ``Mi``, ``1,5G``, spaces) or it has more than ``MAX_DIGITS``
    significant digits (see ``too_large``)."""
    from fractions import Fraction  # a few milliseconds to import: not for plain counts

    match = _QUANTITY.fullmatch(text)
    if match is None:
        return None
    sign, whole, fraction = _digits(match.group("number"))
    if len(whole) + len(fraction) > MAX_DIGITS:
        return None
    number = Fraction(sign * int(whole + fraction or "0"), 10 ** len(fraction))
    suffix = match.group("suffix") or ""
    if suffix in _SUFFIX:  # "E" and "Ei" are suffixes, "E3" an exponent
        return number * Fraction(*_SUFFIX[suffix])
    exponent = _exponent(suffix)
    return None if abs(exponent) > _MAX_EXPONENT else number * Fraction(10) ** exponent


def _exponent(suffix: str) -> int:
    """The power of ten of a suffix (binary ones count 0: they only make a value larger);
    an exponent of more than 18 digits counts as 10**18."""
    if suffix in _SUFFIX:
        return _DECIMAL_EXPONENT.get(suffix, 0)
    digits = suffix[1:].lstrip("+-").lstrip("0") or "0"
    magnitude = int(digits) if len(digits) <= 18 else 10**18
    return -magnitude if suffix[1] == "-" else magnitude


def too_large(text: str) -> bool:
    """A quantity of a value above ``INT64_MAX``, also one too long for ``parse_quantity``:
    judged from the number of its integer digits and its suffix, without converting
    them, and exactly where ``parse_quantity`` reads it. (A number of more than
    ``MAX_DIGITS`` digits below 10**19 is not a count either way: it has a fraction.)"""
    match = _QUANTITY.fullmatch(text)
    if match is None:
        return False
    sign, whole, fraction = _digits(match.group("number"))
    if sign < 0 or not (whole or fraction.strip("0")):
        return False
    exponent = _exponent(match.group("suffix") or "")
    # the power of ten of the first significant digit: 0.93e+19 is 9.3 * 10**18
    first = len(whole) - 1 if whole else -(len(fraction) - len(fraction.lstrip("0")) + 1)
    if first + exponent >= 19:  # at least 10**19, above INT64_MAX
        return True
    value = parse_quantity(text)
    return value is not None and value > INT64_MAX


def equal(a: str, b: str) -> bool:
    """Whether both quantities are valid and of one value (``1`` and ``1000m``)."""
    if a == b:
        return parse_quantity(a) is not None or too_large(a)
    if a.isascii() and a.isdigit() and b.isascii() and b.isdigit() and max(len(a), len(b)) <= 19:
        return int(a) == int(b)
    value = parse_quantity(a)
    return value is not None and value == parse_quantity(b)


def whole_count(text: str) -> int | None:
    """A device count: a quantity with a whole, non-negative value; None otherwise."""
    if text.isascii() and text.isdigit() and len(text) <= 19:  # the usual "2" ("010" is 10)
        return int(text)
    value = parse_quantity(text)
    if value is None or value < 0 or value.denominator != 1:
        return None
    return int(value)


MAX_MILLI = INT64_MAX // 1000  # resource.MaxMilliValue: the largest milli-value int64 holds


def whole_milli(value: Fraction) -> bool:
    """Whether ``value`` is a whole number of milli-units that int64 holds."""
    thousandths = value * 1000
    return thousandths.denominator == 1 and abs(value) <= MAX_MILLI


def rounded_up(value: Fraction) -> int:
    """resource.Quantity.Value(): rounded up, away from zero."""
    return -((-value.numerator) // value.denominator) if value >= 0 else -rounded_up(-value)
