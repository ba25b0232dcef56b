"""Every exercise's checker reads a long adversarial answer in time linear in its length and
refuses it with a TeilError (review r25: `(\\S+)`-style patterns tried from every position were
quadratic, 40 kB of letters took minutes; 50,000 opening parentheses were a RecursionError).

The answers are checked in a subprocess with a timeout far above the linear run (about
8 seconds here for all of them); the timeout catches a hang, it does not time the checkers."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
from core_teil.errors import TeilError
from core_teil.teach.exercises import BY_ID, check_answer

N = 50_000
TEXTS = ["a" * N, "a/" * N, "a[" * N, "[" * N, "\n" * N + "x", "a-" * N, "a=" * N, "Σ" * N, "a " * N,
         "1." * N, "(" * N, " " * N + "(all ranks" ]
for ex_id in BY_ID:
    for text in TEXTS:
        try:
            check_answer(ex_id, text)
        except TeilError:
            pass
print("checked", len(BY_ID) * len(TEXTS))
"""


def test_long_answers_are_refused_without_a_hang() -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("checked "), proc.stdout
