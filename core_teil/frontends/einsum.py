"""The einsum frontend (issue 12, item 2): an einsum string as a TeIL program.

``from_einsum("ij,jk->ik", ("m", "k"), ("k", "n"))`` is the paper's matrix
multiplication (000, Fig. 7) ``C = red 2 (diag 2 3 (prod A B))``: every einsum
lowers to full-TeIL operators (paper 000, Fig. 5 and Fig. 8) in one fixed order,

1. ``diag i j`` per repeated label *within* an operand (``"ii->i"``; T-Diag),
   and ``proj i 1`` per ``...`` dimension of extent 1 that broadcasts (T-Proj);
2. ``prod`` of the operands, left to right (T-Prod);
3. ``diag i j`` per label shared by two operands, keeping the first (T-Diag);
4. ``red i`` per label absent from the output, leftmost first (T-Red);
5. ``transp i j`` into the output's order (T-Transp),

so that ``ct.check``, ``ct.prove``, ``ct.evaluate`` and ``ct.compile`` apply to
it unchanged.  Core-TeIL (paper 000, section 4.1) has ``red`` of the first
dimension and ``transp`` of two adjacent ones only, so the lowering of ``red i``
moves dimension ``i`` to the front past the ones before it, and ``transp i j``
becomes ``2|i - j| - 1`` adjacent swaps: step 4 reduces leftmost first (each
label then passes only labels that stay), and step 5 swaps each output label
into place (selection sort) unless adjacent swaps (insertion sort, as many as
the permutation has inversions) make the lowered program shallower.  A program
nested deeper than :data:`~core_teil.lang.parser.MAX_DEPTH`, as written or
lowered, is refused with a :class:`~core_teil.errors.TeilInputError`: the
passes after the parser recurse over expressions (a rank-28 rotation was a
``RecursionError``).  Extents that einsum identifies (one label, two occurrences) must
be equal for *every* parameter value: ``"ij,jk"`` on ``(m, k)``, ``(q, n)`` is
rejected with the counterexample ``k = 1, q = 2`` (the extents ONNX's shape
inference and PyTorch issue 58380 leave unchecked), as the type checker would
reject ``diag`` (T-Diag), but naming the operand, label and both extents, at the
label's column of the subscripts.

Decisions (docs for issue 12): a labelled dimension never broadcasts (numpy
broadcasts a labelled extent 1; TeIL identifies extents, so that is a type
error here); ``...`` dimensions broadcast as in numpy, a literal extent 1
against any other extent; two different parameters under ``...`` are a type
error (they might broadcast at run time only if one of them is 1).

The subscripts grammar is numpy's; :mod:`opt_einsum.parser` (imported lazily)
expands ``...`` and the implicit output, and this module checks everything
before it, so that every mistake is a :class:`~core_teil.errors.TeilError`
pointing at its column of the subscripts string.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import Span, TeilError, TeilInputError, TeilTypeError
from ..lang.syntax import (
    Alloc,
    DiagAt,
    Dim,
    Expr,
    Param,
    Prod,
    Program,
    ProjAt,
    RedAt,
    Shape,
    Stmt,
    TranspAt,
    Var,
)

__all__ = ["EinsumSpec", "einsum", "from_einsum", "parse_shape_arg", "parse_subscripts"]

#: The pseudo-file of einsum errors: ``<einsum>:1:COL`` is a column of the subscripts.
EINSUM_FILE = "<einsum>"

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Label:
    """One dimension of one operand: its label and where the subscripts wrote it (0-based)."""

    label: str
    column: int
    from_ellipsis: bool = False


@dataclass(frozen=True)
class EinsumSpec:
    """A parsed einsum: each operand's labels (``...`` expanded), the output's labels."""

    subscripts: str
    operands: tuple[tuple[Label, ...], ...]
    output: tuple[str, ...]
    output_columns: tuple[int, ...]


def _span(subscripts: str, column: int, width: int = 1) -> Span:
    return Span(EINSUM_FILE, 1, column + 1, 1, column + 1 + width)


def _error(cls: type[TeilError], message: str, subscripts: str, column: int, width: int = 1,
           rule: str | None = "einsum", **kw: Any) -> TeilError:
    span = _span(subscripts, column, width) if column >= 0 else Span(EINSUM_FILE)
    return cls(message, span, rule, subscripts.replace("\n", " "), **kw)


def _opt_einsum_parser() -> Any:
    try:
        from opt_einsum import parser
    except ImportError:  # pragma: no cover - opt_einsum is in the locked environment
        raise TeilInputError("the einsum frontend needs opt_einsum (pip install 'core-teil[bench]' "
                             "or pip install opt_einsum)") from None
    return parser


def _scan(term: str, start: int, subscripts: str, what: str = "an operand") -> list[tuple[str, int]]:
    """``term``'s labels and ``...`` (as ``"..."``) with their columns in ``subscripts``;
    ``what`` (an operand, the output) is named in the errors."""
    out: list[tuple[str, int]] = []
    k = 0
    while k < len(term):
        if term.startswith("...", k):
            if any(t == "..." for t, _ in out):
                raise _error(TeilInputError, f"{what} may contain '...' at most once", subscripts,
                             start + k, 3)
            out.append(("...", start + k))
            k += 3
            continue
        ch = term[k]
        if ch == " ":
            k += 1
            continue
        if not (ch.isascii() and ch.isalpha()):
            what = "'.' that is not part of '...'" if ch == "." else repr(ch)
            raise _error(TeilInputError, f"{what} is not an einsum label (labels are the letters "
                         f"a-z and A-Z)", subscripts, start + k)
        out.append((ch, start + k))
        k += 1
    return out


def parse_subscripts(subscripts: str, shapes: Sequence[Shape]) -> EinsumSpec:
    """numpy's einsum grammar, checked against the operands' ranks.

    ``...`` stands for the dimensions of an operand that its letters leave over,
    right-aligned across operands (numpy broadcasting); without ``->`` the output
    is ``...`` then the labels that occur once, in alphabetical order."""
    if not isinstance(subscripts, str):
        raise TeilInputError(f"the subscripts must be a string, not {type(subscripts).__name__}")
    head, arrow, tail = subscripts.partition("->")
    if "->" in tail:
        raise _error(TeilInputError, "'->' may occur only once", subscripts, len(head) + 2 + tail.index("->"), 2)
    if "-" in head or ">" in head:
        bad = min(i for i in (head.find("-"), head.find(">")) if i >= 0)
        raise _error(TeilInputError, "a lone '-' or '>'; the output is introduced by '->'", subscripts, bad)
    terms, starts, pos = [], [], 0
    for term in head.split(","):
        terms.append(term)
        starts.append(pos)
        pos += len(term) + 1
    if len(terms) != len(shapes):
        raise _error(TeilInputError, f"the subscripts name {len(terms)} operand(s) but {len(shapes)} "
                     f"shape(s)/array(s) are given", subscripts, -1)
    scanned = [_scan(t, s, subscripts) for t, s in zip(terms, starts, strict=True)]
    ell_rank = 0
    for n, (items, shape) in enumerate(zip(scanned, shapes, strict=True), start=1):
        letters = sum(1 for t, _ in items if t != "...")
        has_ell = any(t == "..." for t, _ in items)
        if len(shape) < letters or (not has_ell and len(shape) != letters):
            col = items[0][1] if items else starts[n - 1]
            raise _error(TeilInputError, f"operand {n} has rank {len(shape)} but its subscripts "
                         f"{terms[n - 1].strip()!r} name {letters} dimension(s)"
                         + ("" if has_ell else " (write '...' for the others)" if len(shape) > letters else ""),
                         subscripts, col, max(1, len(terms[n - 1])))
        if has_ell:
            ell_rank = max(ell_rank, len(shape) - letters)
    out_items = _scan(tail, len(head) + 2, subscripts, "the output") if arrow else None
    written = {t for items in scanned for t, _ in items if t != "..."}
    seen: dict[str, int] = {}
    for t, col in out_items or ():
        if t == "...":
            continue
        if t in seen:
            raise _error(TeilInputError, f"output label {t!r} occurs twice", subscripts, col)
        if t not in written:
            raise _error(TeilInputError, f"output label {t!r} names no dimension of any operand",
                         subscripts, col)
        seen[t] = col
    if out_items is not None and ell_rank and not any(t == "..." for t, _ in out_items):
        raise _error(TeilInputError, "the operands' '...' stand for dimensions that the output "
                     "drops; numpy refuses this too: write '...' in the output", subscripts,
                     len(head), 2)
    # Cross-check and expand with opt_einsum's parser (numpy's grammar).
    parser = _opt_einsum_parser()
    dummy = [tuple(1 for _ in s) for s in shapes]
    try:
        ins, outs, _ = parser.parse_einsum_input([subscripts.replace(" ", ""), *dummy], shapes=True)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise _error(TeilInputError, f"not a valid einsum: {exc}", subscripts, -1) from None
    in_terms = ins.split(",")
    operands: list[tuple[Label, ...]] = []
    for items, expanded in zip(scanned, in_terms, strict=True):
        labels: list[Label] = []
        k = 0
        for t, col in items:
            if t == "...":
                n_ell = len(expanded) - (len(items) - 1)
                labels += [Label(c, col, True) for c in expanded[k:k + n_ell]]
                k += n_ell
            else:
                labels.append(Label(expanded[k], col))
                k += 1
        operands.append(tuple(labels))
    ell_col = next((col for t, col in out_items or () if t == "..."), -1)
    columns = tuple(seen.get(c, ell_col) for c in outs)
    return EinsumSpec(subscripts, tuple(operands), tuple(outs), columns)


# --------------------------------------------------------------------------
# Extents: every label has one, equal for all parameter values (T-Diag)
# --------------------------------------------------------------------------


def _fails(a: Dim, b: Dim, params: tuple[str, ...]) -> dict[str, int] | None:
    """``None`` when ``a == b`` for all parameters >= 1, else Z3's counterexample (shapes.py)."""
    if a == b:
        return None
    from ..lang.shapes import ShapeSolver, Verdict

    mentioned = tuple(p for p in params if p in (a, b))
    stub = Program("full", (Param(mentioned),) if mentioned else (), ())
    d = ShapeSolver(stub).decide(a, "==", b)
    if d.verdict is Verdict.HOLDS:
        return None
    return d.counterexample or {}


def _extents(spec: EinsumSpec, shapes: Sequence[Shape], names: Sequence[str],
             params: tuple[str, ...]) -> dict[str, Dim]:
    """The extent of every label; a mismatch is a type error naming operand, label and extents."""
    first: dict[str, tuple[int, Label, Dim]] = {}
    for n, (labels, shape) in enumerate(zip(spec.operands, shapes, strict=True), start=1):
        for lab, d in zip(labels, shape, strict=True):
            if lab.from_ellipsis and d == 1:
                continue  # broadcasts (numpy); decided below if every operand has 1
            prev = first.get(lab.label)
            if prev is None:
                first[lab.label] = (n, lab, d)
                continue
            m, plab, pd = prev
            cex = _fails(pd, d, params)
            if cex is None:
                continue
            what = ("a dimension under '...'" if lab.from_ellipsis else f"label {lab.label!r}")
            where = "also in operand" if m != n else "earlier in operand"
            msg = (f"operand {n} ({names[n - 1]}): {what} has extent {d}, but {where} {m} "
                   f"({names[m - 1]}, column {plab.column + 1}) it has extent {pd}")
            if isinstance(d, int) and isinstance(pd, int):
                msg += f" ({pd} != {d})"
            else:
                msg += (f"; {pd} == {d} does not hold for all parameter values; counterexample: "
                        + ", ".join(f"{k} = {v}" for k, v in sorted(cex.items())))
            if lab.from_ellipsis:
                msg += " (under '...' only a literal extent 1 broadcasts)"
            raise _error(TeilTypeError, msg, spec.subscripts, lab.column, 3 if lab.from_ellipsis else 1,
                         rule="T-Diag", counterexample=cex or None)
    out = {k: v[2] for k, v in first.items()}
    for labels in spec.operands:
        for lab in labels:
            out.setdefault(lab.label, 1)
    return out


# --------------------------------------------------------------------------
# The program
# --------------------------------------------------------------------------


def _check_shape(shape: Any, n: int) -> Shape:
    if not isinstance(shape, (tuple, list)):
        raise TeilInputError(f"shape {n} must be a tuple of extents (ints >= 1 or parameter names), "
                             f"not {type(shape).__name__}")
    out: list[Dim] = []
    for d in shape:
        if isinstance(d, (bool, np.bool_)):
            raise TeilInputError(f"shape {n}: extent {d!r} is not an integer or a parameter name")
        if isinstance(d, (int, np.integer)):
            if int(d) < 1:
                raise TeilInputError(f"shape {n}: extent {int(d)} is not >= 1 (Core-TeIL extents are "
                                     f"positive, SPEC.md section 1)")
            out.append(int(d))
        elif isinstance(d, str) and _IDENT.fullmatch(d):
            from ..lang.parser import KEYWORDS

            if d in KEYWORDS:
                raise TeilInputError(f"shape {n}: {d!r} is a keyword and cannot name a parameter")
            out.append(d)
        else:
            raise TeilInputError(f"shape {n}: extent {d!r} is not an integer >= 1 or a parameter name")
    return tuple(out)


def _default_names(count: int, taken: set[str]) -> list[str]:
    """``A, B, C, ...`` (then ``T1, T2, ...``), avoiding the parameters' names."""
    pool = [chr(c) for c in range(ord("A"), ord("Z") + 1)] + [f"T{i}" for i in range(1, count + 30)]
    return [n for n in pool if n not in taken][:count]


def _check_names(names: Sequence[str], count: int, params: tuple[str, ...]) -> list[str]:
    from ..lang.parser import KEYWORDS

    names = list(names)
    if len(names) not in (count, count + 1):
        raise TeilInputError(f"names: expected {count} operand names (and optionally the output's), "
                             f"got {len(names)}")
    for x in names:
        if not isinstance(x, str) or not _IDENT.fullmatch(x) or x in KEYWORDS:
            raise TeilInputError(f"names: {x!r} is not an identifier that can name an allocation")
    if len(set(names)) != len(names):
        raise TeilInputError(f"names: {names} repeats a name")
    clash = set(names) & set(params)
    if clash:
        raise TeilInputError(f"names: {sorted(clash)} also name shape parameters")
    if len(names) == count:
        names += _default_names(1, set(names) | set(params))
    return names


def from_einsum(subscripts: str, *shapes: Any, names: Sequence[str] | None = None) -> Program:
    """``ct.from_einsum("ij,jk->ik", ("m", "k"), ("k", "n"))``: the einsum as a full-TeIL program.

    Each shape is a tuple of ints >= 1 and/or parameter names; ``names`` are the
    operands' allocation names, optionally followed by the output's (default
    ``A, B, ...`` and the next letter).  Raises :class:`TeilInputError` for a
    malformed einsum and :class:`TeilTypeError` when two extents that a label
    identifies can differ (with operand, label, both extents and, for symbolic
    extents, a counterexample)."""
    checked = [_check_shape(s, n) for n, s in enumerate(shapes, start=1)]
    params = tuple(dict.fromkeys(d for s in checked for d in s if isinstance(d, str)))
    all_names = (_check_names(names, len(checked), params) if names is not None
                 else _default_names(len(checked) + 1, set(params)))
    spec = parse_subscripts(subscripts, checked)
    extent = _extents(spec, checked, all_names, params)
    expr, labels = _lower(spec, checked, all_names, extent)
    _check_depth(expr, subscripts)
    out_shape = tuple(extent[c] for c in spec.output)
    stmt_span = Span(EINSUM_FILE, 1, 1, 1, len(subscripts) + 1)
    decls: list[Any] = [Param(params)] if params else []
    decls += [Alloc(n, s, "input") for n, s in zip(all_names, checked, strict=False)]
    decls.append(Alloc(all_names[-1], out_shape, "output"))
    program = Program("full", tuple(decls), (Stmt(all_names[-1], expr, span=stmt_span),), file=EINSUM_FILE)
    assert labels == list(spec.output), (labels, spec.output)
    return program


def _lower(spec: EinsumSpec, shapes: Sequence[Shape], names: Sequence[str],
           extent: dict[str, Dim]) -> tuple[Expr, list[str]]:
    """Steps 1-5 of the module docstring; returns the expression and its labels."""
    parts: list[tuple[Expr, list[str]]] = []
    for labels, shape, name in zip(spec.operands, shapes, names, strict=False):
        e: Expr = Var(name)
        cur = [lab.label for lab in labels]
        # 1a. a '...' dimension of extent 1 against a longer one: the slice 1 (numpy broadcasting)
        for pos in range(len(cur) - 1, -1, -1):
            if labels[pos].from_ellipsis and shape[pos] == 1 and extent[cur[pos]] != 1:
                e = ProjAt(pos + 1, 1, e)
                del cur[pos]
        # 1b. a label repeated within the operand: its diagonal
        e, cur = _merge(e, cur)
        parts.append((e, cur))
    expr, cur = parts[0]
    for e, more in parts[1:]:
        expr, cur = Prod(expr, e), cur + more  # 2.
    expr, cur = _merge(expr, cur)  # 3.
    pos = 0
    while pos < len(cur):  # 4. leftmost first: red i lowers past the i - 1 labels before it
        if cur[pos] not in spec.output:
            expr = RedAt(pos + 1, expr)
            del cur[pos]
        else:
            pos += 1
    swaps = min(_selection_swaps(cur, spec.output), _adjacent_swaps(cur, spec.output), key=_lowered_cost)  # 5.
    for i, j in swaps:
        expr = TranspAt(i, j, expr)
        cur[i - 1], cur[j - 1] = cur[j - 1], cur[i - 1]
    return expr, cur


def _selection_swaps(cur: list[str], output: Sequence[str]) -> list[tuple[int, int]]:
    """``transp i j`` (1-based) putting each output label in place by one swap: at most
    ``len(cur) - 1`` operators, but each lowers to ``2|i - j| - 1`` adjacent swaps."""
    cur, out = list(cur), []
    for target, lab in enumerate(output):
        pos = cur.index(lab)
        if pos != target:
            out.append((target + 1, pos + 1))
            cur[target], cur[pos] = cur[pos], cur[target]
    return out


def _adjacent_swaps(cur: list[str], output: Sequence[str]) -> list[tuple[int, int]]:
    """``transp i (i + 1)`` moving each output label down into place (insertion sort): one
    adjacent swap per inversion of the permutation, the fewest Core-TeIL can do."""
    cur, out = list(cur), []
    for target, lab in enumerate(output):
        for pos in range(cur.index(lab), target, -1):
            out.append((pos, pos + 1))
            cur[pos - 1], cur[pos] = cur[pos], cur[pos - 1]
    return out


def _lowered_cost(swaps: list[tuple[int, int]]) -> int:
    """Adjacent swaps after lowering: the depth the swaps add to the Core-TeIL program.  On a
    tie ``min`` keeps the selection swaps, the fewer operators."""
    return sum(2 * abs(i - j) - 1 for i, j in swaps)


def _check_depth(expr: Expr, subscripts: str) -> None:
    """The program as written and lowered to Core-TeIL (which ``ct.prove`` type-checks)
    is nested at most :data:`~core_teil.lang.parser.MAX_DEPTH` deep, the parser's bound for
    the passes that recurse over expressions."""
    from ..lang.lowering import lower_expr
    from ..lang.parser import MAX_DEPTH
    from ..lang.syntax import depth

    written = depth(expr)
    lowered = depth(lower_expr(expr)) if written <= MAX_DEPTH else written  # lower_expr recurses
    if lowered > MAX_DEPTH:
        raise _error(TeilInputError, f"the einsum's program is nested {lowered} levels deep"
                     + (" in Core-TeIL, where every transp, diag and red moves one dimension at a time"
                        if written <= MAX_DEPTH else "")
                     + f"; this implementation handles up to {MAX_DEPTH} (lang.parser.MAX_DEPTH): fewer "
                     f"labels, or fewer of them out of order, would do", subscripts, 0, max(1, len(subscripts)))


def _merge(e: Expr, cur: list[str]) -> tuple[Expr, list[str]]:
    """``diag i j`` for every later occurrence ``j`` of a label first at ``i`` (T-Diag)."""
    cur = list(cur)
    for pos in range(len(cur) - 1, -1, -1):
        first = cur.index(cur[pos])
        if first < pos:
            e = DiagAt(first + 1, pos + 1, e)
            del cur[pos]
    return e, cur


def parse_shape_arg(text: str) -> tuple[Dim, ...]:
    """A CLI shape: ``m,k`` or ``3,4``; ``-`` (or empty) is a scalar."""
    if text.strip() in ("-", ""):
        return ()
    out: list[Dim] = []
    for part in text.split(","):
        part = part.strip()
        if re.fullmatch(r"[0-9]+", part):
            out.append(int(part))
        elif _IDENT.fullmatch(part):
            out.append(part)
        else:
            raise TeilInputError(f"shape {text!r}: {part!r} is neither an extent (digits 0-9) nor a "
                                 f"parameter name; write '-' for a scalar")
    return tuple(out)


# --------------------------------------------------------------------------
# ct.einsum: numpy.einsum on a certified kernel
# --------------------------------------------------------------------------

_KERNELS: dict[tuple, Any] = {}
_KERNEL_CACHE_SIZE = 128
_LOCK = threading.Lock()


#: numpy.einsum's ``optimize`` values (numpy.einsum_path): accepted, and not used.
_OPTIMIZE = (False, True, None, "greedy", "optimal")


def _check_optimize(optimize: Any) -> None:
    """``optimize=`` as numpy.einsum takes it: False, True, 'greedy', 'optimal', or a path
    from ``numpy.einsum_path`` (``['einsum_path', (0, 1), ...]``).  The planner chooses the
    contraction order itself (planner.contraction_order, by flop count), so the value does
    not change what runs; anything numpy would not take is an input error."""
    if isinstance(optimize, (list, tuple)) and optimize and optimize[0] == "einsum_path":
        return
    if not any(optimize is v or (isinstance(optimize, str) and optimize == v) for v in _OPTIMIZE):
        raise TeilInputError(f"optimize={optimize!r}: numpy.einsum takes False, True, 'greedy', 'optimal' "
                             f"or a path of numpy.einsum_path (ct.einsum accepts them and plans the "
                             f"contraction order itself)")


def _check_out(out: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``out=`` as numpy.einsum takes it, under the dtype policy: a writeable float64 array of
    the result's shape (never converted: inputs.check_dtype)."""
    from ..semantics.inputs import check_dtype

    if not isinstance(out, np.ndarray):
        raise TeilInputError(f"out= must be a numpy array (numpy.einsum's out), not {type(out).__name__}")
    check_dtype("out", out.dtype, where="out=", role="output")
    if out.shape != shape:
        raise TeilInputError(f"out= has shape {list(out.shape)}, but the einsum's result has shape {list(shape)}")
    if not out.flags.writeable:
        raise TeilInputError("out= is read-only")
    return out


def einsum(subscripts: str, *arrays: Any, engine: str = "native", pad: int | None = None,
           out: np.ndarray | None = None, optimize: Any = False) -> np.ndarray:
    """``numpy.einsum(subscripts, *arrays, out=out, optimize=optimize)`` on a kernel that
    ``ct.prove`` certified.

    The program of :func:`from_einsum` for the arrays' concrete shapes is proved
    (paper Theorem 4.6; with ``pad``, report Theorem 3) and compiled once per
    subscripts, shapes, dtype, engine and pad; ``engine="reference"`` runs the
    semantics of eval.py instead.  Arrays are float64 (the dtype policy of
    :func:`core_teil.semantics.inputs.check_dtype`, never converted); the result has
    numpy.einsum's shape and axis order (a fresh C-contiguous array), or is written into
    ``out`` (a writeable float64 array of that shape), which is returned, as numpy does.
    ``optimize`` takes numpy's values and changes nothing: the planner orders the
    contractions itself.  When the native engine's plan check refuses its own plan, the
    reference engine runs the program."""
    from ..semantics.inputs import as_array, check_pad

    if not isinstance(subscripts, str):
        raise TeilInputError(f"the subscripts must be a string such as 'ij,jk->ik', not "
                             f"{type(subscripts).__name__} (numpy's interleaved form einsum(a, [0, 1], b, "
                             f"[1, 2]) is not supported)")
    if not isinstance(engine, str) or engine not in ("native", "reference"):
        raise TeilInputError(f"engine must be 'native' or 'reference', not {engine!r}")
    pad = check_pad(pad)
    _check_optimize(optimize)
    names = _default_names(len(arrays) + 1, set())
    arrs = [as_array(n, a) for n, a in zip(names, arrays, strict=False)]
    shapes = tuple(tuple(int(x) for x in a.shape) for a in arrs)
    key = (subscripts, shapes, "float64", engine, pad)
    with _LOCK:
        entry = _KERNELS.get(key)
    if entry is None:
        program = from_einsum(subscripts, *shapes)
        if engine == "native":
            from ..native.engine import compile as native_compile
            from ..native.plan_check import PlanRejected

            try:
                entry = (program, native_compile(program, {}, pad))
            except PlanRejected as exc:
                # The proofs hold (certify ran first) but the independent plan check refused the
                # native plan: a planner bug.  The certified program runs on the reference engine
                # instead, never on that plan -- and says so, so that the bug is not hidden.
                warnings.warn(f"ct.einsum({subscripts!r}): the native plan was refused by the plan check "
                              f"({exc.message}); running on the reference engine", RuntimeWarning, stacklevel=3)
                entry = (program, None)
        else:
            from ..proving.prove import prove

            report = prove(program, {}, pad)
            if not report.ok:  # pragma: no cover - from_einsum's programs are proved
                raise TeilTypeError("the einsum's program is not certified by ct.prove", Span(EINSUM_FILE),
                                    "prove")
            entry = (program, None)
        with _LOCK:
            if len(_KERNELS) >= _KERNEL_CACHE_SIZE:
                _KERNELS.pop(next(iter(_KERNELS)))
            _KERNELS[key] = entry
    program, kernel = entry
    inputs = {a.name: arr for a, arr in zip(program.inputs(), arrs, strict=True)}
    result = program.outputs()[0]
    if out is not None:
        shape = tuple(d for d in result.shape if isinstance(d, int))  # concrete shapes: all ints
        _check_out(out, shape)
        if kernel is not None and out.flags.c_contiguous:
            return kernel(out={result.name: out}, **inputs)[result.name]  # written in place
    if kernel is not None:
        value = kernel(**inputs)[result.name]
        if pad is not None and not value.flags.owndata:
            # a padded kernel's result is a view of its padded buffer at the declared shape
            # (strided, and holding the whole padded store): a fresh C-contiguous copy instead
            value = np.array(value, order="C")
    else:
        from ..semantics.eval import evaluate

        value = evaluate(program, inputs, {}, pad)[result.name]
    if out is None:
        return value
    np.copyto(out, value)
    return out
