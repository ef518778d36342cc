"""What a new user meets on the command line (issue 27): paths that do not exist,
commands given nothing to do, configuration errors, quiet runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli_runner import invoke


@pytest.mark.parametrize(
    "args",
    [
        ["scan", "nope.yaml"],
        ["convert", "nope.yaml"],
        ["convert", "--check", ".", "nope.yaml"],
        ["validate", "nope.yaml"],
        ["report", "nope/"],
        ["deviceclasses", "nope.yaml"],
        ["inventory", "nope.yaml"],
    ],
)
def test_a_path_that_does_not_exist_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke(args)
    missing = next(a for a in args if a.startswith("nope"))
    assert done.exit_code == 2, done.output
    assert done.stderr == f"dra-migrate: error: {missing}: path does not exist\n"
    assert "DRA001" not in done.output and done.stdout == ""


def test_a_broken_link_is_still_a_file_that_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "gpu-job.yaml").symlink_to(tmp_path / "generated" / "gpu-job.yaml")
    monkeypatch.chdir(tmp_path)
    done = invoke(["convert", "gpu-job.yaml"])
    assert done.exit_code == 123 and "gpu-job.yaml:1:1: DRA001" in done.stderr


def test_bare_inventory_says_what_to_give(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke(["inventory"])
    assert done.exit_code == 2
    assert "not both" not in done.stderr
    assert done.stderr.startswith("dra-migrate: error: nothing to read: give --cluster")
    assert "dump files of kubectl get pods,nodes" in done.stderr
    (tmp_path / "cluster.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    both = invoke(["inventory", "--cluster", "cluster.yaml"])
    assert both.exit_code == 2 and "not both" in both.stderr


def test_bare_deviceclasses_says_there_is_nothing_to_create_and_names_the_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke(["deviceclasses"])
    assert done.exit_code == 0 and done.stdout == ""
    assert done.stderr.startswith(
        "dra-migrate: no DeviceClass to create: the mapping needs no class the drivers do "
        "not install; it uses the classes their drivers install: "
    )
    assert "gpu.nvidia.com (driver gpu.nvidia.com)" in done.stderr
    assert "mig.nvidia.com (driver gpu.nvidia.com)" in done.stderr
    assert invoke(["deviceclasses", "--quiet"]).stderr == ""
    # a class to create: the YAML, and no such line
    made = invoke(["deviceclasses", "--strategy", "bridge"])
    assert "kind: DeviceClass" in made.stdout and "no DeviceClass to create" not in made.stderr
