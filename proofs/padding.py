"""Padding for all programs: report section 4 in the form that is true of Core-TeIL.

The padded semantics is ``eval.py`` with ``pad=M``: loop bounds ``⌈d⌉`` and a
guarded ``expa``; the padded store holds 0 outside the original extents
(report Fig. 13, d-pad-var).  Report Theorem 3 claims padded = unpadded on
the original domain *and zeros in the padding*.  The second half is false
(``0 · • = •``: refutation below), so the invariant proved here is

    Inv(P, U) for a padded value P and the unpadded U of type t:
    (a) P(k) = U(k)                              for k <= t
    (b) P(k) ∈ {0, •}                            for k <= ⌈t⌉, not k <= t
    (c) P(k) = •  ⟹  U(k') = •  for every k' in Ω(k), the in-domain indices
        that agree with k on the coordinates where k is in the domain.

It is preserved by every constructor (``Pad-*``: report Lemmas 5 and 6 as
made true), by St-Stmt (Theorem 3 step), and holds of the initial padded
store (Theorem 3 base).  It cannot be strengthened to "(b) with 0 only" nor
(c) to an equivalence: both are refuted below, as are the report's Lemma 3
for ``expa``, Theorem 3 with an unguarded ``expa``, and Theorem 3 in IEEE
floats (``±inf · 0 = NaN``).  The proofs use a symbolic vector length ``M``
with the abstract ``⌈·⌉`` of :mod:`proofs.schema`; Definition 7 proves that
``symbolic.py``'s own rounding has the one property used, for every ``M``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import z3

from core_teil.errors import TeilError
from core_teil.lang.syntax import Alloc, Expa, Expr, Prod, Program, Red, Stmt
from core_teil.semantics import eval as ev
from core_teil.semantics.symbolic import Z3Interpretation, initial_memory, memory_sort, val

from . import sums
from .kernel import Expect, Lemma, Obligation, Rule
from .safety import MIN_RANK, STEPS, X, Y, domain, schemata, st_stmt_obligations, stmt_schemata, wd_obligations
from .schema import (
    CEIL,
    IS_UNDEF,
    ZERO,
    Instance,
    ProofInterpretation,
    UnrolledInterpretation,
    hole_shape,
    index,
    instances,
    instantiate,
    params_of,
    ranks,
    realistic,
    run,
    select,
    show,
    stmt_instance,
    within,
)

#: The vector length: symbolic, so every padding lemma holds for all M >= 1.
M = z3.Int("M")

PAD_SUM_LAWS = ("Sum-Absorb", "Sum-Defined", "Sum-Zero-Or-Undef", "Sum-Zero-Extension", "Sum-Congruence")


def rho(k: Sequence[z3.ArithRef], t: Sequence[z3.ArithRef], c: Sequence[z3.ArithRef]) -> tuple:
    """The element of Ω(k) chosen by ``c``: in-domain coordinates of ``k`` kept, the others ``c``'s."""
    return tuple(z3.If(kj <= tj, kj, cj) for kj, tj, cj in zip(k, t, c, strict=True))


def in_padding(k: Sequence[z3.ArithRef], t: Sequence[z3.ArithRef], T: Sequence[z3.ArithRef]) -> z3.BoolRef:
    return z3.And(within(k, T), z3.Not(within(k, t))) if k else z3.BoolVal(False)


def zero_or_undef(v: z3.ExprRef) -> z3.BoolRef:
    return z3.Or(v == ZERO, IS_UNDEF(v))


class TupleIndices:
    """``within`` and ``in_padding`` of multi-indices of a known rank (tuples of terms)."""

    within = staticmethod(within)
    in_padding = staticmethod(in_padding)


def inv_at(k: Any, c: Any, t: Any, T: Any, P: z3.ExprRef, U: z3.ExprRef, U_rho: z3.ExprRef,
           indices: Any = TupleIndices) -> tuple[z3.BoolRef, ...]:
    """Inv(P, U) at one index ``k``, as its three claims; ``P``, ``U`` are the values at ``k`` and
    ``U_rho`` the unpadded value at ``ρ(k, c)`` (the element of Ω(k) that ``c`` picks).

    The one definition of the invariant: the step lemmas conclude these claims for an
    expression, :func:`invariant` assumes their closure for a hole, and ``Inv closes``
    proves that what is assumed follows from what is concluded.  ``indices`` reads
    ``within``/``in_padding`` for tuples (rank-indexed proofs) or for ``Seq``s of unknown
    length (:mod:`proofs.pad_ranks`)."""
    a = z3.Implies(indices.within(k, t), P == U)
    b = z3.Implies(indices.in_padding(k, t, T), zero_or_undef(P))
    c_ = z3.Implies(z3.And(indices.in_padding(k, t, T), IS_UNDEF(P), indices.within(c, t)), IS_UNDEF(U_rho))
    return a, b, c_


#: What each claim of Inv is called in obligations.
INV_PARTS = ("Inv (a): padded = unpadded on the domain (Lemma 6)", "Inv (b): the padding holds 0 or • (Lemma 5 (ii)*)",
             "Inv (c): • in the padding ⟹ • on Ω(k)")

Probe = tuple[str, tuple[z3.ArithRef, ...], tuple[z3.BoolRef, ...]]


def probes_of(*interps: Any) -> list[Probe]:
    """The reads the interpretations made: (allocation, index, path)."""
    return [(rd.name, tuple(rd.index), tuple(rd.path)) for i in interps for rd in i.reads]


def hole_invariant(x: str, t: Sequence[z3.ArithRef], T: Sequence[z3.ArithRef], P: z3.ExprRef, U: z3.ExprRef,
                   probes: Sequence[Probe]) -> list[z3.BoolRef]:
    """The induction hypothesis for hole ``x``: Inv (a) and (b) for every index, (c) for every
    index with ``c`` instantiated at every index where the unpadded semantics reads ``x``
    (``probes``), the summation variables in those indices kept in their ranges (kernel, hole rule)."""
    if not t:
        return [inv_at((), (), t, T, P, U, U)[0]]
    q = index(f"q{x}!", len(t))
    a, b, _ = inv_at(q, q, t, T, select(P, q), select(U, q), select(U, q))
    hyps = [z3.ForAll(q, a), z3.ForAll(q, b)]
    for name, at, path in probes:
        if name != x or len(at) != len(t):
            continue
        hyps += list(path)
        _, _, c_ = inv_at(q, at, t, T, select(P, q), select(U, q), select(U, rho(q, t, at)))
        hyps.append(z3.ForAll(q, c_))
    return hyps


def invariant(inst: Instance, muP: dict, muU: dict, probes: Sequence[Probe]) -> list[z3.BoolRef]:
    """The induction hypothesis Inv for every hole (= allocation) of the instance, and ``x <= ⌈x⌉``."""
    hyps: list[z3.BoolRef] = []
    for x, shape in inst.holes.items():
        t = inst.dims(shape)
        T = tuple(CEIL(M, n) for n in t)
        hyps += [n <= c for n, c in zip(t, T, strict=True)]
        hyps += hole_invariant(x, t, T, muP[x], muU[x], probes)
    return hyps


def inv_obligations(label: str, hyps: Sequence[z3.BoolRef], uses: Sequence[z3.BoolRef],
                    k: Sequence[z3.ArithRef], c: Sequence[z3.ArithRef], t: Sequence[z3.ArithRef],
                    T: Sequence[z3.ArithRef], P: z3.ExprRef, U: z3.ExprRef, U_rho: z3.ExprRef,
                    explain: Any = None, prefer: tuple = (), **tags: Any) -> Iterator[Obligation]:
    """Inv's three claims at a free ``k`` (and ``c``), one obligation each."""
    for part, claim in zip(INV_PARTS, inv_at(k, c, t, T, P, U, U_rho), strict=True):
        yield Obligation(f"{label}: {part}", hyps, z3.Not(claim),
                         (lambda m, part=part: explain(m, part)) if explain else None, prefer, tuple(uses), **tags)


def pad_obligations(inst: Instance) -> Iterator[Obligation]:
    """Report Lemma 5 (i) and Lemma 6 / 5 (ii) as made true, for one constructor instance."""
    yield from wd_obligations(inst, pad=M)
    semP, ip = run(inst, "P", M)
    semU, iu = run(inst, "U", None)
    t = inst.shape
    T = tuple(semP.bound(d) for d in inst.derivation.shape)
    k, c = index("k", len(t)), index("c", len(t))
    vP = ev.denote(inst.expr, k, semP)
    vU = ev.denote(inst.expr, k, semU)
    vU2 = ev.denote(inst.expr, rho(k, t, c), semU)
    hyps = [*inst.hypotheses(), M >= 1, *ip.ceil_facts, *iu.ceil_facts,
            *invariant(inst, semP.store, semU.store, probes_of(iu))]
    uses = sums.facts([*ip.sums, *iu.sums], PAD_SUM_LAWS)
    label = inst.label

    def explain(model: z3.ModelRef, what: str) -> str:
        return f"{label}: {what} fails; " + show(model, [*params_of(inst), ("M", M), ("k", k), ("padded", vP),
                                                         ("unpadded", vU), ("k'", rho(k, t, c))])

    small = (realistic([*ip.ceil_facts, *iu.ceil_facts], M), z3.And(*[v <= 2 for v in inst.shapes.vars.values()]))
    yield from inv_obligations(label, hyps, uses, k, c, t, T, vP, vU, vU2, explain, small, **inst.tags())


def pad_lemma(suffix: str, case: str, cases: tuple[str, ...]) -> Lemma:
    def build() -> Iterator[Obligation]:
        for inst in instances(schemata(case)):
            yield from pad_obligations(inst)

    return Lemma(f"Pad-{suffix}", f"report Lemma 5 (i), (ii)*, Lemma 6, case {suffix}",
                 "padded reads in ⌈Γ⌉; Inv(padded, unpadded) preserved, for all M (ranks <= R)",
                 build, cases=cases, ranks=True, cost=2.0, min_rank=MIN_RANK.get(case, 0), premises=PAD_SUM_LAWS)


# --------------------------------------------------------------------------
# Statements: Theorem 3's step and base
# --------------------------------------------------------------------------


def thm3_step_obligations() -> Iterator[Obligation]:
    """One statement, memories satisfying Inv everywhere: Inv holds afterwards."""
    for stmt, holes in stmt_schemata():
        found = stmt_instance(stmt, holes)
        if found is None:
            continue
        inst, _ = found
        semP, ip = run(inst, "P", M)
        semU, _iu = run(inst, "U", None)
        newP, newU = ev.st_stmt(stmt, semP), ev.st_stmt(stmt, semU)
        x = stmt.target
        t = inst.gamma(x)
        T = domain(inst, x, M)
        k, c = index("k", len(t)), index("c", len(t))
        # Probe runs: [[e]] at k and at ρ(k) in the old memory, to instantiate the hypothesis where it is used.
        probe_U, pu = run(inst, "V", None, store=semU.store)
        probe_P, pp = run(inst, "Q", M, store=semP.store)
        ev.denote(stmt.expr, k, probe_U)
        ev.denote(stmt.expr, rho(k, t, c), probe_U)
        ev.denote(stmt.expr, k, probe_P)
        P, U, U2 = select(newP[x], k), select(newU[x], k), select(newU[x], rho(k, t, c))
        hyps = [*inst.hypotheses(), M >= 1, *ip.ceil_facts, *pp.ceil_facts,
                *[n <= C for n, C in zip(t, T, strict=True)],
                *invariant(inst, semP.store, semU.store, probes_of(pu))]
        uses = sums.facts([*pp.sums, *pu.sums], PAD_SUM_LAWS)
        label = inst.label
        yield from inv_obligations(f"{label}: after St-Stmt", hyps, uses, k, c, t, T, P, U, U2, **inst.tags())
        for y in holes:
            if y != x:
                yield Obligation(f"{label}: {y} unchanged", hyps, z3.Or(newP[y] != semP.store[y],
                                                                        newU[y] != semU.store[y]), **inst.tags())


def padded_store(inst: Instance, muU: dict) -> dict[str, z3.ExprRef]:
    """Report Fig. 13 (d-pad-var), as the reference engine builds it: :func:`eval.d_pad_var` on Z3 terms."""
    interp = ProofInterpretation(inst.shapes, "d-pad-var")
    out: dict[str, z3.ExprRef] = {}
    for x, shape in inst.holes.items():
        t = inst.dims(shape)
        if not t:
            out[x] = muU[x]
            continue
        q = index(f"p{x}!", len(t))
        out[x] = z3.Lambda(list(q), ev.d_pad_var(interp, lambda r, m=muU[x]: select(m, r), q, t))
    return out


def thm3_base_obligations() -> Iterator[Obligation]:
    for r in ranks():
        inst = instantiate(X, {"X": hole_shape("X", r)})
        assert inst is not None
        muU = initial_memory(inst.typed.gamma, "U")
        muP = padded_store(inst, muU)
        t = inst.gamma("X")
        T = tuple(CEIL(M, n) for n in t)
        k, c = index("k", r), index("c", r)
        P, U2 = select(muP["X"], k), select(muU["X"], rho(k, t, c))
        hyps = [*inst.hypotheses(), M >= 1, *[n <= C for n, C in zip(t, T, strict=True)]]
        label = f"μ_pad for X : rank {r}"
        yield from inv_obligations(label, hyps, (), k, c, t, T, P, select(muU["X"], k), U2, rank=r)


def closure_obligations() -> Iterator[Obligation]:
    """The induction closes: what the step lemmas assume of a hole (:func:`hole_invariant`)
    follows from what they conclude of an expression of the hole's type (:func:`inv_at` at
    every ``k`` and ``c``).  An assumption stronger than the conclusion -- (b) as "0 in the
    padding" while the steps conclude "0 or •" -- would make the induction unsound.

    Each assumption ``∀q. A(q)`` is proved for a fresh ``q`` (∀-introduction) from the
    conclusion instantiated at ``(q, q)`` and at ``(q, j)``, ``j`` the index of an arbitrary read
    (∀-elimination); left to Z3, finding those instances took it past the rlimit."""
    for r in ranks():
        t = tuple(z3.Int(f"x{j}") for j in range(1, r + 1))
        T = tuple(CEIL(M, n) for n in t)
        P = z3.Const("P!inv", memory_sort(r))
        U = z3.Const("U!inv", memory_sort(r))
        q, j = index("q!inv", r), index("j!inv", r)

        def concl(k: tuple, c: tuple, t: tuple = t, T: tuple = T, P: z3.ExprRef = P,
                  U: z3.ExprRef = U) -> z3.BoolRef:
            return z3.And(*inv_at(k, c, t, T, select(P, k), select(U, k), select(U, rho(k, t, c))))

        context = [M >= 1, *[n >= 1 for n in t], *[n <= C for n, C in zip(t, T, strict=True)]]
        # The read's path (the ranges of the summation variables in j) is no assumption about the hole.
        def explain(model: z3.ModelRef, t: tuple = t, T: tuple = T, q: tuple = q, j: tuple = j,
                    P: z3.ExprRef = P, U: z3.ExprRef = U, r: int = r) -> str:
            return (f"X : rank {r}: " + show(model, [("M", M), ("x", t), ("⌈x⌉", T), ("q", q), ("j", j),
                                                    ("P(q)", select(P, q)), ("U(q)", select(U, q))])
                    + ": Inv holds there, the hole's assumption does not")

        small = (M == 2, z3.And(*[n <= 2 for n in t]))
        for n, h in enumerate(hole_invariant("X", t, T, P, U, [("X", j, ())]), start=1):
            claim = z3.substitute_vars(h.body(), *reversed(q)) if z3.is_quantifier(h) else h
            yield Obligation(f"X : rank {r}: assumption #{n} of a hole follows from Inv",
                             (*context, concl(q, q), concl(q, j)), z3.Not(claim), explain, small, rank=r)


# --------------------------------------------------------------------------
# Definition 7 and report Lemma 3
# --------------------------------------------------------------------------


def definition7_obligations() -> Iterator[Obligation]:
    """``symbolic.py``'s ``ceil(n, M)`` is the least multiple of M that is >= n, for every M >= 1."""
    n = z3.Int("n")
    c = Z3Interpretation.ceil(None, n, M)  # type: ignore[arg-type]
    hyps = [M >= 1, n >= 0]
    yield Obligation("n <= ⌈n⌉", hyps, z3.Not(n <= c))
    yield Obligation("⌈n⌉ < n + M", hyps, z3.Not(c < n + M))
    yield Obligation("M divides ⌈n⌉", hyps, z3.Not(c % M == 0))


def rounded_typing_obligations(cases: Sequence[str], pad: Any) -> Iterator[Obligation]:
    """Report Lemma 3: Γ ⊢ e : t  ⟹  ⌈Γ⌉ ⊢ e : ⌈t⌉ (the rules' premises survive rounding)."""
    concrete = isinstance(pad, int)

    def ceil(n: z3.ArithRef, facts: list) -> z3.ArithRef:
        if concrete:
            return Z3Interpretation.ceil(None, n, pad)  # type: ignore[arg-type]
        facts.append(n <= CEIL(pad, n))
        return CEIL(pad, n)

    for case in cases:
        for expr, holes, extra in schemata(case):
            inst = instantiate(expr, holes, extra)
            if inst is None:
                continue
            rholes = {x: tuple(f"r{d}" for d in t) for x, t in holes.items()}
            rinst = instantiate(expr, rholes, extra)
            facts: list[z3.BoolRef] = []
            link = [inst.shapes.term(d) >= 1 for t in holes.values() for d in t]
            link += [rinst.shapes.term(f"r{d}") == ceil(inst.shapes.term(d), facts) if rinst else z3.BoolVal(True)
                     for t in holes.values() for d in t]
            label = inst.label + (f", M = {pad}" if concrete else "")
            if rinst is None:
                yield Obligation(f"{label}: typed in ⌈Γ⌉", (), z3.BoolVal(True),
                                 lambda m, label=label: f"{label}: rejected in the rounded context", **inst.tags())
                continue
            want = tuple(ceil(n, facts) for n in inst.shape)
            got = rinst.shape
            same = z3.And(*[a == b for a, b in zip(got, want, strict=True)]) if len(got) == len(want) \
                else z3.BoolVal(False)
            hyps = [*inst.hypotheses(), *link, *facts, *([M >= 1] if not concrete else [])]
            yield Obligation(f"{label}: ⌈Γ⌉ ⊢ e : ⌈t⌉", hyps, z3.Not(z3.And(*rinst.shapes.premises(), same)),
                             lambda m, inst=inst, got=got, want=want, label=label:
                             f"{label}: " + show(m, [*params_of(inst), ("type in ⌈Γ⌉", got), ("⌈t⌉", want)]),
                             **inst.tags())


# --------------------------------------------------------------------------
# Expected refutations: the report's verbatim claims that are false for Core-TeIL
# --------------------------------------------------------------------------


def _program(allocs: dict[str, tuple], stmt: Stmt, inputs: Sequence[str] | None = None) -> Program:
    """A one-statement program; with ``inputs`` the others are unqualified, so they start as •."""
    def qual(x: str) -> Any:
        if inputs is None:
            return None
        return "input" if x in inputs else ("output" if x == stmt.target else None)

    return Program("core", tuple(Alloc(x, t, qual(x)) for x, t in allocs.items()), (stmt,))


def _padded_run(program: Program, inputs: dict[str, Any], pad: int | None) -> dict[str, np.ndarray]:
    """The reference engine's whole padded store after the program (not just the declared region)."""
    typed = ev.check_program(program)
    interp = ev.ArrayInterpretation(typed)
    store = ev.initial_store(typed, interp, inputs, pad)
    return ev.eval_prog(ev.Sem(typed, interp, store, pad))


def unguarded_expa_obligations() -> Iterator[Obligation]:
    """Theorem 3 with the report's unguarded padded ``expa``: red (expa 1 X) sums ⌈1⌉ = 2 copies."""
    from .mutants import BY_NAME, applied  # mutants edits this module's functions: imported late

    with applied(BY_NAME["expa-unguarded"]):
        for r in (0, 1):
            holes = {"X": (1,) * r}
            expr: Expr = Red(Expa(1, X))
            inst = instantiate(expr, holes)
            assert inst is not None
            semU, _iu = run(inst, "U", None, interp_cls=UnrolledInterpretation)
            semP, _ip = run(inst, "P", 2, store=padded_store(inst, semU.store), interp_cls=UnrolledInterpretation)
            k = (z3.IntVal(1),) * r
            vP, vU = ev.denote(expr, k, semP), ev.denote(expr, k, semU)

            def explain(m: z3.ModelRef, vP: Any = vP, vU: Any = vU, r: int = r, mu: dict = semU.store) -> str:
                x = _real(m.eval(select(mu["X"], (z3.IntVal(1),) * r), model_completion=True))
                program = _program({"X": (1,) * r, "Y": (1,) * r}, Stmt("Y", Red(Expa(1, X))))
                data = np.full((1,) * r, x)
                ref_p = ev.evaluate(program, {"X": data}, pad=2)["Y"].ravel()[0]
                ref_u = ev.evaluate(program, {"X": data})["Y"].ravel()[0]
                return (f"M = 2, X = {x:g} (X : {list((1,) * r)}): padded red (expa 1 X) = "
                        + show(m, [("", vP)]).lstrip(" =") + ", unpadded = " + show(m, [("", vU)]).lstrip(" =")
                        + f"; reference engine without the guard: padded {ref_p:g}, unpadded {ref_u:g}")

            one = select(semU.store["X"], (z3.IntVal(1),) * r) == val(1)
            yield Obligation(f"red (expa 1 X), X : rank {r}, M = 2: padded = unpadded", (), vP != vU, explain,
                             (one,))


def zeros_in_padding_obligations() -> Iterator[Obligation]:
    """Report Lemma 5 (ii) / Theorem 2: "padded evaluation leaves zeros in the padding" -- for prod."""
    holes = {"X": hole_shape("X", 1), "Y": hole_shape("Y", 1)}
    expr = Prod(X, Y)
    inst = instantiate(expr, holes)
    assert inst is not None
    pad = 2
    semP, _ip = run(inst, "P", pad)
    muP, muU = semP.store, initial_memory(inst.typed.gamma, "U")
    hyps = list(inst.hypotheses())
    for x in holes:  # the report's hypothesis (b): 0 in the padding; (a): equal on the domain
        t = inst.gamma(x)
        T = tuple(Z3Interpretation.ceil(None, n, pad) for n in t)  # type: ignore[arg-type]
        q = index(f"q{x}!", 1)
        hyps.append(z3.ForAll(q, z3.Implies(in_padding(q, t, T), select(muP[x], q) == ZERO)))
        hyps.append(z3.ForAll(q, z3.Implies(within(q, t), select(muP[x], q) == select(muU[x], q))))
    t = inst.shape
    T = tuple(semP.bound(d) for d in inst.derivation.shape)
    k = index("k", 2)
    vP = ev.denote(expr, k, semP)

    def explain(m: z3.ModelRef) -> str:
        program = _program({"X": (1,), "Y": (1,), "Z": (1, 1)}, Stmt("Z", Prod(X, Y)), inputs=("X",))
        store = _padded_run(program, {"X": np.array([1.0])}, pad)
        return ("M = 2, " + show(m, [*params_of(inst), ("k", k), ("Z(k)", vP), ("X", select(muP["X"], k[:1])),
                                     ("Y", select(muP["Y"], k[1:]))])
                + f"; 0·• = •.  Reference engine, X = [1], Y unset: padded Z = {store['Z'].tolist()}")

    small = (*tuple(v <= 1 for v in inst.shapes.vars.values()), z3.And(*[kj <= 2 for kj in k]))
    yield Obligation("prod X Y, M = 2: the padding of Z is 0", hyps, z3.And(in_padding(k, t, T), vP != ZERO),
                     explain, prefer=(z3.And(*small), select(muP["X"], k[:1]) == val(1),
                                      k[0] == 2))


def converse_obligations() -> Iterator[Obligation]:
    """Inv (c) cannot be an equivalence: U = • on Ω(k) does not force P(k) = • (the initial store)."""
    inst = instantiate(X, {"X": hole_shape("X", 1)})
    assert inst is not None
    muU = initial_memory(inst.typed.gamma, "U")
    muP = padded_store(inst, muU)
    t = inst.gamma("X")
    T = tuple(Z3Interpretation.ceil(None, n, 2) for n in t)  # type: ignore[arg-type]
    k, c = index("k", 1), index("c", 1)
    everywhere = z3.ForAll(c, z3.Implies(within(c, t), IS_UNDEF(select(muU["X"], rho(k, t, c)))))
    P = select(muP["X"], k)
    yield Obligation("X : [n], M = 2: U = • on Ω(k) ⟹ P(k) = •", inst.hypotheses(),
                     z3.And(in_padding(k, t, T), everywhere, z3.Not(IS_UNDEF(P))),
                     prefer=tuple(v <= 1 for v in inst.shapes.vars.values()),
                     explain=lambda m: "M = 2, " + show(m, [*params_of(inst), ("k", k), ("P(k)", P)])
                                       + ", while the whole domain of X is • (never written): the padding stays 0")


# -- IEEE floats ---------------------------------------------------------------

F64 = z3.Float64()
RNE = z3.RNE()


class FloatInterpretation(UnrolledInterpretation):
    """The reference engine's arithmetic in Z3's IEEE sort: float64, • as NaN (eval.ArrayInterpretation)."""

    def arith(self, op: str, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
        if op == "add":
            return z3.fpAdd(RNE, a, b)
        if op == "sub":
            return z3.fpSub(RNE, a, b)
        if op == "mul":
            return z3.fpMul(RNE, a, b)
        return z3.If(z3.fpIsZero(a), z3.fpPlusZero(F64), z3.If(z3.fpIsZero(b), z3.fpNaN(F64),
                                                               z3.fpDiv(RNE, a, b)))

    def plus(self, a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
        return self.arith("add", a, b)

    def guard(self, j: Any, d: Any, v: z3.ExprRef) -> z3.ExprRef:
        return z3.If(j <= d, v, z3.fpPlusZero(F64))

    def sum(self, n: Any, body: Any, node: Expr) -> z3.ExprRef:
        count = z3.simplify(n).as_long()
        acc = body(z3.IntVal(1))  # as ArrayInterpretation.sum: start from the first term
        for m in range(2, count + 1):
            acc = self.plus(acc, body(z3.IntVal(m)))
        return acc


def _real(v: z3.ExprRef) -> float:
    if z3.is_fp_value(v):
        if v.isNaN():
            return math.nan
        if v.isInf():
            return -math.inf if v.isNegative() else math.inf
        return float(z3.simplify(z3.fpToReal(v)).as_fraction())
    if v.decl().name() == "val":
        return float(z3.simplify(v.arg(0)).as_fraction())
    return math.nan


def float_obligations() -> Iterator[Obligation]:
    """Theorem 3 in float64: Z = red (prod X Y) with X, Y : [1], M = 2 -- 0 · inf = NaN enters the sum."""
    holes = {"X": (1,), "Y": (1,), "Z": (1,)}
    expr = Red(Prod(X, Y))
    inst = instantiate(expr, holes)
    assert inst is not None
    muU = {x: z3.Array(f"F_{x}", z3.IntSort(), F64) for x in holes}
    q = z3.Int("q")
    muP = {x: z3.Lambda([q], z3.If(z3.And(q >= 1, q <= 1), muU[x][q], z3.fpPlusZero(F64))) for x in holes}
    semP, _ = run(inst, "P", 2, store=muP, interp_cls=FloatInterpretation)
    semU, _ = run(inst, "U", None, store=muU, interp_cls=FloatInterpretation)
    k = (z3.IntVal(1),)
    vP, vU = ev.denote(expr, k, semP), ev.denote(expr, k, semU)

    def explain(m: z3.ModelRef) -> str:
        x, y = (_real(m.eval(muU[n][1], model_completion=True)) for n in ("X", "Y"))
        program = _program(holes, Stmt("Z", expr), inputs=("X", "Y"))
        data = {"X": np.array([x]), "Y": np.array([y])}
        with np.errstate(all="ignore"):
            ref_p = _padded_run(program, data, 2)["Z"][0]
            ref_u = _padded_run(program, data, None)["Z"][0]
            try:
                ev.evaluate(program, data, pad=2)
                guard = "ct.evaluate(pad=2) does not notice"
            except TeilError as exc:
                guard = f"ct.evaluate(pad=2) refuses ({type(exc).__name__})"
        return (f"M = 2, X = [{x:g}], Y = [{y:g}]: padded Z = {_real(m.eval(vP)):g}, unpadded Z = "
                f"{_real(m.eval(vU)):g} (0 · {y:g} in the padding); reference engine's stores: padded "
                f"Z = {ref_p:g}, unpadded {ref_u:g}; {guard}")

    one = z3.FPVal(1.0, F64)
    yield Obligation("red (prod X Y), float64, M = 2: padded = unpadded on the domain", (),
                     z3.And(z3.fpIsNaN(vP), z3.Not(z3.fpIsNaN(vU))), explain, prefer=(muU["X"][1] == one,))


# --------------------------------------------------------------------------
# The lemmas
# --------------------------------------------------------------------------


def lemmas() -> list[Lemma]:
    out = [Lemma("Definition 7", "report Definition 7 (rounding); symbolic.py ceil",
                 "for all M >= 1, n >= 0: n <= ⌈n⌉ < n + M and M | ⌈n⌉", definition7_obligations)]
    rules_but_expa = [case for _, case, _, _ in STEPS if case != "Expa"]
    out.append(Lemma("Lemma 3*", "report Lemma 3 (all rules but T-Expa)",
                     "Γ ⊢ e : t ⟹ ⌈Γ⌉ ⊢ e : ⌈t⌉ for every rule except T-Expa, all M (ranks <= R)",
                     lambda: rounded_typing_obligations(rules_but_expa, M), ranks=True))
    out.append(Lemma("Lemma 3 (verbatim, expa)", "report Lemma 3, case T-Expa: EXPECTED REFUTATION",
                     "⌈Γ⌉ ⊢ expa d e : ⌈[d] ++ t⌉ -- false: the extent d is syntax, ⌈Γ⌉ does not round it",
                     lambda: rounded_typing_obligations(["Expa"], 2), expect=Expect.REFUTED))
    for suffix, case, cases, _ in STEPS:
        out.append(pad_lemma(suffix, case, cases))
    out.append(Lemma("Inv closes", "report Lemma 6 (the induction hypothesis is the conclusion)",
                     "Inv concluded for an expression at every k implies the hypothesis assumed of a hole of its "
                     "type (ranks <= R)", closure_obligations, ranks=True))
    pads = tuple(f"Pad-{s}" for s, _, _, _ in STEPS)
    out.append(Lemma("Lemma 5 (i)", "report Lemma 5 (i); Corollary 3 (reads)",
                     "padded evaluation reads only inside ⌈Γ⌉ (structural induction), every rank and M",
                     None, Rule.STRUCTURAL, premises=tuple(f"Pad-WD-{s} (all ranks)" for s, _, _, _ in STEPS)))
    out.append(Lemma("Lemma 6 & 5 (ii)*", "report Lemma 6 and Lemma 5 (ii), as made true",
                     "Inv([[e]] padded, [[e]] unpadded) for every e, given Inv for the store", None,
                     Rule.STRUCTURAL, premises=(*pads, "Inv closes")))
    out.append(Lemma("Lemma 4.5 (padded)", "report Fig. 14 ev-pad-stmt; Theorem 2 step; Corollary 3 (writes)",
                     "padded St-Stmt writes exactly ⌈Γ(x)⌉, reads the pre-state, keeps the rest",
                     lambda: st_stmt_obligations(M), ranks=True, cost=1.5))
    out.append(Lemma("Theorem 2*", "report Theorem 2 (progress with a padded store), as made true",
                     "an ok program evaluates fully with padding, dom = ⌈Γ⌉; padding holds 0 or • (Inv)",
                     None, Rule.STATEMENTS, premises=("Lemma 5 (i)", "Lemma 4.5 (padded, all ranks)", "St-Seq",
                                                      "Theorem 3* (all ranks)")))
    out.append(Lemma("Corollary 3", "report Corollary 3 (safety with a padded store)",
                     "no out-of-bounds access to the padded store", None, Rule.COROLLARY,
                     premises=("Lemma 5 (i)", "Lemma 4.5 (padded, all ranks)")))
    out.append(Lemma("Theorem 3 (step)", "report Theorem 3, step N -> N+1 (St-Stmt)",
                     "Inv for every allocation before x = e ⟹ Inv after (self-reference included)",
                     thm3_step_obligations, ranks=True, cost=3.0, premises=("Inv closes",)))
    out.append(Lemma("Theorem 3*", "report Theorem 3 (simulation), as made true",
                     "padded = unpadded on Γ after every program, padding 0 or • as Inv says; base: μ_pad",
                     thm3_base_obligations, Rule.STATEMENTS, ranks=True,
                     premises=("Theorem 3 (step)", "Lemma 6 & 5 (ii)*", "Lemma 4.5 (padded)", "St-Seq",
                               "Inv closes")))
    out.append(Lemma("Theorem 3 (unguarded expa)", "report Theorem 3 with the report's expa: EXPECTED REFUTATION",
                     "padded = unpadded with an unguarded padded expa -- false: red (expa d x) sums ⌈d⌉ copies",
                     unguarded_expa_obligations, expect=Expect.REFUTED))
    out.append(Lemma("Lemma 5 (ii) (verbatim)", "report Lemma 5 (ii), Theorem 2 'zeros': EXPECTED REFUTATION",
                     "padded evaluation leaves zeros in the padding -- false: 0 · • = •",
                     zeros_in_padding_obligations, expect=Expect.REFUTED))
    out.append(Lemma("Inv (c) converse", "strength of Inv: EXPECTED REFUTATION",
                     "U = • on Ω(k) ⟹ P(k) = • -- false, so (c) cannot be an equivalence",
                     converse_obligations, expect=Expect.REFUTED))
    out.append(Lemma("Theorem 3 (float64)", "report Theorem 3 in IEEE arithmetic: EXPECTED REFUTATION",
                     "padded = unpadded in float64 -- false: ±inf · 0 = NaN in the padding reaches the sum",
                     float_obligations, expect=Expect.REFUTED, cost=2.0))
    return out


__all__ = ["M", "lemmas"]
