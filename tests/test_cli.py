"""The CLI of SPEC.md section 6: every command and every exit code (0, 1, 2, 3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core_teil.cli import main
from core_teil.lang import shapes

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

MATMUL = """lang full
param l, m, n
input alloc A : [l, m]
input alloc B : [m, n]
output alloc C : [l, n]
C = red 2 (diag 2 3 (prod A B))
"""


@pytest.fixture
def matmul(tmp_path: Path) -> Path:
    p = tmp_path / "matmul.teil"
    p.write_text(MATMUL)
    return p


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- exit 0 ----------------------------------------------------------------------


def test_check_prints_each_allocation_shape(capsys, matmul) -> None:
    code, out, _ = run(capsys, "check", str(matmul))
    assert code == 0
    assert out.splitlines() == ["A : [l, m]", "B : [m, n]", "C : [l, n]"]
    code, out, _ = run(capsys, "check", str(matmul), "--param", "l=2", "--param", "m=3,n=4")
    assert out.splitlines() == ["A : [2, 3]", "B : [3, 4]", "C : [2, 4]"]


def test_run_writes_outputs_and_infers_params(capsys, matmul, tmp_path) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random((2, 3)), rng.random((3, 4))
    np.save(tmp_path / "a.npy", a)
    np.savez(tmp_path / "b.npz", B=b)
    out_path = tmp_path / "out.npz"
    code, _, err = run(capsys, "run", str(matmul), "--engine", "reference", "--input", f"A={tmp_path / 'a.npy'}",
                       "--input", f"B={tmp_path / 'b.npz'}", "--output", str(out_path))
    assert code == 0, err
    with np.load(out_path) as data:
        assert list(data.files) == ["C"]
        np.testing.assert_allclose(data["C"], a @ b)


def test_run_padded_and_printed(capsys, matmul, tmp_path) -> None:
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 1))
    np.savez(tmp_path / "in.npz", A=a, B=b)
    code, out, _ = run(capsys, "run", str(matmul), "--engine", "reference", "--pad", "4",
                       "--input", str(tmp_path / "in.npz"))
    assert code == 0
    assert out.splitlines()[0] == "C ="
    assert "[[ 3.],\n [12.]]" in out


def test_lower_and_fmt(capsys, matmul, tmp_path) -> None:
    code, out, _ = run(capsys, "lower", str(matmul))
    assert code == 0
    assert out.splitlines()[0] == "lang core"
    assert out.splitlines()[-1] == "C = red (diag (transp 2 (transp 1 (prod A B))))"
    lowered = tmp_path / "lowered.teil"
    lowered.write_text(out)
    assert run(capsys, "check", str(lowered))[0] == 0
    code, out, _ = run(capsys, "fmt", str(matmul))
    assert code == 0
    canonical = tmp_path / "canonical.teil"
    canonical.write_text(out)
    assert run(capsys, "fmt", str(canonical))[1] == out, "fmt is a fixed point"
    assert run(capsys, "fmt", "--check", str(canonical))[0] == 0


# -- exit 1: the program is rejected ------------------------------------------------


def test_type_error_names_rule_location_and_counterexample(capsys) -> None:
    code, _, err = run(capsys, "check", str(EXAMPLES / "tvm_fig3a_bad.teil"))
    assert code == 1
    first = err.splitlines()[0]
    assert first.startswith(f"{EXAMPLES / 'tvm_fig3a_bad.teil'}:")
    assert "[T-Diag]" in first and "counterexample" in first
    assert "^" in err.splitlines()[-1]


def test_fmt_check_rejects_non_canonical(capsys, tmp_path) -> None:
    p = tmp_path / "x.teil"
    p.write_text("alloc A : [2]   # not canonical\nA = A\n")
    assert run(capsys, "fmt", "--check", str(p))[0] == 1


# -- exit 2: bad input or usage ---------------------------------------------------------


@pytest.mark.parametrize(("text", "fragment"), [
    ("alloc A : [2\n", "syntax error"),
    ("alloc A : [2]\nA = add A\n", "syntax error"),
    ("alloc A : [2]\nA = $\n", "syntax error"),
])
def test_parse_errors_exit_2(capsys, tmp_path, text, fragment) -> None:
    p = tmp_path / "bad.teil"
    p.write_text(text)
    code, _, err = run(capsys, "check", str(p))
    assert code == 2
    assert fragment in err and f"{p}:" in err


def test_unreadable_file_exit_2(capsys, tmp_path) -> None:
    code, _, err = run(capsys, "check", str(tmp_path / "missing.teil"))
    assert (code, "no such file" in err) == (2, True)
    (tmp_path / "bin.teil").write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = run(capsys, "check", str(tmp_path / "bin.teil"))
    assert (code, "not UTF-8" in err) == (2, True)
    assert run(capsys, "check", str(tmp_path))[0] == 2


def test_bad_params_exit_2(capsys, matmul) -> None:
    assert run(capsys, "check", str(matmul), "--param", "l")[0] == 2
    assert run(capsys, "check", str(matmul), "--param", "l=x")[0] == 2
    assert run(capsys, "check", str(matmul), "--param", "q=3")[0] == 2
    code, _, err = run(capsys, "check", str(matmul), "--param", "l=0")
    assert code == 2 and ">= 1" in err


def test_run_input_errors_exit_2(capsys, matmul, tmp_path) -> None:
    a = np.ones((2, 3))
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b_wrong.npy", np.ones((4, 4)))
    np.save(tmp_path / "obj.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    base = ["run", str(matmul), "--engine", "reference"]
    code, _, err = run(capsys, *base, "--input", f"A={tmp_path / 'a.npy'}")
    assert code == 2 and "missing input 'B'" in err
    code, _, err = run(capsys, *base, "--input", f"A={tmp_path / 'a.npy'}", "--input",
                       f"B={tmp_path / 'b_wrong.npy'}")
    assert code == 2 and "shape [4, 4]" in err
    code, _, err = run(capsys, *base, "--input", f"A={tmp_path / 'a.npy'}", "--input",
                       f"B={tmp_path / 'obj.npy'}")
    assert code == 2 and "pickle" in err
    code, _, err = run(capsys, *base, "--input", f"Z={tmp_path / 'a.npy'}")
    assert code == 2 and "allocates no 'Z'" in err
    code, _, err = run(capsys, *base, "--input", f"A={tmp_path / 'nope.npy'}")
    assert code == 2 and "no such file" in err
    (tmp_path / "junk.npy").write_bytes(b"not numpy at all")
    code, _, err = run(capsys, *base, "--input", f"A={tmp_path / 'junk.npy'}")
    assert code == 2 and "not a readable" in err


def test_huge_allocation_is_refused_with_its_byte_count(capsys, tmp_path) -> None:
    p = tmp_path / "huge.teil"
    p.write_text("alloc s : []\noutput alloc A : [1000000000, 1000000000]\nA = expa 1000000000 (expa 1000000000 s)\n")
    code, _, err = run(capsys, "run", str(p), "--engine", "reference")
    assert code == 2
    assert "8,000,000,000,000,000,000 bytes" in err


def test_usage_errors_exit_2(capsys, matmul) -> None:
    with pytest.raises(SystemExit) as info:
        main(["frobnicate", str(matmul)])
    assert info.value.code == 2
    assert run(capsys, "run", str(matmul), "--pad", "0")[0] == 2


# -- exit 3: the solver gave up -------------------------------------------------------------


def test_unknown_side_condition_exits_3(capsys, tmp_path, monkeypatch) -> None:
    p = tmp_path / "sym.teil"
    p.write_text("param n, m\nassume n == m\nalloc A : [n]\nalloc B : [m]\nA = B\n")
    monkeypatch.setattr(shapes, "RLIMIT", 1)  # starve Z3: it must say unknown, not "proved"
    code, _, err = run(capsys, "check", str(p))
    assert code == 3
    assert "unknown" in err


# -- the installed console script: no traceback ever -----------------------------------------


def test_console_script_never_prints_a_traceback(tmp_path) -> None:
    exe = Path(sys.executable).with_name("core-teil")
    p = tmp_path / "deep.teil"
    p.write_text("alloc A : [2]\nA = " + "(" * 5000 + "A" + ")" * 5000 + "\n")
    for args in (["check", str(p)], ["check", str(tmp_path / "none.teil")], ["run", str(EXAMPLES / "matmul.teil")]):
        proc = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr


def test_an_output_may_be_given_an_initial_value(capsys, tmp_path) -> None:
    """A declaration carries one qualifier, so an accumulating output is supplied like an input."""
    p = tmp_path / "acc.teil"
    p.write_text("input alloc x : [3]\noutput alloc acc : [3]\nacc = add acc x\n")
    np.save(tmp_path / "x.npy", np.array([1.0, 2.0, 3.0]))
    np.save(tmp_path / "acc.npy", np.array([10.0, 20.0, 30.0]))
    code, out, _ = run(capsys, "run", str(p), "--engine", "reference", "--input", f"x={tmp_path / 'x.npy'}",
                       "--input", f"acc={tmp_path / 'acc.npy'}")
    assert code == 0
    assert "[11., 22., 33.]" in out
    code, out, _ = run(capsys, "run", str(p), "--engine", "reference", "--input", f"x={tmp_path / 'x.npy'}")
    assert code == 0 and "[nan, nan, nan]" in out, "an output never supplied starts undefined"


def test_inputs_are_validated_before_parameters_are_needed(capsys, matmul, tmp_path) -> None:
    """A wrong input is reported as such, not as a missing parameter (issue 2 review)."""
    base = ["run", str(matmul), "--engine", "reference"]
    np.save(tmp_path / "b.npy", np.ones((3, 4)))
    cases = {
        "empty.npy": (np.ones((0, 3)), "empty dimension 1"),
        "rank3.npy": (np.ones((2, 3, 1)), "has rank 3"),
        "text.npy": (np.array([["a"] * 3] * 2), "dtype <U1"),
        "bigint.npy": (np.full((2, 3), 2**60, dtype=np.int64), "dtype int64"),
        "cplx.npy": (np.ones((2, 3), dtype=complex), "complex"),
    }
    for fname, (array, fragment) in cases.items():
        np.save(tmp_path / fname, array)
        code, _, err = run(capsys, *base, "--input", f"A={tmp_path / fname}", "--input", f"B={tmp_path / 'b.npy'}")
        assert code == 2, fname
        assert fragment in err, (fname, err)
        assert f"{matmul}:3:1" in err, "the message points at the allocation"
    # inputs are float64, never converted (docs/decisions.md, "Input dtypes and files")
    np.save(tmp_path / "ints.npy", np.arange(6, dtype=np.int32).reshape(2, 3))
    code, _, err = run(capsys, *base, "--input", f"A={tmp_path / 'ints.npy'}", "--input", f"B={tmp_path / 'b.npy'}")
    assert code == 2 and "dtype int32" in err and "never converted" in err


def test_a_header_claiming_a_huge_array_is_refused_before_reading(capsys, matmul, tmp_path) -> None:
    import io
    import zipfile

    header = {"descr": "<f8", "fortran_order": False, "shape": (100_000, 100_000)}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    buf.write(b"\0" * 64)
    with zipfile.ZipFile(tmp_path / "huge.npz", "w") as zf:
        zf.writestr("A.npy", buf.getvalue())
    (tmp_path / "huge.npy").write_bytes(buf.getvalue())
    code, _, err = run(capsys, "run", str(matmul), "--input", str(tmp_path / "huge.npz"))
    assert code == 2 and "80,000,000,000 bytes" in err
    # an .npy's header is counted before numpy maps it (review r25: numpy's own count overflowed)
    code, _, err = run(capsys, "run", str(matmul), "--input", f"A={tmp_path / 'huge.npy'}")
    assert code == 2 and "80,000,000,000 bytes" in err and "matmul.teil:3:1" in err


def test_a_parameter_given_twice_must_agree(capsys, matmul) -> None:
    assert run(capsys, "check", str(matmul), "--param", "l=2", "--param", "l=2")[0] == 0
    code, _, err = run(capsys, "check", str(matmul), "--param", "l=2", "--param", "l=3")
    assert code == 2 and "given twice" in err


@pytest.mark.parametrize("engine", ["reference", "native"])
def test_run_says_what_is_missing_before_checking(capsys, tmp_path, engine) -> None:
    """A missing input or parameter is named as such, not reported as a type error or another parameter."""
    p = tmp_path / "pn.teil"
    p.write_text("param m, n\ninput alloc A : [n, 3]\noutput alloc C : [3]\nC = proj m A\n")
    np.save(tmp_path / "a.npy", np.ones((3, 3)))
    code, _, err = run(capsys, "run", str(p), "--engine", engine, "--param", "m=1")
    assert code == 2 and "missing input 'A'" in err
    code, _, err = run(capsys, "run", str(p), "--engine", engine, "--input", f"A={tmp_path / 'a.npy'}")
    assert code == 2 and "shape parameter 'm' has no value" in err and f"{p}:1:1" in err
    code, out, _ = run(capsys, "run", str(p), "--engine", engine, "--input", f"A={tmp_path / 'a.npy'}",
                       "--param", "m=2")
    assert code == 0 and "[1., 1., 1.]" in out


def test_long_lines_are_clipped_around_the_caret(capsys, tmp_path) -> None:
    p = tmp_path / "deep.teil"
    p.write_text("alloc A : [2]\nA = " + "(" * 3000 + "A" + ")" * 3000 + "\n")
    code, _, err = run(capsys, "check", str(p))
    assert code == 2 and "nested deeper than 200" in err
    assert len(err) < 600, "a 6 KB line is shown as an excerpt, not in full"
    excerpt, caret = err.splitlines()[1:3]
    assert excerpt[caret.index("^")] == "(", "the caret still points into the line"
