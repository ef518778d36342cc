"""The passes over units of files, after every file's own: kustomize overlays
converted with their bases (convert/overlays.py) and Helm charts migrated in their
sources (helm/unit.py). Each replaces the results of its files and adds the files
it creates after the others; neither is imported when no file of the run needs it."""

from __future__ import annotations

import os

from dra_migrate.repo import discover, roles
from dra_migrate.report.model import ChartPlan, FileResult

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from dra_migrate.convert.mapping import Settings


def with_overlays(
    layout: roles.Layout,
    candidates: list[discover.Candidate],
    results: dict[int, FileResult],
    in_run: set[str],
    settings: Settings,
) -> None:
    """The overlays of the bases converted: their patches rewritten and their templates
    added (new results after the others), or the bases held (convert/overlays.py).
    Only the kustomizations among the run's files, or building one of them, can change
    a result (an overlay outside the run is written by none): without one the pass is
    not imported."""
    if not any(p.path in in_run or not in_run.isdisjoint(p.builds()) for p in layout.patching):
        return  # (a hook on a file no overlay builds: the pass would hold or change nothing)
    from dra_migrate.convert import overlays

    by_real(
        candidates, results, lambda by_real: overlays.carry_out(layout, by_real, in_run, settings)
    )


def with_charts(
    layout: roles.Layout,
    candidates: list[discover.Candidate],
    results: dict[int, FileResult],
    in_run: set[str],
    settings: Settings,
) -> list[ChartPlan]:
    """The Helm charts whose templates or values set GPU resources, migrated each as one
    unit (helm/unit.py): their files' results replaced, new files after the others."""
    if not any(
        f.code in ("DRA203", "DRA204", "DRA246") for r in results.values() for f in r.findings
    ):  # no chart sets a GPU: the chart pass is never imported
        return []
    from dra_migrate.helm import unit

    plans: list[ChartPlan] = []

    def carry_out(by_real: dict[str, FileResult]) -> list[FileResult]:
        added, found = unit.carry_out(layout, by_real, in_run, settings, _chart_bridged(settings))
        plans.extend(found)
        return added

    by_real(candidates, results, carry_out)
    return plans


def with_profiles(
    candidates: list[discover.Candidate], results: dict[int, FileResult], settings: Settings
) -> None:
    """KubeAI's Models: those a models chart's values overlay turns on over the chart's
    values.yaml (helm/catalog_overlays.py, read only), then every Model's profile
    resolved from the run's values (convert/profile_asks.py)."""
    if any(os.path.basename(c.real) in ("values.yaml", "values.yml") for c in candidates):
        from dra_migrate.helm import catalog_overlays

        config = settings.config
        by_real(candidates, results, lambda rs: catalog_overlays.with_overlays(rs, config))
    if any(r.kept == "DRA279" for f in results.values() for r in f.inventory):
        from dra_migrate.convert import profile_asks

        profile_asks.resolve([results[i] for i in sorted(results)])


def by_real(
    candidates: list[discover.Candidate],
    results: dict[int, FileResult],
    carry_out: Callable[[dict[str, FileResult]], list[FileResult]],
) -> None:
    """``carry_out`` on the results by real path (it replaces some, and returns the
    results of the files it adds), put back in the run's order, the new ones last."""
    index = {candidates[i].real: i for i in results if i < len(candidates)}
    by_real = {real: results[i] for real, i in index.items()}
    added = carry_out(by_real)
    for real, i in index.items():
        results[i] = by_real[real]
    next_index = max(results, default=-1) + 1
    for result in added:
        results[next_index] = result
        next_index += 1


def _chart_bridged(settings: Settings) -> Callable[[Any], bool]:
    """Whether the strategy bridges a chart: ``strategy.paths`` for its Chart.yaml, else
    --strategy, else the configuration's default (``auto`` decides per pod spec on the
    cluster's facts, which a chart's many renderings do not have: it migrates it)."""
    config = settings.config.strategy

    def bridged(chart: Any) -> bool:
        from dra_migrate.migration import strategy

        shown = os.path.join(chart.display, "Chart.yaml")
        for pattern, chosen in config.paths:
            if strategy.path_matches(pattern, config.folder, shown):
                return chosen == "bridge"
        return (settings.strategy or config.default or "rewrite") == "bridge"

    return bridged
