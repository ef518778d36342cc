"""Checks of the guarantees a conversion must keep, shared by property and corpus tests.

They read the output with a plain YAML loader, independent of the converter's
own node handling, and compare it with the input.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable
from typing import Any

import yaml

from dra_migrate.k8s import schemas
from dra_migrate.report.model import InventoryItem

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def load_all(text: str) -> list[Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # a later duplicate key wins
    return [d for d in yaml.load_all(io.StringIO(text), Loader=loader) if d is not None]


def objects(docs: Iterable[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for doc in docs:
        if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") and "items" in doc:
            out.extend(i for i in doc["items"] if isinstance(i, dict))
        elif isinstance(doc, dict):
            out.append(doc)
    return out


def resolve(obj: Any, path: str) -> Any:
    for name, index in _STEP.findall(path):
        obj = obj[int(index)] if index else obj[name]
    return obj


def _containers(pod: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for field in ("initContainers", "containers", "sidecars"):
        for c in pod.get(field) or []:
            found.append((field, c))
    for c in (pod.get("containerSet") or {}).get("containers") or []:
        found.append(("containers", c))
    for field, value in pod.items():
        if isinstance(value, dict) and "resources" in value and field not in ("resources",):
            found.append((field, value))
    return found


def _container(pod: dict[str, Any], item: InventoryItem) -> dict[str, Any]:
    for field, c in _containers(pod):
        name = c.get("name") or ("kserve-container" if field != "container" else "main")
        if field in ("container", "script") and not c.get("name"):
            name = "main"
        if name == item.container:
            return c
    raise AssertionError(f"container {item.container} not found at {item.pod_path}")


def _pod_claims(pod: dict[str, Any]) -> dict[str, str]:
    claims = list(pod.get("resourceClaims") or [])
    patch = pod.get("podSpecPatch")
    if isinstance(patch, str):
        claims += json.loads(patch).get("resourceClaims") or []
    return {c["name"]: c["resourceClaimTemplateName"] for c in claims}


def _requests(template: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for request in template["spec"]["spec"]["devices"]["requests"]:
        body = request.get("exactly", request)
        counts[request["name"]] = int(body.get("count", 1))
    return counts


def check_conversion(
    original: str,
    converted: str,
    inventory: list[InventoryItem],
    kube_version: str | None = None,
) -> None:
    """Every GPU a container had is a device it requests, no more, no less; all valid."""
    before = objects(load_all(original))
    after = objects(load_all(converted))
    templates = {
        (o.get("metadata", {}).get("namespace"), o["metadata"]["name"]): o
        for o in after
        if o.get("kind") == "ResourceClaimTemplate"
    }
    for template in templates.values():
        errors = schemas.validate_object(template, kube_version)
        assert not errors, f"generated template invalid: {errors}"
    assert len(after) - len(before) >= 0
    pods: dict[tuple[Any, ...], list[InventoryItem]] = {}
    for item in inventory:
        if item.device_class and item.count:
            key = (item.kind, item.namespace, item.name, item.pod_path)
            pods.setdefault(key, []).append(item)
    for (kind, namespace, name, pod_path), items in pods.items():
        matches = [
            o
            for o in after
            if o.get("kind") == kind
            and (o.get("metadata") or {}).get("name", (o.get("metadata") or {}).get("generateName"))
            == name
            and (o.get("metadata") or {}).get("namespace") == namespace
        ]
        assert matches, f"{kind} {name} missing from the output"
        pod = resolve(matches[0], pod_path)
        pod_claims = _pod_claims(pod)
        template_names = set(pod_claims.values())
        assert len(template_names) == 1, f"expected one template for {name} {pod_path}"
        template = templates[(namespace, template_names.pop())]
        counts = _requests(template)
        classes = _classes(template)
        app_total: dict[str, int] = {}
        init_need: dict[str, int] = {}
        sidecars_so_far: dict[str, int] = {}
        for item in items:  # in pod order: init containers first, as declared
            container = _container(pod, item)
            resources = container.get("resources") or {}
            for section in ("limits", "requests"):
                left = [k for k in (resources.get(section) or {}) if k == item.resource]
                assert not left, f"{item.container} still has {left} in {section}"
            refs = [c["request"] for c in resources.get("claims") or [] if c["name"] in pod_claims]
            assert len(refs) == len(set(refs)), f"duplicate claim reference in {item.container}"
            got = sum(counts[r] for r in refs if classes[r] == item.device_class)
            need = sum(
                i.count or 0
                for i in items
                if i.container == item.container and i.device_class == item.device_class
            )
            key = f"{item.device_class}|{item.resource}"
            if item.role == "init":
                assert got >= need, f"init container {item.container} sees {got} < {need}"
                # Kubernetes: an init container runs beside the sidecars started before it
                init_need[key] = max(
                    init_need.get(key, 0), (item.count or 0) + sidecars_so_far.get(key, 0)
                )
            else:
                assert got == need, f"{item.container} had {need} GPUs, requests {got}"
                app_total[key] = app_total.get(key, 0) + (item.count or 0)
                if item.role == "sidecar":
                    sidecars_so_far[key] = sidecars_so_far.get(key, 0) + (item.count or 0)
        for device_class in set(classes.values()):
            held = sum(n for r, n in counts.items() if classes[r] == device_class)
            plugin = sum(
                max(app_total.get(k, 0), init_need.get(k, 0))
                for k in set(app_total) | set(init_need)
                if k.split("|")[0] == device_class
            )
            assert held == plugin, (
                f"{name}: template holds {held} {device_class} devices, Kubernetes "
                f"accounts {plugin} for the pod"
            )


def _classes(template: dict[str, Any]) -> dict[str, str]:
    return {
        r["name"]: r.get("exactly", r)["deviceClassName"]
        for r in template["spec"]["spec"]["devices"]["requests"]
    }


_REMOVABLE = re.compile(r"""^\s*["']?(limits|requests)["']?\s*:\s*(#.*)?$""")


def check_untouched(original: str, converted: str, gpu_names: Iterable[str]) -> None:
    """Lines that do not carry a GPU request survive in order; no comment is lost."""
    names = (*gpu_names, "rayStartParams:")  # an empty flow rayStartParams gains num-gpus
    kept = [
        line
        for line in original.splitlines()
        if not any(n in line for n in names) and not _REMOVABLE.match(line)
    ]
    out = converted.splitlines()
    position = 0
    for line in kept:
        try:
            position = out.index(line, position) + 1
        except ValueError:
            raise AssertionError(f"line lost or reordered: {line!r}") from None
    for comment in re.findall(r"(?:^|\s)(#.*)$", original, re.M):
        assert comment.strip() in converted, f"comment lost: {comment!r}"


def gpu_job(name: str, count: int = 1, container: str = "main", comment: str = "") -> str:
    """A Job in namespace ml whose one container asks for ``count`` NVIDIA GPUs
    (``comment``: a comment line above it; ``container`` may carry a trailing comment)."""
    head = f"# {comment}\n" if comment else ""
    return f"""{head}apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: {container}
          image: img:1
          resources:
            limits:
              nvidia.com/gpu: {count}
"""


TRAIN_JOB = gpu_job("train")


def claim_template(name: str, namespace: str = "ml", device_class: str = "gpu.nvidia.com") -> str:
    """A ResourceClaimTemplate manifest asking for one device of ``device_class``."""
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {name}
  namespace: {namespace}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: {device_class}
"""


def gpu_pod(name: str, namespace: str = "ml", count: int | str = 1) -> str:
    """A Pod whose one container ``c`` (image ``i``) asks for ``count`` NVIDIA GPUs."""
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
spec:
  containers:
  - name: c
    image: i
    resources:
      limits:
        nvidia.com/gpu: {count}
"""
