"""Equational laws: paper section 3.6 and the rewrites a fast evaluator relies on.

Each law is an equality of ``eval.py`` denotations of two expression
schemata over holes: for every rank up to the bound, both sides are typed by
``typing.py`` (their premises become hypotheses), evaluated at the same
multi-index ``k <= type`` in the same arbitrary memory, and ``[[lhs]](k) ≠
[[rhs]](k)`` must be unsatisfiable.  Values include • and division is
controlled, so a law holds here only if it holds in the report's arithmetic
(e.g. ``red (prod a b)`` pulls a scalar out only because extents are >= 1:
``Σ_{m=1..0} c·h = 0`` but ``c · 0 = •`` for ``c = •``).  Sums are related by
instances of the sum lemmas of :mod:`proofs.sums`.  ``padded=True`` laws are
checked under the padded semantics too (all M, on the whole padded domain).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import z3

from core_teil.lang.syntax import Contr, Diag, Elem, Expa, Expr, Prod, Proj, Red, Transp, Var
from core_teil.semantics import eval as ev
from core_teil.semantics.symbolic import val

from . import sums
from .kernel import RANK_BOUND, Cut, Lemma, Obligation, Rule, calculation, renamed
from .padding import M
from .schema import (
    Instance,
    canonical,
    hole_shape,
    index,
    instantiate,
    params_of,
    ranks,
    run,
    select,
    show,
    within,
)

X, Y, Z, S = Var("X"), Var("Y"), Var("Z"), Var("S")

LawSchema = tuple[Expr, Expr, dict[str, tuple], tuple[str, ...]]


@dataclass(frozen=True)
class Calc:
    """A link ``previous = term`` of a calculation, justified by ``uses`` (``term=None``: the rhs)."""

    term: z3.ExprRef | None
    #: One use of a sum law each (``SumLaw.cut``): its premise an obligation, its conclusion a use.
    uses: tuple[Cut, ...] = ()


@dataclass(frozen=True)
class Law:
    name: str
    ref: str
    statement: str
    schemata: Callable[[], Iterator[LawSchema]]
    uses: tuple[str, ...] = ()
    padded: bool = False
    #: Extra hypotheses on the memory (e.g. μ(S) = d for equation (5)).
    memory: Callable[[Instance, dict], list[z3.BoolRef]] | None = None
    #: A calculational proof, where the generic instances do not suffice: [[lhs]] = T1 = ... = [[rhs]].
    proof: Callable[[Instance, dict, tuple], list[Calc]] | None = None
    #: The ranks the schemata cover (the kernel checks min_rank..R); ``None``: not rank-indexed.
    min_rank: int | None = 0

    def obligations(self) -> Iterator[Obligation]:
        for lhs, rhs, holes, extra in self.schemata():
            left = instantiate(lhs, holes, extra)
            if left is None:
                continue
            right = instantiate(rhs, holes, extra)
            label = f"{left.label.split(' with ')[0]} ≅ {right.label if right else rhs}"
            if right is None or len(right.derivation.shape) != len(left.derivation.shape):
                yield Obligation(f"{label}: both sides typed alike", (), z3.BoolVal(True),
                                 lambda m, label=label: f"{label}: the right-hand side is not typed like the left",
                                 **left.tags())
                continue
            for pad in (None, M) if self.padded else (None,):
                yield from self._compare(left, right, label + (" (padded)" if pad is not None else ""), pad)

    def _compare(self, left: Instance, right: Instance, label: str, pad: Any) -> Iterator[Obligation]:
        semL, iL = run(left, "L", pad)
        semR, iR = run(right, "R", pad, store=semL.store)
        bounds = tuple(semL.bound(d) for d in left.derivation.shape)
        k = index("k", len(bounds))
        vL, vR = ev.denote(left.expr, k, semL), ev.denote(right.expr, k, semR)
        same_type = [a == b for a, b in zip(left.shape, right.shape, strict=True)]
        reads = [*iL.reads, *iR.reads]
        sum_vars = [s.var for s in (*iL.sums, *iR.sums)]
        scalars = [select(semL.store[r.name], r.index) for r in reads
                   if not any(sums.occurs(v, i) for v in sum_vars for i in r.index)]
        extents = [left.shapes.term(d) for d in left.shapes.vars]
        hyps = [*left.hypotheses(), *right.hypotheses(), *iL.ceil_facts, *iR.ceil_facts,
                *(self.memory(left, semL.store) if self.memory else [])]
        if pad is not None:
            hyps.append(M >= 1)
        uses = sums.facts([*iL.sums, *iR.sums], self.uses, scalars, extents) if self.proof is None else []
        tags = {"rank": max(left.rank, right.rank), "case": None}  # a law is no induction step
        memo: dict = {}  # one alpha-normal form for all parts: they share most subterms

        def normal(t: z3.BoolRef) -> z3.BoolRef:
            return canonical(t, memo)

        hyps = [normal(h) for h in hyps]  # one context for every obligation (one vacuity check)
        yield Obligation(f"{label}: same type", hyps, z3.Not(z3.And(*same_type)), **tags)
        links: list[z3.BoolRef] = []
        if self.proof is not None:
            # The cut rule of the kernel: each use's premise proved, its conclusion used by its link.
            calc = [(vR if c.term is None else c.term, c.uses) for c in self.proof(left, semL.store, k)]
            steps, links = calculation(label, [*hyps, within(k, bounds)], vL, calc, normal, **tags)
            yield from steps
        yield Obligation(f"{label}: same value", hyps,
                         normal(z3.And(within(k, bounds), vL != vR)),
                         lambda m: f"{label}: " + show(m, [*params_of(left), ("k", k), ("lhs", vL), ("rhs", vR)]),
                         prefer=tuple(v <= 2 for v in left.shapes.vars.values()),
                         uses=tuple(renamed(u, normal) for u in (*uses, *links)), **tags)

    def lemma(self) -> Lemma:
        return Lemma(self.name, self.ref, self.statement, self.obligations,
                     Rule.CALCULATION if self.proof is not None else Rule.Z3, premises=self.uses,
                     ranks=self.min_rank is not None, cost=1.0, min_rank=self.min_rank or 0)


def _h(**ranks_: int) -> dict[str, tuple]:
    return {x: hole_shape(x, r) for x, r in ranks_.items()}


def _square(r: int) -> dict[str, tuple]:
    """``X : [n, n, x3, ..., xr]``: the premise n0 = n1 of T-Diag/T-Contr met by the context."""
    return {"X": ("n", "n", *hole_shape("X", r)[2:])}


def proj_expa() -> Iterator[LawSchema]:
    for r in ranks(0, RANK_BOUND - 1):
        yield Proj("m", Expa("d", X)), X, _h(X=r), ("d", "m")


def diag_transp() -> Iterator[LawSchema]:
    for r in ranks(2):
        yield Diag(Transp(1, X)), Diag(X), _h(X=r), ()


def red_expa() -> Iterator[LawSchema]:
    for r in ranks(0, RANK_BOUND - 1):
        yield Red(Expa("d", X)), Elem("mul", S, X), {**_h(X=r), "S": ()}, ("d",)


def _scalar_is_d(inst: Instance, mu: dict) -> list[z3.BoolRef]:
    return [mu["S"] == val(z3.ToReal(inst.shapes.term("d")))]


def transp_involution() -> Iterator[LawSchema]:
    for r in ranks(2):
        for i in range(1, r):
            yield Transp(i, Transp(i, X)), X, _h(X=r), ()


def red_add() -> Iterator[LawSchema]:
    for r in ranks(1):
        shape = hole_shape("X", r)
        yield Red(Elem("add", X, Y)), Elem("add", Red(X), Red(Y)), {"X": shape, "Y": shape}, ()


def red_prod() -> Iterator[LawSchema]:
    """``red`` sums the first dimension, which belongs to the left factor unless it is a scalar."""
    for r0, r1 in itertools.product(ranks(), ranks()):
        if r0 + r1 > RANK_BOUND or r0 + r1 == 0:
            continue
        holes = _h(X=r0, Y=r1)
        if r0 == 0:
            yield Red(Prod(X, Y)), Elem("mul", X, Red(Y)), holes, ()
        elif r0 == 1:
            yield Red(Prod(X, Y)), Elem("mul", Red(X), Y), holes, ()
        else:
            yield Red(Prod(X, Y)), Prod(Red(X), Y), holes, ()


def contr_red_diag() -> Iterator[LawSchema]:
    for r in ranks(2):
        yield Contr(X), Red(Diag(X)), _square(r), ()


def red_red() -> Iterator[LawSchema]:
    for r in ranks(2):
        yield Red(Red(X)), Red(Red(Transp(1, X))), _h(X=r), ()


def _matmul(a: Expr, b: Expr) -> Expr:
    """``A·B`` in Core-TeIL: contr (transp 2 (transp 1 (prod A B))) -- paper Fig. 7's matmul."""
    return Contr(Transp(2, Transp(1, Prod(a, b))))


def reassociate() -> Iterator[LawSchema]:
    holes = {"X": ("a", "b"), "Y": ("b", "c"), "Z": ("c", "d")}
    yield _matmul(_matmul(X, Y), Z), _matmul(X, _matmul(Y, Z)), holes, ()


def _reassociation_proof(inst: Instance, mu: dict, k: tuple) -> list[Calc]:
    """Σ_q (Σ_p A_ip B_pq) C_qj  =  Σ_q Σ_p (A_ip B_pq) C_qj  =  Σ_p Σ_q (A_ip B_pq) C_qj
    =  Σ_p A_ip Σ_q B_pq C_qj."""
    from core_teil.semantics import symbolic as sym

    A, B, C = mu["X"], mu["Y"], mu["Z"]
    i, j = k
    b, c = inst.shapes.term("b"), inst.shapes.term("c")
    p, q = z3.Int("p!reassoc"), z3.Int("q!reassoc")
    S = sym.SUM

    def mul(u: z3.ExprRef, v: z3.ExprRef) -> z3.ExprRef:
        return sym.arith("mul", u, v)

    def ab_c(p_: Any, q_: Any) -> z3.ExprRef:
        return mul(mul(A[i, p_], B[p_, q_]), C[q_, j])

    h1 = z3.Lambda([p], mul(A[i, p], B[p, q]))          # Σ_p A_ip B_pq, for each q
    h2 = z3.Lambda([p], ab_c(p, q))
    g1 = z3.Lambda([q], ab_c(p, q))                      # for each p
    g3 = z3.Lambda([q], mul(B[p, q], C[q, j]))
    # Associativity of · is the premise of Sum-Scalar-Left, pointwise: (A·B)·C = A·(B·C).
    # A separate step Σ_p Σ_q (A·B)·C = Σ_p Σ_q A·(B·C), left to Z3 as an equation between
    # lambdas, took 0.1 s or more than 60 s depending on what the worker had solved before.
    return [
        Calc(S(z3.Lambda([q], S(h2, b)), c), (sums.SCALAR_RIGHT.cut((h1, h2, C[q, j]), b, (q,)),)),
        Calc(S(z3.Lambda([p], S(g1, c)), b), (sums.FUBINI.cut((z3.Lambda([p, q], ab_c(p, q)), c), b),)),
        Calc(None, (sums.SCALAR_LEFT.cut((g3, g1, A[i, p]), c, (p,)),)),
    ]


def lift_red() -> Iterator[LawSchema]:
    """``prod X (red Y) ≅ red (transp 1 (prod X Y))`` for a vector X: a nested sum lifted out."""
    for r1 in ranks(1, RANK_BOUND - 1):
        yield Prod(X, Red(Y)), Red(Transp(1, Prod(X, Y))), _h(X=1, Y=r1), ()


LAWS: tuple[Law, ...] = (
    Law("Law (3) proj∘expa", "paper equation (3)", "proj m (expa d e) ≅ e   (m <= d)", proj_expa, padded=True,
        min_rank=1),
    Law("Law (4) diag∘transp", "paper equation (4)", "diag (transp 1 e) ≅ diag e", diag_transp, padded=True,
        min_rank=2),
    Law("Law (5) red∘expa", "paper equation (5)", "red (expa d e) ≅ d · e   (d · e as mul S e, μ(S) = d)",
        red_expa, uses=("Sum-Constant",), memory=_scalar_is_d, min_rank=1),
    Law("Law (5) red∘expa (padded)", "paper equation (5) under padding (guarded expa)",
        "red (expa d e) ≅ d · e on the whole padded domain, all M", red_expa,
        uses=("Sum-Constant", "Sum-Zero-Extension", "Sum-Congruence"), padded=True, memory=_scalar_is_d, min_rank=1),
    Law("Law (6) contr = red∘diag", "paper equation (6)", "contr e ≅ red (diag e)", contr_red_diag, min_rank=2),
    Law("Law transp involution", "evaluator: index maps", "transp i (transp i e) ≅ e", transp_involution,
        padded=True, min_rank=2),
    Law("Law red over add", "evaluator: sum of products", "red (add a b) ≅ add (red a) (red b)", red_add,
        uses=("Sum-Linearity",), min_rank=1),
    Law("Law red over prod", "evaluator: factor out of a sum",
        "red (prod a b) ≅ mul a (red b) (a : []), mul (red a) b (a : [n]), prod (red a) b (rank a >= 2)",
        red_prod, uses=("Sum-Scalar-Left", "Sum-Scalar-Right"), min_rank=1),
    Law("Law red∘red commute", "evaluator: order of summation", "red (red e) ≅ red (red (transp 1 e))",
        red_red, uses=("Sum-Fubini",), min_rank=2),
    Law("Law lift nested red", "paper section 5 (lifting nested contractions)",
        "prod a (red b) ≅ red (transp 1 (prod a b))   (a : [n])", lift_red, uses=("Sum-Scalar-Left",),
        min_rank=2),
    Law("Law reassociation", "paper section 5: nested contractions reassociated",
        "(A·B)·C ≅ A·(B·C) with A·B = contr (transp 2 (transp 1 (prod A B)))", reassociate,
        uses=("Sum-Fubini", "Sum-Scalar-Left", "Sum-Scalar-Right"), proof=_reassociation_proof, min_rank=None),
)


def lemmas() -> list[Lemma]:
    return [law.lemma() for law in LAWS]

