"""Kustomize overlays converted with their bases: one unit, or left whole.

A base whose overlays patch its GPU resources converts like any manifest; each
overlay then gets, for every workload whose patched count (or resource) makes a
claim other than the base's:

- a ResourceClaimTemplate of its own, with a new name (a template's spec is
  immutable, so one name never carries two specs), in ``resourceclaimtemplates.yaml``
  beside the overlay's kustomization and listed under its ``resources:``;
- a patch, ``resourceclaimtemplates-replaced.yaml`` under its ``patches:``, that
  deletes the base's template from the overlay's build (``$patch: delete``);
- its GPU patch rewritten: the extended resource keys go, and the pod's
  ``resourceClaims`` point at the new template (a strategic-merge patch repeats the
  base's list, which kustomize replaces whole; a JSON 6902 operation replaces the
  one ``resourceClaimTemplateName``).

An overlay whose patch sets the base's count again only loses the GPU keys. What
the overlay builds is planned as ``convert`` plans the built objects (the same
mapping, the same counts), so ``kubectl kustomize`` of the converted tree equals
the conversion of ``kubectl kustomize`` of the tree before (``convert
--verify-builds`` proves it). A construct that cannot be rewritten safely (a
``$patch`` directive, a patch that adds or removes containers, a count of 0, a
resource the base does not ask for, a target that is not one object, a file of
the unit outside the paths given) leaves the base and every overlay that patches
it as they are, with a finding that names the construct (DRA222 on the base,
DRA202 on the patch).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable

from yaml.nodes import MappingNode, ScalarNode

from dra_migrate.convert.edit import Style, apply_regions, detect_style, render_document
from dra_migrate.convert.mapping import Settings
from dra_migrate.convert.operations import Edit, add_items
from dra_migrate.convert.overlay_json import json6902
from dra_migrate.convert.overlay_patches import Bases, Blocked, Bridging, Patch, Unit, strategic
from dra_migrate.manifests import compose, sources
from dra_migrate.manifests.sources import Source
from dra_migrate.manifests.trees import entries, get, items, position, scalar
from dra_migrate.repo import discover, roles
from dra_migrate.report.findings import Finding, InputProblem, finding
from dra_migrate.report.model import FileResult, Status

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

_PATTERN = re.compile(r"[*+?\[\](){}|^$\\]")  # a target name that is a regular expression
TEMPLATES_FILE = "resourceclaimtemplates.yaml"
REPLACED_FILE = "resourceclaimtemplates-replaced.yaml"


def carry_out(
    layout: roles.Layout,
    results: dict[str, FileResult],
    in_run: set[str],
    settings: Settings,
) -> list[FileResult]:
    """Convert every overlay that patches GPU resources of the bases converted in
    ``results`` (real path -> result); hold the bases whose overlays cannot be.

    ``in_run``: the real paths of every file of the run (a unit is converted only
    when all its files are among them). Returns the results of the files the
    overlays add or change (patch files, kustomizations, new template files);
    ``results`` is updated in place for the bases held and the patches rewritten.
    """
    units: list[Unit] = []
    blocked: dict[str, Blocked] = {}  # base real path -> why its overlays stop
    for kustomization, display, built, targets in layout.gpu_overlays():
        unit = Unit(kustomization, display)
        bases = Bases(built, results, in_run)
        try:
            try:
                _overlay(unit, bases, in_run, settings)
            except InputProblem as problem:  # a file of the unit that cannot be read
                found = problem.finding
                raise Blocked(
                    found.path, found.line, found.col, f"it cannot be read ({found.message})"
                ) from None
            except (Blocked, Bridging):
                raise
            except Exception as exc:  # a bug: the unit is left as it is, never a traceback
                raise Blocked(
                    display,
                    1,
                    1,
                    f"internal error ({type(exc).__name__}: {exc}); please report this with "
                    "the kustomization",
                ) from None
        except Blocked as why:
            unit.stopped = why
            unit.files.clear()
            unit.bases |= _patched(bases, targets)
            for real in unit.bases:
                if _converted(results, real):
                    blocked.setdefault(real, why)
        units.append(unit)
    # a base held holds every overlay that patches it, and their other bases
    changed = True
    while changed:
        changed = False
        for unit in units:
            stop = next((blocked[b] for b in sorted(unit.bases) if b in blocked), None)
            if stop is None:
                continue
            if unit.files:
                unit.files.clear()
                changed = True
            for base in unit.bases:  # (a base the run does not convert ties nothing:
                # its overlays are independent of each other)
                if base not in blocked and _converted(results, base):
                    blocked[base] = stop
                    changed = True
    for real, reason in blocked.items():
        result = results[real]
        if result.status is Status.CHANGED:
            results[real] = _held(result, reason)
    for unit in units:
        for real in unit.bridged:  # the patch keeps the extended resource the bridge serves
            bridged_result = results.get(real)
            if bridged_result is not None:
                bridged_result.findings = [_bridged(f) for f in bridged_result.findings]
                if not any(f.severity.value == "error" for f in bridged_result.findings):
                    bridged_result.status = Status.UNCHANGED
        stop = next((blocked[b] for b in sorted(unit.bases) if b in blocked), unit.stopped)
        if stop is None:
            continue
        for real in unit.patch_files:
            patch_result = results.get(real)
            if patch_result is not None:
                patch_result.findings = [_stopped(f, stop) for f in patch_result.findings]
    out: list[FileResult] = []
    for unit in units:
        if unit.files:
            for base in unit.bases:
                if base in results:  # (a base that asks for no GPU is no result)
                    results[base].units.add(unit.label)
        for real, (display, new, old) in sorted(unit.files.items()):
            previous = results.get(real)
            keep = [f for f in (previous.findings if previous else []) if f.code != "DRA202"]
            notes = [n for n in unit.notes if n.path == display]
            result = FileResult(
                display,
                Status.CHANGED,
                sorted([*keep, *notes], key=lambda f: (f.line, f.col, f.code, f.message)),
                previous.inventory if previous else [],
                original=old if old is not None else b"",
                converted=new,
                created=old is None,
                units={unit.label},
            )
            if previous is not None:
                results[real] = result
            else:
                out.append(result)
    return out


def _converted(results: dict[str, FileResult], real: str) -> bool:
    found = results.get(real)
    return found is not None and found.status is Status.CHANGED


def _patched(bases: Bases, targets: frozenset[tuple[str, str]] | None) -> set[str]:
    """The converted files that hold what a stopped overlay patches (every converted
    file it builds when its patches' targets are not known)."""
    if targets is None:
        return bases.converted()
    return {base.real for kind, name in targets if (base := bases.get(kind, name))}


def _bridged(found: Finding) -> Finding:
    """A patch's DRA202 where its base is bridged: the patch stays, served as its base is."""
    if found.code != "DRA202":
        return found
    return finding(
        "DRA233",
        found.path,
        found.line,
        found.col,
        found.message.split(" and is not converted")[0]
        + ": left as it is, its base is bridged (the DeviceClass that maps the name serves it)",
    )


def _stopped(found: Finding, why: Blocked) -> Finding:
    """A patch's DRA202, with what stopped its unit."""
    if found.code != "DRA202":
        return found
    where = f" ({why.path}:{why.line}:{why.col})" if why.line else ""
    return dataclasses.replace(found, message=f"{found.message}: {why.message}{where}")


def _held(result: FileResult, why: Blocked) -> FileResult:
    """A converted base left as it is: DRA222 says which construct stopped it."""
    line, col = result.template_positions[0] if result.template_positions else (1, 1)
    where = f"{why.path}:{why.line}:{why.col}" if why.line else why.path
    held = finding(
        "DRA222",
        result.path,
        line,
        col,
        f"kustomize overlays patch GPU resources of this base, and {where} cannot be "
        f"converted with it: {why.message}; the base and its overlays are left as they are",
        "change that construct (docs/findings.md#dra222 lists them) or convert the unit by "
        "hand (docs/conversion.md#kustomize-overlays), then run again",
    )
    findings = sorted(
        [*(f for f in result.findings if not f.spec.writes), held],
        key=lambda f: (f.line, f.col, f.code, f.message),
    )
    inventory = [dataclasses.replace(row, kept=row.kept or "DRA222") for row in result.inventory]
    return FileResult(result.path, Status.REPORTED, findings, inventory, original=result.original)


def _overlay(unit: Unit, bases: Bases, in_run: set[str], settings: Settings) -> None:
    config = settings.config
    raw = _read(unit.kustomization, unit.display)
    k_source = sources.decode(unit.display, raw)
    k_docs = compose.parse(k_source)
    root = next((d.root for d in k_docs if isinstance(d.root, MappingNode)), None)
    if root is None:
        return
    if unit.kustomization not in in_run:
        raise Blocked(unit.display, 1, 1, _outside(unit.display))
    gpu = config.needles()
    inline_new: list[tuple[ScalarNode, str]] = []
    for patch in _patches(root, unit, gpu):
        if not discover.mentions(patch.text.encode(), gpu):
            continue
        unit.patch_files.add(patch.real or unit.kustomization)
        if patch.real is not None and patch.real not in in_run:
            raise Blocked(patch.display, 1, 1, _outside(patch.display))
        source = sources.decode(patch.display, patch.text.encode())
        try:
            docs = compose.parse(source)
        except InputProblem as problem:
            raise Blocked(
                problem.finding.path,
                problem.finding.line,
                problem.finding.col,
                f"the patch cannot be read ({problem.finding.message})",
            ) from None
        try:
            text = _rewritten(unit, patch, source, docs, bases, settings)
        except Bridging:  # as it is, with its base: served by the bridge
            unit.bridged.add(patch.real or unit.kustomization)
            continue
        except Blocked as why:
            if patch.real is None and why.line:  # a line of the inline text: of the file
                line, col = _inline_position(k_source.text, patch.entry, why.line, why.col)
                raise Blocked(why.path, line, col, why.message) from None
            raise
        if text is None:
            continue
        if patch.real is not None:
            unit.files[patch.real] = (patch.display, source.encode(text), patch.text.encode())
        else:
            assert isinstance(patch.entry, (ScalarNode, MappingNode))
            node = patch.entry if isinstance(patch.entry, ScalarNode) else get(patch.entry, "patch")
            assert isinstance(node, ScalarNode)
            inline_new.append((node, text))
        unit.notes.append(
            finding(
                "DRA230",
                patch.display,
                *unit.where.get(patch.display, position(patch.entry)),
                f"kustomize patch (applied by {unit.display}) converted with its base: "
                + (
                    "it points the pods at their overlay's ResourceClaimTemplate"
                    if unit.templates
                    else "the base's claim already asks for what it sets"
                ),
            )
        )
    if not unit.templates and not inline_new and not unit.files:
        return
    k_text = _inline_spliced(k_source, inline_new)
    edits_k: list[Edit] = []
    folder = os.path.dirname(unit.kustomization)
    if unit.templates:
        k_source2 = dataclasses.replace(k_source, text=k_text)
        k_docs = compose.parse(k_source2)
        root2 = next(d.root for d in k_docs if isinstance(d.root, MappingNode))
        for name in (TEMPLATES_FILE, REPLACED_FILE):
            if os.path.lexists(os.path.join(folder, name)):
                raise Blocked(
                    unit.display, 1, 1, f"{name} exists beside it (the file this would write)"
                )
        style = detect_style(k_source2, k_docs)
        edits_k += add_items(root2, "resources", (TEMPLATES_FILE,))
        if unit.replaced:
            edits_k += add_items(root2, "patches", ({"path": REPLACED_FILE},))
        k_text, _regions = apply_regions(k_source2, k_docs, edits_k)
        shown_dir = os.path.dirname(unit.display)
        unit.files[os.path.join(folder, TEMPLATES_FILE)] = (
            os.path.join(shown_dir, TEMPLATES_FILE),
            _documents(
                unit.templates, f"dra-migrate: GPU claims of the overlay {unit.display}", style
            ),
            None,
        )
        if unit.replaced:
            unit.files[os.path.join(folder, REPLACED_FILE)] = (
                os.path.join(shown_dir, REPLACED_FILE),
                _documents(
                    unit.replaced,
                    "dra-migrate: the base's templates this overlay replaces with its own",
                    style,
                ),
                None,
            )
    if k_text != k_source.text:
        unit.files[unit.kustomization] = (unit.display, k_source.encode(k_text), raw)


def _rewritten(
    unit: Unit,
    patch: Patch,
    source: Source,
    docs: list[Any],
    bases: Bases,
    settings: Settings,
) -> str | None:
    """The patch's new text; None when it sets no GPU the mapping knows."""
    if patch.json6902:  # operations rewritten in place, value by value
        splices = json6902(unit, patch, docs, bases, settings)
        if not splices:
            return None
        text = source.text
        for start, end, new in sorted(splices, reverse=True):
            text = text[:start] + new + text[end:]
        return text
    edits = strategic(unit, patch, docs, bases, settings)
    if not edits:
        return None
    return apply_regions(source, docs, edits)[0]


def _inline_position(text: str, entry: Any, line: int, col: int) -> tuple[int, int]:
    """A line and column of an inline patch's text, as a line and column of the
    kustomization that holds it (a literal block scalar: line for line, indented)."""
    node = entry if isinstance(entry, ScalarNode) else get(entry, "patch")
    if not isinstance(node, ScalarNode):
        return position(entry)
    start = text.index("\n", node.start_mark.index) + 1
    body = text[start : node.end_mark.index]
    first = next((x for x in body.split("\n") if x.strip()), "")
    indent = len(first) - len(first.lstrip(" "))
    return node.start_mark.line + 1 + line, indent + col


def _outside(display: str) -> str:
    return (
        f"{display} is outside the paths given: a base and its overlays are converted in "
        "one run (give the folder that holds them all)"
    )


def _read(real: str, display: str) -> bytes:
    try:
        return discover.read_file(real)
    except discover.Unreadable as exc:
        raise Blocked(display, 1, 1, exc.message) from None


def _patches(root: MappingNode, unit: Unit, gpu: tuple[bytes, ...]) -> Iterable[Patch]:
    """The kustomization's patch entries, each with its text (file or inline)."""
    folder = os.path.dirname(unit.kustomization)
    shown_dir = os.path.dirname(unit.display)
    for key in ("patches", "patchesStrategicMerge", "patchesJson6902"):
        for item in items(get(root, key)):
            target: tuple[str, str] | None = None
            if isinstance(item, ScalarNode):  # patchesStrategicMerge: a path, or inline YAML
                text = item.value
                inline = "\n" in text or text.lstrip().startswith(("apiVersion", "{"))
                file = None if inline else text
                body: ScalarNode | MappingNode | None = item if inline else None
            else:
                file = scalar(get(item, "path"))
                body = get(item, "patch")
                text = scalar(body) or ""
                t = get(item, "target")
                if t is not None:
                    known = {name for name, _k, _v in entries(t)}
                    kind, name = scalar(get(t, "kind")), scalar(get(t, "name"))
                    one = bool(kind and name) and not _PATTERN.search(name or "")
                    if not one or known - {"kind", "name", "group", "version"}:  # noqa: SIM102
                        if discover.mentions(_body(folder, file, text), gpu):
                            line, col = position(t)
                            raise Blocked(
                                unit.display,
                                line,
                                col,
                                "a GPU patch whose target is not one object by kind and name "
                                "(a label selector, a name pattern or a namespace)",
                            )
                    if kind and name:
                        target = (kind, name)
            if file:
                real = os.path.realpath(os.path.join(folder, file))
                display = os.path.normpath(os.path.join(shown_dir, file))
                data = _read(real, display)
                text = sources.decode(display, data).text
            else:
                real = None
                display = unit.display
                literal = getattr(body, "style", None) == "|"
                if body is not None and not literal and discover.mentions(text.encode(), gpu):
                    line, col = position(body)
                    raise Blocked(
                        unit.display,
                        line,
                        col,
                        "an inline GPU patch that is not a literal block scalar (patch: |)",
                    )
            stripped = text.lstrip()
            json6902 = key == "patchesJson6902" or stripped.startswith(("-", "["))
            yield Patch(item, text, real, display, json6902, target)


def _body(folder: str, file: str | None, text: str) -> bytes:
    if not file:
        return text.encode()
    return roles.read_bytes(os.path.join(folder, file))


def _documents(objects: list[dict[str, Any]], comment: str, style: Style) -> bytes:
    """New files in the style of the overlay's kustomization (indents, quotes)."""
    return (
        ("---" + style.newline).join(render_document(o, comment, style) for o in objects).encode()
    )


# --- inline patches ---------------------------------------------------------------


def _inline_spliced(source: Source, changed: list[tuple[ScalarNode, str]]) -> str:
    """The kustomization's text with each inline literal patch's body replaced."""
    text = source.text
    for node, new in sorted(changed, key=lambda c: -c[0].start_mark.index):
        start = text.index("\n", node.start_mark.index) + 1  # after "|"
        end = node.end_mark.index
        body = text[start:end]
        first = next((line for line in body.split("\n") if line.strip()), "")
        indent = first[: len(first) - len(first.lstrip(" "))]
        lines = new.split("\n")
        trailing = "\n" if body.endswith("\n") else ""
        rendered = "\n".join(indent + line if line else line for line in lines).rstrip("\n")
        text = text[:start] + rendered + trailing + text[end:]
    return text
