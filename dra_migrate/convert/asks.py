"""What a pod spec asks for, as the plan reads it: one extended resource of one
container, with the mapping's choice for it (``plan.py`` makes them, the controller
rules of ``controllers.py`` read them)."""

from __future__ import annotations

from dataclasses import dataclass

from yaml.nodes import Node

from dra_migrate.convert.mapping import Choice
from dra_migrate.manifests.locate import Container


@dataclass(frozen=True, slots=True)
class Ask:
    """One extended resource asked for by one container."""

    container: Container
    resource: str
    count: int
    choice: Choice
    key: Node  # the key node in limits, where findings point
