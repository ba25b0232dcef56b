"""C per plan at ``ct.compile`` time (issue 15, item 2): emit-c's kernel, compiled, cached, loaded.

The native engine interprets its checked plan with generic kernels whose extents are
run-time values.  :mod:`core_teil.native.emit_c` writes the same program as C whose
extents are compile-time constants, and a C compiler turns those loops into code that
was 1.5-5x faster than the engine on one thread (docs/decisions.md, "The native
engine").  This module builds that C for a :class:`~core_teil.native.engine.Kernel`
whose parameters are all given, and runs it in place of the plan when it can.

What the C may be trusted with, and why:

- **Bounds.**  emit-c lowers only programs whose every obligation is proved (here: the
  very report the engine proved before planning, :func:`emit_c.certify`'s ``given``), and
  every array access it prints is proved in bounds (``emit_c.check_accesses``).  The
  arrays handed to it are the engine's own: inputs after the reference engine's checks
  (``semantics.inputs.validate_inputs``: names, shapes, float64, native byte order),
  C-contiguous; outputs fresh, or ``out=`` arrays the engine already checked.
- **Values.**  The C computes, operation by operation, the doubles ``ct.evaluate``
  computes (sums in order from ``-0.0``, controlled division, NaN for •; no
  ``-ffast-math``, and ``-ffp-contract=off`` on top of the file's own pragma).  That is
  the engine's own yardstick, so no overflow guard is needed: ``±inf`` and huge values
  get the reference engine's answer, which is what the engine falls back to for them.
- **The cache.**  A library is named by the SHA-256 of everything it is built from (the
  C text, the header, the compiler command and flags, and, with ``-march=native``, this
  CPU's identity) and lives under the user cache directory (``$CORE_TEIL_CJIT_DIR``, else
  ``<user cache dir>/core-teil/cjit``).  It is compiled in a private temporary directory
  and renamed into place, so a concurrent process sees either no file or a whole one;
  its name also records the SHA-256 of its own bytes, which is checked before every
  load, so a truncated or altered file is compiled again, never loaded.

A padded plan (``pad=M``) runs emit-c's padded C, which computes ``ct.evaluate(...,
pad=M)``'s doubles over the padded extents: an input in the padded layout already is used
in place; one read along the batch dimension is staged into the padded layout a piece of
that dimension at a time (:data:`STAGE_BYTES`), in a buffer of this thread's whose padding
stays 0, and the C runs on each piece while it is in the cache; any other is copied into a
padded buffer kept from the last call.  Each output comes back as a view of its padded
array at the declared shape, as from the plan.  It is skipped, and the plan runs as before, when
``CORE_TEIL_CJIT=0``, with symbolic parameters, without a C compiler (or when it fails),
for plans with BLAS steps (``numpy.matmul`` beats naive loops), and for plans too small
to repay a compile
(:data:`MIN_WORK`); :func:`why_not` says which.  The C is single-threaded: a plan the
engine would spread over several OpenMP threads runs as one call per thread, each on a
contiguous chunk of the batch dimension that ``native.blockwise`` proves (:class:`Batch`;
padded, cut at multiples of the pad), or, without a leading one, as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import itertools
import math
import os
import platform
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..lang.shapes import round_up
from ..lang.syntax import Program
from . import _native

__all__ = ["COMPILING", "ENV_DIR", "ENV_SWITCH", "MIN_WORK", "Batch", "CKernel", "build", "cache_directory", "emit",
           "enabled", "prepare", "why_not"]

#: ``CORE_TEIL_CJIT=0`` turns compiled C off (the plan runs as before).
ENV_SWITCH = "CORE_TEIL_CJIT"
#: Where compiled kernels are kept (default: the user cache directory's ``cjit``).
ENV_DIR = "CORE_TEIL_CJIT_DIR"
#: Bumped when the layout of an entry or the build changes meaning: old entries are not read.
FORMAT = 1
#: Innermost iterations (the plan's, per call) below which a compile (0.3-1 s) is not worth it:
#: about 0.1 ms of the engine's time a call.
MIN_WORK = 1 << 16
#: What emit-c's header asks for: IEEE doubles operation by operation (no -ffast-math, no
#: contraction into fused multiply-adds); errno and traps are never observed.
BASE_FLAGS = ("-O3", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off", "-fPIC", "-shared")
COMPILE_TIMEOUT_S = 300
#: A padded plan's inputs that are not in the padded layout are staged into the padded layout
#: a piece of the batch dimension at a time, about this many bytes of padded rows, so that the
#: C reads them from the cache the copy left them in (:meth:`CKernel.run`).  Measured, one thread,
#: pad 8, medians of 7 (docs/decisions.md): 0.5, 1, 2 and 4 MiB and the whole input at once gave
#: interp n=7 55.2, 51.8, 46.5, 49.7 and 66.9 ms, interp n=4 16.8, 14.4, 13.8, 14.2 and 18.5 ms.
STAGE_BYTES = 1 << 21
#: Chunks of the batch dimension per thread on several threads, handed out as threads finish:
#: with one chunk per thread, a core shared with another process's or library's thread (OpenBLAS's
#: workers poll for about 0.1 s after a numpy BLAS call) held the whole run back.  Two threads,
#: right after a 300x300 numpy.matmul, medians of 15 (docs/decisions.md): helm 55.1 -> 43.3 ms,
#: interp n=7 19.9 -> 15.7 ms; without the matmul 28.3 -> 28.8 and 10.5 -> 10.0 ms.
CHUNKS_PER_THREAD = 4

#: A plan's ``cjit`` while its C compiles (outside the engine's lock): the plan runs meanwhile.
COMPILING = "its C is being compiled (the plan runs meanwhile)"
_LOADED: dict[str, Any] = {}  # library path -> the loaded library (kept alive for the process)
_LOCK = threading.Lock()


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip() != "0"


def cache_directory() -> Path:
    given = os.environ.get(ENV_DIR)
    if given:
        # absolute: dlopen searches its library path for a bare file name, not the working
        # directory, so CORE_TEIL_CJIT_DIR=. compiled libraries it never loaded (review r15c)
        return Path(given).expanduser().absolute()
    from ..proving.cache import default_directory

    return default_directory() / "cjit"


def compiler() -> tuple[str, ...] | None:
    """The C compiler setuptools would use (``$CC``, else this Python's ``CC``), if it is on the PATH."""
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        return None
    return tuple(cc)


def cpu_identity() -> str | None:
    """This CPU's model and feature flags (Linux), so that a ``-march=native`` library built on one
    machine is never loaded on another that shares the cache directory; None elsewhere."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return None
    keep = [ln for ln in text.splitlines() if ln.startswith(("model name", "flags", "Features", "CPU part"))]
    return hashlib.sha256("\n".join(sorted(set(keep))).encode()).hexdigest() if keep else None


def flags() -> tuple[str, ...]:
    """:data:`BASE_FLAGS`, with ``-march=native`` where the CPU can be told apart (see :func:`cpu_identity`):
    it was worth 1.6x on interp n=4 (AVX2 over SSE2)."""
    return (*BASE_FLAGS, "-march=native") if cpu_identity() is not None and platform.machine() in (
        "x86_64", "AMD64", "aarch64", "arm64") else BASE_FLAGS


class CJitUnavailable(Exception):
    """Why this plan runs without compiled C (the message says)."""


@dataclass(frozen=True)
class Entry:
    """One cache entry: ``<key>.<sha256 of the library's bytes>.so``."""

    key: str
    path: Path

    @property
    def digest(self) -> str:
        return self.path.name.split(".")[1]

    def intact(self) -> bool:
        try:
            return hashlib.sha256(self.path.read_bytes()).hexdigest() == self.digest
        except OSError:
            return False


def cache_key(c_text: str, h_text: str, cc: tuple[str, ...], fl: tuple[str, ...]) -> str:
    ident = cpu_identity() if "-march=native" in fl else None
    material = repr((FORMAT, cc, fl, ident, platform.machine(), c_text, h_text))
    return hashlib.sha256(material.encode()).hexdigest()[:32]


def lookup(directory: Path, key: str) -> Entry | None:
    """An intact entry for ``key``; damaged ones are removed (so that a rebuild replaces them)."""
    try:
        found = sorted(directory.glob(f"{key}.*.so"))
    except OSError:
        return None
    for path in found:
        entry = Entry(key, path)
        if entry.intact():
            return entry
        with contextlib.suppress(OSError):
            path.unlink()
    return None


def compile_entry(directory: Path, key: str, c_text: str, h_text: str, header: str,
                  cc: tuple[str, ...], fl: tuple[str, ...]) -> Entry:
    """Compile in a private directory beside the cache, then rename into place (atomic on one
    file system): a concurrent process finds no file or a whole one, never half of one."""
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".build-", dir=directory) as tmp:
        # a fixed source name, compiled from inside the directory, so the library's bytes do
        # not depend on which process built it
        (Path(tmp) / header).write_text(h_text)
        (Path(tmp) / "kernel.c").write_text(c_text)
        cmd = [*cc, *fl, "kernel.c", "-o", "kernel.so"]
        try:
            done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CJitUnavailable(f"{cc[0]} did not run ({exc})") from None
        if done.returncode != 0:
            first = next((ln for ln in done.stderr.splitlines() if "error" in ln), done.stderr.strip()[:200])
            raise CJitUnavailable(f"{cc[0]} failed: {first}")
        if not (Path(tmp) / "kernel.so").is_file():
            raise CJitUnavailable(f"{cc[0]} exited 0 but wrote no library")
        data = (Path(tmp) / "kernel.so").read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        final = directory / f"{key}.{digest}.so"
        os.replace(Path(tmp) / "kernel.so", final)
    return Entry(key, final)


def load(entry: Entry) -> Any:
    with _LOCK:
        lib = _LOADED.get(str(entry.path))
        if lib is None:
            lib = _LOADED[str(entry.path)] = ctypes.CDLL(str(entry.path))
        return lib


@dataclass(frozen=True)
class Batch:
    """A kernel emitted with its batch parameter symbolic, run in chunks on several threads.

    The chunks are what ``native.blockwise`` runs (issue 17): the obligation
    batch-elementwise proves that element ``e`` of every output is computed from element
    ``e`` of what it reads, whatever the extent, so a chunk computes the very doubles the
    whole run does.  Every batched allocation has the batch dimension first, so a chunk is
    a contiguous run of rows."""

    extent: int  # the batch parameter's value in this plan
    rows: Mapping[str, int]  # allocation -> doubles per batch index (absent: broadcast)
    pad: int | None = None  # padded: a chunk of E' indices computes ceil_M(E') padded rows
    #: the plan runs on one thread (its inputs staged in pieces, :meth:`CKernel.run`), not on the team
    single: bool = False


@dataclass(frozen=True)
class CKernel:
    """A compiled emit-c kernel for one plan: :meth:`run` -> the outputs."""

    fn: Any  # the ctypes function
    inputs: tuple[tuple[str, bool], ...]  # TeIL name, required, in argument order
    outputs: tuple[tuple[str, tuple[int, ...]], ...]  # TeIL name, shape, in argument order
    work: Any  # ctypes function: doubles of workspace (for a chunk's extent, with a batch)
    path: Path
    batch: Batch | None = None
    #: With a pad: every input's and output's extents as the C takes them (rounded up)
    padded: Mapping[str, tuple[int, ...]] | None = None

    @functools.cached_property
    def taken(self) -> frozenset[str]:
        """The allocations the C takes an initial value of: its input arguments."""
        return frozenset(name for name, _ in self.inputs)

    def run(self, arrays: Mapping[str, np.ndarray], targets: Mapping[str, np.ndarray],
            workspace: Any) -> dict[str, np.ndarray] | None:
        """The outputs, or None when the C cannot take these arrays (the plan then runs)."""
        # an initial value for an allocation that is no argument of the C (an `output` that
        # accumulates, `Y = add Y X`: docs/decisions.md, "Running"): only the plan reads it, and
        # the C would read the allocation as never supplied, • (review r25)
        if any(name not in self.taken for name in arrays):
            return None
        # an input's address, None (not supplied), or the array itself: staged a piece at a time
        base: list[tuple[str, int | np.ndarray | None]] = []
        staged: list[str] = []
        for name, required in self.inputs:
            a = arrays.get(name)
            if a is None:
                if required:
                    return None
                base.append((name, None))  # "not supplied": the C reads NaN (the convention)
                continue
            if a.dtype != np.float64 or not a.dtype.isnative or not a.flags.c_contiguous:
                return None
            if self.padded is not None and a.shape != self.padded[name]:
                if self.batch is not None and name in self.batch.rows:
                    staged.append(name)
                    base.append((name, a))  # each piece's rows staged by _call
                    continue
                a = self._padded_copy(name, a, workspace)
            base.append((name, a.ctypes.data))
        results: dict[str, np.ndarray] = {}
        for name, shape in self.outputs:
            if self.padded is not None:
                from .engine import aligned_empty

                # the whole padded array, handed back at the declared shape: a view, as the
                # plan's padded runs return (copying it out cost more than bmm's kernel)
                whole = aligned_empty(self.padded[name])
                results[name] = whole[tuple(slice(0, n) for n in shape)] if shape else whole
                base.append((name, whole.ctypes.data))
                continue
            out = targets.get(name)
            if out is None or not out.flags.c_contiguous:
                from .engine import result_empty

                out = result_empty(shape)
            results[name] = out
            base.append((name, out.ctypes.data))
        if self.batch is None:
            rc = self._call(base, None, 0, 0, workspace)
        else:
            b = self.batch
            teams = 1 if b.single else max(1, min(_native.openmp_threads(), b.extent))
            bounds = _chunks(b.extent, 1 if teams == 1 else min(b.extent, teams * CHUNKS_PER_THREAD), b.pad)
            if staged:
                rows = sum(math.prod(self.padded[name][1:]) for name in staged)  # type: ignore[index]
                step = max(1, STAGE_BYTES // (8 * rows))
                bounds = [piece for lo, hi in bounds for piece in _pieces(lo, hi, step, b.pad)]
            if teams == 1:
                rc = max(self._call(base, b, lo, hi, workspace) for lo, hi in bounds)
            else:
                # the pool threads' buffers in the kernel's own thread-local workspace, so they go with it
                rc = max(_executor(teams).map(lambda lh: self._call(base, b, *lh, workspace), bounds))
        return results if rc == 0 else None  # ENOMEM or EPARAM: the plan runs instead

    def _padded_copy(self, name: str, a: np.ndarray, workspace: Any) -> np.ndarray:
        """Input ``a`` in the padded layout the C takes, in this thread's copy from the last
        call (``engine.padded_copy``, as the plan's padded inputs)."""
        from .engine import padded_copy

        copies = getattr(workspace, "cjit_padded", None)
        if copies is None:
            copies = workspace.cjit_padded = {}
        # keyed by both shapes: only the declared region is ever written, so the padding
        # of a buffer that served another declared shape would not be 0
        padded = self.padded[name]  # type: ignore[index]
        return padded_copy(copies, (name, a.shape, padded), a, a.shape, padded)

    def _stage(self, name: str, a: np.ndarray, lo: int, hi: int, pad: int, workspace: Any) -> np.ndarray:
        """Rows ``lo..hi`` of input ``a`` in the padded layout, as the C reads them for that piece
        of the batch dimension: ``ceil_M(hi - lo)`` padded rows, 0 outside the declared ones (report
        Definition 7), in this thread's buffer.  Only the declared region of a row is ever written
        and only whole rows are cleared, so a row's padding stays 0 from the buffer's first fill;
        rows past ``hi - lo`` (the batch dimension's own padding) may hold an earlier, longer
        piece's values and are cleared.  Keyed by the declared and the padded row: a buffer that
        served another declared row would not hold 0 where this one's padding is."""
        stages = getattr(workspace, "cjit_stage", None)
        if stages is None:
            stages = workspace.cjit_stage = {}
        rows, padded_rows = hi - lo, round_up(hi - lo, pad)
        row = self.padded[name][1:]  # type: ignore[index]
        key = (name, a.shape[1:], row)
        buf = stages.get(key)
        if buf is None or buf.shape[0] < padded_rows:
            from .engine import aligned_empty

            buf = stages[key] = aligned_empty((padded_rows, *row))
            buf.fill(0.0)
        buf[(slice(0, rows), *(slice(0, n) for n in a.shape[1:]))] = a[lo:hi]
        buf[rows:padded_rows] = 0.0
        return buf

    def _call(self, base: list[tuple[str, int | np.ndarray | None]], b: Batch | None, lo: int, hi: int,
              workspace: Any) -> int:
        args: list[int | None] = []
        if b is not None:
            args.append(hi - lo)
        for name, ptr in base:
            if isinstance(ptr, np.ndarray):
                assert b is not None and b.pad is not None
                args.append(self._stage(name, ptr, lo, hi, b.pad, workspace).ctypes.data)
                continue
            row = b.rows.get(name) if b is not None else None
            args.append(ptr + 8 * lo * row if ptr is not None and row is not None else ptr)
        need = int(self.work(*args[:1])) if b is not None else int(self.work())
        if need < 0:
            return 2
        ptr_work = None
        if need > 0:
            buf = getattr(workspace, "cjit", None)
            if buf is None or buf.size < need:
                buf = workspace.cjit = np.empty(need)
            ptr_work = buf.ctypes.data
        args.append(ptr_work)
        return int(self.fn(*args))


_EXECUTORS: dict[tuple[int, int], Any] = {}


def _executor(threads: int) -> Any:
    """A process-wide pool of ``threads`` threads (ctypes releases the GIL around the C).

    Keyed by the process id too: a forked child (a process pool) inherits the dict but not
    the threads, and would wait for ever on its parent's pool."""
    from concurrent.futures import ThreadPoolExecutor

    key = (os.getpid(), threads)
    with _LOCK:
        pool = _EXECUTORS.get(key)
        if pool is None:
            pool = _EXECUTORS[key] = ThreadPoolExecutor(threads, thread_name_prefix="core-teil-cjit")
        return pool


def build(program: Program, params: Mapping[str, int], pad: int | None, report: Any,
          work: int, threads: int, blas: bool, batch: tuple[str, Mapping[str, int | None]] | None = None) -> CKernel:
    """The compiled C for this plan, or :class:`CJitUnavailable` saying why not (:func:`emit`,
    then its compile)."""
    return emit(program, params, pad, report, work, threads, blas, batch)()


def emit(program: Program, params: Mapping[str, int], pad: int | None, report: Any,
         work: int, threads: int, blas: bool,
         batch: tuple[str, Mapping[str, int | None]] | None = None) -> Callable[[], CKernel]:
    """The first half of :func:`build`: emit-c's C for this plan, or :class:`CJitUnavailable`
    saying why not; the function returned compiles (or finds) and loads it.  The halves are
    apart because emit-c proves, which the engine does under its Z3 lock, and a compiler may
    take seconds (or, hung, :data:`COMPILE_TIMEOUT_S`), which no other thread's proof should
    wait for.

    ``work`` is the plan's innermost iterations per call, ``threads`` how many OpenMP threads
    the plan would use, ``blas`` whether it has BLAS steps; ``report`` the engine's proof.
    ``batch`` (a parameter and each allocation's batch axis) runs a plan of several threads
    as chunks of that proved batch dimension (:class:`Batch`)."""
    if not enabled():
        raise CJitUnavailable(f"{ENV_SWITCH}=0")
    if blas:
        raise CJitUnavailable("the plan has BLAS steps")
    if threads != 1 and batch is None:
        raise CJitUnavailable("the plan runs on several OpenMP threads and has no batch dimension to split")
    if work < MIN_WORK:
        raise CJitUnavailable(f"{work} innermost iterations per call: not worth a compile")
    cc = compiler()
    if cc is None:
        raise CJitUnavailable("no C compiler on the PATH")
    from .emit_c import emit_c

    name = "teil_cjit"
    if batch is None:
        src = emit_c(program, dict(params), pad, name=name, header="teil_cjit.h", certificate=report)
    else:  # the batch parameter symbolic: proved again for every extent (the chunks' too)
        src = emit_c(program, {k: v for k, v in params.items() if k != batch[0]}, pad, name=name,
                     header="teil_cjit.h")
    fl = flags()
    directory = cache_directory()
    key = cache_key(src.c, src.h, cc, fl)
    ins = tuple((a.name, a.required) for a in src.args if a.role == "input")
    # padded, the C takes the padded extents and the engine hands back the declared ones
    outs = tuple((a.name, src.shape(a.name, params) if pad is None else _declared(program, a.name, params))
                 for a in src.args if a.role == "output")
    padded = None if pad is None else {
        a.name: src.shape(a.name, params) for a in src.args if a.role in ("input", "output")}
    chunks = None
    if batch is not None:
        rows = {a: math.prod(src.shape(a, params)[1:]) for a, axis in batch[1].items()
                if axis is not None and a in src.shapes}
        chunks = Batch(params[batch[0]], rows, pad, single=threads == 1)

    def compiled() -> CKernel:
        entry = lookup(directory, key)
        try:
            if entry is None:
                entry = compile_entry(directory, key, src.c, src.h, src.header, cc, fl)
            lib = load(entry)
            fn = getattr(lib, name)
            worksize = getattr(lib, f"{name}_work")
        except OSError as exc:  # an unwritable cache, a library the loader refuses
            raise CJitUnavailable(f"{directory}: {exc}") from None
        except AttributeError as exc:
            raise CJitUnavailable(f"{entry.path if entry else key}: {exc}") from None
        fn.restype, worksize.restype = ctypes.c_int, ctypes.c_ssize_t
        lead = [ctypes.c_ssize_t] if batch is not None else []
        fn.argtypes = [*lead, *[ctypes.c_void_p] * (len(ins) + len(outs) + 1)]
        worksize.argtypes = lead
        return CKernel(fn, ins, outs, worksize, entry.path, chunks, padded)

    return compiled


def _chunks(extent: int, teams: int, pad: int | None) -> list[tuple[int, int]]:
    """``teams`` contiguous runs ``[lo, hi)`` of the batch indices ``0..extent``, as even as can
    be.  Padded, every cut is a multiple of the pad: a chunk of ``E'`` indices computes
    ``ceil_M(E')`` padded rows, which then end where the next chunk starts (and the last
    chunk's end at ``ceil_M(extent)``, the whole run's)."""
    m = pad or 1
    cuts = sorted({min(extent, -(-(extent * i // teams) // m) * m) for i in range(teams + 1)})
    return list(itertools.pairwise(cuts))


def _pieces(lo: int, hi: int, rows: int, pad: int | None) -> list[tuple[int, int]]:
    """``[lo, hi)`` cut into runs of about ``rows`` batch indices, each but the last a multiple
    of the pad (so each piece's padded rows end where the next piece starts, as :func:`_chunks`')."""
    m = pad or 1
    step = max(m, rows // m * m)
    return [(a, min(a + step, hi)) for a in range(lo, hi, step)]


def _declared(program: Program, name: str, params: Mapping[str, int]) -> tuple[int, ...]:
    """Allocation ``name``'s extents as the program declares them (not rounded up to a pad)."""
    alloc = program.alloc(name)
    assert alloc is not None
    return tuple(d if isinstance(d, int) else params[d] for d in alloc.shape)


def prepare(program: Program, params: Mapping[str, int], pad: int | None, report: Any,
            compiled: Any, fixed: Mapping[str, int]) -> Callable[[], CKernel | str] | str:
    """For :meth:`engine.Kernel._prepare_locked`: why the plan runs as before (a sentence), or
    emit-c's C of ``compiled`` (an ``engine.Compiled``) as a function that compiles and loads
    it and returns the kernel or why not; the engine calls it outside its Z3 lock
    (:func:`emit`).  ``fixed`` are the parameters given to ``ct.compile``: a kernel with
    symbolic ones (read off each call's shapes) is not compiled to C at its first call."""
    if set(fixed) != set(program.params):
        return "symbolic parameters"
    from ..errors import TeilError
    from .planner import threads_for

    calls = [cc for stmt in compiled.calls for cc in stmt]
    work = sum(cc.call.nbatch * cc.work for cc in calls)
    # one thread when OpenMP has one, or when every call is too small for the team anyway
    one = _native.openmp_threads() == 1 or all(threads_for(cc.call.nbatch * cc.work) == 1 for cc in calls)
    blas = compiled.direct is not None or any(cc.gemm is not None for cc in calls)
    batch = None
    # a pad that rounds some extent up: inputs not in the padded layout are staged a piece of the
    # batch dimension at a time (CKernel.run), on one thread too
    staged = pad is not None and compiled.rounded
    if (not one or staged) and not blas and enabled() and work >= MIN_WORK:
        from .blockwise import batch_dimension

        analysis = batch_dimension(program, dict(params))
        # chunks are contiguous runs of rows only when the batch dimension comes first; and a chunk
        # whose extent breaks an `assume` on the batch parameter is refused by the C (EPARAM), which
        # would leave the whole call to the plan while why_not says the C runs (fuzzing, r23)
        assumed = {t.name for c in program.conds for lin in (c.lhs, c.rhs) for t in lin.terms}
        if analysis.ok and all(axis in (0, None) for axis in analysis.axes.values()):
            if analysis.param not in assumed:
                batch = (str(analysis.param), analysis.axes)
            elif not one:
                return f"an assume on the batch parameter {analysis.param}: a chunk of it could break it"
    try:
        finish = emit(program, params, pad, report, work, 1 if one else 0, blas, batch)
    except (CJitUnavailable, TeilError) as exc:
        return str(exc)
    except Exception as exc:  # an optional speed-up must never fail a compile that worked before
        return f"{type(exc).__name__}: {exc}"

    def ready() -> CKernel | str:
        try:
            ck = finish()
        except (CJitUnavailable, TeilError) as exc:
            return str(exc)
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        # the C's outputs are the engine's, at the same (declared) shapes
        want = tuple((name, tuple(r.stop for r in region)) for name, region in compiled.outputs)
        if sorted(ck.outputs) != sorted(want):
            return f"emit-c's outputs {ck.outputs} are not the plan's {want}"
        if ck.padded is not None and pad is not None:
            # every array's, inputs' too: an input's padded extents lay out the copy the C reads
            rounded = {name: tuple(round_up(n, pad) for n in _declared(program, name, params)) for name in ck.padded}
            if ck.padded != rounded:
                return f"emit-c's padded extents {ck.padded} are not the declared ones rounded up to {pad}: {rounded}"
        return ck

    return ready


def why_not(kernel: Any) -> str | None:
    """Why the kernel's prepared plan runs without compiled C (None: it runs the C)."""
    for c in kernel._compiled.values():
        return c.cjit if isinstance(c.cjit, str) else None
    return "not prepared"
