"""core-teil: a mechanized semantics and proof checker for Core-TeIL.

The public Python API of SPEC.md section 6::

    import core_teil as ct
    p = ct.load("examples/matmul.teil")
    ct.check(p, {"l": 2, "m": 3, "n": 4})      # {'A': (2, 3), ...}, also the typed program
    ct.derive(p); ct.trace(p, "C[i,j]")        # typing derivations; the unfolding of [[e]]
    ct.evaluate(p, {"A": a, "B": b}, pad=8)   # reference engine
    ct.prove(p).ok                           # Z3 certificate
    ct.compile(p, params)(A=a, B=b)          # native engine
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# Before the native extension loads libgomp, which reads this once.  Idle OpenMP threads
# that spin (GNU's default) steal a core from numpy's BLAS threads between calls: mttkrp's
# reduction took 18 ms instead of 10 after a GEMM.  The user's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# The other side of the same contest: after a BLAS call, numpy's OpenBLAS keeps its workers
# polling for 2^28 cycles (about 0.1 s), and a kernel on every core run meanwhile shares one
# with them: helm on two threads took 44-55 ms after a 300x300 numpy.matmul instead of 28.
# 2^20 cycles (about 0.3 ms) keeps back-to-back BLAS calls fast.  OpenBLAS reads this when it
# loads, so it takes effect only when core_teil is imported before numpy (as `core-teil` is);
# the user's own setting wins (docs/decisions.md).
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")

from .errors import (
    TeilError,
    TeilInputError,
    TeilResourceError,
    TeilSyntaxError,
    TeilTypeError,
    TeilUnknown,
    checked_call,
)


def _reprs_on_first_use() -> None:
    """Give ``Program``, ``TypedProgram`` and ``Derivation`` the teaching layer's reprs
    (:func:`core_teil.teach.teaching.install_reprs`) when one of them is first shown, not at
    import: the teaching modules are a tenth of what ``core-teil prove`` imports, and a warm
    library run shows no program.  The first call of any of the methods installs them all.
    ``TypedProgram`` and ``Derivation`` get theirs when ``core_teil.lang.typing`` is imported
    (:class:`_AfterImport`), not by importing it here: it imports Z3 (``lang.shapes``), which
    a warm library run does not otherwise need."""
    from .lang.syntax import Program

    def stub(name: str) -> Any:
        def first_use(self: Any, *args: Any) -> Any:
            from .teach.teaching import install_reprs

            install_reprs()  # replaces every stub, this one included
            return getattr(self, name)(*args)

        first_use.__name__ = name
        return first_use

    def stub_all(*classes: type) -> None:
        for cls in classes:
            for name in ("_repr_html_", "_repr_latex_", "__repr__"):
                setattr(cls, name, stub(name))

    stub_all(Program)
    Program.__str__ = stub("__str__")  # type: ignore[method-assign]
    # install_reprs imports lang.typing (teach.teaching does) before it replaces these stubs
    _AfterImport.install(f"{__name__}.lang.typing", lambda typing: stub_all(typing.TypedProgram, typing.Derivation))


class _AfterImport:
    """A finder (``sys.meta_path``) that finds nothing itself: when module ``name`` is imported
    it lets the other finders find it and calls ``then(module)`` once the module has run."""

    def __init__(self, name: str, then: Callable[[Any], None]) -> None:
        self.name, self.then = name, then

    @classmethod
    def install(cls, name: str, then: Callable[[Any], None]) -> None:
        if name in sys.modules:
            then(sys.modules[name])
        else:
            sys.meta_path.insert(0, cls(name, then))

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None) if finder is not self else None
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                break
        else:
            return None
        sys.meta_path.remove(self)  # once: a module runs once
        # A loader of its own: patching the found one would run ``then`` after every module a
        # shared loader (zipimport's, one per zip directory) loads later (review r17r).
        spec.loader = _ThenLoader(spec.loader, self.then)
        return spec


class _ThenLoader:
    """``loader``, then ``then(module)`` once the module has run; the module keeps ``loader``."""

    def __init__(self, loader: Any, then: Callable[[Any], None]) -> None:
        self.loader, self.then = loader, then

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        module.__loader__ = self.loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        self.then(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_resource_reader, ...
        return getattr(self.loader, name)


_reprs_on_first_use()

if TYPE_CHECKING:
    from .lang.syntax import Program
    from .teach.checked import CheckedProgram
    from .teach.partial import Derivations
    from .teach.trace import Trace

#: The API's other names, imported on first use (PEP 562): ``import core_teil`` is what every
#: command pays first, and these bring numpy, the prover, the equivalence checker and the
#: operator language (a third of a warm ``core-teil prove`` of a library took their imports).
_LAZY = {
    "ops": ("core_teil.frontends.ops", None),  # the operator language of paper 000, section 5 (issue 12)
    "lower": ("core_teil.lang.lowering", "lower"),
    "Program": ("core_teil.lang.syntax", "Program"),
    "equiv": ("core_teil.proving.equiv", "equiv"),
    "prove": ("core_teil.proving.prove", "prove"),
    "evaluate": ("core_teil.semantics.eval", "evaluate"),
    "CheckedProgram": ("core_teil.teach.checked", "CheckedProgram"),
    "Derivations": ("core_teil.teach.partial", "Derivations"),
    "Trace": ("core_teil.teach.trace", "Trace"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__version__ = "0.1.0"


@checked_call
def parse(text: str, file: str = "<string>") -> Program:
    """Parse a ``.teil`` program (SPEC.md section 2)."""
    from .lang.parser import parse as _parse

    return _parse(text, file)


@checked_call
def load(path: str) -> Program:
    """Read and parse a ``.teil`` file."""
    from .lang.parser import load as _load

    return _load(path)


@checked_call
def format(program: Program) -> str:
    """The canonical text of a program (``core-teil fmt``)."""
    from .lang.printer import format_program

    return format_program(program)


@checked_call
def check(program: Program, params: dict[str, int] | None = None) -> CheckedProgram:
    """Type-check (raises :class:`TeilTypeError`); the result maps each allocation to its shape,
    ``ct.check(p)["C"]``, and equals that dict; it also holds the derivations (shown in Jupyter).

    ``params`` are integers >= 1 (:func:`core_teil.semantics.inputs.check_params`, as every entry point)."""
    from .lang.typing import check_program
    from .semantics.inputs import check_params
    from .teach.checked import CheckedProgram

    return CheckedProgram(check_program(program, check_params(params, program)))


@checked_call
def derive(program: Program | CheckedProgram, params: dict[str, int] | None = None) -> Derivations:
    """Every statement's typing derivation (``core-teil derive``), as a record that prints as the tree.

    An ill-typed program is not an error here: ``.ok`` is False and each failing statement's
    derivation stops at the rule that fails, its premise marked (with Z3's counterexample for
    symbolic shapes); ``.error`` is what ``ct.check`` raises.  ``.latex()`` is the LaTeX document."""
    from .teach.checked import CheckedProgram
    from .teach.partial import derive_program

    if isinstance(program, CheckedProgram):
        if params:
            raise TeilInputError("ct.derive: the program is already checked; give params to ct.check")
        return program.derive()
    return derive_program(program, params)


@checked_call
def trace(program: Program | CheckedProgram, at: str, params: dict[str, int] | None = None,
          inputs: dict[str, Any] | None = None, pad: int | None = None) -> Trace:
    """The unfolding of ``[[e]]`` at one index, e.g. ``ct.trace(p, "C[1,2]", {"l": 2, "m": 3, "n": 4})``
    (``core-teil trace``, paper Fig. 7).  A name in the index (``'C[i,j]'``) is a symbolic index.
    With ``inputs`` the final term is also evaluated and compared with the reference engine; the
    parameters are then read off the inputs' shapes as ``ct.evaluate`` does."""
    from .lang.syntax import expect_program
    from .semantics.inputs import check_inputs, check_params, infer_params
    from .teach.checked import CheckedProgram

    if isinstance(program, CheckedProgram):
        if params:
            raise TeilInputError("ct.trace: the program is already checked; give params to ct.check")
        return program.trace(at, inputs, pad)
    given = check_params(params, expect_program(program))
    if inputs is not None:
        given = infer_params(program, check_inputs(inputs), given)
    return check(program, given).trace(at, inputs, pad)


@checked_call
def from_einsum(subscripts: str, *shapes: Any, names: Any = None) -> Program:
    """The TeIL program of an einsum, shapes possibly symbolic (issue 12; :mod:`core_teil.frontends.einsum`)."""
    from .frontends.einsum import from_einsum as _from_einsum

    return _from_einsum(subscripts, *shapes, names=names)


@checked_call
def einsum(subscripts: str, *arrays: Any, engine: str = "native", pad: int | None = None, out: Any = None,
           optimize: Any = False) -> Any:
    """``numpy.einsum`` on a kernel certified by ``ct.prove`` (issue 12; :mod:`core_teil.frontends.einsum`)."""
    from .frontends.einsum import einsum as _einsum

    return _einsum(subscripts, *arrays, engine=engine, pad=pad, out=out, optimize=optimize)


@checked_call
def from_onnx(model_or_path: Any) -> Program:
    """The TeIL program of an ONNX graph (issue 12; :mod:`core_teil.frontends.onnx`; needs ``core-teil[onnx]``)."""
    from .frontends.onnx import from_onnx as _from_onnx

    return _from_onnx(model_or_path)


@checked_call
def onnx_inputs(model_or_path: Any) -> dict[str, Any]:
    """The values an ONNX model brings (initializers, constants) by allocation name
    (:mod:`core_teil.frontends.onnx`)."""
    from .frontends.onnx import onnx_inputs as _onnx_inputs

    return _onnx_inputs(model_or_path)


@checked_call
def emit_c(program: Program, params: dict[str, int] | None = None, pad: int | None = None, *,
           name: str | None = None, header: str | None = None, fuse: bool = True, certificate: Any = None) -> Any:
    """A standalone C99 kernel and header, licensed by ``ct.prove`` (issue 15; :mod:`core_teil.native.emit_c`)."""
    from .native.emit_c import emit_c as _emit_c

    return _emit_c(program, params, pad, name=name, header=header, fuse=fuse, certificate=certificate)


@checked_call
def batch_dimension(program: Program, params: dict[str, int] | None = None, batch: str | None = None) -> Any:
    """The batch dimension a kernel may be split along, proved element-wise (issue 17;
    :mod:`core_teil.native.blockwise`); ``kernel.blockwise(chunks, **inputs)`` runs on it."""
    from .native.blockwise import batch_dimension as _batch_dimension

    return _batch_dimension(program, params, batch)


@checked_call
def prove_library(paths: Any, *, jobs: int | None = None, params: dict[str, int] | None = None,
                  pad: int | None = None, timeout: float | None = None, solver: str = "z3", cache: Any = None,
                  audit: bool = False, scheduler: str | None = None, progress: Any = None) -> Any:
    """``core-teil prove PATH...`` as a function: a :class:`core_teil.library.Summary` (issue 17)."""
    from collections.abc import Iterable

    from .library import run

    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    elif isinstance(paths, Iterable) and not isinstance(paths, bytes):
        paths = list(paths)  # a glob's iterator, a set: read once
    else:
        raise TeilInputError(f"ct.prove_library: expected a path or paths, not {type(paths).__name__}")
    bad = [p for p in paths if not isinstance(p, str | os.PathLike)]
    if bad:
        raise TeilInputError(f"ct.prove_library: expected paths, not {type(bad[0]).__name__} ({bad[0]!r})")
    return run([os.fspath(p) for p in paths], jobs=jobs, params=params, pad=pad, timeout=timeout, solver=solver,
               cache=cache, audit=audit, scheduler=scheduler, progress=progress)


@checked_call
def compile(program: Program, params: dict[str, int] | None = None, pad: int | None = None) -> Any:
    """The native engine: a kernel callable as ``kernel(**inputs)``."""
    from .native.engine import compile as _compile

    return _compile(program, params, pad)


__all__ = [
    "CheckedProgram", "Derivations", "Program", "TeilError", "TeilInputError", "TeilResourceError",
    "TeilSyntaxError", "TeilTypeError", "TeilUnknown", "Trace", "batch_dimension", "check", "compile", "derive",
    "einsum", "emit_c", "equiv", "evaluate", "format", "from_einsum", "from_onnx", "load", "lower", "onnx_inputs",
    "ops", "parse", "prove", "prove_library", "trace",
]
