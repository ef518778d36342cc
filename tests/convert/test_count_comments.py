"""A comment on the GPU count line stays with the count: on the ``count:`` line of the
generated ResourceClaimTemplate, not on the claim reference (issue 27). The golden
cases ``fidelity-comment-on-removed-line``, ``fidelity-crlf`` and
``stream-gpu-after-many`` hold the plain Deployment and Pod shapes; these hold a
``kind: List``, the v1beta1 shape (no ``exactly``), two containers and an init
container, whose extra devices are no one request's count."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli_runner import invoke

JOB = """\
apiVersion: v1
kind: List
items:
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: train
  spec:
    template:
      spec:
        containers:
        - name: trainer
          image: example/train:1
          resources:
            limits:
              nvidia.com/gpu: 8  # Request 8 GPUs (adjust to the node size)
"""

TWO = """\
apiVersion: v1
kind: Pod
metadata:
  name: two
spec:
  initContainers:
  - name: warm
    image: example/warm:1
    resources:
      limits:
        nvidia.com/gpu: 3  # the warm-up needs three
  containers:
  - name: a
    image: example/a:1
    resources:
      limits:
        nvidia.com/gpu: 1  # a's one
  - name: b
    image: example/b:1
    resources:
      requests:
        nvidia.com/gpu: 2  # must equal the limit
      limits:
        nvidia.com/gpu: 2  # b's two
"""


def _convert(tmp_path: Path, text: str, *args: str) -> str:
    path = tmp_path / "in.yaml"
    path.write_text(text)
    result = invoke(["convert", "--write", *args, str(path)])
    assert result.exit_code == 0, result.output
    return path.read_text()


@pytest.mark.parametrize(
    ("target", "count_line"),
    [
        ("v1", "            count: 8  # Request 8 GPUs (adjust to the node size)\n"),
        ("v1beta1", "          count: 8  # Request 8 GPUs (adjust to the node size)\n"),
    ],
)
def test_a_comment_on_the_count_stays_with_the_count(
    tmp_path: Path, target: str, count_line: str
) -> None:
    text = _convert(tmp_path, JOB, "--target", target)
    assert count_line in text
    assert text.count("Request 8 GPUs") == 1, "moved, not copied"
    assert "            - name: gpu\n              request: trainer\n" in text


def test_each_count_keeps_its_own_comments(tmp_path: Path) -> None:
    text = _convert(tmp_path, TWO)
    template = text.split("kind: ResourceClaimTemplate", 1)[1]
    assert (
        "      - name: a\n        exactly:\n          deviceClassName: gpu.nvidia.com\n"
        "          count: 1  # a's one\n"
    ) in template
    # the requests line's comment above the count, the limit's trailing it
    assert "          # must equal the limit\n          count: 2  # b's two\n" in template
    # an init container's extra devices are no one ask's count: its comment stays at
    # its claim reference, as before
    pod = text.split("kind: ResourceClaimTemplate", 1)[0]
    assert "# the warm-up needs three" in pod
    assert "the warm-up" not in template
