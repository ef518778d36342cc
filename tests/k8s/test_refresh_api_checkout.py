"""``scripts/refresh_schemas.py --api-checkout``: the bundled schemas of the newest
release against the Go types of a kubernetes/api checkout (``resource/*/types.go``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from tests.conftest import REPO

SCHEMAS = REPO / "schemas"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refresh", REPO / "scripts" / "refresh_schemas.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TYPES_GO = """
type DeviceConfiguration struct {
	Opaque *OpaqueDeviceConfiguration `json:"opaque,omitempty" protobuf:"bytes,1,opt,name=opaque"`
}

type DeviceClaimConfiguration struct {
	// Requests lists the names of requests.
	Requests []string `json:"requests,omitempty" protobuf:"bytes,1,opt,name=requests"`

	DeviceConfiguration `json:"" protobuf:"bytes,2,name=deviceConfiguration"`
}

type ExactDeviceRequest struct {
	DeviceClassName string `json:"deviceClassName" protobuf:"bytes,1,name=deviceClassName"`
	// Legacy `json:"tombstoned,omitempty"` in a comment is not a field
	Count int64 `json:"count,omitempty" protobuf:"bytes,2,opt,name=count"`
}
"""


def test_go_fields_reads_json_names_and_embedded_structs() -> None:
    fields = _script().go_fields(TYPES_GO)
    assert fields["DeviceClaimConfiguration"] == {"requests", "opaque"}  # json:"" embeds
    assert fields["ExactDeviceRequest"] == {"deviceClassName", "count"}


def test_api_drift_names_the_fields_one_side_lacks(tmp_path: Path) -> None:
    # kubernetes/api 10b39a39 (July 2026) had no derivedAttributes; the 1.37.0 OpenAPI has
    (tmp_path / "resource" / "v1").mkdir(parents=True)
    (tmp_path / "resource" / "v1" / "types.go").write_text(TYPES_GO, encoding="utf-8")
    outputs = {
        f"kubernetes/{p.name}": p.read_bytes() for p in (SCHEMAS / "kubernetes").glob("*.json")
    }
    drift = _script().api_drift(outputs, tmp_path)
    assert (
        "1.37 v1.ExactDeviceRequest.derivedAttributes: in the schemas, not in the Go types" in drift
    )
    assert not any(line.startswith("1.37 v1.DeviceClaimConfiguration") for line in drift), drift
    assert "1.37 v1.ResourceSliceSpec: not in " + str(tmp_path) in drift
