"""What ``core-teil prove`` rests on, checked: its lemmas, its translations, and wrong semantics it must refuse.

The per-program obligations of :mod:`core_teil.proving.obligations` (and
:mod:`core_teil.proving.simulation`) are not the meta-theory's: they use padded
extents ``⌈d⌉ = M·q`` defined by hypotheses, abstract sums related by the
padded-sum lemma, shape conditions translated by ``shapes.py``, and Z3's
arithmetic in place of numpy's.  Each of those is a lemma here:

* ``Definition 4 (Z3 = numpy)`` -- ``symbolic.Z3Interpretation.arith`` (what
  the obligations are built with) and the reference engine's
  ``eval.ArrayInterpretation.arith`` (numpy, • as NaN) agree on a grid of
  values that meets every case of Definitions 4 and 8 (•, 0, negative,
  fractional), and so does the IEEE model ``padding.FloatInterpretation``
  (with ±inf).  They are two definitions in two value domains; this is the
  check that they are one function where the grid can tell.
* ``Assume translation`` -- ``ShapeSolver.cond`` against the concrete meaning
  of an ``assume``: the condition's text, which has Python's syntax, evaluated
  by Python on every parameter value of a grid.
* ``Padded extents (Definition 7)`` -- ``obligations.PaddedExtents``'s
  hypotheses ``M(q-1) < d <= M·q`` admit a ``q`` for *every* extent ``d >= 1``
  (an encoding that excluded some ``d`` would make every padded obligation
  silent about exactly those shapes) and then give ``M·q = ⌈d⌉``.
* ``PadSum`` -- the padded-sum lemma of ``simulation.py`` (its premises and
  conclusion are the very functions the per-program stages use) proved from
  the sum lemmas, for ``SUMrec``.

And, as expected refutations, wrong semantics under which ``core-teil prove``
(:func:`core_teil.proving.prove.prove`, the public entry point) must *not* certify a
small program -- so an obligation that checks too little, or assumes too
much, is caught where it is made:

* a padded ``red`` that sums one past ``⌈n⌉`` (``padding-simulation`` must
  say no: the padded store has nothing there);
* an initial padded store with 1 in the padding (``padded-store-initial``);
* a full-TeIL ``red i`` whose bound is the wrong extent (``lowering``);
* a semantics that gets stuck (an equation indexing past a tuple): some
  obligation of the statement is not proved.

And one property of the kernel that is not about acceptance: ``Counterexamples
canonical`` -- the printed counterexample is the canonical model
(``kernel.canonical_model``), checked by obligations on a sample refutation.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import z3

from core_teil.lang.parser import parse
from core_teil.lang.shapes import ShapeSolver, round_up
from core_teil.lang.syntax import ELEM_OPS
from core_teil.lang.typing import check_program
from core_teil.proving.obligations import PaddedExtents
from core_teil.proving.simulation import padsum_conclusion, padsum_premise
from core_teil.semantics import eval as ev
from core_teil.semantics.symbolic import UNDEF, SumNode, Z3Interpretation, val, z3_round_up

from . import kernel, sums
from .kernel import Expect, Lemma, Obligation

# --------------------------------------------------------------------------
# Definition 4 and 8: the Z3 arithmetic is the numpy arithmetic
# --------------------------------------------------------------------------

#: Every case of Definitions 4 and 8: •, 0, positive, negative, fractional; pairs of them.
GRID: tuple[float, ...] = (math.nan, 0.0, 1.0, -1.0, 2.5, -3.0, 0.5)
#: For the IEEE model: also the infinities (where floats leave V = ℝ).
FLOAT_GRID: tuple[float, ...] = (*GRID, math.inf, -math.inf)


def numpy_arith(op: str, a: float, b: float) -> float:
    """The reference engine's Definition 4/8 (``eval.ArrayInterpretation.arith``) on two scalars."""
    return float(ev.ArrayInterpretation.arith(None, op, np.float64(a), np.float64(b)))  # type: ignore[arg-type]


def _value(x: float) -> z3.ExprRef:
    return UNDEF if math.isnan(x) else val(z3.RealVal(Fraction(x)))


def _float_of_value(v: z3.ExprRef) -> float | None:
    """A simplified ``Value`` as a float (• as NaN); ``None`` if it did not simplify to a constant."""
    if v.eq(UNDEF):
        return math.nan
    if z3.is_app(v) and v.decl().name() == "val" and z3.is_rational_value(v.arg(0)):
        return float(v.arg(0).as_fraction())
    return None


def _same(a: float | None, b: float) -> bool:
    return a is not None and (a == b or (math.isnan(a) and math.isnan(b)))


def arith_obligations() -> Iterator[Obligation]:
    """One ground obligation per operator and interpretation: every grid pair agrees."""
    from .padding import FloatInterpretation

    z3_interp = Z3Interpretation(None)  # type: ignore[arg-type]  # arith touches no shapes
    for op in ELEM_OPS:
        bad = []
        for a, b in itertools.product(GRID, GRID):
            got = _float_of_value(z3.simplify(z3_interp.arith(op, _value(a), _value(b))))
            want = numpy_arith(op, a, b)
            if not _same(got, want):
                bad.append(f"{op}({a:g}, {b:g}): Z3 {got}, numpy {want:g}")
        yield Obligation(f"Z3Interpretation.arith {op} = ArrayInterpretation.arith {op} on {len(GRID)}² values", (),
                         z3.BoolVal(bool(bad)), lambda m, bad=bad: "; ".join(bad[:4]))
    fp = FloatInterpretation(None)  # type: ignore[arg-type]
    for op in ELEM_OPS:
        bad = []
        with np.errstate(all="ignore"):
            for a, b in itertools.product(FLOAT_GRID, FLOAT_GRID):
                fa, fb = z3.FPVal(a, z3.Float64()), z3.FPVal(b, z3.Float64())
                r = z3.simplify(fp.arith(op, fa, fb))
                got = _fp(r)
                want = numpy_arith(op, a, b)
                if not _same(got, want):
                    bad.append(f"{op}({a:g}, {b:g}): float64 model {got}, numpy {want:g}")
        yield Obligation(f"FloatInterpretation.arith {op} = ArrayInterpretation.arith {op} on {len(FLOAT_GRID)}² "
                         "values", (), z3.BoolVal(bool(bad)), lambda m, bad=bad: "; ".join(bad[:4]))


def _fp(v: z3.ExprRef) -> float | None:
    if not z3.is_fp_value(v):
        return None
    if v.isNaN():
        return math.nan
    if v.isInf():
        return -math.inf if v.isNegative() else math.inf
    return float(z3.simplify(z3.fpToReal(v)).as_fraction()) * (-1.0 if v.isZero() and v.isNegative() else 1.0)


# --------------------------------------------------------------------------
# The translation of ``assume`` conditions
# --------------------------------------------------------------------------

CONDITION_FORMS = ("n {op} m", "n {op} 2", "2*n + 1 {op} m", "n - m {op} 0")


def assume_obligations() -> Iterator[Obligation]:
    """``ShapeSolver.cond`` at concrete values is the condition's text evaluated by Python."""
    for form, op in itertools.product(CONDITION_FORMS, ("<=", "<", ">=", ">", "==", "!=")):
        text = form.format(op=op)
        program = parse(f"param n, m\nassume {text}\n")
        bad = []
        for n, m in itertools.product(range(1, 5), range(1, 5)):
            shapes = ShapeSolver(program, {"n": n, "m": m})
            got = z3.simplify(shapes.cond(program.conds[0]))
            want = bool(eval(text, {"__builtins__": {}}, {"n": n, "m": m}))  # the text is ours (CONDITION_FORMS)
            if not (z3.is_true(got) if want else z3.is_false(got)):
                bad.append(f"n = {n}, m = {m}: Z3 {got}, Python {want}")
        yield Obligation(f"assume {text}", (), z3.BoolVal(bool(bad)),
                         lambda model, text=text, bad=bad: f"assume {text}: " + "; ".join(bad[:3]))


# --------------------------------------------------------------------------
# Padded extents: Definition 7 as obligations.py writes it
# --------------------------------------------------------------------------

#: Vector lengths checked (the hypotheses are linear only for a concrete M).
PADS = tuple(range(1, 9))


def padded_extents_obligations() -> Iterator[Obligation]:
    program = parse("param n\nalloc X : [n]\n")
    typed = check_program(program)
    n = typed.solver.vars["n"]
    for pad in PADS:
        pe = PaddedExtents(typed, pad)
        witness = (n + (pad - 1)) / pad  # ⌈n / M⌉
        (q,) = pe._q.values()
        defined = z3.substitute(z3.And(*pe.hyps), (q, witness))
        yield Obligation(f"M = {pad}: every n >= 1 has its q (q = ⌈n/M⌉)", typed.solver.hypotheses(),
                         z3.Not(defined), lambda m, pad=pad, n=n: f"M = {pad}: no q for n = {m.eval(n)}",
                         prefer=(n <= 2 * pad,))
        yield Obligation(f"M = {pad}: M·q = ⌈n⌉", (*typed.solver.hypotheses(), *pe.hyps),
                         pe.term("n") != z3_round_up(n, pad))
        literal = [d for d in range(1, 3 * pad + 1) if z3.simplify(pe.ceil(z3.IntVal(d), pad)).as_long()
                   != round_up(d, pad)]
        yield Obligation(f"M = {pad}: literal extents 1..{3 * pad} rounded as shapes.round_up", (),
                         z3.BoolVal(bool(literal)), lambda m, literal=literal: f"wrong for {literal[:5]}")


# --------------------------------------------------------------------------
# The padded-sum lemma of simulation.py
# --------------------------------------------------------------------------


def padsum_obligations() -> Iterator[Obligation]:
    """PadSum for ``SUMrec``, with ``simulation.padsum_premise`` and ``padsum_conclusion``.

    D: a • term makes both sums • (Sum-Absorb: in the padding, h is • at n); otherwise the
    padding is 0 and the sums agree (Sum-Zero-Extension, Sum-Congruence).  ¬D: the padded sum
    is 0 or • (Sum-Zero-Or-Undef), and if it is •, a term is (Sum-Defined), so h(min(m, n)) is
    and so is Σ h (Sum-Absorb)."""
    S = sums.SUMREC
    h, hh = z3.Const("h!pad", sums.VArr), z3.Const("ĥ!pad", sums.VArr)
    n, N, m, w = z3.Int("n!pad"), z3.Int("N!pad"), z3.Int("m!pad"), z3.Int("w!pad")
    d = z3.Bool("D!pad")
    clamped = z3.Lambda([m], h[z3.If(m <= n, m, n)])
    padded_h = z3.Lambda([m], hh[m])
    original = SumNode(None, m, n, h[z3.If(m <= n, m, n)], (), S(clamped, n))  # type: ignore[arg-type]
    padded = SumNode(None, m, N, hh[m], (), S(padded_h, N))  # type: ignore[arg-type]
    premise = z3.ForAll([m], padsum_premise(padded, original, d))
    uses = [kernel.closed([w], sums.ABSORB.instance(S, (padded_h, w), N)),
            kernel.closed([w], sums.ABSORB.instance(S, (clamped, w), n)),
            sums.DEFINED.instance(S, (padded_h,), N),
            sums.ZERO_OR_UNDEF.instance(S, (padded_h,), N),
            sums.ZERO_EXTENSION.instance(S, (padded_h, n), N),
            sums.CONGRUENCE.instance(S, (padded_h, clamped), n)]
    def explain(model: z3.ModelRef) -> str:
        def show(t: z3.ExprRef) -> str:
            return str(model.eval(t, model_completion=True))

        def values(f: z3.ExprRef, upto: z3.ArithRef) -> str:
            count = model.eval(upto, model_completion=True)
            top = count.as_long() if z3.is_int_value(count) else 0
            return "(" + ", ".join(show(f[i]) for i in range(1, min(top, 4) + 1)) + ")"

        return (f"D = {show(d)}, n = {show(n)}, N = {show(N)}: ĥ = {values(hh, N)}, h = {values(h, n)}: "
                "the conclusion does not follow")

    yield Obligation("premises(∀m) ⟹ conclusion, D and ¬D", (premise,), z3.Not(padsum_conclusion(padded, original, d)),
                     explain, (n <= 2, N <= 2), tuple(uses))


# --------------------------------------------------------------------------
# The kernel's counterexamples are canonical
# --------------------------------------------------------------------------


def canonical_obligations() -> Iterator[Obligation]:
    """``kernel.canonical_model`` on a refutation whose printer shows an array first, then
    scalars: each shown scalar must hold the first value of its ladder that the formula allows
    once the earlier ones are pinned -- one obligation per ladder value skipped (it must not be
    allowed).  Z3's own model here differs from the canonical one in every scalar, so a pinning
    that stops early (or skips a term) leaves a value that an obligation shows was not the first."""
    from core_teil.semantics.symbolic import Value

    from . import kernel

    A = z3.Array("A!cx", z3.IntSort(), z3.IntSort())
    x, y = z3.Ints("x!cx y!cx")
    v = z3.Const("v!cx", Value)
    formula = z3.And(A[x] == 7, x + y == 3, x >= -4, y >= -4, z3.Or(v == val(2), v == UNDEF, v == val(-3)))
    shown = (x, y, v)

    def printer(m: z3.ModelRef) -> str:
        return f"A = {m.eval(A)}; " + ", ".join(f"{t} = {m.eval(t, model_completion=True)}" for t in shown)

    ctx = z3.Context()
    s = kernel.solver(ctx)
    s.add(formula.translate(ctx))
    if s.check() != z3.sat:
        yield Obligation("the sample refutation has a model", (), z3.BoolVal(True))
        return
    model = kernel.canonical_model(s, printer)
    pins: list[z3.BoolRef] = []
    for t in shown:
        got = model.eval(t, model_completion=True)
        ladder = kernel._ladder(t)
        skipped = next((ladder[:i] for i, c in enumerate(ladder) if z3.simplify(c == got).eq(z3.BoolVal(True))),
                       ladder)  # a value off the ladder: every ladder value must be excluded
        for c in skipped:
            yield Obligation(f"{t} = {c} is not allowed (the counterexample shows {t} = {got})", (formula, *pins),
                             t == c, lambda m, t=t, c=c, got=got: f"{t} = {c} is allowed, yet {got} was shown")
        pins.append(t == got)
    # The pinned model is a model: the last obligation's context (formula and every pin) is
    # checked for vacuity; one more obligation makes sure there is such a context.
    yield Obligation("the pinned values are a model of the formula", (formula, *pins), z3.BoolVal(False))


# --------------------------------------------------------------------------
# Wrong semantics `core-teil prove` must not certify
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """A program that ``core-teil prove`` must not certify under the wrong semantics ``variant``
    (a :class:`proofs.mutants.Mutant` of the semantics): some obligation of ``kind`` must come
    back with a status in ``statuses``."""

    name: str
    ref: str
    statement: str
    source: str
    variant: str
    kind: str
    pad: int | None = None
    statuses: tuple[str, ...] = ("refuted",)
    #: ``prove``'s timeout (its rlimit is derived from it); None: the default rlimit.
    timeout: float | None = None


REFUSALS: tuple[Refusal, ...] = (
    Refusal("prove: padded red past ⌈n⌉", "report Lemma 6 per program (simulation.py)",
            "a padded red summing to ⌈n⌉ + 1 reads beyond the padded store: padding-simulation must refute it",
            "param n\ninput alloc X : [n]\noutput alloc Y : []\nY = red X\n", "red-past-padding",
            "padding-simulation", pad=2),
    Refusal("prove: initial store padded with its border", "report Lemma 4 per program (d-pad-var)",
            "eval.d_pad_var without its guard repeats the border into the padding, which breaks R: "
            "padded-store-initial must refute it",
            "param n\ninput alloc X : [n]\noutput alloc Y : [n]\nY = X\n", "d-pad-var-unguarded",
            "padded-store-initial", pad=2),
    Refusal("prove: red i with a wrong bound", "paper section 4.1 per program (translation validation)",
            "red 1 X summing to the last extent is not its lowering red X: the lowering obligation must refute it",
            "lang full\nparam a, b\ninput alloc X : [a, b]\noutput alloc Y : [b]\nY = red 1 X\n",
            "red-at-last-bound", "lowering"),
    Refusal("prove: stuck semantics", "paper Theorem 4.4 per program (progress)",
            "a semantics that gets stuck on a typed statement is not certified: some obligation is not proved",
            "input alloc X : [2, 3]\noutput alloc Y : [2, 3]\nY = transp 2 X\n", "t-transp-to-rank",
            "", statuses=("refuted", "unknown")),
)


def refusal_obligations(r: Refusal) -> Iterator[Obligation]:
    """Run ``core-teil prove`` under the wrong semantics; one ground obligation per obligation of
    the kind that it did *not* certify (an expected refutation: one is enough)."""
    from core_teil.proving.prove import prove

    from .mutants import VARIANTS, applied

    with applied(VARIANTS[r.variant]):
        program = parse(r.source)
        report = prove(program, pad=r.pad, timeout=r.timeout)
    for o in report.obligations:
        if r.kind and o.name != r.kind:
            continue
        said = o.status.value
        why = o.counterexample.render() if o.counterexample else o.reason
        yield Obligation(f"{o.label}: not certified ({said})", (), z3.BoolVal(said in r.statuses),
                         lambda m, o=o, why=why: f"{o.label}: {o.status.value}: " + " ".join(why.split())[:200])


def refusal_lemma(r: Refusal) -> Lemma:
    def build() -> Iterator[Obligation]:
        return refusal_obligations(r)

    return Lemma(r.name, r.ref + ": EXPECTED REFUTATION", r.statement, build, expect=Expect.REFUTED, cost=1.5)


# --------------------------------------------------------------------------
# The lemmas
# --------------------------------------------------------------------------


def lemmas() -> list[Lemma]:
    out = [
        Lemma("Definition 4 (Z3 = numpy)", "report Definitions 4 and 8 (both interpretations)",
              "Z3Interpretation.arith and FloatInterpretation.arith agree with the reference engine's arith "
              "on a grid with •, 0, ±, fractions (±inf for floats)", arith_obligations),
        Lemma("Assume translation", "SPEC.md section 2 (assume) and section 3 (side conditions)",
              "ShapeSolver.cond at concrete parameters = the condition's text evaluated, every operator",
              assume_obligations),
        Lemma("Padded extents (Definition 7)", "report Definition 7 as obligations.PaddedExtents writes it",
              "M(q-1) < n <= M·q has a solution q for every n >= 1, and then M·q = ⌈n⌉ (M = 1..8)",
              padded_extents_obligations),
        Lemma("PadSum", "report Lemma 6, contraction case (simulation.py's padded-sum lemma)",
              "the stages' premises for every m imply their conclusion (D and ¬D), for Σ = SUMrec",
              padsum_obligations, premises=("Sum-Absorb", "Sum-Defined", "Sum-Zero-Or-Undef",
                                            "Sum-Zero-Extension", "Sum-Congruence")),
    ]
    out += [refusal_lemma(r) for r in REFUSALS]
    out.append(Lemma("Counterexamples canonical", "docs/lemmas.md, 'Every counterexample is the same on every run'",
                     "kernel.canonical_model pins each shown scalar to the first ladder value the formula allows, "
                     "after an array too", canonical_obligations))
    return out


__all__ = ["REFUSALS", "lemmas", "numpy_arith"]
