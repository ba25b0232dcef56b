"""One-line wrong variants of the typing rules and the semantics (``make verify`` kills each).

Each :class:`Mutant` replaces one entry -- ``core_teil.eval.EQUATIONS[...]``,
``core_teil.typing._RULES[...]``, ``eval.st_stmt``, ``eval.eval_prog``,
``typing.ok_stmt`` or ``symbolic.arith`` -- with a copy of the original in
which one line is wrong (``line`` shows it).  :func:`applied` swaps it in
and always restores the original.  A checker that cannot fail is worthless:
every mutant must be refuted by at least one lemma of its ``targets``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import z3

from core_teil import eval as ev
from core_teil import symbolic as sym
from core_teil import typing as ty
from core_teil.eval import Sem, denote
from core_teil.syntax import Contr, Diag, Elem, Expa, Prod, Proj, Red, Stmt, Transp
from core_teil.typing import Checker, Derivation, StmtDerivation, swap

# --------------------------------------------------------------------------
# Wrong equations (eval.py)
# --------------------------------------------------------------------------


def ev_proj_off_by_one(e: Proj, k: tuple, sem: Sem) -> Any:
    return denote(e.arg, (sem.interp.extent(e.m) + 1, *k), sem)


def ev_transp_non_adjacent(e: Transp, k: tuple, sem: Sem) -> Any:
    return denote(e.arg, swap(k, e.i, e.i + 2) if e.i + 2 <= len(k) else k, sem)


def ev_transp_shifted(e: Transp, k: tuple, sem: Sem) -> Any:
    return denote(e.arg, swap(k, e.i - 1, e.i), sem)


def ev_expa_unguarded(e: Expa, k: tuple, sem: Sem) -> Any:
    """The report's padded expansion: no guard, so the padding repeats the slice (report Theorem 3 fails)."""
    return denote(e.arg, k[1:], sem)


def ev_expa_guard_off_by_one(e: Expa, k: tuple, sem: Sem) -> Any:
    v = denote(e.arg, k[1:], sem)
    if sem.pad is not None:
        v = sem.interp.guard(k[0] + 1, sem.interp.extent(e.d), v)
    return v


def ev_expa_drops_last(e: Expa, k: tuple, sem: Sem) -> Any:
    return denote(e.arg, k[:-1], sem)


def ev_red_short(e: Red, k: tuple, sem: Sem) -> Any:
    n = sem.bound(sem.type(e.arg)[0]) - 1
    return sem.interp.sum(n, lambda m: denote(e.arg, (m, *k), sem), e)


def ev_prod_wrong_split(e: Prod, k: tuple, sem: Sem) -> Any:
    r0 = len(sem.type(e.right))
    return sem.interp.arith("mul", denote(e.left, k[:r0], sem), denote(e.right, k[r0:], sem))


def ev_diag_row_one(e: Diag, k: tuple, sem: Sem) -> Any:
    return denote(e.arg, (k[0], 1, *k[1:]), sem)


def ev_contr_off_diagonal(e: Contr, k: tuple, sem: Sem) -> Any:
    n = sem.bound(sem.type(e.arg)[0])
    return sem.interp.sum(n, lambda m: denote(e.arg, (m, 1, *k), sem), e)


def arith_uncontrolled(op: str, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
    """Definition 4 without Definition 8: ``0/0 = •``."""
    if op != "div":
        return _ORIGINAL_ARITH(op, a, b)
    undef = z3.Or(a == sym.UNDEF, b == sym.UNDEF, b == sym.ZERO)
    return z3.If(undef, sym.UNDEF, sym.Value.val(sym.Value.real(a) / sym.Value.real(b)))


_ORIGINAL_ARITH = sym.arith


def st_stmt_reads_new(stmt: Stmt, sem: Sem) -> Any:
    bounds = tuple(sem.bound(d) for d in sem.typed.gamma[stmt.target])
    k = sem.interp.domain(bounds, stmt)
    v0 = denote(stmt.expr, k, sem)
    new = {**sem.store, stmt.target: z3.Lambda(list(k), v0) if k else v0}
    v = denote(stmt.expr, k, replace(sem, store=new))
    return sem.interp.update(sem.store, stmt.target, k, v, bounds)


def st_stmt_unrounded(stmt: Stmt, sem: Sem) -> Any:
    bounds = tuple(sem.interp.extent(d) for d in sem.typed.gamma[stmt.target])
    k = sem.interp.domain(bounds, stmt)
    v = denote(stmt.expr, k, sem)
    return sem.interp.update(sem.store, stmt.target, k, v, bounds)


def eval_prog_reversed(sem: Sem) -> Any:
    for stmt in reversed(sem.typed.program.stmts):
        sem = replace(sem, store=ev.st_stmt(stmt, sem))
    return sem.store


# --------------------------------------------------------------------------
# Wrong typing rules (typing.py)
# --------------------------------------------------------------------------


def t_diag_no_premise(c: Checker, e: Diag) -> Derivation:
    d = c.infer(e.arg)
    c.rank_at_least(d.shape, 2, "T-Diag", e.span, "diag")
    side = ()
    return Derivation("T-Diag", e, (d.shape[0], *d.shape[2:]), (d,), side)


def t_contr_no_premise(c: Checker, e: Contr) -> Derivation:
    d = c.infer(e.arg)
    c.rank_at_least(d.shape, 2, "T-Contr", e.span, "contr")
    side = ()
    return Derivation("T-Contr", e, d.shape[2:], (d,), side)


def t_proj_reversed(c: Checker, e: Proj) -> Derivation:
    c.extent(e.m, "T-Proj", e.span)
    d = c.infer(e.arg)
    c.rank_at_least(d.shape, 1, "T-Proj", e.span, "proj")
    side = () if e.m == d.shape[0] else (c.require(d.shape[0], "<=", e.m, "T-Proj", e.span, "mutant"),)
    return Derivation("T-Proj", e, d.shape[1:], (d,), side)


def t_elem_no_extents(c: Checker, e: Elem) -> Derivation:
    d0, d1 = c.infer(e.left), c.infer(e.right)
    t0, t1 = d0.shape, d1.shape
    if e.op == "mul" and t0 == () and t1 != ():
        return ty.t_smul(e, d0, d1)
    if e.op == "div" and t1 == () and t0 != ():
        return ty.t_sdiv(e, d0, d1)
    if len(t0) != len(t1):
        raise ty.TeilTypeError("rank mismatch", e.span, "T-Elem")
    side = ()
    return Derivation("T-Elem", e, t0, (d0, d1), side)


def t_transp_to_rank(c: Checker, e: Transp) -> Derivation:
    d = c.infer(e.arg)
    c.position(e.i, 1, len(d.shape), "T-Transp", e.span, "`transp` position")
    return Derivation("T-Transp", e, swap(d.shape, e.i, e.i + 1) if e.i < len(d.shape) else d.shape, (d,))


def t_red_drops_last(c: Checker, e: Red) -> Derivation:
    d = c.infer(e.arg)
    c.rank_at_least(d.shape, 1, "T-Red", e.span, "red")
    return Derivation("T-Red", e, d.shape[:-1], (d,))


def ok_stmt_no_extents(c: Checker, s: Stmt) -> StmtDerivation:
    d = c.infer(s.expr)
    declared = c.gamma[s.target]
    if len(declared) != len(d.shape):
        raise ty.TeilTypeError("rank mismatch", s.span, "OK-Stmt")
    side = ()
    return StmtDerivation(s, declared, d, side)


# --------------------------------------------------------------------------
# The catalogue
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    name: str
    line: str
    where: str
    patches: tuple[tuple[Any, Any, Any], ...]
    targets: tuple[str, ...]


def _eq(ctor: type, fn: Any) -> tuple[tuple[Any, Any, Any], ...]:
    return ((ev.EQUATIONS, ctor, fn),)


def _rule(ctor: type, fn: Any) -> tuple[tuple[Any, Any, Any], ...]:
    return ((ty._RULES, ctor, fn),)


CATALOGUE: tuple[Mutant, ...] = (
    Mutant("proj-off-by-one", "denote(e.arg, (sem.interp.extent(e.m) + 1, *k), sem)", "EQUATIONS[Proj]",
           _eq(Proj, ev_proj_off_by_one), ("WD-Proj", "Law (3) proj∘expa")),
    Mutant("transp-non-adjacent", "denote(e.arg, swap(k, e.i, e.i + 2), sem)", "EQUATIONS[Transp]",
           _eq(Transp, ev_transp_non_adjacent), ("WD-Transp", "Law transp involution")),
    Mutant("transp-shifted", "denote(e.arg, swap(k, e.i - 1, e.i), sem)", "EQUATIONS[Transp]",
           _eq(Transp, ev_transp_shifted), ("WD-Transp",)),
    Mutant("expa-unguarded", "v = denote(e.arg, k[1:], sem)  # no guard under padding", "EQUATIONS[Expa]",
           _eq(Expa, ev_expa_unguarded), ("Pad-Expa", "Law (5) red∘expa (padded)")),
    Mutant("expa-guard-off-by-one", "v = sem.interp.guard(k[0] + 1, d, v)  # j < d", "EQUATIONS[Expa]",
           _eq(Expa, ev_expa_guard_off_by_one), ("Pad-Expa",)),
    Mutant("expa-drops-last", "denote(e.arg, k[:-1], sem)", "EQUATIONS[Expa]",
           _eq(Expa, ev_expa_drops_last), ("WD-Expa",)),
    Mutant("red-to-n-1", "n = sem.bound(sem.type(e.arg)[0]) - 1", "EQUATIONS[Red]",
           _eq(Red, ev_red_short), ("Law (5) red∘expa", "Pad-Red")),
    Mutant("prod-wrong-split", "r0 = len(sem.type(e.right))", "EQUATIONS[Prod]",
           _eq(Prod, ev_prod_wrong_split), ("WD-Prod",)),
    Mutant("diag-row-one", "denote(e.arg, (k[0], 1, *k[1:]), sem)", "EQUATIONS[Diag]",
           _eq(Diag, ev_diag_row_one), ("Law (4) diag∘transp", "Law (6) contr = red∘diag")),
    Mutant("contr-off-diagonal", "lambda m: denote(e.arg, (m, 1, *k), sem)", "EQUATIONS[Contr]",
           _eq(Contr, ev_contr_off_diagonal), ("Law (6) contr = red∘diag",)),
    Mutant("div-uncontrolled", "0/0 = •  (Definition 4 without Definition 8)", "symbolic.arith",
           ((sym, "arith", arith_uncontrolled),), ("Pad-Div", "Pad-SDiv")),
    Mutant("st-stmt-reads-new", "v = denote(stmt.expr, k, replace(sem, store=new))  # μ' for μ", "eval.st_stmt",
           ((ev, "st_stmt", st_stmt_reads_new),), ("Lemma 4.5",)),
    Mutant("st-stmt-unrounded", "bounds = tuple(sem.interp.extent(d) for d in Γ(x))", "eval.st_stmt",
           ((ev, "st_stmt", st_stmt_unrounded),), ("Lemma 4.5 (padded)",)),
    Mutant("eval-prog-reversed", "for stmt in reversed(sem.typed.program.stmts):", "eval.eval_prog",
           ((ev, "eval_prog", eval_prog_reversed),), ("St-Seq",)),
    Mutant("t-diag-no-premise", "side = ()  # n0 = n1 not required", "_RULES[Diag]",
           _rule(Diag, t_diag_no_premise), ("WD-Diag", "Lemma 4.1 case T-Diag")),
    Mutant("t-contr-no-premise", "side = ()  # n0 = n1 not required", "_RULES[Contr]",
           _rule(Contr, t_contr_no_premise), ("WD-Contr", "Lemma 4.1 case T-Contr")),
    Mutant("t-proj-reversed", "c.require(d.shape[0], '<=', e.m, ...)  # n <= m", "_RULES[Proj]",
           _rule(Proj, t_proj_reversed), ("WD-Proj", "Lemma 4.1 case T-Proj")),
    Mutant("t-elem-no-extents", "side = ()  # extents not compared", "_RULES[Elem]",
           _rule(Elem, t_elem_no_extents), ("WD-Add", "Lemma 4.1 case T-Elem")),
    Mutant("t-transp-to-rank", "c.position(e.i, 1, len(d.shape), ...)  # i <= rank", "_RULES[Transp]",
           _rule(Transp, t_transp_to_rank), ("WD-Transp", "Lemma 4.1 case T-Transp")),
    Mutant("t-red-drops-last", "Derivation('T-Red', e, d.shape[:-1], (d,))", "_RULES[Red]",
           _rule(Red, t_red_drops_last), ("WD-Red", "Lemma 4.1 case T-Red")),
    Mutant("ok-stmt-no-extents", "side = ()  # Γ(x) vs type(e) extents not compared", "typing.ok_stmt",
           ((ty, "ok_stmt", ok_stmt_no_extents),), ("OK-Stmt",)),
)

BY_NAME = {m.name: m for m in CATALOGUE}


@contextmanager
def applied(mutant: Mutant | None) -> Iterator[None]:
    """Swap the mutant's entries in; always put the originals back."""
    saved: list[tuple[Any, Any, Any]] = []
    try:
        for obj, key, new in mutant.patches if mutant else ():
            if isinstance(obj, dict):
                saved.append((obj, key, obj[key]))
                obj[key] = new
            else:
                saved.append((obj, key, getattr(obj, key)))
                setattr(obj, key, new)
        yield
    finally:
        for obj, key, old in reversed(saved):
            if isinstance(obj, dict):
                obj[key] = old
            else:
                setattr(obj, key, old)
