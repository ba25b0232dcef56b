"""TeIL to standalone C99 (issue 15; paper 000, section 5): ``core-teil emit-c``.

The paper's system lowers TeIL to C and argues that "because of TeIL's
type-safety, the generated C code is guaranteed not to cause out-of-bounds
accesses".  Here that argument is made of three checked steps, and the C has
no bounds checks only because all three passed:

1. **The certificate.**  :func:`emit_c` first runs :func:`core_teil.proving.prove.prove`
   for the given parameters and pad (paper Lemma 4.3 and Theorems 4.4-4.6;
   with a pad, report Theorems 2 and 3 in their true form).  A refuted
   obligation refuses the program (:class:`EmitRefused`, exit 1), an unknown
   one raises :class:`~core_teil.errors.TeilUnknown` (exit 3).
2. **The code is the semantics.**  The loop nests are what the equations of
   :mod:`core_teil.semantics.eval` (``denote``, ``st_stmt``) compute when they run with
   :class:`CInterpretation`: an index is a loop variable of St-Stmt's domain or
   of a ``Σ`` (:class:`LoopVar`) or a constant extent (``proj m``), a read
   ``μ(x)(k)`` is a :class:`Load` of one version of ``x`` at that index map, and
   values are expression trees.  So ``transp``, ``diag``, ``expa`` and ``proj``
   become index maps, never copies, exactly as in the reference engine, which
   runs the same equations on numpy arrays.
3. **Every access checked** (:func:`check_accesses`).  Each array access the C
   file contains is recorded when it is printed, as (storage, index map,
   strides).  Before the file is returned, Z3 proves for every parameter value
   the ``assume``s allow that each index component stays within the storage's
   (padded) extent whenever the loop variables stay within their loops
   (paper Lemma 4.3, for the emitted loops rather than the equations), the
   strides are checked to be the row-major strides of those extents, and with
   concrete extents the flat offset is bounded by the storage's size.  A
   failure is an emitter bug (:class:`EmitCheckFailed`, exit 70), never C output.

Arithmetic is the reference engine's, operation for operation: ``+ - *`` of
IEEE doubles, controlled division (report Definition 8) as
``a == 0 ? 0 : b == 0 ? NaN : a / b``, • as NaN (SPEC.md section 4), and a sum
``Σ_{m=1..n} h(m)`` accumulated for ``m = 1, 2, ..., n`` from ``-0.0`` (the
additive identity of IEEE arithmetic: ``-0.0 + x`` is ``x`` for every double,
``±0`` included).  Without ``-ffast-math`` or floating-point contraction the
emitted kernel therefore computes the very doubles ``ct.evaluate`` computes.
Three rearrangements keep that.  A sum whose value does not depend on an inner
loop is computed once outside it (loop-invariant code motion; the reference
engine shares the same values through its tables,
:func:`core_teil.semantics.eval.shared_subexpressions`).  A statement whose value is one
sum accumulates into its target with the summation loop outside the innermost
output loop (each element still sums ``m = 1..n`` in order, but the inner loop
is independent across elements, so a compiler vectorises it without
reassociating anything); in a fused group with a short constant sum it is
summed in a register inside the innermost loop instead (:func:`sums_inside`),
and an input read there with a stride is read from a transposed copy made once
per call (:func:`transposed_copies`).  And consecutive statements are fused over their first
index (:func:`fuse`) when each reads what the others write only at its own
first index, so that the lifted contractions of the paper's CFD kernel pass
their intermediates through one element's block in cache (:func:`shrink`)
rather than through memory.  Statements no output depends on are left out.
Where the compiler has vectors (GCC or Clang with AVX2, ``#if CT_VECTOR``), such a
short sum of a product with a batch-invariant input is computed in vector tiles
(:func:`tile_of`): several rows of the block at once, each lane still summing
``m = 1..n`` in order from ``-0.0``; the scalar loops stay beside them under
``#else``, and both are checked.

The calling convention is documented in :data:`CONVENTION` (printed into every
header) and in the README's emit-c section.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import z3

from ..errors import NO_SPAN, Span, TeilError, TeilInputError, TeilResourceError, TeilUnknown
from ..lang.printer import format_stmt
from ..lang.shapes import round_up
from ..lang.shapes import solver as z3_solver
from ..lang.syntax import Alloc, ElemOp, Expr, Program, Stmt, Var, expect_program
from ..lang.typing import TypedProgram, check_program
from ..proving.report import Report, Status
from ..semantics.eval import Sem, st_stmt
from ..semantics.inputs import check_pad, check_params, required_inputs
from ..semantics.symbolic import in_bounds, z3_round_up

__all__ = ["CONVENTION", "CSource", "EmitCheckFailed", "EmitRefused", "emit_c"]


class EmitRefused(TeilError):
    """emit-c lowers only programs whose every obligation is proved (exit 1)."""

    exit_code = 1
    kind = "refused"


class EmitCheckFailed(TeilError):
    """An emitted access is not proved in bounds: a bug of the emitter, never C output (exit 70)."""

    exit_code = 70
    kind = "internal error"


# ==========================================================================
# Index maps: extents, loop variables, expressions
# ==========================================================================


@dataclass(frozen=True)
class Ext:
    """An extent as C sees it: a literal, or a shape parameter rounded up to ``pad``
    (report Definition 7, ``⌈n⌉ = M·ceil(n/M)``); a literal is rounded at once."""

    base: int | str
    pad: int | None = None

    @property
    def concrete(self) -> bool:
        return isinstance(self.base, int)


def ext(base: int | str, pad: int | None = None) -> Ext:
    """The extent ``⌈base⌉`` (folded when ``base`` is a number)."""
    if isinstance(base, int):
        return Ext(base if pad is None else round_up(base, pad))
    return Ext(base, pad)


@dataclass(frozen=True, eq=False)
class LoopVar:
    """An index variable of the emitted loops: St-Stmt's domain (``k``) or a ``Σ`` (``m``).

    In the semantics it ranges over ``1..bound``; the C loop runs its 0-based
    counterpart over ``0..bound-1``."""

    name: str
    bound: Ext

    def __repr__(self) -> str:
        return self.name


#: One component of an index map: a loop variable, or a constant extent (``proj m``).
Ix = LoopVar | Ext


@dataclass(frozen=True, eq=False)
class Version:
    """One version of an allocation's memory (St-Seq): the initial one, or what statement
    ``stmt`` wrote."""

    alloc: str
    shape: tuple[Ext, ...]  # the (padded) extents: its layout
    stmt: int = -1  # -1: the initial version

    def __repr__(self) -> str:
        return f"{self.alloc}@{'init' if self.stmt < 0 else self.stmt + 1}"


@dataclass(frozen=True, eq=False)
class Load:
    """``μ(x)(k)``: version ``version`` read at the index map ``index``."""

    version: Version
    index: tuple[Ix, ...]
    node: Var | None = None


@dataclass(frozen=True, eq=False)
class Bin:
    """``a op b`` (report Definition 4; ``div`` is controlled division, Definition 8)."""

    op: ElemOp
    a: Value
    b: Value


@dataclass(frozen=True, eq=False)
class Sum:
    """``Σ_{var=1..bound} body``."""

    var: LoopVar
    body: Value


@dataclass(frozen=True, eq=False)
class Guard:
    """The padded ``expa``: ``body`` where ``j <= d``, else 0 (eval.py, ``Interpretation.guard``)."""

    j: Ix
    d: Ext
    body: Value


Value = Load | Bin | Sum | Guard


@dataclass(frozen=True)
class StmtIR:
    """St-Stmt for statement ``index``: ``target[k] = value`` for every ``k`` of ``domain``."""

    index: int
    stmt: Stmt
    target: Version
    domain: tuple[LoopVar, ...]
    value: Value


def loop_extent(n: Ext) -> Ext:
    """The extent a loop of the semantics runs over: ``n`` itself.  (A seam for the
    mutation tests: an emitter whose loops run one step too far is caught by the check.)"""
    return n


class CInterpretation:
    """eval.py's :class:`~core_teil.semantics.eval.Interpretation` whose values are C expression trees."""

    def __init__(self, typed: TypedProgram) -> None:
        self.typed = typed
        self.stmts: list[StmtIR] = []
        self.stmt = -1
        self._sums = itertools.count(1)

    def extent(self, d: Any) -> Ext:
        v = self.typed.solver.concrete(d)
        return ext(v if v is not None else str(d))

    def ceil(self, n: Ext, pad: int) -> Ext:
        return ext(n.base, pad)

    def read(self, store: Mapping[str, Version], x: str, k: tuple, node: Var) -> Load:
        return Load(store[x], tuple(k), node)

    def arith(self, op: ElemOp, a: Value, b: Value) -> Bin:
        return Bin(op, a, b)

    def sum(self, n: Ext, body: Callable[[LoopVar], Value], node: Expr) -> Sum:
        m = LoopVar(f"m{next(self._sums)}", loop_extent(n))
        return Sum(m, body(m))

    def guard(self, j: Ix, d: Ext, v: Value) -> Guard:
        return Guard(j, d, v)

    def domain(self, bounds: tuple[Ext, ...], stmt: Stmt) -> tuple[LoopVar, ...]:
        return tuple(LoopVar(f"k{j}", loop_extent(n)) for j, n in enumerate(bounds, start=1))

    def update(self, store: Mapping[str, Version], x: str, k: tuple, v: Value,
               bounds: tuple[Ext, ...]) -> dict[str, Version]:
        s = self.stmt
        target = Version(x, tuple(bounds), s)
        self.stmts.append(StmtIR(s, self.typed.program.stmts[s], target, tuple(k), v))
        new = dict(store)
        new[x] = target
        return new


def lower_to_ir(typed: TypedProgram, pad: int | None) -> tuple[list[StmtIR], dict[str, Version], dict[str, Version]]:
    """Eval-Prog with :class:`CInterpretation`: every statement's index maps and values,
    the initial versions, and the final version of every allocation."""
    interp = CInterpretation(typed)
    initial: dict[str, Version] = {}
    probe = Sem(typed, interp, {}, pad)
    for a in typed.program.allocs:
        initial[a.name] = Version(a.name, tuple(probe.bound(d) for d in a.shape))
    sem = Sem(typed, interp, dict(initial), pad)
    for s, stmt in enumerate(typed.program.stmts):
        interp.stmt = s
        sem = Sem(typed, interp, st_stmt(stmt, sem), pad)
    return interp.stmts, initial, dict(sem.store)


def walk_value(v: Value) -> Iterator[Value]:
    stack = [v]
    while stack:
        e = stack.pop()
        yield e
        if isinstance(e, Bin):
            stack += [e.b, e.a]
        elif isinstance(e, Sum | Guard):
            stack.append(e.body)


def free_vars(v: Value, memo: dict[int, frozenset[LoopVar]]) -> frozenset[LoopVar]:
    """The loop variables ``v``'s value depends on."""
    got = memo.get(id(v))
    if got is not None:
        return got
    if isinstance(v, Load):
        out = frozenset(i for i in v.index if isinstance(i, LoopVar))
    elif isinstance(v, Bin):
        out = free_vars(v.a, memo) | free_vars(v.b, memo)
    elif isinstance(v, Sum):
        out = free_vars(v.body, memo) - {v.var}
    else:
        out = free_vars(v.body, memo) | ({v.j} if isinstance(v.j, LoopVar) else frozenset())
    memo[id(v)] = out
    return out


# ==========================================================================
# Storage: which buffer holds which version
# ==========================================================================


@dataclass(frozen=True)
class Storage:
    """A buffer of the C function: a caller's input or output array, or a slot of the workspace."""

    cname: str  # the C pointer that addresses it
    alloc: str
    shape: tuple[Ext, ...]  # (padded) extents, row-major
    role: str  # "input" | "output" | "work"
    tag: str = ""  # a workspace slot: "init" (an initial store), "a" or "b" (statement results)
    #: Holds one block of a fused group (:func:`shrink`): the allocation without its first
    #: dimension, addressed without the first index (which is the fused loop's).
    per_element: bool = False
    #: The order of its dimensions in memory: dimension ``p`` of ``shape`` is the allocation's
    #: dimension ``perm[p]`` (empty: the allocation's own order).  A private copy of a
    #: batch-invariant input (:func:`transposed_copies`) is laid out so that the loop that
    #: reads it runs along its last dimension; ``shape`` is always the order in memory, so
    #: the check (:func:`check_accesses`) sees the index map as it is printed.
    perm: tuple[int, ...] = ()


#: C99's keywords, and the library names the emitted file uses: no TeIL name becomes one of these.
C_KEYWORDS = frozenset((
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool",
    "_Complex", "_Imaginary", "NULL", "NAN", "main", "free", "malloc", "ptrdiff_t", "size_t",
    "work",  # the workspace argument of every kernel
)) | frozenset((
    # C11/C23 keywords, and what the compilers' default (GNU) modes predefine (reviewer rS:
    # a parameter named `linux` or `asm` did not compile)
    "_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn", "_Static_assert", "_Thread_local", "alignas",
    "alignof", "bool", "constexpr", "false", "nullptr", "static_assert", "thread_local", "true", "typeof",
    "typeof_unqual", "asm", "linux", "unix", "i386", "i686", "x86_64",
    # C++ keywords: the header declares the kernel for C++ callers too (extern "C")
    "and", "and_eq", "bitand", "bitor", "catch", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const_cast", "consteval", "constinit", "co_await", "co_return", "co_yield", "decltype", "delete",
    "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "operator", "or", "or_eq", "private", "protected", "public", "reinterpret_cast", "requires",
    "static_cast", "template", "this", "throw", "try", "typeid", "typename", "using", "virtual", "wchar_t",
    "xor", "xor_eq",
    # macros of the headers the file includes (math.h, stddef.h, stdint.h, stdlib.h)
    "INFINITY", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "FP_NAN", "FP_INFINITE", "FP_ZERO", "FP_NORMAL",
    "FP_SUBNORMAL", "EXIT_SUCCESS", "EXIT_FAILURE", "RAND_MAX", "MB_CUR_MAX", "offsetof", "errno",
    "INT8_MAX", "INT16_MAX", "INT32_MAX", "INT64_MAX", "INT8_MIN", "INT16_MIN", "INT32_MIN", "INT64_MIN",
    "UINT8_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX", "INTMAX_MAX", "INTMAX_MIN", "UINTMAX_MAX",
    "INTPTR_MAX", "INTPTR_MIN", "UINTPTR_MAX", "PTRDIFF_MAX", "PTRDIFF_MIN", "SIZE_MAX", "WCHAR_MAX",
    "WCHAR_MIN", "WINT_MAX", "WINT_MIN", "SIG_ATOMIC_MAX", "SIG_ATOMIC_MIN", "M_PI", "M_E",
))

#: Functions of the C library a kernel's own name must not redeclare (``--name exp`` gave
#: "conflicting types for built-in function").
C_LIBRARY = frozenset((
    "abs", "acos", "asin", "atan", "atan2", "ceil", "cos", "cosh", "exp", "exp2", "fabs", "floor", "fma",
    "fmax", "fmin", "fmod", "frexp", "hypot", "ldexp", "log", "log10", "log2", "modf", "pow", "round",
    "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "isnan", "isinf", "isfinite", "labs", "llabs", "div",
    "ldiv", "exit", "abort", "atexit", "calloc", "realloc", "aligned_alloc", "qsort", "bsearch", "rand",
    "srand", "atoi", "atol", "atof", "strtod", "strtol", "getenv", "system", "memcpy", "memset", "memmove",
    "strlen", "printf", "puts",
))

#: Prefixes of the emitter's own names and macros (``ct_*``, ``CT_MAXEL``, ``TEIL_<NAME>_OK``).
C_PREFIXES = ("ct_", "CT_", "u_", "_", "TEIL_")


def cname(name: str) -> str:
    """A TeIL name as a C identifier: itself, unless it is a C keyword (or a name of the C
    library the file uses) or starts with a prefix the emitter keeps for itself (``ct_``,
    ``u_``, ``_``); then ``u_`` + name.  Injective, and never one of the emitter's ``ct_`` names."""
    if name in C_KEYWORDS or name.startswith(C_PREFIXES):
        return "u_" + name
    return name


def c_ident(text: str) -> str:
    """A C identifier made of ``text`` (for function names derived from file names)."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return s if s and not s[0].isdigit() else "_" + s


# ==========================================================================
# The check: every emitted access in bounds
# ==========================================================================


@dataclass(frozen=True)
class Access:
    """One array access of the C file, as it was printed."""

    storage: Storage
    index: tuple[Ix, ...]
    strides: tuple[tuple[Ext, ...], ...]
    write: bool
    where: str


def row_major(shape: tuple[Ext, ...]) -> tuple[tuple[Ext, ...], ...]:
    """The stride of each dimension as a product of extents: C order (row-major)."""
    return tuple(shape[p + 1:] for p in range(len(shape)))


def _normal(product: tuple[Ext, ...]) -> tuple[int, tuple[tuple[str, int | None], ...]]:
    """A product of extents in a normal form: its number times its sorted symbolic factors."""
    num = math.prod(e.base for e in product if isinstance(e.base, int))
    return num, tuple(sorted((str(e.base), e.pad) for e in product if not isinstance(e.base, int)))


class Checker:
    """Decides, with Z3 and for every parameter value the ``assume``s allow, that an index
    component stays within an extent (paper Lemma 4.3 for the emitted loops)."""

    def __init__(self, typed: TypedProgram) -> None:
        self.typed = typed
        self.hyps = typed.solver.hypotheses()
        self._proved: dict[tuple, bool] = {}
        self.claims = 0

    def z3(self, e: Ext) -> z3.ArithRef:
        if isinstance(e.base, int):
            return z3.IntVal(e.base)
        t = self.typed.solver.term(e.base)
        return t if e.pad is None else z3_round_up(t, e.pad)

    def within(self, ix: Ix, extent: Ext) -> bool:
        """``1 <= ix <= extent`` whenever every loop variable is within its loop."""
        key = (("var", ix.bound) if isinstance(ix, LoopVar) else ("const", ix), extent)
        got = self._proved.get(key)
        if got is None:
            s = z3_solver()
            s.add(*self.hyps)
            if isinstance(ix, LoopVar):
                v = z3.Int(f"emit_{ix.name}")
                s.add(v >= 1, v <= self.z3(ix.bound))
            else:
                v = self.z3(ix)
            s.add(z3.Not(in_bounds((v,), (self.z3(extent),))))
            r = s.check()
            if r == z3.unknown:
                raise TeilUnknown(f"emit-c: Z3 could not decide whether an index ranging over "
                                  f"{_show(ix)} stays within {_show(extent)}", NO_SPAN, "emit-c check")
            got = self._proved[key] = r == z3.unsat
            self.claims += 1
        return got


def _show(e: Ix) -> str:
    if isinstance(e, LoopVar):
        return f"1..{_show(e.bound)}"
    if isinstance(e.base, int) or e.pad is None:
        return str(e.base)
    return f"ceil_{e.pad}({e.base})"


def check_accesses(accesses: list[Access], typed: TypedProgram) -> int:
    """Every access of the C file in bounds; returns the number of Z3 claims decided.

    For each access: (1) its rank is its storage's, and every index component is within
    the storage's extent (Z3, for all parameters); (2) its strides are the row-major
    strides of the storage's extents, so that (1) bounds the flat offset by the storage's
    size (``Σ (k_p - 1)·Π_{q>p} D_q <= Π D - 1``); (3) with concrete extents, that flat
    offset is bounded directly.  Raises :class:`EmitCheckFailed` on the first failure."""
    checker = Checker(typed)
    for a in accesses:
        shape = a.storage.shape
        what = f"{a.where}: {'write' if a.write else 'read'} of {a.storage.cname}"
        if len(a.index) != len(shape) or len(a.strides) != len(shape):
            raise EmitCheckFailed(f"{what}: {len(a.index)} indices for a buffer of rank {len(shape)}",
                                  rule="emit-c check: rank")
        for p, (ix, d) in enumerate(zip(a.index, shape, strict=True), start=1):
            if not checker.within(ix, d):
                raise EmitCheckFailed(f"{what}: index {p} ranges over {_show(ix)}, beyond the extent "
                                      f"{_show(d)} for some parameter values", rule="emit-c check: Lemma 4.3")
        expected = tuple(shape[p + 1:] for p in range(len(shape)))  # row-major, independently of row_major()
        if [_normal(s) for s in a.strides] != [_normal(s) for s in expected]:
            raise EmitCheckFailed(f"{what}: strides are not the row-major strides of its extents",
                                  rule="emit-c check: layout")
        if all(e.concrete for e in shape) and \
                all((ix.bound if isinstance(ix, LoopVar) else ix).concrete for ix in a.index):
            lo = hi = 0
            for ix, st in zip(a.index, a.strides, strict=True):
                stride = math.prod(int(e.base) for e in st)
                top = (int(ix.bound.base) - 1) if isinstance(ix, LoopVar) else int(ix.base) - 1  # type: ignore[arg-type]
                low = 0 if isinstance(ix, LoopVar) else top
                lo, hi = lo + low * stride, hi + top * stride
            size = math.prod(int(e.base) for e in shape)
            if lo < 0 or hi >= size:
                raise EmitCheckFailed(f"{what}: flat offsets {lo}..{hi} leave its {size} elements",
                                      rule="emit-c check: flat offset")
    return checker.claims


# ==========================================================================
# The C file
# ==========================================================================


CONVENTION = """\
Calling convention (the same for every kernel emit-c writes):
  int {name}(P..., const double *IN..., double *OUT..., double *work);
  - P: the shape parameters not fixed at emit time, as ptrdiff_t, in the order
    of the program's `param` declarations; each must be >= 1 and satisfy the
    program's `assume`s (else {macro}_EPARAM).  Parameters fixed at emit time
    are compiled in ({macro}_PARAM_<name> macros).
  - IN: the `input` allocations, OUT: the `output` allocations, each in the
    order of the program's declarations (a program without qualifiers takes
    every allocation as an input, ct_in_X, and as an output, ct_out_X; such an
    input may be NULL, meaning "not supplied": its elements are then undefined).
  - Layout: dense row-major (C order) float64 arrays of the declared shapes,
    with every extent rounded up to a multiple of the pad M when emitted with
    --pad M (report Definition 7).  The caller allocates every array; a padded
    input must hold 0 in its padding; a padded output receives the whole
    padded array (0 in the padding, or NaN where the original value is NaN).
  - No alignment is required (64-byte alignment helps vectorised loops).
    Arrays must not overlap each other or the workspace (restrict).
  - work: {name}_work(P...) doubles of scratch memory, or NULL (then the
    kernel allocates and frees it itself, and returns {macro}_ENOMEM if it
    cannot).
  - Values: the undefined value of SPEC.md section 4 is NaN; inputs may hold
    NaN and +-inf.  The kernel computes, operation by operation, the doubles
    ct.evaluate computes: it turns floating-point contraction off (GCC, Clang)
    and refuses -ffast-math (#error).  Vector tiles, where the file has them,
    are compiled by GCC and Clang with AVX2 (CT_VECTOR; -DCT_VECTOR=0 compiles
    the scalar loops instead): the same doubles either way.
  - Returns {macro}_OK (0), {macro}_ENULL (a required pointer is NULL),
    {macro}_EPARAM (parameters outside the certificate's range, or too large
    for ptrdiff_t), {macro}_ENOMEM.  Reentrant: no global state.
"""


@dataclass(frozen=True)
class CArg:
    """One argument of the emitted function, in order."""

    role: str  # "param" | "input" | "output" | "work"
    name: str  # the TeIL name ("" for work)
    cname: str
    required: bool = True


@dataclass(frozen=True)
class CSource:
    """A standalone C99 kernel and its header, and the certificate that licenses them.

    ``c`` includes ``header`` by that name; ``certificate`` is the proof report every
    obligation of which is proved; ``args`` is the calling convention, argument by
    argument; ``shapes`` the (padded) extents of every input and output, as numbers or
    parameter names with the pad; ``checked`` the number of array accesses the emitter
    check (:func:`check_accesses`) proved in bounds."""

    c: str
    h: str
    name: str
    header: str
    certificate: Report
    args: tuple[CArg, ...]
    shapes: Mapping[str, tuple[Ext, ...]]
    checked: int
    pad: int | None = None
    params: Mapping[str, int] = field(default_factory=dict)

    def shape(self, name: str, params: Mapping[str, int] | None = None) -> tuple[int, ...]:
        """The extents of array ``name`` as the caller allocates it (padded), for ``params``."""
        values = {**self.params, **(params or {})}

        def value(e: Ext) -> int:
            n = e.base if isinstance(e.base, int) else values[e.base]
            return n if e.pad is None else round_up(n, e.pad)

        return tuple(value(e) for e in self.shapes[name])


def _comment(text: str) -> str:
    """Text safe inside a C block comment: ASCII, no ``*/``, no trigraphs."""
    text = text.replace("•", "NaN").encode("ascii", "replace").decode("ascii")
    return text.replace("*/", "* /").replace("??", "? ?")


class Emitter:
    """Prints the C file from the statements' expression trees, recording every access."""

    def __init__(self, typed: TypedProgram, pad: int | None, name: str) -> None:
        self.typed = typed
        self.pad = pad
        self.name = name
        self.accesses: list[Access] = []
        self.padded: dict[Ext, str] = {}  # symbolic padded extents -> their C local
        self.uses_cdiv = False
        #: reads served from a private copy of their storage (:func:`transposed_copies`), by id
        self.redirect: dict[int, Storage] = {}
        #: statements computed in vector tiles when the C compiler has vectors (:func:`tile_of`), by id
        self.tiles: dict[int, Tile] = {}
        #: index variables printed as constants (a tile's rows, unrolled)
        self.subst: dict[LoopVar, Ix] = {}
        self.vector_lanes: set[int] = set()  # the vector types the tiles use
        #: per tiled statement, by id: the next block's inputs it prefetches (:func:`prefetches`)
        self.prefetch: dict[int, Prefetch] = {}
        self._acc = itertools.count(1)
        self.where = ""

    # -- extents and offsets ------------------------------------------------

    def ext_c(self, e: Ext) -> str:
        if isinstance(e.base, int):
            return str(e.base)
        base = cname(e.base)
        if e.pad is None:
            return base
        return self.padded.setdefault(e, f"ct_pad{e.pad}_{base}")

    def product_c(self, product: tuple[Ext, ...]) -> str:
        num = math.prod(e.base for e in product if isinstance(e.base, int))
        syms = [self.ext_c(e) for e in product if not isinstance(e.base, int)]
        if not syms:
            return str(num)
        return " * ".join(syms + ([str(num)] if num != 1 else []))

    def ix_c(self, ix: Ix) -> str:
        """The 0-based C value of an index component."""
        if isinstance(ix, LoopVar):
            return f"ct_{ix.name}"
        if isinstance(ix.base, int):
            return str(ix.base - 1)
        return f"({self.ext_c(ix)} - 1)"

    def access(self, storage: Storage, index: tuple[Ix, ...], write: bool = False) -> str:
        """``storage[offset(index)]``, recorded for :func:`check_accesses`."""
        index = tuple(self.subst.get(ix, ix) if isinstance(ix, LoopVar) else ix for ix in index)
        if storage.per_element:
            index = index[1:]
        if storage.perm:
            index = tuple(index[j] for j in storage.perm)
        strides = row_major(storage.shape)
        self.accesses.append(Access(storage, tuple(index), strides, write, self.where))
        if not index:
            return f"{storage.cname}[0]"
        terms: dict[str, int] = {}  # concrete strides folded per variable (diag repeats one)
        const = 0
        parts: list[str] = []
        for ix, st in zip(index, strides, strict=True):
            if all(e.concrete for e in st):
                stride = math.prod(int(e.base) for e in st)
                if isinstance(ix, LoopVar):
                    v = self.ix_c(ix)
                    if v not in terms:
                        parts.append(v)
                    terms[v] = terms.get(v, 0) + stride
                elif isinstance(ix.base, int):
                    const += (ix.base - 1) * stride
                else:
                    parts.append(f"{self.ix_c(ix)} * {stride}" if stride != 1 else self.ix_c(ix))
            else:
                parts.append(f"{self.ix_c(ix)} * {self.product_c(st)}")
        parts = [f"{p} * {terms[p]}" if terms.get(p, 1) != 1 else p for p in parts]
        if const or not parts:
            parts.append(str(const))
        return f"{storage.cname}[{' + '.join(parts)}]"

    # -- loops ----------------------------------------------------------------

    def loop(self, v: LoopVar) -> str:
        c = self.ix_c(v)
        return f"for (ptrdiff_t {c} = 0; {c} < {self.ext_c(v.bound)}; ++{c})"

    def value_c(self, v: Value, storages: Mapping[Version, Storage], accs: Mapping[int, str]) -> str:
        if isinstance(v, Load):
            return self.access(self.redirect.get(id(v), storages[v.version]), v.index)
        if isinstance(v, Sum):
            return accs[id(v)]
        if isinstance(v, Guard):
            body = self.value_c(v.body, storages, accs)
            if isinstance(v.j, LoopVar):
                test = f"{self.ix_c(v.j)} < {self.ext_c(v.d)}"
            elif v.j == v.d:
                # `proj 1 k (expa 1 k A)`: `k <= k` always holds, and GCC rejects the
                # self-comparison under -Wall -Werror (-Wtautological-compare)
                return body
            else:
                test = f"{self.ext_c(v.j)} <= {self.ext_c(v.d)}"
            return f"({test} ? {body} : 0.0)"
        a = self.value_c(v.a, storages, accs)
        b = self.value_c(v.b, storages, accs)
        if v.op == "div":
            self.uses_cdiv = True
            return f"ct_cdiv({a}, {b})"
        return f"({a} {'+' if v.op == 'add' else '-' if v.op == 'sub' else '*'} {b})"

    def statement(self, st: StmtIR, target: Storage, storages: Mapping[Version, Storage],
                  fused: bool = False) -> tuple[list[str], list[str]]:
        """St-Stmt as a loop nest: ``target[k] = [[e]](k)`` for every ``k`` of the domain.

        Returns the lines before the loops and the loops.  ``fused``: the loop over the
        first index is the fused loop of a group of statements (:func:`fuse`), printed by
        the caller, and the lines are its body."""
        memo: dict[int, frozenset[LoopVar]] = {}
        value = st.value
        loops = st.domain[1:] if fused else st.domain
        if isinstance(value, Sum) and loops and not any(isinstance(e, Sum) for e in walk_value(value.body)) \
                and not sums_inside(value, fused):
            return [], self.accumulating(st, value, target, storages, loops)
        # each Σ is computed right inside the innermost loop its value depends on (or before
        # every loop): loop-invariant code motion, children before parents
        homes: dict[LoopVar | None, list[Sum]] = {}

        def place(e: Value, chain: list[LoopVar]) -> None:
            if isinstance(e, Sum):
                place(e.body, [*chain, e.var])
                fv = free_vars(e, memo)
                home = next((v for v in reversed(chain) if v in fv), None)
                homes.setdefault(home, []).append(e)
            elif isinstance(e, Bin):
                place(e.a, chain)
                place(e.b, chain)
            elif isinstance(e, Guard):
                place(e.body, chain)

        place(value, list(st.domain))
        accs: dict[int, str] = {}

        def prelude(home: LoopVar | None, depth: int, out: list[str]) -> None:
            for s in homes.get(home, []):
                acc = accs[id(s)] = f"ct_s{next(self._acc)}"
                pad = "    " * depth
                out.append(f"{pad}double {acc} = -0.0;")
                out.append(f"{pad}{self.loop(s.var)} {{")
                prelude(s.var, depth + 1, out)
                out.append(f"{pad}    {acc} += {self.value_c(s.body, storages, accs)};")
                out.append(f"{pad}}}")

        before: list[str] = []
        lines: list[str] = []
        prelude(None, 1, before)
        if fused:
            prelude(st.domain[0], 1, lines)
        for d, v in enumerate(loops, start=1):
            lines.append("    " * d + self.loop(v) + " {")
            prelude(v, d + 1, lines)
        rhs = self.value_c(value, storages, accs)
        lines.append("    " * (len(loops) + 1) + f"{self.access(target, st.domain, True)} = {rhs};")
        for d in range(len(loops), 0, -1):
            lines.append("    " * d + "}")
        tile = self.tiles.get(id(st))
        if tile is not None:  # the same doubles in vectors where the compiler has them, else the loops above
            lines = ["#if CT_VECTOR", *self.tiled(st, tile, target, storages), "#else", *lines, "#endif"]
        return before, lines

    def tiled(self, st: StmtIR, tile: Tile, target: Storage, storages: Mapping[Version, Storage]) -> list[str]:
        """``x[.., b, c] = Σ_m L(.., b, m) · R(m, c)`` (:func:`tile_of`) for ``tile.rows`` rows ``b`` at
        a time: each row's elements ``c`` in vectors of ``tile.lanes`` doubles, all of them kept in
        registers while ``m`` runs, ``R``'s row ``m`` loaded once for every row of the tile.  Each
        lane adds ``L · R`` (or ``R · L``, the body's order) for ``m = 1..n`` from ``-0.0``, as the
        scalar loop does.  Lanes past the row's end compute from the zeros of ``R``'s padded copy
        and are stored only into the padding of a private block (:meth:`_Build.pad_rows`).  (A
        padded ``expa``'s guard is in ``L`` if anywhere: :func:`tile_of`.)"""
        *outer, row, inner = tile.loops
        n_row, width, lanes = int(row.bound.base), tile.width, tile.lanes  # type: ignore[arg-type]
        stored = int(target.shape[-1].base)  # type: ignore[arg-type]
        vecs = width // lanes
        vtype = f"ct_v{lanes}"
        self.vector_lanes.add(lanes)
        right = self.redirect.get(id(tile.right), storages[tile.right.version])
        lines = ["    " * d + self.loop(v) + " {" for d, v in enumerate(outer, start=1)]
        ahead = self.prefetch.get(id(st))
        if ahead is not None:
            lines[1:1] = self.prefetching(ahead, outer[0])
        pad = "    " * (len(outer) + 1)
        m = tile.sum.var
        zero = "{" + ", ".join(["-0.0"] * lanes) + "}"
        # one vector of a row per accumulator, each product reading its own L: GCC then folds the
        # broadcast of L into the multiplication, where a broadcast into a register shared by
        # two vectors of a row took a slot of the arithmetic (docs/decisions.md)
        for j in range(vecs):
            for b0 in range(0, n_row, tile.rows):
                block = range(b0, min(b0 + tile.rows, n_row))
                acc = f"ct_t{next(self._acc)}"
                part = f", elements {j * lanes + 1}..{(j + 1) * lanes} of {width}" if vecs > 1 else ""
                lines.append(f"{pad}{{ /* rows {b0 + 1}..{block[-1] + 1} of {n_row}{part}: {len(block)} x 1 "
                             f"vector{'s' if len(block) > 1 else ''} of {lanes} doubles */")
                lines += [f"{pad}    {vtype} {acc}_{b} = {zero};" for b in block]
                lines.append(f"{pad}    {self.loop(m)} {{")
                src = self.vector(right, tile.right.index, inner, j * lanes, lanes)
                lines.append(f"{pad}        {vtype} ct_r{j}; __builtin_memcpy(&ct_r{j}, {src}, sizeof ct_r{j});")
                for b in block:
                    self.subst = {row: ext(b + 1)}
                    left = self.value_c(tile.left, storages, {})
                    self.subst = {}
                    lines.append(f"{pad}        {acc}_{b} += " +
                                 (f"ct_r{j} * ({left});" if tile.right_first else f"({left}) * ct_r{j};"))
                lines.append(f"{pad}    }}")
                count = self.lanes_stored(stored, j, lanes)
                # the check bounds the destination, not what memcpy reads from the accumulator
                assert 0 < count <= lanes, (count, lanes)
                for b in block:
                    self.subst = {row: ext(b + 1)}
                    if count == lanes:
                        dst = self.vector(target, st.domain, inner, j * lanes, count, write=True)
                        lines.append(f"{pad}    __builtin_memcpy({dst}, &{acc}_{b}, {count} * sizeof(double));")
                    else:
                        # a part of a vector, lane by lane, each store an access the check sees: a
                        # memcpy of 5 doubles went through the stack, and reading a lane back from
                        # a 64-byte store stalled (helm, Intel: 63.2 -> 59.0 ms, docs/decisions.md)
                        lines += [f"{pad}    {self.lane(target, st.domain, inner, j * lanes + i)} = {acc}_{b}[{i}];"
                                  for i in range(count)]
                    self.subst = {}
                lines.append(f"{pad}}}")
        lines += ["    " * d + "}" for d in range(len(outer), 0, -1)]
        return lines

    def prefetching(self, ahead: Prefetch, loop: LoopVar) -> list[str]:
        """In iteration ``k`` of ``loop``, a hint to load lines ``k·per .. k·per + per - 1`` of the
        next block of each of ``ahead.inputs`` (GCC's and Clang's ``__builtin_prefetch``, into
        every cache level), so that the group's first statement finds them in cache: measured
        (docs/decisions.md) interp n=7 536 -> 467 ns an element, helm 14.1 -> 13.1 us.  A
        prefetch reads no value and cannot fault; the guards keep its address inside the array
        all the same (the next block exists, the line starts inside it), so it is not an access
        the check has to see."""
        first, k, q = self.ix_c(ahead.fused), self.ix_c(loop), "ct_q"
        per = -(-max(-(-size // 8) for _, size in ahead.inputs) // int(loop.bound.base))  # type: ignore[arg-type]
        return ["    " * 2 + f"if ({first} + 1 < {self.ext_c(ahead.fused.bound)}) "
                f"for (ptrdiff_t {q} = {k} * {per}; {q} < {k} * {per} + {per}; ++{q}) if ({q} * 8 < {size}) "
                f"__builtin_prefetch(&{storage.cname}[({first} + 1) * {size} + {q} * 8], 0, 3);"
                for storage, size in ahead.inputs]

    @staticmethod
    def lanes_stored(stored: int, j: int, lanes: int) -> int:
        """How many lanes of a row's vector ``j`` the row holds (``stored`` elements): all of
        them, or the row's last ones, stored lane by lane."""
        return min(lanes, stored - j * lanes)

    def lane(self, storage: Storage, index: tuple[Ix, ...], lane: LoopVar, at: int) -> str:
        """The element of ``storage`` at ``index`` with ``lane`` at ``at`` (0-based), written: an
        access the check records like any other."""
        saved, self.subst = self.subst, {**self.subst, lane: ext(at + 1)}
        address = self.access(storage, index, True)
        self.subst = saved
        return address

    def vector(self, storage: Storage, index: tuple[Ix, ...], lane: LoopVar, first: int, count: int,
               write: bool = False) -> str:
        """The address of ``count`` consecutive elements of ``storage`` at ``index`` with ``lane``
        (its last dimension in memory) from ``first`` (0-based): the first and the last element
        are recorded for the check, which bounds every index component, so the run between them
        is in bounds too (only the last component varies along it)."""
        at = {**self.subst, lane: ext(first + 1)}
        last = {**self.subst, lane: ext(first + count)}
        saved, self.subst = self.subst, last
        self.access(storage, index, write)
        self.subst = at
        address = self.access(storage, index, write)
        self.subst = saved
        return f"&{address}"

    def accumulating(self, st: StmtIR, value: Sum, target: Storage, storages: Mapping[Version, Storage],
                     loops: tuple[LoopVar, ...]) -> list[str]:
        """``x[k] = Σ_m body`` with ``m`` outside the innermost domain loop: every element
        still sums ``m = 1..n`` in order from ``-0.0``, and the inner loop is independent
        across elements (vectorisable without reassociation)."""
        *outer, inner = loops
        lines: list[str] = []
        for d, v in enumerate(outer, start=1):
            lines.append("    " * d + self.loop(v) + " {")
        d = len(outer) + 1
        pad = "    " * d
        lines.append(f"{pad}{self.loop(inner)}")
        lines.append(f"{pad}    {self.access(target, st.domain, True)} = -0.0;")
        lines.append(f"{pad}{self.loop(value.var)}")
        lines.append(f"{pad}    {self.loop(inner)}")
        body = self.value_c(value.body, storages, {})
        lines.append(f"{pad}        {self.access(target, st.domain, True)} += {body};")
        for d in range(len(outer), 0, -1):
            lines.append("    " * d + "}")
        return lines

    def copy(self, target: Storage, source: Storage) -> list[str]:
        """``target`` = ``source`` element by element, ``target`` laid out in its own order
        (``perm``): a private transposed copy of an input (:func:`transposed_copies`)."""
        domain = tuple(LoopVar(f"k{j}", e) for j, e in enumerate(source.shape, start=1))
        lines = ["    " * d + self.loop(v) + " {" for d, v in enumerate(domain, start=1)]
        lines.append("    " * (len(domain) + 1) +
                     f"{self.access(target, domain, True)} = {self.access(source, domain)};")
        lines += ["    " * d + "}" for d in range(len(domain), 0, -1)]
        return lines

    def zero_lanes(self, target: Storage, real: Ext) -> list[str]:
        """0 in the lanes of a padded copy past its rows' ``real`` extent (:meth:`copy` wrote
        the others): what a tile's lanes past a row's end multiply by."""
        width = int(target.shape[-1].base)  # type: ignore[arg-type]
        perm = target.perm or tuple(range(len(target.shape)))
        index: list[Ix] = [ext(1)] * len(perm)  # every component is set below
        loops = [LoopVar(f"k{p}", target.shape[p - 1]) for p in range(1, len(perm))]
        for p, v in enumerate(loops):
            index[perm[p]] = v
        lines = ["    " * d + self.loop(v) + " {" for d, v in enumerate(loops, start=1)]
        for lane in range(int(real.base) + 1, width + 1):  # type: ignore[arg-type]
            index[perm[-1]] = ext(lane)
            lines.append("    " * (len(loops) + 1) + f"{self.access(target, tuple(index), True)} = 0.0;")
        lines += ["    " * d + "}" for d in range(len(loops), 0, -1)]
        return lines

    def fill(self, target: Storage, shape: tuple[Ext, ...], source: Storage | None) -> list[str]:
        """``target`` = the initial store of an allocation (report Fig. 13, d-pad-var): a copy of
        ``source``, or • (NaN) on the original extents and 0 in the padding."""
        domain = tuple(LoopVar(f"k{j}", e) for j, e in enumerate(target.shape, start=1))
        lines = ["    " * d + self.loop(v) + " {" for d, v in enumerate(domain, start=1)]
        depth = len(domain) + 1
        if source is not None:
            rhs = self.access(source, domain)
        else:
            inside = [f"{self.ix_c(v)} < {self.ext_c(n)}" for v, n in zip(domain, shape, strict=True)
                      if v.bound != n]
            rhs = f"({' && '.join(inside)}) ? NAN : 0.0" if inside else "NAN"
        lines.append("    " * depth + f"{self.access(target, domain, True)} = {rhs};")
        lines += ["    " * d + "}" for d in range(len(domain), 0, -1)]
        return lines


# ==========================================================================
# emit_c
# ==========================================================================


def certify(program: Program, params: dict[str, int], pad: int | None,
            given: Report | None = None) -> Report:
    """``ct.prove(program, params, pad)``, or refuse: the certificate is what licenses C
    without bounds checks (paper Theorem 4.6; report Corollary 3 with a pad).

    ``given`` is a report the caller already holds (the native engine's, for
    :mod:`core_teil.native.cjit`): it is the certificate, without proving again, when
    it is ok and is for this very program text, parameters and pad."""
    from ..proving.prove import program_hash, prove

    if given is not None and given.ok and given.pad == pad and dict(given.params) == params \
            and given.program_hash == program_hash(program, None):
        return given
    report = prove(program, params, pad)
    if report.ok:
        return report
    where: Span = program.stmts[0].span if program.stmts else NO_SPAN
    refuted = [o for o in report.obligations if o.status is Status.REFUTED]
    if refuted:
        o = refuted[0]
        cex = o.counterexample
        why = f": {cex.what}" if cex is not None and cex.what else ""
        at = f" at {', '.join(f'{k} = {v}' for k, v in cex.params.items())}" if cex is not None and cex.params \
            else ""
        stmt_span = program.stmts[o.statement - 1].span if o.statement and o.statement <= len(program.stmts) \
            else where
        raise EmitRefused(f"emit-c lowers only proved programs: obligation {o.label} ({o.lemma}) is "
                          f"refuted{why}{at}; run core-teil prove for the counterexample",
                          stmt_span, o.name)
    bad = [o for o in report.obligations if o.status is not Status.PROVED]
    names = ", ".join(o.label for o in bad)
    raise TeilUnknown(f"emit-c lowers only proved programs: the solver could not decide {names}", where,
                      "prove")


def default_name(program: Program) -> str:
    stem = re.sub(r"\.[A-Za-z0-9]+$", "", program.file.replace("\\", "/").rsplit("/", 1)[-1])
    return "teil_" + (c_ident(stem) if stem and not stem.startswith("<") else "kernel")


def emit_c(program: Program, params: dict[str, int] | None = None, pad: int | None = None, *,
           name: str | None = None, header: str | None = None, fuse: bool = True,
           certificate: Report | None = None) -> CSource:
    """A standalone C99 kernel for ``program`` (SPEC.md section 6, ``core-teil emit-c``).

    ``params`` fixes shape parameters at compile time (the others become arguments);
    ``pad=M`` lays every array out with extents rounded up to multiples of ``M``.  The
    program is proved first (:func:`certify`); the C is then derived from eval.py's
    equations (:class:`CInterpretation`) and every access it makes is checked in bounds
    (:func:`check_accesses`).  ``name`` is the C function (default ``teil_<file stem>``),
    ``header`` the file name the C file includes (default ``<name>.h``); ``fuse=False``
    runs every statement over its whole domain before the next (no :func:`fuse`);
    ``certificate`` a proof report the caller already holds (see :func:`certify`)."""
    pad = check_pad(pad)
    params = check_params(params, expect_program(program))
    # what the C computes with them must not overflow its 64-bit integers (reviewer rS: a pad
    # of 2**63 - 1 wrapped the padded extents round to 0; a huge parameter did not compile)
    if pad is not None and pad > MAX_PAD:
        raise TeilInputError(f"--pad {pad}: a C kernel rounds extents up to multiples of at most {MAX_PAD:,}")
    for p_, v in (params or {}).items():
        if v > MAX_ELEMENTS:
            raise TeilInputError(f"--param {p_}={v}: larger than any extent a C kernel can address "
                                 f"({MAX_ELEMENTS:,} elements)")
    if name is None:
        name = default_name(program)
    if isinstance(header, os.PathLike):
        header = os.fspath(header)
    if not isinstance(name, str) or not isinstance(header, str | None):
        raise TeilInputError(f"name={name!r}, header={header!r}: expected text (a C identifier, a file name)")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name in C_KEYWORDS or name in C_LIBRARY \
            or name.startswith(("ct_", "CT_", "TEIL_")):
        raise TeilInputError(f"--name {name!r}: not a C identifier the kernel may use")
    header = header or f"{name}.h"
    if not re.fullmatch(r"[A-Za-z0-9_.+-]+", header):
        raise TeilInputError(f"header name {header!r}: expected a plain file name")
    report = certify(program, params, pad, certificate)
    typed = check_program(program, params)
    stmts, initial, final = lower_to_ir(typed, pad)
    return _Build(typed, pad, name, header, report, stmts, initial, final, fuse).source()


#: The longest ``Σ`` a fused statement sums inside its innermost loop (:func:`sums_inside`):
#: GCC unrolls a loop of at most 16 iterations completely (``max-completely-peel-times``).
MAX_SUM_INSIDE = 16


def sums_inside(value: Sum, fused: bool) -> bool:
    """Whether a statement ``x[k] = Σ_m body`` of a fused group computes each element's sum in
    a local, with the ``m`` loop inside the innermost domain loop (``s = -0.0; for m: s += body;
    x[k] = s``), rather than accumulating into ``x`` with ``m`` outside it
    (:meth:`Emitter.accumulating`).  Both add ``m = 1..n`` in order from ``-0.0``.  For the
    short sums of a fused group's blocks (interp, helm: ``n`` = 4..13) the local stays in a
    register and the unrolled ``m`` loop is one vector expression per element run, where the
    accumulating form loads and stores the target row once per ``m`` (measured 2.7-3.4x on
    one block, docs/decisions.md); a long sum, or an unfused statement over large arrays
    (matmul, bmm), keeps the accumulating form."""
    n = value.var.bound
    return fused and n.concrete and int(n.base) <= MAX_SUM_INSIDE  # type: ignore[arg-type]


#: Vector accumulators of one tile (:func:`tile_of`), one per row: with the vector of ``R`` they
#: fit AVX2's 16 vector registers (of 4 doubles; AVX-512's 32 hold as many of 8), so GCC keeps
#: the whole tile in registers.
TILE_ACCUMULATORS = 12
#: The longest row loop a tile unrolls (code size: one line per row and vector).
MAX_TILE_ROWS = 32


@dataclass(frozen=True)
class Tile:
    """``x[.., b, c] = Σ_m L · R`` of a fused group, computed in vector tiles (:meth:`Emitter.tiled`).

    ``loops`` are the statement's loops inside the fused one, the last two the rows ``b`` and
    the elements ``c`` of a row; ``left`` (``L``) does not depend on ``c``; ``right`` (``R``)
    reads a batch-invariant input at ``m`` and ``c`` only, from a private copy with ``c`` last
    and its rows padded to ``width``; ``right_first``: the body is ``R · L``."""

    loops: tuple[LoopVar, ...]
    sum: Sum
    left: Value
    right: Load
    right_first: bool
    lanes: int  # doubles per vector: 4 for rows of at most 4, else 8
    width: int  # the row's extent rounded up to ``lanes``
    rows: int  # rows per tile (the last tile has the rest)

    @property
    def perm(self) -> tuple[int, ...]:
        """The order of ``right``'s copy: its dimension read by ``c`` last."""
        at = next(p for p, ix in enumerate(self.right.index) if ix is self.loops[-1])
        return tuple(p for p in range(len(self.right.index)) if p != at) + (at,)


def tile_of(st: StmtIR, storages: Mapping[Version, Storage], fused: bool) -> Tile | None:
    """Whether statement ``st`` of a fused group is computed in vector tiles when the compiler
    has vectors, and how.  It must be ``x[.., b, c] = Σ_m L · R`` (or ``R · L``) summed inside
    (:func:`sums_inside`), with constant row and element extents, ``L`` free of ``c`` and of
    sums, and ``R`` a read of an input the same for every block (:func:`transposed_copies`'
    condition) at ``m``, ``c`` and constants only, ``c`` once.  Measured (docs/decisions.md): the
    scalar loop leaves GCC to vectorise 7 or 13 elements per row, with tails, one row at a time;
    a tile of rows shares each load of ``R`` and hides the latency of the sums.  Padded, the
    extents are the padded ones (whole vectors where they are multiples of the lanes), and a
    padded ``expa``'s guard can only be in ``L``, which each row computes as the scalar loop
    does (``R`` is a plain read)."""
    value = st.value
    loops = st.domain[1:] if fused else st.domain
    if not isinstance(value, Sum) or not sums_inside(value, fused) or len(loops) < 2:
        return None
    body, row, inner = value.body, loops[-2], loops[-1]
    if not isinstance(body, Bin) or body.op != "mul" or not (row.bound.concrete and inner.bound.concrete) \
            or int(row.bound.base) > MAX_TILE_ROWS:  # type: ignore[arg-type]
        return None
    if storages[st.target].perm:
        return None
    memo: dict[int, frozenset[LoopVar]] = {}
    for left, right, right_first in ((body.a, body.b, False), (body.b, body.a, True)):
        if not isinstance(right, Load) or inner in free_vars(left, memo) or \
                any(isinstance(e, Sum) for e in walk_value(left)):
            continue
        src = storages[right.version]
        if src.role != "input" or src.per_element or src.perm or \
                sum(ix is inner for ix in right.index) != 1 or \
                not all(ix is inner or ix is value.var or isinstance(ix, Ext) for ix in right.index):
            continue
        # R's rows are the elements' own extent as a number (not one an `assume` makes equal):
        # its copy is padded from there
        if src.shape[next(p for p, ix in enumerate(right.index) if ix is inner)] != inner.bound:
            continue
        w = int(inner.bound.base)  # type: ignore[arg-type]
        lanes = 4 if w <= 4 else 8
        width = round_up(w, lanes)
        if width // lanes > TILE_ACCUMULATORS:  # code size: a tile of rows for every vector
            return None
        n_row = int(row.bound.base)  # type: ignore[arg-type]
        rows = -(-n_row // -(-n_row // TILE_ACCUMULATORS))
        return Tile(tuple(loops), value, left, right, right_first, lanes, width, rows)
    return None


@dataclass(frozen=True)
class Prefetch:
    """The next block (fused index + 1) of each of ``inputs`` (a caller's array and the doubles
    of one block), hinted into the caches by a tiled statement (:meth:`Emitter.prefetching`)."""

    fused: LoopVar
    inputs: tuple[tuple[Storage, int], ...]


def prefetches(group: list[StmtIR], storages: Mapping[Version, Storage],
               tiles: Mapping[int, Tile]) -> dict[int, Prefetch]:
    """The caller's arrays that a fused group reads block by block (at its fused index first,
    with a constant block size), to be prefetched one block ahead by the group's last tiled
    statement that has a loop around its tile, spread over that loop's iterations: the group's
    other statements compute from cache while the next block arrives (the hardware prefetcher
    did not overlap the first statement's strided reads with the work, docs/decisions.md)."""
    if len(group) < 2:
        return {}
    first = group[0].domain[0]
    inputs: dict[str, tuple[Storage, int]] = {}
    for st in group:
        for ld in loads(st):
            s = storages[ld.version]
            if s.role == "input" and not s.per_element and not s.perm and ld.index and ld.index[0] is first \
                    and all(e.concrete for e in s.shape[1:]):
                inputs.setdefault(s.cname, (s, math.prod(int(e.base) for e in s.shape[1:])))  # type: ignore[misc]
    hosts = [st for st in group if (t := tiles.get(id(st))) is not None and len(t.loops) > 2
             and t.loops[0].bound.concrete]
    if not inputs or not hosts:
        return {}
    return {id(hosts[-1]): Prefetch(first, tuple(inputs.values()))}


def transposed_copies(group: list[StmtIR], storages: Mapping[Version, Storage]) -> list[tuple[Load, tuple[int, ...]]]:
    """Reads of a fused group that a private copy of their input serves better: a statement
    that sums inside (:func:`sums_inside`) reads an input (a caller's array, the same for
    every block: its index map does not contain the fused loop's variable) along the
    innermost domain loop at another than its last dimension, so with a stride (interp's
    ``A[k4, m]``).  The copy (made once per call) moves that dimension last, and the read
    becomes unit-stride: the inner loop vectorises.  Returns each such read and the copy's
    dimension order."""
    if len(group) < 2:
        return []
    out: list[tuple[Load, tuple[int, ...]]] = []
    for st in group:
        value = st.value
        if not isinstance(value, Sum) or len(st.domain) < 2 or not sums_inside(value, True) or \
                any(isinstance(e, Sum) for e in walk_value(value.body)):
            continue
        first, inner = st.domain[0], st.domain[-1]
        for ld in loads(st):
            s = storages[ld.version]
            if s.role != "input" or s.per_element or s.perm or any(ix is first for ix in ld.index):
                continue
            at = [p for p, ix in enumerate(ld.index) if ix is inner]
            if len(at) == 1 and at[0] != len(ld.index) - 1:
                out.append((ld, tuple(p for p in range(len(ld.index)) if p != at[0]) + (at[0],)))
    return out


def permuted(shape: tuple[Ext, ...], perm: tuple[int, ...]) -> tuple[Ext, ...]:
    """The extents of a copy laid out in the order ``perm`` (a seam for the mutation tests: a
    copy whose extents are not permuted with its index map is caught by the check)."""
    return tuple(shape[j] for j in perm)


def loads(st: StmtIR) -> Iterator[Load]:
    return (e for e in walk_value(st.value) if isinstance(e, Load))


def fusible(group: list[StmtIR], storages: Mapping[Version, Storage]) -> bool:
    """Running ``group`` block by block (for each value ``e`` of the first index, every
    statement at ``e``) computes what running the statements one after the other does.

    Each statement writes its target at ``[e, ...]`` (St-Stmt's domain).  So if every
    statement's first loop has the same extent, and every read of a buffer that some
    statement of the group writes is at the reader's own ``e``, then every dependence
    between two statements (a value read after it is written, or overwritten after it is
    read, or written twice) stays inside one block, where the order is the statements'
    order."""
    if len(group) < 2 or any(not st.domain for st in group):
        return False
    if any(st.domain[0].bound != group[0].domain[0].bound for st in group):
        return False
    written = {storages[st.target] for st in group}
    return all(storages[ld.version] not in written or (ld.index and ld.index[0] is st.domain[0])
               for st in group for ld in loads(st))


def fuse(live: list[StmtIR], storages: Mapping[Version, Storage]) -> list[list[StmtIR]]:
    """Consecutive statements into fused groups (:func:`fusible`), greedily from the first:
    the lifted contractions of ``interp`` then pass their intermediates from one statement
    to the next within one element's block, in cache, instead of through memory."""
    groups: list[list[StmtIR]] = []
    for st in live:
        if groups and fusible([*groups[-1], st], storages):
            groups[-1].append(st)
        else:
            groups.append([st])
    return groups


def shrink(group: list[StmtIR], live: list[StmtIR], storages: Mapping[Version, Storage]) -> dict[Storage, Storage]:
    """Workspace slots of a fused group that can hold one block instead of the whole
    allocation: written only by the group, read only by the group and only at values the
    group wrote (at the reader's own block, by :func:`fusible`)."""
    if len(group) < 2:
        return {}
    inside = {id(st) for st in group}
    written_in = {storages[st.target] for st in group}
    out: dict[Storage, Storage] = {}
    for s in written_in:
        if s.role != "work" or s.per_element:
            continue
        writers = [st for st in live if storages[st.target] == s]
        readers = [(st, ld) for st in live for ld in loads(st) if storages[ld.version] == s]
        versions = {st.target for st in writers}
        if all(id(st) in inside for st in writers) and \
                all(id(st) in inside and ld.version in versions for st, ld in readers):
            out[s] = Storage(f"ct_e_{s.cname[len('ct_w_'):]}", s.alloc, s.shape[1:], "work", s.tag, True)
    return out


class _Build:
    """One emission: liveness, storage, the function body, the header."""

    def __init__(self, typed: TypedProgram, pad: int | None, name: str, header: str, report: Report,
                 stmts: list[StmtIR], initial: dict[str, Version], final: dict[str, Version],
                 fuse: bool = True) -> None:
        self.typed, self.pad, self.name, self.header, self.report = typed, pad, name, header, report
        self.fuse = fuse
        self.program = typed.program
        self.stmts, self.initial, self.final = stmts, initial, final
        self.em = Emitter(typed, pad, name)
        self.macro = name.upper()
        self.symbolic = tuple(p for p in self.program.params if p not in typed.params)

    # -- which statements matter ---------------------------------------------------

    def live(self) -> list[StmtIR]:
        """St-Seq backwards from the outputs: a statement whose value no later live statement
        reads and that is no output's final value changes no output; it is left out."""
        needed = {self.final[a.name] for a in self.program.outputs()}
        keep: list[StmtIR] = []
        for st in reversed(self.stmts):
            if st.target in needed:
                keep.append(st)
                needed |= {ld.version for ld in loads(st)}
        self.needed_initial = {v.alloc for v in needed if v.stmt < 0}
        return keep[::-1]

    # -- the function ----------------------------------------------------------------

    def source(self) -> CSource:
        program = self.program
        live = self.live()
        qualified = program.qualified
        inputs, outputs = program.inputs(), program.outputs()
        required = required_inputs(program)
        in_name = {a.name: cname(a.name) if qualified else f"ct_in_{cname(a.name)}" for a in inputs}
        out_name = {a.name: cname(a.name) if qualified else f"ct_out_{cname(a.name)}" for a in outputs}
        args = [CArg("param", p, cname(p)) for p in self.symbolic]
        args += [CArg("input", a.name, in_name[a.name], a.name in required) for a in inputs]
        args += [CArg("output", a.name, out_name[a.name]) for a in outputs]
        args.append(CArg("work", "", "work", False))

        em = self.em
        shape = {a.name: self.initial[a.name].shape for a in program.allocs}
        declared = {a.name: tuple(CInterpretation(self.typed).extent(d) for d in a.shape) for a in program.allocs}
        slots: dict[tuple[str, str], Storage] = {}

        def slot(x: str, tag: str) -> Storage:
            key = (x, tag)
            if key not in slots:
                slots[key] = Storage(f"ct_w_{cname(x)}_{tag}", x, shape[x], "work", tag)
            return slots[key]

        storages: dict[Version, Storage] = {}
        setup: list[str] = []  # initial stores (before any statement)
        # initial versions that are read, or are an output's final value
        for a in program.allocs:
            x = a.name
            v0 = self.initial[x]
            if x not in self.needed_initial:
                continue
            if x in in_name:
                given = Storage(in_name[x], x, shape[x], "input")
                if x in required:
                    storages[v0] = given
                else:  # not supplied (NULL) means • everywhere (μ_allocs)
                    s = Storage(f"ct_init_{cname(x)}", x, shape[x], "input")
                    storages[v0] = s
                    nan = slot(x, "init")
                    em.where = f"initial store of {x}"
                    setup.append(f"    const double *{s.cname} = {given.cname};")
                    setup.append(f"    if ({s.cname} == NULL) {{")
                    setup += ["    " + line for line in em.fill(nan, declared[x], None)]
                    setup.append(f"        {s.cname} = {nan.cname};")
                    setup.append("    }")
            elif x in out_name and self.final[x] is v0:
                storages[v0] = Storage(out_name[x], x, shape[x], "output")  # filled with • below
            else:
                storages[v0] = slot(x, "init")
                em.where = f"initial store of {x}"
                setup += em.fill(storages[v0], declared[x], None)
        current = {x: storages.get(v0) for x, v0 in self.initial.items()}
        for st in live:
            x = st.target.alloc
            reads_x = any(isinstance(e, Load) and e.version.alloc == x for e in walk_value(st.value))
            cur = current.get(x)
            if x in out_name and self.final[x] is st.target:
                target = Storage(out_name[x], x, shape[x], "output")  # the last value of an output
            elif reads_x and cur is not None and cur.tag == "a":
                target = slot(x, "b")  # St-Stmt reads the old x while it writes the new one
            elif not reads_x and cur is not None and cur.tag in ("a", "b"):
                target = cur  # the old value is dead (St-Seq): overwrite it
            else:
                target = slot(x, "a")
            storages[st.target] = target
            current[x] = target
        groups = fuse(live, storages) if self.fuse else [[st] for st in live]
        for group in groups:
            for old_slot, small in shrink(group, live, storages).items():
                slots[(old_slot.alloc, old_slot.tag)] = small
                for v, st_ in list(storages.items()):
                    if st_ == old_slot:
                        storages[v] = small
        for group in groups:
            for st in group:
                tile = tile_of(st, storages, len(group) > 1)
                if tile is not None:
                    em.tiles[id(st)] = tile
        self.pad_rows(storages, slots)
        setup += self.copies(groups, storages, slots)
        for group in groups:
            em.prefetch.update(prefetches(group, storages, em.tiles))
        body: list[str] = []
        for group in groups:
            fused = len(group) > 1
            inner: list[str] = []
            for st in group:
                em.where = f"statement {st.index + 1}"
                where = _comment(f"{st.stmt.span.file}:{st.stmt.span.line}") if st.stmt.span.known else ""
                before, lines = em.statement(st, storages[st.target], storages, fused)
                comment = f"/* statement {st.index + 1}{' (' + where + ')' if where else ''}: " \
                          f"{_comment(format_stmt(st.stmt))} */"
                if fused:  # Σs that depend on no index of the group are computed before its loop
                    body += ["    " + line for line in before]
                    inner += ["        " + comment, "        {", *["        " + line for line in lines], "        }"]
                else:
                    body += ["    " + comment, "    {", *["    " + line for line in before + lines], "    }"]
            if fused:
                first = group[0].domain[0]
                body.append(f"    /* statements {', '.join(str(st.index + 1) for st in group)} fused over their "
                            f"first index (1..{_show(first.bound)}): each reads the others' values only at "
                            f"its own first index */")
                body += ["    " + em.loop(first) + " {", *inner, "    }"]
        # outputs whose final value is their initial one
        for a in outputs:
            x = a.name
            v = self.final[x]
            if v.stmt >= 0:
                continue
            out = Storage(out_name[x], x, shape[x], "output")
            em.where = f"output {x}"
            src = storages.get(v)
            if src is not None and src.cname == out.cname:
                setup += em.fill(out, declared[x], None)
            else:
                body += em.fill(out, declared[x], src)
        check_accesses(em.accesses, self.typed)  # nothing is printed that is not proved in bounds
        return self.finish(args, slots, setup, body, shape)

    def pad_rows(self, storages: dict[Version, Storage], slots: dict[tuple[str, str], Storage]) -> None:
        """A block of a fused group (:func:`shrink`) that a tile writes gets rows of the tile's
        width, so that the tile stores whole vectors.  The lanes past a row's end are never read
        at a row's own elements: every read of the block is at the reader's domain, whose last
        index stays below the real extent; a tile writes them only from lanes past the end of
        the rows it reads (``R``'s zeros), so they hold ``L · 0`` sums, never a value."""
        widths = {storages[st.target]: t.width for st in self.stmts if (t := self.em.tiles.get(id(st))) is not None}
        for old, width in widths.items():
            if not old.per_element or width == int(old.shape[-1].base):  # type: ignore[arg-type]
                continue
            new = replace(old, shape=(*old.shape[:-1], ext(width)))
            slots[(old.alloc, old.tag)] = new
            for v, s in list(storages.items()):
                if s == old:
                    storages[v] = new

    def copies(self, groups: list[list[StmtIR]], storages: Mapping[Version, Storage],
               slots: dict[tuple[str, str], Storage]) -> list[str]:
        """The private copies of batch-invariant inputs, made once per call: transposed
        (:func:`transposed_copies`) and, for a tile's ``R`` (:func:`tile_of`), with the rows
        read along a tile's elements last and padded with zeros to the tile's width."""
        em = self.em
        wanted: list[tuple[Load, tuple[int, ...], int | None]] = []
        for group in groups:
            wanted += [(ld, perm, None) for ld, perm in transposed_copies(group, storages)]
            wanted += [(t.right, t.perm, t.width) for st in group if (t := em.tiles.get(id(st))) is not None]
        width: dict[tuple[str, tuple[int, ...]], int] = {}
        for ld, perm, w in wanted:
            key = (storages[ld.version].cname, perm)
            width[key] = max(width.get(key, 0), w or 0)
        setup: list[str] = []
        made: dict[tuple[str, tuple[int, ...]], Storage] = {}
        for ld, perm, _ in wanted:
            src = storages[ld.version]
            key = (src.cname, perm)
            shape = permuted(src.shape, perm)
            real = shape[-1]
            wider = width[key] > 0 and ext(width[key]) != real  # a tile's R (tile_of: a constant extent)
            if perm == tuple(range(len(perm))) and not wider:
                continue  # read where it is
            if key not in made:
                x = src.alloc
                tag = "t" + "_".join(str(j) for j in perm)
                if wider:
                    shape, tag = (*shape[:-1], ext(width[key])), f"{tag}_w{width[key]}"
                cp = made[key] = Storage(f"ct_w_{cname(x)}_{tag}", x, shape, "work", tag, perm=perm)
                slots[(x, tag)] = cp
                em.where = f"{'transposed' if perm != tuple(range(len(perm))) else 'padded'} copy of {x}"
                setup += em.copy(cp, src)
                if shape[-1] != real:
                    setup += em.zero_lanes(cp, real)
            em.redirect[id(ld)] = made[key]
        return setup

    # -- printing ---------------------------------------------------------------------

    def finish(self, args: list[CArg], slots: dict[tuple[str, str], Storage], setup: list[str],
               body: list[str], shape: dict[str, tuple[Ext, ...]]) -> CSource:
        em, m = self.em, self.macro
        params_c = [f"ptrdiff_t {a.cname}" for a in args if a.role == "param"]
        proto_args = params_c + [f"const double *{a.cname}" for a in args if a.role == "input"] + \
            [f"double *{a.cname}" for a in args if a.role == "output"] + ["double *work"]
        def_args = params_c + [f"const double *restrict {a.cname}" for a in args if a.role == "input"] + \
            [f"double *restrict {a.cname}" for a in args if a.role == "output"] + ["double *restrict work"]
        work_args = ", ".join(params_c) or "void"

        # sizes: checked products, so that no index computation can overflow ptrdiff_t
        size_lines, size_names = self.sizes(args, slots, shape)
        lines = [f"/* {self.name}: generated by core-teil emit-c; see {self.header} for the certificate "
                 f"and the calling convention. */",
                 f'#include "{self.header}"', "", "#include <math.h>", "#include <stddef.h>",
                 "#include <stdint.h>", "#include <stdlib.h>", "",
                 "#if defined(__FAST_MATH__)",
                 '#error "this kernel computes IEEE doubles operation by operation (NaN is the undefined '
                 'value): do not compile it with -ffast-math"',
                 "#endif",
                 "/* no fused multiply-add: a*b + c is rounded twice, as ct.evaluate rounds it */",
                 "#if defined(__clang__)", "#pragma STDC FP_CONTRACT OFF", "#elif defined(__GNUC__)",
                 '#pragma GCC optimize ("fp-contract=off")',
                 "/* GCC 12 with AVX-512 turned a loop copying a workspace filled with (k < 3 ? NAN : 0.0)",
                 "   into a memcpy and folded it into a broadcast of the first value: all NaN */",
                 '#pragma GCC optimize ("no-tree-loop-distribute-patterns")', "#endif",
                 "", "/* the largest element count of one array: its bytes fit ptrdiff_t */",
                 "#define CT_MAXEL (PTRDIFF_MAX / 8)", ""]
        if size_lines.largest > 2**31 // 8:  # beyond what a 32-bit ptrdiff_t addresses
            lines += [f"#if CT_MAXEL < {size_lines.largest}",
                      f'#error "this kernel\'s arrays ({size_lines.largest} doubles) need a 64-bit ptrdiff_t"',
                      "#endif", ""]
        if size_lines.needs_mul:
            lines += ["/* *acc *= x unless that exceeds CT_MAXEL (then 1); *acc, x >= 1 */",
                      "static int ct_mul(ptrdiff_t *acc, ptrdiff_t x)", "{",
                      "    if (x > CT_MAXEL / *acc) return 1;", "    *acc *= x;", "    return 0;", "}", ""]
        if em.vector_lanes:
            lines += ["/* vector tiles: GCC's and Clang's vector extensions, on a CPU with AVX2 or better",
                      "   (-DCT_VECTOR=0 compiles the scalar loops instead; both compute the same doubles) */",
                      "#ifndef CT_VECTOR", "#if defined(__GNUC__) && defined(__AVX2__)", "#define CT_VECTOR 1",
                      "#else", "#define CT_VECTOR 0", "#endif", "#endif", "#if CT_VECTOR"]
            # GCC's and Clang's __builtin_memcpy, not <string.h>: its names (strerror, ...) stay
            # free for the program's arrays and the kernel's name
            lines += [f"typedef double ct_v{n} __attribute__((vector_size({8 * n})));" for n in sorted(em.vector_lanes)]
            lines += ["#endif", ""]
        if em.uses_cdiv:
            # the quotient first and the cases as selects: GCC vectorises the loop around it (helm's
            # division took 15% of its time as branches; 75 -> 70 ms); a / b of the cases that
            # replace it is never returned
            lines += ["/* controlled division (report Definition 8): 0/0 = 0, 0/undefined = 0, v/0 = undefined */",
                      "static inline double ct_cdiv(double a, double b)", "{",
                      "    double r = a / b;", "    if (b == 0.0) r = NAN;", "    if (a == 0.0) r = 0.0;",
                      "    return r;", "}", ""]
        # the workspace size function
        lines += [f"ptrdiff_t {self.name}_work({work_args})", "{"]
        lines += size_lines.code("return -1;", "    ", sizes_only=True)
        lines += [f"    return {size_names['work']};", "}", ""]
        lines += [f"int {self.name}({', '.join(def_args)})", "{"]
        lines += size_lines.code(f"return {m}_EPARAM;", "    ")
        for a in args:
            if a.role in ("input", "output") and a.required:
                lines.append(f"    if ({a.cname} == NULL) return {m}_ENULL;")
        lines.append("    double *ct_own = NULL;")
        if size_names["work"] != "0":
            lines += ["    if (work == NULL) {",
                      f"        ct_own = (double *)malloc((size_t){size_names['work']} * sizeof(double));",
                      f"        if (ct_own == NULL) return {m}_ENOMEM;",
                      "        work = ct_own;", "    }"]
        off = "0"
        for key in sorted(slots, key=lambda k: slots[k].cname):
            s = slots[key]
            lines.append(f"    double *restrict {s.cname} = work + {off};")
            off = f"{off} + {size_names[s.cname]}" if off != "0" else size_names[s.cname]
        # an input no output depends on is still an argument (the convention is the program's)
        lines.append("    " + " ".join(f"(void){a.cname};" for a in args if a.role in ("input", "work")))
        lines += setup + body
        lines += ["    free(ct_own);", f"    return {m}_OK;", "}", ""]
        c_text = "\n".join(lines)
        passed = {x.name for x in args if x.role in ("input", "output")}
        return CSource(c_text, self.header_text(args, proto_args, work_args, shape), self.name,
                       self.header, self.report, tuple(args),
                       {a.name: shape[a.name] for a in self.program.allocs if a.name in passed},
                       len(em.accesses), self.pad, dict(self.typed.params))

    def sizes(self, args: list[CArg], slots: dict[tuple[str, str], Storage],
              shape: dict[str, tuple[Ext, ...]]) -> tuple[_Sizes, dict[str, str]]:
        em = self.em
        sz = _Sizes(self.typed, self.symbolic, self.pad, em)
        names: dict[str, str] = {}
        for key in sorted(slots, key=lambda k: slots[k].cname):
            s = slots[key]
            names[s.cname] = sz.size(s.shape, self.program.alloc(s.alloc))
        for a in self.program.allocs:
            sz.size(shape[a.name], a)  # every array's element count fits (the caller's too)
        for _, shp in sz.order:
            for e in shp:
                em.ext_c(e)  # its padded extents are locals too
        names["work"] = sz.total([names[slots[k].cname] for k in sorted(slots, key=lambda k: slots[k].cname)])
        return sz, names

    def header_text(self, args: list[CArg], proto_args: list[str], work_args: str,
                    shape: dict[str, tuple[Ext, ...]]) -> str:
        r, m = self.report, self.macro
        guard = f"{m}_H_INCLUDED"
        given = ", ".join(f"{k}={v}" for k, v in self.typed.params.items()) or "none"
        symbolic = ", ".join(self.symbolic) or "none"
        counts: dict[str, int] = {}
        for o in r.obligations:
            counts[o.name] = counts.get(o.name, 0) + 1
        obligations = ", ".join(f"{k} x{v}" if v > 1 else k for k, v in counts.items())
        proved = r.count(Status.PROVED)
        cert = [f"{self.name}: the Core-TeIL program {r.file} as a standalone C99 kernel",
                "(generated by core-teil emit-c; paper 000 section 5, issue 15).", "",
                "Certificate: this file has no bounds checks; what licenses that is",
                f"  program     sha256 {r.program_hash} (of `core-teil fmt {r.file}`)",
                f"  parameters  {given} (compiled in); symbolic: {symbolic}",
                f"  pad         {self.pad if self.pad is not None else 'none'}",
                f"  solver      {r.solver} {r.solver_version}, seed 42, rlimit {r.rlimit:,}",
                f"  obligations {proved}/{len(r.obligations)} proved: {obligations}",
                *[f"  => {c[3:]}" for c in r.conclusions()],
                f"  emitter     each of the {len(self.em.accesses)} array accesses below proved within its "
                f"array's extents",
                "              for every parameter value allowed (paper Lemma 4.3 for the emitted loops),",
                "              row-major strides checked (core_teil/native/emit_c.py, check_accesses)", ""]
        cert += CONVENTION.format(name=self.name, macro=m).splitlines()
        cert.append("")
        cert.append("Arrays (extents as the caller allocates them, row-major):")
        for a in args:
            if a.role in ("input", "output"):
                shp = shape[a.name]
                dims = ", ".join(_show(e) for e in shp)
                note = "" if a.required or a.role == "output" else " (may be NULL)"
                cert.append(f"  {a.role:6} {a.cname} : [{dims}]{note}")
        if self.pad is not None:
            cert.append(f"  (ceil_{self.pad}(n) = {self.pad} * ceil(n / {self.pad}): report Definition 7)")
        text = ["/*"] + [(" * " + _comment(line)).rstrip() for line in cert] + [" */",
                f"#ifndef {guard}", f"#define {guard}", "", "#include <stddef.h>", "",
                "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
                f"#define {m}_OK 0", f"#define {m}_ENULL 1", f"#define {m}_EPARAM 2", f"#define {m}_ENOMEM 3", ""]
        for k, v in self.typed.params.items():
            text.append(f"#define {m}_PARAM_{cname(k)} {v}")
        for a in args:
            if a.role in ("input", "output") and all(e.concrete for e in shape[a.name]):
                size = math.prod(int(e.base) for e in shape[a.name])
                text.append(f"#define {m}_SIZE_{a.cname} {size}  /* elements of {a.cname} */")
        text += ["", f"/* doubles of workspace the kernel needs ({self.name}_work(...) returns -1 for parameters",
                 "   it does not accept) */",
                 f"ptrdiff_t {self.name}_work({work_args});", "",
                 f"int {self.name}({', '.join(proto_args)});", "",
                 "#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""]
        return "\n".join(text)


#: ``CT_MAXEL`` of the emitted C with a 64-bit ``ptrdiff_t``: the bytes of an array fit it.
MAX_ELEMENTS = (2**63 - 1) // 8

#: The largest ``pad`` the C accepts: ``(n + M - 1) / M * M`` with ``n <= CT_MAXEL`` stays in range.
MAX_PAD = 2**32

#: The largest value of ``long long``, the type the C evaluates an ``assume`` in.
LLONG_MAX = 2**63 - 1


class _Sizes:
    """The parameter checks and element counts of the function's entry: each parameter >= 1
    and within ``CT_MAXEL``, every ``assume`` holds (the certificate's range), every array's
    element count fits; padded extents as locals."""

    def __init__(self, typed: TypedProgram, symbolic: tuple[str, ...], pad: int | None, em: Emitter) -> None:
        self.typed, self.symbolic, self.pad, self.em = typed, symbolic, pad, em
        self.products: dict[tuple, str] = {}
        self.order: list[tuple[str, tuple[Ext, ...]]] = []
        self.needs_mul = False
        self.totals: list[tuple[str, list[str]]] = []
        self.largest = 0  # the largest concrete element count

    def size(self, shp: tuple[Ext, ...], where: Alloc | None = None) -> str:
        """The element count of an array of extents ``shp``, of the allocation ``where``."""
        if all(e.concrete for e in shp):
            n = math.prod(int(e.base) for e in shp)
            self.largest = max(self.largest, n)
            if n > MAX_ELEMENTS:
                what = f"{where.name}: an array of" if where is not None else "an array of"
                raise TeilResourceError(f"{what} {n:,} elements (extents {[e.base for e in shp]}) does not "
                                        f"fit a C kernel's ptrdiff_t byte offsets (at most {MAX_ELEMENTS:,})",
                                        where.span if where is not None else NO_SPAN, "μ_allocs")
            return str(n)
        key = _normal(shp)
        if key not in self.products:
            self.products[key] = f"ct_n{len(self.products) + 1}"
            self.order.append((self.products[key], shp))
            self.needs_mul = True
        return self.products[key]

    def total(self, parts: list[str]) -> str:
        if not parts:
            return "0"
        if all(p.isdigit() for p in parts):
            n = sum(int(p) for p in parts)
            self.largest = max(self.largest, n)
            if n > MAX_ELEMENTS:
                raise TeilResourceError(f"a workspace of {n:,} doubles does not fit a C kernel's ptrdiff_t byte "
                                        f"offsets (at most {MAX_ELEMENTS:,})")
            return str(n)
        self.totals.append(("ct_work", parts))
        return "ct_work"

    def code(self, fail: str, pad: str, sizes_only: bool = False) -> list[str]:
        """The checks, ending in ``fail``; ``sizes_only`` (the ``*_work`` function): only the
        padded extents the element counts use (one only a loop uses would be an unused
        variable there, which -Wall -Werror rejects)."""
        em = self.em
        out: list[str] = []
        counted = {e for _, shp in self.order for e in shp}
        for p in self.symbolic:
            c = cname(p)
            out.append(f"{pad}if ({c} < 1 || {c} > CT_MAXEL) {fail}")
        for cond in self.typed.program.conds:
            for name, cap in self.caps(cond):
                out.append(f"{pad}if ({cname(name)} > {cap}LL) {fail}  /* so that the assume below cannot overflow */")
            out.append(f"{pad}if (!({self.cond_c(cond)})) {fail}  /* assume {_comment(str_cond(cond))} */")
        for e, local in sorted(em.padded.items(), key=lambda kv: kv[1]):
            if sizes_only and e not in counted:
                continue
            out.append(f"{pad}const ptrdiff_t {local} = ({cname(str(e.base))} + {e.pad - 1}) / {e.pad} * {e.pad};")
        for local, shp in self.order:
            out.append(f"{pad}ptrdiff_t {local} = 1;")
            for e in shp:
                out.append(f"{pad}if (ct_mul(&{local}, {em.ext_c(e)})) {fail}")
        for local, parts in self.totals:
            out.append(f"{pad}ptrdiff_t {local} = 0;")
            for p in parts:
                out.append(f"{pad}if ({p} > CT_MAXEL - {local}) {fail}")
                out.append(f"{pad}{local} += {p};")
        return out

    def _side(self, lin_: Any) -> tuple[int, list[tuple[int, str]]]:
        """One side of an ``assume``: its constant (given parameters substituted) and its terms."""
        const, terms = 0, []
        for t in lin_.terms:
            if t.name is None:
                const += t.coef
            elif t.name in self.typed.params:
                const += t.coef * self.typed.params[t.name]
            else:
                terms.append((t.coef, t.name))
        return const, terms

    def caps(self, cond: Any) -> list[tuple[str, int]]:
        """Bounds on the symbolic parameters of ``cond`` under which each side, evaluated in
        ``long long`` term by term, cannot overflow: ``|const| + Σ |coef| · cap <= LLONG_MAX``.
        A parameter above its cap is refused (EPARAM), as one above ``CT_MAXEL`` is: a refusal
        is safe, a wrapped comparison is not (reviewer rS: ``assume 2**62 * k <= 2**62`` held
        for k = 2 in C, and the kernel read out of bounds).  Empty when ``CT_MAXEL`` suffices."""
        caps: dict[str, int] = {}
        for side in (cond.lhs, cond.rhs):
            const, terms = self._side(side)
            if abs(const) > LLONG_MAX:
                raise TeilResourceError(f"assume {str_cond(cond)}: the constant {const} does not fit a C long long")
            if not terms:
                continue
            cap = (LLONG_MAX - abs(const)) // sum(abs(c) for c, _ in terms)
            if cap < 1:
                raise TeilResourceError(f"assume {str_cond(cond)}: no parameter value >= 1 keeps it within a C "
                                        f"long long")
            for _, name in terms:
                caps[name] = min(caps.get(name, MAX_ELEMENTS), cap)
        return [(n, c) for n, c in sorted(caps.items()) if c < MAX_ELEMENTS]

    def cond_c(self, cond: Any) -> str:
        """An ``assume`` as C (linear over parameters; given ones substituted), in ``long long``
        arithmetic, which :meth:`caps` keeps from overflowing."""
        def lin(lin_: Any) -> str:
            const, terms = self._side(lin_)
            parts = [f"{c}LL * {cname(n)}" for c, n in terms]
            if const or not parts:
                parts.append(f"{const}LL")
            return " + ".join(parts)

        lhs, rhs = lin(cond.lhs), lin(cond.rhs)
        if lhs == rhs:
            # `assume k <= k`: decided here, since GCC rejects the self-comparison under
            # -Wall -Werror (-Wtautological-compare)
            return "1" if cond.op in ("<=", ">=", "==") else "0"
        return f"{lhs} {cond.op} {rhs}"


def str_cond(cond: Any) -> str:
    """An ``assume`` condition as the program wrote it (for a C comment)."""

    def lin(lin_: Any) -> str:
        out = []
        for t in lin_.terms:
            out.append(str(t.coef) if t.name is None else (t.name if t.coef == 1 else f"{t.coef}*{t.name}"))
        return " + ".join(out) or "0"

    return f"{lin(cond.lhs)} {cond.op} {lin(cond.rhs)}"
