"""The planner of the native engine (issue 5): statements to executable plans.

The plan is not a second copy of the semantics.  It is what the equations of
:mod:`core_teil.semantics.eval` (``denote``, ``st_stmt``) compute when they run with
the :class:`PlanInterpretation` below, in which

* an index is a :class:`Label` (a loop variable of St-Stmt's domain or of a
  ``Σ``) or an ``int`` (the constant of a ``proj``), so ``transp``, ``diag``,
  ``expa`` and ``proj`` become *index maps* on the leaves, never copies;
* a read ``μ(x)(k)`` is a :class:`Leaf`: a buffer (a version of ``x``) and
  the index map ``k``;
* ``Σ_{m=1..n} body`` introduces a reduction label ``m`` and distributes over
  the terms of ``body`` (linearity of Σ);
* ``mul`` multiplies monomials (factors concatenate, reduction labels
  concatenate: ``Σ_m a(m) · Σ_m' b(m') = Σ_{m,m'} a(m) b(m')``, distributivity);
  ``add``/``sub`` build sums of terms; controlled ``div`` (report Def. 8),
  the padded ``expa`` guard and a product with a multi-term factor stay
  atoms (:class:`DivAtom`, :class:`GuardAtom`, :class:`SumAtom`) that the
  plan materialises over their free labels;
* ``update`` (St-Stmt's conclusion) either materialises the statement into a
  new buffer version, or keeps it as a :class:`Definition` that later reads
  instantiate (inlining), so that chains of statements over dead
  intermediates (``interp``'s ``t1``, ``t2``) become one term.

So every statement denotes a normal form: a sum of products of leaf reads
at index maps with reduction labels (:class:`Poly` of :class:`Term`).  Each
term ``c · Σ_R Π F`` is then scheduled as a sequence of pairwise contraction
steps in an order chosen by cost (exhaustive dynamic programming over
subsets for few factors, greedy beyond): this is paper 000, section 5's
lifting of nested contractions, O(n^6) to O(n^4) for the CFD operator
``A ⊗ A ⊗ A``.  Steps that carry a batch label shared by every temporary and
the result are fused into one loop over that label (each element's small
contractions stay in cache); large GEMM-shaped steps go to BLAS
(``numpy.matmul``).  Phase 2 chooses loop orders and temporary layouts and
emits the descriptors that ``native/teil_kernels.h`` runs.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import TeilResourceError
from ..lang.shapes import round_up
from ..lang.syntax import ElemOp, Expr, Program, Stmt, Var, walk
from ..lang.typing import TypedProgram
from ..semantics.eval import Sem, st_stmt
from ..semantics.inputs import concrete_extent

# ==========================================================================
# The normal form
# ==========================================================================


@dataclass(eq=False, frozen=True)
class Label:
    """An index variable of a plan: a dimension of St-Stmt's domain (``out``)
    or the variable of a ``Σ`` (``red``); ``bound`` is its (padded) extent."""

    name: str
    bound: int
    role: str

    def __repr__(self) -> str:
        return self.name


#: An index of a plan: a label, or a 1-based constant (``proj m``).
Ix = Label | int


@dataclass(eq=False, frozen=True)
class Buffer:
    """One version of an allocation's memory: the initial one (an input, or
    • where not supplied), or the value a materialised statement wrote."""

    name: str
    shape: tuple[int, ...]
    kind: str  # "initial" | "stmt" | "mask"
    stmt: int = -1  # the statement that wrote it (kind "stmt")
    limit: int = 0  # kind "mask": 1.0 at positions <= limit, else 0.0

    def __repr__(self) -> str:
        return f"{self.name}@{self.stmt}" if self.kind == "stmt" else f"{self.name}@{self.kind}"

    @property
    def size(self) -> int:
        return math.prod(self.shape)


@dataclass(eq=False, frozen=True)
class Leaf:
    """``μ(x)(index)``: a read of ``buf`` at an index map.

    ``node`` is the syntactic read that made it (in statement ``stmt``);
    ``sigma`` maps the labels of that statement's own run to the labels the
    leaf uses now (identity unless the statement was inlined), which is what
    :mod:`core_teil.native.plan_check` needs to compare the leaf with the semantics."""

    buf: Buffer
    index: tuple[Ix, ...]
    node: Var | None = None
    stmt: int = -1
    sigma: tuple[tuple[Label, Ix], ...] = ()


@dataclass(eq=False, frozen=True)
class DivAtom:
    """Controlled division ``num / den`` (report Definition 8), element-wise."""

    num: Poly
    den: Poly


@dataclass(eq=False, frozen=True)
class GuardAtom:
    """The padded ``expa``: ``body`` where ``j <= d``, else 0 (not ``0 · body``)."""

    j: Label
    d: int
    body: Poly


@dataclass(eq=False, frozen=True)
class SumAtom:
    """A multi-term value used as one factor of a product (materialised, not expanded)."""

    body: Poly


Factor = Leaf | DivAtom | GuardAtom | SumAtom


@dataclass(frozen=True)
class Term:
    """``coeff · Σ_{red} Π factors``."""

    coeff: float
    red: tuple[Label, ...]
    factors: tuple[Factor, ...]


@dataclass(frozen=True)
class Poly:
    """A sum of terms; never empty (zero is ``Term(0.0, (), ())``, which keeps ``0 · • = •``)."""

    terms: tuple[Term, ...]


def monomial(f: Factor) -> Poly:
    return Poly((Term(1.0, (), (f,)),))


ZERO = Poly((Term(0.0, (), ()),))


def index_labels(index: Iterable[Ix]) -> list[Label]:
    out: list[Label] = []
    for ix in index:
        if isinstance(ix, Label) and ix not in out:
            out.append(ix)
    return out


def factor_labels(f: Factor) -> set[Label]:
    """The labels a factor's value depends on."""
    if isinstance(f, Leaf):
        return set(index_labels(f.index))
    if isinstance(f, DivAtom):
        return free_labels(f.num) | free_labels(f.den)
    if isinstance(f, GuardAtom):
        return free_labels(f.body) | {f.j}
    return free_labels(f.body)


def free_labels(p: Poly) -> set[Label]:
    out: set[Label] = set()
    for t in p.terms:
        fl: set[Label] = set()
        for f in t.factors:
            fl |= factor_labels(f)
        out |= fl - set(t.red)
    return out


# -- the algebra of the planning interpretation ------------------------------


def as_term(p: Poly) -> Term:
    """A factor view of a value: a monomial stays one; a sum becomes an atom."""
    return p.terms[0] if len(p.terms) == 1 else Term(1.0, (), (SumAtom(p),))


def mul(a: Poly, b: Poly) -> Poly:
    """Monomials multiply: ``(c Σ_R Π F)(c' Σ_R' Π F') = cc' Σ_{R,R'} Π F F'``."""
    ta, tb = as_term(a), as_term(b)
    return Poly((Term(ta.coeff * tb.coeff, ta.red + tb.red, ta.factors + tb.factors),))


def guard(j: Ix, d: int, v: Poly) -> Poly:
    """``v`` where ``j <= d``, else 0; decided statically when it can be."""
    if isinstance(j, int):
        return v if j <= d else ZERO
    if j.bound <= d:
        return v
    return monomial(GuardAtom(j, d, v))


# -- substitution: instantiating a Definition at a read ----------------------


class _Subst:
    def __init__(self, mapping: dict[Label, Ix], fresh: Callable[[Label], Label]) -> None:
        self.map = mapping
        self.fresh = fresh

    def ix(self, i: Ix) -> Ix:
        return self.map.get(i, i) if isinstance(i, Label) else i

    def poly(self, p: Poly) -> Poly:
        return Poly(tuple(t2 for t in p.terms for t2 in self.term(t).terms))

    def term(self, t: Term) -> Poly:
        for r in t.red:
            self.map[r] = self.fresh(r)
        red = tuple(self.map[r] for r in t.red)
        acc = Poly((Term(t.coeff, red, ()),))
        for f in t.factors:
            acc = mul(acc, self.factor(f))
        return acc

    def factor(self, f: Factor) -> Poly:
        if isinstance(f, Leaf):
            return monomial(Leaf(f.buf, tuple(self.ix(i) for i in f.index), f.node, f.stmt,
                                 tuple((lab, self.ix(i)) for lab, i in f.sigma)))
        if isinstance(f, DivAtom):
            return monomial(DivAtom(self.poly(f.num), self.poly(f.den)))
        if isinstance(f, GuardAtom):
            return guard(self.ix(f.j), f.d, self.poly(f.body))
        return Poly((as_term(self.poly(f.body)),))


@dataclass(frozen=True)
class Definition:
    """A statement kept symbolic (St-Stmt's ``λk. [[e]] μ k``), inlined at each read."""

    labels: tuple[Label, ...]
    poly: Poly


# ==========================================================================
# The planning interpretation
# ==========================================================================


@dataclass
class StmtNF:
    """The normal form of one statement and what the plan does with it."""

    index: int
    stmt: Stmt
    labels: tuple[Label, ...]
    poly: Poly
    action: str  # "materialize" | "inline" | "dead"
    target: Buffer | None = None
    created: list[Label] = field(default_factory=list)  # labels in the order the equations made them


def policy(program: Program) -> list[str]:
    """Which statements to materialise: a statement whose value is read more than once
    (before ``x`` is written again), or that is the final value of an output; one that is
    read once is inlined into its reader; one never read is dead."""
    stmts = program.stmts
    outputs = {a.name for a in program.outputs()}
    out: list[str] = []
    for s, stmt in enumerate(stmts):
        x = stmt.target
        nxt = next((t for t in range(s + 1, len(stmts)) if stmts[t].target == x), None)
        upto = len(stmts) if nxt is None else nxt + 1
        uses = sum(1 for t in range(s + 1, upto) for v in walk(stmts[t].expr)
                   if isinstance(v, Var) and v.name == x)
        if nxt is None and x in outputs:
            out.append("materialize")
        elif uses == 0:
            out.append("dead")
        elif uses == 1:
            out.append("inline")
        else:
            out.append("materialize")
    return out


class PlanInterpretation:
    """eval.py's :class:`~core_teil.semantics.eval.Interpretation` whose values are normal forms."""

    def __init__(self, typed: TypedProgram, pad: int | None, actions: Sequence[str] | None = None) -> None:
        self.typed = typed
        self.pad = pad
        self.actions = list(actions) if actions is not None else policy(typed.program)
        self.stmt = -1
        self.results: list[StmtNF] = []
        self.created: list[Label] = []
        self._count = itertools.count()

    def label(self, base: str, bound: int, role: str) -> Label:
        lab = Label(f"{base}{next(self._count)}", int(bound), role)
        return lab

    # Interpretation protocol -----------------------------------------------

    def extent(self, d: Any) -> int:
        return concrete_extent(self.typed, d)

    def ceil(self, n: int, pad: int) -> int:
        return round_up(n, pad)

    def read(self, store: dict[str, Buffer | Definition], x: str, k: tuple, node: Var) -> Poly:
        v = store[x]
        if isinstance(v, Buffer):
            sigma = tuple((i, i) for i in self.created)  # the domain and the enclosing Σs
            return monomial(Leaf(v, tuple(k), node, self.stmt, sigma))
        mapping: dict[Label, Ix] = dict(zip(v.labels, k, strict=True))
        return _Subst(mapping, lambda r: self.label("r", r.bound, "red")).poly(v.poly)

    def arith(self, op: ElemOp, a: Poly, b: Poly) -> Poly:
        if op == "add":
            return Poly(a.terms + b.terms)
        if op == "sub":
            return Poly(a.terms + tuple(Term(-t.coeff, t.red, t.factors) for t in b.terms))
        if op == "mul":
            return mul(a, b)
        return monomial(DivAtom(a, b))

    def sum(self, n: int, body: Callable[[Label], Poly], node: Expr) -> Poly:
        m = self.label("m", n, "red")
        self.created.append(m)
        p = body(m)
        return Poly(tuple(Term(t.coeff, (m, *t.red), t.factors) for t in p.terms))

    def guard(self, j: Ix, d: int, v: Poly) -> Poly:
        return guard(j, d, v)

    def domain(self, bounds: tuple[int, ...], stmt: Stmt) -> tuple[Label, ...]:
        k = tuple(self.label(f"k{j}_", n, "out") for j, n in enumerate(bounds, start=1))
        self.created.extend(k)
        return k

    def update(self, store: dict[str, Buffer | Definition], x: str, k: tuple, v: Poly,
               bounds: tuple) -> dict[str, Buffer | Definition]:
        s = self.stmt
        action = self.actions[s]
        nf = StmtNF(s, self.typed.program.stmts[s], tuple(k), v, action, created=self.created)
        new = dict(store)
        if action == "materialize":
            nf.target = Buffer(x, tuple(bounds), "stmt", s)
            new[x] = nf.target
        else:
            new[x] = Definition(tuple(k), v)
        self.results.append(nf)
        return new


def normal_forms(typed: TypedProgram, pad: int | None,
                 actions: Sequence[str] | None = None) -> tuple[list[StmtNF], dict[str, Buffer | Definition]]:
    """Run eval.py's St-Stmt for every statement with the planning interpretation (Eval-Prog)."""
    interp = PlanInterpretation(typed, pad, actions)
    store: dict[str, Buffer | Definition] = {}
    for a in typed.program.allocs:
        shape = tuple(interp.extent(d) for d in a.shape)
        if pad is not None:
            shape = tuple(interp.ceil(n, pad) for n in shape)
        store[a.name] = Buffer(a.name, shape, "initial")
    sem = Sem(typed, interp, store, pad)
    for s, stmt in enumerate(typed.program.stmts):
        interp.stmt = s
        interp.created = []
        sem = Sem(typed, interp, st_stmt(stmt, sem), pad)
    return interp.results, sem.store


# ==========================================================================
# Phase 1: terms to steps (contraction order)
# ==========================================================================


@dataclass(eq=False)
class Temp:
    """A planner temporary over a set of labels; phase 2 lays it out."""

    name: str
    labels: frozenset[Label]
    layout: tuple[Label, ...] | None = None
    scratch: bool = False
    offset: int = 0  # scratch offset (elements)

    def __repr__(self) -> str:
        return self.name

    @property
    def shape(self) -> tuple[int, ...]:
        assert self.layout is not None
        return tuple(lab.bound for lab in self.layout)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


Storage = Buffer | Temp


@dataclass(eq=False)
class Operand:
    """A storage read or written at an index map (a temp: at its own layout)."""

    store: Storage
    index: tuple[Ix, ...] | None = None  # None for a temp until phase 2
    leaf: Leaf | None = None  # the normal form's read this operand implements

    def labels(self) -> set[Label]:
        if isinstance(self.store, Temp):
            return set(self.store.labels)
        return set(index_labels(self.index or ()))

    def resolved_index(self) -> tuple[Ix, ...]:
        if isinstance(self.store, Temp):
            assert self.store.layout is not None
            return self.store.layout
        return self.index or ()


@dataclass(eq=False)
class Step:
    """One loop nest: ``out (+)= coeff · Σ_{labels of args not in out} Π args`` (mac),
    ``out = cdiv(a, b)`` (div), ``out = mask ? a : 0`` (sel)."""

    kind: str  # "mac" | "div" | "sel"
    out: Operand
    args: tuple[Operand, ...]
    coeff: float = 1.0
    init: bool = False  # out is a fresh temp: zero it first
    blas: bool = False

    def loops(self) -> set[Label]:
        s = self.out.labels()
        for a in self.args:
            s |= a.labels()
        return s

    def summed(self) -> set[Label]:
        s: set[Label] = set()
        for a in self.args:
            s |= a.labels()
        return s - self.out.labels()


@dataclass(eq=False)
class TermSchedule:
    """How one term is computed: the record the plan check validates (the laws of Σ)."""

    term: Term
    factors: list[Operand]  # the leaves and materialised atoms, in term order
    steps: list[Step]  # pre-reductions and pairwise contractions, then the final step
    out: Operand
    coeff: float  # term.coeff times the extents of reduction labels no factor reads


EXHAUSTIVE_FACTORS = 6
#: Per-batch GEMM volume (I*J*K) from which a pairwise step goes to BLAS, and the least
#: extent of each of I, J, K (skinny products are faster in the fused loop kernels).
BLAS_MIN_VOLUME = 1 << 17
BLAS_MIN_DIM = 24
#: The same for a batched step when the kernels have several threads: numpy.matmul runs
#: the batch as a loop of GEMMs too small for BLAS's threads, while the fused kernel runs
#: the batch on every core (bmm 8192x72x26, 135k per item: 91 ms fused against 106 ms in
#: numpy.matmul, medians of 15 in one process).  On one thread that advantage is gone and
#: OpenBLAS's micro-kernel beats the fused loops (issue 15: 110 ms fused against 84 ms).
BLAS_BATCHED_MIN_VOLUME = 1 << 20


def blas_sized(batch: Iterable[Label], dims: Sequence[int]) -> bool:
    """A GEMM of these (I, J, K) extents, once per batch element, is large enough for BLAS."""
    batched = math.prod(lab.bound for lab in batch) > 1 and _native.openmp_threads() > 1
    least = BLAS_BATCHED_MIN_VOLUME if batched else BLAS_MIN_VOLUME
    return math.prod(dims) >= least and min(dims) >= BLAS_MIN_DIM


class Lowering:
    """Phase 1 for one statement: the statement's poly as a list of steps."""

    def __init__(self, name: str) -> None:
        self.steps: list[Step] = []
        self.schedules: list[TermSchedule] = []
        self.temps: list[Temp] = []
        self.masks: list[Buffer] = []
        self.materialized: list[tuple[Poly, Operand]] = []  # polys computed into temps
        self.atoms: list[tuple[Factor, Operand, Step | None]] = []  # each atom, its operand, its step
        self._n = itertools.count()
        self.name = name

    def temp(self, labels: Iterable[Label]) -> Temp:
        t = Temp(f"{self.name}.t{next(self._n)}", frozenset(labels))
        self.temps.append(t)
        return t

    # -- polys and atoms ------------------------------------------------------

    def poly_into(self, p: Poly, out: Operand) -> None:
        for t in p.terms:
            self.term_into(t, out)

    def operand_of(self, p: Poly) -> Operand:
        """A poly as an operand: a leaf as it is, anything else materialised over its free labels."""
        if len(p.terms) == 1:
            t = p.terms[0]
            if t.coeff == 1.0 and not t.red and len(t.factors) == 1:
                f = t.factors[0]
                if isinstance(f, Leaf):
                    return Operand(f.buf, f.index, f)
                return self.atom(f)
        tmp = self.temp(free_labels(p))
        out = Operand(tmp)
        self.materialized.append((p, out))
        self.poly_into(p, out)
        self.mark_init(tmp)
        return out

    def mark_init(self, tmp: Temp) -> None:
        for s in self.steps:
            if s.out.store is tmp:
                s.init = True
                return

    def atom(self, f: Factor) -> Operand:
        if isinstance(f, Leaf):
            return Operand(f.buf, f.index, f)
        if isinstance(f, DivAtom):
            a, b = self.operand_of(f.num), self.operand_of(f.den)
            out = Operand(self.temp(a.labels() | b.labels()))
            step = Step("div", out, (a, b))
        elif isinstance(f, GuardAtom):
            a = self.operand_of(f.body)
            mask = Buffer(f"mask{f.j.bound}le{f.d}", (f.j.bound,), "mask", limit=f.d)
            self.masks.append(mask)
            out = Operand(self.temp(a.labels() | {f.j}))
            step = Step("sel", out, (a, Operand(mask, (f.j,))))
        else:
            out = self.operand_of(f.body)
            self.atoms.append((f, out, None))
            return out
        self.steps.append(step)
        self.atoms.append((f, out, step))
        return out

    # -- one term -------------------------------------------------------------

    def term_into(self, t: Term, out: Operand) -> None:
        factors = [self.atom(f) for f in t.factors]
        coeff = t.coeff
        read = set().union(*(f.labels() for f in factors)) if factors else set()
        for r in t.red:
            if r not in read:
                coeff *= r.bound  # Σ_{m<=n} c = n·c
        first = len(self.steps)
        keep = out.labels()
        if len(factors) <= 1:
            self.steps.append(Step("mac", out, tuple(factors), coeff))
            self.schedules.append(TermSchedule(t, factors, self.steps[first:], out, coeff))
            return
        ops = list(factors)
        # pre-reduce labels private to one factor (Σ_m x(m)·y = (Σ_m x(m))·y)
        for i, f in enumerate(ops):
            others = set(keep)
            for j, g in enumerate(ops):
                if j != i:
                    others |= g.labels()
            private = f.labels() - others
            if private:
                tmp = Operand(self.temp(f.labels() - private))
                self.steps.append(Step("mac", tmp, (f,), 1.0, init=True))
                ops[i] = tmp
        leaf_strides = [None if isinstance(o.store, Temp) else fold(o)[1] for o in ops]
        for x, y in contraction_order([o.labels() for o in ops], keep, leaf_strides):
            a, b = ops[x], ops[y]
            rest = set(keep)
            for j, g in enumerate(ops):
                if j not in (x, y) and g is not None:
                    rest |= g.labels()
            if all(g is None for j, g in enumerate(ops) if j not in (x, y)):
                self.steps.append(Step("mac", out, (a, b), coeff))
                ops[x] = ops[y] = None  # type: ignore[call-overload]
                break
            tmp = Operand(self.temp((a.labels() | b.labels()) & rest))
            self.steps.append(Step("mac", tmp, (a, b), 1.0, init=True))
            ops[x] = tmp
            ops[y] = None  # type: ignore[call-overload]
        self.schedules.append(TermSchedule(t, factors, self.steps[first:], out, coeff))


def groups_merge(strides: dict[Label, int], group: Iterable[Label]) -> bool:
    """The labels of a group can be one matrix dimension of a view without a copy."""
    g = sorted(group, key=lambda lab: -strides.get(lab, 0))
    return all(strides.get(a, 0) == strides.get(b, 0) * b.bound for a, b in itertools.pairwise(g))


def blas_copy_penalty(labels: list[set[Label]], strides: list[dict[Label, int] | None], x: int, y: int,
                      rest: set[Label]) -> int:
    """The bytes (elements) a BLAS step on factors x, y would copy to make matrix views."""
    lx, ly = labels[x], labels[y]
    kept = (lx | ly) & rest
    batch, i, j, k = lx & ly & kept, (lx - ly) & kept, (ly - lx) & kept, (lx & ly) - kept
    if (lx | ly) - (batch | i | j | k) or not (i and j and k):
        return 0
    if not blas_sized(batch, [math.prod(lab.bound for lab in g) for g in (i, j, k)]):
        return 0
    pen = 0
    for f, own in ((x, i), (y, j)):
        st = strides[f]
        if st is not None and not all(groups_merge(st, g) for g in (batch, own, k) if g):
            pen += math.prod(lab.bound for lab in labels[f])
    return pen


def contraction_order(labels: list[set[Label]], keep: set[Label],
                      strides: list[dict[Label, int] | None] | None = None) -> list[tuple[int, int]]:
    """Pairs to contract, as positions into a list where the result replaces the first
    of the pair: optimal flop count by dynamic programming over subsets for few factors,
    greedy (cheapest pair first) beyond.  ``strides`` (of the input leaves) adds the cost
    of the copies a BLAS step would make of a leaf whose dimensions do not merge."""
    n = len(labels)
    if n < 2:
        return []
    strides = strides or [None] * n

    def size(ls: Iterable[Label]) -> int:
        return math.prod(lab.bound for lab in ls)

    def penalty(s1: int, s2: int, rest: set[Label]) -> int:
        if bin(s1).count("1") == 1 and bin(s2).count("1") == 1:
            return blas_copy_penalty(labels, strides, s1.bit_length() - 1, s2.bit_length() - 1, rest)
        return 0

    if n <= EXHAUSTIVE_FACTORS:
        full = (1 << n) - 1

        def subset_labels(s: int) -> frozenset[Label]:
            inside: set[Label] = set()
            outside: set[Label] = set(keep)
            for i in range(n):
                (inside if s >> i & 1 else outside).update(labels[i])
            return frozenset(inside & outside)

        lab_of = {s: subset_labels(s) for s in range(1, full + 1)}
        best: dict[int, tuple[int, Any]] = {1 << i: (0, i) for i in range(n)}
        for s in sorted(range(1, full + 1), key=lambda s: bin(s).count("1")):
            if s in best:
                continue
            cands = []
            sub = (s - 1) & s
            while sub:
                other = s ^ sub
                if sub < other and sub in best and other in best:
                    rest = set(keep).union(*(labels[i] for i in range(n) if not s >> i & 1))
                    c = best[sub][0] + best[other][0] + size(lab_of[sub] | lab_of[other]) + \
                        penalty(sub, other, rest)
                    cands.append((c, sub, other))
                sub = (sub - 1) & s
            c, l, r = min(cands, key=lambda t: t[0])
            best[s] = (c, (best[l][1], best[r][1]))

        pairs: list[tuple[int, int]] = []

        def emit(tree: Any) -> int:
            if isinstance(tree, int):
                return tree
            x, y = emit(tree[0]), emit(tree[1])
            x, y = min(x, y), max(x, y)
            pairs.append((x, y))
            return x

        emit(best[full][1])
        return pairs
    alive = {i: set(labels[i]) for i in range(n)}
    pairs = []
    while len(alive) > 1:
        cands = []
        for x, y in itertools.combinations(sorted(alive), 2):
            rest = set(keep)
            for j, ls in alive.items():
                if j not in (x, y):
                    rest |= ls
            union = alive[x] | alive[y]
            cands.append((size(union), size(union & rest), x, y, union & rest))
        _, _, x, y, res = min(cands, key=lambda t: (t[0], t[1]))
        pairs.append((x, y))
        alive[x] = res
        del alive[y]
    return pairs


# ==========================================================================
# Phase 2: fusion, layouts, loop orders, descriptors
# ==========================================================================

from . import _native  # noqa: E402  (the descriptor format is the extension's)

MAXL: int = _native.MAXL
OP_WIDTH: int = _native.OP_WIDTH
KIND = {"fill": 0, "mac0": 1, "mac1": 2, "mac2": 3, "div": 4, "sel": 5, "mac2b": 6, "mac2b_set": 7,
        "mac2_set": 8}
SMALLB_J, SMALLB_K = 16, 32  # teil_kernels.h: TK_SMALLB_J, TK_SMALLB_K
SCRATCH_LIMIT = 4 << 20  # elements of per-thread scratch a fused statement may use


def c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def fold(op: Operand, drop: Label | None = None) -> tuple[int, dict[Label, int]]:
    """An index map folded over the storage's strides: (offset, stride per label)."""
    store = op.store
    index = op.resolved_index()
    strides = c_strides(store.shape)
    off, st = 0, {}
    for ix, s in zip(index, strides, strict=True):
        if isinstance(ix, int):
            off += (ix - 1) * s
        else:
            st[ix] = st.get(ix, 0) + s
    if drop is not None:
        st.pop(drop, None)
    return off, st


@dataclass(eq=False)
class OpDesc:
    """One row of the extension's op table, plus what the checks need."""

    kind: str
    step: Step | None
    operands: tuple[Operand, ...]  # out, a, b (as many as the kind uses)
    loops: tuple[tuple[int, ...], ...]  # merged loops: (extent, stride per operand...)
    offsets: tuple[int, ...]
    coeff: float
    batch_strides: tuple[int, ...] = ()
    nbatch: int = 1
    #: How the loops were made, for the plan check to make them again: the labels in loop
    #: order (before merging), the fused batch label, and which merged loop became the batch.
    order: tuple[Label, ...] = ()
    batch: Label | None = None
    par: int | None = None

    def row(self, slot0: int) -> list[int]:
        """The op's row; its operands use slots ``slot0, slot0+1, ...``."""
        r = [0] * OP_WIDTH
        r[0] = KIND[self.kind]
        r[1] = len(self.loops)
        for q in range(3):
            r[2 + q] = slot0 + q if q < len(self.operands) else -1
            r[5 + q] = self.offsets[q] if q < len(self.offsets) else 0
        for li, loop in enumerate(self.loops):
            r[8 + li] = loop[0]
            for q in range(3):
                r[8 + (q + 1) * MAXL + li] = loop[1 + q] if q < len(self.operands) else 0
        return r


@dataclass(eq=False)
class Call:
    """One call of the extension: ops over a batch (or one BLAS step)."""

    ops: list[OpDesc]
    nbatch: int = 1
    scratch: int = 0  # elements per thread
    blas: Step | None = None
    temps: list[Temp] = field(default_factory=list)  # global temps first written here
    #: With both ``blas`` and ``ops``: the BLAS step's rows and the ops' batch are run
    #: together, ``chunk`` batch elements at a time (:func:`stream_blas`); 0 otherwise.
    chunk: int = 0


#: Innermost iterations below which a call runs on one thread.  With passive waiting
#: (``OMP_WAIT_POLICY=PASSIVE``, see ``core_teil/__init__.py``) waking the second thread
#: costs about 0.1 ms: an 8x8 matmul took 122 us on two threads and 15 us on one.  One
#: thread computes every batch element as the team would, so the results are the same bits.
PARALLEL_MIN_WORK = 1 << 21


def element_work(call: Call) -> int:
    """Innermost iterations of ``call``'s ops for one batch element."""
    return sum(math.prod(loop[0] for loop in d.loops) for d in call.ops)


def threads_for(work: int) -> int:
    """Threads for a call of ``work`` innermost iterations (its batch elements times their
    :func:`element_work`): 1, or 0 for all of them."""
    return 1 if work < PARALLEL_MIN_WORK else 0


@dataclass(eq=False)
class StmtPlan:
    nf: StmtNF
    lowering: Lowering
    calls: list[Call]
    batch: Label | None


def classify(step: Step) -> tuple[list[Label], list[Label], list[Label], list[Label], list[Label]]:
    la, lb = step.args[0].labels(), step.args[1].labels()
    lo = step.out.labels()
    batch = [x for x in lo if x in la and x in lb]
    i = [x for x in lo if x in la and x not in lb]
    j = [x for x in lo if x in lb and x not in la]
    k = [x for x in la if x in lb and x not in lo]
    extra = [x for x in (la | lb | lo) if x not in set(batch) | set(i) | set(j) | set(k)]
    return batch, i, j, k, extra


def out_order(step: Step) -> tuple[Label, ...]:
    """The label order of a step's output storage (a temp's layout, or the target's index)."""
    o = step.out
    if isinstance(o.store, Temp):
        assert o.store.layout is not None
        return o.store.layout
    return tuple(ix for ix in o.index or () if isinstance(ix, Label))


def _plain(o: Operand) -> bool:
    """A matrix view needs one position per label (no diagonal read)."""
    if isinstance(o.store, Temp):
        return True
    labs = [ix for ix in o.index or () if isinstance(ix, Label)]
    return len(labs) == len(set(labs))


def blas_eligible(step: Step, direct: bool) -> bool:
    """A GEMM-shaped step large enough for BLAS.  ``numpy.matmul`` overwrites its output
    with the plain product (engine.gemm), so only when ``direct`` (the only step writing
    that storage) with coefficient 1 -- for a temporary too: the two terms of a materialised
    ``sub`` (``div (sub (A B) (B A)) E``) were two GEMMs into one temporary, the second
    overwriting the first and its coefficient -1 dropped.  Into the statement's target
    only when it is [batch, i, j] (or [batch, j, i]: then the arguments swap, C^T = B^T A^T)."""
    if step.kind != "mac" or len(step.args) != 2 or not all(_plain(a) for a in step.args):
        return False
    if not direct or step.coeff != 1.0:
        return False
    batch, i, j, k, extra = classify(step)
    if extra or not i or not j or not k:
        return False
    if not blas_sized(batch, [math.prod(x.bound for x in g) for g in (i, j, k)]):
        return False
    if isinstance(step.out.store, Temp):
        return True
    if not _plain(step.out):
        return False
    t = out_order(step)
    nb, ni = len(batch), len(i)
    if set(t[:nb]) == set(batch) and set(t[nb:nb + ni]) == set(i):
        return True
    if set(t[:nb]) == set(batch) and set(t[nb:nb + len(j)]) == set(j):
        step.args = (step.args[1], step.args[0])
        return True
    return False


def choose_loops(strides: list[dict[Label, int] | None], loops: set[Label], kept: set[Label]) -> list[Label]:
    """A loop order (outermost first).  ``strides[0]`` is the output's (None: a fresh
    temp whose layout follows this order).  Innermost: a kept label with unit stride
    where possible, grown into the longest block that merges into one loop; then a
    summed label (so the two-loop micro-kernel applies); then the rest by descending stride."""
    if not loops:
        return []
    ops = [s for s in strides if s is not None]
    free_out = strides[0] is None

    def penalty(lab: Label) -> tuple:
        p = 0
        for s in strides:
            st = (1 if lab in kept else 0) if s is None else s.get(lab, 0)
            if st not in (0, 1):
                p += 1
        unit = sum(1 for s in ops if s.get(lab, 0) == 1)
        return (p, -unit, -lab.bound, lab.name)

    pool = [lab for lab in loops if lab in kept] or list(loops)
    inner = min(pool, key=penalty)
    block = [inner]
    while True:
        head = block[0]
        nxt = None
        for lab in loops:
            if lab in block or (lab in kept) != (head in kept):
                continue
            ok = True
            for s in ops:
                sh, sl = s.get(head, 0), s.get(lab, 0)
                if (sh == 0) != (sl == 0) or (sh != 0 and sl != sh * head.bound):
                    ok = False
                    break
            if ok and (free_out or head not in kept or lab in kept):
                nxt = lab
                break
        if nxt is None:
            break
        block.insert(0, nxt)
    rest = [lab for lab in loops if lab not in block]
    red = [lab for lab in rest if lab not in kept]
    k_loop: list[Label] = []
    if inner in kept and red:
        kl = max(red, key=lambda lab: (lab.bound, -max((s.get(lab, 0) for s in ops), default=0)))
        k_loop = [kl]
        rest.remove(kl)

    def weight(lab: Label) -> tuple:
        return (-max((abs(s.get(lab, 0)) for s in ops), default=0), lab not in kept, lab.name)

    return sorted(rest, key=weight) + k_loop + block


def smallb_order(strides: list[dict[Label, int] | None], loops: set[Label],
                 kept: set[Label]) -> tuple[list[Label], bool] | None:
    """The loop order [rows..., k..., j...] of the shared-small-matrix kernel (MAC2B), if
    one argument (``b``) depends only on summed labels ``k`` and kept labels ``j`` of small
    extent, and the other on the rows and ``k``; and whether the arguments must swap."""
    out = strides[0]
    for bi in (2, 1):
        sb, sa = strides[bi], strides[3 - bi]
        assert sb is not None and sa is not None
        b_labels = {lab for lab in loops if sb.get(lab, 0) != 0}
        j = [lab for lab in b_labels if lab in kept]
        k = [lab for lab in b_labels if lab not in kept]
        rows = [lab for lab in loops if lab in kept and lab not in b_labels]
        if not j or not k or not rows or any(lab not in kept and lab not in b_labels for lab in loops):
            continue
        if any(sa.get(lab, 0) != 0 for lab in j) or any(sa.get(lab, 0) == 0 for lab in k):
            continue
        if math.prod(lab.bound for lab in j) > SMALLB_J or math.prod(lab.bound for lab in k) > SMALLB_K:
            continue
        by_a, by_b = _descending(sa), _descending(sb)
        rows.sort(key=_descending(out) if out is not None else by_a)
        j.sort(key=_descending(out) if out is not None else by_b)
        k.sort(key=by_a)
        return rows + k + j, bi == 1
    return None


def _descending(strides: dict[Label, int]) -> Callable[[Label], int]:
    return lambda lab: -strides.get(lab, 0)


def smallb_shape(merged: list[list[int]]) -> bool:
    """The last three merged loops are (rows p, summed k, small j) as MAC2B needs."""
    if len(merged) < 3:
        return False
    p, k, j = merged[-3], merged[-2], merged[-1]
    return (j[0] <= SMALLB_J and k[0] <= SMALLB_K and k[1] == 0 and j[2] == 0 and p[3] == 0
            and k[2] != 0 and k[3] != 0 and j[3] != 0)


def _merged_for(strides: list[dict[Label, int] | None], order: list[Label], kept: set[Label]) -> list[list[int]]:
    """Merged loops of an order, with a fresh output laid out by the order itself."""
    out = strides[0]
    if out is None:
        lay = [lab for lab in order if lab in kept]
        cs = dict(zip(lay, c_strides([lab.bound for lab in lay]), strict=True))
        out = cs
    raw = [[lab.bound, out.get(lab, 0), *[(s or {}).get(lab, 0) for s in strides[1:]]]
           for lab in order if lab.bound > 1]
    return merge_loops(raw)


def gemm2_shape(merged: Sequence[Sequence[int]]) -> bool:
    """The last two merged loops are (summed k, kept j) as the two-loop kernel needs
    (teil_kernels.h, ``tk_is_gemm2``): o independent of k, unit stride in j for o and b,
    and a either constant or unit stride in j."""
    return (len(merged) >= 2 and merged[-2][1] == 0 and merged[-1][1] == 1 and merged[-1][3] == 1
            and merged[-1][2] in (0, 1) and merged[-1][0] >= 4)


def writes_once(loops: Sequence[Sequence[int]], nbatch: int, batch_stride: int, size: int,
                scratch: bool = False) -> bool:
    """An op whose only summed loop is the kernel's k loop (second innermost) writes each of
    the ``size`` elements of its output once: every other loop moves the output, and the
    moving loops (and the batch) cover exactly ``size`` elements.  The batch must move the
    output too, unless the output is per-element scratch (rewritten for each element)."""
    if any(lp[1] == 0 for i, lp in enumerate(loops) if i != len(loops) - 2):
        return False
    if not batches_disjoint(loops, nbatch, batch_stride, scratch):
        return False
    # with the map injective (batches_disjoint), as many points as elements (and the
    # descriptor check keeping them inside the storage) make it onto as well
    return math.prod(lp[0] for lp in loops if lp[1] != 0) * (nbatch if batch_stride else 1) == size


def batches_disjoint(loops: Sequence[Sequence[int]], nbatch: int, batch_stride: int, scratch: bool) -> bool:
    """The batch elements of an op, run in parallel, write disjoint parts of its output: the
    loops that move the output and the batch have strides in mixed radix (sorted, each at
    least the span of the ones below it), so the map to the output is injective.  Scratch is
    per thread, and one element needs nothing."""
    if scratch:
        return True
    if nbatch > 1 and batch_stride == 0:
        return False
    moving = sorted([(lp[1], lp[0]) for lp in loops if lp[1] != 0] + ([(batch_stride, nbatch)] if nbatch > 1 else []))
    reach = 1
    for stride, extent in moving:
        if stride < reach:
            return False
        reach = stride * extent
    return True


def estimate(kind: str, merged: list[list[int]]) -> float:
    """Rough cycles of a MAC2 loop nest: calls of the innermost kernel times its cost."""
    if not merged:
        return 1.0
    if kind == "mac2b":
        if not smallb_shape(merged):
            return math.inf
        (P, _, _, _), (K, *_), (J, *_) = merged[-3], merged[-2], merged[-1]
        calls = math.prod(lp[0] for lp in merged[:-3])
        copies = calls // merged[-4][0] if len(merged) >= 4 and merged[-4][3] == 0 else calls
        vec = -(-J // 8)
        return copies * (20 + K * J) + calls * (10 + P * (K * vec + J / 4 + 4))
    if gemm2_shape(merged):
        K, J = merged[-2][0], merged[-1][0]
        calls = math.prod(lp[0] for lp in merged[:-2])
        return calls * (20 + K * (J // 8 + (J % 8 >= 4) + J % 4))
    n = merged[-1][0]
    calls = math.prod(lp[0] for lp in merged[:-1])
    unit = merged[-1][1] in (0, 1) and all(x in (0, 1) for x in merged[-1][2:])
    return calls * (12 + (n / 8 if unit else n))


def merge_loops(loops: list[list[int]]) -> list[list[int]]:
    """Fuse adjacent loops whose strides chain in every operand (one longer inner loop)."""
    out: list[list[int]] = []
    for lp in reversed(loops):
        if out:
            inner = out[0]
            if all(lp[1 + q] == inner[1 + q] * inner[0] for q in range(len(lp) - 1)):
                out[0] = [lp[0] * inner[0], *inner[1:]]
                continue
        out.insert(0, list(lp))
    return out


class Scheduler:
    """Phase 2 for one statement."""

    def __init__(self, low: Lowering, target: Operand, batch: Label | None) -> None:
        self.low = low
        self.target = target
        self.batch = batch
        self.writers: dict[int, int] = {}
        for s in low.steps:
            self.writers[id(s.out.store)] = self.writers.get(id(s.out.store), 0) + 1
        self.assigned: set[int] = set()  # storages written once by an assigning op: no FILL

    def sole_writer(self, step: Step) -> bool:
        return self.writers.get(id(step.out.store)) == 1

    def desc(self, kind: str, step: Step | None, operands: Sequence[Operand], coeff: float,
             kept: set[Label], loops: set[Label]) -> OpDesc:
        b = self.batch
        folded: list[tuple[int, dict[Label, int]] | None] = []
        for o in operands:
            if isinstance(o.store, Temp) and o.store.layout is None:
                folded.append(None)
            else:
                folded.append(fold(o))
        loops = set(loops) - ({b} if b is not None else set())
        strides = [None if f is None else f[1] for f in folded]
        order = choose_loops(strides, loops, kept)
        if kind == "mac2":
            alt = smallb_order(strides, loops, kept)
            if alt is not None:
                border, swap_args = alt
                sw = [strides[0], strides[2], strides[1]] if swap_args else strides
                if estimate("mac2b", _merged_for(sw, border, kept)) < \
                        estimate("mac2", _merged_for(strides, order, kept)):
                    kind, order = "mac2b", border
                    if swap_args:
                        operands = (operands[0], operands[2], operands[1])
                        folded = [folded[0], folded[2], folded[1]]
        out = operands[0]
        if isinstance(out.store, Temp) and out.store.layout is None:
            lay = [lab for lab in order if lab in kept]
            if b is not None and not out.store.scratch:
                lay = [b, *lay]
            out.store.layout = tuple(lay)
            folded[0] = fold(out)
        batch_strides = []
        for f, o in zip(folded, operands, strict=True):
            assert f is not None
            scratch = is_scratch(o)
            batch_strides.append(0 if (b is None or scratch) else f[1].get(b, 0))
        raw = [[lab.bound, *[0 if f is None else f[1].get(lab, 0) for f in folded]]
               for lab in order if lab.bound > 1]
        merged = merge_loops(raw)
        if kind == "mac2b" and not smallb_shape(merged):
            kind = "mac2"
        if kind == "mac2" and merged and merged[-1][2] == 1 and merged[-1][3] == 0:
            # orient so that b is the unit-stride operand of the innermost loop
            operands = (operands[0], operands[2], operands[1])
            folded = [folded[0], folded[2], folded[1]]
            batch_strides = [batch_strides[0], batch_strides[2], batch_strides[1]]
            merged = [[lp[0], lp[1], lp[3], lp[2]] for lp in merged]
        if len(merged) > MAXL - 2:
            raise TeilResourceError(f"a plan step needs {len(merged)} loops; the native engine "
                                    f"supports {MAXL - 2}")
        offsets = tuple(f[0] for f in folded if f is not None)
        return OpDesc(kind, step, tuple(operands), tuple(tuple(lp) for lp in merged), offsets, coeff,
                      tuple(batch_strides), order=tuple(order), batch=b)

    def step_descs(self, step: Step) -> list[OpDesc]:
        out = step.out
        kept = out.labels()
        descs: list[OpDesc] = []
        if step.kind == "mac":
            kind = f"mac{len(step.args)}"
            d = self.desc(kind, step, (out, *step.args), step.coeff, kept, step.loops())
            if d.kind == "mac2b" and self.sole_writer(step):
                # the only writer, each element once (all summed loops are the kernel's k loop)
                d.kind = "mac2b_set"
                self.assigned.add(id(out.store))
        else:
            d = self.desc(step.kind, step, (out, *step.args), 1.0, kept, step.loops())
        if step.init and d.kind != "mac2b_set":
            descs.append(self.fill(out))
        descs.append(d)
        return descs

    def fill(self, out: Operand, value: float = 0.0) -> OpDesc:
        return self.desc("fill", None, (out,), value, out.labels(), out.labels())


def temp_size_without(t: Temp, b: Label | None) -> int:
    return math.prod(lab.bound for lab in t.labels if lab is not b)


def choose_batch(nf: StmtNF, low: Lowering) -> Label | None:
    """A label of the statement shared by every temporary: fuse the steps into one loop over it."""
    if any(s.blas for s in low.steps):
        return None
    cands = [lab for lab in nf.labels if lab.bound >= 2 and all(lab in t.labels for t in low.temps)]
    if not cands:
        return None
    if low.temps and sum(temp_size_without(t, cands[0]) for t in low.temps) > SCRATCH_LIMIT:
        return None
    return cands[0] if cands[0] is nf.labels[0] else max(cands, key=lambda lab: lab.bound)


def schedule(nf: StmtNF) -> StmtPlan:
    """Phases 1 and 2 for one materialised statement."""
    assert nf.target is not None
    low = Lowering(f"s{nf.index}")
    target = Operand(nf.target, nf.labels)
    low.poly_into(nf.poly, target)
    writers: dict[int, int] = {}
    for s in low.steps:
        writers[id(s.out.store)] = writers.get(id(s.out.store), 0) + 1
    for s in low.steps:
        s.blas = blas_eligible(s, direct=writers[id(s.out.store)] == 1)
    direct = any(s.blas and s.out.store is nf.target for s in low.steps)
    batch = choose_batch(nf, low)
    calls: list[Call] = []
    if batch is not None:
        for t in low.temps:
            t.scratch = True
        sch = Scheduler(low, target, batch)
        ops = []
        for s in low.steps:
            ops.extend(sch.step_descs(s))
        if id(nf.target) not in sch.assigned:
            ops.insert(0, sch.fill(target))
        off = 0
        for t in low.temps:
            t.offset = off
            off += -(-t.size // 8) * 8
        for d in ops:
            d.nbatch = batch.bound
        calls.append(Call(ops, batch.bound, off))
    else:
        sch = Scheduler(low, target, None)
        fill_at = len(calls)
        for s in low.steps:
            if s.blas:
                if isinstance(s.out.store, Temp):
                    lay_blas(s)
                    calls.append(Call([], blas=s, temps=[s.out.store]))
                else:
                    calls.append(Call([], blas=s))
                continue
            for d in sch.step_descs(s):
                c = single(d)
                if isinstance(d.operands[0].store, Temp) and d.kind in ("fill", "div", "sel", "mac2b_set"):
                    c.temps = [d.operands[0].store]
                calls.append(c)
        if not direct and id(nf.target) not in sch.assigned:
            calls.insert(fill_at, single(sch.fill(target)))
    assign_in_place(calls)
    stream_blas(calls)
    return StmtPlan(nf, low, calls, batch)


def is_scratch(o: Operand) -> bool:
    """A per-thread scratch temporary of a fused batch (no batch stride: each element reuses it)."""
    return isinstance(o.store, Temp) and o.store.scratch


def assign_in_place(calls: list[Call]) -> None:
    """A zero FILL followed by the only MAC2 into the same storage, run by the two-loop
    kernel and writing each element once, becomes one assigning MAC2_SET: Σ_k into a
    register, then one store, instead of zeroing the output and reading it back."""
    writers: dict[int, list[tuple[Call, OpDesc]]] = {}
    for c in calls:
        if c.blas is not None:
            writers.setdefault(id(c.blas.out.store), []).append((c, None))  # type: ignore[arg-type]
        for d in c.ops:
            writers.setdefault(id(d.operands[0].store), []).append((c, d))
    for ws in writers.values():
        *fills, (call, d) = ws
        if d is None or d.kind != "mac2" or not gemm2_shape(d.loops) or \
                any(f is None or f.kind != "fill" or f.coeff != 0.0 for _, f in fills) or \
                not writes_once(d.loops, call.nbatch, d.batch_strides[0], d.operands[0].store.size,
                                is_scratch(d.operands[0])):
            continue
        if any(o.store is d.operands[0].store for o in d.operands[1:]):
            continue
        d.kind = "mac2_set"
        for c, f in fills:
            c.ops.remove(f)
            if c is not call:  # the storage is now first written (and allocated) here
                call.temps = list(dict.fromkeys([*c.temps, *call.temps]))
    calls[:] = [c for c in calls if c.ops or c.blas is not None]


#: Elements of a streamed BLAS temporary per chunk: small enough to be read back from the
#: caches (mttkrp 250^3: 88 ms in chunks of 16 rows of 62,500, 99 ms unchunked).  1 MiB, one
#: core's L2 here (issue 15: "an L2-sized block reduced at once is faster"); mttkrp 250^3,
#: medians of 9, chunks of 2^15 .. 2^20 elements, one thread: 188, 191, 191, 196, 216, 219 ms;
#: two threads: 119, 123, 111, 108, 133, 144 ms (hand numpy 207-217 and 116-124 in the same runs).
STREAM_CHUNK_ELEMENTS = 1 << 17


def stream_violation(step: Step, ops: Sequence[OpDesc], nbatch: int, scratch: int,
                     later: Sequence[Call]) -> str | None:
    """Why BLAS ``step`` cannot be streamed through ``ops`` (run over ``nbatch`` batch
    elements), or None: the one statement of the condition, used by the planner to stream
    and by :func:`core_teil.native.plan_check.check_stream` to accept a streamed call.

    The temporary is laid out [i..., j...] (:func:`lay_blas`).  If its outermost label is
    the ops' batch label, every op reads it only inside the row of its own batch element
    (batch stride = one row), no op writes it or the GEMM's inputs, and no later call reads
    it, then BLAS rows ``[lo, hi)`` are all that batch elements ``[lo, hi)`` need: running
    the two in chunks computes what running them one after the other did."""
    t = step.out.store
    batch, i, _j, _k = blas_groups(step)
    if not isinstance(t, Temp) or batch or not i or t.layout is None or t.layout[0] is not i[0]:
        return "the temporary is not laid out by the streamed label"
    if not ops or nbatch != i[0].bound or scratch:
        return "the chunks do not follow the temporary's rows"
    row = t.size // i[0].bound
    for d in ops:
        if d.operands[0].store is t or any(d.operands[0].store is a.store for a in step.args):
            return "an op writes what the GEMM reads or writes"
        for r, o in enumerate(d.operands):
            if o.store is t:
                reach = d.offsets[r] + sum((lp[0] - 1) * lp[1 + r] for lp in d.loops)
                if d.batch_strides[r] != row or d.offsets[r] < 0 or reach >= row:
                    return f"an op reads {t!r} outside its own element's rows"
    if any(o.store is t for c in later for d in c.ops for o in d.operands) or \
            any(a.store is t for c in later if c.blas is not None for a in c.blas.args):
        return f"{t!r} is read after its streamed call"
    return None


def stream_blas(calls: list[Call]) -> None:
    """A BLAS step into a temporary that the next call alone consumes, row by row, runs in
    chunks with it, so that each chunk of the temporary is read while still in cache."""
    q = 0
    while q + 1 < len(calls):
        x, y = calls[q], calls[q + 1]
        if x.blas is not None and not x.ops and y.blas is None and \
                stream_violation(x.blas, y.ops, y.nbatch, y.scratch, calls[q + 2:]) is None:
            row = x.blas.out.store.size // y.nbatch
            calls[q] = Call(y.ops, y.nbatch, 0, x.blas, [*x.temps, *y.temps],
                            chunk=max(1, min(y.nbatch, STREAM_CHUNK_ELEMENTS // max(row, 1))))
            del calls[q + 1]
        q += 1


#: The innermost loops that an op kind's kernel runs itself (teil_kernels.h): MAC2B's
#: ``tk_smallb`` takes the last three (rows p, summed k, small j; :func:`smallb_shape`).
KERNEL_LOOPS: dict[str, int] = {"mac2b": 3, "mac2b_set": 3}


def single(d: OpDesc) -> Call:
    """An op on its own, parallel over its outermost loop that writes distinct outputs.

    The parallel loop is never one of the loops the op's kernel runs itself
    (:data:`KERNEL_LOOPS`): taking MAC2B's rows loop ``p`` left a two-loop nest
    that is not MAC2B's shape, so that plan_check refused the plan of
    ``'ab,bc,cd,de->ae'`` on 2x3, 3x4, 4x2, 2x3 (issue 12).  Without an outer
    loop that moves the output, the op runs as one element (its kernel is a few
    hundred multiply-adds per row)."""
    loops = [list(lp) for lp in d.loops]
    outer = len(loops) - KERNEL_LOOPS.get(d.kind, 0)
    par = next((i for i, lp in enumerate(loops[:max(outer, 0)]) if lp[1] != 0 and lp[0] >= 2), None)
    if par is None:
        d.nbatch = 1
        d.batch_strides = tuple(0 for _ in d.operands)
        return Call([d], 1)
    lp = loops.pop(par)
    d.par = par
    d.loops = tuple(tuple(x) for x in loops)
    d.nbatch = lp[0]
    d.batch_strides = tuple(lp[1:])
    return Call([d], lp[0])


def lay_blas(step: Step) -> None:
    """The output temp of a BLAS step is laid out [batch..., i..., j...] (row-major GEMM)."""
    batch, i, j, _k, _ = classify(step)
    _, sa = fold(step.args[0])
    _, sb = fold(step.args[1])
    batch.sort(key=lambda x: -sa.get(x, 0))
    i.sort(key=lambda x: -sa.get(x, 0))
    j.sort(key=lambda x: -sb.get(x, 0))
    assert isinstance(step.out.store, Temp)
    step.out.store.layout = tuple(batch + i + j)


def blas_groups(step: Step) -> tuple[list[Label], list[Label], list[Label], list[Label]]:
    """The label groups of a BLAS step in the order its views use."""
    batch, i, j, k, _ = classify(step)
    lay = out_order(step)
    batch.sort(key=lay.index)
    i.sort(key=lay.index)
    j.sort(key=lay.index)
    _, sa = fold(step.args[0])
    k.sort(key=lambda x: -sa.get(x, 0))
    return batch, i, j, k


@dataclass
class Plan:
    """Everything the native kernel runs, for one program, parameter values and pad."""

    typed: TypedProgram
    pad: int | None
    nfs: list[StmtNF]
    stmts: list[StmtPlan]
    final: dict[str, Buffer | Definition]


def plan(typed: TypedProgram, pad: int | None = None) -> Plan:
    """Normal forms (by eval.py's equations), then schedules for the materialised statements."""
    nfs, final = normal_forms(typed, pad)
    stmts = [schedule(nf) for nf in nfs if nf.action == "materialize"]
    return Plan(typed, pad, nfs, stmts, final)


def _bodies(f: DivAtom | GuardAtom | SumAtom) -> tuple[Poly, ...]:
    return (f.num, f.den) if isinstance(f, DivAtom) else (f.body,)


# ==========================================================================
# When the plan may differ from the equations: the overflow guard
# ==========================================================================

#: A reordered computation whose magnitude bound stays below this cannot overflow in any
#: order: the margin covers the relative rounding growth of up to 2^50 operations.
OVERFLOW_BOUND = sys.float_info.max / 4

class Magnitudes(Protocol):
    """What :func:`reorder_safe` reads of the buffers, NaN (•) ignored."""

    def largest(self, buf: Buffer) -> float:
        """``max |v|`` (0 when every value is •)."""

    def least(self, buf: Buffer) -> float:
        """``min |v|`` over the non-zero values (``inf`` when there are none): for a denominator."""


def _exact(poly: Poly) -> bool:
    """The plan computes ``poly`` with the very operations of the equations: at most two
    terms (``a ± b``, commutative), each a product of at most two factors with coefficient
    ±1 (negation and ``x · y`` are exact) and no sum.  Anything else is reordered: sums are
    blocked or factored (``x · Σ_m y(m)`` for ``Σ_m x · y(m)``), products re-associated."""
    return len(poly.terms) <= 2 and all(
        not t.red and len(t.factors) <= 2 and (abs(t.coeff) == 1.0 or (t.coeff == 0.0 and not t.factors))
        for t in poly.terms)


def reorder_safe(poly: Poly, mag: Magnitudes) -> bool:
    """No value of ``poly``'s computation overflows, in the plan's order or the equations'.

    The plan applies the laws of Σ and of products (distributivity, associativity,
    commutativity), exact for the reals and for •, which absorbs either side; in floats
    a reordering can overflow where the equations do not, or the reverse, and ``±inf``
    does not distribute (``inf · (1 + -2) = -inf`` but ``inf · 1 + inf · -2`` is •).  A
    division later maps such an ``inf`` to a finite value (``5 / inf = 0``) where the
    equations give • (issue 11).  When every partial sum and product of the exact values
    is bounded by :data:`OVERFLOW_BOUND` (and no value is ``±inf``), both orders stay
    finite wherever a value is not •, and differ by rounding only.  Not safe: the native
    engine lets the equations decide (the reference engine)."""
    if _exact(poly):
        return all(_factor_safe(f, mag) for t in poly.terms for f in t.factors)
    return bound(poly, mag) <= OVERFLOW_BOUND


def reorder_sensitive(poly: Poly) -> bool:
    """Whether :func:`reorder_safe` of ``poly`` depends on the values at all (a plan that
    computes exactly what the equations compute needs no look at its inputs)."""
    return not _exact(poly) or any(not isinstance(f, Leaf) and any(reorder_sensitive(q) for q in _bodies(f))
                                   for t in poly.terms for f in t.factors)


def _factor_safe(f: Factor, mag: Magnitudes) -> bool:
    if isinstance(f, Leaf):
        return True
    return all(reorder_safe(q, mag) for q in _bodies(f))


def bound(poly: Poly, mag: Magnitudes) -> float:
    """``Σ_terms max(1, |c|) · Π_red n · Π_factors max(1, |f|)``: bounds every partial sum and
    partial product of ``poly``, whatever the order (factors below 1 may be left out of a
    partial product, hence ``max(1, ·)``); ``inf`` when some factor has no bound."""
    total = 0.0
    for t in poly.terms:
        b = max(1.0, abs(t.coeff)) * math.prod(r.bound for r in t.red)
        for f in t.factors:
            b *= max(1.0, _factor_bound(f, mag))
        total += b
    return total


def _factor_bound(f: Factor, mag: Magnitudes) -> float:
    if isinstance(f, Leaf):
        return mag.largest(f.buf)
    if isinstance(f, GuardAtom | SumAtom):
        return bound(f.body, mag)
    # controlled division (report Definition 8): 0, •, or num / den with den != 0
    if not (reorder_safe(f.num, mag) and reorder_safe(f.den, mag)):
        return math.inf
    top = bound(f.num, mag)
    if top == 0.0:
        return 0.0
    low = _least(f.den, mag)
    return top / low if low > 0.0 else math.inf


def _least(den: Poly, mag: Magnitudes) -> float:
    """A lower bound of the non-zero ``|den|``: known for a product of reads, else 0."""
    if len(den.terms) != 1 or den.terms[0].red or not all(isinstance(f, Leaf) for f in den.terms[0].factors):
        return 0.0
    t = den.terms[0]
    low = abs(t.coeff)
    for f in t.factors:
        assert isinstance(f, Leaf)
        low *= mag.least(f.buf)
    return low if math.isfinite(low) else math.inf


def describe(p: Plan) -> str:
    """A readable account of a plan (for ``--explain`` style debugging and the docs)."""
    lines = []
    for sp in p.stmts:
        nf = sp.nf
        lines.append(f"statement {nf.index + 1} ({nf.stmt.target}): {len(nf.poly.terms)} term(s), "
                     f"batch {sp.batch!r}")
        for c in sp.calls:
            if c.blas is not None:
                lines.append(f"  blas {c.blas.out.store!r} <- {[a.store for a in c.blas.args]}"
                             + (f", streamed in chunks of {c.chunk} into:" if c.chunk else ""))
            for d in c.ops:
                lines.append(f"  {d.kind} {[o.store for o in d.operands]} loops={[lp[0] for lp in d.loops]} "
                             f"nbatch={d.nbatch}")
    return "\n".join(lines)
