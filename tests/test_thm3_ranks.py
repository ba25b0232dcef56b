"""Theorem 3 for every rank (proofs/pad_ranks.py): the step, the base and the closure of Inv
see a semantics that is wrong only from rank 12 on, which the ranked proofs (ranks <= 6) and
the engines' ranks 7-10 do not."""

from __future__ import annotations

import itertools
import re

import pytest
import z3

from core_teil.semantics import eval as ev
from core_teil.semantics import symbolic as sym
from core_teil.semantics.sequences import Seq
from proofs import mutants, registry, run
from proofs.kernel import LemmaResult, Status, check_lemma
from proofs.ranks import GenericInterpretation
from proofs.run import Done, Task, forked, in_fresh_process

LEMMAS = registry.by_name()
MUTANTS = {m.name: m for m in mutants.CATALOGUE}


def _rank(text: str | None) -> int:
    m = re.search(r"rank (\d+)", text or "")
    assert m, text
    return int(m.group(1))


def under(mutant: str, lemma: str) -> LemmaResult:
    """``lemma`` decided with ``mutant`` applied, in a fresh interpreter as make verify decides it
    (Z3's search depends on the process's history; this one has run the suite)."""
    done = in_fresh_process(Task("mutant", mutant, lemma))
    assert done.result is not None, done.error
    return done.result


def test_the_padded_initial_store_wrong_from_rank_12_is_seen_by_the_base_for_every_rank_only() -> None:
    with mutants.applied(MUTANTS["d-pad-var-guards-11-positions"]):
        assert check_lemma(LEMMAS["Theorem 3*"]).status is Status.PROVED  # ranks <= 6
        assert check_lemma(LEMMAS["Engines at ranks 7-10"]).status is Status.PROVED
    r = under("d-pad-var-guards-11-positions", "Theorem 3* (all ranks)")
    assert r.status is Status.REFUTED and "Inv (b)" in (r.failed or ""), r
    assert _rank(r.counterexample) >= 12


def test_a_statement_writing_1_into_the_padding_from_rank_12_is_seen_by_the_step_for_every_rank_only() -> None:
    with mutants.applied(MUTANTS["st-stmt-padding-one-from-position-12"]):
        assert check_lemma(LEMMAS["Theorem 3 (step)"]).status is Status.PROVED  # ranks <= 6
    r = under("st-stmt-padding-one-from-position-12", "Theorem 3 (step, all ranks)")
    assert r.status is Status.REFUTED and "after St-Stmt: Inv (b)" in (r.failed or ""), r
    assert _rank(r.counterexample) >= 12


def test_a_hole_assumed_to_hold_only_zeros_in_its_padding_does_not_close() -> None:
    r = under("hole-b-zero-only", "Inv closes (all ranks)")
    assert r.status is Status.REFUTED and "assumption (b)" in (r.failed or ""), r


def test_the_unguarded_initial_store_is_refuted_at_every_rank_too() -> None:
    r = under("d-pad-var-border", "Theorem 3* (all ranks)")
    assert r.status is Status.REFUTED and "Inv (b)" in (r.failed or ""), r


_RUN_BEFORE: list[str] = []


def _remembering_work(task: Task) -> Done:
    _RUN_BEFORE.append(task.name)
    return Done(task, error=",".join(_RUN_BEFORE))


def test_every_task_of_make_verify_starts_from_the_same_process_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """make verify forks each task from a process that has built no obligation: Z3's search
    depends on the process's history (the same obligation took 0.9M of rlimit after one and
    more than 8M after another), so no task may inherit what another did."""
    monkeypatch.setattr(run, "work", _remembering_work)
    seen = sorted(d.error for d in forked([Task("lemma", name) for name in "abcd"], 2))
    assert seen == ["a", "b", "c", "d"]  # each saw only itself: no worker ran two tasks


def test_a_verdict_does_not_depend_on_the_jobs() -> None:
    task = Task("lemma", "Inv closes (all ranks)")
    ones = [d.result for d in forked([task, Task("lemma", "Pad-Expa (all ranks)"), task], 1)]
    closes = [r for r in ones if r is not None and r.name == task.name]
    assert len(closes) == 2 and closes[0].rlimit == closes[1].rlimit
    assert all(r.status is Status.PROVED for r in closes)


@pytest.mark.parametrize("rank", range(5))
def test_d_pad_var_on_a_seq_is_d_pad_var_on_the_tuple(rank: int) -> None:
    """eval.guard_each guards a Seq once on every position (Seq.below), a tuple position by
    position: the two readings of d-pad-var are the same value at every concrete rank."""
    p = tuple(z3.Int(f"p{j}") for j in range(rank))
    t = tuple(z3.Int(f"t{j}") for j in range(rank))
    f = z3.Function("orig", z3.ArraySort(z3.IntSort(), z3.IntSort()), z3.IntSort(), sym.Value)

    def original(q: object) -> z3.ExprRef:
        s = q if isinstance(q, Seq) else Seq.of(q)
        j = z3.Int("j!seq")
        return f(z3.Lambda([j], z3.If(z3.And(j >= 0, j < s.length), s.arr[j], 0)), s.length)

    interp = GenericInterpretation()
    as_tuple = ev.d_pad_var(interp, original, p, t)
    as_seq = ev.d_pad_var(interp, original, Seq.of(p), Seq.of(t))
    s = z3.Solver()
    s.add(as_tuple != as_seq)
    assert s.check() == z3.unsat


def test_guard_each_is_position_by_position_on_tuples() -> None:
    """The fold itself: a guard dropped at one position shows (numbers, no Z3)."""

    class Numbers:
        def guard(self, j: int, d: int, v: float) -> float:
            return v if j <= d else 0.0

    for p in itertools.product((1, 2, 3), repeat=3):
        expect = 5.0 if all(j <= 2 for j in p) else 0.0
        assert ev.guard_each(Numbers(), p, (2, 2, 2), 5.0) == expect  # type: ignore[arg-type]
