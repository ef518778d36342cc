"""What a chart's values files hold for a template edit: the values under a key, the
GPU resource names a ``resources`` value sets, and DRA247 for a values file whose GPU
count the edit cannot follow."""

from __future__ import annotations

import os
import re

from dra_migrate.convert.mapping import Config
from dra_migrate.helm.model import Chart
from dra_migrate.report.findings import Finding, finding


def get(data: object, key: str) -> object:
    for part in key.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def gpu_under(resources: object, config: Config) -> list[str]:
    """The GPU resource names under limits or requests of a resources value."""
    if not isinstance(resources, dict):
        return []
    return [
        name
        for part in ("limits", "requests")
        if isinstance(resources.get(part), dict)
        for name in resources[part]
        if config.is_gpu(str(name))
    ]


def checks(
    chart: Chart,
    values: list[tuple[str, str, object]],
    count_paths: list[tuple[str, ...]],
    resources_paths: list[tuple[str, ...]],
) -> list[Finding]:
    """DRA247 for a values file other than values.yaml that sets a GPU count the edit's
    ``int`` does not read as the device plugin did (not a whole number), or GPU requests
    and limits that differ (convert leaves such a pod as it is, DRA102)."""
    out: list[Finding] = []
    for path, text, data in values:
        if path == chart.values or data is None:
            continue
        for key in count_paths:
            value = _get_path(data, key)
            if value is not None and not _whole(value):
                out.append(_odd_value(chart, path, text, key, f"sets it to {value!r}"))
        for key in resources_paths:
            res = _get_path(data, key[:-1])
            if not isinstance(res, dict):
                continue
            limits, requests = res.get("limits"), res.get("requests")
            got = [p.get(key[-1]) if isinstance(p, dict) else None for p in (limits, requests)]
            if None not in got and str(got[0]) != str(got[1]):
                what = f"sets GPU limits {got[0]!r} and requests {got[1]!r}"
                out.append(_odd_value(chart, path, text, (*key[:-1], "requests", key[-1]), what))
    return out


def _whole(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit())


def _get_path(data: object, key: tuple[str, ...]) -> object:
    for part in key:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _odd_value(chart: Chart, path: str, text: str, key: tuple[str, ...], what: str) -> Finding:
    at = 0  # each key after the one before it: the line of the last
    for part in key:
        m = re.compile(rf"""^\s*["']?{re.escape(part)}["']?\s*:""", re.M).search(text, at)
        if m is None:
            break
        at = m.start() + len(m.group(0))
    line = text.count("\n", 0, at) + 1
    shown = ".".join(f'"{k}"' if "." in k or "/" in k else k for k in key)
    return finding(
        "DRA247",
        os.path.join(chart.display, os.path.relpath(path, chart.root)),
        line,
        1,
        f"values key {shown} {what}: the template edit renders the GPU count as a whole "
        "number of the limit, so with the switch on this file renders what convert of "
        "its rendering would not",
        "give the count as a whole number (and requests equal to limits) in this file, "
        "then check its rendering with the switch on",
    )


def gpu_patterns(config: Config) -> tuple[str, str, str]:
    """RE2 expressions (what sprig's ``regexMatch`` takes) of the extended resource
    names the run treats as GPUs (``Config.is_gpu``): the mapping's names (a
    placeholder as any run of name characters), the ``detect`` globs, and the
    ``ignore`` globs detection leaves out (node labels, never requests). A template
    rendered with the switch on refuses a GPU name it does not migrate."""

    def glob(pattern: str) -> str:
        return "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)

    def name(pattern: str) -> str:
        parts = re.split(r"\{[^{}]*\}", pattern)
        return "[A-Za-z0-9._-]+".join(re.escape(p) for p in parts)

    def either(patterns: list[str]) -> str:
        return f"^(?:{'|'.join(patterns)})$" if patterns else "$^"

    return (
        either([name(m.name) for m in config.resources]),
        either([glob(p) for p in config.detect]),
        either([glob(p) for p in config.ignore]),
    )
