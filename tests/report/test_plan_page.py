"""The plan a platform lead forwards (issue 40): finding codes linked to their
explanation with a few words of meaning, GPUs per wave stacked by namespace, and the
Markdown totals that never read as twice the GPUs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from dra_migrate.report.findings import CODES
from tests.conftest import REPO
from tests.helpers.cli_runner import invoke

EXAMPLES = REPO / "examples"
LINK = re.compile(
    r'<a class="code finding-code" href="https://[^"]*/docs/findings\.md#(dra\d{3})" '
    r'title="([^"]*)">(DRA\d{3})</a>'
)


def _plan(fmt: str, *paths: str) -> str:
    done = invoke(["report", "--kube-version", "1.36", "--format", fmt, *paths])
    assert done.exit_code in (0, 1), done.output
    return done.stdout


@pytest.fixture
def chart_with_a_construct(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example chart with a GPU count no way follows exactly (DRA243)."""
    chart = tmp_path / "inference"
    shutil.copytree(EXAMPLES / "charts" / "inference", chart)
    deployment = chart / "templates" / "deployment.yaml"
    text = deployment.read_text()
    assert "{{ .Values.gpu.count }}" in text
    deployment.write_text(text.replace("{{ .Values.gpu.count }}", "{{ add .Values.gpu.count 0 }}"))
    monkeypatch.chdir(tmp_path)
    return chart


def test_every_code_on_the_page_links_to_its_explanation(chart_with_a_construct: Path) -> None:
    for page in (_plan("html", str(EXAMPLES)), _plan("html", ".")):
        codes = re.findall(r"DRA\d{3}", re.sub(r"<[^>]*>", " ", page))
        links = LINK.findall(page)
        assert codes and len(links) == len(codes), (len(links), len(codes))
        for anchor, title, code in links:
            assert anchor == code.lower() and title == CODES[code].title


def test_the_helm_table_says_what_its_codes_mean(chart_with_a_construct: Path) -> None:
    page = _plan("html", ".")
    row = re.search(r"<th>Why</th></tr>\s*<tr>(.*?)</tr>", page, re.S)
    assert row is not None
    why = row[1].rsplit("<td>", 1)[1]
    assert ">DRA243</a>" in why
    assert f'<span class="meaning">{CODES["DRA243"].title}</span>' in why


def test_the_wave_chart_shows_the_gpus_each_wave_moves_by_namespace() -> None:
    page = _plan("html", str(EXAMPLES))
    chart = page.split('aria-label="GPUs per wave, by namespace"', 1)[1].split("</svg>", 1)[0]
    segments = re.findall(r"<title>(Wave \d+: [^,<]+), ([^:<]+): (\d+) GPU\(s\)</title>", chart)
    assert segments
    plan = invoke(["report", "--kube-version", "1.36", "--format", "json", str(EXAMPLES)])
    stages = json.loads(plan.stdout)["plan"]["stages"]
    all_waves = [stages["pilot"], *stages["rollout"]["waves"]]
    waves = {f"Wave {w['number']}: {w['title']}": w["gpus"] for w in all_waves}
    stacked: dict[str, int] = {}
    for wave, _namespace, gpus in segments:
        stacked[wave] = stacked.get(wave, 0) + int(gpus)
    assert stacked == {k: v for k, v in waves.items() if v}  # each wave's GPUs, by namespace
    assert len({namespace for _wave, namespace, _gpus in segments}) > 1  # stacked
    total = sum(t["gpus"] for t in stages["inventory"]["namespaces"])
    assert sum(stacked.values()) == total


def test_markdown_totals_say_the_same_gpus_two_ways() -> None:
    text = _plan("markdown", str(EXAMPLES))
    tables = re.findall(r"(\| (?:Asked for|Goes to)[^\n]*\n(?:\|[^\n]*\n)+)", text)
    assert len(tables) == 2, text
    gpus = []
    for table in tables:
        rows = [line.split("|")[1:-1] for line in table.splitlines()[2:]]
        body, [total] = rows[:-1], rows[-1:]
        assert total[0].strip() == "**Total**"
        assert sum(int(r[2]) for r in body) == int(total[2])
        gpus.append(int(total[2]))
    assert gpus[0] == gpus[1]  # one set of GPUs, not twice
    assert "Resource or product" not in text
