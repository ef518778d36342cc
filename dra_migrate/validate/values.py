"""Names and values as the API server checks them in DRA objects: each function says
why a name or value is not valid (None when it is), or decodes a quantity."""

from __future__ import annotations

from yaml.nodes import Node, ScalarNode

from dra_migrate.k8s.names import (
    C_IDENTIFIER,
    DNS_LABEL,
    DNS_SUBDOMAIN,
    LABEL_VALUE,
    qualified_key_problem,
)
from dra_migrate.k8s.quantity import parse_quantity
from dra_migrate.manifests import trees
from dra_migrate.manifests.trees import scalar

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from fractions import Fraction

MAX_DOMAIN = 63  # resourceapi.DeviceMaxDomainLength
MAX_ID = 64  # resourceapi.DeviceMaxIDLength
MAX_POOL_NAME = 253


def fully_qualified_name_problem(name: str) -> str | None:
    """Why ``name`` is not a FullyQualifiedName (domain/identifier), as the API server checks it."""
    domain, slash, ident = name.partition("/")
    if not slash:
        return "must be a qualified name, domain/name"
    if not domain or len(domain) > MAX_DOMAIN or not DNS_SUBDOMAIN.fullmatch(domain):
        return f"has a domain that is not a DNS subdomain of at most {MAX_DOMAIN} characters"
    if len(ident) > MAX_ID or not C_IDENTIFIER.fullmatch(ident):
        return f"has a name that is not a C identifier of at most {MAX_ID} characters"
    return None


def extended_resource_problem(name: str) -> str | None:
    """Why ``name`` is not an extended resource name (domain-prefixed, not kubernetes.io)."""
    prefix, slash, _ = name.partition("/")
    if not slash:
        return "it needs a domain prefix"
    if (
        prefix == "kubernetes.io"
        or prefix.endswith(".kubernetes.io")
        or prefix.startswith("requests.")
    ):
        return "the kubernetes.io domain and the requests. prefix are reserved"
    return qualified_key_problem(name)


def driver_name_problem(name: str) -> str | None:
    """A driver name (CSI driver rules): a DNS subdomain of at most 63 characters, any case."""
    if not name:
        return "is empty"
    if len(name) > 63 or not DNS_SUBDOMAIN.fullmatch(name.lower()):
        return "is not a DNS subdomain of at most 63 characters"
    return None


def qualified_name_problem(name: str) -> str | None:
    """An attribute or capacity name: a C identifier of at most 64 characters, optionally
    after a domain (a driver name) and a slash."""
    parts = name.split("/")
    if len(parts) > 2:
        return "must not contain more than one slash"
    if len(parts) == 2:
        domain, ident = parts
        if driver_name_problem(domain):
            return "has a domain that is not a DNS subdomain of at most 63 characters"
    else:
        ident = parts[0]
    if len(ident) > 64 or not C_IDENTIFIER.fullmatch(ident):
        return "has a name that is not a C identifier of at most 64 characters"
    return None


def label_value_problem(value: str) -> str | None:
    if len(value) > 63 or not LABEL_VALUE.fullmatch(value):
        return (
            "is not empty or at most 63 alphanumeric characters, '-', '_' or '.', starting "
            "and ending with an alphanumeric character"
        )
    return None


def pool_name_problem(name: str) -> str | None:
    if not name:
        return "is empty"
    if len(name) > MAX_POOL_NAME:
        return f"is longer than {MAX_POOL_NAME} characters"
    if any(len(p) > 253 or not DNS_SUBDOMAIN.fullmatch(p) for p in name.split("/")):
        return "is not DNS subdomains separated by slashes"
    return None


def node_name_problem(name: str) -> str | None:
    if not name or len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
        return "is not a node name (a lower-case DNS subdomain)"
    return None


def class_name_problem(name: str) -> str | None:
    if not name or len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
        return "is not a lower-case DNS subdomain"
    return None


def device_name_problem(name: str) -> str | None:
    if not name or len(name) > 63 or not DNS_LABEL.fullmatch(name):
        return "is not a DNS label"
    return None


def quantity(node: Node | None) -> Fraction | None:
    """A quantity as the API server decodes it (a string or a number), None if not one."""
    if not isinstance(node, ScalarNode):
        return None
    value = trees.to_data(node)
    if isinstance(value, bool) or value is None:
        return None
    text = (
        value if isinstance(value, str) else repr(value) if isinstance(value, float) else str(value)
    )
    if isinstance(value, float) and "e" in text:
        text = text.replace("e+", "e")
    return parse_quantity(text)


def scalar_text(node: Node | None) -> str:
    return scalar(node) or ""
