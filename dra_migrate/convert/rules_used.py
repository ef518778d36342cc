"""The configuration's context rules that no workload of a run matched: a rule on a
misspelled namespace, label or product is otherwise accepted in silence and never
used (DRA532). Said only by a run that reads the whole folder of the configuration."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from dra_migrate.convert.mapping import Config, rule_positions
from dra_migrate.report.findings import Finding, finding
from dra_migrate.report.model import InventoryItem


def covers(paths: Sequence[str], config: Config) -> bool:
    """Whether a run over ``paths`` reads every workload the configuration maps: one of
    them is a folder that holds the configuration's folder."""
    if config.path is None:
        return False
    home = os.path.realpath(os.path.dirname(config.path) or ".")
    for path in paths:
        if path != "-" and os.path.isdir(path):
            top = os.path.realpath(path)
            if home == top or home.startswith(top.rstrip(os.sep) + os.sep):
                return True
    return False


def unused_rules(config: Config, items: Iterable[InventoryItem]) -> list[Finding]:
    """DRA532 for each rule of the configuration's own resources that chose the class
    of no pod spec: the mapping of a row is the first whose name matches it."""
    if config.path is None:
        return []
    used: set[tuple[int, int]] = set()
    for item in items:
        if item.rule_index is None:
            continue
        mapping = next(
            (i for i, m in enumerate(config.resources) if m.match(item.resource) is not None),
            None,
        )
        if mapping is not None:
            used.add((mapping, item.rule_index))
    unused = [
        (i, j)
        for i, mapping in enumerate(config.resources)
        for j in range(len(mapping.rules))
        if (i, j) not in used
    ]
    if not unused:
        return []
    positions = rule_positions(config.path)  # the configuration's own rules only
    found = []
    for i, j in unused:
        if (i, j) not in positions:
            continue  # a built-in mapping's rule
        line, col = positions[(i, j)]
        name = config.resources[i].name
        found.append(
            finding(
                "DRA532",
                config.path,
                line,
                col,
                f"rule {j + 1} of {name} (resources.{i}.rules.{j}) matched no workload of "
                "this run: its namespaces, labels or nodeSelector values are none that a "
                f"pod spec asking for {name} has",
                "check its values against the workloads (a misspelled namespace or product "
                "never matches); drop the rule if it is for workloads that are gone",
            )
        )
    return found
