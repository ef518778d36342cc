"""The pipeline: discover -> load -> locate -> plan -> edit -> validate, over many files.

``run`` walks the paths (``discover``), reads each file once and keeps those a
byte search says may need parsing, then takes each through every stage with
``process`` (on a process pool when there are enough of them). Nothing here
prints or writes: the CLI renders the report and ``writer`` writes files.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence

from dra_migrate.convert.mapping import PROFILE_NEEDLE
from dra_migrate.pipeline import kept, pool, suppress, units
from dra_migrate.pipeline.options import Job
from dra_migrate.pipeline.pool import Progress
from dra_migrate.repo import discover, roles
from dra_migrate.repo.context import Lookup, Trees
from dra_migrate.repo.node_pool_lookup import NodePoolLookup
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.model import FileResult, Report, Status

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

    from dra_migrate.convert.mapping import Settings
    from dra_migrate.pipeline.options import RunOptions
    from dra_migrate.repo.context import BridgeLookup
    from dra_migrate.repo.sharing_lookup import SharingLookup

# A file read for the prefilter is kept for processing up to this size; a larger
# one (an install bundle) is read again where it is processed, so that a run
# never holds every bundle of a repository at once.
HELD = 1 << 20


def run(options: RunOptions) -> Report:
    """Every file under ``options.paths`` (never under ``skip``, the output folder).

    ``only``: the real paths of the files to report on (``--changed-since``); the
    others are read for the templates they define and the kustomizations they
    hold, never converted: the names generated for the files reported avoid every
    template defined anywhere, and a file outside ``only`` is converted by the run
    that reports on it. ``context`` (``--context``): folders and files read for
    the same, and nothing else; in a git work tree, as the commit holds them (the
    index: context.py keeps what each file defines between runs), so a hook run on
    one staged file costs that file, not the repository.
    """
    paths, settings = options.paths, options.settings
    excludes, jobs = options.excludes, options.jobs
    edit, progress, skip = options.edit, options.progress, options.skip
    only, context = options.only, options.context
    config = settings.config
    every_exclude = [*config.exclude, *excludes]
    reported = None if only is None else {str(p) for p in only}
    needles = (*config.needles(), PROFILE_NEEDLE)
    # git is asked what the context defines while the files are listed and read
    # (one kept answer a work tree for all of them: context.Trees)
    trees = Trees()
    defining_context = Lookup(context, every_exclude, config.max_file_size, trees)
    bridges = _bridge_lookup(settings, (*paths, *context), every_exclude, trees)
    sharing = _sharing_lookup(settings, (*paths, *context), every_exclude, trees)
    pools = NodePoolLookup((*paths, *context), every_exclude, config.max_file_size, trees)
    wanted = (*needles, b"ResourceClaimTemplate", suppress.MARKER)
    reals: list[str] = []  # every file's real path; the candidates leave out the ruled-out ones
    candidates = list(
        discover.expand(paths, every_exclude, skip, wanted, config.max_file_size, reals)
    )
    todo: list[tuple[int, discover.Candidate, bytes | None]] = []
    results: dict[int, FileResult] = {}
    templates_elsewhere: set[tuple[str, str]] = set()
    # files not reported on are read only for the templates they define: git finds them
    defining = None if reported is None else discover.containing(paths, "ResourceClaimTemplate")
    for index, candidate in enumerate(candidates):
        if (
            reported is not None
            and defining is not None
            and not candidate.explicit
            and candidate.listed  # git searched it
            and candidate.real not in reported
            and candidate.real not in defining
        ):
            continue
        try:
            data = discover.read_file(candidate.path, config.max_file_size)
        except discover.Unreadable as exc:
            results[index] = FileResult.unreadable(candidate.display, exc.code, exc.message)
            continue
        if discover.may_define_templates(data):
            from dra_migrate.manifests.locate import defined_templates

            templates_elsewhere |= defined_templates(data)
        if reported is not None and candidate.real not in reported:
            continue
        if not _worth_parsing(data, needles):
            if candidate.explicit:  # named on the command line: looked at, so counted
                empty = not data.strip()
                found = [
                    finding("DRA007", candidate.display, 1, 1, "empty file, nothing to convert")
                ]
                results[index] = FileResult(
                    candidate.display, Status.UNCHANGED, found if empty else []
                )
            continue
        todo.append((index, candidate, data if len(data) <= HELD else None))
    data = b""  # the last file read is not held while the files are processed (read again)
    builder = roles.Builder(
        lambda data: discover.mentions(data, needles),
        renamings_only=not todo,
        given_only=not todo and bool(context),  # the report is narrowed to the paths
        staged=bool(context),  # the rest of the repository: as the index holds it
    )
    builder.add(reals)
    if todo:
        found_context = defining_context.result()
        if found_context is None:  # outside git: every file of the context is read
            around = [c.real for c in discover.expand(context, every_exclude, skip)]
            templates_elsewhere |= _defined_in(around, config.max_file_size)
        else:  # in git: what the index holds (context.py), kept between runs
            around = sorted(found_context)
            for templates in found_context.values():
                templates_elsewhere |= templates
    else:
        # nothing to convert: no name to keep clear of the context's templates, and
        # what it holds is not reported on (--context narrows the report to the paths)
        defining_context.cancel()
        if bridges is not None:
            bridges.cancel()
        if sharing is not None:
            sharing.cancel()
        pools.cancel()
        trees.cancel()
        around = []
    repo_layout = builder.add(around)
    if not todo:  # nothing to parse: the parsing and planning code is never imported
        builder.keep()
        files = [results[i] for i in sorted(results)]
        return Report(files, [f for f, _files in _renamings(repo_layout, set())])

    work = [
        (i, Job(c.path, c.display, _role(repo_layout, c), data, edit, False)) for i, c, data in todo
    ]
    builder.keep()  # what the layout learnt of kustomizations, for the next run
    if templates_elsewhere:
        settings = dataclasses.replace(settings, reserved=frozenset(templates_elsewhere))
    settings, duplicated = _with_bridges(settings, bridges)
    settings = _with_sharing(settings, sharing)
    settings = dataclasses.replace(settings, node_pools=pools.result(settings.config.is_gpu))
    processed = kept.mapped([job for _i, job in work], settings, jobs, progress, _map)
    for (index, _job), result in zip(work, processed, strict=False):
        results[index] = result
    _unique_across_files(work, results, settings)
    changed = {candidates[i].real for i, r in results.items() if r.status is Status.CHANGED}
    previous: dict[str, FileResult | None] = {}  # the kustomizations' results before
    served = _name_references(repo_layout, candidates, results, set(reals), previous)
    renamed = _renamings(repo_layout, changed, served)
    for i, result in results.items():
        blocked = [f for f, files in renamed if candidates[i].real in files]
        if blocked and result.status is Status.CHANGED:
            results[i] = _held_back(result, blocked[0])
    if repo_layout.patching:  # kustomize overlays converted with their bases, or held
        units.with_overlays(repo_layout, candidates, results, set(reals), settings)
    if served:  # the name references beside what the overlay pass made of them
        from dra_migrate.pipeline import name_references

        name_references.settle(results, previous)
    charts = units.with_charts(repo_layout, candidates, results, set(reals), settings)
    units.with_profiles(candidates, results, settings)  # KubeAI's Models (DRA279)
    if any(f.code == "DRA260" for r in results.values() for f in r.findings):
        from dra_migrate.helm import driver_values  # the stack's values for the shares

        units.by_real(
            candidates,
            results,
            lambda by_real: driver_values.carry_out(by_real, paths, every_exclude, settings),
        )
    files = [results[i] for i in sorted(results)]
    found = _collisions(files) + [f for f, _files in renamed] + duplicated
    return Report(
        files,
        found,
        bridge_classes=settings.bridges,
        charts=charts,
        sharing=settings.config.sharing,
    )


def _bridge_lookup(
    settings: Settings,
    roots: Sequence[str],
    excludes: Sequence[str],
    trees: Trees | None = None,
) -> BridgeLookup | None:
    """The search for the DeviceClasses that bridge an extended resource (under ``roots``
    and in the configuration's deviceclasses file), started now; None when the strategy
    bridges no workload of the run."""
    config = settings.config
    if not config.strategy.may_bridge(settings.strategy):
        return None
    from dra_migrate.repo.context import BridgeLookup

    extra = [config.strategy.device_classes] if config.strategy.device_classes else []
    return BridgeLookup(roots, excludes, config.max_file_size, extra, trees)


def _with_bridges(
    settings: Settings, lookup: BridgeLookup | None, stream: bytes = b""
) -> tuple[Settings, list[Finding]]:
    """The settings with the DeviceClasses that bridge an extended resource (what
    ``lookup`` found, and those of ``stream``); and DRA517 for each that maps a name a
    known driver's class maps already. Nothing when ``lookup`` is None."""
    if lookup is None:
        return settings, []
    from dra_migrate.migration import strategy
    from dra_migrate.report.model import BridgeClass

    found = list(lookup.result())
    if stream:
        from dra_migrate.manifests.locate import defined_bridges

        found += [BridgeClass(n, r, "-", line, col) for n, r, line, col in defined_bridges(stream)]
    duplicated = [
        finding(
            "DRA517",
            os.path.relpath(c.path) if c.path != "-" else "-",
            c.line,
            c.col,
            f"DeviceClass {c.name} maps {c.resource}, which the class its driver installs maps "
            f"already on resource.k8s.io/{settings.target}: the scheduler uses one of them "
            "(the newest, then the first by name)",
            "drop extendedResourceName from this class, or turn the driver's mapping off in "
            "its chart values",
        )
        for c in strategy.duplicated_by_driver(found, settings.target)
    ]
    return dataclasses.replace(settings, bridges=tuple(found)), duplicated


def _sharing_lookup(
    settings: Settings, roots: Sequence[str], excludes: Sequence[str], trees: Trees
) -> SharingLookup | None:
    """The search for the device plugin configurations under ``roots`` (the sharing
    model, repo/sharing.py), started now; None when the configuration says not to."""
    if not settings.config.read_sharing:
        return None
    from dra_migrate.repo.sharing_lookup import SharingLookup

    return SharingLookup(roots, excludes, settings.config.max_file_size, trees)


def _with_sharing(settings: Settings, lookup: SharingLookup | None) -> Settings:
    """The settings with the pools the repository's configurations define, after the
    configuration's own."""
    if lookup is None:
        return settings
    fleet, _files = lookup.result()
    if fleet is None or not fleet.known:
        return settings
    mine = settings.config.sharing
    merged = dataclasses.replace(settings.config, sharing=mine.merged(fleet) if mine else fleet)
    return dataclasses.replace(settings, config=merged)


def _defined_in(files: Iterable[str], limit: int) -> set[tuple[str, str]]:
    """(namespace, name) of the ResourceClaimTemplates the files define."""
    found: set[tuple[str, str]] = set()
    for path in files:
        try:
            data = discover.read_file(path, limit)
        except discover.Unreadable:
            continue  # reported by the run whose paths hold it
        if discover.may_define_templates(data):
            from dra_migrate.manifests.locate import defined_templates

            found |= defined_templates(data)
    return found


def _worth_parsing(data: bytes, needles: Iterable[bytes]) -> bool:
    """The prefilter: the file may mention a needle, holds text the byte search cannot
    see into (UTF-16), or an ignore comment that may need reporting as stale."""
    return (
        discover.mentions(data, needles)
        or discover.foreign_encoding(data)
        or suppress.has_marker(data)
    )


def _unique_across_files(
    work: list[tuple[int, Job]], results: dict[int, FileResult], settings: Settings
) -> None:
    """A generated name is unique across the run: a file whose template takes a name an
    earlier file generated with other requests is planned again with that name reserved
    (files are independent, so this is rare and cheap; the workers plan in parallel)."""
    import json

    taken: dict[tuple[str, str], str] = {}

    def spelled(r: FileResult) -> list[tuple[tuple[str, str], str]]:
        return [(_template_key(t), json.dumps(t, sort_keys=True)) for t in r.templates]

    def clashes(found: list[tuple[tuple[str, str], str]]) -> bool:
        return any(taken.get(key, text) != text for key, text in found)

    for index, job in work:
        result = results[index]
        if not result.templates:
            continue
        found = spelled(result)
        if clashes(found):
            from dra_migrate.pipeline.one_file import process_job

            reserved = settings.reserved | frozenset(taken)
            again = process_job(job, dataclasses.replace(settings, reserved=reserved))
            found_again = spelled(again)
            if not clashes(found_again):
                result, found = again, found_again
                results[index] = again
        for key, text in found:
            taken.setdefault(key, text)


def _template_key(template: dict[str, Any]) -> tuple[str, str]:
    meta = template["metadata"]
    return (meta.get("namespace") or "", meta["name"])


def mark_pending(report: Report) -> None:
    """``convert --check``: each GPU request that convert would rewrite is an error (DRA401).

    The check fails on these anyway (exit 1); as findings they point at the
    lines to migrate in every format (annotations, SARIF, JUnit) and can be
    suppressed like any other. A request an ignore of DRA401 holds on the device
    plugin gets its DRA401 too, in any file: the suppression stage moves it to the
    suppressed findings, so every format counts what the ignore silenced.
    """
    for result in report.files:
        for item in result.inventory:
            held = item.kept == suppress.HOLD
            if item.device_class is None or not (held or result.status is Status.CHANGED):
                continue
            if item.kept and not held:  # convert leaves it, and says why
                continue
            result.findings.append(
                finding(
                    "DRA401",
                    item.path,
                    item.line,
                    item.col,
                    f"{item.who} asks for {item.resource}: {item.value} through the device "
                    "plugin; "
                    + (
                        "an ignore holds it there (convert would rewrite it as a claim on "
                        f"DeviceClass {item.device_class})"
                        if held
                        else f"convert rewrites it as a claim on DeviceClass {item.device_class}"
                    ),
                    "remove the ignore to migrate it"
                    if held
                    else "run dra-migrate convert --write (or the dra-migrate-fix hook) and "
                    "review the diff",
                )
            )
        result.findings.sort(key=lambda f: (f.line, f.col, f.code, f.message))


def _name_references(
    layout: roles.Layout,
    candidates: list[discover.Candidate],
    results: dict[int, FileResult],
    in_run: set[str],
    previous: dict[str, FileResult | None],
) -> set[str]:
    """The renaming kustomizations of the run given the name reference configuration
    of the templates their builds hold (pipeline/name_references.py): served."""
    if not any(not r.references_templates and r.path in in_run for r in layout.renamings):
        return set()
    from dra_migrate.pipeline import name_references, units

    served: set[str] = set()

    def carry_out(by_real: dict[str, FileResult]) -> list[FileResult]:
        added, done = name_references.carry_out(layout, by_real, in_run, previous)
        served.update(done)
        return added

    units.by_real(candidates, results, carry_out)
    return served


def _renamings(
    repo_layout: roles.Layout,
    changed: set[str],
    served: set[str] = frozenset(),  # type: ignore[assignment]
) -> list[tuple[Finding, frozenset[str]]]:
    """Overlays that rename ResourceClaimTemplates without renaming the references, each
    with the real paths of the converted files it builds (not written: they would
    break)."""
    if not repo_layout.renamings:
        return []
    from dra_migrate.pipeline.one_file import uses_templates

    found = []
    for renaming in repo_layout.renamings:
        if renaming.references_templates or renaming.path in served:
            continue
        uses = renaming.files & changed or {f for f in renaming.files if uses_templates(f)}
        if uses:
            found.append(
                (
                    finding(
                        "DRA219",
                        renaming.display,
                        renaming.line,
                        renaming.col,
                        "this kustomization renames the ResourceClaimTemplates it builds, but "
                        "kustomize does not rename resourceClaimTemplateName in pod specs: the pods "
                        "would refer to templates that do not exist",
                        "add a configurations: file with a nameReference for kind "
                        "ResourceClaimTemplate (docs/findings.md#dra219)",
                    ),
                    frozenset(uses & changed),
                )
            )
    return found


def _held_back(result: FileResult, renaming: Finding) -> FileResult:
    """A converted file that a kustomization would build into broken references: left as
    it is, with the reason on it (an error finding on a file means it is not written)."""
    line, col = result.template_positions[0] if result.template_positions else (1, 1)
    held = finding(
        "DRA219",
        result.path,
        line,
        col,
        f"not converted: {renaming.path} renames the ResourceClaimTemplates this file would "
        "define, but not the pods' references to them",
        renaming.hint,
    )
    findings = sorted(
        [*(f for f in result.findings if not f.spec.writes), held],
        key=lambda f: (f.line, f.col, f.code, f.message),
    )
    inventory = [dataclasses.replace(row, kept=row.kept or "DRA219") for row in result.inventory]
    return FileResult(result.path, Status.REPORTED, findings, inventory, original=result.original)


def _collisions(files: list[FileResult]) -> list[Finding]:
    """Different templates of one name from two files would overwrite each other."""
    import json

    seen: dict[tuple[str, str], tuple[str, str]] = {}
    found = []
    for result in files:
        positions = result.template_positions or [(1, 1)] * len(result.templates)
        for template, (line, col) in zip(result.templates, positions, strict=True):
            meta = template["metadata"]
            key = (meta.get("namespace") or "", meta["name"])
            body = json.dumps(template, sort_keys=True)
            if key not in seen:
                seen[key] = (result.path, body)
            elif seen[key][1] != body:
                shown = f"{key[0]}/{key[1]}" if key[0] else key[1]
                found.append(
                    finding(
                        "DRA217",
                        result.path,
                        line,
                        col,
                        f"ResourceClaimTemplate {shown} is generated here and, with other "
                        f"requests, from {seen[key][0]}; a template's spec is immutable, so "
                        "applied to one cluster the second is rejected",
                        "give one of the workloads another name or namespace, unless the two "
                        "files go to different clusters",
                    )
                )
    return found


def _map(
    work: list[Job], settings: Settings, jobs: int | None, progress: Progress = None
) -> list[FileResult]:
    if not work:  # every result kept: the file stage is never imported
        return []
    from dra_migrate.pipeline.one_file import process_job

    return pool.in_order(process_job, [work, [settings] * len(work)], jobs, progress)


# --- stdin ------------------------------------------------------------------------


def driver_releases(config: Any, published: frozenset[str]) -> tuple[tuple[str, str, str], ...]:
    """(domain, release, why) of each catalogued driver, as the run assumes it."""
    from dra_migrate.k8s.catalog import load_catalog

    chosen = load_catalog().assumed_releases(dict(config.driver_releases), published)
    return tuple((domain, release, why) for domain, (release, why) in sorted(chosen.items()))


def run_validate(
    options: RunOptions,
    settings: Any,
    devices: Sequence[Any] | None = None,
    stdin: tuple[str, bytes] | None = None,
) -> Report:
    """``dra-migrate validate``: every file that mentions DRA, then the cross-file checks
    (``settings``: the validate.ValidateSettings of the run)."""
    import dataclasses

    from dra_migrate import validate

    paths, config, excludes = options.paths, options.settings.config, options.excludes
    jobs, progress = options.jobs, options.progress

    # what the configuration declares and the slices show the drivers publish is known
    published = config.published() | validate.published_names(devices or ())
    if published:
        settings = dataclasses.replace(settings, published=published)
    settings = dataclasses.replace(settings, driver_releases=driver_releases(config, published))

    # (display, the bytes, or None for a file over HELD: read again where it is checked,
    # the real path, named on the command line)
    jobs_: list[tuple[str, bytes | None, str, bool]] = []
    failed: list[FileResult] = []
    every: list[str] = []  # the real path of every file of the run
    if stdin is not None:
        jobs_.append((*stdin, "", False))
    else:
        wanted = (*validate.NEEDLES, suppress.MARKER)
        excluded = [*config.exclude, *excludes]
        # the real paths of every file, ruled out or not, are not needed: a list that
        # takes them keeps the ruled-out ones from being made candidates
        for candidate in discover.expand(paths, excluded, (), wanted, config.max_file_size, every):
            try:
                data = discover.read_file(candidate.path, config.max_file_size)
            except discover.Unreadable as exc:
                failed.append(FileResult.unreadable(candidate.display, exc.code, exc.message))
                continue
            # a file named on the command line is always checked (and counted), as
            # convert checks it: a Pod with a YAML syntax error is DRA004, never skipped
            if candidate.explicit or _worth_parsing(data, validate.NEEDLES):
                held = data if len(data) <= HELD else None
                jobs_.append((candidate.display, held, candidate.path, candidate.explicit))
    limit = config.max_file_size
    # a named file's documents that ask for GPUs are composed too, as convert composes them
    gpus = tuple(n.decode("utf-8", "replace") for n in config.needles())
    many = len(jobs_)
    columns: list[Sequence[Any]] = [
        [display for display, _data, _path, _named in jobs_],
        [data for _display, data, _path, _named in jobs_],
        [path for _display, _data, path, _named in jobs_],
        [gpus if named else () for _display, _data, _path, named in jobs_],
        [limit] * many,
        [settings] * many,
    ]
    checks = pool.in_order(_check_file, columns, jobs, progress)
    extra = validate.cross_check(checks, settings)
    if devices is not None:
        extra += validate.check_slices(checks, devices, settings.installed_classes)
    by_path = {c.result.path: c.result for c in checks}
    for f in extra:
        by_path[f.path].findings.append(f)
    for result in by_path.values():
        result.findings.sort(key=lambda f: (f.line, f.col, f.code, f.message))
    # an overlay that renames the templates its pods refer to breaks them in its build
    renamed = _renamings(roles.Builder(renamings_only=True).add(every), set()) if every else []
    return Report(failed + [c.result for c in checks], [f for f, _files in renamed])


def _check_file(
    display: str, data: bytes | None, path: str, also: tuple[str, ...], limit: int, settings: Any
) -> Any:
    """``validate.check_file`` of a file, read here when it was not held (``also``: the
    needles of the documents composed besides DRA's, for a file named on the command
    line)."""
    from dra_migrate import validate

    if data is None:
        try:
            data = discover.read_file(path, limit)
        except discover.Unreadable as exc:
            return validate.FileCheck(FileResult.unreadable(display, exc.code, exc.message))
    check = validate.check_file(display, data, settings, also)
    if not suppress.has_marker(data):  # only ignore comments read the text again
        check.result.original = None
    return check


def load_nodes(path: str) -> list[Any]:
    """Nodes of a ``kubectl get nodes -o yaml`` (or ``-o json``) dump, with the extended
    resources each advertises (``status.allocatable`` names with a domain)."""
    from dra_migrate.report.findings import ConfigError

    objs: list[Any] = []
    for doc in _dump(path, "--nodes"):
        listed = doc.get("items")
        objs.extend(listed if isinstance(listed, list) else [doc])
    nodes = nodes_from_objects(objs)
    if not nodes:
        raise ConfigError(f"--nodes {path}: no Node objects in it")
    return nodes


def nodes_from_objects(objs: Iterable[Any]) -> list[Any]:
    """``LiveNode``s of Node objects (from a dump or the API server): the extended
    resources each advertises (``status.allocatable`` names with a domain)."""
    from dra_migrate.k8s.quantity import whole_count
    from dra_migrate.report.migration import LiveNode

    nodes = []
    for obj in objs:
        if not isinstance(obj, dict) or obj.get("kind", "Node") != "Node":
            continue
        meta, status = obj.get("metadata") or {}, obj.get("status") or {}
        allocatable = status.get("allocatable") if isinstance(status, dict) else None
        resources = []
        for key, value in (allocatable or {}).items() if isinstance(allocatable, dict) else ():
            count = whole_count(str(value))
            if "/" in str(key) and count:
                resources.append((str(key), count))
        name = meta.get("name") if isinstance(meta, dict) else None
        labels = meta.get("labels") if isinstance(meta, dict) else None
        shown = (
            sorted((str(k), str(v)) for k, v in (labels or {}).items())
            if isinstance(labels, dict)
            else []
        )
        nodes.append(LiveNode(str(name or "(unnamed)"), tuple(sorted(resources)), tuple(shown)))
    return nodes


def _dump(
    path: str, option: str, limit: int = discover.DEFAULT_MAX_FILE_SIZE
) -> list[dict[str, Any]]:
    """The objects of a ``kubectl get ... -o yaml|json`` file."""
    import json

    from dra_migrate.manifests import compose, sources, trees
    from dra_migrate.report.findings import ConfigError, InputProblem

    try:
        raw = discover.read_file(path, limit)
    except discover.Unreadable as exc:
        raise ConfigError(f"{option} {path}: {exc.message}") from None
    try:  # JSON (kubectl -o json) is read fastest by json; it has no aliases to bound
        docs: list[Any] = [json.loads(raw)]
        if compose.data_depth(docs[0]) > compose.MAX_DEPTH:
            raise ConfigError(
                f"{option}: nested more than {compose.MAX_DEPTH} levels deep", path, 1, 1
            )
    except (ValueError, RecursionError):  # YAML, or JSON too deep for json
        try:
            source = sources.decode(path, raw)
            docs = [trees.to_data(d.root) for d in compose.parse(source) if d.root is not None]
        except InputProblem as problem:
            f = problem.finding
            raise ConfigError(f"{option}: {f.message}", path, f.line, f.col) from None
    return [d for d in docs if isinstance(d, dict)]


def load_slices(path: str, limit: int = discover.DEFAULT_MAX_FILE_SIZE) -> list[Any]:
    """Devices of a ``kubectl get resourceslices -o yaml`` (or ``-o json``) dump."""
    from dra_migrate.cel import devices_from_resource_slices
    from dra_migrate.report.findings import ConfigError

    devices = devices_from_resource_slices(_dump(path, "--resource-slices", limit))
    if not devices:
        raise ConfigError(f"--resource-slices {path}: no ResourceSlice devices in it")
    return devices


def _role(layout: roles.Layout, candidate: discover.Candidate) -> roles.Role:
    """A file's role; a manifest template a walk found is listed, never converted (one
    named on the command line is read as the manifest it is)."""
    if not candidate.explicit and roles.walked_template(candidate.display):
        return roles.Role(roles.MANIFEST_TEMPLATE)
    return layout.role(candidate.path, candidate.real)
