"""Abstract syntax of Core-TeIL and full TeIL as frozen dataclasses.

Paper 000, Fig. 5 (full TeIL) and Fig. 12 (Core-TeIL); report 001, Fig. 1
(``sub``, ``div``); SPEC.md section 2 (``param``, ``assume``, qualifiers).

Every node carries a :class:`Span`; spans take no part in equality, so two
trees are equal exactly when they are the same program (``parse(format(p))
== p``).  Parentheses leave no node: ``(e)`` is ``e`` (rule T-Paren).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from typing import Literal

from ..errors import NO_SPAN, Span, TeilInputError

#: A shape term: an integer literal or the name of a shape parameter.
Dim = int | str
#: A shape (tensor type): a list of extents; ``()`` is a scalar.
Shape = tuple[Dim, ...]

Dialect = Literal["core", "full"]
ElemOp = Literal["add", "sub", "mul", "div"]
Qualifier = Literal["input", "output"] | None

ELEM_OPS: tuple[ElemOp, ...] = ("add", "sub", "mul", "div")


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False, kw_only=True)  # type: ignore[return-value]


# --------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Expr:
    """Base of all tensor expressions."""

    span: Span = _span()

    def children(self) -> tuple[Expr, ...]:
        return ()


@dataclass(frozen=True)
class Var(Expr):
    """``x``: a read of an allocation (T-Var)."""

    name: str


@dataclass(frozen=True)
class Elem(Expr):
    """``add|sub|mul|div e0 e1``: element-wise, or scaled (T-Elem, T-SMul, T-SDiv)."""

    op: ElemOp
    left: Expr
    right: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.left, self.right)


@dataclass(frozen=True)
class Prod(Expr):
    """``prod e0 e1``: the outer (tensor) product (T-Prod)."""

    left: Expr
    right: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.left, self.right)


@dataclass(frozen=True)
class Unary(Expr):
    """Base of the operators with one tensor argument, always the last field."""

    def children(self) -> tuple[Expr, ...]:
        return (self.arg,)  # type: ignore[attr-defined]


# Core-TeIL (paper Fig. 12): the operators act on the first dimension(s).


@dataclass(frozen=True)
class Red(Unary):
    """``red e``: sum over the first dimension (T-Red)."""

    arg: Expr


@dataclass(frozen=True)
class Contr(Unary):
    """``contr e`` = ``red (diag e)``: contract the first two dimensions (T-Contr)."""

    arg: Expr


@dataclass(frozen=True)
class Diag(Unary):
    """``diag e``: the diagonal of the first two dimensions (T-Diag)."""

    arg: Expr


@dataclass(frozen=True)
class Transp(Unary):
    """``transp i e``: swap dimensions ``i`` and ``i+1`` (T-Transp)."""

    i: int
    arg: Expr


@dataclass(frozen=True)
class Expa(Unary):
    """``expa d e``: a new first dimension of extent ``d`` (T-Expa)."""

    d: Dim
    arg: Expr


@dataclass(frozen=True)
class Proj(Unary):
    """``proj m e``: the slice ``m`` of the first dimension (T-Proj)."""

    m: Dim
    arg: Expr


# Full TeIL (paper Fig. 5): the same operators at any position (1-based).


@dataclass(frozen=True)
class RedAt(Unary):
    """``red i e``: sum over dimension ``i`` (Fig. 8, T-Red+)."""

    i: int
    arg: Expr


@dataclass(frozen=True)
class ContrAt(Unary):
    """``contr i j e`` = ``red i (diag i j e)``, ``i < j`` (paper equation (6))."""

    i: int
    j: int
    arg: Expr


@dataclass(frozen=True)
class DiagAt(Unary):
    """``diag i j e``, ``i < j``: the diagonal of dimensions ``i`` and ``j`` (Fig. 8, T-Diag)."""

    i: int
    j: int
    arg: Expr


@dataclass(frozen=True)
class TranspAt(Unary):
    """``transp i j e``, ``i != j``: swap dimensions ``i`` and ``j`` (Fig. 8, T-Transp)."""

    i: int
    j: int
    arg: Expr


@dataclass(frozen=True)
class ExpaAt(Unary):
    """``expa i d e``: a new dimension of extent ``d`` at position ``i`` (Fig. 8, T-Expa)."""

    i: int
    d: Dim
    arg: Expr


@dataclass(frozen=True)
class ProjAt(Unary):
    """``proj i m e``: the slice ``m`` of dimension ``i`` (Fig. 8, T-Proj)."""

    i: int
    m: Dim
    arg: Expr


CORE_OPERATORS: tuple[type[Expr], ...] = (Var, Elem, Prod, Red, Contr, Diag, Transp, Expa, Proj)
FULL_OPERATORS: tuple[type[Expr], ...] = (Var, Elem, Prod, RedAt, ContrAt, DiagAt, TranspAt, ExpaAt, ProjAt)


def walk(e: Expr) -> Iterator[Expr]:
    """All subexpressions of ``e``, pre-order, without recursion (deep trees are legal)."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children()))


def expect_program(program: object) -> Program:
    """``program`` itself when it is a parsed :class:`Program`, else a :class:`TeilInputError`
    (SPEC.md section 6: every error is a ``TeilError``): an entry point given the program's text,
    a path or ``None`` failed deep inside with an ``AttributeError`` (``ct.compile("...")``)."""
    if isinstance(program, Program):
        return program
    hint = " (its text: ct.parse(text); a file: ct.load(path))" if isinstance(program, str | bytes) else ""
    raise TeilInputError(f"expected a Core-TeIL program{hint}, not {type(program).__name__}")


def as_tree(program: Program) -> Program:
    """The program with no expression node object in two places (itself when there is none).

    The parser always builds trees, but a program built in Python may share a node
    (``Elem("add", a, a)``).  Its meaning is the same, yet the engines and the
    proofs identify a read ``μ(x)(k)`` of the semantics by the node that makes it
    (the native plan is checked read by read), so every occurrence but the first
    becomes a copy.  Without recursion, as :func:`walk`: deep trees are legal."""
    seen: set[int] = set()
    shared = False
    for s in program.stmts:
        for node in walk(s.expr):
            shared |= id(node) in seen
            seen.add(id(node))
    if not shared:
        return program
    seen.clear()
    return replace(program, stmts=tuple(replace(s, expr=_unshare(s.expr, seen)) for s in program.stmts))


def _unshare(root: Expr, seen: set[int]) -> Expr:
    """Post-order rebuild of one expression: a node met before (or with a copied child) is copied."""
    done: list[Expr] = []
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        names = [f.name for f in fields(node) if isinstance(getattr(node, f.name), Expr)]
        if not children_done:
            stack.append((node, True))
            stack.extend((getattr(node, n), False) for n in reversed(names))
            continue
        new = done[len(done) - len(names):]
        del done[len(done) - len(names):]
        if id(node) in seen or any(a is not getattr(node, n) for a, n in zip(new, names, strict=True)):
            node = replace(node, **dict(zip(names, new, strict=True)))
        else:
            seen.add(id(node))
        done.append(node)
    return done[0]


def depth(e: Expr) -> int:
    """Nesting depth of ``e`` (a variable has depth 1)."""
    best, stack = 0, [(e, 1)]
    while stack:
        node, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in node.children())
    return best


# --------------------------------------------------------------------------
# Declarations, statements, programs
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class LinTerm:
    """``coef * name`` (``name is None`` for a constant)."""

    coef: int
    name: str | None = None


@dataclass(frozen=True)
class Lin:
    """A linear expression over shape parameters, as written."""

    terms: tuple[LinTerm, ...]


CondOp = Literal["<=", "<", ">=", ">", "==", "!="]


@dataclass(frozen=True)
class Cond:
    """``lin op lin``: one constraint of an ``assume``."""

    lhs: Lin
    op: CondOp
    rhs: Lin
    span: Span = _span()


@dataclass(frozen=True)
class Decl:
    span: Span = _span()


@dataclass(frozen=True)
class Param(Decl):
    """``param n, m``: shape parameters, integers >= 1."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class Assume(Decl):
    """``assume c and c ...``: restricts the parameters."""

    conds: tuple[Cond, ...]


@dataclass(frozen=True)
class Alloc(Decl):
    """``[input|output] alloc x : [d, ...]`` (rule S-Var)."""

    name: str
    shape: Shape
    qual: Qualifier = None


@dataclass(frozen=True)
class Stmt:
    """``x = e`` (rules OK-Stmt, St-Stmt)."""

    target: str
    expr: Expr
    span: Span = _span()


@dataclass(frozen=True)
class Program:
    """``lang``, declarations in source order, statements (paper Fig. 5)."""

    dialect: Dialect
    decls: tuple[Decl, ...]
    stmts: tuple[Stmt, ...]
    file: str = field(default="<string>", compare=False)

    # Computed once per program (the dataclass is frozen, so they never change): asked once per
    # allocation, as emit-c does, they were quadratic in the declarations (review r25: 10,000
    # allocations took 24 s).

    @functools.cached_property
    def params(self) -> tuple[str, ...]:
        return tuple(n for d in self.decls if isinstance(d, Param) for n in d.names)

    @functools.cached_property
    def allocs(self) -> tuple[Alloc, ...]:
        return tuple(d for d in self.decls if isinstance(d, Alloc))

    @functools.cached_property
    def conds(self) -> tuple[Cond, ...]:
        return tuple(c for d in self.decls if isinstance(d, Assume) for c in d.conds)

    @functools.cached_property
    def qualified(self) -> bool:
        return any(a.qual is not None for a in self.allocs)

    @functools.cached_property
    def _inputs(self) -> tuple[Alloc, ...]:
        return tuple(a for a in self.allocs if not self.qualified or a.qual == "input")

    @functools.cached_property
    def _outputs(self) -> tuple[Alloc, ...]:
        return tuple(a for a in self.allocs if not self.qualified or a.qual == "output")

    def inputs(self) -> tuple[Alloc, ...]:
        """Allocations declared `input` (SPEC.md: without qualifiers, all)."""
        return self._inputs

    def outputs(self) -> tuple[Alloc, ...]:
        """Allocations a run returns (SPEC.md: without qualifiers, all)."""
        return self._outputs

    @functools.cached_property
    def _by_name(self) -> dict[str, Alloc]:
        out: dict[str, Alloc] = {}
        for a in self.allocs:
            out.setdefault(a.name, a)  # the first of a name, as the type checker reports a second
        return out

    def alloc(self, name: str) -> Alloc | None:
        return self._by_name.get(name)

