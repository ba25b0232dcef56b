"""The operator language (:mod:`core_teil.frontends.ops`) after the second independent
mutant review of its rewrite (reviewer rF, issue 12): one test per group of surviving
mutants of the lowering.  The unmutated code is right in every case; these tests pin it:

- the DAG of distinct subexpressions keys on the op, the term signs and the scalars
  themselves (B01, B02, B04), and a term's scalars are each read (B21): values vs numpy;
- a combination applied to a computed argument reads that argument once per term (B06, B37);
- the temporaries that split deep statements have the right shapes, visible only with
  unequal extents (B13, B14, B15, B19, B39): values vs numpy;
- no statement is deeper than INLINE_DEPTH, also at the contraction, product and broadcast
  splits (B12, B16, B17);
- shared subexpressions are visited once, by the DAG and by walk (B26, B28).

Values are checked on the reference engine (``ct.evaluate``), lifted and nested; extents
E, m, n, k are all different so that a temporary of the wrong shape is a type error."""

from __future__ import annotations

import itertools

import numpy as np

import core_teil as ct
from core_teil.frontends import ops
from core_teil.lang.syntax import depth

RNG = np.random.default_rng(2026)
E, m, n, k = 2, 3, 4, 5
PARAMS = {"E": E, "m": m, "n": n, "k": k}
A, B, C = ops.Matrix("A", "m", "n"), ops.Matrix("B", "m", "n"), ops.Matrix("C", "k", "n")
x, y = ops.Tensor("x", "n"), ops.Tensor("y", "n")
z, zz = ops.Tensor("z", "E", "n"), ops.Tensor("zz", "E", "n", "n")
alpha, beta = ops.Scalar("alpha"), ops.Scalar("beta")
AL, BE = 0.75, -1.5
VALUES = {"A": RNG.standard_normal((m, n)), "B": RNG.standard_normal((m, n)), "C": RNG.standard_normal((k, n)),
          "x": RNG.standard_normal(n), "y": RNG.standard_normal(n), "z": RNG.standard_normal((E, n)),
          "zz": RNG.standard_normal((E, n, n)), "alpha": np.array(AL), "beta": np.array(BE)}
a, b, c = VALUES["A"], VALUES["B"], VALUES["C"]
xv, yv, zv, zzv = VALUES["x"], VALUES["y"], VALUES["z"], VALUES["zz"]


def evaluate(p: ct.Program, values: dict[str, np.ndarray] = VALUES,
             params: dict[str, int] = PARAMS) -> dict[str, np.ndarray]:
    return ct.evaluate(p, {d.name: values[d.name] for d in p.inputs()}, {q: params[q] for q in p.params})


def assert_values(want: dict[str, np.ndarray], lifts: tuple[bool, ...] = (True, False), **exprs: ops.TExpr) -> None:
    """Every output of ``ops.program(exprs, lift=...)`` on the reference engine equals numpy."""
    for lift in lifts:
        out = evaluate(ops.program(exprs, lift=lift))
        for name, value in want.items():
            assert out[name].shape == value.shape, (lift, name)
            np.testing.assert_allclose(out[name], value, rtol=1e-10, atol=1e-10, err_msg=f"{name}, lift={lift}")


def chain(start: ops.TExpr, step: ops.Tensor, count: int) -> tuple[ops.TExpr, np.ndarray]:
    """``start + step + ... + step`` (``count`` additions, left-nested) and its value."""
    e, v = start, VALUES[start.name]
    for _ in range(count):
        e, v = e + step, v + VALUES[step.name]
    return e, v


def max_depth(p: ct.Program) -> int:
    return max(depth(s.expr) for s in p.stmts)


# --------------------------------------------------------------------------
# The DAG keys (B01, B02, B04) and a term's scalars (B21): silent wrong answers
# --------------------------------------------------------------------------


def test_outputs_that_differ_only_in_the_op_are_two_nodes():
    """B01: ``x + y`` and ``x - y`` are two nodes of the DAG (keyed without the op, w
    was computed as x + y)."""
    assert_values({"v": xv + yv, "w": xv - yv, "q": xv * yv, "r": xv / yv},
                  v=x + y, w=x - y, q=x * y, r=x / y)
    assert ct.format(ops.program(v=x + y, w=x - y)).splitlines()[-2:] == ["v = add x y", "w = sub x y"]


def test_combinations_that_differ_only_in_a_sign_are_two_nodes():
    """B02: ``(A + B)(x)`` and ``(A - B)(x)`` are two nodes (keyed without the term signs,
    w was computed as (A + B)x)."""
    assert_values({"v": (a + b) @ xv, "w": (a - b) @ xv, "q": (b - a) @ xv},
                  v=(A + B)(x), w=(A - B)(x), q=(-A + B)(x))


def test_terms_that_differ_only_in_their_scalars_are_two_nodes():
    """B04: ``(alpha*A)(x)`` and ``(beta*A)(x)`` are two nodes (keyed by the number of
    scalars, w was computed as alpha*A x)."""
    assert_values({"v": AL * a @ xv, "w": BE * a @ xv, "q": AL * BE * a @ xv},
                  v=(alpha * A)(x), w=(beta * A)(x), q=(alpha * beta * A)(x))


def test_a_term_with_two_scalars_multiplies_by_both():
    """B21: ``((alpha*A) * (beta*B))(u)`` is alpha*beta*(A ⊗ B)(u), each scalar read (with
    the mutant both were alpha)."""
    u = ops.Tensor("u", "n", "n")
    VALUES["u"] = RNG.standard_normal((n, n))
    kron = np.einsum("ij,kl,jl->ik", a, b, VALUES["u"])
    assert_values({"v": AL * BE * kron, "w": BE * AL * BE * kron},
                  v=((alpha * A) * (beta * B))(u), w=((beta * A) * (alpha * beta * B))(u))


# --------------------------------------------------------------------------
# A combination applied to a computed argument (B06, B37): a KeyError
# --------------------------------------------------------------------------


def test_a_combination_applied_to_a_computed_argument():
    """B06, B37: in ``(A + B)(x + y)`` the argument is read by each term, so it is a
    temporary; counted as one read, the nested form raised KeyError."""
    p = ops.nested(v=(A + B)(x + y))
    assert ct.format(p).splitlines()[-2:] == ["v_1 = add x y",
                                              "v = add (contr 1 3 (prod v_1 A)) (contr 1 3 (prod v_1 B))"]
    assert_values({"v": (a + b) @ (xv + yv), "w": (a - AL * b) @ (xv - yv) + a @ xv},
                  v=(A + B)(x + y), w=(A - alpha * B)(x - y) + A(x))


# --------------------------------------------------------------------------
# Temporaries that split deep statements, with unequal extents (B13 B14 B15 B19 B39)
# --------------------------------------------------------------------------


def test_a_contraction_of_a_deep_argument_is_split_with_the_right_shape():
    """B13, B14: ``A(z + y + ...)`` and ``(A*C)(zz + y + ...)`` nested, 96 additions: the
    contraction's temporary is declared [E, m] (B13 declared [m, E]) and the product's
    shape is the factors' after the argument's (B14 reversed it): a type error on a valid
    program."""
    s, sv = chain(z, y, 96)
    s2, sv2 = chain(zz, y, 96)
    assert_values({"v": np.einsum("mn,en->em", a, sv)}, v=A(s))
    assert_values({"v": np.einsum("mn,kj,enj->emk", a, c, sv2)}, v=(A * C)(s2))


def test_a_deep_lower_rank_operand_is_broadcast_with_the_right_shape():
    """B15, B39: ``z + (y + x + ...)`` and ``(y + x + ...) * z``, 98 additions, z : [E, n]:
    the broadcast temporary is [E, n] (B15 declared [n, E]; B39 broadcast the left operand
    with the right one's shape, [E, E, n])."""
    s, sv = chain(y, x, 98)
    assert_values({"v": zv + sv}, v=z + s)  # one output each: read twice, s would be a temporary
    assert_values({"v": sv * zv}, v=s * z)


def test_a_long_combination_of_a_non_square_operator():
    """B19: ``(A + A + ... 121 terms)(x)`` with A : [m, n]: the partial sums are [m] (B19
    declared them with the argument's shape [n])."""
    K = A
    for _ in range(120):
        K = K + A
    assert_values({"v": 121 * a @ xv, "w": 121 * a @ xv - b @ xv}, v=K(x), w=(K - B)(x))


# --------------------------------------------------------------------------
# No statement deeper than INLINE_DEPTH (B12, B16, B17)
# --------------------------------------------------------------------------


def test_a_contraction_just_at_the_depth_bound_is_split():
    """B12: ``(alpha*A)(z + y ... 96)`` and ``(A*C)(zz + y ... 95)`` nested reach
    INLINE_DEPTH exactly before the contraction; spilled only above it, a statement was
    INLINE_DEPTH + 1 deep."""
    s, sv = chain(z, y, 96)
    s2, sv2 = chain(zz, y, 95)
    for e in ((alpha * A)(s), (A * C)(s2)):
        assert max_depth(ops.nested(v=e)) <= ops.INLINE_DEPTH
    assert_values({"v": AL * np.einsum("mn,en->em", a, sv), "w": np.einsum("mn,kj,enj->emk", a, c, sv2)},
                  lifts=(False,), v=(alpha * A)(s), w=(A * C)(s2))


def test_a_product_of_many_factors_is_split():
    """B16: the nested form of ``(M * ... * M)(u)`` with 110 factors was one 111-deep
    statement (with 250, deeper than the parser's MAX_DEPTH).  Type-checked, not evaluated:
    numpy arrays have at most 64 dimensions."""
    M = ops.Matrix("M", "n", "n")
    K = M
    for _ in range(109):
        K = K * M
    p = ops.nested(v=K(ops.Tensor("u", *["n"] * 110)))
    assert max_depth(p) <= ops.INLINE_DEPTH
    assert ct.check(p, {"n": 1})["v"] == (1,) * 110


def test_a_broadcast_over_many_dimensions_is_split():
    """B17: ``z + y`` with z : [m]*120 + [n] and y : [n] expands y 120 times: one 122-deep
    statement unless the broadcast is split; also ``z + (y + x ... 98)``."""
    big = ops.Tensor("big", *["m"] * 120, "n")
    for lift in (True, False):
        p = ops.program(v=big + y, lift=lift)
        assert max_depth(p) <= ops.INLINE_DEPTH
        assert ct.check(p, {"m": 1, "n": 2})["v"] == (1,) * 120 + (2,)
    s, _ = chain(y, x, 98)
    for lift in (True, False):
        assert max_depth(ops.program(v=z + s, lift=lift)) <= ops.INLINE_DEPTH


# --------------------------------------------------------------------------
# Shared subexpressions visited once (B26, B28): exponential otherwise
# --------------------------------------------------------------------------


def test_forty_levels_of_a_shared_subexpression(monkeypatch):
    """B26, B28: ``y = M(y + y)`` forty times is 2^40 paths but 82 objects: the input x,
    the operator M (one object, shared) and per level the sum and the application; walk
    and the DAG visit each once (visiting paths, 22 levels took over a minute).  So that
    the test fails instead of running for hours: walk is read only one object further than
    its length, and the DAG's calls of ``_children`` are counted and stopped at a bound
    linear in the levels (visiting each object once, 6 per level)."""
    levels = 40
    M, t = ops.Matrix("M", "n", "n"), ops.Tensor("x", "n")
    mv = np.linalg.qr(RNG.standard_normal((n, n)))[0] / 2  # |M(y + y)| = |y|: no overflow
    want = xv
    for _ in range(levels):
        t, want = M(t + t), mv @ (want + want)
    seen = list(itertools.islice(ops.walk(t), 2 * levels + 3))
    assert len({id(e) for e in seen}) == len(seen) == 2 * levels + 2
    assert [type(e).__name__ for e in seen[:4]] == ["Apply", "Factor", "Pointwise", "Apply"] and seen[1] is M
    calls = []
    children = ops._children

    def counted(e: ops.TExpr) -> list[ops.TExpr]:
        calls.append(e)
        if len(calls) > 20 * levels:
            raise AssertionError(f"_children called {len(calls)} times for {levels} levels: paths, not objects")
        return children(e)

    monkeypatch.setattr(ops, "_children", counted)
    for lift, count in ((True, 2 * levels), (False, levels)):
        calls.clear()
        p = ops.program(v=t, lift=lift)
        assert len(p.stmts) == count
        np.testing.assert_allclose(evaluate(p, {"M": mv, "x": xv}, {"n": n})["v"], want, rtol=1e-9)
