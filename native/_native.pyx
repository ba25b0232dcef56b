# cython: boundscheck=False, wraparound=False, cdivision=True
"""Native kernels of core-teil (issue 5). Only reached through plans whose
obligations are proved; see core_teil/native.py."""

def openmp_threads() -> int:
    """Number of OpenMP threads the kernels will use (1 without OpenMP)."""
    cdef int n = 1
    try:
        import os
        n = len(os.sched_getaffinity(0))
    except Exception:
        pass
    return n
