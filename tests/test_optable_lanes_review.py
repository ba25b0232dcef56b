"""Review of two changes: ``_native.OpTable`` with ``_native.run`` reading the slot table in
place (commit 06b14ff), and emit-c's last lanes of a row stored one by one (commit 7399812,
``Emitter.tiled``, ``Emitter.lane``): tests for the mutants the existing tests let survive.

* ``OpTable`` parses every column of an op row into the op it runs: offsets, slots, the three
  stride rows, extents past the third loop, one coefficient per op; checked on a hand-built
  table of five ops (fills, a product, accumulations into a batched output, through two
  per-thread scratch slots at distinct offsets) and on one op run in batch chunks, against
  numpy, one thread and two.  The op rows are copied: changing them after parsing changes
  nothing.  A slot table of more than three columns is refused even when it is C-contiguous
  (tests/test_native.py's only wide table is a strided one).
* This review found that ``run(None, ...)`` was not refused (Cython lets None through an
  argument typed ``OpTable`` or ``cnp.ndarray`` unless it says ``not None``): now it is, and
  tests/test_native.py shows it for every such argument of the extension.  It also found that
  the branch copying the slot rows (where a row is not a ``tk_slot`` in memory) ran on no
  machine the tests run on: the extension now refuses to load there instead.
* ``Emitter.lane`` gives back the substitution it was called with, as ``Emitter.vector``
  does (``tiled`` resets it after each row, so nothing else sees the difference).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from core_teil.native import _native
from core_teil.native.emit_c import Emitter, emit_c

ROOT = Path(__file__).resolve().parent.parent
INTERP = ROOT / "examples" / "interp.teil"
#: native/teil_kernels.h's kinds
FILL, MAC1, MAC2 = 0, 2, 3
#: every op here runs over (i, j, k, l) of extents (2, 3, 2, 2): four loops, so a parser that
#: reads only the first three extents or stride columns computes something else
EXT = (2, 3, 2, 2)
ROW_MAJOR = (12, 4, 2, 1)
A_ST = (1, 2, 12, 6)  # a permutation of the row-major layout: a and b must not be swapped
B_ST = (12, 4, 1, 2)
NBATCH = 3
#: per batch element: A's and O's blocks (strides 40 and 30), B shared; each buffer has room
#: on both sides of what it holds, so a mutant's misread offset or stride stays in memory and
#: shows as a wrong value, not a crash
A_STRIDE, O_STRIDE = 40, 30
A_OFF, B_OFF, T_OFF, O_OFF = 2, 3, 1, 4
#: T and U live in each thread's scratch, 5 and 35 elements in: a parser that loses the scratch
#: offset puts both in the same place
T_SOFF, U_SOFF = 5, 35
SCRATCH = 64


def op_row(kind: int, slots: tuple[int, int, int], offsets: tuple[int, int, int],
           strides: tuple[tuple[int, ...], ...]) -> list[int]:
    """One row as planner.OpDesc.row lays it out: kind, nloops, slots, offsets, extents, strides."""
    maxl = _native.MAXL
    r = [0] * _native.OP_WIDTH
    r[0], r[1] = kind, len(EXT)
    r[2:5], r[5:8] = slots, offsets
    for li, e in enumerate(EXT):
        r[8 + li] = e
        for q, st in enumerate(strides):
            r[8 + (q + 1) * maxl + li] = st[li]
    return r


def gather(buf: np.ndarray, off: int, strides: tuple[int, ...]) -> np.ndarray:
    """The (i, j, k, l) elements of ``buf`` from ``off`` with ``strides``."""
    idx = np.full(EXT, off)
    for axis, (e, s) in enumerate(zip(EXT, strides, strict=True)):
        shape = [1] * len(EXT)
        shape[axis] = e
        idx = idx + (np.arange(e) * s).reshape(shape)
    return buf[idx]


def five_ops() -> tuple[np.ndarray, np.ndarray]:
    """T = 0.5; T += 3 · A[b] · B; U = 0.25; O[b] += -2 · T; O[b] += 4 · U: slots 3q + r as the
    engine numbers them, a distinct offset for every operand, a distinct coefficient for every op."""
    rows = [op_row(FILL, (0, -1, -1), (T_OFF, 0, 0), (ROW_MAJOR,)),
            op_row(MAC2, (3, 4, 5), (T_OFF, A_OFF, B_OFF), (ROW_MAJOR, A_ST, B_ST)),
            op_row(FILL, (6, -1, -1), (T_OFF, 0, 0), (ROW_MAJOR,)),
            op_row(MAC1, (9, 10, -1), (O_OFF, T_OFF, 0), (ROW_MAJOR, ROW_MAJOR)),
            op_row(MAC1, (12, 13, -1), (O_OFF, T_OFF, 0), (ROW_MAJOR, ROW_MAJOR))]
    return np.array(rows, dtype=np.int64), np.array([0.5, 3.0, 0.25, -2.0, 4.0])


def buffers(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # small integers: every product and sum below is exact, whatever order a kernel takes
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, NBATCH * A_STRIDE + 16).astype(np.float64)
    b = rng.integers(-8, 9, 64).astype(np.float64)
    o = rng.integers(-8, 9, NBATCH * O_STRIDE + 16).astype(np.float64)
    return a, b, o


def slot_rows(a: np.ndarray, b: np.ndarray, o: np.ndarray) -> np.ndarray:
    t, u, none = (0, 0, T_SOFF), (0, 0, U_SOFF), (0, 0, 0)  # per-thread scratch slots; unused
    rows = [t, none, none,
            t, (a.ctypes.data, A_STRIDE, 0), (b.ctypes.data, 0, 0),
            u, none, none,
            (o.ctypes.data, O_STRIDE, 0), t, none,
            (o.ctypes.data, O_STRIDE, 0), u, none]
    return np.array(rows, dtype=np.int64)


def expected_five(a: np.ndarray, b: np.ndarray, o: np.ndarray) -> np.ndarray:
    want = o.copy()
    for i in range(NBATCH):
        t = 0.5 + 3.0 * (gather(a, i * A_STRIDE + A_OFF, A_ST) * gather(b, B_OFF, B_ST))
        block = gather(want, i * O_STRIDE + O_OFF, ROW_MAJOR) - 2.0 * t + 4.0 * 0.25
        idx = gather(np.arange(want.size), i * O_STRIDE + O_OFF, ROW_MAJOR)
        want[idx] = block
    return want


def one_op() -> tuple[np.ndarray, np.ndarray]:
    """O[b] += 1.5 · A[b] · B alone, with no scratch: ``run`` gives it the batch as its
    outermost loop (``tk_run_chunk``, which reads the batch strides from the slot table)."""
    rows = [op_row(MAC2, (0, 1, 2), (O_OFF, A_OFF, B_OFF), (ROW_MAJOR, A_ST, B_ST))]
    return np.array(rows, dtype=np.int64), np.array([1.5])


def expected_one(a: np.ndarray, b: np.ndarray, o: np.ndarray) -> np.ndarray:
    want = o.copy()
    for i in range(NBATCH):
        idx = gather(np.arange(want.size), i * O_STRIDE + O_OFF, ROW_MAJOR)
        want[idx] += 1.5 * (gather(a, i * A_STRIDE + A_OFF, A_ST) * gather(b, B_OFF, B_ST))
    return want


def check_tables(threads: int) -> None:
    """Both tables through OpTable and run, against numpy, every element of O (also those no
    op should touch)."""
    ops_i, ops_f = five_ops()
    table = _native.OpTable(ops_i, ops_f)
    assert table.nops == 5
    ops_i[:] = 0  # parsed once: the table no longer reads the rows
    ops_f[:] = 0.0
    a, b, o = buffers(1)
    want = expected_five(a, b, o)
    _native.run(table, slot_rows(a, b, o), NBATCH, SCRATCH, threads)
    np.testing.assert_array_equal(o, want)

    ops_i, ops_f = one_op()
    table = _native.OpTable(ops_i, ops_f)
    a, b, o = buffers(2)
    want = expected_one(a, b, o)
    slots = np.array([(o.ctypes.data, O_STRIDE, 0), (a.ctypes.data, A_STRIDE, 0), (b.ctypes.data, 0, 0)],
                     dtype=np.int64)
    _native.run(table, slots, NBATCH, 0, threads)
    np.testing.assert_array_equal(o, want)


@pytest.mark.parametrize("threads", [1, 2])
def test_an_op_table_runs_every_column_of_its_rows(threads: int) -> None:
    check_tables(threads)


def test_a_contiguous_slot_table_of_more_than_three_columns_is_refused() -> None:
    # read in place, a fourth column would shift every row after the first
    table = _native.OpTable(*one_op())
    for cols in (4, 6):
        with pytest.raises(ValueError, match="three columns"):
            _native.run(table, np.zeros((3, cols), dtype=np.int64), 0, 0, 1)


# --------------------------------------------------------------------------
# emit-c: Emitter.lane
# --------------------------------------------------------------------------


def test_a_lane_gives_back_the_substitution_it_was_called_with(monkeypatch: pytest.MonkeyPatch) -> None:
    # interp n = 7: every row of v is 7 lanes of a vector of 8, each stored through lane
    real = Emitter.lane
    seen: list[tuple[dict[Any, Any], dict[Any, Any]]] = []

    def spy(self: Emitter, storage: Any, index: Any, lane: Any, at: int) -> str:
        before = dict(self.subst)
        got = real(self, storage, index, lane, at)
        seen.append((before, dict(self.subst)))
        return got

    monkeypatch.setattr(Emitter, "lane", spy)
    emit_c(ct.load(str(INTERP)), {"E": 3, "m": 7, "n": 7})
    assert seen and all(before == after and before for before, after in seen), seen[:2]
