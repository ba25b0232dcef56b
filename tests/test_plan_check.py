"""The plan check (issue 5) at its boundaries: every corruption is one element too small or
one step too far, and the uncorrupted plan is accepted first (issue 12 review, P13-P20).

The descriptor check (plan_check, check 3) is what lets the native engine run its loops
without bounds checks, so each comparison is pinned where ``>=`` and ``>`` differ.  Check 4
(the calls run the steps) is tested clause by clause, and the BLAS bug it would have caught
(two GEMMs into one temporary; a coefficient dropped) against the reference engine."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import core_teil as ct
from core_teil.lang.typing import check_program
from core_teil.native import engine as native
from core_teil.native import planner
from core_teil.native.plan_check import PlanRejected, check_blas_output, check_plan, smallb_kernel
from core_teil.semantics.eval import evaluate


def _plan(program: ct.Program, params: dict[str, int] | None = None) -> planner.Plan:
    p = planner.plan(check_program(program, params or {}))
    check_plan(p)  # the uncorrupted plan is accepted
    return p


def _einsum_plan(subscripts: str, *shapes: tuple[int, ...]) -> planner.Plan:
    return _plan(ct.from_einsum(subscripts, *shapes))


def _ops(p: planner.Plan) -> list[tuple[planner.Call, planner.OpDesc]]:
    return [(c, d) for sp in p.stmts for c in sp.calls for d in c.ops]


def _short(store: planner.Storage, n: int) -> None:
    """``store`` as if it had ``n`` elements fewer than its shape: the size the descriptor
    check compares each op's reach against (an allocation off by ``n``)."""
    cls = type(store)
    short = type(f"Short{cls.__name__}", (cls,), {"size": property(lambda s: math.prod(s.shape) - n)})
    object.__setattr__(store, "__class__", short)  # Buffer is frozen


def _a_by_temp() -> tuple[planner.Plan, planner.Temp]:
    """``ab,bc,cd->a`` on 3x5, 5x1, 1x5 (three steps): a temporary over ``a`` (3 elements) that a
    fill and two MAC2 ops write and read, each op parallel over ``a`` (batch stride 1)."""
    p = _einsum_plan("ab,bc,cd->a", (3, 5), (5, 1), (1, 5))
    t = next(o.store for _, d in _ops(p) for o in d.operands if isinstance(o.store, planner.Temp) and o.store.size == 3)
    uses = [(c.nbatch, d.batch_strides[r]) for c, d in _ops(p) for r, o in enumerate(d.operands) if o.store is t]
    assert len(uses) == 3 and all(u == (3, 1) for u in uses)
    return p, t


# --------------------------------------------------------------------------
# 3. Descriptors against the storage they address
# --------------------------------------------------------------------------


def test_an_op_reaching_one_element_past_a_temporary_is_rejected() -> None:
    """P13: the ops reach element 2 of a 3-element temporary; two elements is one too few."""
    p, t = _a_by_temp()
    _short(t, 1)
    with pytest.raises(PlanRejected, match=re.escape(f"reaches element 2 of {t!r}, which has 2")) as info:
        check_plan(p)
    assert info.value.rule == "plan check: descriptor"


def test_an_op_reaching_one_element_past_an_input_is_rejected() -> None:
    """P13 on an input: Z3 proves the reads inside A's shape; the op's reach is checked against
    the storage (one element short here) separately."""
    p = _plan(ct.parse("lang full\ninput alloc A : [5]\ninput alloc B : [5]\noutput alloc C : [5]\n"
                       "C = mul A B\n"))
    a = next(o.store for _, d in _ops(p) for o in d.operands if isinstance(o.store, planner.Buffer)
             and o.store.name == "A")
    _short(a, 1)
    with pytest.raises(PlanRejected, match=r"reaches element 4 of A@initial, which has 4"):
        check_plan(p)


def test_a_temporary_sized_for_one_batch_element_under_a_parallel_op_is_rejected() -> None:
    """P14: without the batch loop's reach, one element of the temporary looks enough: each
    batch element alone stays inside it; together they reach element 2."""
    p, t = _a_by_temp()
    _short(t, 2)
    with pytest.raises(PlanRejected, match=re.escape(f"reaches element 2 of {t!r}, which has 1")):
        check_plan(p)


@pytest.mark.parametrize("beyond", [1, -1])
def test_a_parallel_loop_that_does_not_exist_is_malformed(beyond: int) -> None:
    """P16: the op has three merged loops (0, 1, 2; loop 0 runs as the parallel batch); loop 3
    is one too far (an IndexError in the check itself before), -1 one too low."""
    p = _einsum_plan("ab,bc,cd,de->ae", (2, 3), (3, 4), (4, 2), (2, 3))
    call, d = next((c, d) for c, d in _ops(p) if d.kind == "mac2")
    assert d.par == 0 and len(d.loops) == 2 and call.nbatch == 2
    d.par = len(d.loops) + 1 if beyond > 0 else -1
    with pytest.raises(PlanRejected, match="malformed op"):
        check_plan(p)


def _reversal(n: int) -> ct.Program:
    """``B = transp 1 n (transp 2 (n-1) ... A)`` on [2, ..., 2]: no two loops merge, and the
    first label becomes the fused batch, so the copy has ``n - 1`` loops."""
    e = "A"
    for i in range(1, n // 2 + 1):
        e = f"transp {i} {n + 1 - i} ({e})"
    shape = ", ".join(["2"] * n)
    return ct.parse(f"lang full\ninput alloc A : [{shape}]\noutput alloc B : [{shape}]\nB = {e}\n")


def test_an_op_with_more_loops_than_the_engine_runs_is_malformed(monkeypatch: pytest.MonkeyPatch) -> None:
    """P15: the planner refuses a step of more than MAXL - 2 merged loops (TeilResourceError);
    a planner that did not (its MAXL one larger) is refused by the plan check.  MAXL - 2 loops
    pass.  (Planning only: the arrays, 2^31 elements, are never made.)"""
    limit = planner.MAXL - 2
    p = _plan(_reversal(limit + 1))
    assert max(len(d.loops) for _, d in _ops(p)) == limit
    with pytest.raises(ct.TeilError, match=f"the native engine supports {limit}"):
        planner.plan(check_program(_reversal(limit + 2), {}))
    monkeypatch.setattr(planner, "MAXL", planner.MAXL + 1)
    p = planner.plan(check_program(_reversal(limit + 2), {}))
    assert max(len(d.loops) for _, d in _ops(p)) == limit + 1
    with pytest.raises(PlanRejected, match="malformed op"):
        check_plan(p)


def _blas_matmul() -> tuple[planner.Plan, planner.Step]:
    p = _plan(ct.load("examples/matmul.teil"), {"l": 64, "m": 64, "n": 64})
    (call,) = p.stmts[0].calls
    assert call.blas is not None and not call.ops
    return p, call.blas


@pytest.mark.parametrize("operand", [0, 1, 2])
def test_a_blas_view_one_element_past_its_buffer_is_rejected(operand: int) -> None:
    """P18: A, B (the views numpy.matmul reads) and C (the one it writes), each one element short."""
    p, step = _blas_matmul()
    store = [*step.args, step.out][operand].store
    _short(store, 1)
    with pytest.raises(PlanRejected, match=f"BLAS view of {store!r} leaves its buffer"):
        check_plan(p)


# --------------------------------------------------------------------------
# 1. and 2. Index maps and the laws of Σ
# --------------------------------------------------------------------------


def test_an_inlined_label_one_beyond_its_range_is_rejected() -> None:
    """P19: interp inlines its first statements; a label the inlining maps one of their labels
    to (sigma) may not run further than that label did, here by one (a label the read does
    not index by, so that nothing else sees it)."""
    p = _plan(ct.load("examples/interp.teil"), {"E": 2, "m": 2, "n": 3})
    op = next(o for sp in p.stmts for s in sp.lowering.steps for o in s.args
              if o.leaf is not None and any(a is not b for a, b in o.leaf.sigma))
    leaf = op.leaf
    assert leaf is not None
    own, used = next((a, b) for a, b in leaf.sigma if a is not b and isinstance(b, planner.Label)
                     and b not in leaf.index)
    assert used.bound == own.bound
    wider = planner.Label(used.name, used.bound + 1, used.role)
    object.__setattr__(leaf, "sigma", tuple((a, wider if b is used else b) for a, b in leaf.sigma))
    with pytest.raises(PlanRejected, match=f"label {used.name} runs beyond {own.name}"):
        check_plan(p)


def _thrice() -> planner.Plan:
    """``B = red 1 (expa 1 3 A)``: Σ over a label no factor reads, so the coefficient is 3."""
    return _plan(ct.parse("lang full\ninput alloc A : [2]\noutput alloc B : [2]\nB = red 1 (expa 1 3 A)\n"))


def test_a_coefficient_one_short_of_the_unread_sum_is_rejected() -> None:
    """P20: Σ_{m<=3} c = 3·c; a plan that computes 2·c consistently (schedule, last step, op)."""
    p = _thrice()
    (sch,) = p.stmts[0].lowering.schedules
    assert sch.term.coeff == 1.0 and sch.coeff == 3.0
    np.testing.assert_array_equal(native.compile(p.typed.program)(A=np.array([1.0, 2.0]))["B"], [3.0, 6.0])
    sch.coeff = sch.steps[-1].coeff = 2.0
    for _, d in _ops(p):
        if d.step is sch.steps[-1]:
            d.coeff = 2.0
    with pytest.raises(PlanRejected, match=r"coefficient 2\.0 for 3\.0") as info:
        check_plan(p)
    assert info.value.rule == "plan check: Σ_{m<=n} c = n·c"


# --------------------------------------------------------------------------
# MAC2B: the kernel's contract, read off teil_kernels.h (P10, P11)
# --------------------------------------------------------------------------

#: (rows p, summed k, small j) loops that both the planner's shape and the kernel accept:
#: (extent, stride of o, of a, of b).
SMALLB = [[4, 3, 5, 0], [5, 0, 1, 3], [3, 1, 0, 1]]


def _with(loop: int, field: int, value: int) -> list[list[int]]:
    out = [list(lp) for lp in SMALLB]
    out[loop][field] = value
    return out


#: Each clause of planner.smallb_shape, broken alone: (loops, does the kernel still compute them).
CLAUSES: list[tuple[str, list[list[int]], bool]] = [
    ("three loops", SMALLB[1:], False),
    ("J <= TK_SMALLB_J", _with(2, 0, planner.SMALLB_J + 1), False),
    ("K <= TK_SMALLB_K", _with(1, 0, planner.SMALLB_K + 1), False),
    ("o not moved by k", _with(1, 1, 1), False),
    ("a not moved by j", _with(2, 2, 1), False),
    ("b not moved by p", _with(0, 3, 1), False),
    # what makes the kernel pay, not what makes it right: the planner's clauses alone
    ("a moved by k", _with(1, 2, 0), True),
    ("b moved by k", _with(1, 3, 0), True),
    ("b moved by j", _with(2, 3, 0), True),
]


def test_smallb_shape_and_the_kernel_contract_accept_a_small_matrix_product() -> None:
    assert planner.smallb_shape(SMALLB) and smallb_kernel(SMALLB)
    at_limits = _with(2, 0, planner.SMALLB_J)
    at_limits[1][0] = planner.SMALLB_K
    assert planner.smallb_shape(at_limits) and smallb_kernel(at_limits)
    outer = [[7, 60, 60, 0], *SMALLB]  # a fourth, outer loop is the kernel's (or the odometer's)
    assert planner.smallb_shape(outer) and smallb_kernel(outer)


@pytest.mark.parametrize(("clause", "loops", "kernel_computes"), CLAUSES, ids=[c for c, _, _ in CLAUSES])
def test_each_clause_of_smallb_shape(clause: str, loops: list[list[int]], kernel_computes: bool) -> None:
    """P10: smallb_shape is the planner's; the plan check has its own contract (smallb_kernel),
    so that a clause lost from one is not lost from both."""
    assert not planner.smallb_shape(loops), clause
    assert smallb_kernel(loops) is kernel_computes, clause


def test_the_kernel_limits_are_the_headers() -> None:
    header = (Path(__file__).parent.parent / "native" / "teil_kernels.h").read_text()
    assert f"#define TK_SMALLB_J {planner.SMALLB_J}\n" in header
    assert f"#define TK_SMALLB_K {planner.SMALLB_K}\n" in header
    assert "double bb[TK_SMALLB_K * (W)]" in header  # the stack block K is bounded for


@pytest.mark.parametrize(("j", "k"), [(planner.SMALLB_J + 1, 5), (3, planner.SMALLB_K + 1)])
def test_a_small_matrix_op_beyond_the_kernels_block_is_rejected(j: int, k: int) -> None:
    """``zab,bc->zac`` with one column more than the kernel's stack block holds (J =
    TK_SMALLB_J + 1), or one summed row more (K = TK_SMALLB_K + 1): the planner's plain MAC2,
    its loops otherwise exactly MAC2B's shape (the limits themselves pass: the unit tests
    above), relabelled MAC2B would overrun the blocks bb and acc of tk_smallb."""
    p = _einsum_plan("zab,bc->zac", (2, 4, k), (k, j))
    d = next(d for _, d in _ops(p) if d.kind.startswith("mac2"))
    assert d.kind in ("mac2", "mac2_set") and [lp[0] for lp in d.loops] == [4, k, j]
    d.kind = {"mac2": "mac2b", "mac2_set": "mac2b_set"}[d.kind]
    with pytest.raises(PlanRejected, match="small-matrix op outside the kernel's limits"):
        check_plan(p)


# --------------------------------------------------------------------------
# 4. The calls run the steps
# --------------------------------------------------------------------------


def _chain() -> planner.Plan:
    return _a_by_temp()[0]


def _stepped(p: planner.Plan) -> list[tuple[planner.Call, planner.OpDesc]]:
    return [(c, d) for c, d in _ops(p) if d.step is not None]


def _drop(p: planner.Plan) -> None:
    c, d = _stepped(p)[-1]
    c.ops.remove(d)


def _repeat(p: planner.Plan) -> None:
    c, d = _stepped(p)[0]
    c.ops.append(d)


def _reorder(p: planner.Plan) -> None:
    calls = p.stmts[0].calls
    (c1, _), (c2, _) = _stepped(p)[:2]
    i, j = calls.index(c1), calls.index(c2)
    calls[i], calls[j] = c2, c1


def _coeff(p: planner.Plan) -> None:
    _stepped(p)[0][1].coeff = -1.0


def _arity(p: planner.Plan) -> None:
    d = next(d for _, d in _stepped(p) if d.kind == "mac2")
    d.kind = "mac1"


def _fill_value(p: planner.Plan) -> None:
    next(d for _, d in _ops(p) if d.kind == "fill").coeff = 1.0


def _no_fill(p: planner.Plan) -> None:
    sp = p.stmts[0]
    for c in sp.calls:
        c.ops[:] = [d for d in c.ops if not (d.kind == "fill" and isinstance(d.operands[0].store, planner.Temp))]


def _late_fill(p: planner.Plan) -> None:
    """A second zero fill of the first step's temporary, right after that step."""
    calls = p.stmts[0].calls
    first, d = _stepped(p)[0]
    fill = next(c for c in calls if [x.kind for x in c.ops] == ["fill"] and c.ops[0].operands[0].store
                is d.operands[0].store)
    calls.insert(calls.index(first) + 1, fill)


CORRUPTIONS: list[tuple[str, Callable[[planner.Plan], None], str]] = [
    ("a step's op dropped", _drop, "do not run the statement's 3 steps, each once and in order"),
    ("a step's op run twice", _repeat, "do not run the statement's 3 steps"),
    ("two steps swapped", _reorder, "do not run the statement's 3 steps"),
    ("an op's coefficient", _coeff, "with coefficient -1.0 runs a mac step"),
    ("a kernel reading one argument of two", _arity, "a mac1 op with coefficient 1.0 runs a mac step of 2"),
    ("a fill of ones", _fill_value, "only a zero fill"),
    ("no zero fill", _no_fill, "adds into s0.t0 before anything zeroed it"),
    ("the zero fill after the first sum", _late_fill, "only a zero fill of a whole temporary or target, before any"),
]


@pytest.mark.parametrize(("what", "corrupt", "match"), CORRUPTIONS, ids=[w for w, _, _ in CORRUPTIONS])
def test_calls_that_do_not_run_the_steps_are_rejected(what: str, corrupt: Callable[[planner.Plan], None],
                                                      match: str) -> None:
    """Checks 1-3 accepted each of these (a wrong answer, every descriptor in bounds)."""
    p = _chain()
    corrupt(p)
    with pytest.raises(PlanRejected, match=match) as info:
        check_plan(p)
    assert info.value.rule == "plan check: execution", what


def test_a_zero_fill_of_an_input_is_rejected() -> None:
    """A fill that runs no step may zero a temporary or the target, and nothing else."""
    p = _chain()
    sp = p.stmts[0]
    a = next(o for s in sp.lowering.steps for o in s.args if o.leaf is not None and o.store.name == "A")
    fill = planner.Scheduler(sp.lowering, planner.Operand(sp.nf.target, sp.nf.labels), None).fill(
        planner.Operand(a.store, a.index))
    sp.calls.insert(0, planner.single(fill))
    with pytest.raises(PlanRejected, match="into A@initial; only a zero fill of a whole temporary or target"):
        check_plan(p)


def test_a_zero_fill_of_part_of_the_target_is_rejected() -> None:
    """The target's fill at a diagonal index ``E[k, k]``: its loops true to that index map,
    but the rest of E keeps what the memory held."""
    p = _einsum_plan("ab,bc,cd,de->ae", (2, 3), (3, 4), (4, 2), (2, 3))
    sp = p.stmts[0]
    (call,) = [c for c in sp.calls if [d.kind for d in c.ops] == ["fill"]
               and c.ops[0].operands[0].store is sp.nf.target]
    k = sp.nf.labels[0]
    fill = planner.Scheduler(sp.lowering, planner.Operand(sp.nf.target, sp.nf.labels), None).fill(
        planner.Operand(sp.nf.target, (k, k)))
    sp.calls[sp.calls.index(call)] = planner.single(fill)
    with pytest.raises(PlanRejected, match="into E@0; only a zero fill of a whole temporary or target"):
        check_plan(p)


def test_an_op_that_runs_no_step_is_a_fill() -> None:
    """A stepless op of another kind (a DIV with its argument slots empty) into a temporary of
    its own, written by nothing else: nothing but this clause refuses it."""
    p = _chain()
    sp = p.stmts[0]
    t = planner.Temp("s0.extra", frozenset(sp.nf.labels), layout=tuple(sp.nf.labels))
    d = planner.Scheduler(sp.lowering, planner.Operand(sp.nf.target, sp.nf.labels), None).fill(planner.Operand(t))
    d.kind = "div"
    call = planner.single(d)
    call.temps = [t]
    sp.calls.insert(0, call)
    with pytest.raises(PlanRejected, match=r"a div op with coefficient 0\.0 that runs no step, into s0\.extra"):
        check_plan(p)


def test_a_step_run_before_the_steps_that_compute_its_factors_is_rejected() -> None:
    """The last step (D += t0 · t1) moved first, in the statement's steps and in its calls
    alike: each schedule is still right, but t0 and t1 are read before they are written."""
    p = _chain()
    sp = p.stmts[0]
    last = sp.lowering.steps.pop()
    sp.lowering.steps.insert(0, last)
    call = next(c for c in sp.calls if any(d.step is last for d in c.ops))
    sp.calls.remove(call)
    sp.calls.insert(1, call)  # after the fill of D
    with pytest.raises(PlanRejected, match=r"s0\.t\d is read before it is written"):
        check_plan(p)


def test_a_blas_step_summing_a_label_of_one_argument_is_rejected() -> None:
    """``C[i, j] = Σ_k Σ_x A[i, k, x] B[k, j]`` as one BLAS step (the planner pre-reduces x;
    a planner that did not): engine.gemm's views have no place for x and read x = 1 only."""
    i, j, k, x = (planner.Label(n, 3, r) for n, r in [("i", "out"), ("j", "out"), ("k", "red"), ("x", "red")])
    a, b, c = (planner.Buffer(n, s, "initial") for n, s in [("A", (3, 3, 3)), ("B", (3, 3)), ("C", (3, 3))])
    step = planner.Step("mac", planner.Operand(c, (i, j)), (planner.Operand(a, (i, k, x)), planner.Operand(b, (k, j))))
    with pytest.raises(PlanRejected, match=r"\(labels \['x'\] in no group\)"):
        check_blas_output(step, "statement 1 (C)")
    check_blas_output(planner.Step("mac", step.out, (planner.Operand(a, (i, k, k)), step.args[1])), "statement 1 (C)")


N = 64  # BLAS-sized (planner.BLAS_MIN_VOLUME, BLAS_MIN_DIM)

#: Statements whose temporary is the product of a GEMM-shaped step: as one term of two
#: (sub, add) or with a coefficient (Σ over an unread label).  The planner ran each such step
#: as numpy.matmul, which overwrites its output with the plain product.
BLAS_TEMPS = {
    "sub": "D = div (sub (contr 2 3 (prod A B)) (contr 2 3 (prod B A))) E",
    "add": "D = mul (add (contr 2 3 (prod A B)) (contr 2 3 (prod B A))) E",
    "coefficient": "D = div (red 1 (expa 1 3 (contr 2 3 (prod A B)))) E",
}


def _blas_program(stmt: str) -> ct.Program:
    decls = "".join(f"input alloc {x} : [{N}, {N}]\n" for x in "ABE")
    return ct.parse(f"lang full\n{decls}output alloc D : [{N}, {N}]\n{stmt}\n")


@pytest.mark.parametrize("case", list(BLAS_TEMPS))
def test_gemm_shaped_steps_into_a_shared_or_scaled_temporary_agree_with_reference(case: str) -> None:
    """The native engine computed (A B - B A) / E as (-(B A)) / E before the fix (planner.blas_eligible)."""
    program = _blas_program(BLAS_TEMPS[case])
    rng = np.random.default_rng(12)
    inputs = {x: rng.standard_normal((N, N)) for x in "ABE"}
    want = evaluate(program, inputs)["D"]
    np.testing.assert_allclose(native.compile(program)(**inputs)["D"], want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("case", "match"), [
    ("sub", r"a blas op assigns s0\.t0, which 1 other op\(s\) also write"),
    ("add", r"a blas op assigns s0\.t0, which 1 other op\(s\) also write"),
    ("coefficient", "a BLAS call for a mac step with coefficient 3.0; numpy.matmul computes the plain product"),
])
def test_the_plan_check_rejects_what_the_planner_did_before(case: str, match: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Check 4 against the planner before the fix: a temporary's GEMM-shaped step went to BLAS
    whoever else wrote the temporary and whatever its coefficient."""
    eligible = planner.blas_eligible

    def before_the_fix(step: planner.Step, direct: bool) -> bool:
        if not isinstance(step.out.store, planner.Temp):
            return eligible(step, direct)
        coeff, step.coeff = step.coeff, 1.0
        try:
            return eligible(step, True)
        finally:
            step.coeff = coeff

    monkeypatch.setattr(planner, "blas_eligible", before_the_fix)
    p = planner.plan(check_program(_blas_program(BLAS_TEMPS[case]), {}))
    assert any(c.blas is not None for sp in p.stmts for c in sp.calls)
    with pytest.raises(PlanRejected, match=match):
        check_plan(p)


def test_a_blas_temporary_laid_out_otherwise_than_matmul_writes_it_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy.matmul writes [i, j] row-major from the temporary's first element; a planner that
    laid the temporary out [j, i] (every op reading it consistently) read it transposed."""
    lay = planner.lay_blas

    def transposed(step: planner.Step) -> None:
        lay(step)
        batch, i, *_ = planner.classify(step)
        t = step.out.store
        assert isinstance(t, planner.Temp) and t.layout is not None
        nb, ni = len(batch), len(i)
        t.layout = (*t.layout[:nb], *t.layout[nb + ni:], *t.layout[nb:nb + ni])

    program = ct.from_einsum("ab,bc,cd->ad", (N, 2 * N), (2 * N, N), (N, N))
    check_plan(planner.plan(check_program(program, {})))
    monkeypatch.setattr(planner, "lay_blas", transposed)
    p = planner.plan(check_program(program, {}))
    assert any(c.blas is not None and isinstance(c.blas.out.store, planner.Temp) for c in p.stmts[0].calls)
    with pytest.raises(PlanRejected, match=r"BLAS writes s0\.t0 row-major \[batch, i, j\]"):
        check_plan(p)


def test_a_blas_step_with_a_label_in_no_group_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    """``C[i, j, x] = Σ_k A[i, k] B[k, j]`` (expa): x is in no operand, so the step is no GEMM;
    engine.gemm would write the product for one x and leave the rest of C unwritten."""
    program = ct.parse(f"lang full\ninput alloc A : [{N}, {N}]\ninput alloc B : [{N}, {N}]\n"
                       f"output alloc C : [{N}, {N}, 2]\nC = expa 3 2 (contr 2 3 (prod A B))\n")
    eligible = planner.blas_eligible
    monkeypatch.setattr(planner, "blas_eligible", lambda step, direct: eligible(step, direct) or (
        step.kind == "mac" and len(step.args) == 2 and direct and bool(planner.classify(step)[4])))
    p = planner.plan(check_program(program, {}))
    assert [c.blas is not None for c in p.stmts[0].calls] == [True]
    with pytest.raises(PlanRejected, match=r"BLAS writes C@0 row-major .* \(labels \['k3_2'\] in no group\)"):
        check_plan(p)


# reviewer rP (P16, P19): the kernel of an op must be the one of its step's kind, not only of its arity


def _division_plan() -> planner.Plan:
    return _plan(ct.parse("param n\ninput alloc A : [n]\ninput alloc B : [n]\noutput alloc C : [n]\n"
                          "C = div A B\n"), {"n": 5})


def _div_on_sel(p: planner.Plan) -> None:
    next(d for _, d in _ops(p) if d.kind == "div").kind = "sel"


def _mac_on_div(p: planner.Plan) -> None:
    next(d for _, d in _stepped(p) if d.kind == "mac2").kind = "div"


@pytest.mark.parametrize(("make", "corrupt", "match"), [
    (_division_plan, _div_on_sel, r"a sel op with coefficient .* runs a div step"),
    (_chain, _mac_on_div, r"a div op with coefficient .* runs a mac step"),
], ids=["div step on sel", "mac step on div"])
def test_an_op_on_the_kernel_of_another_step_kind_is_rejected(make: Callable[[], planner.Plan],
                                                             corrupt: Callable[[planner.Plan], None],
                                                             match: str) -> None:
    p = make()
    corrupt(p)
    with pytest.raises(PlanRejected, match=match):
        check_plan(p)


def test_a_blas_call_for_a_step_that_is_not_a_product_is_rejected() -> None:
    # reviewer rP (P11): numpy.matmul computes a plain product, never a controlled division;
    # the check said ValueError (from planner.blas_groups) before it said PlanRejected
    p = _division_plan()
    c, d = next((c, d) for c, d in _ops(p) if d.kind == "div")
    c.ops.remove(d)
    c.blas = d.step
    with pytest.raises(PlanRejected, match="a BLAS call for a div step of 2 argument") as info:
        check_plan(p)
    assert info.value.rule == "plan check: execution"


def test_a_blas_call_for_a_sum_of_one_factor_is_rejected() -> None:
    # reviewer rP (P12): a step of one factor handed to the two-operand BLAS call
    p = _plan(ct.parse("param n\ninput alloc A : [n, n]\noutput alloc B : [n]\nB = red A\n"), {"n": 3})
    c, d = next((c, d) for c, d in _ops(p) if d.step is not None and len(d.step.args) == 1)
    c.ops.remove(d)
    c.blas = d.step
    with pytest.raises(PlanRejected, match="a BLAS call for a mac step of 1 argument"):
        check_plan(p)
