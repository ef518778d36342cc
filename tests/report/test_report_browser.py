"""The HTML report in a real headless browser: it renders, shows every stage, stays inert."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tests.helpers import browser

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        browser.find() is None,
        reason="chromium not installed (apt-get install chromium; .ci/run installs it)",
    ),
]

STAGES = (
    "Stage 1: Inventory",
    "Stage 2: Prerequisites",
    "Stage 3: DeviceClasses",
    "Stage 4: Pilot wave",
    "Stage 5: Full conversion and rollback",
    "Risks",
)


def _page(tmp_path: Path, *args: str) -> Path:
    page = tmp_path / "plan.html"
    done = run_cli(["report", "--format", "html", "--output", str(page), *args], REPO)
    # 123: a file could not be processed (names Kubernetes refuses); the page is still written
    assert done.returncode in (0, 1, 123), done.stderr.decode()
    return page


def test_examples_page_renders_every_stage(tmp_path: Path) -> None:
    page = _page(tmp_path, "--kube-version", "1.36", "examples")
    rendered = browser.dom(page)
    headings = re.findall(r"<h2>(.*?)</h2>", rendered)
    for stage in STAGES:
        assert stage in headings, (stage, headings)
    # the two charts are drawn: a bar per namespace and per wave
    assert rendered.count("<rect") >= 6 + 3
    assert "chat-vllm" in rendered and "mig-1g.10gb" in rendered
    shot = browser.screenshot(page, tmp_path / "plan.png")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000


def test_hostile_names_stay_text_in_the_browser(tmp_path: Path) -> None:
    hostile = '"><img src=x onerror=alert(1)><script>document.title="pwned"</script>'
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "evil.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n"
        f"  name: '{hostile}'\n  namespace: '{hostile}'\n"
        "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
        f"        - name: '{hostile}'\n          image: x\n          resources:\n"
        "            limits:\n              nvidia.com/gpu: 1\n"
    )
    page = _page(tmp_path, str(repo))
    rendered = browser.dom(page)
    assert "<title>dra-migrate report</title>" in rendered  # no script ran
    assert "<img" not in rendered and "<script" not in rendered
    assert "&lt;script&gt;document.title" in rendered  # shown as text


# The page of the 12 example workloads was about 5,500 px tall before issue 27 (6,066 px
# in the headless Chromium of CI, 1,280 px wide): a "Why" cell repeated one sentence in
# 10 rows, the findings filled a table, and codes wrapped inside (``DRA2/07``).
HEIGHT_BEFORE = 5_500
WIDTHS = (1280, 1024, 800)


def test_examples_page_is_short_and_keeps_every_code_whole(tmp_path: Path) -> None:
    page = _page(tmp_path, "--kube-version", "1.36", "examples")
    html = page.read_text(encoding="utf-8")
    assert html.count('<tr class="group">') >= 4  # the reasons said once a group
    wide = browser.measure(page, 1280)
    assert wide["height"] < 0.8 * HEIGHT_BEFORE, wide
    for width in WIDTHS:
        measured = browser.measure(page, width, open_details=True)
        assert measured["split"] == [], (width, measured["split"])
        assert measured["height"] > wide["height"]  # the findings, unfolded, were measured


# phone, the width of the overflowing stage 2 table, laptop, wide (issue 40)
LAYOUT_WIDTHS = (390, 800, 1280, 1920)


@pytest.mark.parametrize("width", LAYOUT_WIDTHS)
def test_the_page_never_scrolls_sideways(tmp_path: Path, width: int) -> None:
    page = _page(tmp_path, "--kube-version", "1.36", "examples")
    measured = browser.measure(page, width, open_details=True)
    assert measured["room"] <= width  # laid out at that width, not the window's least
    assert measured["width"] <= measured["room"], measured  # no sideways scroll of the page
    assert measured["overflow"] == [], measured["overflow"]  # nothing past the right edge
    assert measured["split"] == []  # and every code whole
