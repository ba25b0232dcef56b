"""Review r29 (a helper who did not write it) of the streamed GEMMs inside the team (d0c1906: ``core_teil.native.blas``,
``engine.Streamed``, ``_native.run_streamed``): what tests/test_blas_direct.py left open.

- the one-thread team (``_native.run_streamed``'s serial branch), taken where OpenBLAS is on
  one thread too, and the matmul loop where it is not;
- the pooled chunk buffers growing from one thread's row to the team's;
- OpenBLAS held to one thread while the team calls ``dgemm``;
- ``Streamed.of``'s refusals of views and calls that the planner does not hand it today
  (batched, another first dimension, scratch, strides that are not whole elements);
- ``quiet()`` at ``QUIET_SPIN`` itself, ``_spin``'s clamp, ``_bind``'s refusal of an LP64
  build, ``CORE_TEIL_NO_DIRECT_BLAS``;
- ``_native.run_streamed``'s own checks of its buffers and chunk (in a child process: without
  them it writes past the buffer or divides by zero).
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import core_teil as ct
from core_teil.native import _native, blas, engine, planner
from core_teil.native.engine import Streamed
from tests.test_blas_direct import _inputs as first_inputs

SPEC = "ikl,kj,lj->ij"  # streamed: A = B[i,k,l] (rows (i,k), contiguous l), 61 rows per element


def _lib() -> blas.OpenBLAS:
    lib = blas.library()
    if lib is None:
        pytest.skip("numpy's BLAS is not an ILP64 OpenBLAS")
    return lib


def _inputs(spec: str = SPEC, seed: int = 0) -> tuple[ct.Program, dict[str, np.ndarray]]:
    return first_inputs(spec, seed)


@pytest.fixture
def threads_restored() -> blas.OpenBLAS:
    lib = _lib()
    before = lib.get_threads()
    yield lib
    lib.set_threads(before)


@pytest.fixture
def chunks_of_3(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 3 batch elements (37 = 12·3 + 1), the direct path allowed by quiet()."""
    monkeypatch.setattr(planner, "STREAM_CHUNK_ELEMENTS", 3 * 61 * 45)
    monkeypatch.setattr(blas, "QUIET_SPIN", 30)


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """Every run_streamed call's (batch elements, chunk, OpenBLAS threads while it runs)."""
    calls: list[tuple[int, int, int]] = []
    real = _native.run_streamed

    def spy(table, slots, fixed, nbatch, chunk, nt, dgemm, terms, bufs):  # type: ignore[no-untyped-def]
        lib = blas.library()
        calls.append((nbatch, chunk, lib.get_threads() if lib is not None else -1))
        return real(table, slots, fixed, nbatch, chunk, nt, dgemm, terms, bufs)

    monkeypatch.setattr(_native, "run_streamed", spy)
    return calls


def _reference(p: ct.Program, arrays: dict[str, np.ndarray]) -> np.ndarray:
    (want,) = ct.evaluate(p, arrays).values()
    return want


# -- the path taken, and the serial branch ------------------------------------------------


#: per spec, the GEMM rows of batch element 36 (the short last chunk) from the three inputs
LAST_ROWS = {
    "ikl,kj,lj->ij": lambda b, c, d: b[36] @ d,        # T[i,k,j] = Σ_l B[i,k,l] D[l,j]
    "kil,kj,lj->ij": lambda b, c, d: b[:, 36, :].T @ c,  # T[i,l,j] = Σ_k B[k,i,l] C[k,j]
    "ikl,jk,jl->ij": lambda b, c, d: b[36] @ d.T,      # T[i,k,j] = Σ_l B[i,k,l] D[j,l]
}


@pytest.mark.parametrize("spec", sorted(LAST_ROWS))
def test_one_thread_team_takes_the_direct_path_only_beside_one_openblas_thread(
        spec: str, chunks_of_3: None, spied: list[tuple[int, int, int]], threads_restored: blas.OpenBLAS,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The serial branch's chunk buffer is the one row the engine pooled for one thread: after
    the run it holds the last chunk's GEMM rows."""
    lib = threads_restored
    monkeypatch.setattr(engine, "threads_for", lambda work: 1)
    p, arrays = _inputs(spec, seed=11)
    want = _reference(p, arrays)
    k = ct.compile(p, {})
    lib.set_threads(2)  # OpenBLAS on several threads, ours on one: numpy.matmul's loop
    (got,) = k(**arrays).values()
    assert spied == []
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    lib.set_threads(1)  # both on one: the team's serial branch, chunk by chunk
    (got,) = k(**arrays).values()
    assert spied == [(37, 3, 1)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert lib.get_threads() == 1
    (cc,) = [cc for calls in k._prepare({}).calls for cc in calls if cc.streamed is not None]
    bufs = k._thread_pool("temps")[(cc, "chunks")]
    assert bufs.shape[0] == 1
    last = LAST_ROWS[spec](*arrays.values()).ravel()
    np.testing.assert_allclose(bufs[0, :last.size], last, rtol=1e-12, atol=1e-12)


def test_pooled_chunk_buffers_grow_with_the_team(chunks_of_3: None, spied: list[tuple[int, int, int]],
                                                 threads_restored: blas.OpenBLAS,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """One thread's call pools one chunk buffer; the next call on the whole team needs one per
    thread (the same kernel, the same Python thread, the same pool)."""
    lib = threads_restored
    if _native.openmp_threads() < 2:
        pytest.skip("one OpenMP thread: the team never needs a second buffer")
    lib.set_threads(1)
    p, arrays = _inputs(seed=12)
    want = _reference(p, arrays)
    k = ct.compile(p, {})
    monkeypatch.setattr(engine, "threads_for", lambda work: 1)
    (one,) = k(**arrays).values()
    monkeypatch.setattr(engine, "threads_for", lambda work: 0)
    (team,) = k(**arrays).values()
    assert [c[:2] for c in spied] == [(37, 3), (37, 3)]
    np.testing.assert_allclose(one, want, rtol=1e-12, atol=1e-12)
    assert np.array_equal(one, team)


def test_openblas_is_on_one_thread_while_the_team_calls_it(chunks_of_3: None, spied: list[tuple[int, int, int]],
                                                          threads_restored: blas.OpenBLAS,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    lib = threads_restored
    if _native.openmp_threads() < 2:
        pytest.skip("one OpenMP thread: the team is no wider than OpenBLAS on one")
    monkeypatch.setattr(engine, "threads_for", lambda work: 0)
    lib.set_threads(2)
    p, arrays = _inputs(seed=13)
    (got,) = ct.compile(p, {})(**arrays).values()
    assert spied == [(37, 3, 1)]
    assert lib.get_threads() == 2
    np.testing.assert_allclose(got, _reference(p, arrays), rtol=1e-12, atol=1e-12)


# -- Streamed.of's refusals -----------------------------------------------------------------


def _streamed_call() -> tuple[planner.Call, engine.Gemm]:
    p, _ = _inputs()
    c = ct.compile(p, {})._prepare({})
    (cc,) = [cc for calls in c.calls for cc in calls if cc.streamed is not None]
    assert cc.gemm is not None
    return cc.call, cc.gemm


def test_streamed_of_accepts_the_planned_call() -> None:
    call, g = _streamed_call()
    st = Streamed.of(call, g)
    assert st is not None
    assert (st.transa, st.transb, st.mrow, st.n, st.k, st.astep, st.lda, st.ldb) == \
        (111, 111, 61, 45, 53, 61 * 53, 53, 45)
    assert st.width == call.chunk * 61 * 45


def test_streamed_of_refuses_a_batched_gemm() -> None:
    call, g = _streamed_call()
    assert Streamed.of(call, dataclasses.replace(g, nb=2)) is None


def test_streamed_of_refuses_chunks_that_are_not_the_first_label() -> None:
    call, g = _streamed_call()
    assert Streamed.of(dataclasses.replace(call, nbatch=call.nbatch - 1), g) is None


def test_streamed_of_refuses_a_view_whose_first_dimension_is_not_the_streamed_one() -> None:
    """The same 2257 rows of 53, one evenly strided run, but split 61 × 37 instead of 37 × 61:
    a batch element's rows are not ``astep`` apart."""
    call, g = _streamed_call()
    a = (0, (61, 37, 53), (8 * 37 * 53, 8 * 53, 8))
    assert Streamed.of(call, dataclasses.replace(g, a=a)) is None


def test_streamed_of_refuses_a_call_with_scratch() -> None:
    call, g = _streamed_call()
    assert Streamed.of(dataclasses.replace(call, scratch=8), g) is None  # run_streamed passes none


def test_streamed_of_refuses_strides_that_are_not_whole_elements() -> None:
    call, g = _streamed_call()
    a = (0, (37, 61, 53), (8 * 61 * 53 + 4, 8 * 53 + 4, 12))  # // 8 would read as contiguous
    assert Streamed.of(call, dataclasses.replace(g, a=a)) is None


# -- blas.py's rules --------------------------------------------------------------------------


def test_quiet_at_the_spin_bound(threads_restored: blas.OpenBLAS) -> None:
    lib = threads_restored
    lib.set_threads(2)
    at = blas.OpenBLAS(lib.path, lib.dgemm, lib.get_threads, lib.set_threads, blas.QUIET_SPIN)
    past = blas.OpenBLAS(lib.path, lib.dgemm, lib.get_threads, lib.set_threads, blas.QUIET_SPIN + 1)
    assert at.quiet()
    assert not past.quiet()


class _Getter:
    def __init__(self, value: int) -> None:
        self.value = value

    def __call__(self) -> int:
        return self.value


class _Lib:
    def __init__(self, **names: object) -> None:
        self.__dict__.update(names)


@pytest.mark.parametrize(("timeout", "spin"), [(0, 28), (-3, 28), (1, 4), (4, 4), (20, 20), (30, 30), (99, 30)])
def test_spin_follows_blas_server_clamp(timeout: int, spin: int) -> None:
    assert blas._spin(_Lib(openblas_thread_timeout=_Getter(timeout)), "scipy_", "64_") == spin
    assert blas._spin(_Lib(scipy_openblas_thread_timeout64_=_Getter(timeout)), "scipy_", "64_") == spin


def test_spin_without_the_getter_is_openblas_default() -> None:
    assert blas._spin(_Lib(), "scipy_", "64_") == 28


def test_bind_refuses_an_lp64_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """A library exporting the ILP64 names whose configuration lacks USE64BITINT is refused:
    run_streamed passes 64-bit integers."""
    lib = _lib()
    real = ctypes.CDLL(lib.path, mode=os.RTLD_NOLOAD | os.RTLD_LOCAL)
    names = ("cblas_dgemm", "openblas_get_num_threads", "openblas_set_num_threads", "openblas_get_parallel")
    prefix = next(p for p, s in blas._AFFIXES if hasattr(real, f"{p}cblas_dgemm{s}"))

    def fake(config: bytes) -> _Lib:
        funcs = {f"{prefix}{n}64_": getattr(real, f"{prefix}{n}64_") for n in names}
        return _Lib(**funcs, **{f"{prefix}openblas_get_config64_": _Getter(config)})  # type: ignore[arg-type]

    real_config = getattr(real, f"{prefix}openblas_get_config64_")
    real_config.restype = ctypes.c_char_p
    config = real_config()
    assert b"USE64BITINT" in config
    monkeypatch.setattr(ctypes, "CDLL", lambda path, mode=0: fake(config))
    assert blas._bind(lib.path) is not None
    monkeypatch.setattr(ctypes, "CDLL", lambda path, mode=0: fake(config.replace(b"USE64BITINT", b"")))
    assert blas._bind(lib.path) is None


def test_no_direct_blas_turns_the_library_off(monkeypatch: pytest.MonkeyPatch) -> None:
    _lib()
    blas.library.cache_clear()
    try:
        monkeypatch.setenv("CORE_TEIL_NO_DIRECT_BLAS", "1")
        assert blas.library() is None
    finally:
        blas.library.cache_clear()
        monkeypatch.delenv("CORE_TEIL_NO_DIRECT_BLAS")
    assert blas.library() is not None


# -- run_streamed's own checks ----------------------------------------------------------------

_CHILD = textwrap.dedent("""
    import numpy as np
    import core_teil as ct
    from core_teil.frontends.einsum import from_einsum
    from core_teil.native import _native, blas, engine

    p = from_einsum("ikl,kj,lj->ij", (37, 61, 53), (61, 45), (53, 45))
    c = ct.compile(p, {})._prepare({})
    (cc,) = [cc for calls in c.calls for cc in calls if cc.streamed is not None]
    st, lib = cc.streamed, blas.library()
    a, b = np.zeros((37, 61, 53)), np.zeros((53, 45))
    out, row = np.zeros((37, 45)), np.zeros((61 * 45,))
    slots = np.zeros((3, 3), dtype=np.int64)
    for r, arr in enumerate((out, row, b)):
        slots[r, 0] = _native.address(arr)
    slots[:, 1] = (45, 61 * 45, 0)
    terms = (st.transa, st.transb, st.mrow, st.n, st.k, _native.address(a), st.astep, st.lda,
             _native.address(b), st.ldb)
    for label, chunk, width in (("narrow", 3, 3 * 61 * 45 - 1), ("chunk", 0, 3 * 61 * 45)):
        bufs = np.zeros((_native.openmp_threads(), width))
        try:
            _native.run_streamed(cc.table, slots, st.fixed, 37, chunk, 1, lib.dgemm, terms, bufs)
        except ValueError:
            print(label, "refused")
""")


def test_run_streamed_refuses_a_narrow_buffer_and_an_empty_chunk() -> None:
    _lib()
    r = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=120,
                       cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split("\n")[:2] == ["narrow refused", "chunk refused"]
