"""The course's exercises as data, and the checkers behind ``core-teil exercise ID ANSWER`` (issue 16).

Every exercise of ``docs/course/`` is one frozen :class:`Exercise` in
:data:`EXERCISES`: what kind of answer it takes (:class:`Kind`), the form of
the answer (``asks``, shown by ``core-teil exercise list``), and the *hidden
answer*, usually a program from which the checker computes the expected
result with the tool itself (typing, traces, the reference engine,
``ct.prove``, ``ct.equiv``) rather than a string to compare.  So an answer is
right when it is *equal* to the expected one in the exercise's sense: a
program is right when ``ct.equiv`` proves it equivalent to the solution (and
wrong with ``equiv``'s replayed counterexample), a trace term when it has the
same value as the reference engine at every index on random inputs, a
hypothesis when Z3 proves it equivalent to the one needed.

A wrong answer gets a :class:`Verdict` with a hint (specific to the mistake
where a common one is recognised) and, where it applies, a counterexample;
malformed input is a :class:`~core_teil.errors.TeilInputError` (exit 2).
Worked solutions are on ``docs/course/solutions/``; the checkers never print
the expected answer.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

import numpy as np

from ..errors import TeilError, TeilInputError, TeilSyntaxError, TeilTypeError
from ..lang.printer import format_expr, format_shape
from ..lang.syntax import Contr, ContrAt, Diag, DiagAt, Program, Proj, Red, RedAt, Transp, Var, walk
from .answers import (
    OutOfBounds,
    Read,
    evaluate_term,
    items,
    norm_name,
    parse_names,
    parse_read,
    parse_shape,
    parse_term,
    parse_value,
    parse_values,
    same_values,
    show_values,
    term_names,
)


class Kind(StrEnum):
    """What an answer is, and so how it is checked (one checker per kind, :data:`CHECKERS`)."""

    SHAPES = "shapes"
    PROGRAM = "program"
    EXPRESSION = "expression"
    RULE_AND_VALUES = "rule-and-values"
    RULE_AND_PREMISE = "rule-and-premise"
    JUDGEMENT = "judgement"
    RULES = "rules"
    ASSUME = "assume"
    TERM = "term"
    READS = "reads"
    VALUES = "values"
    COST = "cost"
    HYPOTHESIS = "hypothesis"
    NAMES = "names"
    SOLVER_ANSWERS = "solver-answers"
    REFUTED = "refuted"
    PADDED_SHAPE = "padded-shape"
    DIVISION = "division"
    PADDING_SAFE = "padding-safe"
    GUARD_EQUATION = "guard-equation"
    EQUIVALENT = "equivalent"


class Mark(StrEnum):
    RIGHT = "right"
    WRONG = "wrong"


@dataclass(frozen=True)
class Exercise:
    """One exercise: its identity, the answer it takes, and the hidden answer.

    ``program`` is the hidden answer or the program the question is about (a
    template with ``{answer}`` for kinds that insert the answer into it);
    ``items`` what is asked of it (expressions, indices, outputs); ``expected``
    an answer in the exercise's own notation where nothing computes it;
    ``hints`` maps a recognised wrong answer (normalised) to its hint."""

    id: str
    chapter: int
    title: str
    kind: Kind
    asks: str
    program: str = ""
    items: tuple[str, ...] = ()
    expected: str = ""
    params: tuple[tuple[str, int], ...] = ()
    inputs: tuple[tuple[str, tuple[float, ...]], ...] = ()
    pad: int | None = None
    dialect: str = ""
    constraint: str = ""
    hint: str = ""
    hints: tuple[tuple[str, str], ...] = ()

    @property
    def chapter_page(self) -> str:
        return CHAPTERS[self.chapter]


@dataclass(frozen=True)
class Verdict:
    """Right, or wrong with a hint and, where it applies, a counterexample."""

    exercise: Exercise
    mark: Mark
    message: str
    hint: str = ""
    counterexample: str = ""

    @property
    def ok(self) -> bool:
        return self.mark is Mark.RIGHT

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def render(self) -> str:
        ex = self.exercise
        head = f"exercise {ex.id} ({ex.title}): " + ("right" if self.ok else "not right yet")
        lines = [head, f"  {self.message}"]
        if self.counterexample:
            lines.append("counterexample:")
            lines += [f"  {line}" for line in self.counterexample.rstrip("\n").splitlines()]
        if self.hint:
            lines.append(f"hint: {self.hint}")
        if self.ok:
            lines.append(f"the worked solution: docs/course/solutions/{ex.chapter_page}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


CHAPTERS = {
    1: "01-syntax-and-shapes.md", 2: "02-typing-and-derivations.md", 3: "03-denotational-semantics-and-traces.md",
    4: "04-type-safety-and-certificates.md", 5: "05-padding-and-simulation.md",
    6: "06-equational-reasoning-and-the-fast-evaluator.md", 7: "07-the-motivating-kernels.md",
}


def right(ex: Exercise, message: str) -> Verdict:
    return Verdict(ex, Mark.RIGHT, message)


def wrong(ex: Exercise, message: str, hint: str = "", counterexample: str = "") -> Verdict:
    return Verdict(ex, Mark.WRONG, message, hint or ex.hint, counterexample)


def known_hint(ex: Exercise, answer: str) -> str:
    key = norm_name(answer)
    return next((h for a, h in ex.hints if norm_name(a) == key), "")


# --------------------------------------------------------------------------
# Helpers shared by the checkers
# --------------------------------------------------------------------------


def _parse(text: str, file: str) -> Program:
    from ..lang.parser import parse

    return parse(text, file)


def _typed(program: Program, params: dict[str, int] | None = None) -> Any:
    from ..lang.typing import check_program

    return check_program(program, params)


def _params(ex: Exercise) -> dict[str, int]:
    return dict(ex.params)


def _random_inputs(program: Program, params: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """Small integer inputs (seeded): equal terms give equal numbers, different ones rarely do."""
    from ..semantics.inputs import concrete_extent

    typed = _typed(program, params)
    rng = np.random.default_rng(seed)
    return {a.name: rng.integers(-3, 4, size=tuple(concrete_extent(typed, d) for d in a.shape)).astype(np.float64)
            for a in program.inputs()}


def _store(program: Program, params: dict[str, int], inputs: dict[str, np.ndarray]) -> tuple[dict[str, Any], Any]:
    from ..semantics import eval as ev

    typed = _typed(program, params)
    interp = ev.ArrayInterpretation(typed)
    return dict(ev.initial_store(typed, interp, inputs, None)), typed


def _show_inputs(inputs: dict[str, np.ndarray]) -> list[str]:
    return [f"{x} = {show_values(v)}" for x, v in inputs.items()]


def _type_error_hint(err: TeilError) -> str:
    message = re.sub(r"; counterexample: .*$", "", err.message)  # shown as the counterexample instead
    return f"the checker rejects it: [{err.rule}] {message}" if err.rule else message


def _type_error_counterexample(err: TeilError) -> str:
    """The parameter values for which a side condition fails (symbolic shapes), as ``check`` finds them."""
    cex = getattr(err, "counterexample", None)
    return f"{_assignment(cex)}: {err.rule} fails" if cex else ""


def _interface(program: Program) -> str:
    def allocs(which: tuple[Any, ...]) -> str:
        return ", ".join(f"{a.name} : {format_shape(a.shape)}" for a in which)

    return f"inputs {allocs(program.inputs())}; outputs {allocs(program.outputs())}"


class Cost:
    """An interpretation (chapter 3, section 3.7) whose values are numbers of + - * / performed."""

    def __init__(self, typed: Any) -> None:
        self.typed = typed

    def extent(self, d: Any) -> int:
        return self.typed.solver.concrete(d)

    def ceil(self, n: int, pad: int) -> int:
        return pad * -(-n // pad)

    def read(self, store: Any, x: str, k: Any, node: Any) -> int:
        return 0

    def arith(self, op: str, a: int, b: int) -> int:
        return a + b + 1

    def sum(self, n: int, body: Callable[[int], int], node: Any) -> int:
        return sum(body(m) for m in range(1, n + 1)) + n - 1

    def guard(self, j: int, d: int, v: int) -> int:
        return v


def statement_costs(program: Program, params: dict[str, int]) -> list[int]:
    """Operations of one entry of each statement, by the equations of eval.py on :class:`Cost`."""
    from ..semantics import eval as ev

    typed = _typed(program, params)
    sem = ev.Sem(typed, Cost(typed), None)
    return [ev.denote(s.expr, tuple(1 for _ in typed.gamma[s.target]), sem) for s in typed.program.stmts]


# --------------------------------------------------------------------------
# The checkers, one per kind of answer
# --------------------------------------------------------------------------


def check_shapes(ex: Exercise, answer: str) -> Verdict:
    """Each item's shape (or ``none``), computed by typing the item in the exercise's context."""
    from ..lang.typing import program_context

    given = items(answer)
    if len(given) != len(ex.items):
        raise TeilInputError(f"exercise {ex.id} asks for {len(ex.items)} shapes separated by ';' "
                             f"(got {len(given)}): {ex.asks}")
    context = program_context(_parse(ex.program, f"exercise {ex.id}"))
    wrong_items = []
    for n, (text, item) in enumerate(zip(given, ex.items, strict=True), start=1):
        shape = parse_shape(text)
        expr = _parse(f"lang {context.program.dialect} __e = {item}", item).stmts[0].expr
        try:
            actual: tuple[Any, ...] | None = context.infer(expr).shape
        except TeilTypeError:
            actual = None
        if shape != actual:
            if actual is None:
                why = "it has no shape: one rule's premise fails (`core-teil derive` a program with it)"
            elif shape is None:
                why = "it is well typed: apply the rules of section 1.3 inside out"
            else:
                why = "work inside out: first the shape of the argument, then the rule of the operator"
            wrong_items.append(f"item {n}, `{item}`: {why}")
    if wrong_items:
        verb = "is" if len(wrong_items) == 1 else "are"
        return wrong(ex, f"{len(wrong_items)} of the {len(ex.items)} shapes {verb} not right", "; ".join(wrong_items))
    return right(ex, f"all {len(ex.items)} shapes are right")


def _constraint_problem(ex: Exercise, program: Program) -> str:
    nodes = [n for s in program.stmts for n in walk(s.expr)]
    if ex.constraint == "transp-only" and any(not isinstance(n, Transp | Var) for n in nodes):
        return "use adjacent transpositions only (transp i)"
    if ex.constraint == "one-contr":
        contrs = sum(isinstance(n, Contr | ContrAt) for n in nodes)
        if contrs != 1 or any(isinstance(n, Red | RedAt | Diag | DiagAt) for n in nodes):
            return "write it with exactly one contr (and no red or diag)"
    return ""


def _against_solution(ex: Exercise, student: Program, solution: Program) -> Verdict:
    """Right iff ``ct.equiv`` proves the two programs equivalent; its counterexample otherwise."""
    from ..proving.equiv import Status as EquivStatus
    from ..proving.equiv import equiv

    if ex.dialect and student.dialect != ex.dialect:
        return wrong(ex, f"the exercise asks for lang {ex.dialect}, the answer is lang {student.dialect}",
                     "`core-teil lower` turns full TeIL into Core-TeIL" if ex.dialect == "core" else "")
    try:
        _typed(student)
    except TeilTypeError as err:
        return wrong(ex, "the program is not well typed", _type_error_hint(err), _type_error_counterexample(err))
    problem = _constraint_problem(ex, student)
    if problem:
        return wrong(ex, f"the program does not follow the exercise: {problem}")
    try:
        report = equiv(student, solution)
    except TeilInputError as err:  # the interfaces differ
        return wrong(ex, "the program's inputs and outputs are not the exercise's",
                     f"declare {_interface(solution)} ({err.message})")
    for o in report.outputs:
        if o.status is EquivStatus.REFUTED and o.counterexample is not None:
            c = o.counterexample
            at = f"{o.name}[{', '.join(map(str, c.index))}]"
            params = ",".join(f"{k}={v}" for k, v in c.params.items())
            how = f"core-teil trace FILE '{at}'" + (f" --param {params}" if params else "")
            return wrong(ex, f"{o.name} is not what the exercise asks for (core-teil equiv refutes it)",
                         f"trace your program at that index ({how}) and compare with the exercise's formula",
                         c.render(student.file, "the solution"))
    if not report.ok:
        reasons = "; ".join(o.reason for o in report.outputs if o.reason)
        return wrong(ex, "core-teil equiv could neither prove nor refute it equal to the solution",
                     reasons or "simplify the program; trace it at a symbolic index")
    return right(ex, "core-teil equiv proves it equivalent to the solution, for every shape and input")


def check_program_answer(ex: Exercise, answer: str, origin: str = "your program") -> Verdict:
    """A whole ``.teil`` program, compared with the solution by ``ct.equiv``."""
    student = _parse(answer, origin)
    if not student.decls and not student.stmts:  # an empty file is no attempt, not a wrong program
        raise TeilInputError(f"{origin}: the program is empty; exercise {ex.id} takes {ex.asks}")
    return _against_solution(ex, student, _parse(ex.program, "the solution"))


def _one_line(ex: Exercise, answer: str, what: str) -> str:
    lines = [line for line in answer.strip().splitlines() if line.strip()]
    if len(lines) != 1:
        raise TeilInputError(f"exercise {ex.id} takes one {what} on one line, the answer has {len(lines)} lines")
    return lines[0].strip()


def _parse_answer(ex: Exercise, template: str, answer: str, what: str) -> Program:
    """``template`` with the (one-line) answer put in; a syntax error is shown in the answer and names the
    exercise, never at a line of the template the student did not write."""
    before = template[:template.index("{answer}")]
    line, offset = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1)
    try:
        return _parse(template.replace("{answer}", answer), f"exercise {ex.id}, {what}")
    except TeilSyntaxError as err:  # the answer is one line, the template's last: the error is in it
        assert err.span.line == line, err
        col = max(1, err.span.column - offset)
        span = replace(err.span, line=1, end_line=1, column=col, end_column=max(col + 1, err.span.end_column - offset))
        message = re.sub(r"the complete statement `\w+ = \.\.\.`", "the complete expression", err.message)
        raise TeilSyntaxError(message, span, err.rule, source=answer) from None


def check_expression(ex: Exercise, answer: str) -> Verdict:
    """An expression put into the exercise's program, compared with the solution by ``ct.equiv``."""
    expr = _one_line(ex, answer, "expression")
    expr = re.sub(r"^v\s*=\s*", "", expr)  # `v = e` is accepted for `e`
    student = _parse_answer(ex, ex.program, expr, "your expression")
    return _against_solution(ex, student, _parse(ex.expected, "the solution"))


#: The answers' patterns start where a word does (a lookbehind) and keep their operators out of
#: their operands: matched from every position of a long word, they were quadratic (review r25:
#: 40 kB of letters as an answer took minutes).
#: A read ``B[2, i, j]``: its brackets hold no bracket, so that ``a[a[a[...`` is not scanned to its
#: end from every ``[`` (review r25: 80 kB of them took 7 s)
_READ = re.compile(r"(?<!\w)\w+\[[^\][]*\]")
_RULE = re.compile(r"(?<![A-Za-z])[A-Za-z]+-[A-Za-z]+\+?")
_ASSIGN = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([0-9]+)")


def check_rule_and_values(ex: Exercise, answer: str) -> Verdict:
    """The rule that rejects the program, and parameter values for which it does."""
    rules = [w for w in re.findall(_RULE, answer)]
    values = {k: int(v) for k, v in _ASSIGN.findall(answer)}
    if len(rules) != 1 or not values:
        raise TeilInputError(f"exercise {ex.id}: {ex.asks}")
    program = _parse(ex.program, f"exercise {ex.id}")
    try:
        _typed(program)
        raise AssertionError("the exercise's program type-checks")  # pragma: no cover - data error
    except TeilTypeError as err:
        expected_rule = err.rule or ""
    if norm_name(rules[0]) != norm_name(expected_rule):
        return wrong(ex, f"{rules[0]} is not the rule that rejects the program", known_hint(ex, rules[0]))
    unknown = set(values) - set(program.params)
    if unknown:
        raise TeilInputError(f"exercise {ex.id}: the program has no parameter {', '.join(sorted(unknown))}")
    missing = [p for p in ex.items if p not in values]  # the values the exercise asks for (others default to 1)
    if missing:
        raise TeilInputError(f"exercise {ex.id}: give the value of {', '.join(missing)} as well")
    params = {p: values.get(p, 1) for p in program.params}
    try:
        _typed(program, params)
    except TeilTypeError as err:
        if err.rule == expected_rule:
            return right(ex, f"{expected_rule} rejects it with {_assignment(values)}")
    return wrong(ex, f"with {_assignment(params)} the program is well typed",
                 "the counterexample of `core-teil check` is the smallest such value")


def _assignment(values: dict[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in values.items())


#: ``lhs op rhs``; the left side starts where a word does and holds no operator: ``(\S+)`` matched
#: from every position of a long word without one, quadratic (40 kB of letters took minutes: review r25)
_PREMISE = re.compile(r"(?<![^\s=<≤])([^\s=<≤]+)\s*(==|=|<=|≤)\s*(\S+)")


def _failing(program: Program, params: dict[str, int] | None = None) -> Any:
    from .partial import derive_program

    ds = derive_program(program, params)
    assert ds.failures, "the exercise's program type-checks"
    return ds.failures[0]


def check_rule_and_premise(ex: Exercise, answer: str) -> Verdict:
    """The rule where the derivation stops and its failing premise (from the partial derivation)."""
    rules = re.findall(_RULE, answer)
    premise = _PREMISE.search(answer.replace("!=", "=="))
    if len(rules) != 1 or premise is None:
        raise TeilInputError(f"exercise {ex.id}: {ex.asks}")
    f = _failing(_parse(ex.program, f"exercise {ex.id}"))
    if norm_name(rules[0]) != norm_name(f.rule):
        return wrong(ex, f"the derivation does not stop at {rules[0]}", known_hint(ex, rules[0]))
    lhs, op, rhs = premise.groups()
    assert f.side is not None
    want = {str(f.side.lhs), str(f.side.rhs)}
    op_ok = (op in ("==", "=")) == (f.side.op == "==")
    if not op_ok or ({lhs, rhs} != want if f.side.op == "==" else (lhs, rhs) != (str(f.side.lhs), str(f.side.rhs))):
        return wrong(ex, f"{f.rule} fails, but not at the premise {lhs} {op} {rhs}",
                     "which extents does the rule compare? read them off the shape of its argument")
    return right(ex, f"the derivation stops at {f.rule}: its premise {f.side} is false")


def check_judgement(ex: Exercise, answer: str) -> Verdict:
    """``EXPR : SHAPE``, compared with the expected judgement after parsing both (so spacing and
    parentheses do not matter); it must be a node of the first statement's derivation."""
    answer = _one_line(ex, answer, "judgement")
    if ":" not in answer:
        raise TeilInputError(f"exercise {ex.id}: {ex.asks}")
    program = _parse(ex.program, f"exercise {ex.id}")
    first = _typed(program).derivations[0]
    nodes = {format_expr(d.expr): format_shape(d.shape) for d in first.expr.walk()}

    def judgement(text: str) -> tuple[str, str]:
        expr_text, shape_text = text.rsplit(":", 1)
        expr = _parse_answer(ex, f"lang {program.dialect} __e = {{answer}}", expr_text.strip(),
                             "your judgement").stmts[0].expr
        shape = parse_shape(shape_text)
        return format_expr(expr), format_shape(shape) if shape is not None else "none"

    (e, t), (want_e, want_t) = judgement(answer), judgement(ex.expected)
    if (e, t) == (want_e, want_t):
        return right(ex, f"`{e} : {t}` is the node T-Contr skips: contr e is red (diag e) in one rule")
    if e == want_e:
        return wrong(ex, f"`{e}` is the node, but its shape is not {t}", "apply T-Diag to A : [n, n]")
    if e not in nodes:
        return wrong(ex, f"`{e}` is not a node of the derivation of the first statement",
                     "derive both statements (`core-teil derive`) and compare them node by node")
    return wrong(ex, f"`{e} : {nodes[e]}` has a counterpart in the second derivation",
                 known_hint(ex, e) or "compare the two derivations node by node, from the leaves up")


def check_rules(ex: Exercise, answer: str) -> Verdict:
    """The rules of a derivation from the root down (of the lowered program where ``constraint`` says so)."""
    from ..lang.lowering import lower

    program = _parse(ex.program, f"exercise {ex.id}")
    if ex.constraint == "lowered":
        program = lower(program)
    sd = _typed(program).derivations[0]
    expected = [sd.rule] + [d.rule for d in sd.expr.walk()]
    given = parse_names(answer)
    if [norm_name(g) for g in given] == [norm_name(e) for e in expected]:
        return right(ex, f"{len(expected)} nodes: " + " ".join(expected))
    counts = (given.count("T-Transp"), expected.count("T-Transp"))
    hint = ("count the adjacent swaps the lowering needs" if counts[0] != counts[1]
            else "list every node, from the statement (OK-Stmt) down to the variable")
    return wrong(ex, "that is not the list of rules of the Core-TeIL derivation", hint)


def check_assume(ex: Exercise, answer: str) -> Verdict:
    """An ``assume`` that makes the program well typed (and admits some parameter values)."""
    cond = answer.strip().removeprefix("assume").strip()
    if not cond:
        raise TeilInputError(f"exercise {ex.id}: {ex.asks}")
    try:
        program = _parse(ex.program.replace("{answer}", cond), "your assume")
    except TeilSyntaxError as err:
        raise TeilInputError(f"exercise {ex.id}: {cond!r} is not a condition ({err.message}); {ex.asks}") from None
    try:
        _typed(program)
    except TeilTypeError as err:
        return wrong(ex, "with this assume the program is still rejected", _type_error_hint(err),
                     _type_error_counterexample(err))
    return right(ex, f"with `assume {cond}` the program type-checks for every allowed m, n, h "
                     "(is that the kernel its author wanted? see the solution)")


def _term_check(ex: Exercise, t: Any, at: str) -> Verdict:
    """``t`` against the reference engine at every index of ``at``'s allocation, on random inputs."""
    from ..semantics.eval import evaluate

    program = _parse(ex.program, f"exercise {ex.id}")
    m = re.fullmatch(r"(\w+)\[(.*)\]", at)
    assert m is not None
    target, names = m.group(1), [s.strip() for s in m.group(2).split(",")]
    params = _params(ex)
    free = term_names(t) - set(names) - set(params)
    if free:
        return wrong(ex, f"the term uses {', '.join(sorted(free))}, which is not bound",
                     f"the index is {at}: use {', '.join(names)}; a sum binds its own variable, Σ_{{m1=1..n}}")
    for seed in (1, 2):
        inputs = _random_inputs(program, params, seed)
        result = evaluate(program, inputs, params)[target]
        store, _ = _store(program, params, inputs)
        for k in np.ndindex(*result.shape):
            env = {**params, **{n: j + 1 for n, j in zip(names, k, strict=True)}}
            try:
                got = evaluate_term(t, store, env)
            except OutOfBounds as err:
                return wrong(ex, f"the term reads out of bounds: {err.message}",
                             "each read's index must stay inside the tensor's shape: which extent does each "
                             "index range over?")
            want = float(result[k])
            if not same_values(np.array(got), np.array(want)):
                where = ", ".join(f"{n} = {j + 1}" for n, j in zip(names, k, strict=True))
                cex = "\n".join([_assignment(params), *_show_inputs(inputs),
                                 f"at {where}: your term is {show_values(got)}, [[{target}]] is {show_values(want)}"])
                return wrong(ex, f"the term does not denote {at}", "trace it: `core-teil trace`, one equation a "
                             "line; check which index each read uses", cex)
    return right(ex, f"the term equals {at} at every index (on random inputs, reference engine)")


def check_term(ex: Exercise, answer: str) -> Verdict:
    """The last line of a trace: checked by value, so every equal formula is right."""
    return _term_check(ex, parse_term(answer), ex.items[0])


def check_reads(ex: Exercise, answer: str) -> Verdict:
    """For each ``(index, tensor)`` asked, the reads of that tensor the trace ends with."""
    from ..teach.trace import Sym, loads, trace_steps

    given = items(answer)
    if len(given) != len(ex.items):
        raise TeilInputError(f"exercise {ex.id}: {ex.asks}")
    typed = _typed(_parse(ex.program, f"exercise {ex.id}"))
    for n, (text, item) in enumerate(zip(given, ex.items, strict=True), start=1):
        at, tensor = item.split(":")
        final = trace_steps(typed, at).final
        expected = {Read(r.name, tuple(str(j) if isinstance(j, Sym) else j for j in r.k))
                    for r in loads(final) if r.name == tensor}
        reads = re.findall(_READ, text)
        rest = re.sub(_READ.pattern + r"|\band\b|[,{}\s]", "", text)
        if rest or not reads:  # every word is read: trailing text is a malformed answer, not ignored
            raise TeilInputError(f"exercise {ex.id}: part {n}, {text!r}, is not a list of reads such as B[2, i, j]")
        got = {parse_read(part) for part in reads}
        if got != expected:
            return wrong(ex, f"part {n}: those are not the entries of {tensor} that {at} reads",
                         known_hint(ex, f"{n}") or f"trace {at} and read the last line")
    return right(ex, "both sets of reads are right")


def check_values(ex: Exercise, answer: str) -> Verdict:
    """Output values, computed by the reference engine on the exercise's inputs."""
    from ..semantics.eval import evaluate

    given = items(answer)
    if len(given) != len(ex.items):
        raise TeilInputError(f"exercise {ex.id}: {ex.asks}")
    inputs = {x: np.array(v, dtype=np.float64) for x, v in ex.inputs}
    outputs = evaluate(_parse(ex.program, f"exercise {ex.id}"), inputs, _params(ex))
    for n, (text, name) in enumerate(zip(given, ex.items, strict=True), start=1):
        value = parse_values(text)
        if not same_values(value, outputs[name]):
            diff = [k for k in np.ndindex(*outputs[name].shape)
                    if value.shape != outputs[name].shape
                    or not same_values(value[k], outputs[name][k])]
            where = f" (first difference at index {diff[0][0] + 1})" if diff and diff[0] else ""
            return wrong(ex, f"part {n} is not right{where}", ex.hint)
    return right(ex, "both results are right")


def check_cost(ex: Exercise, answer: str) -> Verdict:
    """Numbers of operations per entry, by the :class:`Cost` interpretation of eval.py's equations."""
    costs = statement_costs(_parse(ex.program, f"exercise {ex.id}"), _params(ex))
    given = [_count(ex, x) for x in re.split(r"[;,\s]+", answer.strip()) if x]
    if not given:
        raise TeilInputError(f"exercise {ex.id}: {ex.asks}")
    if len(given) == 1 and len(set(costs)) == 1:
        given = given * len(costs)
    if given == costs:
        return right(ex, "the count is right")
    return wrong(ex, "that is not the number of operations the equations perform", ex.hint)


def _count(ex: Exercise, text: str) -> int:
    """A number of operations: a whole number (``5`` or ``5.0``; ``5.5`` and words are malformed)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value.is_integer():
        raise TeilInputError(f"exercise {ex.id}: {text!r} is not a number of operations")
    return int(value)


def check_hypothesis(ex: Exercise, answer: str) -> Verdict:
    """A condition on the parameters equivalent to the one needed (Z3), with the refuted read otherwise."""
    import z3

    from ..lang.shapes import ShapeSolver
    from ..proving.prove import prove

    program = _parse(ex.program, f"exercise {ex.id}")
    header = "param " + ", ".join(program.params) + "\n"
    try:
        theirs = _parse(header + f"assume {answer.strip().removeprefix('assume').strip()}\n", "your hypothesis")
    except TeilSyntaxError as err:
        raise TeilInputError(f"exercise {ex.id}: not a condition ({err.message}); {ex.asks}") from None
    ours = _parse(header + f"assume {ex.expected}\n", "the hypothesis")
    unknown = sorted({t.name for c in theirs.conds for lin in (c.lhs, c.rhs) for t in lin.terms
                      if t.name is not None and t.name not in program.params})
    if unknown:  # as check does for an assume: the names must be the program's parameters
        raise TeilInputError(f"exercise {ex.id}: {', '.join(map(repr, unknown))} in the hypothesis is not a "
                             f"parameter of the program ({', '.join(program.params)})")
    solver = ShapeSolver(theirs)
    base = [v >= 1 for v in solver.vars.values()]
    c_theirs = z3.And(*[solver.cond(c) for c in theirs.conds])
    c_ours = z3.And(*[solver.cond(c) for c in ours.conds])
    s = z3.Solver()
    s.add(*base, c_theirs, z3.Not(c_ours))
    if s.check() == z3.sat:  # weaker: prove the program under it, and show the read that is out of bounds
        cond = answer.strip().removeprefix("assume").strip()
        guarded = _parse(re.sub(r"^(param .*)$", rf"\1\nassume {cond}", ex.program, count=1, flags=re.M),
                         "fig11.teil")
        report = prove(guarded)
        cex = next((o.counterexample.render() for o in report.obligations
                    if o.name == "reads-in-bounds" and o.counterexample is not None), "")
        return wrong(ex, "your hypothesis allows shapes for which the read is out of bounds",
                     "which extent must the slice index not exceed?", cex)
    s = z3.Solver()
    s.add(*base, c_ours, z3.Not(c_theirs))
    if s.check() == z3.sat:
        model = s.model()
        values = ", ".join(f"{p} = {model.eval(v, model_completion=True)}" for p, v in solver.vars.items())
        return wrong(ex, "your hypothesis is stronger than needed",
                     f"with {values} the read is in bounds, but your hypothesis excludes it")
    return right(ex, "exactly the hypothesis the read needs (Z3 proves the two equivalent)")


def check_names(ex: Exercise, answer: str) -> Verdict:
    """Names (rules, lemmas) compared without case; ``constraint='any'`` accepts a non-empty part."""
    spelled = {norm_name(n): n for n in parse_names(answer)}
    original = {norm_name(n): n for n in items(ex.expected)}
    given, expected = set(spelled), set(original)
    if given == expected or (ex.constraint == "any" and given and given <= expected):
        other = sorted(original[n] for n in expected - given)
        more = f"; {', '.join(other)} as well" if other else ""
        return right(ex, ", ".join(original[n] for n in sorted(given)) + more)
    for name in sorted(given - expected):
        hint = known_hint(ex, name)
        if hint:
            return wrong(ex, f"not {spelled[name]}", hint)
    if given < expected:
        return wrong(ex, "right so far, but the exercise asks for more", ex.hint)
    return wrong(ex, "that is not it", ex.hint)


def check_solver_answers(ex: Exercise, answer: str) -> Verdict:
    """What ``z3`` answers on each exported obligation: refuted is ``sat``, proved ``unsat``."""
    from ..proving.prove import prove
    from ..proving.report import Status

    report = prove(_parse(ex.program, ex.items[0] if ex.items else "program.teil"))
    expected = ["sat" if o.status is Status.REFUTED else "unsat" for o in report.obligations]
    given = re.findall(r"\b(?:unsat|sat|unknown)\b", answer.lower())
    if len(given) != len(expected):
        raise TeilInputError(f"exercise {ex.id}: {ex.asks} ({len(expected)} answers)")
    if given == expected:
        return right(ex, "z3 answers exactly that: sat where the obligation is refuted")
    return wrong(ex, "z3 answers otherwise on some script", ex.hint)


def _ev_proj_off_by_one(e: Any, k: Any, sem: Any) -> Any:
    """[[proj m e]](k) = [[e]]([m + 1] ++ k): wrong (chapter 4, exercise 4)."""
    from ..semantics.eval import denote

    return denote(e.arg, (sem.interp.extent(e.m) + 1, *k), sem)


@contextlib.contextmanager
def _mutated(kind: type, equation: Callable[..., Any]) -> Iterator[None]:
    from ..semantics import eval as ev

    saved = ev.EQUATIONS[kind]
    ev.EQUATIONS[kind] = equation
    try:
        yield
    finally:
        ev.EQUATIONS[kind] = saved


def check_refuted(ex: Exercise, answer: str) -> Verdict:
    """The obligations ``prove`` refutes when eval.py's ``proj`` reads the slice ``m + 1``."""
    from ..proving.prove import prove
    from ..proving.report import Status

    with _mutated(Proj, _ev_proj_off_by_one):
        report = prove(_parse(ex.program, "slice.teil"))
    expected = {o.name for o in report.obligations if o.status is Status.REFUTED}
    given = {n.lower() for n in parse_names(answer)}
    if given == expected:
        return right(ex, "prove refutes exactly that obligation: a wrong equation is caught by the certificate")
    for name in given - expected:
        hint = known_hint(ex, name)
        if hint:
            return wrong(ex, f"{name} is still proved", hint)
    return wrong(ex, "that is not what prove refutes", ex.hint)


def check_padded_shape(ex: Exercise, answer: str) -> Verdict:
    """The padded shape and the share of padding: ``[8, 16, 8]; 92%``."""
    from ..lang.shapes import round_up

    parts = items(answer)
    if len(parts) != 2:
        raise TeilInputError(f"exercise {ex.id}: {ex.asks}")
    shape = parse_shape(parts[0])
    original = parse_shape(ex.items[0])
    assert original is not None and ex.pad is not None
    padded = tuple(round_up(int(n), ex.pad) for n in original)
    if shape != padded:
        return wrong(ex, "the padded shape is not right", f"⌈d⌉ = {ex.pad} · ceil(d / {ex.pad}), extent by extent")
    text = parts[1].strip()
    share = parse_value(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    expected = 1 - math.prod(int(n) for n in original) / math.prod(padded)
    if not math.isfinite(share) or abs(share - expected) > 0.005:  # • is no share (abs(nan - x) > e is False)
        return wrong(ex, "the shape is right, the share of padding is not",
                     "padding = 1 - (original entries) / (padded entries)")
    return right(ex, "shape and share are right")


_DIVISION = re.compile(r"^\s*([^\s/]+)\s*/\s*([^\s=]+)\s*=\s*(\S+)\s*$")
SAMPLES = (0.0, 1.0, -2.0, 0.5, math.nan)


def check_division(ex: Exercise, answer: str) -> Verdict:
    """An equation ``a / b = c`` of controlled division (a name stands for every value), with a zero numerator."""
    from ..semantics.eval import ArrayInterpretation

    m = _DIVISION.match(answer)
    if m is None:
        raise TeilInputError(f"exercise {ex.id}: {ex.asks}")
    names = {x for x in m.groups() if re.fullmatch(r"[A-Za-z_]\w*", x) and x.lower() not in
             ("nan", "undef", "undefined", "inf")}

    def val(x: str, env: dict[str, float]) -> float:
        return env[x] if x in names else parse_value(x)

    for combo in _assignments(sorted(names)):
        a, b, c = (val(x, combo) for x in m.groups())
        got = float(ArrayInterpretation.arith(None, "div", a, b))  # type: ignore[arg-type]
        if not same_values(np.array(got), np.array(c)):
            where = ", ".join(f"{k} = {show_values(v)}" for k, v in combo.items())
            return wrong(ex, "that equation does not hold in controlled division (report Definition 8)",
                         counterexample=f"{where + ': ' if where else ''}{show_values(a)} / {show_values(b)} = "
                                        f"{show_values(got)}, not {show_values(c)}")
    if val(m.group(1), dict.fromkeys(names, 1.0)) != 0.0:
        return wrong(ex, "true, but not what the padding needs", "what is the numerator of p in the padding?")
    return right(ex, "that is the property: 0 divided by anything, even 0 or •, is 0")


def _assignments(names: list[str]) -> Iterator[dict[str, float]]:
    if not names:
        yield {}
        return
    for v in SAMPLES:
        for rest in _assignments(names[1:]):
            yield {names[0]: v, **rest}


_YES = {"yes": True, "y": True, "safe": True, "true": True, "no": False, "n": False, "unsafe": False,
        "false": False}


def _yes_no(ex: Exercise, answer: str, n: int) -> list[bool]:
    words = [w for w in re.findall(r"[A-Za-z]+", answer.lower()) if w in _YES]
    if len(words) != n:
        raise TeilInputError(f"exercise {ex.id}: {ex.asks}")
    return [_YES[w] for w in words]


def check_padding_safe(ex: Exercise, answer: str) -> Verdict:
    """Whether each program's padded run simulates the original (``prove --pad``), guard or none."""
    from ..proving.prove import prove

    given = _yes_no(ex, answer, len(ex.items))
    for n, (source, said) in enumerate(zip(ex.items, given, strict=True), start=1):
        program = _parse(source, f"part {n}")
        actual = prove(program, None, pad=ex.pad).ok
        if actual != said:
            op = format_expr(program.stmts[0].expr).split()[0]
            return wrong(ex, f"part {n} ({op}) is not right", known_hint(ex, op))
    return right(ex, "both are safe: only expa creates a dimension whose values do not come from a padded store")


def check_guard_equation(ex: Exercise, answer: str) -> Verdict:
    """The equation whose step puts the ``if ... else 0`` into the padded trace."""
    from .trace import Guard, trace_steps

    def has_guard(t: Any) -> bool:
        stack = [t]
        while stack:
            u = stack.pop()
            if isinstance(u, Guard):
                return True
            stack.extend(getattr(u, f) for f in ("a", "b", "body") if hasattr(u, f))
        return False

    typed = _typed(_parse(ex.program, f"exercise {ex.id}"), _params(ex))
    trace = trace_steps(typed, ex.items[0], pad=ex.pad)
    expected = next(s.equation for s in trace.steps if has_guard(s.term))
    given = parse_names(answer)
    if len(given) != 1:
        raise TeilInputError(f"exercise {ex.id}: {ex.asks}")
    if norm_name(given[0]) == norm_name(expected):
        return right(ex, f"{expected} guards the new dimension of expa: the guard 4 <= 3 is false")
    return wrong(ex, f"{given[0]} does not produce that 0", known_hint(ex, given[0]))


def check_equivalent(ex: Exercise, answer: str) -> Verdict:
    """Whether two programs are equivalent, as ``core-teil equiv`` decides it."""
    from ..proving.equiv import equiv

    (said,) = _yes_no(ex, answer, 1)
    actual = equiv(_parse(ex.items[0], "lhs.teil"), _parse(ex.items[1], "rhs.teil")).ok
    if said == actual:
        return right(ex, "core-teil equiv agrees")
    return wrong(ex, "core-teil equiv says otherwise", ex.hint)


CHECKERS: dict[Kind, Callable[[Exercise, str], Verdict]] = {
    Kind.SHAPES: check_shapes, Kind.PROGRAM: check_program_answer, Kind.EXPRESSION: check_expression,
    Kind.RULE_AND_VALUES: check_rule_and_values, Kind.RULE_AND_PREMISE: check_rule_and_premise,
    Kind.JUDGEMENT: check_judgement, Kind.RULES: check_rules, Kind.ASSUME: check_assume, Kind.TERM: check_term,
    Kind.READS: check_reads, Kind.VALUES: check_values, Kind.COST: check_cost, Kind.HYPOTHESIS: check_hypothesis,
    Kind.NAMES: check_names, Kind.SOLVER_ANSWERS: check_solver_answers, Kind.REFUTED: check_refuted,
    Kind.PADDED_SHAPE: check_padded_shape, Kind.DIVISION: check_division, Kind.PADDING_SAFE: check_padding_safe,
    Kind.GUARD_EQUATION: check_guard_equation, Kind.EQUIVALENT: check_equivalent,
}


# --------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------


def read_answer(ex: Exercise, answer: str | None) -> tuple[str, str]:
    """The answer's text and where it came from: a file if ``answer`` names one, else the text itself."""
    if answer is None or not answer.strip():
        raise TeilInputError(f"exercise {ex.id} needs an answer: {ex.asks}")
    if os.path.isdir(answer):
        raise TeilInputError(f"{answer}: is a directory, not an answer file (exercise {ex.id} takes {ex.asks})")
    if os.path.isfile(answer):
        try:
            with open(answer, encoding="utf-8") as fh:
                return fh.read(), answer
        except (OSError, UnicodeDecodeError) as exc:
            raise TeilInputError(f"{answer}: cannot read the answer ({exc})") from None
    if re.fullmatch(r"[\w./-]+\.(teil|txt)", answer.strip()):
        raise TeilInputError(f"{answer}: no such file (exercise {ex.id} takes {ex.asks})")
    return answer, "<answer>"


def find(exercise_id: str) -> Exercise:
    ex = BY_ID.get(exercise_id.strip())
    if ex is None:
        raise TeilInputError(f"no exercise {exercise_id!r}: the exercises are "
                             f"{', '.join(BY_ID)} (`core-teil exercise list`)")
    return ex


_PROGRAM_TEXT = re.compile(r"^[ \t]*(lang\s+(core|full)\b|param\s|((input|output)\s+)?alloc\s)", re.M)


def check_answer(exercise_id: str, answer: str | None) -> Verdict:
    """``core-teil exercise ID ANSWER``: right, or wrong with a hint (raises TeilInputError on bad input)."""
    ex = find(exercise_id)
    text, origin = read_answer(ex, answer)
    if ex.kind is not Kind.PROGRAM and _PROGRAM_TEXT.search(text):
        where = f"{origin} is a TeIL program" if origin != "<answer>" else "the answer is a TeIL program"
        raise TeilInputError(f"exercise {ex.id} takes {ex.asks}; {where}")
    try:
        if ex.kind is Kind.PROGRAM:  # errors in the student's file name the file
            return check_program_answer(ex, text, origin if origin != "<answer>" else "your program")
        return CHECKERS[ex.kind](ex, text)
    except TeilSyntaxError as err:
        if err.source is None:
            err.source = text if ex.kind is Kind.PROGRAM else None
        raise
    except TeilInputError as err:  # a malformed answer: say which exercise, and the form it takes
        if not err.message.startswith(("exercise ", origin)):
            err.message = f"exercise {ex.id}: {err.message} (the answer: {ex.asks})"
            err.args = (err.message,)
        raise


def listing() -> str:
    """``core-teil exercise list``: every exercise, and the form its answer takes."""
    lines = []
    for ex in EXERCISES:
        lines.append(f"{ex.id:>4}  {ex.title}: {ex.asks}")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# The exercises (docs/course/, section "Exercises" of each chapter)
# --------------------------------------------------------------------------

_FIG11 = """lang full
param k, m, n
{assume}input alloc A : [m, n]
input alloc B : [k, m, n]
output alloc C : [m, n]
output alloc D : [k, m, n]
C = add A (proj 1 2 B)
D = add (expa 1 k A) B
"""

_TVM_BAD = """lang full
param m, n, h
assume {answer}
input alloc A : [m, h]
input alloc B : [n, h]
output alloc C : [m, n]
C = red 1 (diag 1 3 (prod A B))
"""

_TACO_B = """lang full
param l, m, n
input alloc B : [l, m, n]
input alloc C : [l]
output alloc A : [l, m]
A = red 3 (diag 1 4 (prod B C))
"""

EXERCISES: tuple[Exercise, ...] = (
    # -- chapter 1 ---------------------------------------------------------
    Exercise(
        "1.1", 1, "shapes", Kind.SHAPES,
        "the five shapes in order, separated by ';', each like [2, 3] or 'none' when there is none",
        program="lang core\nalloc A : [2, 3]\nalloc B : [3, 4]\nalloc v : [3]\nalloc s : []\n",
        items=("prod A B", "transp 2 (prod A B)", "contr (transp 1 (prod A v))", "expa 5 s", "proj 2 (transp 1 A)")),
    Exercise(
        "1.2", 1, "matrix-vector product", Kind.PROGRAM,
        "a lang core program (a .teil file) with param n, p; input alloc M : [n, p]; input alloc x : [p]; "
        "output alloc y : [n]",
        program="lang core\nparam n, p\ninput alloc M : [n, p]\ninput alloc x : [p]\noutput alloc y : [n]\n"
                "y = contr (transp 2 (transp 1 (prod M x)))\n",
        dialect="core", hint="y[i] sums M[i, j] · x[j] over j: bring the two p dimensions of prod M x to the front"),
    Exercise(
        "1.3", 1, "transp 1 3 with adjacent transpositions", Kind.EXPRESSION,
        "a Core-TeIL expression over u : [2, 3, 4] using transp i only, e.g. 'transp 1 (transp 2 u)'",
        program="lang core\ninput alloc u : [2, 3, 4]\noutput alloc v : [4, 3, 2]\nv = {answer}\n",
        expected="lang full\ninput alloc u : [2, 3, 4]\noutput alloc v : [4, 3, 2]\nv = transp 1 3 u\n",
        constraint="transp-only", hint="swap positions 1 and 3 of [a, b, c] in steps that swap neighbours"),
    Exercise(
        "1.4", 1, "fig11 without its assume", Kind.RULE_AND_VALUES,
        "the rule that rejects the program and the value of k, like 'T-Rule k = 5'",
        program=_FIG11.format(assume=""), items=("k",),
        hints=(("T-Elem", "T-Elem compares the shapes of add's operands; which operator needs a slice to exist?"),
               ("OK-Stmt", "the statements' shapes agree; which operator's premise mentions k?"))),
    # -- chapter 2 ---------------------------------------------------------
    Exercise(
        "2.1", 2, "a derivation that fails", Kind.RULE_AND_PREMISE,
        "the rule where the derivation stops and its failing premise, like 'T-Rule a == b'",
        program="lang core\nalloc A : [2, 3]\nalloc v : [3]\nalloc s : [3]\ns = contr (transp 1 (prod A v))\n",
        hints=(("T-Transp", "T-Transp's premise 1 <= 1 < 3 holds; look one rule further down"),
               ("T-Prod", "T-Prod has no premise besides its operands' judgements"),
               ("OK-Stmt", "the derivation stops before OK-Stmt is reached: which rule's premise fails first?"))),
    Exercise(
        "2.2", 2, "red (diag A) and contr A", Kind.JUDGEMENT,
        "the judgement of the first derivation that the second lacks, as 'EXPR : SHAPE'",
        program="lang core\nparam n\nalloc A : [n, n]\nalloc s : []\nalloc t : []\ns = red (diag A)\nt = contr A\n",
        expected="diag A : [n]",
        hints=(("red (diag A)", "the root has a counterpart: contr A : [] concludes the second derivation"),
               ("A", "the leaf A : [n, n] is in both derivations"))),
    Exercise(
        "2.3", 2, "transp 1 3 and its lowering", Kind.RULES,
        "the rules of the Core-TeIL derivation from the statement down, e.g. 'OK-Stmt T-Red T-Var'",
        program="lang full\nalloc u : [2, 3, 4]\nalloc v : [4, 3, 2]\nv = transp 1 3 u\n", constraint="lowered"),
    Exercise(
        "2.4", 2, "an assume for Fig. 3a", Kind.ASSUME,
        "a condition over m, n, h (what follows `assume`), e.g. 'm <= n'",
        program=_TVM_BAD),
    # -- chapter 3 ---------------------------------------------------------
    Exercise(
        "3.1", 3, "the trace of taco_b", Kind.TERM,
        "the last line of the trace of A[i,j], e.g. 'Σ_{m1=1..n} (B[i, j, m1] · C[j])' "
        "(ASCII: sum_{k=1..n} B[i,j,k] * C[j])",
        program=_TACO_B, items=("A[i,j]",), params=(("l", 2), ("m", 3), ("n", 4))),
    Exercise(
        "3.2", 3, "reads of Fig. 11", Kind.READS,
        "the entries of B that C[i,j] reads; the entries of A that D[s,i,j] reads, like 'B[1, i, j]; A[s, j]'",
        program=_FIG11.format(assume="assume k >= 2\n"), items=("C[i,j]:B", "D[s,i,j]:A"),
        hints=(("2", "expa 1 k ignores the new index s: which index of A is read?"),)),
    Exercise(
        "3.3", 3, "controlled division", Kind.VALUES,
        "div x z; mul x (div z z), each a vector like [1, •, 0]",
        program="input alloc x : [3]\ninput alloc z : [3]\noutput alloc q : [3]\noutput alloc r : [3]\n"
                "q = div x z\nr = mul x (div z z)\n",
        items=("q", "r"), inputs=(("x", (2.0, 0.0, 0.0)), ("z", (0.0, 0.0, 1.0))),
        hint="controlled division (report Definition 8): v / 0 = • for v != 0, and 0 / 0 = 0"),
    Exercise(
        "3.4", 3, "a cost interpretation", Kind.COST,
        "the number of arithmetic operations (additions and multiplications together) of one entry of C "
        "with m = 3",
        program="lang full\nparam l, m, n\nalloc A : [l, m]\nalloc B : [m, n]\nalloc C : [l, n]\n"
                "C = red 2 (diag 2 3 (prod A B))\n",
        params=(("l", 2), ("m", 3), ("n", 4)),
        hint="one multiplication per term of the sum, and one addition fewer than there are terms"),
    # -- chapter 4 ---------------------------------------------------------
    Exercise(
        "4.1", 4, "the hypothesis of B[2, i, j]", Kind.HYPOTHESIS,
        "a condition over k, m, n (what follows `assume`), e.g. 'k >= 1'",
        program=_FIG11.format(assume=""), expected="k >= 2"),
    Exercise(
        "4.2", 4, "writes-in-domain", Kind.NAMES,
        "the rule of the semantics that makes writes-in-domain hold, e.g. 'T-Var'",
        expected="St-Stmt",
        hints=(("OK-Stmt", "OK-Stmt is the hypothesis; which rule of the dynamic semantics says where "
                           "x = e writes?"),
               ("St-Seq", "St-Seq only runs statements in order; which rule writes one statement's target?")),
        hint="the typing rules say nothing about writes: look at the rules of section 3.2 (Fig. 9)"),
    Exercise(
        "4.3", 4, "z3 on exported obligations", Kind.SOLVER_ANSWERS,
        "z3's answer on each script of --smt2-dir, in file order, e.g. 'unsat unsat unsat'",
        program=_TVM_BAD.replace("assume {answer}\n", ""), items=("tvm_fig3a_bad.teil",),
        hint="(check-sat) is unsat exactly when the obligation holds; which of them are refuted?"),
    Exercise(
        "4.4", 4, "an off-by-one proj", Kind.REFUTED,
        "the obligation(s) that prove would refute, e.g. 'typing'",
        program="param k, m\nassume k >= 2\ninput alloc B : [k, m]\noutput alloc C : [m]\nC = proj 2 B\n",
        hints=(("typing", "typing uses the rules of chapter 2, which do not change: proj still type-checks"),
               ("writes-in-domain", "St-Stmt still writes exactly C's domain; what changes is a read")),
        hint="with k = 2, which entry of B would C[1] read?"),
    Exercise(
        "4.5", 4, "a diag wrong above rank 7", Kind.NAMES,
        "the lemma that notices, and the smallest rank of X at which the read is wrong, like 'Lemma-Name, 9'",
        expected="WD-Diag (all ranks); 8",
        hints=(("WD-Diag", "WD-Diag instantiates ranks 0..6, where the equation is right: which lemma runs "
                           "every rank at once?"),
               ("7", "at rank 7 the slice k[1:6] keeps every index: count the indices read at rank 8")),
        hint="`make verify` has a lemma per operator proved over shapes of symbolic rank"),
    # -- chapter 5 ---------------------------------------------------------
    Exercise(
        "5.1", 5, "a padded shape", Kind.PADDED_SHAPE,
        "the padded shape and the share of padding, like '[8, 8, 8]; 50%'", items=("[5, 16, 1]",), pad=8),
    Exercise(
        "5.2", 5, "normalize, padded", Kind.DIVISION,
        "the property of controlled division the padded run uses, as an equation like '1 / 0 = •' "
        "(a name such as s stands for every value)"),
    Exercise(
        "5.3", 5, "proj and diag under padding", Kind.PADDING_SAFE,
        "is proj safe without a guard; is diag (two answers, yes or no)",
        items=("param n\nassume n >= 2\ninput alloc X : [n, 3]\noutput alloc Y : [3]\nY = proj 2 X\n",
               "param n\ninput alloc X : [n, n, 3]\noutput alloc Y : [n, 3]\nY = diag X\n"),
        pad=4,
        hints=(("diag", "if j is in the padding of the first dimension, it is in the padding of the second: "
                        "T-Diag made the extents, and so their rounded versions, equal"),
               ("proj", "proj reads the fixed slice m <= n, inside the original domain; it adds no loop"))),
    Exercise(
        "5.4", 5, "where the 0 comes from", Kind.GUARD_EQUATION,
        "the name of the equation that produces the 0, e.g. 'ev_red'",
        program=_FIG11.format(assume="assume k >= 2\n"), items=("D[4,1,1]",),
        params=(("k", 3), ("m", 1), ("n", 1)), pad=4,
        hints=(("ev_var", "B[4, 1, 1] is 0 by the padded store (d-pad-var); which step writes "
                          "'if 4 <= 3 then ... else 0'?"),
               ("d-pad-var", "that explains B[4, 1, 1]; the exercise asks about the other term, the if")),
        hint="look for the step that introduces 'if 4 <= 3 then ... else 0'"),
    # -- chapter 6 ---------------------------------------------------------
    Exercise(
        "6.1", 6, "transp is an involution", Kind.TERM,
        "the last line of the trace of B[i,j] for B = transp 1 2 (transp 1 2 A), e.g. 'A[j, i]'",
        program="lang full\nparam n, p\ninput alloc A : [n, p]\noutput alloc B : [n, p]\n"
                "B = transp 1 2 (transp 1 2 A)\n",
        items=("B[i,j]",), params=(("n", 2), ("p", 3))),
    Exercise(
        "6.2", 6, "red 1 after transp 1 2", Kind.EQUIVALENT,
        "yes or no: is red 1 (transp 1 2 e) ≅ red 2 e for e : [n, p, q]",
        items=("lang full\nparam n, p, q\ninput alloc E : [n, p, q]\noutput alloc R : [n, q]\n"
               "R = red 1 (transp 1 2 E)\n",
               "lang full\nparam n, p, q\ninput alloc E : [n, p, q]\noutput alloc R : [n, q]\nR = red 2 E\n"),
        hint="trace both at R[i, j]: which dimension of E does each sum run over?"),
    Exercise(
        "6.3", 6, "equation (6)", Kind.TERM,
        "the last line of the trace of X[i,j] for X = contr 2 3 (prod B C), e.g. 'Σ_{m1=1..m} B[i, m1]'",
        program="lang full\nparam l, m, n\ninput alloc B : [l, m]\ninput alloc C : [m, n]\n"
                "output alloc X : [l, n]\nX = contr 2 3 (prod B C)\n",
        items=("X[i,j]",), params=(("l", 2), ("m", 3), ("n", 4))),
    Exercise(
        "6.4", 6, "the cost of contr", Kind.COST,
        "the number of operations of one entry of C for each program, with m = 5, like '7; 8'",
        program="lang full\nparam l, m, n\nalloc A : [l, m]\nalloc B : [m, n]\nalloc C : [l, n]\n"
                "C = red 2 (diag 2 3 (prod A B))\nC = contr 2 3 (prod A B)\n",
        params=(("l", 2), ("m", 5), ("n", 3)),
        hint="contr 2 3 is red 2 (diag 2 3 ...) (equation (6)): count the products and the additions of the sum"),
    # -- chapter 7 ---------------------------------------------------------
    Exercise(
        "7.1", 7, "TACO's matrix multiplication", Kind.PROGRAM,
        "a lang full program with one contr: param l, m, n; input alloc B : [l, m]; input alloc C : [m, n]; "
        "output alloc A : [l, n]",
        program="lang full\nparam l, m, n\ninput alloc B : [l, m]\ninput alloc C : [m, n]\noutput alloc A : [l, n]\n"
                "A = contr 2 3 (prod B C)\n",
        constraint="one-contr", hint="prod B C has shape [l, m, m, n]: which two dimensions are contracted?"),
    Exercise(
        "7.2", 7, "Fig. 10a (c) as TACO meant it", Kind.PROGRAM,
        "a lang full program: param l, m, n; input alloc B : [n, m, l]; input alloc C : [l]; "
        "output alloc A : [l, m]",
        program="lang full\nparam l, m, n\ninput alloc B : [n, m, l]\ninput alloc C : [l]\n"
                "output alloc A : [l, m]\nA = transp 1 2 (red 1 (diag 3 4 (prod B C)))\n",
        hint="the paper's expression has type [m, l]"),
    Exercise(
        "7.3", 7, "no sum over min(m, n)", Kind.NAMES,
        "the typing rule(s) that forbid pairing A's first index with B's when m and n may differ, "
        "e.g. 'T-Elem'",
        expected="T-Diag; T-Contr", constraint="any",
        hints=(("T-Red", "T-Red sums over a whole dimension and has no premise relating two extents"),
               ("T-Red+", "T-Red+ sums over a whole dimension and has no premise relating two extents"),
               ("T-Proj", "proj keeps one slice; it pairs no indices")),
        hint="pairing two indices is a diagonal (or a contraction); what do those rules demand?"),
)

BY_ID: dict[str, Exercise] = {ex.id: ex for ex in EXERCISES}

__all__ = ["BY_ID", "CHECKERS", "EXERCISES", "Exercise", "Kind", "Mark", "Verdict", "check_answer", "listing"]
