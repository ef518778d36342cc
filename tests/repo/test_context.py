"""What a --context folder defines (context.py): the index's view, kept between runs.

The kept answer must always be the answer read from scratch: these tests change a
repository the ways a user does (stage, commit, edit without staging, delete,
rename, commit many) and compare the kept answer with one computed from nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dra_migrate import git
from dra_migrate.repo import context
from tests.helpers.invariants import TRAIN_JOB as _JOB
from tests.helpers.invariants import claim_template

LIMIT = 4 << 20


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    done = subprocess.run(
        ["git", *identity, "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return done.stdout


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _repo(root: Path, files: dict[str, str], commit: bool = True) -> Path:
    _git(root.parent, "init", "-q", str(root))
    _write(root, files)
    _git(root, "add", "-A")
    if commit:
        _git(root, "commit", "-q", "-m", "start")
    return root


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache-home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache / "dra-migrate"


def _defined(root: Path, folder: str = ".", excludes: tuple[str, ...] = ()) -> dict[str, set]:
    """Path from the top -> the (namespace, name) pairs, as a run is told them."""
    found = context.Lookup([str(root / folder)], excludes, LIMIT).result()
    assert found is not None
    real = os.path.realpath(root)
    return {os.path.relpath(path, real): set(t) for path, t in found.items()}


def _from_scratch(root: Path) -> dict[str, set]:
    """The same answer read from the index with git alone (no kept answer)."""
    from dra_migrate.manifests.locate import defined_templates

    found = {}
    names = _git(root, "ls-files", "-z", "--cached").split("\0")
    for name in filter(None, names):
        if not name.lower().endswith(git.EXTENSIONS):
            continue
        data = subprocess.run(
            ["git", "-C", str(root), "cat-file", "blob", f":0:{name}"],
            capture_output=True,
            check=False,
        ).stdout
        templates = defined_templates(data)
        if templates:
            found[name] = templates
    return found


def _kept(cache: Path) -> dict:
    (kept,) = cache.glob("context-*.json")
    return json.loads(kept.read_text())["value"]  # cache.py's envelope around the answer


def test_the_context_is_the_index_committed_staged_not_what_is_only_on_disk(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path / "r", {"a/one.yaml": claim_template("one"), "b/plain.yaml": "a: 1\n"})
    _write(root, {"a/two.yaml": claim_template("two", "team")})
    _git(root, "add", "a/two.yaml")  # staged, not committed: part of the commit
    _write(root, {"b/plain.yaml": claim_template("unstaged")})  # edited, not staged
    _write(root, {"c/untracked.yaml": claim_template("untracked")})  # never added
    assert _defined(root) == {
        "a/one.yaml": {("ml", "one")},
        "a/two.yaml": {("team", "two")},
    }


def test_a_kept_answer_is_used_and_follows_every_change_since(
    tmp_path: Path, _own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path / "r", {"t/one.yaml": claim_template("one"), "x.yaml": "a: 1\n"})
    assert _defined(root) == {"t/one.yaml": {("ml", "one")}}
    anchor = _kept(_own_cache)["tree"]
    assert anchor == _git(root, "rev-parse", "HEAD^{tree}").strip()

    asked: list[list[bytes]] = []
    started = git.Git.__init__

    def spy(self: git.Git, top: str, args: list[bytes], *rest: object, **kw: object) -> None:
        asked.append(list(args))
        started(self, top, args, *rest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(git.Git, "__init__", spy)
    # a commit that adds one template and empties another file
    _write(root, {"t/two.yaml": claim_template("two"), "t/one.yaml": "kind: ConfigMap\n"})
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "two")
    assert _defined(root) == {"t/two.yaml": {("ml", "two")}} == _from_scratch(root)
    # nothing searched the repository again: one diff against the kept tree, one read
    assert [a[0] for a in asked] == [b"diff-index", b"cat-file"]
    # a staged deletion and a staged rename
    asked.clear()
    (root / "moved").mkdir()
    _git(root, "mv", "t/two.yaml", "moved/two.yaml")
    assert _defined(root) == {"moved/two.yaml": {("ml", "two")}} == _from_scratch(root)
    _git(root, "rm", "-q", "-f", "moved/two.yaml")
    assert _defined(root) == {} == _from_scratch(root)
    assert b"grep" not in [a[0] for a in asked]
    assert _kept(_own_cache)["tree"] == anchor  # a few changes: the anchor stays


def test_many_changes_move_the_anchor_to_head(
    tmp_path: Path, _own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path / "r", {"t/one.yaml": claim_template("one")})
    _defined(root)
    first = _kept(_own_cache)["tree"]
    monkeypatch.setattr(context, "REANCHOR", 1)
    _write(root, {f"t/{i}.yaml": claim_template(f"n{i}") for i in range(3)})
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "three")
    read: list[str] = []
    blobs = context._blobs

    def spy(top: str, prefix: bytes, paths: list[str], limit: int) -> Iterator[Any]:
        read.extend(paths)
        return blobs(top, prefix, paths, limit)

    monkeypatch.setattr(context, "_blobs", spy)
    assert _defined(root) == _from_scratch(root)
    assert len(read) == 3  # each changed file read once, at HEAD, as the anchor moved
    head = _git(root, "rev-parse", "HEAD^{tree}").strip()
    kept = _kept(_own_cache)
    assert kept["tree"] == head != first
    assert sorted(kept["files"]) == ["t/0.yaml", "t/1.yaml", "t/2.yaml", "t/one.yaml"]
    # staged but not committed: the anchor cannot move to them, the answer holds them
    _write(root, {f"u/{i}.yaml": claim_template(f"u{i}") for i in range(3)})
    _git(root, "add", "-A")
    assert _defined(root) == _from_scratch(root)
    assert _kept(_own_cache)["tree"] == head


def test_the_anchor_gone_or_a_damaged_file_builds_the_answer_again(
    tmp_path: Path, _own_cache: Path
) -> None:
    root = _repo(tmp_path / "r", {"t/one.yaml": claim_template("one")})
    _defined(root)
    (kept_file,) = _own_cache.glob("context-*.json")
    kept = json.loads(kept_file.read_text())
    kept["value"]["tree"] = "0" * 40  # a tree that is not in the repository (history rewritten)
    kept_file.write_text(json.dumps(kept))
    assert _defined(root) == {"t/one.yaml": {("ml", "one")}}
    kept_file.write_text('{"stamp": ')
    assert _defined(root) == {"t/one.yaml": {("ml", "one")}}
    # a kept answer of another version of this package is not used
    kept = json.loads(kept_file.read_text())
    kept["stamp"] = "another version"
    kept["value"]["files"] = {"t/one.yaml": [10, [["ml", "stale"]], []]}
    kept_file.write_text(json.dumps(kept))
    assert _defined(root) == {"t/one.yaml": {("ml", "one")}}


def test_a_repository_without_a_commit_is_read_from_its_index(
    tmp_path: Path, _own_cache: Path
) -> None:
    root = _repo(tmp_path / "r", {"t/one.yaml": claim_template("one")}, commit=False)
    assert _defined(root) == {"t/one.yaml": {("ml", "one")}}
    assert not list(_own_cache.glob("context-*.json"))  # no tree to keep an answer for


def test_the_index_git_commit_names_is_the_one_read(tmp_path: Path) -> None:
    # git commit -a and git commit PATH run the hooks on a temporary index, named
    # by GIT_INDEX_FILE: the context is what that index holds
    root = _repo(tmp_path / "r", {"t/one.yaml": claim_template("one")})
    _defined(root)
    other = tmp_path / "other-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(other)}
    _git(root, "read-tree", "HEAD", env=env)
    _write(root, {"t/two.yaml": claim_template("two")})
    _git(root, "add", "t/two.yaml", env=env)
    os.environ["GIT_INDEX_FILE"] = str(other)
    try:
        assert _defined(root) == {"t/one.yaml": {("ml", "one")}, "t/two.yaml": {("ml", "two")}}
    finally:
        del os.environ["GIT_INDEX_FILE"]
    assert _defined(root) == {"t/one.yaml": {("ml", "one")}}


def test_the_folder_excludes_size_limit_and_odd_names(tmp_path: Path) -> None:
    odd = {
        "deploy/a b.yaml": claim_template("spaced"),
        "deploy/new\nline.yaml": claim_template("newline"),
        "deploy/caf\u00e9.YML": claim_template("accented"),
        "deploy/vendor/v.yaml": claim_template("vendored"),
        "deploy/notes.md": claim_template("not-a-manifest"),
        "elsewhere/e.yaml": claim_template("elsewhere"),
    }
    root = _repo(tmp_path / "r", odd)
    _write(root, {"deploy/late.yaml": claim_template("late")})
    _git(root, "add", "-A")  # read from the index through the batch, newline aside
    expected = {
        "deploy/a b.yaml": {("ml", "spaced")},
        "deploy/new\nline.yaml": {("ml", "newline")},
        "deploy/caf\u00e9.YML": {("ml", "accented")},
        "deploy/late.yaml": {("ml", "late")},
    }
    for _run in range(2):  # built, then kept
        assert _defined(root, "deploy", ("vendor/",)) == expected
    small = context.Lookup([str(root / "deploy")], (), 100).result()
    assert small == {}  # every file is over 100 bytes: not read, as a run does not


def test_a_file_over_the_read_limit_is_kept_unread_and_read_by_a_run_that_takes_it(
    tmp_path: Path, _own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(context, "READ_LIMIT", 300)
    big = claim_template("big") + "# padding\n" * 40
    root = _repo(tmp_path / "r", {"big.yaml": big, "small.yaml": claim_template("small")})
    for _run in range(2):  # built, then kept
        assert _defined(root) == {"big.yaml": {("ml", "big")}, "small.yaml": {("ml", "small")}}
    assert _kept(_own_cache)["files"]["big.yaml"] == [len(big), None, None]
    below = context.Lookup([str(root)], (), len(big) - 1).result()
    assert below == {os.path.realpath(root / "small.yaml"): {("ml", "small")}}


def test_outside_git_the_caller_reads_the_files(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "t.yaml").write_text(claim_template("one"))
    assert context.Lookup([str(tmp_path / "plain")], (), LIMIT).result() is None
    # a file named as context is read wherever it is
    named = context.Lookup([str(tmp_path / "plain" / "t.yaml")], (), LIMIT).result()
    assert named == {os.path.realpath(tmp_path / "plain" / "t.yaml"): {("ml", "one")}}


_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["write", "write-unstaged", "delete", "commit", "stage-all"]),
        st.integers(0, 3),
        st.sampled_from(["t1", "t2", None]),
    ),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=_STEPS)
def test_the_kept_answer_is_always_the_answer_from_scratch(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, str | None]]
) -> None:
    root = _repo(tmp_path_factory.mktemp("r") / "r", {"f0.yaml": claim_template("t0")})
    for action, which, name in steps:
        path = root / f"d{which % 2}" / f"f{which}.yaml"
        text = claim_template(name) if name else "kind: ConfigMap\n"
        if action in ("write", "write-unstaged"):
            path.parent.mkdir(exist_ok=True)
            path.write_text(text)
            if action == "write":
                _git(root, "add", "-A")
        elif action == "delete" and path.exists():
            path.unlink()
            _git(root, "add", "-A")
        elif action == "commit":
            _git(root, "commit", "-q", "--allow-empty", "-m", "step")
        else:
            _git(root, "add", "-A")
        assert _defined(root) == _from_scratch(root)


def test_a_hook_keeps_clear_of_the_templates_the_commit_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers.cli_runner import invoke

    root = _repo(tmp_path / "r", {"apps/job.yaml": _JOB})
    _write(root, {"shared/templates.yaml": claim_template("train-gpu")})
    monkeypatch.chdir(root)
    hook = ["convert", "--check", "--diff", "--context", ".", "apps/job.yaml"]
    # untracked: not in the commit, the name is free (CI, on the pushed tree, agrees)
    done = invoke(hook)
    assert "resourceClaimTemplateName: train-gpu\n" in done.stdout, done.output
    # staged: the commit holds it, another name is generated (twice: kept answer)
    _git(root, "add", "shared/templates.yaml")
    for _run in range(2):
        done = invoke(hook)
        assert "resourceClaimTemplateName: train-gpu-" in done.stdout, done.output
        assert "DRA210" in done.stderr


# --- the lookups' searches, answered from the kept answer (context.Trees) ------------

_TEXTS = {
    "pool": "apiVersion: karpenter.sh/v1\nkind: NodePool\n",
    "sharing": "version: v1\nsharing:\n  timeSlicing:\n    resources: []\n",
    "bridge": "kind: DeviceClass\nspec:\n  extendedResourceName: example.com/gpu\n",
    "escaped": 'apiVersion: "karpenter\\u002esh/v1"\n',  # an escape may spell the needle
    "binary": "karpenter.sh/\0binary\n",  # git grep -I passes binary files over
    "plain": "kind: ConfigMap\n",
}
_SEARCHES = (
    (b"karpenter.sh/",),
    (b"extendedResourceName",),
    (b"timeSlicing", b"migStrategy", b"mps:", b"devicePlugin"),
)
_TREE_STEPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["write", "write-unstaged", "untracked", "ignored", "unlink", "commit", "stage-all"]
        ),
        st.integers(0, 3),
        st.sampled_from(sorted(_TEXTS)),
    ),
    min_size=1,
    max_size=7,
)


def _searched(root: Path, folder: str, needles: tuple[bytes, ...]) -> dict[str, bytes]:
    """What a hook run's search of ``folder`` (in its --context, the top) finds, path
    from the top -> the content read: from the kept answer, never git grep."""
    from dra_migrate.repo import discover

    trees = context.Trees()
    assert context.Lookup([str(root)], (), LIMIT, trees).result() is not None
    assert trees.search(str(root / folder), needles) is not None  # not git grep
    words = [n.decode() for n in needles]
    search = discover.Search([str(root / folder)], words, (), trees)
    real = os.path.realpath(root)
    return {os.path.relpath(real_path, real): data for _p, real_path, data in search.files(LIMIT)}


def _staged(root: Path, folder: str, needles: tuple[bytes, ...]) -> dict[str, bytes]:
    """The same from scratch: each file of the index under ``folder`` that git grep -I
    reads as text and that may mention a needle, with the content the index holds."""
    from dra_migrate.repo import discover

    found = {}
    for name in filter(None, _git(root, "ls-files", "-z", "--cached").split("\0")):
        if not name.lower().endswith(git.EXTENSIONS) or not (
            folder == "." or name.startswith(folder + "/")
        ):
            continue
        data = subprocess.run(
            ["git", "-C", str(root), "cat-file", "blob", f":0:{name}"],
            capture_output=True,
            check=True,
        ).stdout
        if b"\0" not in data[:8000] and discover.mentions(data, needles):
            found[name] = data
    return found


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=_TREE_STEPS, folder=st.sampled_from([".", "d1"]))
def test_a_search_of_the_context_finds_what_the_index_holds(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, str]], folder: str
) -> None:
    root = _repo(
        tmp_path_factory.mktemp("r") / "r",
        {"f0.yaml": _TEXTS["pool"], ".gitignore": "ignored-*.yaml\n", "d1/keep.yaml": "a: 1\n"},
    )
    for action, which, text in steps:
        name = f"ignored-{which}.yaml" if action == "ignored" else f"f{which}.yaml"
        path = root / f"d{which % 2}" / name
        if action in ("write", "write-unstaged", "untracked", "ignored"):
            path.parent.mkdir(exist_ok=True)
            path.write_text(_TEXTS[text])
            if action == "write":
                _git(root, "add", "-A")
        elif action == "unlink" and path.exists():
            path.unlink()  # deleted on disk, still in the index
        elif action == "commit":
            _git(root, "commit", "-q", "--allow-empty", "-m", "step")
        elif action == "stage-all":
            _git(root, "add", "-A")
        for needles in _SEARCHES:
            assert _searched(root, folder, needles) == _staged(root, folder, needles), steps


def test_a_hook_asks_git_grep_nothing_once_the_answer_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook's lookups (NodePools, sharing, bridge classes) over ``--context .``
    read what changed, not the repository: the second run starts no git grep, and
    still finds a NodePool staged since; one only on disk is in no commit, as for
    the templates (CI, on the pushed tree, agrees)."""
    from tests.helpers.cli_runner import invoke

    pool = (
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: gpu\n"
        "spec:\n  template:\n    metadata:\n      labels:\n        pool: gpu\n"
        "  limits:\n    nvidia.com/gpu: 8\n"
    )
    job = _JOB.replace(
        "      containers:", "      nodeSelector:\n        pool: gpu\n      containers:"
    )
    assert job != _JOB
    root = _repo(tmp_path / "r", {"apps/job.yaml": job, "other/plain.yaml": "a: 1\n"})
    monkeypatch.chdir(root)
    hook = ["convert", "--check", "--diff", "--context", ".", "apps/job.yaml"]
    asked: list[list[bytes]] = []
    start = git.Git.__init__

    def spy(self: git.Git, root: str, args: Any, *rest: Any, **named: Any) -> None:
        asked.append(list(args))
        start(self, root, args, *rest, **named)

    monkeypatch.setattr(git.Git, "__init__", spy)
    assert "DRA270" not in invoke(hook).output  # builds the kept answer
    for place in ("pools/pool.yaml", "disk/pool.yaml"):
        _write(root, {place: pool})
        if place.startswith("pools"):
            _git(root, "add", place)
        asked.clear()
        done = invoke(hook)
        held = place.startswith("pools")  # the pool holds the pod: in the commit
        assert ("DRA270" in done.output) == held, (place, done.output)
        assert not [a for a in asked if a[:1] == [b"grep"]], [
            b" ".join(a)[:300] for a in asked if a[:1] == [b"grep"]
        ]
        (root / place).unlink()
        _git(root, "add", "-A")


def test_a_folder_outside_the_context_is_searched_by_git_grep_of_the_work_tree(
    tmp_path: Path,
) -> None:
    """Only a --context folder is answered from the index: comparing the work tree
    with it would run the repository's clean filters (tests/hostile), git grep none."""
    root = _repo(tmp_path / "r", {"ctx/pool.yaml": _TEXTS["pool"], "run/a.yaml": "a: 1\n"})
    trees = context.Trees()
    assert context.Lookup([str(root / "ctx")], (), LIMIT, trees).result() == {}
    assert trees.search(str(root / "ctx"), (b"karpenter.sh/",)) is not None
    assert trees.search(str(root / "run"), (b"karpenter.sh/",)) is None
    assert trees.search(str(root), (b"karpenter.sh/",)) is None  # above the context
    assert trees.search(str(root / "ctx"), (b"not kept",)) is None
