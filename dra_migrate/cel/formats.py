"""The Kubernetes format library (``format.dns1123Label()``, ``<Format>.validate(s)``)
and the strings extension's ``format()`` and ``strings.quote()``, with cel-go's wording.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dra_migrate.cel.parse import _ESCAPES
from dra_migrate.cel.values import (
    URLValue,
    _go_quote,
)
from dra_migrate.k8s.names import DNS_LABEL, DNS_SUBDOMAIN

# --------------------------------------------------------------------------
# The Kubernetes format library (k8s.io/apiserver library.Format, since 1.31):
# format.<name>() and format.named(name), <Format>.validate(s) -> ?list<string>

_EXAMPLES = "(e.g. {}, regex used for validation is '{}')"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _QUALIFIED_NAME + ")?"
_UUID = re.compile(
    r"(?i)(^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$)|(^[0-9a-f]{32}$)"
)


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's validation.RegexError wording."""
    shown = ",  or ".join(f"'{e}'" for e in examples)
    return f"{message} {_EXAMPLES.format(shown, pattern)}"


@dataclass(frozen=True, slots=True)
class _RegexFormat:
    """A format that is a regular expression and a length limit (apimachinery)."""

    pattern: str
    limit: int
    message: str
    examples: tuple[str, ...]

    def __call__(self, value: str) -> list[str]:
        errors = []
        if len(value) > self.limit:
            errors.append(f"must be no more than {self.limit} characters")
        if not re.fullmatch(self.pattern, value):
            errors.append(_regex_error(self.message, self.pattern, *self.examples))
        return errors


_QUALIFIED_NAME_MESSAGE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character"
)
_QUALIFIED_NAME_EXAMPLES = ("MyName", "my.name", "123-abc")
_DNS1123_LABEL_FORMAT = _RegexFormat(
    DNS_LABEL.pattern,
    63,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
    "'-', and must start and end with an alphanumeric character",
    ("my-name", "123-abc"),
)
_DNS1123_SUBDOMAIN_FORMAT = _RegexFormat(
    DNS_SUBDOMAIN.pattern,
    253,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character",
    ("example.com",),
)
_DNS1035_LABEL_FORMAT = _RegexFormat(
    _DNS1035_LABEL,
    63,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
    "with an alphabetic character, and end with an alphanumeric character",
    ("my-name", "abc-123"),
)
_LABEL_VALUE_FORMAT = _RegexFormat(
    _LABEL_VALUE,
    63,
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character",
    ("MyValue", "my_value", "12345"),
)


def _qualified_name(value: str) -> list[str]:
    parts = value.split("/")
    if len(parts) > 2:
        return [
            _regex_error(
                "a qualified name " + _QUALIFIED_NAME_MESSAGE,
                _QUALIFIED_NAME,
                *_QUALIFIED_NAME_EXAMPLES,
            )
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    errors = []
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errors.append("prefix part must be non-empty")
        else:
            errors += ["prefix part " + e for e in _DNS1123_SUBDOMAIN_FORMAT(parts[0])]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if name and not re.fullmatch(_QUALIFIED_NAME, name):
        errors.append(
            _regex_error(
                "name part " + _QUALIFIED_NAME_MESSAGE, _QUALIFIED_NAME, *_QUALIFIED_NAME_EXAMPLES
            )
        )
    return errors


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """apimachinery's NameIs...(name, prefix=true): a trailing dash is masked first."""

    def f(value: str) -> list[str]:
        if len(value) > 1 and value.endswith("-"):
            value = value[:-2] + "a"
        return check(value)

    return f


def _uri(value: str) -> list[str]:
    try:
        URLValue.parse(value)
    except ValueError as exc:
        return [str(exc).replace("URL parse error during conversion from string: ", "")]
    return []


def _byte(value: str) -> list[str]:
    import base64
    import binascii

    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return ["invalid base64"]
    return []


def _date(value: str) -> list[str]:
    import datetime

    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            raise ValueError(value)
        datetime.date.fromisoformat(value)
    except ValueError:
        return ["invalid date"]
    return []


def _datetime(value: str) -> list[str]:
    import datetime

    m = re.fullmatch(
        r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", value
    )
    try:
        if m is None:
            raise ValueError(value)
        zone = "+00:00" if m.group(4) in ("Z", "z") else m.group(4)
        datetime.datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}{zone}")
    except ValueError:
        return ["invalid datetime"]
    return []


def _uuid(value: str) -> list[str]:
    return [] if _UUID.search(value) else ["does not match the UUID format"]


NAMED_FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": _DNS1123_LABEL_FORMAT,
    "dns1123Subdomain": _DNS1123_SUBDOMAIN_FORMAT,
    "dns1035Label": _DNS1035_LABEL_FORMAT,
    "qualifiedName": _qualified_name,
    "dns1123LabelPrefix": _prefix(_DNS1123_LABEL_FORMAT),
    "dns1123SubdomainPrefix": _prefix(_DNS1123_SUBDOMAIN_FORMAT),
    "dns1035LabelPrefix": _prefix(_DNS1035_LABEL_FORMAT),
    "labelValue": _LABEL_VALUE_FORMAT,
    "uri": _uri,
    "uuid": _uuid,
    "byte": _byte,
    "date": _date,
    "datetime": _datetime,
}


@dataclass(frozen=True, slots=True)
class FormatValue:
    """A ``kubernetes.NamedFormat`` value."""

    name: str

    def validate(self, value: str) -> list[str]:
        return NAMED_FORMATS[self.name](value)

    def __str__(self) -> str:
        return f"format.{self.name}()"


# --------------------------------------------------------------------------
# cel-go's strings extension format() (ext.Strings version 2)


_FORMAT_CLAUSE = re.compile(r"%(?:\.(\d+))?([a-zA-Z%])")


def _format_value_text(value: Any, in_list: bool = False) -> str:
    """``%s`` of one value, as cel-go's formatter writes it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _format_double(value)
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, str):
        return _go_quote(str(value)) if in_list else str(value)
    if isinstance(value, bytes):
        text = bytes(value).decode("utf-8", errors="replace")
        return _go_quote(text) if in_list else text
    if isinstance(value, list):
        return "[" + ", ".join(_format_value_text(v, True) for v in value) + "]"
    if isinstance(value, dict):
        entries = sorted(
            (_format_value_text(k, True), _format_value_text(v, True)) for k, v in value.items()
        )
        return "{" + ", ".join(f"{k}: {v}" for k, v in entries) + "}"
    return str(value)


def _format_double(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def cel_format(template: str, args: list[Any]) -> str:
    """``template.format(args)``; raises ValueError with cel-go's wording."""
    out: list[str] = []
    index = 0
    pos = 0
    for m in _FORMAT_CLAUSE.finditer(template):
        out.append(template[pos : m.start()])
        pos = m.end()
        precision, verb = m.group(1), m.group(2)
        if verb == "%":
            out.append("%")
            continue
        if index >= len(args):
            raise ValueError(f"index {index} out of range")
        value = args[index]
        index += 1
        out.append(_format_clause(verb, precision, value))
    if "%" in template[pos:]:
        raise ValueError("could not parse formatting clause: unrecognized formatting clause")
    out.append(template[pos:])
    return "".join(out)


def _format_clause(verb: str, precision: str | None, value: Any) -> str:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if verb == "s":
        return _format_value_text(value)
    if verb == "d":
        if not is_int:
            raise ValueError(
                "decimal clause can only be used on integers, was given " + _type_name(value)
            )
        return str(int(value))
    if verb in ("f", "e"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            what = "fixed-point" if verb == "f" else "scientific"
            raise ValueError(
                f"{what} clause can only be used on doubles, was given {_type_name(value)}"
            )
        number = float(value)
        if math.isnan(number) or math.isinf(number):
            return _format_double(number)
        digits = 6 if precision is None else int(precision)
        return f"{number:.{digits}{verb}}"
    if verb == "b":
        if isinstance(value, bool):
            return "1" if value else "0"
        if not is_int:
            raise ValueError(
                "only integers and bools can be formatted as binary, was given " + _type_name(value)
            )
        return format(int(value), "b")
    if verb == "o":
        if not is_int:
            raise ValueError(
                "octal clause can only be used on integers, was given " + _type_name(value)
            )
        return format(int(value), "o")
    if verb in ("x", "X"):
        if is_int:
            text = format(int(value), "x")
        elif isinstance(value, str):
            text = str(value).encode("utf-8").hex()
        elif isinstance(value, bytes):
            text = bytes(value).hex()
        else:
            raise ValueError(
                "only integers, byte buffers, and strings can be formatted as hex, was given "
                + _type_name(value)
            )
        return text.upper() if verb == "X" else text
    raise ValueError("could not parse formatting clause: unrecognized formatting clause")


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, float):
        return "double"
    if isinstance(value, int):
        return "int"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


def cel_quote(text: str) -> str:
    """``strings.quote(s)``: a double-quoted CEL string literal."""
    escapes = {char: "\\" + letter for letter, char in _ESCAPES.items()}
    escapes.update({"\\": "\\\\", '"': '\\"'})
    return '"' + "".join(escapes.get(c, c) for c in text) + '"'
