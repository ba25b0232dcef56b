"""Obligations as SMT-LIB2 scripts, and cvc5 as an independent second opinion.

An obligation's script declares what it uses (the ``Value`` datatype of
report Definition 4, Int constants for parameters and indices, one
uninterpreted function per memory and per summation), asserts its
hypotheses and its negated goal, and ends in ``(check-sat)``: the answer is
``unsat`` exactly when the obligation holds.  Only SMT-LIB 2.6 is used
(logic ``ALL``; no Z3 extensions such as multi-index arrays or lambdas), so
any solver can re-check a certificate; tests read the scripts back with a
plain ``z3.Solver().from_file`` and with cvc5.

pysmt is not used: its parser has no algebraic datatypes, and the text
itself is already solver-agnostic.  cvc5 is driven through its own Python
API on exactly this text, so ``--solver cvc5`` checks what was exported.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from pathlib import Path

import z3

from ..semantics.eval import SemanticsBug
from ..semantics.symbolic import subterms
from .obligations import Obligation

#: A nullary and/or, which Z3 prints as a bare symbol: not SMT-LIB2, and other solvers reject it.
NULLARY_CONNECTIVE = re.compile(r"(?<=\s)(and|or)(?=[\s)])")


def _renamed(assertions: tuple[z3.BoolRef, ...]) -> tuple[z3.BoolRef, ...]:
    """``assertions`` with every uninterpreted symbol whose name has no ``!`` renamed
    ``name!``: the same obligation up to renaming, in which no declared symbol can be a
    solver's own.  A parameter or an allocation may be called ``or``, ``true``, ``let`` or
    ``sqrt`` (none is a word of the language); Z3 printed ``(declare-fun true () Int)``, which
    no solver reads back, and cvc5 refuses dozens of such names in logic ``ALL`` (reserved
    words, theory symbols, its extensions).  No SMT-LIB symbol of any theory contains ``!``,
    no name of the language does, and the internal names have ``!`` inside, never at the
    end, so ``name!`` is fresh (review r26b).  Renaming is by name: where a parameter shares
    its name with an internal symbol (``real_mul``, ``mu_A``), only the first met is renamed,
    and the other keeps a name that is no solver's own either (review r26c)."""
    found: dict[str, z3.FuncDeclRef] = {}
    for t in subterms(assertions):  # under binders too (forall, lambda), each shared term once
        if z3.is_app(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED and "!" not in t.decl().name():
            found.setdefault(t.decl().name(), t.decl())
    if not found:
        return assertions
    consts, funs = [], []
    for name, d in found.items():
        sorts = [d.domain(i) for i in range(d.arity())]
        new = z3.Function(f"{name}!", *sorts, d.range())
        if d.arity() == 0:
            consts.append((d(), new()))
        else:
            funs.append((d, new(*[z3.Var(i, s) for i, s in enumerate(sorts)])))
    out = [z3.substitute(f, *consts) if consts else f for f in assertions]
    return tuple(z3.substitute_funs(f, *funs) if funs else f for f in out)


def script(ob: Obligation, comments: dict[str, str] | None = None) -> str:
    """The self-contained SMT-LIB2 script of ``ob``; ``unsat`` iff it holds."""
    s = z3.Solver()
    s.add(*_renamed(ob.assertions()))
    head = [f"; {k}: {v}" for k, v in (comments or {}).items()]
    head.append("; unsat <=> the obligation holds")
    body = s.sexpr()
    if NULLARY_CONNECTIVE.search(body):
        raise SemanticsBug(f"obligation {ob.label} would export a nullary and/or, which is not SMT-LIB2")
    return "\n".join(head) + "\n(set-logic ALL)\n" + body + "(check-sat)\n"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def recheck_with_z3(path: str | Path) -> str:
    """What a plain Z3 answers on an exported script (``sat``/``unsat``/``unknown``)."""
    s = z3.Solver()
    s.from_file(str(path))
    return str(s.check())


# --------------------------------------------------------------------------
# cvc5
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    status: str  # "sat" | "unsat" | "unknown"
    seconds: float
    reason: str = ""


def cvc5_version() -> str:
    try:
        import cvc5
    except ImportError:
        return "not installed"
    v = cvc5.Solver(cvc5.TermManager()).getVersion()
    return (v.decode() if isinstance(v, bytes) else str(v)).removeprefix("cvc5 ").split()[0]


def check_cvc5(text: str, rlimit: int | None = None, timeout: float | None = None) -> Answer:
    """Run cvc5 on an SMT-LIB2 script; resource- and optionally time-limited."""
    import cvc5

    tm = cvc5.TermManager()
    solver = cvc5.Solver(tm)
    solver.setOption("seed", "42")
    if rlimit is not None:
        solver.setOption("rlimit-per", str(rlimit))
    if timeout is not None:
        solver.setOption("tlimit-per", str(int(timeout * 1000)))
    parser = cvc5.InputParser(solver)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "obligation")
    sm = parser.getSymbolManager()
    answer = "unknown"
    start = time.perf_counter()
    try:
        while True:
            cmd = parser.nextCommand()
            if cmd.isNull():
                break
            out = cmd.invoke(solver, sm).strip()
            if out in ("sat", "unsat", "unknown"):
                answer = out
    except RuntimeError as exc:  # cvc5 raises for parse errors and interrupted checks alike
        return Answer("unknown", time.perf_counter() - start, f"cvc5: {exc}")
    reason = "" if answer != "unknown" else "cvc5 answered unknown (resource or time limit, or incomplete theory)"
    return Answer(answer, time.perf_counter() - start, reason)
