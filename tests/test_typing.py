"""Every typing rule of SPEC.md section 3 / paper Fig. 8 accepts a good case and rejects a bad one."""

from __future__ import annotations

from typing import Any

import pytest

from core_teil.errors import TeilInputError, TeilTypeError
from core_teil.lang.parser import parse
from core_teil.lang.typing import check_program

CORE_DECLS = """
alloc s : []
alloc v : [3]
alloc w : [4]
alloc M : [3, 4]
alloc Q : [3, 3]
alloc T : [3, 3, 4]
"""


def rejects(expr: str, rule: str, decls: str = CORE_DECLS, dialect: str = "core", shape: str = "[]",
            params: dict[str, int] | None = None) -> TeilTypeError:
    text = f"lang {dialect}\n{decls}\nalloc r : {shape}\nr = {expr}\n"
    with pytest.raises(TeilTypeError) as info:
        check_program(parse(text), params)
    assert info.value.rule == rule, info.value.render()
    return info.value


# -- Core rules, accepting ------------------------------------------------------


@pytest.mark.parametrize(("expr", "shape", "rule"), [
    ("v", (3,), "T-Var"),
    ("add v v", (3,), "T-Elem"),
    ("sub M M", (3, 4), "T-Elem"),
    ("div M M", (3, 4), "T-Elem"),
    ("mul s s", (), "T-Elem"),
    ("mul s M", (3, 4), "T-SMul"),
    ("div M s", (3, 4), "T-SDiv"),
    ("prod v w", (3, 4), "T-Prod"),
    ("prod s v", (3,), "T-Prod"),
    ("red M", (4,), "T-Red"),
    ("contr T", (4,), "T-Contr"),
    ("diag T", (3, 4), "T-Diag"),
    ("transp 1 M", (4, 3), "T-Transp"),
    ("transp 2 T", (3, 4, 3), "T-Transp"),
    ("expa 5 v", (5, 3), "T-Expa"),
    ("proj 3 M", (4,), "T-Proj"),
    ("proj 1 v", (), "T-Proj"),
])
def test_core_rule_accepts(expr: str, shape: tuple, rule: str) -> None:
    from core_teil.lang.printer import format_shape

    text = f"lang core\n{CORE_DECLS}\nalloc r : {format_shape(shape)}\nr = {expr}\n"
    typed = check_program(parse(text))
    derivation = typed.derivations[-1]
    assert derivation.rule == "OK-Stmt"
    assert derivation.expr.rule == rule
    assert derivation.expr.shape == shape


# -- Core rules, rejecting --------------------------------------------------------


@pytest.mark.parametrize(("expr", "rule", "fragment"), [
    ("x", "T-Var", "undeclared variable 'x'"),
    ("add v w", "T-Elem", "[3] vs [4] in dimension 1 (3 != 4)"),
    ("add v M", "T-Elem", "needs operands of one shape"),
    ("mul M s", "T-Elem", "T-SMul scales from the left"),
    ("div s M", "T-Elem", "T-SDiv divides by a scalar on the right"),
    ("red s", "T-Red", "rank >= 1"),
    ("contr M", "T-Contr", "(3 != 4)"),
    ("contr v", "T-Contr", "rank >= 2"),
    ("diag M", "T-Diag", "(3 != 4)"),
    ("diag v", "T-Diag", "rank >= 2"),
    ("transp 1 v", "T-Transp", "out of range"),
    ("transp 2 M", "T-Transp", "out of range"),
    ("transp 0 M", "T-Transp", "out of range"),
    ("expa 0 v", "T-Expa", "not a positive integer"),
    ("expa k v", "T-Expa", "not a declared shape parameter"),
    ("proj 4 v", "T-Proj", "slice must exist (4 > 3)"),
    ("proj 0 v", "T-Proj", "slice index 0 is not a positive integer"),
    ("proj 1 s", "T-Proj", "rank >= 1"),
])
def test_core_rule_rejects(expr: str, rule: str, fragment: str) -> None:
    err = rejects(expr, rule, shape="[9, 9, 9, 9, 9]")
    assert fragment in err.message


# -- Full-TeIL rules (paper Fig. 8) ---------------------------------------------


FULL_DECLS = """
alloc A : [2, 3]
alloc B : [3, 5]
alloc X : [2, 3, 4, 3]
"""


@pytest.mark.parametrize(("expr", "shape", "rule"), [
    ("red 2 A", (2,), "T-Red+"),
    ("red 1 X", (3, 4, 3), "T-Red+"),
    ("contr 2 4 X", (2, 4), "T-Contr"),
    ("diag 2 4 X", (2, 3, 4), "T-Diag"),
    ("transp 1 3 X", (4, 3, 2, 3), "T-Transp"),
    ("transp 3 1 X", (4, 3, 2, 3), "T-Transp"),
    ("expa 3 7 A", (2, 3, 7), "T-Expa"),
    ("expa 1 7 A", (7, 2, 3), "T-Expa"),
    ("proj 2 3 A", (2,), "T-Proj"),
    ("red 2 (diag 2 3 (prod A B))", (2, 5), "T-Red+"),
])
def test_full_rule_accepts(expr: str, shape: tuple, rule: str) -> None:
    from core_teil.lang.printer import format_shape

    text = f"lang full\n{FULL_DECLS}\nalloc r : {format_shape(shape)}\nr = {expr}\n"
    typed = check_program(parse(text))
    assert typed.derivations[-1].expr.rule == rule


@pytest.mark.parametrize(("expr", "rule", "fragment"), [
    ("red 3 A", "T-Red+", "out of range"),
    ("contr 1 2 A", "T-Contr", "(2 != 3)"),
    ("contr 2 2 X", "T-Contr", "first position below its second"),
    ("diag 1 2 A", "T-Diag", "(2 != 3)"),
    ("diag 3 2 X", "T-Diag", "first position below its second"),
    ("transp 2 2 A", "T-Transp", "with itself"),
    ("transp 1 3 A", "T-Transp", "out of range"),
    ("expa 4 7 A", "T-Expa", "out of range"),
    ("proj 2 4 A", "T-Proj", "(4 > 3)"),
    ("proj 3 1 A", "T-Proj", "out of range"),
])
def test_full_rule_rejects(expr: str, rule: str, fragment: str) -> None:
    err = rejects(expr, rule, decls=FULL_DECLS, dialect="full", shape="[9, 9, 9, 9, 9]")
    assert fragment in err.message


# -- Programs: the five ways of report section 3.2.1 ------------------------------


@pytest.mark.parametrize(("text", "rule", "fragment"), [
    ("alloc A : [2]\nalloc A : [3]\n", "S-Var", "already declared"),                        # (1)
    ("alloc A : [2]\nB = A\n", "OK-Stmt", "assignment to undeclared variable 'B'"),         # (2)
    ("alloc A : [2]\nalloc B : [3]\nB = A\n", "OK-Stmt", "(3 != 2)"),  # (3)
    ("alloc A : [2]\nA = Z\n", "T-Var", "use of undeclared variable 'Z'"),                  # (4)
    ("alloc A : [2]\nalloc B : [3]\nA = add A B\n", "T-Elem", "(2 != 3)"),                    # (5)
    ("param n\nalloc n : [2]\n", "S-Var", "already declared"),
    ("param n, n\n", "S-Var", "already declared"),
    ("alloc A : [0]\n", "S-Var", "not a positive integer"),
    ("alloc A : [k]\n", "S-Var", "not a declared shape parameter"),
    ("assume k >= 1\n", "Assume", "not a declared parameter"),
    ("param n\nassume n >= 3 and n <= 2\n", "Assume", "admit no parameter values"),
])
def test_ill_formed_programs(text: str, rule: str, fragment: str) -> None:
    with pytest.raises(TeilTypeError) as info:
        check_program(parse(text))
    assert info.value.rule == rule
    assert fragment in info.value.message


def test_dialect_is_enforced_for_hand_built_asts() -> None:
    from core_teil.lang.syntax import Alloc, Program, Red, RedAt, Stmt, Var

    bad = Program("core", (Alloc("A", (2, 3)), Alloc("r", (3,))), (Stmt("r", RedAt(1, Var("A"))),))
    with pytest.raises(TeilTypeError, match="not an operator of lang core"):
        check_program(bad)
    good = Program("core", (Alloc("A", (2, 3)), Alloc("r", (3,))), (Stmt("r", Red(Var("A"))),))
    assert check_program(good).gamma["r"] == (3,)


# -- Symbolic shapes: side conditions decided for all parameter values ---------------


SYMBOLIC = """lang core
param n, m
{assume}
alloc A : [n]
alloc B : [m]
alloc C : [n]
C = add A B
"""


def test_side_condition_proved_under_assume() -> None:
    typed = check_program(parse(SYMBOLIC.format(assume="assume n == m")))
    assert [str(sc) for sc in typed.side_conditions()] == ["n == m"]


def test_side_condition_refuted_with_small_counterexample() -> None:
    with pytest.raises(TeilTypeError) as info:
        check_program(parse(SYMBOLIC.format(assume="")))
    err = info.value
    assert err.rule == "T-Elem"
    cex = err.counterexample
    assert cex is not None and cex["n"] != cex["m"]
    assert max(cex.values()) <= 2, "counterexamples are shrunk toward small numbers"


def test_assume_dependent_projection() -> None:
    text = "lang core\nparam n, m\n{assume}\nalloc A : [n, 3]\nalloc r : [3]\nr = proj m A\n"
    check_program(parse(text.format(assume="assume m <= n")))
    check_program(parse(text.format(assume="assume m + 2 <= n")))
    with pytest.raises(TeilTypeError) as info:
        check_program(parse(text.format(assume="assume m <= n + 1")))
    assert info.value.counterexample is not None
    cex = info.value.counterexample
    assert cex["m"] == cex["n"] + 1


def test_concrete_params_decide_directly() -> None:
    text = SYMBOLIC.format(assume="")
    typed = check_program(parse(text), {"n": 4, "m": 4})
    assert typed.shapes() == {"A": (4,), "B": (4,), "C": (4,)}
    with pytest.raises(TeilTypeError) as info:
        check_program(parse(text), {"n": 4, "m": 5})
    assert info.value.counterexample == {"n": 4, "m": 5}


def test_param_values_checked_against_assumptions() -> None:
    text = SYMBOLIC.format(assume="assume n == m")
    with pytest.raises(TeilInputError, match="violate the program's assumptions"):
        check_program(parse(text), {"n": 4, "m": 5})
    with pytest.raises(TeilInputError, match="integers >= 1"):
        check_program(parse(text), {"n": 0})
    with pytest.raises(TeilInputError, match="declares no parameter"):
        check_program(parse(text), {"q": 3})


def test_derivation_records_every_subexpression_type() -> None:
    typed = check_program(parse("lang full\nalloc A : [2, 3]\nalloc B : [3, 5]\nalloc C : [2, 5]\n"
                                "C = red 2 (diag 2 3 (prod A B))\n"))
    rules = [d.rule for d in typed.derivations[0].expr.walk()]
    assert rules == ["T-Red+", "T-Diag", "T-Prod", "T-Var", "T-Var"]
    shapes = [d.shape for d in typed.derivations[0].expr.walk()]
    assert shapes == [(2, 5), (2, 3, 5), (2, 3, 3, 5), (2, 3), (3, 5)]


def test_a_program_that_shares_a_node_is_typed_run_and_proved_as_a_tree() -> None:
    """``add A A`` built in Python with one ``Var`` object twice (and a shared ``transp`` subtree
    across two operands): every engine identifies a read by its node, so the typed program is a
    tree; the native plan check used to reject the shared read as an internal error."""
    import dataclasses

    import numpy as np

    import core_teil as ct
    from core_teil.lang.syntax import as_tree, walk

    p = ct.parse("input alloc A : [3, 3]\noutput alloc B : [3, 3]\noutput alloc C : [3, 3]\n"
                 "B = add A A\nC = mul (transp 1 B) (transp 1 B)\n")
    s1, s2 = p.stmts
    def twice(s: Any) -> Any:  # the statement's right operand replaced by its left one, the same object
        return dataclasses.replace(s, expr=dataclasses.replace(s.expr, right=s.expr.left))

    shared = dataclasses.replace(p, stmts=(twice(s1), twice(s2)))
    assert shared.stmts[0].expr.left is shared.stmts[0].expr.right
    assert as_tree(p) is p  # a tree is left alone
    tree = as_tree(shared)
    ids = [id(n) for s in tree.stmts for n in walk(s.expr)]
    assert len(ids) == len(set(ids)) and tree == shared  # the same program, as a tree
    a = np.arange(9.0).reshape(3, 3)
    want = (2 * a.T) ** 2
    assert np.array_equal(ct.evaluate(shared, {"A": a})["C"], want)
    assert np.array_equal(ct.compile(shared)(A=a)["C"], want)
    assert ct.prove(shared).ok and ct.prove(shared, pad=4).ok
