"""``make bench``: the native engine against numpy.einsum, opt_einsum, hand-written numpy and C (issues 5, 15).

Kernels and sizes from the TeML paper (003, Table 2) and the matrix products
of paper 000; program texts are the project's ``examples/*.teil``.  Each
kernel is timed, in one process and interleaved round-robin (so that load
from other processes hits every column alike), for: the native engine
unpadded and padded (``pad=8``), ``numpy.einsum(optimize=True)``,
``opt_einsum.contract``, a hand-written tensordot/matmul chain, hand-written
fused C (``bench/hand``: interp, helm and bmm, compiled in the same run with
the native extension's flags and loaded with ctypes, timed only once it agrees
with numpy), and the memory floor: a numpy copy of as many bytes as the kernel
must move (it reads its inputs and writes its outputs once, so the floor copies
``(inputs + outputs) / 2`` bytes: a copy reads and writes each byte).
Medians of at least ``REPEAT`` rounds, and of more for a kernel whose round is short
(as many as fit in ``BUDGET_S`` seconds, at most ``MAX_ROUNDS``): a 1% margin, as on the
matrix products, needs them to be told from noise.  Each round runs the columns in a
seeded random order, so that no column always follows the same neighbour (whose
caches, or BLAS threads still awake, it would inherit).  GFLOP/s of the native engine from the flop count
of the lifted (O(n^4)) contraction order.  The peak memory of ``interp``
(tracemalloc: numpy reports its buffers to it) is compared with the bytes of
its inputs and outputs.  The native engine's fresh results go into the buffers
of the results that earlier rounds let go (``core_teil.native.buffers``), as in
any loop of calls; its ``out=`` column writes into one array of the caller's.

Issue 15 adds the machine's measured floor, :class:`Floor`: the STREAM triad's
bandwidth (C, arrays four times the last-level cache, best of ``TRIAD_REPS``)
and the dgemm peak (numpy.matmul on 2048 x 2048 float64, best of
``DGEMM_REPS``); a kernel's floor is ``max((inputs + outputs) bytes / triad,
flops / dgemm)`` and every engine's time is also shown as a multiple of it.
All of this runs twice: single-threaded in a child process
(``OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=MKL_NUM_THREADS=1``, which BLAS and
OpenMP read only when they load) and on all cores in this one; each run
measures its own floor.  Each run also times repeated small calls (8x8 matmul,
interp E=16 n=4) of compiled kernels against ``numpy.einsum(optimize=False)``,
in microseconds per call.  The targets of issues 5 and 15 close the output,
each with the figure it was decided on.  Results go to ``bench/results.json``
(``rows``: the all-cores run, as before; ``runs``: both runs with their floors
and small calls) and a bar chart ``bench/results.png``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# core_teil before numpy, as the README's example and its "Threads" paragraph do: `import
# core_teil` sets OpenBLAS's idle poll (OPENBLAS_THREAD_TIMEOUT), which OpenBLAS reads when
# numpy loads it; every column of a run shares it (docs/decisions.md, "GEMMs inside the team")
import core_teil  # noqa: F401

# isort: split
import numpy as np

from .hand import Hand, HandUnavailable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
REPEAT = int(os.environ.get("CORE_TEIL_BENCH_REPEAT", "9"))
BUDGET_S = 5.0
MAX_ROUNDS = 41
PAD = 8  # the vector length of the "native pad 8" column


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
    #: the hand-written fused C (bench/hand), built for this kernel's extents; None: no such column
    c: Callable[[Hand], Callable[..., np.ndarray]] | None = None


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
               lambda A, B: np.matmul(A, B), "C", 2.0 * 8192 * 72 * 72 * 26, c=lambda h: h.bmm(72, 72, 26)),
        Kernel("interp E=50000 n=7", "examples/interp.teil", {"E": 50000, "m": 7, "n": 7},
               {"A": (7, 7), "u": (50000, 7, 7, 7)}, _interp_einsum, _interp_opt, _interp_hand, "v",
               3 * 2.0 * 50000 * 7**4, c=lambda h: h.interp(7, 7)),
        Kernel("interp E=20000 n=4", "examples/interp.teil", {"E": 20000, "m": 4, "n": 4},
               {"A": (4, 4), "u": (20000, 4, 4, 4)}, _interp_einsum, _interp_opt, _interp_hand, "v",
               3 * 2.0 * 20000 * 4**4, c=lambda h: h.interp(4, 4)),
        Kernel("helm E=5000 n=13", "examples/helm.teil", {"E": 5000, "n": 13},
               {"S": (13, 13), "D": (13, 13, 13), "u": (5000, 13, 13, 13)}, _helm_einsum, _helm_opt,
               _helm_hand, "v", 6 * 2.0 * 5000 * 13**4 + 5000 * 13**3, nonzero=("D",), c=lambda h: h.helm(13)),
        Kernel("mttkrp 250^3", "examples/mttkrp.teil", {"I": 250, "J": 250, "K": 250, "L": 250},
               {"B": (250, 250, 250), "C": (250, 250), "D": (250, 250)},
               lambda B, C, D: np.einsum("ikl,kj,lj->ij", B, C, D, optimize=True), _mttkrp_opt,
               _mttkrp_hand, "A", 2.0 * 250**4 + 2.0 * 250**3),
    ]


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def peak_bytes(fn: Callable[[], Any]) -> int:
    """Peak of the bytes allocated while ``fn`` runs (numpy reports its buffers to tracemalloc).

    The native engine's kept buffers are let go first: a kept buffer that ``fn`` reused would
    be memory held but not allocated while it runs (core_teil.native.buffers)."""
    from core_teil.native import buffers

    buffers.release()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    out = fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    del out
    return peak


def close(got: np.ndarray, ref: np.ndarray) -> bool:
    return bool(np.allclose(got, ref, rtol=1e-8, atol=1e-8 * float(np.abs(ref).max() or 1)))


# --------------------------------------------------------------------------
# The measured floor (issue 15)
# --------------------------------------------------------------------------

TRIAD_REPS = 10
DGEMM_N = 2048
DGEMM_REPS = 5


@dataclass(frozen=True)
class Floor:
    """What this machine can do at best with ``threads`` threads: stream memory, or multiply matrices.

    A kernel that must read its inputs and write its outputs once (``nbytes``) and do
    ``flops`` floating-point operations cannot take less than the larger of the two
    times (the roofline model, with STREAM and dgemm as its two roofs)."""

    triad_gbs: float  # STREAM triad, GB/s (10^9 bytes)
    dgemm_gflops: float  # numpy.matmul on DGEMM_N^2 float64
    threads: int
    source: str  # how the bandwidth was measured

    def memory_s(self, nbytes: float) -> float:
        return nbytes / (self.triad_gbs * 1e9)

    def compute_s(self, flops: float) -> float:
        return flops / (self.dgemm_gflops * 1e9)

    def seconds(self, nbytes: float, flops: float) -> float:
        return max(self.memory_s(nbytes), self.compute_s(flops))

    def bound(self, nbytes: float, flops: float) -> str:
        return "memory" if self.memory_s(nbytes) >= self.compute_s(flops) else "flops"

    def describe(self) -> str:
        return (f"floor ({self.threads} thread{'s' if self.threads != 1 else ''}): {self.source}: "
                f"{self.triad_gbs:.2f} GB/s; dgemm (numpy.matmul {DGEMM_N}^2 float64, best of {DGEMM_REPS}): "
                f"{self.dgemm_gflops:.1f} GFLOP/s")


def l3_bytes() -> int:
    """The last-level cache of CPU 0 (Linux sysfs), 32 MiB when it cannot be read."""
    text = ""
    with contextlib.suppress(OSError):
        text = Path("/sys/devices/system/cpu/cpu0/cache/index3/size").read_text().strip()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[:-1].isdigit() and text[-1:] in scale:
        return int(text[:-1]) * scale[text[-1]]
    return int(text) if text.isdigit() else 32 << 20


def triad_elements(l3: int) -> int:
    """STREAM's rule: each array at least four times the last-level cache (and at least 128 MiB)."""
    return max(1 << 24, 4 * l3 // 8)


def dgemm_peak(n: int = DGEMM_N, reps: int = DGEMM_REPS) -> float:
    """GFLOP/s of the best of ``reps`` numpy.matmul calls on n x n float64 (2 n^3 flops each)."""
    rng = np.random.default_rng(1)
    a, b, c = rng.standard_normal((n, n)), rng.standard_normal((n, n)), np.empty((n, n))
    np.matmul(a, b, out=c)  # wakes the BLAS threads and touches c's pages
    best = math.inf
    for _ in range(reps):
        t = time.perf_counter()
        np.matmul(a, b, out=c)
        best = min(best, time.perf_counter() - t)
    return 2.0 * n**3 / best / 1e9


def numpy_copy_bandwidth(n: int, reps: int) -> float:
    """Without a C compiler: bytes/s of the best numpy copy (read + write of n doubles)."""
    a, b = np.ones(n), np.empty(n)
    best = math.inf
    for _ in range(reps):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return 16.0 * n / best


def measure_floor(hand: Hand, threads: int) -> Floor:
    n = triad_elements(l3_bytes())
    try:
        bw = hand.triad(n, TRIAD_REPS)
        source = f"STREAM triad (C, best of {TRIAD_REPS}, 3 x {n * 8 >> 20} MiB)"
    except HandUnavailable as exc:
        bw = numpy_copy_bandwidth(n, TRIAD_REPS)
        source = f"numpy copy in place of the STREAM triad ({exc}; best of {TRIAD_REPS}, 2 x {n * 8 >> 20} MiB)"
    return Floor(bw / 1e9, dgemm_peak(), threads, source)


# --------------------------------------------------------------------------
# The large kernels
# --------------------------------------------------------------------------


def run_kernel(k: Kernel, rng: np.random.Generator, hand: Hand | None = None, floor: Floor | None = None) -> Row:
    import core_teil as ct
    from core_teil.native import buffers, cjit, planner
    from core_teil.native import engine as native

    program = ct.load(str(ROOT / k.path))
    inputs = {}
    for name, shape in k.shapes.items():
        x = rng.standard_normal(shape)
        if name in k.nonzero:
            x = np.abs(x) + 1.0
        inputs[name] = x
    args = list(inputs.values())
    kern = native.compile(program, k.params)
    kpad = native.compile(program, k.params, PAD)
    in_bytes = sum(x.nbytes for x in args)
    ref = k.hand(*args)
    out_bytes = ref.nbytes
    floor_src = np.ones(max((in_bytes + out_bytes) // 16, 1))
    # the same call writing into the caller's buffer (out=, touched once): the fresh result's first
    # touch (page zeroing, about 10 ms for interp n=7's 137 MB here) is the rest of "native"
    out_buf = np.zeros(ref.shape)

    def given() -> dict[str, np.ndarray]:
        return kern(out={k.output: out_buf}, **inputs)

    methods: dict[str, Callable[[], Any]] = {
        "native": lambda: kern(**inputs),
        "native pad 8": lambda: kpad(**inputs),
        "numpy.einsum": lambda: k.einsum(*args),
        "opt_einsum": lambda: k.opt(*args),
        "hand numpy": lambda: k.hand(*args),
    }
    # the hand-written C is timed only once it has agreed with numpy (a wrong answer has no time)
    hand_note = "no hand-written C for this kernel"
    if k.c is not None and hand is not None:
        try:
            hand_c = k.c(hand)
        except HandUnavailable as exc:
            hand_note = str(exc)
        else:
            if close(hand_c(*args), ref):
                methods["hand C"], hand_note = (lambda: hand_c(*args)), ""
            else:
                hand_note = "hand C disagrees with numpy (not timed)"
    methods["memory floor"] = lambda: np.copy(floor_src)
    guard = _direct_guard(kern, inputs)
    if guard is not None:
        methods[GUARD] = guard
    got = {"native": kern(**inputs)[k.output], "native out=": given()[k.output],
           "native pad 8": kpad(**inputs)[k.output]}
    agree = all(close(g, ref) for g in got.values())
    for m in ("numpy.einsum", "opt_einsum"):
        agree &= close(methods[m](), ref)
    # each kernel's rounds start with no buffer kept (core_teil.native.buffers), as in a process
    # that runs only this kernel: an earlier kernel's kept buffers would take the limit
    del got
    buffers.release()
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
    # out= in rounds of its own, after the others: interleaved, it slowed the native call after
    # it (mttkrp, two threads: 97 -> 123 ms), which the other columns do not
    samples["native out="] = []
    for _ in range(rounds):
        t = time.perf_counter()
        given()
        samples["native out="].append(time.perf_counter() - t)
    ms = {m: median_ms(s) for m, s in samples.items()}
    row = Row(k.name, ms, k.flops / (ms["native"] * 1e-3) / 1e9,
              {m: ms["numpy.einsum"] / ms[m] for m in ("native", "native pad 8", "opt_einsum", "hand numpy",
                                                      "hand C") if m in ms},
              bool(agree), planner.describe(kern.plans[0]))
    # the columns of a round run back to back, so each round's ratio shows how steady a verdict is
    ratios = sorted(e / n for e, n in zip(samples["numpy.einsum"], samples["native"], strict=True))
    row.extra = {"input_bytes": in_bytes, "output_bytes": out_bytes, "flops": k.flops,
                 "einsum/native per round": ratios,
                 "rounds native faster": sum(x > 1.0 for x in ratios), "rounds": rounds}
    if hand_note:
        row.extra["hand C"] = hand_note
    if floor is not None:
        floor_s = floor.seconds(in_bytes + out_bytes, k.flops)
        row.extra["floor_ms"] = floor_s * 1e3
        row.extra["floor bound"] = floor.bound(in_bytes + out_bytes, k.flops)
        row.extra["x floor"] = {m: v * 1e-3 / floor_s for m, v in ms.items()}
        if cjit.why_not(kpad) is None:  # the padded run is emit-c's C: the equations' arithmetic, in their order
            row.extra.update(padded_floor(program, k.params, in_bytes, floor))
    if k.name.startswith("interp"):
        for m in ("native", "native pad 8", "numpy.einsum", "hand numpy"):
            row.extra[f"peak_{m}"] = (in_bytes + peak_bytes(methods[m])) / (in_bytes + out_bytes)
    return row


#: The column of a kernel that is one BLAS call (matmul): the overflow guard alone, timed in the
#: same rounds, so that the verdict against numpy.matmul shows what of the gap it is.
GUARD = "overflow guard"


def _direct_guard(kern: Any, inputs: dict[str, np.ndarray]) -> Callable[[], Any] | None:
    """The overflow guard that ``kern``'s one-GEMM path runs before its BLAS call
    (``Kernel._guard`` on fresh magnitudes, as every call measures them), or None when the
    kernel is not one GEMM."""
    from core_teil.native import engine as native

    compiled = list(kern._compiled.values())
    if len(compiled) != 1 or compiled[0].direct is None:
        return None
    c = compiled[0]
    return lambda: native.Kernel._guard(c, 0, native._Sizes(inputs, {}))


def padded_floor(program: Any, params: dict[str, int], in_bytes: int, floor: Floor) -> dict[str, Any]:
    """The floor of the padded semantics itself (issue 15's "--pad 8 at least as fast as unpadded"):
    its arithmetic as eval.py's equations prescribe it over ``⌈Γ⌉`` (:mod:`core_teil.semantics.cost`:
    every Σ runs to ``⌈n⌉``, every statement writes its padded domain) at the dgemm peak, and its
    outputs' padded arrays written once at the triad's bandwidth (with the inputs read once as given).
    The count is the reference's, ``2n - 1`` operations for a sum of ``n`` products where the kernels'
    own floor counts the conventional ``2n``, so it errs low.  It is a floor of a run that computes
    the equations' arithmetic in their order, as emit-c's padded C does; :func:`run_kernel` gives it
    only to kernels whose padded run is that C (a plan's BLAS steps reorder, and may do less)."""
    from core_teil.lang.shapes import round_up
    from core_teil.lang.typing import check_program
    from core_teil.semantics.cost import work
    from core_teil.semantics.eval import ArrayInterpretation

    typed = check_program(program, dict(params))
    extent = ArrayInterpretation(typed).extent
    out_bytes = sum(8 * math.prod(round_up(extent(d), PAD) for d in a.shape) for a in typed.program.outputs())
    flops = work(typed, PAD).flops
    return {"pad floor_ms": floor.seconds(in_bytes + out_bytes, flops) * 1e3,
            "pad floor bound": floor.bound(in_bytes + out_bytes, flops), "pad flops": flops,
            "pad output_bytes": out_bytes}


COLUMNS = ["native", "native out=", "native pad 8", "numpy.einsum", "opt_einsum", "hand numpy", "hand C",
           "memory floor"]
#: the peers of issue 15's "no bench kernel slower than the best of ...": numpy.einsum, opt_einsum,
#: and numpy.matmul or the tensordot chain (the hand-written numpy of each kernel)
PEERS = ("numpy.einsum", "opt_einsum", "hand numpy")


def _hand_notes(rows: list[Row]) -> list[str]:
    """Why a row has no hand C column, one line per reason (a missing compiler is said once, not per row)."""
    by: dict[str, list[str]] = {}
    for r in rows:
        if "hand C" not in r.ms:
            by.setdefault(r.extra.get("hand C", "not measured"), []).append(r.name)
    return [f"hand C -- on {', '.join(names)}: {why}" for why, names in by.items()]


def table(rows: list[Row]) -> str:
    head = f"{'kernel':<24}" + "".join(f"{c:>14}" for c in COLUMNS) + f"{'GFLOP/s':>9}" + \
        f"{'einsum/native':>15}{'einsum/pad':>12}{'won':>7}{'ok':>4}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.name:<24}" + "".join(f"{r.ms[c]:>11.1f} ms" if c in r.ms else f"{'--':>14}"
                                               for c in COLUMNS) + f"{r.gflops:>9.1f}"
                     + f"{r.vs_einsum['native']:>14.2f}x{r.vs_einsum['native pad 8']:>11.2f}x"
                     + f"{r.extra.get('rounds native faster', 0):>4}/{r.extra.get('rounds', REPEAT):<2}"
                     + f"{'yes' if r.agree else 'NO':>4}")
    for r in rows:
        if "peak_native" in r.extra:
            lines.append(f"peak memory of {r.name} / (inputs + outputs): " + ", ".join(
                f"{m} {r.extra['peak_' + m]:.2f}x" for m in ("native", "native pad 8", "numpy.einsum", "hand numpy")))
    lines.append("won: rounds in which native was faster than numpy.einsum, of the rounds run "
                 f"(at least {REPEAT}, more for short kernels)")
    lines.extend(_hand_notes(rows))
    return "\n".join(lines)


def floor_table(rows: list[Row], floor: Floor) -> str:
    """Each engine's median time as a multiple of the kernel's floor, max(bytes / triad, flops / dgemm)."""
    head = f"{'kernel':<24}{'floor':>11}{'bound':>8}" + "".join(f"{c:>14}" for c in COLUMNS)
    lines = [floor.describe(), "time / floor, floor = max((inputs + outputs) bytes / triad, flops / dgemm):",
             head, "-" * len(head)]
    for r in rows:
        x = r.extra.get("x floor", {})
        lines.append(f"{r.name:<24}{r.extra['floor_ms']:>8.2f} ms{r.extra['floor bound']:>8}"
                     + "".join(f"{x[c]:>13.2f}x" if c in x else f"{'--':>14}" for c in COLUMNS))
    padded = [r for r in rows if "pad floor_ms" in r.extra]
    if padded:
        lines += ["", f"the padded semantics' own floor (pad {PAD}): max((inputs + padded outputs) bytes / triad, "
                  "its flops / dgemm), the flops counted by eval.py's equations over the padded domains "
                  "(core_teil.semantics.cost):"]
        lines += [f"{r.name:<24}{r.extra['pad floor_ms']:>8.2f} ms{r.extra['pad floor bound']:>8}"
                  f"{r.extra['pad flops'] / 1e9:>9.2f} GFLOP   native pad {PAD} "
                  f"{r.ms['native pad 8'] / r.extra['pad floor_ms']:.2f}x of it; "
                  f"unpadded native {r.ms['native']:.1f} ms"
                  for r in padded]
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Repeated small calls (issue 15: within 2x of numpy.einsum(optimize=False))
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Small:
    """A small kernel called again and again with the same arrays: per-call overhead, not arithmetic."""

    name: str
    path: str
    params: dict[str, int]
    shapes: dict[str, tuple[int, ...]]
    einsum: Callable[..., np.ndarray]  # numpy.einsum(..., optimize=False)
    output: str


SMALL = (
    Small("matmul 8x8", "examples/matmul.teil", {"l": 8, "m": 8, "n": 8}, {"A": (8, 8), "B": (8, 8)},
          lambda A, B: np.einsum("ij,jk->ik", A, B, optimize=False), "C"),
    Small("interp E=16 n=4", "examples/interp.teil", {"E": 16, "m": 4, "n": 4}, {"A": (4, 4), "u": (16, 4, 4, 4)},
          lambda A, u: np.einsum("il,jm,kn,elmn->eijk", A, A, A, u, optimize=False), "v"),
)
SMALL_EINSUM = "numpy.einsum(optimize=False)"
SMALL_COLUMNS = ("native", "native out=", SMALL_EINSUM)
SMALL_MEASURE_S = 0.02  # each timeit measurement runs about this long


@dataclass
class SmallRow:
    name: str
    us: dict[str, float]  # median microseconds per call
    agree: bool
    repeats: int

    @property
    def ratio(self) -> float:
        """native / numpy.einsum(optimize=False): the target is at most 2."""
        return self.us["native"] / self.us[SMALL_EINSUM]


def run_small(s: Small, rng: np.random.Generator) -> SmallRow:
    import core_teil as ct
    from core_teil.native import engine as native

    kern = native.compile(ct.load(str(ROOT / s.path)), s.params)
    inputs = {name: rng.standard_normal(shape) for name, shape in s.shapes.items()}
    args = list(inputs.values())
    ref = s.einsum(*args)
    out = {s.output: np.full_like(ref, np.nan)}  # NaN, so that an out= that writes nothing cannot agree
    methods: dict[str, Callable[[], Any]] = {
        "native": lambda: kern(**inputs),
        "native out=": lambda: kern(out=out, **inputs),
        SMALL_EINSUM: lambda: s.einsum(*args),
    }
    agree = close(kern(**inputs)[s.output], ref) and close(kern(out=out, **inputs)[s.output], ref)
    timers = {m: timeit.Timer(f) for m, f in methods.items()}
    number = {}
    for m, t in timers.items():  # as many calls per measurement as fill SMALL_MEASURE_S
        n, took = t.autorange()
        number[m] = max(1, int(n * SMALL_MEASURE_S / took))
    repeats = max(REPEAT, 7)
    samples: dict[str, list[float]] = {m: [] for m in methods}
    order = list(methods)
    shuffle = random.Random(len(s.name))
    for _ in range(repeats):  # interleaved, as the large kernels
        shuffle.shuffle(order)
        for m in order:
            samples[m].append(timers[m].timeit(number[m]) / number[m])
    return SmallRow(s.name, {m: statistics.median(v) * 1e6 for m, v in samples.items()}, agree, repeats)


def small_table(rows: list[SmallRow]) -> str:
    width = {c: max(len(c), 10) + 2 for c in SMALL_COLUMNS}
    head = f"{'repeated small call':<24}" + "".join(f"{c:>{width[c]}}" for c in SMALL_COLUMNS) + \
        f"{'native/einsum':>15}{'ok':>4}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.name:<24}" + "".join(f"{r.us[c]:>{width[c] - 3}.1f} us" for c in SMALL_COLUMNS)
                     + f"{r.ratio:>14.2f}x{'yes' if r.agree else 'NO':>4}")
    lines.append(f"microseconds per call (timeit, median of {rows[0].repeats if rows else REPEAT} interleaved repeats; "
                 "the same arrays every call)")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# One run: the floor, the kernels and the small calls at one thread count
# --------------------------------------------------------------------------

SINGLE_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass
class Run:
    label: str  # "single thread" or "all cores"
    threads: int  # the native engine's OpenMP threads
    floor: Floor
    rows: list[Row]
    small: list[SmallRow]

    @staticmethod
    def from_json(d: dict[str, Any]) -> Run:
        return Run(d["label"], d["threads"], Floor(**d["floor"]), [Row(**r) for r in d["rows"]],
                   [SmallRow(**s) for s in d["small"]])


def measure(label: str, names: list[str], hand: Hand) -> Run:
    from core_teil.native import engine as native

    threads = native.openmp_threads()
    print(f"[{label}] measuring the floor ...", file=sys.stderr, flush=True)
    floor = measure_floor(hand, threads)
    rng = np.random.default_rng(20190622)
    rows = []
    for k in kernels():
        if names and not any(n in k.name for n in names):
            continue
        print(f"[{label}] running {k.name} ...", file=sys.stderr, flush=True)
        rows.append(run_kernel(k, rng, hand, floor))
    small = []
    for s in SMALL:
        if names and not any(n in s.name for n in names):
            continue
        print(f"[{label}] repeated calls of {s.name} ...", file=sys.stderr, flush=True)
        small.append(run_small(s, rng))
    return Run(label, threads, floor, rows, small)


def report(run: Run) -> str:
    parts = [f"== {run.label}: native engine on {run.threads} thread{'s' if run.threads != 1 else ''}"
             + (f" ({', '.join(f'{k}=1' for k in SINGLE_ENV)})" if run.label == "single thread" else "") + " =="]
    if run.rows:
        parts += [table(run.rows), "", floor_table(run.rows, run.floor)]
    else:
        parts.append(run.floor.describe())
    if run.small:
        parts += ["", small_table(run.small)]
    return "\n".join(parts)


def run_single_thread(names: list[str], hand_dir: Path) -> Run | None:
    """The single-threaded run, in a child process: BLAS and OpenMP read their thread counts once, at load."""
    with tempfile.TemporaryDirectory(prefix="core-teil-bench-") as tmp:
        path = Path(tmp) / "single.json"
        cmd = [sys.executable, "-m", "bench", "--child", str(path), "--hand-dir", str(hand_dir), *names]
        done = subprocess.run(cmd, env={**os.environ, **SINGLE_ENV}, cwd=ROOT, check=False)
        if done.returncode != 0 or not path.exists():
            print(f"the single-threaded run failed (exit {done.returncode}); its messages are above",
                  file=sys.stderr)
            return None
        return Run.from_json(json.loads(path.read_text()))


# --------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------


def targets(rows: list[Row]) -> list[tuple[str, bool]]:
    """Issue 5's targets, on the default (all-cores) run."""
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


FLOOR_TARGET = 2.0  # issue 15: at most 2x the floor
SMALL_TARGET = 2.0  # issue 15: within 2x of numpy.einsum(optimize=False)


def issue15_targets(single: Run | None, multi: Run | None,
                    emit: tuple[bool | None, str] | None = None) -> list[tuple[str, bool | None]]:
    """Issue 15's targets, each with the figure it was decided on; None: not measured in this run (n/a)."""
    out: list[tuple[str, bool | None]] = []
    one = {r.name: r for r in single.rows} if single else {}
    for name in ("interp E=20000 n=4", "interp E=50000 n=7", "helm E=5000 n=13"):
        r = one.get(name)
        if r is None or "x floor" not in r.extra:
            out.append((f"{name} <= {FLOOR_TARGET:g}x the floor, single-threaded: not measured", None))
            continue
        x = r.extra["x floor"]["native"]
        given = f"; with out= {r.extra['x floor']['native out=']:.2f}x" if "native out=" in r.ms else ""
        out.append((f"{name} <= {FLOOR_TARGET:g}x the floor, single-threaded: native {x:.2f}x "
                    f"({r.ms['native']:.1f} ms, floor {r.extra['floor_ms']:.1f} ms{given})", x <= FLOOR_TARGET))
        if name.startswith("interp"):
            if "hand C" in r.ms:
                out.append((f"{name} ahead of hand-written C, single-threaded: native {r.ms['native']:.1f} ms, "
                            f"hand C {r.ms['hand C']:.1f} ms", r.ms["native"] < r.ms["hand C"]))
            else:
                out.append((f"{name} ahead of hand-written C, single-threaded: no hand C "
                            f"({r.extra.get('hand C', 'not measured')})", None))
    for run in (single, multi):
        if run is None or not run.rows:
            continue
        worst = max(run.rows, key=lambda r: r.ms["native"] / min(r.ms[p] for p in PEERS))
        best = min(PEERS, key=lambda p: worst.ms[p])
        x = worst.ms["native"] / worst.ms[best]
        out.append((f"no bench kernel slower than the best of numpy.einsum, opt_einsum, numpy.matmul and the "
                    f"tensordot chain, {run.label}: worst {worst.name}, native {x:.2f}x {best}"
                    + _guard_share(worst, best),
                    all(r.ms["native"] <= min(r.ms[p] for p in PEERS) for r in run.rows)))
        padded = [r for r in run.rows if r.name.startswith(("interp", "helm"))]
        if padded:
            worst = max(padded, key=lambda r: r.ms["native pad 8"] / r.ms["native"])
            x = worst.ms["native pad 8"] / worst.ms["native"]
            out.append((f"--pad 8 at least as fast as unpadded on interp and helm, {run.label}: worst {worst.name}, "
                        f"pad 8 {x:.2f}x unpadded{_unreachable(padded)}",
                        all(r.ms["native pad 8"] <= r.ms["native"] for r in padded)))
        if run.small:
            figures = ", ".join(f"{s.name} {s.us['native']:.1f} us = {s.ratio:.2f}x" for s in run.small)
            out.append((f"repeated small calls within {SMALL_TARGET:g}x of numpy.einsum(optimize=False), "
                        f"{run.label}: {figures}", all(s.ratio <= SMALL_TARGET for s in run.small)))
    if emit is not None:
        out.append((f"emit-c output compiles with cc -O2 -Wall -Werror: {emit[1]}", emit[0]))
    out.append(("emit-c agrees with the reference engine on the differential tests: tests/test_emit_c.py "
                "(make test), not measured by make bench", None))
    return out


def _guard_share(r: Row, best: str) -> str:
    """For a kernel that is one BLAS call: what the overflow guard took in the same rounds, and
    native without it against the best peer (the same BLAS call is all that is left)."""
    if GUARD not in r.ms:
        return ""
    rest = (r.ms["native"] - r.ms[GUARD]) / r.ms[best]
    return (f"; the overflow guard (a scan of both inputs) took {r.ms[GUARD]:.2f} ms of native's "
            f"{r.ms['native']:.1f}, native without it {rest:.2f}x")


def _unreachable(rows: list[Row]) -> str:
    """The kernels whose padded semantics' own floor (:func:`padded_floor`) is above the unpadded run's
    time, with the figures: there a padded run that computes the padded semantics' doubles in the
    equations' order (as the padded C does, bit for bit ``ct.evaluate(..., pad)``'s) cannot be as
    fast as the unpadded one.  One that skipped the sums over the zero padding would compute the same
    reals (report Theorem 3) but other doubles: the signs of zeros, and ``inf · 0`` (NaN) in the padding."""
    above = [r for r in rows if r.extra.get("pad floor_ms", 0.0) > r.ms["native"]]
    if not above:
        return ""
    return (f"; on {len(above)} of {len(rows)} the padded semantics' own floor is above the unpadded time ("
            + ", ".join(f"{r.name} {r.extra['pad floor_ms']:.1f} > {r.ms['native']:.1f} ms" for r in above) + ")")


def emit_c_compiles(out_dir: Path) -> tuple[bool | None, str]:
    """``core-teil emit-c`` on every bench kernel at its bench sizes, unpadded and --pad 8, each compiled
    with ``cc -O2 -Wall -Werror -c``."""
    import core_teil as ct
    from core_teil.native.emit_c import emit_c

    if shutil.which("cc") is None:
        return None, "no cc on the PATH"
    failed, n = [], 0
    for k in kernels():
        for pad in (None, 8):
            stem = f"emit{n}"
            src = emit_c(ct.load(str(ROOT / k.path)), dict(k.params), pad, header=f"{stem}.h")
            (out_dir / f"{stem}.c").write_text(src.c)
            (out_dir / f"{stem}.h").write_text(src.h)
            done = subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-c", f"{stem}.c", "-o", f"{stem}.o"],
                                  cwd=out_dir, capture_output=True, text=True, check=False)
            n += 1
            if done.returncode != 0:
                failed.append(f"{k.name}{' pad 8' if pad else ''}")
    return not failed, (f"{n - len(failed)}/{n} (the bench kernels, unpadded and --pad 8)"
                        + (f"; failed: {', '.join(failed)}" if failed else ""))


def verdict(ok: bool | None) -> str:
    return "n/a " if ok is None else "PASS" if ok else "FAIL"


def machine(hand: Hand | None = None) -> dict[str, Any]:
    from core_teil.native import _native
    from core_teil.native import engine as native

    info: dict[str, Any] = {"python": sys.version.split()[0], "numpy": np.__version__,
                            "platform": platform.platform(), "cpus": os.cpu_count(), "build": _native.BUILD,
                            "openmp_threads": native.openmp_threads(), "repeat": REPEAT,
                            "round_budget_s": BUDGET_S, "max_rounds": MAX_ROUNDS, "l3_bytes": l3_bytes()}
    if hand is not None:
        info["hand_c"] = hand.toolchain.describe() if hand.toolchain else hand.reason
    with contextlib.suppress(OSError):
        info["loadavg"] = os.getloadavg()
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS"):
        if var in os.environ:
            info[var] = os.environ[var]
    return info


def openblas_poll() -> str:
    """How long numpy's OpenBLAS lets an idle worker poll, as it read it when it loaded."""
    from core_teil.native import blas

    lib = blas.library()
    if lib is None:
        return "numpy's BLAS is not an ILP64 OpenBLAS (streamed GEMMs stay on numpy.matmul)"
    return (f"2^{lib.spin} cycles after each multi-threaded call; streamed GEMMs "
            f"{'inside the team' if lib.spin <= blas.QUIET_SPIN else 'on numpy.matmul on all cores'}")


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="run only the kernels whose name contains one of these")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # the single-threaded run writes its Run here
    ap.add_argument("--hand-dir", help=argparse.SUPPRESS)  # where the parent's run keeps the compiled C
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    names = args.names
    from core_teil.native import _native

    if args.child:
        run = measure("single thread", names, Hand(Path(args.hand_dir), _native.BUILD))
        Path(args.child).write_text(json.dumps(asdict(run)))
        return 0
    # The default build is portable; CORE_TEIL_NATIVE_ARCH=1 (then `make install`) builds for this CPU.
    print(f"native extension: {_native.BUILD} build", flush=True)
    print(f"OpenBLAS idle poll: {openblas_poll()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="core-teil-bench-") as tmp:
        hand = Hand(Path(tmp), _native.BUILD)
        print("hand-written C: " + (hand.toolchain.describe() if hand.toolchain else hand.reason), flush=True)
        with contextlib.suppress(OSError):
            print("load average at the start: " + " ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
        single = run_single_thread(names, Path(tmp))
        multi = measure("all cores", names, hand)
        emit = None if names else emit_c_compiles(Path(tmp))
        info = machine(hand)
    runs = [r for r in (single, multi) if r is not None]
    for run in runs:
        print()
        print(report(run))
    results: dict[str, Any] = {"machine": info, "columns": COLUMNS, "rows": [asdict(r) for r in multi.rows],
                               "runs": [asdict(r) for r in runs]}
    if not names:
        ts = targets(multi.rows)
        results["targets"] = [{"target": t, "met": ok} for t, ok in ts]
        print("\ntargets of issue 5 (all cores):")
        for t, ok in ts:
            print(f"  {verdict(ok)} {t}")
    t15 = issue15_targets(single, multi, emit)
    results["issue 15 targets"] = [{"target": t, "met": ok} for t, ok in t15]
    print(f"\ntargets of issue 15 (load average at the end: {' '.join(f'{x:.2f}' for x in info.get('loadavg', ()))}):")
    for t, ok in t15:
        print(f"  {verdict(ok)} {t}")
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    from .chart import bar_chart

    bar_chart(multi.rows, HERE / "results.png", single.rows if single else None)
    print(f"\nwrote {HERE / 'results.json'} and {HERE / 'results.png'}", file=sys.stderr)
    return 0


def speedups(rows: list[Row]) -> tuple[list[str], dict[str, list[float]]]:
    """Speed-up over numpy.einsum of each engine, per kernel (NaN where a kernel has no such column)."""
    series = {m: [r.vs_einsum.get(m, math.nan) for r in rows]
              for m in ("native", "native pad 8", "opt_einsum", "hand numpy", "hand C")}
    return [r.name for r in rows], series


def floor_multiples(rows: list[Row]) -> tuple[list[str], dict[str, list[float]]]:
    """Each engine's time as a multiple of the kernel's floor (NaN where not measured)."""
    cols = [c for c in COLUMNS if c != "memory floor"]
    series = {m: [r.extra.get("x floor", {}).get(m, math.nan) for r in rows] for m in cols}
    return [r.name for r in rows], series


__all__ = ["Floor", "Kernel", "Row", "Run", "SmallRow", "issue15_targets", "kernels", "main", "math", "targets"]
