"""Validate, feature-gated fields and device objects: the rules the API server applies to
the fields behind DRA feature gates, and to ResourceSlices and DeviceTaintRules.

``validate._FileChecker`` calls these while it walks claims, classes and slices. A
gated field whose gate is off for ``--kube-version`` (and ``--feature-gates``) is
DRA353 and not checked further: the API server drops it on create. A field the
release does not have at all is left to the strict schema (DRA301). The rules follow
kubernetes/kubernetes ``pkg/apis/resource/validation/validation.go`` and the
declarative validation tags of the ``resource.k8s.io`` types.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from yaml.nodes import MappingNode, Node, ScalarNode

from dra_migrate.k8s.names import (
    C_IDENTIFIER,
    DNS_LABEL,
    DNS_SUBDOMAIN,
    LABEL_VALUE,
    qualified_key_problem,
)
from dra_migrate.k8s.quantity import parse_quantity
from dra_migrate.k8s.versions import GateState
from dra_migrate.manifests import trees
from dra_migrate.manifests.trees import entries, get, items, scalar

TYPE_CHECKING = False  # typing is not imported at run time (start-up, record.py)
if TYPE_CHECKING:
    from fractions import Fraction
    from typing import Protocol

    class Checker(Protocol):
        """What ``validate._FileChecker`` offers these rules."""

        def add(self, code: str, node: Node, message: str, hint: str = "") -> None: ...

        def name(self, node: Node, subdomain: bool, what: str) -> None: ...

        def limit(self, node: Node, size: int, maximum: int, owner: str, what: str) -> None: ...

        def unique_label(self, node: Node | None, seen: set[str], what: str) -> str: ...

        def metadata(self, meta: Node | None, owner: str) -> None: ...


MAX_TOLERATIONS = 16  # resource.DeviceTolerationsMaxLength
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
MAX_POOL_NAME = 253

_NUMERIC = r"(0|[1-9]\d*)"
_PRERELEASE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(
    rf"{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}(-{_PRERELEASE}(\.{_PRERELEASE})*)?(\+{_BUILD}(\.{_BUILD})*)?"
)
_TAINT_EFFECTS = ("NoSchedule", "NoExecute")
_NONE_EFFECT_FROM = 35  # DeviceTaintEffectNone, with DeviceTaintRule's v1beta2 rework


# --- names and values, as the API server checks them ------------------------------------


def driver_name_problem(name: str) -> str | None:
    """A driver name (CSI driver rules): a DNS subdomain of at most 63 characters, any case."""
    if not name:
        return "is empty"
    if len(name) > 63 or not DNS_SUBDOMAIN.fullmatch(name.lower()):
        return "is not a DNS subdomain of at most 63 characters"
    return None


def qualified_name_problem(name: str) -> str | None:
    """An attribute or capacity name: a C identifier of at most 64 characters, optionally
    after a domain (a driver name) and a slash."""
    parts = name.split("/")
    if len(parts) > 2:
        return "must not contain more than one slash"
    if len(parts) == 2:
        domain, ident = parts
        if driver_name_problem(domain):
            return "has a domain that is not a DNS subdomain of at most 63 characters"
    else:
        ident = parts[0]
    if len(ident) > 64 or not C_IDENTIFIER.fullmatch(ident):
        return "has a name that is not a C identifier of at most 64 characters"
    return None


def label_value_problem(value: str) -> str | None:
    if len(value) > 63 or not LABEL_VALUE.fullmatch(value):
        return (
            "is not empty or at most 63 alphanumeric characters, '-', '_' or '.', starting "
            "and ending with an alphanumeric character"
        )
    return None


def pool_name_problem(name: str) -> str | None:
    if not name:
        return "is empty"
    if len(name) > MAX_POOL_NAME:
        return f"is longer than {MAX_POOL_NAME} characters"
    if any(len(p) > 253 or not DNS_SUBDOMAIN.fullmatch(p) for p in name.split("/")):
        return "is not DNS subdomains separated by slashes"
    return None


def quantity(node: Node | None) -> Fraction | None:
    """A quantity as the API server decodes it (a string or a number), None if not one."""
    if not isinstance(node, ScalarNode):
        return None
    value = trees.to_data(node)
    if isinstance(value, bool) or value is None:
        return None
    text = (
        value if isinstance(value, str) else repr(value) if isinstance(value, float) else str(value)
    )
    if isinstance(value, float) and "e" in text:
        text = text.replace("e+", "e")
    return parse_quantity(text)


def _text(node: Node | None) -> str:
    return scalar(node) or ""


# --- the rules ---------------------------------------------------------------------------


class DeviceFields:
    """The rules of gated fields and device objects, reporting through a ``Checker``."""

    def __init__(self, checker: Checker, gates: GateState) -> None:
        self.checker = checker
        self.gates = gates
        self.add: Callable[..., None] = checker.add

    # gates

    def gated(
        self, node: Node | None, gate: str, owner: str, field: str, dropped: bool = True
    ) -> bool:
        """Whether ``node`` (a field behind ``gate``) is present and its gate is on.

        A present field whose gate is off is DRA353. One the release does not have
        at all is the schema's business (DRA301, unknown field).
        """
        if node is None:
            return False
        if self.gates.enabled(gate):
            return True
        if self.gates.exists(gate) or dict(self.gates.overrides).get(gate) is False:
            if not dropped:
                effect = "the API server does not serve them"
            elif gate == "DRAPrioritizedList":
                effect = "the API server drops the field and rejects the request without it"
            else:
                effect = "the API server drops the field: what is applied is not what is written"
            self.add(
                "DRA353",
                node,
                f"{owner}: {field} needs the feature gate {gate}; {self.gates.why_off(gate)}: "
                f"{effect}",
                self.gates.how_to_enable(gate),
            )
        return False

    def named(
        self, node: Node | None, check: Callable[[str], str | None], code: str, what: str
    ) -> None:
        """A name field (when set) by ``check``, the API server's rule for it."""
        if node is None or trees.to_data(node) is None:
            return
        problem = check(_text(node))
        if problem:
            self.add(code, node, f"{what} {_text(node)!r} {problem}")

    # device requests

    def request(self, body: Node, label: str, subrequest: bool) -> None:
        """The gated fields of an exact request (v1 ``exactly``, v1beta1 request) or a subrequest."""
        tolerations = get(body, "tolerations")
        if self.gated(tolerations, "DRADeviceTaints", label, "tolerations"):
            self.tolerations(tolerations, label)
        capacity = get(body, "capacity")
        if self.gated(capacity, "DRAConsumableCapacity", label, "capacity"):
            self.capacity_requests(capacity, label)
        if not subrequest:
            self.gated(get(body, "adminAccess"), "DRAAdminAccess", label, "adminAccess")
        self.gated(
            get(body, "derivedAttributes"), "DRADerivedAttributes", label, "derivedAttributes"
        )

    def tolerations(self, node: Node, label: str) -> None:
        tolerations = items(node)
        self.checker.limit(node, len(tolerations), MAX_TOLERATIONS, label, "tolerations")
        for toleration in tolerations:
            if not isinstance(toleration, MappingNode):
                continue
            key_node = get(toleration, "key")
            key = _text(key_node)
            if key_node is not None and key:
                problem = qualified_key_problem(key)
                if problem:
                    self.add("DRA354", key_node, f"{label}: toleration key {key!r}: {problem}")
            operator_node = get(toleration, "operator")
            operator = _text(operator_node) or "Equal"  # defaulted by the API server
            value_node = get(toleration, "value")
            value = _text(value_node)
            if operator == "Exists":
                if value:
                    self.add(
                        "DRA354",
                        value_node or toleration,
                        f"{label}: a toleration with operator Exists must not have a value "
                        f"({value!r})",
                        "drop the value, or use operator Equal",
                    )
            elif operator == "Equal":
                problem = label_value_problem(value)
                if problem:
                    self.add(
                        "DRA354",
                        value_node or toleration,
                        f"{label}: toleration value {value!r} {problem}",
                    )
            else:
                self.add(
                    "DRA354",
                    operator_node or toleration,
                    f"{label}: toleration operator {operator!r} is not Equal or Exists",
                )
            self.effect(get(toleration, "effect"), toleration, label, "toleration")

    def effect(self, node: Node | None, parent: Node, label: str, what: str) -> None:
        """A taint's effect (required) or a toleration's (optional)."""
        effect = _text(node)
        allowed = _TAINT_EFFECTS + (("None",) if self.gates.minor >= _NONE_EFFECT_FROM else ())
        if not effect:
            if what == "taint":
                self.add("DRA354", node or parent, f"{label}: a taint needs an effect")
            return
        if effect not in allowed:
            self.add(
                "DRA354",
                node or parent,
                f"{label}: {what} effect {effect!r} is not {', '.join(allowed[:-1])} or {allowed[-1]}"
                + (
                    " (PreferNoSchedule is a node taint effect only)"
                    if effect == "PreferNoSchedule"
                    else ""
                ),
            )

    def taint(self, node: Node, label: str, schema: bool = True) -> None:
        """A taint; ``schema``: a strict schema already requires its key and effect."""
        if not isinstance(node, MappingNode):
            return
        key_node = get(node, "key")
        key = _text(key_node)
        if not key:
            if key_node is not None or not schema:
                self.add("DRA354", key_node or node, f"{label}: a taint needs a key")
        else:
            problem = qualified_key_problem(key)
            if problem:
                self.add("DRA354", key_node or node, f"{label}: taint key {key!r}: {problem}")
        value_node = get(node, "value")
        value = _text(value_node)
        problem = label_value_problem(value) if value else None
        if problem and value_node is not None:
            self.add("DRA354", value_node, f"{label}: taint value {value!r} {problem}")
        effect = get(node, "effect")
        if effect is not None or not schema:
            self.effect(effect, node, label, "taint")

    def capacity_requests(self, node: Node, label: str) -> None:
        for name, key_node, value in entries(get(node, "requests")):
            problem = qualified_name_problem(name)
            if problem:
                self.add("DRA355", key_node, f"{label}: capacity request {name!r} {problem}")
            data = trees.to_data(value)
            typed = isinstance(data, str | int | float) and not isinstance(data, bool)
            if typed and quantity(value) is None:  # other types: the schema says so
                self.add(
                    "DRA355",
                    value,
                    f"{label}: capacity request {name!r} is not a quantity "
                    f"({_text(value) or trees.to_data(value)!r})",
                    "for example 10Gi, 500m or 2",
                )

    # device classes

    def device_class(self, spec: Node | None, owner: str) -> bool:
        """Whether the class's extendedResourceName is to be checked further."""
        return self.gated(
            get(spec, "extendedResourceName"),
            "DRAExtendedResource",
            owner,
            "extendedResourceName",
        )

    # ResourceSlices

    def resource_slice(self, root: Node, owner: str, shape: str) -> None:
        spec = get(root, "spec")
        if not isinstance(spec, MappingNode):
            return
        self.named(get(spec, "driver"), driver_name_problem, "DRA357", f"{owner}: driver")
        self.pool(get(spec, "pool"), owner)
        per_device = self.node_selection(spec, owner)
        counters = get(spec, "sharedCounters")
        sets: dict[str, set[str]] = {}
        if self.gated(counters, "DRAPartitionableDevices", owner, "sharedCounters"):
            sets = self.counter_sets(counters, owner)
            if get(spec, "devices") is not None and self.gates.minor >= 35:
                self.add(
                    "DRA356",
                    counters,
                    f"{owner}: only one of sharedCounters and devices may be set: from "
                    "Kubernetes 1.35 shared counters live in a ResourceSlice of their own",
                    "move the devices to another ResourceSlice of the same pool",
                )
        devices_node = get(spec, "devices")
        devices = items(devices_node)
        bodies = [self._device_body(d, shape) for d in devices]
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
                self.add(
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
            name = self.checker.unique_label(get(device, "name"), seen, f"{owner}: device name")
            self.device(device, body, f"{owner} device {name!r}", per_device, sets)

    @staticmethod
    def _device_body(device: Node, shape: str) -> Node | None:
        """Where a device's fields are: v1beta1 nests them under ``basic``."""
        if shape == "v1beta1":
            return get(device, "basic")
        return device

    def pool(self, pool: Node | None, owner: str) -> None:
        if not isinstance(pool, MappingNode):
            return
        self.named(get(pool, "name"), pool_name_problem, "DRA357", f"{owner}: pool name")
        count = get(pool, "resourceSliceCount")
        value = trees.to_data(count) if count is not None else None
        positive = not isinstance(value, int) or isinstance(value, bool) or value > 0
        if count is not None and not positive:
            self.add("DRA357", count, f"{owner}: pool resourceSliceCount must be above 0")
        generation = get(pool, "generation")
        value = trees.to_data(generation) if generation is not None else None
        if generation is not None and isinstance(value, int) and value < 0:
            self.add("DRA357", generation, f"{owner}: pool generation must not be negative")

    def node_selection(self, spec: Node, owner: str) -> bool:
        """Exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection; whether
        the devices choose their nodes."""
        chosen: list[str] = []
        node_name = get(spec, "nodeName")
        if node_name is not None and trees.to_data(node_name) is not None:
            text = _text(node_name)
            if not text:
                self.add("DRA357", node_name, f"{owner}: nodeName must be unset or not empty")
            else:
                chosen.append("nodeName")
                if len(text) > 253 or not DNS_SUBDOMAIN.fullmatch(text):
                    self.add(
                        "DRA357",
                        node_name,
                        f"{owner}: nodeName {text!r} is not a lower-case DNS subdomain",
                    )
        selector = get(spec, "nodeSelector")
        if selector is not None and trees.to_data(selector) is not None:
            chosen.append("nodeSelector")
            self.node_selector(selector, f"{owner}: nodeSelector")
            terms = get(selector, "nodeSelectorTerms")
            if terms is not None and len(items(terms)) != 1:  # missing: the schema's DRA301
                self.add(
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
            if key == "perDeviceNodeSelection" and not self.gated(
                flag, "DRAPartitionableDevices", owner, key
            ):
                continue
            if value is True:
                chosen.append(key)
            else:
                self.add("DRA357", flag, f"{owner}: {key} must be unset or true")
        if len(chosen) != 1:
            self.add(
                "DRA357",
                spec,
                f"{owner}: exactly one of nodeName, nodeSelector, allNodes and "
                "perDeviceNodeSelection must be set"
                + (f" ({', '.join(chosen)} are)" if chosen else " (none is)"),
            )
        return chosen == ["perDeviceNodeSelection"]

    def node_selector(self, selector: Node, label: str) -> None:
        """The requirements of a node selector, as core validation checks them."""
        for term in items(get(selector, "nodeSelectorTerms")):
            for requirement in items(get(term, "matchExpressions")):
                self.requirement(requirement, label, field=False)
            for requirement in items(get(term, "matchFields")):
                self.requirement(requirement, label, field=True)

    def requirement(self, node: Node, label: str, field: bool) -> None:
        key = _text(get(node, "key"))
        operator = _text(get(node, "operator"))
        values_node = get(node, "values")
        values = [_text(v) for v in items(values_node)]
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
            check = _node_name_problem if field else label_value_problem
            bad = [v for v in values if check(v)]
            if bad:
                problem = f"value {bad[0]!r} {check(bad[0])}"
        if problem:
            self.add("DRA357", where, f"{label}: {problem}")

    def counter_sets(self, node: Node, owner: str) -> dict[str, set[str]]:
        sets: dict[str, set[str]] = {}
        counter_sets = items(node)
        self.checker.limit(node, len(counter_sets), MAX_COUNTER_SETS, owner, "counter sets")
        for counter_set in counter_sets:
            name_node = get(counter_set, "name")
            name = _text(name_node)
            label = f"{owner} counter set {name!r}"
            if not name:
                self.add("DRA356", name_node or counter_set, f"{owner}: a counter set needs a name")
            elif not DNS_LABEL.fullmatch(name) or len(name) > 63:
                self.add("DRA356", name_node or counter_set, f"{label}: name is not a DNS label")
            elif name in sets:
                self.add(
                    "DRA313",
                    name_node or counter_set,
                    f"{owner}: counter set {name!r} is defined twice",
                )
            sets[name] = self.counters(get(counter_set, "counters"), counter_set, label)
        return sets

    def counters(self, node: Node | None, parent: Node, label: str) -> set[str]:
        names = [(n, k, v) for n, k, v in entries(node)]
        if not names:
            self.add("DRA356", node or parent, f"{label}: needs at least one counter")
            return set()
        if len(names) > MAX_COUNTERS:
            self.add(
                "DRA313",
                node or parent,
                f"{label} has {len(names)} counters; at most {MAX_COUNTERS}",
            )
            return {n for n, _k, _v in names}
        for name, key_node, value in names:
            if len(name) > 63 or not DNS_LABEL.fullmatch(name):
                self.add("DRA356", key_node, f"{label}: counter name {name!r} is not a DNS label")
            amount = get(value, "value")
            if amount is not None and quantity(amount) is None:
                self.add(
                    "DRA356",
                    amount,
                    f"{label}: counter {name!r} value {_text(amount)!r} is not a quantity",
                )
        return {n for n, _k, _v in names}

    def device(
        self,
        device: MappingNode,
        body: Node | None,
        label: str,
        per_device: bool,
        sets: dict[str, set[str]],
    ) -> None:
        attributes = list(entries(get(body, "attributes")))
        capacities = list(entries(get(body, "capacity")))
        if len(attributes) + len(capacities) > MAX_ATTRIBUTES_AND_CAPACITIES:
            self.add(
                "DRA357",
                device,
                f"{label} has {len(attributes) + len(capacities)} attributes and capacities; "
                f"at most {MAX_ATTRIBUTES_AND_CAPACITIES}",
            )
        for name, key_node, value in attributes:
            self.attribute(name, key_node, value, label)
        multiple = get(body, "allowMultipleAllocations")
        shared = (
            self.gated(multiple, "DRAConsumableCapacity", label, "allowMultipleAllocations")
            and trees.to_data(multiple) is True
        )
        for name, key_node, value in capacities:
            problem = qualified_name_problem(name)
            if problem:
                self.add("DRA357", key_node, f"{label}: capacity name {name!r} {problem}")
            amount_node = get(value, "value")
            amount = quantity(amount_node)
            if amount_node is not None and amount is None:
                self.add(
                    "DRA357",
                    amount_node,
                    f"{label}: capacity {name!r} value {_text(amount_node)!r} is not a quantity",
                )
            policy = get(value, "requestPolicy")
            if not self.gated(policy, "DRAConsumableCapacity", label, "capacity requestPolicy"):
                continue
            if not shared:
                self.add(
                    "DRA355",
                    policy,
                    f"{label}: capacity {name!r} has a requestPolicy, which needs "
                    "allowMultipleAllocations: true on the device",
                )
            elif amount is not None:
                self.request_policy(policy, amount, f"{label} capacity {name!r}")
        taints = get(body, "taints")
        if self.gated(taints, "DRADeviceTaints", label, "taints"):
            self.checker.limit(taints, len(items(taints)), MAX_TAINTS, label, "taints")
            for taint in items(taints):
                self.taint(taint, label)
        consumes = get(body, "consumesCounters")
        if self.gated(consumes, "DRAPartitionableDevices", label, "consumesCounters"):
            self.consumptions(consumes, label, sets)
        self.device_nodes(device, body, label, per_device)
        binding = [
            get(body, k) for k in ("bindingConditions", "bindingFailureConditions", "bindsToNode")
        ]
        if (
            any(
                self.gated(node, "DRADeviceBindingConditions", label, key)
                for node, key in zip(
                    binding,
                    ("bindingConditions", "bindingFailureConditions", "bindsToNode"),
                    strict=True,
                )
            )
            and body is not None
        ):
            self.binding_conditions(body, label)
        self.gated(
            get(body, "nodeAllocatableResourceMappings"),
            "DRANodeAllocatableResources",
            label,
            "nodeAllocatableResourceMappings",
        )

    def attribute(self, name: str, key_node: Node, value: Node, label: str) -> None:
        problem = qualified_name_problem(name)
        if problem:
            self.add("DRA357", key_node, f"{label}: attribute name {name!r} {problem}")
        kinds = [k for k, _kn, _v in entries(value) if k in ("bool", "int", "string", "version")]
        lists = [
            k for k, _kn, _v in entries(value) if k in ("bools", "ints", "strings", "versions")
        ]
        for kind in lists:
            node = get(value, kind)
            if self.gated(node, "DRAListTypeAttributes", f"{label} attribute {name!r}", kind):
                kinds.append(kind)
                if not items(node):
                    self.add(
                        "DRA357",
                        node or value,
                        f"{label}: attribute {name!r} {kind} must not be empty",
                    )
        if len(kinds) != 1:
            self.add(
                "DRA357",
                value if kinds else key_node,
                f"{label}: attribute {name!r} must have exactly one value "
                + (f"(it has {', '.join(kinds)})" if kinds else "(bool, int, string or version)"),
            )
        for kind in ("string", "version", "strings", "versions"):
            node = get(value, kind)
            values = items(node) if kind.endswith("s") else ([node] if node is not None else [])
            for item in values:
                text = _text(item)
                if len(text) > MAX_ATTRIBUTE_VALUE:
                    self.add(
                        "DRA357",
                        item,
                        f"{label}: attribute {name!r} value is {len(text)} characters; at most "
                        f"{MAX_ATTRIBUTE_VALUE}",
                    )
                if kind.startswith("version") and not _SEMVER.fullmatch(text):
                    self.add(
                        "DRA357",
                        item,
                        f"{label}: attribute {name!r} version {text!r} is not a semantic "
                        "version (semver.org 2.0.0, like 1.2.3)",
                    )

    def request_policy(self, policy: Node, capacity: Fraction, label: str) -> None:
        default_node = get(policy, "default")
        default = quantity(default_node)
        values_node = get(policy, "validValues")
        range_node = get(policy, "validRange")
        values = items(values_node)
        if values and range_node is not None:
            self.add(
                "DRA355",
                policy,
                f"{label}: requestPolicy sets both validValues and validRange; at most one",
            )
            return
        if (values or range_node is not None) and default_node is None:
            self.add(
                "DRA355",
                policy,
                f"{label}: requestPolicy needs a default with "
                + ("validValues" if values else "validRange"),
            )
            return
        if values:
            if len(values) > MAX_VALID_VALUES:
                self.add(
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
                    self.add(
                        "DRA355",
                        node,
                        f"{label}: validValues option {_text(node)} is more than the capacity",
                    )
                if amount in seen:
                    self.add("DRA313", node, f"{label}: validValues lists {_text(node)} twice")
                seen.add(amount)
                previous = parsed[i - 1] if i else None
                if previous is not None and previous > amount:
                    self.add(
                        "DRA355", node, f"{label}: validValues must be sorted in ascending order"
                    )
            if default is not None and default not in seen:
                self.add(
                    "DRA355",
                    default_node or policy,
                    f"{label}: the default {_text(default_node)} is not one of validValues",
                )
            return
        if range_node is None:
            return
        low_node, high_node, step_node = (get(range_node, k) for k in ("min", "max", "step"))
        low, high, step = (quantity(n) for n in (low_node, high_node, step_node))
        if low_node is None:
            self.add("DRA355", range_node, f"{label}: validRange needs min")
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
        if step is not None and step_node is not None:
            if step <= 0:
                problems.append((step_node, "step must be above 0"))
            else:
                if low + step > capacity:
                    problems.append((step_node, "one step from min is more than the capacity"))
                for value, what in ((default, "default"), (high, "max")):
                    if value is not None and (value - low) % step != 0:
                        problems.append((step_node, f"{what} is not min plus a multiple of step"))
        for node, message in problems:
            self.add("DRA355", node, f"{label}: requestPolicy validRange: {message}")

    def consumptions(self, node: Node, label: str, sets: dict[str, set[str]]) -> None:
        consumptions = items(node)
        self.checker.limit(node, len(consumptions), MAX_CONSUMPTIONS, label, "counter consumptions")
        seen: set[str] = set()
        for consumption in consumptions:
            set_node = get(consumption, "counterSet")
            name = _text(set_node)
            where = f"{label} consumesCounters {name!r}"
            if not name:
                self.add(
                    "DRA356",
                    set_node or consumption,
                    f"{label}: consumesCounters needs a counterSet",
                )
                continue
            if len(name) > 63 or not DNS_LABEL.fullmatch(name):
                self.add(
                    "DRA356", set_node or consumption, f"{where}: counterSet is not a DNS label"
                )
            if name in seen:
                self.add(
                    "DRA313",
                    set_node or consumption,
                    f"{label}: consumes counter set {name!r} twice",
                )
            seen.add(name)
            counters = self.counters(get(consumption, "counters"), consumption, where)
            if self.gates.minor <= 34 and sets is not None:
                # until 1.34 the counter sets are in the device's own slice
                if name not in sets:
                    self.add(
                        "DRA356",
                        set_node or consumption,
                        f"{where}: the ResourceSlice has no counter set {name!r} in sharedCounters",
                    )
                else:
                    for counter in sorted(counters - sets[name]):
                        self.add(
                            "DRA356",
                            get(consumption, "counters") or consumption,
                            f"{where}: counter set {name!r} has no counter {counter!r}",
                        )

    def device_nodes(
        self, device: MappingNode, body: Node | None, label: str, per_device: bool
    ) -> None:
        keys = [k for k in ("nodeName", "nodeSelector", "allNodes") if get(body, k) is not None]
        if not per_device:
            if keys:
                self.add(
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
                self.add("DRA357", node or device, f"{label}: allNodes must be unset or true")
                continue
            if key == "nodeName" and not _text(node):
                self.add("DRA357", node or device, f"{label}: nodeName must not be empty")
                continue
            if key == "nodeSelector" and node is not None:
                self.node_selector(node, f"{label}: nodeSelector")
            chosen.append(key)
        if len(chosen) != 1 and not (len(keys) > len(chosen) and not chosen):
            self.add(
                "DRA357",
                device,
                f"{label}: exactly one of nodeName, nodeSelector and allNodes is needed "
                "with perDeviceNodeSelection",
            )

    def binding_conditions(self, body: Node, label: str) -> None:
        lists: dict[str, list[tuple[Node, str]]] = {}
        for key in ("bindingConditions", "bindingFailureConditions"):
            node = get(body, key)
            conditions = [(n, _text(n)) for n in items(node)]
            lists[key] = conditions
            if node is not None and len(conditions) > MAX_CONDITIONS:
                self.add(
                    "DRA359", node, f"{label} has {len(conditions)} {key}; at most {MAX_CONDITIONS}"
                )
                continue
            seen: set[str] = set()
            for item, text in conditions:
                problem = qualified_key_problem(text)
                if problem:
                    self.add("DRA359", item, f"{label}: {key} entry {text!r}: {problem}")
                if text in seen:
                    self.add("DRA359", item, f"{label}: {key} lists {text!r} twice")
                seen.add(text)
        success = {t for _n, t in lists["bindingConditions"]}
        for item, text in lists["bindingFailureConditions"]:
            if text in success:
                self.add(
                    "DRA359",
                    item,
                    f"{label}: {text!r} is in both bindingConditions and bindingFailureConditions",
                )
        for have, need in (
            ("bindingConditions", "bindingFailureConditions"),
            ("bindingFailureConditions", "bindingConditions"),
        ):
            if lists[have] and not lists[need]:
                self.add(
                    "DRA359",
                    get(body, have) or body,
                    f"{label}: {have} need {need} as well",
                )

    # DeviceTaintRules

    def device_taint_rule(self, root: Node, owner: str, version: str) -> None:
        """A DeviceTaintRule: the gates that serve the kind, its selector and its taint."""
        kind_node = get(root, "kind") or root
        gates = ["DRADeviceTaints"] + (["DRADeviceTaintRules"] if self.gates.minor >= 35 else [])
        for gate in gates:
            if not self.gated(kind_node, gate, owner, "DeviceTaintRules", dropped=False):
                return
        spec = get(root, "spec")
        if not isinstance(spec, MappingNode):
            self.add("DRA358", root, f"{owner} needs a spec with a taint")
            return
        selector = get(spec, "deviceSelector")
        for key, check in (
            ("deviceClassName", _class_name_problem),  # v1alpha3 only, with selectors
            ("driver", driver_name_problem),
            ("pool", pool_name_problem),
            ("device", _device_name_problem),
        ):
            self.named(get(selector, key), check, "DRA358", f"{owner}: deviceSelector {key}")
        taint = get(spec, "taint")
        if not isinstance(taint, MappingNode):
            self.add("DRA358", taint or spec, f"{owner}: spec.taint is required")
            return
        self.taint(taint, owner, schema=False)


def _node_name_problem(name: str) -> str | None:
    if not name or len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
        return "is not a node name (a lower-case DNS subdomain)"
    return None


def _class_name_problem(name: str) -> str | None:
    if not name or len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
        return "is not a lower-case DNS subdomain"
    return None


def _device_name_problem(name: str) -> str | None:
    if not name or len(name) > 63 or not DNS_LABEL.fullmatch(name):
        return "is not a DNS label"
    return None
