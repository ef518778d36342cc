"""What users see of the schemas: the findings of bad objects and the errors of a bad
configuration, as jsonschema finds them.

The bundled schemas and the configuration schema are valid for their metaschema
(checked here, not at run time). Every schema error names a field that is in the
object (or, for a missing one, in the mapping that lacks it), so a finding has a
line and column; on every object of the corpus and on hypothesis mutations of real
objects. A configuration error names its key and points at its line.
"""

from __future__ import annotations

import copy
import datetime
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import validators
from jsonschema.exceptions import SchemaError

from dra_migrate.convert.mapping import load_config
from dra_migrate.k8s import schemas
from dra_migrate.k8s.schemas import KUBE_VERSIONS, validate_object, validate_pod_spec
from dra_migrate.report.findings import ConfigError
from tests.conftest import REPO, SHARED

KUBE_DIR = REPO / "schemas" / "kubernetes"
CONFIG_SCHEMA = REPO / "schemas" / "config.schema.json"
CORPUS = SHARED / "corpus"


@cache
def _schema(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# --- the schemas themselves ------------------------------------------------------------


def test_every_bundled_schema_is_valid_for_its_metaschema() -> None:
    """The run does not check them (about a second a file): they are package data.

    The 98 files share most of their definitions, so each distinct definition and each
    distinct top-level schema is checked once, as the definitions of one schema of
    the same draft (the metaschema checks every subschema by the same rules)."""
    paths = sorted(p for p in KUBE_DIR.glob("*.json") if p.name != "index.json")
    assert len(paths) > 50
    distinct: dict[str, Any] = {}
    for path in paths:
        schema = _schema(path)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", path.name
        parts = [{k: v for k, v in schema.items() if k != "$defs"}, *schema["$defs"].values()]
        for part in parts:
            distinct.setdefault(json.dumps(part, sort_keys=True), part)
    assert len(distinct) > 100
    every = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {str(i): part for i, part in enumerate(distinct.values())},
    }
    validators.validator_for(every).check_schema(every)
    config = _schema(CONFIG_SCHEMA)
    assert validators.validator_for(config).__name__ == "Draft7Validator"
    validators.validator_for(config).check_schema(config)


def test_a_schema_error_in_a_definition_is_found() -> None:
    """The check above would see a broken definition."""
    broken = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"0": {"type": "decimal"}},
    }
    with pytest.raises(SchemaError):
        validators.validator_for(broken).check_schema(broken)


# --- every error has a place in the object ----------------------------------------------


def _at(obj: Any, path: tuple[str | int, ...]) -> bool:
    """Whether ``path`` leads to something in ``obj``."""
    for part in path:
        try:
            obj = obj[part]
        except (KeyError, IndexError, TypeError):
            return False
    return True


def _placed(obj: Any, errors: list[schemas.SchemaError]) -> None:
    """Each error is at a field of ``obj``, or names a missing one of a mapping in it."""
    for error in errors:
        assert isinstance(error.message, str) and error.message
        if error.message.startswith("missing required field"):
            assert _at(obj, error.path[:-1]) and not _at(obj, error.path), error
        else:
            assert _at(obj, error.path), error
    assert errors == sorted(set(errors), key=schemas._sort_key)  # sorted, each once


def _schema_file(obj: dict[str, Any]) -> str | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    return schemas._object_file(KUBE_VERSIONS[-1], api_version, kind)


def _corpus_objects() -> list[Any]:
    if not CORPUS.is_dir():
        return []
    found = []
    for path in sorted(CORPUS.rglob("*.y*ml")):
        try:
            docs = list(yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))
        except yaml.YAMLError:
            continue
        for doc in docs:
            items = (
                doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
            )
            for obj in items or ():
                if isinstance(obj, dict) and schemas.served(
                    str(obj.get("apiVersion")), str(obj.get("kind"))
                ):
                    found.append(pytest.param(obj, id=f"{path.name}:{obj.get('kind')}"))
    return found


_CORPUS = _corpus_objects()


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"../shared/corpus not found at {CORPUS}")
@pytest.mark.parametrize("obj", _CORPUS or [None])
def test_corpus_objects_get_findings_at_their_fields(obj: Any) -> None:
    if obj is None:
        pytest.skip("no corpus object has a bundled schema")
    for version in schemas.served(obj["apiVersion"], obj["kind"]):
        _placed(obj, validate_object(obj, version))


_DEPLOYMENT: dict[str, Any] = {
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
                        "livenessProbe": {"httpGet": {"port": 8080}},
                    }
                ],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpus"}],
                "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
            },
        },
    },
}

_TEMPLATE: dict[str, Any] = {
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
    0,
    -3,
    2.0,
    2.5,
    "",
    "x",
    "All",
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


@st.composite
def _mutated(draw: st.DrawFn) -> Any:
    """A real object with up to four edits below apiVersion and kind (they pick the
    schema): a value replaced by an odd one, an entry deleted, a key or an item added."""
    obj = copy.deepcopy(draw(st.sampled_from([_DEPLOYMENT, _TEMPLATE])))
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(obj) if len(p) > 2]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        holder = obj
        for part in path[:-1]:
            holder = holder[part]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        value = copy.deepcopy(draw(st.sampled_from(_ODD_VALUES)))
        if action == "replace":
            holder[path[-1]] = value
        elif action == "delete" and isinstance(holder, dict):
            del holder[path[-1]]
        elif isinstance(holder, dict):
            holder[draw(st.sampled_from(["extra", "Name", "nmae", "requests"]))] = value
        else:
            holder.append(value)
    return obj


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_mutated_objects_get_findings_at_their_fields(obj: Any) -> None:
    _placed(obj, validate_object(obj))


def test_the_real_objects_are_valid() -> None:
    assert validate_object(_DEPLOYMENT) == []
    assert validate_object(_TEMPLATE) == []


# --- the findings' text -------------------------------------------------------------------


def _request(**changes: Any) -> dict[str, Any]:
    obj = copy.deepcopy(_TEMPLATE)
    request = obj["spec"]["spec"]["devices"]["requests"][0]
    for key, value in changes.items():
        if value is None:
            del request[key]
        else:
            request[key] = value
    return obj


REQUEST = "spec.spec.devices.requests[0]"


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            _request(exactly={"deviceClasName": "gpu.nvidia.com"}),
            f"unknown field '{REQUEST}.exactly.deviceClasName'; did you mean 'deviceClassName'?"
            f"\nmissing required field '{REQUEST}.exactly.deviceClassName'",
        ),
        (
            _request(zzz=1),
            f"unknown field '{REQUEST}.zzz'; allowed here: exactly, firstAvailable, name",
        ),
        (_request(name=None), f"missing required field '{REQUEST}.name'"),
        (
            _request(exactly={"deviceClassName": "gpu.nvidia.com", "count": "two"}),
            f"field '{REQUEST}.exactly.count' must be an integer, not a string ('two')",
        ),
        (
            _request(exactly={"deviceClassName": "gpu.nvidia.com", "allocationMode": ["All"]}),
            f"field '{REQUEST}.exactly.allocationMode' must be a string, not a list",
        ),
        (
            {**_TEMPLATE, "apiVersion": "resource.k8s.io/v1", "kind": 7},
            "missing required field 'kind' (it selects the schema)",
        ),
    ],
    ids=["misspelt", "unknown", "missing", "type", "type-list", "no-kind"],
)
def test_object_findings_name_the_field(obj: dict[str, Any], expected: str) -> None:
    """Sorted by path: the misspelt key, then the mapping that lacks the real one."""
    assert "\n".join(e.message for e in validate_object(obj)) == expected


def test_pod_spec_findings_name_the_field() -> None:
    spec = copy.deepcopy(_DEPLOYMENT["spec"]["template"]["spec"])
    container = spec["containers"][0]
    container["allowPrivilegedEscalation"] = True
    container["ports"][0]["containerPort"] = "80"
    container["resources"]["limits"]["cpu"] = [1]
    container["livenessProbe"]["httpGet"]["port"] = True  # a string or an integer
    assert [(e.location, e.message) for e in validate_pod_spec(spec)] == [
        (
            "containers[0].allowPrivilegedEscalation",
            "unknown field 'containers[0].allowPrivilegedEscalation'",
        ),
        (
            "containers[0].livenessProbe.httpGet.port",
            "field 'containers[0].livenessProbe.httpGet.port' must be a string or an integer, "
            "not a boolean (True)",
        ),
        (
            "containers[0].ports[0].containerPort",
            "field 'containers[0].ports[0].containerPort' must be an integer, not a string ('80')",
        ),
        (
            "containers[0].resources.limits.cpu",
            "field 'containers[0].resources.limits.cpu' must be a string or a number, not a list",
        ),
    ]


def test_an_enum_finding_lists_the_choices() -> None:
    obj = {**_TEMPLATE, "kind": "ResourceClaimTemplate", "apiVersion": "resource.k8s.io/v1"}
    schema_file = _schema_file(obj)
    assert schema_file is not None
    error = schemas._convert(
        next(schemas._validator(schema_file).iter_errors({**obj, "kind": "Other"}))
    )
    assert [e.message for e in error] == [
        "field 'kind' must be one of 'ResourceClaimTemplate', not 'Other'"
    ]


# --- the configuration ----------------------------------------------------------------------


def _example() -> dict[str, Any]:
    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    example = yaml.safe_load(re.findall(r"```yaml\n(.*?)```", text, re.S)[0])
    assert isinstance(example, dict) and example.get("resources")
    return example


def _configs() -> list[Path]:
    return sorted(REPO.glob("tests/fixtures/**/.dra-migrate.yaml")) + sorted(
        REPO.glob("examples/**/.dra-migrate.yaml")
    )


def test_every_example_configuration_is_valid() -> None:
    validator = validators.validator_for(_schema(CONFIG_SCHEMA))(_schema(CONFIG_SCHEMA))
    configs = _configs()
    assert configs
    for path in configs:
        assert list(validator.iter_errors(yaml.safe_load(path.read_text()))) == [], path
    assert list(validator.iter_errors(_example())) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("version: 2\n", "1:10: invalid configuration at version: 1 was expected"),
        (
            "target: v2\n",
            "1:9: invalid configuration at target: 'v2' is not one of ['v1beta1', 'v1beta2', 'v1']",
        ),
        (
            "featureGates: {'bad gate': true}\n",
            "1:15: invalid configuration at featureGates: 'bad gate' does not match "
            "'^[A-Za-z][A-Za-z0-9]*$'",
        ),
        (
            "maxFileSize: 64 MB\n",
            "1:14: invalid configuration at maxFileSize: '64 MB' is not valid under any of "
            "the given schemas",
        ),
        ("ignore:\n- ''\n", "2:3: invalid configuration at ignore.0: '' should be non-empty"),
        (
            "ignore:\n- codes: [DRA205]\n",
            "2:3: invalid configuration at ignore.0: 'path' is a required property",
        ),
        (
            "ignore:\n- path: x\n  codes: [dra205]\n",
            "3:11: invalid configuration at ignore.0.codes.0: 'dra205' does not match "
            "'^DRA[0-9]{3}$'",
        ),
        (
            "version: 1\nresorces: []\n",
            "2:1: invalid configuration at (top level): unknown key 'resorces': did you "
            "mean 'resources'?",
        ),
        (
            "resources:\n- name: example.com/gpu\n  deviceClass: Not_A_Name\n",
            "3:16: invalid configuration at resources.0.deviceClass: 'Not_A_Name' does not "
            "match '^([a-z0-9.-]|\\\\{[a-zA-Z_][a-zA-Z0-9_]*\\\\})+$'",
        ),
    ],
    ids=["const", "enum", "key-pattern", "one-of", "if-then", "if-else", "pattern", "extra", "ref"],
)
def test_configuration_errors_name_the_key_at_its_line(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / ".dra-migrate.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    error = raised.value
    assert f"{error.line}:{error.col}: {error}" == expected


def test_a_valid_configuration_is_checked_once(tmp_path: Path) -> None:
    """Its verdict is kept in the user's cache folder: the next run reads the file without
    jsonschema; a changed file is checked again, and a damaged verdict is checked again."""
    config = tmp_path / "project" / ".dra-migrate.yaml"
    config.parent.mkdir()
    config.write_text("version: 1\ntarget: v1\n")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    code = (
        "import sys\nfrom dra_migrate.convert.mapping import load_config\n"
        "try:\n    load_config(sys.argv[1]); print('valid', 'jsonschema' in sys.modules)\n"
        "except Exception as e:\n    print(e)\n"
    )

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", code, str(config)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    assert run() == "valid True"  # checked by jsonschema
    assert run() == "valid False"  # the kept verdict
    config.write_text("version: 1\ntarget: v2\n")
    assert run().startswith("invalid configuration at target:")
    assert run().startswith("invalid configuration at target:")  # an error is never kept
    config.write_text("version: 1\ntarget: v1\n")
    assert run() == "valid False"  # the same bytes as before
    for kept in (tmp_path / "cache" / "dra-migrate").glob("schema-valid-*.json"):
        kept.write_text('{"value": tru')
    assert run() == "valid True"


def test_a_verdict_book_keeps_only_what_was_found_valid() -> None:
    """The book of one file's conversion: a valid verdict is held and answers without
    checking; what was wrong is checked again (and reported) on every run."""
    from dra_migrate.k8s.schemas import VerdictBook

    book = VerdictBook(b"the file")
    book.held = frozenset()  # nothing kept from a run before
    assert book.check("pod.json", b"bad", lambda: ["wrong"]) == ["wrong"]
    assert book.check("pod.json", b"good", lambda: []) == []
    assert len(book.found) == 1
    again = VerdictBook(b"the file")
    again.held = frozenset(book.found)

    def never() -> list[str]:
        raise AssertionError("a held verdict is not checked again")

    assert again.check("pod.json", b"good", never) == []
    assert again.check("pod.json", b"bad", lambda: ["wrong"]) == ["wrong"]
    assert again.check("other.json", b"good", lambda: ["wrong"]) == ["wrong"]  # per schema
