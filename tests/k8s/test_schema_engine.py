"""``schema_engine`` gives jsonschema's answers for the bundled schemas, faster.

The engine is held to the reference (jsonschema's Draft 2020-12 validator with
the type checker of ``schemas``) on every object of the corpus and on
hypothesis mutations of real objects: the same errors, each with the same
path, keyword and message.
"""

from __future__ import annotations

import copy
import datetime
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate.k8s import schema_engine, schemas
from dra_migrate.k8s.schemas import KUBE_VERSIONS, validate_object
from tests.conftest import REPO, SHARED

KUBE_DIR = REPO / "schemas" / "kubernetes"
SHARED = SHARED / "corpus"
NEWEST = KUBE_VERSIONS[-1]


@cache
def _schema(name: str) -> Any:
    return json.loads((KUBE_DIR / name).read_text(encoding="utf-8"))


@cache
def _engine(name: str) -> Any:
    # as ``schemas`` compiles them: each definition when an instance first reaches it
    return schema_engine.compile_schema(_schema(name), lazy_refs=True)


@cache
def _reference(name: str) -> Any:
    return schemas.reference_validator(_schema(name))


def _answers(errors: Any) -> list[tuple[tuple[str, ...], str, str]]:
    return sorted((tuple(map(str, e.absolute_path)), str(e.validator), e.message) for e in errors)


def _agree(name: str, instance: Any) -> list[tuple[tuple[str, ...], str, str]]:
    ours = _answers(_engine(name)(instance))
    theirs = _answers(_reference(name).iter_errors(instance))
    assert ours == theirs, (name, instance)
    return ours


def _schema_file(obj: dict[str, Any]) -> str | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    try:
        return schemas._choose_object_file(api_version, kind, None)
    except schemas.SchemaNotFound:
        return None


def test_every_bundled_schema_compiles() -> None:
    """No bundled schema falls back to jsonschema: each stays on the fast path."""
    names = sorted(p.name for p in KUBE_DIR.glob("*.json") if p.name != "index.json")
    assert len(names) > 50
    for name in names:
        schema_engine.compile_schema(_schema(name))


def _corpus_objects() -> list[Any]:
    if not SHARED.is_dir():
        return []
    found = []
    for path in sorted(SHARED.rglob("*.y*ml")):
        try:
            docs = list(yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))
        except yaml.YAMLError:
            continue
        for doc in docs:
            items = (
                doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
            )
            for obj in items or ():
                if isinstance(obj, dict) and _schema_file(obj):
                    found.append(pytest.param(obj, id=f"{path.name}:{obj.get('kind')}"))
    return found


_CORPUS = _corpus_objects()


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"../shared/corpus not found at {SHARED}")
@pytest.mark.parametrize("obj", _CORPUS or [None])
def test_corpus_objects_get_the_reference_answers(obj: Any) -> None:
    if obj is None:
        pytest.skip("no corpus object has a bundled schema")
    name = _schema_file(obj)
    assert name is not None
    _agree(name, obj)


# --- mutations of real objects --------------------------------------------------------

_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "train", "labels": {"app": "train"}},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "train"}},
        "template": {
            "metadata": {"labels": {"app": "train"}},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "img:1",
                        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                        "resources": {"limits": {"nvidia.com/gpu": 2, "cpu": "1"}},
                        "resources_claims": None,
                    }
                ],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpus"}],
                "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
            },
        },
    },
}
del _DEPLOYMENT["spec"]["template"]["spec"]["containers"][0]["resources_claims"]  # type: ignore[index]

_TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "gpus", "namespace": "ml"},
    "spec": {
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.nvidia.com",
                            "count": 2,
                            "allocationMode": "ExactCount",
                            "selectors": [{"cel": {"expression": "true"}}],
                        },
                    }
                ],
                "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.nvidia.com/uuid"}],
                "config": [
                    {
                        "requests": ["gpu"],
                        "opaque": {"driver": "gpu.nvidia.com", "parameters": {"a": 1}},
                    }
                ],
            }
        }
    },
}

_ODD_VALUES = [
    None,
    True,
    False,
    0,
    1,
    -3,
    2.0,
    2.5,
    "",
    "x",
    "ExactCount",
    "All",
    "TCP",
    datetime.date(2024, 1, 2),
    [],
    [1, "a"],
    {},
    {"unknown": 1},
]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def _mutate(
    draw: st.DrawFn, obj: Any, odd: list[Any], keys: list[Any], depth: int, times: int
) -> Any:
    """``obj`` with ``times`` random edits below ``depth``: a value replaced by an odd
    one, an entry deleted, a key or a list item added."""
    for _ in range(draw(st.integers(1, times))):
        paths = [p for p in _paths(obj) if len(p) > depth]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        holder = obj
        for part in path[:-1]:
            holder = holder[part]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        value = copy.deepcopy(draw(st.sampled_from(odd)))
        if action == "replace":
            holder[path[-1]] = value
        elif action == "delete" and isinstance(holder, dict):
            del holder[path[-1]]
        elif isinstance(holder, dict):
            holder[draw(st.sampled_from(keys))] = value
        else:
            holder.append(value)
    return obj


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[str, Any]:
    base = draw(st.sampled_from([_DEPLOYMENT, _TEMPLATE]))
    # below depth 2: apiVersion and kind pick the schema
    keys = ["extra", "Name", 7, "nmae", "requests"]
    obj = _mutate(draw, copy.deepcopy(base), _ODD_VALUES, keys, 2, 4)
    name = _schema_file(obj)
    assert name is not None
    return name, obj


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_mutated_objects_get_the_reference_answers(case: tuple[str, Any]) -> None:
    name, obj = case
    _agree(name, obj)


def test_valid_objects_have_no_errors() -> None:
    assert _agree(_schema_file(_DEPLOYMENT) or "", _DEPLOYMENT) == []
    assert _agree(_schema_file(_TEMPLATE) or "", _TEMPLATE) == []
    assert validate_object(_TEMPLATE) == []


# --- the engine on its own --------------------------------------------------------------


def test_one_of_names_every_schema_an_instance_matches() -> None:
    schema = {"oneOf": [{"type": "integer"}, {"type": "number"}, {"type": "string"}]}
    errors = schema_engine.compile_schema(schema)(3)
    reference = list(schemas.reference_validator(schema).iter_errors(3))
    assert [e.message for e in errors] == [e.message for e in reference]
    assert "is valid under each of" in errors[0].message
    assert schema_engine.compile_schema(schema)(None)[0].validator == "oneOf"


@pytest.mark.parametrize("lazy_refs", [False, True], ids=["eager", "lazy"])
def test_a_recursive_reference_is_followed(lazy_refs: bool) -> None:
    schema = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"child": {"$ref": "#/$defs/node"}, "v": {"type": "integer"}},
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    }
    deep = {"child": {"child": {"v": "x", "bad": 1}}}
    check = schema_engine.compile_schema(schema, lazy_refs=lazy_refs)
    for _ in range(2):  # the second time, lazily compiled definitions are reused
        assert _answers(check(deep)) == _answers(
            schemas.reference_validator(schema).iter_errors(deep)
        )


def test_booleans_are_not_numbers_and_whole_floats_are_integers() -> None:
    check = schema_engine.compile_schema({"type": "integer"})
    assert check(True) and not check(3) and not check(3.0) and check(3.5)
    enum = schema_engine.compile_schema({"enum": [1, [0]]})
    assert enum(True) and enum([False]) and not enum(1.0) and not enum([0])


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "patternProperties": {"^a": {}}},
        {"anyOf": [{"type": "string"}]},
        {"properties": {"a": {"not": {"type": "string"}}}},
        {"uniqueItems": True},
        {"$ref": "https://example.com/other.json"},
        {"type": "decimal"},
    ],
)
def test_keywords_outside_the_subset_are_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(schema_engine.Unsupported):
        schema_engine.compile_schema(schema)


# --- the configuration schema (draft 7) -------------------------------------------------

CONFIG_SCHEMA = REPO / "schemas" / "config.schema.json"


@cache
def _config_engine() -> Any:
    return schema_engine.compile_schema(json.loads(CONFIG_SCHEMA.read_text()))


@cache
def _config_reference() -> Any:
    import jsonschema

    return jsonschema.Draft7Validator(json.loads(CONFIG_SCHEMA.read_text()))


def _config_example() -> dict[str, Any]:
    import re

    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    example = yaml.safe_load(re.findall(r"```yaml\n(.*?)```", text, re.S)[0])
    assert isinstance(example, dict) and example.get("resources")
    return example


def _ordered(errors: Any) -> list[tuple[tuple[str, ...], str, str]]:
    """What the configuration check reads: errors sorted by path, otherwise in order."""
    return [
        (tuple(map(str, e.absolute_path)), str(e.validator), e.message)
        for e in sorted(errors, key=lambda e: list(map(str, e.absolute_path)))
    ]


# a configuration is read by load.to_data, which never gives a date (the engine's type
# checker, shared with the Kubernetes schemas, takes a date for a string)
_CONFIG_ODD = [
    *(v for v in _ODD_VALUES if not isinstance(v, datetime.date)),
    *("1.34", "v2", "64Mi", "64 MB", "DRA205", "dra205", "x" * 70, -1),
]


@st.composite
def _mutated_config(draw: st.DrawFn) -> Any:
    keys = ["extra", "Bad Key", "DRAx", "codes", "when", "version"]
    return _mutate(draw, _config_example(), _CONFIG_ODD, keys, 0, 3)


def test_the_configuration_schema_compiles_and_the_example_is_valid() -> None:
    assert _ordered(_config_engine()(_config_example())) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated_config())
def test_mutated_configurations_get_the_reference_answers(config: Any) -> None:
    assert _ordered(_config_engine()(config)) == _ordered(_config_reference().iter_errors(config))


def test_a_schema_outside_the_subset_is_checked_by_jsonschema(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """schemas falls back to jsonschema for a keyword the engine does not implement."""
    schema = {"type": "object", "properties": {"name": {"not": {"const": "bob"}}}}
    (tmp_path / "kubernetes").mkdir()
    (tmp_path / "kubernetes" / "odd.json").write_text(json.dumps(schema))
    monkeypatch.setattr(schemas, "schema_path", lambda rel: tmp_path / rel)
    schemas._validator.cache_clear()
    try:
        errors = schemas._run("odd.json", {"name": "bob"})
    finally:
        schemas._validator.cache_clear()
    assert [e.message for e in errors] == [
        "field 'name': 'bob' should not be valid under {'const': 'bob'}"
    ]
