"""Feature-gated DRA fields, ResourceSlices and DeviceTaintRules in ``validate``."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.k8s import schemas
from dra_migrate.k8s.versions import GATES, NEWEST_MINOR, gate_state, parse_feature_gates
from dra_migrate.report.findings import ConfigError
from dra_migrate.validate import ValidateSettings, check_file
from tests.helpers.cli_runner import invoke


def _findings(doc: str, kube: str | None = "1.36", **gates: bool) -> list[str]:
    settings = ValidateSettings(
        kube_version=kube, external_templates=True, feature_gates=tuple(gates.items())
    )
    return [f.format() for f in check_file("t.yaml", doc.encode(), settings).result.findings]


def _codes(lines: list[str]) -> set[str]:
    return {line.split(": ", 1)[1].split(" ", 1)[0] for line in lines}


def _claim(exactly: str, version: str = "v1", constraints: str = "") -> str:
    body = "".join(f"          {line}\n" for line in exactly.strip("\n").splitlines())
    return (
        f"apiVersion: resource.k8s.io/{version}\n"
        "kind: ResourceClaimTemplate\nmetadata:\n  name: t\nspec:\n  spec:\n    devices:\n"
        "      requests:\n      - name: gpu\n        exactly:\n"
        "          deviceClassName: gpu.nvidia.com\n" + body + constraints
    )


TOLERATION = """
tolerations:
- key: example.com/maintenance
  operator: Exists
  effect: NoSchedule
"""


def test_gate_table_matches_the_bundled_releases() -> None:
    assert f"1.{NEWEST_MINOR}" == schemas.KUBE_VERSIONS[-1]
    for gate in GATES.values():
        steps = [v for v in (gate.alpha, gate.beta, gate.ga, gate.locked) if v is not None]
        assert steps == sorted(steps) and all(v <= NEWEST_MINOR for v in steps), gate
        assert gate.on is None or gate.on >= gate.alpha, gate
        assert gate.locked is None or gate.on is not None, gate  # locked on, never off
        assert (gate.components and "kube-apiserver" in gate.components) or not gate.field
    assert GATES["DRAPrioritizedList"].on == 34 and GATES["DRADeviceTaints"].on == 36


# (gate, alpha, beta, on by default, GA, locked): the versioned specs of
# staging/src/k8s.io/kube-scheduler/pkg/features/kube_features.go (kubernetes/kubernetes
# 080d02a09a472ab8954ee6e99b6ff308bde601eb); the last three rows from the gates' pages of
# kubernetes/website, as they are not in that file.
KUBE_FEATURES_GO = [
    ("DynamicResourceAllocation", 26, 32, 34, 34, 35),
    ("DRAAdminAccess", 32, 34, 34, 36, 36),
    ("DRAConsumableCapacity", 34, 36, 36, None, None),
    ("DRADerivedAttributes", 37, None, None, None, None),
    ("DRADeviceBindingConditions", 34, 36, 36, None, None),
    ("DRADeviceCompatibilityGroups", 37, None, None, None, None),
    ("DRADeviceTaintRules", 35, 36, 37, 37, None),
    ("DRADeviceTaints", 33, 36, 36, 37, None),
    ("DRAExtendedResource", 34, 36, 36, 37, 37),
    ("DRAFractionalCapacityRange", 37, 37, 37, None, None),
    ("DRAListTypeAttributes", 36, None, None, None, None),
    ("DRANodeAllocatableResources", 36, None, None, None, None),
    ("DRAOptionalNodeOperations", 37, None, None, None, None),
    ("DRAPartitionableDevices", 33, 36, 36, None, None),
    ("DRAPrioritizedList", 33, 34, 34, 36, 37),
    ("DRAResourceClaimDeviceStatus", 32, 33, 33, 37, 37),
    ("DRASchedulerFilterTimeout", 34, 34, 34, None, None),
    ("DRAWorkloadResourceClaims", 36, 37, None, None, None),
    ("DRAPartitionableDevicesType", 37, None, None, None, None),
    ("DRAResourcePoolStatus", 36, None, None, None, None),
    ("DRAResourceClaimGranularStatusAuthorization", 36, 36, 36, None, None),
]


@pytest.mark.parametrize(("name", "alpha", "beta", "on", "ga", "locked"), KUBE_FEATURES_GO)
def test_gate_table_is_kube_features_go(
    name: str, alpha: int, beta: int | None, on: int | None, ga: int | None, locked: int | None
) -> None:
    gate = GATES[name]
    assert (gate.alpha, gate.beta, gate.on, gate.ga, gate.locked) == (alpha, beta, on, ga, locked)


def test_every_dra_gate_of_kube_features_go_is_in_the_table() -> None:
    assert set(GATES) == {row[0] for row in KUBE_FEATURES_GO}


# feature-gates[].components of each KEP's kep.yaml (kubernetes/enhancements 64765b4b)
KEP_COMPONENTS = {
    "DRAExtendedResource": (
        5004,
        {"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"},
    ),
    "DRAConsumableCapacity": (5075, {"kube-apiserver", "kube-scheduler", "kubelet"}),
    "DRADeviceTaints": (5055, {"kube-apiserver", "kube-controller-manager", "kube-scheduler"}),
    "DRAPrioritizedList": (
        4816,
        {"kube-apiserver", "kube-controller-manager", "kube-scheduler"},
    ),
    "DRAResourceClaimDeviceStatus": (4817, {"kube-apiserver"}),
}


@pytest.mark.parametrize("name", sorted(KEP_COMPONENTS))
def test_how_to_enable_names_the_components_of_the_kep(name: str) -> None:
    kep, components = KEP_COMPONENTS[name]
    assert set(GATES[name].components) == components
    advice = gate_state("1.34").how_to_enable(name)
    assert f"KEP-{kep}" in advice and all(c in advice for c in components), advice


@pytest.mark.parametrize(
    ("setting", "kube", "since"),
    [
        ("DynamicResourceAllocation=false", "1.35", 35),
        ("DRAAdminAccess=false", "1.36", 36),
        ("DRAPrioritizedList=false", "1.37", 37),
        ("DRAExtendedResource=false", "1.37", 37),
        ("DRAResourceClaimDeviceStatus=false", "1.37", 37),
    ],
)
def test_a_locked_gate_cannot_be_turned_off(setting: str, kube: str, since: int) -> None:
    with pytest.raises(ConfigError, match=f"locked to true since Kubernetes 1.{since}"):
        gate_state(kube, parse_feature_gates(setting))
    older = f"1.{since - 1}"
    assert not gate_state(older, parse_feature_gates(setting)).enabled(setting.split("=")[0])
    done = invoke(["validate", "--kube-version", kube, "--feature-gates", setting, "."])
    assert done.exit_code == 2, done.output
    assert f"locked to true since Kubernetes 1.{since}" in done.output
    assert "Traceback" not in done.output


def test_a_ga_gate_that_is_not_locked_can_still_be_turned_off() -> None:
    # DRADeviceTaints is GA in 1.37 with LockToDefault: false (locked from 1.38)
    state = gate_state("1.37", (("DRADeviceTaints", False),))
    assert not state.enabled("DRADeviceTaints")
    assert GATES["DRADeviceTaints"].stage(37) == "GA"


def test_locked_gate_in_the_configuration_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / ".dra-migrate.yaml").write_text(
        "kubeVersion: '1.37'\nfeatureGates:\n  DRAExtendedResource: false\n"
    )
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\n")
    done = invoke(["scan", str(tmp_path)])
    assert done.exit_code == 2 and "DRAExtendedResource" in done.output, done.output
    assert "locked to true since Kubernetes 1.37" in done.output


def test_parse_feature_gates() -> None:
    assert parse_feature_gates("DRADeviceTaints=true, DRAAdminAccess=False,,Other=true") == (
        ("DRADeviceTaints", True),
        ("DRAAdminAccess", False),
        ("Other", True),
    )
    for bad in ("DRADeviceTaints", "DRADeviceTaints=yes", "=true", "a b=true"):
        with pytest.raises(ConfigError, match="Name=true"):
            parse_feature_gates(bad)


def test_gate_state_defaults_and_overrides() -> None:
    state = gate_state("1.34")
    assert state.enabled("DRAPrioritizedList") and state.enabled("DRAAdminAccess")
    assert not state.enabled("DRADeviceTaints") and not state.enabled("DRAExtendedResource")
    assert gate_state("1.34", (("DRADeviceTaints", True),)).enabled("DRADeviceTaints")
    assert not gate_state("1.36", (("DRADeviceTaints", False),)).enabled("DRADeviceTaints")
    assert gate_state(None).minor == NEWEST_MINOR  # no --kube-version: the newest release


def test_gated_field_off_by_default_is_an_error_naming_the_gate() -> None:
    lines = _findings(_claim(TOLERATION), kube="1.34")
    assert _codes(lines) == {"DRA353"}, lines
    assert "DRADeviceTaints" in lines[0] and "off by default in Kubernetes 1.34" in lines[0]
    assert "--feature-gates=DRADeviceTaints=true" in lines[0]  # how to turn it on
    assert lines[0].startswith("t.yaml:13:11:")  # the tolerations
    assert not _findings(_claim(TOLERATION), kube="1.34", DRADeviceTaints=True)
    assert not _findings(_claim(TOLERATION), kube="1.36")
    off = _findings(_claim(TOLERATION), kube="1.36", DRADeviceTaints=False)
    assert _codes(off) == {"DRA353"} and "--feature-gates sets DRADeviceTaints=false" in off[0]


def test_field_the_release_does_not_have_is_the_schemas_business() -> None:
    doc = (
        "apiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\nmetadata:\n  name: c\n"
        "spec:\n  extendedResourceName: example.com/gpu\n"
    )
    assert _codes(_findings(doc, kube="1.33")) == {"DRA301"}  # unknown field, not DRA353
    assert _codes(_findings(doc, kube="1.34")) == {"DRA353"}
    assert not _findings(doc, kube="1.36")


def test_prioritized_list_and_admin_access_gates() -> None:
    doc = (
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata:\n  name: c\n"
        "spec:\n  devices:\n    requests:\n    - name: gpu\n      firstAvailable:\n"
        "      - name: big\n        deviceClassName: gpu.nvidia.com\n"
    )
    lines = _findings(doc, kube="1.33")
    assert _codes(lines) == {"DRA353"} and "rejects the request" in lines[0]
    assert not _findings(doc, kube="1.34")
    admin = _claim("adminAccess: true")
    assert _codes(_findings(admin, kube="1.34")) == set()
    assert _codes(_findings(admin, kube="1.34", DRAAdminAccess=False)) == {"DRA353"}


@settings(max_examples=40, deadline=None)
@given(
    minor=st.integers(min_value=33, max_value=NEWEST_MINOR),
    override=st.sampled_from([None, True, False]),
)
def test_dra353_exactly_when_the_gate_is_off(minor: int, override: bool | None) -> None:
    gates = {} if override is None else {"DRADeviceTaints": override}
    lines = _findings(_claim(TOLERATION), kube=f"1.{minor}", **gates)
    on = override if override is not None else minor >= GATES["DRADeviceTaints"].on  # type: ignore[operator]
    assert ("DRA353" in _codes(lines)) == (not on), lines


@pytest.mark.parametrize(
    ("toleration", "message"),
    [
        ("key: a/b/c\n  operator: Exists", "toleration key"),
        ("key: k\n  operator: Exists\n  value: v", "must not have a value"),
        ("key: k\n  operator: Equal\n  value: 'two words'", "toleration value"),
        ("key: k\n  operator: In", "not Equal or Exists"),
        ("key: k\n  effect: PreferNoSchedule", "node taint effect only"),
        ("key: k\n  effect: Evict", "is not NoSchedule, NoExecute or None"),
    ],
)
def test_toleration_rules(toleration: str, message: str) -> None:
    lines = _findings(_claim(f"tolerations:\n- {toleration}"))
    assert _codes(lines) == {"DRA354"} and message in lines[0], lines


def test_valid_tolerations_pass() -> None:
    # operator defaults to Equal; an empty key with Exists tolerates every taint
    doc = _claim(
        "tolerations:\n- key: k\n  value: v\n  effect: NoExecute\n  tolerationSeconds: 30\n"
        "- operator: Exists\n- key: k\n  effect: None"
    )
    assert not _findings(doc)
    assert _codes(_findings(doc, kube="1.34", DRADeviceTaints=True)) == {"DRA354"}  # no None


def test_too_many_tolerations() -> None:
    many = "tolerations:\n" + "- operator: Exists\n" * 17
    assert _codes(_findings(_claim(many))) == {"DRA313"}


@pytest.mark.parametrize(
    ("requests", "code"),
    [
        ("memory: 10Gi", None),
        ("gpu.nvidia.com/memory: 1.5", None),
        ("memory: 10Gx", "DRA355"),
        ("memory: true", "DRA301"),  # the schema says it: not twice
        ("a/b/c: 1", "DRA355"),
        ("bad-name: 1", "DRA355"),
    ],
)
def test_capacity_requests(requests: str, code: str | None) -> None:
    lines = _findings(_claim(f"capacity:\n  requests:\n    {requests}"))
    assert _codes(lines) == ({code} if code else set()), lines


def test_distinct_attribute_is_gated() -> None:
    constraint = "      constraints:\n      - distinctAttribute: gpu.nvidia.com/uuid\n"
    assert _codes(_findings(_claim("count: 2", constraints=constraint), kube="1.35")) == {"DRA353"}
    assert not _findings(_claim("count: 2", constraints=constraint), kube="1.36")


SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpus
spec:
  driver: gpu.nvidia.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: gpu-0
    attributes:
      productName: {string: NVIDIA A100}
      driverVersion: {version: 550.54.15}
    capacity:
      memory: {value: 80Gi}
"""


def test_valid_resource_slice_passes() -> None:
    assert not _findings(SLICE, kube="1.34")
    assert not _findings(SLICE.replace("resource.k8s.io/v1\n", "resource.k8s.io/v1beta2\n"))


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        ("driver: gpu.nvidia.com", "driver: gpu_nvidia", "DRA357"),
        ("name: node-1, generation", "name: Node_1, generation", "DRA357"),
        ("resourceSliceCount: 1", "resourceSliceCount: 0", "DRA357"),
        ("generation: 1,", "generation: -1,", "DRA357"),
        ("  nodeName: node-1\n", "", "DRA357"),  # no node selection
        ("  nodeName: node-1\n", "  nodeName: node-1\n  allNodes: true\n", "DRA357"),
        ("  nodeName: node-1\n", "  allNodes: false\n", "DRA357"),
        ("  nodeName: node-1\n", "  nodeName: ''\n", "DRA357"),
        ("name: gpu-0", "name: GPU_0", "DRA311"),
        ("driverVersion: {version: 550.54.15}", "driverVersion: {version: '550.54'}", "DRA357"),
        ("productName: {string: NVIDIA A100}", "productName: {string: x, int: 1}", "DRA357"),
        ("productName: {string: NVIDIA A100}", "productName: {}", "DRA357"),
        ("productName: {string: NVIDIA A100}", "product-name: {string: x}", "DRA357"),
        ("productName: {string: NVIDIA A100}", f"productName: {{string: {'x' * 65}}}", "DRA357"),
        ("memory: {value: 80Gi}", "memory: {value: 80GB}", "DRA357"),
        ("name: node-1-gpus", "name: Node 1", "DRA311"),
    ],
)
def test_resource_slice_rules(old: str, new: str, code: str) -> None:
    assert old in SLICE
    lines = _findings(SLICE.replace(old, new))
    assert code in _codes(lines), lines


def test_resource_slice_duplicate_and_too_many_devices() -> None:
    device = "  - name: gpu-0\n    attributes:\n      productName: {string: NVIDIA A100}\n"
    twice = SLICE + device
    assert "DRA313" in _codes(_findings(twice))
    many = SLICE.split("  devices:\n")[0] + "  devices:\n"
    many += "".join(f"  - name: gpu-{i}\n" for i in range(129))
    assert _codes(_findings(many)) == {"DRA313"}
    tainted = many.replace(
        "  - name: gpu-0\n", "  - name: gpu-0\n    taints:\n    - {key: k, effect: NoSchedule}\n"
    )
    tainted = (
        "\n".join(tainted.splitlines()[:20])
        + "\n"
        + "".join(f"  - name: more-{i}\n" for i in range(60))
    )
    assert _codes(_findings(tainted)) == {"DRA313"}  # 64 with taints


def test_device_taints_in_slices() -> None:
    taints = (
        SLICE + "    taints:\n    - {key: example.com/broken, value: 'true', effect: NoExecute}\n"
    )
    assert not _findings(taints)
    assert _codes(_findings(taints, kube="1.35")) == {"DRA353"}
    for bad, code in (
        ("{effect: NoExecute}", "DRA301"),  # the schema requires key and effect: said once
        ("{key: k}", "DRA301"),
        ("{key: '', effect: NoExecute}", "DRA354"),
        ("{key: k, effect: PreferNoSchedule}", "DRA354"),
        ("{key: k, value: 'a b', effect: NoSchedule}", "DRA354"),
    ):
        lines = _findings(SLICE + f"    taints:\n    - {bad}\n")
        assert _codes(lines) == {code}, (bad, lines)


PARTITIONED = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: counters
spec:
  driver: gpu.nvidia.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  sharedCounters:
  - name: gpu-0-counters
    counters:
      memory: {value: 80Gi}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: partitions
spec:
  driver: gpu.nvidia.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 2}
  nodeName: node-1
  devices:
  - name: mig-0
    consumesCounters:
    - counterSet: gpu-0-counters
      counters:
        memory: {value: 10Gi}
"""


def test_partitionable_devices() -> None:
    assert not _findings(PARTITIONED)
    assert _codes(_findings(PARTITIONED, kube="1.35")) == {"DRA353"}
    assert not _findings(PARTITIONED, kube="1.35", DRAPartitionableDevices=True)
    together = PARTITIONED.replace(
        "  nodeName: node-1\n  sharedCounters:",
        "  nodeName: node-1\n  devices: []\n  sharedCounters:",
    )
    assert _codes(_findings(together)) == {"DRA356"}  # 1.35+: a counter slice of its own
    bad = PARTITIONED.replace("name: gpu-0-counters", "name: GPU0").replace(
        "memory: {value: 10Gi}", "Memory: {value: 10Gi}"
    )
    assert _codes(_findings(bad)) == {"DRA356"}
    empty = PARTITIONED.replace(
        "    counters:\n      memory: {value: 80Gi}\n", "    counters: {}\n"
    )
    assert _codes(_findings(empty)) == {"DRA356"}


def test_partitionable_devices_in_one_slice_until_1_34() -> None:
    one = (
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata:\n  name: s\n"
        "spec:\n  driver: gpu.nvidia.com\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
        "  nodeName: node-1\n  sharedCounters:\n  - name: gpu-0\n    counters:\n      memory: {value: 8Gi}\n"
        "  devices:\n  - name: mig-0\n    basic:\n      consumesCounters:\n"
        "      - counterSet: gpu-1\n        counters:\n          memory: {value: 1Gi}\n"
    )
    lines = _findings(one, kube="1.34", DRAPartitionableDevices=True)
    assert _codes(lines) == {"DRA356"} and "no counter set 'gpu-1'" in lines[0], lines
    assert not _findings(one.replace("gpu-1", "gpu-0"), kube="1.34", DRAPartitionableDevices=True)


CONSUMABLE = SLICE.replace(
    "      memory: {value: 80Gi}\n",
    "      memory:\n        value: 80Gi\n        requestPolicy:\n          default: 10Gi\n"
    "          validRange: {min: 10Gi, max: 80Gi, step: 10Gi}\n",
).replace("  - name: gpu-0\n", "  - name: gpu-0\n    allowMultipleAllocations: true\n")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("    allowMultipleAllocations: true\n", ""),  # a policy needs shared allocation
        ("default: 10Gi", "default: 5Gi"),  # below min
        ("step: 10Gi", "step: 0"),
        ("step: 10Gi", "step: 20Gi"),  # max is not min + n steps
        ("max: 80Gi", "max: 90Gi"),  # above the capacity
        ("min: 10Gi, max", "min: 90Gi, max"),
        ("          default: 10Gi\n", ""),
        (
            "validRange: {min: 10Gi, max: 80Gi, step: 10Gi}",
            "validValues: [10Gi, 40Gi]\n          validRange: {min: 1}",
        ),
        ("validRange: {min: 10Gi, max: 80Gi, step: 10Gi}", "validValues: [40Gi, 10Gi]"),
        ("validRange: {min: 10Gi, max: 80Gi, step: 10Gi}", "validValues: [20Gi, 40Gi]"),
        ("validRange: {min: 10Gi, max: 80Gi, step: 10Gi}", "validValues: [10Gi, 100Gi]"),
    ],
)
def test_consumable_capacity_policy(old: str, new: str) -> None:
    assert not _findings(CONSUMABLE)
    assert old in CONSUMABLE
    lines = _findings(CONSUMABLE.replace(old, new))
    assert _codes(lines) == {"DRA355"}, lines


def test_binding_conditions() -> None:
    good = (
        SLICE
        + "    bindingConditions: [example.com/attached]\n    bindingFailureConditions: [example.com/failed]\n    bindsToNode: true\n"
    )
    assert not _findings(good)
    assert _codes(_findings(good, kube="1.35")) == {"DRA353"}
    for bad in (
        "    bindingConditions: [example.com/attached]\n",
        "    bindingConditions: [a, a]\n    bindingFailureConditions: [b]\n",
        "    bindingConditions: [a]\n    bindingFailureConditions: [a]\n",
        "    bindingConditions: [a, b, c, d, e]\n    bindingFailureConditions: [f]\n",
        "    bindingConditions: ['no spaces']\n    bindingFailureConditions: [f]\n",
    ):
        assert _codes(_findings(SLICE + bad)) == {"DRA359"}, bad


RULE = """\
apiVersion: resource.k8s.io/v1beta2
kind: DeviceTaintRule
metadata:
  name: maintenance
spec:
  deviceSelector:
    driver: gpu.nvidia.com
    pool: node-1
    device: gpu-0
  taint:
    key: example.com/maintenance
    value: planned
    effect: NoExecute
"""


def test_device_taint_rules() -> None:
    v1 = RULE.replace("v1beta2", "v1")
    assert not _findings(v1, kube="1.37")
    assert _codes(_findings(RULE, kube="1.37")) == {"DRA303"}  # v1beta2: --runtime-config
    lines = _findings(RULE, kube="1.36")
    assert _codes(lines) == {"DRA353"} and "DRADeviceTaintRules" in lines[0]
    assert "does not serve" in lines[0]
    assert not _findings(RULE, kube="1.36", DRADeviceTaintRules=True)
    # DRADeviceTaints is alpha in 1.34, and v1beta2 DeviceTaintRules arrive in 1.36
    assert _codes(_findings(RULE, kube="1.34")) == {"DRA302", "DRA353"}
    assert not _findings(RULE.replace("v1beta2", "v1alpha3"), kube="1.34", DRADeviceTaints=True)
    for old, new, code in (
        ("driver: gpu.nvidia.com", "driver: -gpu", "DRA358"),
        ("device: gpu-0", "device: GPU_0", "DRA358"),
        ("pool: node-1", "pool: Node_1", "DRA358"),
        ("effect: NoExecute", "effect: Drain", "DRA354"),
        ("    key: example.com/maintenance\n", "", "DRA301"),  # the strict schema's, as in slices
        ("name: maintenance", "name: Maintenance", "DRA311"),
    ):
        lines = _findings(v1.replace(old, new), kube="1.37")
        assert _codes(lines) == {code}, (old, lines)
    no_taint = v1.split("  taint:")[0]
    assert _codes(_findings(no_taint, kube="1.37")) == {"DRA301"}  # schema: taint required
    # v1alpha3 on 1.34: the 1.33 schema (deviceClassName and CEL selectors still there)
    alpha = RULE.replace("v1beta2", "v1alpha3").replace("pool: node-1", "deviceClassName: gpu")
    assert not _findings(alpha, kube="1.34", DRADeviceTaints=True)
    extra = v1.replace("    device: gpu-0\n", "    device: gpu-0\n    deviceClassName: gpu\n")
    lines = _findings(extra, kube="1.37")
    assert _codes(lines) == {"DRA301"} and "deviceClassName" in lines[0], lines  # gone in v1


def _cli(*args: str) -> tuple[int, str]:
    result = invoke(list(args))
    return result.exit_code, result.output


def test_cli_feature_gates_and_config(tmp_path: Path) -> None:
    claim = tmp_path / "t.yaml"
    claim.write_text(_claim(TOLERATION))
    code, out = _cli("validate", "--kube-version", "1.34", str(claim))
    assert code == 1 and "DRA353" in out, out
    code, out = _cli(
        "validate", "--kube-version", "1.34", "--feature-gates", "DRADeviceTaints=true", str(claim)
    )
    assert code == 0, out
    code, out = _cli("validate", "--feature-gates", "DRADeviceTaints", str(claim))
    assert code == 2 and "Name=true" in out
    config = tmp_path / "gates.yaml"
    config.write_text("version: 1\nkubeVersion: '1.35'\nfeatureGates:\n  DRADeviceTaints: true\n")
    code, out = _cli("validate", "--config", str(config), str(claim))
    assert code == 0, out
    # the command line wins over the configuration
    code, out = _cli(
        "validate", "--config", str(config), "--feature-gates", "DRADeviceTaints=false", str(claim)
    )
    assert code == 1 and "DRA353" in out, out
    config.write_text("version: 1\nfeatureGates:\n  DRADeviceTaints: 'yes'\n")
    code, out = _cli("validate", "--config", str(config), str(claim))
    assert code == 2 and "featureGates" in out, out


def test_builtin_class_selector_failing_on_the_slices_is_reported_at_the_request(
    tmp_path: Path,
) -> None:
    """A known driver's class is not in the input: its failure is the request's (DRA344)."""
    from dra_migrate.pipeline.many_files import load_slices
    from dra_migrate.validate import check_slices, cross_check

    dump = tmp_path / "slices.yaml"
    # published by an old driver: no `type` attribute, which the built-in class reads
    dump.write_text(SLICE.replace("      productName: {string: NVIDIA A100}\n", ""))
    claim = _claim("count: 1")
    settings = ValidateSettings(kube_version="1.36", external_templates=True)
    check = check_file("t.yaml", claim.encode(), settings)
    devices = load_slices(str(dump), 1 << 20)
    found = [f.format() for f in cross_check([check], settings) + check_slices([check], devices)]
    assert [line.split(": ")[1].split(" ")[0] for line in found] == ["DRA344"], found
    assert "DeviceClass gpu.nvidia.com fails on device gpu-0 of node-1" in found[0]
    assert found[0].startswith("t.yaml:11:11:")  # the request's deviceClassName


def test_object_needs_a_name_or_generate_name() -> None:
    unnamed = SLICE.replace("  name: node-1-gpus\n", "")
    lines = _findings(unnamed)
    assert _codes(lines) == {"DRA311"} and "no metadata.name" in lines[0], lines
    assert not _findings(SLICE.replace("  name: node-1-gpus\n", "  generateName: node-1-\n"))


def test_constraint_needs_an_attribute() -> None:
    constraint = "      constraints:\n      - requests: [gpu]\n"
    lines = _findings(_claim("count: 2", constraints=constraint))
    assert _codes(lines) == {"DRA320"} and "needs matchAttribute" in lines[0], lines


@pytest.mark.parametrize(
    ("requirement", "ok"),
    [
        ("{key: topology.kubernetes.io/zone, operator: In, values: [zone-a]}", True),
        ("{key: gpu, operator: Exists}", True),
        ("{key: gpus, operator: Gt, values: ['4']}", True),
        ("{key: foo, operator: In, values: ['-1']}", False),  # not a label value
        ("{key: foo, operator: In, values: []}", False),
        ("{key: foo, operator: Exists, values: [a]}", False),
        ("{key: foo, operator: Gt, values: [four]}", False),
        ("{key: foo, operator: Near, values: [a]}", False),
        ("{key: 'bad key', operator: Exists}", False),
    ],
)
def test_slice_node_selector_requirements(requirement: str, ok: bool) -> None:
    doc = SLICE.replace(
        "  nodeName: node-1\n",
        f"  nodeSelector:\n    nodeSelectorTerms:\n    - matchExpressions:\n      - {requirement}\n",
    )
    lines = _findings(doc)
    assert _codes(lines) == (set() if ok else {"DRA357"}), lines


def test_slice_node_selector_match_fields() -> None:
    fields = "  nodeSelector:\n    nodeSelectorTerms:\n    - matchFields:\n      - {req}\n"
    good = "{key: metadata.name, operator: In, values: [node-1]}"
    assert not _findings(SLICE.replace("  nodeName: node-1\n", fields.format(req=good)))
    for bad in (
        "{key: metadata.labels, operator: In, values: [a]}",
        "{key: metadata.name, operator: In, values: [node-1, node-2]}",
        "{key: metadata.name, operator: In, values: [Node_1]}",
    ):
        lines = _findings(SLICE.replace("  nodeName: node-1\n", fields.format(req=bad)))
        assert _codes(lines) == {"DRA357"}, (bad, lines)


NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: monitoring\n{labels}---\n"


def test_admin_access_needs_the_namespace_label() -> None:
    claim = _claim("adminAccess: true").replace(
        "metadata:\n  name: t\n", "metadata:\n  name: t\n  namespace: monitoring\n"
    )

    def codes(doc: str, gates: tuple[tuple[str, bool], ...] = ()) -> set[str]:
        from dra_migrate.validate import cross_check

        s = ValidateSettings(kube_version="1.34", external_templates=True, feature_gates=gates)
        check = check_file("t.yaml", doc.encode(), s)
        return _codes([f.format() for f in check.result.findings + cross_check([check], s)])

    assert codes(NAMESPACE.format(labels="") + claim) == {"DRA360"}
    labelled = "  labels:\n    resource.kubernetes.io/admin-access: 'true'\n"
    assert codes(NAMESPACE.format(labels=labelled) + claim) == set()
    assert codes(claim) == set()  # the namespace is not in the input: nothing to say
    # with the gate off the field is dropped (DRA353), and no label is needed
    assert codes(NAMESPACE.format(labels="") + claim, (("DRAAdminAccess", False),)) == {"DRA353"}
