"""What each wave of the plan needs before it moves and the command that moves it: the
DRA driver and DeviceClasses of its workloads (stage 2 and 3), the quota keys of the
ResourceQuotas of their namespaces (DRA206) and Kueue's ``deviceClassMappings`` for
their queues (DRA226); a workload whose prerequisite the repository shows unmet ranks
above the pilot's; the risk factors that every workload shares, which rank nothing,
left out; and ``dra-migrate convert --write`` with the files of the wave, a kustomize
base with its overlays and a chart's folder each as one unit."""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from collections.abc import Sequence

from dra_migrate.k8s.versions import DEFAULT_TARGET
from dra_migrate.migration import strategy
from dra_migrate.migration.deviceclasses import ClassPlan
from dra_migrate.report.findings import Finding
from dra_migrate.report.migration import Wave, Workload
from dra_migrate.report.model import OVERLAY_UNIT, FileResult

# Each risk factor of ``stages.risk_factors`` belongs to one family, by its text; a
# family whose weight every movable workload shares ranks nothing and is left out.
FAMILIES = (
    ("namespace", re.compile(r"production namespace |no namespace|namespace \S+ may serve")),
    ("kind", re.compile(r"\S+: long-running")),
    ("gpus", re.compile(r"\d+ GPUs per pod$")),
    ("replicas", re.compile(r"\d+ replicas$")),
)
UNMET_WEIGHT = 2  # a prerequisite the repository shows unmet: never among the pilot's
_QUOTA_NAME = re.compile(r"^ResourceQuota (?:(?P<namespace>[^/\s]+)/)?\S+ limits (?P<key>\S+):")
_NEW_KEY = re.compile(r"add (?P<key>\S+): (?P<amount>\S+) to spec\.hard")
_QUEUED = re.compile(
    r"^(?P<kind>\S+) (?P<name>\S+) is queued by Kueue \(LocalQueue (?P<queue>.+?)\)"
)


def family(text: str) -> str:
    return next((name for name, pattern in FAMILIES if pattern.match(text)), text)


def ranking(
    workloads: Sequence[Workload], factors: Sequence[list[tuple[int, str]]]
) -> list[list[tuple[int, str]]]:
    """The (weight, text) factors of each workload, less those of a family that every
    movable workload has with one weight ("namespace X may serve production" on each):
    they add the same to every risk and tell nothing apart."""
    movable = [i for i, w in enumerate(workloads) if w.strategy not in strategy.LEFT]
    if len(movable) < 2:
        return [list(f) for f in factors]
    weights: dict[str, set[int]] = {}
    present: dict[str, int] = {}
    for i in movable:
        for name, weight in {family(text): weight for weight, text in factors[i]}.items():
            weights.setdefault(name, set()).add(weight)
            present[name] = present.get(name, 0) + 1
    constant = {n for n, ws in weights.items() if present[n] == len(movable) and len(ws) == 1}
    return [
        [(weight, text) for weight, text in f if family(text) not in constant]
        if i in movable
        else list(f)
        for i, f in enumerate(factors)
    ]


def needs(w: Workload, findings: Sequence[Finding], classes: ClassPlan) -> list[tuple[str, bool]]:
    """The prerequisites of ``w``: its driver and classes, its namespace's quota keys
    (DRA206), its queue's deviceClassMappings (DRA226). Unmet: what the repository shows
    missing (a quota key, a Kueue mapping); a driver or class is met when installed."""
    out: list[tuple[str, bool]] = []
    if w.strategy in strategy.LEFT:
        return out
    created = {c.name: c.driver for c in classes.classes}
    installed = {c.name: c.driver for c in classes.installed}
    used = sorted(
        {
            classes.bridge.get(c.resource, c.device_class or "")
            if w.strategy == strategy.BRIDGE
            else c.device_class or ""
            for c in w.containers
        }
        - {""}
    )
    for name in used:
        if name in created:
            out.append((f"DeviceClass {name} created (stage 3), driver {created[name]}", False))
        elif name in installed:
            out.append((f"DRA driver {installed[name]} with its DeviceClass {name}", False))
        else:
            out.append((f"DeviceClass {name} and the driver that serves it", False))
    for f in findings:
        if f.code == "DRA206":
            quota, key = _QUOTA_NAME.match(f.message), _NEW_KEY.search(f.hint)
            same = quota and key and (quota["namespace"] or "") == (w.namespace or "")
            if same and key and any(name in key["key"] for name in used):
                out.append((f"quota key {key['key']}: {key['amount']} (DRA206)", True))
        elif f.code == "DRA226" and f.path == w.path:
            queued = _QUEUED.match(f.message)
            if queued and (queued["kind"], queued["name"]) == (w.kind, w.name):
                mapped = ", ".join(used) or "the device class"
                out.append(
                    (
                        f"Kueue deviceClassMappings for {mapped} (LocalQueue {queued['queue']}, "
                        "DRA226)",
                        True,
                    )
                )
    return list(dict.fromkeys(out))


def hold_back(
    workloads: Sequence[Workload], findings: Sequence[Finding], classes: ClassPlan
) -> None:
    """A workload whose prerequisite is unmet gets a risk factor that says which, so that
    it is not ranked among the least risky (the pilot)."""
    for w in workloads:
        unmet = [text for text, missing in needs(w, findings, classes) if missing]
        if unmet:
            w.risk += UNMET_WEIGHT
            w.risk_factors.append("needs first: " + "; ".join(unmet))


@dataclasses.dataclass(frozen=True, slots=True)
class CommandSettings:
    """The options of the plan's run that ``convert`` must be given to do the same."""

    strategy: str | None
    kube_version: str | None
    target: str


def with_steps(
    waves: Sequence[Wave],
    workloads: Sequence[Workload],
    findings: Sequence[Finding],
    classes: ClassPlan,
    files: Sequence[FileResult],
    charts: Sequence[str],
    settings: CommandSettings,
) -> list[Wave]:
    """Each wave with what it needs first (its workloads' prerequisites, each once) and
    the commands that carry it out."""
    by_path = {r.path: r for r in files}
    done: dict[str, int] = {}  # a path (file, unit or chart) -> the wave that converts it
    out = []
    for wave in waves:
        group = [w for w in workloads if w.wave == wave.number]
        prerequisites = list(
            dict.fromkeys(text for w in group for text, _ in needs(w, findings, classes))
        )
        paths: list[str] = []
        earlier: set[int] = set()
        for w in group:
            if w.strategy != strategy.REWRITE:
                continue
            for path in _unit(w.path, by_path, files, charts):
                if path in done and done[path] != wave.number:
                    earlier.add(done[path])
                elif path not in done:
                    done[path] = wave.number
                    paths.append(path)
        commands = []
        if paths:
            commands.append(_convert(paths, settings))
        if earlier:
            said = ", ".join(str(n) for n in sorted(earlier))
            commands.append(f"# and what moved with wave {said}: their files hold both waves")
        if any(w.strategy == strategy.BRIDGE for w in group):
            commands.append(
                "# bridged: nothing to convert; apply the DeviceClasses of stage 3 "
                "(dra-migrate deviceclasses"
                + (f" --strategy {settings.strategy}" if settings.strategy else "")
                + " . | kubectl apply -f -)"
            )
        out.append(
            dataclasses.replace(wave, prerequisites=tuple(prerequisites), commands=tuple(commands))
        )
    return out


def _unit(
    path: str, by_path: dict[str, FileResult], files: Sequence[FileResult], charts: Sequence[str]
) -> list[str]:
    """What ``convert`` must be given to convert the file at ``path``: the chart's folder
    for a chart's file; for a kustomize base its overlays' folders (where their new
    templates are written) and the unit's files outside them; else the file."""
    for root in charts:
        if _under(path, root):
            return [root]
    result = by_path.get(path)
    if result is None or not result.units:
        return [path]
    folders = {
        os.path.dirname(unit.removeprefix(OVERLAY_UNIT)) or "."
        for unit in result.units
        if unit.startswith(OVERLAY_UNIT)
    }
    members = {r.path for r in files if r.units & result.units and not r.created}
    return sorted(folders | {p for p in members if not any(_under(p, f) for f in folders)})


def _under(path: str, folder: str) -> bool:
    return folder == "." or path == folder or path.startswith(folder.rstrip("/") + "/")


def _convert(paths: Sequence[str], settings: CommandSettings) -> str:
    words = ["dra-migrate", "convert", "--write"]
    if settings.strategy:
        words += ["--strategy", settings.strategy]
    if settings.kube_version:
        words += ["--kube-version", settings.kube_version]
    if settings.target != DEFAULT_TARGET and not settings.kube_version:
        words += ["--target", settings.target]
    words += ["--", *paths] if any(p.startswith("-") for p in paths) else list(paths)
    return " ".join(shlex.quote(word) for word in words)
