"""The options the commands share, as click decorators, and their checks (paths that must
exist or be files, counts with a minimum, sizes, choices), and ``resolve``: the command
line's values to the one ``RunOptions`` value a command hands down."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

import click

from dra_migrate import cache, git
from dra_migrate.convert.mapping import (
    STRATEGIES,
    Config,
    Settings,
    find_config,
    load_config,
    parse_size,
)
from dra_migrate.k8s.versions import (
    DEFAULT_TARGET,
    TARGETS,
    gate_state,
    parse_kube_version,
    target_for,
    warnings,
)
from dra_migrate.pipeline.options import COLORS, ClusterOptions, RunOptions
from dra_migrate.report import FORMATS
from dra_migrate.report.findings import ConfigError, Finding, finding, quote_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


# --- option types: a bad value is a usage error (exit 2) naming the option ---


class PathType(click.ParamType):
    """A path option's check: must exist, must not be a folder, must not be a file;
    ``as_path``: given as a ``pathlib.Path`` (only where a run writes)."""

    name = "path"

    def __init__(
        self,
        exists: bool = False,
        file_okay: bool = True,
        dir_okay: bool = True,
        as_path: bool = False,
    ) -> None:
        self.exists, self.as_path = exists, as_path
        self.file_okay, self.dir_okay = file_okay, dir_okay

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        value = os.fspath(value)
        if not value:
            self.fail("an empty path", param, ctx)
        if self.exists and not os.path.lexists(value):
            self.fail(f"{quote_path(value)} does not exist", param, ctx)
        if not self.dir_okay and os.path.isdir(value):
            self.fail(f"{quote_path(value)} is a folder, not a file", param, ctx)
        if not self.file_okay and os.path.exists(value) and not os.path.isdir(value):
            self.fail(f"{quote_path(value)} is a file, not a folder", param, ctx)
        if self.as_path:
            from pathlib import Path

            return Path(value)
        return value

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
        from click.shell_completion import CompletionItem

        return [CompletionItem(incomplete, type="file" if self.file_okay else "dir")]


# what users of kubectl and pluto type after -o: a format, never a file they mean to write
FORMAT_NAMES = frozenset((*FORMATS, "yaml", "md", "wide", "name"))


class OutputFile(PathType):
    """-o/--output: a file to write, in a folder that exists (no folder is made for it:
    a mistyped folder is a usage error, never a tree created in silence), and never a
    bare format name (``-o json`` is what kubectl and pluto users type for a format)."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False, as_path=True)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = os.fspath(value)
        if text in FORMAT_NAMES:
            fmt = "markdown" if text == "md" else text
            self.fail(
                f"{text!r} is a format: did you mean --format {fmt}? (-o names the file to "
                f"write; for a file of that name: -o ./{text})",
                param,
                ctx,
            )
        folder = os.path.dirname(text) or "."
        if text and not os.path.isdir(folder):
            self.fail(
                f"folder {quote_path(folder)} does not exist (create it first: dra-migrate "
                "makes no folder for --output)",
                param,
                ctx,
            )
        return super().convert(value, param, ctx)


class AtLeast(click.ParamType):
    """A number option's check: an int or float no lower than ``low``."""

    def __init__(self, kind: type[int] | type[float], low: float) -> None:
        self.kind, self.low = kind, low
        self.name = kind.__name__

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, self.kind) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = self.kind(value)
            except ValueError:
                self.fail(f"{value!r} is not a valid {self.kind.__name__}", param, ctx)
        if number < self.low:
            self.fail(f"{value} is lower than {self.low}", param, ctx)
        return number


class Size(click.ParamType):
    """A size: bytes, or a quantity such as 64Mi."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int):
            return value
        try:
            return parse_size(value)
        except ConfigError as error:
            self.fail(error.args[0], param, ctx)


class Choice(click.Choice):
    """click's choice, refused with the list of choices (as the CLI always said it)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value in self.choices:
            return value
        choices = ", ".join(repr(c) for c in self.choices)
        self.fail(f"invalid choice: {value!r} (choose from {choices})", param, ctx)


class Command(click.Command):
    """A command whose usage errors all know it (click's parser raises some without a
    context: the message then names the command and shows its usage)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as error:
            if error.ctx is None:
                error.ctx = ctx
            raise


def compose(*decorators: Decorator) -> Decorator:
    """Decorators applied as if written one above the other, the first on top."""

    def apply(function: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


# --- the options ---


def complete_paths(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
    """The shell completes PATHS as files and folders (its own listing, click's ``file``
    type), as it does for --config and --context."""
    from click.shell_completion import CompletionItem

    return [CompletionItem(incomplete, type="file")]


def paths_argument(help_name: str = "PATHS") -> Decorator:
    return click.argument(
        "paths", nargs=-1, metavar=f"[{help_name}]...", shell_complete=complete_paths
    )


def config_option(help: str) -> Decorator:
    return click.option(
        "--config",
        "config_path",
        metavar="FILE",
        type=PathType(dir_okay=False, as_path=True),
        help=help,
    )


def max_file_size_option(help: str) -> Decorator:
    return click.option("--max-file-size", metavar="SIZE", help=help)


def format_option(choices: tuple[str, ...] = tuple(FORMATS), help: str = "") -> Decorator:
    """--format, one of ``choices`` (the first is the default)."""
    return click.option(
        "--format",
        "fmt",
        type=Choice(list(choices)),
        default=choices[0],
        show_choices=False,
        metavar="[" + "|".join(choices) + "]",
        help=help
        or "Report format (github: workflow annotations; sarif: code scanning; junit: test "
        "reports). Default: text.",
    )


def output_option(help: str = "Write to FILE (atomically) instead of stdout.") -> Decorator:
    return click.option(
        "--output",
        "-o",
        metavar="FILE",
        type=OutputFile(),
        help=help,
    )


quiet_option = click.option("--quiet", "-q", is_flag=True, help="Only errors on stderr.")
color_option = click.option(
    "--color",
    type=Choice(list(COLORS)),
    default="auto",
    metavar="[auto|always|never]",
    help="Colour the text view: auto (on a terminal, unless NO_COLOR is set), always, never.",
)

common_options = compose(
    paths_argument(),
    config_option("Mapping file (default: .dra-migrate.yaml found upward from the first path)."),
    click.option(
        "--target",
        type=Choice(list(TARGETS)),
        metavar="[" + "|".join(TARGETS) + "]",
        help="resource.k8s.io version to write (default v1, served by Kubernetes 1.34+; "
        "--kube-version picks it from the cluster).",
    ),
    click.option(
        "--kube-version",
        metavar="VERSION",
        help="Cluster version, e.g. 1.34: picks --target and warns about it.",
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
        type=AtLeast(int, 1),
        metavar="N",
        help="Worker processes (default: CPU count).",
    ),
    click.option(
        "--stdin-filename", default="-", metavar="NAME", help="Name to use for stdin in messages."
    ),
    click.option(
        "--context",
        multiple=True,
        metavar="PATH",
        type=PathType(exists=True),
        help="Also read PATH for cross-file references, but report only on PATHS "
        "(pre-commit hooks: --context .).",
    ),
    click.option(
        "--changed-since",
        metavar="REF",
        help="Report only on files changed since git REF (merge base with HEAD) "
        "and the files they reference.",
    ),
    max_file_size_option(
        "Refuse files larger than this (bytes, or 64Mi; default 64Mi, or maxFileSize in the config)."
    ),
    quiet_option,
    color_option,
)

# what the text view lists of the findings (report/noise.py): scan, convert, validate,
# report
text_view_options = compose(
    click.option(
        "--severity",
        type=Choice(["info", "warning", "error"]),
        default="info",
        metavar="[info|warning|error]",
        help="The least severity the text view lists (default info: all; the other "
        "formats and the counts keep every finding).",
    ),
    click.option(
        "--every-note",
        is_flag=True,
        help="List each note of a code that repeats (by default 3 or more notes of one "
        "code are one line: their count and the first places).",
    ),
)

# where the report goes and what it covers: scan, convert and validate
workflow_options = compose(
    format_option(),
    output_option("Write the --format report to FILE; the terminal still gets the text view."),
    click.option(
        "--show-suppressed",
        is_flag=True,
        help="List the findings that ignore comments and config entries silence.",
    ),
    text_view_options,
)

# the severities that fail a run (report/model.py FAIL_ON): convert and validate
fail_on_option = click.option(
    "--fail-on",
    type=Choice(["error", "warning", "never"]),
    default="error",
    metavar="[error|warning|never]",
    help="Exit 1 on findings of this severity or worse (default error; warning: warnings "
    "too; never: findings and changes never fail the run, unreadable input still exits 123).",
)

strategy_option = click.option(
    "--strategy",
    type=Choice(list(STRATEGIES)),
    default=None,
    metavar="[rewrite|bridge|auto]",
    help="rewrite (the default): ResourceClaimTemplates; bridge: workloads left as they are, "
    "served through a DeviceClass with extendedResourceName; auto: bridge where "
    "--kube-version serves it and the workload needs nothing DRA-only. Replaces the "
    "configuration's strategy default, not its overrides.",
)

# how to reach the cluster: the kubeconfig and context kubectl would use
cluster_options = compose(
    click.option(
        "--kubeconfig",
        metavar="FILE",
        type=PathType(dir_okay=False),
        help="kubeconfig file (default: KUBECONFIG, ~/.kube/config, else in-cluster).",
    ),
    click.option(
        "--kube-context", metavar="NAME", help="kubeconfig context (default: the current one)."
    ),
    click.option(
        "--request-timeout",
        type=AtLeast(float, 0.1),
        default=30.0,
        metavar="SECONDS",
        help="Seconds to wait for each API request (default: 30).",
    ),
    click.option(
        "--page-size",
        type=AtLeast(int, 1),
        default=500,
        metavar="N",
        help="Objects per list request (limit/continue paging; default: 500).",
    ),
    click.option(
        "--max-pages",
        type=AtLeast(int, 1),
        default=None,
        metavar="N",
        help="Pages one list may take before it is refused (default: what 150,000 objects, "
        "the largest supported cluster's pods, take at the page size: 301 pages of 500).",
    ),
    click.option(
        "--list-timeout",
        type=AtLeast(float, 0.1),
        default=300.0,
        metavar="SECONDS",
        help="Seconds for the whole reading of the cluster, every request and page (default: 300).",
    ),
    click.option(
        "--max-response-size",
        type=Size(),
        default=64 * 2**20,
        metavar="SIZE",
        help="Refuse an API answer larger than this (bytes, or 64Mi; default: 64Mi).",
    ),
)

CLUSTER = (
    "kubeconfig",
    "kube_context",
    "request_timeout",
    "page_size",
    "max_pages",
    "list_timeout",
    "max_response_size",
)


def cluster(params: dict[str, Any]) -> ClusterOptions:
    """Take the cluster options out of a command's parameters."""
    return ClusterOptions(**{name: params.pop(name) for name in CLUSTER})


def color(choice: str) -> str:
    """--color with NO_COLOR applied: any value of it but empty means never, unless
    --color always."""
    if choice != "always" and os.environ.get("NO_COLOR"):
        return "never"
    return choice


def with_file_size(config: Config, max_file_size: str | None) -> Config:
    """The configuration with --max-file-size over its maxFileSize."""
    if max_file_size is None:
        return config
    try:
        return dataclasses.replace(config, max_file_size=parse_size(max_file_size))
    except ConfigError as error:
        raise ConfigError(f"--max-file-size: {error.args[0]}") from None


def must_exist(paths: tuple[str, ...]) -> None:
    """A path named on the command line that does not exist is a usage error (exit 2), as
    black says it (click's ``Path 'x' does not exist``), never a finding of an unread
    file: nothing was wrong with the input, the command line was. A broken link exists
    (reading it says what it is: DRA001)."""
    for path in paths:
        if path != "-" and not os.path.lexists(path):
            raise ConfigError(f"{quote_path(path)}: path does not exist")


def resolve(params: dict[str, Any], **run: Any) -> RunOptions:
    """The options of a run from a command's parameters (those ``RunOptions`` holds are
    taken out of ``params``; ``run``: more fields, set by the command)."""
    paths: tuple[str, ...] = params.pop("paths")
    context: tuple[str, ...] = params.pop("context")
    changed_since: str | None = params.pop("changed_since")
    config_path: Path | None = params.pop("config_path")
    target: str | None = params.pop("target")
    kube_version: str | None = params.pop("kube_version")
    max_file_size: str | None = params.pop("max_file_size")
    strategy: str | None = params.pop("strategy", None)
    for name in ("fmt", "output", "show_suppressed", "severity", "every_note", "quiet"):
        if name in params:
            run[name] = params.pop(name)
    run["color"] = color(params.pop("color"))
    if not paths:
        raise ConfigError("no path given (use . for the current folder, - for stdin)")
    if "-" in paths and len(paths) > 1:
        raise ConfigError("- (stdin) cannot be combined with other paths")
    if paths == ("-",) and (context or changed_since):
        raise ConfigError("--context and --changed-since need paths, not - (stdin)")
    must_exist(paths)
    if changed_since is not None:
        from dra_migrate.repo.scope import valid_ref

        changed_since = valid_ref(changed_since)
    git.trust((*paths, *context))  # git runs for these work trees only, never nested ones
    cache.keep_out_of((*paths, *context))  # files a pull request commits never steer it
    config_file: Path | str | None = config_path
    if config_path is None:
        start = "." if paths[0] == "-" else paths[0]
        config_file = find_config(start if os.path.exists(start) else ".")
    elif not config_path.is_file():
        raise ConfigError(f"--config {config_path}: no such file")
    config = with_file_size(load_config(config_file), max_file_size)
    kube = kube_version or config.kube_version
    notes: list[Finding] = list(config.notes)  # what loading the configuration found
    chosen = target or config.target
    if kube is not None:
        minor = parse_kube_version(kube)
        chosen = chosen or target_for(minor)
        notes += [finding("DRA214", "", 0, 0, text) for text in warnings(chosen, minor)]
    gate_state(kube, config.feature_gates)  # featureGates: a locked gate set otherwise
    return RunOptions(
        paths=paths,
        settings=Settings(
            target=chosen or DEFAULT_TARGET, config=config, kube_version=kube, strategy=strategy
        ),
        excludes=params.pop("exclude"),
        jobs=params.pop("jobs"),
        stdin_filename=params.pop("stdin_filename"),
        notes=tuple(notes),
        context=context,
        changed_since=changed_since,
        **run,
    )
