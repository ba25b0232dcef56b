"""Review r15m of ``_native.magnitude`` and the overflow guard of ``Kernel._run_fast``.

The claim under review: the repeated-call path (``Fast``) and the one-GEMM path (``Direct``)
leave a call to the equations (the reference engine) exactly when the checked path
(``Kernel._run`` with ``Kernel._guard``) does, for every value an input may hold; and
``magnitude`` never reports less than ``max(1, max |v|)`` of the array it scans (an
underestimate would let a reordered sum overflow where the equations stay finite, or the
reverse: a silently wrong answer).  Each test names the mutant it kills.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np
import pytest

import core_teil as ct
from core_teil.native import _native
from core_teil.native import engine as native
from core_teil.native.planner import OVERFLOW_BOUND, reorder_safe
from core_teil.semantics.eval import evaluate
from tests.test_native import agree

BIG = sys.float_info.max

#: Programs whose compiled form takes the repeated-call path (or the direct GEMM), with the
#: shape of the guard they exercise.
PROGRAMS = {
    # one guarded statement, one term x · Σ_m y(m) (the plan factors x out of the sum)
    "one term": ("lang full\ninput alloc A : [1]\ninput alloc B : [2]\noutput alloc O : [1]\n"
                 "O = red 2 (prod A B)\n", None),
    # one guarded statement of two terms: the bound adds them
    "two terms": ("lang full\ninput alloc A : [1]\ninput alloc B : [2]\ninput alloc C : [2]\n"
                  "output alloc O : [1]\nO = add (red 2 (prod A B)) (red 2 (prod A C))\n", None),
    # two guarded statements: each has its own bound
    "two statements": ("lang full\ninput alloc A : [1]\ninput alloc B : [2]\ninput alloc C : [1]\n"
                       "input alloc D : [2]\noutput alloc O : [1]\noutput alloc P : [1]\n"
                       "O = red 2 (prod A B)\nP = red 2 (prod C D)\n", None),
    # the equations' own operations (a · x + y, z - y): no guard at all, whatever the values
    "axpy": ("examples/axpy.teil", {"n": 3}),
    # the one-GEMM path (native.Direct) has the guard of its statement
    "direct matmul": ("examples/matmul.teil", {"l": 40, "m": 50, "n": 70}),
}

#: Magnitudes around every threshold of the guard: below 1 (counted as 1), 1, a product at
#: the bound, past it, the largest double, ±inf, NaN (•, not measured), -0.0 and subnormals.
PALETTE = np.array([0.0, -0.0, 5e-324, -2.2e-308, 0.1, -0.5, 1.0, -2.0, 1e153, -2e153, 1e154,
                    -3e153, 1e200, BIG / 8, -BIG / 8, np.nextafter(BIG / 8, np.inf), BIG,
                    np.inf, -np.inf, np.nan])


def _program(name: str) -> tuple[ct.Program, dict[str, int] | None]:
    src, params = PROGRAMS[name]
    return (ct.load(src) if src.endswith(".teil") else ct.parse(src)), params


def _shapes(program: ct.Program, params: dict[str, int] | None) -> dict[str, tuple[int, ...]]:
    return {name: tuple(v) for name, v in ct.check(program, params).items()
            if program.alloc(name).qual == "input"}


def _cases(shapes: dict[str, tuple[int, ...]], seed: int) -> Iterator[dict[str, np.ndarray]]:
    """Inputs of ones with a few elements drawn from the palette (deterministic)."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        x = {n: np.ones(s) for n, s in shapes.items()}
        for n in x:
            flat = x[n].reshape(-1)
            picks = rng.integers(0, flat.size, size=min(2, flat.size))
            flat[picks] = PALETTE[rng.integers(0, PALETTE.size, size=picks.size)]
        yield x


def _compiled(k: native.Kernel) -> native.Compiled:
    (c,) = k._compiled.values()
    return c


class _Asked:
    """Counts the calls the kernel leaves to the reference engine."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.n = 0
        real = native.evaluate

        def counted(*a: object, **kw: object) -> dict[str, np.ndarray]:
            self.n += 1
            return real(*a, **kw)

        mp.setattr(native, "evaluate", counted)

    def left(self, k: native.Kernel, x: dict[str, np.ndarray]) -> tuple[bool, dict[str, np.ndarray]]:
        before = self.n
        got = k(**{n: v.copy() for n, v in x.items()})
        return self.n > before, got


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_fast_and_direct_paths_leave_exactly_the_calls_the_checked_path_leaves(name, monkeypatch):
    # mutants: only the first statement's guard checked (E6); the terms' bounds maxed instead
    # of added (E5); `total < OVERFLOW_BOUND` for `<=` (E7); every statement guarded, the
    # equations' own a·x + y too (E14); no guard before the direct GEMM (E13); magnitude
    # without its max(1, ·) (P1), or max(1, ·) + 1 (P2)
    program, params = _program(name)
    fast = native.compile(program, params)
    checked = native.compile(program, params)
    x0 = {n: np.ones(s) for n, s in _shapes(program, params).items()}
    fast(**x0)
    checked(**x0)
    c = _compiled(fast)
    assert c.direct is not None if name == "direct matmul" else c.fast is not None
    cc = _compiled(checked)
    monkeypatch.setattr(cc, "fast", None)
    monkeypatch.setattr(cc, "direct", None)
    asked = _Asked(monkeypatch)
    left = 0
    for x in _cases(_shapes(program, params), seed=len(name)):
        by_fast, got = asked.left(fast, x)
        by_checked, want = asked.left(checked, x)
        assert by_fast == by_checked, {n: v.reshape(-1)[:4] for n, v in x.items()}
        left += by_fast
        agree(got, want)
        if not by_fast:
            agree(got, evaluate(program, x, params))
    # the palette reaches both sides of the bound
    assert 0 < left < 40 or (name == "axpy" and left == 0)


@pytest.mark.parametrize("name,x,left", [
    # 2 summands of 1 · max/8: exactly OVERFLOW_BOUND, inside it
    ("one term", {"A": [1.0], "B": [BIG / 8, 0.0]}, False),
    ("one term", {"A": [1.0], "B": [np.nextafter(BIG / 8, np.inf), 0.0]}, True),
    ("one term", {"A": [0.5], "B": [BIG / 8, 0.0]}, False),  # a factor below 1 counts as 1
    ("one term", {"A": [-1.0], "B": [-BIG / 8, 0.0]}, False),
    ("one term", {"A": [2.0], "B": [BIG / 8, 0.0]}, True),
    # two terms, each at most the bound: their sum decides
    ("two terms", {"A": [1.0], "B": [BIG / 16, 0.0], "C": [0.0, -BIG / 16]}, False),
    ("two terms", {"A": [1.0], "B": [BIG / 8, 0.0], "C": [0.0, -BIG / 8]}, True),
    ("two terms", {"A": [0.25], "B": [BIG / 8, 0.0], "C": [0.0, 1e300]}, True),
    # two statements: the second's bound alone is past the limit
    ("two statements", {"A": [1.0], "B": [1.0, 2.0], "C": [1e200], "D": [1e200, 0.0]}, True),
    ("two statements", {"A": [1e200], "B": [1e200, 0.0], "C": [1.0], "D": [1.0, 2.0]}, True),
    ("two statements", {"A": [1e100], "B": [1e200, 0.0], "C": [1e100], "D": [1e200, 0.0]}, False),
])
def test_the_bound_adds_the_terms_is_inclusive_and_counts_a_factor_below_one_as_one(
        monkeypatch, name, x, left):
    # mutants: the terms' bounds maxed instead of added (E5); only the first statement's
    # guard checked (E6); `not total < OVERFLOW_BOUND` (E7); magnitude returns m + 1 (P2) or
    # m (P1)
    assert 2 * (BIG / 8) == OVERFLOW_BOUND == 4 * (BIG / 16)  # the cases at the bound are on it
    program, params = _program(name)
    k = native.compile(program, params)
    arrays = {n: np.array(v) for n, v in x.items()}
    asked = _Asked(monkeypatch)
    by_fast, got = asked.left(k, arrays)
    assert _compiled(k).fast is not None and by_fast is left
    agree(got, evaluate(program, arrays, params))


def test_an_input_changed_in_place_between_calls_is_measured_again(monkeypatch):
    # mutant E3b: magnitudes kept across calls by the array's identity (the slot table is
    # kept that way, the values must not be): the second call would reuse the first's 1
    program, _ = _program("one term")
    k = native.compile(program)
    a, b = np.array([2.0]), np.array([3.0, 4.0])
    asked = _Asked(monkeypatch)
    assert not asked.left(k, {"A": a, "B": b})[0]
    np.testing.assert_array_equal(k(A=a, B=b)["O"], [14.0])
    a[0] = np.inf
    before = asked.n
    got = k(A=a, B=b)
    assert asked.n == before + 1  # the equations decide: inf · 3 + inf · 4
    np.testing.assert_array_equal(got["O"], [np.inf])
    b[1] = -4.0  # inf · 3 + inf · -4 is •; the plan's inf · (3 - 4) would be -inf
    assert np.isnan(k(A=a, B=b)["O"]).all()
    a[0] = 2.0
    before = asked.n
    np.testing.assert_array_equal(k(A=a, B=b)["O"], [-2.0])
    assert asked.n == before


# --------------------------------------------------------------------------
# magnitude's -1: arrays it does not scan are measured by largest_size
# --------------------------------------------------------------------------


def _unreadable(values: list[float], how: str) -> np.ndarray:
    """``values`` in an array ``magnitude`` leaves to its caller."""
    a = np.array(values)
    if how == "big-endian":
        return a.astype(">f8")
    # a strided view: the values at the even positions of a buffer twice as long
    base = np.full(2 * a.size, 7.0)
    base[::2] = a
    return base[::2]


@pytest.mark.parametrize("how", ["big-endian", "strided"])
def test_magnitude_leaves_what_it_cannot_scan_to_the_caller(how):
    a = _unreadable([1e200, -3.0], how)
    assert _native.magnitude(a) == -1.0
    assert native.largest_size(a) == 1e200


@pytest.mark.parametrize("how", ["big-endian", "strided"])
@pytest.mark.parametrize("a,b", [
    ([1e200], [1e200, 1.0]),  # 2e400: past the bound
    ([0.1], [BIG, 1.0]),  # 2 · max(1, 0.1) · max: past it only if 0.1 counts as 1
    ([1.0], [3.0, 1e308]),  # the largest value is not the first one
    ([np.inf], [1.0, -2.0]),
    ([2.0], [3.0, 4.0]),  # inside the bound
    ([np.nan], [np.nan, 0.5]),
])
def test_the_fast_guard_decides_as_the_checked_guard_on_arrays_magnitude_does_not_scan(
        monkeypatch, how, a, b):
    # The public API hands the fast path only native C-contiguous float64 arrays (the input
    # checks copy the others, and the repeated-call gate _native.same_arrays refuses them),
    # so magnitude's -1 is a defence; it must still be the checked guard's decision.
    # mutants: the -1 used as the factor (E1); largest_size without max(1, ·) (E2);
    # largest_size of the first column only (E15)
    program, _ = _program("one term")
    k = native.compile(program)
    k(A=np.ones(1), B=np.ones(2))
    c = _compiled(k)
    f = c.fast
    assert f is not None
    arrays = {"A": _unreadable(a, how), "B": _unreadable(b, how)}
    want = not all(reorder_safe(sp.nf.poly, native._Sizes(arrays, {}))
                   for sp, g in zip(c.plan.stmts, c.guarded, strict=True) if g)
    ran: list[int] = []
    # the kernels address their buffers as native C-contiguous doubles: never run them here
    monkeypatch.setattr(_native, "run", lambda *args: ran.append(1))
    try:
        k._run_fast(c, f, arrays, {})
    except native._Reordered:
        got = True
    else:
        got = False
    assert got is want and bool(ran) is not want


def _views() -> dict[str, np.ndarray]:
    x = np.arange(-10.0, 10.0).reshape(4, 5)
    x[3, 4] = -1e300  # the largest magnitude, last in memory
    x[0, 0] = np.nan
    return {
        "one row of every third (C-contiguous by numpy's relaxed strides)": x[::3][1:2],
        "one element (C-contiguous, starts inside the buffer)": x[3:4, 4:5],
        "0-d": np.array(-7.5),
        "Fortran order": np.asfortranarray(x),
        "reversed": x[::-1],
        "broadcast": np.broadcast_to(x[3], (2, 5)),
        "a column": x[:, 4],
        "read-only": np.frombuffer(x.tobytes(), dtype=np.float64),
        "unaligned": np.frombuffer(b"\0" + x.tobytes(), dtype=np.float64, offset=1),
        "NaN and subnormals only": np.array([np.nan, 5e-324, -2.2e-308]),
    }


@pytest.mark.parametrize("name", list(_views()))
def test_magnitude_is_the_guards_factor_or_leaves_the_array_to_the_caller(name):
    # whatever the layout: max(1, max |v|) over the values that are not NaN, exactly, or -1;
    # never less (an underestimate lets a reordered sum that overflows through)
    a = _views()[name]
    got = _native.magnitude(a)
    assert got == -1.0 or got == max(1.0, native.largest_size(a))
    if a.dtype.isnative and a.flags.c_contiguous:
        assert got == max(1.0, native.largest_size(a))
