"""The example corpus ``examples/*.teil``: every kernel parses, type-checks and computes its formula.

Each example reproduces a figure of the papers (paper 000 = ARRAY'19 TeIL:
Figs. 7, 10, 11 and the ill-typed Fig. 3a; report 001: Figs. 4-6; TeML paper
003: Tables 1-2).  For each file :data:`EXPECTED` holds small parameter values
and an independent numpy oracle written from the paper's formula (never from
our evaluator).  The tests parse, type-check (symbolically and at the small
sizes), evaluate with the reference engine unpadded and padded (pad 3 and 4,
which must agree exactly), lower full-TeIL files to Core-TeIL and evaluate
that too, and check that printing re-parses to the same tree.  A ``.teil``
file without an entry in :data:`EXPECTED` fails the corpus test, so the
corpus stays tested.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pytest

from core_teil.errors import TeilTypeError
from core_teil.lang.lowering import lower
from core_teil.lang.parser import load, parse
from core_teil.lang.printer import format_program
from core_teil.lang.syntax import Alloc, Program, Var, walk
from core_teil.lang.typing import check_program
from core_teil.semantics.eval import evaluate

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FILES = sorted(EXAMPLES.glob("*.teil"))

Arrays = dict[str, np.ndarray]


@dataclass(frozen=True)
class Expected:
    """What an example must do: its small sizes, and its outputs as a function of its inputs.

    ``positive`` inputs are drawn from [1, 2] (divisors); the others are
    standard normal.  ``rejected`` = (rule, predicate on the counterexample)
    for an example that must fail to type-check."""

    params: dict[str, int] = field(default_factory=dict)
    oracle: Callable[[Arrays], Arrays] | None = None
    positive: tuple[str, ...] = ()
    rejected: tuple[str, Callable[[dict[str, int]], bool]] | None = None


def _interp(x: Arrays) -> Arrays:
    """TeML interp: v[e,i,j,k] = Σ_{l,m,n} A[i,l] A[j,m] A[k,n] u[e,l,m,n] (paper 000, eq. (8))."""
    return {"v": np.einsum("il,jm,kn,elmn->eijk", x["A"], x["A"], x["A"], x["u"])}


def _helm(x: Arrays) -> Arrays:
    """Inverse Helmholtz: v = (Sᵀ⊗Sᵀ⊗Sᵀ) ((S⊗S⊗S) u / D), D shared by all elements."""
    s = x["S"]
    t = np.einsum("il,jm,kn,elmn->eijk", s, s, s, x["u"])
    r = t / x["D"][None]
    return {"v": np.einsum("li,mj,nk,elmn->eijk", s, s, s, r)}


def _trace_of_product(x: Arrays) -> Arrays:
    """Report 001, Fig. 5: s = tr(A B), written as the double sum."""
    a, b = x["A"], x["B"]
    s = sum(a[i, k] * b[k, i] for i in range(a.shape[0]) for k in range(a.shape[1]))
    return {"s": np.float64(s)}


EXPECTED: dict[str, Expected] = {
    # paper 000, Fig. 7: C = A B
    "matmul": Expected({"l": 2, "m": 3, "n": 4}, lambda x: {"C": x["A"] @ x["B"]}),
    "matmul_core": Expected({"l": 2, "m": 3, "n": 4}, lambda x: {"C": x["A"] @ x["B"]}),
    # paper 000, Fig. 2 / Fig. 10a
    "taco_a": Expected({"l": 2, "m": 3, "n": 4}, lambda x: {"A": np.einsum("ijk,k->ij", x["B"], x["C"])}),
    "taco_b": Expected({"l": 2, "m": 3, "n": 4}, lambda x: {"A": np.einsum("ijk,i->ij", x["B"], x["C"])}),
    "taco_c": Expected({"l": 2, "m": 3, "n": 4}, lambda x: {"A": np.einsum("kji,i->ji", x["B"], x["C"])}),
    # paper 000, Fig. 3b / Fig. 10b: C = Aᵀ B; Fig. 3a is rejected by T-Diag when m != n
    "tvm_transposed_matmul": Expected({"m": 2, "n": 3, "h": 4}, lambda x: {"C": x["A"].T @ x["B"]}),
    "tvm_fig3a_bad": Expected(rejected=("T-Diag", lambda cex: cex["m"] != cex["n"])),
    # paper 000, Fig. 4 / Fig. 10c
    "tc_increment": Expected({"m": 5}, lambda x: {"A": x["B"] + x["C"]}),
    # paper 000, Fig. 11
    "fig11_proj_expa": Expected({"k": 3, "m": 2, "n": 4},
                                lambda x: {"C": x["A"] + x["B"][1], "D": x["A"][None, :, :] + x["B"]}),
    # report 001, Figs. 4-6 (extents scaled down by 100)
    "report_fig4_contraction": Expected({}, lambda x: {"C": x["A"] @ x["B"]}),
    "report_fig5_trace": Expected({}, _trace_of_product),
    "report_fig6_transposition": Expected({}, lambda x: {"v": np.transpose(x["u"], (0, 3, 2, 1, 4))}),
    # TeML paper 003, Tables 1-2
    "interp": Expected({"E": 2, "m": 3, "n": 4}, _interp),
    "interp_nested": Expected({"E": 2, "m": 3, "n": 4}, _interp),
    "helm": Expected({"E": 2, "n": 3}, _helm, positive=("D",)),
    "bmm": Expected({"nb": 2, "ni": 3, "nj": 4, "nk": 5},
                    lambda x: {"C": np.einsum("bik,bkj->bij", x["A"], x["B"])}),
    "mttkrp": Expected({"I": 2, "J": 3, "K": 4, "L": 5},
                       lambda x: {"A": np.einsum("ikl,kj,lj->ij", x["B"], x["C"], x["D"])}),
    # report 001, Fig. 9: t-smul, t-sdiv, and `-`
    "axpy": Expected({"n": 5}, lambda x: {"z": x["a"] * x["x"] + x["y"], "w": x["a"] * x["x"]}),
    "normalize": Expected({"n": 4}, lambda x: {"s": x["x"].sum(), "p": x["x"] / x["x"].sum()},
                          positive=("x",)),
}

# Files without an entry are reported once, by test_every_example_has_an_expected_result.
GOOD = [f for f in FILES if f.stem in EXPECTED and EXPECTED[f.stem].rejected is None]
# Read off the text so that a file that does not parse fails its own tests, not collection.
FULL = [f for f in GOOD if re.search(r"^\s*lang\s+full\b", f.read_text(), re.MULTILINE)]


def ids(files: list[Path]) -> list[str]:
    return [f.stem for f in files]


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def read_before_written(program: Program) -> set[str]:
    """Allocations some statement reads before any statement writes them."""
    written: set[str] = set()
    read: set[str] = set()
    for s in program.stmts:
        read |= {e.name for e in walk(s.expr) if isinstance(e, Var) and e.name not in written}
        written.add(s.target)
    return read


def make_inputs(program: Program, spec: Expected, seed_text: str) -> Arrays:
    """Seeded random inputs at the declared shapes (SPEC.md section 2: with no qualifiers,
    the inputs are what is read before it is written)."""
    rng = np.random.default_rng(zlib.crc32(seed_text.encode()))
    names = ({a.name for a in program.allocs if a.qual == "input"} if program.qualified
             else read_before_written(program))
    out: Arrays = {}
    for a in program.allocs:
        if a.name not in names:
            continue
        shape = tuple(d if isinstance(d, int) else spec.params[d] for d in a.shape)
        out[a.name] = rng.uniform(1.0, 2.0, size=shape) if a.name in spec.positive else rng.normal(size=shape)
    return out


def assert_close(actual: np.ndarray, expected: np.ndarray, what: str) -> None:
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert not np.isnan(actual).any(), f"{what}: undefined values in a well-defined kernel"
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12, err_msg=what)


def assert_identical(a: Arrays, b: Arrays, what: str) -> None:
    assert a.keys() == b.keys(), what
    for k in a:
        assert a[k].shape == b[k].shape, f"{what}: {k}"
        np.testing.assert_array_equal(a[k], b[k], err_msg=f"{what}: {k}")


def setup(path: Path) -> tuple[Program, Expected, Arrays]:
    program = load(path)
    spec = EXPECTED[path.stem]
    return program, spec, make_inputs(program, spec, path.stem)


# --------------------------------------------------------------------------
# The corpus is complete and documented
# --------------------------------------------------------------------------


def test_corpus_is_not_empty() -> None:
    assert len(FILES) >= 17, [f.name for f in FILES]


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_every_example_has_an_expected_result(path: Path) -> None:
    """A new ``.teil`` file must come with an entry in EXPECTED (so it is tested)."""
    assert path.stem in EXPECTED, f"add an entry for {path.name} to EXPECTED in {__file__}"


def test_no_expected_result_without_a_file() -> None:
    assert set(EXPECTED) <= {f.stem for f in FILES}, set(EXPECTED) - {f.stem for f in FILES}


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_header_comment_cites_its_source(path: Path) -> None:
    """Each file opens with a comment that names the paper figure or table it reproduces."""
    lines = path.read_text().splitlines()
    header = []
    for line in lines:
        if not line.startswith("#"):
            break
        header.append(line)
    text = " ".join(header)
    assert header, f"{path.name} has no header comment"
    assert any(tag in text for tag in ("Fig.", "Table")), f"{path.name}: cite the figure or table"
    assert re.search(r"\b00[0-4]\b", text), f"{path.name}: name the paper (000-004, as in papers/README.md)"


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_canonical_form_round_trips(path: Path) -> None:
    """``parse(format(p)) == p`` and formatting is idempotent (SPEC.md section 6, ``fmt``)."""
    program = parse(path.read_text(), str(path))
    text = format_program(program)
    again = parse(text)
    assert again == program
    assert format_program(again) == text


# --------------------------------------------------------------------------
# Typing
# --------------------------------------------------------------------------


@pytest.mark.parametrize("path", GOOD, ids=ids(GOOD))
def test_typechecks_for_all_parameter_values(path: Path) -> None:
    """OK-Prog with symbolic shapes: every side condition holds for all parameters allowed."""
    program = load(path)
    typed = check_program(program)
    assert set(typed.gamma) == {a.name for a in program.allocs}
    small = check_program(program, EXPECTED[path.stem].params).shapes()
    assert all(all(isinstance(d, int) for d in shape) for shape in small.values())


def test_tvm_fig3a_is_rejected_by_t_diag() -> None:
    """Paper 000, section 3.7: Fig. 3a's declarations violate T-Diag; the checker says for which shapes."""
    path = EXAMPLES / "tvm_fig3a_bad.teil"
    program = load(path)
    with pytest.raises(TeilTypeError) as info:
        check_program(program)
    err = info.value
    assert err.rule == "T-Diag", err.render()
    assert err.counterexample is not None and err.counterexample["m"] != err.counterexample["n"]
    rule, predicate = EXPECTED["tvm_fig3a_bad"].rejected  # type: ignore[misc]
    assert rule == err.rule and predicate(err.counterexample)
    assert err.span.line == program.stmts[0].span.line  # the error points at the statement
    assert "m" in err.message and "n" in err.message


def test_tvm_fig3a_with_the_counterexample_sizes_is_rejected_concretely() -> None:
    """Giving the counterexample's values as --param values fails the same rule."""
    program = load(EXAMPLES / "tvm_fig3a_bad.teil")
    with pytest.raises(TeilTypeError) as info:
        check_program(program)
    cex = info.value.counterexample
    assert cex is not None
    with pytest.raises(TeilTypeError) as again:
        check_program(program, cex)
    assert again.value.rule == "T-Diag"


def test_tvm_fig3a_is_fine_when_square_and_wrong_otherwise() -> None:
    """With m = n = h the Fig. 3a kernel is the square case of Fig. 3b; m = n != h fails OK-Stmt."""
    program = load(EXAMPLES / "tvm_fig3a_bad.teil")
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    check_program(program, {"m": 3, "n": 3, "h": 3})
    out = evaluate(program, {"A": a, "B": b}, params={"m": 3, "n": 3, "h": 3})
    assert_close(out["C"], a.T @ b, "Fig. 3a, square")
    with pytest.raises(TeilTypeError) as info:
        check_program(program, {"m": 3, "n": 3, "h": 2})
    assert info.value.rule == "OK-Stmt"


def test_taco_c_with_tacos_own_allocation_of_a_is_rejected() -> None:
    """Fig. 10a (c) computes A indexed (j, i); declaring A : [l, m] as TACO does needs l = m."""
    program = load(EXAMPLES / "taco_c.teil")
    decls = tuple(replace(d, shape=("l", "m")) if isinstance(d, Alloc) and d.name == "A" else d
                  for d in program.decls)
    with pytest.raises(TeilTypeError) as info:
        check_program(replace(program, decls=decls))
    assert info.value.rule == "OK-Stmt"
    cex = info.value.counterexample
    assert cex is not None and cex["l"] != cex["m"]
    check_program(replace(program, decls=decls), {"l": 3, "m": 3, "n": 2})  # square: accepted


@pytest.mark.parametrize("stem", ["report_fig4_contraction", "report_fig5_trace", "report_fig6_transposition"])
def test_report_figures_at_their_original_sizes(stem: str) -> None:
    """The report's own extents (x100 of ours, e.g. [300 400]) type-check too."""
    program = load(EXAMPLES / f"{stem}.teil")
    big = replace(program, decls=tuple(replace(d, shape=tuple(100 * n for n in d.shape))  # type: ignore[operator]
                                       if isinstance(d, Alloc) else d for d in program.decls))
    shapes = check_program(big).shapes()
    assert shapes == {a.name: tuple(100 * n for n in a.shape) for a in program.allocs}  # type: ignore[operator]
    if stem == "report_fig4_contraction":
        assert shapes["C"] == (300, 500)


def test_interp_nested_reaches_rank_ten() -> None:
    """The unlifted interp has a rank-10 subexpression: prod u (prod A (prod A A))."""
    typed = check_program(load(EXAMPLES / "interp_nested.teil"))
    assert max(len(t) for t in typed.types.values()) == 10


# --------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------


@pytest.mark.parametrize("path", GOOD, ids=ids(GOOD))
def test_evaluates_to_the_papers_formula(path: Path) -> None:
    """The reference engine computes what the paper says the kernel computes."""
    program, spec, inputs = setup(path)
    check_program(program, spec.params)
    out = evaluate(program, inputs, params=spec.params, pad=None)
    assert set(out) == {a.name for a in program.outputs()}
    assert spec.oracle is not None
    expected = spec.oracle(inputs)
    assert set(expected) <= set(out), f"oracle names {set(expected) - set(out)} are not outputs"
    for name, value in out.items():
        if name in expected:
            assert_close(value, expected[name], f"{path.stem}: {name}")
        else:  # an unqualified program returns its inputs too, unchanged
            np.testing.assert_array_equal(value, inputs[name], err_msg=f"{path.stem}: {name}")


@pytest.mark.parametrize("pad", [3, 4])
@pytest.mark.parametrize("path", GOOD, ids=ids(GOOD))
def test_padded_evaluation_is_identical(path: Path, pad: int) -> None:
    """Report 001, Theorem 3 on the corpus: padding changes no output bit."""
    program, spec, inputs = setup(path)
    plain = evaluate(program, inputs, params=spec.params)
    padded = evaluate(program, inputs, params=spec.params, pad=pad)
    assert_identical(padded, plain, f"{path.stem}, pad {pad}")


@pytest.mark.parametrize("path", FULL, ids=ids(FULL))
def test_lowered_to_core_computes_the_same(path: Path) -> None:
    """Paper 000, section 4.1: the Core-TeIL form of a full-TeIL kernel is well typed and equivalent."""
    program, spec, inputs = setup(path)
    core = lower(program)
    assert core.dialect == "core"
    check_program(core)
    check_program(core, spec.params)
    plain = evaluate(program, inputs, params=spec.params)
    assert_identical(evaluate(core, inputs, params=spec.params), plain, f"{path.stem}, lowered")
    assert_identical(evaluate(core, inputs, params=spec.params, pad=4), plain, f"{path.stem}, lowered, pad 4")
    assert parse(format_program(core)) == core  # the lowered program prints in core syntax


@pytest.mark.parametrize("path", GOOD, ids=ids(GOOD))
def test_parameters_are_inferred_from_the_inputs(path: Path) -> None:
    """Without ``params`` the engine reads the parameter values off the input shapes."""
    program, spec, inputs = setup(path)
    assert_identical(evaluate(program, inputs), evaluate(program, inputs, params=spec.params), path.stem)


def test_interp_lifted_equals_nested() -> None:
    """Paper 000, section 5: lifting nested contractions (O(n^6) -> O(n^4)) keeps the value."""
    lifted, spec, inputs = setup(EXAMPLES / "interp.teil")
    nested = load(EXAMPLES / "interp_nested.teil")
    a = evaluate(lifted, inputs, params=spec.params)["v"]
    b = evaluate(nested, inputs, params=spec.params)["v"]
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_interp_with_square_operator_as_in_teml() -> None:
    """TeML's interp has m = n (7 in Table 2); a scaled-down square instance, written as explicit loops."""
    program = load(EXAMPLES / "interp.teil")
    rng = np.random.default_rng(7)
    e_, n = 2, 3
    a, u = rng.normal(size=(n, n)), rng.normal(size=(e_, n, n, n))
    v = evaluate(program, {"A": a, "u": u})["v"]
    expected = np.zeros((e_, n, n, n))
    for e, i, j, k, l_, m, p in np.ndindex(e_, n, n, n, n, n, n):
        expected[e, i, j, k] += a[i, l_] * a[j, m] * a[k, p] * u[e, l_, m, p]
    assert_close(v, expected, "interp, square")


def test_helm_division_by_zero_is_controlled() -> None:
    """Report 001, Definition 8 in helm: a zero of D where t is 0 gives 0; elsewhere the undefined value."""
    program = load(EXAMPLES / "helm.teil")
    n = 2
    s = np.eye(n)
    u = np.zeros((1, n, n, n))
    u[0, 0, 0, 0] = 1.0  # t = u (S = I); only t[0,0,0,0] is non-zero
    d = np.ones((n, n, n))
    d[1, 1, 1] = 0.0  # 0 / 0 = 0: harmless
    v = evaluate(program, {"S": s, "D": d, "u": u})["v"]
    np.testing.assert_array_equal(v, u)
    d[0, 0, 0] = 0.0  # 1 / 0 = •, and the S^T contractions spread it through 0 · • = •
    v = evaluate(program, {"S": s, "D": d, "u": u})["v"]
    assert np.isnan(v).all()
