"""The ONNX frontend's hardening, second review (rF): cases the first tests did not reach, each the
witness of a mutant that survived them (A04 ... A46 in the review's table): the legacy opsets of
Sub, Mul and Div, the default domain by its other name, models without an opset_import, names
that are not UTF-8 where no other check masks them, optional and mixed-type Gemm operands, graph
inputs that are initializers declared loosely or wrongly, an output without a declared type,
and a 0-D Expand shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx")  # the onnx extra, which `make install` installs

import onnx
from onnx import TensorProto, helper, numpy_helper

import core_teil as ct
from core_teil.cli import main
from core_teil.frontends.onnx import translate

D, F = TensorProto.DOUBLE, TensorProto.FLOAT
RNG = np.random.default_rng(122)


def vi(name: str, shape: Any, elem: int = D) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def make(nodes: list, inputs: list, outputs: list, inits: tuple = (), opsets: tuple = (("", 21),),
         ir_version: int = 10) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = ir_version
    return model


def evaluated(model: onnx.ModelProto | bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The graph outputs computed by the reference engine (ct.evaluate) from the given graph inputs."""
    t = translate(model)
    args = {**t.constants, **{alloc: feeds[name] for name, alloc in t.inputs if name in feeds}}
    values = ct.evaluate(t.program, args)
    return [values[a] for _, a, _ in t.outputs]


def last_line(model: onnx.ModelProto | bytes) -> str:
    return ct.format(ct.from_onnx(model)).splitlines()[-1]


def refused(model: onnx.ModelProto | bytes, match: str) -> None:
    with pytest.raises(ct.TeilInputError, match=match) as info:
        ct.from_onnx(model)
    assert info.value.exit_code == 2 and str(info.value).startswith("<onnx>: ")


# --------------------------------------------------------------------------
# Opsets: legacy broadcasting, the default domain's other name, no opset_import
# --------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["Sub", "Mul", "Div"])
def test_legacy_broadcasting_of_sub_mul_div_is_refused(op: str) -> None:
    """A04: before opset 7, B of Sub, Mul and Div broadcasts by 'broadcast' and 'axis' (here along axis 0),
    not numpy's way; translating it numpy-style would be a silent wrong answer."""
    model = make([helper.make_node(op, ["A", "B"], ["Y"], name="node", broadcast=1, axis=0)],
                 [vi("A", [2, 3]), vi("B", [2])], [vi("Y", None)], opsets=(("", 6),))
    refused(model, rf"node 'node' \({op}\): input error \[onnx\]: {op} of opset 6: before opset 7, B broadcasts "
                   r"only by its legacy 'broadcast' and 'axis' attributes")


def test_the_default_domain_may_be_imported_as_ai_onnx() -> None:
    """A05: "ai.onnx" is the default domain's other name, also in opset_import (its only entry here)."""
    model = make([helper.make_node("Add", ["A", "B"], ["Y"], name="add")], [vi("A", [2, 3]), vi("B", [3])],
                 [vi("Y", None)], opsets=(("ai.onnx", 13),))
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    np.testing.assert_allclose(evaluated(model, {"A": a, "B": b})[0], a + b, rtol=1e-12)


def test_ir_version_3_without_an_opset_import_is_refused() -> None:
    """A06: from IR version 3 on a model must import its opset; only IR 1 and 2 mean opset 1 by none."""
    model = make([helper.make_node("Identity", ["X"], ["Y"], name="node")], [vi("X", [2])], [vi("Y", None)],
                 ir_version=3)
    del model.opset_import[:]
    refused(model, r"<onnx>: the model: input error \[onnx\]: the model imports no opset of the default domain "
                   r"\(opset_import\); a model of IR version 3 or later must say which it uses")


def test_ir_version_2_without_an_opset_import_is_opset_1() -> None:
    """A08: an IR-2 model imports no opset; its ops are checked (by onnx.checker too) as of opset 1."""
    model = make([helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")], [vi("A", [2, 3]), vi("B", [3, 4])],
                 [vi("Y", None)], ir_version=2)
    del model.opset_import[:]
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    np.testing.assert_allclose(evaluated(model, {"A": a, "B": b})[0], a @ b, rtol=1e-12)


# --------------------------------------------------------------------------
# Names that are not UTF-8 where no other check would catch them first
# --------------------------------------------------------------------------


def test_a_dangling_input_name_that_is_not_utf8_is_named_so() -> None:
    """A14: the node input names no tensor, so it would otherwise be refused as 'produced by no graph
    input'; the message must say what is wrong with the name itself."""
    model = make([helper.make_node("Add", ["XQ", "ZQ"], ["YQ"], name="a")], [vi("XQ", [2])], [vi("YQ", None)])
    data = model.SerializeToString()
    assert b"ZQ" in data
    refused(data.replace(b"ZQ", b"Z\xfe"),
            r"<onnx>: node 'a' \(Add\): input error \[onnx\]: input 2 'Z\\xfe' is not valid UTF-8")


def _utf8_model() -> bytes:
    """An Einsum model with an initializer 'UQ' no node reads and a second opset_import of domain 'dQ'."""
    model = make([helper.make_node("Einsum", ["XQ", "WQ"], ["YQ"], name="eQ", equation="ij,jk->ik")],
                 [vi("XQ", [2, 3])], [vi("YQ", None)],
                 (numpy_helper.from_array(np.ones((3, 2)), "WQ"), numpy_helper.from_array(np.ones(1), "UQ")),
                 opsets=(("", 21), ("dQ", 1)))
    return model.SerializeToString()


UTF8 = {
    "unused initializer": (b"UQ", b"U\xfe", r"<onnx>: initializer #2: input error \[onnx\]: the name 'U\\xfe' is not "
                                            r"valid UTF-8"),
    "opset_import domain": (b"dQ", b"d\xfe", r"<onnx>: the model's opset_import: input error \[onnx\]: the domain "
                                             r"'d\\xfe' is not valid UTF-8"),
    "attribute name": (b"equation", b"equati\xfen", r"<onnx>: node 'eQ' \(Einsum\): input error \[onnx\]: the "
                                                     r"attribute 'equati\\xfen' is not valid UTF-8"),
}


@pytest.mark.parametrize("name", sorted(UTF8))
def test_names_not_utf8_that_nothing_else_reads_are_input_errors(name: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A16, A45, A46: refused naming where (exit 2), not a crash (exit 70) further on."""
    old, new, match = UTF8[name]
    base = _utf8_model()
    assert base.count(old) == 1 and last_line(base) == "YQ = red 2 (diag 2 3 (prod XQ WQ))"
    refused(base.replace(old, new), match)
    path = tmp_path / "m.onnx"
    path.write_bytes(base.replace(old, new))
    assert main(["check", str(path)]) == 2
    assert "not valid UTF-8" in capsys.readouterr().err


# --------------------------------------------------------------------------
# Inputs: counts, optional inputs, element types
# --------------------------------------------------------------------------


def test_a_variadic_op_without_inputs_says_how_many_it_takes() -> None:
    """A17, A18: onnx's variadic maximum is 2**31 - 1, shown as 'or more'."""
    refused(make([helper.make_node("Einsum", [], ["Y"], name="node", equation="->")], [], [vi("Y", None)]),
            r"Einsum of opset 21 takes 1 or more input\(s\) \(Inputs\), not 0")


def test_gemm_with_an_empty_optional_c_is_a_product() -> None:
    """A28: an empty input name is an optional input left out, not a tensor named ''."""
    model = make([helper.make_node("Gemm", ["A", "B", ""], ["Y"], name="g")], [vi("A", [2, 3]), vi("B", [3, 4])],
                 [vi("Y", None)])
    assert last_line(model) == "Y = red 2 (diag 2 3 (prod A B))"
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    np.testing.assert_allclose(evaluated(model, {"A": a, "B": b})[0], a @ b, rtol=1e-12)


def test_gemm_with_c_of_another_element_type_is_refused() -> None:
    """A29: C's element type is compared with A's and B's like theirs with each other."""
    refused(make([helper.make_node("Gemm", ["A", "B", "C"], ["Y"], name="g")],
                 [vi("A", [2, 3], F), vi("B", [3, 4], F), vi("C", [4])], [helper.make_tensor_value_info("Y", 0, None)]),
            r"node 'g' \(Gemm\): input error \[onnx\]: Gemm's operands must have one element type .*'A' is FLOAT, "
            r"'B' is FLOAT, 'C' is DOUBLE")


# --------------------------------------------------------------------------
# Graph inputs that are also initializers; outputs without a declared type
# --------------------------------------------------------------------------


def _default(declared: onnx.ValueInfoProto) -> onnx.ModelProto:
    """Y = X @ W, with W a graph input declared as given and an initializer of shape [3, 2] (IR 3)."""
    w = numpy_helper.from_array(np.arange(6.0).reshape(3, 2), "W")
    return make([helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], [vi("X", [2, 3]), declared],
                [vi("Y", None)], (w,), opsets=(("", 13),), ir_version=3)


@pytest.mark.parametrize("declared", [helper.make_tensor_value_info("W", 0, [3, 2]), vi("W", ["q", 2])],
                         ids=["no element type", "a dim_param"])
def test_a_default_input_declared_loosely_takes_its_initializers_type(declared: onnx.ValueInfoProto) -> None:
    """A21, A23: an undeclared element type (0) and a named dimension say nothing against the initializer."""
    t = translate(_default(declared))
    assert t.defaults == (("W", "W"),) and ct.format(t.program).splitlines()[-1] == "Y = red 2 (diag 2 3 (prod X W))"
    x = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(evaluated(_default(declared), {"X": x})[0], x @ np.arange(6.0).reshape(3, 2),
                               rtol=1e-12)


def test_a_default_input_declared_with_another_rank_is_refused() -> None:
    """A22: a declared rank other than the initializer's is a mismatch, not a crash of zip(strict=True)."""
    refused(_default(vi("W", [3])), r"'W' is declared with the shape \[3\], but its initializer has the shape \[3, 2\]")


def test_an_output_without_a_declared_type_has_the_computed_one() -> None:
    """A24: a graph output that declares no type (elem_type 0) is not a mismatch; it is what its node computes."""
    model = make([helper.make_node("Identity", ["X"], ["Y"], name="node")], [vi("X", [2], F)],
                 [onnx.ValueInfoProto(name="Y")])
    t = translate(model)
    assert t.outputs == (("Y", "Y", F),) and ct.format(t.program).splitlines()[-1] == "Y = X"


# --------------------------------------------------------------------------
# Expand's shape
# --------------------------------------------------------------------------


def test_a_0d_expand_shape_is_refused() -> None:
    """A31: a 0-D shape is not the 1-D [3] ONNX requires."""
    model = make([helper.make_node("Expand", ["X", "S"], ["Y"], name="e")], [vi("X", [1])], [vi("Y", None)],
                 (numpy_helper.from_array(np.array(3, np.int64), "S"),))
    refused(model, r"node 'e' \(Expand\): input error \[onnx\]: Expand's shape 'S' must be a 1-D tensor, not one of "
                   r"shape \[\]")
