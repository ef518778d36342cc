"""Agreement with Kubernetes' own test tables (tests/fixtures/upstream/upstream_*.yaml).

Each case names the upstream test it was rewritten from. The tests compute the
share of cases where dra-migrate reaches Kubernetes' verdict, per table, print
the disagreements, and fail below the agreed floor.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from dra_migrate.cel import (
    PROBLEM_CODES,
    CelEvaluationError,
    check_selector,
    devices_from_resource_slices,
    evaluate_selector,
)
from tests.conftest import FIXTURES

DATA = FIXTURES / "upstream"
CEL_CASES: list[dict[str, Any]] = yaml.safe_load(
    (DATA / "upstream_cel.yaml").read_text(encoding="utf-8")
)["cases"]


def _compile_verdict(expression: str) -> str:
    errors = [p for p in check_selector(expression) if PROBLEM_CODES[p.code].severity == "error"]
    # Catalog knowledge (unknown attribute names of a known driver) is ours, not the
    # API server's: only the problems the API server has count here.
    api = {"syntax", "too-long", "not-bool", "too-complex", "undeclared", "unknown-function"}
    api |= {"unknown-field", "type"}
    return "error" if any(p.code in api for p in errors) else "ok"


def _device(case: dict[str, Any]) -> Any:
    driver = case.get("driver", "dra.example.com")
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "spec": {
            "driver": driver,
            "nodeName": "node",
            "devices": [
                {
                    "name": "device",
                    "attributes": case.get("attributes") or {},
                    "capacity": case.get("capacity") or {},
                }
            ],
        },
    }
    (device,) = devices_from_resource_slices([slice_], default_driver=driver)
    return device


def _match_verdict(case: dict[str, Any]) -> str:
    try:
        return "true" if evaluate_selector(case["expression"], _device(case)) else "false"
    except CelEvaluationError:
        return "error"


def _report(name: str, results: list[tuple[str, str, str]], floor: float) -> None:
    wrong = [r for r in results if r[1] != r[2]]
    share = 100.0 * (len(results) - len(wrong)) / len(results)
    print(f"{name}: {share:.1f} % of {len(results)} upstream cases agree")
    for test, expected, got in wrong:
        print(f"  disagree {test}: Kubernetes {expected}, dra-migrate {got}")
    assert share >= floor, f"{name} agreement {share:.1f} % is below {floor} %: {wrong}"


def test_cel_compile_agreement() -> None:
    results = [(c["test"], c["compile"], _compile_verdict(c["expression"])) for c in CEL_CASES]
    _report("CEL compile", results, 95.0)


def test_cel_evaluation_agreement() -> None:
    results = [
        (c["test"], str(c["match"]).lower(), _match_verdict(c))
        for c in CEL_CASES
        if c["compile"] == "ok"
    ]
    _report("CEL evaluation", results, 95.0)


@pytest.mark.parametrize("case", CEL_CASES, ids=[c["test"] for c in CEL_CASES])
def test_every_cel_case_is_well_formed(case: dict[str, Any]) -> None:
    assert case["compile"] in ("ok", "error")
    assert case["compile"] == "error" or str(case["match"]).lower() in ("true", "false", "error")


VALIDATION_CASES: list[dict[str, Any]] = [
    case
    for table in ("upstream_validation.yaml", "upstream_devices.yaml")
    for case in yaml.safe_load((DATA / table).read_text(encoding="utf-8"))["cases"]
]


def _validation_verdict(case: dict[str, Any]) -> str:
    from dra_migrate.report.findings import Severity
    from dra_migrate.validate import ValidateSettings, check_file, cross_check

    gates = tuple((case.get("featureGates") or {}).items())
    settings = ValidateSettings(
        kube_version=case.get("kubeVersion", "1.34"), external_templates=True, feature_gates=gates
    )
    check = check_file("case.yaml", case["manifest"].encode(), settings)
    findings = list(check.result.findings) + cross_check([check], settings)
    errors = [f for f in findings if f.severity is Severity.ERROR]
    return "reject" if errors else "accept"


def test_validation_agreement() -> None:
    results = [(c["test"], c["verdict"], _validation_verdict(c)) for c in VALIDATION_CASES]
    _report("validation", results, 97.0)
