"""core_teil.semantics.cost: eval.py's equations counted, against closed forms of the bench kernels."""

from __future__ import annotations

import pytest

import core_teil as ct
from core_teil.errors import TeilInputError
from core_teil.lang.shapes import round_up
from core_teil.lang.syntax import RedAt
from core_teil.lang.typing import TypedProgram, check_program, insert
from core_teil.semantics import eval as ev
from core_teil.semantics.cost import Work, work


def typed(path: str, **params: int) -> TypedProgram:
    return check_program(ct.load(path), params)


@pytest.mark.parametrize(("l", "m", "n"), [(1, 1, 1), (3, 5, 7), (8, 1, 2)])
@pytest.mark.parametrize("pad", [None, 1, 2, 8])
def test_matmul_is_l_n_sums_of_m_products(l: int, m: int, n: int, pad: int | None) -> None:
    # C[i, k] = Σ_j A[i, j] B[j, k]: m products and m - 1 additions per element, padded extents under a pad
    r = (lambda x: x) if pad is None else (lambda x: round_up(x, pad))
    assert work(typed("examples/matmul.teil", l=l, m=m, n=n), pad) == \
        Work(r(l) * r(n) * (2 * r(m) - 1), r(l) * r(n))


@pytest.mark.parametrize(("E", "n", "pad"), [(5, 3, None), (50000, 7, None), (50000, 7, 8), (20000, 4, 8), (3, 2, 4)])
def test_interp_is_three_contractions(E: int, n: int, pad: int | None) -> None:
    e, p = (E, n) if pad is None else (round_up(E, pad), round_up(n, pad))
    # t1, t2 and v each have E n^3 elements, each a sum of n products
    assert work(typed("examples/interp.teil", E=E, m=n, n=n), pad) == Work(3 * e * p**3 * (2 * p - 1), 3 * e * p**3)


def test_interp_with_a_rectangular_operator() -> None:
    E, m, n = 2, 3, 5
    # t1 : [E, n, n, m], t2 : [E, n, m, m], v : [E, m, m, m], each element a sum over n
    elements = E * n * n * m + E * n * m * m + E * m**3
    assert work(typed("examples/interp.teil", E=E, m=m, n=n)) == Work(elements * (2 * n - 1), elements)


@pytest.mark.parametrize(("E", "n", "pad"), [(5000, 13, None), (5000, 13, 8), (7, 2, 4)])
def test_helm_is_six_contractions_and_a_division(E: int, n: int, pad: int | None) -> None:
    e, p = (E, n) if pad is None else (round_up(E, pad), round_up(n, pad))
    # the guarded expa of D is a choice, not arithmetic: the division is one operation an element
    assert work(typed("examples/helm.teil", E=E, n=n), pad) == Work(6 * e * p**3 * (2 * p - 1) + e * p**3,
                                                                    7 * e * p**3)


def test_a_shared_subexpression_is_counted_once_per_statement() -> None:
    # expa forgets its new index, so `red X` is asked for 3 times at each k: the reference engine
    # tabulates it (eval.shared_subexpressions); counted per request it would be 5 * (3 * 3 + 2) = 55
    prog = typed_text("alloc X : [4, 5]\nalloc Y : [5]\nY = red (expa 3 (red X))\n")
    assert work(prog) == Work(5 * 3 + 5 * 2, 5)
    # and once per statement, not once per program: a second statement tabulates it again
    twice = typed_text("alloc X : [4, 5]\nalloc Y : [5]\nY = red (expa 3 (red X))\nY = red (expa 3 (red X))\n")
    assert work(twice) == Work(2 * (5 * 3 + 5 * 2), 10)


def typed_text(text: str, **params: int) -> TypedProgram:
    return check_program(ct.parse(text), params)


def test_the_count_is_the_equations_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # a change to eval.py's equations changes the count: here matmul's `red 2` summing one term too many
    base = work(typed("examples/matmul.teil", l=2, m=3, n=4))

    def one_more(e: RedAt, k: ev.Index, sem: ev.Sem) -> object:
        n = sem.bound(sem.type(e.arg)[e.i - 1]) + 1
        return sem.interp.sum(n, lambda m: ev.denote(e.arg, insert(k, e.i, m), sem), e)

    monkeypatch.setitem(ev.EQUATIONS, RedAt, one_more)
    assert base == Work(2 * 4 * 5, 8)
    assert work(typed("examples/matmul.teil", l=2, m=3, n=4)) == Work(2 * 4 * 7, 8)


def test_pad_1_is_no_padding_and_a_pad_never_costs_less() -> None:
    prog = typed("examples/helm.teil", E=3, n=5)
    assert work(prog, 1) == work(prog)
    for pad in (2, 3, 4, 8):
        assert work(prog, pad).flops > work(prog).flops


def test_a_bad_pad_is_refused_as_by_evaluate() -> None:
    with pytest.raises(TeilInputError, match="vector length"):
        work(typed("examples/matmul.teil", l=2, m=2, n=2), 0)
