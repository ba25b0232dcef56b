"""The native engine (issue 5): agreement with the reference evaluator, refusal, plan checks.

The differential tests draw random well-typed programs over every operator
(``tests/wellformed.py``), with self-assignments, zeros in divisors and
allocations that read as •, and require ``core_teil.native.engine`` to agree with
``core_teil.semantics.eval.evaluate`` unpadded and padded: same NaN positions, values
equal up to reassociation rounding.  Hand-written cases add rank 5, extents
of 1 and 4, rank-0 results and the St-Stmt and division corner cases.
"""

from __future__ import annotations

import dataclasses
import importlib
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import core_teil as ct
from core_teil.errors import TeilError, TeilInputError, TeilUnknown
from core_teil.lang.typing import check_program
from core_teil.native import engine as native
from core_teil.native import planner
from core_teil.native.plan_check import PlanRejected, check_plan
from core_teil.semantics.eval import evaluate
from tests.wellformed import well_typed_programs

DIFF = settings(derandomize=True, max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def agree(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert set(got) == set(want)
    for name, w in want.items():
        g = got[name]
        assert g.shape == w.shape, name
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"• positions of {name}")
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9, equal_nan=True, err_msg=name)


def both(program: ct.Program, inputs: dict, params: dict | None = None, pad: int | None = None) -> None:
    agree(native.compile(program, params, pad)(**inputs), evaluate(program, inputs, params, pad))


# --------------------------------------------------------------------------
# Differential tests against the reference evaluator
# --------------------------------------------------------------------------


@DIFF
@given(well_typed_programs(undefined=None, max_depth=5, max_stmts=3))
def test_random_programs_agree_with_reference(case):
    for pad in (None, 2, 4):
        both(case.program, case.inputs, case.params, pad)


def _lowered_thresholds(mp: pytest.MonkeyPatch, chunk: int) -> None:
    mp.setattr(planner, "BLAS_MIN_VOLUME", 1)
    mp.setattr(planner, "BLAS_BATCHED_MIN_VOLUME", 1)
    mp.setattr(planner, "BLAS_MIN_DIM", 1)
    mp.setattr(planner, "STREAM_CHUNK_ELEMENTS", chunk)


def _example_case(draw: st.DrawFn) -> tuple[ct.Program, dict, dict]:
    from tests.test_examples import EXPECTED, GOOD, make_inputs

    path = draw(st.sampled_from(GOOD))
    program = ct.load(path)
    params = {p: draw(st.integers(1, 7)) for p in program.params}
    try:
        check_program(program, params)
    except TeilError:
        assume(False)
    spec = dataclasses.replace(EXPECTED[path.stem], params=params)
    inputs = make_inputs(program, spec, f"{path.stem}{params}")
    for x in inputs.values():  # • and 0 at a few drawn places
        flat = x.reshape(-1)
        for _ in range(draw(st.integers(0, 2))):
            flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from([np.nan, 0.0]))
    return program, params, inputs


@DIFF
@given(st.data(), st.sampled_from([1, 5, 64]))
def test_examples_agree_with_blas_and_streaming_everywhere(data, chunk):
    # the random programs above almost never contain a GEMM-shaped step; the examples (bmm, mttkrp,
    # matmul, taco, tvm, interp, helm) all do.  Lowered thresholds send every such step to
    # numpy.matmul and stream its temporary `chunk` elements at a time, at extents 1-7.
    program, params, inputs = _example_case(data.draw)
    with pytest.MonkeyPatch.context() as mp:
        _lowered_thresholds(mp, chunk)
        for pad in (None, 2):
            both(program, inputs, params, pad)


CASES = [
    # St-Stmt: the right-hand side reads only the old A
    ("alloc A : [3, 3]\nA = add A (transp 1 A)\n", {"A": np.arange(9.0).reshape(3, 3)}),
    ("lang full\nalloc A : [2, 3, 2]\nA = sub (transp 1 3 A) (mul A A)\nA = mul A (transp 1 3 A)\n",
     {"A": np.arange(12.0).reshape(2, 3, 2) - 5}),
    # controlled division: 0/0 = 0, 0/• = 0, v/0 = •
    ("alloc A : [4]\nalloc B : [4]\nalloc C : [4]\nC = div A B\n",
     {"A": np.array([0.0, 0.0, 1.0, -2.0]), "B": np.array([0.0, np.nan, 0.0, 4.0])}),
    # • from an allocation never supplied nor written, absorbed by + and *, not by 0/•
    ("input alloc A : [3]\nalloc U : [3]\noutput alloc C : [3]\noutput alloc D : [3]\n"
     "C = add A (mul A U)\nD = div (sub A A) U\n", {"A": np.array([1.0, 0.0, 2.0])}),
    # scalars and rank-0 results
    ("input alloc s : []\ninput alloc A : [3, 2]\noutput alloc t : []\noutput alloc B : [3, 2]\n"
     "t = red (red (mul s A))\nB = div A s\n", {"s": np.array(2.0), "A": np.arange(6.0).reshape(3, 2)}),
    ("input alloc A : [4, 4]\noutput alloc t : []\nt = contr A\n", {"A": np.arange(16.0).reshape(4, 4)}),
    # extents of 1, expa and proj
    ("lang full\ninput alloc A : [1, 4]\noutput alloc B : [4, 1, 3]\nB = expa 3 3 (transp 1 2 A)\n",
     {"A": np.arange(4.0).reshape(1, 4)}),
    ("lang full\ninput alloc A : [4, 3, 1]\noutput alloc B : [3]\nB = proj 2 1 (proj 1 4 A)\n",
     {"A": np.arange(12.0).reshape(4, 3, 1)}),
    # rank 5, with a diagonal, a contraction and a reduction
    ("lang full\ninput alloc A : [2, 3, 2, 4, 3]\ninput alloc B : [4, 2]\noutput alloc C : [2, 2]\n"
     "C = contr 2 3 (contr 3 5 (diag 1 3 (prod A B)))\n",
     {"A": np.arange(144.0).reshape(2, 3, 2, 4, 3) % 7 - 3, "B": np.arange(8.0).reshape(4, 2) - 4}),
    # a value read twice is materialised; read once, inlined
    ("alloc A : [3, 3]\nalloc B : [3, 3]\nalloc C : [3, 3]\nB = mul A A\nC = add B (transp 1 B)\n",
     {"A": np.arange(9.0).reshape(3, 3)}),
    # the sum of a product of sums (a SumAtom), and a sum over a broadcast label
    ("input alloc A : [3]\ninput alloc B : [3]\noutput alloc C : [3]\noutput alloc s : []\n"
     "C = mul (add A B) (sub A B)\ns = red (red (expa 3 A))\n", {"A": np.arange(3.0), "B": np.ones(3)}),
]


@pytest.mark.parametrize("pad", [None, 1, 3, 8])
@pytest.mark.parametrize("text,inputs", CASES)
def test_corner_cases_agree_with_reference(text, inputs, pad):
    both(ct.parse(text), inputs, None, pad)


def test_self_assignment_reads_the_old_value():
    p = ct.parse("alloc A : [2, 2]\nA = add A (transp 1 A)\n")
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(native.compile(p)(A=a)["A"], a + a.T)


def test_undefined_allocation_reads_as_nan():
    p = ct.parse("input alloc A : [2]\nalloc U : [2]\noutput alloc C : [2]\noutput alloc D : [2]\n"
                 "output alloc F : [2]\noutput alloc U2 : [2]\nC = div A U\nD = div (mul A U) A\n"
                 "F = div (sub A A) U\nU2 = U\n")
    out = native.compile(p)(A=np.array([0.0, 1.0]))
    np.testing.assert_array_equal(out["C"], [0.0, np.nan])  # 0/• = 0, 1/• = •
    np.testing.assert_array_equal(out["D"], [np.nan, np.nan])  # (0·•)/0 = •/0 = •
    np.testing.assert_array_equal(out["F"], [0.0, 0.0])
    assert np.isnan(out["U2"]).all()


def test_examples_agree_at_small_sizes():
    rng = np.random.default_rng(1)
    runs = [
        ("examples/interp.teil", {"E": 3, "m": 2, "n": 3}, {"A": (2, 3), "u": (3, 3, 3, 3)}),
        ("examples/interp_nested.teil", {"E": 3, "m": 2, "n": 3}, {"A": (2, 3), "u": (3, 3, 3, 3)}),
        ("examples/helm.teil", {"E": 2, "n": 3}, {"S": (3, 3), "D": (3, 3, 3), "u": (2, 3, 3, 3)}),
        ("examples/mttkrp.teil", {"I": 3, "J": 2, "K": 4, "L": 2}, {"B": (3, 4, 2), "C": (4, 2), "D": (2, 2)}),
        ("examples/bmm.teil", {"nb": 3, "ni": 2, "nj": 4, "nk": 3}, {"A": (3, 2, 3), "B": (3, 3, 4)}),
        ("examples/tvm_transposed_matmul.teil", {"m": 3, "n": 2, "h": 4}, {"A": (4, 3), "B": (4, 2)}),
    ]
    for path, params, shapes in runs:
        inputs = {k: rng.standard_normal(s) for k, s in shapes.items()}
        for pad in (None, 4):
            both(ct.load(path), inputs, params, pad)


def test_blas_steps_agree():
    # large enough for the GEMM steps to go to numpy.matmul (planner.BLAS_MIN_VOLUME)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((70, 80)), rng.standard_normal((80, 60))
    k = native.compile(ct.load("examples/matmul.teil"), {"l": 70, "m": 80, "n": 60})
    assert any(c.blas is not None for sp in k.plans[0].stmts for c in sp.calls)
    np.testing.assert_allclose(k(A=a, B=b)["C"], a @ b, rtol=1e-12, atol=1e-12)
    t = native.compile(ct.load("examples/tvm_transposed_matmul.teil"), {"m": 70, "n": 60, "h": 80})
    a2 = rng.standard_normal((80, 70))
    np.testing.assert_allclose(t(A=a2, B=b)["C"], a2.T @ b, rtol=1e-12, atol=1e-12)
    big = ct.load("examples/mttkrp.teil")
    params = {"I": 20, "J": 70, "K": 60, "L": 70}
    inputs = {"B": rng.standard_normal((20, 60, 70)), "C": rng.standard_normal((60, 70)),
              "D": rng.standard_normal((70, 70))}
    both(big, inputs, params)


MATMUL_ANY_A = """lang full
param l, m, n
alloc A : [l, m]
input alloc B : [m, n]
output alloc C : [l, n]
C = contr 2 3 (prod A B)
"""


def test_one_gemm_programs_run_directly_and_agree():
    # native.Direct: one BLAS step from two supplied inputs into the one output
    rng = np.random.default_rng(3)
    for path, params, shapes in [
        ("examples/matmul.teil", {"l": 70, "m": 80, "n": 60}, {"A": (70, 80), "B": (80, 60)}),
        ("examples/tvm_transposed_matmul.teil", {"m": 70, "n": 60, "h": 80}, {"A": (80, 70), "B": (80, 60)}),
        ("examples/bmm.teil", {"nb": 2, "ni": 128, "nj": 128, "nk": 64}, {"A": (2, 128, 64), "B": (2, 64, 128)}),
    ]:
        k = native.compile(ct.load(path), params)
        (c,) = k._compiled.values()
        assert c.direct is not None, path
        inputs = {x: rng.standard_normal(s) for x, s in shapes.items()}
        inputs["A"].reshape(-1)[::17] = np.nan
        out = k(**inputs)
        agree(out, evaluate(ct.load(path), inputs, params))
        assert out["C"].flags.c_contiguous and out["C"].flags.writeable
        assert not any(np.shares_memory(out["C"], x) for x in inputs.values())
        (cp,) = native.compile(ct.load(path), params, 8)._compiled.values()
        assert cp.direct is None  # padded buffers are laid out by the general path


def test_large_results_start_on_a_page():
    # native.result_empty: a page-aligned result, in the direct and in the general path
    rows = native.PAGE_ALIGNED_MIN // 256
    a, b = np.ones((rows, 32)), np.ones((32, 256))
    direct = native.compile(ct.load("examples/matmul.teil"), {"l": rows, "m": 32, "n": 256})
    general = native.compile(ct.parse(MATMUL_ANY_A), {"l": rows, "m": 32, "n": 256})
    for c in (direct(A=a, B=b)["C"], general(B=b)["C"]):
        assert c.size == native.PAGE_ALIGNED_MIN and c.ctypes.data % 4096 == 0
    assert native.result_empty((rows - 1, 256)).ctypes.data % 16 == 0  # small: plain np.empty


@pytest.mark.parametrize("shape", [(), (0, 5), (1,), (3, 4), (2, 3, 5, 7)])
@pytest.mark.parametrize("align", [8, 64, 4096])
def test_aligned_empty_is_an_aligned_c_contiguous_array(shape, align):
    a = native.aligned_empty(shape, align)
    assert a.shape == shape and a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable
    assert a.ctypes.data % align == 0 and a.flags.owndata is False
    a[...] = 7.0  # every element is inside the buffer it views
    assert np.shares_memory(a, a.base) or a.size == 0


def test_aligned_empty_refuses_what_it_cannot_make():
    from core_teil.native import _native

    for shape, align in (((3,), 48), ((3,), 4), ((-1, 2), 64), ((1,) * 33, 64)):
        with pytest.raises(ValueError, match="aligned_empty"):
            _native.aligned_empty(shape, align)


def test_a_gemm_from_an_unsupplied_allocation_takes_the_general_path():
    # A is not an input: supplied, the direct path runs; not supplied, A reads as • everywhere
    k = native.compile(ct.parse(MATMUL_ANY_A), {"l": 70, "m": 80, "n": 60})
    (c,) = k._compiled.values()
    assert c.direct is not None
    a, b = np.ones((70, 80)), np.ones((80, 60))
    np.testing.assert_array_equal(k(A=a, B=b)["C"], np.full((70, 60), 80.0))
    assert np.isnan(k(B=b)["C"]).all()
    np.testing.assert_array_equal(k(A=a, B=b)["C"], np.full((70, 60), 80.0))


def test_small_calls_run_on_one_thread_with_the_same_bits(monkeypatch):
    # planner.threads_for: below PARALLEL_MIN_WORK no thread is woken; either way every
    # batch element is computed by the same code, so the results are identical
    small = _plan("examples/helm.teil", {"E": 4, "n": 5})
    large = _plan("examples/helm.teil", {"E": 5000, "n": 13})
    for p, want in ((small, 1), (large, 0)):
        calls = [c for sp in p.stmts for c in sp.calls if c.ops]
        assert calls and all(planner.threads_for(c.nbatch * planner.element_work(c)) == want for c in calls)
    rng = np.random.default_rng(4)
    params = {"E": 300, "n": 5}
    inputs = {"S": rng.standard_normal((5, 5)), "D": rng.standard_normal((5, 5, 5)),
              "u": rng.standard_normal((300, 5, 5, 5))}
    inputs["D"][0, 1, 2] = 0.0  # a division by 0: •
    outs = []
    for threads in (1, 0):
        monkeypatch.setattr(native, "threads_for", lambda work, t=threads: t)
        outs.append(native.compile(ct.load("examples/helm.teil"), params)(**inputs))
    for name in outs[0]:
        np.testing.assert_array_equal(outs[0][name], outs[1][name])
    agree(outs[0], evaluate(ct.load("examples/helm.teil"), inputs, params))


@pytest.mark.parametrize("rows", [1, 3, 7, 20])
def test_streamed_blas_agrees_in_any_chunking(rows, monkeypatch):
    # mttkrp's GEMM B(ik, l) @ D runs in chunks of `rows` values of i, each consumed at once
    # by Σ_k t[i, k, j] C[k, j]; 20 rows in chunks of 3 leave a remainder chunk of 2
    row = 60 * 70  # one i-row of the temporary t[i, k, j]
    monkeypatch.setattr(planner, "STREAM_CHUNK_ELEMENTS", rows * row)
    rng = np.random.default_rng(3)
    inputs = {"B": rng.standard_normal((20, 60, 70)), "C": rng.standard_normal((60, 70)),
              "D": rng.standard_normal((70, 70))}
    inputs["B"][4, 2, 9] = np.nan  # • reaches row 4 of A only
    prog, params = ct.load("examples/mttkrp.teil"), {"I": 20, "J": 70, "K": 60, "L": 70}
    k = native.compile(prog, params)
    calls = [c for sp in k.plans[0].stmts for c in sp.calls]
    assert [(c.blas is not None, [d.kind for d in c.ops], c.chunk) for c in calls] == \
        [(True, ["mac2_set"], rows)]
    out = k(**inputs)["A"]
    agree({"A": out}, evaluate(prog, inputs, params))
    assert np.isnan(out[4]).all() and not np.isnan(np.delete(out, 4, axis=0)).any()


def _streamed_mttkrp() -> tuple[planner.Plan, planner.Call]:
    p = _plan("examples/mttkrp.teil", {"I": 20, "J": 70, "K": 60, "L": 70})
    call = next(c for sp in p.stmts for c in sp.calls if c.chunk)
    return p, call


def test_plan_check_rejects_a_stream_that_reads_other_rows():
    p, call = _streamed_mttkrp()
    d = call.ops[0]
    r = next(r for r, o in enumerate(d.operands) if o.store is call.blas.out.store)
    # element i would read row i-1 of the temporary: not yet written by its chunk's GEMM
    d.offsets = tuple(o - 60 * 70 if q == r else o for q, o in enumerate(d.offsets))
    with pytest.raises(PlanRejected, match="streaming"):
        check_plan(p)


def test_plan_check_rejects_a_stream_whose_temporary_is_read_later():
    p, call = _streamed_mttkrp()
    sp = p.stmts[0]
    d = call.ops[0]
    reader = planner.OpDesc("mac1", None, (d.operands[0], call.blas.out), ((10, 1, 1),), (0, 0), 1.0, (0, 0), 1)
    sp.calls.append(planner.Call([reader], 1))
    with pytest.raises(PlanRejected, match="read after"):
        check_plan(p)


def test_plan_check_rejects_a_stream_chunked_by_another_label():
    p, call = _streamed_mttkrp()
    call.nbatch, call.ops[0].nbatch = 70, 70
    with pytest.raises(PlanRejected, match="streaming"):
        check_plan(p)
    p, call = _streamed_mttkrp()
    call.chunk = 0
    with pytest.raises(PlanRejected, match="chunks are empty"):
        check_plan(p)


def test_repeated_calls_are_checked_like_the_first():
    # the second call with the same names, shapes and dtype skips re-checking; anything else is checked
    k = native.compile(ct.load("examples/matmul.teil"))
    ones = {"A": np.ones((2, 3)), "B": np.ones((3, 4))}
    assert k(**ones)["C"][0, 0] == 3.0 and k(**ones)["C"][0, 0] == 3.0
    assert k(A=np.full((2, 3), 2.0), B=np.ones((3, 4)))["C"][0, 0] == 6.0
    assert k(A=np.ones((5, 3)), B=np.ones((3, 4)))["C"].shape == (5, 4)  # new parameters
    with pytest.raises(TeilInputError, match="complex"):
        k(A=np.ones((5, 3), dtype=complex), B=np.ones((3, 4)))
    with pytest.raises(TeilInputError, match="shape"):
        k(A=np.ones((5, 3)), B=np.ones((2, 4)))
    big = np.array(2**60, dtype=np.int64) * np.ones((5, 3), dtype=np.int64)
    with pytest.raises(TeilInputError, match="dtype int64"):  # never converted
        k(A=big, B=np.ones((3, 4)))
    a = np.arange(15.0).reshape(3, 5).T  # same shape, not C-contiguous: the checked path copies it
    np.testing.assert_array_equal(k(A=a, B=np.ones((3, 4)))["C"], a @ np.ones((3, 4)))


def test_the_repeated_call_gate_says_no_to_anything_but_the_same_arrays():
    from core_teil.native import _native

    a = np.zeros((2, 3))
    shapes = ((2, 3), (4,))
    assert _native.same_arrays([a, np.zeros(4)], shapes)

    class Sub(np.ndarray):
        pass

    for other in (np.zeros(4, dtype=np.float32), np.zeros(4, dtype=">f8"), np.zeros(8)[::2],
                  np.zeros(5), np.zeros((4, 1)), np.zeros(4).view(Sub), [0.0] * 4, 4.0):
        assert not _native.same_arrays([a, other], shapes), other
    assert not _native.same_arrays([a], shapes) and not _native.same_arrays([a, np.zeros(4), a], shapes)
    assert _native.address(a[1:]) == a[1:].ctypes.data


def test_the_repeated_call_path_compares_input_names():
    # same shapes under other names, a missing name, an extra one: all are checked again
    k = native.compile(ct.load("examples/matmul.teil"), {"l": 4, "m": 4, "n": 4})
    a = np.ones((4, 4))
    assert k(A=a, B=a)["C"][0, 0] == 4.0
    with pytest.raises(TeilInputError, match="missing input 'B'"):
        k(A=a, C=a)
    assert k(B=a, A=2 * a)["C"][0, 0] == 8.0  # the other order: by name, not by position
    with pytest.raises(TeilInputError):
        k(A=a, B=a, D=a)


def test_small_calls_wake_no_thread(monkeypatch):
    # the thread count planner.threads_for gives is the one the extension is called with
    monkeypatch.setenv("CORE_TEIL_CJIT", "0")  # the plan's (compiled C: tests/test_cjit.py)
    seen = []
    real = native._native.run
    monkeypatch.setattr(native._native, "run", lambda *args: seen.append(args[-1]) or real(*args))
    rng = np.random.default_rng(5)
    for params, want in (({"E": 4, "n": 5}, 1), ({"E": 3000, "n": 9}, 0)):
        n = params["n"]
        inputs = {"S": rng.standard_normal((n, n)), "D": rng.standard_normal((n, n, n)),
                  "u": rng.standard_normal((params["E"], n, n, n))}
        seen.clear()
        native.compile(ct.load("examples/helm.teil"), params)(**inputs)
        assert seen and set(seen) == {want}, (params, seen)


THREADS = """
import threading, numpy as np, core_teil as ct
k = ct.compile(ct.load("examples/matmul.teil"))  # no parameters: proved at the first call
kp = ct.compile(ct.load("examples/matmul.teil"), {"l": 20, "m": 30, "n": 40}, 4)
a, b = np.ones((20, 30)), np.ones((30, 40))
kp(A=a, B=b)
ai = a.copy(); ai[0, 0] = np.inf  # the padded kernel's judge, built and proved on demand
bad = []
def work():
    for _ in range(3):
        if not (k(A=a, B=b)["C"] == 30.0).all() or not np.isinf(kp(A=ai, B=b)["C"][0]).all():
            bad.append(1)
ts = [threading.Thread(target=work) for _ in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
print("bad", len(bad))
"""


def test_threads_may_share_a_kernel_before_it_is_proved():
    # Z3 is not thread-safe: without native._Z3 this crashed the interpreter (5 runs in 6)
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", THREADS], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "bad 0", (r.returncode, r.stdout, r.stderr[-2000:])


def test_blas_steps_warn_about_nothing():
    a, b = np.ones((64, 64)), np.ones((64, 64))
    a[2, :] = 0.0
    b[5, 7] = np.inf  # 0 · inf in the GEMM: a value here, not a floating-point event to report
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = ct.compile(ct.load("examples/matmul.teil"))(A=a, B=b)["C"]
    assert np.isnan(c[2, 7]) and np.isinf(c[0, 7])


def test_params_are_read_off_the_inputs():
    k = native.compile(ct.load("examples/matmul.teil"))
    out = k(A=np.ones((2, 3)), B=np.ones((3, 4)))
    np.testing.assert_array_equal(out["C"], np.full((2, 4), 3.0))
    assert k(A=np.ones((1, 1)), B=np.ones((1, 5)))["C"].shape == (1, 5)


# --------------------------------------------------------------------------
# Safety by proof: refusal
# --------------------------------------------------------------------------


def test_refuted_obligation_is_refused():
    p = ct.parse("param n, m\ninput alloc A : [n]\noutput alloc B : [m]\nB = A\n")
    with pytest.raises(native.NativeRefused) as info:
        native.compile(p, {"n": 2, "m": 3})
    assert info.value.exit_code == 1
    assert "typing" in str(info.value) and info.value.rule == "typing"


@dataclasses.dataclass
class _Ob:
    name: str
    status: str
    counterexample: object = None


@dataclasses.dataclass
class _Report:
    obligations: tuple

    @property
    def ok(self) -> bool:
        return all(o.status == "proved" for o in self.obligations)


def test_refusal_names_the_refuted_obligation(monkeypatch):
    prove_mod = importlib.import_module("core_teil.proving.prove")  # the module; ct.prove is the function

    p = ct.parse("alloc A : [2]\nA = add A A\n")
    monkeypatch.setattr(prove_mod, "prove", lambda *a, **k: _Report(
        (_Ob("reads-in-bounds", "proved"), _Ob("padding-simulation", "refuted"))))
    monkeypatch.setattr(native, "_PROOFS", {})
    with pytest.raises(native.NativeRefused, match="padding-simulation"):
        native.compile(p, {}, 4)
    monkeypatch.setattr(prove_mod, "prove", lambda *a, **k: _Report((_Ob("padding-simulation", "unknown"),)))
    monkeypatch.setattr(native, "_PROOFS", {})
    with pytest.raises(TeilUnknown, match="padding-simulation"):
        native.compile(p, {}, 4)


def test_proofs_are_cached_by_program_hash(monkeypatch):
    prove_mod = importlib.import_module("core_teil.proving.prove")  # the module; ct.prove is the function

    calls = []
    real = prove_mod.prove
    monkeypatch.setattr(prove_mod, "prove", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(native, "_PROOFS", {})
    text = "alloc A : [2]\nA = add A A\n"
    native.compile(ct.parse(text), {})
    native.compile(ct.parse("# same program\n" + text), {})
    native.compile(ct.parse(text), {}, 2)
    assert len(calls) == 2


# --------------------------------------------------------------------------
# The plan check rejects corrupted plans
# --------------------------------------------------------------------------


def _plan(path: str, params: dict, pad: int | None = None) -> planner.Plan:
    p = planner.plan(check_program(ct.load(path), params), pad)
    check_plan(p)  # the uncorrupted plan passes
    return p


def _leaf_operands(p: planner.Plan):
    return [o for sp in p.stmts for s in sp.lowering.steps for o in s.args if o.leaf is not None]


def test_plan_check_rejects_a_transposed_index_map():
    # same extents everywhere, so the corrupted read stays in bounds: only Z3's
    # comparison with eval.py's read can tell it is the wrong element
    p = _plan("examples/tvm_transposed_matmul.teil", {"m": 3, "n": 3, "h": 3})
    op = _leaf_operands(p)[0]
    bad = tuple(reversed(op.leaf.index))
    object.__setattr__(op.leaf, "index", bad)  # the normal form's leaf itself
    op.index = bad
    with pytest.raises(PlanRejected, match="index map"):
        check_plan(p)


def test_plan_check_rejects_an_operand_that_differs_from_its_leaf():
    p = _plan("examples/matmul.teil", {"l": 2, "m": 3, "n": 4})
    op = _leaf_operands(p)[0]
    op.index = tuple(reversed(op.index or ()))
    with pytest.raises(PlanRejected, match="index map"):
        check_plan(p)


def test_plan_check_rejects_an_early_summation():
    p = _plan("examples/interp_nested.teil", {"E": 2, "m": 2, "n": 3})
    low = p.stmts[0].lowering
    step = next(s for s in low.steps if isinstance(s.out.store, planner.Temp))
    # drop a label the rest of the term still needs: it would be summed too early
    needed = next(lab for lab in step.out.store.labels if lab.role == "red")
    step.out.store.labels = step.out.store.labels - {needed}
    with pytest.raises(PlanRejected, match="Σ"):
        check_plan(p)


def test_plan_check_rejects_a_dropped_factor():
    p = _plan("examples/helm.teil", {"E": 2, "n": 2})
    sch = next(s for sp in p.stmts for s in sp.lowering.schedules if len(s.steps) >= 2)
    sch.steps.pop(0)
    with pytest.raises(PlanRejected):
        check_plan(p)


def test_plan_check_rejects_a_descriptor_beyond_its_buffer():
    p = _plan("examples/bmm.teil", {"nb": 3, "ni": 2, "nj": 4, "nk": 3})
    d = next(d for sp in p.stmts for c in sp.calls for d in c.ops if d.kind in ("mac2", "mac2_set"))
    ext, *strides = d.loops[0]
    d.loops = ((ext + 1, *strides), *d.loops[1:])
    with pytest.raises(PlanRejected, match="descriptor"):
        check_plan(p)


def _assigning_bmm() -> tuple[planner.Plan, planner.OpDesc]:
    p = _plan("examples/bmm.teil", {"nb": 3, "ni": 5, "nj": 20, "nk": 40})  # b too big for MAC2B
    ops = [d for sp in p.stmts for c in sp.calls for d in c.ops]
    # the zero fill is gone: the two-loop kernel assigns each element of C once
    assert [d.kind for d in ops] == ["mac2_set"]
    return p, ops[0]


def test_plan_check_rejects_an_assigning_op_outside_its_kernel():
    p, d = _assigning_bmm()
    check_plan(p)
    # the summed loop innermost: true to the operands, but not the two-loop kernel's shape
    d.loops = (*d.loops[:-2], d.loops[-1], d.loops[-2])
    d.order = (*d.order[:-2], d.order[-1], d.order[-2])
    with pytest.raises(PlanRejected, match="assigning MAC2"):
        check_plan(p)


def test_plan_check_rejects_an_assigning_op_that_writes_twice():
    p, d = _assigning_bmm()
    # rows 0..4 of a 5x20 output moved by 3 instead of 20: rows overlap and the tail is never written
    (ext, _so, sa, sb), *rest = d.loops
    assert planner.writes_once(d.loops, d.nbatch, d.batch_strides[0], 3 * 5 * 20)
    assert not planner.writes_once(((ext, 3, sa, sb), *rest), d.nbatch, d.batch_strides[0], 3 * 5 * 20)
    d.loops = ((ext, 3, sa, sb), *rest)
    with pytest.raises(PlanRejected, match="descriptor"):
        check_plan(p)
    p, d = _assigning_bmm()
    call = next(c for sp in p.stmts for c in sp.calls if d in c.ops)
    call.ops.append(dataclasses.replace(d, kind="mac2"))  # a second writer, adding into C
    with pytest.raises(PlanRejected, match="exactly once"):
        check_plan(p)


@pytest.mark.parametrize("pad", [None, 8])
def test_assigning_ops_agree_with_reference(pad):
    # shapes that reach MAC2_SET (K > 32, J > 16); NaN (•) and ±inf must reach the same outputs
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((3, 5, 40)), rng.standard_normal((3, 40, 20))
    a[0, 1, 3], b[1, 7, 2], a[2, 0, 0] = np.nan, np.inf, 0.0
    b[2, 0, 5] = np.inf  # 0 · inf = • in one sum
    prog = ct.load("examples/bmm.teil")
    params = {"nb": 3, "ni": 5, "nj": 20, "nk": 40}
    k = native.compile(prog, params, pad)
    assert any(d.kind == "mac2_set" for sp in k.plans[0].stmts for c in sp.calls for d in c.ops)
    both(prog, {"A": a, "B": b}, params, pad)
    c = rng.standard_normal((9, 20))
    both(ct.load("examples/matmul.teil"), {"A": c.T.copy(), "B": c}, {"l": 20, "m": 9, "n": 20}, pad)


def test_plan_check_rejects_parallel_batch_elements_writing_one_element():
    # a reviewer's corruption: batch over the summed label b of C[i, j] = Σ_b Σ_k A[b,i,k] B[b,k,j]
    # (C does not move with the batch); assigning, each C element is written 3 times at once
    text = ("lang full\ninput alloc A : [3, 5, 40]\ninput alloc B : [3, 40, 20]\noutput alloc C : [5, 20]\n"
            "C = contr 1 3 (contr 3 5 (prod A B))\n")
    for kind in ("mac2_set", "mac2"):
        p = planner.plan(check_program(ct.parse(text), {}))
        check_plan(p)
        call = p.stmts[0].calls[0]
        d = next(d for d in call.ops if d.kind == "mac2")
        # as a planner would that fused the batch over b: loops made from the index maps
        i, j = d.operands[0].index
        b = next(lab for lab in d.step.summed() if lab.bound == 3)
        k = next(lab for lab in d.step.summed() if lab.bound == 40)
        folded = [planner.fold(o) for o in d.operands]
        d.kind, d.order, d.batch, d.par = kind, (i, k, j), b, None
        d.loops = tuple(map(tuple, planner.merge_loops([[x.bound, *(st.get(x, 0) for _, st in folded)]
                                                        for x in d.order])))
        d.batch_strides, d.nbatch, call.nbatch = tuple(st.get(b, 0) for _, st in folded), 3, 3
        assert d.batch_strides[0] == 0  # C does not move with b
        call.ops = [d]
        with pytest.raises(PlanRejected, match="exactly once" if kind == "mac2_set" else "write the same"):
            check_plan(p)


def test_small_batched_gemms_run_in_the_fused_kernel_on_several_threads(monkeypatch):
    # 8192 items of 72x26x72 ran as a numpy.matmul loop; the fused kernel uses both cores
    monkeypatch.setattr(planner._native, "openmp_threads", lambda: 2)
    p = _plan("examples/bmm.teil", {"nb": 16, "ni": 72, "nj": 72, "nk": 26})
    assert not any(c.blas is not None for sp in p.stmts for c in sp.calls)
    p = _plan("examples/bmm.teil", {"nb": 2, "ni": 128, "nj": 128, "nk": 64})
    assert any(c.blas is not None for sp in p.stmts for c in sp.calls)
    # on one thread OpenBLAS's micro-kernel is faster than the fused loops, batch or not
    monkeypatch.setattr(planner._native, "openmp_threads", lambda: 1)
    p = _plan("examples/bmm.teil", {"nb": 16, "ni": 72, "nj": 72, "nk": 26})
    assert any(c.blas is not None for sp in p.stmts for c in sp.calls)
    p = _plan("examples/bmm.teil", {"nb": 16, "ni": 72, "nj": 72, "nk": 20})  # 72 * 72 * 20 < 2^17
    assert not any(c.blas is not None for sp in p.stmts for c in sp.calls)


def test_plan_check_rejects_loops_that_are_not_the_index_maps():
    # C[i, j] = Σ_k A[i, k] B[k, j], extents 4: the op loops over k and j (batch i).  Swapping
    # B's strides between them stays in bounds (the bounds check passes) but reads B transposed.
    p = _plan("examples/matmul.teil", {"l": 4, "m": 4, "n": 4})
    d = next(d for sp in p.stmts for c in sp.calls for d in c.ops if d.kind.startswith("mac2"))
    (k, *sk), (j, *sj) = d.loops
    assert k == j == 4 and sk[2] != sj[2]
    sk[2], sj[2] = sj[2], sk[2]
    d.loops = ((k, *sk), (j, *sj))
    with pytest.raises(PlanRejected, match="index maps"):
        check_plan(p)
    p = _plan("examples/matmul.teil", {"l": 4, "m": 4, "n": 4})
    d = next(d for sp in p.stmts for c in sp.calls for d in c.ops if d.kind.startswith("mac2"))
    d.order = d.order[1:]  # a label of the step that no loop runs over
    with pytest.raises(PlanRejected, match="exactly its step's labels"):
        check_plan(p)


def test_plan_check_rejects_a_wrong_coefficient():
    p = _plan("examples/matmul.teil", {"l": 2, "m": 3, "n": 4})
    p.stmts[0].lowering.schedules[0].steps[-1].coeff = -1.0
    with pytest.raises(PlanRejected):
        check_plan(p)


# --------------------------------------------------------------------------
# Inputs (the checks of the reference engine) and the CLI
# --------------------------------------------------------------------------


def test_input_errors_are_teil_errors():
    k = native.compile(ct.load("examples/matmul.teil"), {"l": 2, "m": 3, "n": 4})
    with pytest.raises(TeilInputError, match="missing input"):
        k(A=np.ones((2, 3)))
    with pytest.raises(TeilInputError, match="shape"):
        k(A=np.ones((3, 2)), B=np.ones((3, 4)))
    with pytest.raises(TeilInputError, match="allocates no"):
        k(A=np.ones((2, 3)), B=np.ones((3, 4)), Z=np.ones(1))
    # An output may be given an initial value (docs/decisions.md); C is overwritten anyway.
    assert k(A=np.ones((2, 3)), B=np.ones((3, 4)), C=np.full((2, 4), 7.0))["C"][0, 0] == 3.0
    with pytest.raises(TeilInputError, match="rank"):
        k(A=np.ones((2, 3, 1)), B=np.ones((3, 4)))
    with pytest.raises(TeilInputError, match="dtype"):
        k(A=np.array([["x"] * 3] * 2), B=np.ones((3, 4)))
    with pytest.raises(TeilInputError, match="pad"):
        native.compile(ct.load("examples/matmul.teil"), None, 0)
    with pytest.raises(TeilInputError, match="never converted"):  # docs/decisions.md, "Input dtypes and files"
        native.compile(ct.load("examples/matmul.teil"))(A=np.ones((2, 3), dtype=np.int32), B=np.ones((3, 4)))


def test_inf_where_a_sum_is_factored_is_left_to_the_equations():
    # the plan computes x · Σ_m y(m); the semantics Σ_m x · y(m).  For x = inf, y = [1, -2]:
    # inf · -1 = -inf, but inf · 1 + inf · -2 = • (a reviewer's reproducer)
    prog = ct.parse("lang full\ninput alloc A : [1]\ninput alloc B : [2]\noutput alloc O : [1]\n"
                    "O = red 2 (prod A B)\n")
    k = native.compile(prog)
    inputs = {"A": np.array([np.inf]), "B": np.array([1.0, -2.0])}
    assert np.isnan(k(**inputs)["O"]).all()
    agree(k(**inputs), evaluate(prog, inputs))
    # the factored plan is guarded (planner.reorder_safe): ±inf anywhere leaves it to the equations
    assert planner.reorder_sensitive(k.plans[0].stmts[0].nf.poly)
    agree(k(A=np.array([2.0]), B=np.array([np.inf, -1.0])), evaluate(prog, {"A": np.array([2.0]),
                                                                     "B": np.array([np.inf, -1.0])}))


@pytest.mark.parametrize("pad", [None, 4])
def test_inf_in_the_examples_agrees_with_reference(pad):
    rng = np.random.default_rng(11)
    prog, params = ct.load("examples/mttkrp.teil"), {"I": 3, "J": 5, "K": 4, "L": 6}
    inputs = {"B": rng.standard_normal((3, 4, 6)), "C": rng.standard_normal((4, 5)),
              "D": rng.standard_normal((6, 5))}
    inputs["C"][1, 2] = np.inf  # factored out of Σ_l: C[k, j] · Σ_l B[i, k, l] D[l, j]
    k = native.compile(prog, params, pad)
    assert planner.reorder_sensitive(k.plans[0].stmts[0].nf.poly)
    _same_outcome(lambda: k(**inputs), lambda: evaluate(prog, inputs, params, pad))
    bmm = ct.load("examples/bmm.teil")
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    # a plain contraction reorders its sum too (blocked, BLAS): with ±inf the equations decide
    a[0, 1, 2], b[1, 3, 0] = np.inf, -np.inf
    kb = native.compile(bmm, {"nb": 2, "ni": 3, "nj": 5, "nk": 4}, pad)
    assert planner.reorder_sensitive(kb.plans[0].stmts[0].nf.poly)
    _same_outcome(lambda: kb(A=a, B=b), lambda: evaluate(bmm, {"A": a, "B": b}, None, pad))


def _same_outcome(run_native, run_reference) -> None:
    """Equal outputs, or the same error (under padding, inf · 0 may be refused: report Theorem 3)."""
    try:
        want = run_reference()
    except TeilError as e:
        with pytest.raises(type(e), match=e.rule or ""):
            run_native()
        return
    agree(run_native(), want)


def test_padded_input_buffers_are_reused_but_never_leak_between_calls():
    # the padded copies of the inputs are kept per thread; each call rewrites their region
    p = ct.parse("alloc A : [3, 5]\nalloc B : [5]\nalloc C : [3]\nB = red A\nC = red (transp 1 A)\n")
    k = native.compile(p, None, 4)
    first = k(A=np.arange(15.0).reshape(3, 5))
    first["A"][:] = 99.0  # an output that is an input is a copy, not the pooled buffer
    a = -np.ones((3, 5))
    a[1, 2] = np.nan
    second = k(A=a)
    agree(second, evaluate(p, {"A": a}, None, 4))
    assert np.isnan(second["B"][2]) and np.isnan(second["C"][1]) and second["B"][0] == -3.0
    assert (first["A"] == 99.0).all()  # the second call did not write into the first's result


def test_inputs_already_in_the_padded_layout_are_not_copied():
    # extents that are multiples of M and data on a 64-byte boundary: the input is the layout
    params = {"l": 8, "m": 12, "n": 16}
    p = ct.load("examples/matmul.teil")
    rng = np.random.default_rng(6)
    aligned = {x: native.aligned_empty(s) for x, s in (("A", (8, 12)), ("B", (12, 16)))}
    for arr in aligned.values():
        arr[:] = rng.standard_normal(arr.shape)
    aligned["A"][3, 4] = np.nan
    off = np.empty(8 * 12 + 1)[1:].reshape(8, 12)  # 8 bytes past a malloc boundary: not 64-aligned
    off[:] = aligned["A"]
    for inputs, copied in ((aligned, set()), ({"A": off, "B": aligned["B"]}, {"A"})):
        k = native.compile(p, params, 4)
        agree(k(**inputs), evaluate(p, inputs, params, 4))
        assert {b.name for b in getattr(k._pool, "initial", {})} == copied


def test_padded_outputs_have_declared_shapes_and_inputs_are_not_aliased():
    p = ct.parse("alloc A : [3, 5]\nalloc B : [5]\nB = red A\n")
    a = np.arange(15.0).reshape(3, 5)
    out = native.compile(p, None, 4)(A=a)
    assert out["A"].shape == (3, 5) and out["B"].shape == (5,)
    out["A"][0, 0] = 99.0
    assert a[0, 0] == 0.0


def test_cli_run_native_engine(tmp_path):
    from core_teil.cli import default_engine, main

    assert default_engine() == "native"
    np.save(tmp_path / "A.npy", np.arange(6.0).reshape(2, 3))
    np.save(tmp_path / "B.npy", np.arange(12.0).reshape(3, 4))
    out = tmp_path / "out.npz"
    code = main(["run", "examples/matmul.teil", "--input", f"A={tmp_path / 'A.npy'}", "--input",
                 f"B={tmp_path / 'B.npy'}", "--engine", "native", "--pad", "8", "--output", str(out)])
    assert code == 0
    np.testing.assert_allclose(np.load(out)["C"], np.arange(6.0).reshape(2, 3) @ np.arange(12.0).reshape(3, 4))


def test_errors_derive_from_teil_error():
    assert issubclass(native.NativeRefused, TeilError) and issubclass(PlanRejected, TeilError)


def test_outputs_are_arrays_of_the_declared_shape():
    """SPEC.md section 6: dict[str, ndarray], also for rank 0 under padding (not a numpy scalar)."""
    for pad in (None, 1, 4):
        out = native.compile(ct.load("examples/normalize.teil"), pad=pad)(x=np.array([1.0, 2.0, 3.0]))
        assert isinstance(out["s"], np.ndarray) and out["s"].shape == ()
        c = native.compile(ct.load("examples/matmul.teil"), pad=pad)(A=np.ones((3, 3)), B=np.ones((3, 3)))["C"]
        assert isinstance(c, np.ndarray) and c.shape == (3, 3)
        np.testing.assert_array_equal(c, np.full((3, 3), 3.0))


# --------------------------------------------------------------------------
# out=: the caller's arrays receive the results (issue 15)
# --------------------------------------------------------------------------

OUT_CASES = [
    ("examples/interp.teil", {"E": 5, "m": 3, "n": 4}),
    ("examples/matmul.teil", {"l": 40, "m": 50, "n": 70}),  # one BLAS step: the direct GEMM path
    ("examples/helm.teil", {"E": 3, "n": 4}),  # self-assignments, controlled division
    ("examples/axpy.teil", {"n": 9}),  # two outputs, one read by the next statement
    ("examples/normalize.teil", {"n": 6}),  # a rank-0 output
]


def _random_inputs(p: ct.Program, params: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    shapes = ct.check(p, params)
    return {a.name: rng.standard_normal(shapes[a.name]) for a in p.inputs()}


@pytest.mark.parametrize("pad", [None, 4])
@pytest.mark.parametrize(("path", "params"), OUT_CASES)
def test_out_receives_the_results_and_is_returned(path, params, pad):
    p = ct.load(path)
    inputs = _random_inputs(p, params, 7)
    k = native.compile(p, params, pad)
    want = k(**inputs)
    out = {name: np.full(arr.shape, 7.0) for name, arr in want.items()}
    got = k(**inputs, out=out)
    assert set(got) == set(out) and all(got[n] is out[n] for n in out)
    for name, arr in want.items():
        np.testing.assert_array_equal(out[name], arr)
    agree(got, evaluate(p, inputs, params, pad))


@pytest.mark.parametrize(("path", "params"), OUT_CASES)
def test_out_is_written_in_place_without_a_fresh_result(path, params, monkeypatch):
    # the point of out= (issue 15): no fresh result buffer to zero and copy from
    p = ct.load(path)
    inputs = _random_inputs(p, params, 8)
    k = native.compile(p, params)
    want = k(**inputs)
    # a result computed elsewhere would be copied into out= by native._write_out
    monkeypatch.setattr(np, "copyto", lambda *a, **kw: pytest.fail("out= was copied into"))
    out = {name: np.empty_like(arr) for name, arr in want.items()}
    k(**inputs, out=out)
    for name, arr in want.items():
        np.testing.assert_array_equal(out[name], arr)


def test_out_that_is_also_an_input_gets_the_right_result():
    # the statement still reads its input while it writes: such an out is written by a copy
    p = ct.load("examples/matmul.teil")
    rng = np.random.default_rng(9)
    for n in (3, 64):  # the general path and the direct GEMM
        a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        want = evaluate(p, {"A": a, "B": b})["C"]
        got = native.compile(p)(A=a, B=b, out={"C": a})
        assert got["C"] is a
        np.testing.assert_allclose(a, want, rtol=1e-12, atol=1e-12)


def test_out_is_refused_unless_float64_c_contiguous_writeable_and_of_the_declared_shape():
    p = ct.load("examples/axpy.teil")
    k = native.compile(p)
    inputs = {"a": np.array(2.0), "x": np.ones(4), "y": np.ones(4)}
    frozen = np.zeros(4)
    frozen.flags.writeable = False
    shared = np.zeros(8)
    for out, fragment in (({"z": np.zeros(8)[::2]}, "out['z'] is not C-contiguous"),
                          ({"z": frozen}, "out['z'] is read-only"),
                          ({"z": np.zeros(4, dtype=np.float32)}, "output 'z' has dtype float32"),
                          ({"z": np.zeros(5)}, "out['z'] has shape [5]"),
                          ({"z": [0.0] * 4}, "expected a numpy array"),
                          ({"a": np.zeros(())}, "'a' is not an output"),
                          ({"z": shared[:4], "w": shared[2:6]}, "out['z'] and out['w'] share memory")):
        with pytest.raises(TeilInputError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
            k(**inputs, out=out)
    # a partial out= is fine: the others are returned as fresh arrays
    z = np.empty(4)
    got = k(**inputs, out={"z": z})
    assert got["z"] is z and got["w"] is not None
    np.testing.assert_array_equal(z, [3.0] * 4)


def test_op_tables_refuse_malformed_rows_and_slots():
    # the op rows are parsed once, when the plan is compiled (_native.OpTable); a malformed
    # row or slot table is refused there or by run, never read past its end
    _native = native._native
    width = _native.OP_WIDTH
    good = np.zeros((1, width), dtype=np.int64)
    _native.OpTable(good, np.zeros(1))
    with pytest.raises(ValueError, match="wrong width"):
        _native.OpTable(np.zeros((1, width - 1), dtype=np.int64), np.zeros(1))
    with pytest.raises(ValueError, match="one coefficient per op row"):
        _native.OpTable(good, np.zeros(2))
    too_deep = good.copy()
    too_deep[0, 1] = _native.MAXL
    with pytest.raises(ValueError, match="too many loops"):
        _native.OpTable(too_deep, np.zeros(1))
    negative = good.copy()
    negative[0, 1] = -1
    with pytest.raises(ValueError, match="too many loops"):
        _native.OpTable(negative, np.zeros(1))
    table = _native.OpTable(good, np.zeros(1))
    for slots in (np.zeros((3, 2), dtype=np.int64), np.zeros((3, 3), dtype=np.int32),
                  np.zeros((3, 3, 1), dtype=np.int64), np.zeros((3, 6), dtype=np.int64)[:, ::2],
                  np.zeros((3, 3), dtype=">i8"), np.frombuffer(bytearray(8 * 9 + 1), np.int64, 9, 1).reshape(3, 3)):
        with pytest.raises(ValueError, match="three columns"):
            _native.run(table, slots, 0, 0, 1)


def test_the_extension_refuses_none_for_an_array():
    # Cython lets None through a typed argument unless told not to; its fields would then be
    # read from None's memory
    _native = native._native
    slots = np.zeros((3, 3), dtype=np.int64)
    for call in (lambda: _native.address(None), lambda: _native.largest_abs(None),
                 lambda: _native.run(None, slots, 1, 0, 1),
                 lambda: _native.run(_native.OpTable(np.zeros((1, _native.OP_WIDTH), dtype=np.int64), np.zeros(1)),
                                     None, 1, 0, 1),
                 lambda: _native.aligned_view(None, (2,), 64), lambda: _native.aligned_empty(None, 64),
                 lambda: _native.same_arrays([], None)):
        with pytest.raises(TypeError):
            call()
