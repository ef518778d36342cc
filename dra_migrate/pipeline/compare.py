"""What the proofs compare (``builds.py``: kustomize builds, ``renders.py``: Helm
renderings): two sets of Kubernetes objects, keyed so that the names a conversion
gives ResourceClaimTemplates do not count, and the first difference between them said
in words for a finding (DRA231, DRA244).

A ResourceClaimTemplate that pods refer to is keyed by the claims that refer to it
(``<template of Deployment/llm/spec/.../claims/0:gpu>``), never by its name, and its
labels and annotations (what a kustomization's or chart's transformers give it) are
left out; each ``resourceClaimTemplateName`` is renamed to match.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

Key = tuple[str, str, str, str]  # apiVersion, kind, namespace, name


def loaded(data: bytes) -> list[dict[str, Any]]:
    """The objects of a YAML stream (what kubectl kustomize or helm printed)."""
    import yaml

    from dra_migrate.manifests.compose import load_data
    from dra_migrate.report.findings import InputProblem

    try:  # the bounded loader: a rendering's alias bomb is refused, never expanded
        return [d for d in load_data(data, "(rendering)") if isinstance(d, dict)]
    except InputProblem as problem:  # what callers catch from a stream that does not load
        raise yaml.YAMLError(problem.finding.message) from None


def keyed(objects: Iterable[dict[str, Any]]) -> dict[Key, Any]:
    """The objects by (apiVersion, kind, namespace, name), each ResourceClaimTemplate
    that pods refer to named by the claims that refer to it (the objects' claims are
    renamed in place)."""
    objects = list(objects)
    referrers: dict[tuple[str, str], list[str]] = {}
    for obj in objects:
        meta = obj.get("metadata") or {}
        owner = f"{obj.get('kind')}/{meta.get('name')}"
        _references(obj, owner, meta.get("namespace") or "", referrers, "")
    renamed = {
        key: f"<template of {', '.join(sorted(owners))}>" for key, owners in referrers.items()
    }
    out: dict[Key, Any] = {}
    for obj in objects:
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or ""
        _rename(obj, namespace, renamed)
        name = meta.get("name") or ""
        if obj.get("kind") == "ResourceClaimTemplate":  # by what it asks for and who uses
            # it: the labels and annotations a kustomization's transformers give it are
            # the build's, not the conversion's
            name = renamed.get((namespace, name), name)
            kept = {k: v for k, v in meta.items() if k not in ("labels", "annotations")}
            obj = {**obj, "metadata": {**kept, "name": name}}
        out[(str(obj.get("apiVersion")), str(obj.get("kind")), namespace, name)] = obj
    return out


def difference(want: dict[Any, Any], got: dict[Any, Any]) -> str:
    """The first difference between the objects expected and those found after (keys
    sorted), in words; "" when they are the same."""
    for key in sorted(set(want) | set(got)):
        if key not in got:
            return f"{_name(key)} is missing after"
        if key not in want:
            return f"{_name(key)} is extra after"
        found = first_difference(want[key], got[key], "")
        if found is not None:
            path, a, b = found
            return f"{_name(key)} differs at {path or '/'}: {_value(a)} expected, {_value(b)} after"
    return ""


def first_difference(a: Any, b: Any, path: str) -> tuple[str, Any, Any] | None:
    """(path, value expected, value after) of the first difference, keys sorted."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                return f"{path}/{key}", a.get(key, ABSENT), b.get(key, ABSENT)
            found = first_difference(a[key], b[key], f"{path}/{key}")
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}/{i}")
            if found is not None:
                return found
        if len(a) != len(b):
            return path, f"{len(a)} item(s)", f"{len(b)} item(s)"
        return None
    return None if a == b else (path, a, b)


ABSENT = object()  # a key one side does not have


def _name(key: tuple[str, ...]) -> str:
    kind, namespace, name = key[1], key[2], key[3]
    return f"{kind} {namespace + '/' if namespace else ''}{name}"


def _value(value: Any) -> str:
    if value is ABSENT:
        return "nothing"
    import json

    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _references(
    value: Any, owner: str, namespace: str, found: dict[tuple[str, str], list[str]], path: str
) -> None:
    """Who refers to which template: (namespace, name) -> owner/path/claim."""
    if isinstance(value, dict):
        name = value.get("resourceClaimTemplateName")
        if isinstance(name, str):
            found.setdefault((namespace, name), []).append(f"{owner}{path}:{value.get('name')}")
        for key, item in value.items():
            _references(item, owner, namespace, found, f"{path}/{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _references(item, owner, namespace, found, f"{path}/{i}")


def _rename(value: Any, namespace: str, renamed: dict[tuple[str, str], str]) -> None:
    if isinstance(value, dict):
        name = value.get("resourceClaimTemplateName")
        if isinstance(name, str) and (namespace, name) in renamed:
            value["resourceClaimTemplateName"] = renamed[(namespace, name)]
        for item in value.values():
            _rename(item, namespace, renamed)
    elif isinstance(value, list):
        for item in value:
            _rename(item, namespace, renamed)
