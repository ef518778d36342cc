"""The checks the selector checker applies, and where their problems go: names,
domains, drivers and values against the driver catalog, comparisons of version
and Quantity values, and literals (homogeneous aggregates, ``semver()`` and
``quantity()`` arguments, regular expressions).
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from dra_migrate.cel.environment import (
    _ATTR_KIND,
    _DYN,
    _FUNCTION_ALIASES,
    _MIRROR,
    _SCALAR,
    _T,
    _cel_str,
    _cel_type,
    _compatible,
    _kind_text,
    _literal_hint,
)
from dra_migrate.cel.parse import _end, _start
from dra_migrate.cel.problems import (
    CelProblem,
    Compared,
)
from dra_migrate.cel.values import (
    _regex,
    is_quantity,
    is_semver,
    normalize_semver,
)

if TYPE_CHECKING:  # pragma: no cover
    from dra_migrate.k8s.catalog import Catalog, DomainInfo, StaleName


class _CheckRules:
    """Where the checker's problems go, and the checks its walk applies."""

    def __init__(self, expression: str, catalog: Catalog) -> None:
        self.expr = expression
        self.catalog = catalog
        self.problems: list[CelProblem] = []
        self._seen: set[tuple[str, int, str]] = set()
        self.compared: list[Compared] = []  # string attributes against literals

    # -- helpers --------------------------------------------------------------
    def add(self, code: str, offset: int, message: str, hint: str = "", subject: str = "") -> None:
        key = (code, offset, message)
        if key not in self._seen:
            self._seen.add(key)
            self.problems.append(CelProblem(code, offset, message, hint, subject))

    def src(self, t: _T) -> str:
        return self.expr[t.start : t.end].strip() if t.end > t.start else ""

    def t(self, kind: str, node: Any, **kw: Any) -> _T:
        return _T(kind, _start(node), _end(node), **kw)

    def check_homogeneous(self, items: list[_T]) -> None:
        """Kubernetes compiles with cel.HomogeneousAggregateLiterals: the elements of a
        list literal (the keys, the values of a map literal) have one type."""
        first: _T | None = None
        for item in items:
            if item.kind not in _SCALAR | {"list", "map", "semver", "quantity"}:
                continue
            if item.origin == "attribute":  # attribute values are dyn to cel-go
                continue
            if first is None:
                first = item
            elif item.kind != first.kind:
                self.add(
                    "type",
                    item.start,
                    f"expected type {_cel_type(first)!r} but found {_cel_type(item)!r}: "
                    "the elements of a literal must have one type",
                    "convert them, e.g. string(x), or write separate comparisons",
                )
                return

    # -- catalog checks --------------------------------------------------------
    def check_domain(self, domain: str, offset: int, where: str) -> None:
        cat = self.catalog
        if cat.is_known_domain(domain):
            return
        wrong = cat.wrong_domain(domain)
        if wrong is not None:
            self.add(
                "unknown-domain",
                offset,
                f"{domain!r} is not an attribute domain: {wrong.explanation}",
                f"use device.{where}[{_cel_str(wrong.replacement)}]",
            )
            return
        if "/" in domain:
            dom, _, ident = domain.partition("/")
            self.add(
                "unknown-domain",
                offset,
                f"{domain!r} is a qualified name, but device.{where} is keyed by domain only, so this looks up "
                f"an empty map",
                f"write device.{where}[{_cel_str(dom)}].{ident}" if ident.isidentifier() else "",
            )
            return
        from dra_migrate.k8s.catalog import is_dns_subdomain

        similar = cat.similar_domains(domain)
        if not is_dns_subdomain(domain):
            self.add(
                "unknown-domain",
                offset,
                f"{domain!r} is not a valid domain (a lower-case DNS subdomain such as gpu.nvidia.com)",
                f"did you mean {similar[0]!r}?" if similar else "",
            )
            return
        if similar:
            self.add(
                "unlisted-domain",
                offset,
                f"no driver uses the domain {domain!r}; an unknown domain is an empty map, so every lookup in it fails",
                f"did you mean {' or '.join(repr(s) for s in similar)}?",
                subject=domain,
            )

    def published_in(
        self, domain: str | None, name: str, offset: int, where: str
    ) -> DomainInfo | None:
        """The catalog's entry for ``domain`` when ``name`` is to be looked up in it;
        None when there is nothing to check (no domain, one the catalog lacks) or the
        name is a stale one (reported here)."""
        if domain is None:
            return None
        info = self.catalog.domains.get(domain)
        if info is None:
            return None
        stale = self.catalog.find_stale(domain, name, where)
        if stale is not None:
            self.report_stale(stale, domain, name, offset, where)
            return None
        return info

    def attribute_value(self, domain: str | None, name: str, offset: int, node: Any) -> _T:
        info = self.published_in(domain, name, offset, "attribute")
        if info is None or domain is None:
            return self.t(_DYN, node, origin="attribute", domain=domain, name=name)
        attr = info.attributes.get(name)
        if attr is not None:
            self.report_lifetime(info, name, offset, "attribute")
            return self.t(
                _ATTR_KIND[attr.type],
                node,
                origin="attribute",
                domain=domain,
                name=name,
                values=attr.values,
            )
        if "/" in name:
            dom, _, ident = name.partition("/")
            self.add(
                "unknown-attribute",
                offset,
                f"{name!r} is a qualified name; inside device.attributes[{_cel_str(domain)}] names are unqualified",
                f"write device.attributes[{_cel_str(dom)}].{ident}",
            )
            return self.t(_DYN, node, origin="attribute", domain=domain, name=name)
        if info.has_capacity(name):
            self.add(
                "capacity-as-attribute",
                offset,
                f"{name!r} is a capacity of {domain}, not an attribute",
                f"use device.capacity[{_cel_str(domain)}].{name}.compareTo(quantity('…')) with a Quantity",
            )
            return self.t(_DYN, node, origin="capacity", domain=domain, name=name)
        self.report_unknown(
            info.complete, "unknown-attribute", domain, name, offset, list(info.attributes)
        )
        return self.t(_DYN, node, origin="attribute", domain=domain, name=name)

    def capacity_value(self, domain: str | None, name: str, offset: int, node: Any) -> _T:
        result = self.t("quantity", node, origin="capacity", domain=domain, name=name)
        info = self.published_in(domain, name, offset, "capacity")
        if info is None or domain is None or info.has_capacity(name):
            if info is not None and domain is not None:
                self.report_lifetime(info, name, offset, "capacity")
            return result
        if name in info.attributes:
            attr = info.attributes[name]
            self.add(
                "attribute-as-capacity",
                offset,
                f"{name!r} is an attribute of {domain} ({attr.type}), not a capacity",
                f"use device.attributes[{_cel_str(domain)}].{name}",
            )
            return self.t(_DYN, node, origin="attribute", domain=domain, name=name)
        self.report_unknown(
            info.complete, "unknown-capacity", domain, name, offset, list(info.capacity)
        )
        return result

    def report_lifetime(self, info: DomainInfo, name: str, offset: int, where: str) -> None:
        """A name only some releases of its driver publish (``driver-release``: the
        caller keeps it or not by the release its run assumes, so the answer stays
        the same for every release), and one its driver has deprecated."""
        life = info.lifetime(name)
        if life is None:
            return
        subject = f"{info.domain}/{name}"
        if life.since or life.until:
            bounds = f"from {life.since}" if life.since else f"before {life.until}"
            self.add(
                "driver-release",
                offset,
                f"{where} {name!r} of {info.domain} is published by driver releases {bounds} only",
                f"use {life.replacement}" if life.replacement else "",
                subject=subject,
            )
        if life.deprecated:
            self.add(
                "deprecated-name",
                offset,
                f"{where} {name!r} is deprecated by {info.domain} since driver release "
                f"{life.deprecated}: use {life.replacement}"
                + (f"; {life.note}" if life.note else ""),
                f"device.attributes['{life.replacement.partition('/')[0]}']."
                f"{life.replacement.partition('/')[2]}"
                if "/" in life.replacement
                else f"use {life.replacement}",
                subject=subject,
            )

    def report_stale(
        self, stale: StaleName, domain: str, name: str, offset: int, where: str
    ) -> None:
        if stale.replacement:
            cel = stale.cel_replacement(domain)
            message = f"{where} {name!r} is not published by {domain}: use {stale.replacement}"
            if cel:
                message += f" ({cel})"
            message += f"; {stale.explanation}"
            hint = cel or f"use {stale.replacement}"
        else:
            message = f"{where} {name!r} is not published by {domain} (no replacement); {stale.explanation}"
            hint = f"an unguarded lookup of {name!r} fails at run time on every device"
        self.add("stale-name", offset, message, hint)

    def report_unknown(
        self, complete: bool, code: str, domain: str, name: str, offset: int, known: list[str]
    ) -> None:
        what = "attribute" if code == "unknown-attribute" else "capacity"
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.75 if complete else 0.85)
        lower = [k for k in known if k.lower() == name.lower()]
        for k in lower:
            if k not in close:
                close.insert(0, k)
        if not complete and not close:
            return
        elsewhere = []
        if what == "attribute":
            for other, info in self.catalog.domains.items():
                if other != domain and name in info.attributes:
                    elsewhere.append(f"{other}/{name}")
        if close:
            hint = "did you mean " + " or ".join(repr(c) for c in close) + "?"
        elif elsewhere:
            hint = "published as " + ", ".join(elsewhere)
        else:
            hint = f"{domain} publishes: {', '.join(sorted(known))}" if known else ""
        message = (
            f"{domain} publishes no {what} {name!r}; an unguarded lookup fails at run time"
            if complete
            else f"{name!r} is not a known {what} of {domain}; an unguarded lookup of a missing name fails at run time"
        )
        self.add(code, offset, message, hint, subject=f"{domain}/{name}")

    def unknown_function(self, name: str, offset: int, known: frozenset[str]) -> None:
        """``name`` is not a function of the environment (``known`` holds those that are)."""
        close = [_FUNCTION_ALIASES[name]] if name in _FUNCTION_ALIASES else []
        close = close or difflib.get_close_matches(name, sorted(known), n=2, cutoff=0.7)
        self.add(
            "unknown-function",
            offset,
            f"the Kubernetes CEL environment has no function {name!r}",
            ("did you mean " + " or ".join(repr(c) for c in close) + "?") if close else "",
        )

    def check_driver(self, value: Any, offset: int) -> None:
        if not isinstance(value, str) or value in self.catalog.known_drivers():
            return
        hint = ""
        wrong = self.catalog.wrong_domain(value)
        similar = self.catalog.similar_domains(value)
        if wrong is not None:
            hint = f"did you mean {wrong.replacement!r}? {wrong.explanation}"
        elif similar:
            hint = "did you mean " + " or ".join(repr(s) for s in similar) + "?"
        self.add("unknown-driver", offset, f"no known DRA driver is called {value!r}", hint)

    # -- comparisons -------------------------------------------------------------
    def note_compared(self, attr: _T, literal: _T, how: str) -> None:
        """Keep a string attribute compared ``how`` with a string literal (``compared``:
        a caller checks the values, as config_meaning.py does product names), and check
        a product name against the catalog of products (``check_product``)."""
        if attr.origin != "attribute" or attr.kind != "string" or attr.domain is None:
            return
        found = []
        if literal.kind == "string" and literal.is_literal:
            found.append((literal.literal, literal.offset))
        elif literal.kind == "list" and isinstance(literal.literal, tuple):
            found += [
                (value, offset)
                for value, offset in zip(literal.literal, literal.parts, strict=False)
                if isinstance(value, str)
            ]
        for value, offset in found:
            compared = Compared(attr.domain, attr.name or "", how, value, offset, attr.fold)
            self.compared.append(compared)
            self.check_product(compared)

    def check_product(self, c: Compared) -> None:
        """A product attribute compared with a catalogued product name misspelled: the
        comparison is true on no device (``unknown-value``). A name the catalog lacks
        and that is no misspelling is not said here: a GPU newer than the catalog
        publishes it (the configuration warns of it: DRA533)."""
        from dra_migrate.k8s.products import catalog_for

        products = catalog_for(c.domain, c.name)
        if products is None:
            return
        verdict = products.check(c.value, "name", c.how, c.fold)
        if verdict.misspelled:
            verb = {"whole": "is never", "prefix": "never starts with", "suffix": "never ends with"}
            self.add(
                "unknown-value",
                c.offset,
                f"{c.domain}/{c.name} {verb.get(c.how, 'never contains')} {c.value!r}: "
                f"it is {products.said}, and no GPU has it",
                f"did you mean {verdict.suggestion!r}? ({verdict.why})",
            )

    def check_in(self, left: _T, right: _T) -> None:
        self.note_compared(left, right, "whole")
        if left.origin == "driver" and right.kind == "list" and isinstance(right.literal, tuple):
            for item in right.literal:
                self.check_driver(item, right.start)
        if (
            left.kind in ("semver", "quantity")
            and right.kind == "list"
            and isinstance(right.literal, tuple)
        ):
            self.add(
                "type",
                left.start,
                f"{self.src(left)} is {_kind_text(left)}; 'in' compares it with literals of another type",
            )

    def check_compare(self, op: str, left: _T, right: _T) -> None:
        for a, b in ((left, right), (right, left)):
            if a.origin == "driver" and b.kind == "string" and b.is_literal:
                self.check_driver(b.literal, b.offset)
            if op in ("==", "!="):
                self.note_compared(a, b, "whole")
        # version and Quantity values
        for a, b, mirrored in ((left, right, False), (right, left, True)):
            if a.kind in ("semver", "quantity"):
                self.check_typed_compare(op if not mirrored else _MIRROR[op], a, b, mirrored)
                return
        # typed attributes against literals of another type
        for a, b in ((left, right), (right, left)):
            if a.origin == "attribute" and a.kind in ("string", "int", "bool") and b.is_literal:
                if not _compatible(a.kind, b.kind):
                    effect = (
                        "is never true"
                        if op in ("==", "!=")
                        else "fails at run time (no such overload)"
                    )
                    if op == "!=":
                        effect = "is always true"
                    self.add(
                        "type",
                        b.start,
                        f"{a.domain}/{a.name} is {a.kind}, compared with {_kind_text(b)}: the comparison {effect}",
                        _literal_hint(a.kind, b),
                    )
                    return
                if a.kind == "string" and a.values and op in ("==", "!=") and b.kind == "string":
                    self.check_value(a, b)
                return

    def check_value(self, attr: _T, literal: _T) -> None:
        value = literal.literal
        if value in attr.values:
            return
        same_case = [v for v in attr.values if v.lower() == str(value).lower()]
        close = same_case or difflib.get_close_matches(
            str(value), list(attr.values), n=2, cutoff=0.6
        )
        hint = (
            ("did you mean " + " or ".join(repr(c) for c in close) + "? values are case-sensitive")
            if close
            else ""
        )
        self.add(
            "unknown-value",
            literal.offset,
            f"{attr.domain}/{attr.name} is one of {', '.join(attr.values)}; it is never {value!r}",
            hint,
        )

    def check_typed_compare(self, op: str, a: _T, b: _T, mirrored: bool = False) -> None:
        """``a`` is a version or Quantity value, ``op`` written as ``a op b``.

        ``mirrored``: the source has ``b`` on the left (cel-go then asks ``b.Equal(a)``,
        which is false rather than an error).
        """
        is_version = a.kind == "semver"
        ctor = "semver" if is_version else "quantity"
        what = _kind_text(a)
        subject = self.src(a) or what
        if b.kind == a.kind or b.kind == _DYN:
            if op in ("==", "!="):
                return
            plural = "versions" if is_version else "Quantities"
            self.add(
                "type",
                a.start,
                f"{plural} have no {op} operator ({subject} {op} …): no such overload",
                f"{subject}.compareTo({self.src(b) or '…'}) {op} 0",
            )
            return
        if b.is_literal and b.kind in ("string", "int", "uint", "double"):
            literal = str(b.literal)
            if is_version:
                normalized = normalize_semver(literal)
                arg = normalized if is_semver(normalized) else literal
            else:
                arg = literal
            replacement = f"{ctor}({_cel_str(arg)})"
            if op in ("==", "!="):
                hint = f"{subject}.compareTo({replacement}) {op} 0"
            else:
                method = {"<": "isLessThan", ">": "isGreaterThan"}.get(op)
                hint = (
                    f"{subject}.{method}({replacement})"
                    if method
                    else f"{subject}.compareTo({replacement}) {op} 0"
                )
            if a.origin == "attribute":
                reason = f"{a.domain}/{a.name} is a version attribute (a semver value)"
            elif a.origin == "capacity":
                reason = f"{a.domain}/{a.name} is a capacity (a Quantity)"
            else:
                reason = f"{subject} is {what}"
            if not is_version:
                effect = "no such overload when Kubernetes compiles the selector"
            elif mirrored and op in ("==", "!="):
                effect = f"{_kind_text(b)} never equals a version, so this is always {'false' if op == '==' else 'true'}"
            else:
                effect = "no such overload at run time"
            self.add(
                "type",
                b.offset,
                f"{reason}, compared with {_kind_text(b)} {b.literal!r}: {effect}",
                hint,
            )
            return
        if b.kind in _SCALAR or b.kind in ("list", "map", "semver", "quantity"):
            self.add(
                "type",
                b.start,
                f"{subject} is {what}, compared with {_kind_text(b)}: no such overload",
                f"compare with {ctor}('…') using .compareTo()",
            )

    def check_ctor(self, name: str, typed: list[_T]) -> None:
        arg = typed[0]
        if arg.kind != "string" or not arg.is_literal:
            return
        text = str(arg.literal)
        offset = arg.offset
        if name == "quantity":
            if not is_quantity(text):
                self.add(
                    "invalid-literal",
                    offset,
                    f"quantity({text!r}) is not a Kubernetes quantity, so it fails at run time",
                    "write e.g. quantity('40Gi'), quantity('500m'), quantity('1k'); suffixes are case-sensitive",
                )
            return
        normalize = len(typed) > 1 and typed[1].literal is True
        if not is_semver(text, normalize):
            normalized = normalize_semver(text)
            hint = (
                f"semver({_cel_str(normalized)}) or semver({_cel_str(text)}, true)"
                if is_semver(normalized)
                else "a semantic version has three parts, e.g. semver('8.0.0')"
            )
            self.add(
                "invalid-literal",
                offset,
                f"semver({text!r}) is not a semantic version, so it fails at run time",
                hint,
            )

    def check_regex(self, pattern: _T) -> None:
        """Kubernetes validates regular expression literals when it compiles
        (cel.ValidateRegexLiterals, since 1.29)."""
        if pattern.kind != "string" or not pattern.is_literal:
            return
        try:
            _regex(str(pattern.literal))
        except ValueError as exc:
            self.add(
                "syntax",
                pattern.offset,
                f"{exc} (in {pattern.literal!r})",
                "regular expressions are RE2 syntax; escape a literal [ as \\\\[",
            )

    def check_method_arg(self, kind: str, subject: str, name: str, args: list[_T]) -> None:
        if len(args) != 1:
            return
        arg = args[0]
        if arg.kind in (kind, _DYN):
            return
        ctor = "semver" if kind == "semver" else "quantity"
        if arg.is_literal and arg.kind in ("string", "int", "uint", "double"):
            text = str(arg.literal)
            if kind == "semver":
                normalized = normalize_semver(text)
                text = normalized if is_semver(normalized) else text
            hint = f"{subject}.{name}({ctor}({_cel_str(text)}))"
        else:
            hint = f"wrap the argument in {ctor}(…)"
        self.add(
            "type",
            arg.start,
            f"{name}() of a {'version' if kind == 'semver' else 'Quantity'} takes a {ctor}() value, not {_kind_text(arg)}",
            hint,
        )
