"""The symbolic normal form behind ``core-teil equiv`` (issue 13).

The equations of :mod:`core_teil.semantics.eval` (``denote``, ``st_stmt``) run once more,
with the :class:`NFInterpretation` below, in which

* an extent is a *canonical atom*: an integer, or the representative of a
  class of shape parameters that the assumptions force to be equal
  (decided by Z3 in :mod:`core_teil.proving.equiv`), so nothing is enumerated;
* an index is an :class:`IVar` (a component of St-Stmt's ``k`` or the
  variable of a ``Σ``) or a :class:`Const` (the ``m`` of ``proj``);
* a value is a :class:`Poly`, a sum of :class:`Term` ``c · Σ_R Π F`` whose
  factors are reads ``μ(x)(index)`` of the *initial* memory or controlled
  divisions (report Definition 8) kept as atoms; ``•`` (a read of an
  allocation that is neither an input nor written yet) absorbs every
  ``+ - ·`` and every ``Σ`` (report Definition 4; the sums are non-empty
  because extents are >= 1), so a value containing it *is* ``•``;
* a memory maps an allocation to its initial contents or to the
  :class:`Definition` ``λk. [[e]]`` a statement wrote (St-Stmt), which a
  later read instantiates with fresh summation variables (St-Seq).

Every step from the equations' value to the normal form is an instance of a
lemma ``make verify`` proves over ``V ∪ {•}`` (proofs/sums.py, proofs/laws.py):
``Σ`` over a multi-term body splits (Sum-Linearity), a factor moves into or
out of a ``Σ`` (Sum-Scalar-Left / Sum-Scalar-Right; all extents are >= 1),
nested ``Σ`` are reordered (Sum-Fubini), a summand that does not mention its
variable is counted (Sum-Constant), bound variables are renamed and summands
compared pointwise (Sum-Congruence), and ``•`` absorbs (Sum-Absorb); the
remaining steps are the ring laws of ``V`` (report Definition 4:
commutativity, associativity, distributivity, ``c1·T + c2·T = (c1+c2)·T``,
which keeps ``T``'s ``•``).  :class:`Trace` records which of these a
normalisation used, by their ``make verify`` names.

Two normal forms that are equal term by term (up to renaming of summation
variables, with coefficients equal under the assumptions) denote the same
value at every index, for every input in ``V ∪ {•}``: that is the *only*
direction used.  Unequal normal forms prove nothing (the caller then searches
for a counterexample and otherwise answers *unknown*).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..lang.syntax import Dim, ElemOp, Expr, Stmt, Var

#: A canonical extent: an integer, or the name of a representative parameter.
Atom = int | str

#: A coefficient: a polynomial over the parameter atoms with rational coefficients,
#: as sorted ``(monomial, coefficient)`` pairs (a monomial is a sorted tuple of names).
Coef = tuple[tuple[tuple[str, ...], Fraction], ...]

ONE: Coef = (((), Fraction(1)),)

#: A normal form larger than this many terms (after distribution) is not built: equiv answers
#: from the counterexample search alone (never "equivalent" without a proof).
MAX_TERMS = 4096


#: Substitution steps (St-Seq inlining) allowed per normalisation: a chain of statements that each
#: read the whole previous value is quadratic; beyond this, no normal form is built.
MAX_WORK = 200_000


class TooLarge(Exception):
    """The normal form would exceed :data:`MAX_TERMS` (distribution is exponential in general)."""


# --------------------------------------------------------------------------
# Coefficients: polynomials over the parameters
# --------------------------------------------------------------------------


def coef_add(a: Coef, b: Coef) -> Coef:
    acc: dict[tuple[str, ...], Fraction] = dict(a)
    for mono, c in b:
        acc[mono] = acc.get(mono, Fraction(0)) + c
    return tuple(sorted((m, c) for m, c in acc.items() if c != 0))


def coef_mul(a: Coef, b: Coef) -> Coef:
    acc: dict[tuple[str, ...], Fraction] = {}
    for (ma, ca), (mb, cb) in itertools.product(a, b):
        mono = tuple(sorted(ma + mb))
        acc[mono] = acc.get(mono, Fraction(0)) + ca * cb
    return tuple(sorted((m, c) for m, c in acc.items() if c != 0))


def coef_atom(x: Atom) -> Coef:
    if isinstance(x, int):
        return (((), Fraction(x)),) if x else ()
    return (((x,), Fraction(1)),)


def coef_neg(a: Coef) -> Coef:
    return tuple((m, -c) for m, c in a)


def show_coef(a: Coef) -> str:
    if not a:
        return "0"
    parts = []
    for mono, c in a:
        body = "·".join(mono)
        if not mono:
            parts.append(str(c))
        elif c == 1:
            parts.append(body)
        elif c == -1:
            parts.append("-" + body)
        else:
            parts.append(f"{c}·{body}")
    return " + ".join(parts).replace("+ -", "- ")


# --------------------------------------------------------------------------
# Indices, factors, terms
# --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class IVar:
    """An index variable: a component of St-Stmt's ``k`` (``role='k'``) or a ``Σ``'s (``'m'``)."""

    uid: int
    role: str
    bound: Atom

    def __repr__(self) -> str:
        return f"{self.role}{self.uid}"


@dataclass(frozen=True)
class Const:
    """A constant index (``proj m``), an extent atom."""

    value: Atom


Ix = IVar | Const


@dataclass(frozen=True)
class Leaf:
    """``μ0(x)(index)``: a read of the initial memory (an input)."""

    name: str
    index: tuple[Ix, ...]


@dataclass(frozen=True)
class DivF:
    """Controlled division ``num / den`` (report Definition 8), an atom of the normal form."""

    num: Poly
    den: Poly


Factor = Leaf | DivF


@dataclass(frozen=True)
class Term:
    """``coeff · Σ_{red} Π factors`` (each variable of ``red`` ranges over ``1..bound``)."""

    coeff: Coef
    red: tuple[IVar, ...]
    factors: tuple[Factor, ...]


@dataclass(frozen=True)
class Poly:
    """A sum of terms, or ``•`` (``undef``)."""

    terms: tuple[Term, ...]
    undef: bool = False


UNDEF = Poly((), True)


def monomial(f: Factor) -> Poly:
    return Poly((Term(ONE, (), (f,)),))


def factor_vars(f: Factor) -> set[IVar]:
    """The index variables a factor's value depends on (free ones)."""
    if isinstance(f, Leaf):
        return {i for i in f.index if isinstance(i, IVar)}
    return poly_vars(f.num) | poly_vars(f.den)


def poly_vars(p: Poly) -> set[IVar]:
    out: set[IVar] = set()
    for t in p.terms:
        inner: set[IVar] = set()
        for f in t.factors:
            inner |= factor_vars(f)
        out |= inner - set(t.red)
    return out


# --------------------------------------------------------------------------
# Which lemmas a normalisation used
# --------------------------------------------------------------------------


@dataclass
class Trace:
    """The ``make verify`` lemmas (and ring laws of V) one normalisation relied on, with counts."""

    used: dict[str, int] = field(default_factory=dict)

    def use(self, name: str, times: int = 1) -> None:
        if times > 0:
            self.used[name] = self.used.get(name, 0) + times


RING = "ring laws of V (report Def. 4: commutativity, associativity, distributivity)"
LIKE_TERMS = "c1·T + c2·T = (c1+c2)·T (report Def. 4; keeps T's •)"
INLINE = "St-Stmt/St-Seq (a statement's value substituted at its reads)"
SINGLETON = "Σ_{m=1..1} h(m) = h(1) (definition of Σ, proofs/sums.py SUMrec)"


# --------------------------------------------------------------------------
# The interpretation
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Definition:
    """``λk. v``: the value a statement wrote (St-Stmt), instantiated at each read."""

    k: tuple[IVar, ...]
    value: Poly


class NFInterpretation:
    """eval.py's :class:`~core_teil.semantics.eval.Interpretation` whose values are normal forms."""

    def __init__(self, extent: Callable[[Dim], Atom], trace: Trace, counter: Iterable[int]) -> None:
        self._extent = extent
        self.trace = trace
        self._ids = iter(counter)
        self.work = 0

    def fresh(self, role: str, bound: Atom) -> IVar:
        return IVar(next(self._ids), role, bound)

    # algebra ---------------------------------------------------------------

    def add(self, a: Poly, b: Poly) -> Poly:
        if a.undef or b.undef:
            return UNDEF
        return _checked(Poly(a.terms + b.terms))

    def neg(self, a: Poly) -> Poly:
        return Poly(tuple(Term(coef_neg(t.coeff), t.red, t.factors) for t in a.terms), a.undef)

    def mul(self, a: Poly, b: Poly) -> Poly:
        if a.undef or b.undef:
            return UNDEF
        if len(a.terms) > 1 or len(b.terms) > 1:
            self.trace.use(RING)
        out = []
        for ta, tb in itertools.product(a.terms, b.terms):
            if ta.red and tb.factors:
                self.trace.use("Sum-Scalar-Right")
            if tb.red and ta.factors:
                self.trace.use("Sum-Scalar-Left")
            if set(ta.red) & set(tb.red):  # the same Σ reached twice: rename one copy
                tb = self.rename_term(tb, {})
            out.append(Term(coef_mul(ta.coeff, tb.coeff), ta.red + tb.red, ta.factors + tb.factors))
        return _checked(Poly(tuple(out)))

    # substitution ------------------------------------------------------------

    def rename_term(self, t: Term, mapping: dict[IVar, Ix]) -> Term:
        """``t`` with ``mapping`` applied to its free variables and fresh bound ones."""
        self.work += 1 + len(t.factors)
        if self.work > MAX_WORK:
            raise TooLarge(f"more than {MAX_WORK} substitution steps")
        mapping = dict(mapping)
        red = []
        for r in t.red:
            nr = self.fresh("m", r.bound)
            mapping[r] = nr
            red.append(nr)
        return Term(t.coeff, tuple(red), tuple(self.subst_factor(f, mapping) for f in t.factors))

    def subst_factor(self, f: Factor, mapping: dict[IVar, Ix]) -> Factor:
        if isinstance(f, Leaf):
            return Leaf(f.name, tuple(mapping.get(i, i) if isinstance(i, IVar) else i for i in f.index))
        return DivF(self.subst(f.num, mapping), self.subst(f.den, mapping))

    def subst(self, p: Poly, mapping: dict[IVar, Ix]) -> Poly:
        if p.undef:
            return p
        return Poly(tuple(self.rename_term(t, mapping) for t in p.terms))

    # Interpretation protocol -------------------------------------------------

    def extent(self, d: Dim) -> Atom:
        return self._extent(d)

    def ceil(self, n: Atom, pad: int) -> Atom:
        raise NotImplementedError("equiv normalises the unpadded semantics (padding: report Theorem 3)")

    def read(self, store: Mapping[str, Any], x: str, k: tuple, node: Var) -> Poly:
        index = tuple(i if isinstance(i, IVar | Const) else Const(i) for i in k)
        v = store[x]
        if v == "input":
            return monomial(Leaf(x, index))
        if v == "undef":
            self.trace.use("Sum-Absorb")
            return UNDEF
        assert isinstance(v, Definition)
        self.trace.use(INLINE)
        return self.subst(v.value, dict(zip(v.k, index, strict=True)))

    def arith(self, op: ElemOp, a: Poly, b: Poly) -> Poly:
        if op == "add":
            return self.add(a, b)
        if op == "sub":
            return self.add(a, self.neg(b))
        if op == "mul":
            return self.mul(a, b)
        if a.undef:  # •/v = • (report Def. 8: only 0 on the left is controlled)
            return UNDEF
        return monomial(DivF(a, b))

    def sum(self, n: Atom, body: Callable[[IVar], Poly], node: Expr) -> Poly:
        m = self.fresh("m", n)
        p = body(m)
        if p.undef:
            self.trace.use("Sum-Absorb")
            return UNDEF
        if len(p.terms) > 1:
            self.trace.use("Sum-Linearity")
        return Poly(tuple(Term(t.coeff, (m, *t.red), t.factors) for t in p.terms))

    def guard(self, j: Any, d: Atom, v: Poly) -> Poly:
        raise NotImplementedError("equiv normalises the unpadded semantics (padding: report Theorem 3)")

    def domain(self, bounds: tuple[Atom, ...], stmt: Stmt) -> tuple[IVar, ...]:
        return tuple(self.fresh("k", n) for n in bounds)

    def update(self, store: Mapping[str, Any], x: str, k: tuple, v: Poly, bounds: tuple) -> dict[str, Any]:
        new = dict(store)
        new[x] = Definition(tuple(k), v)
        return new


def _checked(p: Poly) -> Poly:
    if len(p.terms) > MAX_TERMS:
        raise TooLarge(f"more than {MAX_TERMS} terms")
    return p


# --------------------------------------------------------------------------
# Canonical form: like terms combined, summation variables named canonically
# --------------------------------------------------------------------------

#: Up to this many renamings of a term's summation variables are tried to find the least key
#: (a true canonical form); beyond, one heuristic renaming (still sound, maybe incomplete).
MAX_RENAMINGS = 5040


@dataclass(frozen=True)
class Canon:
    """A canonical poly: ``•``, or like terms combined: ``key -> coefficient``."""

    undef: bool
    terms: tuple[tuple[str, Coef], ...]

    def show(self) -> str:
        if self.undef:
            return "•"
        if not self.terms:
            return "0"
        parts = []
        for key, c in self.terms:
            shown = show_coef(c)
            parts.append(key if shown == "1" else f"({shown})·{key}" if " " in shown else f"{shown}·{key}")
        return " + ".join(parts)


def _ix_key(i: Ix, names: Mapping[IVar, str]) -> str:
    if isinstance(i, Const):  # '#' keeps a constant apart from a variable's name (a parameter may be called k1)
        return f"#{i.value}"
    return names.get(i, f"?{i.uid}")


def _factor_key(f: Factor, names: Mapping[IVar, str], depth: int, tr: Trace | None) -> str:
    if isinstance(f, Leaf):
        return f"{f.name}[{', '.join(_ix_key(i, names) for i in f.index)}]" if f.index else f.name
    num = canon(f.num, names, depth + 1, tr).show()
    den = canon(f.den, names, depth + 1, tr).show()
    return f"({num}) / ({den})"


def _simplify(t: Term, tr: Trace | None) -> Term:
    """Counted and singleton sums out of ``t`` (Sum-Constant; the definition of Σ for n = 1)."""
    used: set[IVar] = set()
    for f in t.factors:
        used |= factor_vars(f)
    coeff, red = t.coeff, []
    mapping: dict[IVar, Ix] = {}
    for r in t.red:
        if r not in used:
            coeff = coef_mul(coeff, coef_atom(r.bound))
            if tr is not None:
                tr.use("Sum-Constant")
        elif r.bound == 1:
            mapping[r] = Const(1)
            if tr is not None:
                tr.use(SINGLETON)
        else:
            red.append(r)
    factors = t.factors
    if mapping:
        factors = tuple(_subst_plain(f, mapping) for f in factors)
    return Term(coeff, tuple(red), factors)


def _subst_plain(f: Factor, mapping: Mapping[IVar, Ix]) -> Factor:
    if isinstance(f, Leaf):
        return Leaf(f.name, tuple(mapping.get(i, i) if isinstance(i, IVar) else i for i in f.index))
    return DivF(_subst_poly(f.num, mapping), _subst_poly(f.den, mapping))


def _subst_poly(p: Poly, mapping: Mapping[IVar, Ix]) -> Poly:
    return Poly(tuple(Term(t.coeff, t.red, tuple(_subst_plain(f, mapping) for f in t.factors)) for t in p.terms),
                p.undef)


def bound_name(depth: int, j: int) -> str:
    """The canonical name of the ``j``-th summation variable of a term at division depth ``depth``
    (distinct at every depth, so an inner name never shadows an outer one)."""
    return f"{'ijpqrs'[depth]}{j + 1}" if depth < 6 else f"v{depth}_{j + 1}"


def term_key(t: Term, names: Mapping[IVar, str], depth: int = 0, tr: Trace | None = None) -> tuple[str, Coef]:
    """The canonical key of ``t`` (its summation variables renamed to minimise it) and its coefficient."""
    key, coeff, _, _ = canonical_term(t, names, depth, tr)
    return key, coeff


def canonical_term(t: Term, names: Mapping[IVar, str], depth: int = 0,
                   tr: Trace | None = None) -> tuple[str, Coef, tuple[IVar, ...], Term]:
    """:func:`term_key`, with the summation variables in their canonical order and the simplified term."""
    t = _simplify(t, tr)
    if not t.red:
        return " · ".join(sorted(_factor_key(f, names, depth, tr) for f in t.factors)) or "1", t.coeff, (), t
    # Variables are first told apart by what does not depend on their names: the extent, and where
    # each occurs (every factor with this variable as '@', the other summation variables as '_').
    # Only variables alike in both are permuted, so the least key over those orders is canonical
    # (the same for every renaming and order of the Σ) at a cost of (group size)! per group, not
    # (number of variables)!: a sum over all 8 positions of one tensor has one order to try.
    groups: dict[tuple[str, tuple[str, ...]], list[IVar]] = {}
    for r in t.red:
        groups.setdefault((str(r.bound), _signature(r, t, names, depth)), []).append(r)
    order = sorted(groups)
    count = math.prod(math.factorial(len(groups[g])) for g in order)
    if count <= MAX_RENAMINGS:
        perms: Iterable[tuple[tuple[IVar, ...], ...]] = itertools.product(
            *(itertools.permutations(groups[g]) for g in order))
    else:
        perms = [tuple(tuple(groups[g]) for g in order)]
    best: str | None = None
    best_order: tuple[IVar, ...] = ()
    for perm in perms:
        flat = tuple(r for grp in perm for r in grp)
        local = dict(names)
        for j, r in enumerate(flat):
            local[r] = bound_name(depth, j)
        body = " · ".join(sorted(_factor_key(f, local, depth, None) for f in t.factors))
        sigma = ", ".join(f"{local[r]}<={r.bound}" for r in flat)
        key = f"Σ[{sigma}] {body}"
        if best is None or key < best:
            best, best_order = key, flat
    assert best is not None
    if tr is not None:
        tr.use("Sum-Congruence")
        if len(t.red) > 1 and best_order != t.red:
            tr.use("Sum-Fubini")
        for f in t.factors:  # the division atoms' own sums
            if isinstance(f, DivF):
                local = dict(names)
                local.update({r: bound_name(depth, j) for j, r in enumerate(best_order)})
                _factor_key(f, local, depth, tr)
    return best, t.coeff, best_order, t


def _signature(r: IVar, t: Term, names: Mapping[IVar, str], depth: int) -> tuple[str, ...]:
    """Where ``r`` occurs in ``t``, independent of the names of ``t``'s summation variables."""
    local = dict(names)
    local.update({v: "_" for v in t.red})
    local[r] = "@"
    return tuple(sorted(_factor_key(f, local, depth, None) for f in t.factors if r in factor_vars(f)))


def canon(p: Poly, names: Mapping[IVar, str], depth: int = 0, tr: Trace | None = None) -> Canon:
    """Like terms combined (their coefficients added), in key order."""
    if p.undef:
        return Canon(True, ())
    acc: dict[str, Coef] = {}
    present: list[str] = []
    for t in p.terms:
        key, c = term_key(t, names, depth, tr)
        if key in acc:
            if tr is not None:
                tr.use(LIKE_TERMS)
            acc[key] = coef_add(acc[key], c)
        else:
            acc[key] = c
            present.append(key)
    return Canon(False, tuple(sorted(acc.items())))


# --------------------------------------------------------------------------
# The float operations themselves (issue 13, item 4: floats are not reals)
# --------------------------------------------------------------------------

#: A float form larger than this many nodes is not built (the report then says the floats may differ).
MAX_FORM = 50_000


class FloatFormInterpretation:
    """eval.py's equations once more, with values that are the float operations an engine performs
    at one index, in order and unsimplified: reads at their resolved index maps (so ``transp``,
    ``diag``, ``expa``, ``proj`` leave no trace), ``+ - · /``, and ``Σ_{m=1..n}`` as one node.
    Statements are substituted at their reads (St-Seq).  Two outputs with the same form (up to the
    names of summation variables and the order of the operands of ``+`` and ``·``, which IEEE
    arithmetic makes commutative) perform the same float operations; different forms, where the
    normal forms are equal, differ by reassociation, distribution or the order of summation."""

    def __init__(self, extent: Callable[[Dim], Atom]) -> None:
        self._extent = extent
        self._ids = itertools.count()
        self.size = 0

    def _node(self, t: tuple) -> tuple:
        self.size += 1
        if self.size > MAX_FORM:
            raise TooLarge(f"more than {MAX_FORM} float operations")
        return t

    def extent(self, d: Dim) -> Atom:
        return self._extent(d)

    def ceil(self, n: Atom, pad: int) -> Atom:
        raise NotImplementedError("the float form is of the unpadded semantics")

    def read(self, store: Mapping[str, Any], x: str, k: tuple, node: Var) -> tuple:
        v = store[x]
        index = tuple(i if isinstance(i, tuple) else ("c", i) for i in k)
        if v == "input":
            return self._node(("read", x, index))
        if v == "undef":
            return ("undef",)
        params, value = v
        return self._subst(value, dict(zip(params, index, strict=True)))

    def _subst(self, t: tuple, mapping: dict[tuple, tuple]) -> tuple:
        if t[0] in ("k", "s"):
            return mapping.get(t, t)
        if t[0] == "read":
            return self._node(("read", t[1], tuple(self._subst(i, mapping) for i in t[2])))
        if t[0] == "sum":
            return self._node(("sum", t[1], t[2], self._subst(t[3], mapping)))
        if t[0] in ("c", "undef"):
            return t
        return self._node((t[0], self._subst(t[1], mapping), self._subst(t[2], mapping)))

    def arith(self, op: ElemOp, a: tuple, b: tuple) -> tuple:
        return self._node((op, a, b))

    def sum(self, n: Atom, body: Callable[[tuple], tuple], node: Expr) -> tuple:
        m = ("s", next(self._ids))
        return self._node(("sum", n, m, body(m)))

    def guard(self, j: Any, d: Atom, v: tuple) -> tuple:
        raise NotImplementedError("the float form is of the unpadded semantics")

    def domain(self, bounds: tuple[Atom, ...], stmt: Stmt) -> tuple[tuple, ...]:
        return tuple(("k", next(self._ids)) for _ in bounds)

    def update(self, store: Mapping[str, Any], x: str, k: tuple, v: tuple, bounds: tuple) -> dict[str, Any]:
        new = dict(store)
        new[x] = (tuple(k), v)
        return new


def canonical_form(t: tuple, k: tuple[tuple, ...]) -> tuple:
    """``t`` (at the output index ``k``) with summation variables named by their nesting depth
    (de Bruijn levels: the same for every renaming) and the operands of ``add`` and ``mul`` in a
    canonical order."""
    names = {v: ("k", j) for j, v in enumerate(k)}

    def walk(t: tuple, depth: int) -> tuple:
        if t[0] in ("k", "s"):
            return names.get(t, ("free",))
        if t[0] == "read":
            return ("read", t[1], tuple(walk(i, depth) for i in t[2]))
        if t[0] == "sum":
            names[t[2]] = ("s", depth)
            return ("sum", t[1], walk(t[3], depth + 1))
        if t[0] in ("c", "undef"):
            return t
        a, b = walk(t[1], depth), walk(t[2], depth)
        if t[0] in ("add", "mul") and repr(b) < repr(a):
            a, b = b, a
        return (t[0], a, b)

    return walk(t, 0)


# --------------------------------------------------------------------------
# The normal form as a Z3 term over V ∪ {•} (the fallback when the terms differ)
# --------------------------------------------------------------------------


def to_z3(p: Poly, names: Mapping[IVar, str], coef: Callable[[Coef], Any], depth: int = 0,
          reads: dict[str, Leaf] | None = None) -> Any:
    """``p`` as a term of symbolic.py's ``Value`` sort, with report Definition 4 and controlled
    division (Definition 8) exactly as the obligations of ``prove`` state them (``symbolic.arith``,
    real arithmetic).  A read is a ``Value`` constant named by its canonical key; a term with a
    ``Σ`` is a ``Value`` constant named by its canonical term key (:func:`term_key`).  Equal keys
    denote equal values, so an equality proved for *every* value of these constants holds of the
    programs (distinct keys may be related; treating them as independent only loses proofs)."""
    from ..semantics.symbolic import UNDEF as Z3_UNDEF
    from ..semantics.symbolic import ZERO, Value, arith

    if p.undef:
        return Z3_UNDEF
    total = None
    for t in p.terms:
        t = _simplify(t, None)
        if t.red:
            key, c = term_key(t, names, 0)  # only red-free terms are entered, so only k's are free here
            v = z3_const(f"sum:{key}", Value)
        else:
            c = t.coeff
            v = None
            for f in t.factors:
                if isinstance(f, Leaf):
                    key = f"read:{_factor_key(f, names, depth, None)}"
                    if reads is not None:
                        reads[key] = f
                    fv = z3_const(key, Value)
                else:
                    fv = arith("div", to_z3(f.num, names, coef, depth + 1, reads),
                               to_z3(f.den, names, coef, depth + 1, reads))
                v = fv if v is None else arith("mul", v, fv)
            if v is None:
                v = Value.val(1)
        scaled = _scale(coef(c), v)
        total = scaled if total is None else arith("add", total, scaled)
    return total if total is not None else ZERO


@dataclass
class Structural:
    """The context of :func:`to_z3_sums`: the memory as uninterpreted functions, extents as terms."""

    coef: Callable[[Coef], Any]
    atom: Callable[[Atom], Any]
    memory: dict[str, Any] = field(default_factory=dict)

    def read(self, x: str, index: tuple[Any, ...]) -> Any:
        import z3

        from ..semantics.symbolic import Value

        if x not in self.memory:
            self.memory[x] = z3.Const(f"mu!{x}", Value) if not index else \
                z3.Function(f"mu!{x}", *([z3.IntSort()] * len(index)), Value)
        f = self.memory[x]
        return f(*index) if index else f


def to_z3_sums(p: Poly, names: Mapping[IVar, str], env: Mapping[IVar, Any], ctx: Structural,
               depth: int = 0) -> Any:
    """``p`` as a ``Value`` term in which Σ are *structured*: the Σ-terms of one skeleton (the sorted
    extents of their summation variables, in canonical order) are merged into one
    ``SUM_skeleton(λb. Σ_j c_j · body_j(b))`` (Sum-Linearity, Sum-Scalar-Left read backwards), with
    ``SUM_skeleton`` uninterpreted and every read an application of an uninterpreted memory.  The
    true Σ over the box is one interpretation of ``SUM_skeleton`` and the true memory one of the
    reads, so an equality Z3 proves for all of them holds of the programs; it now sees *inside* the
    sums (Sum-Congruence: bodies equal pointwise)."""
    import z3

    from ..semantics.symbolic import UNDEF as Z3_UNDEF
    from ..semantics.symbolic import ZERO, Value, arith

    if p.undef:
        return Z3_UNDEF
    total = None
    groups: dict[tuple[str, ...], list[tuple[Coef, Term, tuple[IVar, ...]]]] = {}
    for t in p.terms:
        _, c, order, t = canonical_term(t, names, depth)
        if order:
            groups.setdefault(tuple(str(r.bound) for r in order), []).append((c, t, order))
            continue
        scaled = _scale(ctx.coef(c), _product(t.factors, names, env, ctx, depth))
        total = scaled if total is None else arith("add", total, scaled)
    for skeleton, members in sorted(groups.items()):
        bs = [z3.Int(f"b!{depth}!{j}") for j in range(len(skeleton))]
        body = None
        for c, t, order in members:
            inner_names = {**names, **{r: bound_name(depth, j) for j, r in enumerate(order)}}
            inner_env = {**env, **dict(zip(order, bs, strict=True))}
            v = _scale(ctx.coef(c), _product(t.factors, inner_names, inner_env, ctx, depth + 1))
            body = v if body is None else arith("add", body, v)
        sum_f = z3.Function(f"SUM[{', '.join(skeleton)}]", z3.ArraySort(*([z3.IntSort()] * len(bs)), Value), Value)
        v = sum_f(z3.Lambda(bs, body))
        total = v if total is None else arith("add", total, v)
    return total if total is not None else ZERO


def _product(factors: tuple[Factor, ...], names: Mapping[IVar, str], env: Mapping[IVar, Any], ctx: Structural,
             depth: int) -> Any:
    from ..semantics.symbolic import Value, arith

    v = None
    for f in factors:
        if isinstance(f, Leaf):
            fv = ctx.read(f.name, tuple(env[i] if isinstance(i, IVar) else ctx.atom(i.value) for i in f.index))
        else:
            fv = arith("div", to_z3_sums(f.num, names, env, ctx, depth + 1),
                       to_z3_sums(f.den, names, env, ctx, depth + 1))
        v = fv if v is None else arith("mul", v, fv)
    return v if v is not None else Value.val(1)


def _scale(c: Any, v: Any) -> Any:
    """``c · v`` for a real coefficient: • stays •, else the real product (also for ``c = 0``)."""
    import z3

    from ..semantics.symbolic import UNDEF as Z3_UNDEF
    from ..semantics.symbolic import Value

    return z3.If(v == Z3_UNDEF, Z3_UNDEF, Value.val(c * Value.real(v)))


def z3_const(name: str, sort: Any) -> Any:
    import z3

    return z3.Const(name, sort)


__all__ = [
    "Canon",
    "Const",
    "Definition",
    "DivF",
    "FloatFormInterpretation",
    "IVar",
    "Leaf",
    "NFInterpretation",
    "Poly",
    "Structural",
    "Term",
    "TooLarge",
    "Trace",
    "canon",
    "canonical_form",
    "canonical_term",
    "show_coef",
    "to_z3",
    "to_z3_sums",
]
