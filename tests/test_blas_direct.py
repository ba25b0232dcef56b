"""Streamed GEMMs inside the engine's team (issue 15; ``core_teil.native.blas``,
``engine.Streamed``, ``_native.run_streamed``).

A streamed call's chunk GEMM is called as numpy's OpenBLAS ``cblas_dgemm`` from each of the
engine's threads.  These tests show that the path is taken where it should be, that it
computes what ``ct.evaluate`` computes (and what the ``numpy.matmul`` loop computes) for every
CBLAS layout the planner hands it, with chunk tails and on one and on all threads, and that it
leaves OpenBLAS's thread count as it found it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import platform
import threading
from collections.abc import Iterator

import numpy as np
import pytest

import core_teil as ct
from core_teil.frontends.einsum import from_einsum
from core_teil.native import _native, blas, engine, planner
from core_teil.native.engine import Gemm, Streamed, _cblas, _matrix

DIMS = {"i": 37, "k": 61, "l": 53, "j": 45}

#: Each spec's streamed GEMM, in CBLAS terms (transa, transb, rows per batch element).
LAYOUTS = {
    "ikl,kj,lj->ij": (111, 111, 61),   # B[i,k,l] rows (i,k), contiguous l
    "kil,kj,lj->ij": (112, 111, 53),   # B[k,i,l]: the contracted k is outermost, A transposed
    "ikl,jk,jl->ij": (111, 112, 61),   # D[j,l]: B transposed
    "ilk,kj,lj->ij": (111, 111, 53),
}


def _needs_openblas() -> blas.OpenBLAS:
    lib = blas.library()
    if os.environ.get("CORE_TEIL_NO_DIRECT_BLAS"):
        pytest.skip("CORE_TEIL_NO_DIRECT_BLAS: the direct calls are off")
    if platform.system() == "Linux" and platform.machine() == "x86_64":
        # the locked numpy wheel bundles an ILP64 OpenBLAS: not finding it is a bug here
        assert lib is not None, "numpy's scipy_openblas64_ was not found"
    if lib is None:
        pytest.skip("numpy's BLAS is not an ILP64 OpenBLAS")
    return lib


def _inputs(spec: str, seed: int = 0) -> tuple[ct.Program, dict[str, np.ndarray]]:
    ins = spec.split("->")[0].split(",")
    shapes = [tuple(DIMS[c] for c in t) for t in ins]
    p = from_einsum(spec, *shapes)
    rng = np.random.default_rng(seed)
    names = [a.name for a in p.inputs()]
    return p, {n: rng.standard_normal(s) for n, s in zip(names, shapes, strict=True)}


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 3 batch elements (37 = 12·3 + 1: a short last one), on every thread."""
    monkeypatch.setattr(planner, "STREAM_CHUNK_ELEMENTS", 3 * 61 * 45)
    monkeypatch.setattr(engine, "threads_for", lambda work: 0)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Every run_streamed call's (batch elements, chunk)."""
    calls: list[tuple[int, int]] = []
    real = _native.run_streamed

    def spy(table, slots, fixed, nbatch, chunk, nt, dgemm, terms, bufs):  # type: ignore[no-untyped-def]
        calls.append((nbatch, chunk))
        return real(table, slots, fixed, nbatch, chunk, nt, dgemm, terms, bufs)

    monkeypatch.setattr(_native, "run_streamed", spy)
    return calls


def _streamed(k: engine.Kernel) -> list[Streamed]:
    c = k._prepare({})
    return [cc.streamed for calls in c.calls for cc in calls if cc.streamed is not None]


@pytest.mark.parametrize("spec", sorted(LAYOUTS))
def test_each_layout_is_streamed_as_planned(spec: str, small_chunks: None) -> None:
    p, _ = _inputs(spec)
    (st,) = _streamed(ct.compile(p, {}))
    assert (st.transa, st.transb, st.mrow) == LAYOUTS[spec]
    assert st.width == 3 * st.mrow * st.n


@pytest.mark.parametrize("spec", sorted(LAYOUTS))
@pytest.mark.parametrize("quiet", [True, False])
def test_direct_gemms_compute_the_reference(spec: str, quiet: bool, small_chunks: None,
                                            counted: list[tuple[int, int]],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    lib = _needs_openblas()
    # quiet: OpenBLAS's idle workers do not poll, so the team calls dgemm itself
    monkeypatch.setattr(blas, "QUIET_SPIN", 30 if quiet else 3)
    p, arrays = _inputs(spec)
    before = lib.get_threads()
    got = ct.compile(p, {})(**arrays)
    assert lib.get_threads() == before
    want = ct.evaluate(p, arrays)
    (name,) = got
    np.testing.assert_allclose(got[name], want[name], rtol=1e-12, atol=1e-12)
    if quiet or before == 1:
        assert counted == [(37, 3)]
    else:
        assert counted == []  # numpy.matmul's loop, beside polling workers


@pytest.mark.parametrize("spec", sorted(LAYOUTS))
def test_direct_and_matmul_loop_agree(spec: str, small_chunks: None, counted: list[tuple[int, int]],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """With OpenBLAS on one thread both paths run the same dgemm on the same rows: the same bits."""
    lib = _needs_openblas()
    monkeypatch.setattr(blas, "QUIET_SPIN", 30)
    p, arrays = _inputs(spec, seed=3)
    with blas.one_thread(lib):
        direct = ct.compile(p, {})(**arrays)
        assert counted == [(37, 3)]
        monkeypatch.setattr(blas, "library", lambda: None)
        loop = ct.compile(p, {})(**arrays)
        assert counted == [(37, 3)]  # the loop, not the team
    for name in direct:
        assert np.array_equal(direct[name], loop[name])


def test_one_thread_and_all_threads_agree(small_chunks: None, counted: list[tuple[int, int]],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The team's parallel and serial branches (the latter where OpenBLAS is on one thread too)."""
    lib = _needs_openblas()
    monkeypatch.setattr(blas, "QUIET_SPIN", 30)
    p, arrays = _inputs("kil,kj,lj->ij", seed=5)
    k = ct.compile(p, {})
    (many,) = k(**arrays).values()
    monkeypatch.setattr(engine, "threads_for", lambda work: 1)
    with blas.one_thread(lib):
        (one,) = k(**arrays).values()
    assert counted == [(37, 3), (37, 3)]
    assert np.array_equal(many, one)


def test_special_values_go_through_the_direct_path(small_chunks: None, counted: list[tuple[int, int]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """NaN in the GEMM's input reaches the output as with numpy.matmul (the guard leaves NaN to
    the plan; ±inf goes to the reference engine)."""
    _needs_openblas()
    monkeypatch.setattr(blas, "QUIET_SPIN", 30)
    p, arrays = _inputs("ikl,kj,lj->ij", seed=7)
    name_b = next(n for n, a in arrays.items() if a.ndim == 3)
    arrays[name_b][5, 2, 1] = np.nan
    got = next(iter(ct.compile(p, {})(**arrays).values()))
    assert counted
    assert np.isnan(got[5]).all() and not np.isnan(np.delete(got, 5, axis=0)).any()


@pytest.fixture
def two() -> Iterator[blas.OpenBLAS]:
    """numpy's OpenBLAS on two threads for the test, then as it was."""
    lib = _needs_openblas()
    before = lib.get_threads()
    lib.set_threads(2)
    yield lib
    lib.set_threads(before)


def test_one_thread_restores_the_count_after_nesting_and_errors(two: blas.OpenBLAS) -> None:
    lib = two
    with blas.one_thread(lib):
        assert lib.get_threads() == 1
        with blas.one_thread(lib):
            assert lib.get_threads() == 1
        assert lib.get_threads() == 1  # the outer user is still inside
    assert lib.get_threads() == 2
    with pytest.raises(RuntimeError), blas.one_thread(lib):
        raise RuntimeError
    assert lib.get_threads() == 2


def test_one_thread_from_two_threads_restores_once_both_leave(two: blas.OpenBLAS) -> None:
    lib = two
    inside, leave, seen = threading.Barrier(2), threading.Event(), []

    def first() -> None:
        with blas.one_thread(lib):
            inside.wait()
            leave.wait()

    t = threading.Thread(target=first)
    t.start()
    try:
        with blas.one_thread(lib):
            inside.wait()
        seen.append(lib.get_threads())  # the other thread is still inside
        leave.set()
        t.join()
        seen.append(lib.get_threads())
    finally:
        leave.set()
        t.join()
    assert seen == [1, 2]


def test_spin_is_openblas_timeout_rule(two: blas.OpenBLAS) -> None:
    lib = two
    assert 4 <= lib.spin <= 30
    assert blas.OpenBLAS(lib.path, lib.dgemm, lib.get_threads, lib.set_threads, 20).quiet()
    loud = blas.OpenBLAS(lib.path, lib.dgemm, lib.get_threads, lib.set_threads, 28)
    assert not loud.quiet()
    lib.set_threads(1)
    assert loud.quiet()  # OpenBLAS on one thread has no worker to poll


# -- the layout rules ---------------------------------------------------------------------


def test_matrix_joins_an_evenly_strided_run() -> None:
    assert _matrix([(4, 15), (5, 3), (3, 1)]) == (60, 1)
    assert _matrix([(4, 16), (5, 3), (3, 1)]) is None  # a gap between rows of 5·3
    assert _matrix([(1, 999), (7, 2)]) == (7, 2)  # an extent of 1 has no stride to keep
    assert _matrix([]) == (1, 1)
    assert _matrix([(3, 0)]) is None  # a broadcast dimension is no matrix BLAS can take
    assert _matrix([(0, 1)]) is None


def test_cblas_terms() -> None:
    assert _cblas([(6, 10)], [(10, 1)]) == (111, 10)  # row-major
    assert _cblas([(6, 12)], [(10, 1)]) == (111, 12)  # padded rows
    assert _cblas([(6, 1)], [(10, 6)]) == (112, 6)  # column-major: the transpose
    assert _cblas([(6, 1)], [(10, 5)]) is None  # columns overlap
    assert _cblas([(6, 9)], [(10, 1)]) is None  # rows overlap
    assert _cblas([(6, 2)], [(10, 12)]) is None  # neither stride is 1
    assert _cblas([(1, 7)], [(10, 1)]) == (111, 10)
    assert _cblas([(6, 10)], [(1, 3)]) == (111, 10)


def test_batched_and_odd_views_keep_numpy_matmul() -> None:
    p = from_einsum("bik,bkj->bij", (64, 40, 30), (64, 30, 50))
    k = ct.compile(p, {})
    assert _streamed(k) == []
    st = Streamed.of
    g = Gemm((0, (4, 6), (48, 8)), (0, (6, 5), (40, 8)), 1, 4, 5, 6, 4, 1, 1)
    call = planner.Call([], 4, 0, None, [], chunk=2)
    assert st(call, g) is None  # no ops to stream into


def test_a_child_forked_inside_one_thread_gets_its_count_back(two: blas.OpenBLAS) -> None:
    lib = two
    with blas.one_thread(lib):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: no thread of its own is inside one_thread
            os.write(w, bytes([lib.get_threads(), blas._users]))
            os._exit(0)
        os.waitpid(pid, 0)
        got = os.read(r, 2)
    assert tuple(got) == (2, 0)


@pytest.mark.parametrize(("team", "ours", "taken"), [(2, 0, True), (1, 0, False), (2, 1, False)])
def test_the_team_takes_the_gemms_only_when_as_wide_as_openblas(
        team: int, ours: int, taken: bool, two: blas.OpenBLAS, small_chunks: None,
        counted: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenBLAS on two threads: the team (``team`` OpenMP threads; ``ours`` is threads_for's
    answer, 0 for all of them) calls dgemm itself only if it has two threads too."""
    monkeypatch.setattr(blas, "QUIET_SPIN", 30)
    monkeypatch.setattr(_native, "openmp_threads", lambda: team)
    monkeypatch.setattr(engine, "threads_for", lambda work: ours if team > 1 else 1)
    p, arrays = _inputs("ikl,kj,lj->ij", seed=11)
    (got,) = ct.compile(p, {})(**arrays).values()
    (want,) = ct.evaluate(p, arrays).values()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert bool(counted) == taken
    assert two.get_threads() == 2


def test_only_a_pthreads_build_is_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """An OpenMP-threaded OpenBLAS's set_num_threads would narrow our own team; a sequential or
    unreadable one is refused as well."""
    lib = _needs_openblas()
    assert blas._bind(lib.path) is not None
    real = blas._ask
    for answer in (0, 2, None):
        def ask(so: ctypes.CDLL, *names: str, a: int | None = answer) -> int | None:
            return a if "get_parallel" in names[0] else real(so, *names)

        monkeypatch.setattr(blas, "_ask", ask)
        assert blas._bind(lib.path) is None


@pytest.mark.parametrize(("spec", "labels"), [("iklm,lmj,kj->ij", (2, 2)), ("ilmk,lmj,kj->ij", (3, 1))])
def test_a_gemm_over_several_labels_splits_its_views_where_they_divide(
        spec: str, labels: tuple[int, int], small_chunks: None, counted: list[tuple[int, int]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two contracted labels (``l, m``) or three row labels (``i, l, m``): the views are cut after
    ``Gemm.i_labels`` and ``Gemm.k_labels`` labels, not after the first."""
    _needs_openblas()
    monkeypatch.setattr(blas, "QUIET_SPIN", 30)
    dims = {"i": 37, "k": 61, "l": 9, "m": 7, "j": 45}
    shapes = [tuple(dims[c] for c in t) for t in spec.split("->")[0].split(",")]
    p = from_einsum(spec, *shapes)
    k = ct.compile(p, {})
    (cc,) = [cc for calls in k._prepare({}).calls for cc in calls if cc.streamed is not None]
    assert (cc.gemm.i_labels, cc.gemm.k_labels) == labels
    rng = np.random.default_rng(13)
    arrays = {a.name: rng.standard_normal(s) for a, s in zip(p.inputs(), shapes, strict=True)}
    (got,) = k(**arrays).values()
    (want,) = ct.evaluate(p, arrays).values()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert counted and counted[0][1] < 37  # the team ran it, in more than one chunk


def test_the_team_runs_one_op_and_refuses_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """A streamed call is a BLAS step and the single op the planner fused it with; a call of
    several ops keeps the numpy.matmul loop, and run_streamed itself refuses one."""
    p, _ = _inputs("ikl,kj,lj->ij")
    (cc,) = [cc for calls in ct.compile(p, {})._prepare({}).calls for cc in calls if cc.streamed is not None]
    two = dataclasses.replace(cc.call, ops=[*cc.call.ops, *cc.call.ops])
    assert Streamed.of(two, cc.gemm) is None
    rows = np.array([d.row(3 * q) for q, d in enumerate(two.ops)], dtype=np.int64)
    table = _native.OpTable(rows, np.array([d.coeff for d in two.ops]))
    with pytest.raises(ValueError, match="one op"):
        _native.run_streamed(table, np.zeros((6, 3), dtype=np.int64), np.zeros(6, dtype=np.uint8), 37, 3, 1,
                             1, (111, 111, 61, 45, 53, 0, 0, 53, 0, 45), np.zeros((1, 3 * 61 * 45)))
