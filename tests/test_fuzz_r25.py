"""Outside fuzzing, round r25: what broke, replayed.

Every test here fails on the code it was written against and passes once the finding is
fixed.  The CLI is run as a user runs it (the installed console script, as
``tests/test_bad_inputs.py`` does); a hang is detected by a subprocess ``timeout`` several
times above the fixed run time, never by an assertion on timing.  SPEC.md section 6: bad
input exits 2 with a message naming the file, never a traceback or ``internal error``
(exit 70); and in the API "every error derives from ``ct.TeilError``".
"""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import core_teil as ct

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "examples" / "matmul.teil"
EXE = Path(sys.executable).with_name("core-teil")
HANG = 120


def cli(*argv: str, timeout: float = HANG) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), *argv], capture_output=True, text=True, timeout=timeout)


def npy_with_shape(path: Path, shape: str) -> Path:
    """An .npy file whose header claims ``shape`` (a Python tuple literal), followed by 96 bytes."""
    hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }"
    hdr = hdr + " " * (118 - len(hdr)) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + b"\0" * 96)
    return path


@pytest.fixture(scope="module")
def matmul() -> ct.Program:
    return ct.load(str(MATMUL))


# --------------------------------------------------------------------------
# CLI: an .npy header with an extent past int64 is an internal error (exit 70)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_npy_header_with_an_extent_past_int64_is_bad_input(tmp_path: Path, engine: str) -> None:
    # numpy.memmap's `size *= k` raises OverflowError, which load_array_file does not catch;
    # the same header inside an .npz is refused cleanly (archive_members computes in Python ints)
    a = npy_with_shape(tmp_path / "a.npy", "(99999999999999999999999, 4)")
    b = tmp_path / "b.npy"
    np.save(b, np.ones((4, 5)))
    proc = cli("run", str(MATMUL), "--engine", engine, "--input", f"A={a}", "--input", f"B={b}")
    assert proc.returncode == 2, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert "a.npy" in proc.stderr and "matmul.teil:10:" in proc.stderr


def test_npy_header_overflow_warnings_do_not_reach_the_user(tmp_path: Path) -> None:
    # a header whose element count overflows int64 is refused (exit 2), but numpy's
    # "RuntimeWarning: overflow encountered in scalar multiply" (with its source line) is printed first
    a = npy_with_shape(tmp_path / "a.npy", "(3000000000, 4000000000)")
    b = tmp_path / "b.npy"
    np.save(b, np.ones((4, 5)))
    proc = cli("run", str(MATMUL), "--input", f"A={a}", "--input", f"B={b}")
    assert proc.returncode == 2, proc.stderr
    assert "RuntimeWarning" not in proc.stderr, proc.stderr


# --------------------------------------------------------------------------
# CLI: hangs (quadratic work on bad input)
# --------------------------------------------------------------------------


def test_exercise_answer_without_a_premise_is_refused_quickly(tmp_path: Path) -> None:
    # exercises.check_rule_and_premise: _PREMISE = r"(\S+)\s*(==|=|<=|≤)\s*(\S+)" .search()es a long
    # run of non-blanks from every start (quadratic): 16 kB took 3.7 s, 32 kB 14 s, 100 kB over 60 s
    answer = tmp_path / "answer.txt"
    answer.write_text("a" * 40_000)
    proc = cli("exercise", "2.1", str(answer), timeout=10)
    assert proc.returncode == 2, proc.stderr
    assert "exercise 2.1" in proc.stderr


def test_emit_c_is_not_quadratic_in_the_number_of_allocations(tmp_path: Path) -> None:
    # emit_c.source calls Program.inputs()/outputs(), which recompute Program.qualified (a scan of
    # every declaration) once per allocation: 4,000 allocations took 5 s, 10,000 took 24 s and
    # 20,000 over 60 s ('check' and 'prove' take under 1 s on the same files).  Computing
    # `qualified` once per inputs()/outputs() call brings 10,000 to 4 s.
    src = "".join(f"alloc A{i} : [1]\n" for i in range(8_000)) + "A0 = A1\n"
    p = tmp_path / "many.teil"
    p.write_text(src)
    proc = cli("emit-c", str(p), "-o", str(tmp_path / "many.c"), timeout=10)
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------
# API: every error derives from ct.TeilError (wrong argument types)
# --------------------------------------------------------------------------

NOT_A_PROGRAM = ["param n\nalloc A : [n]\nA = A\n", None, 3]


@pytest.mark.parametrize("bad", NOT_A_PROGRAM, ids=["str", "None", "int"])
@pytest.mark.parametrize("fn", ["check", "compile", "prove", "lower", "format", "derive", "emit_c",
                                "batch_dimension"])
def test_a_non_program_is_a_teil_error(fn: str, bad: object) -> None:
    # was AttributeError: 'str' object has no attribute 'stmts' (or 'params', 'file', 'dialect')
    with pytest.raises(ct.TeilError):
        getattr(ct, fn)(bad)


@pytest.mark.parametrize("bad", NOT_A_PROGRAM, ids=["str", "None", "int"])
def test_a_non_program_is_a_teil_error_in_evaluate_equiv_trace(matmul: ct.Program, bad: object) -> None:
    with pytest.raises(ct.TeilError):
        ct.evaluate(bad, {})
    with pytest.raises(ct.TeilError):
        ct.equiv(matmul, bad)
    with pytest.raises(ct.TeilError):
        ct.equiv(bad, matmul)
    with pytest.raises(ct.TeilError):
        ct.trace(bad, "C[1,1]")


@pytest.mark.parametrize("bad", [None, 3])
def test_load_of_a_non_path_is_a_teil_error(bad: object) -> None:
    # was TypeError: expected str, bytes or os.PathLike object (ct.parse(None) already says TeilInputError)
    with pytest.raises(ct.TeilError):
        ct.load(bad)


@pytest.mark.parametrize("at", [None, 3])
def test_trace_index_of_a_non_string_is_a_teil_error(matmul: ct.Program, at: object) -> None:
    # was TypeError: expected string or bytes-like object
    with pytest.raises(ct.TeilError):
        ct.trace(matmul, at, {"l": 2, "m": 2, "n": 2})


@pytest.mark.parametrize("inputs", [3, "A", [1]], ids=["int", "str", "list"])
def test_evaluate_inputs_that_are_not_a_mapping_are_a_teil_error(matmul: ct.Program, inputs: object) -> None:
    # was TypeError ('int' object is not iterable) / ValueError (dictionary update sequence ...)
    with pytest.raises(ct.TeilError):
        ct.evaluate(matmul, inputs, {"l": 2, "m": 2, "n": 2})


def test_trace_inputs_that_are_not_a_mapping_are_a_teil_error(matmul: ct.Program) -> None:
    # was AttributeError: 'int' object has no attribute 'items'
    with pytest.raises(ct.TeilError):
        ct.trace(matmul, "C[1,1]", {"l": 2, "m": 2, "n": 2}, inputs=3)


RAGGED = [[1.0, 2.0], [3.0]]


def test_a_ragged_list_input_is_a_teil_error_in_evaluate(matmul: ct.Program) -> None:
    # was ValueError: setting an array element with a sequence (ct.einsum already says
    # "input 'A' is not an array" as a TeilInputError)
    with pytest.raises(ct.TeilError):
        ct.evaluate(matmul, {"A": RAGGED, "B": np.ones((2, 2))}, {"l": 2, "m": 2, "n": 2})


@pytest.mark.parametrize("params", [{"l": 2, "m": 2, "n": 2}, None])
def test_a_ragged_list_input_is_a_teil_error_in_a_kernel(matmul: ct.Program, params: dict | None) -> None:
    kernel = ct.compile(matmul, params)
    with pytest.raises(ct.TeilError):
        kernel(A=RAGGED, B=np.ones((2, 2)))


@pytest.mark.parametrize("rlimit", ["x", None, 2.5, -1])
def test_equiv_rlimit_is_checked(rlimit: object) -> None:
    # 'x' and None: TypeError ('<' not supported); 2.5: z3.Z3Exception (expected unsigned int);
    # -1: silently "unknown" (exit 3) instead of a refused argument
    e = ROOT / "examples" / "equiv"
    p, q = ct.load(str(e / "div_distribute_p.teil")), ct.load(str(e / "div_distribute_q.teil"))
    with pytest.raises(ct.TeilError):
        ct.equiv(p, q, rlimit=rlimit)


def test_prove_smt2_dir_of_a_wrong_type_is_a_teil_error(matmul: ct.Program) -> None:
    # was TypeError: expected str, bytes or os.PathLike object, not int
    with pytest.raises(ct.TeilError):
        ct.prove(matmul, smt2_dir=3)


@pytest.mark.parametrize("cache", ["/tmp/some-dir", 3])
def test_prove_cache_of_a_wrong_type_is_a_teil_error(matmul: ct.Program, cache: object) -> None:
    # was AttributeError: 'str' object has no attribute 'discharge' (the CLI's --cache takes a
    # directory name; the API's cache= only a ProofCache, and says nothing when given a path)
    with pytest.raises(ct.TeilError):
        ct.prove(matmul, cache=cache)


def test_emit_c_name_of_a_wrong_type_is_a_teil_error(matmul: ct.Program) -> None:
    # was TypeError: expected string or bytes-like object, got 'int' (name='x y' is a TeilInputError)
    with pytest.raises(ct.TeilError):
        ct.emit_c(matmul, None, None, name=3)


@pytest.mark.parametrize("paths", [None, 3])
def test_prove_library_of_a_non_path_is_a_teil_error(paths: object) -> None:
    # was TypeError: 'NoneType' object is not iterable
    with pytest.raises(ct.TeilError):
        ct.prove_library(paths)


# --------------------------------------------------------------------------
# Messages without the location SPEC.md section 6 asks for
# --------------------------------------------------------------------------


def test_emit_c_refusal_of_a_huge_allocation_names_its_line(tmp_path: Path) -> None:
    # "core-teil: resource error: an array of 299,999,999,999,999,999,997 elements ... does not
    # fit a C kernel's ptrdiff_t byte offsets": no file:line:column, though the allocation has one
    # (`run` on the same file points at line 2 with a caret)
    p = tmp_path / "huge.teil"
    p.write_text("alloc A : [3]\nalloc B : [99999999999999999999,3]\nB = expa 99999999999999999999 A\n")
    proc = cli("emit-c", str(p), "-o", str(tmp_path / "huge.c"))
    assert proc.returncode == 2, proc.stderr
    assert f"{p}:2:" in proc.stderr, proc.stderr


def test_a_bare_npz_input_error_names_the_allocation(tmp_path: Path) -> None:
    # `--input A=x.npz` points at `input alloc A` (matmul.teil:10:1); `--input x.npz` with the
    # same oversized member says only "core-teil: input error: x.npz: member A.npy claims ..."
    import zipfile

    a = npy_with_shape(tmp_path / "a.npy", "(99999999999999999999999, 4)")
    b = tmp_path / "b.npy"
    np.save(b, np.ones((4, 5)))
    z = tmp_path / "x.npz"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("A.npy", a.read_bytes())
        zf.writestr("B.npy", b.read_bytes())
    proc = cli("run", str(MATMUL), "--input", str(z))
    assert proc.returncode == 2, proc.stderr
    assert "matmul.teil:10:" in proc.stderr, proc.stderr
