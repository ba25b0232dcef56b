"""The padding invariant for every rank: report Lemma 6 (and 5 (ii)) over shapes of unknown length.

:mod:`proofs.padding` proves that every Core constructor preserves the padding
invariant ``Inv(P, U)`` on holes of each rank up to ``RANK_BOUND``.  Here the
same step is proved once for all ranks, with the machinery of
:mod:`proofs.ranks`: a hole ``X`` has a shape ``T`` of symbolic length (a
:class:`~core_teil.semantics.sequences.Seq`), typing.py types the schema
(recording its premises), and eval.py's equation runs twice on a multi-index
``k`` of symbolic length, once padded (``pad = M``, symbolic) and once not.
The two memories of a hole are uninterpreted functions of the multi-index,
and the induction hypothesis is :func:`proofs.padding.inv_at` quantified over
multi-indices ``q`` of the hole's rank, with claim (c) instantiated, as in
the ranked proof, at every index where the unpadded equation reads the hole.

Nothing about the invariant is restated: its three claims are ``inv_at``'s,
read over ``Seq``s through the same ``within``/``in_padding``/``rho`` shape
(here :meth:`Seq.within` and a position-wise ``ρ``).  The sums of ``red`` and
``contr`` use instances of the proved sum laws (``PAD_SUM_LAWS``), taken as in
the ranked proof by :func:`proofs.sums.facts`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import z3

from core_teil.errors import TeilError
from core_teil.lang.syntax import Var
from core_teil.semantics import eval as ev
from core_teil.semantics import symbolic as sym
from core_teil.semantics.sequences import RankUndecided, Seq, as_seq

from . import sums
from .kernel import EVERY_RANK, RLIMIT, Lemma, Obligation, Rule, case_of
from .padding import INV_PARTS, PAD_SUM_LAWS, M, inv_at
from .ranks import (
    GENERIC_STEPS,
    Generic,
    GenericInterpretation,
    Read,
    generic_schemata,
    padding,
    positive,
    stmt_schemata,
    type_schema,
    typed_stmts,
)
from .schema import CEIL

INDEX = z3.ArraySort(z3.IntSort(), z3.IntSort())
VALUES = z3.ArraySort(z3.IntSort(), sym.Value)


@dataclass(frozen=True)
class Memory:
    """One hole's memory, padded (``P``) or not (``U``): an uninterpreted function of the multi-index."""

    name: str
    tag: str

    def function(self) -> z3.FuncDeclRef:
        return z3.Function(f"{self.tag}({self.name})", INDEX, z3.IntSort(), sym.Value)

    def at(self, k: Seq) -> z3.ExprRef:
        """The value at ``k``; positions outside ``0..|k|-1`` are set to 0 first, so that two
        multi-indices that agree on their positions read the same element (a ``Seq``'s array is
        a total function, and its values beyond the length mean nothing)."""
        j = z3.Int("j!seq")
        arr = z3.Lambda([j], z3.If(z3.And(j >= 0, j < k.length), k.arr[j], 0))
        return self.function()(arr, k.length)


@dataclass(frozen=True)
class SumRecord:
    """What :func:`proofs.sums.facts` reads of a sum: its term, variable and body."""

    var: z3.ArithRef
    body: z3.ExprRef
    term: z3.ExprRef


@dataclass
class PadInterpretation(GenericInterpretation):
    """:class:`proofs.ranks.GenericInterpretation` that also records its sums (for the sum laws)."""

    sums: list[SumRecord] = field(default_factory=list)
    #: Names of the summation variables: numbered per run, not per process, so that an obligation
    #: is the same term whatever was built before it (Z3's search depends on the names).
    tag: str = ""
    names: Iterator[int] = field(default_factory=itertools.count)

    #: St-Stmt's multi-index (``domain``): the one the claims are about, so that the written
    #: value and the reads are terms in it (a fresh name would have to be substituted away).
    at: Seq | None = None

    def domain(self, bounds: Any, stmt: Any) -> Seq:
        if self.at is None:
            return super().domain(bounds, stmt)
        self.path.append(self.at.within(as_seq(bounds)))
        return self.at

    def summation_variable(self) -> z3.ArithRef:
        return z3.Int(f"m!{self.tag}{next(self.names)}")

    def summed(self, m: z3.ArithRef, body: z3.ExprRef, term: z3.ExprRef) -> None:
        self.sums.append(SumRecord(m, body, term))


def rho(k: Seq, t: Seq, c: Seq) -> Seq:
    """:func:`proofs.padding.rho` at every position: ``k``'s in-domain coordinates, ``c``'s elsewhere."""
    j = z3.Int("j!seq")
    return Seq(z3.Lambda([j], z3.If(k.arr[j] <= t.arr[j], k.arr[j], c.arr[j])), k.length)


def out_at(k: Seq, t: Seq, p: z3.ArithRef) -> z3.BoolRef:
    """Position ``p`` of ``k`` is outside ``1..t[p]``: a witness that ``k`` is not within ``t``."""
    return z3.And(p >= 0, p < k.length, z3.Or(k.arr[p] < 1, k.arr[p] > t.arr[p]))


@dataclass(frozen=True)
class SeqIndices:
    """``within`` and ``in_padding`` of :func:`proofs.padding.inv_at`, over ``Seq``s.

    "``k`` is not within ``t``" needs a position.  In a claim (``positions is None``) it is
    the free constant ``witness``: proving the claim for every ``witness`` proves it for
    "some position is outside".  In an instance of the hypothesis at a read ``r`` it is a
    choice among ``positions`` (the witness and its images under the index operations:
    shifted by a constant or by a hole's rank); that premise implies "``r`` is not within",
    so the instance follows from Inv, and it names the positions Z3 must look at.  With no
    witness at all it is "not within" itself, the invariant as stated."""

    witness: z3.ArithRef | None = None
    positions: tuple[z3.ArithRef, ...] | None = None

    #: "within" as an equation between arrays, or as :meth:`Seq.within`'s ``ForAll``.
    arrays: bool = True

    def within(self, k: Seq, t: Seq) -> z3.BoolRef:
        if not self.arrays:
            return k.within(t)
        j = z3.Int("j!seq")
        ok = z3.Lambda([j], z3.Or(j < 0, j >= k.length, z3.And(k.arr[j] >= 1, k.arr[j] <= t.arr[j])))
        return z3.And(k.length == t.length, ok == z3.K(z3.IntSort(), z3.BoolVal(True)))

    def outside(self, k: Seq, t: Seq) -> z3.BoolRef:
        if self.witness is None:
            return z3.Not(self.within(k, t))
        ps = (self.witness,) if self.positions is None else self.positions
        return z3.Or(k.length != t.length, *(out_at(k, t, p) for p in ps))

    def in_padding(self, k: Seq, t: Seq, T: Seq) -> z3.BoolRef:
        return z3.And(self.within(k, T), self.outside(k, t))


def candidates(witness: z3.ArithRef, shifts: range, ranks: list[z3.ArithRef]) -> tuple[z3.ArithRef, ...]:
    """Where an index operation of eval.py can move position ``witness``: by ``shifts`` (transp
    swaps neighbours, diag, proj and expa put or drop one position in front), to the front (0,
    1: a projection index), and back by a hole's rank (the second factor of prod)."""
    return (z3.IntVal(0), z3.IntVal(1), *(witness + d for d in shifts), *(witness - r for r in ranks))


@dataclass(frozen=True)
class Hints:
    """What a case's proof names for Z3, as a tactic script would in Coq: which claims of Inv on
    the holes each claim on the node is derived from (by default its own kind, and (c) also
    (b): ``0/• = 0`` tells • from 0), and how far a position may move (``candidates``).  Every
    choice is sound (instances of Inv, premises that imply "not within"); it only decides
    whether Z3 finishes within its rlimit."""

    needs: tuple[tuple[str, str], ...] = (("a", "a"), ("b", "b"), ("c", "bc"))
    shifts: range = range(-1, 2)
    #: Assume ``n <= ⌈n⌉`` (:data:`proofs.ranks.CEIL_AXIOM`, proved of the engines' rounding);
    #: a case whose reads stay inside the rounded type without it is better off without.
    ceil_axiom: bool = True
    #: "within" as an equation between arrays, or as a ``ForAll`` over positions.
    arrays: bool = True
    #: The rlimit of each obligation, in units of the kernel's ``RLIMIT``.
    rlimit: int = 1


#: The per-case hints; a case not listed takes the defaults.
HINTS: dict[str, Hints] = {
    # transp's (b) took 1M of rlimit alone and ran past 8M after the whole test suite had run in
    # the process (the cause was not found): it is given four times the kernel's limit.
    "Transp": Hints(needs=(("a", "a"), ("b", "b"), ("c", "c")), ceil_axiom=False, arrays=False, rlimit=4),
    # A Σ: its padded terms are 0 or • ((b)); a • among them reaches the unpadded sum through (c);
    # contr puts two positions in front.
    **dict.fromkeys(("Red", "Contr"), Hints(needs=(("a", "abc"), ("b", "b"), ("c", "abc")), shifts=range(-2, 3))),
}


def hole_hypotheses(x: str, t: Seq | tuple, T: Seq | tuple, P: Memory, U: Memory, reads: list[Any],
                    probes: list[Any], indices: SeqIndices) -> dict[str, list[z3.BoolRef]]:
    """Inv for hole ``x`` (the structural induction hypothesis), claim by claim, as instances at
    the indices the padded equation reads ``x`` at (``reads``); (c) in its Ω form with ``c`` at
    every index the unpadded equation reads ``x`` at for ``ρ(k, c)`` (``probes``).  Each
    instance follows from Inv on ``x`` (for every multi-index), so a proof from them is a proof
    from Inv; naming the instances spares Z3 a search among quantifiers over arrays."""
    if isinstance(t, tuple) and not t:
        e = Seq.of(())
        return {key: [P.at(e) == U.at(e)] for key in "abc"}  # a scalar has no padding: (a) is all of Inv
    t, T = as_seq(t), as_seq(T)
    out: dict[str, list[z3.BoolRef]] = {"a": [], "b": [], "c": []}
    for rd in reads:
        a, b, _ = inv_at(rd.index, rd.index, t, T, P.at(rd.index), U.at(rd.index), U.at(rd.index), indices)
        out["a"].append(a)
        out["b"].append(b)
        out["c"] += [omega_form(rd.index, probe, t, T, P, U, indices) for probe in probes]
    return out


def agree(c: Seq, q: Seq, t: Seq) -> z3.BoolRef:
    """``c`` agrees with ``q`` wherever ``q`` is in the domain ``t`` (so ``c ∈ Ω(q)`` if also ``c <= t``)."""
    j = z3.Int("j!seq")
    same = z3.Lambda([j], z3.Or(j < 0, j >= q.length, q.arr[j] > t.arr[j], c.arr[j] == q.arr[j]))
    return z3.And(c.length == q.length, same == z3.K(z3.IntSort(), z3.BoolVal(True)))


def omega_form(q: Seq, c: Seq, t: Seq, T: Seq, P: Memory, U: Memory, indices: SeqIndices) -> z3.BoolRef:
    """Inv (a) and (c) at ``q`` for an element ``c`` of Ω(q) given as itself rather than as
    ``ρ(q, c)``: • at ``q`` ⟹ • at ``c`` (in the domain Ω(q) = {q} and (a) applies; in the
    padding (c) does).  :func:`omega_obligations` proves that it follows from Inv (a) and (c)
    as :func:`proofs.padding.inv_at` states them."""
    return z3.Implies(z3.And(indices.within(q, T), sym.Value.is_undef(P.at(q)), indices.within(c, t),
                             agree(c, q, t)), sym.Value.is_undef(U.at(c)))


def omega_obligations() -> Iterator[Obligation]:
    """The Ω form of Inv (c) is implied by Inv (c): for ``c ∈ Ω(q)``, ``ρ(q, c) = c``."""
    q, c, t, T = Seq.fresh("q"), Seq.fresh("c"), Seq.fresh("t"), Seq.fresh("T")
    P, U = Memory("X", "P"), Memory("X", "U")
    indices = SeqIndices()  # "not within", as inv_at states it
    a, _, c_ = inv_at(q, c, t, T, P.at(q), U.at(q), U.at(rho(q, t, c)), indices)
    yield Obligation("Inv (a), (c) ⟹ the Ω form (all ranks)", [a, c_],
                     z3.Not(omega_form(q, c, t, T, P, U, indices)))
    # The step lemmas' readings of "within" and "not within" are Seq.within's.
    k, p = Seq.fresh("k"), z3.Int("p!enc")
    as_arrays, as_forall = SeqIndices(arrays=True), SeqIndices(arrays=False)
    yield Obligation("within as arrays ⟺ Seq.within (all ranks)", (),
                     z3.Not(as_arrays.within(k, t) == k.within(t)))
    yield Obligation("within as a ForAll is Seq.within", (), z3.Not(as_forall.within(k, t) == k.within(t)))
    for shifts in {h.shifts for h in (Hints(), *HINTS.values())}:
        hint = SeqIndices(p, candidates(p, shifts, [t.length, T.length]))
        yield Obligation(f"an out position among {len(hint.positions or ())} candidates ⟹ not within (all ranks)",
                         [hint.outside(k, t)], k.within(t))
    w = z3.Int("w!enc")
    yield Obligation("not within, same length ⟹ some position out (a claim for every witness covers the padding)",
                     [k.length == t.length, z3.ForAll([w], z3.Not(out_at(k, t, w)))], z3.Not(k.within(t)))


@dataclass
class Sums:
    """The Σs of the three runs, each named by an array constant ``H`` with its definition
    ``∀m. H[m] = body(m)`` (pattern ``H[m]``): the sum laws are then about ``H``, and the
    hypothesis instances under a binder are triggered by the terms ``H[m0]`` the laws' premises
    make, not by the bodies, whose multi-indices are lambdas in ``m``."""

    records: list[tuple[str, SumRecord, z3.ExprRef]] = field(default_factory=list)

    @staticmethod
    def of(runs: dict[str, PadInterpretation]) -> Sums:
        out = Sums()
        for tag, interp in runs.items():
            for n, s in enumerate(interp.sums):
                out.records.append((tag, s, z3.Const(f"Σ{tag}.{n}", VALUES)))
        # A definition is conservative only for a name of its own (two sums under one name would
        # assert that their bodies agree, which Inv does not say).
        names = [str(H) for _, _, H in out.records] + [str(s.var) for _, s, _ in out.records]
        if len(set(names)) != len(names):
            raise ValueError(f"Σ names used twice: {names}")
        return out

    @property
    def definitions(self) -> list[z3.BoolRef]:
        return [z3.ForAll([s.var], H[s.var] == s.body, patterns=[H[s.var]]) for _, s, H in self.records]

    def abstract(self, v: z3.ExprRef) -> z3.ExprRef:
        pairs = [(s.term, sym.SUM(H, s.term.arg(1))) for _, s, H in self.records]
        return z3.substitute(v, *pairs) if pairs else v

    def laws(self) -> list[z3.BoolRef]:
        """Instances of the proved sum laws (:func:`proofs.sums.facts`) for the named sums."""
        return sums.facts([SumRecord(s.var, H[s.var], sym.SUM(H, s.term.arg(1)))  # type: ignore[misc]
                           for _, s, H in self.records], PAD_SUM_LAWS)

    def binder(self, index: Seq) -> tuple[SumRecord, z3.ExprRef] | None:
        """The padded Σ whose variable occurs in ``index`` (a read under its binder), if any."""
        for tag, s, H in self.records:
            if tag == "P" and (sums.occurs(s.var, index.arr) or sums.occurs(s.var, index.length)):
                return s, H
        return None

    def binds(self, h: z3.BoolRef) -> bool:
        return any(sums.occurs(s.var, h) for _, s, _ in self.records)

    def terms(self, index: Seq, under: tuple[SumRecord, z3.ExprRef] | None) -> list[Seq]:
        """An unpadded read as probes: as it is if no Σ binds it, else at the Σ's first term
        and (under a padded Σ) at the padded term."""
        for tag, s, _ in self.records:
            if tag != "P" and sums.occurs(s.var, index.arr):
                vals = [z3.IntVal(1), *([under[0].var] if under else [])]
                return [Seq(z3.substitute(index.arr, (s.var, v)), z3.substitute(index.length, (s.var, v)))
                        for v in vals]
        return [index]

    def under(self, f: z3.BoolRef, binder: tuple[SumRecord, z3.ExprRef] | None) -> z3.BoolRef:
        """``f`` (an instance at a read under the padded Σ's variable ``m``) for every ``m`` in its
        range, with the unpadded Σs' definitions at ``1`` and ``m`` (so that their ``H`` terms
        exist where the laws look), triggered by ``H_P[m]``."""
        if binder is None:
            return f
        s, H = binder
        m = s.var
        links = [U[v] == z3.substitute(u.body, (u.var, v)) for tag, u, U in self.records if tag != "P"
                 for v in (z3.IntVal(1), m)]
        return z3.ForAll([m], z3.Implies(z3.And(m >= 1, m <= s.term.arg(1)), z3.And(f, *links)), patterns=[H[m]])


def simplify(f: z3.BoolRef) -> z3.BoolRef:
    """``f`` simplified (Python's slice clamping leaves If-towers on constants, ``If(0 < 0, ...)``),
    in a context of its own: Z3 orders the arguments of ``and``/``+`` by term id, and ids in the
    shared context depend on everything built before, so simplifying there made the same
    obligation proved in one run and left unknown in another."""
    ctx = z3.Context()
    return z3.simplify(f.translate(ctx)).translate(f.ctx)


@dataclass(frozen=True)
class Runs:
    """eval.py run three times on one node: padded at ``k``, unpadded at ``k`` and at ``ρ(k, c)``,
    over the holes' memories ``P(x)``/``U(x)``; ``t``/``T`` the node's type, unpadded and padded."""

    label: str
    case: str
    holes: dict[str, Seq | tuple]
    assumed: tuple[z3.BoolRef, ...]
    interps: tuple[PadInterpretation, PadInterpretation, PadInterpretation]
    sems: tuple[ev.Sem, ev.Sem]
    t: Seq
    T: Seq
    k: Seq
    c: Seq

    @staticmethod
    def of(label: str, case: str, holes: dict[str, Seq | tuple], typed: Any, assumed: list[z3.BoolRef],
           shape: Any) -> Runs:
        ip, iu, iu2 = PadInterpretation(tag="P"), PadInterpretation(tag="U"), PadInterpretation(tag="U2")
        semP = ev.Sem(typed, ip, {x: Memory(x, "P") for x in holes}, M)
        semU = ev.Sem(typed, iu, {x: Memory(x, "U") for x in holes}, None)
        t, T = as_seq(semU.bounds(shape)), as_seq(semP.bounds(shape))
        return Runs(label, case, holes, tuple(assumed), (ip, iu, iu2), (semP, semU), t, T,
                    Seq.fresh("k"), Seq.fresh("c"))

    def sem(self, which: int) -> ev.Sem:
        """The semantics of run ``which`` (0 padded, 1 and 2 unpadded), each with its own recorder."""
        semP, semU = self.sems
        return ev.Sem(semU.typed if which else semP.typed, self.interps[which],
                      (semU if which else semP).store, None if which else M)

    def claims(self, vP: z3.ExprRef, vU: z3.ExprRef, vU2: z3.ExprRef,
               not_paths: tuple[z3.BoolRef, ...] = ()) -> Iterator[Obligation]:
        """Inv's three claims of ``(vP, vU)`` at ``k`` (``vU2`` the unpadded value at ``ρ(k, c)``),
        from Inv on every hole: instances at the indices the runs read the holes at.
        ``not_paths``: premises of the runs' paths that are not about the reads (St-Stmt's
        domain), left out of the hypotheses."""
        ip, iu, iu2 = self.interps
        t, T, k, c = self.t, self.T, self.k, self.c
        hints = HINTS.get(self.case.split(".")[0], Hints())
        hyps = [*(h for s in self.holes.values() for h in positive(s)), *self.assumed,
                *(padding(M) if hints.ceil_axiom else [M >= 1]), k.length == t.length, c.length == t.length]
        sigma = Sums.of({"P": ip, "U": iu, "U2": iu2})
        vP, vU, vU2 = (sigma.abstract(v) for v in (vP, vU, vU2))
        witness = z3.Int("p!witness")
        ranks = [h.length for h in self.holes.values() if isinstance(h, Seq)]
        indices = SeqIndices(witness, candidates(witness, hints.shifts, ranks), hints.arrays)
        semP, semU = self.sems
        inv: dict[str, list[z3.BoolRef]] = {"a": [], "b": [], "c": []}
        for x, shape in self.holes.items():
            tx, Tx = semU.bounds(shape), semP.bounds(shape)
            for rd in (rd for rd in ip.reads if rd.name == x):  # the padded reads
                m = sigma.binder(rd.index)
                # unpadded reads, at k and ρ(k, c); under a Σ, at its first term and at the padded one's
                probes = [p for i in (iu, iu2) for r in i.reads if r.name == x for p in sigma.terms(r.index, m)]
                for part, hs in hole_hypotheses(x, tx, Tx, Memory(x, "P"), Memory(x, "U"), [rd], probes,
                                                indices).items():
                    inv[part] += [sigma.under(h, m) for h in hs]
        inv["c"] += [h for i in (iu, iu2) for r in i.reads for h in r.path
                     if not sigma.binds(h) and not any(h.eq(n) for n in not_paths)]
        needs = dict(hints.needs)
        laws = tuple(sigma.laws())
        claim_indices = SeqIndices(witness, None, hints.arrays)
        for name, part, claim in zip("abc", INV_PARTS, inv_at(k, c, t, T, vP, vU, vU2, claim_indices), strict=True):
            from_holes = [h for kind in needs[name] for h in inv[kind]]
            yield Obligation(f"{self.label}: {part} (all ranks)",
                             [simplify(h) for h in (*hyps, *sigma.definitions, *from_holes)], simplify(z3.Not(claim)),
                             lambda m, part=part: f"{self.label}: {part} fails (rank "
                             f"{m.eval(t.length, model_completion=True)})", prefer=(t.length <= 8,), uses=laws,
                             case=self.case, rlimit=hints.rlimit * RLIMIT, search=(t.length <= 16,))


def pad_generic_obligations(g: Generic) -> Iterator[Obligation]:
    """For ``k`` of the node's padded type (every rank, every ``M``): Inv's three claims, from
    Inv on every hole."""
    ts = type_schema(g)
    if isinstance(ts, Obligation):
        yield ts
        return
    runs = Runs.of(g.label, g.case, g.holes, ts.typed, ts.oracle.assumed, ts.derivation.shape)
    try:
        vP = ev.denote(g.expr, runs.k, runs.sem(0))
        vU = ev.denote(g.expr, runs.k, runs.sem(1))
        vU2 = ev.denote(g.expr, rho(runs.k, runs.t, runs.c), runs.sem(2))
    except (RankUndecided, z3.Z3Exception, TypeError) as exc:
        yield Obligation(f"{g.label}: eval.py runs at every rank", (), z3.BoolVal(True),
                         lambda m, exc=exc: f"{g.label}: the equation needs a concrete rank: {exc}", case=g.case)
        return
    yield from runs.claims(vP, vU, vU2)


# --------------------------------------------------------------------------
# Statements: Theorem 3 for every rank (step, base, and the closure of Inv)
# --------------------------------------------------------------------------


def thm3_step_generic_obligations() -> Iterator[Obligation]:
    """Report Theorem 3, step N -> N+1, at every rank: eval.py's St-Stmt run padded and
    unpadded on memories satisfying Inv; Inv holds of the target afterwards (every other
    allocation is kept).  The statements are :func:`proofs.ranks.stmt_schemata`'s: a
    statement that reads its own target (the pre-state), transposes it onto itself, or
    reduces into it."""
    for g in stmt_schemata():
        (stmt,) = g.stmts
        label = f"{g.label}: after St-Stmt"
        try:
            typed, oracle = typed_stmts(g)
        except (TeilError, RankUndecided, z3.Z3Exception) as exc:
            yield Obligation(f"{label}: ok", (), z3.BoolVal(True),
                             lambda m, exc=exc, label=label: f"{label}: OK-Stmt rejected it: {exc}")
            continue
        x = stmt.target
        runs = Runs.of(label, case_of(stmt.expr), g.holes, typed, oracle.assumed, g.holes[x])
        for interp, at in zip(runs.interps, (runs.k, runs.k, rho(runs.k, runs.t, runs.c)), strict=True):
            interp.at = at
        try:
            news = [ev.st_stmt(stmt, runs.sem(n)) for n in range(3)]
        except (RankUndecided, z3.Z3Exception, TypeError) as exc:
            yield Obligation(f"{label}: St-Stmt runs at every rank", (), z3.BoolVal(True),
                             lambda m, exc=exc, label=label: f"{label}: St-Stmt needs a concrete rank: {exc}")
            continue
        writes = [w for i in runs.interps for w in i.writes]
        ok = [w.name for w in writes] == [x] * 3 and all(set(new) == set(g.holes) for new in news)
        yield Obligation(f"{label}: one update per run, of {x}", (), z3.BoolVal(not ok),
                         lambda m, writes=writes, label=label: f"{label}: updates {[w.name for w in writes]}")
        if not ok:
            continue
        vP, vU = news[0][x].at(runs.k), news[1][x].at(runs.k)
        vU2 = news[2][x].at(rho(runs.k, runs.t, runs.c))
        yield from runs.claims(vP, vU, vU2, tuple(w.domain for w in writes))
        for y in g.holes:
            if y != x:
                kept = all(new[y] is sem.store[y] for new, sem in zip(news, (runs.sem(n) for n in range(3)),
                                                                       strict=True))
                yield Obligation(f"{label}: {y} kept", (), z3.BoolVal(not kept),
                                 lambda m, y=y, label=label: f"{label}: St-Stmt changed {y}")


@dataclass(frozen=True)
class PaddedInitial:
    """μ_pad(x), report Fig. 13 (d-pad-var), as the reference engine builds it:
    :func:`eval.d_pad_var` over the unpadded memory, at a multi-index of any length."""

    original: Memory
    shape: Seq

    def at(self, k: Seq) -> z3.ExprRef:
        return ev.d_pad_var(GenericInterpretation(), lambda q: self.original.at(as_seq(q)), k, self.shape)


def thm3_base_generic_obligations() -> Iterator[Obligation]:
    """Report Theorem 3's base at every rank: the padded initial store μ_pad satisfies Inv."""
    g = Generic("μ_pad for X : T", Var("X"), {"X": Seq.fresh("T")})
    ts = type_schema(g)
    if isinstance(ts, Obligation):
        yield ts
        return
    runs = Runs.of(g.label, g.case, g.holes, ts.typed, ts.oracle.assumed, ts.derivation.shape)
    t, T, k, c = runs.t, runs.T, runs.k, runs.c
    P, U = PaddedInitial(Memory("X", "U"), t), Memory("X", "U")
    witness = z3.Int("p!witness")
    hyps = [*positive(g.holes["X"]), *padding(M), k.length == t.length, c.length == t.length]
    for part, claim in zip(INV_PARTS, inv_at(k, c, t, T, P.at(k), U.at(k), U.at(rho(k, t, c)),
                                             SeqIndices(witness)), strict=True):
        yield Obligation(f"{g.label}: {part} (all ranks)", [simplify(h) for h in hyps], simplify(z3.Not(claim)),
                         lambda m, part=part: f"μ_pad: {part} fails (rank {m.eval(t.length, model_completion=True)})",
                         prefer=(t.length <= 8,), search=(t.length <= 16,))


def closure_generic_obligations() -> Iterator[Obligation]:
    """The induction closes at every rank: each assumption :func:`hole_hypotheses` makes of a hole
    (an instance of Inv at a read ``q``, (c) in its Ω form with a probe ``j``, "not within" as a
    choice among the hints' candidate positions) follows from what the step lemmas conclude
    of an expression of the hole's type: Inv at every ``(k, c)`` of its length and every
    witness position (∀-elimination at ``(q, q)`` and ``(q, j)``, the witness at each candidate)."""
    T0 = Seq.fresh("T")
    t, T = T0, T0.map(lambda n: CEIL(M, n))  # GenericInterpretation.ceil, as Sem.bounds rounds
    P, U = Memory("X", "P"), Memory("X", "U")
    q, j = Seq.fresh("q"), Seq.fresh("j")
    witness, other = z3.Int("p!witness"), z3.Int("|R|")  # |R|: another hole's rank (prod)

    def concl(k: Seq, c: Seq, arrays: bool) -> z3.BoolRef:
        # "Not within" as stated: the steps prove their claims for every witness position, which
        # is this ("not within, same length ⟹ some position out", Pad-Inv Ω form).
        parts = inv_at(k, c, t, T, P.at(k), U.at(k), U.at(rho(k, t, c)), SeqIndices(None, None, arrays))
        return z3.Implies(z3.And(k.length == t.length, c.length == t.length), z3.And(*parts))

    context = [*positive(T0), *padding(M)]
    for hints in sorted({(h.shifts, h.arrays) for h in (Hints(), *HINTS.values())}, key=str):
        shifts, arrays = hints
        indices = SeqIndices(witness, candidates(witness, shifts, [t.length, other]), arrays)
        assert indices.positions is not None
        premises = [concl(q, q, arrays), concl(q, j, arrays)]
        read = Read("X", q, ())
        for part, hs in hole_hypotheses("X", t, T, P, U, [read], [j], indices).items():
            for n, h in enumerate(hs, start=1):
                yield Obligation(f"X : T, {len(indices.positions)} candidates: assumption ({part}) #{n} of a "
                                 "hole follows from Inv (all ranks)", [*context, *premises], z3.Not(h),
                                 lambda m, part=part: f"the hole's assumption ({part}) does not follow from Inv")
    # A scalar hole: its one assumption, (a), from (a) at ().
    e = Seq.of(())
    a, _, _ = inv_at(e, e, e, e, P.at(e), U.at(e), U.at(e), SeqIndices())
    (h,) = hole_hypotheses("X", (), (), P, U, [Read("X", e, ())], [], SeqIndices())["a"]
    yield Obligation("X : []: the assumption of a scalar hole follows from Inv (all ranks)", [a], z3.Not(h))


#: The cases of Lemma 6 proved here for every rank: every Core constructor.
PAD_STEPS = GENERIC_STEPS


def lemmas() -> list[Lemma]:
    out = [Lemma("Pad-Inv Ω form (all ranks)", "report Lemma 6, claim (c); the closure of Inv",
                 "Inv (a), (c) at q imply • at every c in Ω(q) (the form the step lemmas instantiate); their "
                 "readings of 'within' and 'not within' are Seq.within's; at every rank", omega_obligations,
                 coverage=EVERY_RANK)]
    for suffix, case, cases in PAD_STEPS:
        def build(case: str = case) -> Iterator[Obligation]:
            for g in generic_schemata(case):
                yield from pad_generic_obligations(g)

        out.append(Lemma(f"Pad-{suffix} (all ranks)", f"report Lemma 6, Lemma 5 (ii)* case {suffix}",
                         f"Inv(padded, unpadded) preserved by {suffix.lower()}, at every rank and every M",
                         build, cases=cases, premises=("Pad-Inv Ω form (all ranks)", *PAD_SUM_LAWS),
                         coverage=EVERY_RANK))
    out.append(Lemma("Inv closes (all ranks)", "report Lemma 6 (the induction hypothesis is the conclusion)",
                     "Inv concluded for an expression at every k, c and witness position implies each assumption "
                     "the step lemmas make of a hole of its type, at every rank", closure_generic_obligations,
                     premises=("Pad-Inv Ω form (all ranks)",), coverage=EVERY_RANK))
    out.append(Lemma("Lemma 6 & 5 (ii)* (all ranks)", "report Lemma 6 and Lemma 5 (ii), as made true, every rank",
                     "Inv([[e]] padded, [[e]] unpadded) for every e, given Inv for the store, at every rank and M",
                     None, Rule.STRUCTURAL, premises=(*(f"Pad-{s} (all ranks)" for s, _, _ in PAD_STEPS),
                                                      "Pad-Inv Ω form (all ranks)", "Inv closes (all ranks)")))
    out.append(Lemma("Theorem 3 (step, all ranks)", "report Theorem 3, step N -> N+1 (St-Stmt), every rank",
                     "Inv for every allocation before x = e ⟹ Inv after (self-reference included), at every "
                     "rank and M", thm3_step_generic_obligations, premises=("Inv closes (all ranks)", *PAD_SUM_LAWS),
                     coverage=EVERY_RANK))
    out.append(Lemma("Theorem 3* (all ranks)", "report Theorem 3 (simulation), as made true, every rank",
                     "padded = unpadded on Γ after every program, padding 0 or • as Inv says, at every rank and "
                     "M; base: μ_pad (eval.d_pad_var) satisfies Inv", thm3_base_generic_obligations,
                     Rule.STATEMENTS, premises=("Theorem 3 (step, all ranks)", "Lemma 6 & 5 (ii)* (all ranks)",
                                                "Lemma 4.5 (padded, all ranks)", "St-Seq", "Inv closes (all ranks)"),
                     coverage=EVERY_RANK))
    return out
