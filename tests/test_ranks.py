"""The rank-generic proofs (proofs/ranks.py): the Seq reading of tuple operations, and rank-7 bugs caught."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from core_teil.lang import typing as ty
from core_teil.lang.syntax import Diag, Elem, Expa, Red, Transp
from core_teil.semantics import eval as ev
from core_teil.semantics.sequences import RankUndecided, Seq
from proofs import engines, pad_ranks, padding, ranks
from proofs.kernel import Status, check_lemma, discharge

LEMMAS = {lem.name: lem for lem in (*ranks.lemmas(), *pad_ranks.lemmas())}
BUILT = sorted(name for name, lem in LEMMAS.items() if lem.build is not None)


def concrete(s: Seq) -> tuple[int, ...]:
    n = z3.simplify(s.length).as_long()
    return tuple(z3.simplify(s[j]).as_long() for j in range(n))


# -- one definition, two readings: tuple operations vs their Seq terms ------------------------

small = st.lists(st.integers(1, 9), max_size=8).map(tuple)


@settings(max_examples=60, deadline=None)
@given(small, st.integers(0, 10), st.integers(0, 10))
def test_slices_are_pythons(t: tuple, a: int, b: int) -> None:
    s = Seq.of(t)
    assert concrete(s[a:b]) == t[a:b]
    assert concrete(s[a:]) == t[a:]
    assert concrete(s[:b]) == t[:b]


@settings(max_examples=60, deadline=None)
@given(small, small, st.integers(1, 9))
def test_concatenation_is_pythons(t: tuple, u: tuple, x: int) -> None:
    assert concrete(Seq.of(t) + Seq.of(u)) == t + u
    assert concrete((x,) + Seq.of(t)) == (x, *t)
    assert concrete(Seq.of(t) + u) == t + u


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_swap_insert_remove_are_the_tuple_ones(data: st.DataObject) -> None:
    t = data.draw(st.lists(st.integers(1, 9), min_size=2, max_size=8).map(tuple))
    i = data.draw(st.integers(1, len(t)))
    j = data.draw(st.integers(1, len(t)))
    assert concrete(ty.swap(Seq.of(t), i, j)) == ty.swap(t, i, j)
    # a symbolic position, as transp's i is in the proofs
    if i < len(t):
        assert concrete(ty.swap(Seq.of(t), z3.IntVal(i), z3.IntVal(i) + 1)) == ty.swap(t, i, i + 1)
    assert concrete(ty.remove(Seq.of(t), i)) == ty.remove(t, i)
    assert concrete(ty.insert(Seq.of(t), i, 7)) == ty.insert(t, i, 7)
    assert concrete(ty.map_shape(lambda d: d + 1, Seq.of(t))) == tuple(d + 1 for d in t)


def test_the_tuple_operations_are_the_lists_ones() -> None:
    t = (1, 2, 3, 4, 5)
    assert ty.swap(t, 2, 4) == (1, 4, 3, 2, 5) == ty.swap(t, 4, 2)
    assert ty.swap(t, 3, 3) == t
    assert ty.insert(t, 6, 0) == (1, 2, 3, 4, 5, 0) and ty.insert(t, 1, 0) == (0, 1, 2, 3, 4, 5)
    assert ty.remove(t, 5) == (1, 2, 3, 4) and ty.rank(t) == 5


def test_a_seq_refuses_what_needs_a_concrete_rank() -> None:
    s = Seq.fresh("T")
    with pytest.raises(RankUndecided):
        len(s)
    with pytest.raises(RankUndecided):
        tuple(s)
    with pytest.raises(RankUndecided):
        _ = s == ()  # could be empty
    assert Seq.fresh("U", nonempty=True) != ()


# -- the lemmas ----------------------------------------------------------------------------


PADDING = {lem.name for lem in pad_ranks.lemmas()}

#: Checks a lemma in a process of its own, as a worker of ``make verify`` does, and prints
#: status, obligations and the failed obligation.
_ALONE = ("import sys; from proofs import registry; from proofs.kernel import check_lemma; "
          "r = check_lemma(registry.by_name()[sys.argv[1]]); print(r.status.name, r.obligations, r.failed)")


@pytest.mark.parametrize("name", BUILT)
def test_every_generic_lemma_is_proved(name: str) -> None:
    if name in PADDING:
        # In a process of its own: after the rest of the suite had run in the same process,
        # Pad-Transp (all ranks) (b) once ran past its rlimit that it meets with 4x to spare in
        # a fresh one (Z3's search depends on the process's history; make verify's workers are
        # fresh processes too).
        import subprocess
        import sys

        run = subprocess.run([sys.executable, "-c", _ALONE, name], capture_output=True, text=True, timeout=600)
        status, count, failed = run.stdout.split(maxsplit=2)
        assert status == "PROVED", (failed, run.stderr[-2000:])
        assert int(count) >= 1
        return
    r = check_lemma(LEMMAS[name])
    assert r.status is Status.PROVED, (r.failed, r.counterexample)
    assert r.obligations >= 1


@contextmanager
def patched(table: Any, key: Any, fn: Any) -> Iterator[None]:
    get = table.__getitem__ if isinstance(table, dict) else lambda k: getattr(table, k)
    put = table.__setitem__ if isinstance(table, dict) else lambda k, v: setattr(table, k, v)
    old = get(key)
    put(key, fn)
    try:
        yield
    finally:
        put(key, old)


def _reported_rank(text: str) -> int:
    m = re.search(r"rank (\d+)", text)
    assert m, text
    return int(m.group(1))


def diag_upto_7(e: Diag, k: Any, sem: ev.Sem) -> Any:
    return ev.denote(e.arg, (k[0], k[0]) + k[1:6], sem)  # right for every rank below 8


def red_upto_6(e: Red, k: Any, sem: ev.Sem) -> Any:
    n = sem.bound(sem.type(e.arg)[0])
    return sem.interp.sum(n, lambda m: ev.denote(e.arg, (m,) + k[:5], sem), e)


def transp_identity_from_7(e: Transp, k: Any, sem: ev.Sem) -> Any:
    return ev.denote(e.arg, ty.swap(k, e.i, e.i + 1) if ty.rank(k) < 7 else k, sem)


def t_red_upto_6(c: ty.Checker, e: Red) -> ty.Derivation:
    d = c.infer(e.arg)
    c.rank_at_least(d.shape, 1, "T-Red", e.span, "red")
    return ty.Derivation("T-Red", e, d.shape[1:6], (d,))


@pytest.mark.parametrize(("table", "key", "fn", "lemma", "at_least"), [
    (ev.EQUATIONS, Diag, diag_upto_7, "WD-Diag (all ranks)", 8),
    (ev.EQUATIONS, Red, red_upto_6, "WD-Red (all ranks)", 7),
    (ty._RULES, Red, t_red_upto_6, "WD-Red (all ranks)", 7),
])
def test_an_equation_wrong_only_from_rank_7_is_refuted(table: Any, key: Any, fn: Callable, lemma: str,
                                                       at_least: int) -> None:
    assert check_lemma(LEMMAS[lemma]).status is Status.PROVED
    with patched(table, key, fn):
        r = check_lemma(LEMMAS[lemma])
    assert r.status is Status.REFUTED
    assert _reported_rank(r.counterexample or "") >= at_least, r.counterexample


def test_an_equation_that_asks_for_the_rank_is_not_proved_for_every_rank() -> None:
    with patched(ev.EQUATIONS, Transp, transp_identity_from_7):
        r = check_lemma(LEMMAS["WD-Transp (all ranks)"])
    assert r.status is Status.REFUTED
    assert "concrete rank" in (r.counterexample or ""), r.counterexample


def st_stmt_upto_6(stmt: Any, sem: ev.Sem) -> Any:
    bounds = sem.bounds(sem.typed.gamma[stmt.target])[:6]
    k = sem.interp.domain(bounds, stmt)
    return sem.interp.update(sem.store, stmt.target, k, ev.denote(stmt.expr, k, sem), bounds)


def st_stmt_reads_new(stmt: Any, sem: ev.Sem) -> Any:
    bounds = sem.bounds(sem.typed.gamma[stmt.target])
    k = sem.interp.domain(bounds, stmt)
    first = sem.interp.update(sem.store, stmt.target, k, ev.denote(stmt.expr, k, sem), bounds)
    sem.interp.path.append(z3.BoolVal(True))
    v = ev.denote(stmt.expr, k, replace(sem, store=first))  # μ' where St-Stmt reads μ
    return sem.interp.update(sem.store, stmt.target, k, v, bounds)


@pytest.mark.parametrize("fn", [st_stmt_upto_6, st_stmt_reads_new])
def test_st_stmt_mutants_are_refuted_for_every_rank(fn: Callable) -> None:
    with patched(ev, "st_stmt", fn):
        r = check_lemma(LEMMAS["Lemma 4.5 (all ranks)"])
    assert r.status is Status.REFUTED, r


@pytest.mark.parametrize("n", [0, 1, 3, ranks.ST_SEQ_LENGTH - 1])
def test_eval_prog_that_stops_early_is_refuted(n: int) -> None:
    def first_n(sem: ev.Sem) -> Any:
        for stmt in sem.typed.program.stmts[:n]:
            sem = replace(sem, store=ev.st_stmt(stmt, sem))
        return sem.store

    with patched(ev, "eval_prog", first_n):
        r = check_lemma(LEMMAS["St-Seq"])
    assert r.status is Status.REFUTED
    assert f"{n + 1} statement(s)" in (r.failed or ""), r.failed


def t_transp_to_rank(c: ty.Checker, e: Transp) -> ty.Derivation:
    d = c.infer(e.arg)
    c.position(e.i, 1, ty.rank(d.shape), "T-Transp", e.span, "`transp` position")  # i <= rank
    return ty.Derivation("T-Transp", e, ty.swap(d.shape, e.i, e.i + 1), (d,))


def t_elem_no_extents(c: ty.Checker, e: Any) -> ty.Derivation:
    d0, d1 = c.infer(e.left), c.infer(e.right)
    if e.op == "mul" and d0.shape == () and d1.shape != ():
        return ty.t_smul(e, d0, d1)
    if e.op == "div" and d1.shape == () and d0.shape != ():
        return ty.t_sdiv(e, d0, d1)
    c.same_rank(d0.shape, d1.shape, "T-Elem", e.span, "operands")
    return ty.Derivation("T-Elem", e, d0.shape, (d0, d1))  # extents not compared


@pytest.mark.parametrize(("key", "fn", "rule"), [
    (Transp, t_transp_to_rank, "T-Transp"),
    (Red, t_red_upto_6, "T-Red"),
    (Elem, t_elem_no_extents, "T-Elem"),
])
def test_a_typing_rule_that_accepts_too_much_is_refuted_at_every_rank(key: type, fn: Callable, rule: str) -> None:
    with patched(ty._RULES, key, fn):
        r = check_lemma(LEMMAS[f"Lemma 4.1 case {rule} (all ranks)"])
    assert r.status is Status.REFUTED
    assert "checker ⟹ rules" in (r.failed or ""), r.failed


# -- the engines at ranks 7..10 (proofs/engines.py) ---------------------------------------------

ENGINES = engines.lemmas()[0]


def domain_upto_6(self: ev.ArrayInterpretation, bounds: tuple, stmt: Any) -> Any:
    kept = (*bounds[:6], *(1 for _ in bounds[6:]))  # positions from 7 on not enumerated
    return tuple(np.ogrid[tuple(slice(1, n + 1) for n in kept)]) if bounds else ()


def expa_guard_from_7(e: Any, k: Any, sem: ev.Sem) -> Any:
    v = ev.denote(e.arg, k[1:], sem)
    if sem.pad is not None:
        v = sem.interp.guard(k[0] if ty.rank(k) < 7 else k[1], sem.interp.extent(e.d), v)
    return v


def test_the_engines_agree_with_the_operators_at_ranks_7_to_10() -> None:
    r = check_lemma(ENGINES)
    assert r.status is Status.PROVED, r.counterexample
    assert r.obligations == sum(len(list(engines.instances(n))) + len(list(engines.full_instances(n))) + 1
                                for n in engines.HIGH_RANKS) + 1


def test_a_numpy_domain_that_stops_at_rank_6_is_caught() -> None:
    with patched(ev.ArrayInterpretation, "domain", domain_upto_6):
        r = check_lemma(ENGINES)
    assert r.status is Status.REFUTED
    assert "at rank 7: reference = numpy operators fails" in (r.counterexample or ""), r.counterexample


def test_a_padded_guard_wrong_from_rank_7_is_caught_twice() -> None:
    with patched(ev.EQUATIONS, Expa, expa_guard_from_7):
        concrete = check_lemma(ENGINES)
        generic = check_lemma(LEMMAS["Pad-WD-Expa (all ranks)"])
    assert concrete.status is Status.REFUTED and "rank 7" in (concrete.counterexample or "")
    assert generic.status is Status.REFUTED and "concrete rank" in (generic.counterexample or "")


def expa_padded_reads_1_from_8(e: Expa, k: Any, sem: ev.Sem) -> Any:
    """In bounds at every rank (1 is in every extent), so only the padding invariant sees it."""
    at = k[1:] if sem.pad is None else k[1:7] + ty.map_shape(lambda x: x * 0 + 1, k[7:])
    v = ev.denote(e.arg, at, sem)
    return v if sem.pad is None else sem.interp.guard(k[0], sem.interp.extent(e.d), v)


def test_a_padded_read_wrong_from_rank_8_is_seen_by_the_padding_invariant_for_every_rank_only() -> None:
    ranked = {lem.name: lem for lem in padding.lemmas()}["Pad-Expa"]
    with patched(ev.EQUATIONS, Expa, expa_padded_reads_1_from_8):
        assert check_lemma(LEMMAS["Pad-WD-Expa (all ranks)"]).status is Status.PROVED  # reads in bounds
        assert check_lemma(ranked).status is Status.PROVED  # ranks <= 6 cannot see position 8
        r = check_lemma(LEMMAS["Pad-Expa (all ranks)"])
    assert r.status is Status.REFUTED and "Inv (a)" in (r.failed or "")
    assert _reported_rank(r.counterexample or "") >= 8, r.counterexample


def test_a_memory_reads_a_multi_index_by_its_positions_only() -> None:
    """Two sequences equal on their positions read the same element (their arrays may differ
    beyond the length); reading the raw arrays would tell them apart."""
    k, q = Seq.fresh("k"), Seq.fresh("q")
    same = z3.And(k.length == q.length, k.length >= 0,
                  z3.ForAll([z3.Int("j")], z3.Implies(z3.And(z3.Int("j") >= 0, z3.Int("j") < k.length),
                                                      k.arr[z3.Int("j")] == q.arr[z3.Int("j")])))
    X = pad_ranks.Memory("X", "U")
    s = z3.Solver()
    s.add(same, X.at(k) != X.at(q))
    assert s.check() == z3.unsat
    raw = X.function()
    s = z3.Solver()
    s.add(same, raw(k.arr, k.length) != raw(q.arr, q.length))
    assert s.check() == z3.sat


def test_a_sum_is_proved_through_the_sum_laws() -> None:
    """red's padded Σ runs to ⌈n⌉: without the instances of the sum laws (zero extension,
    congruence, absorption) claim (a) does not follow from the terms' facts."""
    (g,) = ranks.generic_schemata("Red")
    a = next(ob for ob in pad_ranks.pad_generic_obligations(g) if "Inv (a)" in ob.name)
    assert a.uses and discharge(a).status is Status.PROVED
    assert discharge(replace(a, uses=())).status is not Status.PROVED


def test_the_obligations_are_the_same_terms_whatever_ran_before() -> None:
    """Names are numbered per obligation: Z3's search depends on them, and a process-wide counter
    made the same obligation proved in one run and unknown in another."""
    (g,) = ranks.generic_schemata("Contr")
    first = [ob.formula.sexpr() for ob in pad_ranks.pad_generic_obligations(g)]
    list(pad_ranks.pad_generic_obligations(ranks.generic_schemata("Red").__next__()))
    assert [ob.formula.sexpr() for ob in pad_ranks.pad_generic_obligations(g)] == first


def test_a_hypothesis_instance_at_a_wrong_position_does_not_prove_the_step() -> None:
    """The positions a witness may move to are hints: with only the witness itself (no shift),
    transp's padding claim (b) is not proved, the instance does not imply it."""
    (g,) = ranks.generic_schemata("Transp")
    hints = pad_ranks.HINTS["Transp"]
    with patched(pad_ranks.HINTS, "Transp", replace(hints, shifts=range(0, 1))):
        obs = list(pad_ranks.pad_generic_obligations(g))
    b = next(ob for ob in obs if "Inv (b)" in ob.name)
    assert discharge(b).status is not Status.PROVED


def test_the_operators_are_numpys_not_evals() -> None:
    import inspect

    src = inspect.getsource(engines.operators)
    assert "denote" not in src and "EQUATIONS" not in src


@pytest.mark.parametrize(("k", "t", "inside"), [
    ((1, 2), (2, 2), True), ((2, 2), (2, 2), True), ((), (), True),
    ((0, 1), (2, 2), False), ((3, 1), (2, 2), False), ((1,), (2, 2), False), ((1, 1, 1), (2, 2), False),
])
def test_within_and_outside_are_bounds_and_length(k: tuple, t: tuple, inside: bool) -> None:
    s = z3.Solver()
    s.add(Seq.of(k).within(Seq.of(t)))
    assert (s.check() == z3.sat) is inside
    s = z3.Solver()
    s.add(Seq.of(k).outside(Seq.of(t)))
    assert (s.check() == z3.sat) is not inside


@settings(max_examples=40, deadline=None)
@given(small, st.integers(-10, 10), st.integers(-10, 10))
def test_negative_positions_count_from_the_end(t: tuple, a: int, b: int) -> None:
    assert concrete(Seq.of(t)[a:b]) == t[a:b]
    if t and -len(t) <= a < len(t):
        assert z3.simplify(Seq.of(t)[a]).as_long() == t[a]


def test_the_ceil_axiom_is_the_engines_rounding() -> None:
    assert check_lemma(LEMMAS["CEIL axiom"]).status is Status.PROVED
    wrong = z3.Solver()
    n = z3.Int("n")
    wrong.add(ranks.M >= 1, z3.Not(ranks.ceil_property(lambda m, x: x - 1, n)))  # ⌈n⌉ = n - 1 is refuted
    assert wrong.check() == z3.sat


# -- the ranks column and the summary line --------------------------------------------------------


def test_every_lemma_says_the_ranks_it_holds_for() -> None:
    from proofs import registry
    from proofs.kernel import EVERY_RANK, NO_RANK, Lemma, Rule, rank_coverage

    known = registry.by_name()
    cov = {name: rank_coverage(lem, known) for name, lem in known.items()}
    # The type-safety chain rests on the rank-generic steps, so it holds for every rank ...
    for name in ("Lemma 4.1", "Lemma 4.3", "Theorem 4.4", "Theorem 4.6", "Lemma 5 (i)", "Corollary 3", "St-Seq"):
        assert cov[name] == EVERY_RANK, (name, cov[name])
    # ... and so does the padding chain, since Theorem 3's step, base and closure are rank-generic.
    for name in ("Theorem 3* (all ranks)", "Theorem 2*", "Lemma 6 & 5 (ii)* (all ranks)"):
        assert cov[name] == EVERY_RANK, (name, cov[name])
    # The ranked lemmas stay what they are: instances at ranks <= R.
    for name in ("Theorem 3*", "Pad-Red", "WD-Red", "Lemma 4.1 case T-Red"):
        assert cov[name] == "<= 6", (name, cov[name])
    # A lemma that claims every rank for itself rests only on premises that hold for every rank.
    for name, lem in known.items():
        if lem.coverage == EVERY_RANK:
            assert all(cov[p] in (EVERY_RANK, NO_RANK) for p in lem.premises), (name, lem.premises)
    assert cov["Sum-Fubini"] == NO_RANK and cov["Engines at ranks 7-10"] == "7..10"
    # A conclusion holds only where every premise does.
    mixed = Lemma("mixed", "-", "-", None, Rule.COROLLARY, premises=("Lemma 4.3", "Theorem 3*"))
    assert rank_coverage(mixed, known) == "<= 6"
    generic = Lemma("generic", "-", "-", None, Rule.COROLLARY, premises=("Lemma 4.3", "Sum-Fubini"))
    assert rank_coverage(generic, known) == EVERY_RANK
    rank_free = Lemma("rank-free", "-", "-", None, Rule.COROLLARY, premises=("Sum-Fubini",))
    assert rank_coverage(rank_free, known) == NO_RANK
    # Only lemmas of proofs/ranks.py and proofs/pad_ranks.py (and their consequences) claim every rank.
    from proofs import pad_ranks

    claimed = {name for name, lem in known.items() if lem.coverage == EVERY_RANK}
    assert claimed == {lem.name for lem in (*ranks.lemmas(), *pad_ranks.lemmas()) if lem.coverage == EVERY_RANK}
    assert all(lem.build is not None for name, lem in known.items() if name in claimed)
