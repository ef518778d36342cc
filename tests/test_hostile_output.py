"""Hostile input (issue 22, part 2): output that cannot be forged, writes that cannot
be steered, suppressions only in the documented forms.

Each test holds the smallest input that shows the problem it guards against.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dra_migrate.cli import end_of_options
from tests.cli_runner import invoke

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
        nvidia.com/gpu: 1
"""


def pod(name: str = "p", namespace: str = "ml") -> str:
    return POD.format(name=name, namespace=namespace)


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
        assert "nvidia.com/gpu" not in (tmp_path / "--exclude=*.yaml").read_text()
    else:
        assert "--output=kustomization.yaml" in done.output
        assert "--exclude=*.yaml" in done.output


def test_a_second_double_dash_is_a_file_name() -> None:
    assert end_of_options(["--check", "--", "--", "-x"]) == (["--check"], ["--", "-x"])
    assert end_of_options(["--check", "a"]) == (["--check", "a"], [])


def test_inventory_dumps_after_double_dash(tmp_path: Path) -> None:
    (tmp_path / "--cluster").write_text(pod())
    done = run(tmp_path, "inventory", "--", "--cluster")
    assert done.exception is None and done.exit_code == 0, done.output
    assert "1 GPU pod(s)" in done.output
