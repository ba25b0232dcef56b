"""The native engine (issue 5): proved programs, planned from the semantics, run by Cython kernels.

``compile(program, params, pad)`` returns a :class:`Kernel`; ``kernel(**inputs)``
returns the output allocations, as :func:`core_teil.semantics.eval.evaluate` does.  On
the way:

1. **Safety by proof.**  The program is proved for the given parameter values
   and pad by :func:`core_teil.proving.prove.prove` (cached by program hash); a
   refuted obligation makes ``compile`` refuse (:class:`NativeRefused`, exit 1),
   an unknown one raises :class:`~core_teil.errors.TeilUnknown` (exit 3).
   Only then may the kernels run without bounds checks.
2. **Planning** (:mod:`core_teil.native.planner`): each statement's normal form comes
   from eval.py's equations run with the planning interpretation; terms are
   scheduled as contraction steps in an order chosen by cost.
3. **Translation validation** (:mod:`core_teil.native.plan_check`): the plan's index
   maps are checked against eval.py's Z3 denotation, its contraction steps
   against the laws of Σ, and every op descriptor against the buffers it
   addresses, before any op runs.
4. **Execution**: ``core_teil.native._native.run`` executes the op descriptors
   (OpenMP over a batch label), ``numpy.matmul`` the BLAS-shaped steps.

Fidelity (SPEC.md section 4): St-Stmt (each statement writes a new buffer
version, so ``A = add A (transp 1 A)`` reads only the old ``A``); controlled
division; NaN for • and for allocations never supplied nor written; scalars,
extents of 1 and rank-0 results.  With ``pad=M`` every buffer is padded to
multiples of ``M`` and 64-byte aligned, the kernels run over the padded
extents, and results are returned at their declared shapes.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import NO_SPAN, TeilError, TeilInputError, TeilResourceError, TeilUnknown
from ..lang.shapes import round_up
from ..lang.syntax import Program, expect_program, walk
from ..lang.typing import TypedProgram, check_program
from ..semantics.eval import ArrayInterpretation, evaluate, padding_agrees
from ..semantics.inputs import (
    check_dtype,
    check_memory,
    check_pad,
    check_params,
    required_inputs,
    run_params,
    validate_inputs,
)
from . import _native, blas, buffers
from .planner import (
    OVERFLOW_BOUND,
    Buffer,
    Call,
    Definition,
    Label,
    Leaf,
    Operand,
    Plan,
    Step,
    Temp,
    blas_groups,
    bound,
    element_work,
    fold,
    is_scratch,
    plan,
    reorder_safe,
    reorder_sensitive,
    threads_for,
)

__all__ = ["Kernel", "NativeRefused", "compile", "openmp_threads"]


class NativeRefused(TeilError):
    """The native engine refuses a program whose obligations are not all proved (exit 1)."""

    exit_code = 1
    kind = "refused"


def openmp_threads() -> int:
    return _native.openmp_threads()


# --------------------------------------------------------------------------
# Proofs, cached by program hash
# --------------------------------------------------------------------------

#: Z3's context is shared by every thread and is not thread-safe (two threads proving at
#: once crashed the process), so whatever may reach Z3 (proof, typing, planning, the plan
#: check, the reference engine's typing) runs under this lock; a prepared plan runs without it.
_Z3 = threading.RLock()

_PROOFS: dict[tuple, Any] = {}
_PROOF_CACHE_SIZE = 256


def proof_key(program: Program, params: Mapping[str, int], pad: int | None) -> tuple:
    """A key for one proof: the program's hash (the one its certificate carries), the parameters, the pad."""
    from ..proving.prove import program_hash

    return program_hash(program, None), tuple(sorted(params.items())), pad


def _status(o: Any) -> str:
    s = getattr(o, "status", None)
    return str(getattr(s, "value", s))


def certify(program: Program, params: Mapping[str, int], pad: int | None) -> Any:
    """Prove the program for these parameters and pad, or refuse to run it.

    This comes before type checking: an ill-typed program is refused with the
    prover's refuted ``typing`` obligation and its counterexample."""
    key = proof_key(program, params, pad)
    report = _PROOFS.get(key)
    if report is None:
        from ..proving.prove import prove

        report = prove(program, dict(params), pad)
        if len(_PROOFS) >= _PROOF_CACHE_SIZE:
            _PROOFS.pop(next(iter(_PROOFS)))
        _PROOFS[key] = report
    if report.ok:
        return report
    bad = [o for o in report.obligations if _status(o) != "proved"]
    refuted = [o for o in bad if _status(o) == "refuted"]
    where = program.stmts[0].span if program.stmts else getattr(program.allocs[0], "span", None) \
        if program.allocs else None
    if refuted:
        o = refuted[0]
        cex = getattr(o, "counterexample", None)
        why = getattr(cex, "what", None) or (str(cex) if cex else "")
        at = getattr(cex, "params", None)
        names = ", ".join(dict.fromkeys(str(x.name) for x in refuted))
        raise NativeRefused(
            f"the native engine runs only proved programs: obligation {names} refuted"
            + (f" ({why})" if why else "") + (f" at {at}" if at else ""),
            getattr(o, "span", None) or where or _no_span(), getattr(o, "name", None))
    names = ", ".join(getattr(o, "name", "?") for o in bad) or "the report is not ok"
    raise TeilUnknown(f"the native engine runs only proved programs: not proved: {names}",
                      where or _no_span(), "prove")


def _no_span() -> Any:
    from ..errors import NO_SPAN

    return NO_SPAN


# --------------------------------------------------------------------------
# Compiled plans
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Gemm:
    """A BLAS step's views, worked out once per plan (matmul 1024 spent 0.3 ms per call on it):
    ``a`` and ``b`` as (offset, shape, byte strides) in the label orders [batch, i, k] and
    [batch, k, j], the matrix shapes numpy.matmul gets, the extent of ``i``'s first label
    (the streamed one), and how many labels ``i`` and ``k`` have (where ``a``'s and ``b``'s
    label orders divide)."""

    a: tuple[int, tuple[int, ...], tuple[int, ...]]
    b: tuple[int, tuple[int, ...], tuple[int, ...]]
    nb: int
    ni: int
    nj: int
    nk: int
    first: int
    i_labels: int
    k_labels: int

    @staticmethod
    def of(step: Step) -> Gemm:
        batch, i, j, k = blas_groups(step)

        def view(o: Operand, order: list[Label]) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
            off, st = fold(o)
            return off, tuple(lab.bound for lab in order), tuple(8 * st.get(lab, 0) for lab in order)

        size = [math.prod(x.bound for x in g) for g in (batch, i, j, k)]
        return Gemm(view(step.args[0], batch + i + k), view(step.args[1], batch + k + j), *size,
                    i[0].bound if i else 1, len(i), len(k))


def _matrix(dims: list[tuple[int, int]]) -> tuple[int, int] | None:
    """Dimensions ``(extent, element stride)``, outermost first, as one: ``(extent, stride)``
    when they are one evenly strided run (extents of 1 are anywhere), else ``None``."""
    dims = [d for d in dims if d[0] != 1]
    if any(n < 1 or st < 1 for n, st in dims):
        return None
    for (_, outer), (n, inner) in itertools.pairwise(dims):
        if outer != inner * n:
            return None
    return (math.prod(n for n, _ in dims), dims[-1][1]) if dims else (1, 1)


def _cblas(rows: list[tuple[int, int]], cols: list[tuple[int, int]]) -> tuple[int, int] | None:
    """A strided matrix in CBLAS's row-major terms, ``(trans, ld)``: 111 (CblasNoTrans) with
    unit column stride, 112 (CblasTrans) with unit row stride; ``None`` for neither."""
    r, c = _matrix(rows), _matrix(cols)
    if r is None or c is None:
        return None
    (nr, rs), (nc, cs) = r, c  # one row or one column is (1, 1): unit-strided either way
    if cs == 1 and (nr == 1 or rs >= nc):
        return 111, (rs if nr > 1 else nc)
    if rs == 1:
        return (112, cs) if cs >= nr else None
    return None


@dataclass(frozen=True)
class Streamed:
    """A streamed call's GEMM as ``_native.run_streamed`` calls ``cblas_dgemm`` on a chunk of
    batch elements ``[lo, hi)``: ``A`` from ``a`` (an element offset into its buffer) plus
    ``lo · astep``, ``(hi - lo) · mrow`` rows, and which slot rows address the chunk buffer."""

    transa: int
    transb: int
    mrow: int
    n: int
    k: int
    a: int
    astep: int
    lda: int
    b: int
    ldb: int
    width: int  # a chunk buffer's elements
    fixed: np.ndarray  # uint8 per slot row

    @staticmethod
    def of(call: Call, g: Gemm) -> Streamed | None:
        """``None`` where numpy.matmul must do it (a batched GEMM, views BLAS cannot take, or
        other than the one op the planner streams a GEMM into: ``_native.run_streamed`` runs one)."""
        if call.blas is None or len(call.ops) != 1 or call.scratch or g.nb != 1 or g.first != call.nbatch \
                or min(g.ni, g.nj, g.nk) < 1 or any(s % 8 for s in (*g.a[2], *g.b[2])):
            return None
        # the views' label orders are [i..., k...] and [k..., j...] (unbatched)
        da = list(zip(g.a[1], (s // 8 for s in g.a[2]), strict=True))
        db = list(zip(g.b[1], (s // 8 for s in g.b[2]), strict=True))
        if g.i_labels == 0 or da[0][0] != g.first:
            return None
        la = _cblas(da[:g.i_labels], da[g.i_labels:])
        lb = _cblas(db[:g.k_labels], db[g.k_labels:])
        if la is None or lb is None or g.a[0] < 0 or g.b[0] < 0:
            return None
        return Streamed(la[0], lb[0], g.ni // g.first, g.nj, g.nk, g.a[0], da[0][1], la[1], g.b[0], lb[1],
                        call.chunk * (call.blas.out.store.size // call.nbatch), fixed_rows(call).astype(np.uint8))


def fixed_rows(call: Call) -> np.ndarray:
    """Per slot row of a streamed call, whether it addresses the chunk buffer (the BLAS step's
    output), which every chunk rewrites from its start, rather than a buffer moved to the chunk."""
    assert call.blas is not None
    streamed = call.blas.out.store
    return np.array([r < len(d.operands) and d.operands[r].store is streamed for d in call.ops for r in range(3)])


@dataclass(eq=False)  # hashed by identity: a thread's slot table is kept under its call
class CompiledCall:
    call: Call
    table: Any  # _native.OpTable: the call's op rows, parsed once
    gemm: Gemm | None = None
    work: int = 0  # innermost iterations per batch element (planner.element_work)
    streamed: Streamed | None = None  # a streamed call's GEMM for run_streamed, if it can take it


@dataclass
class Compiled:
    typed: TypedProgram
    plan: Plan
    calls: list[list[CompiledCall]]
    last_use: list[list[Buffer]]  # buffers no statement after this one reads
    guarded: tuple[bool, ...] = ()  # per statement plan: its reordering needs the overflow guard
    outputs: tuple[tuple[str, tuple[slice, ...]], ...] = ()  # each output and its declared region
    direct: Direct | None = None
    fast: Fast | None = None
    cjit: Any = None  # issue 15: the plan as compiled C (cjit.CKernel), or why not (str)
    #: with a pad, whether it rounds some extent up (:func:`rounds_up`); without, False
    rounded: bool = False


@dataclass(frozen=True)
class Direct:
    """A plan that is one BLAS step from two supplied inputs into the one output (a matrix
    product, transposed or batched): run as ``numpy.matmul`` on the step's views, with no
    store to set up.  After a 16 ms GEMM the caches are cold, and the general path's
    bookkeeping cost 0.18 ms of matmul 1024's time; numpy.einsum's own Python costs as
    much, so on a pure GEMM this bookkeeping is all that separates the two."""

    output: str
    shape: tuple[int, ...]
    a: str
    b: str
    gemm: Gemm


def _direct(p: Plan, calls: list[list[CompiledCall]], outputs: tuple[tuple[str, Any], ...],
            pad: int | None) -> Direct | None:
    if pad is not None or len(p.stmts) != 1 or len(calls[0]) != 1 or len(outputs) != 1:
        return None
    cc, name = calls[0][0], outputs[0][0]
    step, target = cc.call.blas, p.stmts[0].nf.target
    if step is None or cc.gemm is None or cc.call.ops or cc.call.temps or target is None \
            or step.out.store is not target or p.final[name] is not target:
        return None
    a, b = (o.store for o in step.args)
    if not all(isinstance(x, Buffer) and x.kind == "initial" for x in (a, b)):
        return None
    return Direct(name, target.shape, a.name, b.name, cc.gemm)


@dataclass(frozen=True)
class Fast:
    """What a repeated call of an unpadded plan of fused ops needs, worked out once (issue 15:
    an 8x8 matmul cost 45 us a call against numpy.einsum's 6.5, most of it rebuilding the slot
    tables and walking the overflow guard's polynomials).

    ``guards``: per guarded statement, its :func:`planner.bound` as terms ``(scale, inputs)``,
    ``scale = max(1, |coeff|) · Π_red n``, each factor a read of a supplied input (the only
    shape taken here: any other statement keeps the general path).  ``steps``: per call, the
    slot rows that hold a buffer's address, with that buffer; the other rows (temporaries,
    strides, scratch offsets) are the same on every call of one thread and are kept in its
    pool.  ``inputs``: the initial buffers the plan reads, each of which must be supplied."""

    guards: tuple[tuple[tuple[float, tuple[str, ...]], ...], ...]
    #: per statement: the buffer it writes, per call (call, its buffer rows, threads), and the
    #: buffers no later statement reads (released, as :meth:`Kernel._run` does)
    steps: tuple[tuple[Buffer, tuple[tuple[CompiledCall, tuple[tuple[int, Buffer], ...], int], ...],
                       tuple[Buffer, ...]], ...]
    outputs: tuple[tuple[str, Buffer, tuple[slice, ...]], ...]
    inputs: frozenset[str]


def _fast(p: Plan, calls: list[list[CompiledCall]], guarded: tuple[bool, ...],
          outputs: tuple[tuple[str, tuple[slice, ...]], ...], pad: int | None) -> Fast | None:
    if pad is not None:
        return None
    guards = []
    for sp, g in zip(p.stmts, guarded, strict=True):
        if not g:
            continue
        terms = []
        for t in sp.nf.poly.terms:
            if not all(isinstance(f, Leaf) and f.buf.kind == "initial" for f in t.factors):
                return None
            scale = max(1.0, abs(t.coeff)) * math.prod(r.bound for r in t.red)
            terms.append((scale, tuple(f.buf.name for f in t.factors)))
        guards.append(tuple(terms))
    steps, inputs = [], set()
    for sp, stmt_calls, last in zip(p.stmts, calls, _last_uses(p), strict=True):
        mine = []
        for cc in stmt_calls:
            if cc.call.blas is not None:
                return None
            rows = []
            for q, d in enumerate(cc.call.ops):
                for r, o in enumerate(d.operands):
                    if isinstance(o.store, Buffer):
                        if o.store.kind == "mask":
                            return None
                        if o.store.kind == "initial":
                            inputs.add(o.store.name)
                        rows.append((3 * q + r, o.store))
            mine.append((cc, tuple(rows), threads_for(cc.call.nbatch * cc.work)))
        assert sp.nf.target is not None
        steps.append((sp.nf.target, tuple(mine), tuple(last)))
    finals = []
    for name, region in outputs:
        v = p.final[name]
        if not isinstance(v, Buffer) or v.kind == "mask":
            return None
        if v.kind == "initial":
            inputs.add(v.name)
        finals.append((name, v, region))
    return Fast(tuple(guards), tuple(steps), tuple(finals), frozenset(inputs))


def _compile_calls(p: Plan) -> list[list[CompiledCall]]:
    out = []
    for sp in p.stmts:
        cc = []
        for c in sp.calls:
            rows = [d.row(3 * q) for q, d in enumerate(c.ops)]
            ops_i = np.array(rows, dtype=np.int64).reshape(len(rows), _native.OP_WIDTH)
            ops_f = np.array([d.coeff for d in c.ops], dtype=np.float64)
            g = Gemm.of(c.blas) if c.blas is not None else None
            cc.append(CompiledCall(c, _native.OpTable(ops_i, ops_f), g, element_work(c),
                                   Streamed.of(c, g) if g is not None else None))
        out.append(cc)
    return out


def _buffers_read(sp: Any) -> set[Buffer]:
    out: set[Buffer] = set()
    for c in sp.calls:
        ops = [o for d in c.ops for o in d.operands]
        if c.blas is not None:
            ops.extend(c.blas.args)
        out.update(o.store for o in ops if isinstance(o.store, Buffer))
    return out


def _last_uses(p: Plan) -> list[list[Buffer]]:
    finals = {v for v in p.final.values() if isinstance(v, Buffer)}
    last: dict[Buffer, int] = {}
    for s, sp in enumerate(p.stmts):
        for b in _buffers_read(sp):
            last[b] = s
    out: list[list[Buffer]] = [[] for _ in p.stmts]
    for b, s in last.items():
        if b not in finals:
            out[s].append(b)
    return out


def aligned_empty(shape: tuple[int, ...], align: int = 64) -> np.ndarray:
    """An uninitialised float64 array whose data starts on an ``align``-byte boundary; a
    large one in a buffer an earlier call's result left (:mod:`core_teil.native.buffers`)."""
    return buffers.aligned(tuple(shape), align)


def padded_copy(pool: dict[Any, np.ndarray], key: Any, given: np.ndarray | None, shape: tuple[int, ...],
                padded: tuple[int, ...]) -> np.ndarray:
    """``given`` (of ``shape``; • where None) in the padded layout of report Definition 7, in the
    buffer ``pool[key]`` of this thread's last call.  Nothing writes an initial buffer, so its
    padding is still 0 and only the region is written again (padded bmm: zeroing fresh buffers
    took 50 ms per input per call); ``key`` must therefore name one ``shape`` only."""
    arr = pool.get(key)
    if arr is None:
        arr = pool[key] = aligned_empty(padded)
        arr.fill(0.0)
    arr[tuple(slice(0, n) for n in shape)] = given if given is not None else np.nan
    return arr


#: Elements from which an unpadded result starts on a page: BLAS writes its rows faster
#: there than at malloc's 16-byte alignment (matmul 1024: 16.3 -> 16.2 ms, transposed
#: 16.3 -> 16.2 ms, medians of 81; 64-byte alignment alone did not help).
PAGE_ALIGNED_MIN = 1 << 17


def result_empty(shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised unpadded statement result."""
    return aligned_empty(shape, 4096) if math.prod(shape) >= PAGE_ALIGNED_MIN else np.empty(shape)


# --------------------------------------------------------------------------
# The kernel
# --------------------------------------------------------------------------


class Kernel:
    """A compiled program: ``kernel(**inputs) -> {output name: array}``.

    Parameters not given to :func:`compile` are read off the input shapes at
    call time (as :func:`core_teil.semantics.eval.evaluate` does); each distinct set of
    parameter values is proved, planned and checked once."""

    def __init__(self, program: Program | TypedProgram, params: Mapping[str, int] | None,
                 pad: int | None) -> None:
        pad = check_pad(pad)
        if isinstance(program, TypedProgram):
            self.program = program.program
            self.params = {**program.params, **check_params(params, self.program)}
            typed: TypedProgram | None = program
        else:
            self.program = expect_program(program)
            self.params = check_params(params, program)
            typed = None
        self.pad = pad
        self._unpadded_kernel: Kernel | None = None
        self._pool = threading.local()
        self._compiled: dict[tuple, Compiled] = {}
        self._seen: tuple[tuple[str, ...], tuple[tuple[int, ...], ...], Compiled, dict[str, int]] | None = None
        if all(p in self.params for p in self.program.params):
            self._prepare(self.params, typed)

    def _prepare(self, params: dict[str, int], typed: TypedProgram | None = None) -> Compiled:
        key = tuple(sorted(params.items()))
        c = self._compiled.get(key)
        if c is not None:
            return c
        with _Z3:
            c = self._compiled.get(key)  # another thread may have prepared it meanwhile
            if c is not None:
                return c
            c, compile_c = self._prepare_locked(key, params, typed)
        if compile_c is not None:
            # outside the lock, which every proof in the process takes: a compiler may take
            # seconds; another thread given this plan meanwhile runs it without the C
            c.cjit = compile_c()
        return c

    def _prepare_locked(self, key: tuple, params: dict[str, int],
                        typed: TypedProgram | None) -> tuple[Compiled, Any]:
        """The plan, checked and published, and the function that compiles its C (or None)."""
        report = certify(self.program, params, self.pad)
        if typed is None or typed.params != params:
            typed = check_program(self.program, params)
        interp = ArrayInterpretation(typed)
        addressable(typed, interp, self.pad)
        p = plan(typed, self.pad)
        from .plan_check import check_plan

        check_plan(p)
        regions = tuple((a.name, tuple(slice(0, interp.extent(d)) for d in a.shape))
                        for a in typed.program.outputs())
        calls = _compile_calls(p)
        guarded = tuple(reorder_sensitive(sp.nf.poly) for sp in p.stmts)
        direct = _direct(p, calls, regions, self.pad)
        c = Compiled(typed, p, calls, _last_uses(p), guarded, regions, direct,
                     None if direct is not None else _fast(p, calls, guarded, regions, self.pad),
                     rounded=rounds_up(typed, self.pad))
        from . import cjit

        ready = cjit.prepare(self.program, params, self.pad, report, c, fixed=self.params)
        c.cjit = ready if isinstance(ready, str) else cjit.COMPILING
        self._compiled[key] = c
        return c, None if isinstance(ready, str) else ready

    def blockwise(self, chunks: int, batch: str | None = None, /, **inputs: Any) -> dict[str, Any]:
        """Issue 17: the outputs as dask arrays, ``chunks`` elements of the proved batch dimension
        at a time (:mod:`core_teil.native.blockwise`, which refuses a program without one)."""
        from .blockwise import batch_dimension, blockwise

        if batch is not None and not isinstance(batch, str):  # not a dict key to look up (review r31)
            raise TeilInputError(f"batch={batch!r}: the batch dimension is named by a shape parameter, "
                                 f"a string such as 'E', not {type(batch).__name__}")
        analyses = self.__dict__.setdefault("_batch_analyses", {})
        if batch not in analyses:
            with _Z3:
                analyses[batch] = batch_dimension(self.program, self.params, batch)
        return blockwise(self.program, self.params, self.pad, chunks, batch, analyses[batch], **inputs)

    @property
    def plans(self) -> list[Plan]:
        return [c.plan for c in self._compiled.values()]

    def __call__(self, /, *args: Any, **inputs: Any) -> dict[str, np.ndarray]:
        """Run on ``inputs`` (float64 arrays, never converted: inputs.check_dtype), given by name:
        ``self`` is positional-only, so an input may have any name, ``self`` included.

        ``out`` (SPEC.md section 6), a dict of output names to float64 arrays of the declared
        shapes, receives the results, and the returned dict holds those arrays.  A program
        whose allocation is named ``out`` gets that input by the keyword ``out`` as long as
        it is not a dict."""
        if args:
            needed = required_inputs(self.program)
            names = ", ".join(f"{a.name}=..." for a in self.program.allocs if a.name in needed)
            raise TeilInputError(f"kernel(...): inputs are given by name, as kernel({names}), not as "
                                 f"{len(args)} positional argument{'' if len(args) == 1 else 's'}")
        out = inputs.pop("out", None)
        if out is not None and not isinstance(out, Mapping):
            if self.program.alloc("out") is None:
                raise TeilInputError(f"out= must be a dict of output names to float64 arrays, not "
                                     f"{type(out).__name__}")
            inputs, out = {"out": out, **inputs}, None
        seen = self._seen
        if seen is not None and tuple(inputs) == seen[0] and _native.same_arrays(inputs.values(), seen[1]):
            # the names, shapes and dtype of the last call that passed every check: the
            # checks would pass again, with the same parameters (cold, they cost 0.15 ms)
            c, params, arrays = seen[2], seen[3], dict(inputs)
        else:
            params = run_params(self.program, inputs, self.params)
            c = self._prepare(params)
            arrays = self._inputs(c.typed, inputs)
            self._seen = (tuple(inputs), tuple(np.shape(v) for v in inputs.values()), c, params)
        if out is not None:
            _check_out(c, out)
            targets = self._out_targets(c, out, arrays)
            return _write_out(self._results(c, arrays, inputs, params, targets), out)
        return self._results(c, arrays, inputs, params)

    def _out_targets(self, c: Compiled, out: Mapping[str, np.ndarray],
                     arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The ``out=`` arrays the plan may write its results into directly (issue 15: a fresh
        137 MB result cost 12 ms of page zeroing): unpadded runs only (a padded result is
        larger than its declared shape), and only arrays that share no memory with an input,
        which the statements still read while they write (such an output is computed into a
        fresh buffer and copied, so the result is the same), and only in native byte order."""
        if self.pad is not None:
            return {}
        # the kernels write native doubles: a big-endian float64 array (a float64 all the same,
        # inputs.check_dtype) gets the result by np.copyto, which swaps the bytes
        return {name: arr for name, arr in out.items()
                if arr.dtype.isnative and not any(np.may_share_memory(arr, x) for x in arrays.values())}

    def _results(self, c: Compiled, arrays: dict[str, np.ndarray], inputs: dict[str, Any],
                 params: dict[str, int], targets: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Run; ``targets`` are output arrays (``out=``) to write the results into directly."""
        targets = targets or {}
        if c.cjit is not None and not isinstance(c.cjit, str):
            # emit-c's C computes ct.evaluate's doubles in its order, ±inf included: no guard;
            # padded, the padded semantics' doubles, which report Theorem 3 relates to the
            # unpadded ones when no value can overflow (else the unpadded run judges, as below),
            # or always when the pad rounds no extent up (rounds_up)
            bounded = not c.rounded or _bounded_throughout(c, arrays)
            got = c.cjit.run(arrays, targets, self._pool)
            if got is not None:
                if not bounded:
                    padding_agrees(got, lambda: self._unpadded()(**inputs), self.pad)  # type: ignore[arg-type]
                return got
        try:
            d = c.direct
            if d is not None and d.a in arrays and d.b in arrays:
                self._guard(c, 0, _Sizes(arrays, {}))
                out = targets.get(d.output)
                if out is None:
                    out = result_empty(d.shape)
                gemm(d.gemm, arrays[d.a], arrays[d.b], out)
                return {d.output: out}
            f = c.fast
            if f is not None and f.inputs.issubset(arrays):
                return self._run_fast(c, f, arrays, targets)
            bounded: list[bool] = []
            outputs = self._run(c, arrays, targets, bounded)
        except _Reordered:
            # ±inf, or values so large that the plan's order of sums and products may
            # overflow where the equations' does not (planner.reorder_safe): the equations
            # themselves decide, by the reference engine; slower, never wrong
            with _Z3:
                return evaluate(self.program, inputs, params, self.pad)
        if c.rounded and not all(bounded):
            # report Theorem 3 holds for reals with •; floats differ from them only by rounding
            # until a value overflows to ±inf (inf · 0 in the padding is NaN).  When every
            # statement's planner.bound is below OVERFLOW_BOUND no value can, the theorem is
            # the licence, and nothing is scanned after the run (issue 15, "padding that pays")
            padding_agrees(outputs, lambda: self._unpadded()(**inputs), self.pad)
        return outputs

    def _thread_pool(self, kind: str) -> dict[Any, np.ndarray]:
        """This thread's reusable buffers of one kind, ``temps`` or ``initial`` (a kernel may
        be called from several threads)."""
        pool = getattr(self._pool, kind, None)
        if pool is None:
            pool = {}
            setattr(self._pool, kind, pool)
        return pool

    def _unpadded(self) -> Kernel:
        """The same program without padding: the judge when a padded run meets a non-finite value."""
        judge = self._unpadded_kernel
        if judge is None:
            # built outside the lock, so that its C compiles outside it too (Kernel._prepare;
            # the lock is re-entrant, review r19); two threads may each build one: one is kept
            judge = Kernel(self.program, self.params, None)
            with _Z3:
                if self._unpadded_kernel is None:
                    self._unpadded_kernel = judge
                judge = self._unpadded_kernel
        return judge

    # -- inputs (the checks of eval.initial_store, without building a store) --

    def _inputs(self, typed: TypedProgram, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The reference engine's checks and messages (core_teil.semantics.inputs), then C-contiguous arrays."""
        arrays = validate_inputs(typed, inputs, ArrayInterpretation(typed).extent, self.pad)
        # np.ascontiguousarray would turn a 0-d array into a 1-d one.
        return {x: a if a.flags.c_contiguous else a.copy() for x, a in arrays.items()}

    def _initial(self, buf: Buffer, arrays: Mapping[str, np.ndarray], typed: TypedProgram) -> np.ndarray:
        """μ_allocs (Fig. 9) / report Fig. 13: the input in place, • elsewhere, 0 in the padding."""
        given = arrays.get(buf.name)
        if given is not None and (self.pad is None or (
                given.shape == buf.shape and _native.address(given) % 64 == 0)):
            # unpadded, or extents already multiples of M and the data on a 64-byte
            # boundary: the input is the padded layout itself (no plan writes it)
            return given
        a = typed.program.alloc(buf.name)
        assert a is not None
        interp = ArrayInterpretation(typed)
        shape = tuple(interp.extent(d) for d in a.shape)
        return padded_copy(self._thread_pool("initial"), buf, given, shape, buf.shape)

    # -- running the plan --------------------------------------------------------

    @staticmethod
    def _guard(c: Compiled, s: int, sizes: _Sizes) -> None:
        """Before statement plan ``s`` runs: its reordering is safe for these values, or
        :class:`_Reordered` (the equations decide)."""
        if c.guarded[s] and not reorder_safe(c.plan.stmts[s].nf.poly, sizes):
            raise _Reordered

    def _run_fast(self, c: Compiled, f: Fast, arrays: dict[str, np.ndarray],
                  targets: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """:meth:`_run` for a plan with a :class:`Fast` (same guard, same calls, same results)."""
        big: dict[str, float] = {}
        for terms in f.guards:
            total = 0.0
            for scale, names in terms:
                for n in names:
                    m = big.get(n)
                    if m is None:
                        m = _native.magnitude(arrays[n])  # max(1, max |v|), or -1: measure it here
                        m = big[n] = m if m >= 0.0 else max(1.0, largest_size(arrays[n]))
                    scale *= m
                total += scale
            if not total <= OVERFLOW_BOUND:
                raise _Reordered
        into = {c.plan.final[name]: arr for name, arr in targets.items()} if targets else None
        store: dict[Buffer, np.ndarray] = {}
        pool = self._thread_pool("temps")
        for target, calls, last in f.steps:
            arr = into.get(target) if into else None
            store[target] = arr if arr is not None else result_empty(target.shape)
            for cc, rows, nt in calls:
                slots = pool.get(cc)
                if slots is None:  # this thread's first call: its temporaries and fixed rows
                    for t in cc.call.temps:
                        if pool.get(t) is None:
                            pool[t] = aligned_empty(t.shape)
                    slots = pool[cc] = _slot_table(cc, pool, None)
                for row, buf in rows:
                    slots[row, 0] = _native.address(arrays[buf.name] if buf.kind == "initial" else store[buf])
                _native.run(cc.table, slots, cc.call.nbatch, cc.call.scratch, nt)
            for b in last:
                store.pop(b, None)
        return {name: np.array(arrays[buf.name][region], dtype=np.float64) if buf.kind == "initial" else store[buf]
                for name, buf, region in f.outputs}

    def _run(self, c: Compiled, arrays: dict[str, np.ndarray],
             targets: Mapping[str, np.ndarray] | None = None,
             bounded: list[bool] | None = None) -> dict[str, np.ndarray]:
        """Run the plan; with a pad that rounds some extent up (:func:`rounds_up`), ``bounded``
        receives per statement whether its values stay below :data:`planner.OVERFLOW_BOUND`
        whatever the order (so none is ±inf)."""
        typed, p = c.typed, c.plan
        store: dict[Buffer, np.ndarray] = {}
        sizes = _Sizes(arrays, store)
        # the statement that writes an output's final value writes it into the caller's array
        into = {id(p.final[name]): arr for name, arr in (targets or {}).items()}

        def array_of(buf: Buffer) -> np.ndarray:
            arr = store.get(buf)
            if arr is None:
                if buf.kind == "initial":
                    arr = self._initial(buf, arrays, typed)
                elif buf.kind == "mask":
                    arr = (np.arange(1, buf.shape[0] + 1) <= buf.limit).astype(np.float64)
                else:
                    raise AssertionError(f"buffer {buf!r} read before it was written")
                store[buf] = arr
            return arr

        for s, (sp, calls) in enumerate(zip(p.stmts, c.calls, strict=True)):
            assert sp.nf.target is not None
            self._guard(c, s, sizes)
            if bounded is not None and c.rounded:
                bounded.append(bound(sp.nf.poly, sizes) <= OVERFLOW_BOUND)
            target = into.get(id(sp.nf.target))
            if target is None:
                target = aligned_empty(sp.nf.target.shape) if self.pad is not None \
                    else result_empty(sp.nf.target.shape)
            store[sp.nf.target] = target
            temps: dict[Temp, np.ndarray] = {}
            pool = self._thread_pool("temps")
            for cc in calls:
                run_call(cc, store, temps, array_of, pool)
            del temps
            for b in c.last_use[s]:
                store.pop(b, None)
        out: dict[str, np.ndarray] = {}
        for name, region in c.outputs:
            v = p.final[name]
            assert not isinstance(v, Definition), "the final value of an output is materialised"
            arr = array_of(v)
            if v.kind == "initial":
                arr = np.array(arr[region], dtype=np.float64)  # never hand back the caller's array
            elif self.pad is not None and region:
                # A view of the padded buffer at the declared shape: copying it out
                # costs more than the kernel for bmm (measured: 0.6 s -> 1.6 s).
                # A scalar is not indexed: arr[()] would be a numpy scalar, not an array.
                arr = arr[region]
            out[name] = arr
        return out


def _check_out(c: Compiled, out: Mapping[str, Any]) -> None:
    """``out=``: output names, float64 arrays of the declared shapes (never converted),
    C-contiguous (the kernels address them as dense row-major storage), writeable, and no
    two of them overlapping (which result would they hold?)."""
    shapes = {name: tuple(r.stop for r in region) for name, region in c.outputs}
    for name, arr in out.items():
        if name not in shapes:
            raise TeilInputError(f"out[{name!r}]: {name!r} is not an output of the program "
                                 f"(its outputs: {', '.join(shapes) or 'none'})")
        a = c.typed.program.alloc(name)
        span = a.span if a is not None else NO_SPAN
        if not isinstance(arr, np.ndarray):
            raise TeilInputError(f"out[{name!r}]: expected a numpy array, not {type(arr).__name__}", span)
        check_dtype(name, arr.dtype, span, "out=", "output")
        if arr.shape != shapes[name]:
            raise TeilInputError(f"out[{name!r}] has shape {list(arr.shape)}, but the program declares "
                                 f"{name} : {list(shapes[name])}", span, "μ_allocs")
        if not arr.flags.c_contiguous:
            raise TeilInputError(f"out[{name!r}] is not C-contiguous (a dense row-major array, such as "
                                 f"numpy.empty({list(shapes[name])}) makes, is written in place)", span)
        if not arr.flags.writeable:
            raise TeilInputError(f"out[{name!r}] is read-only", span)
    names = list(out)
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            if np.may_share_memory(out[x], out[y]):
                raise TeilInputError(f"out[{x!r}] and out[{y!r}] share memory; each output needs its own array")


def _write_out(outputs: dict[str, np.ndarray], out: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The results in the caller's arrays (copied where they were not written in place)."""
    for name, arr in out.items():
        if outputs[name] is not arr:
            np.copyto(arr, outputs[name])
            outputs[name] = arr
    return outputs


class _Reordered(Exception):
    """The values of this call are outside what the plan's reordering is exact for."""


class _Sizes:
    """The magnitudes of one call's buffers (:class:`planner.Magnitudes`), each read at most
    once: an input from the caller's array (its padding is 0), a statement's result from
    the store once written; an allocation neither supplied nor written is • (no size)."""

    def __init__(self, arrays: Mapping[str, np.ndarray], store: Mapping[Buffer, np.ndarray]) -> None:
        self.arrays, self.store = arrays, store
        self._largest: dict[Buffer, float] = {}
        self._least: dict[Buffer, float] = {}

    def _values(self, buf: Buffer) -> np.ndarray | None:
        return self.arrays.get(buf.name) if buf.kind == "initial" else self.store.get(buf)

    def largest(self, buf: Buffer) -> float:
        got = self._largest.get(buf)
        if got is None:
            got = self._largest[buf] = largest_size(self._values(buf))
        return got

    def least(self, buf: Buffer) -> float:
        got = self._least.get(buf)
        if got is None:
            got = self._least[buf] = least_size(self._values(buf))
        return got


class _Chained(_Sizes):
    """The magnitudes of a run whose statement results are not seen (the compiled C): a
    result is bounded by its statement's :func:`planner.bound`, and its least non-zero
    magnitude is unknown (0, which bounds no quotient by it)."""

    def __init__(self, arrays: Mapping[str, np.ndarray], written: Mapping[Buffer, float]) -> None:
        super().__init__(arrays, {})
        self.written = written

    def largest(self, buf: Buffer) -> float:
        got = self.written.get(buf)
        return super().largest(buf) if got is None else got

    def least(self, buf: Buffer) -> float:
        return 0.0 if buf in self.written else super().least(buf)


#: The most elements of one array or loop nest that the plan's int64 op tables address (with room
#: for a stride times an index): past it, no plan is made.
ADDRESSABLE = 1 << 56


def addressable(typed: TypedProgram, interp: ArrayInterpretation, pad: int | None) -> None:
    """Every allocation, and every subexpression's (padded) domain, small enough for the op tables'
    int64 extents and strides (a pad of 2^32 overflowed them: exit 70, fuzzing r23).  An allocation
    past it could not be held either: refused as μ_allocs (with its bytes), as a run would refuse it.
    Memory itself is checked at the call (``validate_inputs``), not here: a kernel compiled for an
    extent too large to hold may still run :meth:`Kernel.blockwise` in chunks (review r24)."""
    def extents(shape: Any) -> tuple[int, ...]:
        return tuple(interp.extent(d) if pad is None else round_up(interp.extent(d), pad) for d in shape)

    padded = f" (padded to multiples of {pad})" if pad is not None else ""
    shapes = {a.name: extents(a.shape) for a in typed.program.allocs}
    for a in typed.program.allocs:
        n = math.prod(shapes[a.name])
        if n > ADDRESSABLE:
            check_memory(shapes, typed.program, pad)  # names it with its bytes, past any memory budget
            raise TeilResourceError(f"allocation {a.name} : {list(shapes[a.name])}{padded} has {n:,} elements, "
                                    f"past the {ADDRESSABLE:,} this engine addresses", a.span, "μ_allocs")
    for stmt in typed.program.stmts:
        for e in walk(stmt.expr):
            n = math.prod(extents(typed.type_of(e)))
            if n > ADDRESSABLE:
                raise TeilResourceError(f"statement {stmt.target} = ...: a subexpression of {n:,} elements{padded} "
                                        f"is past the {ADDRESSABLE:,} this engine addresses", stmt.span, "St-Stmt")


def rounds_up(typed: TypedProgram, pad: int | None) -> bool:
    """Whether ``pad`` rounds some extent up: of an allocation, or of a subexpression (an
    ``expa d`` whose ``d`` no allocation has is summed over ``⌈d⌉`` all the same; review r21).
    When it rounds none (every extent a multiple of it already) there is no padding: the padded
    store is the store, every Σ runs to ``n``, every ``expa`` guard holds, and the padded run is
    the unpadded one, so report Theorem 3 needs no check for floats either (nothing in a padding
    can become NaN)."""
    if pad is None:
        return False
    interp = ArrayInterpretation(typed)
    shapes = [a.shape for a in typed.program.allocs] + list(typed.types.values())
    return any(interp.extent(d) % pad != 0 for shape in shapes for d in shape)


def _bounded_throughout(c: Compiled, arrays: Mapping[str, np.ndarray]) -> bool:
    """Whether no value of any statement can overflow to ``±inf``, in any order, from these
    inputs: each statement's bound from its inputs' magnitudes and the bounds of the
    statements before it (``Kernel._run`` bounds each from the values it stored instead)."""
    written: dict[Buffer, float] = {}
    sizes = _Chained(arrays, written)
    for sp in c.plan.stmts:
        assert sp.nf.target is not None
        b = bound(sp.nf.poly, sizes)
        if not b <= OVERFLOW_BOUND:
            return False
        written[sp.nf.target] = b
    return True


#: Up to this many elements ``max |v|`` is one ufunc and one reduction (1.4 us for 64);
#: beyond, two reductions that make no temporary (0.2 ms for 8 MB).
SMALL_SIZE = 1 << 16


def largest_size(arr: np.ndarray | None) -> float:
    """``max |v|`` over the values that are not NaN (0 when there are none)."""
    if arr is None or arr.size == 0:
        return 0.0
    if arr.dtype == np.float64 and arr.flags.c_contiguous:
        return _native.largest_abs(arr)
    if arr.size <= SMALL_SIZE:
        m = float(np.abs(arr).max())
        if not math.isnan(m):
            return m
    hi, lo = float(np.fmax.reduce(arr, axis=None)), float(np.fmin.reduce(arr, axis=None))
    return 0.0 if math.isnan(hi) else max(abs(hi), abs(lo))


def least_size(arr: np.ndarray | None) -> float:
    """``min |v|`` over the non-zero values that are not NaN (``inf`` when there are none)."""
    if arr is None or arr.size == 0:
        return math.inf
    mags = np.abs(arr)
    mags = mags[mags > 0.0]
    return float(mags.min()) if mags.size else math.inf


def _address(o: Operand, temps: Mapping[Temp, np.ndarray], array_of: Any) -> tuple[int, int]:
    """An operand's address and scratch offset; a buffer's address is 0 without ``array_of``
    (:meth:`Kernel._run_fast` writes those on every call)."""
    s = o.store
    if isinstance(s, Temp):
        if s.scratch:
            return 0, s.offset
        return _native.address(temps[s]), 0
    return (0 if array_of is None else _native.address(array_of(s))), 0


def _slot_table(cc: CompiledCall, temps: Mapping[Temp, np.ndarray], array_of: Any) -> np.ndarray:
    """The ``slots`` of :func:`_native.run`: per operand its address, batch stride and scratch offset."""
    call = cc.call
    slots = np.zeros((3 * len(call.ops), 3), dtype=np.int64)
    for q, d in enumerate(call.ops):
        for r, o in enumerate(d.operands):
            addr, soff = _address(o, temps, array_of)
            slots[3 * q + r] = (addr, 0 if is_scratch(o) else d.batch_strides[r], soff)
    return slots


def run_call(cc: CompiledCall, store: dict[Buffer, np.ndarray], temps: dict[Temp, np.ndarray],
             array_of: Any, pool: dict[Temp, np.ndarray] | None = None) -> None:
    call = cc.call
    streamed = call.blas.out.store if call.blas is not None and call.ops else None
    for t in call.temps:
        # Temporaries are uninitialised by contract, so one call's may be the next call's:
        # reusing them spares the page faults of a fresh 100 MB buffer (mttkrp) on every run.
        arr = pool.get(t) if pool is not None else None
        if arr is None:
            # a streamed temporary holds one chunk of rows, rewritten for every chunk
            arr = aligned_empty((call.chunk * (t.size // call.nbatch),) if t is streamed else t.shape)
            if pool is not None:
                pool[t] = arr
        temps[t] = arr
    if call.blas is not None and not call.ops:
        run_blas(cc, temps, array_of)
        return
    slots = _slot_table(cc, temps, array_of)
    if call.blas is None:
        _native.run(cc.table, slots, call.nbatch, call.scratch, threads_for(call.nbatch * cc.work))
        return
    nt = threads_for(call.nbatch * cc.work)
    team = _native.openmp_threads() if nt != 1 else 1
    lib = blas.library() if cc.streamed is not None else None
    # the GEMMs go into our team when it is as wide as OpenBLAS would be, and OpenBLAS's idle
    # workers do not poll beside it (docs/decisions.md, "GEMMs inside the team")
    if lib is not None and lib.quiet() and lib.get_threads() <= team:
        run_streamed(cc, cc.streamed, lib, slots, temps, array_of, nt, team, pool)
        return
    # streamed (planner.stream_blas): the BLAS rows of batch elements [lo, hi) into the
    # chunk buffer, then the ops on those elements; the chunk buffer's rows start at lo
    fixed = fixed_rows(call)
    moved = slots.copy()
    for lo in range(0, call.nbatch, call.chunk):
        hi = min(call.nbatch, lo + call.chunk)
        run_blas(cc, temps, array_of, (lo, hi))
        moved[:, 0] = np.where((slots[:, 0] != 0) & ~fixed, slots[:, 0] + 8 * lo * slots[:, 1], slots[:, 0])
        _native.run(cc.table, moved, hi - lo, call.scratch, threads_for((hi - lo) * cc.work))


def run_streamed(cc: CompiledCall, st: Streamed, lib: blas.OpenBLAS, slots: np.ndarray,
                 temps: dict[Temp, np.ndarray], array_of: Any, nt: int, team: int,
                 pool: dict[Temp, np.ndarray] | None) -> None:
    """:func:`run_call`'s streamed loop inside the OpenMP team (``team`` threads; ``nt`` is
    :func:`threads_for`'s answer): each thread computes its chunks' GEMM rows into a chunk
    buffer of its own and consumes them (``_native.run_streamed``)."""
    step = cc.call.blas
    assert step is not None
    key = (cc, "chunks")
    bufs = pool.get(key) if pool is not None else None  # type: ignore[call-overload]
    if bufs is None or bufs.shape[0] < team:
        bufs = aligned_empty((team, st.width + (-st.width) % 8))  # rows on 64-byte boundaries
        if pool is not None:
            pool[key] = bufs  # type: ignore[index]

    def at(o: Operand, off: int) -> int:
        arr = temps[o.store] if isinstance(o.store, Temp) else array_of(o.store)
        return _native.address(arr) + 8 * off

    terms = (st.transa, st.transb, st.mrow, st.n, st.k, at(step.args[0], st.a), st.astep, st.lda,
             at(step.args[1], st.b), st.ldb)
    with blas.one_thread(lib), np.errstate(all="ignore"):
        _native.run_streamed(cc.table, slots, st.fixed, cc.call.nbatch, cc.call.chunk, nt, lib.dgemm,
                             terms, bufs)


def _view(arr: np.ndarray, view: tuple[int, tuple[int, ...], tuple[int, ...]]) -> np.ndarray:
    off, shape, strides = view
    return np.ndarray(shape, np.float64, arr, 8 * off, strides)


def run_blas(cc: CompiledCall, temps: dict[Temp, np.ndarray], array_of: Any,
             rows: tuple[int, int] | None = None) -> None:
    """Call ``cc``'s BLAS step on the buffers it names."""
    step, g = cc.call.blas, cc.gemm
    assert step is not None and g is not None

    def arr(o: Operand) -> np.ndarray:
        return temps[o.store] if isinstance(o.store, Temp) else array_of(o.store)

    gemm(g, arr(step.args[0]), arr(step.args[1]), arr(step.out), rows)


def gemm(g: Gemm, a_buf: np.ndarray, b_buf: np.ndarray, out: np.ndarray,
         rows: tuple[int, int] | None = None) -> None:
    """The GEMM ``out[batch, i, j] = Σ_k a[batch, i, k] · b[batch, k, j]`` on ``g``'s strided
    views of the buffers; ``rows`` restricts it to ``lo <= i₁ < hi`` for the first label
    ``i₁`` of ``i`` (streaming)."""
    nb, ni, nj, nk = g.nb, g.ni, g.nj, g.nk
    a = _view(a_buf, g.a)
    o = out.reshape(-1)
    if rows is not None:  # unbatched; the output is the chunk buffer of a temp laid out [i..., j...]
        lo, hi = rows
        a, ni = a[lo:hi], ni // g.first * (hi - lo)
        o = o[:ni * nj]
    shape_a, shape_b, shape_o = ((nb, ni, nk), (nb, nk, nj), (nb, ni, nj)) if nb > 1 else \
        ((ni, nk), (nk, nj), (ni, nj))
    b = _view(b_buf, g.b).reshape(shape_b)
    with np.errstate(all="ignore"):  # • and ±inf are values here, as in the reference engine
        np.matmul(a.reshape(shape_a), b, out=o.reshape(shape_o))


def compile(program_or_typed: Program | TypedProgram, params: Mapping[str, int] | None = None,
            pad: int | None = None) -> Kernel:
    """SPEC.md section 6: ``ct.compile(program, params, pad)(**inputs)``."""
    return Kernel(program_or_typed, params, pad)
