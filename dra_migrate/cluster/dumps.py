"""Cluster mode's offline reader: ``DumpReader`` reads ``kubectl get ... -o yaml`` (or
``-o json``) files as manifests are read, and answers as ``LiveReader`` does."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from dra_migrate.cluster.resources import (
    DRA_GROUP,
    DRA_VERSIONS,
    KIND_TO_RESOURCE,
    RESOURCES,
    TooDeep,
    metadata_field,
    parse_json,
)
from dra_migrate.repo import discover
from dra_migrate.repo.discover import DEFAULT_MAX_FILE_SIZE
from dra_migrate.report.findings import InputProblem, finding
from dra_migrate.report.model import FileResult, Status


class DumpReader:
    """``kubectl get ... -o yaml`` (or ``-o json``) files: the offline path."""

    def __init__(self, paths: Sequence[str], limit: int = DEFAULT_MAX_FILE_SIZE) -> None:
        self.source = "files " + ", ".join(paths)
        self.files: list[FileResult] = []
        self.objects: dict[str, list[dict[str, Any]]] = {r: [] for r in RESOURCES}
        self.index: dict[tuple[str, str, str], dict[str, Any]] = {}
        versions: set[str] = set()
        for path in paths:
            result = FileResult(path, Status.UNCHANGED)
            self.files.append(result)
            try:
                docs = _read_dump(path, limit)
            except InputProblem as problem:
                result.status = Status.FAILED
                result.findings.append(problem.finding)
                continue
            found = 0
            for obj in _objects(docs):
                api_version = str(obj.get("apiVersion") or "")
                group = api_version.rpartition("/")[0]
                resource = KIND_TO_RESOURCE.get((group, str(obj.get("kind") or "")))
                if resource is None:
                    continue
                found += 1
                self.objects[resource].append(obj)
                key = (
                    resource,
                    str(metadata_field(obj, "namespace") or ""),
                    str(metadata_field(obj, "name") or ""),
                )
                self.index[key] = obj
                if group == DRA_GROUP:
                    versions.add(api_version.rpartition("/")[2])
            if not found:
                result.findings.append(
                    finding(
                        "DRA609",
                        path,
                        1,
                        1,
                        "no Pod, Node, owner, DeviceClass, ResourceSlice or ResourceClaim in it",
                        "dump with kubectl get " + ",".join(RESOURCES) + " -A -o yaml",
                    )
                )
        known = [v for v in DRA_VERSIONS if v in versions]
        self.dra_version = known[0] if known else None
        self.dra_note = (
            ""
            if known
            else "the input holds no DeviceClass, ResourceSlice or ResourceClaim of "
            "resource.k8s.io v1, v1beta2 or v1beta1"
        )

    def list(self, resource: str, namespace: str | None) -> Iterator[dict[str, Any]]:
        namespaced = RESOURCES[resource].namespaced
        for obj in self.objects[resource]:
            if (
                namespaced
                and namespace is not None
                and metadata_field(obj, "namespace") != namespace
            ):
                continue
            yield obj

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self.index.get((resource, namespace, name))


def _read_dump(path: str, limit: int) -> list[Any]:
    """The documents of a dump, read as manifests are (``discover.read_file``: regular
    files only, without blocking, at most ``limit`` bytes)."""
    from dra_migrate.manifests import compose, sources, trees

    try:
        raw = discover.read_file(path, limit)
    except discover.Unreadable as exc:
        raise InputProblem(finding(exc.code, path, 1, 1, exc.message)) from None
    try:  # kubectl -o json is read fastest by json
        return [parse_json(raw)]
    except TooDeep:
        raise InputProblem(
            finding("DRA004", path, 1, 1, f"JSON nested more than {compose.MAX_DEPTH} levels deep")
        ) from None
    except ValueError:
        pass
    source = sources.decode(path, raw)
    return [trees.to_data(d.root) for d in compose.parse(source) if d.root is not None]


def _objects(docs: Iterable[Any]) -> Iterator[dict[str, Any]]:
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        items = doc.get("items")
        if str(doc.get("kind") or "").endswith("List") and isinstance(items, list):
            yield from _objects(items)
        else:
            yield doc
