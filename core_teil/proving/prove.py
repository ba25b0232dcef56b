"""``core-teil prove``: generate a program's obligations and discharge them.

:func:`prove` is the public entry point (SPEC.md section 6).  Each
obligation of :mod:`core_teil.proving.obligations` is decided by Z3 (or cvc5) with a
fixed seed under a resource limit: ``unsat`` means proved; ``sat`` means
refuted, and the model is shrunk and explained (:mod:`core_teil.proving.counterexample`)
-- for encodings with uninterpreted sums only after the reference engine
has confirmed it on concrete values, an unconfirmed model being reported as
``unknown``; anything else is ``unknown``.  A proved obligation is also
checked for vacuity (its hypotheses alone must be satisfiable).

Limits.  Every check runs under Z3's ``rlimit`` (deterministic: the same
verdict on every machine).  ``timeout=S`` sets that limit to
``S * RLIMIT_PER_SECOND`` (measured on the project machine: Z3 spends 2.6 M
to 9 M units per second) and adds a wall-clock limit of ``S`` seconds per
check as an upper bound.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import z3

from ..errors import TeilInputError, checked_call
from ..lang.syntax import Program, expect_program
from ..semantics.inputs import check_pad, check_params
from .counterexample import explain, shrink
from .limits import RLIMIT, RLIMIT_PER_SECOND, Z3_UINT_MAX, check_timeout, rlimit_for  # re-exported (limits.py)
from .obligations import Obligation, generate
from .replay import Witness
from .report import ObligationResult, Report, Status
from .smtlib import check_cvc5, cvc5_version, digest, script, write

SEED = 42
SOLVERS = ("z3", "cvc5")


def z3_solver(rlimit: int, timeout: float | None, ctx: z3.Context | None = None) -> z3.Solver:
    s = z3.Solver(ctx=ctx)
    s.set("random_seed", SEED)
    s.set("rlimit", min(Z3_UINT_MAX, max(1, rlimit)))
    if timeout is not None:
        s.set("timeout", min(Z3_UINT_MAX, max(1, int(timeout * 1000))))
    return s


def decide(assertions: Sequence[z3.BoolRef], rlimit: int, timeout: float | None,
           ctx: z3.Context) -> tuple[str, str]:
    """``sat``/``unsat``/``unknown`` and the reason of an unknown, decided in ``ctx``, a Z3
    context that holds only this proof's obligations: in the shared context the solver's
    choices follow the order in which the process built its terms, so the same obligation
    could be proved after one history and run out of rlimit after another (make verify's
    laws did, 1 run in 9).  Only the program, its parameters and the seed decide now."""
    s = z3_solver(rlimit, timeout, ctx)
    s.add(*(a.translate(ctx) for a in assertions))
    r = s.check()
    return str(r), (s.reason_unknown() if r == z3.unknown else "")


def program_hash(program: Program, source: str | None) -> str:
    try:
        from ..lang.printer import format_program

        text = format_program(program)
    except Exception:  # the printer refuses only trees the parser cannot produce
        text = source or repr(program)
    return hashlib.sha256(text.encode()).hexdigest()


#: The names ``prove`` gives its scripts: ``NN-<label>.smt2``.
SCRIPT_NAME = re.compile(r"^\d{2,}-[A-Za-z0-9_.-]+\.smt2$")


def clear_scripts(directory: Path) -> None:
    """Remove the scripts of an earlier run, so that the directory holds exactly this run's obligations."""
    if directory.is_dir():
        for old in directory.iterdir():
            if old.is_file() and SCRIPT_NAME.match(old.name):
                old.unlink()


def _is_proof_cache(cache: Any) -> bool:
    from .cache import ProofCache

    return isinstance(cache, ProofCache)


@checked_call
def prove(program: Program, params: dict[str, int] | None = None, pad: int | None = None, *,
          timeout: float | None = None, solver: str = "z3", smt2_dir: str | Path | None = None,
          source: str | None = None, cache: Any = None) -> Report:
    """Generate and discharge every obligation of ``program`` (SPEC.md section 6).

    ``params`` fixes some shape parameters (the others stay symbolic);
    ``pad=M`` adds the padding obligations; ``smt2_dir`` receives one
    SMT-LIB2 script per obligation; ``source`` (the program text) lets
    counterexamples show the offending line; ``cache`` (a
    :class:`~core_teil.proving.cache.ProofCache`) serves and stores ``proved`` verdicts by
    the obligation's script."""
    pad = check_pad(pad)
    params = check_params(params, expect_program(program))
    if solver not in SOLVERS:
        raise TeilInputError(f"solver={solver!r}: expected one of {', '.join(map(repr, SOLVERS))}")
    if smt2_dir is not None and not isinstance(smt2_dir, str | os.PathLike):
        raise TeilInputError(f"smt2_dir={smt2_dir!r}: expected a directory's path")
    if cache is not None and not _is_proof_cache(cache):
        raise TeilInputError(f"cache={cache!r}: expected a core_teil.proving.cache.ProofCache "
                             f"(the CLI's --cache DIR is ProofCache(DIR))")
    rlimit = rlimit_for(timeout)
    if source is None:
        source = _read_source(program.file)
    start = time.perf_counter()
    generated = generate(program, params, pad)
    results = []
    vacuity: dict[tuple[int, ...], str] = {}
    ctx = z3.Context()  # one per proof: creating one per obligation doubled helm's proof time
    # printing a script costs as much as solving it; the cache's key is the script
    exported = smt2_dir is not None or solver == "cvc5" or cache is not None
    version = z3.get_version_string() if solver == "z3" else cvc5_version()
    if smt2_dir is not None:
        try:
            Path(smt2_dir).mkdir(parents=True, exist_ok=True)
            clear_scripts(Path(smt2_dir))
        except OSError as exc:
            raise TeilInputError(f"{smt2_dir}: cannot use it as a directory for the SMT-LIB2 scripts "
                                 f"({exc.strerror})") from None
    for number, ob in enumerate(generated.obligations, 1):
        text = script(ob, _comments(program, ob, pad)) if ob.verdict is None and exported else None
        path = None
        if smt2_dir is not None and text is not None:
            path = Path(smt2_dir) / f"{number:02d}-{ob.label}.smt2"
            write(path, text)
        if cache is not None and text is not None:
            from functools import partial

            from .cache import Solver

            decide_now = partial(discharge, ob, number, solver, rlimit, timeout, text, source, vacuity, ctx)
            result = cache.discharge(ob, number, text, Solver(solver, version, rlimit), decide_now)
        else:
            result = discharge(ob, number, solver, rlimit, timeout, text, source, vacuity, ctx)
        results.append(_with_file(result, text, path))
    shapes = generated.typed.solver if generated.typed is not None else None
    given = dict(shapes.values) if shapes is not None else dict(params or {})
    symbolic = tuple(p for p in program.params if p not in given)
    from .. import __version__

    return Report(program.file, program_hash(program, source), given, symbolic, pad, solver, version,
                  __version__, rlimit, timeout, tuple(results), time.perf_counter() - start)


def _read_source(file: str) -> str | None:
    """The program's text for counterexamples to quote, read as ``ct.load`` read it (or none)."""
    from ..lang.parser import read_source

    try:
        return read_source(file)
    except TeilInputError:
        return None


def _comments(program: Program, ob: Obligation, pad: int | None) -> dict[str, str]:
    out = {"program": program.file, "obligation": ob.label, "lemma": ob.lemma}
    if ob.stmt is not None:
        from ..lang.printer import format_stmt

        out["statement"] = f"{ob.stmt_no}: {format_stmt(ob.stmt)}"
    if pad is not None:
        out["pad"] = str(pad)
    return out


def _with_file(result: ObligationResult, text: str | None, path: Path | None) -> ObligationResult:
    from dataclasses import replace

    return replace(result, digest=digest(text) if text else "", smt2=str(path) if path else None)


# --------------------------------------------------------------------------
# Discharging one obligation
# --------------------------------------------------------------------------


def discharge(ob: Obligation, number: int, solver: str, rlimit: int, timeout: float | None,
              text: str | None, source: str | None,
              vacuity: dict[tuple[int, ...], str] | None = None,
              ctx: z3.Context | None = None) -> ObligationResult:
    """Decide one obligation; explain a refutation; say why an unknown is unknown."""
    from ..lang.printer import format_stmt

    stmt_text = format_stmt(ob.stmt) if ob.stmt is not None else ""

    def result(status: Status, seconds: float, **kw: Any) -> ObligationResult:
        return ObligationResult(number, ob.name, ob.lemma, ob.stmt_no, stmt_text, status, seconds,
                                label=ob.label, **kw)

    if ob.verdict is not None:
        status = Status(ob.verdict)
        cex = explain(ob, None, source) if status is Status.REFUTED else None
        return result(status, 0.0, counterexample=cex, reason=ob.cases[0].detail if ob.cases else "")
    start = time.perf_counter()
    ctx = ctx or z3.Context()
    s = z3_solver(rlimit, timeout)
    s.add(*ob.assertions())
    if solver == "cvc5":
        answer = check_cvc5(text if text is not None else script(ob), rlimit, timeout)
        verdict, reason = answer.status, answer.reason
    else:
        verdict, reason = decide(s.assertions(), rlimit, timeout, ctx)
    if verdict == "unsat":
        key = tuple(h.get_id() for h in ob.hypotheses)
        cache = vacuity if vacuity is not None else {}
        if key not in cache:
            cache[key] = _vacuous(ob, rlimit, timeout, ctx)
        vacuous = cache[key]
        seconds = time.perf_counter() - start
        if vacuous:
            return result(Status.UNKNOWN, seconds, reason=vacuous)
        return result(Status.PROVED, seconds)
    if verdict != "sat":
        return result(Status.UNKNOWN, time.perf_counter() - start, reason=_unknown_reason(reason, rlimit))
    # the model to explain is found again in the shared context, where the obligation's terms live
    if s.check() != z3.sat:
        return result(Status.UNKNOWN, time.perf_counter() - start,
                      reason="cvc5 answered sat, but z3 finds no model to show (solvers disagree)"
                      if solver == "cvc5" else "sat, but the model could not be found again to show it")
    return refutation(ob, s, result, start, source)


def refutation(ob: Obligation, s: z3.Solver, result: Any, start: float, source: str | None) -> ObligationResult:
    """Shrink the model, confirm it with the reference engine where the encoding needs that, explain it."""
    free = [v for p, v in ob.shapes.vars.items() if p not in ob.shapes.values]
    attempts = [[], [v >= 2 for v in free]] if ob.confirm is not None and free else [[]]
    outcome = None
    for extra in attempts:  # extents of 1 can hide a failure from the replay (every sum has one term)
        s.push()
        s.add(*extra)
        if s.check() == z3.sat:
            outcome = _explained(ob, s, free, source)
        s.pop()
        if outcome is not None and outcome[0] is Status.REFUTED:
            break
    if outcome is None:
        return result(Status.UNKNOWN, time.perf_counter() - start, reason="the solver's model was lost")
    status, detail = outcome
    if status is Status.REFUTED:
        return result(status, time.perf_counter() - start, counterexample=detail)
    return result(status, time.perf_counter() - start, reason=detail)


def _explained(ob: Obligation, s: z3.Solver, free: list[z3.ArithRef],
               source: str | None) -> tuple[Status, Any]:
    model, case = s.model(), None
    for c in ob.cases:  # the first case that can fail (cases come root cause first)
        s.push()
        s.add(c.condition)
        if s.check() == z3.sat:
            model, case = shrink(s, s.model(), free, [v for _, v in ob.indices]), c
        s.pop()
        if case is not None:
            break
    witness: Witness | None = None
    if ob.confirm is not None and (case is None or case.kind in ("value", "summand")):
        params = {p: model.eval(v, model_completion=True).as_long() for p, v in ob.shapes.vars.items()}
        params.update(ob.shapes.values)
        try:
            witness = ob.confirm(model, params)
        except Exception as exc:  # a broken semantics may fail in ways no one foresaw
            return Status.UNKNOWN, f"the solver's model could not be replayed ({type(exc).__name__}: {exc})"
        if witness is None:
            return Status.UNKNOWN, ("the solver's model (sums are uninterpreted) is too large to replay in "
                                    "the reference engine; it may be spurious")
        if not witness.confirmed:
            return Status.UNKNOWN, ("the solver's model is spurious (the reference engine agrees with the "
                                    "claim there): the sum-lemma instances do not suffice")
    return Status.REFUTED, explain(ob, model, source, witness)


def _vacuous(ob: Obligation, rlimit: int, timeout: float | None, ctx: z3.Context) -> str:
    """A proof from inconsistent hypotheses proves nothing: check they have a model."""
    if decide(ob.hypotheses, rlimit, timeout, ctx)[0] == "unsat":
        return "vacuous: the hypotheses are inconsistent, so the proof says nothing"
    return ""


def _unknown_reason(reason: str, rlimit: int) -> str:
    if "max. resource limit" in reason or "rlimit" in reason or "resource" in reason:
        return f"resource limit exhausted (rlimit {rlimit:,})"
    if "timeout" in reason or "canceled" in reason:
        return "wall-clock timeout"
    return reason or "the solver answered unknown"


__all__ = ["RLIMIT", "RLIMIT_PER_SECOND", "Z3_UINT_MAX", "Report", "Status", "check_timeout", "prove", "rlimit_for"]
