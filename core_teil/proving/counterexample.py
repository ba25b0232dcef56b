"""Counterexamples a person can read, in the manner of Alive2.

A refuted obligation comes back as a Z3 model.  Before it is shown it is
*shrunk* (:func:`shrink`): the free shape parameters, then the multi-index,
are pushed down one by one by bisection under the obligation's own
constraints, so that the example is the smallest there is (lexicographically,
so the same whichever model the solver found first).  :func:`explain` then
says which case of the obligation failed, in source terms: the statement and
the subexpression with a caret under it, the parameter values, the
multi-index, and the read that went out of bounds (allocation, index,
extent) or the values that differed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3

from ..errors import Span
from ..lang.printer import format_shape
from ..semantics.symbolic import is_constant, subterms
from .obligations import Case, Obligation

#: Bisection steps per objective; each is one solver call of a few milliseconds.
MAX_STEPS = 24


@dataclass(frozen=True)
class Counterexample:
    """Why an obligation fails, in source terms (all fields plain data)."""

    obligation: str
    lemma: str
    statement: str | None
    location: str
    excerpt: str
    params: dict[str, int] = field(default_factory=dict)
    at: str = ""  # the statement's element, e.g. "C[2, 1]"
    index: dict[str, int] = field(default_factory=dict)  # its multi-index k, then summation variables
    what: str = ""
    values: dict[str, str] = field(default_factory=dict)
    confirmation: str | None = None

    def render(self) -> str:
        lines = [f"ERROR: {self.obligation} ({self.lemma}) does not hold"]
        if self.statement:
            lines.append(f"  statement: {self.statement}")
        if self.location:
            lines.append(f"  at {self.location}")
        if self.excerpt:
            lines += ["  " + line for line in self.excerpt.splitlines()]
        lines.append("Example:")
        if self.params:
            lines.append("  " + ", ".join(f"{k} = {v}" for k, v in self.params.items()))
        sums = {k: v for k, v in self.index.items() if not k.startswith("k")}
        if self.at:
            lines.append(f"  at {self.at}" + (", summation index " + ", ".join(
                f"{k} = {v}" for k, v in sums.items()) if sums else ""))
        if self.what:
            lines.append(f"  {self.what}")
        for k, v in self.values.items():
            lines.append(f"  {k}: {v}")
        if self.confirmation:
            lines.append(f"  confirmed by {self.confirmation}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"obligation": self.obligation, "lemma": self.lemma, "statement": self.statement,
                "location": self.location, "params": self.params, "at": self.at, "index": self.index,
                "what": self.what, "values": self.values, "confirmation": self.confirmation}


# --------------------------------------------------------------------------
# Shrinking
# --------------------------------------------------------------------------


def shrink(solver: z3.Solver, model: z3.ModelRef, params: list[z3.ArithRef],
           indices: list[z3.ArithRef]) -> z3.ModelRef:
    """The lexicographically smallest model: each parameter in declaration order, then each
    index (by magnitude), pushed down by bisection under the obligation's constraints.

    The lexicographic minimum is unique, so the counterexample does not depend on which of
    several equally small models the solver happens to find.  ``solver`` holds the
    obligation's assertions and is left as it was."""
    fixed: list[z3.BoolRef] = []
    solver.push()
    try:
        for v, lo in [(p, 1) for p in params] + [(i, 0) for i in indices]:
            objective = z3.If(v >= 0, v, -v) if lo == 0 else v
            model = _bisect(solver, model, objective, lo)
            fixed.append(v == model.eval(v, model_completion=True))
            solver.add(fixed[-1])
    finally:
        solver.pop()
    return model


def _bisect(solver: z3.Solver, model: z3.ModelRef, objective: z3.ArithRef, lo: int) -> z3.ModelRef:
    """The model with the least ``objective >= lo`` (keeps the best so far if out of resources)."""
    hi = model.eval(objective, model_completion=True).as_long()
    for _ in range(MAX_STEPS):
        if lo >= hi:
            break
        mid = (lo + hi) // 2
        solver.push()
        solver.add(objective <= mid)
        r = solver.check()
        if r == z3.sat:
            model = solver.model()
            hi = model.eval(objective, model_completion=True).as_long()
        solver.pop()
        if r == z3.unsat:
            lo = mid + 1
        elif r != z3.sat:
            break
    return model


# --------------------------------------------------------------------------
# Explaining
# --------------------------------------------------------------------------


def excerpt(source: str | None, span: Span) -> str:
    """The source line of ``span`` with a caret under it (as in ``TeilError.render``)."""
    if source is None or not span.known:
        return ""
    lines = source.splitlines()
    if not 1 <= span.line <= len(lines):
        return ""
    line = lines[span.line - 1].expandtabs(1)
    start = max(span.column, 1)
    width = span.end_column - start if span.end_line == span.line and span.end_column > start else 1
    width = max(1, min(width, len(line) - start + 1))
    gutter = f"{span.line:>5} | "
    return f"{gutter}{line}\n{' ' * len(gutter)}{' ' * (start - 1)}{'^' * width}"


def _int(model: z3.ModelRef, t: z3.ArithRef) -> int:
    return model.eval(t, model_completion=True).as_long()


def show_value(v: z3.ExprRef) -> str:
    if v.decl().name() == "undef":
        return "•"
    r = v.arg(0)
    if z3.is_rational_value(r):
        f = r.numerator_as_long() / r.denominator_as_long()
        return f"{f:g}" if r.denominator_as_long() != 1 or abs(f) < 1e15 else str(r.numerator_as_long())
    if z3.is_algebraic_value(r):
        return f"{float(r.approx(12).as_fraction()):g}"
    return str(r)


def constants(e: z3.ExprRef) -> set[int]:
    """Ids of the uninterpreted constants occurring in ``e``."""
    return {t.get_id() for t in subterms([e]) if is_constant(t)}


def failing_case(ob: Obligation, model: z3.ModelRef) -> Case:
    for c in ob.cases:
        if z3.is_true(model.eval(c.condition, model_completion=True)):
            return c
    return ob.cases[0]


def declared_shape(ob: Obligation, name: str | None) -> tuple[str, bool]:
    """The allocation's shape as declared, and whether it mentions a parameter."""
    a = ob.shapes.program.alloc(name) if name is not None else None
    if a is None:
        return "", False
    return format_shape(a.shape), any(isinstance(d, str) for d in a.shape)


def describe(ob: Obligation, case: Case, model: z3.ModelRef) -> tuple[str, dict[str, str]]:
    """One sentence about the failing case, and the values to print."""
    if case.kind == "side-condition":
        others = [c.detail for c in ob.cases if c is not case
                  and z3.is_true(model.eval(c.condition, model_completion=True))]
        return case.detail + "".join(f"\n  (then also {o})" for o in others), {}
    if case.kind == "rejected":
        return case.detail, {}
    idx = [_int(model, i) for i in case.index]
    ext = [_int(model, e) for e in case.extents]
    shape, symbolic = declared_shape(ob, case.name)
    concrete = f" = {ext}" if symbolic else ""
    if case.kind == "read":
        bad = [f"dimension {j}: {i} {'< 1' if i < 1 else f'> {n}'}"
               for j, (i, n) in enumerate(zip(idx, ext, strict=False), 1) if not 1 <= i <= n]
        if len(idx) != len(ext):
            bad = [f"rank {len(idx)} index into rank {len(ext)} allocation"]
        return (f"reads {case.name}{idx}, out of bounds: {case.name} : {shape}{concrete} "
                f"({'; '.join(bad)})"), {}
    if case.kind == "write":
        inside = all(1 <= i <= n for i, n in zip(idx, ext, strict=False)) and len(idx) == len(ext)
        verb = "does not write" if inside else "writes"
        where = "inside" if inside else "outside"
        return (f"St-Stmt {verb} {case.name}{idx}, {where} the store's extents "
                f"{case.name} : {shape}{concrete}; the domain is not preserved"), {}
    values = {label: show_value(model.eval(v, model_completion=True)) for label, v in case.values}
    inside = case.inside is None or z3.is_true(model.eval(case.inside, model_completion=True))
    if case.kind == "summand":
        m, n = idx[0], ext[0]
        if inside:
            return f"the summand of the padded sum at m = {m} differs from the original one", values
        why = f"m = {m} > {n}, the original extent" if m > n else "the sum's index lies in the padding"
        return (f"the summand at m = {m} lies in the padding ({why}): it must be 0, "
                f"or • where the original is •"), values
    where = "on the original domain" if inside else "in the padding"
    return f"{case.detail}, at {case.name}{idx} ({where}; {case.name} : {shape}{concrete})", values


def explain(ob: Obligation, model: z3.ModelRef | None, source: str | None,
            witness: Any = None) -> Counterexample:
    """The readable counterexample of a refuted obligation (``model`` already shrunk)."""
    stmt = None
    if ob.stmt is not None:
        from ..lang.printer import format_stmt

        stmt = f"{ob.stmt_no}: {format_stmt(ob.stmt)}"
    if model is None:
        case = ob.cases[0]
        return Counterexample(ob.name, ob.lemma, stmt, str(case.span) if case.span.known else "",
                              excerpt(source, case.span), what=case.detail)
    case = failing_case(ob, model)
    params = {p: _int(model, v) for p, v in ob.shapes.vars.items() if p not in ob.shapes.values}
    params = {**ob.shapes.values, **params}
    used = constants(case.condition)
    index = {label: _int(model, v) for label, v in ob.indices if v.get_id() in used}
    ks = [v for label, v in index.items() if label.startswith("k")]
    target = ob.stmt.target if ob.stmt is not None else ""
    at = f"{target}{ks}" if target and (ks or case.kind != "side-condition") else ""
    what, values = describe(ob, case, model)
    confirmation = None
    if witness is not None:  # the reference engine's values, not the solver's abstract ones
        values = dict(witness.values)
        confirmation = f"eval.py's reference engine, run on these shapes with {witness.inputs}"
        if witness.index is not None and target:
            at = f"{target}{list(witness.index)}"
            if case.kind == "value":
                what = f"{case.detail}, at {at} ({witness.where})"
    span = case.span if case.span.known else ob.span
    return Counterexample(ob.name, ob.lemma, stmt, str(span) if span.known else "", excerpt(source, span),
                          dict(sorted(params.items(), key=lambda kv: _param_order(ob, kv[0]))), at, index,
                          what, values, confirmation)


def _param_order(ob: Obligation, name: str) -> int:
    """Parameters in declaration order."""
    params = list(ob.shapes.params)
    return params.index(name) if name in params else len(params)
