"""The operator language (:mod:`core_teil.frontends.ops`) after the independent mutant review
of the frontends (issue 12): one test per surviving mutant (O02, O05, O08, O09, O22, O29,
O38, O39, O48, O49), checked against numpy where the mutant changes a value, and the
bad-input findings: nesting depth, long chains and shared subexpressions."""

from __future__ import annotations

import numpy as np
import pytest

import core_teil as ct
from core_teil.frontends import ops
from core_teil.lang.parser import MAX_DEPTH
from core_teil.lang.syntax import depth

RNG = np.random.default_rng(12)
m, n, k = 2, 3, 4
PARAMS = {"m": m, "n": n, "k": k, "E": 2}
A, B, C = ops.Matrix("A", "m", "n"), ops.Matrix("B", "m", "n"), ops.Matrix("C", "k", "n")
u = ops.Tensor("u", "n", "n", "n")
alpha, beta = ops.Scalar("alpha"), ops.Scalar("beta")
VALUES = {"A": RNG.standard_normal((m, n)), "B": RNG.standard_normal((m, n)), "C": RNG.standard_normal((k, n)),
          "u": RNG.standard_normal((n, n, n)), "alpha": np.array(0.75), "beta": np.array(-1.5)}
a, b, c, x = (VALUES[name] for name in "ABCu")
AL, BE = 0.75, -1.5


def kron3(f: np.ndarray, g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``(F ⊗ G ⊗ H)(u)`` by numpy: each factor's input contracted with u's matching dimension."""
    return np.einsum("il,jm,kn,lmn->ijk", f, g, h, x)


def outputs(**exprs: ops.TExpr) -> list[dict[str, np.ndarray]]:
    """Every output, lifted and nested, on the reference and the native engine."""
    results = []
    for lift in (True, False):
        p = ops.program(exprs, lift=lift)
        inputs = {d.name: VALUES.get(d.name) for d in p.inputs()}
        params = {q: PARAMS[q] for q in p.params}
        results += [ct.evaluate(p, inputs, params), ct.compile(p, params)(**inputs)]
    return results


def assert_outputs(want: dict[str, np.ndarray], **exprs: ops.TExpr) -> None:
    for out in outputs(**exprs):
        for name, value in want.items():
            np.testing.assert_allclose(out[name], value, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------
# Construction: operator shapes and signs (O02, O05, O08, O09, O39)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("out_axes, in_axes", [((), (0,)), ((0,), ())])
def test_a_factor_needs_input_and_output_axes(out_axes, in_axes):
    """O02: a stored operator with no output (or no input) dimension is not an operator;
    accepted, its str() raised IndexError."""
    with pytest.raises(ct.TeilInputError) as info:
        ops.Factor("W", ("n",), out_axes, in_axes)
    assert info.value.message == (f"operator W: axes {out_axes} (out) and {in_axes} (in) must split the 1 "
                                  f"dimensions, each in order, both non-empty")


def test_the_input_shape_of_a_tensor_product_is_in_factor_order():
    """O05: ``(F ⊗ G).in_shape`` is F's inputs, then G's (the order of u's dimensions)."""
    D = ops.Matrix("D", "k", "q")
    assert (A * D).in_shape == ("n", "q") and (D * A).in_shape == ("q", "n")
    assert (A * A * C.T).in_shape == ("n", "n", "k") and (A * D * C.T).out_shape == ("m", "k", "n")
    assert (A * D)(ops.Tensor("z", "E", "n", "q")).shape == ("E", "m", "k")
    with pytest.raises(ct.TeilTypeError, match=r"A ⊗ D \(input extents \[n, q\]\) to z : \[q, n\]"):
        (A * D)(ops.Tensor("z", "q", "n"))


def test_a_negated_or_scaled_right_factor_keeps_its_coefficient():
    """O08 and O09: in ``A * -B`` and ``A * (beta * B)`` the right operand's sign and scalars
    are the product's."""
    assert [(t.sign, t.scalars) for t in (A * -B).terms()] == [(-1, ())]
    assert [(t.sign, t.scalars) for t in (A * (beta * B)).terms()] == [(1, (beta,))]
    assert [(t.sign, t.scalars) for t in ((alpha * A) * -(beta * B)).terms()] == [(-1, (alpha, beta))]
    want = {"v": kron3(a, a, c) - kron3(a, b, c), "w": BE * kron3(a, b, c), "y": AL * kron3(a, b, c) - kron3(b, b, c)}
    assert_outputs(want, v=(A * A * C + A * -B * C)(u), w=(A * (beta * B) * C)(u),
                   y=(B * B * -C + A * (alpha * B) * C)(u))


def test_zero_minus_an_operator_is_its_negation():
    """O39: ``0 - K`` is ``-K`` (``sum`` starts from 0 and so may a difference)."""
    assert 0 - A == -A and (0 - A).terms()[0].sign == -1 and 0 + A is A
    assert_outputs({"v": kron3(b, b, c) - kron3(a, b, c)}, v=((0 - A * B * C) + B * B * C)(u))


# --------------------------------------------------------------------------
# Lowering: combinations, scaling and broadcasting against numpy (O22, O29, O48)
# --------------------------------------------------------------------------


def test_a_combination_whose_first_term_is_negated():
    """O22: ``(-(A*A*C) + B*B*C)(u)`` starts with the +1 term (TeIL has no negation)."""
    p = ops.program(v=(-(A * A * C) + B * B * C)(u))
    assert ct.format(p).splitlines()[-1] == "v = sub (contr 1 5 (prod v_2 C)) (contr 1 5 (prod v_4 C))"
    assert_outputs({"v": kron3(b, b, c) - kron3(a, a, c)}, v=(-(A * A * C) + B * B * C)(u),
                   w=(-(A * A * C) - alpha * (A * B * C) + beta * (B * B * C))(u))


def test_an_applied_operator_times_a_scalar():
    """O29: ``K(u) * alpha`` is T-SMul, ``mul alpha (K(u))`` (the scalar first)."""
    p = ops.program(v=(A * B * C)(u) * alpha)
    assert ct.format(p).splitlines()[-1] == "v = mul alpha (contr 1 5 (prod v_2 C))"
    assert ct.check(p)["v"] == ("m", "m", "k")
    assert_outputs({"v": kron3(a, b, c) * AL, "w": kron3(a, b, c) * AL / BE},
                   v=(A * B * C)(u) * alpha, w=(A * B * C)(u) * alpha / beta)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_a_lower_rank_left_operand_is_broadcast(op):
    """O48: ``t op s`` with ``t : [n]`` and ``s : [E, n]`` broadcasts ``t`` over ``E``
    (``expa 1 E t``), as numpy does; and the lower rank on the right, and rank 1 against 3."""
    t, s, r = ops.Tensor("t", "n"), ops.Tensor("s", "E", "n"), ops.Tensor("r", "k", "E", "n")
    VALUES.update(t=RNG.uniform(1, 2, (n,)), s=RNG.uniform(1, 2, (2, n)), r=RNG.uniform(1, 2, (k, 2, n)))
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op]
    sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
    exprs = {name: eval(f"left {sym} right") for name, (left, right) in
             {"v": (t, s), "w": (s, t), "y": (t, r), "z": (r, s)}.items()}
    assert exprs["v"].shape == ("E", "n") and exprs["y"].shape == ("k", "E", "n")
    assert ct.format(ops.program(v=exprs["v"])).splitlines()[-1] == f"v = {op} (expa 1 E t) s"
    vt, vs, vr = VALUES["t"], VALUES["s"], VALUES["r"]
    assert_outputs({"v": fn(vt, vs), "w": fn(vs, vt), "y": fn(vt, vr), "z": fn(vr, vs)}, **exprs)


# --------------------------------------------------------------------------
# Bad input (O38), the nested form (O49)
# --------------------------------------------------------------------------


def test_one_over_a_tensor_is_refused():
    """O38: ``x / 1`` is ``x`` but ``1 / x`` is not: TeIL has no numeric constants."""
    assert u / 1 is u and u * 1 is u and 1 * u is u and u - 0 is u and 0 + u is u
    for make, text in ((lambda: 1 / u, "1 / u"), (lambda: 0 - u, "0 - u"), (lambda: 2 / u, "2 / u")):
        with pytest.raises(ct.TeilInputError) as info:
            make()
        assert info.value.message == (f"{text}: TeIL has no numeric constants (paper 000, Fig. 5); name the "
                                      f"value, c = ops.Scalar('c'), and pass it as an input")


def test_the_nested_form_is_one_statement_per_output():
    """O49: ``ops.nested`` materialises nothing that is read once: the argument of an
    application is nested into it (``examples/interp_nested.teil``)."""
    M = ops.Matrix("M", "n", "n")
    v, w = (A.T * C.T)((A * C)(ops.Tensor("z", "E", "n", "n"))), M(M(M(ops.Tensor("y", "n")) * alpha))
    p = ops.nested(v=v, w=w)
    assert [s.target for s in p.stmts] == ["v", "w"] and [a.name for a in p.allocs if a.qual is None] == []
    assert ct.format(p).splitlines()[-2:] == [
        "v = contr 2 4 (contr 2 4 (prod (contr 2 5 (contr 2 5 (prod z (prod A C)))) (prod A C)))",
        "w = contr 1 3 (prod (contr 1 3 (prod (mul alpha (contr 1 3 (prod y M))) M)) M)"]
    assert ct.equiv(p, ops.program(v=v, w=w)).ok


# --------------------------------------------------------------------------
# Bad input found by the review: deep nesting, long chains, shared subexpressions
# --------------------------------------------------------------------------


def statement_depths(p: ct.Program) -> list[int]:
    return [depth(s.expr) for s in p.stmts]


def test_a_nested_application_reads_each_shape_once(monkeypatch):
    """Each level of ``M(M(...M(w)))`` asked its argument's shape twice, so building and
    lowering 20 levels took 5 s and 30 levels hours: the shape is computed once, at
    construction.  Counted on the innermost tensor: 3 reads to build 16 levels, 7 more to
    lower them twice (it was 65535 and 393216)."""
    reads = []
    shape = ops.Tensor.shape
    monkeypatch.setattr(ops.Tensor, "shape", property(lambda t: reads.append(t.name) or shape.fget(t)))
    M, t = ops.Matrix("M", "n", "n"), ops.Tensor("w", "n")
    for _ in range(16):
        t = M(t)
    assert len(reads) == 3
    lifted, nested = ops.program(v=t), ops.nested(v=t)
    assert len(reads) == 10 and len(lifted.stmts) == 16 and len(nested.stmts) == 1
    assert ct.format(nested).splitlines()[-1] == \
        "v = " + "contr 1 3 (prod (" * 15 + "contr 1 3 (prod w M)" + ") M)" * 15


def deep_chains(size: int) -> dict[str, ops.TExpr]:
    """Chains ``size`` long of each kind: element-wise, applications, a sum of operators, a
    product of scalars, a difference of operators times a tensor."""
    w, M = ops.Tensor("w", "n"), ops.Matrix("M", "n", "n")
    s, t, K, g = w, w, M, alpha
    for _ in range(size):  # one chain after the other: the element-wise one first
        s = s + w
    for _ in range(size):
        g, K = g * alpha, K + M
    for _ in range(size):
        t = M(t)
    return {"s": s, "t": t, "k": K(w), "g": (g * M)(w), "d": (K - M)(w) * w}


def test_long_chains_are_programs_of_shallow_statements():
    """A chain longer than Python's recursion limit (1000) raised RecursionError: every
    walker is a loop now, and a statement deeper than INLINE_DEPTH (half the parser's
    MAX_DEPTH, which protects the later passes) is split by a temporary, so that ct.check
    and the engines run.  (The report times 2000; the values are checked on 250, on the
    reference engine: the native engine's compile takes 3 s for 250 additions.)"""
    for size in (1200, 250):
        chains = deep_chains(size)
        for lift in (True, False):
            p = ops.program(chains, lift=lift)
            assert max(statement_depths(p)) <= ops.INLINE_DEPTH <= MAX_DEPTH
            assert ct.check(p) == {**{a.name: a.shape for a in p.allocs}, "s": ("n",)}
    mv, wv, av = np.array([[0.5, 0.5], [0.5, 0.5]]), np.array([1.0, 3.0]), np.array(1.0)
    want = {"s": 251 * wv, "t": np.full(2, 2.0), "k": np.full(2, 502.0), "g": np.full(2, 2.0), "d": 250 * 2.0 * wv}
    values = {"w": wv, "M": mv, "alpha": av}
    for q in (p, ops.program(chains)):  # nested (the last p), lifted
        out = ct.evaluate(q, {a.name: values[a.name] for a in q.inputs()}, {"n": 2})
        for name, value in want.items():
            np.testing.assert_allclose(out[name], value, rtol=1e-12)
    text = ct.format(ops.program(s=chains["s"])).splitlines()  # 99 additions per statement
    assert len(text) == 3 + 2 + 1 + 1 + 3 and text[-3:] == ["s_1 = " + "add (" * 98 + "add w w" + ") w" * 98,
                                                       "s_2 = " + "add (" * 98 + "add s_1 w" + ") w" * 98,
                                                       "s = " + "add (" * 51 + "add s_2 w" + ") w" * 51]


def test_a_long_chain_prints_compares_and_hashes():
    """Messages, repr, == and hash of a 1200-long expression: no RecursionError; equal
    chains built apart are equal, with one hash; the text is cut after 60 characters."""
    one, two = deep_chains(1200), deep_chains(1200)
    for name in one:
        assert one[name] == two[name] and hash(one[name]) == hash(two[name]) and one[name] is not two[name]
    assert one["s"] != one["s"] - ops.Tensor("w", "n") and one["s"] != one["t"] and one["s"] != 3
    assert repr(one["s"]) == "<Pointwise " + "(" * 59 + "… : [n]>"
    with pytest.raises(ct.TeilTypeError) as info:
        one["s"] + ops.Tensor("x", "m")
    assert info.value.message.startswith("(" * 59 + "… + x: [n] and [m] differ at dimension 1")
    N, t = ops.Matrix("N", "m", "m"), ops.Tensor("x", "m")
    for _ in range(1200):
        t = N(t)
    with pytest.raises(ct.TeilTypeError) as info:
        ops.Matrix("M", "n", "n")(t)
    assert info.value.message.startswith("applying M (input extents [n]) to " + "(N)(" * 14 + "(N)… : [m]: factor 1")


def test_a_shared_subexpression_is_computed_once():
    """``y = M(y + y)`` twelve times read each ``y`` twice: the program had 2^12 copies
    (30 levels never finished). A node read more than once is now computed once into a
    temporary, as the lifting computes an argument once: two statements per level lifted,
    one nested; and equal subexpressions built apart are one node."""
    M, x = ops.Matrix("M", "n", "n"), ops.Tensor("x", "n")
    mv, xv = RNG.standard_normal((n, n)), RNG.standard_normal((n,))
    y, want = x, xv
    for _ in range(12):
        y, want = M(y + y), mv @ (want + want)
    for lift, count in ((True, 24), (False, 12)):
        p = ops.program(v=y, lift=lift)
        assert len(p.stmts) == count
        np.testing.assert_allclose(ct.evaluate(p, {"M": mv, "x": xv}, {"n": n})["v"], want, rtol=1e-10)
    p = ops.program(v=M(x) + M(x), w=M(x) * x)
    assert ct.format(p).splitlines()[-3:] == ["v_1 = contr 1 3 (prod x M)", "v = add v_1 v_1", "w = mul v_1 x"]
    p = ops.program(v=M(x), w=M(x) * x)  # an output read by another: through a temporary
    assert ct.format(p).splitlines()[-3:] == ["v_1 = contr 1 3 (prod x M)", "v = v_1", "w = mul v_1 x"]
    K = alpha * beta * (A * B) + alpha * beta * (B * A)  # one scalar product, computed once
    p = ops.program(v=K(ops.Tensor("z", "n", "n")))
    assert ct.format(p).splitlines()[-4:] == ["v_1 = mul alpha beta", "v_2 = contr 1 4 (prod z A)",
                                              "v_3 = contr 1 4 (prod z B)",
                                              "v = add (mul v_1 (contr 1 4 (prod v_2 B))) "
                                              "(mul v_1 (contr 1 4 (prod v_3 A)))"]
