"""Counterexamples are the same on every run (issue 14, item 4).

Z3's model of a refuted obligation followed the history of the process: with
the same seed, the same formula and a fresh context, the Pad-Div
counterexample of the ``div-uncontrolled`` mutant showed "unpadded = •",
"0", "1.1" or "2.142857" depending on which tasks a ``make verify`` worker had
run before.  The kernel now renders every counterexample from a model whose
shown terms it has pinned to canonical values (``kernel.canonical_model``).
Here the same refutations are run in fresh processes with different
histories and hash seeds, and their text must be identical.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = r"""
import sys
import z3
from proofs.run import Task, work

if sys.argv[1] == "history":
    # what a make verify worker may have done before: other refutations, a model in the main context
    for task in (Task("mutant", "padded-extents-no-multiples", "Padded extents (Definition 7)"),
                 Task("mutant", "t-proj-reversed", "WD-Proj"), Task("lemma", "Theorem 3 (float64)")):
        work(task)
    s = z3.Solver()
    x = z3.Real("x")
    s.add(x * x > 2, x < 7)
    s.check()
    s.model().eval(z3.Real("fresh"), model_completion=True)
for task in (Task("mutant", "div-uncontrolled", "Pad-Div"), Task("lemma", "Lemma 5 (ii) (verbatim)"),
             Task("mutant", "inv-hypothesis-b-zero", "Inv closes"), Task("mutant", "z3-sub-as-add",
             "Definition 4 (Z3 = numpy)")):
    done = work(task)
    print(task.name, task.lemma, "|", done.error or done.result.counterexample)
"""


def run(history: str, hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run([sys.executable, "-c", SCRIPT, history], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300, check=True)
    return out.stdout


def test_the_same_refutation_prints_the_same_counterexample_in_fresh_processes() -> None:
    first = run("none", "1")
    second = run("history", "2")
    assert first == second
    lines = first.splitlines()
    assert len(lines) == 4 and all("|" in line and line.split("|", 1)[1].strip() for line in lines)
    assert "unpadded = " in lines[0]
