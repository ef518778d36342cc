"""What the CEL layer reports: the API server's limits on a selector, the problem
codes of a static check (:data:`PROBLEM_CODES`, each with its severity),
:class:`CelProblem` and :class:`CelEvaluationError`.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_EXPRESSION_LENGTH = 10_240  # resourceapi.CELSelectorExpressionMaxLength
COST_LIMIT = 1_000_000  # resourceapi.CELSelectorExpressionMaxCost: estimate and runtime
MAX_ATTRIBUTES_PER_DEVICE = 32  # resourceapi.ResourceSliceMaxAttributesAndCapacitiesPerDevice
MAX_LIST_ATTRIBUTE_VALUES = 64  # list-type attribute values, as the estimator assumes
MAX_ATTRIBUTE_STRING = 64  # resourceapi.DeviceAttributeMaxValueLength


@dataclass(frozen=True, slots=True)
class ProblemCode:
    code: str
    severity: str  # "error" | "warning"
    title: str


PROBLEM_CODES: dict[str, ProblemCode] = {
    c.code: c
    for c in (
        ProblemCode("syntax", "error", "the expression does not parse as CEL"),
        ProblemCode("too-long", "error", "the expression is longer than 10,240 characters"),
        ProblemCode("not-bool", "error", "the expression does not evaluate to bool"),
        ProblemCode(
            "too-complex", "error", "the estimated evaluation cost exceeds the API server's limit"
        ),
        ProblemCode("undeclared", "error", "reference to an undeclared variable"),
        ProblemCode(
            "unknown-function", "error", "call of a function the Kubernetes CEL environment lacks"
        ),
        ProblemCode("unknown-field", "error", "device has only driver, attributes and capacity"),
        ProblemCode(
            "stale-name", "error", "attribute or capacity name that the driver no longer publishes"
        ),
        ProblemCode(
            "driver-release",
            "warning",
            "name only some releases of its driver publish (kept by the release a run assumes)",
        ),
        ProblemCode(
            "deprecated-name", "warning", "name the driver still publishes but has deprecated"
        ),
        ProblemCode("unknown-attribute", "error", "attribute the driver does not publish"),
        ProblemCode("unknown-capacity", "error", "capacity the driver does not publish"),
        ProblemCode(
            "capacity-as-attribute", "error", "a capacity looked up under device.attributes"
        ),
        ProblemCode(
            "attribute-as-capacity", "error", "an attribute looked up under device.capacity"
        ),
        ProblemCode("unknown-domain", "error", "attribute domain that no driver uses"),
        ProblemCode(
            "unlisted-domain",
            "warning",
            "attribute domain the catalog does not know, resembling one it knows",
        ),
        ProblemCode("type", "error", "value compared or used with the wrong type"),
        ProblemCode(
            "invalid-literal",
            "warning",
            "semver() or quantity() argument that does not parse: Kubernetes accepts it, "
            "and it fails on every device",
        ),
        ProblemCode("unknown-value", "warning", "comparison with a value the attribute never has"),
        ProblemCode(
            "unknown-driver", "warning", "device.driver compared with an unknown driver name"
        ),
    )
}


@dataclass(frozen=True, slots=True)
class CelProblem:
    """One finding in a CEL expression; ``offset`` is a 0-based character offset."""

    code: str
    offset: int
    message: str
    hint: str = ""
    subject: str = ""  # the domain or domain/name a catalog problem is about

    @property
    def severity(self) -> str:
        entry = PROBLEM_CODES.get(self.code)
        return entry.severity if entry else "error"


@dataclass(frozen=True, slots=True)
class Compared:
    """A string attribute compared with a literal: ``how`` is "whole" (``==``, ``!=``,
    ``in [...]``), "prefix" (startsWith), "suffix" (endsWith) or "part" (contains);
    ``fold`` the case the selector made the attribute's value first ("lower" for
    lowerAscii(), "upper", or ""); ``offset`` where the literal's text starts."""

    domain: str
    name: str
    how: str
    value: str
    offset: int
    fold: str = ""


class CelEvaluationError(Exception):
    """A selector could not be evaluated (syntax error or CEL runtime error)."""
