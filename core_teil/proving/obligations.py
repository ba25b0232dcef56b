"""Proof obligations of one program, derived by running ``eval.py`` over Z3 terms.

For every statement ``x = e`` the semantics of :mod:`core_teil.semantics.eval` is run
with a :class:`~core_teil.semantics.symbolic.Z3Interpretation` (a symbolic multi-index
``k``, symbolic shape parameters, an uninterpreted memory) and the records it
leaves -- reads, writes, summations -- become obligations named after the
paper result they instantiate:

============================  =========================================================
``typing``                    paper Lemma 4.1, report section 3.2.1: the typing rules'
                              side conditions hold under the ``assume``s
``reads-in-bounds``           paper Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
``writes-in-domain``          paper Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
``lowering``                  paper section 4.1: ``lower`` preserves the denotation
``padded-store-initial``      report Lemma 4 (rule d-pad-var): the simulation relation
                              holds of the initial stores
``padded-reads-in-bounds``    report Lemma 5 (i), Theorem 2, Corollary 3
``padded-writes-in-domain``   report Theorem 2, Corollary 3
``padding-simulation``        report Lemma 6, Theorem 3, in the form that is true of
                              Core-TeIL (``simulation.py``); one obligation per summation
                              (label ``...-sumJ``: Lemma 6's contraction case, with Lemma
                              5 (ii)), then one for the statement
============================  =========================================================

An obligation is a set of hypotheses and a list of :class:`Case`\\ s, the
disjuncts of its negated goal; it holds exactly when ``hypotheses ∧ (case_1
∨ ...)`` is unsatisfiable.  A case carries what a person needs to read a
counterexample (the node, the allocation, the index and the extents).

An ill-typed program still gets obligations: the side conditions are
collected without being decided (:func:`lenient_check`), so the refuted
``typing`` obligation comes with its counterexample and the reads that
would go out of bounds at those shapes are shown too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import z3

from ..errors import NO_SPAN, Span, TeilTypeError, TeilUnknown
from ..lang.lowering import lower
from ..lang.shapes import ShapeSolver, SideCondition, round_up
from ..lang.syntax import Program, Stmt
from ..lang.typing import Checker, StmtDerivation, TypedProgram, check_program, ok_stmt, s_var
from ..semantics import eval as ev
from ..semantics.symbolic import (
    ABSTRACT_REALS,
    AlignedInterpretation,
    AlignmentError,
    Z3Interpretation,
    function_memory,
    in_bounds,
    z3_round_up,
)

# The lemma each kind of obligation instantiates (paper 000 unless "report", i.e. 001).
TYPING = ("typing", "Lemma 4.1; report 3.2.1")
READS = ("reads-in-bounds", "Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1")
WRITES = ("writes-in-domain", "Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2")
LOWERING = ("lowering", "section 4.1 (translation validation)")
PAD_INIT = ("padded-store-initial", "report Lemma 4 (d-pad-var)")
PAD_READS = ("padded-reads-in-bounds", "report Lemma 5(i), Theorem 2, Corollary 3")
PAD_WRITES = ("padded-writes-in-domain", "report Theorem 2, Corollary 3")
SIMULATION = ("padding-simulation", "report Lemma 6, Theorem 3 (true form)")
SIMULATION_SUM = ("padding-simulation", "report Lemma 6 (contraction case), Lemma 5(ii)")


@dataclass(frozen=True)
class Case:
    """One disjunct of a negated goal, and how to explain a model that satisfies it."""

    condition: z3.BoolRef
    kind: str  # "side-condition" | "read" | "write" | "value" | "rejected"
    span: Span = NO_SPAN
    detail: str = ""
    name: str | None = None  # the allocation read or written
    index: tuple[z3.ArithRef, ...] = ()
    extents: tuple[z3.ArithRef, ...] = ()
    values: tuple[tuple[str, z3.ExprRef], ...] = ()  # labelled value terms to print
    #: For value cases: whether the index lies in the original (unpadded) domain.
    inside: z3.BoolRef | None = None


@dataclass(frozen=True)
class Obligation:
    """``hypotheses ∧ ⋁ cases`` is unsatisfiable exactly when the obligation holds."""

    name: str
    lemma: str
    stmt_no: int | None
    stmt: Stmt | None
    hypotheses: tuple[z3.BoolRef, ...]
    cases: tuple[Case, ...]
    shapes: ShapeSolver
    #: The multi-index and summation variables a counterexample shows, labelled.
    indices: tuple[tuple[str, z3.ArithRef], ...] = ()
    #: For encodings with uninterpreted sums a model of a value case may be spurious:
    #: this re-runs the reference engine on it and says whether it is real.
    confirm: Callable[[z3.ModelRef, dict[str, int]], Any] | None = None
    #: Set when the obligation is decided without a solver (a structural type error).
    verdict: str | None = None
    span: Span = NO_SPAN
    #: Distinguishes several obligations of one kind and statement (e.g. ``sum2``).
    part: str = ""

    def goal(self) -> z3.BoolRef:
        """The negated goal: the disjunction of the cases."""
        return z3.Or(*[c.condition for c in self.cases]) if self.cases else z3.BoolVal(False)

    def assertions(self) -> tuple[z3.BoolRef, ...]:
        return (*self.hypotheses, self.goal())

    @property
    def label(self) -> str:
        base = self.name if self.stmt_no is None else f"{self.name}-stmt{self.stmt_no}"
        return f"{base}-{self.part}" if self.part else base


@dataclass(frozen=True)
class Generated:
    """Everything :func:`generate` found: the obligations, and the typed program if there is one."""

    obligations: tuple[Obligation, ...]
    typed: TypedProgram | None
    well_typed: bool


# --------------------------------------------------------------------------
# Typing (paper Lemma 4.1, report 3.2.1)
# --------------------------------------------------------------------------


class _Collecting(Checker):
    """The type checker with side conditions collected, not decided, so that
    an ill-typed program still has a derivation (and a typed tree to run)."""

    def require(self, lhs: Any, op: Any, rhs: Any, rule: str, span: Span, why: str) -> SideCondition:
        return SideCondition(lhs, op, rhs, rule, span, why)


def lenient_check(program: Program, params: dict[str, int] | None) -> TypedProgram:
    """OK-Prog with every side condition recorded instead of decided.

    Only called after :func:`~core_teil.lang.typing.check_program` failed on a side
    condition, so the declarations themselves are known to be well formed."""
    solver = ShapeSolver(program, params)
    c = _Collecting(program, solver, {})
    seen: dict[str, Span] = {}
    for a in program.allocs:
        s_var(c, a, seen)
    derivations = tuple(ok_stmt(c, s) for s in program.stmts)
    return TypedProgram(program, dict(c.gamma), derivations, solver, c.types)


def side_conditions(sd: StmtDerivation) -> list[SideCondition]:
    """The side conditions of one statement's derivation, innermost first and OK-Stmt's last,
    so that the first one a model violates is the root cause."""
    out: list[SideCondition] = []
    for d in reversed(list(sd.expr.walk())):
        out.extend(d.side)
    return out + list(sd.side)


def side_goal(shapes: ShapeSolver, sc: SideCondition) -> z3.BoolRef:
    lhs, rhs = shapes.term(sc.lhs), shapes.term(sc.rhs)
    return lhs == rhs if sc.op == "==" else lhs <= rhs


def undecided(kind: tuple[str, str], typed: TypedProgram, no: int | None, stmt: Stmt | None,
              reason: str) -> Obligation:
    """An obligation that could not even be stated (reported ``unknown``, with the reason)."""
    case = Case(z3.BoolVal(True), "rejected", stmt.span if stmt else NO_SPAN, reason)
    return Obligation(*kind, no, stmt, (), (case,), typed.solver, verdict="unknown",
                      span=stmt.span if stmt else NO_SPAN)


def typing_obligation(typed: TypedProgram, no: int, sd: StmtDerivation) -> Obligation:
    """Lemma 4.1 for one statement: every side condition holds for all allowed parameters."""
    shapes = typed.solver
    cases = tuple(Case(z3.Not(side_goal(shapes, sc)), "side-condition", sc.span,
                       f"{sc.rule}: {sc} ({sc.why})") for sc in side_conditions(sd))
    return Obligation(*TYPING, no, sd.stmt, tuple(shapes.hypotheses()), cases, shapes, span=sd.stmt.span)


def rejected(program: Program, params: dict[str, int] | None, err: TeilTypeError) -> Obligation:
    """A structural type error (undeclared name, rank mismatch, ...): refuted without a solver."""
    no, stmt = None, None
    for i, s in enumerate(program.stmts, 1):
        if s.span.known and err.span.known and s.span.line == err.span.line:
            no, stmt = i, s
    case = Case(z3.BoolVal(True), "rejected", err.span, f"{err.rule or 'typing'}: {err.message}")
    shapes = ShapeSolver(program, params)
    return Obligation(*TYPING, no, stmt, (), (case,), shapes, verdict="refuted", span=err.span)


# --------------------------------------------------------------------------
# Well-definedness and progress (paper Lemmas 4.3, 4.5; report Lemma 2, Theorem 1)
# --------------------------------------------------------------------------


def store_extents(typed: TypedProgram, x: str) -> tuple[z3.ArithRef, ...]:
    return tuple(typed.solver.term(d) for d in typed.gamma[x])


@dataclass
class PaddedExtents:
    """``⌈d⌉ = M·q`` with ``M(q-1) < d <= M·q`` (report Definition 7): a fresh ``q`` per
    symbolic parameter, defined by hypotheses.  The store's padded extents (what reads and
    writes are checked against) and eval.py's rounding (``Sem.bound`` through
    :meth:`ceil`) both use it; floor division would make every proof reason about ``div``."""

    typed: TypedProgram
    pad: int
    hyps: list[z3.BoolRef] = field(default_factory=list)
    _q: dict[str, z3.ArithRef] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for p, v in self.shapes.vars.items():  # every definition known before any obligation
            if p not in self.shapes.values:
                q = self._q[v.decl().name()] = z3.Int(f"{p}!q{self.pad}")
                self.hyps += [self.pad * (q - 1) < v, v <= self.pad * q]

    @property
    def shapes(self) -> ShapeSolver:
        return self.typed.solver

    def ceil(self, n: z3.ArithRef, pad: int) -> z3.ArithRef:
        """``⌈n⌉`` for an extent term (the interpretation's ``ceil``)."""
        if pad == self.pad and z3.is_int_value(n):
            return z3.IntVal(round_up(n.as_long(), pad))
        if pad == self.pad and z3.is_const(n) and n.decl().name() in self._q:
            return pad * self._q[n.decl().name()]
        return z3_round_up(n, pad)  # any other term

    def term(self, d: Any) -> z3.ArithRef:
        return self.ceil(self.shapes.term(d), self.pad)

    def of(self, x: str) -> tuple[z3.ArithRef, ...]:
        return tuple(self.term(d) for d in self.typed.gamma[x])


def run_statement(typed: TypedProgram, stmt: Stmt, interp: Z3Interpretation, store: dict[str, Any],
                  pad: int | None) -> None:
    """St-Stmt of eval.py, once, with a Z3 interpretation (which records what happened).

    Looked up in the module at each call: a changed (or mutated) ``eval.st_stmt`` is what runs."""
    ev.st_stmt(stmt, ev.Sem(typed, interp, store, pad))


def index_labels(interp: Z3Interpretation) -> tuple[tuple[str, z3.ArithRef], ...]:
    w = interp.writes[-1]
    out = [(f"k{j}", k) for j, k in enumerate(w.index, 1)]
    out += [(f"m{j}", m) for j, (m, _) in enumerate(interp.sum_vars, 1)]
    return tuple(out)


def reads_obligation(typed: TypedProgram, no: int, stmt: Stmt, interp: Z3Interpretation,
                     extents: Callable[[str], tuple[z3.ArithRef, ...]], hyps: list[z3.BoolRef],
                     kind: tuple[str, str]) -> Obligation:
    """Every read ``μ(x)(i)`` made under its path is within the store's extents of ``x``."""
    cases = []
    for r in interp.reads:
        if not r.index:
            continue  # a scalar has exactly one index, ()
        ext = extents(r.name)
        inside = in_bounds(r.index, ext) if len(ext) == len(r.index) else z3.BoolVal(False)
        cases.append(Case(z3.And(*r.path, z3.Not(inside)), "read", r.node.span,
                          f"read of {r.name}", r.name, r.index, ext))
    return Obligation(*kind, no, stmt, tuple(hyps), tuple(cases), typed.solver,
                      index_labels(interp), span=stmt.span)


def writes_obligation(typed: TypedProgram, no: int, stmt: Stmt, interp: Z3Interpretation,
                      extents: Callable[[str], tuple[z3.ArithRef, ...]], hyps: list[z3.BoolRef],
                      kind: tuple[str, str]) -> Obligation:
    """St-Stmt writes exactly the store's domain of ``x``: in bounds, and the domain is preserved."""
    w = interp.writes[-1]
    ext = extents(w.name)
    if len(ext) != len(w.bounds):
        cond: z3.BoolRef = z3.BoolVal(True)
    else:
        cond = z3.Xor(in_bounds(w.index, w.bounds), in_bounds(w.index, ext))
    case = Case(cond, "write", stmt.span, f"write of {w.name}", w.name, w.index, ext)
    return Obligation(*kind, no, stmt, tuple(hyps), (case,), typed.solver,
                      tuple((f"k{j}", k) for j, k in enumerate(w.index, 1)), span=stmt.span)


# --------------------------------------------------------------------------
# Translation validation of the lowering (paper section 4.1)
# --------------------------------------------------------------------------


def congruence_instance(s: Any, t: Any) -> z3.BoolRef:
    """A ground instance of the sum congruence lemma, the shared summation variable as witness:
    ``n = n' ∧ (∀m ∈ [1, n]. h(m) = h'(m)) → Σ_{1..n} h = Σ_{1..n'} h'``."""
    m = s.var
    return z3.Implies(z3.And(s.bound == t.bound, z3.Implies(z3.And(m >= 1, m <= s.bound), s.body == t.body)),
                      s.term == t.term)


def lowering_obligation(typed: TypedProgram, lowered: TypedProgram, no: int, stmt: Stmt,
                        lead: Z3Interpretation, mu: dict[str, Any], hyps: list[z3.BoolRef]) -> Obligation:
    """``[[lower e]](k) = [[e]](k)`` for every ``k <= Γ(x)``, in the same memory."""
    from .replay import confirm_lowering

    low = AlignedInterpretation(typed.solver, prefix="low", abstract_sums=True, leader=lead, reals=ABSTRACT_REALS)
    low_stmt = lowered.program.stmts[no - 1]
    try:
        run_statement(lowered, low_stmt, low, mu, None)
    except AlignmentError as err:
        return undecided(LOWERING, typed, no, stmt, f"the lowered statement sums differently: {err}")
    pairs = {s.var.get_id(): s for s in lead.sums}
    instances = [congruence_instance(pairs[t.var.get_id()], t) for t in low.sums if t.var.get_id() in pairs]
    w, lw = lead.writes[-1], low.writes[-1]
    ext = store_extents(typed, w.name)
    # The lowered statement must itself read in bounds (Lemma 4.3 for the Core form) ...
    reads = reads_obligation(typed, no, stmt, low, lambda x: store_extents(typed, x), hyps, LOWERING).cases
    reads = tuple(replace(c, detail=f"the lowered statement's {c.detail}") for c in reads)
    # ... and compute the same value at every k <= Γ(x).
    cond = z3.And(in_bounds(w.index, ext), w.value != lw.value)
    case = Case(cond, "value", stmt.span, f"the lowered statement computes another value of {w.name}",
                w.name, w.index, ext, (("original", w.value), ("lowered", lw.value)), z3.BoolVal(True))
    labels = (*((f"k{j}", k) for j, k in enumerate(w.index, 1)),
              *((f"m{j}", m) for j, (m, _) in enumerate(low.sum_vars, 1)))
    return Obligation(*LOWERING, no, stmt, (*hyps, *instances), (*reads, case), typed.solver, labels,
                      confirm=confirm_lowering(typed, lowered, no, mu), span=stmt.span)


# --------------------------------------------------------------------------
# All obligations of a program
# --------------------------------------------------------------------------


def type_program(program: Program, params: dict[str, int] | None) -> tuple[TypedProgram | None, bool,
                                                                          Obligation | None]:
    """The typed program (leniently typed if a side condition fails), whether it is well typed,
    and the refuted obligation of a structural type error."""
    try:
        return check_program(program, params), True, None
    except TeilTypeError as err:
        if err.counterexample is None:
            return None, False, rejected(program, params, err)
    except TeilUnknown:
        pass
    try:
        return lenient_check(program, params), False, None
    except TeilTypeError as err:
        return None, False, rejected(program, params, err)


def generate(program: Program, params: dict[str, int] | None = None, pad: int | None = None) -> Generated:
    """Every obligation of ``program`` (with ``pad``: also the padding ones), in statement order."""
    from .simulation import initial_obligation

    typed, well_typed, structural = type_program(program, params)
    if typed is None:
        return Generated((structural,) if structural else (), None, False)
    obs: list[Obligation] = [typing_obligation(typed, i, sd) for i, sd in enumerate(typed.derivations, 1)
                             if side_conditions(sd)]
    if structural is not None:
        obs.append(structural)
    hyps = typed.solver.hypotheses()
    lowered = lower_typed(typed) if well_typed and program.dialect == "full" else None
    padded = PaddedExtents(typed, pad) if pad is not None else None
    if padded is not None and well_typed:
        obs.append(initial_obligation(typed, padded))
    for no, stmt in enumerate(program.stmts, 1):
        obs += statement_obligations(typed, no, stmt, hyps, lowered, padded, well_typed)
    return Generated(tuple(obs), typed, well_typed)


def lower_typed(typed: TypedProgram) -> TypedProgram | Exception:
    try:
        return check_program(lower(typed.program), typed.params or None)
    except TeilTypeError as err:
        return err


def statement_obligations(typed: TypedProgram, no: int, stmt: Stmt, hyps: list[z3.BoolRef],
                          lowered: TypedProgram | Exception | None, padded: PaddedExtents | None,
                          well_typed: bool) -> list[Obligation]:
    """The obligations of statement ``no``: unpadded safety, lowering, then the padded ones."""
    try:
        return _statement_obligations(typed, no, stmt, hyps, lowered, padded, well_typed)
    except (AlignmentError, ArithmeticError, AttributeError, IndexError, KeyError, TypeError,
            ValueError, z3.Z3Exception) as err:
        # Only a broken (e.g. mutated) semantics gets stuck on a typed statement: say so.
        return [undecided(READS, typed, no, stmt, f"the semantics is stuck: {type(err).__name__}: {err}")]


def _statement_obligations(typed: TypedProgram, no: int, stmt: Stmt, hyps: list[z3.BoolRef],
                           lowered: TypedProgram | Exception | None, padded: PaddedExtents | None,
                           well_typed: bool) -> list[Obligation]:
    from .simulation import simulation_obligations

    mu = function_memory(typed.gamma, "mu")
    lead = Z3Interpretation(typed.solver, abstract_sums=True, reals=ABSTRACT_REALS)
    run_statement(typed, stmt, lead, mu, None)
    ext = lambda x: store_extents(typed, x)  # noqa: E731
    obs = [reads_obligation(typed, no, stmt, lead, ext, hyps, READS),
           writes_obligation(typed, no, stmt, lead, ext, hyps, WRITES)]
    if isinstance(lowered, TypedProgram):
        obs.append(lowering_obligation(typed, lowered, no, stmt, lead, mu, hyps))
    elif isinstance(lowered, Exception):
        case = Case(z3.BoolVal(True), "rejected", stmt.span, f"the lowered program is ill-typed: {lowered}")
        obs.append(Obligation(*LOWERING, no, stmt, (), (case,), typed.solver, verdict="refuted",
                              span=stmt.span))
    if padded is None or not well_typed:
        return obs
    pmu = function_memory(typed.gamma, "pmu")
    plead = Z3Interpretation(typed.solver, abstract_sums=True, ceiling=padded.ceil, reals=ABSTRACT_REALS)
    run_statement(typed, stmt, plead, pmu, padded.pad)
    pext = padded.of
    phyps = [*hyps, *padded.hyps]
    obs += [reads_obligation(typed, no, stmt, plead, pext, phyps, PAD_READS),
            writes_obligation(typed, no, stmt, plead, pext, phyps, PAD_WRITES)]
    obs += simulation_obligations(typed, no, stmt, plead, pmu, mu, padded)
    return obs


__all__ = [
    "LOWERING", "PAD_INIT", "PAD_READS", "PAD_WRITES", "READS", "SIMULATION", "SIMULATION_SUM", "TYPING", "WRITES",
    "Case", "Generated", "Obligation", "PaddedExtents", "generate", "lenient_check",
]
