"""``python -m bench team-gemm [ROUNDS]``: where mttkrp's streamed GEMMs should run.

docs/decisions.md, "GEMMs inside the team": each native mttkrp 250^3 call is timed right after
the hand-written numpy (whose GEMM leaves OpenBLAS's idle worker polling) and after a 0.3 s
sleep, in three fresh processes, since OpenBLAS reads its poll only when numpy loads it:

- ``numpy.matmul loop``: ``CORE_TEIL_NO_DIRECT_BLAS=1``;
- ``team, numpy first``: numpy imported before core_teil, so the poll is OpenBLAS's default;
  the engine then keeps the loop on all cores (``OpenBLAS.quiet``) unless ``--force`` is given;
- ``team, core_teil first``: ``import core_teil`` has set ``OPENBLAS_THREAD_TIMEOUT=20``.

The children run without the ``OPENBLAS_THREAD_TIMEOUT`` that ``python -m bench`` itself set
on importing core_teil (a child inherits its parent's environment).

Medians in ms over ROUNDS (default 7) pairs, three times per process. Not a test: nothing is
asserted about time. Run it on a quiet machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import statistics, sys, time
    {imports}
    from bench import _mttkrp_hand
    from core_teil.native import blas
    if {force}:
        blas.QUIET_SPIN = 30
    k = ct.compile(ct.load("examples/mttkrp.teil"), {{"I": 250, "J": 250, "K": 250, "L": 250}})
    rng = np.random.default_rng(0)
    B, C, D = rng.random((250, 250, 250)), rng.random((250, 250)), rng.random((250, 250))
    k(B=B, C=C, D=D)
    for _ in range(3):
        after, rested = [], []
        for _ in range({rounds}):
            _mttkrp_hand(B, C, D)
            t = time.perf_counter(); k(B=B, C=C, D=D); after.append(time.perf_counter() - t)
            _mttkrp_hand(B, C, D)
            time.sleep(0.3)
            t = time.perf_counter(); k(B=B, C=C, D=D); rested.append(time.perf_counter() - t)
        print(f"{{statistics.median(after) * 1e3:7.1f}} {{statistics.median(rested) * 1e3:7.1f}}")
""")

NUMPY_FIRST = "import numpy as np\nimport core_teil as ct"
CORE_TEIL_FIRST = "import core_teil as ct\nimport numpy as np"


def main(argv: list[str]) -> int:
    force = "--force" in argv
    rounds = int(next((a for a in argv if a.isdigit()), "7"))
    runs = [("numpy.matmul loop", NUMPY_FIRST, {"CORE_TEIL_NO_DIRECT_BLAS": "1"}, False),
            ("team, numpy first", NUMPY_FIRST, {}, force),
            ("team, core_teil first", CORE_TEIL_FIRST, {}, False)]
    print("mttkrp 250^3 on all cores, medians in ms: right after a numpy GEMM / after a 0.3 s sleep")
    for name, imports, env, forced in runs:
        code = CHILD.format(imports=imports, force=forced, rounds=rounds)
        # without the poll this process's `import core_teil` put into the environment: each child
        # gets OpenBLAS's default, unless it imports core_teil before numpy
        base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
        done = subprocess.run([sys.executable, "-c", code], env={**base, **env}, check=False,
                              capture_output=True, text=True)
        if done.returncode:
            print(f"{name}: failed\n{done.stderr}", file=sys.stderr)
            return 1
        for line in done.stdout.split("\n"):
            if line.strip():
                print(f"{name + (' (forced)' if forced else ''):32} {line}")
    return 0
