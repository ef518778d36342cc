"""One ``simulate`` run from start to end: the fleet read, the tree before and after
(converted by this run into a temporary copy, or ``--after``), the DeviceClasses, the
placement on the API server, the comparison, and the report."""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dra_migrate.report.findings import ConfigError, Finding, InputProblem
from dra_migrate.report.model import Report, Status
from dra_migrate.report.simulation import SimulatedWorkload, Simulation
from dra_migrate.simulate import compare, deploys, devices, fleet, place, sharing
from dra_migrate.simulate.api import Api, ApiError


@dataclass(frozen=True, slots=True)
class Request:
    paths: tuple[str, ...]
    fleet_paths: tuple[str, ...]
    after: tuple[str, ...]  # a tree converted some other way; () converts PATHS
    excludes: tuple[str, ...] = ()
    timeout: float = place.DEFAULT_TIMEOUT
    allow_real_nodes: bool = False


class RealNodes(Exception):
    """The cluster has nodes simulate did not make: refused unless allowed."""


def read_fleet(paths: Sequence[str], limit: int) -> fleet.Fleet:
    """The fleet files' documents, read as dumps are (``discover.read_file``)."""
    from dra_migrate.manifests import compose, sources, trees
    from dra_migrate.repo import discover

    data = []
    for path in paths:
        try:
            raw = discover.read_file(path, limit)
            docs = compose.parse(sources.decode(path, raw))
        except discover.Unreadable as exc:
            raise ConfigError(f"--fleet {path}: {exc.message}") from None
        except InputProblem as problem:
            f = problem.finding
            raise ConfigError(f"--fleet: {f.message}", path, f.line, f.col) from None
        data.append(
            (
                path,
                [d for d in (trees.to_data(x.root) for x in docs if x.root) if isinstance(d, dict)],
            )
        )
    return fleet.load(tuple(paths), data)


def converted_tree(report: Report, paths: Sequence[str], root: str, into: str) -> None:
    """The tree after this run's conversion: ``paths`` copied under ``into`` (as they
    lie under ``root``) and each changed or created file written there."""
    for path in paths:
        source = os.path.abspath(path)
        target = os.path.join(into, os.path.relpath(source, root))
        if os.path.isdir(source):
            shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    for result in report.files:
        if result.status is Status.CHANGED and result.converted is not None:
            target = os.path.join(into, os.path.relpath(os.path.abspath(result.path), root))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as out:
                out.write(result.converted)


def root_of(paths: Sequence[str]) -> str:
    here = os.getcwd()
    absolute = [os.path.abspath(p) for p in paths]
    if all(p == here or p.startswith(here + os.sep) for p in absolute):
        return here
    common = os.path.commonpath(absolute)
    return common if os.path.isdir(common) else os.path.dirname(common)


def planned_fleet(
    the_fleet: fleet.Fleet, config: Any, model: Any, roots: Sequence[str], excludes: Sequence[str]
) -> fleet.Fleet:
    """``the_fleet`` with the DRA driver's consumable shares on each node after the
    migration as stage 2 of the plan sets them (simulate/sharing.py): from ``model``, the
    sharing model a conversion run read, else the configuration's merged with what the
    device plugin configurations under ``roots`` say (as the conversion reads them)."""
    if model is None and config.read_sharing:
        from dra_migrate.repo.sharing_lookup import read_repository

        found, _files = read_repository(roots, excludes, config.max_file_size)
        mine = config.sharing
        if found is not None and found.known:
            model = mine.merged(found) if mine else found
        else:
            model = mine
    elif model is None:
        model = config.sharing
    return sharing.planned(the_fleet, model, config)


def planned_classes(report: Report, settings: Any) -> list[dict[str, Any]]:
    """The DeviceClasses this run's plan writes (stage 3), as objects."""
    import yaml

    from dra_migrate.migration import stages

    plan, _found = stages.build(
        report,
        settings.config,
        stages.PlanSettings(settings.strategy, settings.kube_version, settings.target),
    )
    return [d for d in yaml.safe_load_all(plan.classes_yaml or "") if isinstance(d, dict)]


def simulate(
    api: Api,
    where: str,
    request: Request,
    the_fleet: fleet.Fleet,
    before: deploys.Tree,
    after: deploys.Tree,
    classes: list[dict[str, Any]],
) -> Report:
    """Place both trees, compare, and the report (the run's objects removed from a
    cluster that was given)."""
    [(rows, found)], outcome = place_pairs(
        api, the_fleet, [(before, after)], classes, request.timeout, cleanup=where != "local"
    )
    simulation = Simulation(
        control_plane=where if where != "local" else "a local control plane",
        fleet=the_fleet.source,
        nodes=len(the_fleet.nodes),
        pools=the_fleet.pools,
        gpus=the_fleet.gpus(),
        after_source=", ".join(request.after) if request.after else "converted by this run",
        workloads=rows,
        seconds=outcome.seconds,
        quiet=outcome.quiet,
    )
    findings: list[Finding] = [*before.findings, *after.findings, *found]
    return Report(files=[], findings=sorted(findings), simulation=simulation)


def place_pairs(
    api: Api,
    the_fleet: fleet.Fleet,
    pairs: Sequence[tuple[deploys.Tree, deploys.Tree]],
    classes: list[dict[str, Any]],
    timeout: float,
    cleanup: bool = True,
    fleets: Sequence[fleet.Fleet | None] = (),
) -> tuple[list[tuple[list[SimulatedWorkload], list[Finding]]], place.Outcome]:
    """Several (before, after) pairs placed at once, each on nodes of its own (of
    ``the_fleet``, or of its own fleet in ``fleets``), and each compared: one wait for
    the scheduler for all (the golden cases in CI)."""
    run_id = "s" + secrets.token_hex(3)
    phases = []
    for i, (before, after) in enumerate(pairs):
        own = fleets[i] if i < len(fleets) else None
        phases.append(place.Phase("before", before, dra=False, tag=f"{run_id}-{i}b", fleet=own))
        phases.append(place.Phase("after", after, dra=True, tag=f"{run_id}-{i}a", fleet=own))
    every_class = {str(c["metadata"]["name"]): c for c in devices.driver_classes()}
    for obj in [*the_fleet.device_classes, *classes]:
        every_class.setdefault(str((obj.get("metadata") or {}).get("name")), _clean(obj))
    created = [n for n in every_class if not _exists(api, n)]
    try:
        outcome = place.run(api, the_fleet, phases, list(every_class.values()), timeout)
        results = [
            compare.compare(phases[i], phases[i + 1], outcome.placements, outcome.quiet, timeout)
            for i in range(0, len(phases), 2)
        ]
        _confirm_alone(api, the_fleet, phases, results, list(every_class.values()), timeout, run_id)
        for i, result in enumerate(results):  # why a shared pool's workload bound fewer
            own = fleets[i] if i < len(fleets) else None
            result.findings.extend(sharing.explain(result.rows, result.findings, own or the_fleet))
    finally:
        if cleanup:
            place.cleanup(api, phases, created)
    return [(r.rows, r.findings) for r in results], outcome


ALONE_MAX = 20  # workloads placed again alone at most (each on a copy of the fleet)


def _confirm_alone(
    api: Api,
    the_fleet: fleet.Fleet,
    phases: list[place.Phase],
    results: list[compare.Compared],
    classes: list[dict[str, Any]],
    timeout: float,
    run_id: str,
) -> None:
    """Each workload that bound fewer pods or devices after the conversion placed again
    alone (with what it needs of its tree), on a copy of its fleet: one that holds alone
    only lost GPUs to the others (``compare.alone``). Placed into ``phases`` so that
    the cleanup takes them too."""
    again: list[tuple[int, int, place.Phase, place.Phase]] = []
    for pair, result in enumerate(results):
        for index, (_row, unit, twin) in enumerate(result.contended):
            if len(again) >= ALONE_MAX:
                break
            n = len(again)
            before, after = phases[2 * pair], phases[2 * pair + 1]
            again.append(
                (
                    pair,
                    index,
                    place.Phase(
                        "before",
                        _alone(before.tree, unit.item),
                        False,
                        tag=f"{run_id}-r{n}b",
                        fleet=before.fleet,
                    ),
                    place.Phase(
                        "after",
                        _alone(after.tree, twin.item),
                        True,
                        tag=f"{run_id}-r{n}a",
                        fleet=after.fleet,
                    ),
                )
            )
    if not again:
        return
    extra = [p for _, _, b, a in again for p in (b, a)]
    outcome = place.run(api, the_fleet, extra, classes, timeout)
    phases.extend(extra)
    confirmed: dict[int, dict[int, bool]] = {}
    for pair, index, before, after in again:
        result = compare.compare(before, after, outcome.placements, outcome.quiet, timeout)
        differs = any(f.code in compare.CONTENDED for f in result.findings)
        confirmed.setdefault(pair, {})[index] = differs or not outcome.quiet
    for pair, answers in confirmed.items():
        compare.alone(results[pair], answers)


def _alone(tree: deploys.Tree, item: deploys.Deployable) -> deploys.Tree:
    return deploys.Tree([*(o for o in tree.objects if o.support), item], [])


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    return {
        "apiVersion": devices.DRA_API,
        "kind": "DeviceClass",
        "metadata": {"name": meta.get("name"), "labels": meta.get("labels") or {}},
        "spec": obj.get("spec") or {},
    }


def _exists(api: Api, name: str) -> bool:
    try:
        api.request("GET", f"/apis/resource.k8s.io/v1/deviceclasses/{name}")
    except ApiError:
        return False
    return True


def refuse_real_nodes(api: Api) -> None:
    """A cluster with nodes simulate did not make (a kubelet's) is refused: pods of the
    run could land beside real work, and a real node's GPUs would count."""
    for node in api.list("v1", "Node"):
        labels = (node.get("metadata") or {}).get("labels") or {}
        if devices.SIM_LABEL not in labels:
            name = (node.get("metadata") or {}).get("name")
            raise RealNodes(
                f"the cluster has real nodes ({name}, ...): simulate creates fake nodes and "
                "places pods beside them; use an empty cluster (kind, KWOK, the local control "
                "plane) or --allow-real-nodes"
            )


def tempdir() -> str:
    return tempfile.mkdtemp(prefix="dra-migrate-simulate-")
