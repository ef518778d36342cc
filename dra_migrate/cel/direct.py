"""The direct path: the common shapes of selectors compiled to Python closures that
read a :class:`Device` directly, falling back to cel-python for anything they do
not model exactly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dra_migrate.cel.devices import Device
from dra_migrate.cel.environment import (
    _COMPARE_OPS,
    _NAMESPACES,
    _NUMERIC,
)
from dra_migrate.cel.parse import (
    _decode_string,
    _int_literal,
)
from dra_migrate.cel.tree import (
    _DEVICE_MAPS,
    _device_path,
    _ident_name,
    _namespace_of,
    _string_literal,
    _unwrap,
)
from dra_migrate.cel.values import (
    InvalidVersion,
    Quantity,
    SemVer,
    _regex,
    parse_quantity,
)
from dra_migrate.k8s.names import INT64_MAX, INT64_MIN

# --------------------------------------------------------------------------
# the direct path: selectors compiled to Python closures
#
# cel-python walks the syntax tree for every device, about 0.7 ms a device,
# and building the device's CEL value costs a fifth of that again. Selectors
# that read values unique to each device (a uuid, a PCI bus ID) cannot share
# cached results, so a fleet of 10,000 GPUs cost seconds. The common shapes
# (fixed device paths, literals, comparisons, the logical operators, string
# tests, has(), semver/quantity comparisons) are compiled once into closures
# that read the Device directly. Anything else, and any value or error the
# closures do not model exactly, falls back to cel-python for that device, so
# both paths give the same answer (tests/cel/test_cel.py checks it on random
# selectors).


class _Unsupported(Exception):
    """A construct the direct path does not compile: use cel-python."""


class _Fallback(Exception):
    """A value or error the direct path does not model: evaluate with cel-python."""


@dataclass(frozen=True, slots=True)
class _Err:
    """A CEL error value (errors are values until they reach the top, as in cel-go)."""

    message: str


_Bindings = dict[str, Any]  # comprehension and cel.bind variables
_Fn = Callable[[Device, _Bindings], Any]


@functools.lru_cache(maxsize=4096)
def _capacity_quantity(text: str) -> Quantity | None:
    try:
        return parse_quantity(text)
    except ValueError:
        return None


def _device_shape(device: Device) -> str:
    """``plain`` when every value is one the direct path models exactly; ``broken``
    when a value fails the whole device (an invalid version, an unparsable
    capacity), as Kubernetes fails it; ``other`` (list attributes) otherwise."""
    shape = "plain"
    for caps in device.capacity.values():
        for text in caps.values():
            if _capacity_quantity(str(text)) is None:
                return "broken"
    for names in device.attributes.values():
        for v in names.values():
            t = type(v)
            if t is InvalidVersion:
                return "broken"
            if t not in (str, int, bool, SemVer):
                shape = "other"
    return shape


def _plain_kind(v: Any) -> str:
    t = type(v)
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is float:
        return "double"
    if t is str:
        return "string"
    if t is list:
        return "list"
    raise _Fallback


def _plain_equals(a: Any, b: Any) -> bool:
    """cel-go's ``a == b`` for the values the direct path has."""
    if isinstance(a, (SemVer, Quantity)):
        if type(a) is type(b):
            return bool(a == b)
        raise _Fallback  # no such overload: the slow path words the error
    if isinstance(b, (SemVer, Quantity)):
        return False
    ka, kb = _plain_kind(a), _plain_kind(b)
    if ka in _NUMERIC and kb in _NUMERIC:
        return bool(a == b)  # Python compares int and float exactly, NaN unequal
    if ka != kb:
        return False
    if ka == "list":
        return len(a) == len(b) and all(_plain_equals(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


_EMPTY_MAP: dict[str, Any] = {}

_ORDER_TESTS: dict[str, Callable[[int], bool]] = {
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
}


def _strict(fns: list[_Fn], op: Callable[..., Any]) -> _Fn:
    """A call of ``op`` on the operands' values; an operand's error is the result.

    ``op`` raises :class:`_Fallback` for operand types it does not model.
    """
    if len(fns) == 1:
        (only,) = fns

        def unary(d: Device, env: _Bindings) -> Any:
            v = only(d, env)
            return v if isinstance(v, _Err) else op(v)

        return unary
    first, second = fns

    def binary(d: Device, env: _Bindings) -> Any:
        a = first(d, env)
        if isinstance(a, _Err):
            return a
        b = second(d, env)
        return b if isinstance(b, _Err) else op(a, b)

    return binary


def _need(value: bool) -> None:
    if not value:
        raise _Fallback


def _not(v: Any) -> bool:
    _need(type(v) is bool)
    return not v


def _ordering(test: Callable[[int], bool]) -> Callable[[Any, Any], bool]:
    def compare(a: Any, b: Any) -> bool:
        ka, kb = _plain_kind(a), _plain_kind(b)
        if ka in _NUMERIC and kb in _NUMERIC:
            if a != a or b != b:  # NaN
                return False
        else:
            _need(ka == kb and ka in ("string", "bool"))
        return test((a > b) - (a < b))

    return compare


def _string_test(test: Callable[[str, str], bool]) -> Callable[[Any, Any], bool]:
    def f(s: Any, a: Any) -> bool:
        _need(type(s) is str and type(a) is str)
        return test(s, a)

    return f


def _typed_compare(result: Callable[[int], Any]) -> Callable[[Any, Any], Any]:
    def f(a: Any, b: Any) -> Any:
        if isinstance(a, SemVer) and isinstance(b, SemVer):
            return result(a.compare(b))
        if isinstance(a, Quantity) and isinstance(b, Quantity):
            return result(a.compare(b))
        raise _Fallback

    return f


_STRING_TESTS: dict[str, Callable[[str, str], bool]] = {
    "startsWith": str.startswith,
    "endsWith": str.endswith,
    "contains": str.__contains__,
}


def _ascii_case(offset: int, low: str, high: str) -> Callable[[Any], str]:
    """lowerAscii/upperAscii: only ASCII letters change, as in cel-go."""

    def f(s: Any) -> str:
        _need(type(s) is str)
        return "".join(chr(ord(c) + offset) if low <= c <= high else c for c in s)

    return f


def _size(v: Any) -> int:
    _need(type(v) in (str, list, dict))
    return len(v)


_STRING_FUNCTIONS_DIRECT: dict[str, Callable[[Any], Any]] = {
    "lowerAscii": _ascii_case(32, "A", "Z"),
    "upperAscii": _ascii_case(-32, "a", "z"),
    "size": _size,
}
_TYPED_COMPARES: dict[str, Callable[[int], Any]] = {
    "compareTo": lambda c: c,
    "isGreaterThan": lambda c: c > 0,
    "isLessThan": lambda c: c < 0,
}


class _DirectCompiler:
    """Compile a Lark CEL tree into a closure ``(device, variables) -> value | _Err``."""

    def __init__(self) -> None:
        self.scope: set[str] = set()  # variables bound by comprehensions and cel.bind

    def compile(self, node: Any) -> _Fn:
        if not hasattr(node, "data"):
            raise _Unsupported
        path = _device_path(node)
        if path is not None:
            return self.read(path)
        method = getattr(self, "c_" + str(node.data), None)
        if method is None:
            raise _Unsupported
        fn: _Fn = method(node)
        return fn

    def single(self, node: Any) -> _Fn:
        if len(node.children) != 1:
            raise _Unsupported
        return self.compile(node.children[0])

    c_member = single
    c_primary = single
    c_paren_expr = single
    c_addition = single  # arithmetic is left to cel-python (overflow, types)
    c_multiplication = single

    def c_expr(self, node: Any) -> _Fn:
        if len(node.children) == 1:
            return self.compile(node.children[0])
        cond, yes, no = (self.compile(c) for c in node.children)

        def ternary(d: Device, env: _Bindings) -> Any:
            c = cond(d, env)
            if isinstance(c, _Err):
                return c
            _need(type(c) is bool)
            return yes(d, env) if c else no(d, env)

        return ternary

    def c_conditionalor(self, node: Any) -> _Fn:
        return self.logical(node, True)

    def c_conditionaland(self, node: Any) -> _Fn:
        return self.logical(node, False)

    def logical(self, node: Any, absorbing: bool) -> _Fn:
        """``||`` (true absorbs) or ``&&`` (false absorbs), commutative as in cel-go."""
        if len(node.children) == 1:
            return self.compile(node.children[0])
        left, right = (self.compile(c) for c in node.children)

        def op(d: Device, env: _Bindings) -> Any:
            a = left(d, env)
            if a is absorbing:
                return a
            _need(a is (not absorbing) or isinstance(a, _Err))
            b = right(d, env)
            if b is absorbing:
                return b
            _need(b is (not absorbing) or isinstance(b, _Err))
            return a if isinstance(a, _Err) else b

        return op

    def c_unary(self, node: Any) -> _Fn:
        if len(node.children) == 1:
            return self.compile(node.children[0])
        op, operand_node = node.children
        if op.data != "unary_not":
            raise _Unsupported
        return _strict([self.compile(operand_node)], _not)

    def c_relation(self, node: Any) -> _Fn:
        if len(node.children) == 1:
            return self.compile(node.children[0])
        op_node, right_node = node.children
        symbol = _COMPARE_OPS[str(op_node.data)]
        if symbol == "in":
            return self.membership(op_node.children[0], right_node)
        operands = [self.compile(op_node.children[0]), self.compile(right_node)]
        if symbol == "==":
            return _strict(operands, _plain_equals)
        if symbol == "!=":
            return _strict(operands, lambda a, b: not _plain_equals(a, b))
        return _strict(operands, _ordering(_ORDER_TESTS[symbol]))

    def membership(self, element_node: Any, container_node: Any) -> _Fn:
        element = self.compile(element_node)
        container = _unwrap(container_node)
        if container is not None and container.data == "list_lit":

            def in_list(x: Any, values: list[Any]) -> bool:
                _need(not isinstance(x, (SemVer, Quantity)))
                return any(_plain_equals(x, v) for v in values)

            return _strict([element, self.c_list_lit(container)], in_list)
        if (
            container is not None
            and container.data == "member_dot"
            and _ident_name(container.children[0]) == "device"
            and str(container.children[1].value) in _DEVICE_MAPS
        ):
            table = str(container.children[1].value)

            def in_table(d: Device, env: _Bindings) -> Any:
                x = element(d, env)
                if isinstance(x, _Err):
                    return x
                _need(type(x) is str)
                return x in (d.attributes if table == "attributes" else d.capacity)

            return in_table
        raise _Unsupported

    def c_literal(self, node: Any) -> _Fn:
        token = node.children[0]
        text = str(token.value)
        value: Any
        if token.type in ("STRING_LIT", "MLSTRING_LIT"):
            value = _decode_string(text)[0]
        elif token.type == "INT_LIT":
            value = _int_literal(text)
            if value is None or not INT64_MIN <= value <= INT64_MAX:
                raise _Unsupported
        elif token.type == "FLOAT_LIT":
            value = float(text)
        elif token.type == "BOOL_LIT":
            value = text == "true"
        else:
            raise _Unsupported
        return lambda d, env: value

    def c_list_lit(self, node: Any) -> _Fn:
        items = [self.compile(c) for c in (node.children[0].children if node.children else [])]

        def build(d: Device, env: _Bindings) -> Any:
            values = [item(d, env) for item in items]
            for v in values:
                if isinstance(v, _Err):
                    return v
            return values

        return build

    def read(self, path: tuple[str, ...]) -> _Fn:
        if path[0] == "driver":
            return lambda d, env: d.driver
        table, domain, name = path
        missing = _Err(f"no such key: {name}")
        if table == "attributes":

            def attribute(d: Device, env: _Bindings) -> Any:
                names = d.attributes.get(domain)
                if names is None or name not in names:
                    return missing
                return names[name]

            return attribute

        def capacity(d: Device, env: _Bindings) -> Any:
            caps = d.capacity.get(domain)
            if caps is None or name not in caps:
                return missing
            return _capacity_quantity(str(caps[name]))

        return capacity

    def c_ident(self, node: Any) -> _Fn:
        name = str(node.children[0].value)
        if name not in self.scope:
            raise _Unsupported  # device on its own, undeclared names: cel-python words them
        return lambda d, env: env[name]

    def c_member_index(self, node: Any) -> _Fn:
        receiver_node, key_node = node.children
        key = self.compile(key_node)
        inner = _unwrap(receiver_node)
        if (
            inner is not None
            and inner.data == "member_dot"
            and _ident_name(inner.children[0]) == "device"
            and str(inner.children[1].value) == "attributes"
        ):
            # device.attributes[domain]: an unknown domain is an empty map

            def domain_map(d: Device, env: _Bindings) -> Any:
                k = key(d, env)
                if isinstance(k, _Err):
                    return k
                _need(type(k) is str)
                return d.attributes.get(k, _EMPTY_MAP)

            return domain_map

        def index(r: Any, k: Any) -> Any:
            _need(type(r) is dict and type(k) is str)
            return r[k] if k in r else _Err(f"no such key: {k}")

        return _strict([self.compile(receiver_node), key], index)

    def attribute_map(self, receiver_node: Any) -> _Fn:
        """A receiver that must be an attribute map (``device`` itself is not one here)."""
        if _ident_name(receiver_node) == "device" or _namespace_of(receiver_node) is not None:
            raise _Unsupported
        return self.compile(receiver_node)

    def c_member_dot(self, node: Any) -> _Fn:
        receiver_node, ident = node.children
        missing = _Err(f"no such key: {ident.value}")
        name = str(ident.value)

        def field(r: Any) -> Any:
            _need(type(r) is dict)
            return r.get(name, missing)

        return _strict([self.attribute_map(receiver_node)], field)

    def scoped(self, var_node: Any, body_node: Any) -> tuple[str, _Fn]:
        """A variable's name and the body compiled with the variable in scope."""
        var = _ident_name(var_node)
        if var is None or var == "device" or var in _NAMESPACES or var in self.scope:
            raise _Unsupported
        self.scope.add(var)
        try:
            return var, self.compile(body_node)
        finally:
            self.scope.discard(var)

    def comprehension(self, node: Any, method: str, args: list[Any]) -> _Fn:
        receiver = self.compile(node.children[0])
        var, predicate = self.scoped(args[0], args[1])
        one = method in ("exists_one", "existsOne")
        absorbing = method == "exists"  # exists stops at true, all at false

        def loop(d: Device, env: _Bindings) -> Any:
            r = receiver(d, env)
            if isinstance(r, _Err):
                return r
            _need(type(r) in (dict, list))  # otherwise cel-python words the error
            inner = dict(env)
            error = None
            count = 0
            for x in r:
                inner[var] = x
                v = predicate(d, inner)
                if isinstance(v, _Err):
                    if one:
                        return v
                    error = error or v
                    continue
                _need(type(v) is bool)
                if one:
                    count += v
                elif v is absorbing:
                    return v
            if one:
                return count == 1
            return error or (not absorbing)

        return loop

    def bind(self, args: list[Any]) -> _Fn:
        init = self.compile(args[1])
        var, body = self.scoped(args[0], args[2])

        def bound(d: Device, env: _Bindings) -> Any:
            value = init(d, env)
            _need(not isinstance(value, _Err))
            inner = dict(env)
            inner[var] = value
            return body(d, inner)

        return bound

    def presence(self, target: Any) -> _Fn:
        """``has(x.name)`` on a map value (a bound attribute map)."""
        receiver_node, ident = target.children
        name = str(ident.value)

        def has(r: Any) -> bool:
            _need(type(r) is dict)
            return name in r

        return _strict([self.attribute_map(receiver_node)], has)

    def c_ident_arg(self, node: Any) -> _Fn:
        name = str(node.children[0].value)
        args = list(node.children[1].children) if len(node.children) > 1 else []
        if name == "has" and len(args) == 1:
            target = _unwrap(args[0])
            if target is None or target.data != "member_dot":
                raise _Unsupported
            path = _device_path(target)
            if path is None:
                return self.presence(target)
            if path[0] == "driver":
                raise _Unsupported
            table, domain, key = path

            def has(d: Device, env: _Bindings) -> Any:
                names = (d.attributes if table == "attributes" else d.capacity).get(domain)
                return names is not None and key in names

            return has
        if name in ("semver", "quantity") and args:
            return self.constant_ctor(name, args)
        raise _Unsupported

    def constant_ctor(self, name: str, args: list[Any]) -> _Fn:
        """``semver("…"[, bool])`` or ``quantity("…")`` of literals: the value (or its
        error) is computed once."""
        text = _string_literal(args[0])
        normalize = False
        if len(args) == 2:
            flag = _unwrap(args[1])
            if flag is None or flag.data != "literal" or flag.children[0].type != "BOOL_LIT":
                raise _Unsupported
            normalize = str(flag.children[0].value) == "true"
        if text is None or len(args) > (2 if name == "semver" else 1):
            raise _Unsupported
        value: Any
        try:
            value = SemVer.parse(text, normalize) if name == "semver" else parse_quantity(text)
        except ValueError as exc:
            value = _Err(str(exc))
        return lambda d, env: value

    def c_member_dot_arg(self, node: Any) -> _Fn:
        receiver_node, ident = node.children[0], node.children[1]
        method = str(ident.value)
        arg_nodes = list(node.children[2].children) if len(node.children) > 2 else []
        namespace = _namespace_of(receiver_node)
        if namespace == "cel" and method == "bind" and len(arg_nodes) == 3:
            return self.bind(arg_nodes)
        if namespace is not None:
            raise _Unsupported
        if method in ("all", "exists", "exists_one", "existsOne") and len(arg_nodes) == 2:
            return self.comprehension(node, method, arg_nodes)
        if not arg_nodes and method in _STRING_FUNCTIONS_DIRECT:
            return _strict([self.compile(receiver_node)], _STRING_FUNCTIONS_DIRECT[method])
        if len(arg_nodes) != 1:
            raise _Unsupported
        operands = [self.compile(receiver_node), self.compile(arg_nodes[0])]
        if method in _STRING_TESTS:
            return _strict(operands, _string_test(_STRING_TESTS[method]))
        if method in _TYPED_COMPARES:
            return _strict(operands, _typed_compare(_TYPED_COMPARES[method]))
        if method == "matches":
            pattern = _string_literal(arg_nodes[0])
            if pattern is None:
                raise _Unsupported
            try:
                search = _regex(pattern).search
            except ValueError:
                raise _Unsupported from None
            return _strict(operands, _string_test(lambda s, _: search(s) is not None))
        raise _Unsupported


def _direct(tree: Any) -> _Fn | None:
    """The selector compiled to a closure, or None when it needs cel-python."""
    try:
        return _DirectCompiler().compile(tree)
    except (_Unsupported, RecursionError):
        return None
