"""Expression schemata with holes, typed by ``typing.py`` and run by ``eval.py``.

A *hole* is an allocation ``X : [x1, ..., xr]`` whose extents are free shape
parameters: by the structural-induction rule of :mod:`proofs.kernel` it
stands for any expression of that type.  :func:`instantiate` types a schema
such as ``red X`` with the checker's own rules (``typing._RULES``) in a
:class:`Premises` context, where every side condition a rule demands
(``n0 == n1`` for T-Diag, ``m <= n`` for T-Proj, equal extents for T-Elem) is
*recorded as a hypothesis* instead of being decided: that is inversion of the
typing judgement.  A rule that forgets a premise therefore forgets a
hypothesis, and the lemmas built on it fail.

:class:`ProofInterpretation` is ``core_teil.semantics.symbolic.Z3Interpretation`` with
two additions that do not touch the equations: writes are recorded (for
St-Stmt's premises), and under padding with a *symbolic* vector length ``M``
the rounding ``⌈n⌉`` is an uninterpreted ``CEIL(M, n)`` whose only property,
``n <= CEIL(M, n)``, is what the padding lemmas use and what
``Definition 7`` proves of ``symbolic.py``'s own ``ceil`` for every ``M``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import z3

from core_teil.errors import TeilTypeError
from core_teil.lang import typing as ty
from core_teil.lang.shapes import Decision, ShapeSolver, Verdict
from core_teil.lang.syntax import Alloc, Dim, Expr, Param, Program, Shape, Stmt
from core_teil.semantics import eval as ev
from core_teil.semantics.symbolic import UNDEF, ZERO, SumNode, Value, Z3Interpretation, arith, in_bounds, initial_memory

from .kernel import RANK_BOUND, case_of

IS_UNDEF = Value.is_undef


# --------------------------------------------------------------------------
# Typing with premises as hypotheses
# --------------------------------------------------------------------------


class Premises(ShapeSolver):
    """A shape solver that assumes every side condition and remembers it."""

    def __init__(self, program: Program) -> None:
        super().__init__(program)
        self.assumed: list[tuple[Dim, str, Dim]] = []

    def decide(self, lhs: Dim, op: str, rhs: Dim) -> Decision:  # type: ignore[override]
        self.assumed.append((lhs, op, rhs))
        return Decision(Verdict.HOLDS)

    def premise(self, lhs: Dim, op: str, rhs: Dim) -> z3.BoolRef:
        a, b = self.term(lhs), self.term(rhs)
        return a == b if op == "==" else a <= b

    def premises(self) -> list[z3.BoolRef]:
        return [self.premise(*p) for p in self.assumed]


def hole_shape(name: str, rank: int) -> Shape:
    """``[x1, ..., xr]`` for hole ``X``: one free parameter per extent."""
    return tuple(f"{name.lower()}{j}" for j in range(1, rank + 1))


def hole_program(holes: dict[str, Shape], extra: Sequence[str] = ()) -> Program:
    params: list[str] = []
    for shape in holes.values():
        params += [d for d in shape if isinstance(d, str) and d not in params]
    params += [p for p in extra if p not in params]
    decls: list[Any] = [Param(tuple(params))] if params else []
    decls += [Alloc(x, tuple(t)) for x, t in holes.items()]
    return Program("core", tuple(decls), ())


@dataclass
class Instance:
    """A schema typed in a premises context: what the step lemmas run on."""

    expr: Expr
    holes: dict[str, Shape]
    typed: ty.TypedProgram
    derivation: ty.Derivation
    shapes: Premises
    label: str

    @property
    def rule(self) -> str:
        return self.derivation.rule

    def hypotheses(self) -> list[z3.BoolRef]:
        """Parameters >= 1 (SPEC.md section 1) and the rules' premises (inversion)."""
        return [*self.shapes.hypotheses(), *self.shapes.premises()]

    def dims(self, shape: Shape) -> tuple[z3.ArithRef, ...]:
        return tuple(self.shapes.term(d) for d in shape)

    @property
    def shape(self) -> tuple[z3.ArithRef, ...]:
        return self.dims(self.derivation.shape)

    def gamma(self, x: str) -> tuple[z3.ArithRef, ...]:
        return self.dims(self.holes[x])

    @property
    def rank(self) -> int:
        """The largest rank among the holes and the typed subexpressions: what the kernel's
        rank coverage of a ``[R]`` lemma counts (``proj m (expa d X)`` reaches rank(X) + 1)."""
        return max([len(t) for t in self.holes.values()] + [len(t) for t in self.typed.types.values()])

    @property
    def case(self) -> str:
        """The induction case this instance is a step of (the constructor at its root)."""
        return case_of(self.expr)

    def tags(self) -> dict[str, Any]:
        """``rank`` and ``case`` for the obligations built from this instance."""
        return {"rank": self.rank, "case": self.case}


def instantiate(expr: Expr, holes: dict[str, Shape], extra: Sequence[str] = (),
                label: str = "") -> Instance | None:
    """Type ``expr`` with the checker's rules; ``None`` if they reject it (the instance is vacuous)."""
    program = hole_program(holes, extra)
    shapes = Premises(program)
    checker = ty.Checker(program, shapes, dict(holes))
    try:
        d = checker.infer(expr)
    except TeilTypeError:
        return None
    typed = ty.TypedProgram(program, dict(holes), (), shapes, checker.types)
    return Instance(expr, dict(holes), typed, d, shapes, label or repr_expr(expr, holes))


def repr_expr(e: Expr, holes: dict[str, Shape] | None = None) -> str:
    try:
        from core_teil.lang.printer import format_expr

        text = format_expr(e)
    except Exception:  # the printer is another helper's; a label must never fail a proof
        text = type(e).__name__
    if holes:
        text += " with " + ", ".join(f"{x} : [{', '.join(map(str, t))}]" for x, t in holes.items())
    return text


def stmt_instance(stmt: Stmt, holes: dict[str, Shape], label: str = "") -> tuple[Instance, ty.StmtDerivation] | None:
    """Type a statement with OK-Stmt (``typing.ok_stmt``) in a premises context."""
    program = hole_program(holes)
    program = Program("core", program.decls, (stmt,))
    shapes = Premises(program)
    checker = ty.Checker(program, shapes, dict(holes))
    try:
        sd = ty.ok_stmt(checker, stmt)
    except TeilTypeError:
        return None
    typed = ty.TypedProgram(program, dict(holes), (sd,), shapes, checker.types)
    inst = Instance(stmt.expr, dict(holes), typed, sd.expr, shapes, label or f"{stmt.target} = "
                    + repr_expr(stmt.expr, holes))
    return inst, sd


# --------------------------------------------------------------------------
# The interpretation
# --------------------------------------------------------------------------

CEIL = z3.Function("CEIL", z3.IntSort(), z3.IntSort(), z3.IntSort())


@dataclass(frozen=True)
class Update:
    """One St-Stmt update ``μ{x ↦ λk. v}`` over ``k <= bounds``, with the domain's path."""

    name: str
    index: tuple[z3.ArithRef, ...]
    value: z3.ExprRef
    bounds: tuple[z3.ArithRef, ...]
    path: tuple[z3.BoolRef, ...]


@dataclass
class ProofInterpretation(Z3Interpretation):
    """``Z3Interpretation`` plus recorded writes and, for symbolic ``M``, an abstract ``⌈·⌉``."""

    updates: list[Update] = field(default_factory=list)
    ceil_facts: list[z3.BoolRef] = field(default_factory=list)

    def ceil(self, n: z3.ArithRef, pad: Any) -> z3.ArithRef:
        if isinstance(pad, int):
            return super().ceil(n, pad)
        c = CEIL(pad, n)
        self.ceil_facts.append(n <= c)
        return c

    def update(self, store: Any, x: str, k: tuple, v: z3.ExprRef, bounds: tuple) -> dict[str, z3.ExprRef]:
        path = tuple(self.path[len(self.path) - len(k):]) if k else ()
        self.updates.append(Update(x, tuple(k), v, tuple(bounds), path))
        return super().update(store, x, k, v, bounds)


@dataclass
class UnrolledInterpretation(ProofInterpretation):
    """Sums with a numeral bound unrolled (Σ as the definition says): for counterexamples."""

    def sum(self, n: Any, body: Callable[[Any], z3.ExprRef], node: Expr) -> z3.ExprRef:
        bound = z3.simplify(n) if isinstance(n, z3.ExprRef) else n
        if isinstance(bound, z3.ExprRef) and not z3.is_int_value(bound):
            return super().sum(n, body, node)
        count = bound.as_long() if isinstance(bound, z3.ExprRef) else int(bound)
        acc: z3.ExprRef = ZERO
        for m in range(1, count + 1):
            acc = self.plus(acc, body(z3.IntVal(m)))
        return acc

    def plus(self, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
        return arith("add", a, b)


def run(inst: Instance, prefix: str, pad: Any = None, store: dict[str, z3.ExprRef] | None = None,
        interp_cls: type[ProofInterpretation] = ProofInterpretation) -> tuple[ev.Sem, ProofInterpretation]:
    """A ``Sem`` over a fresh interpretation and (by default) an arbitrary memory ``μ ~ μ_allocs``."""
    interp = interp_cls(inst.shapes, prefix)
    mem = store if store is not None else initial_memory(inst.typed.gamma, prefix)
    return ev.Sem(inst.typed, interp, mem, pad), interp


def index(prefix: str, rank: int) -> tuple[z3.ArithRef, ...]:
    return tuple(z3.Int(f"{prefix}{j}") for j in range(1, rank + 1))


def within(k: Sequence[z3.ArithRef], bounds: Sequence[z3.ArithRef]) -> z3.BoolRef:
    """``k <= bounds`` (1-based, SPEC.md section 1): the Z3 interpretation's own domain predicate
    (:func:`core_teil.semantics.symbolic.in_bounds`, which its ``domain`` assumes), not a restatement."""
    return in_bounds(tuple(k), tuple(bounds))


def select(arr: z3.ExprRef, k: Sequence[z3.ArithRef]) -> z3.ExprRef:
    return z3.Select(arr, *k) if k else arr


def sum_nodes(*interps: ProofInterpretation) -> list[SumNode]:
    return [s for i in interps for s in i.sums]


# --------------------------------------------------------------------------
# Enumerating the instances of a constructor up to the rank bound
# --------------------------------------------------------------------------

Schema = tuple[Expr, dict[str, Shape], tuple[str, ...]]


def ranks(lo: int = 0, hi: int = RANK_BOUND) -> range:
    return range(lo, hi + 1)


def pairs(total: int = RANK_BOUND) -> Iterator[tuple[int, int]]:
    """Rank pairs ``(r0, r1)`` with ``r0 + r1 <= total`` (T-Prod's result rank)."""
    for r0, r1 in itertools.product(ranks(), ranks()):
        if r0 + r1 <= total:
            yield r0, r1


def instances(schemata: Iterator[Schema]) -> Iterator[Instance]:
    for expr, holes, extra in schemata:
        inst = instantiate(expr, holes, extra)
        if inst is not None:
            yield inst


__all__ = [
    "CEIL", "IS_UNDEF", "UNDEF", "ZERO", "Instance", "Premises", "ProofInterpretation", "UnrolledInterpretation",
    "Update", "hole_shape", "index", "instances", "instantiate", "pairs", "ranks", "run", "select",
    "stmt_instance", "sum_nodes", "within",
]


# --------------------------------------------------------------------------
# Counterexamples a person can read
# --------------------------------------------------------------------------


def show_value(v: z3.ExprRef) -> str:
    """``•`` for undef, the number for ``val(x)``, the integer for an index."""
    if z3.is_int_value(v):
        return str(v.as_long())
    if v.sort() == Value:
        if z3.is_app_of(v, Value.undef.decl().kind()) and v.decl().name() == "undef":
            return "•"
        if v.decl().name() == "val":
            x = v.arg(0)
            if z3.is_rational_value(x) or z3.is_algebraic_value(x):
                return x.as_decimal(6).rstrip("?")
        return "(a sum the model leaves symbolic)"
    text = str(v)
    return text if len(text) <= 40 else text[:37] + "..."


def show(model: z3.ModelRef, items: Sequence[tuple[str, Any]]) -> str:
    parts = []
    for label, term in items:
        if isinstance(term, tuple | list):
            vals = ", ".join(show_value(model.eval(t, model_completion=True)) for t in term)
            parts.append(f"{label} = ({vals})")
        else:
            parts.append(f"{label} = {show_value(model.eval(term, model_completion=True))}")
    return ", ".join(parts)


def realistic(facts: Sequence[z3.BoolRef], pad: Any, m: int = 2) -> z3.BoolRef:
    """A preference for counterexamples: the abstract ``⌈·⌉`` behaves like Definition 7 with M = m."""
    eqs = [pad == m]
    for f in facts:  # each fact is n <= CEIL(M, n)
        n, c = f.arg(0), f.arg(1)
        eqs.append(c == m * ((n + (m - 1)) / m))
    return z3.And(*eqs)


def params_of(inst: Instance) -> list[tuple[str, Any]]:
    return [(p, v) for p, v in inst.shapes.vars.items()]


# --------------------------------------------------------------------------
# Alpha-normal form
# --------------------------------------------------------------------------


def canonical(term: z3.ExprRef, memo: dict | None = None) -> z3.ExprRef:
    """Rename every bound variable after its binding depth.

    Z3 keeps the names of bound variables in its terms, so ``λm. f(m)`` and
    ``λn. f(n)`` are different terms that only extensionality equates; with
    sums nested in sums that reasoning gets out of reach.  Two runs of the
    semantics (the two sides of a law) name their summation variables
    differently; in this form alpha-equivalent terms are one term.  Pass one ``memo`` to put
    several parts of an obligation in this form: they share most subterms."""
    # The memo keeps each input alive: a freed term's id may be reused by another.
    memo = {} if memo is None else memo

    def walk(t: z3.ExprRef, depth: int) -> z3.ExprRef:
        key = (t.get_id(), depth)
        if key in memo:
            return memo[key][1]
        if z3.is_quantifier(t):
            n = t.num_vars()
            consts = [z3.Const(f"β!{depth + i}", t.var_sort(i)) for i in range(n)]
            body = walk(z3.substitute_vars(t.body(), *reversed(consts)), depth + n)
            if t.is_lambda():
                out: z3.ExprRef = z3.Lambda(consts, body)
            elif t.is_forall():
                out = z3.ForAll(consts, body)
            else:
                out = z3.Exists(consts, body)
        elif z3.is_app(t) and t.num_args() > 0:
            kids = [walk(c, depth) for c in t.children()]
            out = t if all(a.eq(b) for a, b in zip(kids, t.children(), strict=True)) else _update(t, kids)
        else:
            out = t
        memo[key] = (t, out)
        return out

    return walk(term, 0)


def _update(t: z3.ExprRef, kids: list[z3.ExprRef]) -> z3.ExprRef:
    """``t`` with new arguments (Z3_update_term: works for every operator, polymorphic ones included)."""
    args = (z3.Ast * len(kids))(*[k.as_ast() for k in kids])
    return z3.z3._to_expr_ref(z3.Z3_update_term(t.ctx_ref(), t.as_ast(), len(kids), args), t.ctx)
