"""Counterexamples for ``core-teil equiv``, found as Alive2 finds them (issue 13).

When two programs' normal forms do not match, equiv looks for concrete
evidence that they differ: parameter assignments the assumptions allow,
smallest first, and small integer inputs (seeded), zeros, alternating signs
(so that sums cancel), and inputs with ``•`` (NaN), since two programs can
agree on every real input and still differ where they are undefined.

A candidate is found by the reference engine (``ct.evaluate``, vectorised, so
large shapes are cheap) and confirmed in *exact* arithmetic:
:class:`ExactInterpretation` runs eval.py's equations (the same ``denote`` and
``st_stmt``) over Python :class:`~fractions.Fraction` values with ``None`` for
``•`` (report Definition 4, controlled division Definition 8), so a float
rounding difference (two summation orders) is never mistaken for a
counterexample.  It evaluates on demand: only the output index in question,
each statement's value and each shared subexpression memoised per index
(:meth:`ExactInterpretation.tabulate`), so a confirmation costs the
*dependency cone* of one index, not the whole tensors.  The cone is recorded;
input cells outside it cannot change either value, so shrinking zeroes them
at once and then pushes the cone's values towards 0 and 1 (Alive2 shrinks
numbers before it shows them).

This module returns *candidates* (:class:`Found`): a difference the reference
engine showed on ``unshrunk`` and exact arithmetic shows on ``inputs``.
:mod:`core_teil.proving.equiv` replays each through ``ct.evaluate`` of both programs
before reporting it, and drops one that does not replay.

The search is bounded deterministically (never by wall-clock, so a verdict
does not depend on the machine's load): by an estimate of the reference
engine's work per run (:func:`run_cost`) and by a count of exact steps.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import NO_SPAN, TeilError
from ..lang.syntax import Contr, ContrAt, Dim, Elem, ElemOp, Expr, Prod, Program, Red, RedAt, Stmt, Var
from ..lang.typing import TypedProgram, check_program
from ..semantics import eval as ev
from ..semantics.inputs import concrete_extent

#: An exact value: an integer or a rational (a Fraction only where a division made one), None for •.
Exact = int | Fraction | None

#: One exact evaluation gives up beyond this many elementary steps (it is pure Python).
WORK_LIMIT = 100_000
#: Parameter values tried: lo .. lo + MAX_EXTENT - 1 each (fewer when there are many parameters).
MAX_EXTENT = 3
#: At most this many parameter assignments.
MAX_SHAPES = 24
SEED = 13
#: The quick search before the proof tries this many shapes, with one input (positive integers) each.
SMOKE_SHAPES = 8
#: Inputs with one • at a time are tried on the first few shapes, when they have few cells.
UNDEF_SHAPES, MAX_UNDEF_CELLS = 4, 48
#: At most this many runs (pairs of reference runs) per search.
MAX_RUNS = 300
#: At most this many cells are shrunk one by one (after the blocks of the cone are zeroed).
MAX_SHRINK = 64
#: At most this many exact re-evaluations while shrinking one counterexample.
MAX_SHRINK_TESTS = 400
#: At most this many places where the reference runs differ are confirmed exactly per run
#: (a float-only difference, i.e. rounding, may show at every index).
MAX_CONFIRM = 16
#: A statement's value over at most this many cells is computed whole when it is written
#: (as St-Stmt says); a larger one index by index, on demand.
EAGER_CELLS = 64

#: The whole search stops after this many exact steps: a deterministic bound (not wall-clock),
#: after which equiv answers unknown.
SEARCH_BUDGET = 200_000
#: Shrinking one counterexample stops after this many exact steps (it keeps what it has).
SHRINK_BUDGET = 150_000

#: Reference-engine work (in :func:`run_cost`'s units, 0.7-2 ns each on the project machine):
#: a shape whose pair of runs costs more is not tried; a search stops when its allowance is spent.
MAX_RUN_COST = 600_000_000
SMOKE_COST = 30_000_000
DEEP_COST = 600_000_000
#: Runs cheaper than this go through the reference engine first; dearer ones are probed exactly.
CHEAP_RUN_COST = 2_000_000
#: The fixed cost of one equation applied to one request (Python and numpy call overhead).
NODE_COST = 10_000


class WorkExceeded(Exception):
    """The exact evaluator's budget ran out (the shapes are too large to enumerate)."""


@dataclass
class Budget:
    """Elementary steps left for one search."""

    left: int = SEARCH_BUDGET


@dataclass(frozen=True, eq=False)
class _Sym:
    """An index variable of the staged evaluator."""

    n: int


#: The initial memory of an allocation that is not an input: • everywhere (Eval-Prog).
_UNDEF = "undef"

Cell = tuple[str, tuple[int, ...]]  # an input cell: name and 0-based index


@dataclass(eq=False)
class _Table:
    """``λk. v`` (a statement's value, or a shared subexpression's) with the values computed so
    far; ``at`` computes one index on demand, in a fresh environment binding ``k``."""

    k: tuple[_Sym, ...]
    value: Callable[[dict], Exact]
    bounds: tuple[int, ...]
    tick: Callable[[int], None] | None = None
    memo: dict[tuple[int, ...], Exact] = field(default_factory=dict)

    def at(self, idx: tuple[int, ...], node: Expr | None) -> Exact:
        v = self.memo.get(idx, self)
        if v is not self:
            return v  # type: ignore[return-value]
        if any(not 1 <= j <= n for j, n in zip(idx, self.bounds, strict=True)):
            raise ev.SemanticsBug("an exact read out of its domain", node.span if node else NO_SPAN,
                                  "Lemma 4.3")
        v = self.value(dict(zip(self.k, idx, strict=True)))
        self.memo[idx] = v
        if self.tick is not None:
            self.tick(1)
        return v


class ExactInterpretation:
    """eval.py's Interpretation over exact rationals, staged: an index is an int or a
    :class:`_Sym`, a value a function of the symbols' values, a memory maps a name to the input
    (a float array, NaN for •), to • (an allocation neither input nor written), or to a
    :class:`_Table` (what a statement wrote).  Every input cell read is recorded in ``touched``."""

    def __init__(self, typed: TypedProgram, budget: Budget | None = None) -> None:
        self.typed = typed
        self.work = 0
        self.budget = budget if budget is not None else Budget()
        self._n = itertools.count()
        self.shared = ev.shared_subexpressions(typed)
        self._tables: dict[int, _Table] = {}
        self.touched: set[Cell] = set()

    def _tick(self, n: int = 1) -> None:
        self.work += n
        self.budget.left -= n
        if self.work > WORK_LIMIT or self.budget.left < 0:
            raise WorkExceeded

    def _sym(self) -> _Sym:
        return _Sym(next(self._n))

    def tabulate(self, e: Expr, k: tuple, sem: ev.Sem, equation: Callable[[Any, tuple, ev.Sem], Any]) -> Any:
        """A shared subexpression (eval.shared_subexpressions: one a sum may ask for at the same
        index once per summand) is staged once at symbols of its own and memoised per index, as
        the reference engine tabulates it; ``[[e]](k)`` depends on nothing but ``k`` and the store."""
        if id(e) not in self.shared:
            return equation(e, k, sem)
        table = self._tables.get(id(e))
        if table is None:
            own = tuple(self._sym() for _ in sem.type(e))
            bounds = tuple(concrete_extent(self.typed, d) for d in sem.type(e))
            table = self._tables[id(e)] = _Table(own, equation(e, own, sem), bounds, self._tick)
        ks = tuple(k)

        def value(env: dict) -> Exact:
            return table.at(tuple(env[i] if isinstance(i, _Sym) else int(i) for i in ks), e)

        return _staged(value, ks)

    def extent(self, d: Dim) -> int:
        return concrete_extent(self.typed, d)

    def ceil(self, n: int, pad: int) -> int:
        raise NotImplementedError("the exact evaluator runs the unpadded semantics")

    def read(self, store: Mapping[str, Any], x: str, k: tuple, node: Var) -> Callable[[dict], Exact]:
        entry = store[x]
        ks = tuple(k)
        if isinstance(entry, _Table):
            return _staged(lambda env: entry.at(tuple([env[i] if type(i) is _Sym else int(i) for i in ks]), node), ks)
        if isinstance(entry, str):  # never written, not an input: • (Sum-Absorb does the rest)
            return _staged(lambda env: None, ())
        arr: np.ndarray = entry
        touched = self.touched
        shape = arr.shape

        def cell(env: dict) -> Exact:
            idx = tuple([env[i] - 1 if type(i) is _Sym else int(i) - 1 for i in ks])
            for j, n in zip(idx, shape, strict=True):
                if j < 0 or j >= n:
                    raise ev.SemanticsBug(f"read of {x} out of bounds", node.span, "Lemma 4.3")
            touched.add((x, idx))
            return _fraction(float(arr[idx]))

        return _staged(cell, ks)

    def arith(self, op: ElemOp, a: Callable[[dict], Exact], b: Callable[[dict], Exact]) -> Callable[[dict], Exact]:
        # both operands are evaluated, whatever their values: so the cone does not depend on values
        return _staged(lambda env: exact_arith(op, a(env), b(env)), (), getattr(a, "free", None),
                       getattr(b, "free", None))

    def sum(self, n: int, body: Callable[[_Sym], Callable[[dict], Exact]], node: Expr) -> Callable[[dict], Exact]:
        m = self._sym()
        f = body(m)
        free = getattr(f, "free", None)
        if free is not None and m not in free:
            # a summand that does not read m (Σ over expa): n copies of one value, n·v (• stays •);
            # the same number as n additions in exact arithmetic, at the cost of one
            def constant(env: dict) -> Exact:
                self._tick()
                v = f(env)
                return None if v is None else n * v

            return _staged(constant, (), free)

        def value(env: dict) -> Exact:
            self._tick(n)  # the work of a run is its sums' (the rest is bounded by the program's size)
            acc: Exact = 0
            for i in range(1, n + 1):
                env[m] = i
                acc = exact_arith("add", acc, f(env))
            env.pop(m, None)
            return acc

        return _staged(value, (), None if free is None else free - {m})

    def guard(self, j: Any, d: int, v: Any) -> Any:
        raise NotImplementedError("the exact evaluator runs the unpadded semantics")

    def domain(self, bounds: tuple[int, ...], stmt: Stmt) -> tuple[_Sym, ...]:
        return tuple(self._sym() for _ in bounds)

    def update(self, store: Mapping[str, Any], x: str, k: tuple, v: Callable[[dict], Exact],
               bounds: tuple[int, ...]) -> dict[str, Any]:
        table = _Table(tuple(k), v, tuple(bounds), self._tick)
        if math.prod(bounds) <= EAGER_CELLS:  # small: whole, so that long chains never nest deeply
            for idx in np.ndindex(*bounds):
                table.at(tuple(i + 1 for i in idx), None)
        new = dict(store)
        new[x] = table
        self._tables.clear()  # shared subexpressions of the next statement read the new store
        return new


def _staged(fn: Callable[[dict], Exact], index: tuple,
            *parts: frozenset[_Sym] | None) -> Callable[[dict], Exact]:
    """``fn`` with ``fn.free``: the symbols its value depends on (those of ``index`` and of the
    ``parts``; None if a part's are unknown)."""
    free: frozenset[_Sym] | None = frozenset(i for i in index if isinstance(i, _Sym))
    for part in parts:
        free = None if part is None or free is None else free | part
    fn.free = free  # type: ignore[attr-defined]
    return fn


def _fraction(v: float) -> Exact:
    """A float input cell as an exact value: Python ints while they can be (much faster than
    Fraction, and exact all the same)."""
    if math.isnan(v):
        return None
    return int(v) if v.is_integer() else Fraction(v)


def exact_arith(op: ElemOp, a: Exact, b: Exact) -> Exact:
    """Report Definition 4 (• absorbs + - ·) and Definition 8 (0/0 = 0/• = 0, v/0 = •)."""
    if op == "div":
        if a == 0:
            return 0
        if a is None or b is None or b == 0:
            return None
        if isinstance(a, int) and isinstance(b, int):
            return a // b if a % b == 0 else Fraction(a, b)
        return Fraction(a) / b
    if a is None or b is None:
        return None
    return a + b if op == "add" else a - b if op == "sub" else a * b


def _final_store(typed: TypedProgram, inputs: Mapping[str, np.ndarray],
                 budget: Budget | None) -> tuple[ExactInterpretation, dict[str, Any]]:
    interp = ExactInterpretation(typed, budget)
    names = {a.name for a in typed.program.inputs()}
    store: dict[str, Any] = {}
    for a in typed.program.allocs:
        shape = tuple(interp.extent(d) for d in a.shape)
        if a.name in names and a.name in inputs:
            arr = np.asarray(inputs[a.name], dtype=np.float64)
            if arr.shape != shape:
                raise ValueError(f"input {a.name} has shape {arr.shape}, not {shape}")
            store[a.name] = arr
        else:
            store[a.name] = _UNDEF
    try:
        return interp, ev.eval_prog(ev.Sem(typed, interp, store, None))
    except RecursionError:  # a long chain of large statements, evaluated on demand
        raise WorkExceeded from None


def _value_at(entry: Any, idx: tuple[int, ...]) -> Exact:
    """A final memory's value at a 1-based index."""
    if isinstance(entry, _Table):
        return entry.at(idx, None)
    if isinstance(entry, str):
        return None
    return _fraction(float(entry[tuple(i - 1 for i in idx)]))


def run_exact(typed: TypedProgram, inputs: Mapping[str, np.ndarray],
              budget: Budget | None = None) -> dict[str, np.ndarray]:
    """The outputs of ``typed`` in exact arithmetic, every index (inputs: float arrays, NaN for •)."""
    _, final = _final_store(typed, inputs, budget)
    out: dict[str, np.ndarray] = {}
    try:
        for a in typed.program.outputs():
            shape = tuple(concrete_extent(typed, d) for d in a.shape)
            arr = np.empty(shape, dtype=object)
            for idx in np.ndindex(*shape):
                arr[idx] = _value_at(final[a.name], tuple(i + 1 for i in idx))
            out[a.name] = arr
    except RecursionError:
        raise WorkExceeded from None
    return out


def exact_at(typed: TypedProgram, inputs: Mapping[str, np.ndarray], name: str, idx: tuple[int, ...],
             budget: Budget | None = None) -> tuple[Exact, set[Cell]]:
    """Output ``name`` at the 0-based ``idx`` in exact arithmetic, and the input cells it read
    (its dependency cone: no other cell can change it)."""
    interp, final = _final_store(typed, inputs, budget)
    try:
        v = _value_at(final[name], tuple(i + 1 for i in idx))
    except RecursionError:
        raise WorkExceeded from None
    if isinstance(final[name], np.ndarray):  # an input never written: the output is that cell
        interp.touched.add((name, tuple(idx)))
    return v, interp.touched


# --------------------------------------------------------------------------
# The cost of a reference run
# --------------------------------------------------------------------------


def run_cost(typed: TypedProgram) -> int:
    """An estimate of the reference engine's work for one run of ``typed`` (element operations,
    plus :data:`NODE_COST` per equation applied): every statement's domain, every ``Σ`` times its
    body, every shared subexpression's table once (eval.ArrayInterpretation.tabulate)."""
    shared = ev.shared_subexpressions(typed)

    def size(e: Expr) -> int:
        return math.prod(concrete_extent(typed, d) for d in typed.type_of(e))

    def cost(e: Expr, d: int) -> tuple[int, int]:
        """(work per request at ``d`` cells, work once per statement)."""
        if id(e) in shared and not isinstance(e, Var):
            rep, once = node(e, size(e))
            return d + NODE_COST, rep + once
        return node(e, d)

    def node(e: Expr, d: int) -> tuple[int, int]:
        if isinstance(e, Var):
            return d + NODE_COST, 0
        if isinstance(e, Elem | Prod):
            rep, once = d + NODE_COST, 0
            for c in (e.left, e.right):
                r, o = cost(c, 1 if typed.type_of(c) == () else d)
                rep, once = rep + r, once + o
            return rep, once
        (arg,) = e.children()
        r, o = cost(arg, d)
        if isinstance(e, Red | RedAt | Contr | ContrAt):
            n = concrete_extent(typed, typed.type_of(arg)[e.i - 1 if isinstance(e, RedAt | ContrAt) else 0])
            return n * (r + d), o
        return r + d, o

    total = sum(concrete_extent(typed, d) for a in typed.program.allocs for d in a.shape)
    for stmt in typed.program.stmts:
        rep, once = cost(stmt.expr, math.prod(concrete_extent(typed, d) for d in typed.gamma[stmt.target]))
        total += rep + once
    return total


# --------------------------------------------------------------------------
# The search
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A candidate counterexample: the reference engine showed a difference on ``unshrunk``,
    exact arithmetic shows one at ``output[index]`` (1-based) on ``inputs`` (shrunk from it).
    Not reported before :mod:`core_teil.proving.equiv` replays it through ``ct.evaluate``."""

    output: str
    index: tuple[int, ...]
    params: dict[str, int]
    inputs: dict[str, np.ndarray]
    exact: tuple[str, str]
    pad: int | None
    unshrunk: dict[str, np.ndarray]
    exact_unshrunk: tuple[str, str]


def show(v: Any) -> str:
    if v is None:
        return "•"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, Fraction):
        return str(v.numerator) if v.denominator == 1 else f"{v} (≈ {float(v):.6g})"
    f = float(v)
    if math.isnan(f):
        return "•"
    return f"{f:g}"


def assignments(free: list[str], allowed: Callable[[dict[str, int]], bool], fixed: dict[str, int],
                lows: Mapping[str, int] | None = None) -> Iterator[dict[str, int]]:
    """Parameter assignments the assumptions allow, smallest (by sum, then lexicographically) first.

    Each parameter ranges over ``lo .. lo + MAX_EXTENT - 1`` where ``lo`` is the least value the
    assumptions allow it (``lows``, found by Z3; 1 without assumptions), so that ``assume n >= 4``
    is searched too."""
    width = MAX_EXTENT if len(free) <= 4 else 2
    ranges = [range((lows or {}).get(x, 1), (lows or {}).get(x, 1) + width) for x in free]
    cands = sorted(itertools.product(*ranges), key=lambda t: (sum(t), t))
    n = 0
    for values in cands:
        a = {**fixed, **dict(zip(free, values, strict=True))}
        if allowed(a):
            yield a
            n += 1
            if n >= MAX_SHAPES:
                return


def _alternating(shape: tuple[int, ...]) -> np.ndarray:
    """+1, -1 in a checkerboard: every row, column and diagonal sum of even length cancels."""
    if not shape:
        return np.array(1.0)
    return np.where(np.indices(shape).sum(axis=0) % 2 == 0, 1.0, -1.0)


def input_variants(shapes: dict[str, tuple[int, ...]], rng: np.random.Generator, undef: bool,
                   structured: bool = True) -> Iterator[dict[str, np.ndarray]]:
    """Seeded small integer inputs; then with zeros and negatives; then (``undef``) one • at a time;
    then (``structured``) signs that cancel in sums with one input 0 (a controlled division's 0/0
    against v/0), and one input • throughout (where there are too many cells for one at a time)."""
    base = {x: rng.integers(1, 10, size=s).astype(float) for x, s in shapes.items()}
    yield base
    yield {x: rng.integers(-3, 4, size=s).astype(float) for x, s in shapes.items()}
    yield {x: rng.integers(1, 10, size=s).astype(float) for x, s in shapes.items()}
    yield {x: rng.integers(0, 2, size=s).astype(float) for x, s in shapes.items()}
    cells = [(x, idx) for x, s in shapes.items() for idx in np.ndindex(*s)]
    if undef and len(cells) <= MAX_UNDEF_CELLS:
        for x, idx in cells:
            v = {y: a.copy() for y, a in base.items()}
            v[x][idx] = math.nan
            yield v
    if structured:
        alt = {x: _alternating(s) for x, s in shapes.items()}
        yield alt
        for x, s in shapes.items():
            yield {**alt, x: np.zeros(s)}
        for x, s in shapes.items():
            yield {**base, x: np.full(s, math.nan)}


def _ref_same(a: float, b: float) -> bool:
    return (a == b) or (math.isnan(a) and math.isnan(b))


def reference(prog: Program | TypedProgram, inputs: Mapping[str, np.ndarray], pad: int | None,
              params: dict[str, int] | None = None) -> dict[str, np.ndarray] | None:
    """``ct.evaluate`` (the reference engine) of one program on its declared inputs; ``None`` if the
    padded run is refused (an infinite value met the padding)."""
    program = prog.program if isinstance(prog, TypedProgram) else prog
    ins = {a.name: inputs[a.name] for a in program.inputs()}
    try:
        return ev.evaluate(prog, ins, None if isinstance(prog, TypedProgram) else params, pad)
    except ev.PaddingUnsound:
        return None


def reference_differences(rp: Mapping[str, np.ndarray], rq: Mapping[str, np.ndarray],
                          outputs: list[str]) -> Iterator[tuple[str, tuple[int, ...]]]:
    """Where the two reference runs differ (NaN, i.e. •, equals NaN), output by output."""
    for name in outputs:
        a, b = np.asarray(rp[name]), np.asarray(rq[name])
        bad = ~((a == b) | (np.isnan(a) & np.isnan(b)))
        for idx in np.argwhere(bad):
            yield name, tuple(int(i) for i in idx)


def replay(p: Program | TypedProgram, q: Program | TypedProgram, params_p: dict[str, int],
           params_q: dict[str, int], inputs: dict[str, np.ndarray], name: str, idx: tuple[int, ...],
           pad: int | None) -> tuple[str, str] | None:
    """Both programs through ``ct.evaluate`` (the reference engine); their values at ``name[idx]``
    (0-based) if they differ there, else ``None``."""
    rp, rq = reference(p, inputs, pad, params_p), reference(q, inputs, pad, params_q)
    if rp is None or rq is None:
        return None
    a, b = float(rp[name][idx]), float(rq[name][idx])
    if _ref_same(a, b):
        return None
    return show(a), show(b)


@dataclass
class _Allowance:
    """Reference-engine work left for one search (:func:`run_cost` units)."""

    left: int


def search(p: Program, q: Program, outputs: list[str], free: list[str], fixed: dict[str, int],
           allowed: Callable[[dict[str, int]], bool], pad: int | None, deep: bool = True,
           lows: Mapping[str, int] | None = None, skipped: list[tuple[dict[str, int], int]] | None = None
           ) -> Found | None:
    """The first candidate among small shapes and inputs, shrunk; or ``None``.

    Input variants are tried in order, each on every shape from the smallest up, so that a
    counterexample has the smallest shape its kind of input allows (of the shapes whose runs are
    expensive, only the smallest two: at n >= 3000, n = 3002 is no simpler than n = 3000).  Cheap
    runs go through the reference engine (vectorised: a difference anywhere is seen), then exact
    arithmetic confirms; an expensive one is probed in exact arithmetic at a few indices first
    (:func:`probes`: the cost of their cones, not of the tensors), and runs in the reference
    engine only while the search's allowance lasts.  ``deep=False`` is the quick search before
    the proof: fewer shapes, one input each, a smaller allowance.  Shapes whose pair of reference
    runs would cost more than :data:`MAX_RUN_COST` are not searched (a difference there could not
    be replayed); they are appended to ``skipped`` with their cost."""
    budget = Budget(SEARCH_BUDGET if deep else SEARCH_BUDGET // 4)
    allowance = _Allowance(DEEP_COST if deep else SMOKE_COST)
    cases = []
    expensive = 0
    for n_shape, params in enumerate(assignments(free, allowed, fixed, lows)):
        if not deep and n_shape >= SMOKE_SHAPES:
            break
        typed = _typed(p, q, params)
        if typed is None:
            continue
        tp, tq = typed
        cost = run_cost(tp) + run_cost(tq)
        if cost > MAX_RUN_COST:  # a difference found there could not be replayed, so never reported
            if skipped is not None:
                skipped.append((params, cost))
            continue
        if cost > CHEAP_RUN_COST:
            expensive += 1
            if expensive > 2:
                continue
        shapes = {a.name: tuple(concrete_extent(tp, d) for d in a.shape) for a in p.inputs()}
        rng = np.random.default_rng((SEED, n_shape))
        variants = list(input_variants(shapes, rng, undef=deep and len(cases) < UNDEF_SHAPES, structured=deep))
        cases.append((params, tp, tq, variants if deep else variants[:1], cost))
    runs = 0
    cheap = [c for c in cases if c[4] <= CHEAP_RUN_COST]
    dear = [c for c in cases if c[4] > CHEAP_RUN_COST]
    width = max((len(c[3]) for c in cases), default=0)
    # cheap shapes: each variant on every shape, smallest first; then each expensive shape probed
    # with every variant (probes cost the cones of a few indices); then, while the allowance
    # lasts, the expensive shapes through the reference engine
    order = [(c, v, "both") for v in range(width) for c in cheap] + \
        [(c, v, "probe") for c in dear for v in range(width)] + \
        [(c, v, "reference") for v in range(width) for c in dear]
    for (params, tp, tq, variants, cost), v, mode in order:
        if v >= len(variants):
            continue
        if runs >= MAX_RUNS or budget.left <= 0:
            return None
        runs += 1
        found = _try(tp, tq, params, variants[v], outputs, pad, budget, cost, allowance, mode)
        if found is not None:
            return found
    return None


def _typed(p: Program, q: Program, params: dict[str, int]) -> tuple[TypedProgram, TypedProgram] | None:
    pp = {k: v for k, v in params.items() if k in p.params}
    pq = {k: v for k, v in params.items() if k in q.params}
    try:
        return check_program(p, pp), check_program(q, pq)
    except TeilError:  # a shape outside what the programs' side conditions allow
        return None


def probes(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """0-based indices to probe an output at: the first, the last, and one with distinct positions
    (so that a diagonal and an off-diagonal element are both among them)."""
    out = [tuple(0 for _ in shape), tuple(n - 1 for n in shape), tuple(min(j, n - 1) for j, n in enumerate(shape))]
    return list(dict.fromkeys(out))


def _try(tp: TypedProgram, tq: TypedProgram, params: dict[str, int], inputs: dict[str, np.ndarray],
         outputs: list[str], pad: int | None, budget: Budget, cost: int = 0,
         allowance: _Allowance | None = None, mode: str = "both") -> Found | None:
    """A difference at ``inputs`` that exact arithmetic confirms, shrunk; or ``None``.

    ``mode``: ``probe`` exact arithmetic at :func:`probes` only, ``reference`` the reference
    engine only (while the allowance lasts), ``both`` probes first where the run is expensive or
    not affordable, then the reference engine."""
    where: tuple[str, tuple[int, ...], Exact, Exact, set[Cell]] | None = None
    affordable = mode != "probe" and cost <= MAX_RUN_COST and (allowance is None or cost <= allowance.left)
    if mode == "probe" or (mode == "both" and (cost > CHEAP_RUN_COST or not affordable)):
        try:
            where = _probe(tp, tq, inputs, outputs, budget)
        except WorkExceeded:
            where = None
    if where is None:
        if not affordable:
            return None
        if allowance is not None:
            allowance.left -= cost
        try:
            where = _detect(tp, tq, inputs, outputs, pad, budget)
        except WorkExceeded:
            return None
    if where is None:
        return None
    name, idx, a, b, cone = where
    unshrunk = (show(a), show(b))
    shrunk = shrink(tp, tq, inputs, name, idx, cone)
    try:
        exact = (show(exact_at(tp, shrunk, name, idx)[0]), show(exact_at(tq, shrunk, name, idx)[0]))
    except WorkExceeded:  # shrinking evaluated these inputs already, within a smaller budget
        shrunk, exact = inputs, unshrunk
    return Found(name, tuple(i + 1 for i in idx), params, shrunk, exact, pad, inputs, unshrunk)


def _probe(tp: TypedProgram, tq: TypedProgram, inputs: dict[str, np.ndarray], outputs: list[str],
           budget: Budget) -> tuple[str, tuple[int, ...], Exact, Exact, set[Cell]] | None:
    """Exact arithmetic at :func:`probes` of every output."""
    for name in outputs:
        shape = tuple(concrete_extent(tp, d) for d in tp.gamma[name])
        for idx in probes(shape):
            (a, cone_p), (b, cone_q) = exact_at(tp, inputs, name, idx, budget), exact_at(tq, inputs, name, idx, budget)
            if a != b:
                return name, idx, a, b, cone_p | cone_q
    return None


def _detect(tp: TypedProgram, tq: TypedProgram, inputs: dict[str, np.ndarray], outputs: list[str],
            pad: int | None, budget: Budget) -> tuple[str, tuple[int, ...], Exact, Exact, set[Cell]] | None:
    """Both reference runs; the first place they differ that exact arithmetic confirms."""
    rp, rq = reference(tp, inputs, pad), reference(tq, inputs, pad)
    if rp is None or rq is None:
        return None
    for name, idx in itertools.islice(reference_differences(rp, rq, outputs), MAX_CONFIRM):
        (a, cone_p), (b, cone_q) = exact_at(tp, inputs, name, idx, budget), exact_at(tq, inputs, name, idx, budget)
        if a != b:
            return name, idx, a, b, cone_p | cone_q
    return None  # no difference, or rounding only: the reals agree


def shrink(tp: TypedProgram, tq: TypedProgram, inputs: dict[str, np.ndarray], name: str, idx: tuple[int, ...],
           cone: set[Cell]) -> dict[str, np.ndarray]:
    """Inputs on which exact arithmetic still differs at ``name[idx]`` (0-based), with as many
    zeros as found.  Up to :data:`MAX_SHRINK` cells: each value in turn pushed to 0, else 1.
    Beyond: every cell outside the cone (it cannot change either value); then every cone
    cell beyond the first 1, 2, 4, ... (by position); then blocks of what is left, halving in
    size; then each remaining value pushed to 1.  Whether the reference engine still shows the
    difference is for the replay to say (:func:`core_teil.proving.equiv.replayed` falls back to the
    unshrunk inputs)."""
    budget = Budget(SHRINK_BUDGET)
    tests = 0

    def differs(cur: dict[str, np.ndarray]) -> bool:
        nonlocal tests
        tests += 1
        try:
            return exact_at(tp, cur, name, idx, budget)[0] != exact_at(tq, cur, name, idx, budget)[0]
        except WorkExceeded:
            return False

    every = [(x, i) for x, a in inputs.items() for i in np.ndindex(*a.shape)]
    if len(every) <= MAX_SHRINK:  # few cells: each in turn to 0, else 1, as one would by hand
        cur = {x: a.copy() for x, a in inputs.items()}
        for x, i in every:
            old = cur[x][i]
            for cand in (0.0, 1.0):
                if old == cand:
                    break
                cur[x][i] = cand
                if differs(cur):
                    break
                cur[x][i] = old
        return cur
    cur = {}
    for x, a in inputs.items():
        keep = np.zeros(a.shape, dtype=bool)
        for y, i in cone:
            if y == x:
                keep[i] = True
        cur[x] = np.where(keep, a, 0.0)
    if not differs(cur):  # only if the budget ran out: keep the inputs as they were
        return {x: a.copy() for x, a in inputs.items()}
    # by position first, so that a prefix holds every input's cells at the first indices
    cells = sorted(((x, i) for x, i in cone if cur[x][i] != 0), key=lambda c: (c[1], c[0]))
    size = 1
    while size < len(cells):  # only the first 1, 2, 4, ... cells of the cone (a sum cancels in two)
        if tests >= MAX_SHRINK_TESTS or budget.left <= 0:
            break
        trial = {x: a.copy() for x, a in cur.items()}
        for x, i in cells[size:]:
            trial[x][i] = 0.0
        if differs(trial):
            cur, cells = trial, cells[:size]
            break
        size *= 2
    chunk = len(cells)
    while chunk >= 1 and cells:  # then blocks of what is left, halving in size
        kept: list[Cell] = []
        for start in range(0, len(cells), chunk):
            block = cells[start:start + chunk]
            if tests >= MAX_SHRINK_TESTS or budget.left <= 0:
                kept += block
                continue
            old = [cur[x][i] for x, i in block]
            for x, i in block:
                cur[x][i] = 0.0
            if not differs(cur):
                for (x, i), v in zip(block, old, strict=True):
                    cur[x][i] = v
                kept += block
        cells = kept
        if chunk == 1:
            break
        chunk = max(1, chunk // 2)
    for x, i in cells[:MAX_SHRINK]:
        old = cur[x][i]
        if old == 1.0 or tests >= MAX_SHRINK_TESTS or budget.left <= 0:
            continue
        cur[x][i] = 1.0
        if not differs(cur):
            cur[x][i] = old
    return cur


@dataclass(frozen=True)
class Hint:
    """A solver's model of the two normal forms differing: parameter values, and values (NaN for •)
    of reads ``x[index]`` whose indices are output variables or constants (:mod:`core_teil.proving.equiv_nf`)."""

    params: dict[str, int]
    reads: tuple[tuple[str, tuple[Any, ...], float], ...]


#: A model's parameter values larger than this are not tried (the least allowed values are, instead).
MAX_HINT_EXTENT = 6


def seeded(p: Program, q: Program, outputs: list[str], hint: Hint, ks: tuple[Any, ...], scope: Any,
           pad: int | None) -> Found | None:
    """Inputs built from a model (:class:`Hint`): its read values placed at the cells they name,
    for an output index of all ones or of distinct positions, the rest seeded small integers; then
    the same confirmation as :func:`search` (reference engine, exact arithmetic, shrinking)."""
    from .equiv_nf import Const, IVar

    rng = np.random.default_rng(SEED)
    allowance = _Allowance(DEEP_COST // 2)
    budget = Budget(SEARCH_BUDGET // 2)
    candidates = []
    if all(v <= MAX_HINT_EXTENT for v in hint.params.values()):
        candidates.append({**scope.fixed, **hint.params})
    candidates.append({**scope.fixed, **{n: scope.lows.get(n, 1) for n in scope.free}})
    for params in candidates:
        if not scope.allowed(params):
            continue
        typed = _typed(p, q, params)
        if typed is None:
            continue
        tp, tq = typed
        cost = run_cost(tp) + run_cost(tq)
        if cost > MAX_RUN_COST:
            continue
        shapes = {a.name: tuple(concrete_extent(tp, d) for d in a.shape) for a in p.inputs()}

        def atom(x: Any, params: dict[str, int] = params) -> int:
            return x if isinstance(x, int) else params.get(x, 1)

        bounds = [atom(k.bound) for k in ks]
        for kv in ([1] * len(ks), [min(j, b) for j, b in enumerate(bounds, 1)]):
            at = {k: v for k, v in zip(ks, kv, strict=True)}
            cells: dict[Cell, float] = {}
            ok = True
            for x, index, value in hint.reads:
                idx = tuple((at.get(i, 1) if isinstance(i, IVar) else atom(i.value) if isinstance(i, Const) else 1)
                            - 1 for i in index)
                if x not in shapes or len(idx) != len(shapes[x]) or \
                        any(not 0 <= j < n for j, n in zip(idx, shapes[x], strict=True)):
                    ok = False
                    break
                old = cells.setdefault((x, idx), value)
                if not (old == value or (math.isnan(old) and math.isnan(value))):
                    ok = False
                    break
            if not ok:
                continue
            inputs = {x: rng.integers(1, 10, size=s).astype(float) for x, s in shapes.items()}
            for (x, idx), value in cells.items():
                inputs[x][idx] = value
            # the probes include both output indices the hint was placed for (all ones, distinct)
            found = _try(tp, tq, params, inputs, outputs, pad, budget, cost, allowance,
                         "both" if cost <= CHEAP_RUN_COST else "probe")
            if found is not None:
                return found
    return None


__all__ = ["ExactInterpretation", "Found", "Hint", "exact_at", "run_cost", "run_exact", "search", "seeded"]
