"""Models a chart's values overlay turns on without repeating their profile: KubeAI's
models chart renders a Model for each ``catalog`` entry whose ``enabled`` (or the
values' ``all.enabled``) is true, with the entry's ``resourceProfile``
(kubeai-project/kubeai charts/models/templates/models.yaml, at f442a2cd). An overlay
values file (``helm install -f values-team.yaml``) that sets ``catalog.<name>.enabled:
true`` alone takes the profile from the chart's ``values.yaml``: each file read alone
(convert/profile_asks.py ``values_models``) misses it.

The chart's ``values.yaml`` is coalesced with each overlay of the same chart folder the
run sees, paired as the chart pass pairs them (``chart.values_files``: values.yaml, the
folder's other values*.yaml, ci/*.yaml), the way Helm coalesces them (mappings key by
key, anything else replaced, a null deletes). Read only: nothing is written. Each entry
the coalesced values turn on that neither file counts alone (the chart's values.yaml
turns it on itself, or the overlay repeats its profile) is counted on the overlay
(DRA279), at the key that turns it on.
"""

from __future__ import annotations

import os
from typing import Any

from yaml.nodes import Node

from dra_migrate.convert import profile_asks
from dra_migrate.convert.mapping import PROFILE_NEEDLE, Config
from dra_migrate.helm.chart import values_files
from dra_migrate.manifests import compose, sources, trees
from dra_migrate.report.findings import Finding, InputProblem
from dra_migrate.report.model import FileResult, InventoryItem, Status

BASES = ("values.yaml", "values.yml")
_NULLS = ("null", "~", "Null", "NULL", "")


def with_overlays(by_real: dict[str, FileResult], config: Config) -> list[FileResult]:
    """The Models each overlay turns on over its chart's values.yaml: added to the
    overlay's result where the run has one (DRA279 and a row each, its status REPORTED),
    else a result of its own, returned (an overlay that mentions no profile and no GPU
    resource is not among the files a run reads)."""
    added: list[FileResult] = []
    for real in sorted(by_real):
        root = os.path.dirname(real)
        if os.path.basename(real) not in BASES or not os.path.isfile(
            os.path.join(root, "Chart.yaml")
        ):
            continue
        base = _read(real, by_real[real].path, config)
        if base is None or PROFILE_NEEDLE not in base[1]:
            continue
        folder = os.path.dirname(by_real[real].path)
        for overlay in values_files(root)[1:]:
            result = by_real.get(overlay)
            display = (
                result.path if result else os.path.join(folder, os.path.relpath(overlay, root))
            )
            over = _read(overlay, display, config)
            if over is None:
                continue
            found, rows = turned_on(base[0], over[0], config, display)
            if not rows:
                continue
            if result is None:
                added.append(FileResult(display, Status.REPORTED, found, rows))
                continue
            result.findings = sorted([*result.findings, *found])
            result.inventory = sorted([*result.inventory, *rows], key=lambda r: (r.line, r.col))
            if result.status is Status.UNCHANGED:
                result.status = Status.REPORTED
    return added


def turned_on(
    base: Node, overlay: Node, config: Config, path: str
) -> tuple[list[Finding], list[InventoryItem]]:
    """DRA279 and a row for each entry with a ``resourceProfile`` the coalesced values
    turn on, that the chart's values do not turn on alone and the overlay does not
    count alone (its own entry with a profile, turned on by itself)."""
    base_py, over_py = trees.to_python(base), trees.to_python(overlay)
    merged = _coalesce(base_py, over_py)
    all_on = _on(_get(merged, ("all", "enabled")))
    found: list[Finding] = []
    rows: list[InventoryItem] = []
    stack: list[tuple[tuple[str, ...], Any]] = [((), merged)]
    while stack:
        keys, value = stack.pop()
        if not isinstance(value, dict):
            continue
        stack.extend(((*keys, k), v) for k, v in value.items())
        profile = value.get("resourceProfile")
        if not isinstance(profile, str) or not (all_on or _on(value.get("enabled"))):
            continue
        if _counted(base_py, keys) or _counted(over_py, keys):
            continue
        at = _where(overlay, keys)
        where = ".".join(keys) or "(document)"
        asker = profile_asks.Asker(
            "", "", None, "", where, f"values key {where} (turned on here, over values.yaml)"
        )
        more, asked = profile_asks.profile_row(profile, at, asker, config, path)
        found += more
        rows += asked
    return found, rows


def _counted(values: Any, keys: tuple[str, ...]) -> bool:
    """The file alone counts the entry: it has the profile and turns it on itself."""
    entry = _get(values, keys)
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("resourceProfile"), str)
        and (_on(_get(values, ("all", "enabled"))) or _on(entry.get("enabled")))
    )


def _where(overlay: Node, keys: tuple[str, ...]) -> tuple[int, int]:
    """The overlay's key that turns the entry on: its ``enabled``, else ``all.enabled``,
    else the entry."""
    for path in ((*keys, "enabled"), ("all", "enabled"), keys):
        node = trees.get_path(overlay, *path)
        if node is not None and (path == keys or _on(trees.to_python(node))):
            return trees.position(node)
    return (1, 1)


def _read(real: str, display: str, config: Config) -> tuple[Node, bytes] | None:
    """An overlay's first document and bytes, read only (None: unreadable, larger than
    the run reads, or not YAML: the file is reported on its own)."""
    try:
        if os.path.getsize(real) > config.max_file_size:
            return None
        with open(real, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return _root(display, raw)


def _root(display: str, raw: bytes) -> tuple[Node, bytes] | None:
    try:
        docs = compose.parse(sources.decode(display, raw))
    except InputProblem:
        return None
    return (docs[0].root, raw) if docs and docs[0].root is not None else None


def _coalesce(base: Any, over: Any) -> Any:
    """Helm's coalescing of a values file over another (scalars as strings here)."""
    if not isinstance(base, dict) or not isinstance(over, dict):
        return over
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, str) and value in _NULLS:
            out.pop(key, None)
        else:
            out[key] = _coalesce(out.get(key), value) if isinstance(value, dict) else value
    return out


def _get(values: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        values = values.get(key) if isinstance(values, dict) else None
    return values


def _on(value: Any) -> bool:
    """A YAML true as Helm reads values (go-yaml v2: true, yes, on, y)."""
    return isinstance(value, str) and value.lower() in ("true", "yes", "on", "y")
