"""Printer: the canonical text of an AST (SPEC.md section 2, ``core-teil fmt``).

The output is the concrete syntax of SPEC.md section 2 (paper 000, Fig. 5 and
Fig. 12) in one fixed layout::

    lang core
    param n, m
    assume n >= 2 and m == n
    input alloc A : [n, 3]
    alloc s : []

    C = red (diag (prod A B))

Every compound argument is parenthesised, although fixed arity makes the
parentheses redundant, because readers should not need the arity table.
``parse(format_program(p)) == p`` for every program ``p`` the parser can
produce, and printing is idempotent on printed text.

Expressions are printed with an explicit work list, not recursion, so the
depth of a tree (e.g. one built by ``lower``) never meets Python's limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from .syntax import (
    Alloc,
    Assume,
    Cond,
    Contr,
    ContrAt,
    Decl,
    Diag,
    DiagAt,
    Dim,
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
    expect_program,
)

T = TypeVar("T")

__all__ = [
    "format_cond",
    "format_decl",
    "format_dim",
    "format_expr",
    "format_lin",
    "format_program",
    "format_shape",
    "format_stmt",
]


def format_dim(d: Dim) -> str:
    """An extent: an integer literal or a parameter name."""
    return str(d)


def format_names(names: Sequence[str], most: int = 12) -> str:
    """``l, m, n``; past ``most`` names, the first few and how many more (50,000 parameters
    are a list no one reads)."""
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[:most - 2])}, ... ({len(names) - most + 2:,} more)"


def format_shape(shape: Iterable[Dim]) -> str:
    """``[n, 3]``; ``[]`` for a scalar."""
    return "[" + ", ".join(format_dim(d) for d in shape) + "]"


# --------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------

#: The operator keyword and its integer/extent arguments, per node class.
#: Core operators act on the first dimension(s) (Fig. 12), full ones carry
#: their positions (Fig. 5); the class alone decides the spelling.
_HEADS: dict[type[Expr], Callable[[Expr], str]] = {
    Var: lambda e: e.name,  # type: ignore[attr-defined]
    Elem: lambda e: e.op,  # type: ignore[attr-defined]
    Prod: lambda e: "prod",
    Red: lambda e: "red",
    Contr: lambda e: "contr",
    Diag: lambda e: "diag",
    Transp: lambda e: f"transp {e.i}",  # type: ignore[attr-defined]
    Expa: lambda e: f"expa {format_dim(e.d)}",  # type: ignore[attr-defined]
    Proj: lambda e: f"proj {format_dim(e.m)}",  # type: ignore[attr-defined]
    RedAt: lambda e: f"red {e.i}",  # type: ignore[attr-defined]
    ContrAt: lambda e: f"contr {e.i} {e.j}",  # type: ignore[attr-defined]
    DiagAt: lambda e: f"diag {e.i} {e.j}",  # type: ignore[attr-defined]
    TranspAt: lambda e: f"transp {e.i} {e.j}",  # type: ignore[attr-defined]
    ExpaAt: lambda e: f"expa {e.i} {format_dim(e.d)}",  # type: ignore[attr-defined]
    ProjAt: lambda e: f"proj {e.i} {format_dim(e.m)}",  # type: ignore[attr-defined]
}


def _head(e: Expr) -> str:
    printer = _HEADS.get(type(e))
    if printer is None:
        raise TypeError(f"cannot print {type(e).__name__}: not a TeIL expression")
    return printer(e)


def format_expr(e: Expr) -> str:
    """``red (diag (prod A B))``: prefix form, compound arguments in parentheses."""
    if not isinstance(e, Expr):
        raise TypeError(f"cannot print {type(e).__name__}: not a TeIL expression")

    def expand(item: Expr) -> list[str | Expr]:
        pieces: list[str | Expr] = [_head(item)]
        for child in item.children():
            pieces += [" (", child, ")"] if child.children() else [" ", child]
        return pieces

    return "".join(unfold(e, expand))


def unfold(root: T, expand: Callable[[T], Sequence[str | T]]) -> list[str]:
    """The text of a tree in which each node stands for ``expand(node)``, a sequence of text
    and nodes, in output order.  A work list, not recursion: generated programs and their
    derivations nest deeper than Python's stack."""
    out: list[str] = []
    work: list[str | T] = [root]
    while work:
        item = work.pop()
        if isinstance(item, str):
            out.append(item)
        else:
            work.extend(reversed(expand(item)))
    return out


# --------------------------------------------------------------------------
# Conditions and declarations
# --------------------------------------------------------------------------


def _term(t: LinTerm) -> str:
    """A term without its sign; coefficient 1 of a parameter is implicit, as written."""
    magnitude = abs(t.coef)
    if t.name is None:
        return str(magnitude)
    return t.name if magnitude == 1 else f"{magnitude}*{t.name}"


def format_lin(lin: Lin) -> str:
    """``2*n + 1``, ``n - m``, ``-n + 3``: the terms in written order."""
    parts: list[str] = []
    for k, t in enumerate(lin.terms):
        if k == 0:
            parts.append(("-" if t.coef < 0 else "") + _term(t))
        else:
            parts.append(("- " if t.coef < 0 else "+ ") + _term(t))
    return " ".join(parts)


def format_cond(c: Cond) -> str:
    """``n + 1 <= 2*m``."""
    return f"{format_lin(c.lhs)} {c.op} {format_lin(c.rhs)}"


def format_decl(d: Decl) -> str:
    """One declaration on one line (SPEC.md section 2, ``decl``)."""
    if isinstance(d, Param):
        return "param " + ", ".join(d.names)
    if isinstance(d, Assume):
        return "assume " + " and ".join(format_cond(c) for c in d.conds)
    if isinstance(d, Alloc):
        qual = f"{d.qual} " if d.qual else ""
        return f"{qual}alloc {d.name} : {format_shape(d.shape)}"
    raise TypeError(f"cannot print {type(d).__name__}: not a TeIL declaration")


def format_stmt(s: Stmt) -> str:
    """``x = e``."""
    return f"{s.target} = {format_expr(s.expr)}"


def format_program(p: Program) -> str:
    """The canonical text: ``lang``, declarations, a blank line, statements; newline-terminated."""
    lines = [f"lang {expect_program(p).dialect}"]
    lines += [format_decl(d) for d in p.decls]
    if p.stmts:
        lines.append("")
        lines += [format_stmt(s) for s in p.stmts]
    return "\n".join(lines) + "\n"
