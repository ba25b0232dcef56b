"""Review of semantics.cost and bench.padded_floor: the cases tests/test_cost.py and
tests/test_bench_hand.py leave open (each test names the mistake it would catch)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import bench
import core_teil as ct
from bench import Floor
from core_teil.lang.typing import check_program
from core_teil.native import engine
from core_teil.semantics.cost import Work, work
from tests.test_bench_hand import ROOT, _tiny
from tests.test_cjit_review import cache, small  # noqa: F401 (the fixtures)
from tests.test_cost import typed_text

INTERP = str(ROOT / "examples/interp.teil")
INTERP_PARAMS = {"E": 3, "m": 2, "n": 3}


def test_an_operation_costs_both_operands_and_itself() -> None:
    # T-Elem: [[e0 + e1]](k) computes [[e0]](k) and [[e1]](k), then adds once. The bench kernels only
    # ever combine reads (cost 0), so `max(a, b) + 1` or `a + 1` would pass them; here both operands
    # are sums (over 4 and over 3 rows: 3 + 2 additions), so an element is 3 + 2 + 1 operations.
    prog = typed_text("alloc X : [4, 5]\nalloc W : [3, 5]\nalloc Y : [5]\nY = add (red X) (red W)\n")
    assert work(prog) == Work(5 * (3 + 2 + 1), 5)


def test_a_padded_table_covers_the_padded_domain() -> None:
    # Under pad 4 the table of `red X` (the expa's argument) is what ArrayInterpretation.tabulate
    # computes: every k' <= ⌈[5]⌉ = [8], each a sum over ⌈4⌉ = 4 rows (3 additions); Y's 8 elements
    # then sum ⌈3⌉ = 4 table reads (3 additions). The bench kernels' expa arguments are variables,
    # so a table sized by the unpadded extents (5 * 3 + 24 = 39) would pass them.
    prog = typed_text("alloc X : [4, 5]\nalloc Y : [5]\nY = red (expa 3 (red X))\n")
    assert work(prog, 4) == Work(8 * 3 + 8 * 3, 8)
    assert work(prog) == Work(5 * 3 + 5 * 2, 5)  # unpadded, for contrast (tests/test_cost.py's case)


def test_the_padded_floor_bound_counts_the_inputs_too() -> None:
    # The bound must be decided on the same bytes as the floor: inputs + padded outputs. With 10^6
    # input bytes at 1 GB/s (1 ms) against 184320 flops at 1 GFLOP/s (0.18 ms) the kernel is memory
    # bound; on the 32768 padded output bytes alone (0.03 ms) it would wrongly be called flops bound.
    floor = Floor(1.0, 1.0, 1, "test")
    got = bench.padded_floor(ct.load(INTERP), INTERP_PARAMS, 10**6, floor)
    assert got["pad flops"] == 3 * 8**4 * (2 * 8 - 1) and got["pad output_bytes"] == 8**5
    assert got["pad floor bound"] == "memory"
    assert got["pad floor_ms"] == pytest.approx((10**6 + 8**5) / 1e6)


@pytest.mark.usefixtures("small")  # C for every plan, however small: the padded run is emit-c's C
def test_the_padded_run_and_its_floor_use_one_pad(monkeypatch: pytest.MonkeyPatch) -> None:
    # "native pad 8 x of it" divides the padded run's time by the padded floor: both must be at
    # bench.PAD. With PAD set to 2 a kernel compiled at a literal pad (8 as before the commit, or any
    # other) is caught; the floor is then counted at 2 as well.
    monkeypatch.setattr(bench, "REPEAT", 1)
    monkeypatch.setattr(bench, "BUDGET_S", 0.0)
    monkeypatch.setattr(bench, "PAD", 2)
    pads: list[int | None] = []
    compile_ = engine.compile

    def recording(program: Any, params: Any = None, pad: int | None = None) -> engine.Kernel:
        pads.append(pad)
        return compile_(program, params, pad)

    monkeypatch.setattr(engine, "compile", recording)
    row = bench.run_kernel(_tiny(None), np.random.default_rng(0), None, Floor(10.0, 50.0, 1, "test"))
    assert sorted(pads, key=str) == [2, None]
    assert row.agree
    assert row.extra["pad flops"] == work(check_program(ct.load(INTERP), INTERP_PARAMS), 2).flops


def test_a_table_inside_a_table_is_counted() -> None:
    # A nested table was once lost (`self._tables += equation(...)` read _tables before the equation
    # added the inner table to it: 25, not 30).
    # The outer expa's argument `red (expa 4 (red X))` is tabulated over [5], and computing it tabulates
    # the inner argument `red X` over [5]: ArrayInterpretation does both once per statement.
    # red X: 5 * 1 addition; the outer table: 5 * 3 additions; Y: 5 * 2 additions -> 30.
    prog = typed_text("alloc X : [2, 5]\nalloc Y : [5]\nY = red (expa 3 (red (expa 4 (red X))))\n")
    assert work(prog) == Work(5 * 1 + 5 * 3 + 5 * 2, 5)
