"""What deploys from a tree: the objects ``simulate`` creates, each with where it is
written (``file:line:col``).

Plain manifests are read as the other commands read them (``manifests/compose.py``,
``locate.objects``). A kustomization that no other kustomization uses is built with
kubectl (``pipeline/builds.py``) and its files are not read on their own; a Helm chart
is rendered with helm (``pipeline/renders.py``) with its values.yaml, once per values
overlay of its folder when it has some (``units``), its templates not read on their
own. ``report --deploys`` counts GPUs from the same units (``counts.py``). Without kubectl or helm, those units are listed as not placed
(DRA810). Objects of a build or a rendering point at the file a ``# Source:`` comment
or an object of the same kind and name in the unit names, else at the unit's file.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.manifests import compose, locate, sources, trees
from dra_migrate.repo import discover, roles
from dra_migrate.report.findings import Finding, InputProblem, finding

# what the pods need to be created at all, created before the workloads:
# (apiVersion's group, kind)
SUPPORT_KINDS = frozenset(
    {
        ("", "Namespace"),
        ("", "ServiceAccount"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("", "ResourceQuota"),
        ("", "LimitRange"),
        ("resource.k8s.io", "DeviceClass"),
        ("resource.k8s.io", "ResourceClaim"),
        ("resource.k8s.io", "ResourceClaimTemplate"),
    }
)
# workloads whose controllers run in kube-controller-manager: created as they are
NATIVE_KINDS = frozenset(
    {
        ("", "Pod"),
        ("", "ReplicationController"),
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("batch", "Job"),
        ("batch", "CronJob"),
    }
)
_SOURCE = re.compile(r"^# Source: (\S+)", re.M)


@dataclass(slots=True)
class Deployable:
    """One object of the tree that ``simulate`` creates (or, for a custom resource, whose
    pod templates it places). Not frozen: ``place`` fills ``refused``."""

    kind: str
    namespace: str  # "" for cluster-scoped and for namespaced objects without one
    name: str
    path: str  # where it is written (relative to the tree's root)
    line: int
    col: int
    obj: dict[str, Any]
    unit: str = ""  # the kustomization or chart it comes from, "" for a plain file
    # pod specs of a custom resource: (site path, replicas, pod spec, template labels)
    sites: list[tuple[str, int, dict[str, Any], dict[str, str]]] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return self.kind, self.namespace, self.name

    @property
    def group(self) -> str:
        return str(self.obj.get("apiVersion") or "").rpartition("/")[0]

    @property
    def native(self) -> bool:
        """A workload kube-controller-manager (or the API server) makes pods of."""
        return (self.group, self.kind) in NATIVE_KINDS

    @property
    def support(self) -> bool:
        """What the pods need to be admitted: created before the workloads."""
        return (self.group, self.kind) in SUPPORT_KINDS

    @property
    def display(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"


@dataclass(slots=True)
class Tree:
    """Everything that deploys from one tree."""

    objects: list[Deployable]
    findings: list[Finding]


@dataclass(frozen=True, slots=True)
class Unit:
    """A kustomization no other kustomization uses, built with kubectl, or a chart
    rendering (its values.yaml, and one values overlay of the chart folder, if any),
    rendered with helm."""

    path: str  # the kustomization or the Chart.yaml (relative to the tree's root)
    folder: str  # where the tool runs
    tool: str  # "kustomize" or "helm"
    values: str = ""  # the values overlay of a rendering (relative to ``folder``)
    # ``values-dra.yaml``, which the chart pass writes beside an upstream chart's values
    # (``helm/recipes.py``): given last to every rendering of the chart that has it, as
    # the migrated chart is deployed with it
    migration: str = ""

    @property
    def display(self) -> str:
        return f"{self.path} with {self.values}" if self.values else self.path


def units(
    root: str, paths: Sequence[str], excludes: Sequence[str] = ()
) -> tuple[list[str], set[str], list[Unit]]:
    """The files of ``paths``, those a unit reads (real paths) and the units that deploy.

    A chart with values overlays (``values-prod.yaml``, ``values.prod.yaml`` beside
    values.yaml; not ``ci/``, which holds a chart's test values) deploys once per overlay,
    each over values.yaml, as a kustomize base deploys once per overlay; a chart without
    deploys its values.yaml alone."""
    from dra_migrate.helm.recipes import OVERLAY

    files = [c.path for c in discover.expand([os.path.join(root, p) for p in paths], excludes)]
    charts = sorted({os.path.dirname(f) for f in files if os.path.basename(f) == "Chart.yaml"})
    kustomizations = [f for f in files if os.path.basename(f) in roles.KUSTOMIZATION_NAMES]
    used: set[str] = set()
    bases: set[str] = set()
    found: list[Unit] = []
    for k in kustomizations:
        used |= roles.references(k) - {os.path.realpath(k)}
        bases |= _kustomizations_used(k)
    for k in kustomizations:
        if os.path.realpath(k) not in bases:
            found.append(Unit(os.path.relpath(k, root), os.path.dirname(k), "kustomize"))
    used |= {os.path.realpath(k) for k in kustomizations}
    for chart in charts:
        if any(_inside(chart, c) and chart != c for c in charts):
            continue  # a subchart renders with its parent
        rel = os.path.relpath(os.path.join(chart, "Chart.yaml"), root)
        migration = OVERLAY if os.path.isfile(os.path.join(chart, OVERLAY)) else ""
        overlays = [n for n in _values_overlays(chart) if n != OVERLAY]
        for values in overlays or [""]:
            found.append(Unit(rel, chart, "helm", values, migration))
    for f in files:
        if any(_inside(f, c) for c in charts):
            used.add(os.path.realpath(f))
    return files, used, found


def _kustomizations_used(kustomization: str) -> set[str]:
    """Real paths of the kustomizations ``kustomization`` builds on (its bases and
    components, through theirs): they deploy only through it."""
    reader = roles._Reader()
    real = reader.real(kustomization)
    visiting: set[str] = set()
    roles._built(real, visiting, reader)
    return visiting - {real}


def _values_overlays(chart: str) -> list[str]:
    try:
        names = sorted(os.listdir(chart))
    except OSError:
        return []
    return [
        n
        for n in names
        if n.startswith("values")
        and n.endswith((".yaml", ".yml"))
        and n not in ("values.yaml", "values.yml")
        and os.path.isfile(os.path.join(chart, n))
    ]


Produce = Callable[[Unit], tuple[bytes | None, str]]


@contextlib.contextmanager
def producing(root: str, limit: int = discover.DEFAULT_MAX_FILE_SIZE) -> Iterator[Produce]:
    """What builds and renders the units of the tree at ``root``: the unit's objects as
    the tool prints them, or None and why not. As the proofs do (``pipeline/processes``):
    kubectl and helm run on a copy of the repository's own files (links kept inside it,
    never followed out of it: a unit that reads such a link is not made, DRA250's
    reason), offline, found on absolute ``PATH`` entries only, within one time budget
    and the file size limit for what they print, and their own error text (which can
    hold what they read) is never passed on: only how they failed, and where."""
    from dra_migrate.pipeline import builds, processes, renders

    with processes.workspace("dra-migrate-deploys-") as tmp:
        repository = processes.repository([root])
        env = processes.environment(os.path.join(tmp, "home"))
        budget = processes.Budget()
        shown_root = os.path.relpath(root)
        copied: processes.Copied | None = None
        why = ""
        try:
            copied = processes.copy_tree(root, os.path.join(tmp, "tree"), repository)
        except processes.TooLarge as exc:
            why = f"the tree is too large to copy for kubectl and helm ({exc})"
        except processes.Outside:
            why = "the tree is a symbolic link to outside the repository"
        except OSError as exc:
            why = f"the tree cannot be copied ({exc.strerror or type(exc).__name__})"

        def produce(unit: Unit) -> tuple[bytes | None, str]:
            if copied is None:
                return None, why
            inner = os.path.relpath(unit.folder, root)
            for link, _target in copied.links_out:
                if processes.inside(os.path.join(root, link), unit.folder):
                    return None, (
                        f"{os.path.join(shown_root, link)} is a symbolic link that leaves "
                        "the repository: not copied, nor read (DRA250)"
                    )
            if unit.tool == "kustomize":
                build = builds.builder()
                if build is None:
                    return None, "kubectl (or kustomize) is not on PATH"
                _reads, stop = builds._closure(os.path.join(root, unit.path), repository)
                if stop is not None:  # a remote base (never fetched) or a link out
                    return None, stop.message
                built, error = builds._build(
                    build, copied.root, inner, env, budget, limit, shown_root
                )
                return built, "" if built is not None else f"kubectl kustomize: {error}"
            helm = renders.helm()
            if helm is None:
                return None, "helm is not on PATH"
            args = [*(("-f", unit.values) if unit.values else ())]
            args += ("-f", unit.migration) if unit.migration else ()
            argv = [helm, "template", renders.RELEASE, ".", "--namespace", renders.NAMESPACE]
            share = budget.next_share()
            if share <= 0:
                return None, budget.spent()
            folder = os.path.normpath(os.path.join(copied.root, inner))
            done = processes.run([*argv, *args], folder, env, share, limit)
            if done.stdout is None:
                return None, f"helm template: {processes.helm_failure(done, folder)}"
            return done.stdout, ""

        yield produce


def located(unit: Unit, raw: bytes, root: str) -> list[Deployable]:
    """The objects of a build or a rendering, each pointed at its source."""
    objects = _objects(unit.path, raw, unit.display)
    if unit.tool == "kustomize":
        return _located(objects, unit.folder, root)
    return _from_sources(objects, raw, unit.folder, root)


def read_tree(root: str, paths: Sequence[str], excludes: Sequence[str] = ()) -> Tree:
    """What deploys from ``paths`` (relative to ``root``, the tree's top)."""
    files, used, tops = units(root, paths, excludes)
    out: list[Deployable] = []
    found: list[Finding] = []
    for f in files:
        if os.path.realpath(f) in used:
            continue
        if not f.endswith((".yaml", ".yml", ".json")):
            continue
        rel = os.path.relpath(f, root)
        try:
            raw = discover.read_file(f)
            out.extend(_objects(rel, raw, ""))
        except (discover.Unreadable, InputProblem):
            continue  # the conversion reports the file; nothing of it deploys
    if tops:
        with producing(root) as produce:
            for unit in tops:
                made, error = produce(unit)
                if made is None:
                    found.append(_unplaced(unit.path, error))
                    continue
                out.extend(located(unit, made, root))
    return Tree(out, found)


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def _unplaced(path: str, why: str) -> Finding:
    return finding(
        "DRA810",
        path,
        1,
        1,
        f"not placed: {why}; its workloads are not simulated",
        "install it (the README's CI tools) and run again",
    )


def _objects(path: str, raw: bytes, unit: str) -> Iterable[Deployable]:
    source = sources.decode(path, raw)
    for doc in compose.parse(source):
        for w in locate.objects(doc):
            if not w.kind or not w.name:
                continue
            data = trees.to_data(w.root)
            if not isinstance(data, dict):
                continue
            line, col = w.position
            item = Deployable(w.kind, w.namespace or "", w.name, path, line, col, data, unit)
            if not item.native and not item.support:
                item.sites = _sites(w)
                if not item.sites:
                    continue  # nothing the scheduler places
            yield item


def _sites(w: locate.Workload) -> list[tuple[str, int, dict[str, Any], dict[str, str]]]:
    """The pod specs of a custom resource, each with the pods it makes at once."""
    from dra_migrate.pipeline.one_file import _replicas

    out = []
    for site in locate.pod_sites(w):
        if site.style != "pod":
            continue  # an Argo template or a KServe component: no PodSpec of its own
        spec = trees.to_data(site.pod)
        if isinstance(spec, dict):
            count = _replicas(site)
            out.append((site.path, 1 if count is None else count, spec, dict(site.template_labels)))
    return out


def _located(items: Iterable[Deployable], folder: str, root: str) -> list[Deployable]:
    """Objects of a build pointed at the file of the unit that defines them."""
    index: dict[tuple[str, str], tuple[str, int, int]] = {}
    for f in discover.expand([folder], ()):
        if not f.path.endswith((".yaml", ".yml")):
            continue
        try:
            for d in _objects(os.path.relpath(f.path, root), discover.read_file(f.path), ""):
                index.setdefault((d.kind, d.name), (d.path, d.line, d.col))
        except (discover.Unreadable, InputProblem):
            continue
    for base in sorted(_bases(folder)):
        for f in discover.expand([base], ()):
            if not f.path.endswith((".yaml", ".yml")):
                continue
            try:
                for d in _objects(os.path.relpath(f.path, root), discover.read_file(f.path), ""):
                    index.setdefault((d.kind, d.name), (d.path, d.line, d.col))
            except (discover.Unreadable, InputProblem):
                continue
    out = list(items)
    for item in out:
        where = index.get((item.kind, item.name)) or _suffixless(index, item)
        if where is not None:
            item.path, item.line, item.col = where
    return out


def _bases(folder: str) -> set[str]:
    found = set()
    for name in roles.KUSTOMIZATION_NAMES:
        k = os.path.join(folder, name)
        if os.path.isfile(k):
            found |= {os.path.dirname(p) for p in roles.references(k)}
    return found - {os.path.realpath(folder)}


def _suffixless(
    index: dict[tuple[str, str], tuple[str, int, int]], item: Deployable
) -> tuple[str, int, int] | None:
    """A name a prefix or suffix of the overlay changed: the defined name it holds."""
    for (kind, name), where in index.items():
        if kind == item.kind and name in item.name:
            return where
    return None


def _from_sources(
    items: Iterable[Deployable], rendered: bytes, chart: str, root: str
) -> list[Deployable]:
    """Objects of a rendering pointed at their template (helm's ``# Source:``)."""
    text = rendered.decode("utf-8", "replace")
    starts = [(m.start(), m[1]) for m in _SOURCE.finditer(text)]
    lines = [text.count("\n", 0, at) + 1 for at, _ in starts]
    out = list(items)
    for item in out:
        source = None
        for (_at, name), line in zip(starts, lines, strict=True):
            if line <= item.line:
                source = name
        if source is not None:
            parts = source.split("/", 1)
            template = os.path.join(chart, parts[1] if len(parts) > 1 else parts[0])
            item.path, item.line, item.col = os.path.relpath(template, root), 1, 1
    return out
