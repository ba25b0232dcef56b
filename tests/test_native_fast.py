"""The native engine's path for repeated calls (issue 15, "repeated small calls").

``Kernel._run_fast`` runs an unpadded plan of fused ops with what ``_run`` works out on every
call (slot tables, the overflow guard's polynomial) worked out once.  It must be the general
path in all but cost: the same guard, the caller's current arrays (not the last call's), this
thread's temporaries, the same results bit for bit.  ``_native.largest_abs`` is the guard's
measure of an input: ``max |v|`` over the values that are not NaN.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import core_teil as ct
from core_teil.lang.typing import check_program
from core_teil.native import _native
from core_teil.native import engine as native
from core_teil.semantics.eval import evaluate
from tests.test_native import agree

FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)


def _reference_largest(a: np.ndarray) -> float:
    mags = np.abs(a[~np.isnan(a)])
    return float(mags.max()) if mags.size else 0.0


@settings(max_examples=300, deadline=None, derandomize=True)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=9), elements=FLOATS))
def test_largest_abs_is_the_largest_magnitude_that_is_not_nan(a):
    assert _native.largest_abs(a) == _reference_largest(a)
    assert native.largest_size(a) == _reference_largest(a)


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 31, 32, 33, 47])
def test_largest_abs_finds_the_largest_in_every_lane_and_in_the_tail(n):
    # tk_largest_abs reads sixteen values an iteration into eight two-lane maxima, then a
    # scalar tail: the largest magnitude is found wherever it is, NaN beside it or in its
    # place is skipped, and a start that is not 16-byte aligned reads the same values.
    base = np.linspace(-0.5, 0.5, n + 1)
    for start in (0, 1):
        a = base[start:start + n] if start + n <= base.size else base[:n]
        for at in range(a.size):
            for big in (-7.0, 7.0, -np.inf, np.inf):
                b = a.copy()
                b[at] = big
                for after in (1, 16):  # the next lane, and the same lane one iteration on
                    if b.size > after:
                        b[(at + after) % b.size] = np.nan
                assert _native.largest_abs(b) == _reference_largest(b), (n, start, at, big)
            b = np.full_like(a, np.nan)
            b[at] = -0.0
            assert _native.largest_abs(b) == 0.0
        assert _native.largest_abs(np.full_like(a, np.nan)) == 0.0


def test_largest_abs_refuses_what_it_cannot_read():
    with pytest.raises(ValueError, match="C-contiguous float64"):
        _native.largest_abs(np.ones((3, 4))[:, 1])
    with pytest.raises(ValueError, match="C-contiguous float64"):
        _native.largest_abs(np.ones(3, dtype=np.float32))
    with pytest.raises(ValueError, match="native byte order"):  # its bytes read as native: 1e-320
        _native.largest_abs(np.array([2.0, -3.0]).astype(">f8" if np.little_endian else "<f8"))
    # the engine measures a strided view by numpy instead
    v = np.arange(-6.0, 6.0).reshape(3, 4)[:, 1]
    assert native.largest_size(v) == _reference_largest(v) == 5.0


def _compiled(k: native.Kernel) -> native.Compiled:
    (c,) = k._compiled.values()
    return c


def _general(k: native.Kernel, mp: pytest.MonkeyPatch) -> None:
    for c in k._compiled.values():
        mp.setattr(c, "fast", None)


def _inputs(program: ct.Program, params: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    from core_teil.semantics.eval import ArrayInterpretation

    typed = check_program(program, params)
    interp = ArrayInterpretation(typed)
    rng = np.random.default_rng(seed)
    return {a.name: rng.standard_normal(tuple(interp.extent(d) for d in a.shape))
            for a in program.inputs()}


def _example_kernels() -> list[tuple[str, ct.Program, dict[str, int]]]:
    from tests.test_examples import EXPECTED, GOOD

    out = []
    for path in GOOD:
        program = ct.load(path)
        params = dict.fromkeys(program.params, 3) | dict(EXPECTED[path.stem].params or {})
        params = {p: min(int(v), 6) for p, v in params.items() if p in program.params}
        out.append((path.stem, program, params))
    return out


@pytest.mark.parametrize("name,program,params", _example_kernels(), ids=lambda x: x if isinstance(x, str) else "")
def test_the_fast_path_computes_what_the_general_path_computes(name, program, params):
    k = native.compile(program, params)
    c = _compiled(k)
    runs = [_inputs(program, params, seed) for seed in (1, 2)]
    fast = [k(**x) for x in runs]
    with pytest.MonkeyPatch.context() as mp:
        _general(k, mp)
        slow = [k(**x) for x in runs]
    for f, s in zip(fast, slow, strict=True):
        assert set(f) == set(s)
        for out in f:
            np.testing.assert_array_equal(f[out], s[out], err_msg=f"{name}: {out}")
    if c.fast is not None:  # the second call ran with the first call's slot table and other arrays
        agree(fast[1], evaluate(program, runs[1], params))


def test_the_small_kernels_of_the_issue_take_the_fast_path():
    mm = native.compile(ct.load("examples/matmul.teil"), {"l": 8, "m": 8, "n": 8})
    interp = native.compile(ct.load("examples/interp.teil"), {"E": 16, "m": 4, "n": 4})
    assert _compiled(mm).fast is not None and _compiled(interp).fast is not None


def test_each_call_reads_its_own_arrays_and_writes_fresh_results():
    program = ct.load("examples/matmul.teil")
    k = native.compile(program, {"l": 3, "m": 4, "n": 5})
    assert _compiled(k).fast is not None
    rng = np.random.default_rng(0)
    calls = [(rng.standard_normal((3, 4)), rng.standard_normal((4, 5))) for _ in range(4)]
    results = [k(A=a, B=b)["C"] for a, b in calls]
    for (a, b), got in zip(calls, results, strict=True):
        np.testing.assert_allclose(got, a @ b, rtol=1e-12)
    assert len({id(r) for r in results}) == 4 and not any(np.shares_memory(results[0], r) for r in results[1:])


def test_the_guard_still_hands_overflowing_values_to_the_equations(monkeypatch):
    # x · Σ_m y(m) in the plan, Σ_m x · y(m) in the equations: for x = inf they differ
    prog = ct.parse("lang full\ninput alloc A : [1]\ninput alloc B : [2]\noutput alloc O : [1]\n"
                    "O = red 2 (prod A B)\n")
    k = native.compile(prog)
    assert _compiled(k).fast is not None and _compiled(k).fast.guards
    inputs = {"A": np.array([np.inf]), "B": np.array([1.0, -2.0])}
    asked = []
    real = native.evaluate
    monkeypatch.setattr(native, "evaluate", lambda *a, **kw: asked.append(1) or real(*a, **kw))
    got = k(**inputs)
    assert asked and np.isnan(got["O"]).all()
    # finite values, but a bound past the overflow limit: the equations decide too
    asked.clear()
    big = {"A": np.array([1e200]), "B": np.array([1e200, 1.0])}
    agree(k(**big), evaluate(prog, big))
    assert asked
    # the bound counts the summands: |A| · |B| = 3e307 is below the limit (max / 4), 2 of them are not
    asked.clear()
    k(A=np.array([1e154]), B=np.array([3e153, 1.0]))
    assert asked
    # a factor below 1 may be left out of a partial product: it counts as 1 (planner.bound)
    asked.clear()
    k(A=np.array([0.1]), B=np.array([1e308, 1.0]))
    assert asked
    asked.clear()
    k(A=np.array([1e154]), B=np.array([1e153, 1.0]))
    k(A=np.array([2.0]), B=np.array([3.0, 4.0]))
    assert not asked


def test_out_arrays_are_written_in_place_on_the_fast_path():
    k = native.compile(ct.load("examples/matmul.teil"), {"l": 8, "m": 8, "n": 8})
    a, b = np.ones((8, 8)), np.full((8, 8), 2.0)
    out = {"C": np.empty((8, 8))}
    got = k(out=out, A=a, B=b)
    assert got["C"] is out["C"] and (out["C"] == 16.0).all()


def test_threads_each_use_their_own_slot_tables():
    program = ct.load("examples/interp.teil")
    params = {"E": 64, "m": 4, "n": 4}
    k = native.compile(program, params)
    assert _compiled(k).fast is not None
    runs = [_inputs(program, params, seed) for seed in range(8)]
    want = [evaluate(program, x, params) for x in runs]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(20):
                agree(k(**runs[i]), want[i])
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_a_padded_run_within_the_bound_scans_nothing_after_it(monkeypatch):
    """Issue 15, "padding that pays": Theorem 3 licenses a padded run whose values cannot
    overflow; the post-run comparison with the unpadded semantics is for those that can."""
    program = ct.load("examples/interp.teil")
    params = {"E": 4, "m": 5, "n": 6}
    k = native.compile(program, params, 4)
    checked, asked = [], []
    real, reference = native.padding_agrees, native.evaluate
    monkeypatch.setattr(native, "padding_agrees", lambda *a: checked.append(1) or real(*a))
    # a plan whose reordering the values make unsafe leaves them to the reference engine
    monkeypatch.setattr(native, "evaluate", lambda *a, **kw: asked.append(1) or reference(*a, **kw))
    x = _inputs(program, params, 3)
    agree(k(**x), evaluate(program, x, params, 4))
    assert not checked
    x["u"][1, 2, 3, 4] = np.nan  # • is a value of the semantics, not an overflow
    agree(k(**x), evaluate(program, x, params, 4))
    assert not checked
    assert not asked
    x["A"][0, 0] = 1e200  # finite, but the products may overflow: compared, or the equations decide
    k(**x)
    assert checked or asked
    checked.clear()
    asked.clear()
    x["A"][0, 0] = np.inf
    try:
        got = k(**x)
    except ct.TeilError as e:
        assert "report Theorem 3" in str(e.rule)
    else:
        agree(got, evaluate(program, x, params))
    assert checked or asked


def test_a_padded_run_past_the_bound_is_compared_after_it(monkeypatch):
    # axpy computes what its equations compute (no reordering, no guard), so only the
    # bound on its values decides whether the padded run is compared with the unpadded one
    program = ct.load("examples/axpy.teil")
    k = native.compile(program, {"n": 5}, 4)
    assert not any(c.guarded[0] for c in k._compiled.values())
    checked = []
    real = native.padding_agrees
    monkeypatch.setattr(native, "padding_agrees", lambda *a: checked.append(1) or real(*a))
    x = {"a": np.array(2.0), "x": np.arange(5.0), "y": np.ones(5)}
    agree(k(**x), evaluate(program, x, None, 4))
    assert not checked
    x["x"][3] = 1e308  # a · x overflows to inf: the post-run comparison runs
    agree(k(**x), evaluate(program, x))
    assert checked


@pytest.mark.parametrize("example,params", [("matmul", {"l": 2, "m": 3, "n": 4}),
                                            ("axpy", {"n": 5}),
                                            ("interp", {"E": 2, "m": 3, "n": 3})])
def test_a_big_endian_out_array_receives_the_values_not_their_bytes(example, params):
    # reviewer rS: the kernels wrote native doubles into a '>f8' out= array (C = 1e-320 ...)
    program = ct.load(f"examples/{example}.teil")
    k = native.compile(program, params)
    x = _inputs(program, params, 5)
    want = evaluate(program, x, params)
    out = {name: np.zeros(v.shape, dtype=">f8") for name, v in want.items()}
    got = k(out=out, **x)
    for name, v in want.items():
        assert got[name] is out[name]
        np.testing.assert_allclose(out[name], v, rtol=1e-12)


def test_an_out_array_in_fortran_order_is_refused():
    # reviewer rS (O02): the kernels address out= as dense row-major storage
    k = native.compile(ct.load("examples/matmul.teil"), {"l": 3, "m": 3, "n": 3})
    with pytest.raises(ct.TeilInputError, match="C-contiguous"):
        k(out={"C": np.asfortranarray(np.zeros((3, 3)))}, A=np.ones((3, 3)), B=np.eye(3))


def test_an_out_array_overlapping_an_input_gets_the_right_values():
    # reviewer rS (O05): the statement still reads A while it writes C; a partial overlap
    # must go through a fresh buffer, as an identical one does
    k = native.compile(ct.load("examples/matmul.teil"), {"l": 6, "m": 4, "n": 4})
    rng = np.random.default_rng(3)
    big = rng.standard_normal((9, 4))
    a, b = big[:6].copy(), rng.standard_normal((4, 4))
    got = k(A=big[:6], B=b, out={"C": big[3:9]})
    np.testing.assert_allclose(got["C"], a @ b, rtol=1e-12)
