"""Values of the Kubernetes CEL libraries as Python objects: ``Quantity``, ``SemVer``
(blang/semver rules), optional values, ``net.IP``/``net.CIDR``, ``kubernetes.URL``,
and RE2 patterns compiled once.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

# --------------------------------------------------------------------------
# Kubernetes Quantity


@functools.total_ordering
@dataclass(frozen=True, slots=True, eq=False)
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


@dataclass(frozen=True, slots=True, eq=False)
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


@dataclass(frozen=True, slots=True)
class InvalidVersion:
    """A ``version`` attribute value from a ResourceSlice that is not a semantic version."""

    text: str
    error: str


# --------------------------------------------------------------------------
# Values of the Kubernetes CEL libraries beyond semver and quantity: optional
# (cel-go's OptionalTypes), net.IP and net.CIDR (k8s.io/apiserver library.IP/CIDR)


_NO_VALUE = object()


@dataclass(frozen=True, slots=True, eq=False)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


def _cut(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
