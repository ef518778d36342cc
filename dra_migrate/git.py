"""git, asked in processes of its own: started at once, read when needed.

Part of discovery. Inside a git work tree a run asks git about each folder it
is given: the files git tracks or would add (``ls-files``), the files that
hold none of the strings the run reads files for (``grep -L``) and, with
``--context``, the files that define ResourceClaimTemplates (``grep -l``).
Each is a C process that works on the other core while Python does its own
work. Its output goes into an anonymous file, never a pipe: git never stops
for Python to read, and Python does not wake for each name git writes (on
5,000 files a pipe cost 30 to 60 ms).

``prestart`` starts those questions from the command line before the CLI is
imported (``__main__.py``): importing it takes longer than git takes to search a
repository of thousands of files, and nothing here imports more than ``os``.
The run takes over what was started for it when it asks the same question
(``files``, ``without``, ``containing``, ``kustomizations``); anything it never
takes is stopped when the command ends (``stop_unclaimed``). What is started
early is a guess that only ever costs time: a run that asks something else
starts its own search.

A repository's own configuration is not the user's: an unpacked archive or a CI
artifact with a ``.git`` of its own could name programs for git to run
(``core.fsmonitor``, ``filter.*.clean``, ``core.hooksPath``, ``diff.external``).
So git runs only in the work trees the run trusts (``trust``: the one the user is
in, and those of the paths named that lie outside it; a repository inside another
is read as a plain folder), and always with those helpers off (``SAFE``,
``environment``): the commands asked here never run a program a repository
configures.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing itself is not imported: this runs before anything else
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import IO, Any

# what scan and convert read files for with the built-in mapping (the mapping's
# needles, templates, ignore comments), and validate; tests/repo/test_git.py holds both
# equal to what those commands ask
CONVERT_STRINGS = (
    b"/gpu",
    b"amd.com",
    b"aws.amazon.com",
    b"google.com",
    b"gpu.intel.com",
    b"habana.ai",
    b"nvidia.com",
    b"~1gpu",
    b"ResourceClaimTemplate",
    b"dra-migrate",
    b"resourceProfile:",  # convert/mapping.py PROFILE_NEEDLE: a KubeAI Model's profile
)
VALIDATE_STRINGS = (b"resource.k8s.io", b"resourceClaim", b"claims", b"Namespace", b"dra-migrate")
# Besides the caller's strings, what makes a file worth reading (discover.mentions,
# discover.foreign_encoding): a backslash (an escape can spell a name) and a UTF-16
# byte-order mark. git grep -I never lists a binary file (a NUL byte in the first
# 8,000, or binary by .gitattributes), nor a link or a special file: UTF-16 and
# UTF-32 text is always read.
ALSO_WANTED = (b"\\", b"\xff\xfe", b"\xfe\xff")
TEMPLATE_KIND = b"ResourceClaimTemplate"
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


# the user's git configuration does not change what is printed (color.grep=always,
# grep.fullName=true: names with escapes, or relative to the top of the work tree)
def grep_threads() -> int:
    """The threads ``git grep`` searches with: every core the process may use but one,
    left to the run's own work, which goes on while git searches (on two cores
    git's two threads and Python took turns: 50,000 files scanned in 0.86 s,
    0.76 s with one thread, medians of 11)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


GREP = (
    b"grep",
    b"--threads=%d" % grep_threads(),
    *(b"--no-color", b"--no-full-name", b"--no-textconv", b"-z", b"-I", b"-F"),
)
_LS_FILES = (b"ls-files", b"-z", b"--cached", b"--others", b"--exclude-standard")
# what ls-files --others prints for a repository inside the work tree (its folder,
# ``name/``): read as a plain folder (discover._walk)
NESTED = b"*/"
# manifest templates a pipeline renders (envsubst, Jinja, configure_file): a folder walk
# lists them and counts their GPU asks, never converts them (convert/file_templates.py)
TEMPLATE_EXTENSIONS = tuple(
    f"{base}{tail}"
    for base in (".yaml", ".yml")
    for tail in ("-template", ".template", ".tmpl", ".j2", ".jinja", ".jinja2", ".in")
)
# what a run looks at (.tpl: Helm helpers)
EXTENSIONS = (".yaml", ".yml", ".json", ".tpl", *TEMPLATE_EXTENSIONS)
# git lists and searches those only, in any case as the run takes them (*.[yY][aA]...;
# git 2.39 lists no untracked file below the top for an :(icase) pathspec): a
# repository's Go, Python and docs are never read
FILES = tuple(
    ("*" + "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in e)).encode()
    for e in EXTENSIONS
)
# the options of scan, convert and validate that take a value (tests/repo/test_git.py
# holds this to the CLI's own options): what follows one is not a path
VALUE_OPTIONS = frozenset(
    {
        "--changed-since",
        "--color",
        "--config",
        "--context",
        "--exclude",
        "--fail-on",
        "--feature-gates",
        "--format",
        "--jobs",
        "-j",
        "--kube-context",
        "--kube-version",
        "--kubeconfig",
        "--list-timeout",
        "--max-file-size",
        "--max-pages",
        "--max-response-size",
        "-o",
        "--output",
        "--output-dir",
        "--page-size",
        "--request-timeout",
        "--resource-slices",
        "--severity",
        "--stdin-filename",
        "--strategy",
        "--target",
    }
)
_SPAWN = hasattr(os, "posix_spawnp")
# every git run: no fsmonitor hook, no hooks, no index written on the side; the
# commands asked never filter, convert or diff through an external program (no
# work-tree content is hashed but by focus.changed_since, which switches the
# repository's filter drivers off by name: ``no_filters``)
SAFE = (
    b"--no-optional-locks",
    *(b"-c", b"core.fsmonitor="),
    *(b"-c", b"core.hooksPath=/dev/null"),
    *(b"-c", b"diff.external="),
)
_trusted: set[str] | None = None  # real paths of the work trees git runs in (None: any)
_tops: dict[str, str | None] = {}  # folder -> its work tree's top, as asked


_programs: dict[tuple[str, str], str | None] = {}  # (name, PATH) -> what which found


def absolute_path(path: str | None = None) -> list[str]:
    """The absolute entries of ``PATH`` (or ``path``), in order: an empty entry, ``.``
    or any relative one names the working folder, never searched for a program."""
    value = os.environ.get("PATH", os.defpath) if path is None else path
    return [entry for entry in value.split(os.pathsep) if entry and os.path.isabs(entry)]


def which(name: str, path: str | None = None) -> str | None:
    """The program ``name`` on ``PATH``, searched only in its absolute entries (as Go's
    os/exec does since go1.19's ``exec.ErrDot``): a ``git``, ``helm`` or ``kubectl``
    committed in a scanned repository never runs for an empty entry or ``.``."""
    import stat

    key = (name, os.environ.get("PATH", os.defpath) if path is None else path)
    if key in _programs:
        return _programs[key]
    found = None
    for folder in absolute_path(key[1]):
        candidate = os.path.join(folder, name)
        try:
            info = os.stat(candidate)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and os.access(candidate, os.X_OK):
            found = candidate
            break
    _programs[key] = found
    return found


def environment() -> dict[str, str]:
    """The environment git runs in: the user's, without the system-wide configuration
    (``GIT_CONFIG_NOSYSTEM``) and never asking on a terminal."""
    return {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}


def trust(paths: Sequence[str] | None) -> None:
    """The work trees git may run in: the one the working folder is in, and that of each
    of ``paths`` (strings as given; ``-`` is standard input) that does not lie inside
    it. A work tree inside one of those (a repository unpacked or checked out inside
    the user's) is not trusted: its files are read as plain files. None: any work
    tree (the library used on its own, after a run of the CLI)."""
    global _trusted
    _tops.clear()
    _trusted = None if paths is None else _trusted_tops(paths)


def _trusted_tops(paths: Sequence[str]) -> set[str]:
    """``trust``'s work trees for ``paths``."""
    home = work_tree_top(".")
    trusted = {home} if home is not None else set()
    inside = home.rstrip(os.sep) + os.sep if home is not None else None
    # a hook names hundreds of files in a few folders: each folder is climbed once
    folders = {p if os.path.isdir(p) else os.path.dirname(p) or "." for p in paths if p != "-"}
    for folder in folders:
        top = work_tree_top(folder)
        if top is not None and (inside is None or not (top + os.sep).startswith(inside)):
            trusted.add(top)
    return trusted


def trusted(folder: str) -> bool:
    """Whether git may run for ``folder``: its work tree is one ``trust`` took (any,
    before ``trust`` is asked: the library used on its own)."""
    if _trusted is None:
        return True
    top = _tops.get(folder, "")
    if top == "":
        top = _tops[folder] = work_tree_top(folder)
    return top is not None and top in _trusted


class Git:
    """``git ARGS`` run in the folder ``root``, its output spooled into an
    anonymous file; ``output`` waits for it, ``cancel`` stops it. ``given``: what
    git reads on its standard input (``cat-file --batch``), else nothing."""

    def __init__(
        self,
        root: str,
        args: Sequence[bytes],
        strings: Sequence[bytes] = (),
        given: bytes | None = None,
    ) -> None:
        self.strings = tuple(strings)  # a grep -L: the strings it looks for
        self.pid: int | None = None
        self.process: Any = None  # a subprocess.Popen where posix_spawn is missing
        self.code: int | None = None
        self.out: IO[bytes] | None = None
        if not trusted(root):  # a repository of no trusted work tree: as no git at all
            self.code = -1
            return
        program = which("git")
        if program is None:  # no git on the absolute PATH entries: as no git at all
            self.code = -1
            return
        argv = [b"git", *SAFE, b"-C", os.fsencode(root), *args]
        source: IO[bytes] | None = None
        try:
            self.out = _spool()
            if given is not None:
                source = _spool()
                source.write(given)
                source.seek(0)
            if _SPAWN:
                stdin = (
                    (os.POSIX_SPAWN_DUP2, source.fileno(), 0)
                    if source is not None
                    else (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)
                )
                self.pid = os.posix_spawn(
                    program,
                    argv,
                    environment(),
                    file_actions=[
                        stdin,
                        (os.POSIX_SPAWN_DUP2, self.out.fileno(), 1),
                        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                    ],
                )
            else:
                import subprocess

                self.process = subprocess.Popen(
                    argv,
                    executable=program,
                    env=environment(),
                    stdin=subprocess.DEVNULL if source is None else source,
                    stdout=self.out,
                    stderr=subprocess.DEVNULL,
                )
        except (OSError, ValueError):  # no git on PATH, no room for the spool
            self._close()
        finally:
            if source is not None:  # git holds its own copy of the descriptor
                source.close()

    def output(self, ok: tuple[int, ...] = (0,)) -> bytes | None:
        """What git printed, once it ended with an exit status in ``ok``; None where
        it could not tell (no git, outside a work tree, an error)."""
        spool = self.spooled(ok)
        if spool is None:
            return None
        with spool:
            return spool.read()

    def spooled(self, ok: tuple[int, ...] = (0,)) -> IO[bytes] | None:
        """``output``, as the file it was spooled into (at its start, for the caller
        to read a part at a time and close)."""
        code = self._wait()
        out, self.out = self.out, None
        if out is None:
            return None
        if code not in ok:
            out.close()
            return None
        out.seek(0)
        return out

    def names(self, ok: tuple[int, ...] = (0,)) -> list[str] | None:
        """The NUL-separated names git printed (``output``)."""
        out = self.output(ok)
        if out is None:
            return None
        return [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]

    def cancel(self) -> None:
        """Stop it, if it still runs, and drop what it printed."""
        if self.code is None:
            import signal

            try:
                if self.pid is not None:
                    os.kill(self.pid, signal.SIGKILL)
                elif self.process is not None:
                    self.process.kill()
            except OSError:  # ended meanwhile
                pass
        self._wait()
        self._close()

    def _wait(self) -> int | None:
        if self.code is None:
            if self.pid is not None:
                try:
                    _pid, status = os.waitpid(self.pid, 0)
                    self.code = os.waitstatus_to_exitcode(status)
                except ChildProcessError:  # reaped elsewhere: its answer cannot be trusted
                    self.code = -1
            elif self.process is not None:
                self.code = self.process.wait()
        return self.code

    def _close(self) -> None:
        if self.out is not None:
            self.out.close()
            self.out = None


def _spool() -> IO[bytes]:
    """An anonymous file for a process to write into: in memory where the system
    has ``memfd_create`` (Linux), else an unlinked temporary file."""
    if hasattr(os, "memfd_create"):
        return open(os.memfd_create("dra-migrate-git"), "w+b", buffering=0)
    import tempfile

    return tempfile.TemporaryFile(buffering=0)


# --- the questions a run asks, and the ones started before it asks -----------------


class _Listing:
    """One ``git ls-files`` that answers two questions of a run over the top of a work
    tree, its files and its kustomizations: git walks the folders for untracked
    files once, not twice (each asker keeps the names it wants)."""

    def __init__(self, listing: Git) -> None:
        self.listing = listing
        self.answer: list[str] | None = None
        self.asked = False

    def names(self, ok: tuple[int, ...] = (0,)) -> list[str] | None:
        if not self.asked:
            self.answer, self.asked = self.listing.names(ok), True
        return None if self.answer is None else list(self.answer)

    def cancel(self) -> None:
        self.listing.cancel()


_started: dict[tuple[object, ...], Git | _Listing] = {}  # (question, folder, ...) -> started


def files(root: str) -> Git | _Listing:
    """``git ls-files``: what git tracks or would add under ``root`` (with, where it
    was started early for the top of a work tree, its kustomization files)."""
    early = _started.pop(("files", root), None)
    return early or Git(root, [*_LS_FILES, b"--", *FILES, NESTED])


def kustomizations(top: str, staged: bool = False) -> Git | _Listing:
    """``git ls-files``: the kustomization files of the work tree at ``top`` (and a
    few more that end in one of their names: the caller keeps the exact ones);
    ``staged``: those of the index only (a ``--context`` run reads the repository
    as the commit holds it, context.py), not the untracked ones, which git finds
    by walking every folder."""
    early = _started.pop(("kustomizations", top, staged), None)
    return early or Git(top, _kustomizations_args(staged))


_KUSTOMIZATION_FILES = tuple(b"*" + name.encode() for name in KUSTOMIZATION_NAMES)


def _kustomizations_args(staged: bool) -> list[bytes]:
    listing = _LS_FILES[:3] if staged else _LS_FILES
    return [*listing, b"--", *_KUSTOMIZATION_FILES]


def containing(root: str, needle: bytes | Sequence[bytes]) -> Git:
    """``git grep -l``: the files under ``root`` whose text holds ``needle`` (one of
    them, given several), or a backslash (an escape may spell it: discover.mentions
    decides)."""
    needles = [needle] if isinstance(needle, bytes) else list(needle)
    patterns = [part for n in needles for part in (b"-e", n)]
    args = [*GREP, b"--untracked", b"-l", *patterns, b"-e", b"\\", b"--", *FILES]
    return Git(root, args)


class _Both:
    """Two ``git grep -L``: the names both printed (files with none of either's strings)."""

    def __init__(self, first: Git, second: Git) -> None:
        self.searches = (first, second)

    def names(self, ok: tuple[int, ...] = (0,)) -> list[str] | None:
        first, second = (s.names(ok) for s in self.searches)
        if first is None or second is None:
            return None
        both = set(second)
        return [n for n in first if n in both]

    def cancel(self) -> None:
        for search in self.searches:
            search.cancel()


def without(root: str, strings: Sequence[bytes]) -> Git | _Both:
    """``git grep -L``: the tracked files under ``root`` that git read as text and
    found none of ``strings`` in (nor a backslash or a UTF-16 byte-order mark,
    ``ALSO_WANTED``).

    A search started early for other strings serves: it lists fewer files when it
    looked for more, and a second search for the strings it did not look for
    narrows it to the files without any.
    """
    wanted = tuple(dict.fromkeys((*strings, *ALSO_WANTED)))
    early = _started.pop(("without", root), None)
    if isinstance(early, Git):
        missing = [s for s in wanted if s not in early.strings]
        if not missing:
            return early
        return _Both(early, _without(root, missing))
    return _without(root, wanted)


def _without(root: str, strings: Sequence[bytes]) -> Git:
    # tracked files only: the untracked ones (few, as a rule) are never ruled out and
    # so are read; git's look for them, the walk of every folder against .gitignore,
    # is made once, by the listing (ls-files --others), not again here (a tenth of a
    # second on 50,000 files)
    args = [*GREP, b"-L", *(a for s in strings for a in (b"-e", s)), b"--", *FILES]
    return Git(root, args, strings)


def prestart(argv: Sequence[str]) -> None:
    """Start what ``dra-migrate ARGV`` will ask git (scan, convert, validate over
    folders): the listing and the search of each folder named, and for scan and
    convert the listing of the kustomizations of each work tree the paths are in
    (what a ``--context`` folder defines is asked by context.py, from its kept answer).

    Only on systems with ``posix_spawn``: starting a process otherwise means
    importing ``subprocess``, which is what this is meant to overlap.
    """
    if not _SPAWN or not argv:
        return
    strings = {"scan": CONVERT_STRINGS, "convert": CONVERT_STRINGS, "validate": VALIDATE_STRINGS}
    wanted = strings.get(argv[0])
    if wanted is None:
        return
    paths, context, changed = _arguments(argv[1:])
    allowed = _trusted_tops([*paths, *context])  # the CLI says git.trust the same
    if changed:  # --changed-since walks the paths and the context alike
        paths, context = [*paths, *context], []
    staged = bool(context)
    for root in dict.fromkeys(paths):
        if not os.path.isdir(root) or work_tree_top(root) not in allowed:
            continue
        if ("without", root) not in _started:
            _started["without", root] = _without(root, (*wanted, *ALSO_WANTED))
            top = work_tree_top(root) if argv[0] != "validate" and not staged else None
            if top == os.path.realpath(root) and ("kustomizations", top, False) not in _started:
                # the run lists the top of a work tree: its kustomizations are in there
                listing = [*_LS_FILES, b"--", *FILES, NESTED, *_KUSTOMIZATION_FILES]
                both = _Listing(Git(root, listing))
                _started["files", root] = _started["kustomizations", top, False] = both
            else:
                _started["files", root] = Git(root, [*_LS_FILES, b"--", *FILES, NESTED])
    if argv[0] != "validate":
        # the layout reads every kustomization of the work tree (layout.Builder); a
        # hook names hundreds of files in a few folders: each folder is climbed once
        named = [p for p in (*paths, *context) if p != "-"]
        folders = {p if os.path.isdir(p) else os.path.dirname(p) or "." for p in named}
        for top in {work_tree_top(folder) for folder in folders}:
            if top in allowed and ("kustomizations", top, staged) not in _started:
                _started["kustomizations", top, staged] = Git(top, _kustomizations_args(staged))


def work_tree_top(folder: str) -> str | None:
    """The real path of the top of the work tree ``folder`` is in, as the layout finds
    it: the nearest folder at or above it that holds ``.git``."""
    folder = os.path.realpath(folder)
    while not os.path.exists(os.path.join(folder, ".git")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return folder


def _arguments(args: Sequence[str]) -> tuple[list[str], list[str], bool]:
    """(paths, --context values, whether --changed-since is given), read as the
    CLI (click) reads the options of these commands: ``--`` ends the options, a long
    option's value follows it or ``=``, short options may be run together (``-qj 2``,
    ``-qj2``: the first that takes a value takes the rest, or the next argument)."""
    paths: list[str] = []
    context: list[str] = []
    changed = False
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            paths.extend(rest)
            break
        if arg.startswith("-") and arg != "-":
            if not arg.startswith("--"):
                for at, letter in enumerate(arg[1:], 2):
                    if "-" + letter in VALUE_OPTIONS:
                        if at == len(arg):  # none attached: the next argument
                            next(rest, "")
                        break
                continue  # short options: none takes --context or --changed-since
            name, eq, value = arg.partition("=")
            if name not in VALUE_OPTIONS:
                continue  # a flag
            if not eq:
                value = next(rest, "")
            if name == "--context":
                context.append(value)
            changed = changed or name == "--changed-since"
            continue
        paths.append(arg)
    return paths, context, changed


def stop_unclaimed() -> None:
    """Stop what was started early and never asked for."""
    while _started:
        _started.popitem()[1].cancel()
