"""cel-python's evaluator made to evaluate like Kubernetes: ``cel.bind``, the
comprehension macros, optional selection, commutative ``&&``/``||``, a runtime
cost budget, the ``device`` value of a :class:`Device`, and cel-python's errors
in cel-go's words. Imported with cel-python, on the first evaluation.
"""

from __future__ import annotations

import re
from typing import Any

from celpy import celtypes
from celpy.evaluation import Activation, CELEvalError, Evaluator

from dra_migrate.cel.devices import Device
from dra_migrate.cel.operators import err, kind
from dra_migrate.cel.problems import (
    COST_LIMIT,
    CelEvaluationError,
)
from dra_migrate.cel.runtime import FUNCTIONS, LIBRARY_FUNCTIONS, NAMESPACED, SET_FUNCTIONS
from dra_migrate.cel.tree import (
    _ident_name,
    _macro_vars,
    _namespace_of,
)
from dra_migrate.cel.values import (
    InvalidVersion,
    OptionalValue,
    SemVer,
    parse_quantity,
)


class K8sEvaluator(Evaluator):
    """cel-python's evaluator plus cel.bind (cel-go ext.Bindings) and a cost budget.

    ``budget`` is shared with every nested evaluator (macros, cel.bind): each
    visited syntax node costs one unit and each string or list built by ``+``
    its length, so a runaway comprehension or a doubling string stops with
    :class:`_CostExceeded` instead of hanging or exhausting memory.
    """

    budget: list[int]

    def sub_evaluator(self, ast: Any) -> Any:
        nested = K8sEvaluator(ast, activation=self.activation)
        nested.budget = self.budget
        return nested

    def visit_children(self, tree: Any) -> Any:
        budget = self.budget
        budget[0] -= 1
        if budget[0] < 0:
            raise _CostExceeded
        return super().visit_children(tree)

    def addition(self, tree: Any) -> Any:
        result = super().addition(tree)
        if isinstance(result, (str, bytes, list)):
            self.budget[0] -= len(result)
            if self.budget[0] < 0:
                raise _CostExceeded
        return result

    def operand(self, node: Any) -> Any:
        """A sub-expression's value; a raised CEL error becomes an error value."""
        try:
            return self.visit(node)
        except CELEvalError as exc:
            return exc

    def logical(self, tree: Any, absorbing: bool) -> Any:
        """``&&`` / ``||`` as cel-go has them: commutative, errors are values.

        ``false && x`` is false and ``true || x`` true whatever ``x`` is (an error
        included); otherwise an error operand is the result, the left one first.
        """
        symbol = "_||_" if absorbing else "_&&_"
        values = []
        for child in tree.children:
            value = self.operand(child)
            if isinstance(value, celtypes.BoolType) and bool(value) is absorbing:
                return value
            values.append(value)
        for value in values:
            if not isinstance(value, (celtypes.BoolType, CELEvalError)):
                return err(f"no such overload: {symbol}")
        for value in values:
            if isinstance(value, CELEvalError):
                return value
        return celtypes.BoolType(not absorbing)

    def conditionalor(self, tree: Any) -> Any:
        if len(tree.children) != 2:
            return super().conditionalor(tree)
        return self.logical(tree, True)

    def conditionaland(self, tree: Any) -> Any:
        if len(tree.children) != 2:
            return super().conditionaland(tree)
        return self.logical(tree, False)

    def expr(self, tree: Any) -> Any:
        if len(tree.children) != 3:
            return super().expr(tree)
        condition = self.operand(tree.children[0])
        if isinstance(condition, CELEvalError):
            return condition
        if not isinstance(condition, celtypes.BoolType):
            return err("no such overload: _?_:_")
        return self.visit(tree.children[1] if condition else tree.children[2])

    def member_dot_arg(self, tree: Any) -> Any:
        receiver, method_token = tree.children[0], tree.children[1]
        method = str(method_token.value)
        args = list(tree.children[2].children) if len(tree.children) > 2 else []
        namespace = _namespace_of(receiver)
        if namespace == "cel" and method == "bind":
            return self.bind(args)
        if namespace is not None and f"{namespace}.{method}" in NAMESPACED:
            values = [self.operand(a) for a in args]
            for v in values:
                if isinstance(v, CELEvalError):
                    return v
            try:
                return NAMESPACED[f"{namespace}.{method}"](*values)
            except TypeError:
                return err(f"no such overload: {namespace}.{method}")
        if namespace == "sets" and method in SET_FUNCTIONS:
            values = [self.operand(a) for a in args]
            for v in values:
                if isinstance(v, CELEvalError):
                    return v
            if len(values) != 2 or any(kind(v) != "list" for v in values):
                return err(f"no such overload: sets.{method}")
            return SET_FUNCTIONS[method](values[0], values[1])
        n_vars = _macro_vars(method, args)
        if n_vars:
            names = [str(_ident_name(a)) for a in args[:n_vars]]
            return self.comprehension(receiver, method, args, names)
        if method == "min" and not args:  # cel-python reads min() as a macro
            return LIBRARY_FUNCTIONS["min"](self.operand(receiver))
        return super().member_dot_arg(tree)

    def bind(self, args: list[Any]) -> Any:
        name = _ident_name(args[0]) if len(args) == 3 else None
        if name is None:
            return err("cel.bind() takes a variable name, a value and an expression")
        value = self.visit(args[1])
        if isinstance(value, CELEvalError):
            return value
        return self.nested(args[2], {name: value})

    def nested(self, node: Any, variables: dict[str, Any]) -> Any:
        """``node`` evaluated with ``variables`` bound; an error is a value."""
        try:
            return self.sub_evaluator(node).evaluate(variables)
        except CELEvalError as exc:
            return exc

    def comprehension(self, receiver: Any, method: str, args: list[Any], names: list[str]) -> Any:
        """The comprehension macros, one- and two-variable (cel-go ext.TwoVarComprehensions).

        ``all``/``exists`` are commutative like ``&&``/``||``: a true (false) element
        decides, otherwise an error is the result. ``optMap``/``optFlatMap`` map an
        optional value.
        """
        target = self.operand(receiver)
        if isinstance(target, CELEvalError):
            return target
        if method in ("optMap", "optFlatMap"):
            if not isinstance(target, OptionalValue) or len(args) != 2:
                return err(f"no such overload: {kind(target)}.{method}()")
            if not target.present:
                return target
            mapped = self.nested(args[1], {names[0]: target.value})
            if method == "optMap" or isinstance(mapped, CELEvalError):
                return mapped if isinstance(mapped, CELEvalError) else OptionalValue(mapped)
            return (
                mapped if isinstance(mapped, OptionalValue) else err("optFlatMap: not an optional")
            )
        if kind(target) not in ("list", "map"):
            return err(f"got '{kind(target)}', expected iterable type")
        two = len(names) == 2
        if two:
            pairs = list(target.items()) if kind(target) == "map" else list(enumerate(target))
            elements = [{names[0]: self.key_value(k), names[1]: v} for k, v in pairs]
        else:
            elements = [{names[0]: x} for x in target]
        body = args[-1]
        condition = args[-2] if len(args) == (4 if two else 3) else None
        if method in ("all", "exists"):
            decisive = method == "exists"
            error = None
            for variables in elements:
                v = self.nested(body, variables)
                if isinstance(v, CELEvalError):
                    error = error or v
                elif not isinstance(v, celtypes.BoolType):
                    return err(f"no such overload: {method}() of a {kind(v)} predicate")
                elif bool(v) is decisive:
                    return celtypes.BoolType(decisive)
            return error or celtypes.BoolType(not decisive)
        if method in ("exists_one", "existsOne"):
            count = 0
            for variables in elements:
                v = self.nested(body, variables)
                if isinstance(v, CELEvalError):
                    return v
                if not isinstance(v, celtypes.BoolType):
                    return err(f"no such overload: {method}() of a {kind(v)} predicate")
                count += bool(v)
            return celtypes.BoolType(count == 1)
        results: list[tuple[dict[str, Any], Any]] = []
        for variables in elements:
            if condition is not None or method == "filter":
                keep = self.nested(condition if condition is not None else body, variables)
                if isinstance(keep, CELEvalError):
                    return keep
                if not isinstance(keep, celtypes.BoolType):
                    return err(f"no such overload: {method}() of a {kind(keep)} filter")
                if not keep:
                    continue
                if method == "filter":
                    results.append((variables, variables[names[0]]))
                    continue
            v = self.nested(body, variables)
            if isinstance(v, CELEvalError):
                return v
            results.append((variables, v))
        if method in ("map", "filter", "transformList"):
            return celtypes.ListType([v for _, v in results])
        if method == "transformMap":
            return celtypes.MapType({variables[names[0]]: v for variables, v in results})
        merged: dict[Any, Any] = {}
        for _, entry in results:  # transformMapEntry
            if kind(entry) != "map":
                return err(f"transformMapEntry: the expression must give a map, not {kind(entry)}")
            for k, v in entry.items():
                if k in merged:
                    return err(f"insert failed: key {k} already exists")
                merged[k] = v
        return celtypes.MapType(merged)

    @staticmethod
    def key_value(k: Any) -> Any:
        return celtypes.IntType(k) if type(k) is int else k

    def member_dot_opt(self, tree: Any) -> Any:
        """``x.?name``: optional.of(x.name) when x has the key, else optional.none()."""
        return self.optional_select(tree.children[0], celtypes.StringType(tree.children[1].value))

    def member_index_opt(self, tree: Any) -> Any:
        key = self.operand(tree.children[1])
        if isinstance(key, CELEvalError):
            return key
        return self.optional_select(tree.children[0], key)

    def optional_select(self, receiver_node: Any, key: Any) -> Any:
        receiver = self.operand(receiver_node)
        if isinstance(receiver, CELEvalError):
            return receiver
        if isinstance(receiver, OptionalValue):
            if not receiver.present:
                return receiver
            receiver = receiver.value
        if isinstance(receiver, DefaultMap):  # Kubernetes' device maps find every key
            return OptionalValue(receiver[key])
        if kind(receiver) == "map":
            return OptionalValue(receiver[key]) if key in receiver else OptionalValue()
        if kind(receiver) == "list" and kind(key) == "int":
            return (
                OptionalValue(receiver[int(key)])
                if 0 <= int(key) < len(receiver)
                else OptionalValue()
            )
        return err(f"no such overload: optional selection on {kind(receiver)}")

    def member_dot(self, tree: Any) -> Any:
        """Field selection; on an optional value it stays optional (cel-go)."""
        receiver = self.operand(tree.children[0])
        if isinstance(receiver, OptionalValue):
            if not receiver.present:
                return receiver
            inner = receiver.value
            name = str(tree.children[1].value)
            if kind(inner) != "map":
                return err(f"no such overload: field selection on {kind(inner)}")
            if name not in inner and not isinstance(inner, DefaultMap):
                return err(f"no such key: {name}")
            return OptionalValue(inner[name])
        if isinstance(receiver, CELEvalError):
            return receiver
        if isinstance(receiver, celtypes.MapType):
            name = str(tree.children[1].value)
            try:
                return receiver[name]
            except KeyError:
                return err(f"no such member in mapping: {name!r}")
        return super().member_dot(tree)


class DefaultMap(celtypes.MapType):
    """A map whose missing keys read as an empty map (Kubernetes' unknown-domain rule)."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType({})


def activation() -> Any:
    """A fresh activation with the Kubernetes functions (one an evaluation)."""
    return Activation(package=None, annotations={}, functions=FUNCTIONS)


def _device_value(device: Device) -> Any:
    """The ``device`` variable of ``device``, as cel-python values; raises
    :class:`CelEvaluationError` for a value Kubernetes cannot convert (the device fails)."""

    def value(domain: str, name: str, v: Any) -> Any:
        if isinstance(v, bool):
            return celtypes.BoolType(v)
        if isinstance(v, int):
            return celtypes.IntType(v)
        if isinstance(v, str):
            return celtypes.StringType(v)
        if isinstance(v, SemVer):
            return v
        if isinstance(v, InvalidVersion):
            raise CelEvaluationError(
                f"attribute {domain}/{name}: parse semantic version: {v.error}"
            )
        if isinstance(v, list):
            return celtypes.ListType([value(domain, name, item) for item in v])
        raise CelEvaluationError(f"attribute {domain}/{name}: unsupported attribute value {v!r}")

    attributes = DefaultMap(
        {
            celtypes.StringType(domain): celtypes.MapType(
                {celtypes.StringType(name): value(domain, name, v) for name, v in names.items()}
            )
            for domain, names in device.attributes.items()
        }
    )
    capacity_maps: dict[Any, Any] = {}
    for domain, names in device.capacity.items():
        inner: dict[Any, Any] = {}
        for name, text in names.items():
            try:
                inner[celtypes.StringType(name)] = parse_quantity(str(text))
            except ValueError as exc:
                raise CelEvaluationError(f"capacity {domain}/{name}: {exc}") from None
        capacity_maps[celtypes.StringType(domain)] = celtypes.MapType(inner)
    return celtypes.MapType(
        {
            celtypes.StringType("driver"): celtypes.StringType(device.driver),
            celtypes.StringType("attributes"): attributes,
            celtypes.StringType("capacity"): DefaultMap(capacity_maps),
        }
    )


_UNDECLARED_RE = re.compile(r"undeclared reference to '?([^' ]+)'?")


def _describe(error: Exception) -> str:
    args: tuple[Any, ...] = tuple(getattr(error, "args", ()))
    message = str(args[0]) if args else str(error)
    m = _UNDECLARED_RE.search(message)
    if m:
        return f"undeclared reference to '{m.group(1)}'"
    m = re.match(r"no such member in mapping: '(.*)'", message)
    if m:
        return f"no such key: {m.group(1)}"
    if message == "no such key" and len(args) > 2 and args[2]:
        return f"no such key: {args[2][0]}"
    if message.startswith("found no matching overload"):
        return "no such overload: " + message.split(" for ", 1)[-1].split(" applied", 1)[0].strip(
            "'"
        )
    return message


class _CostExceeded(Exception):
    """The runtime cost budget of one evaluation is spent."""


# Syntax nodes a cel-python evaluation may visit: cel-go's runtime limit is
# COST_LIMIT units, and one cel-go unit is several Lark nodes (the wrappers).
RUNTIME_NODE_BUDGET = 10 * COST_LIMIT


def evaluate_tree(tree: Any, device: Device) -> bool:
    """``tree`` evaluated on ``device`` by cel-python; raises :class:`CelEvaluationError`."""
    device_value = _device_value(device)
    evaluator = K8sEvaluator(ast=tree, activation=activation())
    evaluator.budget = [RUNTIME_NODE_BUDGET]
    try:
        result = evaluator.evaluate({"device": device_value})
    except _CostExceeded:
        raise CelEvaluationError(
            "actual cost limit exceeded: the evaluation is more expensive than Kubernetes allows"
        ) from None
    except CELEvalError as exc:
        raise CelEvaluationError(_describe(exc)) from None
    except RecursionError:
        raise CelEvaluationError("expression nested too deeply") from None
    except MemoryError:
        raise CelEvaluationError("actual cost limit exceeded: out of memory") from None
    except Exception as exc:  # cel-python's own failures (e.g. IndexError on `has()`)
        raise CelEvaluationError(f"cannot evaluate: {type(exc).__name__}: {exc}") from None
    if not isinstance(result, celtypes.BoolType):
        raise CelEvaluationError(f"a selector must evaluate to bool, not {type(result).__name__}")
    return bool(result)
