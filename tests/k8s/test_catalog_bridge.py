"""Which DeviceClass a driver installs bridges an extended resource name by default."""

from dra_migrate.k8s.catalog import load_catalog


def test_nvidia_gpu_class_bridges_nvidia_gpu_on_v1_only() -> None:
    catalog = load_catalog()
    served = catalog.driver_bridge("nvidia.com/gpu", "v1")
    assert served is not None and served.name == "gpu.nvidia.com"
    assert catalog.driver_bridge("nvidia.com/gpu", "v1beta2") is None


def test_intel_gpu_class_bridges_only_when_its_values_ask() -> None:
    assert load_catalog().driver_bridge("intel.com/gpu", "v1") is None
