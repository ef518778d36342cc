"""The GPU stack's Helm values for a shared fleet: the NVIDIA DRA driver's values set to
publish the consumable shares the converted workloads take, the GPU Operator's left
with the reason. Edited as a values recipe edits a chart's values (``values_text.py``:
comments and untouched bytes kept), only when ``convert`` turned a time-sliced request
into shares (DRA260).

The driver's chart (kubernetes-sigs/dra-driver-nvidia-gpu deployments/helm/
dra-driver-nvidia-gpu, 0.5.0-dev at 95932046) takes ``consumableShares`` ("disabled",
"memory", "unlimited" or a positive integer, rendered as the kubelet plugin's
``CONSUMABLE_SHARES``) and ``featureGates`` (a map rendered as ``FEATURE_GATES``); the
mode applies to every GPU the release's kubelet plugins serve
(``kubeletPlugin.nodeSelector``), and on a device with consumable shares a request that
asks for no shares takes the default one share: a release that serves exclusive nodes
too would turn their whole GPUs into shares. So a release is edited only when every
node it serves is known to be time-sliced with one count:

- a ``kubeletPlugin.nodeSelector`` that picks one of the fleet's pools: that pool's;
- none: every GPU node, so every pool and the fleet's default (not assumed) alike.

The GPU Operator's values keep the device plugin on (``devicePlugin.enabled``): nodes
leave it one wave at a time by the node label ``nvidia.com/gpu.deploy.device-plugin``,
and its controller takes a GPUCluster only once no ClusterPolicy is left
(NVIDIA/gpu-operator controllers/gpucluster_controller.go). Nothing here turns a
device plugin off.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from dra_migrate.convert.mapping import Settings
from dra_migrate.helm.values_text import ValuesText
from dra_migrate.repo import discover
from dra_migrate.repo.sharing import EXCLUSIVE, TIME_SLICING, Fleet, Pool, SharingModel
from dra_migrate.report.findings import Finding, InputProblem, finding
from dra_migrate.report.model import FileResult, Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CHART = "dra-driver-nvidia-gpu"
# keys only the driver's chart has at its top level (values.yaml at 95932046)
OWN_KEYS = ("consumableShares", "gpuResourcesEnabledOverride")
OPERATOR_KEYS = ("devicePlugin", "dcgmExporter", "toolkit", "mig")
NEEDLES = (b"consumableShares", b"gpuResourcesEnabledOverride", CHART.encode(), b"devicePlugin")
GATE = "ConsumableShares"


def carry_out(
    by_real: dict[str, FileResult],
    roots: Sequence[str],
    excludes: Sequence[str],
    settings: Settings,
) -> list[FileResult]:
    """The results of the stack's values files (replaced in ``by_real`` where the run
    has one, returned where it has none)."""
    if not any(f.code == "DRA260" for r in by_real.values() for f in r.findings):
        return []
    added: list[FileResult] = []
    limit = settings.config.max_file_size
    for candidate in discover.expand([r for r in roots if r != "-"], excludes, (), NEEDLES, limit):
        if candidate.ruled_out or not candidate.path.lower().endswith((".yaml", ".yml")):
            continue
        try:
            raw = discover.read_file(candidate.path, limit)
        except discover.Unreadable:
            continue
        if not discover.mentions(raw, NEEDLES):
            continue
        result = _one(candidate.path, candidate.display, raw, settings)
        if result is None:
            continue
        real = discover.real_name(candidate.path)
        if real in by_real:
            if by_real[real].status is Status.CHANGED:
                continue  # converted as a manifest already: not a values file
            result.findings = by_real[real].findings + result.findings
            by_real[real] = result
        else:
            added.append(result)
    return added


def _one(path: str, display: str, raw: bytes, settings: Settings) -> FileResult | None:
    try:
        values = ValuesText.decode(display, raw)
        data = values.data
    except InputProblem:
        return None  # the run's own pass reports a malformed file
    if not isinstance(data, dict) or "kind" in data or "apiVersion" in data:
        return None
    prefix = _driver_prefix(path, data)
    if prefix is not None:
        return _driver(values, prefix, raw, settings)
    if isinstance(data.get("devicePlugin"), dict) and sum(k in data for k in OPERATOR_KEYS) > 1:
        line, col = values.position(("devicePlugin",))
        note = finding(
            "DRA269",
            display,
            line,
            col,
            "GPU Operator values left as they are: the device plugin stays on for the nodes "
            "still on it, and its controller takes a GPUCluster only once no ClusterPolicy "
            "is left",
            "at each wave label the pool's nodes nvidia.com/gpu.deploy.device-plugin=false "
            "and run the DRA driver there (stage 2 of the plan); move to a GPUCluster after "
            "the last wave",
        )
        return FileResult(display, Status.UNCHANGED, [note])
    return None


def _driver_prefix(path: str, data: Mapping[str, Any]) -> tuple[str, ...] | None:
    """Where the driver chart's values are in this file: () for the chart's own values
    (its keys, or a values file of a folder whose Chart.yaml names the chart), the
    dependency's key in a parent's values; None for another file."""
    if any(k in data for k in OWN_KEYS):
        return ()
    if isinstance(data.get(CHART), dict):
        return (CHART,)
    chart = os.path.join(os.path.dirname(path), "Chart.yaml")
    if os.path.basename(path).startswith("values") and os.path.isfile(chart):
        try:
            text = discover.read_file(chart, 1 << 20).decode("utf-8", "replace")
        except discover.Unreadable:
            return None
        if any(
            line.split(":", 1)[-1].strip().strip("'\"") == CHART
            for line in text.splitlines()
            if line.startswith("name:")
        ):
            return ()
    return None


def _driver(
    values: ValuesText, prefix: tuple[str, ...], raw: bytes, settings: Settings
) -> FileResult:
    display = values.source.path
    selector = values.get((*prefix, "kubeletPlugin", "nodeSelector"))
    served = _served(settings, selector if isinstance(selector, dict) else {})
    key = (*prefix, "consumableShares")
    at = key if values.node(key) is not None else prefix
    where = values.position(at) if at else (1, 1)
    counts = {m.replicas for m in served if m.kind == TIME_SLICING and not m.per_gpu}
    mixed = [m for m in served if m.kind != TIME_SLICING or m.per_gpu or m.assumed]
    if len(counts) != 1 or mixed:
        kinds = "; ".join(sorted({m.describe() for m in served}))
        return FileResult(
            display,
            Status.UNCHANGED,
            [
                finding(
                    "DRA268",
                    display,
                    *where,
                    f"DRA driver values left as they are: the GPUs this release serves "
                    f"({_shown(selector)}) do not all share one way ({kinds}); consumableShares "
                    "applies to every GPU of the release, and a request without a shares "
                    "request takes one share",
                    "give each pool its own release of the driver (kubeletPlugin.nodeSelector "
                    "on the pool's label) and set consumableShares on the time-sliced ones",
                )
            ],
        )
    n = counts.pop()
    try:
        values.set((*prefix, "consumableShares"), str(n))
        values.set((*prefix, "featureGates", GATE), True)
    except InputProblem as problem:  # an anchor or a value of another shape on the path
        return FileResult(display, Status.UNCHANGED, [problem.finding])
    converted = values.encode()
    found: list[Finding] = [
        finding(
            "DRA267",
            display,
            *values.position((*prefix, "consumableShares")),
            f"DRA driver values set to publish {n} consumable shares per GPU "
            f'(consumableShares: "{n}", featureGates.{GATE}: true) on the GPUs this release '
            f"serves ({_shown(selector)}), as the converted workloads take them",
            "install it on a pool's nodes in the wave that moves the pool, after the device "
            "plugin has left them",
        )
    ]
    if converted == raw:
        return FileResult(display, Status.UNCHANGED, [], original=raw)
    return FileResult(display, Status.CHANGED, found, original=raw, converted=converted)


def _served(settings: Settings, selector: Mapping[str, Any]) -> list[SharingModel]:
    """The models of the nodes a release with ``selector`` serves: the pool it picks,
    else (no selector) every pool and the default."""
    fleet = settings.config.sharing or Fleet()
    labels = {str(k): str(v) for k, v in selector.items()}
    if labels:
        picked = [p for p in fleet.pools if p.selector and p.holds(labels)]
        return [picked[0].model] if picked else [fleet.default]
    return [p.model for p in _pools(fleet.pools)] + [fleet.default]


def _pools(pools: Iterable[Pool]) -> list[Pool]:
    return [p for p in pools if p.model.kind != EXCLUSIVE or not p.model.assumed]


def _shown(selector: Any) -> str:
    if isinstance(selector, dict) and selector:
        return ", ".join(f"{k}={v}" for k, v in sorted(selector.items()))
    return "every GPU node"
