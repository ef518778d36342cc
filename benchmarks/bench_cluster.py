"""Benchmark of cluster mode: ``inventory --cluster`` on 5,000 pods and 500 nodes.

The test API server of tests/helpers/fake_apiserver.py serves the cluster on
127.0.0.1 (in this process, on its own thread); the real ``kubernetes`` client
reads it page by page, as it would read a real API server. Prints wall time,
requests, and the peak of memory that Python allocated while the inventory was
built (tracemalloc), beside the size of the pod list as JSON: the peak must
stay well below it, as only one page is held at a time.

    PYTHONPATH=. python benchmarks/bench_cluster.py [--pods 5000] [--nodes 500] [--page-size 500]

Not a test: numbers depend on the machine (docs/performance.md has ours).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dra_migrate import cluster
from dra_migrate.convert.mapping import load_config
from tests.helpers.fake_apiserver import large_cluster, serve, write_kubeconfig


def _serve(pods: int, nodes: int, conn: Any) -> None:
    """The test API server, in its own process: it must not share the GIL or the
    memory count with the reader."""
    state = large_cluster(pods, nodes)
    with serve(state) as url:
        conn.send((url, len(json.dumps(state.objects["pods"]))))
        conn.recv()  # until the benchmark is done
        conn.send(len(state.requests))  # requests made, all GET (anything else got 405)
        conn.send({m for m, _p in state.requests})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--page-size", type=int, default=cluster.DEFAULT_PAGE_SIZE)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    config = load_config(None)
    import kubernetes.client  # noqa: F401  (imported once, outside the timings)

    parent, child = multiprocessing.Pipe()
    server = multiprocessing.Process(target=_serve, args=(args.pods, args.nodes, child))
    server.start()
    url, pods_json = parent.recv()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = write_kubeconfig(Path(tmp) / "kubeconfig", url)
            connection = cluster.Connection(str(kubeconfig), page_size=args.page_size)
            times, cpu = [], []
            for _ in range(args.repeat):
                start, start_cpu = time.perf_counter(), time.process_time()
                reader = cluster.LiveReader(connection)
                inventory, findings = cluster.build_inventory(reader, config, None)
                reader.close()
                times.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
            tracemalloc.start()
            reader = cluster.LiveReader(connection)
            cluster.build_inventory(reader, config, None)
            reader.close()
            _current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    finally:
        parent.send("done")
        requests = parent.recv()
        methods = parent.recv()
        server.join()

    s = inventory.summary()
    print(f"cluster: {args.pods} pods, {args.nodes} nodes, page size {args.page_size}")
    print(
        f"inventory: {s['workloads']} workloads, {s['gpuPods']} GPU pods, {s['gpuNodes']} GPU "
        f"nodes, {s['draDevices']} DRA devices, {s['pendingClaims']} pending claims, "
        f"{len(findings)} findings"
    )
    print(f"requests: {requests // (args.repeat + 1)} a run; methods: {', '.join(sorted(methods))}")
    print(f"seconds: best {min(times):.2f}, runs {', '.join(f'{t:.2f}' for t in times)}")
    print(
        f"CPU seconds of the reader (server apart): best {min(cpu):.2f}, runs "
        f"{', '.join(f'{t:.2f}' for t in cpu)}; the first run imports the client"
    )
    print(
        f"peak Python memory while reading: {peak / 2**20:.1f} MiB "
        f"(the pod list as JSON: {pods_json / 2**20:.1f} MiB)"
    )


if __name__ == "__main__":
    main()
