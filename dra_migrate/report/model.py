"""The one report model every renderer reads. Renderers never recompute findings."""

from __future__ import annotations

import enum
import fnmatch
from dataclasses import dataclass, field

from dra_migrate.report.charts import ChartPlan as ChartPlan  # the chart pass's record
from dra_migrate.report.fields import REQUEST, Location, as_json, location_dict
from dra_migrate.report.findings import Finding, Severity, finding

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from typing import Any

    from dra_migrate.report.inventory import ClusterInventory
    from dra_migrate.report.migration import MigrationPlan
    from dra_migrate.report.selections import LabelSelection
    from dra_migrate.report.simulation import Simulation

REPORT_VERSION = 1

# Extended resources that scan lists but that are not GPU requests: not counted as GPU
# requests, and never a file's reason for manual action, unless the mapping converts
# them (then convert rewrites them, and the plan must count them).
OTHER_ACCELERATORS = (
    "google.com/tpu*",  # Cloud TPU
    "aws.amazon.com/neuron*",  # Inferentia and Trainium (neuron, neuroncore, neurondevice)
    "habana.ai/*",  # Gaudi
)
NOT_GPU_REQUESTS = (
    *OTHER_ACCELERATORS,
    # HAMi's shares of the GPU a container asks for with nvidia.com/gpu (vGPU memory and
    # compute): not GPUs of their own (DRA205 reports the fraction)
    "nvidia.com/gpumem",
    "nvidia.com/gpumem-percentage",
    "nvidia.com/gpucores",
    # names under the domains reserved for examples (RFC 2606, RFC 6761): documentation
    # placeholders, not a device anyone installs
    "example.com/*",
    "example.net/*",
    "example.org/*",
    "*.example.com/*",
    "*.example/*",
    "*.test/*",
    "*.invalid/*",
)


def gpu_request(resource: str, mapped: bool = False) -> bool:
    """A GPU request, counted as one: TPUs and the other accelerators, HAMi's shares and
    example names are not unless the mapping converts them (what convert rewrites, the
    plan counts: the built-in mapping converts Gaudi's habana.ai/gaudi; a project that
    maps example.com/gpu or google.com/tpu to a class means it)."""
    return mapped or not any(fnmatch.fnmatchcase(resource, p) for p in NOT_GPU_REQUESTS)


EXIT_OK = 0
EXIT_FINDINGS = 1  # --check found changes, or findings of error severity
EXIT_USAGE = 2
EXIT_UNPROCESSED = 123  # some input could not be processed
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE: the reader of stdout closed it (| head), as git ends
AUTOMATIC = frozenset({"DRA401"})  # errors that convert --write fixes: no manual action
HELD = "DRA401"  # what an ignore of DRA401 (or of every code) keeps on the device plugin says
OVERLAY_UNIT = "kustomize overlay "  # a FileResult's unit label: this and its kustomization
EXIT_INTERRUPTED = 130  # SIGINT or SIGTERM: what was written is said on stderr


# --fail-on: the severities that fail a run (None: nothing a run finds fails it)
FAIL_ON: dict[str, frozenset[Severity] | None] = {
    "error": frozenset({Severity.ERROR}),
    "warning": frozenset({Severity.ERROR, Severity.WARNING}),
    "never": None,
}


class Status(enum.StrEnum):
    UNCHANGED = "unchanged"  # looked at, nothing to convert
    CHANGED = "changed"  # converted (or would be)
    FAILED = "failed"  # could not be processed; left untouched
    REPORTED = "reported"  # never modified by design (Helm template, kustomize patch...)


@dataclass(slots=True)
class InventoryItem(Location):
    """One extended GPU request of one container: a row of ``scan``. Not frozen: the
    file's stage fills in ``kept`` when a refusal or a blocked file keeps it as it is."""

    container: str
    role: str
    resource: str
    count: int | None  # None when the value is not a valid count
    value: str  # the value as written
    device_class: str | None  # None when the mapping does not convert it
    # What the migration report needs beyond scan's row (not in scan's JSON):
    replicas: int | None = 1  # pods the pod spec makes at once; None: per node or unknown
    selectors: tuple[str, ...] = ()  # CEL selectors the mapping adds to the request
    driver_config: bool = False  # the mapping adds opaque driver configuration
    shared: bool = False  # a time-sliced share of a GPU (mapping ``shared: true``)
    rule: bool = False  # a context rule of the mapping chose the class or selectors
    rule_index: int | None = None  # which rule of its mapping (convert/rules_used.py)
    # the code of the finding that keeps it on the device plugin ("": convert rewrites
    # it): a refusal (DRA106, DRA215, ...), a blocked file, an ignore of DRA401
    kept: str = ""
    bridged: bool = False  # the strategy leaves it on the extended resource, served by DRA
    # the pod spec's node selectors on labels GFD computes from the device plugin's
    # sharing configuration (nvidia.com/gpu.replicas, a -SHARED product, ...): stage 2
    sharing_labels: tuple[LabelSelection, ...] = ()

    @property
    def state(self) -> str:
        """What the run makes of the ask: ``held`` (an ignore keeps it), ``refused`` (a
        finding keeps it), ``bridged`` (left as it is, served by a bridge DeviceClass)
        or ``converted``."""
        if self.kept:
            return "held" if self.kept == HELD else "refused"
        return "bridged" if self.bridged else "converted"

    @property
    def who(self) -> str:
        """What asks, as a person finds it: a workload's container, or, for an ask
        outside every pod spec (a spawner's profile, an operator's runtime, a chart's
        values), the key that holds it."""
        ns = f"{self.namespace}/" if self.namespace else ""
        workload = f"{self.kind} {ns}{self.name}".strip()
        if self.container:
            return f"{workload}: container '{self.container}'"
        where = self.pod_path if self.pod_path and self.pod_path != "(document)" else ""
        if workload and where:
            return f"{workload} at {where}"
        return workload or (f"the value at {where}" if where else "this document")

    @property
    def gpu(self) -> bool:
        """A GPU request (``gpu_request``): TPU, Neuron and Gaudi requests, HAMi's shares
        and example names are not."""
        return gpu_request(self.resource, self.device_class is not None)

    def to_dict(self) -> dict[str, Any]:
        return {
            **location_dict(self),
            **as_json(self, REQUEST),
            "kept": self.kept or None,
            "state": self.state,
        }


@dataclass(slots=True)
class FileResult:
    """What a run found and made of one file (or of standard input). Not frozen: the
    stages after the file's own (suppression, the cross-file checks, writing) change
    its status, findings and text."""

    path: str
    status: Status
    findings: list[Finding] = field(default_factory=list)
    inventory: list[InventoryItem] = field(default_factory=list)
    original: bytes | None = None
    converted: bytes | None = None  # set when status is CHANGED
    templates: list[dict[str, Any]] = field(default_factory=list)  # generated objects
    # (line, col) of the workload each template was generated for: where DRA217 points
    template_positions: list[tuple[int, int]] = field(default_factory=list)
    # the line ranges the edits changed (old start, old end, new start, new end): the
    # diff looks only there, so it stays linear in the size of the file
    regions: list[tuple[int, int, int, int]] | None = None
    # a stream read part by part: its ignore comments (suppress.Marker), found while
    # each part's text was at hand; None: found in ``original`` when needed
    markers: list[Any] | None = None
    created: bool = False  # a new file (a kustomize overlay's templates): written only if absent
    # the units written whole this file is part of, by label: OVERLAY_UNIT and the
    # kustomization's path (convert/overlays.py), "Helm chart " and the chart's folder
    # (helm/unit.py); a file of a unit is not written once another of its files could not be
    units: set[str] = field(default_factory=set)

    @classmethod
    def unreadable(cls, path: str, code: str, message: str) -> FileResult:
        """A file (or stream) that could not be read: DRA001, DRA010 or DRA011 at 1:1."""
        return cls(path, Status.FAILED, [finding(code, path, 1, 1, message)])


@dataclass(frozen=True, slots=True)
class Suppressed:
    """A finding silenced by an ignore comment or a ``.dra-migrate.yaml`` entry."""

    finding: Finding
    kind: str  # "inline" (a comment in the file) or "config" (an ignore entry)
    source: str  # where the ignore is: path:line:col

    def to_dict(self) -> dict[str, object]:
        return {**self.finding.to_dict(), "suppressedBy": self.kind, "ignore": self.source}


@dataclass(frozen=True, slots=True)
class BridgeClass:
    """A DeviceClass of the input (repo/context.py finds them) that maps an extended resource (``spec.extendedResourceName``)."""

    name: str
    resource: str  # the extended resource name it maps
    path: str  # the file, as a real path
    line: int
    col: int


@dataclass(slots=True)
class Report:
    """The one model of a run that every format renders. Not frozen: the pipeline and
    the commands narrow its files and set how it is shown after building it."""

    files: list[FileResult]
    findings: list[Finding] = field(default_factory=list)  # run-level (no single file)
    plan: MigrationPlan | None = None  # the staged migration plan of ``report``
    suppressed: list[Suppressed] = field(default_factory=list)  # counted, never lost
    changes_fail: bool = False  # convert --check: a file that would change fails the run
    show_suppressed: bool = False  # text, Markdown and GitHub list suppressed findings
    severity: str = "info"  # the least severity the text view lists (report/noise.py)
    every_note: bool = False  # the text view lists repeated notes each (report/noise.py)
    stream: bool = False  # convert -: the converted stream went to stdout (no file to write)
    api_version: str = ""  # the resource.k8s.io version written (convert, scan)
    config_path: str = ""  # the mapping file used, "" for the built-in mapping
    cluster: ClusterInventory | None = None  # inventory --cluster, or of kubectl dumps
    # the DeviceClasses with extendedResourceName the run read (the strategy may bridge)
    bridge_classes: tuple[BridgeClass, ...] = ()
    charts: list[ChartPlan] = field(default_factory=list)  # Helm charts with GPU requests
    # the fleet's sharing model the run read (repo/sharing.py ``Fleet``): the plan's pools
    sharing: Any = None
    simulation: Simulation | None = None  # simulate: the placements before and after

    def manual(self) -> list[tuple[str, list[str]]]:
        """(path, codes) of the files that need a person: left untouched by a blocking
        finding, reported by design (chart, values, patch), or with an error finding.

        The codes are the file's errors, else its warnings, else its notes. A file left
        untouched only for findings an ignore silenced is not listed: its GPU requests
        are held (``held``); one that could not be processed is, with its silenced
        codes marked as such. A file with no code at all is listed without any."""
        silenced = self._silenced()
        out = []
        for f in self.files:
            errors = [
                x.code
                for x in f.findings
                if x.severity is Severity.ERROR and x.code not in AUTOMATIC
            ]
            if f.status in (Status.FAILED, Status.REPORTED) or errors:
                warnings = [x.code for x in f.findings if x.severity is Severity.WARNING]
                codes = errors or warnings or [x.code for x in f.findings]
                if not codes and silenced.get(f.path):
                    if f.status is Status.REPORTED:
                        continue  # held by the ignore: named by ``held``
                    codes = [f"{code} suppressed" for code in silenced[f.path]]
                out.append((f.path, sorted(set(codes))))
        return out

    def held(self) -> list[InventoryItem]:
        """The GPU requests an ignore keeps on the device plugin: held by an ignore of
        DRA401 (or of every code), or kept by a finding an ignore silenced."""
        silenced = self._silenced()
        return [
            item
            for item in self.inventory
            if item.gpu
            and item.kept
            and (item.kept == HELD or item.kept in silenced.get(item.path, ()))
        ]

    def _silenced(self) -> dict[str, list[str]]:
        """The codes of each file's suppressed findings, sorted."""
        codes: dict[str, set[str]] = {}
        for s in self.suppressed:
            codes.setdefault(s.finding.path, set()).add(s.finding.code)
        return {path: sorted(found) for path, found in codes.items()}

    @property
    def all_findings(self) -> list[Finding]:
        found = list(self.findings)
        for f in self.files:
            found.extend(f.findings)
        return found

    @property
    def inventory(self) -> list[InventoryItem]:
        return [item for f in self.files for item in f.inventory]

    def count(self, status: Status) -> int:
        return sum(1 for f in self.files if f.status is status)

    def exit_code(self, changes_fail: bool = False, fail_on: str = "error") -> int:
        """The exit status: 123 for input that could not be processed, whatever
        ``fail_on`` says; else 1 for changes (``--check``) and findings at or above the
        threshold (``--fail-on``: ``error``, ``warning``, or ``never``: 0)."""
        if any(f.status is Status.FAILED for f in self.files):
            return EXIT_UNPROCESSED
        failing = FAIL_ON[fail_on]
        if failing is None:
            return EXIT_OK
        if (changes_fail or self.changes_fail) and self.count(Status.CHANGED):
            return EXIT_FINDINGS
        if any(f.severity in failing for f in self.all_findings):
            return EXIT_FINDINGS
        return EXIT_OK

    def summary(self) -> dict[str, int]:
        severities = {s.value: 0 for s in Severity}
        for f in self.all_findings:
            severities[f.severity.value] += 1
        return {
            "files": len(self.files),
            "changed": self.count(Status.CHANGED),
            "unchanged": self.count(Status.UNCHANGED),
            "failed": self.count(Status.FAILED),
            "reported": self.count(Status.REPORTED),
            "requests": sum(1 for i in self.inventory if i.gpu),
            "other_requests": sum(1 for i in self.inventory if not i.gpu),
            **severities,
            "suppressed": len(self.suppressed),
        }
