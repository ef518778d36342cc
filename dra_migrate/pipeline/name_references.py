"""The name references kustomize needs when an overlay renames what it builds.

An overlay with ``namePrefix`` or ``nameSuffix`` renames the ResourceClaimTemplates
it builds, but kustomize's built-in name references do not know
``resourceClaimTemplateName`` in pod specs (sigs.k8s.io/kustomize
api/internal/konfig/builtinpluginconsts/namereference.go lists none for
ResourceClaimTemplate): the pods would refer to templates that do not exist. The
conversion teaches it: beside such a kustomization of the run it writes
``dra-name-reference.yaml``, a ``nameReference`` for kind ResourceClaimTemplate with
a field spec for each (kind, path) at which the converted files it builds name a
template, and lists it under the kustomization's ``configurations:`` (DRA290). The
files are one unit: written together or not at all. A kustomization outside the run,
one whose text the edit cannot extend, or a name already taken keeps DRA219 (the
files held back as before).
"""

from __future__ import annotations

import os
import re

from dra_migrate.report.findings import finding
from dra_migrate.report.model import FileResult, Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from dra_migrate.repo import roles

CONFIG = "dra-name-reference.yaml"


def carry_out(
    layout: roles.Layout,
    by_real: dict[str, FileResult],
    in_run: set[str],
    previous: dict[str, FileResult | None],
) -> tuple[list[FileResult], set[str]]:
    """Write the configuration of each renaming kustomization of the run whose build
    holds a converted file: the kustomization's result replaced (in ``by_real``), the
    new files returned, with the real paths of the kustomizations served;
    ``previous`` gets each kustomization's result before (None: it had none)."""
    added: list[FileResult] = []
    served: set[str] = set()
    for renaming in layout.renamings:
        if renaming.references_templates or renaming.path not in in_run:
            continue
        built = [
            by_real[f]
            for f in renaming.files
            if f in by_real and by_real[f].status is Status.CHANGED
        ]
        if not built:
            continue
        own = by_real.get(renaming.path)  # None: a kustomization is not a candidate
        config_real = os.path.join(os.path.dirname(renaming.path), CONFIG)
        if os.path.lexists(config_real) or config_real in by_real:
            continue
        try:
            with open(renaming.path, "rb") as handle:
                original = handle.read()
        except OSError:
            continue
        edited = _listed(original)
        specs = sorted({spec for result in built for spec in _field_specs(result)})
        if edited is None or not specs:
            continue
        unit = {renaming.path}
        shown = os.path.join(os.path.dirname(renaming.display), CONFIG)
        note = finding(
            "DRA290",
            renaming.display,
            renaming.line,
            renaming.col,
            f"this kustomization renames the ResourceClaimTemplates it builds: {CONFIG} "
            "teaches kustomize the pods' resourceClaimTemplateName "
            f"({', '.join(f'{k} {p}' for k, p in specs)}), listed under configurations:",
        )
        kustomization = FileResult(
            own.path if own else renaming.display,
            Status.CHANGED,
            [*(own.findings if own else []), note],
            own.inventory if own else [],
            original=original,
            converted=edited,
            units=(own.units if own else set()) | unit,
        )
        previous[kustomization.path] = own
        if own is not None:
            by_real[renaming.path] = kustomization
        else:
            added.append(kustomization)
        for result in built:
            result.units |= unit
        added.append(
            FileResult(
                shown,
                Status.CHANGED,
                original=b"",
                converted=_config(specs),
                created=True,
                units=set(unit),
            )
        )
        served.add(renaming.path)
    return added, served


def _field_specs(result: FileResult) -> Iterable[tuple[str, str]]:
    """(kind, path) of each place a converted object names a template."""
    from dra_migrate.pipeline import compare

    try:
        objects = compare.loaded(result.converted or b"")
    except Exception:  # what does not load names nothing the configuration could say
        return []
    out: list[tuple[str, str]] = []
    for obj in objects:
        if obj.get("kind") != "ResourceClaimTemplate":
            _walk(obj, str(obj.get("kind")), [], out)
    return out


def _walk(value: Any, kind: str, path: list[str], out: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        if isinstance(value.get("resourceClaimTemplateName"), str):
            out.append((kind, "/".join([*path, "resourceClaimTemplateName"])))
        for key, item in value.items():
            _walk(item, kind, [*path, str(key)], out)
    elif isinstance(value, list):  # kustomize's field specs pass through sequences
        for item in value:
            _walk(item, kind, path, out)


def _config(specs: list[tuple[str, str]]) -> bytes:
    lines = [
        "# dra-migrate: kustomize renames ResourceClaimTemplates (namePrefix, nameSuffix);",
        "# this teaches it the pods' references to them (configurations: in the kustomization)",
        "nameReference:",
        "  - kind: ResourceClaimTemplate",
        "    group: resource.k8s.io",
        "    fieldSpecs:",
    ]
    lines += [f"      - {{kind: {kind}, path: {path}}}" for kind, path in specs]
    return ("\n".join(lines) + "\n").encode()


def _listed(original: bytes) -> bytes | None:
    """The kustomization with the configuration listed under ``configurations:`` (the
    key added at the end, or an item appended to its block list); None when its text
    holds the key in a form this edit does not extend (a flow list, a value)."""
    text = original.decode("utf-8", "replace")
    if text.lstrip().startswith(("{", "[")):  # JSON: not edited as YAML text
        return None
    newline = "\r\n" if "\r\n" in text else "\n"
    if re.search(r"^configurations\s*:", text, re.M) is None:
        tail = "" if not text or text.endswith(("\n", "\r")) else newline
        return (text + tail + f"configurations:{newline}  - {CONFIG}{newline}").encode()
    match = re.search(r"^configurations\s*:[ \t]*(?:#.*)?$", text, re.M)
    if match is None:
        return None
    lines = text[match.end() :].split(newline)[1:]  # the lines after the key's
    first = next((ln for ln in lines if ln.strip()), "")
    pad = first[: len(first) - len(first.lstrip())]
    if not first.lstrip().startswith("- "):
        return None
    cursor = end = match.end() + len(newline)
    for line in lines:  # the block: its items, their deeper lines, blanks between
        if line.strip() and not (line.startswith(pad + "- ") or line.startswith(pad + " ")):
            break
        cursor += len(line) + len(newline)
        if line.strip():
            end = cursor
    head, rest = text[:end], text[end:]
    if not head.endswith(("\n", "\r")):
        head += newline
    return (head + f"{pad}- {CONFIG}{newline}" + rest).encode()


def settle(results: dict[int, FileResult], previous: dict[str, FileResult | None]) -> None:
    """After the overlay pass (convert/overlays.py), which may rewrite the same
    kustomization (its templates listed under resources) or hold the bases: the
    configuration listed in the kustomization's text as the overlay pass left it; and
    a configuration whose converted files are all held is not written (the
    kustomization's result as it was before, ``previous``)."""
    mine = [i for i, r in results.items() if any(f.code == "DRA290" for f in r.findings)]
    for i in mine:
        ours = results[i]
        folder = os.path.dirname(ours.path)
        config = next(
            (j for j, r in results.items() if r.created and r.path == os.path.join(folder, CONFIG)),
            None,
        )
        unit = ours.units | (results[config].units if config is not None else set())
        own = {i} | ({config} if config is not None else set())
        twins = [j for j, r in results.items() if j not in own and r.path == ours.path]
        live = any(
            r.status is Status.CHANGED and r.units & unit
            for j, r in results.items()
            if j not in own and j not in twins
        )
        if not live:  # every converted file it serves is held: nothing to teach
            before = previous.get(ours.path)
            if before is None:
                del results[i]
            else:
                results[i] = before
            if config is not None:
                del results[config]
            continue
        for j in twins:  # the overlay pass's own result of the kustomization: one result
            other = results.pop(j)
            if other.status is Status.CHANGED:
                ours.converted, ours.regions = other.converted, None
                ours.findings = [*other.findings, *ours.findings]
                ours.units |= other.units
        text = ours.converted or b""
        if re.search(rb"^\s*-\s*" + re.escape(CONFIG.encode()) + rb"\s*$", text, re.M) is None:
            listed = _listed(text)  # the overlay pass wrote the kustomization again
            if listed is not None:
                ours.converted = listed
                ours.regions = None  # the diff compares the whole text again
