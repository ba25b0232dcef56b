"""Review r15 of issue 15 (the native engine's repeated-call path and the padded rule).

Each test here kills a mutant of ``core_teil/native/engine.py``, ``planner.py`` or
``native/_native.pyx`` that the existing tests let through; the mutant is named in the
test's comment.  Every one of them makes the engine answer wrongly (or crash) where the
unmutated engine is right.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import core_teil as ct
from core_teil.native import _native
from core_teil.native import engine as native
from core_teil.semantics.eval import evaluate

MATMUL = "examples/matmul.teil"


def _compiled(k: native.Kernel) -> native.Compiled:
    (c,) = k._compiled.values()
    return c


# --------------------------------------------------------------------------
# The fast path's gate: every buffer it reads is supplied
# --------------------------------------------------------------------------

#: An output never written (its final value is its initial buffer) and an allocation read
#: before it is written: both are • when not supplied, and the caller's values when supplied.
UNSUPPLIED = {
    "an output never written": ("lang full\ninput alloc A : [2]\noutput alloc B : [2]\noutput alloc C : [2]\n"
                                "C = mul A A\n", "B"),
    "an allocation read before it is written": ("lang full\ninput alloc A : [2]\nalloc B : [2]\n"
                                                "output alloc C : [2]\nC = add A B\n", "B"),
}


@pytest.mark.parametrize("case", UNSUPPLIED, ids=str)
def test_a_buffer_not_supplied_keeps_the_call_off_the_fast_path(case):
    # r15 F09 (an output's initial buffer left out of Fast.inputs) and F05 (an operand's):
    # the fast path then looked the missing array up and raised KeyError (exit 70)
    text, name = UNSUPPLIED[case]
    program = ct.parse(text)
    k = native.compile(program)
    assert name in _compiled(k).fast.inputs
    a = np.array([1.0, 2.0])
    for _ in range(2):  # the first call, and a repeated one
        got = k(A=a)
        want = evaluate(program, {"A": a})
        assert set(got) == set(want)
        for out, w in want.items():
            np.testing.assert_array_equal(got[out], w)
    supplied = np.array([5.0, 6.0])
    got = k(A=a, **{name: supplied})
    np.testing.assert_array_equal(got["C"], evaluate(program, {"A": a, name: supplied})["C"])
    if "B" in got:  # the output B is the caller's values, in an array of its own
        np.testing.assert_array_equal(got["B"], supplied)
        assert not np.shares_memory(got["B"], supplied)


# --------------------------------------------------------------------------
# Threads: each has its own slot tables and temporaries
# --------------------------------------------------------------------------


def test_a_call_in_another_thread_does_not_redirect_a_running_call(monkeypatch):
    # r15 R05 / T01 (one slot table for every thread): thread A is held inside its kernel
    # call while the main thread runs a whole call on other arrays; with a shared table the
    # main thread's rows (its inputs, its result buffer) replace A's before A's kernel runs
    program = ct.load(MATMUL)
    k = native.compile(program, {"l": 3, "m": 4, "n": 5})
    assert _compiled(k).fast is not None
    rng = np.random.default_rng(15)
    mine = {"A": rng.standard_normal((3, 4)), "B": rng.standard_normal((4, 5))}
    other = {"A": rng.standard_normal((3, 4)), "B": rng.standard_normal((4, 5))}
    warm = k(A=np.ones((3, 4)), B=np.ones((4, 5)))  # kept: A's result must not land in its memory
    real = _native.run
    inside, released = threading.Event(), threading.Event()
    held: list[threading.Thread] = []

    def run(*args):
        if threading.current_thread() in held and not inside.is_set():
            inside.set()
            released.wait(30)
        return real(*args)

    monkeypatch.setattr(_native, "run", run)
    got: dict[str, np.ndarray] = {}
    a = threading.Thread(target=lambda: got.update(k(**mine)))
    held.append(a)
    a.start()
    assert inside.wait(30)
    theirs = k(**other)
    released.set()
    a.join(30)
    np.testing.assert_allclose(got["C"], mine["A"] @ mine["B"], rtol=1e-12)
    np.testing.assert_allclose(theirs["C"], other["A"] @ other["B"], rtol=1e-12)
    assert not np.shares_memory(got["C"], theirs["C"])
    assert (warm["C"] == 4.0).all()


# --------------------------------------------------------------------------
# The padded rule: compared unless every statement is bounded
# --------------------------------------------------------------------------


def test_one_unbounded_statement_among_bounded_ones_is_compared(monkeypatch):
    # r15 D02 (not any(bounded)), D03 (the last statement's bound only) and B01 (planner.bound
    # the largest term, not the sum of the terms, as the fast path's guard still had it): axpy's z is
    # a · x + y with bound |a|·|x| + |y| = 6e307 > OVERFLOW_BOUND (= max / 4 ~ 4.5e307) though
    # z = 0; w = z - y is bounded (1 + 3e307).  One unbounded statement is enough to compare.
    program = ct.load("examples/axpy.teil")
    k = native.compile(program, {"n": 3}, 4)
    checked: list[int] = []
    real = native.padding_agrees
    monkeypatch.setattr(native, "padding_agrees", lambda *a: checked.append(1) or real(*a))
    x = {"a": np.array(1.0), "x": np.array([3e307, 1.0, 2.0]), "y": np.array([-3e307, 1.0, 2.0])}
    got = k(**x)
    np.testing.assert_array_equal(got["z"], [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(got["w"], [3e307, 1.0, 2.0])
    assert checked == [1]
    checked.clear()
    x["x"][0], x["y"][0] = 1e307, -1e307  # now both are bounded (2e307 and 1e307 + 1): no comparison
    k(**x)
    assert checked == []


# --------------------------------------------------------------------------
# largest_size: max |v| over the values that are not NaN, whatever the layout
# --------------------------------------------------------------------------


@pytest.mark.parametrize("n", [12, 2 * native.SMALL_SIZE])  # one ufunc and a reduction; fmax/fmin
def test_largest_size_of_a_strided_view_skips_nan_and_sees_negatives(n):
    # r15 L01 (the fmax/fmin path's max(|hi|, |lo|) cut to |hi|) and L02 (the small path's
    # NaN test dropped: NaN, which the guard then reads as "no bound").  The engine hands it
    # C-contiguous float64 today (_native.largest_abs); these paths are its contract for the rest.
    base = np.zeros((n, 2))
    view = base[:, 0]
    assert not view.flags.c_contiguous
    view[1], view[2], view[3] = -7.5, 3.0, np.nan
    assert native.largest_size(view) == 7.5
    assert native.largest_size(base[:, 1]) == 0.0
    base[:, 1] = np.nan
    assert native.largest_size(base[:, 1]) == 0.0  # every value • : 0, as for largest_abs
    big_endian = np.array([1.0, -9.0, np.nan], dtype=">f8")
    assert native.largest_size(big_endian) == 9.0



# --------------------------------------------------------------------------
# planner.bound of a factor that is not a read: a sum, a quotient by a sum
# --------------------------------------------------------------------------

#: The plan computes ``A · Σ_m f(m)``, the equations ``Σ_m A · f(m)``: with A = 1e-300 and
#: f(m) = 1e308 the plan's sum overflows to inf (inf · 1e-300 = inf) where the equations give
#: 2e8.  Only a bound that sees f's size sends the call to the equations.
NOT_A_READ = {
    # r15 B06 (the bound of a SumAtom or GuardAtom factor taken as 1)
    "a sum": ("O = red 2 (prod A (add B C))", {"B": [5e307, 5e307], "C": [5e307, 5e307]}),
    # r15 P05 (planner._least of a denominator that is a sum taken as 1, not 0: no lower bound)
    "a quotient by a difference": ("O = red 2 (prod A (div B (sub C D)))",
                                   {"B": [1e300, 1e300], "C": [1.0, 1.0], "D": [1.0 - 1e-8, 1.0 - 1e-8]}),
}


@pytest.mark.parametrize("case", NOT_A_READ, ids=str)
def test_a_factor_that_is_not_a_read_is_bounded_by_its_values(case):
    stmt, values = NOT_A_READ[case]
    program = ct.parse("lang full\ninput alloc A : [1]\ninput alloc B : [2]\ninput alloc C : [2]\n"
                       "input alloc D : [2]\noutput alloc O : [1]\n" + stmt + "\n")
    x = {"A": np.array([1e-300]), "D": np.zeros(2)} | {n: np.array(v) for n, v in values.items()}
    want = evaluate(program, x)["O"]
    assert np.isfinite(want).all() and 1e8 < want[0] < 3e8
    for pad in (None, 4):
        got = native.compile(program, None, pad)(**x)["O"]
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_zero_in_a_denominator_does_not_leave_the_call_to_the_equations(monkeypatch):
    # r15 L03 (least_size counting zeros: the least non-zero |den| became 0, the quotient's
    # bound inf): B / 0 is • whatever the order, so a zero is no reason to ask the equations
    program = ct.parse("lang full\ninput alloc A : [1]\ninput alloc B : [2]\ninput alloc C : [2]\n"
                       "output alloc O : [1]\nO = red 2 (prod A (div B C))\n")
    asked: list[int] = []
    real = native.evaluate
    monkeypatch.setattr(native, "evaluate", lambda *a, **kw: asked.append(1) or real(*a, **kw))
    x = {"A": np.array([2.0]), "B": np.array([0.0, 3.0]), "C": np.array([0.0, 4.0])}
    for pad in (None, 4):
        np.testing.assert_array_equal(native.compile(program, None, pad)(**x)["O"], [1.5])
    assert asked == []
    x["C"][1] = 0.0  # 3 / 0 is •
    assert np.isnan(native.compile(program)(**x)["O"]).all()
    assert asked == []
