"""Lowering full TeIL to Core-TeIL (paper section 4.1).

Core-TeIL's ``red``, ``contr``, ``diag``, ``expa`` and ``proj`` act on the
first dimension(s) and its ``transp`` swaps adjacent dimensions only; "by
pre- and post-composing any of these operations with suitable sequences of
transpositions, the same operations can be expressed as in full TeIL".  This
module is that composition, one function per full-TeIL operator.  It is
validated by running both forms (tests) and, symbolically, by the
translation-validation obligations of ``core-teil prove``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..errors import Span, checked_call
from .syntax import (
    Contr,
    ContrAt,
    Diag,
    DiagAt,
    Elem,
    Expa,
    ExpaAt,
    Expr,
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
    expect_program,
)

# -- moving one dimension with adjacent transpositions ---------------------


def transp(p: int, e: Expr, span: Span) -> Expr:
    """``transp p e``, cancelling ``transp p (transp p e')`` to ``e'`` (an involution, paper 3.6)."""
    if isinstance(e, Transp) and e.i == p:
        return e.arg
    return Transp(p, e, span=span)


def to_front(i: int, e: Expr, span: Span) -> Expr:
    """Move dimension ``i`` to position 1: ``transp 1 (… (transp (i-1) e))``."""
    for p in range(i - 1, 0, -1):
        e = transp(p, e, span)
    return e


def from_front(i: int, e: Expr, span: Span) -> Expr:
    """Move dimension 1 to position ``i``: ``transp (i-1) (… (transp 1 e))``."""
    for p in range(1, i):
        e = transp(p, e, span)
    return e


def to_second(j: int, e: Expr, span: Span) -> Expr:
    """Move dimension ``j >= 2`` to position 2, leaving position 1 alone."""
    for p in range(j - 1, 1, -1):
        e = transp(p, e, span)
    return e


def swap_dims(i: int, j: int, e: Expr, span: Span) -> Expr:
    """Swap dimensions ``i < j`` with ``2(j-i)-1`` adjacent transpositions."""
    for p in range(j - 1, i - 1, -1):  # bring j down to i; i moves to i+1
        e = transp(p, e, span)
    for p in range(i + 1, j):  # carry the old i from i+1 up to j
        e = transp(p, e, span)
    return e


# -- one function per full-TeIL operator ------------------------------------


def lower_var(e: Var) -> Expr:
    return e


def lower_elem(e: Elem) -> Expr:
    return replace(e, left=lower_expr(e.left), right=lower_expr(e.right))


def lower_prod(e: Prod) -> Expr:
    return replace(e, left=lower_expr(e.left), right=lower_expr(e.right))


def lower_red_at(e: RedAt) -> Expr:
    """``red i e  ~>  red (to_front i e)``."""
    return Red(to_front(e.i, lower_expr(e.arg), e.span), span=e.span)


def lower_contr_at(e: ContrAt) -> Expr:
    """``contr i j e  ~>  contr (to_second j (to_front i e))``; ``i < j`` keeps ``j`` in place."""
    inner = to_second(e.j, to_front(e.i, lower_expr(e.arg), e.span), e.span)
    return Contr(inner, span=e.span)


def lower_diag_at(e: DiagAt) -> Expr:
    """``diag i j e  ~>  from_front i (diag (to_second j (to_front i e)))``."""
    inner = to_second(e.j, to_front(e.i, lower_expr(e.arg), e.span), e.span)
    return from_front(e.i, Diag(inner, span=e.span), e.span)


def lower_transp_at(e: TranspAt) -> Expr:
    i, j = min(e.i, e.j), max(e.i, e.j)
    return swap_dims(i, j, lower_expr(e.arg), e.span)


def lower_expa_at(e: ExpaAt) -> Expr:
    """``expa i d e  ~>  from_front i (expa d e)``."""
    return from_front(e.i, Expa(e.d, lower_expr(e.arg), span=e.span), e.span)


def lower_proj_at(e: ProjAt) -> Expr:
    """``proj i m e  ~>  proj m (to_front i e)``."""
    return Proj(e.m, to_front(e.i, lower_expr(e.arg), e.span), span=e.span)


_CORE = (Red, Contr, Diag, Transp, Expa, Proj)

LOWERINGS: dict[type, Callable[[Expr], Expr]] = {  # type: ignore[dict-item]
    Var: lower_var, Elem: lower_elem, Prod: lower_prod,
    RedAt: lower_red_at, ContrAt: lower_contr_at, DiagAt: lower_diag_at,
    TranspAt: lower_transp_at, ExpaAt: lower_expa_at, ProjAt: lower_proj_at,
}


def lower_expr(e: Expr) -> Expr:
    """The Core-TeIL form of a full-TeIL expression (Core nodes are kept as they are)."""
    if isinstance(e, _CORE):
        return replace(e, arg=lower_expr(e.arg))  # type: ignore[call-arg]
    return LOWERINGS[type(e)](e)


@checked_call
def lower(program: Program) -> Program:
    """``core-teil lower``: the same program in ``lang core``."""
    stmts = tuple(Stmt(s.target, lower_expr(s.expr), span=s.span) for s in expect_program(program).stmts)
    return Program("core", program.decls, stmts, file=program.file)
