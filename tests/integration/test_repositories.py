"""What whole-repository trials found (issue 7): behaviour on reduced copies of real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import DEPLOYMENT
from tests.conftest import run_cli

# ai-on-eks / kubernetes-engine-samples shapes: Neuron and TPU serving pods
NEURON = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-inf2
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: public.ecr.aws/neuron/pytorch-inference-neuronx:2.1.2
        resources:
          limits:
            aws.amazon.com/neuron: 6
"""

TPU = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: jetstream
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-tpu-topology: 2x4
      containers:
      - name: maxengine
        image: us-docker.pkg.dev/cloud-tpu-images/inference/maxengine-server:v0.2.2
        resources:
          limits:
            google.com/tpu: 8
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def test_summary_names_api_version_mapping_and_next_step(tmp_path: Path) -> None:
    _write(tmp_path, {"infer.yaml": DEPLOYMENT})
    done = run_cli(["convert", "."], tmp_path)
    err = done.stderr.decode()
    assert "writes resource.k8s.io/v1 ResourceClaimTemplates, with the built-in mapping" in err
    assert "next: review the diff, then apply it with dra-migrate convert --write" in err
    (tmp_path / ".dra-migrate.yaml").write_text("target: v1beta2\n")
    done = run_cli(["convert", "--write", "."], tmp_path)
    err = done.stderr.decode()
    assert "wrote resource.k8s.io/v1beta2 ResourceClaimTemplates, with mapping " in err
    assert ".dra-migrate.yaml" in err
    assert "next: review the changes, then check them with dra-migrate validate" in err
    again = run_cli(["convert", "--check", "."], tmp_path)
    assert again.returncode == 0
    assert again.stderr.decode().endswith(
        "unchanged: nothing to do: no GPU extended resource is left to convert.\n"
    )
    assert again.stderr.count(b"\n") == 1  # quiet when all is well: one summary line


def test_summary_lists_files_that_need_manual_action(tmp_path: Path) -> None:
    bad = DEPLOYMENT.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 500m")
    _write(tmp_path, {"ok.yaml": DEPLOYMENT, "bad.yaml": bad})
    done = run_cli(["convert", "."], tmp_path)
    err = done.stderr.decode()
    assert "bad.yaml:14:29: DRA101 error: container 'server' sets" in err
    assert "dra-migrate: 1 file(s) need manual action:" in err
    assert "dra-migrate: manual action: bad.yaml (DRA101)" in err
    assert "manual action: ok.yaml" not in err
    assert err.rstrip().endswith("run dra-migrate convert --check again.")


def test_requests_without_limits_is_an_invalid_manifest_exit_1(tmp_path: Path) -> None:
    bad = DEPLOYMENT.replace("limits:", "requests:")
    _write(tmp_path, {"bad.yaml": bad})
    done = run_cli(["convert", "--write", "."], tmp_path)
    assert done.returncode == 1, done.stderr
    assert b"DRA103 error:" in done.stderr
    assert (tmp_path / "bad.yaml").read_text() == bad  # left untouched
    # unreadable input keeps 123
    (tmp_path / "broken.yaml").write_text("kind: Pod\nspec: [\n  nvidia.com/gpu: 1\n")
    assert run_cli(["convert", "."], tmp_path).returncode == 123


def test_tpu_and_neuron_are_not_counted_as_gpus(tmp_path: Path) -> None:
    _write(tmp_path, {"infer.yaml": DEPLOYMENT, "neuron.yaml": NEURON, "tpu.yaml": TPU})
    done = run_cli(["scan", "."], tmp_path)
    out = done.stdout.decode()
    assert "1 GPU request(s) in 1 file(s) (and 2 request(s) of other resources, " in out
    assert "aws.amazon.com/neuron, google.com/tpu, not counted)" in out
    data = json.loads(run_cli(["scan", "--format", "json", "."], tmp_path).stdout)
    assert data["summary"]["requests"] == 1
    assert data["summary"]["other_requests"] == 2
    assert len(data["inventory"]) == 3  # still listed


@pytest.mark.parametrize(
    ("version", "said"),
    [
        ("1.31", "resource.k8s.io/v1alpha3"),
        ("1.30", "alpha extension of resource.k8s.io/v1alpha2"),
        ("1.27", "classic DRA"),
        ("1.25", "has no Dynamic Resource Allocation"),
    ],
)
def test_old_kube_version_says_what_it_had(tmp_path: Path, version: str, said: str) -> None:
    _write(tmp_path, {"infer.yaml": DEPLOYMENT})
    for extra in ([], ["--target", "v1beta1"]):
        done = run_cli(["convert", "--kube-version", version, *extra, "."], tmp_path)
        assert done.returncode == 2
        err = done.stderr.decode()
        assert said in err, err
        # the verdict first, then the history (issue 40)
        lead = f"error: Kubernetes {version} is not supported: dra-migrate needs Kubernetes 1.32"
        assert lead in err.splitlines()[0], err
        assert err.index("not supported") < err.index(said)
        if version != "1.25":
            assert "not absent" in err and "does not support alpha APIs" in err


def test_helm_unittest_suites_are_skipped_and_tpl_helpers_reported(tmp_path: Path) -> None:
    # production-stack shapes: a chart with a helm-unittest suite and a _helpers.tpl
    _write(
        tmp_path,
        {
            "helm/Chart.yaml": "apiVersion: v2\nname: vllm-stack\nversion: 0.1.0\n",
            "helm/tests/deployment_test.yaml": (
                "suite: test deployment\ntemplates:\n  - deployment-vllm-multi.yaml\n"
                "tests:\n  - it: sets the GPU count\n    asserts:\n      - equal:\n"
                "          path: spec.template.spec.containers[0].resources.limits\n"
                '          value: {"nvidia.com/gpu": "1"}\n'
            ),
            "helm/templates/_helpers.tpl": (
                '{{- define "chart.resources" -}}\nlimits:\n'
                "  {{- if (gt (int $modelSpec.requestGPU) 0) }}\n"
                '  {{- $gpuType := default "nvidia.com/gpu" $modelSpec.requestGPUType }}\n'
                "  {{ $gpuType }}: {{ $modelSpec.requestGPU | quote }}\n"
                "  {{- end }}\n{{- end }}\n"
            ),
        },
    )
    done = run_cli(["convert", "--check", "."], tmp_path)
    err = done.stderr.decode()
    assert "deployment_test.yaml" not in err
    assert "helm/templates/_helpers.tpl:4:" in err and "DRA203 warning:" in err
    assert done.returncode == 0, err  # nothing converting can act on: CI goes green


KUBESPAWNER_VALUES = """\
# JupyterHub config (not a chart's values file): KubeSpawner profiles
hub:
  config:
    KubeSpawner:
      profile_list:
        - display_name: GPU server
          kubespawner_override:
            extra_resource_limits:
              nvidia.com/gpu: "1"
            extra_resource_guarantees:
              nvidia.com/gpu: "1"
"""


def test_kubespawner_profiles_fail_the_check_until_held(tmp_path: Path) -> None:
    """A spawner's GPU limit stays on the device plugin (DRA212, a warning at each key),
    so the check fails on it (DRA401, issue 39: what the plan leaves manual fails the
    check), naming the key, until an ignore holds it there."""
    _write(tmp_path, {"jupyterhub-config.yaml": KUBESPAWNER_VALUES})
    done = run_cli(["convert", "--check", "."], tmp_path)
    err = done.stderr.decode()
    assert err.count("DRA212 warning:") == 2, err
    assert "extra_resource_limits" in err and "extra_resource_guarantees" in err
    assert err.count("DRA401 error:") == 1, err
    assert "DRA401 error: the value at hub.config.KubeSpawner.profile_list[0]" in err, err
    assert done.returncode == 1
    held = KUBESPAWNER_VALUES.replace(
        'nvidia.com/gpu: "1"\n            extra_resource_guarantees',
        'nvidia.com/gpu: "1"  # dra-migrate: ignore[DRA401]\n            extra_resource_guarantees',
    )
    assert held != KUBESPAWNER_VALUES
    _write(tmp_path, {"jupyterhub-config.yaml": held})
    done = run_cli(["convert", "--check", "."], tmp_path)
    assert done.returncode == 0, done.stderr.decode()


CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: workloads.kueue.x-k8s.io
spec:
  group: kueue.x-k8s.io
  names: {kind: Workload, plural: workloads}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          resourceClaims:
            type: array
            items:
              properties:
                resourceClaimTemplateName: {type: string}
"""


def test_dra219_decided_from_parsed_objects_not_bytes(tmp_path: Path) -> None:
    # kueue config/default: a namePrefix over CRDs that merely mention the field
    _write(
        tmp_path,
        {
            "config/default/kustomization.yaml": "namePrefix: kueue-\nresources:\n- crd.yaml\n",
            "config/default/crd.yaml": CRD,
            "infer.yaml": DEPLOYMENT,
        },
    )
    done = run_cli(["convert", "."], tmp_path)
    assert b"DRA219" not in done.stderr, done.stderr.decode()
    # a pod that uses a template under that prefix: the conversion teaches kustomize
    # the reference (DRA290), as it does for every renaming kustomization of the run
    pod = DEPLOYMENT.replace(
        "      containers:",
        "      resourceClaims:\n      - name: gpu\n        resourceClaimTemplateName: t\n"
        "      containers:",
    ).replace("            nvidia.com/gpu: 2\n", "            cpu: 1\n")
    (tmp_path / "config/default/pod.yaml").write_text(pod)
    (tmp_path / "config/default/kustomization.yaml").write_text(
        "namePrefix: kueue-\nresources:\n- crd.yaml\n- pod.yaml\n"
    )
    assert b"DRA290" in run_cli(["convert", "."], tmp_path).stderr


def test_dra219_when_nothing_needs_converting(tmp_path: Path) -> None:
    # a repository already on DRA: no file asks for an extended resource, and the run
    # asks its layout only for the renamings, of the kustomizations that rename
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: infer\nspec:\n"
        "  resourceClaims:\n  - name: accel\n    resourceClaimTemplateName: t\n"
        "  containers:\n  - name: c\n    image: x\n"
        "    resources:\n      claims:\n      - name: accel\n"
    )
    _write(
        tmp_path,
        {
            "base/kustomization.yaml": "resources:\n- pod.yaml\n",
            "base/pod.yaml": pod,
            "prod/kustomization.yaml": "resources:\n- ../base\nnamePrefix: prod-\n",
            "plain/kustomization.yaml": "resources:\n- ../base\n",
        },
    )
    done = run_cli(["scan", "."], tmp_path)
    assert b"prod/kustomization.yaml:3:1: DRA219" in done.stdout, done.stdout.decode()
    assert b"plain/kustomization.yaml" not in done.stdout
    # a hook run (--context .): reported when the renaming kustomization is staged,
    # and not for a staged file it builds (the report is narrowed to the staged files)
    hook = ["convert", "--check", "--context", "."]
    done = run_cli([*hook, "prod/kustomization.yaml"], tmp_path)
    assert b"prod/kustomization.yaml:3:1: DRA219" in done.stderr, done.stderr.decode()
    assert b"DRA219" not in run_cli([*hook, "base/pod.yaml"], tmp_path).stderr


def test_generated_names_are_unique_across_the_run(tmp_path: Path) -> None:
    # aibrix: many files deploy one model name with different requests
    one = DEPLOYMENT
    two = DEPLOYMENT.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 4")
    _write(tmp_path, {"a/deploy.yaml": one, "b/deploy.yaml": two, "c/deploy.yaml": one})
    done = run_cli(["convert", "--write", "."], tmp_path)
    assert done.returncode == 0, done.stderr
    assert b"DRA217" not in done.stderr
    names = {}
    for folder in "abc":
        text = (tmp_path / folder / "deploy.yaml").read_text()
        names[folder] = text.split("resourceClaimTemplateName: ")[1].split("\n")[0]
    assert names["a"] == "infer-gpu" and names["c"] == "infer-gpu"  # same template: shared
    assert names["b"].startswith("infer-gpu-") and names["b"] != names["a"]
    valid = run_cli(["validate", "."], tmp_path)
    assert valid.returncode == 0, valid.stdout.decode()
    assert b"DRA316" not in valid.stdout and b"DRA322" not in valid.stdout


def test_validate_pairs_a_pod_with_its_own_files_template(tmp_path: Path) -> None:
    _write(tmp_path, {"a/deploy.yaml": DEPLOYMENT, "b/deploy.yaml": DEPLOYMENT})
    assert run_cli(["convert", "--write", "."], tmp_path).returncode == 0
    # b's container renamed by hand, its own template updated with it: b is consistent,
    # and a pod of b must be checked against b's template, not a's.
    b = (tmp_path / "b/deploy.yaml").read_text().replace("server", "engine")
    (tmp_path / "b/deploy.yaml").write_text(b)
    valid = run_cli(["validate", "."], tmp_path)
    out = valid.stdout.decode()
    assert "DRA316" not in out, out
    assert "DRA322" in out and "immutable" in out


def test_base_given_alone_knows_the_overlays_of_its_git_work_tree(tmp_path: Path) -> None:
    import shutil
    import subprocess

    from tests.conftest import REPO

    shutil.copytree(REPO / "examples" / "kustomize", tmp_path / "kustomize")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = run_cli(["convert", "kustomize/base"], tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "kustomize/base/deployment.yaml:4:9: DRA222 error:" in err
    assert "kustomize/overlays/prod/kustomization.yaml" in err
    assert done.stdout == b""  # nothing converted


def test_kustomization_facts_kept_between_runs_follow_their_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the layout learns of each kustomization is kept in the cache folder by the
    kustomization's content: a later run answers alike from it, and an edited
    kustomization (its patch removed) is read again, never answered from the old
    facts; a cache file that is not ours is ignored."""
    import shutil
    import subprocess

    from tests.conftest import REPO

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # outside the repository
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "examples" / "kustomize", repo / "kustomize")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    first = run_cli(["convert", "kustomize/base"], repo)
    [kept] = (tmp_path / "cache" / "dra-migrate").glob("layout-*.json")
    again = run_cli(["convert", "kustomize/base"], repo)
    assert again.stderr == first.stderr and again.stdout == first.stdout == b""
    assert b"DRA222" in again.stderr
    overlay = repo / "kustomize" / "overlays" / "prod" / "kustomization.yaml"
    text = overlay.read_text()
    patched = text[: text.index("patches:")] if "patches:" in text else text
    overlay.write_text(patched)
    edited = run_cli(["convert", "kustomize/base"], repo)
    assert b"DRA222" not in edited.stderr, edited.stderr.decode()
    assert b"+kind: ResourceClaimTemplate" in edited.stdout  # the base is converted now
    kept.write_text('{"stamp": "another", "cwd": "/", "facts": {"x": 1}}')
    overlay.write_text(text)
    assert run_cli(["convert", "kustomize/base"], repo).stderr == first.stderr


def test_an_accelerator_the_mapping_converts_is_counted_and_planned(tmp_path: Path) -> None:
    """What convert rewrites, scan counts and the plan stages: the built-in mapping
    converts Intel Gaudi's habana.ai/gaudi to gaudi.intel.com, so a Gaudi Job is a
    request of the inventory and a workload of the pilot wave (it was listed as an
    uncounted other resource while convert rewrote it: a plan with nothing to do); a
    TPU, which no mapping converts, stays uncounted."""
    gaudi = DEPLOYMENT.replace("nvidia.com/gpu", "habana.ai/gaudi").replace("infer", "tune")
    _write(tmp_path, {"gaudi.yaml": gaudi, "tpu.yaml": TPU})
    data = json.loads(run_cli(["scan", "--format", "json", "."], tmp_path).stdout)
    assert (data["summary"]["requests"], data["summary"]["other_requests"]) == (1, 1)
    report = json.loads(run_cli(["report", "--format", "json", "."], tmp_path).stdout)
    stages = report["plan"]["stages"]
    [row] = stages["inventory"]["workloads"]
    assert [c["resource"] for c in row["containers"]] == ["habana.ai/gaudi"]
    assert (row["name"], row["gpusPerPod"], row["strategy"]) == ("tune", 2, "rewrite")
    assert stages["pilot"]["workloads"] == ["Deployment/ml/tune (spec.template.spec)"]
    assert run_cli(["convert", "--check", "."], tmp_path).returncode == 1  # it is rewritten
