"""Hostile input, third round (issue 35): the proofs that run helm and kubectl
(``convert --verify-helm``, ``--verify-builds``), units of files written as one, the
chart pass's YAML reading, cluster mode's bounds, binary lookup and signals.

Each case is the smallest input that showed a defect; the proofs run with the real
helm and kubectl (the ``tools`` fixture), or with a stand-in where the case is about
what runs at all (a binary committed in the repository, a build that never ends)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.helpers.cli_runner import Result, invoke

CHART_EXAMPLE = REPO / "examples" / "charts" / "inference"
KUSTOMIZE_EXAMPLE = REPO / "examples" / "kustomize"
SECRET = "s3cr3t-runner-token-4711"


def _cli(args: list[str], cwd: Path, path: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m dra_migrate ARGS`` in ``cwd`` with ``PATH`` set to ``path``."""
    return subprocess.run(
        [sys.executable, "-m", "dra_migrate", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO), "PATH": path, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _system_path(tools: Path | None = None) -> str:
    return os.pathsep.join([*([str(tools)] if tools else []), "/usr/bin", "/bin"])


def _chart_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(CHART_EXAMPLE, repo / "chart")
    return repo


def _fake(folder: Path, name: str, body: str) -> Path:
    """An executable shell script ``name`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return script


# --- nothing outside the repository is read, copied or printed ----------------------------


@pytest.mark.parametrize("where", ["credentials", "environ"])
def test_a_chart_link_to_a_runner_secret_is_refused_and_never_printed(
    tmp_path: Path, tools: Path, where: str
) -> None:
    """A chart file links to a credential file of the runner (or /proc/self/environ),
    and a template puts it into a ``fail``: the copy refuses the link (DRA250), so
    helm never reads it, and the secret is in no log, annotation or report."""
    repo = _chart_repo(tmp_path)
    if where == "credentials":
        secret = tmp_path / "runner" / ".credentials"
        secret.parent.mkdir()
        secret.write_text(f"token: {SECRET}\n")
    else:
        secret = Path("/proc/self/environ")
    (repo / "chart" / "files").mkdir()
    (repo / "chart" / "files" / "leak.txt").symlink_to(secret)
    (repo / "chart" / "templates" / "leak.yaml").write_text(
        '{{ fail (.Files.Get "files/leak.txt") }}\n'
    )
    for fmt in ("text", "json", "sarif", "github"):
        done = _cli(
            ["convert", "--verify-helm", "--format", fmt, "--output", "report.out", "."],
            repo,
            _system_path(tools),
            RUNNER_SECRET=SECRET,
        )
        report = (repo / "report.out").read_text()
        for text in (done.stdout, done.stderr, report):
            assert SECRET not in text
        assert "DRA250" in report, report
        assert "Traceback" not in done.stderr
    assert "chart/files/leak.txt is a symbolic link to" in done.stderr, done.stderr


def test_a_chart_link_to_dev_zero_is_refused_before_a_byte_is_copied(
    tmp_path: Path, tools: Path
) -> None:
    from dra_migrate.pipeline import processes

    repo = _chart_repo(tmp_path)
    (repo / "chart" / "zero").symlink_to("/dev/zero")
    (repo / "chart" / "root").symlink_to("/")
    copied = processes.copy_tree(repo / "chart", tmp_path / "copy", repo)
    assert sorted(link for link, _ in copied.links_out) == ["root", "zero"]
    assert not (tmp_path / "copy" / "zero").exists() and not (tmp_path / "copy" / "root").exists()
    done = _cli(["convert", "--verify-helm", "."], repo, _system_path(tools))
    assert done.returncode == 1 and "DRA250" in done.stderr, done.stderr


def test_a_chart_folder_linked_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    """The chart folder itself is a link to a folder outside the repository: nothing
    of it is copied (the proof is refused: DRA250)."""
    from dra_migrate.pipeline import processes, renders

    repo = tmp_path / "repo"
    shutil.copytree(CHART_EXAMPLE, tmp_path / "elsewhere" / "chart")
    repo.mkdir()
    (repo / "chart").symlink_to(tmp_path / "elsewhere" / "chart")
    with pytest.raises(processes.Outside):
        processes.copy_tree(repo / "chart", tmp_path / "copy", repo)
    assert not (tmp_path / "copy").exists()
    with pytest.raises(renders.Refused, match="outside the repository"):
        renders._copy(str(repo / "chart"), "chart", str(tmp_path / "proof"), {}, str(repo))


def test_a_copy_keeps_links_inside_as_links_and_never_opens_a_fifo(tmp_path: Path) -> None:
    from dra_migrate.pipeline import processes

    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "file.yaml").write_text("x: 1\n")
    (tree / "link.yaml").symlink_to(Path("a", "file.yaml"))
    (tree / "absolute.yaml").symlink_to(tree / "a" / "file.yaml")
    os.mkfifo(tree / "pipe.yaml")
    copied = processes.copy_tree(tree, tmp_path / "copy")
    copy = tmp_path / "copy"
    assert os.readlink(copy / "link.yaml") == os.path.join("a", "file.yaml")
    assert os.readlink(copy / "absolute.yaml") == os.path.join("a", "file.yaml")  # relative
    assert (copy / "absolute.yaml").read_text() == "x: 1\n"
    assert copied.not_regular == ["pipe.yaml"] and not (copy / "pipe.yaml").exists()
    with pytest.raises(processes.TooLarge):
        processes.copy_tree(tree, tmp_path / "small", size=3)
    with pytest.raises(processes.TooLarge):
        processes.copy_tree(tree, tmp_path / "few", files=2)


def test_helm_error_text_is_never_passed_through(tmp_path: Path, tools: Path) -> None:
    """What helm prints may hold what the chart read: the finding says how the
    rendering failed and where (the chart-relative template and line), nothing else."""
    repo = _chart_repo(tmp_path)
    (repo / "chart" / "templates" / "boom.yaml").write_text(
        f'# one line\n{{{{ fail (printf "%s" "{SECRET}") }}}}\n'
    )
    done = _cli(["convert", "--verify-helm", "--format", "json", "."], repo, _system_path(tools))
    assert SECRET not in done.stdout + done.stderr
    (found,) = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "DRA248"]
    message = found["message"]
    assert "exit status 1; a template stops the rendering (fail, required)" in message, message
    assert "at templates/boom.yaml line 2" in message, message
    assert f"(helm: {tools / 'helm'})" in message, message


def test_rendered_output_is_read_to_the_size_limit(tmp_path: Path, tools: Path) -> None:
    """A 6-line template that renders far more than the file stage's size limit: the
    rendering is read as a stream and helm is stopped at the limit."""
    repo = _chart_repo(tmp_path)
    (repo / ".dra-migrate.yaml").write_text("maxFileSize: 1Mi\n")
    (repo / "chart" / "templates" / "big.yaml").write_text('# {{ repeat 4000000 "x" }}\n')
    done = _cli(["convert", "--verify-helm", "--format", "json", "."], repo, _system_path(tools))
    found = [f["message"] for f in json.loads(done.stdout)["findings"] if f["code"] == "DRA248"]
    assert found and "its output is larger than the size limit (1 MiB)" in found[0], found


def test_kustomize_errors_name_repository_paths_only(tmp_path: Path, tools: Path) -> None:
    """kubectl's error names the copy's absolute path: the finding names the folder as
    the run shows it, and no path of the machine."""
    repo = tmp_path / "repo"
    shutil.copytree(KUSTOMIZE_EXAMPLE, repo)
    (repo / "base" / "empty").mkdir()
    (repo / "base" / "empty" / "README").write_text("nothing to build\n")
    kustomization = repo / "base" / "kustomization.yaml"
    kustomization.write_text(
        kustomization.read_text().replace("  - service.yaml\n", "  - service.yaml\n  - empty\n")
    )
    done = _cli(["convert", "--verify-builds", "."], repo, _system_path(tools))
    lines = [x for x in done.stderr.splitlines() if "DRA252" in x and "not verified" in x]
    assert lines, done.stderr
    assert "a resource folder holds no kustomization" in lines[0], lines
    assert "at base/empty" in lines[0], lines
    # the binary that built is named as found (an absolute PATH entry, which may be under
    # /tmp where the checkout is); no other path of the machine: no copy's, no tmp_path
    shown = done.stderr.replace(str(tools / "kubectl"), "KUBECTL")
    assert "(built with KUBECTL kustomize)" in shown, shown
    assert str(tmp_path) not in shown and "/tmp" not in shown, shown


def test_a_kustomize_resource_linked_outside_the_repository_is_refused(
    tmp_path: Path, tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One resource links to a file of the runner: the build is refused (DRA250) and
    nothing above the repository is copied (the copy root is inside it)."""
    from dra_migrate.pipeline import processes

    repo = tmp_path / "repo"
    shutil.copytree(KUSTOMIZE_EXAMPLE, repo)
    outside = tmp_path / "runner" / "cred.yaml"
    outside.parent.mkdir()
    outside.write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {SECRET}\n")
    (repo / "base" / "cred.yaml").symlink_to(outside)
    kustomization = repo / "base" / "kustomization.yaml"
    kustomization.write_text(
        kustomization.read_text().replace("  - service.yaml\n", "  - service.yaml\n  - cred.yaml\n")
    )
    copied: list[str] = []
    real_copy = processes.copy_tree

    def spy(source: Any, target: Any, *args: Any, **kwargs: Any) -> Any:
        copied.append(os.path.realpath(source))
        return real_copy(source, target, *args, **kwargs)

    monkeypatch.setattr(processes, "copy_tree", spy)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PATH", _system_path(tools))
    done = invoke(["convert", "--verify-builds", "--write", "."])
    assert done.exit_code == 1, done.output
    assert "DRA250" in done.stderr and "cred.yaml" in done.stderr, done.stderr
    assert SECRET not in done.output
    assert all(p.startswith(str(repo.resolve())) for p in copied), copied
    assert "resourceClaims" not in (repo / "base" / "deployment.yaml").read_text()  # unwritten


REMOTES = [
    "https://example.com/org/repo/deploy.yaml",
    "http://169.254.169.254/latest/meta-data",
    "github.com/org/repo//deploy?ref=v1.0.0",
    "git@github.com:org/repo.git//deploy",
    "ssh://git@example.com/org/repo.git",
    "git::https://example.com/org/repo",
    "gh:org/repo",
    "https://dev.azure.com/org/project/_git/repo",
    "not-in-the-repository",
]


@pytest.mark.parametrize("entry", REMOTES)
@pytest.mark.parametrize("field", ["resources", "components", "patches"])
def test_a_remote_kustomize_base_is_refused_before_any_build(
    tmp_path: Path, entry: str, field: str
) -> None:
    """A remote resource, base, component or patch (any of kustomize's URL and git
    forms, or a name that is no file of the repository): DRA251 before any build, and
    kubectl (a stand-in that says when it runs) never runs."""
    repo = tmp_path / "repo"
    shutil.copytree(KUSTOMIZE_EXAMPLE, repo)
    calls = tmp_path / "calls"
    bin_dir = tmp_path / "bin"
    _fake(bin_dir, "kubectl", f'echo "$@" >> {calls}\nexit 1\n')
    kustomization = repo / "base" / "kustomization.yaml"
    text = kustomization.read_text()
    if field == "resources":  # (a second resources key would be a duplicate: DRA005)
        text = text.replace("  - service.yaml\n", f"  - service.yaml\n  - {entry}\n")
    else:
        line = f"  - path: {entry}\n" if field == "patches" else f"  - {entry}\n"
        text += f"{field}:\n{line}"
    kustomization.write_text(text)
    done = _cli(["convert", "--verify-builds", "."], repo, _system_path(bin_dir))
    assert "DRA251" in done.stderr, done.stderr
    assert f"names {entry!r}" in done.stderr, done.stderr
    assert not calls.exists(), calls.read_text()


# --- bounded in time: one budget, a share each --------------------------------------------


def test_the_proofs_have_one_time_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build that never ends holds its share, not the run: the next builds are not
    started once the budget is spent, and say so."""
    from dra_migrate.pipeline import processes

    repo = tmp_path / "repo"
    shutil.copytree(KUSTOMIZE_EXAMPLE, repo)
    for name in ("staging", "dev"):  # three overlays of one base
        shutil.copytree(repo / "overlays" / "prod", repo / "overlays" / name)
    bin_dir = tmp_path / "bin"
    _fake(bin_dir, "kubectl", f"exec {shutil.which('sleep')} 600\n")
    budget = processes.Budget(total=1.5, share=1.0)
    assert budget.next_share() <= 1.0
    monkeypatch.setattr(processes, "Budget", lambda: budget)
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PATH", str(bin_dir))
    done = invoke(["convert", "--verify-builds", "--every-note", "."])
    said = [x for x in done.stderr.splitlines() if "DRA252" in x and "not verified" in x]
    assert len(said) == 4, done.stderr  # the base and the three overlays
    assert "stopped: no answer within 1 seconds" in said[0], said
    assert any("the proofs' time budget of 1.5 seconds is spent" in x for x in said), said


# --- nothing from the repository runs -----------------------------------------------------


@pytest.mark.parametrize("entry", ["", ".", "bin-in-repo"])
def test_a_binary_committed_in_the_repository_never_runs(tmp_path: Path, entry: str) -> None:
    """An empty PATH entry, ``.`` or a relative one names the working folder: a
    ``helm``, ``kubectl`` or ``git`` there is never found (Go's exec.ErrDot)."""
    from dra_migrate import git
    from dra_migrate.pipeline import processes

    repo = _chart_repo(tmp_path)
    marker = tmp_path / "ran"
    folder = repo / entry if entry not in ("", ".") else repo
    for name in ("helm", "kubectl", "kustomize", "git"):
        _fake(folder, name, f"touch {marker}\nexit 0\n")
    path = os.pathsep.join([entry, "/nonexistent"])
    cwd = os.getcwd()
    try:
        os.chdir(repo)
        assert git.which("helm", path) is None and git.which("git", path) is None
    finally:
        os.chdir(cwd)
    for flag in ("--verify-helm", "--verify-builds"):
        done = _cli(["convert", flag, "."], repo, path)
        assert done.returncode == 2 and "on PATH" in done.stderr, done.stderr
    assert not marker.exists()
    assert os.path.isabs(processes.which("sh") or "")


# --- temporary folders and processes on SIGTERM and SIGINT --------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_proofs_folder_is_removed_on_a_signal(tmp_path: Path, signum: int) -> None:
    repo = _chart_repo(tmp_path)
    started = tmp_path / "started"
    bin_dir = tmp_path / "bin"
    _fake(bin_dir, "helm", f"echo $$ > {started}.tmp\nmv {started}.tmp {started}\nexec sleep 600\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "dra_migrate", "convert", "--verify-helm", "--write", "."],
        cwd=repo,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            "PATH": _system_path(bin_dir),
            "TMPDIR": str(temp),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(600):
            if started.exists() or process.poll() is not None:
                break
            time.sleep(0.1)
        assert started.exists(), process.communicate()
        assert list(temp.iterdir())  # the proofs' folder, while helm runs
        process.send_signal(signum)
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert "interrupted; 0 file(s) written (none); every other file is as it was" in err, err
    assert "Traceback" not in err
    assert not list(temp.iterdir()), list(temp.iterdir())
    helm_pid = int(started.read_text())
    assert not _running(helm_pid)
    assert "resourceClaims" not in (repo / "chart" / "templates" / "deployment.yaml").read_text()


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] not in ("Z", "X")
    except OSError:
        return False


# --- the chart pass reads YAML through the one bounded loader -----------------------------

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(7)
)


def test_every_yaml_reader_refuses_an_alias_bomb() -> None:
    from dra_migrate.manifests import compose
    from dra_migrate.pipeline import compare, renders
    from dra_migrate.report.findings import InputProblem

    with pytest.raises(InputProblem) as refused:
        compose.load_data(BOMB, "values.yaml")
    assert refused.value.finding.code == "DRA030"
    import yaml

    with pytest.raises(yaml.YAMLError):
        compare.loaded(BOMB.encode())
    assert renders._json(BOMB) == json.dumps(BOMB)  # (taken as text, never expanded)


def test_the_chart_pass_reads_values_within_the_alias_limit(tmp_path: Path) -> None:
    """A values.yaml alias bomb (100 million nodes expanded) next to a GPU template:
    the run ends with the finding, in bounded memory and CPU (a subprocess limited to
    2 GiB and 10 seconds of CPU, about ten times what it takes; the chart pass used to
    take two minutes and 2.3 GB)."""
    repo = _chart_repo(tmp_path)
    values = repo / "chart" / "values.yaml"
    values.write_text(
        values.read_text() + "bomb:\n" + "".join("  " + x + "\n" for x in BOMB.splitlines())
    )
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))\n"
        "resource.setrlimit(resource.RLIMIT_CPU, (10, 10))\n"
        "from dra_migrate.cli.app import cli\n"
        "sys.argv = ['dra-migrate', 'convert', '--jobs', '1', '.']\n"
        "cli.main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, (done.returncode, done.stderr)  # (not killed: SIGXCPU)
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
    assert "DRA030" in done.stderr, done.stderr


# --- cluster mode: one deadline for the whole listing, a page limit sized to a cluster ----


@pytest.fixture
def endless(tmp_path: Path) -> Iterator[tuple[Any, Path]]:
    from tests.helpers.fake_apiserver import sample_cluster, serve, write_kubeconfig

    state = sample_cluster()
    state.continue_mode = "endless"
    with serve(state) as url:
        yield state, write_kubeconfig(tmp_path / "kubeconfig", url)


def _pods_listed(state: Any) -> int:
    return sum(1 for _m, p in state.requests if p.split("?")[0].endswith("/pods"))


def test_the_default_page_limit_is_the_largest_supported_cluster(
    endless: tuple[Any, Path],
) -> None:
    """150,000 pods (Kubernetes' documented largest cluster) at the page size used:
    a server that never stops paging is refused there, not after 10,000 pages."""
    from dra_migrate.cluster.live import default_max_pages

    state, kubeconfig = endless
    assert default_max_pages(500) == 301 and default_max_pages(1000) == 151
    done = invoke(
        ["inventory", "--cluster", "--kubeconfig", str(kubeconfig), "-A", "--page-size", "1000"]
    )
    assert done.exit_code == 123 and "DRA612" in done.stderr, done.output
    assert "more than 151 pages of 1000" in done.stderr, done.stderr
    assert _pods_listed(state) == 151


def test_one_deadline_for_the_whole_listing(endless: tuple[Any, Path]) -> None:
    state, kubeconfig = endless
    done = invoke(
        [
            "inventory",
            "--cluster",
            "--kubeconfig",
            str(kubeconfig),
            "-A",
            "--page-size",
            "1",
            "--max-pages",
            "100000000",
            "--list-timeout",
            "1",
        ]
    )
    assert done.exit_code == 123 and "DRA612" in done.stderr, done.output
    assert "was not read within 1 seconds (--list-timeout" in done.stderr, done.stderr
    assert _pods_listed(state) < 100000000


# --- a unit is written whole or not at all ------------------------------------------------


def _overlay_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(KUSTOMIZE_EXAMPLE, repo)
    return repo


def _snapshot(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _failing_on(
    monkeypatch: pytest.MonkeyPatch, name: str, nth: int, code: int = errno.ENOSPC, times: int = 1
) -> list[int]:
    """``os.<name>`` of the writer's files (those of the ``.dra-migrate`` suffix: the
    staged and the kept-aside ones) raising OSError(code) from its ``nth`` call on,
    ``times`` times."""
    real = getattr(os, name)
    calls = [0]

    def failing(*args: Any, **kwargs: Any) -> Any:
        if not str(args[0]).endswith(".dra-migrate"):
            return real(*args, **kwargs)
        calls[0] += 1
        if nth <= calls[0] < nth + times:
            raise OSError(code, os.strerror(code))
        return real(*args, **kwargs)

    monkeypatch.setattr(os, name, failing)
    return calls


@pytest.mark.parametrize("step", ["replace", "open"])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
@pytest.mark.parametrize("kind", ["kustomize", "chart"])
def test_a_unit_is_written_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, kind: str, step: str
) -> None:
    """Disk full, a read-only file system or a permission error on the second file of a
    unit, as its temporary file is made (``open``) or put in place (``replace``): every
    file of the unit is as it was, and the findings name the unit's kind and the file
    that failed."""
    repo = _overlay_repo(tmp_path) if kind == "kustomize" else _chart_repo(tmp_path)
    before = _snapshot(repo)
    monkeypatch.chdir(repo)
    _failing_on(monkeypatch, step, 2, code)
    done = invoke(["convert", "--write", "."])
    assert done.exit_code == 123, done.output
    assert _snapshot(repo) == before, done.stderr
    assert not [p for p in repo.rglob("*") if p.name.endswith(".dra-migrate")]
    label = (
        "kustomize overlay overlays/prod/kustomization.yaml"
        if kind == "kustomize"
        else "Helm chart chart"
    )
    assert f"another file of its unit ({label})" in done.stderr, done.stderr
    assert "DRA009" in done.stderr and os.strerror(code) in done.stderr, done.stderr
    assert "kustomize overlay unit" not in done.stderr or kind == "kustomize"


def test_an_output_folder_gets_a_unit_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--output-dir writes a unit's copies as one too: the second failing leaves the
    output folder as it was (an earlier copy put back)."""
    repo = _chart_repo(tmp_path)
    out = tmp_path / "out"
    (out / "chart" / "templates").mkdir(parents=True)
    (out / "chart" / "templates" / "deployment.yaml").write_text("an earlier copy\n")
    monkeypatch.chdir(repo)
    _failing_on(monkeypatch, "replace", 2, errno.ENOSPC)
    done = invoke(["convert", "--output-dir", str(out), "."])
    assert done.exit_code == 123, done.output
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == ["chart/templates/deployment.yaml"], files
    assert (out / "chart" / "templates" / "deployment.yaml").read_text() == "an earlier copy\n"
    assert "another file of its unit (Helm chart chart)" in done.stderr, done.stderr


def test_a_unit_that_cannot_be_put_back_says_which_file_is_in_which_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _chart_repo(tmp_path)
    before = _snapshot(repo)
    monkeypatch.chdir(repo)
    _failing_on(monkeypatch, "replace", 2, errno.EIO, times=2)  # the second, and its put back
    done = invoke(["convert", "--write", "."])
    assert done.exit_code == 123, done.output
    said = [x for x in done.stderr.splitlines() if "DRA016" in x]
    assert said, done.stderr
    assert "unit Helm chart chart is half written (putting back failed)" in said[0], said
    after = _snapshot(repo)
    written = [p for p in after if after[p] != before.get(p)]
    assert written, said
    for path in written:
        assert path in said[0].split("left written: ")[1].split(";")[0], (path, said)


def test_a_signal_mid_unit_waits_for_the_unit_and_the_summary_is_true(tmp_path: Path) -> None:
    """SIGTERM while the second file of a chart unit is put in place: the unit is put in
    place whole (the signal is taken after it), and the summary names every file
    written, the one in flight included."""
    repo = _chart_repo(tmp_path)
    before = _snapshot(repo)
    script = (
        "import os, signal, sys\n"
        "from dra_migrate.cli.app import cli\n"
        "real = os.replace\n"
        "count = [0]\n"
        "def replace(*a, **k):\n"
        "    count[0] += str(a[0]).endswith('.dra-migrate')\n"
        "    if count[0] == 1:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return real(*a, **k)\n"
        "os.replace = replace\n"
        "sys.argv = ['dra-migrate', 'convert', '--write', '--jobs', '1', '.']\n"
        "cli.main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 130, done.stderr
    after = _snapshot(repo)
    changed = sorted(p for p in after if after[p] != before.get(p))
    assert len(changed) == 3, changed  # the unit, whole
    line = next(x for x in done.stderr.splitlines() if "interrupted;" in x)
    assert f"interrupted; {len(changed)} file(s) written" in line, line
    for path in changed:
        assert path in line, (path, line)
    assert "every other file is as it was" in line


def test_docs_say_what_the_proofs_read_run_and_write() -> None:
    readme = (REPO / "README.md").read_text()
    ci = (REPO / "docs" / "ci.md").read_text()
    for text in (readme, ci):
        assert "--verify-helm" in text and "--verify-builds" in text
    safety = readme.split("## Safety", 1)[1].split("\n## ", 1)[0]
    for words in ("absolute", "link", "offline", "stderr", "time budget"):
        assert words in safety, words
    for words in ("HELM_NO_PLUGINS", "DRA250", "DRA251", "time budget"):
        assert words in ci, words


def _result_text(result: Result) -> str:
    return result.output
