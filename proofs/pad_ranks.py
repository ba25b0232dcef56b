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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import z3

from core_teil.lang.syntax import Expr
from core_teil.semantics import eval as ev
from core_teil.semantics import symbolic as sym
from core_teil.semantics.sequences import RankUndecided, Seq, as_seq

from . import sums
from .kernel import EVERY_RANK, RLIMIT, Lemma, Obligation, Rule
from .padding import INV_PARTS, PAD_SUM_LAWS, M, inv_at
from .ranks import GENERIC_STEPS, Generic, GenericInterpretation, generic_schemata, padding, positive, type_schema

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

    def sum(self, n: Any, body: Callable[[Any], z3.ExprRef], node: Expr) -> z3.ExprRef:
        m = z3.Int(f"m!{self.tag}{next(self.names)}")
        self.path.append(z3.And(m >= 1, m <= n))
        try:
            v = body(m)
        finally:
            self.path.pop()
        term = sym.SUM(z3.Lambda([m], v), n)
        self.sums.append(SumRecord(m, v, term))
        return term


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


def pad_generic_obligations(g: Generic) -> Iterator[Obligation]:
    """For ``k`` of the node's padded type (every rank, every ``M``): Inv's three claims, from
    Inv on every hole."""
    ts = type_schema(g)
    if isinstance(ts, Obligation):
        yield ts
        return
    d, typed, oracle = ts.derivation, ts.typed, ts.oracle
    ip, iu, iu2 = PadInterpretation(tag="P"), PadInterpretation(tag="U"), PadInterpretation(tag="U2")
    semP = ev.Sem(typed, ip, {x: Memory(x, "P") for x in g.holes}, M)
    semU = ev.Sem(typed, iu, {x: Memory(x, "U") for x in g.holes}, None)
    semU2 = ev.Sem(typed, iu2, {x: Memory(x, "U") for x in g.holes}, None)
    t, T = as_seq(semU.bounds(d.shape)), as_seq(semP.bounds(d.shape))
    k, c = Seq.fresh("k"), Seq.fresh("c")
    try:
        vP = ev.denote(g.expr, k, semP)
        vU = ev.denote(g.expr, k, semU)
        vU2 = ev.denote(g.expr, rho(k, t, c), semU2)
    except (RankUndecided, z3.Z3Exception, TypeError) as exc:
        yield Obligation(f"{g.label}: eval.py runs at every rank", (), z3.BoolVal(True),
                         lambda m, exc=exc: f"{g.label}: the equation needs a concrete rank: {exc}", case=g.case)
        return
    hints = HINTS.get(g.case.split(".")[0], Hints())
    hyps = [*(h for s in g.holes.values() for h in positive(s)), *oracle.assumed,
            *(padding(M) if hints.ceil_axiom else [M >= 1]), k.length == t.length, c.length == t.length]
    sigma = Sums.of({"P": ip, "U": iu, "U2": iu2})
    vP, vU, vU2 = (sigma.abstract(v) for v in (vP, vU, vU2))
    witness = z3.Int("p!witness")
    ranks = [h.length for h in g.holes.values() if isinstance(h, Seq)]
    indices = SeqIndices(witness, candidates(witness, hints.shifts, ranks), hints.arrays)
    inv: dict[str, list[z3.BoolRef]] = {"a": [], "b": [], "c": []}
    for x, shape in g.holes.items():
        tx, Tx = semU.bounds(shape), semP.bounds(shape)
        reads = [rd for rd in ip.reads if rd.name == x]  # the padded reads
        for rd in reads:
            m = sigma.binder(rd.index)
            # unpadded reads, at k and ρ(k, c); under a Σ, at its first term and at the padded one's
            probes = [p for i in (iu, iu2) for r in i.reads if r.name == x for p in sigma.terms(r.index, m)]
            for part, hs in hole_hypotheses(x, tx, Tx, Memory(x, "P"), Memory(x, "U"), [rd], probes,
                                            indices).items():
                inv[part] += [sigma.under(h, m) for h in hs]
    inv["c"] += [h for i in (iu, iu2) for r in i.reads for h in r.path if not sigma.binds(h)]
    needs = dict(hints.needs)
    laws = tuple(sigma.laws())
    claim_indices = SeqIndices(witness, None, hints.arrays)
    for name, part, claim in zip("abc", INV_PARTS, inv_at(k, c, t, T, vP, vU, vU2, claim_indices), strict=True):
        from_holes = [h for kind in needs[name] for h in inv[kind]]
        yield Obligation(f"{g.label}: {part} (all ranks)",
                         [simplify(h) for h in (*hyps, *sigma.definitions, *from_holes)], simplify(z3.Not(claim)),
                         lambda m, part=part: f"{g.label}: {part} fails (rank "
                         f"{m.eval(t.length, model_completion=True)})", prefer=(t.length <= 8,), uses=laws,
                         case=g.case, rlimit=hints.rlimit * RLIMIT)


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
                         build, cases=cases, premises=("Pad-Inv Ω form (all ranks)",), coverage=EVERY_RANK))
    out.append(Lemma("Lemma 6 & 5 (ii)* (all ranks)", "report Lemma 6 and Lemma 5 (ii), as made true, every rank",
                     "Inv([[e]] padded, [[e]] unpadded) for every e, given Inv for the store, at every rank and M",
                     None, Rule.STRUCTURAL, premises=(*(f"Pad-{s} (all ranks)" for s, _, _ in PAD_STEPS),
                                                      "Pad-Inv Ω form (all ranks)")))
    return out
