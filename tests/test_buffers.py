"""Kept result buffers (``core_teil.native.buffers``, issue 15): a large result's buffer is
written again only once nothing the caller can reach holds it, and every engine path writes
what it reads."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import core_teil as ct
from core_teil.errors import TeilInputError
from core_teil.native import buffers
from core_teil.native import engine as native
from core_teil.semantics.eval import evaluate
from tests.test_native import DIFF, _example_case, _lowered_thresholds, both

ROOT = Path(__file__).resolve().parent.parent
INTERP = {"E": 600, "m": 7, "n": 7}  # a 1.6 MB result: above buffers.MIN_BYTES


@pytest.fixture(autouse=True)
def _own_buffers():
    buffers.release()
    yield
    buffers.release()


@pytest.fixture(scope="module")
def interp():
    return native.compile(ct.load("examples/interp.teil"), INTERP)


def _inputs(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"A": rng.standard_normal((7, 7)), "u": rng.standard_normal((600, 7, 7, 7))}


def test_a_released_result_is_written_again(interp):
    first = interp(**_inputs(0))["v"]
    address = first.ctypes.data
    del first
    second = interp(**_inputs(1))["v"]
    assert second.ctypes.data == address
    want = evaluate(ct.load("examples/interp.teil"), _inputs(1), INTERP)["v"]
    np.testing.assert_allclose(second, want, rtol=1e-12, atol=1e-12)


def _held_is_never_written(interp, hold) -> None:
    first = interp(**_inputs(0))["v"]
    want = first.copy()
    holder = hold(first)
    del first
    gc.collect()
    second = interp(**_inputs(1))["v"]
    assert not np.shares_memory(second, holder)
    np.testing.assert_array_equal(np.asarray(holder), hold(want))


@pytest.mark.parametrize("hold", [
    lambda a: a,                      # the result itself
    lambda a: a[:5],                  # a view: its base is the buffer, not the result
    lambda a: a.reshape(-1),          # another view
    lambda a: np.asarray(memoryview(a)),  # an array over the buffer protocol
], ids=["result", "slice", "reshape", "memoryview"])
def test_a_result_still_held_is_never_written(interp, hold):
    _held_is_never_written(interp, hold)


def test_the_check_of_holders_is_what_protects_them(interp, monkeypatch):
    # without it (every kept buffer counted as free), a held result is overwritten: the test
    # above fails, so it can fail
    monkeypatch.setattr(buffers, "_ALONE", 10**9)

    def holders(kept, k):
        return 10**9

    monkeypatch.setattr(buffers, "_holders", holders)
    with pytest.raises(AssertionError):
        _held_is_never_written(interp, lambda a: a)


def test_the_limit_and_release(interp, monkeypatch):
    result = interp(**_inputs(0))["v"]
    assert buffers.kept_bytes() >= result.nbytes
    buffers.release()
    assert buffers.kept_bytes() == 0
    monkeypatch.setattr(buffers, "LIMIT", result.nbytes // 2)
    interp(**_inputs(0))
    assert buffers.kept_bytes() == 0  # larger than the limit: not kept


def test_a_cycle_larger_than_the_limit_keeps_what_fits(interp, monkeypatch):
    monkeypatch.setattr(buffers, "LIMIT", 2 * (INTERP["E"] * 343 * 8 + 4096))
    for _ in range(4):  # three results alive at once, then all let go: two are kept and reused
        held = [interp(**_inputs(k))["v"] for k in range(3)]
        addresses = [a.ctypes.data for a in held]
        del held
    again = [interp(**_inputs(k))["v"] for k in range(3)]
    assert [a.ctypes.data for a in again[:2]] == addresses[:2]
    assert buffers.kept_bytes() <= buffers.LIMIT


def test_idle_buffers_give_way(monkeypatch):
    monkeypatch.setattr(buffers, "LIMIT", 3 << 20)
    monkeypatch.setattr(buffers, "IDLE", 4)
    old = buffers.aligned((1 << 18,), 64)  # 2 MiB
    del old
    for _ in range(3):  # handed out 3 times after it: not idle yet, a 1.5 MiB one is not kept
        buffers.aligned((3 << 16,), 64)
    assert buffers.kept_bytes() == (1 << 21) + 64
    buffers.aligned((3 << 16,), 64)  # the 4th: the 2 MiB buffer gives way
    assert buffers.kept_bytes() == (3 << 19) + 64


def test_small_results_are_not_kept(interp):
    native.compile(ct.load("examples/interp.teil"), {"E": 2, "m": 7, "n": 7})(**{
        "A": np.ones((7, 7)), "u": np.ones((2, 7, 7, 7))})
    assert buffers.kept_bytes() == 0


@DIFF
@given(st.data(), st.sampled_from([1, 64]))
def test_every_path_writes_what_it_reads_from_a_reused_buffer(data, chunk):
    # every buffer kept (no size limit below) and filled with NaN before reuse: a path that
    # read a value it had not written (as fresh, zeroed pages would hide) yields NaN
    program, params, inputs = _example_case(data.draw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(buffers, "MIN_BYTES", 0)
        mp.setattr(buffers, "POISON", True)
        mp.setattr(native, "PAGE_ALIGNED_MIN", 0)
        if chunk > 1:
            _lowered_thresholds(mp, chunk)
        for pad in (None, 2):
            for _ in range(2):  # the second run reuses the first's buffers
                both(program, inputs, params, pad)


def test_poison_is_seen_by_a_reader_of_unwritten_values(monkeypatch):
    # the differential test above can fail: a buffer read before it is written shows NaN
    monkeypatch.setattr(buffers, "MIN_BYTES", 0)
    monkeypatch.setattr(buffers, "POISON", True)
    a = buffers.aligned((4, 4), 64)
    a[...] = 1.0
    del a
    assert np.isnan(buffers.aligned((4, 4), 64)).all()


@pytest.mark.parametrize(("text", "limit"), [(None, 1 << 30), ("0", 0), (" 4096 ", 4096), ("1G", None),
                                             ("-1", None), ("1e9", None), ("", None), ("١٢", None)])
def test_the_limit_is_a_number_of_bytes(text, limit):
    assert buffers._limit(text) == limit


def test_a_limit_that_is_not_a_number_is_refused_at_the_first_large_buffer(interp, monkeypatch, tmp_path):
    monkeypatch.setenv(buffers.ENV_LIMIT, "1G")
    monkeypatch.setattr(buffers, "LIMIT", None)
    with pytest.raises(TeilInputError, match=r"CORE_TEIL_KEEP_BYTES='1G' is not a number of bytes"):
        interp(**_inputs(0))
    # the command line: exit 2 (bad input), the message, no traceback
    for name, x in _inputs(0).items():
        np.save(tmp_path / f"{name}.npy", x)
    exe = Path(sys.executable).with_name("core-teil")
    done = subprocess.run([str(exe), "run", "examples/interp.teil", "--engine", "native",
                           "--input", f"A={tmp_path / 'A.npy'}", "--input", f"u={tmp_path / 'u.npy'}",
                           "--output", str(tmp_path / "v.npz")], capture_output=True, text=True, check=False,
                          env={**os.environ, buffers.ENV_LIMIT: "1G"}, cwd=ROOT)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "CORE_TEIL_KEEP_BYTES='1G' is not a number of bytes" in done.stderr


def test_a_child_forked_while_the_lock_is_held_can_allocate():
    # the lock taken by "another thread" at the moment of the fork: the child gets a fresh one
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    with buffers._LOCK:
        child = ctx.Process(target=buffers.aligned, args=((1 << 18,), 64), daemon=True)
        child.start()
    child.join(30)
    try:
        assert child.exitcode == 0
    finally:
        if child.is_alive():
            child.kill()
