"""``record.NamedTuple`` behaves as ``typing.NamedTuple``, for the packages that still
use it until every record is a dataclass (the records of the process pool are tested
in tests/pipeline/test_records.py)."""

from __future__ import annotations

import typing

import pytest

from dra_migrate import record


def _pair(base: type) -> type:
    class Point(base):  # type: ignore[misc,valid-type]
        """A point."""

        x: int
        y: int = 0
        label: str = "p"

        @property
        def norm(self) -> int:
            return abs(self.x) + abs(self.y)

        def moved(self, dx: int) -> Point:
            return self._replace(x=self.x + dx)

    return Point


FAST, TYPED = _pair(record.NamedTuple), _pair(typing.NamedTuple)


def test_named_tuple_builds_what_typing_builds() -> None:
    for cls in (FAST, TYPED):
        p = cls(3, -4)
        assert p == (3, -4, "p") and p.norm == 7 and p.moved(1).x == 4
        assert cls._fields == ("x", "y", "label")
        assert cls._field_defaults == {"y": 0, "label": "p"}
        assert cls.__doc__ == "A point." and cls.__name__ == "Point"
        assert set(cls.__annotations__) == {"x", "y", "label"}
        assert isinstance(p, tuple) and repr(p) == "Point(x=3, y=-4, label='p')"
    assert FAST.__qualname__ == TYPED.__qualname__
    with pytest.raises(TypeError):
        FAST()  # x has no default


def test_named_tuple_of_a_module_without_string_annotations() -> None:
    # evaluated annotations (no __future__ import; deferred ones on Python 3.14)
    space: dict[str, object] = {}
    source = (
        "from dra_migrate.record import NamedTuple\n"
        "class P(NamedTuple):\n    x: int\n    y: 'list[str]' = []\n"
    )
    exec(compile(source, "<no-future>", "exec"), space)
    made = space["P"]
    assert made._fields == ("x", "y")  # type: ignore[attr-defined]
    assert made(1) == (1, []) and made.__name__ == "P"  # type: ignore[operator,attr-defined]


def test_named_tuple_refuses_what_typing_refuses() -> None:
    with pytest.raises(TypeError, match="cannot follow default field"):

        class Bad(record.NamedTuple):
            a: int = 1
            b: int

    with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _replace"):

        class Worse(record.NamedTuple):
            a: int

            def _replace(self) -> None: ...
