"""What the simulate tests share: a case converted into a before and an after tree, and
many cases placed at once on the shared control plane (one wait for the scheduler)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dra_migrate.convert.mapping import find_config, load_config
from dra_migrate.report.findings import Finding
from dra_migrate.report.simulation import SimulatedWorkload
from dra_migrate.simulate import deploys, fleet, session
from dra_migrate.simulate.api import Api
from tests.conftest import FIXTURES
from tests.helpers.cli_runner import invoke

FLEET = FIXTURES / "simulate" / "fleet.yaml"


@dataclass
class Case:
    name: str
    before: Path
    after: Path
    classes: list[dict[str, Any]]
    fleet: Path | None = None  # a fleet of its own, else FLEET


def _in(folder: Path, args: list[str]) -> Any:
    old = os.getcwd()
    os.chdir(folder)
    try:
        return invoke(args)
    finally:
        os.chdir(old)


def prepare(
    name: str,
    source: Path,
    work: Path,
    breaking: Callable[[Path], None] | None = None,
    fleet: Path | None = None,
) -> Case:
    """``source`` copied to ``work/name/before`` and converted (``convert --write``) into
    ``work/name/after``; ``breaking`` edits the converted tree (a hand-broken conversion)."""
    before, after = work / name / "before", work / name / "after"
    shutil.copytree(source, before)
    shutil.copytree(source, after)
    args = (
        (source.parent / "args").read_text().split() if (source.parent / "args").is_file() else []
    )
    done = _in(after, ["convert", "--write", "--jobs", "1", *args, "."])
    assert done.exception is None or isinstance(done.exception, SystemExit), done.output
    classes = _in(before, ["deviceclasses", *args, "."])
    found = [d for d in yaml.safe_load_all(classes.stdout) if isinstance(d, dict)]
    if breaking is not None:
        breaking(after)
    return Case(name, before, after, found, fleet)


def place(
    kubeconfig: str, cases: Sequence[Case], timeout: float = 90.0
) -> dict[str, tuple[list[SimulatedWorkload], list[Finding]]]:
    """Every case placed at once on the fleet of ``FLEET``, each compared."""
    fleet = session.read_fleet([str(FLEET)], 1 << 20)
    pairs = []
    for case in cases:
        before = deploys.read_tree(str(case.before), ["."])
        after = deploys.read_tree(str(case.after), ["."])
        pairs.append((before, after))
    classes = [c for case in cases for c in case.classes]
    own = [planned(case, session.read_fleet([str(case.fleet or FLEET)], 1 << 20)) for case in cases]
    api = Api(kubeconfig)
    try:
        results, outcome = session.place_pairs(api, fleet, pairs, classes, timeout, fleets=own)
    finally:
        api.close()
    assert outcome.quiet, "the scheduler settled"
    print(f"placed {len(cases)} case(s): {outcome.seconds}")
    named = {}
    for case, (pair, (rows, found)) in zip(cases, zip(pairs, results, strict=True), strict=True):
        named[case.name] = (rows, [*pair[0].findings, *pair[1].findings, *found])
    return named


def planned(case: Case, the_fleet: fleet.Fleet) -> fleet.Fleet:
    """``the_fleet`` with the DRA driver's shares after the migration as the case's
    plan sets them (its configuration, and the device plugin configurations it holds),
    as ``simulate`` resolves them."""
    found = find_config(case.before)
    config = load_config(found)
    return session.planned_fleet(the_fleet, config, None, [str(case.before)], [])


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    """Replace ``old`` (which must be there) by ``new`` in ``path``."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")
