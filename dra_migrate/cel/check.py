"""The static check of a selector, :func:`check_selector`: it parses the expression,
walks the syntax tree with the type of each sub-expression, and checks names
against the driver catalog (see :data:`PROBLEM_CODES`).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from typing import Any

from dra_migrate.cel.check_rules import _CheckRules
from dra_migrate.cel.cost import estimate_cost
from dra_migrate.cel.environment import (
    _COMPARE_OPS,
    _DYN,
    _GLOBAL_FUNCTIONS,
    _MEMBER_FUNCTIONS,
    _NAMESPACE_FUNCTIONS,
    _NOT_BOOL,
    _NUMERIC,
    _QUANTITY_METHODS,
    _SCALAR,
    _SEMVER_METHODS,
    _STRING_FUNCTIONS,
    _STRING_METHODS,
    _T,
    _TYPE_NAMES,
    _cel_str,
    _cel_type,
    _kind_text,
    _literal_text,
)
from dra_migrate.cel.parse import (
    RESERVED_WORDS,
    _decode_string,
    _end,
    _int_literal,
    _parse,
    _ParseFailed,
    _start,
)
from dra_migrate.cel.problems import (
    COST_LIMIT,
    MAX_EXPRESSION_LENGTH,
    CelProblem,
    Compared,
)
from dra_migrate.cel.tree import (
    _ident_name,
    _macro_vars,
    _namespace_of,
    _unwrap,
)

# methods that change an attribute's case, and those that compare a part of it
_FOLDS = {"lowerAscii": "lower", "upperAscii": "upper"}
_PARTS = {"startsWith": "prefix", "endsWith": "suffix", "contains": "part"}


class _Checker(_CheckRules):
    """The walk: the type of each sub-expression, and the problems met on the way."""

    # -- the walk -------------------------------------------------------------
    def infer(self, node: Any, scope: Mapping[str, _T]) -> _T:
        method = getattr(self, "n_" + str(node.data), None)
        if method is None:
            for child in node.children:
                if hasattr(child, "data"):
                    self.infer(child, scope)
            return self.t(_DYN, node)
        result: _T = method(node, scope)
        return result

    def passthrough(self, node: Any, scope: Mapping[str, _T]) -> _T:
        inner = self.infer(node.children[0], scope)
        return dataclasses.replace(
            inner, start=_start(node), end=_end(node), at=-1 if inner.at < 0 else inner.at
        )

    def n_expr(self, node: Any, scope: Mapping[str, _T]) -> _T:
        if len(node.children) == 1:
            return self.passthrough(node, scope)
        self.infer(node.children[0], scope)
        a = self.infer(node.children[1], scope)
        b = self.infer(node.children[2], scope)
        return self.t(a.kind if a.kind == b.kind else _DYN, node)

    def _logical(self, node: Any, scope: Mapping[str, _T]) -> _T:
        if len(node.children) == 1:
            return self.passthrough(node, scope)
        for child in node.children:
            operand = self.infer(child, scope)
            if operand.kind in _NOT_BOOL:
                self.add(
                    "type",
                    operand.start,
                    f"operand of a logical operator is {_kind_text(operand)}, not bool",
                )
        return self.t("bool", node)

    n_conditionalor = _logical
    n_conditionaland = _logical

    def n_relation(self, node: Any, scope: Mapping[str, _T]) -> _T:
        if len(node.children) == 1:
            return self.passthrough(node, scope)
        op_node, right_node = node.children
        op = _COMPARE_OPS[str(op_node.data)]
        left = self.infer(op_node.children[0], scope)
        right = self.infer(right_node, scope)
        if op == "in":
            self.check_in(left, right)
        else:
            self.check_compare(op, left, right)
        return self.t("bool", node)

    def _arith(self, node: Any, scope: Mapping[str, _T]) -> _T:
        if len(node.children) == 1:
            return self.passthrough(node, scope)
        op_node, right_node = node.children
        left = self.infer(op_node.children[0], scope)
        right = self.infer(right_node, scope)
        for side in (left, right):
            if side.kind in ("semver", "quantity"):
                what = "version" if side.kind == "semver" else "Quantity"
                hint = (
                    ".add()/.sub()/.mul() on quantities"
                    if side.kind == "quantity"
                    else ".major()/.minor()/.patch()"
                )
                self.add(
                    "type",
                    side.start,
                    f"arithmetic on a {what} value ({self.src(side)}) has no overload",
                    f"use {hint}",
                )
        if left.kind == right.kind and left.kind in ("int", "uint", "double", "string", "list"):
            return self.t(left.kind, node)
        return self.t(_DYN, node)

    n_addition = _arith
    n_multiplication = _arith

    def n_unary(self, node: Any, scope: Mapping[str, _T]) -> _T:
        if len(node.children) == 1:
            return self.passthrough(node, scope)
        op, operand_node = node.children
        operand = self.infer(operand_node, scope)
        if op.data == "unary_not":
            return self.t("bool", node)
        return self.t(operand.kind if operand.kind in _NUMERIC else _DYN, node)

    def n_member(self, node: Any, scope: Mapping[str, _T]) -> _T:
        return self.passthrough(node, scope)

    def n_primary(self, node: Any, scope: Mapping[str, _T]) -> _T:
        return self.passthrough(node, scope)

    def n_paren_expr(self, node: Any, scope: Mapping[str, _T]) -> _T:
        return self.passthrough(node, scope)

    def n_literal(self, node: Any, scope: Mapping[str, _T]) -> _T:
        token = node.children[0]
        text = str(token.value)
        kind = {
            "STRING_LIT": "string",
            "MLSTRING_LIT": "string",
            "BYTES_LIT": "bytes",
            "INT_LIT": "int",
            "UINT_LIT": "uint",
            "FLOAT_LIT": "double",
            "BOOL_LIT": "bool",
            "NULL_LIT": "null",
        }.get(str(token.type), _DYN)
        value: Any = None
        start = _start(node)
        if kind == "string":
            value, content = _decode_string(text)
            return _T(
                "string", start, _end(node), origin="literal", literal=value, at=start + content
            )
        if kind in ("int", "uint"):
            value = _int_literal(text)
        elif kind == "double":
            value = float(text)
        elif kind == "bool":
            value = text == "true"
        return _T(kind, start, _end(node), origin="literal", literal=value)

    def n_list_lit(self, node: Any, scope: Mapping[str, _T]) -> _T:
        items = [self.infer(c, scope) for c in (node.children[0].children if node.children else [])]
        self.check_homogeneous(items)
        literal = (
            tuple(i.literal for i in items) if items and all(i.is_literal for i in items) else None
        )
        return self.t(
            "list",
            node,
            origin="literal" if literal is not None else "",
            literal=literal,
            parts=tuple(i.offset for i in items) if literal is not None else (),
        )

    def n_map_lit(self, node: Any, scope: Mapping[str, _T]) -> _T:
        entries = list(node.children[0].children) if node.children else []
        typed = [self.infer(e, scope) for e in entries]
        self.check_homogeneous(typed[0::2])
        self.check_homogeneous(typed[1::2])
        return self.t("map", node)

    def n_mapinits(self, node: Any, scope: Mapping[str, _T]) -> _T:
        for child in node.children:
            self.infer(child, scope)
        return self.t(_DYN, node)

    def n_member_object(self, node: Any, scope: Mapping[str, _T]) -> _T:
        return self.t(_DYN, node)

    def n_dot_ident(self, node: Any, scope: Mapping[str, _T]) -> _T:
        return self.t(_DYN, node)

    def n_dot_ident_arg(self, node: Any, scope: Mapping[str, _T]) -> _T:
        for child in node.children[1:]:
            for arg in getattr(child, "children", []):
                self.infer(arg, scope)
        return self.t(_DYN, node)

    def n_ident(self, node: Any, scope: Mapping[str, _T]) -> _T:
        token = node.children[0]
        name = str(token.value)
        if name in scope:
            bound = scope[name]
            return dataclasses.replace(bound, start=_start(node), end=_end(node), at=-1)
        if name in RESERVED_WORDS:
            self.add(
                "syntax", _start(node), f"{name!r} is a reserved word and cannot be an identifier"
            )
            return self.t(_DYN, node)
        if name == "device":
            return self.t("device", node)
        if name in _TYPE_NAMES:
            return self.t("type", node)
        self.add(
            "undeclared",
            _start(node),
            f"undeclared reference to {name!r}: device selectors only have the variable 'device'",
        )
        return self.t(_DYN, node)

    # -- field selection and indexing -----------------------------------------
    def n_member_dot(self, node: Any, scope: Mapping[str, _T]) -> _T:
        receiver_node, ident = node.children
        name = str(ident.value)
        offset = int(ident.start_pos)
        receiver = self.infer(receiver_node, scope)
        return self.select(receiver, name, offset, node)

    def n_member_index(self, node: Any, scope: Mapping[str, _T]) -> _T:
        receiver_node, key_node = node.children
        receiver = self.infer(receiver_node, scope)
        key = self.infer(key_node, scope)
        if key.kind == "string" and key.is_literal:
            offset = key.offset
            if receiver.kind in ("attrs", "caps", "attr_map", "cap_map"):
                return self.select(receiver, str(key.literal), offset, node)
        device_map = receiver.kind in ("attrs", "caps", "attr_map", "cap_map")
        if device_map and key.kind in _NOT_BOOL | {"bool"} and key.kind != "string":
            self.add(
                "type",
                key.start,
                f"found no matching overload for '_[_]' applied to a device map and "
                f"{_cel_type(key)!r}: device maps are keyed by strings",
                f"write the key as a string: [{_cel_str(_literal_text(key.literal))}]"
                if key.is_literal
                else "",
            )
        if receiver.kind == "attrs":
            return self.t("attr_map", node)
        if receiver.kind == "caps":
            return self.t("cap_map", node)
        if receiver.kind == "attr_map":
            return self.t(_DYN, node, origin="attribute")
        if receiver.kind == "cap_map":
            return self.t("quantity", node, origin="capacity")
        return self.t(_DYN, node)

    def select(self, receiver: _T, name: str, offset: int, node: Any) -> _T:
        kind = receiver.kind
        if kind == "device":
            if name == "driver":
                return self.t("string", node, origin="driver")
            if name == "attributes":
                return self.t("attrs", node)
            if name == "capacity":
                return self.t("caps", node)
            hint = ""
            if name in ("attribute", "attrs", "capacities"):
                hint = "did you mean device.attributes or device.capacity?"
            self.add(
                "unknown-field",
                offset,
                f"device has no field {name!r}: it has driver, attributes and capacity",
                hint,
            )
            return self.t(_DYN, node)
        if kind == "attrs":
            self.check_domain(name, offset, "attributes")
            return self.t("attr_map", node, domain=name)
        if kind == "caps":
            self.check_domain(name, offset, "capacity")
            return self.t("cap_map", node, domain=name)
        if kind == "attr_map":
            return self.attribute_value(receiver.domain, name, offset, node)
        if kind == "cap_map":
            return self.capacity_value(receiver.domain, name, offset, node)
        if kind in _SCALAR or kind in ("semver", "quantity"):
            self.add(
                "type",
                offset,
                f"{self.src(receiver) or 'value'} is {_kind_text(receiver)} and has no field {name!r}",
            )
        return self.t(_DYN, node)

    # -- calls -------------------------------------------------------------------
    def args_of(self, node: Any, index: int) -> list[Any]:
        if len(node.children) > index and hasattr(node.children[index], "data"):
            return list(node.children[index].children)
        return []

    def n_ident_arg(self, node: Any, scope: Mapping[str, _T]) -> _T:
        ident = node.children[0]
        name = str(ident.value)
        args = self.args_of(node, 1)
        if name == "has":
            return self.call_has(node, args, scope)
        if name in RESERVED_WORDS:
            self.add(
                "syntax", _start(node), f"{name!r} is a reserved word and cannot name a function"
            )
        typed = [self.infer(a, scope) for a in args]
        if name in _STRING_FUNCTIONS and typed and typed[0].kind not in ("string", _DYN):
            self.add(
                "type",
                typed[0].offset,
                f"found no matching overload for {name!r} applied to {_kind_text(typed[0])}; "
                "it takes a string",
            )
            return self.t("bool" if name.startswith("is") else _DYN, node, origin="call")
        if name == "matches" and len(typed) == 2:
            self.check_regex(typed[1])
        if name in ("semver", "quantity") and typed:
            self.check_ctor(name, typed)
            return self.t("semver" if name == "semver" else "quantity", node, origin="call")
        if name not in _GLOBAL_FUNCTIONS:
            self.unknown_function(name, int(ident.start_pos), _GLOBAL_FUNCTIONS)
            return self.t(_DYN, node)
        result = {
            "size": "int",
            "int": "int",
            "uint": "uint",
            "double": "double",
            "string": "string",
            "bytes": "bytes",
            "bool": "bool",
            "type": "type",
            "matches": "bool",
            "isSemver": "bool",
            "isQuantity": "bool",
            "isURL": "bool",
            "isIP": "bool",
            "isCIDR": "bool",
            "ip": "ip",
            "cidr": "cidr",
        }.get(name, _DYN)
        return self.t(result, node, origin="call")

    def call_has(self, node: Any, args: list[Any], scope: Mapping[str, _T]) -> _T:
        if len(args) != 1:
            self.add("syntax", _start(node), "has() takes exactly one argument")
            return self.t("bool", node)
        inner = args[0]
        target = _unwrap(inner)
        if target is None or target.data != "member_dot":
            self.add(
                "syntax",
                _start(inner),
                "invalid argument to has(): it must be a field selection like has(x.name)",
                "write has(device.attributes['domain'].name)",
            )
        self.infer(inner, scope)
        return self.t("bool", node)

    def n_member_dot_arg(self, node: Any, scope: Mapping[str, _T]) -> _T:
        receiver_node, ident = node.children[0], node.children[1]
        name = str(ident.value)
        offset = int(ident.start_pos)
        args = self.args_of(node, 2)
        namespace = _namespace_of(receiver_node)
        if namespace is not None and namespace not in scope:
            if namespace == "cel" and name == "bind":
                return self.call_bind(node, args, scope)
            for a in args:
                self.infer(a, scope)
            qualified = f"{namespace}.{name}"
            if qualified not in _NAMESPACE_FUNCTIONS:
                close = difflib.get_close_matches(qualified, sorted(_NAMESPACE_FUNCTIONS), n=2)
                self.add(
                    "unknown-function",
                    _start(receiver_node),
                    f"the Kubernetes CEL environment has no function {qualified!r}",
                    ("did you mean " + " or ".join(repr(c) for c in close) + "?") if close else "",
                )
            return self.t(_NAMESPACE_FUNCTIONS.get(qualified, _DYN), node, origin="call")
        # macros bind variables
        n_vars = _macro_vars(name, args)
        if n_vars:
            receiver = self.infer(receiver_node, scope)
            if receiver.kind in _SCALAR | {"semver", "quantity"} and receiver.origin != "attribute":
                self.add(
                    "type",
                    receiver.start,
                    f"expression of type {_cel_type(receiver)!r} cannot be the range of a "
                    "comprehension (must be list, map, or dynamic)",
                )
            inner = dict(scope)
            for a in args[:n_vars]:
                inner[str(_ident_name(a))] = _T(_DYN)
            for a in args[n_vars:]:
                self.infer(a, inner)
            return self.t(
                "bool" if name in ("all", "exists", "exists_one", "existsOne") else _DYN, node
            )
        receiver = self.infer(receiver_node, scope)
        typed = [self.infer(a, scope) for a in args]
        return self.method(receiver, name, offset, typed, node)

    def call_bind(self, node: Any, args: list[Any], scope: Mapping[str, _T]) -> _T:
        if len(args) != 3 or _ident_name(args[0]) is None:
            self.add(
                "syntax",
                _start(node),
                "cel.bind() takes a variable name, a value and an expression",
            )
            for a in args:
                self.infer(a, scope)
            return self.t(_DYN, node)
        value = self.infer(args[1], scope)
        inner = dict(scope)
        inner[str(_ident_name(args[0]))] = value
        body = self.infer(args[2], inner)
        return dataclasses.replace(body, start=_start(node), end=_end(node))

    def method(self, receiver: _T, name: str, offset: int, args: list[_T], node: Any) -> _T:
        kind = receiver.kind
        subject = self.src(receiver) or "value"
        if name in ("matches", "find", "findAll") and args:
            self.check_regex(args[0])
        if name not in _MEMBER_FUNCTIONS:
            self.unknown_function(name, offset, _MEMBER_FUNCTIONS)
            return self.t(_DYN, node)
        if kind == "semver":
            if name not in _SEMVER_METHODS:
                hint = "compare versions with .compareTo(semver('…')), or use .major()/.minor()/.patch()"
                self.add(
                    "type", offset, f"{subject} is a version (semver), which has no {name}()", hint
                )
                return self.t(_DYN, node)
            if name in ("isGreaterThan", "isLessThan", "compareTo"):
                self.check_method_arg("semver", subject, name, args)
            return self.t(_SEMVER_METHODS[name], node)
        if kind == "quantity":
            if name not in _QUANTITY_METHODS:
                hint = "compare with .compareTo(quantity('…')), or convert with .asInteger()/.asApproximateFloat()"
                self.add("type", offset, f"{subject} is a Quantity, which has no {name}()", hint)
                return self.t(_DYN, node)
            if name in ("isGreaterThan", "isLessThan", "compareTo"):
                self.check_method_arg("quantity", subject, name, args)
            return self.t(_QUANTITY_METHODS[name], node)
        if kind == "string":
            if receiver.origin == "attribute" and name in _FOLDS and not args:
                return dataclasses.replace(
                    receiver, start=_start(node), end=_end(node), values=(), fold=_FOLDS[name]
                )
            if name in _PARTS and args:
                self.note_compared(receiver, args[0], _PARTS[name])
            if name in _STRING_METHODS:
                return self.t(_STRING_METHODS[name], node)
            if name in _SEMVER_METHODS or name in _QUANTITY_METHODS:
                described = (
                    f"{receiver.domain}/{receiver.name}"
                    if receiver.origin == "attribute"
                    else subject
                )
                self.add(
                    "type",
                    offset,
                    f"{described} is a string, which has no {name}()",
                    f"convert first: semver({subject}, true).{name}(…) or quantity({subject}).{name}(…)",
                )
            return self.t(_DYN, node)
        if kind in ("int", "uint", "double", "bool") and (
            name in _STRING_METHODS or name in _SEMVER_METHODS
        ):
            if name != "size":
                self.add(
                    "type", offset, f"{subject} is {_kind_text(receiver)}, which has no {name}()"
                )
            return self.t(_DYN, node)
        return self.t(_DYN, node)


def check_selector(expression: str) -> list[CelProblem]:
    """Problems in a CEL device selector, in order of their offset.

    Never raises for any input text. See :data:`PROBLEM_CODES` for the codes.
    """
    return check_selector_values(expression)[0]


def check_selector_values(expression: str) -> tuple[list[CelProblem], list[Compared]]:
    """:func:`check_selector`'s problems, and the string attributes the selector
    compares with literals (:class:`Compared`, in the order met; none when the
    expression does not parse)."""
    from dra_migrate.k8s.catalog import load_catalog

    problems: list[CelProblem] = []
    if not isinstance(expression, str):
        return [
            CelProblem(
                "syntax", 0, f"a CEL expression must be a string, got {type(expression).__name__}"
            )
        ], []
    if len(expression) > MAX_EXPRESSION_LENGTH:
        problems.append(
            CelProblem(
                "too-long",
                MAX_EXPRESSION_LENGTH,
                f"the expression has {len(expression):,} characters; Kubernetes allows at most {MAX_EXPRESSION_LENGTH:,}",
                "split it into several selectors (they are ANDed) or use cel.bind to name repeated parts",
            )
        )
    try:
        tree = _parse(expression)
    except _ParseFailed as failed:
        issue = failed.issue
        problems.append(CelProblem("syntax", issue.offset, issue.message, issue.hint))
        return problems, []
    except RecursionError:
        problems.append(CelProblem("syntax", 0, "the expression is nested too deeply to parse"))
        return problems, []
    checker = _Checker(expression, load_catalog())
    try:
        result = checker.infer(tree, {})
    except RecursionError:
        checker.add("syntax", 0, "the expression is nested too deeply to check")
        result = _T(_DYN)
    cost = estimate_cost(tree)
    if cost > COST_LIMIT:
        checker.add(
            "too-complex",
            0,
            f"too complex: the estimated cost {cost:,} exceeds the API server's limit of "
            f"{COST_LIMIT:,}; Kubernetes rejects the object",
            "avoid nested comprehensions (all, exists, map, filter) over lists and maps",
        )
    if result.kind in _NOT_BOOL:
        checker.add(
            "not-bool",
            0,
            f"a selector must evaluate to bool, but this one is {_kind_text(result)}",
            "compare the value, e.g. device.attributes['gpu.nvidia.com'].type == 'gpu'",
        )
    problems.extend(checker.problems)
    problems.sort(key=lambda p: p.offset)
    return problems, checker.compared
