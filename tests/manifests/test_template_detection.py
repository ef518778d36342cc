"""Helm template detection (``templates.is_template``): the same answers as its first
definition (every action checked against every scalar of the whole composed text),
in time linear in the text, and without composing a document that holds no action."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from yaml.nodes import ScalarNode

from dra_migrate.manifests import compose, sources, templates, trees
from dra_migrate.report.findings import InputProblem
from tests.helpers.cli_runner import invoke


def _first_actions(text: str) -> Iterator[int]:
    """``_template_actions`` as first written: the line up to each action, cut again."""
    for match in templates._TEMPLATE_SYNTAX.finditer(text):
        before = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
        lines = before.splitlines(keepends=True)
        line = lines[-1] if lines and lines[-1].splitlines()[0] == lines[-1] else ""
        if not line.lstrip().startswith("#"):
            yield match.start()


def _first_is_template(source: sources.Source) -> bool:
    """``is_template`` as first defined: the whole text composed, each action tested
    against the span of every scalar."""
    actions = list(_first_actions(source.text))
    if not actions:
        return False
    try:
        docs = compose.parse(source)
    except InputProblem:
        return True
    spans = [
        (node.start_mark.index, node.end_mark.index)
        for doc in docs
        if doc.root is not None
        for node in trees.walk(doc.root)
        if isinstance(node, ScalarNode)
    ]
    return any(not any(a <= at < b for a, b in spans) for at in actions)


_PIECES = st.sampled_from(
    [
        "{{ .x }}",
        "{{- if .Values.on }}",
        "#",
        " ",
        "x",
        "\n",
        "\r",
        "\r\n",
        "\x0c",
        "\x85",
        "\u2028",
    ]
)


@pytest.mark.parametrize(
    "text",
    [
        "#\r{{ .x }}",
        "# \x85 {{ .x }}",
        "#\r\n{{ .x }}",
        " # {{ .x }} {{ .y }}\n{{ .z }}",
        "\u2028#{{ .x }}",
    ],
)
def test_actions_after_a_break_only_splitlines_sees(text: str) -> None:
    assert list(templates._template_actions(text)) == list(_first_actions(text))


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=30))
def test_actions_are_those_of_the_first_definition(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert list(templates._template_actions(text)) == list(_first_actions(text))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 20)), max_size=25),
    st.lists(st.integers(-2, 90), max_size=25),
)
def test_span_lookup_answers_as_testing_every_span(
    spans: list[tuple[int, int]], offsets: list[int]
) -> None:
    """Any spans, overlapping, nested or empty: inside one of them, or not."""
    pairs = [(a, a + length) for a, length in spans]
    lookup = templates.Spans(pairs)
    for at in offsets:
        assert (at in lookup) == any(a <= at < b for a, b in pairs)


# Lines of a document: data with template text inside strings, template structure,
# comments. Every key is numbered, so a document without an action always parses
# (a document is judged by its own text now: see the test after this one).
_LINES = st.sampled_from(
    [
        "name{i}: plain",
        'summary{i}: "GPU on {{{{ $labels.node }}}} is hot"',
        "description{i}: value is {{{{ $value }}}} now",
        "quoted{i}: '{{{{ .Values.image }}}}'",
        "script{i}: |\n  echo {{{{ .Values.x }}}}\n  done",
        "args{i}: ['{{{{inputs.parameters.x}}}}']",
        "replicas{i}: {{{{ .Values.n }}}}",
        "list{i}: [a, {{{{ .Values.b }}}}]",
        'ref{i}: {{{{ include "x" . }}}}',
        "{{{{- if .Values.on }}}}",
        "{{{{- end }}}}",
        "# {{{{ .Values.x }}}} in a comment",
        "limits{i}:\n  nvidia.com/gpu: 1",
        "kind{i}: CustomResourceDefinition",
        # keys, folded and multi-line scalars, flow mappings, a trailing comment
        '"{{{{ .Values.key }}}}{i}": v',
        "{{{{ .Values.key }}}}{i}: v",
        "fk{i}: {{'{{{{ .k }}}}': v, '{{{{ .w }}}}{i}': [{{{{ .z }}}}]}}",
        "flow{i}: {{k: '{{{{ .v }}}}'}}",
        "folded{i}: >-\n  {{{{ $labels.x }}}}\n  and {{{{ .y }}}}",
        'multi{i}: "first {{{{ .a }}}}\n  second {{{{ .b }}}}"',
        "plain{i}: first {{{{ .a }}}}\n  second {{{{ .b }}}}",
        "c{i}: v # {{{{ .x }}}}",
        "seq{i}:\n  - '{{{{ .a }}}}'\n  - {{{{ .b }}}}",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(_LINES, min_size=1, max_size=6), min_size=1, max_size=5),
    st.booleans(),
    st.booleans(),
)
def test_is_template_answers_as_the_first_definition(
    documents: list[list[str]], crlf: bool, leading_separator: bool
) -> None:
    texts = ["\n".join(line.format(i=i) for i, line in enumerate(doc)) + "\n" for doc in documents]
    text = ("---\n" if leading_separator else "") + "---\n".join(texts)
    if crlf:
        text = text.replace("\n", "\r\n")
    source = sources.decode("f.yaml", text.encode())
    assert templates.is_template(source) is _first_is_template(source)


@pytest.mark.parametrize(
    ("text", "template"),
    [
        ('a: &x "{{ .v }}"\nb: *x\n', False),  # an aliased scalar: its span is the anchor's
        ("a: &m {k: '{{ .v }}'}\nb: *m\nc: [*m, *m]\n", False),  # an aliased mapping
        ("a: &m {k: '{{ .v }}'}\nb: *m\nc: {{ .v }}\n", True),
    ],
)
def test_actions_and_aliases(text: str, template: bool) -> None:
    source = sources.decode("f.yaml", text.encode())
    assert templates.is_template(source) is template is _first_is_template(source)


def test_a_broken_document_without_actions_is_not_template_structure() -> None:
    """Its own text says nothing about templates: it is never composed for the
    question (before, the whole file was, and its syntax error made the file a
    chart template)."""
    text = 'summary: "GPU on {{ $labels.node }} is hot"\n---\nbroken: [\n'
    assert templates.is_template(sources.decode("f.yaml", text.encode())) is False
    assert templates.is_template(sources.decode("f.yaml", text.replace("[", "{{ .x").encode()))


_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  group: example.com
  description: set custom.com/gpu or nvidia.com/gpu in the predictor's limits
"""
_RULES = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: gpu-alerts
spec:
  groups:
    - name: gpu
      rules:
        - alert: GpuHot
          annotations:
            summary: "GPU {{ $labels.gpu }} on {{ $labels.node }} is hot"
"""
_SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: lonely-service
spec:
  ports: [{port: 80}]
"""
_CLAIMS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: shared-gpu
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: gpu.nvidia.com
"""
_GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: trainer
          resources:
            limits:
              nvidia.com/gpu: 1
"""


@pytest.mark.parametrize("command", [["scan"], ["convert", "--check"], ["validate"]])
def test_template_text_does_not_compose_the_other_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """Template detection keeps the per-document prefilter: a bundle's document with
    template text inside strings is composed, the CRD and the Service beside it are
    not (the whole bundle was, CRDs included, for every action)."""
    bundle = tmp_path / "bundle.yaml"
    bundle.write_text("---\n".join([_CRD, _RULES, _SERVICE, _CLAIMS, _GPU_JOB]))
    composed: list[str] = []
    compose_all = compose.compose_all

    def spy(text: str) -> list[object]:
        composed.append(text)
        return compose_all(text)  # type: ignore[return-value]

    monkeypatch.setattr(compose, "compose_all", spy)
    result = invoke([*command, str(bundle)])
    assert result.exception is None, result.output
    assert any("PrometheusRule" in text for text in composed)
    assert not any("CustomResourceDefinition" in text for text in composed)
    assert not any("lonely-service" in text for text in composed)
    assert any("shared-gpu" in text for text in composed)  # the file was looked at
