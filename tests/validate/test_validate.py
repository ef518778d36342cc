"""dra-migrate validate: schemas, rules, references, CEL, and real ResourceSlices."""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from dra_migrate.convert.mapping import Config, ConfigError, Settings, load_config
from dra_migrate.pipeline.many_files import load_slices, run_validate
from dra_migrate.pipeline.one_file import process
from dra_migrate.pipeline.options import RunOptions
from dra_migrate.repo.roles import Role
from dra_migrate.report.model import Status
from dra_migrate.validate import ValidateSettings, check_file, cross_check
from tests.conftest import FIXTURES, SHARED, run_cli, shared_dir

DRA = SHARED / "corpus" / "dra"
REAL = SHARED / "corpus" / "real"
GOLDEN = FIXTURES / "convert"


def _options(path: str, config: Config) -> RunOptions:
    """validate's run over one folder, in this process (one job)."""
    return RunOptions((path,), Settings(target="v1", config=config), jobs=1)


def _rows() -> list[dict[str, str]]:
    if not (DRA / "VERDICTS.tsv").is_file():
        return [{"file": "(missing)", "kubernetes": "", "verdict": "", "reason": ""}]
    with (DRA / "VERDICTS.tsv").open() as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _check(name: str, data: bytes, kube: str | None = None, external: bool = True) -> list[str]:
    settings = ValidateSettings(kube_version=kube, external_templates=external)
    check = check_file(name, data, settings)
    return [f.format() for f in check.result.findings + cross_check([check], settings)]


def _codes(lines: list[str], severity: str | None = None) -> set[str]:
    from dra_migrate.report.findings import CODES

    found = set()
    for line in lines:
        code = line.split(": ", 1)[1].split(" ", 1)[0]
        if severity is None or CODES[code].severity.value == severity:
            found.add(code)
    return found


TAINT_DEMO = "kubernetes-sigs__dra-example-driver__demo__examples__device-taints-tolerations__"

# Real problems the schemas miss, found in files VERDICTS.tsv calls valid.
REAL_PROBLEMS = {
    # the same key twice in one mapping: the API server keeps only one of them
    "GoogleCloudPlatform__container-engine-accelerators__gpudirect-rdma__nccl-test-a4x-max-jobset.yaml": {
        "DRA005"
    },
    "GoogleCloudPlatform__container-engine-accelerators__gpudirect-rdma__nccl-test-a4x-max.yaml": {
        "DRA005"
    },
    "GoogleCloudPlatform__container-engine-accelerators__gpudirect-rdma__nccl-test-managed-rdma.yaml": {
        "DRA005"
    },
    # a counter slice needs a node selection like any other (validateResourceSliceSpec)
    "slices__kep-4815__1.yaml": {"DRA357"},
    # DeviceTaintRule is behind DRADeviceTaintRules, beta and off by default in 1.36
    # (the demo's kind cluster turns it on)
    **{
        f"{TAINT_DEMO}{case}-device-taint-rule.yaml": {"DRA353"}
        for case in (
            "device-taint-configurable-pod-eviction-time__2",
            "device-taint-pod-noexecute__3",
            "device-taint-pod-noschedule__3",
            "device-taint-pod-toleration__1",
        )
    },
}

# What an invalid file must be flagged with (the first error VERDICTS.tsv names).
INVALID = {
    "was unexpected": "DRA301",
    "were unexpected": "DRA301",
    "KeyError 'apiVersion'": "DRA301",
    "'deviceClassName' is a required property": "DRA314",
    "is a required property": "DRA301",
    "is not of type": "DRA301",
}


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["file"][-70:])
def test_dra_corpus_verdicts(row: dict[str, str]) -> None:
    folder = shared_dir("corpus", "dra")
    name, verdict = row["file"], row["verdict"]
    lines = _check(name, (folder / name).read_bytes(), row["kubernetes"] or None)
    errors = _codes(lines, "error")
    if verdict == "valid":
        assert errors == REAL_PROBLEMS.get(name, set()), lines
    elif verdict == "invalid":
        if row["reason"] == "see NOTES.tsv":
            assert errors, lines
        else:
            wanted = next(code for text, code in INVALID.items() if text in row["reason"])
            assert wanted in errors, lines
    elif verdict.startswith("schema-valid"):
        assert errors & {"DRA331", "DRA334"}, lines
        assert not errors & {"DRA301"}, lines
    elif verdict == "old-api":
        assert "DRA302" in errors, lines
    elif verdict == "unparsable":
        assert "DRA004" in errors, lines
    elif verdict == "not-kubernetes":
        assert not errors, lines


STALE = {
    "migProfile": ("device.attributes['gpu.nvidia.com'].migProfile == '1g.10gb'", "profile"),
    "nvlinkInterconnect": (
        "device.attributes['gpu.nvidia.com'].nvlinkInterconnect == true",
        "ComputeDomain",
    ),
    "index": ("device.attributes['gpu.nvidia.com'].index == 0", "index"),
    "minor": ("device.attributes['gpu.nvidia.com'].minor == 0", "minor"),
    "pcieBusID": (
        "device.attributes['gpu.nvidia.com'].pcieBusID == '0000:3b:00.0'",
        "resource.kubernetes.io/pciBusID",
    ),
}

TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpus
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel:
              expression: "{expr}"
"""


@pytest.mark.parametrize("name", sorted(STALE))
def test_stale_names_get_the_right_name(name: str) -> None:
    expr, replacement = STALE[name]
    lines = _check("t.yaml", TEMPLATE.replace("{expr}", expr).encode())
    stale = [line for line in lines if " DRA331 " in line]
    assert stale, lines
    assert replacement in stale[0]
    # the column points at the attribute name inside the expression
    line, col = map(int, stale[0].split(":")[1:3])
    assert line == 14
    text = TEMPLATE.replace("{expr}", expr).splitlines()[line - 1]
    assert text[col - 1 :].startswith(name) or name in text[col - 1 : col + 40]


def test_stale_opaque_config_api_version() -> None:
    doc = TEMPLATE.replace(
        '          selectors:\n          - cel:\n              expression: "{expr}"\n', ""
    ) + (
        "      config:\n"
        "      - requests: [gpu]\n"
        "        opaque:\n"
        "          driver: gpu.nvidia.com\n"
        "          parameters:\n"
        "            apiVersion: gpu.nvidia.com/v1alpha1\n"
        "            kind: GpuConfig\n"
    )
    lines = _check("t.yaml", doc.encode())
    assert any(" DRA331 " in line and "resource.nvidia.com/v1beta1" in line for line in lines), (
        lines
    )


CEL_STYLES = [
    "expression: \"device.driver == == 'gpu.nvidia.com'\"",
    "expression: device.driver == == 'gpu.nvidia.com'",
    "expression: 'device.driver == == ''gpu.nvidia.com'''",
    "expression: |\n                device.attributes['gpu.nvidia.com'].type == 'gpu' &&\n"
    "                device.driver == == 'gpu.nvidia.com'",
    "expression: >-\n                device.attributes['gpu.nvidia.com'].type == 'gpu' &&\n"
    "                device.driver == == 'gpu.nvidia.com'",
]


@pytest.mark.parametrize("style", CEL_STYLES)
def test_cel_syntax_error_points_into_the_file(style: str) -> None:
    """The reported line:col is the character of the file where CEL stops."""
    import yaml

    from dra_migrate.cel import check_selector

    doc = TEMPLATE.replace('expression: "{expr}"', style)
    lines = _check("t.yaml", doc.encode())
    syntax = [line for line in lines if " DRA330 " in line]
    assert syntax, lines
    line, col = map(int, syntax[0].split(":")[1:3])
    request = yaml.safe_load(doc)["spec"]["spec"]["devices"]["requests"][0]
    expr = request["exactly"]["selectors"][0]["cel"]["expression"]
    offset = check_selector(expr)[0].offset
    assert doc.splitlines()[line - 1][col - 1] == expr[offset], (syntax[0], expr, offset)


RULES = [
    ("count: 0", "DRA352"),  # ExactCount: defaulted to 1 by the API server, a warning
    ("count: -2", "DRA312"),
    ("allocationMode: Some", "DRA312"),
]


@pytest.mark.parametrize(("extra", "code"), RULES)
def test_request_rules(extra: str, code: str) -> None:
    doc = TEMPLATE.replace(
        '          selectors:\n          - cel:\n              expression: "{expr}"\n',
        f"          {extra}\n",
    )
    assert code in _codes(_check("t.yaml", doc.encode())), _check("t.yaml", doc.encode())


def test_names_duplicates_and_one_of() -> None:
    doc = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: Bad_Name
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
        firstAvailable:
        - {name: a, deviceClassName: gpu.nvidia.com}
      constraints:
      - requests: [gpu, nope]
        matchAttribute: productName
"""
    codes = _codes(_check("t.yaml", doc.encode()))
    assert {"DRA311", "DRA313", "DRA314", "DRA320"} <= codes


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: gpus
  - name: both
    resourceClaimName: x
    resourceClaimTemplateName: y
  containers:
  - name: a
    image: busybox
    resources:
      claims:
      - name: gpu
        request: gpu
      - name: gpu
        request: gpu
      - name: missing
  - name: b
    image: busybox
    resources:
      claims:
      - name: gpu
        request: nosuch
"""


def test_pod_claim_references(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "template.yaml").write_text(
        TEMPLATE.replace("{expr}", "device.driver == 'gpu.nvidia.com'")
    )
    report = run_validate(_options(str(tmp_path), load_config(None)), ValidateSettings())
    codes = {f.code for f in report.all_findings}
    assert {"DRA315", "DRA316", "DRA317"} <= codes
    nosuch = [f for f in report.all_findings if "nosuch" in f.message]
    assert nosuch and nosuch[0].code == "DRA316" and nosuch[0].path.endswith("pod.yaml")


def test_missing_template_warns_unless_external(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(
        POD.replace("resourceClaimTemplateName: gpus", "resourceClaimTemplateName: elsewhere")
    )
    report = run_validate(_options(str(tmp_path), load_config(None)), ValidateSettings())
    assert "DRA318" in {f.code for f in report.all_findings}
    report = run_validate(
        _options(str(tmp_path), load_config(None)), ValidateSettings(external_templates=True)
    )
    assert "DRA318" not in {f.code for f in report.all_findings}


# --- on real ResourceSlice dumps --------------------------------------------------------

REQUEST = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: t
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: {cls}
          count: {count}
          selectors:
          - cel:
              expression: "{expr}"
"""

CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: {name}
spec:
  selectors:
  - cel:
      expression: "{expr}"
"""


def _on_slices(tmp_path: Path, dump: str, *docs: str) -> list[tuple[str, str]]:
    folder = shared_dir("corpus", "dra")
    for i, doc in enumerate(docs):
        (tmp_path / f"doc{i}.yaml").write_text(doc)
    devices = load_slices(str(folder / dump))
    report = run_validate(_options(str(tmp_path), load_config(None)), ValidateSettings(), devices)
    return [(f.code, f.message) for f in report.all_findings]


VKS = "slices__cncf-ai-conformance-vks-v1.36__1.yaml"
PRODUCT = "device.attributes['gpu.nvidia.com'].productName == 'GRID A100-10C'"


def test_slices_right_product_matches(tmp_path: Path) -> None:
    found = _on_slices(tmp_path, VKS, REQUEST.format(cls="gpu.nvidia.com", count=1, expr=PRODUCT))
    [(code, message)] = found
    assert code == "DRA343" and "2 device(s) match" in message


def test_slices_count_larger_than_any_node(tmp_path: Path) -> None:
    found = _on_slices(tmp_path, VKS, REQUEST.format(cls="gpu.nvidia.com", count=2, expr=PRODUCT))
    assert [c for c, _ in found] == ["DRA341"], found


def test_slices_wrong_product_matches_nothing(tmp_path: Path) -> None:
    wrong = PRODUCT.replace("GRID A100-10C", "NVIDIA H100 80GB HBM3")
    found = _on_slices(tmp_path, VKS, REQUEST.format(cls="gpu.nvidia.com", count=1, expr=wrong))
    assert [c for c, _ in found] == ["DRA340"], found


def test_slices_stale_attribute_says_so(tmp_path: Path) -> None:
    stale = "device.attributes['gpu.nvidia.com'].migProfile == '1g.10gb'"
    found = _on_slices(tmp_path, VKS, REQUEST.format(cls="gpu.nvidia.com", count=1, expr=stale))
    codes = [c for c, _ in found]
    # the stale name, and the run-time error it is on every GPU (allocation aborts)
    assert "DRA331" in codes and "DRA344" in codes, found
    assert "DRA343" not in codes, found


def test_slices_device_classes(tmp_path: Path) -> None:
    right = CLASS.format(
        name="a100.example.com", expr=f"device.driver == 'gpu.nvidia.com' && {PRODUCT}"
    )
    wrong = CLASS.format(
        name="h100.example.com",
        expr="device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100'",
    )
    found = dict(_on_slices(tmp_path, VKS, right, wrong))
    messages = [m for c, m in _on_slices(tmp_path, VKS, right, wrong) if c in ("DRA342", "DRA343")]
    assert any("h100.example.com matches none" in m for m in messages), found
    assert any("a100.example.com matches 2" in m for m in messages), found


def test_slices_other_vendors(tmp_path: Path) -> None:
    found = _on_slices(
        tmp_path,
        "slices__intel-gpu-usage__1.yaml",
        REQUEST.format(cls="gpu.intel.com", count=1, expr="device.driver == 'gpu.intel.com'"),
    )
    assert [c for c, _ in found] == ["DRA343"], found


# --- round trip: what convert writes passes validate ------------------------------------


def _golden_outputs() -> list[Path]:
    return sorted(p for p in GOLDEN.glob("*/expected") if p.is_dir())


@pytest.mark.parametrize("expected", _golden_outputs(), ids=lambda p: p.parent.name)
def test_golden_outputs_validate(expected: Path, tmp_path: Path) -> None:
    """The conversion adds no validate error (some inputs have problems of their own)."""

    def errors(folder: Path) -> set[tuple[str, str]]:
        report = run_validate(_options(str(folder), load_config(None)), ValidateSettings())
        return {(f.code, f.message) for f in report.all_findings if f.severity.value == "error"}

    before, after = tmp_path / "before", tmp_path / "after"
    shutil.copytree(expected.parent / "input", before)
    shutil.copytree(expected.parent / "input", after)
    shutil.copytree(expected, after, dirs_exist_ok=True)
    assert errors(after) - errors(before) == set()


# Real problems of the source files that validate finds once their pods use claims.
SOURCE_PROBLEMS = {
    # securityContext.allowPrivilegedEscalation: a typo of allowPrivilegeEscalation
    "aws__karpenter-provider-aws__examples__workloads__gpu-amd.yaml": {"DRA301"},
}


@pytest.mark.parametrize("target", ["v1beta1", "v1"])
def test_corpus_conversions_validate(target: str) -> None:
    folder = shared_dir("corpus", "real")
    settings = Settings(target=target, config=load_config(None))
    checked = 0
    for path in sorted(folder.glob("*.yaml")):
        result = process(path.name, path.read_bytes(), Role(), settings)
        if result.status is not Status.CHANGED:
            continue
        assert result.converted is not None
        lines = _check(path.name, result.converted, external=False)
        assert _codes(lines, "error") == SOURCE_PROBLEMS.get(path.name, set()), lines
        assert "DRA318" not in _codes(lines), lines  # every template it refers to is in the file
        checked += 1
    assert checked >= 34  # the torchtune runtime is left on the device plugin (DRA228)


# --- the command ---------------------------------------------------------------------


def test_cli_exit_codes_and_formats(tmp_path: Path) -> None:
    good = TEMPLATE.replace("{expr}", "device.driver == 'gpu.nvidia.com'")
    (tmp_path / "good.yaml").write_text(good)
    assert run_cli(["validate", "good.yaml"], tmp_path).returncode == 0
    (tmp_path / "bad.yaml").write_text(good.replace("== 'gpu.nvidia.com'", "=="))
    done = run_cli(["validate", "."], tmp_path)
    assert done.returncode == 1
    assert b"bad.yaml:14:" in done.stdout and b"DRA330" in done.stdout
    data = json.loads(run_cli(["validate", "--format", "json", "."], tmp_path).stdout)
    assert data["command"] == "validate" and data["summary"]["error"] >= 1
    (tmp_path / "broken.yaml").write_text(
        "kind: ResourceClaim\napiVersion: resource.k8s.io/v1\nspec: [\n"
    )
    assert run_cli(["validate", "."], tmp_path).returncode == 123
    assert (
        run_cli(["validate", "--resource-slices", "nope.yaml", "good.yaml"], tmp_path).returncode
        == 2
    )
    piped = run_cli(["validate", "-"], tmp_path, stdin=good.encode())
    assert piped.returncode == 0, piped.stdout


def test_cli_resource_slices(tmp_path: Path) -> None:
    folder = shared_dir("corpus", "dra")
    (tmp_path / "t.yaml").write_text(
        REQUEST.format(cls="gpu.nvidia.com", count=1, expr=PRODUCT.replace("GRID", "Tesla"))
    )
    done = run_cli(["validate", "--resource-slices", str(folder / VKS), "t.yaml"], tmp_path)
    assert done.returncode == 1
    assert b"DRA340" in done.stdout and b"stays Pending" in done.stdout


TWO_REQUESTS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: pair
spec:
  spec:
    devices:
      requests:
      - name: a
        exactly: {deviceClassName: gpu.nvidia.com}
      - name: b
        exactly: {deviceClassName: gpu.nvidia.com}
"""


def test_slices_whole_claim_needs_one_node(tmp_path: Path) -> None:
    """Two one-GPU requests each fit somewhere, but a claim lives on one node:
    the dump has one GPU per node, so the pod would stay Pending."""
    found = _on_slices(tmp_path, VKS, TWO_REQUESTS)
    codes = [c for c, _ in found]
    assert codes.count("DRA343") == 2 and codes.count("DRA341") == 1, found
    [message] = [m for c, m in found if c == "DRA341"]
    assert "needs 2 distinct devices on one node (a: 1, b: 1)" in message


CONSTRAINED = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: pair
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 1
      constraints:
      - {key}: {attribute}
"""


@pytest.mark.parametrize(
    ("key", "attribute", "code", "says"),
    [
        # the seed: NVIDIA publishes no NVLink attribute; the explanation names the right way
        ("matchAttribute", "gpu.nvidia.com/nvlinkInterconnect", "DRA331", "ComputeDomain"),
        ("matchAttribute", "gpu.nvidia.com/pcieBusID", "DRA331", "resource.kubernetes.io/pciBusID"),
        ("distinctAttribute", "gpu.nvidia.com/migProfile", "DRA331", "gpu.nvidia.com/profile"),
        ("matchAttribute", "gpu.nvidia.com/productname", "DRA332", "gpu.nvidia.com/productName"),
        ("matchAttribute", "gpu.nvidia.com/gpuMemory", "DRA332", "publishes no attribute"),
        ("matchAttribute", "gpu.nvidia.com/memory", "DRA331", "capacity"),
        ("matchAttribute", "vgpu.nvidia.com/profile", "DRA350", "gpu.nvidia.com"),
    ],
)
def test_constraint_attribute_against_catalog(
    key: str, attribute: str, code: str, says: str
) -> None:
    lines = _check("t.yaml", CONSTRAINED.format(key=key, attribute=attribute).encode())
    hits = [line for line in lines if f" {code} " in line]
    assert hits and says in hits[0], lines
    assert ":14:" in hits[0], hits  # at the constraint's attribute


@pytest.mark.parametrize(
    "attribute",
    [
        "gpu.nvidia.com/productName",
        "gpu.nvidia.com/parentUUID",
        "resource.kubernetes.io/pcieRoot",
        "gpu.amd.com/deviceID",
        "fpga.acme.io/numa",  # a domain the catalog does not know: nothing to say
    ],
)
def test_constraint_on_published_attribute_passes(attribute: str) -> None:
    lines = _check("t.yaml", CONSTRAINED.format(key="matchAttribute", attribute=attribute).encode())
    assert not lines, lines


def test_slices_constraint_on_attribute_no_device_has(tmp_path: Path) -> None:
    # parentUUID is published by MIG devices only: on whole GPUs the claim stays Pending
    doc = CONSTRAINED.format(key="matchAttribute", attribute="gpu.nvidia.com/parentUUID")
    found = _on_slices(tmp_path, VKS, doc)
    assert [c for c, _ in found] == ["DRA343", "DRA351"], found
    assert "stays Pending" in found[1][1] and "'gpus'" in found[1][1]


def test_slices_constraint_on_attribute_devices_have(tmp_path: Path) -> None:
    doc = CONSTRAINED.format(key="distinctAttribute", attribute="resource.kubernetes.io/pcieRoot")
    found = _on_slices(tmp_path, VKS, doc)
    assert [c for c, _ in found] == ["DRA343"], found


def test_count_zero() -> None:
    """count 0 is Go's unset: with All it is valid, with ExactCount the API server makes it 1."""
    request = '          selectors:\n          - cel:\n              expression: "{expr}"\n'
    exact = TEMPLATE.replace(request, "          count: 0\n")
    lines = _check("t.yaml", exact.encode())
    assert _codes(lines) == {"DRA352"}, lines
    assert "the pod gets one device" in lines[0]
    every = TEMPLATE.replace(request, "          allocationMode: All\n          count: 0\n")
    assert not _check("t.yaml", every.encode())
    check = check_file("t.yaml", exact.encode(), ValidateSettings(external_templates=True))
    assert check.claims[0].requests[0].count == 1  # what the slices check allocates


VGPU_SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-vgpu
spec:
  driver: vgpu.nvidia.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: vgpu-0
    attributes:
      profile: {string: A100-4C}
      migCapable: {bool: false}
"""

VGPU_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: vgpu
spec:
  selectors:
  - cel:
      expression: "device.attributes['vgpu.nvidia.com'].profile == 'A100-4C'"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: pair
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: vgpu
      constraints:
      - matchAttribute: vgpu.nvidia.com/{attribute}
"""


@pytest.mark.parametrize(("attribute", "codes"), [("profile", []), ("migCapable", [])])
def test_slices_teach_the_catalog_an_unknown_driver(
    tmp_path: Path, attribute: str, codes: list[str]
) -> None:
    """vgpu.nvidia.com resembles gpu.nvidia.com (DRA350), but the slices show it publishes."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "c.yaml").write_text(VGPU_CLAIM.replace("{attribute}", attribute))
    without = run_validate(_options(str(tmp_path / "in"), load_config(None)), ValidateSettings())
    assert "DRA350" in {f.code for f in without.all_findings}
    (tmp_path / "slices.yaml").write_text(VGPU_SLICE)
    devices = load_slices(str(tmp_path / "slices.yaml"))
    report = run_validate(
        _options(str(tmp_path / "in"), load_config(None)), ValidateSettings(), devices
    )
    found = sorted({f.code for f in report.all_findings} - {"DRA343"})
    assert found == codes, [(f.code, f.message) for f in report.all_findings]


def test_slices_teach_only_what_they_show(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "c.yaml").write_text(VGPU_CLAIM.replace("{attribute}", "uuid"))
    (tmp_path / "slices.yaml").write_text(VGPU_SLICE)
    devices = load_slices(str(tmp_path / "slices.yaml"))
    report = run_validate(
        _options(str(tmp_path / "in"), load_config(None)), ValidateSettings(), devices
    )
    # the class and its selector are known now; the constraint's name is not published
    codes = {f.code for f in report.all_findings}
    assert "DRA351" in codes and "DRA350" not in codes, report.all_findings


def test_config_declares_a_driver(tmp_path: Path) -> None:
    """A driver the catalog does not list, declared in .dra-migrate.yaml, is known."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "c.yaml").write_text(VGPU_CLAIM.replace("{attribute}", "profile"))
    config_file = tmp_path / "dra.yaml"
    config_file.write_text(
        "version: 1\ndrivers:\n  vgpu.nvidia.com:\n    attributes: [profile]\n"
        "    capacity: [framebuffer]\n"
    )
    report = run_validate(
        _options(str(tmp_path / "in"), load_config(config_file)), ValidateSettings()
    )
    assert not report.all_findings, [(f.code, f.message) for f in report.all_findings]
    config_file.write_text("version: 1\ndrivers:\n  Bad_Domain:\n    attributes: [profile]\n")
    with pytest.raises(ConfigError):
        load_config(config_file)


def test_a_process_pool_gives_the_same_findings(tmp_path: Path) -> None:
    """Enough files for the pool: the settings and what each file defines (dataclasses)
    go to the workers and back, and the checks across files see them all."""
    from dra_migrate.pipeline.pool import PARALLEL_THRESHOLD

    for i in range(PARALLEL_THRESHOLD):
        (tmp_path / f"pod-{i}.yaml").write_text(POD.replace("name: ", f"name: n{i}-", 1))
        (tmp_path / f"template-{i}.yaml").write_text(
            TEMPLATE.replace("{expr}", "device.attributes['gpu.nvidia.com'].productname == 'x'")
        )
    settings = ValidateSettings(kube_version="1.34")
    config = load_config(None)

    def findings(jobs: int) -> list[str]:
        options = dataclasses.replace(_options(str(tmp_path), config), jobs=jobs)
        report = run_validate(options, settings)
        return sorted(f.format() for f in report.all_findings)

    alone = findings(1)
    assert {"DRA316", "DRA332"} <= {line.split(": ", 1)[1].split(" ", 1)[0] for line in alone}
    assert findings(2) == alone
