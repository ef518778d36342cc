"""What the repository layout says about a file: Helm chart part, kustomize patch.

Part of discovery: a Helm chart template or values file is reported and never
modified; a file that a kustomization applies as a patch is reported for a
manual edit, because converting a partial object would break the overlay.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from dra_migrate import cache, git
from dra_migrate.repo import discover
from dra_migrate.report.findings import InputProblem

TYPE_CHECKING = False  # typing is not imported at run time (start-up)

if TYPE_CHECKING:  # the parser is imported where a kustomization is parsed
    from pathlib import Path

    from yaml.nodes import Node

KUSTOMIZATION_NAMES = git.KUSTOMIZATION_NAMES
_NAME_ENDS = KUSTOMIZATION_NAMES  # a path that ends in one (a first test, in C)
HELM_TEMPLATE = "helm-template"
HELM_VALUES = "helm-values"
KUSTOMIZE_PATCH = "kustomize-patch"
KUSTOMIZATION = "kustomization"
HELM_UNITTEST = "helm-unittest"  # a helm-unittest suite (chart tests/*_test.yaml): skipped
MANIFEST_TEMPLATE = "manifest-template"  # *.yaml-template and the like, found by a walk


def walked_template(name: str) -> bool:
    """A manifest template by its name (git.TEMPLATE_EXTENSIONS)."""
    return name.lower().endswith(git.TEMPLATE_EXTENSIONS)


@dataclass(frozen=True, slots=True)
class Overlay:
    """A kustomization whose patches set GPU resources of objects it builds from bases."""

    display: str
    targets: frozenset[tuple[str, str]] | None  # (kind, name) patched; None: not known


@dataclass(frozen=True, slots=True)
class Role:
    kind: str | None = None  # one of the constants above, None for a plain manifest
    via: str = ""  # the kustomization or chart that gives the file its role
    overlays: tuple[Overlay, ...] = ()  # overlays that patch GPU resources of this file


@dataclass(frozen=True, slots=True)
class Renaming:
    """A kustomization with namePrefix or nameSuffix, and what it builds."""

    path: str  # real path
    display: str
    line: int
    col: int
    files: frozenset[str]  # real paths of every resource file it builds, through its bases
    references_templates: bool  # its configurations teach kustomize resourceClaimTemplateName


@dataclass(slots=True)
class Layout:
    """What kustomizations and Helm charts say about the files of a run. Paths are real
    paths as strings (a repository has thousands of files: a ``Path`` a file cost
    more than the look at it). Not frozen: ``overlays`` and ``charts`` are filled in
    as files are asked about."""

    patches: dict[str, str] = field(default_factory=dict)  # resolved patch file -> kustomization
    renamings: list[Renaming] = field(default_factory=list)
    # base file -> overlays (asked)
    overlays: dict[str, list[Overlay]] = field(default_factory=dict)
    charts: dict[str, str | None] = field(default_factory=dict)  # folder -> its chart
    # kustomizations with patches, in order
    patching: list[_Patching] = field(default_factory=list)

    def overlays_of(self, resolved: str) -> list[Overlay]:
        """The overlays that build the file ``resolved`` and patch GPU resources: only
        the kustomizations that build it have their patches read (a repository's
        overlays patch other files, as a rule)."""
        found = self.overlays.get(resolved)
        if found is None:
            found = [o for p in self.patching if resolved in p.builds() and (o := p.overlay())]
            self.overlays[resolved] = found
        return found

    def gpu_overlays(self) -> list[tuple[str, str, set[str], frozenset[tuple[str, str]] | None]]:
        """(real path, display, files built, (kind, name) patched or None: not known) of
        every kustomization read whose patches set GPU resources."""
        return [
            (p.path, o.display, p.builds(), o.targets)
            for p in self.patching
            if (o := p.overlay()) is not None
        ]

    def chart_of(self, resolved: str) -> str | None:
        """The folder of the Helm chart the file ``resolved`` (a real path) belongs to."""
        return _chart_root(resolved, self.charts)

    def role(self, path: Path | str, real: str | None = None) -> Role:
        """The role of the file at ``path`` (``real``: its real path, when known)."""
        name = os.path.basename(path)
        if name in KUSTOMIZATION_NAMES:
            return Role(KUSTOMIZATION)
        resolved = real if real is not None else discover.real_name(str(path))
        if resolved in self.patches:
            return Role(KUSTOMIZE_PATCH, self.patches[resolved])
        chart = _chart_root(resolved, self.charts)
        if chart is not None:
            parts = resolved[len(chart.rstrip(os.sep)) + 1 :].split(os.sep)
            if parts[0] == "tests" and name.endswith(("_test.yaml", "_test.yml")):
                return Role(HELM_UNITTEST, chart)
            if parts[0] == "templates":
                return Role(HELM_TEMPLATE, chart)
            if parts[0] in ("files",) or (
                len(parts) == 1 and name.startswith("values") and name.endswith((".yaml", ".yml"))
            ):
                return Role(HELM_VALUES if parts[0] != "files" else HELM_TEMPLATE, chart)
        overlays = self.overlays_of(resolved)
        return Role(overlays=tuple(overlays)) if overlays else Role()


def _chart_root(path: str, known: dict[str, str | None]) -> str | None:
    """The Helm chart a file (a real path) belongs to; ``known`` remembers folders
    already asked (a repository has thousands of files in a few hundred folders)."""
    climbed: list[str] = []
    found: str | None = None
    folder = os.path.dirname(path)
    while True:
        if folder in known:
            found = known[folder]
            break
        climbed.append(folder)
        if os.path.isfile(os.path.join(folder, "Chart.yaml")):
            found = folder
            break
        if os.path.exists(os.path.join(folder, ".git")):
            break
        above = os.path.dirname(folder)
        if above == folder:  # the root
            break
        folder = above
    for folder in climbed:
        known[folder] = found
    return found


class Builder:
    """The layout of real paths, built some files at a time (a run builds the layout
    of its files while git still searches the context for more). ``add`` reads the
    kustomizations that can apply patches to the files: inside a git work tree every
    kustomization of the work tree (those git tracks or would add, as the files of a
    run are; those of the index for a ``--context`` run), so a patch file given alone,
    as pre-commit does, is still known as one, and a base given alone still knows the
    overlays that patch it; outside one, those in the files' folders and the folders
    above. Each folder is climbed once (one look for ``.git``, not a listing: the
    work tree's listing names its kustomizations) and each kustomization read once,
    in the order of the files."""

    def __init__(
        self,
        gpu: Callable[[bytes], bool] = lambda _data: False,
        renamings_only: bool = False,
        given_only: bool = False,
        staged: bool = False,
    ) -> None:
        self.layout = Layout()
        self.gpu = gpu
        # a run with nothing to convert asks the layout for its renamings only
        # (DRA219): a kustomization that sets no name prefix or suffix is not parsed
        self.renamings_only = renamings_only
        # a run that converts nothing and reports on its paths only (a hook's --context
        # run on files without a GPU request): only a kustomization among the files can
        # be reported (DRA219), so no other is looked for, nor the work tree listed
        self.given_only = given_only
        # a --context run: the repository beyond the files is what the index holds
        self.staged = staged
        # folder climbed -> the top of its git work tree, None outside one (strings:
        # thousands of folders)
        self.tops: dict[str, str | None] = {}
        self.seen: set[str] = set()  # kustomizations read
        self.reader = _Reader()

    def add(self, reals: Iterable[str]) -> Layout:
        """The layout of the files added so far, these included."""
        layout, tops, sep = self.layout, self.tops, os.sep
        files: list[str] = []
        climbing = not self.given_only
        last = None  # the files of a folder come together: its climb is asked once
        for given in reals:  # (tens of thousands: string tests in C first)
            if given.endswith(_NAME_ENDS) and given.rpartition(sep)[2] in KUSTOMIZATION_NAMES:
                files.append(given)
            if climbing:
                parent = given[: max(given.rfind(sep), 0)]  # (real paths: absolute)
                if parent != last:
                    last = parent
                    if parent not in tops:
                        files.extend(self._climb(parent))
        reader = self.reader
        for path in files:
            if os.path.basename(path) not in KUSTOMIZATION_NAMES or not os.path.isfile(path):
                continue
            real = reader.real(path)
            if real in self.seen:
                continue
            self.seen.add(real)
            data = read_bytes(real)
            if self.renamings_only:
                if discover.mentions(data, _RENAMING_KEYS):
                    renaming = _renaming(real, reader.facts(real, data), reader)
                    if renaming is not None:
                        layout.renamings.append(renaming)
                continue
            if not discover.mentions(data, _LAYOUT_KEYS):
                continue  # no patch, no renaming: nothing here until a build reads it
            facts = reader.facts(real, data)  # none of an unreadable one: reported when
            folder = os.path.dirname(real)  # the file itself is processed
            for patch_file in facts.patch_files:
                target = reader.real(os.path.join(folder, patch_file))
                layout.patches.setdefault(target, reader.shown(path))
            renaming = _renaming(real, facts, reader)
            if renaming is not None:
                layout.renamings.append(renaming)
            if facts.patches:
                layout.patching.append(_Patching(real, self.gpu, reader))
                layout.overlays.clear()  # answers asked before this kustomization was read
        return layout

    def keep(self) -> None:
        """Keep what was learnt of kustomizations for the next run (``_Reader.keep``)."""
        self.reader.keep()

    def _climb(self, folder: str) -> list[str]:
        """The kustomizations ``folder`` and the folders above it not climbed yet bring:
        every one of their git work tree, the first time it is reached; outside one,
        those in each folder (a listing of it)."""
        tops, sep = self.tops, os.sep
        climbed: list[str] = []
        found: list[str] = []
        here = folder
        while True:
            if here in tops:
                top = tops[here]
                break
            climbed.append(here)
            at = here or sep
            if os.path.exists(os.path.join(at, ".git")):
                listed = _work_tree_kustomizations(at, self.staged)
                top = at if listed is not None else None  # git cannot read it: as outside
                found.extend(listed or ())
                break
            if not here or sep not in here:
                top = None
                break
            here = here.rpartition(sep)[0]
        for each in climbed:
            tops[each] = top
        if top is None:
            for each in climbed:
                at = each or sep
                listed = _listing(at)
                found.extend(
                    os.path.join(at, k)
                    for k in KUSTOMIZATION_NAMES
                    if (listed is None or k in listed) and os.path.isfile(os.path.join(at, k))
                )
        return found


class _Patching:
    """A kustomization with patches: what it builds and, if they set GPU resources,
    its Overlay, each worked out when first asked."""

    def __init__(self, path: str, gpu: Callable[[bytes], bool], reader: _Reader) -> None:
        self.path, self.gpu, self.reader = path, gpu, reader
        self.built: set[str] | None = None
        self.read = False
        self.found: Overlay | None = None

    def builds(self) -> set[str]:
        """The files it builds; for a component (or any kustomization listed under
        another's ``components:``), also what the kustomizations that include it build:
        its patches apply there."""
        if self.built is None:
            self.built = _built(self.path, set(), self.reader) | self.reader.including(self.path)
        return self.built

    def overlay(self) -> Overlay | None:
        if not self.read:
            root = self.reader.root(self.path)  # parsed only now: its patches are read
            found = _overlay(self.path, root, self.gpu, self.reader) if root is not None else None
            self.found, self.read = found, True
        return self.found


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the layout needs of a kustomization (its first document), kept between runs
    by the kustomization's content: parsing a repository's kustomizations was most of
    the layout's cost (a hook in a repository of 100 of them: 9 ms of 15)."""

    builds: tuple[str, ...]  # its resources, bases and components entries
    patch_files: tuple[str, ...]  # the files its patches name
    patches: bool  # it has patches (of any kind)
    renaming: tuple[int, int] | None  # line and column of its namePrefix or nameSuffix
    configurations: tuple[str, ...]  # its configurations entries
    components: tuple[str, ...] = ()  # its components entries (also among ``builds``)

    def to_json(self) -> list[object]:
        """The fields in order: what ``_facts_shape`` reads back."""
        return [
            self.builds,
            self.patch_files,
            self.patches,
            self.renaming,
            self.configurations,
            self.components,
        ]


def _facts_shape(held: dict[str, list[object]]) -> dict[str, _Facts]:
    """Kept facts from their JSON (TypeError or ValueError where they are not)."""

    def texts(value: object) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError("not a list of names")
        return tuple(value)

    facts = {}
    for key, (builds, patch_files, patches, renaming, configurations, components) in held.items():
        if renaming is not None:
            if not isinstance(renaming, list) or [type(n) for n in renaming] != [int, int]:
                raise TypeError("not a line and column")
            renaming = (renaming[0], renaming[1])
        if not isinstance(key, str) or type(patches) is not bool:
            raise TypeError("not kept facts")
        facts[key] = _Facts(
            texts(builds),
            texts(patch_files),
            patches,
            renaming,
            texts(configurations),
            texts(components),
        )
    return facts


def _facts_of(root: Node | None) -> _Facts:
    from dra_migrate.manifests import trees

    if root is None:  # empty, unreadable or not YAML: reported when the file is processed
        return _Facts((), (), False, None, (), ())
    key = next((k for name, k, _v in trees.entries(root) if name in _RENAMING_NAMES), None)
    return _Facts(
        tuple(
            trees.scalar(item) or ""
            for key_name in ("resources", "bases", "components")
            for item in trees.items(trees.get(root, key_name))
        ),
        tuple(_patch_files(root)),
        bool(_patch_entries(root)),
        trees.position(key) if key is not None else None,
        tuple(trees.scalar(c) or "" for c in trees.items(trees.get(root, "configurations"))),
        tuple(trees.scalar(c) or "" for c in trees.items(trees.get(root, "components"))),
    )


class _Reader:
    """What one layout build reads, each once: a kustomization's facts (an overlay's
    bases are read for every overlay that builds them), real paths (folder by folder:
    resolving a path costs a look at each of its parts) and the working folder.

    The facts of a kustomization are kept in the user's cache folder by a digest
    (BLAKE2b) of its real path and content, for the package's code, one file for the
    working folder: a run parses only the kustomizations it has not seen, and two
    kustomizations never share facts unless they are one file with one content."""

    def __init__(self) -> None:
        self.roots: dict[str, Node | None] = {}
        self.folders: dict[str, str] = {}  # path -> its real path
        self.cwd: str | None = None
        self.known: dict[str, _Facts] = {}  # real path -> its facts, this run
        self.kept: dict[str, _Facts] | None = None  # content key -> facts, from the cache
        self.used: set[str] = set()  # content keys of this run
        self.learnt = False  # facts not kept before
        self.stamp: str | None = None  # the package's code, when facts can be kept

    def facts(self, path: str, data: bytes | None = None) -> _Facts:
        """The facts of the kustomization at ``path`` (``data``: its bytes, when read)."""
        found = self.known.get(path)
        if found is not None:
            return found
        if data is None:
            data = read_bytes(path)
        key = cache.digest(os.fsencode(path) + b"\0" + data)
        kept = self._kept()
        found = kept.get(key)
        if found is None:
            found = kept[key] = _facts_of(self.root(path, data))
            self.learnt = True
        self.used.add(key)
        self.known[path] = found
        return found

    def including(self, path: str) -> set[str]:
        """What the kustomizations read so far that list ``path``'s folder under
        ``components:`` build."""
        folder = os.path.dirname(path)
        found: set[str] = set()
        for other, facts in list(self.known.items()):
            here = os.path.dirname(other)
            if any(self.real(os.path.join(here, c)) == folder for c in facts.components):
                found |= _built(other, {path}, self)
        return found

    def _kept(self) -> dict[str, _Facts]:
        if self.kept is None:
            self.stamp = cache.package_stamp()
            held = None
            if self.stamp is not None:
                held = cache.read("layout", self._cwd(), self.stamp, _facts_shape)
            self.kept = held if held is not None else {}
        return self.kept

    def keep(self) -> None:
        """Write the facts learnt this run to the cache (with those kept before, unless
        they outnumber this run's many times over: a repository's kustomizations
        change, and the file is read whole by every run)."""
        if not self.learnt or self.stamp is None or self.kept is None:
            return
        facts = self.kept
        if len(facts) > 4 * len(self.used) + 256:
            facts = {key: facts[key] for key in self.used}
        cache.write("layout", self._cwd(), self.stamp, {k: f.to_json() for k, f in facts.items()})
        self.learnt = False

    def root(self, path: str, data: bytes | None = None) -> Node | None:
        """``_read``, once a file."""
        if path not in self.roots:
            self.roots[path] = _read(path, data)
        return self.roots[path]

    def real(self, path: str) -> str:
        """``discover.real_name``, each leading part of a path resolved once a build
        (``a/b/../c`` and ``a/b/d`` share the look at ``a`` and ``a/b``)."""
        if os.sep != "/":  # a drive or a UNC share heads the path: resolved whole
            return discover.real_name(path)
        try:
            return self._resolved(path if path.startswith("/") else self._cwd() + "/" + path)
        except (OSError, RuntimeError, RecursionError):
            return discover.real_name(path)

    def _cwd(self) -> str:
        if self.cwd is None:
            self.cwd = os.path.realpath(os.getcwd())
        return self.cwd

    def _resolved(self, path: str) -> str:
        real = self.folders.get(path)
        if real is None:
            parent, _, name = path.rpartition(os.sep)
            base = self._resolved(parent) if parent else os.sep
            if name in ("", "."):
                real = base
            elif name == "..":
                real = os.path.dirname(base)
            else:
                candidate = os.path.join(base, name)
                real = os.path.realpath(candidate) if os.path.islink(candidate) else candidate
            self.folders[path] = real
        return real

    def shown(self, path: str) -> str:
        """The path relative to the working folder (resolved once), as given where it
        is outside."""
        real, cwd = self.real(path), self._cwd()
        if real == cwd:
            return "."
        under = cwd.rstrip(os.sep) + os.sep
        return real[len(under) :] if real.startswith(under) else path


def _listing(folder: str) -> list[str] | None:
    """The names in ``folder``; None where it cannot be listed (a folder that can be
    searched but not read: its files are then looked for one by one). One listing
    costs less than looking for the three kustomization names and ``.git`` in each
    of a repository's folders."""
    try:
        return os.listdir(folder)
    except OSError:
        return None


def _work_tree_kustomizations(root: str, staged: bool) -> list[str] | None:
    """The kustomization files git tracks (or would add, unless ``staged``) in the work
    tree at ``root``; None where git cannot list them."""
    found = git.kustomizations(root, staged).names()
    if found is None:
        return None
    # the listing may be the run's whole listing (git.files): the names are picked first
    names = {
        p for p in found if p.endswith(_NAME_ENDS) and p.rpartition("/")[2] in KUSTOMIZATION_NAMES
    }
    return [os.path.join(root, p) for p in sorted(names)]


def _overlay(
    path: str, root: Node, gpu: Callable[[bytes], bool], reader: _Reader
) -> Overlay | None:
    """The kustomization as an Overlay when one of its patches sets GPU resources."""
    from dra_migrate.manifests import trees

    targets: set[tuple[str, str]] = set()
    known = True
    touches = False
    folder = os.path.dirname(path)
    for item in _patch_entries(root):
        text = trees.scalar(item)
        if text is not None and ("\n" in text or text.lstrip().startswith(("apiVersion", "{"))):
            body = text.encode()  # an inline strategic-merge patch
        elif text is not None:
            body = read_bytes(os.path.join(folder, text))
        else:
            inline = trees.scalar(trees.get(item, "patch"))
            file = trees.scalar(trees.get(item, "path"))
            body = inline.encode() if inline else read_bytes(os.path.join(folder, file or ""))
        if not gpu(body) and not discover.foreign_encoding(body):  # (a patch the byte
            continue  # search cannot read, UTF-16, may set GPUs: its base is not alone)
        touches = True
        target = trees.get(item, "target") if text is None else None
        kind = trees.scalar(trees.get(target, "kind")) if target is not None else None
        name = trees.scalar(trees.get(target, "name")) if target is not None else None
        if kind and name:
            targets.add((kind, name))
            continue
        found = _patch_targets(body)
        if found:
            targets |= found
        else:
            known = False
    if not touches:
        return None
    return Overlay(reader.shown(path), frozenset(targets) if known else None)


def _patch_targets(body: bytes) -> set[tuple[str, str]]:
    """(kind, name) of the objects a strategic-merge patch names."""
    from dra_migrate.manifests import compose, sources, trees

    try:
        docs = compose.parse(sources.decode("", body))
    except InputProblem:
        return set()
    out = set()
    for doc in docs:
        kind = trees.scalar(trees.get(doc.root, "kind"))
        name = trees.scalar(trees.get_path(doc.root, "metadata", "name"))
        if kind and name:
            out.add((kind, name))
    return out


def references(kustomization: str) -> set[str]:
    """Real paths of the files a kustomization uses: what it builds (through its bases)
    and its patches."""
    reader = _Reader()
    real = reader.real(kustomization)
    found = _built(real, set(), reader)
    root = _read(real)
    if root is not None:
        found |= {reader.real(os.path.join(os.path.dirname(real), p)) for p in _patch_files(root)}
    return {p for p in found if os.path.isfile(p)}


def _read(path: str, data: bytes | None = None) -> Node | None:
    """The first root of the kustomization at ``path`` (``data``: its bytes, when read)."""
    from dra_migrate.manifests import compose, sources

    try:
        raw = discover.read_file(path) if data is None else data
        docs = compose.parse(sources.decode(path, raw))
    except (discover.Unreadable, InputProblem):
        return None
    roots = [d.root for d in docs if d.root is not None]
    return roots[0] if roots else None


_RENAMING_NAMES = ("namePrefix", "nameSuffix")
_RENAMING_KEYS = tuple(n.encode() for n in _RENAMING_NAMES)  # what a renaming one holds
_PATCH_KEYS = ("patches", "patchesStrategicMerge", "patchesJson6902")
# what a kustomization holds when the layout has to parse it (a base that only lists
# resources is parsed when an overlay's build asks for it), or an escape that may
# spell it (discover.mentions: a "p\x61tches" key is a patch list too)
_LAYOUT_KEYS = (b"patches", b"components", *_RENAMING_KEYS)


def _patch_entries(root: Node) -> list[Node]:
    """The entries of the kustomization's patch lists, of every kind."""
    from dra_migrate.manifests import trees

    return [item for key in _PATCH_KEYS for item in trees.items(trees.get(root, key))]


def _renaming(path: str, facts: _Facts, reader: _Reader) -> Renaming | None:
    if facts.renaming is None:
        return None
    line, col = facts.renaming
    teaches = any(
        discover.may_define_templates(read_bytes(os.path.join(os.path.dirname(path), c)))
        for c in facts.configurations
    )
    built = frozenset(_built(path, set(), reader))
    return Renaming(path, reader.shown(path), line, col, built, teaches)


def read_bytes(path: Path | str) -> bytes:
    """The file's bytes, or none when it cannot be read (a best-effort look)."""
    try:
        return discover.read_file(path)
    except discover.Unreadable:
        return b""


def _built(kustomization: str, visiting: set[str], reader: _Reader) -> set[str]:
    """The resource files a kustomization builds, through its bases and components."""
    if kustomization in visiting:
        return set()
    visiting.add(kustomization)
    folder = os.path.dirname(kustomization)
    found: set[str] = set()
    for entry in reader.facts(kustomization).builds:
        target = reader.real(os.path.join(folder, entry))
        if os.path.isdir(target):
            for name in KUSTOMIZATION_NAMES:
                if os.path.isfile(os.path.join(target, name)):
                    found |= _built(os.path.join(target, name), visiting, reader)
                    break
        elif os.path.isfile(target):
            found.add(target)
    return found


def _patch_files(root: Node) -> list[str]:
    from dra_migrate.manifests import trees

    files: list[str] = []
    for item in _patch_entries(root):
        if trees.scalar(item) is not None:  # patchesStrategicMerge: a bare path (or inline YAML)
            text = trees.scalar(item) or ""
            if "\n" not in text and not text.lstrip().startswith(("apiVersion", "{")):
                files.append(text)
        else:
            path = trees.scalar(trees.get(item, "path"))
            if path:
                files.append(path)
    return files
