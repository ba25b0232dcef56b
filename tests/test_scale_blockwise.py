"""``kernel.blockwise`` (issue 17, item 4): certified kernels on dask arrays, block by block along a
batch dimension proved element-wise from the semantics; refused, with the reason, without one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import core_teil as ct
from core_teil.native.blockwise import BatchStatus, BlockwiseRefused, batch_dimension

da = pytest.importorskip("dask.array")

ROOT = Path(__file__).resolve().parent.parent
INTERP = ct.load(str(ROOT / "examples" / "interp.teil"))
HELM = ct.load(str(ROOT / "examples" / "helm.teil"))


def test_interp_and_helm_are_elementwise_along_E() -> None:
    for program in (INTERP, HELM):
        a = batch_dimension(program)
        assert a.ok and a.param == "E"
        chosen = next(c for c in a.candidates if c.param == "E")
        assert chosen.obligations and all(o.status == "proved" for o in chosen.obligations)
        axes = a.axes
        assert axes["u"] == 0 and axes["v"] == 0
    assert batch_dimension(INTERP).axes["A"] is None  # broadcast to every block
    assert batch_dimension(HELM).axes["D"] is None and batch_dimension(HELM).axes["S"] is None


@pytest.mark.parametrize("chunks", [1, 3, 10, 25])
def test_interp_blockwise_equals_the_in_memory_run(chunks) -> None:
    rng = np.random.default_rng(chunks)
    E, m, n = 10, 2, 3
    A, u = rng.standard_normal((m, n)), rng.standard_normal((E, n, n, n))
    k = ct.compile(INTERP)
    whole = k(A=A, u=u)["v"]
    lazy = k.blockwise(chunks, A=A, u=da.from_array(u, chunks=4))
    assert isinstance(lazy["v"], da.Array) and lazy["v"].shape == whole.shape
    assert lazy["v"].numblocks[0] == -(-E // chunks)
    np.testing.assert_allclose(lazy["v"].compute(), whole, rtol=1e-12, atol=1e-12)


def test_helm_blockwise_equals_the_in_memory_run_and_the_reference_engine() -> None:
    rng = np.random.default_rng(7)
    E, n = 7, 3
    S, D, u = rng.standard_normal((n, n)), rng.random((n, n, n)) + 0.5, rng.standard_normal((E, n, n, n))
    k = ct.compile(HELM, {"n": n})
    out = k.blockwise(2, S=S, D=D, u=u)["v"].compute()
    np.testing.assert_allclose(out, k(S=S, D=D, u=u)["v"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out, ct.evaluate(HELM, {"S": S, "D": D, "u": u})["v"], rtol=1e-10, atol=1e-10)


def test_a_reduction_over_the_batch_has_no_batch_dimension() -> None:
    normalize = ct.load(str(ROOT / "examples" / "normalize.teil"))
    a = batch_dimension(normalize)
    assert a.status is BatchStatus.REFUSED and a.param is None
    with pytest.raises(BlockwiseRefused, match="no batch dimension"):
        ct.compile(normalize).blockwise(2, **{x.name: np.ones((3,)) for x in normalize.inputs()})


def test_a_read_of_another_element_is_refuted_with_a_counterexample() -> None:
    # v[e] = u[1]: every element reads the first one
    p = ct.parse("param E\ninput alloc u : [E]\noutput alloc v : [E]\nv = expa E (proj 1 u)\n")
    a = batch_dimension(p)
    assert a.status is BatchStatus.REFUSED
    (c,) = a.candidates
    (o,) = c.obligations
    assert o.status == "refuted" and o.counterexample.params == {"E": 2}
    assert "the read of u crosses elements" in a.reason() and "E = 2" in a.reason()
    with pytest.raises(BlockwiseRefused) as err:
        ct.compile(p).blockwise(2, u=np.arange(4.0))
    assert err.value.exit_code == 1 and "crosses elements" in str(err.value)


def test_a_value_that_depends_on_the_batch_length_is_refused() -> None:
    # v[e] = u[e] + w[E]: element-wise in u, but a block of length 2 reads w[2], not w[E]
    p = ct.parse("param E, n\nassume E <= n\ninput alloc w : [n]\ninput alloc u : [E]\noutput alloc v : [E]\n"
                 "v = add u (expa E (proj E w))\n")
    a = batch_dimension(p)
    assert a.status is BatchStatus.REFUSED and "depends on E" in a.reason()


def test_structural_refusals_name_the_allocation() -> None:
    twice = ct.parse("param E\ninput alloc x : [E, E]\noutput alloc y : [E, E]\ny = transp 1 x\n")
    assert "x : [E, E] has E more than once" in batch_dimension(twice).reason()
    with pytest.raises(ct.TeilInputError, match="declares no shape parameter 'F'"):
        batch_dimension(twice, batch="F")


def test_blockwise_inputs_are_checked() -> None:
    k = ct.compile(INTERP)
    A, u = np.ones((2, 3)), np.ones((5, 3, 3, 3))
    with pytest.raises(ct.TeilInputError, match="chunks=0"):
        k.blockwise(0, A=A, u=u)
    with pytest.raises(ct.TeilInputError, match="rank"):
        k.blockwise(2, A=A, u=np.ones((5, 3, 3)))
    with pytest.raises(ct.TeilInputError):
        k.blockwise(2, u=u)  # A missing


def test_inputs_blockwise_cannot_split_are_input_errors() -> None:
    # reviewer rS: a list reached v.shape (AttributeError), unknown chunk sizes reached int(nan)
    import dask.array as da

    k = ct.compile(INTERP)
    A, u = np.ones((2, 3)), np.ones((5, 3, 3, 3))
    with pytest.raises(ct.TeilInputError, match="input 'u' is a list; expected a numpy or dask array"):
        k.blockwise(2, A=A, u=u.tolist())
    unknown = da.from_array(u, chunks=(2, 3, 3, 3))
    unknown = unknown[unknown[:, 0, 0, 0] > 0]  # boolean indexing: chunk sizes unknown
    with pytest.raises(ct.TeilInputError, match="chunks of unknown size"):
        k.blockwise(2, A=A, u=unknown)


def test_a_read_of_the_last_element_is_refused() -> None:
    # reviewer rS (B02): v[e] = u[E] reads past every block but the last; `index < e` misses it
    p = ct.parse("param E\ninput alloc u : [E]\noutput alloc v : [E]\nv = expa E (proj E u)\n")
    assert batch_dimension(p).status is BatchStatus.REFUSED


def test_a_sum_over_the_batch_dimension_is_refused() -> None:
    # reviewer rS (B05): v[e] = u[e] + Σ_e' c — a block of length 2 sums 2 terms, not E
    p = ct.parse("param E\ninput alloc u : [E]\ninput alloc c : []\noutput alloc v : [E]\n"
                 "v = add u (expa E (red (expa E c)))\n")
    assert batch_dimension(p).status is BatchStatus.REFUSED


def test_a_batch_axis_that_is_not_the_first(tmp_path) -> None:
    # reviewer rS (B07, B08, B15): E is the second axis of u and v
    p = ct.parse("lang full\nparam n, E\ninput alloc u : [n, E]\noutput alloc v : [n, E]\n"
                 "v = add u (expa 1 n (red 1 u))\n")
    a = batch_dimension(p)
    assert a.ok and a.param == "E" and a.axes["u"] == 1
    u = np.arange(21.0).reshape(3, 7)
    got = ct.compile(p).blockwise(3, u=da.from_array(u, chunks=(3, 2)))
    np.testing.assert_allclose(got["v"].compute(), ct.evaluate(p, {"u": u})["v"], rtol=1e-12)
