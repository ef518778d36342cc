"""What the commands share when they run: the pipeline over the paths (``execute``,
``focused``), the progress bar, the cluster connection, and the streams (stdout as it is,
stderr a line at a time, the report to --output, the text view: ``show_text``)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator

from dra_migrate.pipeline.options import RunOptions
from dra_migrate.repo.discover import Unreadable
from dra_migrate.report import renderer
from dra_migrate.report.findings import ConfigError, Finding, inert, quote_path
from dra_migrate.report.model import EXIT_USAGE, FileResult, Report

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import IO, Any, NoReturn

    from dra_migrate.convert.mapping import Config
    from dra_migrate.pipeline.options import ClusterOptions


# --- the streams ---


def out(text: str) -> None:
    """Text for stdout, as it is (a report, a diff, YAML)."""
    sys.stdout.write(text)
    sys.stdout.flush()


def err(line: str) -> None:
    """One line for stderr, after what stdout has so far. A CI runner reads workflow
    commands on stderr too: no name in it can make one (``inert``)."""
    sys.stdout.flush()
    sys.stderr.write(inert(line) + "\n")
    sys.stderr.flush()


def err_lines(text: str, color: str = "auto") -> None:
    """Lines of prose for stderr: wrapped at spaces to a terminal's width on one (or
    with ``--color always``), as they are elsewhere (``terminal.lines_to``)."""
    if color != "always" and not _isatty(sys.stderr):  # no rich: one line each
        err(text)
        return
    from dra_migrate.report import terminal

    sys.stdout.flush()
    terminal.lines_to(text, sys.stderr, color, os.environ)


def colors_stdout(color: str) -> bool:
    """Whether what goes to stdout gets colours: ``--color always``, or ``auto`` on a
    terminal without NO_COLOR (``terminal.wants_color``; --color already holds
    NO_COLOR)."""
    if color == "never" or (color == "auto" and not _isatty(sys.stdout)):
        return False
    from dra_migrate.report import terminal

    return terminal.wants_color(sys.stdout, color, os.environ)


def hook_mode() -> bool:
    """Run by pre-commit, which sets PRE_COMMIT=1 for every hook it runs
    (pre_commit/commands/run.py): a run that passes prints nothing there, so that a
    hook's output (``pre-commit run --verbose`` shows a passing hook's too) is only
    ever something to fix."""
    return os.environ.get("PRE_COMMIT") == "1"


def fail_usage(error: ConfigError) -> NoReturn:
    err(f"dra-migrate: error: {error.format()}")
    sys.exit(EXIT_USAGE)


def print_findings(findings: list[Finding], color: str = "auto") -> None:
    """Findings on stderr, after what stdout has so far: laid out for a terminal on one
    (the hint on its own lines, wrapped to the width), one plain line each elsewhere."""
    if not findings:
        return
    if color != "always" and not _isatty(sys.stderr):  # no rich, no terminal view
        for f in findings:
            err(f.format())
        return
    from dra_migrate.report import terminal

    sys.stdout.flush()
    terminal.findings_to(findings, sys.stderr, color, os.environ)


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


@contextlib.contextmanager
def verbatim() -> Iterator[None]:
    """Text of the input printed as it is (a diff), which no escape may change: under
    GitHub Actions it is printed between ``::stop-commands::`` and a token that no
    input can know, so the runner reads none of its lines as a workflow command."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        yield
        return
    import secrets

    token = secrets.token_hex(16)
    out(f"::stop-commands::{token}\n")
    try:
        yield
    finally:
        out(f"::{token}::\n")


def show_text(report: Report, command: str, options: RunOptions, stream: IO[str]) -> None:
    """The text view of a report on ``stream``: laid out with rich on a terminal (or with
    ``--color always``), else the plain text (``report/terminal.py`` decides)."""
    from dra_migrate.report import terminal

    terminal.render_to(report, command, stream, options.color, os.environ)


def emit_report(report: Report, command: str, options: RunOptions, terminal: bool = True) -> None:
    """The chosen format to --output (and the text view to the terminal), or to stdout."""
    report.show_suppressed = options.show_suppressed
    report.severity, report.every_note = options.severity, options.every_note
    if options.output is None:
        if not terminal:
            return
        if options.fmt == "text":
            show_text(report, command, options, sys.stdout)
        else:
            out(renderer(options.fmt)(report, command))  # inert in every format
        return
    write_output(renderer(options.fmt)(report, command), options.output)
    if terminal:
        show_text(report, command, options, sys.stdout)


def emit(report: Report, command: str, options: RunOptions) -> None:
    """A report in its format to stdout, or atomically to -o/--output (nothing else)."""
    report.severity, report.every_note = options.severity, options.every_note
    if options.output is not None:
        write_output(renderer(options.fmt)(report, command), options.output)
    elif options.fmt == "text":
        show_text(report, command, options, sys.stdout)
    else:
        out(renderer(options.fmt)(report, command))


def write_output(text: str, output: Path) -> None:
    """``text`` written atomically to -o/--output, or exit 2 with the reason."""
    from dra_migrate.convert.writer import REPORT_PERMISSIONS, write_atomic

    try:
        write_atomic(output, text.encode("utf-8"), keep=REPORT_PERMISSIONS)
    except OSError as exc:
        fail_usage(ConfigError(f"--output {output}: {exc.strerror or exc}"))


def config_used(config: Config) -> str:
    """Which mapping steered the run: scan and validate name it on stderr, as the convert
    summary does."""
    if config.path is None:
        return "dra-migrate: using the built-in mapping (no .dra-migrate.yaml found)."
    return f"dra-migrate: using mapping {quote_path(config.path)}."


def suppress(report: Report, options: RunOptions, command: str, check: bool = False) -> None:
    """Ignore comments and config entries: silenced findings move aside, counted (suppress.py)."""
    from dra_migrate.pipeline import suppress

    suppress.apply(report, options.settings.config, command, check)


# --- the pipeline ---

PROGRESS_FROM = 200  # files to parse before a progress bar is worth showing


@contextlib.contextmanager
def progress_bar(fmt: str = "text") -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr for long runs: only on a terminal, never with a
    machine-readable format (their consumers read stdout, often in CI logs)."""
    if fmt != "text" or not sys.stderr.isatty():
        yield None
        return
    shown: list[Any] = []  # the bar and its task, once a run is long enough for one

    def update(done: int, total: int) -> None:
        if total < PROGRESS_FROM:
            return
        if not shown:  # rich (and its hidden cursor) only for a bar that is shown
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            bar = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            bar.start()
            shown.extend((bar, bar.add_task("files", total=total)))
        shown[0].update(shown[1], completed=done)

    try:
        yield update
    finally:
        if shown:
            shown[0].stop()


def execute(options: RunOptions, sink: Callable[[FileResult], None] | None = None) -> Report:
    """Run the pipeline over the paths, or over standard input part by part (``sink``
    gets each part's result while its text is at hand)."""
    if options.stdin:
        from dra_migrate.pipeline.stream import run_stream

        report = run_stream(sys.stdin.buffer, options, sink)
    else:
        from dra_migrate.pipeline import many_files

        with progress_bar(options.fmt) as progress:
            report = focused(
                dataclasses.replace(options, progress=progress),
                lambda scoped: many_files.run(scoped),
            )
    report.findings.extend(options.notes)
    whole = options.only is None and not options.context and options.changed_since is None
    if whole and options.settings.config.path is not None:
        from dra_migrate.convert import rules_used

        if rules_used.covers(options.paths, options.settings.config):
            report.findings += rules_used.unused_rules(options.settings.config, report.inventory)
    report.api_version = options.settings.target
    report.config_path = options.settings.config.path or ""
    return report


def focused(options: RunOptions, run: Callable[[RunOptions], Report]) -> Report:
    """Run over the paths and --context, report on the paths or what changed (scope.py);
    ``run`` is given the options with the paths, the files reported on (``only``, None:
    all) and the context of the run."""
    if not options.context and options.changed_since is None:
        return run(options)
    from dra_migrate.repo import scope

    excludes = [*options.settings.config.exclude, *options.excludes]
    keep = scope.files_under(options.paths, excludes)
    if options.changed_since is None:  # --context: the rest is read for references only
        report = run(options)
    else:
        universe = keep | scope.files_under(options.context, excludes)
        changes = scope.changes(options.changed_since, options.paths[0], options.max_file_size)
        keep &= changes.paths
        keep |= scope.referenced(keep, universe, changes.before)
        paths = tuple(dict.fromkeys(options.paths + options.context))
        report = run(dataclasses.replace(options, paths=paths, only=frozenset(keep), context=()))
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


def unread(options: RunOptions, exc: Unreadable) -> Report:
    return Report([FileResult.unreadable(options.stdin_filename, exc.code, exc.message)])


# --- the cluster ---


def connect(cluster: ClusterOptions) -> Any:
    """A live reader, or exit with the one line of its ClusterError."""
    from dra_migrate.cluster import ClusterError, Connection, LiveReader
    from dra_migrate.cluster.live import default_max_pages

    pages = cluster.max_pages or default_max_pages(cluster.page_size)
    try:
        return LiveReader(
            Connection(
                cluster.kubeconfig,
                cluster.kube_context,
                timeout=cluster.request_timeout,
                page_size=cluster.page_size,
                max_response=cluster.max_response_size,
                max_pages=pages,
                list_timeout=cluster.list_timeout,
            )
        )
    except ClusterError as error:
        fail_cluster(error)


def fail_cluster(error: Any) -> NoReturn:
    err(error.finding.format())
    sys.exit(error.exit_code)
