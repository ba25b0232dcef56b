"""Review r26a of ``tk_largest_abs`` (native/teil_kernels.h, 6f7fa84..) and ``bench cross-core``.

``tk_largest_abs`` is the overflow guard's measure of an input (``_native.largest_abs`` for
``engine.largest_size``, ``_native.magnitude`` for ``Kernel._run_fast``).  Its contract: exactly
``max(|v| for v in a if not isnan(v))``, +0.0 when there is no such value (empty, all NaN, only
zeros); inf counts.  It reads sixteen values an iteration into eight two-lane MAXPD
accumulators, then a scalar tail, so each test below places the value that decides at every
position relative to that layout: each lane, each iteration, the tail, with NaN after it in the
same lane, from a start that is 16-byte aligned, 8-byte aligned, or not aligned at all.  An
under-report is the dangerous direction: the guard then lets the plan reorder a sum that
overflows (the end-to-end tests compare ``ct.compile`` with ``ct.evaluate`` on such sums).
Each test names the mutants of the review it kills (the report lists them).
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import core_teil as ct
from core_teil.native import _native
from core_teil.native import engine as native
from tests.test_native import agree

BIG = sys.float_info.max
ROOT = Path(__file__).resolve().parent.parent

#: Every length up to three iterations and a tail, then lengths around larger multiples of 16.
LENGTHS = list(range(0, 50)) + [63, 64, 65, 79, 80, 81, 127, 128, 129, 255, 256, 257]


def _reference(a: np.ndarray) -> float:
    """The contract, one value at a time: +0.0 when no value is a number."""
    m = 0.0
    for v in a.reshape(-1).tolist():
        if not math.isnan(v) and abs(v) > m:
            m = abs(v)
    return m


def _placed(values: np.ndarray, byte_offset: int) -> np.ndarray:
    """``values`` as a C-contiguous float64 array whose data starts ``byte_offset`` bytes past a
    16-byte boundary (0: aligned for MOVAPD; 8: aligned for a double only; others: not even that;
    numpy calls those unaligned but they are C-contiguous float64 all the same)."""
    raw = np.zeros(values.nbytes + 32, dtype=np.uint8)
    start = (-raw.ctypes.data) % 16 + byte_offset
    out = raw[start:start + values.nbytes].view(np.float64)
    out[...] = values
    assert out.flags.c_contiguous and (out.ctypes.data % 16 == byte_offset or not out.size)
    return out


def _both(a: np.ndarray) -> tuple[float, float]:
    return _native.largest_abs(a), _native.magnitude(a)


def _check(a: np.ndarray, context: object) -> None:
    want = _reference(a)
    got, mag = _both(a)
    assert got == want and math.copysign(1.0, got) == 1.0, (context, got, want)
    assert mag == max(1.0, want), (context, mag, want)


@pytest.mark.parametrize("byte_offset", [0, 8, 1, 4])
def test_the_largest_is_found_at_every_position_with_nan_after_it_in_its_lane(byte_offset):
    # Mutants: _mm_max_pd(acc, x) for (x, acc), which hands a lane's NaN on and the lane's
    # maximum is then lost (H01); the sign bit kept or an exponent/mantissa bit cleared by the
    # mask (H02, H03, H04, H28); andnot; MINPD (H29); a register, a lane or the last iteration
    # left out (H08, H10, H11, H13, H14, H15, H30); a load that ignores i (H32); the tail
    # without fabs, or `m > v ? m : v` that keeps a NaN met last (H22, H24, H25); the
    # accumulators started at 1, -1 or NaN (H18, H19, H20); an aligned load (H27: SIGSEGV)
    rng = np.random.default_rng(byte_offset)
    for n in LENGTHS:
        positions = range(n) if n <= 81 else sorted({0, 1, 15, 16, 17, n // 2, n - 17, n - 16, n - 2, n - 1})
        small = rng.uniform(-0.5, 0.5, n)
        for at in positions:
            for big in (-7.000000000000001, 7.0, np.inf, -np.inf, 3e-310, -BIG):
                b = np.abs(small) * 1e-320 if big == 3e-310 else small.copy()  # subnormals around it
                b[at] = big
                b[at + 16::16] = np.nan  # every later value of its lane: NaN
                if at + 1 < n:
                    b[at + 1] = np.nan  # and the other lane of its register
                _check(_placed(b, byte_offset), (n, byte_offset, at, big))


@pytest.mark.parametrize("byte_offset", [0, 8, 3])
def test_what_follows_the_array_in_memory_is_never_read(byte_offset):
    # Mutants: `i + 15 <= n` (H06) or loads at 2 * j + 1 (H12) read the value after the last one;
    # largest_abs reading from p + 1 (X02).  The array is a prefix of a buffer whose next values
    # are the largest double.
    for n in range(0, 70):
        raw = np.full(n + 32, BIG)
        raw[:n] = np.linspace(-2.0, 2.0, n)
        buf = _placed(raw, byte_offset)
        _check(buf[:n], (n, byte_offset))
        _check(buf[1:n + 1][:n - 1] if n else buf[:0], ("from 1", n, byte_offset))


@pytest.mark.parametrize("n", LENGTHS)
def test_no_number_gives_positive_zero(n):
    # Mutant H21 (m starts at -0.0): -0.0 == 0.0, so the sign is checked; every value NaN,
    # -0.0, or -0.0 among NaN, in the vector part and in the tail
    for values in (np.full(n, np.nan), np.full(n, -0.0), np.where(np.arange(n) % 3 == 0, -0.0, np.nan)):
        got, mag = _both(values)
        assert got == 0.0 and math.copysign(1.0, got) == 1.0, (n, values[:3])
        assert mag == 1.0
        assert math.copysign(1.0, native.largest_size(values)) == 1.0


def test_the_last_value_counts():
    # Mutants X01 (largest_abs scans n - 1 values), X06 (magnitude scans n - 1), H25
    for n in LENGTHS[1:]:
        a = np.zeros(n)
        a[-1] = -5.5
        assert _both(a) == (5.5, 5.5), n
        a[-1] = np.nan
        a[0] = -5.5
        assert _both(a) == (5.5, 5.5), n


def test_magnitude_counts_anything_below_one_as_one():
    # Mutants X03 (no max(1, .)), X05 (min for max), X08 (max(0.5, .)); X04 (`>=`) is equivalent
    for n in (1, 16, 33):
        above_one = np.nextafter(1.0, 2.0)
        for top, want in ((0.0, 1.0), (0.5, 1.0), (0.75, 1.0), (1.0, 1.0), (above_one, above_one),
                          (1.5, 1.5), (1e300, 1e300), (np.inf, np.inf)):
            a = np.full(n, top / 2)
            a[n // 2] = -top
            assert _native.magnitude(a) == want, (n, top)


def test_magnitude_leaves_other_byte_orders_to_its_caller():
    # Mutant X07 (the byte-order check dropped): 2.0 read as a little-endian double is 3.2e-319
    a = np.array([2.0] * 20).astype(">f8")
    assert _native.magnitude(a) == -1.0
    assert native.largest_size(a) == 2.0


def test_views_read_only_and_0d_arrays_read_their_own_values():
    x = np.arange(-40.0, 40.0)
    x[5] = -1e300  # outside the views below
    ro = x[10:50].copy()
    ro.flags.writeable = False
    for a, want in ((x[10:50], 30.0), (ro, 30.0), (np.array(-2.5), 2.5), (np.array(np.nan), 0.0),
                    (x[10:50].reshape(5, 8), 30.0), (x[6:7].reshape(()), 34.0)):
        assert a.flags.c_contiguous
        assert _both(a) == (want, max(1.0, want)), a


def test_nan_payloads_and_every_bit_pattern_agree_with_the_reference():
    # any 64-bit pattern: NaNs of either sign and any payload, subnormals, both zeros, inf
    rng = np.random.default_rng(26)
    for n in list(range(0, 40)) + [100, 1000]:
        for _ in range(20):
            a = rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False).view(np.float64)
            _check(a, n)
            _check(_placed(a, 1), n)


def test_more_than_two_to_the_31_values_are_all_read():
    # Mutant H31 (n as int: 2^31 + 40 wraps negative and nothing is read).  np.zeros maps the
    # zero page lazily: 16 GiB of address space, almost none of it resident.
    n = (1 << 31) + 40
    try:
        a = np.zeros(n)
    except MemoryError:
        pytest.skip("no 16 GiB of address space")
    a[(1 << 31) + 3] = -5.0
    a[(1 << 31) - 7] = 3.0
    assert _native.largest_abs(a) == 5.0
    a[(1 << 31) + 3] = 0.0
    assert _native.magnitude(a) == 3.0


# --------------------------------------------------------------------------
# end to end: the guard must refuse to reorder a sum that overflows
# --------------------------------------------------------------------------

SUM = ("lang full\nparam m, n\ninput alloc A : [m]\ninput alloc B : [n]\noutput alloc O : [m]\n"
       "O = red 2 (prod A B)\n")
M, N = 40, 37


def _kernel(path: str, monkeypatch: pytest.MonkeyPatch):
    program = ct.parse(SUM)
    params = {"m": M, "n": N}
    k = ct.compile(program, params)
    k(A=np.ones(M), B=np.ones(N))
    (c,) = k._compiled.values()
    assert c.fast is not None  # the repeated-call path: _native.magnitude
    if path == "checked":  # Kernel._run: engine.largest_size, _native.largest_abs
        monkeypatch.setattr(c, "fast", None)
    return program, params, k


@pytest.mark.parametrize("path", ["fast", "checked"])
def test_a_sum_that_overflows_is_left_to_the_equations_wherever_its_large_factor_is(path, monkeypatch):
    # A · Σ B reordered from Σ A · B: with A[at] = 1e10 and B holding 1e300 and -1e300, the
    # equations give 1e310 - 1e310 = • in row `at`; the reordered plan would give 1e10 · 35.
    # Any under-report of max |A| in any lane lets the guard accept the plan.
    program, params, k = _kernel(path, monkeypatch)
    b = np.ones(N)
    b[5], b[6] = 1e300, -1e300
    for at in range(M):
        a = np.full(M, 0.5)
        a[at] = 1e10
        a[(at + 16) % M] = np.nan if at + 16 < M else 0.5  # NaN later in its lane
        want = ct.evaluate(program, {"A": a, "B": b}, params)
        assert np.isnan(want["O"][at])
        agree(k(A=a, B=b), want)


@pytest.mark.parametrize("path", ["fast", "checked"])
def test_a_sum_that_overflows_is_left_to_the_equations_wherever_its_large_terms_are(path, monkeypatch):
    # 2 · 1e308 - 2 · 1e308 = • by the equations; 2 · (1e308 - 1e308 + 35) by the plan
    program, params, k = _kernel(path, monkeypatch)
    a = np.full(M, 2.0)
    for at in range(N):
        b = np.ones(N)
        b[at], b[(at + 1) % N] = 1e308, -1e308
        want = ct.evaluate(program, {"A": a, "B": b}, params)
        assert np.isnan(want["O"]).all()
        agree(k(A=a, B=b), want)


# --------------------------------------------------------------------------
# python -m bench cross-core
# --------------------------------------------------------------------------


def _small(monkeypatch: pytest.MonkeyPatch, module: object) -> None:
    """mttkrp 50^3 instead of 250^3 (chunks of 2 N rows, as the module's own ROWS)."""
    monkeypatch.setattr(module, "N", 50)
    monkeypatch.setattr(module, "ROWS", 100)


@pytest.mark.parametrize("fast_ms,state", [(math.inf, "fast"), (-1.0, "slow")])
def test_cross_core_names_the_state_by_the_probe(monkeypatch, capsys, fast_ms, state):
    # Mutants B03 (`probe > FAST_MS`), B04 (only the fast state printed): the threshold is
    # moved so that every probe is fast, or every one slow
    from bench import cross_core

    _small(monkeypatch, cross_core)
    monkeypatch.setattr(cross_core, "FAST_MS", fast_ms)
    assert cross_core.main(["0.01"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:]]
    assert [r[:2] for r in rows] == [[state, "1"]]
    assert all(float(v) >= 0.0 for v in rows[0][2:])


def test_cross_core_refuses_to_time_a_kernel_that_disagrees(monkeypatch, capsys):
    # Mutants B05 (returns 0 after the disagreement), B06 (check negated), B07 (rtol 1.0):
    # a kernel off by one part in 10^8 is not timed
    from bench import cross_core

    _small(monkeypatch, cross_core)
    real = ct.compile

    def off(*args, **kwargs):
        k = real(*args, **kwargs)
        return lambda **x: {n: v * (1 + 1e-8) for n, v in k(**x).items()}

    monkeypatch.setattr(cross_core.ct, "compile", off)
    assert cross_core.main(["0"]) == 1
    assert capsys.readouterr().out.strip() == "native and hand numpy disagree"


def test_python_m_bench_cross_core_runs():
    # Mutant B01: the command line's name (the smoke test of tests/test_bench.py calls main)
    out = subprocess.run([sys.executable, "-m", "bench", "cross-core", "0"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("mttkrp 250^3, medians in ms per state")
