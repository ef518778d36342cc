"""The README and examples/README.md say what a new user meets (issue 27): the quick
start's command and its outcome, the pages of docs/ listed once each, the ways to run
the tool, and what the tests that skip without ``../shared`` need."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import REPO, SHARED
from tests.helpers.cli_runner import invoke

README = (REPO / "README.md").read_text(encoding="utf-8")
EXAMPLES = (REPO / "examples" / "README.md").read_text(encoding="utf-8")


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_lists_every_page_of_the_docs_once() -> None:
    listed = re.findall(r"^- \[(docs/[\w-]+\.md)\]", _section(README, "Documentation"), re.M)
    pages = sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))
    assert sorted(listed) == pages, "each page once"


def test_examples_readme_says_what_the_quick_start_runs_and_what_it_does() -> None:
    quick = re.search(r"```sh\n(.*?)\n```", _section(README, "Quick start"), re.S)
    assert quick is not None
    command = quick[1].rsplit("&& .venv/bin/", 1)[1]
    assert command == "dra-migrate convert examples/"
    said = re.search(
        r"The quick start in the project README runs\n\n```sh\n(.*?)\n```", EXAMPLES, re.S
    )
    assert said is not None and said[1] == command
    # what it does: the files it converts, the exit status, what is left by hand
    result = invoke(["convert", str(REPO / "examples")])
    assert result.exit_code == 0
    converted = sorted(re.findall(r"^\+\+\+ b/.*?examples/(\S+)$", result.stdout, re.M))
    apps = sorted(f"apps/{p.name}" for p in (REPO / "examples" / "apps").glob("*.yaml"))
    kustomize = [
        "kustomize/base/deployment.yaml",
        "kustomize/overlays/prod/gpu-patch.yaml",
        "kustomize/overlays/prod/kustomization.yaml",
        "kustomize/overlays/prod/resourceclaimtemplates-replaced.yaml",
        "kustomize/overlays/prod/resourceclaimtemplates.yaml",
    ]
    chart = [
        "charts/inference/templates/deployment.yaml",
        "charts/inference/templates/inference-resourceclaimtemplate.yaml",
        "charts/inference/values.yaml",
    ]
    assert converted == sorted(
        [a for a in apps if "configmap" not in a]
        + ["helm-rendered/inference.yaml", *kustomize, *chart]
    )
    assert "exits with status 0" in EXAMPLES.replace("\n", " ")
    assert re.search(r"charts/inference/Chart.yaml:1:1: DRA241 ", result.stderr)
    assert "`DRA241`" in EXAMPLES
    assert "converted as one unit" in EXAMPLES.replace("\n", " ")
    # every file with a GPU request is converted: nothing is left by hand
    assert not re.search(r" DRA20[234] |DRA222 |DRA24[2379] ", result.stderr)


def test_python_dash_m_is_the_same_command_and_the_readme_says_so() -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "dra_migrate", "--version"], capture_output=True, text=True
    )
    assert ran.returncode == 0 and ran.stdout == invoke(["--version"]).stdout
    assert "`python -m dra_migrate` runs the same command line as `dra-migrate`" in README
    assert "pipx install ." in README and "pipx inject dra-migrate kubernetes" in README


def test_the_contributor_docs_name_every_test_that_needs_shared() -> None:
    """Every test module that reads ``SHARED`` is named where the README says what
    ``../shared`` is, so a contributor whose tests skip knows why."""
    development = _section(README, "Development")
    assert "`../shared`" in development
    users = sorted(
        p.relative_to(REPO).as_posix()
        for p in (REPO / "tests").rglob("test_*.py")
        if p.name != "test_docs.py"
        and re.search(r"\bSHARED\b|\bshared_dir\(", p.read_text(encoding="utf-8"))
    )
    assert users, "tests read ../shared"
    missing = [u for u in users if f"`{u}`" not in development]
    assert missing == []
    for folder in ("corpus/dra", "corpus/real", "schemas-ext"):
        assert f"`../shared/{folder}" in development
    assert REPO.parent / "shared" == SHARED
