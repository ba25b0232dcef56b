"""Review rL of the teaching layer (issue 16): the gaps its mutants found, and its bad inputs F1-F12.

Each case names what it guards in its id: a mutant of the review (``M02``, ``Q17``, ...: the test
fails with that mutant applied and passes without it) or a finding (``F1``..``F12``: the test failed
before the fix).  Exercises: a wrong answer is wrong with its exact message, hint or counterexample,
an equal answer in other words is right, a malformed answer is exit 2 naming the exercise and the
form of the answer.  quickcheck: each claim of chapter 5 is falsified for every seed (F1), the
conditions of Theorem 3 are each checked, the caps and a claim the checker rejects are exit 2 in the
claim.  The public API: partial derivations in LaTeX, traces in LaTeX and HTML, ``ct.check``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import core_teil as ct
from core_teil import cli
from core_teil.errors import TeilError
from core_teil.teach import quickcheck as qc
from core_teil.teach.exercises import BY_ID, Kind, Mark, check_answer

RIGHT, WRONG = Mark.RIGHT, Mark.WRONG

MATMUL = """lang full
param l, m, n
input alloc B : [l, m]
input alloc C : [m, n]
output alloc A : [l, n]
A = {expr}
"""
MATVEC_HEAD = "lang core\nparam n, p\ninput alloc M : [n, p]\ninput alloc x : [p]\noutput alloc y : [n]\n"

#: An ill-typed program with three failing statements: T-Diag (an equation), T-Proj (an inequation), T-Transp.
ILL = """lang full
param m, n
input alloc A : [m, n]
input alloc B : [n, 3]
output alloc C : [m]
output alloc D : [n]
output alloc E : [2, 2]
C = red 2 (diag 1 2 A)
D = proj 1 5 (transp 1 2 B)
E = transp 1 3 A
"""
REX = "param k\ninput alloc x : [3]\noutput alloc y : [3]\ny = red (expa k x)\n"


def asks(id_: str) -> str:
    return BY_ID[id_].asks


def answer_for(id_: str, text: str, tmp_path: Path) -> str:
    """A program answer is a file; any other answer is its text."""
    if BY_ID[id_.strip()].kind is not Kind.PROGRAM:
        return text
    path = tmp_path / "answer.teil"
    path.write_text(text, encoding="utf-8")
    return str(path)


# -- exercises: the verdict and its exact words ---------------------------------------------------------

VERDICTS = [
    # (exercise, answer, mark, field of the verdict, its exact text)
    pytest.param("1.1", "[2, 3, 3, 4]; [2, 3, 3, 4]; [3]; [5]; [2]", WRONG, "hint",
                 "item 3, `contr (transp 1 (prod A v))`: it has no shape: one rule's premise fails "
                 "(`core-teil derive` a program with it)", id="M02-a-shape-for-an-ill-typed-item"),
    pytest.param("1.1", "[2, 3, 3, 4]; none; none; [5]; [2]", WRONG, "hint",
                 "item 2, `transp 2 (prod A B)`: it is well typed: apply the rules of section 1.3 inside out",
                 id="E01-none-for-a-typed-item"),
    pytest.param("1.1", "[2, 3, 3, 4]; [2, 3, 3, 4]; ill-typed; [5]; [2]", RIGHT, "message",
                 "all 5 shapes are right", id="A15-ill-typed-spelled-out"),
    pytest.param(" 1.1 ", "[2, 3, 3, 4]; [2, 3, 3, 4]; none; [5]; [2]", RIGHT, "message",
                 "all 5 shapes are right", id="E32-id-with-blanks"),
    pytest.param("1.2", MATVEC_HEAD + "y = red (diag M)\n", WRONG, "counterexample",
                 "n = 1, p = 2: T-Diag fails", id="E40-type-error-with-its-counterexample"),
    pytest.param("1.2", MATVEC_HEAD + "y = red (transp 1 M)\n", WRONG, "hint",
                 "trace your program at that index (core-teil trace FILE 'y[1]' --param n=1,p=1) and compare "
                 "with the exercise's formula", id="E03-trace-hint-with-the-params"),
    pytest.param("1.3", "v = transp 2 (transp 1 (transp 2 u))", RIGHT, "message",
                 "core-teil equiv proves it equivalent to the solution, for every shape and input",
                 id="E02-v-equals-e"),
    pytest.param("1.4", "T-Elem k = 1", WRONG, "message", "T-Elem is not the rule that rejects the program",
                 id="M10-another-rule"),
    pytest.param("2.1", "T-Transp 3 == 2", WRONG, "message", "the derivation does not stop at T-Transp",
                 id="M12-another-rule"),
    pytest.param("2.1", "T-Contr 3 == 3", WRONG, "message", "T-Contr fails, but not at the premise 3 == 3",
                 id="M13-both-sides-of-the-premise"),
    pytest.param("2.1", "T-Contr 3 <= 2", WRONG, "message", "T-Contr fails, but not at the premise 3 <= 2",
                 id="E08-the-relation-counts"),
    pytest.param("2.2", "diag A : [n, n]", WRONG, "message", "`diag A` is the node, but its shape is not [n, n]",
                 id="M14-the-shape-counts"),
    pytest.param("2.2", "A : [n, n]", WRONG, "hint", "the leaf A : [n, n] is in both derivations",
                 id="E09-a-leaf-in-both-derivations"),
    pytest.param("2.3", "OK-Stmt T-Transp T-Var", WRONG, "hint", "count the adjacent swaps the lowering needs",
                 id="E10-too-few-transpositions"),
    pytest.param("2.4", "assume m == n and n == h", RIGHT, "message",
                 "with `assume m == n and n == h` the program type-checks for every allowed m, n, h (is that the "
                 "kernel its author wanted? see the solution)", id="E11-assume-prefix"),
    pytest.param("3.1", "sum_{k=1..n} B[i, j, k] * C[q]", WRONG, "message", "the term uses q, which is not bound",
                 id="M20-an-unbound-name"),
    pytest.param("3.1", "sum_{k=1..n} C[i] * B[i,j,k]", RIGHT, "message",
                 "the term equals A[i,j] at every index (on random inputs, reference engine)",
                 id="A06-a-sum-binds-the-product-after-it"),
    pytest.param("3.2", "B[2, i, j]; A[s, i, j]", WRONG, "hint",
                 "expa 1 k ignores the new index s: which index of A is read?", id="E16-hint-of-part-2"),
    pytest.param("3.3", "[•, 0, 0]; 0", WRONG, "message", "part 2 is not right (first difference at index 1)",
                 id="A01-a-scalar-for-a-vector"),
    pytest.param("3.3", "[•, 0, 0]; [1, 1, 1]", WRONG, "message", "part 2 is not right (first difference at index 1)",
                 id="E18-both-parts-compared"),
    pytest.param("3.3", "[inf, nan, 0]; [0, 0, 0]", WRONG, "message",
                 "part 1 is not right (first difference at index 1)", id="E17-first-difference-one-based"),
    pytest.param("3.3", "[•, 0/1, 0]; [0, 0, 0]", RIGHT, "message", "both results are right",
                 id="A16-fractions-are-values"),
    pytest.param("3.4", "5.0", RIGHT, "message", "the count is right", id="F12-a-whole-number-written-5.0"),
    pytest.param("4.1", "k >= 3", WRONG, "hint",
                 "with k = 2, m = 1, n = 1 the read is in bounds, but your hypothesis excludes it",
                 id="E35-stronger-hypothesis-with-the-model"),
    pytest.param("4.2", "st-stmt", RIGHT, "message", "St-Stmt", id="A03-names-without-case"),
    pytest.param("4.3", "sat unsat sat", WRONG, "message", "z3 answers otherwise on some script",
                 id="E21-order-of-the-scripts"),
    pytest.param("4.4", "Reads-In-Bounds", RIGHT, "message",
                 "prove refutes exactly that obligation: a wrong equation is caught by the certificate",
                 id="E22-obligations-without-case"),
    pytest.param("4.5", "WD-Diag (all ranks)", WRONG, "message", "right so far, but the exercise asks for more",
                 id="M27_M28-half-an-answer-says-nothing-more"),
    pytest.param("5.1", "[8, 16, 8]; 85%", WRONG, "message", "the shape is right, the share of padding is not",
                 id="M33-share-within-half-a-percent"),
    *[pytest.param("5.1", f"[8, 16, 8]; {share}", WRONG, "message", "the shape is right, the share of padding is not",
                   id=f"F2-undefined-share-{share}") for share in ("nan%", "•", "undef%")],
    pytest.param("5.1", "[8, 16, 8]; 0.92", RIGHT, "message", "shape and share are right",
                 id="E24-share-as-a-fraction"),
    pytest.param("5.2", "x / 1 = x", WRONG, "message", "true, but not what the padding needs",
                 id="M35-zero-numerator-required"),
    pytest.param("5.2", "s / inf = 0", WRONG, "counterexample", "s = •: • / inf = •, not 0",
                 id="E26-false-at-undefined"),
    pytest.param("5.2", "s / 0 = •", WRONG, "counterexample", "s = 0: 0 / 0 = 0, not •", id="E27-false-at-zero"),
    pytest.param("6.1", "A[0, j]", WRONG, "message",
                 "the term reads out of bounds: A[0, j] reads outside A : [2, 3] (with n = 2, p = 3, i = 1, j = 1)",
                 id="A05_E14-index-0-reads-out-of-bounds"),
    pytest.param("6.1", "A[i, j] * 1.05", WRONG, "counterexample",
                 "n = 2, p = 3\nA = [[0, 0, 2], [3, -3, -2]]\nat i = 1, j = 3: your term is 2.1, [[B]] is 2",
                 id="A07-five-percent-is-not-equal"),
    pytest.param("6.1", "A[i, j] / 0", WRONG, "counterexample",
                 "n = 2, p = 3\nA = [[0, 0, 2], [3, -3, -2]]\nat i = 1, j = 3: your term is •, [[B]] is 2",
                 id="A17-undefined-shown-as-bullet"),
    # zero on 0..3 but not on -3..-1: the inputs must be negative too
    pytest.param("6.1", "A[i, j] + A[i, j] * (A[i, j] - 1) * (A[i, j] - 2) * (A[i, j] - 3)", WRONG, "counterexample",
                 "n = 2, p = 3\nA = [[0, 0, 2], [3, -3, -2]]\nat i = 2, j = 2: your term is 357, [[B]] is -3",
                 id="E13-inputs-are-negative-too"),
    *[pytest.param("6.1", term, RIGHT, "message",
                   "the term equals B[i,j] at every index (on random inputs, reference engine)", id=mid)
      for term, mid in (("A[i, j] + A[i, j] - A[i, j]", "A08-minus-is-minus"),
                        ("A[i, j] * 2 / 2", "A09-division-is-division"),
                        ("if 1 <= 1 then A[i, j] else 0", "A12-the-guard-is-less-or-equal"),
                        ("A[i, j] + 0 / 0", "A13-controlled-division"))],
    pytest.param("7.1", MATMUL.format(expr="add (contr 2 3 (prod B C)) (contr 2 3 (prod B C))"), WRONG, "message",
                 "the program does not follow the exercise: write it with exactly one contr (and no red or diag)",
                 id="M08-two-contrs"),
    pytest.param("7.3", "T-Diag, T-Elem", WRONG, "message", "that is not it", id="M26-a-right-name-among-wrong-ones"),
    pytest.param("7.3", "T-Diag", RIGHT, "message", "T-Diag; T-Contr as well", id="E36-the-other-rule-named"),
]


@pytest.mark.parametrize(("id_", "text", "mark", "field", "expected"), VERDICTS)
def test_verdict(id_, text, mark, field, expected, tmp_path):
    verdict = check_answer(id_, answer_for(id_, text, tmp_path))
    assert verdict.mark is mark, verdict.render()
    assert getattr(verdict, field) == expected
    assert verdict.exit_code == (0 if mark is RIGHT else 1)


def test_half_an_answer_does_not_give_the_rest_away():
    """M28: 'right so far' names nothing the answer lacks (4.5's rank, 8)."""
    text = check_answer("4.5", "WD-Diag (all ranks)").render()
    assert text.splitlines()[1:3] == ["  right so far, but the exercise asks for more",
                                      "hint: `make verify` has a lemma per operator proved over shapes of "
                                      "symbolic rank"]


def test_an_undecided_equiv_is_not_right(monkeypatch, tmp_path):
    """E05: when equiv can neither prove nor refute, the answer is not right."""
    from core_teil.proving import equiv as eq

    real = eq.equiv

    def unknown(p, q, *args, **kwargs):
        report = real(p, q, *args, **kwargs)
        outputs = tuple(type(o)(**{**o.__dict__, "status": eq.Status.UNKNOWN, "counterexample": None,
                                   "reason": "gave up"}) for o in report.outputs)
        return type(report)(**{**report.__dict__, "outputs": outputs})

    monkeypatch.setattr(eq, "equiv", unknown)
    verdict = check_answer("7.1", answer_for("7.1", MATMUL.format(expr="contr 2 3 (prod B C)"), tmp_path))
    assert (verdict.mark, verdict.message, verdict.hint) == (
        WRONG, "core-teil equiv could neither prove nor refute it equal to the solution", "gave up")


# -- exercises: malformed answers are exit 2, naming the exercise and the form of the answer ---------------

BAD_ANSWERS = [
    # (exercise, answer, the exact message)
    pytest.param("1.4", "T-Proj q = 1", "exercise 1.4: the program has no parameter q", id="E07-no-such-parameter"),
    pytest.param("1.4", "T-Proj m = 1", "exercise 1.4: give the value of k as well", id="F3-k-is-required"),
    pytest.param("1.3", "transp 1 u\ntransp 2 u", "exercise 1.3 takes one expression on one line, the answer has "
                 "2 lines", id="F11-one-expression"),
    pytest.param("3.1", "Σ_{m1=1..n} (B[i", "exercise 3.1: 'Σ_{m1=1..n} (B[i': expected an index or an extent, found "
                 f"'the end' (the answer: {asks('3.1')})", id="E34-the-form-of-the-answer"),
    pytest.param("3.1", "sum_{k=1..99999999999} B[i,j,1]", "exercise 3.1: 'sum_{k=1..99999999999} B[i,j,1]': a sum's "
                 f"bound is at most 1000 here (the exercises' extents are small), not 99999999999 (the answer: "
                 f"{asks('3.1')})", id="F6-a-sum-bound-cap"),
    pytest.param("3.1", "sum_{k=1..1000} sum_{l=1..1000} B[i,j,1]", "exercise 3.1: the term takes more than 100,000 "
                 f"steps to evaluate at one index; the exercises' terms take a few hundred (the answer: "
                 f"{asks('3.1')})", id="F6-a-step-cap"),
    pytest.param("3.2", "B[2, i, j]; ,", "exercise 3.2: part 2, ',', is not a list of reads such as B[2, i, j]",
                 id="F10-no-read"),
    pytest.param("3.2", "B[2, i, j]; A[i, j] blah", "exercise 3.2: part 2, 'A[i, j] blah', is not a list of reads "
                 "such as B[2, i, j]", id="F10-trailing-text"),
    pytest.param("3.3", "[[1, 2], [3]]; [0, 0, 0]", "exercise 3.3: '[[1, 2], [3]]': the rows have different lengths "
                 f"(a vector of vectors is rectangular) (the answer: {asks('3.3')})", id="F4-a-ragged-vector"),
    pytest.param("3.4", "5.5", "exercise 3.4: '5.5' is not a number of operations", id="F12-a-fraction-of-a-count"),
    pytest.param("4.1", "q >= 2", "exercise 4.1: 'q' in the hypothesis is not a parameter of the program (k, m, n)",
                 id="F5-an-undeclared-name"),
    pytest.param("6.1", "sum_{k=0..n} A[i, j]", "exercise 6.1: 'sum_{k=0..n} A[i, j]': sums run from 1 (write "
                 f"Σ_{{m=1..n}}) (the answer: {asks('6.1')})", id="A10-sums-run-from-one"),
    pytest.param("6.1", "A[i]", f"exercise 6.1: A[i]: A has rank 2, so it takes 2 indices (the answer: {asks('6.1')})",
                 id="A14-a-read-of-the-wrong-rank"),
]


@pytest.mark.parametrize(("id_", "text", "message"), BAD_ANSWERS)
def test_malformed_answers_are_bad_input(id_, text, message):
    with pytest.raises(TeilError) as info:
        check_answer(id_, text)
    assert info.value.exit_code == 2
    assert info.value.message == message


@pytest.mark.parametrize(("id_", "text", "rendered"), [
    pytest.param("1.3", "transp 1 (u", "exercise 1.3, your expression:1:10: syntax error: unterminated parenthesis: "
                 "this '(' is never closed\n    1 | transp 1 (u\n                 ^", id="F11-expression"),
    pytest.param("2.2", "diag A B : [n]", "exercise 2.2, your judgement:1:8: syntax error: unexpected `B` after the "
                 "complete expression (too many arguments? in lang core `diag` takes no integer positions, only an "
                 "expression; did you mean `lang full`?)\n    1 | diag A B\n               ^", id="F11-judgement"),
])
def test_syntax_errors_point_into_the_answer_not_the_template(id_, text, rendered):
    with pytest.raises(TeilError) as info:
        check_answer(id_, text)
    assert info.value.exit_code == 2 and info.value.render() == rendered


MATMUL_FILE = "# C = A B\nlang full\nparam l, m, n\ninput alloc A : [l, m]\ninput alloc B : [m, n]\n" \
              "output alloc C : [l, n]\nC = red 2 (diag 2 3 (prod A B))\n"


@pytest.mark.parametrize(("argv", "message"), [
    pytest.param(["1.2", "empty.teil"], f"empty.teil: the program is empty; exercise 1.2 takes {asks('1.2')}",
                 id="F9-an-empty-file"),
    pytest.param(["1.2", "justlang.teil"], f"justlang.teil: the program is empty; exercise 1.2 takes {asks('1.2')}",
                 id="F9-only-lang"),
    pytest.param(["1.2", "adir.teil"], f"adir.teil: is a directory, not an answer file (exercise 1.2 takes "
                 f"{asks('1.2')})", id="F11-a-directory"),
    pytest.param(["1.1", "answer.txt"], f"answer.txt: no such file (exercise 1.1 takes {asks('1.1')})",
                 id="E31-a-missing-txt-file"),
    *[pytest.param([id_, "matmul.teil"], f"exercise {id_} takes {asks(id_)}; matmul.teil is a TeIL program",
                   id=f"F11-a-program-for-{id_}") for id_ in ("1.3", "2.2", "2.4", "3.1")],
])
def test_answer_files_that_are_no_answer_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.teil").write_text("")
    (tmp_path / "justlang.teil").write_text("lang core\n")
    (tmp_path / "adir.teil").mkdir()
    (tmp_path / "matmul.teil").write_text(MATMUL_FILE)
    assert cli.main(["exercise", *argv]) == 2
    assert capsys.readouterr().err == f"core-teil: input error: {message}\n"


# -- quickcheck ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_theorem_3_with_the_unguarded_expa_is_falsified_for_every_seed(seed):
    """F1: shrinking to a scalar hole crashed for 14 of these 20 seeds; now each shrinks to the report's
    own counterexample, n = 1 and X = 1 (padded: 4)."""
    result = qc.quickcheck("red (expa n X)", pad=4, unguarded_expa=True, seed=seed)
    cex = result.counterexample
    assert result.status is qc.Status.FALSIFIED and result.exit_code == 1
    instance = cex.case.instance
    assert (instance.params, instance.shapes, float(cex.case.inputs["X"])) == ({"n": 1}, {"X": ()}, 1.0)
    assert cex.failure.values == (("padded", 4.0), ("unpadded", 1.0))


def test_lemma_5_verbatim_is_falsified_with_a_scalar_hole(capsys):
    """F1 at the default seed: 0 · • = • in the padding of prod X Y, X a scalar."""
    assert cli.main(["quickcheck", "prod X Y", "--pad", "4", "--claim", "zeros"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[2:6] == ["  X : [] = •", "  Y : [1] = [0]", "  the padding holds a value other than 0, at [2]:",
                        "    padded = •"]


def test_float_prod_breaks_condition_c():
    """Q17: • in the padding where the original is not • (inf · 0 = NaN)."""
    failure = qc.quickcheck("prod X Y", pad=2, values="float").counterexample.failure
    assert failure.what.startswith("• in the padding although the original at [")


def test_unguarded_expa_breaks_condition_b():
    """Q18: the padding of the unguarded expa holds X's values."""
    failure = qc.quickcheck("expa n X", pad=4, unguarded_expa=True).counterexample.failure
    assert failure.what == "the padding holds a value other than 0 or •"


def test_omega_is_every_in_domain_index_along_the_padded_coordinates():
    """Q51: Ω(k) of a padding entry runs over the whole original extent of each padded coordinate."""
    law = qc.parse_law("prod X Y")
    frame = next(f for f in qc.frames(law, same_shape=True) if f.ranks == {"X": 1, "Y": 1})
    extents = {a: 1 if a in frame.holes["X"] else 2 for t in frame.holes.values() for a in t}
    case = qc.Case(qc._instance(frame, law, extents), {"X": np.array([math.inf]), "Y": np.array([math.nan, 1.0])})
    failure = qc.judge(law, qc.Claim.SIMULATION, case, 4)
    assert failure.what == "• in the padding although the original at [1, 2] is not •"


@pytest.mark.parametrize(("sides", "options", "ok"), [
    pytest.param(("add (expa 3 Y) X", "add X (expa 3 Y)"), {"budget": 60}, True, id="Q26-integer-extents-fix-holes"),
    # true on the original domain; in the padding lhs is X · 0 (• where X is •), rhs the guard's 0
    pytest.param(("mul X (expa n Y)", "expa n (mul X Y)"), {"pad": 2}, True, id="Q35-compared-on-the-original-domain"),
    pytest.param(("smul 10 X", "smul 11 X"), {}, False, id="Q37-ten-and-eleven-differ"),
    pytest.param(("lhs", "lhs"), {"budget": 20}, True, id="Q44-a-hole-named-lhs"),
    # lhs is typed only when all dimensions of X and Y agree; then rhs has another shape
    pytest.param(("add (diag (diag X)) (diag (diag Y))", "red (add X Y)"), {"claim": "typing"}, False,
                 id="Q40-typing-needs-unified-instances"),
])
def test_claims(sides, options, ok):
    result = qc.quickcheck(*sides, **options)
    assert result.ok is ok, result.render()


def test_same_values():
    """Q38: an infinity equals only itself."""
    assert [qc.same(a, b) for a, b in ((math.inf, 1.0), (math.inf, -math.inf), (math.inf, math.inf))] == \
        [False, False, True]


def test_typing_claims_need_random_shapes():
    """Q41: X and transp 1 (transp 1 X) differ where X has rank < 2, which no unified instance has."""
    failure = qc.quickcheck("X", "transp 1 (transp 1 X)", claim="typing").counterexample.failure
    assert failure.what.startswith("lhs is typed (") and failure.what.endswith("), rhs is ill-typed (by T-Transp)")


@pytest.mark.parametrize(("sides", "claim", "seeds", "shapes"), [
    # only [a, a, a] types both sides, and a = 2 is the smallest extent at which they differ
    pytest.param(("transp 1 2 (transp 2 3 E)", "E"), "equal", range(6), [{"E": (2, 2, 2)}], id="Q34-extents"),
    pytest.param(("transp 1 X", "X"), "typing", [3], [{"X": (1, 2)}, {"X": (2, 1)}], id="Q43-typing-extents"),
])
def test_counterexamples_shrink_their_extents(sides, claim, seeds, shapes):
    for seed in seeds:
        result = qc.quickcheck(*sides, claim=claim, seed=seed)
        assert result.counterexample.case.instance.shapes in shapes, result.render()


def test_the_counterexample_names_its_index_one_based_and_the_pad():
    """Q46, Q47."""
    assert all(j >= 1 for j in qc.quickcheck("red 1 (transp 1 2 E)", "red 1 E").counterexample.failure.index)
    text = qc.quickcheck("red (expa n X)", pad=4, unguarded_expa=True).render()
    assert "(save it and `core-teil trace` it at that index with --pad 4):" in text


@pytest.mark.parametrize(("argv", "message"), [
    pytest.param(["X", "X", "--max-extent", "0"], "--max-extent 0: the largest extent must be between 1 and 16 "
                 "(quickcheck tests small shapes)", id="Q45-max-extent-at-least-1"),
    pytest.param(["X", "X", "--budget", "0"], "--budget 0: the number of test cases must be between 1 and 10,000",
                 id="Q45-budget-at-least-1"),
    pytest.param(["X", "X", "--budget", "99999999999999999999999"], "--budget 99999999999999999999999: the number "
                 "of test cases must be between 1 and 10,000", id="F7-budget-cap"),
    pytest.param(["prod X Y", "prod X Y", "--max-extent", "99999999999"], "--max-extent 99999999999: the largest "
                 "extent must be between 1 and 16 (quickcheck tests small shapes)", id="F7-max-extent-cap"),
    pytest.param(["red X", "--pad", "99999999999"], "--pad 99999999999: quickcheck pads to multiples of at most 16 "
                 "(`core-teil prove FILE --pad M` proves the padding claim for any M)", id="F7_F11-pad-cap"),
    *[pytest.param(["red X", "X", "--claim", "typing", *option], "the claim 'typing' is about shapes, not values: "
                   "--pad, --unguarded-expa and --values do not apply to it", id=f"F11-typing-takes-no{option[0]}")
      for option in (["--pad", "4"], ["--unguarded-expa"], ["--values", "float"])],
])
def test_quickcheck_caps_and_options_are_bad_input(argv, message, capsys):
    assert cli.main(["quickcheck", *argv]) == 2
    assert capsys.readouterr().err == f"core-teil: input error: {message}\n"


@pytest.mark.parametrize(("sides", "rendered"), [
    pytest.param(["red (expa 99999999999 X)", "smul 99999999999 X"],
                 "<lhs>:1:6: input error [T-Expa]: the claim's extent 99999999999 must be at most 16 (quickcheck "
                 "tests small shapes)\n    1 | red (expa 99999999999 X)\n             ^^^^^^^^^^^^^^^^^^",
                 id="F7-a-literal-extent-cap"),
    pytest.param(["expa 0 X", "expa 0 X"], "<lhs>:1:1: input error [T-Expa]: the claim's extent 0 must be a positive "
                 "integer\n    1 | expa 0 X\n        ^^^^^^^^", id="F8-expa-0"),
    pytest.param(["X", "proj 0 X"], "<rhs>:1:1: input error [T-Proj]: the claim's extent 0 must be a positive "
                 "integer\n    1 | proj 0 X\n        ^^^^^^^^", id="F8-proj-0"),
    pytest.param(["smul n", "X"], "<lhs>:1:1: syntax error: `smul n` takes one tensor after its factor, as in "
                 "'smul n X'\n    1 | smul n\n        ^^^^^^", id="F11-smul-in-the-students-words"),
    pytest.param(["red (smul 3 X) Y", "X"], "<lhs>:1:16: syntax error: unexpected `Y` after the complete expression "
                 "(too many arguments? in lang core `red` takes no integer position, only an expression; did you mean "
                 "`lang full`?)\n    1 | red (smul 3 X) Y\n                       ^", id="F11-columns-after-smul"),
])
def test_a_claim_the_checker_rejects_is_bad_input_located_in_the_claim(sides, rendered, capsys):
    assert cli.main(["quickcheck", *sides]) == 2
    assert capsys.readouterr().err == rendered + "\n"


def test_a_passed_typing_claim_names_no_inputs():
    """F11: typing claims run nothing, so the verdict says nothing of padding or input values."""
    lines = qc.quickcheck("transp 1 (transp 1 X)", "X", claim="typing").render().splitlines()
    assert lines[0] == "quickcheck: transp 1 (transp 1 X)  =>  X keeps the type (where lhs is well typed)   [lang core]"
    assert lines[1].startswith("OK: passed 300 random test(s) (2 rank assignment(s) of X) in ")


def test_an_instance_the_checker_rejects_is_reported_against_the_claim(monkeypatch):
    """F8, the last line of defence: were a claim's own extents not checked, its instance's type error would
    still be exit 2 about the claim, never a falsification at a line of the generated program."""
    monkeypatch.setattr(qc, "_check_extents", lambda *args: None)
    with pytest.raises(TeilError) as info:
        qc.quickcheck("expa 0 X", "expa 0 X")
    assert info.value.exit_code == 2 and info.value.message == (
        "the claim 'expa 0 X'  vs  'expa 0 X': an instance of it is rejected (type error [S-Var]: extent 0 is not a "
        "positive integer); check each side with `core-teil check` on a program with these shapes")


def test_instances_too_large_to_run_are_not_tested():
    """F7: a claim whose every instance has a node of more than MAX_ENTRIES entries is bad input."""
    with pytest.raises(TeilError) as info:
        # 16^5 = 1,048,576 entries with X's extents 1: just over the cap, small enough to run were it lifted
        qc.quickcheck(*["expa 16 (expa 16 (expa 16 (expa 16 (expa 16 X))))"] * 2, budget=5, max_extent=1)
    assert info.value.exit_code == 2 and info.value.message == (
        "no instance of the claim is small enough to test: each has a node of more than 1,000,000 entries; use "
        "smaller extents (--max-extent, the claim's own, --pad)")


def test_cli_quickcheck_passes_its_options_on(monkeypatch):
    """C05, C06, C07, C09, C11, C12: the defaults, and each option handed to quickcheck."""
    seen = {}
    real = qc.quickcheck

    def spy(*sides, **kwargs):
        seen.update(kwargs)
        return real(*sides, **{**kwargs, "budget": 1})

    monkeypatch.setattr(qc, "quickcheck", spy)
    assert cli.main(["quickcheck", "X", "X"]) == 0
    assert (seen["budget"], seen["max_extent"], seen["values"], seen["seed"], seen["dialect"]) == (
        qc.BUDGET, qc.MAX_EXTENT, "real", 0, None)
    assert cli.main(["quickcheck", "X", "X", "--seed", "5", "--lang", "full", "--values", "float"]) == 0
    assert (seen["seed"], seen["dialect"], seen["values"]) == (5, "full", "float")


# -- partial derivations, traces and the checked program in the API ----------------------------------------


def test_repr_names_the_first_failing_rule():
    """P12."""
    assert repr(ct.derive(ct.parse(ILL, "ill.teil"))) == "<Derivations ill.teil: failed at T-Diag>"


@pytest.mark.parametrize("fragment", [
    pytest.param(r"\boldsymbol{\times}\ 5 \leq 3", id="D05_D16-the-failing-le-premise"),
    pytest.param(r"\AxiomC{$\Gamma(\mathtt{C}) = [\mathit{m}]$}", id="D08-the-context-of-a-partial-statement"),
    pytest.param(r"\mathsf{ok}\,?", id="D14-a-partial-statement-is-not-ok"),
])
def test_latex_of_a_partial_derivation(fragment):
    assert fragment in ct.derive(ct.parse(ILL, "ill.teil")).latex()


@pytest.mark.parametrize(("pad", "fragment"), [
    pytest.param(4, r"[\mathit{m1} \leq 3]", id="T03-the-guard-is-leq"),
    pytest.param(None, r"\sum_{m1=1}^{3}", id="T05-the-sum-bound"),
])
def test_trace_latex(pad, fragment):
    assert fragment in ct.trace(ct.parse(REX, "rex.teil"), "y[1]", {"k": 3}, pad=pad)._repr_latex_()


def test_trace_html_names_the_target_once():
    """T06."""
    assert ct.trace(ct.parse(REX, "rex.teil"), "y[1]", {"k": 3})._repr_html_().count("y[1]") == 1


def test_checked_program_keeps_the_pad_and_the_given_params():
    """K04, K07."""
    checked = ct.check(ct.parse(REX, "rex.teil"), {"k": 3})
    assert checked.trace("y[1]", pad=4).pad == 4
    assert ct.check(ct.parse(REX, "rex.teil")).params == {}


def test_trace_of_a_checked_program_refuses_params():
    """I02: the parameters were fixed when it was checked."""
    checked = ct.check(ct.parse(REX, "rex.teil"), {"k": 3})
    with pytest.raises(TeilError, match="already checked"):
        ct.trace(checked, "y[1]", {"k": 4})
