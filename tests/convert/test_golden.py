"""Golden cases: tests/fixtures/convert/<case>/ holds the input, the expected output, the findings.

- ``input/``: the files the case converts (``.dra-migrate.yaml`` there is its mapping);
- ``expected/``: every file that changes, as it must be after ``convert --write``;
  a file missing there must come out byte for byte unchanged;
- ``findings.txt``: ``exit: N`` then the expected finding lines, paths relative to input/;
- ``args`` (optional): extra command-line arguments, one per line.

Adding a case is adding a folder; ``pytest --update-goldens`` writes expected/ and
findings.txt from the current output for review (review the diff like code).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from dra_migrate.convert import overlays
from tests.conftest import FIXTURES
from tests.helpers.cli_runner import invoke

CASES = FIXTURES / "convert"


def _cases() -> list[str]:
    return sorted(p.name for p in CASES.iterdir() if (p / "input").is_dir())


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _run(workdir: Path, args: list[str]) -> tuple[int, list[str]]:
    old = os.getcwd()
    os.chdir(workdir)
    try:
        # every finding on its line: the golden findings list each (--every-note)
        result = invoke(["convert", "--write", "--jobs", "1", "--every-note", *args, "."])
    finally:
        os.chdir(old)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    lines = [
        line for line in result.stderr.splitlines() if line and not line.startswith("dra-migrate: ")
    ]
    return result.exit_code, lines


@pytest.mark.parametrize("case", _cases())
def test_golden(case: str, tmp_path: Path, update_goldens: bool) -> None:
    folder = CASES / case
    work = tmp_path / "input"
    shutil.copytree(folder / "input", work)
    args_file = folder / "args"
    args = args_file.read_text().split() if args_file.is_file() else []
    before = _files(work)
    code, findings = _run(work, args)
    after = _files(work)
    changed = {name: data for name, data in after.items() if before.get(name) != data}
    assert set(before) <= set(after), "convert must not delete files"
    # the only files convert creates: a kustomize overlay's templates and the patch that
    # takes the base's templates it replaces out of its build; a Helm chart's new
    # template (templates/<chart>-resourceclaimtemplate.yaml)
    created = {name.rpartition("/")[2] for name in set(after) - set(before)}
    assert all(
        name in (overlays.TEMPLATES_FILE, overlays.REPLACED_FILE)
        or name.endswith("-resourceclaimtemplate.yaml")
        for name in created
    ), created

    expected_dir = folder / "expected"
    findings_file = folder / "findings.txt"
    if update_goldens:
        shutil.rmtree(expected_dir, ignore_errors=True)
        for name, data in changed.items():
            target = expected_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        findings_file.write_text("\n".join([f"exit: {code}", *findings]) + "\n")
        return

    expected = _files(expected_dir) if expected_dir.is_dir() else {}
    assert sorted(changed) == sorted(expected), "the set of changed files differs"
    for name, data in expected.items():
        assert changed[name].decode("utf-8", "replace") == data.decode("utf-8", "replace")
        assert changed[name] == data  # line endings and BOM too
    lines = findings_file.read_text().splitlines()
    assert lines[0] == f"exit: {code}"
    assert findings == lines[1:]


@pytest.mark.parametrize("case", _cases())
def test_golden_is_idempotent(case: str, tmp_path: Path) -> None:
    """Converting the converted output again changes nothing."""
    folder = CASES / case
    work = tmp_path / "input"
    shutil.copytree(folder / "input", work)
    args_file = folder / "args"
    args = args_file.read_text().split() if args_file.is_file() else []
    _run(work, args)
    once = _files(work)
    _run(work, args)
    assert _files(work) == once
