"""One file through the stages: load -> locate -> plan -> edit -> verify.

``process`` takes one file's bytes and returns a ``FileResult``; ``process_job``
is the same for a ``Job`` (a worker process gets jobs). Nothing here walks
folders, prints or writes: ``pipeline`` drives many files, the CLI renders the
report and ``writer`` writes files. ``pipeline`` imports this module only when
a file needs parsing, so a run over files that mention no GPU never pays for
the parsing and planning code.
"""

from __future__ import annotations

import dataclasses
import functools
import re

from yaml.nodes import Node

from dra_migrate.convert import unconverted
from dra_migrate.convert.edit import EditError, apply_regions
from dra_migrate.convert.mapping import PROFILE_NEEDLE, Choice, Config, Context, Settings
from dra_migrate.convert.naming import Names
from dra_migrate.convert.plan import PodPlan, plan_site
from dra_migrate.k8s.quantity import whole_count
from dra_migrate.manifests import compose, locate, scalars, sources, templates, trees
from dra_migrate.manifests.kinds import api_group
from dra_migrate.manifests.sources import Document, Source
from dra_migrate.manifests.trees import entries, get, scalar
from dra_migrate.pipeline import suppress
from dra_migrate.pipeline.options import Job
from dra_migrate.repo import discover, roles
from dra_migrate.repo.roles import Role
from dra_migrate.report.findings import Finding, InputProblem, Severity, finding
from dra_migrate.report.model import FileResult, InventoryItem, Status

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:  # nor pathlib (resources.py)
    from pathlib import Path

    from dra_migrate.report.selections import LabelSelection


INFO = Severity.INFO


def uses_templates(path: Path | str) -> bool:
    """A pod spec of the file refers to a ResourceClaimTemplate: decided from the parsed
    objects (a CRD whose schema mentions resourceClaimTemplateName does not)."""
    data = roles.read_bytes(path)
    if not discover.mentions(data, (b"resourceClaimTemplateName",)):
        return False
    try:
        docs = compose.parse(sources.decode(str(path), data))
    except InputProblem:
        return False
    return any(
        get(claim, "resourceClaimTemplateName") is not None
        for doc in docs
        for obj in locate.objects(doc)
        for site in locate.pod_sites(obj)
        for claim in trees.items(get(site.pod, "resourceClaims"))
    )


@compose.no_collector()  # a big file's trees live until its plans are made
def process_job(job: Job, settings: Settings) -> FileResult:
    try:
        raw = (
            job.data
            if job.data is not None
            else discover.read_file(job.path, settings.config.max_file_size)
        )
    except discover.Unreadable as exc:
        return FileResult.unreadable(job.display, exc.code, exc.message)
    try:
        result = process(job.display, raw, job.role, settings, job.edit)
        written = job.edit and result.status is Status.CHANGED
        if not job.keep_text and not written and not suppress.has_marker(raw):
            result.original = None
        return result
    except InputProblem as problem:
        return FileResult(job.display, Status.FAILED, [problem.finding], original=raw)
    except RecursionError:
        deep = finding("DRA004", job.display, 1, 1, "YAML nested too deeply to process")
        return FileResult(job.display, Status.FAILED, [deep], original=raw)
    except Exception as exc:  # a bug: report it on the file, never a traceback for the user
        internal = finding(
            "DRA900",
            job.display,
            1,
            1,
            f"internal error ({type(exc).__name__}: {exc}); the file was left untouched",
            "please report this with the file",
        )
        return FileResult(job.display, Status.FAILED, [internal], original=raw)


def process(
    display: str, raw: bytes, role: Role, settings: Settings, edit: bool = True
) -> FileResult:
    source = sources.decode(display, raw)
    if not source.text or source.text.isspace():  # (strip() would copy the text)
        empty = finding("DRA007", display, 1, 1, "empty file, nothing to convert")
        return FileResult(display, Status.UNCHANGED, [empty], original=raw)
    if (
        role.kind == roles.HELM_TEMPLATE
        or display.endswith(".tpl")
        or templates.is_template(source)
    ):
        return _reported(display, unconverted.helm_template(source, settings.config), raw)
    if role.kind == roles.HELM_UNITTEST:  # a chart's test suite: nothing to migrate
        return FileResult(display, Status.UNCHANGED, [], original=raw)
    if role.kind == roles.MANIFEST_TEMPLATE:
        return _manifest_template(display, source, raw, settings.config)
    plain = role.kind not in (roles.HELM_VALUES, roles.KUSTOMIZE_PATCH, roles.KUSTOMIZATION)
    docs = compose.parse(source, _needles(settings.config) if plain else None)
    if role.kind == roles.HELM_VALUES:  # counted, kept until the chart pass settles them
        from dra_migrate.convert import values_asks

        found, rows = values_asks.helm_values(source, docs, settings.config)
        if PROFILE_NEEDLE.decode() in source.text:  # Models the chart renders (DRA279)
            from dra_migrate.convert import profile_asks

            more, asked = profile_asks.values_models(docs, settings.config, display)
            found = sorted([*found, *more], key=lambda f: (f.line, f.col, f.code))
            rows = [*rows, *asked]
        return FileResult(
            display, Status.REPORTED if found else Status.UNCHANGED, found, rows, original=raw
        )
    if role.kind == roles.KUSTOMIZE_PATCH:
        return _reported(
            display, unconverted.kustomize_patch(source, docs, settings.config, role.via), raw
        )
    if role.kind == roles.KUSTOMIZATION:
        return _reported(display, unconverted.kustomization(source, docs, settings.config), raw)
    from dra_migrate.k8s import schemas

    with schemas.open_book(raw):  # the verdicts of the objects this file's run checks
        return _convert(source, raw, docs, settings, edit, role)


def _needles(config: Config) -> tuple[str, ...]:
    """What a document must contain to be composed: a resource name of the
    mapping, or DRA objects and references (existing templates take names; the
    converted text's claims are checked against the templates)."""
    return (
        *(n.decode("utf-8", "replace") for n in config.needles()),
        "ResourceClaimTemplate",
        PROFILE_NEEDLE.decode(),
        "resourceClaim",
        "resource.k8s.io",
    )


def _reported(display: str, found: list[Finding], raw: bytes) -> FileResult:
    """A file that is never modified: reported when it sets GPU resources."""
    status = Status.REPORTED if found else Status.UNCHANGED
    return FileResult(display, status, found, original=raw)


def _convert(
    source: Source,
    raw: bytes,
    docs: list[Document],
    settings: Settings,
    edit: bool = True,
    role: Role | None = None,
) -> FileResult:
    path = source.path
    config = settings.config
    findings: list[Finding] = []
    inventory: list[InventoryItem] = []
    plans: list[PodPlan] = []
    names = Names()
    names.taken.update(settings.file_taken)
    for doc in docs:
        for obj in locate.objects(doc):
            if obj.kind == "ResourceClaimTemplate":
                names.reserve(obj.namespace, obj.name)
    held = _held(source, docs, config) if suppress.has_marker(raw) else []
    whole_file = bool(config.suppressions) and suppress.config_holds(config, path)
    bridging = config.strategy.may_bridge(settings.strategy)
    profiles = PROFILE_NEEDLE.decode() in source.text
    for doc in docs:
        for workload in locate.objects(doc):
            if whole_file or (held and suppress.holds(held, workload.root)):
                # "# dra-migrate: ignore[DRA401]": stays on the device plugin, listed by scan
                for site in locate.pod_sites(workload):
                    inventory.extend(_kept(_inventory(site, config, path), suppress.HOLD))
                continue
            policy = unconverted.POLICY_KINDS.get((api_group(workload.api_version), workload.kind))
            if policy is not None:
                findings.extend(policy(workload, settings, path))
                continue
            sites = locate.pod_sites(workload)
            covered: list[Node] = []
            for site in sites:
                rows = _inventory(site, config, path)
                inventory.extend(rows)
                if bridging and rows:
                    bridged = _bridged(rows, settings, path)
                    if bridged:  # left as it is: the extended resource stays
                        for row in rows:
                            row.bridged = True
                        findings.extend(bridged)
                        covered.extend(c.node for c in site.containers)
                        continue
                plan, found = plan_site(site, settings, names, path)
                if plan is None:  # what keeps it on the device plugin, for the plan: the
                    # refusal comes after the notes about single requests (DRA104, DRA031)
                    _kept(
                        rows, next((f.code for f in reversed(found) if f.severity is not INFO), "")
                    )
                    found = [f for f in found if not f.spec.writes]  # nothing is written
                findings.extend(found)
                covered.extend(c.node for c in site.containers)
                if plan is not None:
                    plans.append(plan)
            found_outside, asked_outside = unconverted.outside_asks(workload, covered, config, path)
            findings.extend(found_outside)
            inventory.extend(asked_outside)  # counted, kept by their findings
            found_inside, asked_inside = unconverted.embedded_asks(workload, source, config)
            findings.extend(found_inside)
            inventory.extend(asked_inside)  # inside strings: counted, kept by DRA227
            if profiles:  # a KubeAI Model: its profile's GPUs, counted (DRA279)
                from dra_migrate.convert import profile_asks

                found_profile, asked_profile = profile_asks.model_asks(workload, config, path)
                findings.extend(found_profile)
                inventory.extend(asked_profile)
    if plans:
        odd_break = sources.foreign_line_break(source)
        if odd_break is not None:
            findings.append(odd_break)
    findings = sorted(set(findings), key=lambda f: (f.line, f.col, f.code, f.message))
    blocking = next((f.code for f in findings if f.blocks), "")
    if blocking:
        _kept(inventory, blocking)
        return _left(path, _untouched(findings), findings, inventory, raw)
    if not plans:
        return FileResult(path, Status.UNCHANGED, findings, inventory, original=raw)
    # convert would rewrite this file, with these templates
    changed = functools.partial(
        FileResult,
        path,
        Status.CHANGED,
        findings,
        inventory,
        original=raw,
        templates=[dict(p.template_object) for p in plans],
        template_positions=[p.site.workload.position for p in plans],
    )
    if not edit and not (role is not None and role.overlays):  # scan (a base that overlays
        return changed()  # patch is edited: the overlays' conversion reads the text)
    edits = [e for p in plans for e in p.edits]
    try:
        if source.is_json and any(not p.site.workload.list_item for p in plans):
            first = next(p for p in plans if not p.site.workload.list_item)
            line, col = first.site.workload.position
            findings.append(
                finding(
                    "DRA211",
                    path,
                    line,
                    col,
                    "this JSON file holds a single object, so the ResourceClaimTemplate has no place in it",
                    "convert the file to YAML, or wrap the object in a kind: List",
                )
            )
            _kept(inventory, "DRA211")
            return _left(path, _untouched(findings), findings, inventory, raw)
        text, regions = apply_regions(source, docs, edits)
        converted, new_docs = _verify(text, source, settings)
        invalid = _loads_back(docs, new_docs, plans, path)
        if edit and not invalid:  # what is written must pass the schemas and validate; scan
            # writes nothing and reports no file's generated objects (jsonschema stays out)
            invalid = _check_generated(plans, settings, path) + _introduced(
                source, docs, converted, new_docs, settings, plans
            )
        if invalid:
            findings.extend(invalid)
            _kept(inventory, invalid[0].code)
            return _left(path, Status.FAILED, findings, inventory, raw)
    except (EditError, InputProblem) as exc:
        message = exc.finding.message if isinstance(exc, InputProblem) else str(exc)
        # where the problem is, when known; else the first object being converted
        line, col = (
            (exc.finding.line, exc.finding.col)
            if isinstance(exc, InputProblem) and exc.finding.line
            else plans[0].site.workload.position
        )
        findings.append(
            finding(
                "DRA900",
                path,
                line,
                col,
                f"internal error: the edit failed ({message}); left untouched",
            )
        )
        _kept(inventory, "DRA900")
        return _left(path, Status.FAILED, findings, inventory, raw)
    return changed(converted=source.encode(text), regions=regions)


def _left(
    path: str, status: Status, findings: list[Finding], rows: list[InventoryItem], raw: bytes
) -> FileResult:
    """A file the conversion leaves as it is: what it would have written is not said."""
    said = [f for f in findings if not f.spec.writes]
    return FileResult(path, status, said, rows, original=raw)


def _manifest_template(display: str, source: Source, raw: bytes, config: Config) -> FileResult:
    """A manifest template a walk found: every GPU ask listed and counted (DRA274), from
    its objects where it parses as YAML, else from its lines; never converted."""
    from dra_migrate.convert import file_templates  # only where a walk found a template

    try:
        docs = compose.parse(source, _needles(config))
    except InputProblem:
        found, rows = file_templates.text_asks(display, source, config)
    else:
        rows = []
        for workload in (w for doc in docs for w in locate.objects(doc)):
            covered: list[Node] = []
            for site in locate.pod_sites(workload):
                rows.extend(_inventory(site, config, display))
                covered.extend(c.node for c in site.containers)
            rows.extend(unconverted.outside_asks(workload, covered, config, display)[1])
        found = file_templates.findings(display, _kept(rows, file_templates.CODE))
    return (
        _reported(display, found, raw)
        if not rows
        else FileResult(
            display, Status.REPORTED, found, _kept(rows, file_templates.CODE), original=raw
        )
    )


def _kept(rows: list[InventoryItem], code: str) -> list[InventoryItem]:
    """Mark the rows convert leaves on the device plugin with the code that says why
    (a row marked already keeps its first reason)."""
    for row in rows:
        row.kept = row.kept or code
    return rows


def _bridged(rows: list[InventoryItem], settings: Settings, path: str) -> list[Finding]:
    """The findings of a pod spec the strategy bridges (it is left as it is), [] when
    it is rewritten: DRA514 when the bridge is real, else DRA515 (no DeviceClass maps
    a name) and DRA516 (the target version does not serve the bridge), whose rows are
    kept (the plan's ``manual``)."""
    from dra_migrate.k8s.versions import parse_kube_version
    from dra_migrate.migration import strategy  # only where a pod spec may be bridged

    kube = settings.kube_version
    minor = parse_kube_version(kube) if kube else None
    decision = strategy.for_pod(
        rows, settings.config.strategy, settings.strategy, minor, settings.target
    )
    if not rows or decision.strategy != strategy.BRIDGE:
        return []
    resources = sorted({r.resource for r in rows if r.device_class is not None})
    check = strategy.check_bridge(resources, settings.bridges, minor, settings.target, _shown)
    first = rows[0]
    what = f"{first.kind}/{first.namespace + '/' if first.namespace else ''}{first.name}"
    names = ", ".join(resources)
    why = decision.reasons[0]
    found = []
    for resource in check.missing:
        found.append(
            finding(
                "DRA515",
                path,
                first.line,
                first.col,
                f"{what} is bridged ({why}), so left asking for {resource}, but no "
                f"DeviceClass maps {resource}: no known driver installs one that does on "
                f"resource.k8s.io/{settings.target}, and the repository defines none with "
                "extendedResourceName",
                "commit the classes dra-migrate deviceclasses --strategy bridge . writes (and "
                "name the file under strategy.deviceClasses), or rewrite it (strategy: rewrite)",
            )
        )
    if check.blocked:
        found.append(
            finding(
                "DRA516",
                path,
                first.line,
                first.col,
                f"{what} is bridged ({why}), so left asking for {names}, but the target does "
                f"not serve the bridge: {check.blocked}",
                "target Kubernetes 1.36 or later (--kube-version; DRAExtendedResource is on "
                "by default there), or rewrite it (strategy: rewrite)",
            )
        )
    if found:
        _kept(rows, found[0].code)
        return found
    served = "; ".join(f"{cls} maps {resource}" for resource, cls in check.served)
    return [
        finding(
            "DRA514",
            path,
            first.line,
            first.col,
            f"{what} is bridged, left as it is ({why}); {served}",
        )
    ]


def _shown(real: str) -> str:
    """A class's file as messages show it: relative to the current folder when below it."""
    import os

    relative = os.path.relpath(real)
    return real if relative.startswith("..") else relative


def _untouched(findings: list[Finding]) -> Status:
    """A file a blocking finding leaves untouched: FAILED when its input could not be
    processed (exit 123), REPORTED when it is a manifest to fix by hand (exit 1)."""
    return Status.FAILED if any(f.unprocessed for f in findings) else Status.REPORTED


def _held(source: Source, docs: list[Document], config: Config) -> list[suppress.Marker]:
    """The ignore comments of a file, knowing the lines of its GPU requests."""
    lines = {
        item.line
        for doc in docs
        for workload in locate.objects(doc)
        for site in locate.pod_sites(workload)
        for item in _inventory(site, config, source.path)
    }
    return suppress.markers(source.text, docs, lines)


def _verify(text: str, source: Source, settings: Settings) -> tuple[Source, list[Document]]:
    """The output must parse, and converting it again must find nothing to do."""
    again = dataclasses.replace(source, text=text)
    # A document that mentions no resource name asks for none: only the others
    # are composed again (libyaml; cheap).
    docs = compose.parse(again, _needles(settings.config))
    names = Names()
    held = _held(again, docs, settings.config) if suppress.has_marker(text.encode()) else []
    bridging = settings.config.strategy.may_bridge(settings.strategy)
    for doc in docs:
        for workload in locate.objects(doc):
            if held and suppress.holds(held, workload.root):
                continue
            for site in locate.pod_sites(workload):
                rows = _inventory(site, settings.config, source.path)
                if bridging and rows and _bridged(rows, settings, source.path):
                    continue  # left as it is on purpose
                plan, _found = plan_site(site, settings, names, source.path)
                if plan is not None:
                    raise EditError(
                        f"the converted {workload.display} still asks for extended GPU resources"
                    )
    return again, docs


def _loads_back(
    docs: list[Document], new_docs: list[Document], plans: list[PodPlan], path: str
) -> list[Finding]:
    """The converted text, loaded again, holds the input's objects plus exactly the
    generated ones, each equal to what was meant: no name or selector turned into
    other YAML on the way (a line break, a quote, ``---``)."""
    before = [o for d in docs for o in locate.objects(d)]
    after = [o for d in new_docs for o in locate.objects(d)]
    problem = ""
    if len(after) != len(before) + len(plans):
        problem = (
            f"it holds {len(after)} objects where {len(before)} and {len(plans)} generated "
            "were meant"
        )
    else:
        # compared as canonical JSON in a set: one lookup a plan, not a scan of all
        loaded = {
            _canonical(trees.to_data(o.root)) for o in after if o.kind == "ResourceClaimTemplate"
        }
        for plan in plans:
            if _canonical(plan.template_object) not in loaded:
                problem = f"the ResourceClaimTemplate {plan.template!r} loads back differently"
                break
    if not problem:
        return []
    line, col = trees.position(plans[0].site.pod)
    return [
        finding(
            "DRA902",
            path,
            line,
            col,
            f"the converted text does not mean what was generated: {problem}; nothing was written",
            "please report this with the file",
        )
    ]


def _canonical(data: object) -> str:
    """Plain data as one string: equal data, equal strings (a boolean is not a number)."""
    import json

    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def _check_generated(plans: list[PodPlan], settings: Settings, path: str) -> list[Finding]:
    """Every generated object must pass the strict schema of the target version."""
    from dra_migrate.k8s import schemas

    found = []
    for plan in plans:
        obj = plan.template_object
        try:
            errors = schemas.validate_object(obj, settings.kube_version, keep=True)
        except schemas.SchemaNotFound as exc:
            errors = [schemas.SchemaError((), str(exc))]
        line, col = trees.position(plan.site.pod)
        for error in errors:
            found.append(
                finding(
                    "DRA901",
                    path,
                    line,
                    col,
                    f"generated ResourceClaimTemplate {plan.template} fails the "
                    f"{obj['apiVersion']} schema: {error.message}; nothing was written",
                    "check the device class, selectors and config in .dra-migrate.yaml",
                )
            )
    return found


def _introduced(
    source: Source,
    docs: list[Document],
    converted: Source,
    new_docs: list[Document],
    settings: Settings,
    plans: list[PodPlan],
) -> list[Finding]:
    """``validate`` errors that the conversion added to the file (none may be)."""
    from dra_migrate.validate import NEEDLES, ValidateSettings, check_documents, cross_check

    vsettings = ValidateSettings(
        kube_version=settings.kube_version, external_templates=True, claims_only=True
    )

    def errors(src: Source, parsed: list[Document]) -> dict[tuple[str, str], Finding]:
        if not compose.mentions(src.text, tuple(n.decode() for n in NEEDLES)):
            return {}
        check = check_documents(src, parsed, vsettings)
        found = check.result.findings + cross_check([check], vsettings)
        return {(f.code, f.message): f for f in found if f.severity.value == "error"}

    after = errors(converted, new_docs)
    if not after:  # the usual case: the input's own errors need not be known
        return []
    before = errors(source, docs)
    line, col = trees.position(plans[0].site.pod)  # positions in the input, not the output
    return [
        finding(
            "DRA901",
            source.path,
            line,
            col,
            f"the converted file would fail validation ({f.code} {f.message}, at line "
            f"{f.line} of the converted text); nothing was written",
        )
        for key, f in sorted(after.items())
        if key not in before
    ]


# --- inventory --------------------------------------------------------------------


def _inventory(site: locate.PodSite, config: Config, path: str) -> list[InventoryItem]:
    rows: list[InventoryItem] = []
    workload = site.workload
    ctx = Context(
        workload.namespace, {**workload.labels, **site.template_labels}, site.node_selector
    )
    replicas = _replicas(site)
    sharing_labels: tuple[LabelSelection, ...] = ()  # pipeline/selectors.py
    if get(site.pod, "nodeSelector") or get(site.pod, "affinity"):  # (imported only then)
        from dra_migrate.pipeline import selectors

        sharing_labels = selectors.sharing_labels(site.pod)
    for container in site.containers:
        resources = get(container.node, "resources")
        limits = {k: (kn, v) for k, kn, v in entries(get(resources, "limits")) if config.is_gpu(k)}
        requests = {
            k: (kn, v) for k, kn, v in entries(get(resources, "requests")) if config.is_gpu(k)
        }
        for name in [*limits, *(r for r in requests if r not in limits)]:
            key, value = limits.get(name) or requests[name]
            text = scalar(value) or ""
            count = whole_count(scalars.quantity_text(value) or "")
            choice = _choose(config, name, ctx, count)
            line, col = trees.position(key)
            rows.append(
                InventoryItem(
                    path=path,
                    line=line,
                    col=col,
                    api_version=workload.api_version,
                    kind=workload.kind,
                    namespace=workload.namespace,
                    name=workload.name,
                    pod_path=site.path,
                    container=container.name,
                    role=container.role,
                    resource=name,
                    count=count,
                    value=text,
                    device_class=choice.device_class if choice else None,
                    replicas=replicas,
                    selectors=choice.selectors if choice else (),
                    driver_config=bool(choice and choice.config),
                    shared=bool(choice and choice.shared),
                    rule=bool(choice and choice.rule is not None),
                    rule_index=choice.rule if choice else None,
                    sharing_labels=sharing_labels,
                )
            )
    return rows


def _choose(config: Config, name: str, ctx: Context, count: int | None) -> Choice | None:
    """The mapping's choice for ``name``, as the sharing model of the pod's nodes
    converts it where one may say (convert/sharing.py, imported only then)."""
    if config.sharing is None and not ctx.gpu_labels:
        return config.choose(name, ctx)
    from dra_migrate.convert import sharing

    return sharing.choose(config, name, ctx, count)


# Fields that say how many pods a pod template makes at once, beside its ``template``.
_REPLICA_FIELDS = ("replicas", "parallelism")
# Kinds whose pods run once per node: no fixed count.
_PER_NODE_KINDS = ("DaemonSet",)


def _replicas(site: locate.PodSite) -> int | None:
    """Pods of this pod spec at once: ``replicas``/``parallelism`` beside the template."""
    if site.workload.kind in _PER_NODE_KINDS:
        return None
    parts = site.path.split(".")
    if parts[-2:] != ["template", "spec"]:
        return 1  # a Pod, or a pod spec that is not a template
    holder: Node | None = site.workload.root
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", ".".join(parts[:-2])):
        if part.startswith("["):
            seq = trees.items(holder)
            index = int(part[1:-1])
            holder = seq[index] if index < len(seq) else None
        else:
            holder = get(holder, part)
    for name in _REPLICA_FIELDS:
        value = get(holder, name)
        if value is not None:
            return whole_count(scalar(value) or "")
    return 1
