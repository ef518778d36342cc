"""What ``convert --verify-helm`` (``renders.py``) compares: the conversion of a
rendering before with the rendering after, object by object (``compare.py``), either
exactly up to the names of generated ResourceClaimTemplates (``exact``, a template
edit) or every field up to the names a chart gives its own claims (``claims``, a
recipe whose chart renders claims of its own): each container's claims stand for
what they ask for, whole; and the first line that differs between two renderings
(the switch off).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dra_migrate.pipeline import compare

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAMESPACE = "dra-migrate"  # the namespace the proof renders in (helm --namespace)
# kinds compared through the containers that use them (compare: claims)
_CLAIM_KINDS = ("ResourceClaimTemplate", "ResourceClaim")
ALLOCATED = "(allocated)"  # the key of a container's allocation in the claims view


def exact_difference(expected: bytes, actual: bytes, gpu: Callable[[str], bool]) -> str:
    """The first difference between the converted rendering and the rendering after,
    object by object, names of generated templates aside (``compare.keyed``); ""."""
    del gpu  # every field counts
    return compare.difference(compare.keyed(_load(expected)), compare.keyed(_load(actual)))


def claims_difference(expected: bytes, actual: bytes, gpu: Callable[[str], bool]) -> str:
    """The first difference between the converted rendering and the rendering after,
    every field of every object compared up to the names a chart gives its claims:
    each container's allocation (``_claims_view``) stands for its claims, the pod's
    resourceClaims and the ResourceClaimTemplates they name; the tolerations, the
    extended resources left and every other field count as they are; ""."""
    return compare.difference(_claims_view(expected, gpu), _claims_view(actual, gpu))


def byte_difference(
    before: bytes, after: bytes, names: tuple[str, str] = ("before", "after")
) -> str:
    """The first line that differs between two renderings; "" when they are equal."""
    if before == after:
        return ""
    one, two = names
    old, new = before.splitlines(), after.splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"line {number}: {_line(a)} {one}, {_line(b)} {two}"
    number = min(len(old), len(new)) + 1
    if len(old) == len(new):  # the same lines: the line breaks differ
        return "the line breaks differ"
    if len(old) > len(new):
        return f"line {number}: {_line(old[number - 1])} {one}, the end {two}"
    return f"line {number}: the end {one}, {_line(new[number - 1])} {two}"


def _line(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _load(data: bytes) -> list[dict[str, Any]]:
    """The objects of a rendering, each in the release's namespace unless it names
    one: what ``helm install --namespace`` makes of them (a chart may write
    ``namespace: {{ .Release.Namespace }}`` on one object and nothing on another)."""
    out = compare.loaded(data)
    for obj in out:
        meta = obj.get("metadata")
        if isinstance(meta, dict) and not meta.get("namespace"):
            meta["namespace"] = NAMESPACE
    return out


def _claims_view(data: bytes, gpu: Callable[[str], bool]) -> dict[tuple[str, ...], Any]:
    """The objects of a rendering by (apiVersion, kind, namespace, name), the claims and
    templates pods refer to taken into the pods: in each pod spec, every container's
    allocation under ``(allocated)`` (what its claims ask for, whole, request and claim
    names aside, and its mapped extended resources), the pod's claims no container uses
    under ``(unused claims)``; every other field (tolerations included) as it is. A
    claim or template nobody refers to is an object of its own."""
    import copy

    objects = _load(data)
    sources: dict[tuple[str, str, str], Any] = {}  # (kind, namespace, name) -> claim spec
    for obj in objects:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        if obj.get("kind") == "ResourceClaimTemplate":
            spec = spec if isinstance(spec, dict) else {}
        elif obj.get("kind") == "ResourceClaim":
            spec = {"spec": spec}  # compared as a template's claim: metadata aside
        if obj.get("kind") in _CLAIM_KINDS:
            sources[(str(obj["kind"]), meta.get("namespace") or "", str(meta.get("name")))] = spec
    used: set[tuple[str, str, str]] = set()
    out: dict[tuple[str, ...], Any] = {}
    for obj in objects:
        if obj.get("kind") in _CLAIM_KINDS:
            continue
        obj = copy.deepcopy(obj)
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or ""
        for pod in _pod_specs(obj):
            _allocate(pod, namespace, sources, gpu, used)
        key = (str(obj.get("apiVersion")), str(obj.get("kind")), namespace, str(meta.get("name")))
        out[key] = obj
    for obj in objects:  # a claim or template no pod refers to: compared as it is
        meta = obj.get("metadata") or {}
        where = (str(obj.get("kind")), meta.get("namespace") or "", str(meta.get("name")))
        if obj.get("kind") in _CLAIM_KINDS and where not in used:
            out[(str(obj.get("apiVersion")), *where)] = obj
    return out


def _pod_specs(value: Any) -> Iterable[dict[str, Any]]:
    """Every pod spec in an object (a mapping with a list of containers), any kind."""
    if isinstance(value, dict):
        if isinstance(value.get("containers"), list):
            yield value
        for item in value.values():
            yield from _pod_specs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _pod_specs(item)


UNUSED = "(unused claims)"  # the key of a pod's claims no container uses


def _allocate(
    pod: dict[str, Any],
    namespace: str,
    sources: dict[tuple[str, str, str], Any],
    gpu: Callable[[str], bool],
    used: set[tuple[str, str, str]],
) -> None:
    entries = {
        e.get("name"): e for e in pod.pop("resourceClaims", None) or [] if isinstance(e, dict)
    }
    named: set[Any] = set()
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in pod.get(field) or []:
            if isinstance(container, dict):
                container[ALLOCATED] = _allocation(
                    container, entries, namespace, sources, gpu, used, named
                )
    unused = [
        _claim(entry, None, namespace, sources, used)
        for name, entry in entries.items()
        if name not in named
    ]
    if unused:
        pod[UNUSED] = sorted(unused, key=_ordered)


def _ordered(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, default=str)


def _claim(
    entry: dict[str, Any],
    request: Any,
    namespace: str,
    sources: dict[tuple[str, str, str], Any],
    used: set[tuple[str, str, str]],
) -> Any:
    """What a pod's claim entry asks for (one request of it when ``request`` is set):
    the template's or claim's spec whole, request names replaced by their place."""
    if entry.get("resourceClaimTemplateName"):
        kind, name = "ResourceClaimTemplate", entry["resourceClaimTemplateName"]
    else:
        kind, name = "ResourceClaim", entry.get("resourceClaimName")
    spec = sources.get((kind, namespace, str(name)))
    if spec is None:
        return {"missing": f"{kind} {name}"}
    used.add((kind, namespace, str(name)))
    claim: dict[str, Any] = spec["spec"] if isinstance(spec.get("spec"), dict) else {}
    devices: dict[str, Any] = claim["devices"] if isinstance(claim.get("devices"), dict) else {}
    asked = [r for r in devices.get("requests") or [] if isinstance(r, dict)]
    places = {r.get("name"): f"#{i}" for i, r in enumerate(asked)}
    whole = {
        "kind": kind,
        "metadata": spec.get("metadata") or {},
        "spec": {
            **{k: v for k, v in claim.items() if k != "devices"},
            "devices": {
                **{k: _placed(v, places) for k, v in devices.items() if k != "requests"},
                "requests": [
                    _request(r) for r in asked if request is None or r.get("name") == request
                ],
            },
        },
    }
    return whole


def _placed(value: Any, places: dict[Any, str]) -> Any:
    """Config and constraints with the request names they list replaced by places."""
    if isinstance(value, dict):
        return {
            k: [places.get(x, x) for x in v]
            if k == "requests" and isinstance(v, list)
            else _placed(v, places)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_placed(v, places) for v in value]
    return value


def _allocation(
    container: dict[str, Any],
    entries: dict[Any, Any],
    namespace: str,
    sources: dict[tuple[str, str, str], Any],
    gpu: Callable[[str], bool],
    used: set[tuple[str, str, str]],
    named: set[Any],
) -> list[Any]:
    """What a container is allocated, its GPU fields taken out of it."""
    found: list[Any] = []
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return found
    for claim in resources.pop("claims", None) or []:
        if not isinstance(claim, dict):
            continue
        named.add(claim.get("name"))
        entry = entries.get(claim.get("name"))
        if entry is None:
            found.append({"claim": "missing from the pod's resourceClaims"})
            continue
        found.append(_claim(entry, claim.get("request"), namespace, sources, used))
    for field in ("limits", "requests"):
        amounts = resources.get(field)
        if isinstance(amounts, dict):
            for name in [n for n in amounts if gpu(str(n))]:
                found.append({"extendedResource": name, field: str(amounts.pop(name))})
            if not amounts:
                resources.pop(field)
    if not resources:
        container.pop("resources")
    return sorted(found, key=_ordered)


def _request(asked: dict[str, Any]) -> dict[str, Any]:
    """A device request as what it allocates (v1 ``exactly``, or the flat v1beta1 form),
    every field but its name."""
    if "firstAvailable" in asked:
        return {"firstAvailable": [_exactly(s) for s in asked["firstAvailable"] or []]}
    return _exactly(asked.get("exactly") or asked)


def _exactly(body: dict[str, Any]) -> dict[str, Any]:
    mode = body.get("allocationMode") or "ExactCount"
    selectors = [
        " ".join(str((s.get("cel") or {}).get("expression", "")).split())
        for s in body.get("selectors") or []
        if isinstance(s, dict)
    ]
    rest = {
        k: v
        for k, v in body.items()
        if k not in ("name", "allocationMode", "count", "selectors", "adminAccess", "tolerations")
    }
    return {
        **rest,
        "allocationMode": mode,
        "count": body.get("count", 1) if mode == "ExactCount" else None,
        "selectors": sorted(selectors),
        "adminAccess": bool(body.get("adminAccess")),
        "tolerations": body.get("tolerations") or [],
    }


def still_asking(expected: bytes, actual: bytes, gpu: Callable[[str], bool]) -> list[str]:
    """The objects of the rendering after whose containers still ask for an extended
    resource the conversion migrates while the converted rendering's same object does
    not (a chart's DRA switch that does not cover it), each as ``Kind ns/name asks for
    <resource>``."""
    want = {_where(o): o for o in _load(expected)}
    out = []
    for obj in _load(actual):
        have = _asked(obj, gpu)
        if not have or _asked(want.get(_where(obj)), gpu):
            continue
        kind, namespace, name = _where(obj)
        out.append(f"{kind} {namespace}/{name} still asks for {', '.join(sorted(have))}")
    return out


def _where(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name"))


def _asked(obj: Any, gpu: Callable[[str], bool]) -> set[str]:
    """The mapped extended resources an object's containers ask for."""
    found: set[str] = set()
    for pod in _pod_specs(obj) if obj is not None else ():
        for field in ("initContainers", "containers", "ephemeralContainers"):
            for container in pod.get(field) or []:
                resources = (
                    (container or {}).get("resources") if isinstance(container, dict) else None
                )
                for part in ("limits", "requests"):
                    amounts = (resources or {}).get(part) if isinstance(resources, dict) else None
                    if isinstance(amounts, dict):
                        found.update(str(n) for n in amounts if gpu(str(n)))
    return found
