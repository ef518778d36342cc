"""The catalog of GPU product names (dra_migrate/k8s/products.py): its data file names
its sources and is what scripts/refresh_products.py writes from them, and a name is
known, misspelled or unknown as the catalog and GFD's label rule say."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dra_migrate.k8s.products import (
    PRODUCTS_FILE,
    SHARED_SUFFIX,
    gfd_label,
    label_parts,
    load_products,
)
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "products"
NAMES = load_products().names


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refresh_products", REPO / "scripts" / "refresh_products.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("refresh_products", module)
    spec.loader.exec_module(module)
    return module


def test_the_data_file_names_its_sources_with_their_commits() -> None:
    lines = Path(PRODUCTS_FILE).read_text(encoding="utf-8").splitlines()
    header = [line for line in lines if line.startswith("#")]
    sources = [line for line in header if line.startswith("# source: ")]
    assert len(sources) == 2
    assert "NVIDIA/open-gpu-kernel-modules:README.md@" in sources[0]
    assert "supported-gpus.json@" in sources[1]
    for line in sources:
        assert re.search(r"@[0-9a-f]{40} \(\d{4}-\d{2}-\d{2};", line), line
    assert "scripts/refresh_products.py" in "".join(header)


def test_the_catalog_has_the_data_center_gpus_of_every_generation() -> None:
    assert len(NAMES) > 300 and len(set(NAMES)) == len(NAMES)
    for name in (
        "Tesla V100-SXM2-16GB",  # Volta: supported-gpus.json only
        "Tesla P100-PCIE-16GB",
        "Tesla T4",
        "NVIDIA A100-SXM4-80GB",
        "NVIDIA H100 80GB HBM3",
        "NVIDIA H200",
        "NVIDIA B200",
        "NVIDIA L40S",
    ):
        assert name in NAMES


def test_the_script_writes_every_row_of_the_sources_as_the_data_file_has_it() -> None:
    script = _script()
    readme = (FIXTURES / "open-gpu-kernel-modules-README.md").read_text(encoding="utf-8")
    chips = json.loads((FIXTURES / "supported-gpus.json").read_text(encoding="utf-8"))
    rows = script.readme_rows(readme) + script.supported_rows(chips)
    assert len(rows) == 22 + 5  # GeForce GTX 480 (390.xx) is older than any DRA driver
    assert "GeForce GTX 480" not in {n for n, _d in rows}
    written = {}
    for line in Path(PRODUCTS_FILE).read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            name, ids, _lists = line.split("\t")
            written[name] = set(ids.split(","))
    for name, device in rows:
        assert device in written[name], (name, device)
    # the same rows give the same bytes, whatever their order
    text = script.build(readme, chips, "a", "b")
    again = script.render(
        reversed(
            [(n, d, "open") for n, d in script.readme_rows(readme)]
            + [(n, d, "supported") for n, d in script.supported_rows(chips)]
        ),
        ["a", "b"],
    )
    assert text == again


def test_a_readme_without_the_table_is_refused() -> None:
    with pytest.raises(ValueError, match="Compatible GPUs"):
        _script().readme_rows("# README\n")


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("NVIDIA H100 80GB HBM3", "NVIDIA-H100-80GB-HBM3"),
        ("NVIDIA TITAN X (Pascal)", "NVIDIA-TITAN-X-Pascal"),  # GFD's sanitise drops ( )
        ("Tesla V100-SXM2-16GB", "Tesla-V100-SXM2-16GB"),
    ],
)
def test_the_label_is_gfds_sanitised_name(name: str, label: str) -> None:
    assert gfd_label(name) == label


def test_mig_and_shared_suffixes_are_taken_off_the_label() -> None:
    assert label_parts(f"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb{SHARED_SUFFIX}") == (
        "NVIDIA-A100-SXM4-40GB",
        f"-MIG-1g.5gb{SHARED_SUFFIX}",
    )
    assert label_parts("NVIDIA-A100-SXM4-40GB") == ("NVIDIA-A100-SXM4-40GB", "")


@given(
    st.sampled_from(NAMES),
    st.sampled_from(
        ["", SHARED_SUFFIX, "-MIG-1g.10gb", f"-MIG-3g.40gb{SHARED_SUFFIX}", "-MIG-1g.12gb.me"]
    ),
)
def test_every_catalogued_name_is_known_as_a_label_and_as_the_attribute(
    name: str, suffix: str
) -> None:
    products = load_products()
    assert products.check(gfd_label(name) + suffix, "label").known
    assert products.check(name, "name").known


@given(st.sampled_from(NAMES), st.sampled_from(["lower", "upper"]), st.data())
def test_a_catalogued_name_in_any_case_is_known_where_the_selector_folds_it(
    name: str, fold: str, data: st.DataObject
) -> None:
    products = load_products()
    folded = name.lower() if fold == "lower" else name.upper()
    assert products.check(folded, "name", fold=fold).known
    cut = data.draw(st.integers(1, len(name)))
    assert products.check(folded[:cut], "name", "prefix", fold).known


@given(st.sampled_from(NAMES), st.data())
def test_a_catalogued_name_in_another_case_is_that_name_misspelled(
    name: str, data: st.DataObject
) -> None:
    """Label selectors and CEL's == compare case-sensitively: another case matches no
    node, so it is an error naming the catalogued spelling."""
    flips = data.draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    other = "".join(c.swapcase() if f else c for c, f in zip(name, flips, strict=True))
    products = load_products()
    # the names that differ from it in case only (the catalog has a few such pairs,
    # NVIDIA GeForce RTX 2080 Super and SUPER): the one meant is one of them
    alike = {n for n in NAMES if n.casefold() == name.casefold()}
    if other not in alike:
        verdict = products.check(other, "name")
        assert verdict.misspelled and verdict.suggestion in alike
    if gfd_label(other) not in {gfd_label(n) for n in alike}:
        verdict = products.check(gfd_label(other), "label")
        assert verdict.misspelled and verdict.suggestion in {gfd_label(n) for n in alike}


@pytest.mark.parametrize(
    ("value", "form", "meant"),
    [
        ("NVIDIA-H100-80GB-HMB3", "label", "NVIDIA-H100-80GB-HBM3"),
        ("NVIDIA H100 80GB HMB3", "name", "NVIDIA H100 80GB HBM3"),
        ("NVIDA H100 80GB HBM3", "name", "NVIDIA H100 80GB HBM3"),
        ("NVIDIA-H100-80GB-HMB3-MIG-1g.10gb", "label", "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"),
        ("NVIDIA-H100-80GB-HBM3", "name", "NVIDIA H100 80GB HBM3"),  # the label's dashes
        ("Tesls T4", "name", "Tesla T4"),
    ],
)
def test_a_misspelled_name_says_the_one_meant(value: str, form: str, meant: str) -> None:
    verdict = load_products().check(value, form)
    assert verdict.misspelled and verdict.suggestion == meant


@pytest.mark.parametrize(
    "value",
    [
        "NVIDIA X900 288GB",  # newer than the catalog
        "NVIDIA H300 NVL",  # another number: another GPU, not a misspelling of H800 NVL
        "NVIDIA A100",  # not A10, not H100
        "NVIDIA H100 80GB HBM3e",  # a catalogued name and more
    ],
)
def test_a_name_unlike_any_catalogued_one_is_unknown_not_misspelled(value: str) -> None:
    verdict = load_products().check(value, "name")
    assert not verdict.known and not verdict.misspelled
