"""Translation validation of native plans (issue 5): no unchecked loop on an unproved path.

:func:`check_plan` accepts a :class:`~core_teil.native.planner.Plan` only if four
checks pass; otherwise it raises :class:`PlanRejected` and nothing runs.

1. **Index maps against the semantics (Z3).**  eval.py's ``st_stmt`` runs
   again with :class:`~core_teil.semantics.symbolic.Z3Interpretation` over the whole
   program, recording each syntactic read ``μ(x)(k)`` with its path
   condition.  The planning run created its labels in the same order as the
   Z3 run created its index variables (both are driven by the same
   equations), which pairs them.  For every leaf operand of the executed
   plan, Z3 proves, for all label values within their bounds: the leaf reads
   the allocation the semantics reads, at the index the semantics reads
   (after the inlining substitution ``sigma``), within the path condition of
   that read, and within the bounds of the (padded) buffer (paper Lemma 4.3).
   The buffer version is the one St-Seq makes live at that statement.
2. **Reassociation by the laws of Σ.**  Each statement's terms are computed
   exactly once into its target (and each atom's poly into its temporary);
   each term ``c · Σ_R Π F`` by steps that consume every factor exactly once,
   and sum a label only where the law ``Σ_m x · y(m) = x · Σ_m y(m)``
   (``m`` not free in ``x``) applies: a summed label is a reduction label of
   the term, occurs in no operand still to be multiplied and not in the
   result.  Reduction labels no factor reads are accounted for by
   ``Σ_{m<=n} c = n · c`` in the coefficient.  Atoms (controlled division,
   padded ``expa``, multi-term factors) are computed by a step of their kind
   from the materialisations of their own polys.
3. **Descriptors against buffers.**  For every op row and BLAS view, the
   extreme element offsets its loops reach (including the batch loop) lie
   inside the storage it addresses, and fused scratch temporaries inside the
   thread's scratch: the C loops run without bounds checks only on
   descriptors that passed this check.
4. **The calls run the steps.**  What the engine executes (each call's BLAS step, then its
   ops) is exactly the statement's steps, each once and in order, every op the kernel of
   its step's kind with the step's coefficient; each storage is first written by an
   assigning op (a zero fill, or an op that writes every element once and alone), a
   temporary is read only after it is written, and a BLAS step -- ``numpy.matmul``
   overwrites its output with the plain product -- is its storage's only writer, with
   coefficient 1, into the whole storage laid out ``[batch, i, j]``.  Without this,
   checks 1-3 held for plans that dropped, repeated or reordered an op, changed its
   coefficient or lost a zero fill.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import z3

from ..errors import TeilError
from ..lang.shapes import solver as z3_solver
from ..semantics.eval import Sem, st_stmt
from ..semantics.symbolic import Read, Z3Interpretation, in_bounds, initial_memory
from .planner import (
    MAXL,
    SMALLB_J,
    SMALLB_K,
    Buffer,
    DivAtom,
    GuardAtom,
    Label,
    Leaf,
    OpDesc,
    Operand,
    Plan,
    Step,
    StmtPlan,
    SumAtom,
    Temp,
    TermSchedule,
    batches_disjoint,
    blas_groups,
    c_strides,
    classify,
    factor_labels,
    fold,
    gemm2_shape,
    is_scratch,
    merge_loops,
    stream_violation,
    writes_once,
)

__all__ = ["PlanRejected", "check_plan"]


class PlanRejected(TeilError):
    """The plan does not implement the semantics it was derived from (an engine bug)."""

    exit_code = 70
    kind = "internal error"


# ==========================================================================
# 1. Index maps against eval.py's Z3 denotation
# ==========================================================================


class _RecordingZ3(Z3Interpretation):
    """The Z3 interpretation, remembering the order in which it creates index variables."""

    def __init__(self, *a: Any, **k: Any) -> None:
        super().__init__(*a, **k)
        self.created: list[z3.ArithRef] = []

    def fresh(self, base: str) -> z3.ArithRef:
        v = super().fresh(base)
        self.created.append(v)
        return v


class SemanticReads:
    """eval.py's reads, statement by statement, from one Z3 run of the program."""

    def __init__(self, p: Plan) -> None:
        typed = p.typed
        gamma = typed.gamma
        interp = _RecordingZ3(typed.solver, prefix="pc_")
        sem = Sem(typed, interp, initial_memory(gamma, "pc_mu"), p.pad)
        self.created: list[list[z3.ArithRef]] = []
        self.reads: list[dict[int, list[Read]]] = []
        for stmt in typed.program.stmts:
            interp.created = []
            first = len(interp.reads)
            sem = replace(sem, store=st_stmt(stmt, sem))
            self.created.append(list(interp.created))
            by_node: dict[int, list[Read]] = {}
            for r in interp.reads[first:]:
                by_node.setdefault(id(r.node), []).append(r)
            self.reads.append(by_node)


class _Meaning:
    """Each plan label as a Z3 integer with its bound as hypothesis."""

    def __init__(self) -> None:
        self.vars: dict[Label, z3.ArithRef] = {}

    def of(self, ix: Label | int) -> z3.ArithRef:
        if isinstance(ix, int):
            return z3.IntVal(ix)
        v = self.vars.get(ix)
        if v is None:
            v = self.vars[ix] = z3.Int(f"pl_{ix.name}_{len(self.vars)}")
        return v

    def hypotheses(self) -> list[z3.BoolRef]:
        return [z3.And(v >= 1, v <= lab.bound) for lab, v in self.vars.items()]


def _live_version(p: Plan, name: str, stmt: int) -> tuple[str, int]:
    """The buffer version of ``name`` that St-Seq makes live at statement ``stmt``."""
    stmts = p.typed.program.stmts
    last = max((s for s in range(stmt) if stmts[s].target == name), default=None)
    return ("initial", -1) if last is None else ("stmt", last)


def _prove(claim: z3.BoolRef, hyps: list[z3.BoolRef]) -> bool:
    s = z3_solver()
    s.add(*hyps)
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


def check_leaf(p: Plan, sem: SemanticReads, op: Operand, where: str) -> None:
    """Obligation 1 for one leaf operand of the executed plan."""
    leaf = op.leaf
    assert leaf is not None
    if op.store is not leaf.buf or tuple(op.index or ()) != tuple(leaf.index):
        raise PlanRejected(f"{where}: operand {op.store!r} does not implement its read {leaf.buf!r}"
                           f"{list(leaf.index)}", rule="plan check: index map")
    buf = leaf.buf
    node = leaf.node
    if node is None or not 0 <= leaf.stmt < len(sem.reads):
        raise PlanRejected(f"{where}: read of {buf!r} has no source", rule="plan check: index map")
    reads = sem.reads[leaf.stmt].get(id(node), [])
    if len(reads) != 1:
        raise PlanRejected(f"{where}: read of {buf.name} is not one read of the semantics",
                           node.span, "plan check: index map")
    r = reads[0]
    if r.name != buf.name or buf.kind not in ("initial", "stmt") or \
            (buf.kind, buf.stmt) != _live_version(p, buf.name, leaf.stmt):
        raise PlanRejected(f"{where}: reads {buf!r}, but statement {leaf.stmt + 1} reads the live "
                           f"version of {r.name}", node.span, "plan check: St-Seq")
    labels = p.nfs[leaf.stmt].created
    zvars = sem.created[leaf.stmt]
    if len(labels) != len(zvars):
        raise PlanRejected(f"{where}: the planning run and the semantics made different index "
                           f"variables in statement {leaf.stmt + 1}", node.span, "plan check: index map")
    m = _Meaning()
    sigma = dict(leaf.sigma)
    subst = [(z, m.of(sigma[lab])) for lab, z in zip(labels, zvars, strict=True) if lab in sigma]
    for lab, z in zip(labels, zvars, strict=True):  # the labels keep their semantic ranges
        if lab in sigma and isinstance(sigma[lab], Label) and sigma[lab].bound > lab.bound:
            raise PlanRejected(f"{where}: label {sigma[lab]!r} runs beyond {lab!r}", node.span,
                               "plan check: index map")
        del z
    sem_index = [z3.substitute(t, *subst) if subst else t for t in r.index]
    plan_index = [m.of(ix) for ix in leaf.index]
    if len(sem_index) != len(plan_index):
        raise PlanRejected(f"{where}: rank mismatch reading {buf.name}", node.span, "plan check: index map")
    path = [z3.substitute(c, *subst) if subst else c for c in r.path]
    bounds = tuple(z3.IntVal(n) for n in buf.shape)
    claim = z3.And(*[a == b for a, b in zip(plan_index, sem_index, strict=True)],
                   in_bounds(tuple(plan_index), bounds), *path)
    if not _prove(claim, m.hypotheses()):
        raise PlanRejected(f"{where}: the plan reads {buf.name}{list(leaf.index)}, which is not the "
                           f"read of the semantics (or not in bounds) for every index",
                           node.span, "plan check: index map (Lemma 4.3)")


def check_operand_bounds(op: Operand, where: str) -> None:
    """A non-leaf buffer operand (a mask) stays in bounds for all label values."""
    m = _Meaning()
    idx = tuple(m.of(ix) for ix in op.index or ())
    if len(idx) != len(op.store.shape) or \
            not _prove(in_bounds(idx, tuple(z3.IntVal(n) for n in op.store.shape)), m.hypotheses()):
        raise PlanRejected(f"{where}: operand {op.store!r} read out of bounds", rule="plan check: bounds")


# ==========================================================================
# 2. The steps of each term against the laws of Σ
# ==========================================================================


def _labels(ops: Iterable[Operand]) -> set[Label]:
    out: set[Label] = set()
    for o in ops:
        out |= o.labels()
    return out


def check_schedule(sch: TermSchedule, where: str) -> None:
    t = sch.term
    if len(sch.factors) != len(t.factors):
        raise PlanRejected(f"{where}: {len(sch.factors)} operands for {len(t.factors)} factors",
                           rule="plan check: factors")
    for f, o in zip(t.factors, sch.factors, strict=True):
        if isinstance(f, Leaf) and o.leaf is not f:
            raise PlanRejected(f"{where}: factor {f.buf!r} is not read by its operand", rule="plan check: factors")
        if not isinstance(f, Leaf) and o.labels() != factor_labels(f):
            raise PlanRejected(f"{where}: atom operand over {sorted(map(str, o.labels()))} for an atom over "
                               f"{sorted(map(str, factor_labels(f)))}", rule="plan check: factors")
    read = _labels(sch.factors)
    coeff = t.coeff * math.prod(r.bound for r in t.red if r not in read)
    if coeff != sch.coeff:
        raise PlanRejected(f"{where}: coefficient {sch.coeff} for {coeff}", rule="plan check: Σ_{m<=n} c = n·c")
    final_labels = sch.out.labels()
    live: list[Operand] = list(sch.factors)
    summed_once: set[Label] = set()
    red = set(t.red)
    if not sch.steps:
        raise PlanRejected(f"{where}: a term without steps", rule="plan check: factors")
    for n, step in enumerate(sch.steps):
        last = n == len(sch.steps) - 1
        if step.kind != "mac":
            raise PlanRejected(f"{where}: a {step.kind} step inside a product", rule="plan check: factors")
        for a in step.args:
            if not any(a is x for x in live):
                raise PlanRejected(f"{where}: step uses an operand that is not a live factor",
                                   rule="plan check: each factor once")
            live = [x for x in live if x is not a]
        rest = _labels(live) | final_labels
        summed = step.summed()
        bad = summed & rest
        if bad:
            raise PlanRejected(f"{where}: sums {sorted(map(str, bad))} while a factor or the result still "
                               f"depends on it", rule="plan check: Σ_m x·y(m) = x·Σ_m y(m), m ∉ fv(x)")
        if summed - red or summed & summed_once:
            raise PlanRejected(f"{where}: sums {sorted(map(str, summed - red or summed & summed_once))} "
                               f"that is not a reduction label of the term, or twice",
                               rule="plan check: Σ")
        summed_once |= summed
        if last:
            if step.out is not sch.out or step.coeff != sch.coeff:
                raise PlanRejected(f"{where}: the last step does not write the term's result",
                                   rule="plan check: factors")
        else:
            if step.coeff != 1.0 or not isinstance(step.out.store, Temp) or not step.init or \
                    not step.out.labels() <= _labels(step.args):
                raise PlanRejected(f"{where}: an intermediate step is not a fresh product",
                                   rule="plan check: factors")
            live.append(step.out)
    if live:
        raise PlanRejected(f"{where}: {len(live)} factor(s) never multiplied in", rule="plan check: each factor once")
    missing = (red & read) - summed_once
    if missing:
        raise PlanRejected(f"{where}: reduction label(s) {sorted(map(str, missing))} never summed",
                           rule="plan check: Σ")


def check_statement(p: Plan, sp: StmtPlan, sem: SemanticReads) -> None:
    nf, low = sp.nf, sp.lowering
    where = f"statement {nf.index + 1} ({nf.stmt.target})"
    assert nf.target is not None
    # every poly is computed exactly once, by its terms in order, into its storage
    jobs: list[tuple[Any, Any]] = [(nf.poly, nf.target)] + [(poly, o.store) for poly, o in low.materialized]
    for poly, store in jobs:
        scheds = [s for s in low.schedules if s.out.store is store]
        if len(scheds) != len(poly.terms) or any(s.term is not t for s, t in zip(scheds, poly.terms, strict=True)):
            raise PlanRejected(f"{where}: the terms computed into {store!r} are not its normal form",
                               rule="plan check: Σ of terms")
        if isinstance(store, Temp):
            first = next(s for s in low.steps if s.out.store is store)
            if not first.init:
                raise PlanRejected(f"{where}: accumulator {store!r} is not zeroed", rule="plan check: Σ of terms")
        else:
            target = scheds[0].out
            if target.index != nf.labels:
                raise PlanRejected(f"{where}: the result is not written at St-Stmt's index", rule="St-Stmt")
    for s in low.schedules:
        check_schedule(s, where)
    for atom, out, step in low.atoms:
        if isinstance(atom, SumAtom):
            if not any(o is out for _, o in low.materialized) and out.leaf is None:
                raise PlanRejected(f"{where}: a sum factor is not materialised", rule="plan check: atoms")
            continue
        kind = "div" if isinstance(atom, DivAtom) else "sel"
        if step is None or step.kind != kind or step.out is not out or not step.out.store.labels == \
                frozenset(_labels(step.args)):
            raise PlanRejected(f"{where}: atom {type(atom).__name__} is not computed by a {kind} step",
                               rule="plan check: atoms")
        if isinstance(atom, GuardAtom):
            mask = step.args[1]
            if not isinstance(mask.store, Buffer) or mask.store.kind != "mask" or mask.store.limit != atom.d \
                    or mask.index != (atom.j,):
                raise PlanRejected(f"{where}: the expa guard tests the wrong bound", rule="plan check: atoms")
    # every leaf operand is the semantics' read (Z3)
    seen: set[int] = set()
    for step in low.steps:
        for o in step.args:
            if id(o) in seen:
                continue
            seen.add(id(o))
            if o.leaf is not None:
                check_leaf(p, sem, o, where)
            elif isinstance(o.store, Buffer):
                check_operand_bounds(o, where)


# ==========================================================================
# 3. Descriptors against the storage they address
# ==========================================================================


def check_calls(sp: StmtPlan) -> None:
    where = f"statement {sp.nf.index + 1} ({sp.nf.stmt.target})"
    for call in sp.calls:
        if call.blas is not None:
            step = call.blas
            if step.kind != "mac" or len(step.args) != 2:
                # before blas_groups, which reads a product of two's labels and fails on anything
                # else (reviewer rP: a corrupted plan raised ValueError instead of being rejected);
                # the coefficient is check 4's (check_execution)
                raise PlanRejected(f"{where}: a BLAS call for a {step.kind} step of {len(step.args)} argument(s); "
                                   f"numpy.matmul computes the product of two", rule="plan check: execution")
            batch, i, j, k = blas_groups(step)
            views = [(step.args[0], batch + i + k), (step.args[1], batch + k + j), (step.out, batch + i + j)]
            for o, order in views:
                off, st = fold(o)
                hi = off + sum((lab.bound - 1) * st.get(lab, 0) for lab in order)
                if off < 0 or hi >= o.store.size or any(st.get(lab, 0) < 0 for lab in order):
                    raise PlanRejected(f"{where}: BLAS view of {o.store!r} leaves its buffer",
                                       rule="plan check: descriptor")
            if not call.ops:
                continue
            check_stream(sp, call, where)
        for d in call.ops:
            if len(d.loops) > MAXL - 2 or d.nbatch != call.nbatch:
                raise PlanRejected(f"{where}: malformed op", rule="plan check: descriptor")
            check_loops(d, where)
            if d.kind in ("mac2b", "mac2b_set") and not smallb_kernel(d.loops):
                raise PlanRejected(f"{where}: a small-matrix op outside the kernel's limits",
                                   rule="plan check: descriptor")
            if d.kind == "mac2_set" and not gemm2_shape(d.loops):
                raise PlanRejected(f"{where}: an assigning MAC2 outside the two-loop kernel",
                                   rule="plan check: descriptor")
            if d.kind in ("mac2b_set", "mac2_set"):
                # an assigning op writes every element of its output exactly once, and alone
                others = [x for c in sp.calls for x in c.ops if x is not d and
                          x.operands[0].store is d.operands[0].store] + \
                         [c for c in sp.calls if c.blas is not None and c.blas.out.store is d.operands[0].store]
                out = d.operands[0]
                if others or not writes_once(d.loops, call.nbatch, d.batch_strides[0], out.store.size,
                                             is_scratch(out)):
                    raise PlanRejected(f"{where}: an assigning op does not write its output exactly once",
                                       rule="plan check: descriptor")
            streamed = call.blas.out.store if call.blas is not None else None
            out = d.operands[0]
            if not batches_disjoint(d.loops, call.nbatch, d.batch_strides[0], is_scratch(out)):
                raise PlanRejected(f"{where}: a {d.kind} op's batch elements, run in parallel, write the same "
                                   f"elements of {out.store!r}", rule="plan check: descriptor")
            for r, o in enumerate(d.operands):
                scratch = is_scratch(o)
                # a streamed temporary is a buffer of one chunk of rows (native.run_call)
                nbatch, size = (call.chunk, call.chunk * o.store.size // call.nbatch) if o.store is streamed \
                    else (call.nbatch, o.store.size)
                lo = d.offsets[r]
                hi = lo
                for lp in d.loops:
                    if lp[0] < 1 or lp[1 + r] < 0:
                        raise PlanRejected(f"{where}: malformed loop", rule="plan check: descriptor")
                    hi += (lp[0] - 1) * lp[1 + r]
                bs = 0 if scratch else d.batch_strides[r]
                if bs < 0:
                    raise PlanRejected(f"{where}: malformed batch stride", rule="plan check: descriptor")
                hi += (nbatch - 1) * bs
                if lo < 0 or hi >= size:
                    raise PlanRejected(f"{where}: a {d.kind} op reaches element {hi} of {o.store!r}, which has "
                                       f"{size}", rule="plan check: descriptor")
                if scratch:
                    t = o.store
                    assert isinstance(t, Temp)
                    if t.offset < 0 or t.offset + t.size > call.scratch:
                        raise PlanRejected(f"{where}: scratch {t!r} outside the thread's scratch",
                                           rule="plan check: descriptor")


def smallb_kernel(loops: Sequence[Sequence[int]]) -> bool:
    """The loops on which ``tk_smallb`` (teil_kernels.h) computes what they describe, read
    off the C and not from the planner's :func:`~core_teil.native.planner.smallb_shape`
    (which adds when the kernel pays): it takes the last three loops as (rows p, summed k,
    small j), copies ``b[k, j]`` once into stack blocks of ``TK_SMALLB_K`` x 16 (so
    ``K <= TK_SMALLB_K``, ``J <= TK_SMALLB_J``), walks ``a`` by p and k only, ``b`` by k and
    j only, and sums over k into one output element per (p, j)."""
    if len(loops) < 3:
        return False
    p, k, j = loops[-3], loops[-2], loops[-1]
    return j[0] <= SMALLB_J and k[0] <= SMALLB_K and k[1] == 0 and j[2] == 0 and p[3] == 0


def check_stream(sp: StmtPlan, call: Any, where: str) -> None:
    """A streamed call (planner.stream_blas) runs BLAS rows ``[lo, hi)`` of the temporary's
    outermost label, then the ops on batch elements ``[lo, hi)``, ``chunk`` at a time: the
    condition under which that equals running the two one after the other is
    :func:`planner.stream_violation`."""
    bad = "the chunks are empty" if call.chunk < 1 else \
        stream_violation(call.blas, call.ops, call.nbatch, call.scratch, sp.calls[sp.calls.index(call) + 1:])
    if bad:
        raise PlanRejected(f"{where}: streamed BLAS: {bad}", rule="plan check: streaming")


def check_loops(d: Any, where: str) -> None:
    """The op's loops are its operands' index maps, folded over their storage: made again
    here from the labels in the op's loop order (which must be exactly the step's labels),
    so that no stride or offset reaches the C loops that Z3 did not check at the operand."""
    out = d.operands[0]
    expected = d.step.loops() if d.step is not None else out.labels()
    if d.step is not None and (out is not d.step.out or len(d.operands) != 1 + len(d.step.args)
                               or {id(o) for o in d.operands[1:]} != {id(a) for a in d.step.args}):
        raise PlanRejected(f"{where}: a {d.kind} op's operands are not its step's", rule="plan check: descriptor")
    labels = [*d.order, *([d.batch] if d.batch is not None else [])]
    if len(set(labels)) != len(labels) or set(labels) != expected:
        raise PlanRejected(f"{where}: a {d.kind} op does not loop over exactly its step's labels",
                           rule="plan check: descriptor")
    folded = [fold(o) for o in d.operands]
    merged = merge_loops([[lab.bound, *(st.get(lab, 0) for _, st in folded)] for lab in d.order if lab.bound > 1])
    if d.par is not None:
        if not 0 <= d.par < len(merged):
            raise PlanRejected(f"{where}: malformed op", rule="plan check: descriptor")
        batch = merged.pop(d.par)
        nbatch, strides = batch[0], tuple(batch[1:])
    elif d.batch is not None:
        nbatch = d.batch.bound
        strides = tuple(0 if is_scratch(o) else st.get(d.batch, 0)
                        for o, (_, st) in zip(d.operands, folded, strict=True))
    else:
        nbatch, strides = 1, tuple(0 for _ in d.operands)
    if tuple(tuple(lp) for lp in merged) != tuple(tuple(lp) for lp in d.loops) or \
            tuple(off for off, _ in folded) != tuple(d.offsets) or nbatch != d.nbatch or \
            strides != tuple(d.batch_strides):
        raise PlanRejected(f"{where}: a {d.kind} op's loops are not its operands' index maps",
                           rule="plan check: descriptor")


# ==========================================================================
# 4. The calls run the steps
# ==========================================================================

#: The op kinds that run a step of each kind, with the number of arguments their kernel
#: reads (teil_kernels.h, ``tk_nest``).
STEP_KERNELS: dict[str, dict[str, int]] = {
    "mac": {"mac0": 0, "mac1": 1, "mac2": 2, "mac2b": 2, "mac2b_set": 2, "mac2_set": 2},
    "div": {"div": 2},
    "sel": {"sel": 2},
}
#: Kinds whose kernel assigns its output (``o = ...``); the other mac kinds add (``o += c·...``).
ASSIGNING = frozenset({"fill", "mac2b_set", "mac2_set", "div", "sel", "blas"})


def _run(sp: StmtPlan) -> list[tuple[str, Step | None, OpDesc | None, Any]]:
    """What the engine executes, in order: (kind, step, op or None for BLAS, the storage it
    writes) for each call's BLAS step, then its ops (engine.run_call; a fused or streamed
    call repeats that order per batch element)."""
    out: list[tuple[str, Step | None, OpDesc | None, Any]] = []
    for call in sp.calls:
        if call.blas is not None:
            out.append(("blas", call.blas, None, call.blas.out.store))
        out.extend((d.kind, d.step, d, d.operands[0].store) for d in call.ops)
    return out


def check_blas_output(step: Step, where: str) -> None:
    """engine.gemm multiplies ``[batch, i, k]`` by ``[batch, k, j]`` (blas_groups: every label
    of the step in one group) and writes the product row-major ``[batch, i, j]`` over the
    output storage, whatever the output operand's index map says.  (The storage is exactly
    the step's output labels -- a temporary's layout, or St-Stmt's index of the target -- so
    row-major strides over them are the whole storage from its first element.)"""
    *_, extra = classify(step)
    batch, i, j, _k = blas_groups(step)
    order = [lab for lab in batch + i + j if lab.bound > 1]
    _, st = fold(step.out)
    if extra or [st.get(lab, 0) for lab in order] != list(c_strides([lab.bound for lab in order])):
        raise PlanRejected(f"{where}: BLAS writes {step.out.store!r} row-major [batch, i, j] over the whole "
                           f"storage, which is not the step's output"
                           + (f" (labels {sorted(map(str, extra))} in no group)" if extra else ""),
                           rule="plan check: execution")


def check_execution(sp: StmtPlan) -> None:
    """Check 4: the calls run exactly the statement's steps, and every storage they write
    starts from what the steps assume (a zeroed accumulator, or one assigning writer)."""
    where = f"statement {sp.nf.index + 1} ({sp.nf.stmt.target})"
    run = _run(sp)
    stepped = [s for _, s, _, _ in run if s is not None]
    if len(stepped) != len(sp.lowering.steps) or \
            any(a is not b for a, b in zip(stepped, sp.lowering.steps, strict=True)):
        raise PlanRejected(f"{where}: the calls do not run the statement's {len(sp.lowering.steps)} steps, each "
                           f"once and in order ({len(stepped)} step(s) run)", rule="plan check: execution")
    writers: dict[int, int] = {}
    for *_, out in run:
        writers[id(out)] = writers.get(id(out), 0) + 1
    written: set[int] = set()
    for kind, step, d, out in run:
        if step is None:
            assert d is not None
            whole = isinstance(out, Temp) or (out is sp.nf.target and d.operands[0].index == sp.nf.labels)
            if kind != "fill" or d.coeff != 0.0 or id(out) in written or not whole:
                raise PlanRejected(f"{where}: a {kind} op with coefficient {d.coeff} that runs no step, into "
                                   f"{out!r}; only a zero fill of a whole temporary or target, before any "
                                   f"other write to it, may", rule="plan check: execution")
        else:
            for a in step.args:
                if isinstance(a.store, Temp) and id(a.store) not in written:
                    raise PlanRejected(f"{where}: {a.store!r} is read before it is written",
                                       rule="plan check: execution")
            if d is None:
                if step.kind != "mac" or len(step.args) != 2 or step.coeff != 1.0:
                    raise PlanRejected(f"{where}: a BLAS call for a {step.kind} step with coefficient "
                                       f"{step.coeff}; numpy.matmul computes the plain product",
                                       rule="plan check: execution")
                check_blas_output(step, where)
            elif STEP_KERNELS.get(step.kind, {}).get(kind) != len(step.args) or \
                    (step.kind == "mac" and d.coeff != step.coeff):
                raise PlanRejected(f"{where}: a {kind} op with coefficient {d.coeff} runs a {step.kind} step "
                                   f"of {len(step.args)} argument(s) with coefficient {step.coeff}",
                                   rule="plan check: execution")
        if kind in ASSIGNING and kind != "fill" and writers[id(out)] != 1:
            raise PlanRejected(f"{where}: a {kind} op assigns {out!r}, which {writers[id(out)] - 1} other op(s) "
                               f"also write", rule="plan check: execution")
        if kind not in ASSIGNING and id(out) not in written:
            raise PlanRejected(f"{where}: a {kind} op adds into {out!r} before anything zeroed it",
                               rule="plan check: execution")
        written.add(id(out))


def check_plan(p: Plan) -> None:
    """All four checks; raises :class:`PlanRejected` on the first failure."""
    sem = SemanticReads(p)
    for sp in p.stmts:
        check_statement(p, sp, sem)
        check_calls(sp)
        check_execution(sp)
