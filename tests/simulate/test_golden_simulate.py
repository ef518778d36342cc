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
EXAMPLES_FLEET = FIXTURES / "simulate" / "examples-fleet.yaml"
DIFFERENCES = ("DRA801", "DRA802", "DRA803", "DRA807")
# Cases none of whose workloads the fleet (tests/fixtures/simulate/fleet.yaml) places
# before the conversion, each with what the scheduler or the API server says: they are
# compared only for what the API server accepts (DRA806 is no difference).
NOT_PLACED_BEFORE = {
    "cluster-kserve-pinned-gke": "an InferenceService: KServe's components hold no PodSpec",
    "cluster-scheduler-volcano": "schedulerName volcano: no such scheduler runs",
    "cluster-string-configmap-job": "AMD GPUs: the fleet has none",
    "fidelity-alias-value-at-end": "a Deployment without a selector: the API refuses it",
    "fidelity-empty-values": "a Deployment without a selector: the API refuses it",
    "kind-argo-workflow": "an Argo template is no PodSpec: nothing to place",
    "kind-cronworkflow": "an Argo template is no PodSpec: nothing to place",
    "kind-kserve-containers": "an InferenceService: KServe's components hold no PodSpec",
    "layout-helm-chart": "the chart does not render without its helpers (DRA810)",
    "layout-kueue-quota": "a node selector on Kueue's flavor label: no such node",
    "layout-template-strings-in-manifest": "a Deployment without a selector",
    "semantics-amd": "AMD GPUs: the fleet has none",
    "semantics-existing-container-claims": "its claim template is not in the case",
    "semantics-existing-container-claims-end-of-pod": "a claim the pod does not list",
    "semantics-existing-container-claims-last": "its claim template is not in the case",
    "semantics-existing-pod-claim-gpu": "its claim is not in the case",
    "semantics-intel": "Intel GPUs: the fleet has none",
    "upstream-intel-gaudi-chart-device-class": "Gaudi: the fleet has none",
    "upstream-rocm-device-plugin-mixed-naming": "AMD GPUs: the fleet has none",
    "yaml11-count-quoted-leading-zero": "more GPUs in one pod than a node has",
    "yaml11-count-underscore": "more GPUs in one pod than a node has",
}
# Cases whose conversion the cluster treats differently, as the conversion's own
# findings say: the simulation must find that difference, with Kubernetes' reason.
DIFFERS = {
    # DRA504: the mapping names a class nobody defines
    "semantics-node-selector-rule": ("DRA801", "device class h100.gpu.example.com does not exist"),
    # extendedResourceToleration: false: no toleration written, the L4 pool's taint stays
    "cluster-toleration-off": ("DRA801", "untolerated taint"),
    # --target v1beta2: Kubernetes 1.37 serves resource.k8s.io/v1 only by default
    "semantics-target-v1beta2": ("DRA802", "could not find the requested resource"),
}
# The sharing cases, on pools shared as their device plugin configurations say
# (tests/fixtures/simulate/sharing-fleet.yaml): per workload, the pods bound before and
# after, and for one that differs the finding of convert that predicted it (or none).
SHARING_FLEET = FIXTURES / "simulate" / "sharing-fleet.yaml"
SHARING: dict[str, dict[str, tuple[int, int, str]]] = {
    # DRA260: one of the four consumable shares of the A10G; stage 2 sets the driver's
    # consumableShares: 4, so both pods take a share of the one device, as they took two
    # of the four time-sliced nvidia.com/gpu before
    "sharing-ai-on-eks-time-slicing": {"Deployment/time-slicing-verification": (2, 2, "")},
    "sharing-stack-values": {"Deployment/time-slicing-verification": (2, 2, "")},
    "sharing-mps-mig-per-node": {
        # DRA263 leaves it on the device plugin's MPS, and the pool stays there
        "Pod/mps-infer": (1, 1, ""),
        # DRA266: two MIG devices of profile 3g.20gb, as the two nvidia.com/gpu were
        "Job/mig-finetune": (1, 1, ""),
        # DRA265 leaves it as nvidia.com/gpu, but the pool's MIG devices are the DRA
        # driver's after the migration: the class's extendedResourceName serves it a
        # whole GPU, which a MIG single pool does not have
        "Pod/mig-unknown": (1, 0, "DRA265"),
        # mixed: a MIG device of 1g.5gb and the pool's whole GPU
        "Pod/mig-mixed": (1, 1, ""),
        # DRA262: replica counts that differ between devices are not in the fleet model
        "Pod/uneven": (0, 0, ""),
    },
    # nvidia.com/gpu.shared 8 (two L4 time-sliced four ways, renameByDefault); the
    # mapping's GpuConfig TimeSlicing is a claim configuration: on driver release 0.4
    # (no drivers: setting) the driver publishes no consumable shares, and each of the
    # eight claims takes a whole device: two pods bound, as convert's DRA535 says
    "semantics-time-sliced-config": {"Deployment/sandbox/dev-notebooks": (8, 2, "DRA535")},
    "sharing-time-slicing-rename-per-node": {
        # DRA260 under packed: two of the ten shares of one L40S a pod, as two of the ten
        # nvidia.com/gpu.shared a GPU were: ten pods on two GPUs before and after, each
        # container with its two shares
        "Deployment/research/notebooks": (10, 10, ""),
        "Deployment/research/embed": (1, 1, ""),
        # DRA264 leaves it as nvidia.com/gpu: 2 (failRequestsGreaterThanOne: the device
        # plugin fails it at admission, which no kubelet does here, so it binds before);
        # after, the pool's one A10G is the driver's, and the class's
        # extendedResourceName serves two units as two devices: none binds
        "Pod/research/too-many": (1, 0, "DRA264"),
        # no selector: whole GPUs (the configuration's default); the time-sliced pool's
        # nvidia.com/gpu served it before, the default pool's GPU after (DRA804, a warning)
        "Pod/research/train": (1, 1, ""),
    },
}
# A sharing case whose pools are not those of SHARING_FLEET
SHARING_FLEETS = {
    "sharing-time-slicing-rename-per-node": FIXTURES / "simulate" / "sharing-per-node-fleet.yaml"
}
# More pods bound after than before, and why (DRA805, a warning)
MORE_AFTER = {
    # the toleration DRA224 writes is in the DaemonSet's template: the DaemonSet
    # controller now makes pods on the tainted GPU nodes it skipped before (it checks
    # the template's tolerations; ExtendedResourceToleration adds one only to pods)
    "kind-daemonset": "DRA805",
}


def _converting() -> list[str]:
    """The converting cases but the sharing ones (placed on a fleet of their own)."""
    return sorted(
        p.name
        for p in CASES.iterdir()
        if (p / "input").is_dir() and (p / "expected").is_dir() and p.name not in SHARING
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
    cases.append(prepare("examples", examples, work, fleet=EXAMPLES_FLEET))
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
    if case in DIFFERS:
        code, reason = DIFFERS[case]
        said = [f for f in found if f.code == code]
        assert said and reason in said[0].message, [f.format() for f in found]
        return
    assert not _differences(found), "\n".join(_differences(found))
    assert all(r.holds for r in rows)
    if case in MORE_AFTER:
        assert any(f.code == MORE_AFTER[case] for f in found), [f.format() for f in found]
        return
    placed = [r for r in rows if r.before is not None and r.before.bound]
    if case in NOT_PLACED_BEFORE:
        assert not placed, f"{case} places now: take it out of NOT_PLACED_BEFORE"
        return
    assert placed, f"{case}: no workload placed before: {[f.format() for f in found]}"


@pytest.fixture(scope="module")
def shared(kubeconfig: str, tmp_path_factory: pytest.TempPathFactory) -> Results:
    work = tmp_path_factory.mktemp("shared")
    cases = [
        prepare(n, CASES / n / "input", work, fleet=SHARING_FLEETS.get(n, SHARING_FLEET))
        for n in SHARING
    ]
    return place(kubeconfig, cases)


@pytest.mark.parametrize("case", list(SHARING))
def test_a_sharing_case_places_as_its_findings_say(case: str, shared: Results) -> None:
    """Each workload of a sharing case bound as ``SHARING`` says; one that bound fewer
    after is DRA801 with the scheduler's reason and DRA812 saying what the shared pool
    advertised and what the driver publishes, as the finding of convert predicted; the
    others hold."""
    rows, found = shared[case]
    expected = SHARING[case]
    predictions = (CASES / case / "findings.txt").read_text(encoding="utf-8")
    by_name = {r.display: r for r in rows}
    assert set(expected) <= set(by_name), sorted(by_name)
    said = [f.format() for f in found]
    for name, (before, after, predicted) in expected.items():
        row = by_name[name]
        assert row.before is not None and row.after is not None, name
        assert (row.before.bound, row.after.bound) == (before, after), (name, said)
        mine = [f for f in found if f.message.startswith(f"{name}:")]
        if after < before:
            assert not row.holds
            codes = {f.code for f in mine}
            assert {"DRA801", "DRA812"} <= codes, said
            fewer = next(f for f in mine if f.code == "DRA801")
            assert "the scheduler:" in fewer.message, fewer.message
            if predicted:
                assert f" {predicted} " in predictions, predictions
        else:
            assert row.holds, (name, said)
            assert not [f for f in mine if f.code in (*DIFFERENCES, "DRA812")], said


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
