"""Compiled C per plan (``core_teil.native.cjit``, issue 15): the native engine runs emit-c's kernel.

Differential: with the C in use (``cjit.why_not(kernel) is None``), every example of the
corpus and the bench kernels (at small sizes) give *bit for bit* what ``ct.evaluate``
gives, on inputs with zeros, NaN (•) and ±inf.  Fallback: without a C compiler on the
PATH, or with ``CORE_TEIL_CJIT=0``, the plan runs as before and says why.  The cache: a
truncated or altered library is compiled again, never loaded; two processes compiling
the same kernel at once both run it and leave one library behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from core_teil.errors import TeilInputError
from core_teil.lang.typing import check_program
from core_teil.native import cjit
from core_teil.native import engine as native
from core_teil.semantics import eval as ev
from core_teil.semantics.inputs import required_inputs
from tests.test_cjit_review import same_doubles

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.teil") if "bad" not in p.name)
CC = shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on this machine")

#: Small extents, different from each other (as tests/test_emit_c.py's).
PARAMS = {"E": 3, "m": 2, "n": 3, "l": 2, "nb": 2, "ni": 3, "nj": 2, "nk": 4, "I": 2, "J": 3, "K": 2, "L": 3,
          "k": 3, "h": 3}
#: The bench kernels (bench/__init__.py), at sizes the reference engine runs quickly.
BENCH = [("interp.teil", {"E": 20, "m": 4, "n": 4}), ("interp.teil", {"E": 5, "m": 7, "n": 7}),
         ("helm.teil", {"E": 3, "n": 13})]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cjit")


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch, cache: Path) -> Path:
    """C for every plan, however small, into a private cache."""
    monkeypatch.setenv(cjit.ENV_DIR, str(cache))
    monkeypatch.delenv(cjit.ENV_SWITCH, raising=False)
    monkeypatch.setattr(cjit, "MIN_WORK", 0)
    return cache


def random_inputs(p: ct.Program, params: dict[str, int], seed: int, specials: bool = False) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = ct.check(p, dict(params))
    out = {}
    for a in p.inputs():
        if a.name not in required_inputs(p):
            continue
        x = rng.standard_normal(shapes[a.name])
        if specials and x.size > 4:
            flat = x.reshape(-1)
            flat[rng.integers(0, x.size, 2)] = 0.0
            flat[rng.integers(0, x.size)] = np.nan
            flat[rng.integers(0, x.size)] = np.inf
            flat[rng.integers(0, x.size)] = -np.inf
        out[a.name] = x
    return out


def assert_bits(got: dict[str, np.ndarray], want: dict[str, np.ndarray], what: str) -> None:
    """The same arrays of the same shapes, holding the same doubles (every zero's sign too)."""
    assert set(got) == set(want), what
    for name, w in want.items():
        g = got[name]
        assert type(g) is np.ndarray and g.shape == w.shape, f"{what}: {name} is {type(g).__name__} {np.shape(g)}"
        assert same_doubles(g, w), f"{what}: {name} differs from ct.evaluate\n{g}\n!=\n{w}"


def uses_c(kernel: native.Kernel) -> bool:
    return cjit.why_not(kernel) is None


# --------------------------------------------------------------------------
# Differential: the compiled path computes ct.evaluate's doubles
# --------------------------------------------------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_compiled_examples_agree_with_the_reference_engine(small, path):
    p = ct.load(str(path))
    params = {q: PARAMS[q] for q in p.params}
    try:
        kernel = ct.compile(p, params)
    except (native.NativeRefused, ct.TeilUnknown):
        pytest.skip("the native engine refuses it (not proved for these parameters)")
    reason = cjit.why_not(kernel)
    if reason is not None:
        # only the documented reasons: BLAS steps (none at these sizes), never a failed compile
        assert "BLAS" in reason, reason
        return
    for seed, specials in ((0, False), (1, True), (2, True)):
        inputs = random_inputs(p, params, seed, specials)
        assert_bits(kernel(**inputs), ct.evaluate(p, inputs, params), f"{path.stem} seed {seed}")


def test_most_of_the_corpus_runs_compiled(small):
    used = []
    for path in EXAMPLES:
        p = ct.load(str(path))
        try:
            kernel = ct.compile(p, {q: PARAMS[q] for q in p.params})
        except (native.NativeRefused, ct.TeilUnknown):
            continue
        used.append(uses_c(kernel))
    assert sum(used) >= len(used) - 2 and sum(used) >= 10, used  # a vacuous differential test is no test


@pytest.mark.parametrize(("file", "params"), BENCH, ids=lambda x: x if isinstance(x, str) else
                         "-".join(f"{k}{v}" for k, v in x.items()))
def test_bench_kernels_compiled_agree_with_the_reference_engine(small, file, params):
    p = ct.load(str(ROOT / "examples" / file))
    kernel = ct.compile(p, params)
    assert uses_c(kernel)
    for seed, specials in ((0, False), (3, True)):
        inputs = random_inputs(p, params, seed, specials)
        if "D" in inputs and not specials:
            inputs["D"] = np.abs(inputs["D"]) + 1.0
        want = ct.evaluate(p, inputs, params)
        if not specials:
            assert all(np.isfinite(w).all() for w in want.values()), "a vacuous comparison"
        assert_bits(kernel(**inputs), want, f"{file} {params}")


def test_bench_size_interp_is_compiled_and_agrees_with_the_plan(monkeypatch, cache):
    # at a bench size the default threshold lets it compile; the result is the plan's, bit for bit
    monkeypatch.setenv(cjit.ENV_DIR, str(cache))
    monkeypatch.setattr(native._native, "openmp_threads", lambda: 1)
    p = ct.load(str(ROOT / "examples" / "interp.teil"))
    params = {"E": 2000, "m": 4, "n": 4}
    kernel = ct.compile(p, params)
    assert uses_c(kernel)
    monkeypatch.setenv(cjit.ENV_SWITCH, "0")
    plain = ct.compile(p, params)
    assert cjit.why_not(plain) == "CORE_TEIL_CJIT=0"
    inputs = random_inputs(p, params, 5, specials=False)
    assert np.array_equal(kernel(**inputs)["v"], plain(**inputs)["v"])


def test_the_compiled_path_runs_no_op_of_the_plan(small, monkeypatch):
    p = ct.load(str(ROOT / "examples" / "helm.teil"))
    params = {"E": 2, "n": 3}
    kernel = ct.compile(p, params)
    assert uses_c(kernel)

    def no_plan(*args, **kwargs):
        raise AssertionError("the plan ran")

    monkeypatch.setattr(native._native, "run", no_plan)
    monkeypatch.setattr(native, "gemm", no_plan)
    # ±inf would send the plan to the reference engine (planner.inf_sensitive): finite values,
    # and then ±inf, which the C computes as ct.evaluate does without asking it
    for specials in (False, True):
        inputs = random_inputs(p, params, 6, specials)
        assert_bits(kernel(**inputs), ct.evaluate(p, inputs, params), "helm")
    monkeypatch.setattr(native, "evaluate", no_plan)
    assert_bits(kernel(**inputs), ct.evaluate(p, inputs, params), "helm with ±inf")


def test_blas_plans_run_the_plan(small):
    # numpy.matmul beats naive loops
    mm = ct.load(str(ROOT / "examples" / "matmul.teil"))
    assert cjit.why_not(ct.compile(mm, {"l": 64, "m": 64, "n": 64})) == "the plan has BLAS steps"


@pytest.fixture
def team(small, monkeypatch):
    """Two OpenMP threads, and every call of a plan large enough for them."""
    from core_teil.native import planner

    monkeypatch.setattr(native._native, "openmp_threads", lambda: 2)
    monkeypatch.setattr(planner, "PARALLEL_MIN_WORK", 1)
    return planner


@pytest.mark.parametrize(("file", "params"), [("interp.teil", {"E": 7, "m": 2, "n": 3}),
                                              ("helm.teil", {"E": 5, "n": 4}),
                                              ("bmm.teil", {"nb": 3, "ni": 2, "nj": 3, "nk": 4})],
                         ids=["interp", "helm", "bmm"])
def test_multithreaded_plans_run_in_chunks_of_the_batch_dimension(team, file, params):
    # the C is single-threaded: a plan the engine would spread over its threads runs as chunks
    # of the proved batch dimension (E = 7 over 2 threads: rows 0-2 and 3-6), with the same bits
    p = ct.load(str(ROOT / "examples" / file))
    kernel = ct.compile(p, params)
    assert uses_c(kernel)
    ck = next(iter(kernel._compiled.values())).cjit
    assert ck.batch is not None and ck.batch.extent == params[p.params[0]]
    for seed, specials in ((0, False), (1, True)):
        inputs = random_inputs(p, params, seed, specials)
        assert_bits(kernel(**inputs), ct.evaluate(p, inputs, params), f"{file} in chunks")


def test_multithreaded_plans_without_a_leading_batch_dimension_run_the_plan(team):
    # tvm_transposed_matmul's batch dimension is A's second (a chunk is not a run of rows);
    # report_fig6_transposition has none
    why = "the plan runs on several OpenMP threads and has no batch dimension to split"
    for file in ("tvm_transposed_matmul.teil", "report_fig6_transposition.teil"):
        p = ct.load(str(ROOT / "examples" / file))
        kernel = ct.compile(p, {q: PARAMS[q] for q in p.params})
        assert cjit.why_not(kernel) == why, file
        inputs = random_inputs(p, {q: PARAMS[q] for q in p.params}, 2, specials=True)
        assert_bits(kernel(**inputs), ct.evaluate(p, inputs, {q: PARAMS[q] for q in p.params}), file)


def test_plans_too_small_for_the_team_run_on_one_thread(team, monkeypatch):
    monkeypatch.setattr(team, "PARALLEL_MIN_WORK", 1 << 40)
    p = ct.load(str(ROOT / "examples" / "interp.teil"))
    kernel = ct.compile(p, {"E": 3, "m": 2, "n": 3})
    assert uses_c(kernel) and next(iter(kernel._compiled.values())).cjit.batch is None


def test_small_plans_are_not_compiled(monkeypatch, cache):
    monkeypatch.setenv(cjit.ENV_DIR, str(cache))
    p = ct.load(str(ROOT / "examples" / "interp.teil"))
    kernel = ct.compile(p, {"E": 2, "m": 2, "n": 2})
    assert cjit.why_not(kernel) == "96 innermost iterations per call: not worth a compile"


def test_out_and_bad_inputs_are_the_engines(small):
    p = ct.load(str(ROOT / "examples" / "interp.teil"))
    params = {"E": 4, "m": 3, "n": 2}
    kernel = ct.compile(p, params)
    assert uses_c(kernel)
    inputs = random_inputs(p, params, 7, specials=False)
    want = ct.evaluate(p, inputs, params)["v"]
    out = np.full((4, 3, 3, 3), 99.0)
    got = kernel(out={"v": out}, **inputs)
    assert got["v"] is out and np.array_equal(out, want)
    # a non-contiguous input is copied (as the plan's path does), never read with the wrong strides
    u_t = np.asfortranarray(inputs["u"])
    assert np.array_equal(kernel(A=inputs["A"], u=u_t)["v"], want)
    with pytest.raises(TeilInputError, match="shape"):
        kernel(A=inputs["A"], u=inputs["u"][:, :1])
    with pytest.raises(TeilInputError, match="float64"):
        kernel(A=inputs["A"].astype(np.float32), u=inputs["u"])


def test_symbolic_kernels_run_the_plan(small):
    p = ct.load(str(ROOT / "examples" / "interp.teil"))
    assert cjit.why_not(ct.compile(p, {"E": 3, "m": 2})) == "not prepared"
    k = ct.compile(p, {"m": 2})
    inputs = random_inputs(p, {"E": 3, "m": 2, "n": 3}, 1, specials=False)
    k(**inputs)
    assert cjit.why_not(k) == "symbolic parameters"


# --------------------------------------------------------------------------
# Padded plans: emit-c's padded C, the padded semantics' doubles
# --------------------------------------------------------------------------


def padded_agree(kernel: native.Kernel, p: ct.Program, inputs: dict, params: dict, pad: int,
                 what: str) -> dict[str, np.ndarray] | None:
    """The padded kernel gives ct.evaluate(..., pad)'s doubles, or refuses as it does, with its
    message (an infinite value met the zero padding: report Theorem 3 holds for reals)."""
    try:
        want = ct.evaluate(p, inputs, params, pad)
    except ct.TeilError as exc:
        with pytest.raises(type(exc)) as got:
            kernel(**inputs)
        assert str(got.value) == str(exc), what
        return None
    result = kernel(**inputs)
    assert_bits(result, want, what)
    return result


@pytest.mark.parametrize("pad", [2, 4])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_padded_examples_run_compiled_and_agree(small, path, pad):
    p = ct.load(str(path))
    params = {q: PARAMS[q] for q in p.params}
    try:
        kernel = ct.compile(p, params, pad)
    except (native.NativeRefused, ct.TeilUnknown):
        pytest.skip("the native engine refuses it (not proved for these parameters)")
    reason = cjit.why_not(kernel)
    if reason is not None:
        assert "BLAS" in reason, reason
        return
    for seed, specials in ((0, False), (1, True)):
        inputs = random_inputs(p, params, seed, specials)
        padded_agree(kernel, p, inputs, params, pad, f"{path.stem} pad {pad} seed {seed}")


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(("file", "params"), BENCH, ids=lambda x: x if isinstance(x, str) else
                         "-".join(f"{k}{v}" for k, v in x.items()))
def test_padded_bench_kernels_in_chunks_agree(small, monkeypatch, file, params, threads):
    # several threads: chunks of the batch dimension cut at multiples of the pad (E = 20, 5, 3
    # are not multiples of 8), each computing its padded rows
    from core_teil.native import planner

    monkeypatch.setattr(native._native, "openmp_threads", lambda: threads)
    monkeypatch.setattr(planner, "PARALLEL_MIN_WORK", 1)  # these small plans would run on one thread
    p = ct.load(str(ROOT / "examples" / file))
    kernel = ct.compile(p, params, 8)
    assert uses_c(kernel)
    (c,) = kernel._compiled.values()
    # on one thread too: the pad rounds extents up, so u is staged a piece of E at a time
    assert c.cjit.batch is not None and c.cjit.batch.pad == 8
    for seed, specials in ((0, False), (3, True)):
        inputs = random_inputs(p, params, seed, specials)
        if "D" in inputs and not specials:
            inputs["D"] = np.abs(inputs["D"]) + 1.0
        padded_agree(kernel, p, inputs, params, 8, f"{file} {params} pad 8 on {threads} threads")


def padded_store(p: ct.Program, inputs: dict[str, np.ndarray], params: dict[str, int], pad: int,
                 name: str) -> np.ndarray:
    """Allocation ``name`` in the reference engine's final padded store: the whole padded array."""
    typed = check_program(p, dict(params))
    interp = ev.ArrayInterpretation(typed)
    return ev.eval_prog(ev.Sem(typed, interp, ev.initial_store(typed, interp, inputs, pad), pad))[name]


def whole(view: np.ndarray, padded: tuple[int, ...]) -> np.ndarray:
    """The padded array behind a padded run's output (a view at the declared shape)."""
    return np.lib.stride_tricks.as_strided(view, shape=padded, strides=view.strides, writeable=False)


@pytest.mark.parametrize("threads", [1, 2])
def test_staged_pieces_compute_the_whole_padded_store(small, monkeypatch, threads):
    # pieces of 8 rows of E = 20 (0-8, 8-16, 16-20): the last piece's buffer held 8 rows of the
    # piece before, and its rows 4-7 are E's padding (0 in the padded store), so they are cleared;
    # the padded output behind the view is the reference's padded store, bit for bit, padding too
    from core_teil.native import planner

    monkeypatch.setattr(native._native, "openmp_threads", lambda: threads)
    monkeypatch.setattr(planner, "PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(cjit, "STAGE_BYTES", 1)
    p = ct.load(str(ROOT / "examples" / "interp.teil"))
    params = {"E": 20, "m": 4, "n": 4}
    kernel = padded_c(p, params, 8)
    staged = []
    real = cjit.CKernel._stage
    monkeypatch.setattr(cjit.CKernel, "_stage", lambda self, name, a, lo, hi, pad, ws:
                        staged.append((name, lo, hi)) or real(self, name, a, lo, hi, pad, ws))
    for seed in (0, 1):
        inputs = random_inputs(p, params, seed)
        got = padded_agree(kernel, p, inputs, params, 8, f"interp E=20 pad 8 in pieces, seed {seed}")
        assert got is not None
        assert same_doubles(whole(got["v"], (24, 8, 8, 8)), padded_store(p, inputs, params, 8, "v"))
    assert sorted(staged) == sorted([("u", 0, 8), ("u", 8, 16), ("u", 16, 20)] * 2)
    # A has no batch dimension: copied whole, once per call; u is never copied whole
    assert all(key[0] == "A" for key in getattr(kernel._pool, "cjit_padded", {}))


def wait_after(monkeypatch: pytest.MonkeyPatch, method: str, barrier: Any) -> None:
    """``CKernel.<method>`` (a copy into a buffer), then ``barrier.wait()``: every caller has made
    its copies before any C reads one."""
    real = getattr(cjit.CKernel, method)

    def then_wait(self: cjit.CKernel, *args: Any) -> Any:
        out = real(self, *args)
        barrier.wait()
        return out

    monkeypatch.setattr(cjit.CKernel, method, then_wait)


UNWRITTEN = """input alloc X : [3]
alloc U : [3]
output alloc Y : [3]
output alloc Z : [3]
Z = X
Y = U
"""


def test_an_unwritten_allocation_copied_out_keeps_its_zero_padding(small):
    # found by fuzzing (r23): U's padded store is (•, •, •, 0), and GCC 12 with AVX-512 (cjit's
    # -march=native on this machine) turned the loop copying it into Y into a memcpy, then folded
    # that into a broadcast of its first value: Y's padding came out NaN.  emit-c's pragma
    # no-tree-loop-distribute-patterns keeps the loop (the same C without it: all NaN)
    p = ct.parse(UNWRITTEN)
    kernel = padded_c(p, {}, 4)
    x = {"X": np.array([1.0, 2.0, 3.0])}
    got = padded_agree(kernel, p, x, {}, 4, "Y = U with U never written, pad 4")
    assert got is not None
    assert same_doubles(whole(got["Y"], (4,)), padded_store(p, x, {}, 4, "Y"))


@pytest.mark.parametrize(("lo", "hi", "rows", "pad", "want"), [
    (0, 20, 1, 8, [(0, 8), (8, 16), (16, 20)]), (0, 20, 17, 8, [(0, 16), (16, 20)]),
    (16, 20, 100, 8, [(16, 20)]), (0, 7, 3, None, [(0, 3), (3, 6), (6, 7)]), (8, 8, 4, 4, [])])
def test_pieces_are_cut_at_multiples_of_the_pad(lo, hi, rows, pad, want):
    assert cjit._pieces(lo, hi, rows, pad) == want


def padded_c(p: ct.Program, params: dict[str, int], pad: int) -> native.Kernel:
    """``p`` compiled with ``pad``, running emit-c's padded C."""
    kernel = ct.compile(p, params, pad)
    assert uses_c(kernel)
    return kernel


def test_a_padded_run_meeting_inf_is_judged_by_the_unpadded_one(small):
    # inf · 0 in the padding is NaN where the unpadded run has a number: refused, as by the plan
    p = ct.load(str(ROOT / "examples" / "interp.teil"))
    params = {"E": 3, "m": 3, "n": 3}
    kernel = padded_c(p, params, 4)
    inputs = random_inputs(p, params, 0)
    inputs["A"][0, 0] = np.inf
    with pytest.raises(ct.TeilError, match="Theorem 3"):
        ct.evaluate(p, inputs, params, 4)
    with pytest.raises(ct.TeilError, match="Theorem 3"):
        kernel(**inputs)


CHAIN = """lang full
param n
input alloc A : [n, n]
input alloc B : [n, n]
output alloc T1 : [n, n]
output alloc T2 : [n, n]
alloc T3 : [n, n]
output alloc T4 : [n, n]
T1 = contr 2 3 (prod A B)
T2 = contr 2 3 (prod T1 B)
T3 = contr 2 3 (prod T2 B)
T4 = contr 2 3 (prod T3 B)
"""


def chain_inputs() -> dict[str, np.ndarray]:
    """For :data:`CHAIN`: T1 ~ 1e260 is finite, T2 overflows to inf."""
    rng = np.random.default_rng(5)
    return {"A": np.abs(rng.standard_normal((3, 3))) * 1e200 + 1.0,
            "B": np.abs(rng.standard_normal((3, 3))) * 1e60 + 1.0}


def test_an_overflow_in_a_result_the_c_keeps_is_bounded_through_the_statements_before(small):
    # T1 ~ 3e260 is finite, T2 overflows to inf; T3's padding is then inf · 0 = NaN, which T4 sums
    # into its values: NaN where the unpadded run has inf.  T1 and T2 are outputs, so the plan
    # keeps them as statements that T2 and T4 read (elsewhere it substitutes them away): only
    # T1's bound (its values stay inside the C) says T2 may overflow, and bounding T1 by 1
    # would let NaN through
    p = ct.parse(CHAIN)
    params = {"n": 3}
    kernel = padded_c(p, params, 4)
    inputs = chain_inputs()
    assert np.isinf(ct.evaluate(p, inputs, params)["T4"]).all()
    with pytest.raises(ct.TeilError, match="Theorem 3"):
        kernel(**inputs)


def test_a_quotient_by_a_result_the_c_keeps_is_not_bounded():
    # T2 = A / T1 with T1 = B + B kept by the plan (an output): T1's least non-zero magnitude is
    # not known without its values, so no bound holds for T2 (1e300 / 2e-320 = inf)
    text = ("lang full\nparam n\ninput alloc A : [n]\ninput alloc B : [n]\noutput alloc T1 : [n]\n"
            "output alloc T2 : [n]\nT1 = add B B\nT2 = div A T1\n")
    kernel = native.compile(ct.parse(text), {"n": 3}, 4)
    (c,) = kernel._compiled.values()
    assert len(c.plan.stmts) == 2
    for a, b, bounded in ((1.0, 1.0, False), (1e300, 1e-320, False)):
        assert native._bounded_throughout(c, {"A": np.full(3, a), "B": np.full(3, b)}) is bounded
    # and without a quotient by it, a kept result is bounded by its statement's bound
    chain = native.compile(ct.parse(CHAIN), {"n": 3}, 4)
    (c,) = chain._compiled.values()
    assert native._bounded_throughout(c, {"A": np.ones((3, 3)), "B": np.ones((3, 3))}) is True
    assert native._bounded_throughout(c, {"A": np.full((3, 3), 1e200), "B": np.full((3, 3), 1e60)}) is False


def test_an_input_in_the_padded_layout_is_used_in_place(small):
    # u : [E, n, n, n] = [4, 4, 4, 4] has extents that are multiples of the pad: it is the padded
    # layout itself; A : [m, n] = [3, 4] is copied into a padded buffer (0 in its padding)
    p = ct.load(str(ROOT / "examples" / "interp.teil"))
    params = {"E": 4, "m": 3, "n": 4}
    kernel = padded_c(p, params, 4)
    inputs = random_inputs(p, params, 0)
    padded_agree(kernel, p, inputs, params, 4, "interp pad 4")
    assert set(kernel._pool.cjit_padded) == {("A", (3, 4), (4, 4))}
    # another declared shape with the same padded one (m = 2): a buffer of its own, else A's
    # third row, written by the call above, would be the other's padding
    other = ct.compile(p, {"E": 4, "m": 2, "n": 4}, 4)
    other._pool = kernel._pool
    padded_agree(other, p, random_inputs(p, {"E": 4, "m": 2, "n": 4}, 1, specials=False),
                 {"E": 4, "m": 2, "n": 4}, 4, "interp m=2 pad 4, after m=3")
    assert ("A", (2, 4), (4, 4)) in kernel._pool.cjit_padded


@pytest.mark.parametrize(("extent", "teams", "pad", "want"), [
    (20, 2, None, [(0, 10), (10, 20)]), (20, 2, 8, [(0, 16), (16, 20)]), (5, 2, 8, [(0, 5)]),
    (17, 3, 8, [(0, 8), (8, 16), (16, 17)]), (24, 3, 8, [(0, 8), (8, 16), (16, 24)]), (1, 2, None, [(0, 1)])])
def test_chunks_cut_at_multiples_of_the_pad(extent, teams, pad, want):
    assert cjit._chunks(extent, teams, pad) == want


# --------------------------------------------------------------------------
# Fallback without a compiler
# --------------------------------------------------------------------------


def test_without_a_compiler_the_plan_runs(small, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no cc, no gcc
    monkeypatch.delenv("CC", raising=False)
    p = ct.load(str(ROOT / "examples" / "helm.teil"))
    params = {"E": 2, "n": 3}
    kernel = ct.compile(p, params)
    assert cjit.why_not(kernel) == "no C compiler on the PATH"
    inputs = random_inputs(p, params, 4, specials=True)
    assert_bits(kernel(**inputs), ct.evaluate(p, inputs, params), "helm without cc")


def test_a_compiler_that_fails_leaves_the_plan(small, monkeypatch, tmp_path):
    fake = tmp_path / "badcc"
    fake.write_text("#!/bin/sh\necho 'error: no' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    p = ct.load(str(ROOT / "examples" / "helm.teil"))
    kernel = ct.compile(p, {"E": 2, "n": 3})
    assert cjit.why_not(kernel) == f"{fake} failed: error: no"


# --------------------------------------------------------------------------
# The cache: damaged entries, concurrent processes
# --------------------------------------------------------------------------

#: A child process: compile helm (E=2, n=3) with C, run it, report.
CHILD = """
import json, sys, numpy as np, core_teil as ct
from core_teil.native import cjit
cjit.MIN_WORK = 0
p = ct.load(sys.argv[1])
k = ct.compile(p, {"E": 2, "n": 3})
rng = np.random.default_rng(0)
ins = {"S": rng.standard_normal((3, 3)), "D": rng.standard_normal((3, 3, 3)), "u": rng.standard_normal((2, 3, 3, 3))}
same = bool(np.array_equal(k(**ins)["v"], ct.evaluate(p, ins, {"E": 2, "n": 3})["v"]))
c = next(iter(k._compiled.values())).cjit
print(json.dumps({"why_not": cjit.why_not(k), "same": same, "path": str(getattr(c, "path", ""))}))
"""


def child(directory: Path, cc: str | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, cjit.ENV_DIR: str(directory)}
    env.pop(cjit.ENV_SWITCH, None)
    if cc is not None:
        env["CC"] = cc
    return subprocess.Popen([sys.executable, "-c", CHILD, str(ROOT / "examples" / "helm.teil")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def report(proc: subprocess.Popen[str]) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out)


@pytest.mark.parametrize("damage", ["truncated", "appended"])
def test_a_damaged_cache_entry_is_rebuilt_not_loaded(tmp_path, damage):
    first = report(child(tmp_path))
    assert first["why_not"] is None and first["same"]
    lib = Path(first["path"])
    data = lib.read_bytes()
    # a partial file (a crash mid-copy) or one with bytes added: neither matches its name's digest
    lib.write_bytes(data[: len(data) // 2] if damage == "truncated" else data + b"\0garbage")
    second = report(child(tmp_path))
    assert second["why_not"] is None and second["same"]
    assert second["path"] == first["path"] and lib.read_bytes() == data  # compiled again, whole
    assert [p.name for p in tmp_path.iterdir()] == [lib.name]


def test_two_processes_compiling_the_same_kernel_at_once(tmp_path):
    # a compiler that waits, so that both processes are compiling at the same time
    slow = tmp_path / "slowcc"
    slow.write_text(f"#!/bin/sh\nsleep 1\nexec {CC} \"$@\"\n")
    slow.chmod(0o755)
    cache = tmp_path / "cache"
    procs = [child(cache, str(slow)) for _ in range(2)]
    results = [report(p) for p in procs]
    assert all(r["why_not"] is None and r["same"] for r in results), results
    assert results[0]["path"] == results[1]["path"]
    left = sorted(p.name for p in cache.iterdir())
    assert left == [Path(results[0]["path"]).name]  # one library, no build directory left behind
    assert cjit.Entry(left[0].split(".")[0], cache / left[0]).intact()


def test_a_library_appears_in_the_cache_by_one_rename(monkeypatch, tmp_path):
    # what makes concurrent processes safe, shown without a race: the library is compiled in a
    # private directory and enters the cache by os.replace (atomic), never written there in place
    monkeypatch.setenv(cjit.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(cjit, "MIN_WORK", 0)
    renames: list[tuple[Path, Path]] = []
    real = os.replace

    def spy(src, dst):
        assert not Path(dst).exists()
        renames.append((Path(src), Path(dst)))
        real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    kernel = ct.compile(ct.load(str(ROOT / "examples" / "axpy.teil")), {"n": 3})
    assert uses_c(kernel)
    [(src, dst)] = renames
    assert src.parent.parent == tmp_path and src.parent.name.startswith(".build-")
    assert [p.name for p in tmp_path.iterdir()] == [dst.name]
    assert dst == next(iter(kernel._compiled.values())).cjit.path


def test_an_emitter_failure_never_fails_the_compile(small, monkeypatch):
    from core_teil.native import emit_c

    def broken(*args, **kwargs):
        raise RuntimeError("emitter bug")

    monkeypatch.setattr(emit_c, "emit_c", broken)
    p = ct.load(str(ROOT / "examples" / "helm.teil"))
    kernel = ct.compile(p, {"E": 2, "n": 3})
    assert cjit.why_not(kernel) == "RuntimeError: emitter bug"
    inputs = random_inputs(p, {"E": 2, "n": 3}, 8, specials=False)
    assert_bits(kernel(**inputs), ct.evaluate(p, inputs, {"E": 2, "n": 3}), "helm, plan")


def test_threads_sharing_a_compiled_kernel(small):
    # each thread has its own workspace (the kernel's per-element blocks live there); ctypes
    # releases the GIL, so the calls do overlap
    from concurrent.futures import ThreadPoolExecutor

    p = ct.load(str(ROOT / "examples" / "helm.teil"))
    params = {"E": 400, "n": 5}
    kernel = ct.compile(p, params)
    assert uses_c(kernel)
    cases = [random_inputs(p, params, 20 + i, specials=False) for i in range(4)]
    want = [ct.evaluate(p, x, params)["v"] for x in cases]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda i: [kernel(**cases[i % 4])["v"] for _ in range(20)], range(8)))
    for i, runs in enumerate(got):
        assert all(np.array_equal(g, want[i % 4], equal_nan=True) for g in runs), i


def test_emit_c_takes_a_given_certificate_only_for_its_own_program():
    # the hook cjit uses (emit_c.certify's ``given``): the engine's report stands in for a proof
    # only when it is ok and is for the same program text, parameters and pad
    from core_teil.native import emit_c

    good = ct.load(str(ROOT / "examples" / "tvm_transposed_matmul.teil"))
    bad = ct.load(str(ROOT / "examples" / "tvm_fig3a_bad.teil"))
    params = {"m": 2, "n": 3, "h": 4}
    good_params = {q: params.get(q, 2) for q in good.params}
    report = native.certify(good, good_params, None)
    assert emit_c.certify(good, good_params, None, report) is report
    with pytest.raises(emit_c.EmitRefused):
        emit_c.certify(bad, params, None, report)
    refuted = ct.prove(bad, params)
    assert not refuted.ok
    with pytest.raises(emit_c.EmitRefused):
        emit_c.certify(bad, params, None, refuted)  # a report is a certificate only when ok
    other = {q: v + 1 for q, v in good_params.items()}
    assert emit_c.certify(good, other, None, report) is not report
    assert emit_c.certify(good, good_params, 4, report) is not report


ASSUMED = ("lang full\nparam E, n\nassume E >= 2\ninput alloc A : [E, n]\noutput alloc B : [E, n]\n"
           "B = add A (mul A A)\n")


def test_an_assume_on_the_batch_parameter_keeps_the_plan_on_several_threads(team):
    # `assume E >= 2`: E = 3 over 2 threads makes a chunk of 1, which the C would refuse (EPARAM),
    # leaving the call to the plan while why_not said the C runs (fuzzing, r23): no chunks, and why
    p = ct.parse(ASSUMED)
    kernel = ct.compile(p, {"E": 3, "n": 4})
    assert cjit.why_not(kernel) == "an assume on the batch parameter E: a chunk of it could break it"
    A = np.arange(12.0).reshape(3, 4)
    out = np.full((3, 4), 99.0)
    kernel(out={"B": out}, A=A)
    assert np.array_equal(out, A + A * A)


def test_an_assume_on_the_batch_parameter_keeps_a_padded_run_in_one_piece(small):
    # one thread, pad 8, E = 9: a staged piece of 1 (8-9) would break `E >= 2`; the C is emitted
    # for the whole E instead, and its input copied whole
    p = ct.parse(ASSUMED)
    kernel = padded_c(p, {"E": 9, "n": 4}, 8)
    (c,) = kernel._compiled.values()
    assert c.cjit.batch is None
    calls = []
    real = cjit.CKernel._call
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cjit.CKernel, "_call", lambda self, *a: calls.append(real(self, *a)) or calls[-1])
        padded_agree(kernel, p, {"A": np.linspace(-2.0, 2.0, 36).reshape(9, 4)}, {"E": 9, "n": 4}, 8,
                     "assume E >= 2, pad 8")
    assert calls == [0]  # the C ran, once, and said yes


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_runs_the_chunks_on_its_own_threads(team):
    # the pool's threads do not survive fork: the child must not wait on its parent's pool
    import multiprocessing

    p = ct.load(str(ROOT / "examples" / "interp.teil"))
    params = {"E": 6, "m": 2, "n": 3}
    kernel = ct.compile(p, params)
    assert uses_c(kernel) and next(iter(kernel._compiled.values())).cjit.batch is not None
    inputs = random_inputs(p, params, 3, specials=False)
    want = ct.evaluate(p, inputs, params)["v"]
    assert np.array_equal(kernel(**inputs)["v"], want)  # the parent's pool exists now
    _FORKED["kernel"] = kernel  # a kernel is not picklable: the child inherits it
    _FORKED["pool"] = cjit._executor(2)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        got, inherited = pool.apply_async(_run_in_child, (inputs,)).get(timeout=60)
    assert np.array_equal(got, want)
    assert not inherited  # whether waiting on a dead pool hangs depends on timing; this does not


_FORKED: dict[str, Any] = {}


def _run_in_child(inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, bool]:
    return _FORKED["kernel"](**inputs)["v"], cjit._executor(2) is _FORKED["pool"]



def test_a_pad_that_rounds_no_extent_up_runs_unchecked(small, monkeypatch):
    # interp with E, m, n multiples of 4: no padding exists, so the padded run is the unpadded
    # one, inf and all; nothing bounds the inputs before it or compares after it.  m = n = 3 make
    # a padding: then the bound is taken, and inf is refused as Theorem 3 says (as above)
    p = ct.load(str(ROOT / "examples" / "interp.teil"))
    params = {"E": 4, "m": 4, "n": 8}
    assert not native.rounds_up(check_program(p, params), 4)
    kernel = padded_c(p, params, 4)
    bounded, compared = [], []
    real_bound, real_agree = native._bounded_throughout, native.padding_agrees
    monkeypatch.setattr(native, "_bounded_throughout", lambda *a: bounded.append(1) or real_bound(*a))
    monkeypatch.setattr(native, "padding_agrees", lambda *a: compared.append(1) or real_agree(*a))
    inputs = random_inputs(p, params, 0)
    inputs["A"][0, 0] = np.inf
    got = kernel(**inputs)
    assert not bounded and not compared
    want = ct.evaluate(p, inputs, params)
    assert np.array_equal(got["v"], want["v"], equal_nan=True)
    assert np.array_equal(got["v"], ct.evaluate(p, inputs, params, 4)["v"], equal_nan=True)
    three = {"E": 4, "m": 3, "n": 3}
    assert native.rounds_up(check_program(p, three), 4) and not native.rounds_up(check_program(p, three), None)
    assert native.rounds_up(check_program(p, {"E": 5, "m": 4, "n": 8}), 4)
    other = padded_c(p, three, 4)
    x = random_inputs(p, three, 0)
    x["A"][0, 0] = np.inf
    with pytest.raises(ct.TeilError, match="Theorem 3"):
        other(**x)
    assert bounded and compared


@pytest.mark.parametrize(("extent", "pad", "cuts"), [(20, None, 8), (5, None, 5), (37, 8, 5), (5, 8, 1)])
def test_several_threads_take_several_chunks_each(team, monkeypatch, extent, pad, cuts):
    # CHUNKS_PER_THREAD runs per thread, handed out as threads finish (a core shared with another
    # pool's thread held a one-chunk-per-thread run back), at most one per batch index, padded at
    # multiples of the pad (ceil_8(37) = 40: 5 cuts); the same bits as ct.evaluate
    p = ct.load(str(ROOT / "examples" / "interp.teil"))
    params = {"E": extent, "m": 2, "n": 3}
    seen: list[list[tuple[int, int]]] = []
    real = cjit._chunks
    monkeypatch.setattr(cjit, "_chunks", lambda *a: seen.append(real(*a)) or seen[-1])
    kernel = ct.compile(p, params, pad)
    assert uses_c(kernel)
    inputs = random_inputs(p, params, 0)
    assert_bits(kernel(**inputs), ct.evaluate(p, inputs, params, pad), f"interp E={extent} pad {pad}")
    assert cjit.CHUNKS_PER_THREAD == 4 and [len(b) for b in seen] == [cuts]


def test_importing_core_teil_first_shortens_openblas_polling() -> None:
    # OpenBLAS reads OPENBLAS_THREAD_TIMEOUT when it loads: core_teil sets it (unless the user
    # did) before anything imports numpy; as OMP_WAIT_POLICY
    import os
    import subprocess
    import sys

    code = "import os, core_teil; print(os.environ['OPENBLAS_THREAD_TIMEOUT'], os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_THREAD_TIMEOUT", "OMP_WAIT_POLICY")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["20", "PASSIVE"]
    env["OPENBLAS_THREAD_TIMEOUT"] = "25"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "25"
