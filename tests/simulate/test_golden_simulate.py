"""Proven by Kubernetes itself (issue 36): every golden conversion case that converts,
and the bundled examples, placed before and after on a real control plane (the shared
one: all cases at once, each on a fleet of its own) must hold; hand-broken conversions,
one per kind of difference, must be reported with the scheduler's own reason."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from dra_migrate.report.findings import Finding
from dra_migrate.report.simulation import SimulatedWorkload
from tests.conftest import FIXTURES, REPO
from tests.simulate.helpers import Case, edit, place, prepare

CASES = FIXTURES / "convert"
DIFFERENCES = ("DRA801", "DRA802", "DRA803", "DRA807")
# Cases whose GPUs the fleet (tests/fixtures/simulate/fleet.yaml, NVIDIA only) does not
# have, or that no pod of which can be placed without what the case leaves out: their
# workloads place nothing before, so they are compared only for what the API server
# says (DRA806, not a difference).
NOT_PLACED_BEFORE = {
    "semantics-amd": "AMD GPUs: the fleet has none",
    "semantics-intel": "Intel GPUs: the fleet has none",
    "upstream-intel-gaudi-chart-device-class": "Gaudi: the fleet has none",
    "upstream-rocm-device-plugin-mixed-naming": "AMD GPUs: the fleet has none",
}


def _converting() -> list[str]:
    return sorted(
        p.name for p in CASES.iterdir() if (p / "input").is_dir() and (p / "expected").is_dir()
    )


Results = dict[str, tuple[list[SimulatedWorkload], list[Finding]]]


@pytest.fixture(scope="module")
def golden(
    kubeconfig: str, tmp_path_factory: pytest.TempPathFactory, tools_on_path: None
) -> Results:
    work = tmp_path_factory.mktemp("golden")
    cases = [prepare(name, CASES / name / "input", work) for name in _converting()]
    examples = work / "examples-source"
    shutil.copytree(REPO / "examples", examples)
    cases.append(prepare("examples", examples, work))
    return place(kubeconfig, cases)


@pytest.fixture(scope="module")
def tools_on_path() -> Any:
    from tests.conftest import TOOLS_BIN

    mp = pytest.MonkeyPatch()
    if TOOLS_BIN.is_dir():
        import os

        mp.setenv("PATH", f"{TOOLS_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    yield
    mp.undo()


def _differences(found: list[Finding]) -> list[str]:
    return [f.format() for f in found if f.code in DIFFERENCES]


@pytest.mark.parametrize("case", [*_converting(), "examples"])
def test_a_converted_case_places_as_before(case: str, golden: Results) -> None:
    rows, found = golden[case]
    assert not _differences(found), "\n".join(_differences(found))
    assert all(r.holds for r in rows)
    if case in NOT_PLACED_BEFORE:
        return
    placed = [r for r in rows if r.before is not None and r.before.bound]
    assert placed, f"{case}: no workload placed before: {[f.format() for f in found]}"


# --- hand-broken conversions, one per kind of difference ------------------------------


def _deployment(after: Path) -> Path:
    return after / "inference.yaml"


BROKEN = {
    # the toleration DRA224 writes, dropped: the GPU nodes' taint keeps the pods off
    "dropped-toleration": (
        "kind-deployment",
        lambda a: edit(
            _deployment(a),
            "      tolerations:\n        - key: nvidia.com/gpu\n          operator: Exists\n"
            "          effect: NoSchedule\n",
            "",
        ),
        "DRA801",
        "untolerated taint",
    ),
    # one device where the container had two GPUs
    "wrong-count": (
        "kind-deployment",
        lambda a: edit(_deployment(a), "count: 2", "count: 1"),
        "DRA803",
        "server: 1",
    ),
    # a MIG profile no device of the fleet has
    "mig-profile-no-device-has": (
        "semantics-mig",
        lambda a: edit(a / "deploy.yaml", "profile == '1g.10gb'", "profile == '1g.12gb'"),
        "DRA801",
        "cannot allocate all claims",
    ),
    # a selector on a misspelled product
    "misspelled-product": (
        "kind-deployment",
        lambda a: edit(
            _deployment(a),
            "deviceClassName: gpu.nvidia.com",
            "deviceClassName: gpu.nvidia.com\n            selectors:\n"
            "              - cel:\n                  expression: "
            "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GX'",
        ),
        "DRA801",
        "cannot allocate all claims",
    ),
    # a claim template the API server refuses (a class name that is no DNS subdomain)
    "refused-template": (
        "kind-deployment",
        lambda a: edit(_deployment(a), "deviceClassName: gpu.nvidia.com", "deviceClassName: GPU"),
        "DRA802",
        "deviceClassName",
    ),
    # the converted tree lost the workload
    "workload-missing": (
        "kind-pod",
        lambda a: [p.write_text("", encoding="utf-8") for p in a.glob("*.yaml")],
        "DRA807",
        "not in the tree after",
    ),
}


@pytest.fixture(scope="module")
def broken(kubeconfig: str, tmp_path_factory: pytest.TempPathFactory) -> Results:
    work = tmp_path_factory.mktemp("broken")
    cases: list[Case] = [
        prepare(name, CASES / source / "input", work, breaking)
        for name, (source, breaking, _code, _reason) in BROKEN.items()
    ]
    return place(kubeconfig, cases)


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_conversion_is_reported_with_the_schedulers_reason(
    name: str, broken: Results
) -> None:
    _source, _breaking, code, reason = BROKEN[name]
    rows, found = broken[name]
    codes = [f for f in found if f.code == code]
    assert codes, [f.format() for f in found]
    assert reason in codes[0].message, codes[0].message
    assert not all(r.holds for r in rows)
