"""Where a finding is, for the formats read by other tools: paths relative to the repository root.

GitHub annotations and SARIF results must name files relative to the root of
the repository (``GITHUB_WORKSPACE`` on GitHub Actions, else the top of the
git work tree around the current folder, else the current folder), whatever
folder the command was run from or named.
"""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path


@cache
def repository_root() -> Path:
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace and Path(workspace).is_dir():
        return Path(workspace).resolve()
    from dra_migrate import git

    program = git.which("git")  # (absolute PATH entries only)
    try:
        if program is None:
            raise OSError("no git on PATH")
        out = subprocess.run(
            [program, "rev-parse", "--show-toplevel"],
            capture_output=True,
            check=True,
            timeout=30,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    return Path(out).resolve() if out else Path.cwd().resolve()


def repo_relative(display: str) -> str:
    """``display`` (as the user named it) relative to the repository root, in POSIX form.

    Standard input (``-`` or a ``--stdin-filename`` that is not a file) and paths
    outside the repository are returned as given.
    """
    if not display or display == "-":
        return display
    path = Path(display)
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        return Path(os.path.normpath(absolute)).relative_to(repository_root()).as_posix()
    except ValueError:
        return path.as_posix()
