"""The fleet's sharing model: read from device plugin configurations, GFD labels and
``.dra-migrate.yaml``, and what a GPU request on a shared pool becomes.

The invariant users rely on (the property test): a workload on a node pool that
shares GPUs is never converted to an exclusive request; it gets shares, MIG devices,
or stays as it is with a finding that says why."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate.convert.mapping import Settings, load_config
from dra_migrate.pipeline.one_file import process
from dra_migrate.repo import sharing
from dra_migrate.repo.roles import Role
from dra_migrate.repo.sharing import (
    EXCLUSIVE,
    MIG_MIXED,
    MIG_SINGLE,
    MPS,
    TIME_SLICING,
    Fleet,
    Pool,
    SharingModel,
)
from dra_migrate.repo.sharing_lookup import read_repository
from dra_migrate.report.findings import ConfigError
from dra_migrate.report.model import Status

# NVIDIA/k8s-device-plugin README.md @1b826acc, "With CUDA Time-Slicing" and "With CUDA MPS"
README_TIME_SLICING = """\
version: v1
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      replicas: 10
"""
README_RENAMED = """\
version: v1
sharing:
  timeSlicing:
    renameByDefault: true
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 10
"""
README_MPS = """\
version: v1
sharing:
  mps:
    resources:
    - name: nvidia.com/gpu
      replicas: 10
"""


def _model(text: str) -> SharingModel:
    return sharing.model_from_config(yaml.safe_load(text), "x")


def test_the_device_plugin_configurations_as_api_config_v1_reads_them() -> None:
    plain = _model(README_TIME_SLICING)
    assert (plain.kind, plain.replicas, plain.renamed, plain.fail_over_one) == (
        TIME_SLICING,
        10,
        False,
        False,  # false by default for time-slicing
    )
    # .shared is a share wherever GPUs are shared (labels do not say whether renamed)
    assert plain.applies_to("nvidia.com/gpu") and plain.applies_to("nvidia.com/gpu.shared")
    renamed = _model(README_RENAMED)
    assert renamed.renamed and renamed.fail_over_one
    assert renamed.applies_to("nvidia.com/gpu.shared") and not renamed.applies_to("nvidia.com/gpu")
    mps = _model(README_MPS)
    # config.go keeps failRequestsGreaterThanOne true for MPS unless set
    assert (mps.kind, mps.replicas, mps.fail_over_one, mps.renamed) == (MPS, 10, True, False)
    packed = README_TIME_SLICING.replace(
        "version: v1\n",
        "version: v1\nflags:\n  plugin:\n    sharedDevicesAllocationPolicy: packed\n",
    )
    assert _model(packed).packed and not plain.packed
    assert _model("version: v1\nflags:\n  migStrategy: mixed\n").kind == MIG_MIXED
    assert _model("version: v1\nflags:\n  migStrategy: single\n").kind == MIG_SINGLE
    assert _model("version: v1\n").kind == EXCLUSIVE
    # one replica is no sharing (isReplicated: more than one)
    assert _model(README_TIME_SLICING.replace("10", "1")).kind == EXCLUSIVE
    # a resource's devices is ignored (every GPU gets the replicas, config.go)
    listed = README_TIME_SLICING.replace("replicas: 10", "devices: [0]\n      replicas: 2")
    assert not _model(listed).per_gpu and _model(listed).replicas == 2
    uneven = README_TIME_SLICING + "    - name: nvidia.com/mig-1g.5gb\n      replicas: 4\n"
    assert _model(uneven).per_gpu
    with pytest.raises(sharing.NotAConfig):
        sharing.model_from_config({"apiVersion": "v1"}, "x")


def test_gpu_feature_discovery_labels_say_the_model() -> None:
    def of(labels: dict[str, str]) -> SharingModel | None:
        return sharing.model_from_labels(labels)

    ts = of({"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"})
    assert ts is not None and (ts.kind, ts.replicas) == (TIME_SLICING, 4)
    shared = of({"nvidia.com/gpu.product": "NVIDIA-A10G" + sharing.SHARED_PRODUCT})
    assert shared is not None and shared.kind == TIME_SLICING and shared.replicas == 0
    mig = of({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"})
    assert mig is not None and (mig.kind, mig.profile) == (MIG_SINGLE, "1g.5gb")
    mps = of({"nvidia.com/gpu.sharing-strategy": "mps", "nvidia.com/gpu.replicas": "2"})
    assert mps is not None and mps.kind == MPS
    none = of({"nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/gpu.replicas": "1"})
    assert none is not None and none.kind == EXCLUSIVE and not none.assumed
    assert of({"kubernetes.io/arch": "amd64"}) is None


def test_per_node_configurations_are_pools_and_the_default_is_the_fleets() -> None:
    pools, default = sharing.pools_from_configs(
        {"default": "version: v1\n", "ts": README_TIME_SLICING}, None, "cm"
    )
    assert default is not None and default.kind == EXCLUSIVE
    fleet = Fleet(tuple(pools), default)
    picked = fleet.model_for({sharing.CONFIG_LABEL: frozenset(["ts"])})
    assert picked.kind == TIME_SLICING
    # a pod that may land on both pools is covered by neither: the default
    assert fleet.model_for({sharing.CONFIG_LABEL: frozenset(["ts", "default"])}).kind == EXCLUSIVE
    assert Fleet().model_for({}).assumed


def test_the_repository_objects_that_hold_configurations(tmp_path: Path) -> None:
    operator = tmp_path / "values.yaml"
    operator.write_text(
        "devicePlugin:\n  config:\n    default: any\n    data:\n      any: |-\n"
        + "".join(f"        {line}\n" for line in README_TIME_SLICING.splitlines())
    )
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n"
        "  devicePlugin:\n    config:\n      default: mps\n      data:\n        mps: |-\n"
        + "".join(f"          {line}\n" for line in README_MPS.splitlines())
    )
    found = sharing.read_documents(operator.read_bytes(), "values.yaml")
    default = found.default
    assert default is not None and (default.kind, default.replicas) == (TIME_SLICING, 10)
    assert found.pools[0].selector == ((sharing.CONFIG_LABEL, frozenset(["any"])),)
    default = sharing.read_documents(policy.read_bytes(), "policy.yaml").default
    assert default is not None and default.kind == MPS
    fleet, files = read_repository([str(tmp_path)], [], 1 << 20)
    assert fleet is not None and fleet.known and len(files) == 2


def test_a_configmap_made_from_a_file_and_the_clusterpolicy_that_names_it(
    tmp_path: Path,
) -> None:
    """NVIDIA/gpu-operator's own test (tests/plugin-config.yaml, made a ConfigMap with
    kubectl create configmap --from-file and named by the ClusterPolicy's
    devicePlugin.config, tests/scripts/update-clusterpolicy.sh @a22dbf67)."""
    (tmp_path / "plugin-config.yaml").write_text(
        "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: false\n"
        "    resources:\n    - name: nvidia.com/gpu\n      replicas: 10\n"
    )
    (tmp_path / "other.yaml").write_text(README_MPS)
    (tmp_path / "policy.yaml").write_text(
        "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: cluster-policy}\n"
        "spec:\n  devicePlugin:\n    config: {name: plugin-config, default: plugin-config.yaml}\n"
    )
    fleet, files = read_repository([str(tmp_path)], [], 1 << 20)
    assert fleet is not None
    assert (fleet.default.kind, fleet.default.replicas) == (TIME_SLICING, 10)
    assert sorted(Path(f).name for f in files) == [
        "other.yaml",
        "plugin-config.yaml",
        "policy.yaml",
    ]
    # each file is a configuration the label can pick by its file name
    picked = fleet.model_for({sharing.CONFIG_LABEL: frozenset(["other.yaml"])})
    assert picked.kind == MPS
    # without the ClusterPolicy, two files: neither is the default
    (tmp_path / "policy.yaml").unlink()
    alone = read_repository([str(tmp_path)], [], 1 << 20)[0]
    assert alone is not None and alone.default.assumed


def test_the_configuration_says_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / ".dra-migrate.yaml"
    path.write_text(
        "sharing:\n  pools:\n    - nodeSelector: {pool: a}\n      strategy: time-slicing\n"
        "      replica: 4\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "did you mean 'replicas'?" in str(caught.value)
    assert caught.value.line == 5
    path.write_text("sharing:\n  pools:\n    - nodeSelector: {pool: a}\n      strategy: slicing\n")
    with pytest.raises(ConfigError):
        load_config(path)
    path.write_text(
        "sharing:\n  default: {strategy: exclusive}\n  pools:\n    - name: ts\n"
        "      nodeSelector: {pool: [a, b]}\n      strategy: time-slicing\n      replicas: 4\n"
    )
    fleet = load_config(path).sharing
    assert fleet.known and not fleet.default.assumed
    assert fleet.pools[0].name == "ts" and fleet.pools[0].model.replicas == 4
    assert fleet.model_for({"pool": frozenset(["a"])}).kind == TIME_SLICING


# --- the invariant ---------------------------------------------------------------

POOL_LABEL = "example.com/pool"
MODELS = {
    "exclusive": SharingModel(),
    "ts4": SharingModel(TIME_SLICING, 4),
    "ts4-renamed": SharingModel(TIME_SLICING, 4, renamed=True),
    "ts4-packed": SharingModel(TIME_SLICING, 4, packed=True),
    "ts2-strict": SharingModel(TIME_SLICING, 2, fail_over_one=True),
    "ts-uneven": SharingModel(TIME_SLICING, 2, per_gpu=True),
    "mps": SharingModel(MPS, 4, fail_over_one=True),
    "mps-renamed": SharingModel(MPS, 4, renamed=True, fail_over_one=True),
    "mig-1g": SharingModel(MIG_SINGLE, profile="1g.10gb"),
    "mig-unknown": SharingModel(MIG_SINGLE),
}


@st.composite
def pods(draw: st.DrawFn) -> tuple[str, str, list[tuple[str, int]]]:
    pool = draw(st.sampled_from(sorted(MODELS)))
    containers = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["nvidia.com/gpu", "nvidia.com/gpu.shared"]),
                st.integers(min_value=1, max_value=6),
            ),
            min_size=1,
            max_size=3,
        )
    )
    release = draw(st.sampled_from(["0.4", "0.5"]))
    return pool, release, containers


def _pod(pool: str, containers: list[tuple[str, int]]) -> str:
    lines = [
        "apiVersion: v1",
        "kind: Pod",
        "metadata:",
        "  name: p",
        "spec:",
        "  nodeSelector:",
        f"    {POOL_LABEL}: {pool}",
        "  containers:",
    ]
    for i, (resource, count) in enumerate(containers):
        lines += [
            f"  - name: c{i}",
            "    image: x",
            "    resources:",
            "      limits:",
            f"        {resource}: {count}",
        ]
    return "\n".join(lines) + "\n"


BASE = load_config(None)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=pods())
def test_no_workload_on_a_shared_pool_becomes_an_exclusive_request(
    case: tuple[str, str, list[tuple[str, int]]],
) -> None:
    pool, release, containers = case
    fleet = Fleet(
        tuple(Pool(name, ((POOL_LABEL, frozenset([name])),), m) for name, m in MODELS.items())
    )
    config = dataclasses.replace(
        BASE, sharing=fleet, driver_releases=(("gpu.nvidia.com", release),)
    )
    result = process("pod.yaml", _pod(pool, containers).encode(), Role(), Settings("v1", config))
    model = MODELS[pool]
    shared = [c for c in containers if model.applies_to(c[0])]
    codes = {f.code for f in result.findings}
    if result.status is not Status.CHANGED:
        return  # left on the device plugin: nothing became exclusive
    assert result.converted is not None
    docs = [d for d in yaml.safe_load_all(result.converted) if d]
    template = next(d for d in docs if d["kind"] == "ResourceClaimTemplate")
    requests = {r["name"]: r["exactly"] for r in template["spec"]["spec"]["devices"]["requests"]}
    for i, (resource, count) in enumerate(containers):
        request = requests[f"c{i}"]
        if (resource, count) not in shared:
            continue
        if model.kind == MIG_SINGLE:
            assert request["deviceClassName"] == "mig.nvidia.com", request
            assert request["count"] == count
            continue
        # a share of a GPU: the shares it had, on one device, and the release has them
        assert request["capacity"]["requests"]["shares"] == str(count), request
        assert request["count"] == 1 and count <= model.replicas
        assert count == 1 or model.packed  # spread replicas have no one-request equivalent
        assert release == "0.5" and "DRA260" in codes
    # MPS and per-GPU replica counts have no DRA equivalent: such a pod is never changed
    assert not (shared and (model.kind == MPS or model.per_gpu)), codes


def test_renameByDefault_renames_mps_shares_as_it_does_time_slicing() -> None:
    """NVIDIA/k8s-device-plugin @1b826acc: sharing.mps is the same ReplicatedResources
    as sharing.timeSlicing (api/config/v1/sharing.go, replicas.go), the README's "With
    CUDA MPS" advertises nvidia.com/gpu.shared with renameByDefault: true, and
    DisableResourceNamingInConfig resets a resource's own ``rename`` to what
    renameByDefault says, for mps and timeSlicing alike (config.go, replicas.go
    disableResoureRenaming)."""
    renamed = _model(README_MPS.replace("  mps:\n", "  mps:\n    renameByDefault: true\n"))
    assert (renamed.kind, renamed.replicas, renamed.renamed) == (MPS, 10, True)
    assert renamed.applies_to("nvidia.com/gpu.shared") and not renamed.applies_to("nvidia.com/gpu")
    assert "renamed to .shared" in renamed.describe()
    # a resource's rename without renameByDefault is ignored: the name stays
    for kind, body in ((MPS, README_MPS), (TIME_SLICING, README_TIME_SLICING)):
        own = _model(body.replace("replicas: 10", "replicas: 10\n      rename: my-gpu"))
        assert (own.kind, own.renamed) == (kind, False)
        assert own.applies_to("nvidia.com/gpu")


def test_a_pod_on_a_renamed_mps_pool_asks_for_its_shares() -> None:
    """An MPS pool whose shares are nvidia.com/gpu.shared: a pod asking for those stays
    on the device plugin (DRA263, the model named renamed); nvidia.com/gpu there is no
    MPS share (the plugin advertises none under that name)."""
    model = _model(README_MPS.replace("  mps:\n", "  mps:\n    renameByDefault: true\n"))
    pool = Pool("mps", ((POOL_LABEL, frozenset(["mps"])),), model)
    config = dataclasses.replace(
        BASE, sharing=Fleet((pool,)), driver_releases=(("gpu.nvidia.com", "0.5"),)
    )

    def findings(resource: str) -> dict[str, str]:
        pod = _pod("mps", [(resource, 1)]).encode()
        result = process("pod.yaml", pod, Role(), Settings("v1", config))
        return {f.code: f.message for f in result.findings}

    shared = findings("nvidia.com/gpu.shared")
    assert "DRA263" in shared and "renamed to .shared" in shared["DRA263"], shared
    assert "DRA263" not in findings("nvidia.com/gpu")


def test_what_a_model_shares_and_where_labels_leave_off() -> None:
    ts = SharingModel(TIME_SLICING, 4)
    # the device plugin's sharing is NVIDIA's: another vendor's GPUs are not its shares
    assert not ts.applies_to("amd.com/gpu") and ts.applies_to("nvidia.com/gpu")
    mixed = SharingModel(TIME_SLICING, 2, resources=("nvidia.com/mig-1g.5gb",))
    assert mixed.applies_to("nvidia.com/mig-1g.5gb") and not mixed.applies_to("nvidia.com/gpu")
    # a shared product suffix says the pool shares, a pool of the configuration says how many ways
    pool = Pool("ts", (("pool", frozenset(["a"])),), SharingModel(TIME_SLICING, 4, source="cfg"))
    product = {"nvidia.com/gpu.product": frozenset(["NVIDIA-A10G" + sharing.SHARED_PRODUCT])}
    fleet = Fleet((pool,))
    assert fleet.model_for({**product, "pool": frozenset(["a"])}).replicas == 4
    alone = fleet.model_for(product)
    assert alone.kind == TIME_SLICING and alone.replicas == 0  # shared, count unknown: DRA205


def test_a_renamed_mig_share_is_a_share_of_its_profile() -> None:
    """renameByDefault under the mixed strategy: nvidia.com/mig-1g.5gb.shared is a share
    of a 1g.5gb MIG device (the README lists the mixed strategy's MIG resources among
    the time-sliceable ones)."""
    model = SharingModel(TIME_SLICING, 4, renamed=True, resources=("nvidia.com/mig-1g.5gb",))
    pool = Pool("mig", ((POOL_LABEL, frozenset(["mig"])),), model)
    config = dataclasses.replace(
        BASE, sharing=Fleet((pool,)), driver_releases=(("gpu.nvidia.com", "0.5"),)
    )
    text = _pod("mig", [("nvidia.com/mig-1g.5gb.shared", 1)])
    result = process("pod.yaml", text.encode(), Role(), Settings("v1", config))
    assert result.status is Status.CHANGED, [f.format() for f in result.findings]
    assert result.converted is not None
    docs = [d for d in yaml.safe_load_all(result.converted) if d]
    template = next(d for d in docs if d["kind"] == "ResourceClaimTemplate")
    request = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert request["deviceClassName"] == "mig.nvidia.com"
    assert request["selectors"] == [
        {"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"}}
    ]
    assert request["capacity"] == {"requests": {"shares": "1"}}


KEYS = st.sampled_from(
    [
        "version",
        "flags",
        "migStrategy",
        "plugin",
        "sharedDevicesAllocationPolicy",
        "sharing",
        "timeSlicing",
        "mps",
        "renameByDefault",
        "failRequestsGreaterThanOne",
        "resources",
        "name",
        "replicas",
        "devices",
        "kind",
        "data",
        "devicePlugin",
        "config",
        "default",
        "map",
    ]
)
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 12)
    | st.sampled_from(["v1", "4", "x", "single", "ConfigMap", "nvidia.com/gpu"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(data=st.dictionaries(KEYS, VALUES, max_size=5))
def test_any_shape_of_configuration_reads_without_error(data: dict[str, object]) -> None:
    """Whatever a file holds under the keys the reader looks at, it gives pools and a
    model or nothing, never an exception (bad input is skipped, the run reports it)."""
    found = sharing.read_documents(yaml.safe_dump(data).encode(), "x.yaml")
    fleet = found.fleet()
    for pool in fleet.pools:
        assert pool.model.kind in sharing.KINDS
        assert pool.model.kind == EXCLUSIVE or pool.model.shared or pool.model.replicas == 1
        assert not pool.model.shared or pool.model.replicas >= 2
