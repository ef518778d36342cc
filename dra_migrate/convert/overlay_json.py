"""Kustomize JSON 6902 patches rewritten for a converted base (``overlays.py`` drives
them): an ``add`` or ``replace`` of a GPU count becomes a ``replace`` of the pod claim's
``resourceClaimTemplateName``, in place."""

from __future__ import annotations

from yaml.nodes import Node, ScalarNode, SequenceNode

from dra_migrate.convert.mapping import Settings
from dra_migrate.convert.overlay_patches import (
    SECTIONS,
    Base,
    Bases,
    Blocked,
    Patch,
    Unit,
    Wanted,
    base_of,
    extras,
    pod_of,
    pointer_steps,
    record,
    replan,
    spec_of,
)
from dra_migrate.manifests import locate
from dra_migrate.manifests.sources import Document
from dra_migrate.manifests.trees import entries, get, items, position, scalar, to_data


def json6902(
    unit: Unit, patch: Patch, docs: list[Document], bases: Bases, settings: Settings
) -> list[tuple[int, int, str]]:
    """The operations that set a GPU count become ones that point the pod's claim at
    the overlay's template: op, path and value replaced in place (their quotes kept),
    so a JSON or YAML operation list keeps its shape and comments. The operations on
    one pod are planned together (limits and requests of one container agree)."""
    config = settings.config
    found: dict[str, list[tuple[Wanted, ScalarNode, ScalarNode]]] = {}
    target: Base | None = None
    for doc in docs:
        ops = doc.root
        if not isinstance(ops, SequenceNode):
            continue
        for op in ops.value:
            path_node = get(op, "path")
            steps = [
                s.replace("~1", "/").replace("~0", "~")
                for s in (scalar(path_node) or "").split("/")
            ]
            mentions = any(config.maps(s) for s in steps) or any(
                config.maps(name) for name, _k, _v in entries(get(op, "value"))
            )
            if not mentions:
                continue
            line, col = position(op)
            if patch.target is None:
                raise Blocked(patch.display, line, col, "a JSON 6902 patch without a target")
            verb_node, value = get(op, "op"), get(op, "value")
            verb = scalar(verb_node) or ""
            if (
                verb not in ("add", "replace")
                or len(steps) < 4
                or not config.maps(steps[-1])
                or steps[-2] not in SECTIONS
                or steps[-3] != "resources"
                or not isinstance(value, ScalarNode)
                or not isinstance(verb_node, ScalarNode)
                or not isinstance(path_node, ScalarNode)
            ):
                raise Blocked(
                    patch.display,
                    line,
                    col,
                    f"a JSON 6902 {verb or 'operation'} on {scalar(path_node)} (only an add or "
                    "replace of one GPU count is rewritten)",
                )
            target = base_of(bases, *patch.target, patch.display, op)
            if target.after is None:
                raise Blocked(
                    patch.display,
                    line,
                    col,
                    "a JSON 6902 operation that gives GPUs to a pod that asks for none in the "
                    "base (write it as a strategic-merge patch)",
                )
            unit.bases.add(target.real)
            if patch.real is not None:
                unit.where.setdefault(patch.display, position(path_node))
            pod_path, container = _container_of(target, steps[1:-3], patch.display, op)
            asks = Wanted(container, steps[-2], steps[-1], value)
            found.setdefault(pod_path, []).append((asks, verb_node, path_node))
    splices: list[tuple[int, int, str]] = []
    for pod_path, asked in found.items():
        assert target is not None and target.after is not None
        before, planned = replan(
            target, pod_path, [a for a, _v, _p in asked], settings, patch.display
        )
        after = planned.plan
        if extras(target, pod_path, planned, None, asked[0][0].value, patch.display):
            line, col = position(asked[0][0].value)
            raise Blocked(
                patch.display,
                line,
                col,
                "with these counts the conversion also writes other fields of the pod, "
                "which a JSON 6902 operation cannot say",
            )
        if before is not None and spec_of(before.plan.template_object) == spec_of(
            after.template_object
        ):
            first = asked[0][0].value
            line, col = position(first)
            raise Blocked(
                patch.display,
                line,
                col,
                "a JSON 6902 operation that sets the base's own count (remove it)",
            )
        claims = [to_data(c) for c in items(get(pod_of(target.after, pod_path), "resourceClaims"))]
        index = next(
            i for i, c in enumerate(claims) if isinstance(c, dict) and c.get("name") == after.claim
        )
        new_name = record(unit, after.claim, dict(after.template_object), claims, True)
        pointer = "/" + "/".join(
            [*pointer_steps(pod_path), "resourceClaims", str(index), "resourceClaimTemplateName"]
        )
        for each, verb_node, path_node in asked:
            for node, text in (
                (verb_node, "replace"),
                (path_node, pointer),
                (each.value, new_name),
            ):
                assert isinstance(node, ScalarNode)
                splices.append((node.start_mark.index, node.end_mark.index, _quoted(node, text)))
    return splices


def _quoted(node: ScalarNode, text: str) -> str:
    """``text`` (a name, a JSON pointer) as the node was written: its quotes kept."""
    if node.style == '"':
        return f'"{text}"'
    if node.style == "'":
        return f"'{text}'"
    return text


def _container_of(base: Base, steps: list[str], display: str, at: Node) -> tuple[str, str]:
    """(pod site path, container name) of a JSON pointer's steps up to the container."""
    for site in locate.pod_sites(base.before):
        pointer = pointer_steps(site.path)
        if steps[: len(pointer)] == pointer and len(steps) == len(pointer) + 2:
            field_name, index = steps[len(pointer)], steps[len(pointer) + 1]
            listed = items(get(site.pod, field_name))
            if index.isdigit() and int(index) < len(listed):
                name = scalar(get(listed[int(index)], "name"))
                if name:
                    return site.path, name
    line, col = position(at)
    raise Blocked(display, line, col, "a JSON 6902 path that leads to no container of the base")
