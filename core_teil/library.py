"""``core-teil prove PATH...``: certify a kernel library in parallel, through the proof cache (issue 17).

A library is files, directories (searched recursively for ``*.teil`` and ``*.onnx``) and
glob patterns.  Each kernel is one task, :func:`prove_one`: read, prove (through
:func:`core_teil.proving.cache.prove_cached`), summarise.  Tasks run

* in this process (``jobs=1``),
* in a ``concurrent.futures.ProcessPoolExecutor`` of ``jobs`` processes (forkserver, with
  this module preloaded), one task per kernel: an obligation is a tree of Z3 terms bound to
  its process's context and cannot be sent to another process, and re-generating a kernel's
  obligations in every process that decides one of them costs what deciding the small ones
  costs, so a kernel is the unit;
* or on a Dask cluster (``scheduler=ADDRESS``, ``distributed.Client``), the same function
  mapped over the same tasks.

Before any task is sent anywhere, this process looks each kernel up in the cache's kernel
entries: an unchanged library is answered without starting a pool.

The exit code of a run is the worst of its kernels', in the order
``70`` (internal error) > ``2`` (bad input: unreadable, unparsable, a bad model) >
``1`` (refuted, or rejected by typing) > ``3`` (unknown) > ``0`` (every obligation of every
kernel proved): a kernel that could not even be read leaves the library unchecked, which is
worse than a known refutation, and a refutation is worse than a question left open.
"""

from __future__ import annotations

import glob
import json
import os
import stat
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from .errors import TeilError, TeilInputError

#: Exit codes by severity, worst first (module docstring).
SEVERITY = (70, 2, 1, 3, 0)
SUFFIXES = (".teil", ".onnx")
GLOB_CHARS = frozenset("*?[")
#: At most this many kernels to prove (after the cache) are proved in this process, not a pool.
IN_PROCESS = 3
#: At most this many kernels in one Dask task.
DASK_GROUP = 16
#: Seconds ``--scheduler ADDRESS`` may take to connect and answer as a Dask scheduler.
SCHEDULER_TIMEOUT = 20.0
#: Seconds a scheduler without workers is given for its first worker to arrive.
WORKERS_TIMEOUT = 20.0


class KernelStatus(StrEnum):
    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"
    ERROR = "error"


def worst(codes: Iterable[int]) -> int:
    """The exit code of several: the first of :data:`SEVERITY` among them (0 for none)."""
    codes = set(codes)
    for c in SEVERITY:
        if c in codes:
            return c
    return max(codes, default=0)  # an exit code outside SPEC.md's: keep it visible


# --------------------------------------------------------------------------
# The library: paths, directories, globs
# --------------------------------------------------------------------------


def collect(paths: Sequence[str]) -> list[str]:
    """The kernels named by ``paths``, each once, in the order given (a directory's and a glob's
    files sorted).  A path that names nothing is bad input (exit 2)."""
    out: list[str] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        key = os.path.normpath(os.path.abspath(p))
        if key not in seen:
            seen.add(key)
            out.append(p)

    for p in paths:
        if os.path.isdir(p):
            found = sorted(str(f) for f in Path(p).rglob("*") if f.suffix.lower() in SUFFIXES and f.is_file())
            if not found:
                raise TeilInputError(f"{p}: no .teil or .onnx files in this directory")
            for f in found:
                add(f)
        elif GLOB_CHARS & set(p) and not os.path.exists(p):
            found = sorted(f for f in glob.glob(p, recursive=True) if os.path.isfile(f))
            if not found:
                raise TeilInputError(f"{p}: no file matches this pattern")
            for f in found:
                add(f)
        elif os.path.isfile(p):
            add(p)
        else:
            raise TeilInputError(f"{p}: no such file or directory")
    return out


# --------------------------------------------------------------------------
# One kernel
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """Everything a process needs to prove one kernel (plain data: it is pickled)."""

    path: str
    params: tuple[tuple[str, int], ...] = ()
    pad: int | None = None
    timeout: float | None = None
    solver: str = "z3"
    cache: str | None = None  # the cache directory, or none
    audit: bool = False


@dataclass(frozen=True)
class KernelResult:
    """One kernel's verdict, as plain data (it comes back from another process)."""

    path: str
    status: KernelStatus
    exit_code: int
    seconds: float
    proved: int = 0
    refuted: int = 0
    unknown: int = 0
    solved: int = 0  # obligations decided by the solver in this run
    cached: int = 0  # obligations served from the cache
    kernel_cached: bool = False
    certificate: dict[str, Any] | None = None  # Report.to_json()
    text: str = ""  # Report.render(), or the rendered error
    disagreements: tuple[str, ...] = ()  # cache entries the solver contradicted (audit)
    rejected: int = 0  # cache entries found invalid
    cpu_seconds: float = 0.0  # CPU time of the process that proved it, for this kernel

    @property
    def obligations(self) -> int:
        return self.proved + self.refuted + self.unknown

    def line(self) -> str:
        if self.status is KernelStatus.ERROR:
            return f"ERROR    {self.path}"
        how = f"{self.proved}/{self.obligations}"
        if self.cached:
            how += " (cached)" if self.cached == self.obligations else f" ({self.cached} cached)"
        return f"{self.status.upper():8s} {self.path}  {how}  {self.seconds:.2f} s"


def _read(path: str) -> tuple[Any, str]:
    """A ``.teil`` program or an ``.onnx`` model, read as ``core-teil prove FILE`` reads it."""
    if path.lower().endswith(".onnx"):
        from .frontends.onnx import translate

        model = translate(path)
        return model.program, model.source
    from .lang.parser import parse, read_source

    source = read_source(path)
    try:
        return parse(source, path), source
    except TeilError as err:
        raise err.with_source(source) from None


#: Z3's shared context is not thread-safe: a Dask worker with several threads proves one at a time.
_Z3 = threading.Lock()


def _cache_of(task: Task) -> Any:
    if task.cache is None:
        return None
    from .proving.cache import ProofCache

    return ProofCache(task.cache, audit=task.audit)


def _source_key(task: Task, cache: Any, source: str | None = None) -> str | None:
    """The kernel key of a file by its text: a ``.teil`` file's (read here), a model's printed
    program (``source``, once translated); ``None`` for a model not yet translated."""
    if source is None:
        if task.path.lower().endswith(".onnx"):
            return None
        from .lang.parser import read_source

        source = read_source(task.path)
    from .proving.cache import solver_fields

    return cache.source_key(source, dict(task.params), task.pad, solver_fields(task.solver, task.timeout))


def lookup(task: Task, cache: Any = None) -> KernelResult | None:
    """The kernel's result from its cache entry (this process: no solver, no parser, no pool),
    or ``None``: the kernel must be proved (or is bad input, which :func:`prove_one` reports).
    ``cache`` is a :class:`~core_teil.proving.cache.ProofCache` of ``task.cache`` that the
    lookups of a run share."""
    if task.cache is None or task.audit:
        return None
    if cache is None:
        cache = _cache_of(task)
    start = time.perf_counter()
    rejected = cache.stats.rejected
    source = None if task.path.lower().endswith(".onnx") else _text(task.path)
    if source is None:  # a model (looked up once translated), or a file read_source refuses
        return None
    try:
        from .proving.cache import solver_fields

        fields = solver_fields(task.solver, task.timeout)
        key = cache.source_key(source, dict(task.params), task.pad, fields)
        served = cache.lookup_served(key, fields, task.path, task.timeout)
    except TeilError:
        return None
    if served is None:
        return None
    # what _from_report makes of the report rebuilt from the entry, without rebuilding it (that
    # needs the prover's modules): every obligation from the cache, none decided by the solver,
    # and a refutation's text as its run printed it
    cert = served.certificate
    n = len(cert["obligations"])
    refuted = sum(o["status"] == "refuted" for o in cert["obligations"])
    status, code = (KernelStatus.REFUTED, 1) if refuted else (KernelStatus.PROVED, 0)
    return KernelResult(task.path, status, code, time.perf_counter() - start, proved=n - refuted, refuted=refuted,
                        solved=0, cached=n, kernel_cached=True, certificate=cert, text=served.text,
                        rejected=cache.stats.rejected - rejected)


def _text(path: str) -> str | None:
    """The text :func:`core_teil.lang.parser.read_source` reads from ``path`` when it reads it
    without an error, else ``None`` (the kernel then goes to :func:`prove_one`, whose reader says
    what is wrong).  Read with ``os.read``: a file object per kernel was a tenth of a warm run."""
    from .lang.parser import MAX_SOURCE_BYTES

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SOURCE_BYTES:
            return None
        data = os.read(fd, st.st_size + 1)
        while len(data) <= MAX_SOURCE_BYTES and (more := os.read(fd, MAX_SOURCE_BYTES + 1 - len(data))):
            data += more
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_SOURCE_BYTES:
        return None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None


def prove_one(task: Task) -> KernelResult:
    """Read and prove one kernel; never raises (an error is a result with its exit code)."""
    from dataclasses import replace

    cpu = time.process_time()
    result = _prove_one(task)
    return replace(result, cpu_seconds=time.process_time() - cpu)


def _prove_one(task: Task) -> KernelResult:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))  # as the CLI: deep programs are input
    hit = lookup(task)
    if hit is not None:
        return hit
    start = time.perf_counter()
    source: str | None = None
    try:
        with _Z3:
            program, source = _read(task.path)
            params = {k: v for k, v in task.params if k in program.params}
            cache = _cache_of(task)
            if cache is None:
                from .proving.prove import prove

                report = prove(program, params or None, task.pad, timeout=task.timeout, solver=task.solver,
                               source=source)
            else:
                from .proving.cache import prove_cached

                report = prove_cached(program, params or None, task.pad, cache=cache, timeout=task.timeout,
                                      solver=task.solver, source=source, kernel_key=_source_key(task, cache, source))
        return _from_report(task, report, cache, time.perf_counter() - start,
                            kernel_cached=cache is not None and cache.stats.kernel_hits > 0)
    except TeilError as err:
        err.with_source(source)
        return _error(task, err.render(), err.exit_code, start)
    except RecursionError:
        return _error(task, f"{task.path}: the program is nested too deeply for this implementation", 2, start)
    except MemoryError:
        return _error(task, f"{task.path}: out of memory; try smaller shapes", 2, start)
    except Exception as exc:  # a bug must not take the library's other kernels down with it
        return _error(task, f"{task.path}: internal error: {type(exc).__name__}: {exc} (this is a bug in "
                      f"core-teil; prove this file alone with CORE_TEIL_DEBUG=1 for a traceback)", 70, start)


def _error(task: Task, text: str, code: int, start: float) -> KernelResult:
    return KernelResult(task.path, KernelStatus.ERROR, code, time.perf_counter() - start, text=text)


def _from_report(task: Task, report: Any, cache: Any, seconds: float, kernel_cached: bool) -> KernelResult:
    from .proving.report import Status

    code = report.exit_code
    status = {0: KernelStatus.PROVED, 1: KernelStatus.REFUTED, 3: KernelStatus.UNKNOWN}[code]
    stats = cache.stats if cache is not None else None
    n = len(report.obligations)
    cached = stats.hits if stats is not None else 0
    solved = stats.misses if stats is not None else n
    return KernelResult(task.path, status, code, seconds, report.count(Status.PROVED), report.count(Status.REFUTED),
                        report.count(Status.UNKNOWN), solved, cached, kernel_cached, report.to_json(),
                        report.render() if code else "",  # a proved kernel is shown as one line
                        tuple(stats.disagreements) if stats else (),
                        stats.rejected if stats else 0)


# --------------------------------------------------------------------------
# Many kernels
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    """The run as a whole."""

    results: tuple[KernelResult, ...]
    seconds: float
    jobs: int
    where: str  # "this process" | "N processes" | "dask ADDRESS"
    cache: str | None
    solver: str = "z3"
    notes: tuple[str, ...] = field(default=())

    def count(self, status: KernelStatus) -> int:
        return sum(r.status is status for r in self.results)

    @property
    def exit_code(self) -> int:
        return worst(r.exit_code for r in self.results)

    def totals(self) -> dict[str, int]:
        rs = self.results
        return {"kernels": len(rs), **{s.value: self.count(s) for s in KernelStatus},
                "obligations": sum(r.obligations for r in rs),
                "obligations_proved": sum(r.proved for r in rs),
                "obligations_refuted": sum(r.refuted for r in rs),
                "obligations_unknown": sum(r.unknown for r in rs),
                "solver_decided": sum(r.solved for r in rs), "from_cache": sum(r.cached for r in rs),
                "kernels_from_cache": sum(r.kernel_cached for r in rs),
                "cache_entries_rejected": sum(r.rejected for r in rs),
                "cpu_s": round(sum(r.cpu_seconds for r in rs), 3)}

    def slowest(self, n: int = 5) -> list[KernelResult]:
        return sorted(self.results, key=lambda r: -r.seconds)[:n]

    # -- text ------------------------------------------------------------------

    def render(self) -> str:
        t = self.totals()
        out = [r.line() for r in self.results]
        for r in self.results:
            if r.status is not KernelStatus.PROVED:
                out += ["", r.text]
            for d in r.disagreements:
                out += ["", f"CACHE: {r.path}: {d} (the entry was evicted; the solver's verdict stands)"]
        out.append("")
        out.append(f"{t['kernels']} kernels: {t['proved']} proved, {t['refuted']} refuted, {t['unknown']} unknown, "
                   f"{t['error']} errors; {t['obligations']} obligations ({t['solver_decided']} decided by the "
                   f"solver, {t['from_cache']} from the cache) in {self.seconds:.2f} s on {self.where}")
        if self.results:
            out.append("slowest: " + ", ".join(f"{r.path} {r.seconds:.2f} s" for r in self.slowest()))
        out.append(f"cache: {self.cache}" if self.cache else "cache: off")
        if t["cache_entries_rejected"]:
            out.append(f"cache: {t['cache_entries_rejected']} invalid entries ignored (checksum, key or format)")
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)

    # -- JSON ------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        from . import __version__

        return {
            "tool": "core-teil", "version": __version__,
            "kernels": [{"file": r.path, "status": str(r.status), "exit_code": r.exit_code,
                         "seconds": round(r.seconds, 6), "from_cache": r.kernel_cached,
                         "certificate": r.certificate, "error": r.text if r.status is KernelStatus.ERROR else None,
                         "cache_disagreements": list(r.disagreements)}
                        for r in self.results],
            "summary": {**self.totals(), "exit_code": self.exit_code, "seconds": round(self.seconds, 6),
                        "jobs": self.jobs, "where": self.where, "cache": self.cache,
                        "slowest": [{"file": r.path, "seconds": round(r.seconds, 6)} for r in self.slowest()]},
        }

    # -- JUnit XML -------------------------------------------------------------

    def junit(self) -> bytes:
        """One ``testsuite`` per kernel, one ``testcase`` per obligation (``failure`` for refuted
        and unknown: both fail ``prove``), an ``error`` testcase for a kernel that could not be read."""
        root = ET.Element("testsuites", name="core-teil prove", time=f"{self.seconds:.3f}")
        tests = failures = errors = 0
        for r in self.results:
            suite = ET.SubElement(root, "testsuite", name=r.path, time=f"{r.seconds:.3f}")
            n_fail = n_err = 0
            if r.certificate is None:
                case = ET.SubElement(suite, "testcase", classname=r.path, name="read", time=f"{r.seconds:.3f}")
                ET.SubElement(case, "error", type=f"exit {r.exit_code}", message=r.text.splitlines()[0]).text = r.text
                n_err = 1
                cases = 1
            else:
                obs = r.certificate["obligations"]
                cases = len(obs)
                for o in obs:
                    case = ET.SubElement(suite, "testcase", classname=r.path,
                                         name=f"{o['number']:02d} {o['label']}", time=f"{o['seconds']:.3f}")
                    if o["status"] != "proved":
                        n_fail += 1
                        cex = o["counterexample"]
                        message = o["reason"] or (cex.get("what") if isinstance(cex, dict) else None) \
                            or f"{o['status']}: {o['lemma']}"
                        ET.SubElement(case, "failure", type=o["status"], message=str(message)).text = r.text
            suite.set("tests", str(cases))
            suite.set("failures", str(n_fail))
            suite.set("errors", str(n_err))
            tests, failures, errors = tests + cases, failures + n_fail, errors + n_err
        root.set("tests", str(tests))
        root.set("failures", str(failures))
        root.set("errors", str(errors))
        ET.indent(root)
        return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def run(paths: Sequence[str], *, jobs: int | None = None, params: dict[str, int] | None = None,
        pad: int | None = None, timeout: float | None = None, solver: str = "z3",
        cache: str | Path | None = None, audit: bool = False, scheduler: str | None = None,
        progress: Callable[[KernelResult], None] | None = None) -> Summary:
    """Prove every kernel of ``paths`` (module docstring); ``cache`` is a directory or ``None``."""
    start = time.perf_counter()
    files = collect(paths)
    jobs = check_jobs(jobs)
    cache_dir = str(cache) if cache is not None else None
    if cache_dir is not None:
        from .proving.cache import secret_key

        secret_key()  # made (or refused, exit 2) here, once, not by each worker
    tasks = [Task(f, tuple(sorted((params or {}).items())), pad, timeout, solver, cache_dir, audit) for f in files]
    done: dict[int, KernelResult] = {}

    def finish(i: int, r: KernelResult) -> None:
        done[i] = r
        if progress is not None:
            progress(r)

    if cache_dir is not None and not audit:
        _look_up_first(cache_dir, tasks, finish)
    todo = [(i, t) for i, t in enumerate(tasks) if i not in done]
    if scheduler is not None:
        where = f"dask {scheduler}"
        _run_dask(scheduler, todo, finish)
    elif jobs == 1:
        where = "1 process"
        for i, t in todo:
            finish(i, prove_one(t))
    elif len(todo) <= IN_PROCESS:
        # starting the pool (a forkserver that imports core_teil, then the workers) takes
        # about a second; a few kernels left over by the cache take less here
        left = f"{len(todo)} kernel{'' if len(todo) == 1 else 's'}"
        where = f"{jobs} processes ({left} left after the cache: proved in this one)"
        for i, t in todo:
            finish(i, prove_one(t))
    else:
        where = f"{jobs} processes"
        _run_pool(min(jobs, len(todo)), todo, finish)
    results = tuple(done[i] for i in range(len(tasks)))
    unusable = unusable_cache(cache_dir) if cache_dir is not None else ""
    return Summary(results, time.perf_counter() - start, jobs, where, cache_dir, solver,
                   (unusable,) if unusable else ())


def unusable_cache(cache_dir: str) -> str:
    """Why nothing can be stored in ``cache_dir`` ("" when it is a writable directory).  A cache
    that cannot be written costs the cache, never the proof (:meth:`ProofCache.write`), but the
    summary says so: a ``--cache`` naming a file ran uncached without a word (review r25)."""
    if not os.path.exists(cache_dir):
        return ""  # nothing needed storing (a run that stores creates it)
    if not os.path.isdir(cache_dir):
        return f"the cache {cache_dir} is not a directory: nothing was stored in it"
    if not os.access(cache_dir, os.W_OK | os.X_OK):
        return f"the cache {cache_dir} is not writable: nothing was stored in it"
    return ""


def _look_up_first(cache_dir: str, tasks: list[Task], finish: Callable[[int, KernelResult], None]) -> None:
    """Serve every unchanged kernel from its kernel entry in this process, before any worker is
    started (whatever ``jobs``): on a warm library the pool, the solver and the parser are then
    not needed at all.  One :class:`~core_teil.proving.cache.ProofCache` for all the lookups; no
    lookup at all without a kernel entry in the cache (a cold run)."""
    from .proving.cache import FORMAT, ProofCache

    if not os.path.isdir(os.path.join(cache_dir, f"v{FORMAT}", "kernels")):
        return
    cache = ProofCache(cache_dir)
    for i, t in enumerate(tasks):
        hit = lookup(t, cache)
        if hit is not None:
            finish(i, hit)


def check_jobs(jobs: Any) -> int:
    if jobs is None:
        return default_jobs()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise TeilInputError(f"--jobs {jobs}: expected an integer >= 1")
    return jobs


def default_jobs() -> int:
    """The cores this process may run on (the affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


def _run_pool(jobs: int, todo: list[tuple[int, Task]], finish: Callable[[int, KernelResult], None]) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # forkserver: a fork of a process that holds Z3, OpenMP or BLAS threads may deadlock;
    # a spawn re-imports numpy and z3 per worker.  The server imports this module once.
    ctx = multiprocessing.get_context("forkserver")
    # the modules every worker needs (z3, numpy, the obligation generator), imported once
    ctx.set_forkserver_preload([__name__, f"{__package__}.proving.prove", f"{__package__}.proving.cache"])
    broken: list[tuple[int, Task]] = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        futures = {pool.submit(prove_one, t): (i, t) for i, t in todo}
        try:
            for fut in as_completed(futures):
                i, t = futures[fut]
                try:
                    finish(i, fut.result())
                except BrokenProcessPool:
                    broken.append((i, t))
                except Exception as exc:  # the result could not come back: that kernel's error
                    finish(i, _worker_failed(t, exc))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    if broken:
        _run_alone(ctx, jobs, sorted(broken, key=lambda it: it[0]), finish)


def _run_alone(ctx: Any, jobs: int, todo: list[tuple[int, Task]],
               finish: Callable[[int, KernelResult], None]) -> None:
    """The kernels of a pool that broke: a worker died (killed, out of memory, a crash in Z3) and
    the pool failed every kernel it had not finished, not only the dead worker's, which it does
    not name.  Each is proved again alone in a new process (``jobs`` at a time), so that only a
    kernel that kills its own worker is reported as that error (70)."""
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

    def alone(item: tuple[int, Task]) -> tuple[int, KernelResult]:
        i, t = item
        with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
            try:
                return i, pool.submit(prove_one, t).result()
            except Exception as exc:
                return i, _worker_failed(t, exc)

    with ThreadPoolExecutor(max_workers=jobs) as threads:
        for i, r in threads.map(alone, todo):
            finish(i, r)


def _worker_failed(t: Task, exc: BaseException) -> KernelResult:
    return KernelResult(t.path, KernelStatus.ERROR, 70, 0.0,
                        text=f"{t.path}: the worker process failed: {type(exc).__name__}: {exc}")


def _run_dask(address: str, todo: list[tuple[int, Task]], finish: Callable[[int, KernelResult], None]) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise TeilInputError(f"--scheduler {address}: needs the 'distributed' package "
                             f"(pip install 'core-teil[scale]')") from None
    _reachable(address)
    _a_scheduler(address)
    try:
        client = Client(address, timeout=SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise TeilInputError(f"--scheduler {address}: cannot connect to a Dask scheduler there ({exc})") from None
    with client:
        if not todo:
            return
        try:
            # tasks sent to a scheduler without workers wait for one for ever
            client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
        except TimeoutError:
            raise TeilInputError(f"--scheduler {address}: the scheduler at {address} has no workers (waited "
                                 f"{WORKERS_TIMEOUT:g} s); start one with `dask worker {address}`") from None
        # A task costs the scheduler milliseconds (measured: 1,000 empty tasks took 5.6 s on two
        # loaded cores, bench/scale_engines.py), as much as a small kernel's proof: kernels go in
        # groups, about eight per worker thread, still small enough to balance the load.
        threads = max(1, sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()))
        size = max(1, min(DASK_GROUP, len(todo) // (8 * threads)))
        groups = [todo[g:g + size] for g in range(0, len(todo), size)]
        futures = client.map(prove_group, [[t for _, t in g] for g in groups], pure=False)
        index = {f.key: g for f, g in zip(futures, groups, strict=True)}
        for fut in as_completed(futures):
            group = index[fut.key]
            try:
                results = fut.result()
            except Exception as exc:  # the worker died or could not import core_teil
                results = [KernelResult(t.path, KernelStatus.ERROR, 70, 0.0,
                                        text=f"{t.path}: the Dask worker failed: {type(exc).__name__}: {exc}")
                           for _, t in group]
            for (i, _), r in zip(group, results, strict=True):
                finish(i, r)


def prove_group(tasks: list[Task]) -> list[KernelResult]:
    """Several kernels in one Dask task (:func:`_run_dask`)."""
    return [prove_one(t) for t in tasks]


def _reachable(address: str) -> None:
    """A refused TCP connection is said at once (the client would retry until its timeout)."""
    import socket
    from urllib.parse import urlsplit

    if "://" not in address:
        address = "tcp://" + address
    parts = urlsplit(address)
    try:
        port = parts.port  # raises on a port that is no number, or out of range
    except ValueError as exc:
        raise TeilInputError(f"--scheduler {address}: not an address of a Dask scheduler ({exc})") from None
    if parts.scheme not in ("tcp", "tls") or parts.hostname is None or port is None:
        return  # another transport (inproc, ucx, ws): the client decides
    try:
        socket.create_connection((parts.hostname, port), timeout=5).close()
    except OSError as exc:
        raise TeilInputError(f"--scheduler {address}: cannot connect to a Dask scheduler there "
                             f"({exc.strerror or exc})") from None


def _a_scheduler(address: str) -> None:
    """``address`` answers as a Dask scheduler within :data:`SCHEDULER_TIMEOUT` seconds: asked
    its ``identity`` over Dask's own comm, on a Dask event loop (``distributed.utils.sync``) whose
    ``callback_timeout`` bounds the whole exchange.  ``distributed.Client``'s ``timeout`` does not:
    it bounds the TCP connection, and a peer that accepts and stays silent held the handshake
    for ever; a peer speaking another protocol (HTTP) had its bytes read as a frame length,
    a MemoryError."""
    from distributed.comm import connect
    from distributed.comm.core import CommClosedError
    from distributed.security import Security
    from distributed.utils import LoopRunner, sync

    async def identity() -> Any:
        comm = await connect(address, timeout=SCHEDULER_TIMEOUT, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    runner = LoopRunner()
    runner.start()
    try:
        answer = sync(runner.loop, identity, callback_timeout=SCHEDULER_TIMEOUT)
    except TimeoutError:
        raise TeilInputError(f"--scheduler {address}: {address} did not answer as a Dask scheduler within "
                             f"{SCHEDULER_TIMEOUT:g} s (give the address the scheduler prints as "
                             f"'Scheduler at', e.g. tcp://HOST:8786)") from None
    except CommClosedError:
        answer = "it closed the connection"
    except OSError as exc:
        raise TeilInputError(f"--scheduler {address}: cannot connect to a Dask scheduler there ({exc})") from None
    except Exception:  # its bytes read as Dask's frames raise anything, a MemoryError included
        answer = "it answered, but not in Dask's protocol"
    finally:
        runner.stop()
    kind = answer.get("type") if isinstance(answer, dict) else None
    if kind != "Scheduler":
        why = answer if isinstance(answer, str) else f"it is a Dask {kind}" if isinstance(kind, str) else \
            "it answered, but not as a Dask scheduler"
        raise TeilInputError(f"--scheduler {address}: {address} is not a Dask scheduler ({why}); give the "
                             f"address the scheduler prints as 'Scheduler at', e.g. tcp://HOST:8786")


def write_junit(path: str, summary: Summary) -> None:
    try:
        Path(path).write_bytes(summary.junit())
    except OSError as exc:
        raise TeilInputError(f"--junit {path}: cannot write ({exc.strerror})") from None


def dumps(summary: Summary) -> str:
    """The ``--json`` document, indented as ``json.dumps(..., indent=2)`` would be except that
    each kernel is one compact line: a library of thousands is then written by json's C
    encoder (the indenting one is pure Python: 0.6 s of a 1.4 s warm run) and stays grep-able."""
    fields = []
    for name, value in summary.to_json().items():
        if name == "kernels":
            lines = ",\n".join("    " + json.dumps(k) for k in value)
            text = "[\n" + lines + "\n  ]" if value else "[]"
        else:
            text = json.dumps(value, indent=2).replace("\n", "\n  ")
        fields.append(f"  {json.dumps(name)}: {text}")
    return "{\n" + ",\n".join(fields) + "\n}"


__all__ = ["KernelResult", "KernelStatus", "Summary", "Task", "collect", "prove_one", "run", "worst"]
