"""The CFD kernels of paper 000, section 5, written in the operator language (:mod:`core_teil.frontends.ops`).

``interp`` applies ``A ⊗ A ⊗ A`` to each of ``E`` volume elements (equations
(7)-(8) with ``B = C = A``; TeML paper 003, Table 1, size 50000*7*7*7) and
``helm`` is the inverse Helmholtz operator in fast-diagonalisation form,
``(S^T ⊗ S^T ⊗ S^T)((S ⊗ S ⊗ S)(u) / D)`` (003, Table 1, 5000*13*13*13),
written exactly as ``examples/interp.teil`` and ``examples/helm.teil`` spell
them out by hand.  ``ct.equiv`` proves the programs built here equal to those
files, lifted and nested, and ``ct.prove`` certifies them for all extents.

Run ``python examples/ops_cfd.py`` to print the programs and check those
claims, and ``python examples/ops_cfd.py --bench`` to time the native engine
on the ops-built kernels against the ``.teil`` files (medians of rounds run
alternately in one process; interp at E = 20000, n = 4 and E = 50000, n = 7,
helm at E = 5000, n = 13).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

import core_teil as ct
from core_teil.frontends import ops

HERE = Path(__file__).resolve().parent


def interp(lift: bool = True) -> ct.Program:
    """``v = (A*A*A)(u)``: paper 000, section 5, with the TeML batch of E elements."""
    A = ops.Matrix("A", "m", "n")
    u = ops.Tensor("u", "E", "n", "n", "n")
    return ops.program(v=(A * A * A)(u), lift=lift)


def helm(lift: bool = True) -> ct.Program:
    """``v = (S^T ⊗ S^T ⊗ S^T)((S ⊗ S ⊗ S)(u) / D)``, ``D`` broadcast over the elements."""
    S = ops.Matrix("S", "n", "n")
    D = ops.Tensor("D", "n", "n", "n")
    u = ops.Tensor("u", "E", "n", "n", "n")
    return ops.program(v=(S.T * S.T * S.T)((S * S * S)(u) / D), lift=lift)


def check() -> None:
    """Print the programs; prove them and their equivalence with the hand-written files."""
    for name, build in (("interp", interp), ("helm", helm)):
        lifted, nested = build(), build(lift=False)
        print(f"# {name}, lifted (ops.program)\n{ct.format(lifted)}")
        file = ct.load(str(HERE / f"{name}.teil"))
        print(f"ct.prove: {ct.prove(lifted).ok}; ct.equiv with examples/{name}.teil: {ct.equiv(lifted, file).ok}; "
              f"lifted and nested equal: {ct.equiv(lifted, nested).ok}\n")


#: (kernel, E, n): the sizes of issue 12 for interp, and TeML's Table 2 size for helm.
SIZES = (("interp", 20000, 4), ("interp", 50000, 7), ("helm", 5000, 13))


def bench(rounds: int = 9) -> list[tuple[str, float, float]]:
    """Median seconds per call of the ops-built kernels and ``examples/<kernel>.teil`` on the
    native engine, the two run alternately in each round (so load hits both alike)."""
    out = []
    for name, E, n in SIZES:
        params = {"E": E, "m": n, "n": n} if name == "interp" else {"E": E, "n": n}
        rng = np.random.default_rng(0)
        if name == "interp":
            inputs = {"A": rng.standard_normal((n, n)), "u": rng.standard_normal((E, n, n, n))}
        else:  # D away from 0, as an eigenvalue diagonal of the Helmholtz operator
            inputs = {"S": rng.standard_normal((n, n)), "D": rng.uniform(1.0, 2.0, (n, n, n)),
                      "u": rng.standard_normal((E, n, n, n))}
        build = interp if name == "interp" else helm
        kernels = {"ops": ct.compile(build(), params), "file": ct.compile(ct.load(str(HERE / f"{name}.teil")), params)}
        results = {k: kern(**inputs)["v"] for k, kern in kernels.items()}
        np.testing.assert_allclose(results["ops"], results["file"], rtol=1e-9, atol=1e-9)
        times: dict[str, list[float]] = {k: [] for k in kernels}
        for _ in range(rounds):
            for k, kern in kernels.items():
                t0 = time.perf_counter()
                kern(**inputs)
                times[k].append(time.perf_counter() - t0)
        ops_s, file_s = statistics.median(times["ops"]), statistics.median(times["file"])
        out.append((f"{name} E={E} n={n}", ops_s, file_s))
        print(f"{name} E={E} n={n}: ops {ops_s * 1e3:.2f} ms, examples/{name}.teil {file_s * 1e3:.2f} ms "
              f"(medians of {rounds})")
    return out


if __name__ == "__main__":
    if "--bench" in sys.argv[1:]:
        bench()
    else:
        check()
