"""Counterexamples for ``core-teil equiv``, found and replayed as Alive2 does (issue 13).

When two programs' normal forms do not match, equiv looks for concrete
evidence that they differ: small shapes (every parameter assignment the
assumptions allow, smallest first) and small integer inputs (seeded), plus
inputs with one ``•`` (NaN) at a time, since two programs can agree on every
real input and still differ in where they are undefined.

A candidate is decided in *exact* arithmetic first: :class:`ExactInterpretation`
runs eval.py's equations (the same ``denote`` and ``st_stmt``) over Python
:class:`~fractions.Fraction` values with ``None`` for ``•`` (report Definition
4, controlled division Definition 8), so a float rounding difference (two
summation orders) is never mistaken for a counterexample.  A difference in
exact arithmetic is then *replayed* through the reference engine
``ct.evaluate`` of both programs (with ``--pad``, padded), and reported only
if the reference engine shows it too.  The inputs are shrunk first (each
value pushed towards 0, then 1, while the difference persists).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import TeilError
from ..lang.syntax import Dim, ElemOp, Expr, Program, Stmt, Var
from ..lang.typing import TypedProgram, check_program
from ..semantics import eval as ev
from ..semantics.inputs import concrete_extent

Exact = Fraction | None  # None is •

#: The exact evaluator gives up beyond this many elementary steps per run (it is pure Python).
WORK_LIMIT = 400_000
#: Parameter values tried: 1..MAX_EXTENT each (fewer when there are many parameters).
MAX_EXTENT = 3
#: At most this many parameter assignments and input variants per assignment.
MAX_SHAPES = 24
SEED = 13
#: The quick search before the proof tries this many shapes, with one input (positive integers) each.
SMOKE_SHAPES = 8
#: Inputs with one • at a time are tried on the first few shapes, when they have few cells.
UNDEF_SHAPES, MAX_UNDEF_CELLS = 4, 48
#: Shapes whose inputs hold more cells are skipped; at most this many runs per search.
MAX_CELLS, MAX_RUNS = 5000, 300
#: At most this many input values are shrunk.
MAX_SHRINK = 64


#: The whole search (all shapes and inputs) stops after this many elementary steps: a
#: deterministic bound (not wall-clock), after which equiv answers unknown.
SEARCH_BUDGET = 600_000


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


class ExactInterpretation:
    """eval.py's Interpretation over exact rationals, staged: an index is an int or a
    :class:`_Sym`, a value a function of the symbols' values, a memory a dict of object
    arrays holding ``Fraction`` or ``None`` (•)."""

    def __init__(self, typed: TypedProgram, budget: Budget | None = None) -> None:
        self.typed = typed
        self.work = 0
        self.budget = budget if budget is not None else Budget()
        self._n = itertools.count()

    def _tick(self, n: int = 1) -> None:
        self.work += n
        self.budget.left -= n
        if self.work > WORK_LIMIT or self.budget.left < 0:
            raise WorkExceeded

    def extent(self, d: Dim) -> int:
        return concrete_extent(self.typed, d)

    def ceil(self, n: int, pad: int) -> int:
        raise NotImplementedError("the exact evaluator runs the unpadded semantics")

    def read(self, store: Mapping[str, np.ndarray], x: str, k: tuple, node: Var) -> Callable[[dict], Exact]:
        arr = store[x]
        ks = tuple(k)

        def value(env: dict) -> Exact:
            self._tick()
            idx = tuple((env[i] if isinstance(i, _Sym) else int(i)) - 1 for i in ks)
            if any(j < 0 or j >= n for j, n in zip(idx, arr.shape, strict=True)):
                raise ev.SemanticsBug(f"read of {x} out of bounds", node.span, "Lemma 4.3")
            return arr[idx] if idx else arr[()]

        return value

    def arith(self, op: ElemOp, a: Callable[[dict], Exact], b: Callable[[dict], Exact]) -> Callable[[dict], Exact]:
        def value(env: dict) -> Exact:
            self._tick()
            return exact_arith(op, a(env), b(env))

        return value

    def sum(self, n: int, body: Callable[[_Sym], Callable[[dict], Exact]], node: Expr) -> Callable[[dict], Exact]:
        m = _Sym(next(self._n))
        f = body(m)

        def value(env: dict) -> Exact:
            acc: Exact = Fraction(0)
            for i in range(1, n + 1):
                env[m] = i
                acc = exact_arith("add", acc, f(env))
            env.pop(m, None)
            return acc

        return value

    def guard(self, j: Any, d: int, v: Any) -> Any:
        raise NotImplementedError("the exact evaluator runs the unpadded semantics")

    def domain(self, bounds: tuple[int, ...], stmt: Stmt) -> tuple[_Sym, ...]:
        return tuple(_Sym(next(self._n)) for _ in bounds)

    def update(self, store: Mapping[str, np.ndarray], x: str, k: tuple, v: Callable[[dict], Exact],
               bounds: tuple[int, ...]) -> dict[str, np.ndarray]:
        arr = np.empty(bounds, dtype=object)
        for idx in np.ndindex(*bounds):
            env = {s: i + 1 for s, i in zip(k, idx, strict=True)}
            arr[idx] = v(env)
        new = dict(store)
        new[x] = arr
        return new


def exact_arith(op: ElemOp, a: Exact, b: Exact) -> Exact:
    """Report Definition 4 (• absorbs + - ·) and Definition 8 (0/0 = 0/• = 0, v/0 = •)."""
    if op == "div":
        if a == 0:
            return Fraction(0)
        if a is None or b is None or b == 0:
            return None
        return a / b
    if a is None or b is None:
        return None
    return a + b if op == "add" else a - b if op == "sub" else a * b


def run_exact(typed: TypedProgram, inputs: Mapping[str, np.ndarray],
              budget: Budget | None = None) -> dict[str, np.ndarray]:
    """The outputs of ``typed`` in exact arithmetic (inputs: float arrays, NaN for •)."""
    interp = ExactInterpretation(typed, budget)
    store: dict[str, np.ndarray] = {}
    for a in typed.program.allocs:
        shape = tuple(interp.extent(d) for d in a.shape)
        arr = np.empty(shape, dtype=object)
        src = inputs.get(a.name)
        for idx in np.ndindex(*shape):
            arr[idx] = None if src is None or math.isnan(src[idx]) else Fraction(float(src[idx]))
        store[a.name] = arr
    final = ev.eval_prog(ev.Sem(typed, interp, store, None))
    return {a.name: final[a.name] for a in typed.program.outputs()}


# --------------------------------------------------------------------------
# The search
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A replayed counterexample: both programs run on ``inputs`` with ``params``."""

    output: str
    index: tuple[int, ...]
    params: dict[str, int]
    inputs: dict[str, np.ndarray]
    exact: tuple[str, str]
    reference: tuple[str, str]
    pad: int | None


def show(v: Any) -> str:
    if v is None:
        return "•"
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


def input_variants(shapes: dict[str, tuple[int, ...]], rng: np.random.Generator,
                   undef: bool) -> Iterator[dict[str, np.ndarray]]:
    """Seeded small integer inputs; then inputs with zeros and negatives; then (``undef``) one • at a time."""
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


def _differs(a: Exact, b: Exact) -> bool:
    return a != b


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
    if they differ there, else ``None``."""
    rp, rq = reference(p, inputs, pad, params_p), reference(q, inputs, pad, params_q)
    if rp is None or rq is None:
        return None
    a, b = float(rp[name][idx]), float(rq[name][idx])
    if _ref_same(a, b):
        return None
    return show(a), show(b)


def search(p: Program, q: Program, outputs: list[str], free: list[str], fixed: dict[str, int],
           allowed: Callable[[dict[str, int]], bool], pad: int | None, deep: bool = True,
           lows: Mapping[str, int] | None = None) -> Found | None:
    """The first replayed counterexample among small shapes and inputs, shrunk; or ``None``.

    Input variants are tried in order, each on every shape from the smallest up, so that a
    counterexample has the smallest shape its kind of input allows.  Both programs run in the
    reference engine (fast, vectorised); a difference there is confirmed in exact arithmetic (so
    rounding is never reported) before it is shrunk."""
    budget = Budget()
    cases = []
    for n_shape, params in enumerate(assignments(free, allowed, fixed, lows)):
        if not deep and n_shape >= SMOKE_SHAPES:
            break
        pp = {k: v for k, v in params.items() if k in p.params}
        pq = {k: v for k, v in params.items() if k in q.params}
        try:
            tp, tq = check_program(p, pp), check_program(q, pq)
        except TeilError:  # a shape outside what the programs' side conditions allow
            continue
        shapes = {x: tuple(concrete_extent(tp, d) for d in tp.gamma[x]) for x in (a.name for a in p.inputs())}
        if sum(math.prod(s) for s in shapes.values()) > MAX_CELLS:
            continue
        rng = np.random.default_rng((SEED, n_shape))
        variants = list(input_variants(shapes, rng, undef=deep and len(cases) < UNDEF_SHAPES))
        cases.append((params, tp, tq, variants[:1] if not deep else variants))
    runs = 0
    for v in range(max((len(c[3]) for c in cases), default=0)):
        for params, tp, tq, variants in cases:
            if v >= len(variants):
                continue
            if runs >= MAX_RUNS or budget.left <= 0:
                return None
            runs += 1
            found = _try(tp, tq, params, variants[v], outputs, pad, budget)
            if found is not None:
                return found
    return None


def _try(tp: TypedProgram, tq: TypedProgram, params: dict[str, int], inputs: dict[str, np.ndarray],
         outputs: list[str], pad: int | None, budget: Budget) -> Found | None:
    rp, rq = reference(tp, inputs, pad), reference(tq, inputs, pad)
    if rp is None or rq is None:
        return None
    where = next(iter(reference_differences(rp, rq, outputs)), None)
    if where is None:
        return None
    try:
        ex, ey = run_exact(tp, inputs, budget), run_exact(tq, inputs, budget)
    except WorkExceeded:
        return None
    # the first place where exact arithmetic confirms what the reference engine shows
    for name, idx in itertools.chain([where], reference_differences(rp, rq, outputs)):
        if _differs(ex[name][idx], ey[name][idx]):
            break
    else:
        return None  # rounding only: the reals agree
    inputs = shrink(tp, tq, inputs, name, idx, pad)
    ex, ey = run_exact(tp, inputs), run_exact(tq, inputs)
    ref = replay(tp, tq, {}, {}, inputs, name, idx, pad)
    assert ref is not None
    return Found(name, tuple(i + 1 for i in idx), params, inputs, (show(ex[name][idx]), show(ey[name][idx])), ref,
                 pad)


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
    the same replay as :func:`search` (reference engine, exact confirmation, shrinking)."""
    from .equiv_nf import Const, IVar

    rng = np.random.default_rng(SEED)
    candidates = []
    if all(v <= MAX_HINT_EXTENT for v in hint.params.values()):
        candidates.append({**scope.fixed, **hint.params})
    candidates.append({**scope.fixed, **{n: scope.lows.get(n, 1) for n in scope.free}})
    for params in candidates:
        if not scope.allowed(params):
            continue
        pp = {k: v for k, v in params.items() if k in p.params}
        pq = {k: v for k, v in params.items() if k in q.params}
        try:
            tp, tq = check_program(p, pp), check_program(q, pq)
        except TeilError:
            continue
        shapes = {a.name: tuple(concrete_extent(tp, d) for d in a.shape) for a in p.inputs()}
        if sum(math.prod(s) for s in shapes.values()) > MAX_CELLS:
            continue

        def atom(x: Any, params: dict[str, int] = params) -> int:
            return x if isinstance(x, int) else params.get(x, 1)

        bounds = [atom(k.bound) for k in ks]
        for kv in ([1] * len(ks), [min(j, b) for j, b in enumerate(bounds, 1)]):
            at = {k: v for k, v in zip(ks, kv, strict=True)}
            cells: dict[tuple[str, tuple[int, ...]], float] = {}
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
            found = _try(tp, tq, params, inputs, outputs, pad, Budget())
            if found is not None:
                return found
    return None


def shrink(tp: TypedProgram, tq: TypedProgram, inputs: dict[str, np.ndarray], name: str, idx: tuple[int, ...],
           pad: int | None) -> dict[str, np.ndarray]:
    """Each input value pushed to 0, else 1, while the difference at ``name[idx]`` persists
    (exactly and in the reference engine): Alive2 shrinks numbers before it shows them."""
    cur = {x: a.copy() for x, a in inputs.items()}
    cells = [(x, i) for x, a in cur.items() for i in np.ndindex(*a.shape)]
    for x, i in cells[:MAX_SHRINK]:
        old = cur[x][i]
        for cand in (0.0, 1.0):
            if old == cand:
                break
            cur[x][i] = cand
            try:
                ex, ey = run_exact(tp, cur), run_exact(tq, cur)
                keep = _differs(ex[name][idx], ey[name][idx]) and \
                    replay(tp, tq, {}, {}, cur, name, idx, pad) is not None
            except WorkExceeded:
                keep = False
            if keep:
                break
            cur[x][i] = old
    return cur


__all__ = ["ExactInterpretation", "Found", "Hint", "run_exact", "search", "seeded"]
