"""Per file: the DRA objects of each document (their API version, strict schema,
names and metadata; claims, templates and classes through ``claims``, slices and taint
rules through ``devices``) and the pod specs that use claims (``pods``)."""

from __future__ import annotations

from collections.abc import Sequence

from yaml.nodes import Node, ScalarNode

from dra_migrate.k8s.names import LABEL_VALUE, qualified_key_problem
from dra_migrate.k8s.versions import KIND_APIS, kind_versions
from dra_migrate.manifests import compose, locate, sources, templates, trees
from dra_migrate.manifests.sources import Document, Source
from dra_migrate.manifests.trees import entries, get, scalar
from dra_migrate.report.findings import InputProblem
from dra_migrate.report.model import FileResult, Status
from dra_migrate.validate.checker import Checker
from dra_migrate.validate.claims import claim_spec, config
from dra_migrate.validate.devices import device_taint_rule, resource_slice
from dra_migrate.validate.gated_fields import device_class
from dra_migrate.validate.model import ClaimDef, ClassDef, FileCheck, ValidateSettings
from dra_migrate.validate.pods import check_pod, uses_claims
from dra_migrate.validate.selectors import check_selectors
from dra_migrate.validate.values import extended_resource_problem

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

RESOURCE_GROUP = "resource.k8s.io"
DRA_VERSIONS = ("v1beta1", "v1beta2", "v1")
CLASSIC = ("v1alpha1", "v1alpha2")
CLAIM_KINDS = ("ResourceClaimTemplate", "ResourceClaim")
MAX_ANNOTATIONS_BYTES = 256 * 1024
NEEDLES = (b"resource.k8s.io", b"resourceClaim", b"claims", b"Namespace")  # Namespace: DRA360


def check_file(
    display: str, raw: bytes, settings: ValidateSettings, also: tuple[str, ...] = ()
) -> FileCheck:
    """One file's checks. Only its documents that mention DRA are composed, or one of
    ``also`` (a file named on the command line: the GPU resources convert looks for,
    so a Pod with a YAML error is DRA004 there as it is in convert)."""
    try:
        source = sources.decode(display, raw)
        if not source.text.strip() or templates.is_template(source):
            return FileCheck(FileResult(display, Status.UNCHANGED, original=raw))
        docs = compose.parse(source, [*(n.decode() for n in NEEDLES), *also])
    except InputProblem as problem:
        return FileCheck(FileResult(display, Status.FAILED, [problem.finding], original=raw))
    return check_documents(source, docs, settings, raw)


def check_documents(
    source: Source, docs: Sequence[Document], settings: ValidateSettings, raw: bytes | None = None
) -> FileCheck:
    """The per-file checks on documents already parsed (convert reuses its own)."""
    checker = Checker(source, settings)
    for doc in docs:
        document(checker, doc)
    findings = sorted(set(checker.findings), key=lambda f: (f.line, f.col, f.code, f.message))
    result = FileResult(source.path, Status.UNCHANGED, findings, original=raw)
    return FileCheck(result, checker.claims, checker.classes, checker.pods, checker.namespaces)


def document(checker: Checker, doc: Document) -> None:
    for obj in locate.objects(doc):
        if get(obj.root, "$patch") is not None:  # a kustomize patch directive, not an
            continue  # object (a patch that deletes a base's template from a build)
        if obj.kind and not obj.api_version:
            near = [k for k, _kn, _v in entries(obj.root) if k.lower() == "apiversion"]
            checker.add(
                "DRA301",
                obj.root,
                f"{obj.kind} {obj.name} has no apiVersion"
                + (f" (keys are case-sensitive: {near[0]!r} is not apiVersion)" if near else ""),
            )
            continue
        if obj.kind == "Namespace" and obj.api_version == "v1" and obj.name:
            checker.namespaces[obj.name] = obj.labels
        group, _, version = obj.api_version.rpartition("/")
        if group == RESOURCE_GROUP:
            dra_object(checker, obj, version)
        for site in locate.pod_sites(obj):
            if uses_claims(site):
                check_pod(checker, site)


def dra_object(checker: Checker, obj: locate.Workload, version: str) -> None:
    root = obj.root
    if version in CLASSIC:
        checker.add(
            "DRA302",
            get(root, "apiVersion") or root,
            f"{obj.api_version} is the classic DRA API (resourceClassName, parametersRef), "
            "removed in Kubernetes 1.31",
            "rewrite it for resource.k8s.io/v1 (structured parameters)",
        )
        return
    if obj.kind == "DeviceTaintRule":
        taint_rule_object(checker, obj, version)
        return
    if obj.kind not in (*CLAIM_KINDS, "DeviceClass", "ResourceSlice"):
        return  # other kinds of the group (status and scheduling objects)
    if version == "v1alpha3":
        checker.add(
            "DRA304",
            get(root, "apiVersion") or root,
            f"{obj.kind} {obj.name} is {obj.api_version}, the Kubernetes 1.31 alpha API: "
            "not checked against a schema; its claim, class and slice kinds are gone in 1.34",
            "move it to resource.k8s.io/v1",
        )
        shape = "v1beta1"  # the alpha's requests are flat, like v1beta1's
    elif version not in DRA_VERSIONS:
        checker.add(
            "DRA302",
            get(root, "apiVersion") or root,
            f"{obj.api_version} is not a resource.k8s.io version dra-migrate knows",
            "use resource.k8s.io/v1",
        )
        return
    else:
        shape = version
        if checker.settings.target and version != checker.settings.target:
            checker.add(
                "DRA303",
                get(root, "apiVersion") or root,
                f"{obj.kind} {obj.name} is {obj.api_version}, the target is "
                f"resource.k8s.io/{checker.settings.target}",
            )
        check_schema(checker, root, trees.to_data(root), obj)
    definitions(checker, obj, shape)


def definitions(checker: Checker, obj: locate.Workload, shape: str) -> None:
    """Names, requests, selectors and config of a claim, template or class."""
    root = obj.root
    object_name(checker, obj)
    namespace = obj.namespace or ""
    owner = f"{obj.kind} {obj.name}"
    metadata(checker, get(root, "metadata"), owner)
    if obj.kind == "ResourceClaimTemplate":
        metadata(checker, trees.get_path(root, "spec", "metadata"), f"{owner} (spec.metadata)")
        requests, constraints = claim_spec(
            checker, trees.get_path(root, "spec", "spec"), shape, owner
        )
        checker.claims.append(
            ClaimDef(obj.kind, namespace, obj.name, requests, checker.where(root), constraints)
        )
    elif obj.kind == "ResourceClaim":
        requests, constraints = claim_spec(checker, get(root, "spec"), shape, owner)
        checker.claims.append(
            ClaimDef(obj.kind, namespace, obj.name, requests, checker.where(root), constraints)
        )
    elif obj.kind == "DeviceClass":
        spec = get(root, "spec")
        extended = get(spec, "extendedResourceName")
        text = scalar(extended) or ""
        if device_class(checker, spec, owner) and extended_resource_problem(text):
            assert extended is not None
            checker.add(
                "DRA311",
                extended,
                f"{owner}: extendedResourceName {text!r} is not a valid extended resource "
                f"name: {extended_resource_problem(text)}",
                "for example example.com/gpu",
            )
        selectors = check_selectors(checker, get(spec, "selectors"), owner)
        config(checker, get(spec, "config"), set(), owner, claim=False)
        mapped = text if extended is not None and not extended_resource_problem(text) else ""
        checker.classes.append(
            ClassDef(
                obj.name,
                selectors,
                checker.where(root),
                mapped,
                checker.where(extended) if mapped and extended is not None else None,
            )
        )
    elif obj.kind == "ResourceSlice":
        resource_slice(checker, root, owner, shape)


def taint_rule_object(checker: Checker, obj: locate.Workload, version: str) -> None:
    """A DeviceTaintRule (v1alpha3 from 1.33, v1beta2 from 1.36, v1 from 1.37, the
    per-kind table ``KIND_APIS`` of versions.py), against its strict schema where the
    release serves its version."""
    root = obj.root
    owner = f"{obj.kind} {obj.name}"
    minor = checker.gates.minor
    apis = KIND_APIS["DeviceTaintRule"]
    served = kind_versions("DeviceTaintRule", minor)
    where = get(root, "apiVersion") or root
    history = ", ".join(f"{v.name} from 1.{v.introduced}" for v in apis.values())
    if version not in apis:
        checker.add(
            "DRA302",
            where,
            f"{owner}: DeviceTaintRule is served as resource.k8s.io {history}; "
            f"not {obj.api_version}",
        )
        return
    if version not in served:
        checker.add(
            "DRA302",
            where,
            f"{owner}: DeviceTaintRule resource.k8s.io/{version} arrived in Kubernetes "
            f"1.{apis[version].introduced}; 1.{minor} serves "
            + (", ".join(served) if served else "no DeviceTaintRule"),
            f"use resource.k8s.io/{served[-1]}" if served else "",
        )
    else:
        check_schema(checker, root, trees.to_data(root), obj)  # the strict schema
    if (
        version in served
        and not apis[version].default_on
        and any(apis[v].default_on for v in served)
    ):
        newest = next(v for v in reversed(served) if apis[v].default_on)
        checker.add(
            "DRA303",
            where,
            f"{owner} is {obj.api_version}, which Kubernetes 1.{minor} serves only with "
            f"--runtime-config=resource.k8s.io/{version}=true; it is served as "
            f"resource.k8s.io/{newest} by default",
            f"move it to resource.k8s.io/{newest}",
        )
    object_name(checker, obj)
    metadata(checker, get(root, "metadata"), owner)
    device_taint_rule(checker, root, owner, version, schema=version in served)
    # v1alpha3 selects devices with CEL too (gone in v1beta2)
    check_selectors(checker, trees.get_path(root, "spec", "deviceSelector", "selectors"), owner)


def object_name(checker: Checker, obj: locate.Workload) -> None:
    """metadata.name, a DNS subdomain; or generateName, which the API server completes."""
    meta = get(obj.root, "metadata")
    name_node = get(meta, "name")
    if isinstance(name_node, ScalarNode):
        checker.name(name_node, subdomain=True, what=f"{obj.kind} name")
    elif name_node is None and not scalar(get(meta, "generateName")):
        checker.add(
            "DRA311",
            get(obj.root, "kind") or obj.root,
            f"{obj.kind} has no metadata.name (nor generateName)",
            "the API server requires one",
        )


def check_schema(checker: Checker, root: Node, data: Any, obj: locate.Workload) -> None:
    from dra_migrate.k8s import schemas

    try:
        # convert checks its output on every run until it is written: the verdict of
        # a valid object is kept
        errors = schemas.validate_object(
            data, checker.settings.kube_version, keep=checker.settings.claims_only
        )
    except schemas.SchemaNotFound as exc:
        checker.add("DRA302", get(root, "apiVersion") or root, str(exc))
        return
    except ValueError as exc:
        checker.add("DRA302", root, str(exc))
        return
    for error in errors:
        checker.add(
            "DRA301",
            trees.key_at(root, error.path),
            f"{obj.kind} {obj.name}: {error.message}",
        )


def metadata(checker: Checker, meta: Node | None, owner: str) -> None:
    """Label keys and values and annotation keys, by the API server's rules."""
    for field_name in ("labels", "annotations"):
        total = 0
        for key, key_node, value in entries(get(meta, field_name)):
            problem = qualified_key_problem(key)
            if problem:
                checker.add(
                    "DRA348", key_node, f"{owner}: {field_name[:-1]} key {key!r}: {problem}"
                )
            text = scalar(value) or ""
            total += len(key) + len(text)
            if field_name == "labels" and (len(text) > 63 or not LABEL_VALUE.fullmatch(text)):
                checker.add(
                    "DRA348",
                    value if value is not None else key_node,
                    f"{owner}: label {key!r} has value {text!r}, which is not empty or at "
                    "most 63 alphanumeric characters, '-', '_' or '.', starting and ending "
                    "with an alphanumeric character",
                )
        annotations = get(meta, field_name)
        if field_name == "annotations" and annotations and total > MAX_ANNOTATIONS_BYTES:
            checker.add(
                "DRA348",
                annotations,
                f"{owner}: annotations take {total} bytes; at most {MAX_ANNOTATIONS_BYTES}",
            )
