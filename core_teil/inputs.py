"""Inputs of a run: which allocations must be supplied, and what an acceptable array is.

SPEC.md section 6: inputs are float64 arrays of exactly the declared shape;
anything else is a clear error naming the allocation, never a crash.  Shared
by the reference and the native engine, so both accept and refuse the same
inputs with the same messages.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from .errors import NO_SPAN, TeilInputError, TeilResourceError
from .printer import format_shape
from .shapes import round_up
from .syntax import Alloc, Dim, Param, Program, Var, walk
from .typing import TypedProgram

#: The largest integer magnitude float64 holds exactly.
EXACT_INT = 2**53


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


def as_array(name: str, value: Any, alloc: Alloc | None = None) -> np.ndarray:
    """A real array holding ``value`` exactly in float64, or a TeilInputError saying why not."""
    span = alloc.span if alloc is not None else NO_SPAN
    try:
        arr = np.asarray(value)
    except Exception as exc:  # numpy raises many kinds here; all mean "not an array"
        raise TeilInputError(f"input {name!r} is not an array: {exc}", span) from None
    if np.iscomplexobj(arr):
        raise TeilInputError(f"input {name!r} is complex; Core-TeIL values are reals", span)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise TeilInputError(f"input {name!r} has dtype {arr.dtype}; expected real numbers (float64)", span)
    if arr.dtype == np.float64:
        return arr
    if np.issubdtype(arr.dtype, np.integer):
        if arr.size and int(np.max(np.abs(arr.astype(object)))) > EXACT_INT:
            raise TeilInputError(f"input {name!r} holds integers beyond 2**53, which float64 cannot "
                                 f"represent exactly", span)
        return arr.astype(np.float64)
    converted = arr.astype(np.float64)
    if not np.array_equal(converted.astype(arr.dtype), arr, equal_nan=True):
        raise TeilInputError(f"input {name!r} has dtype {arr.dtype} with values float64 cannot "
                             f"represent exactly", span)
    return converted


def infer_params(program: Program, inputs: Mapping[str, Any],
                 params: dict[str, int] | None) -> dict[str, int]:
    """Parameters not given explicitly are read off the shapes of the inputs.

    Ranks and extents are checked here, before any parameter is needed, so
    that a wrong input is reported as such and not as a missing parameter."""
    values = dict(params or {})
    for name, value in inputs.items():
        a = program.alloc(name)
        if a is None:
            raise TeilInputError(f"input {name!r}: the program allocates no {name!r} "
                                 f"(it allocates {', '.join(x.name for x in program.allocs) or 'nothing'})")
        shape = np.shape(value)
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
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} EiB"


def check_memory(shapes: Mapping[str, tuple[int, ...]], program: Program, pad: int | None) -> None:
    """An allocation too large to hold is refused with its byte count, before any is made."""
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
                f"{budget:,} bytes ({human_bytes(budget)}) this engine may use", a.span, "S-Var")


def check_supplied(program: Program, inputs: Mapping[str, Any]) -> None:
    """Every input names an allocation, and every required one is there (before shapes matter)."""
    for name in inputs:
        if program.alloc(name) is None:
            raise TeilInputError(f"input {name!r}: the program allocates no {name!r} "
                                 f"(it allocates {', '.join(a.name for a in program.allocs) or 'nothing'})")
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
        if arr.shape != shapes[a.name]:
            raise TeilInputError(f"input {a.name!r} has shape {list(arr.shape)}, but the program declares "
                                 f"{a.name} : {format_shape(shapes[a.name])}", a.span)
        out[a.name] = arr
    return out
