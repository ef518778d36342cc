"""Headless Chromium (Debian's ``chromium`` package) for the HTML report tests.

``python -m tests.helpers.browser report.html shot.png`` writes a screenshot of a page:
the helper the tests use, and what a person runs to look at a report.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

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


# Measures the page once it is laid out: its height, and each DRAnnn whose characters
# sit on more than one line (a code split by wrapping). A report has no script and a
# policy that allows none: ``measure`` renders a copy without the policy, with this.
_MEASURE = """<script>
addEventListener("load", () => {
  const split = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const code = /DRA[0-9]{3}/g;
  let node;
  while ((node = walker.nextNode())) {
    for (const m of node.data.matchAll(code)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set(
        Array.from(range.getClientRects()).filter(r => r.width > 0).map(r => Math.round(r.top))
      );
      if (tops.size > 1) split.push(m[0]);
    }
  }
  // what reaches past the right edge of the window: the page would scroll sideways
  const room = document.documentElement.clientWidth;
  const overflow = [];
  for (const el of document.querySelectorAll("table, svg, pre, p, li, h2, h3")) {
    const box = el.getBoundingClientRect();
    // inside a box that scrolls aside (a pre, a table on a phone) it is that box's own
    let scrolls = false;
    for (let up = el; up && up !== document.body; up = up.parentElement) {
      const x = getComputedStyle(up).overflowX;
      if (x === "auto" || x === "scroll") scrolls = true;
    }
    if (box.right > room + 1 && !scrolls) {
      const section = el.closest("section");
      overflow.push((section ? section.id : "page") + " " + el.tagName.toLowerCase());
    }
  }
  parent.postMessage(JSON.stringify({
    height: document.documentElement.scrollHeight,
    width: document.documentElement.scrollWidth,
    room,
    split,
    overflow,
  }), "*");
});
</script>"""
# The page is measured in a frame of the width asked for (a window of Chromium is at
# least 500 px wide, a phone's is 390): the frame's page says what it measured in a
# message (file pages are each an origin of their own), and this page writes it down.
_FRAME = """<!DOCTYPE html><html><body style="margin:0">
<iframe src="{name}" width="{width}" height="900" style="border:0"></iframe>
<pre id="dra-migrate-measure"></pre>
<script>addEventListener("message", e => {{
  document.getElementById("dra-migrate-measure").textContent = e.data;
}});</script></body></html>"""
_POLICY = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')


def measure(page: Path, width: int = 1280, open_details: bool = False) -> dict[str, Any]:
    """The page laid out ``width`` CSS pixels wide: ``height`` and ``width`` (px, the
    whole page; ``room``: the window's width), ``split`` (the finding codes that wrap
    across lines) and ``overflow`` (``section-id tag`` of each element that reaches
    past the window's right edge, but in a box that scrolls aside); with ``open_details``,
    every folded part (``<details>``) unfolded, as a reader who opens them sees it."""
    text = _POLICY.sub("", page.read_text(encoding="utf-8"), count=1)
    if open_details:
        text = text.replace("<details>", "<details open>")
    with tempfile.TemporaryDirectory(prefix="dra-migrate-measure-") as folder:
        copy = Path(folder) / page.name
        copy.write_text(text.replace("</body>", _MEASURE + "</body>", 1), encoding="utf-8")
        frame = Path(folder) / "frame.html"
        frame.write_text(_FRAME.format(name=html.escape(page.name), width=width))
        window = f"--window-size={max(width, 500) + 20},900"
        rendered = _run(frame, window, "--virtual-time-budget=30000", "--dump-dom").stdout
    found = re.search(r'<pre id="dra-migrate-measure">(.*?)</pre>', rendered, re.S)
    if found is None:
        raise AssertionError("the measuring script did not run")
    result: dict[str, Any] = json.loads(html.unescape(found[1]))
    return result


def screenshot(page: Path, png: Path, width: int = 1280, height: int = 4000) -> Path:
    _run(page, f"--screenshot={png.resolve()}", f"--window-size={width},{height}")
    return png


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m tests.helpers.browser PAGE.html SHOT.png")
    print(screenshot(Path(sys.argv[1]), Path(sys.argv[2])))
