"""Review of the kept result buffers (``core_teil.native.buffers``, ``_native.aligned_view``;
commit bf38e6b): tests for the mutants tests/test_buffers.py let survive, and for the holders
and paths it did not try.

* The bounds, at their edges: a buffer of exactly ``MIN_BYTES`` is kept and one double less is
  not; a buffer of exactly ``LIMIT`` is kept; kept bytes may reach ``LIMIT`` exactly.
* Eviction: only idle buffers give way, the oldest first, and only as many as the new one
  needs; a buffer larger than the limit evicts nothing; a reused buffer is not idle.
* A shape of no elements comes from a kept buffer as from a fresh one.
* ``_native.aligned_view`` refuses what would put the view outside the buffer: one double too
  few, another dtype, rank 2, a strided buffer.
* The reference count is read under the lock (two threads could otherwise both see the same
  buffer free and both be handed it).
* Holders beyond tests/test_buffers.py (``np.frombuffer``, a ``memoryview`` cast, ctypes
  arrays, ``as_strided``, a slice of a slice, subclass views) keep a result from being
  written, on the compiled-C path, the plan's path and the padded path (whose results are
  views of padded buffers); three threads calling one kernel never see a result change.
* The compiled-C path (cjit) writes what it reads from NaN-filled reused buffers, for
  single- and multi-output examples.
* A bug found, recorded as a strict xfail: a ``CORE_TEIL_KEEP_BYTES`` that is not an integer
  makes every CLI command die with a traceback and exit 1 (the code of a refuted proof).
"""

from __future__ import annotations

import ctypes
import dataclasses
import gc
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.lib.array_utils import byte_bounds

import core_teil as ct
from core_teil.native import _native, buffers, cjit
from core_teil.native import engine as native
from core_teil.semantics.eval import evaluate

ROOT = Path(__file__).resolve().parent.parent
INTERP = {"E": 600, "m": 7, "n": 7}  # a 1.6 MB result: above buffers.MIN_BYTES
MIB = 1 << 20


@pytest.fixture(autouse=True)
def _own_buffers() -> Iterator[None]:
    buffers.release()
    yield
    buffers.release()


def raw_bytes(elements: int, align: int = 64) -> int:
    """The bytes of the buffer :func:`buffers.aligned` keeps for ``elements`` doubles."""
    return 8 * (max(elements, 1) + align // 8)


# --------------------------------------------------------------------------
# The bounds and the eviction, at their edges
# --------------------------------------------------------------------------


def test_a_buffer_of_exactly_min_bytes_is_kept_and_one_double_less_is_not():
    # "Buffers of at least this many bytes are kept"
    exact = buffers.MIN_BYTES // 8 - 8  # + 64 // 8 doubles of alignment: MIN_BYTES exactly
    assert raw_bytes(exact) == buffers.MIN_BYTES
    buffers.aligned((exact - 1,), 64)
    assert buffers.kept_bytes() == 0
    buffers.aligned((exact,), 64)
    assert buffers.kept_bytes() == buffers.MIN_BYTES


def test_a_buffer_of_exactly_the_limit_is_kept(monkeypatch):
    monkeypatch.setattr(buffers, "LIMIT", raw_bytes(1 << 18))
    buffers.aligned((1 << 18,), 64)
    assert buffers.kept_bytes() == buffers.LIMIT
    buffers.release()
    monkeypatch.setattr(buffers, "LIMIT", raw_bytes(1 << 18) - 1)
    buffers.aligned((1 << 18,), 64)
    assert buffers.kept_bytes() == 0


def test_kept_bytes_may_reach_the_limit_exactly(monkeypatch):
    monkeypatch.setattr(buffers, "LIMIT", raw_bytes(1 << 18) + raw_bytes(3 << 16))
    held = [buffers.aligned((1 << 18,), 64), buffers.aligned((3 << 16,), 64)]
    assert buffers.kept_bytes() == buffers.LIMIT
    held.append(buffers.aligned((5 << 16,), 64))  # nothing idle gives way: not kept
    assert buffers.kept_bytes() == buffers.LIMIT
    del held


def test_only_the_oldest_idle_buffers_give_way_and_only_as_many_as_needed(monkeypatch):
    # x (oldest), y, z idle; w needs exactly x's place: x goes, y and z stay
    monkeypatch.setattr(buffers, "IDLE", 1)
    x, y, z, w = 1 << 18, 3 << 16, 5 << 15, 9 << 15  # 2, 1.5, 1.25 and 2.25 MiB
    monkeypatch.setattr(buffers, "LIMIT", raw_bytes(y) + raw_bytes(z) + raw_bytes(w))
    for n in (x, y, z):
        buffers.aligned((n,), 64)
    assert buffers.kept_bytes() == raw_bytes(x) + raw_bytes(y) + raw_bytes(z)
    buffers.aligned((w,), 64)
    assert buffers.kept_bytes() == buffers.LIMIT
    assert sorted(r.size for r, _ in buffers._KEPT) == sorted(n + 8 for n in (y, z, w))


def test_a_buffer_handed_out_again_is_not_idle(monkeypatch):
    # the 2 MiB buffer was first handed out long ago, but handed out again just now
    monkeypatch.setattr(buffers, "IDLE", 4)
    monkeypatch.setattr(buffers, "LIMIT", raw_bytes(1 << 18) + raw_bytes(3 << 16) - 1)
    for _ in range(6):
        buffers.aligned((1 << 18,), 64)
    assert buffers.kept_bytes() == raw_bytes(1 << 18)
    buffers.aligned((3 << 16,), 64)  # would pass the limit; nothing is idle: not kept
    assert buffers.kept_bytes() == raw_bytes(1 << 18)


def test_a_buffer_larger_than_the_limit_evicts_nothing(monkeypatch):
    monkeypatch.setattr(buffers, "IDLE", 1)
    monkeypatch.setattr(buffers, "LIMIT", 3 * MIB)
    buffers.aligned((1 << 18,), 64)
    buffers.aligned((1 << 19,), 64)  # 4 MiB: never kept, so nothing gives way to it
    assert buffers.kept_bytes() == raw_bytes(1 << 18)


@pytest.mark.parametrize("shape", [(0,), (0, 5), ()])
def test_a_shape_without_elements_comes_from_a_kept_buffer(monkeypatch, shape):
    monkeypatch.setattr(buffers, "MIN_BYTES", 0)
    for _ in range(2):  # fresh, then reused
        a = buffers.aligned(shape, 64)
        assert a.shape == shape and a.ctypes.data % 64 == 0
        del a
    assert buffers.kept_bytes() == raw_bytes(0)


def test_the_reference_count_is_read_under_the_lock(monkeypatch):
    # without the lock two threads could both count a free buffer as free and both be handed it
    seen: list[bool] = []
    real = buffers._holders

    def spy(kept: list[list], k: int) -> int:
        seen.append(buffers._LOCK.locked())
        return real(kept, k)

    monkeypatch.setattr(buffers, "_holders", spy)
    a = buffers.aligned((1 << 18,), 64)
    del a
    b = buffers.aligned((1 << 18,), 64)
    assert seen == [True] and b.base is buffers._KEPT[0][0]


# --------------------------------------------------------------------------
# _native.aligned_view refuses what would put the view outside its buffer
# --------------------------------------------------------------------------


@pytest.mark.parametrize("align", [8, 64, 4096])
def test_aligned_view_takes_a_buffer_of_exactly_the_documented_size(align):
    shape = (3, 5)
    raw = np.empty(15 + align // 8)
    v = _native.aligned_view(raw, shape, align)
    assert v.shape == shape and v.base is raw and v.ctypes.data % align == 0
    v[...] = 1.0
    assert np.shares_memory(v, raw)


@pytest.mark.parametrize("raw,shape,align", [
    (np.empty(15 + 8 - 1), (3, 5), 64),               # one double too few
    (np.empty(15), (3, 5), 64),                       # no room to align
    (np.empty(1 + 512 - 1), (), 4096),                # a scalar is one element
    (np.empty(8), (0, 5), 64),                        # so is a shape without elements
    (np.empty(2 * (15 + 8), dtype=np.float32), (3, 5), 64),  # not doubles
    (np.empty((15 + 8, 2)), (3, 5), 64),              # rank 2
    (np.empty(2 * (15 + 8))[::2], (3, 5), 64),        # strided
], ids=["short", "unaligned-room", "scalar", "empty-shape", "float32", "rank2", "strided"])
def test_aligned_view_refuses_a_buffer_it_would_overrun(raw, shape, align):
    with pytest.raises(ValueError, match=r"aligned_view: the buffer is not a 1-D float64 array large enough"):
        _native.aligned_view(raw, shape, align)


def test_aligned_view_refuses_a_negative_extent_and_a_bad_alignment():
    with pytest.raises(ValueError, match="negative extent"):
        _native.aligned_view(np.empty(100), (-2, -3), 64)
    with pytest.raises(ValueError, match="power-of-two alignment"):
        _native.aligned_view(np.empty(100), (3,), 48)


# --------------------------------------------------------------------------
# Holders, on every path
# --------------------------------------------------------------------------


def _inputs(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"A": rng.standard_normal((7, 7)), "u": rng.standard_normal((600, 7, 7, 7))}


def _kernel(path: str) -> native.Kernel:
    # "plan" and "padded": the plan's kernels (no C); "cjit" and "padded-c": emit-c's C
    with pytest.MonkeyPatch.context() as mp:
        if path in ("plan", "padded"):
            mp.setenv(cjit.ENV_SWITCH, "0")
        pad = 8 if path.startswith("padded") else None
        k = native.compile(ct.load(str(ROOT / "examples" / "interp.teil")), INTERP, pad)
        k(**_inputs(9))  # prepared here: the plan, or the C, from now on
    why = cjit.why_not(k)
    assert why is None if path in ("cjit", "padded-c") else why == "CORE_TEIL_CJIT=0"
    return k


@pytest.fixture(scope="module")
def kernels() -> dict[str, native.Kernel]:
    return {path: _kernel(path) for path in ("cjit", "plan", "padded", "padded-c")}


class _Keeper:
    """An object that exposes a result's memory by ``__array_interface__`` and holds it."""

    def __init__(self, a: np.ndarray) -> None:
        self.keep = a
        self.__array_interface__ = a.__array_interface__


HOLDERS: dict[str, Callable[[np.ndarray], Any]] = {
    "frombuffer": np.frombuffer,
    "memoryview-cast": lambda a: memoryview(a).cast("B"),
    "ctypes-as-array": lambda a: np.ctypeslib.as_array(a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                                                        (a.size,)),
    "ctypes-from-buffer": lambda a: (ctypes.c_double * a.size).from_buffer(a),
    "as-ctypes": np.ctypeslib.as_ctypes,
    "data-as-pointer": lambda a: a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
    "as-strided": lambda a: np.lib.stride_tricks.as_strided(a, (10,), (8,)),
    "slice-of-a-slice": lambda a: a[1:][2:][::2],
    "view-as-int64": lambda a: a.view(np.int64),
    "recarray": lambda a: a.view(np.recarray),
    "masked": np.ma.masked_array,
    "array-interface": lambda a: np.asarray(_Keeper(a)),
    "nditer": np.nditer,
}
#: A padded result is a view of its padded buffer, not contiguous: the holders that take one.
PADDED_HOLDERS = ["slice-of-a-slice", "as-strided", "recarray", "masked", "nditer"]


def _unheld_view(a: np.ndarray) -> np.ndarray:
    """The elements of ``a`` read through their address: an array that does not hold ``a``'s
    buffer (so the count of its holders is the caller's alone), valid while something does."""
    lo, hi = byte_bounds(a)
    memory = (ctypes.c_double * ((hi - lo) // 8)).from_address(lo)
    return np.ndarray(a.shape, np.float64, buffer=memory, offset=a.ctypes.data - lo, strides=a.strides)


@pytest.mark.parametrize("path,name", [(p, n) for p in ("cjit", "plan") for n in HOLDERS] +
                         [(p, n) for p in ("padded", "padded-c") for n in PADDED_HOLDERS])
def test_a_result_held_in_any_way_is_never_written(kernels, path, name):
    k = kernels[path]
    first = k(**_inputs(0))["v"]
    lo, hi = byte_bounds(first)
    want = first.copy()
    holder = HOLDERS[name](first)
    seen = _unheld_view(first)
    del first
    gc.collect()
    second = k(**_inputs(1))["v"]
    s_lo, s_hi = byte_bounds(second)
    assert s_hi <= lo or s_lo >= hi, f"{name}: the second result overlaps the held first"
    np.testing.assert_array_equal(seen, want)
    del holder


def test_a_released_result_is_reused_on_every_path(kernels):
    # the holders above are not vacuous: let go, the buffer is written again on each path
    for path, k in kernels.items():
        first = k(**_inputs(0))["v"]
        lo = byte_bounds(first)[0]
        del first
        second = k(**_inputs(1))["v"]
        assert byte_bounds(second)[0] == lo, path
        want = evaluate(ct.load(str(ROOT / "examples" / "interp.teil")), _inputs(1), INTERP)["v"]
        np.testing.assert_allclose(second, want, rtol=1e-12, atol=1e-12)


def test_an_out_array_sharing_memory_with_an_input_gives_its_buffer_back(kernels):
    # computed into a fresh (kept) buffer, copied into out=: the returned dict holds out=, and
    # the kept buffer is free again for the next call
    k = kernels["plan"]
    x = _inputs(2)
    out = {"v": x["u"][:, :, :, :]}
    want = evaluate(ct.load(str(ROOT / "examples" / "interp.teil")), x, INTERP)["v"]
    got = k(**x, out=out)
    assert got["v"] is out["v"] and not any(got["v"].base is r for r, _ in buffers._KEPT)
    np.testing.assert_allclose(got["v"], want, rtol=1e-12, atol=1e-12)
    assert len(buffers._KEPT) == 1  # the fresh result's buffer, given back
    again = k(**_inputs(3))["v"]
    assert again.base is buffers._KEPT[0][0]


@pytest.mark.parametrize("path", ["cjit", "plan", "padded", "padded-c"])
def test_threads_calling_one_kernel_never_see_a_result_change(kernels, path):
    k = kernels[path]
    ins = [_inputs(s) for s in range(3)]
    want = [k(**x)["v"].copy() for x in ins]
    errors: list[str] = []

    def work(t: int) -> None:
        held: list[tuple[int, np.ndarray]] = []
        for it in range(12):
            s = (t + it) % 3
            r = k(**ins[s])["v"]
            if not np.array_equal(r, want[s]):
                errors.append(f"thread {t} call {it}: wrong result")
            held.append((s, r))
            if len(held) > 2:
                s0, r0 = held.pop(0)
                if not np.array_equal(r0, want[s0]):
                    errors.append(f"thread {t} call {it}: a held result changed")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


# --------------------------------------------------------------------------
# The compiled C reads only what it wrote, from NaN-filled reused buffers
# --------------------------------------------------------------------------

#: Single- and multi-output examples (axpy, normalize and fig11_proj_expa have two outputs).
CJIT_EXAMPLES = ["interp", "helm", "mttkrp", "bmm", "axpy", "normalize", "fig11_proj_expa", "taco_a"]


@pytest.mark.parametrize("stem", CJIT_EXAMPLES)
def test_the_compiled_c_writes_what_it_reads_from_a_reused_buffer(monkeypatch, stem):
    from tests.test_examples import EXPECTED, make_inputs

    monkeypatch.setattr(buffers, "MIN_BYTES", 0)
    monkeypatch.setattr(buffers, "POISON", True)
    monkeypatch.setattr(native, "PAGE_ALIGNED_MIN", 0)
    monkeypatch.setattr(cjit, "MIN_WORK", 0)  # the C for these small extents too
    program = ct.load(str(ROOT / "examples" / f"{stem}.teil"))
    params = {p: 3 + i for i, p in enumerate(program.params)}
    inputs = make_inputs(program, dataclasses.replace(EXPECTED[stem], params=params), stem)
    k = native.compile(program, params)
    want = evaluate(program, inputs, params)
    for _ in range(2):  # the second call's results are in the first's buffers, NaN-filled
        got = k(**inputs)
        assert cjit.why_not(k) is None
        for name, w in want.items():
            np.testing.assert_allclose(got[name], w, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=name)
        del got
    assert buffers.kept_bytes() > 0


# --------------------------------------------------------------------------
# Bug found in review: a malformed CORE_TEIL_KEEP_BYTES
# --------------------------------------------------------------------------


def test_a_malformed_keep_bytes_is_a_clear_message_not_a_traceback(tmp_path):
    exe = Path(sys.executable).with_name("core-teil")
    env = {**os.environ, "CORE_TEIL_KEEP_BYTES": "1G"}
    done = subprocess.run([str(exe), "check", str(ROOT / "examples" / "axpy.teil")], capture_output=True, text=True,
                          env=env, cwd=tmp_path, check=False)
    # was: "ValueError: invalid literal for int() with base 10: '1G'", a traceback, exit 1 (refuted)
    assert "Traceback" not in done.stderr
    assert done.returncode != 1
    assert done.returncode == 0 or "CORE_TEIL_KEEP_BYTES" in done.stderr
