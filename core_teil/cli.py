"""The ``core-teil`` command line (SPEC.md section 6).

The only module that prints or exits.  Every failure the user can cause is a
:class:`~core_teil.errors.TeilError` rendered with file:line:column, the rule
or obligation, the offending line and a caret, and mapped to SPEC.md's exit
codes: 0 success, 1 program rejected, 2 bad input or usage, 3 unknown.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import __version__
from .errors import NO_SPAN, Span, TeilError, TeilInputError

if TYPE_CHECKING:  # imported where used: `core-teil prove` on a warm cache needs neither
    import numpy as np

    from .lang.syntax import Program

EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_UNKNOWN, EXIT_INTERNAL = 0, 1, 2, 3, 70

#: Source texts read so far, so that an error raised later can show its line.
_SOURCES: dict[str, str] = {}
#: The values an ``.onnx`` model brings (initializers, constants) by allocation name, per FILE:
#: the inputs a run gets unless ``--input`` gives them (issue 12).
_MODEL_INPUTS: dict[str, dict[str, np.ndarray]] = {}


# --------------------------------------------------------------------------
# Reading the command line's inputs
# --------------------------------------------------------------------------


def read_program(path: str) -> tuple[Program, str]:
    """FILE read by the one reader ``ct.load`` uses too (:func:`core_teil.lang.parser.read_source`).

    An ``.onnx`` model is translated by :func:`core_teil.frontends.onnx.translate`; its
    source is the printed program, which its spans' lines point into (they name the node)."""
    from .lang.parser import parse, read_source

    if path.lower().endswith(".onnx"):
        from .frontends.onnx import translate

        model = translate(path)
        _SOURCES[path] = model.source
        _MODEL_INPUTS[path] = model.constants
        return model.program, model.source
    source = read_source(path)
    _SOURCES[path] = source
    return parse(source, path), source


#: ``--param`` values: ASCII decimal digits only (``int()`` also takes ``٣``, ``1_000`` and ``+3``).
_DIGITS = re.compile(r"[0-9]+")


def parse_params(items: Sequence[str] | None, *files: tuple[str, Program]) -> dict[str, int] | None:
    """``--param n=7`` (repeatable; ``n=7,m=3`` also accepted), checked by :func:`inputs.check_params`.

    ``files`` are the (FILE, program) pairs the values are for: each name must be a parameter
    one of them declares, said in the flag's words and naming the file(s), as every command
    that takes ``--param`` says it (the API's own check speaks of ``params['l']``)."""
    if not items:
        return None
    from .semantics.inputs import check_params  # numpy: not for a run without --param
    where = " and ".join(f for f, _ in files)
    try:
        params = check_params(_param_values(items), cli=True)
    except TeilInputError as exc:
        if not where:
            raise
        raise TeilInputError(f"{where}: {exc.message}") from None
    if files:
        declared = [n for _, program in files for n in program.params]
        for name, number in params.items():
            if name not in declared:
                which = ("the program declares no parameter", "it declares") if len(files) == 1 \
                    else ("neither program declares a parameter", "they declare")
                raise TeilInputError(f"{where}: --param {name}={number}: {which[0]} "
                                     f"{name!r} ({which[1]}: {', '.join(dict.fromkeys(declared)) or 'none'})")
    return params


def _param_values(items: Sequence[str]) -> dict[str, int]:
    """The NAME=DIGITS pairs of the ``--param`` flags, each name given once."""
    out: dict[str, int] = {}
    for item in items:
        for part in item.split(","):
            name, sep, value = part.partition("=")
            name, value = name.strip(), value.strip()
            if not sep or not name:
                raise TeilInputError(f"--param {part!r}: expected NAME=INTEGER, e.g. --param n=7")
            if not _DIGITS.fullmatch(value):
                raise TeilInputError(f"--param {part!r}: {value!r} is not an integer >= 1 written in the "
                                     f"digits 0-9")
            number = int(value)
            if out.get(name, number) != number:
                raise TeilInputError(f"--param {name} is given twice, as {out[name]} and {number}")
            out[name] = number
    return out


def pad_arg(text: str) -> int:
    """``--pad M``: ASCII decimal digits only, as ``--param`` (``int()`` also takes ``' 2'``, ``+2``,
    ``２`` and ``1_000``; fuzzing r23); the value is then checked as the API checks it (check_flags)."""
    if not _DIGITS.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer >= 1 written in the digits 0-9")
    return int(text)


def path_arg(text: str) -> str:
    """A path option's value: not empty (``--output ''`` printed the results instead of writing
    them, ``--smt2-dir ''`` wrote nothing, without a word: review r25)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path")
    return text


# --------------------------------------------------------------------------
# Input arrays: .npy and .npz files, read without pickle, checked before their data
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    """One array of an ``.npz`` archive, known by its header until it is needed.

    An archive is compressed: 3 MB can hold a 3.2 GB array, and decompressing it before
    its shape is compared with the program's took 20 s (issue 11).  ``shape`` and ``dtype``
    come from the member's ``.npy`` header; :meth:`load` decompresses the data."""

    path: str
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    span: Span = NO_SPAN

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def load(self) -> np.ndarray:
        import numpy as np

        try:
            with np.load(self.path, allow_pickle=False) as archive:
                return np.asarray(archive[self.name])
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as exc:
            raise TeilInputError(f"{self.path}: member {self.name} is not a readable array ({exc})",
                                 self.span, "μ_allocs") from None


def _unreadable(path: str, exc: BaseException, span: Span) -> TeilInputError:
    if isinstance(exc, FileNotFoundError):
        return TeilInputError(f"{path}: no such file", span, "μ_allocs")
    if isinstance(exc, IsADirectoryError):
        return TeilInputError(f"{path}: is a directory", span, "μ_allocs")
    text = str(exc)
    if isinstance(exc, ValueError) and ("pickle" in text.lower() or "object" in text.lower()):
        return TeilInputError(f"{path}: holds a pickled object array, which is refused "
                              f"(inputs are read without pickle)", span, "μ_allocs")
    return TeilInputError(f"{path}: not a readable .npy/.npz file ({exc})", span, "μ_allocs")


def load_array_file(path: str, span: Span = NO_SPAN,
                    span_of: Callable[[str], Span] | None = None) -> dict[str, Member] | np.ndarray:
    """Read ``.npy`` (memory-mapped: only its header is read now) or an ``.npz``'s headers.

    Input files are untrusted (SPEC.md section 6): no pickle; an ``.npz`` member is
    decompressed only by :meth:`Member.load`, after its header has been checked.  ``span``
    (the ``input alloc`` line) is where an error points; ``span_of(name)``, for a bare
    archive, where an error about its member ``name`` points."""
    import numpy as np

    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
            if not (magic.startswith(b"\x93NUMPY") or magic.startswith(b"PK")):
                raise TeilInputError(f"{path}: not a readable .npy/.npz file (no numpy header)", span, "μ_allocs")
            if magic.startswith(b"\x93NUMPY"):
                fh.seek(0)
                checked_header(fh, path, span)
        if magic.startswith(b"PK"):
            return archive_members(path, span, span_of)
        # Memory-mapped, so a header that claims a huge shape is compared with
        # the declared shape before any data is read.
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except TeilInputError:
        raise
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, KeyError) as exc:
        raise _unreadable(path, exc, span) from None


def checked_header(fh: Any, what: str, span: Span) -> tuple[tuple[int, ...], Any]:
    """The shape and dtype an ``.npy`` header claims (numpy.lib.format), refused when its bytes,
    counted in Python integers, pass the engines' memory budget: numpy's own count overflows
    int64 (an extent of 10^23 was an OverflowError inside np.memmap, exit 70; 3·10^9 x 4·10^9
    printed numpy's RuntimeWarning before the refusal: review r25)."""
    import numpy as np

    from .semantics.inputs import human_bytes, memory_budget

    version = np.lib.format.read_magic(fh)  # an unreadable header: ValueError, OSError or EOFError
    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                   else np.lib.format.read_array_header_2_0)
    shape, _, dtype = read_header(fh)
    nbytes = math.prod(int(n) for n in shape) * dtype.itemsize
    budget = memory_budget()
    if nbytes > budget:
        raise TeilInputError(f"{what} claims shape {list(shape)}, {nbytes:,} bytes ({human_bytes(nbytes)}), "
                             f"more than the {budget:,} bytes the engines may use", span, "μ_allocs")
    return tuple(shape), dtype


def archive_members(path: str, span: Span = NO_SPAN,
                    span_of: Callable[[str], Span] | None = None) -> dict[str, Member]:
    """The arrays of an ``.npz`` by name, from their ``.npy`` headers (numpy.lib.format)."""
    out: dict[str, Member] = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if not info.filename.endswith(".npy"):
                continue
            name = info.filename[: -len(".npy")]
            where = span_of(name) if span_of is not None else span
            with zf.open(info) as fh:
                try:
                    shape, dtype = checked_header(fh, f"{path}: member {info.filename}", where)
                except (ValueError, OSError, EOFError) as exc:
                    raise TeilInputError(f"{path}: member {info.filename} has no readable .npy header ({exc})",
                                         where, "μ_allocs") from None
            out[name] = Member(path, name, shape, dtype, where)
    return out


def parse_inputs(items: Sequence[str] | None, program: Program) -> dict[str, np.ndarray | Member]:
    """``--input NAME=PATH.npy``, ``--input NAME=PATH.npz`` (its member ``NAME``) or
    ``--input PATH.npz`` (every member, each the input of its own name).

    An archive's member is never taken for an input of another name: ``A=x.npz`` needs a
    member ``A`` (docs/decisions.md, "Input dtypes and files")."""
    inputs: dict[str, np.ndarray | Member] = {}
    for item in items or ():
        name, sep, path = item.partition("=")
        if not sep:
            data = load_array_file(item, span_of=lambda k: alloc.span if (alloc := program.alloc(k)) else NO_SPAN)
            if not isinstance(data, dict):
                raise TeilInputError(f"--input {item}: a bare path must be an .npz archive; "
                                     f"for an .npy file write NAME={item}")
            for k, v in data.items():
                alloc = program.alloc(k)
                _put(inputs, k, Member(v.path, v.name, v.shape, v.dtype, alloc.span) if alloc else v, item)
            continue
        alloc = program.alloc(name)
        span = alloc.span if alloc is not None else NO_SPAN
        if not name.strip() or not path:  # a path of spaces may name a file; an empty one names none
            raise TeilInputError(f"--input {item}: expected NAME=PATH, e.g. --input A=a.npy "
                                 f"({'the name' if not name.strip() else 'the path'} is empty)", span)
        data = load_array_file(path, span)
        if isinstance(data, dict):
            if name not in data:
                raise TeilInputError(f"--input {item}: {path} has no array named {name!r} (it has "
                                     f"{', '.join(sorted(data)) or 'none'}); an archive's member is the "
                                     f"input of its own name", span, "μ_allocs")
            data = data[name]
        _put(inputs, name, data, item)
    return inputs


def load_members(typed: Any, inputs: dict[str, np.ndarray | Member]) -> dict[str, np.ndarray]:
    """Check every input's header (dtype and shape) against the typed program, and only then
    decompress the archive members: one bad input is reported before any data is read."""
    from .semantics.inputs import check_dtype, check_shape, concrete_extent

    for name, value in inputs.items():
        a = typed.program.alloc(name)
        if a is None:
            continue  # an unknown name is reported by the engine's own checks
        where = f"{value.path}[{value.name}]" if isinstance(value, Member) else ""
        check_dtype(name, value.dtype, a.span, where)
        check_shape(a, value.shape, tuple(concrete_extent(typed, d) for d in a.shape), where)
    return {name: value.load() if isinstance(value, Member) else value for name, value in inputs.items()}


def _put(inputs: dict[str, np.ndarray | Member], name: str, value: np.ndarray | Member, item: str) -> None:
    if name in inputs:
        raise TeilInputError(f"--input {item}: {name!r} is given twice")
    inputs[name] = value


# --------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    from .lang.printer import format_names, format_shape
    from .lang.typing import check_program

    program, _ = read_program(args.file)
    typed = check_program(program, parse_params(args.param, (args.file, program)))
    for name, shape in typed.shapes().items():
        print(f"{name} : {format_shape(shape)}")
    n_side = len(typed.side_conditions())
    free = [p for p in program.params if p not in typed.params]
    scope = f" for all {format_names(free)} allowed by the assumptions" if free else ""
    print(f"ok: {len(program.stmts)} statement(s) well-typed; {n_side} side condition(s) hold{scope}",
          file=sys.stderr)
    return EXIT_OK


def typed_with_inputs(args: argparse.Namespace,
                      complete: bool = False) -> tuple[Any, dict[str, np.ndarray], dict[str, int]]:
    """FILE checked with the parameters of ``--param`` and of the ``--input`` shapes.

    ``complete``: a run needs every input and parameter; what is missing is
    said before the program is checked for the values it has."""
    from .lang.typing import check_program
    from .semantics.inputs import infer_params, run_params

    program, _ = read_program(args.file)
    members = {**_MODEL_INPUTS.get(args.file, {}), **parse_inputs(args.input, program)}
    given = parse_params(args.param, (args.file, program))
    params = (run_params if complete else infer_params)(program, members, given)
    typed = check_program(program, params)
    return typed, load_members(typed, members), params


def cmd_run(args: argparse.Namespace) -> int:
    import numpy as np

    from .semantics.eval import evaluate

    typed, inputs, params = typed_with_inputs(args, complete=True)
    if args.engine == "native":
        from .native.engine import compile as native_compile

        outputs = native_compile(typed, params, args.pad)(**inputs)
    else:
        outputs = evaluate(typed, inputs, params, args.pad)
    if args.output:
        write_outputs(args.output, outputs)
        print(f"wrote {', '.join(outputs) or 'no outputs'} to {args.output}", file=sys.stderr)
    else:
        for name, arr in outputs.items():
            print(f"{name} =")
            print(np.array2string(arr, precision=6, separator=", "))
    return EXIT_OK


def write_outputs(path: str, outputs: dict[str, np.ndarray]) -> None:
    import numpy as np

    try:
        if path.endswith(".npy"):
            if len(outputs) != 1:
                raise TeilInputError(f"--output {path}: the program returns {len(outputs)} arrays; "
                                     f"use an .npz archive")
            np.save(path, next(iter(outputs.values())))
        else:
            with open(path, "wb") as fh:
                np.savez(fh, **outputs)
    except OSError as exc:
        raise TeilInputError(f"--output {path}: cannot write ({exc.strerror})") from None


def cmd_lower(args: argparse.Namespace) -> int:
    from .lang.lowering import lower
    from .lang.printer import format_program
    from .lang.typing import check_program

    program, _ = read_program(args.file)
    check_program(program, parse_params(args.param, (args.file, program)))  # lowering is defined on well-typed programs
    sys.stdout.write(format_program(lower(program)))
    return EXIT_OK


def cmd_fmt(args: argparse.Namespace) -> int:
    from .lang.printer import format_program

    program, source = read_program(args.file)
    text = format_program(program)
    if args.check:
        if text != source:
            print(f"{args.file}: not in canonical form", file=sys.stderr)
            return EXIT_REJECTED
        return EXIT_OK
    sys.stdout.write(text)
    return EXIT_OK


def cmd_prove(args: argparse.Namespace) -> int:
    if _is_library(args):
        return cmd_prove_library(args)
    args.file = args.paths[0]
    program, source = read_program(args.file)
    if args.cache is not None and not args.no_cache:
        from .proving.cache import ProofCache, default_directory, prove_cached, solver_fields

        # --cache '' is the default directory, as for a library run (not the current directory)
        cache = ProofCache(args.cache or str(default_directory()), audit=args.cache_audit)
        params = parse_params(args.param, (args.file, program))
        # the key a library run gives this file too (the text: a model's is its printed program)
        key = cache.source_key(source, params or {}, args.pad, solver_fields(args.solver, args.timeout))
        report = prove_cached(program, params, args.pad, cache=cache, timeout=args.timeout,
                              solver=args.solver, smt2_dir=args.smt2_dir, source=source, kernel_key=key)
        for d in cache.stats.disagreements:
            print(f"cache: {d} (the entry was evicted; the solver's verdict stands)", file=sys.stderr)
        from .library import unusable_cache

        unusable = unusable_cache(str(cache.root))
        if unusable:
            print(f"note: {unusable}", file=sys.stderr)
    else:
        from .proving.prove import prove

        report = prove(program, parse_params(args.param, (args.file, program)), args.pad, timeout=args.timeout,
                       solver=args.solver, smt2_dir=args.smt2_dir, source=source)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.render())
    return report.exit_code


def _is_library(args: argparse.Namespace) -> bool:
    """Several PATHs, a directory, a glob or a library flag; one FILE proves exactly as it always did."""
    if len(args.paths) != 1 or args.jobs is not None or args.junit or args.scheduler:
        return True
    path = args.paths[0]
    return os.path.isdir(path) or (any(c in path for c in "*?[") and not os.path.exists(path))


def cmd_prove_library(args: argparse.Namespace) -> int:
    """``core-teil prove PATH...`` (issue 17): the kernels in parallel, a line each, then the summary."""
    from . import library as batch
    from .proving.cache import default_directory

    if args.smt2_dir:
        raise TeilInputError("--smt2-dir: prove one FILE at a time to write its scripts")
    cache = None if args.no_cache else (args.cache or str(default_directory()))
    summary = batch.run(args.paths, jobs=args.jobs, params=parse_params(args.param), pad=args.pad,
                        timeout=args.timeout, solver=args.solver, cache=cache, audit=args.cache_audit,
                        scheduler=args.scheduler)
    if args.junit:
        batch.write_junit(args.junit, summary)
    print(batch.dumps(summary) if args.json else summary.render())
    return summary.exit_code


def cmd_derive(args: argparse.Namespace) -> int:
    """The derivations on stdout; for an ill-typed program each failing statement's tree up to the
    rule that fails (its premise marked), then the type error on stderr and exit 1."""
    from .teach.partial import derive_program
    from .teach.teaching import derive

    program, _ = read_program(args.file)
    derivations = derive_program(program, parse_params(args.param, (args.file, program)))
    if derivations.typed is not None:  # no tree at all when OK-Prog fails before the statements
        print(derive(derivations, latex=args.latex))
    if derivations.error is not None:
        raise derivations.error
    return EXIT_OK


def cmd_trace(args: argparse.Namespace) -> int:
    from .teach.teaching import trace

    typed, inputs, _ = typed_with_inputs(args)
    print(trace(typed, args.at, inputs if args.values or inputs else None, pad=args.pad))
    return EXIT_OK


def cmd_equiv(args: argparse.Namespace) -> int:
    """``core-teil equiv A B [--param ...] [--pad M] [--json]`` (issue 13): the report, and its exit code."""
    import json

    from .proving.equiv import equiv

    p, _ = read_program(args.a)
    q, _ = read_program(args.b)
    report = equiv(p, q, parse_params(args.param, (args.a, p), (args.b, q)), args.pad)
    print(json.dumps(report.to_json(), indent=2) if args.json else report.render())
    return report.exit_code


def cmd_emit_c(args: argparse.Namespace) -> int:
    """``core-teil emit-c FILE -o OUT.c`` (issue 15): OUT.c and its header OUT.h, licensed by the certificate."""
    from .native.emit_c import emit_c

    out = args.output
    stem = out[:-2] if out.endswith(".c") else out
    header = stem + ".h"
    base = os.path.basename(header)
    if not out.endswith(".c") or not re.fullmatch(r"[A-Za-z0-9_.+-]+\.h", base):
        raise TeilInputError(f"-o {out}: expected a C file name such as kernel.c (letters, digits, '_', '.', "
                             f"'+', '-'); its header is written beside it")
    program, _ = read_program(args.file)
    src = emit_c(program, parse_params(args.param, (args.file, program)), args.pad, name=args.name, header=base)
    for path, text in ((out, src.c), (header, src.h)):
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise TeilInputError(f"-o {out}: cannot write {path} ({exc.strerror})") from None
    n = len(src.certificate.obligations)  # emit_c returns only when every one is proved
    print(f"wrote {out} and {header}: {src.name}; {n}/{n} obligations proved, {src.checked} array accesses "
          f"checked in bounds", file=sys.stderr)
    return EXIT_OK


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; ``only="prove"`` builds the top level and that command alone (what
    :func:`main` does for ``core-teil prove ...``: the other commands' defaults and help import
    the native engine, numpy and the teaching modules, a third of a warm library run)."""
    ap = argparse.ArgumentParser(prog="core-teil", description="Core-TeIL: check, prove, run and teach "
                                 "tensor kernels (Rink & Castrillon, ARRAY'19).")
    ap.add_argument("--version", action="version", version=f"core-teil {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, fn: Any, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.add_argument("file", metavar="FILE", help="a .teil program or an .onnx model")
        p.set_defaults(func=fn)
        return p

    def params(p: argparse.ArgumentParser) -> None:
        p.add_argument("--param", action="append", metavar="NAME=N",
                       help="fix a shape parameter (an integer >= 1); repeat it, or give several at once "
                            "as --param l=2,m=3,n=4")

    if only != "prove":
        p = command("check", cmd_check, "parse and type-check; print each allocation's shape")
        params(p)
    p = sub.add_parser("prove", help="generate and discharge every proof obligation",
                       description="generate and discharge every proof obligation; with several PATHs, "
                       "directories or globs, prove a kernel library in parallel through the proof cache")
    p.add_argument("paths", metavar="PATH", nargs="+",
                   help="a .teil program or an .onnx model; or several, directories (searched for *.teil and "
                   "*.onnx) and glob patterns")
    p.set_defaults(func=cmd_prove)
    params(p)
    p.add_argument("--pad", type=pad_arg, metavar="M", help="also prove padding to multiples of M")
    p.add_argument("--json", action="store_true", help="print the certificate as JSON")
    p.add_argument("--smt2-dir", type=path_arg, metavar="DIR", help="write each obligation as an SMT-LIB2 script")
    p.add_argument("--timeout", type=float, metavar="S", help="give up on an obligation after S seconds")
    p.add_argument("--solver", choices=("z3", "cvc5"), default="z3", help="the SMT solver (default z3)")
    p.add_argument("--jobs", type=int, metavar="N", help="prove N kernels at once (default: this machine's cores)")
    p.add_argument("--junit", type=path_arg, metavar="FILE", help="also write the verdicts as JUnit XML")
    p.add_argument("--scheduler", metavar="ADDRESS", help="prove on the Dask cluster of this scheduler")
    p.add_argument("--cache", metavar="DIR", help="the proof cache directory (default: the user's cache "
                   "directory for a library; a single FILE uses no cache unless given one)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the proof cache")
    p.add_argument("--cache-audit", action="store_true",
                   help="re-decide every cache entry that would be served; report those the solver contradicts")
    if only == "prove":
        return ap
    p = command("run", cmd_run, "evaluate; write the output allocations")
    params(p)
    p.add_argument("--input", action="append", metavar="NAME=PATH", help="an input array (.npy/.npz)")
    p.add_argument("--engine", choices=("reference", "native"), default=default_engine())
    p.add_argument("--pad", type=pad_arg, metavar="M", help="run with a store padded to multiples of M")
    p.add_argument("--output", type=path_arg, metavar="OUT.npz", help="where to write the outputs (else printed)")
    p = command("lower", cmd_lower, "print the Core-TeIL form of a full-TeIL program")
    params(p)
    p = command("fmt", cmd_fmt, "print the canonical form")
    p.add_argument("--check", action="store_true", help="exit 1 unless FILE is already canonical")
    p = command("derive", cmd_derive, "the typing derivation of every statement; for an ill-typed program, "
                                      "the tree up to the rule that fails, its failing premise marked")
    params(p)
    p.add_argument("--latex", action="store_true", help="emit a LaTeX document of bussproofs proof trees")
    p = command("trace", cmd_trace, "the unfolding of [[e]] at one multi-index (paper Fig. 7)")
    p.add_argument("at", metavar="X[i,...]",
                   help="the allocation and 1-based multi-index: numbers need every parameter its "
                        "extents use (--param l=2,m=3,n=4, e.g. 'C[1,2]'), names are symbolic indices "
                        "('C[i,j]') and need none")
    params(p)
    p.add_argument("--input", action="append", metavar="NAME=PATH", help="an input array (.npy/.npz)")
    p.add_argument("--values", action="store_true", help="also evaluate with the given inputs")
    p.add_argument("--pad", type=pad_arg, metavar="M", help="trace the padded semantics (multiples of M)")
    p = command("emit-c", cmd_emit_c, "a standalone C99 kernel and header, licensed by the program's certificate")
    params(p)
    p.add_argument("--pad", type=pad_arg, metavar="M", help="lay every array out padded to multiples of M")
    p.add_argument("-o", "--output", required=True, type=path_arg, metavar="OUT.c",
                   help="the C file (its header: OUT.h)")
    p.add_argument("--name", metavar="NAME", help="the C function's name (default teil_<file stem>)")
    p = sub.add_parser("equiv", help="prove two programs' outputs equal, or show where they differ",
                       description="prove two programs' outputs equal for every shape and input (real "
                                   "arithmetic with • and controlled division), or a replayed counterexample")
    p.add_argument("a", metavar="A", help="a .teil program (or .onnx model)")
    p.add_argument("b", metavar="B", help="a program with the same inputs and outputs")
    params(p)
    p.add_argument("--pad", type=pad_arg, metavar="M", help="compare the runs padded to multiples of M")
    p.add_argument("--json", action="store_true", help="print the certificate as JSON")
    p.set_defaults(func=cmd_equiv)
    p = sub.add_parser("from-einsum", help="print the TeIL program of an einsum (issue 12)",
                       description="print the TeIL program of an einsum; SHAPE is like m,k or 3,4, '-' a scalar")
    p.add_argument("subscripts", metavar="SUBSCRIPTS", help="numpy einsum subscripts, e.g. 'ij,jk->ik'")
    p.add_argument("shapes", metavar="SHAPE", nargs="*", help="one shape per operand")
    p.add_argument("--names", metavar="A,B,C", help="the operands' (and the output's) allocation names")
    p.set_defaults(func=cmd_from_einsum)
    p = sub.add_parser("from-onnx", help="print the TeIL program of an ONNX graph (issue 12)",
                       description="print the TeIL program of an ONNX graph (needs core-teil[onnx])")
    p.add_argument("model", metavar="MODEL.onnx", help="an ONNX model")
    p.set_defaults(func=cmd_from_onnx)

    add_teaching_commands(sub)
    return ap


def cmd_quickcheck(args: argparse.Namespace) -> int:
    """``core-teil quickcheck LHS [RHS]``: random testing of a claim (issue 16); 0 passed, 1 falsified."""
    from .teach.quickcheck import quickcheck

    result = quickcheck(*args.sides, claim=args.claim, dialect=args.lang, pad=args.pad,
                        unguarded_expa=args.unguarded_expa, values=args.values, budget=args.budget,
                        seed=args.seed, max_extent=args.max_extent)
    print(result.render())
    return result.exit_code


def cmd_exercise(args: argparse.Namespace) -> int:
    """``core-teil exercise ID ANSWER``: check a course exercise; 0 right, 1 wrong, 2 bad input."""
    from .teach.exercises import check_answer, listing

    if args.id == "list":
        print(listing())
        return EXIT_OK
    verdict = check_answer(args.id, args.answer)
    print(verdict.render())
    return verdict.exit_code


def add_teaching_commands(sub: Any) -> None:
    """``exercise`` and ``quickcheck`` (issue 16: the course as a lab)."""
    from .teach.quickcheck import BUDGET, EXTENT_LIMIT, MAX_BUDGET, MAX_EXTENT

    p = sub.add_parser("exercise", help="check your answer to a course exercise (docs/course/)",
                       description="check an answer to exercise ID of docs/course/ (e.g. 2.1): a .teil file, "
                                   "or the answer itself (a shape, an index, a value, a rule name, ...); "
                                   "`core-teil exercise list` lists the exercises and what each one expects")
    p.add_argument("id", metavar="ID", help="chapter.number, e.g. 2.1; or 'list'")
    p.add_argument("answer", metavar="ANSWER", nargs="?", default=None,
                   help="a file holding the answer, or the answer text (quote it)")
    p.set_defaults(func=cmd_exercise)
    p = sub.add_parser("quickcheck", help="random testing of a claim over expressions with holes",
                       description="test a claim on random well-typed instances and inputs and shrink a "
                                   "failure to a small counterexample (as redex-check). LHS RHS: an equation, "
                                   "e.g. 'red (expa n X)' 'smul n X' (allocation names are holes, extent names "
                                   "parameters; smul d e is d * e); one expression with --pad M: the padding "
                                   "theorem for it")
    p.add_argument("sides", metavar="EXPR", nargs="+", help="one or two expressions (quote each)")
    p.add_argument("--claim", choices=("equal", "simulation", "zeros", "typing"),
                   help="equal (two expressions, the default), typing (lhs => rhs keeps the type), simulation "
                        "(one expression: report Theorem 3 as made true, the default with --pad), zeros "
                        "(its verbatim form: 0 in the padding)")
    p.add_argument("--lang", choices=("core", "full"), help="the dialect (default: core if both parse as core)")
    p.add_argument("--pad", type=pad_arg, metavar="M",
                   help=f"evaluate padded to multiples of M (at most {EXTENT_LIMIT})")
    p.add_argument("--unguarded-expa", action="store_true",
                   help="the report's padded expa (no guard), which chapter 5 shows breaks Theorem 3")
    p.add_argument("--values", choices=("real", "float"), default="real",
                   help="inputs: small integers and • (real, the default) or also ±inf (float)")
    p.add_argument("--budget", type=int, default=BUDGET, metavar="N",
                   help=f"test cases (default {BUDGET}, at most {MAX_BUDGET:,})")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--max-extent", type=int, default=MAX_EXTENT, metavar="E",
                   help=f"largest extent drawn (default {MAX_EXTENT}, at most {EXTENT_LIMIT})")
    p.set_defaults(func=cmd_quickcheck)


def cmd_from_einsum(args: argparse.Namespace) -> int:
    """``core-teil from-einsum 'ij,jk->ik' m,k k,n`` (issue 12): the program, as ``fmt`` prints it."""
    from .frontends.einsum import from_einsum, parse_shape_arg
    from .lang.printer import format_program

    names = args.names.split(",") if args.names else None
    program = from_einsum(args.subscripts, *(parse_shape_arg(s) for s in args.shapes), names=names)
    sys.stdout.write(format_program(program))
    return EXIT_OK


def cmd_from_onnx(args: argparse.Namespace) -> int:
    """``core-teil from-onnx model.onnx`` (issue 12): the program, as ``fmt`` prints it."""
    from .frontends.onnx import translate

    model = translate(args.model)
    _SOURCES[args.model] = model.source
    sys.stdout.write(model.source)
    return EXIT_OK


def check_flags(args: argparse.Namespace) -> None:
    """The values of ``--pad`` and ``--timeout``, by the checks the API makes, in the CLI's words
    (imported only for a value to check: the checks' modules bring numpy and the prover)."""
    if getattr(args, "pad", None) is not None:
        from .semantics.inputs import check_pad

        check_pad(args.pad, cli=True)
    if getattr(args, "timeout", None) is not None:
        from .proving.prove import check_timeout

        check_timeout(args.timeout, cli=True)


def default_engine() -> str:
    """The native engine once it is built; the reference engine otherwise."""
    try:
        from .native import engine as native  # noqa: F401
    except ImportError:
        return "reference"
    return "native"


def named_files(args: argparse.Namespace) -> str:
    """The files the command line names (FILE, A and B, the PATHs of ``prove``, MODEL), for a
    message that has no span of its own; "" when it names none (``from-einsum``)."""
    names = [getattr(args, key, None) for key in ("file", "a", "b", "model")]
    names += list(getattr(args, "paths", None) or ())
    return ", ".join(dict.fromkeys(n for n in names if isinstance(n, str) and n))


def main(argv: Sequence[str] | None = None) -> int:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))
    argv = sys.argv[1:] if argv is None else list(argv)
    # `prove` is the command run over whole libraries, where start-up is most of a warm run
    args = build_parser("prove" if argv[:1] == ["prove"] else None).parse_args(argv)
    try:
        check_flags(args)
        return int(args.func(args))
    except TeilError as err:
        err.with_source(_SOURCES.get(err.span.file))
        print(err.render(), file=sys.stderr)
        return err.exit_code
    except RecursionError:
        print("core-teil: the program is nested too deeply for this implementation", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        named = named_files(args)
        print(f"core-teil: {named + ': ' if named else ''}out of memory; try smaller shapes", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # the last line of defence: never a traceback for the user
        if os.environ.get("CORE_TEIL_DEBUG"):
            raise
        print(f"core-teil: internal error: {type(exc).__name__}: {exc}\n"
              f"(this is a bug in core-teil; rerun with CORE_TEIL_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
