"""Tests for the bundled Kubernetes JSON Schemas and ``dra_migrate.k8s.schemas``."""

from __future__ import annotations

import copy
import csv
import datetime
import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import yaml

from dra_migrate.k8s import schemas
from dra_migrate.k8s.schemas import (
    KUBE_VERSIONS,
    SchemaError,
    SchemaNotFound,
    served,
    validate_object,
    validate_pod_spec,
)
from dra_migrate.package_data import schema_path
from tests.conftest import REPO, SHARED

SCHEMAS_DIR = REPO / "schemas"
KUBE_DIR = SCHEMAS_DIR / "kubernetes"
CORPUS = SHARED / "corpus" / "dra"
REFRESH = REPO / "scripts" / "refresh_schemas.py"

HAVE_KV = importlib.util.find_spec("kubernetes_validate") is not None


def _index() -> dict[str, Any]:
    return json.loads((KUBE_DIR / "index.json").read_text(encoding="utf-8"))


# --- objects used below -------------------------------------------------------


def rct(api_version: str, request: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpus"},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


FLAT_REQUEST = {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 1}
EXACT_REQUEST = {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}


def pod(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def gpu_pod_spec() -> dict[str, Any]:
    return {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpus"}],
        "containers": [
            {
                "name": "main",
                "image": "nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04",
                "resources": {"claims": [{"name": "gpu", "request": "gpu"}]},
            }
        ],
    }


def deployment(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": spec},
        },
    }


# --- module API -----------------------------------------------------------------


def test_kube_versions_match_index() -> None:
    assert _index()["kubernetesVersions"] == list(KUBE_VERSIONS)
    assert KUBE_VERSIONS == ("1.32", "1.33", "1.34", "1.35", "1.36", "1.37")


def test_import_does_not_load_jsonschema() -> None:
    code = "import sys, dra_migrate.k8s.schemas; print('jsonschema' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True, text=True
    )
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("api_version", "kind", "expected"),
    [
        ("resource.k8s.io/v1beta1", "ResourceClaimTemplate", KUBE_VERSIONS),
        ("resource.k8s.io/v1beta2", "ResourceClaim", ("1.33", "1.34", "1.35", "1.36", "1.37")),
        ("resource.k8s.io/v1", "DeviceClass", ("1.34", "1.35", "1.36", "1.37")),
        ("resource.k8s.io/v1", "ResourceSlice", ("1.34", "1.35", "1.36", "1.37")),
        ("v1", "Pod", KUBE_VERSIONS),
        ("batch/v1", "CronJob", KUBE_VERSIONS),
        ("resource.k8s.io/v1alpha3", "ResourceClaim", ()),
        ("v1", "ConfigMap", ()),
        # core/v1 has a "ResourceClaim" definition too (the container reference): not an object
        ("v1", "ResourceClaim", ()),
    ],
)
def test_served(api_version: str, kind: str, expected: tuple[str, ...]) -> None:
    assert served(api_version, kind) == expected


def test_v1beta1_flat_request_valid_in_v1beta1_only() -> None:
    for version in KUBE_VERSIONS:
        assert validate_object(rct("resource.k8s.io/v1beta1", FLAT_REQUEST), version) == []
    errors = validate_object(rct("resource.k8s.io/v1", FLAT_REQUEST), "1.34")
    base = ("spec", "spec", "devices", "requests", 0)
    # one error per unknown key, each pointing at the key itself
    assert [e.path for e in errors] == [(*base, "count"), (*base, "deviceClassName")]
    assert "unknown field 'spec.spec.devices.requests[0].deviceClassName'" in errors[1].message
    # v1beta2 has the same exactly/firstAvailable shape as v1
    assert validate_object(rct("resource.k8s.io/v1beta2", FLAT_REQUEST), "1.33") != []


def test_v1_exactly_request_valid() -> None:
    for version in ("1.34", "1.35", "1.36", "1.37", None):
        assert validate_object(rct("resource.k8s.io/v1", EXACT_REQUEST), version) == []
    assert validate_object(rct("resource.k8s.io/v1beta2", EXACT_REQUEST), "1.33") == []
    # ... and not the v1beta1 shape
    assert validate_object(rct("resource.k8s.io/v1beta1", EXACT_REQUEST), "1.32") != []


def test_missing_device_class_name_points_at_it() -> None:
    obj = rct("resource.k8s.io/v1", {"name": "gpu", "exactly": {"count": 1}})
    errors = validate_object(obj, "1.35")
    assert errors == [
        SchemaError(
            ("spec", "spec", "devices", "requests", 0, "exactly", "deviceClassName"),
            "missing required field 'spec.spec.devices.requests[0].exactly.deviceClassName'",
        )
    ]
    assert errors[0].location == "spec.spec.devices.requests[0].exactly.deviceClassName"


def test_v1beta1_device_class_name_required_only_in_132() -> None:
    request = {"name": "gpu", "count": 1}
    errors = validate_object(rct("resource.k8s.io/v1beta1", request), "1.32")
    assert [e.path[-1] for e in errors] == ["deviceClassName"]
    # from 1.33 the schema makes it optional (one of deviceClassName / firstAvailable)
    assert validate_object(rct("resource.k8s.io/v1beta1", request), "1.33") == []


@pytest.mark.parametrize("version", KUBE_VERSIONS)
def test_claim_source_rejected(version: str) -> None:
    spec = gpu_pod_spec()
    spec["resourceClaims"] = [{"name": "gpu", "source": {"resourceClaimTemplateName": "gpus"}}]
    errors = validate_object(pod(spec), version)
    assert [e.path for e in errors] == [("spec", "resourceClaims", 0, "source")]
    assert "'spec.resourceClaims[0].source'" in errors[0].message
    # the same error inside a Deployment's pod template, at the nested path
    errors = validate_object(deployment(spec), version)
    assert [e.path for e in errors] == [("spec", "template", "spec", "resourceClaims", 0, "source")]


def test_unknown_container_field_reported_at_its_path() -> None:
    spec = gpu_pod_spec()
    spec["containers"].append({"name": "side", "image": "busybox", "resourcez": {}})
    errors = validate_object(pod(spec), "1.34")
    assert len(errors) == 1
    assert errors[0].path == ("spec", "containers", 1, "resourcez")
    assert "resourcez" in errors[0].message
    assert "did you mean 'resources'" in errors[0].message


def test_all_errors_sorted_by_path() -> None:
    spec = gpu_pod_spec()
    spec["containers"][0]["ports"] = [{"containerPort": "80"}]
    spec["containers"][0]["resources"]["limits"] = {"cpu": [1]}
    spec["containers"][0]["zzz"] = 1
    spec["resourceClaims"][0]["source"] = {}
    obj = pod(spec)
    obj["metadata"]["labelz"] = {}
    errors = validate_object(obj, "1.36")
    assert [e.path for e in errors] == [
        ("metadata", "labelz"),
        ("spec", "containers", 0, "ports", 0, "containerPort"),
        ("spec", "containers", 0, "resources", "limits", "cpu"),
        ("spec", "containers", 0, "zzz"),
        ("spec", "resourceClaims", 0, "source"),
    ]
    messages = {e.path[-1]: e.message for e in errors}
    assert messages["containerPort"] == (
        "field 'spec.containers[0].ports[0].containerPort' must be an integer, not a string ('80')"
    )
    # Quantity is string-or-number upstream
    assert "must be a string or a number, not a list" in messages["cpu"]


def test_sorting_puts_indexes_in_numeric_order() -> None:
    spec = gpu_pod_spec()
    spec["containers"] = [{"name": f"c{i}", "image": "i", "bad": 1} for i in range(12)]
    errors = validate_pod_spec(spec, "1.34")
    assert [e.path[1] for e in errors] == list(range(12))


def test_request_field_in_container_claims() -> None:
    """``resources.claims[].request`` exists in every bundled version (added in 1.31)."""
    for version in KUBE_VERSIONS:
        assert validate_object(pod(gpu_pod_spec()), version) == []
        assert validate_pod_spec(gpu_pod_spec(), version) == []


def test_validate_pod_spec() -> None:
    spec = gpu_pod_spec()
    spec["containers"][0]["resources"]["claims"][0]["extra"] = True
    errors = validate_pod_spec(spec)
    assert [e.path for e in errors] == [("containers", 0, "resources", "claims", 0, "extra")]
    missing = validate_pod_spec({"containers": [{"image": "x"}]}, "1.32")
    assert [e.path for e in missing] == [("containers", 0, "name")]


def test_version_selection() -> None:
    v1 = rct("resource.k8s.io/v1", EXACT_REQUEST)
    with pytest.raises(SchemaNotFound, match=r"1\.33 does not serve .*1\.34, 1\.35"):
        validate_object(v1, "1.33")
    with pytest.raises(SchemaNotFound, match=r"resource\.k8s\.io/v1beta2"):
        validate_object(rct("resource.k8s.io/v1beta2", EXACT_REQUEST), "1.32")
    with pytest.raises(SchemaNotFound, match=r"Kubernetes 1\.31"):
        validate_object(v1, "1.31")
    with pytest.raises(SchemaNotFound, match="v1alpha3"):
        validate_object(rct("resource.k8s.io/v1alpha3", EXACT_REQUEST))
    with pytest.raises(SchemaNotFound, match="ConfigMap"):
        validate_object({"apiVersion": "v1", "kind": "ConfigMap"})
    with pytest.raises(ValueError, match="not a Kubernetes version"):
        validate_object(v1, "latest")
    # newer than bundled: the newest bundled schemas apply; patch/prefix forms accepted
    for version in ("1.38", "1.99", "v1.34.2", "1.35.0-gke.100", "2.0"):
        assert validate_object(v1, version) == []
    assert isinstance(SchemaNotFound("x"), LookupError)


def test_device_class_without_spec_is_accepted_by_every_release() -> None:
    # The OpenAPI documents before 1.37 mark DeviceClass.spec required, but the API
    # server decodes a missing spec as an empty one, whose fields are all optional
    # (TestValidateClass/good-class has no spec).
    device_class = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "x"},
    }
    assert validate_object(device_class) == []
    assert validate_object(device_class, "1.50") == []
    assert validate_object(device_class, "1.34") == []
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "x"}}
    assert [e.path for e in validate_object(claim, "1.34")] == [("spec",)]


def test_none_uses_newest_serving_version() -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": "x"},
        "spec": {},
    }
    assert validate_object(claim) == []
    with pytest.raises(SchemaNotFound):
        validate_object({**claim, "apiVersion": "resource.k8s.io/v1"}, "1.33")


def test_missing_api_version_or_kind() -> None:
    errors = validate_object({"apiversion": "v1", "kind": "Pod", "spec": {}})
    assert [e.path for e in errors] == [("apiVersion",)]
    errors = validate_object({"metadata": {}})
    assert [e.path for e in errors] == [("apiVersion",), ("kind",)]


def _proxied(value: Any) -> Any:
    """The same data behind read-only mapping proxies (not dicts)."""
    if isinstance(value, dict):
        return MappingProxyType({k: _proxied(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_proxied(v) for v in value]
    return value


def test_yaml_specific_values() -> None:
    """Unquoted YAML timestamps (datetime objects) and any mapping type validate like JSON."""
    text = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpu
  creationTimestamp: 2025-01-02T03:04:05Z
spec:
  driver: gpu.nvidia.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      type: {string: gpu}
      cudaComputeCapability: {version: 8.0.0}
    capacity:
      memory: {value: 40Gi}
"""
    safe = yaml.load(text, Loader=yaml.SafeLoader)
    assert isinstance(safe["metadata"]["creationTimestamp"], datetime.datetime)
    assert validate_object(safe, "1.34") == []
    round_trip = _proxied(yaml.load(text, Loader=yaml.SafeLoader))
    assert validate_object(round_trip, "1.34") == []
    round_trip = _proxied(
        {**safe, "spec": {**safe["spec"], "devices": [{"name": "g", "basic": {}}]}}
    )
    assert [e.path for e in validate_object(round_trip, "1.34")] == [
        ("spec", "devices", 0, "basic")
    ]


def test_validators_are_cached() -> None:
    validate_object(pod(gpu_pod_spec()), "1.36")
    before = schemas._validator.cache_info().hits
    validate_object(pod(gpu_pod_spec()), "1.36")
    assert schemas._validator.cache_info().hits == before + 1


def test_input_is_not_modified() -> None:
    obj = rct("resource.k8s.io/v1", FLAT_REQUEST)
    snapshot = copy.deepcopy(obj)
    validate_object(obj)
    assert obj == snapshot


# --- bundled files ----------------------------------------------------------------


def test_wheel_layout(tmp_path: Path) -> None:
    """In a wheel the data folder is ``dra_migrate/_data/schemas/`` (see pyproject force-include)."""
    package = tmp_path / "dra_migrate"
    shutil.copytree(REPO / "dra_migrate", package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(KUBE_DIR, package / "_data" / "schemas" / "kubernetes")
    code = (
        "import dra_migrate.k8s.schemas as s, dra_migrate.package_data as r; "
        "print(s.__file__, r.schema_path('x'), "
        "s.validate_object({'apiVersion': 'v1', 'kind': 'Pod', 'spec': {'containers': []}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, check=True, capture_output=True, text=True
    )
    assert out.stdout.split() == [
        str(package / "k8s" / "schemas.py"),
        str(package / "_data" / "schemas" / "x"),
        "[]",
    ]


def test_schema_path_points_at_repo_folder() -> None:
    assert (
        Path(schema_path("kubernetes/index.json")).resolve() == (KUBE_DIR / "index.json").resolve()
    )


def test_index_lists_every_file_with_its_sha256() -> None:
    index = _index()
    on_disk = sorted(p.name for p in KUBE_DIR.iterdir() if p.name != "index.json")
    assert sorted(index["files"]) == on_disk
    for name, digest in index["files"].items():
        assert hashlib.sha256((KUBE_DIR / name).read_bytes()).hexdigest() == digest, (
            f"kubernetes/{name} was edited by hand: run scripts/refresh_schemas.py"
        )
    referenced = set()
    for version, entry in index["versions"].items():
        assert version in KUBE_VERSIONS
        referenced.add(entry["PodSpec"])
        for kinds in entry["objects"].values():
            referenced.update(kinds.values())
    assert referenced == set(on_disk), "every file is used and every used file exists"


def test_readme_table_matches_files() -> None:
    readme = (SCHEMAS_DIR / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+)` \| ([\d,]+) \| `([0-9a-f]{64})` \|$", readme, re.MULTILINE)
    table = {path: (int(size.replace(",", "")), digest) for path, size, digest in rows}
    files = {f"kubernetes/{p.name}": p.read_bytes() for p in KUBE_DIR.iterdir()}
    assert sorted(table) == sorted(files), "the README table lists exactly the files in kubernetes/"
    for path, data in files.items():
        assert table[path] == (len(data), hashlib.sha256(data).hexdigest()), (
            f"{path} does not match the README table: run scripts/refresh_schemas.py"
        )
    assert "kubernetes-validate" in readme and "Apache-2.0" in readme
    assert "python scripts/refresh_schemas.py" in readme


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_schema_files_are_self_contained_and_compact() -> None:
    total = 0
    for path in sorted(KUBE_DIR.glob("*.json")):
        data = path.read_bytes()
        total += len(data)
        if path.name == "index.json":
            continue
        schema = json.loads(data)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        defs = schema.get("$defs", {})
        for ref in _refs(schema):
            assert ref.startswith("#/$defs/"), f"{path.name}: non-local $ref {ref}"
            assert ref.removeprefix("#/$defs/") in defs, f"{path.name}: dangling $ref {ref}"
        assert data == (json.dumps(schema, sort_keys=True, separators=(",", ":")) + "\n").encode()
    assert total < 5_000_000


def test_every_indexed_schema_compiles() -> None:
    for entry in _index()["versions"].values():
        for api_version, kinds in entry["objects"].items():
            for kind in kinds:
                errors = validate_object({"apiVersion": api_version, "kind": kind}, None)
                assert all(isinstance(e, SchemaError) for e in errors)


@pytest.mark.skipif(not HAVE_KV, reason="kubernetes_validate is not installed")
def test_refresh_reproduces_bundled_files(tmp_path: Path) -> None:
    for run in ("a", "b"):
        out = tmp_path / run
        out.mkdir()
        shutil.copy(SCHEMAS_DIR / "README.md", out / "README.md")  # keep the hand-written part
        subprocess.run(
            [sys.executable, str(REFRESH), "--out", str(out)],
            check=True,
            capture_output=True,
        )
        generated = sorted(p.name for p in (out / "kubernetes").iterdir())
        assert generated == sorted(p.name for p in KUBE_DIR.iterdir())
        for name in generated:
            assert (out / "kubernetes" / name).read_bytes() == (KUBE_DIR / name).read_bytes(), name
        assert (out / "README.md").read_bytes() == (SCHEMAS_DIR / "README.md").read_bytes()
    check = subprocess.run(
        [sys.executable, str(REFRESH), "--check", "--out", str(SCHEMAS_DIR)], capture_output=True
    )
    assert check.returncode == 0, check.stderr.decode()


# --- parity with the upstream (non-self-contained) schemas --------------------------


@cache
def _upstream_validator(version: str, file_name: str) -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    root = Path(importlib.util.find_spec("kubernetes_validate").origin).parent  # type: ignore[union-attr, arg-type]
    folder = root / "kubernetes-json-schema" / f"v{version}.0-local-strict"
    schema = json.loads((folder / file_name).read_text())
    definitions = json.loads((folder / "_definitions.json").read_text())
    registry = Registry().with_resources(
        [
            (schema["$id"], Resource.from_contents(schema)),
            (definitions["$id"], Resource.from_contents(definitions)),
        ]
    )
    return Draft202012Validator(schema, registry=registry)


@cache
def _bundled_validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads((KUBE_DIR / name).read_text()))


def _raw_errors(validator: Any, instance: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (tuple(map(str, e.absolute_path)), e.validator, e.message)
        for e in validator.iter_errors(instance)
    )


# --- the DRA corpus -------------------------------------------------------------------


def _require_corpus() -> None:
    if not SHARED.exists():
        pytest.skip(f"../shared/corpus/dra not found: {SHARED} does not exist")
    if not (CORPUS / "VERDICTS.tsv").is_file():
        pytest.skip(f"../shared/corpus/dra not found: no {CORPUS / 'VERDICTS.tsv'}")


def _verdicts() -> list[dict[str, str]]:
    path = CORPUS / "VERDICTS.tsv"
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _corpus_cases(*verdicts: str) -> list[Any]:
    rows = [r for r in _verdicts() if r["verdict"].startswith(verdicts)]
    if not rows:  # keep one parameter so the test reports the skip reason
        return [pytest.param(None, None, id="no-corpus")]
    return [pytest.param(r["file"], r["kubernetes"], id=r["file"][:80]) for r in rows]


def _objects(document: Any) -> Iterator[Any]:
    """Top-level objects of a YAML document; ``kind: List`` is expanded into its items."""
    if not isinstance(document, dict):
        return
    kind = document.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(document.get("items"), list):
        for item in document["items"]:
            yield from _objects(item)
    else:
        yield document


def _validate_file(name: str, version: str) -> tuple[int, list[str]]:
    """(objects validated, error texts). Objects without a bundled schema are skipped."""
    checked, problems = 0, []
    # one corpus file repeats a key; the API server (and this loader) keeps the last
    text = (CORPUS / name).read_text(encoding="utf-8")
    for document in yaml.load_all(text, Loader=yaml.CSafeLoader):
        for obj in _objects(document):
            try:
                errors = validate_object(obj, version)
            except SchemaNotFound:
                continue
            checked += 1
            label = f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"
            problems += [f"{label}: {e.location}: {e.message}" for e in errors]
    return checked, problems


@pytest.mark.parametrize(("name", "version"), _corpus_cases("valid", "schema-valid"))
def test_corpus_valid_files_pass(name: str | None, version: str | None) -> None:
    _require_corpus()
    assert name is not None and version is not None
    _, problems = _validate_file(name, version)
    assert problems == []


@pytest.mark.parametrize(("name", "version"), _corpus_cases("invalid"))
def test_corpus_invalid_files_fail(name: str | None, version: str | None) -> None:
    _require_corpus()
    assert name is not None and version is not None
    checked, problems = _validate_file(name, version)
    if checked == 0:
        pytest.skip(f"{name}: no object with a bundled schema at Kubernetes {version}")
    assert problems, f"{name} should fail schema validation at Kubernetes {version}"


@pytest.mark.skipif(not HAVE_KV, reason="kubernetes_validate is not installed")
def test_corpus_matches_upstream_schemas() -> None:
    """Bundled (trimmed, self-contained) schemas give the same raw errors as upstream's."""
    _require_corpus()
    compared = 0
    for row in _verdicts():
        if row["verdict"] not in ("valid", "invalid"):
            continue
        text = (CORPUS / row["file"]).read_text(encoding="utf-8")
        for loaded in yaml.load_all(text, Loader=yaml.CSafeLoader):
            # timestamps as strings, as upstream's default type checker needs
            document = json.loads(json.dumps(loaded, default=str))
            for obj in _objects(document):
                api_version, kind = obj.get("apiVersion"), obj.get("kind")
                if not isinstance(api_version, str) or not isinstance(kind, str):
                    continue
                for version in served(api_version, kind):
                    name = _index()["versions"][version]["objects"][api_version][kind]
                    ours = _bundled_validator(name)
                    upstream_name = name.rsplit(".", 3)[0] + ".json"
                    upstream = _upstream_validator(version, upstream_name)
                    assert _raw_errors(ours, obj) == _raw_errors(upstream, obj), (
                        f"{row['file']} {kind} at {version}"
                    )
                    compared += 1
    assert compared > 100
