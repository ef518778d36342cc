"""What the proofs compare (pipeline/compare.py): objects keyed so that generated
template names do not count, and the first difference said with its values."""

from __future__ import annotations

from dra_migrate.pipeline import builds, compare

BUILD = b"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: NAME, namespace: ml, labels: {team: a}}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: ml}
spec:
  template:
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: NAME}]
      containers: [{name: llm, image: IMAGE}]
"""


def test_a_template_is_keyed_by_the_claims_that_use_it_not_by_its_name() -> None:
    one = compare.keyed(compare.loaded(BUILD.replace(b"NAME", b"llm-gpu")))
    other = compare.keyed(
        compare.loaded(BUILD.replace(b"NAME", b"llm-gpu-x7k2").replace(b"team: a", b"team: b"))
    )
    assert compare.difference(one, other) == ""
    [template] = [key for key in one if key[1] == "ResourceClaimTemplate"]
    assert template[3] == "<template of Deployment/llm/spec/template/spec/resourceClaims/0:gpu>"


def test_the_first_difference_names_the_object_the_path_and_both_values() -> None:
    before = BUILD.replace(b"NAME", b"t")
    assert builds.difference(before, before.replace(b"IMAGE", b"other")) == (
        "Deployment ml/llm differs at /spec/template/spec/containers/0/image: "
        '"IMAGE" expected, "other" after'
    )
    gone = before.split(b"---\n")[1]
    assert builds.difference(before, gone) == (
        "ResourceClaimTemplate ml/<template of Deployment/llm/spec/template/spec/"
        "resourceClaims/0:gpu> is missing after"
    )
    assert builds.difference(gone, before).endswith("is extra after")
    two = before.replace(b"[{name: llm, image: IMAGE}]", b"[{name: a}, {name: b}]")
    three = before.replace(b"[{name: llm, image: IMAGE}]", b"[{name: a}, {name: b}, {name: c}]")
    assert builds.difference(two, three) == (
        "Deployment ml/llm differs at /spec/template/spec/containers: "
        '"2 item(s)" expected, "3 item(s)" after'
    )
    assert compare.first_difference({"a": 1}, {"b": 1}, "") == ("/a", 1, compare.ABSENT)
