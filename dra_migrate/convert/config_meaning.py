"""What a configuration's selectors and drivers mean, checked when it loads: a selector
that is not CEL, or that looks up a name the driver does not publish (it could never
match a device, whichever workload its rule picks), and a driver release the catalog
does not know. Each answer is the message of the configuration error at its line."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
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
