"""Loading: what the parser accepts, what it reports, and the values it reads."""

from __future__ import annotations

import pytest

from dra_migrate import load
from dra_migrate.findings import InputProblem


def _docs(text: str) -> list[load.Document]:
    return load.parse(load.decode("f.yaml", text.encode()))


def test_tab_before_a_comment_is_yaml() -> None:
    """ruamel.yaml rejects it; YAML and kubectl accept it; offsets stay exact."""
    text = "a: 1\t# note\nb:\t\n  c: 2\n"
    [doc] = _docs(text)
    assert load.to_data(doc.root) == {"a": 1, "b": {"c": 2}}
    c = load.get_path(doc.root, "b", "c")
    assert c is not None and text[c.start_mark.index] == "2"


def test_tab_in_indentation_is_reported() -> None:
    with pytest.raises(InputProblem) as problem:
        _docs("a:\n\tb: 1\n")
    assert problem.value.finding.code == "DRA006"
    assert (problem.value.finding.line, problem.value.finding.col) == (2, 1)


def test_folded_scalars_have_no_fold_marks() -> None:
    [doc] = _docs("e: >-\n  a &&\n  b\n")
    assert load.scalar(load.get(doc.root, "e")) == "a && b"


def test_duplicate_key_names_both_lines() -> None:
    with pytest.raises(InputProblem) as problem:
        _docs("a: 1\nb: 2\na: 3\n")
    f = problem.value.finding
    assert (f.code, f.line, f.col) == ("DRA005", 3, 1)
    assert "first at line 1" in f.message


def test_utf16_and_bom() -> None:
    with pytest.raises(InputProblem) as problem:
        load.decode("w.yaml", "a: 1\n".encode("utf-16"))
    assert problem.value.finding.code == "DRA002"
    source = load.decode("b.yaml", "\ufeffa: 1\r\n".encode())
    assert source.bom and source.newline == "\r\n" and source.text == "a: 1\r\n"
    assert source.encode(source.text) == "\ufeffa: 1\r\n".encode()


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2", 2),
        ('"2"', "2"),
        ("'2'", "2"),
        ("!!int 8", 8),
        ("true", True),
        ("1.5", 1.5),
        ("~", None),
        ("0o7", "0o7"),
        ("500m", "500m"),
    ],
)
def test_values_as_the_api_server_reads_them(text: str, value: object) -> None:
    [doc] = _docs(f"v: {text}\n")
    assert load.to_data(load.get(doc.root, "v")) == value


def test_helm_template_detection() -> None:
    assert load.looks_like_template("x: {{ .Values.gpu }}\n")
    assert load.looks_like_template('{{- include "x" . }}\n')
    assert not load.looks_like_template("args: ['{{inputs.parameters.x}}']\n")  # Argo
    assert not load.looks_like_template("# {{ .Values.gpu }} in a comment\n")


@pytest.mark.parametrize(
    ("text", "template"),
    [
        ("kind: Pod\nspec:\n  replicas: {{ .Values.n }}\n", True),
        ("{{- if .Values.on }}\nkind: Pod\n{{- end }}\n", True),
        ('kind: Pod\nmetadata:\n  name: {{ include "x" . }}\n', True),
        ('summary: "GPU on {{ $labels.node }} is hot"\n', False),  # PrometheusRule data
        ("description: value is {{ $value }} now\n", False),
        ("args: ['{{inputs.parameters.x}}']\n", False),  # Argo
    ],
)
def test_helm_templates_versus_template_strings(text: str, template: bool) -> None:
    assert load.is_template(load.decode("f.yaml", text.encode())) is template
