"""Review r31 of errors.in_file, --param's file names, ops.program's mapping check and the bench's
overflow-guard column: the cases the change's own tests left open (each test here failed on a
mutant of the change that every other test let through)."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest

import bench
import core_teil as ct
from bench import Floor, Row, Run
from core_teil import cli, ops
from core_teil.errors import in_file

ROOT = Path(__file__).resolve().parent.parent
AXPY = ROOT / "examples" / "axpy.teil"
MATMUL = ROOT / "examples" / "matmul.teil"

# --------------------------------------------------------------------------
# 1: a program that is no file is not named as one: <ops>, <einsum>, and no name at all
# --------------------------------------------------------------------------


def test_in_file_names_a_file_and_nothing_else() -> None:
    assert in_file("k.teil") == "k.teil: "
    assert in_file("onnx:model.onnx") == "onnx:model.onnx: "
    for file in ("", "<string>", "<ops>", "<einsum>"):
        assert in_file(file) == ""


def _no_file_programs() -> list[tuple[str, ct.Program]]:
    A, u = ops.Matrix("A", "n", "n"), ops.Tensor("u", "n")
    text = MATMUL.read_text()
    return [("<ops>", ops.program(v=A(u))), ("<einsum>", ct.from_einsum("ij,jk->ik", (2, 3), (3, 4))),
            ("empty name", ct.parse(text, "")), ("<string>", ct.parse(text))]


@pytest.mark.parametrize("index", range(4), ids=[name for name, _ in _no_file_programs()])
def test_an_input_the_program_does_not_allocate_names_no_made_up_file(index: int) -> None:
    _, program = _no_file_programs()[index]
    with pytest.raises(ct.TeilInputError, match=r"^core-teil: input error: input 'Z': the program allocates no"):
        ct.evaluate(program, {"Z": np.ones(2)})


def test_trace_given_an_input_the_program_does_not_allocate_names_the_file() -> None:
    """ct.trace reads the parameters off its inputs (inputs.infer_params) before any other check."""
    with pytest.raises(ct.TeilInputError, match=rf"^core-teil: input error: {MATMUL}: input 'Z': the program"):
        ct.trace(ct.load(str(MATMUL)), "C[1,1]", None, {"Z": np.ones(2)})


# --------------------------------------------------------------------------
# 2: --param for several files at once (prove PATH PATH) names none, and no empty one
# --------------------------------------------------------------------------


def test_a_malformed_param_of_a_library_run_is_said_without_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["prove", str(MATMUL), str(AXPY), "--param", "l=0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("core-teil: input error: --param l=0: shape parameters range over integers >= 1")


# --------------------------------------------------------------------------
# 3: ops.program takes any mapping, not only a dict
# --------------------------------------------------------------------------


def test_ops_program_takes_a_mapping_that_is_not_a_dict() -> None:
    A, u = ops.Matrix("A", "n", "n"), ops.Tensor("u", "n")
    outputs = types.MappingProxyType({"v": A(u)})
    assert ops.program(outputs) == ops.program(v=A(u))
    assert ops.nested(outputs) == ops.nested(v=A(u))


# --------------------------------------------------------------------------
# 4: the overflow guard's column: timed for a one-GEMM kernel, said for the worst kernel only
# --------------------------------------------------------------------------


def _matmul(sizes: tuple[int, int, int]) -> bench.Kernel:
    l, m, n = sizes
    return bench.Kernel(f"matmul {l}x{m}x{n}", "examples/matmul.teil", {"l": l, "m": m, "n": n},
                        {"A": (l, m), "B": (m, n)}, lambda A, B: np.einsum("ij,jk->ik", A, B),
                        lambda A, B: np.einsum("ij,jk->ik", A, B, optimize=True), np.matmul, "C", 2.0 * l * m * n)


def test_run_kernel_times_the_guard_of_a_kernel_that_is_one_gemm_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "REPEAT", 1)
    monkeypatch.setattr(bench, "BUDGET_S", 0.0)
    gemm = bench.run_kernel(_matmul((64, 65, 66)), np.random.default_rng(0))  # the planner's one-GEMM path
    assert gemm.agree and bench.GUARD in gemm.ms and gemm.ms[bench.GUARD] >= 0.0
    fused = bench.run_kernel(_matmul((4, 5, 6)), np.random.default_rng(0))  # fused loops, not one GEMM
    assert fused.agree and bench.GUARD not in fused.ms


def test_a_kernel_with_plans_for_several_sizes_is_not_one_gemm() -> None:
    from core_teil.native import engine as native

    kern = native.compile(ct.load(str(MATMUL)), {})
    big = {"A": np.ones((64, 65)), "B": np.ones((65, 66))}
    kern(**big)
    assert bench._direct_guard(kern, big) is not None
    kern(A=np.ones((4, 5)), B=np.ones((5, 6)))
    assert len(kern.plans) == 2 and bench._direct_guard(kern, big) is None


def _row(name: str, **ms: float) -> Row:
    return Row(name, {"native": 10.0, "native pad 8": 9.0, "numpy.einsum": 100.0, "opt_einsum": 90.0,
                      "hand numpy": 80.0, **ms}, 1.0, {}, True)


def test_the_verdict_says_the_guard_only_of_the_worst_kernel() -> None:
    rows = [_row("bmm 8192x72x26", native=10.5, **{"hand numpy": 10.0, bench.GUARD: 0.8}),
            _row("interp E=20000 n=4", native=88.0)]
    run = Run("single thread", 1, Floor(10.0, 50.0, 1, "test"), rows, [])
    target = next(t for t, _ in bench.issue15_targets(run, None) if t.startswith("no bench kernel"))
    assert target.endswith("worst interp E=20000 n=4, native 1.10x hand numpy")
    rows.reverse()  # the worst first or last: the same verdict
    assert next(t for t, _ in bench.issue15_targets(run, None) if t.startswith("no bench kernel")) == target
