"""The operator language of paper 000, section 5, as Python data (issue 12, item 1).

Paper 000 (Rink & Castrillon, ARRAY'19), section 5, embeds an *operator
language* in C++ and lowers it to TeIL::

    auto A = Matrix(m, n), B = Matrix(m, n), C = Matrix(m, n);
    auto u = Tensor<3>(n, n, n);
    auto v = (A*B*C)(u);

This module is the same language embedded in Python::

    from core_teil import ops
    A = ops.Matrix("A", "m", "n")           # maps n points to m points
    u = ops.Tensor("u", "E", "n", "n", "n")  # E elements of n x n x n points
    p = ops.program(v=(A * A * A)(u))       # a full-TeIL Program
    ct.prove(p).ok; ct.compile(p, {"E": 50000, "m": 7, "n": 7})(A=a, u=x)

**Operators** (linear maps, :class:`Op`).  ``Matrix(name, m, n)`` is a stored
``[m, n]`` allocation read as an operator with one *output* dimension ``m``
and one *input* dimension ``n`` (the lowered and raised indices of equations
(7)-(8)); ``Operator(name, out, inp)`` is the general stored tensor operator
``[*out, *inp]``.  ``A.T`` swaps input and output (helm's ``S^T``).
``A * B`` is the tensor product ``A ⊗ B`` (paper: ``prod A (prod B C)``, rule
T-Prod); ``K + L``, ``K - L`` and ``alpha * K`` (``alpha = Scalar("alpha")``)
are the paper's "general tensor operators", linear combinations of tensor
products (``*`` distributes over ``+``).

**Tensor expressions** (:class:`TExpr`).  ``Tensor(name, *extents)`` and
``Scalar(name)`` are input allocations.  ``K(u)`` applies ``K``: each input
dimension of ``K`` is contracted with the corresponding one of the *trailing*
dimensions of ``u`` (equation (7)); leading dimensions of ``u`` that ``K``
does not take are a batch carried through (the ``E`` volume elements of the
CFD kernels, "evaluated for each of several thousand volume elements"), so
``K(u)`` has shape ``batch ++ out``.  ``x + y``, ``x - y``, ``x * y`` (the
element-wise product) and ``x / y`` (controlled division, report 001,
Definition 8) are element-wise (T-Elem; ``alpha * x`` and ``x / alpha`` are
T-SMul and T-SDiv); a lower-rank operand must equal the trailing dimensions
of the other and is broadcast over the leading ones by ``expa`` (helm's
``t / D``: ``div t (expa 1 E D)``).

**Checking at construction** (the paper's first advantage: "contractions
only take place over compatible index pairs").  ``K(u)`` with an input
extent of ``K`` that can differ from ``u``'s is a
:class:`~core_teil.errors.TeilTypeError` (rule T-Contr) naming the factor,
the dimension and both extents, with a counterexample when the extents are
symbolic (``n`` and ``k`` differ for ``k = 1, n = 2``), as the einsum
frontend reports labels (:mod:`core_teil.frontends.einsum`); likewise ``+``
and the element-wise operators (T-Elem).  The span of an error is the
caller's line of Python.  Extents are ints >= 1 or parameter names; every
name becomes a ``param``.

**Lowering** (:func:`program`).  Every application of a tensor product
``F1 ⊗ ... ⊗ Fk`` is *lifted* by default, as paper 000, section 5
recommends: a sequence of ``k`` statements with one contraction each,
``t_i = contr (b+1) j (prod t_{i-1} F_i)``, that contracts the leading
non-batch dimension(s) of the running tensor with ``F_i``'s input and appends
``F_i``'s output at the end, so that after ``k`` steps the dimensions are
back in order; for interp that is O(E n^4) instead of O(E n^6) and exactly
``examples/interp.teil``.  ``program(..., lift=False)`` (or :func:`nested`)
gives the nested form instead, one expression per output
``contr .. (contr .. (prod u (prod F1 (prod F2 F3))))`` as in
``examples/interp_nested.teil``; ``ct.equiv`` proves the two equal.  A
linear combination is applied term by term and summed (``add``/``sub``,
``mul`` by its scalars); an argument that is not an input is materialised
once into a temporary ``<output>_<k>``.  So is a subexpression read more
than once (both operands of ``y + y``, the argument of a combination in the
nested form, equal subexpressions built apart): computed once, as the
lifting computes an argument once, so ``y = M(y + y)`` twenty times is 40
statements, not 2^20 copies; and a statement is split where it would be
deeper than :data:`INLINE_DEPTH` (a chain of 2000 additions is 21
statements), as the later passes recurse over expressions.  The lowering is
linear in the number of distinct subexpressions and never recurses.

TeIL has no numeric literals (paper 000, Fig. 5), so a coefficient is a named
:class:`Scalar` input; the numbers ``1`` and ``-1`` are accepted as
coefficients of operators (``-K`` lowers to ``sub``), and a combination that
has no term with coefficient ``+1`` cannot be applied.
"""

from __future__ import annotations

import linecache
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

from ..errors import NO_SPAN, Span, TeilError, TeilInputError, TeilTypeError
from ..lang.parser import MAX_DEPTH
from ..lang.syntax import (
    ELEM_OPS,
    Alloc,
    ContrAt,
    Decl,
    Dim,
    Elem,
    ElemOp,
    ExpaAt,
    Expr,
    Param,
    Prod,
    Program,
    Shape,
    Stmt,
    Var,
)

__all__ = [
    "Apply", "Combination", "Factor", "Kron", "Matrix", "Op", "OpTerm", "Operator", "Pointwise", "Scalar",
    "TExpr", "Tensor", "nested", "program",
]

#: The pseudo-file of programs built here (``ct.equiv`` names it in its reports).
OPS_FILE = "<ops>"

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SYMBOL: dict[str, str] = {"add": "+", "sub": "-", "mul": "*", "div": "/"}

#: The deepest expression a generated statement has: a deeper one is split by a temporary
#: (a chain of 2000 additions is 21 statements).  The parser's bound on ``.teil`` files,
#: which protects the later passes (they recurse over expressions), with room to spare.
INLINE_DEPTH = MAX_DEPTH // 2


# --------------------------------------------------------------------------
# Names, extents, spans and the one side condition (extent equality)
# --------------------------------------------------------------------------


def _caller() -> tuple[Span, str | None]:
    """The span of the user's expression that is being built (the first frame outside this
    module and the ``__init__`` that dataclasses generate), and that file's text, so that an
    error shows the line and a caret like a ``.teil`` error does."""
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename == __file__ or
                                 (frame.f_code.co_name == "__init__" and frame.f_code.co_filename.startswith("<"))):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return NO_SPAN, None
    file = frame.f_code.co_filename
    line, end_line, col, end_col = frame.f_lineno, frame.f_lineno, 0, 0
    positions = list(frame.f_code.co_positions())
    if 0 <= frame.f_lasti // 2 < len(positions):
        pl, pel, pc, pec = positions[frame.f_lasti // 2]
        if pl is not None and pc is not None:
            line, end_line, col, end_col = pl, pel or pl, pc, pec or pc
    lines = linecache.getlines(file)
    return Span(file, line, col + 1, end_line, end_col + 1), ("".join(lines) if lines else None)


def _raise(cls: type[TeilError], message: str, rule: str | None = None, **kw: Any) -> NoReturn:
    span, source = _caller()
    raise cls(message, span, rule, source, **kw)


def _check_name(name: Any, what: str) -> str:
    from ..lang.parser import KEYWORDS

    if not isinstance(name, str) or not _IDENT.fullmatch(name) or name in KEYWORDS:
        _raise(TeilInputError, f"{what}: {name!r} is not an identifier that can name an allocation "
                               f"(letters, digits and '_', not a keyword)")
    return name


def _check_extent(d: Any, what: str) -> Dim:
    """An extent: an int >= 1 (numpy ints too) or a parameter name (SPEC.md section 1)."""
    from ..lang.parser import KEYWORDS

    if isinstance(d, (bool, np.bool_)):
        _raise(TeilInputError, f"{what}: extent {d!r} is not an integer or a parameter name")
    if isinstance(d, (int, np.integer)):
        if int(d) < 1:
            _raise(TeilInputError, f"{what}: extent {int(d)} is not >= 1 (Core-TeIL extents are positive, "
                                   f"SPEC.md section 1)")
        return int(d)
    if isinstance(d, str) and _IDENT.fullmatch(d) and d not in KEYWORDS:
        return d
    _raise(TeilInputError, f"{what}: extent {d!r} is not an integer >= 1 or a parameter name")


def _counterexample(a: Dim, b: Dim) -> dict[str, int] | None:
    """``None`` when ``a == b`` for every parameter value >= 1, else Z3's counterexample
    (:mod:`core_teil.lang.shapes`, as the einsum frontend and the type checker decide it)."""
    if a == b:
        return None
    from ..lang.shapes import ShapeSolver, Verdict

    mentioned = tuple(dict.fromkeys(d for d in (a, b) if isinstance(d, str)))
    stub = Program("full", (Param(mentioned),) if mentioned else (), ())
    d = ShapeSolver(stub).decide(a, "==", b)
    if d.verdict is Verdict.HOLDS:
        return None
    return d.counterexample or {}


def _mismatch(a: Dim, b: Dim) -> tuple[str, dict[str, int]] | None:
    """Why extents ``a`` and ``b`` may differ, for a message, or ``None`` when they cannot."""
    cex = _counterexample(a, b)
    if cex is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return f"{a} != {b}", cex
    text = f"{a} == {b} does not hold for all parameter values"
    if cex:
        text += "; counterexample: " + ", ".join(f"{k} = {v}" for k, v in sorted(cex.items()))
    return text, cex


def show_shape(shape: Shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


# --------------------------------------------------------------------------
# Operators (paper 000, section 5: Matrix, the tensor product, linear combinations)
# --------------------------------------------------------------------------


class Op:
    """A linear operator from tensors of shape ``in_shape`` to tensors of shape ``out_shape``.

    ``*`` is the tensor product (T-Prod), ``+``/``-`` and scalar multiples form
    linear combinations, ``K(u)`` applies ``K`` (equation (7))."""

    __slots__ = ()

    @property
    def out_shape(self) -> Shape:
        return self.terms()[0].kron.out_shape

    @property
    def in_shape(self) -> Shape:
        return self.terms()[0].kron.in_shape

    def terms(self) -> tuple[OpTerm, ...]:
        """The operator as a linear combination of tensor products of factors."""
        raise NotImplementedError

    @property
    def T(self) -> Op:
        """The transpose: inputs and outputs swapped, ``(A ⊗ B)^T = A^T ⊗ B^T``."""
        return _combine(tuple(OpTerm(t.sign, t.scalars, Kron(tuple(f.T for f in t.kron.factors)))
                              for t in self.terms()))

    def __mul__(self, other: Any) -> Op:
        if isinstance(other, Op):  # the tensor product, distributed over the sums
            return _combine(tuple(OpTerm(s.sign * t.sign, s.scalars + t.scalars,
                                         Kron(s.kron.factors + t.kron.factors))
                                  for s in self.terms() for t in other.terms()))
        return self._scaled(other, "right")

    def __rmul__(self, other: Any) -> Op:
        return self._scaled(other, "left")

    def _scaled(self, c: Any, side: str) -> Op:
        if isinstance(c, TExpr) and c.shape == ():  # a Scalar, or a product of them
            return _combine(tuple(OpTerm(t.sign, (c, *t.scalars), t.kron) for t in self.terms()))
        if isinstance(c, TExpr):
            _raise(TeilInputError, f"{_show(c)} * {self} multiplies a tensor by an operator: apply the operator "
                                   f"with a call, ({self})({_show(c)}) (paper 000, section 5: (A*B*C)(u))"
                   if side == "left" else
                   f"{self} * {_show(c)} multiplies an operator by a tensor: apply the operator with a call, "
                   f"({self})({_show(c)}) (paper 000, section 5: (A*B*C)(u))")
        if isinstance(c, (int, float, np.integer, np.floating)) and not isinstance(c, (bool, np.bool_)):
            if c == 1:
                return self
            if c == -1:
                return -self
            _raise(TeilInputError, f"{c!r} * {self}: TeIL has no numeric constants (paper 000, Fig. 5); name the "
                                   f"coefficient, c = ops.Scalar('c'), and pass its value as an input")
        _raise(TeilInputError, f"cannot multiply the operator {self} by a {type(c).__name__}: operators multiply "
                               f"operators (the tensor product) and scalars (ops.Scalar)")

    def __neg__(self) -> Op:
        return _combine(tuple(OpTerm(-t.sign, t.scalars, t.kron) for t in self.terms()))

    def __add__(self, other: Any) -> Op:
        if isinstance(other, Op):
            _same_type(self, other, "+")
            return _combine(self.terms() + other.terms())
        if isinstance(other, TExpr):
            _raise(TeilInputError, f"{self} + {_show(other)} adds an operator and a tensor: apply the operator "
                                   f"first, ({self})({_show(other)})")
        _raise(TeilInputError, f"cannot add a {type(other).__name__} to the operator {self}: a linear combination "
                               f"adds operators")

    def __radd__(self, other: Any) -> Op:
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self  # sum([K, L, ...]) starts from 0
        return self.__add__(other)

    def __sub__(self, other: Any) -> Op:
        if isinstance(other, Op):
            _same_type(self, other, "-")
            return self + (-other)
        return self.__add__(other)

    def __rsub__(self, other: Any) -> Op:
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return -self
        _raise(TeilInputError, f"{other!r} - {self}: cannot subtract an operator from a {type(other).__name__}; "
                               f"a linear combination subtracts operators")

    def __truediv__(self, other: Any) -> Op:
        _raise(TeilInputError, f"{self} / {_show(other)}: an operator cannot be divided (TeIL has no inverse); "
                               f"divide the applied tensor, ({self})(u) / {_show(other)}")

    def __call__(self, arg: TExpr) -> Apply:
        """``K(u)``: the application of paper 000, equation (7)."""
        return Apply(self, arg)

    def __str__(self) -> str:
        out = []
        for n, t in enumerate(self.terms()):
            body = " ⊗ ".join(str(f) for f in t.kron.factors)
            if t.scalars:
                body = "·".join(_show(s) for s in t.scalars) + "·" + (f"({body})" if len(t.kron.factors) > 1 else body)
            out.append(("-" if t.sign < 0 else "") + body if n == 0 else (" - " if t.sign < 0 else " + ") + body)
        return "".join(out)


@dataclass(frozen=True, eq=True)
class Factor(Op):
    """One stored operator: allocation ``name`` of shape ``shape``, whose dimensions at
    ``out_axes`` are the operator's outputs and at ``in_axes`` its inputs (0-based, each
    ascending).  Built by :func:`Matrix` and :func:`Operator`; ``.T`` swaps the two."""

    name: str
    shape: Shape
    out_axes: tuple[int, ...]
    in_axes: tuple[int, ...]

    def __post_init__(self) -> None:
        _check_name(self.name, "operator name")
        axes = sorted(self.out_axes + self.in_axes)
        if not self.out_axes or not self.in_axes or axes != list(range(len(self.shape))) or \
                list(self.out_axes) != sorted(self.out_axes) or list(self.in_axes) != sorted(self.in_axes):
            _raise(TeilInputError, f"operator {self.name}: axes {self.out_axes} (out) and {self.in_axes} (in) "
                                   f"must split the {len(self.shape)} dimensions, each in order, both non-empty")

    @property
    def out_shape(self) -> Shape:
        return tuple(self.shape[a] for a in self.out_axes)

    @property
    def in_shape(self) -> Shape:
        return tuple(self.shape[a] for a in self.in_axes)

    def terms(self) -> tuple[OpTerm, ...]:
        return (OpTerm(1, (), Kron((self,))),)

    @property
    def T(self) -> Factor:
        return Factor(self.name, self.shape, self.in_axes, self.out_axes)

    @property
    def transposed(self) -> bool:
        """Whether the outputs are not the leading stored dimensions (``A.T``)."""
        return self.out_axes[0] != 0

    def __str__(self) -> str:
        return self.name + (".T" if self.transposed else "")


def Matrix(name: str, m: Dim, n: Dim) -> Factor:
    """``Matrix(m, n)`` of paper 000, section 5: the allocation ``name : [m, n]`` as the
    operator that maps ``n`` points to ``m`` points (output ``m``, input ``n``)."""
    what = f"Matrix {name!r}"
    return Factor(_check_name(name, "Matrix name"), (_check_extent(m, what), _check_extent(n, what)), (0,), (1,))


def Operator(name: str, out: Sequence[Dim], inp: Sequence[Dim]) -> Factor:
    """A general stored tensor operator ``name : [*out, *inp]`` with outputs ``out`` and inputs
    ``inp`` (a matrix is ``Operator(name, [m], [n])``)."""
    _check_name(name, "Operator name")
    what = f"Operator {name!r}"
    if not isinstance(out, (tuple, list)) or not isinstance(inp, (tuple, list)) or not out or not inp:
        _raise(TeilInputError, f"{what}: out and inp must be non-empty lists of extents")
    shape = tuple(_check_extent(d, what) for d in (*out, *inp))
    return Factor(name, shape, tuple(range(len(out))), tuple(range(len(out), len(shape))))


@dataclass(frozen=True)
class Kron(Op):
    """``F1 ⊗ ... ⊗ Fk``: the tensor product of factors (paper: ``prod A (prod B C)``, T-Prod)."""

    factors: tuple[Factor, ...]

    @property
    def out_shape(self) -> Shape:
        return tuple(d for f in self.factors for d in f.out_shape)

    @property
    def in_shape(self) -> Shape:
        return tuple(d for f in self.factors for d in f.in_shape)

    def terms(self) -> tuple[OpTerm, ...]:
        return (OpTerm(1, (), self),)


@dataclass(frozen=True)
class OpTerm:
    """``sign · s1 · ... · sk · kron``: one term of a linear combination; the coefficients
    ``s1 ... sk`` are scalar-valued tensor expressions (a :class:`Scalar`, ``alpha * beta``)."""

    sign: int
    scalars: tuple[TExpr, ...]
    kron: Kron


@dataclass(frozen=True)
class Combination(Op):
    """A linear combination of tensor products: the paper's "general tensor operators"."""

    summands: tuple[OpTerm, ...]

    def terms(self) -> tuple[OpTerm, ...]:
        return self.summands


def _combine(terms: tuple[OpTerm, ...]) -> Op:
    """The simplest operator with these terms: a factor, a product, or a combination."""
    if len(terms) == 1 and terms[0].sign == 1 and not terms[0].scalars:
        k = terms[0].kron
        return k.factors[0] if len(k.factors) == 1 else k
    return Combination(terms)


def _same_type(a: Op, b: Op, sym: str) -> None:
    """``a + b`` needs equal input and output shapes (T-Elem on the applied operators)."""
    for what, x, y in (("input", a.in_shape, b.in_shape), ("output", a.out_shape, b.out_shape)):
        if len(x) != len(y):
            _raise(TeilTypeError, f"{a} {sym} {b}: the {what} shapes {show_shape(x)} and {show_shape(y)} have "
                                  f"different ranks", "T-Elem")
        for q, (d, e) in enumerate(zip(x, y, strict=True), start=1):
            why = _mismatch(d, e)
            if why is not None:
                _raise(TeilTypeError, f"{a} {sym} {b}: {what} dimension {q} has extent {d} in {a} but {e} in {b} "
                                      f"({why[0]})", "T-Elem", counterexample=why[1] or None)


# --------------------------------------------------------------------------
# Tensor expressions: inputs, applications, element-wise arithmetic
# --------------------------------------------------------------------------


class TExpr:
    """A tensor-valued expression of the operator language; ``shape`` is its type.

    An expression is a DAG (``y = M(y + y)`` reads ``y`` twice) and may be thousands of
    levels deep (a chain ``s = s + t``), so nothing here recurses over it: an application
    and an element-wise expression compute their shape and hash once, at construction,
    from their operands' (else each level would ask its operand twice: time exponential
    in the depth), and equality, :func:`walk` and the lowering use explicit stacks."""

    __slots__ = ()

    @property
    def shape(self) -> Shape:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TExpr):
            return NotImplemented
        return _same(self, other)

    __hash__ = None  # type: ignore[assignment]  # each kind hashes itself (Apply, Pointwise: once)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {_show(self)} : {show_shape(self.shape)}>"

    def _elem(self, op: ElemOp, other: Any, reflected: bool = False) -> TExpr:
        if isinstance(other, TExpr):
            return Pointwise(op, other, self) if reflected else Pointwise(op, self, other)
        if isinstance(other, Op):
            if op == "mul":  # alpha * K is a scaled operator, x * K an error: Op.__rmul__ / __mul__ decide
                return other.__mul__(self) if reflected else other.__rmul__(self)
            _raise(TeilInputError, f"{_show(self)} {_SYMBOL[op]} {other} combines a tensor and an operator: apply "
                                   f"the operator first, ({other})({_show(self)})")
        if isinstance(other, (int, float, np.integer, np.floating)) and not isinstance(other, (bool, np.bool_)):
            # the identities of Definition 4 (report 001), • included: x·1 = x/1 = x + 0 = x - 0 = x
            if (op in ("mul", "div") and other == 1 and not (reflected and op == "div")) or \
                    (op in ("add", "sub") and other == 0 and not (reflected and op == "sub")):
                return self
            text = f"{other!r} {_SYMBOL[op]} {_show(self)}" if reflected else f"{_show(self)} {_SYMBOL[op]} {other!r}"
            _raise(TeilInputError, f"{text}: TeIL has no numeric constants (paper 000, Fig. 5); name the value, "
                                   f"c = ops.Scalar('c'), and pass it as an input")
        _raise(TeilInputError, f"cannot combine the tensor expression {_show(self)} with a {type(other).__name__} "
                               f"by {_SYMBOL[op]}: use ops.Tensor and ops.Scalar inputs")

    def __add__(self, other: Any) -> TExpr:
        return self._elem("add", other)

    def __radd__(self, other: Any) -> TExpr:
        return self._elem("add", other, True)

    def __sub__(self, other: Any) -> TExpr:
        return self._elem("sub", other)

    def __rsub__(self, other: Any) -> TExpr:
        return self._elem("sub", other, True)

    def __mul__(self, other: Any) -> TExpr:
        return self._elem("mul", other)

    def __rmul__(self, other: Any) -> TExpr:
        return self._elem("mul", other, True)

    def __truediv__(self, other: Any) -> TExpr:
        return self._elem("div", other)

    def __rtruediv__(self, other: Any) -> TExpr:
        return self._elem("div", other, True)

    def __neg__(self) -> TExpr:
        _raise(TeilInputError, f"-{_show(self)}: TeIL has no negation or numeric constants (paper 000, Fig. 5); "
                               f"write a difference, y - x, or negate an operator, (-K)(u)")

    def __str__(self) -> str:
        return _show(self)


@dataclass(frozen=True, init=False)
class Tensor(TExpr):
    """``Tensor(name, *extents)``: an input allocation ``name : [extents]`` (paper 000,
    section 5: ``Tensor<3>(n, n, n)``; here with any rank and leading batch dimensions)."""

    name: str
    extents: Shape

    def __init__(self, name: str, *extents: Dim | Sequence[Dim]) -> None:
        _check_name(name, "Tensor name")
        if len(extents) == 1 and isinstance(extents[0], (tuple, list)):  # Tensor("u", shape)
            extents = tuple(extents[0])
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "extents", tuple(_check_extent(d, f"Tensor {name!r}") for d in extents))

    @property
    def shape(self) -> Shape:
        return self.extents


@dataclass(frozen=True)
class Scalar(TExpr):
    """``Scalar(name)``: an input allocation ``name : []``, a coefficient of a linear
    combination (``alpha * K``) or a scale factor (``alpha * x``, T-SMul; ``x / alpha``, T-SDiv)."""

    name: str

    def __post_init__(self) -> None:
        _check_name(self.name, "Scalar name")

    @property
    def shape(self) -> Shape:
        return ()


@dataclass(frozen=True, eq=False, repr=False)
class Apply(TExpr):
    """``K(u)``: contract each input dimension of ``K`` with the corresponding trailing
    dimension of ``u`` (paper 000, equation (7)); ``u``'s other, leading dimensions are a
    batch.  The extents must be equal for every parameter value (T-Contr), else a
    :class:`~core_teil.errors.TeilTypeError` at construction."""

    op: Op
    arg: TExpr
    _shape: Shape = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.op, Op) or not isinstance(self.arg, TExpr):
            _raise(TeilInputError, f"an application is operator(tensor), not {type(self.op).__name__}"
                                   f"({type(self.arg).__name__})")
        ins, shape = self.op.in_shape, self.arg.shape
        what = f"applying {self.op} (input extents {show_shape(ins)}) to {_show(self.arg)} : {show_shape(shape)}"
        if len(shape) < len(ins):
            _raise(TeilTypeError, f"{what}: the operator contracts {len(ins)} dimension(s) but the argument has "
                                  f"rank {len(shape)}", "T-Contr")
        batch = len(shape) - len(ins)
        for t in self.op.terms():  # each term names its own factors (all have the input shape ins)
            pos = 0
            for n, f in enumerate(t.kron.factors, start=1):
                for q, d in enumerate(f.in_shape):
                    e = shape[batch + pos]
                    why = _mismatch(d, e)
                    if why is not None:
                        axis = "input dimension" if len(f.in_shape) == 1 else f"input dimension {q + 1}"
                        _raise(TeilTypeError, f"{what}: factor {n} ({f}) contracts its {axis}, extent {d}, with "
                                              f"dimension {batch + pos + 1} of the argument, extent {e} ({why[0]})",
                               "T-Contr", counterexample=why[1] or None)
                    pos += 1
        if not any(t.sign > 0 for t in self.op.terms()):
            _all_negated(self.op)
        object.__setattr__(self, "_shape", self._type())
        object.__setattr__(self, "_hash", hash(("apply", self.op, self.arg)))

    def _type(self) -> Shape:
        batch = len(self.arg.shape) - len(self.op.in_shape)
        return self.arg.shape[:batch] + self.op.out_shape

    @property
    def shape(self) -> Shape:
        return self._shape

    def __hash__(self) -> int:
        return self._hash


def _all_negated(op: Op) -> NoReturn:
    _raise(TeilInputError, f"applying {op}: every term is negated, and TeIL has no negation or numeric "
                           f"constants (paper 000, Fig. 5); subtract the "
                           f"application from another tensor, or name a coefficient, c = ops.Scalar('c')")


@dataclass(frozen=True, eq=False, repr=False)
class Pointwise(TExpr):
    """``x op y`` element-wise (T-Elem), or scaled by a scalar (T-SMul, T-SDiv); the operand
    of lower rank must equal the other's trailing dimensions and is broadcast over the
    leading ones (``expa``).  ``div`` is the report's controlled division (001, Def. 8)."""

    op: ElemOp
    left: TExpr
    right: TExpr
    _shape: Shape = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.op not in ELEM_OPS or not isinstance(self.left, TExpr) or not isinstance(self.right, TExpr):
            _raise(TeilInputError, f"an element-wise expression is one of {', '.join(ELEM_OPS)} on two tensor "
                                   f"expressions, not {self.op!r} on {type(self.left).__name__} and "
                                   f"{type(self.right).__name__}")
        a, b = self.left.shape, self.right.shape
        object.__setattr__(self, "_shape", self._type())
        object.__setattr__(self, "_hash", hash(("elem", self.op, self.left, self.right)))
        if not a or not b:
            return  # a scalar: T-SMul / T-SDiv, or broadcast over every dimension
        short, long_ = (a, b) if len(a) <= len(b) else (b, a)
        lead = len(long_) - len(short)
        for q, (d, e) in enumerate(zip(short, long_[lead:], strict=True), start=1):
            da, db = (d, e) if short is a else (e, d)
            why = _mismatch(da, db)
            if why is not None:
                _raise(TeilTypeError, f"{_show(self.left)} {_SYMBOL[self.op]} {_show(self.right)}: "
                                      f"{show_shape(a)} and {show_shape(b)} differ at dimension {lead + q} "
                                      f"(aligned from the right): {da} vs {db} ({why[0]})",
                       "T-Elem", counterexample=why[1] or None)

    def _type(self) -> Shape:
        a, b = self.left.shape, self.right.shape
        return a if len(a) >= len(b) else b

    @property
    def shape(self) -> Shape:
        return self._shape

    def __hash__(self) -> int:
        return self._hash


def _show(e: Any, limit: int = 60) -> str:
    """A short text of a tensor expression for messages."""
    text = _prefix(e, limit + 1)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _prefix(e: Any, budget: int) -> str:
    """The text of ``e``, cut after about ``budget`` characters: each level writes a
    parenthesis before it descends, so the recursion is at most ``budget`` deep and a deep
    or shared expression costs O(budget), not its (exponential) text."""
    if budget <= 0:
        return ""
    if isinstance(e, (Tensor, Scalar)):
        return e.name
    if isinstance(e, Apply):
        head = f"({e.op})("
        return head if len(head) >= budget else head + _prefix(e.arg, budget - len(head)) + ")"
    if isinstance(e, Pointwise):
        left = "(" + _prefix(e.left, budget - 1) + f" {_SYMBOL[e.op]} "
        return left if len(left) >= budget else left + _prefix(e.right, budget - len(left)) + ")"
    return str(e)


def _same(a: TExpr, b: TExpr) -> bool:
    """Structural equality of two expressions, with a stack and each pair of nodes compared
    once (a shared node is not compared again down every path)."""
    stack, seen = [(a, b)], set()
    while stack:
        x, y = stack.pop()
        if x is y or (id(x), id(y)) in seen:
            continue
        seen.add((id(x), id(y)))
        if type(x) is not type(y) or hash(x) != hash(y):
            return False
        if isinstance(x, Apply) and isinstance(y, Apply):
            if x.op != y.op:
                return False
            stack.append((x.arg, y.arg))
        elif isinstance(x, Pointwise) and isinstance(y, Pointwise):
            if x.op != y.op:
                return False
            stack += [(x.left, y.left), (x.right, y.right)]
        elif x != y:  # Tensor, Scalar: their dataclass equality
            return False
    return True


def walk(e: TExpr) -> Iterator[TExpr | Factor]:
    """Every tensor expression and operator factor in ``e``, each object once, pre-order
    (operator before argument, left before right): the order in which :func:`program`
    declares the inputs.  Once per object: ``y = M(y + y)`` twenty times is 41 objects,
    not 2^20 paths."""
    stack: list[Any] = [e]
    seen: set[int] = set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        yield x
        if isinstance(x, Apply):
            kids: list[Any] = []
            for t in x.op.terms():
                kids += [*t.scalars, *t.kron.factors]
            stack.extend(reversed([*kids, x.arg]))
        elif isinstance(x, Pointwise):
            stack.extend([x.right, x.left])


# --------------------------------------------------------------------------
# Lowering to full TeIL (paper 000, Fig. 5)
# --------------------------------------------------------------------------


def _factor_tokens(f: Factor, tag: int) -> list[tuple[str, int, int]]:
    return [("f", tag, a) for a in range(len(f.shape))]


def _pairs(batch: int, start: int, f: Factor, tag: int) -> list[tuple[Any, Any]]:
    """The argument's dimensions ``batch + start + q`` paired with ``f``'s inputs."""
    return [(("x", batch + start + q), ("f", tag, a)) for q, a in enumerate(f.in_axes)]


def _children(e: TExpr) -> list[TExpr]:
    """The operands of ``e`` in lowering order: an application's argument, then its terms'
    coefficients; an element-wise expression's left and right operand."""
    if isinstance(e, Apply):
        return [e.arg, *(s for t in e.op.terms() for s in t.scalars)]
    if isinstance(e, Pointwise):
        return [e.left, e.right]
    return []


def _reads(e: TExpr) -> list[int]:
    """How often the lowering of ``e`` reads each of :func:`_children`: an application's
    argument once per term (the nested form reads it in every term's contraction)."""
    if isinstance(e, Apply):
        return [len(e.op.terms())] + [1] * (len(_children(e)) - 1)
    return [1] * len(_children(e))


class _Dag:
    """The outputs' expressions as a DAG of *nodes*: structurally equal subexpressions (the
    same object read twice, or equal objects) are one node, numbered in post-order, output
    by output (``ends[i]``: the nodes up to output ``i``), so that a node follows its
    operands.  ``uses[n]`` counts the reads of node ``n``: one that is read more than once is
    computed once into a temporary, as the paper's lifting computes an argument once."""

    def __init__(self, roots: Sequence[TExpr]) -> None:
        self.nodes: list[TExpr] = []
        self.uses: list[int] = []
        self.roots: list[int] = []
        self.ends: list[int] = []
        self.index: dict[int, int] = {}  # id of an expression object -> its node
        keys: dict[tuple[Any, ...], int] = {}
        for root in roots:
            stack: list[tuple[TExpr, bool]] = [(root, False)]
            while stack:
                e, ready = stack.pop()
                if id(e) in self.index:
                    continue
                kids = _children(e)
                if not ready:  # first its operands (a DAG: none of them is in progress)
                    stack.append((e, True))
                    stack.extend((kid, False) for kid in reversed(kids))
                    continue
                numbers = [self.index[id(kid)] for kid in kids]
                key = self._key(e, numbers)
                node = keys.get(key)
                if node is None:
                    node = keys[key] = len(self.nodes)
                    self.nodes.append(e)
                    self.uses.append(0)
                    for kid, reads in zip(numbers, _reads(e), strict=True):
                        self.uses[kid] += reads
                self.index[id(e)] = node
            self.roots.append(self.index[id(root)])
            self.uses[self.roots[-1]] += 1
            self.ends.append(len(self.nodes))

    @staticmethod
    def _key(e: TExpr, kids: list[int]) -> tuple[Any, ...]:
        if isinstance(e, Tensor):
            return ("tensor", e.name, e.extents)
        if isinstance(e, Scalar):
            return ("scalar", e.name)
        if isinstance(e, Pointwise):
            return ("elem", e.op, *kids)
        assert isinstance(e, Apply)
        scalars = iter(kids[1:])
        return ("apply", kids[0], tuple((t.sign, tuple(next(scalars) for _ in t.scalars), t.kron)
                                         for t in e.op.terms()))


class _Lowering:
    """Statements and declarations of one program; ``lift`` chooses the lifted or nested form.

    The outputs' DAG (:class:`_Dag`) is lowered node by node, without recursion.  A node read
    once is an expression nested into its reader; a node read more than once, and any
    expression as deep as :data:`INLINE_DEPTH`, is a statement into a temporary
    ``<output>_<k>`` that every reader reads by name."""

    def __init__(self, lift: bool, taken: set[str]) -> None:
        self.lift = lift
        self.taken = set(taken)
        self.temps: list[Alloc] = []
        self.stmts: list[Stmt] = []
        self.counter: dict[str, int] = {}
        self.target = ""  # the output being lowered: its temporaries are named after it
        self.values: dict[int, str | Expr] = {}  # node -> the allocation that holds it, or its expression
        self.depths: dict[int, tuple[Expr, int]] = {}  # id of a built expression -> (it, its depth)

    def fresh(self, target: str, shape: Shape) -> str:
        k = self.counter.get(target, 0)
        while True:
            k += 1
            name = f"{target}_{k}"
            if name not in self.taken:
                break
        self.counter[target] = k
        self.taken.add(name)
        self.temps.append(Alloc(name, shape))
        return name

    def materialise(self, e: Expr, shape: Shape) -> Var:
        if isinstance(e, Var):
            return e
        name = self.fresh(self.target, shape)
        self.stmts.append(Stmt(name, e))
        return Var(name)

    def depth(self, e: Expr) -> int:
        """``syntax.depth(e)``, remembered for every node built here, so that checking each new
        node costs O(1) and not the size of the tree below it."""
        stack = [e]
        while stack:
            node = stack[-1]
            if id(node) in self.depths:
                stack.pop()
                continue
            todo = [c for c in node.children() if id(c) not in self.depths]
            if todo:
                stack += todo
                continue
            stack.pop()
            self.depths[id(node)] = (node, 1 + max((self.depths[id(c)][1] for c in node.children()), default=0))
        return self.depths[id(e)][1]

    def spill(self, e: Expr, shape: Shape) -> Expr:
        """``e`` itself, or a temporary holding it once it is :data:`INLINE_DEPTH` deep: each
        node built here is spilled, so no statement is deeper (a chain of additions, a
        combination of many terms, a product of many factors)."""
        return e if self.depth(e) < INLINE_DEPTH else self.materialise(e, shape)

    def lower(self, outputs: Mapping[str, TExpr]) -> None:
        """One statement per output, in order, after the temporaries it needs."""
        dag = _Dag(tuple(outputs.values()))
        first = 0
        for (name, _), root, end in zip(outputs.items(), dag.roots, dag.ends, strict=True):
            self.target = name
            for node in range(first, end):
                self.node(dag, node)
            first = end
            self.stmts.append(Stmt(name, self.read(root)))

    def read(self, node: int) -> Expr:
        """The value of ``node`` for one reader: a fresh ``Var`` of the allocation that holds it
        (a program is a tree: parser.py makes one, and the plan check matches each read of the
        semantics to one node, plan_check.check_leaf), or its expression, which has this one
        reader (:class:`_Dag` counted them)."""
        value = self.values[node]
        if isinstance(value, str):
            return Var(value)
        del self.values[node]
        return value

    def node(self, dag: _Dag, node: int) -> None:
        e = dag.nodes[node]
        if isinstance(e, (Tensor, Scalar)):
            self.values[node] = e.name
            return
        if isinstance(e, Pointwise):
            left = self.read(dag.index[id(e.left)])
            expr = self.pointwise(e, left, self.read(dag.index[id(e.right)]))
        else:
            assert isinstance(e, Apply)
            expr = self.apply(dag, e)
        expr = self.spill(expr, e.shape)
        if dag.uses[node] > 1:  # read more than once: computed once
            expr = self.materialise(expr, e.shape)
        self.values[node] = expr.name if isinstance(expr, Var) else expr

    def apply(self, dag: _Dag, e: Apply) -> Expr:
        """``K(u)``: each term applied to the argument, times its scalars, summed."""
        arg = dag.index[id(e.arg)]
        if self.lift:  # read by every term's first step: computed once
            name = self.materialise(self.read(arg), e.arg.shape).name
        # a term with coefficient +1 (times its scalars) first: TeIL has no negation
        terms = sorted(e.op.terms(), key=lambda t: t.sign < 0)
        if terms[0].sign < 0:  # Apply refuses such an operator: not an assert, which -O removes
            _all_negated(e.op)
        out: Expr | None = None
        for t in terms:
            if self.lift:
                v = self.lifted(Var(name), e.arg.shape, t.kron)
            else:
                v = self.nested(self.read(arg), e.arg.shape, t.kron)
            for s in reversed(t.scalars):
                v = self.spill(Elem("mul", self.read(dag.index[id(s)]), v), e.shape)  # T-SMul
            out = v if out is None else self.spill(Elem("add" if t.sign > 0 else "sub", out, v), e.shape)
        assert out is not None  # an operator has a term
        return out

    def contract(self, expr: Expr, dims: list[Any], pairs: Sequence[tuple[Any, Any]],
                 extents: Mapping[Any, Dim]) -> tuple[Expr, list[Any]]:
        """``contr i j`` for each pair of dimension tokens, at their current positions (1-based,
        ``i < j``): paper equation (6), ``contr i j e = red i (diag i j e)``.  ``extents``: each
        token's extent, for the shape of a spilled intermediate."""
        dims = list(dims)
        for x, y in pairs:
            i, j = dims.index(x) + 1, dims.index(y) + 1
            assert i < j, (dims, x, y)
            dims.remove(x)
            dims.remove(y)
            expr = ContrAt(i, j, expr)
            if self.depth(expr) >= INLINE_DEPTH:  # the shape only then: a rank-2000 step is O(rank)
                expr = self.materialise(expr, tuple(extents[d] for d in dims))
        return expr, dims

    def lifted(self, arg: Expr, shape: Shape, kron: Kron) -> Expr:
        """Paper 000, section 5: one contraction per factor, each into a temporary but the last.
        Step ``i`` contracts the leading non-batch dimension(s) of the running tensor with
        ``F_i``'s inputs and appends ``F_i``'s outputs at the end."""
        batch = len(shape) - len(kron.in_shape)
        cur, cur_shape = arg, shape
        for n, f in enumerate(kron.factors):
            dims = [("x", q) for q in range(len(cur_shape))] + _factor_tokens(f, 0)
            extents = dict(zip(dims, cur_shape + f.shape, strict=True))
            expr, rest = self.contract(Prod(cur, Var(f.name)), dims, _pairs(batch, 0, f, 0), extents)
            assert rest[-len(f.out_axes):] == [("f", 0, a) for a in f.out_axes]
            new_shape = cur_shape[:batch] + cur_shape[batch + len(f.in_axes):] + f.out_shape
            if n == len(kron.factors) - 1:
                return expr
            cur, cur_shape = self.materialise(expr, new_shape), new_shape
        raise AssertionError("a product has at least one factor")

    def nested(self, arg: Expr, shape: Shape, kron: Kron) -> Expr:
        """The unlifted form: ``prod arg (prod F1 (prod F2 ...))`` and then every contraction
        (``examples/interp_nested.teil``), O(n^6) for the CFD operator."""
        batch = len(shape) - len(kron.in_shape)
        right: Expr = Var(kron.factors[-1].name)
        right_shape = kron.factors[-1].shape
        for f in reversed(kron.factors[:-1]):
            right = Prod(Var(f.name), right)
            right_shape = f.shape + right_shape
            right = self.spill(right, right_shape)
        dims: list[Any] = [("x", q) for q in range(len(shape))]
        pairs: list[tuple[Any, Any]] = []
        start = 0
        for tag, f in enumerate(kron.factors):
            dims += _factor_tokens(f, tag)
            pairs += _pairs(batch, start, f, tag)
            start += len(f.in_axes)
        extents = dict(zip(dims, shape + right_shape, strict=True))
        expr, _ = self.contract(self.spill(Prod(arg, right), shape + right_shape), dims, pairs, extents)
        return expr

    def pointwise(self, e: Pointwise, left: Expr, right: Expr) -> Expr:
        a, b = e.left.shape, e.right.shape
        if e.op == "mul" and not a:
            return Elem("mul", left, right)  # T-SMul
        if e.op == "mul" and not b:
            return Elem("mul", right, left)  # T-SMul scales from the left; · commutes (report 001, Def. 4)
        if e.op == "div" and not b:
            return Elem("div", left, right)  # T-SDiv
        out = e.shape
        if len(a) < len(out):
            left = self.broadcast(left, a, out[:len(out) - len(a)])
        if len(b) < len(out):
            right = self.broadcast(right, b, out[:len(out) - len(b)])
        return Elem(e.op, left, right)  # T-Elem

    def broadcast(self, e: Expr, shape: Shape, lead: Shape) -> Expr:
        """``expa 1 d1 (expa 1 d2 (... e))``: new leading dimensions ``lead`` (T-Expa)."""
        for d in reversed(lead):
            shape = (d, *shape)
            e = self.spill(ExpaAt(1, d, e), shape)
        return e


def _kind(x: Tensor | Scalar | Factor) -> str:
    return "an operator" if isinstance(x, Factor) else "a scalar" if isinstance(x, Scalar) else "a tensor"


def _leaves(outputs: Mapping[str, TExpr]) -> tuple[list[Tensor | Scalar | Factor], list[str]]:
    """The input allocations in first-use order, one per name, and the parameters."""
    seen: dict[str, tuple[Tensor | Scalar | Factor, Shape]] = {}
    params: dict[str, None] = {}
    order: list[Tensor | Scalar | Factor] = []
    for e in outputs.values():
        for x in walk(e):
            if not isinstance(x, (Tensor, Scalar, Factor)):
                continue
            shape = x.shape
            prev = seen.get(x.name)
            if prev is not None:
                p, pshape = prev
                if pshape != shape or isinstance(p, Factor) != isinstance(x, Factor):
                    _raise(TeilInputError, f"{x.name!r} names two different inputs: {_kind(p)} {show_shape(pshape)} "
                                           f"and {_kind(x)} {show_shape(shape)}")
                continue
            seen[x.name] = (x, shape)
            order.append(x)
            for d in shape:
                if isinstance(d, str):
                    params.setdefault(d)
    return order, list(params)


def program(outputs: Mapping[str, TExpr] | None = None, /, *, lift: bool = True, **named: TExpr) -> Program:
    """``ops.program(v=(A*A*A)(u))``: the full-TeIL program that computes each output.

    Outputs are keyword arguments (or a mapping, for names such as ``lift``), computed
    in that order; the inputs are the tensors, scalars and operators they read, declared
    ``input`` in first-use order; every symbolic extent is a ``param``.  ``lift=True``
    (default) lifts each applied tensor product into one contraction per factor (paper 000,
    section 5, O(n^4) for interp); ``lift=False`` nests them (:func:`nested`).  Raises
    :class:`~core_teil.errors.TeilInputError` for a bad name or a name used twice."""
    _check_outputs(outputs, "ops.program")
    outs: dict[str, TExpr] = {}
    for src in (outputs or {}), named:
        for name, e in src.items():
            if name in outs:
                _raise(TeilInputError, f"output {name!r} is given twice")
            outs[name] = e
    if not outs:
        _raise(TeilInputError, "ops.program needs at least one output, e.g. ops.program(v=(A*A*A)(u))")
    for name, e in outs.items():
        _check_name(name, "output name")
        if not isinstance(e, TExpr):
            _raise(TeilInputError, f"output {name!r} must be a tensor expression such as (A*A*A)(u), not "
                                   f"{type(e).__name__}" + (" (apply the operator to a tensor)"
                                                            if isinstance(e, Op) else ""))
    leaves, params = _leaves(outs)
    names = {x.name for x in leaves}
    for name in outs:
        if name in names:
            _raise(TeilInputError, f"output {name!r} is also the name of an input")
    clash = sorted((names | set(outs)) & set(params))
    if clash:
        _raise(TeilInputError, f"{', '.join(clash)}: the name of an allocation is also used as an extent "
                               f"(shape parameter)")
    low = _Lowering(lift, names | set(outs) | set(params))
    low.lower(outs)
    decls: list[Decl] = [Param(tuple(params))] if params else []
    decls += [Alloc(x.name, x.shape, "input") for x in leaves]
    decls += low.temps
    decls += [Alloc(name, e.shape, "output") for name, e in outs.items()]
    return Program("full", tuple(decls), tuple(low.stmts), file=OPS_FILE)


def _check_outputs(outputs: Any, f: str) -> None:
    if outputs is not None and not isinstance(outputs, Mapping):
        _raise(TeilInputError, f"{f} takes its outputs by name, e.g. {f}(v=(A*A*A)(u)), "
                               f"or as a mapping of names to expressions, not {type(outputs).__name__}")


def nested(outputs: Mapping[str, TExpr] | None = None, /, **named: TExpr) -> Program:
    """:func:`program` with ``lift=False``: each output one nested expression."""
    _check_outputs(outputs, "ops.nested")
    return program(outputs, lift=False, **named)
