"""The catalog of the model and family names Intel's GPU DRA driver publishes (issue
40): the data file names its source and is what scripts/refresh_intel_products.py
writes from the driver's table, and a name is known, misspelled (with the one meant) or
unknown against it, as NVIDIA's names are."""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dra_migrate.k8s.products import (
    INTEL_PRODUCTS_FILE,
    INTEL_UNKNOWN,
    PRODUCT_ATTRIBUTES,
    catalog_for,
    load_intel,
)
from tests.conftest import REPO

MODELS, FAMILIES = load_intel(0), load_intel(1)

# the shape of the driver's pkg/gpu/device/models.go (entries written for this test)
MODELS_GO = """\
package device

var ModelDetails = map[string]map[string]string{
\t"0x56a0": {
\t\t"model":  "A770",
\t\t"family": "Arc A-Series",
\t\t"driver": "i915",
\t},
\t"0x0bd0": {
\t\t"model":  "Max 1550",
\t\t"family": "Data Center Max",
\t},
\t"0x0b69": {
\t\t"model":  "Max 1550",
\t\t"family": "Data Center Max",
\t},
}
"""


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refresh_intel_products", REPO / "scripts" / "refresh_intel_products.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("refresh_intel_products", module)
    spec.loader.exec_module(module)
    return module


def test_the_data_file_names_its_source_with_its_commit() -> None:
    with open(INTEL_PRODUCTS_FILE, encoding="utf-8") as handle:
        header = [line for line in handle if line.startswith("#")]
    sources = [line for line in header if line.startswith("# source: ")]
    assert len(sources) == 1
    assert re.match(
        r"# source: intel/intel-resource-drivers-for-kubernetes:pkg/gpu/device/models.go"
        r"@[0-9a-f]{40} \(\d{4}-\d{2}-\d{2}; Apache-2.0 licence\)$",
        sources[0],
    )
    assert "scripts/refresh_intel_products.py" in "".join(header)


def test_the_data_file_is_what_the_script_writes_from_its_rows() -> None:
    with open(INTEL_PRODUCTS_FILE, encoding="utf-8") as handle:
        text = handle.read()
    lines = [line.split("\t") for line in text.splitlines() if not line.startswith("#")]
    rows = [(model, family, d) for model, family, ids in lines for d in ids.split(",")]
    assert all(re.fullmatch(r"[0-9A-F]{4}", d) for _m, _f, d in rows)
    source = text.split("# source: ", 1)[1].split("\n", 1)[0]
    assert _script().render(rows, source) == text
    assert {"Flex 170", "Max 1550", "A770", "B580"} <= set(MODELS.names)
    assert {"Data Center Max", "Arc Pro B-Series"} <= set(FAMILIES.names)


def test_the_script_reads_every_entry_of_the_drivers_table() -> None:
    script = _script()
    rows = script.model_rows(MODELS_GO)
    assert rows == [
        ("A770", "Arc A-Series", "56A0"),
        ("Max 1550", "Data Center Max", "0BD0"),
        ("Max 1550", "Data Center Max", "0B69"),
    ]
    body = script.render(rows, "OWNER/REPO:models.go@0 (2026-01-01; Apache-2.0 licence)")
    assert body.splitlines()[-2:] == [
        "A770\tArc A-Series\t56A0",
        "Max 1550\tData Center Max\t0B69,0BD0",
    ]


@pytest.mark.parametrize(
    "text", ["package device\n", "var ModelDetails = map[string]map[string]string{}\n"]
)
def test_a_file_without_the_table_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="ModelDetails"):
        _script().model_rows(text)


def test_a_model_under_two_families_is_refused() -> None:
    rows = [("A770", "Arc A-Series", "56A0"), ("A770", "Arc B-Series", "56A9")]
    with pytest.raises(ValueError, match="two families: A770"):
        _script().render(rows, "x")


def test_the_intel_attributes_are_checked_against_their_own_lists() -> None:
    assert {("gpu.intel.com", "model"), ("gpu.intel.com", "family")} <= PRODUCT_ATTRIBUTES
    assert catalog_for("gpu.intel.com", "model") is MODELS
    assert catalog_for("gpu.intel.com", "family") is FAMILIES
    assert catalog_for("gpu.amd.com", "productName") is None  # no list holds AMD's names
    assert not MODELS.check("Arc A-Series", "name").known  # a family is no model


@given(st.sampled_from([*MODELS.names, *FAMILIES.names]))
def test_every_catalogued_name_is_known_and_another_case_of_it_misspelled(name: str) -> None:
    products = MODELS if name in MODELS.names else FAMILIES
    assert products.check(name, "name").known
    assert products.check(name.lower(), "name", fold="lower").known
    if name.swapcase() != name:
        verdict = products.check(name.swapcase(), "name")
        assert verdict.misspelled and verdict.suggestion == name


def test_unknown_is_what_the_driver_publishes_for_a_device_it_does_not_list() -> None:
    assert MODELS.check(INTEL_UNKNOWN, "name").known
    assert FAMILIES.check(INTEL_UNKNOWN, "name").known


@pytest.mark.parametrize(
    ("value", "attribute", "meant"),
    [
        ("Flex-170", "model", "Flex 170"),
        ("Maxx 1550", "model", "Max 1550"),
        ("Arc A Series", "family", "Arc A-Series"),
        ("Data Centre Max", "family", "Data Center Max"),
    ],
)
def test_a_misspelled_name_says_the_one_meant(value: str, attribute: str, meant: str) -> None:
    products = catalog_for("gpu.intel.com", attribute)
    assert products is not None
    found = products.check(value, "name")
    assert found.misspelled and found.suggestion == meant
    assert "NVIDIA" not in found.why


@pytest.mark.parametrize("value", ["Flex 180", "Max 1650", "B990", "Arc Z-Series"])
def test_another_number_is_unknown_not_misspelled(value: str) -> None:
    products = FAMILIES if "Series" in value else MODELS
    verdict = products.check(value, "name")
    assert not verdict.known and not verdict.misspelled


def test_a_manifests_selector_on_a_misspelled_intel_model_is_true_on_no_device() -> None:
    from dra_migrate.cel import check_selector_values

    found, _compared = check_selector_values(
        "device.attributes['gpu.intel.com'].model == 'Flex-170'"
    )
    assert [(p.code, p.message) for p in found] == [
        (
            "unknown-value",
            "gpu.intel.com/model is never 'Flex-170': it is the model Intel's GPU DRA "
            "driver publishes, and no GPU has it",
        )
    ]
