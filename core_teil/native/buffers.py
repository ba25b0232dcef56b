"""Large buffers kept for the next call (issue 15).

A fresh result of interp E=50000 n=7 is 137 MB that the operating system hands out as
untouched pages: the kernel's first write to each faults and zeroes it, about 10 ms of
the call's 32 (``make bench``, one thread; with ``out=`` the same call takes 22 ms).
Repeated calls are how the engine is used (a time step, a solver's iteration, a batch
of requests), and the caller usually lets go of the previous result before, or just
after, asking for the next one.  So the engine keeps the buffers of its large results
and, when a later call needs one of the same size that nobody else holds any more,
writes into it again: its pages are already mapped.  This is what a caching allocator
does (PyTorch's, JAX's), bounded: at most :data:`LIMIT` bytes are kept, and
:func:`release` lets them all go.

A kept buffer is reused only when its reference count says the engine's list is its
only holder: a result, any view of it (numpy makes every view's ``base`` the buffer
itself) or an array built on it by the buffer protocol all hold it, so no array the
caller can still reach is ever written.  A reused buffer holds the old result's values,
as a fresh one holds whatever the allocator gives: every user writes it in full before
reading it (``tests/test_buffers.py`` fills reused buffers with NaN and runs the engine's
differential tests through them).
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

from ..errors import TeilInputError
from . import _native

#: Buffers of at least this many bytes are kept (smaller ones malloc serves from its heap).
MIN_BYTES = 1 << 20

ENV_LIMIT = "CORE_TEIL_KEEP_BYTES"


def _limit(text: str | None) -> int | None:
    """The limit ``CORE_TEIL_KEEP_BYTES`` sets: a number of bytes (digits; 0 keeps nothing),
    1 GiB when it is not set, None when it is not a number (refused at the first large
    buffer: this module is imported by every command, most of which allocate none)."""
    if text is None:
        return 1 << 30
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() else None


#: At most this many bytes are kept (``CORE_TEIL_KEEP_BYTES``; 0 keeps nothing).
LIMIT = _limit(os.environ.get(ENV_LIMIT))

#: Set by tests: a reused buffer is filled with NaN first, so that a reader of a value no
#: call wrote sees NaN and not a plausible old result.
POISON = False

#: A kept buffer not handed out in this many hand-outs gives way to a new one when the kept
#: bytes would pass :data:`LIMIT`; one handed out more recently does not, so that a cycle of
#: calls that needs more than the limit keeps what fits instead of replacing every buffer
#: before its next use (least-recently-used order did that to ``make bench``'s rounds).
IDLE = 32

_LOCK = threading.Lock()


def _after_fork() -> None:
    # a child forked while another thread held the lock would wait for it for ever
    global _LOCK
    _LOCK = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)

_KEPT: list[list] = []  # [buffer, the hand-out that last handed it out]
_TICK = 0  # hand-outs so far


def _holders(kept: list[list], k: int) -> int:
    """The reference count of buffer ``k`` as seen from here."""
    raw = kept[k][0]
    return sys.getrefcount(raw)


#: What :func:`_holders` counts for a buffer that only its list holds: measured the same
#: way rather than assumed (the count of a name or an argument differs between Pythons).
_ALONE = _holders([[np.empty(1), 0]], 0)


def aligned(shape: tuple[int, ...], align: int) -> np.ndarray:
    """An uninitialised C-contiguous float64 array of ``shape`` starting on an
    ``align``-byte boundary, in a kept buffer nobody holds if one of its size exists."""
    global _TICK
    n = 1
    for d in shape:
        n *= d
    size = max(n, 1) + align // 8
    if LIMIT is None:
        raise TeilInputError(f"{ENV_LIMIT}={os.environ.get(ENV_LIMIT)!r} is not a number of bytes (digits, "
                             f"such as {1 << 30} for 1 GiB, or 0 to keep no buffer)")
    if 8 * size < MIN_BYTES or 8 * size > LIMIT:
        return _native.aligned_empty(tuple(shape), align)
    with _LOCK:
        _TICK += 1
        for k in range(len(_KEPT)):
            if _KEPT[k][0].size == size and _holders(_KEPT, k) == _ALONE:
                _KEPT[k][1] = _TICK
                if POISON:
                    _KEPT[k][0].fill(np.nan)
                return _native.aligned_view(_KEPT[k][0], tuple(shape), align)
        raw = np.empty(size)
        kept = sum(r.nbytes for r, _ in _KEPT)
        idle = sorted((last, k) for k, (_, last) in enumerate(_KEPT) if _TICK - last >= IDLE)
        gone: set[int] = set()
        for _, k in idle:
            if kept + raw.nbytes <= LIMIT:
                break
            kept -= _KEPT[k][0].nbytes  # a result still in use stays its holder's
            gone.add(k)
        _KEPT[:] = [e for k, e in enumerate(_KEPT) if k not in gone]
        if kept + raw.nbytes <= LIMIT:
            _KEPT.append([raw, _TICK])
        return _native.aligned_view(raw, tuple(shape), align)


def kept_bytes() -> int:
    """Bytes the engine keeps now (those its callers still hold included)."""
    with _LOCK:
        return sum(r.nbytes for r, _ in _KEPT)


def release() -> None:
    """Let go of every kept buffer: those no caller holds go back to the allocator."""
    with _LOCK:
        _KEPT.clear()
