"""What the ``--context`` folders define: ResourceClaimTemplates, as a commit holds them.

Part of discovery. A hook run (``--context .``) keeps the names it generates clear
of every ResourceClaimTemplate the repository defines. In a git work tree the
repository is what the commit will hold: git's index, the staged content
(pre-commit stashes unstaged changes before its hooks run, and ``git commit``
points its hooks at the index it commits, GIT_INDEX_FILE, which git is asked
with). An untracked file is not part of it. Outside git the caller reads every
file of the context.

Reading every staged file on every commit would cost the size of the repository
(220 MB at 50,000 files: 0.3 s of ``git grep``). So what each file of one tree
(the anchor: HEAD's tree when the answer was first built) defines is kept in the
user's cache folder. A tree's content never changes, so what is kept stays true
while this package's code is the same (the stamp). A run asks git which files the
index holds differently from the anchor (``git diff-index --cached``: the index's
tree cache skips unchanged folders, about 12 ms at 50,000 files) and reads only
those, from the index. When that list grows long (commits since), the anchor
moves to HEAD's tree, reading only what changed between the two trees.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterable, Sequence

from dra_migrate import discover, git, resources

NEEDLE = git.TEMPLATE_KIND
# changed files past which the anchor moves to HEAD's tree (each run reads the
# changed files from the index: a few at commit time)
REANCHOR = 200
_PATHSPECS = (b"--", *git.FILES)

# (size of the file in bytes, (namespace, name) of each template it defines)
Defines = tuple[int, frozenset[tuple[str, str]]]


class Lookup:
    """The templates the context defines, asked of git now, answered by ``result``."""

    def __init__(self, paths: Iterable[str], excludes: Iterable[str], limit: int) -> None:
        self.excludes = list(excludes)
        self.limit = limit
        self.files: list[str] = []  # files named as context: read by the caller's process
        self.folders: list[tuple[str, _Index | None]] = []
        indexes: dict[str, _Index] = {}
        for raw in paths:
            if not os.path.isdir(raw):
                self.files.append(raw)
                continue
            top = git.work_tree_top(raw)
            if top is not None and top not in indexes:
                indexes[top] = _Index(top)
            self.folders.append((raw, indexes.get(top) if top is not None else None))

    def result(self) -> dict[str, frozenset[tuple[str, str]]] | None:
        """The real path of each file of the context that defines templates, and
        those (namespace, name); None where a folder is outside a git work tree
        (the caller reads the files itself)."""
        from dra_migrate.process import defined_templates

        found: dict[str, frozenset[tuple[str, str]]] = {}
        spec = discover.Excludes(self.excludes)
        for raw, index in self.folders:
            files = index.files() if index is not None else None
            if index is None or files is None:
                self.cancel()
                return None
            root = os.path.realpath(raw)
            below = os.path.relpath(root, index.top)
            prefix = "" if below == "." else below + "/"
            for rel, (size, templates) in files.items():
                if not rel.startswith(prefix) or size > self.limit:
                    continue
                inside = rel[len(prefix) :]
                if inside.lower().endswith(git.EXTENSIONS) and not discover.excluded(spec, inside):
                    found[discover.real_name(os.path.join(index.top, rel))] = templates
        for raw in self.files:
            try:
                data = discover.read_file(raw, self.limit)
            except discover.Unreadable:
                continue  # reported by the run whose paths hold it
            if NEEDLE in data:
                found[discover.real_name(raw)] = frozenset(defined_templates(data))
        return found

    def cancel(self) -> None:
        for _raw, index in self.folders:
            if index is not None:
                index.cancel()


class _Index:
    """The files of one work tree's index that define templates, by path from its top."""

    def __init__(self, top: str) -> None:
        self.top = top
        self.cache = (
            resources.cache_file(f"context-{zlib.crc32(os.fsencode(top)):08x}.json")
            if resources.package_stamp() is not None
            else None
        )
        self.kept = self._load()
        # started now: the run lists and reads its own files meanwhile
        self.diff = self._diff(self.kept[0]) if self.kept is not None else None
        self.answer: dict[str, Defines] | None = None
        self.done = False

    def files(self) -> dict[str, Defines] | None:
        """Path -> what it defines, for the files of the index that define templates;
        None where git cannot tell (not a work tree, no git)."""
        if not self.done:
            self.answer, self.done = self._files(), True
        return self.answer

    def cancel(self) -> None:
        if self.diff is not None:
            self.diff.cancel()

    def _files(self) -> dict[str, Defines] | None:
        changed = self.diff.names() if self.diff is not None else None
        if self.kept is None or changed is None:  # nothing kept, or the anchor is gone
            head = self._head()
            if head is None:
                return self._unborn()
            kept = self._tree(head)
            if kept is None:
                return None
            self.kept = (head, kept)
            self._keep()
            changed = self._diff(head).names()
            if changed is None:
                return None
        if len(changed) > REANCHOR and self._move(self.kept[0]):
            changed = self._diff(self.kept[0]).names()  # against HEAD's tree: the staged
            if changed is None:
                return None
        answer = dict(self.kept[1])
        for rel in changed:
            answer.pop(rel, None)
        answer.update(self._read([b":0:" + os.fsencode(rel) for rel in changed], b":0:"))
        return answer

    def _diff(self, tree: str) -> git.Git:
        """The files the index holds differently from ``tree``."""
        args = (b"diff-index", b"--cached", b"--name-only", b"-z", b"--no-renames")
        return git.Git(self.top, [*args, b"--ignore-submodules", tree.encode(), *_PATHSPECS])

    def _head(self) -> str | None:
        out = git.Git(self.top, [b"rev-parse", b"--verify", b"-q", b"HEAD^{tree}"]).output()
        return out.decode("ascii", "replace").strip() if out else None

    def _tree(self, tree: str) -> dict[str, Defines] | None:
        """What each file of ``tree`` defines (the files that hold the kind's name)."""
        args = (b"grep", b"--no-color", b"-z", b"-l", b"-I", b"-F", b"-e", NEEDLE)
        names = git.Git(self.top, [*args, tree.encode(), *_PATHSPECS]).names(ok=(0, 1))
        if names is None:
            return None
        prefix = tree + ":"
        objects = [os.fsencode(n) for n in names if n.startswith(prefix)]
        return self._read(objects, prefix.encode())

    def _unborn(self) -> dict[str, Defines] | None:
        """A work tree without a commit: the index read whole, nothing kept (there is
        no tree to keep an answer for); None outside a work tree."""
        args = (b"grep", b"--cached", b"--no-color", b"--full-name", b"-z", b"-l", b"-I", b"-F")
        names = git.Git(self.top, [*args, b"-e", NEEDLE, *_PATHSPECS]).names(ok=(0, 1))
        if names is None:
            return None
        return self._read([b":0:" + os.fsencode(n) for n in names], b":0:")

    def _move(self, anchor: str) -> bool:
        """Anchor the kept answer at HEAD's tree, from what changed since ``anchor``
        (read once, at HEAD); whether it moved."""
        head = self._head()
        if head is None or head == anchor or self.kept is None:
            return False
        args = (b"diff-tree", b"-r", b"--name-only", b"-z", b"--no-renames")
        changed = git.Git(self.top, [*args, anchor.encode(), head.encode(), *_PATHSPECS]).names()
        if changed is None:
            return False
        files = dict(self.kept[1])
        for rel in changed:
            files.pop(rel, None)
        prefix = head.encode() + b":"
        files.update(self._read([prefix + os.fsencode(rel) for rel in changed], prefix))
        self.kept = (head, files)
        self._keep()
        return True

    def _read(self, objects: Sequence[bytes], prefix: bytes) -> dict[str, Defines]:
        """What each of the files ``objects`` (``prefix`` + path: ``:0:`` for the index,
        ``TREE:`` for a tree) defines, read through one ``git cat-file --batch``; a
        file that defines none is left out."""
        from dra_migrate.process import defined_templates

        found: dict[str, Defines] = {}
        batch = [o for o in objects if b"\n" not in o]  # the batch reads one name a line
        for name, data in [*_batch(self.top, batch), *_one_by_one(self.top, objects)]:
            if NEEDLE in data:
                templates = frozenset(defined_templates(data))
                if templates:
                    found[os.fsdecode(name[len(prefix) :])] = (len(data), templates)
        return found

    def _load(self) -> tuple[str, dict[str, Defines]] | None:
        if self.cache is None:
            return None
        try:
            with open(self.cache, encoding="utf-8") as handle:
                kept = json.load(handle)
            if kept["stamp"] != _stamp() or kept["top"] != self.top:
                return None
            files = {
                rel: (size, frozenset((ns, name) for ns, name in templates))
                for rel, (size, templates) in kept["files"].items()
            }
            return str(kept["tree"]), files
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing, partial or of another layout: built again

    def _keep(self) -> None:
        if self.cache is None or self.kept is None:
            return
        tree, files = self.kept
        kept = {
            "stamp": _stamp(),
            "top": self.top,
            "tree": tree,
            "files": {rel: [size, sorted(t)] for rel, (size, t) in files.items()},
        }
        resources.keep(self.cache, json.dumps(kept).encode())


def _batch(top: str, objects: Sequence[bytes]) -> list[tuple[bytes, bytes]]:
    """(name, content) of each blob of ``objects`` (``git cat-file --batch``); a
    name git does not find, or that is not a file, is left out."""
    if not objects:
        return []
    out = git.Git(top, [b"cat-file", b"--batch"], given=b"".join(o + b"\n" for o in objects))
    printed = out.output()
    if printed is None:
        return []
    found: list[tuple[bytes, bytes]] = []
    at = 0
    for name in objects:
        end = printed.find(b"\n", at)
        if end < 0:
            break
        header = printed[at:end].split(b" ")
        at = end + 1
        # "<oid> <type> <size>", or "<name> missing" / "<name> ambiguous"
        if len(header) != 3 or not header[2].isdigit() or len(header[0]) not in (40, 64):
            continue
        size = int(header[2])
        if header[1] == b"blob":
            found.append((name, printed[at : at + size]))
        at += size + 1  # the content and its newline
    return found


def _one_by_one(top: str, objects: Sequence[bytes]) -> list[tuple[bytes, bytes]]:
    """``_batch`` for the names a batch cannot take (a newline in the path)."""
    found: list[tuple[bytes, bytes]] = []
    for name in objects:
        if b"\n" in name:
            data = git.Git(top, [b"cat-file", b"blob", name]).output()
            if data is not None:
                found.append((name, data))
    return found


def _stamp() -> str | None:
    """What the kept answers depend on besides the tree: this package's code."""
    return resources.package_stamp()
