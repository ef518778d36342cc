"""A compiled validator for the part of JSON Schema the bundled schemas use.

The strict schemas of ``schemas/kubernetes/`` use eight keywords: ``type``,
``properties``, ``additionalProperties``, ``items``, ``required``, ``enum``,
``oneOf`` and local ``$ref`` (plus annotations such as ``format`` and
``description``, which validate nothing without a format checker); the
configuration schema adds ``pattern``, the size bounds, ``minimum``,
``const``, ``propertyNames`` and ``if``/``then``/``else``. This module compiles
such a schema once into nested closures and reports what jsonschema's
validator for its draft (2020-12, or 7 for the configuration) reports: the
same errors, with the same keyword, path, instance, subschema and message, in
the same order for one path. A schema with any other keyword is refused
(``Unsupported``) and its caller uses jsonschema for it.

Why not jsonschema every time: importing it (with referencing, attrs and
rpds) costs a one-file pre-commit run about 100 ms, more than the whole of the
rest of its work, and it validates a Deployment several times slower than the
compiled closures. ``tests/k8s/test_schema_engine.py`` holds the two to the same
answers on generated objects and configurations and on every object of the
corpus.
"""

from __future__ import annotations

import datetime
import numbers
import re
from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)
if TYPE_CHECKING:
    from typing import Any

Path = tuple[str | int, ...]
if TYPE_CHECKING:
    _Check = Callable[[Any, Path, list["Violation"]], None]

# Annotations and containers of subschemas: they validate nothing themselves.
_IGNORED = frozenset(
    {
        "$schema",
        "$id",
        "$defs",
        "$comment",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "format",  # jsonschema checks formats only with a format checker; schemas gives none
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
# keyword -> the _Compiler method that builds its check
_KEYWORDS = {
    "type": "_k_type",
    "properties": "_k_properties",
    "additionalProperties": "_k_additional",
    "items": "_k_items",
    "required": "_k_required",
    "enum": "_k_enum",
    "oneOf": "_k_one_of",
    "$ref": "_k_ref",
    # used by the configuration schema (config.schema.json)
    "pattern": "_k_pattern",
    "minimum": "_k_minimum",
    "const": "_k_const",
    "propertyNames": "_k_property_names",
    "if": "_k_if",
    "then": "_k_companion",  # applied by "if"
    "else": "_k_companion",
}
# minLength, maxItems, ... -> the instances it applies to, whether it is a lower bound,
# and its messages
# (jsonschema's wording: the message for a bound of 1 or 0, and otherwise)
_SIZES: dict[str, tuple[Callable[[Any], bool], bool, tuple[str, str]]] = {
    "minLength": (lambda v: isinstance(v, str), True, ("should be non-empty", "is too short")),
    "maxLength": (lambda v: isinstance(v, str), False, ("is expected to be empty", "is too long")),
    "minItems": (
        lambda v: isinstance(v, (list, tuple)),
        True,
        ("should be non-empty", "is too short"),
    ),
    "maxItems": (
        lambda v: isinstance(v, (list, tuple)),
        False,
        ("is expected to be empty", "is too long"),
    ),
    "minProperties": (
        lambda v: isinstance(v, Mapping),
        True,
        ("should be non-empty", "does not have enough properties"),
    ),
}


class Unsupported(ValueError):
    """The schema uses a keyword this engine does not implement."""


class Violation:
    """One error, with the attributes of a jsonschema ``ValidationError`` that
    ``schemas`` reads (``absolute_path``, ``validator``, ``validator_value``,
    ``instance``, ``schema``, ``message``)."""

    __slots__ = ("absolute_path", "instance", "message", "schema", "validator", "validator_value")

    def __init__(
        self, path: Path, keyword: str, value: Any, instance: Any, schema: Any, message: str
    ) -> None:
        self.absolute_path = path
        self.validator = keyword
        self.validator_value = value
        self.instance = instance
        self.schema = schema
        self.message = message

    def __repr__(self) -> str:
        return f"<Violation {self.validator} at {self.absolute_path!r}: {self.message}>"


# The type checker of ``schemas``: any mapping is an object, a tuple is an array too,
# and a date is a string (YAML loaders turn unquoted timestamps into dates; the API
# server's YAML-to-JSON step keeps them as strings).
def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, Mapping),
    "array": lambda v: isinstance(v, (list, tuple)),
    "string": lambda v: isinstance(v, (str, datetime.date)),
    "integer": _is_integer,
    "number": lambda v: not isinstance(v, bool) and isinstance(v, numbers.Number),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def compile_schema(root: Any, lazy_refs: bool = False) -> Callable[[Any], list[Violation]]:
    """A function from an instance to its violations; ``Unsupported`` when ``root``
    uses a keyword outside the subset. A draft-07 schema (``$schema``) gets draft 7's
    rule that ``$ref`` ignores the keywords beside it.

    With ``lazy_refs`` the target of a ``$ref`` is compiled when an instance first
    reaches it: a run that checks one pod spec compiles the few definitions it uses,
    not the hundreds of the schema. ``Unsupported`` is then raised only for what is
    compiled up front, so it is for schemas known to be in the subset (the bundled
    ones: ``tests/k8s/test_schema_engine.py`` compiles each of them whole)."""
    draft7 = isinstance(root, Mapping) and "draft-07" in str(root.get("$schema", ""))
    compiler = _Compiler(root, draft7, lazy_refs)
    check = compiler.compile(root)

    def validate(instance: Any) -> list[Violation]:
        out: list[Violation] = []
        check(instance, (), out)
        return out

    return validate


class _Compiler:
    def __init__(self, root: Any, draft7: bool = False, lazy_refs: bool = False) -> None:
        self.root = root
        self.draft7 = draft7
        self.lazy_refs = lazy_refs
        self.refs: dict[str, _Check] = {}

    def compile(self, schema: Any) -> _Check:
        if schema is True:
            return _nothing
        if schema is False:

            def refuse(instance: Any, path: Path, out: list[Violation]) -> None:
                out.append(
                    Violation(
                        path,
                        "false",
                        False,
                        instance,
                        False,
                        f"False schema does not allow {instance!r}",
                    )
                )

            return refuse
        if not isinstance(schema, Mapping):
            raise Unsupported(f"a subschema must be an object or a boolean, not {schema!r}")
        if self.draft7 and "$ref" in schema:
            return self._k_ref(schema["$ref"], schema)
        built = [
            self._keyword(keyword, value, schema)
            for keyword, value in schema.items()
            if keyword not in _IGNORED
        ]
        checks = [c for c in built if c is not None]
        if not checks:
            return _nothing
        if len(checks) == 1:
            return checks[0]

        def all_of(instance: Any, path: Path, out: list[Violation]) -> None:
            for check in checks:
                check(instance, path, out)

        return all_of

    def _keyword(self, keyword: str, value: Any, schema: Mapping[str, Any]) -> _Check | None:
        if keyword in _SIZES:
            return self._k_size(keyword, value, schema)
        name = _KEYWORDS.get(keyword)
        if name is None:
            raise Unsupported(f"JSON Schema keyword {keyword!r}")
        result: _Check | None = getattr(self, name)(value, schema)
        return result

    # --- keywords --------------------------------------------------------------------

    def _k_type(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        names = [value] if isinstance(value, str) else list(value)
        try:
            tests = [_TYPES[n] for n in names]
        except KeyError as missing:
            raise Unsupported(f"type {missing}") from None
        shown = ", ".join(repr(n) for n in names)

        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            for test in tests:
                if test(instance):
                    return
            out.append(
                Violation(
                    path, "type", value, instance, schema, f"{instance!r} is not of type {shown}"
                )
            )

        return check

    def _k_properties(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        props = [(name, self.compile(sub)) for name, sub in value.items()]

        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            if not isinstance(instance, Mapping):
                return
            for name, sub in props:
                if name in instance:
                    sub(instance[name], (*path, name), out)

        return check

    def _k_additional(self, value: Any, schema: Mapping[str, Any]) -> _Check | None:
        if "patternProperties" in schema:
            raise Unsupported("JSON Schema keyword 'patternProperties'")
        known = frozenset(schema.get("properties") or ())
        if value is True:
            return None
        if value is False:

            def refuse(instance: Any, path: Path, out: list[Violation]) -> None:
                if not isinstance(instance, Mapping):
                    return
                extras = [k for k in instance if k not in known]
                if extras:
                    extras.sort(key=str)
                    verb = "was" if len(extras) == 1 else "were"
                    listed = ", ".join(repr(e) for e in extras)
                    out.append(
                        Violation(
                            path,
                            "additionalProperties",
                            False,
                            instance,
                            schema,
                            f"Additional properties are not allowed ({listed} {verb} unexpected)",
                        )
                    )

            return refuse
        sub = self.compile(value)

        def each(instance: Any, path: Path, out: list[Violation]) -> None:
            if not isinstance(instance, Mapping):
                return
            for key in instance:
                if key not in known:
                    sub(instance[key], (*path, key), out)

        return each

    def _k_items(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        if "prefixItems" in schema:
            raise Unsupported("JSON Schema keyword 'prefixItems'")
        sub = self.compile(value)

        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            if not isinstance(instance, (list, tuple)):
                return
            for index, item in enumerate(instance):
                sub(item, (*path, index), out)

        return check

    def _k_required(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        names = list(value)

        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            if not isinstance(instance, Mapping):
                return
            for name in names:
                if name not in instance:
                    out.append(
                        Violation(
                            path,
                            "required",
                            value,
                            instance,
                            schema,
                            f"{name!r} is a required property",
                        )
                    )

        return check

    def _k_enum(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        choices = list(value)

        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            for choice in choices:
                if _equal(choice, instance):
                    return
            out.append(
                Violation(
                    path, "enum", value, instance, schema, f"{instance!r} is not one of {value!r}"
                )
            )

        return check

    def _k_one_of(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        subs = [(sub, self.compile(sub)) for sub in value]

        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            valid = []
            for sub, run in subs:
                found: list[Violation] = []
                run(instance, path, found)
                if not found:
                    valid.append(sub)
            if not valid:
                out.append(
                    Violation(
                        path,
                        "oneOf",
                        value,
                        instance,
                        schema,
                        f"{instance!r} is not valid under any of the given schemas",
                    )
                )
            elif len(valid) > 1:
                ordered = [*valid[1:], valid[0]]  # jsonschema names the first valid one last
                reprs = ", ".join(repr(s) for s in ordered)
                out.append(
                    Violation(
                        path,
                        "oneOf",
                        value,
                        instance,
                        schema,
                        f"{instance!r} is valid under each of {reprs}",
                    )
                )

        return check

    def _k_ref(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        if not isinstance(value, str) or not value.startswith("#"):
            raise Unsupported(f"$ref {value!r} (only references inside the schema are)")
        refs = self.refs
        if self.lazy_refs:
            target = self._resolve(value)

            def first_use(instance: Any, path: Path, out: list[Violation]) -> None:
                compiled = refs.get(value)
                if compiled is None:  # nothing is followed while it compiles: no cycle
                    compiled = refs[value] = self.compile(target)
                compiled(instance, path, out)

            return first_use
        if value not in refs:
            refs[value] = _nothing  # while it compiles: a recursive schema refers to itself
            refs[value] = self.compile(self._resolve(value))

        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            refs[value](instance, path, out)

        return check

    def _k_pattern(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        regex = re.compile(value)

        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            if isinstance(instance, str) and not regex.search(instance):
                message = f"{instance!r} does not match {value!r}"
                out.append(Violation(path, "pattern", value, instance, schema, message))

        return check

    def _k_size(self, keyword: str, value: Any, schema: Mapping[str, Any]) -> _Check:
        applies, at_least, (edge, other) = _SIZES[keyword]
        message = edge if value == (1 if at_least else 0) else other

        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            if applies(instance) and (len(instance) < value if at_least else len(instance) > value):
                out.append(
                    Violation(path, keyword, value, instance, schema, f"{instance!r} {message}")
                )

        return check

    def _k_minimum(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            if _TYPES["number"](instance) and instance < value:
                message = f"{instance!r} is less than the minimum of {value!r}"
                out.append(Violation(path, "minimum", value, instance, schema, message))

        return check

    def _k_const(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            if not _equal(instance, value):
                out.append(
                    Violation(path, "const", value, instance, schema, f"{value!r} was expected")
                )

        return check

    def _k_property_names(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        sub = self.compile(value)

        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            if isinstance(instance, Mapping):
                for key in instance:
                    sub(key, path, out)  # errors about a key are at the mapping's path

        return check

    def _k_if(self, value: Any, schema: Mapping[str, Any]) -> _Check:
        test = self.compile(value)
        then = self.compile(schema["then"]) if "then" in schema else _nothing
        otherwise = self.compile(schema["else"]) if "else" in schema else _nothing

        def check(instance: Any, path: Path, out: list[Violation]) -> None:
            found: list[Violation] = []
            test(instance, path, found)
            (otherwise if found else then)(instance, path, out)

        return check

    def _k_companion(self, value: Any, schema: Mapping[str, Any]) -> None:
        return None  # "then" and "else" act through "if" (alone they do nothing)

    def _resolve(self, ref: str) -> Any:
        node = self.root
        for raw in ref[1:].lstrip("/").split("/") if ref != "#" else ():
            part = raw.replace("~1", "/").replace("~0", "~")
            try:
                node = node[int(part)] if isinstance(node, list) else node[part]
            except (KeyError, IndexError, ValueError, TypeError):
                raise Unsupported(f"$ref {ref!r} points at nothing") from None
        return node


def _nothing(instance: Any, path: Path, out: list[Violation]) -> None:
    return None


def _equal(one: Any, two: Any) -> bool:
    """JSON equality: ``True`` is not ``1``, in lists and mappings too (jsonschema's rule)."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, (list, tuple)) and isinstance(two, (list, tuple)):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return one.keys() == two.keys() and all(_equal(one[k], two[k]) for k in one)
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    return bool(one == two)
