"""Mutation review of the fuzzing r23 fixes (f7eca17, 0224c82, 51260a0, 83da61e).

Each test kills a mutant that the commits' own tests let survive: the `assume` rule of
``cjit.prepare`` reading only an assume's left side, or disabling chunks for an assume on another
parameter; the run's ``check_memory`` counting unpadded extents, inputs only, or ``extent * pad``,
or losing the "(padded to multiples of M)" of its message (51260a0 checked it at compile time,
which kept :meth:`Kernel.blockwise` from a kernel compiled for an extent too large to hold); ``human_bytes``'
threshold off by 1024 or at ``>``; and the bench's padded floor keyed on the unpadded kernel.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import core_teil as ct
from core_teil.native import cjit
from core_teil.native import engine as native
from core_teil.semantics import inputs
from core_teil.semantics.inputs import human_bytes
from tests.test_bad_inputs import MATMUL
from tests.test_bench_hand import _tiny
from tests.test_cjit import cache, small, team  # noqa: F401 (the fixtures)
from tests.test_cjit_review import no_plan

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine")


def assumed(cond: str) -> ct.Program:
    """The commit's test program (`B = A + A*A` over [E, n]) with ``cond`` as its assume."""
    return ct.parse(f"lang full\nparam E, n\nassume {cond}\ninput alloc A : [E, n]\noutput alloc B : [E, n]\n"
                    "B = add A (mul A A)\n")


@needs_cc
@pytest.mark.usefixtures("team")  # two threads, every call large enough for them
def test_an_assume_with_the_batch_parameter_on_its_right_side_keeps_the_plan() -> None:
    # `2 <= E` is `E >= 2` written the other way round: a chunk of 1 breaks it all the same.
    # Kills `assumed` built from the lhs only (the commit's tests write E on the left).
    p = assumed("2 <= E")
    kernel = ct.compile(p, {"E": 3, "n": 4})
    assert cjit.why_not(kernel) == "an assume on the batch parameter E: a chunk of it could break it"
    A = np.arange(12.0).reshape(3, 4)
    assert np.array_equal(kernel(A=A)["B"], A + A * A)


@needs_cc
@pytest.mark.usefixtures("team")
def test_an_assume_on_another_parameter_keeps_the_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    # `n >= 2` holds in every chunk of E (a chunk keeps n): the C still runs in chunks, and the plan
    # never. Kills a rule that disables chunks for any assume (or for every parameter).
    p = assumed("n >= 2")
    kernel = ct.compile(p, {"E": 3, "n": 4})
    assert cjit.why_not(kernel) is None
    (c,) = kernel._compiled.values()
    assert c.cjit.batch is not None
    no_plan(monkeypatch)
    A = np.linspace(-2.0, 2.0, 12).reshape(3, 4)
    assert np.array_equal(kernel(A=A)["B"], A + A * A)


PADDED_BYTES = 3 * 4 * 4 * 8  # matmul l=2, m=3, n=2 at pad 4: A, B and C each [4, 4] doubles


def test_a_run_checks_every_allocation_at_its_padded_extents(monkeypatch: pytest.MonkeyPatch) -> None:
    # The μ_allocs check counts each allocation (output C too) at its extents rounded up to the pad:
    # a budget of exactly their bytes runs, one byte less is refused at C, the last allocation, with
    # the pad named, when the kernel is called (ct.compile addresses, it does not hold: review r24).
    # Kills the check on unpadded extents (128 bytes), on inputs only (C not counted), on
    # extent * pad (2048 bytes), without the pad in the message, and no check at all.
    params = {"l": 2, "m": 3, "n": 2}
    p = ct.load(str(MATMUL))
    monkeypatch.setattr(inputs, "memory_budget", lambda: PADDED_BYTES)
    A, B = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2)
    assert np.array_equal(native.compile(p, params, 4)(A=A, B=B)["C"], A @ B)
    monkeypatch.setattr(inputs, "memory_budget", lambda: PADDED_BYTES - 1)
    kernel = native.compile(p, params, 4)
    with pytest.raises(ct.TeilResourceError, match=r"μ_allocs.*allocation C : \[4, 4\] \(padded to multiples of 4\)"):
        kernel(A=A, B=B)


def test_a_kernel_compiled_for_an_extent_too_large_to_hold_runs_blockwise(monkeypatch: pytest.MonkeyPatch) -> None:
    # review r24: the compile-time μ_allocs check of 51260a0 refused ct.compile(interp, E=10000) under
    # a budget that E = 10000 does not fit, which Kernel.blockwise exists to run in chunks of E
    da = pytest.importorskip("dask.array")
    monkeypatch.setattr(inputs, "memory_budget", lambda: 1 << 20)
    p = ct.load(str(MATMUL.parent / "interp.teil"))
    A, u = np.linspace(-1.0, 1.0, 6).reshape(2, 3), np.linspace(-1.0, 1.0, 10000 * 27).reshape(10000, 3, 3, 3)
    kernel = ct.compile(p, {"E": 10000, "m": 2, "n": 3})
    got = kernel.blockwise(500, A=A, u=da.from_array(u, chunks=(500, 3, 3, 3)))["v"].compute()
    assert np.allclose(got, np.einsum("il,jm,kn,elmn->eijk", A, A, A, u))
    with pytest.raises(ct.TeilResourceError, match="μ_allocs"):
        kernel(A=A, u=u)  # the whole run is refused, at the call


def test_human_bytes_says_over_1024_eib_from_1024_eib_on() -> None:
    # below 1024 EiB the count is in EiB (a float holds it); from 1024**7 on it is "over 1024 EiB".
    # Kills the threshold at 1024**6 or 1024**8 and the comparison `>` for `>=`.
    assert human_bytes(2 * 1024**6) == "2.0 EiB"
    assert human_bytes(1023 * 1024**6) == "1023.0 EiB"
    assert human_bytes(1024**7) == "over 1024 EiB"
    assert human_bytes(10**400) == "over 1024 EiB"


@needs_cc
@pytest.mark.usefixtures("small")  # a private cache, the C switched on
def test_the_padded_floor_follows_the_padded_kernel_not_the_unpadded_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # tiny interp: unpadded 342 innermost iterations, below MIN_WORK (the plan runs), padded at 8
    # 98304 (emit-c's C runs): the padded floor is given. Kills `why_not(kern)` for `why_not(kpad)`.
    import bench

    monkeypatch.setattr(cjit, "MIN_WORK", 1 << 16)
    monkeypatch.setattr(native._native, "openmp_threads", lambda: 1)
    monkeypatch.setattr(bench, "REPEAT", 1)
    monkeypatch.setattr(bench, "BUDGET_S", 0.0)
    k = _tiny(None)
    program = ct.load(str(bench.ROOT / k.path))
    assert cjit.why_not(native.compile(program, k.params)) is not None
    assert cjit.why_not(native.compile(program, k.params, bench.PAD)) is None
    row = bench.run_kernel(k, np.random.default_rng(0), None, bench.Floor(10.0, 50.0, 1, "test"))
    assert "pad floor_ms" in row.extra
