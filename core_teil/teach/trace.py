"""The step-by-step unfolding of ``[[e]]`` at one multi-index (``core-teil trace``).

Paper 000, Fig. 7: "each equality is obtained by applying precisely one of
the definitions in Figure 6".  The definitions applied here are *the*
equations of :mod:`core_teil.semantics.eval` (``EQUATIONS`` and ``st_stmt``), not a
re-statement of them.  Two things make that possible:

* :class:`TermInterpretation`, an :class:`~core_teil.semantics.eval.Interpretation`
  whose values are expression trees: a store read becomes ``A[1, m1]``
  (:class:`Load`), ``arith`` builds ``·``, ``+``, ``-``, ``/`` nodes
  (:class:`Op`), a sum becomes ``Σ_{m1=1..n}`` over a fresh bound variable
  (:class:`Sigma`), and indices are integers or symbols (:class:`Sym`);
* a small-step driver: every equation function is re-bound (a copy of the
  function object with its own globals) so that its recursive calls to
  ``denote`` return a *deferred* ``[[e']](k')`` node (:class:`Den`) instead
  of recursing.  One step applies one equation to the outermost, leftmost
  deferred node and records the equation's name; the trace ends when no
  deferred node is left, i.e. at the store reads.

So changing an equation in ``eval.py`` changes the trace.  ``--values``
evaluates the final term with the inputs, using the reference engine's
arithmetic (report Definition 4 / 8) and store, and compares it with the
reference engine's result at the same index.
"""

from __future__ import annotations

import html
import itertools
import math
import re
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import z3

from ..errors import NO_SPAN, TeilInputError, TeilResourceError, in_file
from ..lang.printer import format_expr, format_shape, format_stmt
from ..lang.shapes import round_up
from ..lang.shapes import solver as z3_solver
from ..lang.syntax import Dim, ElemOp, Expr, Stmt, Var
from ..lang.typing import TypedProgram
from ..semantics import eval as ev
from ..semantics.inputs import check_inputs, check_pad
from ..semantics.symbolic import z3_round_up

#: Give up after this many steps (each step is one equation; Fig. 7 needs 5).
MAX_STEPS = 20_000

# --------------------------------------------------------------------------
# Terms: the values of the TermInterpretation
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Sym:
    """A symbolic natural number: a bound variable, a symbolic index, or a shape parameter."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Ceil:
    """``⌈n⌉`` for a symbolic ``n`` under padding to multiples of ``pad`` (report Definition 7)."""

    n: Any
    pad: int

    def __str__(self) -> str:
        return f"⌈{self.n}⌉"


Index = tuple[Any, ...]


@dataclass(frozen=True)
class Den:
    """A deferred ``[[e]](k)``: not yet unfolded."""

    expr: Expr
    k: Index


@dataclass(frozen=True)
class Load:
    """A store read ``μ(x)(k)``, printed ``x[k]``: where a trace ends."""

    name: str
    k: Index


@dataclass(frozen=True)
class Op:
    """``a op b`` in the extended arithmetic (Definition 4, controlled division Definition 8)."""

    op: ElemOp
    a: Any
    b: Any


@dataclass(frozen=True)
class Sigma:
    """``Σ_{var=1..n} body``: kept symbolic, as in Fig. 7."""

    var: Sym
    n: Any
    body: Any


@dataclass(frozen=True)
class Guard:
    """``body`` if ``j <= d`` else 0: the padded ``expa`` (eval.py's ``guard``)."""

    j: Any
    d: Any
    body: Any


Term = Den | Load | Op | Sigma | Guard

_SYMBOL = {"add": "+", "sub": "-", "mul": "·", "div": "/"}


def format_index(k: Index) -> str:
    return "[" + ", ".join(str(j) for j in k) + "]"


def format_term(t: Any) -> str:
    """Infix text of a term; compound operands are parenthesised."""
    if isinstance(t, Den):
        return f"[[{format_expr(t.expr)}]]{format_index(t.k)}"
    if isinstance(t, Load):
        return f"{t.name}{format_index(t.k)}"
    if isinstance(t, Op):
        return f"{_operand(t.a)} {_SYMBOL[t.op]} {_operand(t.b)}"
    if isinstance(t, Sigma):
        return f"Σ_{{{t.var}=1..{t.n}}} {_operand(t.body)}"
    if isinstance(t, Guard):
        return f"(if {t.j} <= {t.d} then {format_term(t.body)} else 0)"
    return str(t)


def _operand(t: Any) -> str:
    text = format_term(t)
    return f"({text})" if isinstance(t, Op | Sigma) else text


def loads(t: Any) -> Iterator[Load]:
    """The store reads of a term, left to right."""
    if isinstance(t, Load):
        yield t
    elif isinstance(t, Op):
        yield from loads(t.a)
        yield from loads(t.b)
    elif isinstance(t, Sigma | Guard):
        yield from loads(t.body)


def _first_den(t: Any) -> tuple[Den, Callable[[Any], Any]] | None:
    """The outermost, leftmost deferred node, and how to rebuild ``t`` around its replacement."""
    if isinstance(t, Den):
        return t, lambda new: new
    if isinstance(t, Op):
        for side in ("a", "b"):
            found = _first_den(getattr(t, side))
            if found is not None:
                den, rebuild = found
                return den, lambda new, side=side, rebuild=rebuild: Op(
                    t.op, *((rebuild(new), t.b) if side == "a" else (t.a, rebuild(new))))
        return None
    if isinstance(t, Sigma | Guard):
        found = _first_den(t.body)
        if found is None:
            return None
        den, rebuild = found
        if isinstance(t, Sigma):
            return den, lambda new: Sigma(t.var, t.n, rebuild(new))
        return den, lambda new: Guard(t.j, t.d, rebuild(new))
    return None


# --------------------------------------------------------------------------
# The interpretation
# --------------------------------------------------------------------------


@dataclass
class TermInterpretation:
    """eval.py's Interpretation protocol with expression trees as values.

    ``at`` is the one multi-index St-Stmt's ``domain`` yields; ``result``
    receives the value St-Stmt's ``update`` would store there."""

    typed: TypedProgram
    at: Index
    reserved: frozenset[str] = frozenset()
    result: Any = None
    _fresh: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def fresh(self) -> Sym:
        while True:
            name = f"m{next(self._fresh)}"
            if name not in self.reserved:
                return Sym(name)

    # Interpretation protocol -------------------------------------------------

    def extent(self, d: Dim) -> Any:
        v = self.typed.solver.concrete(d)
        return v if v is not None else Sym(str(d))

    def ceil(self, n: Any, pad: int) -> Any:
        return round_up(n, pad) if isinstance(n, int) else Ceil(n, pad)

    def read(self, store: Any, x: str, k: Index, node: Var) -> Load:
        return Load(x, tuple(k))

    def arith(self, op: ElemOp, a: Any, b: Any) -> Op:
        return Op(op, a, b)

    def sum(self, n: Any, body: Callable[[Any], Any], node: Expr) -> Sigma:
        m = self.fresh()
        return Sigma(m, n, body(m))

    def guard(self, j: Any, d: Any, v: Any) -> Any:
        return Guard(j, d, v)

    def domain(self, bounds: tuple[Any, ...], stmt: Stmt) -> Index:
        check_index(self.typed, stmt.target, self.at, bounds)
        return self.at

    def update(self, store: Any, x: str, k: Index, v: Any, bounds: tuple[Any, ...]) -> Any:
        self.result = v
        return store


def _z3_nat(v: Any, typed: TypedProgram) -> z3.ArithRef:
    if isinstance(v, int):
        return z3.IntVal(v)
    if isinstance(v, Ceil):
        n = _z3_nat(v.n, typed)
        return z3_round_up(n, v.pad)
    return typed.solver.term(v.name)


def check_index(typed: TypedProgram, x: str, k: Index, bounds: tuple[Any, ...]) -> None:
    """St-Stmt's ``k <= Γ(x)`` (rounded up under padding), for every allowed parameter value."""
    shape = format_shape(typed.gamma[x])
    alloc = typed.program.alloc(x)
    span = alloc.span if alloc is not None else NO_SPAN
    if len(k) != len(bounds):
        raise TeilInputError(f"{x}{format_index(k)}: {x} : {shape} has rank {len(bounds)}, "
                             f"so it needs {len(bounds)} indices, not {len(k)}", span, "St-Stmt")
    for pos, (kj, n) in enumerate(zip(k, bounds, strict=True), start=1):
        if isinstance(kj, Sym):
            continue  # a symbolic index ranges over its dimension by definition
        if kj < 1:
            raise TeilInputError(f"{x}{format_index(k)}: index {kj} in dimension {pos} is out of range "
                                 f"(indices are 1-based)", span, "St-Stmt")
        if isinstance(n, int):
            if kj > n:
                raise TeilInputError(f"{x}{format_index(k)}: index {kj} in dimension {pos} is out of range "
                                     f"({x} : {shape}, so 1 <= index <= {n})", span, "St-Stmt")
            continue
        s = z3_solver()
        too_big = z3.IntVal(kj) > _z3_nat(n, typed)
        s.add(*typed.solver.hypotheses(), too_big)
        verdict = s.check()
        if verdict == z3.unsat:
            continue
        if verdict == z3.sat:
            model = typed.solver.smallest_model(too_big, *_names(n))
            cex = ", ".join(f"{p} = {model[p]}" for p in _names(n))
            raise TeilInputError(f"{x}{format_index(k)}: index {kj} in dimension {pos} may exceed the "
                                 f"extent {n} of {x} : {shape} (e.g. when {cex}); fix the parameter "
                                 f"with --param", span, "St-Stmt")
        raise TeilInputError(f"{x}{format_index(k)}: Z3 could not decide whether index {kj} is within "
                             f"{n}; fix the parameters with --param", span, "St-Stmt")


def _names(n: Any) -> list[str]:
    return _names(n.n) if isinstance(n, Ceil) else [n.name]


# --------------------------------------------------------------------------
# The small-step driver over eval.py's equations
# --------------------------------------------------------------------------


def _defer(e: Expr, k: Index, sem: ev.Sem) -> Den:
    """Stands in for ``eval.denote`` inside the re-bound equations: do not recurse, defer."""
    return Den(e, tuple(k))


def _rebind(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with ``denote`` meaning :func:`_defer` (its code and defaults unchanged)."""
    scope = dict(fn.__globals__)
    scope["denote"] = _defer
    copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__doc__ = fn.__doc__
    return copy


def step_equations() -> tuple[dict[type, Callable[..., Any]], Callable[..., Any]]:
    """One small step per entry of ``eval.EQUATIONS`` as it is now; St-Stmt opens the trace."""
    return {t: _rebind(f) for t, f in ev.EQUATIONS.items()}, _rebind(ev.st_stmt)


def equation_text(fn: Callable[..., Any]) -> str:
    """The equation an ``ev_*`` function implements, from its docstring (eval.py is the source)."""
    first = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else fn.__name__
    return first.replace("``", "").rstrip(".")


@dataclass(frozen=True)
class Step:
    """One equality of the trace: the whole term after applying ``equation``."""

    term: Any
    equation: str
    function: Callable[..., Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Trace:
    """A finished trace (paper Fig. 7), with the optional numeric check of ``--values``."""

    typed: TypedProgram
    stmt: Stmt
    stmt_number: int
    target: str
    index: Index
    steps: tuple[Step, ...]
    pad: int | None = None
    value: float | None = None  # the final term evaluated with the inputs
    reference: float | None = None  # the reference engine's result at the index

    @property
    def final(self) -> Any:
        return self.steps[-1].term

    @property
    def equations(self) -> dict[str, str]:
        """The equations used, in order of first use, with their statement from eval.py."""
        out: dict[str, str] = {}
        table = {f.__name__: f for f in (*ev.EQUATIONS.values(), ev.st_stmt)}
        table.update({s.equation: s.function for s in self.steps if s.function is not None})
        for s in self.steps:
            out.setdefault(s.equation, equation_text(table[s.equation]))
        return out

    def render(self) -> str:
        program = self.typed.program
        where = f"{program.file}:{self.stmt.span.line}" if self.stmt.span.known else program.file
        lines = [f"trace of {self.target}{format_index(self.index)}: statement {self.stmt_number} "
                 f"({where}) {format_stmt(self.stmt)}"]
        if len(program.stmts) > 1:
            lines.append(f"reads are of the memory before statement {self.stmt_number}")
            for name in sorted({t.name for t in loads(self.final)}):
                earlier = [(n, st) for n, st in enumerate(program.stmts[: self.stmt_number - 1], start=1)
                           if st.target == name]
                if earlier:
                    n, st = earlier[-1]
                    lines.append(f"  {name} as statement {n} left it: {format_stmt(st)}")
        if self.pad is not None:
            lines.append(f"padded: loop bounds rounded up to multiples of M = {self.pad} (⌈n⌉)")
        head = f"{self.target}{format_index(self.index)}"
        texts = [f"{head} = {format_term(self.steps[0].term)}"]
        texts += [" " * len(head) + f" = {format_term(s.term)}" for s in self.steps[1:]]
        width = max(len(t) for t in texts)
        width = width if width <= 100 else 0
        for t, s in zip(texts, self.steps, strict=True):
            lines.append(f"{t.ljust(width)}   {s.equation}")
        lines.append("equations (core_teil/semantics/eval.py):")
        for name, text in self.equations.items():
            lines.append(f"  {name}: {text}")
        if self.value is not None or self.reference is not None:
            lines.append(f"with the inputs: {format_term(self.final)} = {_number(self.value)}")
            lines.append(f"reference engine: {head} = {_number(self.reference)}")
            if not _same(self.value, self.reference):
                lines.append("MISMATCH: the trace and the reference engine disagree")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return (f"<Trace {self.target}{format_index(self.index)} = {format_term(self.final)}: "
                f"{len(self.steps)} step(s)>")

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{'' if n else html.escape(f'{self.target}{format_index(self.index)}')}</td>"
                       f"<td>=</td><td><code>{html.escape(format_term(s.term))}</code></td>"
                       f"<td><small>{html.escape(s.equation)}</small></td></tr>"
                       for n, s in enumerate(self.steps))
        return f'<table class="ct-trace">{rows}</table>'

    def _repr_latex_(self) -> str:
        from .derive import tex_code

        rows = [rf"{latex_term(Load(self.target, self.index)) if n == 0 else ''} &= {latex_term(s.term)}"
                rf" && {tex_code(s.equation)}"
                for n, s in enumerate(self.steps)]
        return r"$$\begin{aligned}" + r"\\ ".join(rows) + r"\end{aligned}$$"


def _number(v: float | None) -> str:
    if v is None:
        return "?"
    if isinstance(v, float) and math.isnan(v):
        return "• (NaN)"
    return repr(float(v))


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def latex_term(t: Any) -> str:
    """A term for MathJax: ``\\llbracket e \\rrbracket``, ``\\sum``, ``\\cdot``."""
    from .derive import tex_code

    def idx(k: Index) -> str:
        return "[" + ", ".join(_tex_nat(j) for j in k) + "]"

    if isinstance(t, Den):
        return rf"[\![ {tex_code(format_expr(t.expr))} ]\!]{idx(t.k)}"
    if isinstance(t, Load):
        return rf"\mu\,{tex_code(t.name)}\,{idx(t.k)}"
    if isinstance(t, Op):
        sym = {"add": "+", "sub": "-", "mul": r"\cdot", "div": "/"}[t.op]
        return f"{_tex_operand(t.a)} {sym} {_tex_operand(t.b)}"
    if isinstance(t, Sigma):
        return rf"\sum_{{{t.var}=1}}^{{{_tex_nat(t.n)}}} {_tex_operand(t.body)}"
    if isinstance(t, Guard):
        return rf"[{_tex_nat(t.j)} \leq {_tex_nat(t.d)}]\,{_tex_operand(t.body)}"
    return str(t)


def _tex_nat(j: Any) -> str:
    if isinstance(j, Ceil):
        return rf"\lceil {_tex_nat(j.n)} \rceil"
    return str(j) if isinstance(j, int) else r"\mathit{" + str(j).replace("_", r"\_") + "}"


def _tex_operand(t: Any) -> str:
    text = latex_term(t)
    return rf"\left({text}\right)" if isinstance(t, Op | Sigma) else text


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------

_AT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[(.*)\])?\s*$")


def parse_at(typed: TypedProgram, at: str) -> tuple[str, Index]:
    """``'C[1,2]'`` -> ``('C', (1, 2))``; a name not a parameter is a symbolic index (``'C[j1,j2]'``)."""
    if not isinstance(at, str):
        raise TeilInputError(f"expected an index such as 'C[1,2]' as text, not {type(at).__name__}")
    where = in_file(typed.program.file)  # the index text has no line of the program to point at
    m = _AT.match(at)
    if m is None:
        raise TeilInputError(f"{where}{at!r}: expected an allocation and a 1-based "
                             f"multi-index, e.g. 'C[1,2]'")
    x, inner = m.group(1), m.group(2)
    if x not in typed.gamma:
        known = ", ".join(typed.gamma) or "none"
        raise TeilInputError(f"{where}{at!r}: the program allocates no {x!r} "
                             f"(allocations: {known})")
    parts = [p.strip() for p in inner.split(",")] if inner is not None and inner.strip() else []
    k: list[Any] = []
    for p in parts:
        if re.fullmatch(r"[+-]?[0-9]+", p):  # ASCII digits, as --param's
            k.append(int(p))
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p):
            if p in typed.program.params:
                raise TeilInputError(f"{where}{at!r}: {p!r} is a shape parameter; write an integer, or a fresh "
                                     f"name for a symbolic index")
            k.append(Sym(p))
        else:
            raise TeilInputError(f"{where}{at!r}: {p!r} is not an index (an integer >= 1 or a name)")
    return x, tuple(k)


def trace_steps(typed: TypedProgram, at: str, inputs: Mapping[str, Any] | None = None,
                pad: int | None = None) -> Trace:
    """Unfold ``[[e]]`` of the last statement assigning ``at``'s allocation, one equation a step."""
    pad = check_pad(pad)
    x, k = parse_at(typed, at)
    program = typed.program
    if inputs is not None:  # --values: bad or missing inputs are reported before any tracing
        ev.initial_store(typed, ev.ArrayInterpretation(typed), check_inputs(inputs), pad)
    numbered = [(n, s) for n, s in enumerate(program.stmts, start=1) if s.target == x]
    if not numbered:
        a = program.alloc(x)
        raise TeilInputError(f"no statement assigns {x!r}: [[·]] has nothing to unfold "
                             f"(its value at {format_index(k) if k else '[]'} is read from the store)",
                             a.span if a else NO_SPAN, "St-Stmt")
    number, stmt = numbered[-1]
    reserved = frozenset(str(j) for j in k if isinstance(j, Sym)) | frozenset(program.params)
    interp = TermInterpretation(typed, k, reserved)
    sem = ev.Sem(typed, interp, None, pad)
    equations, st_stmt = step_equations()
    st_stmt(stmt, sem)
    term = interp.result
    steps = [Step(term, st_stmt.__name__, st_stmt)]
    while (found := _first_den(term)) is not None:
        if len(steps) > MAX_STEPS:
            raise TeilResourceError(f"the trace needs more than {MAX_STEPS} steps; trace a smaller program",
                                    stmt.span, "St-Stmt")
        den, rebuild = found
        equation = equations[type(den.expr)]
        term = rebuild(equation(den.expr, den.k, sem))
        steps.append(Step(term, equation.__name__, equation))
    value = reference = None
    if inputs is not None:
        value, reference = _values(typed, number, stmt, k, term, dict(inputs), pad)
    return Trace(typed, stmt, number, x, k, tuple(steps), pad, value, reference)


# --------------------------------------------------------------------------
# --values: the final term with numbers, against the reference engine
# --------------------------------------------------------------------------


def _values(typed: TypedProgram, number: int, stmt: Stmt, k: Index, term: Any, inputs: dict[str, Any],
            pad: int | None) -> tuple[float, float]:
    if any(isinstance(j, Sym) for j in k):
        raise TeilInputError(f"{in_file(typed.program.file)}evaluating with inputs (--values) needs a numeric "
                             f"index such as 'C[1,2]', not a symbolic one")
    interp = ev.ArrayInterpretation(typed)
    store = ev.initial_store(typed, interp, inputs, pad)
    for s in typed.program.stmts[: number - 1]:
        store = ev.st_stmt(s, ev.Sem(typed, interp, store, pad))
    value = float(fold(term, store, interp, {}))
    final = ev.eval_prog(ev.Sem(typed, interp, ev.initial_store(typed, interp, inputs, pad), pad))
    reference = float(final[stmt.target][tuple(j - 1 for j in k)])
    return value, reference


def fold(t: Any, store: Mapping[str, np.ndarray], interp: ev.ArrayInterpretation, env: dict[str, int]) -> Any:
    """The number a final term denotes: reads from ``store``, arithmetic and sums as the engine does.

    A subterm's value depends only on its free bound variables, so it is computed once per
    value of those (a table, as :meth:`eval.ArrayInterpretation.tabulate` keeps one per
    subexpression): the term of ``red (expa n (red (expa n ...)))`` nests sums whose bodies
    do not mention their variable, and folding every summand anew took n^depth steps."""
    free: dict[int, frozenset[str]] = {}
    memo: dict[tuple[int, tuple[int, ...]], Any] = {}

    def free_vars(u: Any) -> frozenset[str]:
        got = free.get(id(u))
        if got is None:
            if isinstance(u, Load):
                got = frozenset(j.name for j in u.k if isinstance(j, Sym) and j.name in bound)
            elif isinstance(u, Op):
                got = free_vars(u.a) | free_vars(u.b)
            elif isinstance(u, Sigma):
                got = free_vars(u.body) - {u.var.name}
            elif isinstance(u, Guard):
                got = free_vars(u.body) | frozenset(
                    j.name for j in (u.j, u.d) if isinstance(j, Sym) and j.name in bound)
            else:
                got = frozenset()
            free[id(u)] = got
        return got

    def nat(j: Any, env: Mapping[str, int]) -> int:
        if isinstance(j, int):
            return j
        if isinstance(j, Ceil):
            return interp.ceil(nat(j.n, env), j.pad)
        if j.name in env:
            return env[j.name]
        return interp.extent(j.name)

    def go(u: Any, env: Mapping[str, int]) -> Any:
        key = (id(u), tuple(env[x] for x in sorted(free_vars(u))))
        if key in memo:
            return memo[key]
        if isinstance(u, Load):
            v = store[u.name][tuple(nat(j, env) - 1 for j in u.k)]
        elif isinstance(u, Op):
            v = interp.arith(u.op, go(u.a, env), go(u.b, env))
        elif isinstance(u, Sigma):
            v = interp.sum(nat(u.n, env), lambda m: go(u.body, {**env, u.var.name: m}), None)
        elif isinstance(u, Guard):
            v = interp.guard(nat(u.j, env), nat(u.d, env), go(u.body, env))
        else:
            raise TypeError(f"cannot evaluate an unfinished term {format_term(u)}")
        memo[key] = v
        return v

    bound = frozenset(_bound_names(t)) | frozenset(env)
    return go(t, env)


def _bound_names(t: Any) -> Iterator[str]:
    """The variables the sums of a term bind."""
    stack = [t]
    while stack:
        u = stack.pop()
        if isinstance(u, Sigma):
            yield u.var.name
        if isinstance(u, Op):
            stack.extend((u.a, u.b))
        elif isinstance(u, Sigma | Guard):
            stack.append(u.body)


__all__ = [
    "Den",
    "Load",
    "Op",
    "Sigma",
    "Step",
    "Sym",
    "TermInterpretation",
    "Trace",
    "format_term",
    "trace_steps",
]
