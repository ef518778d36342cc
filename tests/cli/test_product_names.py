"""GPU product names in the configuration, checked against the catalog when it loads
(issue 40): a misspelled one is a configuration error at its line and column with the
name meant (exit 2), one the catalog lacks a warning (DRA533), a catalogued one
nothing at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dra_migrate.k8s.products import SHARED_SUFFIX
from tests.cli.test_first_hour import DEPLOYMENT
from tests.helpers.cli_runner import invoke

RULE = """\
resources:
- name: nvidia.com/gpu
  deviceClass: gpu.nvidia.com
  rules:
  - when: {{namespaces: [ml]}}
    selectors: ["{selector}"]
  - when:
      nodeSelector: {{nvidia.com/gpu.product: {label}}}
    deviceClass: h100.nvidia.com
"""
NV = "device.attributes['gpu.nvidia.com'].productName"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "infer.yaml").write_text(DEPLOYMENT)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def configure(
    repo: Path,
    selector: str = f"{NV}.startsWith('NVIDIA H100')",
    label: str = "NVIDIA-H100-80GB-HBM3",
) -> None:
    (repo / ".dra-migrate.yaml").write_text(RULE.format(selector=selector, label=label))


@pytest.mark.parametrize("command", ["scan", "convert", "validate", "report"])
def test_a_misspelled_product_label_fails_at_its_line_and_column(repo: Path, command: str) -> None:
    configure(repo, label="NVIDIA-H100-80GB-HMB3")
    done = invoke([command, "."])
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(
        "dra-migrate: error: .dra-migrate.yaml:8:46: invalid configuration at "
        "resources.0.rules.1.when.nodeSelector.nvidia.com/gpu.product: "
        "'NVIDIA-H100-80GB-HMB3' is no GPU product: did you mean 'NVIDIA-H100-80GB-HBM3'?"
    ), done.stderr


@pytest.mark.parametrize(
    ("selector", "col", "meant"),
    [
        (f"{NV} == 'NVIDIA H100 80GB HMB3'", 70, "'NVIDIA H100 80GB HBM3'"),
        (f"{NV} != 'NVIDIA H100 80GB HMB3'", 70, "'NVIDIA H100 80GB HBM3'"),
        (f"{NV} in ['NVIDIA B200', 'NVIDIA H100 80GB HMB3']", 86, "'NVIDIA H100 80GB HBM3'"),
        (f"{NV}.startsWith('NVIDA H100')", 78, "'NVIDIA H100'"),
        (f"{NV} == 'NVIDIA-H100-80GB-HBM3'", 70, "'NVIDIA H100 80GB HBM3'"),  # the label's form
        (f"{NV} == 'nvidia h100 80gb hbm3'", 70, "'NVIDIA H100 80GB HBM3'"),  # case
        (f"{NV}.lowerAscii() == 'nvidia h100 80gb hmb3'", 83, "'nvidia h100 80gb hbm3'"),
    ],
)
def test_a_misspelled_product_in_a_selector_fails_at_its_line_and_column(
    repo: Path, selector: str, col: int, meant: str
) -> None:
    configure(repo, selector)
    done = invoke(["scan", "."])
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(
        f"dra-migrate: error: .dra-migrate.yaml:6:{col}: invalid configuration at "
        "resources.0.rules.0.selectors.0: gpu.nvidia.com/productName: "
    ), done.stderr
    assert f"did you mean {meant}?" in done.stderr


def test_a_misspelled_product_in_a_device_class_of_the_configuration_fails(repo: Path) -> None:
    (repo / ".dra-migrate.yaml").write_text(
        "deviceClasses:\n"
        "  - name: h100.nvidia.com\n"
        "    driver: gpu.nvidia.com\n"
        "    selectors:\n"
        f"      - {NV} == 'NVIDIA H100 80GB HMB3'\n"
    )
    done = invoke(["deviceclasses", "."])
    assert done.exit_code == 2, done.output
    assert ".dra-migrate.yaml:5:61: invalid configuration at deviceClasses.0.selectors.0" in (
        done.stderr
    )


def test_a_product_the_catalog_lacks_is_a_warning_that_names_the_catalog(repo: Path) -> None:
    configure(repo, f"{NV} == 'NVIDIA X900 288GB'", "NVIDIA-X900-288GB-MIG-1g.36gb")
    quiet = invoke(["scan", "--format", "json", "."])
    assert quiet.exit_code == 0, quiet.output  # warnings do not fail a scan
    found = [f for f in json.loads(quiet.stdout)["findings"] if f["code"] == "DRA533"]
    assert sorted((f["line"], f["col"]) for f in found) == [(6, 70), (8, 46)]
    assert all(f["severity"] == "warning" for f in found)
    message = found[0]["message"]
    assert "NVIDIA/open-gpu-kernel-modules:README.md (2026-03-05)" in message
    assert "a GPU newer than the catalog" in message
    done = invoke(["convert", "."])
    assert done.exit_code == 0 and "DRA533" in done.output


@pytest.mark.parametrize(
    ("selector", "label"),
    [
        (f"{NV}.startsWith('NVIDIA H100')", "NVIDIA-H100-80GB-HBM3"),
        (f"{NV} in ['NVIDIA H100 80GB HBM3', 'Tesla V100-SXM2-32GB']", "Tesla-V100-SXM2-16GB"),
        (f"{NV}.lowerAscii().contains('h100')", f"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb{SHARED_SUFFIX}"),
        (f"{NV}.endsWith('HBM3')", "NVIDIA-TITAN-X-Pascal"),
    ],
)
def test_catalogued_products_pass_silently(repo: Path, selector: str, label: str) -> None:
    configure(repo, selector, label)
    done = invoke(["scan", "--format", "json", "."])
    assert done.exit_code == 0, done.output
    assert "DRA533" not in done.stdout and not done.stderr.startswith("dra-migrate: error")


def test_a_run_on_the_built_in_mapping_never_reads_the_catalog_of_products(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dra_migrate.k8s import products

    monkeypatch.setattr(products, "PRODUCTS_FILE", str(repo / "no-such-file"))
    products.load_products.cache_clear()
    try:
        assert invoke(["scan", "."]).exit_code == 0
        configure(repo, f"{NV} == 'x'", "x")
        assert invoke(["scan", "."]).exit_code != 0  # a product named: the file is read
    finally:
        products.load_products.cache_clear()


AFFINITY = """\
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: nvidia.com/gpu.product, operator: In, values: [%s]}
"""


@pytest.mark.parametrize(
    ("selects", "said"),
    [
        (
            "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HMB3}\n",
            "'NVIDIA-H100-80GB-HMB3', which no GPU has: did you mean 'NVIDIA-H100-80GB-HBM3'?",
        ),
        (
            AFFINITY % "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb, nvidia-a100-sxm4-80gb",
            "did you mean 'NVIDIA-A100-SXM4-80GB'? (values compare case-sensitively)",
        ),
    ],
)
def test_a_pod_on_a_misspelled_product_is_warned_of(repo: Path, selects: str, said: str) -> None:
    (repo / "infer.yaml").write_text(
        DEPLOYMENT.replace("    spec:\n      containers:", f"    spec:\n{selects}      containers:")
    )
    done = invoke(["scan", "--format", "json", "."])
    assert done.exit_code == 0, done.output
    found = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "DRA534"]
    assert len(found) == 1 and said in found[0]["message"], found


def test_a_pod_on_a_catalogued_or_unknown_product_is_not_warned_of(repo: Path) -> None:
    selects = AFFINITY % "NVIDIA-H100-80GB-HBM3, NVIDIA-X900-288GB, Tesla-V100-SXM2-16GB"
    (repo / "infer.yaml").write_text(
        DEPLOYMENT.replace("    spec:\n      containers:", f"    spec:\n{selects}      containers:")
    )
    done = invoke(["scan", "--format", "json", "."])
    codes = {f["code"] for f in json.loads(done.stdout)["findings"]}
    assert "DRA208" in codes and "DRA534" not in codes


def test_a_product_the_fleet_has_and_the_catalog_lacks_is_silenced_by_an_ignore_entry(
    repo: Path,
) -> None:
    configure(repo, f"{NV} == 'NVIDIA X900 288GB'", "NVIDIA-X900-288GB")
    with (repo / ".dra-migrate.yaml").open("a") as handle:
        handle.write("ignore:\n- path: .dra-migrate.yaml\n  codes: [DRA533]\n")
    done = invoke(["scan", "--format", "json", "."])
    report = json.loads(done.stdout)
    assert not [f for f in report["findings"] if f["code"] in ("DRA533", "DRA403")]
    assert [s["code"] for s in report["suppressed"]] == ["DRA533", "DRA533"]


@pytest.mark.parametrize(
    ("expression", "said"),
    [
        (f"{NV} == 'NVIDIA H100 80GB HMB3'", "did you mean 'NVIDIA H100 80GB HBM3'?"),
        (f"{NV} == 'NVIDIA-H100-80GB-HBM3'", "did you mean 'NVIDIA H100 80GB HBM3'?"),
        (f"{NV}.endsWith('HMB3')", "did you mean 'HBM3'?"),
    ],
)
def test_a_device_class_on_a_misspelled_product_is_dra335(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expression: str, said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "class.yaml").write_text(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: h100.example.com\n"
        f'spec:\n  selectors:\n  - cel:\n      expression: "{expression}"\n'
    )
    done = invoke(["validate", "--format", "json", "class.yaml"])
    found = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "DRA335"]
    assert len(found) == 1 and said in found[0]["hint"], done.output
    assert found[0]["line"] == 8
    catalogued = expression.replace("HMB3", "HBM3").replace("-H100-80GB-HBM3", " H100 80GB HBM3")
    (tmp_path / "class.yaml").write_text(
        (tmp_path / "class.yaml").read_text().replace(expression, catalogued)
    )
    again = invoke(["validate", "--format", "json", "class.yaml"])
    assert "DRA335" not in again.stdout, again.output


def test_the_inventory_of_a_cluster_says_the_configuration_warnings_too(repo: Path) -> None:
    configure(repo, label="NVIDIA-X900-288GB")
    (repo / "cluster.json").write_text('{"apiVersion": "v1", "kind": "List", "items": []}\n')
    done = invoke(["inventory", "cluster.json", "--format", "json"])
    codes = [f["code"] for f in json.loads(done.stdout)["findings"]]
    assert codes.count("DRA533") == 1, done.output


INTEL_CLASSES = """\
deviceClasses:
  - name: flex.intel.com
    driver: gpu.intel.com
    selectors:
      - device.attributes['gpu.intel.com'].model == '{model}'
  - name: arc.intel.com
    driver: gpu.intel.com
    selectors:
      - device.attributes['gpu.intel.com'].family.startsWith('{family}')
"""


@pytest.mark.parametrize(
    ("model", "family", "where", "said"),
    [
        (
            "Flex-170",
            "Arc Pro",
            "5:54: invalid configuration at deviceClasses.0.selectors.0: "
            "gpu.intel.com/model: 'Flex-170'",
            "did you mean 'Flex 170'?",
        ),
        (
            "Flex 170",
            "Arc Pro B-Seires",
            "9:63: invalid configuration at deviceClasses.1."
            "selectors.0: gpu.intel.com/family: 'Arc Pro B-Seires'",
            "'Arc Pro B-Series'?",
        ),
    ],
)
def test_a_misspelled_intel_model_or_family_fails_at_its_line_and_column(
    repo: Path, model: str, family: str, where: str, said: str
) -> None:
    (repo / ".dra-migrate.yaml").write_text(INTEL_CLASSES.format(model=model, family=family))
    done = invoke(["deviceclasses", "."])
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"dra-migrate: error: .dra-migrate.yaml:{where}"), done.stderr
    assert said in done.stderr and "NVIDIA" not in done.stderr


def test_an_intel_name_the_catalog_lacks_is_a_warning_that_names_the_drivers_table(
    repo: Path,
) -> None:
    (repo / ".dra-migrate.yaml").write_text(
        INTEL_CLASSES.format(model="Flex 190", family="Arc Pro X")
    )
    done = invoke(["scan", "--format", "json", "."])
    assert done.exit_code == 0, done.output
    found = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "DRA533"]
    assert sorted((f["line"], f["col"]) for f in found) == [(5, 54), (9, 63)]
    assert all(f["severity"] == "warning" for f in found)
    assert (
        "intel/intel-resource-drivers-for-kubernetes:pkg/gpu/device/models.go"
        in (found[0]["message"])
    )
    assert "nvidia.com/gpu.product" not in json.dumps(found)


def test_catalogued_intel_names_and_unknown_are_accepted_in_silence(repo: Path) -> None:
    (repo / ".dra-migrate.yaml").write_text(INTEL_CLASSES.format(model="Unknown", family="Arc"))
    done = invoke(["scan", "--format", "json", "."])
    assert done.exit_code == 0, done.output
    assert not [f for f in json.loads(done.stdout)["findings"] if f["code"] == "DRA533"]
