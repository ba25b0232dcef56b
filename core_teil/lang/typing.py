"""Static semantics: the typing rules of SPEC.md section 3 and paper Fig. 8.

One small function per rule, in the order of SPEC.md's table (Core) and then
paper Fig. 8 (full TeIL).  Each returns a :class:`Derivation`: the rule's
name, the expression, its shape, the premises' derivations and the side
conditions it demanded.  Typing is syntax-directed, so the derivation is
unique and :func:`type_of` computes it (paper Lemma 4.1).

With shape parameters the equality and inequality premises become side
conditions decided by :class:`~core_teil.lang.shapes.ShapeSolver` for every
parameter value the ``assume``s allow; a failing one is reported with a
concrete counterexample assignment.  Well-formedness of programs follows
report 001 section 3.2.1, whose five ways of failing each get a message:
(1) re-declaration (S-Var), (2) assignment to an undeclared variable
(OK-Stmt), (3) type mismatch in an assignment (OK-Stmt), (4) use of an
undeclared variable (T-Var), (5) type mismatch inside an expression.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import NO_SPAN, Span, TeilTypeError, TeilUnknown
from .printer import format_shape
from .shapes import Decision, ShapeSolver, SideCondition, SideOp, Verdict
from .syntax import (
    Alloc,
    Contr,
    ContrAt,
    Diag,
    DiagAt,
    Dim,
    Elem,
    Expa,
    ExpaAt,
    Expr,
    Param,
    Prod,
    Program,
    Proj,
    ProjAt,
    Red,
    RedAt,
    Shape,
    Stmt,
    Transp,
    TranspAt,
    Var,
    as_tree,
    expect_program,
)

Context = dict[str, Shape]  # Γ: allocation name -> declared shape


@dataclass(frozen=True)
class Derivation:
    """A node of a typing derivation: ``premises / expr : shape  (rule)``."""

    rule: str
    expr: Expr
    shape: Shape
    premises: tuple[Derivation, ...] = ()
    side: tuple[SideCondition, ...] = ()

    def walk(self) -> Iterator[Derivation]:
        stack: list[Derivation] = [self]
        while stack:
            d = stack.pop()
            yield d
            stack.extend(reversed(d.premises))



@dataclass(frozen=True)
class StmtDerivation:
    """``x = e ok`` by OK-Stmt."""

    stmt: Stmt
    declared: Shape
    expr: Derivation
    side: tuple[SideCondition, ...] = ()
    rule: str = "OK-Stmt"


@dataclass
class TypedProgram:
    """A well-formed program with everything the evaluators need.

    ``types`` maps ``id(e)`` of every subexpression to its shape; the program
    is kept alive by this object, so the ids stay valid.
    """

    program: Program
    gamma: Context
    derivations: tuple[StmtDerivation, ...]
    solver: ShapeSolver
    types: dict[int, Shape] = field(default_factory=dict)

    def type_of(self, e: Expr) -> Shape:
        return self.types[id(e)]

    @property
    def params(self) -> dict[str, int]:
        return self.solver.values

    def shapes(self) -> dict[str, Shape]:
        """Each allocation's shape, with the given parameter values substituted."""
        return {x: tuple(self.solver.concrete(d) or d for d in t) for x, t in self.gamma.items()}

    def side_conditions(self) -> list[SideCondition]:
        out: list[SideCondition] = []
        for sd in self.derivations:
            out.extend(sd.side)
            for d in sd.expr.walk():
                out.extend(d.side)
        return out



# --------------------------------------------------------------------------
# The checker state: context, solver, and how side conditions are decided
# --------------------------------------------------------------------------


class Checker:
    def __init__(self, program: Program, solver: ShapeSolver, gamma: Context) -> None:
        self.program = program
        self.solver = solver
        self.gamma = gamma
        self.types: dict[int, Shape] = {}

    def require(self, lhs: Dim, op: SideOp, rhs: Dim, rule: str, span: Span, why: str) -> SideCondition:
        """Decide a side condition now; fail with a counterexample if it can fail."""
        sc = SideCondition(lhs, op, rhs, rule, span, why)
        decision: Decision = self.solver.decide(lhs, op, rhs)
        if decision.verdict is Verdict.UNKNOWN:
            raise TeilUnknown(f"Z3 could not decide {sc} ({why})", span, rule)
        if decision.verdict is Verdict.FAILS:
            concrete = self.solver.concrete(lhs) is not None and self.solver.concrete(rhs) is not None
            raise TeilTypeError(_failure(sc, decision.counterexample, concrete), span, rule,
                                counterexample=decision.counterexample)
        return sc

    def require_shape(self, t0: Shape, t1: Shape, rule: str, span: Span,
                      what: str) -> tuple[SideCondition, ...]:
        """``t0 = t1`` extent by extent (T-Elem, OK-Stmt)."""
        if t0 is t1:
            return ()
        if not (isinstance(t0, tuple) and isinstance(t1, tuple)):  # unknown ranks: one premise
            return (self.require(t0, "==", t1, rule, span, what),)  # type: ignore[arg-type]
        if len(t0) != len(t1):
            raise TeilTypeError(f"{what}: {format_shape(t0)} and {format_shape(t1)} differ in rank "
                                f"({len(t0)} vs {len(t1)})", span, rule)
        out = []
        for pos, (a, b) in enumerate(zip(t0, t1, strict=True), start=1):
            if a == b:
                continue
            out.append(self.require(a, "==", b, rule, span,
                                    f"{what}: {format_shape(t0)} vs {format_shape(t1)} in dimension {pos}"))
        return tuple(out)

    def extent(self, d: Dim, rule: str, span: Span) -> None:
        """An extent written in the program is a positive literal or a declared parameter."""
        if isinstance(d, int):
            if d < 1:
                raise TeilTypeError(f"extent {d} is not a positive integer", span, rule)
        elif isinstance(d, str):
            if d not in self.solver.vars:
                raise TeilTypeError(f"{d!r} is not a declared shape parameter (declare it with `param {d}`)",
                                    span, rule)
        else:  # a symbolic extent of a rank-generic proof schema: positive is a premise
            self.require(1, "<=", d, rule, span, "an extent is positive")

    def position(self, i: Any, lo: Any, hi: Any, rule: str, span: Span, what: str) -> None:
        if not all(isinstance(x, int) for x in (i, lo, hi)):  # a rank-generic schema: premises
            self.require(lo, "<=", i, rule, span, f"{what} >= {lo}")
            self.require(i, "<=", hi, rule, span, f"{what} within the rank")
            return
        if not lo <= i <= hi:
            rng = f"{lo}..{hi}" if lo <= hi else "none: the argument has too small a rank"
            why = " (the second position must come after the first)" if "second" in what and i < lo else ""
            raise TeilTypeError(f"{what} {i} is out of range (allowed: {rng}){why}", span, rule)

    def index(self, m: Dim, rule: str, span: Span) -> None:
        """A slice index written in the program is a positive literal or a declared parameter."""
        if isinstance(m, int) and m < 1:
            raise TeilTypeError(f"slice index {m} is not a positive integer (indices are 1-based)", span, rule)
        self.extent(m, rule, span)

    def same_rank(self, t0: Shape, t1: Shape, rule: str, span: Span, what: str) -> bool:
        """Whether two shapes have one rank; for shapes of unknown rank (the rank-generic
        proofs) that is a premise, as an extent equality is."""
        r0, r1 = rank(t0), rank(t1)
        if isinstance(r0, int) and isinstance(r1, int):
            return r0 == r1
        if t0 is not t1:
            self.require(r0, "==", r1, rule, span, f"{what}: one rank")
        return True

    def rank_at_least(self, t: Shape, k: int, rule: str, span: Span, op: str) -> None:
        if not isinstance(rank(t), int):  # a shape of unknown rank (rank-generic proofs): a premise
            self.require(k, "<=", rank(t), rule, span, f"`{op}` needs rank >= {k}")
            return
        if len(t) < k:
            raise TeilTypeError(f"`{op}` needs an argument of rank >= {k}, found {format_shape(t)}",
                                span, rule)

    def infer(self, e: Expr) -> Derivation:
        rule_fn = _RULES.get(type(e))
        if rule_fn is None:
            raise TeilTypeError(f"unknown expression node {type(e).__name__}", e.span)
        if type(e) not in _DIALECT[self.program.dialect]:
            raise TeilTypeError(f"`{type(e).__name__}` is not an operator of lang {self.program.dialect}",
                                e.span)
        d = rule_fn(self, e)
        self.types[id(e)] = d.shape
        return d


def _failure(sc: SideCondition, cex: dict[str, int] | None, concrete: bool) -> str:
    if concrete:
        negated = "!=" if sc.op == "==" else ">"
        return f"{sc.why} ({sc.lhs} {negated} {sc.rhs})"
    msg = f"side condition {sc} does not hold for all parameter values ({sc.why})"
    if cex:
        msg += "; counterexample: " + ", ".join(f"{k} = {v}" for k, v in sorted(cex.items()))
    return msg


# --------------------------------------------------------------------------
# Core-TeIL rules (SPEC.md section 3), in table order
# --------------------------------------------------------------------------


def t_var(c: Checker, e: Var) -> Derivation:
    """T-Var: Γ(x) = t  ⟹  x : t.   Failure (4) of report 3.2.1."""
    if e.name not in c.gamma:
        raise TeilTypeError(f"use of undeclared variable {e.name!r}", e.span, "T-Var")
    return Derivation("T-Var", e, c.gamma[e.name])


def t_elem(c: Checker, e: Elem) -> Derivation:
    """T-Elem / T-SMul / T-SDiv: element-wise, or scaled by a scalar."""
    d0, d1 = c.infer(e.left), c.infer(e.right)
    t0, t1 = d0.shape, d1.shape
    if e.op == "mul" and t0 == () and t1 != ():
        return t_smul(e, d0, d1)
    if e.op == "div" and t1 == () and t0 != ():
        return t_sdiv(e, d0, d1)
    hint = ""
    if not c.same_rank(t0, t1, "T-Elem", e.span, f"operands of `{e.op}`"):
        if e.op == "mul" and t1 == ():
            hint = " (T-SMul scales from the left: write `mul s e`)"
        elif e.op == "div" and t0 == ():
            hint = " (T-SDiv divides by a scalar on the right only)"
        raise TeilTypeError(f"`{e.op}` needs operands of one shape, found {format_shape(t0)} and "
                            f"{format_shape(t1)}{hint}", e.span, "T-Elem")
    side = c.require_shape(t0, t1, "T-Elem", e.span, f"operands of `{e.op}`")
    return Derivation("T-Elem", e, t0, (d0, d1), side)


def t_smul(e: Elem, d0: Derivation, d1: Derivation) -> Derivation:
    """T-SMul: e0 : [], e1 : t  ⟹  mul e0 e1 : t."""
    return Derivation("T-SMul", e, d1.shape, (d0, d1))


def t_sdiv(e: Elem, d0: Derivation, d1: Derivation) -> Derivation:
    """T-SDiv: e0 : t, e1 : []  ⟹  div e0 e1 : t (report 001, Fig. 9)."""
    return Derivation("T-SDiv", e, d0.shape, (d0, d1))


def t_prod(c: Checker, e: Prod) -> Derivation:
    """T-Prod: e0 : t0, e1 : t1  ⟹  prod e0 e1 : t0 ++ t1."""
    d0, d1 = c.infer(e.left), c.infer(e.right)
    return Derivation("T-Prod", e, d0.shape + d1.shape, (d0, d1))


def t_red(c: Checker, e: Red) -> Derivation:
    """T-Red: e : [n] ++ t  ⟹  red e : t."""
    d = c.infer(e.arg)
    c.rank_at_least(d.shape, 1, "T-Red", e.span, "red")
    return Derivation("T-Red", e, d.shape[1:], (d,))


def t_contr(c: Checker, e: Contr) -> Derivation:
    """T-Contr: e : [n, n] ++ t  ⟹  contr e : t."""
    d = c.infer(e.arg)
    c.rank_at_least(d.shape, 2, "T-Contr", e.span, "contr")
    n0, n1 = d.shape[0], d.shape[1]
    side = () if n0 == n1 else (c.require(n0, "==", n1, "T-Contr", e.span,
                                          "the contracted extents must agree"),)
    return Derivation("T-Contr", e, d.shape[2:], (d,), side)


def t_diag(c: Checker, e: Diag) -> Derivation:
    """T-Diag: e : [n, n] ++ t  ⟹  diag e : [n] ++ t."""
    d = c.infer(e.arg)
    c.rank_at_least(d.shape, 2, "T-Diag", e.span, "diag")
    n0, n1 = d.shape[0], d.shape[1]
    side = () if n0 == n1 else (c.require(n0, "==", n1, "T-Diag", e.span,
                                          "the diagonal's two extents must agree"),)
    return Derivation("T-Diag", e, (n0,) + d.shape[2:], (d,), side)


def t_transp(c: Checker, e: Transp) -> Derivation:
    """T-Transp: e : t, 1 <= i < rank t  ⟹  transp i e : swap_i t."""
    d = c.infer(e.arg)
    c.position(e.i, 1, rank(d.shape) - 1, "T-Transp", e.span, "`transp` position")
    return Derivation("T-Transp", e, swap(d.shape, e.i, e.i + 1), (d,))


def t_expa(c: Checker, e: Expa) -> Derivation:
    """T-Expa: e : t  ⟹  expa d e : [d] ++ t."""
    c.extent(e.d, "T-Expa", e.span)
    d = c.infer(e.arg)
    return Derivation("T-Expa", e, (e.d,) + d.shape, (d,))


def t_proj(c: Checker, e: Proj) -> Derivation:
    """T-Proj: e : [n] ++ t, 1 <= m <= n  ⟹  proj m e : t."""
    c.index(e.m, "T-Proj", e.span)
    d = c.infer(e.arg)
    c.rank_at_least(d.shape, 1, "T-Proj", e.span, "proj")
    side = () if e.m == d.shape[0] else (c.require(e.m, "<=", d.shape[0], "T-Proj", e.span,
                                                   "the projected slice must exist"),)
    return Derivation("T-Proj", e, d.shape[1:], (d,), side)


# --------------------------------------------------------------------------
# Full-TeIL rules (paper Fig. 8); positions are 1-based
# --------------------------------------------------------------------------


def t_red_at(c: Checker, e: RedAt) -> Derivation:
    """T-Red+: e : [n1..ni..nk]  ⟹  red i e : [n1..n̂i..nk]."""
    d = c.infer(e.arg)
    c.position(e.i, 1, rank(d.shape), "T-Red+", e.span, "`red` position")
    return Derivation("T-Red+", e, remove(d.shape, e.i), (d,))


def t_contr_at(c: Checker, e: ContrAt) -> Derivation:
    """T-Contr (equation (6)): contr i j e = red i (diag i j e); n_i = n_j."""
    d = c.infer(e.arg)
    if e.i >= e.j:
        raise TeilTypeError(f"`contr {e.i} {e.j}` needs its first position below its second", e.span, "T-Contr")
    c.position(e.i, 1, rank(d.shape) - 1, "T-Contr", e.span, "`contr` first position")
    c.position(e.j, e.i + 1, rank(d.shape), "T-Contr", e.span, "`contr` second position")
    ni, nj = d.shape[e.i - 1], d.shape[e.j - 1]
    side = () if ni == nj else (c.require(ni, "==", nj, "T-Contr", e.span,
                                          f"contracted dimensions {e.i} and {e.j} must agree"),)
    return Derivation("T-Contr", e, remove(remove(d.shape, e.j), e.i), (d,), side)


def t_diag_at(c: Checker, e: DiagAt) -> Derivation:
    """T-Diag: e : [..n_i..n_j..], n_i = n_j, i < j  ⟹  diag i j e drops dimension j."""
    d = c.infer(e.arg)
    if e.i >= e.j:
        raise TeilTypeError(f"`diag {e.i} {e.j}` needs its first position below its second", e.span, "T-Diag")
    c.position(e.i, 1, rank(d.shape) - 1, "T-Diag", e.span, "`diag` first position")
    c.position(e.j, e.i + 1, rank(d.shape), "T-Diag", e.span, "`diag` second position")
    ni, nj = d.shape[e.i - 1], d.shape[e.j - 1]
    side = () if ni == nj else (c.require(ni, "==", nj, "T-Diag", e.span,
                                          f"diagonal dimensions {e.i} and {e.j} must agree"),)
    return Derivation("T-Diag", e, remove(d.shape, e.j), (d,), side)


def t_transp_at(c: Checker, e: TranspAt) -> Derivation:
    """T-Transp: swaps dimensions i and j (i != j, either order)."""
    d = c.infer(e.arg)
    c.position(e.i, 1, rank(d.shape), "T-Transp", e.span, "`transp` position")
    c.position(e.j, 1, rank(d.shape), "T-Transp", e.span, "`transp` position")
    if e.i == e.j:
        raise TeilTypeError(f"`transp {e.i} {e.j}` swaps a dimension with itself", e.span, "T-Transp")
    return Derivation("T-Transp", e, swap(d.shape, e.i, e.j), (d,))


def t_expa_at(c: Checker, e: ExpaAt) -> Derivation:
    """T-Expa: e : [n1..nk]  ⟹  expa i d e : [n1..n_{i-1}, d, n_i..nk]."""
    c.extent(e.d, "T-Expa", e.span)
    d = c.infer(e.arg)
    c.position(e.i, 1, rank(d.shape) + 1, "T-Expa", e.span, "`expa` position")
    return Derivation("T-Expa", e, insert(d.shape, e.i, e.d), (d,))


def t_proj_at(c: Checker, e: ProjAt) -> Derivation:
    """T-Proj: e : [..n_i..], 1 <= m <= n_i  ⟹  proj i m e drops dimension i."""
    c.index(e.m, "T-Proj", e.span)
    d = c.infer(e.arg)
    c.position(e.i, 1, rank(d.shape), "T-Proj", e.span, "`proj` position")
    n = d.shape[e.i - 1]
    side = () if e.m == n else (c.require(e.m, "<=", n, "T-Proj", e.span,
                                          f"the projected slice of dimension {e.i} must exist"),)
    return Derivation("T-Proj", e, remove(d.shape, e.i), (d,), side)


_RULES: dict[type, Callable[[Checker, Expr], Derivation]] = {  # type: ignore[dict-item]
    Var: t_var, Elem: t_elem, Prod: t_prod,
    Red: t_red, Contr: t_contr, Diag: t_diag, Transp: t_transp, Expa: t_expa, Proj: t_proj,
    RedAt: t_red_at, ContrAt: t_contr_at, DiagAt: t_diag_at, TranspAt: t_transp_at,
    ExpaAt: t_expa_at, ProjAt: t_proj_at,
}

_DIALECT: dict[str, frozenset[type]] = {
    "core": frozenset({Var, Elem, Prod, Red, Contr, Diag, Transp, Expa, Proj}),
    "full": frozenset({Var, Elem, Prod, RedAt, ContrAt, DiagAt, TranspAt, ExpaAt, ProjAt}),
}


# --------------------------------------------------------------------------
# Shape operations shared with the evaluator and the lowering
# --------------------------------------------------------------------------


def rank(t: Any) -> Any:
    """The rank of a shape or multi-index: ``len`` of a tuple, the length term of a
    :class:`~core_teil.semantics.sequences.Seq` (a shape of unknown rank in the rank-generic proofs)."""
    return len(t) if isinstance(t, tuple) else t.length


def map_shape(f: Callable[[Any], Any], t: Any) -> Any:
    """``f`` applied to every extent of a shape (a tuple, or a :class:`~core_teil.semantics.sequences.Seq`)."""
    return tuple(f(d) for d in t) if isinstance(t, tuple) else t.map(f)


def swap(t: Any, i: Any, j: Any) -> Any:
    """Swap 1-based positions ``i`` and ``j`` of a tuple (shapes and multi-indices alike).

    Written with slices and concatenation only, so that the rank-generic proofs
    run this very definition on a sequence of unknown length (and unknown ``i``)."""
    if isinstance(i, int) and isinstance(j, int):
        if i == j:
            return t
        if i > j:
            i, j = j, i
    return t[: i - 1] + (t[j - 1],) + t[i : j - 1] + (t[i - 1],) + t[j:]


def remove(t: Any, i: Any) -> Any:
    """Drop the 1-based position ``i``."""
    return t[: i - 1] + t[i:]


def insert(t: Any, i: Any, x: object) -> Any:
    """Insert ``x`` so that it stands at 1-based position ``i``."""
    return t[: i - 1] + (x,) + t[i - 1 :]


# --------------------------------------------------------------------------
# Programs: S-Var, OK-Stmt, OK-Prog
# --------------------------------------------------------------------------


def s_var(c: Checker, a: Alloc, seen: dict[str, Span]) -> None:
    """S-Var: every allocation name is new.  Failure (1) of report 3.2.1."""
    if a.name in seen:
        where = seen[a.name]
        raise TeilTypeError(f"{a.name!r} is already declared (at line {where.line})", a.span, "S-Var")
    for d in a.shape:
        c.extent(d, "S-Var", a.span)
    seen[a.name] = a.span
    c.gamma[a.name] = a.shape


def ok_stmt(c: Checker, s: Stmt) -> StmtDerivation:
    """OK-Stmt: Γ(x) = t, e : t  ⟹  x = e ok.  Failures (2) and (3) of report 3.2.1."""
    if s.target not in c.gamma:
        raise TeilTypeError(f"assignment to undeclared variable {s.target!r}", s.span, "OK-Stmt")
    d = c.infer(s.expr)
    declared = c.gamma[s.target]
    side = c.require_shape(declared, d.shape, "OK-Stmt", s.span,
                           f"{s.target} is declared with a shape other than its expression's")
    return StmtDerivation(s, declared, d, side)


def program_context(program: Program, params: dict[str, int] | None = None,
                    checker: type[Checker] = Checker) -> Checker:
    """OK-Prog's premises before the statements: parameters declared once, ``assume``s over
    declared parameters and satisfiable, and Γ formed from the allocations (S-Var).

    Separate from :func:`check_program` so that the teaching layer can judge the statements
    one by one and show how far a failing derivation gets (``core-teil derive``)."""
    program = as_tree(expect_program(program))
    solver = ShapeSolver(program, params)
    c = checker(program, solver, {})
    seen: dict[str, Span] = {}
    params_seen: dict[str, Span] = {}
    for decl in program.decls:
        if isinstance(decl, Param):
            for name in decl.names:
                if name in params_seen:
                    raise TeilTypeError(f"parameter {name!r} is already declared", decl.span, "S-Var")
                params_seen[name] = decl.span
    for name in params_seen:
        seen[name] = params_seen[name]
    for cond in program.conds:
        for lin in (cond.lhs, cond.rhs):
            for t in lin.terms:
                if t.name is not None and t.name not in solver.vars:
                    raise TeilTypeError(f"{t.name!r} in an assumption is not a declared parameter",
                                        cond.span, "Assume")
    solver.check_assumptions()
    for a in program.allocs:
        s_var(c, a, seen)
    return c


def check_program(program: Program, params: dict[str, int] | None = None) -> TypedProgram:
    """OK-Prog: form Γ from the allocations, then judge every statement ok.

    The typed program is a tree (:func:`~core_teil.lang.syntax.as_tree`): types, and the
    reads of the semantics, are recorded per node."""
    c = program_context(program, params)
    derivations = tuple(ok_stmt(c, s) for s in c.program.stmts)
    return TypedProgram(c.program, dict(c.gamma), derivations, c.solver, c.types)


def type_of(program: Program, e: Expr, params: dict[str, int] | None = None) -> Shape:
    """The computable typing function of Lemma 4.1 (raises on ill-typed ``e``)."""
    tp = check_program(program, params)
    c = Checker(program, tp.solver, dict(tp.gamma))
    return c.infer(e).shape


__all__ = ["NO_SPAN", "Derivation", "StmtDerivation", "TypedProgram", "check_program", "program_context", "type_of"]
