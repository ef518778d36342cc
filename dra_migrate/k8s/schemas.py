"""Validate Kubernetes objects against the bundled strict JSON Schemas.

The schemas live in ``schemas/kubernetes/`` (written by
``scripts/refresh_schemas.py`` from the PyPI package kubernetes-validate);
``index.json`` maps Kubernetes version -> apiVersion -> kind -> schema file.
Strict means every object rejects unknown fields (``additionalProperties:
false``), so a v1beta1-shaped DeviceRequest fails under ``resource.k8s.io/v1``
and ``source:`` in ``spec.resourceClaims`` fails on every bundled version.

The schemas check structure and types only: not DNS names, ``count > 0``,
one-of rules such as ``exactly``/``firstAvailable``, list sizes or CEL.

jsonschema checks them (the validator class its ``$schema`` names, Draft 2020-12),
imported on the first check: only a run that checks a DRA object, a pod spec that
uses claims or a generated object pays for it. Each schema file's validator is
built once a run and kept. The schemas are not checked against their metaschema
at run time (about a second a file, and they are package data: a test checks
every bundled one).
"""

from __future__ import annotations

import contextlib
import datetime
import difflib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from dra_migrate.package_data import schema_path

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import TypeVar

    T = TypeVar("T")
    from typing import Any

__all__ = [
    "KUBE_VERSIONS",
    "SchemaError",
    "SchemaNotFound",
    "served",
    "validate_object",
    "validate_pod_spec",
]

#: Kubernetes minor versions with bundled schemas, oldest first (``index.json``
#: ``kubernetesVersions``; a test keeps the two in step).
KUBE_VERSIONS: tuple[str, ...] = ("1.32", "1.33", "1.34", "1.35", "1.36", "1.37")

_POD_SPEC = "PodSpec"
_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:[.+-].*)?$")
_JSON_TYPE_NAMES = {
    "object": "an object",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


class SchemaNotFound(LookupError):
    """No bundled schema for this apiVersion/kind at this Kubernetes version."""


@dataclass(frozen=True, slots=True)
class SchemaError:
    """One schema violation.

    ``path`` leads from the validated object to the offending field (mapping
    keys as ``str``, list indexes as ``int``). For an unknown field it ends with
    that field's key; for a missing required field it ends with the missing
    key, so ``path[:-1]`` is the object that lacks it.
    """

    path: tuple[str | int, ...]
    message: str

    @property
    def location(self) -> str:
        """``path`` as text: ``spec.containers[0].resources``."""
        return format_path(self.path)


def format_path(path: Sequence[str | int]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(the object)"


# --- index -----------------------------------------------------------------


@cache
def _index() -> dict[str, Any]:
    with open(schema_path("kubernetes/index.json"), encoding="utf-8") as handle:
        index: dict[str, Any] = json.load(handle)
    return index


def _version_key(version: str) -> tuple[int, int]:
    match = _VERSION_RE.match(version.strip())
    if match is None:
        raise ValueError(f"not a Kubernetes version: {version!r} (expected e.g. '1.34')")
    return int(match.group(1)), int(match.group(2))


def _bundled_version(kube_version: str) -> str:
    """The bundled version whose schemas apply to ``kube_version``."""
    wanted = _version_key(kube_version)
    if wanted > _version_key(KUBE_VERSIONS[-1]):
        return KUBE_VERSIONS[-1]
    for version in KUBE_VERSIONS:
        if _version_key(version) == wanted:
            return version
    raise SchemaNotFound(
        f"no bundled schemas for Kubernetes {kube_version}: the bundle covers "
        f"{KUBE_VERSIONS[0]} to {KUBE_VERSIONS[-1]} (newer versions use {KUBE_VERSIONS[-1]})"
    )


def _object_file(version: str, api_version: str, kind: str) -> str | None:
    objects: dict[str, dict[str, str]] = _index()["versions"][version]["objects"]
    return objects.get(api_version, {}).get(kind)


def served(api_version: str, kind: str) -> tuple[str, ...]:
    """Bundled Kubernetes versions that have a schema for ``apiVersion``/``kind``."""
    return tuple(v for v in KUBE_VERSIONS if _object_file(v, api_version, kind) is not None)


def _choose_object_file(api_version: str, kind: str, kube_version: str | None) -> str:
    versions = served(api_version, kind)
    if not versions:
        raise SchemaNotFound(
            f"no bundled schema for {kind} {api_version} in any Kubernetes version "
            f"({KUBE_VERSIONS[0]}-{KUBE_VERSIONS[-1]})"
        )
    version = versions[-1] if kube_version is None else _bundled_version(kube_version)
    if version not in versions:
        raise SchemaNotFound(
            f"Kubernetes {kube_version} does not serve {kind} {api_version}; the bundled "
            f"schemas have it for Kubernetes {', '.join(versions)}"
        )
    name = _object_file(version, api_version, kind)
    assert name is not None
    return name


# --- verdicts kept between runs ---------------------------------------------------

VERDICTS = "schema-valid"  # the cache kind of a kept verdict of one input
BOOKS = "schema-book"  # the cache kind of the verdicts of one file's conversion
MAX_BOOK = 4096  # verdicts a book holds (a file of 2,000 converted pods fills it)


def kept_check(schema_file: str, data: bytes, check: Callable[[], list[T]]) -> list[T]:
    """What ``check()`` finds wrong with ``data`` against ``schema_file``; once it
    found nothing, that verdict is kept in the user's cache folder (``cache.py``),
    keyed by the schema's path and the bytes, stamped with this package's code, the
    schema file and jsonschema's own files, so a later run on the same bytes needs
    no jsonschema (its import costs a one-file hook run more than the rest of its
    work). Only a valid verdict is kept: what is wrong is checked, and reported, on
    every run. For one input read on every run (the configuration)."""
    from dra_migrate import cache as kept

    stamp = _verdict_stamp(schema_file)
    key = kept.digest(schema_file.encode() + b"\0" + data)
    if stamp is not None and kept.read(VERDICTS, key, stamp, _verdict) is True:
        return []
    errors = check()
    if not errors and stamp is not None:
        kept.write(VERDICTS, key, stamp, True)
    return errors


class VerdictBook:
    """The valid verdicts of the objects one file's conversion checks (the generated
    templates, the converted pod specs), kept together in one cache file for the
    file's bytes: a hook runs on a file until it is converted, and checks the same
    objects each time. One file, not one a verdict, so a file of a thousand pods
    does not fill the cache folder; ``validate_object``/``validate_pod_spec`` with
    ``keep`` consult the book of the file being converted (``open_book``). The book
    is read on its first check: a run that checks nothing (scan) reads no cache."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.held: frozenset[str] | None = None  # read on the first check
        self.key = ""  # the digest of ``data``, and the stamp, once read
        self.stamp: str | None = None
        self.found: set[str] = set()  # verdicts of this run

    def _open(self) -> frozenset[str]:
        from dra_migrate import cache as kept

        if self.held is None:
            self.key = kept.digest(self.data)
            self.stamp = _verdict_stamp(schema_path("kubernetes/index.json"))
            read = None if self.stamp is None else kept.read(BOOKS, self.key, self.stamp, _book)
            self.held = read or frozenset()
        return self.held

    def check(self, schema_file: str, data: bytes, check: Callable[[], list[T]]) -> list[T]:
        from dra_migrate import cache as kept

        verdict = kept.digest(schema_file.encode() + b"\0" + data)
        if verdict in self._open():
            self.found.add(verdict)
            return []
        errors = check()
        if not errors:
            self.found.add(verdict)
        return errors

    def close(self) -> None:
        """Keep this run's verdicts (only those: a file that changed drops the old
        ones) when they differ from what was held."""
        from dra_migrate import cache as kept

        if self.held is not None and self.stamp is not None and self.found != self.held:
            kept.write(BOOKS, self.key, self.stamp, sorted(self.found)[:MAX_BOOK])


_BOOK: list[VerdictBook] = []  # the book of the file being converted, in this process


@contextlib.contextmanager
def open_book(data: bytes) -> Iterator[None]:
    """While one file (``data``, its bytes) is converted: its kept verdicts."""
    book = VerdictBook(data)
    _BOOK.append(book)
    try:
        yield
    finally:
        _BOOK.remove(book)
        book.close()


def _book(held: Any) -> frozenset[str]:
    """A kept book: a list of at most ``MAX_BOOK`` verdict digests."""
    if not isinstance(held, list) or len(held) > MAX_BOOK:
        raise ValueError("not a book")
    if not all(isinstance(v, str) and len(v) == 64 for v in held):
        raise ValueError("not a book")
    return frozenset(held)


def _verdict(held: Any) -> bool:
    """A kept verdict: only ``true`` is ever written."""
    if held is not True:
        raise ValueError("not a verdict")
    return True


@cache
def _verdict_stamp(schema_file: str) -> str | None:
    """What a verdict depends on besides the bytes: this package's code, the schema
    (for a book, the index of the bundled schemas, rewritten with their digests
    whenever one changes) and jsonschema's own files (an upgrade changes them); None
    where one cannot be found (nothing is kept)."""
    import importlib.util

    from dra_migrate import cache as kept

    code = kept.package_stamp()
    spec = importlib.util.find_spec("jsonschema")
    if code is None or spec is None or spec.origin is None:
        return None
    library = os.path.dirname(spec.origin)
    files = [schema_file] + [
        os.path.join(library, name) for name in ("__init__.py", "_keywords.py", "validators.py")
    ]
    stamp = kept.files_stamp(files)
    return None if stamp is None else f"{code} {stamp}"


# --- validators --------------------------------------------------------------


@cache
def _validator(name: str) -> Any:
    """jsonschema's validator for one schema file (shared by every version that uses
    it), built once a run."""
    from jsonschema import validators

    with open(schema_path(f"kubernetes/{name}"), encoding="utf-8") as handle:
        schema = json.load(handle)
    return _validator_class(validators.validator_for(schema))(schema)


@cache
def _validator_class(draft: Any) -> Any:
    """``draft`` (a jsonschema validator class) with the types as manifests give them:
    any mapping is an object, a tuple is an array too, and a date is a string (YAML
    loaders turn unquoted timestamps into dates; the API server's YAML-to-JSON step
    keeps them as strings)."""
    from jsonschema import validators

    checker = draft.TYPE_CHECKER.redefine_many(
        {
            "object": lambda _checker, value: isinstance(value, Mapping),
            "array": lambda _checker, value: isinstance(value, (list, tuple)),
            "string": lambda _checker, value: isinstance(value, (str, datetime.date)),
        }
    )
    return validators.extend(draft, type_checker=checker)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, (str, datetime.date)):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


def _short(value: Any) -> str:
    if isinstance(value, (Mapping, list, tuple)):
        return ""
    text = repr(value)
    return f" ({text if len(text) <= 60 else text[:57] + '...'})"


def _expected_types(schema: Any) -> list[str]:
    types = schema.get("type", []) if isinstance(schema, Mapping) else []
    if isinstance(types, str):
        types = [types]
    return [t for t in types if t != "null"]


def _join(words: list[str]) -> str:
    names = [_JSON_TYPE_NAMES.get(w, w) for w in words]
    if len(names) <= 1:
        return "".join(names) or "a different type"
    return ", ".join(names[:-1]) + " or " + names[-1]


def _field(path: tuple[str | int, ...]) -> str:
    return f"field {format_path(path)!r}" if path else "the object"


def _convert(error: Any) -> list[SchemaError]:
    """Turn one jsonschema error into SchemaErrors that name the field."""
    path: tuple[str | int, ...] = tuple(error.absolute_path)
    keyword = error.validator
    instance = error.instance
    if (
        keyword == "additionalProperties"
        and isinstance(instance, Mapping)
        and "patternProperties" not in error.schema
    ):
        allowed = sorted((error.schema.get("properties") or {}).keys())
        out = []
        for key in instance:
            if key in allowed or not isinstance(key, str):
                continue
            message = f"unknown field {format_path((*path, key))!r}"
            close = difflib.get_close_matches(key, allowed, n=1)
            if close:
                message += f"; did you mean {close[0]!r}?"
            elif len(allowed) <= 12:
                message += f"; allowed here: {', '.join(allowed) or 'nothing'}"
            out.append(SchemaError((*path, key), message))
        if out:
            return out
    if keyword == "required" and isinstance(instance, Mapping):
        return [
            SchemaError((*path, key), f"missing required field {format_path((*path, key))!r}")
            for key in error.validator_value
            if key not in instance
        ]
    if keyword == "type":
        expected = [t for t in _as_list(error.validator_value) if t != "null"]
        return [
            SchemaError(
                path,
                f"{_field(path)} must be {_join(expected)}, not {_type_name(instance)}"
                f"{_short(instance)}",
            )
        ]
    if keyword in ("oneOf", "anyOf"):
        expected = [t for sub in error.validator_value for t in _expected_types(sub)]
        if expected:
            return [
                SchemaError(
                    path,
                    f"{_field(path)} must be {_join(list(dict.fromkeys(expected)))}, "
                    f"not {_type_name(instance)}{_short(instance)}",
                )
            ]
    if keyword == "enum":
        choices = ", ".join(repr(c) for c in error.validator_value)
        return [SchemaError(path, f"{_field(path)} must be one of {choices}, not {instance!r}")]
    return [SchemaError(path, f"{_field(path)}: {error.message}")]


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _sort_key(error: SchemaError) -> tuple[tuple[tuple[int, int, str], ...], str]:
    return (
        tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in error.path),
        error.message,
    )


def _run(name: str, instance: Any, keep: bool = False) -> list[SchemaError]:
    """The errors of ``instance`` against the schema file ``name``, sorted; with
    ``keep``, a valid verdict is kept for the instance's canonical JSON."""

    def check() -> list[SchemaError]:
        found: set[SchemaError] = set()
        for error in _validator(name).iter_errors(instance):
            found.update(_convert(error))
        return sorted(found, key=_sort_key)

    if not keep or not _BOOK:
        return check()
    data = json.dumps(instance, sort_keys=True, separators=(",", ":"), default=str)
    return _BOOK[-1].check(schema_path(f"kubernetes/{name}"), data.encode(), check)


# --- public API --------------------------------------------------------------


def validate_object(
    obj: Mapping[str, Any], kube_version: str | None = None, keep: bool = False
) -> list[SchemaError]:
    """Validate a whole object (Pod, Deployment, ResourceClaimTemplate, ...) strictly.

    The schema is chosen by the object's ``apiVersion`` and ``kind`` and by
    ``kube_version`` (``"1.34"``, ``"v1.34.2"``, ...): None means the newest
    bundled version that serves the apiVersion; a version newer than the bundle
    uses the newest bundled one. Returns every error, sorted by path; an empty
    list means valid. A missing or non-string ``apiVersion``/``kind`` is
    reported as an error, since no schema can be chosen without it.

    Raises SchemaNotFound when no bundled schema covers the apiVersion/kind, or
    when that Kubernetes version does not serve the apiVersion (for example
    ``resource.k8s.io/v1`` on 1.33), and ValueError for a malformed version.
    ``keep``: a valid verdict is kept between runs in the book of the file being
    converted (:func:`open_book`), for what a conversion generates and checks again
    on every run until it is written.
    """
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    missing = [
        SchemaError((key,), f"missing required field {key!r} (it selects the schema)")
        for key, value in (("apiVersion", api_version), ("kind", kind))
        if not isinstance(value, str) or not value
    ]
    if missing:
        return missing
    assert isinstance(api_version, str) and isinstance(kind, str)
    errors = _run(_choose_object_file(api_version, kind, kube_version), obj, keep)
    # Required in the OpenAPI document, optional for the API server: a DeviceClass
    # without spec is accepted (every field of its spec is optional).
    optional = _OPTIONAL_REQUIRED.get(kind, ())
    return [e for e in errors if not (e.path in optional and e.message.startswith("missing"))]


_OPTIONAL_REQUIRED: dict[str, tuple[tuple[str | int, ...], ...]] = {"DeviceClass": (("spec",),)}


def validate_pod_spec(
    spec: Mapping[str, Any], kube_version: str | None = None, keep: bool = False
) -> list[SchemaError]:
    """Validate a core/v1 PodSpec on its own (e.g. one embedded in a custom resource).

    Paths in the errors are relative to ``spec``. ``kube_version`` and ``keep`` as in
    :func:`validate_object` (None = newest bundled).
    """
    version = KUBE_VERSIONS[-1] if kube_version is None else _bundled_version(kube_version)
    name: str = _index()["versions"][version][_POD_SPEC]
    return _run(name, spec, keep)
