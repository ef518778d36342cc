"""What a pod spec asks for, as the plan reads it: one extended resource of one
container, with the mapping's choice for it (``plan.py`` makes them, the controller
rules of ``controllers.py`` read them)."""

from __future__ import annotations

from yaml.nodes import Node

from dra_migrate.convert.mapping import Choice
from dra_migrate.manifests.locate import Container
from dra_migrate.record import Record


class Ask(Record):
    """One extended resource asked for by one container."""

    __slots__ = _fields = ("container", "resource", "count", "choice", "key")

    def __init__(
        self,
        container: Container,
        resource: str,
        count: int,
        choice: Choice,
        key: Node,  # the key node in limits, where findings point
    ) -> None:
        self.container = container
        self.resource = resource
        self.count = count
        self.choice = choice
        self.key = key
