"""Review r15e of emit-c's fused loops (h15p, commits 1b88d35 and c123324): tests for the
mutants of ``sums_inside`` and ``transposed_copies`` that tests/test_emit_c_loops.py let
survive.

* The limit of a Σ summed inside the innermost loop is 16 terms exactly (``MAX_SUM_INSIDE``,
  docs/decisions.md), and a statement that accumulates gets no transposed copy.
* A copy of an input of rank 3 (the least rank where a permutation and its inverse differ)
  puts the inner loop's dimension last; one input read in two orders gets two copies; the
  copies compute the reference doubles bit for bit, padded and unpadded, with a symbolic
  extent in the copy, and with -0.0, NaN and -inf in the copied inputs themselves.
* Only caller inputs that are the same for every batch element are copied, and only where
  a copy makes the read unit-stride: a workspace slot written before the group (copied at
  entry it would be read before it is written), an input read along the batch index, a
  diagonal read and an unfused statement's read are read where they are.
* The kernel stays within the ``NAME_work(...)`` doubles it asks for (the copies counted).
* The copy's accesses are among those the check proves in bounds.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from tests.test_emit_c import CC, ROOT, E, build, call, padded, random_inputs, work_size

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on this machine")

INTERP = ROOT / "examples" / "interp.teil"

#: t[e, b, c, f] = Σ_m u[e, m, b] * B[f, m, c]: B is read along the innermost loop (f) at its
#: first dimension, so its copy has the order (1, 2, 0) (inverse (2, 0, 1)); then
#: v[e, b, c, k] = Σ_m t[e, b, c, m] * A[k, m], A copied as (1, 0).
RANK3 = """lang full
param E, n, p, q, r
input alloc B : [p, n, q]
input alloc A : [r, p]
input alloc u : [E, n, q]
alloc t : [E, q, q, p]
output alloc v : [E, q, q, r]
t = contr 2 5 (prod u (transp 1 3 B))
v = contr 4 6 (prod t A)
"""
RANK3_PARAMS = {"E": 3, "n": 4, "p": 5, "q": 2, "r": 3}

#: W, a workspace allocation written by statement 1, is read batch-invariantly and with a
#: stride by the fused statements 2 and 3 (W[c, m]).
WORKREAD = """lang full
param E, n, p
input alloc A : [p, n]
input alloc u : [E, n, n]
alloc W : [p, n]
alloc t : [E, n, p]
output alloc v : [E, p, p]
W = add A A
t = contr 2 5 (prod u W)
v = contr 2 5 (prod t W)
"""
WORKREAD_PARAMS = {"E": 3, "n": 4, "p": 2}

#: X[e, i, m] is read along the innermost loop (i) with a stride, but also along the batch
#: index e: not the same for every element.
BATCHVAR = """lang full
param E, n, p, q
input alloc X : [E, p, n]
input alloc C : [q, n]
alloc t : [E, q, p]
output alloc v : [E, q, p]
t = transp 2 3 (contr 3 5 (prod X C))
v = add t t
"""

#: B read along the innermost loop at dimension 1 (statement 1, B[f, m, c]) and at dimension 2
#: (statement 2, B[m, g, f]): two copies, in the orders (1, 2, 0) and (0, 2, 1).
TWOPERM = """lang full
param E, n, p, q
input alloc B : [p, n, q]
input alloc u : [E, n, q]
alloc t : [E, q, q, p]
output alloc v : [E, q, q, q, n]
t = contr 2 5 (prod u (transp 1 3 B))
v = contr 4 5 (prod t (transp 2 3 B))
"""

#: D[c, c, m]: the inner loop c reads the diagonal, which no order of D makes unit-stride.
DIAGREAD = """lang full
param E, n, p, q
input alloc D : [p, p, n]
input alloc u : [E, n, q]
alloc t : [E, q, p]
output alloc v : [E, q, p]
t = contr 2 5 (prod u (diag 1 2 D))
v = add t t
"""

#: One statement (no fused group) reading B[j, m] with a stride along its inner loop j.
TMATMUL = "lang full\nparam m, n, h\ninput alloc A : [m, h]\ninput alloc B : [n, h]\noutput alloc C : [m, n]\n" \
          "C = contr 2 4 (prod A B)\n"


def bits(a: np.ndarray) -> np.ndarray:
    """IEEE bit patterns, NaN's as one pattern (``np.array_equal`` equates -0.0 and +0.0)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    return np.where(np.isnan(a), np.int64(0x7FF8000000000000), a.view(np.int64))


def special_inputs(p: ct.Program, params: dict[str, int], seed: int, infinite: bool,
                   copied: bool = False) -> dict[str, np.ndarray]:
    """Normal values; batch element 0 of every batched input all -0.0 (with positive
    coefficients its sums are -0.0 only when they start from -0.0), element 1 with 0, NaN
    and ±inf (or 1 and -0.0 when padded: inf · 0 padding is NaN).  The batch-invariant
    inputs (the copied ones) positive but for one -0.0, which makes the sums that meet it in
    element 0 +0.0; with ``copied``, the first of them also has -inf (when not padded) and
    NaN, in one slice of it, so that some outputs stay finite."""
    inputs = random_inputs(p, params, seed, specials=False)
    first = True
    for name, x in inputs.items():
        if x.ndim == 3 and x.shape[0] == params["E"]:
            x[0] = -0.0
            x[1].reshape(-1)[:4] = [0.0, np.nan, np.inf, -np.inf] if infinite else [0.0, np.nan, 1.0, -0.0]
        else:
            x = inputs[name] = np.abs(x) + 0.5
            flat = x.reshape(-1)
            flat[0] = -0.0
            if copied and first:
                flat[[1, 3]] = [-np.inf if infinite else 2.0, np.nan]
            first = False
    return inputs


def parse(text: str, name: str) -> ct.Program:
    return ct.parse(text, f"{name}.teil")


#: (kernel name, program, parameters fixed at emit time, pad, parameter sets to run)
KERNELS: list[tuple[str, str, dict[str, int], int | None, list[dict[str, int]]]] = [
    ("rv_rank3", RANK3, RANK3_PARAMS, None, [RANK3_PARAMS]),
    ("rv_rank3_pad", RANK3, RANK3_PARAMS, 4, [RANK3_PARAMS]),
    ("rv_twoperm", TWOPERM, {"E": 3, "n": 4, "p": 5, "q": 2}, None, [{"E": 3, "n": 4, "p": 5, "q": 2}]),
    # p symbolic: B's copy has a symbolic (padded) extent, and the second Σ (over p) accumulates
    ("rv_rank3_p", RANK3, {"E": 3, "n": 4, "q": 2, "r": 3}, 4,
     [RANK3_PARAMS, {**RANK3_PARAMS, "p": 1}, {**RANK3_PARAMS, "p": 6}]),
    ("rv_workread", WORKREAD, WORKREAD_PARAMS, None, [WORKREAD_PARAMS]),
]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    table = {name: E.emit_c(parse(text, name), params, pad, name=name) for name, text, params, pad, _ in KERNELS}
    return build(list(table.values()), tmp_path_factory.mktemp("emitc-loops-review")), table


def test_a_sum_of_sixteen_terms_is_summed_inside_and_one_of_seventeen_accumulates():
    # MAX_SUM_INSIDE = 16 (GCC's complete-unroll limit, docs/decisions.md); the copy of A is
    # made only where the statement sums inside (a strided read of an accumulating loop
    # is not the inner loop's)
    p = ct.load(str(INTERP))
    sixteen = E.emit_c(p, {"E": 2, "m": 3, "n": 16}).c
    assert "double ct_s1 = -0.0;" in sixteen and "ct_w_A_t1_0_w4[ct_m1 * 4 + ct_k4]" in sixteen
    assert not re.search(r"\] = -0\.0;", sixteen)
    seventeen = E.emit_c(p, {"E": 2, "m": 3, "n": 17}).c
    assert "ct_s1" not in seventeen and "ct_w_A_t" not in seventeen
    assert len(re.findall(r"\] = -0\.0;", seventeen)) == 3  # three accumulating statements
    # padded, the Σ runs over the padded extent: 9 terms padded to 8 are 16 (inside), 13 padded
    # to 4 are 16 too, 17 padded to 4 are 20 (accumulating)
    assert "double ct_s1 = -0.0;" in E.emit_c(p, {"E": 2, "m": 3, "n": 9}, 8).c
    assert "double ct_s1 = -0.0;" in E.emit_c(p, {"E": 2, "m": 3, "n": 13}, 4).c
    assert "ct_s1" not in E.emit_c(p, {"E": 2, "m": 3, "n": 17}, 4).c


def test_a_rank_three_input_is_copied_with_the_inner_dimension_last(kernels):
    _, table = kernels
    c = table["rv_rank3"].c
    # B : [p, n, q] = [5, 4, 2] read as B[f, m, c] with f innermost: the copy is [n, q, p]
    # (order (1, 2, 0)), written at [m, c, f] from B[f, m, c]
    assert "ct_w_B_t1_2_0[ct_k2 * 10 + ct_k3 * 5 + ct_k1] = B[ct_k1 * 8 + ct_k2 * 2 + ct_k3];" in c
    assert "(u[ct_k1 * 8 + ct_m1 * 2 + ct_k2] * ct_w_B_t1_2_0[ct_m1 * 10 + ct_k3 * 5 + ct_k4])" in c
    assert "ct_w_A_t1_0_w4[ct_m2 * 4 + ct_k4]" in c  # rows of 3 padded to a vector tile's 4
    assert not re.search(r"\bB\[ct_k4", c)  # no strided read of B is left
    # one input read in two orders: two copies, each read unit-stride along its inner loop
    two = table["rv_twoperm"].c
    assert "ct_w_B_t0_2_1[ct_k1 * 8 + ct_k3 * 4 + ct_k2] = B[ct_k1 * 8 + ct_k2 * 2 + ct_k3];" in two
    assert "ct_w_B_t1_2_0[ct_m1 * 10 + ct_k3 * 5 + ct_k4]" in two
    assert "ct_w_B_t0_2_1[ct_m2 * 8 + ct_k4 * 4 + ct_k5]" in two


@pytest.mark.parametrize("name", [k[0] for k in KERNELS])
def test_the_copies_compute_the_reference_doubles_bit_for_bit(kernels, name):
    lib, table = kernels
    _, text, _, pad, runs = next(k for k in KERNELS if k[0] == name)
    p = parse(text, name)
    src = table[name]
    for params, copied in ((params, copied) for params in runs for copied in (False, True)):
        inputs = special_inputs(p, params, seed=len(params) + params["p"], infinite=pad is None, copied=copied)
        want = ct.evaluate(p, inputs, params, pad)["v"]
        if not copied:  # element 0 has +0.0 and -0.0 sums, element 1 •, element 2 numbers
            zero = want[0] == 0.0
            assert (zero & np.signbit(want[0])).any() and (zero & ~np.signbit(want[0])).any()
            assert np.isnan(want[1]).any() and np.isfinite(want[2]).all()
        else:
            assert np.isnan(want).any() and np.isfinite(want).any()
        for work in (False, True):
            rc, got = call(lib, src, inputs, params, work=work)
            assert rc == 0
            g = got["v"][tuple(slice(0, k) for k in want.shape)]
            np.testing.assert_array_equal(bits(g), bits(want), err_msg=f"{name} at {params}, {copied}, {work}")


def test_only_inputs_the_same_for_every_batch_element_are_copied(kernels):
    _, table = kernels
    # W is computed by statement 1: a copy made at entry would copy it before it is written
    # (its values are the bitwise test's); it is read where it is
    c = table["rv_workread"].c
    assert "ct_w_W_t" not in c and "ct_w_W_a[ct_k3 * 4 + ct_m1]" in c
    # X[e, i, m] is read along the batch index: a copy would be of the whole batch, every call
    x = E.emit_c(parse(BATCHVAR, "batchvar"), {"E": 3, "n": 4, "p": 2, "q": 5}).c
    assert "double ct_s1 = -0.0;" in x and "ct_w_X" not in x and "X[ct_k1 * 8 + ct_k3 * 4 + ct_m1]" in x
    # a diagonal read (the inner loop at two dimensions) stays strided in any order: no copy
    d = E.emit_c(parse(DIAGREAD, "diagread"), {"E": 3, "n": 4, "p": 2, "q": 5}).c
    assert "double ct_s1 = -0.0;" in d and "ct_w_D" not in d and "D[ct_k3 * 12 + ct_m1]" in d
    # an unfused statement accumulates; its strided read is not the inner loop's: no copy
    t = E.emit_c(parse(TMATMUL, "tmatmul"), {"m": 2, "n": 3, "h": 4}).c
    assert "ct_w_" not in t and "B[ct_k2 * 4 + ct_m1]" in t


@pytest.mark.parametrize("name,params,copied", [("rv_rank3", RANK3_PARAMS, ("A", "B")),
                                               ("rv_rank3_p", {**RANK3_PARAMS, "p": 6}, ("B",))])
def test_the_kernel_writes_only_the_workspace_it_asks_for(kernels, name, params, copied):
    # the copies are counted in NAME_work(...): a kernel given exactly that many doubles
    # leaves the doubles after them alone, and its slots (the copies, the block of t) do not
    # overlap (with p symbolic, A's Σ over p accumulates: no copy of A)
    lib, table = kernels
    src = table[name]
    p = parse(RANK3, name)
    inputs = special_inputs(p, params, seed=7, infinite=False)
    need = work_size(lib, src, params)
    # A : [r, p] is copied as [p, r] with its rows of r = 3 padded to a vector tile's 4
    shapes = {"A": (params["p"], 4), "B": src.shape("B", params)}
    assert [x for x in ("A", "B") if f"ct_w_{x}_t" in src.c] == list(copied)
    block = src.shape("v", params)[1:3] + (src.shape("B", params)[0],)  # t's block: [q, q, p]
    assert need == sum(int(np.prod(shapes[x])) for x in copied) + int(np.prod(block))
    fn = getattr(lib, src.name)
    fn.restype = ctypes.c_int
    buf = np.full(need + 64, np.pi)
    arrays = [np.ascontiguousarray(padded(inputs[a.name], src.shape(a.name, params))) for a in src.args
              if a.role == "input"]
    out = np.full(src.shape("v", params), 1234.5)
    args: list[Any] = [ctypes.c_ssize_t(params[a.name]) for a in src.args if a.role == "param"]
    args += [a.ctypes.data_as(ctypes.c_void_p) for a in arrays] + [out.ctypes.data_as(ctypes.c_void_p),
                                                                     buf.ctypes.data_as(ctypes.c_void_p)]
    assert fn(*args) == 0
    assert (buf[need:] == np.pi).all()
    want = ct.evaluate(p, inputs, params, src.pad)["v"]
    np.testing.assert_array_equal(bits(out[tuple(slice(0, k) for k in want.shape)]), bits(want))


def test_the_check_proves_the_copys_accesses(monkeypatch):
    seen: list[Any] = []
    real = E.check_accesses

    def spy(accesses: list[Any], typed: Any) -> int:
        seen.extend(accesses)
        return real(accesses, typed)

    monkeypatch.setattr(E, "check_accesses", spy)
    src = E.emit_c(parse(RANK3, "rank3"), RANK3_PARAMS)
    copies = [(a.storage.cname, a.write, a.storage.shape) for a in seen if a.where.startswith("transposed copy")]
    x = E.ext
    # A's copy has its rows of 3 padded to a vector tile's 4: the copy, then the zero lane
    assert copies == [("ct_w_B_t1_2_0", True, (x(4), x(2), x(5))), ("B", False, (x(5), x(4), x(2))),
                      ("ct_w_A_t1_0_w4", True, (x(5), x(4))), ("A", False, (x(3), x(5))),
                      ("ct_w_A_t1_0_w4", True, (x(5), x(4)))]
    assert [a.index[-1] for a in seen if a.where.startswith("transposed copy of A")][-1] == x(4)
    assert src.checked == len(seen)
