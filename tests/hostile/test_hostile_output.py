"""Hostile input (issue 22, part 2): output that cannot be forged, writes that cannot
be steered, suppressions only in the documented forms.

Each test holds the smallest input that shows the problem it guards against.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate.migration.deviceclasses import yaml_comment, yaml_string
from dra_migrate.report import renderer
from dra_migrate.report.findings import _weightless, finding, has_unsafe
from dra_migrate.report.inventory import (
    ClusterInventory,
    DeviceGroup,
    GpuRequest,
    NodeGpus,
    PendingClaim,
    Workload,
)
from dra_migrate.report.model import FileResult, InventoryItem, Report, Status, Suppressed
from tests.helpers.cli_runner import invoke
from tests.helpers.invariants import gpu_pod


def pod(name: str = "p", namespace: str = "ml") -> str:
    return gpu_pod(name, namespace)


def run(folder: Path, *args: str, stdin: str | None = None) -> Any:
    old = Path.cwd()
    os.chdir(folder)
    try:
        return invoke(list(args), input=stdin)
    finally:
        os.chdir(old)


# --- file names are never options (--) -------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["convert", "--check", "--"],
        ["convert", "--write", "--context", ".", "--"],
        ["validate", "--context", ".", "--"],
        ["scan", "--format", "json", "--"],
        ["scan", "a.yaml", "--format", "json", "--"],  # an option between paths (intermixed)
    ],
)
def test_names_after_double_dash_are_files(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: []\n")
    for name in ("a.yaml", "--output=kustomization.yaml", "--exclude=*.yaml"):
        (tmp_path / name).write_text(pod())
    done = run(tmp_path, *args, "--output=kustomization.yaml", "--exclude=*.yaml")
    assert done.exception is None and done.exit_code != 2, done.output
    assert (tmp_path / "kustomization.yaml").read_text() == "resources: []\n"
    if args[0] == "validate":
        return  # validate reports DRA objects: a legacy pod has none
    if "--write" in args:
        assert "nvidia.com/gpu: " not in (tmp_path / "--exclude=*.yaml").read_text()
    else:
        assert "--output=kustomization.yaml" in done.output
        assert "--exclude=*.yaml" in done.output


def test_a_second_double_dash_is_a_file_name(tmp_path: Path) -> None:
    for name in ("--", "-x", "a.yaml"):
        (tmp_path / name).write_text(pod(name=f"p{len(name)}"))
    done = run(tmp_path, "scan", "--format", "json", "--", "--", "-x")
    assert done.exit_code == 0, done.output
    assert {i["path"] for i in json.loads(done.stdout)["inventory"]} == {"--", "-x"}
    done = run(tmp_path, "scan", "--format", "json", "a.yaml", "--", "-x")
    assert {i["path"] for i in json.loads(done.stdout)["inventory"]} == {"a.yaml", "-x"}


def test_inventory_dumps_after_double_dash(tmp_path: Path) -> None:
    (tmp_path / "--cluster").write_text(pod())
    done = run(tmp_path, "inventory", "--", "--cluster")
    assert done.exception is None and done.exit_code == 0, done.output
    assert "1 GPU pod(s)" in done.output


# --- every format: text that UTF-8 holds, and no workflow command ------------------------

# what a name can hold: Markdown, HTML, workflow commands, controls, bidi overrides,
# bytes of a file name that is not UTF-8 (surrogates)
HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "[link](https://evil.example)",
    "![image](https://evil.example/i.png)",
    "`` ` ``",
    "a | b | c",
    "**bold** _em_ ~~del~~",
    "www.evil.example",
    "user@evil.example",
    "https://evil.example",
    "::warning file=README.md,line=1::Approved",
    "::stop-commands::x",
    "x ##[error]forged",
    "#\u200b#[error]forged",
    "\u200b::error::forged",
    "esc\x1b[31m del\x7f rlo\u202e",
    "bad\udcff\udcfe",
    "&lt; &amp; &#60;",
    "line\nbreak\r\n# heading",
    "\\",
]
HOSTILE_TEXT = st.lists(
    st.one_of(st.sampled_from(HOSTILE), st.text(min_size=1, max_size=12)), min_size=1, max_size=3
).map("".join)


def hostile_report(value: str, with_cluster: bool = False) -> Report:
    """A report of scan, convert and validate in which every field the input
    controls is ``value``."""
    item = InventoryItem(
        value, 3, 5, value, value, value, value, value, value, value, value, None, value, value
    )
    found = finding("DRA004", value, 1, 2, value, value)
    result = FileResult(value, Status.FAILED, [found], [item])
    suppressed = [Suppressed(finding("DRA205", value, 4, 1, value), "inline", value)]
    report = Report([result], [finding("DRA214", "", 0, 0, value)], suppressed=suppressed)
    report.show_suppressed = True
    if with_cluster:
        request = GpuRequest(value, value, value, None, value, value)
        report.cluster = ClusterInventory(
            source=value,
            namespace=value,
            dra_version=value,
            pending_after=300,
            workloads=[Workload(value, value, value, value, pods=1, requests=[request])],
            nodes=[NodeGpus(value, value, {value: value}, {value: value}, [value], 1)],
            devices=[DeviceGroup(value, value, 1, 1, 0)],
            pending_claims=[PendingClaim(value, value, 5, (value,), (value,))],
        )
    return report


def _structure(markdown: str) -> list[tuple[str, str]]:
    """The elements CommonMark (with tables) makes of ``markdown``: every token's
    type and tag, runs of text as one."""
    from markdown_it import MarkdownIt

    out: list[tuple[str, str]] = []
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        for t in [token, *(token.children or [])]:
            kind = "text" if t.type in ("text", "text_special") else t.type
            if kind == "inline" or (kind == "text" and out and out[-1][0] == "text"):
                continue
            out.append((kind, t.tag))
    return out


@pytest.mark.parametrize("command", ["scan", "convert", "validate"])
@pytest.mark.parametrize("with_cluster", [False, True])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=HOSTILE_TEXT)
def test_markdown_holds_no_element_the_tool_did_not_write(
    command: str, with_cluster: bool, value: str
) -> None:
    """The same report with plain names and with hostile ones renders to the same
    elements: no image, link, HTML, code span or table cell comes from a value."""
    render = renderer("markdown")
    hostile = render(hostile_report(value, with_cluster), command)
    plain = render(hostile_report("x", with_cluster), command)
    assert _structure(hostile) == _structure(plain)
    hostile.encode("utf-8")
    assert not _commands(hostile)


@pytest.mark.parametrize("command", ["scan", "convert", "validate"])
@pytest.mark.parametrize("value", ["\n", " ", " \t", "\u00a0", "\u3000", "\u2028"])
def test_a_name_of_blanks_alone_keeps_its_markdown_cell(command: str, value: str) -> None:
    """CommonMark drops a table cell's or list item's blanks: a value of blanks alone
    is written as character references, so the cell is still there (and says what the
    input held)."""
    render = renderer("markdown")
    hostile = render(hostile_report(value, True), command)
    assert _structure(hostile) == _structure(render(hostile_report("x", True), command))


def _commands(text: str) -> list[str]:
    """The lines the Actions runner would read as workflow commands (ignoring the
    characters its comparison skips)."""
    found = []
    for line in text.split("\n"):
        bare = "".join(c for c in line if not _weightless(c))
        if bare.lstrip().startswith("::") or "##[" in bare:
            found.append(line)
    return found


FORMATS = ["text", "json", "markdown", "html", "sarif", "junit", "github"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("value", HOSTILE)
def test_every_format_with_each_hostile_name(fmt: str, value: str) -> None:
    check_format(fmt, value)


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=HOSTILE_TEXT)
def test_every_format_is_text_and_forges_no_command(fmt: str, value: str) -> None:
    check_format(fmt, value)


def check_format(fmt: str, value: str) -> None:
    out = renderer(fmt)(hostile_report(value), "convert")
    out.encode("utf-8")  # a name that is not UTF-8 no longer crashes --output
    commands = _commands(out)
    if fmt == "github":  # its own annotations, one per finding, and nothing else
        assert len(commands) == 2 and all(
            c.startswith(("::error ", "::warning ")) for c in commands
        )
        for line in commands:
            assert not any(c in line for c in "\x1b\x7f\u202e")
            # read as the runner reads it: the properties end at the first "::"
            properties = line[2:].partition(" ")[2].partition("::")[0]
            keys = [p.split("=", 1)[0] for p in properties.split(",")]
            assert set(keys) <= {"file", "line", "col", "title"} and len(keys) == len(set(keys))
            bare = "".join(c for c in line if not _weightless(c))
            assert "##[" not in bare
    else:
        assert not commands, commands
    if fmt in ("json", "sarif"):
        json.loads(out)
    if fmt == "junit":
        ElementTree.fromstring(out)


def test_github_format_prints_each_finding_once(tmp_path: Path) -> None:
    """convert --format github: the annotations are the findings; the text view of
    them on stderr repeated each one in the log (and a name could forge a command)."""
    (tmp_path / "::warning file=README.md,line=1::Approved.yaml").write_text(pod())
    done = run(tmp_path, "convert", "--check", "--format", "github", ".")
    assert done.exit_code == 1, done.output
    assert done.output.count("DRA401") == 1
    # one annotation a finding (DRA401, and the toleration note DRA224), nothing else
    assert _commands(done.stdout) == done.stdout.splitlines()[:2]
    assert not _commands(done.stderr)


def test_text_names_forge_no_command(tmp_path: Path) -> None:
    for name in ("::stop-commands::x.yaml", "x ##[error]y.yaml"):
        (tmp_path / name).write_text(pod())
    done = run(tmp_path, "convert", "--check", ".")
    assert done.exit_code == 1 and done.output.count("DRA401") == 2, done.output
    assert not _commands(done.output)


def test_a_diff_under_actions_is_between_stop_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A diff shows the file as it is: under GitHub Actions the runner is told to read
    none of it, with a token the file cannot know."""
    (tmp_path / "a.yaml").write_text(pod().replace("image: i", "image: i  # ##[error]x"))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    done = run(tmp_path, "convert", "--diff", "a.yaml")
    lines = done.stdout.splitlines()
    assert lines[0].startswith("::stop-commands::")
    token = lines[0].removeprefix("::stop-commands::")
    assert len(token) >= 32 and lines[-1] == f"::{token}::"
    assert "     image: i  # ##[error]x" in lines  # the diff itself is unchanged
    monkeypatch.delenv("GITHUB_ACTIONS")
    assert run(tmp_path, "convert", "--diff", "a.yaml").stdout == "\n".join(lines[1:-1]) + "\n"


@pytest.mark.parametrize("fmt", ["json", "html", "github", "sarif", "junit", "markdown"])
def test_output_of_a_name_that_is_not_utf8(tmp_path: Path, fmt: str) -> None:
    (tmp_path / os.fsdecode(b"bad\xff.yaml")).write_text(pod())
    done = run(tmp_path, "convert", "--check", "--format", fmt, "--output", "out", ".")
    assert done.exception is None and done.exit_code == 1, done.output
    written = (tmp_path / "out").read_bytes().decode("utf-8")
    # as the text view writes the name (a JSON string doubles the backslash), or a URI
    assert any(f in written for f in ("bad\\xff.yaml", "bad\\\\xff.yaml", "bad%FF.yaml"))
    if fmt == "sarif":
        assert run(tmp_path, "convert", "--check", "--format", "sarif", ".").exit_code == 1
    if fmt == "json":
        stdout = run(tmp_path, "scan", "--format", "json", ".").stdout_bytes
        assert b"\xff" not in stdout and b"bad\\\\xff.yaml" in stdout


# --- suppressions: only the documented forms, only in comments, always counted ------------

SUPPRESSED_POD = pod().replace("kind: Pod", "kind: Pod  # dra-migrate: {marker}")


@pytest.mark.parametrize(
    "marker",
    [
        "ignore (only DRA205)",
        "ignore:DRA205",
        "ignore DRA205",
        "ignore[DRA401",
        "ignore[DRA401] because",
        "ignore[]",
        "ignore[ , ]",
        "IGNORE",
        "ignored",
    ],
)
def test_an_undocumented_marker_silences_nothing(tmp_path: Path, marker: str) -> None:
    (tmp_path / "p.yaml").write_text(SUPPRESSED_POD.format(marker=marker))
    done = run(tmp_path, "convert", "--check", "p.yaml")
    assert done.exit_code == 1, done.output
    assert "p.yaml:2:12: DRA405 warning" in done.stderr
    assert ": DRA401 error" in done.stderr  # still reported
    done = run(tmp_path, "convert", "--write", "p.yaml")
    assert "nvidia.com/gpu: " not in (tmp_path / "p.yaml").read_text()  # not held either


@pytest.mark.parametrize("marker", ["ignore", "ignore[DRA401]", "ignore[DRA205, DRA401]  "])
def test_the_documented_forms_silence(tmp_path: Path, marker: str) -> None:
    (tmp_path / "p.yaml").write_text(SUPPRESSED_POD.format(marker=marker))
    done = run(tmp_path, "convert", "--check", "p.yaml")
    assert done.exit_code == 0, done.output  # held on the device plugin, as documented
    assert "DRA405" not in done.output and ": DRA401 error" not in done.output
    assert "held: p.yaml: Pod ml/p (DRA401)" in done.stderr  # silenced, and named as held
    assert "1 finding(s) suppressed" in done.stderr


BROKEN = (
    "apiVersion: v1\nkind: Pod\n"
    "metadata: {name: 'x # dra-migrate: ignore', a: b: c}\n"
    "spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}\n"
)


@pytest.mark.parametrize(
    "text",
    [
        BROKEN,
        BROKEN.replace("'x # dra-migrate: ignore'", '"x # dra-migrate: ignore"'),
        # an unclosed quote: everything after it may be the string
        "apiVersion: v1\nkind: Pod\nmetadata: {name: 'x}  # dra-migrate: ignore\n"
        "spec: {containers: [{resources: {limits: {nvidia.com/gpu: 1}}}]}\n",
    ],
)
def test_a_marker_in_a_string_never_silences_a_parse_error(tmp_path: Path, text: str) -> None:
    (tmp_path / "p.yaml").write_text(text)
    done = run(tmp_path, "convert", "--check", "p.yaml")
    assert done.exit_code == 123 and ": DRA004 error" in done.stderr, done.output
    assert "suppressed" not in done.output


def test_a_marker_in_a_comment_of_a_broken_file_still_counts(tmp_path: Path) -> None:
    text = BROKEN.replace(
        "'x # dra-migrate: ignore', a: b: c}", "x, a: b: c}  # dra-migrate: ignore"
    )
    (tmp_path / "p.yaml").write_text(text)
    done = run(tmp_path, "convert", "--check", "p.yaml")
    assert ": DRA004 error" not in done.stderr and "1 finding(s) suppressed" in done.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_counts_the_suppressed(tmp_path: Path, fmt: str) -> None:
    zero = pod().replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 0  # dra-migrate: ignore[DRA105]")
    (tmp_path / "p.yaml").write_text(zero)
    done = run(tmp_path, "convert", "--check", "--format", fmt, "--output", "out", "p.yaml")
    assert done.exit_code == 0, done.output
    out = (tmp_path / "out").read_text()
    counted = {
        "json": '"suppressed": 1',
        "sarif": '"suppressions"',
        "html": "1 finding(s) suppressed",
    }.get(fmt, "1 suppressed")
    assert counted in out, out


# --- generated DeviceClass YAML: every unsafe character an escape, read back equal --------

UNSAFE_CHARS = st.sampled_from(
    [
        *("\u202e", "\u200b", "\ufeff", "\x1b", "\x7f", "\x85", "\u2028", "\ud800"),
        *("\U000e0001", "\U0010fffd", "\ue000", "\U0001f600", "é", '"', "\\", "#", ": "),
    ]
)


@settings(max_examples=300, deadline=None)
@given(value=st.lists(st.one_of(UNSAFE_CHARS, st.text(max_size=4)), max_size=6).map("".join))
def test_generated_scalars_escape_every_unsafe_character(value: str) -> None:
    import yaml

    rendered = yaml_string(value)
    assert not has_unsafe(rendered), rendered
    assert yaml.load(f"v: {rendered}\n", Loader=yaml.SafeLoader) == {"v": value}
    assert all(not has_unsafe(line) for line in yaml_comment(value))


def test_deviceclass_with_a_bidi_override_is_escaped(tmp_path: Path) -> None:
    config = (
        "version: 1\ndeviceClasses:\n"
        "  - name: gpu.example.com\n    driver: gpu.example.com\n"
        '    selectors: ["device.attributes[\\"gpu.example.com\\"].model == \\"a\\u202eb\\""]\n'
        '    description: "rlo \\u202e here"\n'
    )
    (tmp_path / ".dra-migrate.yaml").write_text(config)
    done = run(tmp_path, "deviceclasses", "--whole-mapping", "--strategy", "rewrite")
    assert done.exit_code == 0, done.output
    assert "\u202e" not in done.stdout
    assert "a\\u202eb" in done.stdout and "rlo \\u202e here" in done.stdout


# --- writes that cannot be steered -------------------------------------------------------


def test_write_never_follows_a_folder_swapped_after_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the check of where a file really is and the write, a local process
    swaps its folder for a link to outside the paths given: nothing is written there
    (the old writer wrote through the path again, and so through the link)."""
    from dra_migrate.convert import writer

    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / "sub").mkdir(parents=True)
    outside.mkdir()
    (repo / "sub" / "p.yaml").write_text(pod())
    (outside / "p.yaml").write_text(pod())  # the same bytes: the content check passes
    checked = writer._under

    def swap_after_check(path: Path, root: Path) -> bool:
        answer = checked(path, root)
        if (repo / "sub").is_dir() and not (repo / "sub").is_symlink():
            (repo / "sub").rename(repo / "held")
            (repo / "sub").symlink_to(outside)
        return answer

    monkeypatch.setattr(writer, "_under", swap_after_check)
    done = run(repo, "convert", "--write", "sub/p.yaml")
    assert (outside / "p.yaml").read_text() == pod()
    assert done.exit_code == 123 and "sub/p.yaml:1:1: DRA012" in done.stderr, done.output
    assert not [p for p in outside.iterdir() if p.name != "p.yaml"]  # no temporary file


def test_write_in_place_keeps_the_folder_it_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A swap after the folder is open changes nothing: every step is relative to it."""
    from dra_migrate.convert import writer

    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / "sub").mkdir(parents=True)
    outside.mkdir()
    (repo / "sub" / "p.yaml").write_text(pod())
    (outside / "p.yaml").write_text(pod())
    compared = writer._unchanged

    def swap_before_rename(*args: Any) -> None:
        (repo / "sub").rename(repo / "held")
        (repo / "sub").symlink_to(outside)
        compared(*args)

    monkeypatch.setattr(writer, "_unchanged", swap_before_rename)
    done = run(repo, "convert", "--write", "sub/p.yaml")
    assert done.exit_code == 0, done.output
    assert (outside / "p.yaml").read_text() == pod()
    assert "resourceClaims" in (repo / "held" / "p.yaml").read_text()


def test_output_through_a_link_copies_no_mode(tmp_path: Path) -> None:
    """--output onto a link to a setuid file: the report is a new file of the umask's
    mode, and the link's target is untouched; an existing report keeps only rw bits."""
    target = tmp_path / "tool"
    target.write_text("#!/bin/sh\n")
    target.chmod(0o4755)
    (tmp_path / "p.yaml").write_text(pod())
    (tmp_path / "report.json").symlink_to(target)
    run(tmp_path, "scan", "--format", "json", "--output", "report.json", "p.yaml")
    report = tmp_path / "report.json"
    assert not report.is_symlink() and target.read_text() == "#!/bin/sh\n"
    assert report.stat().st_mode & 0o7777 == 0o666 & ~_umask()
    report.chmod(0o6775)
    run(tmp_path, "scan", "--format", "json", "--output", "report.json", "p.yaml")
    assert report.stat().st_mode & 0o7777 == 0o664


def test_write_keeps_no_setuid_bit(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(pod())
    (tmp_path / "p.yaml").chmod(0o4755)
    run(tmp_path, "convert", "--write", "p.yaml")
    assert (tmp_path / "p.yaml").stat().st_mode & 0o7777 == 0o755


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_marker_without_its_colon_is_reported(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(pod().replace("kind: Pod", "kind: Pod  # dra-migrate ignore"))
    done = run(tmp_path, "convert", "--check", "p.yaml")
    assert done.exit_code == 1 and "p.yaml:2:12: DRA405 warning" in done.stderr, done.output
