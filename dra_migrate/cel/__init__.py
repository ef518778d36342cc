"""CEL device selectors: static checks and evaluation like Kubernetes does them.

Three building blocks for ``dra-migrate validate``:

* :func:`check_selector` parses a selector with a real CEL parser (cel-python's
  Lark grammar) and walks the syntax tree: syntax errors with their position, the
  10,240-character limit, and every ``device.attributes[...]`` /
  ``device.capacity[...]`` access checked against the driver catalog
  (``dra_migrate/catalog/``): stale names, unknown names, capacities used as
  attributes and the reverse, wrong domains, version and Quantity values compared
  like strings or numbers, unknown drivers.
* :func:`evaluate_selector` evaluates a selector against one :class:`Device` in the
  Kubernetes DRA CEL environment (``k8s.io/dynamic-resource-allocation/cel``):
  variable ``device`` with ``driver``, ``attributes`` (domain → name → typed value;
  an unknown domain is an empty map) and ``capacity`` (domain → name → Quantity),
  the semver and quantity libraries, the string extensions selectors use,
  ``has()`` and ``cel.bind``. Equality and ordering follow cel-go: heterogeneous
  ``==`` is false, except that a version or Quantity on the left compared with
  anything but its own type is a "no such overload" error, as in Kubernetes.
* :func:`devices_from_resource_slices` turns ResourceSlice objects (v1beta1
  ``basic`` devices, v1beta2/v1 flat devices, ``kind: List``) into devices.

cel-python and Lark are imported on first use, so ``import dra_migrate.cel`` stays
cheap. Problem codes are plain strings (:data:`PROBLEM_CODES` gives each one's
severity); offsets are 0-based character offsets into the expression.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import ipaddress
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from dra_migrate.k8s.names import DNS_LABEL, DNS_SUBDOMAIN, INT64_MAX, INT64_MIN
from dra_migrate.package_data import package_file

if TYPE_CHECKING:  # pragma: no cover
    from dra_migrate.k8s.catalog import Catalog, StaleName

MAX_EXPRESSION_LENGTH = 10_240  # resourceapi.CELSelectorExpressionMaxLength
COST_LIMIT = 1_000_000  # resourceapi.CELSelectorExpressionMaxCost: estimate and runtime
MAX_ATTRIBUTES_PER_DEVICE = 32  # resourceapi.ResourceSliceMaxAttributesAndCapacitiesPerDevice
MAX_LIST_ATTRIBUTE_VALUES = 64  # list-type attribute values, as the estimator assumes
MAX_ATTRIBUTE_STRING = 64  # resourceapi.DeviceAttributeMaxValueLength

# --------------------------------------------------------------------------
# public types


@dataclass(frozen=True)
class ProblemCode:
    code: str
    severity: str  # "error" | "warning"
    title: str


PROBLEM_CODES: dict[str, ProblemCode] = {
    c.code: c
    for c in (
        ProblemCode("syntax", "error", "the expression does not parse as CEL"),
        ProblemCode("too-long", "error", "the expression is longer than 10,240 characters"),
        ProblemCode("not-bool", "error", "the expression does not evaluate to bool"),
        ProblemCode(
            "too-complex", "error", "the estimated evaluation cost exceeds the API server's limit"
        ),
        ProblemCode("undeclared", "error", "reference to an undeclared variable"),
        ProblemCode(
            "unknown-function", "error", "call of a function the Kubernetes CEL environment lacks"
        ),
        ProblemCode("unknown-field", "error", "device has only driver, attributes and capacity"),
        ProblemCode(
            "stale-name", "error", "attribute or capacity name that the driver no longer publishes"
        ),
        ProblemCode("unknown-attribute", "error", "attribute the driver does not publish"),
        ProblemCode("unknown-capacity", "error", "capacity the driver does not publish"),
        ProblemCode(
            "capacity-as-attribute", "error", "a capacity looked up under device.attributes"
        ),
        ProblemCode(
            "attribute-as-capacity", "error", "an attribute looked up under device.capacity"
        ),
        ProblemCode("unknown-domain", "error", "attribute domain that no driver uses"),
        ProblemCode(
            "unlisted-domain",
            "warning",
            "attribute domain the catalog does not know, resembling one it knows",
        ),
        ProblemCode("type", "error", "value compared or used with the wrong type"),
        ProblemCode(
            "invalid-literal",
            "warning",
            "semver() or quantity() argument that does not parse: Kubernetes accepts it, "
            "and it fails on every device",
        ),
        ProblemCode("unknown-value", "warning", "comparison with a value the attribute never has"),
        ProblemCode(
            "unknown-driver", "warning", "device.driver compared with an unknown driver name"
        ),
    )
}


@dataclass(frozen=True)
class CelProblem:
    """One finding in a CEL expression; ``offset`` is a 0-based character offset."""

    code: str
    offset: int
    message: str
    hint: str = ""
    subject: str = ""  # the domain or domain/name a catalog problem is about

    @property
    def severity(self) -> str:
        entry = PROBLEM_CODES.get(self.code)
        return entry.severity if entry else "error"


class CelEvaluationError(Exception):
    """A selector could not be evaluated (syntax error or CEL runtime error)."""


@dataclass
class Device:
    """One device of a ResourceSlice, as the CEL environment sees it.

    ``attributes`` maps domain → name → value, where a value is ``str``, ``int``,
    ``bool`` or :class:`SemVer` (a ``version`` attribute). ``capacity`` maps
    domain → name → Quantity string (``"40Gi"``).
    """

    driver: str
    name: str
    node: str | None
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict)
    capacity: dict[str, dict[str, str]] = field(default_factory=dict)


# --------------------------------------------------------------------------
# Kubernetes Quantity


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class Quantity:
    """A Kubernetes resource.Quantity with its exact value."""

    value: Fraction
    text: str = ""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value == other.value

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __str__(self) -> str:
        return self.text or str(self.value)

    def compare(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)


def parse_quantity(text: str) -> Quantity:
    """Parse a Kubernetes quantity (``40Gi``, ``1k``, ``500m``, ``1e3``) exactly.

    Raises ValueError for text Kubernetes' ``resource.ParseQuantity`` rejects
    (``200K``, ``Mi``, ``1,5G``, spaces).
    """
    from dra_migrate.k8s.quantity import parse_quantity as exact

    if not isinstance(text, str):
        raise ValueError(f"quantity must be a string, got {type(text).__name__}")
    value = exact(text)
    if value is None:
        raise ValueError(
            f"quantity {text!r} is not a Kubernetes quantity "
            "(<number><suffix>, suffix one of Ki Mi Gi Ti Pi Ei n u m k M G T P E or e<exponent>)"
        )
    return Quantity(value, text)


def is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------
# Semantic versions (blang/semver v4 rules, as used by the Kubernetes semver library)


_SEMVER_RE = re.compile(
    r"^(?P<major>0|[1-9][0-9]*)\.(?P<minor>0|[1-9][0-9]*)\.(?P<patch>0|[1-9][0-9]*)"
    r"(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+(?P<build>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


@dataclass(frozen=True, eq=False)
class SemVer:
    """A semantic version; equality and ordering ignore build metadata."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> SemVer:
        """Parse like ``semver(text)`` (strict) or ``semver(text, true)`` (normalized)."""
        if not isinstance(text, str):
            raise ValueError(f"version must be a string, got {type(text).__name__}")
        source = normalize_semver(text) if normalize else text
        m = _SEMVER_RE.match(source)
        if not m:
            raise ValueError(f"{text!r} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 8.0.0)")
        numbers = [m.group("major"), m.group("minor"), m.group("patch")]
        numbers += [p for p in (m.group("pre") or "").split(".") if p.isdigit()]
        if any(len(n) > 20 for n in numbers):  # past uint64, as Go's semver reads them
            raise ValueError(f"{_cut(text)!r}: a number of the version is past 64 bits")
        pre: list[int | str] = []
        if m.group("pre"):
            for part in m.group("pre").split("."):
                if part.isdigit():
                    if len(part) > 1 and part[0] == "0":
                        raise ValueError(
                            f"{text!r}: numeric pre-release part {part!r} has a leading zero"
                        )
                    pre.append(int(part))
                else:
                    pre.append(part)
        build = tuple(m.group("build").split(".")) if m.group("build") else ()
        return cls(
            int(m.group("major")), int(m.group("minor")), int(m.group("patch")), tuple(pre), build
        )

    def _key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def compare(self, other: SemVer) -> int:
        if self._key() != other._key():
            return -1 if self._key() < other._key() else 1
        if self.pre == other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            if isinstance(a, int) and isinstance(b, int):
                return -1 if a < b else 1
            if isinstance(a, int):
                return -1
            if isinstance(b, int):
                return 1
            return -1 if a < b else 1
        return -1 if len(self.pre) < len(other.pre) else 1

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SemVer):
            return NotImplemented
        return self.compare(other) == 0

    def __lt__(self, other: SemVer) -> bool:
        return self.compare(other) < 0

    def __hash__(self) -> int:
        return hash((self._key(), self.pre))

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text


def normalize_semver(text: str) -> str:
    """Kubernetes' semver normalization: drop a leading ``v``, leading zeros, fill minor/patch."""
    s = text[1:] if text.startswith("v") else text
    parts = s.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            stripped = part.lstrip("0")
            if not stripped or not stripped[0].isdigit():
                stripped = "0" + stripped
            parts[i] = stripped
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            return text  # short versions cannot carry pre-release/build data
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def is_semver(text: str, normalize: bool = False) -> bool:
    try:
        SemVer.parse(text, normalize)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class InvalidVersion:
    """A ``version`` attribute value from a ResourceSlice that is not a semantic version."""

    text: str
    error: str


# --------------------------------------------------------------------------
# Values of the Kubernetes CEL libraries beyond semver and quantity: optional
# (cel-go's OptionalTypes), net.IP and net.CIDR (k8s.io/apiserver library.IP/CIDR)


_NO_VALUE = object()


@dataclass(frozen=True, eq=False)
class OptionalValue:
    """``optional.of(x)`` / ``optional.none()``."""

    value: Any = _NO_VALUE

    @property
    def present(self) -> bool:
        return self.value is not _NO_VALUE

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OptionalValue):
            return NotImplemented
        if not (self.present and other.present):
            return self.present == other.present
        return bool(self.value == other.value)

    def __hash__(self) -> int:
        return hash(self.present)

    def __str__(self) -> str:
        return f"optional.of({self.value})" if self.present else "optional.none()"


_IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _parse_ip(text: str) -> _IPAddress:
    """``ip()`` of k8s.io/apiserver: netip.ParseAddr without zones or IPv4-mapped IPv6."""
    if "%" in text:
        raise ValueError(f"IP address {_go_quote(text)} with zone value is not allowed")
    try:
        addr = ipaddress.ip_address(text)
    except ValueError as exc:
        raise ValueError(
            f"IP Address {_go_quote(text)} parse error during conversion from string: {exc}"
        ) from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {_go_quote(text)} is not allowed")
    return addr


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> Any:
    """An RE2 pattern (cel-python's module, RE2 like cel-go), compiled once, quietly;
    raises ValueError for an invalid one."""
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.log_errors = False  # RE2 would print every parse error on stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        message = exc.args[0] if exc.args else str(exc)
        if isinstance(message, bytes):
            message = message.decode("utf-8", "replace")
        raise ValueError(f"invalid regular expression: {message}") from None


def _snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), name)


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class IPValue:
    """A ``net.IP`` value."""

    addr: _IPAddress

    def __str__(self) -> str:
        return str(self.addr)

    @property
    def family(self) -> int:
        return self.addr.version

    def is_unspecified(self) -> bool:
        return self.addr.is_unspecified

    def is_loopback(self) -> bool:
        if self.addr.version == 4:
            return self.addr in ipaddress.ip_network("127.0.0.0/8")
        return int(self.addr) == 1

    def is_link_local_multicast(self) -> bool:  # Go netip rules
        if self.addr.version == 4:
            return self.addr in ipaddress.ip_network("224.0.0.0/24")
        return (int(self.addr) >> 112) & 0xFF0F == 0xFF02

    def is_link_local_unicast(self) -> bool:
        if self.addr.version == 4:
            return self.addr in ipaddress.ip_network("169.254.0.0/16")
        return self.addr in ipaddress.ip_network("fe80::/10")

    def is_global_unicast(self) -> bool:
        """Go's netip.Addr.IsGlobalUnicast: private ranges count as global."""
        if self.addr.version == 4 and int(self.addr) in (0, 0xFFFFFFFF):
            return False
        return not (
            self.addr.is_unspecified
            or self.is_loopback()
            or self.addr.is_multicast
            or self.is_link_local_unicast()
        )


@dataclass(frozen=True)
class CIDRValue:
    """A ``net.CIDR`` value: an address (not necessarily masked) and a prefix length."""

    addr: _IPAddress
    bits: int

    @classmethod
    def parse(cls, text: str) -> CIDRValue:
        """``cidr()`` of k8s.io/apiserver: netip.ParsePrefix without IPv4-mapped IPv6."""
        prefix = "network address parse error during conversion from string: "
        address, slash, bits = text.rpartition("/")
        if not slash:
            raise ValueError(f"{prefix}netip.ParsePrefix({_go_quote(text)}): no '/'")
        if "%" in address:
            raise ValueError(
                f"{prefix}netip.ParsePrefix({_go_quote(text)}): IPv6 zones cannot be present in a prefix"
            )
        try:
            addr = ipaddress.ip_address(address)
        except ValueError as exc:
            raise ValueError(f"{prefix}netip.ParsePrefix({_go_quote(text)}): {exc}") from None
        limit = 32 if addr.version == 4 else 128
        if not re.fullmatch(r"0|[1-9][0-9]{0,2}", bits) or int(bits) > limit:
            raise ValueError(
                f"{prefix}netip.ParsePrefix({_go_quote(text)}): bad bits after slash: {_go_quote(bits)}"
            )
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            raise ValueError(f"IPv4-mapped IPv6 address {_go_quote(text)} is not allowed")
        return cls(addr, int(bits))

    def __str__(self) -> str:
        return f"{self.addr}/{self.bits}"

    def network(self) -> Any:
        return ipaddress.ip_network(f"{self.addr}/{self.bits}", strict=False)

    def masked(self) -> CIDRValue:
        return CIDRValue(self.network().network_address, self.bits)

    def contains_ip(self, ip: IPValue) -> bool:
        return ip.addr.version == self.addr.version and ip.addr in self.network()

    def contains_cidr(self, other: CIDRValue) -> bool:
        # k8s.io/apiserver: Masked() == PrefixFrom(other.Addr(), Bits()) && Bits() <= other.Bits()
        return (
            other.addr.version == self.addr.version
            and self.masked().addr == other.addr
            and self.bits <= other.bits
        )


_URL_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")


@dataclass(frozen=True)
class URLValue:
    """A ``kubernetes.URL`` value (k8s.io/apiserver library.URLs)."""

    text: str
    scheme: str
    host: str
    path: str
    query: str

    @classmethod
    def parse(cls, text: str) -> URLValue:
        """Go's url.ParseRequestURI rules: an absolute URI or an absolute path."""
        import urllib.parse

        problem = ""
        if not text:
            problem = "empty url"
        elif any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
            problem = "net/url: invalid control character in URL"
        elif not _URL_SCHEME.match(text) and not text.startswith("/"):
            problem = "invalid URI for request"
        if problem:
            raise ValueError(
                f"URL parse error during conversion from string: parse {_go_quote(text)}: {problem}"
            )
        parts = urllib.parse.urlsplit(text)
        host = parts.netloc.rpartition("@")[2]  # Go's URL.Host has no user information
        return cls(text, parts.scheme, host, parts.path, parts.query)

    def hostname(self) -> str:
        host = self.host
        if host.startswith("["):
            return host[1 : host.find("]")] if "]" in host else host[1:]
        return host.partition(":")[0]

    def port(self) -> str:
        host = self.host
        if host.startswith("["):
            rest = host[host.find("]") + 1 :] if "]" in host else ""
            return rest[1:] if rest.startswith(":") else ""
        return host.partition(":")[2]

    def escaped_path(self) -> str:
        """Go's URL.EscapedPath: the path as written when it is validly escaped."""
        import urllib.parse

        if re.fullmatch(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@\[\]/]|%[0-9A-Fa-f]{2})*", self.path):
            return self.path
        return urllib.parse.quote(urllib.parse.unquote(self.path), safe="-_.~$&+,/:;=@")

    def query_map(self) -> dict[str, list[str]]:
        import urllib.parse

        result: dict[str, list[str]] = {}
        for key, value in urllib.parse.parse_qsl(self.query, keep_blank_values=True):
            result.setdefault(key, []).append(value)
        return result


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


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


# --------------------------------------------------------------------------
# ResourceSlices → devices


def _attribute_value(raw: Any) -> Any:
    if not isinstance(raw, Mapping):
        return None
    if "bool" in raw:
        return bool(raw["bool"])
    if "int" in raw:
        number = raw["int"]
        if isinstance(number, str) and len(number) > 20:
            return None  # longer than any int64: not converted
        try:
            return int(number)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite float
            return None
    if "string" in raw:
        return "" if raw["string"] is None else str(raw["string"])
    if "version" in raw:
        text = str(raw["version"])
        try:
            return SemVer.parse(text)
        except ValueError as exc:
            return InvalidVersion(text, str(exc))
    for list_key in ("strings", "ints", "bools", "versions"):  # 1.36 alpha list attributes
        if list_key in raw and isinstance(raw[list_key], list):
            return list(raw[list_key])
    return None


def _capacity_value(raw: Any) -> str | None:
    if isinstance(raw, Mapping):
        raw = raw.get("value")
    if raw is None or isinstance(raw, bool):
        return None
    return str(raw)


def _iter_slices(docs: Iterable[Any]) -> Iterator[Mapping[str, Any]]:
    for doc in docs:
        if isinstance(doc, list):
            yield from _iter_slices(doc)
            continue
        if not isinstance(doc, Mapping):
            continue
        kind = doc.get("kind")
        if kind == "ResourceSlice":
            yield doc
        elif isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            yield from _iter_slices(doc["items"])


def devices_from_resource_slices(
    docs: Iterable[Mapping[str, Any]], *, default_driver: str = ""
) -> list[Device]:
    """Devices of every ResourceSlice in ``docs``.

    ``docs`` may hold ResourceSlice objects and ``List`` / ``ResourceSliceList``
    objects (``kubectl get resourceslices -o yaml``). Devices may be flat
    (v1beta2, v1) or wrapped in ``basic`` (v1alpha3, v1beta1). Unqualified names
    belong to the slice's driver (``default_driver`` when the slice has none);
    ``node`` is ``spec.nodeName`` (or the device's own ``nodeName`` with
    per-device node selection), ``None`` for ``allNodes`` / ``nodeSelector``.
    Entries that are not device mappings are skipped.
    """
    from dra_migrate.k8s.catalog import split_qualified_name

    devices: list[Device] = []
    for obj in _iter_slices(docs):
        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            continue
        raw_driver = spec.get("driver")
        driver: str = raw_driver if isinstance(raw_driver, str) else default_driver
        raw_node = spec.get("nodeName")
        slice_node = raw_node if isinstance(raw_node, str) else None
        raw_devices = spec.get("devices")
        if not isinstance(raw_devices, list):
            continue
        for raw in raw_devices:
            if not isinstance(raw, Mapping):
                continue
            basic = raw.get("basic")
            body: Mapping[str, Any] = basic if isinstance(basic, Mapping) else raw
            attributes: dict[str, dict[str, Any]] = {}
            raw_attrs = body.get("attributes")
            if isinstance(raw_attrs, Mapping):
                for qualified, value in raw_attrs.items():
                    domain, name = split_qualified_name(str(qualified), driver)
                    converted = _attribute_value(value)
                    if converted is not None:
                        attributes.setdefault(domain, {})[name] = converted
            capacity: dict[str, dict[str, str]] = {}
            raw_caps = body.get("capacity")
            if isinstance(raw_caps, Mapping):
                for qualified, value in raw_caps.items():
                    domain, name = split_qualified_name(str(qualified), driver)
                    text = _capacity_value(value)
                    if text is not None:
                        capacity.setdefault(domain, {})[name] = text
            own_node = raw.get("nodeName")
            node = own_node if isinstance(own_node, str) else slice_node
            devices.append(
                Device(
                    driver=driver,
                    name=str(raw.get("name") or ""),
                    node=node,
                    attributes=attributes,
                    capacity=capacity,
                )
            )
    return devices


# --------------------------------------------------------------------------
# parsing (lazy: Lark grammar of cel-python)


RESERVED_WORDS = frozenset(
    [
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)


@dataclass(frozen=True)
class _SyntaxIssue:
    offset: int
    message: str
    hint: str = ""


class _ParseFailed(Exception):
    def __init__(self, issue: _SyntaxIssue) -> None:
        super().__init__(issue.message)
        self.issue = issue


_TERMINAL_TEXT = {
    "RPAR": "')'",
    "LPAR": "'('",
    "RSQB": "']'",
    "LSQB": "'['",
    "RBRACE": "'}'",
    "LBRACE": "'{'",
    "COLON": "':'",
    "COMMA": "','",
    "DOT": "'.'",
    "QMARK": "'?'",
    "IDENT": "an identifier",
    "STRING_LIT": "a string",
    "INT_LIT": "a number",
}


# cel-go's optional syntax (cel.OptionalTypes, in Kubernetes since 1.28), added to
# cel-python's grammar: ``x.?field`` and ``x[?key]``.
_OPTIONAL_SYNTAX = {
    "member         : member_dot | member_dot_arg | member_index": (
        " | member_dot_opt | member_index_opt"
    ),
    'member_index   : member "[" expr "]"\n': (
        'member_dot_opt : member "." "?" IDENT\nmember_index_opt : member "[" "?" expr "]"\n'
    ),
}


# The LALR tables of the grammar, as data (JSON) in the package: building them takes
# about 0.3 s, loading them about 0.02 s. Written by scripts/build_data.py for the
# grammar, the options and the Lark version of its stamp; tests/hostile/test_hostile_cache_git.py
# holds it current. Where the installed cel-python or Lark differ, the tables are
# built in memory (nothing read from disk but this file and the grammar is used).
GRAMMAR_TABLES = package_file("built", "cel-grammar.json")
_LARK_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "start": "expr",
    "g_regex_flags": re.M,
    "propagate_positions": True,
    "maybe_placeholders": False,
    "priority": "invert",
}


def grammar_source() -> tuple[str, str]:
    """cel-python's CEL grammar with cel-go's optional syntax, and its stamp: what the
    LALR tables are built from (the grammar, the options, the Lark version)."""
    from pathlib import Path

    import celpy  # lazy
    import lark

    from dra_migrate import cache

    grammar = (Path(celpy.__file__).parent / "cel.lark").read_text(encoding="utf-8")
    for rule, optional in _OPTIONAL_SYNTAX.items():
        if rule not in grammar:  # pragma: no cover - a cel-python grammar we do not know
            raise RuntimeError(f"cel-python's CEL grammar has no rule {rule.strip()!r}")
        grammar = grammar.replace(rule, rule + optional)
    key = grammar + repr(sorted(_LARK_OPTIONS.items())) + lark.__version__
    return grammar, cache.digest(key.encode())


def grammar_tables(parser: Any) -> dict[str, Any]:
    """A Lark LALR parser's tables as JSON holds them (``load_tables`` reads them back)."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {k: v for k, v in data["options"].items() if k != "lexer_callbacks"}
    return {"data": data, "memo": memo}


def load_tables(held: dict[str, Any]) -> dict[str, Any]:
    """``grammar_tables`` as Lark gave them, from their JSON: the numbers JSON keeps as
    object keys (states, tokens, memo entries) and the tuples it keeps as lists."""
    table = held["data"]["parser"]["parser"]
    table["states"] = {
        int(state): {int(token): tuple(action) for token, action in actions.items()}
        for state, actions in table["states"].items()
    }
    table["tokens"] = {int(number): name for number, name in table["tokens"].items()}
    memo = {int(number): entry for number, entry in held["memo"].items()}
    for entry in memo.values():
        options = entry.get("options")
        if isinstance(options, dict) and "empty_indices" in options:
            options["empty_indices"] = tuple(options["empty_indices"])
    return {"data": held["data"], "memo": memo}


@functools.lru_cache(maxsize=1)
def _lark_parser() -> Any:
    """An LALR parser for cel-python's CEL grammar: its tables loaded from the package
    (``GRAMMAR_TABLES``) when they were built for this grammar and Lark, else built."""
    import json

    import lark  # lazy

    def literal_keywords(token: Any) -> Any:
        # cel-python's own callback drops the position of true/false; keep it.
        if token.value in ("true", "false"):
            return lark.Token.new_borrow_pos("BOOL_LIT", token.value, token)
        return token

    callbacks = {"IDENT": literal_keywords}
    grammar, stamp = grammar_source()
    try:
        with open(GRAMMAR_TABLES, encoding="utf-8") as handle:
            built = json.load(handle)
    except (OSError, ValueError):
        built = None
    if isinstance(built, dict) and built.get("stamp") == stamp:
        parser: Any = lark.Lark.__new__(lark.Lark)
        return parser._load(load_tables(built["tables"]), lexer_callbacks=callbacks)
    return lark.Lark(grammar, lexer_callbacks=callbacks, **_LARK_OPTIONS)


@functools.lru_cache(maxsize=512)
def _parse(expression: str) -> Any:
    """The Lark tree of ``expression``; raises _ParseFailed with the position."""
    import lark  # lazy

    parser = _lark_parser()
    try:
        tree = parser.parse(expression)
    except lark.exceptions.UnexpectedCharacters as exc:
        offset = int(exc.pos_in_stream or 0)
        char = expression[offset] if offset < len(expression) else ""
        if char in "'\"":
            raise _ParseFailed(_SyntaxIssue(offset, "unterminated string literal")) from None
        raise _ParseFailed(_SyntaxIssue(offset, f"unexpected character {char!r}")) from None
    except lark.exceptions.UnexpectedToken as exc:
        token = exc.token
        expected = sorted(_TERMINAL_TEXT[t] for t in (exc.expected or ()) if t in _TERMINAL_TEXT)
        hint = ("expected " + " or ".join(expected)) if expected and len(expected) <= 3 else ""
        if token.type == "$END":
            return_offset = len(expression.rstrip())
            raise _ParseFailed(
                _SyntaxIssue(return_offset, "unexpected end of expression", hint)
            ) from None
        offset = int(token.start_pos or 0)
        raise _ParseFailed(_SyntaxIssue(offset, f"unexpected {token.value!r}", hint)) from None
    except lark.exceptions.UnexpectedInput as exc:  # pragma: no cover - other lark failures
        raise _ParseFailed(_SyntaxIssue(int(exc.pos_in_stream or 0), "syntax error")) from None
    except lark.exceptions.LarkError as exc:  # pragma: no cover
        raise _ParseFailed(_SyntaxIssue(0, f"syntax error: {exc}")) from None
    for token in tree.scan_values(lambda v: getattr(v, "type", None) in ("INT_LIT", "UINT_LIT")):
        if _int_literal(str(token)) is None:
            raise _ParseFailed(
                _SyntaxIssue(
                    int(token.start_pos or 0),
                    f"integer literal {_cut(str(token))} out of range",
                    "CEL integers are 64-bit: int up to 9223372036854775807, "
                    "uint up to 18446744073709551615",
                )
            )
    return tree


def _int_literal(text: str) -> int | None:
    """The value of a CEL int or uint literal (``42``, ``0x2A``, ``42u``), None when it is
    out of its 64-bit range; the digits are counted before they are converted."""
    unsigned = text[-1:] in ("u", "U")
    digits = text.rstrip("uU")
    hexadecimal = digits[:2] in ("0x", "0X")
    body = (digits[2:] if hexadecimal else digits).lstrip("0")
    if len(body) > (16 if hexadecimal else 20):
        return None
    value = int(body or "0", 16 if hexadecimal else 10)
    # 2**63 is kept for the int literal that a minus sign turns into the smallest int64
    return value if value <= (2**64 - 1 if unsigned else 2**63) else None


def _cut(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def _start(node: Any) -> int:
    if not hasattr(node, "meta"):  # a token
        return int(getattr(node, "start_pos", None) or 0)
    meta = node.meta
    if not meta.empty and meta.start_pos is not None:
        return int(meta.start_pos)
    return 0


def _end(node: Any) -> int:
    if not hasattr(node, "meta"):
        return int(getattr(node, "end_pos", None) or 0)
    meta = node.meta
    if not meta.empty and meta.end_pos is not None:
        return int(meta.end_pos)
    return 0


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_ESCAPE_RE = re.compile(
    r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2}|.)", re.S
)


def _decode_string(token_text: str) -> tuple[str, int]:
    """Value of a CEL string literal and the offset of its first content character."""
    i = 0
    raw = False
    while token_text[i] in "rRbB":
        raw = raw or token_text[i] in "rR"
        i += 1
    quote = token_text[i : i + 3] if token_text[i : i + 3] in ('"""', "'''") else token_text[i]
    body = token_text[i + len(quote) : len(token_text) - len(quote)]
    content_offset = i + len(quote)
    if raw:
        return body, content_offset

    def unescape(m: re.Match[str]) -> str:
        esc = m.group(0)[1:]
        if esc[0] in "xuU":
            return chr(int(esc[1:], 16))
        if esc[0].isdigit():
            return chr(int(esc, 8))
        return _ESCAPES.get(esc, esc)

    return _ESCAPE_RE.sub(unescape, body), content_offset


# --------------------------------------------------------------------------
# static checks


@dataclass(frozen=True)
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


class _Checker:
    def __init__(self, expression: str, catalog: Catalog) -> None:
        self.expr = expression
        self.catalog = catalog
        self.problems: list[CelProblem] = []
        self._seen: set[tuple[str, int, str]] = set()

    # -- helpers --------------------------------------------------------------
    def add(self, code: str, offset: int, message: str, hint: str = "", subject: str = "") -> None:
        key = (code, offset, message)
        if key not in self._seen:
            self._seen.add(key)
            self.problems.append(CelProblem(code, offset, message, hint, subject))

    def src(self, t: _T) -> str:
        return self.expr[t.start : t.end].strip() if t.end > t.start else ""

    def t(self, kind: str, node: Any, **kw: Any) -> _T:
        return _T(kind, _start(node), _end(node), **kw)

    # -- the walk -------------------------------------------------------------
    def infer(self, node: Any, scope: Mapping[str, _T]) -> _T:
        method = getattr(self, "n_" + str(node.data), None)
        if method is None:
            for child in node.children:
                if hasattr(child, "data"):
                    self.infer(child, scope)
            return self.t(_DYN, node)
        result: _T = method(node, scope)
        return result

    def passthrough(self, node: Any, scope: Mapping[str, _T]) -> _T:
        inner = self.infer(node.children[0], scope)
        return dataclasses.replace(
            inner, start=_start(node), end=_end(node), at=-1 if inner.at < 0 else inner.at
        )

    def n_expr(self, node: Any, scope: Mapping[str, _T]) -> _T:
        if len(node.children) == 1:
            return self.passthrough(node, scope)
        self.infer(node.children[0], scope)
        a = self.infer(node.children[1], scope)
        b = self.infer(node.children[2], scope)
        return self.t(a.kind if a.kind == b.kind else _DYN, node)

    def _logical(self, node: Any, scope: Mapping[str, _T]) -> _T:
        if len(node.children) == 1:
            return self.passthrough(node, scope)
        for child in node.children:
            operand = self.infer(child, scope)
            if operand.kind in _NOT_BOOL:
                self.add(
                    "type",
                    operand.start,
                    f"operand of a logical operator is {_kind_text(operand)}, not bool",
                )
        return self.t("bool", node)

    n_conditionalor = _logical
    n_conditionaland = _logical

    def n_relation(self, node: Any, scope: Mapping[str, _T]) -> _T:
        if len(node.children) == 1:
            return self.passthrough(node, scope)
        op_node, right_node = node.children
        op = _COMPARE_OPS[str(op_node.data)]
        left = self.infer(op_node.children[0], scope)
        right = self.infer(right_node, scope)
        if op == "in":
            self.check_in(left, right)
        else:
            self.check_compare(op, left, right)
        return self.t("bool", node)

    def _arith(self, node: Any, scope: Mapping[str, _T]) -> _T:
        if len(node.children) == 1:
            return self.passthrough(node, scope)
        op_node, right_node = node.children
        left = self.infer(op_node.children[0], scope)
        right = self.infer(right_node, scope)
        for side in (left, right):
            if side.kind in ("semver", "quantity"):
                what = "version" if side.kind == "semver" else "Quantity"
                hint = (
                    ".add()/.sub()/.mul() on quantities"
                    if side.kind == "quantity"
                    else ".major()/.minor()/.patch()"
                )
                self.add(
                    "type",
                    side.start,
                    f"arithmetic on a {what} value ({self.src(side)}) has no overload",
                    f"use {hint}",
                )
        if left.kind == right.kind and left.kind in ("int", "uint", "double", "string", "list"):
            return self.t(left.kind, node)
        return self.t(_DYN, node)

    n_addition = _arith
    n_multiplication = _arith

    def n_unary(self, node: Any, scope: Mapping[str, _T]) -> _T:
        if len(node.children) == 1:
            return self.passthrough(node, scope)
        op, operand_node = node.children
        operand = self.infer(operand_node, scope)
        if op.data == "unary_not":
            return self.t("bool", node)
        return self.t(operand.kind if operand.kind in _NUMERIC else _DYN, node)

    def n_member(self, node: Any, scope: Mapping[str, _T]) -> _T:
        return self.passthrough(node, scope)

    def n_primary(self, node: Any, scope: Mapping[str, _T]) -> _T:
        return self.passthrough(node, scope)

    def n_paren_expr(self, node: Any, scope: Mapping[str, _T]) -> _T:
        return self.passthrough(node, scope)

    def n_literal(self, node: Any, scope: Mapping[str, _T]) -> _T:
        token = node.children[0]
        text = str(token.value)
        kind = {
            "STRING_LIT": "string",
            "MLSTRING_LIT": "string",
            "BYTES_LIT": "bytes",
            "INT_LIT": "int",
            "UINT_LIT": "uint",
            "FLOAT_LIT": "double",
            "BOOL_LIT": "bool",
            "NULL_LIT": "null",
        }.get(str(token.type), _DYN)
        value: Any = None
        start = _start(node)
        if kind == "string":
            value, content = _decode_string(text)
            return _T(
                "string", start, _end(node), origin="literal", literal=value, at=start + content
            )
        if kind in ("int", "uint"):
            value = _int_literal(text)
        elif kind == "double":
            value = float(text)
        elif kind == "bool":
            value = text == "true"
        return _T(kind, start, _end(node), origin="literal", literal=value)

    def n_list_lit(self, node: Any, scope: Mapping[str, _T]) -> _T:
        items = [self.infer(c, scope) for c in (node.children[0].children if node.children else [])]
        self.check_homogeneous(items)
        literal = (
            tuple(i.literal for i in items) if items and all(i.is_literal for i in items) else None
        )
        return self.t(
            "list", node, origin="literal" if literal is not None else "", literal=literal
        )

    def n_map_lit(self, node: Any, scope: Mapping[str, _T]) -> _T:
        entries = list(node.children[0].children) if node.children else []
        typed = [self.infer(e, scope) for e in entries]
        self.check_homogeneous(typed[0::2])
        self.check_homogeneous(typed[1::2])
        return self.t("map", node)

    def check_homogeneous(self, items: list[_T]) -> None:
        """Kubernetes compiles with cel.HomogeneousAggregateLiterals: the elements of a
        list literal (the keys, the values of a map literal) have one type."""
        first: _T | None = None
        for item in items:
            if item.kind not in _SCALAR | {"list", "map", "semver", "quantity"}:
                continue
            if item.origin == "attribute":  # attribute values are dyn to cel-go
                continue
            if first is None:
                first = item
            elif item.kind != first.kind:
                self.add(
                    "type",
                    item.start,
                    f"expected type {_cel_type(first)!r} but found {_cel_type(item)!r}: "
                    "the elements of a literal must have one type",
                    "convert them, e.g. string(x), or write separate comparisons",
                )
                return

    def n_mapinits(self, node: Any, scope: Mapping[str, _T]) -> _T:
        for child in node.children:
            self.infer(child, scope)
        return self.t(_DYN, node)

    def n_member_object(self, node: Any, scope: Mapping[str, _T]) -> _T:
        return self.t(_DYN, node)

    def n_dot_ident(self, node: Any, scope: Mapping[str, _T]) -> _T:
        return self.t(_DYN, node)

    def n_dot_ident_arg(self, node: Any, scope: Mapping[str, _T]) -> _T:
        for child in node.children[1:]:
            for arg in getattr(child, "children", []):
                self.infer(arg, scope)
        return self.t(_DYN, node)

    def n_ident(self, node: Any, scope: Mapping[str, _T]) -> _T:
        token = node.children[0]
        name = str(token.value)
        if name in scope:
            bound = scope[name]
            return dataclasses.replace(bound, start=_start(node), end=_end(node), at=-1)
        if name in RESERVED_WORDS:
            self.add(
                "syntax", _start(node), f"{name!r} is a reserved word and cannot be an identifier"
            )
            return self.t(_DYN, node)
        if name == "device":
            return self.t("device", node)
        if name in _TYPE_NAMES:
            return self.t("type", node)
        self.add(
            "undeclared",
            _start(node),
            f"undeclared reference to {name!r}: device selectors only have the variable 'device'",
        )
        return self.t(_DYN, node)

    # -- field selection and indexing -----------------------------------------
    def n_member_dot(self, node: Any, scope: Mapping[str, _T]) -> _T:
        receiver_node, ident = node.children
        name = str(ident.value)
        offset = int(ident.start_pos)
        receiver = self.infer(receiver_node, scope)
        return self.select(receiver, name, offset, node)

    def n_member_index(self, node: Any, scope: Mapping[str, _T]) -> _T:
        receiver_node, key_node = node.children
        receiver = self.infer(receiver_node, scope)
        key = self.infer(key_node, scope)
        if key.kind == "string" and key.is_literal:
            offset = key.offset
            if receiver.kind in ("attrs", "caps", "attr_map", "cap_map"):
                return self.select(receiver, str(key.literal), offset, node)
        device_map = receiver.kind in ("attrs", "caps", "attr_map", "cap_map")
        if device_map and key.kind in _NOT_BOOL | {"bool"} and key.kind != "string":
            self.add(
                "type",
                key.start,
                f"found no matching overload for '_[_]' applied to a device map and "
                f"{_cel_type(key)!r}: device maps are keyed by strings",
                f"write the key as a string: [{_cel_str(_literal_text(key.literal))}]"
                if key.is_literal
                else "",
            )
        if receiver.kind == "attrs":
            return self.t("attr_map", node)
        if receiver.kind == "caps":
            return self.t("cap_map", node)
        if receiver.kind == "attr_map":
            return self.t(_DYN, node, origin="attribute")
        if receiver.kind == "cap_map":
            return self.t("quantity", node, origin="capacity")
        return self.t(_DYN, node)

    def select(self, receiver: _T, name: str, offset: int, node: Any) -> _T:
        kind = receiver.kind
        if kind == "device":
            if name == "driver":
                return self.t("string", node, origin="driver")
            if name == "attributes":
                return self.t("attrs", node)
            if name == "capacity":
                return self.t("caps", node)
            hint = ""
            if name in ("attribute", "attrs", "capacities"):
                hint = "did you mean device.attributes or device.capacity?"
            self.add(
                "unknown-field",
                offset,
                f"device has no field {name!r}: it has driver, attributes and capacity",
                hint,
            )
            return self.t(_DYN, node)
        if kind == "attrs":
            self.check_domain(name, offset, "attributes")
            return self.t("attr_map", node, domain=name)
        if kind == "caps":
            self.check_domain(name, offset, "capacity")
            return self.t("cap_map", node, domain=name)
        if kind == "attr_map":
            return self.attribute_value(receiver.domain, name, offset, node)
        if kind == "cap_map":
            return self.capacity_value(receiver.domain, name, offset, node)
        if kind in _SCALAR or kind in ("semver", "quantity"):
            self.add(
                "type",
                offset,
                f"{self.src(receiver) or 'value'} is {_kind_text(receiver)} and has no field {name!r}",
            )
        return self.t(_DYN, node)

    # -- catalog checks --------------------------------------------------------
    def check_domain(self, domain: str, offset: int, where: str) -> None:
        cat = self.catalog
        if cat.is_known_domain(domain):
            return
        wrong = cat.wrong_domain(domain)
        if wrong is not None:
            self.add(
                "unknown-domain",
                offset,
                f"{domain!r} is not an attribute domain: {wrong.explanation}",
                f"use device.{where}[{_cel_str(wrong.replacement)}]",
            )
            return
        if "/" in domain:
            dom, _, ident = domain.partition("/")
            self.add(
                "unknown-domain",
                offset,
                f"{domain!r} is a qualified name, but device.{where} is keyed by domain only, so this looks up "
                f"an empty map",
                f"write device.{where}[{_cel_str(dom)}].{ident}" if ident.isidentifier() else "",
            )
            return
        from dra_migrate.k8s.catalog import is_dns_subdomain

        similar = cat.similar_domains(domain)
        if not is_dns_subdomain(domain):
            self.add(
                "unknown-domain",
                offset,
                f"{domain!r} is not a valid domain (a lower-case DNS subdomain such as gpu.nvidia.com)",
                f"did you mean {similar[0]!r}?" if similar else "",
            )
            return
        if similar:
            self.add(
                "unlisted-domain",
                offset,
                f"no driver uses the domain {domain!r}; an unknown domain is an empty map, so every lookup in it fails",
                f"did you mean {' or '.join(repr(s) for s in similar)}?",
                subject=domain,
            )

    def attribute_value(self, domain: str | None, name: str, offset: int, node: Any) -> _T:
        if domain is None:
            return self.t(_DYN, node, origin="attribute", name=name)
        cat = self.catalog
        info = cat.domains.get(domain)
        if info is None:
            return self.t(_DYN, node, origin="attribute", domain=domain, name=name)
        stale = cat.find_stale(domain, name, "attribute")
        if stale is not None:
            self.report_stale(stale, domain, name, offset, "attribute")
            return self.t(_DYN, node, origin="attribute", domain=domain, name=name)
        attr = info.attributes.get(name)
        if attr is not None:
            return self.t(
                _ATTR_KIND[attr.type],
                node,
                origin="attribute",
                domain=domain,
                name=name,
                values=attr.values,
            )
        if "/" in name:
            dom, _, ident = name.partition("/")
            self.add(
                "unknown-attribute",
                offset,
                f"{name!r} is a qualified name; inside device.attributes[{_cel_str(domain)}] names are unqualified",
                f"write device.attributes[{_cel_str(dom)}].{ident}",
            )
            return self.t(_DYN, node, origin="attribute", domain=domain, name=name)
        if info.has_capacity(name):
            self.add(
                "capacity-as-attribute",
                offset,
                f"{name!r} is a capacity of {domain}, not an attribute",
                f"use device.capacity[{_cel_str(domain)}].{name}.compareTo(quantity('…')) with a Quantity",
            )
            return self.t(_DYN, node, origin="capacity", domain=domain, name=name)
        self.report_unknown(
            info.complete, "unknown-attribute", domain, name, offset, list(info.attributes)
        )
        return self.t(_DYN, node, origin="attribute", domain=domain, name=name)

    def capacity_value(self, domain: str | None, name: str, offset: int, node: Any) -> _T:
        result = self.t("quantity", node, origin="capacity", domain=domain, name=name)
        if domain is None:
            return result
        cat = self.catalog
        info = cat.domains.get(domain)
        if info is None:
            return result
        stale = cat.find_stale(domain, name, "capacity")
        if stale is not None:
            self.report_stale(stale, domain, name, offset, "capacity")
            return result
        if info.has_capacity(name):
            return result
        if name in info.attributes:
            attr = info.attributes[name]
            self.add(
                "attribute-as-capacity",
                offset,
                f"{name!r} is an attribute of {domain} ({attr.type}), not a capacity",
                f"use device.attributes[{_cel_str(domain)}].{name}",
            )
            return self.t(_DYN, node, origin="attribute", domain=domain, name=name)
        self.report_unknown(
            info.complete, "unknown-capacity", domain, name, offset, list(info.capacity)
        )
        return result

    def report_stale(
        self, stale: StaleName, domain: str, name: str, offset: int, where: str
    ) -> None:
        if stale.replacement:
            cel = stale.cel_replacement(domain)
            message = f"{where} {name!r} is not published by {domain}: use {stale.replacement}"
            if cel:
                message += f" ({cel})"
            message += f"; {stale.explanation}"
            hint = cel or f"use {stale.replacement}"
        else:
            message = f"{where} {name!r} is not published by {domain} (no replacement); {stale.explanation}"
            hint = f"an unguarded lookup of {name!r} fails at run time on every device"
        self.add("stale-name", offset, message, hint)

    def report_unknown(
        self, complete: bool, code: str, domain: str, name: str, offset: int, known: list[str]
    ) -> None:
        what = "attribute" if code == "unknown-attribute" else "capacity"
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.75 if complete else 0.85)
        lower = [k for k in known if k.lower() == name.lower()]
        for k in lower:
            if k not in close:
                close.insert(0, k)
        if not complete and not close:
            return
        elsewhere = []
        if what == "attribute":
            for other, info in self.catalog.domains.items():
                if other != domain and name in info.attributes:
                    elsewhere.append(f"{other}/{name}")
        if close:
            hint = "did you mean " + " or ".join(repr(c) for c in close) + "?"
        elif elsewhere:
            hint = "published as " + ", ".join(elsewhere)
        else:
            hint = f"{domain} publishes: {', '.join(sorted(known))}" if known else ""
        message = (
            f"{domain} publishes no {what} {name!r}; an unguarded lookup fails at run time"
            if complete
            else f"{name!r} is not a known {what} of {domain}; an unguarded lookup of a missing name fails at run time"
        )
        self.add(code, offset, message, hint, subject=f"{domain}/{name}")

    def check_driver(self, value: Any, offset: int) -> None:
        if not isinstance(value, str) or value in self.catalog.known_drivers():
            return
        hint = ""
        wrong = self.catalog.wrong_domain(value)
        similar = self.catalog.similar_domains(value)
        if wrong is not None:
            hint = f"did you mean {wrong.replacement!r}? {wrong.explanation}"
        elif similar:
            hint = "did you mean " + " or ".join(repr(s) for s in similar) + "?"
        self.add("unknown-driver", offset, f"no known DRA driver is called {value!r}", hint)

    # -- comparisons -------------------------------------------------------------
    def check_in(self, left: _T, right: _T) -> None:
        if left.origin == "driver" and right.kind == "list" and isinstance(right.literal, tuple):
            for item in right.literal:
                self.check_driver(item, right.start)
        if (
            left.kind in ("semver", "quantity")
            and right.kind == "list"
            and isinstance(right.literal, tuple)
        ):
            self.add(
                "type",
                left.start,
                f"{self.src(left)} is {_kind_text(left)}; 'in' compares it with literals of another type",
            )

    def check_compare(self, op: str, left: _T, right: _T) -> None:
        for a, b in ((left, right), (right, left)):
            if a.origin == "driver" and b.kind == "string" and b.is_literal:
                self.check_driver(b.literal, b.offset)
        # version and Quantity values
        for a, b, mirrored in ((left, right, False), (right, left, True)):
            if a.kind in ("semver", "quantity"):
                self.check_typed_compare(op if not mirrored else _MIRROR[op], a, b, mirrored)
                return
        # typed attributes against literals of another type
        for a, b in ((left, right), (right, left)):
            if a.origin == "attribute" and a.kind in ("string", "int", "bool") and b.is_literal:
                if not _compatible(a.kind, b.kind):
                    effect = (
                        "is never true"
                        if op in ("==", "!=")
                        else "fails at run time (no such overload)"
                    )
                    if op == "!=":
                        effect = "is always true"
                    self.add(
                        "type",
                        b.start,
                        f"{a.domain}/{a.name} is {a.kind}, compared with {_kind_text(b)}: the comparison {effect}",
                        _literal_hint(a.kind, b),
                    )
                    return
                if a.kind == "string" and a.values and op in ("==", "!=") and b.kind == "string":
                    self.check_value(a, b)
                return

    def check_value(self, attr: _T, literal: _T) -> None:
        value = literal.literal
        if value in attr.values:
            return
        same_case = [v for v in attr.values if v.lower() == str(value).lower()]
        close = same_case or difflib.get_close_matches(
            str(value), list(attr.values), n=2, cutoff=0.6
        )
        hint = (
            ("did you mean " + " or ".join(repr(c) for c in close) + "? values are case-sensitive")
            if close
            else ""
        )
        self.add(
            "unknown-value",
            literal.offset,
            f"{attr.domain}/{attr.name} is one of {', '.join(attr.values)}; it is never {value!r}",
            hint,
        )

    def check_typed_compare(self, op: str, a: _T, b: _T, mirrored: bool = False) -> None:
        """``a`` is a version or Quantity value, ``op`` written as ``a op b``.

        ``mirrored``: the source has ``b`` on the left (cel-go then asks ``b.Equal(a)``,
        which is false rather than an error).
        """
        is_version = a.kind == "semver"
        ctor = "semver" if is_version else "quantity"
        what = _kind_text(a)
        subject = self.src(a) or what
        if b.kind == a.kind or b.kind == _DYN:
            if op in ("==", "!="):
                return
            plural = "versions" if is_version else "Quantities"
            self.add(
                "type",
                a.start,
                f"{plural} have no {op} operator ({subject} {op} …): no such overload",
                f"{subject}.compareTo({self.src(b) or '…'}) {op} 0",
            )
            return
        if b.is_literal and b.kind in ("string", "int", "uint", "double"):
            literal = str(b.literal)
            if is_version:
                normalized = normalize_semver(literal)
                arg = normalized if is_semver(normalized) else literal
            else:
                arg = literal
            replacement = f"{ctor}({_cel_str(arg)})"
            if op in ("==", "!="):
                hint = f"{subject}.compareTo({replacement}) {op} 0"
            else:
                method = {"<": "isLessThan", ">": "isGreaterThan"}.get(op)
                hint = (
                    f"{subject}.{method}({replacement})"
                    if method
                    else f"{subject}.compareTo({replacement}) {op} 0"
                )
            if a.origin == "attribute":
                reason = f"{a.domain}/{a.name} is a version attribute (a semver value)"
            elif a.origin == "capacity":
                reason = f"{a.domain}/{a.name} is a capacity (a Quantity)"
            else:
                reason = f"{subject} is {what}"
            if not is_version:
                effect = "no such overload when Kubernetes compiles the selector"
            elif mirrored and op in ("==", "!="):
                effect = f"{_kind_text(b)} never equals a version, so this is always {'false' if op == '==' else 'true'}"
            else:
                effect = "no such overload at run time"
            self.add(
                "type",
                b.offset,
                f"{reason}, compared with {_kind_text(b)} {b.literal!r}: {effect}",
                hint,
            )
            return
        if b.kind in _SCALAR or b.kind in ("list", "map", "semver", "quantity"):
            self.add(
                "type",
                b.start,
                f"{subject} is {what}, compared with {_kind_text(b)}: no such overload",
                f"compare with {ctor}('…') using .compareTo()",
            )

    # -- calls -------------------------------------------------------------------
    def args_of(self, node: Any, index: int) -> list[Any]:
        if len(node.children) > index and hasattr(node.children[index], "data"):
            return list(node.children[index].children)
        return []

    def n_ident_arg(self, node: Any, scope: Mapping[str, _T]) -> _T:
        ident = node.children[0]
        name = str(ident.value)
        args = self.args_of(node, 1)
        if name == "has":
            return self.call_has(node, args, scope)
        if name in RESERVED_WORDS:
            self.add(
                "syntax", _start(node), f"{name!r} is a reserved word and cannot name a function"
            )
        typed = [self.infer(a, scope) for a in args]
        if name in _STRING_FUNCTIONS and typed and typed[0].kind not in ("string", _DYN):
            self.add(
                "type",
                typed[0].offset,
                f"found no matching overload for {name!r} applied to {_kind_text(typed[0])}; "
                "it takes a string",
            )
            return self.t("bool" if name.startswith("is") else _DYN, node, origin="call")
        if name == "matches" and len(typed) == 2:
            self.check_regex(typed[1])
        if name in ("semver", "quantity") and typed:
            self.check_ctor(name, typed)
            return self.t("semver" if name == "semver" else "quantity", node, origin="call")
        if name not in _GLOBAL_FUNCTIONS:
            close = [_FUNCTION_ALIASES[name]] if name in _FUNCTION_ALIASES else []
            close = close or difflib.get_close_matches(
                name, sorted(_GLOBAL_FUNCTIONS), n=2, cutoff=0.7
            )
            self.add(
                "unknown-function",
                int(ident.start_pos),
                f"the Kubernetes CEL environment has no function {name!r}",
                ("did you mean " + " or ".join(repr(c) for c in close) + "?") if close else "",
            )
            return self.t(_DYN, node)
        result = {
            "size": "int",
            "int": "int",
            "uint": "uint",
            "double": "double",
            "string": "string",
            "bytes": "bytes",
            "bool": "bool",
            "type": "type",
            "matches": "bool",
            "isSemver": "bool",
            "isQuantity": "bool",
            "isURL": "bool",
            "isIP": "bool",
            "isCIDR": "bool",
            "ip": "ip",
            "cidr": "cidr",
        }.get(name, _DYN)
        return self.t(result, node, origin="call")

    def check_ctor(self, name: str, typed: list[_T]) -> None:
        arg = typed[0]
        if arg.kind != "string" or not arg.is_literal:
            return
        text = str(arg.literal)
        offset = arg.offset
        if name == "quantity":
            if not is_quantity(text):
                self.add(
                    "invalid-literal",
                    offset,
                    f"quantity({text!r}) is not a Kubernetes quantity, so it fails at run time",
                    "write e.g. quantity('40Gi'), quantity('500m'), quantity('1k'); suffixes are case-sensitive",
                )
            return
        normalize = len(typed) > 1 and typed[1].literal is True
        if not is_semver(text, normalize):
            normalized = normalize_semver(text)
            hint = (
                f"semver({_cel_str(normalized)}) or semver({_cel_str(text)}, true)"
                if is_semver(normalized)
                else "a semantic version has three parts, e.g. semver('8.0.0')"
            )
            self.add(
                "invalid-literal",
                offset,
                f"semver({text!r}) is not a semantic version, so it fails at run time",
                hint,
            )

    def call_has(self, node: Any, args: list[Any], scope: Mapping[str, _T]) -> _T:
        if len(args) != 1:
            self.add("syntax", _start(node), "has() takes exactly one argument")
            return self.t("bool", node)
        inner = args[0]
        target = _unwrap(inner)
        if target is None or target.data != "member_dot":
            self.add(
                "syntax",
                _start(inner),
                "invalid argument to has(): it must be a field selection like has(x.name)",
                "write has(device.attributes['domain'].name)",
            )
        self.infer(inner, scope)
        return self.t("bool", node)

    def n_member_dot_arg(self, node: Any, scope: Mapping[str, _T]) -> _T:
        receiver_node, ident = node.children[0], node.children[1]
        name = str(ident.value)
        offset = int(ident.start_pos)
        args = self.args_of(node, 2)
        namespace = _namespace_of(receiver_node)
        if namespace is not None and namespace not in scope:
            if namespace == "cel" and name == "bind":
                return self.call_bind(node, args, scope)
            for a in args:
                self.infer(a, scope)
            qualified = f"{namespace}.{name}"
            if qualified not in _NAMESPACE_FUNCTIONS:
                close = difflib.get_close_matches(qualified, sorted(_NAMESPACE_FUNCTIONS), n=2)
                self.add(
                    "unknown-function",
                    _start(receiver_node),
                    f"the Kubernetes CEL environment has no function {qualified!r}",
                    ("did you mean " + " or ".join(repr(c) for c in close) + "?") if close else "",
                )
            return self.t(_NAMESPACE_FUNCTIONS.get(qualified, _DYN), node, origin="call")
        # macros bind variables
        n_vars = _macro_vars(name, args)
        if n_vars:
            receiver = self.infer(receiver_node, scope)
            if receiver.kind in _SCALAR | {"semver", "quantity"} and receiver.origin != "attribute":
                self.add(
                    "type",
                    receiver.start,
                    f"expression of type {_cel_type(receiver)!r} cannot be the range of a "
                    "comprehension (must be list, map, or dynamic)",
                )
            inner = dict(scope)
            for a in args[:n_vars]:
                inner[str(_ident_name(a))] = _T(_DYN)
            for a in args[n_vars:]:
                self.infer(a, inner)
            return self.t(
                "bool" if name in ("all", "exists", "exists_one", "existsOne") else _DYN, node
            )
        receiver = self.infer(receiver_node, scope)
        typed = [self.infer(a, scope) for a in args]
        return self.method(receiver, name, offset, typed, node)

    def call_bind(self, node: Any, args: list[Any], scope: Mapping[str, _T]) -> _T:
        if len(args) != 3 or _ident_name(args[0]) is None:
            self.add(
                "syntax",
                _start(node),
                "cel.bind() takes a variable name, a value and an expression",
            )
            for a in args:
                self.infer(a, scope)
            return self.t(_DYN, node)
        value = self.infer(args[1], scope)
        inner = dict(scope)
        inner[str(_ident_name(args[0]))] = value
        body = self.infer(args[2], inner)
        return dataclasses.replace(body, start=_start(node), end=_end(node))

    def check_regex(self, pattern: _T) -> None:
        """Kubernetes validates regular expression literals when it compiles
        (cel.ValidateRegexLiterals, since 1.29)."""
        if pattern.kind != "string" or not pattern.is_literal:
            return
        try:
            _regex(str(pattern.literal))
        except ValueError as exc:
            self.add(
                "syntax",
                pattern.offset,
                f"{exc} (in {pattern.literal!r})",
                "regular expressions are RE2 syntax; escape a literal [ as \\\\[",
            )

    def method(self, receiver: _T, name: str, offset: int, args: list[_T], node: Any) -> _T:
        kind = receiver.kind
        subject = self.src(receiver) or "value"
        if name in ("matches", "find", "findAll") and args:
            self.check_regex(args[0])
        if name not in _MEMBER_FUNCTIONS:
            close = [_FUNCTION_ALIASES[name]] if name in _FUNCTION_ALIASES else []
            close = close or difflib.get_close_matches(
                name, sorted(_MEMBER_FUNCTIONS), n=2, cutoff=0.7
            )
            self.add(
                "unknown-function",
                offset,
                f"the Kubernetes CEL environment has no function {name!r}",
                ("did you mean " + " or ".join(repr(c) for c in close) + "?") if close else "",
            )
            return self.t(_DYN, node)
        if kind == "semver":
            if name not in _SEMVER_METHODS:
                hint = "compare versions with .compareTo(semver('…')), or use .major()/.minor()/.patch()"
                self.add(
                    "type", offset, f"{subject} is a version (semver), which has no {name}()", hint
                )
                return self.t(_DYN, node)
            if name in ("isGreaterThan", "isLessThan", "compareTo"):
                self.check_method_arg("semver", subject, name, args)
            return self.t(_SEMVER_METHODS[name], node)
        if kind == "quantity":
            if name not in _QUANTITY_METHODS:
                hint = "compare with .compareTo(quantity('…')), or convert with .asInteger()/.asApproximateFloat()"
                self.add("type", offset, f"{subject} is a Quantity, which has no {name}()", hint)
                return self.t(_DYN, node)
            if name in ("isGreaterThan", "isLessThan", "compareTo"):
                self.check_method_arg("quantity", subject, name, args)
            return self.t(_QUANTITY_METHODS[name], node)
        if kind == "string":
            if name in _STRING_METHODS:
                return self.t(_STRING_METHODS[name], node)
            if name in _SEMVER_METHODS or name in _QUANTITY_METHODS:
                described = (
                    f"{receiver.domain}/{receiver.name}"
                    if receiver.origin == "attribute"
                    else subject
                )
                self.add(
                    "type",
                    offset,
                    f"{described} is a string, which has no {name}()",
                    f"convert first: semver({subject}, true).{name}(…) or quantity({subject}).{name}(…)",
                )
            return self.t(_DYN, node)
        if kind in ("int", "uint", "double", "bool") and (
            name in _STRING_METHODS or name in _SEMVER_METHODS
        ):
            if name != "size":
                self.add(
                    "type", offset, f"{subject} is {_kind_text(receiver)}, which has no {name}()"
                )
            return self.t(_DYN, node)
        return self.t(_DYN, node)

    def check_method_arg(self, kind: str, subject: str, name: str, args: list[_T]) -> None:
        if len(args) != 1:
            return
        arg = args[0]
        if arg.kind in (kind, _DYN):
            return
        ctor = "semver" if kind == "semver" else "quantity"
        if arg.is_literal and arg.kind in ("string", "int", "uint", "double"):
            text = str(arg.literal)
            if kind == "semver":
                normalized = normalize_semver(text)
                text = normalized if is_semver(normalized) else text
            hint = f"{subject}.{name}({ctor}({_cel_str(text)}))"
        else:
            hint = f"wrap the argument in {ctor}(…)"
        self.add(
            "type",
            arg.start,
            f"{name}() of a {'version' if kind == 'semver' else 'Quantity'} takes a {ctor}() value, not {_kind_text(arg)}",
            hint,
        )


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


def _unwrap(node: Any) -> Any:
    """The innermost node of a chain of single-child wrappers (expr → … → member)."""
    while hasattr(node, "data") and node.data in (
        "expr",
        "conditionalor",
        "conditionaland",
        "relation",
        "addition",
        "multiplication",
        "unary",
        "member",
        "primary",
    ):
        if len(node.children) != 1:
            return node
        node = node.children[0]
    return node if hasattr(node, "data") else None


def _ident_name(node: Any) -> str | None:
    inner = _unwrap(node)
    if inner is not None and inner.data == "ident":
        return str(inner.children[0].value)
    return None


def _namespace_of(receiver_node: Any) -> str | None:
    name = _ident_name(receiver_node)
    return name if name in _NAMESPACES else None


_COMPREHENSIONS = _MACROS_1VAR | _MACROS_2VAR | {"optMap", "optFlatMap"}
_MACROS_2VAR_ONLY = frozenset({"transformList", "transformMap", "transformMapEntry"})
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


def _macro_vars(method: str, args: list[Any]) -> int:
    """How many variables a comprehension macro call binds; 0 when it is no macro.

    One-variable macros take (x, expr) or, for map(), (x, filter, expr); the
    two-variable ones (ext.TwoVarComprehensions) take (k, v, expr) or, for the
    transforms, (k, v, filter, expr). optMap/optFlatMap take (x, expr).
    """
    n = len(args)
    if method in _MACROS_2VAR_ONLY:
        count = 2 if n in (3, 4) else 0
    elif method in ("all", "exists", "existsOne", "exists_one"):
        count = {2: 1, 3: 2}.get(n, 0)
    elif method == "map":
        count = 1 if n in (2, 3) else 0
    elif method in ("filter", "optMap", "optFlatMap"):
        count = 1 if n == 2 else 0
    else:
        return 0
    return count if count and all(_ident_name(a) for a in args[:count]) else 0


_DEVICE_MAPS = frozenset({"attributes", "capacity"})


def _device_depth(node: Any) -> int | None:
    """How deep into ``device`` a member chain reads: 1 ``device.attributes``,
    2 ``device.attributes[d]``, 3 an attribute value; None for anything else."""
    inner = _unwrap(node)
    if inner is None:
        return None
    if inner.data in ("member_dot", "member_index") and len(inner.children) == 2:
        receiver, key = inner.children
        if inner.data == "member_dot" and _ident_name(receiver) == "device":
            return 1 if str(key.value) in _DEVICE_MAPS else None
        depth = _device_depth(receiver)
        return depth + 1 if depth in (1, 2) else None
    return None


def estimate_cost(tree: Any) -> int:
    """A worst-case cost estimate in the spirit of cel-go's ``EstimateCost``.

    One unit for each operation, variable and member access; a comprehension costs
    its range once plus, for each element the range can hold, its condition and
    step. Range sizes are the API's bounds: 32 attributes or domains a device,
    64 values a list attribute (the bound Kubernetes' estimator assumes), the
    length of a list literal. The API server rejects a selector whose estimate
    exceeds :data:`COST_LIMIT` ("too complex, exceeds cost limit").
    """

    def est(node: Any) -> tuple[int, int | None]:
        if not hasattr(node, "data"):
            return 0, None
        data, children = node.data, node.children
        if data == "list_lit":
            elements = list(children[0].children) if children else []
            return sum(est(e)[0] for e in elements) + 10, len(elements)
        if data == "map_lit":
            entries = list(children[0].children) if children else []
            return sum(est(e)[0] for e in entries) + 30, len(entries) // 2
        if data in ("member_dot", "member_index"):
            depth = _device_depth(node)
            cost = sum(est(c)[0] for c in children) + 1
            if depth in (1, 2):
                return cost, MAX_ATTRIBUTES_PER_DEVICE
            if depth == 3:
                return cost, MAX_LIST_ATTRIBUTE_VALUES
            return cost, None
        if data == "member_dot_arg":
            receiver, method = children[0], str(children[1].value)
            args = list(children[2].children) if len(children) > 2 else []
            receiver_cost, size = est(receiver)
            if method in _COMPREHENSIONS and args:
                n = MAX_LIST_ATTRIBUTE_VALUES if size is None else size
                body = sum(est(a)[0] for a in args)
                return receiver_cost + 1 + n * (body + 2), n if method.startswith(
                    ("map", "filter", "transform")
                ) else None
            if method == "bind" and _ident_name(receiver) == "cel" and len(args) == 3:
                init, (body, body_size) = est(args[1]), est(args[2])
                return init[0] + body + 1, body_size
            cost = receiver_cost + sum(est(a)[0] for a in args) + 1
            if method in ("split", "includes"):
                cost += MAX_LIST_ATTRIBUTE_VALUES - 16
            return cost, (MAX_ATTRIBUTE_STRING if method == "split" else None)
        if data == "ident":
            return 1, None
        if data == "literal":
            return 0, None
        results = [est(c) for c in children]
        cost = sum(r[0] for r in results)
        if len(children) == 1:
            return cost, results[0][1] if results else None
        return cost + 1, None

    try:
        return est(tree)[0]
    except RecursionError:
        return COST_LIMIT + 1


def check_selector(expression: str) -> list[CelProblem]:
    """Problems in a CEL device selector, in order of their offset.

    Never raises for any input text. See :data:`PROBLEM_CODES` for the codes.
    """
    from dra_migrate.k8s.catalog import load_catalog

    problems: list[CelProblem] = []
    if not isinstance(expression, str):
        return [
            CelProblem(
                "syntax", 0, f"a CEL expression must be a string, got {type(expression).__name__}"
            )
        ]
    if len(expression) > MAX_EXPRESSION_LENGTH:
        problems.append(
            CelProblem(
                "too-long",
                MAX_EXPRESSION_LENGTH,
                f"the expression has {len(expression):,} characters; Kubernetes allows at most {MAX_EXPRESSION_LENGTH:,}",
                "split it into several selectors (they are ANDed) or use cel.bind to name repeated parts",
            )
        )
    try:
        tree = _parse(expression)
    except _ParseFailed as failed:
        issue = failed.issue
        problems.append(CelProblem("syntax", issue.offset, issue.message, issue.hint))
        return problems
    except RecursionError:
        problems.append(CelProblem("syntax", 0, "the expression is nested too deeply to parse"))
        return problems
    checker = _Checker(expression, load_catalog())
    try:
        result = checker.infer(tree, {})
    except RecursionError:
        checker.add("syntax", 0, "the expression is nested too deeply to check")
        result = _T(_DYN)
    cost = estimate_cost(tree)
    if cost > COST_LIMIT:
        checker.add(
            "too-complex",
            0,
            f"too complex: the estimated cost {cost:,} exceeds the API server's limit of "
            f"{COST_LIMIT:,}; Kubernetes rejects the object",
            "avoid nested comprehensions (all, exists, map, filter) over lists and maps",
        )
    if result.kind in _NOT_BOOL:
        checker.add(
            "not-bool",
            0,
            f"a selector must evaluate to bool, but this one is {_kind_text(result)}",
            "compare the value, e.g. device.attributes['gpu.nvidia.com'].type == 'gpu'",
        )
    problems.extend(checker.problems)
    problems.sort(key=lambda p: p.offset)
    return problems


# --------------------------------------------------------------------------
# evaluation (lazy: cel-python's evaluator with the Kubernetes functions)


@dataclass(frozen=True)
class _Runtime:
    evaluator: Any  # Evaluator subclass
    activation: Callable[[], Any]
    error_type: type[Exception]
    types: Any  # celpy.celtypes
    default_map: Any  # MapType whose missing keys read as an empty map


@functools.lru_cache(maxsize=1)
def _runtime() -> _Runtime:
    import celpy  # lazy
    from celpy import celtypes
    from celpy.evaluation import Activation, CELEvalError, Evaluator, base_functions

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
                if (isinstance(x, float) and math.isnan(x)) or (
                    isinstance(y, float) and math.isnan(y)
                ):
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
    functions: dict[str, Any] = dict(base_functions)
    functions.update(
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
        return (
            OptionalValue(FormatValue(str(name))) if str(name) in NAMED_FORMATS else OptionalValue()
        )

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

    class K8sEvaluator(Evaluator):
        """cel-python's evaluator plus cel.bind (cel-go ext.Bindings) and a cost budget.

        ``budget`` is shared with every nested evaluator (macros, cel.bind): each
        visited syntax node costs one unit and each string or list built by ``+``
        its length, so a runaway comprehension or a doubling string stops with
        :class:`_CostExceeded` instead of hanging or exhausting memory.
        """

        budget: list[int]

        def sub_evaluator(self, ast: Any) -> Any:
            nested = K8sEvaluator(ast, activation=self.activation)
            nested.budget = self.budget
            return nested

        def visit_children(self, tree: Any) -> Any:
            budget = self.budget
            budget[0] -= 1
            if budget[0] < 0:
                raise _CostExceeded
            return super().visit_children(tree)

        def addition(self, tree: Any) -> Any:
            result = super().addition(tree)
            if isinstance(result, (str, bytes, list)):
                self.budget[0] -= len(result)
                if self.budget[0] < 0:
                    raise _CostExceeded
            return result

        def operand(self, node: Any) -> Any:
            """A sub-expression's value; a raised CEL error becomes an error value."""
            try:
                return self.visit(node)
            except CELEvalError as exc:
                return exc

        def logical(self, tree: Any, absorbing: bool) -> Any:
            """``&&`` / ``||`` as cel-go has them: commutative, errors are values.

            ``false && x`` is false and ``true || x`` true whatever ``x`` is (an error
            included); otherwise an error operand is the result, the left one first.
            """
            symbol = "_||_" if absorbing else "_&&_"
            values = []
            for child in tree.children:
                value = self.operand(child)
                if isinstance(value, celtypes.BoolType) and bool(value) is absorbing:
                    return value
                values.append(value)
            for value in values:
                if not isinstance(value, (celtypes.BoolType, CELEvalError)):
                    return err(f"no such overload: {symbol}")
            for value in values:
                if isinstance(value, CELEvalError):
                    return value
            return celtypes.BoolType(not absorbing)

        def conditionalor(self, tree: Any) -> Any:
            if len(tree.children) != 2:
                return super().conditionalor(tree)
            return self.logical(tree, True)

        def conditionaland(self, tree: Any) -> Any:
            if len(tree.children) != 2:
                return super().conditionaland(tree)
            return self.logical(tree, False)

        def expr(self, tree: Any) -> Any:
            if len(tree.children) != 3:
                return super().expr(tree)
            condition = self.operand(tree.children[0])
            if isinstance(condition, CELEvalError):
                return condition
            if not isinstance(condition, celtypes.BoolType):
                return err("no such overload: _?_:_")
            return self.visit(tree.children[1] if condition else tree.children[2])

        def member_dot_arg(self, tree: Any) -> Any:
            receiver, method_token = tree.children[0], tree.children[1]
            method = str(method_token.value)
            args = list(tree.children[2].children) if len(tree.children) > 2 else []
            namespace = _namespace_of(receiver)
            if namespace == "cel" and method == "bind":
                return self.bind(args)
            if namespace is not None and f"{namespace}.{method}" in NAMESPACED:
                values = [self.operand(a) for a in args]
                for v in values:
                    if isinstance(v, CELEvalError):
                        return v
                try:
                    return NAMESPACED[f"{namespace}.{method}"](*values)
                except TypeError:
                    return err(f"no such overload: {namespace}.{method}")
            if namespace == "sets" and method in SET_FUNCTIONS:
                values = [self.operand(a) for a in args]
                for v in values:
                    if isinstance(v, CELEvalError):
                        return v
                if len(values) != 2 or any(kind(v) != "list" for v in values):
                    return err(f"no such overload: sets.{method}")
                return SET_FUNCTIONS[method](values[0], values[1])
            n_vars = _macro_vars(method, args)
            if n_vars:
                names = [str(_ident_name(a)) for a in args[:n_vars]]
                return self.comprehension(receiver, method, args, names)
            if method == "min" and not args:  # cel-python reads min() as a macro
                return LIBRARY_FUNCTIONS["min"](self.operand(receiver))
            return super().member_dot_arg(tree)

        def bind(self, args: list[Any]) -> Any:
            name = _ident_name(args[0]) if len(args) == 3 else None
            if name is None:
                return err("cel.bind() takes a variable name, a value and an expression")
            value = self.visit(args[1])
            if isinstance(value, CELEvalError):
                return value
            return self.nested(args[2], {name: value})

        def nested(self, node: Any, variables: dict[str, Any]) -> Any:
            """``node`` evaluated with ``variables`` bound; an error is a value."""
            try:
                return self.sub_evaluator(node).evaluate(variables)
            except CELEvalError as exc:
                return exc

        def comprehension(
            self, receiver: Any, method: str, args: list[Any], names: list[str]
        ) -> Any:
            """The comprehension macros, one- and two-variable (cel-go ext.TwoVarComprehensions).

            ``all``/``exists`` are commutative like ``&&``/``||``: a true (false) element
            decides, otherwise an error is the result. ``optMap``/``optFlatMap`` map an
            optional value.
            """
            target = self.operand(receiver)
            if isinstance(target, CELEvalError):
                return target
            if method in ("optMap", "optFlatMap"):
                if not isinstance(target, OptionalValue) or len(args) != 2:
                    return err(f"no such overload: {kind(target)}.{method}()")
                if not target.present:
                    return target
                mapped = self.nested(args[1], {names[0]: target.value})
                if method == "optMap" or isinstance(mapped, CELEvalError):
                    return mapped if isinstance(mapped, CELEvalError) else OptionalValue(mapped)
                return (
                    mapped
                    if isinstance(mapped, OptionalValue)
                    else err("optFlatMap: not an optional")
                )
            if kind(target) not in ("list", "map"):
                return err(f"got '{kind(target)}', expected iterable type")
            two = len(names) == 2
            if two:
                pairs = list(target.items()) if kind(target) == "map" else list(enumerate(target))
                elements = [{names[0]: self.key_value(k), names[1]: v} for k, v in pairs]
            else:
                elements = [{names[0]: x} for x in target]
            body = args[-1]
            condition = args[-2] if len(args) == (4 if two else 3) else None
            if method in ("all", "exists"):
                decisive = method == "exists"
                error = None
                for variables in elements:
                    v = self.nested(body, variables)
                    if isinstance(v, CELEvalError):
                        error = error or v
                    elif not isinstance(v, celtypes.BoolType):
                        return err(f"no such overload: {method}() of a {kind(v)} predicate")
                    elif bool(v) is decisive:
                        return celtypes.BoolType(decisive)
                return error or celtypes.BoolType(not decisive)
            if method in ("exists_one", "existsOne"):
                count = 0
                for variables in elements:
                    v = self.nested(body, variables)
                    if isinstance(v, CELEvalError):
                        return v
                    if not isinstance(v, celtypes.BoolType):
                        return err(f"no such overload: {method}() of a {kind(v)} predicate")
                    count += bool(v)
                return celtypes.BoolType(count == 1)
            results: list[tuple[dict[str, Any], Any]] = []
            for variables in elements:
                if condition is not None or method == "filter":
                    keep = self.nested(condition if condition is not None else body, variables)
                    if isinstance(keep, CELEvalError):
                        return keep
                    if not isinstance(keep, celtypes.BoolType):
                        return err(f"no such overload: {method}() of a {kind(keep)} filter")
                    if not keep:
                        continue
                    if method == "filter":
                        results.append((variables, variables[names[0]]))
                        continue
                v = self.nested(body, variables)
                if isinstance(v, CELEvalError):
                    return v
                results.append((variables, v))
            if method in ("map", "filter", "transformList"):
                return celtypes.ListType([v for _, v in results])
            if method == "transformMap":
                return celtypes.MapType({variables[names[0]]: v for variables, v in results})
            merged: dict[Any, Any] = {}
            for _, entry in results:  # transformMapEntry
                if kind(entry) != "map":
                    return err(
                        f"transformMapEntry: the expression must give a map, not {kind(entry)}"
                    )
                for k, v in entry.items():
                    if k in merged:
                        return err(f"insert failed: key {k} already exists")
                    merged[k] = v
            return celtypes.MapType(merged)

        @staticmethod
        def key_value(k: Any) -> Any:
            return celtypes.IntType(k) if type(k) is int else k

        def member_dot_opt(self, tree: Any) -> Any:
            """``x.?name``: optional.of(x.name) when x has the key, else optional.none()."""
            return self.optional_select(
                tree.children[0], celtypes.StringType(tree.children[1].value)
            )

        def member_index_opt(self, tree: Any) -> Any:
            key = self.operand(tree.children[1])
            if isinstance(key, CELEvalError):
                return key
            return self.optional_select(tree.children[0], key)

        def optional_select(self, receiver_node: Any, key: Any) -> Any:
            receiver = self.operand(receiver_node)
            if isinstance(receiver, CELEvalError):
                return receiver
            if isinstance(receiver, OptionalValue):
                if not receiver.present:
                    return receiver
                receiver = receiver.value
            if isinstance(receiver, DefaultMap):  # Kubernetes' device maps find every key
                return OptionalValue(receiver[key])
            if kind(receiver) == "map":
                return OptionalValue(receiver[key]) if key in receiver else OptionalValue()
            if kind(receiver) == "list" and kind(key) == "int":
                return (
                    OptionalValue(receiver[int(key)])
                    if 0 <= int(key) < len(receiver)
                    else OptionalValue()
                )
            return err(f"no such overload: optional selection on {kind(receiver)}")

        def member_dot(self, tree: Any) -> Any:
            """Field selection; on an optional value it stays optional (cel-go)."""
            receiver = self.operand(tree.children[0])
            if isinstance(receiver, OptionalValue):
                if not receiver.present:
                    return receiver
                inner = receiver.value
                name = str(tree.children[1].value)
                if kind(inner) != "map":
                    return err(f"no such overload: field selection on {kind(inner)}")
                if name not in inner and not isinstance(inner, DefaultMap):
                    return err(f"no such key: {name}")
                return OptionalValue(inner[name])
            if isinstance(receiver, CELEvalError):
                return receiver
            if isinstance(receiver, celtypes.MapType):
                name = str(tree.children[1].value)
                try:
                    return receiver[name]
                except KeyError:
                    return err(f"no such member in mapping: {name!r}")
            return super().member_dot(tree)

    class DefaultMap(celtypes.MapType):
        """A map whose missing keys read as an empty map (Kubernetes' unknown-domain rule)."""

        def __getitem__(self, key: Any) -> Any:
            try:
                return super().__getitem__(key)
            except KeyError:
                return celtypes.MapType({})

    functions.update(LIBRARY_FUNCTIONS)

    def activation() -> Any:
        return Activation(package=None, annotations={}, functions=functions)

    _ = celpy  # imported for its side effect of loading the package
    return _Runtime(
        evaluator=K8sEvaluator,
        activation=activation,
        error_type=CELEvalError,
        types=celtypes,
        default_map=DefaultMap,
    )


def _device_value(device: Device, rt: _Runtime) -> Any:
    ct = rt.types

    def value(domain: str, name: str, v: Any) -> Any:
        if isinstance(v, bool):
            return ct.BoolType(v)
        if isinstance(v, int):
            return ct.IntType(v)
        if isinstance(v, str):
            return ct.StringType(v)
        if isinstance(v, SemVer):
            return v
        if isinstance(v, InvalidVersion):
            raise CelEvaluationError(
                f"attribute {domain}/{name}: parse semantic version: {v.error}"
            )
        if isinstance(v, list):
            return ct.ListType([value(domain, name, item) for item in v])
        raise CelEvaluationError(f"attribute {domain}/{name}: unsupported attribute value {v!r}")

    attributes = rt.default_map(
        {
            ct.StringType(domain): ct.MapType(
                {ct.StringType(name): value(domain, name, v) for name, v in names.items()}
            )
            for domain, names in device.attributes.items()
        }
    )
    capacity_maps: dict[Any, Any] = {}
    for domain, names in device.capacity.items():
        inner: dict[Any, Any] = {}
        for name, text in names.items():
            try:
                inner[ct.StringType(name)] = parse_quantity(str(text))
            except ValueError as exc:
                raise CelEvaluationError(f"capacity {domain}/{name}: {exc}") from None
        capacity_maps[ct.StringType(domain)] = ct.MapType(inner)
    return ct.MapType(
        {
            ct.StringType("driver"): ct.StringType(device.driver),
            ct.StringType("attributes"): attributes,
            ct.StringType("capacity"): rt.default_map(capacity_maps),
        }
    )


_UNDECLARED_RE = re.compile(r"undeclared reference to '?([^' ]+)'?")


def _describe(error: Exception) -> str:
    args: tuple[Any, ...] = tuple(getattr(error, "args", ()))
    message = str(args[0]) if args else str(error)
    m = _UNDECLARED_RE.search(message)
    if m:
        return f"undeclared reference to '{m.group(1)}'"
    m = re.match(r"no such member in mapping: '(.*)'", message)
    if m:
        return f"no such key: {m.group(1)}"
    if message == "no such key" and len(args) > 2 and args[2]:
        return f"no such key: {args[2][0]}"
    if message.startswith("found no matching overload"):
        return "no such overload: " + message.split(" for ", 1)[-1].split(" applied", 1)[0].strip(
            "'"
        )
    return message


class _CostExceeded(Exception):
    """The runtime cost budget of one evaluation is spent."""


# Syntax nodes a cel-python evaluation may visit: cel-go's runtime limit is
# COST_LIMIT units, and one cel-go unit is several Lark nodes (the wrappers).
RUNTIME_NODE_BUDGET = 10 * COST_LIMIT


@dataclass
class SelectorProgram:
    """A selector compiled once and evaluated on many devices.

    A CEL expression is pure: its result depends only on what it reads of
    ``device``. When every read is a fixed path (``device.driver``,
    ``device.attributes["d"].name``, ``device.capacity["d"]["n"]``, inside
    ``has()`` or not), the result is cached per distinct tuple of those values,
    so a fleet of identical GPUs costs one evaluation. Any other use of
    ``device`` (iterating a map, a computed key) caches per whole device content.
    """

    expression: str
    tree: Any
    paths: tuple[tuple[str, ...], ...] | None
    refused: str | None = None  # why Kubernetes refuses the selector before evaluating it
    results: dict[Any, bool | str] = field(default_factory=dict)
    direct: _Fn | None = None  # the selector as a closure, when it has only the common shapes

    def key(self, device: Device) -> Any:
        if self.paths is None:
            return (
                device.driver,
                repr(sorted((d, sorted(n.items())) for d, n in device.attributes.items())),
                repr(sorted((d, sorted(n.items())) for d, n in device.capacity.items())),
            )
        key: list[Any] = []
        for path in self.paths:
            if path[0] == "driver":
                key.append(device.driver)
                continue
            table = device.attributes if path[0] == "attributes" else device.capacity
            names = table.get(path[1])
            if names is None or path[2] not in names:
                key.append(_ABSENT)
            else:
                value = names[path[2]]
                key.append((type(value).__name__, repr(value)))
        return tuple(key)

    def matches(self, device: Device) -> bool:
        """Like :func:`evaluate_selector`; raises :class:`CelEvaluationError`."""
        if self.refused is not None:
            raise CelEvaluationError(self.refused)
        shape = _device_shape(device)
        if shape == "broken":  # the whole device fails, whatever the selector reads
            return _evaluate_tree(self.tree, device)
        if self.direct is not None and shape == "plain":
            try:
                value = self.direct(device, {})
            except _Fallback:
                pass
            else:
                if value is True or value is False:
                    return value
                if isinstance(value, _Err):
                    raise CelEvaluationError(value.message)
        key = self.key(device)
        cached = self.results.get(key)
        if cached is None:
            try:
                cached = _evaluate_tree(self.tree, device)
            except CelEvaluationError as exc:
                cached = str(exc)
            if len(self.results) < 100_000:
                self.results[key] = cached
        if isinstance(cached, str):
            raise CelEvaluationError(cached)
        return cached


_ABSENT = ("absent",)


def _string_literal(node: Any) -> str | None:
    """The value of a string literal node (through wrappers); None for anything else."""
    inner = _unwrap(node)
    if inner is None or inner.data != "literal":
        return None
    token = inner.children[0]
    if token.type not in ("STRING_LIT", "MLSTRING_LIT"):
        return None
    return _decode_string(str(token.value))[0]


def _device_path(node: Any) -> tuple[str, ...] | None:
    """The fixed path of ``device`` a member node reads, or None.

    ``("driver",)`` for ``device.driver``; ``("attributes", domain, name)`` for
    ``device.attributes["domain"].name`` or ``...["name"]``; the same with
    ``"capacity"``.
    """
    if node.data not in ("member_dot", "member_index") or len(node.children) != 2:
        return None
    receiver, key = node.children
    if node.data == "member_dot" and _ident_name(receiver) == "device":
        return ("driver",) if str(key.value) == "driver" else None
    name = str(key.value) if node.data == "member_dot" else _string_literal(key)
    inner = _unwrap(receiver)
    if name is None or inner is None or inner.data != "member_index":
        return None
    table, domain = inner.children
    table_inner = _unwrap(table)
    domain_name = _string_literal(domain)
    if (
        domain_name is None
        or table_inner is None
        or table_inner.data != "member_dot"
        or _ident_name(table_inner.children[0]) != "device"
        or str(table_inner.children[1].value) not in _DEVICE_MAPS
    ):
        return None
    return (str(table_inner.children[1].value), domain_name, name)


def _read_paths(tree: Any) -> tuple[tuple[str, ...], ...] | None:
    """The fixed paths an expression reads of ``device``; None when it reads it otherwise."""
    paths: set[tuple[str, ...]] = set()

    def walk(node: Any) -> bool:
        if not hasattr(node, "data"):
            return True
        path = _device_path(node)
        if path is not None:
            paths.add(path)
            return True
        if node.data == "ident" and str(node.children[0].value) == "device":
            return False
        return all(walk(child) for child in node.children)

    try:
        return tuple(sorted(paths)) if walk(tree) else None
    except RecursionError:
        return None


# --------------------------------------------------------------------------
# the direct path: selectors compiled to Python closures
#
# cel-python walks the syntax tree for every device, about 0.7 ms a device,
# and building the device's CEL value costs a fifth of that again. Selectors
# that read values unique to each device (a uuid, a PCI bus ID) cannot share
# cached results, so a fleet of 10,000 GPUs cost seconds. The common shapes
# (fixed device paths, literals, comparisons, the logical operators, string
# tests, has(), semver/quantity comparisons) are compiled once into closures
# that read the Device directly. Anything else, and any value or error the
# closures do not model exactly, falls back to cel-python for that device, so
# both paths give the same answer (tests/cel/test_cel.py checks it on random
# selectors).


class _Unsupported(Exception):
    """A construct the direct path does not compile: use cel-python."""


class _Fallback(Exception):
    """A value or error the direct path does not model: evaluate with cel-python."""


class _Err:
    """A CEL error value (errors are values until they reach the top, as in cel-go)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


_Bindings = dict[str, Any]  # comprehension and cel.bind variables
_Fn = Callable[[Device, _Bindings], Any]


@functools.lru_cache(maxsize=4096)
def _capacity_quantity(text: str) -> Quantity | None:
    try:
        return parse_quantity(text)
    except ValueError:
        return None


def _device_shape(device: Device) -> str:
    """``plain`` when every value is one the direct path models exactly; ``broken``
    when a value fails the whole device (an invalid version, an unparsable
    capacity), as Kubernetes fails it; ``other`` (list attributes) otherwise."""
    shape = "plain"
    for caps in device.capacity.values():
        for text in caps.values():
            if _capacity_quantity(str(text)) is None:
                return "broken"
    for names in device.attributes.values():
        for v in names.values():
            t = type(v)
            if t is InvalidVersion:
                return "broken"
            if t not in (str, int, bool, SemVer):
                shape = "other"
    return shape


def _plain_kind(v: Any) -> str:
    t = type(v)
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is float:
        return "double"
    if t is str:
        return "string"
    if t is list:
        return "list"
    raise _Fallback


def _plain_equals(a: Any, b: Any) -> bool:
    """cel-go's ``a == b`` for the values the direct path has."""
    if isinstance(a, (SemVer, Quantity)):
        if type(a) is type(b):
            return bool(a == b)
        raise _Fallback  # no such overload: the slow path words the error
    if isinstance(b, (SemVer, Quantity)):
        return False
    ka, kb = _plain_kind(a), _plain_kind(b)
    if ka in _NUMERIC and kb in _NUMERIC:
        return bool(a == b)  # Python compares int and float exactly, NaN unequal
    if ka != kb:
        return False
    if ka == "list":
        return len(a) == len(b) and all(_plain_equals(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


_EMPTY_MAP: dict[str, Any] = {}

_ORDER_TESTS: dict[str, Callable[[int], bool]] = {
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
}


def _strict(fns: list[_Fn], op: Callable[..., Any]) -> _Fn:
    """A call of ``op`` on the operands' values; an operand's error is the result.

    ``op`` raises :class:`_Fallback` for operand types it does not model.
    """
    if len(fns) == 1:
        (only,) = fns

        def unary(d: Device, env: _Bindings) -> Any:
            v = only(d, env)
            return v if isinstance(v, _Err) else op(v)

        return unary
    first, second = fns

    def binary(d: Device, env: _Bindings) -> Any:
        a = first(d, env)
        if isinstance(a, _Err):
            return a
        b = second(d, env)
        return b if isinstance(b, _Err) else op(a, b)

    return binary


def _need(value: bool) -> None:
    if not value:
        raise _Fallback


def _not(v: Any) -> bool:
    _need(type(v) is bool)
    return not v


def _ordering(test: Callable[[int], bool]) -> Callable[[Any, Any], bool]:
    def compare(a: Any, b: Any) -> bool:
        ka, kb = _plain_kind(a), _plain_kind(b)
        if ka in _NUMERIC and kb in _NUMERIC:
            if a != a or b != b:  # NaN
                return False
        else:
            _need(ka == kb and ka in ("string", "bool"))
        return test((a > b) - (a < b))

    return compare


def _string_test(test: Callable[[str, str], bool]) -> Callable[[Any, Any], bool]:
    def f(s: Any, a: Any) -> bool:
        _need(type(s) is str and type(a) is str)
        return test(s, a)

    return f


def _typed_compare(result: Callable[[int], Any]) -> Callable[[Any, Any], Any]:
    def f(a: Any, b: Any) -> Any:
        if isinstance(a, SemVer) and isinstance(b, SemVer):
            return result(a.compare(b))
        if isinstance(a, Quantity) and isinstance(b, Quantity):
            return result(a.compare(b))
        raise _Fallback

    return f


_STRING_TESTS: dict[str, Callable[[str, str], bool]] = {
    "startsWith": str.startswith,
    "endsWith": str.endswith,
    "contains": str.__contains__,
}


def _ascii_case(offset: int, low: str, high: str) -> Callable[[Any], str]:
    """lowerAscii/upperAscii: only ASCII letters change, as in cel-go."""

    def f(s: Any) -> str:
        _need(type(s) is str)
        return "".join(chr(ord(c) + offset) if low <= c <= high else c for c in s)

    return f


def _size(v: Any) -> int:
    _need(type(v) in (str, list, dict))
    return len(v)


_STRING_FUNCTIONS_DIRECT: dict[str, Callable[[Any], Any]] = {
    "lowerAscii": _ascii_case(32, "A", "Z"),
    "upperAscii": _ascii_case(-32, "a", "z"),
    "size": _size,
}
_TYPED_COMPARES: dict[str, Callable[[int], Any]] = {
    "compareTo": lambda c: c,
    "isGreaterThan": lambda c: c > 0,
    "isLessThan": lambda c: c < 0,
}


class _DirectCompiler:
    """Compile a Lark CEL tree into a closure ``(device, variables) -> value | _Err``."""

    def __init__(self) -> None:
        self.scope: set[str] = set()  # variables bound by comprehensions and cel.bind

    def compile(self, node: Any) -> _Fn:
        if not hasattr(node, "data"):
            raise _Unsupported
        path = _device_path(node)
        if path is not None:
            return self.read(path)
        method = getattr(self, "c_" + str(node.data), None)
        if method is None:
            raise _Unsupported
        fn: _Fn = method(node)
        return fn

    def single(self, node: Any) -> _Fn:
        if len(node.children) != 1:
            raise _Unsupported
        return self.compile(node.children[0])

    c_member = single
    c_primary = single
    c_paren_expr = single
    c_addition = single  # arithmetic is left to cel-python (overflow, types)
    c_multiplication = single

    def c_expr(self, node: Any) -> _Fn:
        if len(node.children) == 1:
            return self.compile(node.children[0])
        cond, yes, no = (self.compile(c) for c in node.children)

        def ternary(d: Device, env: _Bindings) -> Any:
            c = cond(d, env)
            if isinstance(c, _Err):
                return c
            _need(type(c) is bool)
            return yes(d, env) if c else no(d, env)

        return ternary

    def c_conditionalor(self, node: Any) -> _Fn:
        return self.logical(node, True)

    def c_conditionaland(self, node: Any) -> _Fn:
        return self.logical(node, False)

    def logical(self, node: Any, absorbing: bool) -> _Fn:
        """``||`` (true absorbs) or ``&&`` (false absorbs), commutative as in cel-go."""
        if len(node.children) == 1:
            return self.compile(node.children[0])
        left, right = (self.compile(c) for c in node.children)

        def op(d: Device, env: _Bindings) -> Any:
            a = left(d, env)
            if a is absorbing:
                return a
            _need(a is (not absorbing) or isinstance(a, _Err))
            b = right(d, env)
            if b is absorbing:
                return b
            _need(b is (not absorbing) or isinstance(b, _Err))
            return a if isinstance(a, _Err) else b

        return op

    def c_unary(self, node: Any) -> _Fn:
        if len(node.children) == 1:
            return self.compile(node.children[0])
        op, operand_node = node.children
        if op.data != "unary_not":
            raise _Unsupported
        return _strict([self.compile(operand_node)], _not)

    def c_relation(self, node: Any) -> _Fn:
        if len(node.children) == 1:
            return self.compile(node.children[0])
        op_node, right_node = node.children
        symbol = _COMPARE_OPS[str(op_node.data)]
        if symbol == "in":
            return self.membership(op_node.children[0], right_node)
        operands = [self.compile(op_node.children[0]), self.compile(right_node)]
        if symbol == "==":
            return _strict(operands, _plain_equals)
        if symbol == "!=":
            return _strict(operands, lambda a, b: not _plain_equals(a, b))
        return _strict(operands, _ordering(_ORDER_TESTS[symbol]))

    def membership(self, element_node: Any, container_node: Any) -> _Fn:
        element = self.compile(element_node)
        container = _unwrap(container_node)
        if container is not None and container.data == "list_lit":

            def in_list(x: Any, values: list[Any]) -> bool:
                _need(not isinstance(x, (SemVer, Quantity)))
                return any(_plain_equals(x, v) for v in values)

            return _strict([element, self.c_list_lit(container)], in_list)
        if (
            container is not None
            and container.data == "member_dot"
            and _ident_name(container.children[0]) == "device"
            and str(container.children[1].value) in _DEVICE_MAPS
        ):
            table = str(container.children[1].value)

            def in_table(d: Device, env: _Bindings) -> Any:
                x = element(d, env)
                if isinstance(x, _Err):
                    return x
                _need(type(x) is str)
                return x in (d.attributes if table == "attributes" else d.capacity)

            return in_table
        raise _Unsupported

    def c_literal(self, node: Any) -> _Fn:
        token = node.children[0]
        text = str(token.value)
        value: Any
        if token.type in ("STRING_LIT", "MLSTRING_LIT"):
            value = _decode_string(text)[0]
        elif token.type == "INT_LIT":
            value = _int_literal(text)
            if value is None or not INT64_MIN <= value <= INT64_MAX:
                raise _Unsupported
        elif token.type == "FLOAT_LIT":
            value = float(text)
        elif token.type == "BOOL_LIT":
            value = text == "true"
        else:
            raise _Unsupported
        return lambda d, env: value

    def c_list_lit(self, node: Any) -> _Fn:
        items = [self.compile(c) for c in (node.children[0].children if node.children else [])]

        def build(d: Device, env: _Bindings) -> Any:
            values = [item(d, env) for item in items]
            for v in values:
                if isinstance(v, _Err):
                    return v
            return values

        return build

    def read(self, path: tuple[str, ...]) -> _Fn:
        if path[0] == "driver":
            return lambda d, env: d.driver
        table, domain, name = path
        missing = _Err(f"no such key: {name}")
        if table == "attributes":

            def attribute(d: Device, env: _Bindings) -> Any:
                names = d.attributes.get(domain)
                if names is None or name not in names:
                    return missing
                return names[name]

            return attribute

        def capacity(d: Device, env: _Bindings) -> Any:
            caps = d.capacity.get(domain)
            if caps is None or name not in caps:
                return missing
            return _capacity_quantity(str(caps[name]))

        return capacity

    def c_ident(self, node: Any) -> _Fn:
        name = str(node.children[0].value)
        if name not in self.scope:
            raise _Unsupported  # device on its own, undeclared names: cel-python words them
        return lambda d, env: env[name]

    def c_member_index(self, node: Any) -> _Fn:
        receiver_node, key_node = node.children
        key = self.compile(key_node)
        inner = _unwrap(receiver_node)
        if (
            inner is not None
            and inner.data == "member_dot"
            and _ident_name(inner.children[0]) == "device"
            and str(inner.children[1].value) == "attributes"
        ):
            # device.attributes[domain]: an unknown domain is an empty map

            def domain_map(d: Device, env: _Bindings) -> Any:
                k = key(d, env)
                if isinstance(k, _Err):
                    return k
                _need(type(k) is str)
                return d.attributes.get(k, _EMPTY_MAP)

            return domain_map

        def index(r: Any, k: Any) -> Any:
            _need(type(r) is dict and type(k) is str)
            return r[k] if k in r else _Err(f"no such key: {k}")

        return _strict([self.compile(receiver_node), key], index)

    def attribute_map(self, receiver_node: Any) -> _Fn:
        """A receiver that must be an attribute map (``device`` itself is not one here)."""
        if _ident_name(receiver_node) == "device" or _namespace_of(receiver_node) is not None:
            raise _Unsupported
        return self.compile(receiver_node)

    def c_member_dot(self, node: Any) -> _Fn:
        receiver_node, ident = node.children
        missing = _Err(f"no such key: {ident.value}")
        name = str(ident.value)

        def field(r: Any) -> Any:
            _need(type(r) is dict)
            return r.get(name, missing)

        return _strict([self.attribute_map(receiver_node)], field)

    def scoped(self, var_node: Any, body_node: Any) -> tuple[str, _Fn]:
        """A variable's name and the body compiled with the variable in scope."""
        var = _ident_name(var_node)
        if var is None or var == "device" or var in _NAMESPACES or var in self.scope:
            raise _Unsupported
        self.scope.add(var)
        try:
            return var, self.compile(body_node)
        finally:
            self.scope.discard(var)

    def comprehension(self, node: Any, method: str, args: list[Any]) -> _Fn:
        receiver = self.compile(node.children[0])
        var, predicate = self.scoped(args[0], args[1])
        one = method in ("exists_one", "existsOne")
        absorbing = method == "exists"  # exists stops at true, all at false

        def loop(d: Device, env: _Bindings) -> Any:
            r = receiver(d, env)
            if isinstance(r, _Err):
                return r
            _need(type(r) in (dict, list))  # otherwise cel-python words the error
            inner = dict(env)
            error = None
            count = 0
            for x in r:
                inner[var] = x
                v = predicate(d, inner)
                if isinstance(v, _Err):
                    if one:
                        return v
                    error = error or v
                    continue
                _need(type(v) is bool)
                if one:
                    count += v
                elif v is absorbing:
                    return v
            if one:
                return count == 1
            return error or (not absorbing)

        return loop

    def bind(self, args: list[Any]) -> _Fn:
        init = self.compile(args[1])
        var, body = self.scoped(args[0], args[2])

        def bound(d: Device, env: _Bindings) -> Any:
            value = init(d, env)
            _need(not isinstance(value, _Err))
            inner = dict(env)
            inner[var] = value
            return body(d, inner)

        return bound

    def presence(self, target: Any) -> _Fn:
        """``has(x.name)`` on a map value (a bound attribute map)."""
        receiver_node, ident = target.children
        name = str(ident.value)

        def has(r: Any) -> bool:
            _need(type(r) is dict)
            return name in r

        return _strict([self.attribute_map(receiver_node)], has)

    def c_ident_arg(self, node: Any) -> _Fn:
        name = str(node.children[0].value)
        args = list(node.children[1].children) if len(node.children) > 1 else []
        if name == "has" and len(args) == 1:
            target = _unwrap(args[0])
            if target is None or target.data != "member_dot":
                raise _Unsupported
            path = _device_path(target)
            if path is None:
                return self.presence(target)
            if path[0] == "driver":
                raise _Unsupported
            table, domain, key = path

            def has(d: Device, env: _Bindings) -> Any:
                names = (d.attributes if table == "attributes" else d.capacity).get(domain)
                return names is not None and key in names

            return has
        if name in ("semver", "quantity") and args:
            return self.constant_ctor(name, args)
        raise _Unsupported

    def constant_ctor(self, name: str, args: list[Any]) -> _Fn:
        """``semver("…"[, bool])`` or ``quantity("…")`` of literals: the value (or its
        error) is computed once."""
        text = _string_literal(args[0])
        normalize = False
        if len(args) == 2:
            flag = _unwrap(args[1])
            if flag is None or flag.data != "literal" or flag.children[0].type != "BOOL_LIT":
                raise _Unsupported
            normalize = str(flag.children[0].value) == "true"
        if text is None or len(args) > (2 if name == "semver" else 1):
            raise _Unsupported
        value: Any
        try:
            value = SemVer.parse(text, normalize) if name == "semver" else parse_quantity(text)
        except ValueError as exc:
            value = _Err(str(exc))
        return lambda d, env: value

    def c_member_dot_arg(self, node: Any) -> _Fn:
        receiver_node, ident = node.children[0], node.children[1]
        method = str(ident.value)
        arg_nodes = list(node.children[2].children) if len(node.children) > 2 else []
        namespace = _namespace_of(receiver_node)
        if namespace == "cel" and method == "bind" and len(arg_nodes) == 3:
            return self.bind(arg_nodes)
        if namespace is not None:
            raise _Unsupported
        if method in ("all", "exists", "exists_one", "existsOne") and len(arg_nodes) == 2:
            return self.comprehension(node, method, arg_nodes)
        if not arg_nodes and method in _STRING_FUNCTIONS_DIRECT:
            return _strict([self.compile(receiver_node)], _STRING_FUNCTIONS_DIRECT[method])
        if len(arg_nodes) != 1:
            raise _Unsupported
        operands = [self.compile(receiver_node), self.compile(arg_nodes[0])]
        if method in _STRING_TESTS:
            return _strict(operands, _string_test(_STRING_TESTS[method]))
        if method in _TYPED_COMPARES:
            return _strict(operands, _typed_compare(_TYPED_COMPARES[method]))
        if method == "matches":
            pattern = _string_literal(arg_nodes[0])
            if pattern is None:
                raise _Unsupported
            try:
                search = _regex(pattern).search
            except ValueError:
                raise _Unsupported from None
            return _strict(operands, _string_test(lambda s, _: search(s) is not None))
        raise _Unsupported


def _direct(tree: Any) -> _Fn | None:
    """The selector compiled to a closure, or None when it needs cel-python."""
    try:
        return _DirectCompiler().compile(tree)
    except (_Unsupported, RecursionError):
        return None


@functools.lru_cache(maxsize=1024)
def compile_selector(expression: str) -> SelectorProgram:
    """Parse ``expression`` once; raises :class:`CelEvaluationError` on a syntax error."""
    try:
        tree = _parse(expression)
    except _ParseFailed as failed:
        raise CelEvaluationError(
            f"syntax error at offset {failed.issue.offset}: {failed.issue.message}"
        ) from None
    except RecursionError:
        raise CelEvaluationError("expression nested too deeply") from None
    cost = estimate_cost(tree)
    refused = None
    if cost > COST_LIMIT:
        refused = f"too complex: estimated cost {cost:,} exceeds the limit of {COST_LIMIT:,}"
    return SelectorProgram(expression, tree, _read_paths(tree), refused, direct=_direct(tree))


def _evaluate_tree(tree: Any, device: Device) -> bool:
    rt = _runtime()
    device_value = _device_value(device, rt)
    evaluator = rt.evaluator(ast=tree, activation=rt.activation())
    evaluator.budget = [RUNTIME_NODE_BUDGET]
    try:
        result = evaluator.evaluate({"device": device_value})
    except _CostExceeded:
        raise CelEvaluationError(
            "actual cost limit exceeded: the evaluation is more expensive than Kubernetes allows"
        ) from None
    except rt.error_type as exc:
        raise CelEvaluationError(_describe(exc)) from None
    except RecursionError:
        raise CelEvaluationError("expression nested too deeply") from None
    except MemoryError:
        raise CelEvaluationError("actual cost limit exceeded: out of memory") from None
    except Exception as exc:  # cel-python's own failures (e.g. IndexError on `has()`)
        raise CelEvaluationError(f"cannot evaluate: {type(exc).__name__}: {exc}") from None
    if not isinstance(result, rt.types.BoolType):
        raise CelEvaluationError(f"a selector must evaluate to bool, not {type(result).__name__}")
    return bool(result)


def evaluate_selector(expression: str, device: Device) -> bool:
    """Evaluate a CEL device selector for ``device`` as the Kubernetes scheduler would.

    Raises :class:`CelEvaluationError` for syntax errors and CEL runtime errors
    (for example a missing attribute looked up without ``has()``, or the runtime
    cost limit), and when the result is not a bool. Compiled programs and results
    are cached (see :class:`SelectorProgram`), so evaluating one selector on many
    devices parses it once.
    """
    return compile_selector(expression).matches(device)
