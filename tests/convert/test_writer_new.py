"""``staging.write_new``: a file the conversion adds is written only where no file of
that name exists, even one that appears between the check and the write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dra_migrate.convert import staging, writer


def test_a_new_file_is_written_whole_with_the_umask_mode(tmp_path: Path) -> None:
    target = tmp_path / "resourceclaimtemplates.yaml"
    staging.write_new(target, b"kind: ResourceClaimTemplate\n", [tmp_path], False)
    assert target.read_bytes() == b"kind: ResourceClaimTemplate\n"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no temporary file left
    mask = os.umask(0o022)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


def test_an_existing_file_is_never_replaced(tmp_path: Path) -> None:
    target = tmp_path / "resourceclaimtemplates.yaml"
    target.write_bytes(b"mine\n")
    with pytest.raises(writer.Refused) as refused:
        staging.write_new(target, b"theirs\n", [tmp_path], False)
    assert refused.value.code == "DRA012"
    assert target.read_bytes() == b"mine\n"


def test_a_file_that_appears_after_the_check_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race a rename would lose: the name is free when checked, taken when the
    temporary file is put in place; the hard link fails and the other file stays."""
    target = tmp_path / "resourceclaimtemplates.yaml"
    exists_before = writer._exists_in

    def free_then_taken(folder: int, name: str) -> bool:
        free = exists_before(folder, name)
        target.write_bytes(b"written meanwhile\n")
        return free

    monkeypatch.setattr(writer, "_exists_in", free_then_taken)
    with pytest.raises(writer.Refused) as refused:
        staging.write_new(target, b"generated\n", [tmp_path], False)
    assert refused.value.code == "DRA012"
    assert target.read_bytes() == b"written meanwhile\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]
