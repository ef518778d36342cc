"""Stage 2, load: plain scalars as Kubernetes reads them (YAML 1.1 as go-yaml v2
resolves it: ``yes`` is true, ``010`` is 8, ``1:20`` a string), the resolver the
composers tag scalars with, and a scalar node's value and quantity text."""

from __future__ import annotations

import math
import re

from yaml.nodes import ScalarNode, SequenceNode

from dra_migrate.k8s.names import INT64_MIN, UINT64_MAX

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

    from yaml.nodes import Node


_TAG = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL, MERGE = (
    _TAG + "str",
    _TAG + "int",
    _TAG + "float",
    _TAG + "bool",
    _TAG + "null",
    _TAG + "merge",
)
# go-yaml v2's resolve table (what sigs.k8s.io/yaml, and so Kubernetes, reads):
# YAML 1.1 booleans including y/n/on/off, no sexagesimal numbers, timestamps kept
# as strings when decoded into an interface (which is what YAML-to-JSON does).
_WORDS: dict[str, tuple[str, Any]] = {
    **{w: (BOOL, True) for w in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE")},
    **{w: (BOOL, True) for w in ("on", "On", "ON")},
    **{w: (BOOL, False) for w in ("n", "N", "no", "No", "NO", "false", "False", "FALSE")},
    **{w: (BOOL, False) for w in ("off", "Off", "OFF")},
    **{w: (NULL, None) for w in ("", "~", "null", "Null", "NULL")},
    **{w: (FLOAT, math.nan) for w in (".nan", ".NaN", ".NAN")},
    **{w: (FLOAT, math.inf) for w in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{w: (FLOAT, -math.inf) for w in ("-.inf", "-.Inf", "-.INF")},
    "<<": (MERGE, "<<"),
}
_HINTED = frozenset("+-.0123456789yYnNtTfFoO~<")
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_GO_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_GO_INT_DIGITS = 64  # the most digits a uint64 has, in base 2: longer is out of range


def _go_int(plain: str) -> int | None:
    """strconv.ParseInt(plain, 0, 64), then ParseUint: Go's base prefixes and a
    leading 0 for octal; None where Go would not read an integer."""
    if not _GO_INT.fullmatch(plain):
        return None
    sign = -1 if plain[0] == "-" else 1
    digits = plain.lstrip("+-")
    base = 10
    if len(digits) > 1 and digits[0] == "0":
        base = {"x": 16, "o": 8, "b": 2}.get(digits[1].lower(), 8)
        digits = digits[1:] if base == 8 and digits[1] not in "oO" else digits[2:]
    if len(digits.lstrip("0")) > _GO_INT_DIGITS:
        return None  # past uint64 in any base: never converted (int() is quadratic in digits)
    value = sign * int(digits, base)
    return value if INT64_MIN <= value <= UINT64_MAX else None


def resolve(text: str) -> tuple[str, Any]:
    """(tag, value) of a plain scalar as go-yaml v2 resolves it."""
    if not text or text[0] not in _HINTED:
        return (NULL, None) if not text else (STR, text)
    word = _WORDS.get(text)
    if word is not None:
        return word
    if text[0] == ".":
        return (FLOAT, float(text)) if _GO_FLOAT.fullmatch(text) else (STR, text)
    if text[0] in "+-0123456789":
        plain = text.replace("_", "")
        number = _go_int(plain)
        if number is not None:
            return INT, number
        if _GO_FLOAT.fullmatch(plain):
            return FLOAT, float(plain)
    return STR, text


class KubeResolver:
    """Tags plain scalars as Kubernetes' YAML reader would (see ``resolve``);
    quoted and block scalars are strings. Composition only: no Python objects."""

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            return resolve(value)[0] if implicit[0] else STR
        return _TAG + ("seq" if kind is SequenceNode else "map")

    def descend_resolver(self, parent: Any, index: Any) -> None:
        """No path-dependent resolvers here (the pure composer asks for them)."""

    def ascend_resolver(self) -> None:
        pass


def scalar_value(node: ScalarNode) -> Any:
    """A scalar's value: its text for strings, the number, boolean or null of its tag."""
    text: str = node.value
    tag = str(node.tag)
    if tag == STR or not tag.startswith(_TAG):
        return text
    resolved_tag, value = resolve(text)
    if resolved_tag == tag or (tag == FLOAT and resolved_tag == INT):
        return value
    return text  # an explicit tag the text does not fit (Kubernetes refuses it too)


def octal_surprise(node: Node) -> bool:
    """A plain ``010``: YAML 1.1 (and so Kubernetes) reads the octal number 8."""
    if not isinstance(node, ScalarNode) or node.tag != INT:
        return False
    digits = node.value.replace("_", "").lstrip("+-")
    return (
        len(digits) > 1 and digits[0] == "0" and digits[1].isdigit() and digits != "0" * len(digits)
    )


def quantity_text(node: Node | None) -> str | None:
    """The text of a resource quantity as the API server receives it: a plain
    ``010`` reaches it as the JSON number 8 (YAML 1.1 octal), ``0x2`` as 2,
    ``1e3`` as 1000, while a quoted ``"010"`` stays the string 010 (that is,
    10). None for what no quantity can be (booleans, null, infinities,
    collections)."""
    if not isinstance(node, ScalarNode):
        return None
    value = scalar_value(node)
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return None
    if math.isinf(value):  # 1e400: the text says how large (Kubernetes cannot encode it)
        return str(node.value).replace("_", "")
    if value.is_integer() and abs(value) < 1e21:  # Go's encoding/json: no exponent here
        return str(int(value))
    return repr(value)
