"""The Z3 interpretation of the semantics in :mod:`core_teil.eval`.

The proof obligations are not a second copy of the semantics: they come from
running the very equations of ``eval.py`` (``denote``, ``st_stmt``) with
this :class:`Z3Interpretation`, in which

* an index is a Z3 integer term (a fresh constant for every multi-index
  component of St-Stmt's ``∀k <= Γ(x)`` and for every summation variable),
  so nothing is enumerated and proof time does not depend on the extents;
* a value is a term of the datatype ``Value = val(Real) | undef`` (``•``),
  and ``arith`` is report Definition 4 with controlled division (Def. 8);
* a memory maps each allocation to a Z3 array ``Int^r -> Value``
  (uninterpreted for the initial store, a ``Lambda`` after St-Stmt);
* ``Σ_{m=1..n} h(m)`` is ``SUM(λm. h(m), n)`` with ``SUM`` uninterpreted:
  facts about sums enter only as instances of the sum lemmas that
  ``proofs/`` proves by induction (Z3-NOTES.md, "Sums").

Every ``read`` is recorded with its *path condition*: the bounds on the
statement's multi-index and on the enclosing summation variables.  "Every
read is in bounds" (paper Lemma 4.3, Theorem 4.4) is then one obligation per
read: ``hypotheses ∧ path ∧ ¬ in_bounds`` must be unsatisfiable.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import z3

from .shapes import ShapeSolver
from .syntax import Dim, ElemOp, Expr, Stmt, Var

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
    return Value.is_val(v)


def arith(op: ElemOp, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
    """Definition 4: • absorbs ``+ - *``; Definition 8: ``0/0 = 0``, ``0/• = 0``, else ``v/0 = •``."""
    either_undef = z3.Or(Value.is_undef(a), Value.is_undef(b))
    ra, rb = Value.real(a), Value.real(b)
    if op == "add":
        return z3.If(either_undef, UNDEF, Value.val(ra + rb))
    if op == "sub":
        return z3.If(either_undef, UNDEF, Value.val(ra - rb))
    if op == "mul":
        return z3.If(either_undef, UNDEF, Value.val(ra * rb))
    return z3.If(a == ZERO, ZERO, z3.If(z3.Or(either_undef, b == ZERO), UNDEF, Value.val(ra / rb)))


#: ``SUM(h, n) = Σ_{m=1..n} h[m]``; uninterpreted, characterised by the sum lemmas.
SUM = z3.Function("SUM", z3.ArraySort(z3.IntSort(), Value), z3.IntSort(), Value)


def memory_sort(rank: int) -> z3.SortRef:
    """The sort of one allocation: ``Value`` for a scalar, ``Int^rank -> Value`` otherwise."""
    if rank == 0:
        return Value
    return z3.ArraySort(*([z3.IntSort()] * rank), Value)


def select(arr: z3.ExprRef, k: tuple[z3.ArithRef, ...]) -> z3.ExprRef:
    return z3.Select(arr, *k) if k else arr


# -- the interpretation ------------------------------------------------------


@dataclass(frozen=True)
class Read:
    """One access ``μ(x)(k)`` made under ``path`` by the node ``node``."""

    node: Var
    name: str
    index: tuple[z3.ArithRef, ...]
    path: tuple[z3.BoolRef, ...]


@dataclass(frozen=True)
class SumNode:
    """One summation ``Σ_{m=1..n} body`` made under ``path`` by ``node``."""

    node: Expr
    var: z3.ArithRef
    bound: z3.ArithRef
    body: z3.ExprRef
    path: tuple[z3.BoolRef, ...]
    term: z3.ExprRef


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

    def fresh(self, base: str) -> z3.ArithRef:
        return z3.Int(f"{self.prefix}{base}!{next(self._fresh)}")

    # Interpretation protocol -----------------------------------------------

    def extent(self, d: Dim) -> z3.ArithRef:
        return self.shapes.term(d)

    def ceil(self, n: z3.ArithRef, pad: int) -> z3.ArithRef:
        return pad * ((n + (pad - 1)) / pad)  # Z3's Int "/" is floor division for a positive divisor

    def read(self, store: Mapping[str, z3.ExprRef], x: str, k: tuple, node: Var) -> z3.ExprRef:
        self.reads.append(Read(node, x, tuple(k), tuple(self.path)))
        return select(store[x], tuple(k))

    def arith(self, op: ElemOp, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
        return arith(op, a, b)

    def sum(self, n: z3.ArithRef, body: Callable[[z3.ArithRef], z3.ExprRef], node: Expr) -> z3.ExprRef:
        m = self.fresh("m")
        self.path.append(z3.And(m >= 1, m <= n))
        try:
            v = body(m)
        finally:
            self.path.pop()
        term = SUM(z3.Lambda([m], v), n)
        self.sums.append(SumNode(node, m, n, v, tuple(self.path), term))
        return term

    def guard(self, j: z3.ArithRef, d: z3.ArithRef, v: z3.ExprRef) -> z3.ExprRef:
        return z3.If(j <= d, v, ZERO)

    def domain(self, bounds: tuple[z3.ArithRef, ...], stmt: Stmt) -> tuple[z3.ArithRef, ...]:
        k = tuple(self.fresh(f"k{j}") for j in range(1, len(bounds) + 1))
        self.index_vars.extend(k)
        self.path.extend(z3.And(kj >= 1, kj <= n) for kj, n in zip(k, bounds, strict=True))
        return k

    def update(self, store: Mapping[str, z3.ExprRef], x: str, k: tuple, v: z3.ExprRef,
               bounds: tuple) -> dict[str, z3.ExprRef]:
        # St-Stmt's premises were recorded as obligations; the path of this
        # statement's domain must not leak into the next statement.
        del self.path[len(self.path) - len(k):]
        new = dict(store)
        new[x] = z3.Lambda(list(k), v) if k else v
        return new


def initial_memory(gamma: Mapping[str, tuple[Dim, ...]], prefix: str = "mu") -> dict[str, z3.ExprRef]:
    """An arbitrary memory ``μ ~ μ_allocs`` (Definition 4.2): one uninterpreted array per allocation."""
    return {x: z3.Const(f"{prefix}_{x}", memory_sort(len(t))) for x, t in gamma.items()}


def in_bounds(k: tuple[z3.ArithRef, ...], bounds: tuple[z3.ArithRef, ...]) -> z3.BoolRef:
    """``k <= bounds`` (1-based, SPEC.md section 1)."""
    return z3.And(*[z3.And(kj >= 1, kj <= n) for kj, n in zip(k, bounds, strict=True)]) if k else z3.BoolVal(True)
