"""Obligation.search: where the kernel looks for a counterexample when Z3 answers unknown."""

from __future__ import annotations

import z3

from proofs.kernel import Obligation, Status, discharge

x, y = z3.Int("x"), z3.Int("y")
#: Factoring a product of two primes: satisfiable, and more than a small rlimit finds unaided.
GOAL = z3.And(x > 1, y > 1, x * y == 7919 * 7907)
SMALL = 20_000


def test_without_a_search_region_the_hard_model_is_unknown() -> None:
    assert discharge(Obligation("factor", (), GOAL, rlimit=SMALL)).status is Status.UNKNOWN


def test_a_model_found_in_a_search_region_refutes() -> None:
    out = discharge(Obligation("factor", (), GOAL, rlimit=SMALL, search=(x == 7907,)))
    assert out.status is Status.REFUTED, out
    assert "x = 7907" in (out.counterexample or "") and "y = 7919" in (out.counterexample or ""), out


def test_no_model_in_the_search_regions_leaves_unknown_never_proved() -> None:
    out = discharge(Obligation("factor", (), GOAL, rlimit=SMALL, search=(x == 2, x == 3)))
    assert out.status is Status.UNKNOWN, out


def test_a_proved_obligation_never_looks_at_its_search_regions() -> None:
    """The regions cost nothing where Z3 answers: the same rlimit with and without them."""
    goal = z3.And(x > 1, y > 1, x * y == 7919 * 7907, x * x == 3)
    plain = discharge(Obligation("no root", (), goal))
    searched = discharge(Obligation("no root", (), goal, search=(x == 7907, y == 7907)))
    assert plain.status is searched.status is Status.PROVED
    assert searched.rlimit == plain.rlimit > 0
