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
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate import load, writer
from dra_migrate.cli import main
from dra_migrate.edit import Style, render_document
from dra_migrate.findings import finding

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
spec:
  containers:
  - name: c
    image: i
    resources:
      limits:
        nvidia.com/gpu: {count}
"""


def pod(name: str = "p", namespace: str = "ml", count: str = "1") -> str:
    return POD.format(name=name, namespace=namespace, count=count)


def convert(tmp_path: Path, *args: str, stdin: str | None = None) -> Any:
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        return CliRunner().invoke(main, ["convert", *args], input=stdin)
    finally:
        os.chdir(old)


def loaded(text: str) -> list[Any]:
    return [load.to_data(d.root) for d in load.parse(load.decode("x", text.encode()))]


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
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "t.yaml")])
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
