"""Derivations of programs that do not type-check: how far each one gets (``core-teil derive``).

Typing is syntax-directed (paper Lemma 4.1), so an ill-typed expression has a
unique *partial* derivation: every subexpression whose rule applies gets its
ordinary :class:`~core_teil.lang.typing.Derivation`, and the innermost node
whose rule fails, although its premises were derived, is where the
derivation stops.  That node is a :class:`PartialNode` with a
:class:`Failure` naming the rule, the premise that does not hold and, for a
side condition over shape parameters, the counterexample Z3 found.  The nodes
between it and the statement are :class:`PartialNode` s without a failure of
their own ("not derived: a premise fails").

Nothing here re-implements a rule: the statements are judged by
:func:`~core_teil.lang.typing.ok_stmt` and the expressions by the checker's
own ``infer``, one node at a time, in a :class:`RecordingChecker` that only
remembers which side condition failed.  :func:`derive_program` returns a
:class:`Derivations` record (status ``derived`` or ``failed``); ``derive.py``
renders it as text, LaTeX and HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..errors import TeilError, TeilTypeError
from ..lang.shapes import SideCondition, SideOp
from ..lang.syntax import (
    Contr,
    ContrAt,
    Diag,
    DiagAt,
    Dim,
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
    Shape,
    Stmt,
    Transp,
    TranspAt,
    Var,
)
from ..lang.typing import (
    Checker,
    Derivation,
    StmtDerivation,
    TypedProgram,
    ok_stmt,
    program_context,
)


class DeriveStatus(StrEnum):
    """Whether every statement has a derivation."""

    DERIVED = "derived"
    FAILED = "failed"


class RecordingChecker(Checker):
    """The type checker, remembering the last side condition it found false (for the premise shown)."""

    failed: SideCondition | None = None

    def require(self, lhs: Dim, op: SideOp, rhs: Dim, rule: str, span: Any, why: str) -> SideCondition:
        try:
            return super().require(lhs, op, rhs, rule, span, why)
        except TeilTypeError:
            self.failed = SideCondition(lhs, op, rhs, rule, span, why)
            raise


@dataclass(frozen=True)
class Failure:
    """The rule whose premise does not hold, the premise, and why."""

    rule: str
    message: str
    side: SideCondition | None = None  # the failing side condition, when the premise is one
    counterexample: dict[str, int] | None = None  # parameter values for which it fails (symbolic shapes)
    error: TeilError | None = field(default=None, compare=False, repr=False)

    @property
    def premise(self) -> str:
        """The premise as the rule states it (``3 == 2``, ``m == n``), or the checker's words."""
        return str(self.side) if self.side is not None else self.message


@dataclass(frozen=True)
class PartialNode:
    """``expr : ?``: its rule could not be applied.

    With ``failure`` this is where the derivation stops (the premises shown were derived);
    without, one of its premises is itself a :class:`PartialNode`."""

    rule: str
    expr: Expr
    premises: tuple[Derivation | PartialNode, ...]
    failure: Failure | None = None

    def walk(self) -> Any:
        stack: list[Derivation | PartialNode] = [self]
        while stack:
            d = stack.pop()
            yield d
            stack.extend(reversed(d.premises))


@dataclass(frozen=True)
class PartialStmt:
    """``x = e ok`` that OK-Stmt cannot conclude: ``expr`` is the (partial) derivation of ``e``;
    ``failure`` is set when OK-Stmt's own premise fails (an undeclared target, a shape mismatch)."""

    stmt: Stmt
    declared: Shape | None
    expr: Derivation | PartialNode
    failure: Failure | None = None
    rule: str = "OK-Stmt"


Node = Derivation | StmtDerivation | PartialNode | PartialStmt

#: The rule each operator is typed by, for a node whose premise failed before its rule could be chosen
#: (``mul`` may still have become T-SMul; the derivation never got that far).
RULE_OF: dict[type, str] = {
    Var: "T-Var", Elem: "T-Elem", Prod: "T-Prod", Red: "T-Red", Contr: "T-Contr", Diag: "T-Diag",
    Transp: "T-Transp", Expa: "T-Expa", Proj: "T-Proj", RedAt: "T-Red+", ContrAt: "T-Contr",
    DiagAt: "T-Diag", TranspAt: "T-Transp", ExpaAt: "T-Expa", ProjAt: "T-Proj",
}


@dataclass(frozen=True)
class Derivations:
    """``ct.derive``: every statement's derivation, complete or partial.

    ``typed`` holds the context Γ, the parameters and the complete derivations (the
    renderings need them); ``error`` is the first failure, as ``ct.check`` would raise it."""

    program: Program
    typed: TypedProgram | None
    statements: tuple[StmtDerivation | PartialStmt, ...]
    status: DeriveStatus
    error: TeilError | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return self.status is DeriveStatus.DERIVED

    @property
    def failures(self) -> list[Failure]:
        """Every failing premise, in statement order."""
        out = []
        for s in self.statements:
            if isinstance(s, PartialStmt):
                if s.failure is not None:
                    out.append(s.failure)
                if isinstance(s.expr, PartialNode):
                    out += [n.failure for n in s.expr.walk() if isinstance(n, PartialNode) and n.failure]
        return out

    def render(self) -> str:
        from .derive import render_derivations

        return render_derivations(self)

    def latex(self) -> str:
        """A complete LaTeX document (``core-teil derive --latex``)."""
        from .derive import render_derivations_latex

        return render_derivations_latex(self)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        n = len(self.statements)
        if self.ok:
            return f"<Derivations {self.program.file}: {n} statement(s) derived>"
        where = self.failures[0].rule if self.failures else (self.error.rule if self.error else "?")
        return f"<Derivations {self.program.file}: failed at {where}>"

    def _repr_html_(self) -> str:
        from .derive import derivations_html

        return derivations_html(self)

    def _repr_latex_(self) -> str:
        from .derive import derivations_mathjax

        return derivations_mathjax(self)


def _failure(err: TeilError, checker: RecordingChecker) -> Failure:
    side = checker.failed if checker.failed is not None and checker.failed.rule == err.rule else None
    cex = getattr(err, "counterexample", None)
    return Failure(err.rule or "?", err.message, side, cex or None, err)


def partial_expr(c: RecordingChecker, e: Expr) -> Derivation | PartialNode:
    """The derivation of ``e`` if there is one, else how far it gets (innermost failing rule)."""
    c.failed = None
    try:
        return c.infer(e)
    except TeilTypeError as err:
        failure = _failure(err, c)
    kids = tuple(partial_expr(c, kid) for kid in e.children())
    if any(isinstance(k, PartialNode) for k in kids):
        return PartialNode(RULE_OF.get(type(e), "?"), e, kids)
    return PartialNode(failure.rule, e, kids, failure)


def partial_stmt(c: RecordingChecker, s: Stmt) -> StmtDerivation | PartialStmt:
    """OK-Stmt for ``s``, or the partial derivation of ``s`` with the premise that fails."""
    c.failed = None
    try:
        return ok_stmt(c, s)
    except TeilTypeError as err:
        own = _failure(err, c)
    expr = partial_expr(c, s.expr)
    return PartialStmt(s, c.gamma.get(s.target), expr, None if isinstance(expr, PartialNode) else own)


def derive_program(program: Program, params: dict[str, int] | None = None) -> Derivations:
    """Every statement's typing derivation; for an ill-typed program, each failing statement's
    partial derivation (raises only for what stops all of them: bad parameters, S-Var, an
    ``assume`` that is not over parameters or admits no values).  A solver that cannot decide
    a side condition raises :class:`~core_teil.errors.TeilUnknown`, never a failure."""
    from ..semantics.inputs import check_params

    try:
        c = program_context(program, check_params(params, program), RecordingChecker)
    except TeilTypeError as err:
        return Derivations(program, None, (), DeriveStatus.FAILED, err)
    assert isinstance(c, RecordingChecker)
    statements = tuple(partial_stmt(c, s) for s in c.program.stmts)
    complete = tuple(s for s in statements if isinstance(s, StmtDerivation))
    typed = TypedProgram(c.program, dict(c.gamma), complete, c.solver, c.types)
    failed = [s for s in statements if isinstance(s, PartialStmt)]
    if not failed:
        return Derivations(c.program, typed, statements, DeriveStatus.DERIVED)
    first = failed[0]
    node = first.failure or next(n.failure for n in first.expr.walk()  # type: ignore[union-attr]
                                 if isinstance(n, PartialNode) and n.failure)
    return Derivations(c.program, typed, statements, DeriveStatus.FAILED, node.error)


__all__ = ["Derivations", "DeriveStatus", "Failure", "PartialNode", "PartialStmt", "derive_program"]
