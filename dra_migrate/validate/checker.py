"""What the per-file checks share: ``Checker``, the state of one file's walk (its
settings and gates, the findings, what it defines and refers to) and the helpers
that report a finding at a node and check a name."""

from __future__ import annotations

from yaml.nodes import Node

from dra_migrate.k8s.names import DNS_LABEL, DNS_SUBDOMAIN
from dra_migrate.k8s.versions import gate_state
from dra_migrate.manifests import trees
from dra_migrate.manifests.sources import Source
from dra_migrate.manifests.trees import scalar
from dra_migrate.report.findings import Finding
from dra_migrate.validate.model import ClaimDef, ClassDef, PodRef, ValidateSettings, Where


class Checker:
    """One file's walk: what the rules of ``objects``, ``claims``, ``pods``,
    ``selectors``, ``gated_fields`` and ``devices`` read and add to."""

    __slots__ = (
        "anchor",
        "claims",
        "classes",
        "findings",
        "gates",
        "namespaces",
        "pods",
        "settings",
        "source",
    )

    def __init__(self, source: Source, settings: ValidateSettings) -> None:
        self.source = source
        self.settings = settings
        self.gates = gate_state(settings.kube_version, settings.feature_gates)
        self.findings: list[Finding] = []
        self.claims: list[ClaimDef] = []
        self.classes: list[ClassDef] = []
        self.pods: list[PodRef] = []
        self.namespaces: dict[str, dict[str, str]] = {}
        # where findings point instead of their node (claims parsed out of a patch string)
        self.anchor: Node | None = None

    def where(self, node: Node) -> Where:
        line, col = trees.position(self.anchor if self.anchor is not None else node)
        return Where(self.source.path, line, col)

    def add(self, code: str, node: Node, message: str, hint: str = "") -> None:
        self.findings.append(self.where(node).finding(code, message, hint))

    def name(self, node: Node, subdomain: bool, what: str) -> None:
        text = scalar(node) or ""
        if subdomain:
            ok = len(text) <= 253 and bool(DNS_SUBDOMAIN.fullmatch(text))
            kind = "a lower-case DNS subdomain (at most 253 characters)"
        else:
            ok = len(text) <= 63 and bool(DNS_LABEL.fullmatch(text))
            kind = "a lower-case DNS label (at most 63 characters)"
        if not ok and "${" not in text and "{{" not in text:
            self.add("DRA311", node, f"{what} {text!r} is not {kind}")

    def unique_label(self, node: Node | None, seen: set[str], what: str) -> str:
        """A name that must be a DNS label, unique among ``seen`` (which it joins)."""
        name = scalar(node) or ""
        if node is not None:
            self.name(node, subdomain=False, what=what)
            if name in seen:
                self.add("DRA313", node, f"{what} {name!r} is used twice")
            seen.add(name)
        return name

    def limit(self, node: Node, size: int, maximum: int, owner: str, what: str) -> None:
        if size > maximum:
            self.add("DRA313", node, f"{owner} has {size} {what}; at most {maximum} are allowed")
