"""Stage 6, validate: DRA objects and the pod specs that use them.

Per file (``check_file``): strict schemas, the rules schemas cannot say (names,
counts, one-of fields, list sizes, references inside a claim), CEL selectors
against the driver attribute catalog. Across files (``cross_check``): pod
claims resolve to templates and claims of their namespace, container claims
name existing requests, device classes are known. With ResourceSlices
(``check_slices``): every class and request is evaluated on the real devices,
so a claim that would stay Pending is found before it reaches a cluster.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence

from yaml.nodes import MappingNode, Node, ScalarNode

from dra_migrate.k8s.names import (
    C_IDENTIFIER,
    DNS_LABEL,
    DNS_SUBDOMAIN,
    LABEL_VALUE,
    qualified_key_problem,
)
from dra_migrate.k8s.quantity import INT64_MAX
from dra_migrate.k8s.versions import gate_state
from dra_migrate.manifests import compose, locate, sources, templates, trees
from dra_migrate.manifests.sources import Document, Source
from dra_migrate.manifests.trees import entries, get, items, scalar
from dra_migrate.package_data import package_file
from dra_migrate.record import NamedTuple, Record
from dra_migrate.report.findings import Finding, InputProblem, finding
from dra_migrate.report.model import FileResult, Status
from dra_migrate.validate.gated_fields import DeviceFields

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)
if TYPE_CHECKING:
    from typing import Any

RESOURCE_GROUP = "resource.k8s.io"
DRA_VERSIONS = ("v1beta1", "v1beta2", "v1")
CLASSIC = ("v1alpha1", "v1alpha2")
CLAIM_KINDS = ("ResourceClaimTemplate", "ResourceClaim")
MAX_REQUESTS = MAX_SELECTORS = MAX_CONSTRAINTS = MAX_CONFIG = 32
MAX_SUBREQUESTS = 8
MAX_PARAMETERS = 10 * 1024
MAX_ANNOTATIONS_BYTES = 256 * 1024
MAX_DRIVER_NAME = 63  # resourceapi.DriverNameMaxLength
MAX_DOMAIN = 63  # resourceapi.DeviceMaxDomainLength
MAX_ID = 64  # resourceapi.DeviceMaxIDLength


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


def _extended_resource_problem(name: str) -> str | None:
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


NEEDLES = (b"resource.k8s.io", b"resourceClaim", b"claims", b"Namespace")  # Namespace: DRA360
CORE_GROUPS = ("", "apps", "batch")  # kinds whose pod template is exactly a core/v1 PodSpec

# CEL problem code (dra_migrate.cel) -> finding code: a table, not branches.
CEL_CODES = {
    "syntax": "DRA330",
    "too-long": "DRA330",
    "not-bool": "DRA330",
    "too-complex": "DRA345",
    "undeclared": "DRA330",
    "unknown-function": "DRA330",
    "unknown-field": "DRA330",
    "stale-name": "DRA331",
    "unknown-attribute": "DRA332",
    "unknown-capacity": "DRA332",
    "capacity-as-attribute": "DRA332",
    "attribute-as-capacity": "DRA332",
    "type": "DRA333",
    "invalid-literal": "DRA346",
    "unknown-domain": "DRA334",
    "unlisted-domain": "DRA350",
    "unknown-value": "DRA335",
    "unknown-driver": "DRA335",
}


class ValidateSettings(NamedTuple):
    kube_version: str | None = None  # schemas of this release; None: newest that serves each object
    target: str | None = None  # an explicit target: DRA objects of other versions are flagged
    external_templates: bool = False  # templates and claims defined elsewhere: no warning
    claims_only: bool = False  # pod spec schema errors about claims only (convert's own check)
    # domains and domain/name of what the --resource-slices devices publish: a driver the
    # catalog does not list is taught by its slices (no DRA332/DRA350 for those names)
    published: frozenset[str] = frozenset()
    # --feature-gates (name, on): over the defaults of kube_version's release
    feature_gates: tuple[tuple[str, bool], ...] = ()


# --- what a file defines and refers to, for the cross-file pass --------------------


class Where(NamedTuple):
    path: str
    line: int
    col: int


class Selector(NamedTuple):
    expression: str
    where: Where


class Request(Record):
    """One device request (or subrequest) of a claim, normalised across versions."""

    __slots__ = _fields = (
        "name",
        "where",
        "device_class",
        "selectors",
        "mode",
        "count",
        "subrequests",
        "admin",
    )

    def __init__(
        self,
        name: str,
        where: Where,
        device_class: str | None,
        selectors: list[Selector],
        mode: str,
        count: int | None,
        subrequests: list[Request] | None = None,
        admin: bool = False,  # adminAccess: true (and DRAAdminAccess on)
    ) -> None:
        self.name = name
        self.where = where
        self.device_class = device_class
        self.selectors = selectors
        self.mode = mode
        self.count = count
        self.subrequests: list[Request] = [] if subrequests is None else subrequests
        self.admin = admin


class Constraint(NamedTuple):
    """A claim's matchAttribute or distinctAttribute, on its requests (empty: all)."""

    key: str  # matchAttribute or distinctAttribute
    domain: str
    attribute: str
    requests: list[str]
    where: Where


class ClaimDef(NamedTuple):
    kind: str  # ResourceClaimTemplate or ResourceClaim
    namespace: str
    name: str
    requests: list[Request]
    where: Where
    constraints: list[Constraint]


class ClassDef(NamedTuple):
    name: str
    selectors: list[Selector]
    where: Where


class ContainerRef(NamedTuple):
    container: str
    claim: str  # pod claim name
    request: str | None
    where: Where


class PodRef(Record):
    """A pod claim: which template or claim it points at, and who uses which request."""

    __slots__ = _fields = ("workload", "namespace", "claim", "kind", "target", "where", "uses")

    def __init__(
        self,
        workload: str,
        namespace: str,
        claim: str,
        kind: str,  # ResourceClaimTemplate or ResourceClaim
        target: str,
        where: Where,
        uses: list[ContainerRef] | None = None,
    ) -> None:
        self.workload = workload
        self.namespace = namespace
        self.claim = claim
        self.kind = kind
        self.target = target
        self.where = where
        self.uses: list[ContainerRef] = [] if uses is None else uses


class FileCheck(Record):
    """What validate keeps of one file for the checks across files."""

    __slots__ = _fields = ("result", "claims", "classes", "pods", "namespaces")

    def __init__(
        self,
        result: FileResult,
        claims: list[ClaimDef] | None = None,
        classes: list[ClassDef] | None = None,
        pods: list[PodRef] | None = None,
        # v1 Namespaces defined in the file: name -> labels (the admin-access label)
        namespaces: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.result = result
        self.claims: list[ClaimDef] = [] if claims is None else claims
        self.classes: list[ClassDef] = [] if classes is None else classes
        self.pods: list[PodRef] = [] if pods is None else pods
        self.namespaces: dict[str, dict[str, str]] = {} if namespaces is None else namespaces


class SelectorProblem(NamedTuple):
    """``cel.CelProblem``'s fields, as kept in the cache."""

    code: str
    offset: int
    message: str
    hint: str = ""
    subject: str = ""


@functools.lru_cache(maxsize=1024)
def selector_problems(expression: str) -> tuple[SelectorProblem, ...]:
    """``cel.check_selector(expression)``, kept in the user's cache folder.

    Checking a selector needs the CEL library: about half a second to import and
    load its parser, and a few milliseconds a selector, where validating the rest of
    a file takes milliseconds; a pre-commit hook checks the same selectors run after
    run. The answer depends only on the expression and on the files of this package,
    its driver catalog and the CEL library (``_cel_stamp``), so it is kept for them."""

    def check() -> list[list[Any]]:
        from dra_migrate import cel

        found = cel.check_selector(expression)
        return [[p.code, p.offset, p.message, p.hint, p.subject] for p in found]

    from dra_migrate import cache

    stamp = _cel_stamp()
    kept = None if stamp is None else cache.read("cel-check", expression, stamp, _problems)
    if kept is not None:
        return kept
    answer = check()
    if stamp is not None:
        cache.write("cel-check", expression, stamp, answer)
    return _problems(answer)


def _problems(held: Any) -> tuple[SelectorProblem, ...]:
    """``selector_problems``' answer from its JSON, or TypeError/ValueError where it is
    not one (a kept file is data to check)."""
    if not isinstance(held, list):
        raise TypeError("not a list of problems")
    problems = []
    for code, offset, message, hint, subject in held:
        if not all(isinstance(text, str) for text in (code, message, hint, subject)):
            raise TypeError("a problem's text is not a string")
        if type(offset) is not int or offset < 0:
            raise ValueError("a problem's offset is not a count")
        problems.append(SelectorProblem(code, offset, message, hint, subject))
    return tuple(problems)


@functools.cache
def _cel_stamp() -> str | None:
    """What ``check_selector`` depends on besides the expression: every module of this
    package, the catalog's files, and the CEL library's parser, grammar and Lark; None
    where one of them cannot be found (nothing is kept)."""
    import importlib.util

    from dra_migrate import cache

    code = cache.package_stamp()
    catalog = package_file("catalog")
    try:
        files = [os.path.join(catalog, n) for n in sorted(os.listdir(catalog))]
    except OSError:
        return None
    for library in ("celpy", "lark"):
        spec = importlib.util.find_spec(library)
        if spec is None or spec.origin is None:
            return None
        files.append(spec.origin)
        if library == "celpy":
            files.append(os.path.join(os.path.dirname(spec.origin), "cel.lark"))
    stamp = cache.files_stamp(files)
    return None if stamp is None or code is None else f"{code} {stamp}"


# --- per file ----------------------------------------------------------------------


def check_file(display: str, raw: bytes, settings: ValidateSettings) -> FileCheck:
    try:
        source = sources.decode(display, raw)
        if not source.text.strip() or templates.is_template(source):
            return FileCheck(FileResult(display, Status.UNCHANGED, original=raw))
        docs = compose.parse(source, [n.decode() for n in NEEDLES])
    except InputProblem as problem:
        return FileCheck(FileResult(display, Status.FAILED, [problem.finding], original=raw))
    return check_documents(source, docs, settings, raw)


def check_documents(
    source: Source, docs: Sequence[Document], settings: ValidateSettings, raw: bytes | None = None
) -> FileCheck:
    """The per-file checks on documents already parsed (convert reuses its own)."""
    checker = _FileChecker(source, settings)
    for doc in docs:
        checker.document(doc)
    findings = sorted(set(checker.findings), key=lambda f: (f.line, f.col, f.code, f.message))
    result = FileResult(source.path, Status.UNCHANGED, findings, original=raw)
    return FileCheck(result, checker.claims, checker.classes, checker.pods, checker.namespaces)


class _FileChecker:
    def __init__(self, source: Source, settings: ValidateSettings) -> None:
        self.source = source
        self.settings = settings
        self.findings: list[Finding] = []
        self.claims: list[ClaimDef] = []
        self.classes: list[ClassDef] = []
        self.pods: list[PodRef] = []
        self.namespaces: dict[str, dict[str, str]] = {}
        self.anchor: Node | None = None
        self.fields = DeviceFields(self, gate_state(settings.kube_version, settings.feature_gates))

    # helpers

    def where(self, node: Node) -> Where:
        line, col = trees.position(self.anchor if self.anchor is not None else node)
        return Where(self.source.path, line, col)

    def add(self, code: str, node: Node, message: str, hint: str = "") -> None:
        w = self.where(node)
        self.findings.append(finding(code, w.path, w.line, w.col, message, hint))

    # documents

    def document(self, doc: Document) -> None:
        for obj in locate.objects(doc):
            if obj.kind and not obj.api_version:
                near = [k for k, _kn, _v in entries(obj.root) if k.lower() == "apiversion"]
                self.add(
                    "DRA301",
                    obj.root,
                    f"{obj.kind} {obj.name} has no apiVersion"
                    + (
                        f" (keys are case-sensitive: {near[0]!r} is not apiVersion)" if near else ""
                    ),
                )
                continue
            if obj.kind == "Namespace" and obj.api_version == "v1" and obj.name:
                self.namespaces[obj.name] = obj.labels
            group, _, version = obj.api_version.rpartition("/")
            if group == RESOURCE_GROUP:
                self.dra_object(obj, version)
            for site in locate.pod_sites(obj):
                if _uses_claims(site):
                    self.pod(site)

    def dra_object(self, obj: locate.Workload, version: str) -> None:

        root = obj.root
        if version in CLASSIC:
            self.add(
                "DRA302",
                get(root, "apiVersion") or root,
                f"{obj.api_version} is the classic DRA API (resourceClassName, parametersRef), "
                "removed in Kubernetes 1.31",
                "rewrite it for resource.k8s.io/v1 (structured parameters)",
            )
            return
        if obj.kind == "DeviceTaintRule":
            self.device_taint_rule(obj, version)
            return
        if obj.kind not in (*CLAIM_KINDS, "DeviceClass", "ResourceSlice"):
            return  # other kinds of the group (status and scheduling objects)
        if version == "v1alpha3":
            self.add(
                "DRA304",
                get(root, "apiVersion") or root,
                f"{obj.kind} {obj.name} is {obj.api_version}, the Kubernetes 1.31 alpha API: "
                "not checked against a schema; its claim, class and slice kinds are gone in 1.34",
                "move it to resource.k8s.io/v1",
            )
            shape = "v1beta1"  # the alpha's requests are flat, like v1beta1's
        elif version not in DRA_VERSIONS:
            self.add(
                "DRA302",
                get(root, "apiVersion") or root,
                f"{obj.api_version} is not a resource.k8s.io version dra-migrate knows",
                "use resource.k8s.io/v1",
            )
            return
        else:
            shape = version
            if self.settings.target and version != self.settings.target:
                self.add(
                    "DRA303",
                    get(root, "apiVersion") or root,
                    f"{obj.kind} {obj.name} is {obj.api_version}, the target is "
                    f"resource.k8s.io/{self.settings.target}",
                )
            self.schema(root, trees.to_data(root), obj)
        self.definitions(obj, shape)

    def definitions(self, obj: locate.Workload, shape: str) -> None:
        """Names, requests, selectors and config of a claim, template or class."""
        root = obj.root
        self.object_name(obj)
        namespace = obj.namespace or ""
        owner = f"{obj.kind} {obj.name}"
        self.metadata(get(root, "metadata"), owner)
        if obj.kind == "ResourceClaimTemplate":
            self.metadata(trees.get_path(root, "spec", "metadata"), f"{owner} (spec.metadata)")
            requests, constraints = self.claim_spec(
                trees.get_path(root, "spec", "spec"), shape, owner
            )
            self.claims.append(
                ClaimDef(obj.kind, namespace, obj.name, requests, self.where(root), constraints)
            )
        elif obj.kind == "ResourceClaim":
            requests, constraints = self.claim_spec(get(root, "spec"), shape, owner)
            self.claims.append(
                ClaimDef(obj.kind, namespace, obj.name, requests, self.where(root), constraints)
            )
        elif obj.kind == "DeviceClass":
            spec = get(root, "spec")
            extended = get(spec, "extendedResourceName")
            text = scalar(extended) or ""
            if self.fields.device_class(spec, owner) and _extended_resource_problem(text):
                assert extended is not None
                self.add(
                    "DRA311",
                    extended,
                    f"{owner}: extendedResourceName {text!r} is not a valid extended resource "
                    f"name: {_extended_resource_problem(text)}",
                    "for example example.com/gpu",
                )
            selectors = self.selectors(get(spec, "selectors"), owner)
            self.config(get(spec, "config"), set(), owner, claim=False)
            self.classes.append(ClassDef(obj.name, selectors, self.where(root)))
        elif obj.kind == "ResourceSlice":
            self.fields.resource_slice(root, owner, shape)

    def device_taint_rule(self, obj: locate.Workload, version: str) -> None:
        """A DeviceTaintRule (v1alpha3 from 1.33, v1beta2 from 1.36): no bundled schema."""
        root = obj.root
        owner = f"{obj.kind} {obj.name}"
        if version not in ("v1alpha3", "v1beta2", "v1"):
            self.add(
                "DRA302",
                get(root, "apiVersion") or root,
                f"{owner}: DeviceTaintRule is served as resource.k8s.io/v1alpha3 (from "
                f"Kubernetes 1.33) and v1beta2 (from 1.36), not {obj.api_version}",
            )
            return
        self.object_name(obj)
        self.metadata(get(root, "metadata"), owner)
        self.fields.device_taint_rule(root, owner, version)
        # v1alpha3 selects devices with CEL too (gone in v1beta2)
        self.selectors(trees.get_path(root, "spec", "deviceSelector", "selectors"), owner)

    def object_name(self, obj: locate.Workload) -> None:
        """metadata.name, a DNS subdomain; or generateName, which the API server completes."""
        meta = get(obj.root, "metadata")
        name_node = get(meta, "name")
        if isinstance(name_node, ScalarNode):
            self.name(name_node, subdomain=True, what=f"{obj.kind} name")
        elif name_node is None and not scalar(get(meta, "generateName")):
            self.add(
                "DRA311",
                get(obj.root, "kind") or obj.root,
                f"{obj.kind} has no metadata.name (nor generateName)",
                "the API server requires one",
            )

    def schema(self, root: Node, data: Any, obj: locate.Workload) -> None:
        from dra_migrate.k8s import schemas

        try:
            errors = schemas.validate_object(data, self.settings.kube_version)
        except schemas.SchemaNotFound as exc:
            self.add("DRA302", get(root, "apiVersion") or root, str(exc))
            return
        except ValueError as exc:
            self.add("DRA302", root, str(exc))
            return
        for error in errors:
            self.add(
                "DRA301",
                trees.key_at(root, error.path),
                f"{obj.kind} {obj.name}: {error.message}",
            )

    def metadata(self, meta: Node | None, owner: str) -> None:
        """Label keys and values and annotation keys, by the API server's rules."""
        for field_name in ("labels", "annotations"):
            total = 0
            for key, key_node, value in entries(get(meta, field_name)):
                problem = qualified_key_problem(key)
                if problem:
                    self.add(
                        "DRA348", key_node, f"{owner}: {field_name[:-1]} key {key!r}: {problem}"
                    )
                text = scalar(value) or ""
                total += len(key) + len(text)
                if field_name == "labels" and (len(text) > 63 or not LABEL_VALUE.fullmatch(text)):
                    self.add(
                        "DRA348",
                        value if value is not None else key_node,
                        f"{owner}: label {key!r} has value {text!r}, which is not empty or at "
                        "most 63 alphanumeric characters, '-', '_' or '.', starting and ending "
                        "with an alphanumeric character",
                    )
            annotations = get(meta, field_name)
            if field_name == "annotations" and annotations and total > MAX_ANNOTATIONS_BYTES:
                self.add(
                    "DRA348",
                    annotations,
                    f"{owner}: annotations take {total} bytes; at most {MAX_ANNOTATIONS_BYTES}",
                )

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

    # claims

    def claim_spec(
        self, spec: Node | None, version: str, owner: str
    ) -> tuple[list[Request], list[Constraint]]:
        devices = get(spec, "devices")
        request_nodes = items(get(devices, "requests"))
        requests: list[Request] = []
        if len(request_nodes) > MAX_REQUESTS:
            self.add(
                "DRA313",
                get(devices, "requests") or devices or spec or request_nodes[0],
                f"{owner} has {len(request_nodes)} requests; at most {MAX_REQUESTS} are allowed",
            )
        seen: set[str] = set()
        for node in request_nodes:
            self.unique_label(get(node, "name"), seen, f"{owner}: request name")
            request = self.request(node, version, owner)
            if request is not None:
                requests.append(request)
        names = {r.name for r in requests} | {
            f"{r.name}/{s.name}" for r in requests for s in r.subrequests
        }
        constraints_node = get(devices, "constraints")
        constraints = items(constraints_node)
        if constraints_node is not None:
            self.limit(constraints_node, len(constraints), MAX_CONSTRAINTS, owner, "constraints")
        parsed: list[Constraint] = []
        for constraint in constraints:
            self.references(get(constraint, "requests"), names, owner, "constraint")
            if isinstance(constraint, MappingNode) and all(
                get(constraint, k) is None for k in ("matchAttribute", "distinctAttribute")
            ):
                self.add(
                    "DRA320",
                    constraint,
                    f"{owner}: a constraint needs matchAttribute (or distinctAttribute)",
                )
            for key in ("matchAttribute", "distinctAttribute"):
                attr = get(constraint, key)
                if attr is None:
                    continue
                if key == "distinctAttribute" and not self.fields.gated(
                    attr, "DRAConsumableCapacity", owner, key
                ):
                    continue
                text = scalar(attr) or ""
                problem = fully_qualified_name_problem(text)
                if problem is not None:
                    self.add(
                        "DRA320",
                        attr,
                        f"{owner}: {key} {text!r} {problem}",
                        "for example gpu.nvidia.com/productName or resource.kubernetes.io/pcieRoot",
                    )
                    continue
                domain, _, ident = text.partition("/")
                self.constraint_attribute(attr, key, domain, ident, owner)
                refs = [scalar(r) or "" for r in items(get(constraint, "requests"))]
                parsed.append(Constraint(key, domain, ident, refs, self.where(attr)))
        self.config(get(devices, "config"), names, owner, claim=True)
        return requests, parsed

    def constraint_attribute(
        self, node: Node, key: str, domain: str, name: str, owner: str
    ) -> None:
        """A constraint's attribute against the catalog, as a selector's lookup is checked.

        A device without the attribute never satisfies the constraint, so a stale
        or unknown name leaves every pod that uses the claim Pending.
        """
        from dra_migrate.k8s.catalog import load_catalog

        catalog = load_catalog()
        published = self.settings.published
        if f"{domain}/{name}" in published or (
            domain in published and domain not in catalog.domains
        ):
            return  # the ResourceSlices show what this driver publishes (DRA351 checks them)
        label = f"{owner}: {key} {domain}/{name}"
        pending = "no device has it, so the claim is never allocated and its pods stay Pending"
        info = catalog.domains.get(domain)
        if info is None:
            wrong = catalog.wrong_domain(domain)
            similar = catalog.similar_domains(domain)
            if wrong is not None:
                self.add(
                    "DRA334",
                    node,
                    f"{label}: {domain!r} is not an attribute domain: {wrong.explanation}",
                    f"use {wrong.replacement}/{name}",
                )
            elif similar and not catalog.is_known_domain(domain):
                self.add(
                    "DRA350",
                    node,
                    f"{label}: no driver in the catalog uses the domain {domain!r}; "
                    "if it is a typo, " + pending,
                    f"did you mean {' or '.join(repr(s) for s in similar)}?",
                )
            return
        stale = catalog.find_stale(domain, name, "attribute")
        if stale is not None:
            if stale.replacement and not stale.replacement.startswith("capacity"):
                right = (
                    stale.replacement
                    if "/" in stale.replacement
                    else (f"{domain}/{stale.replacement}")
                )
                self.add(
                    "DRA331",
                    node,
                    f"{label}: {domain} does not publish {name!r}: use {right}; "
                    f"{stale.explanation}",
                    f"{key}: {right}",
                )
            else:
                self.add(
                    "DRA331",
                    node,
                    f"{label}: {domain} does not publish {name!r}; {stale.explanation}",
                    f"{pending}; constrain on an attribute the driver publishes, "
                    "or drop the constraint",
                )
            return
        if name in info.attributes:
            return
        if info.has_capacity(name):
            self.add(
                "DRA332",
                node,
                f"{label}: {name!r} is a capacity of {domain}; constraints compare attributes "
                f"only, so {pending}",
            )
            return
        known = list(info.attributes)
        close = [k for k in known if k.lower() == name.lower()]
        close += [
            k for k in difflib.get_close_matches(name, known, n=3, cutoff=0.75) if k not in close
        ]
        if not info.complete and not close:
            return  # the catalog does not list every name of this domain
        elsewhere = [f"{d}/{name}" for d, i in catalog.domains.items() if name in i.attributes]
        if close:
            hint = "did you mean " + " or ".join(f"{domain}/{c}" for c in close) + "?"
        elif elsewhere:
            hint = "published as " + ", ".join(elsewhere)
        else:
            hint = f"{domain} publishes: {', '.join(sorted(known))}"
        self.add(
            "DRA332", node, f"{label}: {domain} publishes no attribute {name!r}; {pending}", hint
        )

    def request(self, node: Node, version: str, owner: str) -> Request | None:
        if not isinstance(node, MappingNode):
            return None
        name = scalar(get(node, "name")) or ""  # checked by claim_spec
        label = f"{owner}: request {name!r}"
        first = get(node, "firstAvailable")
        if version == "v1beta1":
            body: Node | None = node
            has_exact = get(node, "deviceClassName") is not None
            if has_exact == (first is not None):
                self.add(
                    "DRA314",
                    node,
                    f"{label} must set exactly one of deviceClassName and firstAvailable",
                )
            if first is not None:
                for key in ("selectors", "allocationMode", "count", "adminAccess"):
                    if get(node, key) is not None:
                        self.add(
                            "DRA314",
                            get(node, key) or node,
                            f"{label} has firstAvailable, so {key} belongs in its subrequests",
                        )
                body = None
        else:
            body = get(node, "exactly")
            if (body is not None) == (first is not None):
                self.add(
                    "DRA314", node, f"{label} must set exactly one of exactly and firstAvailable"
                )
        request = self.exact(body, name, label) if body is not None else None
        if request is None:
            request = Request(name, self.where(node), None, [], "ExactCount", None)
        self.fields.gated(first, "DRAPrioritizedList", label, "firstAvailable")
        if first is not None:
            subs = items(first)
            self.limit(first, len(subs), MAX_SUBREQUESTS, label, "firstAvailable entries")
            sub_seen: set[str] = set()
            for sub in subs:
                sub_name = self.unique_label(
                    get(sub, "name"), sub_seen, f"{label}: subrequest name"
                )
                parsed = self.exact(
                    sub, sub_name, f"{label} subrequest {sub_name!r}", subrequest=True
                )
                if parsed is not None:
                    request.subrequests.append(parsed)
        return request

    def exact(self, body: Node, name: str, label: str, subrequest: bool = False) -> Request | None:
        if not isinstance(body, MappingNode):
            return None
        self.fields.request(body, label, subrequest)
        class_node = get(body, "deviceClassName")
        device_class = scalar(class_node)
        if class_node is not None:
            self.name(class_node, subdomain=True, what=f"{label}: deviceClassName")
        mode_node = get(body, "allocationMode")
        mode = scalar(mode_node) or "ExactCount"
        if mode_node is not None and mode not in ("ExactCount", "All"):
            self.add(
                "DRA312", mode_node, f"{label}: allocationMode {mode!r} is not ExactCount or All"
            )
        count_node = get(body, "count")
        count = trees.to_data(count_node) if count_node is not None else None
        if isinstance(count, float) and count.is_integer():  # 1e3, 1e21: JSON 1000, 1e+21
            count = int(count)
        unset = count == 0 and isinstance(count, int) and not isinstance(count, bool)
        if count_node is not None and unset:
            # count 0 is the Go zero value: unset. With All that is what the API
            # server wants; with ExactCount it defaults it to 1 before validating.
            if mode != "All":
                self.add(
                    "DRA352",
                    count_node,
                    f"{label}: count 0 with allocationMode ExactCount is defaulted to 1 by "
                    "the API server: the pod gets one device",
                    "write the number of devices wanted, or drop count for one device",
                )
                count = 1
        elif count_node is not None:
            if mode == "All":
                self.add(
                    "DRA312", count_node, f"{label}: count must not be set with allocationMode All"
                )
            elif not isinstance(count, int) or isinstance(count, bool) or count <= 0:
                self.add(
                    "DRA312",
                    count_node,
                    f"{label}: count {scalar(count_node)!r} must be a whole number above 0",
                )
            elif count > INT64_MAX:
                self.add(
                    "DRA312",
                    count_node,
                    f"{label}: count {scalar(count_node)!r} is more than Kubernetes can hold "
                    f"(int64, at most {INT64_MAX})",
                )
                count = None
        selectors = self.selectors(get(body, "selectors"), label)
        number = count if isinstance(count, int) and not isinstance(count, bool) else None
        if mode == "All":
            number = None
        elif count_node is None:
            number = 1  # defaulted by the API server
        admin = (
            not subrequest
            and trees.to_data(get(body, "adminAccess")) is True
            and self.fields.gates.enabled("DRAAdminAccess")
        )
        return Request(name, self.where(body), device_class, selectors, mode, number, admin=admin)

    def selectors(self, node: Node | None, owner: str) -> list[Selector]:
        found: list[Selector] = []
        selector_nodes = items(node)
        if node is not None:
            self.limit(node, len(selector_nodes), MAX_SELECTORS, owner, "selectors")
        for selector in selector_nodes:
            if get(selector, "cel") is None:
                self.add("DRA347", selector, f"{owner}: a selector needs cel")
                continue
            expr = trees.get_path(selector, "cel", "expression")
            if isinstance(expr, ScalarNode):
                self.cel(expr, owner)
                found.append(Selector(expr.value, self.where(expr)))
        return found

    def cel(self, node: ScalarNode, owner: str) -> None:
        for problem in selector_problems(node.value):
            if problem.subject and problem.subject in self.settings.published:
                continue  # the ResourceSlices show that the driver publishes it
            code = CEL_CODES.get(problem.code, "DRA330")
            line, col = _expression_position(self.source.text, node, problem.offset)
            self.findings.append(
                finding(
                    code, self.source.path, line, col, f"{owner}: {problem.message}", problem.hint
                )
            )

    def config(self, node: Node | None, names: set[str], owner: str, claim: bool) -> None:
        entries_ = items(node)
        if node is not None:
            self.limit(node, len(entries_), MAX_CONFIG, owner, "config entries")
        if not entries_:
            return  # the catalog (a module and its files) is read only for config entries
        from dra_migrate.k8s.catalog import is_dns_subdomain, load_catalog

        catalog = load_catalog()
        for entry in entries_:
            if claim:
                self.references(get(entry, "requests"), names, owner, "config")
            opaque = get(entry, "opaque")
            if opaque is None or not isinstance(opaque, MappingNode):
                self.add(
                    "DRA347", entry, f"{owner}: a config entry needs opaque driver configuration"
                )
                continue
            driver = get(opaque, "driver")
            text = scalar(driver) or ""
            if driver is None or not text:
                self.add("DRA321", opaque, f"{owner}: opaque configuration needs a driver")
            elif len(text) > MAX_DRIVER_NAME or not is_dns_subdomain(text.lower()):
                self.add(
                    "DRA321",
                    driver,
                    f"{owner}: opaque driver {text!r} is not a DNS subdomain of at most "
                    f"{MAX_DRIVER_NAME} characters",
                )
            parameters = get(opaque, "parameters")
            if parameters is None or not isinstance(parameters, MappingNode):
                self.add(
                    "DRA321",
                    parameters if parameters is not None else opaque,
                    f"{owner}: opaque parameters must be a JSON object"
                    + (" (null is not)" if parameters is not None else ""),
                )
                continue
            size = len(json.dumps(trees.to_data(parameters), separators=(",", ":")))
            if size > MAX_PARAMETERS:
                self.add(
                    "DRA321",
                    parameters,
                    f"{owner}: opaque parameters are {size} bytes as JSON; at most {MAX_PARAMETERS}",
                )
            api = get(parameters, "apiVersion")
            stale = catalog.stale_opaque_api_version(scalar(api) or "") if api is not None else None
            if api is not None and stale is not None:
                replacement = f"; use {stale.replacement}" if stale.replacement else ""
                self.add(
                    "DRA331",
                    api,
                    f"{owner}: opaque config apiVersion {scalar(api)} is stale{replacement}",
                    stale.explanation,
                )

    def references(self, node: Node | None, names: set[str], owner: str, what: str) -> None:
        seen: set[str] = set()
        for ref in items(node):
            text = scalar(ref) or ""
            if text in seen:
                self.add("DRA313", ref, f"{owner}: {what} lists request {text!r} twice")
            seen.add(text)
            if text not in names:
                self.add(
                    "DRA320",
                    ref,
                    f"{owner}: {what} names request {text!r}, which the claim does not have",
                )

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

    # pods

    def pod(self, site: locate.PodSite) -> None:
        from dra_migrate.k8s import schemas

        workload = site.workload
        owner = f"{workload.kind} {workload.name}"
        namespace = workload.namespace or ""
        spec_data = trees.to_data(site.pod)
        if site.style == locate.kinds.POD and workload.entry is not None and not site.generic:
            try:
                errors = schemas.validate_pod_spec(spec_data, self.settings.kube_version)
            except (schemas.SchemaNotFound, ValueError):
                errors = []
            # The whole pod spec of a built-in kind; in a custom resource (Knative adds
            # fields of its own), and when convert checks its output, the claims only.
            whole = workload.entry.group in CORE_GROUPS and not self.settings.claims_only
            for error in errors:
                if whole or _claims_related(error.path):
                    self.add(
                        "DRA301",
                        trees.key_at(site.pod, error.path),
                        f"{owner} ({site.path}): {error.message}",
                    )
        pod_claims = get(get(site.pod, "resources"), "claims")
        if pod_claims is not None:
            self.add(
                "DRA349",
                pod_claims,
                f"{owner} ({site.path}): resources.claims may not be set at the pod level",
                "list the claim in the resources.claims of each container that uses it",
            )
        refs: dict[str, PodRef] = {}
        claim_nodes = items(get(site.pod, "resourceClaims"))
        patch = get(site.pod, "podSpecPatch") if site.style == locate.kinds.ARGO else None
        if isinstance(patch, ScalarNode):
            # Argo adds pod-level fields through a strategic-merge patch string
            try:
                patched = compose.parse(sources.decode(self.source.path, patch.value.encode()))
                claim_nodes = [c for d in patched for c in items(get(d.root, "resourceClaims"))]
            except InputProblem:
                self.add("DRA301", patch, f"{owner}: podSpecPatch does not parse as JSON or YAML")
        # claims parsed out of the patch string point at the podSpecPatch key
        self.anchor = patch if isinstance(patch, ScalarNode) else None
        claim_names: set[str] = set()
        for claim in claim_nodes:
            name = self.unique_label(get(claim, "name"), claim_names, f"{owner}: pod claim name")
            template = get(claim, "resourceClaimTemplateName")
            direct = get(claim, "resourceClaimName")
            if (template is None) == (direct is None):
                self.add(
                    "DRA315",
                    claim,
                    f"{owner}: pod claim {name!r} must set exactly one of resourceClaimName "
                    "and resourceClaimTemplateName",
                )
                # listed all the same: containers that use it are not reported again
                refs[name] = PodRef(owner, namespace, name, "", "", self.where(claim))
                continue
            target_node = template if template is not None else direct
            assert target_node is not None
            if direct is not None and workload.kind != "Pod":
                self.add(
                    "DRA323",
                    direct,
                    f"{owner}: every pod of this {workload.kind} uses ResourceClaim "
                    f"{scalar(direct)!r}, so they all share its devices",
                    "use resourceClaimTemplateName to give each pod devices of its own",
                )
            self.name(target_node, subdomain=True, what=f"{owner}: pod claim {name!r} target")
            refs[name] = PodRef(
                workload=owner,
                namespace=namespace,
                claim=name,
                kind="ResourceClaimTemplate" if template is not None else "ResourceClaim",
                target=scalar(target_node) or "",
                where=self.where(target_node),
            )
        self.anchor = None
        for container in site.containers:
            seen: dict[str, set[str | None]] = {}
            for ref in items(trees.get_path(container.node, "resources", "claims")):
                claim_node = get(ref, "name")
                claim_name = scalar(claim_node) or ""
                request_node = get(ref, "request")
                request = scalar(request_node) if request_node is not None else None
                who = f"{owner}: container {container.name!r}"
                if request_node is not None:
                    self.name(request_node, subdomain=False, what=f"{who}: request")
                if claim_name not in refs:
                    self.add(
                        "DRA316",
                        claim_node or ref,
                        f"{who} uses claim {claim_name!r}, which the pod's resourceClaims does not list",
                    )
                    continue
                previous = seen.setdefault(claim_name, set())
                if request in previous or (None in previous) or (request is None and previous):
                    self.add(
                        "DRA317",
                        ref,
                        f"{who} refers to claim {claim_name!r}"
                        + (f" request {request!r}" if request else "")
                        + " more than once (or both with and without a request)",
                    )
                previous.add(request)
                refs[claim_name].uses.append(
                    ContainerRef(container.name, claim_name, request, self.where(ref))
                )
        self.pods.extend(refs.values())


def _uses_claims(site: locate.PodSite) -> bool:
    if get(site.pod, "resourceClaims") is not None:
        return True
    return any(trees.get_path(c.node, "resources", "claims") is not None for c in site.containers)


def _claims_related(path: tuple[str | int, ...]) -> bool:
    return "resourceClaims" in path or "claims" in path


def _expression_position(text: str, node: ScalarNode, offset: int) -> tuple[int, int]:
    """1-based line and column in the file of ``offset`` in the scalar's value."""
    start = node.start_mark.index
    end = node.end_mark.index
    raw = text[start:end]
    index = _source_offset(raw, node.style, offset)
    absolute = start + index
    line = text.count("\n", 0, absolute) + 1
    col = absolute - (text.rfind("\n", 0, absolute) + 1) + 1
    return line, col


def _source_offset(raw: str, style: str | None, offset: int) -> int:
    """Map a value offset to an offset in the scalar's source text (quotes, escapes, folding)."""
    if style in ("|", ">"):
        lines = raw.split("\n")
        body = lines[1:]  # after the indicator line
        indent = min((len(x) - len(x.lstrip(" ")) for x in body if x.strip()), default=0)
        position = len(lines[0]) + 1
        remaining = offset
        for line in body:
            content = line[indent:]
            if remaining <= len(content):
                return position + indent + remaining
            remaining -= len(content) + 1
            position += len(line) + 1
        return 0
    if style in ("'", '"'):
        i, value_index = 1, 0
        while i < len(raw) - 1 and value_index < offset:
            if (style == "'" and raw[i : i + 2] == "''") or (style == '"' and raw[i] == "\\"):
                i += 2
            elif raw[i] == "\n":  # folded line break
                i += 1
                while i < len(raw) and raw[i] == " ":
                    i += 1
            else:
                i += 1
            value_index += 1
        return i
    # plain: single-line values are taken as they are; folded ones approximately
    return min(offset, len(raw))


# --- across files ------------------------------------------------------------------


def cross_check(checks: Sequence[FileCheck], settings: ValidateSettings) -> list[Finding]:
    claims: dict[tuple[str, str, str], ClaimDef] = {}
    found: list[Finding] = []
    for check in checks:
        for claim in check.claims:
            key = (claim.kind, claim.namespace, claim.name)
            first = claims.setdefault(key, claim)
            if first is not claim and _shape(first) != _shape(claim):
                w = claim.where
                found.append(
                    finding(
                        "DRA322",
                        w.path,
                        w.line,
                        w.col,
                        f"{claim.kind} {claim.name} is also defined at {first.where.path}:"
                        f"{first.where.line} with other requests; the spec is immutable, so "
                        "applied to one cluster the second apply is rejected",
                        "keep one definition, or give them different names (a name with a "
                        "short hash of the spec rolls changes out as new templates)",
                    )
                )
    found.extend(_admin_access(checks))
    classes = {c.name for check in checks for c in check.classes}
    for check in checks:
        # a pod is paired with its own file's definition first (files applied together)
        own = {(c.kind, c.namespace, c.name): c for c in check.claims}
        for pod in check.pods:
            if not pod.kind:
                continue  # an invalid pod claim (DRA315): nothing to resolve
            target = _resolve(own, pod) or _resolve(claims, pod)
            if target is None:
                if not settings.external_templates:
                    w = pod.where
                    found.append(
                        finding(
                            "DRA318",
                            w.path,
                            w.line,
                            w.col,
                            f"{pod.workload}: {pod.kind} {pod.target!r} is not defined in the input"
                            + (f" (namespace {pod.namespace})" if pod.namespace else ""),
                            "pass the file that defines it, or --external-templates when it "
                            "lives elsewhere",
                        )
                    )
                continue
            names = {r.name for r in target.requests}
            for use in pod.uses:
                if use.request is not None and use.request not in names:
                    w = use.where
                    found.append(
                        finding(
                            "DRA316",
                            w.path,
                            w.line,
                            w.col,
                            f"{pod.workload}: container {use.container!r} uses request "
                            f"{use.request!r}, which {target.kind} {target.name} does not have "
                            f"(it has {', '.join(sorted(names)) or 'none'})",
                        )
                    )
        for claim in check.claims:
            for request in _all_requests(claim.requests):
                if (
                    request.device_class
                    and request.device_class not in classes
                    and request.device_class not in _catalog_classes()
                ):
                    w = request.where
                    found.append(
                        finding(
                            "DRA319",
                            w.path,
                            w.line,
                            w.col,
                            f"{claim.kind} {claim.name}: device class {request.device_class!r} "
                            "is not defined in the input and is not one a known driver installs",
                            "pass the file with the DeviceClass, or check the name",
                        )
                    )
    return found


def _catalog_classes() -> frozenset[str]:
    """The DeviceClasses known drivers install (the catalog is read on first use)."""
    from dra_migrate.k8s.catalog import load_catalog

    return frozenset(c.name for c in load_catalog().device_classes)


ADMIN_LABEL = "resource.kubernetes.io/admin-access"


def _admin_access(checks: Sequence[FileCheck]) -> list[Finding]:
    """adminAccess needs the admin-access label on the claim's namespace (1.34+).

    Only a Namespace defined in the input can be checked; one defined elsewhere is
    not reported.
    """
    namespaces = {name: labels for check in checks for name, labels in check.namespaces.items()}
    found = []
    for check in checks:
        for claim in check.claims:
            labels = namespaces.get(claim.namespace)
            if labels is None or labels.get(ADMIN_LABEL) == "true":
                continue
            for request in claim.requests:
                if not request.admin:
                    continue
                w = request.where
                found.append(
                    finding(
                        "DRA360",
                        w.path,
                        w.line,
                        w.col,
                        f"{claim.kind} {claim.name}: request {request.name!r} asks for "
                        f"adminAccess, but Namespace {claim.namespace} has no label "
                        f'{ADMIN_LABEL}: "true", so the API server rejects it',
                        f'label the namespace {ADMIN_LABEL}: "true" (only namespaces trusted '
                        "with every device of the cluster)",
                    )
                )
    return found


def _shape(claim: ClaimDef) -> list[tuple[Any, ...]]:
    return [
        (r.name, r.device_class, r.mode, r.count, [s.expression for s in r.selectors])
        for r in _all_requests(claim.requests)
    ]


def _resolve(claims: Mapping[tuple[str, str, str], ClaimDef], pod: PodRef) -> ClaimDef | None:
    exact = claims.get((pod.kind, pod.namespace, pod.target))
    if exact is not None:
        return exact
    # either side without a namespace is applied with kubectl -n: accept the match
    for (kind, namespace, name), claim in claims.items():
        if kind == pod.kind and name == pod.target and ("" in (namespace, pod.namespace)):
            return claim
    return None


def _all_requests(requests: Iterable[Request]) -> Iterator[Request]:
    for request in requests:
        yield request
        yield from request.subrequests


# --- on real devices -----------------------------------------------------------------


def check_slices(checks: Sequence[FileCheck], devices: Sequence[Any]) -> list[Finding]:
    """Evaluate classes and requests on the devices of ``kubectl get resourceslices``."""
    from dra_migrate.k8s.catalog import load_catalog

    found: list[Finding] = []
    class_selectors: dict[str, list[Selector]] = {}
    for info in load_catalog().device_classes:
        class_selectors[info.name] = [Selector(info.selector, Where("", 0, 0))]
    for check in checks:
        for cls in check.classes:
            class_selectors[cls.name] = cls.selectors
    evaluator = _Evaluator(devices)
    for check in checks:
        for cls in check.classes:
            if not evaluator.compiles(cls.selectors):
                continue
            matching = evaluator.matching(cls.selectors, found)
            w = cls.where
            if matching is None:
                continue  # DRA344 says why
            if not matching:
                found.append(
                    finding(
                        "DRA342",
                        w.path,
                        w.line,
                        w.col,
                        f"DeviceClass {cls.name} matches none of the {len(devices)} devices in "
                        "the ResourceSlices",
                        "check the driver name, attribute names and values against the slices",
                    )
                )
            else:
                found.append(
                    finding(
                        "DRA343",
                        w.path,
                        w.line,
                        w.col,
                        f"DeviceClass {cls.name} matches {len(matching)} device(s): "
                        + _per_node(matching),
                    )
                )
        for claim in check.claims:
            chosen: dict[str, tuple[int, list[Any]]] = {}
            ok = True
            for request in claim.requests:
                result, pick = _request_on_devices(claim, request, class_selectors, evaluator)
                found.extend(result)
                if pick is None:
                    ok = False
                else:
                    chosen[request.name] = pick
            found.extend(_constraints_on_devices(claim, chosen))
            if ok and len(chosen) > 1:
                found.extend(_claim_on_one_node(claim, chosen))
    return found


def devices_for(
    devices: Sequence[Any],
    device_class: str,
    selectors: Sequence[str] = (),
    classes: Mapping[str, Sequence[str]] | None = None,
) -> list[Any] | None:
    """The devices a request for ``device_class`` with ``selectors`` may be given.

    The class's selectors come from ``classes`` (name -> CEL expressions, for
    classes the caller defines) or from the classes known drivers install.
    None when the class is unknown, or a selector does not compile or fails on
    a device (the allocation would abort).
    """
    from dra_migrate.k8s.catalog import load_catalog

    known = {c.name: [c.selector] for c in load_catalog().device_classes}
    known.update({k: list(v) for k, v in (classes or {}).items()})
    if device_class not in known:
        return None
    where = Where("", 0, 0)
    chosen = [Selector(e, where) for e in [*known[device_class], *selectors]]
    evaluator = _Evaluator(devices)
    if not evaluator.compiles(chosen):
        return None
    return evaluator.matching(chosen, [])


def published_names(devices: Iterable[Any]) -> frozenset[str]:
    """Every domain, and domain/name of attribute and capacity, the devices publish."""
    names: set[str] = set()
    for device in devices:
        for table in (device.attributes, device.capacity):
            for domain, values in table.items():
                names.add(domain)
                names.update(f"{domain}/{name}" for name in values)
    return frozenset(names)


def _constraints_on_devices(
    claim: ClaimDef, chosen: Mapping[str, tuple[int, list[Any]]]
) -> list[Finding]:
    """A constraint on an attribute none of a request's matching devices publishes.

    The allocator skips a device without the constraint's attribute, so such a
    request is never satisfied: the pods that use the claim stay Pending.
    """
    found: list[Finding] = []
    for constraint in claim.constraints:
        names = {r.partition("/")[0] for r in constraint.requests} or set(chosen)
        for name in sorted(names & set(chosen)):
            _count, devices = chosen[name]
            if any(
                constraint.attribute in d.attributes.get(constraint.domain, {}) for d in devices
            ):
                continue
            w = constraint.where
            found.append(
                finding(
                    "DRA351",
                    w.path,
                    w.line,
                    w.col,
                    f"{claim.kind} {claim.name}: {constraint.key} "
                    f"{constraint.domain}/{constraint.attribute}: none of the {len(devices)} "
                    f"device(s) request {name!r} matches publishes it, so the request is never "
                    "allocated: a pod using it stays Pending",
                    "constrain on an attribute the devices in the ResourceSlices have",
                )
            )
    return found


def _claim_on_one_node(
    claim: ClaimDef, chosen: Mapping[str, tuple[int, list[Any]]]
) -> list[Finding]:
    """All requests of a claim are allocated on one node, with distinct devices."""
    nodes = {d.node for _n, devices in chosen.values() for d in devices if d.node is not None}
    for node in sorted(nodes) or [None]:
        slots = [
            [d.name + "@" + (d.node or "") for d in devices if d.node in (node, None)]
            for count, devices in chosen.values()
            for _ in range(count)
        ]
        if _assignable(slots):
            return []
    need = ", ".join(f"{name}: {count}" for name, (count, _d) in chosen.items())
    total = sum(count for count, _d in chosen.values())
    w = claim.where
    return [
        finding(
            "DRA341",
            w.path,
            w.line,
            w.col,
            f"{claim.kind} {claim.name} needs {total} distinct devices on one node ({need}); "
            "no node in the ResourceSlices has them all: a pod using it stays Pending",
            "requests of one claim are allocated on the same node",
        )
    ]


def _assignable(slots: list[list[str]]) -> bool:
    """Whether every slot gets a distinct device (bipartite matching, augmenting paths)."""
    owner: dict[str, int] = {}

    def place(slot: int, seen: set[str]) -> bool:
        for device in slots[slot]:
            if device in seen:
                continue
            seen.add(device)
            if device not in owner or place(owner[device], seen):
                owner[device] = slot
                return True
        return False

    return all(place(i, set()) for i in range(len(slots)))


def _request_on_devices(
    claim: ClaimDef,
    request: Request,
    class_selectors: Mapping[str, list[Selector]],
    evaluator: _Evaluator,
) -> tuple[list[Finding], tuple[int, list[Any]] | None]:
    """Findings for one request, and (count, matching devices) of the option that fits."""
    found: list[Finding] = []
    options = request.subrequests or [request]
    w = request.where
    label = f"{claim.kind} {claim.name} request {request.name!r}"
    best: list[Any] = []
    for option in options:
        if option.device_class is None:
            continue
        if option.device_class not in class_selectors:
            return [], None  # unknown class: reported by cross_check, nothing to evaluate
        selectors = [*class_selectors[option.device_class], *option.selectors]
        if not evaluator.compiles(selectors):
            return [], None  # DRA330 reports the selector; nothing to evaluate
        before = len(found)
        matching = evaluator.matching(selectors, found)
        if matching is None:
            if len(found) == before and evaluator.failure is not None:
                # the class's selector is not in the input (a known driver's built-in
                # class): the failure is the request's, so it is reported there
                device, error = evaluator.failure
                found.append(
                    _selector_fails(
                        w,
                        f"{label}: the selector of DeviceClass {option.device_class}",
                        device,
                        error,
                        "the class comes from its driver: check that the driver version "
                        "matches the one that published the slices",
                    )
                )
            return found, None  # DRA344: the allocation would abort
        need = option.count if option.mode == "ExactCount" and option.count else 1
        if matching and _max_per_node(matching) >= need:
            found.append(
                finding(
                    "DRA343",
                    w.path,
                    w.line,
                    w.col,
                    f"{label} ({option.device_class}): {len(matching)} device(s) match: "
                    + _per_node(matching),
                )
            )
            return found, (need if option.mode == "ExactCount" else 1, matching)
        if len(matching) > len(best):
            best = matching
    need = max((o.count or 1) for o in options)
    if not best:
        found.append(
            finding(
                "DRA340",
                w.path,
                w.line,
                w.col,
                f"{label} matches no device in the ResourceSlices: a pod using it stays Pending",
                "compare the device class and selectors with the devices' attributes",
            )
        )
    else:
        found.append(
            finding(
                "DRA341",
                w.path,
                w.line,
                w.col,
                f"{label} needs {need} device(s) on one node; at most {_max_per_node(best)} "
                f"match on any node ({_per_node(best)}): a pod using it stays Pending",
            )
        )
    return found, None


class _Evaluator:
    """Evaluates selectors on devices, like the scheduler's allocator.

    A selector that does not compile is left out (DRA330 reports it); one that
    fails at run time on a device aborts the allocation in Kubernetes, so the
    class or request cannot be satisfied (DRA344, reported once a selector).
    """

    def __init__(self, devices: Sequence[Any]) -> None:
        self.devices = devices
        self.reported: set[str] = set()
        self.broken: dict[str, bool] = {}
        self.failure: tuple[Any, Exception] | None = None  # the last selector failure

    def compiles(self, selectors: Sequence[Selector]) -> bool:
        from dra_migrate.cel import check_selector

        for selector in selectors:
            if selector.expression not in self.broken:
                problems = check_selector(selector.expression)
                self.broken[selector.expression] = any(
                    p.code in ("syntax", "too-long", "not-bool", "too-complex") for p in problems
                )
            if self.broken[selector.expression]:
                return False
        return True

    def matching(self, selectors: Sequence[Selector], found: list[Finding]) -> list[Any] | None:
        """The devices all selectors accept; None when a selector fails on some device."""
        from dra_migrate.cel import CelEvaluationError, evaluate_selector

        result = []
        failed = False
        for device in self.devices:
            ok = True
            for selector in selectors:
                try:
                    if not evaluate_selector(selector.expression, device):
                        ok = False
                        break
                except CelEvaluationError as exc:
                    ok = False
                    failed = True
                    self.failure = (device, exc)
                    key = selector.expression
                    if key not in self.reported and selector.where.path:
                        self.reported.add(key)
                        found.append(
                            _selector_fails(
                                selector.where,
                                "selector",
                                device,
                                exc,
                                "guard attributes that not every device has with has()",
                            )
                        )
                    break
            if ok:
                result.append(device)
        return None if failed else result


def _selector_fails(w: Where, what: str, device: Any, error: Exception, hint: str) -> Finding:
    """DRA344: a selector raised an error on a device, so the allocation aborts."""
    return finding(
        "DRA344",
        w.path,
        w.line,
        w.col,
        f"{what} fails on device {device.name} of {device.node or 'the cluster'}: {error}; "
        "Kubernetes aborts the allocation of a claim whose selector fails",
        hint,
    )


def _counts(devices: Sequence[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    shared = sum(1 for d in devices if d.node is None)
    for device in devices:
        if device.node is not None:
            counts[device.node] = counts.get(device.node, 0) + 1
    if shared:
        for node in list(counts):
            counts[node] += shared
        counts.setdefault("(any node)", shared)
    return counts


def _max_per_node(devices: Sequence[Any]) -> int:
    return max(_counts(devices).values(), default=0)


def _per_node(devices: Sequence[Any]) -> str:
    return ", ".join(f"{node} {n}" for node, n in sorted(_counts(devices).items()))
