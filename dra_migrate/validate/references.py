"""Across files: pod claims resolve to the templates and claims of their namespace,
container claims name requests those have, device classes are defined or installed by
a known driver, a claim defined twice has one spec, admin access has its namespace
label, one DeviceClass maps each extended resource name (the bridge), and a MIG
profile's class selects that profile."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

from dra_migrate.report.findings import Finding
from dra_migrate.validate.model import (
    ClaimDef,
    FileCheck,
    PodRef,
    Request,
    ValidateSettings,
    Where,
)

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

ADMIN_LABEL = "resource.kubernetes.io/admin-access"


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
                    w.finding(
                        "DRA322",
                        f"{claim.kind} {claim.name} is also defined at {first.where.path}:"
                        f"{first.where.line} with other requests; the spec is immutable, so "
                        "applied to one cluster the second apply is rejected",
                        "keep one definition, or give them different names (a name with a "
                        "short hash of the spec rolls changes out as new templates)",
                    )
                )
    found.extend(_admin_access(checks))
    found.extend(_bridge_classes(checks, settings))
    classes = {c.name for check in checks for c in check.classes}
    classes.update(name for name, _ in settings.installed_classes)
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
                        w.finding(
                            "DRA318",
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
                        w.finding(
                            "DRA316",
                            f"{pod.workload}: container {use.container!r} uses request "
                            f"{use.request!r}, which {target.kind} {target.name} does not have "
                            f"(it has {', '.join(sorted(names)) or 'none'})",
                        )
                    )
        for claim in check.claims:
            for request in all_requests(claim.requests):
                if (
                    request.device_class
                    and request.device_class not in classes
                    and request.device_class not in _catalog_classes()
                ):
                    w = request.where
                    found.append(
                        w.finding(
                            "DRA319",
                            f"{claim.kind} {claim.name}: device class {request.device_class!r} "
                            "is not defined in the input"
                            + (", nor in the cluster," if settings.installed_classes else "")
                            + " and is not one a known driver installs",
                            "pass the file with the DeviceClass, or check the name",
                        )
                    )
    return found


# a MIG profile's extended resource (nvidia.com/mig-1g.10gb): its class must select it
_MIG = re.compile(r"^[^/]+/mig-(?P<profile>[0-9]+g\.[0-9]+gb(\+me)?)$")


def _bridge_classes(checks: Sequence[FileCheck], settings: ValidateSettings) -> list[Finding]:
    """DRA510: two DeviceClasses map one extended resource name, counting the class a
    known driver installs with that mapping for the target (``catalog.driver_bridge``:
    the NVIDIA driver's gpu.nvidia.com maps nvidia.com/gpu on v1); DRA324: a class that
    maps a MIG profile's name without a selector on that profile."""
    from dra_migrate.k8s.catalog import load_catalog

    catalog = load_catalog()
    target = settings.target or "v1"
    owners: dict[str, list[tuple[str, Where]]] = {}
    found: list[Finding] = []
    for check in checks:
        for c in check.classes:
            if not c.extended_resource_name or c.extended_where is None:
                continue
            owners.setdefault(c.extended_resource_name, []).append((c.name, c.extended_where))
            mig = _MIG.match(c.extended_resource_name)
            if mig and not any(mig["profile"] in s.expression for s in c.selectors):
                found.append(
                    c.extended_where.finding(
                        "DRA324",
                        f"DeviceClass {c.name} maps MIG profile {c.extended_resource_name} but "
                        f"none of its selectors names profile {mig['profile']!r}: pods asking "
                        "for this profile may get any device the class selects",
                        f"add the selector device.attributes['gpu.nvidia.com'].profile == "
                        f"'{mig['profile']}' (one class per MIG profile)",
                    )
                )
    for resource, classes in sorted(owners.items()):
        driver = catalog.driver_bridge(resource, target)
        names = [name for name, _where in classes]
        if driver is not None:
            names.append(f"{driver.name} (installed by its driver)")
        if len(names) < 2:
            continue
        for name, where in classes:
            others = [n for n in names if n != name]
            found.append(
                where.finding(
                    "DRA510",
                    f"DeviceClass {name} maps extended resource {resource}, and so does "
                    f"{', '.join(others)}: the scheduler uses only one of them (the newest, "
                    "then the first by name)",
                    "give each extended resource name to one class; for an installed class, "
                    "turn its extendedResourceName off in the driver's chart values",
                )
            )
    return found


def _catalog_classes() -> frozenset[str]:
    """The DeviceClasses known drivers install (the catalog is read on first use)."""
    from dra_migrate.k8s.catalog import load_catalog

    return frozenset(c.name for c in load_catalog().device_classes)


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
                    w.finding(
                        "DRA360",
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
        for r in all_requests(claim.requests)
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


def all_requests(requests: Iterable[Request]) -> Iterator[Request]:
    for request in requests:
        yield request
        yield from request.subrequests
