"""Hostile input (issue 6): generated YAML means what was intended, nothing injected,
every path and name printed safely, counts bounded, diffs linear.

Each test holds the smallest input that shows the problem it guards against.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.convert import writer
from dra_migrate.convert.edit import Style, render_document
from dra_migrate.manifests import compose, sources, trees
from dra_migrate.report.findings import finding
from tests.conftest import REPO
from tests.helpers.cli_runner import invoke
from tests.helpers.invariants import gpu_pod


def pod(name: str = "p", namespace: str = "ml", count: str = "1") -> str:
    return gpu_pod(name, namespace, count)


def convert(tmp_path: Path, *args: str, stdin: str | None = None) -> Any:
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        return invoke(["convert", *args], input=stdin)
    finally:
        os.chdir(old)


def loaded(text: str) -> list[Any]:
    return [trees.to_data(d.root) for d in compose.parse(sources.decode("x", text.encode()))]


# --- nothing injected into generated text ---------------------------------------------


def test_name_with_line_break_and_document_marker_adds_no_object(tmp_path: Path) -> None:
    name = '"x\\n---\\napiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: evil"'
    result = convert(tmp_path, "-", stdin=pod(name=name))
    assert result.exit_code == 1  # an invalid manifest (exit 123 is for unreadable input)
    assert result.stdout == ""  # nothing reaches kubectl apply
    assert "DRA109" in result.stderr
    assert "\nkind: ConfigMap" not in result.stderr  # the name is escaped in the finding


def test_namespace_with_line_break_is_refused_not_folded(tmp_path: Path) -> None:
    result = convert(tmp_path, "-", stdin=pod(namespace='"team\\nalpha"'))
    assert result.exit_code == 1
    assert "DRA109" in result.stderr and result.stdout == ""


def test_placeholder_namespace_is_kept(tmp_path: Path) -> None:
    result = convert(tmp_path, "-", stdin=pod(namespace='"${NAMESPACE}"'))
    assert result.exit_code == 0, result.stderr
    template = loaded(result.stdout)[1]
    assert template["metadata"]["namespace"] == "${NAMESPACE}"


def test_generated_comment_is_one_line() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
    rendered = render_document(obj, "GPUs of Job x\n---\nkind: Secret\u202e", Style())
    assert rendered.splitlines()[0] == "# GPUs of Job x\\n---\\nkind: Secret\\u202e"
    assert loaded(rendered) == [obj]


def test_multi_line_selector_from_the_config_survives(tmp_path: Path) -> None:
    selector = (
        "// only big ones\n"
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0\n"
    )
    (tmp_path / "cfg.yaml").write_text(
        "resources:\n"
        "  - name: nvidia.com/gpu\n"
        "    deviceClass: gpu.nvidia.com\n"
        "    selectors:\n"
        "      - |\n"
        "        // only big ones\n"
        "        device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0\n"
    )
    result = convert(tmp_path, "--config", "cfg.yaml", "-", stdin=pod())
    assert result.exit_code == 0, result.stderr
    template = loaded(result.stdout)[1]
    request = template["spec"]["spec"]["devices"]["requests"][0]
    assert request["exactly"]["selectors"] == [{"cel": {"expression": selector}}]
    assert "expression: |" in result.stdout  # readable: a literal block


_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",)),  # surrogates are not text
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(value=_TEXT, key=_TEXT.filter(bool), quote=st.sampled_from(["'", '"']))
def test_every_generated_scalar_loads_back(value: str, key: str, quote: str) -> None:
    obj = {"metadata": {key: value, "list": [value, {"k": value}]}}
    for style in (Style(quote=quote), Style(quote=quote, quote_all=True, quote_keys=True)):
        text = render_document(obj, f"comment {value}", style)
        assert loaded(text) == [obj], text


# --- names that are not DNS subdomains --------------------------------------------------


@pytest.mark.parametrize(
    ("name", "template"),
    [("a..b", "a.b-gpu"), ("a.-b", "a.b-gpu"), ('"{{workflow.name}}"', "{{workflow.name}}-gpu")],
)
def test_odd_names_are_converted_not_internal_errors(
    tmp_path: Path, name: str, template: str
) -> None:
    result = convert(tmp_path, "-", stdin=pod(name=name))
    assert result.exit_code == 0, result.stderr
    assert "DRA900" not in result.stderr and "DRA901" not in result.stderr
    assert loaded(result.stdout)[1]["metadata"]["name"] == template


# --- counts --------------------------------------------------------------------------------


@pytest.mark.parametrize("count", ["999999999999999999999", "1e400", "9223372036854775808"])
def test_count_above_int64_is_refused(tmp_path: Path, count: str) -> None:
    result = convert(tmp_path, "-", stdin=pod(count=count))
    assert result.exit_code == 1
    assert "-:12:25: DRA108" in result.stderr
    assert result.stdout == ""


def test_largest_int64_count_is_converted(tmp_path: Path) -> None:
    result = convert(tmp_path, "-", stdin=pod(count="9223372036854775807"))
    assert result.exit_code == 0, result.stderr


def test_validate_refuses_count_above_int64(tmp_path: Path) -> None:
    template = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: t
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 999999999999999999999
"""
    (tmp_path / "t.yaml").write_text(template)
    result = invoke(["validate", str(tmp_path / "t.yaml")])
    assert result.exit_code == 1
    assert "t.yaml:12:18: DRA312" in result.stdout
    assert "int64" in result.stdout


# --- printed paths and names cannot forge findings -----------------------------------


@pytest.mark.parametrize(
    "path",
    ["bad:3:1: DRA999 x.yaml", "x\nbad:3:1: DRA999 y.yaml", "\u202egpu.yaml", "a\x1b[2Jb.yaml"],
)
def test_finding_lines_escape_paths(path: str) -> None:
    line = finding("DRA001", path, 1, 1, "cannot read file: name\nDRA999 forged").format()
    assert "\n" not in line and "\x1b" not in line and "\u202e" not in line
    assert not line.startswith("bad:3:1: DRA999")
    assert line.count(": DRA") == 1


def test_ordinary_paths_are_printed_as_they_are() -> None:
    assert (
        finding("DRA001", "apps/über-ü.yaml", 2, 3, "m")
        .format()
        .startswith("apps/über-ü.yaml:2:3: DRA001")
    )


def test_diff_header_quotes_a_forged_name() -> None:
    diff = writer.unified_diff("x\n+++ b/evil.yaml", b"a: 1\n", b"a: 2\n")
    assert diff.splitlines()[0] == '--- "a/x\\n+++ b/evil.yaml"'


# --- diffs stay linear ------------------------------------------------------------------------


def test_many_documents_diff_through_the_regions(tmp_path: Path) -> None:
    docs = [pod(name=f"p{i}") for i in range(300)]
    path = tmp_path / "many.yaml"
    path.write_text("---\n".join(docs))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    result = convert(tmp_path, "many.yaml")
    assert result.exit_code == 0, result.stderr
    (tmp_path / "fix.patch").write_text(result.stdout)
    applied = subprocess.run(
        ["git", "apply", "fix.patch"], cwd=tmp_path, capture_output=True, text=True
    )
    assert applied.returncode == 0, applied.stderr
    again = convert(tmp_path, "--check", "many.yaml")
    assert again.exit_code == 0, again.stderr  # the patched file is fully converted


def _applies(tmp_path: Path, old: bytes, new: bytes, diff: str) -> bool:
    (tmp_path / "f").write_bytes(old)
    (tmp_path / "f.patch").write_text(diff)
    done = subprocess.run(["git", "apply", "f.patch"], cwd=tmp_path, capture_output=True)
    return done.returncode == 0 and (tmp_path / "f").read_bytes() == new


def test_region_diff_applies(tmp_path: Path) -> None:
    old = b"".join(b"a: %d\nb: x\n" % i for i in range(50))
    new = old.replace(b"a: 7\n", b"a: 7\nc: 1\n").replace(b"a: 40\nb: x\n", b"a: 40\n")
    regions = [(14, 15, 14, 16), (80, 82, 81, 82)]
    assert writer._opcodes(writer._lines(old), writer._lines(new), regions) is not None
    diff = writer.unified_diff("f", old, new, regions)
    assert diff.count("@@ -") == 2
    assert _applies(tmp_path, old, new, diff)


def test_wrong_regions_fall_back_to_the_whole_file() -> None:
    old, new = b"a\nb\nc\n", b"a\nB\nc\n"
    assert writer._opcodes(writer._lines(old), writer._lines(new), [(0, 1, 0, 1)]) is None
    assert writer.unified_diff("f", old, new, [(0, 1, 0, 1)]) == writer.unified_diff("f", old, new)


def test_line_separators_inside_a_line_are_not_line_ends() -> None:
    diff = writer.unified_diff("f", "a: \u2028x\nb: 1\n".encode(), "a: \u2028x\nb: 2\n".encode())
    assert "@@ -1,2 +1,2 @@" in diff


# --- only regular files, of bounded size; one bad path never stops the run ------------------


def scan(tmp_path: Path, *args: str) -> Any:
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        return invoke(["scan", "--jobs", "1", *args])
    finally:
        os.chdir(old)


def test_special_files_and_link_loops_are_findings_and_the_rest_is_processed(
    tmp_path: Path,
) -> None:
    (tmp_path / "good.yaml").write_text(pod())
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    result = scan(tmp_path, ".")
    assert result.exit_code == 123, result.output
    assert "fifo.yaml:1:1: DRA010" in result.stdout
    assert "zero.yaml:1:1: DRA010" in result.stdout
    assert "loop.yaml:1:1: DRA001" in result.stdout
    assert "good.yaml:12:9" in result.stdout  # still inventoried


def test_file_name_that_is_not_utf8_is_processed(tmp_path: Path) -> None:
    name = os.fsdecode(b"bad\xff.yaml")
    (tmp_path / name).write_text(pod())
    result = scan(tmp_path, ".", "--exclude", "vendor/")
    assert result.exit_code == 0, result.output
    assert '"bad\\xff.yaml":12:9' in result.stdout


def test_size_limit_from_option_and_config(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(pod())
    assert "DRA011" in scan(tmp_path, "--max-file-size", "100", "p.yaml").stdout
    assert scan(tmp_path, "--max-file-size", "1Ki", "p.yaml").exit_code == 0
    (tmp_path / "cfg.yaml").write_text("maxFileSize: 100\n")
    assert "DRA011" in scan(tmp_path, "--config", "cfg.yaml", "p.yaml").stdout
    bad = scan(tmp_path, "--max-file-size", "lots", "p.yaml")
    assert bad.exit_code == 2 and "--max-file-size" in bad.stderr


def test_stdin_past_the_limit_is_refused(tmp_path: Path) -> None:
    result = convert(tmp_path, "--max-file-size", "100", "-", stdin=pod())
    assert result.exit_code == 123 and result.stdout == ""
    assert "-:1:1: DRA011" in result.stderr


def _full_stdout(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    import sys

    with open("/dev/full", "wb") as full:
        return subprocess.run(
            [sys.executable, "-m", "dra_migrate", *args],
            cwd=cwd,
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full to fill stdout")
def test_full_stdout_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(pod())
    done = _full_stdout(["convert", "p.yaml"], tmp_path)
    assert done.returncode == 123
    lines = done.stderr.decode().splitlines()
    assert "dra-migrate: error: cannot write the output: No space left on device" in lines
    assert "Traceback" not in done.stderr.decode()


# --- nothing lost on disk -----------------------------------------------------------------------


def test_file_changed_during_the_run_is_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dra_migrate.cli import convert as cli

    target = tmp_path / "p.yaml"
    target.write_text(pod())
    real = cli._files_out

    def edited_meanwhile(*args: Any, **kwargs: Any) -> Any:
        target.write_text(pod() + "# added by someone else\n")
        (tmp_path / "gone.yaml").unlink()
        return real(*args, **kwargs)

    (tmp_path / "gone.yaml").write_text(pod(name="g"))
    monkeypatch.setattr(cli, "_files_out", edited_meanwhile)
    result = convert(tmp_path, "--write", ".")
    assert result.exit_code == 123
    assert "p.yaml:1:1: DRA012" in result.stderr and "gone.yaml:1:1: DRA012" in result.stderr
    assert target.read_text().endswith("# added by someone else\n")
    assert not (tmp_path / "gone.yaml").exists()  # not brought back
    assert not list(tmp_path.glob(".*dra-migrate"))


def test_write_through_a_link_outside_the_paths_needs_the_option(tmp_path: Path) -> None:
    (tmp_path / "vendor").mkdir()
    (tmp_path / "repo").mkdir()
    (tmp_path / "vendor" / "p.yaml").write_text(pod())
    (tmp_path / "repo" / "p.yaml").symlink_to(tmp_path / "vendor" / "p.yaml")
    result = convert(tmp_path, "--write", "repo")
    assert result.exit_code == 123 and "DRA013" in result.stderr
    assert (tmp_path / "vendor" / "p.yaml").read_text() == pod()
    result = convert(tmp_path, "--write", "--write-through-links", "repo")
    assert result.exit_code == 0, result.stderr
    assert "resourceClaims" in (tmp_path / "vendor" / "p.yaml").read_text()
    assert (tmp_path / "repo" / "p.yaml").is_symlink()


def test_link_inside_the_paths_is_written_through(tmp_path: Path) -> None:
    (tmp_path / "real.yaml").write_text(pod())
    (tmp_path / "link.yaml").symlink_to("real.yaml")
    result = convert(tmp_path, "--write", "link.yaml", "real.yaml")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "link.yaml").is_symlink()


def test_read_only_file_is_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "p.yaml"
    target.write_text(pod())
    target.chmod(0o444)
    result = convert(tmp_path, "--write", "p.yaml")
    assert result.exit_code == 123 and "DRA014" in result.stderr
    assert target.read_text() == pod()


def test_stale_temp_files_of_dead_runs_are_removed(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(pod())
    child = subprocess.Popen(["true"])
    child.wait()
    stale = tmp_path / f".p.yaml.{child.pid}.abcd1234.dra-migrate"
    stale.write_text("half a file")
    mine = tmp_path / f".p.yaml.{os.getpid()}.live.dra-migrate"  # a live writer's: kept
    mine.write_text("being written")
    result = convert(tmp_path, "--write", "p.yaml")
    assert result.exit_code == 0, result.stderr
    assert not stale.exists() and mine.exists()


def test_output_dir_is_not_read_back_links_not_followed_mode_kept(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(pod(name="a"))
    (tmp_path / "a.yaml").chmod(0o640)
    first = convert(tmp_path, "--output-dir", "out", ".")
    assert first.exit_code == 0, first.stderr
    assert (tmp_path / "out" / "a.yaml").stat().st_mode & 0o777 == 0o640
    again = convert(tmp_path, "--output-dir", "out", ".")
    assert again.exit_code == 0, again.stderr
    assert "1 file(s) converted" in again.stderr  # out/a.yaml is not input
    (tmp_path / "out" / "a.yaml").unlink()
    (tmp_path / "secret.yaml").write_text("kept: true\n")
    (tmp_path / "out" / "a.yaml").symlink_to(tmp_path / "secret.yaml")
    linked = convert(tmp_path, "--output-dir", "out", "a.yaml")
    assert linked.exit_code == 123 and "DRA015" in linked.stderr
    assert (tmp_path / "secret.yaml").read_text() == "kept: true\n"


def test_two_inputs_for_one_output_are_refused(tmp_path: Path) -> None:
    # x/y/p.yaml and ../y/p.yaml both map to out/y/p.yaml
    (tmp_path / "x" / "y").mkdir(parents=True)
    (tmp_path / "y").mkdir()
    (tmp_path / "x" / "y" / "p.yaml").write_text(pod(name="inner"))
    (tmp_path / "y" / "p.yaml").write_text(pod(name="outer"))
    out = str(tmp_path / "out")
    result = convert(tmp_path / "x", "--output-dir", out, "y/p.yaml", "../y/p.yaml")
    assert result.exit_code == 123
    refused = [line for line in result.stderr.splitlines() if ":1:1: DRA015 " in line]
    assert len(refused) == 2, result.stderr
    assert not (tmp_path / "out" / "y" / "p.yaml").exists()


def test_sigterm_during_write_says_what_was_written(tmp_path: Path) -> None:
    import signal
    import sys

    for i in range(40):
        (tmp_path / f"p{i:02}.yaml").write_text(pod(name=f"p{i}"))
    script = (
        "import os, signal, sys\n"
        "from dra_migrate.cli import app as cli\nfrom dra_migrate.convert import writer\n"
        "real = writer._stage_in\n"
        "count = [0]\n"
        "def slow(*a, **k):\n"
        "    count[0] += 1\n"
        "    if count[0] == 3:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return real(*a, **k)\n"
        "writer._stage_in = slow\n"
        "sys.argv = ['dra-migrate', 'convert', '--write', '--jobs', '1', '.']\n"
        "cli.main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 130, done.stderr
    err = done.stderr.decode()
    assert "interrupted; 2 file(s) written (p00.yaml, p01.yaml)" in err
    assert "Traceback" not in err
    converted = [p.name for p in tmp_path.glob("p*.yaml") if "resourceClaims" in p.read_text()]
    assert sorted(converted) == ["p00.yaml", "p01.yaml"]
    assert not list(tmp_path.glob(".*dra-migrate"))
    assert signal.SIGTERM  # handled like SIGINT


# --- configuration ------------------------------------------------------------------------------


def test_config_above_the_repository_is_not_used(tmp_path: Path) -> None:
    from dra_migrate.convert.mapping import find_config

    (tmp_path / ".dra-migrate.yaml").write_text("resources: []\n")
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    assert find_config(repo / "apps", home=tmp_path / "nohome") is None
    (repo / ".dra-migrate.yaml").write_text("resources: []\n")
    assert find_config(repo / "apps", home=tmp_path / "nohome") == str(repo / ".dra-migrate.yaml")


def test_outside_git_the_search_stops_at_home(tmp_path: Path) -> None:
    from dra_migrate.convert.mapping import find_config

    (tmp_path / ".dra-migrate.yaml").write_text("resources: []\n")
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    assert find_config(home / "work", home=home) is None  # /tmp's file steers nothing
    (home / ".dra-migrate.yaml").write_text("resources: []\n")
    assert find_config(home / "work", home=home) == str(home / ".dra-migrate.yaml")
    found = find_config(tmp_path / "home", home=tmp_path / "elsewhere")
    assert found == str(home / ".dra-migrate.yaml")


def test_every_summary_names_the_configuration(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(pod())
    assert "with the built-in mapping" in convert(tmp_path, "p.yaml").stderr
    assert "using the built-in mapping" in scan(tmp_path, "p.yaml").stderr
    (tmp_path / "cfg.yaml").write_text("version: 1\n")
    assert "using mapping cfg.yaml" in scan(tmp_path, "--config", "cfg.yaml", "p.yaml").stderr
    validated = invoke(["validate", "--config", str(tmp_path / "cfg.yaml"), "."])
    assert "using mapping" in validated.stderr


@pytest.mark.parametrize(
    ("config", "where"),
    [
        (
            "resources:\n  - name: nvidia.com/gpu\n    deviceClass: gpu.nvidia.com\n"
            "    rules:\n      - when: {namespaces: [x]}\n        selectors: ['device.driver ==']\n",
            "cfg.yaml:6:21: invalid configuration at resources.0.rules.0.selectors.0",
        ),
        (
            "resources:\n  - name: example.com/{a}-{a}\n    deviceClass: gpu.example.com\n",
            "cfg.yaml:2:11: invalid configuration at resources.0.name",
        ),
        (
            "resources:\n  - name: nvidia.com/gpu\n    deviceClass: '{x}.nvidia.com'\n",
            "cfg.yaml:3:18: invalid configuration at resources.0.deviceClass",
        ),
    ],
)
def test_config_errors_surface_when_it_loads(tmp_path: Path, config: str, where: str) -> None:
    (tmp_path / "cfg.yaml").write_text(config)
    (tmp_path / "p.yaml").write_text(pod())
    result = scan(tmp_path, "--config", "cfg.yaml", "p.yaml")
    assert result.exit_code == 2
    assert where in result.stderr


def test_placeholders_fill_the_device_class(tmp_path: Path) -> None:
    (tmp_path / "cfg.yaml").write_text(
        "resources:\n  - name: example.com/gpu-{model}\n    deviceClass: '{model}.example.com'\n"
    )
    text = pod().replace("nvidia.com/gpu", "example.com/gpu-h100")
    result = convert(tmp_path, "--config", "cfg.yaml", "-", stdin=text)
    assert result.exit_code == 0, result.stderr
    assert "deviceClassName: h100.example.com" in result.stdout
