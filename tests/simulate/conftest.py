"""The control plane the simulate tests share (one for the session), or a skip that
says how to build it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import TOOLS_BIN


@pytest.fixture(scope="session")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    try:
        from dra_migrate.simulate import control_plane as cp
    except ImportError:  # pragma: no cover - until the control plane is part of the package
        pytest.skip("no dra_migrate.simulate.control_plane")
    try:
        binaries = cp.find_binaries()
    except cp.MissingControlPlane as error:
        pytest.skip(f"{error} (bash scripts/build-control-plane.sh builds them)")
    folder: Path = tmp_path_factory.mktemp("control-plane")
    with cp.start(binaries, folder) as plane:
        yield str(plane.kubeconfig)


@pytest.fixture
def tool_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """kubectl and helm of .ci-tools/bin on PATH (kustomizations built, charts rendered)."""
    if TOOLS_BIN.is_dir():
        monkeypatch.setenv("PATH", f"{TOOLS_BIN}:{Path('/usr/bin')}:{Path('/bin')}")
