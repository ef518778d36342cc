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


# What releases before 1.32 had: DRA existed, only as alpha APIs dra-migrate does not
# write (first minor, last minor, what it was).
ALPHA_ERAS = (
    (
        31,
        31,
        "DRA with structured parameters, as the alpha API resource.k8s.io/v1alpha3 "
        "(feature gate DynamicResourceAllocation, off by default)",
    ),
    (
        30,
        30,
        "DRA with structured parameters, as an alpha extension of resource.k8s.io/v1alpha2 "
        "(feature gate DynamicResourceAllocation, off by default)",
    ),
    (
        26,
        29,
        "only the classic DRA of control-plane controllers, resource.k8s.io/v1alpha2 "
        "(alpha, since removed)",
    ),
)


def target_for(minor: int) -> str:
    """The newest resource.k8s.io version a release serves."""
    if minor >= 34:
        return "v1"
    if minor == 33:
        return "v1beta2"
    if minor == 32:
        return "v1beta1"
    had = next((what for first, last, what in ALPHA_ERAS if first <= minor <= last), None)
    if had is not None:
        raise ConfigError(
            f"Kubernetes 1.{minor} has {had}: it is not absent, but dra-migrate does not support alpha APIs "
            "(their objects changed shape in every release): it writes resource.k8s.io "
            "v1beta1 and later, served from Kubernetes 1.32; upgrade the cluster first"
        )
    raise ConfigError(
        f"Kubernetes 1.{minor} has no Dynamic Resource Allocation (the first alpha API "
        "arrived in 1.26, the first beta, which dra-migrate can write, in 1.32)"
    )


def warnings(target: str, minor: int) -> list[str]:
    """What a user should know about ``target`` on Kubernetes 1.``minor``.

    Raises ConfigError when the release does not have that API at all.
    """
    api = APIS[target]
    if minor < min(a.introduced for a in APIS.values()):
        target_for(minor)  # raises: what the release had instead, and why it is not written
    if minor < api.introduced:
        raise ConfigError(
            f"resource.k8s.io/{target} does not exist in Kubernetes 1.{minor} "
            f"(it arrived in 1.{api.introduced}); use --target {target_for(minor)} or a newer cluster"
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
