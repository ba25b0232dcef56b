"""Dynamic semantics: the denotation ``[[e]](k)`` and rule St-Stmt, written once.

SPEC.md section 4; paper Fig. 6 (full TeIL) and Fig. 9 (St-Stmt, St-Seq,
Eval-Prog); report 001 Fig. 12, Definition 4 (the undefined value •) and
Definition 8 (controlled division); padding per report section 4 and
SPEC.md section 5.

The equations below are generic in an :class:`Interpretation`, which says
what an index, a value, a sum and a memory are.  The reference engine
(:class:`ArrayInterpretation`) runs them on numpy arrays, evaluating a
statement at every multi-index at once; the proof obligation generator runs
the *same* functions over Z3 terms (symbolic indices, uninterpreted
memories, symbolic sums).  So a change to an equation here changes what is
proven.  Under padding (``pad=M``) loop bounds are rounded up to multiples of
``M`` (report Definition 7) and ``expa`` is guarded: the new dimension reads
as 0 beyond its original extent, which is what makes padding simulate the
original semantics for Core-TeIL (report Theorem 3 is false for an unguarded
``expa``; see ``proofs/``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from ..errors import NO_SPAN, TeilError, TeilInputError, checked_call
from ..lang.shapes import round_up
from ..lang.syntax import (
    Contr,
    ContrAt,
    Diag,
    DiagAt,
    Dim,
    Elem,
    ElemOp,
    Expa,
    ExpaAt,
    Expr,
    Prod,
    Program,
    Proj,
    ProjAt,
    Red,
    RedAt,
    Shape,
    Stmt,
    Transp,
    TranspAt,
    Var,
    expect_program,
    walk,
)
from ..lang.typing import TypedProgram, check_program, insert, map_shape, rank, remove, swap
from .inputs import check_inputs, check_pad, check_params, concrete_extent, memory_budget, run_params, validate_inputs

I = TypeVar("I")  # an index (a natural number, or a term denoting one)
V = TypeVar("V")  # a value of V ∪ {•}
M = TypeVar("M")  # a memory μ

Index = tuple[Any, ...]


class Interpretation(Protocol[I, V, M]):
    """What an engine supplies; the equations are the same for every engine."""

    def extent(self, d: Dim) -> I:
        """The value of a shape term (a literal or a parameter)."""

    def ceil(self, n: I, pad: int) -> I:
        """``⌈n⌉ = pad * ceil(n / pad)`` (report Definition 7)."""

    def read(self, store: M, x: str, k: Index, node: Var) -> V:
        """``μ(x)(k)``: the only access to the memory."""

    def arith(self, op: ElemOp, a: V, b: V) -> V:
        """Definition 4 (• absorbs + - *) with controlled division (Definition 8)."""

    def sum(self, n: I, body: Callable[[I], V], node: Expr) -> V:
        """``Σ_{m=1..n} body(m)``."""

    def guard(self, j: I, d: I, v: V) -> V:
        """``v`` if ``j <= d`` else 0: the padded ``expa`` and the padded initial store."""

    def clamp(self, j: I, d: I) -> I:
        """``min(j, d)``: where the padded initial store reads the original (:func:`d_pad_var`)."""

    def domain(self, bounds: tuple[I, ...], stmt: Stmt) -> Index:
        """The multi-indices ``k <= bounds`` of St-Stmt's premise."""

    def update(self, store: M, x: str, k: Index, v: V, bounds: tuple[I, ...]) -> M:
        """``μ{x ↦ λk. v}``: St-Stmt's conclusion."""

    # Optional: ``tabulate(e, k, sem, equation) -> V`` with the value ``equation(e, k, sem)``
    # (see :func:`denote`); an interpretation without it runs the equation at ``k``.


@dataclass(frozen=True)
class Sem(Generic[I, V, M]):
    """The environment of ``[[·]]``: Γ (with every subexpression's type), μ, and the padding."""

    typed: TypedProgram
    interp: Interpretation[I, V, M]
    store: M
    pad: int | None = None

    def type(self, e: Expr) -> Shape:
        return self.typed.type_of(e)

    def bound(self, d: Dim) -> I:
        """The loop bound of an extent: ``⌈d⌉`` under padding, else ``d``."""
        n = self.interp.extent(d)
        return n if self.pad is None else self.interp.ceil(n, self.pad)

    def bounds(self, t: Shape) -> Any:
        """The loop bounds of a shape, extent by extent (St-Stmt's domain ``k <= Γ(x)``)."""
        return map_shape(self.bound, t)


def denote(e: Expr, k: Index, sem: Sem) -> Any:
    """``[[e]] Γ μ k`` (paper Fig. 6, SPEC.md section 4): the equation of ``e``'s constructor.

    An interpretation may supply ``tabulate(e, k, sem, equation)`` to share the
    work of requests for the same ``[[e]]`` (:meth:`ArrayInterpretation.tabulate`
    computes it once on its whole domain, by the same equation); one without it,
    such as the Z3 interpretations of the proofs, runs the equation at ``k``."""
    equation = EQUATIONS[type(e)]
    tabulate = getattr(sem.interp, "tabulate", None)
    if tabulate is None:
        return equation(e, k, sem)
    return tabulate(e, k, sem, equation)


# --------------------------------------------------------------------------
# Core-TeIL equations, in the order of SPEC.md section 4's table
# --------------------------------------------------------------------------


def ev_var(e: Var, k: Index, sem: Sem) -> Any:
    """``[[x]](k) = μ(x)(k)``."""
    return sem.interp.read(sem.store, e.name, k, e)


def ev_elem(e: Elem, k: Index, sem: Sem) -> Any:
    """``[[e0 op e1]](k)``; a scalar operand (T-SMul, T-SDiv) is read at ``[]``."""
    k0 = () if sem.type(e.left) == () else k
    k1 = () if sem.type(e.right) == () else k
    return sem.interp.arith(e.op, denote(e.left, k0, sem), denote(e.right, k1, sem))


def ev_prod(e: Prod, k: Index, sem: Sem) -> Any:
    """``[[prod e0 e1]](k0 ++ k1) = [[e0]](k0) · [[e1]](k1)``, ``len k0 = rank e0``."""
    r0 = rank(sem.type(e.left))
    return sem.interp.arith("mul", denote(e.left, k[:r0], sem), denote(e.right, k[r0:], sem))


def ev_red(e: Red, k: Index, sem: Sem) -> Any:
    """``[[red e]](k) = Σ_{m=1..n} [[e]]([m] ++ k)``."""
    n = sem.bound(sem.type(e.arg)[0])
    return sem.interp.sum(n, lambda m: denote(e.arg, (m,) + k, sem), e)


def ev_contr(e: Contr, k: Index, sem: Sem) -> Any:
    """``[[contr e]](k) = Σ_{m=1..n} [[e]]([m, m] ++ k)``."""
    n = sem.bound(sem.type(e.arg)[0])
    return sem.interp.sum(n, lambda m: denote(e.arg, (m, m) + k, sem), e)


def ev_diag(e: Diag, k: Index, sem: Sem) -> Any:
    """``[[diag e]]([j] ++ k') = [[e]]([j, j] ++ k')``."""
    return denote(e.arg, (k[0], k[0]) + k[1:], sem)


def ev_transp(e: Transp, k: Index, sem: Sem) -> Any:
    """``[[transp i e]](k) = [[e]](swap_i k)``."""
    return denote(e.arg, swap(k, e.i, e.i + 1), sem)


def ev_expa(e: Expa, k: Index, sem: Sem) -> Any:
    """``[[expa d e]]([j] ++ k') = [[e]](k')``; padded: 0 where ``j > d``."""
    v = denote(e.arg, k[1:], sem)
    if sem.pad is not None:
        v = sem.interp.guard(k[0], sem.interp.extent(e.d), v)
    return v


def ev_proj(e: Proj, k: Index, sem: Sem) -> Any:
    """``[[proj m e]](k) = [[e]]([m] ++ k)``."""
    return denote(e.arg, (sem.interp.extent(e.m),) + k, sem)


# --------------------------------------------------------------------------
# Full-TeIL equations (paper Fig. 6); positions are 1-based
# --------------------------------------------------------------------------


def ev_red_at(e: RedAt, k: Index, sem: Sem) -> Any:
    """``[[red i e]](k) = Σ_m [[e]](k with m inserted at i)``."""
    n = sem.bound(sem.type(e.arg)[e.i - 1])
    return sem.interp.sum(n, lambda m: denote(e.arg, insert(k, e.i, m), sem), e)


def ev_contr_at(e: ContrAt, k: Index, sem: Sem) -> Any:
    """``[[contr i j e]](k) = Σ_m [[e]](k with m inserted at i and at j)`` (equation (6))."""
    n = sem.bound(sem.type(e.arg)[e.i - 1])
    return sem.interp.sum(n, lambda m: denote(e.arg, insert(insert(k, e.i, m), e.j, m), sem), e)


def ev_diag_at(e: DiagAt, k: Index, sem: Sem) -> Any:
    """``[[diag i j e]](k) = [[e]](k with k_i inserted at j)``."""
    return denote(e.arg, insert(k, e.j, k[e.i - 1]), sem)


def ev_transp_at(e: TranspAt, k: Index, sem: Sem) -> Any:
    """``[[transp i j e]](k) = [[e]](k with k_i and k_j swapped)``."""
    return denote(e.arg, swap(k, e.i, e.j), sem)


def ev_expa_at(e: ExpaAt, k: Index, sem: Sem) -> Any:
    """``[[expa i d e]](k) = [[e]](k without position i)``; padded: 0 where ``k_i > d``."""
    v = denote(e.arg, remove(k, e.i), sem)
    if sem.pad is not None:
        v = sem.interp.guard(k[e.i - 1], sem.interp.extent(e.d), v)
    return v


def ev_proj_at(e: ProjAt, k: Index, sem: Sem) -> Any:
    """``[[proj i m e]](k) = [[e]](k with m inserted at i)``."""
    return denote(e.arg, insert(k, e.i, sem.interp.extent(e.m)), sem)


EQUATIONS: dict[type, Callable[[Any, Index, Sem], Any]] = {
    Var: ev_var, Elem: ev_elem, Prod: ev_prod,
    Red: ev_red, Contr: ev_contr, Diag: ev_diag, Transp: ev_transp, Expa: ev_expa, Proj: ev_proj,
    RedAt: ev_red_at, ContrAt: ev_contr_at, DiagAt: ev_diag_at, TranspAt: ev_transp_at,
    ExpaAt: ev_expa_at, ProjAt: ev_proj_at,
}


# --------------------------------------------------------------------------
# Statements and programs (paper Fig. 9)
# --------------------------------------------------------------------------


def st_stmt(stmt: Stmt, sem: Sem) -> Any:
    """St-Stmt: evaluate ``e`` at every ``k <= Γ(x)`` in the memory *before* the statement."""
    bounds = sem.bounds(sem.typed.gamma[stmt.target])
    k = sem.interp.domain(bounds, stmt)
    v = denote(stmt.expr, k, sem)
    return sem.interp.update(sem.store, stmt.target, k, v, bounds)


def eval_prog(sem: Sem) -> Any:
    """Eval-Prog / St-Seq: run the statements in order from the initial memory."""
    for stmt in sem.typed.program.stmts:
        sem = replace(sem, store=st_stmt(stmt, sem))
    return sem.store


# --------------------------------------------------------------------------
# The reference engine: numpy arrays, • as NaN
# --------------------------------------------------------------------------

UNDEFINED = math.nan


class SemanticsBug(TeilError):
    """An internal consistency check failed: a well-typed program read out of bounds.

    Theorem 4.4 says this cannot happen; it exists so that a bug in the
    checker is loud, never a silent wrong answer."""

    exit_code = 70
    kind = "internal error"


def shared_subexpressions(typed: TypedProgram) -> frozenset[int]:
    """The subexpressions (by ``id``) that St-Stmt may ask for at one ``k`` more than once.

    Every equation reads its arguments at indices that determine its own ``k``
    (``red``/``contr`` add the summed ``m``, ``diag``/``transp``/``proj`` permute,
    repeat or fix positions), except three that forget positions: ``expa`` drops the
    new one, ``prod`` reads each factor at its part of ``k``, and a scalar operand of
    T-SMul/T-SDiv is read at ``[]``.  Under a sum these ask for the same ``[[e]](k)``
    once per summand, and nested they make the work exponential in the nesting
    (``red (expa n (red (expa n ...)))``); only their arguments need tabulating.  A
    variable is a store read, already a table."""
    out: set[int] = set()
    for stmt in typed.program.stmts:
        for e in walk(stmt.expr):
            if isinstance(e, Expa | ExpaAt):
                kids: tuple[Expr, ...] = (e.arg,)
            elif isinstance(e, Prod):
                kids = (e.left, e.right)
            elif isinstance(e, Elem) and typed.type_of(e) != ():
                kids = tuple(c for c in (e.left, e.right) if typed.type_of(c) == ())
            else:
                kids = ()
            out.update(id(c) for c in kids if not isinstance(c, Var))
    return frozenset(out)


#: A table is made only while it needs at most this share of the engine's memory budget
#: (inputs.memory_budget); a larger subexpression is evaluated at each request instead.
TABLE_SHARE = 4


class ArrayInterpretation:
    """Indices are integer arrays on an open grid (so one call evaluates every k),
    values float64 arrays with NaN for •, memories dicts of (padded) arrays."""

    def __init__(self, typed: TypedProgram) -> None:
        self.typed = typed
        self.shared = shared_subexpressions(typed)
        # id(e) -> the table of [[e]] in the current store; emptied by update
        self._tables: dict[int, np.ndarray] = {}
        self._table_limit = memory_budget() // (8 * TABLE_SHARE)

    def tabulate(self, e: Expr, k: Index, sem: Sem, equation: Callable[[Any, Index, Sem], Any]) -> Any:
        """``equation(e, k, sem)``, for a shared subexpression read off a table of ``[[e]]``.

        The table is the same equation run once on every ``k' <= ⌈type(e)⌉``
        (St-Stmt's domain for ``e``'s type), kept while the store is unchanged;
        a request is then the table at ``k``.  So each subexpression costs its
        domain once, and a run is polynomial in program and tensor sizes.  Lemma 4.3
        says every request is inside that domain; one outside is a :class:`SemanticsBug`."""
        if id(e) not in self.shared:
            return equation(e, k, sem)
        # A table lives as long as the store it was computed in: update() is the only place the
        # store changes, and it empties them (an interpretation runs one program, one padding).
        table = self._tables.get(id(e))
        if table is None:
            bounds = sem.bounds(sem.type(e))
            if math.prod(bounds) > self._table_limit:
                return equation(e, k, sem)
            grid = self.domain(bounds, None)  # type: ignore[arg-type]  # no statement: a subexpression
            table = self._tables[id(e)] = np.broadcast_to(np.asarray(equation(e, grid, sem), dtype=np.float64),
                                                          bounds)
        return self._lookup(table, k, e)

    def _lookup(self, table: np.ndarray, k: Index, e: Expr) -> Any:
        if len(k) != table.ndim:
            raise SemanticsBug(f"{len(k)} indices for a subexpression of rank {table.ndim}", e.span, "Lemma 4.3")
        return _at(table, k, "a subexpression read out of its domain", e)

    def extent(self, d: Dim) -> int:
        return concrete_extent(self.typed, d)

    def ceil(self, n: int, pad: int) -> int:
        return round_up(n, pad)

    def read(self, store: Mapping[str, np.ndarray], x: str, k: Index, node: Var) -> np.ndarray:
        return _at(store[x], k, f"read of {x} out of bounds", node)

    def arith(self, op: ElemOp, a: Any, b: Any) -> Any:
        with np.errstate(all="ignore"):
            if op == "add":
                return np.add(a, b)
            if op == "sub":
                return np.subtract(a, b)
            if op == "mul":
                return np.multiply(a, b)
            # Definition 8: 0/0 = 0, 0/• = 0; otherwise v/0 = • and • absorbs.
            return np.where(np.equal(a, 0.0), 0.0, np.where(np.equal(b, 0.0), UNDEFINED, np.divide(a, b)))

    def sum(self, n: int, body: Callable[[int], Any], node: Expr) -> Any:
        if n < 1:
            return np.float64(0.0)  # the empty sum; extents are >= 1, so only a mutant gets here
        acc = body(1)
        with np.errstate(all="ignore"):
            for m in range(2, n + 1):
                acc = np.add(acc, body(m))
        return acc

    def guard(self, j: Any, d: int, v: Any) -> Any:
        return np.where(np.asarray(j) <= d, v, 0.0)

    def clamp(self, j: Any, d: int) -> Any:
        return np.minimum(j, d)

    def domain(self, bounds: tuple[int, ...], stmt: Stmt) -> Index:
        return tuple(np.ogrid[tuple(slice(1, n + 1) for n in bounds)]) if bounds else ()

    def update(self, store: Mapping[str, np.ndarray], x: str, k: Index, v: Any,
               bounds: tuple[int, ...]) -> dict[str, np.ndarray]:
        new = dict(store)
        new[x] = np.array(np.broadcast_to(np.asarray(v, dtype=np.float64), bounds), dtype=np.float64)
        self._tables.clear()  # they hold [[e]] in the memory before this statement
        return new


def _at(arr: np.ndarray, k: Index, what: str, node: Expr) -> Any:
    """``arr`` at the 1-based multi-index ``k`` (integer arrays on a grid), every index checked:
    Lemma 4.3 says none is out of range, so one that is is a bug of the checker, never a wrong value."""
    idx = tuple(np.asarray(kj) - 1 for kj in k)
    for pos, (ij, n) in enumerate(zip(idx, arr.shape, strict=True), start=1):
        if np.any(ij < 0) or np.any(ij >= n):
            raise SemanticsBug(f"{what} in dimension {pos} (extent {n})", node.span, "Lemma 4.3")
    return arr[idx] if idx else arr[()]


def positionwise(f: Callable[[Any, Any], Any], p: Any, t: Any) -> Any:
    """``(f(p[0], t[0]), f(p[1], t[1]), ...)``: of a tuple, or of a
    :class:`~core_teil.semantics.sequences.Seq` at every rank (``Seq.zip_with``)."""
    if isinstance(p, tuple):
        return tuple(f(j, n) for j, n in zip(p, t, strict=True))
    return p.zip_with(t, f)


def guard_each(interp: Interpretation[I, V, M], p: Any, t: Any, v: V) -> V:
    """``v`` guarded at every position in turn: 0 unless ``p[j] <= t[j]`` for every ``j``.

    A multi-index of unknown length cannot be walked position by position; the guards are
    then one guard on the whole of it (``interp.guard(p, t, v)``, the interpretation reading
    ``p <= t`` position-wise), which is the same value: nested guards that all yield 0 are
    one guard on the conjunction of their conditions."""
    if not isinstance(p, tuple):
        return interp.guard(p, t, v)
    for j, n in zip(p, t, strict=True):
        v = interp.guard(j, n, v)
    return v


def d_pad_var(interp: Interpretation[I, V, M], original: Callable[[Index], V], p: Index,
              t: tuple[I, ...]) -> V:
    """Report Fig. 13, rule d-pad-var: the padded store at ``p`` holds the original value inside the
    original extents ``t`` and 0 in the padding.

    ``original`` is read at ``min(p, t)`` and the padding is guarded away dimension by dimension
    (the padded ``expa``'s guard), so that an interpretation evaluating both branches (numpy on a
    grid) never reads outside the original.  :func:`initial_store` runs this on arrays, and the
    padding proofs (``simulation.initial_obligation``, ``proofs/padding.py``, and for every rank
    ``proofs/pad_ranks.py``) on Z3 terms."""
    v = original(positionwise(interp.clamp, p, t))
    return guard_each(interp, p, t, v)


def initial_store(typed: TypedProgram, interp: ArrayInterpretation, inputs: Mapping[str, Any],
                  pad: int | None) -> dict[str, np.ndarray]:
    """μ_allocs (Fig. 9): inputs in place, • elsewhere; padded, by :func:`d_pad_var` (report Fig. 13)."""
    arrays = validate_inputs(typed, inputs, interp.extent, pad)
    store: dict[str, np.ndarray] = {}
    for a in typed.program.allocs:
        shape = tuple(interp.extent(d) for d in a.shape)
        original = np.array(np.broadcast_to(np.asarray(arrays.get(a.name, UNDEFINED), dtype=np.float64), shape))
        if pad is None or not shape:
            store[a.name] = original
            continue
        padded = tuple(interp.ceil(n, pad) for n in shape)
        p = tuple(j + 1 for j in np.indices(padded, sparse=True))
        value = d_pad_var(interp, lambda q, original=original: original[tuple(j - 1 for j in q)], p, shape)
        store[a.name] = np.array(np.broadcast_to(value, padded), dtype=np.float64)
    return store


@checked_call
def evaluate(program: Program | TypedProgram, inputs: Mapping[str, Any] | None = None,
             params: dict[str, int] | None = None, pad: int | None = None) -> dict[str, np.ndarray]:
    """The reference engine (SPEC.md section 6): run the program, return its outputs.

    With ``pad=M`` the store is padded (report section 4) and results are
    returned at their declared shapes.  They equal the unpadded ones for
    values in V = ℝ (the simulation theorem of ``proofs/``); floats add
    ``±inf · 0 = NaN`` in the padding, so a padded run whose outputs are not
    all finite is checked against the unpadded run (:func:`padding_agrees`)."""
    pad = check_pad(pad)
    if not isinstance(program, TypedProgram):
        expect_program(program)
    params = check_params(params, program.program if isinstance(program, TypedProgram) else program)
    inputs = check_inputs(inputs)
    if isinstance(program, TypedProgram):
        typed = program
        run_params(typed.program, inputs, {**(params or {}), **typed.params})
    else:
        typed = check_program(program, run_params(program, inputs, params))
    outputs = _run(typed, inputs, pad)
    if pad is not None:
        padding_agrees(outputs, lambda: _run(typed, inputs, None), pad)
    return outputs


def _run(typed: TypedProgram, inputs: Mapping[str, Any], pad: int | None) -> dict[str, np.ndarray]:
    interp = ArrayInterpretation(typed)
    store = initial_store(typed, interp, inputs, pad)
    final = eval_prog(Sem(typed, interp, store, pad))
    out: dict[str, np.ndarray] = {}
    for a in typed.program.outputs():
        shape = tuple(interp.extent(d) for d in a.shape)
        out[a.name] = np.array(final[a.name][tuple(slice(0, n) for n in shape)], dtype=np.float64)
    return out


class PaddingUnsound(TeilInputError):
    """Padded and unpadded results differ: a value was infinite, outside the theorem's V = ℝ."""

    kind = "padding error"


def padding_agrees(padded: Mapping[str, np.ndarray], unpadded: Callable[[], Mapping[str, np.ndarray]],
                   pad: int) -> None:
    """Never a silent wrong answer: the padding theorem holds for finite values only.

    Finite outputs need no check (a padding term can only be 0, or • which
    propagates to the original domain as NaN).  Otherwise the unpadded run
    decides where either run is not finite, and a difference there is an
    error naming the output.  Where both are finite they may differ in the
    last bits, as any two summation orders may (a padded sum is blocked
    differently); that is rounding, not the inf · 0 this check is about."""
    if all(np.isfinite(v).all() for v in padded.values()):
        return
    reference = unpadded()
    for name, value in padded.items():
        ref = reference[name]
        same = (value == ref) | (np.isnan(value) & np.isnan(ref))
        bad = ~same & ~(np.isfinite(value) & np.isfinite(ref))
        if bad.any():
            k = tuple(int(i) + 1 for i in np.argwhere(bad)[0])  # () for a rank-0 output
            raise PaddingUnsound(
                f"padded to multiples of {pad}, output {name}{list(k)} is {value[tuple(i - 1 for i in k)]} but the "
                f"unpadded semantics gives {reference[name][tuple(i - 1 for i in k)]}: an infinite value met the zero "
                f"padding (inf · 0 = NaN in floats; report Theorem 3 holds for real values only). "
                f"Run without padding.", NO_SPAN, "report Theorem 3")


__all__ = [
    "EQUATIONS", "UNDEFINED", "ArrayInterpretation", "Interpretation", "Sem", "denote", "eval_prog",
    "evaluate", "st_stmt",
]
