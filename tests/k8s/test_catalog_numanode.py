"""KEP-6072: ``resource.kubernetes.io/numaNode`` is a standard attribute (stable in 1.37):
an int, or with DRAListTypeAttributes a list of ints."""

from dra_migrate.cel import check_selector
from dra_migrate.k8s.catalog import load_catalog

NUMA = "device.attributes['resource.kubernetes.io'].numaNode"


def test_kep_6072_numa_node_is_a_standard_int_attribute() -> None:
    info = load_catalog().attribute("resource.kubernetes.io", "numaNode")
    assert info is not None and info.type == "int"
    assert "DRAListTypeAttributes" in info.description


def test_kep_6072_selectors_on_numa_node() -> None:
    assert check_selector(f"{NUMA} == 0") == []
    # the list form (DRAListTypeAttributes) is not called a type error
    assert check_selector(f"0 in {NUMA}") == []
    assert [p.code for p in check_selector(f"{NUMA} == 'zero'")] == ["type"]
    misspelt = check_selector(NUMA.replace("numaNode", "numaNod") + " == 0")
    assert [p.code for p in misspelt] == ["unknown-attribute"]
