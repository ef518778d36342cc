"""The records of the chart pass: a chart as read, the run's choices, and what a way
makes of a chart (the contract between ``unit.py`` and the ways)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dra_migrate.report.findings import Finding
from dra_migrate.report.model import ChartPlan

RECIPE = "recipe"  # a values change: the chart's own DRA switch (recipes.py)
TEMPLATE = "template"  # template edits behind a switch the tool adds (template_edit.py)
BRIDGE = "bridge"  # left as it is: a DeviceClass with extendedResourceName serves it
MANUAL = "manual"  # left as it is: a construct no way rewrites safely (named)
DONE = "done"  # migrated already (a run after the conversion): nothing to do
WAYS = (RECIPE, TEMPLATE, BRIDGE, MANUAL, DONE)

# a file's bytes by real path (the run's, else the disk's); FileNotFoundError for a file
# that is not there, discover.Unreadable (DRA001, DRA011) for one that cannot be read
Read = Callable[[str], bytes]


@dataclass(frozen=True, slots=True)
class Dependency:
    """One entry of Chart.yaml's ``dependencies``."""

    name: str
    version: str = ""
    repository: str = ""
    alias: str = ""
    condition: str = ""

    @property
    def key(self) -> str:
        """The key of the parent's values that hold this chart's values."""
        return self.alias or self.name


@dataclass(frozen=True, slots=True)
class Chart:
    """A Helm chart folder as read (``chart.read``). Paths are real paths."""

    root: str  # the folder holding Chart.yaml
    display: str  # the folder as the run shows paths
    name: str
    version: str
    api_version: str = "v2"  # Chart.yaml apiVersion (v1: Helm 2's requirements.yaml)
    type: str = "application"  # or "library": renders nothing of its own
    app_version: str = ""
    dependencies: tuple[Dependency, ...] = ()
    # the chart whose charts/ folder holds this one (a vendored dependency), and the key
    # of that chart's values that holds this chart's values (its alias, else its name)
    parent: str | None = None
    values_key: str = ""
    values_files: tuple[str, ...] = ()  # values.yaml first, then values*.yaml, then ci/*
    templates: tuple[str, ...] = ()  # every file under templates/, sorted
    schema: str | None = None  # values.schema.json, when the chart has one
    upstream: bool = False  # a vendored upstream chart: never forked by a template edit
    why_upstream: str = ""  # what says so (a charts/ dependency, a known name, the config)

    @property
    def values(self) -> str:
        """The chart's own values.yaml (which may not exist: a chart without values)."""
        import os

        return os.path.join(self.root, "values.yaml")


@dataclass(frozen=True, slots=True)
class Options:
    """The run's choices for charts (``helm:`` of the configuration)."""

    values: str = "edit"  # a recipe edits the values files ("edit") or writes a "file"
    switch_on: bool = False  # the default of the switch a template edit adds
    switch_key: str = "dra.enabled"


@dataclass(slots=True)
class ChartEdit:
    """What a way makes of a chart. Not frozen: ``unit.py`` adds findings.

    ``changed`` holds the new bytes of files that exist, ``created`` the bytes of new
    files (written only where no file of that name exists); both by real path. A way
    that leaves the chart as it is (bridge, manual, done) changes nothing and says why
    in ``findings`` (their paths as the run shows them)."""

    plan: ChartPlan
    changed: dict[str, bytes] = field(default_factory=dict)
    created: dict[str, bytes] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
