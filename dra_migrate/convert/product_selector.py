"""A pod that selects its nodes by GPU product (``nvidia.com/gpu.product``, the label
GPU feature discovery writes): what the conversion does with it (DRA208), and a
product no GPU has, that is a catalogued one misspelled (DRA534). The catalog of
products (k8s/products.py) is read only when a pod names a product."""

from __future__ import annotations

from collections.abc import Iterable

from dra_migrate.convert.mapping import Context
from dra_migrate.report.findings import Finding, finding

PRODUCT_LABEL = "nvidia.com/gpu.product"


def product_findings(
    ctx: Context, chosen: Iterable[str], path: str, line: int, col: int
) -> list[Finding]:
    """DRA208 for a pod that selects nodes by product (``chosen``: the device classes a
    mapping rule chose for its requests), and DRA534 for each product it names that is
    a catalogued one misspelled (no node has it: the pod stays Pending, before and
    after the conversion)."""
    products = ctx.node_selector.get(PRODUCT_LABEL)
    if not products:
        return []
    shown = ", ".join(sorted(products))
    classes = sorted(set(chosen))
    if classes:
        message = (
            f"pod selects nodes by {PRODUCT_LABEL} ({shown}); a mapping rule chose device "
            f"class {', '.join(classes)}"
        )
    else:
        message = (
            f"pod selects nodes by {PRODUCT_LABEL} ({shown}); the claim does not select "
            "a product, the node selector keeps doing so"
        )
    found = [
        finding(
            "DRA208",
            path,
            line,
            col,
            message,
            "" if classes else "a mapping rule on nodeSelector can pick a device class or selector",
        )
    ]
    from dra_migrate.k8s.names import LABEL_VALUE, MAX_LABEL_NAME
    from dra_migrate.k8s.products import load_products

    for value in sorted(products):
        if len(value) > MAX_LABEL_NAME or not LABEL_VALUE.fullmatch(value):
            continue  # a template's text, or no label value at all (the API server says so)
        verdict = load_products().check(value, "label")
        if verdict.misspelled:
            found.append(
                finding(
                    "DRA534",
                    path,
                    line,
                    col,
                    f"pod selects nodes by {PRODUCT_LABEL} {value!r}, which no GPU has: did you "
                    f"mean {verdict.suggestion!r}? ({verdict.why}); the pod is Pending on "
                    "every node, before the conversion and after it",
                    f"correct the value to {verdict.suggestion!r}, the label GPU feature "
                    "discovery writes",
                )
            )
    return found
