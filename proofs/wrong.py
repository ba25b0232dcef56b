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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import z3

from core_teil.symbolic import SUM, UNDEF, ZERO, Value
from core_teil.syntax import Expa, Red, Var

from . import sums
from .kernel import (
    ST_SEQ,
    Expect,
    Lemma,
    LemmaResult,
    Obligation,
    Rule,
    Status,
    core_cases,
    decide,
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
    """A wrong proof: ``lemmas()[0]`` is its target, which the kernel must not accept."""

    name: str
    rule: str
    why: str
    lemmas: Callable[[], list[Lemma]]


def _stuck() -> list[Obligation]:
    return [(true_claim(),)[3]]  # an equation indexing past a tuple


def _ranks_zero_only() -> Iterator[Obligation]:
    yield true_claim("rank 0 only", rank=0)


def _steps(skip: str = "", bad: str = "", make_bad: Callable[[], Obligation] | None = None,
           mislabel: str = "") -> list[Lemma]:
    """One step lemma per induction case (true claims tagged with their case), with one left
    out (``skip``), one wrong (``bad``) or one claiming a case it does not build (``mislabel``)."""
    out = []
    for case in core_cases():
        if case == skip:
            continue
        built = "Var" if case == mislabel else case

        def build(case: str = case, built: str = built) -> list[Obligation]:
            if case == bad and make_bad is not None:
                return [make_bad()]
            return [true_claim(f"step {case}", case=built)]

        out.append(Lemma(f"step {case}", "wrong proof", f"step {case}", build, cases=(case,)))
    return out


def _structural(**kw: object) -> list[Lemma]:
    steps = _steps(**kw)  # type: ignore[arg-type]
    return [Lemma("every expression", "wrong proof", "by structural induction", None, Rule.STRUCTURAL,
                  premises=tuple(s.name for s in steps)), *steps]


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
    from .laws import Calc, Law, Use

    X = Var("X")

    def schemata() -> Iterator[tuple]:
        yield Red(Expa("d", X)), X, {"X": ()}, ("d",)

    def calc(inst: object, mu: dict, k: tuple) -> list[Calc]:
        d = inst.shapes.term("d")  # type: ignore[attr-defined]
        h = z3.Lambda([z3.Int("m!wrong")], mu["X"])
        if proof == "unjustified":
            return [Calc(None, ())]
        return [Calc(None, (Use(sums.ZERO_EXTENSION, (h, z3.IntVal(1)), d), Use(sums.CONSTANT, (h, mu["X"]),
                                                                                    z3.IntVal(1))))]

    law = Law("red (expa d X) ≅ X", "wrong proof", "red (expa d X) ≅ X", schemata,
              uses=("Sum-Zero-Extension", "Sum-Constant"), proof=calc, min_rank=None)
    return [law.lemma(), sums.ZERO_EXTENSION.lemma(), sums.CONSTANT.lemma()]


def _sum_hidden_contradiction() -> Obligation:
    """Hypotheses about SUM contradicted by the uses: the vacuity check must include them."""
    h = z3.Const("h!wrong", sums.VArr)
    n = z3.Int("n!wrong")
    return Obligation("SUM(h, n) = 0 among the hypotheses, ≠ 0 among the uses", (SUM(h, n) == ZERO,),
                      n < 0, uses=(SUM(h, n) != ZERO,))


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
               lambda: [z3_lemma("vacuous with uses", _sum_hidden_contradiction)]),
    WrongProof("Z3: a builder that gets stuck", "Z3", "a crash is no proof",
               lambda: [Lemma("stuck", "wrong proof", "-", _stuck)]),
    WrongProof("Z3: an expected refutation that is proved", "Z3", "no counterexample",
               lambda: [z3_lemma("refutation", true_claim, expect=Expect.REFUTED)]),
    WrongProof("Z3: an expected refutation that only gets stuck", "Z3", "a crash is no counterexample",
               lambda: [Lemma("stuck refutation", "wrong proof", "-", _stuck, expect=Expect.REFUTED)]),
    WrongProof("Z3: a rank-indexed lemma checked at rank 0 only", "Z3", "ranks 1..R not covered",
               lambda: [Lemma("[R] at rank 0", "wrong proof", "-", _ranks_zero_only, ranks=True)]),
    WrongProof("Z3: a step lemma claiming a case it never builds", "Z3", "the case label lies",
               lambda: [z3_lemma("step Red", lambda: true_claim(case="Var"), cases=("Red",))]),
    # Induction on the bound of a sum
    WrongProof("sum induction: a base that fails", "sum induction", "Σ_{1..0} h = 0, not 1", _base_fails),
    WrongProof("sum induction: a step that fails", "sum induction", "Σ h = 0 for every h", _step_fails),
    WrongProof("sum induction: a premise that is not monotone", "sum induction",
               "h(n+1) = 0 says nothing of h(1..n)", _not_monotone),
    WrongProof("sum induction: a helper that is not accepted", "sum induction", "its helper lemma is refuted",
               _unaccepted_helper),
    # Structural induction
    WrongProof("structural: a missing case", "structural induction", "no step for red",
               lambda: _structural(skip="Red")),
    WrongProof("structural: a refuted step", "structural induction", "the step for diag is false",
               lambda: _structural(bad="Diag", make_bad=false_claim)),
    WrongProof("structural: a step Z3 cannot decide", "structural induction", "the step for proj is unknown",
               lambda: _structural(bad="Proj", make_bad=undecidable)),
    WrongProof("structural: a vacuous step", "structural induction", "the step for expa assumes false",
               lambda: _structural(bad="Expa", make_bad=contradictory)),
    WrongProof("structural: a step that claims a case it does not build", "structural induction",
               "the 'step for contr' is about variables", lambda: _structural(mislabel="Contr")),
    WrongProof("structural: a premise that is not a lemma", "structural induction", "a ghost premise",
               lambda: [Lemma("every expression", "wrong proof", "-", None, Rule.STRUCTURAL,
                              premises=("ghost",))]),
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
    # Calculations (the cut rule, laws.Use)
    WrongProof("calculation: a use whose premise is false", "calculation",
               "Sum-Zero-Extension used where the summand is not 0", lambda: _calculation("false premise")),
    WrongProof("calculation: a link nothing justifies", "calculation", "red (expa d X) = X asserted",
               lambda: _calculation("unjustified")),
)

BY_NAME = {w.name: w for w in CORPUS}


def check(name: str) -> LemmaResult:
    """Decide one wrong proof with the kernel: PROVED (as it must be) if its target is rejected,
    REFUTED if the kernel accepts it -- then the kernel has been fooled."""
    w = BY_NAME[name.removeprefix(PREFIX)]
    t0 = time.perf_counter()
    lemmas = w.lemmas()
    results = decide(lemmas)
    target = results[lemmas[0].name]
    dt = time.perf_counter() - t0
    if target.accepted:
        return LemmaResult(PREFIX + w.name, Status.REFUTED, dt, 1, Expect.PROVED, w.rule,
                           f"the kernel accepted a wrong proof ({w.rule}: {w.why})")
    why = target.failed or target.note or target.counterexample or ""
    return LemmaResult(PREFIX + w.name, Status.PROVED, dt, 1, Expect.PROVED, None, None,
                       f"rejected ({target.status.value}): {why}")


def rules() -> dict[str, int]:
    """How many wrong proofs exercise each rule, in the corpus's order."""
    out: dict[str, int] = {}
    for w in CORPUS:
        out[w.rule] = out.get(w.rule, 0) + 1
    return out


def names() -> set[str]:
    """The wrong proofs as mutant targets name them."""
    return {PREFIX + w.name for w in CORPUS}
