"""Padding simulation (report Lemma 6, Theorem 3) in the form that is true of Core-TeIL.

The report's Theorem 3 says that evaluation with a zero-padded store equals
the original evaluation on the original domain *and leaves zeros in the
padding*.  The second half is false here: with • absorbing (``0 · • = •``)
``prod A B`` of a zero-padded ``A`` and an undefined ``B`` holds • in the
padding.  What is true, and what this module proves per statement, is the
invariant ``R(μ, μ̂)`` between an unpadded store ``μ`` and a padded store
``μ̂``: for every allocation ``x : t`` and every ``p <= ⌈t⌉``, with
``c = min(p, t)`` the *clamp* of ``p`` (componentwise),

* if ``p <= t``:  ``μ̂(x)(p) = μ(x)(p)``  (simulation on the original domain);
* otherwise:      ``μ̂(x)(p) = 0``, or ``μ̂(x)(p) = •`` and ``μ(x)(c) = •``.

The second clause is what makes ``Σ_{m=1..⌈n⌉}`` equal ``Σ_{m=1..n}``: a
padding term is 0, or • while the original sum has the • term ``m = n``.
``R`` holds of the initial stores (d-pad-var, :func:`initial_obligation`), and
every statement preserves it (:func:`simulation_obligations`, St-Stmt), so by
St-Seq it holds after every statement: that is this project's Theorem 3.

Encoding.  The padded semantics runs at a symbolic ``k <= ⌈Γ(x)⌉``; the
unpadded one runs (an :class:`~core_teil.semantics.symbolic.AlignedInterpretation`) at
the clamp ``min(k, Γ(x))``, with every summation variable ``m`` shared and
clamped to ``min(m, n)``.  Sums are uninterpreted; each pair of summations
is related by the *padded-sum lemma*, whose premises are proved for the
shared variable ``m`` left free (so for every ``m``), innermost sum first,
and whose conclusion is then a hypothesis of the enclosing stage::

    PadSum.  n >= 1, N >= n, D : Bool, h, ĥ : Int -> V∪{•}.  If for all m in [1, N]
        D ∧ m <= n  ⟹  ĥ(m) = h(min(m, n))
        otherwise   ⟹  ĥ(m) = 0  ∨  ĥ(m) = • = h(min(m, n))
    then  D ⟹ Σ_{1..N} ĥ = Σ_{1..n} h,   ¬D ⟹ Σ_{1..N} ĥ = 0 ∨ Σ_{1..N} ĥ = • = Σ_{1..n} h.

PadSum follows from the sum lemmas ``proofs/sums.py`` proves by induction;
``make verify`` proves it from them, for these very :func:`padsum_premise` and
:func:`padsum_conclusion` (lemma ``PadSum``, ``proofs/prover.py``).
``D``: if some padding term ``ĥ(m)`` is •, both sums are • (Sum-Absorb, for
``h`` at ``m = n``); otherwise they are equal by Sum-Zero-Extension and
Sum-Congruence.  ``¬D``: ``Σ ĥ ∈ {0, •}`` (Sum-Zero-Or-Undef), and if it is •
some ``ĥ(m)`` is • (Sum-Defined), so ``h(min(m, n)) = •`` and ``Σ h = •``
(Sum-Absorb).

``D`` says that the index at which the sum is evaluated lies in the original
domain; it is read off the records of the padded run (every coordinate of a
node's index reaches a read or a padded ``expa`` guard).  Any choice of
``D`` gives a valid instance, so a wrong one can only cost a proof.  A model
of the negated obligation may therefore be spurious (the sums are
uninterpreted): :func:`~core_teil.proving.replay.confirm_simulation` re-runs the
reference engine of eval.py on it and only a confirmed model counts as a
refutation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3

from ..lang.syntax import Stmt
from ..lang.typing import TypedProgram
from ..semantics.symbolic import (
    ABSTRACT_REALS,
    UNDEF,
    ZERO,
    AlignedInterpretation,
    AlignmentError,
    SumNode,
    Z3Interpretation,
    clamp,
    conj,
    in_bounds,
    select,
)
from .replay import confirm_simulation


def rho(p: tuple[z3.ArithRef, ...], t: tuple[z3.ArithRef, ...], padded: z3.ExprRef,
        original: z3.ExprRef) -> z3.BoolRef:
    """The invariant at one index ``p`` (``original`` is the unpadded value at ``min(p, t)``)."""
    in_padding = z3.Or(padded == ZERO, z3.And(padded == UNDEF, original == UNDEF))
    if not p:
        return padded == original
    return z3.If(in_bounds(p, t), padded == original, in_padding)


def initial_obligation(typed: TypedProgram, padded: Any) -> Any:
    """Report Lemma 4 / rule d-pad-var: zero padding around the original store satisfies ``R``."""
    from ..semantics.eval import d_pad_var
    from ..semantics.symbolic import Z3Interpretation, function_memory
    from .obligations import PAD_INIT, Case, Obligation, store_extents

    mu = function_memory(typed.gamma, "mu")
    interp = Z3Interpretation(typed.solver)
    cases = []
    for x, shape in typed.gamma.items():
        if not shape:
            continue
        t, tp = store_extents(typed, x), padded.of(x)
        p = tuple(z3.Int(f"p_{x}!{j}") for j in range(1, len(shape) + 1))
        initial = d_pad_var(interp, lambda q, m=mu[x]: select(m, q), p, t)
        cond = z3.And(in_bounds(p, tp), z3.Not(rho(p, t, initial, select(mu[x], clamp(p, t)))))
        cases.append(Case(cond, "value", typed.program.alloc(x).span, f"the initial padded store of {x} "
                          "breaks the simulation relation", x, p, t,
                          (("padded", initial), ("original at min(p, t)", select(mu[x], clamp(p, t)))),
                          in_bounds(p, t)))
    hyps = (*typed.solver.hypotheses(), *padded.hyps)
    return Obligation(*PAD_INIT, None, None, hyps, tuple(cases), typed.solver)


def domain_flag(lead: Z3Interpretation, s: SumNode, extents: Callable[[str], tuple]) -> z3.BoolRef:
    """``D`` of the padded-sum lemma: the sum's own index lies in the original domain.

    Every coordinate of that index reaches a read or an ``expa`` guard of the
    body; the body's own and inner summation variables are set to 1 (always
    in range, as every extent is >= 1)."""
    flags = [in_bounds(r.index, extents(r.name)) for r in lead.reads[s.reads[0]:s.reads[1]]
             if r.index and len(r.index) == len(extents(r.name))]
    flags += [z3.And(g.index >= 1, g.index <= g.extent) for g in lead.guards[s.guards[0]:s.guards[1]]]
    one = z3.IntVal(1)
    return z3.substitute(conj(*flags), *[(v, one) for v in (s.var, *s.inner)])


def padsum_premise(padded: SumNode, original: SumNode, d: z3.BoolRef) -> z3.BoolRef:
    """PadSum's premises at the shared variable ``m`` (proved for every ``m``, so for all)."""
    m, big_n, n = padded.var, padded.bound, original.bound
    related = z3.If(z3.And(d, m <= n), padded.body == original.body,
                    z3.Or(padded.body == ZERO, z3.And(padded.body == UNDEF, original.body == UNDEF)))
    return z3.And(n >= 1, big_n >= n, z3.Implies(z3.And(m >= 1, m <= big_n), related))


def padsum_conclusion(padded: SumNode, original: SumNode, d: z3.BoolRef) -> z3.BoolRef:
    """PadSum's conclusion: the padded sum relates to the original one as ``R`` demands."""
    s2, s1 = padded.term, original.term
    return z3.If(d, s2 == s1, z3.Or(s2 == ZERO, z3.And(s2 == UNDEF, s1 == UNDEF)))


def read_owners(lead: Z3Interpretation) -> dict[int, int | None]:
    """For each read (by position), the innermost summation whose body made it (or None)."""
    owner: dict[int, int | None] = dict.fromkeys(range(len(lead.reads)))
    width: dict[int, int] = {}
    for j, s in enumerate(lead.sums):
        lo, hi = s.reads
        for r in range(lo, hi):
            if owner[r] is None or hi - lo < width[r]:
                owner[r], width[r] = j, hi - lo
    return owner


def store_instances(typed: TypedProgram, lead: Z3Interpretation, pmu: dict, mu: dict,
                    padded: Any, which: list[int]) -> list[z3.BoolRef]:
    """``R(μ, μ̂)`` instantiated at the given reads of the padded run (the hypothesis of the step)."""
    from .obligations import store_extents

    out, seen = [], set()
    for i in which:
        r = lead.reads[i]
        key = (r.name, tuple(t.get_id() for t in r.index))
        if key in seen:
            continue
        seen.add(key)
        t, tp = store_extents(typed, r.name), padded.of(r.name)
        if len(t) != len(r.index):
            continue
        holds = rho(r.index, t, select(pmu[r.name], r.index), select(mu[r.name], clamp(r.index, t)))
        out.append(z3.Implies(in_bounds(r.index, tp), holds))
    return out


def simulation_obligations(typed: TypedProgram, no: int, stmt: Stmt, lead: Z3Interpretation, pmu: dict,
                           mu: dict, padded: Any) -> list[Any]:
    """Report Lemma 6 as a step of Theorem 3: ``R(μ, μ̂)`` before ``x = e`` implies it after.

    Staged like the induction of Lemma 6's proof: one obligation per
    summation, innermost first (the contraction case: PadSum's premises hold
    for a free ``m``, given the inner sums' proved conclusions), then the
    statement itself given the outermost sums' conclusions.  Each stage is a
    small problem; one monolithic formula made Z3's time depend on its seed."""
    from .obligations import SIMULATION, SIMULATION_SUM, Case, Obligation, run_statement, store_extents

    hyps = [*typed.solver.hypotheses(), *padded.hyps]
    orig = AlignedInterpretation(typed.solver, prefix="u", abstract_sums=True, leader=lead, clamp=True,
                                 reals=ABSTRACT_REALS)
    try:
        run_statement(typed, stmt, orig, mu, None)
    except AlignmentError as err:
        case = Case(z3.BoolVal(True), "rejected", stmt.span, f"the padded and unpadded runs differ: {err}")
        return [Obligation(*SIMULATION, no, stmt, (), (case,), typed.solver, verdict="unknown", span=stmt.span)]
    ext = lambda x: store_extents(typed, x)  # noqa: E731
    pairs = {s.var.get_id(): s for s in orig.sums}
    owner = read_owners(lead)
    confirm = confirm_simulation(typed, no, mu, pmu, padded.pad)
    w, u = lead.writes[-1], orig.writes[-1]
    t = ext(w.name)
    ks = tuple((f"k{j}", k) for j, k in enumerate(w.index, 1))
    proved: dict[int, z3.BoolRef] = {}  # var id -> the conclusion, under the sum's path
    obs = []
    for j, s in enumerate(lead.sums):  # recorded as each sum finishes: inner ones first
        o = pairs.get(s.var.get_id())
        if o is None:
            continue  # an unpaired sum gets no lemma instance; what depends on it cannot be proved
        d = domain_flag(lead, s, ext)
        inner = [proved[v.get_id()] for v in s.inner if v.get_id() in proved]
        reads = store_instances(typed, lead, pmu, mu, padded, [i for i, a in owner.items() if a == j])
        case = Case(z3.Not(padsum_premise(s, o, d)), "summand", s.node.span, "summand", w.name,
                    (s.var,), (o.bound,), (("padded summand", s.body), ("original summand", o.body)),
                    z3.And(d, s.var <= o.bound))
        number = next(i for i, (v, _) in enumerate(lead.sum_vars, 1) if v.eq(s.var))
        obs.append(Obligation(*SIMULATION_SUM, no, stmt, (*hyps, *s.path, *reads, *inner), (case,),
                              typed.solver, (*ks, (f"m{number}", s.var)), confirm=confirm, span=s.node.span,
                              part=f"sum{number}"))
        proved[s.var.get_id()] = z3.Implies(conj(*s.path), padsum_conclusion(s, o, d))
    nested = {v.get_id() for s in lead.sums for v in s.inner}
    outer = [c for v, c in proved.items() if v not in nested]
    reads = store_instances(typed, lead, pmu, mu, padded, [i for i, a in owner.items() if a is None])
    hyps += [in_bounds(w.index, padded.of(w.name)), *reads, *outer]
    case = Case(z3.Not(rho(w.index, t, w.value, u.value)), "value", stmt.span,
                f"the padded statement breaks the simulation relation for {w.name}", w.name, w.index, t,
                (("padded", w.value), ("original at min(k, Γ(x))", u.value)), in_bounds(w.index, t))
    obs.append(Obligation(*SIMULATION, no, stmt, tuple(hyps), (case,), typed.solver, ks, confirm=confirm,
                          span=stmt.span))
    return obs
