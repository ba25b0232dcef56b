"""Multi-indices and shapes of unknown length: the rank-generic reading of eval.py's index operations.

The equations of :mod:`core_teil.semantics.eval` and the rules of :mod:`core_teil.lang.typing`
take multi-indices and shapes apart with a handful of tuple operations:
``k[0]``, ``k[1:]``, ``k[:r]``/``k[r:]`` (T-Prod's split), ``(m,) + k``
(red, contr, proj), concatenation (T-Prod), and :func:`typing.rank` in place
of ``len``.  :class:`Seq` gives each of them a Z3 meaning for a sequence
whose length is a term, so that the *same* equations, run over a ``Seq``,
denote their value at every rank at once (issue 14 item 3; the encoding is
the one measured in ``shared/Z3-NOTES.md``: an ``Array Int Int`` plus a
length, operations as ``Lambda`` terms).

Only what a finite tuple would do is defined; a ``Seq`` cannot be iterated or
measured with ``len`` (both would need a concrete rank), so an equation that
does either fails loudly instead of being proven at a few ranks.  Slicing
and indexing follow Python's: a negative position counts from the end, slice
bounds are clamped to ``[0, length]``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import z3

_fresh = itertools.count()

IntLike = int | z3.ArithRef


def _position() -> z3.ArithRef:
    """The bound variable of every ``Lambda`` a ``Seq`` is built with.  One name for all: Z3
    identifies terms up to the names of bound variables only when the names agree, so the
    same operation on the same sequence (in a padded and an unpadded run, say) is then the
    same term, not two arrays a proof must show equal position by position.  No capture is
    possible: every body is closed except for this one variable."""
    return z3.Int("j!seq")


def _int(x: IntLike) -> z3.ArithRef:
    return z3.IntVal(x) if isinstance(x, int) else x


def _clamp(x: z3.ArithRef, n: z3.ArithRef) -> z3.ArithRef:
    """Where Python puts a slice bound ``x`` of a sequence of length ``n``: a negative one
    counts from the end, then the result is clamped to ``[0, n]``."""
    x = z3.If(x < 0, n + x, x)
    return z3.If(x <= 0, z3.IntVal(0), z3.If(x >= n, n, x))


class RankUndecided(Exception):
    """A question about a ``Seq`` that only a concrete rank could answer (a proof-schema error)."""


@dataclass(frozen=True, eq=False)
class Seq:
    """``(arr[0], ..., arr[length-1])`` for a symbolic ``length``.

    ``nonempty`` records a hypothesis ``length >= 1`` the schema states, so that
    ``t == ()`` (the scalar test of T-Elem and ev_elem) has an answer."""

    arr: z3.ArrayRef
    length: z3.ArithRef
    nonempty: bool = False

    @staticmethod
    def fresh(name: str, nonempty: bool = False) -> Seq:
        return Seq(z3.Array(f"{name}", z3.IntSort(), z3.IntSort()), z3.Int(f"|{name}|"), nonempty)

    @staticmethod
    def of(items: tuple) -> Seq:
        """A finite tuple of integer terms as a ``Seq`` (for concatenation with one)."""
        j = _position()
        body: z3.ArithRef = z3.IntVal(0)
        for pos in reversed(range(len(items))):
            body = z3.If(j == pos, _int(items[pos]), body)
        return Seq(z3.Lambda([j], body), z3.IntVal(len(items)), bool(items))

    # -- what a tuple supports ------------------------------------------------

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            if key.step is not None:
                raise RankUndecided("a stepped slice of a multi-index")
            lo = _clamp(_int(0 if key.start is None else key.start), self.length)
            hi = _clamp(_int(self.length if key.stop is None else key.stop), self.length)
            j = _position()
            return Seq(z3.Lambda([j], self.arr[j + lo]), z3.If(hi >= lo, hi - lo, z3.IntVal(0)))
        key = _int(key)
        return self.arr[z3.If(key < 0, self.length + key, key)]  # t[-1] is the last, as in Python

    def __add__(self, other: Seq | tuple) -> Seq:
        b = Seq.of(other) if isinstance(other, tuple) else other
        if not isinstance(b, Seq):
            return NotImplemented
        j = _position()
        arr = z3.Lambda([j], z3.If(j < self.length, self.arr[j], b.arr[j - self.length]))
        return Seq(arr, self.length + b.length, self.nonempty or b.nonempty)

    def __radd__(self, other: tuple) -> Seq:
        if not isinstance(other, tuple):
            return NotImplemented
        return Seq.of(other) + self

    def __eq__(self, other: object) -> bool:  # type: ignore[override]
        if other is self:
            return True
        if other == () and self.nonempty:
            return False
        raise RankUndecided("comparing a multi-index of unknown length")

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        raise RankUndecided("len() of a multi-index of unknown length (use typing.rank)")

    def __iter__(self) -> Any:
        raise RankUndecided("iterating a multi-index of unknown length")

    def __repr__(self) -> str:
        return f"Seq({self.arr}, |{self.length}|)"

    def map(self, f: Any) -> Seq:
        """``f`` at every position (the padded loop bounds ``⌈T[j]⌉``, say)."""
        j = _position()
        return Seq(z3.Lambda([j], f(self.arr[j])), self.length, self.nonempty)

    def zip_with(self, other: Seq | tuple, f: Any) -> Seq:
        """``f(self[j], other[j])`` at every position (d-pad-var's ``min(p, t)``); ``other`` is
        read at this sequence's positions, as ``zip(..., strict=True)`` pairs equal lengths."""
        b = as_seq(other)
        j = _position()
        return Seq(z3.Lambda([j], f(self.arr[j], b.arr[j])), self.length, self.nonempty)

    # -- what the proofs say about one ------------------------------------------

    def below(self, bounds: Seq | tuple) -> z3.BoolRef:
        """``self[j] <= bounds[j]`` at every position, and the lengths agree: the condition of
        d-pad-var's guards at every position at once (:func:`core_teil.semantics.eval.guard_each`)."""
        b = as_seq(bounds)
        j = _position()
        return z3.And(self.length == b.length,
                      z3.ForAll([j], z3.Implies(z3.And(j >= 0, j < self.length), self.arr[j] <= b.arr[j])))

    def equals(self, other: Seq) -> z3.BoolRef:
        """Same length, same element at every position (what ``t0 = t1`` means for shapes)."""
        j = _position()  # bound: one name, as for the lambdas
        return z3.And(self.length == other.length,
                      z3.ForAll([j], z3.Implies(z3.And(j >= 0, j < self.length), self.arr[j] == other.arr[j])))


    def within(self, bounds: Seq, lo: int = 1) -> z3.BoolRef:
        """``lo <= self[j] <= bounds[j]`` for every position, and the lengths agree."""
        j = _position()  # bound: one name, as for the lambdas
        return z3.And(self.length == bounds.length,
                      z3.ForAll([j], z3.Implies(z3.And(j >= 0, j < self.length),
                                                z3.And(self.arr[j] >= lo, self.arr[j] <= bounds.arr[j]))))

    def outside(self, bounds: Seq, lo: int = 1) -> z3.BoolRef:
        """The negation of :meth:`within`, with the position a fresh constant (a witness to show)."""
        j = z3.Int(f"pos!{next(_fresh)}")
        return z3.Or(self.length != bounds.length,
                     z3.And(j >= 0, j < self.length, z3.Or(self.arr[j] < lo, self.arr[j] > bounds.arr[j])))


def as_seq(t: Seq | tuple) -> Seq:
    return t if isinstance(t, Seq) else Seq.of(t)
