"""What a configuration's selectors and drivers mean, checked when it loads: a selector
that is not CEL, or that looks up a name the driver does not publish (it could never
match a device, whichever workload its rule picks), a driver release the catalog
does not know, and GPU product names against the catalog of products
(k8s/products.py). Each answer is the message of the configuration error at its line,
or of a warning (DRA533) for a product the catalog does not know."""

from __future__ import annotations

import re
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from dra_migrate.cel import Compared
    from dra_migrate.k8s.products import Products

# the labels GPU feature discovery writes a product name in: nvidia.com/gpu.product, and
# under the mixed MIG strategy nvidia.com/mig-<profile>.product (NVIDIA/k8s-device-plugin,
# internal/lm/resource.go: <resource name>.product)
PRODUCT_LABEL = re.compile(r"nvidia\.com/(?:gpu|mig-[A-Za-z0-9._-]+)\.product")

# what of a product name a selector compares a literal with ("whole": all of it)
_COMPARED = {"whole": "", "prefix": "the start of ", "suffix": "the end of ", "part": "a part of "}
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


def selector_problem(
    expression: str, published: frozenset[str]
) -> tuple[str | None, list[Compared]]:
    """Why ``expression`` is wrong as a configured selector, or None: not CEL, or a name
    the catalog says the driver does not publish (and ``published`` does not declare),
    said with the name it does publish where the catalog knows it; and the string
    attributes it compares with literals (for ``selector_products``)."""
    from dra_migrate.cel import check_selector_values

    found, compared = check_selector_values(expression)
    invalid = [p for p in found if p.code in CEL_ERRORS]
    if invalid:
        return f"the selector is not valid CEL: {invalid[0].message}", []
    names = [p for p in found if p.code in NAME_ERRORS and p.subject not in published]
    if names:
        return f"the selector can never match a device: {names[0].message}", []
    return None, compared


@dataclass(frozen=True, slots=True)
class ProductProblem:
    """A product name of the configuration the catalog does not have as written: an
    error when it is a catalogued name misspelled (no GPU has it), else a warning
    (DRA533: a GPU newer than the catalog, or a name no GPU has)."""

    error: bool
    message: str
    hint: str = ""
    offset: int = 0  # in a selector: where the name's text starts


def product_problem(
    value: str, form: str, how: str = "whole", fold: str = "", products: Products | None = None
) -> ProductProblem | None:
    """``value`` against the catalog of products (NVIDIA's unless ``products`` is
    another): None when it is a catalogued name (``form`` "label": a GFD label value;
    "name": the attribute's value, NVML's name in productName)."""
    from dra_migrate.k8s.products import catalog_said, load_products

    products = products or load_products()
    verdict = products.check(value, form, how, fold)
    if verdict.known:
        return None
    what = _COMPARED[how]
    if verdict.misspelled:
        return ProductProblem(
            True,
            f"{value!r} is {what}no GPU product: did you mean {verdict.suggestion!r}? "
            f"({verdict.why})",
        )
    closest = (
        f"; the closest catalogued name is {verdict.suggestion!r}" if verdict.suggestion else ""
    )
    return ProductProblem(
        False,
        f"{value!r} is {what}no GPU product the catalog knows ({catalog_said(products)}): "
        "a GPU newer than the catalog, or a name no GPU has",
        _COMPARE_HINT.get(products.vendor, "compare it with the nodes' ResourceSlices") + closest,
    )


# where to see the names a vendor's nodes have, for the warning of a name not catalogued
_COMPARE_HINT = {
    "NVIDIA": "compare it with the nodes' GPUs: kubectl get nodes -L nvidia.com/gpu.product "
    "shows GPU feature discovery's label (dashes for spaces), a ResourceSlice's productName "
    "NVML's name",
    "Intel": "compare it with the nodes' GPUs: a ResourceSlice of gpu.intel.com shows each "
    "device's model and family",
}


def selector_products(compared: list[Compared]) -> Iterator[ProductProblem]:
    """The product names a selector compares a product attribute with, against the
    catalog (the comparisons ``selector_problem`` gives)."""
    from dra_migrate.k8s.products import catalog_for

    for c in compared:
        products = catalog_for(c.domain, c.name)
        if products is not None:
            found = product_problem(c.value, "name", c.how, c.fold, products)
            if found is not None:
                yield ProductProblem(
                    found.error, f"{c.domain}/{c.name}: {found.message}", found.hint, c.offset
                )


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
    (NVIDIA/k8s-device-plugin, internal/lm/resource.go, ``sanitise``; k8s/products.py)."""
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


def point_at(node: Any, offset: int = -1) -> tuple[int, int]:
    """Line and column of ``node``, or of the character at ``offset`` in its text when
    the scalar is on one line and its source is its text (plain, or quoted with no
    escapes): where a selector's product name starts."""
    mark, end = node.start_mark, node.end_mark
    line, col = mark.line + 1, mark.column + 1
    value = getattr(node, "value", None)
    if offset < 0 or not isinstance(value, str) or end.line != mark.line:
        return line, col
    width = end.column - mark.column
    if node.style in ("'", '"') and width == len(value) + 2:
        return line, col + 1 + offset
    if not node.style and width == len(value):
        return line, col + offset
    return line, col


def rule_label_problems(rules: Any) -> Iterator[tuple[tuple[Any, ...], str | ProductProblem]]:
    """(path under the rules, message) of each ``labels`` or ``nodeSelector`` entry of
    a resource's rules that no label can hold (``label_problem``), and of each product
    label value of a ``nodeSelector`` the catalog of products lacks (a ProductProblem)."""
    for j, rule in enumerate(rules):
        when = rule.get("when") or {}
        for part in ("labels", "nodeSelector"):
            for key, values in (when.get(part) or {}).items():
                many = isinstance(values, list)
                for k, value in enumerate(values if many else [values]):
                    where = (j, "when", part, key, k) if many else (j, "when", part, key)
                    problem = label_problem(str(key), str(value))
                    if problem:
                        yield where, problem
                    elif part == "nodeSelector" and PRODUCT_LABEL.fullmatch(str(key)):
                        found = product_problem(str(value), "label")
                        if found is not None:
                            yield where, found
