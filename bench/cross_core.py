"""``python -m bench cross-core [SECONDS]``: why mttkrp on two threads is sometimes a third slower.

This machine's two cores pass between two states while a process runs, whatever runs in it:
``numpy.matmul`` 1024 on two threads takes about 20.7 ms in one and 23.3 ms in the other, and
the state can change from one second to the next.  In the slow state a cache line written on
one core and read on the other costs more.  The native engine's mttkrp streams each GEMM
chunk through a cache-sized buffer:
both of OpenBLAS's threads write the buffer, and the calling thread reads it back for the
reduction.  That is the pattern the slow state punishes.  (Since ``python -m bench`` imports
core_teil before numpy, the native kernel here calls its GEMMs inside its own team instead:
docs/decisions.md, "GEMMs inside the team"; the GEMM columns still measure the old pattern.)
The hand-written numpy (one GEMM into a 125 MB temporary, then ``numpy.einsum``) goes through
memory instead and keeps its time.

For SECONDS (default 60), each round first times one ``numpy.matmul`` 1024, which names the
state (below 21.5 ms: fast). It then times:

- the native kernel and the hand-written numpy;
- the native engine's chunked GEMMs alone (500 x 250 x 250 each, 125 of them);
- the same GEMMs with a reduction after each one, which reads either the chunk just written
  or another buffer of the same size.

The medians are printed per state. Not a test: nothing is asserted about time. Run it with
nothing else running; the states come from the host, not from this process.
"""

from __future__ import annotations

import collections
import statistics
import time
from collections.abc import Callable

import numpy as np

import core_teil as ct
from bench import _mttkrp_hand
from core_teil.native.planner import STREAM_CHUNK_ELEMENTS

N = 250
#: The streamed plan's chunk: STREAM_CHUNK_ELEMENTS // (K * J) batch elements of K rows each.
ROWS = N * max(1, STREAM_CHUNK_ELEMENTS // (N * N))
FAST_MS = 21.5


def main(argv: list[str]) -> int:
    seconds = float(argv[0]) if argv else 60.0
    rng = np.random.default_rng(0)
    B, C, D = rng.random((N, N, N)), rng.random((N, N)), rng.random((N, N))
    kernel = ct.compile(ct.load("examples/mttkrp.teil"), params={"I": N, "J": N, "K": N, "L": N})
    rows = B.reshape(N * N, N)
    chunk, other, A = np.empty((ROWS, N)), rng.random((ROWS, N)), np.empty((N, N))

    def hand() -> np.ndarray:
        return _mttkrp_hand(B, C, D)

    def chunked(read: np.ndarray | None) -> Callable[[], None]:
        def run() -> None:
            for lo in range(0, N * N, ROWS):
                np.matmul(rows[lo:lo + ROWS], D, out=chunk)
                if read is not None:
                    per = ROWS // N
                    np.einsum("ikj,kj->ij", read.reshape(per, N, N), C, out=A[lo // N:lo // N + per])
        return run

    engines: dict[str, Callable[[], object]] = {
        "native": lambda: kernel(B=B, C=C, D=D), "hand numpy": hand,
        "GEMMs alone": chunked(None), "GEMMs, reduce the chunk": chunked(chunk),
        "GEMMs, reduce another buffer": chunked(other)}
    if not np.allclose(engines["native"]()["A"], hand(), rtol=1e-10):  # type: ignore[index]
        print("native and hand numpy disagree")
        return 1
    a, b = rng.random((1024, 1024)), rng.random((1024, 1024))
    samples: dict[str, dict[str, list[float]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    start = time.time()
    while time.time() - start < seconds:
        t = time.perf_counter()
        a @ b
        probe = (time.perf_counter() - t) * 1e3
        state = samples["fast" if probe < FAST_MS else "slow"]
        state["matmul 1024 (probe)"].append(probe)
        for name, fn in engines.items():
            t = time.perf_counter()
            fn()
            state[name].append((time.perf_counter() - t) * 1e3)
    print(f"mttkrp {N}^3, medians in ms per state of the two cores (state: numpy.matmul 1024 below "
          f"{FAST_MS} ms is fast)")
    names = ["matmul 1024 (probe)", *engines]
    print(f"{'state':6s} {'rounds':>6s} " + " ".join(f"{n:>28s}" for n in names))
    for state_name in ("fast", "slow"):
        d = samples.get(state_name)
        if d:
            print(f"{state_name:6s} {len(d['native']):>6d} "
                  + " ".join(f"{statistics.median(d[n]):>28.1f}" for n in names))
    return 0
