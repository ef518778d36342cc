"""The command line: parse options, run the pipeline, render, map to an exit code.

Options are parsed by argparse (the standard library): a command builds only its
own parser. click, the CLI library this started with, cost about 30 ms of every
run to import (with the modules it pulls in: inspect, uuid, datetime), a sixth of
a one-file pre-commit run.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import os
import sys
from collections.abc import Callable, Iterator, Sequence

from dra_migrate import __version__, cache, git
from dra_migrate.convert.mapping import Config, Settings, find_config, load_config, parse_size
from dra_migrate.k8s.versions import (
    DEFAULT_TARGET,
    TARGETS,
    parse_feature_gates,
    parse_kube_version,
    target_for,
    warnings,
)
from dra_migrate.record import NamedTuple
from dra_migrate.repo.discover import Unreadable
from dra_migrate.report import FORMATS, renderer
from dra_migrate.report.findings import ConfigError, Finding, escape, finding, inert, quote_path
from dra_migrate.report.model import (
    EXIT_INTERRUPTED,
    EXIT_UNPROCESSED,
    EXIT_USAGE,
    FileResult,
    Report,
    Status,
)

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)
if TYPE_CHECKING:  # nor pathlib (8 ms with urllib.parse): paths are strings until a run writes
    from pathlib import Path
    from typing import Any, NoReturn


class Options(NamedTuple):
    """The options every command shares, resolved once."""

    paths: tuple[str, ...]
    settings: Settings
    excludes: tuple[str, ...]
    jobs: int | None
    stdin_filename: str
    notes: tuple[Finding, ...]  # run-level findings (DRA214)
    context: tuple[str, ...] = ()  # read for references, not reported (--context)
    changed_since: str | None = None  # report only files changed since this git ref


# --- option types: a bad value is a usage error (exit 2) naming the option ---


def path_type(
    exists: bool = False, file_okay: bool = True, dir_okay: bool = True, as_path: bool = False
) -> Callable[[str], Any]:
    """A path option's check: must exist, must not be a folder, must not be a file."""

    def check(value: str) -> Any:
        if not value:
            raise argparse.ArgumentTypeError("an empty path")
        if exists and not os.path.lexists(value):
            raise argparse.ArgumentTypeError(f"{quote_path(value)} does not exist")
        if not dir_okay and os.path.isdir(value):
            raise argparse.ArgumentTypeError(f"{quote_path(value)} is a folder, not a file")
        if not file_okay and os.path.exists(value) and not os.path.isdir(value):
            raise argparse.ArgumentTypeError(f"{quote_path(value)} is a file, not a folder")
        if as_path:
            from pathlib import Path

            return Path(value)
        return value

    check.__name__ = "path"  # argparse names the type in its messages
    return check


def at_least(kind: type[int] | type[float], low: float) -> Callable[[str], Any]:
    """A number option's check: an int or float no lower than ``low``."""

    def check(value: str) -> Any:
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a valid {kind.__name__}") from None
        if number < low:
            raise argparse.ArgumentTypeError(f"{value} is lower than {low}")
        return number

    check.__name__ = kind.__name__
    return check


class _Many(argparse.Action):
    """A repeatable option, gathered into a tuple (argparse's append takes a list)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, (*getattr(namespace, self.dest), values))


class _Help(argparse.HelpFormatter):
    """argparse's layout, keeping a description's paragraphs (docstrings).

    argparse makes a formatter for every option it is given (to check its metavar),
    and each asked ``shutil`` for the terminal's width: importing shutil (with bz2
    and lzma) cost every run a few milliseconds. The width is found here instead,
    as shutil finds it."""

    def __init__(self, prog: str, *args: Any, **kwargs: Any) -> None:
        if len(args) < 3:  # (indent_increment, max_help_position, width)
            kwargs.setdefault("width", _width())
        super().__init__(prog, *args, **kwargs)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n\n".join(
            super(_Help, self)._fill_text(p, width, indent) for p in text.split("\n\n")
        )


def _width() -> int:
    """``shutil.get_terminal_size().columns - 2``, argparse's width, without shutil."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


Build = Callable[[argparse.ArgumentParser], None]


def common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="*", metavar="PATHS", help="Files and folders to read (- for stdin)."
    )
    parser.add_argument(
        "--config",
        dest="config_path",
        metavar="FILE",
        type=path_type(dir_okay=False, as_path=True),
        help="Mapping file (default: .dra-migrate.yaml found upward from the first path).",
    )
    parser.add_argument(
        "--target",
        choices=TARGETS,
        help="resource.k8s.io version to write (default v1, served by Kubernetes 1.34+; "
        "--kube-version picks it from the cluster).",
    )
    parser.add_argument(
        "--kube-version", help="Cluster version, e.g. 1.34: picks --target and warns about it."
    )
    parser.add_argument(
        "--exclude",
        action=_Many,
        default=(),
        metavar="GLOB",
        help="gitignore-style pattern to skip (repeatable).",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=at_least(int, 1),
        metavar="N",
        help="Worker processes (default: CPU count).",
    )
    parser.add_argument(
        "--stdin-filename", default="-", metavar="NAME", help="Name to use for stdin in messages."
    )
    parser.add_argument(
        "--context",
        action=_Many,
        default=(),
        metavar="PATH",
        type=path_type(exists=True),
        help="Also read PATH for cross-file references, but report only on PATHS "
        "(pre-commit hooks: --context .).",
    )
    parser.add_argument(
        "--changed-since",
        metavar="REF",
        help="Report only on files changed since git REF (merge base with HEAD) "
        "and the files they reference.",
    )
    parser.add_argument(
        "--max-file-size",
        metavar="SIZE",
        help="Refuse files larger than this (bytes, or 64Mi; default 64Mi, or maxFileSize "
        "in the config).",
    )


def format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        dest="fmt",
        choices=list(FORMATS),
        default="text",
        help="Report format (github: workflow annotations; sarif: code scanning; junit: test "
        "reports). Default: text.",
    )


# --- workflow options: report files, suppressions, focus on changed files (issue 10) ---


class Workflow(NamedTuple):
    """Where the report goes and what it covers, shared by scan, convert and validate."""

    fmt: str
    output: Path | None
    show_suppressed: bool


def workflow_options(parser: argparse.ArgumentParser) -> None:
    format_option(parser)
    parser.add_argument(
        "--output",
        metavar="FILE",
        type=path_type(dir_okay=False, as_path=True),
        help="Write the --format report to FILE; the terminal still gets the text view.",
    )
    parser.add_argument(
        "--show-suppressed",
        action="store_true",
        help="List the findings that ignore comments and config entries silence.",
    )


def _cluster_options(context_flags: tuple[str, ...]) -> Build:
    """How to reach the cluster: the kubeconfig and context kubectl would use."""

    def add(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--kubeconfig",
            metavar="FILE",
            type=path_type(dir_okay=False),
            help="kubeconfig file (default: KUBECONFIG, ~/.kube/config, else in-cluster).",
        )
        parser.add_argument(
            *context_flags,
            dest="kube_context",
            metavar="NAME",
            help="kubeconfig context (default: the current one).",
        )
        parser.add_argument(
            "--request-timeout",
            type=at_least(float, 0.1),
            default=30.0,
            metavar="SECONDS",
            help="Seconds to wait for each API request (default: 30).",
        )
        parser.add_argument(
            "--page-size",
            type=at_least(int, 1),
            default=500,
            metavar="N",
            help="Objects per list request (limit/continue paging; default: 500).",
        )
        parser.add_argument(
            "--max-pages",
            type=at_least(int, 1),
            default=10_000,
            metavar="N",
            help="Pages one list may take before it is refused (default: 10000).",
        )
        parser.add_argument(
            "--max-response-size",
            type=_size_argument,
            default=64 * 2**20,
            metavar="SIZE",
            help="Refuse an API answer larger than this (bytes, or 64Mi; default: 64Mi).",
        )

    return add


# inventory has no --context of its own: it takes kubectl's name (and --kube-context);
# validate's --context is the repository context of pre-commit hooks, so there the
# kubeconfig context is --kube-context only.
cluster_options = _cluster_options(("--context", "--kube-context"))
cluster_options_beside_context = _cluster_options(("--kube-context",))


def _workflow(kwargs: dict[str, Any]) -> Workflow:
    """Take the workflow options out of a command's keyword arguments."""
    return Workflow(kwargs.pop("fmt"), kwargs.pop("output"), kwargs.pop("show_suppressed"))


def _suppress(report: Report, options: Options, command: str, check: bool = False) -> None:
    """Ignore comments and config entries: silenced findings move aside, counted (suppress.py)."""
    from dra_migrate.pipeline import suppress

    suppress.apply(report, options.settings.config, command, check)


def _emit_report(report: Report, command: str, flow: Workflow, terminal: bool = True) -> None:
    """The chosen format to --output (and the text view to the terminal), or to stdout."""
    report.show_suppressed = flow.show_suppressed
    if flow.output is None:
        if terminal:
            _out(renderer(flow.fmt)(report, command))  # inert in every format
        return
    from dra_migrate.convert.writer import REPORT_PERMISSIONS, write_atomic

    try:
        text = renderer(flow.fmt)(report, command)
        write_atomic(flow.output, text.encode("utf-8"), keep=REPORT_PERMISSIONS)
    except OSError as exc:
        _fail_usage(ConfigError(f"--output {flow.output}: {exc.strerror or exc}"))
    if terminal:
        _out(renderer("text")(report, command))


CLUSTER_LIMITS = ("request_timeout", "page_size", "max_pages", "max_response_size")


def _cluster_limits(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Take the values of the cluster options out of a command's keyword arguments."""
    return {name: kwargs.pop(name) for name in CLUSTER_LIMITS}


def _size_argument(text: str) -> int:
    try:
        return parse_size(text)
    except ConfigError as error:
        raise argparse.ArgumentTypeError(error.args[0]) from None


def _connect(kubeconfig: str | None, context: str | None, limits: dict[str, Any]) -> Any:
    """A live reader, or exit with the one line of its ClusterError. ``limits`` are the
    values of the cluster options (the request timeout, page size and bounds)."""
    from dra_migrate.cluster import ClusterError, Connection, LiveReader

    try:
        return LiveReader(
            Connection(
                kubeconfig,
                context,
                timeout=limits["request_timeout"],
                page_size=limits["page_size"],
                max_response=limits["max_response_size"],
                max_pages=limits["max_pages"],
            )
        )
    except ClusterError as error:
        _fail_cluster(error)


def _fail_cluster(error: Any) -> NoReturn:
    _err(error.finding.format())
    sys.exit(error.exit_code)


def resolve(
    paths: tuple[str, ...],
    config_path: Path | None,
    target: str | None,
    kube_version: str | None,
    exclude: tuple[str, ...],
    jobs: int | None,
    stdin_filename: str,
    context: tuple[str, ...] = (),
    changed_since: str | None = None,
    max_file_size: str | None = None,
) -> Options:
    if not paths:
        raise ConfigError("no path given (use . for the current folder, - for stdin)")
    if "-" in paths and len(paths) > 1:
        raise ConfigError("- (stdin) cannot be combined with other paths")
    if paths == ("-",) and (context or changed_since):
        raise ConfigError("--context and --changed-since need paths, not - (stdin)")
    if changed_since is not None:
        from dra_migrate.repo.scope import valid_ref

        # argparse gives ``--changed-since=--`` as an empty list: the ref "--"
        changed_since = valid_ref(changed_since if isinstance(changed_since, str) else "--")
    git.trust((*paths, *context))  # git runs for these work trees only, never nested ones
    cache.keep_out_of((*paths, *context))  # files a pull request commits never steer it
    config_file: Path | str | None = config_path
    if config_path is None:
        start = "." if paths[0] == "-" else paths[0]
        config_file = find_config(start if os.path.exists(start) else ".")
    elif not config_path.is_file():
        raise ConfigError(f"--config {config_path}: no such file")
    config: Config = load_config(config_file)
    if max_file_size is not None:
        try:
            config = dataclasses.replace(config, max_file_size=parse_size(max_file_size))
        except ConfigError as error:
            raise ConfigError(f"--max-file-size: {error.args[0]}") from None
    kube = kube_version or config.kube_version
    notes: list[Finding] = []
    chosen = target or config.target
    if kube is not None:
        minor = parse_kube_version(kube)
        chosen = chosen or target_for(minor)
        notes = [finding("DRA214", "", 0, 0, text) for text in warnings(chosen, minor)]
    return Options(
        paths=paths,
        settings=Settings(target=chosen or DEFAULT_TARGET, config=config, kube_version=kube),
        excludes=exclude,
        jobs=jobs,
        stdin_filename=stdin_filename,
        notes=tuple(notes),
        context=context,
        changed_since=changed_since,
    )


PROGRESS_FROM = 200  # files to parse before a progress bar is worth showing


@contextlib.contextmanager
def progress_bar(fmt: str = "text") -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr for long runs: only on a terminal, never with a
    machine-readable format (their consumers read stdout, often in CI logs)."""
    if fmt != "text" or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console  # lazy: rich's progress code costs start-up time
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task: list[Any] = []

        def update(done: int, total: int) -> None:
            if total < PROGRESS_FROM:
                return
            if not task:
                task.append(bar.add_task("files", total=total))
            bar.update(task[0], completed=done)

        yield update


def execute(
    options: Options,
    edit: bool = True,
    fmt: str = "text",
    skip: tuple[Path, ...] = (),
    sink: Callable[[FileResult], None] | None = None,
) -> Report:
    """Run the pipeline over the paths, or over standard input part by part (``sink``
    gets each part's result while its text is at hand)."""
    from dra_migrate.pipeline import many_files

    if options.paths == ("-",):
        report = many_files.run_stream(
            sys.stdin.buffer, options.stdin_filename, options.settings, edit, sink
        )
    else:
        with progress_bar(fmt) as progress:
            report = focused(
                options,
                lambda paths, only, context: many_files.run(
                    paths,
                    options.settings,
                    options.excludes,
                    options.jobs,
                    edit,
                    progress,
                    skip,
                    only,
                    context,
                ),
            )
    report.findings.extend(options.notes)
    report.api_version = options.settings.target
    report.config_path = options.settings.config.path or ""
    return report


def focused(
    options: Options,
    run: Callable[[tuple[str, ...], set[str] | None, tuple[str, ...]], Report],
) -> Report:
    """Run over the paths and --context, report on the paths or what changed (scope.py);
    ``run`` is given the paths, the files reported on (None: all) and the context."""
    if not options.context and options.changed_since is None:
        return run(options.paths, None, ())
    from dra_migrate.repo import scope

    excludes = [*options.settings.config.exclude, *options.excludes]
    keep = scope.files_under(options.paths, excludes)
    if options.changed_since is None:  # --context: the rest is read for references only
        report = run(options.paths, None, options.context)
    else:
        universe = keep | scope.files_under(options.context, excludes)
        changes = scope.changes(
            options.changed_since, options.paths[0], options.settings.config.max_file_size
        )
        keep &= changes.paths
        keep |= scope.referenced(keep, universe, changes.before)
        report = run(tuple(dict.fromkeys(options.paths + options.context)), keep, ())
    scope.narrow(report, keep)
    return report


def read_stdin(limit: int) -> bytes:
    """Standard input, refused (DRA011) past ``limit`` bytes."""
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise Unreadable(
            "DRA011", f"standard input is larger than the limit of {limit} bytes (--max-file-size)"
        )
    return data


def _unread(options: Options, exc: Unreadable) -> Report:
    return Report([FileResult.unreadable(options.stdin_filename, exc.code, exc.message)])


def _fail_usage(error: ConfigError) -> None:
    _err(f"dra-migrate: error: {error.format()}")
    sys.exit(EXIT_USAGE)


def _print_findings(findings: list[Finding]) -> None:
    for f in findings:
        _err(f.format())


_OUTPUT_ERRORS = {errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT}


def _out(text: str) -> None:
    """Text for stdout, as it is (a report, a diff, YAML)."""
    sys.stdout.write(text)
    sys.stdout.flush()


def _err(line: str) -> None:
    """One line for stderr, after what stdout has so far. A CI runner reads workflow
    commands on stderr too: no name in it can make one (``inert``)."""
    sys.stdout.flush()
    sys.stderr.write(inert(line) + "\n")
    sys.stderr.flush()


@contextlib.contextmanager
def _verbatim() -> Iterator[None]:
    """Text of the input printed as it is (a diff), which no escape may change: under
    GitHub Actions it is printed between ``::stop-commands::`` and a token that no
    input can know, so the runner reads none of its lines as a workflow command."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        yield
        return
    import secrets

    token = secrets.token_hex(16)
    _out(f"::stop-commands::{token}\n")
    try:
        yield
    finally:
        _out(f"::{token}::\n")


def scan_options(parser: argparse.ArgumentParser) -> None:
    common_options(parser)
    workflow_options(parser)


def scan(**kwargs: Any) -> None:
    """List every pod spec that asks for GPUs through extended resources."""
    flow = _workflow(kwargs)
    try:
        options = resolve(**kwargs)
    except ConfigError as error:
        _fail_usage(error)
        return
    try:
        report = execute(options, edit=False, fmt=flow.fmt)
    except ConfigError as error:
        _fail_usage(error)
        return
    _suppress(report, options, "scan")
    _emit_report(report, "scan", flow)
    if flow.fmt == "text":
        _err(_config_used(options.settings.config))
    sys.exit(EXIT_UNPROCESSED if report.count(Status.FAILED) else 0)


def convert_options(parser: argparse.ArgumentParser) -> None:
    common_options(parser)
    parser.add_argument(
        "--diff", action="store_true", help="Print a unified diff; write nothing (the default)."
    )
    parser.add_argument(
        "--check", action="store_true", help="Write nothing; exit 1 when a file would change."
    )
    parser.add_argument("--write", action="store_true", help="Rewrite files in place (atomically).")
    parser.add_argument(
        "--output-dir",
        metavar="DIR",
        type=path_type(file_okay=False, as_path=True),
        help="Write converted copies of changed files here, in the same relative layout.",
    )
    parser.add_argument(
        "--write-through-links",
        action="store_true",
        help="With --write, also rewrite the targets of symbolic links that lie outside the "
        "paths given (skipped by default, DRA013).",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="Only errors on stderr.")
    workflow_options(parser)


def convert(
    diff: bool,
    check: bool,
    write: bool,
    output_dir: Path | None,
    write_through_links: bool,
    quiet: bool,
    **kwargs: Any,
) -> None:
    """Rewrite GPU requests as ResourceClaimTemplates and claims."""
    flow = _workflow(kwargs)
    mode = "write" if write else ("diff" if diff else None)
    # a report on stdout replaces the diff (or the converted stream) there
    report_on_stdout = flow.fmt != "text" and flow.output is None
    try:
        options = resolve(**kwargs)
        if report_on_stdout and (diff or kwargs["paths"] == ("-",)):
            raise ConfigError(
                f"--format {flow.fmt} prints the report on stdout, where the "
                f"{'diff' if diff else 'converted stream'} goes: add --output FILE"
            )
        if diff and write:
            raise ConfigError("--diff writes nothing: it cannot be combined with --write")
        if output_dir is not None and (mode == "write" or check):
            raise ConfigError("--output-dir cannot be combined with --write or --check")
        if check and mode == "write":
            raise ConfigError("--check writes nothing: it cannot be combined with --write")
        if options.paths == ("-",) and output_dir is not None:
            raise ConfigError("--output-dir needs paths, not - (stdin)")
    except ConfigError as error:
        _fail_usage(error)
        return
    stdin = options.paths == ("-",)
    stream = _StreamOut(mode, check, options.stdin_filename) if stdin else None
    try:
        report = execute(
            options,
            fmt=flow.fmt,
            skip=(output_dir,) if output_dir is not None else (),
            sink=stream.add if stream is not None else None,
        )
    except ConfigError as error:
        _fail_usage(error)
        return
    report.changes_fail = check
    if check:
        from dra_migrate.pipeline.many_files import mark_pending

        mark_pending(report)
    _suppress(report, options, "convert", check)
    written: list[str] = []
    try:
        with _terminated_as_interrupt():
            if stream is not None:
                stream.emit(report.files[0])
            else:
                written = _files_out(
                    report,
                    mode,
                    check,
                    output_dir,
                    options.paths,
                    write_through_links,
                    written,
                    diff=not report_on_stdout,
                )
    except KeyboardInterrupt:
        _interrupted(written)
    _emit_report(report, "convert", flow, terminal=report_on_stdout)
    findings = report.all_findings
    if not (report_on_stdout and flow.fmt == "github"):  # annotations are the findings:
        # the log never shows one twice
        _print_findings([f for f in findings if not quiet or f.severity.value == "error"])
    if flow.show_suppressed and not quiet:
        for s in report.suppressed:
            _err(f"{s.finding.format()} [suppressed by {escape(s.source)}]")
    if not quiet:
        _err(_summary(report, mode, check, output_dir))
    sys.exit(report.exit_code(changes_fail=check))


@contextlib.contextmanager
def _terminated_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI timeout, a killed hook) stops a write like Ctrl-C: the file being
    written is left as it was, its temporary file removed."""

    import signal  # only where something is written

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupted(written: list[str]) -> None:
    shown = ", ".join(quote_path(p) for p in written) if written else "none"
    _err(
        f"dra-migrate: interrupted; {len(written)} file(s) written ({shown}); "
        "every other file is as it was"
    )
    sys.exit(EXIT_INTERRUPTED)


class _StreamOut:
    """What ``convert -`` writes to stdout (the converted stream, or its diff), gathered
    part by part on disk and written only once the whole stream is known to be
    processed: a half-converted stream must never reach kubectl."""

    def __init__(self, mode: str | None, check: bool, path: str) -> None:
        import tempfile

        from dra_migrate.convert.writer import StreamDiff

        self.mode, self.check = mode, check
        self.diff = StreamDiff(path) if mode == "diff" else None
        self.spool = tempfile.TemporaryFile()  # noqa: SIM115 (closed by emit)

    def add(self, part: FileResult) -> None:
        new = part.converted if part.status is Status.CHANGED else part.original
        if new is None or part.original is None:
            return
        if self.diff is not None:
            self.diff.add(part.original, new, part.regions)
        elif not self.check:
            self.spool.write(new)

    def emit(self, result: FileResult) -> None:
        with self.spool:
            if result.status is Status.FAILED or any(f.blocks for f in result.findings):
                return  # nothing on stdout: a half-converted stream must never reach kubectl
            out = sys.stdout.buffer
            if self.diff is not None:
                if result.status is Status.CHANGED:
                    with _verbatim():
                        for text in self.diff.render():
                            out.write(text.encode("utf-8", "surrogateescape"))
                        out.flush()
                out.flush()
                return
            self.spool.seek(0)
            while chunk := self.spool.read(1 << 20):
                out.write(chunk)
            out.flush()


def _files_out(
    report: Report,
    mode: str | None,
    check: bool,
    output_dir: Path | None,
    roots: tuple[str, ...],  # the paths given
    through_links: bool,
    written: list[str],
    diff: bool = True,
) -> list[str]:
    """Write or print every changed file; ``written`` collects the paths written."""
    if not any(r.status is Status.CHANGED for r in report.files):
        return written  # nothing to write or show: the writer (and difflib) stay unloaded
    shows_diffs = diff and output_dir is None and mode != "write" and (mode == "diff" or not check)
    with _verbatim() if shows_diffs else contextlib.nullcontext():
        return _files_written(report, mode, check, output_dir, roots, through_links, written, diff)


def _files_written(
    report: Report,
    mode: str | None,
    check: bool,
    output_dir: Path | None,
    roots: tuple[str, ...],
    through_links: bool,
    written: list[str],
    diff: bool,
) -> list[str]:
    from dra_migrate.convert import writer

    targets: dict[Path, list[FileResult]] = {}
    if output_dir is not None:
        for result in report.files:
            if result.status is Status.CHANGED:
                targets.setdefault(writer.output_path(output_dir, result.path), []).append(result)
    for result in report.files:
        if result.status is not Status.CHANGED or result.converted is None:
            continue
        if output_dir is not None or mode == "write":
            assert result.original is not None
            try:
                from pathlib import Path  # a run that writes (resources.py)

                if output_dir is None:
                    writer.write_in_place(
                        Path(result.path),
                        result.converted,
                        result.original,
                        tuple(Path(p) for p in roots),
                        through_links,
                    )
                    written.append(result.path)
                    continue
                target = writer.output_path(output_dir, result.path)
                if len(targets[target]) > 1:
                    others = ", ".join(r.path for r in targets[target] if r is not result)
                    raise writer.Refused(
                        "DRA015", f"{target} is also the output of {others}; none is written"
                    )
                writer.write_copy(output_dir, result.path, result.converted, Path(result.path))
                written.append(str(target))
            except writer.Refused as refused:
                result.status = Status.FAILED
                result.findings.append(finding(refused.code, result.path, 1, 1, refused.message))
            except OSError as exc:
                reason = exc.strerror or str(exc)
                where = writer.output_path(output_dir, result.path) if output_dir else result.path
                result.status = Status.FAILED
                result.findings.append(
                    finding("DRA009", result.path, 1, 1, f"cannot write {where}: {reason}")
                )
        elif diff and (mode == "diff" or not check):
            assert result.original is not None
            _out(
                writer.unified_diff(result.path, result.original, result.converted, result.regions)
            )
    return written


def _summary(report: Report, mode: str | None, check: bool, output_dir: Path | None) -> str:
    from dra_migrate.report.text_format import convert_summary

    done = mode == "write" or output_dir is not None
    return convert_summary(report, done, check, str(output_dir) if output_dir else None)


def _config_used(config: Config) -> str:
    """Which mapping steered the run: scan and validate name it on stderr, as the convert
    summary does."""
    if config.path is None:
        return "dra-migrate: using the built-in mapping (no .dra-migrate.yaml found)."
    return f"dra-migrate: using mapping {quote_path(config.path)}."


def validate_options(parser: argparse.ArgumentParser) -> None:
    common_options(parser)
    workflow_options(parser)
    parser.add_argument(
        "--external-templates",
        action="store_true",
        help="ResourceClaimTemplates and ResourceClaims may be defined outside the input.",
    )
    parser.add_argument(
        "--resource-slices",
        dest="slices",
        metavar="FILE",
        type=path_type(dir_okay=False),
        help="kubectl get resourceslices -o yaml|json: evaluate classes and requests on those "
        "devices.",
    )
    parser.add_argument(
        "--cluster",
        dest="live",
        action="store_true",
        help="Evaluate classes and requests on the live cluster's ResourceSlices (read-only).",
    )
    parser.add_argument(
        "--feature-gates",
        metavar="NAME=BOOL,...",
        help="DRA feature gates the cluster turns on or off, as kube-apiserver takes them "
        "(DRADeviceTaints=true,DRAConsumableCapacity=true); the rest follow --kube-version's "
        "defaults. Also featureGates: in the config.",
    )
    cluster_options_beside_context(parser)


def validate_command(
    external_templates: bool,
    slices: str | None,
    feature_gates: str | None,
    live: bool,
    kubeconfig: str | None,
    kube_context: str | None,
    **kwargs: Any,
) -> None:
    """Check DRA objects and the pods that use them: schemas, references, CEL, devices."""
    from dra_migrate.pipeline import many_files
    from dra_migrate.validate import ValidateSettings

    flow = _workflow(kwargs)
    limits = _cluster_limits(kwargs)
    explicit_target = kwargs.get("target")
    try:
        options = resolve(**kwargs)
        if live and slices:
            raise ConfigError("--cluster reads the live ResourceSlices: drop --resource-slices")
        if not live and (kubeconfig or kube_context):
            raise ConfigError("--kubeconfig and --kube-context need --cluster")
        limit = options.settings.config.max_file_size
        devices = many_files.load_slices(slices, limit) if slices else None
        gates = dict(options.settings.config.feature_gates)
        if feature_gates is not None:
            gates.update(parse_feature_gates(feature_gates))
    except ConfigError as error:
        _fail_usage(error)
        return
    notes: list[Finding] = []
    if live:
        from dra_migrate.cluster import ClusterError, slice_devices

        reader = _connect(kubeconfig, kube_context, limits)
        try:
            devices = slice_devices(reader)
        except ClusterError as error:
            _fail_cluster(error)
        finally:
            reader.close()
        if reader.dra_version is None:
            _fail_usage(ConfigError(f"{reader.dra_note}: no ResourceSlices to evaluate claims on"))
        notes.append(
            finding(
                "DRA610",
                "",
                0,
                0,
                f"{len(devices)} device(s) in the ResourceSlices of {reader.source}, "
                f"read as {'resource.k8s.io/' + reader.dra_version}",
            )
        )
    settings = ValidateSettings(
        kube_version=options.settings.kube_version,
        target=explicit_target or options.settings.config.target,
        external_templates=external_templates,
        feature_gates=tuple(gates.items()),
    )
    stdin = None
    if options.paths == ("-",):
        try:
            stdin = (options.stdin_filename, read_stdin(options.settings.config.max_file_size))
        except Unreadable as exc:
            unread = _unread(options, exc)
            _emit_report(unread, "validate", flow)
            sys.exit(unread.exit_code())
    try:
        with progress_bar(flow.fmt) as progress:
            report = focused(
                options,
                # validate reads every file: its cross-file checks need the references
                lambda paths, _only, context: many_files.run_validate(
                    tuple(dict.fromkeys(paths + context)),
                    settings,
                    options.settings.config,
                    options.excludes,
                    options.jobs,
                    devices,
                    stdin,
                    progress,
                ),
            )
    except ConfigError as error:
        _fail_usage(error)
        return
    report.findings[:0] = notes
    _suppress(report, options, "validate")
    _emit_report(report, "validate", flow)
    if flow.fmt == "text":
        _err(_config_used(options.settings.config))
    sys.exit(report.exit_code())


def output_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        type=path_type(dir_okay=False, as_path=True),
        help="Write to FILE (atomically) instead of stdout.",
    )


def strategy_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strategy",
        choices=["rewrite", "bridge", "auto"],
        default="auto",
        help="rewrite: ResourceClaimTemplates; bridge: DeviceClasses with extendedResourceName, "
        "workloads unchanged; auto (the default): bridge where --kube-version serves it and "
        "the workload needs nothing DRA-only.",
    )


def report_options(parser: argparse.ArgumentParser) -> None:
    common_options(parser)
    parser.add_argument(
        "--format",
        dest="fmt",
        choices=["text", "markdown", "html", "json"],
        default="text",
        help="Report format (json: schemas/report.schema.json). Default: text.",
    )
    output_option(parser)
    strategy_option(parser)
    parser.add_argument(
        "--resource-slices",
        dest="slices",
        metavar="FILE",
        type=path_type(dir_okay=False),
        help="kubectl get resourceslices -o yaml|json: check that the GPUs asked for fit, "
        "node by node.",
    )
    parser.add_argument(
        "--nodes",
        metavar="FILE",
        type=path_type(dir_okay=False),
        help="kubectl get nodes -o yaml|json: flag nodes that still advertise a bridged resource.",
    )
    parser.add_argument(
        "--cluster",
        dest="from_cluster",
        action="store_true",
        help="Read the ResourceSlices and Nodes from the live cluster (read-only), in place of "
        "--resource-slices and --nodes.",
    )
    cluster_options_beside_context(parser)


def report_command(
    fmt: str,
    output: Path | None,
    strategy: str,
    slices: str | None,
    nodes: str | None,
    from_cluster: bool,
    kubeconfig: str | None,
    kube_context: str | None,
    **kwargs: Any,
) -> None:
    """The staged migration plan of a repository: inventory, prerequisites, DeviceClasses,
    pilot wave, full conversion with rollback, and the risks."""
    from dra_migrate.migration import stages
    from dra_migrate.pipeline import many_files
    from dra_migrate.report import renderer
    from dra_migrate.report.migration import LiveInventory

    limits = _cluster_limits(kwargs)
    try:
        options = resolve(**kwargs)
        if options.paths == ("-",):
            raise ConfigError("report reads a repository: give paths, not - (stdin)")
        if from_cluster and (slices or nodes):
            raise ConfigError(
                "--cluster reads the live cluster: drop --resource-slices and --nodes"
            )
        if not from_cluster and (kubeconfig or kube_context):
            raise ConfigError("--kubeconfig and --kube-context need --cluster")
        live = None
        if from_cluster:
            live = _live_inventory(kubeconfig, kube_context, limits, options)
        elif slices or nodes:
            live = LiveInventory(
                source=", ".join(p for p in (slices, nodes) if p),
                kube_version=options.settings.kube_version,
                devices=many_files.load_slices(slices) if slices else [],
                nodes=many_files.load_nodes(nodes) if nodes else [],
            )
        settings = stages.PlanSettings(
            strategy, options.settings.kube_version, options.settings.target
        )
        report = execute(options, edit=False)
        report.plan, found = stages.build(report, options.settings.config, settings, live)
    except ConfigError as error:
        _fail_usage(error)
        return
    report.findings.extend(found)
    _emit(renderer(fmt)(report, "report"), output)
    sys.exit(report.exit_code())


def _live_inventory(
    kubeconfig: str | None,
    kube_context: str | None,
    limits: dict[str, Any],
    options: Options,
) -> Any:
    """Stage 1 and 2's view of the running cluster: its ResourceSlices and Nodes, read
    through the same read-only client as ``inventory --cluster``."""
    from dra_migrate.cluster import ClusterError, slice_devices
    from dra_migrate.pipeline import many_files
    from dra_migrate.report.migration import LiveInventory

    reader = _connect(kubeconfig, kube_context, limits)
    try:
        devices = slice_devices(reader) if reader.dra_version is not None else []
        nodes = many_files.nodes_from_objects(reader.list("nodes", None))
    except ClusterError as error:
        _fail_cluster(error)
    finally:
        reader.close()
    return LiveInventory(
        source=reader.source,
        kube_version=options.settings.kube_version,
        devices=devices,
        nodes=nodes,
    )


def deviceclasses_options(parser: argparse.ArgumentParser) -> None:
    common_options(parser)
    strategy_option(parser)
    output_option(parser)


def deviceclasses_command(strategy: str, output: Path | None, **kwargs: Any) -> None:
    """Render the DeviceClasses the mapping needs (deviceClasses in the configuration, and
    with --strategy bridge or auto one class with extendedResourceName per bridged resource).

    PATHS are optional: given, the classes follow what the repository asks for."""
    from dra_migrate.migration import stages

    scan_repo = bool(kwargs["paths"])
    kwargs["paths"] = kwargs["paths"] or (".",)
    try:
        options = resolve(**kwargs)
        settings = stages.PlanSettings(
            strategy, options.settings.kube_version, options.settings.target
        )
        if scan_repo:
            report = execute(options, edit=False)
            plan, found = stages.build(report, options.settings.config, settings)
            yaml_text = plan.classes_yaml
        else:
            classes = stages.classes_for_mapping(options.settings.config, settings)
            yaml_text, found = classes.yaml, classes.findings
    except ConfigError as error:
        _fail_usage(error)
        return
    findings = [f for f in found if f.code.startswith("DRA5")]
    _print_findings(findings)
    errors = any(f.severity.value == "error" for f in findings)
    if not (errors and output is not None):  # a file is written only when complete
        _emit(yaml_text, output)
    sys.exit(1 if errors else 0)


def _emit(text: str, output: Path | None) -> None:
    """To stdout, or atomically to ``output``."""
    if output is None:
        _out(text)
        return
    from dra_migrate.convert.writer import REPORT_PERMISSIONS, write_atomic

    try:
        write_atomic(output, text.encode("utf-8"), keep=REPORT_PERMISSIONS)
    except OSError as exc:
        _fail_usage(ConfigError(f"--output {output}: {exc.strerror or exc}"))


def inventory_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dumps",
        nargs="*",
        metavar="DUMPS",
        type=path_type(dir_okay=False),
        help="kubectl get -o yaml|json dumps to read, without --cluster.",
    )
    parser.add_argument(
        "--cluster",
        dest="live",
        action="store_true",
        help="Read the live cluster (read-only); without it, read kubectl get -o yaml dumps.",
    )
    cluster_options(parser)
    parser.add_argument(
        "--namespace", "-n", help="Pods and claims of this namespace (default: the context's)."
    )
    parser.add_argument(
        "--all-namespaces", "-A", action="store_true", help="Pods and claims of every namespace."
    )
    parser.add_argument(
        "--pending-after",
        default="5m",
        metavar="DURATION",
        help="Report ResourceClaims without an allocation older than this (90s, 5m, 1h; "
        "default: 5m).",
    )
    parser.add_argument(
        "--config",
        dest="config_path",
        metavar="FILE",
        type=path_type(dir_okay=False, as_path=True),
        help="Mapping file (default: .dra-migrate.yaml found upward from here).",
    )
    parser.add_argument(
        "--max-file-size",
        metavar="SIZE",
        help="Refuse dump files larger than this (bytes, or 64Mi; default 64Mi, or "
        "maxFileSize in the config).",
    )
    format_option(parser)


def inventory(
    dumps: tuple[str, ...],
    live: bool,
    kubeconfig: str | None,
    kube_context: str | None,
    namespace: str | None,
    all_namespaces: bool,
    pending_after: str,
    config_path: Path | None,
    max_file_size: str | None,
    fmt: str,
    **limits: Any,
) -> None:
    """What runs today: GPU workloads, nodes, DeviceClasses, devices, pending claims."""
    from dra_migrate.cluster import ClusterError, DumpReader, inventory_report, parse_duration
    from dra_migrate.report import renderer

    try:
        if live == bool(dumps):
            raise ConfigError("give --cluster, or kubectl get -o yaml dump files, not both")
        if namespace is not None and all_namespaces:
            raise ConfigError("--namespace and --all-namespaces cannot be combined")
        if not live and (kubeconfig or kube_context):
            raise ConfigError("--kubeconfig and --context need --cluster")
        try:
            threshold = parse_duration(pending_after)
        except ValueError as exc:
            raise ConfigError(f"--pending-after: {exc}") from None
        if config_path is not None and not config_path.is_file():
            raise ConfigError(f"--config {config_path}: no such file")
        config = load_config(config_path or find_config("."))
        if max_file_size is not None:
            try:
                config = dataclasses.replace(config, max_file_size=parse_size(max_file_size))
            except ConfigError as error:
                raise ConfigError(f"--max-file-size: {error.args[0]}") from None
    except ConfigError as error:
        _fail_usage(error)
        return
    if live:
        reader = _connect(kubeconfig, kube_context, limits)
        scope = None if all_namespaces else (namespace or reader.default_namespace)
    else:
        reader = DumpReader(dumps, config.max_file_size)
        scope = namespace
    try:
        report = inventory_report(reader, config, scope, threshold)
    except ClusterError as error:
        _fail_cluster(error)
    finally:
        if live:
            reader.close()
    _out(renderer(fmt)(report, "inventory"))
    sys.exit(EXIT_UNPROCESSED if report.count(Status.FAILED) else 0)


# --- the commands, and the dispatch to the one named ---


class Command(NamedTuple):
    options: Build
    run: Callable[..., None]
    summary: str
    operands: str = "paths"  # the destination of the file names (after ``--`` too)


COMMANDS = {
    "scan": Command(scan_options, scan, "List every pod spec that asks for GPUs."),
    "convert": Command(convert_options, convert, "Rewrite GPU requests as DRA claims."),
    "validate": Command(validate_options, validate_command, "Check DRA objects and their pods."),
    "report": Command(report_options, report_command, "The staged migration plan."),
    "deviceclasses": Command(
        deviceclasses_options, deviceclasses_command, "Render the DeviceClasses the mapping needs."
    ),
    "inventory": Command(
        inventory_options, inventory, "What runs today, from a cluster or dumps.", "dumps"
    ),
}


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """``dra-migrate COMMAND ...``: one command's options parsed, the command run.

    Output that cannot be written (a closed pipe, a full disk) ends the run with one
    line on stderr and exit status 123, never a traceback."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        _dispatch(args)
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRORS:
            raise
        with contextlib.suppress(OSError):  # nothing more may reach the broken stream
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        with contextlib.suppress(OSError):
            _err(f"dra-migrate: error: cannot write the output: {exc.strerror}")
        sys.exit(EXIT_UNPROCESSED)
    except KeyboardInterrupt:
        _err("dra-migrate: interrupted")
        sys.exit(EXIT_INTERRUPTED)
    finally:  # what this run trusted ends with it (a process may run the CLI again)
        git.trust(None)
        cache.adopt(())
    sys.exit(0)


def _dispatch(args: list[str]) -> None:
    if not args or args[0] in ("-h", "--help"):
        (_out if args else _err)(_overview() if args else _overview().rstrip("\n"))
        sys.exit(0 if args else EXIT_USAGE)
    if args[0] == "--version":
        _out(f"dra-migrate, version {__version__}\n")
        sys.exit(0)
    command = COMMANDS.get(args[0])
    if command is None:
        _err(
            f"{_USAGE}\ndra-migrate: error: no such command {args[0]!r} (choose from "
            f"{', '.join(COMMANDS)}; --help for more)"
        )
        sys.exit(EXIT_USAGE)
    parser = argparse.ArgumentParser(
        prog=f"dra-migrate {args[0]}",
        description=command.run.__doc__,
        formatter_class=_Help,
        allow_abbrev=False,  # an abbreviation that works today could mean two options tomorrow
    )
    command.options(parser)
    options, names = end_of_options(args[1:])
    parsed, extras = parser.parse_known_args(options)
    if extras:  # paths after an option (scan a --format json b): argparse's intermixed
        parsed = parser.parse_intermixed_args(options)  # parse, which first lays out usage
    values = vars(parsed)
    if names:  # after --, file names only: parsed alone, so no option can reach them
        operands = getattr(parser.parse_args(["--", *names]), command.operands)
        values[command.operands] = [*values[command.operands], *operands]
    command.run(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


def end_of_options(args: list[str]) -> tuple[list[str], list[str]]:
    """The arguments before the first ``--`` and the file names after it.

    A file name is never an option: pre-commit appends the names of staged files
    to the hook's entry, which ends with ``--``, so a file named
    ``--output=kustomization.yaml`` stays a file. argparse's own handling of
    ``--`` has changed between Python releases (with intermixed options, and a
    second ``--``); split here, it is the same on every one of them."""
    if "--" not in args:
        return args, []
    end = args.index("--")
    return args[:end], args[end + 1 :]


_USAGE = "usage: dra-migrate [-h] [--version] COMMAND [OPTIONS] [PATHS]..."


def _overview() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {c.summary}" for name, c in COMMANDS.items()]
    return (
        f"{_USAGE}\n\nMove GPU workloads from device-plugin extended resources to DRA.\n\n"
        "commands:\n" + "\n".join(lines) + "\n\n"
        "options:\n  -h, --help  show this message and exit\n  --version   show the version "
        "and exit\n\ndra-migrate COMMAND --help shows a command's options.\n"
    )
