"""Tests of core_teil.lang.printer: the canonical form of SPEC.md section 2 and its round trip."""

from __future__ import annotations

import pytest
from hypothesis import given

from core_teil.lang.parser import MAX_DEPTH, parse
from core_teil.lang.printer import format_cond, format_expr, format_lin, format_program, format_shape
from core_teil.lang.syntax import (
    Alloc,
    Assume,
    Cond,
    Contr,
    ContrAt,
    Diag,
    DiagAt,
    Elem,
    Expa,
    ExpaAt,
    Expr,
    Lin,
    LinTerm,
    Param,
    Prod,
    Program,
    Proj,
    ProjAt,
    Red,
    RedAt,
    Stmt,
    Transp,
    TranspAt,
    Var,
    depth,
)
from tests.strategies import SETTINGS, exprs, programs

A, B = Var("A"), Var("B")


# --------------------------------------------------------------------------
# The canonical layout
# --------------------------------------------------------------------------


def test_canonical_program() -> None:
    p = Program("core", (
        Param(("n", "m")),
        Assume((Cond(Lin((LinTerm(1, "n"),)), ">=", Lin((LinTerm(2),))),
                Cond(Lin((LinTerm(1, "m"),)), "==", Lin((LinTerm(1, "n"),))))),
        Alloc("A", ("n", 3), "input"),
        Alloc("B", (3, "m"), "input"),
        Alloc("C", ("n", "m"), "output"),
        Alloc("s", ()),
    ), (
        Stmt("C", Contr(Transp(2, Prod(A, B)))),
        Stmt("s", Red(Red(Var("C")))),
    ))
    assert format_program(p) == (
        "lang core\n"
        "param n, m\n"
        "assume n >= 2 and m == n\n"
        "input alloc A : [n, 3]\n"
        "input alloc B : [3, m]\n"
        "output alloc C : [n, m]\n"
        "alloc s : []\n"
        "\n"
        "C = contr (transp 2 (prod A B))\n"
        "s = red (red C)\n"
    )


def test_canonical_form_of_messy_source() -> None:
    messy = """# matrix multiplication, paper Fig. 7
        alloc A:[3,4]   alloc B : [ 4 , 5 ]
        alloc C : [3, 5] C = red+ ((diag (transp 2 (((prod A B))))))"""
    assert format_program(parse(messy)) == (
        "lang core\nalloc A : [3, 4]\nalloc B : [4, 5]\nalloc C : [3, 5]\n\n"
        "C = red (diag (transp 2 (prod A B)))\n"
    )


def test_program_without_statements_or_declarations() -> None:
    assert format_program(Program("full", (), ())) == "lang full\n"
    assert format_program(Program("core", (Alloc("A", (1,)),), ())) == "lang core\nalloc A : [1]\n"
    assert format_program(Program("core", (), (Stmt("A", A),))) == "lang core\n\nA = A\n"


@pytest.mark.parametrize(("tree", "text"), [
    (A, "A"),
    (Elem("add", A, B), "add A B"),
    (Elem("div", Red(A), B), "div (red A) B"),
    (Prod(A, Elem("sub", A, B)), "prod A (sub A B)"),
    (Red(A), "red A"),
    (Contr(A), "contr A"),
    (Diag(A), "diag A"),
    (Transp(1, A), "transp 1 A"),
    (Expa("k", A), "expa k A"),
    (Proj(2, A), "proj 2 A"),
    (Elem("add", ExpaAt(1, "k", A), B), "add (expa 1 k A) B"),
    (RedAt(3, A), "red 3 A"),
    (ContrAt(1, 3, Prod(A, B)), "contr 1 3 (prod A B)"),
    (DiagAt(1, 2, A), "diag 1 2 A"),
    (TranspAt(2, 1, A), "transp 2 1 A"),
    (ProjAt(1, "m", A), "proj 1 m A"),
    (Elem("mul", Red(Diag(Prod(A, B))), Diag(B)), "mul (red (diag (prod A B))) (diag B)"),
])
def test_format_expr(tree: Expr, text: str) -> None:
    assert format_expr(tree) == text


@pytest.mark.parametrize(("shape", "text"), [((), "[]"), ((3,), "[3]"), (("n", 3), "[n, 3]")])
def test_format_shape(shape: tuple, text: str) -> None:
    assert format_shape(shape) == text


@pytest.mark.parametrize(("terms", "text"), [
    ((LinTerm(2, "n"), LinTerm(1)), "2*n + 1"),
    ((LinTerm(1, "n"), LinTerm(-1, "m")), "n - m"),
    ((LinTerm(-1, "n"), LinTerm(3)), "-n + 3"),
    ((LinTerm(-2, "n"), LinTerm(0, "m"), LinTerm(-4)), "-2*n + 0*m - 4"),
    ((LinTerm(0),), "0"),
    ((LinTerm(-7),), "-7"),
])
def test_format_lin(terms: tuple[LinTerm, ...], text: str) -> None:
    assert format_lin(Lin(terms)) == text
    assert parse(f"assume {text} < 1").conds[0].lhs == Lin(terms)


def test_format_cond() -> None:
    c = Cond(Lin((LinTerm(1, "n"), LinTerm(1))), "<=", Lin((LinTerm(2, "m"),)))
    assert format_cond(c) == "n + 1 <= 2*m"


def test_non_ast_values_are_rejected() -> None:
    with pytest.raises(TypeError):
        format_expr("A")  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# Round trip (the contract of `core-teil fmt`, SPEC.md section 6)
# --------------------------------------------------------------------------


@SETTINGS
@given(programs("core"))
def test_round_trip_core(p: Program) -> None:
    text = format_program(p)
    assert parse(text) == p
    assert format_program(parse(text)) == text


@SETTINGS
@given(programs("full"))
def test_round_trip_full(p: Program) -> None:
    text = format_program(p)
    assert parse(text) == p
    assert format_program(parse(text)) == text


@SETTINGS
@given(exprs())
def test_expression_round_trip(e: Expr) -> None:
    dialect = "full" if any(
        isinstance(n, RedAt | ContrAt | DiagAt | TranspAt | ExpaAt | ProjAt) for n in _nodes(e)
    ) else "core"
    assert parse(f"lang {dialect}\nX = {format_expr(e)}").stmts[0].expr == e


def _nodes(e: Expr) -> list[Expr]:
    out, stack = [], [e]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.children())
    return out


# --------------------------------------------------------------------------
# Depth: the printer works without recursion
# --------------------------------------------------------------------------


def chain(n: int) -> Expr:
    """``red (red (... A))`` with ``n`` operators, built without recursion."""
    e: Expr = A
    for _ in range(n):
        e = Red(e)
    return e


def test_deepest_parsable_tree_round_trips() -> None:
    e = chain(MAX_DEPTH - 1)
    assert depth(e) == MAX_DEPTH
    text = format_expr(e)
    back = parse(f"X = {text}").stmts[0].expr
    assert depth(back) == MAX_DEPTH
    assert format_expr(back) == text


def test_printer_handles_very_deep_trees() -> None:
    text = format_expr(chain(20_000))
    assert text.startswith("red (red (") and text.endswith("A" + ")" * 19_999)
