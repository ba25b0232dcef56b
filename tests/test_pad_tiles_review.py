"""Review of commits c413915 (``engine.rounds_up``: a pad that rounds no extent up is run
unchecked) and 061c8de (emit-c tiles padded statements over their padded extents): tests for
the mutants tests/test_cjit.py, tests/test_cjit_padded_review.py, tests/test_native_fast.py
and tests/test_emit_c_tiles*.py let through.

- ``rounds_up`` looking at the inputs' allocations only, at the outputs' only, or at each
  allocation's first extent only: an intermediate whose second extent the pad rounds up is
  padding all the same, and an ``inf`` meeting it must be refused as ``ct.evaluate`` refuses it.
- ``Kernel._run`` bounding every statement whether or not the pad rounds anything: the commit
  says such a run is not bounded before, and the bounds cost a scan of the inputs.
- ``tile_of`` choosing its lanes, or its width, from the declared (unpadded) extent of a row:
  the padded rows are whole vectors of the padded extent.

One more test records a defect of c413915 itself, since fixed: an ``expa`` extent that no
allocation has is padded too, and ``rounds_up`` did not see it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from core_teil.lang.typing import check_program
from core_teil.native import cjit
from core_teil.native import engine as native
from core_teil.semantics.eval import PaddingUnsound
from tests.test_cjit import padded_c
from tests.test_cjit import random_inputs as finite_inputs
from tests.test_cjit_review import cache, small  # noqa: F401 (the fixtures)
from tests.test_emit_c import build, call, random_inputs
from tests.test_emit_c_loops import bits
from tests.test_emit_c_tiles import INTERP, NATIVE, E

# C for every plan, however small, on one thread, into a private cache (test_cjit_review's fixture)
pytestmark = [pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine"),
              pytest.mark.usefixtures("small")]

#: T : [n, K], an intermediate, is the only allocation with an extent (K, its second) that a pad
#: of 4 rounds up when n = 4 and K = 3; the inputs and the output are [n] and [n, n].
#: w[i, j] = Σ_k T[i, k] · C[j]: padded, the k = 4 term is T's padding (0) · C[j].
SECOND_EXTENT = """lang full

param K, n

input alloc B : [n]
input alloc C : [n]
alloc T : [n, K]
output alloc w : [n, n]

T = expa 2 K B
w = red 2 (prod T C)
"""

#: The same sum with K in no allocation at all: the padded ``expa`` alone makes the padding.
EXPA_ONLY = """lang full

param K, n

input alloc B : [n]
input alloc C : [n]
output alloc w : [n, n]

w = red 1 (prod (expa 1 K B) C)
"""


def inf_inputs() -> dict[str, np.ndarray]:
    """B finite and non-zero, C[0] = inf: unpadded w[:, 0] is ±inf, padded it meets 0 · inf."""
    return {"B": np.array([1.0, 2.0, -1.0, 0.5]), "C": np.array([np.inf, 1.0, 2.0, 3.0])}


def test_an_intermediates_second_extent_rounded_up_is_padding() -> None:
    # kills rounds_up over the inputs' allocations only, the outputs' only, or first extents
    # only: each of those sees n = 4 alone and calls this program unpadded, so the padded C's
    # NaN (3 · B · inf + 0 · inf) would be returned where ct.evaluate refuses it (Theorem 3)
    p = ct.parse(SECOND_EXTENT)
    params = {"K": 3, "n": 4}
    assert native.rounds_up(check_program(p, params), 4)
    assert not native.rounds_up(check_program(p, {"K": 4, "n": 4}), 4)  # the same program, nothing rounded
    x = inf_inputs()
    assert np.isinf(ct.evaluate(p, x, params)["w"][:, 0]).all()
    with pytest.raises(PaddingUnsound, match="Theorem 3"):
        ct.evaluate(p, x, params, 4)
    kernel = padded_c(p, params, 4)
    with pytest.raises(PaddingUnsound, match="Theorem 3"):
        kernel(**x)


def test_the_plan_bounds_nothing_when_the_pad_rounds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # the plan path (no C) of a pad that rounds no extent up takes no planner.bound of any
    # statement, as an unpadded run takes none (commit c413915: "neither bounded before nor
    # compared after"); kills Kernel._run bounding whenever it is given a list.  A pad that
    # rounds m = n = 3 up bounds every statement: the spy sees the calls it is there to see
    monkeypatch.setenv(cjit.ENV_SWITCH, "0")
    calls: list[int] = []
    real = native.bound

    def spy(*args: Any) -> float:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(native, "bound", spy)
    p = ct.load(str(INTERP))
    for params, pad, bounded in (({"E": 4, "m": 4, "n": 8}, 4, False), ({"E": 4, "m": 4, "n": 8}, None, False),
                                 ({"E": 4, "m": 3, "n": 3}, 4, True)):
        kernel = ct.compile(p, params, pad)
        assert cjit.why_not(kernel) is not None  # the plan runs
        x = finite_inputs(p, params, 0)
        calls.clear()
        got = kernel(**x)["v"]
        assert bool(calls) is bounded, (params, pad)
        assert np.allclose(got, ct.evaluate(p, x, params)["v"], rtol=1e-12, atol=1e-12)


def tile_comments(c: str) -> set[str]:
    return set(re.findall(r"/\* rows [^*]*\*/", c))


def test_padded_tiles_take_their_lanes_and_width_from_the_padded_extent(tmp_path: Path) -> None:
    # n = 3 with pad 8: rows of 8, one vector of 8 (lanes chosen from the declared 3 would be 4,
    # two vectors of 4 each, or one of 4 that leaves elements 5..8 to no lane); n = 5 with pad
    # 16: rows of 16, two vectors of 8 (a width from the declared 5 would be 8, and R's copy of
    # rows of 8 too short for the padded loops).  Kills lanes and/or width from the unpadded
    # extent; then both kernels compute ct.evaluate(pad)'s doubles, padding included
    p = ct.load(str(INTERP))
    cases = [({"E": 2, "m": 3, "n": 3}, 8), ({"E": 2, "m": 5, "n": 5}, 16)]
    sources = [E.emit_c(p, params, pad, name=f"prv{i}") for i, (params, pad) in enumerate(cases)]
    assert tile_comments(sources[0].c) == {"/* rows 1..8 of 8: 8 x 1 vectors of 8 doubles */"}
    assert tile_comments(sources[1].c) == {
        f"/* rows {r} of 16, elements {e} of 16: 8 x 1 vectors of 8 doubles */"
        for r in ("1..8", "9..16") for e in ("1..8", "9..16")}
    lib = build(sources, tmp_path, NATIVE)
    for (params, pad), src in zip(cases, sources, strict=True):
        x = random_inputs(p, params, 1)
        rc, got = call(lib, src, x, params)
        want = ct.evaluate(p, x, params, pad)["v"]
        region = tuple(slice(0, n) for n in want.shape)
        assert rc == 0 and np.array_equal(bits(got["v"][region]), bits(want)), params
        rest = got["v"].copy()
        rest[region] = 0.0
        assert np.all((rest == 0.0) | np.isnan(rest)), params  # every padded lane stored


def test_an_expa_extent_no_allocation_has_is_padding_too() -> None:
    p = ct.parse(EXPA_ONLY)
    params = {"K": 3, "n": 4}
    x = inf_inputs()
    with pytest.raises(PaddingUnsound, match="Theorem 3"):
        ct.evaluate(p, x, params, 4)
    kernel = padded_c(p, params, 4)
    # before the fix the padded C ran unchecked and returned NaN where the unpadded run has ±inf
    with pytest.raises(PaddingUnsound, match="Theorem 3"):
        kernel(**x)
