"""Benchmark: the diff of a converted file with many documents (issue 6).

``python benchmarks/bench_diff.py 20000`` converts nothing: it builds the
original and converted text of N one-GPU Pods the way ``convert`` does
(the splices of the edit plan), then times the diff through the changed
regions (what ``convert`` prints) and, with ``--whole``, difflib over the
whole file (what it did before). Numbers go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dra_migrate.convert import writer

OLD = """apiVersion: v1
kind: Pod
metadata:
  name: p{i}
spec:
  containers:
  - name: c
    image: i
    resources:
      limits:
        nvidia.com/gpu: 1
"""
NEW = """apiVersion: v1
kind: Pod
metadata:
  name: p{i}
spec:
  containers:
  - name: c
    image: i
    resources:
      claims:
      - name: gpu
        request: c
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: p{i}-gpu
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: p{i}-gpu
spec:
  spec:
    devices:
      requests:
      - name: c
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 1
"""


def build(n: int) -> tuple[bytes, bytes, list[tuple[int, int, int, int]]]:
    old_lines = OLD.count("\n") + 1  # with the --- separator
    new_lines = NEW.count("\n") + 1
    old = "---\n".join(OLD.format(i=i) for i in range(n)).encode()
    new = "---\n".join(NEW.format(i=i) for i in range(n)).encode()
    # each document: lines 9..11 (limits) become lines 9..28
    regions = [
        (i * old_lines + 9, i * old_lines + 11, i * new_lines + 9, i * new_lines + 28)
        for i in range(n)
    ]
    return old, new, regions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("documents", type=int, nargs="?", default=10000)
    parser.add_argument("--whole", action="store_true", help="also time difflib on the whole file")
    args = parser.parse_args()
    old, new, regions = build(args.documents)
    start = time.perf_counter()
    writer.unified_diff("many.yaml", old, new, regions)
    took = time.perf_counter() - start
    assert writer._opcodes(writer._lines(old), writer._lines(new), regions) is not None
    print(f"{args.documents} documents, {len(old) / 1e6:.1f} MB: region diff {took:.2f} s")
    if args.whole:  # what convert did before: difflib over every line of the file
        import difflib

        a, b = old.decode().splitlines(True), new.decode().splitlines(True)
        start = time.perf_counter()
        "".join(difflib.unified_diff(a, b, "a/many.yaml", "b/many.yaml"))
        print(f"  whole-file difflib {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
