"""The solver's limits, without the solver: the rlimit of a ``timeout`` and its checks.

:mod:`core_teil.proving.prove` re-exports every name here.  They live apart so that the proof
cache can compute the ``rlimit`` field of its keys without importing Z3 and the prover (a warm
library run serves every kernel from its entry and decides nothing: importing them was most of
what it still cost, issue 17).
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import TeilInputError

#: Default per-check resource limit: the examples' hardest obligation needs under 1 % of it.
RLIMIT = 50_000_000
RLIMIT_PER_SECOND = 5_000_000

#: Z3 reads ``rlimit`` and ``timeout`` (ms) as unsigned 32-bit numbers, and 0 as *no limit*:
#: every limit is kept within 1 .. 2^32 - 1.
Z3_UINT_MAX = 2**32 - 1


def check_timeout(timeout: Any, cli: bool = False) -> float | None:
    """``timeout`` (seconds per obligation): ``None``, or a finite number > 0.

    ``inf`` overflowed ``int(timeout * RLIMIT_PER_SECOND)`` (exit 70), and ``1e-9`` made rlimit
    0, which Z3 reads as unlimited (issue 11)."""
    if timeout is None:
        return None
    ok = isinstance(timeout, int | float) and not isinstance(timeout, bool) and math.isfinite(timeout) \
        and timeout > 0
    if not ok:
        shown = f"--timeout {timeout}" if cli else f"timeout={timeout!r}"
        raise TeilInputError(f"{shown}: expected a finite number of seconds > 0")
    return float(timeout)


def rlimit_for(timeout: float | None) -> int:
    """The resource limit of one check: :data:`RLIMIT`, or ``timeout`` seconds' worth (at least 1)."""
    timeout = check_timeout(timeout)
    if timeout is None:
        return RLIMIT
    return min(Z3_UINT_MAX, max(1, int(timeout * RLIMIT_PER_SECOND)))


__all__ = ["RLIMIT", "RLIMIT_PER_SECOND", "Z3_UINT_MAX", "check_timeout", "rlimit_for"]
