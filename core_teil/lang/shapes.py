"""Shape terms and their side conditions, decided for all parameter values.

SPEC.md section 3: with shape parameters, an equality or inequality premise
of a typing rule is a *side condition* that must hold for every parameter
value (integers >= 1) satisfying the ``assume``s.  :class:`ShapeSolver`
decides each one with Z3 (seeded, under an ``rlimit``), and when it fails
returns the smallest counterexample assignment it can find.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

import z3

from ..errors import NO_SPAN, Span, TeilInputError, TeilTypeError, TeilUnknown
from .syntax import Cond, Dim, Lin, Program

#: Resource limit for one side condition; TVM's prover uses 10000 with seed 42.
RLIMIT = 2_000_000
SEED = 42

SideOp = Literal["==", "<="]


def round_up(n: int, pad: int) -> int:
    """``⌈n⌉ = pad · ceil(n / pad)`` (report Definition 7), for a concrete extent."""
    return pad * -(-n // pad)


@dataclass(frozen=True)
class SideCondition:
    """``lhs op rhs`` over shape terms, demanded by ``rule`` at ``span``."""

    lhs: Dim
    op: SideOp
    rhs: Dim
    rule: str
    span: Span = NO_SPAN
    why: str = ""

    def __str__(self) -> str:
        return f"{self.lhs} {self.op} {self.rhs}"


class Verdict(Enum):
    HOLDS = "holds"
    FAILS = "fails"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    counterexample: dict[str, int] | None = None


#: Up to this many parameters a counterexample lists every one (Alive2 lists every input).
SHOW_ALL = 12


def solver() -> z3.Solver:
    """A reproducible Z3 solver: fixed seed, resource-limited (Z3-NOTES.md)."""
    s = z3.Solver()
    s.set("random_seed", SEED)
    s.set("rlimit", RLIMIT)
    return s


class ShapeSolver:
    """Decides side conditions for a program's parameters and ``assume``s.

    ``values`` fixes some parameters (``--param``); the others stay symbolic.
    """

    def __init__(self, program: Program, values: dict[str, int] | None = None) -> None:
        self.program = program
        self.values = dict(values or {})
        self.params = program.params
        self.vars = {p: z3.Int(p) for p in self.params}
        self._cache: dict[tuple[Dim, str, Dim], Decision] = {}
        #: The parameters the ``assume``s mention (see :meth:`relevant`).
        self._assumed = {t.name for c in program.conds for lin in (c.lhs, c.rhs) for t in lin.terms
                         if t.name is not None}
        for name in self.values:
            if name not in self.vars:
                raise TeilInputError(f"--param {name}: the program declares no parameter {name!r}")
        for name, v in self.values.items():
            if v < 1:
                raise TeilInputError(f"--param {name}={v}: shape parameters range over integers >= 1")

    # -- terms -------------------------------------------------------------

    def term(self, d: Dim) -> z3.ArithRef:
        """The Z3 integer a shape term denotes (given values substituted)."""
        if isinstance(d, int):
            return z3.IntVal(d)
        if d in self.values:
            return z3.IntVal(self.values[d])
        return self.vars[d]

    def lin(self, lin: Lin) -> z3.ArithRef:
        total: z3.ArithRef = z3.IntVal(0)
        for t in lin.terms:
            total = total + (t.coef * self.term(t.name) if t.name is not None else z3.IntVal(t.coef))
        return total

    def cond(self, c: Cond) -> z3.BoolRef:
        lhs, rhs = self.lin(c.lhs), self.lin(c.rhs)
        return {"<=": lhs <= rhs, "<": lhs < rhs, ">=": lhs >= rhs, ">": lhs > rhs,
                "==": lhs == rhs, "!=": lhs != rhs}[c.op]

    def hypotheses(self) -> list[z3.BoolRef]:
        """Parameters are >= 1 and satisfy every ``assume`` (SPEC.md section 1)."""
        hyps: list[z3.BoolRef] = [v >= 1 for p, v in self.vars.items() if p not in self.values]
        hyps += [self.cond(c) for c in self.program.conds]
        return hyps

    def relevant(self, *dims: Dim) -> list[z3.BoolRef]:
        """The hypotheses a question about ``dims`` depends on: every ``assume``, and ``p >= 1``
        for the parameters that they or ``dims`` mention.

        Any other parameter is constrained by ``p >= 1`` alone, which ``p = 1`` satisfies
        whatever the rest is, so leaving it out changes no answer (sat stays sat, unsat stays
        unsat); a program with 50,000 parameters and no ``assume`` then asks Z3 nothing
        about 49,999 of them."""
        names = {d for d in dims if isinstance(d, str)} | self._assumed
        hyps: list[z3.BoolRef] = [v >= 1 for p, v in self.vars.items() if p in names and p not in self.values]
        hyps += [self.cond(c) for c in self.program.conds]
        return hyps

    def concrete(self, d: Dim) -> int | None:
        if isinstance(d, int):
            return d
        return self.values.get(d)

    # -- decisions ---------------------------------------------------------

    def check_assumptions(self) -> None:
        """Reject a program whose ``assume``s admit no parameter values at all."""
        if not self.program.conds and all(v >= 1 for v in self.values.values()):
            return  # every parameter = 1 (or its given value) is a witness: nothing to ask Z3
        s = solver()
        s.add(*self.relevant())
        r = s.check()
        if r == z3.unsat:
            conds = self.program.conds
            span = conds[0].span if conds else NO_SPAN
            if self.values:
                given = ", ".join(f"{k}={v}" for k, v in sorted(self.values.items()))
                raise TeilInputError(f"the parameter values {given} violate the program's assumptions",
                                     span, rule="Assume")
            raise TeilTypeError("the assumptions admit no parameter values; every claim would be vacuous",
                                span, rule="Assume")
        if r == z3.unknown:
            raise TeilUnknown("Z3 could not decide whether the assumptions are satisfiable", NO_SPAN,
                              rule="Assume")

    def decide(self, lhs: Dim, op: SideOp, rhs: Dim) -> Decision:
        key = (lhs, op, rhs)
        if key not in self._cache:
            self._cache[key] = self._decide(lhs, op, rhs)
        return self._cache[key]

    def _decide(self, lhs: Dim, op: SideOp, rhs: Dim) -> Decision:
        a, b = self.concrete(lhs), self.concrete(rhs)
        if a is not None and b is not None:
            ok = a == b if op == "==" else a <= b
            return Decision(Verdict.HOLDS if ok else Verdict.FAILS, None if ok else dict(self.values))
        goal = self.term(lhs) == self.term(rhs) if op == "==" else self.term(lhs) <= self.term(rhs)
        s = solver()
        s.add(*self.relevant(lhs, rhs))
        s.add(z3.Not(goal))
        r = s.check()
        if r == z3.unsat:
            return Decision(Verdict.HOLDS)
        if r == z3.unknown:
            return Decision(Verdict.UNKNOWN)
        return Decision(Verdict.FAILS, self.smallest_model(z3.Not(goal), lhs, rhs))

    def smallest_model(self, extra: z3.BoolRef, *dims: Dim) -> dict[str, int]:
        """A counterexample with parameters as small as Z3 can make them (Alive2 shrinks first).

        ``dims`` are the shape terms ``extra`` mentions.  A parameter that neither they nor an
        ``assume`` mention may take any value (:meth:`relevant`): it is shown as 1 while the
        program has at most :data:`SHOW_ALL` parameters, and left out beyond that, so that a
        counterexample over 50,000 parameters names the two that matter."""
        names = {d for d in dims if isinstance(d, str)} | self._assumed
        free = [v for p, v in self.vars.items() if p not in self.values and p in names]
        opt = z3.Optimize()
        opt.set("random_seed", SEED)
        opt.set("rlimit", RLIMIT)
        opt.add(*self.relevant(*dims), extra)
        if free:
            opt.minimize(z3.Sum(free))
        model: dict[str, int] = dict(self.values)
        if opt.check() == z3.sat:
            m = opt.model()
            show_all = len(self.vars) <= SHOW_ALL
            for p, v in self.vars.items():
                if p not in self.values and (p in names or show_all):
                    model[p] = m.eval(v, model_completion=True).as_long() if p in names else 1
        return model

    def equal(self, a: Dim, b: Dim) -> bool:
        """Whether two extents are provably equal (no error raised)."""
        return self.decide(a, "==", b).verdict is Verdict.HOLDS
