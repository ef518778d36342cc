"""The command line on click: shell completion, one meaning an option name, --color and
NO_COLOR in the options value, and the options every command takes (-o, --quiet,
--format)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dra_migrate.cli import app
from dra_migrate.pipeline.options import RunOptions
from tests.cli.test_cli import DEPLOYMENT
from tests.helpers.cli_runner import Result, invoke


def run(folder: Path, *args: str, env: dict[str, str | None] | None = None) -> Result:
    old = Path.cwd()
    os.chdir(folder)
    try:
        return invoke(list(args), env=env)
    finally:
        os.chdir(old)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "gpu.yaml").write_text(DEPLOYMENT)
    return tmp_path


# --- shell completion --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o nosort -F _dra_migrate_completion dra-migrate"),
        ("zsh", "#compdef dra-migrate"),
        ("fish", "complete --no-files --command dra-migrate"),
    ],
)
def test_click_gives_the_completion_script_of_each_shell(shell: str, marker: str) -> None:
    done = invoke([], env={app.COMPLETE_VAR: f"{shell}_source"})
    assert done.exit_code == 0, done.output
    assert marker in done.stdout
    assert "_DRA_MIGRATE_COMPLETE" in done.stdout  # the script asks the CLI back


def complete(shell: str, words: str, cword: str) -> list[str]:
    done = invoke(
        [],
        env={app.COMPLETE_VAR: f"{shell}_complete", "COMP_WORDS": words, "COMP_CWORD": cword},
    )
    assert done.exit_code == 0, done.output
    return done.stdout.splitlines()


def test_completions_of_a_partial_command_and_option() -> None:
    assert complete("bash", "dra-migrate con", "1") == ["plain,convert"]
    assert complete("bash", "dra-migrate ", "1") == [f"plain,{c}" for c in app.COMMANDS]
    # zsh: type, value, help (or _) per completion
    assert complete("zsh", "dra-migrate inv", "1")[:2] == ["plain", "inventory"]
    assert "--format" in complete("zsh", "dra-migrate scan --form", "2")
    # fish gives the incomplete word itself
    fish = complete("fish", "dra-migrate inventory --kube", "--kube")
    assert [line.split("\t")[0] for line in fish] == ["plain,--kubeconfig", "plain,--kube-context"]
    # a choice's values
    assert complete("bash", "dra-migrate report --format ", "3") == [
        "plain,text",
        "plain,markdown",
        "plain,html",
        "plain,json",
    ]
    # an unknown command completes nothing (an empty line), and is no error
    assert complete("bash", "dra-migrate nosuch --f", "2") == [""]


# --- --color and NO_COLOR, into the options value ---------------------------------------


@pytest.mark.parametrize(
    ("flag", "no_color", "expected"),
    [
        ((), None, "auto"),
        ((), "", "auto"),  # an empty NO_COLOR is no NO_COLOR
        ((), "1", "never"),
        (("--color", "always"), "1", "always"),  # the flag wins over NO_COLOR
        (("--color", "never"), None, "never"),
        (("--color=auto",), "yes", "never"),
    ],
)
@pytest.mark.parametrize("command", ["scan", "validate", "report", "inventory"])
def test_color_and_no_color_are_parsed_into_the_options(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    flag: tuple[str, ...],
    no_color: str | None,
    expected: str,
) -> None:
    from dra_migrate.cli import run as cli_run

    seen: list[RunOptions] = []

    def show_text(report: Any, name: str, options: RunOptions, stream: Any) -> None:
        seen.append(options)

    monkeypatch.setattr(cli_run, "show_text", show_text)
    (repo / "dump.yaml").write_text(DEPLOYMENT)
    paths = ["dump.yaml"] if command == "inventory" else ["."]
    done = run(repo, command, *flag, *paths, env={"NO_COLOR": no_color})
    assert done.exit_code in (0, 1), done.output
    assert [o.color for o in seen] == [expected]


def test_color_is_a_choice(repo: Path) -> None:
    done = run(repo, "scan", "--color", "sometimes", ".")
    assert done.exit_code == 2
    assert "argument --color: invalid choice: 'sometimes'" in done.stderr


# --- one meaning an option name ----------------------------------------------------------


def test_inventory_context_is_a_usage_error_that_names_kube_context(repo: Path) -> None:
    (repo / "dump.yaml").write_text(DEPLOYMENT)
    for args in (["--context", "prod", "dump.yaml"], ["--cluster", "--context=prod"]):
        done = run(repo, "inventory", *args)
        assert done.exit_code == 2, done.output
        assert done.stderr.startswith("dra-migrate: error: inventory takes no --context")
        assert "--kube-context" in done.stderr and "Traceback" not in done.output
    done = run(repo, "inventory", "--kube-context", "prod", "dump.yaml")
    assert done.exit_code == 2
    assert "--kubeconfig and --kube-context need --cluster" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["scan", "."],
        ["convert", "--check", "."],
        ["validate", "."],
        ["report", "."],
        ["deviceclasses", "--whole-mapping", "--strategy", "bridge", "--kube-version", "1.36"],
        ["inventory", "dump.yaml"],
    ],
    ids=lambda args: args[0],
)
def test_every_command_writes_its_report_with_o(repo: Path, args: list[str]) -> None:
    (repo / "dump.yaml").write_text(DEPLOYMENT)
    fmt = "yaml" if args[0] == "deviceclasses" else "json"
    done = run(repo, *args, "-o", "out.txt", "--format", fmt, "--quiet")
    assert done.exit_code in (0, 1), done.output
    written = (repo / "out.txt").read_text()
    if fmt == "json":
        json.loads(written)
    else:
        assert "kind: DeviceClass" in written
    assert "using" not in done.stderr  # --quiet: no summary, no mapping line
    assert "Traceback" not in done.output


def test_quiet_leaves_only_errors_on_stderr(repo: Path) -> None:
    loud = run(repo, "scan", ".")
    assert "dra-migrate: using the built-in mapping" in loud.stderr
    quiet = run(repo, "scan", "-q", ".")
    assert quiet.stderr == "" and quiet.stdout == loud.stdout


def test_deviceclasses_as_json_is_the_list_of_the_yaml(repo: Path) -> None:
    import yaml

    args = ("deviceclasses", "--whole-mapping", "--strategy", "bridge", "--kube-version", "1.36")
    as_yaml = run(repo, *args)
    as_json = run(repo, *args, "--format", "json")
    assert as_yaml.exit_code == as_json.exit_code == 0, as_json.output
    listed = json.loads(as_json.stdout)
    assert listed["kind"] == "List"
    assert listed["items"] == [d for d in yaml.safe_load_all(as_yaml.stdout) if d]
    assert {item["kind"] for item in listed["items"]} == {"DeviceClass"}


# --- the parser -----------------------------------------------------------------------------


def test_paths_that_start_with_a_dash_after_double_dash(repo: Path) -> None:
    (repo / "-q.yaml").write_text(DEPLOYMENT.replace("name: infer", "name: dashed"))
    done = run(repo, "scan", "--format", "json", "--", "-q.yaml", "gpu.yaml")
    assert done.exit_code == 0, done.output
    assert {i["path"] for i in json.loads(done.stdout)["inventory"]} == {"-q.yaml", "gpu.yaml"}
    refused = run(repo, "scan", "-q.yaml")  # before --: short options -q, -., ...
    assert refused.exit_code == 2 and "unrecognized arguments" in refused.stderr


def test_an_unknown_option_is_refused_with_a_suggestion(repo: Path) -> None:
    done = run(repo, "convert", "--chek", ".")
    assert done.exit_code == 2
    assert "unrecognized arguments: --chek (did you mean --check" in done.stderr
    assert done.stderr.startswith("Usage: dra-migrate convert [OPTIONS] [PATHS]...")


def test_completion_of_finding_codes_and_paths() -> None:
    # explain DRA22<TAB>: the codes that start so, in the table's order
    codes = complete("bash", "dra-migrate explain DRA22", "2")
    from dra_migrate.report.findings import CODES

    expected = [f"plain,{c}" for c in CODES if c.startswith("DRA22")]
    assert codes == expected and len(expected) > 1
    assert complete("bash", "dra-migrate explain dra22", "2") == expected  # any case
    assert complete("bash", "dra-migrate explain 22", "2") == expected
    # zsh shows each code's title beside it
    zsh = complete("zsh", "dra-migrate explain DRA222", "2")
    assert zsh[:3] == ["plain", "DRA222", CODES["DRA222"].title]
    # PATHS: the shell's own file completion, in every command that takes them
    for command in ("scan", "convert", "validate", "report", "deviceclasses"):
        assert complete("bash", f"dra-migrate {command} exa", "2") == ["file,exa"]
