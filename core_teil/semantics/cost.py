"""The work the equations prescribe: ``eval.py``'s equations read as counts of arithmetic.

A fourth interpretation of the one semantics (after numpy arrays, Z3 terms and index
sequences): :class:`CostInterpretation` runs ``denote`` and ``st_stmt`` of
:mod:`core_teil.semantics.eval` unchanged, but a value is the number of arithmetic
operations (Definition 4's ``+ - *`` and Definition 8's controlled ``/``) that computing
one ``[[e]](k)`` takes, and a memory is the :class:`Work` of the statements run so far.
``Σ_{m=1..n} body`` is ``n`` bodies and ``n - 1`` additions; a read, an index and the
padded ``expa`` guard (a choice, not arithmetic) cost nothing; St-Stmt costs its domain
times one element.  The domain is ``Γ(x)`` unpadded and ``⌈Γ(x)⌉`` padded (report
Definition 7), so the same program gives the padded semantics' work with ``pad=M``.

A subexpression that St-Stmt asks for at one ``k`` more than once
(:func:`~core_teil.semantics.eval.shared_subexpressions`) is counted once per statement
over its whole domain, as :meth:`ArrayInterpretation.tabulate` computes it (the
reference engine skips a table over its memory budget and evaluates at each request
instead; that larger count is not what is given here).  A table covers its whole domain
even where a statement asks for part of it (``proj 1 (prod (red X) B)``), so for such a
program the count is the reference's, not the least the equations need.  Without shared
subexpressions, as in every bench kernel, it is exactly the equations' arithmetic: what
emit-c's C computes, operation by operation, in their order.  An engine that reorders
(a distributive law removes operations, as the native engine's plans use) may do less.

``make bench`` divides the padded count by the dgemm peak: the padded semantics' own
floor, set beside the unpadded run's time (issue 15's "--pad 8 at least as fast as
unpadded").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..lang.shapes import round_up
from ..lang.syntax import Dim, ElemOp, Expr, Stmt, Var
from ..lang.typing import TypedProgram
from .eval import Index, Sem, eval_prog, shared_subexpressions
from .inputs import check_pad, concrete_extent


@dataclass(frozen=True)
class Work:
    """What running a program's statements costs: ``flops`` arithmetic operations, and
    ``elements`` written (each statement writes its whole domain, St-Stmt)."""

    flops: int = 0
    elements: int = 0


class CostInterpretation:
    """Indices are positive integers (every index of a domain costs the same, so one stands
    for all), values the operations one element takes, memories the :class:`Work` so far."""

    def __init__(self, typed: TypedProgram) -> None:
        self.typed = typed
        self.shared = shared_subexpressions(typed)
        self._tables = 0  # what this statement's tables cost

    def tabulate(self, e: Expr, k: Index, sem: Sem, equation: Callable[[Expr, Index, Sem], int]) -> int:
        """A shared subexpression costs its whole domain once per statement, and a read nothing.
        Counting it here once is counting it once per statement: a typed program is a tree (each
        node in one statement, once) and :meth:`sum` runs its body once."""
        if id(e) not in self.shared:
            return equation(e, k, sem)
        bounds = sem.bounds(sem.type(e))
        # the equation first: computing it may tabulate a subexpression of its own into _tables
        table = equation(e, self.domain(bounds, None), sem) * math.prod(bounds)
        self._tables += table
        return 0

    def extent(self, d: Dim) -> int:
        return concrete_extent(self.typed, d)

    def ceil(self, n: int, pad: int) -> int:
        return round_up(n, pad)

    def read(self, store: Work, x: str, k: Index, node: Var) -> int:
        return 0

    def arith(self, op: ElemOp, a: int, b: int) -> int:
        return a + b + 1

    def sum(self, n: int, body: Callable[[int], int], node: Expr) -> int:
        # the reference's order: body(1), then n - 1 additions (an empty sum, extents >= 1, is no work)
        return n * body(1) + max(n - 1, 0)

    def guard(self, j: int, d: int, v: int) -> int:
        return v

    def clamp(self, j: int, d: int) -> int:
        return min(j, d)

    def domain(self, bounds: tuple[int, ...], stmt: Stmt | None) -> Index:
        return tuple(1 for _ in bounds)

    def update(self, store: Work, x: str, k: Index, v: int, bounds: tuple[int, ...]) -> Work:
        size = math.prod(bounds)
        flops = store.flops + v * size + self._tables
        self._tables = 0
        return Work(flops, store.elements + size)


def work(typed: TypedProgram, pad: int | None = None) -> Work:
    """The arithmetic and the writes of running ``typed`` (every parameter given), padded to
    multiples of ``pad`` or not: ``eval_prog`` under :class:`CostInterpretation`."""
    pad = check_pad(pad)
    return eval_prog(Sem(typed, CostInterpretation(typed), Work(), pad))
