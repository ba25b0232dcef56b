"""Writes the example ONNX models of this folder (README, "ONNX models"); run from the repository root:

    .venv/bin/python examples/onnx/make_models.py

The models are built with ``onnx.helper`` and are deterministic (fixed weights), so that
running this again changes no file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
F = TensorProto.FLOAT


def model(name: str, nodes: list, inputs: list, outputs: list, inits: tuple = ()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="core-teil examples")
    m.ir_version = 10
    onnx.checker.check_model(m)
    onnx.shape_inference.infer_shapes(m, strict_mode=True)  # onnx accepts every one of them
    return m


def mlp() -> onnx.ModelProto:
    """A two-layer perceptron without activations: MatMul, Add (broadcast), Gemm (transB), ReduceSum."""
    rng = np.random.default_rng(12)
    w1 = numpy_helper.from_array(rng.standard_normal((4, 8)).astype(np.float32), "W1")
    b1 = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.standard_normal((3, 8)).astype(np.float32), "W2")
    b2 = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b2")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    return model("mlp", [
        helper.make_node("MatMul", ["X", "W1"], ["h"], name="layer1"),
        helper.make_node("Add", ["h", "b1"], ["h1"], name="bias1"),
        helper.make_node("Gemm", ["h1", "W2", "b2"], ["logits"], name="layer2", transB=1, alpha=0.5),
        helper.make_node("ReduceSum", ["logits", "axes"], ["score"], name="total", keepdims=0),
    ], [helper.make_tensor_value_info("X", F, ["batch", 4])],
        [helper.make_tensor_value_info("score", F, ["batch"])], (w1, b1, w2, b2, axes))


def matmul_bad() -> onnx.ModelProto:
    """MatMul of [n, k] and [q, m]: onnx's strict shape inference accepts it without k == q."""
    return model("matmul_bad", [helper.make_node("MatMul", ["A", "B"], ["C"], name="mm")],
                 [helper.make_tensor_value_info("A", F, ["n", "k"]), helper.make_tensor_value_info("B", F, ["q", "m"])],
                 [helper.make_tensor_value_info("C", F, ["n", "m"])])


def einsum_bad() -> onnx.ModelProto:
    """Einsum 'ii->i' of [n, m]: onnx's strict shape inference accepts it without n == m."""
    return model("einsum_bad", [helper.make_node("Einsum", ["A"], ["d"], name="diagonal", equation="ii->i")],
                 [helper.make_tensor_value_info("A", F, ["n", "m"])],
                 [helper.make_tensor_value_info("d", F, ["n"])])


def relu() -> onnx.ModelProto:
    """An op core-teil does not translate."""
    return model("relu", [helper.make_node("Relu", ["X"], ["Y"], name="act")],
                 [helper.make_tensor_value_info("X", F, [2, 3])], [helper.make_tensor_value_info("Y", F, [2, 3])])


if __name__ == "__main__":
    for make in (mlp, matmul_bad, einsum_bad, relu):
        path = HERE / f"{make.__name__}.onnx"
        onnx.save(make(), path)
        print(f"wrote {path.relative_to(HERE.parent.parent)}")
