"""What the proofs compare (pipeline/compare.py): objects keyed so that generated
template names do not count, and the first difference said with its values (DRA231 of
--verify-builds; renders' own rows are in test_renders.py)."""

from __future__ import annotations

from dra_migrate.pipeline import builds, compare
from tests.pipeline.test_renders import CONVERTED

TEMPLATE = "<template of Deployment/llm/spec/template/spec/resourceClaims/0:gpu>"


def test_a_template_is_keyed_by_the_claims_that_use_it_not_by_its_name() -> None:
    renamed = CONVERTED.replace(b"llm-gpu", b"llm-gpu-x7k2").replace(
        b"{name: llm-gpu-x7k2, namespace: ml}",
        b"{name: llm-gpu-x7k2, namespace: ml, labels: {a: b}}",
    )
    one, other = compare.keyed(compare.loaded(CONVERTED)), compare.keyed(compare.loaded(renamed))
    assert compare.difference(one, other) == ""
    assert ("resource.k8s.io/v1", "ResourceClaimTemplate", "ml", TEMPLATE) in one


def test_the_first_difference_names_the_object_the_path_and_both_values() -> None:
    assert builds.difference(CONVERTED, CONVERTED.replace(b"image: llm:1", b"image: llm:2")) == (
        "Deployment ml/llm differs at /spec/template/spec/containers/0/image: "
        '"llm:1" expected, "llm:2" after'
    )
    deployment = CONVERTED.split(b"---\n")[0]
    assert builds.difference(CONVERTED, deployment) == (
        f"ResourceClaimTemplate ml/{TEMPLATE} is missing after"
    )
    assert builds.difference(deployment, CONVERTED).endswith("is extra after")
    sidecar = b"        - {name: proxy, image: envoy}\n"
    two = CONVERTED.replace(b"      resourceClaims:", sidecar + b"      resourceClaims:")
    assert builds.difference(CONVERTED, two) == (
        "Deployment ml/llm differs at /spec/template/spec/containers: "
        '"1 item(s)" expected, "2 item(s)" after'
    )
    assert compare.first_difference({"a": 1}, {"b": 1}, "") == ("/a", 1, compare.ABSENT)
