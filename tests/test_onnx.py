"""The ONNX frontend (issue 12, item 3): models built with ``onnx.helper``, every supported op,
against numpy and onnx's reference evaluator, through ``ct.evaluate`` and ``ct.compile``;
symbolic models certified by ``ct.prove``; the ill-shaped MatMul and Einsum that onnx's
strict shape inference accepts, refuted naming the node; every refusal of the frontend;
``.onnx`` files in the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx")  # the onnx extra, which `make install` installs

import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import core_teil as ct
from core_teil.cli import main
from core_teil.frontends.onnx import OnnxProgram, broadcast_shape, translate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "onnx"
D, F, I64 = TensorProto.DOUBLE, TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(12)


def vi(name: str, shape: Any, elem: int = D) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def ints(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def make(nodes: list, inputs: list, outputs: list, inits: tuple = (), opset: int = 21) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10  # what the locked onnx's reference evaluator and checker read
    return model


def run_engines(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[list, list]:
    """The outputs of the reference engine (ct.evaluate) and the native one (ct.compile)."""
    t = translate(model)
    args = {**t.constants, **{alloc: feeds[name] for name, alloc in t.inputs}}
    evaluated = ct.evaluate(t.program, args)
    compiled = ct.compile(t.program)(**args)
    return [evaluated[a] for _, a, _ in t.outputs], [compiled[a] for _, a, _ in t.outputs]


def r(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def pos(*shape: int) -> np.ndarray:
    """Values away from 0, for divisions (TeIL's controlled 0/0 = 0 is not IEEE's NaN)."""
    return RNG.uniform(0.5, 2.0, shape)


# --------------------------------------------------------------------------
# Every supported op, against numpy and onnx's reference evaluator
# --------------------------------------------------------------------------


def _binary(op: str, sa: tuple, sb: tuple, fn: Any, b_values: Any = r) -> tuple:
    a, b = r(*sa), b_values(*sb)
    return (make([helper.make_node(op, ["A", "B"], ["Y"], name=op.lower())], [vi("A", sa), vi("B", sb)],
                 [vi("Y", None)]), {"A": a, "B": b}, [fn(a, b)])


def _unary(op: str, shape: tuple, fn: Any, inits: tuple = (), extra: tuple = (), opset: int = 21, **attrs: Any):
    x = r(*shape)
    node = helper.make_node(op, ["X", *extra], ["Y"], name="n", **attrs)
    return make([node], [vi("X", shape)], [vi("Y", None)], inits, opset), {"X": x}, [fn(x)]


def _einsum(eq: str, *shapes: tuple) -> tuple:
    names = [f"X{i}" for i in range(len(shapes))]
    arrays = [r(*s) for s in shapes]
    node = helper.make_node("Einsum", names, ["Y"], name="e", equation=eq)
    return (make([node], [vi(n, s) for n, s in zip(names, shapes, strict=True)], [vi("Y", None)]),
            dict(zip(names, arrays, strict=True)), [np.einsum(eq, *arrays)])


def _gemm(sa: tuple, sb: tuple, sc: tuple | None, alpha: float = 1.0, beta: float = 1.0, ta: int = 0,
          tb: int = 0) -> tuple:
    a, b = r(*sa), r(*sb)
    feeds = {"A": a, "B": b}
    ins, names = [vi("A", sa), vi("B", sb)], ["A", "B"]
    a2, b2 = (a.T if ta else a), (b.T if tb else b)
    want = alpha * a2 @ b2
    if sc is not None:
        c = r(*sc)
        feeds["C"], names = c, [*names, "C"]
        ins.append(vi("C", sc))
        want = want + beta * c if beta else want
    node = helper.make_node("Gemm", names, ["Y"], name="gemm", alpha=alpha, beta=beta, transA=ta, transB=tb)
    return make([node], ins, [vi("Y", None)]), feeds, [want]


def _reduce(shape: tuple, axes: list[int] | None, keepdims: int | None = 1, noop: int = 0, opset: int = 21) -> tuple:
    """``keepdims=None`` leaves the attribute out: ONNX's default is 1."""
    x = r(*shape)
    keep = {} if keepdims is None else {"keepdims": keepdims}
    if axes is None:
        want = x if noop else np.sum(x, keepdims=keepdims in (None, 1))
    else:
        want = np.sum(x, axis=tuple(axes), keepdims=keepdims in (None, 1))
    if opset < 13:  # axes an attribute
        attrs = {"axes": axes} if axes is not None else {}
        node = helper.make_node("ReduceSum", ["X"], ["Y"], name="sum", **keep, **attrs)
        inits: tuple = ()
    else:
        node = helper.make_node("ReduceSum", ["X", "axes"] if axes is not None else ["X"], ["Y"], name="sum",
                                noop_with_empty_axes=noop, **keep)
        inits = (ints("axes", axes),) if axes is not None else ()
    return make([node], [vi("X", shape)], [vi("Y", None)], inits, opset), {"X": x}, [want]


def _axes_op(op: str, shape: tuple, axes: list[int] | None, fn: Any, opset: int = 21) -> tuple:
    x = r(*shape)
    if opset < 13:
        node = helper.make_node(op, ["X"], ["Y"], name="n", **({"axes": axes} if axes is not None else {}))
        inits: tuple = ()
    else:
        node = helper.make_node(op, ["X", "axes"] if axes is not None else ["X"], ["Y"], name="n")
        inits = (ints("axes", axes),) if axes is not None else ()
    return make([node], [vi("X", shape)], [vi("Y", None)], inits, opset), {"X": x}, [fn(x)]


def _expand(shape: tuple, target: list[int]) -> tuple:
    x = r(*shape)
    node = helper.make_node("Expand", ["X", "shape"], ["Y"], name="expand")
    want = x * np.ones(target)
    return make([node], [vi("X", shape)], [vi("Y", None)], (ints("shape", target),)), {"X": x}, [want]


def _transpose_then_identity() -> tuple:
    """A 3-cycle ``perm`` whose output is no graph output: its shape is the translation's alone
    (a graph output's shape would be the inferred declaration), ``s[perm[i]]`` per dimension."""
    x = r(2, 3, 4)
    nodes = [helper.make_node("Transpose", ["X"], ["T"], name="t", perm=[1, 2, 0]),
             helper.make_node("Identity", ["T"], ["Y"], name="id")]
    return make(nodes, [vi("X", [2, 3, 4])], [vi("Y", None)]), {"X": x}, [x.transpose(1, 2, 0)]


def _chain() -> tuple:
    """Initializers, a Constant node and five ops in one graph."""
    x, w = r(3, 4), r(4, 5)
    const = helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.array([2.0]), "k"))
    nodes = [const,
             helper.make_node("MatMul", ["X", "W"], ["h"], name="mm"),
             helper.make_node("Mul", ["h", "k"], ["h2"], name="scale"),
             helper.make_node("Transpose", ["h2"], ["t"], name="tr"),
             helper.make_node("Unsqueeze", ["t", "ax"], ["u"], name="unsq"),
             helper.make_node("ReduceSum", ["u", "ax"], ["s"], name="sum", keepdims=0),
             helper.make_node("Identity", ["s"], ["Y"], name="id")]
    model = make(nodes, [vi("X", [3, 4])], [vi("Y", None)], (numpy_helper.from_array(w, "W"), ints("ax", [0])))
    return model, {"X": x}, [(x @ w * 2.0).T]


CASES: dict[str, tuple] = {
    "Add": _binary("Add", (3, 4), (3, 4), np.add),
    "Add-broadcast": _binary("Add", (2, 3, 4), (4,), np.add),
    "Add-broadcast-ones": _binary("Add", (3, 1), (1, 4), np.add),
    "Add-scalar": _binary("Add", (), (2, 3), np.add),
    "Add-scalars": _binary("Add", (), (), np.add),
    "Sub-broadcast": _binary("Sub", (2, 1, 4), (3, 1), np.subtract),
    "Mul-broadcast": _binary("Mul", (4,), (2, 3, 4), np.multiply),
    "Div-broadcast": _binary("Div", (2, 3), (3,), np.divide, pos),
    "Einsum-matmul": _einsum("ij,jk->ik", (2, 3), (3, 4)),
    "Einsum-diagonal": _einsum("...ii ->...i", (3, 5, 5)),
    "Einsum-trace": _einsum("ii", (4, 4)),
    "Einsum-batch": _einsum("bij, bjk -> bik", (2, 3, 4), (2, 4, 5)),
    "Einsum-implicit": _einsum("ij,jk", (2, 3), (3, 4)),
    "Einsum-three": _einsum("ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    "Einsum-scalar": _einsum("->", ()),
    "MatMul-2d": _binary("MatMul", (2, 3), (3, 4), np.matmul),
    "MatMul-batch-broadcast": _binary("MatMul", (3, 1, 2, 4), (1, 2, 4, 5), np.matmul),
    "MatMul-ranks-differ": _binary("MatMul", (2, 3), (4, 3, 5), np.matmul),
    "MatMul-1d-3d": _binary("MatMul", (4,), (2, 4, 3), np.matmul),
    "MatMul-4d-1d": _binary("MatMul", (1, 2, 4, 3), (3,), np.matmul),
    "MatMul-1d-1d": _binary("MatMul", (3,), (3,), np.matmul),
    "Gemm": _gemm((2, 3), (3, 4), (2, 4)),
    "Gemm-no-C": _gemm((2, 3), (3, 4), None),
    "Gemm-alpha-beta-vector": _gemm((2, 3), (3, 4), (4,), alpha=0.5, beta=-2.0),
    "Gemm-transA-transB-scalar-C": _gemm((3, 2), (4, 3), (), alpha=2.0, ta=1, tb=1),
    "Gemm-column-C": _gemm((2, 3), (3, 4), (2, 1), beta=3.0),
    "Gemm-beta-0": _gemm((2, 3), (3, 4), (2, 4), beta=0.0),
    "Transpose-perm": _unary("Transpose", (2, 3, 4), lambda x: x.transpose(1, 2, 0), perm=[1, 2, 0]),
    "Transpose-default": _unary("Transpose", (2, 3, 4), lambda x: x.transpose()),
    "Transpose-3-cycle-then-Identity": _transpose_then_identity(),
    "ReduceSum-axes": _reduce((2, 3, 4), [1]),
    "ReduceSum-negative-no-keepdims": _reduce((2, 3, 4), [-1, 0], keepdims=0),
    "ReduceSum-all": _reduce((2, 3), None),
    "ReduceSum-default-keepdims": _reduce((2, 3, 4), [1], keepdims=None),
    "ReduceSum-opset11-default-keepdims": _reduce((2, 3), [0], keepdims=None, opset=11),
    "ReduceSum-noop": _reduce((2, 3), None, noop=1),
    "ReduceSum-opset11-attribute": _reduce((2, 3, 4), [0, 2], keepdims=0, opset=11),
    "Unsqueeze": _axes_op("Unsqueeze", (3, 4), [0, 3], lambda x: x.reshape(1, 3, 4, 1)),
    "Unsqueeze-negative-unsorted": _axes_op("Unsqueeze", (3, 4), [-1, 1], lambda x: x.reshape(3, 1, 4, 1)),
    "Unsqueeze-opset11-attribute": _axes_op("Unsqueeze", (3,), [0], lambda x: x.reshape(1, 3), opset=11),
    "Squeeze": _axes_op("Squeeze", (1, 3, 1, 4), [0, -2], lambda x: x.reshape(3, 4)),
    "Squeeze-all-ones": _axes_op("Squeeze", (1, 3, 1), None, lambda x: x.reshape(3)),
    "Squeeze-opset11-attribute": _axes_op("Squeeze", (3, 1), [1], lambda x: x.reshape(3), opset=11),
    "Expand": _expand((3, 1), [2, 3, 4]),
    "Expand-bidirectional": _expand((2, 1, 4), [3, 1]),
    "Identity": _unary("Identity", (2, 3), lambda x: x),
    "chain-with-initializers-and-Constant": _chain(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_op_equals_numpy_and_onnx_reference(name: str) -> None:
    model, feeds, want = CASES[name]
    # a valid model, whose outputs' declared shapes (inferred by onnx) are checked too
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model)
    assert all(o.type.tensor_type.HasField("shape") for o in model.graph.output)
    reference = ReferenceEvaluator(model).run(None, feeds)
    evaluated, compiled = run_engines(model, feeds)
    for w, ref, e, c in zip(want, reference, evaluated, compiled, strict=True):
        assert e.shape == np.shape(w) == np.shape(ref), (e.shape, np.shape(w))
        np.testing.assert_allclose(ref, w, rtol=1e-12, atol=1e-12)  # the case computes what ONNX means
        np.testing.assert_allclose(e, w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(c, w, rtol=1e-12, atol=1e-12)


def _random_case(rng: np.random.Generator) -> tuple[str, list[int], list[int]]:
    """A broadcasting element-wise op or a MatMul on random (compatible) shapes with extents 1."""
    op = str(rng.choice(["Add", "Sub", "Mul", "Div", "MatMul"]))
    if op != "MatMul":
        out = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 5)))]

        def part() -> list[int]:
            rank = int(rng.integers(0, len(out) + 1))
            return [1 if rng.random() < 0.4 else d for d in out[len(out) - rank:]]

        return op, part(), part()
    k, ranks = int(rng.integers(1, 4)), (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    batch = [int(rng.integers(1, 4)) for _ in range(max(ranks) - 2)]
    shapes = []
    for rank, matrix in zip(ranks, ([int(rng.integers(1, 4)), k], [k, int(rng.integers(1, 4))]), strict=True):
        lead = [1 if rng.random() < 0.3 else d for d in batch[len(batch) - (rank - 2):]] if rank > 2 else []
        shapes.append(lead + (matrix if rank >= 2 else [k]))
    return op, shapes[0], shapes[1]


def test_random_broadcasts_and_matmuls_equal_numpy() -> None:
    """Seeded differential test: 80 random shapes, the reference engine (every 8th also native)."""
    rng = np.random.default_rng(2024)
    fns = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "MatMul": np.matmul}
    for trial in range(80):
        op, sa, sb = _random_case(rng)
        model = make([helper.make_node(op, ["A", "B"], ["Y"], name="n")], [vi("A", sa), vi("B", sb)],
                     [vi("Y", None)])
        a, b = rng.standard_normal(sa), rng.uniform(0.5, 2.0, sb)
        program, want = ct.from_onnx(model), fns[op](a, b)
        got = ct.evaluate(program, {"A": a, "B": b})["Y"]
        assert got.shape == np.shape(want) and np.allclose(got, want), (op, sa, sb)
        if trial % 8 == 0:
            np.testing.assert_allclose(ct.compile(program)(A=a, B=b)["Y"], want, rtol=1e-12, err_msg=str((op, sa, sb)))


def test_the_comparison_says_no_to_a_wrong_translation() -> None:
    """Gemm's alpha left out: the engines' result differs from numpy's (the tests above can fail)."""
    model, feeds, want = CASES["Gemm-alpha-beta-vector"]
    for a in model.graph.node[0].attribute:
        if a.name == "alpha":
            a.f = 1.0
    evaluated, compiled = run_engines(model, feeds)
    assert not np.allclose(evaluated[0], want[0]) and not np.allclose(compiled[0], want[0])


def test_lowering_uses_the_papers_operators() -> None:
    """MatMul is the paper's Fig. 7 program; broadcasting is proj and expa (T-Proj, T-Expa)."""
    model, _, _ = CASES["MatMul-2d"]
    assert ct.format(ct.from_onnx(model)).splitlines()[-1] == "Y = red 2 (diag 2 3 (prod A B))"
    model, _, _ = CASES["Add-broadcast-ones"]
    assert ct.format(ct.from_onnx(model)).splitlines()[-1] == "Y = add (expa 2 4 (proj 2 1 A)) (expa 1 3 (proj 1 1 B))"
    assert broadcast_shape((3, 1), (1, 4)) == (3, 4)
    assert broadcast_shape(("n",), (2, "n")) == (2, "n")


def test_division_is_teils_controlled_division() -> None:
    """Div is TeIL's div (report Definition 8): 0/0 = 0 where IEEE and onnx give NaN (docs/decisions.md)."""
    model, _, _ = CASES["Div-broadcast"]
    a, b = np.zeros((2, 3)), np.array([0.0, 1.0, 2.0])
    evaluated, compiled = run_engines(model, {"A": a, "B": b})
    np.testing.assert_array_equal(evaluated[0], np.zeros((2, 3)))
    np.testing.assert_array_equal(compiled[0], np.zeros((2, 3)))


def test_initializers_are_inputs_with_their_values() -> None:
    model, feeds, _ = CASES["chain-with-initializers-and-Constant"]
    t = translate(model)
    program = t.program
    assert {a.name for a in program.inputs()} == {"X", "W", "k"}
    assert [a.name for a in program.outputs()] == ["Y"]
    assert set(t.constants) == {"W", "k"} and t.inputs == (("X", "X"),)
    np.testing.assert_array_equal(ct.onnx_inputs(model)["W"], numpy_helper.to_array(model.graph.initializer[0]))
    # an initializer can be overridden like any input
    out = ct.evaluate(program, {**t.constants, "X": feeds["X"], "W": np.zeros((4, 5))})["Y"]
    np.testing.assert_array_equal(out, np.zeros((5, 3)))
    # and without its value, a run is refused (the value is not made up)
    with pytest.raises(ct.TeilInputError, match="'W'"):
        ct.evaluate(program, {"X": feeds["X"], "k": np.array([2.0])})


def _ir3(w: np.ndarray) -> onnx.ModelProto:
    """IR version 3 lists every initializer among the graph inputs too, here before X."""
    model = make([helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], [vi("W", [3, 2]), vi("X", [2, 3])],
                 [vi("Y", [2, 2])], (numpy_helper.from_array(w, "W"),), opset=8)
    model.ir_version = 3
    return model


def test_an_initializer_listed_as_a_graph_input_is_a_constant() -> None:
    """IR < 4: ``W`` is a graph input and an initializer; its value comes with the model (a default
    that may be overridden), so only X is to be fed."""
    w, x = r(3, 2), r(2, 3)
    model = _ir3(w)
    onnx.checker.check_model(model)
    t = translate(model)
    assert t.inputs == (("X", "X"),) and t.defaults == (("W", "W"),)
    np.testing.assert_array_equal(t.constants["W"], w)
    evaluated, compiled = run_engines(model, {"X": x})
    np.testing.assert_allclose(evaluated[0], x @ w, rtol=1e-12)
    np.testing.assert_allclose(compiled[0], x @ w, rtol=1e-12)
    # the declaration must agree with the value
    wrong = _ir3(w)
    wrong.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 5
    with pytest.raises(ct.TeilInputError, match=r"graph input 'W' is declared with the shape \[3, 5\], but its "
                                                r"initializer has the shape \[3, 2\]"):
        ct.from_onnx(wrong)
    wrong = _ir3(w)
    wrong.graph.input[0].type.tensor_type.elem_type = F
    with pytest.raises(ct.TeilInputError, match="graph input 'W' is declared FLOAT, but its initializer is DOUBLE"):
        ct.from_onnx(wrong)


def test_gemm_with_beta_0_ignores_c() -> None:
    """beta = 0 drops C, as onnx's reference does: 0 * inf and 0 * NaN would be NaN."""
    model, feeds, _ = CASES["Gemm-beta-0"]
    feeds = {**feeds, "C": np.full((2, 4), np.inf)}
    feeds["C"][0, 1] = np.nan
    (reference,) = ReferenceEvaluator(model).run(None, feeds)
    evaluated, compiled = run_engines(model, feeds)
    want = feeds["A"] @ feeds["B"]
    np.testing.assert_allclose(reference, want, rtol=1e-12)
    np.testing.assert_allclose(evaluated[0], want, rtol=1e-12)
    np.testing.assert_allclose(compiled[0], want, rtol=1e-12)
    assert "C" not in ct.format(ct.from_onnx(model)).splitlines()[-1]


def test_constant_value_floats_are_float_tensors() -> None:
    """A Constant's value_float(s) is a FLOAT tensor (the ONNX spec), so it multiplies a FLOAT input."""
    nodes = [helper.make_node("Constant", [], ["two"], value_float=2.0),
             helper.make_node("Constant", [], ["row"], value_floats=[0.5, 1.5, -2.0]),
             helper.make_node("Mul", ["X", "two"], ["h"], name="scale"),
             helper.make_node("Add", ["h", "row"], ["Y"], name="shift")]
    model = make(nodes, [vi("X", [2, 3], F)], [vi("Y", None, F)])
    onnx.checker.check_model(onnx.shape_inference.infer_shapes(model, strict_mode=True))
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.25, 8.0]], dtype=np.float32)
    (reference,) = ReferenceEvaluator(model).run(None, {"X": x})
    evaluated, compiled = run_engines(model, {"X": x.astype(np.float64)})
    np.testing.assert_array_equal(evaluated[0], reference)
    np.testing.assert_array_equal(compiled[0], reference)
    assert translate(model).outputs == (("Y", "Y", F),)


def test_broadcasting_leaves_an_extent_kept_at_1_alone() -> None:
    """Only an extent 1 that the output widens is projected (T-Proj): [2, 1, 4] + [1, 4] keeps A as it is
    and expands B once; no ``proj i 1`` undone by an ``expa i 1``."""
    model = make([helper.make_node("Add", ["A", "B"], ["Y"], name="add")], [vi("A", [2, 1, 4]), vi("B", [1, 4])],
                 [vi("Y", None)])
    assert ct.format(ct.from_onnx(model)).splitlines()[-1] == "Y = add A (expa 1 2 B)"


def test_names_that_sanitise_alike_stay_apart() -> None:
    """'a.b', 'a_b' and 'a:b' all sanitise to a_b: they become a_b, a_b_2 and a_b_3, three inputs."""
    nodes = [helper.make_node("Add", ["a.b", "a_b"], ["s"], name="first"),
             helper.make_node("Add", ["s", "a:b"], ["Y"], name="second")]
    model = make(nodes, [vi("a.b", [2]), vi("a_b", [2]), vi("a:b", [2])], [vi("Y", None)])
    t = translate(model)
    assert t.inputs == (("a.b", "a_b"), ("a_b", "a_b_2"), ("a:b", "a_b_3"))
    feeds = {"a.b": np.array([1.0, 2.0]), "a_b": np.array([10.0, 20.0]), "a:b": np.array([100.0, 200.0])}
    evaluated, compiled = run_engines(model, feeds)
    np.testing.assert_array_equal(evaluated[0], [111.0, 222.0])
    np.testing.assert_array_equal(compiled[0], [111.0, 222.0])


# --------------------------------------------------------------------------
# Symbolic models: dim_param names are shape parameters, certified by ct.prove
# --------------------------------------------------------------------------


def _symbolic() -> dict[str, onnx.ModelProto]:
    w = numpy_helper.from_array(r(4, 3), "W")
    return {
        "MatMul": make([helper.make_node("MatMul", ["A", "B"], ["C"], name="mm")],
                       [vi("A", ["n", "k"]), vi("B", ["k", "m"])], [vi("C", ["n", "m"])]),
        "batched MatMul": make([helper.make_node("MatMul", ["A", "B"], ["C"], name="bmm")],
                               [vi("A", ["b", "n", "k"]), vi("B", [1, "k", "m"])], [vi("C", ["b", "n", "m"])]),
        "Gemm with a bias": make([helper.make_node("Gemm", ["X", "W", "c"], ["Y"], name="fc", transB=1)],
                                 [vi("X", ["batch", 3]), vi("c", [4])], [vi("Y", ["batch", 4])], (w,)),
        "Einsum": make([helper.make_node("Einsum", ["A", "B"], ["C"], name="e", equation="bij,bjk->bik")],
                       [vi("A", ["b", "i", "j"]), vi("B", ["b", "j", "k"])], [vi("C", None)]),
        "broadcast Add, ReduceSum": make(
            [helper.make_node("Add", ["X", "v"], ["S"], name="add"),
             helper.make_node("ReduceSum", ["S", "ax"], ["Y"], name="sum", keepdims=1)],
            [vi("X", ["n", "m"]), vi("v", [1, "m"])], [vi("Y", ["n", 1])], (ints("ax", [1]),)),
        "Transpose, Unsqueeze, Squeeze, Expand": make(
            [helper.make_node("Transpose", ["X"], ["T"], name="t"),
             helper.make_node("Unsqueeze", ["T", "ax0"], ["U"], name="u"),
             helper.make_node("Squeeze", ["U", "ax0"], ["S"], name="s"),
             helper.make_node("Expand", ["S", "shape"], ["Y"], name="x")],
            [vi("X", ["n", 1])], [vi("Y", None)], (ints("ax0", [0]), ints("shape", [3, 1]))),
        "the README's perceptron": onnx.load(EXAMPLES / "mlp.onnx"),
    }


SYMBOLIC = _symbolic()


@pytest.mark.parametrize("name", sorted(SYMBOLIC))
def test_symbolic_models_are_certified(name: str) -> None:
    model = SYMBOLIC[name]
    onnx.shape_inference.infer_shapes(model, strict_mode=True)
    program = ct.from_onnx(model)
    assert program.params
    report = ct.prove(program)
    assert report.ok, report.render()


def test_symbolic_model_runs_at_any_shape() -> None:
    program = ct.from_onnx(SYMBOLIC["batched MatMul"])
    assert program.params == ("b", "n", "k", "m")
    kernel = ct.compile(program)
    for b, n, k, m in ((1, 1, 1, 1), (3, 2, 4, 5)):
        a, bb = r(b, n, k), r(1, k, m)
        np.testing.assert_allclose(kernel(A=a, B=bb)["C"], a @ bb, rtol=1e-12)


# --------------------------------------------------------------------------
# What onnx's strict shape inference accepts and core-teil refutes, naming the node
# --------------------------------------------------------------------------


def test_ill_shaped_matmul_is_refuted_naming_the_node() -> None:
    model = onnx.load(EXAMPLES / "matmul_bad.onnx")
    onnx.shape_inference.infer_shapes(model, strict_mode=True)  # onnx does not ask k == q
    program = ct.from_onnx(model)
    with pytest.raises(ct.TeilTypeError) as info:
        ct.check(program)
    err = info.value
    assert err.rule == "T-Diag" and err.span.node == "node 'mm' (MatMul)"
    assert str(err).startswith("<onnx>: node 'mm' (MatMul): type error [T-Diag]: side condition k == q")
    assert err.counterexample is not None and err.counterexample["k"] != err.counterexample["q"]
    report = ct.prove(program)
    assert not report.ok
    typing = next(o for o in report.obligations if o.name == "typing")
    assert typing.status == "refuted"
    assert typing.counterexample.params["k"] == 1 and typing.counterexample.params["q"] == 2
    assert "node 'mm' (MatMul)" in typing.counterexample.location
    assert "node 'mm' (MatMul)" in report.render()
    # with k == q it is the paper's matrix multiplication, certified
    assert ct.prove(program, {"q": 1, "k": 1}).ok


def test_ill_shaped_einsum_is_refuted_naming_the_node() -> None:
    model = onnx.load(EXAMPLES / "einsum_bad.onnx")
    onnx.shape_inference.infer_shapes(model, strict_mode=True)  # onnx does not ask n == m
    with pytest.raises(ct.TeilTypeError, match=r"node 'diagonal' \(Einsum\).*T-Diag.*n == m") as info:
        ct.check(ct.from_onnx(model))
    assert info.value.counterexample is not None
    assert info.value.counterexample["n"] != info.value.counterexample["m"]
    report = ct.prove(ct.from_onnx(model))
    assert not report.ok and "node 'diagonal' (Einsum)" in report.render()


def test_an_ill_shaped_einsum_fails_once_with_the_first_operands_extent() -> None:
    """A label's extent is its first occurrence's (T-Diag keeps the first dimension), so ``i,i->i`` on
    [n] and [m] declares Y : [n] and fails only T-Diag, not also OK-Stmt on a [m] declaration."""
    model = make([helper.make_node("Einsum", ["A", "B"], ["Y"], name="e", equation="i,i->i")],
                 [vi("A", ["n"]), vi("B", ["m"])], [vi("Y", None)])
    program = ct.from_onnx(model)
    assert program.alloc("Y").shape == ("n",)
    typing = next(o for o in ct.prove(program).obligations if o.name == "typing")
    assert typing.status == "refuted"
    assert typing.counterexample.what == "T-Diag: n == m (diagonal dimensions 1 and 2 must agree)"


def _model_of(op: str, sa: Any, sb: Any, **attrs: Any) -> onnx.ModelProto:
    return make([helper.make_node(op, ["A", "B"], ["Y"], name="bad", **attrs)], [vi("A", sa), vi("B", sb)],
                [vi("Y", None)])


@pytest.mark.parametrize(("model", "rule"), [
    (_model_of("MatMul", [2, 3], [4, 5]), "T-Diag"),
    (_model_of("MatMul", [2, 2, 3], [3, 3, 4]), "T-Diag"),  # batch dimensions 2 and 3 do not broadcast
    (_model_of("Add", [3], [4]), "T-Elem"),
    (_model_of("Add", ["n"], ["m"]), "T-Elem"),  # n = 1 would broadcast, n = 2, m = 3 not: one program for all
    (_model_of("Mul", ["n", 3], [2, 3]), "T-Elem"),
    (_model_of("Gemm", [2, 3], [3, 4]), None),
    (_model_of("Einsum", ["n", "k"], ["q", "m"], equation="ij,jk->ik"), "T-Diag"),
], ids=["MatMul", "MatMul-batch", "Add", "Add-symbolic", "Mul-symbolic", "Gemm-ok", "Einsum-symbolic"])
def test_shape_mismatches_are_type_errors_naming_the_node(model: onnx.ModelProto, rule: str | None) -> None:
    program = ct.from_onnx(model)
    if rule is None:  # the control: a well-shaped model passes the same check
        ct.check(program)
        assert ct.prove(program).ok
        return
    with pytest.raises(ct.TeilTypeError) as info:
        ct.check(program)
    assert info.value.rule == rule and "<onnx>: node 'bad' (" in str(info.value)
    assert not ct.prove(program).ok


def test_gemm_c_and_expand_mismatches() -> None:
    gemm = make([helper.make_node("Gemm", ["A", "B", "C"], ["Y"], name="g")],
                [vi("A", [2, 3]), vi("B", [3, 4]), vi("C", [3])], [vi("Y", None)])
    with pytest.raises(ct.TeilTypeError, match=r"node 'g' \(Gemm\).*T-Elem"):
        ct.check(ct.from_onnx(gemm))
    expand = make([helper.make_node("Expand", ["X", "s"], ["Y"], name="x")], [vi("X", [3])], [vi("Y", None)],
                  (ints("s", [4]),))
    with pytest.raises(ct.TeilTypeError, match=r"node 'x' \(Expand\).*OK-Stmt"):
        ct.check(ct.from_onnx(expand))
    symbolic = make([helper.make_node("Expand", ["X", "s"], ["Y"], name="x")], [vi("X", ["n"])], [vi("Y", None)],
                    (ints("s", [4]),))
    with pytest.raises(ct.TeilTypeError, match="counterexample: n = ") as info:
        ct.check(ct.from_onnx(symbolic))
    assert info.value.counterexample is not None and info.value.counterexample["n"] != 4


def test_a_declared_output_shape_is_checked() -> None:
    """The graph output's declared extents are its allocation's: a model that computes
    [2, 4] but declares [2, 5] is rejected (OK-Stmt); fresh dim_params are not held against it."""
    wrong = make([helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")], [vi("A", [2, 3]), vi("B", [3, 4])],
                 [vi("Y", [2, 5])])
    with pytest.raises(ct.TeilTypeError, match=r"node 'mm' \(MatMul\).*OK-Stmt"):
        ct.check(ct.from_onnx(wrong))
    fresh = make([helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")], [vi("A", ["n", 3]), vi("B", [3, 4])],
                 [vi("Y", ["unk__0", 4])])
    program = ct.from_onnx(fresh)
    assert program.params == ("n",) and program.alloc("Y").shape == ("n", 4)


# --------------------------------------------------------------------------
# What the frontend refuses itself: bad input (exit 2) and impossible ranks and axes (exit 1)
# --------------------------------------------------------------------------


def _malformed(dims: list[int] | None = None, data_type: int | None = None) -> onnx.TensorProto:
    """An initializer 'Z' whose raw data (three doubles) does not fit its declared shape or type."""
    z = numpy_helper.from_array(np.ones(3), "Z")
    if dims is not None:
        z.dims[:] = dims
    if data_type is not None:
        z.data_type = data_type
    return z


def _external() -> onnx.TensorProto:
    z = numpy_helper.from_array(np.ones(3), "Z")
    onnx.external_data_helper.set_external_data(z, location="z.bin")
    z.data_location = TensorProto.EXTERNAL
    z.ClearField("raw_data")
    return z


def _opset(model: onnx.ModelProto, opset: int) -> onnx.ModelProto:
    model.opset_import[0].version = opset
    return model


def _no_opset() -> onnx.ModelProto:
    model = make([helper.make_node("Identity", ["X"], ["Y"], name="node")], [vi("X", [2])], [vi("Y", None)])
    del model.opset_import[:]
    return model


def _one(op: str, inputs: list, inits: tuple = (), outputs: list | None = None, **attrs: Any) -> onnx.ModelProto:
    names = [i.name for i in inputs] + [t.name for t in inits if t.name not in {i.name for i in inputs}]
    return make([helper.make_node(op, names, ["Y"], name="node", **attrs)], inputs, outputs or [vi("Y", None)],
                inits)


BAD_INPUT = {
    "unsupported op": (_one("Relu", [vi("X", [2])]), r"node 'node' \(Relu\).*unsupported op 'Relu'"),
    "other domain": (make([helper.make_node("MatMul", ["A", "B"], ["Y"], name="node", domain="com.x")],
                          [vi("A", [2, 2]), vi("B", [2, 2])], [vi("Y", None)]), "of domain 'com.x'"),
    "integer input": (_one("Add", [vi("X", [2], TensorProto.INT32), vi("Z", [2], TensorProto.INT32)]),
                      "element type INT32"),
    "integer initializer": (_one("Add", [vi("X", [2])], (ints("Z", [1, 2]),)), "'Z' .* element type INT64"),
    "string input": (_one("Identity", [vi("X", [2], TensorProto.STRING)]), "element type STRING"),
    "unnamed dynamic dimension": (_one("Identity", [helper.make_tensor_value_info("X", D, [None, 3])]),
                                  "dimension 1 of 'X' is dynamic without a name"),
    "no shape": (_one("Identity", [helper.make_tensor_value_info("X", D, None)]), "'X' has no shape"),
    "extent 0": (_one("Identity", [vi("X", [2, 0])]), "dimension 2 of 'X' has extent 0"),
    "axes at run time": (_one("ReduceSum", [vi("X", [2, 3]), vi("axes", [1], I64)]),
                         "axes 'axes' is computed at run time"),
    "float axes": (_one("Unsqueeze", [vi("X", [2])], (numpy_helper.from_array(np.array([0.0]), "ax"),)),
                   "must be an integer tensor"),
    "Squeeze without axes of a parameter": (_one("Squeeze", [vi("X", ["n", 1])]), "depend on their values"),
    "no Einsum equation": (_one("Einsum", [vi("X", [2])]),
                           "not a valid Einsum node of opset 21: Required attribute 'equation' is missing"),
    "Einsum rank": (_one("Einsum", [vi("X", [2, 2, 2])], equation="ij->i"), "Einsum equation 'ij->i'.*rank 3"),
    "not topological": (make([helper.make_node("Identity", ["T"], ["Y"], name="node"),
                              helper.make_node("Identity", ["X"], ["T"], name="second")],
                             [vi("X", [2])], [vi("Y", None)]), "'T' is produced by no graph input"),
    "output is an input": (make([helper.make_node("Identity", ["X"], ["Y"], name="node")],
                                [vi("X", [2])], [vi("X", [2])]), "graph output 'X' is graph input 'X'"),
    "two outputs": (make([helper.make_node("Identity", ["X"], ["Y", "Z"], name="node")],
                         [vi("X", [2])], [vi("Y", None)]), "with 2 outputs"),
    "produced twice": (make([helper.make_node("Identity", ["X"], ["Y"], name="first"),
                             helper.make_node("Identity", ["X"], ["Y"], name="node")],
                            [vi("X", [2])], [vi("Y", None)]), "'Y' is produced twice"),
    "output of no node": (make([helper.make_node("Identity", ["X"], ["T"], name="node")],
                               [vi("X", [2])], [vi("Y", None)]), "graph output 'Y' is produced by no node"),
    "Constant of a string": (make([helper.make_node("Constant", [], ["k"], name="node", value_string="a"),
                                   helper.make_node("Identity", ["X"], ["Y"])], [vi("X", [2])], [vi("Y", None)]),
                             "Constant with attribute"),
    "Unsqueeze without axes": (_one("Unsqueeze", [vi("X", [2])]),
                               r"Unsqueeze of opset 21 takes 2 input\(s\) \(data, axes\), not 1"),
    "Expand without shape": (_one("Expand", [vi("X", [2])]), r"Expand of opset 21 takes 2 input\(s\) \(input, shape\)"),
    "missing operand": (_one("Add", [vi("X", [2])]), r"Add of opset 21 takes 2 input\(s\) \(A, B\), not 1"),
    "sequence input": (make([helper.make_node("Identity", ["X"], ["Y"], name="node")],
                            [helper.make_tensor_sequence_value_info("X", D, [2])], [vi("Y", None)]),
                       "'X' is a sequence, not a tensor"),
    # values: an extent 0, malformed tensors (the fuzzer's exit 70s), Constant's attributes
    "initializer of extent 0": (_one("Add", [vi("X", [2])], (numpy_helper.from_array(np.zeros(0), "Z"),)),
                                r"operand B 'Z' \(initializer 'Z'\) has an extent 0; Core-TeIL extents are >= 1"),
    "initializer data too short": (_one("Add", [vi("X", [94])], (_malformed(dims=[94]),)),
                                   r"initializer 'Z': input error \[onnx\]: initializer 'Z' is malformed: .*raw_data "
                                   r"size \(24 bytes\) is too small"),
    "initializer data too long": (_one("Add", [vi("X", [3])], (_malformed(data_type=F),)),
                                  "initializer 'Z' is malformed: cannot reshape array of size 6 into shape"),
    "initializer of no element type": (_one("Add", [vi("X", [3])], (_malformed(data_type=0),)),
                                       "initializer 'Z' is malformed: .*data_type .* UNDEFINED"),
    "Constant data too short": (make([helper.make_node("Constant", [], ["k"], name="c", value=_malformed(dims=[5])),
                                      helper.make_node("Add", ["X", "k"], ["Y"], name="node")],
                                     [vi("X", [5])], [vi("Y", None)]),
                                r"node 'c' \(Constant\): input error \[onnx\]: not a valid Constant node of opset 21: "
                                r".*raw_data size \(24 bytes\) is too small"),
    "Constant data too long": (make([helper.make_node("Constant", [], ["k"], name="c", value=_malformed(data_type=F)),
                                     helper.make_node("Add", ["X", "k"], ["Y"], name="node")],
                                    [vi("X", [3], F)], [vi("Y", None, F)]),
                               r"node 'c' \(Constant\): input error \[onnx\]: the value of node 'c' \(Constant\) is "
                               r"malformed: cannot reshape array of size 6 into shape \(3,\)"),
    "Constant of two values": (make([helper.make_node("Constant", [], ["k"], name="node", value_float=1.0,
                                                      value_floats=[2.0]),
                                     helper.make_node("Identity", ["X"], ["Y"])], [vi("X", [2])], [vi("Y", None)]),
                               "Constant with the value attributes value_float, value_floats; it takes exactly one"),
    "external data not loaded": (_one("Add", [vi("X", [3])], (_external(),)),
                                 "initializer 'Z' keeps its data in an external file that is not loaded"),
    # invalid models that onnx.checker refuses, named by the node
    "legacy Add": (make([helper.make_node("Add", ["A", "B"], ["Y"], name="node", broadcast=1, axis=0)],
                        [vi("A", [2, 2]), vi("B", [2])], [vi("Y", None)], opset=6),
                   r"node 'node' \(Add\): input error \[onnx\]: Add of opset 6: before opset 7, B broadcasts only by "
                   r"its legacy 'broadcast' and 'axis' attributes"),
    "legacy Gemm": (make([helper.make_node("Gemm", ["A", "B", "C"], ["Y"], name="node")],
                         [vi("A", [2, 2]), vi("B", [2, 2]), vi("C", [2])], [vi("Y", None)], opset=6),
                    "Gemm of opset 6: before opset 7, C broadcasts only by its legacy 'broadcast' attribute"),
    "op of a later opset": (_opset(_one("Expand", [vi("X", [1])], (ints("shape", [3]),)), 7),
                            "Expand does not exist in opset 7"),
    "three operands": (_one("Add", [vi("A", [2]), vi("B", [2]), vi("C", [2])]),
                       r"Add of opset 21 takes 2 input\(s\) \(A, B\), not 3"),
    "axes attribute of opset 13": (_one("Unsqueeze", [vi("X", [2])], (ints("ax", [0]),), axes=[1]),
                                   "not a valid Unsqueeze node of opset 21: Unrecognized attribute: axes"),
    "axes input of opset 11": (_opset(_one("Squeeze", [vi("X", [2, 1])], (ints("ax", [1]),)), 11),
                               r"Squeeze of opset 11 takes 1 input\(s\) \(data\), not 2"),
    "attribute of a later opset": (_opset(_one("ReduceSum", [vi("X", [2])], noop_with_empty_axes=1), 11),
                                   "Unrecognized attribute: noop_with_empty_axes for operator ReduceSum"),
    "attribute of the wrong type": (_one("Gemm", [vi("A", [2, 2]), vi("B", [2, 2])], alpha=2),
                                    "Mismatched attribute type in 'node : alpha'. Expected: 'FLOAT', actual: 'INT'"),
    "operands of two types": (_one("Add", [vi("A", [2], F), vi("B", [2])]),
                              "Add's operands must have one element type .*: 'A' is FLOAT, 'B' is DOUBLE"),
    "output of another type": (_one("Identity", [vi("X", [2])], outputs=[vi("Y", None, F)]),
                               r"graph output 'Y' is declared FLOAT, but node 'node' \(Identity\) computes DOUBLE"),
    "input listed twice": (make([helper.make_node("Add", ["X", "X"], ["Y"], name="node")],
                                [vi("X", [2]), vi("X", [3])], [vi("Y", None)]), "graph input 'X' is listed twice"),
    "initializer listed twice": (_one("Identity", [], (ints("Z", [1]), ints("Z", [1, 2]))),
                                 "initializer 'Z' is listed twice"),
    "Expand to a 2-D shape": (_one("Expand", [vi("X", [2])], (ints("shape", [[3, 2]]),)),  # type: ignore[list-item]
                              "Expand's shape 'shape' must be a 1-D tensor, not one of shape \\[1, 2\\]"),
    "no default opset": (_no_opset(), "the model imports no opset of the default domain"),
    "Einsum equation not UTF-8": (_one("Einsum", [vi("X", [2])], equation=b"i\xfe->i"),
                                  r"Einsum's equation 'i\\xfe->i' is not valid UTF-8"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUT))
def test_bad_models_are_input_errors_naming_where(name: str) -> None:
    model, match = BAD_INPUT[name]
    with pytest.raises(ct.TeilInputError, match=match) as info:
        ct.from_onnx(model)
    assert info.value.exit_code == 2 and str(info.value).startswith("<onnx>: ")


BAD_SHAPES = {
    "Transpose perm": (_one("Transpose", [vi("X", [2, 3])], perm=[0, 0]), "not a permutation", "T-Transp"),
    "ReduceSum axis": (_one("ReduceSum", [vi("X", [2, 3])], (ints("axes", [2]),)), "axis 2 is out of range",
                       "ReduceSum"),
    "repeated axis": (_one("Unsqueeze", [vi("X", [2, 3])], (ints("axes", [1, -3]),)), "given twice", "Unsqueeze"),
    "Squeeze of 3": (_one("Squeeze", [vi("X", [2, 3])], (ints("axes", [1]),)), "axis 1 has extent 3", "Squeeze"),
    "Squeeze of n": (_one("Squeeze", [vi("X", [2, "n"])], (ints("axes", [1]),)), "counterexample: n = 2",
                     "Squeeze"),
    "MatMul of a scalar": (_one("MatMul", [vi("A", []), vi("B", [2])]), "rank >= 1", "MatMul"),
    "Gemm of a vector": (_one("Gemm", [vi("A", [2]), vi("B", [2, 2])]), "A has rank 1", "Gemm"),
    "Gemm's C of rank 3": (_one("Gemm", [vi("A", [2, 2]), vi("B", [2, 2]), vi("C", [1, 2, 2])]),
                           "Gemm's C must broadcast to a matrix; it has rank 3", "Gemm"),
    "Expand to 0": (_one("Expand", [vi("X", [2])], (ints("shape", [0]),)), "extent below 1", "Expand"),
}


@pytest.mark.parametrize("name", sorted(BAD_SHAPES))
def test_impossible_ranks_and_axes_are_type_errors(name: str) -> None:
    model, match, rule = BAD_SHAPES[name]
    with pytest.raises(ct.TeilTypeError, match=match) as info:
        ct.from_onnx(model)
    assert info.value.rule == rule and info.value.exit_code == 1 and "node 'node'" in str(info.value)


def test_unreadable_models(tmp_path: Path) -> None:
    text = tmp_path / "matmul.onnx"
    text.write_text("lang full\nparam n\n")
    for path, match in ((text, "not a readable ONNX model"), (tmp_path / "missing.onnx", "no such file"),
                        (tmp_path, "is a directory")):
        with pytest.raises(ct.TeilInputError, match=match):
            ct.from_onnx(path)
    with pytest.raises(ct.TeilInputError, match="not int"):
        ct.from_onnx(3)  # type: ignore[arg-type]
    with pytest.raises(ct.TeilInputError, match="not a readable ONNX model"):
        ct.from_onnx(b"\xff\xff\xff")
    with pytest.raises(ct.TeilInputError, match="no outputs"):
        ct.from_onnx(make([], [vi("X", [2])], []))


# --------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------


def test_onnx_names_become_identifiers() -> None:
    """Tensor names such as ``input.1`` and ``onnx::MatMul_3``, keywords, clashes and dim_params
    with blanks become identifiers; the program prints, parses back and runs."""
    nodes = [helper.make_node("MatMul", ["input.1", "onnx::W_3"], ["red"], name="MatMul_0"),
             helper.make_node("Add", ["red", "red_"], ["2out"])]
    model = make(nodes, [vi("input.1", ["batch size", 3]), vi("red_", [1])], [vi("2out", None)],
                 (numpy_helper.from_array(r(3, 2), "onnx::W_3"),))
    t = translate(model)
    assert ct.parse(t.source, "x") == t.program
    assert t.params == (("batch size", "batch_size"),)
    assert t.inputs == (("input.1", "input_1"), ("red_", "red_"))
    assert [a.name for a in t.program.allocs] == ["input_1", "red_", "onnx__W_3", "red__2", "_2out"]
    assert t.outputs[0][:2] == ("2out", "_2out")
    x, c = r(2, 3), r(1)
    out = ct.evaluate(t.program, {**t.constants, "input_1": x, "red_": c})["_2out"]
    np.testing.assert_allclose(out, x @ numpy_helper.to_array(model.graph.initializer[0]) + c)
    # tensors keep their names; a clashing dim_param or generated constant yields
    clash = make([helper.make_node("Gemm", ["A", "B"], ["Y"], alpha=2.0), helper.make_node("Add", ["Y", "Y_alpha"],
                                                                                         ["n"])],
                 [vi("A", ["n", 2]), vi("B", [2, 2])], [vi("n", None)], (numpy_helper.from_array(r(2), "Y_alpha"),))
    t = translate(clash)
    assert t.params == (("n", "n_2"),) and t.outputs[0][1] == "n"
    assert t.constants["Y_alpha"].shape == (2,) and t.constants["Y_alpha_2"].shape == ()
    # an unnamed node is named by its number, op and output
    with pytest.raises(ct.TeilTypeError, match=r"node #2 \(Add, output '2out'\)"):
        ct.check(translate(make(nodes, [vi("input.1", [2, 3]), vi("red_", [3])], [vi("2out", None)],
                                (numpy_helper.from_array(r(3, 2), "onnx::W_3"),))).program)


def test_messages_show_the_names_the_model_wrote() -> None:
    """A name that had to become an identifier appears in messages as the model wrote it: the frontend's
    own messages write a dim_param as given, and every span of the program (so every message of the type
    checker and of ct.prove) says which identifier stands for which ONNX name."""
    model = make([helper.make_node("Add", ["in.a", "in:b"], ["out.0"], name="add")],
                 [vi("in.a", ["n x"]), vi("in:b", [2])], [vi("out.0", None)])
    program = ct.from_onnx(model)
    assert program.stmts[0].span.node == "node 'add' (Add) ['out.0' as out_0, 'in.a' as in_a, 'n x' as n_x, " \
                                         "'in:b' as in_b]"
    assert program.alloc("in_a").span.node == "graph input 'in.a' ['in.a' as in_a, 'n x' as n_x]"
    with pytest.raises(ct.TeilTypeError) as info:
        ct.check(program)
    assert info.value.render().splitlines()[0].startswith(
        "<onnx>: node 'add' (Add) ['out.0' as out_0, 'in.a' as in_a, 'n x' as n_x, 'in:b' as in_b]: type error "
        "[T-Elem]: side condition n_x == 2")
    squeeze = _one("Squeeze", [vi("X", ["n x", 2])], (ints("axes", [0]),))
    with pytest.raises(ct.TeilTypeError, match="axis 0 has extent 'n x'; only an extent 1 can be removed, and "
                                               "'n x' == 1 does not hold for all parameter values; counterexample: "
                                               "'n x' = 2"):
        ct.from_onnx(squeeze)
    with pytest.raises(ct.TeilInputError, match="Squeeze without axes of a shape with the parameter\\(s\\) 'n x', m:"):
        ct.from_onnx(_one("Squeeze", [vi("X", ["n x", "m", 1])]))
    # names that are identifiers already are not repeated
    assert ct.from_onnx(CASES["Add"][0]).stmts[0].span.node == "node 'add' (Add)"


def _corrupt(old: bytes, new: bytes) -> bytes:
    """A model whose bytes have a string replaced (everywhere, by one of the same length), e.g. by one
    that is not valid UTF-8."""
    model = make([helper.make_node("Einsum", ["XQ"], ["YQ"], name="eQ", equation="ii->i")],
                 [vi("XQ", ["nQ", "nQ"])], [vi("YQ", None)])
    assert len(old) == len(new)
    return model.SerializeToString().replace(old, new)


@pytest.mark.parametrize(("old", "new", "match"), [
    (b"XQ", b"X\xfe", r"<onnx>: graph input #1: input error \[onnx\]: the name 'X\\xfe' is not valid UTF-8"),
    (b"YQ", b"Y\xfe", r"<onnx>: graph output #1: input error \[onnx\]: the name 'Y\\xfe' is not valid UTF-8"),
    (b"nQ", b"n\xff", r"<onnx>: graph input 'XQ': input error \[onnx\]: the dim_param 'n\\xff' is not valid UTF-8"),
    (b"eQ", b"e\xfe", r"<onnx>: node 'e\\xfe' \(Einsum\): input error \[onnx\]: its name 'e\\xfe' is not valid"),
    (b"ii->i", b"i\xfe->i", r"<onnx>: node 'eQ' \(Einsum\): input error \[onnx\]: Einsum's equation 'i\\xfe->i' is "
                            r"not valid UTF-8"),
])
def test_names_that_are_not_utf8_are_input_errors(old: bytes, new: bytes, match: str) -> None:
    """protobuf hands a string field that is not UTF-8 over as bytes: refused naming where (not exit 70)."""
    assert ct.format(ct.from_onnx(_corrupt(old, old))).splitlines()[-1] == "YQ = diag 1 2 XQ"
    with pytest.raises(ct.TeilInputError, match=match) as info:
        ct.from_onnx(_corrupt(old, new))
    assert info.value.exit_code == 2


def test_opsets_before_7_translate_only_what_means_the_same() -> None:
    """MatMul is numpy's matmul in every opset, so an opset-6 model of it is translated; its Add is refused
    (above: 'legacy Add'), as translating it with numpy's broadcasting would change its meaning."""
    model = make([helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")], [vi("A", [2, 3]), vi("B", [3, 4])],
                 [vi("Y", None)], opset=6)
    a, b = r(2, 3), r(3, 4)
    np.testing.assert_allclose(run_engines(model, {"A": a, "B": b})[0][0], a @ b, rtol=1e-12)
    # opset 7 broadcasts numpy's way; "ai.onnx" is the default domain by its other name
    add = make([helper.make_node("Add", ["A", "B"], ["Y"], name="add", domain="ai.onnx")],
               [vi("A", [2, 3]), vi("B", [3])], [vi("Y", None)], opset=7)
    np.testing.assert_allclose(run_engines(add, {"A": a, "B": b[:, 0]})[0][0], a + b[:, 0], rtol=1e-12)
    # IR versions 1 and 2 import no opset: it is 1
    old = make([helper.make_node("Add", ["A", "B"], ["Y"], name="add")], [vi("A", [2]), vi("B", [2])],
               [vi("Y", None)])
    del old.opset_import[:]
    old.ir_version = 2
    with pytest.raises(ct.TeilInputError, match="Add of opset 1: before opset 7"):
        ct.from_onnx(old)


def test_spans_name_the_node_and_point_into_the_printed_program() -> None:
    t = translate(EXAMPLES / "mlp.onnx")
    lines = t.source.splitlines()
    for stmt in t.program.stmts:
        assert stmt.span.node.startswith("node '") and lines[stmt.span.line - 1].startswith(f"{stmt.target} = ")
        assert stmt.expr.span.node == stmt.span.node
    assert t.program.file == f"onnx:{EXAMPLES / 'mlp.onnx'}"  # not the model: ct.prove would read it as text
    assert t.program.alloc("X").span.node == "graph input 'X'"
    assert str(t.program.alloc("W1").span).endswith("mlp.onnx: initializer 'W1'")


# --------------------------------------------------------------------------
# The command line: from-onnx, and .onnx wherever a .teil FILE is read
# --------------------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_from_onnx_prints_the_program(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "from-onnx", EXAMPLES / "mlp.onnx")
    assert code == 0 and out == ct.format(ct.from_onnx(EXAMPLES / "mlp.onnx"))
    assert ct.parse(out) == ct.from_onnx(EXAMPLES / "mlp.onnx")


def test_cli_accepts_onnx_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    mlp = EXAMPLES / "mlp.onnx"
    code, out, _ = cli(capsys, "check", mlp)
    assert code == 0 and "score : [batch]" in out
    code, out, _ = cli(capsys, "prove", mlp)
    assert code == 0 and "12/12 proved" in out
    code, out, _ = cli(capsys, "derive", mlp)
    assert code == 0 and "[T-SMul]" in out and "[T-Expa]" in out
    code, out, _ = cli(capsys, "lower", mlp)
    assert code == 0 and out.startswith("lang core")
    code, out, _ = cli(capsys, "fmt", mlp)
    assert code == 0 and out == ct.format(ct.from_onnx(mlp))
    teil = tmp_path / "mlp.teil"
    teil.write_text(out)
    code, out, _ = cli(capsys, "equiv", mlp, teil)
    assert code == 0, out
    # run: the initializers come from the model, the graph input from --input
    x = r(2, 4)
    np.save(tmp_path / "x.npy", x)
    code, _, err = cli(capsys, "run", mlp, "--input", f"X={tmp_path / 'x.npy'}", "--output", tmp_path / "o.npz")
    assert code == 0, err
    feeds = {"X": x.astype(np.float32)}
    (want,) = ReferenceEvaluator(onnx.load(mlp)).run(None, feeds)
    with np.load(tmp_path / "o.npz") as data:
        np.testing.assert_allclose(data["score"], want, rtol=1e-5)
    # trace, with the values of the initializers and of X
    code, out, err = cli(capsys, "trace", mlp, "score[2]", "--input", f"X={tmp_path / 'x.npy'}", "--values")
    assert code == 0, err
    assert out.startswith("trace of score[2]")
    # --input overrides an initializer
    np.save(tmp_path / "w.npy", np.zeros((4, 8)))
    code, _, err = cli(capsys, "run", mlp, "--input", f"X={tmp_path / 'x.npy'}", "--input",
                       f"W1={tmp_path / 'w.npy'}", "--output", tmp_path / "z.npz")
    assert code == 0, err
    with np.load(tmp_path / "z.npz") as data:
        assert not np.allclose(data["score"], want)


def test_cli_rejects_with_the_node_and_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = cli(capsys, "check", EXAMPLES / "matmul_bad.onnx")
    assert code == 1
    assert err.splitlines()[0].startswith(f"{EXAMPLES / 'matmul_bad.onnx'}: node 'mm' (MatMul): type error [T-Diag]")
    assert "C = red 2 (diag 2 3 (prod A B))" in err  # the printed program's line, with a caret
    code, out, _ = cli(capsys, "prove", EXAMPLES / "matmul_bad.onnx")
    assert code == 1 and "k = 1, q = 2" in out and "node 'mm' (MatMul)" in out
    code, _, err = cli(capsys, "check", EXAMPLES / "einsum_bad.onnx")
    assert code == 1 and "node 'diagonal' (Einsum)" in err
    for command in ("from-onnx", "check", "prove", "run"):
        code, _, err = cli(capsys, command, EXAMPLES / "relu.onnx")
        assert code == 2 and "node 'act' (Relu): input error [onnx]: unsupported op 'Relu'" in err, err
        assert "Traceback" not in err
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00\x01garbage\xff")
    code, _, err = cli(capsys, "check", bad)
    assert code == 2 and "not a readable ONNX model" in err
    code, _, err = cli(capsys, "run", EXAMPLES / "mlp.onnx")
    assert code == 2 and "graph input 'X'" in err and "missing input 'X'" in err


def test_cli_reads_onnx_whatever_the_case_of_its_suffix(capsys: pytest.CaptureFixture[str],
                                                        tmp_path: Path) -> None:
    upper = tmp_path / "MLP.ONNX"
    upper.write_bytes((EXAMPLES / "mlp.onnx").read_bytes())
    code, out, err = cli(capsys, "check", upper)
    assert code == 0 and "score : [batch]" in out, err


def test_cli_bad_models_exit_2_naming_where(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Malformed tensors and names that are not UTF-8 (found by fuzzing: exit 70 before), an empty graph."""
    files = {
        "malformed.onnx": _one("Add", [vi("X", [94])], (_malformed(dims=[94]),)).SerializeToString(),
        "undefined.onnx": _one("Add", [vi("X", [3])], (_malformed(data_type=0),)).SerializeToString(),
        "name.onnx": _corrupt(b"XQ", b"X\xfe"),
        "empty.onnx": make([], [vi("X", [2])], []).SerializeToString(),
        "legacy.onnx": BAD_INPUT["legacy Add"][0].SerializeToString(),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    heads = {
        "malformed.onnx": "initializer 'Z': input error [onnx]: initializer 'Z' is malformed: TensorProto (tensor "
                          "name: Z) raw_data size (24 bytes) is too small for the declared shape and type (752 "
                          "bytes required).",
        "undefined.onnx": "initializer 'Z': input error [onnx]: initializer 'Z' is malformed: setting data_type field "
                          "(tensor name: Z) to UNDEFINED is not allowed",
        "name.onnx": "graph input #1: input error [onnx]: the name 'X\\xfe' is not valid UTF-8 (ONNX names are UTF-8 "
                     "strings)",
        "empty.onnx": "the graph: input error [onnx]: the graph has no outputs",
        "legacy.onnx": "node 'node' (Add): input error [onnx]: Add of opset 6: before opset 7, B broadcasts only",
    }
    for name, head in heads.items():
        for command in ("check", "from-onnx"):
            code, _, err = cli(capsys, command, tmp_path / name)
            assert code == 2 and err.startswith(f"{tmp_path / name}: {head}"), err
            assert "internal error" not in err and "Traceback" not in err


def test_example_models_are_what_their_script_writes(tmp_path: Path) -> None:
    """examples/onnx/*.onnx are reproducible from examples/onnx/make_models.py."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_models", EXAMPLES / "make_models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("mlp", "matmul_bad", "einsum_bad", "relu"):
        assert getattr(module, name)().SerializeToString() == (EXAMPLES / f"{name}.onnx").read_bytes(), name


def test_translate_returns_a_record() -> None:
    t = translate(EXAMPLES / "mlp.onnx")
    assert isinstance(t, OnnxProgram)
    assert t.outputs == (("score", "score", TensorProto.FLOAT),)
    assert t.source == ct.format(t.program)
