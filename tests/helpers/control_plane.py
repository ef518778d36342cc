"""The real control plane for the tests that need one (``dra_migrate/simulate/control_plane.py``):
one per test session, shared by every test that asks for the ``control_plane`` fixture
(tests/conftest.py), and marked ``control_plane`` so that ``-m "not control_plane"``
deselects them.

The binaries come from ``DRA_MIGRATE_CONTROL_PLANE`` (a folder; ``.ci/run`` sets it to
what ``scripts/build-control-plane.sh`` printed), else from the cache folder the script
writes. Without them the tests skip with one line that says how to build them; with
``DRA_MIGRATE_CONTROL_PLANE`` set to a folder that lacks them they fail, since whoever
set it meant them to run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dra_migrate.simulate import control_plane as cp

ENV = "DRA_MIGRATE_CONTROL_PLANE"
MARKER = "control_plane"
# Users with no permission but what RBAC objects of the tests grant (token file users).
READER = "dra-migrate-reader"
USERS = (READER,)


def binaries() -> cp.Binaries:
    """The binaries, or a skip (a failure when ``DRA_MIGRATE_CONTROL_PLANE`` names them)."""
    folder = os.environ.get(ENV, "")
    try:
        return cp.find_binaries(Path(folder) if folder else None)
    except cp.MissingControlPlane as exc:
        if folder:
            pytest.fail(f"{ENV}={folder}: {exc}", pytrace=False)
        pytest.skip(f"no Kubernetes control plane built: run `{cp.BUILD_COMMAND}` (or set {ENV})")


def session_plane(workdir: Path) -> Iterator[cp.ControlPlane]:
    with cp.start(binaries(), workdir, users=USERS) as plane:
        yield plane


def api(
    plane: cp.ControlPlane,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    token: str | None = None,
    content_type: str = "application/json",
) -> tuple[int, dict[str, Any]]:
    """One request to the API server as the admin (or ``token``): (status, JSON body)."""
    import ssl
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        plane.server + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {token or plane.token}",
            "Content-Type": content_type,
            "Accept": "application/json",
        },
    )
    context = ssl.create_default_context(cafile=str(plane.ca_file))
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context)
    )
    try:
        with opener.open(request, timeout=30) as answer:
            status, raw = answer.status, answer.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        data = json.loads(raw or b"{}")
    except ValueError:  # a plain-text answer (404 of a path no API serves yet)
        data = {"message": raw.decode("utf-8", "replace")}
    return status, data if isinstance(data, dict) else {}


def create(plane: cp.ControlPlane, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    status, data = api(plane, "POST", path, obj)
    assert status == 201, (status, data)
    return data


def wait_for(what: str, check: Callable[[], Any], timeout: float = 60) -> Any:
    """``check()`` until it gives something true (returned), at most ``timeout`` seconds."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} seconds")
        time.sleep(0.2)
