"""Template edits for the team's own charts: a values switch the tool adds, behind which
the templates render what ``dra-migrate convert`` writes for the rendered objects.

For each template that sets a GPU extended resource, in one of the shapes
``template_shapes.py`` reads exactly, the edit splices into the text (never a
re-render):

- at the top, ``$draGpus``: the GPU count the lines below render, set only when the
  switch is on (0 when it is off), through the same ``if`` structures as the GPU line;
- around each GPU line (a literal ``nvidia.com/gpu: {{ .Values.x }}``, or a
  ``toYaml`` of a values key that holds it), ``{{- if not $draGpus }}``: with the
  switch off every guard renders the original lines, so the rendering is byte for
  byte the same (every action added trims the line break before it);
- after the container's ``resources``, its ``claims``; after the pod spec, the pod's
  ``resourceClaims`` and, where ExtendedResourceToleration added one, the toleration;
- a new ``templates/<chart>-resourceclaimtemplate.yaml`` (one a workload when a chart
  has several) that renders the ResourceClaimTemplate from the same values: the count,
  the device class (``dra.deviceClassName``) and the mapping's selectors.

The values file gains the switch's keys (appended, with a comment), the schema their
properties. A construct the edit cannot follow exactly leaves the chart as it is, with
DRA243 naming it, the values key, and the bridge as the way out.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace

from dra_migrate.convert.mapping import Choice, Config, Context, Settings
from dra_migrate.convert.naming import dns_label
from dra_migrate.helm import template_helpers, template_values
from dra_migrate.helm import template_shapes as shapes
from dra_migrate.helm import template_text as written
from dra_migrate.helm.model import DONE, MANUAL, TEMPLATE, Chart, ChartEdit, Options, Read
from dra_migrate.helm.template_shapes import Refused
from dra_migrate.manifests import compose, sources
from dra_migrate.report.findings import Finding, InputProblem, finding
from dra_migrate.report.model import ChartPlan

# The kinds whose pod spec a template edit rewrites: their controllers do nothing
# with GPUs that convert writes besides the claims and the toleration.
KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"})
VAR, CLAIM = shapes.VAR, shapes.CLAIM
_TO_YAML = re.compile(r"toYaml\s+(?P<arg>\S+)\s*\|\s*nindent\s+(?P<n>\d+)")
_ROOT_FIELDS = re.compile(r"(?<![\w$)\]])\.(Values|Chart|Release|Capabilities|Template)\b")
BRIDGE_HINT = (
    "the bridge keeps the chart as it is: a DeviceClass with extendedResourceName serves "
    "the extended resource (dra-migrate deviceclasses --strategy bridge .); or change the "
    "template by hand"
)


@dataclass(slots=True)
class _Workload:
    """One template's edit, as the planning fills it in (not frozen)."""

    path: str
    rel: str  # the template's path in the chart (templates/deployment.yaml)
    resource: str = ""
    count_keys: list[str] = field(default_factory=list)
    count_paths: list[tuple[str, ...]] = field(default_factory=list)  # the same, split
    resources_paths: list[tuple[str, ...]] = field(default_factory=list)  # toYaml: key + name
    new_text: str = ""
    claim_template: str = ""  # the new template file's text
    helper_path: str = ""  # the file of the helper define edited with it ("": none)
    helper_text: str = ""


def plan(chart: Chart, settings: Settings, options: Options, read_bytes: Read) -> ChartEdit:
    """The template edit of a chart that is not upstream, or the chart left as it is
    (way ``manual`` with DRA243, ``done`` when the switch is in its templates)."""
    switch = options.switch_key
    base = _plan(chart, switch, options.switch_on)
    if chart.type == "library":
        return _refused(
            chart,
            base,
            Refused(
                _shown(chart, os.path.join(chart.root, "Chart.yaml")),
                1,
                "a library chart (type: library) renders nothing of its own",
            ),
        )
    try:
        texts = {p: _text(chart, p, read_bytes) for p in chart.templates}
    except InputProblem as problem:  # a template that cannot be read (binary, not UTF-8)
        code = problem.finding.code
        return ChartEdit(
            plan=replace(base, way=MANUAL, set_keys=(), switch="", codes=(code,)),
            findings=[problem.finding],
        )
    if any(re.search(r"\.Values\." + re.escape(switch) + r"\b", t) for t in texts.values()):
        return ChartEdit(plan=replace(base, way=DONE))
    if "." not in switch:
        return _refused(
            chart,
            base,
            Refused(
                _shown(chart, chart.values),
                1,
                f"the switch key {switch!r} has no parent key for its settings",
            ),
        )
    values = [_values(chart, p, read_bytes) for p in chart.values_files]
    try:
        return _edit(chart, settings, options, texts, values, base, read_bytes)
    except Refused as refused:
        return _refused(chart, base, refused)


def _plan(chart: Chart, switch: str, on: bool) -> ChartPlan:
    return ChartPlan(
        root=chart.display,
        name=chart.name,
        version=chart.version,
        way=TEMPLATE,
        switch=switch,
        switch_on=on,
        set_keys=() if on else ((switch, "true"),),
        compare="exact",
    )


def _refused(chart: Chart, base: ChartPlan, refused: Refused) -> ChartEdit:
    key = f" (values key {refused.key})" if refused.key else ""
    note = finding(
        "DRA243",
        refused.path,
        refused.line,
        1,
        f"chart {chart.name} left as it is: {refused.what}{key}; a template edit cannot "
        "render it exactly",
        BRIDGE_HINT,
    )
    plan = replace(base, way=MANUAL, set_keys=(), switch="", switch_on=False, codes=("DRA243",))
    return ChartEdit(plan=plan, findings=[note])


def _shown(chart: Chart, path: str) -> str:
    return os.path.join(chart.display, os.path.relpath(path, chart.root))


def _text(chart: Chart, path: str, read_bytes: Read) -> str:
    return sources.decode(_shown(chart, path), read_bytes(path)).text


def _values(chart: Chart, path: str, read_bytes: Read) -> tuple[str, str, object]:
    """(path, text, data) of a values file; data None when it does not parse."""
    try:
        text = _text(chart, path, read_bytes)
    except Exception:  # an unreadable values file is read as empty
        return path, "", None
    try:
        docs = compose.load_data(text, path)  # (the bounded loader: no alias bomb)
        data = docs[0] if docs else None
    except Exception:  # a values file that does not parse holds no keys the edit reads
        data = None
    return path, text, data


# --- the edit --------------------------------------------------------------------------


def _edit(
    chart: Chart,
    settings: Settings,
    options: Options,
    texts: dict[str, str],
    values: list[tuple[str, str, object]],
    base: ChartPlan,
    read_bytes: Read,
) -> ChartEdit:
    config = settings.config
    workloads: list[_Workload] = []
    helpers = template_helpers.used_once(
        texts, lambda ln: _gpu_key(ln, config), lambda p: _shown(chart, p)
    )  # the includer's path -> the helper used once
    for path, text in texts.items():
        shown = _shown(chart, path)
        lines = shapes.lines_of(text)
        gpu_lines = [ln for ln in lines if _gpu_key(ln, config)]
        yaml_lines = [ln for ln in lines if _gpu_to_yaml(ln, values, config)]
        helper = helpers.get(path)
        if helper is not None:
            gpu_lines = [helper.use]  # the include line stands for the helper's GPU lines
        elif any(h.path == path for h in helpers.values()):
            continue  # the helper's file: edited with the template that includes it
        if not gpu_lines and not yaml_lines:
            continue
        for ln in gpu_lines + yaml_lines:
            if helper is None and any(c.keyword in ("define", "block") for c in ln.controls):
                what = written.helper_uses(ln.controls, texts, chart.root)
                raise Refused(shown, ln.number + 1, what, _key_near(ln))
        unsafe = shapes.UNSAFE.search(text)
        if unsafe:
            line = text.count("\n", 0, unsafe.start()) + 1
            raise Refused(shown, line, f"{unsafe.group(1)} in the template")
        workload = _Workload(path, os.path.relpath(path, chart.root).replace(os.sep, "/"))
        _workload(
            workload,
            shown,
            text,
            lines,
            gpu_lines,
            yaml_lines,
            values,
            settings,
            options.switch_key,
            helper,
        )
        workloads.append(workload)
    if not workloads:
        raise Refused(
            chart.display,
            1,
            "no GPU line in a shape the edit reads "
            "(a GPU count from a helper or a values shape it cannot follow)",
        )
    resources = {w.resource for w in workloads}
    if len(resources) > 1:
        raise Refused(
            _shown(chart, workloads[1].path),
            1,
            f"workloads that ask for different resources ({', '.join(sorted(resources))})",
        )
    resource = resources.pop()
    choice = _choice(chart, workloads[0], resource, settings)
    edit = ChartEdit(
        plan=ChartPlan(root=chart.display, name=chart.name, version=chart.version, way=TEMPLATE)
    )
    for workload in workloads:
        edit.changed[workload.path] = workload.new_text.encode()
        if workload.helper_path:
            edit.changed[workload.helper_path] = workload.helper_text.encode()
        stem = chart.name if len(workloads) == 1 else _stem(workload.path)
        target = os.path.join(chart.root, "templates", f"{stem}-resourceclaimtemplate.yaml")
        if target in texts or os.path.exists(target):
            raise Refused(_shown(chart, target), 1, "a file of the new template's name exists")
        edit.created[target] = workload.claim_template.encode()
    values_text = next((t for p, t, _d in values if p == chart.values), "")
    top = options.switch_key.split(".")[0]
    if re.search(rf"^{re.escape(top)}\s*:", values_text, re.M):
        raise Refused(
            _shown(chart, chart.values),
            _line_of(values_text, top),
            f"values.yaml has a key {top} already",
            top,
        )
    created = [os.path.relpath(p, chart.root) for p in edit.created]
    count_keys = tuple(dict.fromkeys(k for w in workloads for k in w.count_keys))
    addition = written.values_addition(options, choice, resource, created, count_keys)
    new_values = values_text + ("\n" if values_text and not values_text.endswith("\n") else "")
    if chart.values in chart.values_files:
        edit.changed[chart.values] = (new_values + addition).encode()
    else:
        edit.created[chart.values] = addition.lstrip("\n").encode()
    if chart.schema is not None:
        schema_text = _text(chart, chart.schema, read_bytes)
        edit.changed[chart.schema] = written.schema_edit(schema_text, options.switch_key).encode()
    files = tuple(_shown(chart, p) for p in [*edit.changed, *edit.created])
    edit.plan = replace(base, count_keys=count_keys, files=files)
    edit.findings.append(_note(chart, options, count_keys, created))
    edit.findings.extend(
        template_values.checks(
            chart,
            values,
            [k for w in workloads for k in w.count_paths],
            [k for w in workloads for k in w.resources_paths],
        )
    )
    return edit


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _line_of(text: str, key: str) -> int:
    m = re.search(rf"^{re.escape(key)}\s*:", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def _note(
    chart: Chart, options: Options, count_keys: tuple[str, ...], created: list[str]
) -> Finding:
    chart_yaml = os.path.join(chart.display, "Chart.yaml")
    state = "on" if options.switch_on else "off"
    turn = "" if options.switch_on else f"; set {options.switch_key}=true to render DRA claims"
    return finding(
        "DRA241",
        chart_yaml,
        1,
        1,
        f"chart {chart.name}: templates given the DRA switch {options.switch_key} ({state} by "
        f"default) and {', '.join(created)}; the GPU count stays in "
        f"{', '.join(count_keys) or 'the template'}{turn}",
        f"propose a chart version bump (version {chart.version} -> {_bump(chart.version)}): "
        "the chart's values and templates changed",
    )


def _bump(version: str) -> str:
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)(.*)$", version)
    if not m:
        return f"{version} + 1 (minor)"
    return f"{m.group(1)}.{int(m.group(2)) + 1}.0"


# --- one workload ----------------------------------------------------------------------


def _gpu_key(line: shapes.Line, config: Config) -> bool:
    key = shapes.key_of(line)
    return bool(key and "/" in key and config.is_gpu(key))


def _gpu_to_yaml(line: shapes.Line, values: list[tuple[str, str, object]], config: Config) -> bool:
    m = _TO_YAML.search(line.text)
    if not m:
        return False
    key = _arg_key(line, m.group("arg"))
    return key is not None and any(
        template_values.gpu_under(template_values.get(d, key), config) for _p, _t, d in values
    )


def _arg_key(line: shapes.Line, arg: str) -> str | None:
    """The values key a toYaml argument is: ``.Values.x``, or ``.`` inside
    ``{{- with .Values.x }}``."""
    if arg == "." and line.controls and line.controls[-1].keyword == "with":
        body = shapes.ACTION.match(line.controls[-1].opening)
        return shapes.values_path(body.group("body").strip()[4:]) if body else None
    return shapes.values_path(arg)


def _helper_edit(
    w: _Workload, helper: template_helpers.Helper, counts: list[str], request: str, switch: str
) -> str:
    """The helper's GPU lines behind the switch, its claims, and the count the switch
    reads within the define (a helper's variables are its own); the resource."""
    lines, shown = helper.lines, helper.shown
    for ln in helper.gpu:
        holder = shapes.parent(lines, ln.number)
        if holder is None or shapes.key_of(lines[holder]) not in ("limits", "requests"):
            raise Refused(shown, ln.number + 1, "a GPU line outside limits and requests")
    before: dict[int, list[str]] = {}
    after: dict[int, list[str]] = {}
    resource = _literal_counts(w, shown, lines, helper.gpu, counts, before, after)
    holder = shapes.parent(lines, helper.gpu[0].number)
    assert holder is not None
    res = shapes.parent(lines, holder)
    if res is None:  # the define renders the body of resources: claims beside limits
        pad = " " * lines[holder].indent
        before.setdefault(helper.closing, []).extend(
            [
                f"{pad}{{{{- if {VAR} }}}}",
                f"{pad}claims:",
                f"{pad}  - name: {CLAIM}",
                f"{pad}    request: {request}",
                f"{pad}{{{{- end }}}}",
            ]
        )
    elif shapes.key_of(lines[res]) == "resources":
        _claims(shown, lines, res, request, after)
    else:
        raise Refused(shown, holder + 1, f'the helper "{helper.name}" outside resources')
    header = "".join(
        [
            f"{{{{- {VAR} := 0 }}}}{{{{- if $.Values.{switch} }}}}",
            *(c.replace("\n", "") for c in counts),
            "{{- end -}}" if helper.trims else "{{- end }}",
        ]
    )
    define = {helper.opening: [lines[helper.opening].text + header]}
    w.helper_path = helper.path
    w.helper_text = written.splice(lines, before, after, define)
    return resource


def _key_near(line: shapes.Line) -> str:
    ref = re.search(r"\.Values\.([A-Za-z0-9_.]+)", line.text)
    return ref.group(1) if ref else ""


def _workload(
    w: _Workload,
    shown: str,
    text: str,
    lines: list[shapes.Line],
    gpu_lines: list[shapes.Line],
    yaml_lines: list[shapes.Line],
    values: list[tuple[str, str, object]],
    settings: Settings,
    switch: str,
    helper: template_helpers.Helper | None = None,
) -> None:
    config = settings.config
    first = (gpu_lines + yaml_lines)[0]
    starts = [ln.number for ln in lines if ln.text.rstrip() == "---"]
    doc = (
        max((n for n in starts if n < first.number), default=-1) + 1,
        min((n for n in starts if n > first.number), default=len(lines)) - 1,
    )
    stray = [ln for ln in gpu_lines + yaml_lines if not doc[0] <= ln.number <= doc[1]]
    if stray:
        raise Refused(shown, stray[0].number + 1, "GPUs in several objects of one template")
    document = lines[doc[0] : doc[1] + 1]
    kinds = [ln for ln in document if ln.indent == 0 and shapes.key_of(ln) == "kind"]
    if len(kinds) != 1:
        raise Refused(shown, first.number + 1, f"{len(kinds)} objects in one document")
    kind = shapes.value_of(kinds[0])
    if kind not in KINDS:
        raise Refused(
            shown,
            kinds[0].number + 1,
            f"kind {kind}: what its controller does with GPUs is not rendered by an edit",
        )
    for word in (
        "schedulerName",
        "kueue.x-k8s.io",
        "cloud.google.com/gke-accelerator",
        "resourceClaims",
        VAR,
    ):
        if word in text:
            raise Refused(shown, _line(text, word), f"{word} in the template", _key_near(first))
    if text[:1].isspace():
        raise Refused(shown, 1, "the template starts with blank space")
    name, namespace = _metadata(shown, lines, document)
    before: dict[int, list[str]] = {}
    after: dict[int, list[str]] = {}
    replace: dict[int, list[str]] = {}
    if gpu_lines and yaml_lines:
        raise Refused(shown, yaml_lines[0].number + 1, "GPUs both as a line and from toYaml")
    sites = gpu_lines or yaml_lines
    if helper is not None:  # the include line: resources: {{- include ... }}, or below it
        at = helper.use.number
        res = at if shapes.key_of(helper.use) == "resources" else shapes.parent(lines, at)
        if res is None or shapes.key_of(lines[res]) != "resources":
            where = shapes.key_of(lines[res]) if res is not None else "the template's root"
            raise Refused(
                shown,
                at + 1,
                f'the helper "{helper.name}" included in {where}: the edit follows a helper '
                "that renders a container's resources, or their limits and requests",
            )
        resources_lines = {res}
    else:
        resources_lines = {_resources_line(shown, lines, ln, bool(gpu_lines)) for ln in sites}
    if len(resources_lines) != 1:
        raise Refused(shown, sites[-1].number + 1, "GPU lines in several containers")
    res_index = resources_lines.pop()
    container, request_name = _container(shown, lines, res_index)
    counts: list[str] = []
    if helper is not None:
        w.resource = _helper_edit(w, helper, counts, request_name, switch)
    elif gpu_lines:
        w.resource = _literal_counts(w, shown, lines, gpu_lines, counts, before, after)
    else:
        if len(yaml_lines) != 1:
            raise Refused(shown, yaml_lines[1].number + 1, "resources rendered twice")
        w.resource = _to_yaml_counts(
            w, shown, lines, yaml_lines[0], values, config, counts, replace, request_name
        )
    if gpu_lines and helper is None:  # the container's claims, after its resources block
        _claims(shown, lines, res_index, request_name, after)  # (toYaml, a helper set them)
    # the pod's resourceClaims (and toleration), after the pod spec
    containers = shapes.parent(lines, container)
    if containers is None or shapes.key_of(lines[containers]) != "containers":
        raise Refused(shown, container + 1, "GPUs in an init container or outside containers")
    spec = shapes.parent(lines, containers)
    if spec is None or shapes.key_of(lines[spec]) != "spec":
        raise Refused(shown, containers + 1, "a pod spec the edit cannot find")
    pod_pad = " " * lines[containers].indent
    pod_end = shapes.block_end(lines, spec)
    eof = shapes.lines_of(text + "\n")[-1].controls if pod_end + 1 >= len(lines) else None
    after_controls = eof if eof is not None else lines[pod_end + 1].controls
    if after_controls != lines[spec].controls or not shapes.root_scope(after_controls):
        raise Refused(shown, spec + 1, "a pod spec inside a with, range or unclosed block")
    claims = [
        f"{pod_pad}{{{{- if {VAR} }}}}",
        f"{pod_pad}resourceClaims:",
        f"{pod_pad}  - name: {CLAIM}",
        f"{pod_pad}    resourceClaimTemplateName: {name}-gpu",
    ]
    if config.extended_resource_toleration:
        claims.extend(
            written.toleration(
                shown, lines, spec, pod_end, containers, w.resource, before, after, replace
            )
        )
    claims.append(f"{pod_pad}{{{{- end }}}}")
    after.setdefault(pod_end, []).extend(claims)
    header = written.count_header(shown, switch, counts, w.resource)
    w.new_text = header + written.splice(lines, before, after, replace)
    w.claim_template = written.claim_template(
        w.rel, switch, counts, name, namespace, request_name, settings, w.resource
    )


def _claims(
    shown: str, lines: list[shapes.Line], res_index: int, request: str, after: dict[int, list[str]]
) -> None:
    res = lines[res_index]
    end = shapes.block_end(lines, res_index)
    if end == res_index or not shapes.balanced(lines, res_index, end):
        raise Refused(shown, res.number + 1, "a resources block the edit cannot extend")
    child = next(ln.indent for ln in lines[res_index + 1 : end + 1] if ln.text.strip())
    pad = " " * child
    after.setdefault(end, []).extend(
        [
            f"{pad}{{{{- if {VAR} }}}}",
            f"{pad}claims:",
            f"{pad}  - name: {CLAIM}",
            f"{pad}    request: {request}",
            f"{pad}{{{{- end }}}}",
        ]
    )


def _line(text: str, word: str) -> int:
    return text.count("\n", 0, text.index(word)) + 1


def _metadata(
    shown: str, lines: list[shapes.Line], document: list[shapes.Line]
) -> tuple[str, str | None]:
    """The workload's name and namespace as written (copied into the new template)."""
    meta = next((ln for ln in document if ln.indent == 0 and shapes.key_of(ln) == "metadata"), None)
    if meta is None:
        raise Refused(shown, 1, "no metadata of the workload")
    end = shapes.block_end(lines, meta.number)
    found: dict[str, str] = {}
    children = [ln for ln in lines[meta.number + 1 : end + 1] if not ln.actions_only]
    indent = children[0].indent if children else 2
    for ln in children:
        key = shapes.key_of(ln)
        if ln.indent == indent and key in ("name", "namespace"):
            value = shapes.value_of(ln)
            plain = ln.controls == meta.controls and shapes.root_scope(ln.controls)
            if "$" in value.replace("$.", "") or not plain:
                raise Refused(shown, ln.number + 1, f"the workload's {key} is not a plain value")
            found[str(key)] = _rooted(value)
    if "name" not in found:
        raise Refused(shown, meta.number + 1, "the workload's name is not in its metadata")
    return found["name"], found.get("namespace")


def _rooted(text: str) -> str:
    """Expressions of the chart's root made to read it from anywhere (``$.Values``)."""
    return _ROOT_FIELDS.sub(r"$.\1", text)


def _resources_line(shown: str, lines: list[shapes.Line], site: shapes.Line, literal: bool) -> int:
    if literal:
        holder = shapes.parent(lines, site.number)
        if holder is None or shapes.key_of(lines[holder]) not in ("limits", "requests"):
            raise Refused(shown, site.number + 1, "a GPU line outside limits and requests")
        res = shapes.parent(lines, holder)
    else:
        res = shapes.parent(lines, site.number)
        # {{- with .Values.resources }} / resources: / {{- toYaml . }}: the key line is
        # inside the with block
    if res is None or shapes.key_of(lines[res]) != "resources":
        raise Refused(shown, site.number + 1, "GPUs outside a container's resources")
    return res


def _container(shown: str, lines: list[shapes.Line], res: int) -> tuple[int, str]:
    """The container item's line and its name (a literal, or a root expression)."""
    indent = lines[res].indent
    item = None
    for ln in reversed(lines[: res + 1]):
        if ln.text.lstrip().startswith("- ") and ln.indent < indent:
            item = ln
            break
        if ln.text.strip() and not ln.actions_only and ln.indent < indent:
            break
    if item is None:
        raise Refused(shown, res + 1, "resources outside a container item")
    end = shapes.block_end(lines, item.number)
    key_indent = item.indent + (len(item.text.lstrip()) - len(item.text.lstrip()[1:].lstrip()))
    for ln in lines[item.number : end + 1]:
        if shapes.key_of(ln) == "name" and (ln is item or ln.indent == key_indent):
            value = shapes.value_of(ln)
            pipe = shapes.single_action(value)
            if re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", value.strip("\"'")):
                return item.number, dns_label(value.strip("\"'"))
            if pipe and re.fullmatch(r"\.(Chart|Release|Values)[A-Za-z0-9_.]*", pipe):
                if not shapes.root_scope(ln.controls):
                    break
                return item.number, "{{ " + _rooted(pipe) + " }}"
            break
    raise Refused(shown, item.number + 1, "a container name the edit cannot copy")


def _literal_counts(
    w: _Workload,
    shown: str,
    lines: list[shapes.Line],
    gpu_lines: list[shapes.Line],
    counts: list[str],
    before: dict[int, list[str]],
    after: dict[int, list[str]],
) -> str:
    names = {shapes.key_of(ln) for ln in gpu_lines}
    if len(names) > 1:
        raise Refused(
            shown,
            gpu_lines[1].number + 1,
            f"several GPU resources ({', '.join(sorted(map(str, names)))})",
        )
    resource = str(names.pop())
    by_holder: dict[str, list[tuple[shapes.Line, str]]] = {"limits": [], "requests": []}
    for ln in gpu_lines:
        holder = shapes.parent(lines, ln.number)
        assert holder is not None  # _resources_line checked it
        pipe = shapes.single_action(shapes.value_of(ln))
        key = _key_near(ln)
        if pipe is None:
            raise Refused(shown, ln.number + 1, "a GPU value that is not one action", key)
        computing = shapes.COMPUTING.search(pipe)
        if computing:
            raise Refused(
                shown,
                ln.number + 1,
                f"a GPU count computed in the template ({computing.group(0)})",
                key,
            )
        if not shapes.root_scope(ln.controls):
            raise Refused(shown, ln.number + 1, "a GPU line inside a with or range block", key)
        by_holder[str(shapes.key_of(lines[holder]))].append((ln, pipe))
        indexed = re.match(r'\s*index\s+\$?\.Values\.([A-Za-z0-9_.]+)\s+"([^"]+)"', pipe)
        if indexed:  # index .Values.resources.limits "nvidia.com/gpu": the key is the name's
            path = (*indexed.group(1).split("."), indexed.group(2))
            w.count_keys.append(".".join(p.replace(".", "\\.") for p in path))
            w.count_paths.append(path)
        elif key:
            w.count_keys.append(key)
            w.count_paths.append(tuple(key.split(".")))
    chosen = by_holder["limits"] or by_holder["requests"]
    if by_holder["limits"] and by_holder["requests"]:
        twins = {(ln.controls, p) for ln, p in by_holder["limits"]}
        if {(ln.controls, p) for ln, p in by_holder["requests"]} != twins:
            raise Refused(
                shown,
                by_holder["requests"][0][0].number + 1,
                "GPU requests that differ from the GPU limits",
            )
    for ln, pipe in chosen:  # the count as a number: a quote for the YAML text is not
        number = re.sub(r"\s*\|\s*s?quote\s*$", "", pipe)
        counts.append(shapes.count_lines(ln.controls, f"int ({_rooted(number)})", VAR))
    for holder_name in ("limits", "requests"):
        sites = by_holder[holder_name]
        if not sites:
            continue
        holder = shapes.parent(lines, sites[0][0].number)
        assert holder is not None
        end = shapes.block_end(lines, holder)
        others = [
            ln
            for ln in lines[holder + 1 : end + 1]
            if ln.text.strip()
            and all(ln is not s for s, _p in sites)
            and not (ln.actions_only and re.fullmatch(r"\s*\{\{-?\s*(if|else|end)\b.*", ln.text))
        ]
        if not others and shapes.balanced(lines, holder, end):
            guard = [(holder, end)]  # nothing else in limits: the key goes too
        else:
            guard = [(s.number, s.number) for s, _p in sites]
        for start, stop in guard:
            pad = " " * lines[start].indent
            before.setdefault(start, []).append(f"{pad}{{{{- if not {VAR} }}}}")
            after.setdefault(stop, []).insert(0, f"{pad}{{{{- end }}}}")
    return resource


def _to_yaml_counts(
    w: _Workload,
    shown: str,
    lines: list[shapes.Line],
    site: shapes.Line,
    values: list[tuple[str, str, object]],
    config: Config,
    counts: list[str],
    replace: dict[int, list[str]],
    request_name: str,
) -> str:
    m = _TO_YAML.search(site.text)
    assert m is not None
    key = _arg_key(site, m.group("arg"))
    assert key is not None
    names = {
        n
        for _p, _t, d in values
        for n in template_values.gpu_under(template_values.get(d, key), config)
    }
    if len(names) != 1:
        raise Refused(
            shown, site.number + 1, f"several GPU resources ({', '.join(sorted(names))})", key
        )
    resource = names.pop()
    controls = site.controls
    if m.group("arg") == ".":
        controls = controls[:-1]  # the with that binds it: an empty value sets no GPUs
    if not shapes.root_scope(controls):
        raise Refused(shown, site.number + 1, "resources inside a with or range block", key)
    if not re.fullmatch(r"\s*\{\{-\s*" + re.escape(m.group(0)) + r"\s*\}\}\s*", site.text):
        raise Refused(shown, site.number + 1, "a toYaml line with more than the resources", key)
    source = f"($.Values.{key} | default dict)"
    res = json.dumps(resource)
    counts.append(
        shapes.count_lines(
            controls, f'int (dig "limits" {res} (dig "requests" {res} 0 {source}) {source})', VAR
        )
    )
    w.count_keys.append(f"{key}.limits.{resource}")
    w.count_paths.append((*key.split("."), "limits", resource))
    w.resources_paths.append((*key.split("."), resource))
    pad = " " * site.indent
    request = request_name[3:-3] if request_name.startswith("{{ ") else json.dumps(request_name)
    replace[site.number] = [
        f"{pad}{{{{- if not {VAR} }}}}",
        site.text,
        f"{pad}{{{{- else }}}}",
        f"{pad}{{{{- $draResources := deepCopy {source} }}}}",
        f'{pad}{{{{- range $draKey := list "limits" "requests" }}}}',
        f"{pad}{{{{- $draSet := get $draResources $draKey | default dict }}}}",
        f"{pad}{{{{- $_ := unset $draSet {res} }}}}",
        *written.other_gpus(pad, key, resource, config),
        f"{pad}{{{{- if not $draSet }}}}{{{{- $_ := unset $draResources $draKey }}}}{{{{- end }}}}",
        f"{pad}{{{{- end }}}}",
        f'{pad}{{{{- $_ := set $draResources "claims" (list (dict "name" "{CLAIM}" "request" {request})) }}}}',
        f"{pad}{{{{- toYaml $draResources | nindent {m.group('n')} }}}}",
        f"{pad}{{{{- end }}}}",
    ]
    return resource


def _choice(chart: Chart, w: _Workload, resource: str, settings: Settings) -> Choice:
    config = settings.config
    shown = _shown(chart, w.path)
    mapping = next((m for m in config.resources if m.match(resource) is not None), None)
    if mapping is None:
        raise Refused(shown, 1, f"{resource} is not mapped to a DeviceClass")
    if mapping.rules:
        raise Refused(
            shown,
            1,
            f"the mapping of {resource} has rules (by namespace, labels or "
            "node selector): one template renders one class",
        )
    choice = config.choose(resource, Context())
    assert choice is not None
    if choice.shared:
        raise Refused(shown, 1, f"{resource} is mapped as shared")
    return choice
