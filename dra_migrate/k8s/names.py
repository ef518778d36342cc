"""Kubernetes' name and number rules, as the API server checks them
(k8s.io/apimachinery/pkg/util/validation): one home for every module that checks a
name, a label or an int64 field."""

from __future__ import annotations

import re

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")  # RFC 1123 label, IsDNS1123Label
DNS_SUBDOMAIN = re.compile(DNS_LABEL.pattern + r"(\." + DNS_LABEL.pattern + r")*")
C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")  # a qualified name's name
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

MAX_DNS_LABEL = 63
MAX_DNS_SUBDOMAIN = 253
MAX_LABEL_NAME = 63

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # what the API server stores in an int64 field
UINT64_MAX = 2**64 - 1


def is_dns_label(value: str) -> bool:
    return len(value) <= MAX_DNS_LABEL and DNS_LABEL.fullmatch(value) is not None


def is_dns_subdomain(value: str) -> bool:
    return len(value) <= MAX_DNS_SUBDOMAIN and DNS_SUBDOMAIN.fullmatch(value) is not None


def qualified_key_problem(key: str) -> str | None:
    """Why ``key`` is not a label or annotation key ([prefix/]name), as the API server checks it."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or not is_dns_subdomain(prefix)):
        return "its prefix is not a lower-case DNS subdomain"
    if not name or len(name) > MAX_LABEL_NAME or not LABEL_NAME.fullmatch(name):
        return (
            "its name part is not at most 63 alphanumeric characters, '-', '_' or '.', "
            "starting and ending with an alphanumeric character"
        )
    return None
