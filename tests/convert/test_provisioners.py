"""Where converted pods land and the operators that read the GPU count
(dra_migrate/convert/provisioners.py): one case a rule, from the reduced real cases of
tests/fixtures/provisioners (SOURCE says where each comes from). Each test fails when
its rule is taken out of the table."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dra_migrate.convert import outside_counts, provisioners
from tests.conftest import REPO
from tests.helpers.cli_runner import invoke

FIXTURES = REPO / "tests" / "fixtures" / "provisioners"


def scan(path: Path, *args: str) -> dict[str, Any]:
    result = invoke(["scan", "--format", "json", *args, str(path)])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def rows(report: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [r for r in report["inventory"] if r["name"] == name]


def codes(report: dict[str, Any], path: str) -> list[str]:
    return sorted(f["code"] for f in report["findings"] if f["path"].endswith(path))


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return scan(FIXTURES)


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("gpu-nvidia", "DRA270"),  # karpenter.sh/nodepool
        ("vllm-gemma-deployment", "DRA271"),  # gke-gpu-driver-version: latest
        ("tgi-gemma-deployment", "DRA271"),  # compute-class: Accelerator
        ("workspace-custom-llm", "DRA272"),  # KAITO
        ("warm-pool", "DRA273"),  # aibrix warm pool label
        ("kserve-config-llm-template", "DRA273"),  # KServe preset
        ("srt-gte-qwen2-7b-instruct", "DRA275"),  # OME runtime, outside a pod spec
        ("spark-pi-gpu", "DRA275"),  # Spark operator's gpu: {name, quantity}
        ("nginx-leaderworkerset", "DRA273"),  # Kueue TAS annotation on the worker template
        ("vllm-agg", "DRA275"),  # NVIDIA Dynamo's resources.limits.gpu
        ("trtllm-disagg-tp8", "DRA273"),  # Dynamo v1beta1 component on 2 nodes
    ],
)
def test_each_rule_holds_its_case_on_the_device_plugin(
    report: dict[str, Any], name: str, code: str
) -> None:
    found = rows(report, name)
    assert found, f"{name} is not in the inventory"
    assert {r["kept"] for r in found} == {code}
    assert {r["state"] for r in found} == {"refused"}


def test_llmaz_service_is_held_and_its_model_flavor_counted(report: dict[str, Any]) -> None:
    by_kind = {r["kind"]: r for r in rows(report, "qwen2-0--5b")}
    assert by_kind["Service"]["kept"] == "DRA273"
    assert by_kind["OpenModel"]["kept"] == "DRA275"
    assert by_kind["OpenModel"]["podPath"] == "spec.inferenceConfig.flavors[0]"
    assert by_kind["OpenModel"]["container"] == "t4"


def test_a_dra_node_pool_selector_is_converted(report: dict[str, Any]) -> None:
    (row,) = rows(report, "dra-pool")  # gke-gpu-driver-version: disabled
    assert row["kept"] is None and row["state"] == "converted"


def test_a_nodepool_limit_is_a_cap_not_an_ask(report: dict[str, Any]) -> None:
    found = [f for f in report["findings"] if f["path"].endswith("karpenter.yaml")]
    assert "DRA276" in {f["code"] for f in found}
    assert "DRA212" not in {f["code"] for f in found}
    (cap,) = [f for f in found if f["code"] == "DRA276"]
    # Karpenter counts a node's status.capacity once it is initialized: a DRA node has no
    # nvidia.com/gpu there, so only limits.nodes caps a pool that moves to DRA
    assert "status.capacity" in cap["message"] and "limits.nodes" in cap["hint"]
    assert not rows(report, "gpu")  # a NodePool's limit asks for nothing


def test_every_ask_outside_a_pod_spec_is_counted_once(report: dict[str, Any]) -> None:
    """OME's runner sets requests and limits: one ask, two findings; scan no longer says
    there are no GPU requests in a repository of runtimes."""
    ome = rows(report, "srt-gte-qwen2-7b-instruct")
    assert len(ome) == 1 and ome[0]["count"] == 1
    assert codes(report, "ome-runtime.yaml") == ["DRA275", "DRA275"]
    alone = scan(FIXTURES / "ome-runtime.yaml")
    assert alone["summary"]["requests"] == 1


def test_a_managed_pool_is_converted_with_a_note(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      nodeSelector:\n"
        "        eks.amazonaws.com/nodegroup: gpu-p5\n      containers:\n"
        "        - name: train\n          image: ghcr.io/example/train:1.0\n"
        "          resources:\n            limits:\n              nvidia.com/gpu: 8\n"
    )
    found = scan(job)
    assert [r["state"] for r in found["inventory"]] == ["converted"]
    assert "DRA277" in {f["code"] for f in found["findings"]}


def test_karpenter_exists_affinity_pins_too(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  affinity:\n"
        "    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        "          - key: karpenter.k8s.aws/instance-gpu-name\n            operator: Exists\n"
        "  containers:\n  - name: c\n    image: i\n    resources:\n      limits:\n"
        "        nvidia.com/gpu: 1\n"
    )
    assert [r["kept"] for r in scan(pod)["inventory"]] == ["DRA270"]


def test_report_names_each_provisioner_and_keeps_held_workloads_out_of_waves() -> None:
    result = invoke(["report", "--format", "json", str(FIXTURES)])
    plan = json.loads(result.stdout)["plan"]
    risks = {r["code"] for r in plan["risks"]}
    assert {"DRA270", "DRA271", "DRA272", "DRA273", "DRA275", "DRA276"} <= risks
    topics = {p["topic"] for p in plan["stages"]["prerequisites"]["requirements"]}
    assert {"Pods pinned to Karpenter node pools", "KAITO Workspaces"} <= topics
    held = {
        w["name"]: w["wave"]
        for w in plan["stages"]["inventory"]["workloads"]
        if w["strategy"] == "manual"
    }
    assert held and set(held.values()) == {0}
    assert "gpu-nvidia" in held and "dra-pool" not in held


def test_convert_writes_nothing_for_held_pod_specs(tmp_path: Path) -> None:
    target = tmp_path / "operators.yaml"
    target.write_bytes((FIXTURES / "operators.yaml").read_bytes())
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        invoke(["convert", "--write", "operators.yaml"])
    finally:
        os.chdir(old)
    assert target.read_bytes() == (FIXTURES / "operators.yaml").read_bytes()


def test_every_table_row_cites_a_source() -> None:
    for landing in provisioners.LANDINGS:
        assert landing.source and landing.code in ("DRA270", "DRA271", "DRA277", "DRA285")
    for reader in (*provisioners.HELD_KINDS.values(), *provisioners.SELECTED_BY.values()):
        assert "/" in reader.source
    for rule in outside_counts.OUTSIDE:
        assert "/" in rule.source


def test_manifest_templates_a_walk_finds_are_listed_and_counted() -> None:
    """*.yaml-template (envsubst) and *.yaml.j2 (Jinja): skipped by a walk before; now
    every GPU ask is a row kept by DRA274, one ask for requests and limits, and the
    files are never converted."""
    found = scan(FIXTURES / "templates")
    assert found["summary"]["requests"] == 2
    by_path = {Path(r["path"]).name: r for r in found["inventory"]}
    envsubst, jinja = by_path["fsdp.yaml-template"], by_path["train.yaml.j2"]
    assert (envsubst["kind"], envsubst["name"], envsubst["value"]) == (
        "PyTorchJob",
        "fsdp",
        "$GPU_PER_NODE",
    )
    assert envsubst["count"] is None and envsubst["line"] == 24  # limits, not requests
    assert (jinja["kind"], jinja["value"], jinja["line"]) == ("", "{{ gpus }}", 15)
    assert {r["kept"] for r in found["inventory"]} == {"DRA274"}
    assert {r["state"] for r in found["inventory"]} == {"refused"}
    assert {f["code"] for f in found["findings"]} == {"DRA274"}
    assert {f["status"] for f in found["files"]} == {"reported"}


def test_a_template_named_on_the_command_line_is_read_as_a_manifest() -> None:
    found = scan(FIXTURES / "templates" / "fsdp.yaml-template")
    assert "DRA274" not in {f["code"] for f in found["findings"]}
    assert [r["resource"] for r in found["inventory"]] == ["nvidia.com/gpu"]


def test_spark_gpu_fields_are_counted_as_asks(report: dict[str, Any]) -> None:
    spark = {r["podPath"]: r for r in rows(report, "spark-pi-gpu")}
    assert set(spark) == {"spec.driver.gpu", "spec.executor.gpu"}
    assert spark["spec.executor.gpu"]["resource"] == "nvidia.com/gpu"
    assert spark["spec.executor.gpu"]["count"] == 1


NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-inference
spec:
  limits:
    nvidia.com/gpu: 16
  template:
    metadata:
      labels:
        workload: gpu-inference
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: gpu
"""


def gpu_job(selector: str = "") -> str:
    return (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n"
        f"    spec:\n      restartPolicy: Never\n{selector}      containers:\n"
        "        - name: train\n          image: ghcr.io/example/train:1.0\n"
        "          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )


def repo(tmp_path: Path, files: dict[str, str], git: bool) -> Path:
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    if git:
        import subprocess

        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


@pytest.mark.parametrize("git", [False, True])
def test_a_pod_selecting_a_nodepool_label_of_another_file_is_held(
    tmp_path: Path, git: bool
) -> None:
    root = repo(
        tmp_path,
        {
            "infra/nodepool.yaml": NODEPOOL,
            "apps/job.yaml": gpu_job("      nodeSelector:\n        workload: gpu-inference\n"),
        },
        git,
    )
    found = scan(root)
    (row,) = found["inventory"]
    assert row["kept"] == "DRA270"
    (held,) = [f for f in found["findings"] if f["code"] == "DRA270"]
    assert "NodePool gpu-inference" in held["message"]
    assert "nodepool.yaml" in held["message"]


@pytest.mark.parametrize("git", [False, True])
def test_gpu_pods_of_a_repository_whose_nodepools_cap_gpus_are_held(
    tmp_path: Path, git: bool
) -> None:
    root = repo(tmp_path, {"infra/nodepool.yaml": NODEPOOL, "apps/job.yaml": gpu_job()}, git)
    (row,) = scan(root)["inventory"]
    assert row["kept"] == "DRA270"


def test_without_a_nodepool_the_same_job_is_converted(tmp_path: Path) -> None:
    root = repo(tmp_path, {"apps/job.yaml": gpu_job()}, False)
    (row,) = scan(root)["inventory"]
    assert row["state"] == "converted"


def test_a_pool_listed_under_dra_node_pools_serves_claims(tmp_path: Path) -> None:
    root = repo(
        tmp_path,
        {
            "infra/nodepool.yaml": NODEPOOL,
            "apps/job.yaml": gpu_job("      nodeSelector:\n        workload: gpu-inference\n"),
            ".dra-migrate.yaml": "draNodePools: [gpu-inference]\n",
        },
        False,
    )
    (row,) = scan(root, "--config", str(root / ".dra-migrate.yaml"))["inventory"]
    assert row["state"] == "converted"


def test_a_pod_on_a_managed_node_group_is_not_karpenters(tmp_path: Path) -> None:
    root = repo(
        tmp_path,
        {
            "infra/nodepool.yaml": NODEPOOL,
            "apps/job.yaml": gpu_job(
                "      nodeSelector:\n        eks.amazonaws.com/nodegroup: p5\n"
            ),
        },
        False,
    )
    found = scan(root)
    assert [r["state"] for r in found["inventory"]] == ["converted"]
    assert "DRA277" in {f["code"] for f in found["findings"]}


def test_an_old_karpenter_provisioner_label_pins_too(tmp_path: Path) -> None:
    """Karpenter before v0.32 labelled its nodes karpenter.sh/provisioner-name."""
    root = repo(
        tmp_path,
        {"job.yaml": gpu_job("      nodeSelector:\n        karpenter.sh/provisioner-name: gpu\n")},
        False,
    )
    assert [r["kept"] for r in scan(root)["inventory"]] == ["DRA270"]


def test_the_plan_names_the_autoscaler_of_managed_pools(tmp_path: Path) -> None:
    root = repo(
        tmp_path,
        {"job.yaml": gpu_job("      nodeSelector:\n        eks.amazonaws.com/nodegroup: p5\n")},
        False,
    )
    plan = json.loads(invoke(["report", "--format", "json", str(root)]).stdout)["plan"]
    needs = {p["topic"]: p for p in plan["stages"]["prerequisites"]["requirements"]}
    eks = needs["Autoscaler of an EKS managed node group"]
    assert "job.yaml" in eks["detail"]
    # cluster-autoscaler's AWS template node has no ResourceSlices: no scale-up from zero
    assert "minimum size at 1" in eks["requirement"]
    assert "aws_manager.go" in eks["requirement"]
    assert not [t for t in needs if "AKS" in t or "GKE" in t]


def test_an_aks_pool_gets_the_azure_autoscaler_prerequisite(tmp_path: Path) -> None:
    root = repo(
        tmp_path,
        {
            "job.yaml": gpu_job(
                "      nodeSelector:\n        kubernetes.azure.com/agentpool: a100\n"
            )
        },
        False,
    )
    plan = json.loads(invoke(["report", "--format", "json", str(root)]).stdout)["plan"]
    needs = {p["topic"]: p for p in plan["stages"]["prerequisites"]["requirements"]}
    aks = needs["Autoscaler of an AKS node pool"]
    assert "azure_template.go" in aks["requirement"] and "minimum count" in aks["requirement"]
    assert not [t for t in needs if "EKS" in t]


def test_stage_two_names_each_operator_found() -> None:
    plan = json.loads(invoke(["report", "--format", "json", str(FIXTURES)]).stdout)["plan"]
    topics = {p["topic"] for p in plan["stages"]["prerequisites"]["requirements"]}
    operators = {t.removeprefix("Operator: ") for t in topics if t.startswith("Operator: ")}
    assert operators == {
        "KAITO",
        "Kueue topology-aware scheduling",
        "OME",
        "aibrix ModelClaim warm pool",
        "llmaz",
        "KServe",
        "the Spark operator",
        "NVIDIA Dynamo",
    }


def test_an_ask_inside_a_string_is_counted_and_refused() -> None:
    """A Job manifest held in a ConfigMap (DRA227): its ask is a row, kept by DRA227."""
    found = scan(REPO / "tests" / "fixtures" / "convert" / "cluster-string-configmap-job" / "input")
    inside = [r for r in found["inventory"] if r["kind"] == "ConfigMap"]
    assert [(r["podPath"], r["count"], r["kept"], r["state"]) for r in inside] == [
        ("data.job.yaml (Job rvs-gst-single)", 8, "DRA227", "refused")
    ]


def test_karpenter_hold_names_the_releases_read(report: dict[str, Any]) -> None:
    """v1.7.0 added the skip; the AWS provider describes no DRA devices up to v1.14.1."""
    (held,) = [f for f in report["findings"] if f["code"] == "DRA270"]
    assert "from v1.7.0" in held["message"]
    assert "aws/karpenter-provider-aws up to v1.14.1" in held["message"]
    assert "Azure/karpenter-provider-azure up to v1.14.2 describe none" in held["message"]


def test_dynamo_gpu_fields_are_counted_as_the_resource_they_become(report: dict[str, Any]) -> None:
    """Dynamo's gpu: "1" is no resource name; its operator writes it as nvidia.com/gpu."""
    (row,) = rows(report, "vllm-agg")
    assert (row["podPath"], row["resource"], row["count"]) == (
        "spec.services.worker",
        "nvidia.com/gpu",
        1,
    )
    (named,) = [f for f in report["findings"] if f["path"].endswith("dynamo.yaml")]
    assert "NVIDIA Dynamo" in named["message"] and "resources.limits.gpu" in named["message"]
    alone = scan(FIXTURES / "dynamo.yaml")
    assert alone["summary"]["requests"] == 1


DYNAMO_COMPONENT = """\
apiVersion: nvidia.com/v1alpha1
kind: DynamoComponentDeployment
metadata:
  name: decode
spec:
  resources:
    limits:
      custom:
        nvidia.com/gpu: "2"
        ephemeral-storage: 2Gi
"""


def test_a_dynamo_custom_resource_is_counted_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "dcd.yaml"
    path.write_text(DYNAMO_COMPONENT)
    (row,) = scan(path)["inventory"]
    assert (row["resource"], row["count"], row["kept"]) == ("nvidia.com/gpu", 2, "DRA275")


def test_a_gpu_key_of_another_kind_is_no_ask(tmp_path: Path) -> None:
    """Only the kinds of COUNT_FIELDS turn gpu and custom into resources."""
    path = tmp_path / "other.yaml"
    for text in (
        DYNAMO_COMPONENT,
        DYNAMO_COMPONENT.replace("custom:\n        nvidia.com/gpu", "gpu"),
    ):
        path.write_text(text.replace("nvidia.com/v1alpha1", "example.com/v1"))
        assert scan(path)["summary"]["requests"] == 0


KSERVE_PRESET = """\
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceServiceConfig
metadata:
  name: gpu-preset
{namespace}spec:
  template:
    containers:
    - name: main
      image: ghcr.io/llm-d/llm-d:v0.2.0
      resources:
        limits:
          nvidia.com/gpu: "1"
"""


@pytest.mark.parametrize(
    ("namespace", "state", "code"),
    [
        ("", "refused", "DRA273"),  # where it lands is not said: it may be KServe's
        ("  namespace: kserve\n", "refused", "DRA273"),  # every namespace merges it
        ("  namespace: kubeflow\n", "refused", "DRA273"),  # KServe's Kubeflow overlay
        ("  namespace: team-a\n", "converted", "DRA284"),  # team-a's services alone
    ],
)
def test_a_kserve_preset_is_held_where_other_namespaces_merge_it(
    tmp_path: Path, namespace: str, state: str, code: str
) -> None:
    """KServe's getConfig looks a preset up in the service's namespace, then in its own."""
    path = tmp_path / "preset.yaml"
    path.write_text(KSERVE_PRESET.format(namespace=namespace))
    found = scan(path)
    assert [r["state"] for r in found["inventory"]] == [state]
    assert code in {f["code"] for f in found["findings"]}


@pytest.mark.parametrize(
    ("compute_class", "state", "code"),
    [
        ("Accelerator", "refused", "DRA271"),  # Autopilot: nodes with GKE's device plugin
        ("autopilot-spot", "refused", "DRA271"),
        ("inference-1x8x24", "converted", "DRA285"),  # GKE's DRA sample's custom class
    ],
)
def test_only_autopilot_compute_classes_are_held(
    tmp_path: Path, compute_class: str, state: str, code: str
) -> None:
    """kubernetes-engine-samples autoscaling/custom-compute-classes/dra runs pods with
    claims on a custom compute class over node pools made for DRA."""
    selector = f"      nodeSelector:\n        cloud.google.com/compute-class: {compute_class}\n"
    root = repo(tmp_path, {"job.yaml": gpu_job(selector)}, False)
    found = scan(root)
    assert [r["state"] for r in found["inventory"]] == [state]
    assert code in {f["code"] for f in found["findings"]}


KSERVE_SERVICE = """\
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata:
  name: svc
  namespace: team-a
spec:
{refs}  template:
    containers:
    - name: main
      resources:
        limits:
          nvidia.com/gpu: "2"
"""


@pytest.mark.parametrize(
    ("refs", "named"), [("  baseRefs:\n  - name: gpu-preset\n", True), ("", False)]
)
def test_a_kserve_service_that_merges_presets_is_converted_with_a_warning(
    tmp_path: Path, refs: str, named: bool
) -> None:
    """A preset's nvidia.com/gpu survives KServe's merge (limits merge key by key)."""
    path = tmp_path / "svc.yaml"
    path.write_text(KSERVE_SERVICE.format(refs=refs))
    found = scan(path)
    assert [r["state"] for r in found["inventory"]] == ["converted"]
    notes = [f for f in found["findings"] if f["code"] == "DRA286"]
    assert bool(notes) is named
    if named:
        (note,) = notes
        assert "gpu-preset" in note["message"] and note["line"] == 8  # the baseRefs list


def test_a_single_node_dynamo_component_is_converted(tmp_path: Path) -> None:
    """Dynamo reads the GPU count of a pod template only where the component spans nodes."""
    text = (FIXTURES / "dynamo-multinode.yaml").read_text()
    path = tmp_path / "single.yaml"
    path.write_text(text.replace("nodeCount: 2", "nodeCount: 1"))
    (row,) = scan(path)["inventory"]
    assert (row["podPath"], row["state"]) == ("spec.components[1].podTemplate.spec", "converted")


@pytest.mark.parametrize(
    ("fixture", "reader", "field", "off"),
    [
        (
            "dynamo-gms.yaml",
            "GPU Memory Service",
            "      gpuMemoryService: {}\n",
            "      gpuMemoryService: null\n",
        ),
        ("dynamo-checkpoint.yaml", "checkpointing", "enabled: true", "enabled: false"),
    ],
)
def test_a_single_node_dynamo_component_a_reader_turns_on_is_held(
    tmp_path: Path, fixture: str, reader: str, field: str, off: str
) -> None:
    """Dynamo's GPU Memory Service (experimental.gpuMemoryService) and checkpoint job
    (experimental.checkpoint.enabled) read the main container's nvidia.com/gpu limit of a
    single-node component too: held (DRA273) with the reader named; turned off, converted."""
    found = scan(FIXTURES / fixture)
    (row,) = found["inventory"]
    assert (row["podPath"], row["state"], row["kept"]) == (
        "spec.components[1].podTemplate.spec",
        "refused",
        "DRA273",
    )
    (held,) = [f for f in found["findings"] if f["code"] == "DRA273"]
    assert f"NVIDIA Dynamo {reader}" in held["message"]
    text = (FIXTURES / fixture).read_text()
    assert field in text
    path = tmp_path / fixture
    path.write_text(text.replace(field, off))
    (row,) = scan(path)["inventory"]
    assert row["state"] == "converted"


def test_the_component_rules_are_asked_for_every_kind_they_name() -> None:
    """provisioners imports the component rules only for COMPONENT_KINDS: the two agree."""
    from dra_migrate.convert import component_readers

    assert set(component_readers.COMPONENT_READERS) == provisioners.COMPONENT_KINDS


def test_kserve_namespaces_name_where_kserve_runs(tmp_path: Path) -> None:
    """A preset in the namespace KServe runs in (POD_NAMESPACE) serves every namespace."""
    path = tmp_path / "preset.yaml"
    path.write_text(KSERVE_PRESET.format(namespace="  namespace: ml-serving\n"))
    assert [r["state"] for r in scan(path)["inventory"]] == ["converted"]
    config = tmp_path / ".dra-migrate.yaml"  # found beside the file, as a repository's
    config.write_text("kserveNamespaces: [ml-serving]\n")
    held = scan(path)
    assert [(r["state"], r["kept"]) for r in held["inventory"]] == [("refused", "DRA273")]
