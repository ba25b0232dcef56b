"""numpy's own OpenBLAS, called from inside the engine's OpenMP team (issue 15).

A streamed call (``planner.stream_blas``) computes a chunk of a GEMM's rows and then
consumes them.  Through ``numpy.matmul`` the chunk is written by OpenBLAS's threads and read
by ours, and on this machine a cache line written on one core and read on the other is what
its slow state punishes (docs/decisions.md, "mttkrp on two threads").  Calling ``cblas_dgemm``
from each of our threads, with OpenBLAS held to one thread meanwhile, keeps every chunk on
the core that wrote it (``_native.run_streamed``).

Only an ILP64 OpenBLAS already loaded by numpy is used (the wheels' ``scipy_openblas64_``);
with any other BLAS :func:`library` is ``None`` and the engine keeps ``numpy.matmul``.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

#: The longest idle poll (log2 cycles) that :meth:`OpenBLAS.quiet` lets a team run beside.
QUIET_SPIN = 22

#: (prefix, suffix) of an ILP64 OpenBLAS's exported names: numpy's wheels, then a plain build.
_AFFIXES = (("scipy_", "64_"), ("", "64_"))


@dataclass(frozen=True)
class OpenBLAS:
    """The three entry points the streamed calls need, from the library numpy loaded."""

    path: str
    dgemm: int  # the address of cblas_dgemm, for C
    get_threads: ctypes._CFuncPtr
    set_threads: ctypes._CFuncPtr
    #: log2 of the cycles an idle OpenBLAS worker polls after a multi-threaded call
    #: (``OPENBLAS_THREAD_TIMEOUT`` as OpenBLAS read it when it loaded; 28 when unset)
    spin: int = 28

    def quiet(self) -> bool:
        """Whether a team of ours may run beside OpenBLAS's idle workers: they poll at most
        2^:data:`QUIET_SPIN` cycles (about a millisecond) after a numpy GEMM, or never run
        (OpenBLAS on one thread).  Else, right after a numpy GEMM, one of our threads shares
        its core with a polling worker for up to 0.1 s (docs/decisions.md, "GEMMs inside the
        team")."""
        return self.spin <= QUIET_SPIN or self.get_threads() == 1


def _loaded_paths() -> list[str]:
    """Shared objects with "openblas" in their name mapped into this process (Linux)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {fields[5].strip() for fields in (line.split(None, 5) for line in maps) if len(fields) == 6}
    except OSError:
        return []
    return sorted(p for p in paths if "openblas" in os.path.basename(p).lower() and ".so" in p)


def _bind(path: str) -> OpenBLAS | None:
    try:  # RTLD_NOLOAD: the very library numpy uses, or none
        lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LOCAL)
    except OSError:
        return None
    for prefix, suffix in _AFFIXES:
        try:
            config = getattr(lib, f"{prefix}openblas_get_config{suffix}")
            dgemm = getattr(lib, f"{prefix}cblas_dgemm{suffix}")
            get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}")
            put = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}")
        except AttributeError:
            continue
        config.restype = ctypes.c_char_p
        # run_streamed passes 64-bit integers; an LP64 build would read garbage
        if b"USE64BITINT" not in (config() or b""):
            return None
        # a pthreads build: an OpenMP one's set_num_threads is omp_set_num_threads, which
        # would cut our own team to one thread inside one_thread
        if _ask(lib, f"{prefix}openblas_get_parallel{suffix}") != PTHREADS:
            return None
        get.restype, get.argtypes = ctypes.c_int, []
        put.restype, put.argtypes = None, [ctypes.c_int]
        return OpenBLAS(path, ctypes.cast(dgemm, ctypes.c_void_p).value or 0, get, put, _spin(lib, prefix, suffix))
    return None


#: openblas_get_parallel()'s answer for a build threaded with pthreads (0 is sequential, 2 OpenMP).
PTHREADS = 1


def _ask(lib: ctypes.CDLL, *names: str) -> int | None:
    """The int that the first of ``names`` that ``lib`` exports returns (a getter of no
    arguments), or ``None`` when it exports none of them."""
    for name in names:
        try:
            getter = getattr(lib, name)
        except AttributeError:
            continue
        getter.restype, getter.argtypes = ctypes.c_int, []
        return int(getter())
    return None


def _spin(lib: ctypes.CDLL, prefix: str, suffix: str) -> int:
    """blas_server.c's timeout: the variable's value clamped to 4..30, 28 when it is unset (0)
    or cannot be read."""
    t = _ask(lib, f"{prefix}openblas_thread_timeout{suffix}", "openblas_thread_timeout")
    return min(max(t, 4), 30) if t is not None and t > 0 else 28


@cache
def library() -> OpenBLAS | None:
    """numpy's OpenBLAS, if it is an ILP64 OpenBLAS this process has loaded; else ``None``.
    ``CORE_TEIL_NO_DIRECT_BLAS=1`` turns the direct calls off (tests compare both paths)."""
    import numpy  # noqa: F401  (loads numpy's BLAS, whose mapping is looked for)

    if os.environ.get("CORE_TEIL_NO_DIRECT_BLAS"):
        return None
    for path in _loaded_paths():
        found = _bind(path)
        if found is not None and found.dgemm:
            return found
    return None


_lock = threading.Lock()
_users = 0
_saved = 0


@contextmanager
def one_thread(lib: OpenBLAS) -> Iterator[None]:
    """OpenBLAS on one thread while the block runs, restored when the last of the threads
    inside such a block leaves it.  The count is process-wide: a numpy GEMM on another Python
    thread meanwhile runs on one thread too (slower, not different), and a count set meanwhile
    (``threadpoolctl``, ``openblas_set_num_threads``) is overwritten by the restore."""
    global _users, _saved
    with _lock:
        if _users == 0:
            _saved = lib.get_threads()
            if _saved != 1:
                lib.set_threads(1)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _saved != 1:
                lib.set_threads(_saved)


def _after_fork_in_child() -> None:
    """A child forked while another thread was inside :func:`one_thread` has that thread's
    count but not the thread, which would never restore it (nor release the lock)."""
    global _lock, _users
    _lock = threading.Lock()
    if _users:
        _users = 0
        lib = library()
        if lib is not None and _saved != 1:
            lib.set_threads(_saved)


os.register_at_fork(after_in_child=_after_fork_in_child)
