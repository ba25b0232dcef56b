"""The reference engine at ranks 7 to 10, concretely: what the symbolic lemmas do not reach.

The rank-generic lemmas (:mod:`proofs.ranks`) prove eval.py's *equations* and
typing.py's rules for every rank, and the padding invariant is proved for
ranks up to ``RANK_BOUND``.  Two things stay outside them: the numpy
interpretation itself (``eval.ArrayInterpretation``: domains, updates,
reads, sums, tabulation) and the padded value semantics above
``RANK_BOUND``.  This check runs them at ranks 7..10 on every Core
constructor (transp at its first, middle and last positions) and compares

- the reference engine (Core operators, and full TeIL's positional ones at high
  positions) with the operators written independently as numpy axis
  operations (``sum(axis=0)``, ``trace``, ``diagonal``, ``swapaxes``,
  ``broadcast_to``, ``multiply.outer``, indexing), element operations by
  Definition 4 and 8 (shown equal to the Z3 arithmetic by ``Definition 4
  (Z3 = numpy)``);
- the padded run (M = 2 and 3) with the unpadded one on the original domain,
  and the padding with {0, •} (Inv (a) and (b) of :mod:`proofs.padding`).

It also types every unary operator at those ranks (transp at every position,
invalid ones included) and compares with SPEC.md's table, as ``Lemma 4.1
(exhaustive)`` does at small ranks, and checks that the padded store has the
shape ``⌈Γ⌉``; and it runs a program of :data:`LONG_PROGRAM` statements (St-Seq is
proved symbolically for up to 16).  It is a check of concrete instances (as ``Lemma 4.1 (exhaustive)`` is), not a
proof: the instances are listed by :func:`instances`, inputs are fixed by a
seed, and they hold • and 0 where the padding invariant is tight.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import z3

from core_teil.errors import TeilTypeError
from core_teil.lang import typing as ty
from core_teil.lang.shapes import ShapeSolver, round_up
from core_teil.lang.syntax import (
    Alloc,
    Contr,
    ContrAt,
    Diag,
    DiagAt,
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
    Stmt,
    Transp,
    TranspAt,
    Var,
)
from core_teil.lang.typing import check_program
from core_teil.semantics import eval as ev

from .kernel import Lemma, Obligation, Rule

#: The ranks checked here, above the RANK_BOUND of the instantiated lemmas.
HIGH_RANKS = range(7, 11)
SEED = 42


def shape(r: int) -> tuple[int, ...]:
    """Extents > 1 at the front (diag, contr, proj) and at the back (the positions a
    rank-limited bug gets wrong), 1 between; 24 elements at every rank >= 4."""
    return (2, 2, *(1,) * (r - 4), 2, 3) if r >= 4 else (2,) * r


def instances(r: int) -> Iterator[tuple[Expr, dict[str, tuple[int, ...]]]]:
    """One expression per Core constructor with a result or argument of rank ``r``."""
    X, Y, S = Var("X"), Var("Y"), Var("S")
    t = shape(r)
    yield X, {"X": t}
    for op in ("add", "sub", "mul", "div"):
        yield Elem(op, X, Y), {"X": t, "Y": t}
    yield Elem("mul", S, X), {"S": (), "X": t}
    yield Elem("div", X, S), {"X": t, "S": ()}
    yield Prod(X, Y), {"X": t[: r - 3], "Y": t[r - 3 :]}
    yield Red(X), {"X": t}
    yield Contr(X), {"X": t}
    yield Diag(X), {"X": t}
    for i in sorted({1, r // 2, r - 2, r - 1}):
        yield Transp(i, X), {"X": t}
    yield Expa(2, X), {"X": t[1:]}
    yield Proj(2, X), {"X": t}


def full_instances(r: int) -> Iterator[tuple[Expr, dict[str, tuple[int, ...]]]]:
    """The positional (full-TeIL) operators at high positions of a rank-``r`` argument."""
    X = Var("X")
    t = shape(r)
    yield RedAt(r, X), {"X": t}
    yield RedAt(r - 1, X), {"X": t}
    yield ContrAt(1, r - 1, X), {"X": t}
    yield DiagAt(2, r - 1, X), {"X": t}
    yield TranspAt(1, r, X), {"X": t}
    yield TranspAt(r - 1, 2, X), {"X": t}
    yield ExpaAt(r, 2, X), {"X": t[1:]}
    yield ExpaAt(r - 2, 2, X), {"X": t[1:]}
    yield ProjAt(r, 3, X), {"X": t}
    yield ProjAt(r - 1, 2, X), {"X": t}


def operators(e: Expr, env: dict[str, np.ndarray]) -> np.ndarray:
    """The paper's operators as numpy axis operations (Fig. 6), written without eval.py."""
    arith = ev.ArrayInterpretation.arith
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, Elem):
        return np.asarray(arith(None, e.op, operators(e.left, env), operators(e.right, env)))  # type: ignore[arg-type]
    if isinstance(e, Prod):
        return np.multiply.outer(operators(e.left, env), operators(e.right, env))
    a = operators(e.arg, env)  # type: ignore[attr-defined]
    if isinstance(e, Red):
        return a.sum(axis=0)
    if isinstance(e, Contr):
        return np.trace(a, axis1=0, axis2=1)
    if isinstance(e, Diag):
        return np.moveaxis(np.diagonal(a, axis1=0, axis2=1), -1, 0)
    if isinstance(e, Transp):
        return np.swapaxes(a, e.i - 1, e.i)
    if isinstance(e, Expa):
        return np.broadcast_to(a, (e.d, *a.shape))  # type: ignore[arg-type]
    if isinstance(e, Proj):
        return a[e.m - 1]  # type: ignore[operator]
    # full TeIL (paper Fig. 6), positions 1-based
    if isinstance(e, RedAt):
        return a.sum(axis=e.i - 1)
    if isinstance(e, ContrAt):
        return np.trace(a, axis1=e.i - 1, axis2=e.j - 1)
    if isinstance(e, DiagAt):  # keeps dimension i, drops j
        return np.moveaxis(np.diagonal(a, axis1=e.i - 1, axis2=e.j - 1), -1, e.i - 1)
    if isinstance(e, TranspAt):
        return np.swapaxes(a, e.i - 1, e.j - 1)
    if isinstance(e, ExpaAt):
        wide = np.expand_dims(a, e.i - 1)
        return np.broadcast_to(wide, (*a.shape[: e.i - 1], e.d, *a.shape[e.i - 1 :]))  # type: ignore[misc]
    if isinstance(e, ProjAt):
        return np.take(a, e.m - 1, axis=e.i - 1)  # type: ignore[operator]
    raise ValueError(f"no operator for {type(e).__name__}")


def inputs_for(holes: dict[str, tuple[int, ...]], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Small integers (sums are exact), with 0 and • (NaN) among them."""
    out = {}
    for x, t in holes.items():
        v = rng.integers(-3, 4, size=t).astype(np.float64)
        v[rng.random(t) < 0.1] = np.nan
        out[x] = v
    return out


def _program(expr: Expr, holes: dict[str, tuple[int, ...]], out_shape: tuple[int, ...]) -> Program:
    decls = (*(Alloc(x, t, "input") for x, t in holes.items()), Alloc("Z", out_shape, "output"))
    full = isinstance(expr, RedAt | ContrAt | DiagAt | TranspAt | ExpaAt | ProjAt)
    return Program("full" if full else "core", decls, (Stmt("Z", expr),))


#: A program this long is run statement by statement (St-Seq is proved symbolically up to 16).
LONG_PROGRAM = 300


def long_program() -> Iterator[tuple[str, str]]:
    """``C = add C O`` repeated: every statement adds one, so the result counts the statements run."""
    stmts = tuple(Stmt("C", Elem("add", Var("C"), Var("O"))) for _ in range(LONG_PROGRAM))
    program = Program("core", (Alloc("C", (2,), "input"), Alloc("O", (2,), "input"), Alloc("D", (2,), "output")),
                      (*stmts, Stmt("D", Var("C"))))
    got = ev.evaluate(check_program(program), {"C": np.zeros(2), "O": np.ones(2)})["D"]
    if not np.array_equal(got, np.full(2, float(LONG_PROGRAM))):
        yield f"a program of {LONG_PROGRAM} statements", f"counted {got[0]:g} statements run"


def padded_store(typed: Any, inputs: dict[str, np.ndarray], pad: int) -> np.ndarray:
    interp = ev.ArrayInterpretation(typed)
    store = ev.initial_store(typed, interp, inputs, pad)
    return ev.eval_prog(ev.Sem(typed, interp, store, pad))["Z"]


def check(expr: Expr, holes: dict[str, tuple[int, ...]], rng: np.random.Generator) -> Iterator[tuple[str, str]]:
    """(claim, what went wrong) for every claim that fails on this instance."""
    inputs = inputs_for(holes, rng)
    want = np.asarray(operators(expr, inputs), dtype=np.float64)
    typed = check_program(_program(expr, holes, want.shape))
    got = ev.evaluate(typed, inputs)["Z"]
    if got.shape != want.shape or not np.array_equal(got, want, equal_nan=True):
        yield "reference = numpy operators", f"got {got.ravel()[:8]}, the operators give {want.ravel()[:8]}"
    for pad in (2, 3):
        P = padded_store(typed, inputs, pad)
        rounded = tuple(round_up(n, pad) for n in want.shape)
        if P.shape != rounded:  # report Theorem 2: the padded store's domain is ⌈Γ⌉
            yield f"padded store (M = {pad}) of shape ⌈Γ⌉", f"shape {P.shape}, not {rounded}"
            continue
        inside = tuple(slice(0, n) for n in want.shape)
        if not np.array_equal(P[inside], got, equal_nan=True):
            yield f"padded (M = {pad}) = unpadded on Γ", "the padded run differs on the original domain"
        padding = np.ones(P.shape, dtype=bool)
        padding[inside] = False
        if not np.all((P[padding] == 0) | np.isnan(P[padding])):
            yield f"padding (M = {pad}) holds 0 or •", "a value other than 0 or • in the padding"


def typing_at(r: int) -> Iterator[tuple[str, str]]:
    """Lemma 4.1 on concrete instances of rank ``r``: the checker types each unary operator
    (every position of transp, ``0..r+1``, invalid ones included) as SPEC.md's table does."""
    from .safety import PY_LOGIC, spec_rules

    t = shape(r)
    program = Program("core", (Alloc("X", t),), ())
    ops: list[Expr] = [Red(Var("X")), Contr(Var("X")), Diag(Var("X")), Proj(2, Var("X")), Proj(3, Var("X")),
                       Expa(2, Var("X")), *(Transp(i, Var("X")) for i in range(0, r + 2))]
    for e in ops:
        args = {"d": getattr(e, "d", None), "m": getattr(e, "m", None)}
        derivable = {u for _, ok, u in spec_rules(e, [t], args, PY_LOGIC) if ok}
        try:
            got: Any = ty.Checker(program, ShapeSolver(program), {"X": t}).infer(e).shape
        except TeilTypeError:
            got = None
        except (IndexError, ValueError) as exc:  # a rule that accepts too much, then fails to build its type
            yield f"{_show(e)} with X : {list(t)}", f"the checker accepts it and then fails: {exc!r}"
            continue
        if (got is None) != (not derivable) or (got is not None and {got} != derivable):
            yield (f"{_show(e)} with X : {list(t)}", f"the checker says {'ill-typed' if got is None else list(got)}, "
                   f"the rules derive {sorted(derivable) or 'nothing'}")


def obligations() -> Iterator[Obligation]:
    rng = np.random.default_rng(SEED)
    for r in HIGH_RANKS:
        for expr, holes in instances(r):
            label = f"{_show(expr)} at rank {r}"
            failures = list(check(expr, holes, rng))
            yield Obligation(f"{label}: reference engine, padded and unpadded", (), z3.BoolVal(bool(failures)),
                             _explain(label, failures), rank=r)
        for expr, holes in full_instances(r):
            label = f"{_show(expr)} at rank {r}"
            failures = list(check(expr, holes, rng))
            yield Obligation(f"{label}: reference engine, padded and unpadded", (), z3.BoolVal(bool(failures)),
                             _explain(label, failures), rank=r)
        wrong = list(typing_at(r))
        yield Obligation(f"typing at rank {r}: checker = SPEC.md's rules", (), z3.BoolVal(bool(wrong)),
                         _explain(f"rank {r}", wrong), rank=r)
    failures = list(long_program())
    yield Obligation(f"eval_prog runs all {LONG_PROGRAM} statements", (), z3.BoolVal(bool(failures)),
                     _explain("St-Seq", failures))


def _explain(label: str, failures: list[tuple[str, str]]) -> Callable[[z3.ModelRef], str]:
    return lambda m: f"{label}: " + "; ".join(f"{claim} fails: {why}" for claim, why in failures)


def _show(e: Expr) -> str:
    from .schema import repr_expr

    return repr_expr(e, {})


def lemmas() -> list[Lemma]:
    return [Lemma("Engines at ranks 7-10", "paper Fig. 6 (operators); report Theorem 3 (concretely)",
                  "the reference engine computes the paper's operators at ranks 7..10, and padded runs "
                  "(M = 2, 3) equal unpadded ones there, with 0 or • in the padding", obligations,
                  Rule.ENUMERATION, coverage=f"{HIGH_RANKS[0]}..{HIGH_RANKS[-1]}")]
