#!/usr/bin/env python3
"""Regenerate the bundled Kubernetes JSON Schemas under ``schemas/kubernetes/``.

The source is the strict schema set shipped in the PyPI package
``kubernetes-validate`` (``kubernetes_validate/kubernetes-json-schema/
v1.NN.0-local-strict/``). For every bundled Kubernetes version and every object
kind the migration reads or writes, this script

* takes the upstream root schema (e.g. ``resourceclaimtemplate-resource-v1.json``)
  and checks its ``x-kubernetes-group-version-kind``,
* copies the definitions it needs, transitively, out of ``_definitions.json``
  into the schema's own ``$defs`` and rewrites every ``$ref`` to ``#/$defs/...``,
  so that each written file is self-contained,
* drops the documentation-only keywords (``description`` and the
  ``x-kubernetes-*`` extensions) and the ``$id``; validation keywords are kept
  unchanged,
* stores identical content once: a file is named after the first Kubernetes
  version that has that content (``pod-v1.1.32.json`` serves 1.32 and every
  later version whose Pod schema is identical),
* writes ``index.json`` (Kubernetes version -> apiVersion -> kind -> file, the
  PodSpec file per version and the sha256 of every file) and the generated
  section of ``schemas/README.md``.

Output is compact JSON with sorted keys, so two runs give identical bytes.

Usage::

    python scripts/refresh_schemas.py                 # writes into ./schemas
    python scripts/refresh_schemas.py --out /tmp/x    # writes /tmp/x/kubernetes/, /tmp/x/README.md
    python scripts/refresh_schemas.py --check         # exit 1 if the bundled files are stale
    python scripts/refresh_schemas.py --api-checkout ../api   # the schemas against k8s.io/api's Go types
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "schemas"

SOURCE_PACKAGE = "kubernetes-validate"
SOURCE_LICENSE = "Apache-2.0"
SOURCE_URL = "https://github.com/willthames/kubernetes-validate"
PYPI_URL = "https://pypi.org/project/kubernetes-validate/"

#: Kubernetes minor versions to bundle (oldest first).
KUBE_VERSIONS: tuple[str, ...] = tuple(f"1.{minor}" for minor in range(32, 38))

DRA_KINDS = ("ResourceClaimTemplate", "ResourceClaim", "DeviceClass", "ResourceSlice")
DRA_API_VERSIONS = ("resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1")

#: (apiVersion, kind) of every object schema to bundle, in index order.
OBJECTS: tuple[tuple[str, str], ...] = (
    *((api, kind) for api in DRA_API_VERSIONS for kind in DRA_KINDS),
    # DeviceTaintRule has versions of its own: v1alpha3 from 1.33, v1beta2 1.36, v1 1.37
    *((f"resource.k8s.io/{v}", "DeviceTaintRule") for v in ("v1alpha3", "v1beta2", "v1")),
    ("v1", "Pod"),
    ("v1", "PodTemplate"),
    ("v1", "ReplicationController"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "ReplicaSet"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
)

POD_SPEC_DEFINITION = "io.k8s.api.core.v1.PodSpec"
POD_SPEC_KEY = "PodSpec"

README_MARKER = (
    "<!-- Everything below this line is written by scripts/refresh_schemas.py; "
    "edit only above it. -->"
)
DEFAULT_README_HEADER = """\
# Bundled JSON Schemas

`kubernetes/` holds strict JSON Schemas (draft 2020-12) of the Kubernetes
objects dra-migrate reads and writes. `dra_migrate/schemas.py` uses them to
validate generated objects offline, without a cluster and without the
`kubernetes-validate` package at run time.
"""

_DEFS_REF = re.compile(r"^(?:[^#]*)#/\$defs/(?P<name>.+)$")
# Keywords whose value is a map of name -> schema.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
# Keywords whose value is a schema (or a list of schemas).
_SCHEMA_VALUES = frozenset(
    {"additionalProperties", "items", "not", "allOf", "anyOf", "oneOf", "prefixItems"}
)
_DROPPED = frozenset({"description", "$id"})


def upstream_file_name(api_version: str, kind: str) -> str:
    """The file name kubernetes-validate uses (``apps/v1`` -> ``apps-v1``, ``resource.k8s.io/v1`` -> ``resource-v1``)."""
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


def output_stem(api_version: str, kind: str) -> str:
    return upstream_file_name(api_version, kind).removesuffix(".json")


def find_source_dir() -> Path:
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            "kubernetes_validate is not importable: pip install kubernetes-validate "
            "(or pass --source DIR pointing at its kubernetes-json-schema folder)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"


def source_version() -> str:
    try:
        return importlib.metadata.version(SOURCE_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def _dumps(data: Any) -> bytes:
    return (
        json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    ).encode("utf-8")


def _ref_target(ref: str) -> str:
    match = _DEFS_REF.match(ref)
    if match is None:
        raise ValueError(f"unsupported $ref {ref!r}")
    return match.group("name")


def clean_schema(node: Any) -> Any:
    """Copy a schema without documentation keywords, with local ``#/$defs/`` refs."""
    if isinstance(node, list):
        return [clean_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED or key.startswith("x-kubernetes-"):
            continue
        if key == "$ref":
            out[key] = f"#/$defs/{_ref_target(value)}"
        elif key in _SCHEMA_MAPS:
            out[key] = {name: clean_schema(sub) for name, sub in value.items()}
        elif key in _SCHEMA_VALUES:
            out[key] = clean_schema(value)
        else:  # enum, required, type, format, default, ...: data, copied as is
            out[key] = value
    return out


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield _ref_target(value)
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def self_contained(root: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """``root`` plus the transitive closure of the definitions it references."""
    schema = clean_schema(root)
    needed: dict[str, Any] = {}
    pending = list(_refs(schema))
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        if name not in definitions:
            raise KeyError(f"definition {name!r} is referenced but not in _definitions.json")
        needed[name] = clean_schema(definitions[name])
        pending.extend(_refs(needed[name]))
    schema["$schema"] = root.get("$schema", "https://json-schema.org/draft/2020-12/schema")
    if needed:
        schema["$defs"] = needed
    return schema


def _check_gvk(root: dict[str, Any], api_version: str, kind: str, path: Path) -> None:
    group, _, version = api_version.rpartition("/")
    expected = {"group": group, "version": version, "kind": kind}
    gvks = root.get("x-kubernetes-group-version-kind", [])
    if expected not in gvks:
        raise SystemExit(
            f"{path}: x-kubernetes-group-version-kind {gvks} does not include {expected}"
        )


def _check_refs(schema: dict[str, Any], name: str) -> None:
    """Every $ref resolves inside the file (the tests compile and run every file)."""
    defs = schema.get("$defs", {})
    for target in _refs(schema):
        if target not in defs:
            raise SystemExit(f"{name}: dangling $ref to {target}")


def build(source: Path) -> tuple[dict[str, bytes], dict[str, Any]]:
    """Return ``{file name: content}`` and the index (without the ``files`` table)."""
    files: dict[str, bytes] = {}
    by_content: dict[tuple[str, bytes], str] = {}
    versions: dict[str, Any] = {}

    def store(stem: str, kube: str, schema: dict[str, Any]) -> str:
        content = _dumps(schema)
        key = (stem, content)
        if key not in by_content:
            name = f"{stem}.{kube}.json"
            _check_refs(schema, name)
            by_content[key] = name
            files[name] = content
        return by_content[key]

    for kube in KUBE_VERSIONS:
        folder = source / f"v{kube}.0-local-strict"
        if not folder.is_dir():
            raise SystemExit(f"{folder} is missing: kubernetes-validate does not bundle {kube}")
        definitions = _load(folder / "_definitions.json")["$defs"]
        objects: dict[str, dict[str, str]] = {}
        for api_version, kind in OBJECTS:
            path = folder / upstream_file_name(api_version, kind)
            if not path.is_file():
                continue  # this Kubernetes version does not serve the apiVersion
            root = _load(path)
            _check_gvk(root, api_version, kind, path)
            schema = self_contained(root, definitions)
            objects.setdefault(api_version, {})[kind] = store(
                output_stem(api_version, kind), kube, schema
            )
        pod_spec = self_contained({"$ref": f"#/$defs/{POD_SPEC_DEFINITION}"}, definitions)
        versions[kube] = {
            "objects": objects,
            POD_SPEC_KEY: store("podspec-v1", kube, pod_spec),
        }
    index = {
        "format": 1,
        "generator": "scripts/refresh_schemas.py",
        "jsonSchemaDraft": "https://json-schema.org/draft/2020-12/schema",
        "kubernetesVersions": list(KUBE_VERSIONS),
        "source": {
            "package": SOURCE_PACKAGE,
            "version": source_version(),
            "license": SOURCE_LICENSE,
            "url": SOURCE_URL,
            "folders": "kubernetes_validate/kubernetes-json-schema/v1.NN.0-local-strict",
        },
        "versions": versions,
    }
    return files, index


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def readme_section(index: dict[str, Any], outputs: dict[str, bytes]) -> str:
    src = index["source"]
    kube = index["kubernetesVersions"]
    lines = [
        "",
        "## Kubernetes object schemas (`kubernetes/`)",
        "",
        f"* Source: the strict schemas (`{src['folders']}/`) of the PyPI package "
        f"[`{src['package']}`]({PYPI_URL}) version **{src['version']}**, licence "
        f"**{src['license']}**, upstream project <{src['url']}>. Those schemas are "
        "generated from the Kubernetes OpenAPI specification (kubernetes/kubernetes, Apache-2.0).",
        f"* Kubernetes versions: {', '.join(kube)}. A version newer than {kube[-1]} is "
        f"validated with the {kube[-1]} schemas.",
        "* Objects: `resource.k8s.io` ResourceClaimTemplate, ResourceClaim, DeviceClass, "
        "ResourceSlice (v1beta1, v1beta2, v1, where the Kubernetes version serves them) and "
        "DeviceTaintRule (v1alpha3, v1beta2, v1, likewise); "
        "core/v1 Pod, PodTemplate, ReplicationController; apps/v1 Deployment, StatefulSet, "
        "DaemonSet, ReplicaSet; batch/v1 Job, CronJob; and the core/v1 PodSpec alone "
        "(`podspec-v1.*.json`).",
        "* Changes from upstream: each file is self-contained (the definitions it needs are "
        "copied into its own `$defs`, `$ref`s point to `#/$defs/...`); `description`, "
        "`x-kubernetes-*` and `$id` are removed. Every validation keyword is kept, including "
        "`additionalProperties: false` on every object (strict mode).",
        "* Deduplication: a file is named after the first Kubernetes version with that "
        "content and serves every later version with identical content. "
        "`kubernetes/index.json` maps Kubernetes version -> apiVersion -> kind -> file "
        "(plus the `PodSpec` file per version) and lists the sha256 of every schema file.",
        "* Refresh: `pip install kubernetes-validate==<version>` then "
        "`python scripts/refresh_schemas.py` (`--check` only reports whether the files are "
        "stale). Output is deterministic (compact JSON, sorted keys).",
        "",
        f"Total size of `kubernetes/`: {sum(len(b) for b in outputs.values()):,} bytes in "
        f"{len(outputs)} files.",
        "",
        "| File | Bytes | sha256 |",
        "|---|---:|---|",
    ]
    for name in sorted(outputs):
        lines.append(
            f"| `kubernetes/{name}` | {len(outputs[name]):,} | `{sha256(outputs[name])}` |"
        )
    return "\n".join(lines) + "\n"


def render(source: Path, readme_header: str) -> dict[str, bytes]:
    """All output files, relative to the schemas folder (``kubernetes/...`` and ``README.md``)."""
    files, index = build(source)
    index["files"] = {name: sha256(files[name]) for name in sorted(files)}
    outputs = dict(files)
    outputs["index.json"] = (
        json.dumps(index, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    ).encode("utf-8")
    result = {f"kubernetes/{name}": data for name, data in outputs.items()}
    header = readme_header.rstrip("\n") + "\n\n"
    result["README.md"] = (header + README_MARKER + "\n" + readme_section(index, outputs)).encode(
        "utf-8"
    )
    return result


def readme_header(readme: Path) -> str:
    """The hand-written part of an existing README (everything above the marker)."""
    if not readme.is_file():
        return DEFAULT_README_HEADER
    text = readme.read_text(encoding="utf-8")
    head, found, _ = text.partition(README_MARKER)
    return head if found else text


def write(out: Path, outputs: dict[str, bytes]) -> list[str]:
    """Write ``outputs`` under ``out``; delete stale JSON files in ``out/kubernetes``. Return what changed."""
    changed = []
    kube_dir = out / "kubernetes"
    kube_dir.mkdir(parents=True, exist_ok=True)
    for stale in sorted(kube_dir.glob("*.json")):
        if f"kubernetes/{stale.name}" not in outputs:
            stale.unlink()
            changed.append(f"deleted {stale.relative_to(out)}")
    for rel, data in sorted(outputs.items()):
        path = out / rel
        if path.is_file() and path.read_bytes() == data:
            continue
        path.write_bytes(data)
        changed.append(f"wrote {rel}")
    return changed


def stale(out: Path, outputs: dict[str, bytes]) -> list[str]:
    problems = [
        rel
        for rel, data in sorted(outputs.items())
        if not (out / rel).is_file() or (out / rel).read_bytes() != data
    ]
    kube_dir = out / "kubernetes"
    if kube_dir.is_dir():
        problems += [
            f"kubernetes/{p.name} (not generated)"
            for p in sorted(kube_dir.glob("*.json"))
            if f"kubernetes/{p.name}" not in outputs
        ]
    return problems


# --- cross-check against the Go types of an upstream checkout -------------------------
#
# kubernetes-validate generates its schemas from the OpenAPI of a Kubernetes release; a
# kubernetes/api checkout (``git -C api log -1`` names its commit) has the Go types the
# API server serves. ``--api-checkout DIR`` compares the fields of every resource.k8s.io
# definition in the newest bundled release with the json names of the Go struct of the
# same name in ``DIR/resource/<version>/types.go`` and prints what one side has and the
# other lacks (a checkout older than the release lacks what landed after it).

_GO_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.M | re.S)
_GO_JSON = re.compile(r'`[^`]*json:"([^",]+)')


_GO_INLINE = re.compile(r'^\s*(\w+)\s+`json:"(?:,inline)?"')  # embedded: json:"" too


def go_fields(types_go: str) -> dict[str, set[str]]:
    """Struct name -> the json names of its fields, with those of embedded ``,inline``
    structs of the same file (``metav1.TypeMeta`` and other packages' are left out)."""
    own: dict[str, set[str]] = {}
    inline: dict[str, list[str]] = {}
    for m in _GO_STRUCT.finditer(types_go):
        lines = [x for x in m.group(2).splitlines() if not x.strip().startswith("//")]
        own[m.group(1)] = {f.group(1) for x in lines if (f := _GO_JSON.search(x))}
        inline[m.group(1)] = [i.group(1) for x in lines if (i := _GO_INLINE.match(x))]

    def fields(name: str) -> set[str]:
        return own.get(name, set()).union(*(fields(e) for e in inline.get(name, [])))

    return {name: fields(name) for name in own}


def api_drift(outputs: dict[str, bytes], checkout: Path) -> list[str]:
    """What the newest bundled resource.k8s.io schemas and the checkout's types disagree on."""
    index = json.loads(outputs["kubernetes/index.json"])
    newest = index["kubernetesVersions"][-1]
    definitions: dict[str, set[str]] = {}
    for name in sorted(set(_files_of(index["versions"][newest]["objects"]))):
        for def_name, schema in json.loads(outputs[f"kubernetes/{name}"]).get("$defs", {}).items():
            if def_name.startswith("io.k8s.api.resource.") and "properties" in schema:
                definitions[def_name] = set(schema["properties"])
    lines = []
    types: dict[str, dict[str, set[str]]] = {}
    for def_name, fields in sorted(definitions.items()):
        version, struct = def_name.removeprefix("io.k8s.api.resource.").split(".", 1)
        if version not in types:
            path = checkout / "resource" / version / "types.go"
            types[version] = go_fields(path.read_text(encoding="utf-8")) if path.is_file() else {}
        go = types[version].get(struct)
        if go is None:
            lines.append(f"{newest} {version}.{struct}: not in {checkout}")
            continue
        for field in sorted(fields - go):
            lines.append(
                f"{newest} {version}.{struct}.{field}: in the schemas, not in the Go types"
            )
        for field in sorted(go - fields - {"apiVersion", "kind"}):
            lines.append(
                f"{newest} {version}.{struct}.{field}: in the Go types, not in the schemas"
            )
    return lines


def _files_of(objects: dict[str, dict[str, str]]) -> list[str]:
    return [name for kinds in objects.values() for name in kinds.values()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="schemas folder to write (kubernetes/ and README.md inside it); default: %(default)s",
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=None,
        help="kubernetes-validate's kubernetes-json-schema folder (default: the installed package)",
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if the files differ"
    )
    parser.add_argument(
        "--api-checkout",
        type=Path,
        default=None,
        help="a kubernetes/api checkout: print where the newest release's resource.k8s.io "
        "schemas and its Go types disagree, and write nothing",
    )
    args = parser.parse_args(argv)
    source = args.source or find_source_dir()
    outputs = render(source, readme_header(args.out / "README.md"))
    if args.api_checkout is not None:
        for line in api_drift(outputs, args.api_checkout):
            print(line)
        return 0
    if args.check:
        problems = stale(args.out, outputs)
        for problem in problems:
            print(f"stale: {problem}", file=sys.stderr)
        return 1 if problems else 0
    # Everything is built in memory first, so a failure above leaves the old files intact.
    args.out.mkdir(parents=True, exist_ok=True)
    for line in write(args.out, outputs):
        print(line)
    total = sum(len(data) for rel, data in outputs.items() if rel.startswith("kubernetes/"))
    print(f"{args.out / 'kubernetes'}: {total:,} bytes in {len(outputs) - 1} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
