"""One-line wrong variants of the checker, each of which some check of ``make verify`` must catch.

A :class:`Mutant` is a set of patches that :func:`applied` swaps in and always
restores.  A patch is either

* an entry replaced by a copy of the original in which one line is wrong --
  ``core_teil.semantics.eval.EQUATIONS[...]``, ``core_teil.lang.typing._RULES[...]``,
  ``eval.st_stmt``, ``eval.eval_prog``, ``typing.ok_stmt``, ``symbolic.arith``,
  ``symbolic.REAL_OPS[...]`` (``line`` shows the wrong line); or
* an :class:`Edit`: one line of a function's *source* replaced, compiled, and
  swapped in as the function's code object.  Every reference to the function
  sees it (imported names, a lemma's builder, bound methods), so the proof
  kernel's rules, the padding invariant, the obligation generator of
  ``core-teil prove``, the shape solver and the lowering can be mutated exactly
  as they are written.  The edit must match exactly one place, so a mutant
  that no longer applies is an error, never a silent survivor or kill.

A checker that cannot fail is worthless: every mutant must be caught by at
least one of its ``targets`` -- a lemma that is then refuted, vacuous or
incomplete, or (``wrong: ...``, for mutants of the kernel's rules) a wrong
proof of :mod:`proofs.wrong` that the mutated kernel accepts.
"""

from __future__ import annotations

import inspect
import textwrap
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import z3

from core_teil.lang import shapes
from core_teil.lang import typing as ty
from core_teil.lang.syntax import Contr, Diag, Elem, Expa, Prod, Proj, Red, RedAt, Stmt, Transp
from core_teil.lang.typing import Checker, Derivation, StmtDerivation, insert, swap
from core_teil.proving import obligations as obl
from core_teil.proving import simulation
from core_teil.semantics import eval as ev
from core_teil.semantics import symbolic as sym
from core_teil.semantics.eval import Sem, denote
from core_teil.semantics.sequences import Seq, as_seq

from . import engines, kernel, pad_ranks, padding, prover, ranks, run, safety, schema

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


def ev_elem_right_shifted(e: Elem, k: tuple, sem: Sem) -> Any:
    """The right operand read one row down: out of bounds at its *second* read only."""
    k0 = () if sem.type(e.left) == () else k
    k1 = () if sem.type(e.right) == () else (k[0] + 1, *k[1:])
    return sem.interp.arith(e.op, denote(e.left, k0, sem), denote(e.right, k1, sem))


def ev_red_padded_short(e: Red, k: tuple, sem: Sem) -> Any:
    """The padded ``red`` stops one short of ``⌈n⌉``: harmless where there is padding (the last
    term is 0 or •), wrong exactly where ``n = ⌈n⌉``."""
    n = sem.bound(sem.type(e.arg)[0]) - (1 if sem.pad is not None else 0)
    return sem.interp.sum(n, lambda m: denote(e.arg, (m, *k), sem), e)


def st_stmt_padding_one(stmt: Stmt, sem: Sem) -> Any:
    """Padded St-Stmt writes 1 into the padding of ``x`` (Theorem 3's (b) broken by a statement)."""
    bounds = tuple(sem.bound(d) for d in sem.typed.gamma[stmt.target])
    k = sem.interp.domain(bounds, stmt)
    v = denote(stmt.expr, k, sem)
    if sem.pad is not None and k:
        v = z3.If(sym.in_bounds(k, tuple(sem.interp.extent(d) for d in sem.typed.gamma[stmt.target])), v, sym.val(1))
    return sem.interp.update(sem.store, stmt.target, k, v, bounds)


def st_stmt_padding_one_from_position_11(stmt: Stmt, sem: Sem, put: Any = None) -> Any:
    """Padded St-Stmt writes 1 (or ``put``) where position 11 of ``k`` is in the padding: wrong
    only from rank 12 on, beyond the ranked proofs (<= 6) and the engines' ranks 7-10."""
    put = sym.val(1) if put is None else put
    gamma = sem.typed.gamma[stmt.target]
    bounds = sem.bounds(gamma)
    k = sem.interp.domain(bounds, stmt)
    v = denote(stmt.expr, k, sem)
    if sem.pad is not None:
        t = replace(sem, pad=None).bounds(gamma)  # the unpadded extents
        if isinstance(k, Seq):
            v = z3.If(z3.And(k.length > 11, k.arr[11] > as_seq(t).arr[11]), put, v)
        elif len(k) > 11:
            v = z3.If(k[11] > t[11], put, v)
    return sem.interp.update(sem.store, stmt.target, k, v, bounds)


def st_stmt_padding_undef_from_position_11(stmt: Stmt, sem: Sem) -> Any:
    """• into the padding from rank 12 on: (b) allows it, only claim (c) sees it (review rT3)."""
    return st_stmt_padding_one_from_position_11(stmt, sem, sym.UNDEF)


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


def t_transp_high_keeps_shape(c: Checker, e: Transp) -> Derivation:
    """From position 3 on, ``transp`` keeps the shape: no rule above it in a 5-node expression
    looks at positions >= 3 (proj, diag, contr, red, transp 1 look at the first two), so only a
    comparison of the types themselves sees it."""
    d = c.infer(e.arg)
    c.position(e.i, 1, len(d.shape) - 1, "T-Transp", e.span, "`transp` position")
    return Derivation("T-Transp", e, swap(d.shape, e.i, e.i + 1) if e.i < 3 else d.shape, (d,))


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
class Edit:
    """``old`` replaced by ``new`` in the source of ``function`` (exactly one occurrence), and
    so is each pair of ``also`` (a change of two lines of one function: two checks at once)."""

    function: Callable[..., Any]
    old: str
    new: str
    also: tuple[tuple[str, str], ...] = ()

    def code(self) -> types.CodeType:
        fn = self.function
        src = textwrap.dedent(inspect.getsource(fn))
        if src.lstrip().startswith("@"):
            raise ValueError(f"mutant of {fn.__qualname__}: decorated functions are not edited")
        for old, _ in ((self.old, self.new), *self.also):
            if src.count(old) != 1:
                raise ValueError(f"mutant of {fn.__qualname__}: {old!r} occurs {src.count(old)} times")
        # The source on disk must be the code that runs (a file edited since the import would
        # make the "one-line change" a change of something else).  Recompiled, it must use the
        # same names and locals (the bytecode itself differs between a function compiled alone
        # and within its module, so it cannot be compared).
        again = self._compile(fn, src)
        if (again.co_names, again.co_varnames) != (fn.__code__.co_names, fn.__code__.co_varnames):
            raise ValueError(f"mutant of {fn.__qualname__}: its source file changed since it was imported")
        for old, new in ((self.old, self.new), *self.also):
            src = src.replace(old, new)
        return self._compile(fn, src)

    @staticmethod
    def _compile(fn: Callable[..., Any], src: str) -> types.CodeType:
        # Compiled inside a factory whose parameters are the original's free variables, so the
        # new code has the same ones (a method calling super() closes over __class__) and can
        # be swapped into the function object, whose closure cells it then uses.
        free = fn.__code__.co_freevars
        factory = (f"def __mutant__({', '.join(free)}):\n" + textwrap.indent(src, "    ")
                   + f"\n    return {fn.__name__}\n")
        scope: dict[str, Any] = {}
        exec(compile(factory, f"<mutant of {fn.__qualname__}>", "exec"), fn.__globals__, scope)
        made = scope["__mutant__"](*([None] * len(free)))
        return made.__code__


Patch = tuple[Any, Any, Any] | Edit

#: How a mutant names another as its target: it is killed when, with it applied, that one survives.
MUTANT = "mutant: "


@dataclass(frozen=True)
class Mutant:
    name: str
    line: str
    where: str
    patches: tuple[Patch, ...]
    targets: tuple[str, ...]
    #: Which survivor of issue 14 this is (docs/lemmas.md, "Mutants"); '' for the original catalogue.
    issue: str = ""


def _edit(fn: Callable[..., Any], old: str, new: str) -> tuple[Patch, ...]:
    return (Edit(fn, old, new),)


def _eq(ctor: type, fn: Any) -> tuple[tuple[Any, Any, Any], ...]:
    return ((ev.EQUATIONS, ctor, fn),)


def _rule(ctor: type, fn: Any) -> tuple[tuple[Any, Any, Any], ...]:
    return ((ty._RULES, ctor, fn),)


#: The cut rule's premise obligation and the conclusion it licenses (kernel.calculation).
CUT_PREMISE = ("            out.append(premise)\n"
               "            # under the hypotheses its premise was proved under, like a link\n"
               "            conclusions.append(_justify(z3.Implies(_conj(hyps), rename(use.conclusion)), use.name, "
               "(premise,),\n")
#: The kernel's check that a normal form only renames bound variables (kernel.renaming).
RENAMING_CHECK = "if not isinstance(out, z3.BoolRef) or not alpha_equal(f, out):"


CATALOGUE: tuple[Mutant, ...] = (
    Mutant("proj-off-by-one", "denote(e.arg, (sem.interp.extent(e.m) + 1, *k), sem)", "EQUATIONS[Proj]",
           _eq(Proj, ev_proj_off_by_one), ("WD-Proj", "Law (3) proj∘expa")),
    Mutant("transp-non-adjacent", "denote(e.arg, swap(k, e.i, e.i + 2), sem)", "EQUATIONS[Transp]",
           _eq(Transp, ev_transp_non_adjacent), ("WD-Transp", "Law transp involution")),
    Mutant("transp-shifted", "denote(e.arg, swap(k, e.i - 1, e.i), sem)", "EQUATIONS[Transp]",
           _eq(Transp, ev_transp_shifted), ("WD-Transp",)),
    Mutant("expa-unguarded", "v = denote(e.arg, k[1:], sem)  # no guard under padding", "EQUATIONS[Expa]",
           _eq(Expa, ev_expa_unguarded), ("Pad-Expa", "Law (5) red∘expa (padded)", "Pad-Expa (all ranks)")),
    Mutant("expa-guard-off-by-one", "v = sem.interp.guard(k[0] + 1, d, v)  # j < d", "EQUATIONS[Expa]",
           _eq(Expa, ev_expa_guard_off_by_one), ("Pad-Expa", "Pad-Expa (all ranks)")),
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
           ((sym, "arith", arith_uncontrolled),), ("Pad-Div", "Pad-SDiv", "Pad-Div (all ranks)")),
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
    # -- issue 14: the survivors of the mutants written from outside, each now caught where it should be
    Mutant("sum-step-assumes-conclusion", "z3.And(premise(n + 1), conclusion(n + 1), z3.Not(conclusion(n + 1)))",
           "kernel.sum_induction",
           _edit(kernel.sum_induction, "z3.And(premise(n + 1), conclusion(n), z3.Not(conclusion(n + 1)))",
                 "z3.And(premise(n + 1), conclusion(n + 1), z3.Not(conclusion(n + 1)))"),
           ("wrong: sum induction: a step that fails",), "the sum-induction rule accepts a step that assumes "
           "its own conclusion"),
    Mutant("sum-no-monotonicity", "return [base, step]", "kernel.sum_induction",
           _edit(kernel.sum_induction, "return [base, mono, step]", "return [base, step]"),
           ("wrong: sum induction: a premise that is not monotone",), "sum induction does not check "
           "monotonicity of its premise"),
    Mutant("unknown-as-proved", "if out.status is not Status.REFUTED:", "kernel.check_lemma",
           _edit(kernel.check_lemma, "if out.status is Status.PROVED:", "if out.status is not Status.REFUTED:"),
           ("wrong: Z3: an obligation Z3 cannot decide", "wrong: corollary: a premise Z3 cannot decide",
            "wrong: structural: a step Z3 cannot decide"),
           "the proof kernel counts unknown as proved"),
    Mutant("calc-premises-unchecked", "conclusions.append(... use.name)  # no premise obligation", "kernel.calculation",
           _edit(kernel.calculation, CUT_PREMISE, "            conclusions.append(_justify(z3.Implies(_conj(hyps), "
                 "rename(use.conclusion)), use.name, (),\n"),
           ("wrong: calculation: a use whose premise is false",), "calculational proofs never check the "
           "premises of the sum laws they use"),
    Mutant("thm3-base-rank-0", "for r in ranks(0, 0):", "padding.thm3_base_obligations",
           _edit(padding.thm3_base_obligations, "for r in ranks():", "for r in ranks(0, 0):"),
           ("Theorem 3*",), "Theorem 3's base case checked at rank 0 only"),
    Mutant("d-pad-var-border", "return v  # eval.d_pad_var unguarded: the padding repeats the border",
           "eval.d_pad_var", _edit(ev.d_pad_var, "return guard_each(interp, p, t, v)", "return v"),
           ("Theorem 3*", "Theorem 3* (all ranks)", "Engines at ranks 7-10"),
           "the padded initial store of the reference engine, which "
           "the padding proofs now read instead of restating it, without the guard of d-pad-var"),
    Mutant("thm3-step-contradictory", "*[n > C for n, C in zip(t, T, strict=True)],",
           "padding.thm3_step_obligations",
           _edit(padding.thm3_step_obligations, "*[n <= C for n, C in zip(t, T, strict=True)],",
                 "*[n > C for n, C in zip(t, T, strict=True)],"),
           ("Theorem 3 (step)",), "Theorem 3's step with contradictory hypotheses"),
    Mutant("inv-hypothesis-b-zero", "ForAll(q, Implies(in_padding(q, t, T), P(q) == ZERO))  # (b) assumed as 0",
           "padding.hole_invariant",
           _edit(padding.hole_invariant, "hyps = [z3.ForAll(q, a), z3.ForAll(q, b)]",
                 "hyps = [z3.ForAll(q, a), z3.ForAll(q, z3.Implies(in_padding(q, t, T), select(P, q) == ZERO))]"),
           ("Inv closes",), "the padding invariant's hypothesis (b) strengthened to 0 in the padding"),
    Mutant("sim-initial-domain-only", "cond = z3.And(in_bounds(p, t), ...)  # not ⌈t⌉",
           "simulation.initial_obligation",
           _edit(simulation.initial_obligation, "cond = z3.And(in_bounds(p, tp), ", "cond = z3.And(in_bounds(p, t), "),
           ("prove: initial store padded with its border",), "the initial padded store checked only inside the "
           "original domain"),
    Mutant("sim-hypothesis-outside-store", "out.append(holds)  # R assumed outside ⌈t⌉ too",
           "simulation.store_instances",
           _edit(simulation.store_instances, "out.append(z3.Implies(in_bounds(r.index, tp), holds))",
                 "out.append(holds)"),
           ("prove: padded red past ⌈n⌉",), "the simulation hypothesis asserted outside the padded store"),
    Mutant("padsum-conclusion-strengthened", "return s2 == s1  # also where ¬D", "simulation.padsum_conclusion",
           _edit(simulation.padsum_conclusion,
                 "return z3.If(d, s2 == s1, z3.Or(s2 == ZERO, z3.And(s2 == UNDEF, s1 == UNDEF)))",
                 "return s2 == s1"),
           ("PadSum",), "a PadSum stage's conclusion strengthened before it is the next stage's hypothesis"),
    Mutant("padded-extents-no-multiples", "self.hyps += [M·(q - 1) < v, v < M·q]",
           "obligations.PaddedExtents",
           _edit(obl.PaddedExtents.__post_init__, "v <= self.pad * q]", "v < self.pad * q]"),
           ("Padded extents (Definition 7)",), "padded extents that exclude n divisible by M"),
    Mutant("stuck-statement-no-obligations", "return []  # a stuck statement", "obligations.statement_obligations",
           _edit(obl.statement_obligations,
                 'return [undecided(READS, typed, no, stmt, f"the semantics is stuck: {type(err).__name__}: {err}")]',
                 "return []"),
           ("prove: stuck semantics",), "a stuck statement that yields no obligations at all"),
    Mutant("lowering-congruence-no-bounds", "z3.And(z3.Implies(m in [1, n], h = h'))  # n = n' dropped",
           "obligations.congruence_instance",
           _edit(obl.congruence_instance, "z3.And(s.bound == t.bound, z3.Implies(", "z3.And(z3.Implies("),
           ("prove: red i with a wrong bound",), "the lowering check's congruence instance ignoring the "
           "sums' bounds"),
    Mutant("assume-lt-as-le", '"<": lhs <= rhs', "shapes.ShapeSolver.cond",
           _edit(shapes.ShapeSolver.cond, '"<": lhs < rhs', '"<": lhs <= rhs'),
           ("Assume translation",), "`assume a < b` read as `a <= b`"),
    Mutant("z3-sub-as-add", "REAL_OPS['sub'] = lambda x, y: x + y", "symbolic.REAL_OPS",
           ((sym.REAL_OPS, "sub", lambda x, y: x + y),), ("Definition 4 (Z3 = numpy)",),
           "Z3's real subtraction interpreted as addition"),
    # -- more wrong rules of the kernel, each accepting some wrong proof of proofs/wrong.py
    Mutant("sum-no-base", "return [mono, step]", "kernel.sum_induction",
           _edit(kernel.sum_induction, "return [base, mono, step]", "return [mono, step]"),
           ("wrong: sum induction: a base that fails",)),
    Mutant("vacuity-unchecked", "verdict, which = Status.PROVED, ''", "kernel.check_lemma",
           _edit(kernel.check_lemma, "verdict, which = vacuity.verdict()", "verdict, which = Status.PROVED, ''"),
           ("wrong: Z3: contradictory hypotheses", "wrong: structural: a vacuous step",
            "wrong: corollary: a vacuous premise")),
    Mutant("vacuity-without-uses", "return self.hypotheses  # SUM instances never checked", "kernel.Obligation",
           _edit(kernel.Obligation.context, "if self.uses and mentions(self.hypotheses, SUM_SYMBOL):", "if False:"),
           ("wrong: Z3: contradictory hypotheses hidden by SUM instances",
            "wrong: Z3: contradictory hypotheses about SUM under a binder")),
    Mutant("uses-unchecked", "why = None  # uses taken on trust", "kernel.check_lemma",
           _edit(kernel.check_lemma, "why = unjustified(ob, lemma.premises, proved, used)", "why = None"),
           ("wrong: Z3: a use that contradicts the hypotheses", "wrong: Z3: uses that contradict each other",
            "wrong: Z3: the claim as a use"), "an obligation's uses are never checked to be instances"),
    Mutant("instance-keys-unchecked", "for alternatives in ():  # any statement of the name", "kernel.Book.conclude",
           _edit(kernel.Book.conclude, "for alternatives in own.instances if own is not None else ():",
                 "for alternatives in ():"),
           ("wrong: Z3: an instance of a namesake law",), "an instance is taken from any statement of its name"),
    Mutant("no-obligations-accepted", "if False:  # count == 0", "kernel.check_lemma",
           _edit(kernel.check_lemma, "if count == 0:", "if False:"), ("wrong: Z3: no obligation at all",)),
    Mutant("coverage-unchecked", "gap = ''", "kernel.check_lemma",
           _edit(kernel.check_lemma, "gap = coverage(lemma, ranks, cases)", "gap = ''"),
           ("wrong: Z3: a rank-indexed lemma checked at rank 0 only",)),
    Mutant("structural-cases-unchecked", "if False:  # uncovered cases", "kernel.Book.conclude",
           _edit(kernel.Book.conclude, "if uncovered:", "if False:"),
           ("wrong: structural: a missing case (each case in turn)",)),
    Mutant("rule-from-no-premises", "if False:  # a rule with no premises", "kernel.Book.conclude",
           _edit(kernel.Book.conclude, "if lemma.rule in RULES and not lemma.premises:", "if False:"),
           ("wrong: corollary: from no premises",)),
    Mutant("premises-unchecked", "missing: list[str] = []", "kernel.Book.conclude",
           _edit(kernel.Book.conclude, "missing = [p for p in lemma.premises if p not in self.results or not "
                 "self.results[p].accepted]", "missing: list[str] = []"),
           ("wrong: corollary: a refuted premise", "wrong: premises: instances of a refuted lemma",
            "wrong: sum induction: a helper that is not accepted", "wrong: structural: a refuted step",
            "wrong: statements: a step that is refuted")),
    # -- issue 14, second review: the survivors, each killed by the check that should catch it
    Mutant("vacuity-unknown-as-sat", "if r != z3.unsat:  # unknown taken for a model", "kernel.satisfiable",
           _edit(kernel.satisfiable, "    if r == z3.sat:\n        return Status.PROVED",
                 "    if r != z3.unsat:\n        return Status.PROVED"),
           ("wrong: Z3: hypotheses Z3 cannot show satisfiable",), "vacuity: unknown counted as satisfiable"),
    Mutant("rank-coverage-to-R-1", "range(lemma.min_rank, RANK_BOUND)", "kernel.coverage",
           _edit(kernel.coverage, "range(lemma.min_rank, RANK_BOUND + 1)", "range(lemma.min_rank, RANK_BOUND)"),
           ("wrong: Z3: a rank-indexed lemma missing rank R",), "rank coverage only to R-1"),
    Mutant("sum-mono-from-lo+1", "mono: (*req, n > lo)", "kernel.sum_induction",
           _edit(kernel.sum_induction, 'monotone", (*req, n >= lo),', 'monotone", (*req, n > lo),'),
           ("wrong: sum induction: a premise not monotone at lo",), "sum induction: monotonicity checked from lo+1"),
    Mutant("sum-step-from-lo+1", "step: (*req, n > lo)", "kernel.sum_induction",
           _edit(kernel.sum_induction, 'step n -> n+1", (*req, n >= lo),', 'step n -> n+1", (*req, n > lo),'),
           ("wrong: sum induction: a step that fails at lo",), "sum induction: step checked from lo+1"),
    Mutant("sum-base-premise-lo+1", "z3.And(premise(lo + 1), z3.Not(conclusion(lo)))", "kernel.sum_induction",
           _edit(kernel.sum_induction, "z3.And(premise(lo), z3.Not(conclusion(lo)))",
                 "z3.And(premise(lo + 1), z3.Not(conclusion(lo)))"),
           ("wrong: sum induction: a base that fails, premise at lo only",),
           "sum induction: base premise checked at lo+1"),
    Mutant("sum-search-skips-binders", "continue  # no quantifier bodies", "symbolic.subterms",
           _edit(sym.subterms, "stack.append(t.body())", "continue"),
           ("wrong: Z3: contradictory hypotheses about SUM under a binder",),
           "the symbol search skips quantifier bodies"),
    Mutant("conclude-own-only-refuted", "if own is not None and own.status is Status.REFUTED:", "kernel.Book.conclude",
           _edit(kernel.Book.conclude, "if own is not None and not own.accepted:",
                 "if own is not None and own.status is Status.REFUTED:"),
           ("wrong: premises: own obligation Z3 cannot decide",),
           "a lemma's own result rejected only if refuted (unknown passes)"),
    Mutant("core-cases-drop-div", "ELEM_OPS[:-1]", "kernel.core_cases",
           _edit(kernel.core_cases, "for op in ELEM_OPS)", "for op in ELEM_OPS[:-1])"),
           ("wrong: structural: a missing case (each case in turn)",), "case coverage drops Elem.div"),
    Mutant("pinning-stops-at-array", "break  # at the first term without a ladder", "kernel.canonical_model",
           _edit(kernel.canonical_model, "        if not candidates:\n            continue",
                 "        if not candidates:\n            break"),
           ("Counterexamples canonical",), "counterexample pinning stops at the first array"),
    Mutant("canonical-ignores-depth", "z3.Const(f'β!{i}', ...), and the kernel trusts it", "schema.canonical",
           (*_edit(schema.canonical, 'z3.Const(f"β!{depth + i}"', 'z3.Const(f"β!{i}"'),
            *_edit(kernel.renaming, RENAMING_CHECK, "if False:")),
           ("wrong: calculation: a link between terms equal only if a binder is captured",),
           "canonical binder names ignore the depth"),
    # Wrong semantics that only a full-strength lemma catches; each is the kill of a weakening below.
    Mutant("elem-right-read-shifted", "k1 = (k[0] + 1, *k[1:])", "EQUATIONS[Elem]",
           _eq(Elem, ev_elem_right_shifted), ("WD-Add",)),
    Mutant("t-transp-high-keeps-shape", "swap(...) if e.i < 3 else d.shape", "_RULES[Transp]",
           _rule(Transp, t_transp_high_keeps_shape), ("Lemma 4.1 (exhaustive)",)),
    Mutant("red-padded-short", "n = ⌈n⌉ - 1 under padding", "EQUATIONS[Red]",
           _eq(Red, ev_red_padded_short), ("Pad-Red",)),
    Mutant("inv-hypothesis-c-at-read-index", "select(U, at)  # not ρ(q, at)", "padding.hole_invariant",
           _edit(padding.hole_invariant, "select(U, q), select(U, rho(q, t, at)))", "select(U, q), select(U, at))"),
           ("Inv closes",)),
    Mutant("st-stmt-padding-one", "v = If(k <= Γ(x), v, 1) under padding", "eval.st_stmt",
           ((ev, "st_stmt", st_stmt_padding_one),), ("Theorem 3 (step)",)),
    # Weakenings of the lemmas' obligations: each proves *less*, so it is killed when, with it,
    # a wrong semantics above survives its lemma (target ``mutant: …``).
    Mutant("wd-first-read-only", "for n, rd in enumerate(interp.reads[:1]):", "safety.wd_obligations",
           _edit(safety.wd_obligations, "for n, rd in enumerate(interp.reads):",
                 "for n, rd in enumerate(interp.reads[:1]):"),
           ("mutant: elem-right-read-shifted",), "well-definedness checks the first read only"),
    Mutant("enum-drops-type-compare", "(got is None) != (not derivable)  # types not compared",
           "safety.enumeration_obligations",
           _edit(safety.enumeration_obligations, " or (got is not None and {got} != derivable)", ""),
           ("mutant: t-transp-high-keeps-shape",), "the enumeration drops the type comparison"),
    Mutant("hole-extent-lt-ceil", "hyps += [n < c for ...]  # holes always padded", "padding.invariant",
           _edit(padding.invariant, "hyps += [n <= c for n, c in zip(t, T, strict=True)]",
                 "hyps += [n < c for n, c in zip(t, T, strict=True)]"),
           ("mutant: red-padded-short",), "hole extents < ⌈n⌉ (shapes that need no padding left out)"),
    Mutant("closure-c-at-q-only", 'hole_invariant("X", t, T, P, U, [("X", q, ())])', "padding.closure_obligations",
           _edit(padding.closure_obligations, '[("X", j, ())]', '[("X", q, ())]'),
           ("mutant: inv-hypothesis-c-at-read-index",), "Inv closes checks (c) at q only"),
    Mutant("thm3-step-unpadded", 'semP, ip = run(inst, "P", None)', "padding.thm3_step_obligations",
           _edit(padding.thm3_step_obligations, 'semP, ip = run(inst, "P", M)', 'semP, ip = run(inst, "P", None)'),
           ("mutant: st-stmt-padding-one",), "Theorem 3's step uses the unpadded store"),
    Mutant("sum-instance-ignores-lo", "z3.And(*requires, at(self.premise))", "kernel.SumStatement._at",
           _edit(kernel.SumStatement._at, "n >= at(self.lo), ", ""),
           ("wrong: premises: an instance of a sum law below its range", "wrong: calculation: a use below its range"),
           "a sum instance (and a cut) drops n >= lo"),
    Mutant("refusal-counts-unknown", 'z3.BoolVal(said != "proved")', "prover.refusal_obligations",
           _edit(prover.refusal_obligations, "z3.BoolVal(said in r.statuses)", 'z3.BoolVal(said != "proved")'),
           ("wrong: prove: an unknown counted as a refusal",), "a refusal counts unknown"),
    Mutant("side-unknown-as-holds", "return Decision(Verdict.HOLDS)  # r == unknown", "shapes.ShapeSolver._decide",
           _edit(shapes.ShapeSolver._decide, "return Decision(Verdict.UNKNOWN)", "return Decision(Verdict.HOLDS)"),
           ("wrong: shapes: a side condition Z3 cannot decide",), "a side condition unknown treated as holds"),
    Mutant("verdict-ignores-errors", "ok = ... and wrong_ok  # errors ignored", "run.report",
           _edit(run.report, " and wrong_ok and not run.errors", " and wrong_ok"),
           ("wrong: verdict: error",), "the verdict ignores errors"),
    Mutant("wrong-unknown-as-rejected", "if r.status is Status.REFUTED", "run.report",
           _edit(run.report, "if r.status is not Status.PROVED]", "if r.status is Status.REFUTED]"),
           ("wrong: verdict: wrong proof undecided",), "a wrong proof that comes back unknown counted as rejected"),
    # -- each wrong proof's witness: the mutant that removes the check it is about (proofs/wrong.py)
    Mutant("refuted-as-proved", "if r != z3.unknown:  # sat counted as unsat", "kernel.discharge",
           _edit(kernel.discharge, "    if r == z3.unsat:", "    if r != z3.unknown:"),
           ("wrong: Z3: a false claim",)),
    Mutant("stuck-as-proved", "Status.PROVED, ..., stuck=False  # a crash while building", "kernel.check_lemma",
           (Edit(kernel.check_lemma, "Status.REFUTED, time.perf_counter() - t0, count",
                 "Status.PROVED, time.perf_counter() - t0, count",
                 (("stuck=True, rlimit=spent", "stuck=False, rlimit=spent"),)),),
           ("wrong: Z3: a builder that gets stuck",)),
    Mutant("expectation-ignored", "self.status.value == Expect.PROVED.value", "kernel.LemmaResult.accepted",
           ((kernel.LemmaResult, "accepted", property(lambda r: r.status is kernel.Status.PROVED and not r.stuck)),),
           ("wrong: Z3: an expected refutation that is proved",)),
    Mutant("accepted-ignores-stuck", "return self.status.value == self.expect.value", "kernel.LemmaResult.accepted",
           ((kernel.LemmaResult, "accepted", property(lambda r: r.status.value == r.expect.value)),),
           ("wrong: Z3: an expected refutation that only gets stuck",)),
    Mutant("case-labels-unchecked", "unbuilt: list[str] = []", "kernel.coverage",
           _edit(kernel.coverage, "unbuilt = [c for c in lemma.cases if c not in cases]", "unbuilt: list[str] = []"),
           ("wrong: Z3: a step lemma claiming a case it never builds",
            "wrong: structural: a step that claims a case it does not build")),
    Mutant("rank-coverage-from-min+1", "range(lemma.min_rank + 1, RANK_BOUND + 1)", "kernel.coverage",
           _edit(kernel.coverage, "range(lemma.min_rank, RANK_BOUND + 1)", "range(lemma.min_rank + 1, RANK_BOUND + 1)"),
           ("wrong: Z3: a rank-indexed lemma missing its lowest rank",)),
    Mutant("own-obligations-ignored", "if False:  # own not accepted", "kernel.Book.conclude",
           _edit(kernel.Book.conclude, "if own is not None and not own.accepted:", "if False:"),
           ("wrong: statements: a base that fails",)),
    Mutant("statements-without-seq", "if False:  # St-Seq among the premises", "kernel.Book.conclude",
           _edit(kernel.Book.conclude, "if lemma.rule is Rule.STATEMENTS and ST_SEQ not in lemma.premises:",
                 "if False:"),
           ("wrong: statements: without St-Seq",)),
    Mutant("ghost-premises-ignored", "p in self.results and not self.results[p].accepted", "kernel.Book.conclude",
           _edit(kernel.Book.conclude, "if p not in self.results or not self.results[p].accepted",
                 "if p in self.results and not self.results[p].accepted"),
           ("wrong: corollary: a premise that is not a lemma", "wrong: structural: a premise that is not a lemma")),
    Mutant("induction-from-nothing", "if False: (no premises) + if False: (uncovered cases)", "kernel.Book.conclude",
           (Edit(kernel.Book.conclude, "if lemma.rule in RULES and not lemma.premises:", "if False:",
                 (("if uncovered:", "if False:"),)),),
           ("wrong: structural: no premises",)),
    Mutant("sum-base-conclusion-lo+1", "z3.And(premise(lo), z3.Not(conclusion(lo + 1)))", "kernel.sum_induction",
           _edit(kernel.sum_induction, "z3.And(premise(lo), z3.Not(conclusion(lo)))",
                 "z3.And(premise(lo), z3.Not(conclusion(lo + 1)))"),
           ("wrong: sum induction: a conclusion that fails at lo only",)),
    Mutant("instance-ignores-requires", "z3.And(n >= at(self.lo), at(self.premise))",
           "kernel.SumStatement._at", _edit(kernel.SumStatement._at, "*(at(r) for r in self.requires), ", ""),
           ("wrong: premises: an instance of a sum law without its requirement",)),
    Mutant("instance-premise-n-1", "the premise at n - 1", "kernel.SumStatement._at",
           _edit(kernel.SumStatement._at, "at(self.premise)),",
                 "_sum_as(S, z3.substitute(self.premise, *sub[:-1], (self.n, n - 1)))),"),
           ("wrong: premises: an instance of a sum law whose premise fails",)),
    Mutant("foreign-definitions-trusted", "why = unjustified(...)  # any recursive definition", "kernel.check_lemma",
           _edit(kernel.check_lemma, " or definitions.foreign(ob)", ""),
           ("wrong: Z3: a recursive definition without a model",),
           "obligations may rely on recursive definitions that have no model"),
    Mutant("keys-by-printing", "digest of sexpr() text", "kernel.SumStatement._digest",
           _edit(kernel.SumStatement._digest, "return digest([*self.params, self.n, self.lo, *self.requires, "
                 "self.premise, self.conclusion],",
                 "return digest([z3.StringVal(t.sexpr()) for t in (*self.params, self.n, self.lo, *self.requires, "
                 "self.premise, self.conclusion)],"),
           ("wrong: premises: an instance of a statement printed like the proved one",),
           "a statement is keyed by its printed text"),
    Mutant("renaming-unchecked", "if False:  # normal trusted to rename only", "kernel.renaming",
           _edit(kernel.renaming, RENAMING_CHECK, "if False:"),
           ("wrong: calculation: a normal form that is no renaming", "wrong: Z3: a use renamed into the claim"),
           "a normal form is trusted to change only the names of bound variables"),
    Mutant("cuts-unchecked", "if False:  # any object as a cut", "kernel.calculation",
           _edit(kernel.calculation, "if _CUTS.get(id(use)) is not use:", "if False:"),
           ("wrong: calculation: a cut the kernel did not make",), "the cut rule takes any object's conclusion"),
    Mutant("links-unconditional", "proved.append(_justify(prev == term, ...))", "kernel.calculation",
           _edit(kernel.calculation, "z3.Implies(_conj(hyps), prev == term)", "prev == term"),
           ("wrong: calculation: a link used where its hypotheses fail",),
           "a link is used without the hypotheses it was proved under"),
    Mutant("cut-conclusions-unconditional", "_justify(rename(use.conclusion), ...)", "kernel.calculation",
           _edit(kernel.calculation, "_justify(z3.Implies(_conj(hyps), rename(use.conclusion))",
                 "_justify(rename(use.conclusion)"),
           ("wrong: calculation: a cut's conclusion used where its premise fails",),
           "a cut's conclusion is used without the hypotheses its premise was proved under"),
    Mutant("unknown-kills", "REJECTED = (REFUTED, VACUOUS, INCOMPLETE, UNKNOWN)", "kernel.REJECTED",
           ((kernel, "REJECTED", (*kernel.REJECTED, kernel.Status.UNKNOWN)),), ("wrong: verdict: mutant undecided",)),
    Mutant("calc-link-trivial", "rename(prev != prev)", "kernel.calculation",
           _edit(kernel.calculation, "rename(prev != term)", "rename(prev != prev)"),
           ("wrong: calculation: a link nothing justifies",)),
    Mutant("canonical-depth-plus-one", "walk(..., depth + 1), and the kernel trusts it", "schema.canonical",
           (*_edit(schema.canonical, "*reversed(consts)), depth + n)", "*reversed(consts)), depth + 1)"),
            *_edit(kernel.renaming, RENAMING_CHECK, "if False:")),
           ("wrong: calculation: a link equal only if two binders count as one",)),
    *(Mutant(name, line, "run.report", _edit(run.report, old, new), ("wrong: verdict: " + what,))
      for name, line, old, new, what in (
          ("verdict-ignores-lemmas", "ok = k_count == ...", "ok = not bad and k_count", "ok = k_count",
           "lemma refuted"),
          ("verdict-lemma-not-run-ignored", "lem.name in run.results and not ...",
           "lem.name not in run.results or not run.results[lem.name].accepted]",
           "lem.name in run.results and not run.results[lem.name].accepted]", "lemma not run"),
          ("verdict-ignores-survivors", "k_count == len(catalogue) dropped", "k_count == len(catalogue) and ", "",
           "mutant survived"),
          ("verdict-ignores-accepted-wrong", "wrong_ok = not missing and ...", "wrong_ok = not fooled and ",
           "wrong_ok = ", "wrong proof accepted"),
          ("verdict-ignores-wrong-not-run", "wrong_ok = not fooled and not unwitnessed",
           "not fooled and not missing and", "not fooled and", "wrong proof not run"),
          ("verdict-ignores-unwitnessed", "wrong_ok = not fooled and not missing",
           "not missing and not unwitnessed", "not missing", "wrong proof unwitnessed"),
          ("verdict-ignores-corpus", "corpus_ok dropped", " and corpus_ok and", " and", "corpus disagrees"),
          ("verdict-partial-as-verified", '"verified" if True', '"verified" if not run.left_out', '"verified" if True',
           "partial"))),
    # -- issue 14, item 3: wrong only from rank 7 on (or for programs longer than 3 statements); the
    # rank-indexed lemmas (ranks <= 6) cannot see them, the rank-generic ones and the engines' check must
    Mutant("diag-from-rank-8", "(k[0], k[0]) + k[1:6]", "EQUATIONS[Diag]",
           _edit(ev.ev_diag, "(k[0], k[0]) + k[1:]", "(k[0], k[0]) + k[1:6]"), ("WD-Diag (all ranks)",),
           "an eval.py change that misbehaves only at rank 7 or above"),
    Mutant("red-from-rank-7", "lambda m: denote(e.arg, (m,) + k[:5], sem)", "EQUATIONS[Red]",
           _edit(ev.ev_red, "(m,) + k", "(m,) + k[:5]"), ("WD-Red (all ranks)", "Pad-WD-Red (all ranks)")),
    Mutant("transp-identity-from-rank-7", "swap(k, e.i, e.i + 1) if rank(k) < 7 else k", "EQUATIONS[Transp]",
           _edit(ev.ev_transp, "swap(k, e.i, e.i + 1)", "(swap(k, e.i, e.i + 1) if rank(k) < 7 else k)"),
           ("WD-Transp (all ranks)", "Engines at ranks 7-10")),
    Mutant("padded-guard-from-rank-7", "guard(k[0] if rank(k) < 7 else k[1], ...)", "EQUATIONS[Expa]",
           _edit(ev.ev_expa, "sem.interp.guard(k[0],", "sem.interp.guard(k[0] if rank(k) < 7 else k[1],"),
           ("Pad-WD-Expa (all ranks)", "Engines at ranks 7-10", "Pad-Expa (all ranks)")),
    Mutant("expa-padded-reads-1-from-position-8", "padded: denote(e.arg, k[1:7] + (1, 1, ...), sem)",
           "EQUATIONS[Expa]", _edit(ev.ev_expa, "v = denote(e.arg, k[1:], sem)",
                                    "v = denote(e.arg, k[1:] if sem.pad is None else "
                                    "k[1:7] + map_shape(lambda x: x * 0 + 1, k[7:]), sem)"),
           ("Pad-Expa (all ranks)", "Engines at ranks 7-10"),
           "in bounds at every rank, so only the padding invariant sees that padded != unpadded"),
    Mutant("expa-padded-reads-1-from-position-12", "padded: denote(e.arg, k[1:11] + (1, 1, ...), sem)",
           "EQUATIONS[Expa]", _edit(ev.ev_expa, "v = denote(e.arg, k[1:], sem)",
                                    "v = denote(e.arg, k[1:] if sem.pad is None else "
                                    "k[1:11] + map_shape(lambda x: x * 0 + 1, k[11:]), sem)"),
           ("Pad-Expa (all ranks)",),
           "wrong from rank 12 only: beyond the ranked lemmas and the engines' instances (review rK)"),
    Mutant("st-stmt-upto-rank-6", "bounds = sem.bounds(Γ(x))[:6]", "eval.st_stmt",
           _edit(ev.st_stmt, "bounds = sem.bounds(sem.typed.gamma[stmt.target])",
                 "bounds = sem.bounds(sem.typed.gamma[stmt.target])[:6]"), ("Lemma 4.5 (all ranks)",)),
    Mutant("eval-prog-first-3", "for stmt in sem.typed.program.stmts[:3]:", "eval.eval_prog",
           _edit(ev.eval_prog, "for stmt in sem.typed.program.stmts:", "for stmt in sem.typed.program.stmts[:3]:"),
           ("St-Seq",)),
    Mutant("numpy-domain-upto-rank-6", "np.ogrid over bounds[:6], 1 beyond", "ArrayInterpretation.domain",
           _edit(ev.ArrayInterpretation.domain, "slice(1, n + 1) for n in bounds",
                 "slice(1, n + 1) for n in (*bounds[:6], *[1] * len(bounds[6:]))"), ("Engines at ranks 7-10",)),
    Mutant("t-red-from-rank-7", "Derivation('T-Red', e, d.shape[1:6], (d,))", "_RULES[Red]",
           _edit(ty.t_red, "d.shape[1:]", "d.shape[1:6]"), ("Lemma 4.1 case T-Red (all ranks)",)),
    # Wrong semantics that only one check of the rank-generic lemmas catches (targets: those lemmas
    # alone), each the kill of a weakening of that check below (target ``mutant: …``).
    Mutant("elem-right-shifted-every-rank", "k1 = ... else (k[0] + 1,) + k[1:]", "EQUATIONS[Elem]",
           _edit(ev.ev_elem, "k1 = () if sem.type(e.right) == () else k",
                 "k1 = () if sem.type(e.right) == () else (k[0] + 1,) + k[1:]"), ("WD-Add (all ranks)",)),
    Mutant("elem-scalar-read-at-1", "k0 = (1,) if sem.type(e.left) == () else k", "EQUATIONS[Elem]",
           _edit(ev.ev_elem, "k0 = () if sem.type(e.left) == () else k", "k0 = (1,) if sem.type(e.left) == () else k"),
           ("WD-Add (all ranks)",)),
    Mutant("diag-row-minus-one", "(k[0] - 1, k[0] - 1) + k[1:]", "EQUATIONS[Diag]",
           _edit(ev.ev_diag, "(k[0], k[0]) + k[1:]", "(k[0] - 1, k[0] - 1) + k[1:]"), ("WD-Diag (all ranks)",)),
    Mutant("proj-past-the-slice-every-rank", "(sem.interp.extent(e.m) + 1,) + k", "EQUATIONS[Proj]",
           _edit(ev.ev_proj, "(sem.interp.extent(e.m),) + k", "(sem.interp.extent(e.m) + 1,) + k"),
           ("WD-Proj (all ranks)",)),
    Mutant("red-position-7-off", "(m,) + k[:5] + (k[5] + 1 ...) + k[6:]", "EQUATIONS[Red]",
           _edit(ev.ev_red, "(m,) + k", "(m,) + k[:5] + map_shape(lambda x: x + 1, k[5:6]) + k[6:]"),
           ("WD-Red (all ranks)",)),
    Mutant("red-last-position-off", "(m,) + k[:-1] + (k[-1] + 1 ...)", "EQUATIONS[Red]",
           _edit(ev.ev_red, "(m,) + k", "(m,) + k[:-1] + map_shape(lambda x: x + 1, k[-1:])"),
           ("WD-Red (all ranks)",)),
    Mutant("red-past-n-every-rank", "n = sem.bound(...) + 1", "EQUATIONS[Red]",
           _edit(ev.ev_red, "n = sem.bound(sem.type(e.arg)[0])", "n = sem.bound(sem.type(e.arg)[0]) + 1"),
           ("WD-Red (all ranks)",)),
    Mutant("transp-identity-from-rank-12", "swap(k, e.i, e.i + 1) if rank(k) < 12 else k", "EQUATIONS[Transp]",
           _edit(ev.ev_transp, "swap(k, e.i, e.i + 1)", "(swap(k, e.i, e.i + 1) if rank(k) < 12 else k)"),
           ("WD-Transp (all ranks)",)),
    Mutant("t-red-no-rank-premise", "T-Red without rank >= 1", "_RULES[Red]",
           _edit(ty.t_red, '    c.rank_at_least(d.shape, 1, "T-Red", e.span, "red")\n', ""),
           ("Lemma 4.1 case T-Red (all ranks)",)),
    Mutant("t-red-demands-rank-2", "c.rank_at_least(d.shape, 2, ...)", "_RULES[Red]",
           _edit(ty.t_red, 'c.rank_at_least(d.shape, 1, "T-Red"', 'c.rank_at_least(d.shape, 2, "T-Red"'),
           ("Lemma 4.1 case T-Red (all ranks)",)),
    Mutant("st-stmt-adds-a-name", "{**new, x + \"'\": ...}", "eval.st_stmt",
           _edit(ev.st_stmt, "return sem.interp.update(sem.store, stmt.target, k, v, bounds)",
                 "return {**sem.interp.update(sem.store, stmt.target, k, v, bounds), stmt.target + \"'\": v}"),
           ("Lemma 4.5 (all ranks)",)),
    Mutant("eval-prog-skips-H", "for stmt in (s for s in stmts if s.target != 'H'):", "eval.eval_prog",
           _edit(ev.eval_prog, "for stmt in sem.typed.program.stmts:",
                 'for stmt in (s for s in sem.typed.program.stmts if s.target != "H"):'), ("St-Seq",)),
    Mutant("round-up-below-at-M-1", "pad * ((n + pad - 1) / pad) - (1 if pad == 1)", "symbolic.z3_round_up",
           _edit(sym.z3_round_up, "return pad * ((n + (pad - 1)) / pad)",
                 "return pad * ((n + (pad - 1)) / pad) - z3.If(pad == 1, 1, 0)"), ("CEIL axiom",)),
    Mutant("numpy-domain-upto-rank-7", "np.ogrid over bounds[:7], 1 beyond", "ArrayInterpretation.domain",
           _edit(ev.ArrayInterpretation.domain, "slice(1, n + 1) for n in bounds",
                 "slice(1, n + 1) for n in (*bounds[:7], *[1] * len(bounds[7:]))"), ("Engines at ranks 7-10",)),
    Mutant("bounds-map-upto-rank-6", "tuple(f(d) for d in t[:6]) + t[6:]  # tuples only", "typing.map_shape",
           _edit(ty.map_shape, "tuple(f(d) for d in t)", "(tuple(f(d) for d in t[:6]) + tuple(t[6:]))"),
           ("Engines at ranks 7-10",)),
    Mutant("t-transp-to-rank-from-7-concrete", "i <= rank for concrete ranks >= 7", "_RULES[Transp]",
           _edit(ty.t_transp, 'c.position(e.i, 1, rank(d.shape) - 1, "T-Transp"',
                 'c.position(e.i, 1, rank(d.shape) - (0 if isinstance(rank(d.shape), int) and rank(d.shape) >= 7 '
                 'else 1), "T-Transp"'), ("Engines at ranks 7-10",)),
    Mutant("insert-overwrites-from-7", "t[: i - 1] + (x,) + t[i:] for concrete i >= 7", "typing.insert",
           _edit(ty.insert, "    return t[: i - 1] + (x,) + t[i - 1 :]",
                 "    return t[: i - 1] + (x,) + (t[i:] if isinstance(i, int) and i >= 7 else t[i - 1 :])"),
           ("Engines at ranks 7-10",)),
    Mutant("eval-prog-stops-after-20", "for stmt in sem.typed.program.stmts[:20]:", "eval.eval_prog",
           _edit(ev.eval_prog, "for stmt in sem.typed.program.stmts:", "for stmt in sem.typed.program.stmts[:20]:"),
           ("Engines at ranks 7-10",)),
    Mutant("padded-guard-from-rank-7-concrete", "guard(k[1] ...) for concrete ranks >= 7", "EQUATIONS[Expa]",
           _edit(ev.ev_expa, "sem.interp.guard(k[0],",
                 "sem.interp.guard(k[1] if isinstance(k, tuple) and len(k) >= 7 else k[0],"),
           ("Engines at ranks 7-10",)),
    # Weakenings of the rank-generic lemmas: each proves less, so the wrong semantics above gets through.
    Mutant("generic-wd-first-read-only", "for n, rd in enumerate(interp.reads[:1]):", "ranks.wd_generic_obligations",
           _edit(ranks.wd_generic_obligations, "for n, rd in enumerate(interp.reads):",
                 "for n, rd in enumerate(interp.reads[:1]):"), ("mutant: elem-right-shifted-every-rank",)),
    Mutant("generic-no-rank-0-elem", "T-Elem's operands of rank 0 left out", "ranks.generic_schemata",
           _edit(ranks.generic_schemata, 'yield Generic(f"{op} X Y, X Y : []", Elem(op, X, Y), {"X": (), "Y": ()})',
                 "pass"), ("mutant: elem-scalar-read-at-1",)),
    Mutant("within-from-2", "self.arr[j] >= lo + 1  # k starts at 2", "sequences.Seq.within",
           _edit(Seq.within, "self.arr[j] >= lo,", "self.arr[j] >= lo + 1,"), ("mutant: diag-row-minus-one",)),
    Mutant("outside-past-extent-plus-1", "self.arr[j] > bounds.arr[j] + 1", "sequences.Seq.outside",
           _edit(Seq.outside, "self.arr[j] > bounds.arr[j]", "self.arr[j] > bounds.arr[j] + 1"),
           ("mutant: proj-past-the-slice-every-rank",)),
    Mutant("outside-positions-upto-6", "j < self.length, j < 6", "sequences.Seq.outside",
           _edit(Seq.outside, "z3.And(j >= 0, j < self.length,", "z3.And(j >= 0, j < self.length, j < 6,"),
           ("mutant: red-position-7-off",)),
    Mutant("outside-not-the-last", "j < self.length - 1", "sequences.Seq.outside",
           _edit(Seq.outside, "z3.And(j >= 0, j < self.length,", "z3.And(j >= 0, j < self.length - 1,"),
           ("mutant: red-last-position-off",)),
    Mutant("generic-sum-path-short", "m < n on a sum's path", "ranks.GenericInterpretation.sum",
           _edit(ranks.GenericInterpretation.sum, "z3.And(m >= 1, m <= n)", "z3.And(m >= 1, m < n)"),
           ("mutant: red-past-n-every-rank",)),
    Mutant("concrete-rank-hidden", "an equation needing a concrete rank counts as proved",
           "ranks.wd_generic_obligations",
           _edit(ranks.wd_generic_obligations, 'eval.py runs at every rank", (), z3.BoolVal(True),',
                 'eval.py runs at every rank", (), z3.BoolVal(False),'), ("mutant: transp-identity-from-rank-12",)),
    Mutant("generic-checker-premise-ignored", "some = Or(t == got for each rule)",
           "ranks.typing_rule_generic_obligations",
           _edit(ranks.typing_rule_generic_obligations, "z3.Or(*[z3.And(prem, t.equals(got)) for _, prem, t in alts])",
                 "z3.Or(*[t.equals(got) for _, prem, t in alts])"), ("mutant: t-red-no-rank-premise",)),
    Mutant("generic-rule-side-ignored", "prem ∧ ¬(t == got)  # checker's side conditions dropped",
           "ranks.typing_rule_generic_obligations",
           _edit(ranks.typing_rule_generic_obligations, "z3.And(prem, z3.Not(z3.And(side, t.equals(got))))",
                 "z3.And(prem, z3.Not(t.equals(got)))"), ("mutant: t-red-demands-rank-2",)),
    Mutant("generic-names-unchecked", "ok = ... (names of the store not compared)", "ranks.st_stmt_generic_obligations",
           _edit(ranks.st_stmt_generic_obligations, " and set(new) == set(mu)", ""), ("mutant: st-stmt-adds-a-name",)),
    Mutant("ceil-axiom-from-M-2", "(M >= 2,)", "ranks.ceil_axiom_obligations",
           _edit(ranks.ceil_axiom_obligations, "(M >= 1,)", "(M >= 2,)"), ("mutant: round-up-below-at-M-1",)),
    Mutant("engines-padded-shape-unchecked", "if False:  # the padded store's shape", "engines.check",
           _edit(engines.check, "if P.shape != rounded:", "if False:"), ("mutant: bounds-map-upto-rank-6",)),
    Mutant("engines-typing-unchecked", "wrong = []", "engines.obligations",
           _edit(engines.obligations, "wrong = list(typing_at(r))", "wrong = []"),
           ("mutant: t-transp-to-rank-from-7-concrete",)),
    Mutant("engines-padding-any", "np.any((P == 0) | isnan(P)) over the padding", "engines.check",
           _edit(engines.check, "if not np.all((P[padding] == 0) | np.isnan(P[padding])):",
                 "if not np.any((P[padding] == 0) | np.isnan(P[padding])):"),
           ("mutant: padded-guard-from-rank-7-concrete",)),
    Mutant("engines-long-program-unchecked", "failures = []  # the long program", "engines.obligations",
           _edit(engines.obligations, "failures = list(long_program())", "failures = []"),
           ("mutant: eval-prog-stops-after-20",)),
    Mutant("d-pad-var-guards-11-positions", "return guard_each(interp, p[:11], t[:11], v)", "eval.d_pad_var",
           _edit(ev.d_pad_var, "return guard_each(interp, p, t, v)", "return guard_each(interp, p[:11], t[:11], v)"),
           ("Theorem 3* (all ranks)",),
           "the padded initial store repeats the border beyond position 11: only the base case for every "
           "rank sees it"),
    Mutant("st-stmt-padding-one-from-position-12", "v = If(k[11] > Γ(x)[11], 1, v) under padding", "eval.st_stmt",
           ((ev, "st_stmt", st_stmt_padding_one_from_position_11),), ("Theorem 3 (step, all ranks)",),
           "a statement writes 1 into the padding from rank 12 on: only the step for every rank sees it"),
    Mutant("st-stmt-padding-undef-from-position-12", "v = If(k[11] > Γ(x)[11], •, v) under padding",
           "eval.st_stmt", ((ev, "st_stmt", st_stmt_padding_undef_from_position_11),),
           ("Theorem 3 (step, all ranks)",), "• in the padding where the unpadded value is not •: claim (c) of "
           "the step for every rank alone (review rT3)"),
    Mutant("seq-guard-undef", "If(j.below(d), v, • if isinstance(j, Seq) else 0)", "ranks.GenericInterpretation.guard",
           _edit(ranks.GenericInterpretation.guard, "v, sym.ZERO)",
                 "v, sym.UNDEF if isinstance(j, Seq) else sym.ZERO)"),
           ("Theorem 3* (all ranks)",), "the padded initial store holds • in its padding at every rank: claim "
           "(c) of the base (review rT3)"),
    Mutant("hole-a-on-padded-type", "Inv (a) assumed of a hole on ⌈t⌉", "pad_ranks.hole_hypotheses",
           _edit(pad_ranks.hole_hypotheses, 'out["a"].append(a)',
                 'out["a"].append(z3.Implies(indices.within(rd.index, T), P.at(rd.index) == U.at(rd.index)))'),
           ("Inv closes (all ranks)",), "the steps assume padded = unpadded on the padding too (review rT3)"),
    Mutant("hole-c-any-probe", "Inv (c) assumed for any probe", "pad_ranks.hole_hypotheses",
           _edit(pad_ranks.hole_hypotheses,
                 'out["c"] += [omega_form(rd.index, probe, t, T, P, U, indices) for probe in probes]',
                 'out["c"] += [z3.Implies(sym.Value.is_undef(P.at(rd.index)), sym.Value.is_undef(U.at(probe))) '
                 'for probe in probes]'),
           ("Inv closes (all ranks)",), "the steps assume • spreads to every probe, in Ω(k) or not (review rT3)"),
    Mutant("hole-b-zero-only", "P.at(q) == 0 in the padding  # not 0 or •", "pad_ranks.hole_hypotheses",
           _edit(pad_ranks.hole_hypotheses, 'out["b"].append(b)',
                 'out["b"].append(z3.Implies(indices.in_padding(rd.index, t, T), P.at(rd.index) == sym.ZERO))'),
           ("Inv closes (all ranks)",),
           "the rank-generic steps assume (b) as '0 in the padding' of a hole, stronger than they conclude"),
    Mutant("thm3-step-generic-scalars-only", "for g in list(stmt_schemata())[:1]:  # X = H, X H : []",
           "pad_ranks.thm3_step_generic_obligations",
           _edit(pad_ranks.thm3_step_generic_obligations, "for g in stmt_schemata():",
                 "for g in list(stmt_schemata())[:1]:"),
           ("mutant: st-stmt-padding-one-from-position-12",)),
    Mutant("pad-generic-upto-rank-10", "k.length <= 10 among the claims' hypotheses",
           "pad_ranks.Runs.claims",
           _edit(pad_ranks.Runs.claims, "k.length == t.length, c.length == t.length]",
                 "k.length == t.length, c.length == t.length, k.length <= 10]"),
           ("mutant: expa-padded-reads-1-from-position-12",)),
    Mutant("engines-at-rank-7-only", "for r in HIGH_RANKS[:1]:", "engines.obligations",
           _edit(engines.obligations, "for r in HIGH_RANKS:", "for r in HIGH_RANKS[:1]:"),
           ("mutant: numpy-domain-upto-rank-7",)),
)

BY_NAME = {m.name: m for m in CATALOGUE}


# --------------------------------------------------------------------------
# Wrong semantics under which `core-teil prove` must not certify a program (proofs.prover)
# --------------------------------------------------------------------------


def ev_red_past_padding(e: Red, k: tuple, sem: Sem) -> Any:
    n = sem.bound(sem.type(e.arg)[0]) + (1 if sem.pad is not None else 0)
    return sem.interp.sum(n, lambda m: denote(e.arg, (m, *k), sem), e)


def ev_red_at_last_bound(e: RedAt, k: tuple, sem: Sem) -> Any:
    n = sem.bound(sem.type(e.arg)[-1])
    return sem.interp.sum(n, lambda m: denote(e.arg, insert(k, e.i, m), sem), e)


VARIANTS: dict[str, Mutant] = {
    "red-past-padding": Mutant("red-past-padding", "n = sem.bound(...) + 1  # under padding",
                               "EQUATIONS[Red]", _eq(Red, ev_red_past_padding), ()),
    "red-at-last-bound": Mutant("red-at-last-bound", "n = sem.bound(sem.type(e.arg)[-1])", "EQUATIONS[RedAt]",
                                _eq(RedAt, ev_red_at_last_bound), ()),
    "d-pad-var-unguarded": Mutant("d-pad-var-unguarded", "return v  # no guard: the padding repeats the border",
                                  "eval.d_pad_var",
                                  _edit(ev.d_pad_var, "return guard_each(interp, p, t, v)", "return v"), ()),
    "t-transp-to-rank": BY_NAME["t-transp-to-rank"],
}


@contextmanager
def applied(mutant: Mutant | None) -> Iterator[None]:
    """Swap the mutant's entries in; always put the originals back, and the kernel's registries
    of justified uses as they were: a mutated kernel registers what the real one refuses (a
    formula "renamed" into a claim), and a later check in the same process must not find it
    (review r27: a wrong proof accepted after another's mutant had run)."""
    saved: list[tuple[Any, Any, Any]] = []
    registries = kernel.registries()
    try:
        for patch in mutant.patches if mutant else ():
            if isinstance(patch, Edit):
                code = patch.code()  # compiled before anything is changed
                saved.append((patch.function, "__code__", patch.function.__code__))
                patch.function.__code__ = code
                continue
            obj, key, new = patch
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
        kernel.restore(registries)
