"""What the Kubernetes CEL environment declares, as the static checker reads it: the
global, member and namespaced functions, the result types of methods by receiver,
the macros, and :class:`_T`, what the checker knows of a sub-expression.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dra_migrate.cel.formats import NAMED_FORMATS


@dataclass(frozen=True, slots=True)
class _T:
    """What the checker knows about a sub-expression."""

    kind: str  # bool int uint double string bytes null list map semver quantity dyn
    # device attrs caps attr_map cap_map type
    start: int = 0
    end: int = 0
    domain: str | None = None  # attr_map / cap_map, and attribute / capacity values
    name: str | None = None  # attribute / capacity name of a value
    origin: str = ""  # "attribute", "capacity", "driver", "literal", "call"
    literal: Any = None  # value of a literal; tuple of values for a list of literals
    values: tuple[str, ...] = ()  # known values of an attribute
    at: int = -1  # where to point at it: the first character inside a string literal
    parts: tuple[int, ...] = ()  # a list of literals: where each one's text starts
    fold: str = ""  # an attribute's string made "lower" or "upper" case (lowerAscii())

    @property
    def offset(self) -> int:
        return self.at if self.at >= 0 else self.start

    @property
    def is_literal(self) -> bool:
        return self.origin == "literal"


_DYN = "dyn"
_NUMERIC = frozenset({"int", "uint", "double"})
_SCALAR = frozenset({"bool", "int", "uint", "double", "string", "bytes", "null"})
_NOT_BOOL = frozenset(
    {
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "null",
        "list",
        "map",
        "semver",
        "quantity",
        "type",
        "device",
    }
)
_ATTR_KIND = {"string": "string", "int": "int", "bool": "bool", "version": "semver"}
_TYPE_NAMES = frozenset(
    {"int", "uint", "double", "string", "bytes", "bool", "list", "map", "null_type", "type", "dyn"}
)
_NAMESPACES = frozenset(
    {"cel", "sets", "optional", "strings", "math", "base64", "format", "lists", "regex", "ip"}
)
_MACROS_1VAR = frozenset({"all", "exists", "exists_one", "existsOne", "map", "filter"})
_MACROS_2VAR = frozenset(
    {"all", "exists", "existsOne", "transformList", "transformMap", "transformMapEntry"}
)

# Global functions of the Kubernetes CEL base environment plus the DRA additions.
_GLOBAL_FUNCTIONS = frozenset(
    [
        "has",
        "size",
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "bool",
        "dyn",
        "type",
        "duration",
        "timestamp",
        "matches",
        "semver",
        "isSemver",
        "quantity",
        "isQuantity",
        "url",
        "isURL",
        "ip",
        "isIP",
        "cidr",
        "isCIDR",
    ]
)
# Receiver-style functions (x.f(...)) of the same environment.
_MEMBER_FUNCTIONS = frozenset(
    [
        "size",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "all",
        "exists",
        "exists_one",
        "existsOne",
        "map",
        "filter",
        "transformList",
        "transformMap",
        "transformMapEntry",
        "getDate",
        "getDayOfMonth",
        "getDayOfWeek",
        "getDayOfYear",
        "getFullYear",
        "getHours",
        "getMilliseconds",
        "getMinutes",
        "getMonth",
        "getSeconds",
        "charAt",
        "indexOf",
        "lastIndexOf",
        "lowerAscii",
        "upperAscii",
        "replace",
        "split",
        "substring",
        "trim",
        "join",
        "format",
        "quote",
        "isSorted",
        "sum",
        "min",
        "max",
        "find",
        "findAll",
        "getScheme",
        "getHost",
        "getHostname",
        "getPort",
        "getEscapedPath",
        "getQuery",
        "sign",
        "isGreaterThan",
        "isLessThan",
        "compareTo",
        "asApproximateFloat",
        "asInteger",
        "isInteger",
        "add",
        "sub",
        "mul",
        "div",
        "divInt",
        "major",
        "minor",
        "patch",
        "family",
        "isUnspecified",
        "isLoopback",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "isGlobalUnicast",
        "isCanonical",
        "containsIP",
        "containsCIDR",
        "masked",
        "prefixLength",
        "ip",
        "hasValue",
        "value",
        "orValue",
        "or",
        "optMap",
        "optFlatMap",
        "validate",
    ]
)
# Names people try that the environment spells differently.
_FUNCTION_ALIASES = {
    "lower": "lowerAscii",
    "lowercase": "lowerAscii",
    "toLower": "lowerAscii",
    "toLowerCase": "lowerAscii",
    "upper": "upperAscii",
    "uppercase": "upperAscii",
    "toUpper": "upperAscii",
    "toUpperCase": "upperAscii",
    "greaterThan": "isGreaterThan",
    "lessThan": "isLessThan",
    "compare": "compareTo",
    "regex": "matches",
    "match": "matches",
    "startswith": "startsWith",
    "endswith": "endsWith",
    "length": "size",
    "len": "size",
    "version": "semver",
}
_STRING_METHODS = {
    "size": "int",
    "contains": "bool",
    "startsWith": "bool",
    "endsWith": "bool",
    "matches": "bool",
    "charAt": "string",
    "indexOf": "int",
    "lastIndexOf": "int",
    "lowerAscii": "string",
    "upperAscii": "string",
    "replace": "string",
    "split": "list",
    "substring": "string",
    "trim": "string",
    "format": "string",
    "find": "string",
    "findAll": "list",
}
_SEMVER_METHODS = {
    "isGreaterThan": "bool",
    "isLessThan": "bool",
    "compareTo": "int",
    "major": "int",
    "minor": "int",
    "patch": "int",
}
_QUANTITY_METHODS = {
    "isGreaterThan": "bool",
    "isLessThan": "bool",
    "compareTo": "int",
    "add": "quantity",
    "sub": "quantity",
    "mul": "quantity",
    "div": "quantity",
    "divInt": "quantity",
    "asInteger": "int",
    "asApproximateFloat": "double",
    "isInteger": "bool",
    "sign": "int",
}
_COMPARE_OPS = {
    "relation_eq": "==",
    "relation_ne": "!=",
    "relation_lt": "<",
    "relation_le": "<=",
    "relation_gt": ">",
    "relation_ge": ">=",
    "relation_in": "in",
}
_MIRROR = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _cel_str(text: str) -> str:
    """A CEL string literal for ``text`` (single quotes, as the corpus mostly uses)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# Global functions whose first argument is a string (Kubernetes CEL libraries).
_STRING_FUNCTIONS = frozenset(
    {"semver", "isSemver", "quantity", "isQuantity", "url", "isURL", "ip", "isIP", "cidr", "isCIDR"}
)


def _literal_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _cel_type(t: _T) -> str:
    """cel-go's name of a checked type."""
    names = {
        "semver": "kubernetes.Semver",
        "quantity": "kubernetes.Quantity",
        "ip": "net.IP",
        "cidr": "net.CIDR",
    }
    return names.get(t.kind, t.kind)


def _kind_text(t: _T) -> str:
    return {
        "semver": "a version",
        "quantity": "a Quantity",
        "string": "a string",
        "int": "an int",
        "uint": "a uint",
        "double": "a double",
        "bool": "a bool",
        "bytes": "bytes",
        "null": "null",
        "list": "a list",
        "map": "a map",
        "type": "a type",
        "ip": "an IP address (net.IP)",
        "cidr": "a CIDR (net.CIDR)",
        "device": "the device object",
    }.get(t.kind, t.kind)


def _compatible(attr_kind: str, literal_kind: str) -> bool:
    if literal_kind in (_DYN, "null"):
        return literal_kind == _DYN
    if attr_kind == "int":
        return literal_kind in _NUMERIC
    return attr_kind == literal_kind


def _literal_hint(attr_kind: str, literal: _T) -> str:
    value = literal.literal
    if attr_kind == "string":
        return f"compare with a string: {_cel_str(str(value).lower() if isinstance(value, bool) else str(value))}"
    if attr_kind == "int" and isinstance(value, str) and value.lstrip("-").isdigit():
        return f"compare with a number: {int(value)}"
    if attr_kind == "bool" and isinstance(value, str) and value.lower() in ("true", "false"):
        return f"compare with {value.lower()} (no quotes)"
    return ""


# Functions called on a namespace, with their result kind for the checker.
_NAMESPACE_FUNCTIONS = {
    "cel.bind": _DYN,
    "sets.contains": "bool",
    "sets.intersects": "bool",
    "sets.equivalent": "bool",
    "optional.of": _DYN,
    "optional.none": _DYN,
    "optional.ofNonZeroValue": _DYN,
    "strings.quote": "string",
    "ip.isCanonical": "bool",
    "format.named": _DYN,
    **{f"format.{name}": _DYN for name in NAMED_FORMATS},
}
