"""Suppressions: ignore comments and config entries silence findings, never lose them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate.manifests import compose, sources
from dra_migrate.pipeline import suppress
from tests.conftest import run_cli

# DRA208 (a GPU product node selector, a note) at line 9; the GPU request at line 17
PRODUCT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
  namespace: ml
spec:
  template:
    spec:
      nodeSelector:
        kubernetes.io/os: linux
        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
      containers:
      - name: server
        image: vllm/vllm-openai:v0.6.0
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def _json(args: list[str], cwd: Path) -> dict[str, object]:
    done = run_cli([*args, "--format", "json"], cwd)
    assert b"Traceback" not in done.stderr
    return json.loads(done.stdout)


def _codes(data: dict[str, object], key: str = "findings") -> list[str]:
    return [f["code"] for f in data[key]]  # type: ignore[attr-defined,index]


def test_comment_on_the_first_line_silences_the_object(tmp_path: Path) -> None:
    (tmp_path / "chat.yaml").write_text(
        PRODUCT.replace("kind: Deployment", "kind: Deployment  # dra-migrate: ignore[DRA208]")
    )
    data = _json(["scan", "."], tmp_path)
    assert "DRA208" not in _codes(data)
    assert _codes(data, "suppressed") == ["DRA208"]
    [entry] = data["suppressed"]  # type: ignore[misc]
    assert entry["suppressedBy"] == "inline" and entry["ignore"] == "chat.yaml:2:19"
    assert data["summary"]["suppressed"] == 1  # type: ignore[index]
    text = run_cli(["scan", "."], tmp_path).stdout.decode()
    assert "1 suppressed" in text and "DRA208" not in text
    shown = run_cli(["scan", "--show-suppressed", "."], tmp_path).stdout.decode()
    assert "chat.yaml:9:7: DRA208" in shown and "[suppressed by chat.yaml:2:19]" in shown


def test_comment_lines_above_the_object_and_on_the_request_line(tmp_path: Path) -> None:
    above = "# dra-migrate: ignore[DRA208]\n# the product selector stays\n" + PRODUCT
    (tmp_path / "a.yaml").write_text(above)
    on_request = PRODUCT.replace("gpu: 1\n", "gpu: 1  # dra-migrate: ignore[DRA208]\n")
    (tmp_path / "b.yaml").write_text(on_request)
    data = _json(["convert", "."], tmp_path)
    assert _codes(data) == ["DRA224", "DRA224"]  # the toleration written, not silenced
    assert _codes(data, "suppressed") == ["DRA208", "DRA208"]


def test_comment_on_another_line_covers_only_that_line(tmp_path: Path) -> None:
    text = PRODUCT.replace(
        "kubernetes.io/os: linux", "kubernetes.io/os: linux  # dra-migrate: ignore"
    )
    (tmp_path / "chat.yaml").write_text(text)
    data = _json(["convert", "."], tmp_path)
    # the finding is on line 9, the comment on line 10: nothing silenced, a stale note
    assert _codes(data) == ["DRA208", "DRA224", "DRA402"]


def test_a_marker_inside_a_string_is_not_a_comment(tmp_path: Path) -> None:
    text = PRODUCT.replace(
        "      containers:\n",
        "      containers:\n      - name: note\n        image: busybox\n"
        '        args: ["echo", "# dra-migrate: ignore"]\n',
    ).replace(
        "kind: Deployment",
        "kind: Deployment\n# block scalar below\nx: |\n  # dra-migrate: ignore\n",
        1,
    )
    (tmp_path / "chat.yaml").write_text(text)
    data = _json(["convert", "."], tmp_path)
    assert "DRA208" in _codes(data) and not data["suppressed"]


def test_ignore_of_dra401_keeps_a_workload_on_the_device_plugin(tmp_path: Path) -> None:
    kept = PRODUCT.replace("name: chat", "name: legacy").replace(
        "apiVersion: apps/v1", "apiVersion: apps/v1  # dra-migrate: ignore[DRA401,DRA208]", 1
    )
    both = tmp_path / "both.yaml"
    both.write_text(kept + "---\n" + PRODUCT)
    check = run_cli(["convert", "--check", "."], tmp_path)
    assert check.returncode == 1  # chat is still to migrate
    assert b"both.yaml:17:" not in check.stderr  # legacy's request is not reported
    run_cli(["convert", "--write", "."], tmp_path)
    written = both.read_text()
    assert written.startswith(kept)  # legacy untouched
    assert "name: chat-gpu" in written and written.count("nvidia.com/gpu: 1") == 1
    again = run_cli(["convert", "--check", "."], tmp_path)
    assert again.returncode == 0, again.stderr
    assert b"DRA402" not in again.stderr  # the ignore is in use
    scan = _json(["scan", "."], tmp_path)
    assert [i["name"] for i in scan["inventory"]] == ["legacy"]  # type: ignore[index]


def test_config_entries_silence_by_path_and_code(tmp_path: Path) -> None:
    (tmp_path / ".dra-migrate.yaml").write_text(
        "version: 1\n"
        "ignore:\n"
        "  - example.com/label-*\n"  # a resource-name pattern, as before
        "  - path: apps/**\n"
        "    codes: [DRA208]\n"
        "    reason: the product selector picks the node pool\n"
        "  - path: batch/*.yaml\n"
        "    codes: [DRA205]\n"
    )
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "chat.yaml").write_text(PRODUCT)
    (tmp_path / "batch").mkdir()
    (tmp_path / "batch" / "job.yaml").write_text(PRODUCT.replace("name: chat", "name: job"))
    data = _json(["convert", "."], tmp_path)
    assert _codes(data, "suppressed") == ["DRA208"]
    assert data["suppressed"][0]["ignore"] == ".dra-migrate.yaml:4:5"  # type: ignore[index]
    # the batch entry matched a file and silenced nothing: stale, at its line
    stale = [f for f in data["findings"] if f["code"] == "DRA403"]  # type: ignore[attr-defined]
    assert [(f["path"], f["line"], f["col"]) for f in stale] == [(".dra-migrate.yaml", 7, 5)]
    # a run that never looks at batch/ cannot tell: no note
    only_apps = _json(["convert", "apps"], tmp_path)
    assert "DRA403" not in _codes(only_apps)


def test_config_entry_of_all_codes_keeps_files_as_they_are(tmp_path: Path) -> None:
    (tmp_path / ".dra-migrate.yaml").write_text("version: 1\nignore:\n  - path: vendor/**\n")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "chat.yaml").write_text(PRODUCT)
    done = run_cli(["convert", "--check", "."], tmp_path)
    assert done.returncode == 0, done.stderr
    assert b"DRA403" not in done.stderr


def test_stale_comment_after_the_migration_is_a_note(tmp_path: Path) -> None:
    path = tmp_path / "chat.yaml"
    path.write_text(
        PRODUCT.replace("kind: Deployment", "kind: Deployment  # dra-migrate: ignore[DRA205]")
    )
    done = run_cli(["convert", "--write", "."], tmp_path)
    assert b"chat.yaml:2:19: DRA402" in done.stderr
    assert "nvidia.com/gpu: 1" not in path.read_text()
    # the file no longer mentions a GPU: it is still read for its ignore comment
    again = run_cli(["convert", "."], tmp_path)
    assert b"chat.yaml:2:19: DRA402" in again.stderr and again.returncode == 0
    # scan cannot tell a stale ignore (it plans, it does not check): no note
    assert b"DRA402" not in run_cli(["scan", "."], tmp_path).stdout


def test_unknown_codes_are_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "chat.yaml"
    path.write_text(
        PRODUCT.replace("kind: Deployment", "kind: Deployment  # dra-migrate: ignore[DRA2O8]")
    )
    data = _json(["convert", "."], tmp_path)
    assert "DRA404" in _codes(data) and "DRA208" in _codes(data)
    (tmp_path / ".dra-migrate.yaml").write_text(
        "version: 1\nignore:\n  - path: '*.yaml'\n    codes: [DRA999]\n"
    )
    assert "DRA404" in _codes(_json(["convert", "."], tmp_path))
    bad = tmp_path / ".dra-migrate.yaml"
    bad.write_text("version: 1\nignore:\n  - path: '*.yaml'\n    codes: [gpu]\n")
    done = run_cli(["convert", "."], tmp_path)
    assert done.returncode == 2 and b".dra-migrate.yaml:4:" in done.stderr
    assert b"does not match" in done.stderr


def test_sarif_and_github_count_suppressed(tmp_path: Path) -> None:
    (tmp_path / "chat.yaml").write_text(
        PRODUCT.replace("kind: Deployment", "kind: Deployment  # dra-migrate: ignore[DRA208]")
    )
    sarif = json.loads(run_cli(["convert", "--format", "sarif", "."], tmp_path).stdout)
    [result] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "DRA208"]
    assert result["suppressions"][0]["kind"] == "inSource"
    github = run_cli(["convert", "--format", "github", "."], tmp_path).stdout.decode()
    assert "DRA208" not in github and github.rstrip().endswith("1 suppressed")
    md = run_cli(["convert", "--format", "markdown", "."], tmp_path).stdout.decode()
    assert "1 suppressed" in md.split("<details")[0]


# --- the invariant: every finding is either reported or suppressed -------------------

LINES = PRODUCT.splitlines()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    where=st.sets(st.integers(min_value=1, max_value=len(LINES)), max_size=4),
    codes=st.sampled_from(["", "[DRA208]", "[DRA401]", "[DRA208,DRA401]", "[DRA205]"]),
)
def test_nothing_is_lost(where: set[int], codes: str) -> None:
    from dra_migrate.convert.mapping import load_config
    from dra_migrate.report.findings import finding
    from dra_migrate.report.model import FileResult, Report, Status

    lines = [
        f"{line}  # dra-migrate: ignore{codes}" if i in where and not line.endswith(":") else line
        for i, line in enumerate(LINES, start=1)
    ]
    text = "\n".join(lines) + "\n"
    findings = [
        finding("DRA208", "x.yaml", 11, 9, "product"),
        finding("DRA401", "x.yaml", 17, 13, "to migrate"),
        finding("DRA205", "x.yaml", 3, 1, "shared"),
    ]
    result = FileResult("x.yaml", Status.CHANGED, list(findings), original=text.encode())
    report = Report([result])
    suppress.apply(report, load_config(None), "convert", check=True)
    silenced = [s.finding for s in report.suppressed]
    kept = [f for f in result.findings if f.code in ("DRA208", "DRA401", "DRA205")]
    assert sorted(silenced + kept) == sorted(findings)
    assert all(f.code in ("DRA208", "DRA401", "DRA205", "DRA402") for f in result.findings)
    docs = compose.parse(sources.decode("x.yaml", text.encode()))
    assert len(suppress.markers(text, docs)) == len(
        [i for i in where if not LINES[i - 1].endswith(":")]
    )


@pytest.mark.parametrize("command", ["convert", "validate"])
def test_reportable_codes_per_command(command: str) -> None:
    codes = suppress.reportable(command)
    assert ("DRA330" in codes) == (command == "validate")
    assert ("DRA201" in codes) == (command == "convert")
    assert "DRA401" in suppress.reportable("convert", check=True)


def test_json_with_suppressed_findings_matches_the_published_schema(tmp_path: Path) -> None:
    import jsonschema

    from tests.conftest import REPO

    schema = json.loads((REPO / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
    (tmp_path / "chat.yaml").write_text(
        PRODUCT.replace("kind: Deployment", "kind: Deployment  # dra-migrate: ignore[DRA208]")
    )
    for command in ("scan", "convert", "validate"):
        data = _json([command, "."], tmp_path)
        jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    assert _json(["convert", "."], tmp_path)["suppressed"]


# --- what an ignore holds is counted and named (issue 27) -----------------------------

BAD_REQUESTS = """\
apiVersion: v1
kind: Pod  # dra-migrate: ignore[DRA103]
metadata:
  name: bad
spec:
  containers:
  - name: c
    image: registry.example.com/cuda:12
    resources:
      requests:
        nvidia.com/gpu: 2
"""


def _held_deployment(tmp_path: Path, how: str) -> None:
    if how == "inline":
        text = PRODUCT.replace(
            "kind: Deployment", "kind: Deployment  # dra-migrate: ignore[DRA401]"
        )
    else:
        text = PRODUCT
        (tmp_path / ".dra-migrate.yaml").write_text(
            "version: 1\nignore:\n  - path: chat.yaml\n    codes: [DRA401]\n"
        )
    (tmp_path / "chat.yaml").write_text(text)


@pytest.mark.parametrize("how", ["inline", "config"])
def test_an_ignore_of_dra401_is_counted_in_every_format_and_the_workload_named_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    from tests.helpers.cli_runner import invoke

    _held_deployment(tmp_path, how)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--check", "--format", "json", "."])
    data = json.loads(done.stdout)
    assert done.exit_code == 0
    assert data["summary"]["suppressed"] == 1
    [entry] = data["suppressed"]
    assert entry["code"] == "DRA401" and entry["line"] == 17
    assert "an ignore holds it there" in entry["message"]
    text = invoke(["convert", "--check", "--show-suppressed", "."])
    assert "chat.yaml:17:13: DRA401 error:" in text.stderr and "[suppressed by " in text.stderr
    assert "1 finding(s) suppressed" in text.stderr
    assert "held: chat.yaml: Deployment ml/chat (DRA401)" in text.stderr
    assert "nothing to do" not in text.stderr and "held on the device plugin" in text.stderr
    sarif = json.loads(invoke(["convert", "--check", "--format", "sarif", "."]).stdout)
    [result] = sarif["runs"][0]["results"]
    assert result["ruleId"] == "DRA401" and result["suppressions"]
    junit = invoke(["convert", "--check", "--format", "junit", "--show-suppressed", "."]).stdout
    assert 'failures="0"' in junit and "suppressed: chat.yaml:17:13: DRA401" in junit
    assert "1 suppressed" in junit
    github = invoke(["convert", "--check", "--format", "github", "--show-suppressed", "."])
    assert "::error" not in github.stdout and github.stdout.count("DRA401") == 1
    assert github.stdout.rstrip().endswith("1 suppressed") and "suppressed by" not in github.stderr
    md = invoke(["convert", "--check", "--format", "markdown", "."]).stdout
    assert (
        "1 suppressed" in md and "held on the device plugin by an ignore: `chat.yaml`" in md.lower()
    )
    # without --check nothing is reported, and the summary still says what is held
    plain = invoke(["convert", "."])
    assert "held: chat.yaml: Deployment ml/chat" in plain.stderr
    assert "nothing to do" not in plain.stderr


def test_a_suppressed_blocking_finding_holds_the_file_and_no_list_is_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers.cli_runner import invoke

    (tmp_path / "bad-requests.yaml").write_text(BAD_REQUESTS)
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "--check", "--show-suppressed", "."])
    assert "()" not in done.stderr
    assert "manual action" not in done.stderr
    assert "bad-requests.yaml:11:9: DRA103 error:" in done.stderr  # listed, as suppressed
    assert "1 held by an ignore" in done.stderr
    assert "held: bad-requests.yaml: Pod bad (DRA103)" in done.stderr
    assert done.exit_code == 0
    data = json.loads(invoke(["convert", "--check", "--format", "json", "."]).stdout)
    assert data["summary"]["suppressed"] == 1 and data["suppressed"][0]["code"] == "DRA103"


def test_a_file_that_cannot_be_processed_names_its_silenced_codes(tmp_path: Path) -> None:
    from dra_migrate.report.findings import finding
    from dra_migrate.report.model import FileResult, Report, Status, Suppressed
    from dra_migrate.report.text_format import convert_summary

    broken = finding("DRA004", "broken.yaml", 3, 1, "malformed YAML")
    report = Report([FileResult("broken.yaml", Status.FAILED)])
    report.suppressed.append(Suppressed(broken, "config", ".dra-migrate.yaml:3:5"))
    assert report.manual() == [("broken.yaml", ["DRA004 suppressed"])]
    assert "manual action: broken.yaml (DRA004 suppressed)" in convert_summary(
        report, False, True, None
    )
    report.files[0].status = Status.REPORTED  # a file of nothing at all: no parentheses
    report.suppressed.clear()
    assert "manual action: broken.yaml\n" in convert_summary(report, False, True, None)
