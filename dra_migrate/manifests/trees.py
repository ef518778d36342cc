"""Stage 2, load: reading composed node trees without constructing Python objects:
mapping entries and lookups (merge keys resolved as Kubernetes resolves them),
sequences, scalars, positions, paths, where a node's own text ends, and a tree's
value as Kubernetes reads it."""

from __future__ import annotations

import re
from collections.abc import Iterator

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from dra_migrate.manifests.scalars import MERGE, scalar_value

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

    from yaml.nodes import Node


def walk(root: Node) -> Iterator[Node]:
    """Every node of a tree once (an aliased node is shared, not repeated)."""
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, MappingNode):
            for key, value in reversed(node.value):
                stack.extend((value, key))
        elif isinstance(node, SequenceNode):
            stack.extend(reversed(node.value))


def text_scalars(root: Node) -> list[ScalarNode]:
    """The scalars of a tree whose value spans lines or holds a brace (where a manifest
    held in a string can be), each once, in ``walk``'s order. One loop and no
    generator: scan looks through every node of every workload it parses for them."""
    found: list[ScalarNode] = []
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        ident = id(node)
        if ident in seen:
            continue
        seen.add(ident)
        if isinstance(node, ScalarNode):
            value = node.value
            if "\n" in value or "{" in value:
                found.append(node)
        elif isinstance(node, MappingNode):
            for key, value in reversed(node.value):
                stack.append(value)
                stack.append(key)
        elif isinstance(node, SequenceNode):
            stack.extend(reversed(node.value))
    return found


_ALIAS_TOKEN = re.compile(r"\*[^\s,\[\]{}]+")


def _empty(node: Node) -> bool:
    """A value written as nothing at all (``key:``): its marks lie at the next token."""
    return isinstance(node, ScalarNode) and node.value == "" and node.style is None


def entry_end(key: Node, value: Node, text: str) -> int:
    """Offset just after the last character of a mapping entry, in this text.

    An alias value (``requests: *req``) is a node that lives at its anchor,
    earlier in the file: the entry ends with the alias token. An empty value
    ends with its key.
    """
    key_end: int = key.end_mark.index
    if value.start_mark.index < key_end:
        alias = _ALIAS_TOKEN.search(text, key_end)
        return alias.end() if alias else key_end
    if _empty(value):
        return key_end
    return content_end(value, text)


def content_end(node: Node, text: str) -> int:
    """Offset just after the last character of the node's own content.

    A block collection's end mark lies at the next token, after blank lines
    and comments that belong to whatever follows; the last leaf's end does not.
    """
    if isinstance(node, MappingNode) and node.value and node.flow_style is not True:
        key, value = node.value[-1]
        return entry_end(key, value, text)
    if isinstance(node, SequenceNode) and node.value and node.flow_style is not True:
        item = node.value[-1]
        bound = content_end(node.value[-2], text) if len(node.value) > 1 else node.start_mark.index
        if item.start_mark.index < bound:  # an alias item (- *name)
            alias = _ALIAS_TOKEN.search(text, bound)
            return alias.end() if alias else bound
        return content_end(item, text)
    end: int = node.end_mark.index
    return end


def is_seq(node: Node | None) -> bool:
    return isinstance(node, SequenceNode)


def is_flow(node: Node) -> bool:
    return bool(getattr(node, "flow_style", False))


def scalar(node: Node | None) -> str | None:
    if isinstance(node, ScalarNode):
        value: str = node.value
        return value
    return None


def entries(node: Node | None) -> Iterator[tuple[str, Node, Node]]:
    """(key text, key node, value node) of a mapping node; other keys skipped.

    Merge keys (``<<: *base``) are resolved as Kubernetes' reader (go-yaml v2)
    resolves them: the merged entries take the merge key's place, later keys
    override earlier ones, and of a merged list the earlier mappings win.
    """
    if not isinstance(node, MappingNode):
        return
    if not any(k.tag == MERGE for k, _v in node.value):
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                yield key.value, key, value
        return
    yield from _merged(node).values()


def _merged(node: MappingNode) -> dict[str, tuple[str, Node, Node]]:
    out: dict[str, tuple[str, Node, Node]] = {}
    for key, value in node.value:
        if key.tag == MERGE:
            sources = list(reversed(value.value)) if isinstance(value, SequenceNode) else [value]
            for merged in sources:
                out.update((name, (name, k, v)) for name, k, v in entries(merged))
        elif isinstance(key, ScalarNode):
            out[key.value] = (key.value, key, value)
    return out


def get(node: Node | None, key: str) -> Node | None:
    """The value of ``key`` in a mapping node (merge keys resolved as ``entries`` does)."""
    if not isinstance(node, MappingNode):
        return None
    found = None
    for k, v in node.value:  # one pass, no generator: the hottest lookup of a run
        if k.tag == MERGE:
            hit = _merged(node).get(key)
            return hit[2] if hit is not None else None
        if found is None and k.value == key and isinstance(k, ScalarNode):
            found = v
    return found


def get_path(node: Node | None, *keys: str) -> Node | None:
    for key in keys:
        node = get(node, key)
        if node is None:
            return None
    return node


def has_merge(node: Node | None) -> bool:
    return isinstance(node, MappingNode) and any(k.tag == MERGE for k, _ in node.value)


def items(node: Node | None) -> list[Node]:
    return list(node.value) if isinstance(node, SequenceNode) else []


def to_python(node: Node | None) -> Any:
    """A plain Python value (strings for scalars; enough for matching rules)."""
    if isinstance(node, MappingNode):
        return {name: to_python(v) for name, _k, v in entries(node)}
    if isinstance(node, SequenceNode):
        return [to_python(v) for v in node.value]
    if isinstance(node, ScalarNode):
        return node.value
    return None


def position(node: Node) -> tuple[int, int]:
    mark = node.start_mark
    return mark.line + 1, mark.column + 1


def to_data(node: Node | None) -> Any:
    """The value as Kubernetes reads it (sigs.k8s.io/yaml, go-yaml v2's YAML 1.1
    resolution: ``010`` is 8, ``0x2`` is 2, ``1_0`` is 10, ``yes`` is true; merge
    keys resolved): what JSON Schemas need. Unknown tags keep the text."""
    if isinstance(node, MappingNode):
        return {name: to_data(v) for name, _k, v in entries(node)}
    if isinstance(node, SequenceNode):
        return [to_data(v) for v in node.value]
    if not isinstance(node, ScalarNode):
        return None
    return scalar_value(node)


def node_at(root: Node, path: tuple[str | int, ...]) -> Node:
    """The deepest node along ``path`` (a key's node when the key has no value)."""
    node = root
    for step in path:
        if isinstance(step, int) and isinstance(node, SequenceNode):
            if step >= len(node.value):
                break
            node = node.value[step]
            continue
        for key, _key_node, value in entries(node):
            if key == step:
                node = value
                break
        else:
            break
    return node


def key_at(root: Node, path: tuple[str | int, ...]) -> Node:
    """The key node of the last step of ``path`` when it is a mapping key; else the node."""
    if path and isinstance(path[-1], str):
        parent = node_at(root, path[:-1])
        for key, key_node, _value in entries(parent):
            if key == path[-1]:
                return key_node
    return node_at(root, path)
