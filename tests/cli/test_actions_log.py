"""In a GitHub Actions log every finding appears once (issue 27).

With ``--format github`` the findings are workflow commands on stdout, which the
runner turns into annotations on the lines of the pull request and also shows in the
log; the text form of the same finding on stderr would show each twice. The
annotation is the one kept: it is the form that reaches the pull request, and the log
shows it with its file, line and message. These runs are real processes with
``GITHUB_ACTIONS=true`` in their environment, as a runner starts them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO

ANNOTATION = re.compile(
    r"^::(?:error|warning|notice) file=(?P<path>[^,]+),line=(?P<line>\d+),col=(?P<col>\d+),"
    r"title=(?P<code>DRA\d{3}) "
)
TEXT = re.compile(r"(?P<path>\S+?):(?P<line>\d+):(?P<col>\d+): (?P<code>DRA\d{3}) ")

BAD_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: Bad_Name
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 0
"""


def _log(args: list[str], cwd: Path) -> tuple[str, str]:
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(cwd)}
    env.pop("NO_COLOR", None)
    done = subprocess.run(
        [sys.executable, "-m", "dra_migrate", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout, done.stderr


def _findings(stdout: str, stderr: str) -> Counter[tuple[str, str, str, str]]:
    """Each finding of the log, by where and what, as often as the log shows it."""
    seen: Counter[tuple[str, str, str, str]] = Counter()
    for line in (stdout + stderr).splitlines():
        match = ANNOTATION.match(line) or TEXT.match(line)
        if match:
            path = match["path"].removeprefix("./")
            seen[(path, match["line"], match["col"], match["code"])] += 1
    return seen


@pytest.mark.parametrize(
    "command",
    [["convert", "--check"], ["validate"], ["scan"]],
    ids=" ".join,
)
def test_every_finding_appears_once_in_an_actions_log(command: list[str], tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BAD_TEMPLATE)
    stdout, stderr = _log(
        [*command, "--format", "github", "--", str(REPO / "examples"), "bad.yaml"], tmp_path
    )
    seen = _findings(stdout, stderr)
    assert seen, stdout + stderr
    assert {n for n in seen.values()} == {1}, [f for f, n in seen.items() if n > 1]
    assert not TEXT.search(stderr), "no finding as text beside its annotation"
    assert all(
        ANNOTATION.match(line) for line in stdout.splitlines() if "DRA" in line and "::" in line
    )
    # and the annotations are the findings of the run: the text view has the same ones
    # (each note listed: by default repeated notes are one line)
    plain_out, plain_err = _log(
        [*command, "--every-note", "--", str(REPO / "examples"), "bad.yaml"], tmp_path
    )
    assert set(_findings(plain_out, plain_err)) == set(seen)
