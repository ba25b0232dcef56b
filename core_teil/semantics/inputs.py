"""Inputs of a run: which allocations must be supplied, what an acceptable array, parameter
and pad are.

SPEC.md section 6: inputs are float64 arrays of exactly the declared shape, never
converted (docs/decisions.md, "Input dtypes"); parameters are integers >= 1; anything
else is a clear error naming the allocation or parameter, never a crash.  Shared by
the reference and the native engine, the prover and the CLI, so that all accept and
refuse the same values with the same messages.  A message names a value as the caller
wrote it: ``--param l=0`` on the command line, ``params['l'] = 0`` from Python.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import NO_SPAN, Span, TeilInputError, TeilResourceError, in_file
from ..lang.printer import format_shape
from ..lang.shapes import round_up
from ..lang.syntax import Alloc, Dim, Param, Program, Var, expect_program, walk
from ..lang.typing import TypedProgram

#: The largest integer magnitude float64 holds exactly.
EXACT_INT = 2**53


def _is_int(v: Any) -> bool:
    """A Python or numpy integer, not a bool (``True`` is an int in Python, never an extent)."""
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def check_params(params: Mapping[str, Any] | None, program: Program | None = None,
                 cli: bool = False) -> dict[str, int]:
    """Shape parameter values: the one check that every API entry point and the CLI make.

    SPEC.md section 1 and 6: a parameter ranges over the integers >= 1; a value is a Python
    or numpy integer (not a bool, a float such as 2.0 or 2.5, or a string such as "2"),
    returned as a Python ``int``.  With ``program``, each name must be one it declares.
    Anything else is a :class:`TeilInputError` (exit 2): a shape of 2.5 would type-check
    and prove (issue 11), a certificate for a shape that cannot exist."""
    if program is not None:  # what every entry point passes on: not its text (None is "no program")
        expect_program(program)
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise TeilInputError(f"params must be a dict of parameter names to integers, not {type(params).__name__}")
    out: dict[str, int] = {}
    for name, value in params.items():
        shown = f"--param {name}={value}" if cli else f"params[{name!r}] = {value!r}"
        if not isinstance(name, str):
            raise TeilInputError(f"{shown}: a parameter name is a string")
        if program is not None and name not in program.params:
            declared = ", ".join(program.params) or "none"
            raise TeilInputError(f"{shown}: the program declares no parameter {name!r} (it declares: {declared})")
        if not _is_int(value):
            raise TeilInputError(f"{shown}: shape parameters are integers >= 1 (Python or numpy integers), "
                                 f"not {type(value).__name__}")
        if value < 1:
            raise TeilInputError(f"{shown}: shape parameters range over integers >= 1")
        out[name] = int(value)
    return out


def check_inputs(inputs: Any) -> dict[str, Any]:
    """The inputs of a run as a dict of allocation names to arrays (``None``: none); anything
    else is a TeilInputError, not a TypeError from ``dict(3)`` (review r25)."""
    if inputs is None:
        return {}
    if not isinstance(inputs, Mapping):
        raise TeilInputError(f"inputs must be a dict of allocation names to arrays, not {type(inputs).__name__}")
    return dict(inputs)


def check_pad(pad: Any, cli: bool = False) -> int | None:
    """The vector length of padding (report section 4): ``None``, or an integer >= 1."""
    if pad is None:
        return None
    if not _is_int(pad) or pad < 1:
        shown = f"--pad {pad}" if cli else f"pad={pad!r}"
        raise TeilInputError(f"{shown}: the vector length must be an integer >= 1")
    return int(pad)


def needed_inputs(program: Program) -> set[str]:
    """Allocations some statement reads before any statement writes them."""
    written: set[str] = set()
    needed: set[str] = set()
    for s in program.stmts:
        needed |= {v.name for v in walk(s.expr) if isinstance(v, Var) and v.name not in written}
        written.add(s.target)
    return needed


def required_inputs(program: Program) -> set[str]:
    """``input`` allocations; without qualifiers, those read before they are written."""
    if program.qualified:
        return {a.name for a in program.allocs if a.qual == "input"}
    return needed_inputs(program)


def check_dtype(name: str, dtype: np.dtype, span: Span = NO_SPAN, where: str = "", role: str = "input") -> None:
    """The dtype policy (docs/decisions.md, "Input dtypes"): float64, nothing else, never converted.

    Converting silently would make the engines accept what the semantics does not say:
    an int64 beyond 2**53 or a float16 rounds, a bool is no number of V, and which of these
    a conversion "should" accept is a guess.  So ``int``, ``float32``, ``float16``, ``bool``,
    ``complex``, strings and objects are refused alike, with the conversion to write.  Byte
    order is storage, not value: a big-endian float64 is float64."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f" and dtype.itemsize == 8:
        return
    what = f"{where}: " if where else ""
    if dtype.kind == "c":
        why = "complex; Core-TeIL values are reals"
    elif dtype.kind in "biuf":
        why = f"dtype {dtype}; {role}s are float64 arrays and are never converted (SPEC.md section 6)"
        if role == "input":
            why += (": convert it yourself, e.g. numpy.asarray(x, dtype=numpy.float64), if every value is "
                    "exact in float64")
    else:
        why = f"dtype {dtype}; expected real numbers (float64)"
    raise TeilInputError(f"{what}{role} {name!r} {'is' if dtype.kind == 'c' else 'has'} {why}", span, "μ_allocs")


def not_an_array(name: str, exc: Exception, span: Span) -> TeilInputError:
    return TeilInputError(f"input {name!r} is not an array: {exc}", span, "μ_allocs")


def as_array(name: str, value: Any, alloc: Alloc | None = None) -> np.ndarray:
    """``value`` as the float64 array it already is (:func:`check_dtype`), or a TeilInputError."""
    span = alloc.span if alloc is not None else NO_SPAN
    if isinstance(value, np.ndarray):
        arr = value
    else:
        try:
            arr = np.asarray(value)
        except Exception as exc:  # numpy raises many kinds here; all mean "not an array"
            raise not_an_array(name, exc, span) from None
    check_dtype(name, arr.dtype, span)
    return arr if arr.dtype.isnative else arr.astype(np.float64)  # byte order only: same values


def infer_params(program: Program, inputs: Mapping[str, Any],
                 params: dict[str, int] | None) -> dict[str, int]:
    """Parameters not given explicitly are read off the shapes of the inputs.

    Ranks and extents are checked here, before any parameter is needed, so
    that a wrong input is reported as such and not as a missing parameter."""
    values = dict(params or {})
    for name, value in inputs.items():
        a = program.alloc(name)
        if a is None:
            raise not_allocated(program, name)
        try:
            shape = np.shape(value)
        except Exception as exc:  # a ragged list, as in as_array
            raise not_an_array(name, exc, a.span) from None
        if len(shape) != len(a.shape):
            raise TeilInputError(f"input {name!r} has rank {len(shape)} (shape {list(shape)}), but the "
                                 f"program declares {name} : {format_shape(a.shape)}", a.span)
        for pos, (d, n) in enumerate(zip(a.shape, shape, strict=True), start=1):
            if n < 1:
                raise TeilInputError(f"input {name!r} has an empty dimension {pos} (shape {list(shape)}); "
                                     f"extents are >= 1", a.span)
            if isinstance(d, str) and d not in values:
                values[d] = int(n)
    return values


def memory_budget() -> int:
    """Half the machine's physical memory: the most the engines allocate for one program."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2)
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def human_bytes(n: float) -> str:
    if n >= 1024**7:  # an int past any float (a pad of 10^400, fuzzing r23); the exact count is beside it
        return "over 1024 EiB"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} EiB"


def check_memory(shapes: Mapping[str, tuple[int, ...]], program: Program, pad: int | None) -> None:
    """An allocation too large to hold is refused with its byte count, before any is made.

    The rule is ``μ_allocs`` (paper Fig. 9, Eval-Prog: the initial memory holds one array per
    allocation), which is what cannot be built; the shape itself is well-formed (S-Var)."""
    budget = memory_budget()
    total = 0
    for a in program.allocs:
        dims = shapes[a.name]
        nbytes = 8 * math.prod(dims)
        total += nbytes
        if nbytes > budget or total > budget:
            padded = f" (padded to multiples of {pad})" if pad is not None else ""
            raise TeilResourceError(
                f"allocation {a.name} : {format_shape(tuple(dims))}{padded} needs {nbytes:,} bytes "
                f"({human_bytes(nbytes)}); all allocations together need {total:,}+ bytes, more than the "
                f"{budget:,} bytes ({human_bytes(budget)}) this engine may use", a.span, "μ_allocs")


def not_allocated(program: Program, name: str) -> TeilInputError:
    """The error for an input that names no allocation of ``program`` (no line to point at)."""
    return TeilInputError(f"{in_file(program.file)}input {name!r}: the program allocates no {name!r} "
                          f"(it allocates {', '.join(a.name for a in program.allocs) or 'nothing'})")


def check_supplied(program: Program, inputs: Mapping[str, Any]) -> None:
    """Every input names an allocation, and every required one is there (before shapes matter)."""
    for name in inputs:
        if program.alloc(name) is None:
            raise not_allocated(program, name)
    required = required_inputs(program)
    for a in program.allocs:
        if a.name in required and a.name not in inputs:
            raise TeilInputError(f"missing input {a.name!r} : {format_shape(a.shape)}", a.span)


def missing_parameter(program: Program, name: str) -> TeilInputError:
    """The error for a shape parameter a run needs but was not given."""
    decl = next((p for p in program.decls if isinstance(p, Param) and name in p.names), None)
    return TeilInputError(f"shape parameter {name!r} has no value: give it (--param {name}=N, or "
                          f"params={{{name!r}: N}}) or supply an input whose shape fixes it",
                          decl.span if decl is not None else NO_SPAN)


def concrete_extent(typed: TypedProgram, d: Dim) -> int:
    """The value of a shape term in a run, where every parameter must have one."""
    v = typed.solver.concrete(d)
    if v is None:
        raise missing_parameter(typed.program, str(d))
    return v


def check_params_given(program: Program, params: Mapping[str, int]) -> None:
    """A run needs every shape parameter: given, or read off an input's shape."""
    for name in program.params:
        if name not in params:
            raise missing_parameter(program, name)


def run_params(program: Program, inputs: Mapping[str, Any], given: Mapping[str, int] | None) -> dict[str, int]:
    """The parameter values of a run, after the checks every engine makes first: the inputs
    name allocations and include the required ones (:func:`check_supplied`), and ``given``
    with what their shapes fix (:func:`infer_params`) is every parameter."""
    check_supplied(program, inputs)
    params = infer_params(program, inputs, given)
    check_params_given(program, params)
    return params


def check_shape(a: Alloc, shape: tuple[int, ...], declared: tuple[int, ...], where: str = "") -> None:
    """An input's shape equals its allocation's (with the run's parameter values)."""
    if tuple(shape) != tuple(declared):
        what = f"{where}: " if where else ""
        raise TeilInputError(f"{what}input {a.name!r} has shape {list(shape)}, but the program declares "
                             f"{a.name} : {format_shape(tuple(declared))}", a.span, "μ_allocs")


def validate_inputs(typed: TypedProgram, inputs: Mapping[str, Any], extent: Any,
                    pad: int | None) -> dict[str, np.ndarray]:
    """Every required input present, every given one an exact float64 array of its declared shape.

    ``extent`` maps a shape term to its value (an engine's ``Interpretation.extent``)."""
    program = typed.program
    check_supplied(program, inputs)
    shapes = {a.name: tuple(extent(d) for d in a.shape) for a in program.allocs}
    rounded = {x: tuple(round_up(n, pad) for n in t) for x, t in shapes.items()} if pad else shapes
    check_memory(rounded, program, pad)
    out: dict[str, np.ndarray] = {}
    for a in program.allocs:
        if a.name not in inputs:
            continue
        arr = as_array(a.name, inputs[a.name], a)
        check_shape(a, arr.shape, shapes[a.name])
        out[a.name] = arr
    return out
