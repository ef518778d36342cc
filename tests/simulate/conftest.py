"""The simulate tests place on the shared control plane (tests/conftest.py's
``control_plane`` fixture): they skip, with how to build it, without one."""

from __future__ import annotations

import pytest

from dra_migrate.simulate.control_plane import ControlPlane


@pytest.fixture(scope="session")
def kubeconfig(control_plane: ControlPlane) -> str:
    """The shared control plane's admin kubeconfig."""
    return str(control_plane.kubeconfig)
