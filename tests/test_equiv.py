"""``core-teil equiv`` / ``ct.equiv`` (issue 13): proofs, replayed counterexamples, unknowns.

* every law of ``proofs/laws.py`` (``make verify``), written as a pair of
  programs in ``examples/equiv/``, is proved equivalent (the padded laws with
  ``pad`` too), and so are the nested and lifted CFD kernels for all extents;
* perturbed pairs (an index off by one, a transposition dropped, a factor
  swapped, a wrong count, a wrong diagonal, a difference only in •) are refuted
  with a counterexample that this file replays once more through ``ct.evaluate``;
* each checker of equiv says no on a wrong input: the interface check, the
  comparison of normal forms (terms, coefficients, the names of indices), the
  exact-arithmetic guard of the search, the replay, the padding premise, and
  the quick search that guards the normaliser itself.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import core_teil as ct
from core_teil.cli import main
from core_teil.errors import TeilInputError, TeilTypeError
from core_teil.lang.typing import check_program
from core_teil.proving import equiv_nf, equiv_search
from core_teil.proving.equiv import Status

ROOT = Path(__file__).resolve().parent.parent
PAIRS = ROOT / "examples" / "equiv"

#: Each law of proofs/laws.py (by its make verify name) and the pairs that state it.
LAW_PAIRS: dict[str, tuple[str, ...]] = {
    "Law (3) proj∘expa": ("law3_proj_expa",),
    "Law (4) diag∘transp": ("law4_diag_transp",),
    "Law (5) red∘expa": ("law5_red_expa", "law5_symbolic"),
    "Law (5) red∘expa (padded)": ("law5_red_expa", "law5_symbolic"),
    "Law (6) contr = red∘diag": ("law6_contr",),
    "Law transp involution": ("transp_involution",),
    "Law red over add": ("red_add",),
    "Law red over prod": ("red_prod_scalar", "red_prod_vector", "red_prod_matrix"),
    "Law red∘red commute": ("red_red",),
    "Law lift nested red": ("lift_red",),
    "Law reassociation": ("reassociation",),
}
#: The laws make verify also checks under padding (``padded=True`` in proofs/laws.py).
PADDED = {"Law (3) proj∘expa", "Law (4) diag∘transp", "Law (5) red∘expa (padded)", "Law transp involution"}

BAD_PAIRS = ("bad_proj_off_by_one", "bad_transp_dropped", "bad_factor_swapped", "bad_lift_red", "bad_red_expa",
             "bad_diag_transp", "bad_undef_only")


def pair(stem: str) -> tuple[ct.Program, ct.Program]:
    return ct.load(str(PAIRS / f"{stem}_p.teil")), ct.load(str(PAIRS / f"{stem}_q.teil"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------
# Proofs
# --------------------------------------------------------------------------


def test_every_law_of_make_verify_has_a_pair() -> None:
    from proofs.laws import LAWS

    assert {law.name for law in LAWS} == set(LAW_PAIRS)
    for stems in LAW_PAIRS.values():
        for stem in stems:
            assert (PAIRS / f"{stem}_p.teil").is_file() and (PAIRS / f"{stem}_q.teil").is_file()


@pytest.mark.parametrize("stem", sorted({s for stems in LAW_PAIRS.values() for s in stems}))
def test_law_pairs_are_proved_equivalent(stem: str) -> None:
    p, q = pair(stem)
    report = ct.equiv(p, q)
    assert report.ok and report.exit_code == 0, report.render()
    assert all(o.status is Status.PROVED and o.counterexample is None for o in report.outputs)
    assert report.symbolic  # for all extents, not for some


@pytest.mark.parametrize("law", sorted(PADDED))
def test_padded_laws_are_proved_with_pad(law: str) -> None:
    for stem in LAW_PAIRS[law]:
        p, q = pair(stem)
        report = ct.equiv(p, q, pad=4)
        assert report.ok, report.render()
        assert any("report Theorem 3" in s for o in report.outputs for s in o.steps)


@pytest.mark.parametrize(("stem", "law"), [("red_add", "Sum-Linearity"), ("red_red", "Sum-Fubini"),
                                           ("law5_symbolic", "Sum-Constant"), ("red_prod_scalar", "Sum-Scalar-Left"),
                                           ("reassociation", "Sum-Fubini"), ("lift_red", "Sum-Congruence")])
def test_the_certificate_names_the_sum_lemmas_used(stem: str, law: str) -> None:
    report = ct.equiv(*pair(stem))
    assert law in report.outputs[0].laws
    from proofs.sums import LAWS as SUM_LAWS

    names = {s.name for s in SUM_LAWS}
    assert {x for x in report.outputs[0].laws if x.startswith("Sum-")} <= names


def test_interp_nested_and_lifted_are_equivalent_for_all_extents() -> None:
    p, q = ct.load(str(ROOT / "examples" / "interp.teil")), ct.load(str(ROOT / "examples" / "interp_nested.teil"))
    report = ct.equiv(p, q)
    assert report.ok and report.symbolic == ("E", "m", "n") and not report.params
    v = report.outputs[0]
    assert v.normal_form_p == v.normal_form_q
    assert "Σ[i1<=n, i2<=n, i3<=n]" in v.normal_form_p
    assert "Sum-Fubini" in v.laws and any("St-Stmt" in x for x in v.laws)
    assert "float64" in v.float_note  # reassociated: equal in the reals only
    assert ct.equiv(q, p).ok


def test_index_map_identities_alone_need_no_float_note() -> None:
    for stem in ("law3_proj_expa", "law4_diag_transp", "transp_involution", "law6_contr"):
        report = ct.equiv(*pair(stem))
        assert report.outputs[0].float_note == "", stem


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.teil")))
def test_every_example_is_equivalent_to_its_lowering(path: Path) -> None:
    p = ct.load(str(path))
    try:
        check_program(p)
    except TeilTypeError:
        pytest.skip("deliberately ill-typed")
    report = ct.equiv(p, ct.lower(p))
    assert report.ok, report.render()


def test_assumptions_and_params_are_used() -> None:
    src = """param n, m
assume n == 2*m
input alloc X : [n]
output alloc Y : [n]
Y = {}
"""
    p = ct.parse(src.format("red (expa n X)"), "p.teil")
    q = ct.parse(src.format("add (red (expa m X)) (red (expa m X))"), "q.teil")
    report = ct.equiv(p, q)
    assert report.ok
    assert any("under the assumptions (z3)" in s for s in report.outputs[0].steps)
    fixed = ct.equiv(p, q, {"m": 2, "n": 4})
    assert fixed.ok and fixed.params == {"m": 2, "n": 4} and fixed.symbolic == ()
    with pytest.raises(TeilInputError):
        ct.equiv(p, q, {"m": 2, "n": 5})  # violates the assumption


# --------------------------------------------------------------------------
# Counterexamples
# --------------------------------------------------------------------------


@pytest.mark.parametrize("stem", BAD_PAIRS)
def test_perturbed_pairs_are_refuted_with_a_replayed_counterexample(stem: str) -> None:
    p, q = pair(stem)
    report = ct.equiv(p, q)
    assert not report.ok and report.exit_code == 1
    bad = [o for o in report.outputs if o.status is Status.REFUTED]
    assert len(bad) == 1
    cex = bad[0].counterexample
    assert cex is not None and cex.value_p != cex.value_q
    # replay it once more, independently: both programs through the reference engine
    inputs = {x: np.array(v, dtype=float) if v is not None else np.array(math.nan)
              for x, v in cex.inputs.items()}
    for x, v in inputs.items():
        inputs[x] = np.where(np.equal(v, None), math.nan, v).astype(float) if v.dtype == object else v
    params_p = {k: v for k, v in cex.params.items() if k in p.params}
    params_q = {k: v for k, v in cex.params.items() if k in q.params}
    idx = tuple(i - 1 for i in cex.index)
    a = float(ct.evaluate(p, inputs, params_p)[cex.output][idx])
    b = float(ct.evaluate(q, inputs, params_q)[cex.output][idx])
    assert not (a == b or (math.isnan(a) and math.isnan(b)))
    # small: every extent at most 3, integer inputs
    assert all(v <= 3 for v in cex.params.values())
    assert all(math.isnan(x) or float(x).is_integer() for arr in inputs.values() for x in np.ravel(arr))


def test_a_difference_only_in_undefinedness_is_found() -> None:
    report = ct.equiv(*pair("bad_undef_only"))
    cex = report.outputs[0].counterexample
    assert cex is not None and "•" in (cex.value_p, cex.value_q)


def test_counterexample_rendering_names_index_and_both_values() -> None:
    p, q = pair("bad_factor_swapped")
    text = ct.equiv(p, q).render()
    assert "REFUTED" in text and "Example:" in text and "n = 2" in text
    assert f"in {p.file}:" in text and f"in {q.file}:" in text and "replayed by the reference engine" in text


def test_distribution_over_controlled_division_is_proved_by_z3() -> None:
    report = ct.equiv(*pair("div_distribute"))
    assert report.ok
    (o,) = report.outputs
    assert o.normal_form_p != o.normal_form_q and any("z3 proves them equal" in s for s in o.steps)
    assert any("algebra by z3" in law for law in o.laws)


def test_sums_with_algebraically_equal_bodies_are_proved_by_z3() -> None:
    report = ct.equiv(*pair("sum_div"))
    assert report.ok
    (o,) = report.outputs
    assert o.normal_form_p != o.normal_form_q and any("Σ of each skeleton merged" in s for s in o.steps)
    assert {"Sum-Linearity", "Sum-Scalar-Left", "Sum-Congruence"} <= set(o.laws)


def test_the_structured_sums_keep_the_bodies_apart() -> None:
    """Σ_i X[i]/Z[i] against Σ_i X[i]/Z[1]: different bodies, so no proof (and the search refutes it)."""
    src = "param n\ninput alloc X : [n]\ninput alloc Z : [n]\noutput alloc Y : []\nY = {}\n"
    p = ct.parse(src.format("red (div X Z)"), "p.teil")
    q = ct.parse(src.format("red (div X (expa n (proj 1 Z)))"), "q.teil")
    assert ct.equiv(p, q, smoke=False, search_after=False).exit_code == 3
    assert ct.equiv(p, q).exit_code == 1


def test_unknown_is_never_equivalent() -> None:
    report = ct.equiv(*pair("unknown_unrolled"))
    assert not report.ok and report.exit_code == 3
    assert report.outputs[0].status is Status.UNKNOWN and "no counterexample" in report.outputs[0].reason


# --------------------------------------------------------------------------
# Interfaces and the command line
# --------------------------------------------------------------------------

HEAD = "param n\n"


def test_different_inputs_or_outputs_are_usage_errors() -> None:
    p = ct.parse(HEAD + "input alloc X : [n]\noutput alloc Y : [n]\nY = X\n", "p.teil")
    renamed = ct.parse(HEAD + "input alloc Z : [n]\noutput alloc Y : [n]\nY = Z\n", "q.teil")
    with pytest.raises(TeilInputError, match=r"different inputs: X only in p\.teil; Z only in q\.teil"):
        ct.equiv(p, renamed)
    reshaped = ct.parse("param n, m\ninput alloc X : [m]\noutput alloc Y : [m]\nY = X\n", "q.teil")
    with pytest.raises(TeilInputError, match=r"input X is declared \[n\] in p.teil but \[m\] in q.teil") as err:
        ct.equiv(p, reshaped)
    assert err.value.exit_code == 2 and err.value.span.line == 2
    more = ct.parse(HEAD + "input alloc X : [n]\noutput alloc Y : [n]\noutput alloc W : [n]\nY = X\nW = X\n", "q.teil")
    with pytest.raises(TeilInputError, match="different outputs"):
        ct.equiv(p, more)


def test_shapes_equal_under_the_assumptions_are_accepted() -> None:
    p = ct.parse("param n, m\nassume n == m\ninput alloc X : [n]\noutput alloc Y : [n]\nY = X\n", "p.teil")
    q = ct.parse("param n, m\nassume n == m\ninput alloc X : [m]\noutput alloc Y : [m]\nY = X\n", "q.teil")
    report = ct.equiv(p, q)
    assert report.ok and any("n = m" in n or "m = n" in n for n in report.notes)


def test_cli_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = lambda stem, s: str(PAIRS / f"{stem}_{s}.teil")  # noqa: E731
    code, out, _ = run(capsys, "equiv", f("law4_diag_transp", "p"), f("law4_diag_transp", "q"))
    assert code == 0 and "=> equivalent" in out
    code, out, _ = run(capsys, "equiv", f("bad_factor_swapped", "p"), f("bad_factor_swapped", "q"))
    assert code == 1 and "Example:" in out
    code, out, _ = run(capsys, "equiv", f("unknown_unrolled", "p"), f("unknown_unrolled", "q"))
    assert code == 3 and "UNKNOWN" in out
    code, _, err = run(capsys, "equiv", f("law4_diag_transp", "p"), f("law3_proj_expa", "q"))
    assert code == 2 and "same inputs" in err and "Traceback" not in err
    code, _, err = run(capsys, "equiv", f("law4_diag_transp", "p"), str(tmp_path / "missing.teil"))
    assert code == 2 and "Traceback" not in err
    (tmp_path / "broken.teil").write_text("param n\nalloc X : [n\n")
    code, _, err = run(capsys, "equiv", f("law4_diag_transp", "p"), str(tmp_path / "broken.teil"))
    assert code == 2 and "broken.teil:" in err
    code, _, err = run(capsys, "equiv", f("law5_red_expa", "p"), f("law5_red_expa", "q"), "--param", "q=3")
    assert code == 2 and "neither program declares" in err
    code, _, err = run(capsys, "equiv", f("law5_red_expa", "p"), f("law5_red_expa", "q"), "--pad", "0")
    assert code == 2


def test_cli_json_param_and_pad(capsys: pytest.CaptureFixture[str]) -> None:
    p, q = str(PAIRS / "law5_symbolic_p.teil"), str(PAIRS / "law5_symbolic_q.teil")
    code, out, _ = run(capsys, "equiv", p, q, "--json", "--param", "c=2", "--pad", "4")
    assert code == 0
    cert = json.loads(out)
    assert cert["ok"] and cert["command"] == "equiv" and cert["params"] == {"c": 2} and cert["pad"] == 4
    assert cert["solver"]["random_seed"] == 42 and "real arithmetic" in cert["semantics"]
    (o,) = cert["outputs"]
    assert o["status"] == "proved" and "Sum-Constant" in o["laws"] and o["normal_form_p"] == o["normal_form_q"]
    code, out, _ = run(capsys, "equiv", str(PAIRS / "bad_red_expa_p.teil"), str(PAIRS / "bad_red_expa_q.teil"),
                       "--json")
    cert = json.loads(out)
    assert code == 1 and cert["exit_code"] == 1
    assert cert["outputs"][0]["counterexample"]["replayed_by"].startswith("ct.evaluate")


# --------------------------------------------------------------------------
# Each checker says no on a wrong input (mutant-style)
# --------------------------------------------------------------------------


def test_comparison_alone_does_not_prove_different_terms() -> None:
    """Without any search, the proof step must leave every perturbed pair unproved."""
    for stem in BAD_PAIRS:
        report = ct.equiv(*pair(stem), smoke=False, search_after=False)
        assert report.exit_code == 3 and not report.ok, stem


def test_coefficients_are_compared_under_the_assumptions_only() -> None:
    src = "param n, m\ninput alloc X : [n]\noutput alloc Y : [n]\nY = red (expa {} X)\n"
    p, q = ct.parse(src.format("n"), "p.teil"), ct.parse(src.format("m"), "q.teil")
    report = ct.equiv(p, q, smoke=False, search_after=False)
    assert report.outputs[0].status is Status.UNKNOWN and "coefficients" in report.outputs[0].reason
    assert ct.equiv(p, q).exit_code == 1  # and the search shows n != m


def test_a_constant_index_is_not_a_variable_of_the_same_name() -> None:
    """``proj k1`` with a parameter called k1 reads X[k1, #k1], not the diagonal X[k1, k1]."""
    src = "param n, k1\nassume k1 <= n\ninput alloc X : [n, n]\noutput alloc Y : [n]\nY = {}\n"
    p = ct.parse(src.format("proj k1 (transp 1 X)"), "p.teil")
    q = ct.parse(src.format("diag X"), "q.teil")
    assert ct.equiv(p, q, smoke=False, search_after=False).exit_code == 3
    assert ct.equiv(p, q).exit_code == 1


def test_renaming_summation_variables_keeps_the_index_pattern() -> None:
    names = {}
    k = equiv_nf.IVar(1, "k", "n")
    names[k] = "k1"
    m1, m2 = equiv_nf.IVar(2, "m", "n"), equiv_nf.IVar(3, "m", "n")
    t1 = equiv_nf.Term(equiv_nf.ONE, (m1, m2), (equiv_nf.Leaf("A", (k, m1)), equiv_nf.Leaf("B", (m1, m2))))
    t2 = equiv_nf.Term(equiv_nf.ONE, (m2, m1), (equiv_nf.Leaf("A", (k, m1)), equiv_nf.Leaf("B", (m1, m2))))
    t3 = equiv_nf.Term(equiv_nf.ONE, (m1, m2), (equiv_nf.Leaf("A", (k, m1)), equiv_nf.Leaf("B", (m2, m1))))
    assert equiv_nf.term_key(t1, names) == equiv_nf.term_key(t2, names)  # Fubini: order of Σ
    assert equiv_nf.term_key(t1, names) != equiv_nf.term_key(t3, names)  # B transposed


def test_zero_coefficients_keep_their_terms() -> None:
    """X - X is 0 or •: it is not the empty sum (a • difference must stay visible)."""
    src = "param n\ninput alloc X : [n]\ninput alloc Z : [n]\noutput alloc Y : [n]\nY = {}\n"
    report = ct.equiv(ct.parse(src.format("sub X X"), "p.teil"), ct.parse(src.format("sub Z Z"), "q.teil"),
                      smoke=False, search_after=False)
    assert report.exit_code == 3


def test_the_search_does_not_report_rounding() -> None:
    """Floats differ, reals do not: (a + b) + c vs a + (b + c) at 0.1, 0.2, 0.3 is no counterexample."""
    src = "input alloc a : []\ninput alloc b : []\ninput alloc c : []\noutput alloc y : []\ny = {}\n"
    p, q = ct.parse(src.format("add (add a b) c"), "p.teil"), ct.parse(src.format("add a (add b c)"), "q.teil")
    inputs = {"a": np.array(0.1), "b": np.array(0.2), "c": np.array(0.3)}
    assert float(ct.evaluate(p, inputs)["y"]) != float(ct.evaluate(q, inputs)["y"])  # rounding
    tp, tq = check_program(p), check_program(q)
    assert equiv_search._try(tp, tq, {}, inputs, ["y"], None, equiv_search.Budget()) is None


def test_the_replay_refuses_what_the_reference_engine_does_not_show() -> None:
    p, q = pair("law4_diag_transp")
    inputs = {"X": np.arange(8.0).reshape(2, 2, 2)}
    assert equiv_search.replay(p, q, {}, {}, inputs, "Y", (0, 1), None) is None
    b, c = pair("bad_diag_transp")
    inputs = {"X": np.arange(8.0).reshape(2, 2, 2)}
    assert equiv_search.replay(b, c, {}, {}, inputs, "Y", (0, 1), None) is not None


def test_the_exact_evaluator_agrees_with_the_reference_engine() -> None:
    rng = np.random.default_rng(0)
    for stem in ("interp", "interp_nested", "matmul", "normalize", "mttkrp", "helm"):
        p = ct.load(str(ROOT / "examples" / f"{stem}.teil"))
        params = {n: 2 for n in p.params}
        typed = check_program(p, params)
        inputs = {a.name: rng.integers(-3, 4, size=tuple(typed.solver.concrete(d) for d in a.shape)).astype(float)
                  for a in p.inputs()}
        exact = equiv_search.run_exact(typed, inputs)
        ref = ct.evaluate(p, inputs, params)
        for name, arr in exact.items():
            as_float = np.array([math.nan if v is None else float(v) for v in arr.ravel()]).reshape(arr.shape)
            assert np.allclose(as_float, ref[name], equal_nan=True), (stem, name)


def test_padding_is_proved_only_if_both_programs_pad_safely(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    prove_mod = sys.modules["core_teil.proving.prove"]  # ct.prove, the function, shadows the submodule's name
    real = prove_mod.prove

    def failing(program, params=None, pad=None, **kw):  # type: ignore[no-untyped-def]
        report = real(program, params, pad, **kw)
        first = report.obligations[0]
        import dataclasses

        bad = dataclasses.replace(first, status=prove_mod.Status.UNKNOWN)
        return dataclasses.replace(report, obligations=(bad, *report.obligations[1:]))

    monkeypatch.setattr(prove_mod, "prove", failing)
    report = ct.equiv(*pair("law4_diag_transp"), pad=4)
    assert report.exit_code == 3 and "padded runs are not known" in report.outputs[0].reason
    assert ct.equiv(*pair("law4_diag_transp")).ok  # without pad the premise is not needed


def test_the_quick_search_guards_a_broken_normaliser(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant normaliser that forgets indices would 'prove' a dropped transposition;
    the search that runs before the proof refutes the pair all the same."""
    real = equiv_nf._ix_key
    monkeypatch.setattr(equiv_nf, "_ix_key", lambda i, names: "?" if isinstance(i, equiv_nf.IVar) else real(i, names))
    p, q = pair("bad_transp_dropped")
    assert ct.equiv(p, q, smoke=False).exit_code == 0  # the mutant alone is fooled ...
    assert ct.equiv(p, q).exit_code == 1  # ... the full pipeline is not


def test_too_large_normal_forms_are_unknown_not_equivalent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(equiv_nf, "MAX_TERMS", 0)
    report = ct.equiv(*pair("red_add"), smoke=False, search_after=False)
    assert report.exit_code == 3 and "too large" in report.outputs[0].reason


def test_ct_equiv_is_the_function_even_after_importing_the_submodule() -> None:
    import sys

    import core_teil.proving.equiv  # noqa: F401

    assert ct.equiv is sys.modules["core_teil.proving.equiv"].equiv and callable(ct.equiv)


def test_the_search_starts_where_the_assumptions_allow() -> None:
    """``assume n >= 5``: extents 1..3 are not allowed; the search starts at n = 5."""
    src = "param n\nassume n >= 5\ninput alloc X : [n]\noutput alloc Y : []\nY = {}\n"
    p, q = ct.parse(src.format("proj 4 X"), "p.teil"), ct.parse(src.format("proj 5 X"), "q.teil")
    report = ct.equiv(p, q)
    cex = report.outputs[0].counterexample
    assert report.exit_code == 1 and cex is not None and cex.params == {"n": 5}


def test_extent_one_dimensions_match_constant_indices() -> None:
    src = "param n\ninput alloc X : [1, n]\noutput alloc Y : [1, n]\nY = {}\n"
    p = ct.parse(src.format("expa 1 (proj 1 X)"), "p.teil")
    for body in ("expa 1 (red X)", "X"):
        assert ct.equiv(p, ct.parse(src.format(body), "q.teil"), smoke=False, search_after=False).ok


def test_assumptions_without_common_values_are_a_usage_error() -> None:
    p = ct.parse("param n\nassume n >= 2\ninput alloc X : [n]\noutput alloc Y : [n]\nY = X\n", "p.teil")
    q = ct.parse("param n\nassume n <= 1\ninput alloc X : [n]\noutput alloc Y : [n]\nY = X\n", "q.teil")
    with pytest.raises(TeilInputError, match="together admit no parameter values"):
        ct.equiv(p, q)
    r = ct.parse("param n\nassume n >= 1\ninput alloc X : [n]\noutput alloc Y : [n]\nY = X\n", "r.teil")
    assert any("assumptions differ" in note for note in ct.equiv(p, r).notes)
    assert not any("assumptions differ" in note for note in ct.equiv(p, p).notes)


def test_z3s_model_seeds_a_counterexample_random_inputs_miss() -> None:
    """(X·Y)/(Z·W) vs (X/Z)·(Y/W): they differ only where a numerator is 0 and a divisor is 0
    (0/0 = 0, but • · 0 = •); the model of the failed algebra check places those values."""
    src = ("param n\ninput alloc X : [n]\ninput alloc Y : [n]\ninput alloc Z : [n]\ninput alloc W : [n]\n"
           "output alloc R : [n]\nR = {}\n")
    p = ct.parse(src.format("div (mul X Y) (mul Z W)"), "p.teil")
    q = ct.parse(src.format("mul (div X Z) (div Y W)"), "q.teil")
    report = ct.equiv(p, q)
    cex = report.outputs[0].counterexample
    assert report.exit_code == 1 and cex is not None and cex.params == {"n": 1}
    assert "•" in (cex.value_p, cex.value_q)


def test_the_algebra_check_respects_undefinedness() -> None:
    """X + (Y - X) = Y in the reals, not in V ∪ {•} (X = •): z3 must not prove it, the search refutes it."""
    src = "param n\ninput alloc X : [n]\ninput alloc Y : [n]\noutput alloc R : [n]\nR = {}\n"
    p, q = ct.parse(src.format("add X (sub Y X)"), "p.teil"), ct.parse(src.format("Y"), "q.teil")
    assert ct.equiv(p, q, smoke=False, search_after=False).exit_code == 3
    report = ct.equiv(p, q)
    assert report.exit_code == 1 and report.outputs[0].counterexample.value_p == "•"


def _chain(n: int, op: str) -> str:
    lines = ["param a", "input alloc X : [a]", "input alloc Z : [a]", "alloc t : [a]", "output alloc Y : [a]", "t = X"]
    lines += [f"t = {op} t Z"] * n + ["Y = t"]
    return "\n".join(lines) + "\n"


def test_the_same_statements_need_no_normal_form() -> None:
    p = ct.parse(_chain(1500, "div"), "p.teil")
    report = ct.equiv(p, ct.parse(_chain(1500, "div"), "q.teil"))
    assert report.ok and "reflexivity" in report.outputs[0].steps[0]


def test_normal_forms_too_large_to_build_are_unknown_never_a_crash() -> None:
    p, q = ct.parse(_chain(1500, "div"), "p.teil"), ct.parse(_chain(1500, "div").replace("t = X", "t = add X X"),
                                                                "q.teil")
    report = ct.equiv(p, q, smoke=False, search_after=False)
    assert report.exit_code == 3 and "too large" in report.outputs[0].reason


def test_other_outputs_are_still_proved_when_one_differs() -> None:
    src = "param n\ninput alloc X : [n, n]\noutput alloc Y : [n, n]\noutput alloc W : [n]\nY = {}\nW = red X\n"
    report = ct.equiv(ct.parse(src.format("transp 1 X"), "p.teil"), ct.parse(src.format("X"), "q.teil"))
    status = {o.name: o.status for o in report.outputs}
    assert status == {"Y": Status.REFUTED, "W": Status.PROVED} and report.exit_code == 1


# --------------------------------------------------------------------------
# A seeded soundness check: every "equivalent" is confirmed on concrete inputs
# --------------------------------------------------------------------------

FUZZ_HEAD = ("param n\ninput alloc X : [n]\ninput alloc Y : [n]\ninput alloc S : []\ninput alloc A : [n, n]\n"
             "output alloc Z : [n]\nZ = {}\n")


def _vec(r, d: int) -> str:  # type: ignore[no-untyped-def]
    c = r.randrange(10) if d > 0 else 0
    if c == 0:
        return r.choice(["X", "Y"])
    if c <= 3:
        return f"({r.choice(['add', 'sub', 'mul', 'div'])} {_vec(r, d - 1)} {_vec(r, d - 1)})"
    if c == 4:
        return f"(mul {r.choice(['S', '(red ' + _vec(r, d - 1) + ')'])} {_vec(r, d - 1)})"
    if c <= 6:
        return f"({r.choice(['red', 'diag', 'proj 1'])} {_mat(r, d - 1)})"
    if c <= 8:
        return f"(red (transp 1 {_mat(r, d - 1)}))"
    return f"(red (expa n {_vec(r, d - 1)}))"


def _mat(r, d: int) -> str:  # type: ignore[no-untyped-def]
    c = r.randrange(5) if d > 0 else 0
    if c == 0:
        return "A"
    if c == 1:
        return f"(transp 1 {_mat(r, d - 1)})"
    if c == 2:
        return f"(prod {_vec(r, d - 1)} {_vec(r, d - 1)})"
    if c == 3:
        return f"({r.choice(['add', 'sub', 'mul'])} {_mat(r, d - 1)} {_mat(r, d - 1)})"
    return f"(expa n {_vec(r, d - 1)})"


def test_every_proof_of_random_pairs_is_confirmed_on_concrete_inputs() -> None:
    import random

    r = random.Random(2026)
    rng = np.random.default_rng(7)
    decided = {0: 0, 1: 0, 3: 0}
    for _ in range(24):
        e1 = _vec(r, 3)
        e2 = _vec(r, 3) if r.random() < 0.4 else e1.replace(" A", " (transp 1 (transp 1 A))", 1)
        p, q = ct.parse(FUZZ_HEAD.format(e1), "p.teil"), ct.parse(FUZZ_HEAD.format(e2), "q.teil")
        report = ct.equiv(p, q)
        decided[report.exit_code] += 1
        if report.exit_code != 0:
            continue
        for n in (1, 2, 3):
            tp, tq = check_program(p, {"n": n}), check_program(q, {"n": n})
            shapes = {"X": (n,), "Y": (n,), "S": (), "A": (n, n)}
            for variant in range(4):
                ins = {x: rng.integers(-2, 3, size=s).astype(float) for x, s in shapes.items()}
                if variant == 3:
                    ins["A"][0, 0] = math.nan
                a, b = equiv_search.run_exact(tp, ins)["Z"], equiv_search.run_exact(tq, ins)["Z"]
                assert all(a[i] == b[i] for i in np.ndindex(*a.shape)), (e1, e2, n, ins)
    assert decided[0] and decided[1]  # both verdicts occur
