"""Replaying a solver's model in the reference engine of eval.py.

Some encodings over-approximate: sums and the real operations are
uninterpreted in the simulation and lowering obligations, so a model of a
negated obligation may be spurious.  Before such a model is reported as a
refutation, the statement is run by ``eval.py``'s :class:`ArrayInterpretation`
(numpy, • as NaN) on the model's shapes and memory contents; only if the
claim fails there too is it a counterexample, shown with the engine's values
(:class:`Witness`).  As the model's inputs may hide a real failure (all 0,
say), seeded random inputs are tried after them.  A model too large to replay, or not reproduced, makes
the obligation ``unknown``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import z3

from ..lang.typing import TypedProgram, check_program
from ..semantics import eval as ev
from ..semantics.eval import ArrayInterpretation, SemanticsBug
from ..semantics.symbolic import UNDEF

#: Replaying evaluates the model on every element of the (padded) stores; beyond this many
#: elements it gives up and the obligation is reported unknown.
CONFIRM_LIMIT = 200_000




@dataclass(frozen=True)
class Witness:
    """What the reference engine said about a model: a real counterexample, or not.

    ``index`` (1-based) is where the claim fails on the replayed values, ``values`` what the
    engine computed there; these, not the solver's (whose real operations are uninterpreted),
    are what a counterexample shows."""

    confirmed: bool
    detail: str
    index: tuple[int, ...] | None = None
    values: tuple[tuple[str, str], ...] = ()
    where: str = ""
    inputs: str = "the model's inputs"  # which of :data:`ATTEMPTS` showed it


def to_float(v: z3.ExprRef) -> float:
    """A model's value of sort ``Value`` as a float (• as NaN, as in the reference engine)."""
    if v.eq(UNDEF) or v.decl().name() == "undef":
        return math.nan
    r = v.arg(0)
    if z3.is_rational_value(r):
        num, den = r.numerator_as_long(), r.denominator_as_long()
        return num / den
    if z3.is_algebraic_value(r):
        return float(r.approx(20).as_fraction())
    return 0.0  # an unconstrained real: any value will do


def model_array(model: z3.ModelRef, f: Any, shape: tuple[int, ...]) -> np.ndarray:
    """The model's memory ``f`` (a function ``Int^r -> Value``) on the 1-based box ``shape``.

    Read from the model's table (entries and default) when it has one; point by point
    otherwise."""
    if not shape:
        return np.array(to_float(model.eval(f, model_completion=True)))
    if not isinstance(f, z3.FuncDeclRef):
        return _pointwise(model, f, shape)
    if all(not d.eq(f) for d in model.decls()):  # unconstrained: any contents will do
        return np.full(shape, to_float(model.eval(f(*[z3.IntVal(1)] * len(shape)), model_completion=True)))
    table = model.get_interp(f)
    default = table.else_value()
    if default is None or not _ground(default):
        return _pointwise(model, f, shape)
    out = np.full(shape, to_float(model.eval(default, model_completion=True)))
    for e in range(table.num_entries()):
        entry = table.entry(e)
        args = [entry.arg_value(j) for j in range(entry.num_args())]
        if not all(z3.is_int_value(a) for a in args):
            return _pointwise(model, f, shape)
        idx = tuple(a.as_long() - 1 for a in args)
        if all(0 <= i < n for i, n in zip(idx, shape, strict=True)):
            out[idx] = to_float(model.eval(entry.value(), model_completion=True))
    return out


def _ground(t: z3.ExprRef) -> bool:
    return not z3.is_var(t) and all(_ground(c) for c in t.children())


def _pointwise(model: z3.ModelRef, f: Any, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape)
    for idx in np.ndindex(*shape):
        out[idx] = to_float(model.eval(f(*[z3.IntVal(i + 1) for i in idx]), model_completion=True))
    return out


def concrete(typed: TypedProgram, params: dict[str, int]) -> TypedProgram | None:
    try:
        return check_program(typed.program, {p: params[p] for p in typed.program.params if p in params})
    except Exception:  # a model outside the typed fragment cannot be replayed
        return None


def too_big(shapes: list[tuple[int, ...]]) -> bool:
    return sum(math.prod(s) for s in shapes) > CONFIRM_LIMIT


#: Inputs tried after the model's own: values drawn from this seed, first keeping the model's •.
SEED = 42
ATTEMPTS = ("the model's inputs", "random inputs with the model's •", "random inputs")


def input_variants(store: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    """The model's memory, then seeded random contents (a model's values can hide a real failure:
    the solver's sums and real operations are uninterpreted, its inputs may e.g. all be 0)."""
    rng = np.random.default_rng(SEED)
    keep = {x: np.where(np.isnan(a), np.nan, rng.integers(1, 10, size=a.shape)) for x, a in store.items()}
    fresh = {x: rng.integers(1, 10, size=a.shape).astype(float) for x, a in store.items()}
    return [store, keep, fresh]


def stuck(bug: SemanticsBug, attempt: str) -> Witness:
    """The engine itself read out of bounds on the replay: the claim fails, and worse."""
    return Witness(True, f"the reference engine stops: {bug.message} (at {bug.span})", None,
                   (("reference engine", bug.message),), "", attempt)


def confirm_simulation(typed: TypedProgram, no: int, mu: dict, pmu: dict,
                       pad: int) -> Callable[[z3.ModelRef, dict[str, int]], Witness | None]:
    def confirm(model: z3.ModelRef, params: dict[str, int]) -> Witness | None:
        tc = concrete(typed, params)
        if tc is None:
            return None
        interp = ArrayInterpretation(tc)
        shapes = {x: tuple(interp.extent(d) for d in t) for x, t in tc.gamma.items()}
        pshapes = {x: tuple(interp.ceil(n, pad) for n in s) for x, s in shapes.items()}
        if too_big(list(pshapes.values())):
            return None
        stmt = tc.program.stmts[no - 1]
        model_store = {x: model_array(model, mu[x], shapes[x]) for x in tc.gamma}
        for attempt, store in zip(ATTEMPTS, input_variants(model_store), strict=True):
            # the model's padding where R allows it (with the model's own inputs), else zeros
            raw = {x: model_array(model, pmu[x], pshapes[x]) if store is model_store
                   else np.zeros(pshapes[x]) for x in tc.gamma}
            pstore = {x: related_padding(store[x], raw[x]) for x in tc.gamma}
            try:
                new = ev.st_stmt(stmt, ev.Sem(tc, interp, store, None))[stmt.target]
                pnew = ev.st_stmt(stmt, ev.Sem(tc, interp, pstore, pad))[stmt.target]
            except SemanticsBug as bug:
                return stuck(bug, attempt)
            witness = check_relation(stmt.target, new, pnew)
            if witness.confirmed:
                return replace(witness, inputs=attempt)
        return witness

    return confirm


def clamped_view(orig: np.ndarray, padded_shape: tuple[int, ...]) -> np.ndarray:
    """``orig[min(p, t)]`` for every ``p`` of the padded box."""
    return orig[np.ix_(*[np.minimum(np.arange(P), n - 1) for P, n in zip(padded_shape, orig.shape,
                                                                         strict=True)])]


def domain_mask(shape: tuple[int, ...], padded_shape: tuple[int, ...]) -> np.ndarray:
    """``p <= t`` for every ``p`` of the padded box."""
    mask = np.ones(padded_shape, dtype=bool)
    for axis, n in enumerate(shape):
        view = [1] * len(shape)
        view[axis] = padded_shape[axis]
        mask &= (np.arange(padded_shape[axis]) < n).reshape(view)
    return mask


def related_padding(orig: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """A padded store satisfying ``R`` with ``orig``: the model's padding where it is allowed, else 0."""
    if orig.ndim == 0:
        return orig.copy()
    clamped = clamped_view(orig, raw.shape)
    ok_pad = (raw == 0) | (np.isnan(raw) & np.isnan(clamped))
    out = np.where(ok_pad, raw, 0.0)
    region = tuple(slice(0, n) for n in orig.shape)
    out[region] = orig
    return out


def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a == b) | (np.isnan(a) & np.isnan(b))


def check_relation(x: str, new: np.ndarray, pnew: np.ndarray) -> Witness:
    """Does ``R`` hold between the statement's unpadded and padded results?"""
    if new.ndim == 0:
        if same(new, pnew):
            return Witness(False, "the reference engine agrees with the claim")
        return Witness(True, f"padded {x} = {_fmt(pnew)}, original {x} = {_fmt(new)}", (),
                       ((f"padded {x}", _fmt(pnew)), (f"original {x}", _fmt(new))), "a scalar")
    clamped = clamped_view(new, pnew.shape)
    in_dom = domain_mask(new.shape, pnew.shape)
    ok = np.where(in_dom, same(pnew, clamped), (pnew == 0) | (np.isnan(pnew) & np.isnan(clamped)))
    bad = np.argwhere(~ok)
    if not len(bad):
        return Witness(False, "the reference engine agrees with the claim")
    idx = tuple(int(i) for i in bad[0])
    one = tuple(i + 1 for i in idx)
    cl = tuple(min(i, n - 1) + 1 for i, n in zip(idx, new.shape, strict=True))
    where = "on the original domain" if in_dom[idx] else "in the padding, where only 0 (or • if the " \
        "original is •) may stand"
    orig = _fmt(new[tuple(i - 1 for i in cl)])
    detail = f"padded {x}{list(one)} = {_fmt(pnew[idx])} ({where}), original {x}{list(cl)} = {orig}"
    return Witness(True, detail, one, ((f"padded {x}{list(one)}", _fmt(pnew[idx])),
                                       (f"original {x}{list(cl)}", orig)), where)


def _fmt(v: Any) -> str:
    f = float(v)
    return "•" if math.isnan(f) else f"{f:g}"


def confirm_lowering(typed: TypedProgram, lowered: TypedProgram, no: int,
                     mu: dict) -> Callable[[z3.ModelRef, dict[str, int]], Witness | None]:
    def confirm(model: z3.ModelRef, params: dict[str, int]) -> Witness | None:
        tc, lc = concrete(typed, params), concrete(lowered, params)
        if tc is None or lc is None:
            return None
        interp, linterp = ArrayInterpretation(tc), ArrayInterpretation(lc)
        shapes = {x: tuple(interp.extent(d) for d in t) for x, t in tc.gamma.items()}
        if too_big(list(shapes.values())):
            return None
        stmt, lstmt = tc.program.stmts[no - 1], lc.program.stmts[no - 1]
        x = stmt.target
        model_store = {y: model_array(model, mu[y], shapes[y]) for y in tc.gamma}
        for attempt, store in zip(ATTEMPTS, input_variants(model_store), strict=True):
            try:
                new = ev.st_stmt(stmt, ev.Sem(tc, interp, store, None))[x]
                lnew = ev.st_stmt(lstmt, ev.Sem(lc, linterp, store, None))[x]
            except SemanticsBug as bug:
                return stuck(bug, attempt)
            bad = np.argwhere(~same(new, lnew)) if new.ndim else ([()] if not same(new, lnew) else [])
            if len(bad):
                idx = tuple(int(i) for i in bad[0])
                one = tuple(i + 1 for i in idx)
                return Witness(True, f"original {x}{list(one)} = {_fmt(new[idx])}, lowered {_fmt(lnew[idx])}",
                               one, ((f"original {x}{list(one)}", _fmt(new[idx])),
                                     (f"lowered {x}{list(one)}", _fmt(lnew[idx]))), "on the original domain",
                               attempt)
        return Witness(False, "the reference engine agrees with the claim")

    return confirm
