"""An ``onnx.backend.base.Backend`` on core-teil (issue 12, item 4).

``prepare(model)`` returns a :class:`CoreTeilRep` whose ``run(inputs)`` translates the
model (:mod:`core_teil.frontends.onnx`), compiles it on the native engine
(``ct.compile``: proved by ``ct.prove`` first, paper Theorem 4.6) and runs it, so
that onnx's own conformance suite, ``onnx.backend.test.BackendTest``, runs its node
tests against core-teil (``tests/test_onnx_backend.py``)::

    import onnx.backend.test
    from core_teil.onnx_backend import CoreTeilBackend
    tests = onnx.backend.test.BackendTest(CoreTeilBackend, __name__)

Inputs are evaluated in float64 (SPEC.md section 4) whatever their float type
(float, double, float16, bfloat16) and each output is cast back to its declared
element type, so results agree with onnx's float32 references at the suite's
tolerances.  An input that is no real number (complex, a string) is refused, as is
a name that is no graph input.  Initializers and constants come from the model;
an initializer that the graph also lists as an input (IR < 4) is a constant that
a given value of that name overrides, as in onnx's reference evaluator.

Integer graph inputs -- the ``axes`` of ReduceSum, Squeeze and Unsqueeze and the
``shape`` of Expand since opset 13 are inputs, and the node tests feed them --
are taken as constants of the run that gives them: the model is specialised to
their values (an initializer each) and translated and compiled once per distinct
value.  A TeIL program's shapes are static; these values decide shapes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from .errors import TeilInputError
from .frontends.onnx import SUPPORTED_OPS, OnnxProgram, translate

__all__ = ["CoreTeilBackend", "CoreTeilRep", "prepare", "run_model", "run_node", "supports_device"]

ENGINES = ("native", "reference")


def _specialise(model: onnx.ModelProto, values: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """``model`` with the graph inputs ``values`` turned into initializers of those values (replacing
    the initializer of an input that has one)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    keep = [vi for vi in out.graph.input if vi.name not in values]
    del out.graph.input[:]
    out.graph.input.extend(keep)
    inits = [i for i in out.graph.initializer if i.name not in values]
    del out.graph.initializer[:]
    out.graph.initializer.extend(inits)
    out.graph.initializer.extend(onnx.numpy_helper.from_array(np.asarray(v), name) for name, v in values.items())
    return out


def _real(name: str, value: Any) -> np.ndarray:
    """A given input as float64 (every float type, and integers and booleans, exactly as numpy
    converts them); a complex number or a string is refused, not cut to its real part or a crash."""
    array = np.asarray(value)
    kind = array.dtype.kind
    if kind in "biuf" or array.dtype.name == "bfloat16":
        return np.asarray(array, dtype=np.float64)
    what = {"c": "complex numbers", "U": "strings", "S": "bytes", "O": "Python objects", "M": "dates",
            "m": "time spans"}.get(kind, f"values of dtype {array.dtype}")
    raise TeilInputError(f"graph input {name!r} is given {what} (dtype {array.dtype}); core-teil computes on "
                         f"reals (float64)")


#: The inputs that decide shapes, not values: ``(op, position)``; fed at run time since opset 13.
SHAPE_INPUTS = {"ReduceSum": 1, "Squeeze": 1, "Unsqueeze": 1, "Expand": 1}


class CoreTeilRep(BackendRep):
    """A prepared model: translated and compiled once per set of values of its shape inputs."""

    def __init__(self, model: onnx.ModelProto, engine: str = "native") -> None:
        if engine not in ENGINES:
            raise TeilInputError(f"engine must be 'native' or 'reference', not {engine!r}")
        self.model = model
        self.engine = engine
        inits = {i.name for i in model.graph.initializer}
        #: the inputs a caller feeds, in order (an initializer listed as an input is not one)
        self.input_names = [vi.name for vi in model.graph.input if vi.name not in inits]
        #: every name a caller may give: the inputs and the initializers listed as inputs (overriding them)
        self.known = {vi.name for vi in model.graph.input}
        #: graph inputs that are the axes or the shape of a node: folded into the model per run
        self.shape_inputs = {n.input[k] for n in model.graph.node if (k := SHAPE_INPUTS.get(n.op_type)) is not None
                             and len(n.input) > k and n.input[k] in self.known}
        self._prepared: dict[tuple, tuple[OnnxProgram, Any]] = {}

    def _given(self, inputs: Any) -> dict[str, Any]:
        if isinstance(inputs, Mapping):
            unknown = sorted(str(n) for n in inputs if n not in self.known)
            if unknown:
                raise TeilInputError(f"{unknown[0]!r} is no graph input of the model; its inputs are "
                                     f"{', '.join(map(repr, self.input_names)) or 'none'}")
            return dict(inputs)
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        if len(inputs) > len(self.input_names):
            raise TeilInputError(f"{len(inputs)} inputs given, but the model takes {len(self.input_names)} "
                                 f"({', '.join(self.input_names)})")
        return dict(zip(self.input_names, inputs, strict=False))

    def _program(self, shape_values: Mapping[str, np.ndarray]) -> tuple[OnnxProgram, Any]:
        key = tuple((n, v.dtype.str, v.shape, v.tobytes()) for n, v in sorted(shape_values.items()))
        entry = self._prepared.get(key)
        if entry is None:
            translated = translate(_specialise(self.model, shape_values) if shape_values else self.model)
            if self.engine == "native":
                from .native.engine import compile as native_compile

                kernel = native_compile(translated.program)
            else:
                kernel = None
            entry = self._prepared[key] = (translated, kernel)
        return entry

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        """The graph's outputs, in order, each in its declared element type."""
        given = self._given(inputs)
        translated, kernel = self._program({n: np.asarray(given[n]) for n in self.shape_inputs if n in given})
        args = dict(translated.constants)
        for name, alloc in translated.inputs:
            if name not in given:
                raise TeilInputError(f"graph input {name!r} is not given")
            # float64 evaluation of every float type (bfloat16 and float16 included)
            args[alloc] = _real(name, given[name])
        for name, alloc in translated.defaults:
            if name in given:
                args[alloc] = _real(name, given[name])
        if kernel is not None:
            results = kernel(**args)
        else:
            from .semantics.eval import evaluate

            results = evaluate(translated.program, args)
        return tuple(np.asarray(results[alloc]).astype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
                     for _, alloc, elem_type in translated.outputs)


class CoreTeilBackend(Backend):
    """``onnx.backend.base.Backend`` on core-teil's native engine (``engine="reference"``: eval.py)."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return device.upper() == "CPU" and all(
            n.domain in ("", "ai.onnx") and n.op_type in SUPPORTED_OPS for n in model.graph.node)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> CoreTeilRep:
        super().prepare(model, device, **kwargs)  # onnx.checker.check_model
        if not cls.supports_device(device):
            raise TeilInputError(f"core-teil runs on the CPU, not on {device!r}")
        return CoreTeilRep(model, kwargs.get("engine", "native"))

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU",
                  **kwargs: Any) -> tuple[np.ndarray, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
                 **kwargs: Any) -> tuple[np.ndarray, ...]:
        """One node as a model of its own: inputs typed by the arrays, outputs by ``outputs_info``."""
        arrays = [np.asarray(a) for a in (inputs.values() if isinstance(inputs, Mapping) else inputs)]
        names = [n for n in node.input if n]
        value_infos = [onnx.helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(a.dtype),
                                                          list(a.shape)) for n, a in zip(names, arrays, strict=False)]
        outs = []
        for k, name in enumerate(node.output):
            if outputs_info is not None and k < len(outputs_info):
                dtype, shape = outputs_info[k]
                outs.append(onnx.helper.make_tensor_value_info(
                    name, onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), list(shape)))
            else:
                outs.append(onnx.helper.make_tensor_value_info(
                    name, value_infos[0].type.tensor_type.elem_type if value_infos else onnx.TensorProto.FLOAT, None))
        opset = kwargs.pop("opset_version", None)
        graph = onnx.helper.make_graph([node], "run_node", value_infos, outs)
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)] if opset else None)
        return CoreTeilRep(model, kwargs.get("engine", "native")).run(arrays)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.upper() == "CPU"


prepare = CoreTeilBackend.prepare
run_model = CoreTeilBackend.run_model
run_node = CoreTeilBackend.run_node
supports_device = CoreTeilBackend.supports_device
