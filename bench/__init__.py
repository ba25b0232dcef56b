"""``make bench``: the native engine against numpy.einsum, opt_einsum and hand-written numpy (issue 5).

Kernels and sizes from the TeML paper (003, Table 2) and the matrix products
of paper 000; program texts are the project's ``examples/*.teil``.  Each
kernel is timed, in one process and interleaved round-robin (so that load
from other processes hits every column alike), for: the native engine
unpadded and padded (``pad=8``), ``numpy.einsum(optimize=True)``,
``opt_einsum.contract``, a hand-written tensordot/matmul chain, and the
memory floor: a numpy copy of as many bytes as the kernel must move (it reads
its inputs and writes its outputs once, so the floor copies
``(inputs + outputs) / 2`` bytes: a copy reads and writes each byte).
Medians of at least ``REPEAT`` rounds, and of more for a kernel whose round is short
(as many as fit in ``BUDGET_S`` seconds, at most ``MAX_ROUNDS``): a 1% margin, as on the
matrix products, needs them to be told from noise.  Each round runs the columns in a
seeded random order, so that no column always follows the same neighbour (whose
caches, or BLAS threads still awake, it would inherit).  GFLOP/s of the native engine from the flop count
of the lifted (O(n^4)) contraction order.  The peak memory of ``interp``
(tracemalloc: numpy reports its buffers to it) is compared with the bytes of
its inputs and outputs.  Results go to ``bench/results.json`` and a bar chart
``bench/results.png``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
REPEAT = int(os.environ.get("CORE_TEIL_BENCH_REPEAT", "9"))
BUDGET_S = 5.0
MAX_ROUNDS = 41


@dataclass
class Kernel:
    """One benchmark: a program, its parameters and inputs, and the other implementations."""

    name: str
    path: str
    params: dict[str, int]
    shapes: dict[str, tuple[int, ...]]
    einsum: Callable[..., np.ndarray]
    opt: Callable[..., np.ndarray]
    hand: Callable[..., np.ndarray]
    output: str
    flops: float
    nonzero: tuple[str, ...] = ()  # inputs used as divisors


@dataclass
class Row:
    name: str
    ms: dict[str, float]
    gflops: float
    vs_einsum: dict[str, float]
    agree: bool
    plan: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _interp_einsum(A: np.ndarray, u: np.ndarray) -> np.ndarray:
    return np.einsum("il,jm,kn,elmn->eijk", A, A, A, u, optimize=True)


def _interp_opt(A: np.ndarray, u: np.ndarray) -> np.ndarray:
    import opt_einsum

    return opt_einsum.contract("il,jm,kn,elmn->eijk", A, A, A, u)


def _interp_hand(A: np.ndarray, u: np.ndarray) -> np.ndarray:
    t = np.tensordot(u, A, axes=([1], [1]))  # [e, m, n, i]
    t = np.tensordot(t, A, axes=([1], [1]))  # [e, n, i, j]
    return np.tensordot(t, A, axes=([1], [1]))  # [e, i, j, k]


def _helm_einsum(S: np.ndarray, D: np.ndarray, u: np.ndarray) -> np.ndarray:
    t = np.einsum("il,jm,kn,elmn->eijk", S, S, S, u, optimize=True)
    return np.einsum("li,mj,nk,elmn->eijk", S, S, S, t / D, optimize=True)


def _helm_opt(S: np.ndarray, D: np.ndarray, u: np.ndarray) -> np.ndarray:
    import opt_einsum

    t = opt_einsum.contract("il,jm,kn,elmn->eijk", S, S, S, u)
    return opt_einsum.contract("li,mj,nk,elmn->eijk", S, S, S, t / D)


def _helm_hand(S: np.ndarray, D: np.ndarray, u: np.ndarray) -> np.ndarray:
    t = np.tensordot(u, S, axes=([1], [1]))
    t = np.tensordot(t, S, axes=([1], [1]))
    t = np.tensordot(t, S, axes=([1], [1]))
    r = t / D
    v = np.tensordot(r, S, axes=([1], [0]))
    v = np.tensordot(v, S, axes=([1], [0]))
    return np.tensordot(v, S, axes=([1], [0]))


def _mttkrp_opt(B: np.ndarray, C: np.ndarray, D: np.ndarray) -> np.ndarray:
    import opt_einsum

    return opt_einsum.contract("ikl,kj,lj->ij", B, C, D)


def _mttkrp_hand(B: np.ndarray, C: np.ndarray, D: np.ndarray) -> np.ndarray:
    i, k, l = B.shape
    t = (B.reshape(i * k, l) @ D).reshape(i, k, -1)  # [i, k, j]
    return np.einsum("ikj,kj->ij", t, C)


def _opt(spec: str) -> Callable[..., np.ndarray]:
    def run(*xs: np.ndarray) -> np.ndarray:
        import opt_einsum

        return opt_einsum.contract(spec, *xs)

    return run


def kernels() -> list[Kernel]:
    n = 1024
    return [
        Kernel("matmul 1024", "examples/matmul.teil", {"l": n, "m": n, "n": n},
               {"A": (n, n), "B": (n, n)},
               lambda A, B: np.einsum("ij,jk->ik", A, B, optimize=True), _opt("ij,jk->ik"),
               lambda A, B: A @ B, "C", 2.0 * n**3),
        Kernel("transposed matmul 1024", "examples/tvm_transposed_matmul.teil", {"m": n, "n": n, "h": n},
               {"A": (n, n), "B": (n, n)},
               lambda A, B: np.einsum("ky,kx->yx", A, B, optimize=True), _opt("ky,kx->yx"),
               lambda A, B: A.T @ B, "C", 2.0 * n**3),
        Kernel("bmm 8192x72x26", "examples/bmm.teil", {"nb": 8192, "ni": 72, "nj": 72, "nk": 26},
               {"A": (8192, 72, 26), "B": (8192, 26, 72)},
               lambda A, B: np.einsum("bik,bkj->bij", A, B, optimize=True), _opt("bik,bkj->bij"),
               lambda A, B: np.matmul(A, B), "C", 2.0 * 8192 * 72 * 72 * 26),
        Kernel("interp E=50000 n=7", "examples/interp.teil", {"E": 50000, "m": 7, "n": 7},
               {"A": (7, 7), "u": (50000, 7, 7, 7)}, _interp_einsum, _interp_opt, _interp_hand, "v",
               3 * 2.0 * 50000 * 7**4),
        Kernel("interp E=20000 n=4", "examples/interp.teil", {"E": 20000, "m": 4, "n": 4},
               {"A": (4, 4), "u": (20000, 4, 4, 4)}, _interp_einsum, _interp_opt, _interp_hand, "v",
               3 * 2.0 * 20000 * 4**4),
        Kernel("helm E=5000 n=13", "examples/helm.teil", {"E": 5000, "n": 13},
               {"S": (13, 13), "D": (13, 13, 13), "u": (5000, 13, 13, 13)}, _helm_einsum, _helm_opt,
               _helm_hand, "v", 6 * 2.0 * 5000 * 13**4 + 5000 * 13**3, nonzero=("D",)),
        Kernel("mttkrp 250^3", "examples/mttkrp.teil", {"I": 250, "J": 250, "K": 250, "L": 250},
               {"B": (250, 250, 250), "C": (250, 250), "D": (250, 250)},
               lambda B, C, D: np.einsum("ikl,kj,lj->ij", B, C, D, optimize=True), _mttkrp_opt,
               _mttkrp_hand, "A", 2.0 * 250**4 + 2.0 * 250**3),
    ]


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def peak_bytes(fn: Callable[[], Any]) -> int:
    """Peak of the bytes allocated while ``fn`` runs (numpy reports its buffers to tracemalloc)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    out = fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    del out
    return peak


def run_kernel(k: Kernel, rng: np.random.Generator) -> Row:
    import core_teil as ct
    from core_teil.native import engine as native
    from core_teil.native import planner

    program = ct.load(str(ROOT / k.path))
    inputs = {}
    for name, shape in k.shapes.items():
        x = rng.standard_normal(shape)
        if name in k.nonzero:
            x = np.abs(x) + 1.0
        inputs[name] = x
    args = list(inputs.values())
    kern = native.compile(program, k.params)
    kpad = native.compile(program, k.params, 8)
    in_bytes = sum(x.nbytes for x in args)
    ref = k.hand(*args)
    out_bytes = ref.nbytes
    floor_src = np.ones(max((in_bytes + out_bytes) // 16, 1))
    methods: dict[str, Callable[[], Any]] = {
        "native": lambda: kern(**inputs),
        "native pad 8": lambda: kpad(**inputs),
        "numpy.einsum": lambda: k.einsum(*args),
        "opt_einsum": lambda: k.opt(*args),
        "hand numpy": lambda: k.hand(*args),
        "memory floor": lambda: np.copy(floor_src),
    }
    got = {"native": kern(**inputs)[k.output], "native pad 8": kpad(**inputs)[k.output]}
    agree = all(np.allclose(g, ref, rtol=1e-8, atol=1e-8 * float(np.abs(ref).max() or 1)) for g in got.values())
    for m in ("numpy.einsum", "opt_einsum"):
        agree &= bool(np.allclose(methods[m](), ref, rtol=1e-8, atol=1e-8 * float(np.abs(ref).max() or 1)))
    samples: dict[str, list[float]] = {m: [] for m in methods}
    order = list(methods)
    shuffle = random.Random(len(k.name))
    rounds, r = REPEAT, 0
    while r < rounds:  # interleaved: load from other processes hits every column alike
        start = time.perf_counter()
        shuffle.shuffle(order)
        for m in order:
            t = time.perf_counter()
            out = methods[m]()
            samples[m].append(time.perf_counter() - t)
            del out
        if r == 0:
            rounds = max(REPEAT, min(MAX_ROUNDS, int(BUDGET_S / (time.perf_counter() - start))))
        r += 1
    ms = {m: median_ms(s) for m, s in samples.items()}
    row = Row(k.name, ms, k.flops / (ms["native"] * 1e-3) / 1e9,
              {m: ms["numpy.einsum"] / ms[m] for m in ("native", "native pad 8", "opt_einsum", "hand numpy")},
              bool(agree), planner.describe(kern.plans[0]))
    # the columns of a round run back to back, so each round's ratio shows how steady a verdict is
    ratios = sorted(e / n for e, n in zip(samples["numpy.einsum"], samples["native"], strict=True))
    row.extra = {"input_bytes": in_bytes, "output_bytes": out_bytes,
                 "einsum/native per round": ratios,
                 "rounds native faster": sum(x > 1.0 for x in ratios), "rounds": rounds}
    if k.name.startswith("interp"):
        for m in ("native", "native pad 8", "numpy.einsum", "hand numpy"):
            row.extra[f"peak_{m}"] = (in_bytes + peak_bytes(methods[m])) / (in_bytes + out_bytes)
    return row


COLUMNS = ["native", "native pad 8", "numpy.einsum", "opt_einsum", "hand numpy", "memory floor"]


def table(rows: list[Row]) -> str:
    head = f"{'kernel':<24}" + "".join(f"{c:>14}" for c in COLUMNS) + f"{'GFLOP/s':>9}" + \
        f"{'einsum/native':>15}{'einsum/pad':>12}{'won':>7}{'ok':>4}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.name:<24}" + "".join(f"{r.ms[c]:>11.1f} ms" for c in COLUMNS) + f"{r.gflops:>9.1f}"
                     + f"{r.vs_einsum['native']:>14.2f}x{r.vs_einsum['native pad 8']:>11.2f}x"
                     + f"{r.extra.get('rounds native faster', 0):>4}/{r.extra.get('rounds', REPEAT):<2}"
                     + f"{'yes' if r.agree else 'NO':>4}")
    for r in rows:
        if "peak_native" in r.extra:
            lines.append(f"peak memory of {r.name} / (inputs + outputs): " + ", ".join(
                f"{m} {r.extra['peak_' + m]:.2f}x" for m in ("native", "native pad 8", "numpy.einsum", "hand numpy")))
    lines.append("won: rounds in which native was faster than numpy.einsum, of the rounds run "
                 f"(at least {REPEAT}, more for short kernels)")
    return "\n".join(lines)


def targets(rows: list[Row]) -> list[tuple[str, bool]]:
    by = {r.name: r for r in rows}
    closest = min(rows, key=lambda r: r.vs_einsum["native"])
    won = closest.extra.get("rounds native faster", 0)
    out = [
        ("interp E=50000 n=7 >= 3x numpy.einsum", by["interp E=50000 n=7"].vs_einsum["native"] >= 3.0),
        ("helm E=5000 n=13 >= 2x numpy.einsum", by["helm E=5000 n=13"].vs_einsum["native"] >= 2.0),
        ("matmul 1024 >= 0.8x numpy matmul",
         by["matmul 1024"].ms["hand numpy"] / by["matmul 1024"].ms["native"] >= 0.8),
        (f"no kernel slower than numpy.einsum (closest: {closest.name}, {closest.vs_einsum['native']:.3f}x, "
         f"native faster in {won}/{closest.extra.get('rounds', REPEAT)} rounds)",
         all(r.vs_einsum["native"] >= 1.0 for r in rows)),
        ("interp peak memory <= 1.3x inputs+outputs", by["interp E=50000 n=7"].extra["peak_native"] <= 1.3),
        ("native agrees with numpy", all(r.agree for r in rows)),
    ]
    return out


def machine() -> dict[str, Any]:
    from core_teil.native import _native
    from core_teil.native import engine as native

    info: dict[str, Any] = {"python": sys.version.split()[0], "numpy": np.__version__,
                            "platform": platform.platform(), "cpus": os.cpu_count(), "build": _native.BUILD,
                            "openmp_threads": native.openmp_threads(), "repeat": REPEAT,
                            "round_budget_s": BUDGET_S, "max_rounds": MAX_ROUNDS}
    with contextlib.suppress(OSError):
        info["loadavg"] = os.getloadavg()
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS"):
        if var in os.environ:
            info[var] = os.environ[var]
    return info


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = [a for a in argv if not a.startswith("-")]
    rng = np.random.default_rng(20190622)
    rows = []
    from core_teil.native import _native

    # The default build is portable; CORE_TEIL_NATIVE_ARCH=1 (then `make install`) builds for this CPU.
    print(f"native extension: {_native.BUILD} build", flush=True)
    for k in kernels():
        if names and not any(n in k.name for n in names):
            continue
        print(f"running {k.name} ...", file=sys.stderr, flush=True)
        rows.append(run_kernel(k, rng))
    print(table(rows))
    results: dict[str, Any] = {"machine": machine(), "columns": COLUMNS,
                               "rows": [asdict(r) for r in rows]}
    if not names:
        ts = targets(rows)
        results["targets"] = [{"target": t, "met": ok} for t, ok in ts]
        print()
        for t, ok in ts:
            print(f"{'met    ' if ok else 'MISSED '} {t}")
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    from .chart import bar_chart

    bar_chart(rows, HERE / "results.png")
    print(f"\nwrote {HERE / 'results.json'} and {HERE / 'results.png'}", file=sys.stderr)
    return 0


def speedups(rows: list[Row]) -> tuple[list[str], dict[str, list[float]]]:
    series = {m: [r.vs_einsum[m] for r in rows] for m in ("native", "native pad 8", "opt_einsum", "hand numpy")}
    return [r.name for r in rows], series


__all__ = ["Kernel", "Row", "kernels", "main", "math"]
