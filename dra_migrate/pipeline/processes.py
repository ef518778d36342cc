"""What the proofs (``convert --verify-builds``: builds.py, ``--verify-helm``: renders.py)
share about the processes they run and the copies those processes read.

- The binary: only absolute ``PATH`` entries are searched (as Go's ``os/exec`` does
  since ``exec.ErrDot``, go1.19): an empty entry or ``.`` would run a ``helm`` or
  ``kubectl`` committed in the scanned repository.
- The copy: only the tree's own files (regular files and folders; symbolic links kept
  as links when they stay inside it, left out and named when they leave it; FIFOs,
  devices and sockets never opened), bounded in files and bytes.
- The environment: none of the runner's; a home in the proofs' temporary folder, every
  proxy pointed at a closed local port, git's protocols all refused, helm's plugins
  off and its configuration, cache and data in that home (helm's own list of them:
  helm/helm ``cmd/helm/root.go``, the ``Environment variables`` table).
- The run: stdout read as a stream up to the file stage's size limit, stderr kept only
  as a bounded tail the caller reads for its own words (never passed on), the process
  killed at the limit or the deadline; every process the proofs start is stopped when
  the run is interrupted.
- The time: one budget for every process of a run's proofs, each process's share of
  it bounded.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

BUDGET = 600.0  # seconds for every process of a run's proofs together
SHARE = 60.0  # seconds at most for one process (one build, one rendering)
COPY_FILES = 50_000  # files and folders of one copy
COPY_BYTES = 512 * 2**20  # bytes of one copy
STDERR_TAIL = 64 * 1024  # bytes of stderr kept (the end: where the error is)
CLOSED_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens, nothing leaves
SKIPPED = (".git", "node_modules", ".venv", "__pycache__")  # folders never copied


def which(name: str) -> str | None:
    """The program ``name`` on ``PATH``, absolute entries only (``git.which``)."""
    from dra_migrate import git

    return git.which(name)


def absolute_path() -> list[str]:
    from dra_migrate import git

    return git.absolute_path()


def environment(home: str) -> dict[str, str]:
    """The whole environment of a proof's process: nothing of the runner's but the
    absolute ``PATH`` entries; offline by every setting helm and kubectl have."""
    os.makedirs(home, mode=0o700, exist_ok=True)
    env = {
        "PATH": os.pathsep.join(absolute_path()),
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C",
        "LC_ALL": "C",
        # Go's net/http (helm's getters, kustomize's remote files) and git honour these
        "NO_PROXY": "",
        "no_proxy": "",
        # git (kustomize's remote bases clone with it): no protocol allowed, no prompt,
        # no configuration of the runner's
        "GIT_ALLOW_PROTOCOL": "",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        # helm: no plugin (a downloader plugin could fetch), everything in the home
        "HELM_NO_PLUGINS": "1",
        "HELM_PLUGINS": os.path.join(home, "helm-plugins"),
        "HELM_CACHE_HOME": os.path.join(home, "helm-cache"),
        "HELM_CONFIG_HOME": os.path.join(home, "helm-config"),
        "HELM_DATA_HOME": os.path.join(home, "helm-data"),
        "HELM_REGISTRY_CONFIG": os.path.join(home, "helm-registry.json"),
        "HELM_REPOSITORY_CONFIG": os.path.join(home, "helm-repositories.yaml"),
        "HELM_REPOSITORY_CACHE": os.path.join(home, "helm-repository-cache"),
        # kubectl: no kubeconfig (kustomize needs none; nothing reaches a cluster)
        "KUBECONFIG": os.path.join(home, "kubeconfig-none"),
    }
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = CLOSED_PROXY
    return env


# --- the time budget ----------------------------------------------------------------------


class Budget:
    """One time budget for every process of a run's proofs: each process gets at most
    ``share`` seconds, and never more than what is left."""

    def __init__(self, total: float = BUDGET, share: float = SHARE) -> None:
        self.total, self.share = total, share
        self.deadline = time.monotonic() + total

    def next_share(self) -> float:
        """Seconds the next process may take; 0 when the budget is spent."""
        return max(0.0, min(self.share, self.deadline - time.monotonic()))

    def spent(self) -> str:
        return f"the proofs' time budget of {self.total:g} seconds is spent"


# --- running a process --------------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    """What a process did: its stdout when it exited 0 within its limits; else
    ``why`` in the tool's own words (exit status, deadline, size) and the end of its
    stderr for the caller to read, never to show."""

    stdout: bytes | None
    status: int | None = None
    stderr: bytes = b""
    why: str = ""
    killed: bool = False


_LIVE: set[object] = set()  # the processes of the proofs that are running
_LIVE_LOCK = threading.Lock()
_STOPPED = threading.Event()  # set by stop_all: no process starts until a new workspace


def run(
    argv: Sequence[str], cwd: str | None, env: dict[str, str], timeout: float, limit: int
) -> Outcome:
    """``argv`` with its stdout read as it comes, at most ``limit`` bytes, within
    ``timeout`` seconds; stdin is empty; the process is killed at either bound."""
    import selectors
    import subprocess

    if timeout <= 0:
        return Outcome(None, why="not run: no time is left")
    if _STOPPED.is_set():
        return Outcome(None, why="not run: the run is stopping")
    try:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a signal to the terminal's group is the run's to pass on
        )
    except OSError as exc:
        return Outcome(None, why=f"cannot be started: {exc.strerror or type(exc).__name__}")
    with _LIVE_LOCK:
        _LIVE.add(process)
    if _STOPPED.is_set():  # stopped while it started: it never runs on
        _kill(process)
    out, err = bytearray(), bytearray()
    why = ""
    deadline = time.monotonic() + timeout
    assert process.stdout is not None and process.stderr is not None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ, out)
            selector.register(process.stderr, selectors.EVENT_READ, err)
            while selector.get_map() and not why:
                left = deadline - time.monotonic()
                if left <= 0:
                    why = f"stopped: no answer within {timeout:g} seconds"
                    break
                for key, _ in selector.select(min(left, 1.0)):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        continue
                    buffer = key.data
                    buffer += chunk
                    if buffer is err and len(err) > STDERR_TAIL:
                        del err[: len(err) - STDERR_TAIL]
                    if buffer is out and len(out) > limit:
                        why = f"stopped: its output is larger than the size limit ({_size(limit)})"
                        break
        if not why:
            left = max(0.0, deadline - time.monotonic())
            try:
                process.wait(left)
            except subprocess.TimeoutExpired:
                why = f"stopped: no answer within {timeout:g} seconds"
    finally:
        killed = process.poll() is None
        if killed:
            _kill(process)
        process.stdout.close()
        process.stderr.close()
        with _LIVE_LOCK:
            _LIVE.discard(process)
    if why:
        return Outcome(None, None, bytes(err), why, killed)
    if process.returncode != 0:
        return Outcome(None, process.returncode, bytes(err), _status(process.returncode))
    return Outcome(bytes(out), 0, bytes(err))


def _status(code: int) -> str:
    if code < 0:
        import signal

        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit status {code}"


def _kill(process: object) -> None:
    """The process and its group killed, and waited for."""
    import signal
    import subprocess

    assert isinstance(process, subprocess.Popen)
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        process.kill()
    with contextlib.suppress(Exception):
        process.wait(5)


def stop_all() -> None:
    """Every process the proofs started that still runs: killed (an interrupted run);
    none starts after it until the next ``workspace``."""
    _STOPPED.set()
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        _kill(process)


@contextlib.contextmanager
def workspace(prefix: str) -> Iterator[str]:
    """The proofs' temporary folder: removed when the block ends, also on SIGINT and
    SIGTERM (turned into ``KeyboardInterrupt`` while the block runs in the main
    thread), the processes started in it stopped first."""
    import shutil
    import signal
    import tempfile

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = None
    with contextlib.suppress(ValueError):  # not the main thread: SIGTERM as it is
        previous = signal.signal(signal.SIGTERM, interrupt)
    folder = tempfile.mkdtemp(prefix=prefix)
    _STOPPED.clear()
    try:
        yield folder
    except BaseException:  # an interrupt (or a bug): no process of the proofs runs on
        stop_all()
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


# --- copies ------------------------------------------------------------------------------


class TooLarge(Exception):
    """A copy past ``COPY_FILES`` files or ``COPY_BYTES`` bytes."""


class Outside(Exception):
    """A folder to copy whose real path is outside the area it may be copied from (a
    chart folder that is a link out of the repository)."""


@dataclass(slots=True)
class Copied:
    """A copy: ``root``, the folder of the copy that is the folder copied; what it left
    out: links whose real target leaves the area they may point into (their path
    relative to the folder copied, and their text) and files that are not regular
    (FIFOs, devices, sockets)."""

    root: str = ""
    links_out: list[tuple[str, str]] = field(default_factory=list)
    not_regular: list[str] = field(default_factory=list)
    dangling: list[str] = field(default_factory=list)  # links to nothing (kept as they are)
    files: int = 0
    size: int = 0


_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def repository(paths: Sequence[str]) -> str:
    """The repository the paths are in: the top of the git work tree of each (else the
    path's own folder), and the folder that holds them all."""
    from dra_migrate import git

    tops = []
    for path in paths or (".",):
        folder = os.path.realpath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
        tops.append(git.work_tree_top(folder) or folder)
    return os.path.commonpath(tops)


def copy_tree(
    source: str,
    target: str,
    within: str | None = None,
    files: int = COPY_FILES,
    size: int = COPY_BYTES,
) -> Copied:
    """Copy the folder ``source`` into ``target`` (which must not exist): folders and
    regular files, each opened without following a link and without blocking, and
    symbolic links as links. A link whose real target lies inside ``within`` (the
    repository; ``source`` by default) is kept, relative, and what it points at is
    copied too, at its place beside ``source`` (a chart's helpers linked from a
    folder beside it); a link that leaves ``within``, and a file that is not regular,
    is left out and named in the answer. Past ``files`` entries or ``size`` bytes,
    ``TooLarge``. Folders of ``SKIPPED`` are not copied. Nothing outside ``within``
    is ever opened: a link to ``/proc``, ``/dev`` or a runner's credentials is a
    name, never read."""
    root = os.path.realpath(source)
    area = os.path.realpath(within) if within else root
    if not inside(root, area):
        raise Outside(f"{source} leads outside the repository")
    done = Copied()
    links: dict[str, str] = {}  # a link's real path -> its real target (inside the area)
    items = _items(root, area, links, done, files)
    layout = os.path.commonpath(items) if len(items) > 1 else root
    done.root = os.path.normpath(os.path.join(target, os.path.relpath(root, layout)))
    done.files = 0
    os.makedirs(target, mode=0o700)
    for item in items:
        destination = os.path.join(target, os.path.relpath(item, layout))
        os.makedirs(os.path.dirname(destination), mode=0o700, exist_ok=True)
        if os.path.isdir(item) and not os.path.islink(item):
            os.makedirs(destination, mode=0o700, exist_ok=True)
            _copy_folder(item, destination, root, links, done, files, size)
        else:
            _copy_file(item, os.path.relpath(item, root), destination, done, size)
    return done


def _items(root: str, area: str, links: dict[str, str], done: Copied, files: int) -> list[str]:
    """The real paths to copy: ``root`` and every target of a link met below it (and
    below those), inside ``area``, none below another; links met are noted in
    ``links`` (their real path -> their real target) and those that leave the area
    in ``done.links_out``."""
    items = [root]
    queue = [root]
    seen = 0
    while queue:
        folder = queue.pop()
        stack = [folder]
        while stack:
            here = stack.pop()
            with os.scandir(here) as entries:
                for entry in entries:
                    seen += 1
                    if seen > files:
                        raise TooLarge(f"more than {files} files")
                    if entry.is_symlink():
                        real = os.path.realpath(entry.path)
                        if not inside(real, area):
                            done.links_out.append(
                                (os.path.relpath(entry.path, root), os.readlink(entry.path))
                            )
                            continue
                        links[entry.path] = real
                        if not os.path.lexists(real):
                            done.dangling.append(os.path.relpath(entry.path, root))
                            continue
                        if not any(inside(real, i) for i in items):
                            items[:] = [i for i in items if not inside(i, real)] + [real]
                            if os.path.isdir(real):
                                queue.append(real)
                    elif entry.is_dir(follow_symlinks=False) and entry.name not in SKIPPED:
                        stack.append(entry.path)
    return sorted(items)


def _copy_folder(
    folder: str,
    target: str,
    root: str,
    links: dict[str, str],
    done: Copied,
    files: int,
    size: int,
) -> None:
    stack = [(folder, target)]
    while stack:
        here, there = stack.pop()
        with os.scandir(here) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            done.files += 1
            if done.files > files:
                raise TooLarge(f"more than {files} files")
            destination = os.path.join(there, entry.name)
            inner = os.path.relpath(entry.path, root)
            if entry.is_symlink():
                real = links.get(entry.path)
                if real is not None:  # inside the area: a link to the same file of the copy
                    os.symlink(os.path.relpath(real, here), destination)
            elif entry.is_dir(follow_symlinks=False):
                if entry.name in SKIPPED:
                    continue
                os.mkdir(destination, 0o700)
                stack.append((entry.path, destination))
            elif entry.is_file(follow_symlinks=False):
                _copy_file(entry.path, inner, destination, done, size)
            else:
                done.not_regular.append(inner)


def _copy_file(path: str, inner: str, destination: str, done: Copied, size: int) -> None:
    try:
        fd = os.open(path, _READ)
    except OSError:  # swapped for a link or a FIFO since it was listed: left out
        done.not_regular.append(inner)
        return
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            done.not_regular.append(inner)
            return
        left = size - done.size
        data = handle.read(left + 1)
        done.size += len(data)
        if done.size > size:
            raise TooLarge(f"more than {_size(size)}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    out = os.open(destination, flags, (info.st_mode & 0o777) | 0o600)
    with os.fdopen(out, "wb") as handle:
        handle.write(data)


def _size(limit: int) -> str:
    for factor, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if limit % factor == 0:
            return f"{limit // factor} {unit}"
    return f"{limit} bytes"


def inside(path: str, folder: str) -> bool:
    """Whether the (real) ``path`` is ``folder`` or below it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# --- a failure in the tool's own words ---------------------------------------------------
#
# What helm or kubectl print on stderr may hold anything they read (a template's
# ``fail`` with ``.Files.Get`` of a linked file, a file's bytes in a YAML error), so it
# is never shown: a failure is said as the process's exit, the kind of failure from
# these tables (the first whose words the stderr holds), and the file it names when
# that is a file of the copy, shown relative to the chart or the repository.

HELM_FAILURES = (
    ("execution error at", "a template stops the rendering (fail, required)"),
    ("yaml parse error", "a template renders text that is not YAML"),
    ("parse error at", "a template does not parse"),
    ('executing "', "a template fails while it runs"),
    ("don't meet the specifications of the schema", "the values do not meet values.schema.json"),
    ("missing in charts/", "a dependency of Chart.yaml is missing from charts/"),
    ("chart.metadata", "Chart.yaml is not valid"),
    ("chart.yaml file is missing", "Chart.yaml is missing"),
)
KUSTOMIZE_FAILURES = (
    ("is not in or below", "it reads a file outside its folder (kustomize's load restrictor)"),
    ("cycle detected", "its kustomizations include each other"),
    ("already registered id", "two resources have the same kind and name"),
    ("external plugins disabled", "it asks for a plugin (not run)"),
    ("no such file or directory", "a file it names does not exist"),
    ("failed to find unique target", "a patch's target is not in the build"),
    ("no matches for", "a patch's target is not in the build"),
    ("unable to find one of 'kustomization", "a resource folder holds no kustomization"),
    ("must build at directory", "a resource is neither a file nor a kustomization folder"),
    ("yaml", "a file is not valid YAML for kustomize"),
)
_HELM_FILE = re.compile(
    r"(?<![\w./-])([\w.-]+(?:/[\w.-]+)+\.(?:yaml|yml|tpl|txt|json))(?::(\d+))?(?::\d+)?"
)
_ABSOLUTE = re.compile(r"(/[^\s'\":,()\[\]{}<>`]+)")


def helm_failure(outcome: Outcome, copy: str) -> str:
    """A failed ``helm template`` in the tool's words: how it ended, the kind of
    failure, and the chart-relative template file and line when helm names a file of
    the chart ``copy`` (its path there starts with the chart's name)."""
    text = outcome.stderr.decode("utf-8", "replace")
    parts = [outcome.why]
    kind = _kind(text, HELM_FAILURES)
    if kind:
        parts.append(kind)
    for match in _HELM_FILE.finditer(text):
        relative = match.group(1).split("/", 1)[1]
        if _file_in(copy, relative):
            line = match.group(2)
            parts.append(f"at {relative} line {line}" if line else f"in {relative}")
            break
    return "; ".join(parts)


def kustomize_failure(outcome: Outcome, copy: str, shown: str) -> str:
    """A failed build in the tool's words: how it ended, the kind of failure, and the
    first file of the ``copy`` it names, shown as ``shown`` (the copy's folder as the
    run shows it) joined with its path in the copy."""
    text = outcome.stderr.decode("utf-8", "replace")
    parts = [outcome.why]
    kind = _kind(text, KUSTOMIZE_FAILURES)
    if kind:
        parts.append(kind)
    real = os.path.realpath(copy)
    for match in _ABSOLUTE.finditer(text):
        path = os.path.normpath(match.group(1).rstrip("."))
        for base in (copy, real):
            if inside(path, base) and path != base:
                parts.append(
                    f"at {os.path.normpath(os.path.join(shown, os.path.relpath(path, base)))}"
                )
                break
        if parts[-1].startswith("at "):
            break
    return "; ".join(parts)


def _kind(text: str, table: tuple[tuple[str, str], ...]) -> str:
    lowered = text.lower()
    return next((said for words, said in table if words in lowered), "")


def _file_in(copy: str, relative: str) -> bool:
    path = os.path.normpath(os.path.join(copy, relative))
    real = os.path.realpath(path)
    return inside(path, copy) and inside(real, os.path.realpath(copy)) and os.path.isfile(real)
