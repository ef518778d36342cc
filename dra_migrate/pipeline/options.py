"""The options of a run as one frozen value (``RunOptions``, with ``ClusterOptions`` for
the commands that read a cluster): built by the CLI from the command line, handed down
to the pipeline (``many_files.run``, ``stream.run_stream``, ``many_files.run_validate``) and the renderers;
and what one file is asked (``Job``), which a run builds before it knows whether the
file stage (``one_file.py``) is needed at all: a scan whose results are all kept never
imports it."""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from dra_migrate.convert.mapping import Config, Settings
    from dra_migrate.pipeline.pool import Progress
    from dra_migrate.repo.roles import Role
    from dra_migrate.report.findings import Finding


COLORS = ("auto", "always", "never")


@dataclass(frozen=True, slots=True)
class ClusterOptions:
    """How to reach the cluster (the kubeconfig and context kubectl would use) and the
    bounds of every answer it gives."""

    kubeconfig: str | None = None
    kube_context: str | None = None  # --kube-context: the kubeconfig context
    request_timeout: float = 30.0  # seconds for each whole answer
    page_size: int = 500  # objects per list request
    max_pages: int | None = None  # pages one list may take (None: live.default_max_pages)
    list_timeout: float = 300.0  # seconds for the whole reading of the cluster
    max_response_size: int = 64 * 2**20  # bytes of one answer


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What a command runs on and how: the paths and settings, what the pipeline reads
    (excludes, jobs, --context, the files reported on), and where the report goes."""

    paths: tuple[str, ...]
    settings: Settings
    excludes: tuple[str, ...] = ()  # --exclude, besides the config's
    jobs: int | None = None  # worker processes (None: a core each)
    stdin_filename: str = "-"  # the name of standard input in messages
    notes: tuple[Finding, ...] = ()  # run-level findings (DRA214)
    context: tuple[str, ...] = ()  # read for references, not reported (--context)
    changed_since: str | None = None  # report only files changed since this git ref
    only: frozenset[str] | None = None  # real paths of the files reported on (None: all)
    edit: bool = True  # plan and apply the edits (convert), or only find (scan, report)
    skip: tuple[Path, ...] = ()  # never read under these (the output folder)
    progress: Progress = None
    fmt: str = "text"  # --format
    output: Path | None = None  # -o/--output
    show_suppressed: bool = False
    severity: str = "info"  # --severity: the least severity the text view lists
    every_note: bool = False  # --every-note: repeated notes each on a line of its own
    quiet: bool = False  # only errors on stderr
    color: str = "auto"  # --color, NO_COLOR applied: auto, always or never
    cluster: ClusterOptions = ClusterOptions()

    @property
    def config(self) -> Config:
        return self.settings.config

    @property
    def max_file_size(self) -> int:
        """Bytes a file (or standard input) may hold: --max-file-size, else the config's."""
        return self.settings.config.max_file_size

    @property
    def stdin(self) -> bool:
        """Whether the run reads standard input (the one path ``-``)."""
        return self.paths == ("-",)


@dataclass(frozen=True, slots=True)
class Job:
    """Everything a worker needs for one file (picklable): what ``one_file.process_job``
    takes."""

    path: str  # filesystem path, "" for stdin
    display: str
    role: Role
    data: bytes | None = None  # the content, read once by discovery (None: read it here)
    edit: bool = True  # False for scan: plan and report, write no text
    # False: a result keeps the file's text only where it is written or diffed (a
    # converted file) or read again (ignore comments): a run over install bundles
    # would otherwise hold every bundle in memory until the end (stdin keeps it)
    keep_text: bool = True
