"""What ``scan`` found in each file, kept in the user's cache folder for the next run.

A run that writes nothing (``scan``, ``report``, ``deviceclasses``: ``edit`` off)
keeps, for each file it parsed, the ``FileResult`` its file stage made, and a later
run takes it instead of parsing the file again when nothing it depends on changed.
The key of a file's result holds all of it:

- the file's bytes (BLAKE2b), its name as the report shows it and its role (chart
  part, patch, kustomization, the overlays that patch it);
- the settings of the run, every field (the configuration and mapping, the target,
  ``--kube-version``, ``--strategy``, the templates defined elsewhere, the
  DeviceClasses that bridge) in a canonical form: a value this module cannot spell
  exactly makes the run keep nothing;
- what the job asks (``edit``, ``keep_text``) and whether libyaml composes;
- this package's version and code (``cache.package_stamp``), its data files (the
  driver catalog, the built-in mapping, the schemas' index) and PyYAML's version, as
  the kept file's stamp: another version of any is another cache.

The kept file follows ``cache.py``'s rules (the user's 0700 folder outside every
path the run reads and its work tree, written whole or not at all, read with
``O_NOFOLLOW`` and checked before use). One file holds the results of one
working folder and settings; it is rewritten with this run's results only (so a
changed file drops its old result) when they differ from what was read. A result is
kept only when it reads back equal to itself, and anything read that is not exactly
a result's shape is a miss, computed again. Files with GPU requests of overlays
(whose results carry converted text), files too large to be held and runs that
write are never kept.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os

from dra_migrate import cache
from dra_migrate.report.findings import Finding
from dra_migrate.report.model import FileResult, InventoryItem, Status

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from dra_migrate.convert.mapping import Settings
    from dra_migrate.pipeline.options import Job

MAX_ENTRIES = 50_000  # results one kept file holds
_RECORDS: dict[str, type] = {"FileResult": FileResult, "Finding": Finding, "Item": InventoryItem}
_NAMES = {cls: name for name, cls in _RECORDS.items()}
_FIELDS = {
    cls: tuple(f.name for f in dataclasses.fields(cls) if f.init) for cls in _RECORDS.values()
}  # (every field of these records is an argument of their class)
_ENUMS: dict[str, type[enum.Enum]] = {"Status": Status}
# JSON's own scalars, which stand for themselves: taken in place, not by a call each (a
# kept result is mostly these, 36,000 of them in 510 results)
_PLAIN = frozenset({str, int, bool, type(None)})


class Unkept(Exception):
    """A value this module cannot spell exactly: nothing is kept."""


def mapped(
    work: list[Job],
    settings: Settings,
    jobs: int | None,
    progress: Any,
    compute: Callable[[list[Job], Settings, int | None, Any], list[FileResult]],
) -> list[FileResult]:
    """The result of each job: kept ones read, the others computed (``compute(todo,
    settings, jobs, progress)``: ``many_files._map``, on ``pool.py``'s pool), and the
    run's results kept for the next."""
    run_key = _run_key(settings) if any(_keepable(job) for job in work) else None
    stamp = _stamp() if run_key is not None else None
    if run_key is None or stamp is None:
        return compute(work, settings, jobs, progress)
    held = cache.read("scan-results", run_key, stamp, _entries) or {}
    keys = [_job_key(job) if _keepable(job) else None for job in work]
    found: dict[int, FileResult] = {}
    for index, (job, key) in enumerate(zip(work, keys, strict=True)):
        if key is not None and key in held:
            with _miss():
                found[index] = _result(held[key], job)
    reused = set(found)
    todo = [i for i in range(len(work)) if i not in found]
    for index, result in zip(
        todo, compute([work[i] for i in todo], settings, jobs, progress), strict=True
    ):
        found[index] = result
    results = [found[i] for i in range(len(work))]
    kept: dict[str, Any] = {}
    for index, (job, key, result) in enumerate(zip(work, keys, results, strict=True)):
        if key is not None and len(kept) < MAX_ENTRIES:
            value = held[key] if index in reused else _kept_value(result, job)
            if value is not None:
                kept[key] = value
    if kept != held:
        cache.write("scan-results", run_key, stamp, kept)
    return results


class _miss:
    """A kept entry that does not read back: computed again (as if never kept)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        return kind is not None and issubclass(kind, (ValueError, TypeError, KeyError, IndexError))


def _keepable(job: Job) -> bool:
    return not job.edit and job.data is not None and not job.role.overlays


def _run_key(settings: Settings) -> str | None:
    """The working folder and the settings, spelled canonically; None where a value
    cannot be (nothing is kept)."""
    from dra_migrate.manifests import compose

    try:
        spelled = _canonical(settings)
    except Unkept:
        return None
    return json.dumps(
        [os.path.realpath(os.curdir), compose.libyaml(), spelled],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _job_key(job: Job) -> str | None:
    assert job.data is not None
    try:
        role = _canonical(job.role)
    except Unkept:
        return None
    head = json.dumps([job.display, role, job.edit, job.keep_text], separators=(",", ":"))
    return cache.digest(head.encode("utf-8", "surrogatepass") + b"\0" + job.data)


def _stamp() -> str | None:
    """The package's code and data (the driver catalog and what is built of it and of
    the built-in mapping, the schemas' index) and PyYAML's version; None where they
    cannot be read (nothing is kept)."""
    import yaml  # (imported already: the file stage's module was)

    from dra_migrate.package_data import package_file, schema_path

    code = cache.package_stamp()
    try:
        data = [
            os.path.join(package_file(folder), name)
            for folder in ("catalog", "built")
            for name in sorted(os.listdir(package_file(folder)))
        ]
    except OSError:
        return None
    stamp = cache.files_stamp(
        [*data, package_file("defaults.yaml"), schema_path("kubernetes/index.json")]
    )
    if code is None or stamp is None:
        return None
    return f"{code} {stamp} yaml {yaml.__version__}"


def _canonical(value: Any) -> Any:
    """``value`` as JSON that tells every two values apart that compare unequal: the
    compared fields of records, the kinds of collections, sets and mappings sorted."""
    if isinstance(value, enum.Enum):  # (first: a StrEnum member is a str too)
        return {"enum": [type(value).__qualname__, _canonical(value.value)]}
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise Unkept(value)
        return {"float": value}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [f for f in dataclasses.fields(value) if f.compare]
        return {
            "record": f"{type(value).__module__}.{type(value).__qualname__}",
            "fields": [[f.name, _canonical(getattr(value, f.name))] for f in fields],
        }
    if type(value) is tuple:
        return {"tuple": [_canonical(v) for v in value]}
    if type(value) is list:
        return {"list": [_canonical(v) for v in value]}
    if type(value) in (set, frozenset):
        return {"set": sorted(_spelled(v) for v in value)}
    if type(value) is dict:
        return {"map": sorted([_spelled(k), _spelled(v)] for k, v in value.items())}
    if type(value) is bytes:
        return {"bytes": cache.digest(value)}
    raise Unkept(type(value).__name__)


def _spelled(value: Any) -> str:
    return json.dumps(_canonical(value), sort_keys=True, separators=(",", ":"))


# --- results as JSON, and back -------------------------------------------------------


def _kept_value(result: FileResult, job: Job) -> Any:
    """``result`` as the JSON kept for it; None when it does not read back equal."""
    if result.original is not None and result.original != job.data:
        return None
    if result.converted is not None or result.regions is not None or result.markers is not None:
        return None
    try:  # (the encoding is JSON's own types: what json writes, it reads back as it was)
        fields = [
            None if name == "original" else _encode(getattr(result, name))
            for name in _names(FileResult)
        ]
        value = {"result": {_NAMES[FileResult]: fields}, "original": result.original is not None}
        with _miss():
            if _same(_result(value, job), result):
                return value
    except (Unkept, RecursionError, ValueError):
        pass
    return None


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (``1 == 1.0 == True``, and a
    StrEnum member equals its text: a result that read back so would not be the same)."""
    if type(a) is not type(b):
        return False
    if type(a) in _NAMES:
        return all(_same(getattr(a, n), getattr(b, n)) for n in _names(type(a)))
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(
            (type(x) is type(y) and x == y) if type(x) in _PLAIN else _same(x, y)
            for x, y in zip(a, b, strict=True)
        )
    if type(a) is dict:
        return (
            list(a) == list(b)
            and all(_same(k, j) for k, j in zip(a, b, strict=True))
            and all(_same(a[k], b[k]) for k in a)
        )
    if type(a) is set:  # of plain values: equal sets of equal types
        return a == b and sorted(map(repr, a)) == sorted(map(repr, b))
    return bool(a == b)


def _result(value: Any, job: Job) -> FileResult:
    """A kept value as the result it was (raising ValueError, TypeError or KeyError
    where it is not one)."""
    if not isinstance(value, dict) or set(value) != {"result", "original"}:
        raise ValueError("not a kept result")
    result = _decode(value["result"])
    if not isinstance(result, FileResult) or not isinstance(value["original"], bool):
        raise ValueError("not a kept result")
    if value["original"]:
        result.original = job.data
    return result


def _encode(value: Any) -> Any:
    if isinstance(value, enum.Enum):  # (first: a StrEnum member is a str too)
        if _ENUMS.get(type(value).__name__) is not type(value):
            raise Unkept(type(value).__name__)
        return {"enum": [type(value).__name__, value.value]}
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise Unkept(value)
        return {"float": value}
    name = _NAMES.get(type(value))
    if name is not None:
        return {name: [_encode(getattr(value, n)) for n in _names(type(value))]}
    if type(value) is list:
        return {"list": [_encode(v) for v in value]}
    if type(value) is tuple:
        return {"tuple": [_encode(v) for v in value]}
    if type(value) is set:
        return {"set": [_encode(v) for v in value]}
    if type(value) is dict:
        return {"map": [[_encode(k), _encode(v)] for k, v in value.items()]}
    raise Unkept(type(value).__name__)


def _decode(value: Any) -> Any:
    if type(value) is not dict:
        if value is None or type(value) in (bool, int, str):  # (json's own types)
            return value
        raise ValueError("not a kept value")
    if len(value) != 1:
        raise ValueError("not a kept value")
    [(tag, body)] = value.items()
    if tag == "float":
        if not isinstance(body, float):
            raise TypeError("not a float")
        return body
    if tag == "enum":
        kind, member = body
        return _ENUMS[kind](member)
    if not isinstance(body, list):
        raise TypeError("not a list")
    if tag in _RECORDS:
        cls = _RECORDS[tag]
        if len(body) != len(_names(cls)):
            raise ValueError("not a record")
        # every field is an argument, in order
        return cls(*[v if type(v) in _PLAIN else _decode(v) for v in body])
    if tag == "list":
        return [v if type(v) in _PLAIN else _decode(v) for v in body]
    if tag == "tuple":
        return tuple([v if type(v) in _PLAIN else _decode(v) for v in body])
    if tag == "set":
        return {_decode(v) for v in body}
    if tag == "map":
        return {_decode(k): _decode(v) for k, v in body}
    raise ValueError(f"not a kept value: {tag}")


def _names(cls: type) -> tuple[str, ...]:
    """The fields of a kept record, in order: every one an argument of its class."""
    return _FIELDS[cls]


def _entries(held: Any) -> dict[str, Any]:
    """A kept file's value: result keys (digests) to kept results (checked as each is
    read)."""
    if not isinstance(held, dict) or len(held) > MAX_ENTRIES:
        raise ValueError("not kept results")
    if not all(isinstance(k, str) and len(k) == 64 for k in held):
        raise ValueError("not kept results")
    return held
