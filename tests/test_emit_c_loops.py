"""emit-c's loop structure for the fused kernels of issue 15 (interp, helm): short sums in a
register inside the innermost loop, and strided batch-invariant inputs read from a
transposed copy made once per call (docs/decisions.md, "emit-c and cjit performance").

The values stay the reference engine's bit for bit (each element's sum in order from
-0.0), and the copy's accesses are proved in bounds by the emitter's check like every
other access: an off-by-one in the copy, or a copy whose extents are not permuted with its
index map, produces no C."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from tests.test_emit_c import CFLAGS, ROOT, E, build, call, random_inputs

INTERP = ROOT / "examples" / "interp.teil"
HELM = ROOT / "examples" / "helm.teil"
#: A : [m, n] with m != n, so that a copy laid out in the wrong order reads out of bounds.
INTERP_PARAMS = {"E": 3, "m": 3, "n": 5}


def bits(a: np.ndarray) -> np.ndarray:
    """IEEE bit patterns, NaN's as one pattern (``np.array_equal`` equates -0.0 and +0.0)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    return np.where(np.isnan(a), np.int64(0x7FF8000000000000), a.view(np.int64))


def test_interp_sums_inside_its_innermost_loop_and_reads_a_by_a_transposed_copy():
    src = E.emit_c(ct.load(str(INTERP)), INTERP_PARAMS)
    # the copy, once per call, before the fused loop: A : [3, 5] laid out as [5, 3], its rows
    # padded with a zero to the 4 doubles of a vector tile (tests/test_emit_c_tiles.py)
    copy = "ct_w_A_t1_0_w4[ct_k2 * 4 + ct_k1] = A[ct_k1 * 5 + ct_k2];"
    assert copy in src.c and src.c.index(copy) < src.c.index("fused over")
    assert "ct_w_A_t1_0_w4[ct_k1 * 4 + 3] = 0.0;" in src.c
    # statement 1: t1[e, k2, k3, k4] = Σ_m u[e, m, k2, k3] * A[k4, m], A read along k4 with unit stride
    assert ("double ct_s1 = -0.0;\n"
            "                        for (ptrdiff_t ct_m1 = 0; ct_m1 < 5; ++ct_m1) {\n"
            "                            ct_s1 += (u[ct_k1 * 125 + ct_m1 * 25 + ct_k2 * 5 + ct_k3] * "
            "ct_w_A_t1_0_w4[ct_m1 * 4 + ct_k4]);") in src.c
    assert not re.search(r"\bA\[ct_k4", src.c)  # no strided read of A is left
    assert not re.search(r"\] = -0\.0;", src.c)  # no target filled with -0.0 and accumulated into


def test_helm_reads_s_directly_where_it_is_unit_stride_and_by_a_copy_where_not():
    src = E.emit_c(ct.load(str(HELM)), {"E": 2, "n": 4})
    scalar = "".join(re.findall(r"#else\n(.*?)#endif", src.c, re.S))  # the loops, not the tiles
    assert scalar.count("ct_w_S_t1_0[ct_m") == 3  # t = contr 2 6 (prod t S): S[k4, m]
    assert len(re.findall(r"\bS\[ct_m\d \* 4 \+ ct_k4\]", scalar)) == 3  # v = contr 2 5 (prod v S): S[m, k4]
    assert "ct_w_S_t0_1" not in src.c  # rows of 4 need no padding: S is read where it is


def test_unfused_and_symbolic_sums_keep_the_accumulating_loop():
    matmul = E.emit_c(ct.load(str(ROOT / "examples" / "matmul.teil")), {"l": 2, "m": 3, "n": 4})
    assert "ct_s1" not in matmul.c and "+= " in matmul.c and "ct_w_" not in matmul.c
    symbolic = E.emit_c(ct.load(str(INTERP)), None)  # n unknown: the Σ cannot be unrolled
    assert "ct_s1" not in symbolic.c and "ct_w_A" not in symbolic.c


def minus_zero_inputs(p: ct.Program, params: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """Normal values; element 0 of the batch all -0.0 (with a positive coefficient matrix
    every sum there is a sum of -0.0s, which is -0.0 only when it starts from -0.0);
    element 1 with 0, NaN and ±inf (they spread over that element only)."""
    inputs = random_inputs(p, params, seed, specials=False)
    for x in ("A", "S"):
        if x in inputs:
            inputs[x] = np.abs(inputs[x]) + 0.5
    u = inputs["u"]
    u[0] = -0.0
    u[1].reshape(-1)[[0, 1, 2, 3]] = [0.0, np.nan, np.inf, -np.inf]
    return inputs


CASES = [("interp", INTERP, INTERP_PARAMS, None), ("interp_sq", INTERP, {"E": 3, "m": 4, "n": 4}, None),
         ("interp_pad", INTERP, INTERP_PARAMS, 4), ("helm", HELM, {"E": 3, "n": 3}, None),
         ("helm_pad", HELM, {"E": 3, "n": 3}, 4)]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    table = {name: E.emit_c(ct.load(str(path)), params, pad, name=f"loops_{name}")
             for name, path, params, pad in CASES}
    return build(list(table.values()), tmp_path_factory.mktemp("emitc-loops")), table


@pytest.mark.parametrize("name,path,params,pad", CASES, ids=[c[0] for c in CASES])
def test_the_fused_kernels_compute_the_reference_doubles_bit_for_bit(kernels, name, path, params, pad):
    lib, table = kernels
    p = ct.load(str(path))
    src = table[name]
    assert "ct_s1 = -0.0" in src.c and "_t1_0" in src.c  # the new loop structure is what runs
    for seed in (1, 2):
        inputs = minus_zero_inputs(p, params, seed)
        want = ct.evaluate(p, inputs, params, pad)
        if path == INTERP and pad is None:  # the -0.0 sums are there (helm's controlled division, and
            # the +0.0 padding of u, make them +0.0)
            assert (np.signbit(want["v"][0]) & (want["v"][0] == 0.0)).all()
        assert np.isnan(want["v"][1]).any() and np.isfinite(want["v"][2]).all()
        for work in (False, True):
            rc, got = call(lib, src, inputs, params, work=work)
            assert rc == 0
            g = got["v"][tuple(slice(0, k) for k in want["v"].shape)]
            np.testing.assert_array_equal(bits(g), bits(want["v"]), err_msg=f"{name} seed {seed}")


def test_the_kernels_compile_with_the_flags_cjit_uses(tmp_path):
    # -O3 -march=native vectorises the new loops (and -ffp-contract=off keeps a*b + c rounded
    # twice): still the reference doubles
    src = E.emit_c(ct.load(str(INTERP)), {"E": 4, "m": 7, "n": 7}, name="loops_cjit_flags")
    lib = build([src], tmp_path, [*CFLAGS, "-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno",
                                  "-fno-trapping-math"])
    p = ct.load(str(INTERP))
    inputs = minus_zero_inputs(p, {"E": 4, "m": 7, "n": 7}, 5)
    want = ct.evaluate(p, inputs, {"E": 4, "m": 7, "n": 7})
    rc, got = call(lib, src, inputs, {"E": 4, "m": 7, "n": 7})
    assert rc == 0
    np.testing.assert_array_equal(bits(got["v"]), bits(want["v"]))


def test_a_copy_whose_extents_are_not_permuted_is_caught_by_the_check(monkeypatch):
    monkeypatch.setattr(E, "permuted", lambda shape, perm: shape)
    with pytest.raises(E.EmitCheckFailed, match=r"transposed copy of A: write of ct_w_A_t1_0_w4: index 1 ranges "
                                                r"over 1\.\.5, beyond the extent 3") as err:
        E.emit_c(ct.load(str(INTERP)), INTERP_PARAMS)
    assert err.value.rule == "emit-c check: Lemma 4.3"


def test_an_off_by_one_in_the_copy_is_caught_by_the_check(monkeypatch):
    real = E.Emitter.copy

    def one_too_far(self: Any, target: Any, source: Any) -> list[str]:
        longer = E.Storage(source.cname, source.alloc, (*source.shape[:-1], E.ext(int(source.shape[-1].base) + 1)),
                           source.role)
        lines = real(self, target, longer)
        self.accesses[-1] = E.Access(source, self.accesses[-1].index, self.accesses[-1].strides, False,
                                     self.where)  # the read, against the real extents
        return lines

    monkeypatch.setattr(E.Emitter, "copy", one_too_far)
    with pytest.raises(E.EmitCheckFailed, match=r"transposed copy of A: write of ct_w_A_t1_0_w4: index 1 ranges "
                                                r"over 1\.\.6, beyond the extent 5"):
        E.emit_c(ct.load(str(INTERP)), INTERP_PARAMS)
