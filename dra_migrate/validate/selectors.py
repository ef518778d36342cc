"""CEL selectors of classes and requests: each checked by ``dra_migrate.cel`` (the
answers kept in the user's cache folder), its problems turned into findings by the
``CEL_CODES`` table, at the file line and column where the problem is."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from yaml.nodes import Node, ScalarNode

from dra_migrate.manifests import trees
from dra_migrate.manifests.trees import get, items
from dra_migrate.package_data import package_file
from dra_migrate.report.findings import finding
from dra_migrate.validate.checker import Checker
from dra_migrate.validate.model import Selector

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

MAX_SELECTORS = 32


CEL_CODES = {
    "syntax": "DRA330",
    "too-long": "DRA330",
    "not-bool": "DRA330",
    "too-complex": "DRA345",
    "undeclared": "DRA330",
    "unknown-function": "DRA330",
    "unknown-field": "DRA330",
    "stale-name": "DRA331",
    "unknown-attribute": "DRA332",
    "unknown-capacity": "DRA332",
    "capacity-as-attribute": "DRA332",
    "attribute-as-capacity": "DRA332",
    "type": "DRA333",
    "invalid-literal": "DRA346",
    "unknown-domain": "DRA334",
    "unlisted-domain": "DRA350",
    "unknown-value": "DRA335",
    "unknown-driver": "DRA335",
    "driver-release": "DRA336",  # kept or dropped by the release the run assumes
    "deprecated-name": "DRA337",
}


@dataclass(frozen=True, slots=True)
class SelectorProblem:
    """``cel.CelProblem``'s fields, as kept in the cache."""

    code: str
    offset: int
    message: str
    hint: str = ""
    subject: str = ""


@functools.lru_cache(maxsize=1024)
def selector_problems(expression: str) -> tuple[SelectorProblem, ...]:
    """``cel.check_selector(expression)``, kept in the user's cache folder.

    Checking a selector needs the CEL library: about half a second to import and
    load its parser, and a few milliseconds a selector, where validating the rest of
    a file takes milliseconds; a pre-commit hook checks the same selectors run after
    run. The answer depends only on the expression and on the files of this package,
    its driver catalog and the CEL library (``_cel_stamp``), so it is kept for them."""

    def check() -> list[list[Any]]:
        from dra_migrate import cel

        found = cel.check_selector(expression)
        return [[p.code, p.offset, p.message, p.hint, p.subject] for p in found]

    from dra_migrate import cache

    stamp = _cel_stamp()
    kept = None if stamp is None else cache.read("cel-check", expression, stamp, _problems)
    if kept is not None:
        return kept
    answer = check()
    if stamp is not None:
        cache.write("cel-check", expression, stamp, answer)
    return _problems(answer)


def _problems(held: Any) -> tuple[SelectorProblem, ...]:
    """``selector_problems``' answer from its JSON, or TypeError/ValueError where it is
    not one (a kept file is data to check)."""
    if not isinstance(held, list):
        raise TypeError("not a list of problems")
    problems = []
    for code, offset, message, hint, subject in held:
        if not all(isinstance(text, str) for text in (code, message, hint, subject)):
            raise TypeError("a problem's text is not a string")
        if type(offset) is not int or offset < 0:
            raise ValueError("a problem's offset is not a count")
        problems.append(SelectorProblem(code, offset, message, hint, subject))
    return tuple(problems)


@functools.cache
def _cel_stamp() -> str | None:
    """What ``check_selector`` depends on besides the expression: every module of this
    package, the catalog's files, and the CEL library's parser, grammar and Lark; None
    where one of them cannot be found (nothing is kept)."""
    import importlib.util

    from dra_migrate import cache

    code = cache.package_stamp()
    catalog = package_file("catalog")
    try:
        files = [os.path.join(catalog, n) for n in sorted(os.listdir(catalog))]
    except OSError:
        return None
    for library in ("celpy", "lark"):
        spec = importlib.util.find_spec(library)
        if spec is None or spec.origin is None:
            return None
        files.append(spec.origin)
        if library == "celpy":
            files.append(os.path.join(os.path.dirname(spec.origin), "cel.lark"))
    stamp = cache.files_stamp(files)
    return None if stamp is None or code is None else f"{code} {stamp}"


def check_selectors(checker: Checker, node: Node | None, owner: str) -> list[Selector]:
    found: list[Selector] = []
    selector_nodes = items(node)
    if node is not None:
        checker.limit(node, len(selector_nodes), MAX_SELECTORS, owner, "selectors")
    for selector in selector_nodes:
        if get(selector, "cel") is None:
            checker.add("DRA347", selector, f"{owner}: a selector needs cel")
            continue
        expr = trees.get_path(selector, "cel", "expression")
        if isinstance(expr, ScalarNode):
            _cel(checker, expr, owner)
            found.append(Selector(expr.value, checker.where(expr)))
    return found


def _cel(checker: Checker, node: ScalarNode, owner: str) -> None:
    for problem in selector_problems(node.value):
        if problem.subject and problem.subject in checker.settings.published:
            continue  # the ResourceSlices show that the driver publishes it
        code = CEL_CODES.get(problem.code, "DRA330")
        message, hint = problem.message, problem.hint
        if problem.code == "driver-release":
            domain, _slash, name = problem.subject.partition("/")
            message = release_message(checker.settings, domain, name)
            if not message:
                continue  # the release this run assumes publishes it
            hint = release_hint(domain, hint)
        line, col = _expression_position(checker.source.text, node, problem.offset)
        checker.findings.append(
            finding(code, checker.source.path, line, col, f"{owner}: {message}", hint)
        )


def release_message(settings: Any, domain: str, name: str) -> str:
    """Why the driver release ``settings`` assumes for ``domain`` does not publish
    ``name``, and which release that is ("" when it does publish it)."""
    from dra_migrate.k8s.catalog import load_catalog

    catalog = load_catalog()
    assumed = {d: (r, why) for d, r, why in settings.driver_releases}
    if domain not in assumed:
        assumed.update(catalog.assumed_releases({}, settings.published))
    release, why = assumed.get(domain, ("", ""))
    text = catalog.release_problem(domain, name, release) if release else ""
    return f"{text}; this run assumes {domain} {release} ({why})" if text else ""


def release_hint(domain: str, hint: str) -> str:
    said = f"{hint}; " if hint else ""
    return (
        f"{said}if the cluster runs another release of the driver, say which: "
        f'drivers: {{{domain}: "<release>"}} in .dra-migrate.yaml, or give --resource-slices'
    )


def _expression_position(text: str, node: ScalarNode, offset: int) -> tuple[int, int]:
    """1-based line and column in the file of ``offset`` in the scalar's value."""
    start = node.start_mark.index
    end = node.end_mark.index
    raw = text[start:end]
    index = _source_offset(raw, node.style, offset)
    absolute = start + index
    line = text.count("\n", 0, absolute) + 1
    col = absolute - (text.rfind("\n", 0, absolute) + 1) + 1
    return line, col


def _source_offset(raw: str, style: str | None, offset: int) -> int:
    """Map a value offset to an offset in the scalar's source text (quotes, escapes, folding)."""
    if style in ("|", ">"):
        lines = raw.split("\n")
        body = lines[1:]  # after the indicator line
        indent = min((len(x) - len(x.lstrip(" ")) for x in body if x.strip()), default=0)
        position = len(lines[0]) + 1
        remaining = offset
        for line in body:
            content = line[indent:]
            if remaining <= len(content):
                return position + indent + remaining
            remaining -= len(content) + 1
            position += len(line) + 1
        return 0
    if style in ("'", '"'):
        i, value_index = 1, 0
        while i < len(raw) - 1 and value_index < offset:
            if (style == "'" and raw[i : i + 2] == "''") or (style == '"' and raw[i] == "\\"):
                i += 2
            elif raw[i] == "\n":  # folded line break
                i += 1
                while i < len(raw) and raw[i] == " ":
                    i += 1
            else:
                i += 1
            value_index += 1
        return i
    # plain: single-line values are taken as they are; folded ones approximately
    return min(offset, len(raw))
