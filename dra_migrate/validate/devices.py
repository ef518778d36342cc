"""The rules of the device objects: ResourceSlices (driver, pool, node selection,
shared counters, devices with their attributes, capacities, request policies,
counter consumption, taints and binding conditions) and DeviceTaintRules, as the
API server checks them (``pkg/apis/resource/validation/validation.go``)."""

from __future__ import annotations

import re
from collections.abc import Callable

from yaml.nodes import MappingNode, Node

from dra_migrate.k8s.names import DNS_LABEL, DNS_SUBDOMAIN, qualified_key_problem
from dra_migrate.k8s.quantity import rounded_up, whole_milli
from dra_migrate.k8s.versions import GATES
from dra_migrate.manifests import trees
from dra_migrate.manifests.trees import entries, get, items
from dra_migrate.validate.checker import Checker
from dra_migrate.validate.gated_fields import (
    check_taint,
    compatibility_groups,
    gated,
    node_allocatable,
    skip_node_operations,
)
from dra_migrate.validate.values import (
    class_name_problem,
    device_name_problem,
    driver_name_problem,
    fully_qualified_name_problem,
    label_value_problem,
    node_name_problem,
    pool_name_problem,
    qualified_name_problem,
    quantity,
    scalar_text,
)

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from fractions import Fraction

MAX_TAINTS = 16  # resource.DeviceTaintsMaxLength
MAX_DEVICES = 128  # resource.ResourceSliceMaxDevices
MAX_DEVICES_ADVANCED = 64  # ...with taints, counter consumption or list attributes
MAX_ATTRIBUTES_AND_CAPACITIES = 32  # per device
MAX_ATTRIBUTE_VALUE = 64  # string and version attribute values
MAX_COUNTER_SETS = 8  # sharedCounters of a slice
MAX_COUNTERS = 32  # counters of a set, or of one consumption
MAX_CONSUMPTIONS = 2  # consumesCounters of a device
MAX_CONDITIONS = 4  # bindingConditions, bindingFailureConditions
MAX_VALID_VALUES = 10  # requestPolicy.validValues

_NUMERIC = r"(0|[1-9]\d*)"
_PRERELEASE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(
    rf"{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}(-{_PRERELEASE}(\.{_PRERELEASE})*)?(\+{_BUILD}(\.{_BUILD})*)?"
)


def named(
    checker: Checker, node: Node | None, check: Callable[[str], str | None], code: str, what: str
) -> None:
    """A name field (when set) by ``check``, the API server's rule for it."""
    if node is None or trees.to_data(node) is None:
        return
    problem = check(scalar_text(node))
    if problem:
        checker.add(code, node, f"{what} {scalar_text(node)!r} {problem}")


def resource_slice(checker: Checker, root: Node, owner: str, shape: str) -> None:
    spec = get(root, "spec")
    if not isinstance(spec, MappingNode):
        return
    named(checker, get(spec, "driver"), driver_name_problem, "DRA357", f"{owner}: driver")
    pool(checker, get(spec, "pool"), owner)
    per_device = node_selection(checker, spec, owner)
    counters = get(spec, "sharedCounters")
    sets: dict[str, set[str]] = {}
    if gated(checker, counters, "DRAPartitionableDevices", owner, "sharedCounters"):
        sets = counter_sets(checker, counters, owner)
        if get(spec, "devices") is not None and checker.gates.minor >= 35:
            checker.add(
                "DRA356",
                counters,
                f"{owner}: only one of sharedCounters and devices may be set: from "
                "Kubernetes 1.35 shared counters live in a ResourceSlice of their own",
                "move the devices to another ResourceSlice of the same pool",
            )
    partition_type = get(spec, "partitionTypeAttribute")
    if gated(
        checker, partition_type, "DRAPartitionableDevicesType", owner, "partitionTypeAttribute"
    ):
        named(
            checker,
            partition_type,
            fully_qualified_name_problem,
            "DRA357",
            f"{owner}: partitionTypeAttribute",
        )
    skip = get(spec, "skipNodeOperations")
    if gated(checker, skip, "DRAOptionalNodeOperations", owner, "skipNodeOperations"):
        skip_node_operations(checker, skip, owner)
    devices_node = get(spec, "devices")
    devices = items(devices_node)
    bodies = [_device_body(d, shape) for d in devices]
    advanced = any(
        get(b, "taints") is not None
        or get(b, "consumesCounters") is not None
        or any(
            get(v, k) is not None
            for _n, _k, v in entries(get(b, "attributes"))
            for k in ("bools", "ints", "strings", "versions")
        )
        for b in bodies
    )
    if devices_node is not None:
        maximum = MAX_DEVICES_ADVANCED if advanced else MAX_DEVICES
        if len(devices) > maximum:
            checker.add(
                "DRA313",
                devices_node,
                f"{owner} has {len(devices)} devices; at most {maximum} are allowed"
                + (
                    " when devices have taints, consume counters or list attributes"
                    if advanced
                    else ""
                ),
            )
    seen: set[str] = set()
    for device, body in zip(devices, bodies, strict=True):
        if not isinstance(device, MappingNode):
            continue
        name = checker.unique_label(get(device, "name"), seen, f"{owner}: device name")
        check_device(checker, device, body, f"{owner} device {name!r}", per_device, sets)


def _device_body(device: Node, shape: str) -> Node | None:
    """Where a device's fields are: v1beta1 nests them under ``basic``."""
    if shape == "v1beta1":
        return get(device, "basic")
    return device


def pool(checker: Checker, pool: Node | None, owner: str) -> None:
    if not isinstance(pool, MappingNode):
        return
    named(checker, get(pool, "name"), pool_name_problem, "DRA357", f"{owner}: pool name")
    count = get(pool, "resourceSliceCount")
    value = trees.to_data(count) if count is not None else None
    positive = not isinstance(value, int) or isinstance(value, bool) or value > 0
    if count is not None and not positive:
        checker.add("DRA357", count, f"{owner}: pool resourceSliceCount must be above 0")
    generation = get(pool, "generation")
    value = trees.to_data(generation) if generation is not None else None
    if generation is not None and isinstance(value, int) and value < 0:
        checker.add("DRA357", generation, f"{owner}: pool generation must not be negative")


def node_selection(checker: Checker, spec: Node, owner: str) -> bool:
    """Exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection; whether
    the devices choose their nodes."""
    chosen: list[str] = []
    node_name = get(spec, "nodeName")
    if node_name is not None and trees.to_data(node_name) is not None:
        text = scalar_text(node_name)
        if not text:
            checker.add("DRA357", node_name, f"{owner}: nodeName must be unset or not empty")
        else:
            chosen.append("nodeName")
            if len(text) > 253 or not DNS_SUBDOMAIN.fullmatch(text):
                checker.add(
                    "DRA357",
                    node_name,
                    f"{owner}: nodeName {text!r} is not a lower-case DNS subdomain",
                )
    selector = get(spec, "nodeSelector")
    if selector is not None and trees.to_data(selector) is not None:
        chosen.append("nodeSelector")
        node_selector(checker, selector, f"{owner}: nodeSelector")
        terms = get(selector, "nodeSelectorTerms")
        if terms is not None and len(items(terms)) != 1:  # missing: the schema's DRA301
            checker.add(
                "DRA357",
                terms or selector,
                f"{owner}: nodeSelector must have exactly one node selector term "
                f"(it has {len(items(terms))})",
            )
    for key in ("allNodes", "perDeviceNodeSelection"):
        flag = get(spec, key)
        value = trees.to_data(flag) if flag is not None else None
        if flag is None or value is None:
            continue
        if key == "perDeviceNodeSelection" and not gated(
            checker, flag, "DRAPartitionableDevices", owner, key
        ):
            continue
        if value is True:
            chosen.append(key)
        else:
            checker.add("DRA357", flag, f"{owner}: {key} must be unset or true")
    if len(chosen) != 1:
        checker.add(
            "DRA357",
            spec,
            f"{owner}: exactly one of nodeName, nodeSelector, allNodes and "
            "perDeviceNodeSelection must be set"
            + (f" ({', '.join(chosen)} are)" if chosen else " (none is)"),
        )
    return chosen == ["perDeviceNodeSelection"]


def node_selector(checker: Checker, selector: Node, label: str) -> None:
    """The requirements of a node selector, as core validation checks them."""
    for term in items(get(selector, "nodeSelectorTerms")):
        for requirement in items(get(term, "matchExpressions")):
            check_requirement(checker, requirement, label, field=False)
        for requirement in items(get(term, "matchFields")):
            check_requirement(checker, requirement, label, field=True)


def check_requirement(checker: Checker, node: Node, label: str, field: bool) -> None:
    key = scalar_text(get(node, "key"))
    operator = scalar_text(get(node, "operator"))
    values_node = get(node, "values")
    values = [scalar_text(v) for v in items(values_node)]
    where = get(node, "values") or node
    problem: str | None = None
    if field and key != "metadata.name":
        problem = f"matchFields key {key!r} is not metadata.name"
    elif not field and qualified_key_problem(key):
        problem = f"key {key!r}: {qualified_key_problem(key)}"
    elif operator in ("In", "NotIn"):
        if not values or (field and len(values) != 1):
            problem = f"operator {operator} needs " + ("one value" if field else "values")
    elif operator in ("Exists", "DoesNotExist") and not field:
        if values:
            problem = f"operator {operator} takes no values"
    elif operator in ("Gt", "Lt") and not field:
        if len(values) != 1 or not re.fullmatch(r"[+-]?\d+", values[0]):
            problem = f"operator {operator} needs one integer value"
    else:
        problem = f"operator {operator!r} is not supported"
        where = get(node, "operator") or node
    if problem is None:
        check = node_name_problem if field else label_value_problem
        bad = [v for v in values if check(v)]
        if bad:
            problem = f"value {bad[0]!r} {check(bad[0])}"
    if problem:
        checker.add("DRA357", where, f"{label}: {problem}")


def counter_sets(checker: Checker, node: Node, owner: str) -> dict[str, set[str]]:
    sets: dict[str, set[str]] = {}
    counter_sets = items(node)
    checker.limit(node, len(counter_sets), MAX_COUNTER_SETS, owner, "counter sets")
    for counter_set in counter_sets:
        name_node = get(counter_set, "name")
        name = scalar_text(name_node)
        label = f"{owner} counter set {name!r}"
        if not name:
            checker.add("DRA356", name_node or counter_set, f"{owner}: a counter set needs a name")
        elif not DNS_LABEL.fullmatch(name) or len(name) > 63:
            checker.add("DRA356", name_node or counter_set, f"{label}: name is not a DNS label")
        elif name in sets:
            checker.add(
                "DRA313",
                name_node or counter_set,
                f"{owner}: counter set {name!r} is defined twice",
            )
        sets[name] = check_counters(checker, get(counter_set, "counters"), counter_set, label)
    return sets


def check_counters(checker: Checker, node: Node | None, parent: Node, label: str) -> set[str]:
    names = [(n, k, v) for n, k, v in entries(node)]
    if not names:
        checker.add("DRA356", node or parent, f"{label}: needs at least one counter")
        return set()
    if len(names) > MAX_COUNTERS:
        checker.add(
            "DRA313",
            node or parent,
            f"{label} has {len(names)} counters; at most {MAX_COUNTERS}",
        )
        return {n for n, _k, _v in names}
    for name, key_node, value in names:
        if len(name) > 63 or not DNS_LABEL.fullmatch(name):
            checker.add("DRA356", key_node, f"{label}: counter name {name!r} is not a DNS label")
        amount = get(value, "value")
        if amount is not None and quantity(amount) is None:
            checker.add(
                "DRA356",
                amount,
                f"{label}: counter {name!r} value {scalar_text(amount)!r} is not a quantity",
            )
    return {n for n, _k, _v in names}


def check_device(
    checker: Checker,
    device: MappingNode,
    body: Node | None,
    label: str,
    per_device: bool,
    sets: dict[str, set[str]],
) -> None:
    attributes = list(entries(get(body, "attributes")))
    capacities = list(entries(get(body, "capacity")))
    if len(attributes) + len(capacities) > MAX_ATTRIBUTES_AND_CAPACITIES:
        checker.add(
            "DRA357",
            device,
            f"{label} has {len(attributes) + len(capacities)} attributes and capacities; "
            f"at most {MAX_ATTRIBUTES_AND_CAPACITIES}",
        )
    for name, key_node, value in attributes:
        attribute(checker, name, key_node, value, label)
    multiple = get(body, "allowMultipleAllocations")
    shared = (
        gated(checker, multiple, "DRAConsumableCapacity", label, "allowMultipleAllocations")
        and trees.to_data(multiple) is True
    )
    for name, key_node, value in capacities:
        problem = qualified_name_problem(name)
        if problem:
            checker.add("DRA357", key_node, f"{label}: capacity name {name!r} {problem}")
        amount_node = get(value, "value")
        amount = quantity(amount_node)
        if amount_node is not None and amount is None:
            checker.add(
                "DRA357",
                amount_node,
                f"{label}: capacity {name!r} value {scalar_text(amount_node)!r} is not a quantity",
            )
        policy = get(value, "requestPolicy")
        if not gated(checker, policy, "DRAConsumableCapacity", label, "capacity requestPolicy"):
            continue
        if not shared:
            checker.add(
                "DRA355",
                policy,
                f"{label}: capacity {name!r} has a requestPolicy, which needs "
                "allowMultipleAllocations: true on the device",
            )
        elif amount is not None:
            request_policy(checker, policy, amount, f"{label} capacity {name!r}")
    taints = get(body, "taints")
    if gated(checker, taints, "DRADeviceTaints", label, "taints"):
        checker.limit(taints, len(items(taints)), MAX_TAINTS, label, "taints")
        for taint in items(taints):
            check_taint(checker, taint, label)
    consumes = get(body, "consumesCounters")
    if gated(checker, consumes, "DRAPartitionableDevices", label, "consumesCounters"):
        consumptions(checker, consumes, label, sets)
    device_nodes(checker, device, body, label, per_device)
    binding = [
        get(body, k) for k in ("bindingConditions", "bindingFailureConditions", "bindsToNode")
    ]
    if (
        any(
            gated(checker, node, "DRADeviceBindingConditions", label, key)
            for node, key in zip(
                binding,
                ("bindingConditions", "bindingFailureConditions", "bindsToNode"),
                strict=True,
            )
        )
        and body is not None
    ):
        binding_conditions(checker, body, label)
    node_allocatable(checker, body, label, {n for n, _k, _v in capacities})


def attribute(checker: Checker, name: str, key_node: Node, value: Node, label: str) -> None:
    problem = qualified_name_problem(name)
    if problem:
        checker.add("DRA357", key_node, f"{label}: attribute name {name!r} {problem}")
    kinds = [k for k, _kn, _v in entries(value) if k in ("bool", "int", "string", "version")]
    lists = [k for k, _kn, _v in entries(value) if k in ("bools", "ints", "strings", "versions")]
    for kind in lists:
        node = get(value, kind)
        if gated(checker, node, "DRAListTypeAttributes", f"{label} attribute {name!r}", kind):
            kinds.append(kind)
            if not items(node):
                checker.add(
                    "DRA357",
                    node or value,
                    f"{label}: attribute {name!r} {kind} must not be empty",
                )
    if len(kinds) != 1:
        checker.add(
            "DRA357",
            value if kinds else key_node,
            f"{label}: attribute {name!r} must have exactly one value "
            + (f"(it has {', '.join(kinds)})" if kinds else "(bool, int, string or version)"),
        )
    for kind in ("string", "version", "strings", "versions"):
        node = get(value, kind)
        values = items(node) if kind.endswith("s") else ([node] if node is not None else [])
        for item in values:
            text = scalar_text(item)
            if len(text) > MAX_ATTRIBUTE_VALUE:
                checker.add(
                    "DRA357",
                    item,
                    f"{label}: attribute {name!r} value is {len(text)} characters; at most "
                    f"{MAX_ATTRIBUTE_VALUE}",
                )
            if kind.startswith("version") and not _SEMVER.fullmatch(text):
                checker.add(
                    "DRA357",
                    item,
                    f"{label}: attribute {name!r} version {text!r} is not a semantic "
                    "version (semver.org 2.0.0, like 1.2.3)",
                )


def request_policy(checker: Checker, policy: Node, capacity: Fraction, label: str) -> None:
    default_node = get(policy, "default")
    default = quantity(default_node)
    values_node = get(policy, "validValues")
    range_node = get(policy, "validRange")
    values = items(values_node)
    if values and range_node is not None:
        checker.add(
            "DRA355",
            policy,
            f"{label}: requestPolicy sets both validValues and validRange; at most one",
        )
        return
    if (values or range_node is not None) and default_node is None:
        checker.add(
            "DRA355",
            policy,
            f"{label}: requestPolicy needs a default with "
            + ("validValues" if values else "validRange"),
        )
        return
    if values:
        if len(values) > MAX_VALID_VALUES:
            checker.add(
                "DRA313",
                values_node or policy,
                f"{label} has {len(values)} validValues; at most {MAX_VALID_VALUES}",
            )
            return
        parsed = [quantity(v) for v in values]
        seen: set[Fraction] = set()
        for i, (node, amount) in enumerate(zip(values, parsed, strict=True)):
            if amount is None:
                continue
            if amount > capacity:
                checker.add(
                    "DRA355",
                    node,
                    f"{label}: validValues option {scalar_text(node)} is more than the capacity",
                )
            if amount in seen:
                checker.add("DRA313", node, f"{label}: validValues lists {scalar_text(node)} twice")
            seen.add(amount)
            previous = parsed[i - 1] if i else None
            if previous is not None and previous > amount:
                checker.add(
                    "DRA355", node, f"{label}: validValues must be sorted in ascending order"
                )
        if default is not None and default not in seen:
            checker.add(
                "DRA355",
                default_node or policy,
                f"{label}: the default {scalar_text(default_node)} is not one of validValues",
            )
        return
    if range_node is None:
        return
    low_node, high_node, step_node = (get(range_node, k) for k in ("min", "max", "step"))
    low, high, step = (quantity(n) for n in (low_node, high_node, step_node))
    if low_node is None:
        checker.add("DRA355", range_node, f"{label}: validRange needs min")
        return
    if low is None:
        return
    problems: list[tuple[Node, str]] = []
    if low > capacity:
        problems.append((low_node, "min is more than the capacity"))
    if default is not None and default < low:
        problems.append((default_node or policy, "default is less than min"))
    if high is not None and high_node is not None:
        if low > high:
            problems.append((high_node, "min is more than max"))
        if high > capacity:
            problems.append((high_node, "max is more than the capacity"))
        if default is not None and default > high:
            problems.append((default_node or policy, "default is more than max"))
    # Fractional min, max or step (DRAFractionalCapacityRange, on from 1.37): milli-unit
    # arithmetic; with the gate off each value is rounded up to a whole unit before the
    # step alignment is checked (pkg/apis/resource/validation TestValidateDeviceCapacity).
    fractional = any(v is not None and v.denominator != 1 for v in (low, high, step))
    milli = fractional and _fractional_range(checker, range_node, label)
    if milli:
        unrepresentable = [
            (node, what)
            for node, value, what in (
                (default_node, default, "default"),
                (low_node, low, "min"),
                (high_node, high, "max"),
                (step_node, step, "step"),
            )
            if node is not None and value is not None and not whole_milli(value)
        ]
        for node, what in unrepresentable:
            problems.append(
                (node, f"{what} {scalar_text(node)} cannot be represented in milli-units")
            )
        if unrepresentable:
            step = None  # no alignment to check in values the API server cannot hold
    if step is not None and step_node is not None:
        if step <= 0:
            problems.append((step_node, "step must be above 0"))
        else:
            if low + step > capacity:
                problems.append((step_node, "one step from min is more than the capacity"))
            whole = not milli  # integer arithmetic: each value rounded up to a whole unit
            base, stride = (rounded_up(low), rounded_up(step)) if whole else (low, step)
            for value, what in ((default, "default"), (high, "max")):
                if value is None:
                    continue
                if ((rounded_up(value) if whole else value) - base) % stride != 0:
                    problems.append((step_node, f"{what} is not min plus a multiple of step"))
    for node, message in problems:
        checker.add("DRA355", node, f"{label}: requestPolicy validRange: {message}")


def _fractional_range(checker: Checker, range_node: Node, label: str) -> bool:
    """Whether a validRange with fractional values gets milli-unit arithmetic; when the
    gate is off it does not, and a warning says each value is rounded up."""
    gate = "DRAFractionalCapacityRange"
    if checker.gates.enabled(gate):
        return True
    checker.add(
        "DRA361",
        range_node,
        f"{label}: requestPolicy validRange has fractional values, which need the feature "
        f"gate {gate}; "
        + (
            checker.gates.why_off(gate)
            if checker.gates.exists(gate)
            else f"Kubernetes 1.{checker.gates.minor} does not have it (beta and on from "
            f"1.{GATES[gate].alpha})"
        )
        + ": the API server keeps them, but every value is rounded up to a whole unit",
        checker.gates.how_to_enable(gate),
    )
    return False


def consumptions(checker: Checker, node: Node, label: str, sets: dict[str, set[str]]) -> None:
    consumptions = items(node)
    checker.limit(node, len(consumptions), MAX_CONSUMPTIONS, label, "counter consumptions")
    seen: set[str] = set()
    for consumption in consumptions:
        set_node = get(consumption, "counterSet")
        name = scalar_text(set_node)
        where = f"{label} consumesCounters {name!r}"
        if not name:
            checker.add(
                "DRA356",
                set_node or consumption,
                f"{label}: consumesCounters needs a counterSet",
            )
            continue
        if len(name) > 63 or not DNS_LABEL.fullmatch(name):
            checker.add(
                "DRA356", set_node or consumption, f"{where}: counterSet is not a DNS label"
            )
        if name in seen:
            checker.add(
                "DRA313",
                set_node or consumption,
                f"{label}: consumes counter set {name!r} twice",
            )
        seen.add(name)
        counters = check_counters(checker, get(consumption, "counters"), consumption, where)
        groups = get(consumption, "compatibilityGroups")
        if gated(checker, groups, "DRADeviceCompatibilityGroups", where, "compatibilityGroups"):
            compatibility_groups(checker, groups, where)
        if checker.gates.minor <= 34 and sets is not None:
            # until 1.34 the counter sets are in the device's own slice
            if name not in sets:
                checker.add(
                    "DRA356",
                    set_node or consumption,
                    f"{where}: the ResourceSlice has no counter set {name!r} in sharedCounters",
                )
            else:
                for counter in sorted(counters - sets[name]):
                    checker.add(
                        "DRA356",
                        get(consumption, "counters") or consumption,
                        f"{where}: counter set {name!r} has no counter {counter!r}",
                    )


def device_nodes(
    checker: Checker, device: MappingNode, body: Node | None, label: str, per_device: bool
) -> None:
    keys = [k for k in ("nodeName", "nodeSelector", "allNodes") if get(body, k) is not None]
    if not per_device:
        if keys:
            checker.add(
                "DRA357",
                get(body, keys[0]) or device,
                f"{label}: {', '.join(keys)} may only be set when the ResourceSlice has "
                "perDeviceNodeSelection: true",
            )
        return
    chosen = []
    for key in keys:
        node = get(body, key)
        value = trees.to_data(node)
        if key == "allNodes" and value is not True:
            checker.add("DRA357", node or device, f"{label}: allNodes must be unset or true")
            continue
        if key == "nodeName" and not scalar_text(node):
            checker.add("DRA357", node or device, f"{label}: nodeName must not be empty")
            continue
        if key == "nodeSelector" and node is not None:
            node_selector(checker, node, f"{label}: nodeSelector")
        chosen.append(key)
    if len(chosen) != 1 and not (len(keys) > len(chosen) and not chosen):
        checker.add(
            "DRA357",
            device,
            f"{label}: exactly one of nodeName, nodeSelector and allNodes is needed "
            "with perDeviceNodeSelection",
        )


def binding_conditions(checker: Checker, body: Node, label: str) -> None:
    lists: dict[str, list[tuple[Node, str]]] = {}
    for key in ("bindingConditions", "bindingFailureConditions"):
        node = get(body, key)
        conditions = [(n, scalar_text(n)) for n in items(node)]
        lists[key] = conditions
        if node is not None and len(conditions) > MAX_CONDITIONS:
            checker.add(
                "DRA359", node, f"{label} has {len(conditions)} {key}; at most {MAX_CONDITIONS}"
            )
            continue
        seen: set[str] = set()
        for item, text in conditions:
            problem = qualified_key_problem(text)
            if problem:
                checker.add("DRA359", item, f"{label}: {key} entry {text!r}: {problem}")
            if text in seen:
                checker.add("DRA359", item, f"{label}: {key} lists {text!r} twice")
            seen.add(text)
    success = {t for _n, t in lists["bindingConditions"]}
    for item, text in lists["bindingFailureConditions"]:
        if text in success:
            checker.add(
                "DRA359",
                item,
                f"{label}: {text!r} is in both bindingConditions and bindingFailureConditions",
            )
    for have, need in (
        ("bindingConditions", "bindingFailureConditions"),
        ("bindingFailureConditions", "bindingConditions"),
    ):
        if lists[have] and not lists[need]:
            checker.add(
                "DRA359",
                get(body, have) or body,
                f"{label}: {have} need {need} as well",
            )


def device_taint_rule(
    checker: Checker, root: Node, owner: str, version: str, schema: bool = False
) -> None:
    """A DeviceTaintRule: the gates that serve the kind, its selector and its taint;
    ``schema``: its strict schema was checked (which requires spec, taint, key, effect)."""
    kind_node = get(root, "kind") or root
    gates = ["DRADeviceTaints"] + (["DRADeviceTaintRules"] if checker.gates.minor >= 35 else [])
    for gate in gates:
        if not gated(checker, kind_node, gate, owner, "DeviceTaintRules", dropped=False):
            return
    spec = get(root, "spec")
    if not isinstance(spec, MappingNode):
        if not schema:
            checker.add("DRA358", root, f"{owner} needs a spec with a taint")
        return
    selector = get(spec, "deviceSelector")
    for key, check in (
        ("deviceClassName", class_name_problem),  # v1alpha3 only, with selectors
        ("driver", driver_name_problem),
        ("pool", pool_name_problem),
        ("device", device_name_problem),
    ):
        named(checker, get(selector, key), check, "DRA358", f"{owner}: deviceSelector {key}")
    taint = get(spec, "taint")
    if not isinstance(taint, MappingNode):
        if not schema:
            checker.add("DRA358", taint or spec, f"{owner}: spec.taint is required")
        return
    check_taint(checker, taint, owner, schema=schema)
