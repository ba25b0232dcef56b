"""Review of padded plans running emit-c's padded C (``cjit``, commits 5fb4afd and d2c5a57).

Each test compares a padded compiled kernel with ``ct.evaluate(program, inputs, params, pad)``
bit for bit (the sign of every zero included; NaN is •, whatever its sign bit), or expects
the same error, or pins one piece of the change that a mutant of it got past
``tests/test_cjit.py``: the chunks' cuts as a property, the padded copy in buffers that
hold no zeros, rank-0 outputs, the padded-shape check in ``cjit.prepare`` for one
output of several, the bounds of ``engine._bounded_throughout`` at the overflow bound and
for a quotient by an input, when the unpadded run is asked to judge, unsupplied
allocations, ``out=``, and two threads in one kernel at once.
"""

from __future__ import annotations

import math
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from core_teil import cli
from core_teil.lang.shapes import round_up
from core_teil.native import cjit, planner
from core_teil.native import engine as native
from core_teil.semantics.eval import PaddingUnsound
from tests.test_cjit import CHAIN, assert_bits, chain_inputs, padded_agree, random_inputs, wait_after
from tests.test_cjit_review import cache, load, no_plan, small, the_c, threads  # noqa: F401 (the fixtures)

ROOT = Path(__file__).resolve().parent.parent
# C for every plan, however small, on one thread, into a private cache (test_cjit_review's fixture)
pytestmark = [pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine"),
              pytest.mark.usefixtures("small")]


# --------------------------------------------------------------------------
# _chunks: the cuts, as a property
# --------------------------------------------------------------------------


@pytest.mark.parametrize("pad", [None, 1, 2, 3, 8])
def test_chunks_tile_the_padded_rows_at_multiples_of_the_pad(pad):
    m = pad or 1
    for extent in range(1, 30):
        for teams in range(1, 6):
            got = cjit._chunks(extent, teams, pad)
            what = f"_chunks({extent}, {teams}, {pad}) = {got}"
            assert 1 <= len(got) <= teams, what
            assert got[0][0] == 0 and got[-1][1] == extent, what  # every index, the last chunk ends at E
            for (lo, hi), nxt in zip(got, [*got[1:], None], strict=True):
                assert lo < hi, what  # no empty chunk (the C refuses an extent of 0)
                assert lo % m == 0, what
                # a chunk of E' indices computes ceil_M(E') padded rows: they end where the next
                # chunk starts, the last at the whole run's ceil_M(E)
                assert lo + round_up(hi - lo, m) == (nxt[0] if nxt else round_up(extent, m)), what
            if pad is None:  # as even as can be
                sizes = [hi - lo for lo, hi in got]
                assert max(sizes) - min(sizes) <= 1 and len(got) == min(teams, extent), what


# --------------------------------------------------------------------------
# The padded copy of an input, and the outputs
# --------------------------------------------------------------------------


def nan_filled(real: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """``aligned_empty`` handing out NaN where an allocator may hand out anything (old results)."""
    def empty(shape: tuple[int, ...], align: int = 64) -> np.ndarray:
        a = real(shape, align)
        a.fill(np.nan)
        return a

    return empty


def test_the_padded_copy_holds_zeros_in_its_padding_whatever_the_allocator_gave(monkeypatch):
    # A : [3, 3] and u : [2, 3, 3, 3] are copied (staged) into padded buffers [4, 4] and [4, 4, 4, 4];
    # uninitialised memory there would be summed into the results (0 · NaN is NaN)
    monkeypatch.setattr(native, "aligned_empty", nan_filled(native.aligned_empty))
    p = load("interp.teil")
    params = {"E": 2, "m": 3, "n": 3}
    kernel = ct.compile(p, params, 4)
    ck = the_c(kernel)
    assert ck.padded == {"A": (4, 4), "u": (4, 4, 4, 4), "v": (4, 4, 4, 4)}
    no_plan(monkeypatch)
    first_in = random_inputs(p, params, 1)
    first_in["A"][1, 2] = np.nan
    first = padded_agree(kernel, p, first_in, params, 4, "interp pad 4, first call")
    assert first is not None
    kept = first["v"].copy()
    # the kept buffers are written again on the second call: only their declared regions
    second_in = random_inputs(p, params, 2)
    second_in["u"][1, 0, 0, 0] = -0.0
    padded_agree(kernel, p, second_in, params, 4, "interp pad 4, second call")
    # u, read along the batch dimension, is staged a piece at a time (cjit.CKernel._stage, in the
    # buffers of whichever thread runs the piece); A is copied whole
    assert set(kernel._pool.cjit_padded) == {("A", (3, 3), (4, 4))}
    # the first call's result is its own array, not a buffer the second call wrote
    assert np.array_equal(first["v"], kept, equal_nan=True)


def test_an_input_in_the_padded_layout_is_read_in_place_unaligned_and_left_alone(monkeypatch):
    # u : [4, 4, 4, 4] needs no padding: the C reads the caller's array, wherever it starts
    p = load("interp.teil")
    params = {"E": 4, "m": 3, "n": 4}
    kernel = ct.compile(p, params, 4)
    the_c(kernel)
    no_plan(monkeypatch)
    inputs = random_inputs(p, params, 3)
    backing = np.empty(inputs["u"].size + 1)
    u = backing[1:].reshape(inputs["u"].shape)  # 8 bytes past malloc's alignment
    u[...] = inputs["u"]
    assert u.ctypes.data % 16 == 8 and u.flags.c_contiguous
    before = u.copy()
    padded_agree(kernel, p, {"A": inputs["A"], "u": u}, params, 4, "interp, u unaligned in place")
    assert np.array_equal(u, before)
    assert set(kernel._pool.cjit_padded) == {("A", (3, 4), (4, 4))}


RANK0 = """lang full
param n
input alloc A : [n]
output alloc s : []
output alloc q : []
output alloc w : [n]
s = red 1 A
q = div s s
w = mul s A
"""


@pytest.mark.parametrize("pad", [2, 4])
def test_rank_0_outputs_are_0_d_arrays_with_the_padded_semantics_values(monkeypatch, pad):
    # the plan and ct.evaluate hand back a 0-d ndarray, never a numpy scalar; q = s / s is the
    # controlled division (0 / 0 = 0)
    p = ct.parse(RANK0)
    kernel = ct.compile(p, {"n": 3}, pad)
    ck = the_c(kernel)
    assert dict(ck.outputs) == {"s": (), "q": (), "w": (3,)}
    no_plan(monkeypatch)
    for a in ([1.0, 2.0, -4.0], [0.0, -0.0, 0.0], [np.nan, 1.0, 2.0], [1.5, -1.5, -0.0]):
        got = padded_agree(kernel, p, {"A": np.array(a)}, {"n": 3}, pad, f"rank 0, A = {a}")
        assert got is not None and got["s"].ndim == 0
    out = {"s": np.full((), 7.0), "q": np.full((), 7.0), "w": np.full(3, 7.0)}
    got = kernel(out=out, A=np.array([0.0, -0.0, 0.0]))
    assert all(got[k] is out[k] for k in out)
    assert_bits(got, ct.evaluate(p, {"A": np.array([0.0, -0.0, 0.0])}, {"n": 3}, pad), "rank 0 into out=")


def test_outputs_are_views_of_padded_arrays_at_the_declared_shapes():
    p = load("helm.teil")
    params = {"E": 3, "n": 3}
    kernel = ct.compile(p, params, 4)
    the_c(kernel)
    v = kernel(**random_inputs(p, params, 4))["v"]
    # a view of the padded [4, 4, 4, 4] array, as the plan's padded runs return
    assert v.shape == (3, 3, 3, 3) and v.strides == (8 * 64, 8 * 16, 8 * 4, 8) and v.base is not None


def longer_one(monkeypatch: pytest.MonkeyPatch, which: str, by: int) -> None:
    """emit-c's padded extents of allocation ``which`` off by ``by`` in the last dimension."""
    from core_teil.native import emit_c

    real = emit_c.CSource.shape

    def shape(self: Any, name: str, params: Any = None) -> tuple[int, ...]:
        s = real(self, name, params)
        return (*s[:-1], s[-1] + by) if name == which and s and self.pad is not None else s

    monkeypatch.setattr(emit_c.CSource, "shape", shape)


@pytest.mark.parametrize("which", ["w", "x"])
@pytest.mark.parametrize("by", [1, -1])
def test_one_padded_output_off_from_the_plans_is_enough_to_run_the_plan(monkeypatch, by, which):
    # axpy has outputs z and w; only w's padded extent disagrees (longer: the C would be handed
    # an array laid out otherwise; shorter: it would write past the end); or only the input x's
    # (the padded copy the C reads would be laid out otherwise: a silent wrong answer)
    longer_one(monkeypatch, which, by)
    p = load("axpy.teil")
    kernel = ct.compile(p, {"n": 3}, 2)
    why = cjit.why_not(kernel)
    assert why is not None and why.startswith("emit-c's padded extents {") and f"'{which}': ({4 + by},)" in why, why
    padded_agree(kernel, p, random_inputs(p, {"n": 3}, 5), {"n": 3}, 2, "axpy, the plan")


# --------------------------------------------------------------------------
# Theorem 3's check: _bounded_throughout, and when the unpadded run judges
# --------------------------------------------------------------------------


PRODUCT = """lang full
param n
input alloc A : [n]
input alloc C : [n]
output alloc B : [n]
B = mul A C
"""

QUOTIENT = """lang full
param n
input alloc A : [n]
input alloc D : [n]
output alloc B : [n]
B = div A D
"""


def test_a_bound_equal_to_the_overflow_bound_is_bounded():
    # B = A · C: its bound is max(1, |A|) · max(1, |C|), exactly OVERFLOW_BOUND for A = it, C = 1;
    # that bounds every value below the largest double (the plan's own test is <= too)
    kernel = native.compile(ct.parse(PRODUCT), {"n": 3}, 2)
    (c,) = kernel._compiled.values()
    ob = planner.OVERFLOW_BOUND
    for a, bounded in ((ob, True), (np.nextafter(ob, np.inf), False), (1.0, True)):
        assert native._bounded_throughout(c, {"A": np.full(3, a), "C": np.ones(3)}) is bounded, a


def test_a_quotient_by_an_input_is_bounded_by_its_least_magnitude():
    # only a result the C keeps has no known least magnitude; an input's is read off its values
    kernel = native.compile(ct.parse(QUOTIENT), {"n": 3}, 2)
    (c,) = kernel._compiled.values()
    assert native._bounded_throughout(c, {"A": np.full(3, 2.0), "D": np.array([0.5, -4.0, 0.0])}) is True
    assert native._bounded_throughout(c, {"A": np.full(3, 1e300), "D": np.full(3, 1e-300)}) is False


def never_unpadded(monkeypatch: pytest.MonkeyPatch) -> None:
    def judge(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the unpadded run was asked to judge")

    monkeypatch.setattr(native.Kernel, "_unpadded", judge)
    monkeypatch.setattr(native, "padding_agrees", judge)


def test_bounded_padded_runs_with_nan_results_are_not_judged_again(monkeypatch):
    # NaN (•) results need no unpadded run when no value can overflow: A = OVERFLOW_BOUND and •
    p = ct.parse(PRODUCT)
    kernel = ct.compile(p, {"n": 3}, 2)
    the_c(kernel)
    never_unpadded(monkeypatch)
    inputs = {"A": np.array([planner.OVERFLOW_BOUND, np.nan, -2.0]), "C": np.array([1.0, 1.0, -0.0])}
    padded_agree(kernel, p, inputs, {"n": 3}, 2, "A · C at the bound")


def test_unpadded_compiled_runs_are_never_judged_by_the_padding_check(monkeypatch):
    p = ct.parse(PRODUCT)
    kernel = ct.compile(p, {"n": 3})
    the_c(kernel)
    never_unpadded(monkeypatch)
    inputs = {"A": np.array([np.inf, np.nan, 1e308]), "C": np.array([0.0, 1.0, 1e10])}
    assert_bits(kernel(**inputs), ct.evaluate(p, inputs, {"n": 3}), "unpadded with ±inf")


#: CHAIN with T1 and T2 not outputs: the plan substitutes them into T4 (one statement)
HIDDEN_CHAIN = CHAIN.replace("output alloc T1", "alloc T1").replace("output alloc T2", "alloc T2")


def test_an_overflow_in_statements_the_plan_substitutes_is_refused_as_by_evaluate(monkeypatch):
    # T1..T3 are not outputs: the C computes them, the plan folds them into T4's bound
    p = ct.parse(HIDDEN_CHAIN)
    params = {"n": 3}
    kernel = ct.compile(p, params, 4)
    the_c(kernel)
    rng = np.random.default_rng(5)
    inputs = {"A": np.abs(rng.standard_normal((3, 3))) * 1e200 + 1.0,
              "B": np.abs(rng.standard_normal((3, 3))) * 1e60 + 1.0}
    with pytest.raises(PaddingUnsound, match="Theorem 3"):
        ct.evaluate(p, inputs, params, 4)
    padded_agree(kernel, p, inputs, params, 4, "hidden chain")
    # and finite inputs that stay small: no judge, the padded semantics' doubles
    never_unpadded(monkeypatch)
    padded_agree(kernel, p, random_inputs(p, params, 6), params, 4, "hidden chain, small")


KEPT_QUOTIENT = """lang full
param n
input alloc A : [n, n]
input alloc B : [n, n]
input alloc C : [n, n]
output alloc T1 : [n, n]
output alloc T2 : [n, n]
alloc T3 : [n, n]
output alloc T4 : [n, n]
T1 = add B B
T2 = div A T1
T3 = contr 2 3 (prod T2 C)
T4 = contr 2 3 (prod T3 C)
"""


def kept_quotient_inputs() -> dict[str, np.ndarray]:
    # T1 = 2e-320 (subnormal) at [1, 1] and finite; T2 = 1e300 / 2e-320 = inf there
    a, b = np.ones((3, 3)), np.ones((3, 3))
    a[0, 0], b[0, 0] = 1e300, 1e-320
    return {"A": a, "B": b, "C": np.ones((3, 3))}


@pytest.mark.parametrize(("text", "inputs"), [(CHAIN, chain_inputs), (KEPT_QUOTIENT, kept_quotient_inputs)],
                         ids=["chain", "quotient"])
def test_results_the_plan_keeps_are_bounded_through_the_statements_before(text, inputs):
    # T1 and T2 are outputs that later statements read: the plan keeps them, and the C's values of
    # them are never seen; only the bounds chained from T1 to T2 (and no bound for a quotient by
    # T1, whose least magnitude is unknown) send the run to the judge that refuses it
    p = ct.parse(text)
    kernel = ct.compile(p, {"n": 3}, 4)
    (c,) = kernel._compiled.values()
    assert isinstance(c.cjit, cjit.CKernel) and len(c.plan.stmts) == 3
    with pytest.raises(PaddingUnsound, match="Theorem 3"):
        ct.evaluate(p, inputs(), {"n": 3}, 4)
    padded_agree(kernel, p, inputs(), {"n": 3}, 4, "kept results")


@pytest.mark.parametrize("nthreads", [1, 2])
def test_inf_meeting_the_padding_is_padding_unsound_with_evaluates_message_and_exit_2(
        monkeypatch, tmp_path, capsys, nthreads):
    threads(monkeypatch, nthreads)
    p = load("interp.teil")
    params = {"E": 5, "m": 3, "n": 3}
    kernel = ct.compile(p, params, 4)
    assert the_c(kernel).batch is not None  # on one thread too: u is staged in pieces of E
    inputs = random_inputs(p, params, 7)
    inputs["A"][0, 0] = np.inf
    padded_agree(kernel, p, inputs, params, 4, "interp with inf")
    # the CLI's native engine: the same refusal, exit 2 (bad input), no traceback
    ran = []
    real = cjit.CKernel.run
    monkeypatch.setattr(cjit.CKernel, "run", lambda self, *a: ran.append(1) or real(self, *a))
    for name, arr in inputs.items():
        np.save(tmp_path / f"{name}.npy", arr)
    code = cli.main(["run", str(ROOT / "examples" / "interp.teil"), "--engine", "native", "--pad", "4",
                     "--param", "E=5,m=3,n=3", "--input", f"A={tmp_path / 'A.npy'}",
                     "--input", f"u={tmp_path / 'u.npy'}"])
    err = capsys.readouterr().err
    assert code == 2 and ran, err
    assert "padding error [report Theorem 3]" in err and "Traceback" not in err, err


# --------------------------------------------------------------------------
# Semantics: controlled division in the padding, unsupplied allocations, out=
# --------------------------------------------------------------------------


@pytest.mark.parametrize(("nthreads", "pad"), [(1, 4), (2, 2), (3, 4)])
def test_helm_divides_the_zero_padding_by_the_zero_padding(monkeypatch, nthreads, pad):
    # r = t / (expa 1 E D): 0 / 0 = 0 in the padding (and where D is ±0 with t = 0), v / 0 = •
    # in the region; on several threads in chunks whose last one ends at ceil_M(E)
    threads(monkeypatch, nthreads)
    p = load("helm.teil")
    params = {"E": 9, "n": 3}
    kernel = ct.compile(p, params, pad)
    ck = the_c(kernel)
    assert ck.batch is not None  # on one thread too: u is staged in pieces of E
    no_plan(monkeypatch)
    inputs = random_inputs(p, params, 8)
    inputs["D"][0, 0, 0], inputs["D"][1, 2, 0] = 0.0, -0.0
    padded_agree(kernel, p, inputs, params, pad, "helm, D with zeros")
    inputs["u"][4:] = 0.0
    inputs["u"][5, 1, 1, 1] = -0.0
    padded_agree(kernel, p, inputs, params, pad, "helm, u zero past row 4")
    inputs["D"][...] = 0.0
    padded_agree(kernel, p, inputs, params, pad, "helm, D all zero")


class Backwards:
    """An executor that runs the chunks one after another, the last first: a chunk that wrote
    past its own padded rows would then overwrite the chunk after it, every time."""

    def __init__(self, seen: list[tuple[int, int]]) -> None:
        self.seen = seen

    def map(self, fn: Callable[[tuple[int, int]], int], bounds: list[tuple[int, int]]) -> list[int]:
        self.seen.extend(bounds)
        return [fn(b) for b in reversed(bounds)][::-1]


@pytest.mark.parametrize(("nthreads", "extent"), [(2, 9), (3, 9), (3, 13), (4, 5)])
def test_chunks_compute_disjoint_padded_rows_in_any_order(monkeypatch, nthreads, extent):
    threads(monkeypatch, nthreads)
    p = load("helm.teil")
    params = {"E": extent, "n": 3}
    kernel = ct.compile(p, params, 4)
    ck = the_c(kernel)
    assert ck.batch is not None and ck.batch.pad == 4 and ck.batch.rows == {"u": 64, "v": 64}
    seen: list[tuple[int, int]] = []
    monkeypatch.setattr(cjit, "_executor", lambda teams: Backwards(seen))
    no_plan(monkeypatch)
    padded_agree(kernel, p, random_inputs(p, params, 30 + extent), params, 4, f"helm E={extent} backwards")
    starts = [lo for lo, _ in seen]
    ends = [lo + round_up(hi - lo, 4) for lo, hi in seen]  # the padded rows each chunk computes
    assert starts[0] == 0 and ends[-1] == round_up(extent, 4) and ends[:-1] == starts[1:], seen
    assert seen[-1][1] == extent, seen


UNQUALIFIED = """lang full
param n
alloc A : [n, n]
alloc B : [n, n]
alloc C : [n, n]
alloc S : []
B = contr 2 3 (prod A A)
S = red 1 (red 1 B)
"""


@pytest.mark.parametrize("pad", [2, 4])
def test_allocations_not_supplied_are_undefined_in_the_region_only(monkeypatch, pad):
    # without qualifiers every allocation is an input and an output; B, C and S may be left out
    # (C is then • on its declared region, 0 in its padding, and handed back as •)
    p = ct.parse(UNQUALIFIED)
    params = {"n": 3}
    kernel = ct.compile(p, params, pad)
    ck = the_c(kernel)
    assert dict(ck.inputs) == {"A": True, "B": False, "C": False, "S": False}
    no_plan(monkeypatch)
    a = np.arange(9.0).reshape(3, 3) - 4.0
    got = padded_agree(kernel, p, {"A": a}, params, pad, "only A")
    assert got is not None and np.isnan(got["C"]).all() and got["A"] is not a
    padded_agree(kernel, p, {"A": a, "C": -a, "S": np.array(2.0), "B": np.full((3, 3), np.nan)}, params, pad, "all")
    padded_agree(kernel, p, {"C": -a, "A": a}, params, pad, "A and C")


@pytest.mark.parametrize("n", [3, 4])
def test_out_arrays_receive_a_padded_run_even_when_they_are_an_input(monkeypatch, n):
    # m = n: v and u have the same shape, and out={'v': u} overwrites u after the run has read it
    # (n = 4: u : [4, 4, 4, 4] is the padded layout, read in place)
    p = load("interp.teil")
    params = {"E": 4, "m": n, "n": n}
    kernel = ct.compile(p, params, 2)
    the_c(kernel)
    no_plan(monkeypatch)
    inputs = random_inputs(p, params, 9)
    want = ct.evaluate(p, inputs, params, 2)
    fresh = np.full((4, n, n, n), np.nan)
    got = kernel(out={"v": fresh}, **inputs)
    assert got["v"] is fresh
    assert_bits(got, want, "out=")
    u = inputs["u"].copy()
    got = kernel(out={"v": u}, A=inputs["A"], u=u)
    assert got["v"] is u
    assert_bits(got, want, "out= is u")


def test_a_batch_dimension_that_is_not_first_runs_the_padded_plan(monkeypatch):
    threads(monkeypatch, 2)
    p = load("tvm_transposed_matmul.teil")
    params = {"m": 2, "n": 3, "h": 3}
    kernel = ct.compile(p, params, 2)
    assert cjit.why_not(kernel) == "the plan runs on several OpenMP threads and has no batch dimension to split"
    padded_agree(kernel, p, random_inputs(p, params, 10), params, 2, "tvm_transposed_matmul pad 2")


# --------------------------------------------------------------------------
# Two threads in one padded kernel at once
# --------------------------------------------------------------------------


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("copy", ["_padded_copy", "_stage"])
def test_two_callers_copy_their_inputs_before_either_runs(monkeypatch, nthreads, copy):
    # both callers have written their padded copies before either C runs (a barrier after every
    # copy): each thread's copies are its own, so each gets the results of its own inputs.  A is
    # copied whole (_padded_copy); u is staged in pieces 0-4 and 4-6 of E (_stage, in the buffers
    # of whichever thread runs the piece)
    threads(monkeypatch, nthreads)
    monkeypatch.setattr(cjit, "STAGE_BYTES", 1)
    p = load("interp.teil")
    params = {"E": 6, "m": 3, "n": 3}
    kernel = ct.compile(p, params, 4)
    the_c(kernel)
    cases = [random_inputs(p, params, 11 + i) for i in range(2)]
    want = [ct.evaluate(p, x, params, 4) for x in cases]
    wait_after(monkeypatch, copy, threading.Barrier(2, timeout=30))
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda i: kernel(**cases[i]), range(2)))
    for i in range(2):
        assert_bits(got[i], want[i], f"caller {i}, {nthreads} threads, a barrier after {copy}")


def test_many_calls_from_two_threads_agree(monkeypatch):
    threads(monkeypatch, 2)
    p = load("helm.teil")
    params = {"E": 7, "n": 3}
    kernel = ct.compile(p, params, 4)
    assert the_c(kernel).batch is not None
    cases = [random_inputs(p, params, 20 + i) for i in range(4)]
    want = [ct.evaluate(p, x, params, 4)["v"] for x in cases]
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda i: [kernel(**cases[i % 4])["v"] for _ in range(25)], range(4)))
    for i, runs in enumerate(got):
        assert all(np.array_equal(g, want[i % 4], equal_nan=True) for g in runs), i
    assert math.isfinite(float(np.abs(want[0]).max()))  # numbers compared, not NaN with NaN
