"""helm/values_text.py: a values file edited as text.

A property test sets and deletes keys in generated values files (block and flow
styles, comment lines and trailing comments) and checks that the text loads (YAML 1.1,
as PyYAML reads it) to the expected data and that every line outside the edited entry
stays byte for byte; examples pin the layout a reviewer sees, and the refusals.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate.helm.values_text import MISSING, ValuesText, dotted
from dra_migrate.report.findings import InputProblem

KEYS = st.sampled_from(["a", "b", "gpu", "count", "nvidia.com/gpu", "draEnabled", "x-y"])
SCALARS = st.one_of(
    st.integers(min_value=-5, max_value=10**6),
    st.booleans(),
    st.none(),
    st.text(alphabet="abcXYZ09 ._-/:#'\"", min_size=0, max_size=8),
)
DATA = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.dictionaries(KEYS, inner, min_size=1, max_size=4),
        st.lists(inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
)
VALUES = st.dictionaries(KEYS, DATA, min_size=1, max_size=4)
NEW = st.one_of(
    SCALARS,
    st.dictionaries(KEYS, SCALARS, min_size=1, max_size=2),
    st.lists(st.dictionaries(KEYS, SCALARS, min_size=1, max_size=2), min_size=1, max_size=2),
)


def _render(data: dict[str, Any], flow: bool | None, comments: list[int]) -> str:
    text = yaml.safe_dump(data, default_flow_style=flow, width=10_000, sort_keys=False)
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    for i, line in enumerate(lines):
        kind = comments[i % len(comments)] if comments else 0
        if kind == 1:
            out.append("# a comment line\n")
        out.append(line[:-1] + "  # trailing\n" if kind == 2 else line)
    return "".join(out)


def _mapping_paths(data: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every path of keys through mappings only (what a recipe sets and deletes)."""
    out: list[tuple[str, ...]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            out.append((*prefix, key))
            out.extend(_mapping_paths(value, (*prefix, key)))
    return out


def _kept_outside(old: str, new: str, allowed: range) -> None:
    """Every old line outside ``allowed`` (0-based line numbers) is in the new text,
    unchanged: those before it start the new text, those after it end it."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    before, after = a[: allowed.start], a[allowed.stop :]
    assert b[: len(before)] == before
    assert len(b) >= len(before) + len(after)
    assert b[len(b) - len(after) :] == after


def _entry_lines(text: str, path: tuple[str | int, ...]) -> range:
    """The lines of the entry at ``path`` (its key's line to its value's last)."""
    from dra_migrate.manifests import compose
    from dra_migrate.manifests.sources import decode

    node: Any = next(d for d in compose.parse(decode("v.yaml", text.encode())) if d.root).root
    key_line = 0
    for step in path:
        for key, value in node.value:
            if key.value == step:
                key_line, node = key.start_mark.line, value
                break
    from dra_migrate.manifests.trees import content_end

    end = max(content_end(node, text) - 1, 0)
    return range(key_line, max(text.count("\n", 0, end), key_line) + 1)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=VALUES,
    flow=st.sampled_from([False, None]),
    comments=st.lists(st.integers(0, 2), max_size=5),
    pick=st.integers(min_value=0),
    extra=st.lists(KEYS, min_size=0, max_size=2),
    value=NEW,
)
def test_set_loads_as_expected_and_keeps_every_other_line(
    data: dict[str, Any],
    flow: bool | None,
    comments: list[int],
    pick: int,
    extra: list[str],
    value: Any,
) -> None:
    text = _render(data, flow, comments)
    paths = _mapping_paths(data)
    base = paths[pick % len(paths)]
    path = (*base, *extra)
    expected = copy.deepcopy(data)
    node: Any = expected
    for step in path[:-1]:
        if not isinstance(node.get(step, {}), dict) and node.get(step) is not None:
            return  # through a list or a scalar: a recipe never sets such a path
        if node.get(step) is None:
            node[step] = {}
        node = node[step]
    node[path[-1]] = value
    edited = ValuesText.decode("values.yaml", text.encode())
    edited.set(path, value)
    assert yaml.safe_load(edited.text) == expected
    # the lines of the entry that changed (or of its nearest existing ancestor, which
    # a null or an empty collection there becomes a block of) may change; no other
    existing = base
    while len(existing) > 1 and isinstance(data, dict):
        holder: Any = data
        for step in existing[:-1]:
            holder = holder[step]
        if holder.get(existing[-1]) in (None, {}, []) or existing == base:
            break
        existing = existing[:-1]
    allowed = _entry_lines(text, existing)
    _kept_outside(text, edited.text, range(allowed.start, allowed.stop))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=VALUES,
    flow=st.sampled_from([False, None]),
    comments=st.lists(st.integers(0, 2), max_size=5),
    pick=st.integers(min_value=0),
)
def test_delete_loads_as_expected_and_keeps_every_other_line(
    data: dict[str, Any], flow: bool | None, comments: list[int], pick: int
) -> None:
    text = _render(data, flow, comments)
    paths = _mapping_paths(data)
    path = paths[pick % len(paths)]
    expected = copy.deepcopy(data)
    gone = path
    while True:  # a mapping left empty goes too, up to the top-level key
        holder: Any = expected
        for step in gone[:-1]:
            holder = holder[step]
        del holder[gone[-1]]
        if holder or len(gone) == 1:
            break
        gone = gone[:-1]
    edited = ValuesText.decode("values.yaml", text.encode())
    try:
        assert edited.delete(path)
    except InputProblem as exc:  # the first key of a list item shares its line
        assert exc.finding.code == "DRA008"
        return
    assert (yaml.safe_load(edited.text) or {}) == expected
    lines = _entry_lines(text, gone)
    old = text.splitlines(keepends=True)
    if "{" in old[lines.start]:  # inside a flow mapping: edited within its braces
        _kept_outside(text, edited.text, lines)
        return
    kept = [line for line in old[lines.start : lines.stop] if line.lstrip().startswith("#")]
    # exactly the entry's lines go, but its comment lines
    assert edited.text.splitlines(keepends=True) == (old[: lines.start] + kept + old[lines.stop :])
    # comment lines of the deleted entry stay; its own trailing comment goes
    old_comments = [line for line in text.splitlines() if line.startswith("# a comment")]
    assert [line for line in edited.text.splitlines() if line.startswith("# a comment")] == (
        old_comments
    )


OLLAMA = """\
ollama:
  gpu:
    # -- Enable GPU integration
    enabled: true

    # -- Enable DRA GPU integration
    draEnabled: false

    # -- DRA GPU DriverClass
    draDriverClass: "gpu.nvidia.com"
    number: 2 # two cards
"""


def test_a_scalar_is_replaced_in_place_with_its_quotes_and_comments() -> None:
    edited = ValuesText.decode("values.yaml", OLLAMA.encode())
    edited.set(("ollama", "gpu", "draEnabled"), True)
    edited.set(("ollama", "gpu", "draDriverClass"), "gpu.example.com")
    assert edited.text == OLLAMA.replace("draEnabled: false", "draEnabled: true").replace(
        '"gpu.nvidia.com"', '"gpu.example.com"'
    )


def test_missing_mappings_are_created_at_the_file_indentation() -> None:
    text = "image:\n    tag: v1\nollama:\n    port: 1\n"
    edited = ValuesText.decode("values.yaml", text.encode())
    edited.set(("ollama", "gpu", "draEnabled"), True)
    assert edited.text == (
        "image:\n    tag: v1\nollama:\n    port: 1\n    gpu:\n        draEnabled: true\n"
    )


def test_an_empty_flow_value_becomes_a_block_and_keeps_its_comment() -> None:
    text = "worker:\n  resourceClaims: []  # none yet\n  replicas: 1\n"
    edited = ValuesText.decode("values.yaml", text.encode())
    edited.set(("worker", "resourceClaims"), [{"name": "gpu", "resourceClaimTemplateName": "t"}])
    assert edited.text == (
        "worker:\n  resourceClaims:  # none yet\n  - name: gpu\n"
        "    resourceClaimTemplateName: t\n  replicas: 1\n"
    )


def test_a_flow_mapping_is_edited_inside_its_braces() -> None:
    text = "worker:\n  resources: {limits: {cpu: 2, nvidia.com/gpu: 1}}\n"
    edited = ValuesText.decode("values.yaml", text.encode())
    edited.delete(("worker", "resources", "limits", "nvidia.com/gpu"))
    edited.set(("worker", "resources", "claims"), [{"name": "gpu"}])
    assert edited.text == "worker:\n  resources: {limits: {cpu: 2}, claims: [{name: gpu}]}\n"


def test_a_deleted_key_takes_its_own_comment_and_leaves_comment_lines() -> None:
    text = (
        "resources:\n  limits:\n    cpu: 2\n    # one card per worker\n"
        "    nvidia.com/gpu: 1  # adjust\n"
    )
    edited = ValuesText.decode("values.yaml", text.encode())
    assert edited.delete(("resources", "limits", "nvidia.com/gpu"))
    assert edited.text == "resources:\n  limits:\n    cpu: 2\n    # one card per worker\n"
    assert not edited.delete(("resources", "limits", "nvidia.com/gpu"))


def test_a_mapping_left_empty_goes_with_its_last_key() -> None:
    text = "worker:\n  resources:\n    limits:\n      nvidia.com/gpu: 1\n  replicas: 2\n"
    edited = ValuesText.decode("values.yaml", text.encode())
    edited.delete(("worker", "resources", "limits", "nvidia.com/gpu"))
    assert edited.text == "worker:\n  replicas: 2\n"


def test_crlf_and_an_empty_file() -> None:
    edited = ValuesText.decode("values.yaml", b"a:\r\n  b: 1\r\n")
    edited.set(("a", "c"), "x")
    assert edited.encode() == b"a:\r\n  b: 1\r\n  c: x\r\n"
    empty = ValuesText.decode("values.yaml", b"# only a comment\n")
    empty.set(("ollama", "gpu", "draEnabled"), True)
    assert empty.text == "# only a comment\nollama:\n  gpu:\n    draEnabled: true\n"
    assert empty.get(("ollama", "gpu", "draEnabled")) is True
    assert empty.get(("ollama", "nope")) is MISSING


@pytest.mark.parametrize(
    ("text", "path", "code", "line"),
    [
        ("base: &gpu\n  count: 1\nworker: *gpu\n", ("worker", "count"), "DRA008", 1),
        ("worker:\n  <<: {a: 1}\n  b: 2\n", ("worker", "c"), "DRA008", 2),
        ("worker: 3\n", ("worker", "resources"), "DRA004", 1),
        ("a: 1\na: 2\n", ("a",), "DRA005", 2),
        ("a: 1\n---\nb: 2\n", ("a",), "DRA004", 3),
    ],
)
def test_what_cannot_be_edited_safely_is_refused_with_a_position(
    text: str, path: tuple[str, ...], code: str, line: int
) -> None:
    with pytest.raises(InputProblem) as raised:
        edited = ValuesText.decode("chart/values.yaml", text.encode())
        edited.set(path, True)
    problem = raised.value.finding
    assert (problem.code, problem.path, problem.line) == (code, "chart/values.yaml", line)


def test_dotted_escapes_keys_with_dots() -> None:
    assert dotted(("worker", "resources", "limits", "nvidia.com/gpu")) == (
        "worker.resources.limits.nvidia\\.com/gpu"
    )
    assert dotted(("decode", "containers", 0, "resources")) == "decode.containers[0].resources"
