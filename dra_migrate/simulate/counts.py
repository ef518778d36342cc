"""What deploys, counted (``report --deploys``): GPUs of every kustomize build and chart
rendering (``deploys.units``: the same units ``simulate`` creates) and of the plain
files no unit reads.

Each unit's output is scanned as a file of its own (``pipeline/one_file.py``, the
scan's GPU rows: the mapping decides what a GPU is), so the counts are those of the
objects the cluster gets: an overlay's replicas and patched limits, a chart's values.
Pods at once: ``replicas`` or ``parallelism`` beside the pod template (the scan's),
at most ``completions`` for a Job or a CronJob's job template (kubernetes
pkg/controller/job: a Job never runs more pods than the completions it lacks). A count
is unknown, with the reason, when an autoscaler targets the workload (its replicas are
the autoscaler's), when the kind runs a pod per node, and when the output leaves a
count empty or not a whole number (a values key without a default, given at install
time). Nothing is counted without ``--deploys``: ``uncounted`` then names the units.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from dra_migrate.manifests import compose, locate, sources, trees
from dra_migrate.repo import discover
from dra_migrate.repo.roles import Role
from dra_migrate.report.deployed import Deployed, DeployedWorkload, Uncounted
from dra_migrate.report.findings import InputProblem
from dra_migrate.simulate import deploys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dra_migrate.pipeline.options import RunOptions
    from dra_migrate.report.model import InventoryItem

# Objects that set another's replicas: (apiVersion's group, kind) -> path of the target
AUTOSCALERS: dict[tuple[str, str], tuple[str, ...]] = {
    ("autoscaling", "HorizontalPodAutoscaler"): ("spec", "scaleTargetRef"),
    ("keda.sh", "ScaledObject"): ("spec", "scaleTargetRef"),
}
# Kinds whose pods at once are capped by completions: kind -> path of the Job spec
JOB_SPECS: dict[str, tuple[str, ...]] = {
    "Job": ("spec",),
    "CronJob": ("spec", "jobTemplate", "spec"),
}
TOOLS = {"kustomize": "kubectl kustomize", "helm": "helm template"}


def _whole(value: Any, default: int) -> int | None:
    """A count field: its default when absent, None when not a whole number."""
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _jobset(obj: dict[str, Any], pod_path: str, pods: int) -> int | None:
    """A JobSet runs ``replicas`` Jobs of each replicatedJob (default 1; kubernetes-sigs/
    jobset api/jobset/v1alpha2/jobset_types.go), each ``pods`` at once."""
    match = re.match(r"spec\.replicatedJobs\[(\d+)\]", pod_path)
    jobs = _at(obj, ("spec", "replicatedJobs"))
    if match is None or not isinstance(jobs, list) or int(match[1]) >= len(jobs):
        return pods
    job = jobs[int(match[1])]
    spec = _at(job, ("template", "spec"))
    per_job = _job_pods(spec, pods)
    replicas = _whole(job.get("replicas") if isinstance(job, dict) else None, 1)
    return None if replicas is None else replicas * per_job


def _lws(obj: dict[str, Any], pod_path: str, pods: int) -> int | None:
    """A LeaderWorkerSet runs ``replicas`` groups of ``size`` pods: a leader and
    size - 1 workers; without a leaderTemplate the leader is a worker's template too
    (kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go)."""
    template = _at(obj, ("spec", "leaderWorkerTemplate"))
    groups = _whole(_at(obj, ("spec", "replicas")), 1)
    size = _whole(template.get("size") if isinstance(template, dict) else None, 1)
    if groups is None or size is None:
        return None
    has_leader = isinstance(template, dict) and template.get("leaderTemplate") is not None
    if ".leaderTemplate." in pod_path:
        return groups
    return groups * (size - 1 if has_leader else size)


# Custom resources whose pods at once are more than the fields beside one pod template:
# (apiVersion's group, kind) -> (object, pod path, the scan's count) -> pods at once
CUSTOM_PODS: dict[tuple[str, str], Callable[[dict[str, Any], str, int], int | None]] = {
    ("jobset.x-k8s.io", "JobSet"): _jobset,
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): _lws,
}


def uncounted(options: RunOptions) -> Deployed:
    """Without ``--deploys``: every overlay and chart rendering whose totals are left out."""
    root, absolute = _root(options)
    _files, _used, tops = deploys.units(root, options.paths, _excludes(options))
    why = "not built: give --deploys to count what it deploys (runs {tool})"
    return Deployed(
        counted=False,
        uncounted=[
            Uncounted(_shown(u.display, root, absolute), u.tool, why.format(tool=TOOLS[u.tool]))
            for u in tops
        ],
    )


def count(options: RunOptions) -> Deployed:
    """Every workload with GPUs that deploys from the run's paths, with its count."""
    from dra_migrate.pipeline import one_file

    root, absolute = _root(options)
    files, used, tops = deploys.units(root, options.paths, _excludes(options))
    out = Deployed(counted=True)
    needles = [n.encode() for n in one_file._needles(options.config)]
    plain: list[tuple[str, bytes]] = []
    for f in files:
        if os.path.realpath(f) in used or not f.endswith((".yaml", ".yml", ".json")):
            continue
        try:
            raw = discover.read_file(f, options.max_file_size)
        except discover.Unreadable:
            continue  # the scan reports it
        if discover.mentions(raw, [*needles, b"scaleTargetRef"]):
            plain.append((_shown(os.path.relpath(f, root), root, absolute), raw))
    scaled: dict[tuple[str, str, str], str] = {}
    for shown, raw in plain:
        scaled.update(_autoscaled(shown, raw))
    for shown, raw in plain:
        rows = _rows(shown, raw, options)
        if rows is not None:
            out.workloads += _counted(rows, _objects(shown, raw, ""), scaled, "", "", shown)
    if not tops:
        return out
    with deploys.producing(root, options.max_file_size) as produce:
        for unit in tops:
            shown = _shown(unit.display, root, absolute)
            made, error = produce(unit)
            if made is None:
                out.uncounted.append(Uncounted(shown, unit.tool, error))
                continue
            rows = _rows(_shown(unit.path, root, absolute), made, options)
            if rows is None:
                out.uncounted.append(Uncounted(shown, unit.tool, "its output does not parse"))
                continue
            located = deploys.located(unit, made, root)
            for item in located:
                item.path = _shown(item.path, root, absolute)
            here = {**scaled, **_autoscaled(shown, made)}
            out.workloads += _counted(rows, located, here, shown, unit.tool, shown)
    return out


def _root(options: RunOptions) -> tuple[str, bool]:
    return os.getcwd(), any(os.path.isabs(p) for p in options.paths)


def _excludes(options: RunOptions) -> tuple[str, ...]:
    return (*options.config.exclude, *options.excludes)


def _shown(rel: str, root: str, absolute: bool) -> str:
    """A path as the run shows its paths (absolute when the paths given are)."""
    return os.path.join(root, rel) if absolute else rel


def _rows(display: str, raw: bytes, options: RunOptions) -> list[InventoryItem] | None:
    from dra_migrate.pipeline import one_file
    from dra_migrate.report.model import Status

    result = one_file.process(display, raw, Role(), options.settings, edit=False)
    if result.status is Status.FAILED:
        return None
    return [r for r in result.inventory if r.gpu]


def _objects(path: str, raw: bytes, unit: str) -> list[deploys.Deployable]:
    try:
        return list(deploys._objects(path, raw, unit))
    except InputProblem:
        return []


def _docs(path: str, raw: bytes) -> Iterable[dict[str, Any]]:
    try:
        docs = compose.parse(sources.decode(path, raw))
    except InputProblem:
        return
    for doc in docs:
        for w in locate.objects(doc):
            data = trees.to_data(w.root)
            if isinstance(data, dict):
                yield data


def _autoscaled(path: str, raw: bytes) -> dict[tuple[str, str, str], str]:
    """(namespace, kind, name) of each workload an autoscaler scales -> why unknown."""
    if b"scaleTargetRef" not in raw:
        return {}
    out = {}
    for data in _docs(path, raw):
        group = str(data.get("apiVersion") or "").rpartition("/")[0]
        where = AUTOSCALERS.get((group, str(data.get("kind") or "")))
        if where is None:
            continue
        target = _at(data, where)
        meta = data.get("metadata") or {}
        if not isinstance(target, dict) or not isinstance(meta, dict):
            continue
        spec = data.get("spec") or {}
        low = spec.get("minReplicas", spec.get("minReplicaCount", 1))
        high = spec.get("maxReplicas", spec.get("maxReplicaCount", "?"))
        key = (str(meta.get("namespace") or ""), str(target.get("kind")), str(target.get("name")))
        out[key] = f"{data['kind']} {meta.get('name')} scales it ({low} to {high} replicas)"
    return out


def _at(data: Any, path: Sequence[str]) -> Any:
    for part in path:
        data = data.get(part) if isinstance(data, dict) else None
    return data


def _namespace(tool: str, namespace: str) -> str:
    """helm's rendering namespace is the release's, set at install: shown as none."""
    from dra_migrate.pipeline.renders import NAMESPACE

    return "" if tool == "helm" and namespace == NAMESPACE else namespace


def _counted(
    rows: Sequence[InventoryItem],
    objects: Sequence[deploys.Deployable],
    scaled: dict[tuple[str, str, str], str],
    unit: str,
    tool: str,
    fallback: str,
) -> list[DeployedWorkload]:
    by_key = {(o.kind, o.namespace, o.name): o for o in objects}
    groups: dict[tuple[str, str, str, str], list[InventoryItem]] = {}
    for r in rows:
        groups.setdefault((r.kind, r.namespace or "", r.name, r.pod_path), []).append(r)
    out = []
    for (kind, namespace, name, pod_path), group in groups.items():
        obj = by_key.get((kind, namespace, name))
        unknown: list[str] = []
        if any(r.count is None for r in group):
            per_pod = None
            unknown.append("a GPU count is empty or not a whole number (a value set at install?)")
        else:
            running = sum(r.count or 0 for r in group if r.role != "init")
            init = max((r.count or 0 for r in group if r.role == "init"), default=0)
            per_pod = max(running, init)
        pods = group[0].replicas
        if pods is None:
            unknown.append(
                "one pod per node"
                if kind == "DaemonSet"
                else "the replica count is empty or not a whole number (a value set at install?)"
            )
        elif obj is not None and kind in JOB_SPECS and obj.native:
            pods = _job_pods(_at(obj.obj, JOB_SPECS[kind]), pods)
        elif obj is not None and (obj.group, kind) in CUSTOM_PODS:
            pods = CUSTOM_PODS[obj.group, kind](obj.obj, pod_path, pods)
            if pods is None:
                unknown.append("a replica or size field is not a whole number")
        ns = namespace
        reason = scaled.get((ns, kind, name)) or (scaled.get(("", kind, name)) if tool else None)
        if reason:
            pods = None
            unknown.append(reason)
        source = f"{obj.path}:{obj.line}:{obj.col}" if obj is not None else fallback
        out.append(
            DeployedWorkload(
                unit=unit,
                tool=tool,
                kind=kind,
                namespace=_namespace(tool, namespace),
                name=name,
                pod_path=pod_path,
                source=source,
                gpus_per_pod=per_pod,
                pods=pods,
                unknown="; ".join(unknown),
            )
        )
    return out


def _job_pods(spec: Any, parallelism: int) -> int:
    """Pods a Job runs at once: parallelism, at most its completions when set (kubernetes
    pkg/controller/job/job_controller.go, manageJob: completions - succeeded, capped at
    parallelism)."""
    completions = spec.get("completions") if isinstance(spec, dict) else None
    if isinstance(completions, int) and not isinstance(completions, bool):
        return min(parallelism, completions)
    return parallelism
