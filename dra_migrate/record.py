"""The records a run builds: ``NamedTuple`` for those that never change, ``Record``
for the others (results, reports, plans).

A ``@dataclass`` is created by compiling its methods from source: about a
millisecond each on Python 3.11, and the module imports ``inspect`` (with ``ast``,
``dis`` and ``tokenize``), 10 to 20 ms of every run. ``typing.NamedTuple`` costs
about 0.3 ms a class: with ``from __future__ import annotations`` every field's
annotation is a string, and typing compiles each into a ``ForwardRef``. A run
creates some fifty. ``NamedTuple`` here builds the same class
(``collections.namedtuple`` with the annotations, defaults, docstring, methods and
properties of the class body: what ``typing.NamedTuple`` does) without that step,
in about 0.12 ms; type checkers see ``typing.NamedTuple``. ``Record`` classes list
their fields in ``__slots__``, set them in a plain ``__init__``, and get equality,
``repr`` and ``replace`` by field.
"""

from __future__ import annotations

import collections

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)
if TYPE_CHECKING:
    from typing import Any
    from typing import NamedTuple as NamedTuple
else:
    # what typing.NamedTupleMeta keeps for the class itself (3.11 to 3.14)
    _SPECIAL = frozenset(
        {"__module__", "__name__", "__annotations__", "__annotate__", "__annotate_func__"}
        | {"__annotations_cache__"}
    )
    _PROHIBITED = frozenset(
        {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults"}
        | {"_make", "_replace", "_asdict", "_source"}
    )

    def _deferred_annotations(namespace):
        try:
            import annotationlib
        except ImportError:  # before 3.14 a class body always has __annotations__
            return {}
        annotate = annotationlib.get_annotate_from_class_namespace(namespace)
        if annotate is None:
            return {}
        return annotationlib.call_annotate_function(annotate, annotationlib.Format.FORWARDREF)

    class _NamedTupleMeta(type):
        def __new__(mcls, name, bases, namespace):
            if not bases:  # NamedTuple itself
                return super().__new__(mcls, name, bases, namespace)
            annotations = namespace.get("__annotations__")
            if annotations is None:  # 3.14 without the __future__ import (PEP 649)
                annotations = _deferred_annotations(namespace)
            fields = list(annotations)
            defaults = []
            for field in fields:
                if field in namespace:
                    defaults.append(namespace[field])
                elif defaults:
                    raise TypeError(
                        f"Non-default namedtuple field {field} cannot follow default field"
                    )
            made = collections.namedtuple(
                name, fields, defaults=defaults, module=namespace["__module__"]
            )
            made.__annotations__ = made.__new__.__annotations__ = dict(annotations)
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                if key not in _SPECIAL and key not in fields:
                    setattr(made, key, value)
            return made

    class NamedTuple(metaclass=_NamedTupleMeta):
        """``typing.NamedTuple`` without compiling the annotations (see the module)."""


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
