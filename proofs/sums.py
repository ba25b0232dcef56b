"""Sum lemmas, proved by induction on the bound, and their instances.

``core_teil/semantics/symbolic.py`` writes ``Σ_{m=1..n} h(m)`` as ``SUM(λm. h(m), n)``
with ``SUM`` uninterpreted.  Its meaning is :data:`SUMREC`, the recursive
definition ``SUMrec(h, n) = 0 if n <= 0 else SUMrec(h, n-1) + h[n]`` with the
``+`` of report Definition 4 (``symbolic.arith``), i.e. exactly
``Σ_{m=1..n}``.  Each :class:`SumLaw` below is proved for ``SUMrec`` by the
kernel's :func:`~proofs.kernel.sum_induction` (base, monotone premise, step;
Z3-NOTES.md: steps over free constants prove in milliseconds), and is then
*instantiated* for ``SUM`` in the per-constructor obligations by
:func:`facts`.  The kernel keeps each law as terms (:class:`~proofs.kernel.SumStatement`):
its obligations are built from them, and an instance is those terms with arguments for
the parameters and ``SUM`` for ``SUMrec``, so it is literally the proved statement.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import z3

from core_teil.semantics.symbolic import SUM, UNDEF, ZERO, SumNode, Value, arith, subterms, val

from . import kernel
from .kernel import Lemma, Rule

IS_UNDEF = Value.is_undef
VArr = kernel.VARR
VArr2 = z3.ArraySort(z3.IntSort(), z3.IntSort(), Value)
#: The meaning of SUM, defined in the kernel (which instantiates the laws for SUM).
SUMREC = kernel.SUMREC

Sum = Callable[[z3.ExprRef, z3.ArithRef], z3.ExprRef]


def _m() -> z3.ArithRef:
    return z3.Int("m!law")


def forall_in(lo: z3.ArithRef | int, hi: z3.ArithRef, body: Callable[[z3.ArithRef], z3.BoolRef]) -> z3.BoolRef:
    """``∀m. lo <= m <= hi -> body(m)``."""
    m = _m()
    return z3.ForAll([m], z3.Implies(z3.And(lo <= m, m <= hi), body(m)))


def times(n: z3.ArithRef, c: z3.ExprRef) -> z3.ExprRef:
    """``n · c`` for a natural ``n`` and ``c ∈ V ∪ {•}``: ``n`` copies of ``c`` added up."""
    return z3.If(n <= 0, ZERO, z3.If(IS_UNDEF(c), UNDEF, val(z3.ToReal(n) * Value.real(c))))


def zero_or_undef(v: z3.ExprRef) -> z3.BoolRef:
    return z3.Or(v == ZERO, IS_UNDEF(v))


@dataclass(frozen=True)
class SumLaw:
    """``∀params. requires ∧ n >= lo ∧ premise(n) -> conclusion(n)``, written as functions of
    the sum symbol and the parameters, for reading; :meth:`terms` hands it to the kernel."""

    name: str
    statement: str
    params: Callable[[], tuple[z3.ExprRef, ...]]
    premise: Callable[..., z3.BoolRef]
    conclusion: Callable[..., z3.BoolRef]
    lo: Callable[..., z3.ArithRef] = lambda *p: z3.IntVal(0)
    requires: Callable[..., list[z3.BoolRef]] = lambda *p: []
    helpers: Callable[..., list[z3.BoolRef]] | None = None
    uses: tuple[str, ...] = ()
    ref: str = "report Def. 4 (Σ over V ∪ {•}); Z3-NOTES.md"

    def terms(self) -> kernel.SumStatement:
        """The law as the kernel owns it: terms over SUMrec at the law's own parameters.  Built
        afresh on every call, so that a mutant of the semantics changes what is proved."""
        args, n = self.params(), z3.Int(f"n!{self.name}")
        return kernel.SumStatement(self.name, args, n, self.lo(*args), tuple(self.requires(*args)),
                                   self.premise(SUMREC, *args, n), self.conclusion(SUMREC, *args, n),
                                   tuple(self.helpers(SUMREC, *args, n)) if self.helpers else ())

    def instance(self, S: z3.FuncDeclRef, args: Sequence[z3.ExprRef], n: z3.ArithRef) -> z3.BoolRef:
        """The law at ``args`` and ``n`` for ``S`` (``SUM``, or ``SUMrec`` itself), as a use."""
        return self.terms().instance(S, args, n)

    def cut(self, args: Sequence[z3.ExprRef], n: z3.ArithRef, binders: Sequence[z3.ExprRef] = ()) -> kernel.Cut:
        """The law at ``args`` and ``n`` for ``SUM``, for all ``binders``, in a calculation."""
        return self.terms().cut(SUM, args, n, binders)

    def key(self) -> str:
        """What the law's lemma proves, as a digest (:attr:`proofs.kernel.SumStatement.key`)."""
        return self.terms().key

    def lemma(self) -> Lemma:
        return Lemma(self.name, self.ref, self.statement, None, Rule.SUM_INDUCTION, premises=self.uses,
                     cost=0.5, law=self.terms)


def _arrays(*names: str) -> tuple[z3.ExprRef, ...]:
    return tuple(z3.Const(x, VArr) for x in names)


ZERO_EXTENSION = SumLaw(
    "Sum-Zero-Extension", "h = 0 on (n0, N]  ->  Σ_{1..N} h = Σ_{1..n0} h   (N >= n0 >= 0)",
    lambda: (*_arrays("h"), z3.Int("n0")),
    lambda S, h, n0, N: forall_in(n0 + 1, N, lambda m: h[m] == ZERO),
    lambda S, h, n0, N: S(h, N) == S(h, n0),
    lo=lambda h, n0: n0, requires=lambda h, n0: [n0 >= 0])

CONGRUENCE = SumLaw(
    "Sum-Congruence", "h1 = h2 on [1, n]  ->  Σ h1 = Σ h2",
    lambda: _arrays("h1", "h2"),
    lambda S, h1, h2, n: forall_in(1, n, lambda m: h1[m] == h2[m]),
    lambda S, h1, h2, n: S(h1, n) == S(h2, n))

ABSORB = SumLaw(
    "Sum-Absorb", "h(m0) = • for some 1 <= m0 <= n  ->  Σ_{1..n} h = •",
    lambda: (*_arrays("h"), z3.Int("m0")),
    lambda S, h, m0, n: z3.BoolVal(True),
    lambda S, h, m0, n: IS_UNDEF(S(h, n)),
    lo=lambda h, m0: m0, requires=lambda h, m0: [m0 >= 1, IS_UNDEF(h[m0])])

DEFINED = SumLaw(
    "Sum-Defined", "h defined on [1, n]  ->  Σ h defined",
    lambda: _arrays("h"),
    lambda S, h, n: forall_in(1, n, lambda m: z3.Not(IS_UNDEF(h[m]))),
    lambda S, h, n: z3.Not(IS_UNDEF(S(h, n))))

ZERO_OR_UNDEF = SumLaw(
    "Sum-Zero-Or-Undef", "h ∈ {0, •} on [1, n]  ->  Σ h ∈ {0, •}",
    lambda: _arrays("h"),
    lambda S, h, n: forall_in(1, n, lambda m: zero_or_undef(h[m])),
    lambda S, h, n: zero_or_undef(S(h, n)))

CONSTANT = SumLaw(
    "Sum-Constant", "h = c on [1, n]  ->  Σ_{1..n} h = n·c   (SUM(K(c), n) = n*c)",
    lambda: (*_arrays("h"), z3.Const("c", Value)),
    lambda S, h, c, n: forall_in(1, n, lambda m: h[m] == c),
    lambda S, h, c, n: S(h, n) == times(n, c))

LINEARITY = SumLaw(
    "Sum-Linearity", "h3 = h1 + h2 on [1, n]  ->  Σ h3 = Σ h1 + Σ h2",
    lambda: _arrays("h1", "h2", "h3"),
    lambda S, h1, h2, h3, n: forall_in(1, n, lambda m: h3[m] == arith("add", h1[m], h2[m])),
    lambda S, h1, h2, h3, n: S(h3, n) == arith("add", S(h1, n), S(h2, n)))

SCALAR_LEFT = SumLaw(
    "Sum-Scalar-Left", "h2 = c·h1 on [1, n], n >= 1  ->  Σ h2 = c·Σ h1   (false for n = 0, c = •)",
    lambda: (*_arrays("h1", "h2"), z3.Const("c", Value)),
    lambda S, h1, h2, c, n: forall_in(1, n, lambda m: h2[m] == arith("mul", c, h1[m])),
    lambda S, h1, h2, c, n: S(h2, n) == arith("mul", c, S(h1, n)),
    lo=lambda *p: z3.IntVal(1))

SCALAR_RIGHT = SumLaw(
    "Sum-Scalar-Right", "h2 = h1·c on [1, n], n >= 1  ->  Σ h2 = (Σ h1)·c",
    lambda: (*_arrays("h1", "h2"), z3.Const("c", Value)),
    lambda S, h1, h2, c, n: forall_in(1, n, lambda m: h2[m] == arith("mul", h1[m], c)),
    lambda S, h1, h2, c, n: S(h2, n) == arith("mul", S(h1, n), c),
    lo=lambda *p: z3.IntVal(1))


def _fubini_sides(S: Sum, H: z3.ExprRef, B: z3.ArithRef, A: z3.ArithRef) -> tuple[z3.ExprRef, z3.ExprRef]:
    a, b = z3.Int("a!fub"), z3.Int("b!fub")
    lhs = S(z3.Lambda([b], S(z3.Lambda([a], H[a, b]), A)), B)
    rhs = S(z3.Lambda([a], S(z3.Lambda([b], H[a, b]), B)), A)
    return lhs, rhs


def _fubini_helpers(S: Sum, H: z3.ExprRef, B: z3.ArithRef, A: z3.ArithRef) -> list[z3.BoolRef]:
    """Instances of Sum-Linearity and Sum-Constant (for SUMrec) that the step and base use."""
    a, b = z3.Int("a!fub"), z3.Int("b!fub")
    h1 = z3.Lambda([b], S(z3.Lambda([a], H[a, b]), A))
    h2 = z3.Lambda([b], H[A + 1, b])
    h3 = z3.Lambda([b], S(z3.Lambda([a], H[a, b]), A + 1))
    h0 = z3.Lambda([b], S(z3.Lambda([a], H[a, b]), z3.IntVal(0)))
    return [LINEARITY.instance(S, (h1, h2, h3), B), CONSTANT.instance(S, (h0, ZERO), B)]


FUBINI = SumLaw(
    "Sum-Fubini", "Σ_{b<=B} Σ_{a<=A} H[a,b] = Σ_{a<=A} Σ_{b<=B} H[a,b]   (order of summation)",
    lambda: (z3.Const("H", VArr2), z3.Int("B")),
    lambda S, H, B, A: z3.BoolVal(True),
    lambda S, H, B, A: _fubini_sides(S, H, B, A)[0] == _fubini_sides(S, H, B, A)[1],
    requires=lambda H, B: [B >= 0],
    helpers=_fubini_helpers, uses=("Sum-Linearity", "Sum-Constant"))

LAWS: tuple[SumLaw, ...] = (ZERO_EXTENSION, CONGRUENCE, ABSORB, DEFINED, ZERO_OR_UNDEF, CONSTANT, LINEARITY,
                            SCALAR_LEFT, SCALAR_RIGHT, FUBINI)


def lemmas() -> list[Lemma]:
    return [law.lemma() for law in LAWS]


# --------------------------------------------------------------------------
# Instances for the uninterpreted SUM of symbolic.py
# --------------------------------------------------------------------------


def occurs(var: z3.ExprRef, term: z3.ExprRef) -> bool:
    return any(z3.eq(t, var) for t in subterms([term]))


def _distinct(terms: Sequence[z3.ExprRef]) -> list[z3.ExprRef]:
    out: list[z3.ExprRef] = []
    for t in terms:
        if not any(z3.eq(t, u) for u in out):
            out.append(t)
    return out


def facts(nodes: Sequence[SumNode], kinds: Sequence[str], scalars: Sequence[z3.ExprRef] = (),
          extents: Sequence[z3.ArithRef] = ()) -> list[z3.BoolRef]:
    """Instances of the named sum laws for the sums ``nodes`` of an obligation.

    Adding instances of proved lemmas is sound whatever terms they are taken
    at; this chooses the terms an obligation can use: every sum, every bound
    that occurs (and ``extents``), every pair/triple of sums over the same
    bound, every candidate scalar.  An instance that mentions the variable of
    an enclosing sum is also added universally closed over it, so that it can
    be used under that sum's binder (inside its ``λ``)."""
    ground = _facts(nodes, kinds, scalars, extents)
    sum_vars = [s.var for s in nodes]
    out: list[z3.BoolRef] = []
    for f in ground:
        out.append(f)
        free = [v for v in sum_vars if occurs(v, f)]
        if free:
            out.append(kernel.closed(free, f))
    return out


def _facts(nodes: Sequence[SumNode], kinds: Sequence[str], scalars: Sequence[z3.ExprRef],
           extents: Sequence[z3.ArithRef]) -> list[z3.BoolRef]:
    S = SUM
    hs = _distinct([s.term.arg(0) for s in nodes])
    bounds = _distinct([*[s.term.arg(1) for s in nodes], *extents])
    over: dict[int, list[z3.ExprRef]] = {}
    for s in nodes:
        over.setdefault(s.term.arg(1).get_id(), [])
        if not any(z3.eq(s.term.arg(0), h) for h in over[s.term.arg(1).get_id()]):
            over[s.term.arg(1).get_id()].append(s.term.arg(0))
    out: list[z3.BoolRef] = []
    want = set(kinds)
    if "Sum-Absorb" in want:
        w = z3.Int("w!absorb")
        for s in nodes:
            out.append(ABSORB.instance(S, (s.term.arg(0), s.var), s.term.arg(1)))
        for h, n in itertools.product(hs, bounds):
            out.append(kernel.closed([w], ABSORB.instance(S, (h, w), n)))
    for h, n in itertools.product(hs, bounds):
        if "Sum-Defined" in want:
            out.append(DEFINED.instance(S, (h,), n))
        if "Sum-Zero-Or-Undef" in want:
            out.append(ZERO_OR_UNDEF.instance(S, (h,), n))
        if "Sum-Zero-Extension" in want:
            out += [ZERO_EXTENSION.instance(S, (h, n0), n) for n0 in bounds if not z3.eq(n0, n)]
    if "Sum-Congruence" in want:
        for h1, h2 in itertools.permutations(hs, 2):
            out += [CONGRUENCE.instance(S, (h1, h2), n) for n in bounds]
    if "Sum-Constant" in want:
        for s in nodes:
            consts = [*([s.body] if not occurs(s.var, s.body) else []), *scalars]
            for c, n in itertools.product(_distinct(consts), bounds):
                out.append(CONSTANT.instance(S, (s.term.arg(0), c), n))
    same = [(n_id, group) for n_id, group in over.items()]
    for n_id, group in same:
        n = next(b for b in bounds if b.get_id() == n_id)
        if "Sum-Linearity" in want:
            for h1, h2, h3 in itertools.permutations(group, 3):
                out.append(LINEARITY.instance(S, (h1, h2, h3), n))
        for h1, h2 in itertools.permutations(group, 2):
            for c in scalars:
                if "Sum-Scalar-Left" in want:
                    out.append(SCALAR_LEFT.instance(S, (h1, h2, c), n))
                if "Sum-Scalar-Right" in want:
                    out.append(SCALAR_RIGHT.instance(S, (h1, h2, c), n))
    if "Sum-Fubini" in want:
        for outer in nodes:
            for inner in nodes:
                if inner is not outer and z3.eq(inner.term, outer.body):
                    H = z3.Lambda([inner.var, outer.var], inner.body)
                    out.append(FUBINI.instance(S, (H, outer.term.arg(1)), inner.term.arg(1)))
    return out
