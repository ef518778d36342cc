"""The edit operations the plan stage decides and the edit stage applies, as data.

``plan.py`` (and the rules of ``controllers.py``) name the nodes to change and the
objects to add with these; ``edit.py`` turns them into text splices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from yaml.nodes import MappingNode, Node, SequenceNode

from dra_migrate.manifests.trees import entries, get

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

    from dra_migrate.manifests.locate import Workload


@dataclass(frozen=True, slots=True)
class RemoveEntry:
    """Delete ``key`` (a key node) and its value from ``mapping``."""

    mapping: MappingNode
    key: Node


# The entries (mapping, key, value) an added item replaces: their line comments
# move to the item's first line (a comment on ``nvidia.com/gpu: 1`` follows
# the claim reference that replaces it).
Replaced = tuple[tuple[MappingNode, Node, Node], ...]


@dataclass(frozen=True, slots=True)
class AppendEntry:
    """Add ``key: value`` at the end of ``mapping``."""

    mapping: MappingNode
    key: str
    value: Any
    replaces: Replaced = ()


@dataclass(frozen=True, slots=True)
class AppendItems:
    """Add items at the end of ``sequence``."""

    sequence: SequenceNode
    values: tuple[Any, ...]
    replaces: Replaced = ()


@dataclass(frozen=True, slots=True)
class AddObject:
    """Add a generated object after ``workload``'s document (or to its List)."""

    workload: Workload
    obj: Mapping[str, Any]
    comment: str
    # where a count of ``obj`` sits (its keys and indices), and the removed entries that
    # asked for it: their line comments move onto that count (``# 8 GPUs, adjust`` on
    # ``nvidia.com/gpu: 8`` stays with the 8), not onto the claim reference
    counts: tuple[tuple[tuple[str | int, ...], Replaced], ...] = ()


Edit = RemoveEntry | AppendEntry | AppendItems | AddObject


def add_items(
    mapping: MappingNode, key: str, values: tuple[Any, ...], replaces: Replaced = ()
) -> list[Edit]:
    """Append to the list at ``key``, creating it; an empty ``key:`` is replaced."""
    existing = get(mapping, key)
    if isinstance(existing, SequenceNode):
        return [AppendItems(existing, values, replaces)]
    edits: list[Edit] = [RemoveEntry(mapping, k) for name, k, _v in entries(mapping) if name == key]
    return [*edits, AppendEntry(mapping, key, list(values), replaces)]
