"""The ResourceSlice fields of Kubernetes 1.37 and DeviceTaintRule's versions, each
case named after its upstream source: k8s.io/api ``resource/v1/types.go`` (kubernetes/api
10b39a39bcee995dfe7cd5e8e7b922be5e46f1e2) and kubernetes/kubernetes
``pkg/apis/resource/validation`` ``TestValidateDeviceCapacity``."""

from __future__ import annotations

import pytest

from dra_migrate.validate import ValidateSettings, check_file


def _findings(doc: str, kube: str, **gates: bool) -> list[str]:
    settings = ValidateSettings(
        kube_version=kube, external_templates=True, feature_gates=tuple(gates.items())
    )
    return [f.format() for f in check_file("s.yaml", doc.encode(), settings).result.findings]


def _codes(lines: list[str]) -> set[str]:
    return {line.split(": ", 1)[1].split(" ", 1)[0] for line in lines}


def _slice(spec: str = "", device: str = "", version: str = "v1") -> str:
    return (
        f"apiVersion: resource.k8s.io/{version}\nkind: ResourceSlice\nmetadata:\n  name: s\n"
        "spec:\n  driver: gpu.example.com\n  nodeName: node-a\n"
        "  pool: {name: node-a, generation: 1, resourceSliceCount: 1}\n"
        + "".join(f"  {line}\n" for line in spec.strip("\n").splitlines())
        + "  devices:\n  - name: gpu-0\n"
        + "".join(f"    {line}\n" for line in device.strip("\n").splitlines())
    )


# --- types.go ResourceSliceSpec.PartitionTypeAttribute (DRAPartitionableDevicesType) ----


def test_types_go_partition_type_attribute_is_gated_and_fully_qualified() -> None:
    good = _slice("partitionTypeAttribute: gpu.example.com/profile")
    assert _codes(_findings(good, "1.37")) == {"DRA353"}  # alpha, off by default
    assert not _findings(good, "1.37", DRAPartitionableDevicesType=True)
    bad = _slice("partitionTypeAttribute: profile")
    lines = _findings(bad, "1.37", DRAPartitionableDevicesType=True)
    assert _codes(lines) == {"DRA357"} and "domain/name" in lines[0], lines
    assert _codes(_findings(good, "1.36", DRAPartitionableDevicesType=True)) == {"DRA301"}


# --- types.go ResourceSliceSpec.SkipNodeOperations (DRAOptionalNodeOperations) ----------


@pytest.mark.parametrize(
    ("operations", "codes"),
    [
        ("['*']", set()),
        ("[NodeUnprepareResources]", set()),
        ("[NodePrepareResources, NodeUnprepareResources]", set()),
        # "This value cannot be specified unless NodeUnprepareResources is also listed"
        ("[NodePrepareResources]", {"DRA357"}),
        ("[NodeReboot]", {"DRA357"}),  # +k8s:enum
        ("['*', '*']", {"DRA313"}),  # +listType=set
    ],
)
def test_types_go_skip_node_operations(operations: str, codes: set[str]) -> None:
    doc = _slice(f"skipNodeOperations: {operations}")
    assert _codes(_findings(doc, "1.37", DRAOptionalNodeOperations=True)) == codes
    assert _codes(_findings(doc, "1.37")) == {"DRA353"}  # the gate is alpha, off


# --- types.go Device.NodeAllocatableResources (renamed in 1.37) -------------------------

MAPPINGS_136 = "nodeAllocatableResourceMappings:\n  cpu: {capacityKey: gpu.example.com/cores}"
RESOURCES_137 = """
capacity:
  gpu.example.com/cores: {value: "8"}
nodeAllocatableResources:
  cpu:
    mapping: {capacityKey: gpu.example.com/cores, capacityMultiplier: "2"}
  memory:
    overhead: {perPod: 1Gi, perContainer: 256Mi}
  hugepages-2Mi:
    mapping: {deviceMultiplier: "4"}
"""


def test_types_go_node_allocatable_resource_mappings_is_the_136_name() -> None:
    old = _slice(device=MAPPINGS_136)
    assert not _findings(old, "1.36", DRANodeAllocatableResources=True)
    lines = _findings(old, "1.37", DRANodeAllocatableResources=True)
    assert _codes(lines) == {"DRA301"} and "nodeAllocatableResources" in lines[0], lines
    new = _slice(device=RESOURCES_137)
    assert _codes(_findings(new, "1.36", DRANodeAllocatableResources=True)) == {"DRA301"}
    assert not _findings(new, "1.37", DRANodeAllocatableResources=True)
    assert _codes(_findings(new, "1.37")) == {"DRA353"}  # alpha, off by default


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        # "At least one of Mapping or Overhead must be specified"
        ("memory: {}", "needs a mapping or an overhead"),
        # +k8s:dependentRequired("capacityMultiplier")
        ("cpu: {mapping: {capacityKey: gpu.example.com/cores}}", "together"),
        # "It is only valid when capacityKey and capacityMultiplier are not set"
        (
            "cpu: {mapping: {deviceMultiplier: '1', capacityKey: gpu.example.com/cores, "
            "capacityMultiplier: '1'}}",
            "exclude each other",
        ),
        # "CapacityKey references a capacity name defined as a key in ... capacity"
        (
            "cpu: {mapping: {capacityKey: gpu.example.com/threads, capacityMultiplier: '1'}}",
            "not a capacity of the device",
        ),
        # "Extended resource names are not permitted as keys"
        ("example.com/gpu: {overhead: {perPod: '1'}}", "extended resource name"),
        ("memory: {overhead: {perPod: lots}}", "not a quantity"),
    ],
)
def test_types_go_node_allocatable_resource_rules(entry: str, message: str) -> None:
    device = 'capacity:\n  gpu.example.com/cores: {value: "8"}\nnodeAllocatableResources:\n'
    lines = _findings(
        _slice(device=device + f"  {entry}"), "1.37", DRANodeAllocatableResources=True
    )
    assert _codes(lines) == {"DRA357"} and message in lines[0], lines


# --- TestValidateDeviceCapacity: fractional validRange (DRAFractionalCapacityRange) -----


def _policy(default: str, low: str, high: str, step: str, capacity: str = "1") -> str:
    return _slice(
        device=f"""
allowMultipleAllocations: true
capacity:
  gpu.example.com/share:
    value: "{capacity}"
    requestPolicy:
      default: {default}
      validRange: {{min: {low}, max: "{high}", step: {step}}}
"""
    )


@pytest.mark.parametrize(
    ("case", "doc", "gate", "codes"),
    [
        ("valid-range-fractional-step", _policy("200m", "200m", "1", "100m"), True, set()),
        (
            "invalid-range-fractional-step-not-aligned",
            _policy("250m", "200m", "1", "100m"),
            True,
            {"DRA355"},
        ),
        (
            "fractional-range-gate-disabled-valid",
            _policy("200m", "200m", "1", "100m"),
            False,
            set(),
        ),
        # with the gate off every value is rounded up to 1: no misalignment is seen
        (
            "fractional-range-gate-disabled-misaligned",
            _policy("250m", "200m", "1", "100m"),
            False,
            set(),
        ),
        ("fractional-too-fine-precision", _policy("20u", "10u", "1", "10u"), True, {"DRA355"}),
        (
            "fractional-range-overflow-min",
            _policy("20P", "10P", "100P", "100m", capacity="100P"),
            True,
            {"DRA355"},
        ),
    ],
)
def test_validate_device_capacity_fractional(
    case: str, doc: str, gate: bool, codes: set[str]
) -> None:
    lines = _findings(doc, "1.37", DRAFractionalCapacityRange=gate)
    assert _codes(lines) - {"DRA361"} == codes, (case, lines)
    assert ("DRA361" in _codes(lines)) == (not gate), (case, lines)  # rounded-up warning


def test_fractional_range_before_137_is_rounded_up_and_said_so() -> None:
    lines = _findings(_policy("200m", "200m", "1", "100m"), "1.36")
    assert _codes(lines) == {"DRA361"}, lines
    assert "rounded up to a whole unit" in lines[0] and "1.36 does not have it" in lines[0]
    assert not _findings(_policy("200m", "200m", "1", "100m"), "1.37")  # on by default


def test_openapi_137_derived_attributes_are_gated() -> None:
    # ExactDeviceRequest.derivedAttributes, alpha (DRADerivedAttributes) in the OpenAPI of
    # Kubernetes 1.37.0; the kubernetes/api snapshot of July 2026 did not have it yet
    doc = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: t\n"
        "spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n        exactly:\n"
        "          deviceClassName: gpu.nvidia.com\n          derivedAttributes:\n"
        "          - {name: derived/numa, expression: 'device.attributes[\"dra.example.com\"].numa'}\n"
    )
    lines = _findings(doc, "1.37")
    assert _codes(lines) == {"DRA353"} and "DRADerivedAttributes" in lines[0], lines
    assert not _findings(doc, "1.37", DRADerivedAttributes=True)
    twice = doc + "          - {name: derived/numa, expression: '1'}\n"
    assert _codes(_findings(twice, "1.37", DRADerivedAttributes=True)) == {"DRA313"}
    assert _codes(_findings(doc, "1.36", DRADerivedAttributes=True)) == {"DRA301"}


def test_openapi_137_compatibility_groups_are_gated() -> None:
    # DeviceCounterConsumption.compatibilityGroups (DRADeviceCompatibilityGroups): at most 2
    device = "consumesCounters:\n- counterSet: gpu-0\n  counters: {memory: {value: 10Gi}}\n"
    doc = _slice(device=device + "  compatibilityGroups: [mig]")
    lines = _findings(doc, "1.37")
    assert "DRA353" in _codes(lines) and any("DRADeviceCompatibilityGroups" in x for x in lines)
    assert "DRA353" not in _codes(_findings(doc, "1.37", DRADeviceCompatibilityGroups=True))
    three = _slice(device=device + "  compatibilityGroups: [a, b, c]")
    on = _findings(three, "1.37", DRADeviceCompatibilityGroups=True)
    assert "DRA313" in _codes(on), on


# --- DeviceTaintRule: v1alpha3 (1.33), v1beta2 (1.36), v1 (1.37) ------------------------

RULE = """apiVersion: resource.k8s.io/{version}
kind: DeviceTaintRule
metadata:
  name: maintenance
spec:
  deviceSelector:
    driver: gpu.nvidia.com
  taint:
    key: example.com/maintenance
    effect: NoSchedule
"""


@pytest.mark.parametrize(
    ("version", "kube", "codes"),
    [
        ("v1", "1.37", set()),
        ("v1beta2", "1.37", {"DRA303"}),  # served only with --runtime-config
        ("v1alpha3", "1.37", {"DRA303"}),
        ("v1", "1.36", {"DRA302"}),  # types.go: introduced=1.37
        ("v1beta2", "1.36", set()),
        ("v1beta2", "1.35", {"DRA302"}),  # introduced=1.36
    ],
)
def test_types_go_device_taint_rule_versions(version: str, kube: str, codes: set[str]) -> None:
    lines = _findings(
        RULE.format(version=version), kube, DRADeviceTaintRules=True, DRADeviceTaints=True
    )
    assert _codes(lines) == codes, lines
