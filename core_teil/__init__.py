"""core-teil: a mechanized semantics and proof checker for Core-TeIL.

The public Python API of SPEC.md section 6::

    import core_teil as ct
    p = ct.load("examples/matmul.teil")
    ct.check(p, {"l": 2, "m": 3, "n": 4})      # {'A': (2, 3), ...}
    ct.evaluate(p, {"A": a, "B": b}, pad=8)   # reference engine
    ct.prove(p).ok                           # Z3 certificate
    ct.compile(p, params)(A=a, B=b)          # native engine
"""

from __future__ import annotations

import os
from typing import Any

# Before the native extension loads libgomp, which reads this once.  Idle OpenMP threads
# that spin (GNU's default) steal a core from numpy's BLAS threads between calls: mttkrp's
# reduction took 18 ms instead of 10 after a GEMM.  The user's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Imported eagerly, like prove below: the submodule core_teil.emit_c must not shadow the
# function ct.emit_c (issue 15: a standalone C kernel licensed by the certificate).
from .emit_c import emit_c

# Imported eagerly, like prove below (issue 13: the submodule must not shadow ct.equiv).
from .equiv import equiv
from .errors import TeilError, TeilInputError, TeilResourceError, TeilSyntaxError, TeilTypeError, TeilUnknown
from .eval import evaluate
from .lowering import lower

# Imported eagerly: the submodule core_teil.prove must not shadow the function
# ct.prove once someone imports the submodule.
from .prove import prove
from .syntax import Program

__version__ = "0.1.0"


def parse(text: str, file: str = "<string>") -> Program:
    """Parse a ``.teil`` program (SPEC.md section 2)."""
    from .parser import parse as _parse

    return _parse(text, file)


def load(path: str) -> Program:
    """Read and parse a ``.teil`` file."""
    from .parser import load as _load

    return _load(path)


def format(program: Program) -> str:
    """The canonical text of a program (``core-teil fmt``)."""
    from .printer import format_program

    return format_program(program)


def check(program: Program, params: dict[str, int] | None = None) -> dict[str, tuple]:
    """Type-check; return each allocation's shape (raises :class:`TeilTypeError`).

    ``params`` are integers >= 1 (:func:`core_teil.inputs.check_params`, as every entry point)."""
    from .inputs import check_params
    from .typing import check_program

    return check_program(program, check_params(params, program)).shapes()


def from_einsum(subscripts: str, *shapes: Any, names: Any = None) -> Program:
    """The TeIL program of an einsum, shapes possibly symbolic (issue 12; :mod:`core_teil.frontends_einsum`)."""
    from .frontends_einsum import from_einsum as _from_einsum

    return _from_einsum(subscripts, *shapes, names=names)


def einsum(subscripts: str, *arrays: Any, engine: str = "native", pad: int | None = None) -> Any:
    """``numpy.einsum`` on a kernel certified by ``ct.prove`` (issue 12; :mod:`core_teil.frontends_einsum`)."""
    from .frontends_einsum import einsum as _einsum

    return _einsum(subscripts, *arrays, engine=engine, pad=pad)


def compile(program: Program, params: dict[str, int] | None = None, pad: int | None = None) -> Any:
    """The native engine: a kernel callable as ``kernel(**inputs)``."""
    from .native import compile as _compile

    return _compile(program, params, pad)


__all__ = [
    "Program", "TeilError", "TeilInputError", "TeilResourceError", "TeilSyntaxError", "TeilTypeError",
    "TeilUnknown", "check", "compile", "einsum", "emit_c", "equiv", "evaluate", "format", "from_einsum", "load",
    "lower", "parse", "prove",
]
