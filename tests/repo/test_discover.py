"""Discovery in a git work tree: ``git grep`` rules files out, and never changes an answer.

Inside git, files that hold none of the byte strings a run reads files for are
never read by Python (``Candidate.ruled_out``). These tests hold that to the
rule that matters: every report is the one a run that reads every file gives.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dra_migrate.repo import discover
from tests.cli.test_cli import DEPLOYMENT
from tests.helpers.cli_runner import invoke

if shutil.which("git") is None:  # pragma: no cover - CI has git
    pytest.skip("git is not installed", allow_module_level=True)

WANTED = (b"nvidia.com", b"ResourceClaimTemplate", b"dra-migrate:")

PLAIN = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  a: b\n"
# files of every kind the byte search must not rule out, by what they hold
KEPT = {
    "gpu.yaml": DEPLOYMENT.encode(),
    # escapes spell "nvidia.com/gpu": no needle shows in the bytes
    "escaped.json": json.dumps(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    ).encode()[:-1]
    + b', "spec": {"containers": [{"name": "c", "resources": {"limits":'
    b' {"nvidia\\u002ecom\\u002fg\\u0070u": 1}}}]}}',
    "utf16.yaml": DEPLOYMENT.encode("utf-16-le"),  # no byte-order mark: NUL bytes
    "bom.yaml": DEPLOYMENT.encode("utf-16"),
    "marker.yaml": PLAIN.replace("data:", "data:  # dra-migrate: ignore[DRA201]").encode(),
    "template.yaml": b"apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n",
}


def _git_repo(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _files(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _ruled_out(root: Path, *paths: str, limit: int = discover.DEFAULT_MAX_FILE_SIZE) -> dict:
    with contextlib.chdir(root):
        found = discover.expand(paths or ["."], [], (), WANTED, limit)
        return {c.display: c.ruled_out for c in found}


def test_git_grep_rules_out_only_files_without_a_wanted_string(tmp_path: Path) -> None:
    root = _git_repo(tmp_path / "repo")
    _files(root, {**KEPT, "plain.yaml": PLAIN.encode(), "sub/plain.yml": PLAIN.encode()})
    _files(tmp_path, {"elsewhere.yaml": PLAIN.encode()})
    (root / "link.yaml").symlink_to("../elsewhere.yaml")  # read: it says what it is
    (root / ".gitignore").write_text("ignored/\n")
    _files(root, {"ignored/plain.yaml": PLAIN.encode()})
    subprocess.run(["git", "add", "gpu.yaml", "plain.yaml"], cwd=root, check=True)
    found = _ruled_out(root)
    assert found == {
        **{name: False for name in KEPT},
        "link.yaml": False,
        "plain.yaml": True,  # tracked
        # untracked, not ignored: read (git's search covers tracked files; its look
        # for untracked ones is the listing's, not made twice)
        "sub/plain.yml": False,
    }


def test_files_over_the_limit_and_named_files_are_never_ruled_out(tmp_path: Path) -> None:
    root = _git_repo(tmp_path)
    _files(root, {"plain.yaml": PLAIN.encode(), "big.yaml": PLAIN.encode() * 100})
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    assert _ruled_out(root, limit=len(PLAIN) * 10) == {"plain.yaml": True, "big.yaml": False}
    assert _ruled_out(root, "plain.yaml") == {"plain.yaml": False}
    with contextlib.chdir(root):  # and reading it reports it, as outside git
        done = invoke(["scan", "--max-file-size", str(len(PLAIN) * 10), "."])
    assert "big.yaml:1:1: DRA011" in done.output


def test_files_git_calls_binary_are_read(tmp_path: Path) -> None:
    """.gitattributes can call YAML binary; git grep -I then skips it, so it is read."""
    root = _git_repo(tmp_path)
    _files(root, {"plain.yaml": PLAIN.encode(), ".gitattributes": b"*.yaml binary\n"})
    assert _ruled_out(root) == {"plain.yaml": False}


def test_outside_git_nothing_is_ruled_out(tmp_path: Path) -> None:
    _files(tmp_path, {"plain.yaml": PLAIN.encode()})
    assert _ruled_out(tmp_path) == {"plain.yaml": False}


def _report(root: Path, command: list[str]) -> tuple[int, object]:
    with contextlib.chdir(root):
        done = invoke([*command, "--format", "json", "."])
    return done.exit_code, json.loads(done.stdout)


PIECES = [PLAIN.encode(), *KEPT.values(), DEPLOYMENT.replace("\n", "\r\n").encode()]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.dictionaries(
        st.sampled_from(["a.yaml", "b/c.yaml", "b/d.yml", "e.json", "f/g/h.yaml"]),
        st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map(b"---\n".join),
        min_size=1,
    ),
    tracked=st.booleans(),
    command=st.sampled_from([["scan"], ["convert", "--check"], ["validate"]]),
)
@example(files={"a.yaml": KEPT["utf16.yaml"]}, tracked=False, command=["scan"])
@example(files={"e.json": KEPT["escaped.json"]}, tracked=True, command=["scan"])
@example(files={"a.yaml": KEPT["marker.yaml"]}, tracked=True, command=["convert", "--check"])
def test_a_git_work_tree_gives_the_reports_of_reading_every_file(
    tmp_path_factory: pytest.TempPathFactory,
    files: dict[str, bytes],
    tracked: bool,
    command: list[str],
) -> None:
    plain = tmp_path_factory.mktemp("plain")
    _files(plain, files)
    work_tree = _git_repo(tmp_path_factory.mktemp("git"))
    _files(work_tree, files)
    if tracked:
        subprocess.run(["git", "add", "-A"], cwd=work_tree, check=True)
    assert _report(work_tree, command) == _report(plain, command)


@pytest.mark.parametrize("command", [["scan"], ["convert", "--check"], ["validate"]])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_files_read_again_where_processed_give_the_same_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], jobs: str
) -> None:
    """A file over many_files.HELD is not kept from discovery: the worker reads it again."""
    from dra_migrate.pipeline import many_files

    # enough files for the process pool, with GPU requests, DRA objects and a marker
    _files(tmp_path, {f"f{i:02d}.yaml": PIECES[i % len(PIECES)] for i in range(30)})
    whole = _report(tmp_path, [*command, "--jobs", jobs])
    monkeypatch.setattr(many_files, "HELD", 16)
    assert _report(tmp_path, [*command, "--jobs", jobs]) == whole
