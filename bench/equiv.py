"""``python -m bench equiv [REPEATS] [--cli] [NAME ...]``: how long ``core-teil equiv`` takes to decide (issue 13).

Every pair of ``examples/equiv/`` (``NAME_p.teil`` / ``NAME_q.teil``), the nested and lifted CFD
interpolation, and the hidden-like pairs of ``examples/equiv/review/`` (an independent review's
equivalent, differing and large-shape pairs, with the verdict each must get in ``expected.txt``).
Each pair is decided REPEATS times (default 5) in one process (parsing excluded); the table shows
the verdict, whether it is the expected one, and the median and maximum wall-clock time.  With
``--cli`` each decision is a fresh ``core-teil equiv`` process instead (interpreter start-up and
imports included, as a user sees it).  Z3 runs under a fixed seed and rlimit and the search is
bounded by counts, not by time, so the verdicts do not depend on the machine; the times do (the
issue's target: every pair under 2 s).  Not a test: nothing is asserted about time; the exit code
is 1 if a verdict is not the expected one.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAIRS = ROOT / "examples" / "equiv"
REVIEW = PAIRS / "review"
VERDICT = {0: "equivalent", 1: "differ", 2: "usage", 3: "unknown"}


def expected() -> dict[str, str]:
    """The verdict each pair must get: examples/equiv/README.md's table, review/expected.txt."""
    out = {}
    for line in (REVIEW / "expected.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            stem, verdict = line.split()
            out[f"review/{stem}"] = verdict
    for p in sorted(PAIRS.glob("*_p.teil")):
        stem = p.name[:-len("_p.teil")]
        out[stem] = "differ" if stem.startswith("bad_") else "unknown" if stem.startswith("unknown_") else "equivalent"
    out["interp vs interp_nested"] = "equivalent"
    return out


def pairs() -> list[tuple[str, Path, Path]]:
    out = [(p.name[:-len("_p.teil")], p, p.with_name(p.name.replace("_p.teil", "_q.teil")))
           for p in sorted(PAIRS.glob("*_p.teil"))]
    out.append(("interp vs interp_nested", ROOT / "examples" / "interp.teil", ROOT / "examples" / "interp_nested.teil"))
    out += [(f"review/{p.name[:-len('_p.teil')]}", p, p.with_name(p.name.replace("_p.teil", "_q.teil")))
            for p in sorted(REVIEW.glob("*_p.teil"))]
    return out


def decide(a: Path, b: Path, cli: bool) -> tuple[str, float]:
    """One decision: the verdict and the wall-clock seconds it took."""
    if cli:
        exe = Path(sys.executable).with_name("core-teil")
        t0 = time.perf_counter()
        code = subprocess.run([str(exe), "equiv", str(a), str(b)], capture_output=True).returncode
        return VERDICT.get(code, f"exit {code}"), time.perf_counter() - t0
    import core_teil as ct

    p, q = ct.load(str(a)), ct.load(str(b))
    t0 = time.perf_counter()
    try:
        code = ct.equiv(p, q).exit_code
    except ct.TeilError as exc:
        code = exc.exit_code
    return VERDICT.get(code, f"exit {code}"), time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cli = "--cli" in argv
    rest = [a for a in argv if a != "--cli"]
    repeats = int(rest.pop(0)) if rest and rest[0].isdigit() else 5
    want = expected()
    wrong, medians = [], []
    if not cli:  # imports and z3's first context outside the timings (a fresh process pays them: --cli)
        decide(PAIRS / "law5_red_expa_p.teil", PAIRS / "law5_red_expa_q.teil", False)
    print(f"core-teil equiv: median of {repeats} {'fresh processes' if cli else 'in-process calls'} per pair")
    print(f"{'pair':30} {'verdict':11} {'expected':11} {'median s':>9} {'max s':>7}")
    for name, a, b in pairs():
        if rest and not any(r in name for r in rest):
            continue
        times, verdict = [], ""
        for _ in range(repeats):
            verdict, dt = decide(a, b, cli)
            times.append(dt)
        ok = verdict == want.get(name, verdict)
        if not ok:
            wrong.append(name)
        medians.append((statistics.median(times), name))
        print(f"{name:30} {verdict:11} {want.get(name, '?'):11} {statistics.median(times):9.3f} {max(times):7.3f}"
              + ("" if ok else "  WRONG"), flush=True)
    if medians:
        worst = max(medians)
        print(f"\n{len(medians)} pairs, {len(medians) - len(wrong)} decided as expected; median of medians "
              f"{statistics.median(m for m, _ in medians):.3f} s, slowest {worst[1]} {worst[0]:.3f} s "
              f"({'under' if worst[0] < 2 else 'OVER'} the 2 s target)")
    if wrong:
        print("not as expected: " + ", ".join(wrong))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
