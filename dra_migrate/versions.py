"""Which resource.k8s.io version a Kubernetes release serves, and how."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dra_migrate.findings import ConfigError

TARGETS = ("v1beta1", "v1beta2", "v1")
DEFAULT_TARGET = "v1"


@dataclass(frozen=True)
class ApiVersion:
    name: str
    introduced: int  # Kubernetes minor version
    deprecated: int | None
    removed: int | None
    default_on: bool  # served without --runtime-config


APIS = {
    "v1beta1": ApiVersion("v1beta1", 32, 35, 38, False),
    "v1beta2": ApiVersion("v1beta2", 33, 36, 39, False),
    "v1": ApiVersion("v1", 34, None, None, True),
}


def parse_kube_version(text: str) -> int:
    """``1.34``, ``v1.34`` or ``1.34.2`` -> 34."""
    match = re.fullmatch(r"v?1\.(\d+)(?:\.\d+)?", text.strip())
    if match is None:
        raise ConfigError(f"--kube-version {text!r} is not a Kubernetes version like 1.34")
    return int(match.group(1))


def target_for(minor: int) -> str:
    """The newest resource.k8s.io version a release serves."""
    if minor >= 34:
        return "v1"
    if minor == 33:
        return "v1beta2"
    if minor == 32:
        return "v1beta1"
    raise ConfigError(
        f"Kubernetes 1.{minor} has no structured-parameters DRA API (resource.k8s.io "
        "v1beta1 arrived in 1.32); dra-migrate cannot target it"
    )


def warnings(target: str, minor: int) -> list[str]:
    """What a user should know about ``target`` on Kubernetes 1.``minor``.

    Raises ConfigError when the release does not have that API at all.
    """
    api = APIS[target]
    if minor < api.introduced:
        raise ConfigError(
            f"resource.k8s.io/{target} does not exist in Kubernetes 1.{minor} "
            f"(it arrived in 1.{api.introduced}); use --target {target_for(minor) if minor >= 32 else 'v1beta1'} or a newer cluster"
        )
    if api.removed is not None and minor >= api.removed:
        raise ConfigError(
            f"resource.k8s.io/{target} was removed in Kubernetes 1.{api.removed}; use --target v1"
        )
    notes = []
    if not api.default_on:
        notes.append(
            f"resource.k8s.io/{target} is not served by default in Kubernetes 1.{minor}: the API "
            f"server needs --runtime-config=resource.k8s.io/{target}=true"
            + (" and the DynamicResourceAllocation feature gate" if minor < 34 else "")
        )
    if api.deprecated is not None and minor >= api.deprecated:
        notes.append(
            f"resource.k8s.io/{target} is deprecated since Kubernetes 1.{api.deprecated} and "
            f"removed in 1.{api.removed}; prefer target v1"
        )
    return notes
