"""The Z3 interpretation of the semantics in :mod:`core_teil.semantics.eval`.

The proof obligations are not a second copy of the semantics: they come from
running the very equations of ``eval.py`` (``denote``, ``st_stmt``) with
this :class:`Z3Interpretation`, in which

* an index is a Z3 integer term (a fresh constant for every multi-index
  component of St-Stmt's ``∀k <= Γ(x)`` and for every summation variable),
  so nothing is enumerated and proof time does not depend on the extents;
* a value is a term of the datatype ``Value = val(Real) | undef`` (``•``),
  and ``arith`` is report Definition 4 with controlled division (Def. 8);
* a memory maps each allocation to a Z3 array ``Int^r -> Value``
  (uninterpreted for the initial store, a ``Lambda`` after St-Stmt), or to
  an uninterpreted *function* (:func:`function_memory`), which is plain
  SMT-LIB and so can be re-checked by any solver;
* ``Σ_{m=1..n} h(m)`` is ``SUM(λm. h(m), n)`` with ``SUM`` uninterpreted, or,
  with ``abstract_sums=True``, an uninterpreted function of the index
  variables in scope (one symbol per summation): facts about sums then enter
  only as instances of the sum lemmas (Z3-NOTES.md, "Sums").

Every ``read`` is recorded with its *path condition*: the bounds on the
statement's multi-index and on the enclosing summation variables.  "Every
read is in bounds" (paper Lemma 4.3, Theorem 4.4) is then one obligation per
read: ``hypotheses ∧ path ∧ ¬ in_bounds`` must be unsatisfiable.  Writes
(St-Stmt's conclusion) and padded ``expa`` guards are recorded likewise.

:class:`AlignedInterpretation` runs a second evaluation that *shares* the
multi-index and summation variables of a first one (its ``leader``): the
lowered program against the original (translation validation), or the
unpadded semantics at the clamped index against the padded one (padding
simulation, report Lemma 6).  Sharing a summation variable is what lets one
ground instance of a sum lemma relate the two sums (see ``simulation.py``).
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import z3

from ..lang.shapes import ShapeSolver
from ..lang.syntax import Dim, ElemOp, Expr, Stmt, Var

# -- the value domain V ∪ {•} (report Definition 4) --------------------------

ValueSort = z3.Datatype("Value")
ValueSort.declare("val", ("real", z3.RealSort()))
ValueSort.declare("undef")
Value = ValueSort.create()
UNDEF = Value.undef
ZERO = Value.val(z3.RealVal(0))


def val(x: Any) -> z3.DatatypeRef:
    """The defined value ``x``."""
    return Value.val(x if isinstance(x, z3.ExprRef) else z3.RealVal(x))


def defined(v: z3.ExprRef) -> z3.BoolRef:
    return v != UNDEF


#: The operations of ``V`` itself (the reals) that Definition 4 extends to ``V ∪ {•}``.
REAL_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y, "div": lambda x, y: x / y,
}

#: The same operations uninterpreted.  Obligations use these: what is proved for every
#: interpretation of them holds for the reals, and the proofs (about indices, •, and zero
#: padding) need no arithmetic beyond the zero cases :func:`arith` spells out.  With real
#: multiplication Z3's time on the nested interp kernel ranged over 0.03-20 s with its seed.
ABSTRACT_REALS: dict[str, Callable[[Any, Any], Any]] = {
    op: z3.Function(f"real_{op}", z3.RealSort(), z3.RealSort(), z3.RealSort()) for op in REAL_OPS
}


def arith(op: ElemOp, a: z3.ExprRef, b: z3.ExprRef,
          reals: Mapping[str, Callable[[Any, Any], Any]] | None = None) -> z3.ExprRef:
    """Definition 4: • absorbs ``+ - *``; Definition 8: ``0/0 = 0``, ``0/• = 0``, else ``v/0 = •``.

    ``0 + 0 = 0 - 0 = 0`` and ``0 · v = v · 0 = 0`` are spelled out (true of the reals) so
    that zero padding is reasoned about without arithmetic.  Undefinedness is tested by
    equality with ``undef`` rather than with the datatype's recogniser, so that exported
    scripts use nothing beyond SMT-LIB 2.6 that every solver parses the same way."""
    f = (reals or REAL_OPS)[op]
    either_undef = z3.Or(a == UNDEF, b == UNDEF)
    v = Value.val(f(Value.real(a), Value.real(b)))
    if op in ("add", "sub"):
        return z3.If(either_undef, UNDEF, z3.If(z3.And(a == ZERO, b == ZERO), ZERO, v))
    if op == "mul":
        return z3.If(either_undef, UNDEF, z3.If(z3.Or(a == ZERO, b == ZERO), ZERO, v))
    return z3.If(a == ZERO, ZERO, z3.If(z3.Or(either_undef, b == ZERO), UNDEF, v))


#: ``SUM(h, n) = Σ_{m=1..n} h[m]``; uninterpreted, characterised by the sum lemmas.
SUM = z3.Function("SUM", z3.ArraySort(z3.IntSort(), Value), z3.IntSort(), Value)


def memory_sort(rank: int) -> z3.SortRef:
    """The sort of one allocation: ``Value`` for a scalar, ``Int^rank -> Value`` otherwise."""
    if rank == 0:
        return Value
    return z3.ArraySort(*([z3.IntSort()] * rank), Value)


def select(arr: Any, k: tuple[z3.ArithRef, ...]) -> z3.ExprRef:
    """``μ(x)(k)`` for an array memory or a function memory (:func:`function_memory`)."""
    if isinstance(arr, z3.FuncDeclRef):
        return arr(*k)
    return z3.Select(arr, *k) if k else arr


# -- records -------------------------------------------------------------------


@dataclass(frozen=True)
class Read:
    """One access ``μ(x)(k)`` made under ``path`` by the node ``node``."""

    node: Var
    name: str
    index: tuple[z3.ArithRef, ...]
    path: tuple[z3.BoolRef, ...]


@dataclass(frozen=True)
class SumNode:
    """One summation ``Σ_{m=1..n} body`` made under ``path`` by ``node``.

    ``free`` are the index variables in scope (the arguments of an abstracted
    sum); ``reads``/``guards`` the slices of the interpretation's records the
    body made; ``inner`` the summation variables created inside the body."""

    node: Expr
    var: z3.ArithRef
    bound: z3.ArithRef
    body: z3.ExprRef
    path: tuple[z3.BoolRef, ...]
    term: z3.ExprRef
    free: tuple[z3.ArithRef, ...] = ()
    reads: tuple[int, int] = (0, 0)
    guards: tuple[int, int] = (0, 0)
    inner: tuple[z3.ArithRef, ...] = ()


@dataclass(frozen=True)
class Guard:
    """The padded ``expa`` guard ``j <= d`` (eval.py, ``Interpretation.guard``)."""

    index: z3.ArithRef
    extent: z3.ArithRef
    path: tuple[z3.BoolRef, ...]


@dataclass(frozen=True)
class Write:
    """St-Stmt's conclusion ``μ{x ↦ λk. v}`` over the domain ``k <= bounds``."""

    name: str
    index: tuple[z3.ArithRef, ...]
    bounds: tuple[z3.ArithRef, ...]
    value: z3.ExprRef


# -- the interpretation ------------------------------------------------------


@dataclass
class Z3Interpretation:
    """Indices, values, sums and memories as Z3 terms (see the module docstring)."""

    shapes: ShapeSolver
    prefix: str = ""
    path: list[z3.BoolRef] = field(default_factory=list)
    reads: list[Read] = field(default_factory=list)
    sums: list[SumNode] = field(default_factory=list)
    index_vars: list[z3.ArithRef] = field(default_factory=list)
    _fresh: Any = field(default_factory=itertools.count)
    abstract_sums: bool = False
    guards: list[Guard] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    #: Summation variables in creation order, with the node that made each.
    sum_vars: list[tuple[z3.ArithRef, Expr]] = field(default_factory=list)
    _scope: list[z3.ArithRef] = field(default_factory=list)
    _domain: tuple[z3.ArithRef, ...] = ()
    #: Report Definition 7 in another (equivalent) form, e.g. ``M·q`` with ``M(q-1) < n <= M·q``
    #: stated as hypotheses by the caller; ``None``: floor division, which needs no hypotheses.
    ceiling: Callable[[z3.ArithRef, int], z3.ArithRef] | None = None
    #: The real operations (:data:`REAL_OPS` if ``None``; :data:`ABSTRACT_REALS` in obligations).
    reals: Mapping[str, Callable[[Any, Any], Any]] | None = None

    def fresh(self, base: str) -> z3.ArithRef:
        return z3.Int(f"{self.prefix}{base}!{next(self._fresh)}")

    # hooks for AlignedInterpretation ------------------------------------------

    def summation_var(self, node: Expr) -> z3.ArithRef:
        return self.fresh("m")

    def domain_vars(self, bounds: tuple[z3.ArithRef, ...]) -> tuple[z3.ArithRef, ...]:
        return tuple(self.fresh(f"k{j}") for j in range(1, len(bounds) + 1))

    def index_of(self, k: z3.ArithRef, bound: z3.ArithRef) -> z3.ArithRef:
        """The index a shared variable stands for (the variable itself, or its clamp)."""
        return k

    def sum_term(self, m: z3.ArithRef, body: z3.ExprRef, n: z3.ArithRef,
                 free: tuple[z3.ArithRef, ...]) -> z3.ExprRef:
        if not self.abstract_sums:
            return SUM(z3.Lambda([m], body), n)
        name = f"{self.prefix}sum!{len(self.sums)}"
        if not free:
            return z3.Const(name, Value)
        return z3.Function(name, *([z3.IntSort()] * len(free)), Value)(*free)

    # Interpretation protocol -----------------------------------------------

    def extent(self, d: Dim) -> z3.ArithRef:
        return self.shapes.term(d)

    def ceil(self, n: z3.ArithRef, pad: int) -> z3.ArithRef:
        ceiling = getattr(self, "ceiling", None)  # proofs/ calls this unbound, as a function of n
        if ceiling is not None:
            return ceiling(n, pad)
        return z3_round_up(n, pad)

    def read(self, store: Mapping[str, Any], x: str, k: tuple, node: Var) -> z3.ExprRef:
        k = as_index(k)
        self.reads.append(Read(node, x, k, tuple(self.path)))
        memory = store[x]
        arity = memory.arity() if isinstance(memory, z3.FuncDeclRef) else None
        if (arity is not None and arity != len(k)) or (arity is None and not k and memory.sort() != Value):
            # A read of the wrong rank (only a broken semantics makes one) is recorded, so that
            # the reads obligation refutes it, and yields an arbitrary value.
            return z3.Const(f"{self.prefix}{x}!misread!{next(self._fresh)}", Value)
        return select(memory, k)

    def arith(self, op: ElemOp, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
        # The module-level ``arith`` is looked up at each call, so a mutant patched into this
        # module is what runs; one that does not take ``reals`` gets the real operations.
        f = arith
        if self.reals is None or not _takes_reals(f):
            return f(op, a, b)
        return f(op, a, b, self.reals)

    def sum(self, n: z3.ArithRef, body: Callable[[z3.ArithRef], z3.ExprRef], node: Expr) -> z3.ExprRef:
        m = self.summation_var(node)
        self.sum_vars.append((m, node))
        free = (*self._domain, *self._scope)
        r0, g0, s0 = len(self.reads), len(self.guards), len(self.sum_vars)
        self.path.append(z3.And(m >= 1, m <= n))
        self._scope.append(m)
        try:
            v = body(self.index_of(m, n))
        finally:
            self.path.pop()
            self._scope.pop()
        term = self.sum_term(m, v, n, free)
        inner = tuple(var for var, _ in self.sum_vars[s0:])
        self.sums.append(SumNode(node, m, n, v, tuple(self.path), term, free,
                                 (r0, len(self.reads)), (g0, len(self.guards)), inner))
        return term

    def guard(self, j: z3.ArithRef, d: z3.ArithRef, v: z3.ExprRef) -> z3.ExprRef:
        j, d = as_index((j, d))
        self.guards.append(Guard(j, d, tuple(self.path)))
        return z3.If(j <= d, v, ZERO)

    def clamp(self, j: z3.ArithRef, d: z3.ArithRef) -> z3.ArithRef:
        j, d = as_index((j, d))
        return z3.If(j <= d, j, d)

    def domain(self, bounds: tuple[z3.ArithRef, ...], stmt: Stmt) -> tuple[z3.ArithRef, ...]:
        k = self.domain_vars(bounds)
        self.index_vars.extend(k)
        self._domain = k
        self.path.extend(in_bounds((kj,), (n,)) for kj, n in zip(k, bounds, strict=True))
        return tuple(self.index_of(kj, n) for kj, n in zip(k, bounds, strict=True))

    def update(self, store: Mapping[str, Any], x: str, k: tuple, v: z3.ExprRef,
               bounds: tuple) -> dict[str, Any]:
        # St-Stmt's premises were recorded as obligations; the path of this
        # statement's domain must not leak into the next statement.
        del self.path[len(self.path) - len(k):]
        # The domain variables; an aligned run's k are their clamps (terms, not variables).
        dom = self._domain if len(self._domain) == len(k) else tuple(k)
        self.writes.append(Write(x, dom, tuple(bounds), v))
        self._domain = ()
        new = dict(store)
        new[x] = z3.Lambda(list(dom), v) if dom else v
        return new


def as_index(k: tuple) -> tuple[z3.ArithRef, ...]:
    """Index components as Z3 terms (an equation may pass a Python ``int``)."""
    return tuple(z3.IntVal(i) if isinstance(i, int) else i for i in k)


def _takes_reals(f: Callable[..., Any]) -> bool:
    try:
        return "reals" in inspect.signature(f).parameters
    except (TypeError, ValueError):
        return False


class AlignmentError(Exception):
    """A second run did not follow the first one's summations (only a mutated semantics does that)."""


@dataclass
class AlignedInterpretation(Z3Interpretation):
    """A run that reuses the multi-index and summation variables of ``leader``, in creation order.

    With ``clamp=True`` every shared variable stands for its clamp
    ``min(v, bound)``: the unpadded semantics evaluated at the clamped index of
    the padded run (``simulation.py``).  A summation beyond the leader's gets
    a fresh variable (and, being unpaired, no sum-lemma instance)."""

    leader: Z3Interpretation | None = None
    clamp: bool = False
    _k_cursor: int = 0
    _m_cursor: int = 0

    def summation_var(self, node: Expr) -> z3.ArithRef:
        assert self.leader is not None
        if self._m_cursor < len(self.leader.sum_vars):
            m, lead = self.leader.sum_vars[self._m_cursor]
            self._m_cursor += 1
            # The padded and unpadded runs evaluate the same nodes; the lowered
            # program's nodes keep the spans of the full-TeIL nodes they replace.
            same = lead is node if self.clamp else lead.span == node.span
            if not same:
                raise AlignmentError(f"summation {self._m_cursor} pairs {type(lead).__name__} at "
                                     f"{lead.span} with {type(node).__name__} at {node.span}")
            return m
        self._m_cursor += 1
        return self.fresh("m")

    def domain_vars(self, bounds: tuple[z3.ArithRef, ...]) -> tuple[z3.ArithRef, ...]:
        assert self.leader is not None
        k = tuple(self.leader.index_vars[self._k_cursor:self._k_cursor + len(bounds)])
        self._k_cursor += len(bounds)
        if len(k) != len(bounds):
            raise AlignmentError("the multi-index of the second run is longer than the first one's")
        return k

    def index_of(self, k: z3.ArithRef, bound: z3.ArithRef) -> z3.ArithRef:
        return z3.If(k <= bound, k, bound) if self.clamp else k


def subterms(terms: Iterable[z3.ExprRef], seen: set[int] | None = None) -> Iterator[z3.ExprRef]:
    """Every subterm of ``terms`` once, depth first, under binders too (a shared subterm is
    visited once: Z3 terms are DAGs, and a walk of the tree can be exponential).  ``seen``
    (term ids) carries over from an earlier walk: what it walked is skipped, so the caller
    must keep those terms alive, or their ids may name others."""
    seen = set() if seen is None else seen
    stack = list(terms)
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        yield t
        if z3.is_quantifier(t):
            stack.append(t.body())
        elif z3.is_app(t):
            stack.extend(t.children())


def is_constant(t: z3.ExprRef) -> bool:
    """Whether ``t`` is a free constant (an uninterpreted symbol of no arguments)."""
    return z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED


def z3_round_up(n: z3.ArithRef, pad: int) -> z3.ArithRef:
    """``⌈n⌉`` of report Definition 7 as a Z3 term (Int ``/`` is floor division for a positive divisor)."""
    return pad * ((n + (pad - 1)) / pad)


def conj(*conditions: z3.BoolRef) -> z3.BoolRef:
    """``c1 ∧ … ∧ cn``, and ``true`` for none: Z3 prints a nullary ``And`` as a bare ``and``,
    which is not SMT-LIB2 (cvc5 rejects it)."""
    if not conditions:
        return z3.BoolVal(True)
    return conditions[0] if len(conditions) == 1 else z3.And(*conditions)


def initial_memory(gamma: Mapping[str, tuple[Dim, ...]], prefix: str = "mu") -> dict[str, z3.ExprRef]:
    """An arbitrary memory ``μ ~ μ_allocs`` (Definition 4.2): one uninterpreted array per allocation."""
    return {x: z3.Const(f"{prefix}_{x}", memory_sort(len(t))) for x, t in gamma.items()}


def function_memory(gamma: Mapping[str, tuple[Dim, ...]], prefix: str = "mu") -> dict[str, Any]:
    """Like :func:`initial_memory`, with an uninterpreted function ``Int^r -> Value`` per allocation
    (plain SMT-LIB: multi-index arrays are a Z3 extension)."""
    return {x: _memory_symbol(f"{prefix}_{x}", len(t)) for x, t in gamma.items()}


def _memory_symbol(name: str, rank: int) -> Any:
    """One allocation's symbol, made once: a program of N statements asks for every allocation's
    symbol at each statement, and making N^2 Z3 declarations dominated ``prove`` (3000 chained
    statements: two minutes).  Z3 gives the same declaration for the same name and sorts, so the
    memo changes no term."""
    got = _MEMORY_SYMBOLS.get((name, rank))
    if got is None:
        got = z3.Const(name, Value) if not rank else z3.Function(name, *([z3.IntSort()] * rank), Value)
        _MEMORY_SYMBOLS[name, rank] = got
    return got


_MEMORY_SYMBOLS: dict[tuple[str, int], Any] = {}


def in_bounds(k: tuple[z3.ArithRef, ...], bounds: tuple[z3.ArithRef, ...]) -> z3.BoolRef:
    """``k <= bounds`` (1-based, SPEC.md section 1)."""
    if not k:
        return z3.BoolVal(True)
    k, bounds = as_index(k), as_index(bounds)
    terms = (*k, *bounds)
    key = tuple(t.get_id() for t in terms)
    found = _IN_BOUNDS.get(key)
    # The entry keeps its terms alive, so their ids cannot be reused by others; eq() is cheap.
    if found is None or len(found[0]) != len(terms) or \
            not all(a.eq(b) for a, b in zip(found[0], terms, strict=True)):
        term = z3.And(*[z3.And(kj >= 1, kj <= n) for kj, n in zip(k, bounds, strict=True)])
        found = _IN_BOUNDS[key] = (terms, term)
    return found[1]


#: Memo of :func:`in_bounds` (z3py's argument coercion dominates building these; they recur per read).
_IN_BOUNDS: dict[tuple[int, ...], tuple[tuple[z3.ExprRef, ...], z3.BoolRef]] = {}


def clamp(k: tuple[z3.ArithRef, ...], bounds: tuple[z3.ArithRef, ...]) -> tuple[z3.ArithRef, ...]:
    """``min(k_j, t_j)`` componentwise: the in-domain index a padded index is related to."""
    return tuple(z3.If(kj <= n, kj, n) for kj, n in zip(k, bounds, strict=True))
