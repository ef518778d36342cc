"""The records of validate: its settings, and what a file defines and refers to
(claims, classes, requests, pod claims), kept for the checks across files."""

from __future__ import annotations

from dataclasses import dataclass, field

from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.model import FileResult


@dataclass(frozen=True, slots=True)
class ValidateSettings:
    kube_version: str | None = None  # schemas of this release; None: newest that serves each object
    target: str | None = None  # an explicit target: DRA objects of other versions are flagged
    external_templates: bool = False  # templates and claims defined elsewhere: no warning
    claims_only: bool = False  # pod spec schema errors about claims only (convert's own check)
    # domains and domain/name of what the --resource-slices devices publish: a driver the
    # catalog does not list is taught by its slices (no DRA332/DRA350 for those names)
    published: frozenset[str] = frozenset()
    # --feature-gates (name, on): over the defaults of kube_version's release
    feature_gates: tuple[tuple[str, bool], ...] = ()
    # (driver domain, release, why) the run assumes: the configuration's drivers:, the
    # ResourceSlices, else the catalog's default (k8s.catalog.Catalog.assumed_releases)
    driver_releases: tuple[tuple[str, str, str], ...] = ()
    # the DeviceClasses the live cluster has (validate --cluster), name and CEL selectors:
    # a request that names one refers to a class that exists (no DRA319), and its devices
    # are those the cluster's class selects (a class of the input of that name wins)
    installed_classes: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class Where:
    path: str
    line: int
    col: int

    def finding(self, code: str, message: str, hint: str = "") -> Finding:
        """A finding of ``code`` here."""
        return finding(code, self.path, self.line, self.col, message, hint)


@dataclass(frozen=True, slots=True)
class Selector:
    expression: str
    where: Where


@dataclass(slots=True)
class Request:
    """One device request (or subrequest) of a claim, normalised across versions; its
    ``subrequests`` are added as they are read (not frozen)."""

    name: str
    where: Where
    device_class: str | None
    selectors: list[Selector]
    mode: str
    count: int | None
    subrequests: list[Request] = field(default_factory=list)
    admin: bool = False  # adminAccess: true (and DRAAdminAccess on)


@dataclass(frozen=True, slots=True)
class Constraint:
    """A claim's matchAttribute or distinctAttribute, on its requests (empty: all)."""

    key: str  # matchAttribute or distinctAttribute
    domain: str
    attribute: str
    requests: list[str]
    where: Where


@dataclass(frozen=True, slots=True)
class ClaimDef:
    kind: str  # ResourceClaimTemplate or ResourceClaim
    namespace: str
    name: str
    requests: list[Request]
    where: Where
    constraints: list[Constraint]


@dataclass(frozen=True, slots=True)
class ClassDef:
    name: str
    selectors: list[Selector]
    where: Where
    extended_resource_name: str = ""  # spec.extendedResourceName (the bridge), "" when unset
    extended_where: Where | None = None  # where that field is


@dataclass(frozen=True, slots=True)
class ContainerRef:
    container: str
    claim: str  # pod claim name
    request: str | None
    where: Where


@dataclass(slots=True)
class PodRef:
    """A pod claim: which template or claim it points at, and who uses which request;
    ``uses`` is added to as the pod's containers are read (not frozen)."""

    workload: str
    namespace: str
    claim: str
    kind: str  # ResourceClaimTemplate or ResourceClaim
    target: str
    where: Where
    uses: list[ContainerRef] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FileCheck:
    """What validate keeps of one file for the checks across files."""

    result: FileResult
    claims: list[ClaimDef] = field(default_factory=list)
    classes: list[ClassDef] = field(default_factory=list)
    pods: list[PodRef] = field(default_factory=list)
    # v1 Namespaces defined in the file: name -> labels (the admin-access label)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
