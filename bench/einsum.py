"""``python -m bench einsum [REPEATS]``: ``ct.einsum`` against ``numpy.einsum`` and ``opt_einsum`` (issue 12).

Each expression is timed REPEATS times (default 21) per engine, alternating engines within a
round so that load on the machine hits them alike; the table shows the medians and the ratio to
``numpy.einsum(optimize=False)`` and ``numpy.einsum(optimize=True)`` measured in the same run.
``ct.einsum`` is timed warm (the certified kernel is cached by subscripts, shapes and dtype; the
first, cold call -- type check, proof, plan -- is shown apart).  Results are checked against
numpy first.  Not a test: nothing is asserted about time.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

import core_teil as ct

#: (name, subscripts, shapes): small operands (call overhead dominates) and large ones
#: (the kernel dominates), from models that use einsum.
CASES: tuple[tuple[str, str, tuple[tuple[int, ...], ...]], ...] = (
    ("matmul 8x8", "ij,jk->ik", ((8, 8), (8, 8))),
    ("interp E=16 n=4", "il,jm,kn,elmn->eijk", ((4, 4), (4, 4), (4, 4), (16, 4, 4, 4))),
    ("trace 64", "ii", ((64, 64),)),
    ("attention scores 8x128x64", "bqd,bkd->bqk", ((8, 128, 64), (8, 128, 64))),
    ("matmul 512", "ij,jk->ik", ((512, 512), (512, 512))),
    ("bilinear 256x64x64", "bi,ij,bj->b", ((256, 64), (64, 64), (256, 64))),
    ("mttkrp 120^3 r=16", "ikl,kj,lj->ij", ((120, 120, 120), (120, 16), (120, 16))),
    ("interp E=20000 n=4", "il,jm,kn,elmn->eijk", ((4, 4), (4, 4), (4, 4), (20000, 4, 4, 4))),
)


def _median_us(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main(argv: list[str]) -> int:
    repeats = int(argv[0]) if argv else 21
    try:
        import opt_einsum
    except ImportError:  # pragma: no cover - opt_einsum is in the dev and bench extras
        opt_einsum = None
    rng = np.random.default_rng(0)
    print(f"ct.einsum (native engine, warm) against numpy.einsum; medians of {repeats}, microseconds")
    head = f"{'case':28s} {'cold ct':>10s} {'ct':>10s} {'np':>10s} {'np opt':>10s} {'opt_einsum':>10s} " \
           f"{'ct/np':>7s} {'ct/np opt':>9s}"
    print(head)
    bad = 0
    for name, spec, shapes in CASES:
        xs = [rng.standard_normal(s) for s in shapes]
        t0 = time.perf_counter()
        got = ct.einsum(spec, *xs)
        cold = (time.perf_counter() - t0) * 1e6
        if not np.allclose(got, np.einsum(spec, *xs, optimize=True), rtol=1e-10, atol=1e-10):
            print(f"{name}: ct.einsum DIFFERS from numpy.einsum")
            bad += 1
            continue
        engines: dict[str, Callable[[], object]] = {
            "ct": lambda spec=spec, xs=xs: ct.einsum(spec, *xs),
            "np": lambda spec=spec, xs=xs: np.einsum(spec, *xs, optimize=False),
            "np opt": lambda spec=spec, xs=xs: np.einsum(spec, *xs, optimize=True),
        }
        if opt_einsum is not None:
            engines["opt_einsum"] = lambda spec=spec, xs=xs: opt_einsum.contract(spec, *xs)
        # numpy.einsum without optimize is O(n^6) on interp E=20000: a few rounds suffice there.
        rounds = max(3, repeats // 7) if np.prod(shapes[-1]) > 10**5 else repeats
        samples: dict[str, list[float]] = {k: [] for k in engines}
        for _ in range(rounds):
            for k, fn in engines.items():
                samples[k].append(_median_us(fn, 1))
        med = {k: statistics.median(v) for k, v in samples.items()}
        opt = f"{med['opt_einsum']:10.1f}" if "opt_einsum" in med else f"{'-':>10s}"
        print(f"{name:28s} {cold:10.0f} {med['ct']:10.1f} {med['np']:10.1f} {med['np opt']:10.1f} {opt} "
              f"{med['ct'] / med['np']:7.2f} {med['ct'] / med['np opt']:9.2f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
