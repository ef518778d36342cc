"""The fields behind DRA feature gates, and the rules the API server applies to them:
device tolerations and taints, capacity requests, admin access, derived attributes,
extended resource names of classes; of ResourceSlices the 1.37 ones (skipNodeOperations,
nodeAllocatableResources, compatibilityGroups of counter consumptions).

A gated field whose gate is off for ``--kube-version`` (and ``--feature-gates``) is
DRA353 and not checked further: the API server drops it on create. A field the
release does not have at all is left to the strict schema (DRA301). The rules follow
kubernetes/kubernetes ``pkg/apis/resource/validation/validation.go`` and the
declarative validation tags of the ``resource.k8s.io`` types; those of ResourceSlices
and DeviceTaintRules are in ``devices``.
"""

from __future__ import annotations

from yaml.nodes import MappingNode, Node

from dra_migrate.k8s.names import qualified_key_problem
from dra_migrate.manifests import trees
from dra_migrate.manifests.trees import entries, get, items
from dra_migrate.validate.checker import Checker
from dra_migrate.validate.values import (
    extended_resource_problem,
    fully_qualified_name_problem,
    label_value_problem,
    qualified_name_problem,
    quantity,
    scalar_text,
)

MAX_TOLERATIONS = 16  # resource.DeviceTolerationsMaxLength
_TAINT_EFFECTS = ("NoSchedule", "NoExecute")
_NONE_EFFECT_FROM = 35  # DeviceTaintEffectNone, with DeviceTaintRule's v1beta2 rework


def gated(
    checker: Checker, node: Node | None, gate: str, owner: str, field: str, dropped: bool = True
) -> bool:
    """Whether ``node`` (a field behind ``gate``) is present and its gate is on.

    A present field whose gate is off is DRA353. One the release does not have
    at all is the schema's business (DRA301, unknown field).
    """
    if node is None:
        return False
    if checker.gates.enabled(gate):
        return checker.gates.exists(gate)  # turned on where the release lacks it: DRA301
    if checker.gates.exists(gate) or dict(checker.gates.overrides).get(gate) is False:
        if not dropped:
            effect = "the API server does not serve them"
        elif gate == "DRAPrioritizedList":
            effect = "the API server drops the field and rejects the request without it"
        else:
            effect = "the API server drops the field: what is applied is not what is written"
        checker.add(
            "DRA353",
            node,
            f"{owner}: {field} needs the feature gate {gate}; {checker.gates.why_off(gate)}: "
            f"{effect}",
            checker.gates.how_to_enable(gate),
        )
    return False


def request_fields(checker: Checker, body: Node, label: str, subrequest: bool) -> None:
    """The gated fields of an exact request (v1 ``exactly``, v1beta1 request) or a subrequest."""
    tolerations = get(body, "tolerations")
    if gated(checker, tolerations, "DRADeviceTaints", label, "tolerations"):
        check_tolerations(checker, tolerations, label)
    capacity = get(body, "capacity")
    if gated(checker, capacity, "DRAConsumableCapacity", label, "capacity"):
        capacity_requests(checker, capacity, label)
    if not subrequest:
        gated(checker, get(body, "adminAccess"), "DRAAdminAccess", label, "adminAccess")
    derived = get(body, "derivedAttributes")
    if gated(checker, derived, "DRADerivedAttributes", label, "derivedAttributes"):
        derived_attributes(checker, derived, label)


MAX_DERIVED = 32  # derivedAttributes of a request
MAX_GROUPS = 2  # compatibilityGroups of a counter consumption


def derived_attributes(checker: Checker, node: Node, label: str) -> None:
    """A request's derivedAttributes (1.37, KEP-6080): at most 32, unique fully qualified
    names, each with a CEL expression (the OpenAPI of Kubernetes 1.37.0)."""
    entries_ = items(node)
    checker.limit(node, len(entries_), MAX_DERIVED, label, "derivedAttributes")
    seen: set[str] = set()
    for entry in entries_:
        name_node = get(entry, "name")
        name = scalar_text(name_node)
        problem = fully_qualified_name_problem(name) if name_node is not None else None
        if problem:
            checker.add(
                "DRA357", name_node or entry, f"{label}: derived attribute {name!r} {problem}"
            )
        elif name in seen:
            checker.add("DRA313", name_node or entry, f"{label}: derived attribute {name!r} twice")
        seen.add(name)


def compatibility_groups(checker: Checker, node: Node, label: str) -> None:
    """compatibilityGroups of a counter consumption (1.37, KEP-5963): at most 2, unique."""
    groups = [scalar_text(g) for g in items(node)]
    checker.limit(node, len(groups), MAX_GROUPS, label, "compatibilityGroups")
    if len(set(groups)) != len(groups):
        checker.add("DRA313", node, f"{label}: compatibilityGroups lists a group twice")


def check_tolerations(checker: Checker, node: Node, label: str) -> None:
    tolerations = items(node)
    checker.limit(node, len(tolerations), MAX_TOLERATIONS, label, "tolerations")
    for toleration in tolerations:
        if not isinstance(toleration, MappingNode):
            continue
        key_node = get(toleration, "key")
        key = scalar_text(key_node)
        if key_node is not None and key:
            problem = qualified_key_problem(key)
            if problem:
                checker.add("DRA354", key_node, f"{label}: toleration key {key!r}: {problem}")
        operator_node = get(toleration, "operator")
        operator = scalar_text(operator_node) or "Equal"  # defaulted by the API server
        value_node = get(toleration, "value")
        value = scalar_text(value_node)
        if operator == "Exists":
            if value:
                checker.add(
                    "DRA354",
                    value_node or toleration,
                    f"{label}: a toleration with operator Exists must not have a value ({value!r})",
                    "drop the value, or use operator Equal",
                )
        elif operator == "Equal":
            problem = label_value_problem(value)
            if problem:
                checker.add(
                    "DRA354",
                    value_node or toleration,
                    f"{label}: toleration value {value!r} {problem}",
                )
        else:
            checker.add(
                "DRA354",
                operator_node or toleration,
                f"{label}: toleration operator {operator!r} is not Equal or Exists",
            )
        check_effect(checker, get(toleration, "effect"), toleration, label, "toleration")


def check_effect(checker: Checker, node: Node | None, parent: Node, label: str, what: str) -> None:
    """A taint's effect (required) or a toleration's (optional)."""
    effect = scalar_text(node)
    allowed = _TAINT_EFFECTS + (("None",) if checker.gates.minor >= _NONE_EFFECT_FROM else ())
    if not effect:
        if what == "taint":
            checker.add("DRA354", node or parent, f"{label}: a taint needs an effect")
        return
    if effect not in allowed:
        checker.add(
            "DRA354",
            node or parent,
            f"{label}: {what} effect {effect!r} is not {', '.join(allowed[:-1])} or {allowed[-1]}"
            + (
                " (PreferNoSchedule is a node taint effect only)"
                if effect == "PreferNoSchedule"
                else ""
            ),
        )


def check_taint(checker: Checker, node: Node, label: str, schema: bool = True) -> None:
    """A taint; ``schema``: a strict schema already requires its key and effect."""
    if not isinstance(node, MappingNode):
        return
    key_node = get(node, "key")
    key = scalar_text(key_node)
    if not key:
        if key_node is not None or not schema:
            checker.add("DRA354", key_node or node, f"{label}: a taint needs a key")
    else:
        problem = qualified_key_problem(key)
        if problem:
            checker.add("DRA354", key_node or node, f"{label}: taint key {key!r}: {problem}")
    value_node = get(node, "value")
    value = scalar_text(value_node)
    problem = label_value_problem(value) if value else None
    if problem and value_node is not None:
        checker.add("DRA354", value_node, f"{label}: taint value {value!r} {problem}")
    effect = get(node, "effect")
    if effect is not None or not schema:
        check_effect(checker, effect, node, label, "taint")


def capacity_requests(checker: Checker, node: Node, label: str) -> None:
    for name, key_node, value in entries(get(node, "requests")):
        problem = qualified_name_problem(name)
        if problem:
            checker.add("DRA355", key_node, f"{label}: capacity request {name!r} {problem}")
        data = trees.to_data(value)
        typed = isinstance(data, str | int | float) and not isinstance(data, bool)
        if typed and quantity(value) is None:  # other types: the schema says so
            checker.add(
                "DRA355",
                value,
                f"{label}: capacity request {name!r} is not a quantity "
                f"({scalar_text(value) or trees.to_data(value)!r})",
                "for example 10Gi, 500m or 2",
            )


def device_class(checker: Checker, spec: Node | None, owner: str) -> bool:
    """Whether the class's extendedResourceName is to be checked further."""
    return gated(
        checker,
        get(spec, "extendedResourceName"),
        "DRAExtendedResource",
        owner,
        "extendedResourceName",
    )


SKIP_OPERATIONS = ("NodePrepareResources", "NodeUnprepareResources", "*")


def skip_node_operations(checker: Checker, node: Node, owner: str) -> None:
    """A ResourceSlice's skipNodeOperations (k8s.io/api resource/v1 SkipNodeOperation):
    a set of known operations; NodePrepareResources only with NodeUnprepareResources."""
    seen: set[str] = set()
    for item in items(node):
        text = scalar_text(item)
        if text not in SKIP_OPERATIONS:
            checker.add(
                "DRA357",
                item,
                f"{owner}: skipNodeOperations entry {text!r} is not "
                + ", ".join(SKIP_OPERATIONS[:-1])
                + f" or {SKIP_OPERATIONS[-1]!r}",
            )
        elif text in seen:
            checker.add("DRA313", item, f"{owner}: skipNodeOperations lists {text!r} twice")
        seen.add(text)
    if "NodePrepareResources" in seen and not seen & {"NodeUnprepareResources", "*"}:
        checker.add(
            "DRA357",
            node,
            f"{owner}: skipNodeOperations skips NodePrepareResources but not "
            "NodeUnprepareResources",
            "list NodeUnprepareResources too, or '*' for all node operations",
        )


RENAMED_ALLOCATABLE = 37  # nodeAllocatableResourceMappings -> nodeAllocatableResources


def node_allocatable(checker: Checker, body: Node | None, label: str, capacities: set[str]) -> None:
    """A device's node-allocatable resources (KEP-5517, gate DRANodeAllocatableResources):
    ``nodeAllocatableResourceMappings`` in 1.36, renamed ``nodeAllocatableResources`` in
    1.37 with a new shape (k8s.io/api resource/v1 NodeAllocatableResource)."""
    gate = "DRANodeAllocatableResources"
    if checker.gates.minor < RENAMED_ALLOCATABLE:
        old = get(body, "nodeAllocatableResourceMappings")
        gated(checker, old, gate, label, "nodeAllocatableResourceMappings")
        return
    # from 1.37 the old name is an unknown field of the strict schema (DRA301, which
    # suggests nodeAllocatableResources)
    resources = get(body, "nodeAllocatableResources")
    if not gated(checker, resources, gate, label, "nodeAllocatableResources"):
        return
    for name, key_node, value in entries(resources):
        where = f"{label}: nodeAllocatableResources {name!r}"
        if "/" in name and not extended_resource_problem(name):
            checker.add(
                "DRA357",
                key_node,
                f"{where} is an extended resource name; only node-allocatable resources "
                "(cpu, memory, ephemeral-storage, hugepages-*) may be mapped",
            )
        mapping, overhead = get(value, "mapping"), get(value, "overhead")
        if mapping is None and overhead is None:
            checker.add("DRA357", key_node, f"{where} needs a mapping or an overhead")
        for part in (mapping, overhead):
            for field_name, field_key, amount in entries(part):
                if field_name != "capacityKey" and quantity(amount) is None:
                    checker.add(
                        "DRA357",
                        amount or field_key,
                        f"{where}: {field_name} {scalar_text(amount)!r} is not a quantity",
                    )
        if mapping is None:
            continue
        key = get(mapping, "capacityKey")
        multiplier = get(mapping, "capacityMultiplier")
        if (key is None) != (multiplier is None):
            checker.add(
                "DRA357",
                key or multiplier or mapping,
                f"{where}: mapping needs capacityKey and capacityMultiplier together",
            )
        if get(mapping, "deviceMultiplier") is not None and (key or multiplier) is not None:
            checker.add(
                "DRA357",
                get(mapping, "deviceMultiplier") or mapping,
                f"{where}: mapping sets deviceMultiplier and capacityKey; they exclude each other",
            )
        if key is not None and scalar_text(key) not in capacities:
            checker.add(
                "DRA357",
                key,
                f"{where}: capacityKey {scalar_text(key)!r} is not a capacity of the device",
            )
