"""The text a template edit writes: the spliced template, the count header, the new
ResourceClaimTemplate file, the values file's keys and the schema's properties."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from dra_migrate.convert.mapping import Choice, Config, Context, Settings
from dra_migrate.helm import template_shapes as shapes
from dra_migrate.helm.model import Options
from dra_migrate.helm.template_shapes import VAR, Refused
from dra_migrate.helm.template_values import gpu_patterns
from dra_migrate.manifests import compose
from dra_migrate.report.findings import InputProblem


def splice(
    lines: list[shapes.Line],
    before: dict[int, list[str]],
    after: dict[int, list[str]],
    replace: dict[int, list[str]],
) -> str:
    out: list[str] = []
    last = len(lines) - 1
    for ln in lines:
        out.extend(before.get(ln.number, []))
        out.extend(replace.get(ln.number, [ln.text]))
        extra = after.get(ln.number, [])
        if extra and ln.number == last and ln.text == "":
            out.pop()  # the file's final line break: the lines go before it
            out.extend(extra)
            out.append("")
            continue
        out.extend(extra)
    return "\n".join(out)


def count_header(shown: str, switch: str, counts: list[str], resource: str) -> str:
    return (
        f"{{{{- /* dra-migrate: {VAR} is the GPU count this template renders as DRA claims "
        f"when {switch} is true (0 when it is false: the {resource} lines as they were) */}}}}\n"
        f"{{{{- {VAR} := 0 }}}}\n"
        f"{{{{- if $.Values.{switch} }}}}\n" + "\n".join(counts) + "\n{{- end -}}\n"
    )


def claim_template(
    shown: str,
    switch: str,
    counts: list[str],
    name: str,
    namespace: str | None,
    request_name: str,
    settings: Settings,
    resource: str,
) -> str:
    parent = switch.rsplit(".", 1)[0]
    choice = _choice_for(settings, resource)
    target = settings.target
    body_pad = "            " if target != "v1beta1" else "          "
    request = request_name
    out = [
        f"{{{{- /* dra-migrate: the ResourceClaimTemplate of the GPUs of {shown}, rendered "
        f"when {switch} is true, with the count its {resource} line renders */}}}}",
        f"{{{{- {VAR} := 0 }}}}",
        f"{{{{- if $.Values.{switch} }}}}",
        *counts,
        "{{- end }}",
        f"{{{{- if {VAR} }}}}",
        f"apiVersion: resource.k8s.io/{target}",
        "kind: ResourceClaimTemplate",
        "metadata:",
        f"  name: {name}-gpu",
    ]
    if namespace is not None:
        out.append(f"  namespace: {namespace}")
    out += ["spec:", "  spec:", "    devices:", "      requests:", f"        - name: {request}"]
    if target != "v1beta1":
        out.append("          exactly:")
    out += [
        f"{body_pad}deviceClassName: {{{{ $.Values.{parent}.deviceClassName | quote }}}}",
        f"{body_pad}{{{{- with $.Values.{parent}.selectors }}}}",
        f"{body_pad}selectors:",
        f"{body_pad}  {{{{- range . }}}}",
        f"{body_pad}  - cel:",
        f"{body_pad}      expression: {{{{ . | toJson }}}}",
        f"{body_pad}  {{{{- end }}}}",
        f"{body_pad}{{{{- end }}}}",
        f"{body_pad}count: {{{{ {VAR} }}}}",
    ]
    if choice.capacity:
        out.append(f"{body_pad}capacity: {_flow({'requests': dict(choice.capacity)})}")
    if choice.config:
        configs = [
            {
                "requests": [_REQUEST],
                "opaque": {"driver": c["driver"], "parameters": c["parameters"]},
            }
            for c in choice.config
        ]
        # the request's name as the template renders it (a literal, or the container
        # name's expression), quoted by the template engine
        named = request[3:-3] + " | toJson" if request.startswith("{{ ") else json.dumps(request)
        text = _flow(configs).replace(
            json.dumps(_REQUEST), named if not request.startswith("{{ ") else "{{ " + named + " }}"
        )
        out.append(f"      config: {text}")
    out.append("{{- end }}")
    return "\n".join(out) + "\n"


def _choice_for(settings: Settings, resource: str) -> Choice:
    choice = settings.config.choose(resource, Context())
    assert choice is not None
    return choice


_REQUEST = "dra-migrate: the request's name"


def _flow(value: object) -> str:
    """A value as a JSON flow collection the template engine leaves alone: braces of
    nested collections spaced apart (``} }``), never an action."""
    if _braces(value):
        raise Refused(".dra-migrate.yaml", 1, "a mapping value with template braces ({{ or }})")
    text = json.dumps(_plain(value), sort_keys=True, default=str)
    while "{{" in text or "}}" in text:  # only between collections: no string holds them
        text = text.replace("{{", "{ {").replace("}}", "} }")
    return text


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(v) for v in value]
    return value


def _braces(value: object) -> bool:
    if isinstance(value, Mapping):
        return any(_braces(k) or _braces(v) for k, v in value.items())
    if isinstance(value, Sequence) and not isinstance(value, str):
        return any(_braces(v) for v in value)
    text = str(value)
    return "{{" in text or "}}" in text


def values_addition(
    options: Options, choice: Choice, resource: str, created: list[str], counts: tuple[str, ...]
) -> str:
    """The switch's keys, appended to values.yaml with a comment that says what they do."""
    parts = options.switch_key.split(".")
    leaf = parts[-1]
    where = f" ({', '.join(counts)})" if counts else ""
    lines = [
        "",
        f"# dra-migrate: Dynamic Resource Allocation for this chart's GPUs. {leaf}: true",
        f"# renders the pods' resourceClaims in place of {resource}, and",
        f"# {', '.join(created)}.",
        f"# The GPU count stays where it was{where}. deviceClassName is the",
        "# DeviceClass the claims ask for; selectors (CEL expressions) narrow the devices.",
    ]
    indent = ""
    for part in parts[:-1]:
        lines.append(f"{indent}{part}:")
        indent += "  "
    lines.append(f"{indent}{leaf}: {'true' if options.switch_on else 'false'}")
    lines.append(f"{indent}deviceClassName: {json.dumps(choice.device_class)}")
    selectors = list(choice.selectors)
    if selectors:
        lines.append(f"{indent}selectors:")
        lines.extend(f"{indent}  - {json.dumps(s)}" for s in selectors)
    else:
        lines.append(f"{indent}selectors: []")
    return "\n".join(lines) + "\n"


# --- values.schema.json ------------------------------------------------------------------


def schema_edit(text: str, switch_key: str) -> str:
    """The schema with the switch's properties added to its top ``properties``, as a
    text splice at the indentation the file uses (its other bytes as they were)."""
    parts = switch_key.split(".")
    leaf = parts[-1]
    prop: dict[str, object] = {
        "type": "object",
        "description": "dra-migrate: Dynamic Resource Allocation for the chart's GPUs",
        "properties": {
            leaf: {"type": "boolean"},
            "deviceClassName": {"type": "string"},
            "selectors": {"type": "array", "items": {"type": "string"}},
        },
    }
    for part in reversed(parts[1:-1]):
        prop = {"type": "object", "properties": {part: prop}}
    unit = _indent_unit(text)
    start, end = _top_properties(text)
    if start is None:
        raise ValueError("values.schema.json has no top-level object")
    inner = json.dumps(prop, indent=len(unit) if unit.strip() == "" and unit else None)
    if end is None:  # no "properties": add one before the top object's closing brace
        close = start
        body = (
            f'"properties": {{\n{unit * 2}"{parts[0]}": '
            + _reindent(inner, unit * 2)
            + f"\n{unit}}}"
        )
        prefix = text[:close].rstrip()
        sep = "," if not prefix.endswith("{") else ""
        return prefix + sep + f"\n{unit}" + body + "\n" + text[close:].lstrip(" \t\n")
    inside = text[start + 1 : end].strip()
    entry = f'"{parts[0]}": ' + _reindent(inner, unit * 2)
    prefix = text[:end].rstrip()
    sep = "," if inside else ""
    return prefix + sep + f"\n{unit * 2}" + entry + f"\n{unit}" + text[end:]


def _indent_unit(text: str) -> str:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _reindent(text: str, pad: str) -> str:
    return text.replace("\n", "\n" + pad)


def _top_properties(text: str) -> tuple[int | None, int | None]:
    """(offset of the top "properties" object's "{", of its "}"), or (offset of the top
    object's closing "}", None) when it has no "properties"."""
    depth = 0
    i = 0
    key: str | None = None
    last_string = ""
    top_close = None
    prop_open: int | None = None
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            last_string = text[i + 1 : j]
            i = j + 1
            continue
        if c == ":" and depth == 1:
            key = last_string
        elif c in "{[":
            depth += 1
            if c == "{" and depth == 2 and key == "properties" and prop_open is None:
                prop_open = i
        elif c in "}]":
            if depth == 2 and prop_open is not None and c == "}":
                return prop_open, i
            depth -= 1
            if depth == 0:
                top_close = i
                break
        elif c == "," and depth == 1:
            key = None
        i += 1
    return (top_close, None) if top_close is not None else (None, None)


def other_gpus(pad: str, key: str, resource: str, config: Config) -> list[str]:
    """With the switch on, a GPU name other than ``resource`` the values carry at
    install time (a MIG profile beside nvidia.com/gpu) would pass through beside the
    claim: the rendering fails, naming it, rather than ask twice."""
    mapped, detected, ignored = (json.dumps(p) for p in gpu_patterns(config))
    why = json.dumps(
        f"{key}.%s.%s: with DRA on the chart migrates only {resource}; move this GPU "
        "resource to its own claim or keep DRA off"
    )
    return [
        f"{pad}{{{{- range $draName, $draCount := $draSet }}}}",
        f"{pad}{{{{- if or (regexMatch {mapped} $draName) (and (regexMatch {detected} $draName) "
        f"(not (regexMatch {ignored} $draName))) }}}}",
        f"{pad}{{{{- fail (printf {why} $draKey $draName) }}}}",
        f"{pad}{{{{- end }}}}{{{{- end }}}}",
    ]


def helper_uses(controls: Sequence[shapes.Control], texts: Mapping[str, str], root: str) -> str:
    """What a GPU line inside a helper ``define`` is, for DRA243: the helper's name and
    where it is used (``include`` or ``template``). Used many times, the pods of each
    use would share the one switch of the helper while each needs its own claim;
    used once in another form than the one ``template_helpers`` follows, that form is
    named."""
    import os

    opening = next((c.opening for c in controls if c.keyword in ("define", "block")), "")
    named = re.search(r'"([^"]+)"', opening)
    if named is None:
        return "a GPU line in a helper define"
    name = named.group(1)
    use = re.compile(r"\b(?:include|template)\s+" + re.escape(json.dumps(name)))
    where = [os.path.relpath(p, root) for p, t in texts.items() for _m in use.finditer(t)]
    if not where:
        return f'a GPU line in the helper "{name}", which no template of the chart uses'
    if len(where) == 1:
        return (
            f'a GPU line in the helper "{name}", used once ({where[0]}), not as the edit '
            f'follows a helper: include "{name}" . at the root of another template'
        )
    return (
        f'a GPU line in the helper "{name}", used {len(where)} times '
        f"({', '.join(sorted(set(where)))}): one switch in the helper cannot give each "
        "use's pods a claim of their own"
    )


TOLERATION = ("Exists", "NoSchedule")  # ExtendedResourceToleration's (convert/controllers.py)


def toleration(
    shown: str,
    lines: list[shapes.Line],
    spec: int,
    pod_end: int,
    containers: int,
    resource: str,
    before: dict[int, list[str]],
    after: dict[int, list[str]],
    replace: dict[int, list[str]],
) -> list[str]:
    """The toleration convert writes (ExtendedResourceToleration added it), rendered with
    the switch on: lines for the claims block, or splices into the tolerations."""
    indent = lines[containers].indent
    pad = " " * indent
    found = [
        ln
        for ln in lines[spec + 1 : pod_end + 1]
        if ln.indent == indent and shapes.key_of(ln) == "tolerations"
    ]
    item = f'(dict "key" {json.dumps(resource)} "operator" "Exists" "effect" "NoSchedule")'
    if not found:
        return [
            f"{pad}tolerations:",
            f"{pad}  - key: {resource}",
            f"{pad}    operator: {TOLERATION[0]}",
            f"{pad}    effect: {TOLERATION[1]}",
        ]
    key_line = found[0]
    n = key_line.number
    with_tol = (
        key_line.controls
        and key_line.controls[-1].keyword == "with"
        and n + 2 < len(lines)
        and re.fullmatch(
            r"\s*\{\{-\s*toYaml\s+\.\s*\|\s*nindent\s+\d+\s*\}\}\s*", lines[n + 1].text
        )
        and re.fullmatch(r"\s*\{\{-\s*end\s*\}\}\s*", lines[n + 2].text)
        and n >= 1
        and shapes.ACTION.fullmatch(lines[n - 1].text.strip()) is not None
    )
    if with_tol:
        opening = shapes.ACTION.match(lines[n - 1].text.strip())
        assert opening is not None
        source = (
            shapes.values_path(opening.group("body").strip()[4:])
            if opening.group("body").strip().startswith("with")
            else None
        )
        nindent = re.search(r"nindent\s+(\d+)", lines[n + 1].text)
        if source and nindent and shapes.root_scope(lines[n - 1].controls):
            before.setdefault(n - 1, []).append(f"{pad}{{{{- if not {VAR} }}}}")
            after.setdefault(n + 2, []).extend(
                [
                    f"{pad}{{{{- else }}}}",
                    f"{pad}{{{{- $draTolerations := $.Values.{source} | default list }}}}",
                    f"{pad}{{{{- $draTolerated := false }}}}",
                    f"{pad}{{{{- range $draTolerations }}}}",
                    f'{pad}{{{{- if and (eq (.operator | default "Equal") "Exists") (has (.key | default "") (list "" {json.dumps(resource)})) (has (.effect | default "") (list "" "NoSchedule")) }}}}',
                    f"{pad}{{{{- $draTolerated = true }}}}",
                    f"{pad}{{{{- end }}}}",
                    f"{pad}{{{{- end }}}}",
                    f"{pad}{{{{- if not $draTolerated }}}}",
                    f"{pad}{{{{- $draTolerations = append $draTolerations {item} }}}}",
                    f"{pad}{{{{- end }}}}",
                    f"{pad}tolerations:",
                    f"{pad}  {{{{- toYaml $draTolerations | nindent {nindent.group(1)} }}}}",
                    f"{pad}{{{{- end }}}}",
                ]
            )
            return []
    end = shapes.block_end(lines, n)
    block = lines[n : end + 1]
    if any(ln.actions_only and ln.text.strip() for ln in block) or "{{" in "".join(
        ln.text for ln in block
    ):
        raise Refused(shown, n + 1, "tolerations rendered in a shape the edit cannot follow")
    try:  # (the bounded loader every reader of YAML goes through)
        docs = compose.load_data("\n".join(ln.text[indent:] for ln in block), shown)
    except InputProblem:
        raise Refused(
            shown, n + 1, "tolerations rendered in a shape the edit cannot follow"
        ) from None
    data = docs[0] if docs else None
    tolerations = data.get("tolerations") if isinstance(data, dict) else None
    for t in tolerations if isinstance(tolerations, list) else ():
        if (
            isinstance(t, dict)
            and (t.get("operator") or "Equal") == "Exists"
            and (t.get("key") or "") in ("", resource)
            and (t.get("effect") or "") in ("", "NoSchedule")
        ):
            return []
    dash = next((ln for ln in block[1:] if ln.text.lstrip().startswith("- ")), None)
    if dash is None:
        raise Refused(shown, n + 1, "tolerations rendered in a shape the edit cannot follow")
    d = " " * dash.indent
    after.setdefault(end, []).extend(
        [
            f"{d}{{{{- if {VAR} }}}}",
            f"{d}- key: {resource}",
            f"{d}  operator: {TOLERATION[0]}",
            f"{d}  effect: {TOLERATION[1]}",
            f"{d}{{{{- end }}}}",
        ]
    )
    return []
