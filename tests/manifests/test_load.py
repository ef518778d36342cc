"""Loading: what the parser accepts, what it reports, and the values it reads."""

from __future__ import annotations

import pytest
from yaml import nodes as yaml_nodes

from dra_migrate.manifests import compose, sources, templates, trees
from dra_migrate.report.findings import InputProblem


def _docs(text: str) -> list[sources.Document]:
    return compose.parse(sources.decode("f.yaml", text.encode()))


def test_tab_before_a_comment_is_yaml() -> None:
    """PyYAML's pure scanner rejects it; YAML, libyaml and kubectl accept it; offsets stay exact."""
    text = "a: 1\t# note\nb:\t\n  c: 2\n"
    [doc] = _docs(text)
    assert trees.to_data(doc.root) == {"a": 1, "b": {"c": 2}}
    c = trees.get_path(doc.root, "b", "c")
    assert c is not None and text[c.start_mark.index] == "2"


def test_tab_in_indentation_is_reported() -> None:
    with pytest.raises(InputProblem) as problem:
        _docs("a:\n\tb: 1\n")
    assert problem.value.finding.code == "DRA006"
    assert (problem.value.finding.line, problem.value.finding.col) == (2, 1)


def test_folded_scalars_have_no_fold_marks() -> None:
    [doc] = _docs("e: >-\n  a &&\n  b\n")
    assert trees.scalar(trees.get(doc.root, "e")) == "a && b"


def test_duplicate_key_names_both_lines() -> None:
    with pytest.raises(InputProblem) as problem:
        _docs("a: 1\nb: 2\na: 3\n")
    f = problem.value.finding
    assert (f.code, f.line, f.col) == ("DRA005", 3, 1)
    assert "first at line 1" in f.message


def test_utf16_and_bom() -> None:
    with pytest.raises(InputProblem) as problem:
        sources.decode("w.yaml", "a: 1\n".encode("utf-16"))
    assert problem.value.finding.code == "DRA002"
    source = sources.decode("b.yaml", "\ufeffa: 1\r\n".encode())
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
        ("0o7", 7),
        ("500m", "500m"),
        # go-yaml v2, as sigs.k8s.io/yaml (Kubernetes) reads YAML 1.1:
        ("010", 8),
        ("0x2", 2),
        ("1_0", 10),
        ("+2", 2),
        ("-0x2", -2),
        ("0b10", 2),
        ("08", 8.0),  # not octal: Go's float syntax reads it
        ("yes", True),
        ("on", True),
        ("n", False),
        ("1:20", "1:20"),  # no sexagesimal numbers in go-yaml
        ("2024-01-01", "2024-01-01"),  # timestamps stay strings in YAML-to-JSON
        ("1e3", 1000.0),
        (".5", 0.5),
        ("0x", "0x"),
        ("1__0", 10),
        ("99999999999999999999", 1e20),  # past uint64: a float
        ("'010'", "010"),
        ("!!str 010", "010"),
    ],
)
def test_values_as_the_api_server_reads_them(text: str, value: object) -> None:
    [doc] = _docs(f"v: {text}\n")
    assert trees.to_data(trees.get(doc.root, "v")) == value


def test_helm_template_detection() -> None:
    assert templates.looks_like_template("x: {{ .Values.gpu }}\n")
    assert templates.looks_like_template('{{- include "x" . }}\n')
    assert not templates.looks_like_template("args: ['{{inputs.parameters.x}}']\n")  # Argo
    assert not templates.looks_like_template("# {{ .Values.gpu }} in a comment\n")


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
    assert templates.is_template(sources.decode("f.yaml", text.encode())) is template


# --- the reader: libyaml and the pure-Python fallback, Kubernetes' limits ----------


@pytest.fixture(params=["libyaml", "pure"])
def composer(request: pytest.FixtureRequest) -> object:
    """Run a test with libyaml's composer and with the pure-Python fallback."""
    if request.param == "libyaml" and not compose.libyaml():
        pytest.skip("PyYAML here was built without libyaml")
    compose.use_pure(request.param == "pure")
    yield request.param
    compose.use_pure(False)


OFFSETS = '\ufeffa: é\r\nb: [x, "ü😀"]\r\nc: 😀d\r\n  e\r\nd: 1\t# tab before a comment\r\n'


def test_both_composers_give_character_offsets(composer: str) -> None:
    """Marks are offsets into the decoded text (BOM removed, CRLF two characters,
    astral characters one): what the splices need, from either composer."""
    source = sources.decode("f.yaml", OFFSETS.encode())
    [doc] = compose.parse(source)
    for name, expected in (("a", "é"), ("b", '[x, "ü😀"]'), ("c", "😀d\r\n  e"), ("d", "1")):
        node = trees.get(doc.root, name)
        assert node is not None
        assert source.text[node.start_mark.index : node.end_mark.index] == expected, name
    assert trees.to_data(doc.root) == {"a": "é", "b": ["x", "ü😀"], "c": "😀d e", "d": 1}


def test_both_composers_agree_on_errors(composer: str) -> None:
    for text, code, where in (
        ("a: 1\nb: 2\na: 3\n", "DRA005", (3, 1)),
        ("a:\n\tb: 1\n", "DRA006", (2, 1)),
        ("a: [1, 2\nb: 3\n", "DRA004", None),
        ("a: \x01\n", "DRA004", (1, 4)),
    ):
        with pytest.raises(InputProblem) as problem:
            _docs(text)
        f = problem.value.finding
        assert f.code == code, (text, f)
        if where:
            assert (f.line, f.col) == where, (text, f)


def test_fallback_is_announced_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without libyaml the pure-Python composer is used; stderr says so once."""
    monkeypatch.setattr(compose, "_CComposer", None)
    monkeypatch.setattr(compose, "_warned", False)
    assert trees.to_data(_docs("a: 010\n")[0].root) == {"a": 8}
    _docs("b: 1\n")
    err = capsys.readouterr().err
    assert err.count("pure-Python parser") == 1


ALIAS_BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_alias_bomb_is_refused_as_kubernetes_refuses_it(composer: str) -> None:
    """Nine levels of nine aliases (9**9 values from about 540 bytes): go-yaml's
    alias ratio limit, applied without expanding the bomb."""
    assert len(ALIAS_BOMB) < 600 and ALIAS_BOMB.count("*") == 72, ALIAS_BOMB
    with pytest.raises(InputProblem) as problem:
        _docs(ALIAS_BOMB)
    f = problem.value.finding
    assert f.code == "DRA030" and "excessive aliasing" in f.message
    assert f.line > 1  # at an anchor being expanded, not 1:1


def test_a_few_aliases_are_fine() -> None:
    """Helm output reuses anchors: well under the ratio, nothing reported."""
    text = "a: &a {x: 1}\n" + "".join(f"k{i}: *a\n" for i in range(500))
    [doc] = _docs(text)
    assert trees.to_data(doc.root)["k499"] == {"x": 1}


@pytest.mark.parametrize("text", ["a: &x {b: *x}\n", "a: &x [*x]\n", "&x [a, {b: [*x]}]\n"])
def test_recursive_alias_is_a_finding(composer: str, text: str) -> None:
    with pytest.raises(InputProblem) as problem:
        _docs(text)
    f = problem.value.finding
    assert f.code == "DRA030" and "itself" in f.message and "&x" in f.message


def test_merge_keys_are_resolved_as_kubernetes_does() -> None:
    """go-yaml v2: merged entries take the merge key's place, later keys win, and
    of a merged list the first mapping wins."""
    [doc] = _docs(
        "base: &base {a: 1, b: 1}\nother: &other {b: 2, c: 2}\n"
        "m: {<<: [*base, *other], c: 3}\nn: {a: 0, <<: *base}\n"
    )
    data = trees.to_data(doc.root)
    assert data["m"] == {"a": 1, "b": 1, "c": 3}
    assert data["n"] == {"a": 1, "b": 1}
    assert trees.scalar(trees.get(trees.get(doc.root, "m"), "a")) == "1"


@pytest.mark.parametrize("opener", ["[", "{a: "])
def test_deep_nesting_is_a_finding(composer: str, opener: str) -> None:
    with pytest.raises(InputProblem) as problem:
        _docs(opener * 100_000)
    assert problem.value.finding.code == "DRA004"


_STRINGS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: jobs
  annotations: &notes
    flow: "{a: 1}"
    one: plain
data:
  job.yaml: |
    apiVersion: batch/v1
    kind: Job
  again: *notes
  list: ["x\\ny", z, {inner: "{b}"}]
  ? |
    a key
    of two lines
  : value
"""


def test_text_scalars_are_the_walks_multi_line_and_brace_scalars() -> None:
    """``text_scalars`` (what ``unconverted.embedded`` looks through, in one loop) is the
    walk's scalars that span lines or hold a brace, each once, in the walk's order: an
    aliased mapping is not looked at twice, keys are."""
    [doc] = _docs(_STRINGS)
    assert doc.root is not None
    expected = [
        n
        for n in trees.walk(doc.root)
        if isinstance(n, yaml_nodes.ScalarNode) and ("\n" in n.value or "{" in n.value)
    ]
    found = trees.text_scalars(doc.root)
    assert [n.value for n in found] == [
        "{a: 1}",
        "apiVersion: batch/v1\nkind: Job\n",
        "x\ny",
        "{b}",
        "a key\nof two lines\n",
    ]
    assert [id(n) for n in found] == [id(n) for n in expected]
