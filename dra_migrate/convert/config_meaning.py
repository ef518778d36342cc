"""What a configuration's selectors and drivers mean, checked when it loads: a selector
that is not CEL, or that looks up a name the driver does not publish (it could never
match a device, whichever workload its rule picks), and a driver release the catalog
does not know. Each answer is the message of the configuration error at its line."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

# CEL problems that make a selector wrong whatever driver publishes the devices
CEL_ERRORS = ("syntax", "too-long", "not-bool", "undeclared", "unknown-function", "unknown-field")
# names a selector looks up that the driver does not publish, or with the wrong type
NAME_ERRORS = (
    "stale-name",
    "unknown-attribute",
    "unknown-capacity",
    "capacity-as-attribute",
    "attribute-as-capacity",
    "unknown-domain",
    "type",
)


def declared_names(drivers: Any) -> frozenset[str]:
    """The domains and domain/name that the configuration's ``drivers`` declare (a
    driver the catalog does not list: ``{attributes: [...], capacity: [...]}``)."""
    names: set[str] = set()
    for domain, spec in (drivers or {}).items():
        if isinstance(spec, dict):
            names.add(domain)
            for key in ("attributes", "capacity"):
                names.update(f"{domain}/{name}" for name in spec.get(key) or ())
    return frozenset(names)


def selector_problem(expression: str, published: frozenset[str]) -> str | None:
    """Why ``expression`` is wrong as a configured selector, or None: not CEL, or a name
    the catalog says the driver does not publish (and ``published`` does not declare),
    said with the name it does publish where the catalog knows it."""
    from dra_migrate.cel import check_selector

    found = check_selector(expression)
    invalid = [p for p in found if p.code in CEL_ERRORS]
    if invalid:
        return f"the selector is not valid CEL: {invalid[0].message}"
    names = [p for p in found if p.code in NAME_ERRORS and p.subject not in published]
    if names:
        return f"the selector can never match a device: {names[0].message}"
    return None


def release_problem(domain: str, release: str) -> str | None:
    """``drivers: {domain: release}`` names a catalogued driver and one of its releases;
    else what is wrong."""
    from dra_migrate.k8s.catalog import load_catalog

    info = load_catalog().domains.get(domain)
    if info is None or not info.releases:
        known = sorted(d for d, i in load_catalog().domains.items() if i.releases)
        return (
            f"{domain} is not a driver whose releases the catalog knows ({', '.join(known)}); "
            "for another driver give its names: {attributes: [...], capacity: [...]}"
        )
    releases = [r.release for r in info.releases]
    if release not in releases:
        return f"{domain} release {release!r} is not one the catalog knows: {', '.join(releases)}"
    return None


def label_problem(key: str, value: str) -> str | None:
    """Why a rule's ``labels`` or ``nodeSelector`` entry can match no object: its key is
    not a label key, or its value not a label value (the API server stores no such
    label). A value with spaces is the common case: GPU Feature Discovery writes
    ``nvidia.com/gpu.product`` as NVML's name with its spaces as dashes
    (NVIDIA/gpu-feature-discovery, mig-strategy.go, since moved into
    NVIDIA/k8s-device-plugin: ``strings.Replace(model, " ", "-", -1)``)."""
    from dra_migrate.k8s.names import LABEL_VALUE, MAX_LABEL_NAME, qualified_key_problem

    wrong = qualified_key_problem(key)
    if wrong:
        return f"{key!r} is not a label key: {wrong}"
    if len(value) <= MAX_LABEL_NAME and LABEL_VALUE.fullmatch(value):
        return None
    said = (
        f"{value!r} is not a label value (at most 63 alphanumeric characters, '-', '_' or "
        "'.', starting and ending with an alphanumeric one): no node or workload has it"
    )
    dashed = "-".join(value.split())
    if dashed != value and len(dashed) <= MAX_LABEL_NAME and LABEL_VALUE.fullmatch(dashed):
        said += f"; did you mean {dashed!r}? (GPU Feature Discovery writes spaces as dashes)"
    return said


def rule_label_problems(rules: Any) -> Iterator[tuple[tuple[Any, ...], str]]:
    """(path under the rules, message) of each ``labels`` or ``nodeSelector`` entry of
    a resource's rules that no label can hold (``label_problem``)."""
    for j, rule in enumerate(rules):
        when = rule.get("when") or {}
        for part in ("labels", "nodeSelector"):
            for key, values in (when.get(part) or {}).items():
                for value in values if isinstance(values, list) else [values]:
                    problem = label_problem(str(key), str(value))
                    if problem:
                        yield (j, "when", part, key), problem
