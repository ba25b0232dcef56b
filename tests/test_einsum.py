"""The einsum frontend (issue 12, item 2): ``ct.from_einsum``, ``ct.einsum``, ``core-teil from-einsum``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core_teil as ct
from core_teil.cli import main

RNG = np.random.default_rng(12)

#: Einsums of real models (and the grammar's corners) with concrete shapes.
REAL = [
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),  # attention scores
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),  # attention values
    ("bn,anm,bm->ba", [(3, 4), (2, 4, 5), (3, 5)]),  # bilinear (torch.nn.Bilinear)
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),  # batched matmul
    ("ij,jk", [(3, 4), (4, 5)]),  # matmul, implicit output
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ii", [(4, 4)]),  # trace
    ("ii->i", [(4, 4)]),  # diagonal
    ("i,j->ij", [(3,), (4,)]),  # outer
    ("ij->ji", [(3, 4)]),  # transpose
    ("ij->", [(3, 4)]),  # sum
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),  # implicit output is alphabetical: a transpose
    ("i,i", [(5,), (5,)]),  # dot
    ("...ij,...jk", [(1, 2, 3), (5, 3, 4)]),  # broadcast batch matmul
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 4)]),
    ("i...,i...->...", [(2, 3), (2, 1)]),
    ("...,...", [(2, 3), (3,)]),
    ("...", [(2, 3)]),
    (",ij", [(), (2, 3)]),  # a scalar operand
    ("", [()]),
    ("iij,jk->ki", [(3, 3, 2), (2, 4)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("a,a,a->", [(3,), (3,), (3,)]),
    ("ik,jkl,il->ij", [(2, 3), (4, 3, 5), (2, 5)]),  # bilinear with batch i
    ("nchw,kc->nkhw", [(2, 3, 2, 2), (4, 3)]),  # 1x1 convolution
    ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)]),
    ("ijkl->lkji", [(2, 3, 1, 2)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 2), (2, 3)]),  # a chain
    ("ij, jk -> ik", [(3, 4), (4, 5)]),  # numpy skips spaces
    ("...i,...i", [(1, 1, 3), (2, 2, 3)]),  # two broadcasting 1s in one operand
    ("abcdefghijklmnopqrstuvwxyzAB", [(1,) * 26 + (2, 3)]),  # rank 28: the output is 'AB' first
]


def arrays(shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    return [RNG.standard_normal(s) for s in shapes]


@pytest.mark.parametrize(("subscripts", "shapes"), REAL, ids=[s or "scalar" for s, _ in REAL])
def test_real_einsums_equal_numpy(subscripts: str, shapes: list[tuple[int, ...]]) -> None:
    xs = arrays(shapes)
    want = np.einsum(subscripts, *xs)
    got = ct.einsum(subscripts, *xs)
    assert isinstance(got, np.ndarray) and got.shape == np.shape(want) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ct.einsum(subscripts, *xs, engine="reference"), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("subscripts", "shapes"), REAL[:6])
def test_padded_run_equals_numpy(subscripts: str, shapes: list[tuple[int, ...]]) -> None:
    xs = arrays(shapes)
    np.testing.assert_allclose(ct.einsum(subscripts, *xs, pad=4), np.einsum(subscripts, *xs), rtol=1e-12)


@st.composite
def random_einsums(draw: st.DrawFn) -> tuple[str, list[tuple[int, ...]]]:
    """A valid einsum: 1-3 operands over labels a-e (repeats allowed), implicit or explicit output."""
    extent = {c: draw(st.integers(1, 3)) for c in "abcde"}
    n = draw(st.integers(1, 3))
    terms = [draw(st.lists(st.sampled_from("abcde"), max_size=3)) for _ in range(n)]
    used = sorted({c for t in terms for c in t})
    ell = draw(st.booleans())
    ell_shape = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    shapes, subs = [], []
    for t in terms:
        if ell and draw(st.booleans()):
            k = draw(st.integers(0, len(ell_shape)))
            tail = ell_shape[len(ell_shape) - k:]
            tail = tuple(1 if draw(st.booleans()) else d for d in tail)  # broadcasting ones
            split = draw(st.integers(0, len(t)))
            subs.append("".join(t[:split]) + "..." + "".join(t[split:]))
            shapes.append(tuple(extent[c] for c in t[:split]) + tail + tuple(extent[c] for c in t[split:]))
        else:
            subs.append("".join(t))
            shapes.append(tuple(extent[c] for c in t))
    text = ",".join(subs)
    if draw(st.booleans()):
        out = draw(st.permutations(used))
        out = out[: draw(st.integers(0, len(out)))]
        text += "->" + ("..." if "..." in text else "") + "".join(out)
    return text, shapes


@given(random_einsums())
@settings(derandomize=True, max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_random_einsums_equal_numpy(case: tuple[str, list[tuple[int, ...]]]) -> None:
    subscripts, shapes = case
    xs = [RNG.standard_normal(s) for s in shapes]
    want = np.einsum(subscripts, *xs)
    got = ct.einsum(subscripts, *xs)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


# -- programs ---------------------------------------------------------------------------


def test_matmul_is_the_papers_program() -> None:
    p = ct.from_einsum("ij,jk->ik", ("m", "k"), ("k", "n"))
    assert ct.format(p) == ("lang full\nparam m, k, n\ninput alloc A : [m, k]\ninput alloc B : [k, n]\n"
                            "output alloc C : [m, n]\n\nC = red 2 (diag 2 3 (prod A B))\n")
    assert ct.parse(ct.format(p)) == p
    assert ct.check(p) == {"A": ("m", "k"), "B": ("k", "n"), "C": ("m", "n")}


@pytest.mark.parametrize(("subscripts", "shapes"), [
    ("bhqd,bhkd->bhqk", [("b", "h", "q", "d"), ("b", "h", "k", "d")]),
    ("bn,anm,bm->ba", [("B", "N"), ("A", "N", "M"), ("B", "M")]),
    ("bij,bjk->bik", [("nb", "ni", "nk"), ("nb", "nk", "nj")]),
    ("ii", [("n", "n")]),
    ("ii->i", [("n", "n")]),
    ("i,j->ij", [("m",), ("n",)]),
    ("ij->ji", [("m", "n")]),
    ("ij->", [("m", "n")]),
    ("...ij,...jk", [(1, "m", "k"), ("b", "k", "n")]),
    ("ij,jk", [("m", 3), (3, "n")]),
])
def test_symbolic_einsums_are_certified(subscripts: str, shapes: list[tuple]) -> None:
    p = ct.from_einsum(subscripts, *shapes)
    report = ct.prove(p)
    assert report.ok, [(o.name, o.status) for o in report.obligations]
    assert all(o.status == "proved" for o in report.obligations)


def test_symbolic_program_runs_for_concrete_shapes() -> None:
    p = ct.from_einsum("bhqd,bhkd->bhqk", ("b", "h", "q", "d"), ("b", "h", "k", "d"))
    a, b = RNG.standard_normal((2, 2, 3, 4)), RNG.standard_normal((2, 2, 5, 4))
    want = np.einsum("bhqd,bhkd->bhqk", a, b)
    np.testing.assert_allclose(ct.evaluate(p, {"A": a, "B": b})["C"], want, rtol=1e-12)
    np.testing.assert_allclose(ct.compile(p)(A=a, B=b)["C"], want, rtol=1e-12)


def test_names() -> None:
    p = ct.from_einsum("ij,jk->ik", (2, 3), (3, 4), names=["X", "W", "Y"])
    assert [a.name for a in p.allocs] == ["X", "W", "Y"]
    p = ct.from_einsum("ij,jk->ik", ("A", "B"), ("B", "C"))  # parameters named like the defaults
    assert [a.name for a in p.allocs] == ["D", "E", "F"]
    ct.check(p)
    with pytest.raises(ct.TeilInputError, match="also name shape parameters"):
        ct.from_einsum("ij", ("n", "m"), names=["n"])


# -- rejections -----------------------------------------------------------------------------


def test_symbolic_mismatch_names_operand_label_extents_and_counterexample() -> None:
    """ONNX's shape inference accepts this; PyTorch issue 58380 asks for term and label."""
    with pytest.raises(ct.TeilTypeError) as info:
        ct.from_einsum("ij,jk", ("m", "k"), ("q", "n"))
    err = info.value
    assert "operand 2 (B)" in err.message and "label 'j'" in err.message
    assert "extent q" in err.message and "extent k" in err.message and "operand 1" in err.message
    assert err.counterexample is not None and err.counterexample["k"] != err.counterexample["q"]
    assert err.rule == "T-Diag" and (err.span.line, err.span.column) == (1, 4)
    assert err.exit_code == 1
    assert "ij,jk\n" in err.render() and err.render().endswith("   ^")


@pytest.mark.parametrize(("subscripts", "shapes", "words"), [
    ("ij,jk->ik", [(2, 3), (4, 5)], ["operand 2", "label 'j'", "extent 4", "extent 3", "3 != 4"]),
    ("ii->i", [(2, 3)], ["operand 1", "label 'i'", "extent 3", "extent 2"]),
    ("ii", [("n", "m")], ["operand 1", "label 'i'", "counterexample"]),
    ("bij,bjk->bik", [("b", 3, 4), ("c", 4, 5)], ["operand 2", "label 'b'", "extent c", "extent b"]),
    ("ij,ij->ij", [(2, 1), (2, 4)], ["label 'j'", "1 != 4"]),  # labels never broadcast
    ("...,...", [(2,), (3,)], ["'...'", "2 != 3"]),
    ("...i,...i", [("n", 2), ("m", 2)], ["'...'", "counterexample"]),
    ("ii->i", [(2, 3)], ["extent 3, but earlier in operand 1 (A, column 1) it has extent 2"]),
    ("ij,jk->ik", [(2, 3), (4, 5)], ["extent 4, but also in operand 1 (A, column 2) it has extent 3"]),
])
def test_mismatches_are_type_errors(subscripts: str, shapes: list[tuple], words: list[str]) -> None:
    with pytest.raises(ct.TeilTypeError) as info:
        ct.from_einsum(subscripts, *shapes)
    for w in words:
        assert w in info.value.message, (w, info.value.message)


def test_mismatch_in_einsum_is_a_type_error() -> None:
    with pytest.raises(ct.TeilTypeError, match="label 'j'"):
        ct.einsum("ij,jk", np.ones((2, 3)), np.ones((4, 5)))


@pytest.mark.parametrize(("subscripts", "shapes", "match"), [
    ("ij,jk", [(2, 3)], "2 operand"),
    ("ijk", [(2, 3)], "rank 2"),
    ("ij", [(2, 3, 4)], "write '...'"),
    ("i$", [(2, 3)], "not an einsum label"),
    ("i.j", [(2, 3)], "not part of '...'"),
    ("ij->ii", [(2, 3)], "occurs twice"),
    ("ij->k", [(2, 3)], "names no dimension"),
    ("ij->i->j", [(2, 3)], "only once"),
    ("...i->i", [(2, 3)], "'...' in the output"),
    ("i......", [(2, 3)], "at most once"),
    ("ij", [(0, 3)], ">= 1"),
    ("ij", [("n", "red")], "keyword"),
    ("ij", [("n", 2.5)], "not an integer"),
    ("ij", ["nm"], "tuple"),
    ("i", [(True,)], "extent True is not an integer"),  # a bool is no extent (1 == True)
    ("...ijk", [(2, 3)], "operand 1 has rank 2 but its subscripts '...ijk' name 3 dimension"),
    ("...i,...j->ij", [(2, 3), (4,)], "write '...' in the output"),  # numpy refuses it too
    ("...i->......", [(2, 3)], "the output may contain '...' at most once"),
])
def test_malformed_einsums_are_input_errors(subscripts: str, shapes: list, match: str) -> None:
    with pytest.raises(ct.TeilInputError, match=match) as info:
        ct.from_einsum(subscripts, *shapes)
    assert info.value.exit_code == 2


def test_einsum_dtype_policy_and_engine() -> None:
    with pytest.raises(ct.TeilInputError, match="float64"):
        ct.einsum("ij", np.ones((2, 3), dtype=np.float32))
    with pytest.raises(ct.TeilInputError, match="engine"):
        ct.einsum("ij", np.ones((2, 3)), engine="gpu")
    with pytest.raises(ct.TeilInputError):
        ct.einsum("ij", np.ones((2, 3)), pad=0)


def test_kernel_is_cached() -> None:
    from core_teil.frontends import einsum as frontends_einsum

    x = np.ones((3, 3))
    ct.einsum("ij,jk->ik", x, x)
    n = len(frontends_einsum._KERNELS)
    ct.einsum("ij,jk->ik", 2 * x, x)
    assert len(frontends_einsum._KERNELS) == n


def test_a_refused_native_plan_runs_on_the_reference_engine_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planner bug (the independent plan check refuses the plan) never runs the plan, and is not
    hidden: ct.einsum warns (the test suite turns that warning into an error) and falls back."""
    from core_teil.errors import NO_SPAN
    from core_teil.frontends import einsum as frontends_einsum
    from core_teil.native import engine
    from core_teil.native.plan_check import PlanRejected

    def refuse(*args: object, **kwargs: object) -> object:
        raise PlanRejected("statement 1: a read that is not one read of the semantics", NO_SPAN)

    monkeypatch.setattr(engine, "compile", refuse)
    monkeypatch.setattr(frontends_einsum, "_KERNELS", type(frontends_einsum._KERNELS)())
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    with pytest.warns(RuntimeWarning, match="the native plan was refused by the plan check"):
        got = ct.einsum("ij,jk->ik", a, b)
    np.testing.assert_array_equal(got, a @ b)


# -- the CLI -----------------------------------------------------------------------------


def test_cli_prints_a_program_that_check_accepts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["from-einsum", "ij,jk->ik", "m,k", "k,n"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("C = red 2 (diag 2 3 (prod A B))\n")
    f = tmp_path / "mm.teil"
    f.write_text(out)
    assert main(["check", str(f)]) == 0
    assert main(["prove", str(f)]) == 0
    capsys.readouterr()
    assert main(["from-einsum", "i,->i", "3", "-"]) == 0
    assert "input alloc B : []" in capsys.readouterr().out


def test_cli_rejects_with_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["from-einsum", "ij,jk", "m,k", "q,n"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("<einsum>:1:4: type error [T-Diag]: operand 2 (B): label 'j'")
    assert "counterexample: k = " in err and "Traceback" not in err
    assert main(["from-einsum", "ij,jk", "m,k"]) == 2
    assert main(["from-einsum", "ij", "m,k+1"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err


def test_results_are_fresh_arrays() -> None:
    """A cached kernel returns a new array per call, never a view of an input or of an earlier result."""
    x = RNG.standard_normal((3, 4))
    first = ct.einsum("ij", x)
    second = ct.einsum("ij", 2 * x)
    assert not np.shares_memory(first, x) and not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, x)
    np.testing.assert_array_equal(second, 2 * x)


# -- issue 12 review: the kernel cache, the CLI's shapes, bad inputs, numpy's keywords ----------


@pytest.fixture
def empty_cache(monkeypatch: pytest.MonkeyPatch):
    from core_teil.frontends import einsum as frontends_einsum

    monkeypatch.setattr(frontends_einsum, "_KERNELS", {})
    return frontends_einsum


def test_the_reference_engine_never_runs_native_code(empty_cache, monkeypatch: pytest.MonkeyPatch) -> None:
    """engine='reference' after a native run of the same einsum neither compiles (E47) nor
    reuses the native kernel (E39): the cache is keyed by engine."""
    from core_teil.native import engine

    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    np.testing.assert_allclose(ct.einsum("ij,jk->ik", a, b), a @ b, rtol=1e-12)

    def native_runs(*args: object, **kwargs: object) -> object:
        raise AssertionError("the native engine ran for engine='reference'")

    monkeypatch.setattr(engine, "compile", native_runs)
    monkeypatch.setattr(engine.Kernel, "__call__", native_runs)
    np.testing.assert_allclose(ct.einsum("ij,jk->ik", a, b, engine="reference"), a @ b, rtol=1e-12)
    assert sorted(key[3] for key in empty_cache._KERNELS) == ["native", "reference"]


def test_each_pad_compiles_its_own_kernel(empty_cache, monkeypatch: pytest.MonkeyPatch) -> None:
    """E40: pad=4 after an unpadded call compiles a padded kernel (same numbers: only the cache
    can tell)."""
    from core_teil.native import engine

    real, pads = engine.compile, []

    def compile_(program: ct.Program, params: dict, pad: int | None = None) -> object:
        pads.append(pad)
        return real(program, params, pad)

    monkeypatch.setattr(engine, "compile", compile_)
    x = RNG.standard_normal((3, 5))
    for pad in (None, 4, None, 4):
        np.testing.assert_allclose(ct.einsum("ij->ji", x, pad=pad), x.T, rtol=1e-12)
    assert pads == [None, 4]
    assert [k.pad for _, k in empty_cache._KERNELS.values()] == [None, 4]


def test_the_kernel_cache_is_bounded(empty_cache, monkeypatch: pytest.MonkeyPatch) -> None:
    """E42: the oldest kernel goes when the cache is full."""
    monkeypatch.setattr(empty_cache, "_KERNEL_CACHE_SIZE", 3)
    for n in range(1, 6):
        ct.einsum("i->i", np.ones(n), engine="reference")
    assert [shapes for _, shapes, *_ in empty_cache._KERNELS] == [((3,),), ((4,),), ((5,),)]


def test_cli_shapes_with_more_than_one_digit_and_the_empty_scalar(capsys: pytest.CaptureFixture[str]) -> None:
    """E44, E45: SHAPE '10,3' is [10, 3]; an empty SHAPE is a scalar, like '-'."""
    from core_teil.frontends.einsum import parse_shape_arg

    assert main(["from-einsum", "ij", "10,3"]) == 0
    assert "input alloc A : [10, 3]\n" in capsys.readouterr().out
    assert main(["from-einsum", ",i->i", "", "3"]) == 0
    out = capsys.readouterr().out
    assert "input alloc A : []\ninput alloc B : [3]\noutput alloc C : [3]\n" in out
    assert parse_shape_arg(" ") == parse_shape_arg("-") == ()
    assert parse_shape_arg("12, n") == (12, "n")


@pytest.fixture
def python_recursion_limit():
    """Python's default recursion limit, as a program using ct.einsum has it (the CLI's main()
    raises it for the rest of the test process)."""
    import sys

    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(before)


def test_too_deep_an_einsum_is_an_input_error(capsys: pytest.CaptureFixture[str], python_recursion_limit) -> None:
    """Reversing 21 labels takes 210 adjacent swaps in Core-TeIL, beyond the parser's MAX_DEPTH
    that the later passes rely on (a RecursionError before); 20 take 190 and run."""
    from string import ascii_letters

    twenty = ascii_letters[:20]
    np.testing.assert_array_equal(ct.einsum(f"{twenty}->{twenty[::-1]}", np.ones((1,) * 20)), np.ones((1,) * 20))
    letters = ascii_letters
    for sub in (f"{letters[:21]}->{letters[:21][::-1]}", f"{letters}->{letters[::-1]}",
                letters):  # the last: implicit output 'A'...'Z' 'a'...'z', 676 adjacent swaps as written
        with pytest.raises(ct.TeilInputError, match=r"nested \d+ levels deep.*up to 200") as info:
            ct.einsum(sub, np.ones((1,) * len(sub.partition("->")[0])))
        assert info.value.exit_code == 2 and info.value.span.column == 1
    assert main(["from-einsum", f"{ascii_letters[:21]}->{ascii_letters[:21][::-1]}", ",".join("1" * 21)]) == 2
    assert "nested 211 levels deep in Core-TeIL" in capsys.readouterr().err


def test_the_depth_bound_is_the_parsers(python_recursion_limit) -> None:
    """A permutation of 21 labels with k inversions is k adjacent swaps deep (plus the read
    of A): 199 make depth 200 = MAX_DEPTH, accepted; 200 are one too many."""
    from string import ascii_letters

    from core_teil.lang.lowering import lower_expr
    from core_teil.lang.parser import MAX_DEPTH
    from core_teil.lang.syntax import depth

    def with_inversions(k: int) -> str:
        rest, out = list(ascii_letters[:21]), []
        while rest:  # the Lehmer code: take the (k-th, as far as it goes) remaining label
            c = min(k, len(rest) - 1)
            k -= c
            out.append(rest.pop(c))
        return f"{ascii_letters[:21]}->{''.join(out)}"

    e = ct.from_einsum(with_inversions(199), (1,) * 21).stmts[0].expr
    assert depth(e) == depth(lower_expr(e)) == MAX_DEPTH == 200
    with pytest.raises(ct.TeilInputError, match="nested 201 levels deep; this implementation handles up to 200"):
        ct.from_einsum(with_inversions(200), (1,) * 21)


def test_written_at_the_bound_is_still_checked_in_core(monkeypatch: pytest.MonkeyPatch,
                                                       python_recursion_limit) -> None:
    """The Core-TeIL depth is measured whenever the written program is within MAX_DEPTH,
    the bound included: a hundred operands 'a' are written exactly 200 deep, and their
    lowering (a red per product, one dimension at a time) is far deeper, so refused."""
    from core_teil.frontends import einsum as frontend
    from core_teil.lang.syntax import depth

    written: list[int] = []
    check = frontend._check_depth
    monkeypatch.setattr(frontend, "_check_depth", lambda e, s: (written.append(depth(e)), check(e, s)))
    with pytest.raises(ct.TeilInputError, match=r"nested \d+ levels deep in Core-TeIL.*up to 200"):
        ct.from_einsum(",".join("a" * 100) + "->", *[(2,)] * 100)
    assert written == [200]


def test_reductions_and_permutations_lower_to_few_core_steps(python_recursion_limit) -> None:
    """Reducing leftmost first and swapping adjacent labels where that is cheaper keep the
    Core-TeIL program shallow: 'ij->' is red (red A), a rotation of 28 labels 54 steps deep."""
    from string import ascii_letters

    from core_teil.lang.lowering import lower_expr
    from core_teil.lang.syntax import depth

    p = ct.from_einsum("ij->", (2, 3))
    assert ct.format(p).endswith("B = red 1 (red 1 A)\n")
    rotated = ascii_letters[:28]
    e = ct.from_einsum(rotated, (1,) * 28).stmts[0].expr  # implicit output: 'AB' then 'a'...'z'
    assert depth(e) == depth(lower_expr(e)) == 2 * 26 + 1
    assert ct.format(ct.from_einsum("ijk->kji", (2, 3, 4))).endswith("B = transp 1 3 A\n")  # 3 swaps either way


def test_non_string_subscripts_are_an_input_error() -> None:
    with pytest.raises(ct.TeilInputError, match="the subscripts must be a string such as 'ij,jk->ik', not list") \
            as info:
        ct.einsum(["ij"], np.ones((2, 3)))
    assert info.value.exit_code == 2
    with pytest.raises(ct.TeilInputError, match="not int"):
        ct.einsum(0, [0, 1])


@pytest.mark.parametrize("optimize", [False, True, None, "greedy", "optimal", ["einsum_path", (0, 1)]])
def test_optimize_takes_numpys_values(optimize: object) -> None:
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    want = np.einsum("ij,jk", a, b, optimize=optimize)
    np.testing.assert_allclose(ct.einsum("ij,jk", a, b, optimize=optimize), want, rtol=1e-12)


@pytest.mark.parametrize("optimize", ["fastest", 3, [], ["greedy"], 0, 1, 0.0, np.True_, "dp"])
def test_optimize_refuses_what_numpy_would_not_take(optimize: object) -> None:
    with pytest.raises(ct.TeilInputError, match=r"numpy\.einsum takes False, True, 'greedy', 'optimal'"):
        ct.einsum("ij,jk", np.ones((2, 3)), np.ones((3, 4)), optimize=optimize)


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_out_receives_the_result_and_is_returned(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from core_teil.native import engine as native

    run, outs = native.Kernel.__call__, []

    def call(self: native.Kernel, out: object = None, **inputs: object) -> object:
        outs.append(out)
        return run(self, out=out, **inputs)

    monkeypatch.setattr(native.Kernel, "__call__", call)
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    out = np.full((2, 4), np.nan)
    assert ct.einsum("ij,jk->ik", a, b, out=out, engine=engine) is out
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    # the native kernel writes a C-contiguous out= in place (engine._out_targets), no copy
    assert [o if o is None else o["C"] is out for o in outs] == ([True] if engine == "native" else [])
    wide = np.full((4, 2), np.nan)  # a transposed view: not C-contiguous, written all the same
    assert ct.einsum("ij,jk->ik", a, b, out=wide.T, engine=engine) is not None
    np.testing.assert_allclose(wide.T, a @ b, rtol=1e-12)
    scalar = np.zeros(())
    assert ct.einsum("i,i", a[0], a[0], out=scalar, engine=engine) is scalar
    assert scalar == pytest.approx(a[0] @ a[0])
    x = RNG.standard_normal((3, 3))
    want = x.T.copy()
    assert ct.einsum("ij->ji", x, out=x, engine=engine) is x  # out is an input: read before written
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize(("out", "match"), [
    (np.zeros((4, 2)), r"out= has shape \[4, 2\], but the einsum's result has shape \[2, 4\]"),
    (np.zeros((2, 4), dtype=np.float32), "float32"),
    ([[0.0] * 4] * 2, "out= must be a numpy array"),
    (np.broadcast_to(np.zeros(4), (2, 4)), "read-only"),
])
@pytest.mark.parametrize("engine", ["native", "reference"])
def test_a_bad_out_is_an_input_error(out: object, match: str, engine: str) -> None:
    with pytest.raises(ct.TeilInputError, match=match) as info:
        ct.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((3, 4)), out=out, engine=engine)
    assert info.value.exit_code == 2
