"""ResourceClaim and ResourceClaimTemplate specs: requests and subrequests (one of
``exactly`` and ``firstAvailable``, counts, allocation modes), constraints (against
the driver attribute catalog), opaque configuration, and the request names they
refer to."""

from __future__ import annotations

import difflib
import json

from yaml.nodes import MappingNode, Node

from dra_migrate.k8s.quantity import INT64_MAX
from dra_migrate.manifests import trees
from dra_migrate.manifests.trees import get, items, scalar
from dra_migrate.validate.checker import Checker
from dra_migrate.validate.gated_fields import gated, request_fields
from dra_migrate.validate.model import Constraint, Request
from dra_migrate.validate.selectors import check_selectors, release_hint, release_message
from dra_migrate.validate.values import fully_qualified_name_problem

TYPE_CHECKING = False  # typing is not imported at run time (start-up)
if TYPE_CHECKING:
    from dra_migrate.k8s.catalog import Catalog

MAX_REQUESTS = MAX_CONSTRAINTS = MAX_CONFIG = 32
MAX_SUBREQUESTS = 8
MAX_PARAMETERS = 10 * 1024
MAX_DRIVER_NAME = 63  # resourceapi.DriverNameMaxLength


def claim_spec(
    checker: Checker, spec: Node | None, version: str, owner: str
) -> tuple[list[Request], list[Constraint]]:
    devices = get(spec, "devices")
    request_nodes = items(get(devices, "requests"))
    requests: list[Request] = []
    if len(request_nodes) > MAX_REQUESTS:
        checker.add(
            "DRA313",
            get(devices, "requests") or devices or spec or request_nodes[0],
            f"{owner} has {len(request_nodes)} requests; at most {MAX_REQUESTS} are allowed",
        )
    seen: set[str] = set()
    for node in request_nodes:
        checker.unique_label(get(node, "name"), seen, f"{owner}: request name")
        request = read_request(checker, node, version, owner)
        if request is not None:
            requests.append(request)
    names = {r.name for r in requests} | {
        f"{r.name}/{s.name}" for r in requests for s in r.subrequests
    }
    constraints_node = get(devices, "constraints")
    constraints = items(constraints_node)
    if constraints_node is not None:
        checker.limit(constraints_node, len(constraints), MAX_CONSTRAINTS, owner, "constraints")
    parsed: list[Constraint] = []
    for constraint in constraints:
        references(checker, get(constraint, "requests"), names, owner, "constraint")
        if isinstance(constraint, MappingNode) and all(
            get(constraint, k) is None for k in ("matchAttribute", "distinctAttribute")
        ):
            checker.add(
                "DRA320",
                constraint,
                f"{owner}: a constraint needs matchAttribute (or distinctAttribute)",
            )
        for key in ("matchAttribute", "distinctAttribute"):
            attr = get(constraint, key)
            if attr is None:
                continue
            if key == "distinctAttribute" and not gated(
                checker, attr, "DRAConsumableCapacity", owner, key
            ):
                continue
            text = scalar(attr) or ""
            problem = fully_qualified_name_problem(text)
            if problem is not None:
                checker.add(
                    "DRA320",
                    attr,
                    f"{owner}: {key} {text!r} {problem}",
                    "for example gpu.nvidia.com/productName or resource.kubernetes.io/pcieRoot",
                )
                continue
            domain, _, ident = text.partition("/")
            constraint_attribute(checker, attr, key, domain, ident, owner)
            refs = [scalar(r) or "" for r in items(get(constraint, "requests"))]
            parsed.append(Constraint(key, domain, ident, refs, checker.where(attr)))
    config(checker, get(devices, "config"), names, owner, claim=True)
    return requests, parsed


def constraint_attribute(
    checker: Checker, node: Node, key: str, domain: str, name: str, owner: str
) -> None:
    """A constraint's attribute against the catalog, as a selector's lookup is checked.

    A device without the attribute never satisfies the constraint, so a stale
    or unknown name leaves every pod that uses the claim Pending.
    """
    from dra_migrate.k8s.catalog import load_catalog

    catalog = load_catalog()
    published = checker.settings.published
    if f"{domain}/{name}" in published or (domain in published and domain not in catalog.domains):
        return  # the ResourceSlices show what this driver publishes (DRA351 checks them)
    label = f"{owner}: {key} {domain}/{name}"
    pending = "no device has it, so the claim is never allocated and its pods stay Pending"
    info = catalog.domains.get(domain)
    if info is None:
        wrong = catalog.wrong_domain(domain)
        similar = catalog.similar_domains(domain)
        if wrong is not None:
            checker.add(
                "DRA334",
                node,
                f"{label}: {domain!r} is not an attribute domain: {wrong.explanation}",
                f"use {wrong.replacement}/{name}",
            )
        elif similar and not catalog.is_known_domain(domain):
            checker.add(
                "DRA350",
                node,
                f"{label}: no driver in the catalog uses the domain {domain!r}; "
                "if it is a typo, " + pending,
                f"did you mean {' or '.join(repr(s) for s in similar)}?",
            )
        return
    stale = catalog.find_stale(domain, name, "attribute")
    if stale is not None:
        if stale.replacement and not stale.replacement.startswith("capacity"):
            right = (
                stale.replacement if "/" in stale.replacement else (f"{domain}/{stale.replacement}")
            )
            checker.add(
                "DRA331",
                node,
                f"{label}: {domain} does not publish {name!r}: use {right}; {stale.explanation}",
                f"{key}: {right}",
            )
        else:
            checker.add(
                "DRA331",
                node,
                f"{label}: {domain} does not publish {name!r}; {stale.explanation}",
                f"{pending}; constrain on an attribute the driver publishes, "
                "or drop the constraint",
            )
        return
    if name in info.attributes:
        message = release_message(checker.settings, domain, name)
        if message:
            checker.add("DRA336", node, f"{label}: {message}; {pending}", release_hint(domain, ""))
        return
    if info.has_capacity(name):
        checker.add(
            "DRA332",
            node,
            f"{label}: {name!r} is a capacity of {domain}; constraints compare attributes "
            f"only, so {pending}",
        )
        return
    known = list(info.attributes)
    close = [k for k in known if k.lower() == name.lower()]
    close += [k for k in difflib.get_close_matches(name, known, n=3, cutoff=0.75) if k not in close]
    if not info.complete and not close:
        return  # the catalog does not list every name of this domain
    elsewhere = [f"{d}/{name}" for d, i in catalog.domains.items() if name in i.attributes]
    if close:
        hint = "did you mean " + " or ".join(f"{domain}/{c}" for c in close) + "?"
    elif elsewhere:
        hint = "published as " + ", ".join(elsewhere)
    else:
        hint = f"{domain} publishes: {', '.join(sorted(known))}"
    checker.add(
        "DRA332", node, f"{label}: {domain} publishes no attribute {name!r}; {pending}", hint
    )


def read_request(checker: Checker, node: Node, version: str, owner: str) -> Request | None:
    if not isinstance(node, MappingNode):
        return None
    name = scalar(get(node, "name")) or ""  # checked by claim_spec
    label = f"{owner}: request {name!r}"
    first = get(node, "firstAvailable")
    if version == "v1beta1":
        body: Node | None = node
        has_exact = get(node, "deviceClassName") is not None
        if has_exact == (first is not None):
            checker.add(
                "DRA314",
                node,
                f"{label} must set exactly one of deviceClassName and firstAvailable",
            )
        if first is not None:
            for key in ("selectors", "allocationMode", "count", "adminAccess"):
                if get(node, key) is not None:
                    checker.add(
                        "DRA314",
                        get(node, key) or node,
                        f"{label} has firstAvailable, so {key} belongs in its subrequests",
                    )
            body = None
    else:
        body = get(node, "exactly")
        if (body is not None) == (first is not None):
            checker.add(
                "DRA314", node, f"{label} must set exactly one of exactly and firstAvailable"
            )
    request = read_exact(checker, body, name, label) if body is not None else None
    if request is None:
        request = Request(name, checker.where(node), None, [], "ExactCount", None)
    gated(checker, first, "DRAPrioritizedList", label, "firstAvailable")
    if first is not None:
        subs = items(first)
        checker.limit(first, len(subs), MAX_SUBREQUESTS, label, "firstAvailable entries")
        sub_seen: set[str] = set()
        for sub in subs:
            sub_name = checker.unique_label(get(sub, "name"), sub_seen, f"{label}: subrequest name")
            parsed = read_exact(
                checker, sub, sub_name, f"{label} subrequest {sub_name!r}", subrequest=True
            )
            if parsed is not None:
                request.subrequests.append(parsed)
    return request


def read_exact(
    checker: Checker, body: Node, name: str, label: str, subrequest: bool = False
) -> Request | None:
    if not isinstance(body, MappingNode):
        return None
    request_fields(checker, body, label, subrequest)
    class_node = get(body, "deviceClassName")
    device_class = scalar(class_node)
    if class_node is not None:
        checker.name(class_node, subdomain=True, what=f"{label}: deviceClassName")
    mode_node = get(body, "allocationMode")
    mode = scalar(mode_node) or "ExactCount"
    if mode_node is not None and mode not in ("ExactCount", "All"):
        checker.add(
            "DRA312", mode_node, f"{label}: allocationMode {mode!r} is not ExactCount or All"
        )
    count_node = get(body, "count")
    count = trees.to_data(count_node) if count_node is not None else None
    if isinstance(count, float) and count.is_integer():  # 1e3, 1e21: JSON 1000, 1e+21
        count = int(count)
    unset = count == 0 and isinstance(count, int) and not isinstance(count, bool)
    if count_node is not None and unset:
        # count 0 is the Go zero value: unset. With All that is what the API
        # server wants; with ExactCount it defaults it to 1 before validating.
        if mode != "All":
            checker.add(
                "DRA352",
                count_node,
                f"{label}: count 0 with allocationMode ExactCount is defaulted to 1 by "
                "the API server: the pod gets one device",
                "write the number of devices wanted, or drop count for one device",
            )
            count = 1
    elif count_node is not None:
        if mode == "All":
            checker.add(
                "DRA312", count_node, f"{label}: count must not be set with allocationMode All"
            )
        elif not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            checker.add(
                "DRA312",
                count_node,
                f"{label}: count {scalar(count_node)!r} must be a whole number above 0",
            )
        elif count > INT64_MAX:
            checker.add(
                "DRA312",
                count_node,
                f"{label}: count {scalar(count_node)!r} is more than Kubernetes can hold "
                f"(int64, at most {INT64_MAX})",
            )
            count = None
    selectors = check_selectors(checker, get(body, "selectors"), label)
    number = count if isinstance(count, int) and not isinstance(count, bool) else None
    if mode == "All":
        number = None
    elif count_node is None:
        number = 1  # defaulted by the API server
    admin = (
        not subrequest
        and trees.to_data(get(body, "adminAccess")) is True
        and checker.gates.enabled("DRAAdminAccess")
    )
    return Request(name, checker.where(body), device_class, selectors, mode, number, admin=admin)


def config(checker: Checker, node: Node | None, names: set[str], owner: str, claim: bool) -> None:
    entries_ = items(node)
    if node is not None:
        checker.limit(node, len(entries_), MAX_CONFIG, owner, "config entries")
    if not entries_:
        return  # the catalog (a module and its files) is read only for config entries
    from dra_migrate.k8s.catalog import is_dns_subdomain, load_catalog

    catalog = load_catalog()
    for entry in entries_:
        if claim:
            references(checker, get(entry, "requests"), names, owner, "config")
        opaque = get(entry, "opaque")
        if opaque is None or not isinstance(opaque, MappingNode):
            checker.add(
                "DRA347", entry, f"{owner}: a config entry needs opaque driver configuration"
            )
            continue
        driver = get(opaque, "driver")
        text = scalar(driver) or ""
        if driver is None or not text:
            checker.add("DRA321", opaque, f"{owner}: opaque configuration needs a driver")
        elif len(text) > MAX_DRIVER_NAME or not is_dns_subdomain(text.lower()):
            checker.add(
                "DRA321",
                driver,
                f"{owner}: opaque driver {text!r} is not a DNS subdomain of at most "
                f"{MAX_DRIVER_NAME} characters",
            )
        parameters = get(opaque, "parameters")
        if parameters is None or not isinstance(parameters, MappingNode):
            checker.add(
                "DRA321",
                parameters if parameters is not None else opaque,
                f"{owner}: opaque parameters must be a JSON object"
                + (" (null is not)" if parameters is not None else ""),
            )
            continue
        size = len(json.dumps(trees.to_data(parameters), separators=(",", ":")))
        if size > MAX_PARAMETERS:
            checker.add(
                "DRA321",
                parameters,
                f"{owner}: opaque parameters are {size} bytes as JSON; at most {MAX_PARAMETERS}",
            )
        _release_fields(checker, catalog, text, parameters, owner)
        api = get(parameters, "apiVersion")
        stale = catalog.stale_opaque_api_version(scalar(api) or "") if api is not None else None
        if api is not None and stale is not None:
            replacement = f"; use {stale.replacement}" if stale.replacement else ""
            checker.add(
                "DRA331",
                api,
                f"{owner}: opaque config apiVersion {scalar(api)} is stale{replacement}",
                stale.explanation,
            )


def _release_fields(
    checker: Checker, catalog: Catalog, driver: str, parameters: MappingNode, owner: str
) -> None:
    """DRA338 for each field of the opaque configuration that the driver release the run
    assumes does not decode (the drivers decode strictly: the claim is rejected)."""
    fields = [f for f in catalog.config_fields if f.driver == driver]
    if not fields:
        return
    data = trees.to_data(parameters)
    settings = checker.settings
    assumed = {d: (r, why) for d, r, why in settings.driver_releases}
    if driver not in assumed:
        assumed.update(catalog.assumed_releases({}, settings.published))
    release, why = assumed.get(driver, ("", ""))
    order = [r.release for r in catalog.domains[driver].releases]
    for field_ in fields:
        if not field_.value_in(data) or release not in order or field_.since not in order:
            continue
        if order.index(release) >= order.index(field_.since):
            continue
        checker.add(
            "DRA338",
            trees.key_at(parameters, tuple(field_.path.split("."))),
            f"{owner}: {field_.path} is decoded by {driver} from driver release "
            f"{field_.since}; this run assumes {release} ({why}), whose strict decoding "
            f"rejects the config ({field_.note})",
            release_hint(driver, f"drop {field_.path}"),
        )


def references(checker: Checker, node: Node | None, names: set[str], owner: str, what: str) -> None:
    seen: set[str] = set()
    for ref in items(node):
        text = scalar(ref) or ""
        if text in seen:
            checker.add("DRA313", ref, f"{owner}: {what} lists request {text!r} twice")
        seen.add(text)
        if text not in names:
            checker.add(
                "DRA320",
                ref,
                f"{owner}: {what} names request {text!r}, which the claim does not have",
            )
