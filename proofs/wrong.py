"""Wrong proofs the kernel must reject: the kernel of ``make verify`` tested like a proof kernel.

Every rule of :mod:`proofs.kernel` is exercised here with proofs that are
wrong in the ways a rule can be fooled: a false claim, an obligation Z3
cannot decide, no obligation at all, contradictory hypotheses (vacuity), a
builder that gets stuck, a rank or a claimed case left out, a base or a step
that fails, a premise that is not monotone, a missing induction case, a
premise that is refuted, unknown, absent or not a lemma at all, a rule with
no premises, a calculation that uses a lemma whose premise is false or a
link that nothing justifies.  Each entry is a small set of lemmas (its
*target* first) decided by the kernel exactly as ``make verify`` decides the
real ones (:func:`proofs.kernel.decide`); the target must not be accepted.

``make verify`` runs the corpus and fails if the kernel accepts any entry;
the mutants of the kernel's rules (:mod:`proofs.mutants`) are caught here:
each makes the kernel accept at least one of these wrong proofs.

The corpus is itself checked: every entry must be *witnessed* -- some mutant
of the catalogue, one that removes exactly the check the entry is about,
must make the kernel accept it (``make verify`` prints ``wrong proofs
witnessed``).  A wrong proof weakened so that it is rejected for another
reason as well (a base that also fails, a vacuous step made merely false, an
expected refutation no longer expected) is then noticed: the mutant of its
rule no longer makes the kernel accept it.

Besides lemmas, two other deciders are tested the same way: the verdict of
``make verify`` itself (:func:`proofs.run.report` on runs that must not end
``verified:``: a worker error, a wrong proof left undecided, a surviving
mutant, ...) and the side conditions of ``core_teil.lang.shapes`` (a condition Z3
cannot decide is not a condition that holds).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import z3

from core_teil.lang import typing as ty
from core_teil.lang.syntax import ELEM_OPS, Elem, Expa, Red, Var
from core_teil.semantics.symbolic import SUM, UNDEF, ZERO, Value

from . import kernel, sums
from .kernel import (
    RANK_BOUND,
    ST_SEQ,
    Expect,
    Lemma,
    LemmaResult,
    Obligation,
    Rule,
    Status,
    calculation,
    decide,
    sum_induction,
)

#: How a target is named in a mutant's targets.
PREFIX = "wrong: "

_x = z3.Int("x!wrong")


def true_claim(name: str = "x >= 1 ⟹ x >= 1", **tags: object) -> Obligation:
    """A true claim in a satisfiable context: proved, never vacuous."""
    return Obligation(name, (_x >= 1,), _x < 1, **tags)  # type: ignore[arg-type]


def false_claim(name: str = "x >= 1 ⟹ x >= 2") -> Obligation:
    return Obligation(name, (_x >= 1,), _x < 2)


def undecidable() -> Obligation:
    """Z3 answers ``unknown`` at once (a real power with a real exponent is outside its theories)."""
    r, q = z3.Reals("r!wrong q!wrong")
    return Obligation("no r with r³ = 2 and q^r = 3", (), z3.And(r ** 3 == 2, q ** r == 3))


def contradictory() -> Obligation:
    """A 'proof' from contradictory hypotheses: every goal is unsat under them."""
    return Obligation("x >= 1 ∧ x < 1 ⟹ x > 5", (_x >= 1, _x < 1), _x <= 5)


def z3_lemma(name: str, *obligations: Callable[[], Obligation], **kw: object) -> Lemma:
    return Lemma(name, "wrong proof", name, lambda: [make() for make in obligations], **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# The entries
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class WrongProof:
    """A wrong proof: ``lemmas()[0]`` is its target, which the kernel must not accept.

    ``variants`` makes it a family (each variant a list of lemmas, its target first: every one
    must be rejected); ``accepts`` replaces lemmas by another decider, returning why it accepted
    the wrong thing ('' if it did not)."""

    name: str
    rule: str
    why: str
    lemmas: Callable[[], list[Lemma]] | None = None
    variants: Callable[[], dict[str, list[Lemma]]] | None = None
    accepts: Callable[[], str] | None = field(default=None, compare=False)


def _stuck() -> list[Obligation]:
    return [(true_claim(),)[3]]  # an equation indexing past a tuple


def _ranks_zero_only() -> Iterator[Obligation]:
    yield true_claim("rank 0 only", rank=0)


def induction_cases() -> list[str]:
    """The cases a structural induction must cover, read here from the dialect table -- not from
    ``kernel.core_cases``, which is what these wrong proofs test."""
    out: list[str] = []
    for ctor in ty._DIALECT["core"]:
        out += [f"Elem.{op}" for op in ELEM_OPS] if ctor is Elem else [ctor.__name__]
    return sorted(out)


def _steps(skip: str = "", bad: str = "", make_bad: Callable[[], Obligation] | None = None,
           mislabel: str = "") -> list[Lemma]:
    """One step lemma per induction case (true claims tagged with their case), with one left
    out (``skip``), one wrong (``bad``) or one claiming a case it does not build (``mislabel``)."""
    out = []
    for case in induction_cases():
        if case == skip:
            continue
        built = "Var" if case == mislabel else case

        def build(case: str = case, built: str = built) -> list[Obligation]:
            if case == bad and make_bad is not None:  # tagged too: wrong in one way only
                return [replace(make_bad(), case=built)]
            return [true_claim(f"step {case}", case=built)]

        out.append(Lemma(f"step {case}", "wrong proof", f"step {case}", build, cases=(case,)))
    return out


def _structural(extra: tuple[str, ...] = (), **kw: object) -> list[Lemma]:
    steps = _steps(**kw)  # type: ignore[arg-type]
    return [Lemma("every expression", "wrong proof", "by structural induction", None, Rule.STRUCTURAL,
                  premises=(*(s.name for s in steps), *extra)), *steps]


def _each_case_missing() -> dict[str, list[Lemma]]:
    return {f"no step for {case}": _structural(skip=case) for case in induction_cases()}


def _ok(name: str) -> Lemma:
    return z3_lemma(name, lambda: true_claim(name))


def _statements(base: Callable[[], Obligation] | None, step: Lemma, seq: bool = True) -> list[Lemma]:
    premises = (step.name, *((ST_SEQ,) if seq else ()))
    target = Lemma("every program", "wrong proof", "by induction on statements",
                   (lambda: [base()]) if base else None, Rule.STATEMENTS, premises=premises)
    return [target, step, *([_ok(ST_SEQ)] if seq else [])]


def _corollary(*premises: Lemma, names: tuple[str, ...] | None = None) -> list[Lemma]:
    target = Lemma("corollary", "wrong proof", "from its premises", None, Rule.COROLLARY,
                   premises=names if names is not None else tuple(p.name for p in premises))
    return [target, *premises]


# -- sum induction -------------------------------------------------------------


def _false_law(name: str, premise: Callable[..., z3.BoolRef], conclusion: Callable[..., z3.BoolRef],
               uses: tuple[str, ...] = ()) -> Lemma:
    law = sums.SumLaw(name, name, lambda: (*sums._arrays("h"), z3.Const("c", Value)), premise, conclusion,
                      uses=uses)
    return law.lemma()


def _base_fails() -> list[Lemma]:
    """``h = 0 on [1, n] → Σ h = 1``: the step (1 + 0 = 1) and the monotonicity hold, the base
    (the empty sum is 0) does not.  Linear, so that Z3 decides the step at once."""
    return [_false_law("h = 0 → Σ h = 1", lambda S, h, c, n: sums.forall_in(1, n, lambda m: h[m] == ZERO),
                       lambda S, h, c, n: S(h, n) == Value.val(1))]


def _step_fails() -> list[Lemma]:
    """``Σ h = 0`` for every ``h``: the base (n = 0) holds, the step does not."""
    return [_false_law("Σ h = 0", lambda S, h, c, n: z3.BoolVal(True), lambda S, h, c, n: S(h, n) == ZERO)]


def _not_monotone() -> list[Lemma]:
    """``n >= 1 ∧ h(n) = 0 → Σ_{1..n} h = 0``: base and step hold, but the premise at n+1 says nothing
    about h(1..n) -- false for h = (1, 0)."""
    return [_false_law("h(n) = 0 → Σ h = 0", lambda S, h, c, n: z3.And(n >= 1, h[n] == ZERO),
                       lambda S, h, c, n: S(h, n) == ZERO)]


_n = z3.Int("n!wrong")
_c = z3.Int("c!wrong")


def _induction(name: str, premise: Callable[[z3.ArithRef], z3.BoolRef],
               conclusion: Callable[[z3.ArithRef], z3.BoolRef]) -> list[Lemma]:
    """``∀n >= 0. premise(n) -> conclusion(n)`` by the kernel's sum induction, from lo = 0."""
    return [Lemma(name, "wrong proof", name, lambda: sum_induction(name, _n, z3.IntVal(0), premise, conclusion),
                  Rule.SUM_INDUCTION)]


def _not_monotone_at_lo() -> list[Lemma]:
    """``n >= 1 → c = 0``: the base is vacuous (the premise fails at 0), the step and the
    monotonicity from n >= 1 hold; only premise(1) → premise(0) fails, at lo itself."""
    return _induction("n >= 1 → c = 0", lambda n: n >= 1, lambda n: _c == 0)


def _step_fails_at_lo() -> list[Lemma]:
    """``n = 0 ∨ c = 0`` for every n: true at 0, and every step from n >= 1 holds; the step 0 → 1 does not."""
    return _induction("n = 0 ∨ c = 0", lambda n: z3.BoolVal(True), lambda n: z3.Or(n == 0, _c == 0))


def _base_fails_at_lo() -> list[Lemma]:
    """``n <= 0 → c = 0``: the premise holds at lo only, so only the base (at lo, with the
    premise at lo) speaks -- and fails."""
    return _induction("n <= 0 → c = 0", lambda n: n <= 0, lambda n: _c == 0)


def _conclusion_fails_at_lo() -> list[Lemma]:
    """``n >= 1 ∨ c = 0`` for every n: false at 0 only, so only a base at lo sees it."""
    return _induction("n >= 1 ∨ c = 0", lambda n: z3.BoolVal(True), lambda n: z3.Or(n >= 1, _c == 0))


def _ranks(lo: int, hi: int, min_rank: int = 0) -> list[Lemma]:
    def build() -> Iterator[Obligation]:
        for r in range(lo, hi + 1):
            yield true_claim(f"rank {r}", rank=r)

    return [Lemma(f"[R] at ranks {lo}..{hi}", "wrong proof", "-", build, ranks=True, min_rank=min_rank)]


def _sum_under_binder() -> Obligation:
    """Hypotheses about SUM under a quantifier, contradicted by a genuine use (Sum-Absorb:
    h(1) = • makes Σ h = •): the search for SUM must look under binders."""
    h = z3.Const("h!wrong", sums.VArr)
    m = z3.Int("m!wrong")
    return Obligation("∀m. SUM(h, m) = 0 and h(1) = • among the hypotheses, Sum-Absorb among the uses",
                      (z3.ForAll([m], SUM(h, m) == ZERO), Value.is_undef(h[1]), _n >= 1), _n < 0,
                      uses=(sums.ABSORB.instance(SUM, (h, z3.IntVal(1)), _n),))


def _undecided_context() -> Obligation:
    """A goal refuted by linear facts, in a context Z3 cannot show satisfiable (a real power)."""
    r, q = z3.Reals("r!wrong q!wrong")
    return Obligation("x >= 1 ∧ r³ = 2 ∧ q^r = 3 ⟹ x >= 1", (_x >= 1, r ** 3 == 2, q ** r == 3), _x < 1)


def _captured(inner: str) -> list[Lemma]:
    """``λ(a, b). λc. H(a, b, c) = λ(a, b). λc. H(…)`` with the last term naming another binder:
    false, but the two sides are one term if the alpha-normal form gives the inner binder the
    name of an outer one (depth ignored: ``c`` named as ``a``; a two-variable binder counted as
    one: ``c`` named as ``b``)."""
    from .schema import canonical

    H = z3.Function("H!wrong", z3.IntSort(), z3.IntSort(), z3.IntSort(), z3.IntSort())
    a, b, c = z3.Ints("a!wrong b!wrong c!wrong")
    lhs = z3.Lambda([a, b], z3.Lambda([c], H(a, b, c)))
    rhs = z3.Lambda([a, b], z3.Lambda([c], H(c, b, c) if inner == "a" else H(a, c, c)))
    memo: dict = {}

    def build() -> list[Obligation]:
        obs, _ = calculation(f"λ(a, b). λc. H(a, b, c) = the same with {inner} for c", (_x >= 1,), lhs,
                             [(rhs, ())], normal=lambda f: canonical(f, memo))
        return obs

    name = f"λ(a, b). λc. H(a, b, c) ≅ {'H(c, b, c)' if inner == 'a' else 'H(a, c, c)'}"
    return [Lemma(name, "wrong proof", name, build, Rule.CALCULATION)]


def _instance_below_range() -> list[Lemma]:
    """``c = • → Σ_{1..0} h2 = •`` (false: the empty sum is 0) from an instance of
    Sum-Scalar-Left at n = 0, below its range n >= 1 (where it is false: • · 0 = •)."""
    h1, h2 = sums._arrays("h1!wrong", "h2!wrong")
    c = z3.Const("c!wrong", Value)
    zero = z3.IntVal(0)

    def build() -> list[Obligation]:
        return [Obligation("Σ_{1..0} h2 = • if c = •", (), z3.And(c == UNDEF, SUM(h2, zero) != UNDEF),
                           uses=(sums.SCALAR_LEFT.instance(SUM, (h1, h2, c), zero),))]

    return [Lemma("Σ_{1..0} h2 = • if c = •", "wrong proof", "-", build, premises=(sums.SCALAR_LEFT.name,)),
            sums.SCALAR_LEFT.lemma()]


def _instance_without_requirement() -> list[Lemma]:
    """``h(1) = 0 → Σ_{1..1} h = •`` (false) from an instance of Sum-Absorb at m0 = 1, where its
    requirement (``h(m0) = •``) does not hold."""
    (h,) = sums._arrays("h!wrong")
    one = z3.IntVal(1)

    def build() -> list[Obligation]:
        return [Obligation("Σ_{1..1} h = • if h(1) = 0", (h[one] == ZERO,), z3.Not(sums.IS_UNDEF(SUM(h, one))),
                           uses=(sums.ABSORB.instance(SUM, (h, one), one),))]

    return [Lemma("Σ_{1..1} h = • if h(1) = 0", "wrong proof", "-", build, premises=(sums.ABSORB.name,)),
            sums.ABSORB.lemma()]


def _instance_premise_elsewhere() -> list[Lemma]:
    """``h1(1) = 0, h2(1) = 1 → Σ_{1..1} h1 = Σ_{1..1} h2`` (false) from an instance of
    Sum-Congruence at n = 1, whose premise ``h1 = h2 on [1, 1]`` fails: an instance must take
    its premise at the bound it concludes about."""
    h1, h2 = sums._arrays("h1!wrong", "h2!wrong")
    one = z3.IntVal(1)

    def build() -> list[Obligation]:
        return [Obligation("Σ_{1..1} h1 = Σ_{1..1} h2 if h1(1) = 0, h2(1) = 1",
                           (h1[one] == ZERO, h2[one] == Value.val(1)), SUM(h1, one) != SUM(h2, one),
                           uses=(sums.CONGRUENCE.instance(SUM, (h1, h2), one),))]

    return [Lemma("Σ h1 = Σ h2 from h1 ≠ h2", "wrong proof", "-", build, premises=(sums.CONGRUENCE.name,)),
            sums.CONGRUENCE.lemma()]


def _use_below_range() -> list[Lemma]:
    """``Σ_{1..0} h2 = c · Σ_{1..0} h1`` for ``c = •`` (false: 0 = •) by a calculation whose one
    link uses Sum-Scalar-Left at n = 0, below its range: the use's premise must say n >= 1."""
    h1, h2 = sums._arrays("h1!wrong", "h2!wrong")
    c = z3.Const("c!wrong", Value)
    zero = z3.IntVal(0)
    name = "Σ_{1..0} h2 = • · Σ_{1..0} h1"

    def build() -> list[Obligation]:
        from core_teil.semantics.symbolic import arith

        obs, _ = calculation(name, (c == UNDEF,), SUM(h2, zero),
                             [(arith("mul", c, SUM(h1, zero)), (sums.SCALAR_LEFT.cut((h1, h2, c), zero),))])
        return obs

    return [Lemma(name, "wrong proof", "-", build, Rule.CALCULATION, premises=(sums.SCALAR_LEFT.name,)),
            sums.SCALAR_LEFT.lemma()]


def _refusal_undecided() -> list[Lemma]:
    """``core-teil prove`` under a wrong semantics, with a resource limit so small that every
    obligation comes back unknown: an unknown is not a refusal."""
    from .prover import Refusal, refusal_lemma

    return [refusal_lemma(Refusal("prove: unknown as a refusal", "wrong proof", "-",
                                  "param n\ninput alloc X : [n]\noutput alloc Y : []\nY = red X\n",
                                  "red-past-padding", "padding-simulation", pad=2, timeout=1e-9))]


#: A side condition (28 == s) that holds -- s is the sum of a permutation of 1..7 -- but that Z3
#: cannot decide under the shape solver's rlimit (pigeonhole-like disequalities).
UNDECIDED_SIDE = "\n".join([
    "param s, " + ", ".join(f"x{i}" for i in range(1, 8)),
    *(f"assume x{i} <= 7" for i in range(1, 8)),
    *(f"assume x{i} != x{j}" for i, j in itertools.combinations(range(1, 8), 2)),
    "assume s == " + " + ".join(f"x{i}" for i in range(1, 8)),
    "alloc X : [s]", "alloc Y : [28]", "Y = X", ""])


def _side_undecided() -> str:
    from core_teil.errors import TeilError
    from core_teil.lang.parser import parse
    from core_teil.lang.typing import check_program

    try:
        check_program(parse(UNDECIDED_SIDE))
    except TeilError:
        return ""
    return "the program was typed: the side condition 28 == s was taken to hold"


# -- the verdict of make verify ---------------------------------------------------


def _verdict(perturb: str) -> Callable[[], str]:
    """A run of ``make verify`` in which everything passed, perturbed in one way; ``report`` must
    not end it ``verified:``.  The unperturbed run must end ``verified:`` (else the entry tests
    nothing)."""

    def accepts() -> str:
        from . import mutants
        from .corpus import Recheck
        from .run import Run, report

        # the one lemma of the run: named as the target of some mutant of the semantics
        name = next(t for m in mutants.CATALOGUE for t in m.targets if not t.startswith((PREFIX, mutants.MUTANT)))
        lemma = Lemma(name, "wrong proof", "-", lambda: [true_claim()])
        passed = LemmaResult(name, Status.PROVED, 0.0, 1)

        def run(perturbed: bool) -> Run:
            known = {lemma.name} | names()
            kills = {m.name: {t: LemmaResult(t, Status.REFUTED, 0.0, 1) for t in m.targets if t in known}
                     for m in mutants.CATALOGUE if any(t in known for t in m.targets)}
            wrong = {PREFIX + w.name: LemmaResult(PREFIX + w.name, Status.PROVED, 0.0, 1) for w in CORPUS}
            r = Run((lemma,), {lemma.name: passed}, kills, with_corpus=False, with_wrong=True, wrong=wrong)
            if not perturbed:
                return r
            first = PREFIX + CORPUS[0].name
            if perturb == "error":
                r.errors.append(f"lemma {name}: RuntimeError: a worker failed")
            elif perturb == "lemma refuted":
                r.results[lemma.name] = LemmaResult(name, Status.REFUTED, 0.0, 1)
            elif perturb == "lemma not run":
                r.results.clear()
            elif perturb in ("mutant survived", "mutant undecided"):
                m = next(m for m in mutants.CATALOGUE if lemma.name in m.targets)
                status = Status.PROVED if perturb == "mutant survived" else Status.UNKNOWN
                r.kills[m.name] = {lemma.name: LemmaResult(name, status, 0.0, 1)}
            elif perturb == "wrong proof accepted":
                r.wrong[first] = LemmaResult(first, Status.REFUTED, 0.0, 1)
            elif perturb == "wrong proof undecided":
                r.wrong[first] = LemmaResult(first, Status.UNKNOWN, 0.0, 1)
            elif perturb == "wrong proof not run":
                del r.wrong[first]
            elif perturb == "wrong proof unwitnessed":
                # a wrong proof whose only witness has other targets: that mutant is still killed
                witnesses = {t: [m for m in r.kills if t in r.kills[m]] for t in r.wrong}
                m, t = next((m, t) for m in r.kills for t in r.kills[m]
                            if witnesses.get(t) == [m] and len(r.kills[m]) > 1)
                r.kills[m][t] = LemmaResult(t, Status.PROVED, 0.0, 1)
            elif perturb == "corpus disagrees":
                r.with_corpus = True
                r.rechecks.append(Recheck("x.smt2", "unsat", "sat", None, 0.0))
            elif perturb == "partial":
                r.left_out = ("no corpus",)
            return r

        _, base = report(run(False), 0.0, [])
        if not base.startswith("verified:"):
            return f"the unperturbed run was declared {base.split(':')[0]!r}: the entry tests nothing"
        _, last = report(run(True), 0.0, [])
        return f"the run was declared {last.split(':')[0]!r}" if last.startswith("verified:") else ""

    return accepts


def _unaccepted_helper() -> list[Lemma]:
    """A true law whose proof names a helper lemma that is refuted."""
    helper = z3_lemma("a false helper", false_claim)
    law = _false_law("Σ h ∈ V ∪ {•}", lambda S, h, c, n: z3.BoolVal(True),
                     lambda S, h, c, n: z3.Or(S(h, n) == UNDEF, S(h, n) != UNDEF), uses=(helper.name,))
    return [law, helper]


# -- calculations ---------------------------------------------------------------


def _calculation(proof: str) -> list[Lemma]:
    """``red (expa d X) ≅ X`` (false: it is d·X), 'proved' by a calculation that uses
    Sum-Zero-Extension where its premise (the summand is 0 beyond 1) is false, or by a link
    that nothing justifies."""
    from .laws import Calc, Law

    X = Var("X")

    def schemata() -> Iterator[tuple]:
        yield Red(Expa("d", X)), X, {"X": ()}, ("d",)

    def calc(inst: object, mu: dict, k: tuple) -> list[Calc]:
        d = inst.shapes.term("d")  # type: ignore[attr-defined]
        h = z3.Lambda([z3.Int("m!wrong")], mu["X"])
        if proof == "unjustified":
            return [Calc(None, ())]
        return [Calc(None, (sums.ZERO_EXTENSION.cut((h, z3.IntVal(1)), d), sums.CONSTANT.cut((h, mu["X"]),
                                                                                    z3.IntVal(1))))]

    law = Law("red (expa d X) ≅ X", "wrong proof", "red (expa d X) ≅ X", schemata,
              uses=("Sum-Zero-Extension", "Sum-Constant"), proof=calc, min_rank=None)
    return [law.lemma(), sums.ZERO_EXTENSION.lemma(), sums.CONSTANT.lemma()]


def _sum_hidden_contradiction() -> Obligation:
    """Hypotheses about SUM contradicted by a genuine use (Sum-Absorb): the vacuity check
    must include the uses when the hypotheses mention SUM."""
    h = z3.Const("h!wrong", sums.VArr)
    n = z3.Int("n!wrong")
    return Obligation("SUM(h, n) = 0 and h(1) = • among the hypotheses, Sum-Absorb among the uses",
                      (SUM(h, n) == ZERO, Value.is_undef(h[1]), n >= 1), n < 0,
                      uses=(sums.ABSORB.instance(SUM, (h, z3.IntVal(1)), n),))


def _use_contradicting_hypotheses() -> Obligation:
    """``x >= 1 ⊢ x >= 2`` with ``x < 1`` among the uses: no instance of anything (review r26b)."""
    return Obligation("x >= 1 ⊢ x >= 2, x < 1 a use", (_n >= 1,), _n < 2, uses=(_n < 1,))


def _uses_contradicting_each_other() -> Obligation:
    """Two "uses" about SUM that contradict each other, the hypotheses free of SUM (review r26b)."""
    h = z3.Const("h!wrong", sums.VArr)
    return Obligation("x >= 1 ⊢ x >= 2, SUM(h, x) = 0 and ≠ 0 as uses", (_n >= 1,), _n < 2,
                      uses=(SUM(h, _n) == ZERO, SUM(h, _n) != ZERO))


def _namesake_law_instance() -> Obligation:
    """A law built under Sum-Absorb's name that states the claim: its instance is no instance of
    the proved Sum-Absorb (review r26d)."""
    namesake = sums.SumLaw(sums.ABSORB.name, "x >= 2", lambda: (), lambda S, n: z3.BoolVal(True),
                           lambda S, n: _n >= 2)
    return Obligation("x >= 1 ⊢ x >= 2, a namesake of Sum-Absorb used", (_n >= 1,), _n < 2,
                      uses=(namesake.instance(SUM, (), z3.IntVal(0)),))


def _claim_as_a_use() -> Obligation:
    """The claim itself as a "use", Sum-Absorb named as the premise (review r26b)."""
    return Obligation("x >= 1 ⊢ x >= 2, x >= 2 a use", (_n >= 1,), _n < 2, uses=(_n >= 2,))


def _renamed_into_the_claim() -> Obligation:
    """A genuine Sum-Absorb instance "renamed" by a normal form that returns the claim (review
    r26d): a normal form may rename bound variables, nothing else."""
    h = z3.Const("h!wrong", sums.VArr)
    real = sums.ABSORB.instance(SUM, (h, z3.IntVal(1)), _n)
    return Obligation("x >= 1 ⊢ x >= 2, a use renamed into x >= 2", (_n >= 1,), _n < 2,
                      uses=(kernel.renamed(real, lambda f: _n >= 2),))


def _hide(f: z3.BoolRef) -> z3.BoolRef:
    """A "normal form" that turns every disequation into False."""
    if z3.is_distinct(f) or (z3.is_not(f) and z3.is_eq(f.arg(0))):
        return z3.BoolVal(False)
    return f


def _normal_hides_the_step() -> list[Lemma]:
    """``x >= 1 ⊢ x >= 2`` from the link ``x = x + 1``, whose step a normal form hides (r26d)."""
    def build() -> Iterator[Obligation]:
        steps, links = calculation("x = x + 1", (_n >= 1,), _n, [(_n + 1, ())], normal=_hide)
        yield from steps
        yield Obligation("x >= 1 ⊢ x >= 2 from the link", (_n >= 1,), _n < 2, uses=tuple(links))

    return [Lemma("x >= 1 ⊢ x >= 2 by a hidden step", "wrong proof", "-", build, Rule.CALCULATION)]


def _cut_not_made_by_the_kernel() -> list[Lemma]:
    """A copy of a genuine Sum-Absorb cut with premise True and the claim as its conclusion
    (review r26d: the cut rule trusted any object's conclusion)."""
    h = z3.Const("h!wrong", sums.VArr)

    def build() -> Iterator[Obligation]:
        fake = replace(sums.ABSORB.cut((h, z3.IntVal(1)), _n), premise=z3.BoolVal(True), conclusion=_n >= 2)
        steps, _ = calculation("x = x by a fake cut", (_n >= 1,), _n, [(_n, (fake,))])
        yield from steps
        yield Obligation("x >= 1 ⊢ x >= 2 from the cut's conclusion", (_n >= 1,), _n < 2, uses=steps[-1].uses)

    return [Lemma("x >= 1 ⊢ x >= 2 by a fake cut", "wrong proof", "-", build, Rule.CALCULATION,
                  premises=(sums.ABSORB.name,)), sums.ABSORB.lemma()]


def _link_where_hypotheses_fail() -> list[Lemma]:
    """The link ``y = 1``, proved under ``y = 1``, used where only ``y >= 0`` holds (review r26d)."""
    def build() -> Iterator[Obligation]:
        steps, links = calculation("y = 1 under y = 1", (_n == 1,), _n, [(z3.IntVal(1), ())])
        yield from steps
        yield Obligation("y >= 0 ⊢ y = 1", (_n >= 0,), _n != 1, uses=tuple(links))

    return [Lemma("y >= 0 ⊢ y = 1 by a link proved under y = 1", "wrong proof", "-", build, Rule.CALCULATION)]


def _cut_where_premise_fails() -> list[Lemma]:
    """Sum-Absorb cut where ``h(1) = •`` (its premise holds there), its conclusion ``Σ h = •`` then
    used where ``h(1)`` is defined."""
    h = z3.Const("h!wrong", sums.VArr)

    def build() -> Iterator[Obligation]:
        steps, _ = calculation("Σ h = Σ h where h(1) = •", (_n >= 1, Value.is_undef(h[1])), SUM(h, _n),
                               [(SUM(h, _n), (sums.ABSORB.cut((h, z3.IntVal(1)), _n),))])
        yield from steps
        yield Obligation("h(1) defined ⊢ Σ_{1..n} h = •", (_n >= 1, z3.Not(Value.is_undef(h[1]))),
                         z3.Not(Value.is_undef(SUM(h, _n))), uses=steps[-1].uses)

    return [Lemma("Σ h = • where h(1) is defined, by a cut made where it is not", "wrong proof", "-", build,
                  Rule.CALCULATION, premises=(sums.ABSORB.name,)), sums.ABSORB.lemma()]


_G: list[z3.FuncDeclRef] = []


def _no_model() -> z3.FuncDeclRef:
    """``g(k) = g(k) + 1``, defined once (Z3 refuses a second definition of a name)."""
    if not _G:
        g, k = z3.RecFunction("g!wrong", z3.IntSort(), z3.IntSort()), z3.Int("k!wrong")
        z3.RecAddDefinition(g, [k], g(k) + 1)
        _G.append(g)
    return _G[0]


def _definition_without_a_model() -> list[Lemma]:
    """``x >= 1 ⊢ x >= 2`` from a genuine Sum-Defined instance at ``n = g(0)``, where
    ``g(k) = g(k) + 1`` is a recursive definition that no function satisfies (review r27)."""
    g = _no_model()
    h = z3.Const("h!wrong", sums.VArr)

    def build() -> list[Obligation]:
        return [Obligation("x >= 1 ⊢ x >= 2, Sum-Defined at n = g(0)", (_n >= 1,), _n < 2,
                           uses=(sums.DEFINED.instance(SUM, (h,), g(0)),))]

    return [Lemma("x >= 1 ⊢ x >= 2 by g(k) = g(k) + 1", "wrong proof", "-", build,
                  premises=(sums.DEFINED.name,)), sums.DEFINED.lemma()]


def _statement_printed_alike() -> list[Lemma]:
    """Two statements that print alike: ``∀m. m = m`` (proved) and ``∀m. m = m₀`` with a free
    constant ``m₀`` named ``m`` (false); an instance of the second is no instance of the first
    (review r27: keys were digests of the printed text)."""
    h, n, m = z3.Const("h!wrong", sums.VArr), z3.Int("n!wrong"), z3.Int("m")
    free = z3.Int("k!wrong")
    true = kernel.SumStatement("Printed alike", (h,), n, z3.IntVal(0), (), z3.BoolVal(True), z3.ForAll([m], m == m))
    false = kernel.SumStatement("Printed alike", (h,), n, z3.IntVal(0), (), z3.BoolVal(True),
                                z3.substitute(z3.ForAll([m], m == free), (free, m)))

    def build() -> list[Obligation]:
        return [Obligation("x >= 1 ⊢ x >= 2, an instance of ∀m. m = m₀", (_n >= 1,), _n < 2,
                           uses=(false.instance(kernel.SUMREC, (h,), z3.IntVal(0)),))]

    return [Lemma("x >= 1 ⊢ x >= 2 by a statement printed alike", "wrong proof", "-", build,
                  premises=("Printed alike",)),
            Lemma("Printed alike", "wrong proof", "∀m. m = m", None, Rule.SUM_INDUCTION, law=lambda: true)]


CORPUS: tuple[WrongProof, ...] = (
    # Rule Z3
    WrongProof("Z3: a false claim", "Z3", "its obligation is sat", lambda: [z3_lemma("false", false_claim)]),
    WrongProof("Z3: an obligation Z3 cannot decide", "Z3", "unknown is not proved",
               lambda: [z3_lemma("undecided", undecidable)]),
    WrongProof("Z3: no obligation at all", "Z3", "nothing was checked",
               lambda: [Lemma("empty", "wrong proof", "-", lambda: [])]),
    WrongProof("Z3: contradictory hypotheses", "Z3", "vacuous",
               lambda: [z3_lemma("vacuous", contradictory)]),
    WrongProof("Z3: contradictory hypotheses hidden by SUM instances", "Z3",
               "the uses contradict hypotheses that mention SUM",
               lambda: [z3_lemma("vacuous with uses", _sum_hidden_contradiction, premises=(sums.ABSORB.name,)),
                        sums.ABSORB.lemma()]),
    WrongProof("Z3: a builder that gets stuck", "Z3", "a crash is no proof",
               lambda: [Lemma("stuck", "wrong proof", "-", _stuck)]),
    WrongProof("Z3: an expected refutation that is proved", "Z3", "no counterexample",
               lambda: [z3_lemma("refutation", true_claim, expect=Expect.REFUTED)]),
    WrongProof("Z3: an expected refutation that only gets stuck", "Z3", "a crash is no counterexample",
               lambda: [Lemma("stuck refutation", "wrong proof", "-", _stuck, expect=Expect.REFUTED)]),
    WrongProof("Z3: a rank-indexed lemma checked at rank 0 only", "Z3", "ranks 1..R not covered",
               lambda: [Lemma("[R] at rank 0", "wrong proof", "-", _ranks_zero_only, ranks=True)]),
    WrongProof("Z3: a rank-indexed lemma missing rank R", "Z3", f"rank {RANK_BOUND} not covered",
               lambda: _ranks(0, RANK_BOUND - 1)),
    WrongProof("Z3: a rank-indexed lemma missing its lowest rank", "Z3", "min_rank not covered",
               lambda: _ranks(2, RANK_BOUND, min_rank=1)),
    WrongProof("Z3: a step lemma claiming a case it never builds", "Z3", "the case label lies",
               lambda: [z3_lemma("step Red", lambda: true_claim(case="Var"), cases=("Red",))]),
    WrongProof("Z3: hypotheses Z3 cannot show satisfiable", "Z3", "unknown is no model",
               lambda: [z3_lemma("undecided context", _undecided_context)]),
    WrongProof("Z3: contradictory hypotheses about SUM under a binder", "Z3",
               "the uses contradict a quantified hypothesis that mentions SUM",
               lambda: [z3_lemma("vacuous under a binder", _sum_under_binder, premises=(sums.ABSORB.name,)),
                        sums.ABSORB.lemma()]),
    WrongProof("Z3: a use that contradicts the hypotheses", "Z3", "x < 1 is no instance of a lemma",
               lambda: [z3_lemma("use against the hypotheses", _use_contradicting_hypotheses)]),
    WrongProof("Z3: uses that contradict each other", "Z3", "SUM = 0 and SUM ≠ 0 are no instances",
               lambda: [z3_lemma("uses against each other", _uses_contradicting_each_other)]),
    WrongProof("Z3: an instance of a namesake law", "Z3", "another statement under Sum-Absorb's name",
               lambda: [z3_lemma("namesake instance", _namesake_law_instance, premises=(sums.ABSORB.name,)),
                        sums.ABSORB.lemma()]),
    WrongProof("Z3: the claim as a use", "Z3", "the claim is no instance of Sum-Absorb",
               lambda: [z3_lemma("claim as a use", _claim_as_a_use, premises=(sums.ABSORB.name,)),
                        sums.ABSORB.lemma()]),
    WrongProof("Z3: a recursive definition without a model", "Z3", "g(k) = g(k) + 1 makes every use of g unsat",
               _definition_without_a_model),
    WrongProof("premises: an instance of a statement printed like the proved one", "premises",
               "a free constant named like a bound variable", _statement_printed_alike),
    WrongProof("Z3: a use renamed into the claim", "Z3", "a normal form that is no renaming",
               lambda: [z3_lemma("use renamed into the claim", _renamed_into_the_claim,
                                 premises=(sums.ABSORB.name,)), sums.ABSORB.lemma()]),
    # Induction on the bound of a sum
    WrongProof("sum induction: a base that fails", "sum induction", "Σ_{1..0} h = 0, not 1", _base_fails),
    WrongProof("sum induction: a step that fails", "sum induction", "Σ h = 0 for every h", _step_fails),
    WrongProof("sum induction: a premise that is not monotone", "sum induction",
               "h(n+1) = 0 says nothing of h(1..n)", _not_monotone),
    WrongProof("sum induction: a helper that is not accepted", "sum induction", "its helper lemma is refuted",
               _unaccepted_helper),
    WrongProof("sum induction: a premise not monotone at lo", "sum induction", "premise(1) but not premise(0)",
               _not_monotone_at_lo),
    WrongProof("sum induction: a step that fails at lo", "sum induction", "the step 0 -> 1 fails", _step_fails_at_lo),
    WrongProof("sum induction: a base that fails, premise at lo only", "sum induction",
               "premise(0) ∧ ¬conclusion(0)", _base_fails_at_lo),
    WrongProof("sum induction: a conclusion that fails at lo only", "sum induction", "¬conclusion(0)",
               _conclusion_fails_at_lo),
    # Structural induction
    WrongProof("structural: a missing case (each case in turn)", "structural induction",
               "no step for one constructor", variants=_each_case_missing),
    WrongProof("structural: a refuted step", "structural induction", "the step for diag is false",
               lambda: _structural(bad="Diag", make_bad=false_claim)),
    WrongProof("structural: a step Z3 cannot decide", "structural induction", "the step for proj is unknown",
               lambda: _structural(bad="Proj", make_bad=undecidable)),
    WrongProof("structural: a vacuous step", "structural induction", "the step for expa assumes false",
               lambda: _structural(bad="Expa", make_bad=contradictory)),
    WrongProof("structural: a step that claims a case it does not build", "structural induction",
               "the 'step for contr' is about variables", lambda: _structural(mislabel="Contr")),
    WrongProof("structural: a premise that is not a lemma", "structural induction",
               "a ghost premise among the steps", lambda: _structural(extra=("ghost",))),
    WrongProof("structural: no premises", "structural induction", "an induction with no steps",
               lambda: [Lemma("every expression", "wrong proof", "-", None, Rule.STRUCTURAL)]),
    # Induction on statements
    WrongProof("statements: a base that fails", "induction on statements", "the initial store is wrong",
               lambda: _statements(false_claim, _ok("one statement"))),
    WrongProof("statements: a step that is refuted", "induction on statements", "one statement breaks it",
               lambda: _statements(true_claim, z3_lemma("one statement", false_claim))),
    WrongProof("statements: without St-Seq", "induction on statements", "nothing composes the steps",
               lambda: _statements(true_claim, _ok("one statement"), seq=False)),
    # Corollary
    WrongProof("corollary: a refuted premise", "corollary", "from a false lemma",
               lambda: _corollary(z3_lemma("premise", false_claim))),
    WrongProof("corollary: a premise Z3 cannot decide", "corollary", "from an unknown",
               lambda: _corollary(z3_lemma("premise", undecidable))),
    WrongProof("corollary: a vacuous premise", "corollary", "from a contradiction",
               lambda: _corollary(z3_lemma("premise", contradictory))),
    WrongProof("corollary: from no premises", "corollary", "from nothing", lambda: _corollary()),
    WrongProof("corollary: a premise that is not a lemma", "corollary", "a ghost premise",
               lambda: _corollary(names=("ghost",))),
    # Premises of a Z3 lemma (instances of another)
    WrongProof("premises: instances of a refuted lemma", "premises", "its own obligations hold, its premise not",
               lambda: [z3_lemma("user", true_claim, premises=("used",)), z3_lemma("used", false_claim)]),
    WrongProof("premises: own obligation Z3 cannot decide", "premises", "its premise holds, its own obligation is "
               "unknown", lambda: [z3_lemma("user", undecidable, premises=("used",)), _ok("used")]),
    WrongProof("premises: an instance of a sum law below its range", "premises",
               "Sum-Scalar-Left used at n = 0", _instance_below_range),
    WrongProof("premises: an instance of a sum law without its requirement", "premises",
               "Sum-Absorb used where h(m0) is not •", _instance_without_requirement),
    WrongProof("premises: an instance of a sum law whose premise fails", "premises",
               "Sum-Congruence used where h1(1) ≠ h2(1)", _instance_premise_elsewhere),
    # Calculations (the cut rule, SumLaw.cut)
    WrongProof("calculation: a use whose premise is false", "calculation",
               "Sum-Zero-Extension used where the summand is not 0", lambda: _calculation("false premise")),
    WrongProof("calculation: a link nothing justifies", "calculation", "red (expa d X) = X asserted",
               lambda: _calculation("unjustified")),
    WrongProof("calculation: a use below its range", "calculation", "Sum-Scalar-Left used at n = 0",
               _use_below_range),
    WrongProof("calculation: a link between terms equal only if a binder is captured", "calculation",
               "the inner binder named after the outer depth", lambda: _captured("a")),
    WrongProof("calculation: a link equal only if two binders count as one", "calculation",
               "a two-variable binder counted as one", lambda: _captured("b")),
    WrongProof("calculation: a normal form that is no renaming", "calculation",
               "every disequation normalised to False", _normal_hides_the_step),
    WrongProof("calculation: a cut the kernel did not make", "calculation",
               "a copy of a Sum-Absorb cut stating the claim", _cut_not_made_by_the_kernel),
    WrongProof("calculation: a link used where its hypotheses fail", "calculation",
               "y = 1 proved under y = 1, used under y >= 0", _link_where_hypotheses_fail),
    WrongProof("calculation: a cut's conclusion used where its premise fails", "calculation",
               "Sum-Absorb's conclusion used where h(1) is defined", _cut_where_premise_fails),
    # core-teil prove's refusals and side conditions (unknown is neither a refusal nor a proof)
    WrongProof("prove: an unknown counted as a refusal", "prove", "every obligation unknown (rlimit 1)",
               _refusal_undecided),
    WrongProof("shapes: a side condition Z3 cannot decide", "side conditions", "28 == s, unknown under the rlimit",
               accepts=_side_undecided),
    # The verdict of make verify (proofs.run.report): a run that must not end "verified:"
    *(WrongProof(f"verdict: {what}", "verdict", why, accepts=_verdict(what)) for what, why in (
        ("error", "a worker failed"), ("lemma refuted", "a lemma is not accepted"),
        ("lemma not run", "a lemma has no result"), ("mutant survived", "a mutant is not killed"),
        ("mutant undecided", "a mutant's target came back unknown"),
        ("wrong proof accepted", "the kernel accepted a wrong proof"),
        ("wrong proof undecided", "a wrong proof came back neither rejected nor accepted"),
        ("wrong proof not run", "a wrong proof has no result"),
        ("wrong proof unwitnessed", "no mutant makes the kernel accept a wrong proof"),
        ("corpus disagrees", "a corpus script disagrees with the manifest"),
        ("partial", "the run left something out"))),
)

BY_NAME = {w.name: w for w in CORPUS}


def check(name: str) -> LemmaResult:
    """Decide one wrong proof with the kernel: PROVED (as it must be) if its target is rejected,
    REFUTED if the kernel accepts it -- then the kernel has been fooled."""
    w = BY_NAME[name.removeprefix(PREFIX)]
    t0 = time.perf_counter()
    if w.accepts is not None:
        fooled = w.accepts()
        dt = time.perf_counter() - t0
        if fooled:
            return LemmaResult(PREFIX + w.name, Status.REFUTED, dt, 1, Expect.PROVED, w.rule,
                               f"accepted ({w.rule}: {w.why}): {fooled}")
        return LemmaResult(PREFIX + w.name, Status.PROVED, dt, 1, Expect.PROVED, None, None,
                           f"rejected ({w.rule}): {w.why}")
    variants = w.variants() if w.variants is not None else {"": w.lemmas()}  # type: ignore[misc]
    whys = []
    for label, lemmas in variants.items():
        target = decide(lemmas)[lemmas[0].name]
        if target.accepted:
            return LemmaResult(PREFIX + w.name, Status.REFUTED, time.perf_counter() - t0, len(variants),
                               Expect.PROVED, w.rule, f"the kernel accepted a wrong proof ({w.rule}: {w.why}"
                               + (f"; {label}" if label else "") + ")")
        whys.append(target.failed or target.note or target.counterexample or "")
    why = whys[0] if len(whys) == 1 else f"all {len(whys)} variants, e.g. {whys[0]}"
    return LemmaResult(PREFIX + w.name, Status.PROVED, time.perf_counter() - t0, len(variants), Expect.PROVED,
                       None, None, f"rejected ({target.status.value}): {why}")


def rules() -> dict[str, int]:
    """How many wrong proofs exercise each rule, in the corpus's order."""
    out: dict[str, int] = {}
    for w in CORPUS:
        out[w.rule] = out.get(w.rule, 0) + 1
    return out


def names() -> set[str]:
    """The wrong proofs as mutant targets name them."""
    return {PREFIX + w.name for w in CORPUS}

