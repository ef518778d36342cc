"""Evaluating selectors on devices: :func:`compile_selector` (parsed once, results
cached by what the selector reads) and :func:`evaluate_selector`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.cel.cost import estimate_cost
from dra_migrate.cel.devices import Device
from dra_migrate.cel.direct import _device_shape, _direct, _Err, _Fallback, _Fn
from dra_migrate.cel.parse import (
    _parse,
    _ParseFailed,
)
from dra_migrate.cel.problems import (
    COST_LIMIT,
    CelEvaluationError,
)
from dra_migrate.cel.tree import (
    _read_paths,
)


@dataclass(frozen=True, slots=True)
class SelectorProgram:
    """A selector compiled once and evaluated on many devices.

    A CEL expression is pure: its result depends only on what it reads of
    ``device``. When every read is a fixed path (``device.driver``,
    ``device.attributes["d"].name``, ``device.capacity["d"]["n"]``, inside
    ``has()`` or not), the result is cached per distinct tuple of those values,
    so a fleet of identical GPUs costs one evaluation. Any other use of
    ``device`` (iterating a map, a computed key) caches per whole device content.
    """

    expression: str
    tree: Any
    paths: tuple[tuple[str, ...], ...] | None
    refused: str | None = None  # why Kubernetes refuses the selector before evaluating it
    results: dict[Any, bool | str] = field(default_factory=dict)
    direct: _Fn | None = None  # the selector as a closure, when it has only the common shapes

    def key(self, device: Device) -> Any:
        if self.paths is None:
            return (
                device.driver,
                repr(sorted((d, sorted(n.items())) for d, n in device.attributes.items())),
                repr(sorted((d, sorted(n.items())) for d, n in device.capacity.items())),
            )
        key: list[Any] = []
        for path in self.paths:
            if path[0] == "driver":
                key.append(device.driver)
                continue
            table = device.attributes if path[0] == "attributes" else device.capacity
            names = table.get(path[1])
            if names is None or path[2] not in names:
                key.append(_ABSENT)
            else:
                value = names[path[2]]
                key.append((type(value).__name__, repr(value)))
        return tuple(key)

    def matches(self, device: Device) -> bool:
        """Like :func:`evaluate_selector`; raises :class:`CelEvaluationError`."""
        if self.refused is not None:
            raise CelEvaluationError(self.refused)
        shape = _device_shape(device)
        if shape == "broken":  # the whole device fails, whatever the selector reads
            return _evaluate_tree(self.tree, device)
        if self.direct is not None and shape == "plain":
            try:
                value = self.direct(device, {})
            except _Fallback:
                pass
            else:
                if value is True or value is False:
                    return value
                if isinstance(value, _Err):
                    raise CelEvaluationError(value.message)
        key = self.key(device)
        cached = self.results.get(key)
        if cached is None:
            try:
                cached = _evaluate_tree(self.tree, device)
            except CelEvaluationError as exc:
                cached = str(exc)
            if len(self.results) < 100_000:
                self.results[key] = cached
        if isinstance(cached, str):
            raise CelEvaluationError(cached)
        return cached


_ABSENT = ("absent",)


def _evaluate_tree(tree: Any, device: Device) -> bool:
    """``tree`` evaluated on ``device`` by cel-python (imported here, on first use)."""
    from dra_migrate.cel.evaluator import evaluate_tree

    return evaluate_tree(tree, device)


@functools.lru_cache(maxsize=1024)
def compile_selector(expression: str) -> SelectorProgram:
    """Parse ``expression`` once; raises :class:`CelEvaluationError` on a syntax error."""
    try:
        tree = _parse(expression)
    except _ParseFailed as failed:
        raise CelEvaluationError(
            f"syntax error at offset {failed.issue.offset}: {failed.issue.message}"
        ) from None
    except RecursionError:
        raise CelEvaluationError("expression nested too deeply") from None
    cost = estimate_cost(tree)
    refused = None
    if cost > COST_LIMIT:
        refused = f"too complex: estimated cost {cost:,} exceeds the limit of {COST_LIMIT:,}"
    return SelectorProgram(expression, tree, _read_paths(tree), refused, direct=_direct(tree))


def evaluate_selector(expression: str, device: Device) -> bool:
    """Evaluate a CEL device selector for ``device`` as the Kubernetes scheduler would.

    Raises :class:`CelEvaluationError` for syntax errors and CEL runtime errors
    (for example a missing attribute looked up without ``has()``, or the runtime
    cost limit), and when the result is not a bool. Compiled programs and results
    are cached (see :class:`SelectorProgram`), so evaluating one selector on many
    devices parses it once.
    """
    return compile_selector(expression).matches(device)
