"""CEL device selectors: static checks and evaluation like Kubernetes does them.

Three building blocks for ``dra-migrate validate``, re-exported here from the
modules that hold them:

* :func:`check_selector` (``check.py``, with ``check_rules.py`` and ``cost.py``)
  parses a selector with a real CEL parser (cel-python's Lark grammar,
  ``parse.py``) and walks the syntax tree: syntax errors with their position, the
  10,240-character limit, the cost estimate, and every ``device.attributes[...]``
  / ``device.capacity[...]`` access checked against the driver catalog
  (``dra_migrate/catalog/``): stale names, unknown names, capacities used as
  attributes and the reverse, wrong domains, version and Quantity values compared
  like strings or numbers, unknown drivers.
* :func:`evaluate_selector` (``evaluate.py``) evaluates a selector against one
  :class:`Device` in the Kubernetes DRA CEL environment
  (``k8s.io/dynamic-resource-allocation/cel``): variable ``device`` with
  ``driver``, ``attributes`` (domain → name → typed value; an unknown domain is an
  empty map) and ``capacity`` (domain → name → Quantity), the Kubernetes CEL
  libraries (``runtime.py``, values in ``values.py`` and ``formats.py``),
  ``has()`` and ``cel.bind`` (``evaluator.py``). Equality and ordering follow
  cel-go (``operators.py``). The common shapes of selectors run as Python
  closures (``direct.py``), the rest on cel-python.
* :func:`devices_from_resource_slices` (``devices.py``) turns ResourceSlice
  objects (v1beta1 ``basic`` devices, v1beta2/v1 flat devices, ``kind: List``)
  into devices.

cel-python and Lark are imported on first use, so ``import dra_migrate.cel`` stays
cheap. Problem codes are plain strings (:data:`PROBLEM_CODES` gives each one's
severity); offsets are 0-based character offsets into the expression.
"""

from dra_migrate.cel.check import check_selector as check_selector
from dra_migrate.cel.check import check_selector_values as check_selector_values
from dra_migrate.cel.cost import estimate_cost as estimate_cost
from dra_migrate.cel.devices import Device as Device
from dra_migrate.cel.devices import devices_from_resource_slices as devices_from_resource_slices
from dra_migrate.cel.evaluate import SelectorProgram as SelectorProgram
from dra_migrate.cel.evaluate import compile_selector as compile_selector
from dra_migrate.cel.evaluate import evaluate_selector as evaluate_selector
from dra_migrate.cel.problems import COST_LIMIT as COST_LIMIT
from dra_migrate.cel.problems import MAX_EXPRESSION_LENGTH as MAX_EXPRESSION_LENGTH
from dra_migrate.cel.problems import PROBLEM_CODES as PROBLEM_CODES
from dra_migrate.cel.problems import CelEvaluationError as CelEvaluationError
from dra_migrate.cel.problems import CelProblem as CelProblem
from dra_migrate.cel.problems import Compared as Compared
from dra_migrate.cel.problems import ProblemCode as ProblemCode
from dra_migrate.cel.values import InvalidVersion as InvalidVersion
from dra_migrate.cel.values import Quantity as Quantity
from dra_migrate.cel.values import SemVer as SemVer
from dra_migrate.cel.values import normalize_semver as normalize_semver
from dra_migrate.cel.values import parse_quantity as parse_quantity

__all__ = [
    "COST_LIMIT",
    "MAX_EXPRESSION_LENGTH",
    "PROBLEM_CODES",
    "CelEvaluationError",
    "CelProblem",
    "Compared",
    "Device",
    "InvalidVersion",
    "ProblemCode",
    "Quantity",
    "SelectorProgram",
    "SemVer",
    "check_selector",
    "check_selector_values",
    "compile_selector",
    "devices_from_resource_slices",
    "estimate_cost",
    "evaluate_selector",
    "normalize_semver",
    "parse_quantity",
]
