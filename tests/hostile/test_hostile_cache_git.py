"""Hostile input, second round (issue 22), part 1: the cache folder, git, kept facts,
the names reserved from existing templates, ``--changed-since``.

Each test holds the smallest input that shows the defect it guards against.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate import cache
from tests.conftest import REPO
from tests.helpers.invariants import gpu_pod


def git(root: Path, *args: str) -> str:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    done = subprocess.run(
        ["git", *identity, "-C", str(root), *args], check=True, capture_output=True, text=True
    )
    return done.stdout


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache home of the test's own, the cache module's state forgotten after."""
    where = tmp_path / "cache-home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(where))
    cache.adopt(())
    yield where / "dra-migrate"
    cache.adopt(())


def _shape(value: Any) -> Any:
    if not isinstance(value, list):
        raise TypeError("not a list")
    return value


# --- the cache: data only, private, validated, bounded, never inside the tree --------


def test_files_are_0600_in_a_0700_folder_under_any_umask(home: Path) -> None:
    old = os.umask(0)
    try:
        cache.write("t", "key", "stamp", [1, 2])
    finally:
        os.umask(old)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    [kept] = home.iterdir()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert cache.read("t", "key", "stamp", _shape) == [1, 2]


def test_a_folder_others_may_write_or_read_is_not_used(home: Path) -> None:
    home.mkdir(parents=True)
    for mode in (0o777, 0o755, 0o710):
        home.chmod(mode)
        cache.adopt(())
        cache.write("t", "key", "stamp", [1])
        assert list(home.iterdir()) == []
        assert cache.read("t", "key", "stamp", _shape) is None


def test_a_linked_folder_is_not_used(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    home.parent.mkdir()
    home.symlink_to(elsewhere)
    cache.write("t", "key", "stamp", [1])
    assert list(elsewhere.iterdir()) == []


def _planted(home: Path, kind: str, key: str) -> Path:
    cache.write(kind, key, "stamp", [1])
    [kept] = home.iterdir()
    return kept


def test_a_link_to_dev_zero_or_a_fifo_is_never_read(home: Path) -> None:
    kept = _planted(home, "t", "key")
    kept.unlink()
    kept.symlink_to("/dev/zero")
    assert cache.read("t", "key", "stamp", _shape) is None  # O_NOFOLLOW: at once
    kept.unlink()
    os.mkfifo(kept, 0o600)
    assert cache.read("t", "key", "stamp", _shape) is None  # not a regular file: no wait


def test_a_file_others_may_write_or_too_large_is_not_read(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _planted(home, "t", "key")
    kept.chmod(0o666)
    assert cache.read("t", "key", "stamp", _shape) is None
    kept.chmod(0o600)
    assert cache.read("t", "key", "stamp", _shape) == [1]
    monkeypatch.setattr(cache, "MAX_FILE", 10)
    assert cache.read("t", "key", "stamp", _shape) is None


@pytest.mark.parametrize(
    "forged",
    [
        b"\x80\x05not json",
        b"[1]",
        b'{"format": 2}',
        b'{"format": 2, "version": "0.0.0", "kind": "t", "stamp": "stamp", "key": "key", "value": [1]}',
        b'{"format": 2, "version": "%s", "kind": "t", "stamp": "stamp", "key": "another", "value": [1]}',
        b'{"format": 2, "version": "%s", "kind": "t", "stamp": "old", "key": "key", "value": [1]}',
        b'{"format": 2, "version": "%s", "kind": "t", "stamp": "stamp", "key": "key", "value": {}}',
        b"[" * 100_000,
    ],
)
def test_what_is_not_a_valid_kept_answer_is_a_miss(home: Path, forged: bytes) -> None:
    from dra_migrate import __version__

    kept = _planted(home, "t", "key")
    kept.write_bytes(forged.replace(b"%s", __version__.encode()))
    assert cache.read("t", "key", "stamp", _shape) is None


def test_the_folder_is_bounded_least_recently_used_first(home: Path) -> None:
    for number in range(6):
        cache.write("t", f"key{number}", "stamp", [number])
    files = sorted(home.iterdir())
    for age, path in enumerate(sorted(files, key=lambda p: json.loads(p.read_text())["key"])):
        os.utime(path, (1000 + age, 1000 + age))  # key0 the least recently used
    (home / ".left-by-a-killed-run.tmp").write_text("x")
    os.utime(home / ".left-by-a-killed-run.tmp", (1000, 1000))
    (home / "cel-grammar-0123.pickle").write_bytes(b"\x80\x05")
    cache.prune(max_files=4)
    left = sorted(json.loads(p.read_text())["key"] for p in home.iterdir())
    assert left == ["key2", "key3", "key4", "key5"]
    cache.prune(max_bytes=2 * (home / os.listdir(home)[0]).stat().st_size)
    assert len(os.listdir(home)) == 2


def test_writing_many_answers_keeps_the_folder_bounded(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "MAX_FILES", 10)
    monkeypatch.setattr(cache, "PRUNE_EVERY", 4)
    for number in range(40):
        cache.write("t", f"key{number}", "stamp", [number])
    assert len(os.listdir(home)) <= 10 + 4


def test_a_cache_inside_the_scanned_repository_is_never_used(tmp_path: Path) -> None:
    # docs/ci.md's GitLab recipe once kept XDG_CACHE_HOME inside the checkout: a merge
    # request could commit the cache's files. Such a folder is not used at all.
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "k").mkdir()
    (repo / "k" / "kustomization.yaml").write_text("resources: [pod.yaml]\npatches: []\n")
    (repo / "k" / "pod.yaml").write_text(gpu_pod("p"))
    env = {**os.environ, "XDG_CACHE_HOME": str(repo / ".cache"), "PYTHONPATH": str(REPO)}
    for args in (["scan", "k"], ["convert", "."], ["validate", "k"]):
        done = subprocess.run(
            [sys.executable, "-m", "dra_migrate", *args], cwd=repo, env=env, capture_output=True
        )
        assert b"Traceback" not in done.stderr
        assert not (repo / ".cache").exists(), args  # not even made
    # outside the repository the same runs keep what they learnt
    env["XDG_CACHE_HOME"] = str(tmp_path / "outside")
    subprocess.run(
        [sys.executable, "-m", "dra_migrate", "scan", "k"], cwd=repo, env=env, capture_output=True
    )
    assert os.listdir(tmp_path / "outside" / "dra-migrate")


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", ".cache")  # the XDG specification: ignored
    monkeypatch.setenv("HOME", "/home/someone")
    assert cache.location() == "/home/someone/.cache/dra-migrate"


def test_no_module_reads_a_pickle_or_marshal() -> None:
    # nothing read from disk is executed: the package holds no unpickler at all
    for path in (REPO / "dra_migrate").rglob("*.py"):
        text = path.read_text()
        for word in ("import pickle", "pickle.load", "import marshal", "marshal.load"):
            assert word not in text, (path, word)


def test_the_data_built_into_the_package_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "build_data.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# --- kept facts: keyed by a cryptographic digest of path and content ---------------

# two kustomizations of one length and one CRC-32 (forged: the a/b letters of the
# comment solve the CRC's linear equations), the first with a GPU patch
PATCHING = "resources: [deploy.yaml]\npatches: [{path: gpu.yaml}]\n# the production GPU patch\n"
FORGED = "resources: [deploy.yaml]\n# ababbbbbbababaaabbbbaaaaabbbbbbaaaaaaaaaaaaaaaaaaaaa\n"


def test_two_kustomizations_forged_to_collide_never_share_facts(home: Path, tmp_path: Path) -> None:
    import zlib

    from dra_migrate.repo import roles

    assert len(PATCHING) == len(FORGED) and zlib.crc32(PATCHING.encode()) == zlib.crc32(
        FORGED.encode()
    )
    for first, second in ((FORGED, PATCHING), (PATCHING, FORGED)):
        for run in range(2):  # learnt, then kept in the cache folder and read from it
            reader = roles._Reader()
            facts = {}
            for number, text in enumerate((first, second)):
                path = tmp_path / f"{number}{first == PATCHING}" / "kustomization.yaml"
                path.parent.mkdir(exist_ok=True)
                path.write_text(text)
                facts[text] = reader.facts(str(path), text.encode())
            reader.keep()
            assert facts[PATCHING].patch_files == ("gpu.yaml",), run
            assert facts[FORGED].patch_files == () and not facts[FORGED].patches, run


# --- git: only for the user's work trees, with the repository's helpers off --------


def _hostile_repository(folder: Path, marker: Path) -> None:
    """A repository whose configuration names a program for every helper git has: the
    fsmonitor hook, a clean/smudge filter and a textconv its .gitattributes applies to
    every file, an external diff, hooks. Each run of one appends to ``marker``."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    script = folder.parent / f"{folder.name}-helper.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\ncat\n')
    script.chmod(0o755)
    hooks = folder.parent / f"{folder.name}-hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "pre-commit", "reference-transaction", "post-checkout"):
        (hooks / hook).write_text(f'#!/bin/sh\necho "hook {hook}" >> "{marker}"\n')
        (hooks / hook).chmod(0o755)
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q")
    # this driver has "=" in its name: git -c would cut the name there
    (folder / ".gitattributes").write_text("* filter=x diff=y\nkustomization.yaml filter=x=y\n")
    (folder / "gpu.yaml").write_text(gpu_pod("inside-the-archive"))
    (folder / "kustomization.yaml").write_text("resources: [gpu.yaml]\npatches: []\n")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "archive")
    for key, value in (
        ("core.fsmonitor", script),
        ("filter.x.clean", script),
        ("filter.x.smudge", script),
        ("filter.x.process", script),
        ("filter.x=y.clean", script),
        ("diff.y.textconv", script),
        ("diff.external", script),
        ("core.hooksPath", hooks),
    ):
        git(folder, "config", key, str(value))
    (folder / "gpu.yaml").write_text(gpu_pod("inside-the-archive") + "# edited\n")
    # every entry of the index "racily clean": comparing the work tree with a commit
    # then hashes each file, through its filter driver
    os.utime(folder / ".git" / "index", (946684800, 946684800))


def _run(cwd: Path, *args: str, home: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "dra_migrate", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    return done


def test_a_nested_repository_is_read_as_plain_files_and_git_never_runs_in_it(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "MARKER"
    user = tmp_path / "user"
    user.mkdir()
    git(user, "init", "-q")
    (user / "pod.yaml").write_text(gpu_pod("mine"))
    git(user, "add", "-A")
    git(user, "commit", "-q", "-m", "start")
    _hostile_repository(user / "artifact", marker)
    home = tmp_path / "cache"
    runs = [
        ["scan", "."],
        ["scan", "artifact"],
        ["scan", "artifact/gpu.yaml"],
        ["convert", "."],
        ["convert", "--context", ".", "artifact/gpu.yaml"],
        ["validate", "."],
        ["validate", "--context", "artifact", "pod.yaml"],
        ["validate", "--changed-since", "HEAD", "."],
        ["scan", "--changed-since", "HEAD", "."],
    ]
    for args in runs:
        done = _run(user, *args, home=home)
        assert not marker.exists(), (args, marker.read_text())
        if args[0] == "scan" and "--changed-since" not in args:
            assert b"inside-the-archive" in done.stdout, (args, done.stdout.decode())
    # the same archive outside any work tree, scanned from its parent: read plainly too
    plain = tmp_path / "downloads"
    _hostile_repository(plain / "archive", marker)
    for args in (["scan", "."], ["convert", "."], ["validate", "."]):
        done = _run(plain, *args, home=home)
        assert not marker.exists(), (args, marker.read_text())
    assert b"inside-the-archive" in _run(plain, "scan", ".", home=home).stdout


def test_a_hostile_repository_named_on_the_command_line_runs_none_of_its_helpers(
    tmp_path: Path,
) -> None:
    # a work tree the user names is asked with every helper off: nothing it configures runs
    marker = tmp_path / "MARKER"
    _hostile_repository(tmp_path / "named", marker)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    home = tmp_path / "cache"
    named = str(tmp_path / "named")
    for args in (
        ["scan", named],
        ["convert", named],
        ["validate", named],
        ["convert", "--context", named, f"{named}/gpu.yaml"],
        ["validate", "--changed-since", "HEAD", named],
        ["scan", "--changed-since", "HEAD", named],
    ):
        done = _run(elsewhere, *args, home=home)
        assert done.returncode in (0, 1), (args, done.stderr.decode())
        assert not marker.exists(), (args, marker.read_text())
    done = _run(elsewhere, "scan", "--changed-since", "HEAD", named, home=home)
    assert b"inside-the-archive" in done.stdout  # gpu.yaml changed since HEAD: reported


# --- --changed-since: a ref is never an option; what references a change is checked --


@pytest.mark.parametrize(
    "ref", ["--independent", "--octopus", "--fork-point", "--", "-x", "", "HEAD\nHEAD", "nope"]
)
def test_a_changed_since_ref_that_is_an_option_or_no_commit_is_a_usage_error(
    tmp_path: Path, ref: str
) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "pod.yaml").write_text(gpu_pod("p"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    for command in ("validate", "scan", "convert"):
        done = _run(repo, command, f"--changed-since={ref}", ".", home=tmp_path / "cache")
        assert done.returncode == 2, (command, ref, done.stderr.decode())
        assert b"--changed-since" in done.stderr and b"Traceback" not in done.stderr


TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {name}
  namespace: ml
spec:
  spec:
    devices:
      requests:
      - name: {request}
        exactly:
          deviceClassName: gpu.nvidia.com
"""
CLAIMING = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: ml
spec:
  containers:
  - name: c
    image: i
    resources:
      claims:
      - name: gpu
        request: gpu
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: gpus
"""


def _errors(done: subprocess.CompletedProcess[bytes]) -> list[str]:
    return sorted(
        line.split(": ")[0] + " " + line.split(": ")[1].split()[0]
        for line in done.stdout.decode().splitlines()
        if ": DRA3" in line
    )


@pytest.mark.parametrize(
    "change",
    ["rename the request", "rename the template", "delete the template"],
)
def test_changed_since_checks_the_files_that_reference_what_changed_or_vanished(
    tmp_path: Path, change: str
) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "templates").mkdir()
    template = repo / "templates" / "gpus.yaml"
    template.write_text(TEMPLATE.format(name="gpus", request="gpu"))
    (repo / "pod.yaml").write_text(CLAIMING)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "branch", "base")
    if change == "rename the request":
        template.write_text(TEMPLATE.format(name="gpus", request="renamed"))
    elif change == "rename the template":
        template.write_text(TEMPLATE.format(name="renamed", request="gpu"))
    else:
        template.unlink()
    git(repo, "commit", "-q", "-a", "-m", "the pull request")
    home = tmp_path / "cache"
    full = _run(repo, "validate", ".", home=home)
    focused = _run(repo, "validate", "--changed-since", "base", ".", home=home)
    assert _errors(full), full.stdout.decode()  # the pod's claim is broken now
    assert _errors(focused) == _errors(full)
    assert focused.returncode == full.returncode


# --- names are reserved from parsed objects: no byte search narrows them -------------

# "ResourceClaimTemplate" as a double-quoted YAML scalar (or a JSON string) spells it
ESCAPED_KINDS = {
    "x": '"Resource\\x43laimTemplate"',
    "u": '"Resource\\u0043laimTemplate"',
    "U": '"Resource\\U00000043laimTemplate"',
    "slash": '"Resource\\/ClaimTemplate"',  # not a name, but the parse decides
    **{
        f"break {name}": f'"Resource\\{brk}  ClaimTemplate"'
        for name, brk in (
            ("LF", "\n"),
            ("CRLF", "\r\n"),
            ("CR", "\r"),
            ("NEL", "\x85"),
            ("LS", "\u2028"),
            ("PS", "\u2029"),
        )
    },
}
EXISTING = """\
apiVersion: resource.k8s.io/v1
kind: {kind}
metadata: {{name: p-gpu, namespace: ml}}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {{deviceClassName: gpu.nvidia.com}}
"""


def _generated_names(done: subprocess.CompletedProcess[bytes]) -> list[str]:
    lines = done.stdout.decode().splitlines()
    return [
        lines[i + 2].split("name:")[1].strip()
        for i, line in enumerate(lines)
        if line == "+kind: ResourceClaimTemplate"
    ]


@pytest.mark.parametrize("escape", sorted(ESCAPED_KINDS))
def test_an_escaped_kind_still_reserves_its_name(tmp_path: Path, escape: str) -> None:
    import yaml

    kind = ESCAPED_KINDS[escape]
    loaded = yaml.safe_load(EXISTING.format(kind=kind))["kind"]
    taken = loaded == "ResourceClaimTemplate"
    assert taken or escape == "slash"
    home = tmp_path / "cache"
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "existing.yaml").write_bytes(EXISTING.format(kind=kind).encode())
    (plain / "pod.yaml").write_text(gpu_pod("p"))
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "existing.yaml").write_bytes(EXISTING.format(kind=kind).encode())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "an existing template")
    (repo / "pod.yaml").write_text(gpu_pod("p"))
    git(repo, "add", "-A")  # staged, as a hook sees it
    runs = [
        (plain, ["convert", "."]),  # one run over both files
        (plain, ["convert", "--context", ".", "pod.yaml"]),  # context outside git
        (repo, ["convert", "."]),  # git lists and searches
        (repo, ["convert", "--context", ".", "pod.yaml"]),  # the index (context.py)
        (repo, ["convert", "--context", ".", "pod.yaml"]),  # the kept answer
        (repo, ["convert", "--changed-since", "HEAD", "."]),  # git grep -l defining
    ]
    for cwd, args in runs:
        names = _generated_names(_run(cwd, *args, home=home))
        assert len(names) == 1, (args, names)
        assert (names[0] != "p-gpu") is taken, (args, names)


def test_a_template_in_a_nested_repository_reserves_its_name_with_changed_since(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "pod.yaml").write_text(gpu_pod("p"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    (repo / "vendor").mkdir()
    git(repo / "vendor", "init", "-q")
    (repo / "vendor" / "existing.yaml").write_text(EXISTING.format(kind="ResourceClaimTemplate"))
    (repo / "pod.yaml").write_text(gpu_pod("p") + "# edited\n")
    done = _run(repo, "convert", "--changed-since", "HEAD", ".", home=tmp_path / "cache")
    assert _generated_names(done) not in ([], ["p-gpu"]), done.stdout.decode()


_BREAKS = ("\n", "\r\n", "\r", "\x85", "\u2028", "\u2029")


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_no_spelling_of_a_needle_in_a_double_quoted_scalar_escapes_the_prefilters(
    data: st.DataObject,
) -> None:
    # whatever escapes spell a needle, YAML reads the needle back, and both byte and
    # text prefilters say the document may mention it (so it is composed)
    import yaml

    from dra_migrate import git
    from dra_migrate.manifests import compose
    from dra_migrate.repo import discover

    needle = data.draw(st.sampled_from([*git.CONVERT_STRINGS, b"resourceClaimTemplateName"]))
    text = needle.decode()
    # one way of spelling, at some places: each prefilter must see every way alone
    form = data.draw(st.sampled_from(["x", "u", "U", "/", *_BREAKS]))
    places = data.draw(st.sets(st.integers(1, len(text) - 1), min_size=1))
    spelled = []
    for at, char in enumerate(text):
        if at not in places:
            spelled.append(char)
        elif form == "x":
            spelled.append(f"\\x{ord(char):02x}")
        elif form == "u":
            spelled.append(f"\\u{ord(char):04X}")
        elif form == "U":
            spelled.append(f"\\U{ord(char):08x}")
        elif form == "/":
            spelled.append("\\/" if char == "/" else char)
        else:  # an escaped line break: the next line's indentation is dropped
            spelled.append("\\" + form + "  " + char)
    document = f'key: "{"".join(spelled)}"\n'
    assert yaml.safe_load(document)["key"] == text
    assert discover.mentions(document.encode(), [needle])
    assert compose.mentions(document, (text,))


@pytest.mark.parametrize("key", ["patches", '"p\\x61tches"', '"patc\\u0068es"'])
def test_an_overlay_whose_patches_key_is_escaped_still_guards_its_base(
    tmp_path: Path, key: str
) -> None:
    # the layout's byte search for kustomizations to parse takes escapes as mentions:
    # the overlay's GPU patch is seen, so the base it patches is never converted alone
    # (here the patch holds a $patch directive, which keeps the unit as it is)
    root = tmp_path / "r"
    (root / "base").mkdir(parents=True)
    (root / "overlay").mkdir()
    (root / "base" / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    (root / "base" / "pod.yaml").write_text(gpu_pod("p"))
    (root / "overlay" / "kustomization.yaml").write_text(
        f"resources: [../base]\n{key}:\n- path: gpu.yaml\n"
    )
    (root / "overlay" / "gpu.yaml").write_text(
        "$patch: replace\n" + gpu_pod("p").replace("gpu: 1", "gpu: 2")
    )
    done = _run(root, "convert", ".", home=tmp_path / "cache")
    assert b"DRA222" in done.stderr + done.stdout, (done.stdout + done.stderr).decode()
    assert b"+kind: ResourceClaimTemplate" not in done.stdout


def test_a_claim_whose_template_key_is_escaped_still_uses_a_template(tmp_path: Path) -> None:
    # what decides a renaming overlay's DRA219: a parsed reference, whatever its spelling
    from dra_migrate.pipeline.one_file import uses_templates

    claiming = CLAIMING.replace("resourceClaimTemplateName", '"resourceClaim\\x54emplateName"')
    path = tmp_path / "pod.yaml"
    path.write_text(claiming)
    assert uses_templates(str(path))
