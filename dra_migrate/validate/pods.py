"""Pod specs that use claims: the schema of the pod spec, its ``resourceClaims``
(exactly one target each; a ResourceClaim shared by every pod of a workload) and the
container claims that name them, kept as ``PodRef`` for the checks across files."""

from __future__ import annotations

from yaml.nodes import ScalarNode

from dra_migrate.manifests import compose, locate, sources, trees
from dra_migrate.manifests.trees import get, items, scalar
from dra_migrate.report.findings import InputProblem
from dra_migrate.validate.checker import Checker
from dra_migrate.validate.model import ContainerRef, PodRef

CORE_GROUPS = ("", "apps", "batch")  # kinds whose pod template is exactly a core/v1 PodSpec


def check_pod(checker: Checker, site: locate.PodSite) -> None:
    from dra_migrate.k8s import schemas

    workload = site.workload
    owner = f"{workload.kind} {workload.name}"
    namespace = workload.namespace or ""
    spec_data = trees.to_data(site.pod)
    if site.style == locate.kinds.POD and workload.entry is not None and not site.generic:
        try:
            # convert checks its output on every run until it is written: the verdict
            # of a valid pod spec is kept
            errors = schemas.validate_pod_spec(
                spec_data, checker.settings.kube_version, keep=checker.settings.claims_only
            )
        except (schemas.SchemaNotFound, ValueError):
            errors = []
        # The whole pod spec of a built-in kind; in a custom resource (Knative adds
        # fields of its own), and when convert checks its output, the claims only.
        whole = workload.entry.group in CORE_GROUPS and not checker.settings.claims_only
        for error in errors:
            if whole or _claims_related(error.path):
                checker.add(
                    "DRA301",
                    trees.key_at(site.pod, error.path),
                    f"{owner} ({site.path}): {error.message}",
                )
    pod_claims = get(get(site.pod, "resources"), "claims")
    if pod_claims is not None:
        checker.add(
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
            patched = compose.parse(sources.decode(checker.source.path, patch.value.encode()))
            claim_nodes = [c for d in patched for c in items(get(d.root, "resourceClaims"))]
        except InputProblem:
            checker.add("DRA301", patch, f"{owner}: podSpecPatch does not parse as JSON or YAML")
    # claims parsed out of the patch string point at the podSpecPatch key
    checker.anchor = patch if isinstance(patch, ScalarNode) else None
    claim_names: set[str] = set()
    for claim in claim_nodes:
        name = checker.unique_label(get(claim, "name"), claim_names, f"{owner}: pod claim name")
        template = get(claim, "resourceClaimTemplateName")
        direct = get(claim, "resourceClaimName")
        if (template is None) == (direct is None):
            checker.add(
                "DRA315",
                claim,
                f"{owner}: pod claim {name!r} must set exactly one of resourceClaimName "
                "and resourceClaimTemplateName",
            )
            # listed all the same: containers that use it are not reported again
            refs[name] = PodRef(owner, namespace, name, "", "", checker.where(claim))
            continue
        target_node = template if template is not None else direct
        assert target_node is not None
        if direct is not None and workload.kind != "Pod":
            checker.add(
                "DRA323",
                direct,
                f"{owner}: every pod of this {workload.kind} uses ResourceClaim "
                f"{scalar(direct)!r}, so they all share its devices",
                "use resourceClaimTemplateName to give each pod devices of its own",
            )
        checker.name(target_node, subdomain=True, what=f"{owner}: pod claim {name!r} target")
        refs[name] = PodRef(
            workload=owner,
            namespace=namespace,
            claim=name,
            kind="ResourceClaimTemplate" if template is not None else "ResourceClaim",
            target=scalar(target_node) or "",
            where=checker.where(target_node),
        )
    checker.anchor = None
    for container in site.containers:
        seen: dict[str, set[str | None]] = {}
        for ref in items(trees.get_path(container.node, "resources", "claims")):
            claim_node = get(ref, "name")
            claim_name = scalar(claim_node) or ""
            request_node = get(ref, "request")
            request = scalar(request_node) if request_node is not None else None
            who = f"{owner}: container {container.name!r}"
            if request_node is not None:
                checker.name(request_node, subdomain=False, what=f"{who}: request")
            if claim_name not in refs:
                checker.add(
                    "DRA316",
                    claim_node or ref,
                    f"{who} uses claim {claim_name!r}, which the pod's resourceClaims does not list",
                )
                continue
            previous = seen.setdefault(claim_name, set())
            if request in previous or (None in previous) or (request is None and previous):
                checker.add(
                    "DRA317",
                    ref,
                    f"{who} refers to claim {claim_name!r}"
                    + (f" request {request!r}" if request else "")
                    + " more than once (or both with and without a request)",
                )
            previous.add(request)
            refs[claim_name].uses.append(
                ContainerRef(container.name, claim_name, request, checker.where(ref))
            )
    checker.pods.extend(refs.values())


def uses_claims(site: locate.PodSite) -> bool:
    if get(site.pod, "resourceClaims") is not None:
        return True
    return any(trees.get_path(c.node, "resources", "claims") is not None for c in site.containers)


def _claims_related(path: tuple[str | int, ...]) -> bool:
    return "resourceClaims" in path or "claims" in path
