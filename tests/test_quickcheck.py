"""``core-teil quickcheck`` (issue 16, item 2): random testing of a student's claim, as redex-check.

Within the default budget it falsifies every false law of chapters 5 and 6 (each shrunk to a small
counterexample) and passes the true ones; it is seeded (the same claim, the same verdict and text);
it restores eval.py's equations after ``--unguarded-expa``; bad claims exit 2 with a message.
"""

from __future__ import annotations

import re

import pytest

from core_teil import cli
from core_teil.errors import TeilInputError, TeilSyntaxError
from core_teil.lang.syntax import Expa, ExpaAt
from core_teil.semantics import eval as ev
from core_teil.teach.quickcheck import BUDGET, Claim, Status, frames, parse_law, quickcheck

#: The false claims of chapter 5 (padding) and chapter 6 (equations), with what the shrunk
#: counterexample must show.
FALSE_LAWS = [
    # chapter 5: Theorem 3 with the report's unguarded expa, as an equation and as the padding theorem
    (("red (expa n X)", "smul n X"), {"pad": 4, "unguarded_expa": True}, ["n = 1", "X : [] = 1", "lhs = 4"]),
    (("red (expa n X)",), {"pad": 4, "unguarded_expa": True}, ["n = 1", "padded = 4", "unpadded = 1"]),
    (("red 1 (expa 1 n X)", "smul n X"), {"pad": 2, "unguarded_expa": True}, ["n = 1"]),
    # chapter 5: Lemma 5 (ii) verbatim, "zeros in the padding": 0 · • = •
    (("prod X Y",), {"pad": 2, "claim": "zeros"}, ["= •", "the padding holds a value other than 0"]),
    # chapter 5: Theorem 3 in float64: inf · 0 = NaN in the padding reaches the sum
    (("red (transp 1 (prod X V))",), {"pad": 4, "values": "float"}, ["inf", "padded = •"]),
    # chapter 6: Fig. 10a (c) as TACO's A(i,j) = B(k,j,i) * C(i): the paper's expression is the transpose
    (("transp 1 2 (red 1 (diag 3 4 (prod B C)))", "red 1 (diag 3 4 (prod B C))"), {}, ["the two sides differ"]),
    # chapter 6: red over the other dimension, and a transposition that does not cancel
    (("red 1 (transp 1 2 E)", "red 1 E"), {}, ["the two sides differ"]),
    (("transp 1 2 (transp 2 3 E)", "E"), {}, ["the two sides differ"]),
]

TRUE_LAWS = [
    (("proj 1 2 (expa 1 3 X)", "X"), {}),                     # equation (3)
    (("diag 1 2 (transp 1 2 S)", "diag 1 2 S"), {}),           # equation (4)
    (("red (expa n X)", "smul n X"), {}),                      # equation (5)
    (("red (expa n X)", "smul n X"), {"pad": 4}),              # (5) padded, guarded expa
    (("contr 2 3 X", "red 2 (diag 2 3 X)"), {}),               # equation (6)
    (("transp 1 2 (transp 1 2 E)", "E"), {}),                  # chapter 6, exercise 1
    (("red 1 (transp 1 2 E)", "red 2 E"), {}),                 # chapter 6, exercise 2
    (("red (expa n X)",), {"pad": 4}),                         # Theorem 3 as made true
    (("prod X Y",), {"pad": 2}),
    (("contr (transp 1 (prod X Y))",), {"pad": 3}),
    (("div X (red X)",), {"pad": 4}),                          # chapter 5, exercise 2 (normalize)
]


@pytest.mark.parametrize(("sides", "options", "shown"), FALSE_LAWS, ids=[" vs ".join(s) for s, _, _ in FALSE_LAWS])
def test_false_laws_are_falsified_within_the_default_budget(sides, options, shown):
    result = quickcheck(*sides, **options)
    assert result.status is Status.FALSIFIED, result.render()
    assert result.tests <= BUDGET
    text = result.render()
    for s in shown:
        assert s in text, text
    cex = result.counterexample
    assert cex is not None
    # shrunk: small shapes (no extent above 3, at most 4 dimensions in all)
    shapes = cex.case.instance.shapes
    assert sum(len(t) for t in shapes.values()) <= 4 and all(d <= 3 for t in shapes.values() for d in t), text
    assert "The instance as a program" in text and "core-teil trace" in text


@pytest.mark.parametrize(("sides", "options"), TRUE_LAWS, ids=[" vs ".join(s) for s, _ in TRUE_LAWS])
def test_true_laws_pass(sides, options):
    result = quickcheck(*sides, **options)
    assert result.status is Status.PASSED, result.render()
    assert result.tests == BUDGET
    text = result.render()
    assert "evidence, not a proof" in text
    assert ("core-teil equiv" in text) if len(sides) == 2 else ("core-teil prove" in text)


def test_shrinking_reaches_the_smallest_counterexample():
    """Theorem 3 with the unguarded expa: the report's own counterexample, n = 1 and a scalar X = 1."""
    result = quickcheck("red (expa n X)", "smul n X", pad=2, unguarded_expa=True, seed=7)
    inst = result.counterexample.case.instance
    assert inst.params == {"n": 1} and inst.shapes == {"X": ()}
    assert float(result.counterexample.case.inputs["X"]) == 1.0
    assert result.shrinks >= 1 or result.tests == 1


def test_the_verdict_is_a_function_of_claim_and_seed():
    def text(seed: int) -> str:
        r = quickcheck("transp 1 2 (red 1 (diag 3 4 (prod B C)))", "red 1 (diag 3 4 (prod B C))", seed=seed)
        return re.sub(r"in \d+\.\d+ s", "in <time>", r.render())

    assert text(3) == text(3)
    assert quickcheck("red (expa n X)", "smul n X", budget=50, seed=5).tests == 50


def test_unguarded_expa_is_undone():
    saved = ev.EQUATIONS[Expa], ev.EQUATIONS[ExpaAt]
    quickcheck("red (expa n X)", pad=4, unguarded_expa=True)
    assert (ev.EQUATIONS[Expa], ev.EQUATIONS[ExpaAt]) == saved
    assert quickcheck("red (expa n X)", pad=4, budget=30).ok


def test_typing_claims():
    """lhs => rhs keeps the type wherever lhs is well typed: a transposition twice does, once does not."""
    assert quickcheck("transp 1 (transp 1 X)", "X", claim="typing").ok
    r = quickcheck("transp 1 X", "X", claim="typing")
    assert r.status is Status.FALSIFIED
    assert "lhs is typed" in r.render() and "rhs is typed" in r.render()
    r = quickcheck("X", "diag X", claim="typing")
    assert r.status is Status.FALSIFIED and "ill-typed (by T-Diag)" in r.render()


def test_instances_come_from_the_typing_rules():
    law = parse_law("add X (transp 1 X)", "X")
    fs = frames(law, same_shape=True)
    assert {f.ranks["X"] for f in fs} == {2, 3}  # transp 1 needs rank >= 2
    for f in fs:  # add X (transp 1 X) forces the first two extents equal
        a, b = f.holes["X"][:2]
        assert f.unifier.find(a) == f.unifier.find(b)
    assert parse_law("red 1 (expa 1 n X)", "X").dialect == "full"
    assert parse_law("red (expa n X)").params == ("n",)


@pytest.mark.parametrize(("argv", "message"), [
    (["quickcheck", "red (expa n X", "X"], "<lhs>:1:5: syntax error"),
    (["quickcheck", "red X", "X"], "no shapes of X"),
    (["quickcheck", "red X"], "give --pad M"),
    (["quickcheck", "red X", "X", "--claim", "zeros", "--pad", "2"], "one expression"),
    (["quickcheck", "expa X X", "X"], "used both as a tensor"),
    (["quickcheck", "red X", "--pad", "0"], "--pad"),
    (["quickcheck", "a", "b", "c"], "one expression"),
    (["quickcheck", "proj 3 (expa 2 X)", "X"], "no instance of the claim could be drawn"),
    (["quickcheck", ""], "<lhs>:1:1: syntax error"),
])
def test_bad_claims_exit_2(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_exit_codes(capsys):
    assert cli.main(["quickcheck", "red (expa n X)", "smul n X", "--pad", "4", "--budget", "40"]) == 0
    assert "OK: passed 40 random test(s)" in capsys.readouterr().out
    assert cli.main(["quickcheck", "red (expa n X)", "smul n X", "--pad", "4", "--unguarded-expa"]) == 1
    out = capsys.readouterr().out
    assert "FALSIFIED" in out and "smul_n = 1 (the factor n of smul n)" in out


def test_api_errors():
    with pytest.raises(TeilSyntaxError):
        quickcheck("red (", "X")
    with pytest.raises(TeilInputError, match="--values"):
        quickcheck("X", "X", values="complex")
    assert quickcheck("X", "X", claim=Claim.EQUAL, budget=5).ok
