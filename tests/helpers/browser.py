"""Headless Chromium (Debian's ``chromium`` package) for the HTML report tests.

``python -m tests.helpers.browser report.html shot.png`` writes a screenshot of a page:
the helper the tests use, and what a person runs to look at a report.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-quic",
    "--disable-sync",
)


def find() -> str | None:
    return next((path for name in NAMES if (path := shutil.which(name))), None)


def _run(page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    binary = find()
    if binary is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="dra-migrate-chromium-") as profile:
        return subprocess.run(
            [binary, *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )


def dom(page: Path) -> str:
    """The page's DOM after Chromium loaded and rendered it."""
    return _run(page, "--dump-dom").stdout


def screenshot(page: Path, png: Path, width: int = 1280, height: int = 4000) -> Path:
    _run(page, f"--screenshot={png.resolve()}", f"--window-size={width},{height}")
    return png


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m tests.helpers.browser PAGE.html SHOT.png")
    print(screenshot(Path(sys.argv[1]), Path(sys.argv[2])))
