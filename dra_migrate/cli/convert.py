"""``dra-migrate convert``: rewrite GPU requests as ResourceClaimTemplates and claims, and
show (a diff), check (exit 1), write in place or into a folder what changed."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import click

from dra_migrate.cli import run
from dra_migrate.cli.options import (
    Command,
    PathType,
    common_options,
    fail_on_option,
    resolve,
    strategy_option,
    workflow_options,
)
from dra_migrate.report.findings import ConfigError, escape, quote_path
from dra_migrate.report.model import EXIT_INTERRUPTED, FileResult, Report, Status

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, NoReturn


@click.command("convert", cls=Command)
@common_options
@click.option("--diff", is_flag=True, help="Print a unified diff; write nothing (the default).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when a file would change.")
@click.option("--write", is_flag=True, help="Rewrite files in place (atomically).")
@click.option(
    "--output-dir",
    metavar="DIR",
    type=PathType(file_okay=False, as_path=True),
    help="Write converted copies of changed files here, in the same relative layout.",
)
@click.option(
    "--write-through-links",
    is_flag=True,
    help="With --write, also rewrite the targets of symbolic links that lie outside the "
    "paths given (skipped by default, DRA013).",
)
@click.option(
    "--verify-builds",
    is_flag=True,
    help="Build every kustomization that uses a changed file with kubectl kustomize (or "
    "kustomize build) before and after, and write nothing unless the build after equals "
    "the conversion of the build before (DRA231, DRA232).",
)
@click.option(
    "--verify-helm",
    is_flag=True,
    help="Render every Helm chart the run migrates with helm template before and after "
    "(default values, each values file, ci/, a changed GPU count), and write nothing "
    "unless each rendering after equals the conversion of the rendering before and, "
    "with the switch off, the rendering before (DRA244, DRA245, DRA248).",
)
@click.option(
    "--accept-unproven",
    is_flag=True,
    help="With --verify-helm: write the migration of a chart the proof could not render "
    "(DRA248: helm fails before the migration, a GPU count that cannot be raised) as "
    "the run shows it, unchecked. Without it nothing is written.",
)
@workflow_options
@strategy_option
@fail_on_option
def convert(
    diff: bool,
    check: bool,
    write: bool,
    output_dir: Path | None,
    write_through_links: bool,
    verify_builds: bool,
    verify_helm: bool,
    accept_unproven: bool,
    fail_on: str,
    **params: Any,
) -> None:
    """Rewrite GPU requests as ResourceClaimTemplates and claims."""
    mode = "write" if write else ("diff" if diff else None)
    try:
        options = resolve(params, skip=(output_dir,) if output_dir is not None else ())
        # a report on stdout replaces the diff (or the converted stream) there
        report_on_stdout = options.fmt != "text" and options.output is None
        if report_on_stdout and (diff or options.stdin):
            raise ConfigError(
                f"--format {options.fmt} prints the report on stdout, where the "
                f"{'diff' if diff else 'converted stream'} goes: add --output FILE"
            )
        if diff and write:
            raise ConfigError("--diff writes nothing: it cannot be combined with --write")
        if output_dir is not None and (mode == "write" or check):
            raise ConfigError("--output-dir cannot be combined with --write or --check")
        if check and mode == "write":
            raise ConfigError("--check writes nothing: it cannot be combined with --write")
        if options.stdin and output_dir is not None:
            raise ConfigError("--output-dir needs paths, not - (stdin)")
        if options.stdin and write:  # nothing to write in place: the stream goes to stdout
            raise ConfigError(
                "--write needs paths: the converted stream of - (stdin) goes to stdout"
            )
        if verify_builds and options.stdin:
            raise ConfigError("--verify-builds needs paths, not - (stdin)")
        build = None
        if verify_builds:
            from dra_migrate.pipeline import builds

            build = builds.builder()
            if build is None:
                raise ConfigError(
                    "--verify-builds needs kubectl (or kustomize) on PATH to build the "
                    "kustomizations"
                )
        if accept_unproven and not verify_helm:
            raise ConfigError("--accept-unproven is for --verify-helm: add it")
        if verify_helm and options.stdin:
            raise ConfigError("--verify-helm needs paths, not - (stdin)")
        render = None
        if verify_helm:
            from dra_migrate.pipeline import renders

            render = renders.helm()
            if render is None:
                raise ConfigError("--verify-helm needs helm on PATH to render the charts")
        stream = _StreamOut(mode, check, options.stdin_filename) if options.stdin else None
        report = run.execute(options, sink=stream.add if stream is not None else None)
    except ConfigError as error:
        run.fail_usage(error)
    if build is not None or render is not None:
        from dra_migrate.pipeline import processes

        budget = processes.Budget()  # one time budget for every proof of the run
        try:  # (SIGTERM too: processes.workspace; the proofs' folders are removed)
            if build is not None:
                builds.verify(
                    report, options.paths, options.settings, build, options.excludes, budget
                )
                if any(f.code in ("DRA231", "DRA250") for f in report.findings):
                    mode, output_dir = (None if mode == "write" else mode), None  # none written
            if render is not None and not renders.verify(
                report, options, render, accept_unproven, budget
            ):
                # DRA244, DRA250, or DRA248 without --accept-unproven: none written
                mode, output_dir = (None if mode == "write" else mode), None
        except KeyboardInterrupt:
            _interrupted([])
    report.changes_fail = check
    report.stream = options.stdin
    left_manual: list[Any] = []
    if check:
        from dra_migrate.pipeline.many_files import mark_pending

        mark_pending(report)
        if report.charts or any(i.kept for r in report.files for i in r.inventory):
            from dra_migrate.pipeline import left  # only where something is left

            left_manual = left.mark(report)  # what the plan leaves manual fails too
    run.suppress(report, options, "convert", check)
    if left_manual:
        left.settle(report, left_manual)
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
                    paint=run.colors_stdout(options.color),
                )
    except KeyboardInterrupt:
        _interrupted(written)
    status = report.exit_code(changes_fail=check, fail_on=fail_on)
    if run.hook_mode() and status == 0 and not written and not report_on_stdout:
        # a hook that passes prints nothing (the --output report is still written)
        run.emit_report(report, "convert", options, terminal=False)
        sys.exit(status)
    run.emit_report(report, "convert", options, terminal=report_on_stdout)
    quiet = options.quiet
    if not (report_on_stdout and options.fmt == "github"):  # annotations are the findings:
        # the log never shows one twice
        from dra_migrate.report import noise

        severity = "error" if quiet else options.severity
        run.print_findings(
            noise.shown(report.all_findings, severity, options.every_note), options.color
        )
    if options.show_suppressed and not quiet and not (report_on_stdout and options.fmt == "github"):
        for s in report.suppressed:
            run.err(f"{s.finding.format()} [suppressed by {escape(s.source)}]")
    if not quiet:
        run.err_lines(_summary(report, mode, check, output_dir), options.color)
    sys.exit(status)


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


def _interrupted(written: list[str]) -> NoReturn:
    shown = ", ".join(quote_path(p) for p in written) if written else "none"
    run.err(
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
                    with run.verbatim():
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
    paint: bool = False,
) -> list[str]:
    """Write or print every changed file; ``written`` collects the paths written."""
    if not any(r.status is Status.CHANGED for r in report.files):
        return written  # nothing to write or show: the writer (and difflib) stay unloaded
    shows_diffs = diff and output_dir is None and mode != "write" and (mode == "diff" or not check)
    with run.verbatim() if shows_diffs else contextlib.nullcontext():
        return _files_written(
            report, mode, check, output_dir, roots, through_links, written, diff, paint
        )


def _files_written(
    report: Report,
    mode: str | None,
    check: bool,
    output_dir: Path | None,
    roots: tuple[str, ...],
    through_links: bool,
    written: list[str],
    diff: bool,
    paint: bool,
) -> list[str]:
    from dra_migrate.convert import writer

    if mode == "write" or output_dir is not None:
        from dra_migrate.convert import unit_write

        outputs = unit_write.collisions(report.files, output_dir) if output_dir else {}
        for group in unit_write.groups(report.files):
            unit_write.write(group, roots, through_links, written, output_dir, outputs)
        return written
    for result in report.files:
        if result.status is not Status.CHANGED or result.converted is None:
            continue
        if diff and (mode == "diff" or not check):
            assert result.original is not None
            text = writer.unified_diff(
                result.path, result.original, result.converted, result.regions
            )
            if paint:  # on a terminal: git's colours (never in a pipe, so git apply reads it)
                from dra_migrate.report.terminal import paint_diff

                text = paint_diff(text)
            run.out(text)
    return written


def _summary(report: Report, mode: str | None, check: bool, output_dir: Path | None) -> str:
    from dra_migrate.report.text_format import convert_summary

    done = mode == "write" or output_dir is not None
    return convert_summary(report, done, check, str(output_dir) if output_dir else None)
