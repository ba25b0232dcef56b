"""_native.magnitude: the overflow guard's factor for one input, in one call (issue 15: small calls)."""

from __future__ import annotations

import numpy as np
import pytest

from core_teil.native import _native
from core_teil.native.engine import largest_size

CASES = {
    "small": np.array([0.5, -0.25]),
    "large": np.array([[3.0, -7.5], [np.nan, 2.0]]),
    "all NaN": np.full(5, np.nan),
    "empty": np.empty((0, 3)),
    "infinite": np.array([1.0, -np.inf]),
    "negative zero": np.array([-0.0]),
    "five values": np.array([1.0, 2.0, 3.0, 4.0, -9.0]),  # past the four-wide loop
}


@pytest.mark.parametrize("name", CASES)
def test_magnitude_is_the_guards_factor_for_a_native_array(name: str) -> None:
    a = CASES[name]
    assert _native.magnitude(a) == max(1.0, largest_size(a))


@pytest.mark.parametrize("other", [
    np.array([2.0, -5.0]).astype(">f8"),  # another byte order: the bytes are not native doubles
    np.arange(12.0).reshape(3, 4)[:, ::2],  # not contiguous
    np.arange(4, dtype=np.float32),
    [1.0, 2.0],
    None,
])
def test_anything_else_is_left_to_the_caller(other: object) -> None:
    assert _native.magnitude(other) == -1.0


@pytest.mark.parametrize("order", ["<f8", ">f8"])
def test_the_guard_measures_inputs_magnitude_cannot_read(monkeypatch: pytest.MonkeyPatch, order: str) -> None:
    """A big-endian input is a float64 all the same: it reaches the guard in native byte order
    (the input checks copy it), and a bound past the overflow limit still sends the call to the
    equations.  magnitude's -1 (measured by largest_size instead) is a defence for arrays that
    would reach the guard otherwise; the public API gives it none."""
    import core_teil as ct
    from core_teil.native import engine as native

    prog = ct.parse("lang full\ninput alloc A : [1]\ninput alloc B : [2]\noutput alloc O : [1]\n"
                    "O = red 2 (prod A B)\n")
    k = native.compile(prog)
    asked: list[int] = []
    real = native.evaluate
    monkeypatch.setattr(native, "evaluate", lambda *a, **kw: asked.append(1) or real(*a, **kw))
    k(A=np.array([1e200], dtype=order), B=np.array([1e200, 1.0], dtype=order))
    assert asked
    asked.clear()
    k(A=np.array([2.0], dtype=order), B=np.array([3.0, 1.0], dtype=order))
    assert not asked
