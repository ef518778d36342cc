"""DeviceClasses from the mapping: values checked, rendered without YAML injection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.convert.mapping import load_config
from dra_migrate.manifests import compose, sources, trees
from dra_migrate.migration.deviceclasses import (
    CONFIGURATION,
    PlannedClass,
    bridge_class_name,
    plan_classes,
    render,
    yaml_comment,
)
from tests.conftest import run_cli

JSON_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def read_back(text: str) -> list[Any]:
    docs = compose.parse(sources.decode("classes.yaml", text.encode("utf-8")))
    return [trees.to_data(d.root) for d in docs if d.root is not None]


@settings(max_examples=300, deadline=None)
@given(
    description=st.text(),
    selectors=st.lists(st.text(min_size=1), max_size=3),
    parameters=st.dictionaries(st.text(), JSON, max_size=5),
)
def test_any_value_reads_back_as_itself(
    description: str, selectors: list[str], parameters: dict[str, Any]
) -> None:
    """Whatever a mapping holds, the rendered YAML holds that and nothing more."""
    c = PlannedClass(
        name="evil.example.com",
        driver="gpu.nvidia.com",
        selectors=tuple(selectors),
        config=({"driver": "gpu.nvidia.com", "parameters": parameters},),
        extended_resource_name="example.com/gpu",
        origin=CONFIGURATION,
        description=description,
    )
    text, problems = render([c], "v1")
    assert not problems, problems
    assert read_back(text) == [c.to_object("v1")]


@given(st.text())
def test_comments_stay_comments(text: str) -> None:
    lines = yaml_comment(text)
    rendered = "".join(f"# {line}\n" for line in lines) + "kind: DeviceClass\n"
    assert read_back(rendered) == [{"kind": "DeviceClass"}]


@given(st.from_regex(r"[a-z0-9.-]{1,20}/[A-Za-z0-9._+-]{1,40}", fullmatch=True))
def test_bridge_names_are_dns_subdomains(resource: str) -> None:
    from dra_migrate.migration.deviceclasses import DNS_SUBDOMAIN

    name = bridge_class_name(resource)
    assert DNS_SUBDOMAIN.fullmatch(name) and len(name) <= 253


def test_injection_through_the_configuration(tmp_path: Path) -> None:
    (tmp_path / ".dra-migrate.yaml").write_text(
        "deviceClasses:\n"
        "  - name: a100.nvidia.com\n"
        "    driver: gpu.nvidia.com\n"
        '    description: "A100\\n---\\nkind: Secret\\u2028x: 1"\n'
        "    selectors:\n"
        "      - \"device.driver == 'gpu.nvidia.com'\\n---\\nkind: Secret\"\n"
    )
    done = run_cli(["deviceclasses", "--whole-mapping"], tmp_path)
    assert done.returncode == 1  # the selector with a document marker does not compile
    assert b"DRA502" in done.stderr and done.stdout == b""
    done = run_cli(["deviceclasses", "--whole-mapping", "--output", "classes.yaml"], tmp_path)
    assert done.returncode == 1 and not (tmp_path / "classes.yaml").exists()
    (tmp_path / ".dra-migrate.yaml").write_text(
        "deviceClasses:\n"
        "  - name: a100.nvidia.com\n"
        "    driver: gpu.nvidia.com\n"
        '    description: "A100\\n---\\nkind: Secret\\u2028x: 1"\n'
        "    selectors:\n"
        "      - device.attributes['gpu.nvidia.com'].productName == 'a\\\"b'\n"
    )
    done = run_cli(["deviceclasses", "--whole-mapping"], tmp_path)
    assert done.returncode == 0, done.stderr
    objects = read_back(done.stdout.decode())
    assert [o["kind"] for o in objects] == ["DeviceClass"]
    assert objects[0]["spec"]["selectors"][0]["cel"]["expression"].endswith("'a\\\"b'")


def test_rendered_classes_pass_validate(tmp_path: Path) -> None:
    (tmp_path / ".dra-migrate.yaml").write_text(
        "deviceClasses:\n"
        "  - name: h100.nvidia.com\n"
        "    driver: gpu.nvidia.com\n"
        "    selectors:\n"
        "      - device.driver == 'gpu.nvidia.com'\n"
        "      - device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'\n"
        "    config:\n"
        "      - driver: gpu.nvidia.com\n"
        "        parameters:\n"
        "          apiVersion: resource.nvidia.com/v1beta1\n"
        "          kind: GpuConfig\n"
        "          sharing: {strategy: MPS, mpsConfig: {defaultActiveThreadPercentage: 50}}\n"
    )
    done = run_cli(
        ["deviceclasses", "--whole-mapping", "--strategy", "bridge", "--kube-version", "1.36"],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert b"DRA505" in done.stderr  # MPS needs the driver's MPSSupport gate
    (tmp_path / "classes.yaml").write_bytes(done.stdout)
    names = [o["metadata"]["name"] for o in read_back(done.stdout.decode())]
    assert "h100.nvidia.com" in names and "mig" not in " ".join(names)
    assert "gpu-shared.extended.nvidia.com" in names  # a bridge class per literal name
    checked = run_cli(["validate", "--kube-version", "1.36", "classes.yaml"], tmp_path)
    assert checked.returncode == 0, checked.stdout.decode()


def test_one_class_per_mig_profile_in_the_plan() -> None:
    from dra_migrate.migration.deviceclasses import Bridged

    config = load_config(None)
    selector = "device.attributes['gpu.nvidia.com'].profile == '{}'"
    plan = plan_classes(
        config,
        [],
        [
            Bridged(f"nvidia.com/mig-{p}", "mig.nvidia.com", (selector.format(p),))
            for p in ("1g.10gb", "2g.20gb")
        ],
    )
    assert not plan.findings
    assert sorted(plan.bridge) == ["nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb"]
    # named as the NVIDIA driver's demo names its class per MIG profile
    # (demo/specs/extended-resources/mig-1g-12gb.yaml: mig-1g-12gb.gpu.nvidia.com)
    assert [c.name for c in plan.classes] == [
        "mig-1g-10gb.gpu.nvidia.com",
        "mig-2g-20gb.gpu.nvidia.com",
    ]
    assert all(len(c.selectors) == 2 for c in plan.classes)


def test_nvidia_chart_deviceclass_gpu_bridges_nvidia_gpu_on_v1_no_second_class() -> None:
    """deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml (v0.4.1, main):
    gpu.nvidia.com has extendedResourceName: nvidia.com/gpu when rendered as v1."""
    from dra_migrate.migration.deviceclasses import Bridged

    config = load_config(None)
    plan = plan_classes(config, [], [Bridged("nvidia.com/gpu", "gpu.nvidia.com")], "v1")
    assert plan.classes == [] and plan.yaml == ""
    assert plan.bridge == {"nvidia.com/gpu": "gpu.nvidia.com"}
    [note] = plan.findings
    assert note.code == "DRA518"
    assert "bridged by DeviceClass gpu.nvidia.com" in note.message
    assert "no class is generated" in note.message
    # on v1beta2 the chart's class maps nothing: the bridge needs a class of its own
    plan = plan_classes(config, [], [Bridged("nvidia.com/gpu", "gpu.nvidia.com")], "v1beta2")
    assert [c.extended_resource_name for c in plan.classes] == ["nvidia.com/gpu"]
    assert not [f for f in plan.findings if f.code == "DRA518"]


def test_nvidia_gpu_bridged_to_a_product_class_says_the_selectors_do_not_apply() -> None:
    """The mapping sends nvidia.com/gpu to an H100 class: on v1 the driver's class still
    takes every pod that keeps the name, so no H100-only bridge class can exist."""
    from dra_migrate.migration.deviceclasses import Bridged

    selector = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
    plan = plan_classes(
        load_config(None), [], [Bridged("nvidia.com/gpu", "gpu.nvidia.com", (selector,))], "v1"
    )
    assert plan.classes == []
    [note] = plan.findings
    assert "the mapping's class gpu.nvidia.com, selectors do not apply" in note.message
    assert "--strategy rewrite" in note.hint


def test_a_configured_class_mapping_nvidia_gpu_on_v1_is_a_second_mapper(tmp_path: Path) -> None:
    """A project class with extendedResourceName: nvidia.com/gpu next to the chart's."""
    (tmp_path / ".dra-migrate.yaml").write_text(
        "deviceClasses:\n"
        "  - name: h100.example.com\n"
        "    driver: gpu.nvidia.com\n"
        "    extendedResourceName: nvidia.com/gpu\n"
    )
    plan = plan_classes(load_config(tmp_path / ".dra-migrate.yaml"), [], [], "v1")
    [dup] = [f for f in plan.findings if f.code == "DRA510"]
    assert "h100.example.com, gpu.nvidia.com (installed)" in dup.message


def test_intel_chart_bridges_intel_com_gpu_not_the_device_plugin_names() -> None:
    """charts/intel-gpu-resource-driver: extendedResourceName intel.com/gpu only with
    enableDRAExtendedResources (default false); gpu.intel.com/i915 is the device plugin's."""
    from dra_migrate.k8s.catalog import load_catalog
    from dra_migrate.migration.deviceclasses import Bridged

    catalog = load_catalog()
    assert catalog.driver_bridge("intel.com/gpu", "v1") is None
    assert [c.name for c in catalog.opt_in_bridges("intel.com/gpu")] == ["gpu.intel.com"]
    assert [c.name for c in catalog.opt_in_bridges("intel.com/gaudi")] == ["gaudi.intel.com"]
    plan = plan_classes(
        load_config(None), [], [Bridged("gpu.intel.com/i915", "gpu.intel.com")], "v1"
    )
    assert [c.name for c in plan.classes] == ["i915.extended.gpu.intel.com"]
    assert plan.installed[0].extended_resource_name is None  # not mapped unless asked


def test_nvidia_main_mps_multi_user_against_v0_4_1(tmp_path: Path) -> None:
    """api/nvidia.com/resource/v1beta1/sharing.go MpsConfig.MultiUser: main (421c0f49),
    not v0.4.1; the driver decodes its config strictly."""
    body = (
        "deviceClasses:\n"
        "  - name: mps.gpu.nvidia.com\n"
        "    driver: gpu.nvidia.com\n"
        "    config:\n"
        "      - driver: gpu.nvidia.com\n"
        "        parameters:\n"
        "          apiVersion: resource.nvidia.com/v1beta1\n"
        "          kind: GpuConfig\n"
        "          sharing: {strategy: MPS, mpsConfig: {multiUser: true}}\n"
    )
    path = tmp_path / ".dra-migrate.yaml"
    path.write_text(body)
    [found] = [f for f in plan_classes(load_config(path), []).findings if f.code == "DRA506"]
    assert "from driver release 0.5; this run assumes 0.4 (the newest tagged release" in (
        found.message
    )
    path.write_text('drivers: {gpu.nvidia.com: "0.5"}\n' + body)
    assert not [f for f in plan_classes(load_config(path), []).findings if f.code == "DRA506"]
