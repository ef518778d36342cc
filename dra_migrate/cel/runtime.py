"""The Kubernetes CEL library functions for cel-python: semver and quantity, the
strings, sets and optional extensions, net.IP and net.CIDR, URLs, the format,
regex and lists libraries; :data:`FUNCTIONS` is what an evaluation activates.
Imported with cel-python, on the first evaluation.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError, base_functions

from dra_migrate.cel.environment import (
    _NUMERIC,
)
from dra_migrate.cel.formats import NAMED_FORMATS, FormatValue, cel_format, cel_quote
from dra_migrate.cel.operators import contains, eq, equals, err, kind, ne, ordering
from dra_migrate.cel.values import (
    CIDRValue,
    IPValue,
    OptionalValue,
    Quantity,
    SemVer,
    URLValue,
    _parse_ip,
    _regex,
    _snake,
    is_quantity,
    is_semver,
    parse_quantity,
)
from dra_migrate.k8s.names import INT64_MAX, INT64_MIN


# -- semver and quantity library --------------------------------------------
def semver(text: Any, normalize: Any = False) -> Any:
    if kind(text) != "string" or kind(normalize) != "bool":
        return err("no such overload: semver")
    try:
        return SemVer.parse(str(text), bool(normalize))
    except ValueError as exc:
        return err(str(exc))


def is_semver_fn(text: Any, normalize: Any = False) -> Any:
    if kind(text) != "string" or kind(normalize) != "bool":
        return err("no such overload: isSemver")
    return celtypes.BoolType(is_semver(str(text), bool(normalize)))


def quantity(text: Any) -> Any:
    if kind(text) != "string":
        return err(f"no such overload: quantity({kind(text)})")
    try:
        return parse_quantity(str(text))
    except ValueError as exc:
        return err(str(exc))


def is_quantity_fn(text: Any) -> Any:
    if kind(text) != "string":
        return err("no such overload: isQuantity")
    return celtypes.BoolType(is_quantity(str(text)))


def same_kind(name: str, a: Any, b: Any) -> Any:
    if isinstance(a, (SemVer, Quantity)) and type(a) is type(b):
        return None
    return err(f"no such overload: {kind(a)}.{name}({kind(b)})")


def compare_to(a: Any, b: Any) -> Any:
    return same_kind("compareTo", a, b) or celtypes.IntType(a.compare(b))


def is_greater(a: Any, b: Any) -> Any:
    return same_kind("isGreaterThan", a, b) or celtypes.BoolType(a.compare(b) > 0)


def is_less(a: Any, b: Any) -> Any:
    return same_kind("isLessThan", a, b) or celtypes.BoolType(a.compare(b) < 0)


def version_part(part: str) -> Callable[[Any], Any]:
    def get(v: Any) -> Any:
        if not isinstance(v, SemVer):
            return err(f"no such overload: {kind(v)}.{part}()")
        return celtypes.IntType(getattr(v, part))

    return get


def q_arith(name: str, sign: int) -> Callable[[Any, Any], Any]:
    def f(a: Any, b: Any) -> Any:
        if not isinstance(a, Quantity):
            return err(f"no such overload: {kind(a)}.{name}()")
        if isinstance(b, Quantity):
            other = b.value
        elif kind(b) == "int":
            other = Fraction(int(b))
        else:
            return err(f"no such overload: Quantity.{name}({kind(b)})")
        return Quantity(a.value + sign * other)

    return f


def q_mul(a: Any, b: Any) -> Any:
    if not isinstance(a, Quantity) or kind(b) != "int":
        return err("no such overload: mul")
    return Quantity(a.value * int(b))


def q_div(integer: bool) -> Callable[[Any, Any], Any]:
    def f(a: Any, b: Any) -> Any:
        name = "divInt" if integer else "div"
        if not isinstance(a, Quantity) or kind(b) != "int":
            return err(f"no such overload: {name}")
        if int(b) == 0:
            return err("division by zero")
        quotient = a.value / int(b)
        if integer:  # truncated toward zero, like Go's integer division
            quotient = Fraction(int(quotient))
        return Quantity(quotient)

    return f


def as_integer(a: Any) -> Any:
    if not isinstance(a, Quantity):
        return err(f"no such overload: {kind(a)}.asInteger()")
    if a.value.denominator != 1 or not INT64_MIN <= a.value <= INT64_MAX:
        return err("cannot convert value to integer")
    return celtypes.IntType(int(a.value))


def is_integer(a: Any) -> Any:
    if not isinstance(a, Quantity):
        return err(f"no such overload: {kind(a)}.isInteger()")
    return celtypes.BoolType(a.value.denominator == 1 and INT64_MIN <= a.value <= INT64_MAX)


def as_float(a: Any) -> Any:
    if not isinstance(a, Quantity):
        return err(f"no such overload: {kind(a)}.asApproximateFloat()")
    try:
        return celtypes.DoubleType(float(a.value))
    except OverflowError:
        return celtypes.DoubleType(math.inf if a.value > 0 else -math.inf)


def sign(a: Any) -> Any:
    if not isinstance(a, Quantity):
        return err(f"no such overload: sign({kind(a)})")
    return celtypes.IntType((a.value > 0) - (a.value < 0))


# -- strings extension (ext.Strings v2) -------------------------------------
def string_fn(
    name: str, fn: Callable[..., Any], result: Callable[[Any], Any]
) -> Callable[..., Any]:
    def f(s: Any, *args: Any) -> Any:
        if kind(s) != "string":
            return err(f"no such overload: {kind(s)}.{name}()")
        try:
            return result(fn(str(s), *args))
        except (TypeError, ValueError, IndexError) as exc:
            return err(f"{name}: {exc}")

    return f


def lower_ascii(s: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def upper_ascii(s: str) -> str:
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in s)


def replace(s: str, old: Any, new: Any, n: Any = -1) -> str:
    return s.replace(str(old), str(new), int(n))


def split(s: str, sep: Any, n: Any = -1) -> Any:
    n = int(n)
    if n == 0:
        return []
    parts = s.split(str(sep), n - 1) if n > 0 else s.split(str(sep))
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def index_of(s: Any, sub: Any, start: Any = 0) -> Any:
    if kind(s) == "list":
        for i, item in enumerate(s):
            if equals(item, sub) is True:
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    if kind(s) != "string":
        return err(f"no such overload: {kind(s)}.indexOf()")
    return celtypes.IntType(str(s).find(str(sub), int(start)))


def last_index_of(s: Any, sub: Any) -> Any:
    if kind(s) == "list":
        for i in range(len(s) - 1, -1, -1):
            if equals(s[i], sub) is True:
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    if kind(s) != "string":
        return err(f"no such overload: {kind(s)}.lastIndexOf()")
    return celtypes.IntType(str(s).rfind(str(sub)))


def substring(s: str, start: Any, end: Any = None) -> str:
    stop = len(s) if end is None else int(end)
    if not 0 <= int(start) <= stop <= len(s):
        raise IndexError(f"index out of range: {start}..{stop}")
    return s[int(start) : stop]


def char_at(s: str, i: Any) -> str:
    if not 0 <= int(i) <= len(s):
        raise IndexError(f"index out of range: {i}")
    return s[int(i) : int(i) + 1]


def join(items: Any, sep: Any = "") -> Any:
    if kind(items) != "list" or any(kind(i) != "string" for i in items):
        return err("no such overload: join")
    return celtypes.StringType(str(sep).join(str(i) for i in items))


as_str: Callable[[Any], Any] = celtypes.StringType
FUNCTIONS: dict[str, Any] = dict(base_functions)
FUNCTIONS.update(
    {
        "_==_": eq,
        "_in_": contains,
        "_!=_": ne,
        "_<_": ordering("<", lambda c: c < 0),
        "_<=_": ordering("<=", lambda c: c <= 0),
        "_>_": ordering(">", lambda c: c > 0),
        "_>=_": ordering(">=", lambda c: c >= 0),
        "semver": semver,
        "isSemver": is_semver_fn,
        "quantity": quantity,
        "isQuantity": is_quantity_fn,
        "compareTo": compare_to,
        "isGreaterThan": is_greater,
        "isLessThan": is_less,
        "major": version_part("major"),
        "minor": version_part("minor"),
        "patch": version_part("patch"),
        "add": q_arith("add", 1),
        "sub": q_arith("sub", -1),
        "mul": q_mul,
        "div": q_div(False),
        "divInt": q_div(True),
        "asInteger": as_integer,
        "isInteger": is_integer,
        "asApproximateFloat": as_float,
        "sign": sign,
        "lowerAscii": string_fn("lowerAscii", lower_ascii, as_str),
        "upperAscii": string_fn("upperAscii", upper_ascii, as_str),
        "trim": string_fn("trim", lambda s: s.strip(" \t\n\r\f\v"), as_str),
        "replace": string_fn("replace", replace, as_str),
        "split": string_fn("split", split, lambda v: v),
        "substring": string_fn("substring", substring, as_str),
        "charAt": string_fn("charAt", char_at, as_str),
        "indexOf": index_of,
        "lastIndexOf": last_index_of,
        "join": join,
    }
)


# -- sets extension (cel-go ext.Sets) ------------------------------------------
def set_contains(a: Any, b: Any) -> Any:
    return celtypes.BoolType(all(any(equals(x, y) is True for x in a) for y in b))


def set_intersects(a: Any, b: Any) -> Any:
    return celtypes.BoolType(any(equals(x, y) is True for x in a for y in b))


def set_equivalent(a: Any, b: Any) -> Any:
    return celtypes.BoolType(bool(set_contains(a, b)) and bool(set_contains(b, a)))


SET_FUNCTIONS: dict[str, Callable[[Any, Any], Any]] = {
    "contains": set_contains,
    "intersects": set_intersects,
    "equivalent": set_equivalent,
}


# -- optional values (cel-go OptionalTypes) ------------------------------------
def has_value(o: Any) -> Any:
    if not isinstance(o, OptionalValue):
        return err(f"no such overload: {kind(o)}.hasValue()")
    return celtypes.BoolType(o.present)


def optional_value(o: Any) -> Any:
    if not isinstance(o, OptionalValue):
        return err(f"no such overload: {kind(o)}.value()")
    return o.value if o.present else err("optional.none() dereference")


def or_value(o: Any, default: Any) -> Any:
    if not isinstance(o, OptionalValue):
        return err(f"no such overload: {kind(o)}.orValue()")
    return o.value if o.present else default


def optional_or(o: Any, other: Any) -> Any:
    if not isinstance(o, OptionalValue) or not isinstance(other, OptionalValue):
        return err(f"no such overload: {kind(o)}.or({kind(other)})")
    return o if o.present else other


def of_non_zero(v: Any) -> Any:
    zero = v is None or (not isinstance(v, (SemVer, Quantity, IPValue, CIDRValue)) and not v)
    return OptionalValue() if zero else OptionalValue(v)


# -- net.IP and net.CIDR (k8s.io/apiserver library.IP, library.CIDR) --------------
def to_ip(v: Any) -> Any:
    if isinstance(v, CIDRValue):  # cidr.ip()
        return IPValue(v.addr)
    if kind(v) != "string":
        return err(f"no such overload: ip({kind(v)})")
    try:
        return IPValue(_parse_ip(str(v)))
    except ValueError as exc:
        return err(str(exc))


def to_cidr(v: Any) -> Any:
    if kind(v) != "string":
        return err(f"no such overload: cidr({kind(v)})")
    try:
        return CIDRValue.parse(str(v))
    except ValueError as exc:
        return err(str(exc))


def predicate(name: str, accepts: type, test: Callable[..., Any]) -> Callable[..., Any]:
    def f(v: Any, *rest: Any) -> Any:
        if not isinstance(v, accepts):
            return err(f"no such overload: {kind(v)}.{name}()")
        return test(v, *rest)

    return f


def is_ip(v: Any) -> Any:
    if kind(v) != "string":
        return err(f"no such overload: isIP({kind(v)})")
    return celtypes.BoolType(not isinstance(to_ip(v), CELEvalError))


def is_cidr(v: Any) -> Any:
    if kind(v) != "string":
        return err(f"no such overload: isCIDR({kind(v)})")
    return celtypes.BoolType(not isinstance(to_cidr(v), CELEvalError))


def ip_is_canonical(v: Any) -> Any:
    if kind(v) != "string":
        return err(f"no such overload: ip.isCanonical({kind(v)})")
    ip = to_ip(v)
    return ip if isinstance(ip, CELEvalError) else celtypes.BoolType(str(ip) == str(v))


def contains_ip(c: CIDRValue, other: Any) -> Any:
    ip = to_ip(other) if kind(other) == "string" else other
    if isinstance(ip, CELEvalError) or not isinstance(ip, IPValue):
        return ip if isinstance(ip, CELEvalError) else err("no such overload: containsIP")
    return celtypes.BoolType(c.contains_ip(ip))


def contains_cidr(c: CIDRValue, other: Any) -> Any:
    net = to_cidr(other) if kind(other) == "string" else other
    if isinstance(net, CELEvalError) or not isinstance(net, CIDRValue):
        return net if isinstance(net, CELEvalError) else err("no such overload: containsCIDR")
    return celtypes.BoolType(c.contains_cidr(net))


base_string = base_functions["string"]


def to_string(v: Any) -> Any:
    if isinstance(v, (IPValue, CIDRValue)):
        return celtypes.StringType(str(v))
    if isinstance(v, URLValue):
        return celtypes.StringType(v.text)
    return base_string(v)


def ip_test(method: str) -> Callable[[Any], Any]:
    return predicate(method, IPValue, lambda v: celtypes.BoolType(getattr(v, _snake(method))()))


# -- strings extension: format, quote; regex library: find, findAll ------------------
def format_fn(template: Any, args: Any) -> Any:
    if kind(template) != "string" or kind(args) != "list":
        return err(f"no such overload: {kind(template)}.format({kind(args)})")
    try:
        return celtypes.StringType(cel_format(str(template), [plain(a) for a in args]))
    except ValueError as exc:
        return err(str(exc))


def plain(v: Any) -> Any:
    """A CEL value as the Python value it stands for (bool, int, float, str, ...)."""
    k = kind(v)
    if k == "bool":
        return bool(v)
    if k in ("int", "uint"):
        return int(v)
    if k == "double":
        return float(v)
    if k == "string":
        return str(v)
    if k == "bytes":
        return bytes(v)
    if k == "list":
        return [plain(x) for x in v]
    if k == "map":
        return {plain(key): plain(x) for key, x in v.items()}
    return v


def quote(text: Any) -> Any:
    if kind(text) != "string":
        return err(f"no such overload: strings.quote({kind(text)})")
    return celtypes.StringType(cel_quote(str(text)))


def regex_find(s: Any, pattern: Any, limit: Any = None) -> Any:
    if kind(s) != "string" or kind(pattern) != "string":
        return err(f"no such overload: {kind(s)}.find({kind(pattern)})")
    try:
        compiled = _regex(str(pattern))
    except ValueError as exc:
        return err(str(exc))
    if limit is None:
        m = compiled.search(str(s))
        return celtypes.StringType(m.group(0) if m else "")
    found = [m.group(0) for m in compiled.finditer(str(s))]
    n = int(limit)
    if n >= 0:
        found = found[:n]
    return celtypes.ListType([celtypes.StringType(f) for f in found])


def regex_matches(s: Any, pattern: Any) -> Any:
    if kind(s) != "string" or kind(pattern) != "string":
        return err(f"no such overload: {kind(s)}.matches({kind(pattern)})")
    try:
        return celtypes.BoolType(_regex(str(pattern)).search(str(s)) is not None)
    except ValueError as exc:
        return err(str(exc))


def regex_find_all(s: Any, pattern: Any, limit: Any = -1) -> Any:
    if kind(limit) != "int":
        return err("no such overload: findAll")
    return regex_find(s, pattern, limit)


# -- lists library (k8s.io/apiserver library.Lists) ---------------------------
def comparable_list(name: str, items: Any) -> Any:
    if kind(items) != "list":
        return err(f"no such overload: {kind(items)}.{name}()")
    kinds = {kind(i) for i in items}
    if len(kinds) > 1 and not kinds <= _NUMERIC:
        return err(f"no such overload: {name}() of mixed types")
    return None


def is_sorted(items: Any) -> Any:
    problem = comparable_list("isSorted", items)
    if problem is not None:
        return problem
    return celtypes.BoolType(all(items[i] <= items[i + 1] for i in range(len(items) - 1)))


def list_sum(items: Any) -> Any:
    problem = comparable_list("sum", items)
    if problem is not None:
        return problem
    if not items:
        return celtypes.IntType(0)
    total = items[0]
    for item in items[1:]:
        total = total + item
    return total


def list_extreme(name: str, pick: Callable[..., Any]) -> Callable[[Any], Any]:
    def f(items: Any) -> Any:
        problem = comparable_list(name, items)
        if problem is not None:
            return problem
        if not items:
            return err(f"{name}(list) argument must not be empty")
        return pick(items)

    return f


def to_url(v: Any) -> Any:
    if kind(v) != "string":
        return err(f"no such overload: url({kind(v)})")
    try:
        return URLValue.parse(str(v))
    except ValueError as exc:
        return err(str(exc))


def is_url(v: Any) -> Any:
    if kind(v) != "string":
        return err(f"no such overload: isURL({kind(v)})")
    return celtypes.BoolType(not isinstance(to_url(v), CELEvalError))


def url_part(name: str, get: Callable[[URLValue], Any]) -> Callable[[Any], Any]:
    return predicate(name, URLValue, lambda u: plain_to_cel(get(u)))


def plain_to_cel(v: Any) -> Any:
    if isinstance(v, str):
        return celtypes.StringType(v)
    if isinstance(v, dict):
        return celtypes.MapType({celtypes.StringType(k): plain_to_cel(x) for k, x in v.items()})
    if isinstance(v, list):
        return celtypes.ListType([plain_to_cel(x) for x in v])
    return v


def format_named(name: Any) -> Any:
    if kind(name) != "string":
        return err(f"no such overload: format.named({kind(name)})")
    return OptionalValue(FormatValue(str(name))) if str(name) in NAMED_FORMATS else OptionalValue()


def format_validate(f: Any, value: Any) -> Any:
    if not isinstance(f, FormatValue) or kind(value) != "string":
        return err(f"no such overload: {kind(f)}.validate({kind(value)})")
    problems = f.validate(str(value))
    if not problems:
        return OptionalValue()
    return OptionalValue(celtypes.ListType([celtypes.StringType(p) for p in problems]))


NAMESPACED: dict[str, Callable[..., Any]] = {
    "format.named": format_named,
    **{f"format.{name}": functools.partial(FormatValue, name) for name in NAMED_FORMATS},
    "optional.of": OptionalValue,
    "optional.none": OptionalValue,
    "optional.ofNonZeroValue": of_non_zero,
    "strings.quote": quote,
    "ip.isCanonical": ip_is_canonical,
}
LIBRARY_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "hasValue": has_value,
    "value": optional_value,
    "orValue": or_value,
    "or": optional_or,
    "ip": to_ip,
    "isIP": is_ip,
    "cidr": to_cidr,
    "isCIDR": is_cidr,
    "family": predicate("family", IPValue, lambda v: celtypes.IntType(v.family)),
    "isUnspecified": ip_test("isUnspecified"),
    "isLoopback": ip_test("isLoopback"),
    "isLinkLocalMulticast": ip_test("isLinkLocalMulticast"),
    "isLinkLocalUnicast": ip_test("isLinkLocalUnicast"),
    "isGlobalUnicast": ip_test("isGlobalUnicast"),
    "containsIP": predicate("containsIP", CIDRValue, contains_ip),
    "containsCIDR": predicate("containsCIDR", CIDRValue, contains_cidr),
    "masked": predicate("masked", CIDRValue, lambda c: c.masked()),
    "prefixLength": predicate("prefixLength", CIDRValue, lambda c: celtypes.IntType(c.bits)),
    "string": to_string,
    "url": to_url,
    "isURL": is_url,
    "validate": format_validate,
    "getScheme": url_part("getScheme", lambda u: u.scheme),
    "getHost": url_part("getHost", lambda u: u.host),
    "getHostname": url_part("getHostname", URLValue.hostname),
    "getPort": url_part("getPort", URLValue.port),
    "getEscapedPath": url_part("getEscapedPath", URLValue.escaped_path),
    "getQuery": url_part("getQuery", URLValue.query_map),
    "format": format_fn,
    "find": regex_find,
    "matches": regex_matches,
    "findAll": regex_find_all,
    "isSorted": is_sorted,
    "sum": list_sum,
    "max": list_extreme("max", max),
    "min": list_extreme("min", min),
}


FUNCTIONS.update(LIBRARY_FUNCTIONS)
