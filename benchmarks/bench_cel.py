"""Benchmark: CEL selectors evaluated on ResourceSlice devices (``validate --resource-slices``).

Builds a fleet of NVIDIA GPUs as the DRA driver publishes them (8 a node, each
with its own uuid, PCI bus ID and index), then evaluates selectors on every
device the way ``validate`` does: compile once, evaluate on each device.
Prints the median of several runs, each with cold caches (the one-time start
cost of building the CEL parser is measured apart). Quoted in docs/performance.md.

With ``--cel-expr-python`` (``pip install cel-expr-python``) each selector is also
compiled and evaluated by cel-expr-python, in the same run, in the environment of
benchmarks/cel_engines.py; each device's data for it is built before the clock
starts. Quoted in docs/validate.md ("The CEL engine").

    PYTHONPATH=. python benchmarks/bench_cel.py [--devices 10000] [--runs 5] [--cel-expr-python]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from dra_migrate import cel

SELECTORS = {
    "driver": 'device.driver == "gpu.nvidia.com"',
    "product": "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'",
    "semver+quantity": (
        "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0')) && "
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"
    ),
    "per-device uuid": "device.attributes['gpu.nvidia.com'].uuid.startsWith('GPU-0')",
    "uuid equality": (
        "device.attributes['gpu.nvidia.com'].uuid == 'GPU-00000000-0000-0000-0000-000000000000'"
    ),
    "map iteration": "device.attributes['gpu.nvidia.com'].exists(n, n == 'cudaComputeCapability')",
    "string functions": (
        "device.attributes['gpu.nvidia.com'].uuid.lowerAscii().startsWith('gpu-0')"
    ),
    # other string functions are evaluated by cel-python on each device (no direct path)
    "cel-python path": "device.attributes['gpu.nvidia.com'].uuid.trim().startsWith('GPU-0')",
}


def fleet(count: int) -> list[cel.Device]:
    slices: list[dict[str, Any]] = []
    for node in range((count + 7) // 8):
        devices = []
        for i in range(min(8, count - node * 8)):
            devices.append(
                {
                    "name": f"gpu-{i}",
                    "attributes": {
                        "type": {"string": "gpu"},
                        "uuid": {"string": f"GPU-{node:05x}{i:03x}-0000-0000-0000-000000000000"},
                        "productName": {"string": "NVIDIA H100 80GB HBM3"},
                        "brand": {"string": "Nvidia"},
                        "architecture": {"string": "Hopper"},
                        "cudaComputeCapability": {"version": "9.0.0"},
                        "driverVersion": {"version": "550.54.15"},
                        "cudaDriverVersion": {"version": "12.4.0"},
                        "index": {"int": i},
                        "resource.kubernetes.io/pciBusID": {"string": f"0000:{i:02x}:00.0"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                }
            )
        slices.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "spec": {
                    "driver": "gpu.nvidia.com",
                    "nodeName": f"node-{node}",
                    "devices": devices,
                },
            }
        )
    return cel.devices_from_resource_slices(slices)


def run(expression: str, devices: list[cel.Device]) -> tuple[float, int]:
    cel.compile_selector.cache_clear()
    start = time.perf_counter()
    matched = sum(1 for d in devices if cel.evaluate_selector(expression, d))
    return time.perf_counter() - start, matched


def run_theirs(env: Any, expression: str, data: list[dict[str, Any]]) -> tuple[float, int] | str:
    """cel-expr-python's time and matches, or why the selector does not compile."""
    start = time.perf_counter()
    try:
        program = env.compile(expression)
    except Exception as exc:
        return str(exc).splitlines()[0]
    matched = sum(1 for d in data if program.eval(data=d).value() is True)
    return time.perf_counter() - start, matched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cel-expr-python", action="store_true")
    args = parser.parse_args()
    devices = fleet(args.devices)
    env = None
    if args.cel_expr_python:
        import cel_engines  # type: ignore[import-not-found]  # benchmarks/, the script's folder
        from cel_expr_python import cel as cx  # type: ignore[import-not-found]

        env = cel_engines.environment(cx)
        data = [cel_engines.device_data(d) for d in devices]
    start = time.perf_counter()
    cel.evaluate_selector("true", devices[0])
    print(f"start (CEL grammar and runtime, once a process): {time.perf_counter() - start:.3f} s")
    print(f"{len(devices):,} devices, median of {args.runs} runs with cold caches:")
    for label, expression in SELECTORS.items():
        times = []
        matched = 0
        for _ in range(args.runs):
            elapsed, matched = run(expression, devices)
            times.append(elapsed)
        print(f"  {label:18} {statistics.median(times):8.3f} s  ({matched:,} match)")
        if env is None:
            continue
        theirs = [run_theirs(env, expression, data) for _ in range(args.runs)]
        if isinstance(theirs[0], str):
            print(f"  {'':18} cel-expr-python: does not compile ({theirs[0]})")
            continue
        median = statistics.median(t[0] for t in theirs if not isinstance(t, str))
        their_matched = theirs[0][1]
        print(f"  {'':18} {median:8.3f} s  ({their_matched:,} match)  cel-expr-python")


if __name__ == "__main__":
    main()
