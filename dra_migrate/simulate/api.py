"""The API server as ``simulate`` uses it: create, patch a status, list, delete, through
the ``kubernetes`` client's connection pool and credentials (the ``cluster`` extra),
with the kubeconfig read as cluster mode reads it (``cluster/live.py``).

Unlike cluster mode, which only reads, ``simulate`` writes: only the objects of the
run (labelled ``dra-migrate.dev/simulation``), in namespaces of its own and the fake
nodes and slices its fleet asks for."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from dra_migrate.cluster.live import Connection, _client_rest, _configure

TIMEOUT = 30.0  # seconds for one request


@dataclass(frozen=True, slots=True)
class Kind:
    plural: str
    namespaced: bool


# the kinds a run creates: (apiVersion's group, kind) -> REST names
KINDS = {
    ("", "Namespace"): Kind("namespaces", False),
    ("", "Node"): Kind("nodes", False),
    ("", "Pod"): Kind("pods", True),
    ("", "Event"): Kind("events", True),
    ("", "ServiceAccount"): Kind("serviceaccounts", True),
    ("", "ResourceQuota"): Kind("resourcequotas", True),
    ("", "LimitRange"): Kind("limitranges", True),
    ("", "ReplicationController"): Kind("replicationcontrollers", True),
    ("apps", "Deployment"): Kind("deployments", True),
    ("apps", "ReplicaSet"): Kind("replicasets", True),
    ("apps", "StatefulSet"): Kind("statefulsets", True),
    ("apps", "DaemonSet"): Kind("daemonsets", True),
    ("batch", "Job"): Kind("jobs", True),
    ("batch", "CronJob"): Kind("cronjobs", True),
    ("scheduling.k8s.io", "PriorityClass"): Kind("priorityclasses", False),
    ("resource.k8s.io", "DeviceClass"): Kind("deviceclasses", False),
    ("resource.k8s.io", "ResourceSlice"): Kind("resourceslices", False),
    ("resource.k8s.io", "ResourceClaim"): Kind("resourceclaims", True),
    ("resource.k8s.io", "ResourceClaimTemplate"): Kind("resourceclaimtemplates", True),
}


class ApiError(Exception):
    """An answer other than success: the status and the server's own message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def path_of(api_version: str, kind: str, namespace: str = "", name: str = "") -> str:
    group, _, version = api_version.rpartition("/")
    spec = KINDS.get((group, kind))
    if spec is None:
        raise ApiError(0, f"{api_version} {kind} is not a kind simulate creates")
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    scope = f"/namespaces/{quote(namespace, safe='')}" if spec.namespaced and namespace else ""
    item = f"/{quote(name, safe='')}" if name else ""
    return f"{base}{scope}/{spec.plural}{item}"


class Api:
    """One connection to one API server."""

    def __init__(self, kubeconfig: str | None, context: str | None = None) -> None:
        rest = _client_rest()
        self.configuration, self.source, self.default_namespace = _configure(
            Connection(kubeconfig, context)
        )
        self.configuration.connection_pool_maxsize = 16
        self.pool = rest.RESTClientObject(self.configuration).pool_manager
        self.host = self.configuration.host.rstrip("/")

    def close(self) -> None:
        self.pool.clear()

    def _headers(self, content: str | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "dra-migrate-simulate"}
        if content:
            headers["Content-Type"] = content
        for auth in self.configuration.auth_settings().values():
            if auth.get("in") == "header" and auth.get("value"):
                headers[auth["key"]] = auth["value"]
        return headers

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: dict[str, str] | None = None,
        content: str = "application/json",
    ) -> Any:
        url = self.host + path + ("?" + urlencode(query) if query else "")
        data = None if body is None else json.dumps(body).encode()
        answer = self.pool.request(
            method,
            url,
            body=data,
            headers=self._headers(content if data is not None else None),
            timeout=TIMEOUT,
            retries=False,
        )
        text = answer.data.decode("utf-8", "replace")
        if answer.status >= 300:
            try:
                message = json.loads(text).get("message") or text
            except (ValueError, AttributeError):
                message = text
            raise ApiError(answer.status, " ".join(str(message).split())[:2000])
        return json.loads(text) if text else None

    def create(self, obj: dict[str, Any], namespace: str = "") -> dict[str, Any]:
        kind = str(obj.get("kind"))
        result: dict[str, Any] = self.request(
            "POST", path_of(str(obj.get("apiVersion")), kind, namespace), obj
        )
        return result

    def patch_status(self, api_version: str, kind: str, name: str, status: Any) -> None:
        self.request(
            "PATCH",
            path_of(api_version, kind, "", name) + "/status",
            {"status": status},
            content="application/merge-patch+json",
        )

    def list(
        self, api_version: str, kind: str, namespace: str = "", selector: str = ""
    ) -> Iterator[dict[str, Any]]:
        query = {"limit": "500"}
        if selector:
            query["labelSelector"] = selector
        while True:
            page = self.request("GET", path_of(api_version, kind, namespace), query=query)
            yield from page.get("items") or []
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return
            query["continue"] = token

    def delete(self, api_version: str, kind: str, name: str, namespace: str = "") -> None:
        try:
            self.request(
                "DELETE",
                path_of(api_version, kind, namespace, name),
                {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"},
            )
        except ApiError as error:
            if error.status != 404:
                raise
