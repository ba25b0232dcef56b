"""The proof kernel of ``make verify``: everything it trusts besides Z3.

A :class:`Lemma` is a named statement with its paper counterpart.  It is
*accepted* in one of two ways, and in no other:

1. **Z3** (``Rule.Z3``): the lemma's obligations are built -- by running the
   equations of ``core_teil/eval.py`` and the rules of ``core_teil/typing.py``
   over Z3 terms -- and every obligation (hypotheses ∧ ¬claim) is ``unsat``
   under a solver with ``random_seed`` 42 and a resource limit.  An expected
   refutation (``Expect.REFUTED``: a verbatim claim of the report that is false
   for Core-TeIL) is accepted when some obligation is ``sat``; its model is the
   printed counterexample.
2. **A rule of this kernel**, each written once here:

   * :func:`sum_induction` (induction on the bound of a sum): from
     ``base: P(lo)``, ``mono: premise(n+1) -> premise(n)`` and
     ``step: premise(n+1) ∧ concl(n) -> concl(n+1)``, all over free constants,
     conclude ``∀n >= lo. premise(n) -> concl(n)``.  The three are ordinary Z3
     obligations; the rule only fixes their shape.
   * ``Rule.STRUCTURAL`` (structural induction on expressions): the
     conclusion holds for every expression when a step lemma is accepted for
     every case of :func:`core_cases` -- one per constructor of the Core
     dialect as ``typing._DIALECT`` lists them, ``Elem`` split by operator.  A
     step lemma is proved over a *hole*: the child is a variable of the
     child's type (symbolic extents), which stands for any expression of that
     type satisfying the induction hypothesis.  This is sound because the
     equations of ``eval.py`` touch a child only through ``denote(child, k)``
     and ``sem.type(child)``, so the step sees exactly what the hypothesis
     speaks about.  Where the hypothesis is itself quantified over indices
     (padding simulation), the obligation carries its instances at the indices
     where the equation reads the hole, and the summation variables in those
     indices are constrained to their ranges (sound: the extents are >= 1, so
     the constraint is satisfiable, and the constants occur nowhere else free).
   * ``Rule.STATEMENTS`` (induction on the length of the statement list, paper
     Theorem 4.6): the conclusion holds for every program when its base
     obligations are ``unsat`` and its step lemma (one statement, arbitrary
     memory satisfying the invariant) and St-Seq lemma are accepted.

A lemma that uses instances of other lemmas (the sum lemmas, instantiated
for the uninterpreted ``SUM`` of ``core_teil/symbolic.py``) names them in
``premises``; it is accepted only if they are.  Instances are sound because
``SUM`` means ``SUMrec`` (``proofs/sums.py``), for which the lemmas are proved:
a model with ``SUM := SUMrec`` satisfies every instance.  If building an
obligation raises (an equation indexes past a tuple, Z3 rejects an index of
the wrong arity), the semantics is *stuck* on a well-typed input: the lemma is
refuted with that message, never skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum

import z3

from core_teil import typing as ty
from core_teil.syntax import ELEM_OPS, Elem

#: Fixed seed and resource limit on every solver (Z3-NOTES.md, "Reproducibility").
SEED = 42
RLIMIT = 8_000_000
#: A safety net only: rlimit decides; this stops a pathological run from hanging ``make verify``.
SAFETY_TIMEOUT_MS = 60_000
#: Every rank-indexed lemma is instantiated for all ranks 0..RANK_BOUND (docs/lemmas.md, "Rank bound").
RANK_BOUND = 6


class Status(Enum):
    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"


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


@dataclass(frozen=True)
class Obligation:
    """``formula`` is hypotheses ∧ ¬claim: the claim holds when it is ``unsat``."""

    name: str
    formula: z3.BoolRef
    explain: Callable[[z3.ModelRef], str] | None = None
    #: Constraints tried in turn on a counterexample to make it small (Alive2 shrinks first).
    prefer: tuple[z3.BoolRef, ...] = ()


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

    @property
    def accepted(self) -> bool:
        return self.status.value == self.expect.value and not self.stuck


class Stuck(Exception):
    """The semantics could not proceed on a well-typed input (raised while building)."""


# --------------------------------------------------------------------------
# Discharging obligations
# --------------------------------------------------------------------------


def solver(ctx: z3.Context | None = None) -> z3.Solver:
    s = z3.Solver(ctx=ctx)
    s.set("random_seed", SEED)
    s.set("rlimit", RLIMIT)
    s.set("timeout", SAFETY_TIMEOUT_MS)
    return s


def discharge(ob: Obligation, ctx: z3.Context | None = None) -> Outcome:
    """Decide one obligation in ``ctx``, a Z3 context that holds only its lemma's obligations
    (a new one if none is given).

    In the shared context the same formula was proved in 0.1 s or left unknown at the
    rlimit, depending on what the worker process had built before it (term ids, and so
    the solver's choices, follow creation order).  Copied into a context of the lemma's
    own, the outcome is a function of the lemma and the seed."""
    ctx = ctx or z3.Context()
    s = solver(ctx)
    s.add(ob.formula.translate(ctx))
    t0 = time.perf_counter()
    r = s.check()
    dt = time.perf_counter() - t0
    spent = _rlimit_count(s)
    if r == z3.unsat:
        return Outcome(ob.name, Status.PROVED, dt, rlimit=spent)
    if r == z3.sat:
        for c in ob.prefer:
            s.push()
            s.add(c.translate(ctx))
            if s.check() != z3.sat:
                s.pop()
        s.check()
        model = s.model().translate(z3.main_ctx())
        try:
            text = ob.explain(model) if ob.explain else render_model(model)
        except Exception as exc:  # a counterexample printer must never hide the refutation itself
            text = f"{render_model(model)} (explanation failed: {type(exc).__name__}: {exc})"
        return Outcome(ob.name, Status.REFUTED, dt, text, spent)
    return Outcome(ob.name, Status.UNKNOWN, dt, s.reason_unknown(), spent)


def _rlimit_count(s: z3.Solver) -> int:
    try:
        return int(s.statistics().get_key_value("rlimit count"))
    except z3.Z3Exception:  # a check that did no work reports no count
        return 0


def render_model(model: z3.ModelRef, limit: int = 12) -> str:
    """The constants of a model, smallest names first (Alive2 lists every input)."""
    items = []
    for d in sorted(model.decls(), key=lambda d: (len(d.name()), d.name())):
        if d.arity() == 0:
            items.append(f"{d.name()} = {model[d]}")
    more = f", ... ({len(items) - limit} more)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def check_lemma(lemma: Lemma, stop_at_first: bool = False) -> LemmaResult:
    """Build and discharge a Z3 lemma (rules are concluded by :func:`conclude`)."""
    assert lemma.build is not None, f"{lemma.name} has no obligations of its own"
    t0 = time.perf_counter()
    count = 0
    worst: Outcome | None = None
    expect_sat = lemma.expect is Expect.REFUTED
    obligations: Iterator[Obligation] = iter(())
    try:
        obligations = iter(lemma.build())
        ctx = z3.Context()
        for ob in obligations:
            count += 1
            out = discharge(ob, ctx)
            if out.status is Status.PROVED:
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
                           f"obligation {count + 1} (while building)", msg, stuck=True)
    finally:
        # A builder may hold a patched semantics open while it yields (an
        # expected refutation); closing it restores the code before we return.
        close = getattr(obligations, "close", None)
        if close is not None:
            close()
    dt = time.perf_counter() - t0
    if count == 0:
        return LemmaResult(lemma.name, Status.UNKNOWN, dt, 0, lemma.expect, None, None,
                           "no obligation: the statement is vacuous")
    if worst is None:
        status = Status.PROVED
    elif worst.status is Status.REFUTED:
        status = Status.REFUTED
    else:
        status = Status.UNKNOWN
    if expect_sat and status is Status.PROVED:
        return LemmaResult(lemma.name, status, dt, count, lemma.expect, None, None,
                           "expected a refutation, but every obligation was unsat")
    return LemmaResult(lemma.name, status, dt, count, lemma.expect,
                       worst.name if worst else None, worst.counterexample if worst else None)


# --------------------------------------------------------------------------
# Rule: induction on the bound of a sum
# --------------------------------------------------------------------------

Formula = Callable[[z3.ArithRef], z3.BoolRef]


def sum_induction(name: str, n: z3.ArithRef, lo: z3.ArithRef, premise: Formula, conclusion: Formula,
                  requires: Sequence[z3.BoolRef] = (), uses: Sequence[z3.BoolRef] = ()) -> list[Obligation]:
    """``∀n >= lo. premise(n) -> conclusion(n)`` by induction on ``n`` (Z3-NOTES.md, "Sums").

    ``requires`` constrains the lemma's other free constants; ``uses`` are
    instances of already accepted lemmas (the lemma lists them in ``premises``).
    """
    req = list(requires)
    base = z3.And(*req, *uses, premise(lo), z3.Not(conclusion(lo)))
    mono = z3.And(*req, *uses, n >= lo, premise(n + 1), z3.Not(premise(n)))
    step = z3.And(*req, *uses, n >= lo, premise(n + 1), conclusion(n), z3.Not(conclusion(n + 1)))
    return [Obligation(f"{name}: base", base), Obligation(f"{name}: premise is monotone", mono),
            Obligation(f"{name}: step n -> n+1", step)]


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
        missing = [p for p in lemma.premises if p not in self.results or not self.results[p].accepted]
        if own is not None and not own.accepted:
            return own
        note = own.note if own is not None else ""
        if lemma.rule is Rule.STRUCTURAL:
            covered = {c for p in lemma.premises for c in self.lemmas[p].cases}
            uncovered = [c for c in core_cases() if c not in covered]
            if uncovered:
                missing.append("no step lemma for case(s) " + ", ".join(uncovered))
            note = f"{len(core_cases())} cases"
        status = Status.PROVED if not missing else Status.UNKNOWN
        failed = None if not missing else "premise not accepted: " + ", ".join(missing)
        if own is not None and not missing:
            return own
        seconds, count = (own.seconds, own.obligations) if own is not None else (0.0, 0)
        return LemmaResult(lemma.name, status, seconds, count, lemma.expect, failed, None, note)


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
