"""The command line: parse options, run the pipeline, render, map to an exit code."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, TypeVar

import click

from dra_migrate import __version__
from dra_migrate.discover import Unreadable
from dra_migrate.findings import ConfigError, Finding, finding, quote_path
from dra_migrate.mapping import Config, Settings, find_config, load_config, parse_size
from dra_migrate.report import FORMATS, renderer
from dra_migrate.report.model import (
    EXIT_INTERRUPTED,
    EXIT_UNPROCESSED,
    EXIT_USAGE,
    FileResult,
    Report,
    Status,
)
from dra_migrate.versions import (
    DEFAULT_TARGET,
    TARGETS,
    parse_feature_gates,
    parse_kube_version,
    target_for,
    warnings,
)

F = TypeVar("F", bound=Callable[..., Any])


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


def option_group(*decorators: Callable[[Any], Any]) -> Callable[[F], F]:
    """One decorator that applies ``decorators`` as if stacked in this order."""

    def apply(func: F) -> F:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


common_options = option_group(
    click.argument("paths", nargs=-1, type=click.Path(allow_dash=True)),
    click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Mapping file (default: .dra-migrate.yaml found upward from the first path).",
    ),
    click.option(
        "--target",
        type=click.Choice(TARGETS),
        help="resource.k8s.io version to write (default v1, served by Kubernetes 1.34+; --kube-version picks it from the cluster).",
    ),
    click.option(
        "--kube-version", help="Cluster version, e.g. 1.34: picks --target and warns about it."
    ),
    click.option(
        "--exclude",
        multiple=True,
        metavar="GLOB",
        help="gitignore-style pattern to skip (repeatable).",
    ),
    click.option(
        "--jobs",
        "-j",
        type=click.IntRange(min=1),
        help="Worker processes (default: CPU count).",
    ),
    click.option("--stdin-filename", default="-", help="Name to use for stdin in messages."),
    click.option(
        "--context",
        multiple=True,
        metavar="PATH",
        type=click.Path(exists=True),
        help="Also read PATH for cross-file references, but report only on PATHS "
        "(pre-commit hooks: --context .).",
    ),
    click.option(
        "--changed-since",
        metavar="REF",
        help="Report only on files changed since git REF (merge base with HEAD) "
        "and the files they reference.",
    ),
    click.option(
        "--max-file-size",
        metavar="SIZE",
        help="Refuse files larger than this (bytes, or 64Mi; default 64Mi, or maxFileSize "
        "in the config).",
    ),
)


format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    default="text",
    show_default=True,
    help="Report format (github: workflow annotations; sarif: code scanning; junit: test reports).",
)


# --- workflow options: report files, suppressions, focus on changed files (issue 10) ---


class Workflow(NamedTuple):
    """Where the report goes and what it covers, shared by scan, convert and validate."""

    fmt: str
    output: Path | None
    show_suppressed: bool


workflow_options = option_group(
    format_option,
    click.option(
        "--output",
        "output",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Write the --format report to FILE; the terminal still gets the text view.",
    ),
    click.option(
        "--show-suppressed",
        is_flag=True,
        help="List the findings that ignore comments and config entries silence.",
    ),
)


def _cluster_options(context_flags: tuple[str, ...]) -> Callable[[F], F]:
    """How to reach the cluster: the kubeconfig and context kubectl would use."""
    return option_group(
        click.option(
            "--kubeconfig",
            type=click.Path(dir_okay=False),
            help="kubeconfig file (default: KUBECONFIG, ~/.kube/config, else in-cluster).",
        ),
        click.option(
            *context_flags,
            "kube_context",
            help="kubeconfig context (default: the current one).",
        ),
        click.option(
            "--request-timeout",
            type=click.FloatRange(min=0.1),
            default=30.0,
            show_default=True,
            help="Seconds to wait for each API request.",
        ),
        click.option(
            "--page-size",
            type=click.IntRange(min=1),
            default=500,
            show_default=True,
            help="Objects per list request (limit/continue paging).",
        ),
    )


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
    from dra_migrate import suppress

    suppress.apply(report, options.settings.config, command, check)


def _emit_report(report: Report, command: str, flow: Workflow, terminal: bool = True) -> None:
    """The chosen format to --output (and the text view to the terminal), or to stdout."""
    report.show_suppressed = flow.show_suppressed
    if flow.output is None:
        if terminal:
            click.echo(renderer(flow.fmt)(report, command), nl=False)
        return
    from dra_migrate.writer import write_atomic

    try:
        write_atomic(flow.output, renderer(flow.fmt)(report, command).encode("utf-8"))
    except OSError as exc:
        _fail_usage(ConfigError(f"--output {flow.output}: {exc.strerror or exc}"))
    if terminal:
        click.echo(renderer("text")(report, command), nl=False)


def _connect(kubeconfig: str | None, context: str | None, timeout: float, page_size: int) -> Any:
    """A live reader, or exit with the one line of its ClusterError."""
    from dra_migrate.cluster import ClusterError, Connection, LiveReader

    try:
        return LiveReader(Connection(kubeconfig, context, timeout, page_size))
    except ClusterError as error:
        _fail_cluster(error)


def _fail_cluster(error: Any) -> NoReturn:
    click.echo(error.finding.format(), err=True)
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
    if config_path is None:
        start = Path(".") if paths[0] == "-" else Path(paths[0])
        config_path = find_config(start if start.exists() else Path("."))
    elif not config_path.is_file():
        raise ConfigError(f"--config {config_path}: no such file")
    config: Config = load_config(config_path)
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
    from dra_migrate import pipeline

    if options.paths == ("-",):
        report = pipeline.run_stream(
            sys.stdin.buffer, options.stdin_filename, options.settings, edit, sink
        )
    else:
        with progress_bar(fmt) as progress:
            report = focused(
                options,
                lambda paths, only, context: pipeline.run(
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
    run: Callable[[tuple[str, ...], set[Path] | None, tuple[str, ...]], Report],
) -> Report:
    """Run over the paths and --context, report on the paths or what changed (focus.py);
    ``run`` is given the paths, the files reported on (None: all) and the context."""
    if not options.context and options.changed_since is None:
        return run(options.paths, None, ())
    from dra_migrate import focus

    excludes = [*options.settings.config.exclude, *options.excludes]
    keep = focus.files_under(options.paths, excludes)
    if options.changed_since is None:  # --context: the rest is read for references only
        report = run(options.paths, None, options.context)
    else:
        universe = keep | focus.files_under(options.context, excludes)
        keep &= focus.changed_since(options.changed_since, Path(options.paths[0]))
        keep |= focus.referenced(keep, universe)
        report = run(tuple(dict.fromkeys(options.paths + options.context)), keep, ())
    focus.narrow(report, keep)
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
    click.echo(f"dra-migrate: error: {error.format()}", err=True)
    sys.exit(EXIT_USAGE)


def _print_findings(findings: list[Finding]) -> None:
    for f in findings:
        click.echo(f.format(), err=True)


_OUTPUT_ERRORS = {errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT}


class _Group(click.Group):
    """Output that cannot be written (a closed pipe, a full disk) ends the run with one
    line on stderr and exit status 123, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno not in _OUTPUT_ERRORS:
                raise
            with contextlib.suppress(OSError):  # nothing more may reach the broken stream
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            with contextlib.suppress(OSError):
                click.echo(f"dra-migrate: error: cannot write the output: {exc.strerror}", err=True)
            sys.exit(EXIT_UNPROCESSED)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dra-migrate")
def main() -> None:
    """Move GPU workloads from device-plugin extended resources to DRA."""


@main.command()
@common_options
@workflow_options
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
        click.echo(_config_used(options.settings.config), err=True)
    sys.exit(EXIT_UNPROCESSED if report.count(Status.FAILED) else 0)


@main.command()
@common_options
@click.option("--diff", is_flag=True, help="Print a unified diff; write nothing (the default).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when a file would change.")
@click.option("--write", is_flag=True, help="Rewrite files in place (atomically).")
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write converted copies of changed files here, in the same relative layout.",
)
@click.option(
    "--write-through-links",
    is_flag=True,
    help="With --write, also rewrite the targets of symbolic links that lie outside the paths "
    "given (skipped by default, DRA013).",
)
@click.option("--quiet", "-q", is_flag=True, help="Only errors on stderr.")
@workflow_options
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
        from dra_migrate.pipeline import mark_pending

        mark_pending(report)
    _suppress(report, options, "convert", check)
    written: list[str] = []
    try:
        with _terminated_as_interrupt():
            if stream is not None:
                stream.emit(report.files[0])
            else:
                roots = tuple(Path(p) for p in options.paths)
                written = _files_out(
                    report,
                    mode,
                    check,
                    output_dir,
                    roots,
                    write_through_links,
                    written,
                    diff=not report_on_stdout,
                )
    except KeyboardInterrupt:
        _interrupted(written)
    _emit_report(report, "convert", flow, terminal=report_on_stdout)
    findings = report.all_findings
    _print_findings([f for f in findings if not quiet or f.severity.value == "error"])
    if flow.show_suppressed and not quiet:
        for s in report.suppressed:
            click.echo(f"{s.finding.format()} [suppressed by {s.source}]", err=True)
    if not quiet:
        click.echo(_summary(report, mode, check, output_dir), err=True)
    sys.exit(report.exit_code(changes_fail=check))


@contextlib.contextmanager
def _terminated_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI timeout, a killed hook) stops a write like Ctrl-C: the file being
    written is left as it was, its temporary file removed."""

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
    click.echo(
        f"dra-migrate: interrupted; {len(written)} file(s) written ({shown}); "
        "every other file is as it was",
        err=True,
    )
    sys.exit(EXIT_INTERRUPTED)


class _StreamOut:
    """What ``convert -`` writes to stdout (the converted stream, or its diff), gathered
    part by part on disk and written only once the whole stream is known to be
    processed: a half-converted stream must never reach kubectl."""

    def __init__(self, mode: str | None, check: bool, path: str) -> None:
        import tempfile

        from dra_migrate.writer import StreamDiff

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
                    for text in self.diff.render():
                        out.write(text.encode("utf-8", "surrogateescape"))
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
    roots: tuple[Path, ...],
    through_links: bool,
    written: list[str],
    diff: bool = True,
) -> list[str]:
    """Write or print every changed file; ``written`` collects the paths written."""
    if not any(r.status is Status.CHANGED for r in report.files):
        return written  # nothing to write or show: the writer (and difflib) stay unloaded
    from dra_migrate import writer

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
                if output_dir is None:
                    writer.write_in_place(
                        Path(result.path), result.converted, result.original, roots, through_links
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
            click.echo(
                writer.unified_diff(result.path, result.original, result.converted, result.regions),
                nl=False,
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


@main.command(name="validate")
@common_options
@workflow_options
@click.option(
    "--external-templates",
    is_flag=True,
    help="ResourceClaimTemplates and ResourceClaims may be defined outside the input.",
)
@click.option(
    "--resource-slices",
    "slices",
    type=click.Path(dir_okay=False, exists=False),
    help="kubectl get resourceslices -o yaml|json: evaluate classes and requests on those devices.",
)
@click.option(
    "--cluster",
    "live",
    is_flag=True,
    help="Evaluate classes and requests on the live cluster's ResourceSlices (read-only).",
)
@click.option(
    "--feature-gates",
    "feature_gates",
    metavar="NAME=BOOL,...",
    help="DRA feature gates the cluster turns on or off, as kube-apiserver takes them "
    "(DRADeviceTaints=true,DRAConsumableCapacity=true); the rest follow --kube-version's "
    "defaults. Also featureGates: in the config.",
)
@cluster_options_beside_context
def validate_command(
    external_templates: bool,
    slices: str | None,
    feature_gates: str | None,
    live: bool,
    kubeconfig: str | None,
    kube_context: str | None,
    request_timeout: float,
    page_size: int,
    **kwargs: Any,
) -> None:
    """Check DRA objects and the pods that use them: schemas, references, CEL, devices."""
    from dra_migrate import pipeline
    from dra_migrate.validate import ValidateSettings

    flow = _workflow(kwargs)
    explicit_target = kwargs.get("target")
    try:
        options = resolve(**kwargs)
        if live and slices:
            raise ConfigError("--cluster reads the live ResourceSlices: drop --resource-slices")
        if not live and (kubeconfig or kube_context):
            raise ConfigError("--kubeconfig and --kube-context need --cluster")
        limit = options.settings.config.max_file_size
        devices = pipeline.load_slices(slices, limit) if slices else None
        gates = dict(options.settings.config.feature_gates)
        if feature_gates is not None:
            gates.update(parse_feature_gates(feature_gates))
    except ConfigError as error:
        _fail_usage(error)
        return
    notes: list[Finding] = []
    if live:
        from dra_migrate.cluster import ClusterError, slice_devices

        reader = _connect(kubeconfig, kube_context, request_timeout, page_size)
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
                lambda paths, _only, context: pipeline.run_validate(
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
        click.echo(_config_used(options.settings.config), err=True)
    sys.exit(report.exit_code())


output_option = click.option(
    "--output",
    "-o",
    "output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to FILE (atomically) instead of stdout.",
)
strategy_option = click.option(
    "--strategy",
    type=click.Choice(["rewrite", "bridge", "auto"]),
    default="auto",
    show_default=True,
    help="rewrite: ResourceClaimTemplates; bridge: DeviceClasses with extendedResourceName, "
    "workloads unchanged; auto: bridge where --kube-version serves it and the workload needs "
    "nothing DRA-only.",
)


@main.command(name="report")
@common_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "html", "json"]),
    default="text",
    show_default=True,
    help="Report format (json: schemas/report.schema.json).",
)
@output_option
@strategy_option
@click.option(
    "--resource-slices",
    "slices",
    type=click.Path(dir_okay=False),
    help="kubectl get resourceslices -o yaml|json: check that the GPUs asked for fit, node by node.",
)
@click.option(
    "--nodes",
    "nodes",
    type=click.Path(dir_okay=False),
    help="kubectl get nodes -o yaml|json: flag nodes that still advertise a bridged resource.",
)
@click.option(
    "--cluster",
    "from_cluster",
    is_flag=True,
    help="Read the ResourceSlices and Nodes from the live cluster (read-only), in place of "
    "--resource-slices and --nodes.",
)
@cluster_options_beside_context
def report_command(
    fmt: str,
    output: Path | None,
    strategy: str,
    slices: str | None,
    nodes: str | None,
    from_cluster: bool,
    kubeconfig: str | None,
    kube_context: str | None,
    request_timeout: float,
    page_size: int,
    **kwargs: Any,
) -> None:
    """The staged migration plan of a repository: inventory, prerequisites, DeviceClasses,
    pilot wave, full conversion with rollback, and the risks."""
    from dra_migrate import pipeline, stages
    from dra_migrate.report import renderer
    from dra_migrate.report.migration import LiveInventory

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
            live = _live_inventory(kubeconfig, kube_context, request_timeout, page_size, options)
        elif slices or nodes:
            live = LiveInventory(
                source=", ".join(p for p in (slices, nodes) if p),
                kube_version=options.settings.kube_version,
                devices=pipeline.load_slices(slices) if slices else [],
                nodes=pipeline.load_nodes(nodes) if nodes else [],
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
    timeout: float,
    page_size: int,
    options: Options,
) -> Any:
    """Stage 1 and 2's view of the running cluster: its ResourceSlices and Nodes, read
    through the same read-only client as ``inventory --cluster``."""
    from dra_migrate import pipeline
    from dra_migrate.cluster import ClusterError, slice_devices
    from dra_migrate.report.migration import LiveInventory

    reader = _connect(kubeconfig, kube_context, timeout, page_size)
    try:
        devices = slice_devices(reader) if reader.dra_version is not None else []
        nodes = pipeline.nodes_from_objects(reader.list("nodes", None))
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


@main.command(name="deviceclasses")
@common_options
@strategy_option
@output_option
def deviceclasses_command(strategy: str, output: Path | None, **kwargs: Any) -> None:
    """Render the DeviceClasses the mapping needs (deviceClasses in the configuration, and
    with --strategy bridge or auto one class with extendedResourceName per bridged resource).

    PATHS are optional: given, the classes follow what the repository asks for."""
    from dra_migrate import stages

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
        click.echo(text, nl=False)
        return
    from dra_migrate.writer import write_atomic

    try:
        write_atomic(output, text.encode("utf-8"))
    except OSError as exc:
        _fail_usage(ConfigError(f"--output {output}: {exc.strerror or exc}"))


@main.command()
@click.argument("dumps", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--cluster",
    "live",
    is_flag=True,
    help="Read the live cluster (read-only); without it, read kubectl get -o yaml dumps.",
)
@cluster_options
@click.option(
    "--namespace", "-n", help="Pods and claims of this namespace (default: the context's)."
)
@click.option("--all-namespaces", "-A", is_flag=True, help="Pods and claims of every namespace.")
@click.option(
    "--pending-after",
    default="5m",
    show_default=True,
    help="Report ResourceClaims without an allocation older than this (90s, 5m, 1h).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Mapping file (default: .dra-migrate.yaml found upward from here).",
)
@format_option
def inventory(
    dumps: tuple[str, ...],
    live: bool,
    kubeconfig: str | None,
    kube_context: str | None,
    request_timeout: float,
    page_size: int,
    namespace: str | None,
    all_namespaces: bool,
    pending_after: str,
    config_path: Path | None,
    fmt: str,
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
        config = load_config(config_path or find_config(Path(".")))
    except ConfigError as error:
        _fail_usage(error)
        return
    if live:
        reader = _connect(kubeconfig, kube_context, request_timeout, page_size)
        scope = None if all_namespaces else (namespace or reader.default_namespace)
    else:
        reader = DumpReader(dumps)
        scope = namespace
    try:
        report = inventory_report(reader, config, scope, threshold)
    except ClusterError as error:
        _fail_cluster(error)
    finally:
        if live:
            reader.close()
    click.echo(renderer(fmt)(report, "inventory"), nl=False)
    sys.exit(EXIT_UNPROCESSED if report.count(Status.FAILED) else 0)
