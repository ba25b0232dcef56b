"""Review r32 of the simplified ``engine._cblas`` and of ``inputs.not_allocated``: the cases the
change's own tests left open (each test here failed on a mutant of the change that every other
test let through)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import core_teil as ct
from core_teil.native.engine import _cblas
from core_teil.semantics import inputs

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "examples" / "matmul.teil"

# --------------------------------------------------------------------------
# 1: _cblas against what CBLAS addresses: (111, ld) reads row i, column j at i·ld + j,
#    (112, ld) at j·ld + i, with ld >= max(1, the other extent)
# --------------------------------------------------------------------------


def _addresses(dims: list[tuple[int, int]]) -> list[int]:
    """Element offsets of a run of dimensions ``(extent, stride)``, outermost first, in row-major order."""
    return [sum(i * st for i, (_, st) in zip(idx, dims, strict=True))
            for idx in itertools.product(*(range(n) for n, _ in dims))]


def _valid(rows: list[int], cols: list[int], trans: int, ld: int) -> bool:
    nr, nc = len(rows), len(cols)
    if trans == 111:
        return ld >= max(1, nc) and all(r + c == i * ld + j for i, r in enumerate(rows) for j, c in enumerate(cols))
    return ld >= max(1, nr) and all(r + c == j * ld + i for i, r in enumerate(rows) for j, c in enumerate(cols))


def _possible(rows: list[int], cols: list[int]) -> bool:
    """Some (trans, ld) describes the matrix (the one candidate ld of each: the step between
    rows, or columns, else the least one)."""
    nr, nc = len(rows), len(cols)
    ld111 = rows[1] - rows[0] if nr > 1 else max(1, nc)
    ld112 = cols[1] - cols[0] if nc > 1 else max(1, nr)
    return _valid(rows, cols, 111, ld111) or _valid(rows, cols, 112, ld112)


DIM = [(n, st) for n in (1, 2, 3) for st in (-1, 0, 1, 2, 3, 4, 6, 7, 9)]
RUNS = [[], *([d] for d in DIM), *([d, e] for d in DIM for e in DIM)]


def test_cblas_describes_exactly_the_matrices_cblas_can_address() -> None:
    rng = np.random.default_rng(32)
    pairs = [(RUNS[i], RUNS[j]) for i, j in rng.integers(0, len(RUNS), size=(20000, 2))]
    pairs += [([(6, 1)], [(10, 8)]), ([(2, 40), (3, 12)], [(10, 1)]), ([(6, 10)], [(10, 0)])]
    for rows, cols in pairs:
        ra, ca = _addresses(rows), _addresses(cols)
        got = _cblas(rows, cols)
        if got is None:
            assert not _possible(ra, ca), (rows, cols)
        else:
            assert _valid(ra, ca, *got), (rows, cols, got)


def test_a_padded_column_major_matrix_has_its_column_stride_as_ld() -> None:
    assert _cblas([(6, 1)], [(10, 8)]) == (112, 8)  # not the row count
    assert _cblas([(6, 1)], [(2, 40), (5, 8)]) == (112, 8)


def test_rows_or_columns_that_are_no_one_run_are_no_cblas_matrix() -> None:
    """``_matrix`` says None for them, and ``_cblas`` passes that on (rather than unpacking it)."""
    assert _cblas([(6, 10)], [(10, 0)]) is None  # broadcast columns
    assert _cblas([(6, 0)], [(10, 1)]) is None  # broadcast rows
    assert _cblas([(2, 40), (3, 12)], [(10, 1)]) is None  # a gap between row blocks
    assert _cblas([(6, 1)], [(2, 60), (5, 6)]) is None  # a gap between column blocks


# --------------------------------------------------------------------------
# 2: inputs.not_allocated: one message from both check_supplied and infer_params
# --------------------------------------------------------------------------


def test_an_input_the_program_does_not_allocate_lists_every_allocation() -> None:
    message = rf"^core-teil: input error: {MATMUL}: input 'Z': the program allocates no 'Z' \(it allocates A, B, C\)$"
    with pytest.raises(ct.TeilInputError, match=message):
        ct.evaluate(ct.load(str(MATMUL)), {"Z": np.ones(2)})


def test_a_program_without_allocations_allocates_nothing() -> None:
    with pytest.raises(ct.TeilInputError, match=r"^core-teil: input error: input 'Z': the program allocates no 'Z' "
                                                r"\(it allocates nothing\)$"):
        ct.evaluate(ct.parse("lang full\n"), {"Z": np.ones(2)})


@pytest.mark.parametrize("check", [lambda p, v: inputs.check_supplied(p, v),
                                   lambda p, v: inputs.infer_params(p, v, None)],
                         ids=["check_supplied", "infer_params"])
def test_each_check_refuses_an_input_the_program_does_not_allocate(check: Callable[..., object]) -> None:
    with pytest.raises(ct.TeilInputError, match=rf"^core-teil: input error: {MATMUL}: input 'Z': the program "
                                                r"allocates no 'Z' \(it allocates A, B, C\)$"):
        check(ct.load(str(MATMUL)), {"Z": np.ones(2)})


def test_trace_says_the_unallocated_input_before_a_later_inputs_rank() -> None:
    """ct.trace reads the parameters off the inputs in their order: 'Z' is refused before 'A' is looked at."""
    with pytest.raises(ct.TeilInputError, match=rf"^core-teil: input error: {MATMUL}: input 'Z': the program"):
        ct.trace(ct.load(str(MATMUL)), "C[1,1]", None, {"Z": np.ones(2), "A": np.ones((2, 3, 1))})
