"""git asked in processes of its own, and started before the CLI is imported (git.py).

What is started early from the command line is a guess; these tests hold that a
guess only ever costs time: the run takes over a search that answers what it
asks, narrows one that looked for other strings, and the reports of a whole
process (which starts searches early) are those of a run in this process (which
does not).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate import git, validate
from dra_migrate.cli.app import command
from dra_migrate.convert.mapping import PROFILE_NEEDLE, load_config
from dra_migrate.pipeline import suppress
from dra_migrate.repo import roles
from tests.cli.test_cli import DEPLOYMENT
from tests.conftest import REPO

if shutil.which("git") is None:  # pragma: no cover - CI has git
    pytest.skip("git is not installed", allow_module_level=True)

PLAIN = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  a: b\n"


@pytest.fixture(autouse=True)
def _nothing_left_running() -> object:
    yield
    git.stop_unclaimed()


def _repo(root: Path, files: dict[str, str], staged: bool = True) -> Path:
    """A git work tree with ``files``, added to the index unless not ``staged``
    (git grep -L rules out tracked files only)."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    if staged:
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    return root


def test_the_strings_started_early_are_those_the_commands_ask_for() -> None:
    # a guess that no longer matches would cost every run a second search, silently
    needles = load_config(None).needles()
    assert set(git.CONVERT_STRINGS) == {
        *needles,
        b"ResourceClaimTemplate",
        suppress.MARKER,
        PROFILE_NEEDLE,
    }
    assert set(git.VALIDATE_STRINGS) == {*validate.NEEDLES, suppress.MARKER}


def test_the_options_that_take_a_value_are_the_clis() -> None:
    # a value option missing here would be taken for a path, a flag listed here
    # would hide the path after it: either only costs time, but both are held
    taking, flags = set(), set()
    for name in ("scan", "convert", "validate"):
        for param in command(name).params:
            if isinstance(param, click.Option):
                names = {*param.opts, *param.secondary_opts}
                (flags if param.is_flag or param.count else taking).update(names)
    assert flags and taking == git.VALUE_OPTIONS
    assert not flags & git.VALUE_OPTIONS


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["a", "b.yaml"], (["a", "b.yaml"], [], False)),
        (["--context", ".", "a.yaml"], (["a.yaml"], ["."], False)),
        (["--context=ctx", "-j", "2", "x"], (["x"], ["ctx"], False)),
        (["-j2", "--show-suppressed", "x"], (["x"], [], False)),
        (["--format", "json", "--exclude", "gen/", "-", "y"], (["-", "y"], [], False)),
        (["--changed-since", "main", "--context", "c", "p"], (["p"], ["c"], True)),
        (["x", "--", "--not-an-option"], (["x", "--not-an-option"], [], False)),
    ],
)
def test_the_command_line_is_read_as_the_cli_reads_it(args: list[str], expected: tuple) -> None:
    assert git._arguments(args) == expected


@pytest.mark.parametrize(
    "args",
    [
        ["a", "--context", "c", "b"],
        ["--context=c", "-j", "2", "x"],
        ["-j2", "--show-suppressed", "x"],
        ["-qj", "2", "x"],  # short options run together, the value after them
        ["-qj2", "x"],
        ["-qo", "r.json", "x"],
        ["--format", "json", "-o", "r.json", "--exclude", "gen/", "x", "y"],
        ["--changed-since", "main", "--context", "c", "p"],
        ["--context", "--", "p"],  # an option's value may be --
        ["x", "--", "--context", "-q"],
        ["--", "--", "-x"],
    ],
)
@pytest.mark.parametrize("name", ["scan", "convert", "validate"])
def test_the_command_line_is_read_as_click_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, args: list[str]
) -> None:
    for folder in ("c", "--"):  # --context values must exist
        (tmp_path / folder).mkdir()
    monkeypatch.chdir(tmp_path)
    ctx = command(name).make_context(name, list(args))
    paths, context, changed = git._arguments(args)
    assert (paths, context) == (list(ctx.params["paths"]), list(ctx.params["context"]))
    assert changed == (ctx.params["changed_since"] is not None)


def _fresh(root: Path, strings: tuple[bytes, ...]) -> set[str]:
    return set(git._without(str(root), strings).names(ok=(0, 1)) or [])


def test_a_search_started_early_is_taken_over(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {"gpu.yaml": DEPLOYMENT, "plain.yaml": PLAIN, "k/Kustomization": "resources: []\n"},
    )
    (root / "k" / "kustomization.yaml").write_text("resources: []\n")  # untracked: listed
    git.prestart(["scan", str(root)])
    early = git._started["without", str(root)]
    search = git.without(str(root), git.CONVERT_STRINGS)
    assert search is early
    assert set(search.names(ok=(0, 1)) or []) == {"plain.yaml"}
    listing = git.files(str(root))
    # the layout's question, about the top of the work tree, its kustomizations: a
    # run over the top asks git once for both (one walk of the folders)
    assert git.kustomizations(os.path.realpath(root)) is listing
    assert not git._started
    every = ["gpu.yaml", "k/Kustomization", "k/kustomization.yaml", "plain.yaml"]
    assert sorted(listing.names() or []) == every
    assert sorted(listing.names() or []) == every  # answered twice, from one listing
    # below the top, or for a --context run (the index), two questions
    git.prestart(["scan", str(root / "k")])
    assert git._started["files", str(root / "k")] is not git._started.get(
        ("kustomizations", os.path.realpath(root), False)
    )
    git.stop_unclaimed()
    listed = roles._work_tree_kustomizations(os.path.realpath(root), False)
    layout_files = [os.path.basename(p) for p in listed or ()]
    assert layout_files == ["Kustomization", "kustomization.yaml"]


def test_git_lists_and_searches_only_the_files_a_run_looks_at(tmp_path: Path) -> None:
    # a repository's code and docs are never read by git for the run (kserve: Go)
    root = _repo(
        tmp_path,
        {
            "main.go": "// nvidia.com/gpu\n",
            "README.md": "ResourceClaimTemplate\n",
            "Chart/Values.YAML": PLAIN,  # extensions in any case, as the walk takes them
            "t/_helpers.tpl": "{{/* ResourceClaimTemplate */}}\n",
            "a.json": "{}\n",
            "b.yml": PLAIN,
            "x/y/z.yaml": PLAIN,  # two folders down (git 2.39 and :(icase) lost it)
        },
        staged=False,
    )
    files = ["Chart/Values.YAML", "a.json", "b.yml", "t/_helpers.tpl", "x/y/z.yaml"]
    for tracked in (False, True):  # untracked, then tracked; from the top and below it
        assert sorted(git.files(str(root)).names() or []) == files
        assert git.files(str(root / "Chart")).names() == ["Values.YAML"]
        assert git.files(str(root / "x" / "y")).names() == ["z.yaml"]
        # git grep -L searches tracked files only: an untracked file is never ruled out
        ruled_out = ["z.yaml"] if tracked else []
        assert git.without(str(root / "x" / "y"), (b"x",)).names(ok=(0, 1)) == ruled_out
        without = git.without(str(root), (b"ResourceClaimTemplate",)).names(ok=(0, 1))
        ruled_out = ["Chart/Values.YAML", "a.json", "b.yml", "x/y/z.yaml"] if tracked else []
        assert sorted(without or []) == ruled_out
        ruled_out = ["_helpers.tpl"] if tracked else []
        assert git.without(str(root / "t"), (b"x",)).names(ok=(0, 1)) == ruled_out
        defining = git.containing(str(root), b"ResourceClaimTemplate").names(ok=(0, 1))
        assert defining == ["t/_helpers.tpl"]
        assert git.containing(str(root / "t"), b"Resource").names(ok=(0, 1)) == ["_helpers.tpl"]
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    early=st.sets(st.sampled_from([b"alpha", b"beta", b"gamma", b"delta"])),
    asked=st.sets(st.sampled_from([b"alpha", b"beta", b"gamma", b"delta"]), min_size=1),
)
def test_an_early_search_for_other_strings_gives_the_files_without_any(
    tmp_path_factory: pytest.TempPathFactory, early: set[bytes], asked: set[bytes]
) -> None:
    # the early search looked for more, fewer or other strings than the run asks
    # for: what the run gets lists no file holding one of the strings it asks for
    root = _repo(
        tmp_path_factory.mktemp("r"),
        {
            f"{'-'.join(sorted(s.decode() for s in combo)) or 'none'}.yaml": PLAIN
            + "".join(f"# {s.decode()}\n" for s in combo)
            for combo in ((), (b"alpha",), (b"beta",), (b"alpha", b"gamma"), (b"delta",))
        },
    )
    git._started["without", str(root)] = git._without(str(root), (*early, *git.ALSO_WANTED))
    got = set(git.without(str(root), tuple(asked)).names(ok=(0, 1)) or [])
    expected = _fresh(root, (*asked, *git.ALSO_WANTED))
    assert got <= expected  # never a file that holds an asked string
    if early <= asked:  # it looked for nothing the run does not: the very same files
        assert got == expected


def test_a_file_with_a_configured_resource_is_read_though_the_early_search_missed_it(
    tmp_path: Path,
) -> None:
    # the early search looks for the built-in names; the project's mapping adds one
    fpga = DEPLOYMENT.replace("nvidia.com/gpu", "example.com/fpga")
    config = (
        "resources:\n  - name: example.com/fpga\n    deviceClass: fpga.example.com\n"
        "builtins: false\n"
    )
    root = _repo(tmp_path, {"fpga.yaml": fpga, ".dra-migrate.yaml": config, "p.yaml": PLAIN})
    out = _whole_process(root, "scan", "--format", "json", ".")
    assert '"fpga.yaml"' in out and "example.com/fpga" in out


def _whole_process(cwd: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "dra_migrate", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("scan", "--format", "json", "."),
        ("convert", "--check", "--format", "json", "."),
        ("validate", "--format", "json", "."),
        ("convert", "--check", "--format", "json", "--context", ".", "apps/gpu.yaml"),
    ],
)
def test_a_whole_process_reports_what_a_run_in_this_process_reports(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    root = _repo(
        tmp_path,
        {
            "apps/gpu.yaml": DEPLOYMENT,
            "apps/plain.yaml": PLAIN,
            # an overlay that patches the GPU request of a base, and one that renames
            "base/kustomization.yaml": "resources:\n  - ../apps/gpu.yaml\n",
            "overlays/prod/kustomization.yaml": "resources:\n  - ../../base\n"
            "patches:\n  - path: gpu.yaml\n",
            "overlays/prod/gpu.yaml": DEPLOYMENT,
            "overlays/dev/kustomization.yaml": "resources:\n  - ../../base\nnamePrefix: dev-\n",
            "claims/template.yaml": "apiVersion: resource.k8s.io/v1\n"
            "kind: ResourceClaimTemplate\nmetadata:\n  name: worker-gpu\n"
            "spec:\n  spec:\n    devices:\n      requests: []\n",
        },
    )
    from tests.helpers.cli_runner import invoke

    with contextlib.chdir(root):
        inside = invoke(list(args)).stdout
    assert _whole_process(root, *args) == inside


def test_a_hook_naming_many_files_starts_one_listing_of_kustomizations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path, {f"apps/{i}.yaml": PLAIN for i in range(5)})
    monkeypatch.chdir(root)
    git.prestart(["convert", "--check", "--context", ".", *(f"apps/{i}.yaml" for i in range(5))])
    # what the context defines is asked by context.py, from its kept answer
    # and a --context run lists the kustomizations of the index only (staged)
    assert sorted(git._started) == [("kustomizations", os.path.realpath(root), True)]
    git.stop_unclaimed()
    git.prestart(["convert", "-"])  # standard input: nothing to ask git
    assert not git._started


def test_a_hook_that_converts_nothing_does_not_wait_for_the_kustomizations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # only a staged kustomization can be reported then (DRA219): the listing of the
    # work tree's kustomizations, started early, is stopped unread
    root = _repo(tmp_path, {"apps/a.yaml": PLAIN, "apps/kustomization.yaml": "resources: []\n"})
    asked: list[str] = []
    listing = git.kustomizations
    monkeypatch.setattr(
        git, "kustomizations", lambda top, staged=False: asked.append(top) or listing(top, staged)
    )
    from tests.helpers.cli_runner import invoke

    with contextlib.chdir(root):
        done = invoke(["convert", "--check", "--context", ".", "apps/a.yaml"])
        assert done.exit_code == 0, done.output
        assert asked == []
        invoke(["convert", "--check", "apps/a.yaml"])  # a plain run still asks
        assert asked == [os.path.realpath(root)]


def test_the_users_git_configuration_does_not_change_the_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path, {"x/y/a.yaml": PLAIN, "x/y/t.yaml": "kind: ResourceClaimTemplate\n"})
    settings = {"color.grep": "always", "color.ui": "always", "grep.fullName": "true"}
    monkeypatch.setenv("GIT_CONFIG_COUNT", str(len(settings)))
    for i, (key, value) in enumerate(settings.items()):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{i}", key)
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{i}", value)
    below = str(root / "x")
    assert git.containing(below, b"ResourceClaimTemplate").names(ok=(0, 1)) == ["y/t.yaml"]
    assert git.without(below, (b"ResourceClaimTemplate",)).names(ok=(0, 1)) == ["y/a.yaml"]
    assert sorted(git.files(below).names() or []) == ["y/a.yaml", "y/t.yaml"]


def test_what_is_never_claimed_is_stopped(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"plain.yaml": PLAIN})
    git.prestart(["convert", "--context", str(root), str(root)])
    started = list(git._started.values())
    # the listing and the search of the folder, the kustomizations
    assert len(started) == 3
    git.stop_unclaimed()
    assert not git._started
    for search in started:
        assert search.code is not None and search.out is None  # reaped, spool closed


def test_without_posix_spawn_or_memfd_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path, {"gpu.yaml": DEPLOYMENT, "plain.yaml": PLAIN})
    expected = _fresh(root, git.CONVERT_STRINGS)
    monkeypatch.setattr(git, "_SPAWN", False)
    monkeypatch.delattr(os, "memfd_create", raising=False)
    git.prestart(["scan", str(root)])
    assert not git._started  # nothing is started early without posix_spawn
    search = git.without(str(root), git.CONVERT_STRINGS)
    assert search.process is not None  # subprocess, into a temporary file
    assert set(search.names(ok=(0, 1)) or []) == expected == {"plain.yaml"}


def test_outside_a_work_tree_or_without_git_there_is_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.yaml").write_text(PLAIN)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert git.files(str(tmp_path)).names() is None
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    search = git.files(str(tmp_path))
    assert search.names() is None
    search.cancel()  # nothing to stop: no error


@pytest.mark.skipif(not git._SPAWN, reason="posix_spawn only: subprocess reaps its own")
def test_a_search_reaped_elsewhere_gives_no_answer(tmp_path: Path) -> None:
    # (SIGCHLD ignored, or a forked worker holding the parent's searches)
    root = _repo(tmp_path, {"a.yaml": PLAIN})
    search = git.files(str(root))
    assert search.pid is not None
    os.waitpid(search.pid, 0)
    assert search.names() is None  # the run reads the files itself


def test_git_grep_leaves_a_core_to_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    assert b"--threads=%d" % git.grep_threads() in git.GREP
    for cores, threads in ((1, 1), (2, 1), (8, 7)):
        monkeypatch.setattr(os, "sched_getaffinity", lambda _pid, n=cores: set(range(n)))
        assert git.grep_threads() == threads
