"""Dask or Ray for ``prove --scheduler`` (issue 17; docs/decisions.md, "At scale"): the measurements.

``python -m bench.scale_engines [--kernels N]`` with the library of ``make bench-scale``
(``build/bench-scale/lib``; generated if missing) measures, for two workers on this machine:

* the time to start a local cluster of two worker processes and connect to it
  (``distributed.LocalCluster`` / ``ray.init``),
* the round trip of 1,000 empty tasks,
* proving the first N kernels (no cache) through ``batch.prove_one`` on each, and through
  ``concurrent.futures`` (``batch.run(jobs=2)``) as the baseline.

Ray is not a dependency of core-teil: run this with a Python that has it, e.g. a throwaway
venv with ``pip install ray`` and ``PYTHONPATH=.:.venv/lib/python3.11/site-packages``;
without Ray it measures the other two.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "build" / "bench-scale" / "lib"


def _noop(x: int) -> int:
    return x


def tasks(n: int) -> list[Any]:
    from core_teil.library import Task, collect

    if not LIB.exists():
        from bench.scale import make_library

        make_library(LIB, 1000)
    files = sorted(f for f in collect([str(LIB / "programs"), str(LIB / "einsum")]))
    # alternate the two kinds, as the library does
    return [Task(f) for f in files[:n]]


def timed(fn: Any, repeat: int = 3) -> float:
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def dask_numbers(ts: list[Any]) -> dict[str, float]:
    import logging

    from distributed import Client, LocalCluster

    from core_teil.library import prove_one

    t = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.ERROR)
    client = Client(cluster)
    client.wait_for_workers(2)
    start = time.perf_counter() - t
    try:
        noop = timed(lambda: client.gather(client.map(_noop, range(1000), pure=False)))
        client.gather(client.map(prove_one, ts[:4], pure=False))  # warm the workers' imports
        prove = timed(lambda: client.gather(client.map(prove_one, ts, pure=False)), repeat=1)
        # what `prove --scheduler` does: kernels in groups (batch._run_dask)
        from core_teil import library as batch

        grouped = timed(lambda: batch.run([t.path for t in ts], scheduler=cluster.scheduler_address), repeat=1)
    finally:
        client.close()
        cluster.close()
    return {"start_s": start, "noop_1000_s": noop, "prove_s": prove, "prove_grouped_s": grouped}


def ray_numbers(ts: list[Any]) -> dict[str, float] | None:
    try:
        import ray
    except ImportError:
        return None
    from core_teil.library import prove_one

    t = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    remote_noop = ray.remote(_noop)
    remote_prove = ray.remote(prove_one)
    ray.get([remote_noop.remote(i) for i in range(2)])
    start = time.perf_counter() - t
    try:
        noop = timed(lambda: ray.get([remote_noop.remote(i) for i in range(1000)]))
        ray.get([remote_prove.remote(x) for x in ts[:4]])
        prove = timed(lambda: ray.get([remote_prove.remote(x) for x in ts]), repeat=1)
    finally:
        ray.shutdown()
    return {"start_s": start, "noop_1000_s": noop, "prove_s": prove}


def pool_numbers(ts: list[Any]) -> dict[str, float]:
    from core_teil import library as batch

    paths = [t.path for t in ts]
    batch.run(paths[:4], jobs=2)
    t = time.perf_counter()
    batch.run(paths, jobs=2)
    return {"prove_s": time.perf_counter() - t}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", type=int, default=300)
    args = ap.parse_args()
    ts = tasks(args.kernels)
    out = {"kernels": len(ts), "pool": pool_numbers(ts), "dask": dask_numbers(ts), "ray": ray_numbers(ts)}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
