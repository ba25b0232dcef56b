"""Well-definedness for every rank: paper Lemma 4.3's steps over shapes of unknown length.

:mod:`proofs.safety` checks each step of Lemma 4.3 (TensorIR
``sem_eval_well_defined_*``) on holes of every rank up to ``RANK_BOUND``.
Here the same steps are proved once for all ranks, as the Coq development
does: a hole ``X`` has the shape ``T = (T[0], ..., T[L-1])`` with ``L`` a Z3
integer (:class:`core_teil.semantics.sequences.Seq`), transp's position ``i``, expa's
``d`` and proj's ``m`` are symbolic too.  Nothing is restated: typing.py's rule
computes the node's type (recording its premises, such as ``L >= 1`` for red
or ``1 <= i <= L-1`` for transp), and eval.py's equation runs on a
multi-index ``k`` of that type, with :class:`GenericInterpretation` recording
every read.  Each read must be inside its allocation's domain: same length,
and ``1 <= index[j] <= T[j]`` at every position.

A schema is split only where the rules themselves are: T-Elem for operands of
rank 0 (a concrete instance) and of rank >= 1 (the scalar test of T-SMul must
have an answer), T-SMul and T-SDiv for a tensor operand of rank >= 1.  An
equation that needs a concrete rank (``len``, iterating ``k``, a comparison
with a fixed position) cannot run on a ``Seq`` and fails the lemma, so a
change to eval.py that behaves differently from rank 7 on is refuted or
stuck here, never proved.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import z3

from core_teil.errors import TeilError
from core_teil.lang import typing as ty
from core_teil.lang.shapes import Decision, Verdict
from core_teil.lang.syntax import ELEM_OPS, Contr, Diag, Elem, Expa, Expr, Prod, Program, Proj, Red, Stmt, Transp, Var
from core_teil.semantics import eval as ev
from core_teil.semantics import symbolic as sym
from core_teil.semantics.sequences import RankUndecided, Seq, as_seq

from .kernel import EVERY_RANK, Lemma, Obligation, case_of
from .padding import M
from .safety import Logic, spec_rules
from .schema import CEIL

_fresh = itertools.count()


# --------------------------------------------------------------------------
# Typing over symbolic shapes: every side condition becomes a premise
# --------------------------------------------------------------------------


@dataclass
class GenericPremises:
    """The shape oracle of a rank-generic schema: it assumes each side condition the
    checker asks about (extent equalities and, new here, rank and position bounds)."""

    assumed: list[z3.BoolRef] = field(default_factory=list)
    vars: dict[str, z3.ArithRef] = field(default_factory=dict)
    values: dict[str, int] = field(default_factory=dict)

    def term(self, d: Any) -> z3.ArithRef:
        return z3.IntVal(d) if isinstance(d, int) else d

    def concrete(self, d: Any) -> int | None:
        return d if isinstance(d, int) else None

    def decide(self, lhs: Any, op: str, rhs: Any) -> Decision:
        if isinstance(lhs, Seq | tuple) and isinstance(rhs, Seq | tuple) and op == "==":
            self.assumed.append(as_seq(lhs).equals(as_seq(rhs)))  # OK-Stmt's Γ(x) = t, for a rank unknown
            return Decision(Verdict.HOLDS)
        a, b = self.term(lhs), self.term(rhs)
        self.assumed.append(a == b if op == "==" else a <= b)
        return Decision(Verdict.HOLDS)


# --------------------------------------------------------------------------
# The interpretation: indices are Seqs, reads are recorded
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Read:
    name: str
    index: Seq
    path: tuple[z3.BoolRef, ...]


@dataclass(frozen=True)
class Write:
    """St-Stmt's ``μ{x ↦ λk. v}``; ``domain`` is the premise ``k <= bounds`` it was made under."""

    name: str
    index: Seq
    bounds: Seq
    value: z3.ExprRef
    domain: z3.BoolRef


@dataclass(frozen=True)
class Initial:
    """``μ(x)`` before any statement: an uninterpreted function of the multi-index."""

    name: str

    def at(self, k: Seq) -> z3.ExprRef:
        f = z3.Function(f"μ({self.name})", z3.ArraySort(z3.IntSort(), z3.IntSort()), z3.IntSort(), sym.Value)
        return f(k.arr, k.length)


@dataclass(frozen=True)
class Written:
    """``λk. v`` after St-Stmt: read at ``k'`` by substituting ``k'`` for ``k``."""

    index: Seq
    value: z3.ExprRef

    def at(self, k: Seq) -> z3.ExprRef:
        return z3.substitute(self.value, (self.index.arr, k.arr), (self.index.length, k.length))


@dataclass
class GenericInterpretation:
    """eval.Interpretation over multi-indices of unknown length; memories are :class:`Initial`
    or :class:`Written`, values terms of ``symbolic.Value``."""

    reads: list[Read] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    path: list[z3.BoolRef] = field(default_factory=list)

    def extent(self, d: Any) -> z3.ArithRef:
        return z3.IntVal(d) if isinstance(d, int) else d

    def ceil(self, n: Any, pad: Any) -> Any:
        """``⌈n⌉`` for the symbolic vector length ``M``: the abstract ``CEIL`` of the padding
        proofs, characterised by :data:`CEIL_AXIOM` (Definition 7 proves it of symbolic.py)."""
        return CEIL(pad, n)

    def read(self, store: Any, x: str, k: Any, node: Var) -> z3.ExprRef:
        k = as_seq(k)
        self.reads.append(Read(x, k, tuple(self.path)))
        return store[x].at(k)

    def arith(self, op: str, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
        return sym.arith(op, a, b)  # type: ignore[arg-type]

    def sum(self, n: Any, body: Callable[[Any], z3.ExprRef], node: Expr) -> z3.ExprRef:
        m = self.summation_variable()
        self.path.append(z3.And(m >= 1, m <= n))
        try:
            v = body(m)
        finally:
            self.path.pop()
        term = sym.SUM(z3.Lambda([m], v), n)
        self.summed(m, v, term)
        return term

    def summation_variable(self) -> z3.ArithRef:
        return z3.Int(f"m!{next(_fresh)}")

    def summed(self, m: z3.ArithRef, body: z3.ExprRef, term: z3.ExprRef) -> None:
        """Told of every Σ built (its variable, body and term); a subclass records them."""

    def guard(self, j: Any, d: Any, v: z3.ExprRef) -> z3.ExprRef:
        # A whole multi-index (eval.guard_each on a Seq): every position at once.
        return z3.If(j.below(d) if isinstance(j, Seq) else j <= d, v, sym.ZERO)

    def clamp(self, j: Any, d: Any) -> z3.ArithRef:
        return z3.If(j <= d, j, d)

    def domain(self, bounds: Any, stmt: Any) -> Seq:
        k = Seq.fresh(f"k{next(_fresh)}")
        self.path.append(k.within(as_seq(bounds)))
        return k

    def update(self, store: Any, x: str, k: Any, v: z3.ExprRef, bounds: Any) -> dict[str, Any]:
        # The domain premise was this statement's; it must not leak into the next one.
        domain = self.path.pop()
        self.writes.append(Write(x, k, as_seq(bounds), v, domain))
        return {**store, x: Written(k, v)}


# --------------------------------------------------------------------------
# Schemata: one per rule, for every rank at once
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Generic:
    """An expression over holes, with each hole's shape (a Seq, or a concrete tuple)."""

    label: str
    expr: Expr
    holes: dict[str, Seq | tuple]

    @property
    def case(self) -> str:
        return case_of(self.expr)


def positive(t: Seq | tuple) -> list[z3.BoolRef]:
    """Extents are >= 1; a length is >= 0 (>= 1 where the schema says so)."""
    if isinstance(t, tuple):
        return [z3.IntVal(1) <= (z3.IntVal(d) if isinstance(d, int) else d) for d in t]
    j = z3.Int("j!pos")  # bound: a fixed name keeps an obligation the same term whatever was built before
    return [t.length >= (1 if t.nonempty else 0),
            z3.ForAll([j], z3.Implies(z3.And(j >= 0, j < t.length), t.arr[j] >= 1))]


def generic_schemata(case: str) -> Iterator[Generic]:
    X, Y, S = Var("X"), Var("Y"), Var("S")
    T = Seq.fresh("T")
    if case == "Var":
        yield Generic("X : T", X, {"X": T})
    elif case.startswith("Elem."):
        op = case.split(".")[1]
        yield Generic(f"{op} X Y, X Y : []", Elem(op, X, Y), {"X": (), "Y": ()})
        Tn = Seq.fresh("T", nonempty=True)
        yield Generic(f"{op} X Y, X Y : T (rank >= 1)", Elem(op, X, Y), {"X": Tn, "Y": Tn})
    elif case == "SMul":
        yield Generic("mul S X, S : [], X : T (rank >= 1)", Elem("mul", S, X),
                      {"S": (), "X": Seq.fresh("T", nonempty=True)})
    elif case == "SDiv":
        yield Generic("div X S, X : T (rank >= 1), S : []", Elem("div", X, S),
                      {"X": Seq.fresh("T", nonempty=True), "S": ()})
    elif case == "Prod":
        yield Generic("prod X Y, X : T, Y : U", Prod(X, Y), {"X": T, "Y": Seq.fresh("U")})
    elif case in ("Red", "Contr", "Diag"):
        ctor = {"Red": Red, "Contr": Contr, "Diag": Diag}[case]
        yield Generic(f"{case.lower()} X, X : T", ctor(X), {"X": T})
    elif case == "Transp":
        yield Generic("transp i X, X : T", Transp(z3.Int("i"), X), {"X": T})  # type: ignore[arg-type]
    elif case == "Expa":
        yield Generic("expa d X, X : T", Expa(z3.Int("d"), X), {"X": T})  # type: ignore[arg-type]
    elif case == "Proj":
        yield Generic("proj m X, X : T", Proj(z3.Int("m"), X), {"X": T})  # type: ignore[arg-type]
    else:
        raise ValueError(f"no rank-generic schema for case {case!r}")


#: The one property of ``⌈·⌉`` the padded reads use: ``n <= ⌈n⌉`` (report Definition 7; the
#: lemma ``Definition 7`` proves it of ``symbolic.py``'s rounding for every ``M``).
def ceil_property(ceil: Callable[[Any, Any], Any], n: z3.ArithRef) -> z3.BoolRef:
    return z3.Implies(n >= 1, n <= ceil(M, n))


_n = z3.Int("n")
CEIL_AXIOM = z3.ForAll([_n], ceil_property(CEIL, _n))


def ceil_axiom_obligations() -> Iterator[Obligation]:
    """The axiom assumed of the abstract ``CEIL`` holds of the rounding the engines run
    (``symbolic.py``'s ``ceil``, which Definition 7 characterises) for every ``M``."""
    n = z3.Int("n")
    rounding = sym.Z3Interpretation.ceil
    yield Obligation("n >= 1 ⟹ n <= ⌈n⌉ (symbolic.py)", (M >= 1,),
                     z3.Not(ceil_property(lambda m, x: rounding(None, x, m), n)))  # type: ignore[arg-type]


def padding(pad: Any) -> list[z3.BoolRef]:
    return [] if pad is None else [pad >= 1, CEIL_AXIOM]


@dataclass(frozen=True)
class TypedSchema:
    """A schema typed by typing.py's rules, every side condition recorded in ``oracle``."""

    derivation: ty.Derivation
    typed: ty.TypedProgram
    oracle: GenericPremises


def type_schema(g: Generic) -> TypedSchema | Obligation:
    """typing.py's derivation of the schema, or the failing obligation if it cannot type it."""
    program = Program("core", (), ())
    oracle = GenericPremises()
    checker = ty.Checker(program, oracle, dict(g.holes))  # type: ignore[arg-type]
    try:
        d = checker.infer(g.expr)
    except (TeilError, RankUndecided, z3.Z3Exception) as exc:
        return Obligation(f"{g.label}: typable", (), z3.BoolVal(True),
                          lambda m, exc=exc: f"{g.label}: typing.py cannot type the schema: {exc}", case=g.case)
    typed = ty.TypedProgram(program, dict(g.holes), (), oracle, checker.types)  # type: ignore[arg-type]
    return TypedSchema(d, typed, oracle)


def wd_generic_obligations(g: Generic, pad: Any = None) -> Iterator[Obligation]:
    """For ``k`` of the node's type (every rank), each read eval.py makes is in its domain;
    padded (``pad = M``): ``k`` of the rounded type, reads in the padded store ``⌈Γ⌉``."""
    ts = type_schema(g)
    if isinstance(ts, Obligation):
        yield ts
        return
    d, typed, oracle = ts.derivation, ts.typed, ts.oracle
    interp = GenericInterpretation()
    sem = ev.Sem(typed, interp, {x: Initial(x) for x in g.holes}, pad)
    t = as_seq(sem.bounds(d.shape))
    k = Seq.fresh("k")
    padded = "" if pad is None else ", padded"
    try:
        ev.denote(g.expr, k, sem)
    except (RankUndecided, z3.Z3Exception, TypeError) as exc:
        yield Obligation(f"{g.label}: eval.py runs at every rank", (), z3.BoolVal(True),
                         lambda m, exc=exc: f"{g.label}: the equation needs a concrete rank: {exc}", case=g.case)
        return
    hyps = [*(h for s in g.holes.values() for h in positive(s)), *oracle.assumed, *padding(pad), k.within(t)]
    if not interp.reads:
        yield Obligation(f"{g.label}: reads its argument", (), z3.BoolVal(True),
                         lambda m: f"{g.label}: the equation reads nothing", case=g.case)
    for n, rd in enumerate(interp.reads):
        dom = as_seq(sem.bounds(g.holes[rd.name]))
        yield Obligation(f"{g.label}: read #{n + 1} of {rd.name} in bounds (all ranks{padded})", hyps,
                         z3.And(*rd.path, rd.index.outside(dom)),
                         lambda m, rd=rd, dom=dom: f"{g.label}: reads {rd.name} outside its domain "
                         f"(rank {m.eval(dom.length, model_completion=True)})", case=g.case)


# --------------------------------------------------------------------------
# Lemma 4.1 for every rank: typing.py derives what SPEC.md section 3 derives
# --------------------------------------------------------------------------


#: :func:`proofs.safety.spec_rules`, the one rule table, read over shapes of unknown rank.
SEQ_LOGIC = Logic(lambda a, b: a == b, lambda a, b: a <= b, lambda *xs: z3.And(*xs) if xs else z3.BoolVal(True),
                  z3.BoolVal(True), lambda s, u: s.equals(u))


def rule_schemata(case: str) -> Iterator[Generic]:
    """The instances of one rule over holes of unknown rank; T-Elem's operands also at rank 0
    (each of {0, >= 1} for each operand), where the checker's scalar test must be answered."""
    X, Y = Var("X"), Var("Y")
    if case.startswith("T-Elem"):
        for op in ELEM_OPS:
            for t0, t1 in itertools.product(((), "T"), ((), "U")):
                holes = {"X": t0 if t0 == () else Seq.fresh(t0, nonempty=True),
                         "Y": t1 if t1 == () else Seq.fresh(t1, nonempty=True)}
                yield Generic(f"{op} X Y, X : {_rank(t0)}, Y : {_rank(t1)}", Elem(op, X, Y), holes)
    elif case == "T-Var":
        yield from generic_schemata("Var")
    else:
        yield from generic_schemata(case[2:])


def _rank(t: Any) -> str:
    return "[]" if t == () else f"{t} (rank >= 1)"


def typing_rule_generic_obligations(case: str) -> Iterator[Obligation]:
    for g in rule_schemata(case):
        oracle = GenericPremises()
        checker = ty.Checker(Program("core", (), ()), oracle, dict(g.holes))  # type: ignore[arg-type]
        try:
            d = checker.infer(g.expr)
        except (TeilError, RankUndecided, z3.Z3Exception) as exc:
            yield Obligation(f"{g.label}: the checker answers", (), z3.BoolVal(True),
                             lambda m, g=g, exc=exc: f"{g.label}: typing.py fails on the schema: {exc}",
                             case=g.case)
            continue
        ts = [as_seq(g.holes[c.name]) for c in g.expr.children()] if g.expr.children() \
            else [as_seq(g.holes[g.expr.name])]  # type: ignore[attr-defined]
        args = {a: getattr(g.expr, a) for a in ("i", "d", "m") if hasattr(g.expr, a)}
        alts = ([("T-Var", z3.BoolVal(True), ts[0])] if isinstance(g.expr, Var)
                else spec_rules(g.expr, ts, args, SEQ_LOGIC))
        params = [h for t in g.holes.values() for h in positive(t)]
        side = z3.And(*oracle.assumed)
        got = as_seq(d.shape)
        some = z3.Or(*[z3.And(prem, t.equals(got)) for _, prem, t in alts])
        yield Obligation(f"{g.label}: checker ⟹ rules ({d.rule}, all ranks)", params, z3.And(side, z3.Not(some)),
                         lambda m, g=g, d=d: f"{g.label}: the checker concludes {d.rule} but no rule of SPEC.md "
                         "derives it", case=g.case)
        for rule, prem, t in alts:
            yield Obligation(f"{g.label}: {rule} ⟹ checker (all ranks)", params,
                             z3.And(prem, z3.Not(z3.And(side, t.equals(got)))),
                             lambda m, g=g, rule=rule: f"{g.label}: {rule} applies but the checker demands more "
                             "or concludes otherwise", case=g.case)
        for (r1, p1, t1), (r2, p2, t2) in itertools.combinations(alts, 2):
            yield Obligation(f"{g.label}: {r1}, {r2} agree (uniqueness, all ranks)", params,
                             z3.And(p1, p2, z3.Not(t1.equals(t2))), case=g.case)


#: Lemma 4.1's cases (``proofs.safety.RULE_CASES``) and the induction cases each covers.
GENERIC_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("T-Var", ("Var",)),
    ("T-Elem", tuple(f"Elem.{op}" for op in ELEM_OPS)),
    ("T-Prod", ("Prod",)),
    ("T-Red", ("Red",)),
    ("T-Contr", ("Contr",)),
    ("T-Diag", ("Diag",)),
    ("T-Transp", ("Transp",)),
    ("T-Expa", ("Expa",)),
    ("T-Proj", ("Proj",)),
)


# --------------------------------------------------------------------------
# OK-Stmt, St-Stmt (Lemma 4.5) and St-Seq, for every rank
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class GenericStmt:
    label: str
    stmts: tuple[Stmt, ...]
    holes: dict[str, Seq | tuple]


def stmt_schemata() -> Iterator[GenericStmt]:
    """Statements whose target is read (St-Stmt's pre-state), transposed onto itself, or reduced
    into; each over shapes of unknown rank (rank 0 separately where T-Elem asks ``t == ()``)."""
    X, Y, H = Var("X"), Var("Y"), Var("H")
    for label, T in (("[]", ()), ("T (rank >= 1)", Seq.fresh("T", nonempty=True))):
        yield GenericStmt(f"X = H, X H : {label}", (Stmt("X", H),), {"X": T, "H": T})
        yield GenericStmt(f"X = add X H, X H : {label}", (Stmt("X", Elem("add", X, H)),), {"X": T, "H": T})
    yield GenericStmt("X = H, X : T, H : U", (Stmt("X", H),), {"X": Seq.fresh("T"), "H": Seq.fresh("U")})
    yield GenericStmt("X = transp i X, X : T", (Stmt("X", Transp(z3.Int("i"), X)),),  # type: ignore[arg-type]
                      {"X": Seq.fresh("T")})
    yield GenericStmt("X = red Y, X : T, Y : U", (Stmt("X", Red(Y)),), {"X": Seq.fresh("T"), "Y": Seq.fresh("U")})


def typed_stmts(g: GenericStmt) -> tuple[ty.TypedProgram, GenericPremises]:
    program = Program("core", (), g.stmts)
    oracle = GenericPremises()
    checker = ty.Checker(program, oracle, dict(g.holes))  # type: ignore[arg-type]
    derivs = tuple(ty.ok_stmt(checker, st) for st in g.stmts)
    return ty.TypedProgram(program, dict(g.holes), derivs, oracle, checker.types), oracle  # type: ignore[arg-type]


def _context(g: GenericStmt, oracle: GenericPremises) -> list[z3.BoolRef]:
    return [*(h for t in g.holes.values() for h in positive(t)), *oracle.assumed]


def ok_stmt_generic_obligations() -> Iterator[Obligation]:
    """OK-Stmt inversion: ``x = e ok`` implies ``Γ(x) = type(e)``, at every rank."""
    for g in stmt_schemata():
        try:
            typed, oracle = typed_stmts(g)
        except (TeilError, RankUndecided, z3.Z3Exception) as exc:
            yield Obligation(f"{g.label}: ok", (), z3.BoolVal(True),
                             lambda m, g=g, exc=exc: f"{g.label}: OK-Stmt rejected it: {exc}")
            continue
        for sd in typed.derivations:
            yield Obligation(f"{g.label}: Γ({sd.stmt.target}) = type(e) (all ranks)", _context(g, oracle),
                             z3.Not(as_seq(sd.declared).equals(as_seq(sd.expr.shape))),
                             lambda m, g=g: f"{g.label}: OK-Stmt accepted a statement whose shapes differ")


def st_stmt_generic_obligations(pad: Any = None) -> Iterator[Obligation]:
    """Lemma 4.5 at every rank: St-Stmt writes exactly ``dom(μ x)``, reads in bounds in the
    memory before the statement, and keeps every other allocation.  Padded (``pad = M``):
    the domain is ``⌈Γ(x)⌉`` as ``Sem.bounds`` computes it (report Fig. 14, ev-pad-stmt)."""
    padded = "" if pad is None else ", padded"
    for g in stmt_schemata():
        (stmt,) = g.stmts
        try:
            typed, oracle = typed_stmts(g)
            interp = GenericInterpretation()
            mu = {x: Initial(x) for x in g.holes}
            sem = ev.Sem(typed, interp, mu, pad)
            new = ev.st_stmt(stmt, sem)
        except (TeilError, RankUndecided, z3.Z3Exception, TypeError) as exc:
            yield Obligation(f"{g.label}: St-Stmt runs", (), z3.BoolVal(True),
                             lambda m, g=g, exc=exc: f"{g.label}: St-Stmt needs a concrete rank: {exc}")
            continue
        hyps = [*_context(g, oracle), *padding(pad)]
        writes = interp.writes
        ok = len(writes) == 1 and writes[0].name == stmt.target and set(new) == set(mu)
        yield Obligation(f"{g.label}: one update, of {stmt.target}; names kept", (), z3.BoolVal(not ok),
                         lambda m, w=writes: f"St-Stmt made updates {[x.name for x in w]}")
        if not ok:
            continue
        w = writes[0]
        k, dom = w.index, as_seq(sem.bounds(g.holes[stmt.target]))
        yield Obligation(f"{g.label}: writes only inside dom(μ {stmt.target}) (all ranks{padded})", hyps,
                         z3.And(w.domain, k.outside(dom)), lambda m, g=g: f"{g.label}: writes outside the domain")
        yield Obligation(f"{g.label}: writes all of dom(μ {stmt.target}) (all ranks{padded})", hyps,
                         z3.And(k.within(dom), z3.Not(w.domain)), lambda m, g=g: f"{g.label}: misses part of it")
        for n, rd in enumerate(interp.reads):
            yield Obligation(f"{g.label}: read #{n + 1} of {rd.name} in bounds (all ranks{padded})", hyps,
                             z3.And(*rd.path, rd.index.outside(as_seq(sem.bounds(g.holes[rd.name])))),
                             lambda m, g=g, rd=rd: f"{g.label}: reads {rd.name} outside its domain")
        # The value written at k is [[e]](k) in the memory *before* the statement.
        expect = ev.denote(stmt.expr, k, ev.Sem(typed, GenericInterpretation(), mu, pad))
        yield Obligation(f"{g.label}: μ'({stmt.target})(k) = [[e]] μ k (all ranks{padded})", hyps,
                         z3.And(w.domain, new[stmt.target].at(k) != expect),
                         lambda m, g=g: f"{g.label}: the value written is not [[e]] in the pre-state")
        for y in mu:
            if y != stmt.target:
                yield Obligation(f"{g.label}: μ'({y}) = μ({y})", (), z3.BoolVal(new[y] is not mu[y]),
                                 lambda m, g=g, y=y: f"{g.label}: St-Stmt changed {y}")


#: St-Seq is checked on programs of 0..ST_SEQ_LENGTH statements (a bound on the program's length,
#: not on ranks: ``eval_prog`` is a loop over a Python list, which has no symbolic length).
ST_SEQ_LENGTH = 16


def st_seq_generic_obligations() -> Iterator[Obligation]:
    """St-Seq / Eval-Prog: ``eval_prog`` runs the statements in order, at every rank.

    Each statement of the cycle changes the memory the next one reads, so running
    fewer statements, or others, or in another order shows in the final memory."""
    X, Y, H = Var("X"), Var("Y"), Var("H")
    T = Seq.fresh("T", nonempty=True)
    holes: dict[str, Seq | tuple] = {"X": T, "Y": T, "H": T}
    cycle = (Stmt("X", H), Stmt("Y", X), Stmt("X", Elem("add", X, Y)), Stmt("H", Elem("mul", Y, X)))
    for n in range(ST_SEQ_LENGTH + 1):
        stmts = tuple(cycle[i % len(cycle)] for i in range(n))
        g = GenericStmt(f"{len(stmts)} statement(s), X Y H : T", stmts, holes)
        typed, oracle = typed_stmts(g)
        mu = {x: Initial(x) for x in holes}
        final = ev.eval_prog(ev.Sem(typed, GenericInterpretation(), mu))
        composed: dict[str, Any] = mu
        for st in stmts:
            composed = ev.st_stmt(st, ev.Sem(typed, GenericInterpretation(), composed))
        k = Seq.fresh("k")
        yield Obligation(f"{g.label}: names kept", (), z3.BoolVal(set(final) != set(mu)))
        for x in mu:
            yield Obligation(f"{g.label}: final μ({x}) is St-Seq's (all ranks)", [*_context(g, oracle), k.within(T)],
                             final[x].at(k) != composed[x].at(k),
                             lambda m, g=g, x=x: f"{g.label}: eval_prog's {x} differs from running the "
                             "statements in order")


#: The cases of Lemma 4.3 (``proofs.safety.STEPS``), each proved for all ranks.
GENERIC_STEPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Var", "Var", ("Var",)),
    ("Prod", "Prod", ("Prod",)),
    *((op.capitalize(), f"Elem.{op}", (f"Elem.{op}",)) for op in ELEM_OPS),
    ("SMul", "SMul", ("Elem.mul",)),
    ("SDiv", "SDiv", ("Elem.div",)),
    ("Transp", "Transp", ("Transp",)),
    ("Contr", "Contr", ("Contr",)),
    ("Proj", "Proj", ("Proj",)),
    ("Diag", "Diag", ("Diag",)),
    ("Expa", "Expa", ("Expa",)),
    ("Red", "Red", ("Red",)),
)


def lemmas() -> list[Lemma]:
    out = [Lemma("CEIL axiom", "report Definition 7; symbolic.py ceil", "the one property of ⌈·⌉ the rank-generic "
                 "padded lemmas assume, n >= 1 ⟹ n <= ⌈n⌉, holds of the engines' rounding for every M",
                 ceil_axiom_obligations)]
    for rule, cases in GENERIC_RULES:
        def build_rule(rule: str = rule) -> Iterator[Obligation]:
            yield from typing_rule_generic_obligations(rule)

        out.append(Lemma(f"Lemma 4.1 case {rule} (all ranks)", "paper Lemma 4.1 (⇔, one rule); TensorIR "
                         "sem_typing_computable", f"the checker's {rule} derives exactly what SPEC.md's rules "
                         "derive, at every rank (T-SMul, T-SDiv within T-Elem)", build_rule, cases=cases,
                         coverage=EVERY_RANK))
    for suffix, case, cases in GENERIC_STEPS:
        def build(case: str = case) -> Iterator[Obligation]:
            for g in generic_schemata(case):
                yield from wd_generic_obligations(g)

        out.append(Lemma(f"WD-{suffix} (all ranks)", f"paper Lemma 4.3 case {suffix}; TensorIR "
                         "sem_eval_well_defined_*, for every rank as in Coq",
                         f"[[{suffix.lower()} ...]](k) reads only in-bounds for k <= its type, at every rank "
                         "(shapes and multi-indices of symbolic length)", build, cases=cases, coverage=EVERY_RANK))
    for suffix, case, cases in GENERIC_STEPS:
        def build_padded(case: str = case) -> Iterator[Obligation]:
            for g in generic_schemata(case):
                yield from wd_generic_obligations(g, M)

        out.append(Lemma(f"Pad-WD-{suffix} (all ranks)", f"report Lemma 5 (i) case {suffix}; Corollary 3 (reads)",
                         f"padded [[{suffix.lower()} ...]](k) reads only inside ⌈Γ⌉ for k <= ⌈its type⌉, at every "
                         "rank and every M", build_padded, cases=cases, coverage=EVERY_RANK))
    out.append(Lemma("OK-Stmt (all ranks)", "paper Fig. 8 OK-Stmt (inversion); TensorIR sem_typable_expr_in_stmt",
                     "x = e ok  ⟹  Γ(x) = type(e), at every rank", ok_stmt_generic_obligations, coverage=EVERY_RANK))
    out.append(Lemma("Lemma 4.5 (all ranks)", "paper Lemma 4.5, Fig. 9 St-Stmt; TensorIR sem_step_stmt",
                     "St-Stmt writes exactly dom(μ x), reads the pre-state in bounds, keeps the rest; every rank",
                     st_stmt_generic_obligations, coverage=EVERY_RANK))
    out.append(Lemma("Lemma 4.5 (padded, all ranks)", "report Fig. 14 ev-pad-stmt; Theorem 2 step; Corollary 3 "
                     "(writes)", "padded St-Stmt writes exactly ⌈Γ(x)⌉, reads the pre-state in bounds, keeps the "
                     "rest; every rank, every M", lambda: st_stmt_generic_obligations(M), coverage=EVERY_RANK))
    out.append(Lemma("St-Seq", "paper Fig. 9 St-Seq, St-Empty, Eval-Prog; TensorIR sem_step_seq",
                     "eval_prog runs the statements in order from the initial memory, at every rank",
                     st_seq_generic_obligations, coverage=EVERY_RANK))
    return out
