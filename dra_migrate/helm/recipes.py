"""Values recipes: a chart with a DRA switch of its own is migrated by a values change.

A recipe is data (``recipes/*.yaml``, one file a chart family, each citing the chart
source it was read from): the chart's name and a version range, the values keys to set
(``{class}``: the DeviceClass the run's mapping gives the chart's GPU resource;
``{count}``, ``{template}``), the GPU keys to drop, and a note for the report. Its
``shape`` names the function here that reads the chart's values the way its templates
do (``SHAPES``): ``switch`` (one pod, a switch and a class key; the chart renders the
ResourceClaimTemplate itself) and ``passthrough`` (per group, ``resources`` and
``resourceClaims`` passed through to the pod; the tool writes the templates as a
manifest of their own beside the values).

``plan`` edits every values file of the chart that asks for GPUs (values.yaml, then the
others, each merged over values.yaml as ``helm -f`` merges it), or, with
``helm.values: file``, writes ``values-dra.yaml`` beside values.yaml and edits nothing.
A vendored dependency (``chart.parent``) is migrated through the parent chart's values
under the dependency's key. A chart whose values ask for no GPUs and already hold the
recipe's keys is migrated already (way ``done``).
"""

from __future__ import annotations

import copy
import functools
import os
import re
from dataclasses import dataclass, field

from dra_migrate.convert.mapping import Context, Settings
from dra_migrate.helm import chart as chart_files
from dra_migrate.helm.model import DONE, RECIPE, Chart, ChartEdit, Options, Read
from dra_migrate.helm.recipe_values import get as _get
from dra_migrate.helm.recipe_values import key as _key
from dra_migrate.helm.recipe_values import toleration as _toleration
from dra_migrate.helm.recipe_values import truthy as _truthy
from dra_migrate.helm.values_text import MISSING, ValuesText, dotted
from dra_migrate.helm.versions import parse_constraint, satisfies
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.model import ChartPlan

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from dra_migrate.convert.mapping import Choice

RECIPES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recipes")
OVERLAY = "values-dra.yaml"  # the values file written beside values.yaml (values: file)
Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Recipe:
    """One chart family's recipe, as its data file says."""

    name: str
    chart: str  # Chart.yaml name
    versions: str  # a semver constraint: ">=1.56.0", ">=1.2.0, <2.0.0"
    shape: str  # the key of SHAPES that reads the chart's values
    note: str
    data: Mapping[str, Any]
    file: str  # the data file, for messages


@functools.cache
def families() -> tuple[Recipe, ...]:
    """Every recipe of ``recipes/`` (loaded once), in file name order."""
    from dra_migrate.manifests.compose import load_data

    out: list[Recipe] = []
    for name in sorted(os.listdir(RECIPES_DIR)):
        if not name.endswith(".yaml"):
            continue
        path = os.path.join(RECIPES_DIR, name)
        with open(path, "rb") as handle:  # (the one bounded loader, as for any YAML)
            loaded = load_data(handle.read(), path)
        data = loaded[0] if loaded else None
        if not isinstance(data, dict) or data.get("shape") not in SHAPES:
            raise ValueError(f"{path}: a recipe is a mapping with a known shape")
        parse_constraint(str(data["versions"]))  # a malformed range fails at load
        out.append(
            Recipe(
                name=str(data["recipe"]),
                chart=str(data["chart"]),
                versions=str(data["versions"]),
                shape=str(data["shape"]),
                note=" ".join(str(data.get("note", "")).split()),
                data=data,
                file=name,
            )
        )
    return tuple(out)


def names() -> frozenset[str]:
    """The chart names the recipes know (upstream charts, for ``chart.read``'s ``known``)."""
    return frozenset(r.chart for r in families())


def find(chart: Chart, read_bytes: Read | None = None) -> Recipe | None:
    """The recipe for this chart's name and version, if any; or, with ``read_bytes``,
    for its name and what its own values.yaml offers (every key of the recipe's
    ``offers``): a chart built from a branch says an old version in Chart.yaml while
    its values carry the keys (kuberay's ray-cluster on master says 1.1.0)."""
    for recipe in families():
        if recipe.chart == chart.name and satisfies(chart.version, recipe.versions):
            return recipe
    for recipe in families():
        if (
            recipe.chart == chart.name
            and read_bytes is not None
            and _offers(recipe, chart, read_bytes)
        ):
            return recipe
    return None


def _offers(recipe: Recipe, chart: Chart, read_bytes: Read) -> bool:
    keys = recipe.data.get("offers") or []
    if not keys:
        return False
    from dra_migrate.manifests.compose import load_data
    from dra_migrate.report.findings import InputProblem

    try:  # (the bounded loader every reader of YAML goes through: no alias bomb)
        docs = load_data(read_bytes(chart.values), chart.values)
    except (OSError, InputProblem, ValueError):
        return False
    values = docs[0] if docs else None
    return all(_get(values, _key(str(key)), MISSING) is not MISSING for key in keys)


class NotFit(Exception):
    """The chart's recipe does not fit its values: why, as a clause of DRA242's reason
    (the chart then takes the bridge, or template edits when it is the team's own)."""


def unserved(chart: Chart) -> str:
    """Why no recipe serves a chart whose name a recipe knows (its version is outside
    the recipe's range), as a clause of DRA242's reason; "" for another chart."""
    ranges = sorted({r.versions for r in families() if r.chart == chart.name})
    if not ranges:
        return ""
    offers = sorted(
        {str(k) for r in families() if r.chart == chart.name for k in r.data.get("offers") or []}
    )
    without = f", and its values.yaml has no {' or '.join(offers)}" if offers else ""
    return (
        f"the values recipe for {chart.name} serves versions {' or '.join(ranges)}, "
        f"not {chart.version or 'an unversioned chart'}{without}"
    )


# --- what a chart's values need -----------------------------------------------------


@dataclass(slots=True)
class Need:
    """What one values file's effective values need (a shape fills it in)."""

    sets: list[tuple[Path, Any]] = field(default_factory=list)
    drops: list[Path] = field(default_factory=list)
    templates: list[dict[str, Any]] = field(default_factory=list)  # objects to write
    count_keys: list[str] = field(default_factory=list)
    enable_keys: list[str] = field(default_factory=list)  # keys that turn GPUs on (off now)
    gpus: bool = False  # the values ask for GPUs through the device plugin
    migrated: bool = False  # the values hold the recipe's keys and ask for no GPUs
    refusal: str = ""  # why the recipe does not fit these values


def _choice(resource: str, settings: Settings, carries: list[str]) -> tuple[Choice | None, str]:
    choice = settings.config.choose(resource, Context())
    if choice is None:
        return None, f"{resource} is not in the mapping"
    extra = [
        what
        for what, there in (
            ("selectors", choice.selectors),
            ("config", choice.config),
            ("capacity", choice.capacity),
        )
        if there and what not in carries
    ]
    if extra:
        return None, (
            f"the mapping gives {resource} {' and '.join(extra)} the chart's own "
            "ResourceClaimTemplate cannot carry"
        )
    return choice, ""


def _fill(value: Any, names: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        full = re.fullmatch(r"\{(\w+)\}", value)
        if full and full[1] in names:
            return names[full[1]]
        return re.sub(r"\{(\w+)\}", lambda m: str(names.get(m[1], m[0])), value)
    if isinstance(value, dict):
        return {k: _fill(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, names) for v in value]
    return value


def _switch(recipe: Recipe, values: Any, chart: Chart, settings: Settings) -> Need:
    """One pod; a switch key turns the chart's own DRA rendering on (ollama-helm)."""
    data = recipe.data
    need = Need()
    sets = [(_key(k), v) for k, v in data["set"].items()]
    enabled = _truthy(_get(values, _key(data["enabled"])))
    spec = data["resource"]
    kind = _get(values, _key(spec["type_key"]))
    resource = spec["by_type"].get(kind) or _get(values, _key(spec["key"])) or spec["default"]
    count = data["count"]
    need.count_keys = [count["key"]]
    on = all(_get(values, path) == v for path, v in sets if not (isinstance(v, str) and "{" in v))
    if on:  # the recipe's keys are set (GPUs on or off): migrated already
        need.migrated = True
        return need
    # GPUs off in the values (turned on at install time, --set): the switch is set all
    # the same, which renders the same bytes while they are off and claims once they
    # are on; the proof renders a variant with them on (enable_keys)
    need.gpus = True
    if not enabled:
        need.enable_keys = [data["enabled"]]
    for key, why in data.get("refuse", {}).items():
        if _truthy(_get(values, _key(key))):
            need.refusal = f"{key} is set: " + " ".join(why.split())
            return need
    choice, why = _choice(str(resource), settings, data.get("carries", []))
    if choice is None:
        need.refusal = why
        return need
    names = {"class": choice.device_class, "count": str(_get(values, _key(count["key"])))}
    need.sets = [(path, _fill(v, names)) for path, v in sets]
    tolerate = _toleration(recipe.data, values, settings, str(resource))
    if tolerate and not enabled:
        need.refusal = (
            f"GPUs are off ({data['enabled']}) and the pod would need the toleration of "
            f"{resource} convert writes, which the chart renders whether GPUs are on or not"
        )
        return need
    need.sets.extend(tolerate)
    return need


def _groups(recipe: Recipe, values: Any) -> list[tuple[str, Path]]:
    """(the group's name, its values path) of each group the chart renders."""
    out: list[tuple[str, Path]] = []
    for group in recipe.data["groups"]:
        key: str = group["key"]
        if key.endswith(".*"):
            holder = _get(values, _key(key[:-2]))
            paths = [(*_key(key[:-2]), k) for k in holder] if isinstance(holder, dict) else []
        else:
            paths = [_key(key)]
        for path in paths:
            body = _get(values, path)
            if not isinstance(body, dict):
                continue
            if group.get("unless") and _truthy(body.get(group["unless"])):
                continue
            out.append((str(path[-1]), path))
    return out


_NAME_CHARS = re.compile(r"[^a-z0-9.-]+")


def _passthrough(recipe: Recipe, values: Any, chart: Chart, settings: Settings) -> Need:
    """Groups whose ``resources`` and ``resourceClaims`` reach the pod as written
    (kuberay's ray-cluster); the ResourceClaimTemplates are written beside the values."""
    from dra_migrate.convert.plan import DeviceRequest, resource_claim_template

    data = recipe.data
    need = Need()
    template = data["template"]
    for group, path in _groups(recipe, values):
        body = _get(values, path)
        counts: dict[str, int] = {}
        for pattern in data["gpu"]:
            head = _key(pattern.removesuffix(".{gpu}"))
            holder = _get(body, head)
            for resource, raw in (holder or {}).items() if isinstance(holder, dict) else ():
                if not settings.config.is_gpu(str(resource)):
                    continue
                count = _whole(raw)
                where = dotted((*path, *head, resource))
                if count is None:
                    need.refusal = f"{where} is not a whole number of GPUs: {raw!r}"
                    return need
                if counts.setdefault(str(resource), count) != count:
                    need.refusal = f"{where} differs from the group's GPU limit"
                    return need
                need.drops.append((*path, *head, resource))
        if not counts:
            claims = _get(body, ("resourceClaims",)) or []
            prefix = _fill(template["name"], {"chart": _base(chart), "group": group, "count": ""})
            if any(
                isinstance(c, dict)
                and str(c.get("resourceClaimTemplateName", "")).startswith(_dns(prefix))
                for c in claims
            ):
                need.migrated = True
            continue
        if len(counts) > 1:
            need.refusal = f"{dotted(path)} asks for several GPU resources: {sorted(counts)}"
            return need
        # no count key: the keys that held the count are dropped, the count moves into
        # the template written beside the values and num-gpus (literals after)
        ((resource, count),) = counts.items()
        if count == 0:
            continue
        need.gpus = True
        choice, why = _choice(resource, settings, data.get("carries", []))
        if choice is None:
            need.refusal = why
            return need
        name = _dns(
            _fill(template["name"], {"chart": _base(chart), "group": group, "count": str(count)})
        )
        names = {"class": choice.device_class, "count": str(count), "template": name}
        for key, value in data["set"].items():
            target = (*path, *_key(key))
            wanted = _fill(value, names)
            existing = _get(values, target, MISSING)
            if isinstance(wanted, list):
                have = existing if isinstance(existing, list) else []
                names_wanted = {i.get("name") for i in wanted if isinstance(i, dict)}
                if any(isinstance(i, dict) and i.get("name") in names_wanted for i in have):
                    need.refusal = f"{dotted(target)} already names a claim gpu"
                    return need
                need.sets.append((target, [*have, *wanted]))
            elif existing is MISSING or existing is None:
                need.sets.append((target, wanted))
        need.sets.extend(_toleration(recipe.data, values, settings, resource, path))
        request = DeviceRequest(template["request"], choice, count)
        need.templates.append(resource_claim_template(name, None, [request], settings.target))
    return need


def _same(a: Any, b: Any) -> bool:
    import json

    return a is not MISSING and json.dumps(a, sort_keys=True, default=str) == json.dumps(
        b, sort_keys=True, default=str
    )


def _base(chart: Chart) -> str:
    return chart.values_key or chart.name


def _dns(name: str) -> str:
    return _NAME_CHARS.sub("-", name.lower()).strip("-.")[:253]


def _whole(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if raw >= 0 else None
    if isinstance(raw, str) and raw.isdigit():
        return int(raw)
    return None


def _parallel(parallelism: Any) -> int:
    """dataLocal x tensor, as the chart's numGpuPerWorker counts them."""
    p = parallelism if isinstance(parallelism, dict) else {}
    tensor = _whole(p.get("tensor")) or 1
    if _truthy(p.get("dataLocal")):
        local = _whole(p["dataLocal"]) or 1
    elif _truthy(p.get("data")) and _truthy(p.get("workers")):
        local = (_whole(p["data"]) or 1) // (_whole(p["workers"]) or 1)
    else:
        local = _whole(p.get("data")) or 1
    return local * tensor


def _roles(recipe: Recipe, values: Any, chart: Chart, settings: Settings) -> Need:
    """Roles (decode, prefill) whose containers the chart gives GPUs, or claims behind
    one switch (llm-d-modelservice); the chart renders one template a role."""
    data = recipe.data
    need = Need()
    accelerator = _get(values, ("accelerator",)) or {}
    on = _truthy(accelerator.get("dra"))
    rct_key = _key(data["templates"])
    rct = _get(values, rct_key) or {}
    counts: dict[str, set[int]] = {}  # per type, the GPU counts of its roles
    explicit: set[str] = set()  # types whose template must say its count
    without: list[Path] = []  # roles without GPUs: they keep DRA off
    explicit_off: list[Path] = []
    tolerate: list[tuple[Path, Any]] = []  # the tolerations convert writes, per role
    for role in data["roles"]:
        body = _get(values, (role,)) or {}
        if not _truthy(body.get(data["create"])):
            continue
        own: dict[str, Any] = (
            body["accelerator"] if isinstance(body.get("accelerator"), dict) else {}
        )
        dra = _truthy(own["dra"]) if "dra" in own else on
        kind = str(own.get("type") or accelerator.get("type") or data["type_default"])
        resources = accelerator.get("resources") or {}
        resource = str(resources.get(kind) or data["resource_default"])
        auto = 0 if kind in data["no_gpus"] else _parallel(body.get("parallelism"))
        containers = body.get("containers") or []
        asking: list[int] = []
        literal = False  # a container sets its GPU count itself
        for index, item in enumerate(containers):
            container = item if isinstance(item, dict) else {}
            limits = _get(container, ("resources", "limits")) or {}
            requests = _get(container, ("resources", "requests")) or {}
            limits = limits if isinstance(limits, dict) else {}
            requests = requests if isinstance(requests, dict) else {}
            for part, held in (("limits", limits), ("requests", requests)):
                if resource in held:
                    literal = True
                    need.drops.append((role, "containers", index, "resources", part, resource))
            simulator = data["simulator"] in str(container.get("image", ""))
            default = 0 if (dra or simulator or not auto) else auto
            count = _whole(limits.get(resource, default))
            if count is None:
                need.refusal = f"{role}.containers[{index}] asks for a GPU count not whole"
                return need
            if count:
                asking.append(count)
        if dra and not asking:
            need.migrated = True
            continue
        if not asking:
            without.append((role, "accelerator", "dra"))
            continue
        if len(containers) > 1:
            need.refusal = (
                f"{role} has several containers: with DRA the chart gives each of them "
                "the role's one claim, not devices of its own"
            )
            return need
        (count,) = asking
        need.gpus = True
        if not literal:
            # the chart counts dataLocal x tensor: the proof raises it through tensor
            # (parallelism is a map, which helm's --set would replace whole); a count
            # the container sets itself is a literal the migration moves into the
            # template's count, not a key that holds it before and after
            need.count_keys.append(f"{role}.parallelism.tensor")
        if "dra" in own and not dra:
            explicit_off.append((role, "accelerator", "dra"))
        choice, why = _choice(resource, settings, data.get("carries", []))
        if choice is None:
            need.refusal = why
            return need
        template: dict[str, Any] = rct[kind] if isinstance(rct.get(kind), dict) else {}
        wanted: dict[str, Any] = {"class": choice.device_class}
        if choice.selectors:
            wanted["selectors"] = [{"cel": {"expression": s}} for s in choice.selectors]
        for name, value in wanted.items():
            default_value = f"gpu.{kind}.com" if name == "class" else []
            if kind not in rct or not _same(template.get(name, default_value), value):
                need.sets.append(((*rct_key, kind, name), value))
        counts.setdefault(kind, set()).add(count)
        tolerate.extend(_toleration(recipe.data, values, settings, resource, (role,)))
        counted = template.get("count", _parallel(body.get("parallelism")))
        if _whole(counted) != count:
            explicit.add(kind)
    if not need.gpus:
        need.drops = []
        return need
    for key, why in data.get("refuse", {}).items():
        if _truthy(_get(values, _key(key))):
            need.refusal = f"{key} is set: " + " ".join(why.split())
            return need
    for kind in sorted(explicit):
        if len(counts[kind]) > 1:
            need.refusal = (
                f"roles of type {kind} ask for different GPU counts: the chart's "
                f"{dotted((*rct_key, kind, 'count'))} is one for all of them"
            )
            return need
        need.sets.append(((*rct_key, kind, "count"), next(iter(counts[kind]))))
    if not on:
        need.sets.extend((_key(key), value) for key, value in data["set"].items())
        need.sets.extend((path, False) for path in without)
    need.sets.extend((path, True) for path in explicit_off)
    need.sets.extend(tolerate)
    return need


SHAPES: dict[str, Callable[[Recipe, Any, Chart, Settings], Need]] = {
    "switch": _switch,
    "passthrough": _passthrough,
    "roles": _roles,
}


# --- the plan -----------------------------------------------------------------------


def _merge(base: Any, over: Any) -> Any:
    """Helm's coalescing of a values file over another: mappings merge key by key,
    anything else replaces, and a null deletes the key."""
    if not isinstance(base, dict) or not isinstance(over, dict):
        return over
    out = dict(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


@dataclass(slots=True)
class _Target:
    """Where the recipe's values go: the chart's own files, or the parent's under the
    dependency's key (``prefix``); ``defaults`` are the chart's own values.yaml then."""

    root: str
    display: str
    files: tuple[str, ...]
    prefix: Path
    defaults: Any


def _target(chart: Chart, settings: Settings, read_bytes: Read) -> _Target:
    if chart.parent is None:
        return _Target(chart.root, chart.display, chart.values_files, (), {})
    display = os.path.dirname(os.path.dirname(chart.display.rstrip("/"))) or "."
    parent = chart_files.read(chart.parent, display, read_bytes, settings.config.helm)
    defaults = _read_values(chart.values, chart.display, read_bytes).data
    return _Target(parent.root, display, parent.values_files, (chart.values_key,), defaults)


def _read_values(path: str, display: str, read_bytes: Read) -> ValuesText:
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        raw = b""
    return ValuesText.decode(display, raw)


def _shown(target: _Target, path: str) -> str:
    return os.path.join(target.display, os.path.relpath(path, target.root)).replace(os.sep, "/")


def plan(chart: Chart, settings: Settings, options: Options, read_bytes: Read) -> ChartEdit | None:
    """The chart migrated by its recipe, or None: no recipe for this chart and version.
    ``NotFit`` (why) when the recipe does not fit its values, ``InputProblem`` when a
    values file cannot be read or edited safely."""
    recipe = find(chart, read_bytes)
    if recipe is None:
        return None

    def not_fit(why: str) -> NotFit:
        return NotFit(f"the values recipe {recipe.name} does not fit its values: {why}")

    shape = SHAPES[recipe.shape]
    target = _target(chart, settings, read_bytes)
    texts = {path: _read_values(path, _shown(target, path), read_bytes) for path in target.files}
    first = target.files[0] if target.files else os.path.join(target.root, "values.yaml")
    overlay_path = os.path.join(os.path.dirname(first), OVERLAY)
    overlay = _read_values(overlay_path, _shown(target, overlay_path), read_bytes)
    overlay_there = overlay_path in texts or _exists(overlay_path, read_bytes)
    if options.values == "file" or overlay_there:
        texts.pop(overlay_path, None)

    originals = {path: text.data for path, text in texts.items()}

    def effective(path: str | None, extra: Any = None, original: bool = False) -> Any:
        data = originals if original else {p: t.data for p, t in texts.items()}
        top = data.get(first, {}) if first in data else {}
        merged = top if path in (None, first) else _merge(top, data[path])
        if extra is not None:
            merged = _merge(merged, extra)
        if target.prefix:
            merged = _merge(target.defaults, _get(merged, target.prefix, {}) or {})
        return merged

    findings: list[Finding] = []
    changed: dict[str, bytes] = {}
    created: dict[str, bytes] = {}
    templates: dict[str, dict[str, Any]] = {}
    count_keys: list[str] = []
    enable_keys: list[str] = []
    migrated = gpus = False
    order = [first, *(p for p in texts if p != first)] if texts else [None]

    if options.values == "file" or overlay_there:
        extra = overlay.data if overlay_there else None
        needs = [(p, shape(recipe, effective(p, extra), chart, settings)) for p in order]
        refused = next((n.refusal for _p, n in needs if n.refusal), "")
        if refused:
            raise not_fit(refused)
        gpus = any(n.gpus for _p, n in needs)
        migrated = any(n.migrated for _p, n in needs)
        if gpus and overlay_there:  # an overlay of the team's own that does not migrate
            raise not_fit(
                f"{_shown(target, overlay_path)} is there and still asks for GPUs through "
                "the device plugin: the recipe does not write over it"
            )
        if gpus:
            source, need = next((p, n) for p, n in needs if n.gpus)
            for path, value in need.sets:
                overlay.set((*target.prefix, *path), value)
            lists: dict[Path, Any] = {}
            for path in need.drops:
                at = next((i for i, step in enumerate(path) if isinstance(step, int)), None)
                if at is None:  # a null deletes the key it would inherit
                    overlay.set((*target.prefix, *path), None)
                    continue
                # Helm replaces a list as a whole: the overlay holds it without the keys
                held = lists.setdefault(
                    path[:at], copy.deepcopy(_get(effective(source), path[:at]))
                )
                holder = _get(held, path[at:-1])
                if isinstance(holder, dict):
                    holder.pop(path[-1], None)
            for path, value in lists.items():
                overlay.set((*target.prefix, *path), value)
            created[overlay_path] = overlay.encode()
            count_keys = need.count_keys
            enable_keys = need.enable_keys
            for obj in need.templates:
                templates[obj["metadata"]["name"]] = obj
            # a file that asks for other GPUs than the one the overlay was made from
            # (another count) is not served by the one overlay
            left = [
                _shown(target, p)
                for p, n in needs
                if p is not None and n.gpus and (n.sets, n.drops) != (need.sets, need.drops)
            ]
            message = _message(recipe, need, target, overlay_path, "written")
            if left:
                message += (
                    f"; {', '.join(left)} asks for other GPUs than values.yaml: "
                    f"{OVERLAY} does not migrate it (helm.values: edit does)"
                )
            findings.append(finding("DRA240", _shown(target, overlay_path), 1, 1, message))
    else:
        for file in order:
            if file is None:
                continue
            # what the file asks for as written, applied where the files edited before
            # it (values.yaml first) do not give it already
            need = shape(recipe, effective(file, original=True), chart, settings)
            if need.refusal:
                raise not_fit(need.refusal)
            migrated = migrated or need.migrated
            if not need.gpus:
                continue
            gpus = True
            text = texts[file]
            own = text.data
            applied = Need(templates=need.templates)
            for drop in need.drops:
                full = (*target.prefix, *drop)
                if text.get(full) is not MISSING:
                    text.delete(full)
                    applied.drops.append(drop)
                elif _get(effective(file), drop, MISSING) is not MISSING:
                    text.set(full, None)  # a null deletes the key it would inherit
                    applied.drops.append(drop)
            now = effective(file)
            for key, value in need.sets:
                if not _same(_get(now, key, MISSING), value):
                    text.set((*target.prefix, *key), value)
                    applied.sets.append((key, value))
            if text.data == own:
                continue
            changed[file] = text.encode()
            count_keys.extend(k for k in need.count_keys if k not in count_keys)
            enable_keys.extend(k for k in need.enable_keys if k not in enable_keys)
            for obj in need.templates:
                templates[obj["metadata"]["name"]] = obj
            first_key = applied.sets[0][0] if applied.sets else None
            line, col = text.position((*target.prefix, *first_key)) if first_key else (1, 1)
            message = _message(recipe, applied, target, file)
            findings.append(finding("DRA240", _shown(target, file), line, col, message))

    if not gpus and not changed and not created:
        if not (migrated or overlay_there):  # the GPU lines are not the recipe's keys
            raise not_fit("they ask for no GPUs through the keys the recipe edits")
        done = ChartPlan(
            root=chart.display,
            name=chart.name,
            version=chart.version,
            way=DONE,
            recipe=recipe.name,
            compare="claims",
        )
        where = _shown(target, overlay_path if overlay_there else first)
        note = (
            f"chart {chart.name} {chart.version} is migrated already through the values "
            f"recipe {recipe.name}: its values hold the recipe's keys and ask for no GPUs "
            "through the device plugin; nothing to do"
        )
        return ChartEdit(plan=done, findings=[finding("DRA246", where, 1, 1, note)])

    side_files: tuple[str, ...] = ()
    if templates:
        side = os.path.join(os.path.dirname(first), recipe.data["template"]["file"])
        created[side] = _templates_file(side, list(templates.values()), read_bytes)
        side_files = (_shown(target, side),)
    files = tuple(_shown(target, p) for p in [*changed, *created])
    shown_plan = ChartPlan(
        root=chart.display,
        name=chart.name,
        version=chart.version,
        way=RECIPE,
        recipe=recipe.name,
        count_keys=tuple(count_keys),
        enable_keys=tuple(enable_keys),
        values_overlay=_shown(target, overlay_path) if overlay_path in created else "",
        compare="claims",
        files=files,
        applied=side_files,
    )
    return ChartEdit(plan=shown_plan, changed=changed, created=created, findings=findings)


def _exists(path: str, read_bytes: Read) -> bool:
    try:
        read_bytes(path)
    except OSError:
        return False
    return True


def _message(recipe: Recipe, need: Need, target: _Target, path: str, verb: str = "edited") -> str:
    del path
    prefix = target.prefix
    sets = ", ".join(f"{dotted((*prefix, *p))}" for p, _v in need.sets)
    drops = ", ".join(dotted((*prefix, *p)) for p in need.drops)
    text = (
        f"chart migrated through its values recipe {recipe.name} ({verb} {OVERLAY}: pass it "
        f"after the chart's values, helm -f {OVERLAY})"
    )
    if verb == "edited":
        text = f"chart migrated through its values recipe {recipe.name}"
    if sets:
        text += f": sets {sets}"
    if drops:
        text += f"; drops {drops}"
    if need.templates:
        text += f"; writes {recipe.data['template']['file']}"
    return f"{text}: {recipe.note}"


def _templates_file(path: str, objects: list[dict[str, Any]], read_bytes: Read) -> bytes:
    from dra_migrate.convert.edit import Style, render_document

    del path, read_bytes
    parts = [
        render_document(obj, "dra-migrate: the GPUs of a group of the chart's values", Style())
        for obj in sorted(objects, key=lambda o: o["metadata"]["name"])
    ]
    return "---\n".join(parts).encode()
