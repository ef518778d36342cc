"""Equality, ordering and membership as cel-go has them, over cel-python values:
heterogeneous ``==`` is false, a version or Quantity on the left compared with
anything else is a "no such overload" error. Imported with cel-python, on the
first evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

from dra_migrate.cel.environment import (
    _NUMERIC,
)
from dra_migrate.cel.formats import FormatValue
from dra_migrate.cel.values import (
    CIDRValue,
    IPValue,
    OptionalValue,
    Quantity,
    SemVer,
    URLValue,
)


def err(message: str) -> Any:
    return CELEvalError(message)


def kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, celtypes.BoolType):
        return "bool"
    if isinstance(v, celtypes.UintType):
        return "uint"
    if isinstance(v, celtypes.IntType):
        return "int"
    if isinstance(v, (celtypes.DoubleType, float)):
        return "double"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, (celtypes.StringType, str)):
        return "string"
    if isinstance(v, (celtypes.BytesType, bytes)):
        return "bytes"
    if isinstance(v, (celtypes.ListType, list)):
        return "list"
    if isinstance(v, (celtypes.MapType, dict)):
        return "map"
    if isinstance(v, SemVer):
        return "kubernetes.Semver"
    if isinstance(v, Quantity):
        return "kubernetes.Quantity"
    if isinstance(v, OptionalValue):
        return "optional_type"
    if isinstance(v, IPValue):
        return "net.IP"
    if isinstance(v, CIDRValue):
        return "net.CIDR"
    if isinstance(v, URLValue):
        return "kubernetes.URL"
    if isinstance(v, FormatValue):
        return "kubernetes.NamedFormat"
    return type(v).__name__


def number(v: Any) -> Fraction | float:
    if isinstance(v, float) and not math.isfinite(v):
        return v
    return Fraction(v)


def equals(a: Any, b: Any) -> Any:
    """cel-go's a.Equal(b): True/False, or an error value."""
    if isinstance(a, (SemVer, Quantity, IPValue, CIDRValue, URLValue, FormatValue)):
        if type(a) is type(b):
            return a == b
        return err(f"no such overload: {kind(a)} == {kind(b)}")
    if isinstance(b, (SemVer, Quantity, IPValue, CIDRValue, URLValue, FormatValue)):
        return False
    if isinstance(a, OptionalValue) or isinstance(b, OptionalValue):
        if type(a) is not type(b):
            return False
        if not (a.present and b.present):
            return a.present == b.present
        return equals(a.value, b.value)
    ka, kb = kind(a), kind(b)
    if ka == "null" or kb == "null":
        return ka == kb
    if ka in _NUMERIC and kb in _NUMERIC:
        return bool(number(a) == number(b))
    if ka != kb:
        return False
    if ka == "list":
        if len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=True):
            r = equals(x, y)
            if r is not True:
                return r
        return True
    if ka == "map":
        if set(a.keys()) != set(b.keys()):
            return False
        for key in a:
            r = equals(a[key], b[key])
            if r is not True:
                return r
        return True
    return bool(a == b)


def eq(a: Any, b: Any) -> Any:
    for v in (a, b):
        if isinstance(v, CELEvalError):
            return v
    r = equals(a, b)
    return r if isinstance(r, CELEvalError) else celtypes.BoolType(r)


def ne(a: Any, b: Any) -> Any:
    r = eq(a, b)
    return r if isinstance(r, CELEvalError) else celtypes.BoolType(not r)


def ordering(symbol: str, test: Callable[[int], bool]) -> Callable[[Any, Any], Any]:
    def compare(a: Any, b: Any) -> Any:
        for v in (a, b):
            if isinstance(v, CELEvalError):
                return v
        ka, kb = kind(a), kind(b)
        if ka in _NUMERIC and kb in _NUMERIC:  # cross-type numeric comparisons (K8s ≥1.28)
            x, y = number(a), number(b)
            if (isinstance(x, float) and math.isnan(x)) or (isinstance(y, float) and math.isnan(y)):
                return celtypes.BoolType(False)
            return celtypes.BoolType(test((x > y) - (x < y)))
        if (ka == kb and ka in ("string", "bytes", "bool")) or (
            ka == kb and isinstance(a, (celtypes.TimestampType, celtypes.DurationType))
        ):
            return celtypes.BoolType(test((a > b) - (a < b)))
        return err(f"no such overload: {ka} {symbol} {kb}")

    return compare


def contains(item: Any, container: Any) -> Any:
    """``item in container`` as cel-go has it: heterogeneous elements are unequal."""
    for v in (item, container):
        if isinstance(v, CELEvalError):
            return v
    if kind(container) == "list":
        return celtypes.BoolType(any(equals(item, c) is True for c in container))
    if kind(container) == "map":
        return celtypes.BoolType(any(equals(item, k) is True for k in container))
    return err(f"no such overload: {kind(item)} in {kind(container)}")
