"""Cluster mode through the real ``kubernetes`` client, against a stand-in API server on
loopback, for what a real one never does or is not set up to do here.

The stand-in (tests/helpers/fake_apiserver.py) answers as the API server does:
discovery, paged lists, Status objects for 401, 403 and 404. It serves what a real
kube-apiserver 1.37 never does (hostile or broken answers: endless continue tokens,
answers dripped a byte at a time, huge, deeply nested or compressed ones; older or no
resource.k8s.io versions) and records every request (only GET is ever sent); its
sample cluster has what a real one refuses or removes (a pod whose owner no longer
exists, which the garbage collector deletes; half a GPU, which validation refuses)
beside the cases test_live_cluster.py makes for real. Paging with real continue
tokens, RBAC refusals, rejected tokens, expired continue tokens, the in-cluster service
account, validate and report --cluster, Succeeded pods, init containers, a pool's older
generation and a node served twice run against a real API server there. The same cluster dumped as ``kubectl get ... -o json``/``-o yaml``
files must give the same inventory.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate import cluster
from dra_migrate.convert.mapping import load_config
from tests.conftest import REPO, shared_dir
from tests.helpers.cli_runner import Result, invoke
from tests.helpers.fake_apiserver import (
    KINDS,
    TOKEN,
    FakeCluster,
    dump,
    sample_cluster,
    serve,
    write_kubeconfig,
)

DOCS = REPO / "docs" / "cluster.md"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[tuple[FakeCluster, Path]]:
    """The sample cluster served on loopback, and a kubeconfig with its token."""
    state = sample_cluster()
    with serve(state) as url:
        yield state, write_kubeconfig(tmp_path / "kubeconfig", url)


def run(*args: str) -> Result:
    result = invoke(list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


def live_json(kubeconfig: Path, *extra: str) -> dict[str, Any]:
    result = run(
        "inventory", "--cluster", "--kubeconfig", str(kubeconfig), "--format", "json", *extra
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def without_ages(data: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(data))
    out.pop("source")
    for c in out["pendingClaims"]:
        c.pop("ageSeconds")
    return out


def paths_of(state: FakeCluster) -> list[str]:
    return [p.split("?")[0] for _m, p in state.requests]


# --- the inventory ---------------------------------------------------------------------


def test_inventory_follows_owners_and_counts_gpus(fake: tuple[FakeCluster, Path]) -> None:
    _state, kubeconfig = fake
    data = live_json(kubeconfig, "-A")["cluster"]
    workloads = {(w["namespace"], w["kind"], w["name"]): w for w in data["workloads"]}
    # Pod -> ReplicaSet -> Deployment; Pod -> Job -> CronJob; custom owners stop at the reference
    assert set(workloads) == {
        ("ml-serving", "Deployment", "chat-vllm"),
        ("ml-serving", "ReplicaSet", "gone-123"),  # its ReplicaSet no longer exists
        ("ml-train", "CronJob", "nightly"),
        ("ml-train", "StatefulSet", "bert"),
        ("ray", "RayCluster", "llm"),
        ("default", "Pod", "debug"),
        ("default", "Pod", "half"),
    }
    chat = workloads["ml-serving", "Deployment", "chat-vllm"]
    assert chat["pods"] == 3 and chat["phases"] == {"Pending": 1, "Running": 2}
    assert chat["gpus"] == {"nvidia.com/gpu": 3} and chat["nodes"] == ["gpu-a", "gpu-b"]
    nightly = workloads["ml-train", "CronJob", "nightly"]
    # a Succeeded pod holds nothing; the init container's 2 fit inside the app's 4
    assert nightly["gpus"] == {"nvidia.com/gpu": 4} and nightly["pods"] == 2
    assert {(r["container"], r["role"]) for r in nightly["requests"]} == {
        ("main", "app"),
        ("warmup", "init"),
    }
    ray = workloads["ray", "RayCluster", "llm"]
    assert ray["apiVersion"] == "ray.io/v1"
    assert ray["requests"][0]["deviceClass"] == "mig.nvidia.com"
    half = workloads["default", "Pod", "half"]["requests"][0]
    assert half["count"] is None and half["value"] == "0.5"
    assert data["summary"]["podsRead"] == 11 and data["summary"]["nodesRead"] == 6


def test_nodes_devices_classes_and_pending_claims(fake: tuple[FakeCluster, Path]) -> None:
    _state, kubeconfig = fake
    result = live_json(kubeconfig, "-A")
    data = result["cluster"]
    assert data["draVersion"] == "resource.k8s.io/v1"
    nodes = {n["name"]: n for n in data["nodes"]}
    assert "cpu-0" not in nodes  # no GPUs of either kind
    assert nodes["gpu-a"]["devicePlugin"] and not nodes["gpu-a"]["draDrivers"]
    assert nodes["gpu-a"]["capacity"] == {"nvidia.com/gpu": "8"}
    assert nodes["gpu-a"]["product"] == "NVIDIA-A100-SXM4-80GB"
    assert not nodes["dra-0"]["devicePlugin"] and nodes["dra-0"]["draDrivers"] == ["gpu.nvidia.com"]
    # dra-1's pool has two generations: only the newest (4 H100s) counts
    assert nodes["dra-1"]["draDevices"] == 4
    assert nodes["gpu-both"]["servedTwice"] == ["nvidia.com/gpu"]
    assert data["devices"] == [
        {
            "driver": "gpu.nvidia.com",
            "product": "NVIDIA A100-SXM4-80GB",
            "devices": 8,
            "nodes": 1,
            "notNodeLocal": 0,
        },
        {
            "driver": "gpu.nvidia.com",
            "product": "NVIDIA H100 80GB HBM3",
            "devices": 8,
            "nodes": 2,
            "notNodeLocal": 0,
        },
    ]
    classes = {c["name"]: c for c in data["deviceClasses"]}
    assert classes["gpu.nvidia.com"]["extendedResourceName"] == "nvidia.com/gpu"
    assert classes["gpu.nvidia.com"]["driver"] == "gpu.nvidia.com"
    # the allocated claim and the fresh one are not pending
    assert [(c["namespace"], c["name"], c["reservedFor"]) for c in data["pendingClaims"]] == [
        ("ml-train", "stuck-gpu-fghij", ["pods/stuck-0"])
    ]
    codes = sorted(f["code"] for f in result["findings"])
    assert codes == ["DRA607", "DRA608"]


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(page_size=st.integers(min_value=1, max_value=20))
def test_any_page_size_gives_the_same_inventory(
    fake: tuple[FakeCluster, Path], page_size: int
) -> None:
    _state, kubeconfig = fake
    whole = live_json(kubeconfig, "-A", "--page-size", "500")["cluster"]
    paged = live_json(kubeconfig, "-A", "--page-size", str(page_size))["cluster"]
    assert without_ages(paged) == without_ages(whole)


# --- the offline path agrees -----------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_dumps_give_the_same_inventory(
    fake: tuple[FakeCluster, Path], tmp_path: Path, fmt: str
) -> None:
    state, kubeconfig = fake
    live = live_json(kubeconfig, "-A")
    data = dump(state)
    path = tmp_path / f"cluster.{fmt}"
    if fmt == "json":
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        with path.open("w", encoding="utf-8") as out:
            yaml.safe_dump(data, out)
    result = run("inventory", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    offline = json.loads(result.stdout)
    assert without_ages(offline["cluster"]) == without_ages(live["cluster"])
    assert sorted(f["code"] for f in offline["findings"]) == sorted(
        f["code"] for f in live["findings"]
    )


def test_library_readers_agree_exactly(fake: tuple[FakeCluster, Path], tmp_path: Path) -> None:
    state, kubeconfig = fake
    config = load_config(None)
    reader = cluster.LiveReader(cluster.Connection(str(kubeconfig), page_size=3))
    try:
        live, live_findings = cluster.build_inventory(reader, config, None, 300, NOW)
    finally:
        reader.close()
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump(state)), encoding="utf-8")
    offline, offline_findings = cluster.build_inventory(
        cluster.DumpReader([str(path)]), config, None, 300, NOW
    )
    live.source = offline.source = ""
    assert live == offline
    assert live_findings == offline_findings


def test_dumps_split_over_files_and_bad_files(tmp_path: Path) -> None:
    state = sample_cluster()
    for resource in KINDS:
        items = state.objects.get(resource, [])
        (tmp_path / f"{resource}.json").write_text(
            json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8"
        )
    (tmp_path / "configmap.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
    )
    (tmp_path / "broken.yaml").write_text("items: [\n")
    files = sorted(str(p) for p in tmp_path.iterdir())
    result = run("inventory", *files, "--format", "json")
    assert result.exit_code == 123, result.output  # broken.yaml could not be read
    data = json.loads(result.stdout)
    assert data["cluster"]["summary"]["workloads"] == 7
    codes = {(Path(f["path"]).name, f["code"]) for f in data["findings"]}
    assert ("configmap.yaml", "DRA609") in codes
    assert any(name == "broken.yaml" and code == "DRA004" for name, code in codes)
    assert re.search(r"broken\.yaml:\d+:\d+: DRA004", run("inventory", *files).stdout)


def test_real_slice_dumps_served_and_read_alike(tmp_path: Path) -> None:
    """The real ResourceSlice dumps of ../shared/corpus/dra, live and offline."""
    corpus = shared_dir("corpus", "dra")
    dumps = [
        corpus / "slices__cncf-ai-conformance-vks-v1.35__1.yaml",
        corpus / "slices__dra-example-driver-readme__1.yaml",
    ]
    for path in dumps:
        if not path.is_file():
            pytest.skip(f"{path} not found: the shared corpus lives beside the checkout")
    slices = [item for path in dumps for item in yaml.safe_load(path.read_text())["items"]]
    state = FakeCluster({"resourceslices": slices})
    with serve(state) as url:
        kubeconfig = write_kubeconfig(tmp_path / "kc", url)
        live = live_json(kubeconfig, "-A", "--page-size", "3")["cluster"]
    offline = json.loads(run("inventory", *map(str, dumps), "--format", "json").stdout)["cluster"]
    assert without_ages(live) == without_ages(offline)
    groups = {(g["driver"], g["product"]): g for g in live["devices"]}
    assert groups["gpu.nvidia.com", "GRID A100-40C"]["devices"] == 1
    assert groups["gpu.nvidia.com", "GRID A100-4C"]["devices"] == 3
    assert groups["gpu.example.com", "LATEST-GPU-MODEL"]["devices"] == 8
    assert ("compute-domain.nvidia.com", "channel") in groups  # no product name: its type
    assert live["summary"]["draNodes"] == 5


# --- API versions ------------------------------------------------------------------------


@pytest.mark.parametrize("versions", [("v1beta2", "v1beta1"), ("v1beta1",)])
def test_older_dra_versions_read_alike(
    fake: tuple[FakeCluster, Path], tmp_path: Path, versions: tuple[str, ...]
) -> None:
    state, kubeconfig = fake
    newest = live_json(kubeconfig, "-A")["cluster"]
    state.dra_versions = versions
    older = live_json(kubeconfig, "-A")["cluster"]
    assert older["draVersion"] == f"resource.k8s.io/{versions[0]}"
    older["draVersion"] = newest["draVersion"]
    assert without_ages(older) == without_ages(newest)
    assert any(p.startswith(f"/apis/resource.k8s.io/{versions[0]}/") for p in paths_of(state))


def test_cluster_without_dra(fake: tuple[FakeCluster, Path]) -> None:
    state, kubeconfig = fake
    state.dra_versions = ()
    result = run("inventory", "--cluster", "--kubeconfig", str(kubeconfig), "-A")
    assert result.exit_code == 0
    assert "DRA606" in result.stdout and "no resource.k8s.io API" in result.stdout
    assert "GPU workloads" in result.stdout and "gpu-a" in result.stdout
    assert not any("resource.k8s.io/v" in p for p in paths_of(state))


def test_only_alpha_dra_is_not_read(fake: tuple[FakeCluster, Path]) -> None:
    state, kubeconfig = fake
    state.dra_versions = ("v1alpha3",)
    data = live_json(kubeconfig, "-A")
    assert data["cluster"]["draVersion"] is None
    (note,) = [f for f in data["findings"] if f["code"] == "DRA606"]
    assert "resource.k8s.io/v1alpha3" in note["message"]


# --- errors: one line, the right exit status, never a credential ------------------------


def one_line(result: Result, code: str, status: int) -> str:
    assert result.exit_code == status, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dra-migrate: {code} "), result.stderr
    assert result.stdout == ""
    assert TOKEN not in result.output
    return lines[0]


def test_unreachable_server(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kubeconfig = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
    line = one_line(
        run("inventory", "--cluster", "--kubeconfig", str(kubeconfig), "--request-timeout", "2"),
        "DRA602",
        123,
    )
    assert f"127.0.0.1:{port}" in line and "refused" in line


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ("not: [a kubeconfig", "cannot use the kubeconfig"),
        ('{"apiVersion": "v1", "kind": "Config", "contexts": []}', "cannot use the kubeconfig"),
    ],
)
def test_bad_kubeconfig(tmp_path: Path, content: str | None, expected: str) -> None:
    path = tmp_path / "kc"
    if content is not None:
        path.write_text(content)
    line = one_line(run("inventory", "--cluster", "--kubeconfig", str(path)), "DRA601", 2)
    assert expected in line


def test_unknown_context(fake: tuple[FakeCluster, Path]) -> None:
    _state, kubeconfig = fake
    line = one_line(
        run("inventory", "--cluster", "--kubeconfig", str(kubeconfig), "--kube-context", "prod"),
        "DRA601",
        2,
    )
    assert "prod" in line


def test_no_kubeconfig_and_not_in_a_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    one_line(run("inventory", "--cluster"), "DRA601", 2)


def test_usage_errors() -> None:
    for args in (
        ["inventory"],
        ["inventory", "--cluster", "dump.yaml"],
        ["inventory", "--cluster", "-n", "a", "-A"],
        ["inventory", "--cluster", "--pending-after", "soon"],
        ["inventory", "dump.yaml", "--context", "x"],
        ["validate", "--cluster", "--resource-slices", "s.yaml", "."],
    ):
        result = run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("dra-migrate: error: ")


# --- read-only, and the ClusterRole covers every request ----------------------------------


def cluster_role() -> dict[str, Any]:
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    docs = [d for b in blocks for d in yaml.safe_load_all(b)]
    (role,) = [d for d in docs if isinstance(d, dict) and d.get("kind") == "ClusterRole"]
    return role


def allowed(role: dict[str, Any], group: str, resource: str, verb: str) -> bool:
    return any(
        group in rule.get("apiGroups", [])
        and resource in rule.get("resources", [])
        and verb in rule.get("verbs", [])
        for rule in role["rules"]
    )


def test_cluster_role_covers_every_call_the_code_makes() -> None:
    role = cluster_role()
    for group, resource, verb in cluster.permissions():
        assert allowed(role, group, resource, verb), (group, resource, verb)
    for rule in role["rules"]:
        assert set(rule["verbs"]) <= {"get", "list"}, "the ClusterRole must be read-only"
    assert url_allowed(role, cluster.DISCOVERY_URL + "/"), "discovery of resource.k8s.io"


def url_allowed(role: dict[str, Any], url: str) -> bool:
    """RBAC's non-resource URL match: the URL itself, or a prefix ending in ``*``."""
    return any(
        "get" in rule.get("verbs", [])
        and any(
            u == url or (u.endswith("*") and url.startswith(u[:-1]))
            for u in rule.get("nonResourceURLs", [])
        )
        for rule in role["rules"]
    )


_PATH = re.compile(
    r"^/(?:api/v1|apis/(?P<group>[a-z0-9.]+)/v[0-9a-z]+)(?:/namespaces/[^/]+)?/(?P<resource>[a-z]+)(?P<name>/[^/]+)?$"
)


@pytest.mark.parametrize("versions", [("v1",), ("v1beta1",), ()])
def test_only_reads_and_only_what_the_role_grants(
    fake: tuple[FakeCluster, Path], tmp_path: Path, versions: tuple[str, ...]
) -> None:
    state, kubeconfig = fake
    state.dra_versions = versions
    live_json(kubeconfig, "-A", "--page-size", "2")
    live_json(kubeconfig, "-n", "ml-serving")
    manifest = tmp_path / "rct.yaml"
    manifest.write_text(RCT)
    run("validate", "--cluster", "--kubeconfig", str(kubeconfig), str(manifest))
    assert state.requests
    assert {m for m, _p in state.requests} == {"GET"}, "cluster mode must never write"
    role = cluster_role()
    for path in paths_of(state):
        if path.rstrip("/") == cluster.DISCOVERY_URL:
            assert url_allowed(role, path), path
            continue
        match = _PATH.match(path)
        assert match, path
        verb = "get" if match["name"] else "list"
        assert allowed(role, match["group"] or "", match["resource"], verb), path


def test_no_write_call_in_the_source() -> None:
    """Every request is the one GET of ``_Exchange.run``; no method of the client that
    writes is named, nor any other HTTP method."""
    assert {r.verb for r in cluster.RESOURCES.values()} == {"get", "list"}
    modules = sorted(Path(cluster.__file__).parent.glob("*.py"))
    assert len(modules) > 1  # the package's modules, not only its __init__
    source = "".join(path.read_text(encoding="utf-8") for path in modules)
    assert source.count('"GET"') == 1
    for verb in (
        "create_",
        "patch_",
        "replace_",
        "delete_",
        '"POST"',
        '"PUT"',
        '"PATCH"',
        '"DELETE"',
    ):
        assert verb not in source


# --- validate --cluster --------------------------------------------------------------------

RCT = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: h100
  namespace: ml-train
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
          selectors:
          - cel:
              expression: device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: b200
  namespace: ml-train
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel:
              expression: device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA B200')
"""


def test_validate_on_a_cluster_without_dra(fake: tuple[FakeCluster, Path], tmp_path: Path) -> None:
    state, kubeconfig = fake
    state.dra_versions = ()
    manifest = tmp_path / "rct.yaml"
    manifest.write_text(RCT)
    result = run("validate", "--cluster", "--kubeconfig", str(kubeconfig), str(manifest))
    assert result.exit_code == 2
    assert "no resource.k8s.io API" in result.stderr


# --- formats ------------------------------------------------------------------------------


def test_text_and_markdown(fake: tuple[FakeCluster, Path]) -> None:
    _state, kubeconfig = fake
    text = run("inventory", "--cluster", "--kubeconfig", str(kubeconfig), "-A").stdout
    assert re.search(r"ml-serving\s+Deployment/chat-vllm\s+3 \(1 Pending, 2 Running\)", text)
    assert re.search(r"gpu-both\s+NVIDIA-H100-80GB-HBM3\s+nvidia.com/gpu=4", text)
    assert re.search(r"stuck-gpu-fghij\s+\d+d", text)
    assert "dra-migrate: DRA607 warning: node gpu-both" in text
    md = run(
        "inventory", "--cluster", "--kubeconfig", str(kubeconfig), "-A", "--format", "markdown"
    ).stdout
    assert (
        "| ml-serving | Deployment/chat-vllm | 3 | main | app | `nvidia.com/gpu` | 1 | gpu.nvidia.com |"
        in md
    )
    assert "| gpu.nvidia.com | NVIDIA H100 80GB HBM3 | 8 | 2 |" in md
    assert "[DRA608](" in md and "findings.md#dra608)" in md
    for output in (text, md):
        assert TOKEN not in output


def test_parse_duration() -> None:
    assert cluster.parse_duration("90") == 90
    assert cluster.parse_duration("1h30m") == 5400
    assert cluster.parse_duration("2d") == 172800
    for bad in ("", "5 m", "m5", "1.5h", "5y"):
        with pytest.raises(ValueError):
            cluster.parse_duration(bad)


def test_validate_kube_context_beside_the_repository_context(tmp_path: Path) -> None:
    """validate has two contexts: --context PATH (the hooks' repository) and
    --kube-context NAME (the kubeconfig's); neither shadows the other."""
    from tests.helpers.cli_runner import invoke

    result = invoke(
        ["validate", "--kube-context", "prod", "--context", str(tmp_path), str(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert "--kubeconfig and --kube-context need --cluster" in result.output


def test_report_cluster_refuses_slice_dumps_beside_it() -> None:
    both = run("report", "--cluster", "--resource-slices", "x.yaml", str(REPO / "examples"))
    assert both.exit_code == 2 and "drop --resource-slices" in both.output


# --- bounds: a server that misbehaves cannot hold a run, nor fill its memory ---------------


def _misbehaving(state: FakeCluster, kubeconfig: Path, *extra: str) -> Result:
    result = run("inventory", "--cluster", "--kubeconfig", str(kubeconfig), "-A", *extra)
    assert result.output.count("\n") == 1, result.output  # the one line of a cluster error
    return result


@pytest.mark.parametrize("mode", ["repeat", "endless"])
def test_a_list_that_never_ends_is_refused(fake: tuple[FakeCluster, Path], mode: str) -> None:
    state, kubeconfig = fake
    state.continue_mode = mode
    result = _misbehaving(state, kubeconfig, "--page-size", "2", "--max-pages", "30")
    assert result.exit_code == 123 and "DRA612" in result.stderr, result.output
    pods = [p for p in paths_of(state) if p.endswith("/pods")]
    # the second page gives the first page's token again; an endless list stops at --max-pages
    assert len(pods) == (2 if mode == "repeat" else 30)


@pytest.mark.parametrize("where", ["headers", "body"])
def test_request_timeout_is_a_deadline_for_the_whole_answer(
    fake: tuple[FakeCluster, Path], where: str
) -> None:
    """A byte every 50 ms never trips a timeout of each read; the deadline does."""
    state, kubeconfig = fake
    state.drip = where
    result = _misbehaving(state, kubeconfig, "--request-timeout", "0.5")
    assert result.exit_code == 123, result.output
    assert "DRA602" in result.stderr and "did not answer within 0.5 seconds" in result.stderr


def test_an_answer_larger_than_the_limit_is_not_read(fake: tuple[FakeCluster, Path]) -> None:
    """Content-Length above the limit, and a chunked answer that would go on for 1 GB."""
    state, kubeconfig = fake
    result = _misbehaving(state, kubeconfig, "--max-response-size", "1Ki")
    assert result.exit_code == 123 and "DRA611" in result.stderr, result.output
    assert "larger than 1Ki (--max-response-size)" in result.stderr
    state.stream_padding = 2**30
    result = _misbehaving(state, kubeconfig, "--max-response-size", "1Mi")
    assert result.exit_code == 123 and "DRA611" in result.stderr, result.output


def test_reading_a_huge_answer_keeps_memory_bounded(fake: tuple[FakeCluster, Path]) -> None:
    import tracemalloc

    state, kubeconfig = fake
    state.stream_padding = 64 * 2**20
    reader = cluster.LiveReader(cluster.Connection(str(kubeconfig), max_response=2**20))
    tracemalloc.start()
    try:
        with pytest.raises(cluster.ClusterError) as raised:
            list(reader.list("pods", None))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        reader.close()
    assert raised.value.finding.code == "DRA611"
    assert peak < 8 * 2**20, f"{peak} bytes held to read a page"


def test_answers_nested_deeply_or_with_huge_numbers(fake: tuple[FakeCluster, Path]) -> None:
    state, kubeconfig = fake
    state.raw["pods"] = b'{"items": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    result = _misbehaving(state, kubeconfig)
    assert result.exit_code == 123 and "DRA605" in result.stderr and "nests" in result.stderr
    count = b"9" * 5000  # past Python's 4,300-digit limit of int()
    state.raw["pods"] = (
        b'{"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [{"metadata": '
        b'{"name": "p", "namespace": "d"}, "spec": {"containers": [{"name": "c", "resources": '
        b'{"limits": {"nvidia.com/gpu": ' + count + b"}}}]}}]}"
    )
    data = live_json(kubeconfig, "-A")["cluster"]
    (request,) = data["workloads"][0]["requests"]
    assert request["count"] is None  # not a count Kubernetes holds


def test_a_compressed_answer_is_never_inflated(fake: tuple[FakeCluster, Path]) -> None:
    """A gzip bomb: 100 KB that would inflate to 100 MB. Answers are asked for and read
    uncompressed, so the size limit counts what would be held."""
    import gzip

    state, kubeconfig = fake
    state.content_encoding = "gzip"
    state.raw["pods"] = gzip.compress(b'{"items": [' + b" " * 100 * 2**20 + b"]}")
    result = _misbehaving(state, kubeconfig)
    assert result.exit_code == 123, result.output
    assert "DRA605" in result.stderr and "list pods in all namespaces" in result.stderr
    assert "compressed (gzip)" in result.stderr
