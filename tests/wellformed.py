"""Random WELL-TYPED programs with their inputs, and an independent numpy oracle.

``tests/strategies.py`` draws syntax trees that need not type-check; this
module draws programs that do (SPEC.md section 3), built type-directed: every
operator is applied only where its typing rule's premises hold, so each draw
is a program together with concrete inputs that a run can consume::

    from tests.wellformed import well_typed_programs, numpy_run

    @given(well_typed_programs())
    def test_something(case):
        out = evaluate(case.program, case.inputs, params=case.params)
        expected = numpy_run(case.program, case.inputs, case.params)

Both dialects are drawn (core: paper 000 Fig. 12; full: Fig. 5 / Fig. 8),
ranks stay <= 4 and extents <= 3 so that a run, even padded, takes
milliseconds.  Some extents are the shape parameter ``n`` (with a value in
``case.params``); a program is then well typed for every ``n >= 1``.
Statements may overwrite an allocation they read (St-Stmt), and later
statements read what earlier ones wrote (St-Seq).  Inputs are small numbers
including 0, so controlled division (report 001, Definition 8) is exercised.
By default every input is supplied and nothing reads the undefined value
unless a division ``v/0`` creates it; ``undefined=True`` adds allocations
that are never supplied nor written (they read as •).

:func:`numpy_run` is the independent oracle: whole-array numpy operations
(``np.trace``, ``np.diagonal``, ``np.swapaxes``, ``np.broadcast_to`` ...)
written from SPEC.md section 4, sharing no code with ``core_teil.semantics.eval``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from core_teil.lang.syntax import (
    ELEM_OPS,
    Alloc,
    Contr,
    ContrAt,
    Decl,
    Diag,
    DiagAt,
    Dialect,
    Dim,
    Elem,
    Expa,
    ExpaAt,
    Expr,
    Param,
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
)

__all__ = ["Case", "concrete_shape", "numpy_denote", "numpy_run", "well_typed_programs"]

#: Largest rank of any (sub)expression; with extents <= 3 and pad 5 a padded
#: rank-4 value has 625 entries, cheap enough for hundreds of examples.
MAX_RANK = 4
#: The shape parameter some extents use.
PARAM = "n"
#: Input values: small, exact in binary, with zeros so that 0/0, v/0 and 0*x occur.
VALUES = np.array([-2.0, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 2.0, 3.0])


@dataclass(frozen=True)
class Case:
    """A well-typed program, the parameter values it runs with, and its inputs."""

    program: Program
    params: dict[str, int]
    inputs: dict[str, np.ndarray] = field(repr=False)

    def __repr__(self) -> str:
        try:  # the printed program is far more readable than the dataclass tree
            from core_teil.lang.printer import format_program

            text = format_program(self.program)
        except Exception:  # the printer is optional for this module
            text = repr(self.program)
        shapes = {k: list(v.shape) for k, v in self.inputs.items()}
        return f"Case(params={self.params}, inputs={shapes},\n{text})"


def concrete_shape(shape: Shape, params: Mapping[str, int]) -> tuple[int, ...]:
    """Substitute parameter values into a declared shape."""
    return tuple(d if isinstance(d, int) else params[d] for d in shape)


# --------------------------------------------------------------------------
# The generator: type-directed, one drawing decision at a time
# --------------------------------------------------------------------------


class _Builder:
    """Grows one program; ``draw`` is Hypothesis's draw function."""

    def __init__(self, draw: Callable, dialect: Dialect, use_param: bool, undefined: bool = False) -> None:
        self.draw = draw
        self.dialect = dialect
        self.undefined = undefined
        self.extents: tuple[Dim, ...] = (1, 2, 3, PARAM) if use_param else (1, 2, 3)
        self.allocs: list[Alloc] = []
        self.readable: list[Alloc] = []  # inputs, and allocations already written

    # -- helpers ------------------------------------------------------------

    def pick(self, options: list) -> object:
        return self.draw(st.sampled_from(options))

    def chance(self, k: int, n: int) -> bool:
        """True with probability about k/n (sampled_from draws near-uniformly, integers do not)."""
        return self.draw(st.sampled_from([False] * (n - k) + [True] * k))

    def extent(self) -> Dim:
        return self.pick(list(self.extents))  # type: ignore[return-value]

    def slice_index(self, n: Dim) -> Dim:
        """A projection index ``m`` with ``1 <= m <= n`` for every parameter value."""
        if isinstance(n, int):
            return self.draw(st.integers(1, n))
        return self.pick([1, n])  # type: ignore[return-value]

    def new_input(self, shape: Shape) -> Var:
        if self.undefined and self.chance(1, 4):  # never supplied nor written: reads as •
            a = Alloc(f"u{sum(1 for b in self.allocs if b.qual is None)}", shape, None)
            self.allocs.append(a)
            self.readable.append(a)
            return Var(a.name)
        a = Alloc(f"x{sum(1 for b in self.allocs if b.qual == 'input')}", shape, "input")
        self.allocs.append(a)
        self.readable.append(a)
        return Var(a.name)

    def leaf(self, shape: Shape | None) -> tuple[Expr, Shape]:
        """A variable: a readable allocation of that shape, or a fresh input."""
        fits = [a for a in self.readable if shape is None or a.shape == shape]
        if fits and self.chance(1, 2):
            a = self.pick(fits)
            return Var(a.name), a.shape  # type: ignore[attr-defined]
        if shape is None:
            rank = self.pick([0, 1, 2, 2, 3, 3])  # favour ranks where diag, contr, transp apply
            shape = tuple(self.extent() for _ in range(rank))  # type: ignore[call-overload]
        return self.new_input(shape), shape

    # -- expressions of any shape -------------------------------------------

    def expr(self, depth: int) -> tuple[Expr, Shape]:
        if depth <= 0 or self.chance(1, 5):
            return self.leaf(None)
        kind = self.pick(["unary", "unary", "unary", "elem", "prod", "scale"])
        if kind == "prod":
            a, sa = self.expr(depth - 1)
            if len(sa) >= MAX_RANK:
                return a, sa
            b, sb = self.expr_of_shape(
                tuple(self.extent() for _ in range(self.draw(st.integers(0, MAX_RANK - len(sa))))),
                depth - 1)
            return Prod(a, b), sa + sb
        if kind == "elem":
            a, sa = self.expr(depth - 1)
            b, _ = self.expr_of_shape(sa, depth - 1)
            op = self.pick(list(ELEM_OPS))
            return (Elem(op, a, b) if self.draw(st.booleans()) else Elem(op, b, a)), sa
        if kind == "scale":  # T-SMul from the left, T-SDiv on the right
            a, sa = self.expr(depth - 1)
            s, _ = self.expr_of_shape((), depth - 1)
            return (Elem("mul", s, a) if self.draw(st.booleans()) else Elem("div", a, s)), sa
        a, sa = self.expr(depth - 1)
        return self.unary(a, sa)

    def unary(self, a: Expr, s: Shape) -> tuple[Expr, Shape]:
        """Apply one operator whose typing premises hold on ``s``."""
        r = len(s)
        options: list[Callable[[], tuple[Expr, Shape]]] = []
        if self.dialect == "core":
            if r >= 1:
                options.append(lambda: (Red(a), s[1:]))
                options.append(lambda: self._core_proj(a, s))
            if r >= 2:  # the rarer, two-dimension operators get double weight
                options += [lambda: self._core_transp(a, s)] * 2
                if s[0] == s[1]:
                    options += [lambda: (Contr(a), s[2:]), lambda: (Diag(a), s[:1] + s[2:])] * 2
            if r < MAX_RANK:
                options.append(lambda: self._core_expa(a, s))
        else:
            if r >= 1:
                options.append(lambda: self._full_red(a, s))
                options.append(lambda: self._full_proj(a, s))
            if r >= 2:
                options += [lambda: self._full_transp(a, s)] * 2
                pairs = [(i, j) for i in range(1, r + 1) for j in range(i + 1, r + 1) if s[i - 1] == s[j - 1]]
                if pairs:
                    options += [lambda: self._full_contr(a, s, pairs), lambda: self._full_diag(a, s, pairs)] * 2
            if r < MAX_RANK:
                options.append(lambda: self._full_expa(a, s))
        if not options:
            return a, s
        return self.pick(options)()  # type: ignore[operator]

    def _core_proj(self, a: Expr, s: Shape) -> tuple[Expr, Shape]:
        return Proj(self.slice_index(s[0]), a), s[1:]

    def _core_transp(self, a: Expr, s: Shape) -> tuple[Expr, Shape]:
        i = self.draw(st.integers(1, len(s) - 1))
        t = list(s)
        t[i - 1], t[i] = t[i], t[i - 1]
        return Transp(i, a), tuple(t)

    def _core_expa(self, a: Expr, s: Shape) -> tuple[Expr, Shape]:
        d = self.extent()
        return Expa(d, a), (d, *s)

    def _full_red(self, a: Expr, s: Shape) -> tuple[Expr, Shape]:
        i = self.draw(st.integers(1, len(s)))
        return RedAt(i, a), s[: i - 1] + s[i:]

    def _full_proj(self, a: Expr, s: Shape) -> tuple[Expr, Shape]:
        i = self.draw(st.integers(1, len(s)))
        return ProjAt(i, self.slice_index(s[i - 1]), a), s[: i - 1] + s[i:]

    def _full_transp(self, a: Expr, s: Shape) -> tuple[Expr, Shape]:
        i = self.draw(st.integers(1, len(s)))
        j = self.draw(st.integers(1, len(s)).filter(lambda x: x != i))
        t = list(s)
        t[i - 1], t[j - 1] = t[j - 1], t[i - 1]
        return TranspAt(i, j, a), tuple(t)

    def _full_contr(self, a: Expr, s: Shape, pairs: list[tuple[int, int]]) -> tuple[Expr, Shape]:
        i, j = self.pick(pairs)  # type: ignore[misc]
        return ContrAt(i, j, a), tuple(d for p, d in enumerate(s, 1) if p not in (i, j))

    def _full_diag(self, a: Expr, s: Shape, pairs: list[tuple[int, int]]) -> tuple[Expr, Shape]:
        i, j = self.pick(pairs)  # type: ignore[misc]
        return DiagAt(i, j, a), s[: j - 1] + s[j:]

    def _full_expa(self, a: Expr, s: Shape) -> tuple[Expr, Shape]:
        i = self.draw(st.integers(1, len(s) + 1))
        d = self.extent()
        return ExpaAt(i, d, a), (*s[: i - 1], d, *s[i - 1 :])

    # -- expressions of a given shape (for T-Elem, T-SMul, T-SDiv) -------------

    def expr_of_shape(self, shape: Shape, depth: int) -> tuple[Expr, Shape]:
        """An expression whose type is exactly ``shape``, built backwards from it."""
        if depth <= 0 or self.chance(1, 3):
            return self.leaf(shape)
        r = len(shape)
        full = self.dialect == "full"
        options = ["elem"]
        if r + 1 <= MAX_RANK:
            options += ["red", "proj"]
        if r + 2 <= MAX_RANK:
            options += ["contr"]
        if r >= 1:
            options += ["expa"]
        if 1 <= r < MAX_RANK:
            options += ["diag"]
        if r >= 2:
            options += ["transp"]
        how = self.pick(options)
        sub = depth - 1
        if how == "elem":
            a, _ = self.expr_of_shape(shape, sub)
            b, _ = self.expr_of_shape(shape, sub)
            return Elem(self.pick(list(ELEM_OPS)), a, b), shape  # type: ignore[arg-type]
        if how == "red":
            i = self.draw(st.integers(1, r + 1)) if full else 1
            a, _ = self.expr_of_shape((*shape[: i - 1], self.extent(), *shape[i - 1 :]), sub)
            return (RedAt(i, a) if full else Red(a)), shape
        if how == "proj":
            i = self.draw(st.integers(1, r + 1)) if full else 1
            n = self.extent()
            a, _ = self.expr_of_shape((*shape[: i - 1], n, *shape[i - 1 :]), sub)
            m = self.slice_index(n)
            return (ProjAt(i, m, a) if full else Proj(m, a)), shape
        if how == "contr":
            d = self.extent()
            if full:  # positions i < j in the argument of rank r + 2
                i = self.draw(st.integers(1, r + 1))
                j = self.draw(st.integers(i + 1, r + 2))
                t = list(shape)
                t.insert(i - 1, d)
                t.insert(j - 1, d)
                a, _ = self.expr_of_shape(tuple(t), sub)
                return ContrAt(i, j, a), shape
            a, _ = self.expr_of_shape((d, d, *shape), sub)
            return Contr(a), shape
        if how == "expa":
            i = self.draw(st.integers(1, r)) if full else 1
            a, _ = self.expr_of_shape(shape[: i - 1] + shape[i:], sub)
            d = shape[i - 1]
            return (ExpaAt(i, d, a) if full else Expa(d, a)), shape
        if how == "diag":
            if full:  # diag i j e drops j: re-insert a copy of extent i at j > i
                i = self.draw(st.integers(1, r))
                j = self.draw(st.integers(i + 1, r + 1))
                t = list(shape)
                t.insert(j - 1, shape[i - 1])
                a, _ = self.expr_of_shape(tuple(t), sub)
                return DiagAt(i, j, a), shape
            a, _ = self.expr_of_shape((shape[0], *shape), sub)
            return Diag(a), shape
        # transp: the argument has the swapped shape
        if full:
            i = self.draw(st.integers(1, r))
            j = self.draw(st.integers(1, r).filter(lambda x: x != i))
        else:
            i = self.draw(st.integers(1, r - 1))
            j = i + 1
        t = list(shape)
        t[i - 1], t[j - 1] = t[j - 1], t[i - 1]
        a, _ = self.expr_of_shape(tuple(t), sub)
        return (TranspAt(i, j, a) if full else Transp(i, a)), shape

    # -- statements -----------------------------------------------------------

    def stmt(self, depth: int) -> Stmt:
        e, s = self.expr(depth)
        written = [a for a in self.readable if a.qual == "output" and a.shape == s]
        if written and self.chance(1, 3):
            target = self.pick(written)  # overwrite, possibly reading itself (St-Stmt)
        else:
            target = Alloc(f"y{sum(1 for b in self.allocs if b.qual == 'output')}", s, "output")
            self.allocs.append(target)
        if target not in self.readable:
            self.readable.append(target)  # type: ignore[arg-type]
        return Stmt(target.name, e)  # type: ignore[attr-defined]


@st.composite
def _well_typed(draw: Callable, dialect: Dialect | None, max_depth: int, max_stmts: int,
                undefined: bool | None) -> Case:
    d: Dialect = dialect or draw(st.sampled_from(["core", "full"]))
    use_param = draw(st.booleans())
    b = _Builder(draw, d, use_param, draw(st.booleans()) if undefined is None else undefined)
    stmts = tuple(b.stmt(draw(st.integers(1, max_depth))) for _ in range(draw(st.integers(1, max_stmts))))
    decls: tuple[Decl, ...] = ((Param((PARAM,)),) if use_param else ()) + tuple(b.allocs)
    params = {PARAM: draw(st.integers(1, 3))} if use_param else {}
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    inputs = {a.name: rng.choice(VALUES, size=concrete_shape(a.shape, params))
              for a in b.allocs if a.qual == "input"}
    return Case(Program(d, decls, stmts), params, inputs)


def well_typed_programs(dialect: Dialect | None = None, max_depth: int = 4, max_stmts: int = 3,
                        undefined: bool | None = False) -> st.SearchStrategy[Case]:
    """Random well-typed programs of ``dialect`` (drawn when ``None``), each a :class:`Case`.

    With ``undefined=True`` some leaves are allocations without a qualifier,
    never supplied nor written, which read as the undefined value • (NaN);
    ``None`` draws whether to do so.  The default reads only defined values."""
    return _well_typed(dialect, max_depth, max_stmts, undefined)


# --------------------------------------------------------------------------
# The independent oracle: SPEC.md section 4 with whole-array numpy operations
# --------------------------------------------------------------------------


def _controlled(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Report 001, Definition 4 with Definition 8; NaN stands for the undefined value."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    with np.errstate(all="ignore"):
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        out = np.full(a.shape, np.nan)
        regular = (b != 0) & ~np.isnan(b) & ~np.isnan(a)
        out[regular] = a[regular] / b[regular]  # v/w; v/0, •/w, v/• stay •
        out[a == 0] = 0.0  # 0/0 = 0 and 0/• = 0 (Definition 8); 0/w = 0 anyway
        return out


def _insert_axis(x: np.ndarray, pos: int, d: int) -> np.ndarray:
    """``expa`` at 0-based axis ``pos`` with extent ``d``."""
    y = np.expand_dims(x, pos)
    shape = list(y.shape)
    shape[pos] = d
    return np.broadcast_to(y, shape)


def numpy_denote(e: Expr, env: Mapping[str, np.ndarray], params: Mapping[str, int]) -> np.ndarray:
    """The value of ``e`` at every index at once (1-based positions in the AST, 0-based here)."""
    def ext(d: Dim) -> int:
        return d if isinstance(d, int) else params[d]

    if isinstance(e, Var):
        return np.asarray(env[e.name])
    if isinstance(e, Elem):
        # A scalar next to a tensor broadcasts: T-SMul (left) and T-SDiv (right).
        return _controlled(e.op, numpy_denote(e.left, env, params), numpy_denote(e.right, env, params))
    if isinstance(e, Prod):
        return np.multiply.outer(numpy_denote(e.left, env, params), numpy_denote(e.right, env, params))
    x = numpy_denote(e.arg, env, params)  # type: ignore[attr-defined]
    if isinstance(e, Red):
        return x.sum(axis=0)
    if isinstance(e, Contr):
        return np.asarray(np.trace(x, axis1=0, axis2=1))
    if isinstance(e, Diag):
        return np.moveaxis(np.diagonal(x, axis1=0, axis2=1), -1, 0)
    if isinstance(e, Transp):
        return np.swapaxes(x, e.i - 1, e.i)
    if isinstance(e, Expa):
        return _insert_axis(x, 0, ext(e.d))
    if isinstance(e, Proj):
        return x[ext(e.m) - 1]
    if isinstance(e, RedAt):
        return x.sum(axis=e.i - 1)
    if isinstance(e, ContrAt):
        return np.asarray(np.trace(x, axis1=e.i - 1, axis2=e.j - 1))
    if isinstance(e, DiagAt):
        return np.moveaxis(np.diagonal(x, axis1=e.i - 1, axis2=e.j - 1), -1, e.i - 1)
    if isinstance(e, TranspAt):
        return np.swapaxes(x, e.i - 1, e.j - 1)
    if isinstance(e, ExpaAt):
        return _insert_axis(x, e.i - 1, ext(e.d))
    if isinstance(e, ProjAt):
        return np.take(x, ext(e.m) - 1, axis=e.i - 1)
    raise TypeError(f"unknown node {type(e).__name__}")


def numpy_run(program: Program, inputs: Mapping[str, np.ndarray],
              params: Mapping[str, int] | None = None) -> dict[str, np.ndarray]:
    """Run the statements in order (St-Seq); each reads the memory before it (St-Stmt).

    Returns every allocation (the caller picks the outputs)."""
    params = dict(params or {})
    env: dict[str, np.ndarray] = {}
    for a in program.allocs:
        shape = concrete_shape(a.shape, params)
        env[a.name] = (np.asarray(inputs[a.name], dtype=float) if a.name in inputs
                       else np.full(shape, np.nan))  # never supplied nor written: •
    for s in program.stmts:
        value = numpy_denote(s.expr, env, params)
        shape = env[s.target].shape
        env = {**env, s.target: np.array(np.broadcast_to(value, shape), dtype=float)}
    return env
