"""The planner (issue 5): normal forms from eval.py's equations, contraction order, fusion, layouts."""

from __future__ import annotations

import math

import numpy as np
import pytest

import core_teil as ct
from core_teil.lang.typing import check_program
from core_teil.native import planner
from core_teil.native.planner import Leaf, Temp, contraction_order, normal_forms, plan, policy


def typed(text_or_path: str, params: dict | None = None):
    p = ct.load(text_or_path) if text_or_path.endswith(".teil") else ct.parse(text_or_path)
    return check_program(p, params or {})


def flops(p: planner.Plan) -> int:
    """Multiply-adds of every mac step (the cost the contraction order minimises)."""
    total = 0
    for sp in p.stmts:
        for s in sp.lowering.steps:
            if s.kind == "mac":
                total += math.prod(lab.bound for lab in s.loops())
    return total


def test_index_operators_are_index_maps_not_copies():
    # transp, diag, expa and proj only change the index map of the one leaf
    t = typed("lang full\ninput alloc A : [3, 4, 4]\noutput alloc B : [2, 4, 3]\n"
              "B = expa 1 2 (transp 1 2 (diag 2 3 A))\n")
    nfs, _ = normal_forms(t, None)
    (term,) = nfs[0].poly.terms
    (leaf,) = term.factors
    assert isinstance(leaf, Leaf) and leaf.buf.name == "A"
    _k1, k2, k3 = nfs[0].labels
    assert leaf.index == (k3, k2, k2)  # diag repeats a label, transp swaps, expa drops k1
    (sp,) = plan(t).stmts
    assert [s.kind for s in sp.lowering.steps] == ["mac"] and not sp.lowering.temps
    p2 = plan(typed("lang full\ninput alloc A : [3, 4]\noutput alloc B : [3]\nB = proj 2 3 A\n"))
    (leaf2,) = p2.nfs[0].poly.terms[0].factors
    assert leaf2.index == (p2.nfs[0].labels[0], 3)


def test_sub_and_div_build_terms_and_atoms():
    t = typed("alloc A : [3]\nalloc B : [3]\nalloc C : [3]\nC = sub (mul A B) (div A B)\n")
    (nf, *_) = [n for n in normal_forms(t, None)[0] if n.stmt.target == "C"]
    a, b = nf.poly.terms
    assert (a.coeff, b.coeff) == (1.0, -1.0)
    assert len(a.factors) == 2 and isinstance(b.factors[0], planner.DivAtom)


def test_lifting_of_nested_contractions_is_O_n4():
    """Paper 000, section 5: the nested A ⊗ A ⊗ A of interp_nested is scheduled as three
    O(E n^4) contractions, exactly like the hand-lifted interp (and not O(E n^6))."""
    params = {"E": 10, "m": 5, "n": 5}
    nested = plan(typed("examples/interp_nested.teil", params))
    lifted = plan(typed("examples/interp.teil", params))
    E, n = 10, 5
    assert flops(nested) == flops(lifted) == 3 * E * n**4
    assert flops(nested) < E * n**6


def test_single_use_statements_are_inlined_and_dead_ones_dropped():
    t = typed("examples/interp.teil", {"E": 4, "m": 3, "n": 3})
    assert policy(t.program) == ["inline", "inline", "materialize"]
    p = plan(t)
    assert [sp.nf.stmt.target for sp in p.stmts] == ["v"]
    assert policy(ct.parse("alloc A : [2]\nalloc B : [2]\nB = A\nB = add A A\n")) == ["dead", "materialize"]
    # read twice: materialised once, not recomputed
    assert policy(ct.parse("alloc A : [2]\nalloc B : [2]\nalloc C : [2]\nB = mul A A\nC = add B B\n"))[0] \
        == "materialize"


def test_batch_label_is_fused_for_interp_and_helm():
    for path, params in [("examples/interp.teil", {"E": 6, "m": 3, "n": 3}),
                         ("examples/helm.teil", {"E": 6, "n": 3})]:
        p = plan(typed(path, params))
        (sp,) = p.stmts
        assert sp.batch is sp.nf.labels[0] and sp.batch.bound == 6
        assert len(sp.calls) == 1 and all(t.scratch for t in sp.lowering.temps)
        assert all(sp.batch not in (t.layout or ()) for t in sp.lowering.temps)


def test_helm_division_is_fused_into_the_element_loop():
    p = plan(typed("examples/helm.teil", {"E": 4, "n": 3}))
    kinds = [d.kind for c in p.stmts[0].calls for d in c.ops]
    assert "div" in kinds and kinds.count("mac2b_set") + kinds.count("mac2b") + kinds.count("mac2") == 6


def test_large_gemm_goes_to_blas_and_writes_the_target_directly():
    p = plan(typed("examples/matmul.teil", {"l": 128, "m": 128, "n": 128}))
    (sp,) = p.stmts
    assert [c.blas is not None for c in sp.calls] == [True]
    small = plan(typed("examples/matmul.teil", {"l": 8, "m": 8, "n": 8}))
    assert all(c.blas is None for c in small.stmts[0].calls)


def test_contraction_order_exhaustive_is_optimal():
    a, b, c, d = (planner.Label(x, n, "red") for x, n in [("a", 100), ("b", 2), ("c", 100), ("d", 2)])
    # chain M1[a,b] M2[b,c] M3[c,d], keep a, d: (M2 M3) first is 100*2*2 + 100*2*2 vs 100*2*100 + ...
    pairs = contraction_order([{a, b}, {b, c}, {c, d}], {a, d})
    assert pairs[0] == (1, 2)


def test_contraction_order_greedy_beyond_the_exhaustive_limit():
    n = planner.EXHAUSTIVE_FACTORS + 2
    labs = [planner.Label(f"l{i}", 3, "red") for i in range(n + 1)]
    factors = [{labs[i], labs[i + 1]} for i in range(n)]
    pairs = contraction_order(factors, {labs[0], labs[-1]})
    assert len(pairs) == n - 1  # every factor multiplied in exactly once


def test_layouts_make_each_interp_step_one_small_matrix_kernel():
    p = plan(typed("examples/interp.teil", {"E": 4, "m": 7, "n": 7}))
    macs = [d for c in p.stmts[0].calls for d in c.ops if d.kind.startswith("mac")]
    assert len(macs) == 3 and all(d.kind.startswith("mac2b") for d in macs)
    assert all([lp[0] for lp in d.loops] == [49, 7, 7] for d in macs)


def test_padded_plan_runs_over_padded_extents():
    p = plan(typed("examples/interp.teil", {"E": 5, "m": 7, "n": 7}), pad=8)
    assert p.stmts[0].nf.target.shape == (8, 8, 8, 8)
    macs = [d for c in p.stmts[0].calls for d in c.ops if d.kind.startswith("mac")]
    assert all(lp[0] % 8 == 0 for d in macs for lp in d.loops)


def test_expa_guard_under_padding_is_a_select_not_a_product():
    # where j > d the guarded value is 0 even if the body is •; 0·• would be •
    t = typed("input alloc A : [3]\noutput alloc B : [3, 3]\nB = expa 3 A\n")
    p = plan(t, pad=4)
    assert any(s.kind == "sel" for s in p.stmts[0].lowering.steps)
    from core_teil.native import engine as native

    out = native.compile(t.program, {}, 4)(A=np.array([1.0, np.nan, 2.0]))
    np.testing.assert_array_equal(np.isnan(out["B"]), np.isnan(np.broadcast_to([1.0, np.nan, 2.0], (3, 3))))


@pytest.mark.parametrize("pad", [None, 2])
def test_every_label_summed_once(pad):
    p = plan(typed("examples/helm.teil", {"E": 3, "n": 2}), pad)
    for sp in p.stmts:
        for sch in sp.lowering.schedules:
            summed = [lab for s in sch.steps for lab in s.summed()]
            assert len(summed) == len(set(summed))
            assert set(summed) <= set(sch.term.red)


def test_temps_are_laid_out_over_their_labels():
    p = plan(typed("examples/mttkrp.teil", {"I": 3, "J": 4, "K": 5, "L": 6}))
    for t in p.stmts[0].lowering.temps:
        assert isinstance(t, Temp) and set(t.layout or ()) <= set(t.labels)


# --------------------------------------------------------------------------
# Issue 12: einsum chains with small mixed extents (MAC2B's rows loop)
# --------------------------------------------------------------------------


def _chains() -> list[tuple[str, tuple[tuple[int, ...], ...]]]:
    """Matrix chains of 2-6 operands over extents 1-8 (seeded), plain and with an operand
    transposed or a shared batch label; the issue's own case first."""
    rng = np.random.default_rng(12)
    cases: list[tuple[str, tuple[tuple[int, ...], ...]]] = [
        ("ab,bc,cd,de->ae", ((2, 3), (3, 4), (4, 2), (2, 3))),
        ("ab,bc,cd,de->ae", ((20, 3), (3, 4), (4, 2), (2, 3))),
    ]
    for k in range(2, 7):
        for _ in range(5):
            ext = [int(x) for x in rng.choice([1, 2, 3, 4, 5, 8], size=k + 1)]
            labels = "abcdefg"
            terms = [labels[i] + labels[i + 1] for i in range(k)]
            shapes = [(ext[i], ext[i + 1]) for i in range(k)]
            variant = int(rng.integers(3))
            if variant == 1:  # one operand stored transposed
                q = int(rng.integers(k))
                terms[q], shapes[q] = terms[q][::-1], shapes[q][::-1]
            elif variant == 2:  # a batch label z shared by every operand
                z = int(rng.choice([2, 3]))
                terms, shapes = ["z" + t for t in terms], [(z, *s) for s in shapes]
            out = ("z" if variant == 2 else "") + labels[0] + labels[k]
            cases.append((",".join(terms) + "->" + out, tuple(shapes)))
    return cases


@pytest.mark.parametrize(("subscripts", "shapes"), _chains(), ids=lambda x: str(x).replace(" ", ""))
def test_einsum_chains_plan_and_equal_numpy(subscripts, shapes):
    """The planner gave MAC2B ops whose rows loop it had taken as the parallel loop
    (planner.single), a two-loop nest that plan_check refused: ct.compile raised
    PlanRejected for 'ab,bc,cd,de->ae' on 2x3, 3x4, 4x2, 2x3 and ct.einsum fell back to the
    reference engine.  Now every chain compiles, and both entry points agree with numpy."""
    rng = np.random.default_rng(len(subscripts))
    xs = [rng.standard_normal(s) for s in shapes]
    want = np.einsum(subscripts, *xs)
    program = ct.from_einsum(subscripts, *shapes)
    kernel = ct.compile(program)  # raised PlanRejected before the fix
    names = [a.name for a in program.inputs()]
    got = kernel(**dict(zip(names, xs, strict=True)))[program.outputs()[0].name]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ct.einsum(subscripts, *xs), want, rtol=1e-12, atol=1e-12)
    for sp in plan(check_program(program, {})).stmts:
        for call in sp.calls:
            for d in call.ops:
                if d.kind in planner.KERNEL_LOOPS:  # the kernel's own loops are all still there
                    assert planner.smallb_shape([list(lp) for lp in d.loops])


def test_plan_check_rejects_a_small_matrix_op_parallel_over_its_rows():
    """The corrupted plan is the one the planner used to build: MAC2B's rows loop p popped
    out of the kernel's three loops (p, k, j) and run as the parallel batch."""
    from core_teil.native.plan_check import PlanRejected, check_plan

    p = plan(check_program(ct.from_einsum("ab,bc,cd,de->ae", (2, 3), (3, 4), (4, 2), (2, 3)), {}))
    check_plan(p)  # the planner's own plan passes
    call, d = next((c, d) for sp in p.stmts for c in sp.calls for d in c.ops
                   if d.kind.startswith("mac2b") and len(d.loops) == 3 and c.nbatch == 1)
    (rows, *rest) = d.loops
    d.par, d.loops = 0, tuple(rest)
    d.nbatch = call.nbatch = rows[0]
    d.batch_strides = tuple(rows[1:])
    with pytest.raises(PlanRejected, match="small-matrix op outside the kernel's limits"):
        check_plan(p)


def _ops_of(subscripts: str, *shapes: tuple[int, ...]) -> list[tuple[planner.Call, planner.OpDesc]]:
    p = plan(check_program(ct.from_einsum(subscripts, *shapes), {}))
    return [(c, d) for sp in p.stmts for c in sp.calls for d in c.ops]


def test_an_op_of_one_loop_runs_parallel_over_it():
    """planner.single (issue 12 review, P04): the zero fill of the 2x3 target of
    'ab,bc,cd,de->ae' merges into one loop of 6, which no kernel runs itself: it becomes the
    parallel batch (stride 1), and the op runs on single elements."""
    ((call, d),) = [(c, d) for c, d in _ops_of("ab,bc,cd,de->ae", (2, 3), (3, 4), (4, 2), (2, 3))
                    if d.kind == "fill"]
    assert (call.nbatch, d.nbatch, d.par, d.loops, d.batch_strides) == (6, 6, 0, (), (1,))


def test_a_small_matrix_op_runs_parallel_over_a_loop_outside_its_kernel():
    """planner.single (P03): MAC2B's kernel runs its last three loops (p, k, j); a fourth,
    outer loop that moves the output (a, 20 rows of E[a, e, x]) is the parallel batch."""
    ops = _ops_of("abx,bc,cd,de->aex", (20, 3, 5), (3, 4), (4, 2), (2, 3))
    call, d = next((c, d) for c, d in ops if d.step is not None and d.operands[0].store.name == "E")
    assert d.kind == "mac2b_set" and (call.nbatch, d.nbatch, d.par) == (20, 20, 0)
    assert [lp[0] for lp in d.loops] == [5, 3, 3] and planner.smallb_shape([list(lp) for lp in d.loops])
    assert d.batch_strides == (15, 15, 0)  # E and A move with a; the small matrix does not
