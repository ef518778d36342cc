"""The formats read by CI systems: GitHub annotations, SARIF, JUnit, Markdown, --output.

Whatever the format, the exit status is the one of the text view: the tests
run each command in every format and compare.
"""

from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dra_migrate.report import FORMATS
from dra_migrate.report.findings import CODES
from tests.cli.test_cli import DEPLOYMENT
from tests.conftest import SHARED, run_cli

# a count of 0.5 is an error (DRA101) that blocks the file
BROKEN = DEPLOYMENT.replace("name: infer", "name: half").replace("gpu: 2", "gpu: 0.5")

PATCH_KUSTOMIZATION = """\
resources:
- ../../base
patches:
- path: gpu-patch.yaml
"""

# a patch that adds a container with GPUs: it cannot be converted with its base (DRA202)
PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  template:
    spec:
      containers:
      - name: warmup
        resources:
          limits:
            nvidia.com/gpu: 4
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository: paths in annotations are relative to its root."""
    files = {
        "deploy/base/infer.yaml": DEPLOYMENT,
        "deploy/base/kustomization.yaml": "resources:\n- infer.yaml\n- trainer.yaml\n",
        "deploy/overlays/prod/kustomization.yaml": PATCH_KUSTOMIZATION,
        "deploy/base/trainer.yaml": DEPLOYMENT.replace("name: infer", "name: trainer").replace(
            "nvidia.com/gpu: 2", "cpu: 2"
        ),
        "deploy/overlays/prod/gpu-patch.yaml": PATCH,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path


COMMANDS = [["scan"], ["convert"], ["convert", "--check"], ["validate"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_exit_status_is_the_same_in_every_format(repo: Path, command: list[str]) -> None:
    (repo / "deploy" / "base" / "half.yaml").write_text(BROKEN)
    expected = run_cli([*command, "deploy"], repo).returncode
    assert expected in (0, 1, 123)
    for fmt in FORMATS:
        done = run_cli([*command, "--format", fmt, "deploy"], repo)
        assert done.returncode == expected, (fmt, done.stderr.decode())
        assert b"Traceback" not in done.stderr


def test_github_annotations_point_at_lines_from_the_repository_root(repo: Path) -> None:
    # run from a subfolder, naming a folder relative to it
    done = run_cli(["convert", "--check", "--format", "github", "overlays"], repo / "deploy")
    assert done.returncode == 1
    lines = done.stdout.decode().splitlines()
    assert (
        "::error file=deploy/overlays/prod/gpu-patch.yaml,line=12,col=13,"
        "title=DRA202 kustomize patch sets GPU resources and cannot be converted with its base::"
    ) in "\n".join(lines)
    assert lines[-1].startswith("dra-migrate convert: ")


def test_github_escapes_newlines_and_separators() -> None:
    from dra_migrate.report.findings import finding
    from dra_migrate.report.github_format import annotation

    f = finding("DRA104", "a,b:c.yaml", 3, 4, "first\nsecond 100%")
    assert annotation(f) == (
        "::warning file=a%2Cb%3Ac.yaml,line=3,col=4,"
        "title=DRA104 extended resource not in the mapping::first%0Asecond 100%25"
    )


def _sarif_schema() -> dict[str, object]:
    path = SHARED / "schemas-ext" / "sarif-schema-2.1.0.json"
    if not path.is_file():
        pytest.skip(f"{path} not found: the official SARIF schema lives beside the checkout")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_sarif_is_valid_against_the_official_schema(repo: Path, command: list[str]) -> None:
    import jsonschema

    schema = _sarif_schema()
    (repo / "deploy" / "base" / "half.yaml").write_text(BROKEN)
    done = run_cli([*command, "--format", "sarif", "deploy"], repo)
    sarif = json.loads(done.stdout)
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(sarif)]
    assert not errors, errors[:5]


def test_sarif_rules_results_and_fingerprints(repo: Path) -> None:
    done = run_cli(["convert", "--format", "sarif", "deploy"], repo)
    [run] = json.loads(done.stdout)["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "dra-migrate" and driver["version"]
    rules = driver["rules"]
    # only the rules the results use, each once, in code order (not all of CODES)
    used = {r["ruleId"] for r in run["results"]}
    assert [r["id"] for r in rules] == sorted(used) and len(rules) < len(CODES)
    dra202 = rules[[r["id"] for r in rules].index("DRA202")]
    assert dra202["helpUri"].endswith("docs/findings.md#dra202")
    assert "kustomize" in dra202["help"]["text"] and dra202["help"]["markdown"]
    [result] = [r for r in run["results"] if r["ruleId"] == "DRA202"]
    assert rules[result["ruleIndex"]]["id"] == "DRA202"
    assert result["level"] == "error"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "deploy/overlays/prod/gpu-patch.yaml"
    assert location["region"] == {"startLine": 12, "startColumn": 13}

    # lines move above the finding: the fingerprint stays, the region follows
    patch = repo / "deploy" / "overlays" / "prod" / "gpu-patch.yaml"
    patch.write_text("# the GPU count of production\n\n" + PATCH)
    again = json.loads(run_cli(["convert", "--format", "sarif", "deploy"], repo).stdout)
    [moved] = [r for r in again["runs"][0]["results"] if r["ruleId"] == "DRA202"]
    assert moved["partialFingerprints"] == result["partialFingerprints"]
    assert moved["locations"][0]["physicalLocation"]["region"]["startLine"] == 14


def test_junit_has_a_case_per_file_and_a_failure_per_error(repo: Path) -> None:
    (repo / "deploy" / "base" / "half.yaml").write_text(BROKEN)
    done = run_cli(["convert", "--format", "junit", "deploy"], repo)
    root = ET.fromstring(done.stdout)
    suite = root.find("testsuite")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert "deploy/base/infer.yaml" in cases
    assert cases["deploy/base/infer.yaml"].find("failure") is None
    [failure] = cases["deploy/base/half.yaml"].findall("failure")
    assert failure.get("type") == "DRA101"
    assert suite.get("tests") == str(len(cases))
    assert suite.get("failures") == "2"  # DRA101 and the kustomize patch (DRA202)


def test_markdown_puts_the_summary_first_and_folds_the_details(repo: Path) -> None:
    out = run_cli(["convert", "--format", "markdown", "deploy"], repo).stdout.decode()
    head, _, rest = out.partition("<details")
    assert head.startswith("### :x: dra-migrate convert\n")
    assert "**1 error(s)**" in head
    assert "| [DRA202](" in head  # the count per code is part of the summary
    assert "<summary>Findings (2)</summary>" in rest  # DRA202, and the toleration written
    assert "`deploy/overlays/prod/gpu-patch.yaml:12:13`" in rest


def test_output_writes_the_format_and_the_terminal_gets_text(repo: Path) -> None:
    (repo / "out").mkdir()  # the folder must exist: no folder is made for --output
    report = repo / "out" / "report.sarif"
    done = run_cli(["validate", "--format", "sarif", "--output", str(report), "deploy"], repo)
    assert json.loads(report.read_text())["version"] == "2.1.0"
    assert "dra-migrate validate:" in done.stdout.decode()  # the text view
    conv = run_cli(["convert", "--format", "junit", "--output", "junit.xml", "deploy"], repo)
    assert conv.stdout.startswith(b"--- a/deploy/base/infer.yaml")  # the diff, as without
    assert ET.parse(repo / "junit.xml").getroot().tag == "testsuites"
    assert conv.returncode == run_cli(["convert", "deploy"], repo).returncode


def test_report_on_stdout_cannot_share_it_with_the_diff(repo: Path) -> None:
    done = run_cli(["convert", "--diff", "--format", "sarif", "deploy"], repo)
    assert done.returncode == 2
    assert b"--output FILE" in done.stderr
    done = run_cli(["convert", "--format", "github", "-"], repo, stdin=DEPLOYMENT.encode())
    assert done.returncode == 2


def test_unwritable_output_is_a_usage_error(repo: Path) -> None:
    (repo / "blocker").write_text("a file, not a folder\n")
    done = run_cli(["scan", "--format", "json", "--output", "blocker/r.json", "deploy"], repo)
    assert done.returncode == 2
    assert b"--output/-o: folder blocker does not exist" in done.stderr
    assert b"Traceback" not in done.stderr
    # a folder it cannot write into: the reason, with the option
    (repo / "locked").mkdir(mode=0o500)
    done = run_cli(["scan", "--format", "json", "--output", "locked/r.json", "deploy"], repo)
    if os.geteuid() != 0:  # root writes anywhere
        assert done.returncode == 2
        assert b"--output locked/r.json" in done.stderr and b"Traceback" not in done.stderr
