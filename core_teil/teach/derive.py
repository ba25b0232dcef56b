"""Typing derivations as text, LaTeX and HTML (``core-teil derive``).

The derivation is the one :func:`core_teil.lang.typing.check_program` built: a
:class:`~core_teil.lang.typing.Derivation` per expression node (rule name, shape,
premises, side conditions) under an ``OK-Stmt`` node per statement.  This
module only *shows* it, in the order of paper Fig. 8 / Fig. 12: each node
prints its judgement ``e : t``, the rule that concluded it (SPEC.md section
3) and its non-judgement premises (``Γ(x) = t``, ``m == n``, positions).

Side conditions stay symbolic.  An equality or inequality premise whose two
sides are the same shape term is shown as ``(identical)``; any other one
must have been decided by the checker and recorded in the derivation, and
is shown with the parameters it was proved for.  A premise of the rule that
is neither identical nor recorded means the derivation does not justify its
conclusion: :class:`DerivationMismatch` is raised rather than printing a
derivation that is not one.

Three renderings: :func:`render_text` (an indented tree), :func:`render_latex`
(a complete LaTeX document, one ``bussproofs`` proof tree per statement) and
:func:`derivation_html` / :func:`derivation_mathjax` for notebooks.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import TeilError
from ..lang.printer import format_expr, format_shape, format_stmt, unfold
from ..lang.shapes import SideCondition
from ..lang.syntax import (
    Contr,
    ContrAt,
    Diag,
    DiagAt,
    Dim,
    Expr,
    Program,
    Proj,
    ProjAt,
    Shape,
    Transp,
    Var,
)
from ..lang.typing import Derivation, StmtDerivation, TypedProgram
from .partial import Derivations, Failure, PartialNode, PartialStmt

# --------------------------------------------------------------------------
# Premises of each rule, as the checker must have justified them
# --------------------------------------------------------------------------


class DerivationMismatch(TeilError):
    """A derivation node lacks a side condition that its rule demands (an internal error)."""

    exit_code = 70
    kind = "internal error"


@dataclass(frozen=True)
class Premise:
    """A non-judgement premise of a rule instance, ready to print.

    ``status`` is ``"identical"`` (both sides the same term), ``"decided"``
    (a side condition the checker proved, found in ``Derivation.side``),
    ``"concrete"`` (integers only: positions and literal extents) or
    ``"context"`` (a look-up ``Γ(x) = t``)."""

    lhs: str
    op: str
    rhs: str
    status: str
    side: SideCondition | None = None
    #: An extent equation of a shape unification (T-Elem's ``e0 : t, e1 : t``,
    #: OK-Stmt's ``Γ(x) = t, e : t``) rather than a premise of its own.
    implicit: bool = False

    @property
    def shown(self) -> bool:
        """Identical extents of a unification are visible in the judgements; omit them."""
        return not (self.implicit and self.status == "identical")

    def __str__(self) -> str:
        return f"{self.lhs} {self.op} {self.rhs}"


def _equalities(d: Derivation | StmtDerivation) -> list[tuple[Dim, str, Dim]]:
    """The (in)equality premises of the rule instance at ``d``, from its premises' shapes."""
    if isinstance(d, StmtDerivation):
        return [(a, "==", b) for a, b in zip(d.declared, d.expr.shape, strict=False)]
    e = d.expr
    if d.rule == "T-Elem":
        t0, t1 = d.premises[0].shape, d.premises[1].shape
        return [(a, "==", b) for a, b in zip(t0, t1, strict=False)]
    if isinstance(e, Contr | Diag):
        t = d.premises[0].shape
        return [(t[0], "==", t[1])]
    if isinstance(e, ContrAt | DiagAt):
        t = d.premises[0].shape
        return [(t[e.i - 1], "==", t[e.j - 1])]
    if isinstance(e, Proj):
        return [(e.m, "<=", d.premises[0].shape[0])]
    if isinstance(e, ProjAt):
        return [(e.m, "<=", d.premises[0].shape[e.i - 1])]
    return []


def premises(d: Derivation | StmtDerivation, typed: TypedProgram) -> list[Premise]:
    """The non-judgement premises of ``d``, each matched with how it was justified."""
    out: list[Premise] = []
    if isinstance(d, StmtDerivation):
        out.append(Premise(f"Γ({d.stmt.target})", "=", format_shape(d.declared), "context"))
    elif isinstance(d.expr, Var):
        out.append(Premise(f"Γ({d.expr.name})", "=", format_shape(d.shape), "context"))
    elif isinstance(d.expr, Transp):
        rank = len(d.premises[0].shape)
        out.append(Premise(f"1 <= {d.expr.i}", "<", f"{rank}", "concrete"))
    recorded = list(d.side)
    implicit = isinstance(d, StmtDerivation) or d.rule == "T-Elem"
    for lhs, op, rhs in _equalities(d):
        if lhs == rhs:
            out.append(Premise(str(lhs), op, str(rhs), "identical", implicit=implicit))
            continue
        match = next((s for s in recorded if (s.lhs, s.op, s.rhs) == (lhs, op, rhs)), None)
        if match is None:
            raise DerivationMismatch(
                f"the {d.rule} node for `{_node_text(d)}` has no recorded side condition "
                f"{lhs} {op} {rhs}: the derivation does not justify its conclusion",
                _node_span(d), d.rule)
        recorded.remove(match)
        status = "concrete" if isinstance(lhs, int) and isinstance(rhs, int) else "decided"
        out.append(Premise(str(lhs), op, str(rhs), status, match, implicit))
    for s in recorded:  # demanded by the checker beyond the rule's equalities: show, never hide
        out.append(Premise(str(s.lhs), s.op, str(s.rhs), "decided", s))
    return out


def _node_text(d: Derivation | StmtDerivation) -> str:
    return format_stmt(d.stmt) if isinstance(d, StmtDerivation) else format_expr(d.expr)


def _node_span(d: Derivation | StmtDerivation):
    return d.stmt.span if isinstance(d, StmtDerivation) else d.expr.span


def _params_of(p: Premise) -> list[str]:
    return sorted({t for t in (p.lhs, p.rhs) if not t.lstrip("-").isdigit()})


def justification(p: Premise, typed: TypedProgram) -> str:
    """Why a decided side condition holds: for which parameter values it was proved."""
    if p.status != "decided":
        return ""
    names = _params_of(p)
    given = [n for n in names if n in typed.params]
    free = [n for n in names if n not in typed.params]
    if not free:
        vals = ", ".join(f"{n} = {typed.params[n]}" for n in given)
        return f"with {vals}"
    text = f"for all {', '.join(free)} >= 1"
    if given:
        text += " with " + ", ".join(f"{n} = {typed.params[n]}" for n in given)
    assumes = _assume_text(typed)
    if assumes:
        text += f" under assume {assumes}"
    return text


def _assume_text(typed: TypedProgram) -> str:
    from ..lang.printer import format_cond

    return " and ".join(format_cond(c) for c in typed.program.conds)


def _premise_text(p: Premise, typed: TypedProgram) -> str:
    if p.status == "context":
        return str(p)
    why = "identical" if p.status == "identical" else justification(p, typed)
    return f"side: {p}" + (f" ({why})" if why else "")


# --------------------------------------------------------------------------
# Text: an indented tree, conclusion first, premises below
# --------------------------------------------------------------------------


def _children(d: Node) -> tuple[Any, ...]:
    return (d.expr,) if isinstance(d, StmtDerivation | PartialStmt) else d.premises


Node = Derivation | StmtDerivation | PartialNode | PartialStmt


def _judgement(d: Node) -> str:
    if isinstance(d, StmtDerivation):
        return f"{format_stmt(d.stmt)} ok"
    if isinstance(d, PartialStmt):  # OK-Stmt could not conclude it
        return f"{format_stmt(d.stmt)} ok?"
    if isinstance(d, PartialNode):  # no shape: the rule did not apply
        return f"{format_expr(d.expr)} : ?"
    return f"{format_expr(d.expr)} : {format_shape(d.shape)}"


def failure_text(f: Failure, typed: TypedProgram | None) -> str:
    """``✗ premise m == n fails for h = 1, m = 1, n = 2 (why)``: the marked premise of a partial derivation."""
    if f.side is None:
        return f"✗ fails: {f.message}"
    names = [str(d) for d in (f.side.lhs, f.side.rhs) if isinstance(d, str)]
    given = typed.params if typed is not None else {}
    if f.counterexample and any(n not in given for n in names):
        scope = " for " + ", ".join(f"{k} = {v}" for k, v in sorted(f.counterexample.items()))
    elif names:
        scope = " with " + ", ".join(f"{n} = {given[n]}" for n in sorted(set(names)) if n in given)
    else:
        scope = ""
    return f"✗ premise {f.side} fails{scope} ({f.side.why})"


def _partial_extra(d: PartialNode | PartialStmt, typed: TypedProgram | None) -> list[str]:
    out = []
    if isinstance(d, PartialStmt) and d.declared is not None:
        out.append(f"Γ({d.stmt.target}) = {format_shape(d.declared)}")
    out.append(failure_text(d.failure, typed) if d.failure is not None else "not derived: a premise fails")
    return out


def _tree_lines(root: StmtDerivation | PartialStmt, typed: TypedProgram) -> Iterator[str]:
    """Pre-order with box-drawing guides; a work list, so deep programs do not recurse."""
    work: list[tuple[Node, str, str]] = [(root, "", "")]
    while work:
        d, lead, rest = work.pop()
        if isinstance(d, PartialNode | PartialStmt):
            extra = _partial_extra(d, typed)
        else:
            extra = [_premise_text(p, typed) for p in premises(d, typed) if p.shown]
        line = f"{lead}{_judgement(d)}  [{d.rule}]"
        if extra:
            line += "  " + "; ".join(extra)
        yield line
        kids = _children(d)
        for n, kid in reversed(list(enumerate(kids))):
            last = n == len(kids) - 1
            work.append((kid, rest + ("└─ " if last else "├─ "), rest + ("   " if last else "│  ")))


def context_line(typed: TypedProgram) -> str:
    return "Γ = " + ", ".join(f"{x} : {format_shape(t)}" for x, t in typed.gamma.items())


def params_line(typed: TypedProgram) -> str:
    program = typed.program
    if not program.params:
        return "no shape parameters"
    parts = []
    free = [p for p in program.params if p not in typed.params]
    if free:
        parts.append(f"{', '.join(free)} symbolic (integers >= 1)")
    fixed = [f"{p} = {typed.params[p]}" for p in program.params if p in typed.params]
    if fixed:
        parts.append(", ".join(fixed))
    text = "parameters: " + "; ".join(parts)
    assumes = _assume_text(typed)
    if assumes:
        text += f"; assume {assumes}"
    return text


def render_text(typed: TypedProgram) -> str:
    """Every statement's derivation as an indented tree (``core-teil derive FILE``)."""
    return _render_statements(typed.program, typed, typed.derivations)


def render_derivations(ds: Derivations) -> str:
    """:func:`render_text` for a :class:`~core_teil.teach.partial.Derivations`, failing statements
    drawn up to the rule that fails, its failing premise marked ``✗``."""
    if ds.typed is None:  # OK-Prog failed before any statement: no context to derive in
        err = ds.error
        rule = f" {err.rule}" if err is not None and err.rule else ""
        return "\n".join([f"typing derivations for {ds.program.file} (lang {ds.program.dialect})", "",
                           f"no derivation: OK-Prog's premise{rule} fails: {err.message if err else '?'}"])
    return _render_statements(ds.program, ds.typed, ds.statements)


def _statement_heading(n: int, sd: StmtDerivation | PartialStmt, program: Program) -> str:
    where = f"{program.file}:{sd.stmt.span.line}" if sd.stmt.span.known else program.file
    head = f"statement {n} ({where})"
    if isinstance(sd, PartialStmt):
        head += f": not well typed, the derivation stops at {_stopping_rule(sd)}"
    return head


def _stopping_rule(sd: PartialStmt) -> str:
    if sd.failure is not None:
        return sd.failure.rule
    return next((n.failure.rule for n in sd.expr.walk() if isinstance(n, PartialNode) and n.failure), "?")


def _render_statements(program: Program, typed: TypedProgram,
                       statements: tuple[StmtDerivation | PartialStmt, ...]) -> str:
    out = [f"typing derivations for {program.file} (lang {program.dialect})",
           context_line(typed), params_line(typed)]
    for n, sd in enumerate(statements, start=1):
        out += ["", _statement_heading(n, sd, program)]
        out += list(_tree_lines(sd, typed))
    if not statements:
        out += ["", "(no statements)"]
    return "\n".join(out)


# --------------------------------------------------------------------------
# LaTeX: bussproofs for documents, \dfrac trees for MathJax
# --------------------------------------------------------------------------


#: Text mode: LaTeX's ten special characters, and ``<``, ``>``, ``|``, which the default
#: OT1 encoding prints as other glyphs.
_TEXT_ESCAPES = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "#": r"\#", "$": r"\$", "%": r"\%", "&": r"\&",
    "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
    ">": r"\textgreater{}", "|": r"\textbar{}",
}
#: Math mode (``\mathtt``, also read by MathJax): the same characters as math symbols, since
#: ``\textasciitilde`` and friends are errors there (``derive --latex`` on ``backup~.teil``).
_MATH_ESCAPES = {
    "\\": r"\backslash{}", "{": r"\{", "}": r"\}", "#": r"\#", "$": r"\$", "%": r"\%", "&": r"\&",
    "_": r"\_", "~": r"\sim{}", "^": r"\hat{}", " ": r"\ ", "=": "{=}",
}
#: The non-ASCII characters the tool's own messages use, in math mode.
_MATH_SYMBOLS = {
    "≤": r"\leq{}", "≥": r"\geq{}", "≠": r"\neq{}", "…": r"\ldots{}", "•": r"\bullet{}", "·": r"\cdot{}",
    "Γ": r"\Gamma{}", "Σ": r"\Sigma{}", "μ": r"\mu{}", "⌈": r"\lceil{}", "⌉": r"\rceil{}",
}


def _latin(ch: str) -> bool:
    """A Latin-1/Latin Extended-A letter, which ``inputenc``'s utf8 sets in text mode."""
    return "\u00c0" <= ch <= "\u017f" and ch not in "\u00d7\u00f7"


def tex_escape(text: str) -> str:
    """Text for LaTeX's text mode (file names, messages, rule names): every special escaped.

    Other characters a stock ``pdflatex`` cannot set (a file named ``测试.teil``) become ``?``,
    so that the document always compiles."""
    out = []
    for ch in text:
        if ch in _TEXT_ESCAPES:
            out.append(_TEXT_ESCAPES[ch])
        elif ch in _MATH_SYMBOLS:
            out.append(f"${_MATH_SYMBOLS[ch]}$")
        elif (ch.isascii() and ch.isprintable()) or _latin(ch):
            out.append(ch)
        else:
            out.append("?")
    return "".join(out)


def tex_text(text: str) -> str:
    """A sentence of the tool's for text mode: ``>=`` and ``<=`` as the relations they mean."""
    return tex_escape(text.replace(">=", "≥").replace("<=", "≤").replace("!=", "≠"))


def tex_math(text: str) -> str:
    """Characters for math mode (inside ``mathtt``/``mathit``), escaped for LaTeX and MathJax."""
    out = []
    for ch in text:
        if ch in _MATH_ESCAPES:
            out.append(_MATH_ESCAPES[ch])
        elif ch in _MATH_SYMBOLS:
            out.append(_MATH_SYMBOLS[ch])
        elif ch.isascii() and ch.isprintable():
            out.append(ch)
        else:
            out.append("?")
    return "".join(out)


def tex_dim(d: Dim | str) -> str:
    s = str(d)
    return s if s.lstrip("-").isdigit() else r"\mathit{" + tex_math(s) + "}"


def tex_shape(t: Shape) -> str:
    return "[" + ", ".join(tex_dim(d) for d in t) + "]"


def tex_code(text: str) -> str:
    """Code in math mode: ``\\mathtt`` with explicit spaces, valid in LaTeX and in MathJax alike."""
    return r"\mathtt{" + tex_math(text) + "}"


_TEX_OP = {"==": "=", "<=": r"\leq", "<": "<", "=": "="}


def tex_premise(p: Premise) -> str:
    if p.status == "context":
        name = p.lhs[2:-1]
        return rf"\Gamma({tex_code(name)}) = {tex_shape(_split_shape(p.rhs))}"
    if p.status == "concrete" and p.lhs.startswith("1 <= "):
        return rf"1 \leq {tex_dim(p.lhs[5:])} < {tex_dim(p.rhs)}"
    return f"{tex_dim(p.lhs)} {_TEX_OP[p.op]} {tex_dim(p.rhs)}"


def _split_shape(text: str) -> tuple[str, ...]:
    inner = text.strip()[1:-1].strip()
    return tuple(s.strip() for s in inner.split(",")) if inner else ()


#: Conclusions longer than this show their arguments as ``(…)``: the premises above spell them out,
#: and the full text would make deep trees wider than TeX's largest dimension.
TEX_EXPR_LIMIT = 48


def short_expr(e: Expr) -> str:
    text = format_expr(e)
    if len(text) <= TEX_EXPR_LIMIT or not e.children():
        return text
    head = text
    for child in e.children():
        inner = format_expr(child)
        wrapped = f"({inner})" if child.children() else inner
        head = head.replace(f" {wrapped}", " (…)" if child.children() else f" {inner}", 1)
    return head


def tex_judgement(d: Node) -> str:
    if isinstance(d, StmtDerivation | PartialStmt):
        text = f"{d.stmt.target} = {short_expr(d.stmt.expr)}"
        ok = r"\mathsf{ok}" if isinstance(d, StmtDerivation) else r"\mathsf{ok}\,?"
        return rf"\Gamma \vdash {tex_code(text)} : {ok}"
    if isinstance(d, PartialNode):
        return rf"\Gamma \vdash {tex_code(short_expr(d.expr))} : \,?"
    return rf"\Gamma \vdash {tex_code(short_expr(d.expr))} : {tex_shape(d.shape)}"


def tex_failure(f: Failure) -> str:
    """The failing premise, marked: ``\times\\ m = n`` (or the checker's words)."""
    mark = r"\boldsymbol{\times}\ "
    if f.side is not None:
        return mark + f"{tex_dim(f.side.lhs)} {_TEX_OP[f.side.op]} {tex_dim(f.side.rhs)}"
    return mark + r"\text{" + tex_text(f.message) + "}"


_INFER = {1: "UnaryInfC", 2: "BinaryInfC", 3: "TrinaryInfC", 4: "QuaternaryInfC", 5: "QuinaryInfC"}


#: A proof tree with more nodes than this is cut into named sub-derivations 𝒟1, 𝒟2, ...
#: (TeX cannot typeset a box wider than about 5.7 m, and nobody could read one).
TEX_TREE_LIMIT = 40


def postorder(root: Node) -> Iterator[Node]:
    """Every node after its premises, without recursion (derivations may be 200 deep)."""
    work: list[tuple[Derivation | StmtDerivation, bool]] = [(root, False)]
    while work:
        node, visited = work.pop()
        if visited:
            yield node
            continue
        work.append((node, True))
        work.extend((kid, False) for kid in _children(node))


def partition(root: StmtDerivation | PartialStmt, limit: int = TEX_TREE_LIMIT) -> list[Node]:
    """Roots of the pieces a large derivation is typeset in: sub-derivations first, ``root`` last.

    A node becomes a piece of its own when what remains of its subtree,
    counting each piece below it as one node, reaches ``limit``."""
    residual: dict[int, int] = {}
    pieces: list[Derivation | StmtDerivation] = []
    for node in postorder(root):
        size = 1 + sum(residual[id(kid)] for kid in _children(node))
        if size >= limit and node is not root:
            pieces.append(node)
            size = 1
        residual[id(node)] = size
    return [*pieces, root]


_QUAD = r"\quad "


def bussproofs_tree(root: Derivation | StmtDerivation, typed: TypedProgram,
                    names: dict[int, str] | None = None) -> list[str]:
    """The bussproofs commands of one derivation (or piece of one).

    bussproofs is a stack machine: each inference pops its premises, pushed
    left to right.  A rule's premises are, in Fig. 8's order, the context
    look-up ``Γ(x) = t`` (T-Var, OK-Stmt), the sub-derivations, then the side
    conditions.  A premise whose derivation is typeset separately (``names``)
    is shown as its name above its conclusion."""
    names = names or {}

    def expand(item: Node) -> list[str | Node]:
        if item is not root and id(item) in names:
            return [rf"\AxiomC{{${names[id(item)]}$}}", r"\noLine", rf"\UnaryInfC{{${tex_judgement(item)}$}}"]
        if isinstance(item, PartialNode | PartialStmt):
            return _expand_partial(item)
        ps = premises(item, typed)
        context = _QUAD.join(tex_premise(p) for p in ps if p.status == "context")
        sides = _QUAD.join(tex_premise(p) for p in ps if p.status != "context" and p.shown)
        kids = _children(item)
        arity = len(kids) + bool(context) + bool(sides)
        seq: list[str | Node] = []
        if context:
            seq.append(rf"\AxiomC{{${context}$}}")
        seq.extend(kids)
        if sides:
            seq.append(rf"\AxiomC{{${sides}$}}")
        if arity == 0:
            seq.append(r"\AxiomC{}")
            arity = 1
        seq.append(rf"\RightLabel{{\scriptsize {tex_escape(item.rule)}}}")
        seq.append(rf"\{_INFER[arity]}{{${tex_judgement(item)}$}}")
        return seq

    def _expand_partial(item: PartialNode | PartialStmt) -> list[str | Node]:
        # A rule that could not be applied: the premises that were derived, the failing one marked.
        seq: list[str | Node] = []
        if isinstance(item, PartialStmt) and item.declared is not None:
            seq.append(rf"\AxiomC{{$\Gamma({tex_code(item.stmt.target)}) = {tex_shape(item.declared)}$}}")
        seq.extend(_children(item))
        if item.failure is not None:
            seq.append(rf"\AxiomC{{${tex_failure(item.failure)}$}}")
        arity = len(seq)
        if arity == 0:
            seq.append(r"\AxiomC{}")
            arity = 1
        label = tex_escape(item.rule) + (r" \textbf{fails}" if item.failure is not None else "")
        seq.append(rf"\RightLabel{{\scriptsize {label}}}")
        seq.append(rf"\{_INFER[arity]}{{${tex_judgement(item)}$}}")
        return seq

    return unfold(root, expand)


def _boxed(lines: list[str]) -> list[str]:
    """A proof tree, scaled down to the line width if it is wider."""
    return [r"\begin{center}\sbox{\derivbox}{%", *lines, r"\DisplayProof}%",
            r"\ifdim\wd\derivbox>\linewidth\resizebox{\linewidth}{!}{\usebox{\derivbox}}"
            r"\else\usebox{\derivbox}\fi",
            r"\end{center}"]


def render_latex(typed: TypedProgram) -> str:
    """A complete LaTeX document: one bussproofs proof tree per statement.

    Needs only ``bussproofs``, ``amsmath`` and ``graphicx`` (TeX Live; on
    Debian the packages texlive-latex-base and texlive-science).  Trees wider
    than the page are scaled down to fit; large ones are cut into named
    sub-derivations (:func:`partition`)."""
    return _latex_document(typed.program, typed, typed.derivations)


def render_derivations_latex(ds: Derivations) -> str:
    """:func:`render_latex` for a :class:`~core_teil.teach.partial.Derivations`: a failing statement's
    tree ends at the rule that fails, labelled *fails*, with its failing premise marked ``×``."""
    if ds.typed is None:
        err = ds.error
        text = f"no derivation: OK-Prog's premise {err.rule or ''} fails: {err.message}" if err else "no derivation"
        body = [rf"\section*{{Typing derivations: \texttt{{{tex_escape(ds.program.file)}}}}}",
                r"\noindent " + tex_text(text) + r"\par"]
        return _document(body)
    return _latex_document(ds.program, ds.typed, ds.statements)


def _latex_document(program: Program, typed: TypedProgram,
                    statements: tuple[StmtDerivation | PartialStmt, ...]) -> str:
    body: list[str] = []
    # the file name in text mode: math mode cannot set every character a name may have
    body.append(rf"\section*{{Typing derivations: \texttt{{{tex_escape(program.file)}}}}}")
    ctx = ", ".join(rf"{tex_code(x)} : {tex_shape(t)}" for x, t in typed.gamma.items())
    body.append(rf"\noindent $\Gamma = \{{ {ctx} \}}$\\")
    body.append(tex_text(params_line(typed)) + r"\par")
    for n, sd in enumerate(statements, start=1):
        title = f"{sd.stmt.target} = {short_expr(sd.stmt.expr)}"
        body.append(rf"\subsection*{{Statement {n}: ${tex_code(title)}$}}")
        if title != format_stmt(sd.stmt):
            # the title and the tree's conclusions elide long arguments as (…): the statement in full,
            # in text mode, where it may break between words
            body.append(r"\noindent\texttt{" + tex_escape(format_stmt(sd.stmt)) + r"}\par")
        pieces = partition(sd)
        names = {id(p): rf"\mathcal{{D}}_{{{k}}}" for k, p in enumerate(reversed(pieces[:-1]), start=1)}
        body.extend(_boxed(bussproofs_tree(sd, typed, names)))
        for piece in reversed(pieces[:-1]):
            body.append(rf"\noindent where ${names[id(piece)]}$ is\par")
            body.extend(_boxed(bussproofs_tree(piece, typed, names)))
        sides = [p for d in _all_nodes(sd) if isinstance(d, Derivation | StmtDerivation)
                 for p in premises(d, typed) if p.status == "decided"]
        if sides:
            body.append(r"\noindent Side conditions decided by Z3:")
            body.append(r"\begin{itemize}")
            for p in sides:
                rule = p.side.rule if p.side else ""
                why = tex_text(justification(p, typed))
                body.append(rf"\item ${tex_premise(p)}$ ({tex_escape(rule)}): {why}")
            body.append(r"\end{itemize}")
        if isinstance(sd, PartialStmt):
            failures = [d.failure for d in _all_nodes(sd) if isinstance(d, PartialNode | PartialStmt) and d.failure]
            for f in failures:
                body.append(rf"\noindent The derivation stops at {tex_escape(f.rule)}: "
                            + tex_text(failure_text(f, typed).removeprefix("✗ ")) + r"\par")
    return _document(body)


def _document(body: list[str]) -> str:
    return "\n".join([
        r"\documentclass[10pt]{article}",
        r"\usepackage[a4paper,landscape,margin=1.5cm]{geometry}",
        r"\usepackage[utf8]{inputenc}",
        r"\usepackage{amsmath,amssymb,graphicx}",
        r"\usepackage{bussproofs}",
        r"\newsavebox{\derivbox}",
        r"\EnableBpAbbreviations",
        r"\begin{document}",
        *body,
        r"\end{document}",
    ]) + "\n"


def _all_nodes(sd: StmtDerivation | PartialStmt) -> Iterator[Node]:
    yield sd
    yield from sd.expr.walk()


def derivation_mathjax(d: Node, typed: TypedProgram | None = None) -> str:
    """A ``\\dfrac`` proof tree that MathJax renders (notebooks); no packages needed."""
    # Results of the sub-derivations, computed bottom-up without recursion.
    done: dict[int, str] = {}
    for node in postorder(d):
        kids = [done[id(kid)] for kid in _children(node)]
        if isinstance(node, PartialNode | PartialStmt):
            tops = kids + ([tex_failure(node.failure)] if node.failure is not None else [])
        elif typed is not None:
            ps = [p for p in premises(node, typed) if p.shown]
            tops = [tex_premise(p) for p in ps if p.status == "context"] + kids
            tops += [tex_premise(p) for p in ps if p.status != "context"]
        elif isinstance(node, Derivation) and isinstance(node.expr, Var):
            tops = [rf"\Gamma({tex_code(node.expr.name)}) = {tex_shape(node.shape)}"]
        else:
            tops = kids
        top = r"\quad ".join(tops) if tops else r"\vphantom{X}"
        done[id(node)] = rf"\dfrac{{{top}}}{{{tex_judgement(node)}}}\;\textsf{{{tex_escape(node.rule)}}}"
    return "$$" + done[id(d)] + "$$"


# --------------------------------------------------------------------------
# HTML: nested lists for notebooks
# --------------------------------------------------------------------------

_CSS = ("<style>.ct-deriv ul{list-style:none;margin:0;padding-left:1.4em;border-left:1px dotted #999}"
        ".ct-deriv .rule{font-variant:small-caps;color:#05a;margin-left:.6em}"
        ".ct-deriv .side{color:#555;margin-left:.6em;font-size:90%}</style>")


def derivation_html(d: Node, typed: TypedProgram | None = None) -> str:
    """A derivation as nested HTML lists: judgement, rule, premises."""
    def expand(item: Node) -> list[str | Node]:
        extra = ""
        if isinstance(item, PartialNode | PartialStmt):
            extra = f'<span class="side">{html.escape("; ".join(_partial_extra(item, typed)))}</span>'
        elif typed is not None:
            texts = [_premise_text(p, typed) for p in premises(item, typed) if p.shown]
            if texts:
                extra = f'<span class="side">{html.escape("; ".join(texts))}</span>'
        kids = _children(item)
        return [f"<li><code>{html.escape(_judgement(item))}</code>"
                f'<span class="rule">{html.escape(item.rule)}</span>{extra}',
                *(["<ul>", *kids, "</ul>"] if kids else []), "</li>"]

    return f'{_CSS}<div class="ct-deriv"><ul>{"".join(unfold(d, expand))}</ul></div>'


def typed_html(typed: TypedProgram) -> str:
    head = (f"<p><b>typing derivations</b> for <code>{html.escape(typed.program.file)}</code><br>"
            f"<code>{html.escape(context_line(typed))}</code><br>{html.escape(params_line(typed))}</p>")
    return head + "".join(derivation_html(sd, typed) for sd in typed.derivations)


def typed_mathjax(typed: TypedProgram) -> str:
    return "\n".join(derivation_mathjax(sd, typed) for sd in typed.derivations) or "$\\cdot$"


def derivations_html(ds: Derivations) -> str:
    """A :class:`~core_teil.teach.partial.Derivations` in a notebook: the trees, failing premises marked."""
    if ds.typed is None:
        return f"<pre>{html.escape(render_derivations(ds))}</pre>"
    head = (f"<p><b>typing derivations</b> for <code>{html.escape(ds.program.file)}</code><br>"
            f"<code>{html.escape(context_line(ds.typed))}</code><br>{html.escape(params_line(ds.typed))}</p>")
    return head + "".join(derivation_html(sd, ds.typed) for sd in ds.statements)


def derivations_mathjax(ds: Derivations) -> str:
    if ds.typed is None:
        return r"$\text{" + tex_text(render_derivations(ds).splitlines()[-1]) + "}$"
    return "\n".join(derivation_mathjax(sd, ds.typed) for sd in ds.statements) or "$\\cdot$"


__all__ = [
    "DerivationMismatch", "Premise", "derivation_html", "derivation_mathjax", "derivations_html",
    "derivations_mathjax", "premises", "render_derivations", "render_derivations_latex", "render_latex",
    "render_text", "typed_html", "typed_mathjax",
]
