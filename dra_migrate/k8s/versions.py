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


# Kinds of resource.k8s.io whose versions are not those of APIS (k8s.io/api resource/*/
# types.go, +k8s:prerelease-lifecycle-gen:introduced): DeviceTaintRule is v1alpha3 from
# 1.33, v1beta2 from 1.36 and v1 from 1.37; like every alpha and beta API version its
# alpha and beta need --runtime-config, and only v1 is served by default.
KIND_APIS: dict[str, dict[str, ApiVersion]] = {
    "DeviceTaintRule": {
        "v1alpha3": ApiVersion("v1alpha3", 33, None, None, False),
        "v1beta2": ApiVersion("v1beta2", 36, None, None, False),
        "v1": ApiVersion("v1", 37, None, None, True),
    },
}


def kind_versions(kind: str, minor: int) -> list[str]:
    """The resource.k8s.io versions Kubernetes 1.``minor`` has for ``kind`` (oldest first)."""
    return [
        v.name
        for v in KIND_APIS[kind].values()
        if v.introduced <= minor and (v.removed is None or minor < v.removed)
    ]


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


FIRST_MINOR_TEXT = "1.32"  # the first release whose DRA API dra-migrate writes (v1beta1)


def target_for(minor: int) -> str:
    """The newest resource.k8s.io version a release serves."""
    if minor >= 34:
        return "v1"
    if minor == 33:
        return "v1beta2"
    if minor == 32:
        return "v1beta1"
    had = next((what for first, last, what in ALPHA_ERAS if first <= minor <= last), None)
    lead = f"Kubernetes 1.{minor} is not supported: dra-migrate needs Kubernetes {FIRST_MINOR_TEXT} or later"
    if had is not None:
        raise ConfigError(
            f"{lead} (it writes resource.k8s.io v1beta1 and later); upgrade the cluster first. "
            f"1.{minor} has {had}: it is not absent, but dra-migrate does not support alpha APIs "
            "(their objects changed shape in every release)"
        )
    raise ConfigError(
        f"{lead}. 1.{minor} has no Dynamic Resource Allocation (the first alpha API "
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
# The versioned specs of kubernetes/kubernetes: the DRA gates live in
# staging/src/k8s.io/kube-scheduler/pkg/features/kube_features.go from 1.37 (read at
# commit 080d02a09a472ab8954ee6e99b6ff308bde601eb); DRAPartitionableDevicesType,
# DRAResourcePoolStatus and DRAResourceClaimGranularStatusAuthorization are not in that
# file, and come from the feature-gate pages of kubernetes/website
# (content/en/docs/reference/command-line-tools-reference/feature-gates/). Where the
# website's generated gate table disagrees with the code (it calls DRASchedulerFilterTimeout
# alpha and off in 1.34; the code and the gate's own page say beta and on) the code wins.
# Per gate: the release where it appeared, where it went beta, where it is on by default,
# where it went GA and where it was locked to its default (LockToDefault: the component
# refuses to start with it set to anything else). The components are the
# ``feature-gates[].components`` of each KEP's kep.yaml in kubernetes/enhancements (commit
# 64765b4b02389318f2113119dd9e491479f978a0). While a gate is off the API server drops the
# field it guards when an object is created, so what is applied is not what the manifest
# says (and a request left without firstAvailable is rejected).

APISERVER, CONTROLLER_MANAGER, SCHEDULER, KUBELET = (
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
)


@dataclass(frozen=True, slots=True)
class FeatureGate:
    name: str
    alpha: int  # first minor with the gate (and its fields)
    on: int | None  # first minor with the gate on by default; None: still off
    guards: str  # the fields it guards, for messages and docs
    components: tuple[str, ...] = (APISERVER, SCHEDULER)  # where it is set (the KEP's list)
    kep: int = 0  # kubernetes/enhancements KEP number
    beta: int | None = None  # first minor as beta (on or off by default)
    ga: int | None = None  # first minor as GA
    locked: int | None = None  # first minor locked to its default (cannot be turned off)
    field: bool = True  # False: the gate guards no field of the objects dra-migrate reads

    def stage(self, minor: int) -> str:
        """alpha, beta or GA in Kubernetes 1.``minor``."""
        if self.ga is not None and minor >= self.ga:
            return "GA"
        if self.beta is not None and minor >= self.beta:
            return "beta"
        return "alpha"

    def locked_in(self, minor: int) -> bool:
        return self.locked is not None and minor >= self.locked


_ALL = (APISERVER, CONTROLLER_MANAGER, SCHEDULER, KUBELET)

GATES: dict[str, FeatureGate] = {
    g.name: g
    for g in (
        FeatureGate(
            "DynamicResourceAllocation",
            26,
            34,
            "the resource.k8s.io API and the resourceClaims of pods",
            _ALL,
            kep=4381,
            beta=32,
            ga=34,
            locked=35,
        ),
        FeatureGate(
            "DRAAdminAccess",
            32,
            34,
            "adminAccess in device requests",
            (APISERVER, CONTROLLER_MANAGER, SCHEDULER),
            kep=5018,
            beta=34,
            ga=36,
            locked=36,
        ),
        FeatureGate(
            "DRAPrioritizedList",
            33,
            34,
            "firstAvailable in device requests",
            (APISERVER, CONTROLLER_MANAGER, SCHEDULER),
            kep=4816,
            beta=34,
            ga=36,
            locked=37,
        ),
        FeatureGate(
            "DRADeviceTaints",
            33,
            36,
            "tolerations in device requests, taints of ResourceSlice devices, DeviceTaintRules",
            (APISERVER, CONTROLLER_MANAGER, SCHEDULER),
            kep=5055,
            beta=36,
            ga=37,  # LockToDefault still false in 1.37 (true in 1.38, says the code)
        ),
        FeatureGate(
            "DRADeviceTaintRules",
            35,
            37,
            "DeviceTaintRule objects",
            (APISERVER, CONTROLLER_MANAGER, SCHEDULER),
            kep=5055,
            beta=36,  # beta and off in 1.36: it depends on an off-by-default beta API
            ga=37,
        ),
        FeatureGate(
            "DRAPartitionableDevices",
            33,
            36,
            "sharedCounters, consumesCounters and per-device node selection in ResourceSlices",
            (APISERVER, SCHEDULER),
            kep=4815,
            beta=36,
        ),
        FeatureGate(
            "DRAConsumableCapacity",
            34,
            36,
            "capacity requests, distinctAttribute constraints, allowMultipleAllocations and "
            "capacity requestPolicy",
            (APISERVER, SCHEDULER, KUBELET),
            kep=5075,
            beta=36,
        ),
        FeatureGate(
            "DRAExtendedResource",
            34,
            36,
            "extendedResourceName of DeviceClasses",
            _ALL,
            kep=5004,
            beta=36,
            ga=37,
            locked=37,
        ),
        FeatureGate(
            "DRADeviceBindingConditions",
            34,
            36,
            "bindingConditions, bindingFailureConditions and bindsToNode of devices",
            # the KEP lists kube-scheduler only; the API server drops the fields
            # (+featureGate in k8s.io/api resource/v1 types.go), so it is set there too
            (APISERVER, SCHEDULER),
            kep=5007,
            beta=36,
        ),
        FeatureGate(
            "DRAResourceClaimDeviceStatus",
            32,
            33,
            "status.devices of ResourceClaims",
            (APISERVER,),
            kep=4817,
            beta=33,
            ga=37,
            locked=37,
        ),
        FeatureGate(
            "DRASchedulerFilterTimeout",
            34,
            34,
            "the filter timeout of the scheduler's DynamicResources plugin",
            (SCHEDULER,),
            kep=4381,
            beta=34,
            field=False,
        ),
        FeatureGate(
            "DRAListTypeAttributes",
            36,
            None,
            "list attributes (bools, ints, strings, versions)",
            (APISERVER, SCHEDULER),
            kep=5491,
        ),
        FeatureGate(
            "DRANodeAllocatableResources",
            36,
            None,
            "nodeAllocatableResources of devices (nodeAllocatableResourceMappings in 1.36)",
            (APISERVER, SCHEDULER, KUBELET),
            kep=5517,
        ),
        FeatureGate(
            "DRAWorkloadResourceClaims",
            36,
            None,
            "ResourceClaims of PodGroups (the Workload API)",
            _ALL,
            kep=5729,
            beta=37,  # beta and still off in 1.37
            field=False,
        ),
        FeatureGate(
            "DRAResourcePoolStatus",
            36,
            None,
            "ResourcePoolStatusRequest objects",
            (APISERVER, CONTROLLER_MANAGER),
            kep=5677,
            field=False,
        ),
        FeatureGate(
            "DRAResourceClaimGranularStatusAuthorization",
            36,
            36,
            "per-field authorization of ResourceClaim status updates (resourceclaims/binding "
            "and resourceclaims/driver)",
            (APISERVER,),
            kep=4817,
            beta=36,
            field=False,
        ),
        FeatureGate(
            "DRADerivedAttributes",
            37,
            None,
            # kubernetes/api at 10b39a39 (2026-07-24) has the gate but not the field; the
            # OpenAPI of Kubernetes 1.37.0 (kubernetes-validate 1.37.0) has it, as does the
            # API server's strategy test: the released API wins
            "derivedAttributes in device requests",
            (APISERVER, CONTROLLER_MANAGER, SCHEDULER),
            kep=6080,
        ),
        FeatureGate(
            "DRADeviceCompatibilityGroups",
            37,
            None,
            # like derivedAttributes: in the 1.37.0 OpenAPI, not yet in kubernetes/api 10b39a39
            "compatibilityGroups of a device's consumesCounters",
            (APISERVER, SCHEDULER),
            kep=5963,
        ),
        FeatureGate(
            "DRAPartitionableDevicesType",
            37,
            None,
            "partitionTypeAttribute of ResourceSlices",
            # the website's gate page: kube-apiserver and kube-controller-manager
            (APISERVER, CONTROLLER_MANAGER),
            kep=5677,
        ),
        FeatureGate(
            "DRAOptionalNodeOperations",
            37,
            None,
            "skipNodeOperations of ResourceSlices",
            # KEP-5945 names the gate DRAOptionalNodePreparation; the code's name is used
            (APISERVER, SCHEDULER, KUBELET),
            kep=5945,
        ),
        FeatureGate(
            "DRAFractionalCapacityRange",
            37,
            37,
            "fractional (milli-unit) min, max and step of a capacity requestPolicy validRange",
            (APISERVER, SCHEDULER),
            kep=5075,
            beta=37,  # beta from the start, on by default in 1.37
        ),
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


def check_feature_gates(minor: int, overrides: tuple[tuple[str, bool], ...]) -> None:
    """Refuse a setting the release's components would refuse: a gate locked to its
    default set to the other value (``DRAPrioritizedList=false`` on 1.37)."""
    for name, value in overrides:
        gate = GATES.get(name)
        if gate is None or not gate.locked_in(minor):
            continue
        default = gate.on is not None and minor >= gate.on
        if value != default:
            older = f"--kube-version 1.{gate.locked - 1}" if gate.locked else ""
            raise ConfigError(
                f"--feature-gates {name}={str(value).lower()}: {name} is {gate.stage(minor)} "
                f"and locked to {str(default).lower()} since Kubernetes 1.{gate.locked}, so "
                f"{', '.join(gate.components)} refuse to start with it set to "
                f"{str(value).lower()} (the release checked is 1.{minor}); drop the setting, "
                f"or check an older cluster with {older}"
            )


@dataclass(frozen=True, slots=True)
class GateState:
    """Which DRA feature gates an API server has on: the release's defaults, then
    ``--feature-gates``."""

    minor: int
    overrides: tuple[tuple[str, bool], ...] = ()
    release_given: bool = True  # False: no --kube-version, the newest release assumed

    def enabled(self, name: str) -> bool:
        gate = GATES[name]
        default = gate.on is not None and self.minor >= gate.on
        explicit = dict(self.overrides)
        if name in explicit and not gate.locked_in(self.minor):
            return explicit[name]
        return default

    def exists(self, name: str) -> bool:
        """The release has the gate (and the fields it guards) at all."""
        return self.minor >= GATES[name].alpha

    def why_off(self, name: str) -> str:
        """Why ``name`` is off, for a finding's message."""
        gate = GATES[name]
        if dict(self.overrides).get(name) is False:
            return f"--feature-gates sets {name}=false"
        release = f"Kubernetes 1.{self.minor}"
        stage = gate.stage(self.minor)
        if gate.on is None:
            return f"{name} is {stage}, off by default in {release}"
        return f"{name} is {stage}, off by default in {release} (on from 1.{gate.on})"

    def how_to_enable(self, name: str) -> str:
        gate = GATES[name]
        newer = f", or use Kubernetes 1.{gate.on} or later" if gate.on else ""
        *first, last = gate.components
        where = f"{', '.join(first)} and {last}" if first else last
        kep = f" (KEP-{gate.kep})" if gate.kep else ""
        return (
            f"turn it on with --feature-gates={name}=true on {where}{kep}, and validate "
            f"with --feature-gates {name}=true{newer}"
        )


def gate_state(kube_version: str | None, overrides: tuple[tuple[str, bool], ...] = ()) -> GateState:
    """The gates of ``kube_version`` (the newest bundled release when None). A gate
    locked to its default set otherwise is a ConfigError (``check_feature_gates``)."""
    minor = NEWEST_MINOR if kube_version is None else parse_kube_version(kube_version)
    check_feature_gates(minor, overrides)
    return GateState(minor, overrides, release_given=kube_version is not None)
