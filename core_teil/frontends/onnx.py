"""The ONNX frontend (issue 12, item 3): an ONNX graph as a full-TeIL program.

``from_onnx("model.onnx")`` translates each node of the graph into one statement
``y = e`` of full TeIL (paper 000, Fig. 5), ``e`` built from the paper's operators
only, so that ``ct.check``, ``ct.prove``, ``ct.evaluate`` and ``ct.compile`` apply
unchanged and the type checker -- not this module -- decides whether the graph is
well-shaped:

=============================  ===================================================
``Einsum``                     the einsum lowering of :mod:`core_teil.frontends.einsum`:
                               ``diag`` (T-Diag), ``prod`` (T-Prod), ``red`` (T-Red+),
                               ``transp`` (T-Transp), ``proj`` for ``...`` broadcasting
``MatMul``                     the einsum ``...ij,...jk->...ik`` (numpy's 1-D rules:
                               ``j,...jk->...k``, ``...ij,j->...i``, ``j,j->``)
``Gemm``                       the einsum ``ij,jk->ik`` (``ji``/``kj`` for transA/transB),
                               ``mul alpha`` (T-SMul), ``add`` (T-Elem) of ``mul beta C``
``Transpose``                  ``transp i j`` swaps into ``perm`` (T-Transp)
``ReduceSum``                  ``red i`` per axis (T-Red+), ``expa i 1`` per kept axis
``Add``/``Sub``/``Mul``/``Div``  ``add``/``sub``/``mul``/``div`` (T-Elem) of the operands
                               broadcast as numpy does: ``proj i 1`` then ``expa i d`` for a
                               dimension of extent 1 (T-Proj, T-Expa), ``expa 1 d`` for a
                               missing leading one
``Unsqueeze``/``Squeeze``      ``expa i 1`` (T-Expa) / ``proj i 1`` (T-Proj)
``Expand``                     the broadcasting of ``Add`` towards the constant shape
``Identity``                   the variable itself (T-Var)
``Constant``                   no statement: a constant, like an initializer
=============================  ===================================================

Names.  Tensors become allocations named after them (characters outside
``[A-Za-z0-9_]`` replaced by ``_``, keywords and clashes suffixed); graph inputs
and initializers are ``input`` allocations, graph outputs ``output`` ones,
everything else a temporary.  ``dim_param`` names become shape parameters
(``param``); literal dimensions, literal extents.

Initializers (and ``Constant`` nodes, and the scalars ``alpha``/``beta`` of
``Gemm``: TeIL has no numeric literals) are *inputs* whose values come with the
model: :func:`onnx_inputs` returns them by allocation name, ``core-teil run
model.onnx`` supplies them itself (an ``--input`` of the same name overrides
one), and :mod:`core_teil.onnx_backend` passes them to the kernel.

Shapes are checked by the type checker, not here.  A MatMul of ``[n, k]`` and
``[q, m]`` becomes ``red 2 (diag 2 3 (prod A B))``, which T-Diag rejects with the
counterexample ``k = 1, q = 2`` (``ct.check`` raises, ``ct.prove`` refutes its
``typing`` obligation): the shapes that onnx's strict shape inference accepts
without asking ``k == q``.  A symbolic extent broadcasts only against itself or a
literal 1 (like the einsum frontend's ``...``): ``[n] + [m]`` is refuted with
``n = 1, m = 2``, although numpy would broadcast it at ``n = 1``, because one
program must be right for every parameter value.  Errors name the ONNX node
instead of a line and column: every span of the program carries
``node 'mm' (MatMul)`` (:class:`core_teil.errors.Span`), and its line and column
point into the program as ``core-teil from-onnx`` prints it (:attr:`OnnxProgram.source`).

What this module refuses itself (it cannot build a program): an unsupported op, a
non-float tensor, a dimension without ``dim_value`` or ``dim_param``, an extent 0,
axes or shapes computed at run time (``TeilInputError``, exit 2); an axis out of
range, a ``perm`` that is no permutation, a ``Squeeze`` of an extent that is not 1
(``TeilTypeError``, exit 1).  And an invalid model (``TeilInputError``, exit 2, naming
the node, initializer or graph input): a name that is not UTF-8; a node that
``onnx.checker.check_node`` refuses in the model's opset (a count of inputs outside
its schema's, an attribute unknown or of the wrong type, a required one missing); a
malformed tensor (``onnx.checker.check_tensor``, then numpy); operands of one op with
different element types, or a graph output declared with another one than its node
computes; a name listed twice; an ``Add``/``Sub``/``Mul``/``Div``/``Gemm`` of an opset
before 7, whose legacy ``broadcast``/``axis`` attributes mean something else than
numpy's broadcasting.  ``onnx.checker.check_model`` itself is not run: it insists on a
declared shape for every graph output (which the translation computes), and its
``full_check`` runs onnx's shape inference, which would refuse with exit 2 the
mismatches that the type checker refutes naming the rule and a counterexample (and which
loops forever on an Einsum equation such as ``"i$->i"``, onnx 1.23).

A name that had to change to become an identifier appears in messages as the model
wrote it: the spans of a statement and of an allocation end in
``['input.1' as input_1, 'batch size' as batch_size]`` for the names they involve.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from ..errors import Span, TeilError, TeilInputError, TeilTypeError
from ..lang.syntax import (
    Alloc,
    Decl,
    Dim,
    Elem,
    ExpaAt,
    Expr,
    Param,
    Program,
    ProjAt,
    RedAt,
    Shape,
    Stmt,
    TranspAt,
    Var,
)

__all__ = ["ONNX_FILE", "SUPPORTED_OPS", "OnnxProgram", "from_onnx", "onnx_inputs", "translate"]

#: The file name of a model given as a ``ModelProto`` rather than a path.
ONNX_FILE = "<onnx>"

#: The ops translated (``Constant`` only for constants); anything else is refused naming node and op.
SUPPORTED_OPS = ("Add", "Constant", "Div", "Einsum", "Expand", "Gemm", "Identity", "MatMul", "Mul", "ReduceSum",
                 "Squeeze", "Sub", "Transpose", "Unsqueeze")

#: What a graph input that is no tensor is, in words (``TypeProto``'s ``value`` field).
_KINDS = {"sequence_type": "a sequence", "optional_type": "an optional", "map_type": "a map",
          "sparse_tensor_type": "a sparse tensor", "opaque_type": "an opaque value"}

#: ``TensorProto`` element types computed on as reals (float64; SPEC.md section 4).
_FLOAT_TYPE_NAMES = ("FLOAT", "DOUBLE", "FLOAT16", "BFLOAT16")

#: The ops that broadcast numpy's way only since opset 7; before, by their ``broadcast`` and ``axis``
#: attributes (``B`` aligned at ``axis``), which would be translated with the wrong meaning.
_LEGACY_BROADCAST = ("Add", "Sub", "Mul", "Div", "Gemm")
_NUMPY_BROADCAST_OPSET = 7

#: ``Constant``'s value attributes; ONNX requires exactly one.
_CONSTANT_VALUES = ("value", "value_float", "value_floats", "value_int", "value_ints", "value_string",
                    "value_strings", "sparse_value")


def _onnx() -> Any:
    try:
        import onnx
    except ImportError:  # pragma: no cover - onnx is in the locked environment
        raise TeilInputError("the ONNX frontend needs the onnx package: pip install 'core-teil[onnx]'") from None
    return onnx


# --------------------------------------------------------------------------
# The result
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class OnnxProgram:
    """A translated model: the program and what running it needs besides the graph inputs.

    ``source`` is ``ct.format(program)``, the text the spans' lines and columns point
    into; ``constants`` the values of the ``input`` allocations that come with the
    model (initializers, ``Constant`` nodes, ``Gemm``'s alpha and beta), float64, by
    allocation name; ``inputs`` and ``outputs`` pair each graph input and output's
    ONNX name with its allocation (outputs also with their ONNX element type);
    ``defaults`` pairs each graph input that is also an initializer (IR < 4 lists
    initializers as inputs) and is read as data with its allocation: its value is a
    constant of the model that a caller may override, not an input it must feed."""

    program: Program
    source: str
    constants: dict[str, np.ndarray]
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str, int], ...]
    params: tuple[tuple[str, str], ...]
    defaults: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class _Tensor:
    """A value of the graph as the translation sees it.

    ``alloc`` is its allocation (``None`` for a constant not read as data yet, or a
    non-float graph input); ``value`` is known for initializers and ``Constant``
    outputs; ``origin`` says where it comes from, for messages."""

    name: str
    alloc: str | None
    shape: Shape | None
    elem_type: int
    origin: str
    value: np.ndarray | None = None


# --------------------------------------------------------------------------
# Shapes: numpy broadcasting with TeIL operators (T-Proj, T-Expa)
# --------------------------------------------------------------------------


def broadcast_shape(a: Shape, b: Shape) -> Shape:
    """numpy's broadcast of ``a`` and ``b``, right-aligned.

    A literal 1 yields to the other extent; equal extents stay.  Any other pair is a
    mismatch that this function does not decide: it yields ``b``'s extent, and the type
    checker rejects the statement (T-Elem, or OK-Stmt for ``Expand``), with a
    counterexample when an extent is symbolic."""
    r = max(len(a), len(b))
    pa: list[Dim | None] = [None] * (r - len(a)) + list(a)
    pb: list[Dim | None] = [None] * (r - len(b)) + list(b)
    out: list[Dim] = []
    for x, y in zip(pa, pb, strict=True):
        if x is not None and (y is None or y == 1):
            out.append(x)
        elif y is not None:
            out.append(y)  # x missing or 1, equal extents, or a mismatch that the checker rejects
    return tuple(out)


def broadcast_to(e: Expr, shape: Shape, out: Shape) -> Expr:
    """``e : shape`` broadcast to ``out`` (at least as long): ``proj i 1`` for a dimension of
    extent 1 that ``out`` widens (T-Proj), then ``expa i d`` for every dimension ``e`` lacks
    (T-Expa), in ascending position so that each lands where ``out`` has it."""
    off = len(out) - len(shape)
    present = [off + p for p in range(len(shape))]
    for p in range(len(shape) - 1, -1, -1):
        if shape[p] == 1 and out[off + p] != 1:
            e = ProjAt(p + 1, 1, e)
            del present[p]
    for q in range(len(out)):
        if q not in present:
            # every position below q is present now, so the new dimension is number q + 1
            e = ExpaAt(q + 1, out[q], e)
            present.insert(q, q)
    return e


def _axes(values: Sequence[int], rank: int, span: Span, op: str) -> list[int]:
    """ONNX axes (negative from the end) as 0-based positions; out of range or repeated: a type error."""
    out: list[int] = []
    for a in values:
        if not -rank <= a < rank:
            raise TeilTypeError(f"{op}: axis {a} is out of range for rank {rank} (axes are in "
                                f"[{-rank}, {rank - 1}])", span, op)
        a = a % rank
        if a in out:
            raise TeilTypeError(f"{op}: axis {a} is given twice", span, op)
        out.append(a)
    return out


# --------------------------------------------------------------------------
# Reading the model
# --------------------------------------------------------------------------


def _load(model_or_path: Any) -> tuple[Any, str]:
    """The ``ModelProto`` and the file name messages use, by ``onnx.load`` for a path."""
    onnx = _onnx()
    if isinstance(model_or_path, onnx.ModelProto):
        return model_or_path, ONNX_FILE
    if isinstance(model_or_path, onnx.GraphProto):
        return onnx.helper.make_model(model_or_path), ONNX_FILE
    if isinstance(model_or_path, bytes):
        try:
            return onnx.load_from_string(model_or_path), ONNX_FILE
        except Exception as exc:  # protobuf's DecodeError and friends: bad input, not a bug
            raise TeilInputError(f"not a readable ONNX model ({type(exc).__name__}: {exc})", Span(ONNX_FILE)) from None
    if isinstance(model_or_path, str | os.PathLike):
        path = os.fspath(model_or_path)
        where = Span(path)
        if not os.path.exists(path):
            raise TeilInputError(f"{path}: no such file", where)
        if os.path.isdir(path):
            raise TeilInputError(f"{path}: is a directory, not an .onnx model", where)
        try:
            return onnx.load(path), path
        except Exception as exc:  # DecodeError, OSError, external data missing: bad input
            raise TeilInputError(f"{path}: not a readable ONNX model ({type(exc).__name__}: {exc})", where) from None
    raise TeilInputError(f"from_onnx takes an onnx.ModelProto or the path of an .onnx file, not "
                         f"{type(model_or_path).__name__}")


def _quoted(value: str | bytes) -> str:
    """A string field quoted for a message.  Protobuf hands over a field that is not valid UTF-8
    as ``bytes``; its invalid bytes then show as ``\\xfe``."""
    if isinstance(value, bytes):
        return "'" + value.decode("utf-8", "backslashreplace") + "'"
    return repr(value)


def _node_label(node: Any, index: int) -> str:
    """``node 'mm' (MatMul)``; an unnamed node by its number and output."""
    op = _quoted(node.op_type)[1:-1]
    if node.name:
        return f"node {_quoted(node.name)} ({op})"
    out = f", output {_quoted(node.output[0])}" if len(node.output) and node.output[0] else ""
    return f"node #{index} ({op}{out})"


def _counts(low: int, high: int) -> str:
    """A schema's input count in words: ``2``, ``2 or 3``, ``1 or more``."""
    if low == high:
        return str(low)
    if high >= 2**31 - 1:  # onnx's "variadic"
        return f"{low} or more"
    return f"{low} or {high}" if high == low + 1 else f"{low} to {high}"


# --------------------------------------------------------------------------
# The translation
# --------------------------------------------------------------------------


class _Translator:
    """One pass over the graph in node order (ONNX graphs are topologically sorted)."""

    def __init__(self, model: Any, file: str) -> None:
        from ..lang.parser import KEYWORDS

        self.onnx = _onnx()
        self.model = model
        self.graph = model.graph
        self.file = file
        self.keywords = KEYWORDS
        self.float_types = {getattr(self.onnx.TensorProto, n) for n in _FLOAT_TYPE_NAMES}
        self.taken: set[str] = set()
        self.params: dict[str, str] = {}
        self.tensors: dict[str, _Tensor] = {}
        self.allocs: dict[str, Alloc] = {}  # in declaration order
        self.alloc_labels: dict[str, str] = {}
        self.constants: dict[str, np.ndarray] = {}
        self.stmts: list[Stmt] = []
        self.stmt_labels: list[str] = []
        self.out_names = {vi.name for vi in self.graph.output}
        self.names: dict[str, str] = {}  # ONNX tensor name -> allocation name
        self.written: dict[str, str] = {}  # allocation or parameter -> the ONNX name it stands for
        self.opset = 0  # the default domain's, set by run() once the names are known to be text
        self.context: Any = None  # onnx.checker's CheckerContext for the model, likewise

    # -- what the model must be before anything is read --

    def check_text(self) -> None:
        """Every name that the translation reads is text.  Protobuf hands over a string field that is
        not valid UTF-8 as ``bytes``; it is refused here, naming where it is, before it is used."""

        def need(value: str | bytes, what: str, where: str) -> None:
            if isinstance(value, bytes):
                raise TeilInputError(f"{what} {_quoted(value)} is not valid UTF-8 (ONNX names are UTF-8 strings)",
                                     Span(self.file, node=where), "onnx")

        for o in self.model.opset_import:
            need(o.domain, "the domain", "the model's opset_import")
        for kind, infos in (("graph input", self.graph.input), ("graph output", self.graph.output)):
            for i, vi in enumerate(infos, start=1):
                need(vi.name, "the name", f"{kind} #{i}")
                if vi.type.WhichOneof("value") == "tensor_type":
                    for d in vi.type.tensor_type.shape.dim:
                        need(d.dim_param, "the dim_param", f"{kind} {vi.name!r}")
        for i, init in enumerate(self.graph.initializer, start=1):
            need(init.name, "the name", f"initializer #{i}")
        for index, node in enumerate(self.graph.node, start=1):
            label = _node_label(node, index)
            for what, value in (("op_type", node.op_type), ("name", node.name), ("domain", node.domain)):
                need(value, f"its {what}", label)
            for k, name in enumerate(node.input, start=1):
                need(name, f"input {k}", label)
            for k, name in enumerate(node.output, start=1):
                need(name, f"output {k}", label)
            for a in node.attribute:
                need(a.name, "the attribute", label)

    def default_opset(self) -> int:
        """The model's opset of the default domain (``""``, alias ``ai.onnx``)."""
        versions = [int(o.version) for o in self.model.opset_import if o.domain in ("", "ai.onnx")]
        if versions:
            return max(versions)
        if self.model.ir_version >= 3:
            raise TeilInputError("the model imports no opset of the default domain (opset_import); a model of IR "
                                 "version 3 or later must say which it uses", Span(self.file, node="the model"), "onnx")
        return 1  # IR versions 1 and 2 have no opset_import: opset 1 (onnx/docs/Versioning.md)

    def checker_context(self) -> Any:
        """onnx.checker's context: the model's IR version and opsets."""
        ctx = self.onnx.checker.C.CheckerContext()
        ctx.ir_version = self.model.ir_version
        ctx.opset_imports = {**{o.domain: int(o.version) for o in self.model.opset_import}, "": self.opset}
        return ctx

    def tensor_value(self, proto: Any, what: str, span: Span) -> np.ndarray:
        """The value of a ``TensorProto`` (an initializer, a ``Constant``'s ``value``), checked by
        ``onnx.checker.check_tensor`` first: a malformed one -- data that does not fill its shape, an
        undefined element type -- is bad input, not a reshape error of numpy."""
        onnx = self.onnx
        if proto.data_location == onnx.TensorProto.EXTERNAL:
            # numpy_helper would read the file relative to the working directory
            raise TeilInputError(f"{what} keeps its data in an external file that is not loaded; give the model's "
                                 f"path (onnx.load reads the data beside it) or load the model with onnx.load",
                                 span, "onnx")
        try:
            onnx.checker.check_tensor(proto, self.context)
            return np.asarray(onnx.numpy_helper.to_array(proto))
        except Exception as exc:  # onnx's ValidationError, numpy's reshape and dtype errors: a malformed tensor
            raise TeilInputError(f"{what} is malformed: {str(exc).splitlines()[0]}", span, "onnx") from None

    def check_node(self, node: Any, span: Span) -> None:
        """The node against its op's schema in the model's opset (``onnx.checker.check_node``): the
        number of inputs and outputs, attributes known and of their types, required ones given."""
        onnx = self.onnx
        op = node.op_type
        if op in _LEGACY_BROADCAST and self.opset < _NUMPY_BROADCAST_OPSET:
            legacy = ("C broadcasts only by its legacy 'broadcast' attribute" if op == "Gemm" else
                      "B broadcasts only by its legacy 'broadcast' and 'axis' attributes (aligned at 'axis')")
            raise TeilInputError(f"{op} of opset {self.opset}: before opset {_NUMPY_BROADCAST_OPSET}, {legacy}, "
                                 f"not numpy's way; core-teil translates the {op} of opset "
                                 f"{_NUMPY_BROADCAST_OPSET} and later (convert the model with "
                                 f"onnx.version_converter.convert_version)", span, "onnx")
        try:
            schema = onnx.defs.get_schema(op, self.opset, "")
        except onnx.defs.SchemaError:
            raise TeilInputError(f"{op} does not exist in opset {self.opset} of the default domain, the model's",
                                 span, "onnx") from None
        if not schema.min_input <= len(node.input) <= schema.max_input:
            formal = ", ".join(i.name for i in schema.inputs)
            raise TeilInputError(f"{op} of opset {self.opset} takes {_counts(schema.min_input, schema.max_input)} "
                                 f"input(s) ({formal}), not {len(node.input)}", span, "onnx")
        if node.domain:  # "ai.onnx", the default domain by its other name, which the context does not import
            plain = onnx.NodeProto()
            plain.CopyFrom(node)
            plain.domain = ""
            node = plain
        try:
            onnx.checker.check_node(node, self.context)
        except onnx.checker.ValidationError as exc:
            raise TeilInputError(f"not a valid {op} node of opset {self.opset}: {str(exc).splitlines()[0]}",
                                 span, "onnx") from None

    # -- names --

    def ident(self, raw: str) -> str:
        """A fresh TeIL identifier for the ONNX name ``raw``."""
        s = re.sub(r"[^A-Za-z0-9_]", "_", raw) or "t"
        if s[0].isdigit():
            s = "_" + s
        if s in self.keywords:
            s += "_"
        base, k = s, 2
        while s in self.taken:
            s, k = f"{base}_{k}", k + 1
        self.taken.add(s)
        return s

    def alloc_name(self, tensor: str) -> str:
        """The allocation name of an ONNX tensor (``graph_inputs`` names them all first)."""
        if tensor not in self.names:
            self.names[tensor] = self.ident(tensor)
            self.written[self.names[tensor]] = tensor
        return self.names[tensor]

    def param(self, dim_param: str) -> str:
        if dim_param not in self.params:
            self.params[dim_param] = self.ident(dim_param)
            self.written[self.params[dim_param]] = dim_param
        return self.params[dim_param]

    def shown(self, d: Dim) -> str:
        """An extent in a message: a parameter as the model's ``dim_param`` writes it."""
        if isinstance(d, str) and self.written.get(d, d) != d:
            return repr(self.written[d])
        return str(d)

    def renamed(self, allocs: Sequence[str]) -> str:
        """`` ['input.1' as input_1, 'batch size' as batch_size]``: how the ONNX names of ``allocs``
        and of the parameters in their shapes were changed into identifiers, for the spans, so that
        every message about them also shows the names the model wrote ("" when none was changed)."""
        seen: list[str] = []
        for a in allocs:
            for name in (a, *(d for d in self.allocs[a].shape if isinstance(d, str))):
                if name not in seen and self.written.get(name, name) != name:
                    seen.append(name)
        return f" [{', '.join(f'{self.written[n]!r} as {n}' for n in seen)}]" if seen else ""

    # -- types and shapes --

    def type_name(self, elem_type: int) -> str:
        try:
            return str(self.onnx.TensorProto.DataType.Name(elem_type))
        except ValueError:
            return str(elem_type)

    def check_float(self, elem_type: int, what: str, span: Span) -> None:
        if elem_type not in self.float_types:
            raise TeilInputError(f"{what} has element type {self.type_name(elem_type)}; core-teil computes on "
                                 f"reals (float64), so it translates float, double, float16 and bfloat16 "
                                 f"tensors only", span, "onnx")

    def shape_of(self, vi: Any, span: Span) -> Shape:
        """A graph input's shape: literal extents and ``dim_param`` names (shape parameters).

        ``span`` names the input, so the messages do not repeat it."""
        kind = vi.type.WhichOneof("value")
        if kind != "tensor_type":
            what = _KINDS.get(kind, f"a {kind}") if kind else "of no declared type"
            raise TeilInputError(f"{vi.name!r} is {what}, not a tensor; core-teil translates tensors only",
                                 span, "onnx")
        tt = vi.type.tensor_type
        self.check_float(tt.elem_type, repr(vi.name), span)
        if not tt.HasField("shape"):
            raise TeilInputError(f"{vi.name!r} has no shape (its rank is unknown); core-teil needs the rank and "
                                 f"every extent, literal (dim_value) or named (dim_param)", span, "onnx")
        dims: list[Dim] = []
        for i, d in enumerate(tt.shape.dim, start=1):
            which = d.WhichOneof("value")
            if which == "dim_value" and d.dim_value >= 1:
                dims.append(int(d.dim_value))
            elif which == "dim_value":
                raise TeilInputError(f"dimension {i} of {vi.name!r} has extent {d.dim_value}; Core-TeIL extents "
                                     f"are >= 1 (SPEC.md section 1)", span, "onnx")
            elif which == "dim_param" and d.dim_param:
                dims.append(self.param(d.dim_param))
            else:
                raise TeilInputError(f"dimension {i} of {vi.name!r} is dynamic without a name; give it a "
                                     f"dim_param (it becomes a shape parameter) or a dim_value", span, "onnx")
        return tuple(dims)

    # -- declarations --

    def declare(self, name: str, shape: Shape, qual: Any, label: str) -> None:
        self.allocs[name] = Alloc(name, shape, qual)
        self.alloc_labels[name] = label

    def graph_inputs(self) -> None:
        for kind, names in (("graph input", [vi.name for vi in self.graph.input]),
                            ("initializer", [i.name for i in self.graph.initializer])):
            twice = sorted(n for n, k in Counter(names).items() if k > 1)
            if twice:
                raise TeilInputError(f"{kind} {twice[0]!r} is listed twice (ONNX graphs name each value once)",
                                     Span(self.file, node=f"{kind} {twice[0]!r}"), "onnx")
        for init in self.graph.initializer:
            label = f"initializer {init.name!r}"
            value = self.tensor_value(init, label, Span(self.file, node=label))
            self.tensors[init.name] = _Tensor(init.name, None, tuple(int(x) for x in value.shape), init.data_type,
                                              label, value)
        # Every tensor is named before any parameter or generated constant, so that it keeps its name.
        for name in [*(vi.name for vi in self.graph.input), *(i.name for i in self.graph.initializer),
                     *(o for n in self.graph.node for o in n.output if o), *(vi.name for vi in self.graph.output)]:
            self.alloc_name(name)
        for vi in self.graph.input:
            if vi.name in self.tensors:
                self.check_default(vi, self.tensors[vi.name])
                continue
            label = f"graph input {vi.name!r}"
            span = Span(self.file, node=label)
            kind = vi.type.WhichOneof("value")
            if kind == "tensor_type" and vi.type.tensor_type.elem_type not in self.float_types:
                # e.g. int64 axes fed at run time: refused where a node reads it (non-float, or non-constant)
                self.tensors[vi.name] = _Tensor(vi.name, None, None, vi.type.tensor_type.elem_type, label)
                continue
            alloc = self.alloc_name(vi.name)
            shape = self.shape_of(vi, span)
            self.tensors[vi.name] = _Tensor(vi.name, alloc, shape, vi.type.tensor_type.elem_type, label)
            self.declare(alloc, shape, "input", label)

    def check_default(self, vi: Any, t: _Tensor) -> None:
        """A graph input that is also an initializer (IR < 4 lists initializers as inputs): a constant
        of the model, whose value a caller may override, so its declaration must agree with the value."""
        label = f"graph input {vi.name!r}"
        kind = vi.type.WhichOneof("value")
        tt = vi.type.tensor_type
        declared = ([d.dim_value if d.WhichOneof("value") == "dim_value" else d.dim_param or "?"
                     for d in tt.shape.dim] if kind == "tensor_type" and tt.HasField("shape") else None)
        if kind != "tensor_type":
            what = _KINDS.get(kind, f"a {kind}") if kind else "of no declared type"
            problem = f"is {what}, but its initializer is a tensor"
        elif tt.elem_type and tt.elem_type != t.elem_type:
            problem = (f"is declared {self.type_name(tt.elem_type)}, but its initializer is "
                       f"{self.type_name(t.elem_type)}")
        elif declared is not None and (len(declared) != len(t.shape) or any(
                isinstance(d, int) and d != e for d, e in zip(declared, t.shape, strict=True))):
            problem = f"is declared with the shape {declared}, but its initializer has the shape {list(t.shape)}"
        else:
            return
        raise TeilInputError(f"{label} {problem}", Span(self.file, node=label), "onnx")

    def constant_alloc(self, alloc: str, value: np.ndarray, label: str) -> str:
        """``alloc``, an ``input`` allocation whose value comes with the model."""
        arr = np.array(value, dtype=np.float64)  # a copy: the caller's array stays the caller's
        self.constants[alloc] = arr
        self.declare(alloc, tuple(int(x) for x in arr.shape), "input", label)
        return alloc

    # -- reading a node's inputs --

    def tensor(self, node: Any, k: int, span: Span, what: str) -> _Tensor | None:
        name = node.input[k] if k < len(node.input) else ""
        if not name:
            return None
        t = self.tensors.get(name)
        if t is None:
            raise TeilInputError(f"{what} {name!r} is produced by no graph input, initializer or earlier node "
                                 f"(ONNX graphs list their nodes in topological order)", span, "onnx")
        return t

    def data(self, node: Any, k: int, span: Span, what: str = "") -> tuple[Var, Shape]:
        """Input ``k`` read as a tensor: its variable and shape (a constant gets its allocation now)."""
        what = what or f"input {k + 1}"
        t = self.tensor(node, k, span, what)
        if t is None:
            raise TeilInputError(f"{node.op_type} needs its {what}, which is missing", span, "onnx")
        if t.alloc is None:
            self.check_float(t.elem_type, f"{what} {t.name!r} ({t.origin})", span)
            if t.value is None or t.value.size == 0:
                raise TeilInputError(f"{what} {t.name!r} ({t.origin}) has an extent 0; Core-TeIL extents "
                                     f"are >= 1", span, "onnx")
            t = replace(t, alloc=self.constant_alloc(self.alloc_name(t.name), t.value, t.origin))
            self.tensors[t.name] = t
        assert t.shape is not None
        return Var(t.alloc), t.shape  # type: ignore[arg-type]

    def ints(self, node: Any, k: int, span: Span, what: str) -> list[int] | None:
        """Input ``k`` as constant integers (axes, a shape), or ``None`` when it is not given."""
        t = self.tensor(node, k, span, what)
        if t is None:
            return None
        if t.value is None:
            raise TeilInputError(f"{what} {t.name!r} is computed at run time ({t.origin}); core-teil needs it "
                                 f"constant: an initializer or a Constant node", span, "onnx")
        if not np.issubdtype(t.value.dtype, np.integer):
            raise TeilInputError(f"{what} {t.name!r} must be an integer tensor, not {t.value.dtype}", span, "onnx")
        return [int(v) for v in t.value.reshape(-1)]

    def scalar(self, raw: str, value: float, label: str) -> Var:
        """A constant scalar as an input allocation (TeIL has no numeric literals)."""
        return Var(self.constant_alloc(self.ident(raw), np.array(value, dtype=np.float64), label))

    # -- the graph --

    def run(self) -> OnnxProgram:
        from ..lang.parser import parse
        from ..lang.printer import format_program

        self.check_text()
        self.opset = self.default_opset()
        self.context = self.checker_context()
        self.graph_inputs()
        for index, node in enumerate(self.graph.node, start=1):
            self.node(node, index)
        outputs = self.graph_outputs()
        # the spans show the ONNX names that became other identifiers (with the final shapes' parameters)
        alloc_labels = {a: label + self.renamed([a]) for a, label in self.alloc_labels.items()}
        stmt_labels = [label + self.renamed([s.target, *_reads(s.expr)])
                       for s, label in zip(self.stmts, self.stmt_labels, strict=True)]
        decls: list[Decl] = [Param(tuple(self.params.values()))] if self.params else []
        # inputs (graph inputs, then constants in order of first use) before the nodes' allocations
        decls += sorted(self.allocs.values(), key=lambda a: a.qual != "input")
        # The program's name is not the model's path: ct.prove reads Program.file as the program's
        # text when it is given none, and a small model's bytes can be valid UTF-8.  Spans keep the path.
        name = self.file if self.file == ONNX_FILE else f"onnx:{self.file}"
        bare = Program("full", tuple(decls), tuple(self.stmts), file=name)
        text = format_program(bare)
        program = replace(_with_spans(parse(text, self.file), stmt_labels, alloc_labels), file=name)
        assert program == bare, "printing and parsing must give back the translated program"
        read = [(vi.name, t) for vi in self.graph.input
                if (t := self.tensors.get(vi.name)) is not None and t.alloc is not None]
        inputs = tuple((n, t.alloc) for n, t in read if t.value is None)
        defaults = tuple((n, t.alloc) for n, t in read if t.value is not None)
        return OnnxProgram(program, text, dict(self.constants), inputs, outputs, tuple(self.params.items()),
                           defaults)

    def node(self, node: Any, index: int) -> None:
        label = _node_label(node, index)
        span = Span(self.file, node=label)
        if node.domain not in ("", "ai.onnx"):
            raise TeilInputError(f"unsupported op {node.op_type!r} of domain {node.domain!r}: core-teil translates "
                                 f"the ops {', '.join(SUPPORTED_OPS)} of the default domain", span, "onnx")
        if node.op_type not in _HANDLERS:
            raise TeilInputError(f"unsupported op {node.op_type!r}: core-teil translates "
                                 f"{', '.join(SUPPORTED_OPS)}", span, "onnx")
        outs = [o for o in node.output if o]
        if len(node.output) != 1 or not outs:
            raise TeilInputError(f"{node.op_type} with {len(outs)} outputs; core-teil translates nodes with one "
                                 f"output", span, "onnx")
        self.check_node(node, span)
        out = node.output[0]
        if out in self.tensors:
            raise TeilInputError(f"{out!r} is produced twice (ONNX graphs assign each name once)", span, "onnx")
        attrs = {a.name: self.onnx.helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "Constant":
            self.constant_node(node, attrs, label, span)
            return
        expr, shape, elem_type = _HANDLERS[node.op_type](self, node, attrs, span)
        alloc = self.alloc_name(out)
        self.tensors[out] = _Tensor(out, alloc, shape, elem_type, label)
        self.declare(alloc, shape, "output" if out in self.out_names else None, label)
        self.stmts.append(Stmt(alloc, expr))
        self.stmt_labels.append(label)

    def constant_node(self, node: Any, attrs: dict[str, Any], label: str, span: Span) -> None:
        """``Constant``: no statement; its value is read like an initializer's.  ``value_float(s)`` is a
        FLOAT tensor, ``value_int(s)`` an INT64 one (the ONNX operator spec)."""
        onnx = self.onnx
        given = [a for a in _CONSTANT_VALUES if a in attrs]
        if len(given) > 1:
            raise TeilInputError(f"Constant with the value attributes {', '.join(given)}; it takes exactly one",
                                 span, "onnx")
        if "value" in attrs:
            value = self.tensor_value(attrs["value"], f"the value of {label}", span)
            elem_type = attrs["value"].data_type
        elif "value_float" in attrs or "value_floats" in attrs:
            value = np.array(attrs.get("value_float", attrs.get("value_floats")), dtype=np.float32)
            elem_type = onnx.TensorProto.FLOAT
        elif "value_int" in attrs or "value_ints" in attrs:
            value = np.array(attrs.get("value_int", attrs.get("value_ints")), dtype=np.int64)
            elem_type = onnx.TensorProto.INT64
        else:
            raise TeilInputError(f"Constant with attribute(s) {', '.join(attrs) or 'none'}; core-teil reads "
                                 f"value, value_float(s) and value_int(s)", span, "onnx")
        out = node.output[0]
        self.tensors[out] = _Tensor(out, None, tuple(int(x) for x in value.shape), elem_type,
                                    f"constant of {label}", value)

    def graph_outputs(self) -> tuple[tuple[str, str, int], ...]:
        if not len(self.graph.output):
            raise TeilInputError("the graph has no outputs", Span(self.file, node="the graph"), "onnx")
        out = []
        for vi in self.graph.output:
            label = f"graph output {vi.name!r}"
            t = self.tensors.get(vi.name)
            if t is None:
                raise TeilInputError(f"{label} is produced by no node", Span(self.file, node=label), "onnx")
            if t.alloc is None or self.allocs[t.alloc].qual != "output":
                raise TeilInputError(f"{label} is {t.origin}, not computed by a node; core-teil needs an output "
                                     f"that a node computes (add an Identity node)", Span(self.file, node=label),
                                     "onnx")
            a = self.allocs[t.alloc]
            self.allocs[t.alloc] = replace(a, shape=self.declared(vi, a.shape))
            kind = vi.type.WhichOneof("value")
            declared_type = vi.type.tensor_type.elem_type if kind == "tensor_type" else 0
            if declared_type and declared_type != t.elem_type:
                raise TeilInputError(f"{label} is declared {self.type_name(declared_type)}, but {t.origin} computes "
                                     f"{self.type_name(t.elem_type)} (an op's output has the type of its inputs)",
                                     Span(self.file, node=label), "onnx")
            out.append((vi.name, t.alloc, t.elem_type))
        return tuple(out)

    def declared(self, vi: Any, computed: Shape) -> Shape:
        """A graph output's shape: the declared extents where they are literal or a parameter of the
        inputs (so that a model whose declared output disagrees with its nodes is rejected, OK-Stmt),
        the computed ones where the declaration is silent or names a parameter of its own."""
        if vi.type.WhichOneof("value") != "tensor_type" or not vi.type.tensor_type.HasField("shape"):
            return computed
        dims: list[Dim | None] = []
        for d in vi.type.tensor_type.shape.dim:
            which = d.WhichOneof("value")
            if which == "dim_value" and d.dim_value >= 1:
                dims.append(int(d.dim_value))
            elif which == "dim_param" and d.dim_param in self.params:
                dims.append(self.params[d.dim_param])
            else:
                dims.append(None)
        if len(dims) == len(computed):
            return tuple(c if x is None else x for x, c in zip(dims, computed, strict=True))
        if None not in dims:
            return tuple(d for d in dims if d is not None)
        return computed

    # -- einsum, shared by Einsum, MatMul and Gemm --

    def einsum(self, subscripts: str, operands: Sequence[tuple[Var, Shape]], span: Span,
               what: str) -> tuple[Expr, Shape]:
        """The einsum frontend's lowering (steps 1-5 of :mod:`core_teil.frontends.einsum`).

        Extents are *not* compared here: a label's extent is its first occurrence's, and
        the ``diag`` that identifies two occurrences carries the premise ``n_i = n_j``
        that T-Diag checks (with a counterexample when it can fail)."""
        from .einsum import _lower, parse_subscripts

        shapes = [s for _, s in operands]
        try:
            spec = parse_subscripts(subscripts, shapes)
        except TeilError as err:
            raise type(err)(f"{what} {subscripts!r}: {err.message}", span, err.rule) from None
        extent: dict[str, Dim] = {}
        for labels, shape in zip(spec.operands, shapes, strict=True):
            for lab, d in zip(labels, shape, strict=True):
                if not (lab.from_ellipsis and d == 1):  # a '...' extent 1 broadcasts (numpy)
                    extent.setdefault(lab.label, d)
        for labels in spec.operands:
            for lab in labels:
                extent.setdefault(lab.label, 1)
        expr, _ = _lower(spec, shapes, [v.name for v, _ in operands], extent)
        return expr, tuple(extent[c] for c in spec.output)


# --------------------------------------------------------------------------
# One function per op: (translator, node, attributes, span) -> (expr, shape, element type)
# --------------------------------------------------------------------------

Result = tuple[Expr, Shape, int]


def _elem_type(tr: _Translator, node: Any, span: Span) -> int:
    """The element type of the node's output: its data operands' one type ``T`` (ONNX's type
    constraint of every translated op), read after the operands (``tr.data`` checked that each is a float)."""
    op = node.op_type
    ks = [0] if op in ("Expand", "ReduceSum", "Squeeze", "Unsqueeze") else range(len(node.input))
    types = {node.input[k]: tr.tensors[node.input[k]].elem_type for k in ks if node.input[k]}
    if len(set(types.values())) > 1:
        listed = ", ".join(f"{name!r} is {tr.type_name(t)}" for name, t in types.items())
        raise TeilInputError(f"{op}'s operands must have one element type (ONNX's type constraint T): {listed}",
                             span, "onnx")
    return next(iter(types.values()))


def op_identity(tr: _Translator, node: Any, attrs: dict[str, Any], span: Span) -> Result:
    """``Identity``: the variable (T-Var)."""
    x, s = tr.data(node, 0, span)
    return x, s, _elem_type(tr, node, span)


def _elementwise(op: Any) -> Any:
    def translate(tr: _Translator, node: Any, attrs: dict[str, Any], span: Span) -> Result:
        """``Add``/``Sub``/``Mul``/``Div``: T-Elem of the operands broadcast as numpy does (T-Proj, T-Expa).

        ``Div`` is TeIL's controlled division (report Definition 8): ``0/0 = 0`` where
        IEEE gives NaN."""
        a, sa = tr.data(node, 0, span, "operand A")
        b, sb = tr.data(node, 1, span, "operand B")
        out = broadcast_shape(sa, sb)
        return Elem(op, broadcast_to(a, sa, out), broadcast_to(b, sb, out)), out, _elem_type(tr, node, span)

    translate.__name__ = f"op_{op}"
    return translate


def op_transpose(tr: _Translator, node: Any, attrs: dict[str, Any], span: Span) -> Result:
    """``Transpose``: output dimension ``i`` is input dimension ``perm[i]``; swaps (T-Transp)."""
    x, s = tr.data(node, 0, span)
    r = len(s)
    perm = [int(p) for p in attrs.get("perm", range(r - 1, -1, -1))]
    if sorted(perm) != list(range(r)):
        raise TeilTypeError(f"Transpose: perm {perm} is not a permutation of 0..{r - 1} (the input has rank {r})",
                            span, "T-Transp")
    e: Expr = x
    cur = list(range(r))
    for target, want in enumerate(perm):  # selection sort by swaps, as the einsum frontend's step 5
        pos = cur.index(want)
        if pos != target:
            e = TranspAt(target + 1, pos + 1, e)
            cur[target], cur[pos] = cur[pos], cur[target]
    return e, tuple(s[p] for p in perm), _elem_type(tr, node, span)


def op_matmul(tr: _Translator, node: Any, attrs: dict[str, Any], span: Span) -> Result:
    """``MatMul`` (numpy.matmul): the einsum ``...ij,...jk->...ik``; the batch dimensions under
    ``...`` broadcast (a literal 1 is projected, T-Proj); a 1-D operand is a vector
    (``j,...jk->...k``), not a matrix with a dimension that is then removed."""
    a, sa = tr.data(node, 0, span, "operand A")
    b, sb = tr.data(node, 1, span, "operand B")
    if not sa or not sb:
        raise TeilTypeError(f"MatMul needs operands of rank >= 1, not {len(sa)} and {len(sb)}", span, "MatMul")
    lhs = "j" if len(sa) == 1 else "...ij"
    rhs = "j" if len(sb) == 1 else "...jk"
    out = ("..." if len(sa) > 1 or len(sb) > 1 else "") + ("i" if len(sa) > 1 else "") + ("k" if len(sb) > 1 else "")
    e, shape = tr.einsum(f"{lhs},{rhs}->{out}", [(a, sa), (b, sb)], span, "MatMul as the einsum")
    return e, shape, _elem_type(tr, node, span)


def op_gemm(tr: _Translator, node: Any, attrs: dict[str, Any], span: Span) -> Result:
    """``Gemm``: ``alpha * A' B' + beta * C``, ``A'``/``B'`` transposed by transA/transB.

    The product is the einsum ``ij,jk->ik`` (T-Prod, T-Diag, T-Red+), scaled by
    ``mul alpha`` (T-SMul, ``alpha`` a scalar input: TeIL has no literals); ``C``
    broadcasts to ``[M, N]`` (unidirectionally: T-Proj, T-Expa) and is added (T-Elem)
    after ``mul beta``.  ``beta = 0`` drops ``C`` (as onnx's reference does); a factor
    1 is left out."""
    a, sa = tr.data(node, 0, span, "operand A")
    b, sb = tr.data(node, 1, span, "operand B")
    if len(sa) != 2 or len(sb) != 2:
        raise TeilTypeError(f"Gemm multiplies matrices; A has rank {len(sa)} and B rank {len(sb)}", span, "Gemm")
    subscripts = ("ji" if attrs.get("transA", 0) else "ij") + "," + ("kj" if attrs.get("transB", 0) else "jk") + "->ik"
    e, out = tr.einsum(subscripts, [(a, sa), (b, sb)], span, "Gemm's product as the einsum")
    alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))
    base = node.output[0]
    label = span.node
    if alpha != 1.0:
        e = Elem("mul", tr.scalar(f"{base}_alpha", alpha, f"alpha of {label}"), e)
    c = tr.tensor(node, 2, span, "operand C")
    if c is not None and beta != 0.0:
        cv, sc = tr.data(node, 2, span, "operand C")
        if len(sc) > 2:
            raise TeilTypeError(f"Gemm's C must broadcast to a matrix; it has rank {len(sc)}", span, "Gemm")
        ce = broadcast_to(cv, sc, out)
        if beta != 1.0:
            ce = Elem("mul", tr.scalar(f"{base}_beta", beta, f"beta of {label}"), ce)
        e = Elem("add", e, ce)
    return e, out, _elem_type(tr, node, span)


def op_einsum(tr: _Translator, node: Any, attrs: dict[str, Any], span: Span) -> Result:
    """``Einsum``: the einsum frontend's lowering of ``equation`` (T-Diag, T-Prod, T-Red+, T-Transp)."""
    equation = attrs.get("equation")
    if equation is None:
        raise TeilInputError("Einsum without its equation attribute", span, "onnx")
    if isinstance(equation, bytes):
        try:
            equation = equation.decode("utf-8")
        except UnicodeDecodeError:
            raise TeilInputError(f"Einsum's equation {_quoted(equation)} is not valid UTF-8", span, "onnx") from None
    operands = [tr.data(node, k, span, f"operand {k + 1}") for k in range(len(node.input))]
    e, shape = tr.einsum(equation, operands, span, "Einsum equation")
    return e, shape, _elem_type(tr, node, span)


def _axes_of(tr: _Translator, node: Any, attrs: dict[str, Any], span: Span) -> list[int] | None:
    """Axes as the input ``axes`` (opset >= 13; a constant) or the attribute (older opsets)."""
    given = tr.ints(node, 1, span, "axes")
    if given is not None:
        return given
    return [int(a) for a in attrs["axes"]] if "axes" in attrs else None


def op_reduce_sum(tr: _Translator, node: Any, attrs: dict[str, Any], span: Span) -> Result:
    """``ReduceSum``: ``red i`` per axis, highest first (T-Red+); ``keepdims`` puts back
    ``expa i 1`` (T-Expa).  No axes: every axis, or none with ``noop_with_empty_axes``."""
    x, s = tr.data(node, 0, span, "data")
    axes = _axes_of(tr, node, attrs, span)
    if not axes:
        if attrs.get("noop_with_empty_axes", 0):
            return x, s, _elem_type(tr, node, span)
        axes = list(range(len(s)))
    axes = _axes(axes, len(s), span, "ReduceSum")
    e: Expr = x
    for a in sorted(axes, reverse=True):
        e = RedAt(a + 1, e)
    shape = [d for i, d in enumerate(s) if i not in axes]
    if attrs.get("keepdims", 1):
        for a in sorted(axes):
            e = ExpaAt(a + 1, 1, e)
            shape.insert(a, 1)
    return e, tuple(shape), _elem_type(tr, node, span)


def op_unsqueeze(tr: _Translator, node: Any, attrs: dict[str, Any], span: Span) -> Result:
    """``Unsqueeze``: ``expa i 1`` per axis of the output, lowest first (T-Expa)."""
    x, s = tr.data(node, 0, span, "data")
    axes = _axes_of(tr, node, attrs, span)
    if axes is None:
        raise TeilInputError("Unsqueeze needs its axes", span, "onnx")
    rank = len(s) + len(axes)
    e: Expr = x
    shape = list(s)
    for a in sorted(_axes(axes, rank, span, "Unsqueeze")):
        e = ExpaAt(a + 1, 1, e)
        shape.insert(a, 1)
    return e, tuple(shape), _elem_type(tr, node, span)


def op_squeeze(tr: _Translator, node: Any, attrs: dict[str, Any], span: Span) -> Result:
    """``Squeeze``: ``proj i 1`` per axis, highest first (T-Proj), each of extent 1.

    An axis whose extent is a parameter is refused with the counterexample ``= 2``:
    one program must be right for every value.  Without axes, every literal 1 goes,
    and a symbolic extent is refused (whether it goes would depend on its value)."""
    x, s = tr.data(node, 0, span, "data")
    axes = _axes_of(tr, node, attrs, span)
    if axes is None:
        symbolic = [tr.shown(d) for d in s if isinstance(d, str)]
        if symbolic:
            raise TeilInputError(f"Squeeze without axes of a shape with the parameter(s) {', '.join(symbolic)}: "
                                 f"which dimensions it removes would depend on their values; give the axes",
                                 span, "Squeeze")
        axes = [i for i, d in enumerate(s) if d == 1]
    axes = _axes(axes, len(s), span, "Squeeze")
    for a in axes:
        d = s[a]
        if isinstance(d, str):
            shown = tr.shown(d)
            raise TeilTypeError(f"Squeeze: axis {a} has extent {shown}; only an extent 1 can be removed, and {shown} "
                                f"== 1 does not hold for all parameter values; counterexample: {shown} = 2", span,
                                "Squeeze", counterexample={d: 2})
        if d != 1:
            raise TeilTypeError(f"Squeeze: axis {a} has extent {d}; only an extent 1 can be removed", span, "Squeeze")
    e: Expr = x
    for a in sorted(axes, reverse=True):
        e = ProjAt(a + 1, 1, e)
    return e, tuple(d for i, d in enumerate(s) if i not in axes), _elem_type(tr, node, span)


def op_expand(tr: _Translator, node: Any, attrs: dict[str, Any], span: Span) -> Result:
    """``Expand``: ``data`` broadcast with the constant ``shape`` (both ways, as numpy): T-Proj, T-Expa.

    Where the extents differ and neither is 1, the shape's extent is the output's,
    and OK-Stmt rejects the statement (with a counterexample when one is symbolic)."""
    x, s = tr.data(node, 0, span, "data")
    target = tr.ints(node, 1, span, "shape")
    if target is None:
        raise TeilInputError("Expand needs its shape", span, "onnx")
    given = tr.tensors[node.input[1]].value
    if given is not None and given.ndim != 1:
        raise TeilInputError(f"Expand's shape {node.input[1]!r} must be a 1-D tensor, not one of shape "
                             f"{list(given.shape)}", span, "onnx")
    if any(d < 1 for d in target):
        raise TeilTypeError(f"Expand: shape {target} has an extent below 1; Core-TeIL extents are >= 1", span,
                            "Expand")
    out = broadcast_shape(s, tuple(target))
    return broadcast_to(x, s, out), out, _elem_type(tr, node, span)


_HANDLERS: dict[str, Any] = {
    "Identity": op_identity,
    "Add": _elementwise("add"),
    "Sub": _elementwise("sub"),
    "Mul": _elementwise("mul"),
    "Div": _elementwise("div"),
    "Transpose": op_transpose,
    "MatMul": op_matmul,
    "Gemm": op_gemm,
    "Einsum": op_einsum,
    "ReduceSum": op_reduce_sum,
    "Unsqueeze": op_unsqueeze,
    "Squeeze": op_squeeze,
    "Expand": op_expand,
    "Constant": None,  # handled by _Translator.constant_node
}


# --------------------------------------------------------------------------
# Spans: the node's name, and the position in the printed program
# --------------------------------------------------------------------------


def _reads(e: Expr) -> list[str]:
    """The variables that ``e`` reads, in order of appearance."""
    if isinstance(e, Var):
        return [e.name]
    return [v for f in fields(e) if isinstance(getattr(e, f.name), Expr) for v in _reads(getattr(e, f.name))]


def _respan(e: Expr, label: str) -> Expr:
    """``e`` with every span naming the node (the parser's line and column kept)."""
    kids = {f.name: _respan(getattr(e, f.name), label) for f in fields(e)
            if f.name != "span" and isinstance(getattr(e, f.name), Expr)}
    return replace(e, span=replace(e.span, node=label), **kids)


def _with_spans(parsed: Program, stmt_labels: Sequence[str], alloc_labels: dict[str, str]) -> Program:
    decls: list[Decl] = []
    for d in parsed.decls:
        label = alloc_labels.get(d.name, "") if isinstance(d, Alloc) else "the graph inputs' dim_params"
        decls.append(replace(d, span=replace(d.span, node=label)))
    stmts = tuple(Stmt(s.target, _respan(s.expr, label), span=replace(s.span, node=label))
                  for s, label in zip(parsed.stmts, stmt_labels, strict=True))
    return Program(parsed.dialect, tuple(decls), stmts, file=parsed.file)


# --------------------------------------------------------------------------
# The public functions
# --------------------------------------------------------------------------


def translate(model_or_path: Any) -> OnnxProgram:
    """The program of an ONNX model (a ``ModelProto``, or the path of an ``.onnx`` file) and
    what running it needs: the initializers' values, the graph's inputs and outputs."""
    model, file = _load(model_or_path)
    return _Translator(model, file).run()


def from_onnx(model_or_path: Any) -> Program:
    """``ct.from_onnx("model.onnx")``: the graph as a full-TeIL program (module docstring).

    Raises :class:`TeilInputError` for what cannot be translated (an unsupported op,
    a non-float tensor, an unnamed dynamic dimension, non-constant axes) and
    :class:`TeilTypeError` for ranks and axes that cannot be right; every other shape
    mismatch is left to ``ct.check`` and ``ct.prove``, whose errors name the node."""
    return translate(model_or_path).program


def onnx_inputs(model_or_path: Any) -> dict[str, np.ndarray]:
    """The values that come with the model -- initializers, ``Constant`` nodes, Gemm's alpha and
    beta -- as float64 arrays by allocation name: ``ct.evaluate(p, {**ct.onnx_inputs(m), "X": x})``."""
    return translate(model_or_path).constants
