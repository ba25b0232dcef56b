"""Review rK of proofs/pad_ranks.py (issue 14): wrong padded semantics that only the padding
invariant for every rank can see, so that a weakening of that proof is noticed.

``make verify``'s catalogue has no mutant whose only target is a ``Pad-* (all ranks)`` lemma
(each is also killed by a rank-indexed lemma or by ``Engines at ranks 7-10``), so a change that
makes those lemmas prove less (claims restricted to ranks <= 10 or to positions < 11, the hole's
padding assumed to hold 0 only, the scalar hole assumed defined, a memory that reads the first 11
positions only) leaves every check green.  Each semantics below is wrong from rank 12 on only
(position 11, counted from 0), in bounds at every rank, so the rank-indexed lemmas (ranks <= 6)
and the engines (ranks 7..10) cannot see it; the rank-generic lemma must not prove it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import z3

from core_teil.lang import typing as ty
from core_teil.lang.syntax import Elem, Transp, Var
from core_teil.semantics import eval as ev
from core_teil.semantics import symbolic as sym
from core_teil.semantics.sequences import Seq
from proofs import pad_ranks
from proofs.kernel import Status, check_lemma

LEMMAS = {lem.name: lem for lem in pad_ranks.lemmas()}
#: The first position (0-based) the wrong semantics below touch: ranks <= 11 behave correctly.
POS = 11


@contextmanager
def equation(ctor: type, fn: Callable[..., Any]) -> Iterator[None]:
    old = ev.EQUATIONS[ctor]
    ev.EQUATIONS[ctor] = fn
    try:
        yield
    finally:
        ev.EQUATIONS[ctor] = old


def in_padding_at_pos(e: Any, k: Any, sem: ev.Sem) -> z3.BoolRef | None:
    """``k`` is in the padding of ``e``'s type at position ``POS`` (None: no such position here)."""
    t = sem.type(e)
    if sem.pad is None or isinstance(k, tuple) or isinstance(t, tuple):
        return None
    return z3.And(k.length > POS, k[POS] > sem.interp.extent(t[POS]))


def elem_one_in_padding(e: Elem, k: Any, sem: ev.Sem) -> Any:
    """Padded: 1 in the padding at position 11 (Inv (b) broken from rank 12 on)."""
    v = ev.ev_elem(e, k, sem)
    c = in_padding_at_pos(e, k, sem)
    return v if c is None else z3.If(c, sym.val(1), v)


def elem_one_where_only_pos_is_out(e: Elem, k: Any, sem: ev.Sem) -> Any:
    """Padded: 1 where position 11 is the *only* position in the padding (the positions before it
    in the domain): a claim whose witness position is restricted to < 11 does not see it."""
    v = ev.ev_elem(e, k, sem)
    c = in_padding_at_pos(e, k, sem)
    if c is None:
        return v
    t = ty.map_shape(sem.interp.extent, sem.type(e))  # the original extents
    return z3.If(z3.And(c, k[:POS].within(t[:POS])), sym.val(1), v)


def elem_undef_in_padding(e: Elem, k: Any, sem: ev.Sem) -> Any:
    """Padded: • in the padding at position 11 where the unpadded value is defined (Inv (c))."""
    v = ev.ev_elem(e, k, sem)
    c = in_padding_at_pos(e, k, sem)
    return v if c is None else z3.If(c, sym.UNDEF, v)


def transp_one_in_padding(e: Transp, k: Any, sem: ev.Sem) -> Any:
    v = ev.ev_transp(e, k, sem)
    c = in_padding_at_pos(e, k, sem)
    return v if c is None else z3.If(c, sym.val(1), v)


def var_reads_ones_from_pos(e: Var, k: Any, sem: ev.Sem) -> Any:
    """Padded: positions from 11 on read at 1 (in bounds, the identity below rank 12)."""
    at = k if sem.pad is None else k[:POS] + ty.map_shape(lambda x: x * 0 + 1, k[POS:])
    return sem.interp.read(sem.store, e.name, at, e)


def var_moves_an_in_domain_position(e: Var, k: Any, sem: ev.Sem) -> Any:
    """Padded, in the padding at position 11: position 0, if in the domain, read at 1.  The index
    read stays in the hole's padding, so claims (a) and (b) hold; claim (c) holds only if the
    hole's padding never holds •, which Inv (b) does not say (0 or •)."""
    c = in_padding_at_pos(e, k, sem)
    if c is None:
        return ev.ev_var(e, k, sem)
    t0 = sem.interp.extent(sem.type(e)[0])
    moved = Seq(z3.Store(k.arr, 0, z3.If(z3.And(c, k.arr[0] <= t0), 1, k.arr[0])), k.length)
    return sem.interp.read(sem.store, e.name, moved, e)


def smul_zero_absorbs_undef(e: Elem, k: Any, sem: ev.Sem) -> Any:
    """Padded, rank >= 12: S · 0 = 0 even for S = • (wrong only where the scalar hole is •)."""
    v = ev.ev_elem(e, k, sem)
    if sem.pad is None or isinstance(k, tuple) or e.op != "mul" or sem.type(e.left) != ():
        return v
    x = ev.denote(e.right, k, sem)
    return z3.If(z3.And(k.length > POS, x == sym.ZERO), sym.ZERO, v)


def _refuted_at_a_high_rank(name: str, claim: str) -> None:
    """The lemma is not accepted, at the claim the wrong semantics breaks.  Refuted, or unknown:
    both are rejections (Z3's answer on these instance-based obligations has been seen to
    depend on what the process built before; a weakening that lets the semantics through makes
    the lemma *proved*, which this refuses)."""
    r = check_lemma(LEMMAS[name])
    assert r.status in (Status.REFUTED, Status.UNKNOWN) and not r.stuck, (r.status, r.failed, r.counterexample)
    assert claim in (r.failed or ""), r.failed
    if r.status is Status.REFUTED:
        assert "fails (rank " in (r.counterexample or ""), r.counterexample


def test_a_padding_holding_1_from_rank_12_is_refuted() -> None:
    """Kills: the claims restricted to ranks <= 10, or "not within" to positions < 11."""
    with equation(Elem, elem_one_in_padding):
        _refuted_at_a_high_rank("Pad-Add (all ranks)", "Inv (b)")


def test_a_padding_holding_1_only_past_position_10_is_refuted() -> None:
    """Kills: the claims' witness position ("k is not within t at p") restricted to p < 11."""
    with equation(Elem, elem_one_where_only_pos_is_out):
        _refuted_at_a_high_rank("Pad-Add (all ranks)", "Inv (b)")


def test_an_undefined_padding_from_rank_12_is_refuted() -> None:
    with equation(Elem, elem_undef_in_padding):
        _refuted_at_a_high_rank("Pad-Mul (all ranks)", "Inv (c)")


def test_transp_holding_1_in_the_padding_from_rank_12_is_refuted() -> None:
    with equation(Transp, transp_one_in_padding):
        _refuted_at_a_high_rank("Pad-Transp (all ranks)", "Inv (b)")


def test_a_read_wrong_from_position_11_is_refuted() -> None:
    """Kills: a memory that reads only the first positions of a multi-index (Memory.at)."""
    with equation(Var, var_reads_ones_from_pos):
        _refuted_at_a_high_rank("Pad-Var (all ranks)", "Inv (a)")


def test_a_memory_tells_multi_indices_apart_at_every_position() -> None:
    k, q = Seq.fresh("k"), Seq.fresh("q")
    j = z3.Int("j")
    differ_at_20 = z3.And(k.length == q.length, k.length == 30, k.arr[20] != q.arr[20],
                          z3.ForAll([j], z3.Implies(j != 20, k.arr[j] == q.arr[j])))
    X = pad_ranks.Memory("X", "P")
    s = z3.Solver()
    s.add(differ_at_20, X.at(k) != X.at(q))
    assert s.check() == z3.sat


def test_a_scalar_hole_may_be_undefined() -> None:
    """Kills: the scalar hole's hypothesis strengthened to "defined" (Inv says P = U, • allowed)."""
    with equation(Elem, smul_zero_absorbs_undef):
        _refuted_at_a_high_rank("Pad-SMul (all ranks)", "Inv (a)")


def test_a_hole_padding_holding_undef_is_not_assumed_away() -> None:
    """Kills: the hole hypothesis (b) strengthened to "0 in the padding" (issue 14's survivor, here
    for every rank).  The semantics is wrong only if the hole's padding holds •; it must not be
    proved (Z3 finds no model within the rlimit, so the outcome is unknown, not refuted)."""
    with equation(Var, var_moves_an_in_domain_position):
        r = check_lemma(LEMMAS["Pad-Var (all ranks)"])
    assert r.status is not Status.PROVED
    assert "Inv (c)" in (r.failed or ""), r.failed
