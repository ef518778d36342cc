"""Cluster mode without the ``kubernetes`` client: it is the ``cluster`` extra
(``pip install 'dra-migrate[cluster]'``), so an install without it must say so on
every ``--cluster`` path, in one line with exit status 2, and every other path must
work as before.

Each run is ``python -m dra_migrate`` in a fresh interpreter whose import system
refuses ``kubernetes`` (a ``sys.meta_path`` finder), as an install without the extra
would; the same runs with the client are the control."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import DEPLOYMENT
from tests.conftest import REPO

# Refuses kubernetes and its submodules, then runs the command as `python -m dra_migrate`.
RUN = """\
import runpy, sys
class NoKubernetes:
    def find_spec(self, name, path=None, target=None):
        if name == "kubernetes" or name.startswith("kubernetes."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
if sys.argv[1] == "hide":
    sys.meta_path.insert(0, NoKubernetes())
del sys.argv[1]
runpy.run_module("dra_migrate", run_name="__main__", alter_sys=True)
"""
INSTALL = "pip install 'dra-migrate[cluster]'"
COMMANDS = {
    "validate": ("validate", "--cluster", "gpu.yaml"),
    "report": ("report", "--cluster", "gpu.yaml"),
    "inventory": ("inventory", "--cluster", "-A"),
}
POD_DUMP = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: main
    resources: {limits: {nvidia.com/gpu: 1}}
status: {phase: Running}
"""


def _run(tmp_path: Path, client: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "PYTHONWARNINGS")
    }
    env.update(
        PYTHONPATH=str(REPO),
        HOME=str(tmp_path),  # no ~/.kube/config
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    return subprocess.run(
        [sys.executable, "-c", RUN, client, *args],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_cluster_mode_without_the_client_says_how_to_install_it(
    tmp_path: Path, command: str
) -> None:
    (tmp_path / "gpu.yaml").write_text(DEPLOYMENT)
    done = _run(tmp_path, "hide", *COMMANDS[command])
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert " DRA601 error: cluster mode needs the kubernetes Python client" in lines[0]
    assert "No module named 'kubernetes" in lines[0]
    assert INSTALL in lines[0]
    # the control: with the client, the same run fails later, on the missing kubeconfig
    control = _run(tmp_path, "keep", *COMMANDS[command])
    assert control.returncode == 2, control.stderr
    assert " DRA601 error: no kubeconfig" in control.stderr
    assert INSTALL not in control.stderr


def test_everything_but_cluster_mode_runs_without_the_client(tmp_path: Path) -> None:
    (tmp_path / "gpu.yaml").write_text(DEPLOYMENT)
    (tmp_path / "pods.yaml").write_text(POD_DUMP)
    converted = _run(tmp_path, "hide", "convert", "--check", "--diff", "gpu.yaml")  # the hook
    assert converted.returncode == 1, converted.stderr  # a GPU request to migrate
    assert "+kind: ResourceClaimTemplate" in converted.stdout
    offline = _run(tmp_path, "hide", "inventory", "pods.yaml")  # kubectl dumps, no client
    assert offline.returncode == 0, offline.stderr
    assert "ml" in offline.stdout and "trainer" in offline.stdout
    assert INSTALL not in offline.stdout + offline.stderr


def test_the_cli_defaults_are_the_connections() -> None:
    """The cluster options' defaults are written in cli/options.py (the CLI does not
    import the cluster package to start) and in cluster/live.py's Connection; they
    must say the same, or --help would promise what a run does not do."""
    import click

    from dra_migrate.cli.app import cli
    from dra_migrate.cluster.live import Connection

    inventory = cli.get_command(click.Context(cli), "inventory")
    assert inventory is not None
    defaults = {p.name: p.default for p in inventory.params if isinstance(p, click.Option)}
    connection = Connection()
    assert defaults["request_timeout"] == connection.timeout
    assert defaults["page_size"] == connection.page_size
    # --max-pages: by default what the largest supported cluster takes at the page size
    from dra_migrate.cluster.live import default_max_pages

    assert defaults["max_pages"] is None
    assert connection.max_pages == default_max_pages(defaults["page_size"])
    assert defaults["list_timeout"] == connection.list_timeout
    assert defaults["max_response_size"] == connection.max_response
