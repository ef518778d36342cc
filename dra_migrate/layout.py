"""What the repository layout says about a file: Helm chart part, kustomize patch.

Part of discovery: a Helm chart template or values file is reported and never
modified; a file that a kustomization applies as a patch is reported for a
manual edit, because converting a partial object would break the overlay.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from dra_migrate import discover, git
from dra_migrate.findings import InputProblem
from dra_migrate.record import NamedTuple, Record

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)

if TYPE_CHECKING:  # the parser is imported where a kustomization is parsed
    from yaml.nodes import Node

KUSTOMIZATION_NAMES = git.KUSTOMIZATION_NAMES
HELM_TEMPLATE = "helm-template"
HELM_VALUES = "helm-values"
KUSTOMIZE_PATCH = "kustomize-patch"
KUSTOMIZATION = "kustomization"
HELM_UNITTEST = "helm-unittest"  # a helm-unittest suite (chart tests/*_test.yaml): skipped


class Overlay(NamedTuple):
    """A kustomization whose patches set GPU resources of objects it builds from bases."""

    display: str
    targets: frozenset[tuple[str, str]] | None  # (kind, name) patched; None: not known


class Role(NamedTuple):
    kind: str | None = None  # one of the constants above, None for a plain manifest
    via: str = ""  # the kustomization or chart that gives the file its role
    overlays: tuple[Overlay, ...] = ()  # overlays that patch GPU resources of this file


def patched_by(role: Role, kind: str, name: str) -> list[str]:
    """The overlays that patch GPU resources of the object ``kind``/``name``."""
    return [o.display for o in role.overlays if o.targets is None or (kind, name) in o.targets]


class Renaming(NamedTuple):
    """A kustomization with namePrefix or nameSuffix, and what it builds."""

    path: Path
    display: str
    line: int
    col: int
    files: frozenset[Path]  # every resource file it builds, through its bases
    references_templates: bool  # its configurations teach kustomize resourceClaimTemplateName


class Layout(Record):
    """What kustomizations and Helm charts say about the files of a run."""

    __slots__ = _fields = ("patches", "renamings", "overlays", "charts", "patching")

    def __init__(
        self,
        patches: dict[Path, str] | None = None,  # resolved patch file -> kustomization
        renamings: list[Renaming] | None = None,
        overlays: dict[Path, list[Overlay]] | None = None,  # base file -> overlays (asked)
        charts: dict[Path, Path | None] | None = None,  # folder -> its chart
        patching: list[_Patching] | None = None,  # kustomizations with patches, in order
    ) -> None:
        self.patches: dict[Path, str] = {} if patches is None else patches
        self.renamings: list[Renaming] = [] if renamings is None else renamings
        self.overlays: dict[Path, list[Overlay]] = {} if overlays is None else overlays
        self.charts: dict[Path, Path | None] = {} if charts is None else charts
        self.patching: list[_Patching] = [] if patching is None else patching

    def overlays_of(self, resolved: Path) -> list[Overlay]:
        """The overlays that build the file ``resolved`` and patch GPU resources: only
        the kustomizations that build it have their patches read (a repository's
        overlays patch other files, as a rule)."""
        found = self.overlays.get(resolved)
        if found is None:
            found = [o for p in self.patching if resolved in p.builds() and (o := p.overlay())]
            self.overlays[resolved] = found
        return found

    def role(self, path: Path | str, real: str | None = None) -> Role:
        """The role of the file at ``path`` (``real``: its real path, when known)."""
        name = os.path.basename(path)
        if name in KUSTOMIZATION_NAMES:
            return Role(KUSTOMIZATION)
        resolved = Path(real) if real is not None else discover.real_path(Path(path))
        if resolved in self.patches:
            return Role(KUSTOMIZE_PATCH, self.patches[resolved])
        chart = _chart_root(resolved, self.charts)
        if chart is not None:
            rel = resolved.relative_to(chart)
            if rel.parts[0] == "tests" and name.endswith(("_test.yaml", "_test.yml")):
                return Role(HELM_UNITTEST, str(chart))
            if rel.parts[0] == "templates":
                return Role(HELM_TEMPLATE, str(chart))
            if rel.parts[0] in ("files",) or (
                len(rel.parts) == 1
                and name.startswith("values")
                and name.endswith((".yaml", ".yml"))
            ):
                return Role(HELM_VALUES if rel.parts[0] != "files" else HELM_TEMPLATE, str(chart))
        overlays = self.overlays_of(resolved)
        return Role(overlays=tuple(overlays)) if overlays else Role()


def _chart_root(path: Path, known: dict[Path, Path | None]) -> Path | None:
    """The Helm chart a file belongs to; ``known`` remembers folders already asked
    (a repository has thousands of files in a few hundred folders)."""
    climbed: list[Path] = []
    found: Path | None = None
    for folder in path.parents:
        if folder in known:
            found = known[folder]
            break
        climbed.append(folder)
        if (folder / "Chart.yaml").is_file():
            found = folder
            break
        if (folder / ".git").exists():
            break
    for folder in climbed:
        known[folder] = found
    return found


class Builder:
    """The layout of real paths, built some files at a time (a run builds the layout
    of its files while git still searches the context for more). ``add`` reads the
    kustomizations that can apply patches to the files: those among them, those in
    their folders and the folders above (up to the top of the git work tree), so a
    patch file given alone, as pre-commit does, is still known as one, and every
    kustomization of that git work tree, so a base given alone still knows the
    overlays that patch it. Each folder is climbed and each kustomization read once,
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
        self.folders: set[str] = set()  # looked at already (strings: thousands of folders)
        self.seen: set[Path] = set()  # kustomizations read
        self.reader = _Reader()

    def add(self, reals: Iterable[str]) -> Layout:
        """The layout of the files added so far, these included."""
        layout, folders = self.layout, self.folders
        files: list[Path] = []
        for given in reals:
            parent, _, name = given.rpartition(os.sep)
            if name in KUSTOMIZATION_NAMES:
                files.append(Path(given))
            while not self.given_only and parent not in folders:
                folders.add(parent)
                here = parent or os.sep
                listed = _listing(here)
                files.extend(
                    Path(here, k)
                    for k in KUSTOMIZATION_NAMES
                    if (listed is None or k in listed) and os.path.isfile(os.path.join(here, k))
                )
                if (listed is None or ".git" in listed) and os.path.exists(
                    os.path.join(here, ".git")
                ):
                    # every kustomization of the work tree: an overlay in another folder
                    # patches a base given alone (dra-migrate convert base/)
                    files.extend(_work_tree_kustomizations(Path(here), self.staged))
                    break
                if not parent:
                    break
                parent = parent.rpartition(os.sep)[0]
        reader = self.reader
        for path in files:
            if path.name not in KUSTOMIZATION_NAMES or not path.is_file():
                continue
            real = reader.real(path)
            if real in self.seen:
                continue
            self.seen.add(real)
            if self.renamings_only:
                data = read_bytes(real)
                root = reader.root(real, data) if any(k in data for k in _RENAMING_KEYS) else None
                renaming = _renaming(real, root, reader) if root is not None else None
                if renaming is not None:
                    layout.renamings.append(renaming)
                continue
            data = read_bytes(real)
            if not any(k in data for k in _LAYOUT_KEYS):
                continue  # no patch, no renaming: nothing here until a build reads it
            root = reader.root(real, data)
            if root is None:
                continue  # reported when the file itself is processed
            for patch_file in _patch_files(root):
                target = reader.real(real.parent / patch_file)
                layout.patches.setdefault(target, reader.shown(path))
            renaming = _renaming(real, root, reader)
            if renaming is not None:
                layout.renamings.append(renaming)
            if _patch_entries(root):
                layout.patching.append(_Patching(real, root, self.gpu, reader))
                layout.overlays.clear()  # answers asked before this kustomization was read
        return layout


class _Patching:
    """A kustomization with patches: what it builds and, if they set GPU resources,
    its Overlay, each worked out when first asked."""

    def __init__(
        self, path: Path, root: Node, gpu: Callable[[bytes], bool], reader: _Reader
    ) -> None:
        self.path, self.root, self.gpu, self.reader = path, root, gpu, reader
        self.built: set[Path] | None = None
        self.read = False
        self.found: Overlay | None = None

    def builds(self) -> set[Path]:
        if self.built is None:
            self.built = _built(self.path, set(), self.reader)
        return self.built

    def overlay(self) -> Overlay | None:
        if not self.read:
            self.found, self.read = _overlay(self.path, self.root, self.gpu, self.reader), True
        return self.found


class _Reader:
    """What one layout build reads, each once: a kustomization's parse (an overlay's
    bases are read for every overlay that builds them), real paths (folder by folder:
    resolving a path costs a look at each of its parts) and the working folder."""

    def __init__(self) -> None:
        self.roots: dict[Path, Node | None] = {}
        self.folders: dict[str, str] = {}  # path -> its real path
        self.cwd: Path | None = None

    def root(self, path: Path, data: bytes | None = None) -> Node | None:
        """``_read``, once a file."""
        if path not in self.roots:
            self.roots[path] = _read(path, data)
        return self.roots[path]

    def real(self, path: Path) -> Path:
        """``discover.real_path``, each leading part of a path resolved once a build
        (``a/b/../c`` and ``a/b/d`` share the look at ``a`` and ``a/b``)."""
        if os.sep != "/":  # a drive or a UNC share heads the path: resolved whole
            return discover.real_path(path)
        try:
            return Path(self._resolved(str(path.absolute())))
        except (OSError, RuntimeError, RecursionError):
            return discover.real_path(path)

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

    def shown(self, path: Path) -> str:
        """``_shown``, with the working folder resolved once."""
        if self.cwd is None:
            self.cwd = Path.cwd().resolve()
        try:
            return str(self.real(path).relative_to(self.cwd))
        except ValueError:
            return str(path)


def _listing(folder: str) -> list[str] | None:
    """The names in ``folder``; None where it cannot be listed (a folder that can be
    searched but not read: its files are then looked for one by one). One listing
    costs less than looking for the three kustomization names and ``.git`` in each
    of a repository's folders."""
    try:
        return os.listdir(folder)
    except OSError:
        return None


def _work_tree_kustomizations(root: Path, staged: bool) -> list[Path]:
    """The kustomization files git tracks (or would add, unless ``staged``) in the work
    tree at ``root``."""
    found = git.kustomizations(str(root), staged).names() or []
    return [root / p for p in sorted(set(found)) if p.rpartition("/")[2] in KUSTOMIZATION_NAMES]


def _overlay(
    path: Path, root: Node, gpu: Callable[[bytes], bool], reader: _Reader
) -> Overlay | None:
    """The kustomization as an Overlay when one of its patches sets GPU resources."""
    from dra_migrate import load

    targets: set[tuple[str, str]] = set()
    known = True
    touches = False
    for item in _patch_entries(root):
        text = load.scalar(item)
        if text is not None and ("\n" in text or text.lstrip().startswith(("apiVersion", "{"))):
            body = text.encode()  # an inline strategic-merge patch
        elif text is not None:
            body = read_bytes(path.parent / text)
        else:
            inline = load.scalar(load.get(item, "patch"))
            file = load.scalar(load.get(item, "path"))
            body = inline.encode() if inline else read_bytes(path.parent / (file or ""))
        if not gpu(body):
            continue
        touches = True
        target = load.get(item, "target") if text is None else None
        kind = load.scalar(load.get(target, "kind")) if target is not None else None
        name = load.scalar(load.get(target, "name")) if target is not None else None
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
    from dra_migrate import load

    try:
        docs = load.parse(load.decode("", body))
    except InputProblem:
        return set()
    out = set()
    for doc in docs:
        kind = load.scalar(load.get(doc.root, "kind"))
        name = load.scalar(load.get_path(doc.root, "metadata", "name"))
        if kind and name:
            out.add((kind, name))
    return out


def references(kustomization: Path) -> set[Path]:
    """The files a kustomization uses: what it builds (through its bases) and its patches."""
    real = kustomization.resolve()
    found = _built(real, set(), _Reader())
    root = _read(real)
    if root is not None:
        found |= {(real.parent / p).resolve() for p in _patch_files(root)}
    return {p for p in found if p.is_file()}


def _read(path: Path, data: bytes | None = None) -> Node | None:
    """The first root of the kustomization at ``path`` (``data``: its bytes, when read)."""
    from dra_migrate import load

    try:
        raw = discover.read_file(path) if data is None else data
        docs = load.parse(load.decode(str(path), raw))
    except (discover.Unreadable, InputProblem):
        return None
    roots = [d.root for d in docs if d.root is not None]
    return roots[0] if roots else None


_RENAMING_KEYS = (b"namePrefix", b"nameSuffix")  # what a renaming kustomization holds
_PATCH_KEYS = ("patches", "patchesStrategicMerge", "patchesJson6902")
# what a kustomization holds when the layout has to parse it (a base that only lists
# resources is parsed when an overlay's build asks for it)
_LAYOUT_KEYS = (b"patches", *_RENAMING_KEYS)


def _patch_entries(root: Node) -> list[Node]:
    """The entries of the kustomization's patch lists, of every kind."""
    from dra_migrate import load

    return [item for key in _PATCH_KEYS for item in load.items(load.get(root, key))]


def _renaming(path: Path, root: Node, reader: _Reader) -> Renaming | None:
    from dra_migrate import load

    key = next(
        (k for name, k, _v in load.entries(root) if name in ("namePrefix", "nameSuffix")), None
    )
    if key is None:
        return None
    line, col = load.position(key)
    teaches = any(
        b"ResourceClaimTemplate" in read_bytes(path.parent / (load.scalar(c) or ""))
        for c in load.items(load.get(root, "configurations"))
    )
    built = frozenset(_built(path, set(), reader))
    return Renaming(path, reader.shown(path), line, col, built, teaches)


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or none when it cannot be read (a best-effort look)."""
    try:
        return discover.read_file(path)
    except discover.Unreadable:
        return b""


def _built(kustomization: Path, visiting: set[Path], reader: _Reader) -> set[Path]:
    """The resource files a kustomization builds, through its bases and components."""
    from dra_migrate import load

    if kustomization in visiting:
        return set()
    visiting.add(kustomization)
    root = reader.root(kustomization)
    found: set[Path] = set()
    for key in ("resources", "bases", "components"):
        for item in load.items(load.get(root, key)):
            entry = load.scalar(item) or ""
            target = reader.real(kustomization.parent / entry)
            if target.is_dir():
                for name in KUSTOMIZATION_NAMES:
                    if (target / name).is_file():
                        found |= _built(target / name, visiting, reader)
                        break
            elif target.is_file():
                found.add(target)
    return found


def _patch_files(root: Node) -> list[str]:
    from dra_migrate import load

    files: list[str] = []
    for item in _patch_entries(root):
        if load.scalar(item) is not None:  # patchesStrategicMerge: a bare path (or inline YAML)
            text = load.scalar(item) or ""
            if "\n" not in text and not text.lstrip().startswith(("apiVersion", "{")):
                files.append(text)
        else:
            path = load.scalar(load.get(item, "path"))
            if path:
                files.append(path)
    return files
