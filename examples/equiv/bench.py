"""Decision times of ``ct.equiv`` on the pairs of this folder (issue 13: each under 2 s).

Run from the repository root:  .venv/bin/python examples/equiv/bench.py [REPEATS]
Prints, per pair, the verdict and the median wall-clock time of REPEATS (default 5)
in-process calls (parsing excluded; Z3 runs under a fixed seed and rlimit, so the
verdicts do not depend on the machine, the times do).  Not a test: no timing is asserted.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import core_teil as ct

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def pairs() -> list[tuple[str, Path, Path]]:
    out = [(p.name[:-len("_p.teil")], p, p.with_name(p.name.replace("_p.teil", "_q.teil")))
           for p in sorted(HERE.glob("*_p.teil"))]
    out.append(("interp vs interp_nested", ROOT / "examples" / "interp.teil", ROOT / "examples" / "interp_nested.teil"))
    return out


def main(repeats: int = 5) -> int:
    print(f"{'pair':32} {'verdict':10} {'median s':>9} {'max s':>7}")
    for name, a, b in pairs():
        p, q = ct.load(str(a)), ct.load(str(b))
        times, verdict = [], ""
        for _ in range(repeats):
            t0 = time.perf_counter()
            report = ct.equiv(p, q)
            times.append(time.perf_counter() - t0)
            verdict = {0: "equivalent", 1: "differ", 3: "unknown"}[report.exit_code]
        print(f"{name:32} {verdict:10} {statistics.median(times):9.3f} {max(times):7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
