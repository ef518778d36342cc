"""Which resource.k8s.io version a Kubernetes release serves, and how."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dra_migrate.report.findings import ConfigError

TARGETS = ("v1beta1", "v1beta2", "v1")
DEFAULT_TARGET = "v1"


@dataclass(frozen=True, slots=True)
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


# --- feature gates of DRA fields ----------------------------------------------------
#
# From kubernetes/kubernetes pkg/features/kube_features.go (the versioned specs): the
# release where a gate appeared (alpha, off by default) and the first release where it is
# on by default (beta or GA). While a gate is off the API server drops the field it guards
# when an object is created, so what is applied is not what the manifest says (and a
# request left without firstAvailable is rejected).


@dataclass(frozen=True, slots=True)
class FeatureGate:
    name: str
    alpha: int  # first minor with the gate (and its fields)
    on: int | None  # first minor with the gate on by default; None: still off
    guards: str  # the fields it guards, for messages and docs


GATES: dict[str, FeatureGate] = {
    g.name: g
    for g in (
        FeatureGate("DRAAdminAccess", 32, 34, "adminAccess in device requests"),
        FeatureGate("DRAPrioritizedList", 33, 34, "firstAvailable in device requests"),
        FeatureGate(
            "DRADeviceTaints",
            33,
            36,
            "tolerations in device requests, taints of ResourceSlice devices, DeviceTaintRules",
        ),
        FeatureGate("DRADeviceTaintRules", 35, 37, "DeviceTaintRule objects"),
        FeatureGate(
            "DRAPartitionableDevices",
            33,
            36,
            "sharedCounters, consumesCounters and per-device node selection in ResourceSlices",
        ),
        FeatureGate(
            "DRAConsumableCapacity",
            34,
            36,
            "capacity requests, distinctAttribute constraints, allowMultipleAllocations and "
            "capacity requestPolicy",
        ),
        FeatureGate("DRAExtendedResource", 34, 36, "extendedResourceName of DeviceClasses"),
        FeatureGate(
            "DRADeviceBindingConditions",
            34,
            36,
            "bindingConditions, bindingFailureConditions and bindsToNode of devices",
        ),
        FeatureGate(
            "DRAListTypeAttributes", 36, None, "list attributes (bools, ints, strings, versions)"
        ),
        FeatureGate(
            "DRANodeAllocatableResources", 36, None, "nodeAllocatableResourceMappings of devices"
        ),
        FeatureGate("DRADerivedAttributes", 37, None, "derivedAttributes in device requests"),
    )
}

NEWEST_MINOR = 37  # the newest release whose gates and schemas are bundled

_GATE_ITEM = re.compile(r"\s*([A-Za-z][A-Za-z0-9]*)\s*=\s*(\S*)\s*")


def parse_feature_gates(text: str) -> tuple[tuple[str, bool], ...]:
    """``DRADeviceTaints=true,DRAAdminAccess=false`` -> ((name, on), ...).

    The kube-apiserver syntax. Gates dra-migrate does not know are kept (a cluster's
    flag list names other gates too) but never consulted; a malformed entry or a
    value other than true or false is a ConfigError.
    """
    gates: dict[str, bool] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        match = _GATE_ITEM.fullmatch(item)
        value = match.group(2).lower() if match else ""
        if match is None or value not in ("true", "false"):
            raise ConfigError(
                f"--feature-gates: {item.strip()!r} is not Name=true or Name=false "
                "(for example DRADeviceTaints=true,DRAConsumableCapacity=true)"
            )
        gates[match.group(1)] = value == "true"
    return tuple(gates.items())


@dataclass(frozen=True, slots=True)
class GateState:
    """Which DRA feature gates an API server has on: the release's defaults, then
    ``--feature-gates``."""

    minor: int
    overrides: tuple[tuple[str, bool], ...] = ()
    release_given: bool = True  # False: no --kube-version, the newest release assumed

    def enabled(self, name: str) -> bool:
        explicit = dict(self.overrides)
        if name in explicit:
            return explicit[name]
        gate = GATES[name]
        return gate.on is not None and self.minor >= gate.on

    def exists(self, name: str) -> bool:
        """The release has the gate (and the fields it guards) at all."""
        return self.minor >= GATES[name].alpha

    def why_off(self, name: str) -> str:
        """Why ``name`` is off, for a finding's message."""
        gate = GATES[name]
        if dict(self.overrides).get(name) is False:
            return f"--feature-gates sets {name}=false"
        release = f"Kubernetes 1.{self.minor}"
        if gate.on is None:
            return f"{name} is alpha, off by default in {release}"
        return f"{name} is off by default in {release} (on from 1.{gate.on})"

    def how_to_enable(self, name: str) -> str:
        gate = GATES[name]
        newer = f", or use Kubernetes 1.{gate.on} or later" if gate.on else ""
        return (
            f"turn it on with --feature-gates={name}=true on kube-apiserver and "
            f"kube-scheduler, and validate with --feature-gates {name}=true{newer}"
        )


def gate_state(kube_version: str | None, overrides: tuple[tuple[str, bool], ...] = ()) -> GateState:
    """The gates of ``kube_version`` (the newest bundled release when None)."""
    if kube_version is None:
        return GateState(NEWEST_MINOR, overrides, release_given=False)
    return GateState(parse_kube_version(kube_version), overrides)
