"""Stage 2, load: Helm template detection. A file is a chart template when its Go
template actions are YAML structure or make a document unparsable; only the
documents holding an action are composed, and each action is looked up in the
sorted spans of their scalars."""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Iterator

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from dra_migrate.manifests.compose import no_collector, parse_holding
from dra_migrate.report.findings import InputProblem

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from yaml.nodes import Node

    from dra_migrate.manifests.sources import Source


# Helm (Go template) actions: {{ .Values.x }}, {{- include ... }}, {{ if }}, {{/* */}}.
# Argo's {{inputs.parameters.x}} and {{workflow.name}} are not: no dot, no keyword.
_TEMPLATE_SYNTAX = re.compile(
    r"\{\{-?\s*(?:[.$]|/\*|(?:include|template|if|else|end|range|with|define|block|toYaml"
    r"|toJson|tpl|required|default|printf|quote|nindent|indent|lookup|fail)\b)"
)
# The line breaks of ``str.splitlines`` but "\n" (a "\r" met on a line is a break
# of its own), and what ``str.lstrip`` keeps.
_RARE_BREAK = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_NON_SPACE = re.compile(r"\S")


def looks_like_template(text: str) -> bool:
    """Go template syntax outside comments (a cheap first look; see is_template)."""
    return any(True for _ in _template_actions(text))


def _template_actions(text: str) -> Iterator[int]:
    """Offsets of Helm template actions on lines that are not comments (lines as
    ``str.splitlines`` cuts them). Linear: the text between two actions is searched
    once for the last line break (in C: ``rfind``, then the rare breaks after it),
    and a line's first character is looked at once however many actions it holds
    (a one-line JSON bundle may hold thousands)."""
    begin = scanned = 0  # where the line of the last action begins; text searched up to
    known, comment = -1, False  # the line whose first character was looked at, and it
    for match in _TEMPLATE_SYNTAX.finditer(text):
        at = match.start()
        newline = text.rfind("\n", scanned, at)
        if newline >= 0:
            begin = newline + 1
        for brk in _RARE_BREAK.finditer(text, max(scanned, begin), at):
            begin = brk.end()
        scanned = at
        if begin != known:
            known = begin
            first = _NON_SPACE.search(text, begin, at + 1)  # at the latest the action's "{"
            comment = first is not None and text[first.start()] == "#"
        if not comment:
            yield at


def is_template(source: Source) -> bool:
    """A Helm chart template, not a manifest: template actions that are YAML
    structure (``replicas: {{ .Values.n }}``, ``{{- if }}`` lines) or that make
    their document unparsable. Actions inside string values (a PrometheusRule's
    ``summary: "{{ $labels.node }}"``) are data of a manifest.

    Only the documents that hold an action are composed, each alone as ``parse``
    composes them: a document without one (a CustomResourceDefinition of an
    install bundle) is never composed because another document of the file holds
    template text. Each action is looked up among the scalars' spans, sorted."""
    actions = list(_template_actions(source.text))
    if not actions:
        return False
    try:
        docs = parse_holding(source, actions)
    except InputProblem:
        return True
    with no_collector():  # the spans of a big tree: as for composing it
        scalars = Spans(span for doc in docs for span in _scalar_spans(doc.root))
    return not all(at in scalars for at in actions)


def _scalar_spans(root: Node | None) -> list[tuple[int, int]]:
    """``(start, end)`` of every scalar of a tree (a collection reached again through
    an alias is not walked again)."""
    spans: list[tuple[int, int]] = []
    stack = [] if root is None else [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, ScalarNode):
            spans.append((node.start_mark.index, node.end_mark.index))
        elif id(node) not in seen:
            seen.add(id(node))
            if isinstance(node, MappingNode):
                for key, value in node.value:
                    stack.append(key)
                    stack.append(value)
            elif isinstance(node, SequenceNode):
                stack.extend(node.value)
    return spans


class Spans:
    """Half-open spans ``[a, b)``, sorted by start, each with the furthest end of the
    spans up to it: whether an offset lies inside any of them is one bisection,
    where testing every span made a bundle's check grow with actions times
    scalars."""

    __slots__ = ("reach", "starts")

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self.starts = [a for a, _b in ordered]
        self.reach = list(itertools.accumulate((b for _a, b in ordered), max))

    def __contains__(self, at: int) -> bool:
        last = bisect.bisect_right(self.starts, at) - 1  # the last span starting at or before
        return last >= 0 and self.reach[last] > at
