"""The operator language of paper 000, section 5 (issue 12, item 1): :mod:`core_teil.frontends.ops`."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pytest

import core_teil as ct
from core_teil.frontends import ops
from core_teil.lang.syntax import ContrAt, Elem, Stmt
from core_teil.lang.typing import check_program
from core_teil.native import planner

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
RNG = np.random.default_rng(5)

# the paper's running example (section 5): A, B, C : Matrix(m, n), u : Tensor<3>(n, n, n)
A = ops.Matrix("A", "m", "n")
B = ops.Matrix("B", "m", "n")
C = ops.Matrix("C", "k", "n")
u3 = ops.Tensor("u", "n", "n", "n")
u = ops.Tensor("u", "E", "n", "n", "n")  # with the CFD kernels' batch of E elements
alpha, beta = ops.Scalar("alpha"), ops.Scalar("beta")


def cfd():
    spec = importlib.util.spec_from_file_location("ops_cfd", EXAMPLES / "ops_cfd.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_both(program: ct.Program, inputs: dict, params: dict) -> list[dict[str, np.ndarray]]:
    """The outputs on the reference engine and on the native engine."""
    return [ct.evaluate(program, inputs, params), ct.compile(program, params)(**inputs)]


# --------------------------------------------------------------------------
# Construction
# --------------------------------------------------------------------------


def test_matrices_tensors_and_their_shapes():
    assert (A.out_shape, A.in_shape, A.shape) == (("m",), ("n",), ("m", "n"))
    assert (A.T.out_shape, A.T.in_shape, A.T.T) == (("n",), ("m",), A)
    K = A * B * C
    assert isinstance(K, ops.Kron) and [f.name for f in K.factors] == ["A", "B", "C"]
    assert (K.out_shape, K.in_shape) == (("m", "m", "k"), ("n", "n", "n"))
    assert (A * B).T == A.T * B.T and str((A * B).T) == "A.T ⊗ B.T"
    assert u.shape == ("E", "n", "n", "n") and K(u).shape == ("E", "m", "m", "k") and K(u3).shape == ("m", "m", "k")
    W = ops.Operator("W", ["m", 2], ["n", "n"])
    assert (W.out_shape, W.in_shape, W.T.out_shape) == (("m", 2), ("n", "n"), ("n", "n"))
    assert ops.Tensor("x", np.int64(3), 4).shape == (3, 4)


def test_linear_combinations():
    L = alpha * (A * B) - (B * A) * beta + A * A
    assert isinstance(L, ops.Combination) and [t.sign for t in L.terms()] == [1, -1, 1]
    assert [t.scalars for t in L.terms()] == [(alpha,), (beta,), ()]
    assert str(L) == "alpha·(A ⊗ B) - beta·(B ⊗ A) + A ⊗ A"
    # the tensor product distributes over sums; sum() and ±1 work
    assert ((A + B) * C).terms() == (A * C + B * C).terms()
    assert sum([A, B]) == A + B and 1 * A == A and (-1) * A == -A and A * 1 == A
    assert (alpha * beta * A).terms()[0].scalars == (alpha * beta,)


def test_the_paper_example_lowers_to_the_lifted_and_nested_files():
    """``(A*A*A)(u)`` is examples/interp.teil (lifted) and examples/interp_nested.teil (nested)."""
    lifted = ops.program(v=(A * A * A)(u))
    want = ct.load(str(EXAMPLES / "interp.teil"))
    stmts = ct.format(lifted).splitlines()[-3:]
    assert stmts == ["v_1 = contr 2 6 (prod u A)", "v_2 = contr 2 6 (prod v_1 A)", "v = contr 2 6 (prod v_2 A)"]
    # the file's statements, its temporaries t1, t2 named v_1, v_2
    assert stmts == [line.replace("t1", "v_1").replace("t2", "v_2") for line in ct.format(want).splitlines()[-3:]]
    nested = ops.nested(v=(A * A * A)(u))
    assert nested.stmts == ct.load(str(EXAMPLES / "interp_nested.teil")).stmts
    assert ops.program(v=(A * A * A)(u), lift=False) == nested
    assert ct.check(lifted) == {"A": ("m", "n"), "u": ("E", "n", "n", "n"), "v_1": ("E", "n", "n", "m"),
                                "v_2": ("E", "n", "m", "m"), "v": ("E", "m", "m", "m")}
    assert [a.name for a in lifted.inputs()] == ["A", "u"] and lifted.params == ("m", "n", "E")


def test_helm_lowers_like_the_file():
    S, D = ops.Matrix("S", "n", "n"), ops.Tensor("D", "n", "n", "n")
    p = ops.program(v=(S.T * S.T * S.T)((S * S * S)(u) / D))
    text = ct.format(p)
    assert "v_3 = div (contr 2 6 (prod v_2 S)) (expa 1 E D)" in text  # D broadcast over the elements
    assert "v = contr 2 5 (prod v_5 S)" in text  # S^T contracts S's first dimension


def test_shapes_agree_with_the_type_checker():
    W = ops.Operator("W", ["m", "k"], ["n", "n"])
    x = ops.Tensor("x", "E", "F", "n", "n", "n")
    exprs = {"y": (W * A.T.T)(x), "z": alpha * x + x * x - x / beta, "w": (A.T * C.T)((A * C)(x)),
             "s": alpha * beta, "c": (A * A * A)(u3) + ops.Tensor("b", "m", "m", "m")}
    for lift in (True, False):
        p = ops.program(exprs, lift=lift)
        shapes = ct.check(p)
        assert all(shapes[name] == e.shape for name, e in exprs.items())
        assert shapes["y"] == ("E", "F", "m", "k", "m") and shapes["w"] == ("E", "F", "n", "n", "n")


def is_tree(program: ct.Program) -> bool:
    """No expression node object occurs twice (as in every parsed program): the plan check
    matches each read of the semantics to one node."""
    from core_teil.lang.syntax import walk

    ids = [id(node) for s in program.stmts for node in walk(s.expr)]
    return len(ids) == len(set(ids))


def test_programs_are_trees():
    for exprs in ({"v": (A * A * A)(u)}, combination_exprs()):
        assert is_tree(ops.program(exprs)) and is_tree(ops.nested(exprs))
    x = ct.parse("alloc a : [2]\nalloc b : [2]\nb = a\n").stmts[0].expr
    shared = ct.Program("full", ct.parse("alloc a : [2]\nalloc b : [2]\n").decls,
                        (Stmt("b", ct.parse("alloc a : [2]\nalloc b : [2]\nb = add a a\n").stmts[0].expr),))
    assert is_tree(shared)
    dag = dataclasses.replace(shared, stmts=(Stmt("b", Elem("add", x, x)),))
    assert not is_tree(dag)  # the check can fail


def test_names_of_inputs_outputs_and_temporaries():
    taken = ops.Tensor("v_1", "E", "n", "n", "n")  # a temporary may not take an input's name
    p = ops.program({"lift": (A * A)(taken), "v": (A * A * A)(u)})
    names = [a.name for a in p.allocs]
    assert len(names) == len(set(names)) and "lift_1" in names and "v_2" in names and "v_3" in names
    assert [a.name for a in p.outputs()] == ["lift", "v"] and ct.check(p)
    assert ops.program(w=u).stmts == (Stmt("w", ct.parse("alloc u : [1]\nalloc w : [1]\nw = u\n").stmts[0].expr),)


# --------------------------------------------------------------------------
# Type errors at construction (the paper: "contractions only take place over
# compatible index pairs"), and bad input: always a TeilError
# --------------------------------------------------------------------------


def test_incompatible_literal_extents_are_a_type_error_naming_both():
    M = ops.Matrix("M", 3, 4)
    line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
    with pytest.raises(ct.TeilTypeError) as info:
        (M * M)(ops.Tensor("x", 7, 4, 5))
    e = info.value
    assert e.rule == "T-Contr" and e.exit_code == 1
    assert "factor 2 (M) contracts its input dimension, extent 4, with dimension 3 of the argument, extent 5" \
        in e.message and "(4 != 5)" in e.message
    assert (e.span.file, e.span.line) == (__file__, line) and "(M * M)(ops.Tensor" in str(e)  # the caller's line


def test_incompatible_symbolic_extents_give_a_counterexample():
    with pytest.raises(ct.TeilTypeError) as info:
        (A * B * C)(ops.Tensor("x", "E", "n", "n", "k"))
    e = info.value
    assert "factor 3 (C)" in e.message and "extent n" in e.message and "extent k" in e.message
    assert e.counterexample is not None and e.counterexample["n"] != e.counterexample["k"]
    assert "counterexample: k = " in e.message
    # the transposed matrix takes its rows: B.T : n <- m
    with pytest.raises(ct.TeilTypeError, match=r"factor 1 \(B\.T\).*extent m.*extent n"):
        (B.T * A.T)(u3.__class__("x", "n", "n"))
    # a general operator names its input dimension
    W = ops.Operator("W", ["m"], ["n", "k"])
    with pytest.raises(ct.TeilTypeError, match="input dimension 2, extent k"):
        W(ops.Tensor("x", "n", "n"))
    # equal names are equal extents: no error, no solver
    assert (A * B * C)(u).shape == ("E", "m", "m", "k")


def test_rank_and_sum_and_elementwise_errors():
    with pytest.raises(ct.TeilTypeError, match=r"contracts 3 dimension.*rank 2"):
        (A * A * A)(ops.Tensor("x", "n", "n"))
    with pytest.raises(ct.TeilTypeError, match=r"output dimension 3 has extent m in .* but k") as info:
        A * A * A + A * A * C  # T-Elem on the applied operators
    assert info.value.rule == "T-Elem" and info.value.counterexample
    with pytest.raises(ct.TeilTypeError, match="different ranks"):
        A * A + A
    with pytest.raises(ct.TeilTypeError, match=r"\[n, n, n\] and \[m, n\] differ at dimension 2.*n vs m"):
        ops.Tensor("D", "n", "n", "n") * ops.Tensor("G", "m", "n")
    with pytest.raises(ct.TeilTypeError, match=r"3 vs 4 \(3 != 4\)"):
        ops.Tensor("a", 2, 3) + ops.Tensor("b", 4)


BAD_INPUT = [
    lambda: ops.Matrix("prod", "m", "n"),  # a keyword
    lambda: ops.Matrix("1A", "m", "n"),
    lambda: ops.Tensor("x", 0),
    lambda: ops.Tensor("x", -2),
    lambda: ops.Tensor("x", True),
    lambda: ops.Tensor("x", 2.5),
    lambda: ops.Tensor("x", "n m"),
    lambda: ops.Tensor("x", "red"),
    lambda: ops.Scalar("7"),
    lambda: ops.Operator("W", [], ["n"]),
    lambda: ops.Factor("W", ("m", "n"), (0,), (0,)),
    lambda: 2 * A,  # no numeric constants in TeIL
    lambda: A * 0.5,
    lambda: 2 * u,
    lambda: u + 1,
    lambda: -u,  # no negation
    lambda: (-(A * A * A))(u),  # every term negated
    lambda: u * A,  # a tensor times an operator: apply it
    lambda: A * u,
    lambda: A + u,
    lambda: u - A,
    lambda: A / alpha,
    lambda: A * "x",
    lambda: u * "x",
    lambda: 3 - A,
    lambda: 0 - u,
    lambda: A(np.ones(3)),
    lambda: ops.program(),
    lambda: ops.program(v=A),  # an operator, not a tensor
    lambda: ops.program(v=np.ones(3)),
    lambda: ops.program({"v": u}, v=u),
    lambda: ops.program(u=A(u3)),  # an output named like an input
    lambda: ops.program(v=A(ops.Tensor("x", "n")), w=ops.Tensor("m", 2)),  # an input named like a parameter
    lambda: ops.program(v=A(ops.Tensor("A", "n"))),  # one name, two inputs
    lambda: ops.program(v=(A * A)(u3), w=ops.Matrix("A", "n", "n")(u3)),
    lambda: ops.program(**{"and": u}),
]


@pytest.mark.parametrize("make", BAD_INPUT, ids=range(len(BAD_INPUT)))
def test_bad_input_is_a_teil_error_with_a_message(make):
    with pytest.raises(ct.TeilError) as info:
        make()
    assert info.value.message and str(info.value)  # renders, names the line of the test


# --------------------------------------------------------------------------
# Lifted and nested are equal (ct.equiv), and equal to the hand-written files
# --------------------------------------------------------------------------


def combination_exprs() -> dict[str, ops.TExpr]:
    W = ops.Operator("W", ["m", "k"], ["n", "n"])
    x = ops.Tensor("x", "E", "n", "n", "n")
    D = ops.Tensor("D", "m", "m", "k")
    K = alpha * (A * B * C) - (B * A * C) * beta + A * A * C
    return {"v": K(x) / D, "y": (W * A.T.T)(x), "z": (A.T * C.T)((A * C)(x)) - x}


def test_lifted_and_nested_forms_are_proved_equal():
    for exprs in ({"v": (A * A * A)(u)}, combination_exprs()):
        r = ct.equiv(ops.program(exprs), ops.nested(exprs))
        assert r.ok and {o.status.value for o in r.outputs} == {"proved"}


def test_cfd_kernels_equal_the_files_lifted_and_nested():
    mod = cfd()
    for name in ("interp", "helm"):
        build = getattr(mod, name)
        teil = ct.load(str(EXAMPLES / f"{name}.teil"))
        assert ct.equiv(build(), teil).ok and ct.equiv(build(lift=False), teil).ok
    assert ct.equiv(mod.interp(lift=False), ct.load(str(EXAMPLES / "interp_nested.teil"))).ok


def test_equiv_refutes_a_wrong_lifting():
    """The check must be able to fail: contracting u's *second* point dimension in the first
    step is well typed (all extents n) but is not the operator; nor is A ⊗ B for B ⊗ A."""
    good = ops.program(v=(A * A * A)(u))
    first = good.stmts[0]
    assert first.expr == ContrAt(2, 6, first.expr.arg)
    wrong = dataclasses.replace(good, stmts=(Stmt(first.target, ContrAt(3, 6, first.expr.arg)), *good.stmts[1:]))
    assert ct.check(wrong)["v"] == ct.check(good)["v"]
    assert not ct.equiv(wrong, ct.load(str(EXAMPLES / "interp.teil"))).ok
    assert not ct.equiv(ops.program(v=(A * B)(u3.__class__("u", "E", "n", "n"))),
                        ops.program(v=(B * A)(u3.__class__("u", "E", "n", "n")))).ok


# --------------------------------------------------------------------------
# Results against numpy.einsum, both engines
# --------------------------------------------------------------------------


def test_interp_and_helm_equal_numpy_on_both_engines():
    mod = cfd()
    E, n = 3, 4
    a, x = RNG.standard_normal((n, n)), RNG.standard_normal((E, n, n, n))
    want = np.einsum("il,jm,kn,elmn->eijk", a, a, a, x)
    for lift in (True, False):
        for out in run_both(mod.interp(lift), {"A": a, "u": x}, {"E": E, "m": n, "n": n}):
            np.testing.assert_allclose(out["v"], want, rtol=1e-12, atol=1e-12)
    s, d = RNG.standard_normal((n, n)), RNG.uniform(1.0, 2.0, (n, n, n))
    t = np.einsum("il,jm,kn,elmn->eijk", s, s, s, x) / d
    want = np.einsum("li,mj,nk,elmn->eijk", s, s, s, t)
    for lift in (True, False):
        for out in run_both(mod.helm(lift), {"S": s, "D": d, "u": x}, {"E": E, "n": n}):
            np.testing.assert_allclose(out["v"], want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("lift", [True, False])
def test_combinations_and_general_operators_equal_numpy(lift):
    E, m, n, k = 2, 3, 4, 2
    params = {"E": E, "m": m, "n": n, "k": k}
    inputs = {"A": RNG.standard_normal((m, n)), "B": RNG.standard_normal((m, n)), "C": RNG.standard_normal((k, n)),
              "W": RNG.standard_normal((m, k, n, n)), "x": RNG.standard_normal((E, n, n, n)),
              "D": RNG.uniform(1.0, 2.0, (m, m, k)), "alpha": np.array(0.5), "beta": np.array(-1.5)}
    a, b, c, w, x, d = (inputs[name] for name in "ABCWxD")
    al, be = 0.5, -1.5
    want = {
        "v": (al * np.einsum("ia,jb,kc,eabc->eijk", a, b, c, x) - be * np.einsum("ia,jb,kc,eabc->eijk", b, a, c, x)
              + np.einsum("ia,jb,kc,eabc->eijk", a, a, c, x)) / d,
        "y": np.einsum("pqab,rc,eabc->epqr", w, a, x),
        "z": np.einsum("ip,jq,ecij->ecpq", a, c, np.einsum("ia,jb,ecab->ecij", a, c, x)) - x,
    }
    program = ops.program(combination_exprs(), lift=lift)
    for out in run_both(program, inputs, params):
        for name, value in want.items():
            np.testing.assert_allclose(out[name], value, rtol=1e-10, atol=1e-10)


def test_the_paper_example_without_a_batch_and_scaled_elementwise():
    m, n, k = 2, 3, 4
    inputs = {"A": RNG.standard_normal((m, n)), "B": RNG.standard_normal((m, n)), "C": RNG.standard_normal((k, n)),
              "u": RNG.standard_normal((n, n, n)), "alpha": np.array(2.0), "g": RNG.standard_normal((k,))}
    g = ops.Tensor("g", "k")
    p = ops.program(v=(A * B * C)(u3), w=alpha * (A * B * C)(u3) * g + alpha)  # g and alpha broadcast
    a, b, c, x = (inputs[name] for name in "ABCu")
    v = np.einsum("il,jm,kn,lmn->ijk", a, b, c, x)
    for out in run_both(p, inputs, {"m": m, "n": n, "k": k}):
        np.testing.assert_allclose(out["v"], v, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(out["w"], 2.0 * v * inputs["g"] + 2.0, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------
# Certificates for symbolic extents; the same native plan as the files
# --------------------------------------------------------------------------


def test_prove_certifies_symbolic_extents():
    for p in (ops.program(v=(A * A * A)(u)), ops.program(combination_exprs())):
        report = ct.prove(p)
        assert report.ok and report.obligations
        assert {ob.status for ob in report.obligations} == {"proved"}
        assert set(p.params) >= {"m", "n"}  # for all extents: no parameter was fixed


def test_prove_refutes_a_wrongly_typed_lowering():
    """The certificate is not vacuous: the same program with a contraction over the m
    dimension of A (``contr 2 5``) is refuted by ct.check for some m != n."""
    good = ops.program(v=(A * A * A)(u))
    first = good.stmts[0]
    wrong = dataclasses.replace(good, stmts=(Stmt(first.target, ContrAt(2, 5, first.expr.arg)), *good.stmts[1:]))
    with pytest.raises(ct.TeilTypeError) as info:
        ct.check(wrong)
    assert info.value.counterexample


def _plan_signature(program: ct.Program, params: dict) -> list:
    p = planner.plan(check_program(program, params))
    return [(d.kind, d.loops, c.nbatch) for sp in p.stmts for c in sp.calls for d in c.ops]


def test_the_native_plan_is_the_files_plan():
    """Why the ops-built kernels run as fast as the files (examples/ops_cfd.py --bench times
    them): the planner gives both the same descriptors, op for op, and a different kernel
    a different one."""
    mod = cfd()
    interp_params, helm_params = {"E": 6, "m": 7, "n": 7}, {"E": 6, "n": 5}
    interp_sig = _plan_signature(mod.interp(), interp_params)
    assert interp_sig == _plan_signature(ct.load(str(EXAMPLES / "interp.teil")), interp_params)
    assert _plan_signature(mod.helm(), helm_params) == _plan_signature(ct.load(str(EXAMPLES / "helm.teil")),
                                                                         helm_params)
    assert interp_sig != _plan_signature(ops.program(v=(A * A)(ops.Tensor("u", "E", "n", "n"))),
                                         interp_params)


def test_ct_ops_is_the_module():
    import core_teil.frontends.ops as module

    assert ct.ops is module and "ops" in ct.__all__ and ct.ops.program is ops.program
