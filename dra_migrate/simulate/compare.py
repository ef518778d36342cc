"""The comparison: each workload placed before and after, and what differs as findings
at the workload's ``file:line:col`` with the scheduler's own reason.

A workload holds when, after the conversion, the API server accepted it and what it
needs, it binds as many pods as before, and each container of a bound pod has as many
devices as it had GPUs. Those differences are errors (DRA801 to DRA803: exit status 1).
Pods on other node pools (DRA804) are a warning: among nodes that score the same the
scheduler takes them in the order it evaluated them, which starts at another node
each cycle (``nextStartNodeIndex`` in kubernetes v1.37.2 ``pkg/scheduler/schedule_one.go``), so a
workload that fits two pools may land on either in any run. More pods bound after than
before (DRA805) and nothing to compare (DRA806) are warnings; a workload that is not in
the tree after (DRA807) is an error; a run that did not settle (DRA808) and a difference that
disappears when the workload is placed alone (DRA811) are warnings; how a workload
without its operator was placed (DRA809) is information."""

from __future__ import annotations

from dataclasses import dataclass

from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.simulation import Placement, SimulatedWorkload
from dra_migrate.simulate.place import Phase, Unit

SEVERE = ("DRA801", "DRA802", "DRA803")
CONTENDED = ("DRA801", "DRA803")  # differences that competing for GPUs can make


@dataclass(slots=True)
class Compared:
    rows: list[SimulatedWorkload]
    findings: list[Finding]
    # the rows that differ in what competing for GPUs can change, with their units
    contended: list[tuple[SimulatedWorkload, Unit, Unit]]


def compare(
    before: Phase,
    after: Phase,
    placed: dict[str, dict[int, Placement]],
    quiet: bool,
    timeout: float,
) -> Compared:
    rows: list[SimulatedWorkload] = []
    found: list[Finding] = []
    contended: list[tuple[SimulatedWorkload, Unit, Unit]] = []
    later = _keyed(after.units)
    seen = set()
    for key, unit in _keyed(before.units).items():
        seen.add(key)
        twin = later.get(key)
        item = unit.item
        was = placed[before.tag].get(unit.index)
        now = placed[after.tag].get(twin.index) if twin is not None else None
        where = twin.item if twin is not None else item
        row = SimulatedWorkload(
            where.path,
            where.line,
            where.col,
            item.kind,
            item.namespace,
            item.name,
            unit.site,
            unit.placed_as,
            was,
            now,
        )
        problems = _differences(row, was, now, after, twin)
        if unit.placed_as == "Job of its pod template":
            problems.append(
                finding(
                    "DRA809",
                    row.path,
                    row.line,
                    row.col,
                    f"{row.display} ({unit.site}) placed as a Job of its pod template: its "
                    "operator is not part of the simulation",
                    "what the operator adds to its pods (labels, gang scheduling) is not placed",
                )
            )
        row.holds = not any(f.code in SEVERE or f.code == "DRA807" for f in problems)
        if twin is not None and any(f.code in CONTENDED for f in problems):
            contended.append((row, unit, twin))
        rows.append(row)
        found.extend(problems)
    for key, unit in later.items():
        if key not in seen:
            item = unit.item
            now = placed[after.tag].get(unit.index)
            rows.append(
                SimulatedWorkload(
                    item.path,
                    item.line,
                    item.col,
                    item.kind,
                    item.namespace,
                    item.name,
                    unit.site,
                    unit.placed_as,
                    None,
                    now,
                    holds=True,
                )
            )
    if not quiet:
        found.append(
            finding(
                "DRA808",
                "",
                0,
                0,
                f"the scheduler did not settle within {timeout:g} seconds: pods were still "
                "being created or scheduled when the placements were read",
                "a larger --timeout, or a smaller fleet",
            )
        )
    return Compared(rows, found, contended)


def alone(compared: Compared, confirmed: dict[int, bool]) -> None:
    """``confirmed``: for the index of a row of ``contended``, whether the workload,
    placed again alone on the fleet, still differs. One that holds alone differs only
    when it competes with the others for GPUs (which pod wins a device is the order
    the scheduler meets them in, not the conversion): its DRA801 and DRA803 become
    DRA811."""
    for index, (row, _unit, _twin) in enumerate(compared.contended):
        if confirmed.get(index, True):
            continue
        mine = [
            f
            for f in compared.findings
            if f.code in CONTENDED
            and (f.path, f.line, f.col) == (row.path, row.line, row.col)
            and row.display in f.message
        ]
        for f in mine:
            compared.findings.remove(f)
            compared.findings.append(
                finding(
                    "DRA811",
                    f.path,
                    f.line,
                    f.col,
                    f"{f.message.split('; the scheduler:')[0]} among the other workloads, "
                    "but holds when placed alone: the GPUs went to others first",
                    "which pod gets a GPU when they compete is the scheduler's order; "
                    "a fleet with room for all shows no difference",
                )
            )
        row.holds = not any(
            f.code in SEVERE
            and (f.path, f.line, f.col) == (row.path, row.line, row.col)
            and row.display in f.message
            for f in compared.findings
        )


def _keyed(units: list[Unit]) -> dict[tuple[str, ...], Unit]:
    """Units by what they are (unit of the tree, kind, namespace, name, pod template),
    the second of one key counted apart (two files defining one object)."""
    out: dict[tuple[str, ...], Unit] = {}
    for unit in units:
        item = unit.item
        key: tuple[str, ...] = (item.unit, item.kind, item.namespace, item.name, unit.site)
        n = 0
        while (*key, str(n)) in out:
            n += 1
        out[(*key, str(n))] = unit
    return out


def _differences(
    row: SimulatedWorkload,
    was: Placement | None,
    now: Placement | None,
    after: Phase,
    twin: object,
) -> list[Finding]:
    at = (row.path, row.line, row.col)
    name = row.display
    if row.site not in ("spec", "spec.template.spec", "spec.jobTemplate.spec.template.spec"):
        name = f"{name} ({row.site})"

    def say(code: str, message: str, hint: str = "") -> Finding:
        return finding(code, *at, message, hint)

    if now is None or was is None:
        return [
            say(
                "DRA807",
                f"{name} ({row.site}) is placed before the conversion but is not in the "
                "tree after it",
                "the converted tree must keep every workload (same kind, namespace, name)",
            )
        ]
    out: list[Finding] = []
    refused = now.refused or _support_refused(after, row, twin)
    if refused and not was.refused:
        return [
            say(
                "DRA802",
                f"{name}: the API server refused it after the conversion: {refused}",
                "fix the converted object; the server's message says which field",
            )
        ]
    if was.bound == 0 and now.bound:
        why = was.refused or "; ".join(was.reasons) or "no pod was created"
        out.append(
            say(
                "DRA805",
                f"{name}: {now.bound} of its pods bound after the conversion, none before ({why})",
            )
        )
        return out
    if was.bound == 0:
        why = was.refused or "; ".join(was.reasons) or "no pod was created"
        out.append(
            say(
                "DRA806",
                f"{name}: no pod of it is bound before the conversion ({why}): nothing to compare",
                "give a fleet it fits on (--fleet)",
            )
        )
        return out
    if now.bound < was.bound:
        why = "; ".join(now.reasons) or f"{now.created} pods created"
        out.append(
            say(
                "DRA801",
                f"{name}: {now.bound} of its pods bound after the conversion, {was.bound} "
                f"before; the scheduler: {why}",
                "the reason names what no node has: a toleration, a device, a quota",
            )
        )
    elif now.bound > was.bound:
        out.append(
            say(
                "DRA805",
                f"{name}: {now.bound} of its pods bound after the conversion, only "
                f"{was.bound} before ({'; '.join(was.reasons) or 'no reason given'})",
            )
        )
    if now.bound and _fewer_or_other(was, now, _init_containers(twin)):
        out.append(
            say(
                "DRA803",
                f"{name}: containers get {_devices(now)} after the conversion, "
                f"{_devices(was)} before",
                "each container must ask its claim for as many devices as it had GPUs",
            )
        )
    moved = set(now.pools) - set(was.pools)
    if now.bound and moved:
        out.append(
            say(
                "DRA804",
                f"{name}: pods on node pool(s) {', '.join(sorted(moved))} after the "
                f"conversion, on {', '.join(was.pools)} before",
                "check the claim's selectors and the pod's node selector: they may admit "
                "other GPUs",
            )
        )
    return out


def _init_containers(unit: object) -> frozenset[str]:
    """Names of the init containers (not sidecars) of a unit's pod spec: after the
    conversion they see the devices of the claim they share with the app containers
    (DRA207), so more devices than before is that sharing, not a difference."""
    obj = getattr(unit, "obj", None) or {}
    spec = obj.get("spec") or {}
    if obj.get("kind") != "Pod":
        spec = (spec.get("template") or {}).get("spec") or {}
    return frozenset(
        str(c.get("name"))
        for c in spec.get("initContainers") or []
        if isinstance(c, dict) and c.get("restartPolicy") != "Always"
    )


def _fewer_or_other(was: Placement, now: Placement, init: frozenset[str]) -> bool:
    before, after = dict(was.devices), dict(now.devices)
    for name in set(before) | set(after):
        a, b = before.get(name, 0), after.get(name, 0)
        if name in init and b >= a:
            continue
        if a != b:
            return True
    return False


def _devices(p: Placement) -> str:
    return ", ".join(f"{c}: {n}" for c, n in p.devices) or "no device"


_CLAIM_KINDS = ("ResourceClaimTemplate", "ResourceClaim")


def _support_refused(after: Phase, row: SimulatedWorkload, unit: object) -> str:
    """What the server refused of what the workload needs after the conversion: a
    ResourceClaimTemplate or ResourceClaim of its namespace that its pod spec names."""
    obj = getattr(unit, "obj", None) or {}
    spec = obj.get("spec") or {}
    if obj.get("kind") != "Pod":
        spec = (spec.get("template") or {}).get("spec") or {}
    named = set()
    for entry in spec.get("resourceClaims") or []:
        if isinstance(entry, dict):
            named |= {entry.get("resourceClaimTemplateName"), entry.get("resourceClaimName")}
    for (kind, namespace, name), message in after.support_refused.items():
        if kind in _CLAIM_KINDS and namespace == row.namespace and name in named:
            return f"{kind} {name}: {message}"
    return ""
