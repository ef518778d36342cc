"""Benchmark of ``simulate``: 1,000 nodes and 500 GPU workloads, before and after.

Writes a repository of ``--workloads`` GPU workloads (Deployments of one to three
replicas, Jobs, StatefulSets; one to eight GPUs a pod; a third with a node selector
on the product) and a ``kind: Fleet`` of ``--nodes`` nodes (A100 and H100 pools,
tainted, and a CPU pool), then runs ``dra-migrate simulate`` on them in this process
on the local control plane (warm binaries: ``scripts/build-control-plane.sh`` built
them). Prints the wall time of the whole command, of starting the control plane, of
converting and reading the trees, and the create, settle and record times of the
placement, with the counts of pods bound before and after.

    PYTHONPATH=. python benchmarks/bench_simulate.py [--nodes 1000] [--workloads 500]

Not a test: numbers depend on the machine (docs/performance.md has ours).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

POOLS = (("a100", "NVIDIA A100-SXM4-80GB", 0.6), ("h100", "NVIDIA H100 80GB HBM3", 0.3))


def fleet_file(folder: Path, nodes: int) -> Path:
    lines = ["kind: Fleet", "pools:"]
    left = nodes
    for name, product, share in POOLS:
        count = int(nodes * share)
        left -= count
        lines += [
            f"  - name: {name}",
            f"    count: {count}",
            "    gpus: 8",
            f"    product: {product}",
            '    cpu: "96"',
            "    memory: 1Ti",
            "    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]",
        ]
    lines += ["  - name: cpu", f"    count: {left}", '    cpu: "64"']
    path = folder / "fleet.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def repository(folder: Path, workloads: int, seed: int = 36) -> Path:
    rng = random.Random(seed)
    root = folder / "repo"
    root.mkdir()
    for i in range(workloads):
        kind = rng.choice(("Deployment", "Deployment", "Job", "StatefulSet"))
        gpus = rng.choice((1, 1, 2, 4, 8))
        replicas = rng.choice((1, 1, 2, 3)) if kind != "Job" else 1
        pool = rng.choice(POOLS)
        selector = (
            f"      nodeSelector:\n        nvidia.com/gpu.product: {pool[1].replace(' ', '-')}\n"
            if rng.random() < 0.33
            else ""
        )
        name = f"w{i:04d}"
        spec = (
            f"    metadata:\n      labels: {{app: {name}}}\n    spec:\n{selector}"
            + ("      restartPolicy: Never\n" if kind == "Job" else "")
            + "      containers:\n        - name: main\n          image: example/app:1\n"
            f"          resources:\n            limits:\n              nvidia.com/gpu: {gpus}\n"
        )
        head = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "Job": "batch/v1"}[kind]
        body = f"apiVersion: {head}\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: team-{i % 20}\nspec:\n"
        if kind != "Job":
            body += f"  replicas: {replicas}\n  selector:\n    matchLabels: {{app: {name}}}\n"
        if kind == "StatefulSet":
            body += f"  serviceName: {name}\n"
        body += "  template:\n" + spec
        (root / f"{name}.yaml").write_text(body, encoding="utf-8")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--workloads", type=int, default=500)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()

    from dra_migrate.cli.app import main as cli
    from dra_migrate.simulate import control_plane as cp

    cp.find_binaries()  # warm binaries, or the error that says how to build them
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        fleet = fleet_file(folder, args.nodes)
        repo = repository(folder, args.workloads)
        os.chdir(folder)
        out = io.StringIO()
        start = time.perf_counter()
        status = 0
        with contextlib.redirect_stdout(out):
            try:
                cli(
                    [
                        "simulate",
                        "--fleet",
                        str(fleet),
                        "--format",
                        "json",
                        "--timeout",
                        str(args.timeout),
                        "repo",
                    ]
                )
            except SystemExit as done:
                status = int(done.code or 0)
        wall = time.perf_counter() - start
        data = json.loads(out.getvalue())
    sim = data["simulation"]
    rows = sim["workloads"]
    bound = {p: sum((r[p] or {}).get("bound", 0) for r in rows) for p in ("before", "after")}
    pods = sum((r["before"] or {}).get("created", 0) for r in rows)
    print(
        f"simulate: {args.nodes} nodes, {len(rows)} workloads, {pods} pods a phase; "
        f"exit {status}; {sim['holds']} hold, {sim['differs']} differ; quiet {sim['quiet']}"
    )
    print(f"  bound before {bound['before']}, after {bound['after']}")
    print(f"  wall {wall:.1f} s; on the API server: {sim['seconds']}")
    codes: dict[str, int] = {}
    for f in data["findings"]:
        codes[f["code"]] = codes.get(f["code"], 0) + 1
    print(f"  findings: {dict(sorted(codes.items()))}")
    del repo


if __name__ == "__main__":
    main()
