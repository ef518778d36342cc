"""A stream's documents composed one by one (``compose.parse`` with needles) read
exactly as the whole stream composed at once: the same roots with the same marks
(offset, line, column of every node), the same ends, the same errors at the same
whole-file positions, and the same findings, inventory and converted text.

The reference is how ``compose.parse`` worked before: every document that needs no
parsing turned into comments of the same length, then the whole text composed.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from yaml.nodes import Node, ScalarNode

from dra_migrate.convert.mapping import Settings, load_config
from dra_migrate.manifests import compose, sources, trees
from dra_migrate.pipeline.one_file import _needles, process
from dra_migrate.repo.roles import Role
from dra_migrate.report.findings import Finding, InputProblem
from dra_migrate.report.model import FileResult, Status

CONFIG = load_config(None)
NEEDLES = _needles(CONFIG)
SETTINGS = Settings(target="v1", config=CONFIG)

_COMMENTED = re.compile(r"^[^\r\n]", re.M)


def _only_mentioning(text: str, needles: tuple[str, ...]) -> str:
    """The reference's text: every document that needs no parsing as comments."""
    if sources._FOREIGN_BREAK.search(text):
        return text
    starts = [m.start() for m in compose._DOC_START.finditer(text)]
    bounds = [0, *(s for s in starts if s > 0), len(text)]
    parts: list[str] = []
    for begin, end in itertools.pairwise(bounds):
        chunk = text[begin:end]
        if compose.mentions(chunk, needles) and not compose._CRD_HEAD.search(chunk):
            parts.append(chunk)
            continue
        head = chunk.find("\n") + 1 if chunk.startswith("---") else 0
        if head == 0 and chunk.startswith("---"):
            head = len(chunk)
        parts.append(chunk[:head] + _COMMENTED.sub("#", chunk[head:]))
    return "".join(parts)


def reference_parse(source: sources.Source, needles: Any = None) -> list[sources.Document]:
    """``compose.parse`` composing the whole (commented) text at once."""
    text = source.text if needles is None else _only_mentioning(source.text, tuple(needles))
    if not compose.libyaml():
        text = compose._TRAILING_TAB.sub(" ", text)
    try:
        docs = []
        for index, root in enumerate(compose.compose_all(text)):
            aliased = compose._check_tree(source, root) if root is not None else frozenset()
            docs.append(sources.Document(index, root, 0, aliased))
        compose._set_ends(text, docs)
    except yaml.MarkedYAMLError as exc:
        raise InputProblem(compose._syntax_finding(source, exc)) from None
    except yaml.reader.ReaderError as exc:
        raise InputProblem(compose._reader_finding(source, exc)) from None
    return docs


def _marks(root: Node) -> list[tuple[Any, ...]]:
    def at(mark: Any) -> tuple[int, int, int]:
        return (mark.index, mark.line, mark.column)

    return [
        (
            type(n).__name__,
            n.tag,
            n.value if isinstance(n, ScalarNode) else None,
            *at(n.start_mark),
            *at(n.end_mark),
        )
        for n in trees.walk(root)
    ]


def _commented(root: Node | None) -> bool:
    """A root the reference made of a document turned into comments."""
    return isinstance(root, ScalarNode) and root.value == "" and not root.style


# --- random streams ---------------------------------------------------------------

GPU_DOC = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}{labels}
spec:
  containers:
  - name: main
    image: busybox  # {comment}
    resources:
      limits: &limits{i}
        nvidia.com/gpu: {count}
        memory: 1Gi
      requests: *limits{i}"""

MERGE_DOC = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  template:
    spec:
      containers:
      - &base{i}
        name: a
        image: x
        resources: {{limits: {{nvidia.com/gpu: {count}}}}}
      - <<: *base{i}
        name: b"""

PLAIN_DOC = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
data:
  note: |
    text --- not a start
    # not a comment
  other: "a {comment}\""""

CRD_DOC = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {name}.example.com
spec:
  description: asks for nvidia.com/gpu in its pods"""

ERRORS = {
    "duplicate": "\nextra: 1\nextra: 2",
    "unclosed": "\nbroken: [a, b",
    "tab": "\nnested:\n\tkey: v",
    "colon": "\nbad: a: b",
}


@dataclass
class Stream:
    text: str
    directives: bool


@st.composite
def streams(draw: st.DrawFn) -> Stream:
    count = draw(st.integers(1, 7))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    out: list[str] = []
    directives = False
    if draw(st.booleans()):
        out.append("# a stream of manifests\n")
    for i in range(count):
        shape = draw(st.sampled_from(["gpu", "merge", "plain", "plain", "crd"]))
        body = {"gpu": GPU_DOC, "merge": MERGE_DOC, "plain": PLAIN_DOC, "crd": CRD_DOC}[shape]
        body = body.format(
            i=i,
            name=f"d{i}",
            count=draw(st.sampled_from(["1", "2", "010", "0x2"])),
            comment=draw(st.sampled_from(["", "nvidia.com/gpu in a comment", "é ü"])),
            labels=draw(st.sampled_from(["", "\n  labels: {app: x}"])),
        )
        if draw(st.integers(0, 5)) == 0:
            body += ERRORS[draw(st.sampled_from(sorted(ERRORS)))]
        head = ""
        if i or draw(st.booleans()):
            if draw(st.integers(0, 3)) == 0:
                directives = True
                head += draw(st.sampled_from(["%YAML 1.1\n", "%TAG !e! tag:example.com,2000:\n"]))
                head += draw(st.sampled_from(["", "# about the next one\n"]))
            head += "---" + draw(st.sampled_from(["", " # doc", " "])) + "\n"
        tail = "\n" + draw(st.sampled_from(["", "...\n", "# trailing\n", "\n"]))
        out.append(head + body + tail)
    text = "".join(out).replace("\n", newline)
    return Stream(text, directives)


def _same_error(new: Any, old: Any, stream: Stream) -> None:
    """The same error; or, where a directive stands between two documents, an error
    of either: they are composed together (as the whole text is), where the
    reference turned the one with no GPU into comments. Never no error for one."""
    if not stream.directives:
        assert new == old
        return
    assert isinstance(new, Finding)


def _outcome(parse: Any, source: sources.Source) -> Any:
    try:
        return parse(source, NEEDLES)
    except InputProblem as problem:
        return problem.finding


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams())
def test_documents_composed_alone_read_as_the_whole_stream(stream: Stream) -> None:
    source = sources.decode("s.yaml", stream.text.encode())
    new = _outcome(compose.parse, source)
    old = _outcome(reference_parse, source)
    if not isinstance(new, list) or not isinstance(old, list):
        _same_error(new, old, stream)
        return
    old_kept = {d.root.start_mark.index: d for d in old if not _commented(d.root)}
    new_kept = {d.root.start_mark.index: d for d in new if d.root is not None}
    assert sorted(new_kept) == sorted(old_kept)
    for start, want in old_kept.items():
        got = new_kept[start]
        assert want.root is not None and got.root is not None
        assert _marks(got.root) == _marks(want.root)
        # a document ends before the directives of the next (the reference ran on
        # to the next ``---``: a template added there took the directives over)
        assert got.end == want.end or (got.end < want.end and source.text.startswith("%", got.end))
        assert len(got.aliased) == len(want.aliased)
    for doc in new:  # a document not composed ends where the next one starts
        if doc.root is None:
            assert (
                doc.end == len(source.text)
                or compose._DOC_START.match(source.text, doc.end)
                or source.text.startswith("%", doc.end)
            )


def _processed(raw: bytes) -> FileResult | Finding:
    try:
        return process("s.yaml", raw, Role(), SETTINGS)
    except InputProblem as problem:
        return problem.finding


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.booleans())
def test_findings_and_output_as_with_the_whole_stream(stream: Stream, bom: bool) -> None:
    raw = ("\ufeff" if bom else "").encode() + stream.text.encode()
    new = _processed(raw)
    with mock.patch.object(compose, "parse", reference_parse):
        old = _processed(raw)
    if not isinstance(new, FileResult) or not isinstance(old, FileResult):
        _same_error(new, old, stream)
        return
    assert new.inventory == old.inventory
    if stream.directives and old.status is Status.FAILED and new.status is Status.CHANGED:
        return  # the reference put a template between a directive and its document
    assert new.status == old.status
    assert new.findings == old.findings
    if not stream.directives:  # (else the template goes before the directives)
        assert new.converted == old.converted


def test_a_tag_directive_stays_with_its_document() -> None:
    text = (
        "kind: ConfigMap\nmetadata: {name: a}\n"
        "%TAG !e! tag:example.com,2000:\n# the pod\n---\n"
        "kind: Pod\nmetadata: {name: p, labels: !e!x {a: b}}\n"
        "spec:\n  containers:\n  - name: c\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    docs = compose.parse(sources.decode("t.yaml", text.encode()), NEEDLES)
    pods = [d for d in docs if trees.scalar(trees.get(d.root, "kind")) == "Pod"]
    assert len(pods) == 1
    labels = trees.get_path(pods[0].root, "metadata", "labels")
    assert labels is not None and labels.tag == "tag:example.com,2000:x"
    assert trees.position(labels) == (7, 29)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_an_error_in_a_later_document_is_placed_in_the_whole_file(newline: str) -> None:
    quiet = "".join(f"---\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n" for i in range(50))
    text = quiet + "---\nkind: Pod\nspec: {containers: [{resources: {limits: {nvidia.com/gpu: 1"
    source = sources.decode("t.yaml", text.replace("\n", newline).encode())
    with pytest.raises(InputProblem) as raised:
        compose.parse(source, NEEDLES)
    problem = raised.value.finding
    # the last line (libyaml: the end of the text after it), not the 3rd of its document
    assert problem.code == "DRA004" and problem.line in (153, 154)
    assert problem == _outcome(reference_parse, source)


def test_documents_not_composed_have_no_root_and_end_at_the_next() -> None:
    text = (
        "# head\n---\nkind: ConfigMap\n...\n---\nkind: Pod  # nvidia.com/gpu\n---\nkind: Service\n"
    )
    docs = compose.parse(sources.decode("t.yaml", text.encode()), NEEDLES)
    assert [d.root is not None for d in docs] == [False, True, False]
    assert docs[0].end == text.index("---\nkind: Pod")
    assert docs[2].end == len(text)
    assert docs[1].end == text.index("---\nkind: Service")


def test_a_percent_line_that_is_text_stays_with_its_document() -> None:
    """A ``%`` line at column 0 inside an unclosed flow collection is text, not a
    directive of the next document: only the composer can tell, so it composes
    both documents together."""
    text = "kind: Pod  # nvidia.com/gpu\nlist: [a, b\n%c]\n---\nkind: Pod  # nvidia.com/gpu\n"
    source = sources.decode("t.yaml", text.encode())
    new, old = compose.parse(source, NEEDLES), reference_parse(source, NEEDLES)
    assert [_marks(d.root) for d in new if d.root] == [_marks(d.root) for d in old if d.root]
    assert trees.to_data(trees.get(new[0].root, "list")) == ["a", "b %c"]
