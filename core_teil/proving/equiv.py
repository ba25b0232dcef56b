"""``core-teil equiv`` / ``ct.equiv``: two programs' outputs equal for every shape and input (issue 13).

Translation validation in the manner of Alive2, for Core-TeIL (SPEC.md
section 6).  For two programs ``P`` and ``Q``:

1. **Interfaces** (:func:`interface`): the same input and output names, with
   declared shapes equal for every parameter value both programs' ``assume``s
   allow (decided by Z3); otherwise a :class:`~core_teil.errors.TeilInputError`
   naming the difference (exit 2).
2. **Smoke test** (:mod:`core_teil.proving.equiv_search`, a few small shapes): a
   difference found here is reported at once, replayed.
3. **Proof** (:mod:`core_teil.proving.equiv_nf`): eval.py's equations run on both
   programs with the normal-form interpretation, at one shared symbolic output
   index ``k`` over the same symbolic inputs, for symbolic extents.  Shape
   parameters that the assumptions force equal are identified first (Z3).
   Each output's two normal forms are compared term by term: the same terms
   up to renaming of summation variables (Sum-Congruence; Sum-Fubini for
   their order), and each term's coefficient equal for every parameter value
   allowed (Z3, seeded, under an ``rlimit``: :func:`core_teil.proving.prove.decide`).
   The value domain is SPEC.md section 4's: reals with ``•``, controlled
   division; a proof shows equality in *real* arithmetic.
4. **Counterexamples**: where no proof is found, small shapes and integer
   inputs (and one ``•`` at a time, and signs that cancel) are searched and
   confirmed in exact arithmetic (:mod:`core_teil.proving.equiv_search`); a candidate
   is reported only if :func:`replayed` shows it in ``ct.evaluate`` of both
   programs (exit 1), and dropped otherwise.  Neither a proof nor a replayed
   counterexample: *unknown* (exit 3), never "equivalent".
5. **Floats**: a proof is in real arithmetic; where the two programs' float
   operations differ (:class:`equiv_nf.FloatFormInterpretation`: reassociation,
   distribution, the order of summation), the report says float64 results may
   differ by rounding.

With ``pad=M`` the claim is about the padded runs (report section 4) on the
original domain: it follows from the unpadded equivalence and, for each
program, report Theorem 3 in its true form, which ``prove(…, pad=M)``
discharges per program; an output is proved only if both programs' padding
obligations are.  Counterexamples are then replayed padded.
"""

from __future__ import annotations

import itertools
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import numpy as np
import z3

from ..errors import NO_SPAN, TeilInputError, TeilTypeError, checked_call
from ..lang.printer import format_cond, format_shape
from ..lang.shapes import ShapeSolver
from ..lang.syntax import Assume, Decl, Dim, Param, Program, Var, walk
from ..lang.typing import TypedProgram, check_program
from ..semantics.eval import Sem, eval_prog, st_stmt
from ..semantics.inputs import check_pad, check_params
from ..semantics.symbolic import Value
from . import equiv_search
from .equiv_nf import (
    Canon,
    Coef,
    Definition,
    FloatFormInterpretation,
    IVar,
    Leaf,
    NFInterpretation,
    Poly,
    Structural,
    TooLarge,
    Trace,
    canon,
    canonical_form,
    monomial,
    show_coef,
    to_z3,
    to_z3_sums,
)
from .equiv_search import Found, Hint, search, seeded
from .limits import Z3_UINT_MAX
from .prove import RLIMIT, SEED, decide, z3_solver
from .replay import to_float

EXIT_EQUIVALENT, EXIT_DIFFERENT, EXIT_UNKNOWN = 0, 1, 3


class Status(StrEnum):
    """The verdict on one output (CrossHair style: never a bare bool)."""

    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Counterexample:
    """Concrete shapes and inputs on which the outputs differ, replayed in both programs."""

    output: str
    index: tuple[int, ...]
    params: dict[str, int]
    inputs: dict[str, Any]  # nested lists, None for •
    value_p: str
    value_q: str
    exact: tuple[str, str]
    pad: int | None

    def render(self, p: str, q: str) -> str:
        lines = [f"ERROR: {self.output} differs: the programs are not equivalent", "Example:"]
        if self.params:
            lines.append("  " + ", ".join(f"{k} = {v}" for k, v in self.params.items()))
        for x, v in self.inputs.items():
            lines.append(f"  {x} = {_show_input(x, v)}")
        at = f"{self.output}[{', '.join(map(str, self.index))}]" if self.index else self.output
        lines.append(f"  {at} in {p}: {self.value_p}")
        lines.append(f"  {at} in {q}: {self.value_q}")
        how = f"padded to multiples of {self.pad}, " if self.pad is not None else ""
        lines.append(f"  replayed by the reference engine (ct.evaluate, {how}both programs); exact rational "
                     f"evaluation of the same equations gives {self.exact[0]} and {self.exact[1]}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"output": self.output, "index": list(self.index), "params": self.params, "inputs": self.inputs,
                "value_p": self.value_p, "value_q": self.value_q, "exact": list(self.exact), "pad": self.pad,
                "replayed_by": "ct.evaluate (reference engine) of both programs"}


#: An input with more cells than this is shown as its most common value and the exceptions.
SHOW_CELLS, SHOW_EXCEPTIONS = 24, 8


def _show_input(x: str, v: Any) -> str:
    """An input as a literal array, or (large shapes) ``0 everywhere except X[1, 2] = 1``."""
    arr = np.array(v, dtype=object)
    if arr.size <= SHOW_CELLS:
        return _show_array(v)
    cells = [(idx, _show_array(arr[idx])) for idx in np.ndindex(*arr.shape)]
    counts: dict[str, int] = {}
    for _, s in cells:
        counts[s] = counts.get(s, 0) + 1
    common = max(counts, key=lambda s: (counts[s], s == "0"))
    rest = [f"{x}[{', '.join(str(i + 1) for i in idx)}] = {s}" for idx, s in cells if s != common]
    text = f"[{', '.join(map(str, arr.shape))}] array, {common} everywhere"
    if rest:
        more = f" and {len(rest) - SHOW_EXCEPTIONS} more (all values: --json)" if len(rest) > SHOW_EXCEPTIONS else ""
        text += " except " + ", ".join(rest[:SHOW_EXCEPTIONS]) + more
    return text


def _show_array(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_show_array(x) for x in v) + "]"
    return "•" if v is None else (str(int(v)) if float(v).is_integer() else f"{v:g}")


@dataclass(frozen=True)
class OutputResult:
    """The verdict on one output and how it was reached."""

    name: str
    status: Status
    seconds: float
    laws: tuple[str, ...] = ()
    normal_form_p: str = ""
    normal_form_q: str = ""
    steps: tuple[str, ...] = ()
    counterexample: Counterexample | None = None
    reason: str = ""
    float_note: str = ""

    @property
    def lemma(self) -> str:
        """What the verdict rests on (the field ``prove``'s obligations have too)."""
        return "; ".join(self.laws) if self.laws else "normal forms (core_teil/proving/equiv_nf.py)"

    def to_json(self) -> dict[str, Any]:
        return {"output": self.name, "status": str(self.status), "seconds": round(self.seconds, 6),
                "laws": list(self.laws), "normal_form_p": self.normal_form_p or None,
                "normal_form_q": self.normal_form_q or None, "steps": list(self.steps),
                "reason": self.reason or None, "floats": self.float_note or None,
                "counterexample": self.counterexample.to_json() if self.counterexample else None}


@dataclass(frozen=True)
class EquivReport:
    """Every output of two programs, with its verdict (SPEC.md section 6, ``ct.equiv``)."""

    file_p: str
    file_q: str
    params: dict[str, int]
    symbolic: tuple[str, ...]
    pad: int | None
    solver_version: str
    rlimit: int
    outputs: tuple[OutputResult, ...]
    seconds: float
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return all(o.status is Status.PROVED for o in self.outputs)

    @property
    def exit_code(self) -> int:
        statuses = {o.status for o in self.outputs}
        if Status.REFUTED in statuses:
            return EXIT_DIFFERENT
        if Status.UNKNOWN in statuses:
            return EXIT_UNKNOWN
        return EXIT_EQUIVALENT

    @property
    def obligations(self) -> tuple[OutputResult, ...]:
        """The per-output results (the name ``prove``'s Report uses)."""
        return self.outputs

    def heading(self) -> str:
        scope = []
        if self.params:
            scope.append(", ".join(f"{k}={v}" for k, v in self.params.items()))
        if self.symbolic:
            scope.append("for all " + ", ".join(self.symbolic) + " allowed by the assumptions")
        if self.pad is not None:
            scope.append(f"pad {self.pad}")
        return (f"equiv {self.file_p} {self.file_q}" + (f" ({'; '.join(scope)})" if scope else "") +
                f"  [z3 {self.solver_version}, seed {SEED}, rlimit {self.rlimit:,}]")

    def render(self) -> str:
        out = [self.heading()]
        for o in self.outputs:
            out.append(f"{o.name}: {o.status.upper() if o.status is Status.REFUTED else o.status} "
                       f"({o.seconds * 1000:.0f} ms)")
            if o.status is Status.PROVED:
                out += [f"  {s}" for s in o.steps]
                if o.laws:
                    out.append("  laws: " + "; ".join(o.laws))
                if o.float_note:
                    out.append(f"  note: {o.float_note}")
            elif o.counterexample is not None:
                out += ["  " + line for line in o.counterexample.render(self.file_p, self.file_q).splitlines()]
            else:
                out.append(f"  UNKNOWN: {o.reason}")
        n = len(self.outputs)
        proved = sum(o.status is Status.PROVED for o in self.outputs)
        refuted = sum(o.status is Status.REFUTED for o in self.outputs)
        out.append(f"{proved}/{n} outputs proved equal, {refuted} differ, {n - proved - refuted} unknown "
                   f"in {self.seconds:.2f} s")
        if self.ok:
            scope = "for every shape the assumptions allow" if self.symbolic else "for these shapes"
            out.append(f"=> equivalent {scope} and every input in V ∪ {{•}} (real arithmetic, SPEC.md section 4)")
        out += [f"note: {n_}" for n_ in self.notes]
        return "\n".join(out)

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.render())}</pre>"

    def to_json(self) -> dict[str, Any]:
        from .. import __version__

        return {"tool": "core-teil", "command": "equiv", "version": __version__, "p": self.file_p,
                "q": self.file_q, "params": self.params, "symbolic": list(self.symbolic), "pad": self.pad,
                "solver": {"name": "z3", "version": self.solver_version, "random_seed": SEED,
                           "rlimit": self.rlimit},
                "semantics": "real arithmetic with • and controlled division (SPEC.md section 4)",
                "ok": self.ok, "exit_code": self.exit_code, "seconds": round(self.seconds, 6),
                "outputs": [o.to_json() for o in self.outputs], "notes": list(self.notes)}


# --------------------------------------------------------------------------
# The shared parameter space
# --------------------------------------------------------------------------


class Scope:
    """Both programs' parameters (identified by name) and the conjunction of their ``assume``s."""

    def __init__(self, p: Program, q: Program, params: dict[str, int]) -> None:
        names = list(dict.fromkeys((*p.params, *q.params)))
        decls: list[Decl] = [Param(tuple(names))] if names else []
        decls += [d for d in (*p.decls, *q.decls) if isinstance(d, Assume)]
        self.program = Program("core", tuple(decls), (), file=f"{p.file} & {q.file}")
        self.shapes = ShapeSolver(self.program, params)
        try:
            self.shapes.check_assumptions()
        except TeilTypeError as exc:
            raise TeilInputError(f"the assumptions of {p.file} and {q.file} together admit no parameter values, "
                                 f"so the programs have no shape in common to compare", exc.span,
                                 "equiv: same parameters") from None
        self.fixed = dict(params)
        self.free = [n for n in names if n not in params]
        self.hyps = self.shapes.hypotheses()
        self.rep = self._representatives()
        self.lows = self._lows()

    def _lows(self) -> dict[str, int]:
        """The least value the assumptions allow each free parameter (where the search starts)."""
        if not self.program.conds:
            return {}
        out: dict[str, int] = {}
        for n in self.free:
            opt = z3.Optimize()
            opt.set("random_seed", SEED)
            opt.set("rlimit", RLIMIT)
            opt.add(*self.hyps)
            opt.minimize(self.shapes.vars[n])
            if opt.check() == z3.sat:
                out[n] = max(1, opt.model().eval(self.shapes.vars[n], model_completion=True).as_long())
        return out

    def holds(self, claim: z3.BoolRef, rlimit: int = RLIMIT) -> str:
        """``proved`` / ``refuted`` / ``unknown``: does ``claim`` hold for every allowed value?"""
        verdict, _ = decide([*self.hyps, z3.Not(claim)], rlimit, None, z3.Context())
        return {"unsat": "proved", "sat": "refuted"}.get(verdict, "unknown")

    def _representatives(self) -> dict[str, int | str]:
        """Each free parameter's canonical atom: a value the assumptions force, or the first
        parameter it must equal (union-find over Z3-proved equalities)."""
        rep: dict[str, int | str] = {}
        if not self.program.conds:
            return {n: n for n in self.free}
        for n in self.free:
            s = z3.Solver()
            s.set("random_seed", SEED)
            s.set("rlimit", RLIMIT)
            s.add(*self.hyps)
            if s.check() == z3.sat:
                v = s.model().eval(self.shapes.vars[n], model_completion=True).as_long()
                if self.holds(self.shapes.vars[n] == v) == "proved":
                    rep[n] = v
                    continue
            for m in self.free:
                if m == n:
                    break
                if isinstance(rep.get(m), str) and rep[m] == m and \
                        self.holds(self.shapes.vars[n] == self.shapes.vars[m]) == "proved":
                    rep[n] = m
                    break
            else:
                rep[n] = n
            rep.setdefault(n, n)
        return rep

    def atom(self, d: Dim) -> int | str:
        if isinstance(d, int):
            return d
        if d in self.fixed:
            return self.fixed[d]
        return self.rep.get(d, d)

    def term(self, d: Dim) -> z3.ArithRef:
        return self.shapes.term(d)

    def allowed(self, values: dict[str, int]) -> bool:
        """Whether a concrete assignment satisfies both programs' assumptions."""
        for c in self.program.conds:
            def lin(lin_: Any) -> int:
                return sum(t.coef * (values[t.name] if t.name is not None else 1) for t in lin_.terms)
            a, b = lin(c.lhs), lin(c.rhs)
            ok = {"<=": a <= b, "<": a < b, ">=": a >= b, ">": a > b, "==": a == b, "!=": a != b}[c.op]
            if not ok:
                return False
        return True


def interface(p: Program, q: Program, scope: Scope) -> None:
    """Same input and output names, declared shapes equal under the assumptions (else exit 2)."""
    for kind, xs, ys in (("input", p.inputs(), q.inputs()), ("output", p.outputs(), q.outputs())):
        nx, ny = {a.name for a in xs}, {a.name for a in ys}
        if nx != ny:
            only_p, only_q = sorted(nx - ny), sorted(ny - nx)
            parts = []
            if only_p:
                parts.append(f"{', '.join(only_p)} only in {p.file}")
            if only_q:
                parts.append(f"{', '.join(only_q)} only in {q.file}")
            span = next((a.span for a in ys if a.name in only_q), None) or \
                next((a.span for a in xs if a.name in only_p), NO_SPAN)
            raise TeilInputError(f"the programs have different {kind}s: {'; '.join(parts)}", span,
                                 f"equiv: same {kind}s")
        for a in xs:
            b = next(y for y in ys if y.name == a.name)
            same = len(a.shape) == len(b.shape) and all(
                scope.holds(scope.term(d) == scope.term(e)) == "proved" for d, e in zip(a.shape, b.shape, strict=True))
            if not same:
                why = (f"ranks {len(a.shape)} and {len(b.shape)}" if len(a.shape) != len(b.shape) else
                       "which differ for some parameter values the assumptions allow")
                raise TeilInputError(f"{kind} {a.name} is declared {format_shape(a.shape)} in {p.file} but "
                                     f"{format_shape(b.shape)} in {q.file}, {why}", b.span, f"equiv: same {kind}s")


# --------------------------------------------------------------------------
# Normal forms of a program's outputs
# --------------------------------------------------------------------------


@dataclass
class Normalised:
    """One program's outputs as normal forms at the shared index, and the lemmas used."""

    values: dict[str, Poly]
    traces: dict[str, Trace]
    floats: dict[str, tuple | None]  # the float operations (equiv_nf.canonical_form), None if too large


def normalise(typed: TypedProgram, scope: Scope, k: dict[str, tuple[IVar, ...]], counter: Any) -> Normalised:
    """Eval-Prog with :class:`NFInterpretation`, each output instantiated at its shared ``k``.

    Each statement's normalisation is traced on its own, and an output is credited with the
    lemmas of the statements its value depends on (St-Seq: the last write of each name read)."""
    interp = NFInterpretation(scope.atom, Trace(), counter)
    inputs = {a.name for a in typed.program.inputs()}
    store: dict[str, Any] = {a.name: "input" if a.name in inputs else "undef" for a in typed.program.allocs}
    sem = Sem(typed, interp, store, None)
    stmt_traces: list[Trace] = []
    for stmt in typed.program.stmts:
        interp.trace = Trace()
        sem = Sem(typed, interp, st_stmt(stmt, sem), None)
        stmt_traces.append(interp.trace)
    values: dict[str, Poly] = {}
    traces: dict[str, Trace] = {}
    floats = float_forms(typed, scope)
    for a in typed.program.outputs():
        v = sem.store[a.name]
        used = dependencies(typed, a.name)
        t = Trace()
        for i in used:
            for law, n in stmt_traces[i].used.items():
                t.use(law, n)
        interp.trace = t
        if v == "input":
            values[a.name] = monomial(Leaf(a.name, k[a.name]))
        elif v == "undef":
            values[a.name] = Poly((), True)
        else:
            assert isinstance(v, Definition)
            values[a.name] = interp.subst(v.value, dict(zip(v.k, k[a.name], strict=True)))
        traces[a.name] = t
    return Normalised(values, traces, floats)


def float_forms(typed: TypedProgram, scope: Scope) -> dict[str, tuple | None]:
    """Each output's float operations at a symbolic index (:class:`equiv_nf.FloatFormInterpretation`),
    canonical; ``None`` where there are too many to build."""
    interp = FloatFormInterpretation(scope.atom)
    inputs = {a.name for a in typed.program.inputs()}
    store: dict[str, Any] = {a.name: "input" if a.name in inputs else "undef" for a in typed.program.allocs}
    out: dict[str, tuple | None] = {}
    try:
        final = eval_prog(Sem(typed, interp, store, None))
    except (TooLarge, RecursionError):
        return {a.name: None for a in typed.program.outputs()}
    for a in typed.program.outputs():
        shape = tuple(scope.atom(d) for d in a.shape)
        k = tuple(("k", -1 - j) for j in range(len(shape)))  # the shared output index
        try:
            v = interp.read(final, a.name, k, Var(a.name))
            out[a.name] = canonical_form(v, k)
        except (TooLarge, RecursionError):
            out[a.name] = None
    return out


def dependencies(typed: TypedProgram, name: str) -> list[int]:
    """The statements (0-based, in order) the final value of ``name`` depends on (St-Seq)."""
    stmts = typed.program.stmts

    def last_write(x: str, before: int) -> int | None:
        return next((j for j in range(before - 1, -1, -1) if stmts[j].target == x), None)

    out: set[int] = set()
    todo = [j for j in [last_write(name, len(stmts))] if j is not None]
    while todo:
        j = todo.pop()
        if j in out:
            continue
        out.add(j)
        for e in walk(stmts[j].expr):
            if isinstance(e, Var):
                w = last_write(e.name, j)
                if w is not None:
                    todo.append(w)
    return sorted(out)


def tree_form(typed: TypedProgram, used: list[int]) -> str:
    """The statements ``used`` as written (with ``lang full`` lowered to Core): two programs whose
    outputs have the same tree form perform the same float operations in the same order."""
    from ..lang.lowering import lower
    from ..lang.printer import format_expr

    prog = lower(typed.program)
    return "; ".join(f"{prog.stmts[i].target} = {format_expr(prog.stmts[i].expr)}" for i in used)


# --------------------------------------------------------------------------
# Comparing two normal forms
# --------------------------------------------------------------------------


def coef_term(c: Coef, scope: Scope) -> z3.ArithRef:
    total: z3.ArithRef = z3.RealVal(0)
    for mono, a in c:
        t: z3.ArithRef = z3.RealVal(a)
        for x in mono:
            t = t * z3.ToReal(scope.shapes.vars[x])
        total = total + t
    return total


def compare(cp: Canon, cq: Canon, scope: Scope, rlimit: int) -> tuple[Status, str, list[str]]:
    """``PROVED`` if the two canonical forms are equal term by term (coefficients by Z3),
    else ``UNKNOWN`` with the first difference."""
    if cp.undef or cq.undef:
        if cp.undef and cq.undef:
            return Status.PROVED, "", ["both are • at every index (Sum-Absorb)"]
        return Status.UNKNOWN, "one program's output is • at every index, the other's is not", []
    tp, tq = dict(cp.terms), dict(cq.terms)
    if set(tp) != set(tq):
        missing = sorted(set(tp) ^ set(tq))
        return Status.UNKNOWN, f"the normal forms have different terms (first: {missing[0]})", []
    steps = []
    for key in sorted(tp):
        if tp[key] == tq[key]:
            continue
        verdict = scope.holds(coef_term(tp[key], scope) == coef_term(tq[key], scope), rlimit)
        if verdict != "proved":
            return Status.UNKNOWN, (f"the coefficients of {key} ({show_coef(tp[key])} and {show_coef(tq[key])}) "
                                    f"are {'not ' if verdict == 'refuted' else 'not known to be '}equal for every "
                                    f"parameter value allowed"), []
        steps.append(f"coefficient of {key}: {show_coef(tp[key])} = {show_coef(tq[key])} under the assumptions (z3)")
    return Status.PROVED, "", steps


#: The algebra check's resource limit (about 1 s on the project machine, prove.RLIMIT_PER_SECOND):
#: it is a fallback, and a sat answer only seeds the search.
ALGEBRA_RLIMIT = 5_000_000
#: A wall-clock bound as well (seconds): with the lambdas of the structured encoding z3 was seen
#: to run past its rlimit (helm with a rewritten division: minutes).  Hitting it only turns a
#: possible proof into "unknown" (then the search runs), so the bound is never a soundness matter.
ALGEBRA_TIMEOUT = 1.5

Z3_ALGEBRA = "V ∪ {•} algebra by z3 (report Def. 4, 8 as symbolic.arith; real arithmetic)"


def algebra(vp: Poly, vq: Poly, names: dict[IVar, str], scope: Scope, rlimit: int) -> tuple[Status, Hint | None]:
    """The fallback: the two normal forms as Z3 terms over ``Value`` (:func:`equiv_nf.to_z3`), equal
    for every value of their reads and Σ-terms and every allowed parameter value?  ``PROVED`` only
    on ``unsat``.  On ``sat`` the model's parameters and read values come back as a :class:`Hint`
    for the search (a model over opaque Σ-terms may be spurious: only a replay decides)."""
    reads: dict[str, Leaf] = {}
    try:
        a = to_z3(vp, names, lambda c: coef_term(c, scope), 0, reads)
        b = to_z3(vq, names, lambda c: coef_term(c, scope), 0, reads)
    except RecursionError:
        return Status.UNKNOWN, None
    verdict, model_ctx = _decide_with_model([*scope.hyps, z3.Not(a == b)], rlimit)
    if verdict == z3.unsat:
        return Status.PROVED, None
    if structural(vp, vq, names, scope, rlimit):
        return Status.PROVED, STRUCTURAL
    if verdict != z3.sat or model_ctx is None:
        return Status.UNKNOWN, None
    model, ctx = model_ctx
    params = {n: model.eval(v.translate(ctx), model_completion=True).as_long()
              for n, v in scope.shapes.vars.items() if n in scope.free}
    values = []
    for key, leaf in reads.items():
        v = model.eval(z3.Const(key, Value).translate(ctx), model_completion=True)
        values.append((leaf.name, leaf.index, to_float(v)))
    return Status.UNKNOWN, Hint(params, tuple(values))


def _decide_with_model(assertions: list[z3.BoolRef], rlimit: int) -> tuple[Any, tuple[Any, z3.Context] | None]:
    """One check in a context of its own (as prove.decide: the verdict depends on nothing else)."""
    ctx = z3.Context()
    s = z3_solver(min(rlimit, ALGEBRA_RLIMIT), ALGEBRA_TIMEOUT, ctx)
    s.add(*(x.translate(ctx) for x in assertions))
    verdict = s.check()
    return verdict, ((s.model(), ctx) if verdict == z3.sat else None)


#: The marker :func:`algebra` returns when the structured encoding proved the claim.
STRUCTURAL = Hint({}, ())


def structural(vp: Poly, vq: Poly, names: dict[IVar, str], scope: Scope, rlimit: int) -> bool:
    """The second algebra check (:func:`equiv_nf.to_z3_sums`): Σ with their bodies visible."""
    ctx = Structural(lambda c: coef_term(c, scope), lambda a: z3.IntVal(a) if isinstance(a, int) else
                     scope.shapes.vars[a])
    # '!' keeps the output index apart from a parameter of the same name (a parameter may be called k1)
    env = {v: (z3.IntVal(1) if n == "#1" else z3.Int(f"{n}!out")) for v, n in names.items()}
    try:
        a, b = to_z3_sums(vp, names, env, ctx), to_z3_sums(vq, names, env, ctx)
    except (RecursionError, KeyError):  # KeyError: an index variable out of scope (never expected)
        return False
    return _decide_with_model([*scope.hyps, z3.Not(a == b)], rlimit)[0] == z3.unsat


# --------------------------------------------------------------------------
# The entry point
# --------------------------------------------------------------------------


def _split_params(params: dict[str, int], p: Program, q: Program) -> tuple[dict[str, int], dict[str, int]]:
    for name in params:
        if name not in p.params and name not in q.params:
            raise TeilInputError(f"--param {name}: neither program declares a parameter {name!r}")
    pp = check_params({k: v for k, v in params.items() if k in p.params}, p)
    pq = check_params({k: v for k, v in params.items() if k in q.params}, q)
    return pp, pq


def _as_lists(inputs: dict[str, np.ndarray]) -> dict[str, Any]:
    return {x: np.where(np.isnan(a), None, a).tolist() if a.ndim else (None if np.isnan(a) else float(a))
            for x, a in inputs.items()}


def replayed(found: Found, p: Program, q: Program) -> tuple[Counterexample | None, str]:
    """The only way a difference is reported (issue 13, item 3): both programs run through the
    reference engine ``ct.evaluate`` on the candidate's shapes and inputs, and their values at its
    index must differ.  The shrunk inputs are tried first; if the engine does not show the
    difference there (exact arithmetic did, floats need not), the inputs on which the engine
    first showed it.  If neither replays, or a run would cost more than the search allows one
    (:data:`equiv_search.MAX_RUN_COST`), the candidate is dropped, never reported: ``None`` and
    why."""
    pp = {k: v for k, v in found.params.items() if k in p.params}
    pq = {k: v for k, v in found.params.items() if k in q.params}
    idx = tuple(i - 1 for i in found.index)
    cost = equiv_search.run_cost(check_program(p, pp)) + equiv_search.run_cost(check_program(q, pq))
    if cost > equiv_search.MAX_RUN_COST:
        at = f"{found.output}[{', '.join(map(str, found.index))}]" if found.index else found.output
        shape = ", ".join(f"{k} = {v}" for k, v in found.params.items())
        return None, (f"exact arithmetic shows {at} differ ({found.exact[0]} against {found.exact[1]}) at {shape}, "
                      f"but replaying that through the reference engine would take about {cost:.0e} operations: "
                      "not reported (never without a replay)")
    for inputs, exact in ((found.inputs, found.exact), (found.unshrunk, found.exact_unshrunk)):
        values = equiv_search.replay(p, q, pp, pq, inputs, found.output, idx, found.pad)
        if values is not None:
            return Counterexample(found.output, found.index, found.params, _as_lists(inputs), values[0], values[1],
                                  exact, found.pad), ""
    return None, NOT_REPLAYED


NOT_REPLAYED = "a candidate difference did not replay in the reference engine (dropped)"


@checked_call
def equiv(p: Program, q: Program, params: dict[str, int] | None = None, pad: int | None = None, *,
          rlimit: int = RLIMIT, smoke: bool = True, search_after: bool = True) -> EquivReport:
    """Prove ``p`` and ``q`` compute equal outputs for every shape and input, or refute it (SPEC.md 6).

    Raises :class:`~core_teil.errors.TeilInputError` (exit 2) when their inputs or outputs differ,
    and the type errors of ``check`` (exit 1) for an ill-typed program.  ``smoke=False`` skips the
    quick search before the proof and ``search_after=False`` the search after a failed one (the tests
    use them to exercise each checker alone); neither can turn an unproved output into a proved one."""
    start = time.perf_counter()
    pad = check_pad(pad)
    # Z3's resource limit is an unsigned 32-bit count; anything else failed inside z3 or, at -1,
    # made every output silently "unknown" (review r25)
    if isinstance(rlimit, bool) or not isinstance(rlimit, numbers.Integral) or not 1 <= rlimit <= Z3_UINT_MAX:
        raise TeilInputError(f"rlimit={rlimit!r}: Z3's resource limit is an integer from 1 to {Z3_UINT_MAX:,}")
    rlimit = int(rlimit)
    raw = check_params(params) if params is not None else {}
    pp, pq = _split_params(raw, p, q)
    tp, tq = check_program(p, pp), check_program(q, pq)
    scope = Scope(p, q, {**pp, **pq})
    interface(p, q, scope)
    outputs = [a.name for a in p.outputs()]
    notes: list[str] = []
    if {format_cond(c) for c in p.conds} != {format_cond(c) for c in q.conds}:
        notes.append("the programs' assumptions differ: the claim is for the parameter values both allow")
    merged = {n: r for n, r in scope.rep.items() if r != n}
    if merged:
        notes.append("the assumptions force " + ", ".join(f"{n} = {r}" for n, r in merged.items()) +
                     " (z3); the normal forms use that")

    def result(name: str, status: Status, t0: float, **kw: Any) -> OutputResult:
        return OutputResult(name, status, time.perf_counter() - t0, **kw)

    # 2. a quick search for a difference first (it also guards the normaliser)
    t0 = time.perf_counter()
    found = search(p, q, outputs, scope.free, scope.fixed, scope.allowed, pad, False, scope.lows) if smoke else None
    cex, why = replayed(found, p, q) if found is not None else (None, "")
    refuted = {cex.output: result(cex.output, Status.REFUTED, t0, counterexample=cex)} if cex is not None else {}
    if found is not None and cex is None:
        notes.append(f"{found.output}: {why}")

    # 3. the proof
    padding_ok, padding_why = _padding(p, q, pp, pq, pad, rlimit)
    results = []
    counter = itertools.count(1)
    shapes = {a.name: a.shape for a in p.outputs()}
    kvars = {x: tuple(IVar(next(counter), "k", scope.atom(d)) for d in t) for x, t in shapes.items()}
    # an output dimension of extent 1 has the one index 1 (so it matches a proj 1 or a singleton Σ)
    names = {v: "#1" if v.bound == 1 else f"k{j}" for vs in kvars.values() for j, v in enumerate(vs, 1)}
    pending: list[str] = []
    hints: dict[str, tuple[Hint, tuple[IVar, ...]]] = {}
    same = {name: name not in refuted and same_statements(tp, tq, name, scope) for name in outputs}
    np_ = nq = None
    too_large = ""
    t_norm = time.perf_counter()
    if not all(same[n] for n in outputs if n not in refuted):
        try:
            np_, nq = normalise(tp, scope, kvars, counter), normalise(tq, scope, kvars, counter)
        except (TooLarge, RecursionError) as exc:
            reason = str(exc) if isinstance(exc, TooLarge) else "nested too deeply"
            too_large = f"the normal form is too large to build ({reason}); no proof attempted"
    for name in outputs:
        t0 = t_norm if name == outputs[0] else time.perf_counter()  # the first output carries the normalisation
        if name in refuted:
            results.append(refuted[name])
            continue
        at = f"{name}[{', '.join(f'k{j}' for j in range(1, len(shapes[name]) + 1))}]" if shapes[name] else name
        if same[name]:
            status = Status.PROVED if padding_ok else Status.UNKNOWN
            proof = (f"{p.file} and {q.file} compute {name} by the same statements from allocations declared "
                     "alike (reflexivity: the same equations of eval.py on the same memory)",)
            results.append(result(name, status, t0, steps=proof, reason="" if padding_ok else padding_why))
            if not padding_ok:
                pending.append(name)
            continue
        outcome: tuple[OutputResult, Hint | None] | None = None
        if np_ is not None and nq is not None:
            try:
                outcome = prove_output(name, at, np_, nq, names, scope, rlimit, p, q, tp, tq, pad,
                                       padding_ok, padding_why, t0)
            except (TooLarge, RecursionError):
                too_large = "the normal form is too large to compare; no proof attempted"
        if outcome is None:
            pending.append(name)
            results.append(result(name, Status.UNKNOWN, t0, reason=too_large))
            continue
        res, hint = outcome
        if hint is not None:
            hints[name] = (hint, kvars[name])
        if res.status is not Status.PROVED:
            pending.append(name)
        results.append(res)
    # 4. no proof: look for a counterexample
    if pending:
        t0 = time.perf_counter()
        cex = None
        dropped = ""
        skipped: list[tuple[dict[str, int], int]] = []
        candidates: list[Callable[[], Found | None]] = []
        if search_after:
            for name in pending:  # first where z3's model points
                if name in hints:
                    hint, ks = hints[name]
                    candidates.append(lambda hint=hint, ks=ks: seeded(p, q, pending, hint, ks, scope, pad))
            candidates.append(lambda: search(p, q, pending, scope.free, scope.fixed, scope.allowed, pad, True,
                                             scope.lows, skipped))
        for find in candidates:
            found = find()
            cex, why = replayed(found, p, q) if found is not None else (None, "")
            dropped = dropped or why
            if cex is not None:
                break
        if cex is not None:
            results = [result(r.name, Status.REFUTED, t0, counterexample=cex) if r.name == cex.output else r
                       for r in results]
        else:
            why = ("; no counterexample among small shapes and inputs either" if search_after else "") + \
                (f"; {dropped}" if dropped else "") + \
                ("".join(f"; not searched at {', '.join(f'{k} = {v}' for k, v in ps.items())}: replaying a difference "
                         f"there through the reference engine would take about {c:.0e} operations"
                         for ps, c in skipped[:1]))
            results = [replace(r, counterexample=None, reason=r.reason + why) if r.name in pending else r
                       for r in results]
    return _report(p, q, scope, pad, rlimit, results, start, notes)


def same_statements(tp: TypedProgram, tq: TypedProgram, name: str, scope: Scope) -> bool:
    """Both programs compute ``name`` by the same statements (lowered to Core, as printed) over
    allocations declared with equal shapes and the same input qualification: then the same
    equations run on the same memory, and the outputs are equal without any normal form."""
    dp, dq = dependencies(tp, name), dependencies(tq, name)
    if tree_form(tp, dp) != tree_form(tq, dq):
        return False
    names_used = {name} | {e.name for i in dp for e in walk(tp.program.stmts[i].expr) if isinstance(e, Var)} | \
        {tp.program.stmts[i].target for i in dp}
    inputs_p = {a.name for a in tp.program.inputs()}
    inputs_q = {a.name for a in tq.program.inputs()}
    for x in names_used:
        a, b = tp.program.alloc(x), tq.program.alloc(x)
        if a is None or b is None or (x in inputs_p) != (x in inputs_q) or \
                [scope.atom(d) for d in a.shape] != [scope.atom(d) for d in b.shape]:
            return False
    return True


def prove_output(name: str, at: str, np_: Normalised, nq: Normalised, names: dict[IVar, str], scope: Scope,
                 rlimit: int, p: Program, q: Program, tp: TypedProgram, tq: TypedProgram, pad: int | None,
                 padding_ok: bool, padding_why: str, t0: float) -> tuple[OutputResult, Hint | None]:
    """Compare one output's normal forms (then the z3 algebra check); the result and a model hint."""
    trp, trq = np_.traces[name], nq.traces[name]
    cp = canon(np_.values[name], names, 0, trp)
    cq = canon(nq.values[name], names, 0, trq)
    status, why, steps = compare(cp, cq, scope, rlimit)
    method = "the two normal forms are equal term by term (up to renaming of summation variables)"
    fallback, hint = (algebra(np_.values[name], nq.values[name], names, scope, rlimit)
                      if status is not Status.PROVED else (Status.UNKNOWN, None))
    if fallback is Status.PROVED:
        status, steps = Status.PROVED, []
        if hint is STRUCTURAL:
            method = ("the normal forms differ term by term; the Σ of each skeleton merged into one (Sum-Linearity, "
                      "Sum-Scalar-Left), z3 proves them equal for every memory and every value of the sums of "
                      "equal bodies (Sum-Congruence), in V ∪ {•} with real arithmetic and controlled division "
                      "(report Def. 4, 8 as symbolic.arith states them)")
            for law in ("Sum-Linearity", "Sum-Scalar-Left", "Sum-Congruence"):
                trp.use(law)
        else:
            method = ("the normal forms differ term by term; z3 proves them equal for every value of their reads "
                      "and Σ-terms, in V ∪ {•} with real arithmetic and controlled division (report Def. 4, 8 "
                      "as symbolic.arith states them)")
        hint = None
        trp.use(Z3_ALGEBRA)
    if status is Status.PROVED and not padding_ok:
        status, why = Status.UNKNOWN, padding_why
    seconds = time.perf_counter() - t0
    if status is not Status.PROVED:
        return OutputResult(name, Status.UNKNOWN, seconds, reason=why, normal_form_p=f"{at} = {cp.show()}",
                            normal_form_q=f"{at} = {cq.show()}"), hint
    laws = _laws(trp, trq)
    fp, fq = np_.floats.get(name), nq.floats.get(name)
    note = "" if fp is not None and fp == fq else (
        "proved in real arithmetic; the programs differ by reassociation, distribution or the order "
        "of summation, so float64 results may differ by rounding")
    proof = [f"{p.file}: {at} = {cp.show()}", f"{q.file}: {at} = {cq.show()}", method, *steps,
             "index maps and arithmetic by eval.py's equations " + ", ".join(_equations(tp, tq))]
    if pad is not None:
        proof.append(f"pad {pad}: both programs' padded runs equal their unpadded ones on the original "
                     "domain (report Theorem 3, true form; prove --pad)")
    return OutputResult(name, Status.PROVED, seconds, laws=laws, normal_form_p=f"{at} = {cp.show()}",
                        normal_form_q=f"{at} = {cq.show()}", steps=tuple(proof), float_note=note), None


def _padding(p: Program, q: Program, pp: dict[str, int], pq: dict[str, int], pad: int | None,
             rlimit: int) -> tuple[bool, str]:
    """With ``pad``: report Theorem 3 (true form) for both programs, by ``prove(…, pad=M)``."""
    if pad is None:
        return True, ""
    from .prove import prove

    for prog, params in ((p, pp), (q, pq)):
        rep = prove(prog, params, pad)
        bad = [o for o in rep.obligations if str(o.status) != "proved"]
        if bad:
            return False, (f"prove {prog.file} --pad {pad}: obligation {bad[0].label} is {bad[0].status}, so the "
                           f"padded runs are not known to equal the unpadded ones")
    return True, ""


def _equations(*typed: TypedProgram) -> list[str]:
    """The equations of eval.py (one per constructor) that the two normalisations ran."""
    from ..semantics.eval import EQUATIONS

    used = {type(e) for t in typed for s in t.program.stmts for e in walk(s.expr)}
    return [f.__name__ for c, f in EQUATIONS.items() if c in used]


_LAW_ORDER = ("Sum-Linearity", "Sum-Scalar-Left", "Sum-Scalar-Right", "Sum-Fubini", "Sum-Constant",
              "Sum-Congruence", "Sum-Absorb")


def _laws(a: Trace, b: Trace) -> tuple[str, ...]:
    used = set(a.used) | set(b.used)
    named = [n for n in _LAW_ORDER if n in used]
    return tuple(named + sorted(used - set(_LAW_ORDER)))


def _report(p: Program, q: Program, scope: Scope, pad: int | None, rlimit: int, results: list[OutputResult],
            start: float, notes: list[str]) -> EquivReport:
    return EquivReport(p.file, q.file, dict(scope.fixed), tuple(scope.free), pad, z3.get_version_string(), rlimit,
                       tuple(results), time.perf_counter() - start, tuple(notes))


# --------------------------------------------------------------------------
# The command line (called from cli.py)
# --------------------------------------------------------------------------


__all__ = ["Counterexample", "EquivReport", "OutputResult", "Status", "equiv"]
