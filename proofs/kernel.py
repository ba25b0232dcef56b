"""The proof kernel of ``make verify``: everything it trusts besides Z3.

A :class:`Lemma` is a named statement with its paper counterpart.  It is
*accepted* in one of two ways, and in no other:

1. **Z3** (``Rule.Z3``): the lemma's obligations are built -- by running the
   equations of ``core_teil/semantics/eval.py`` and the rules of ``core_teil/lang/typing.py``
   over Z3 terms -- and every obligation is decided under a solver with
   ``random_seed`` 42 and a resource limit.  An :class:`Obligation` keeps its
   parts apart: the *hypotheses* (the context: parameters, the rules'
   premises, the induction hypothesis), the *uses* (instances of accepted
   lemmas), and the *goal* (the negated claim).  It is proved when
   ``hypotheses ∧ uses ∧ goal`` is ``unsat`` **and** the hypotheses alone are
   ``sat`` (otherwise it is *vacuous*: a contradiction proves anything).  An
   ``unknown`` is never proved.  The only recursive definition an obligation may
   rely on is ``SUMrec``'s (Z3 takes a definition as an axiom without asking
   whether any function satisfies it).  A lemma with no obligation is *incomplete*,
   and so is a rank-indexed lemma whose obligations miss a rank ``min_rank..R``
   or a step lemma whose obligations miss a case it claims.  An expected
   refutation (``Expect.REFUTED``: a verbatim claim of the report that is false
   for Core-TeIL) is accepted when some obligation is ``sat``; its model is the
   printed counterexample.
2. **A rule of this kernel**, each written once here:

   * :func:`sum_induction` (induction on the bound of a sum): from
     ``base: premise(lo) -> concl(lo)``, ``mono: premise(n+1) -> premise(n)``
     and ``step: premise(n+1) ∧ concl(n) -> concl(n+1)``, all over free
     constants, conclude ``∀n >= lo. premise(n) -> concl(n)``.  The three are
     ordinary Z3 obligations; the rule only fixes their shape.  A sum law is a
     :class:`SumStatement` (terms over :data:`SUMREC`) that the kernel keeps:
     its lemma's obligations, its key and every instance are made from it.
   * :func:`calculation` (the cut rule of a calculational proof): a chain
     ``T_0 = T_1 = ... = T_n`` under hypotheses; each :class:`Cut` (a use of a
     sum law, made by :meth:`SumStatement.cut`) justifying a link has its
     premise as an obligation of its own and its conclusion, under the same
     hypotheses, as a use of that link; the links, under those hypotheses,
     may be used downstream.
   * ``Rule.STRUCTURAL`` (structural induction on expressions): the
     conclusion holds for every expression when a step lemma is accepted for
     every case of :func:`core_cases` -- one per constructor of the Core
     dialect as ``typing._DIALECT`` lists them, ``Elem`` split by operator.  A
     step lemma is proved over a *hole*: the child is a variable of the
     child's type (symbolic extents), which stands for any expression of that
     type satisfying the induction hypothesis.  This is sound because the
     equations of ``eval.py`` touch a child only through ``denote(child, k)``
     and ``sem.type(child)``, so the step sees exactly what the hypothesis
     speaks about.  A step lemma claims its cases in ``cases``; the kernel
     checks that it has obligations built from each of them.  Where the
     hypothesis is itself quantified over indices (padding simulation), the
     obligation carries its instances at the indices where the equation reads
     the hole, and the summation variables in those indices are constrained
     to their ranges (sound: the extents are >= 1, so the constraint is
     satisfiable, and the constants occur nowhere else free).
   * ``Rule.STATEMENTS`` (induction on the length of the statement list, paper
     Theorem 4.6): the conclusion holds for every program when its base
     obligations are proved and its step lemma (one statement, arbitrary
     memory satisfying the invariant) and St-Seq are accepted.
   * ``Rule.COROLLARY``: accepted when its premises (at least one) are.

A lemma that uses instances of other lemmas (the sum lemmas, instantiated
for the uninterpreted ``SUM`` of ``core_teil/semantics/symbolic.py``) names them in
``premises``; it is accepted only if they are.  Instances are sound because
``SUM`` means ``SUMrec`` (:data:`SUMREC`), for which the lemmas are proved:
a model with ``SUM := SUMrec`` satisfies every instance, whatever the other
symbols are.  That is also why the vacuity check may leave the uses out when
the hypotheses do not mention ``SUM`` (it includes them when they do).  A use
must *be* such an instance: the kernel accepts as uses only formulas made by
:meth:`SumStatement.instance` (the statement's terms with arguments for its
constants and ``SUM`` or ``SUMrec`` for ``SUMrec``, keyed by the statement's
digest, which must be the key of the accepted premise of that name), closed by
:func:`closed`, renamed by :func:`renamed` (checked to rename bound variables
only), or made by the cut rule; each names the lemma it is an instance of, which
the using lemma must name as a premise (:func:`unjustified`; reviews r26b and
r26d found any formula accepted as a use).  If
building an obligation raises (an equation indexes past a tuple, Z3 rejects an
index of the wrong arity), the semantics is *stuck* on a well-typed input: the
lemma is refuted with that message, never skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import z3

from core_teil.lang import typing as ty
from core_teil.lang.syntax import ELEM_OPS, Elem, Expr
from core_teil.semantics.symbolic import SUM, ZERO, Value, arith, is_constant, subterms

#: Fixed seed and resource limit on every solver (Z3-NOTES.md, "Reproducibility").
SEED = 42
RLIMIT = 8_000_000
#: A safety net only: rlimit decides; this stops a pathological run from hanging ``make verify``.
SAFETY_TIMEOUT_MS = 60_000
#: Every rank-indexed lemma is instantiated for all ranks 0..RANK_BOUND (docs/lemmas.md, "Rank bound").
RANK_BOUND = 6
#: Induction on statements composes its steps with this lemma (paper Fig. 9 St-Seq).
ST_SEQ = "St-Seq"
#: The uninterpreted symbol whose meaning the sum lemmas fix (``core_teil.semantics.symbolic.SUM``).
SUM_SYMBOL = "SUM"


class Status(Enum):
    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"
    #: Every obligation is unsat, but some obligation's hypotheses are themselves unsat.
    VACUOUS = "vacuous"
    #: The obligations do not cover the statement (none at all, a rank or a claimed case missing).
    INCOMPLETE = "incomplete"


#: Definite rejections (a mutant that causes one is killed; ``unknown`` is not one).
REJECTED = (Status.REFUTED, Status.VACUOUS, Status.INCOMPLETE)


class Expect(Enum):
    PROVED = "proved"
    REFUTED = "refuted"


class Rule(Enum):
    Z3 = "Z3"
    SUM_INDUCTION = "induction on the bound"
    STRUCTURAL = "structural induction"
    STATEMENTS = "induction on statements"
    COROLLARY = "from premises"
    ENUMERATION = "exhaustive enumeration"
    CALCULATION = "calculation (cut)"


def _conj(terms: Sequence[z3.BoolRef]) -> z3.BoolRef:
    return z3.And(*terms) if terms else z3.BoolVal(True)


@dataclass(frozen=True)
class Obligation:
    """``hypotheses ∧ uses ∧ goal`` must be ``unsat``, and ``hypotheses`` alone ``sat``.

    ``goal`` is the negated claim, *including* the claim's own antecedents and
    the range it quantifies over (``k`` in the padding, ``P(k) = •``): a claim
    about an empty range is true, not vacuous.  ``hypotheses`` are the context
    the claim is made in (parameters >= 1, the typing rules' premises, the
    induction hypothesis, path conditions); if they are contradictory the
    obligation proves nothing.  ``uses`` are instances of accepted lemmas."""

    name: str
    hypotheses: tuple[z3.BoolRef, ...]
    goal: z3.BoolRef
    explain: Callable[[z3.ModelRef], str] | None = None
    #: Constraints tried in turn on a counterexample to make it small (Alive2 shrinks first).
    prefer: tuple[z3.BoolRef, ...] = ()
    uses: tuple[z3.BoolRef, ...] = ()
    #: The largest rank among the instance's types (rank-indexed lemmas must cover min_rank..R).
    rank: int | None = None
    #: The induction case (constructor) the obligation was built from (see :func:`case_of`).
    case: str | None = None
    #: Z3's resource limit for this obligation (``RLIMIT`` unless a lemma says why it needs more).
    rlimit: int = RLIMIT
    #: Where to look for a counterexample when Z3 answers ``unknown`` (a rank at most 16, say):
    #: a model found under one of these is a model of the obligation, so it refutes it; no
    #: answer under them leaves ``unknown``, never ``proved``.
    search: tuple[z3.BoolRef, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "search", tuple(self.search))
        object.__setattr__(self, "hypotheses", tuple(self.hypotheses))
        object.__setattr__(self, "uses", tuple(self.uses))
        object.__setattr__(self, "prefer", tuple(self.prefer))

    @property
    def formula(self) -> z3.BoolRef:
        return z3.And(*self.hypotheses, *self.uses, self.goal)

    def context(self) -> tuple[z3.BoolRef, ...]:
        """What the vacuity check asks Z3 to satisfy: the hypotheses, and the uses if the
        hypotheses constrain ``SUM`` (otherwise ``SUM := SUMrec`` satisfies every use).

        That the uses *are* instances is checked before, by :func:`unjustified` (review r26b:
        a "use" that contradicted the hypotheses, or was the claim itself, proved anything).
        Adding every use here instead made Z3 answer ``unknown`` on twelve lemmas' contexts."""
        if self.uses and mentions(self.hypotheses, SUM_SYMBOL):
            return (*self.hypotheses, *self.uses)
        return self.hypotheses


def mentions(terms: Iterable[z3.ExprRef], symbol: str) -> bool:
    """Whether a function symbol named ``symbol`` occurs in ``terms`` (under binders too)."""
    return any(z3.is_app(t) and t.decl().name() == symbol for t in subterms(terms))


# --------------------------------------------------------------------------
# Uses: what an obligation may assume, and why (review r26b)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Justified:
    """Why a formula may be a use: an instance of the statement of ``premise`` (an accepted
    lemma the using lemma must name), or, with ``premise`` None, what obligations of the using
    lemma itself prove (``needs``: the cut rule's premises and links)."""

    formula: z3.BoolRef  # kept, so that its id stays its own
    premise: str | None
    needs: tuple[Obligation, ...] = ()
    key: str = ""  # the premise's statement (SumStatement.key)


_JUSTIFIED: dict[int, list[_Justified]] = {}


def _justify(f: z3.BoolRef, premise: str | None, needs: tuple[Obligation, ...] = (), key: str = "") -> z3.BoolRef:
    ways = _JUSTIFIED.setdefault(f.get_id(), [])
    # obligations by identity: equal fields are not the same proof (a later run of the lemma)
    if not any(j.premise == premise and j.key == key and [id(o) for o in j.needs] == [id(o) for o in needs]
               for j in ways):
        ways.append(_Justified(f, premise, needs, key))
    return f


def registries() -> tuple[dict[int, list[_Justified]], dict[int, Cut]]:
    """A copy of what the kernel has vouched for (see :func:`restore`)."""
    return {k: list(v) for k, v in _JUSTIFIED.items()}, dict(_CUTS)


def restore(saved: tuple[dict[int, list[_Justified]], dict[int, Cut]]) -> None:
    """Forget what was vouched for since :func:`registries` (after a mutant of the kernel ran)."""
    _JUSTIFIED.clear()
    _JUSTIFIED.update(saved[0])
    _CUTS.clear()
    _CUTS.update(saved[1])


def _ways(f: z3.BoolRef) -> list[_Justified]:
    return [j for j in _JUSTIFIED.get(f.get_id(), []) if z3.eq(j.formula, f)]


def closed(variables: Sequence[z3.ExprRef], f: z3.BoolRef) -> z3.BoolRef:
    """``∀variables. f`` for an instance ``f``: it holds for every value of its constants.  Not
    for a step of a calculation, which holds only under its obligation's hypotheses (review
    r26d: ``∀y. y = 1`` from a link proved under ``y = 1``)."""
    ways = [j for j in _ways(f) if not j.needs]
    if not ways:
        raise ValueError(f"only an instance of a lemma can be closed, not {_short(f)}")
    out = z3.ForAll(list(variables), f)
    for j in ways:
        _justify(out, j.premise, j.needs, j.key)
    return out


def renamed(f: z3.BoolRef, normal: Callable[[z3.BoolRef], z3.BoolRef]) -> z3.BoolRef:
    """A use in the normal form its obligation's other parts are in.  ``normal`` may rename
    bound variables and nothing else: the kernel checks that its result is
    :func:`alpha_equal` to ``f`` (review r26d: a "normal form" that was the claim itself)."""
    ways = _ways(f)
    if not ways:
        raise ValueError(f"only a use can be renamed, not {_short(f)}")
    out = renaming(normal)(f)
    for j in ways:
        _justify(out, j.premise, j.needs, j.key)
    return out


def alpha_equal(a: z3.ExprRef, b: z3.ExprRef) -> bool:
    """Whether ``a`` and ``b`` are one term up to the names of their bound variables.

    Z3 writes bound variables as de Bruijn indices and keeps their names beside them (and
    patterns, which guide instantiation only); everything else must be the same operator
    applied to alpha-equal arguments.  Subterms of ``a`` and ``b`` stay alive while they do,
    so their ids identify them during the walk."""
    todo, seen = [(a, b)], set()
    while todo:
        s, t = todo.pop()
        if s.eq(t) or (s.get_id(), t.get_id()) in seen:
            continue
        seen.add((s.get_id(), t.get_id()))
        if z3.is_quantifier(s) and z3.is_quantifier(t):
            if ((s.is_lambda(), s.is_forall()) != (t.is_lambda(), t.is_forall())
                    or s.num_vars() != t.num_vars()
                    or any(not s.var_sort(i).eq(t.var_sort(i)) for i in range(s.num_vars()))):
                return False
            todo.append((s.body(), t.body()))
        elif (z3.is_app(s) and z3.is_app(t) and s.num_args() > 0 and s.num_args() == t.num_args()
              and s.decl().eq(t.decl())):
            todo.extend(zip(s.children(), t.children(), strict=True))
        else:
            return False  # distinct leaves (constants, numerals, variables) or operators
    return True


def renaming(normal: Callable[[z3.BoolRef], z3.BoolRef]) -> Callable[[z3.BoolRef], z3.BoolRef]:
    """``normal``, checked to rename bound variables only (:func:`alpha_equal`)."""
    def apply(f: z3.BoolRef) -> z3.BoolRef:
        out = normal(f)
        if not isinstance(out, z3.BoolRef) or not alpha_equal(f, out):
            raise ValueError(f"a normal form changed more than the names of bound variables: {_short(f)}")
        return out
    return apply


def _short(f: z3.ExprRef, width: int = 120) -> str:
    text = " ".join(str(f).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def unjustified(ob: Obligation, premises: Sequence[str], proved: Mapping[int, Obligation],
                instances: set[tuple[tuple[str, str], ...]] | None = None) -> str | None:
    """Why a use of ``ob`` is not one (None if every use is): no instance of a lemma, an
    instance of a lemma the using one does not name as a premise, or a cut or link whose
    obligation the using lemma has not proved (``proved``: its proved obligations by id).
    ``instances`` receives, per use of an instance, the (lemma, key) pairs that justify it."""
    for u in ob.uses:
        ways = _ways(u)
        if not ways:
            return f"a use is no instance of an accepted lemma: {_short(u)}"
        fit = [j for j in ways if (j.premise is None or j.premise in premises)
               and all(proved.get(id(o)) is o for o in j.needs)]
        if not fit:
            names = sorted({j.premise for j in ways if j.premise is not None})
            return (f"a use is an instance of {', '.join(names)}, not named as a premise" if names else
                    "a use is a step of a calculation whose obligation this lemma has not proved")
        if instances is not None and all(j.premise is not None for j in fit):
            instances.add(tuple(sorted({(j.premise, j.key) for j in fit if j.premise is not None})))
    return None


def case_of(e: Expr) -> str:
    """The induction case of an expression's root: its constructor, ``Elem`` by operator."""
    return f"Elem.{e.op}" if isinstance(e, Elem) else type(e).__name__


@dataclass(frozen=True)
class Outcome:
    name: str
    status: Status
    seconds: float
    counterexample: str | None = None
    rlimit: int = 0  # Z3's resource count spent: unlike seconds, the same on every run


@dataclass(frozen=True)
class Lemma:
    """A named statement, its paper counterpart, and how it is accepted."""

    name: str
    ref: str
    statement: str
    build: Callable[[], Iterable[Obligation]] | None = None
    rule: Rule = Rule.Z3
    premises: tuple[str, ...] = ()
    expect: Expect = Expect.PROVED
    cases: tuple[str, ...] = ()
    ranks: bool = False
    cost: float = 1.0
    #: With ``ranks``: the obligations must cover every rank min_rank..RANK_BOUND.
    min_rank: int = 0
    #: The ranks the statement is established for when neither ``ranks`` nor the premises say:
    #: :data:`EVERY_RANK` (shapes of symbolic rank, proofs/ranks.py), or instances such as "7..10".
    coverage: str = ""
    #: A sum law (``Rule.SUM_INDUCTION``): the kernel builds the obligations from the statement
    #: this returns, and the result carries its key (instead of ``build``).
    law: Callable[[], SumStatement] | None = None

    @property
    def own(self) -> bool:
        """Whether the lemma has obligations of its own (it may have premises too)."""
        return self.build is not None or self.law is not None


#: What ``make verify`` prints in its ranks column.
EVERY_RANK = "all"
NO_RANK = "—"


def rank_coverage(lemma: Lemma, by_name: dict[str, Lemma]) -> str:
    """The ranks a lemma is established for: ``all`` (proved over shapes of symbolic rank),
    ``<= R`` (instantiated at every rank up to R), an explicit range of instances, or ``—``
    (its statement has no rank).  A lemma from premises holds where all of them do."""
    if lemma.coverage:
        return lemma.coverage
    if lemma.ranks:
        return f"<= {RANK_BOUND}"
    if not lemma.own and lemma.premises:
        covs = [rank_coverage(by_name[p], by_name) for p in lemma.premises if p in by_name]
        bounded = [c for c in covs if c not in (EVERY_RANK, NO_RANK)]
        if bounded:
            return bounded[0]
        return EVERY_RANK if EVERY_RANK in covs else NO_RANK
    return NO_RANK


@dataclass(frozen=True)
class LemmaResult:
    name: str
    status: Status
    seconds: float
    obligations: int
    expect: Expect = Expect.PROVED
    failed: str | None = None
    counterexample: str | None = None
    note: str = ""
    #: Refuted because the semantics got stuck while building -- never an *expected* refutation.
    stuck: bool = False
    rlimit: int = 0
    #: Per use of an instance, the (lemma, key) pairs that justify it (:meth:`Book.conclude`
    #: checks that the premise of that name proved the statement with that key).
    instances: tuple[tuple[tuple[str, str], ...], ...] = ()
    #: A sum law's: the key of the statement its obligations were built from.
    key: str = ""

    @property
    def accepted(self) -> bool:
        return self.status.value == self.expect.value and not self.stuck

    @property
    def rejected(self) -> bool:
        """The expectation definitely failed (``unknown`` never counts): a claim refuted, vacuous or
        incomplete; an expected refutation that every obligation contradicts, that has nothing to
        refute, or that only got stuck.  A mutant is killed when one of its targets is rejected."""
        if self.expect is Expect.REFUTED:
            return self.status in (Status.PROVED, Status.VACUOUS, Status.INCOMPLETE) or self.stuck
        return self.status in REJECTED


class Stuck(Exception):
    """The semantics could not proceed on a well-typed input (raised while building)."""


# --------------------------------------------------------------------------
# Discharging obligations
# --------------------------------------------------------------------------


def solver(ctx: z3.Context | None = None, rlimit: int = RLIMIT) -> z3.Solver:
    s = z3.Solver(ctx=ctx)
    s.set("random_seed", SEED)
    s.set("rlimit", rlimit)
    s.set("timeout", SAFETY_TIMEOUT_MS)
    return s


class ModelView(z3.ModelRef):
    """A model that lives in a Z3 context of its own; terms of any context are evaluated in it.

    Counterexamples are rendered here, not in the main context: evaluating with model
    completion there picks "fresh" values from counters that every earlier model of the
    process had advanced, so the same refutation printed ``unpadded = 0``, ``1.1`` or
    ``2.142857`` depending on which mutants a worker had run before."""

    def __init__(self, model: z3.ModelRef) -> None:
        own = z3.Context()
        inner = model.translate(own)
        super().__init__(inner.model, own)
        self._keep = inner  # the translated model owns the reference counted above

    def eval(self, t: z3.ExprRef, model_completion: bool = False) -> z3.ExprRef:  # type: ignore[override]
        here = t.translate(self.ctx) if t.ctx != self.ctx else t
        v = super().eval(here, model_completion)
        return v.translate(t.ctx) if t.ctx != self.ctx else v

    def evaluate(self, t: z3.ExprRef, model_completion: bool = False) -> z3.ExprRef:  # type: ignore[override]
        return self.eval(t, model_completion)


class _Recording(ModelView):
    """A model view that remembers which terms a counterexample printer evaluated, in order."""

    def __init__(self, model: z3.ModelRef) -> None:
        super().__init__(model)
        self.shown: list[z3.ExprRef] = []

    def eval(self, t: z3.ExprRef, model_completion: bool = False) -> z3.ExprRef:  # type: ignore[override]
        if isinstance(t, z3.ExprRef) and not any(t.eq(u) for u in self.shown):
            self.shown.append(t)
        return super().eval(t, model_completion)


def _ladder(t: z3.ExprRef) -> list[z3.ExprRef]:
    """Canonical values to try for a shown term, smallest first; none for arrays and functions."""
    from core_teil.semantics.symbolic import Value

    sort = t.sort()
    ctx = t.ctx
    if sort == z3.IntSort(ctx):
        return [z3.IntVal(v, ctx) for v in (1, 2, 0, 3, -1, 4)]
    if sort == z3.RealSort(ctx):
        return [z3.RealVal(v, ctx) for v in (0, 1, -1, 2, "1/2", 3)]
    if sort == z3.BoolSort(ctx):
        return [z3.BoolVal(False, ctx), z3.BoolVal(True, ctx)]
    if sort.name() == Value.name() and isinstance(sort, z3.DatatypeSortRef):
        # constructor 0 is val(real), 1 is undef (core_teil.semantics.symbolic), taken in t's context
        return [sort.constructor(1)(), *[sort.constructor(0)(z3.RealVal(v, ctx)) for v in (0, 1, -1, 2, "1/2", 3)]]
    if isinstance(sort, z3.FPSortRef):
        return [z3.FPVal(v, None, sort, ctx) for v in (0.0, 1.0, -1.0, 2.0, float("inf"), float("-inf"))] + [
            z3.fpNaN(sort)]
    return []


def canonical_model(s: z3.Solver, explain: Callable[[z3.ModelRef], str]) -> ModelView:
    """Pin every term the counterexample shows, in the order it shows them, to the first value of
    :func:`_ladder` the obligation allows (or to the value it is forced to).  Then the printed
    counterexample is a function of the obligation alone: Z3's own model is not -- with the same
    seed, formula and context it still followed what the process had solved before (the Pad-Div
    counterexample showed "unpadded = •", "0", "1.1" and "2.142857" over runs)."""
    first = _Recording(s.model())
    with contextlib.suppress(Exception):  # the printer runs again (its failure reported) on the pinned model
        explain(first)
    for shown in first.shown:
        t = shown.translate(s.ctx) if shown.ctx != s.ctx else shown
        candidates = _ladder(t)
        if not candidates:
            continue
        for c in candidates:
            s.push()
            s.add(t == c)
            if s.check() == z3.sat:
                break
            s.pop()
        else:  # no ladder value is allowed: pin the one the model has (push discards the model)
            s.check()
            forced = s.model().eval(t, model_completion=True)
            s.push()
            s.add(t == forced)
            s.check()
    return ModelView(s.model())


def discharge(ob: Obligation, ctx: z3.Context | None = None) -> Outcome:
    """Decide one obligation in ``ctx``, a Z3 context that holds only its lemma's obligations
    (a new one if none is given).

    In the shared context the same formula was proved in 0.1 s or left unknown at the
    rlimit, depending on what the worker process had built before it (term ids, and so
    the solver's choices, follow creation order).  Copied into a context of the lemma's
    own, the outcome is a function of the lemma and the seed."""
    ctx = ctx or z3.Context()
    s = solver(ctx, ob.rlimit)
    s.add(ob.formula.translate(ctx))
    t0 = time.perf_counter()
    r = s.check()
    spent = _rlimit_count(s)
    if r == z3.unsat:
        return Outcome(ob.name, Status.PROVED, time.perf_counter() - t0, rlimit=spent)
    unknown = s.reason_unknown() if r != z3.sat else ""
    for hint in ob.search if r != z3.sat else ():
        # Model finding near the rlimit is where Z3's search is most erratic (a refutation took
        # 0.3M in one process and more than 8M in another); inside a bounded region it is not.
        s = solver(ctx, ob.rlimit)
        s.add(ob.formula.translate(ctx), hint.translate(ctx))
        r = s.check()
        spent += _rlimit_count(s)
        if r == z3.sat:
            break
    dt = time.perf_counter() - t0
    if r == z3.sat:
        first = s.model()  # the refutation itself, whatever the shrinking below leaves of the rlimit
        for c in ob.prefer:  # in a fixed order, each kept only if it leaves a model
            s.push()
            s.add(c.translate(ctx))
            if s.check() != z3.sat:
                s.pop()
        s.check()
        printer = ob.explain or (lambda m: render_model(m, ob.formula))
        note = ""
        try:
            model = canonical_model(s, printer)
        except (z3.Z3Exception, ValueError, TypeError) as exc:  # never let shrinking hide the refutation
            model, note = ModelView(first), f" (not canonicalised: {exc})"
        try:
            text = printer(model) + note
        except Exception as exc:  # a counterexample printer must never hide the refutation itself
            text = f"{render_model(model, ob.formula)} (explanation failed: {type(exc).__name__}: {exc})"
        return Outcome(ob.name, Status.REFUTED, dt, text, spent)
    return Outcome(ob.name, Status.UNKNOWN, dt, unknown or s.reason_unknown(), spent)


def satisfiable(terms: Sequence[z3.BoolRef], ctx: z3.Context) -> Status:
    """PROVED if ``terms`` have a model (the hypotheses are not contradictory), VACUOUS if they
    have none, UNKNOWN if Z3 cannot tell -- which is never taken for a model."""
    if not terms:
        return Status.PROVED
    s = solver(ctx)
    s.add(*(t.translate(ctx) for t in terms))
    r = s.check()
    if r == z3.sat:
        return Status.PROVED
    return Status.VACUOUS if r == z3.unsat else Status.UNKNOWN


def _rlimit_count(s: z3.Solver) -> int:
    try:
        return int(s.statistics().get_key_value("rlimit count"))
    except z3.Z3Exception:  # a check that did no work reports no count
        return 0


def render_model(model: z3.ModelRef, formula: z3.ExprRef | None = None, limit: int = 12) -> str:
    """The scalar constants of ``formula`` (of the model if none is given), smallest names first
    (Alive2 lists every input); arrays and functions are left out (their tables are Z3's choice)."""
    if formula is not None:
        consts = sorted(_constants(formula), key=lambda c: (len(str(c)), str(c)))
        items = [f"{c} = {model.eval(c, model_completion=True)}" for c in consts]
    else:
        items = [f"{d.name()} = {model[d]}" for d in sorted(model.decls(), key=lambda d: (len(d.name()), d.name()))
                 if d.arity() == 0]
    more = f", ... ({len(items) - limit} more)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def _constants(term: z3.ExprRef) -> list[z3.ExprRef]:
    """The free scalar constants of a term (no arrays, no datatype constructors), in the order
    of a depth-first walk (the order counterexamples are pinned in)."""
    return [t for t in subterms([term]) if is_constant(t) and not isinstance(t.sort(), z3.ArraySortRef)]


@dataclass
class _Vacuity:
    """The contexts of one lemma's proved obligations, checked for satisfiability at the end.

    Only the maximal ones are given to Z3: a subset of a satisfiable set of hypotheses is
    satisfiable, and an unsatisfiable maximal context makes its own obligation vacuous.  Most
    obligations of an instance share their context, or extend the well-definedness one."""

    ctx: z3.Context
    #: (ids, terms kept alive so their ids stay theirs, the first obligation with this context)
    contexts: list[tuple[frozenset[int], tuple[z3.BoolRef, ...], str]] = field(default_factory=list)
    _seen: set[frozenset[int]] = field(default_factory=set)

    def add(self, ob: Obligation) -> None:
        context = ob.context()
        ids = frozenset(h.get_id() for h in context)
        if ids not in self._seen:
            self._seen.add(ids)
            self.contexts.append((ids, context, ob.name))

    def verdict(self) -> tuple[Status, str]:
        """PROVED if every context has a model; else VACUOUS or UNKNOWN and the obligation."""
        for ids, context, name in self.contexts:
            if any(ids < other for other, _, _ in self.contexts):
                continue
            status = satisfiable(context, self.ctx)
            if status is not Status.PROVED:
                return status, name
        return Status.PROVED, ""


@dataclass
class _Definitions:
    """The recursive definitions a lemma's obligations rely on: ``SUMrec``'s alone.

    A definition is an axiom of every query that mentions its symbol, and Z3 does not check
    that it has a model: ``g(k) = g(k) + 1`` makes any obligation that mentions ``g`` unsat
    (review r27 proved ``x >= 1 ⊢ x >= 2`` with a Sum-Defined instance at ``n = g(0)``).
    ``SUMrec`` recurses on a decreasing bound, so it has one.  Subterms already seen in the
    lemma are not walked again (its obligations share most of them)."""

    seen: set[int] = field(default_factory=set)
    alive: list[z3.ExprRef] = field(default_factory=list)  # so that the seen ids stay theirs

    def foreign(self, ob: Obligation) -> str | None:
        roots = [*ob.hypotheses, *ob.uses, ob.goal]
        self.alive.extend(roots)
        for t in subterms(roots, self.seen):
            if z3.is_app(t) and t.decl().kind() == z3.Z3_OP_RECURSIVE and not t.decl().eq(SUMREC):
                return (f"relies on the recursive definition of {t.decl().name()}, which the kernel does not "
                        "know to have a model (SUMrec's alone is trusted)")
        return None


def check_lemma(lemma: Lemma, stop_at_first: bool = False) -> LemmaResult:
    """Build and discharge a Z3 lemma (rules are concluded by :meth:`Book.conclude`)."""
    assert lemma.own, f"{lemma.name} has no obligations of its own"
    t0 = time.perf_counter()
    count, spent = 0, 0
    worst: Outcome | None = None
    ranks: set[int | None] = set()
    cases: set[str | None] = set()
    expect_sat = lemma.expect is Expect.REFUTED
    law: SumStatement | None = None
    obligations: Iterator[Obligation] = iter(())
    try:
        # a sum law: the obligations and the key come from one statement, built once here
        law = lemma.law() if lemma.law is not None else None
        obligations = iter(law.obligations() if law is not None else lemma.build())  # type: ignore[misc]
        ctx = z3.Context()
        vacuity = _Vacuity(ctx)
        # the proved obligations themselves, not just their ids: a freed obligation's id is
        # reused, and a step never discharged would pass for a proved one (review r26d)
        proved: dict[int, Obligation] = {}
        used: set[tuple[tuple[str, str], ...]] = set()
        definitions = _Definitions()
        for ob in obligations:
            count += 1
            ranks.add(ob.rank)
            cases.add(ob.case)
            why = unjustified(ob, lemma.premises, proved, used) or definitions.foreign(ob)
            if why is not None:
                return LemmaResult(lemma.name, Status.INCOMPLETE, time.perf_counter() - t0, count, lemma.expect,
                                   ob.name, None, why, rlimit=spent)
            out = discharge(ob, ctx)
            spent += out.rlimit
            if out.status is Status.PROVED:
                proved[id(ob)] = ob
                vacuity.add(ob)  # its vacuity is decided after the loop, on the maximal contexts
                continue
            if out.status is Status.REFUTED:
                worst = out
                break
            if worst is None:
                worst = out
            if stop_at_first:
                break
    except (Stuck, IndexError, ValueError, KeyError, TypeError, AttributeError, AssertionError,
            z3.Z3Exception) as exc:
        msg = f"the semantics is stuck: {type(exc).__name__}: {exc}"
        return LemmaResult(lemma.name, Status.REFUTED, time.perf_counter() - t0, count, lemma.expect,
                           f"obligation {count + 1} (while building)", msg, stuck=True, rlimit=spent)
    finally:
        # A builder may hold a patched semantics open while it yields (an
        # expected refutation); closing it restores the code before we return.
        close = getattr(obligations, "close", None)
        if close is not None:
            close()
    dt = time.perf_counter() - t0
    if count == 0:
        return LemmaResult(lemma.name, Status.INCOMPLETE, dt, 0, lemma.expect, None, None,
                           "no obligation: nothing was checked", rlimit=spent)
    if worst is None:
        verdict, which = vacuity.verdict()
        if verdict is not Status.PROVED:
            why = ("vacuous: its hypotheses are contradictory, so the proof says nothing"
                   if verdict is Status.VACUOUS else "Z3 could not show its hypotheses satisfiable")
            return LemmaResult(lemma.name, verdict, time.perf_counter() - t0, count, lemma.expect, which, why,
                               rlimit=spent)
        gap = coverage(lemma, ranks, cases)
        if gap:
            return LemmaResult(lemma.name, Status.INCOMPLETE, dt, count, lemma.expect, gap, None, rlimit=spent)
        status = Status.PROVED
    else:
        status = worst.status
    if expect_sat and status is Status.PROVED:
        return LemmaResult(lemma.name, status, dt, count, lemma.expect, None, None,
                           "expected a refutation, but every obligation was unsat", rlimit=spent)
    return LemmaResult(lemma.name, status, dt, count, lemma.expect,
                       worst.name if worst else None, worst.counterexample if worst else None, rlimit=spent,
                       instances=tuple(sorted(used)), key=law.key if law is not None else "")


def coverage(lemma: Lemma, ranks: set[int | None], cases: set[str | None]) -> str:
    """What a proved lemma's obligations fail to cover of its statement ('' if nothing)."""
    gaps = []
    if lemma.ranks:
        missing = [r for r in range(lemma.min_rank, RANK_BOUND + 1) if r not in ranks]
        if missing:
            gaps.append(f"no obligation at rank(s) {', '.join(map(str, missing))} "
                        f"(the statement is for every rank {lemma.min_rank}..{RANK_BOUND})")
    unbuilt = [c for c in lemma.cases if c not in cases]
    if unbuilt:
        gaps.append(f"claims case(s) {', '.join(unbuilt)} but has no obligation built from them")
    return "; ".join(gaps)


# --------------------------------------------------------------------------
# Rule: induction on the bound of a sum
# --------------------------------------------------------------------------

Formula = Callable[[z3.ArithRef], z3.BoolRef]


def sum_induction(name: str, n: z3.ArithRef, lo: z3.ArithRef, premise: Formula, conclusion: Formula,
                  requires: Sequence[z3.BoolRef] = (), uses: Sequence[z3.BoolRef] = ()) -> list[Obligation]:
    """``∀n >= lo. premise(n) -> conclusion(n)`` by induction on ``n`` (Z3-NOTES.md, "Sums").

    ``requires`` constrains the lemma's other free constants (the context);
    ``uses`` are instances of already accepted lemmas (the lemma lists them in
    ``premises``).  The premise and the induction hypothesis are antecedents of
    the claims, so they are part of the goals, not of the context.
    """
    req = tuple(requires)
    base = Obligation(f"{name}: base", req, z3.And(premise(lo), z3.Not(conclusion(lo))), uses=tuple(uses))
    mono = Obligation(f"{name}: premise is monotone", (*req, n >= lo),
                      z3.And(premise(n + 1), z3.Not(premise(n))), uses=tuple(uses))
    step = Obligation(f"{name}: step n -> n+1", (*req, n >= lo),
                      z3.And(premise(n + 1), conclusion(n), z3.Not(conclusion(n + 1))), uses=tuple(uses))
    return [base, mono, step]


#: What ``SUM`` means (``core_teil/semantics/symbolic.py`` leaves it uninterpreted): the
#: recursive ``SUMrec(h, n) = 0 if n <= 0 else SUMrec(h, n-1) + h[n]`` with the ``+`` of report
#: Definition 4, i.e. ``Σ_{m=1..n} h[m]``.  The sum laws are proved for this symbol and used for
#: ``SUM``: a model with ``SUM := SUMrec`` satisfies every instance.
VARR = z3.ArraySort(z3.IntSort(), Value)
SUMREC = z3.RecFunction("SUMrec", VARR, z3.IntSort(), Value)
_h, _n = z3.Const("h!def", VARR), z3.Int("n!def")
z3.RecAddDefinition(SUMREC, [_h, _n], z3.If(_n <= 0, ZERO, arith("add", SUMREC(_h, _n - 1), _h[_n])))


@dataclass(frozen=True)
class SumStatement:
    """``∀params ∀n. requires ∧ n >= lo ∧ premise -> conclusion``, a sum law as terms over
    :data:`SUMREC` (``params`` and ``n`` are free constants of the terms).

    The kernel owns what a sum law says.  Its lemma's obligations are built from these terms by
    :func:`sum_induction`; :attr:`key` is their digest; every instance and every cut is these
    terms with arguments substituted for the constants.  So what is used is literally what was
    proved, whatever code computed the terms (review r26d: any formula was accepted as an
    instance under a law's name)."""

    name: str
    params: tuple[z3.ExprRef, ...]
    n: z3.ArithRef
    lo: z3.ArithRef
    requires: tuple[z3.BoolRef, ...]
    premise: z3.BoolRef
    conclusion: z3.BoolRef
    #: Instances of other laws that the induction's obligations use (they are premises).
    helpers: tuple[z3.BoolRef, ...] = ()

    def __post_init__(self) -> None:
        for f in ("params", "requires", "helpers"):
            object.__setattr__(self, f, tuple(getattr(self, f)))
        consts = (*self.params, self.n)
        # Substituting for anything but distinct constants is no instantiation of a valid formula.
        if not all(is_constant(c) for c in consts) or len({c.get_id() for c in consts}) != len(consts):
            raise ValueError(f"{self.name}: the parameters and the bound must be distinct constants")
        if not z3.is_int(self.n) or any(z3.eq(t, self.n) for t in subterms([self.lo, *self.requires])):
            raise ValueError(f"{self.name}: the bound is an integer that the range and requirements do not mention")
        if not z3.is_int(self.lo) or not all(z3.is_bool(f) for f in (*self.requires, self.premise, self.conclusion)):
            raise ValueError(f"{self.name}: the range is an integer; requirements, premise and conclusion formulas")

    @property
    def key(self) -> str:
        """The statement as a digest (:func:`digest`): the same in every process that builds it
        alike, and another for another statement."""
        got = self.__dict__.get("_key")
        if got is None:
            got = self._digest()
            object.__setattr__(self, "_key", got)
        return got

    def _digest(self) -> str:
        return digest([*self.params, self.n, self.lo, *self.requires, self.premise, self.conclusion],
                      [len(self.params), len(self.requires)])

    def obligations(self) -> list[Obligation]:
        """Base, monotone premise and step over the statement's own terms."""
        def at(f: z3.BoolRef) -> Formula:
            return lambda k: z3.substitute(f, (self.n, k))
        return sum_induction(self.name, self.n, self.lo, at(self.premise), at(self.conclusion), self.requires,
                             self.helpers)

    def _at(self, S: z3.FuncDeclRef, args: Sequence[z3.ExprRef], n: z3.ArithRef) -> tuple[z3.BoolRef, z3.BoolRef]:
        """The antecedent and the conclusion at ``args`` and ``n``, for ``S``."""
        if len(args) != len(self.params):
            raise ValueError(f"{self.name} takes {len(self.params)} arguments, not {len(args)}")
        sub = [*zip(self.params, args, strict=True), (self.n, n)]

        def at(f: z3.ExprRef) -> z3.ExprRef:
            return _sum_as(S, z3.substitute(f, *sub))
        return z3.And(*(at(r) for r in self.requires), n >= at(self.lo), at(self.premise)), at(self.conclusion)

    def instance(self, S: z3.FuncDeclRef, args: Sequence[z3.ExprRef], n: z3.ArithRef) -> z3.BoolRef:
        """The law at ``args`` and ``n`` for ``S`` (``SUM`` or ``SUMrec``), as a use."""
        antecedent, conclusion = self._at(S, args, n)
        return _justify(z3.Implies(antecedent, conclusion), self.name, (), self.key)

    def cut(self, S: z3.FuncDeclRef, args: Sequence[z3.ExprRef], n: z3.ArithRef,
            binders: Sequence[z3.ExprRef] = ()) -> Cut:
        """One use of the law in a :func:`calculation`, for all values of ``binders``: its
        premise becomes an obligation, its conclusion a use of the link it justifies."""
        antecedent, conclusion = self._at(S, args, n)

        def close(f: z3.BoolRef) -> z3.BoolRef:
            return z3.ForAll(list(binders), f) if binders else f
        made = Cut(self.name, self.key, close(antecedent), close(conclusion))
        _CUTS[id(made)] = made
        return made


def digest(terms: Sequence[z3.ExprRef], shape: Sequence[int] = ()) -> str:
    """A digest of ``terms`` by their structure: each node by its kind, name, sorts and
    parameters, bound variables by their de Bruijn index, numerals by their value.  Not by
    printed text (review r27): a free constant ``m`` prints as the bound variable ``m`` does,
    and a constant named ``true`` as ``true``.  ``shape`` (counts of the parts) is digested too,
    so that parts cannot move from one field to another."""
    memo: dict[int, bytes] = {}

    def node(t: z3.ExprRef) -> bytes:
        got = memo.get(t.get_id())
        if got is not None:
            return got
        kids: list[z3.ExprRef] = []
        if z3.is_var(t):
            text = f"var {z3.get_var_index(t)} {t.sort().sexpr()}"
        elif z3.is_quantifier(t):
            kind = "lambda" if t.is_lambda() else "forall" if t.is_forall() else "exists"
            text = f"{kind} {' '.join(t.var_sort(i).sexpr() for i in range(t.num_vars()))}"
            kids = [t.body()]
        else:
            d = t.decl()
            params = [p.sexpr() if isinstance(p, z3.AstRef) else repr(p) for p in d.params()]
            value = t.sexpr() if t.num_args() == 0 and d.kind() != z3.Z3_OP_UNINTERPRETED else ""
            text = (f"app {d.kind()} {d.name()!r} ({' '.join(d.domain(i).sexpr() for i in range(d.arity()))}) "
                    f"{d.range().sexpr()} {params} {value}")
            kids = t.children()
        h = hashlib.sha256(text.encode())
        for k in kids:
            h.update(node(k))
        memo[t.get_id()] = out = h.digest()
        return out

    whole = hashlib.sha256(repr(list(shape)).encode())
    for t in terms:
        whole.update(node(t))
    return whole.hexdigest()[:32]


def _sum_as(S: z3.FuncDeclRef, f: z3.ExprRef) -> z3.ExprRef:
    """``f`` (about SUMrec) for ``S``: SUMrec itself, or SUM, which means it."""
    if S.eq(SUMREC):
        return f
    if S.eq(SUM):
        return z3.substitute_funs(f, (SUMREC, SUM(z3.Var(0, VARR), z3.Var(1, z3.IntSort()))))
    raise ValueError(f"a sum law holds for SUMrec and for SUM, which means it; not for {S}")


@dataclass(frozen=True)
class Cut:
    """A use of a sum law in a calculation, made by :meth:`SumStatement.cut` (and only there:
    :func:`calculation` refuses any other object)."""

    name: str
    key: str
    premise: z3.BoolRef
    conclusion: z3.BoolRef


_CUTS: dict[int, Cut] = {}


# --------------------------------------------------------------------------
# Rule: a calculation, cut by cut
# --------------------------------------------------------------------------


def calculation(label: str, hypotheses: Sequence[z3.BoolRef], start: z3.ExprRef,
                links: Sequence[tuple[z3.ExprRef, Sequence[Cut]]],
                normal: Callable[[z3.BoolRef], z3.BoolRef] = lambda f: f,
                **tags: Any) -> tuple[list[Obligation], list[z3.BoolRef]]:
    """``start = T_1 = ... = T_n`` under ``hypotheses``: for each link, the premise of each of
    its cuts is an obligation, and ``T_{i-1} = T_i`` an obligation whose uses are those cuts'
    conclusions (under ``hypotheses`` too).  Returns the obligations and the links, ``hypotheses -> T_{i-1} = T_i``, to
    be used downstream (review r26d: a bare link was used where its hypotheses did not hold).
    ``normal`` (e.g. the alpha-normal form of ``schema.canonical``) may rename bound variables
    only (:func:`renaming`), and a cut must be one :meth:`SumStatement.cut` made."""
    rename = renaming(normal)
    hyps = tuple(rename(h) for h in hypotheses)
    out: list[Obligation] = []
    proved: list[z3.BoolRef] = []
    prev = start
    for n, (term, cuts) in enumerate(links, start=1):
        conclusions = []
        for use in cuts:
            if _CUTS.get(id(use)) is not use:
                raise ValueError(f"{label}: step {n} uses {use!r}, which is no cut of a sum law")
            premise = Obligation(f"{label}: step {n}, premise of {use.name}", hyps,
                                 rename(z3.Not(use.premise)), **tags)
            out.append(premise)
            # under the hypotheses its premise was proved under, like a link
            conclusions.append(_justify(z3.Implies(_conj(hyps), rename(use.conclusion)), use.name, (premise,),
                                        use.key))
        step = Obligation(f"{label}: step {n}", hyps, rename(prev != term), uses=tuple(conclusions), **tags)
        out.append(step)
        proved.append(_justify(z3.Implies(_conj(hyps), prev == term), None, (step,)))
        prev = term
    return out, proved


# --------------------------------------------------------------------------
# Rule: structural induction on expressions
# --------------------------------------------------------------------------


def core_cases() -> tuple[str, ...]:
    """The cases of the induction: one per Core constructor, ``Elem`` per operator.

    Read from the type checker's dialect table, so a constructor added to the
    language without a step lemma makes the induction fail."""
    out: list[str] = []
    for ctor in sorted(ty._DIALECT["core"], key=lambda c: c.__name__):
        if ctor is Elem:
            out.extend(f"Elem.{op}" for op in ELEM_OPS)
        else:
            out.append(ctor.__name__)
    return tuple(out)


@dataclass
class Book:
    """The results so far; rule-derived lemmas are concluded from it."""

    lemmas: dict[str, Lemma]
    results: dict[str, LemmaResult] = field(default_factory=dict)

    def conclude(self, lemma: Lemma, own: LemmaResult | None = None) -> LemmaResult:
        """Accept a lemma with premises: they are accepted, the cases are covered (structural
        induction), and its own obligations (if any) are proved."""
        if own is None and lemma.rule not in RULES:
            return LemmaResult(lemma.name, Status.UNKNOWN, 0.0, 0, lemma.expect, "not run")
        if own is not None and not own.accepted:
            return own
        seconds, count = (own.seconds, own.obligations) if own is not None else (0.0, 0)
        note = own.note if own is not None else ""
        gaps: list[str] = []
        if lemma.rule in RULES and not lemma.premises:
            gaps.append(f"{lemma.rule.value} from no premises")
        if lemma.rule is Rule.STATEMENTS and ST_SEQ not in lemma.premises:
            gaps.append(f"induction on statements without {ST_SEQ} (nothing composes the steps)")
        if lemma.rule is Rule.STRUCTURAL:
            covered = {c for p in lemma.premises if p in self.lemmas for c in self.lemmas[p].cases}
            uncovered = [c for c in core_cases() if c not in covered]
            if uncovered:
                gaps.append("no step lemma for case(s) " + ", ".join(uncovered))
            note = f"{len(core_cases())} cases"
        if gaps:
            return LemmaResult(lemma.name, Status.INCOMPLETE, seconds, count, lemma.expect, "; ".join(gaps),
                               None, note)
        missing = [p for p in lemma.premises if p not in self.results or not self.results[p].accepted]
        if missing:
            names = [p if p in self.lemmas else f"{p} (not among the lemmas run)" for p in missing]
            return LemmaResult(lemma.name, Status.UNKNOWN, seconds, count, lemma.expect,
                               "premise not accepted: " + ", ".join(names), None, note)
        # every premise is here and accepted: each instance used must be of that very statement
        for alternatives in own.instances if own is not None else ():
            if not any(p in self.results and self.results[p].key == key for p, key in alternatives):
                return LemmaResult(lemma.name, Status.INCOMPLETE, seconds, count, lemma.expect,
                                   f"uses an instance of a statement named {alternatives[0][0]} that is not "
                                   "the lemma of that name", None, note)
        # Accepted: by this rule, from its own obligations (accepted above) and its premises.  The
        # status is the rule's conclusion, not ``own``'s, so the check of ``own`` above is the only
        # place its failures are caught (a wrong proof whose own obligation is unknown needs it).
        status = Status.PROVED if lemma.expect is Expect.PROVED else Status.REFUTED
        return LemmaResult(lemma.name, status, seconds, count, lemma.expect, own.failed if own else None,
                           own.counterexample if own else None, note, rlimit=own.rlimit if own else 0,
                           key=own.key if own else "")


RULES = (Rule.STRUCTURAL, Rule.STATEMENTS, Rule.COROLLARY)


def derived(lemmas: Iterable[Lemma]) -> Iterator[Lemma]:
    """Lemmas with premises (rule-derived, or using instances of others), premises first."""
    pending = [lem for lem in lemmas if lem.rule in RULES or lem.premises]
    names = {lem.name for lem in pending}
    done: set[str] = set()
    while pending:
        progress = False
        for lem in list(pending):
            if all(p not in names or p in done for p in lem.premises):
                yield lem
                done.add(lem.name)
                pending.remove(lem)
                progress = True
        if not progress:
            raise ValueError("cyclic premises among " + ", ".join(lem.name for lem in pending))


def by_name(lemmas: Iterable[Lemma]) -> dict[str, Lemma]:
    """The lemmas by name.  A premise is named, so two lemmas of one name would let an accepted
    one stand for a refuted one (review r26b): refused."""
    out: dict[str, Lemma] = {}
    for lem in lemmas:
        if lem.name in out:
            raise ValueError(f"two lemmas are named {lem.name!r}: a premise could not say which")
        out[lem.name] = lem
    return out


def decide(lemmas: Sequence[Lemma]) -> dict[str, LemmaResult]:
    """Every lemma decided in this process: Z3 lemmas by :func:`check_lemma`, then the derived
    ones by :meth:`Book.conclude` -- what ``make verify`` does, without the worker pool."""
    book = Book(by_name(lemmas))
    own = {lem.name: check_lemma(lem) for lem in lemmas if lem.own}
    book.results.update(own)
    for lem in derived(lemmas):
        book.results[lem.name] = book.conclude(lem, own.get(lem.name))
    return book.results
