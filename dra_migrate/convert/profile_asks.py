"""GPU asks through an operator's resource profile: a KubeAI Model names a profile and
a multiple (``spec.resourceProfile: nvidia-gpu-h100:8``), and the KubeAI operator
builds the model pods with the profile's requests and limits times the multiple
(kubeai-project/kubeai internal/modelcontroller/model_controller.go getModelConfig, at
f442a2cd). The Model holds no resource name, so nothing in it is converted; its ask is
counted (DRA279) with the resource of the profile, from a values file of the run that
defines the profile (``resolve``, after the chart pass: the profile's row, DRA278, and
its state), else from KubeAI's default profiles (``DEFAULTS``).

Imported only where a file mentions ``resourceProfile:`` (pipeline/one_file.py).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from yaml.nodes import Node

from dra_migrate.convert.mapping import Config, Context
from dra_migrate.manifests import trees
from dra_migrate.manifests.kinds import api_group
from dra_migrate.manifests.locate import Workload
from dra_migrate.manifests.sources import Document
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.model import FileResult, InventoryItem

CODE = "DRA279"
FIELD = ("spec", "resourceProfile")
KINDS = frozenset({"kubeai.org/Model"})
SOURCE = "kubeai-project/kubeai internal/modelcontroller/model_controller.go (getModelConfig)"

# KubeAI's default resource profiles that ask for GPUs: the resource and count of one
# multiple (charts/kubeai/values.yaml resourceProfiles, at f442a2cd; ``cpu`` and the
# TPU profiles of values-gke.yaml ask for none).
DEFAULTS: dict[str, tuple[str, int]] = {
    **{
        f"nvidia-gpu-{model}": ("nvidia.com/gpu", 1)
        for model in (
            "t4",
            "l4",
            "l40s",
            "h100",
            "gh200",
            "a100-80gb",
            "a100-40gb",
            "a16",
            "rtx4070-8gb",
        )
    },
    "amd-gpu-mi300x": ("amd.com/gpu", 1),
}
# the resource of a row whose profile neither KubeAI's defaults nor the run's values
# define: the profile's name (a row needs a resource; ``resolve`` replaces it where a
# values file of the run defines the profile)
UNKNOWN = "resourceProfile:"
_PROFILE = re.compile(r"([^:\s]+):(\d+)")  # name:multiple, as getModelConfig splits it
_VALUES_KEY = re.compile(r"(?:^|\.)resourceProfiles\.([^.]+)$")  # a values row's podPath


def model_asks(
    workload: Workload, config: Config, path: str
) -> tuple[list[Finding], list[InventoryItem]]:
    """DRA279 and a row for a Model whose profile asks for GPUs (KubeAI's defaults; a
    values file of the run may redefine it: ``resolve``); for a profile that is not one
    of the defaults, a row under the profile's name (``UNKNOWN``), its count unknown,
    until a values file of the run defines it."""
    if f"{api_group(workload.api_version)}/{workload.kind}" not in KINDS:
        return [], []
    node = trees.get_path(workload.root, *FIELD)
    asker = Asker(
        workload.api_version,
        workload.kind,
        workload.namespace,
        workload.name,
        ".".join(FIELD),
        f"Model {workload.name}".strip(),
    )
    return _profile_ask(node, asker, config, path)


def values_models(
    docs: list[Document], config: Config, path: str
) -> tuple[list[Finding], list[InventoryItem]]:
    """The Models a chart renders from its values (KubeAI's models chart: an entry of
    ``catalog`` with ``resourceProfile``, rendered when its ``enabled`` or the file's
    ``all.enabled`` is true, charts/models/templates/models.yaml): DRA279 and a row
    each, as for a Model. An entry its file does not turn on is not counted (the
    chart's own values.yaml turns none on)."""
    found: list[Finding] = []
    rows: list[InventoryItem] = []
    for doc in docs:
        everyone = _true(trees.get_path(doc.root, "all", "enabled"))
        stack: list[tuple[str, Node]] = [("", doc.root)]
        while stack:
            where, node = stack.pop()
            for key, _key_node, value in trees.entries(node):
                stack.append((f"{where}.{key}" if where else key, value))
            node_profile = trees.get(node, "resourceProfile")
            if node_profile is None or not (everyone or _true(trees.get(node, "enabled"))):
                continue
            asker = Asker("", "", None, "", where or "(document)", f"values key {where}")
            more, asked = _profile_ask(node_profile, asker, config, path)
            found += more
            rows += asked
    return sorted(found), sorted(rows, key=lambda r: (r.line, r.col))


@dataclass(frozen=True, slots=True)
class Asker:
    """What asks through a profile, as a row and a message name it."""

    api_version: str
    kind: str
    namespace: str | None
    name: str
    pod_path: str
    who: str


def _profile_ask(
    node: Node | None, asker: Asker, config: Config, path: str
) -> tuple[list[Finding], list[InventoryItem]]:
    text = trees.scalar(node) or ""
    parsed = _PROFILE.fullmatch(text)
    if node is None or parsed is None:
        return [], []  # KubeAI refuses it (invalid resource profile): no pod
    return profile_row(text, trees.position(node), asker, config, path)


def profile_row(
    text: str, at: tuple[int, int], asker: Asker, config: Config, path: str
) -> tuple[list[Finding], list[InventoryItem]]:
    """DRA279 and the row of an ask through the profile ``text`` (``name:N``) at ``at``
    (line, col): none for a profile KubeAI refuses or one that asks for no GPU."""
    parsed = _PROFILE.fullmatch(text)
    if parsed is None:
        return [], []
    name, multiple = parsed.group(1), int(parsed.group(2))
    line, col = at
    default = DEFAULTS.get(name)
    if default is None and (name == "cpu" or name.startswith("google-tpu")):
        return [], []  # KubeAI's defaults that ask for no GPU
    resource, each = default or (UNKNOWN + name, None)
    choice = config.choose(resource, Context(namespace=asker.namespace)) if default else None
    row = InventoryItem(
        path=path,
        line=line,
        col=col,
        api_version=asker.api_version,
        kind=asker.kind,
        namespace=asker.namespace,
        name=asker.name,
        pod_path=asker.pod_path,
        container="",
        role="app",
        resource=resource,
        count=each * multiple if each is not None else None,
        value=text,
        device_class=choice.device_class if choice else None,
        replicas=None,  # KubeAI's autoscaler sets the replicas
        kept=CODE,
    )
    if default is None:
        return [_unknown(asker.who, name, multiple, row, path)], [row]
    return [_found(asker.who, name, multiple, row, path)], [row]


def _unknown(who: str, name: str, multiple: int, row: InventoryItem, path: str) -> Finding:
    return finding(
        CODE,
        path,
        row.line,
        row.col,
        f"{who} asks for KubeAI's resource profile {name} times {multiple}, which is "
        "neither one of KubeAI's default profiles nor defined by a values file of the run: "
        f"counted as a refused ask under {UNKNOWN}{name}, its resource and GPU count "
        "unknown; the KubeAI operator builds the model pods with that profile's requests "
        "and limits times the multiple, and nothing in the Model is converted",
        "run dra-migrate on the folder that holds the KubeAI chart's values too (the "
        "profile's resource and count are then counted), and serve the model pods' "
        "extended resource through a DeviceClass with extendedResourceName (DRA242), or "
        "keep them on the device plugin",
    )


def _true(node: Node | None) -> bool:
    """A YAML true as Helm reads values (go-yaml v2: true, yes, on, y)."""
    return (trees.scalar(node) or "").lower() in ("true", "yes", "on", "y")


def _found(who: str, name: str, multiple: int, row: InventoryItem, path: str) -> Finding:
    return finding(
        CODE,
        path,
        row.line,
        row.col,
        f"{who} asks for GPUs through KubeAI's resource profile {name} times {multiple}: "
        "the KubeAI operator builds the model pods with the profile's requests and limits "
        "times the multiple; nothing in the Model is converted",
        "serve the model pods' extended resource through a DeviceClass with "
        "extendedResourceName (the KubeAI chart's bridge: DRA242), or keep them on the "
        "device plugin",
    )


def resolve(files: list[FileResult]) -> None:
    """The Models' rows from the profiles the run's values files define (rows of
    DRA278, settled by the chart pass): resource, count and state (bridged with a
    bridged chart, else kept by DRA279). Where several values files define a profile,
    a chart's ``values.yaml`` (what an install without ``-f`` renders) wins."""
    profiles: dict[str, InventoryItem] = {}
    for result in files:
        for row in result.inventory:
            match = _VALUES_KEY.search(row.pod_path) if not row.kind else None
            if match is None:
                continue
            known = profiles.get(match.group(1))
            if known is None or (_default_values(row.path) and not _default_values(known.path)):
                profiles[match.group(1)] = row
    for result in files:
        for row in result.inventory:
            if row.kept != CODE:
                continue
            parsed = _PROFILE.fullmatch(row.value)
            defined = profiles.get(parsed.group(1)) if parsed else None
            if parsed is None or defined is None:
                continue
            multiple = int(parsed.group(2))
            if row.resource.startswith(UNKNOWN):  # the finding no longer says "unknown"
                said = _found(row.who, parsed.group(1), multiple, row, row.path)
                result.findings = [
                    said if (f.code, f.line, f.col) == (CODE, row.line, row.col) else f
                    for f in result.findings
                ]
            row.resource, row.device_class = defined.resource, defined.device_class
            row.count = defined.count * multiple if defined.count is not None else None
            row.bridged, row.kept = defined.bridged, "" if defined.bridged else CODE


def _default_values(path: str) -> bool:
    return os.path.basename(path) in ("values.yaml", "values.yml")
