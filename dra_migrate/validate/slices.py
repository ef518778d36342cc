"""On real devices (``--resource-slices``): every class and request evaluated on the
devices of the ResourceSlices, per node, as the scheduler's allocator would, so a
claim that stays Pending is found before it reaches a cluster; ``devices_for``, the
devices a request may be given."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from dra_migrate.report.findings import Finding
from dra_migrate.validate.model import ClaimDef, FileCheck, Request, Selector, Where

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any


def check_slices(
    checks: Sequence[FileCheck],
    devices: Sequence[Any],
    installed: Sequence[tuple[str, Sequence[str]]] = (),
) -> list[Finding]:
    """Evaluate classes and requests on the devices of ``kubectl get resourceslices``
    (``installed``: the live cluster's DeviceClasses, name and CEL selectors; a class of
    the input of the same name, then, is the one evaluated)."""
    from dra_migrate.k8s.catalog import load_catalog

    found: list[Finding] = []
    class_selectors: dict[str, list[Selector]] = {}
    for info in load_catalog().device_classes:
        class_selectors[info.name] = [Selector(info.selector, Where("", 0, 0))]
    for name, expressions in installed:
        class_selectors[name] = [Selector(e, Where("", 0, 0)) for e in expressions]
    for check in checks:
        for cls in check.classes:
            class_selectors[cls.name] = cls.selectors
    evaluator = _Evaluator(devices)
    for check in checks:
        for cls in check.classes:
            if not evaluator.compiles(cls.selectors):
                continue
            matching = evaluator.matching(cls.selectors, found)
            w = cls.where
            if matching is None:
                continue  # DRA344 says why
            if not matching:
                found.append(
                    w.finding(
                        "DRA342",
                        f"DeviceClass {cls.name} matches none of the {len(devices)} devices in "
                        "the ResourceSlices",
                        "check the driver name, attribute names and values against the slices",
                    )
                )
            else:
                found.append(
                    w.finding(
                        "DRA343",
                        f"DeviceClass {cls.name} matches {len(matching)} device(s): "
                        + _per_node(matching),
                    )
                )
        for claim in check.claims:
            chosen: dict[str, tuple[int, list[Any]]] = {}
            ok = True
            for request in claim.requests:
                result, pick = _request_on_devices(claim, request, class_selectors, evaluator)
                found.extend(result)
                if pick is None:
                    ok = False
                else:
                    chosen[request.name] = pick
            found.extend(_constraints_on_devices(claim, chosen))
            if ok and len(chosen) > 1:
                found.extend(_claim_on_one_node(claim, chosen))
    return found


def devices_for(
    devices: Sequence[Any],
    device_class: str,
    selectors: Sequence[str] = (),
    classes: Mapping[str, Sequence[str]] | None = None,
) -> list[Any] | None:
    """The devices a request for ``device_class`` with ``selectors`` may be given.

    The class's selectors come from ``classes`` (name -> CEL expressions, for
    classes the caller defines) or from the classes known drivers install.
    None when the class is unknown, or a selector does not compile or fails on
    a device (the allocation would abort).
    """
    from dra_migrate.k8s.catalog import load_catalog

    known = {c.name: [c.selector] for c in load_catalog().device_classes}
    known.update({k: list(v) for k, v in (classes or {}).items()})
    if device_class not in known:
        return None
    where = Where("", 0, 0)
    chosen = [Selector(e, where) for e in [*known[device_class], *selectors]]
    evaluator = _Evaluator(devices)
    if not evaluator.compiles(chosen):
        return None
    return evaluator.matching(chosen, [])


def published_names(devices: Iterable[Any]) -> frozenset[str]:
    """Every domain, and domain/name of attribute and capacity, the devices publish."""
    names: set[str] = set()
    for device in devices:
        for table in (device.attributes, device.capacity):
            for domain, values in table.items():
                names.add(domain)
                names.update(f"{domain}/{name}" for name in values)
    return frozenset(names)


def _constraints_on_devices(
    claim: ClaimDef, chosen: Mapping[str, tuple[int, list[Any]]]
) -> list[Finding]:
    """A constraint on an attribute none of a request's matching devices publishes.

    The allocator skips a device without the constraint's attribute, so such a
    request is never satisfied: the pods that use the claim stay Pending.
    """
    found: list[Finding] = []
    for constraint in claim.constraints:
        names = {r.partition("/")[0] for r in constraint.requests} or set(chosen)
        for name in sorted(names & set(chosen)):
            _count, devices = chosen[name]
            if any(
                constraint.attribute in d.attributes.get(constraint.domain, {}) for d in devices
            ):
                continue
            w = constraint.where
            found.append(
                w.finding(
                    "DRA351",
                    f"{claim.kind} {claim.name}: {constraint.key} "
                    f"{constraint.domain}/{constraint.attribute}: none of the {len(devices)} "
                    f"device(s) request {name!r} matches publishes it, so the request is never "
                    "allocated: a pod using it stays Pending",
                    "constrain on an attribute the devices in the ResourceSlices have",
                )
            )
    return found


def _claim_on_one_node(
    claim: ClaimDef, chosen: Mapping[str, tuple[int, list[Any]]]
) -> list[Finding]:
    """All requests of a claim are allocated on one node, with distinct devices."""
    nodes = {d.node for _n, devices in chosen.values() for d in devices if d.node is not None}
    for node in sorted(nodes) or [None]:
        slots = [
            [d.name + "@" + (d.node or "") for d in devices if d.node in (node, None)]
            for count, devices in chosen.values()
            for _ in range(count)
        ]
        if _assignable(slots):
            return []
    need = ", ".join(f"{name}: {count}" for name, (count, _d) in chosen.items())
    total = sum(count for count, _d in chosen.values())
    w = claim.where
    return [
        w.finding(
            "DRA341",
            f"{claim.kind} {claim.name} needs {total} distinct devices on one node ({need}); "
            "no node in the ResourceSlices has them all: a pod using it stays Pending",
            "requests of one claim are allocated on the same node",
        )
    ]


def _assignable(slots: list[list[str]]) -> bool:
    """Whether every slot gets a distinct device (bipartite matching, augmenting paths)."""
    owner: dict[str, int] = {}

    def place(slot: int, seen: set[str]) -> bool:
        for device in slots[slot]:
            if device in seen:
                continue
            seen.add(device)
            if device not in owner or place(owner[device], seen):
                owner[device] = slot
                return True
        return False

    return all(place(i, set()) for i in range(len(slots)))


def _request_on_devices(
    claim: ClaimDef,
    request: Request,
    class_selectors: Mapping[str, list[Selector]],
    evaluator: _Evaluator,
) -> tuple[list[Finding], tuple[int, list[Any]] | None]:
    """Findings for one request, and (count, matching devices) of the option that fits."""
    found: list[Finding] = []
    options = request.subrequests or [request]
    w = request.where
    label = f"{claim.kind} {claim.name} request {request.name!r}"
    best: list[Any] = []
    for option in options:
        if option.device_class is None:
            continue
        if option.device_class not in class_selectors:
            return [], None  # unknown class: reported by cross_check, nothing to evaluate
        selectors = [*class_selectors[option.device_class], *option.selectors]
        if not evaluator.compiles(selectors):
            return [], None  # DRA330 reports the selector; nothing to evaluate
        before = len(found)
        matching = evaluator.matching(selectors, found)
        if matching is None:
            if len(found) == before and evaluator.failure is not None:
                # the class's selector is not in the input (a known driver's built-in
                # class): the failure is the request's, so it is reported there
                device, error = evaluator.failure
                found.append(
                    _selector_fails(
                        w,
                        f"{label}: the selector of DeviceClass {option.device_class}",
                        device,
                        error,
                        "the class comes from its driver: check that the driver version "
                        "matches the one that published the slices",
                    )
                )
            return found, None  # DRA344: the allocation would abort
        need = option.count if option.mode == "ExactCount" and option.count else 1
        if matching and _max_per_node(matching) >= need:
            found.append(
                w.finding(
                    "DRA343",
                    f"{label} ({option.device_class}): {len(matching)} device(s) match: "
                    + _per_node(matching),
                )
            )
            return found, (need if option.mode == "ExactCount" else 1, matching)
        if len(matching) > len(best):
            best = matching
    need = max((o.count or 1) for o in options)
    if not best:
        found.append(
            w.finding(
                "DRA340",
                f"{label} matches no device in the ResourceSlices: a pod using it stays Pending",
                "compare the device class and selectors with the devices' attributes",
            )
        )
    else:
        found.append(
            w.finding(
                "DRA341",
                f"{label} needs {need} device(s) on one node; at most {_max_per_node(best)} "
                f"match on any node ({_per_node(best)}): a pod using it stays Pending",
            )
        )
    return found, None


class _Evaluator:
    """Evaluates selectors on devices, like the scheduler's allocator.

    A selector that does not compile is left out (DRA330 reports it); one that
    fails at run time on a device aborts the allocation in Kubernetes, so the
    class or request cannot be satisfied (DRA344, reported once a selector).
    """

    def __init__(self, devices: Sequence[Any]) -> None:
        self.devices = devices
        self.reported: set[str] = set()
        self.broken: dict[str, bool] = {}
        self.failure: tuple[Any, Exception] | None = None  # the last selector failure

    def compiles(self, selectors: Sequence[Selector]) -> bool:
        from dra_migrate.cel import check_selector

        for selector in selectors:
            if selector.expression not in self.broken:
                problems = check_selector(selector.expression)
                self.broken[selector.expression] = any(
                    p.code in ("syntax", "too-long", "not-bool", "too-complex") for p in problems
                )
            if self.broken[selector.expression]:
                return False
        return True

    def matching(self, selectors: Sequence[Selector], found: list[Finding]) -> list[Any] | None:
        """The devices all selectors accept; None when a selector fails on some device."""
        from dra_migrate.cel import CelEvaluationError, evaluate_selector

        result = []
        failed = False
        for device in self.devices:
            ok = True
            for selector in selectors:
                try:
                    if not evaluate_selector(selector.expression, device):
                        ok = False
                        break
                except CelEvaluationError as exc:
                    ok = False
                    failed = True
                    self.failure = (device, exc)
                    key = selector.expression
                    if key not in self.reported and selector.where.path:
                        self.reported.add(key)
                        found.append(
                            _selector_fails(
                                selector.where,
                                "selector",
                                device,
                                exc,
                                "guard attributes that not every device has with has()",
                            )
                        )
                    break
            if ok:
                result.append(device)
        return None if failed else result


def _selector_fails(w: Where, what: str, device: Any, error: Exception, hint: str) -> Finding:
    """DRA344: a selector raised an error on a device, so the allocation aborts."""
    return w.finding(
        "DRA344",
        f"{what} fails on device {device.name} of {device.node or 'the cluster'}: {error}; "
        "Kubernetes aborts the allocation of a claim whose selector fails",
        hint,
    )


def _counts(devices: Sequence[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    shared = sum(1 for d in devices if d.node is None)
    for device in devices:
        if device.node is not None:
            counts[device.node] = counts.get(device.node, 0) + 1
    if shared:
        for node in list(counts):
            counts[node] += shared
        counts.setdefault("(any node)", shared)
    return counts


def _max_per_node(devices: Sequence[Any]) -> int:
    return max(_counts(devices).values(), default=0)


def _per_node(devices: Sequence[Any]) -> str:
    return ", ".join(f"{node} {n}" for node, n in sorted(_counts(devices).items()))
