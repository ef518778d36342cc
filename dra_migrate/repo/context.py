"""What the ``--context`` folders define: ResourceClaimTemplates, as a commit holds them;
and the DeviceClasses that bridge an extended resource (``BridgeLookup``).

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

The same kept answer serves the run's other questions of the --context folders
(``Trees``): which files mention what the Karpenter NodePool, device plugin sharing
and bridge class lookups look for (``KEPT``), read from the index as the templates
are. A hook run on one staged file so reads the few files a commit changes instead
of searching the repository once a lookup (two or three ``git grep`` of a 5,000-file
repository took 40 ms of a hook's 180).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence

from dra_migrate import cache, git
from dra_migrate.repo import discover, node_pool_lookup, sharing_lookup
from dra_migrate.report.model import BridgeClass

NEEDLE = git.TEMPLATE_KIND
BRIDGE_NEEDLE = b"extendedResourceName"
# what the kept answer says of each file besides the templates it defines: which of
# these it mentions (discover.mentions: the string, or an escape that may spell it):
# the needles of the lookups a run starts over the repository, taken from each (a
# search for a needle not here is git grep's, Trees.search)
KEPT = (
    node_pool_lookup.NEEDLE,
    BRIDGE_NEEDLE,
    *(n.encode() for n in sharing_lookup.SEARCHED),
)
# what git grep looks for: the kind's name, the needles kept, or a backslash (an
# escape may spell one; discover.mentions decides on the content)
_MAY_DEFINE = (*(p for n in (NEEDLE, *KEPT) for p in (b"-e", n)), b"-e", b"\\")
# changed files past which the anchor moves to HEAD's tree (each run reads the
# changed files from the index: a few at commit time)
REANCHOR = 200
_PATHSPECS = (b"--", *git.FILES)

# a file this large is not parsed for the kept answer (it holds None): a run whose
# --max-file-size takes it reads it then (the default limit reads no such file)
READ_LIMIT = discover.DEFAULT_MAX_FILE_SIZE
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a tree's, SHA-1 or SHA-256

# (size of the file in bytes, (namespace, name) of each template it defines, the
# needles of KEPT it mentions; both None for a file over READ_LIMIT, not read)
Defines = tuple[int, "frozenset[tuple[str, str]] | None", "frozenset[bytes] | None"]
# git grep -I's rule: a NUL byte in the first 8,000 bytes makes a file binary, not
# searched (UTF-16 and UTF-32 text included: the run reports those, DRA002)
_BINARY_PROBE = 8000


class Trees:
    """The work trees of a run's --context folders, each top's kept answer
    (``_Index``) made once and shared by the run's questions: the templates the
    context defines (``Lookup``) and the searches of the repository-wide lookups
    (``search``: NodePools, device plugin configurations, bridge classes). A --context
    folder is searched as the index holds it, as its templates are: the repository
    the commit holds, what CI checks once it is pushed (pre-commit stashes unstaged
    changes; an untracked file is in no commit). Other folders are searched with
    ``git grep`` of the work tree: comparing the work tree with the index is what
    would run the repository's filter drivers (git status hashes a racily clean
    file through its clean filter), and git grep runs none."""

    def __init__(self) -> None:
        self.indexes: dict[str, _Index] = {}
        self.staged: dict[str, _Index] = {}  # real path of a --context folder -> its index

    def index(self, top: str, folder: str) -> _Index:
        """The kept answer of the work tree at ``top``, for its --context ``folder``."""
        if top not in self.indexes:
            self.indexes[top] = _Index(top)
        self.staged[os.path.realpath(folder)] = self.indexes[top]
        return self.indexes[top]

    def search(self, raw: str, needles: Sequence[bytes]) -> _Search | None:
        """The files under the folder ``raw`` that may mention one of ``needles``, as
        ``git grep --cached`` would list them, from the kept answer; None unless
        ``raw`` is in a --context folder and every needle is kept (KEPT)."""
        if not set(needles) <= set(KEPT):
            return None
        real = os.path.realpath(raw)
        for folder, index in self.staged.items():
            if real == folder or real.startswith(folder.rstrip(os.sep) + os.sep):
                return _Search(index, raw, frozenset(needles))
        return None

    def cancel(self) -> None:
        for index in self.indexes.values():
            index.cancel()


class _Search:
    """One folder's search of ``Trees.search``, of the index: ``names`` as git grep -l
    prints them (relative to the folder); ``read`` the content of those as the index
    holds it (``staged``); ``cancel`` as for a running git."""

    staged = True

    def __init__(self, index: _Index, raw: str, needles: frozenset[bytes]) -> None:
        self.index, self.needles = index, needles
        below = os.path.relpath(os.path.realpath(raw), index.top)
        self.prefix = "" if below == "." else below + "/"

    def names(self, ok: tuple[int, ...] = (0,)) -> list[str] | None:
        files = self.index.files()
        if files is None:
            return None
        return [
            rel[len(self.prefix) :]
            for rel, (_size, _templates, mentions) in files.items()
            if rel.startswith(self.prefix)
            and (mentions is None or not mentions.isdisjoint(self.needles))
        ]

    def read(self, names: Sequence[str], limit: int) -> dict[str, bytes]:
        """The content the index holds of ``names``, of those at most ``limit`` bytes
        long: one ``git cat-file --batch``."""
        given = [self.prefix + n for n in names]
        blobs = _blobs(self.index.top, b":0:", given, limit)
        return {path[len(self.prefix) :]: data for path, _s, data in blobs if data is not None}

    def cancel(self) -> None:
        """Nothing to stop: the index is the run's (``Trees.cancel``), and the
        context's templates may still be asked of it."""


def _text(data: bytes) -> bool:
    """Whether git grep -I searches these bytes (not binary by its rule)."""
    return b"\0" not in data[:_BINARY_PROBE]


class Lookup:
    """The templates the context defines, asked of git now, answered by ``result``."""

    def __init__(
        self,
        paths: Iterable[str],
        excludes: Iterable[str],
        limit: int,
        trees: Trees | None = None,
    ) -> None:
        self.excludes = list(excludes)
        self.limit = limit
        self.files: list[str] = []  # files named as context: read by the caller's process
        self.folders: list[tuple[str, _Index | None]] = []
        self.trees = trees if trees is not None else Trees()
        for raw in paths:
            if not os.path.isdir(raw):
                self.files.append(raw)
                continue
            top = git.work_tree_top(raw)
            self.folders.append((raw, self.trees.index(top, raw) if top is not None else None))

    def result(self) -> dict[str, frozenset[tuple[str, str]]] | None:
        """The real path of each file of the context that defines templates, and
        those (namespace, name); None where a folder is outside a git work tree
        (the caller reads the files itself)."""
        from dra_migrate.manifests.locate import defined_templates

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
            unread: list[str] = []
            for rel, (size, templates, _mentions) in files.items():
                if not rel.startswith(prefix) or size > self.limit:
                    continue
                inside = rel[len(prefix) :]
                if not inside.lower().endswith(git.EXTENSIONS) or discover.excluded(spec, inside):
                    continue
                if templates is None:
                    unread.append(rel)
                elif templates:
                    found[discover.real_name(os.path.join(index.top, rel))] = templates
            for rel, (_size, templates, _m) in index.read(unread, None, self.limit).items():
                if templates:
                    found[discover.real_name(os.path.join(index.top, rel))] = templates
        for raw in self.files:
            try:
                data = discover.read_file(raw, self.limit)
            except discover.Unreadable:
                continue  # reported by the run whose paths hold it
            if discover.may_define_templates(data):
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
        self.kept = self._load()
        # started now: the run lists and reads its own files meanwhile (and imports
        # what parses them); a first run, with nothing kept, reads HEAD's tree so too
        self.diff = self._diff(self.kept[0]) if self.kept is not None else None
        self.first = self._start() if self.kept is None else None
        self.answer: dict[str, Defines] | None = None
        self.done = False

    def files(self) -> dict[str, Defines] | None:
        """Path -> what it defines, for the files of the index that define templates;
        None where git cannot tell (not a work tree, no git)."""
        if not self.done:
            self.answer, self.done = self._files(), True
        return self.answer

    def cancel(self) -> None:
        for started in (self.diff, *(self.first[1:] if self.first else ())):
            if started is not None:
                started.cancel()

    def _start(self) -> tuple[str, git.Git, git.Git] | None:
        """HEAD's tree, with what a first answer reads of git started: the files of the
        tree that may define templates (``git grep``), and those the index holds
        differently; None where there is no HEAD."""
        head = self._head()
        if head is None:
            return None
        grep = git.Git(self.top, (*git.GREP, b"-l", *_MAY_DEFINE, head.encode(), *_PATHSPECS))
        return head, grep, self._diff(head)

    def _files(self) -> dict[str, Defines] | None:
        changed = self.diff.names() if self.diff is not None else None
        if self.kept is None or changed is None:  # nothing kept, or the anchor is gone
            first = self.first if self.kept is None else self._start()
            self.first = None
            if first is None:
                return self._unborn()
            head, grep, diff = first
            kept = self._tree(head, grep)
            if kept is None:
                diff.cancel()
                return None
            self.kept = (head, kept)
            self._keep()
            changed = diff.names()
            if changed is None:
                return None
        if len(changed) > REANCHOR and self._move(self.kept[0]):
            changed = self._diff(self.kept[0]).names()  # against HEAD's tree: the staged
            if changed is None:
                return None
        return self._updated(self.kept[1], changed)

    def _diff(self, tree: str) -> git.Git:
        """The files the index holds differently from ``tree``."""
        args = (b"diff-index", b"--cached", b"--name-only", b"-z", b"--no-renames")
        return git.Git(self.top, [*args, b"--ignore-submodules", tree.encode(), *_PATHSPECS])

    def _head(self) -> str | None:
        out = git.Git(self.top, [b"rev-parse", b"--verify", b"-q", b"HEAD^{tree}"]).output()
        return out.decode("ascii", "replace").strip() if out else None

    def _tree(self, tree: str, grep: git.Git) -> dict[str, Defines] | None:
        """What each file of ``tree`` defines (the files that hold the kind's name, as
        ``grep``, started by ``_start``, lists them)."""
        names = grep.names(ok=(0, 1))
        if names is None:
            return None
        prefix = tree + ":"
        return self.read([n[len(prefix) :] for n in names if n.startswith(prefix)], tree)

    def _unborn(self) -> dict[str, Defines] | None:
        """A work tree without a commit: the index read whole, nothing kept (there is
        no tree to keep an answer for); None outside a work tree."""
        args = (*git.GREP, b"--cached", b"-l", *_MAY_DEFINE, *_PATHSPECS)
        names = git.Git(self.top, args).names(ok=(0, 1))
        if names is None:
            return None
        return self.read(names)

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
        self.kept = (head, self._updated(self.kept[1], changed, head))
        self._keep()
        return True

    def _updated(
        self, files: dict[str, Defines], changed: Sequence[str], tree: str | None = None
    ) -> dict[str, Defines]:
        """``files`` with the ``changed`` ones read again, from the index or ``tree``."""
        gone = set(changed)
        answer = {rel: d for rel, d in files.items() if rel not in gone}
        answer.update(self.read(changed, tree))
        return answer

    def read(
        self, paths: Sequence[str], tree: str | None = None, limit: int | None = None
    ) -> dict[str, Defines]:
        """What each of the files ``paths`` defines, as the index holds them (or the
        tree ``tree``), read through one ``git cat-file --batch`` a file at a time; a
        file that defines none is left out, one over ``limit`` (READ_LIMIT) is not
        read (None)."""
        prefix = b":0:" if tree is None else tree.encode() + b":"
        found: dict[str, Defines] = {}
        for path, size, data in _blobs(self.top, prefix, paths, limit or READ_LIMIT):
            if data is None:
                found[path] = (size, None, None)
                continue
            templates: frozenset[tuple[str, str]] = frozenset()
            if discover.may_define_templates(data):
                from dra_migrate.manifests.locate import defined_templates

                templates = frozenset(defined_templates(data))
            text = _text(data)  # (git grep -I passes binary files over)
            mentions = frozenset(n for n in KEPT if text and discover.mentions(data, (n,)))
            if templates or mentions:
                found[path] = (size, templates, mentions)
        return found

    def _load(self) -> tuple[str, dict[str, Defines]] | None:
        stamp = _stamp()
        if stamp is None:
            return None
        return cache.read("context", self.top, stamp, _kept_shape)

    def _keep(self) -> None:
        stamp = _stamp()
        if stamp is None or self.kept is None:
            return
        tree, files = self.kept
        kept = {
            "tree": tree,
            "files": {
                rel: [
                    size,
                    None if t is None else sorted(t),
                    None if m is None else sorted(n.decode() for n in m),
                ]
                for rel, (size, t, m) in files.items()
            },
        }
        cache.write("context", self.top, stamp, kept)


def _kept_shape(held: dict[str, object]) -> tuple[str, dict[str, Defines]]:
    """The kept answer of a tree from its JSON (TypeError or ValueError where it is not
    one): the tree's id, and what each file defines."""
    tree, files = held["tree"], held["files"]
    if not isinstance(tree, str) or not _OBJECT_ID.fullmatch(tree) or not isinstance(files, dict):
        raise ValueError("not a kept context")
    found: dict[str, Defines] = {}
    kept = {n.decode(): n for n in KEPT}
    for rel, (size, templates, mentions) in files.items():
        if type(size) is not int or size < 0 or not isinstance(rel, str):
            raise ValueError("not a file's size")
        if templates is None or mentions is None:
            if templates is not None or mentions is not None:
                raise ValueError("a file read and not read")
            found[rel] = (size, None, None)
            continue
        pairs = frozenset((ns, name) for ns, name in templates)
        if not all(isinstance(ns, str) and isinstance(name, str) for ns, name in pairs):
            raise TypeError("not a template's namespace and name")
        found[rel] = (size, pairs, frozenset(kept[n] for n in mentions))  # KeyError: not kept
    return tree, found


def _blobs(
    top: str, prefix: bytes, paths: Sequence[str], limit: int
) -> Iterator[tuple[str, int, bytes | None]]:
    """(path, size, content) of each file of ``paths`` that git finds as a file at
    ``prefix`` (``:0:``, the index, or ``TREE:``), one at a time (a run never holds
    them all); the content None for a file over ``limit``."""
    names = [(p, prefix + os.fsencode(p)) for p in paths]
    batch = [(p, n) for p, n in names if b"\n" not in n]  # the batch reads one name a line
    if batch:
        given = b"".join(n + b"\n" for _p, n in batch)
        raw = git.Git(top, [b"cat-file", b"--batch"], given=given).spooled()
        if raw is not None:
            with raw, open(raw.fileno(), "rb", buffering=1 << 16, closefd=False) as spool:
                for path, _name in batch:
                    # "<oid> <type> <size>", or "<name> missing" / "<name> ambiguous"
                    header = spool.readline().rstrip(b"\n").split(b" ")
                    if len(header) != 3 or not header[2].isdigit() or len(header[0]) < 40:
                        continue
                    size = int(header[2])
                    if header[1] != b"blob" or size > limit:
                        spool.seek(size + 1, os.SEEK_CUR)  # the content and its newline
                        if header[1] == b"blob":
                            yield path, size, None
                        continue
                    data = spool.read(size)
                    spool.read(1)
                    yield path, size, data
    for path, name in names:  # a newline in the path: asked alone
        if b"\n" in name:
            size_out = git.Git(top, [b"cat-file", b"-s", name]).output()
            if size_out is None or not size_out.strip().isdigit():
                continue
            size = int(size_out)
            if size > limit:
                yield path, size, None
                continue
            blob = git.Git(top, [b"cat-file", b"blob", name]).output()
            if blob is not None:
                yield path, len(blob), blob


def _stamp() -> str | None:
    """What the kept answers depend on besides the tree: this package's code."""
    return cache.package_stamp()


# --- DeviceClasses with extendedResourceName (the bridge strategy) -----------------


class BridgeLookup:
    """The DeviceClasses with extendedResourceName under ``roots`` (the paths of the run
    and its --context) and in ``files`` (the configuration's deviceclasses file, when it
    exists), each file once, asked now and answered by ``result``. In a git work tree
    ``git grep`` finds the files that mention the field while the run reads its own
    (started when the run starts, as ``Lookup``); outside one the files are walked and
    searched. Only those files are parsed; a run asks this only when its strategy may
    bridge a workload."""

    def __init__(
        self,
        roots: Iterable[str],
        excludes: Iterable[str],
        limit: int,
        files: Iterable[str] = (),
        trees: Trees | None = None,
    ) -> None:
        self.roots = [r for r in roots if r != "-"]
        self.excludes, self.limit = list(excludes), limit
        self.files = [f for f in files if os.path.isfile(f)]
        self.search = discover.Search(self.roots, BRIDGE_NEEDLE.decode(), self.excludes, trees)

    def result(self) -> tuple[BridgeClass, ...]:
        from dra_migrate.manifests.locate import defined_bridges

        found: list[BridgeClass] = []
        for path, real, data in self.search.files(self.limit, self.files):
            found += [
                BridgeClass(name, resource, real, line, col)
                for name, resource, line, col in defined_bridges(data, path)
            ]
        return tuple(found)

    def cancel(self) -> None:
        self.search.cancel()
