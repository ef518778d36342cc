"""``Record``: the base of the mutable records a run builds (results, reports, plans).

A ``@dataclass`` is created by compiling its methods from source: about a
millisecond each on Python 3.11, and the module imports ``inspect`` (with ``ast``,
``dis`` and ``tokenize``), 10 to 20 ms of every run. The records that never change
are NamedTuples; the others list their fields in ``__slots__``, set them in a
plain ``__init__``, and get equality and ``repr`` by field from here.
"""

from __future__ import annotations

from typing import Any


class Record:
    """Fields in ``_fields`` (``__slots__ = _fields = (...)``, plus any cache slots
    kept out of comparisons); each is an argument of ``__init__`` by the same name."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]  # mutable: equal by value, so unhashable

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._fields)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes`` (``dataclasses.replace``)."""
        values = {name: getattr(self, name) for name in self._fields}
        values.update(changes)
        return type(self)(**values)
