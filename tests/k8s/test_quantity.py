"""Kubernetes quantities: the GPU counts of the device plugin are quantities too."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dra_migrate.k8s.quantity import parse_quantity, whole_count


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2", 2),
        ("+2", 2),
        ("2.0", 2),
        ("500m", Fraction(1, 2)),
        ("1k", 1000),
        ("1E", 10**18),
        ("1Ei", 2**60),
        ("4Gi", 4 * 2**30),
        ("2e3", 2000),
        ("2E-2", Fraction(2, 100)),
        (".5", Fraction(1, 2)),
    ],
)
def test_values(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "two", "1,5", "200K", "Mi", " 1", "1 ", "1e99999", "0x10"])
def test_rejected(text: str) -> None:
    assert parse_quantity(text) is None


@pytest.mark.parametrize(
    ("text", "count"),
    [("2", 2), ("0", 0), ("1k", 1000), ("500m", None), ("-1", None), ("1.5", None)],
)
def test_whole_counts(text: str, count: int | None) -> None:
    assert whole_count(text) == count


@given(st.integers(min_value=0, max_value=10**6))
def test_integers_round_trip(n: int) -> None:
    assert whole_count(str(n)) == n
    assert whole_count(f"{n}000m") == n


@pytest.mark.parametrize(
    ("text", "above"),
    [
        ("0.93e+19", True),  # 9.3 * 10**18: no integer digit, yet above INT64_MAX
        ("0.1e20", True),
        (".95E19", True),
        ("0.093e+20", True),
        (".5e19", False),
        ("0.01e20", False),
        ("0.0e30", False),
        ("9.3e18", True),
        ("-0.93e+19", False),
    ],
)
def test_too_large_without_integer_digits(text: str, above: bool) -> None:
    """hypothesis found it: a number of no integer digit was never too large."""
    from dra_migrate.k8s.quantity import INT64_MAX, too_large

    assert too_large(text) is above
    value = parse_quantity(text)
    assert value is not None and (value > INT64_MAX) is above
