"""Review of the staged padded inputs of ``cjit`` (commit 2fca9ad): ``CKernel._stage``, ``_pieces``,
:data:`cjit.STAGE_BYTES` and the one-thread batch of ``cjit.prepare``.

Each test kills a mutant of that commit which ``tests/test_cjit.py`` and the earlier reviews let
survive, or killed only through another test's leftovers in the process-wide pool threads:
the stage buffer's key (name, declared row, padded row) and its capacity check, inputs in the
padded layout read in place, the one-thread batch only for a pad that rounds something up, the
size of a piece (about 2 MiB: bounded memory), and the one-thread stage buffers being the
kernel's.  Every run is compared with ``ct.evaluate(..., pad)`` bit for bit, the whole padded
array behind each returned view included.  Two defects it found, since fixed: the stage buffers
of the pool threads outlived their kernel (one per name and row shapes, for ever, in a
process-wide workspace), and a padded plan too small for the team was run on it all the same.
"""

from __future__ import annotations

import gc
import shutil
import weakref
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from core_teil.lang.shapes import round_up
from core_teil.native import cjit
from core_teil.native import engine as native
from tests.test_cjit import padded_agree, padded_store, random_inputs, whole
from tests.test_cjit_review import cache, load, no_plan, same_doubles, small, the_c, threads  # noqa: F401 (the fixtures)

# C for every plan, however small, on one thread unless a test says otherwise, into a private cache
pytestmark = [pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine"),
              pytest.mark.usefixtures("small")]


def agree_whole(kernel: native.Kernel, p: ct.Program, inputs: dict[str, np.ndarray], params: dict[str, int],
                pad: int, what: str) -> None:
    """ct.evaluate(pad)'s results, and behind every view the reference's whole padded array."""
    got = padded_agree(kernel, p, inputs, params, pad, what)
    assert got is not None, f"{what}: refused (a test of the padding needs finite results)"
    padded = the_c(kernel).padded
    assert padded is not None
    for name, view in got.items():
        assert same_doubles(whole(view, padded[name]), padded_store(p, inputs, params, pad, name)), \
            f"{what}: the padded {name} behind the view differs from the reference's padded store"


@pytest.fixture
def one_pool_thread(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Two teams whose pieces all run, in order, on one fresh pool thread, deterministically (the
    stage buffers were once the pool thread's, shared by every kernel; they are each kernel's now)."""
    threads(monkeypatch, 2)
    pool = ThreadPoolExecutor(1, thread_name_prefix="stage-review")
    monkeypatch.setattr(cjit, "_executor", lambda teams: pool)
    yield
    pool.shutdown(wait=True)


def test_kernels_on_one_pool_thread_stage_into_buffers_of_their_own_row_shapes(one_pool_thread):
    # mutants of _stage's key and capacity check, which tests/test_cjit.py kills only through other
    # tests' leftovers in the real pool threads (and not when run alone):
    # - key without the declared row: interp n=4's full rows (NaN where n=3's padding is) are
    #   handed to interp n=3 with the same padded row (4, 4, 4): NaN · 0 makes every v NaN;
    # - key without the padded row: pad 8's (R, 8, 8, 8) buffer is read by pad 4's C as (4, 4, 4) rows;
    # - no capacity check: E=3's 4-row buffer is reused for E=20's 12-row chunk.
    p = load("interp.teil")
    runs = [({"E": 20, "m": 3, "n": 3}, 8), ({"E": 5, "m": 4, "n": 4}, 4),
            ({"E": 3, "m": 3, "n": 3}, 4), ({"E": 20, "m": 3, "n": 3}, 4)]
    for seed, (params, pad) in enumerate(runs):
        kernel = ct.compile(p, params, pad)
        assert the_c(kernel).batch is not None
        inputs = random_inputs(p, params, 40 + seed)
        if params["n"] == 4:
            inputs["u"][:, 3, 3, 3] = np.nan  # declared here, the padding of n = 3's rows
        agree_whole(kernel, p, inputs, params, pad, f"interp {params} pad {pad} on one pool thread")


UNQUALIFIED = """lang full
param E, n
alloc U : [E, n, n]
alloc C : [E, n, n]
alloc V : [E, n, n]
V = mul U U
"""


@pytest.mark.parametrize("nthreads", [1, 2, 3])
def test_rank_1_short_and_unsupplied_batched_inputs_in_pieces(monkeypatch, nthreads):
    # axpy's x and y are rank-1 and of one shape (two buffers, one per name); an unqualified
    # program's C and V are optional batched inputs (NULL: • in the region, 0 in the padding),
    # staged when supplied; E = 2 is shorter than the pad, E = 10 not a multiple of it
    threads(monkeypatch, nthreads)
    monkeypatch.setattr(cjit, "STAGE_BYTES", 1)  # pieces of one pad's rows
    axpy = load("axpy.teil")
    kernel = ct.compile(axpy, {"n": 10}, 4)
    assert the_c(kernel).batch is not None
    rng = np.random.default_rng(50)
    agree_whole(kernel, axpy, {"a": np.array(-1.5), "x": rng.standard_normal(10), "y": rng.standard_normal(10)},
                {"n": 10}, 4, f"axpy n=10 pad 4 on {nthreads} threads")
    p = ct.parse(UNQUALIFIED)
    for e in (2, 10):
        params = {"E": e, "n": 3}
        kernel = ct.compile(p, params, 4)
        ck = the_c(kernel)
        assert ck.batch is not None and dict(ck.inputs) == {"U": True, "C": False, "V": False}
        u, c = rng.standard_normal((e, 3, 3)), rng.standard_normal((e, 3, 3))
        for given in ({"U": u}, {"U": u, "C": c}, {"U": u, "C": c, "V": -c}):
            agree_whole(kernel, p, given, params, 4, f"E={e} given {sorted(given)} on {nthreads} threads")


def test_a_batched_input_in_the_padded_layout_is_read_in_place_not_staged(monkeypatch):
    # mutant: inputs in the padded layout staged too (the same doubles, copied for nothing).  u :
    # [8, 4, 4, 4] is the padded layout; m = 3 rounds A and v up, so the plan has its batch
    p = load("interp.teil")
    params = {"E": 8, "m": 3, "n": 4}
    kernel = ct.compile(p, params, 4)
    assert the_c(kernel).batch is not None
    staged: list[str] = []
    real = cjit.CKernel._stage
    monkeypatch.setattr(cjit.CKernel, "_stage", lambda self, name, a, lo, hi, pad, ws:
                        staged.append(name) or real(self, name, a, lo, hi, pad, ws))
    no_plan(monkeypatch)
    agree_whole(kernel, p, random_inputs(p, params, 51), params, 4, "interp, u in the padded layout")
    assert staged == []


def test_a_pad_that_rounds_nothing_runs_the_c_of_fixed_extents_on_one_thread():
    # mutant: staged = pad is not None (compiled.rounded ignored): a padded plan whose extents are
    # all multiples of the pad has no input to stage, and would lose the fixed-extent C (the
    # engine's proof as its certificate, the extents constants) for a symbolic batch
    p = load("interp.teil")
    params = {"E": 8, "m": 4, "n": 4}
    kernel = ct.compile(p, params, 4)
    assert the_c(kernel).batch is None
    agree_whole(kernel, p, random_inputs(p, params, 52), params, 4, "interp, a pad that rounds nothing")


def test_pieces_are_about_stage_bytes_of_padded_rows(monkeypatch):
    # mutants: STAGE_BYTES huge (the whole padded input staged at once: memory as large as the
    # input, the measured 30 % slower) or tiny (a pad's rows a piece).  interp n=7 pad 8: a padded
    # row of u is 4 KiB, so 2 MiB is 512 rows of E = 1500; the results are the one-piece run's
    p = load("interp.teil")
    params = {"E": 1500, "m": 7, "n": 7}
    kernel = ct.compile(p, params, 8)
    assert the_c(kernel).batch is not None
    row = 8 * 8 ** 3
    pieces: list[tuple[int, int, int]] = []
    real = cjit.CKernel._stage

    def recorded(self: cjit.CKernel, name: str, a: np.ndarray, lo: int, hi: int, pad: int, ws: Any) -> np.ndarray:
        buf = real(self, name, a, lo, hi, pad, ws)
        pieces.append((lo, hi, buf.nbytes))
        return buf

    monkeypatch.setattr(cjit.CKernel, "_stage", recorded)
    inputs = random_inputs(p, params, 53)
    got = kernel(**inputs)["v"].copy()
    assert len(pieces) >= 2 and pieces[0][0] == 0 and pieces[-1][1] == 1500, pieces
    for lo, hi, nbytes in pieces:
        assert round_up(hi - lo, 8) * row <= 4 << 20 and nbytes <= 4 << 20, pieces  # bounded memory
    assert all((hi - lo) * row >= 1 << 19 for lo, hi, _ in pieces[:-1]), pieces  # not a pad's rows
    monkeypatch.setattr(cjit, "STAGE_BYTES", 1 << 40)
    assert same_doubles(kernel(**inputs)["v"], got)


def staged_buffers(kernel: native.Kernel, p: ct.Program, params: dict[str, int], pad: int,
                   monkeypatch: pytest.MonkeyPatch) -> list[weakref.ref]:
    """Weak references to the buffers a run of ``kernel`` staged its pieces in."""
    refs: list[weakref.ref] = []
    real = cjit.CKernel._stage

    def recorded(self: cjit.CKernel, name: str, a: np.ndarray, lo: int, hi: int, pad: int, ws: Any) -> np.ndarray:
        buf = real(self, name, a, lo, hi, pad, ws)
        refs.append(weakref.ref(buf))
        return buf

    monkeypatch.setattr(cjit.CKernel, "_stage", recorded)
    assert padded_agree(kernel, p, random_inputs(p, params, 54), params, pad, "staged run") is not None
    monkeypatch.setattr(cjit.CKernel, "_stage", real)
    assert refs
    return refs


@pytest.mark.parametrize("nthreads", [1, 2])
def test_stage_buffers_are_the_kernels_and_go_with_it(monkeypatch, nthreads):
    # mutants: _stage given a process-wide thread-local workspace instead of the kernel's: the same
    # doubles, but on one thread every kernel's buffers stay in the caller's thread for as long as it
    # lives (the main thread: for ever), and on several, in the pool threads', keyed by name and row
    # shapes only, so a program compiled for many sizes left about 2 MiB per size in each of them
    if nthreads > 1:
        threads(monkeypatch, nthreads)
    monkeypatch.setattr(cjit, "STAGE_BYTES", 1)
    p = load("interp.teil")
    params = {"E": 10, "m": 3, "n": 3}
    kernel = ct.compile(p, params, 4)
    assert the_c(kernel).batch.single is (nthreads == 1)
    refs = staged_buffers(kernel, p, params, 4, monkeypatch)
    del kernel
    gc.collect()
    assert all(r() is None for r in refs), "a stage buffer outlived its kernel"


def test_a_padded_plan_too_small_for_the_team_stays_on_one_thread(monkeypatch):
    # two OpenMP threads, but every call of this plan is below planner.PARALLEL_MIN_WORK: the plan
    # runs on one thread (engine), and so do its staged pieces, not on the pool
    monkeypatch.setattr(native._native, "openmp_threads", lambda: 2)
    monkeypatch.setattr(cjit, "STAGE_BYTES", 1)
    p = load("interp.teil")
    params = {"E": 20, "m": 3, "n": 3}
    kernel = ct.compile(p, params, 4)
    batch = the_c(kernel).batch
    assert batch is not None and batch.single

    def no_pool(teams: int) -> Any:
        raise AssertionError(f"a pool of {teams} threads for a one-thread plan")

    monkeypatch.setattr(cjit, "_executor", no_pool)
    agree_whole(kernel, p, random_inputs(p, params, 60), params, 4, "interp E=20 pad 4, one thread of two")
