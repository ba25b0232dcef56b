"""onnx's own conformance suite on core-teil (issue 12, item 4): ``onnx.backend.test.BackendTest``
runs its node tests for the supported ops through :class:`core_teil.onnx_backend.CoreTeilBackend`
(the native engine, float64 evaluation, onnx's tolerances rtol 1e-3, atol 1e-7).

Only the node tests of the supported ops are collected (``OPS``); the cases that cannot pass
are excluded by name (``EXCLUDED``, each with its reason), and
:func:`test_excluded_case_fails_for_its_reason` shows that each one is refused with that reason
(a clear ``TeilError``, never a wrong number), so that an exclusion cannot hide a bug.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

pytest.importorskip("onnx")  # the onnx extra, which `make install` installs

import onnx
import onnx.backend.test
from onnx.backend.test.loader import load_model_tests
from onnx.reference import ReferenceEvaluator

import core_teil as ct
from core_teil.onnx_backend import CoreTeilBackend

#: Per supported op, the node tests that exercise it (full names without the ``_cpu`` suffix).
OPS: dict[str, str] = {
    "Add": r"test_add(?:_\w+)?",
    "Sub": r"test_sub(?:_\w+)?",
    "Mul": r"test_mul(?:_\w+)?",
    "Div": r"test_div(?:_\w+)?",
    "Einsum": r"test_einsum_\w+",
    "MatMul": r"test_matmul_\w+",
    "Gemm": r"test_gemm_\w+",
    "Transpose": r"test_transpose_\w+",
    # ReduceSumSquare's expanded form is Mul and ReduceSum; its own op is not supported
    "ReduceSum": r"test_reduce_sum_(?!square_)\w+|test_reduce_sum_square_\w+_expanded",
    "Squeeze": r"test_squeeze(?:_\w+)?",
    "Unsqueeze": r"test_unsqueeze_\w+",
    "Expand": r"test_expand_\w+",
    # Clip with its default bounds expands to Identity
    "Identity": r"test_identity(?:_\w+)?|test_clip_default(?:_int8)?_inbounds_expanded",
}

_INTEGERS = ("core-teil computes on reals (float64): integer wrap-around and truncating division are not "
             "TeIL's arithmetic (SPEC.md section 4)")
_EMPTY = "an extent 0: Core-TeIL extents are >= 1 (SPEC.md section 1), so an empty tensor has no type"

#: Node tests that cannot pass, by name: (why, a fragment of the error core-teil gives).
EXCLUDED: dict[str, tuple[str, str]] = {
    **{f"test_{op}_{t}": (_INTEGERS, f"element type {t.upper()}")
       for op in ("add", "sub", "mul", "div") for t in ("int8", "int16", "uint8", "uint16", "uint32", "uint64")},
    "test_div_int32_trunc": (_INTEGERS, "element type INT32"),
    "test_clip_default_int8_inbounds_expanded": (_INTEGERS, "element type INT8"),
    "test_identity_sequence": ("a sequence of tensors is not a tensor: TeIL has tensors only", "is a sequence"),
    "test_identity_opt": ("an optional value is not a tensor: TeIL has tensors only", "is an optional"),
    "test_reduce_sum_empty_set": (_EMPTY, "has extent 0"),
    "test_reduce_sum_empty_set_non_reduced_axis_zero": (_EMPTY, "has extent 0"),
    "test_reduce_sum_square_empty_set_expanded": (_EMPTY, "has extent 0"),
}

#: How many node tests run and pass per op (onnx 1.23.2, the locked version).
PASSING = {"Add": 2, "Sub": 3, "Mul": 3, "Div": 3, "Einsum": 9, "MatMul": 7, "Gemm": 11, "Transpose": 7,
           "ReduceSum": 18, "Squeeze": 2, "Unsqueeze": 7, "Expand": 2, "Identity": 2}

with warnings.catch_warnings():
    # generating onnx's cases of other ops (Cast, Log, ...) warns about their overflows
    warnings.simplefilter("ignore")
    _backend_test = onnx.backend.test.BackendTest(CoreTeilBackend, __name__)
    _CASES = {c.name: c for c in load_model_tests(kind="node")}

for _pattern in OPS.values():
    _backend_test.include(rf"^(?:{_pattern})_cpu$")
for _name in EXCLUDED:
    _backend_test.exclude(rf"^{_name}_cpu$")

# Collect only what runs: the included, not excluded, CPU node tests (the suite's other
# thousands of cases would each be reported as skipped).
OnnxBackendNodeModelTest = _backend_test.test_cases["OnnxBackendNodeModelTest"]
for _attr in list(vars(OnnxBackendNodeModelTest)):
    if _attr.startswith("test_") and getattr(getattr(OnnxBackendNodeModelTest, _attr), "__unittest_skip__", False):
        delattr(OnnxBackendNodeModelTest, _attr)

RUNNING = sorted(a.removesuffix("_cpu") for a in vars(OnnxBackendNodeModelTest) if a.startswith("test_"))


def _op_of(name: str) -> str:
    ops = [op for op, pattern in OPS.items() if re.fullmatch(pattern, name)]
    assert len(ops) == 1, (name, ops)
    return ops[0]


def test_every_supported_op_has_its_node_tests() -> None:
    """The counts of the closing note: which node tests run, per op (and each only once)."""
    counts = {op: 0 for op in OPS}
    for name in RUNNING:
        counts[_op_of(name)] += 1
    assert counts == PASSING


def test_the_patterns_select_only_supported_ops() -> None:
    """Every collected case uses only ops that core-teil translates (a pattern could catch MatMulInteger)."""
    from core_teil.frontends.onnx import SUPPORTED_OPS

    for name in RUNNING:
        assert {n.op_type for n in _CASES[name].model.graph.node} <= set(SUPPORTED_OPS), name
    assert "test_matmulinteger" not in RUNNING and "test_reduce_sum_square_keepdims_example" not in RUNNING


def test_exclusions_name_existing_cases_of_supported_ops() -> None:
    for name in EXCLUDED:
        assert name in _CASES, name
        _op_of(name)
        assert name not in RUNNING


@pytest.mark.parametrize("name", sorted(EXCLUDED))
def test_excluded_case_fails_for_its_reason(name: str) -> None:
    """An excluded case is refused with a TeilError that gives its reason: never a wrong result."""
    case = _CASES[name]
    inputs, _ = case.data_sets[0]
    with pytest.raises(ct.TeilInputError, match=re.escape(EXCLUDED[name][1])) as info:
        CoreTeilBackend.prepare(case.model).run(inputs)
    assert "<onnx>: " in str(info.value)  # it names the node or the graph input


def test_a_wrong_backend_fails_the_suite() -> None:
    """The suite's comparison says no to a wrong result: Gemm with alpha ignored."""
    case = _CASES["test_gemm_alpha"]
    inputs, outputs = case.data_sets[0]

    class Wrong(CoreTeilBackend):
        @classmethod
        def prepare(cls, model, device="CPU", **kwargs):  # type: ignore[no-untyped-def]
            node = model.graph.node[0]
            del node.attribute[:]  # alpha dropped: alpha * A B becomes A B
            return super().prepare(model, device, **kwargs)

    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    got = Wrong.prepare(model).run(inputs)
    with pytest.raises(AssertionError):
        onnx.backend.test.runner.Runner.assert_similar_outputs(outputs, got, rtol=1e-3, atol=1e-7)
    right = CoreTeilBackend.prepare(case.model).run(inputs)
    onnx.backend.test.runner.Runner.assert_similar_outputs(outputs, right, rtol=1e-3, atol=1e-7)


def test_outputs_have_the_declared_types() -> None:
    """float64 inside, the model's element type outside (float32, float64, bfloat16)."""
    for name, dtype in (("test_matmul_2d", np.float32), ("test_einsum_transpose", np.float64)):
        case = _CASES[name]
        (out,) = CoreTeilBackend.prepare(case.model).run(case.data_sets[0][0])
        assert out.dtype == dtype
    case = _CASES["test_einsum_batch_matmul_bfloat16"]
    (out,) = CoreTeilBackend.prepare(case.model).run(case.data_sets[0][0])
    assert out.dtype.name == "bfloat16"


def test_run_node_and_the_reference_engine() -> None:
    """``Backend.run_node`` (one node, typed by its inputs) and ``engine="reference"`` agree with numpy."""
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    node = onnx.helper.make_node("MatMul", ["a", "b"], ["c"])
    (c,) = CoreTeilBackend.run_node(node, [a, b])
    np.testing.assert_allclose(c, a @ b)
    model = onnx.helper.make_model(onnx.helper.make_graph(
        [node], "g", [onnx.helper.make_tensor_value_info("a", onnx.TensorProto.DOUBLE, [2, 3]),
                      onnx.helper.make_tensor_value_info("b", onnx.TensorProto.DOUBLE, [3, 4])],
        [onnx.helper.make_tensor_value_info("c", onnx.TensorProto.DOUBLE, [2, 4])]))
    (c,) = CoreTeilBackend.prepare(model, engine="reference").run({"a": a, "b": b})
    np.testing.assert_allclose(c, a @ b)
    assert CoreTeilBackend.supports_device("CPU") and not CoreTeilBackend.supports_device("CUDA")
    assert CoreTeilBackend.is_compatible(model)
    relu = onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["a"], ["c"])], "g",
        [onnx.helper.make_tensor_value_info("a", onnx.TensorProto.DOUBLE, [2])],
        [onnx.helper.make_tensor_value_info("c", onnx.TensorProto.DOUBLE, [2])]))
    assert not CoreTeilBackend.is_compatible(relu)


def test_the_backend_refuses_bad_calls() -> None:
    case = _CASES["test_matmul_2d"]
    inputs, _ = case.data_sets[0]
    rep = CoreTeilBackend.prepare(case.model)
    with pytest.raises(ct.TeilInputError, match="3 inputs given, but the model takes 2"):
        rep.run([*inputs, inputs[0]])
    with pytest.raises(ct.TeilInputError, match="graph input 'b' is not given"):
        rep.run({"a": inputs[0]})
    with pytest.raises(ct.TeilInputError, match="engine must be"):
        CoreTeilBackend.prepare(case.model, engine="gpu")
    with pytest.raises(ct.TeilInputError, match="not on 'CUDA'"):
        CoreTeilBackend.prepare(case.model, "CUDA")
    (out,) = rep.run(inputs)  # and the same calls done right
    np.testing.assert_allclose(out, inputs[0] @ inputs[1], rtol=1e-6)


def test_shape_inputs_are_compiled_once_per_value() -> None:
    """ReduceSum's axes fed at run time: one program per distinct value, each right; a value
    that contradicts the declared output shape [3, 1, 2] is refused, not run."""
    case = _CASES["test_reduce_sum_keepdims_random"]
    (data, _), _ = case.data_sets[0]
    rep = CoreTeilBackend.prepare(case.model)
    for ax in ([1], [-2], [1]):
        (out,) = rep.run([data, np.array(ax, dtype=np.int64)])
        np.testing.assert_allclose(out, data.sum(axis=tuple(ax), keepdims=True), rtol=1e-6)
    assert len(rep._prepared) == 2
    with pytest.raises(ct.TeilError, match="OK-Stmt"):
        rep.run([data, np.array([0], dtype=np.int64)])


def test_exclusion_reasons_are_specific() -> None:
    """Each excluded case's fragment is a specific part of its own refusal: not empty (which any
    TeilInputError would match) and not found in the refusals of the cases excluded for other reasons."""
    messages = {}
    for name in EXCLUDED:
        case = _CASES[name]
        with pytest.raises(ct.TeilInputError) as info:
            CoreTeilBackend.prepare(case.model).run(case.data_sets[0][0])
        messages[name] = str(info.value)
    for name, (reason, fragment) in EXCLUDED.items():
        assert len(fragment) >= 8, (name, fragment)
        others = [m for n, m in messages.items() if EXCLUDED[n][0] != reason]
        assert not any(fragment in m for m in others), (name, fragment)
    assert EXCLUDED["test_identity_opt"][1] == "is an optional"


def _double_model() -> onnx.ModelProto:
    d = onnx.TensorProto.DOUBLE
    return onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("Add", ["a", "b"], ["c"], name="add")], "g",
        [onnx.helper.make_tensor_value_info("a", d, [3]), onnx.helper.make_tensor_value_info("b", d, [3])],
        [onnx.helper.make_tensor_value_info("c", d, [3])]))


def test_double_inputs_keep_every_bit() -> None:
    """A DOUBLE model computes on the given float64 values, not on them rounded to float32."""
    a, b = np.array([1 / 3, np.pi, 1e-300]), np.array([1e-12, -np.e, 2.0**-60])
    for engine in ("native", "reference"):
        (c,) = CoreTeilBackend.prepare(_double_model(), engine=engine).run([a, b])
        assert c.dtype == np.float64
        np.testing.assert_array_equal(c, a + b)


def test_inputs_that_are_no_reals_and_unknown_names_are_refused() -> None:
    rep = CoreTeilBackend.prepare(_double_model())
    b = np.zeros(3)
    with pytest.raises(ct.TeilInputError, match=r"graph input 'a' is given complex numbers \(dtype complex128\); "
                                                r"core-teil computes on reals"):
        rep.run([np.array([1 + 2j, 0, 0]), b])
    with pytest.raises(ct.TeilInputError, match=r"graph input 'a' is given strings \(dtype <U1\)"):
        rep.run([np.array(["x", "y", "z"]), b])
    with pytest.raises(ct.TeilInputError, match=r"graph input 'b' is given Python objects"):
        rep.run([b, np.array([None, 1, 2], dtype=object)])
    with pytest.raises(ct.TeilInputError, match="'q' is no graph input of the model; its inputs are 'a', 'b'"):
        rep.run({"a": b, "b": b, "q": b})
    # integers and booleans are reals
    (c,) = rep.run([np.array([1, 2, 3]), np.array([True, False, True])])
    np.testing.assert_array_equal(c, [2.0, 2.0, 4.0])


def _ir3(w: np.ndarray) -> onnx.ModelProto:
    """IR version 3: the initializer W is listed among the graph inputs, before X."""
    d = onnx.TensorProto.DOUBLE
    model = onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], "g",
        [onnx.helper.make_tensor_value_info("W", d, [3, 2]), onnx.helper.make_tensor_value_info("X", d, [2, 3])],
        [onnx.helper.make_tensor_value_info("Y", d, [2, 2])], initializer=[onnx.numpy_helper.from_array(w, "W")]),
        opset_imports=[onnx.helper.make_opsetid("", 8)])
    model.ir_version = 3
    return model


def test_an_initializer_listed_as_an_input_is_not_fed_but_may_be_overridden() -> None:
    """The inputs a caller feeds by position are the graph inputs that are no initializers; an
    initializer listed as an input is a default that a value given by name overrides (as onnx's
    reference evaluator does)."""
    w, x = np.arange(6.0).reshape(3, 2), np.arange(6.0).reshape(2, 3) / 7
    model = _ir3(w)
    rep = CoreTeilBackend.prepare(model)
    assert rep.input_names == ["X"]
    (y,) = rep.run([x])
    np.testing.assert_array_equal(y, x @ w)
    w2 = -w
    (y,) = rep.run({"X": x, "W": w2})
    (want,) = ReferenceEvaluator(model).run(None, {"X": x, "W": w2})
    np.testing.assert_array_equal(y, x @ w2)
    np.testing.assert_array_equal(want, x @ w2)


def test_a_shape_input_with_an_initializer_is_specialised_to_the_given_value() -> None:
    """Unsqueeze's axes: an initializer that is also a graph input; a given value replaces it."""
    d, i64 = onnx.TensorProto.DOUBLE, onnx.TensorProto.INT64
    model = onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("Unsqueeze", ["X", "axes"], ["Y"], name="u")], "g",
        [onnx.helper.make_tensor_value_info("X", d, [2]), onnx.helper.make_tensor_value_info("axes", i64, [1])],
        [onnx.helper.make_tensor_value_info("Y", d, ["a", "b"])],
        initializer=[onnx.numpy_helper.from_array(np.array([0]), "axes")]))
    rep = CoreTeilBackend.prepare(model)
    x = np.array([1.0, 2.0])
    assert rep.run([x])[0].shape == (1, 2)
    assert rep.run({"X": x, "axes": np.array([1])})[0].shape == (2, 1)
    # the value given replaces the input, whatever its integer type (the graph declares INT64)
    assert rep.run({"X": x, "axes": np.array([-1], dtype=np.int32)})[0].shape == (2, 1)
