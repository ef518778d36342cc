"""Generated names: the pod's claim, each device request and the
ResourceClaimTemplate, unique and valid DNS names (a short hash where one is cut or
taken, DRA210), and the workload names and namespaces the API server would refuse
(DRA109), which are never copied into generated objects."""

from __future__ import annotations

import itertools
import re

from yaml.nodes import MappingNode

from dra_migrate.k8s.names import DNS_LABEL
from dra_migrate.manifests import trees
from dra_migrate.manifests.locate import PodSite, Workload
from dra_migrate.manifests.trees import get, items, scalar
from dra_migrate.report.findings import Finding, escape, finding, has_unsafe

# ``${VAR}`` and ``{{ ... }}``: placeholders a user's pipeline substitutes later
PLACEHOLDER = re.compile(r"\$\{[^}]*\}|\{\{.*?\}\}")


class Names:
    """Generated names taken so far in one stream, per namespace."""

    def __init__(self) -> None:
        self.taken: set[tuple[str, str]] = set()

    def reserve(self, namespace: str | None, name: str) -> None:
        self.taken.add((namespace or "", name))

    def free(self, namespace: str | None, name: str) -> bool:
        return (namespace or "", name) not in self.taken


def short_hash(text: str) -> str:
    import hashlib  # lazy: loading OpenSSL costs start-up time, and few names need a hash

    return hashlib.sha256(text.encode()).hexdigest()[:6]


def dns_label(text: str, limit: int = 63) -> str:
    clean = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-") or "ctr"
    clean = re.sub(r"-{2,}", "-", clean)
    if clean == text and len(clean) <= limit:
        return clean
    if len(clean) <= limit and DNS_LABEL.fullmatch(clean):
        return clean
    return clean[: limit - 7].rstrip("-") + "-" + short_hash(text)


def unique(name: str, used: set[str]) -> str:
    if name not in used:
        return name
    for i in itertools.count(2):
        candidate = f"{name[: 63 - len(str(i)) - 1]}-{i}"
        if candidate not in used:
            return candidate
    raise AssertionError("unreachable")  # pragma: no cover


def claim_name(pod: MappingNode) -> str:
    taken = {scalar(get(c, "name")) for c in items(get(pod, "resourceClaims"))}
    for candidate in ("gpu", "gpus"):
        if candidate not in taken:
            return candidate
    return unique("gpu", {t for t in taken if t})


def template_name(
    workload: Workload,
    site: PodSite,
    names: Names,
    path: str,
    findings: list[Finding],
    reserved: frozenset[tuple[str, str]] = frozenset(),
) -> str:
    base = workload.name.rstrip("-") or workload.kind.lower()
    wanted = "-".join(p for p in (base, site.label, "gpu") if p)
    name = dns_subdomain(wanted)
    if (workload.namespace or "", name) in reserved:  # defined or generated in another file
        name = dns_subdomain(f"{wanted}-{short_hash(path + workload.display + site.path)}")
    elif not names.free(workload.namespace, name):
        name = dns_subdomain(f"{wanted}-{short_hash(workload.display + site.path)}")
    if name != wanted:
        line, col = workload.position
        findings.append(
            finding(
                "DRA210",
                path,
                line,
                col,
                f"ResourceClaimTemplate for {workload.display} is named {name!r} "
                f"instead of {wanted!r}",
                "names must be unique, lower-case DNS subdomains of at most 253 characters",
            )
        )
    names.reserve(workload.namespace, name)
    return name


def invalid_names(workload: Workload, path: str) -> Finding | None:
    """A name or namespace the API server would refuse, and that the conversion would
    copy into generated text: refused (DRA109) rather than copied or guessed at."""
    meta = get(workload.root, "metadata")
    namespace = workload.namespace
    if has_unsafe(workload.name):
        node = get(meta, "name")
        message = (
            f"{workload.kind} name {workload.name!r} holds a line break, control or "
            "bidirectional character; Kubernetes refuses it, and it is not copied into "
            "generated objects"
        )
        hint = "give the workload a DNS subdomain name"
    elif namespace and not _valid_namespace(namespace):
        node = get(meta, "namespace")
        message = (
            f"namespace {namespace!r} of {workload.kind} {escape(workload.name)} is not a "
            "lower-case DNS label of at most 63 characters; Kubernetes refuses it, and it "
            "is not copied into the generated ResourceClaimTemplate"
        )
        hint = "fix the namespace"
    else:
        return None
    line, col = trees.position(node) if node is not None else workload.position
    return finding("DRA109", path, line, col, message, hint)


def _valid_namespace(namespace: str) -> bool:
    """A DNS label, where ``${VAR}`` and ``{{ ... }}`` placeholders may stand for parts."""
    if has_unsafe(namespace):
        return False
    holders = PLACEHOLDER.findall(namespace)
    if not holders:
        return len(namespace) <= 63 and bool(DNS_LABEL.fullmatch(namespace))
    rest = PLACEHOLDER.sub("x", namespace)
    return bool(re.fullmatch(r"[a-z0-9-]*", rest))


def dns_subdomain(text: str) -> str:
    # ${VAR} placeholders are kept: the user's pipeline substitutes them.
    pieces = PLACEHOLDER.split(text)
    holders = PLACEHOLDER.findall(text)
    cleaned = [re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9.-]+", "-", p.lower())) for p in pieces]
    out = "".join(c + h for c, h in itertools.zip_longest(cleaned, holders, fillvalue=""))
    # every label starts and ends with a letter or digit: "a..b" and "a.-b" become "a.b"
    out = re.sub(r"[.-]*\.[.-]*", ".", out).strip("-.")
    if len(out) > 253:
        out = out[:246].rstrip("-.") + "-" + short_hash(text)
    return out
