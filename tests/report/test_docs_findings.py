"""docs/findings.md documents every finding code, and its examples do what it says.

The page has one ``## DRAnnn: title`` section per code of ``CODES``, in code
order, each with a ``Severity:`` line. A section's ``Triggers it:`` example is
run through the real CLI in an empty folder and must produce the code; its
``Passes:`` example, when there is one, must not. Examples of the DRA3xx codes
run through ``validate``, the others through ``convert``.

An example is one fenced ``yaml`` block; ``# file: relative/path`` lines start
the files of a multi-file example, and a single-file example is ``example.yaml``.
The examples of the device-evaluation codes (DRA340 to DRA344, DRA351) have a
``slices.yaml`` file: it is passed with ``--resource-slices`` and is not an
input path (the other files are passed by name).
Examples of the DRA5xx codes run through ``report`` (``deviceclasses`` for
DRA501 to DRA509); a ``# args: ...`` first line gives their options, and a
``nodes.yaml`` file is passed with ``--nodes``. A convert example may have a
``# args:`` line too (``--verify-builds``: the examples of DRA231 and DRA232 run
with the real kubectl on PATH; ``--verify-helm``: those of DRA245 and DRA248 with the
real helm); when it names files of the example, only those are passed (DRA249).
Codes whose input cannot be shown as text (unreadable, non-UTF-8, binary files,
tabs, an explicit empty path, a generated oversized pod) are built by the
builders in ``BUILT`` below, from the section's example where it has one.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dra_migrate.cluster import EXIT_CODES
from dra_migrate.report.findings import CODES
from tests.conftest import REPO
from tests.helpers.cli_runner import invoke
from tests.helpers.fake_apiserver import FakeCluster, sample_cluster, serve, write_kubeconfig

DOC = REPO / "docs" / "findings.md"
HEADING = re.compile(r"^## (?P<code>DRA\d{3}): (?P<title>.+)$")
ANY_HEADING = re.compile(r"^## ")
FILE_MARKER = re.compile(r"^# file: (?P<path>\S+)\s*$")
# path:line:col: CODE message, and the run-level form of DRA214.
FINDING = re.compile(r"^\S.*?:\d+:\d+: (?P<code>DRA\d{3}) |^dra-migrate: (?P<note>DRA\d{3}) ")
CODE_MENTION = re.compile(r"\bDRA\d{3}\b")

# Codes of ``dra-migrate validate``: their examples run through it instead of convert.
VALIDATE_SERIES = "DRA3"
# Codes of ``report`` and ``deviceclasses``.
REPORT_SERIES, CLASSES_SERIES = "DRA5", "DRA50"
ARGS_MARKER = re.compile(r"^# args: (?P<args>.*)$")
NODES = "nodes.yaml"
# Cluster mode: examples of these run through ``inventory`` (kubectl dumps), except:
CLUSTER_SERIES = "DRA6"
# simulate (DRA8xx): on the shared control plane; fleet.yaml is --fleet, after/ --after
SIMULATE_SERIES = "DRA8"
FLEET_FILE = "fleet.yaml"
CLUSTER_COMMANDS = {"DRA610": "validate"}
# ResourceSlices of a device-evaluation example: --resource-slices, not an input.
SLICES = "slices.yaml"
DEVICE_CODES = ("DRA340", "DRA341", "DRA342", "DRA343", "DRA344", "DRA351")
# Examples that build kustomizations (convert --verify-builds): the real kubectl on PATH.
KUBECTL_CODES = ("DRA231", "DRA232")
# Examples that render Helm charts (convert --verify-helm): the real helm on PATH.
HELM_CODES = ("DRA245", "DRA248")

ACCOMPANYING = "DRA224"  # the toleration note of every converted pod that has none

# Codes that no input can trigger on purpose, with the reason.
EXEMPT = {
    "DRA217": "convert renames the template of a later file (DRA210, a short hash of its path) "
    "whenever an earlier file of the run generated the name with other requests; the check "
    "stays as a safety net and no input is known to reach it",
    "DRA900": "an internal error is a bug: no input is known to produce it",
    "DRA901": "generated objects are built from a mapping file that is schema-checked on load; "
    "a schema failure of the generated ResourceClaimTemplate is a bug with no known input",
    "DRA012": "a file changes during the run only through a second process racing the run; "
    "tests/hostile/test_hostile.py changes and deletes files between the read and the write",
    "DRA902": "generated text that loads back differently is a bug of the renderer: every "
    "scalar is quoted or escaped so that it loads back, and no input is known to defeat it",
    "DRA244": "a rendering after the migration that differs is a bug of the chart pass, "
    "caught before anything is written; tests/pipeline/test_renders.py makes wrong "
    "migrations by hand (a wrong count, a switch that changes a byte when off, a closed "
    "values schema, another device class) and checks DRA244 names each",
    "DRA811": "which workload gets a GPU when several compete is the scheduler's order: "
    "tests/simulate/test_golden_simulate.py places the examples, where workloads compete, "
    "and a difference that holds alone is DRA811",
    "DRA503": "every value is rendered in a form that reads back as itself (a property test "
    "checks it on arbitrary text and JSON values): a DeviceClass that does not is a bug",
}


@dataclass
class Section:
    code: str
    title: str
    lines: list[str]
    severity: str | None = None
    trigger_text: str = ""  # the "Triggers it:" paragraph
    trigger: str | None = None  # its yaml block
    passes: str | None = None
    labels: list[str] = field(default_factory=list)

    @property
    def prose(self) -> str:
        return "\n".join(self.lines)


def _sections() -> list[Section]:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    sections: list[Section] = []
    current: Section | None = None
    for line in lines:
        match = HEADING.match(line)
        if match:
            current = Section(match["code"], match["title"], [])
            sections.append(current)
        elif ANY_HEADING.match(line):
            current = None
        elif current is not None:
            current.lines.append(line)
    for section in sections:
        _parse_body(section)
    return sections


def _parse_body(section: Section) -> None:
    lines = section.lines
    i = 0
    pending: str | None = None  # the label waiting for its yaml block
    after: str | None = None  # the label of the paragraph just before, ending with ':' or not
    while i < len(lines):
        line = lines[i]
        if line.startswith("Severity: "):
            assert section.severity is None, f"{section.code}: two Severity lines"
            section.severity = line.removeprefix("Severity: ")
        elif line.startswith(("Triggers it:", "Passes:")):
            label = line.split(":", 1)[0]
            section.labels.append(label)
            paragraph = [line]
            while i + 1 < len(lines) and lines[i + 1].strip():
                i += 1
                paragraph.append(lines[i])
            text = " ".join(paragraph)
            if label == "Triggers it":
                section.trigger_text = text
            pending = label if text.endswith(":") else None
            after = label
            i += 1
            continue
        elif line.startswith("```"):
            # an example right after a label paragraph that does not end with ':' is never run
            assert pending is not None or after is None, (
                f"{section.code}: the {after} paragraph before this example must end with ':'"
            )
            fence = line
            body: list[str] = []
            i += 1
            while i < len(lines) and lines[i] != "```":
                body.append(lines[i])
                i += 1
            if pending is not None:
                assert fence == "```yaml", f"{section.code}: the {pending} example is not yaml"
                block = "\n".join(body) + "\n"
                if pending == "Triggers it":
                    section.trigger = block
                else:
                    section.passes = block
            pending = None
        elif line.strip():
            pending = None
        if line.strip():
            after = None
        i += 1


SECTIONS = _sections()
BY_CODE = {s.code: s for s in SECTIONS}


def _split(example: str) -> dict[str, str]:
    """Files of an example: ``# file:`` lines start each one; otherwise example.yaml."""
    files: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in example.splitlines(keepends=True):
        args = ARGS_MARKER.match(line.rstrip("\n"))
        if args and current is None and not files:
            files["# args"] = [args["args"]]
            continue
        marker = FILE_MARKER.match(line.rstrip("\n"))
        if marker:
            current = files.setdefault(marker["path"], [])
        elif current is None:
            if not line.strip():
                continue
            current = files.setdefault("example.yaml", [])
            current.append(line)
        else:
            current.append(line)
    return {path: "".join(body) for path, body in files.items()}


def _write(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _encoded(example: str) -> dict[str, bytes]:
    return {name: text.encode("utf-8") for name, text in _split(example).items()}


# --- inputs the page can only describe: built here, from the section ---------------


def _only(section: Section) -> tuple[str, str]:
    assert section.trigger is not None, f"{section.code}: the builder needs the yaml example"
    ((name, text),) = _split(section.trigger).items()
    return name, text


def _unreadable(section: Section, root: Path) -> list[str]:
    # A broken symbolic link: readable permissions cannot be taken away from root.
    (root / "gpu-job.yaml").symlink_to(root / "generated" / "gpu-job.yaml")
    return ["."]


def _latin1(section: Section, root: Path) -> list[str]:
    name, text = _only(section)
    assert "é" in text, "the example must have a character that Latin-1 encodes differently"
    _write(root, {name: text.encode("latin-1")})
    return ["."]


def _nul_padded(section: Section, root: Path) -> list[str]:
    name, text = _only(section)
    _write(root, {name: text.encode("utf-8") + b"\0" * 64})
    return ["."]


def _replaced(pattern: str, replacement: str, what: str) -> Callable[[Section, Path], list[str]]:
    """A builder: the example with the one match of ``pattern`` replaced."""

    def build(section: Section, root: Path) -> list[str]:
        name, text = _only(section)
        changed, count = re.subn(pattern, replacement, text)
        assert count == 1, f"the example must have exactly one {what}"
        _write(root, {name: changed.encode("utf-8")})
        return ["."]

    return build


_tab_indented = _replaced(r"(?m)^ +(?=nvidia\.com/gpu: )", "\t", "nvidia.com/gpu line")
_line_separator = _replaced(r'"x y"', '"x\u2028y"', 'image name "x y"')


def _explicit_empty(section: Section, root: Path) -> list[str]:
    assert "empty.yaml" in section.trigger_text
    _write(root, {"empty.yaml": b""})
    return ["empty.yaml"]


def _output_dir_through_a_file(section: Section, root: Path) -> list[str]:
    name, text = _only(section)
    _write(root, {name: text.encode("utf-8"), "blocker": b"not a folder\n"})
    return ["--output-dir", "blocker/out", name]


def _fifo(section: Section, root: Path) -> list[str]:
    os.mkfifo(root / "gpu-job.yaml")  # a named pipe would block a reader forever
    return ["."]


def _small_limit(section: Section, root: Path) -> list[str]:
    name, text = _only(section)
    _write(root, {name: text.encode("utf-8")})
    return ["--max-file-size", "100", name]


def _link_outside(section: Section, root: Path) -> list[str]:
    name, text = _only(section)
    _write(root, {f"vendor/{name}": text.encode("utf-8")})
    (root / "repo").mkdir()
    (root / "repo" / name).symlink_to(root / "vendor" / name)
    return ["--write", "repo"]


def _read_only(section: Section, root: Path) -> list[str]:
    name, text = _only(section)
    _write(root, {name: text.encode("utf-8")})
    (root / name).chmod(0o444)
    return ["--write", name]


def _link_in_output(section: Section, root: Path) -> list[str]:
    name, text = _only(section)
    _write(root, {name: text.encode("utf-8"), "elsewhere/keep.yaml": b"kept: true\n"})
    (root / "out").mkdir()
    (root / "out" / name).symlink_to(root / "elsewhere" / "keep.yaml")
    return ["--output-dir", "out", name]


def _too_many_requests(section: Section, root: Path) -> list[str]:
    match = re.search(r"with (\d+) containers", section.trigger_text)
    assert match, "the trigger must say how many containers the pod has"
    count = int(match[1])
    containers = "".join(
        f"    - name: shard-{i}\n"
        f"      image: registry.example.com/ml/shard:1.0\n"
        f"      resources:\n"
        f"        limits:\n"
        f"          nvidia.com/gpu: 1\n"
        for i in range(count)
    )
    pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: wide\nspec:\n  containers:\n"
    _write(root, {"pod.yaml": (pod + containers).encode("utf-8")})
    return ["."]


def _check_mode(section: Section, root: Path) -> list[str]:
    assert "convert --check" in section.trigger_text
    name, text = _only(section)
    _write(root, {name: text.encode("utf-8")})
    return ["--check", "."]


# Cluster mode (DRA6xx): a kubeconfig example, pointed at the test API server on loopback
# (tests/helpers/fake_apiserver.py) that stays up until the session ends.
_SERVERS = contextlib.ExitStack()
atexit.register(_SERVERS.close)


def _kubeconfig(section: Section, root: Path, server: str | None = None) -> list[str]:
    name, text = _only(section)
    if server is not None:
        text = re.sub(r"server: \S+", f"server: {server}", text)
    _write(root, {"kubeconfig.yaml": text.encode("utf-8")})
    del name
    return ["--cluster", "--kubeconfig", "kubeconfig.yaml"]


def _fake_server(tweak: Callable[[FakeCluster], None]) -> str:
    state = sample_cluster()
    state.token = "ci-token"
    tweak(state)
    return _SERVERS.enter_context(serve(state))


def _expired(section: Section, root: Path) -> list[str]:
    return _kubeconfig(section, root, _fake_server(lambda state: None))


def _forbidden(section: Section, root: Path) -> list[str]:
    url = _fake_server(lambda state: state.forbidden.add("resourceclaims"))
    return [*_kubeconfig(section, root, url), "-A"]


def _server_error(section: Section, root: Path) -> list[str]:
    url = _fake_server(lambda state: state.failing.add("resourceslices"))
    return [*_kubeconfig(section, root, url), "-A"]


def _oversized(section: Section, root: Path) -> list[str]:
    assert "--max-response-size 1Ki" in section.trigger_text
    url = _fake_server(lambda state: None)
    return [*_kubeconfig(section, root, url), "-A", "--max-response-size", "1Ki"]


def _same_token(section: Section, root: Path) -> list[str]:
    url = _fake_server(lambda state: setattr(state, "continue_mode", "repeat"))
    return [*_kubeconfig(section, root, url), "-A"]


def _live_validate(section: Section, root: Path) -> list[str]:
    name, text = _only(section)
    _write(root, {name: text.encode("utf-8")})
    url = _fake_server(lambda state: None)
    write_kubeconfig(root / "kubeconfig.yaml", url, token="ci-token")
    return ["--cluster", "--kubeconfig", "kubeconfig.yaml", name]


BUILT: dict[str, Callable[[Section, Path], list[str]]] = {
    "DRA601": _kubeconfig,
    "DRA602": _kubeconfig,
    "DRA603": _expired,
    "DRA604": _forbidden,
    "DRA605": _server_error,
    "DRA610": _live_validate,
    "DRA611": _oversized,
    "DRA612": _same_token,
    "DRA001": _unreadable,
    "DRA002": _latin1,
    "DRA003": _nul_padded,
    "DRA006": _tab_indented,
    "DRA007": _explicit_empty,
    "DRA032": _line_separator,
    "DRA009": _output_dir_through_a_file,
    "DRA010": _fifo,
    "DRA011": _small_limit,
    "DRA013": _link_outside,
    "DRA014": _read_only,
    "DRA015": _link_in_output,
    "DRA107": _too_many_requests,
    "DRA401": _check_mode,
}


# --- running the CLI ---------------------------------------------------------------


@dataclass
class Run:
    exit_code: int
    codes: set[str]
    output: str


def _command(code: str) -> str:
    if code.startswith(SIMULATE_SERIES):
        return "simulate"
    if code.startswith(CLASSES_SERIES):
        return "deviceclasses"
    if code.startswith(REPORT_SERIES):
        return "report"
    if code in CLUSTER_COMMANDS:
        return CLUSTER_COMMANDS[code]
    if code.startswith(CLUSTER_SERIES):
        return "inventory"
    return "validate" if code.startswith(VALIDATE_SERIES) else "convert"


def _arguments(code: str, files: dict[str, bytes]) -> list[str]:
    """Options and paths for an example laid out in the current folder."""
    options = files.pop("# args", b"").decode().split()
    if _command(code) == "simulate":
        options += ["--fleet", FLEET_FILE]
        if any(n.startswith("after/") for n in files):
            options += ["--after", "after"]
        return [*options, "before" if any(n.startswith("before/") for n in files) else "."]
    if _command(code) in ("report", "deviceclasses"):
        dumps = {SLICES: "--resource-slices", NODES: "--nodes"}
        for name, option in dumps.items():
            if name in files:
                options += [option, name]
        inputs = sorted(n for n in files if n not in dumps and not n.startswith("."))
        return [*options, *(inputs or ["."])]
    if options:  # convert's options (--verify-builds), and its paths when it names some
        assert _command(code) == "convert", f"{code}: # args is for report and convert examples"
        return options if any(o in files for o in options) else [*options, "."]
    if _command(code) == "inventory":
        return sorted(files)  # kubectl dumps, given as files
    if SLICES not in files:
        return ["."]
    assert _command(code) == "validate", f"{code}: only validate takes {SLICES}"
    # Every other file by name, so that the slices are not validated as input;
    # .dra-migrate.yaml is the mapping file, found from the folder.
    paths = sorted(name for name in files if name != SLICES and not name.startswith("."))
    assert paths, f"{code}: the example has nothing to validate beside {SLICES}"
    return ["--resource-slices", SLICES, *paths]


def _run(root: Path, command: str, args: list[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    monkeypatch.chdir(root)
    jobs = [] if command == "inventory" else ["--jobs", "1"]  # inventory runs no workers
    result = invoke([command, *jobs, *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    output = result.stdout + result.stderr
    codes = set()
    for line in output.splitlines():
        match = FINDING.match(line)
        if match:
            codes.add(match["code"] or match["note"])
    return Run(result.exit_code, codes, output)


# --- the checks ------------------------------------------------------------------------


def test_every_code_has_one_section_in_order() -> None:
    documented = [s.code for s in SECTIONS]
    unknown = [c for c in documented if c not in CODES]
    assert not unknown, f"sections for codes that are not in CODES: {unknown}"
    duplicates = sorted({c for c in documented if documented.count(c) > 1})
    assert not duplicates, f"codes with more than one section: {duplicates}"
    missing = [c for c in CODES if c not in documented]
    assert not missing, f"codes without a section in {DOC.name}: {missing}"
    assert documented == sorted(CODES), "sections must follow the order of the codes"


@pytest.mark.parametrize("code", list(CODES))
def test_section_title_and_severity(code: str) -> None:
    section = BY_CODE.get(code)
    if section is None:
        pytest.fail(f"{code} has no section")
    spec = CODES[code]
    assert section.title == spec.title
    expected = spec.severity.value + (", blocks the file" if spec.blocks else "")
    assert section.severity == expected
    assert section.labels.count("Triggers it") == 1, f"{code}: one 'Triggers it:' paragraph"
    assert section.labels.count("Passes") <= 1
    if code not in BUILT and code not in EXEMPT:
        assert section.trigger is not None, f"{code}: 'Triggers it:' needs a yaml example"
    if section.passes is not None:
        assert section.trigger is not None, f"{code}: a 'Passes:' example needs a trigger"


@pytest.mark.parametrize("code", [c for c in CODES if c not in EXEMPT])
def test_trigger_produces_the_code(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    section = BY_CODE[code]
    if code in KUBECTL_CODES or code in HELM_CODES:
        tools = request.getfixturevalue("tools")
        monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    command = _command(code)
    if code in BUILT:
        args = BUILT[code](section, tmp_path)
    else:
        assert section.trigger is not None
        files = _encoded(section.trigger)
        args = _arguments(code, files)
        _write(tmp_path, files)
    if command == "simulate":  # the shared control plane, as a cluster the user gives
        plane = request.getfixturevalue("control_plane")
        # other tests of the session leave nodes of their own on the shared plane
        args = ["--kubeconfig", str(plane.kubeconfig), "--allow-real-nodes", *args]
    run = _run(tmp_path, command, args, monkeypatch)
    assert code in run.codes, f"{code} not reported by {command}:\n{run.output}"
    # Other codes of the example must at least be named in the section, except the note
    # that accompanies every converted pod without a GPU toleration of its own (DRA224;
    # "Examples on this page" says so).
    named = set(CODE_MENTION.findall(section.prose)) | {code, ACCOMPANYING}
    assert run.codes <= named, f"{code}: the example also reports {run.codes - named}"
    spec = CODES[code]
    if code in EXIT_CODES:  # cluster mode cannot read the cluster: one line, 2 or 123
        assert run.exit_code == EXIT_CODES[code], run.output
        assert run.output.count("\n") == 1, run.output
    elif code.startswith(CLUSTER_SERIES):
        assert run.exit_code == 0, run.output  # an inventory, and notes: never a failure
    elif spec.unprocessed:
        assert run.exit_code == 123, run.output
    elif spec.severity.value == "error":
        assert run.exit_code == 1, run.output
    elif command == "validate":
        # validate: warnings and info never fail the run
        assert run.exit_code == 0, run.output
    elif not any(CODES[c].severity.value == "error" for c in run.codes):
        assert run.exit_code == 0, run.output


@pytest.mark.parametrize("code", [c for c in CODES if BY_CODE.get(c) and BY_CODE[c].passes])
def test_passing_example_does_not_produce_the_code(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passes = BY_CODE[code].passes
    assert passes is not None
    files = _encoded(passes)
    args = _arguments(code, files)
    _write(tmp_path, files)
    run = _run(tmp_path, _command(code), args, monkeypatch)
    assert code not in run.codes, run.output
    assert run.exit_code != 123, f"{code}: the passing example could not be processed\n{run.output}"


def test_exempt_codes_say_why() -> None:
    for code, reason in EXEMPT.items():
        assert code in CODES and reason
        assert BY_CODE[code].trigger is None, f"{code} has an example: run it instead"


@pytest.mark.parametrize("code", DEVICE_CODES)
def test_device_examples_bring_their_slices(code: str) -> None:
    """A device-evaluation example is only meaningful on the devices it shows."""
    assert code in CODES
    section = BY_CODE[code]
    for example in (section.trigger, section.passes):
        if example is not None:
            assert SLICES in _split(example), f"{code}: the example needs a # file: {SLICES}"


def test_example_slices_are_valid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ResourceSlices the page shows pass validate themselves."""
    dumps = {
        _split(example)[SLICES]
        for section in SECTIONS
        for example in (section.trigger, section.passes)
        if example is not None and SLICES in _split(example)
    }
    assert dumps, f"no example has a {SLICES}"
    for i, dump in enumerate(sorted(dumps)):
        _write(tmp_path, {f"slices-{i}.yaml": dump.encode("utf-8")})
    run = _run(tmp_path, "validate", ["."], monkeypatch)
    assert run.exit_code == 0 and not run.codes, run.output
