"""Review r30 (a helper who did not write it) of the Gemm.i_labels / fixed_rows change: the guards that the
planner's own calls never reach, checked on hand-made calls (as test_blas_direct does for Streamed.of)."""

from __future__ import annotations

import dataclasses

import core_teil as ct
from core_teil.frontends.einsum import from_einsum
from core_teil.native.engine import Gemm, Streamed, fixed_rows


def _streamed_call() -> tuple[object, Gemm]:
    spec, dims = "ikl,kj,lj->ij", {"i": 37, "k": 61, "l": 53, "j": 45}
    shapes = [tuple(dims[c] for c in t) for t in spec.split("->")[0].split(",")]
    k = ct.compile(from_einsum(spec, *shapes), {})
    (cc,) = [cc for calls in k._prepare({}).calls for cc in calls if cc.streamed is not None]
    return cc.call, cc.gemm


def test_a_gemm_without_row_labels_is_not_streamed() -> None:
    """No ``i`` label, nothing to stream: ``None`` even where the rest of the checks pass
    (one batch element, ``a``'s first extent 1) or ``a``'s view has no dimension at all."""
    call, _ = _streamed_call()
    one = dataclasses.replace(call, nbatch=1, chunk=1)
    # a[k1, k2] with k1 of extent 1, b[k1, k2, j]: a GEMV-shaped step of 1 x 61 times 61 x 45
    g = Gemm((0, (1, 61), (488, 8)), (0, (1, 61, 45), (8 * 61 * 45, 360, 8)), 1, 1, 45, 61, 1, 0, 2)
    assert Streamed.of(one, g) is None
    # no i and no k labels: an outer product of one row
    g = Gemm((0, (), ()), (0, (45,), (8,)), 1, 1, 45, 1, 1, 0, 0)
    assert Streamed.of(one, g) is None


def test_fixed_rows_of_an_op_with_fewer_than_three_operands() -> None:
    """Three slot rows per op whatever its operand count; a row the op does not have
    addresses nothing (it is neither the chunk buffer nor looked up)."""
    call, _ = _streamed_call()
    (d,) = call.ops
    streamed = call.blas.out.store
    want = [o.store is streamed for o in d.operands[:2]] + [False]
    assert True in want  # the op reads the chunk buffer through one of its first two operands
    two = dataclasses.replace(call, ops=[dataclasses.replace(d, operands=d.operands[:2])])
    assert fixed_rows(two).tolist() == want
    assert fixed_rows(call).tolist() == [o.store is streamed for o in d.operands]
