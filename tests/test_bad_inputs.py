"""Issue 11, section 8: every bad input of the report, replayed (CLI and/or API).

Each test names the bullet it replays.  A hang is detected by a subprocess
``timeout`` that is far above the fixed run time (never an assertion on timing);
each assertion is on the exit code (SPEC.md section 6) and a specific message.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core_teil as ct
from core_teil import eval as ev
from core_teil import native, planner
from core_teil.cli import main
from core_teil.derive import tex_escape, tex_math
from core_teil.errors import TeilError, TeilInputError
from tests.wellformed import well_typed_programs

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "examples" / "matmul.teil"
EXE = Path(sys.executable).with_name("core-teil")
#: A hang detector only: every command below finishes in about a second when it works.
HANG = 120


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    """The installed console script, as a user runs it."""
    return subprocess.run([str(EXE), *argv], capture_output=True, text=True, timeout=HANG)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def nest(depth: int) -> str:
    """``B = red (expa n (red (expa n … A)))``: each level sums n copies of the level below."""
    e = "A"
    for _ in range(depth):
        e = f"red (expa n ({e}))"
    return f"param n\ninput alloc A : [n]\noutput alloc B : [n]\nB = {e}\n"


# --------------------------------------------------------------------------
# The exponential reference engine (and trace --values)
# --------------------------------------------------------------------------


@pytest.fixture
def nest14(tmp_path: Path) -> tuple[Path, Path]:
    p = tmp_path / "nest14.teil"
    p.write_text(nest(14))
    a = tmp_path / "a.npy"
    np.save(a, np.array([0.0, 1.0, 2.0]))
    return p, a


def test_a_14_deep_nest_runs_in_the_reference_engine(nest14) -> None:
    # was over 60 s (3^14 evaluations of the innermost A); each subexpression is tabulated once now
    p, a = nest14
    proc = cli("run", str(p), "--engine", "reference", "--input", f"A={a}")
    assert proc.returncode == 0, proc.stderr
    assert "[      0., 4782969., 9565938.]" in proc.stdout  # 3^14 copies of A


def test_a_14_deep_nest_traces_with_values(nest14) -> None:
    p, a = nest14
    proc = cli("trace", str(p), "B[2]", "--input", f"A={a}", "--values")
    assert proc.returncode == 0, proc.stderr
    assert "reference engine: B[2] = 4782969.0" in proc.stdout
    assert re.search(r"A\[2\]\){13}\)? = 4782969\.0", proc.stdout) and "MISMATCH" not in proc.stdout


def test_a_12_deep_nest_evaluates_padded_from_the_api() -> None:
    p = ct.parse(nest(12))
    out = ct.evaluate(p, {"A": np.array([0.0, 1.0, 2.0])}, pad=4)["B"]
    np.testing.assert_array_equal(out, np.array([0.0, 1.0, 2.0]) * 3.0**12)


def test_tables_are_only_for_what_an_equation_may_ask_twice() -> None:
    # expa drops a position, prod splits k, a scalar operand is read at []: only their
    # arguments can be asked for at one k again (variables are reads, not tables)
    text = ("param n\ninput alloc A : [n]\ninput alloc s : []\noutput alloc B : [n, n]\n"
            "B = mul (red (expa n s)) (prod (add A A) A)\n")
    from core_teil.typing import check_program

    t = check_program(ct.parse(text), {"n": 3})
    shared = ev.shared_subexpressions(t)
    expr = t.program.stmts[0].expr
    assert id(expr.left) in shared  # the scalar operand of T-SMul
    assert id(expr.right.left) in shared  # a factor of prod, not a variable
    assert id(expr.right.right) not in shared  # a variable: a read
    assert id(expr.left.arg.arg) not in shared  # expa's argument s is a variable


def test_a_request_outside_a_table_is_still_a_semantics_bug(monkeypatch) -> None:
    # Lemma 4.3's bounds check survives the tables: a wrong equation that reads expa's
    # argument one position too far is caught at the table, as a read of the store would be
    from core_teil.syntax import Expa

    def expa_off_by_one(e, k, sem):  # reads [[e]](k' + 1)
        return ev.denote(e.arg, tuple(kj + 1 for kj in k[1:]), sem)

    monkeypatch.setitem(ev.EQUATIONS, Expa, expa_off_by_one)
    with pytest.raises(ev.SemanticsBug) as info:
        ct.evaluate(ct.parse(nest(2)), {"A": np.array([1.0, 2.0, 3.0])})
    assert info.value.rule == "Lemma 4.3" and info.value.exit_code == 70


# --------------------------------------------------------------------------
# prove --timeout
# --------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1"])
def test_a_timeout_that_is_no_number_of_seconds_is_refused(capsys, value) -> None:
    # --timeout inf exited 70 (OverflowError in int(inf * RLIMIT_PER_SECOND))
    code, _, err = run(capsys, "prove", str(MATMUL), "--timeout", value)
    assert code == 2, err
    assert f"--timeout {float(value)}: expected a finite number of seconds > 0" in err


def test_a_tiny_timeout_is_a_tiny_limit_not_none(capsys) -> None:
    # --timeout 1e-9 made rlimit 0, which Z3 reads as no limit at all
    import json

    from core_teil.prove import Z3_UINT_MAX, rlimit_for

    code, out, _ = run(capsys, "prove", str(MATMUL), "--timeout", "1e-9", "--json")
    assert code == 3  # every obligation unknown: the limit was honoured
    assert json.loads(out)["solver"]["rlimit"] == 1
    assert rlimit_for(1e-9) == 1 and rlimit_for(1e300) == Z3_UINT_MAX
    for bad in (float("inf"), 0, True, "5"):
        with pytest.raises(TeilInputError, match=r"timeout=.*: expected a finite number of seconds > 0"):
            ct.prove(ct.load(str(MATMUL)), timeout=bad)


# --------------------------------------------------------------------------
# 50,000 parameters and no assume
# --------------------------------------------------------------------------


def test_many_parameters_without_assumptions_are_not_unknown(tmp_path) -> None:
    """Exit 3 after 5 s: Z3 was asked whether 50,000 times `p >= 1` is satisfiable."""
    p = tmp_path / "many.teil"
    p.write_text("param " + ", ".join(f"p{i}" for i in range(50_000)) + "\nalloc A : [3]\nA = add A A\n")
    proc = cli("check", str(p))
    assert proc.returncode == 0, proc.stderr
    # with a side condition over two of them, the counterexample names those two, at their smallest
    q = tmp_path / "many_diag.teil"
    q.write_text("param " + ", ".join(f"p{i}" for i in range(50_000)) + "\nassume p7 <= p8\n"
                 "alloc A : [p7, p8]\nalloc B : [p7]\nB = diag A\n")
    proc = cli("check", str(q))
    assert proc.returncode == 1 and "counterexample: p7 = 1, p8 = 2\n" in proc.stderr, proc.stderr[:300]


def test_relevant_hypotheses_decide_as_all_of_them() -> None:
    """Leaving out the parameters a question does not mention changes no decision."""
    from core_teil.shapes import ShapeSolver, Verdict

    prog = ct.parse("param a, b, c, d\nassume a + 1 <= b\nalloc X : [a, c]\n")
    s = ShapeSolver(prog)
    for lhs, op, rhs in [("a", "<=", "b"), ("b", "<=", "a"), ("c", "==", "d"), ("c", "<=", "c"), (1, "<=", "d")]:
        full = z3.Solver()
        full.add(*s.hypotheses(), z3.Not(s.term(lhs) == s.term(rhs) if op == "==" else s.term(lhs) <= s.term(rhs)))
        expected = Verdict.HOLDS if full.check() == z3.unsat else Verdict.FAILS
        assert s.decide(lhs, op, rhs).verdict is expected, (lhs, op, rhs)
    cex = s.decide("c", "==", "d").counterexample
    assert cex in ({"a": 1, "b": 2, "c": 1, "d": 2}, {"a": 1, "b": 2, "c": 2, "d": 1}), cex


# --------------------------------------------------------------------------
# What is read: /dev/zero, a byte-order mark, one reader
# --------------------------------------------------------------------------


def test_a_source_file_is_read_up_to_a_cap_and_named(tmp_path) -> None:
    from core_teil.parser import MAX_SOURCE_BYTES

    # /dev/zero ran 38 s, then "out of memory; try smaller shapes" without the file's name
    if Path("/dev/zero").exists():
        proc = cli("check", "/dev/zero")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert f"/dev/zero: more than {MAX_SOURCE_BYTES:,} bytes" in proc.stderr
    big = tmp_path / "big.teil"
    with open(big, "wb") as fh:  # sparse: no 16 MB written
        fh.truncate(MAX_SOURCE_BYTES + 1)
    with pytest.raises(TeilInputError, match=f"{re.escape(str(big))}: more than"):
        ct.load(str(big))


def test_one_reader_for_the_cli_and_the_api(capsys, tmp_path) -> None:
    # a byte-order mark was accepted by ct.load and refused by the CLI
    bom = tmp_path / "bom.teil"
    bom.write_bytes(b"\xef\xbb\xbf" + MATMUL.read_bytes())
    assert ct.format(ct.load(str(bom))) == ct.format(ct.load(str(MATMUL)))
    code, out, err = run(capsys, "check", str(bom))
    assert code == 0, err and out.splitlines()[0] == "A : [l, m]"
    # and both name a bad file the same way
    bad = tmp_path / "bad.teil"
    bad.write_bytes(b"alloc A : [2]\n\xff\n")
    with pytest.raises(TeilInputError) as info:
        ct.load(str(bad))
    code, _, err = run(capsys, "check", str(bad))
    assert code == 2 and info.value.message in err
    assert info.value.message == f"{bad}: not UTF-8 text (invalid start byte at byte 14)"


# --------------------------------------------------------------------------
# .npz archives: headers first, names that match
# --------------------------------------------------------------------------


def _npz_claiming(path: Path, member: str, shape: tuple[int, ...], descr: str = "<f8") -> None:
    """An archive whose member's header claims ``shape`` but holds 64 bytes: decompressing
    and reading it would fail, so a message about its shape proves that it was not read."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    buf.write(b"\0" * 64)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{member}.npy", buf.getvalue())


def test_an_archive_member_is_checked_by_its_header_before_it_is_read(capsys, tmp_path) -> None:
    # a 3 MB .npz holding a 3.2 GB array was decompressed for 20 s before the shape mismatch
    p = tmp_path / "v.teil"
    p.write_text("input alloc A : [2, 3]\noutput alloc B : [2, 3]\nB = add A A\n")
    _npz_claiming(tmp_path / "x.npz", "A", (8000, 8000))
    code, _, err = run(capsys, "run", str(p), "--engine", "reference", "--input", f"A={tmp_path / 'x.npz'}")
    assert code == 2
    assert f"{p}:1:1: input error [μ_allocs]: {tmp_path / 'x.npz'}[A]: input 'A' has shape [8000, 8000]" in err
    _npz_claiming(tmp_path / "i.npz", "A", (2, 3), "<i8")
    code, _, err = run(capsys, "run", str(p), "--engine", "reference", "--input", f"A={tmp_path / 'i.npz'}")
    assert code == 2 and "input 'A' has dtype int64" in err and f"{p}:1:1" in err


def test_an_archive_member_is_the_input_of_its_own_name(capsys, tmp_path) -> None:
    # --input A=x.npz silently used an archive whose only member is Z
    p = tmp_path / "v.teil"
    p.write_text("input alloc A : [2]\noutput alloc B : [2]\nB = add A A\n")
    np.savez(tmp_path / "z.npz", Z=np.ones(2))
    code, _, err = run(capsys, "run", str(p), "--engine", "reference", "--input", f"A={tmp_path / 'z.npz'}")
    assert code == 2 and f"{p}:1:1" in err
    assert "z.npz has no array named 'A' (it has Z)" in err
    np.savez(tmp_path / "a.npz", Z=np.zeros(2), A=np.ones(2))
    code, out, err = run(capsys, "run", str(p), "--engine", "reference", "--input", f"A={tmp_path / 'a.npz'}")
    assert code == 0 and "[2., 2.]" in out, err


# --------------------------------------------------------------------------
# LaTeX of file names
# --------------------------------------------------------------------------

#: LaTeX's ten special characters, and three that text mode sets as other glyphs (OT1).
SPECIALS = "\\{}#$%&_~^"
TEXT_SPECIALS = SPECIALS + "<>|"


def _bare_specials(tex: str, specials: str = TEXT_SPECIALS) -> str:
    """What is left of ``tex`` after the escapes: any special here would not compile as text."""
    rest = re.sub(r"\\[A-Za-z]+(\{\})?", "", tex)  # \textasciitilde{}, \sim{}, \ ...
    rest = re.sub(r"\\[{}#$%&_ ]", "", rest)  # \{ \} \# ...
    rest = re.sub(r"\$[^$]*\$", "", rest)  # $\leq$
    return "".join(ch for ch in rest if ch in specials)


def test_every_latex_special_is_escaped() -> None:
    for ch in TEXT_SPECIALS:
        assert _bare_specials(tex_escape(f"a{ch}b")) == "", ch
        assert _bare_specials(tex_math(f"a{ch}b"), SPECIALS) == "", ch
        assert "\\text" not in tex_math(ch), "text-mode commands are errors in math mode"
    assert tex_escape("backup~.teil") == r"backup\textasciitilde{}.teil"
    assert tex_escape("a^b") == r"a\textasciicircum{}b" and tex_math("a^b") == r"a\hat{}b"
    assert tex_escape("测试.teil") == "??.teil" and tex_escape("café") == "café"


@pytest.mark.parametrize("name", ["backup~.teil", "a^b.teil", "we%ird #1 & {x}_$\\.teil"])
def test_derive_latex_of_a_file_with_specials_in_its_name(capsys, tmp_path, name) -> None:
    p = tmp_path / name
    p.write_text(MATMUL.read_text())
    code, out, err = run(capsys, "derive", str(p), "--latex")
    assert code == 0, err
    section = next(line for line in out.splitlines() if line.startswith(r"\section*"))
    assert section == rf"\section*{{Typing derivations: \texttt{{{tex_escape(str(p))}}}}}"
    inner = section.removeprefix(r"\section*{Typing derivations: \texttt{").removesuffix("}}")
    assert _bare_specials(inner) == "", "the file name is set in text mode, every special escaped"
    if shutil.which("pdflatex"):  # not installed here; where it is, the document must compile
        (tmp_path / "d.tex").write_text(out)
        proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "d.tex"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=HANG)
        assert proc.returncode == 0, proc.stdout[-2000:]


# --------------------------------------------------------------------------
# Parameters: integers >= 1, checked in one place
# --------------------------------------------------------------------------

A, B = np.ones((2, 3)), np.ones((3, 4))


@pytest.mark.parametrize("value", [2.5, 2.0, "2", True, None, 0, -3])
def test_a_parameter_is_an_integer_at_least_one_everywhere(value) -> None:
    # ct.check gave shapes with 2.5 in them, ct.prove a certificate for l = 2.5, ct.evaluate a TypeError
    p = ct.load(str(MATMUL))
    params = {"l": value, "m": 3, "n": 4}
    for entry in (lambda: ct.check(p, params), lambda: ct.prove(p, params),
                  lambda: ct.evaluate(p, {"A": A, "B": B}, params), lambda: ct.compile(p, params)):
        with pytest.raises(TeilInputError, match=r"input error: params\['l'\] = .*: shape parameters "):
            entry()


def test_numpy_integers_are_parameters() -> None:
    p = ct.load(str(MATMUL))
    assert ct.check(p, {"l": np.int64(2), "m": np.int32(3), "n": 4}) == {"A": (2, 3), "B": (3, 4), "C": (2, 4)}
    assert ct.prove(p, {"l": np.uint8(2)}).ok
    with pytest.raises(TeilInputError, match="declares no parameter 'q'"):
        ct.check(p, {"q": 1})


@pytest.mark.parametrize("value", ["٣", "1_000", "+3", "3.0", " "])
def test_a_cli_parameter_is_ascii_digits(capsys, value) -> None:
    code, _, err = run(capsys, "check", str(MATMUL), "--param", f"l={value}")
    assert code == 2 and "written in the digits 0-9" in err, err


# --------------------------------------------------------------------------
# Messages: the caller's words, the right rule, the input's line
# --------------------------------------------------------------------------


def test_api_errors_do_not_quote_cli_flags(capsys) -> None:
    p = ct.load(str(MATMUL))
    with pytest.raises(TeilInputError) as info:
        ct.evaluate(p, {"A": A, "B": B}, pad=0)
    assert info.value.message.startswith("pad=0: ") and "--pad" not in info.value.message
    with pytest.raises(TeilInputError, match=r"input error: pad=True: "):
        ct.compile(p, None, True)
    code, _, err = run(capsys, "run", str(MATMUL), "--pad", "0")
    assert code == 2 and "--pad 0: the vector length must be an integer >= 1" in err


def test_an_allocation_too_large_names_the_initial_memory(capsys, tmp_path) -> None:
    # was labelled [S-Var], the name-uniqueness rule; what cannot be built is μ_allocs (Fig. 9)
    p = tmp_path / "huge.teil"
    p.write_text("alloc s : []\noutput alloc A : [100000, 100000, 100000]\n"
                 "A = expa 100000 (expa 100000 (expa 100000 s))\n")
    code, _, err = run(capsys, "run", str(p), "--engine", "reference")
    assert code == 2 and f"{p}:2:1: resource error [μ_allocs]: allocation A" in err


def test_an_unreadable_npy_points_at_its_input_alloc(capsys, tmp_path) -> None:
    (tmp_path / "junk.npy").write_bytes(b"not numpy at all")
    code, _, err = run(capsys, "run", str(MATMUL), "--input", f"A={tmp_path / 'junk.npy'}",
                       "--input", f"B={tmp_path / 'none.npy'}")
    assert code == 2 and f"{MATMUL}:10:1: input error [μ_allocs]: {tmp_path / 'junk.npy'}: not a readable" in err
    assert "   10 | input alloc A : [l, m]" in err


# --------------------------------------------------------------------------
# Native and reference on a proved program with overflow
# --------------------------------------------------------------------------

OVERFLOW = """lang full
param n, m
input alloc A : [n]
input alloc C : [n]
input alloc B : [m]
input alloc W : [n]
alloc T : [n]
alloc Z : [n]
output alloc Y : [n]
T = div A C
Z = red 2 (prod T B)
Y = div W Z
"""
OVERFLOWING = {"A": np.array([1e300]), "C": np.array([1e-10]), "B": np.array([0.0, 1.0]), "W": np.array([5.0])}


@pytest.mark.parametrize("pad", [None, 4])
def test_native_never_finite_where_the_reference_is_undefined(pad) -> None:
    # T = 1e310 overflows to inf; the semantics sums inf·0 + inf·1 = •, the factored plan
    # computed inf · (0 + 1) = inf and then 5 / inf = 0
    p = ct.parse(OVERFLOW)
    want = ct.evaluate(p, OVERFLOWING, pad=pad)["Y"]
    got = ct.compile(p, pad=pad)(**OVERFLOWING)["Y"]
    assert np.isnan(want).all() and np.isnan(got).all()


def test_the_overflow_guard_is_what_decides(monkeypatch) -> None:
    p = ct.parse(OVERFLOW)
    kernel = ct.compile(p)
    finite = {**OVERFLOWING, "A": np.array([3.0])}
    np.testing.assert_allclose(kernel(**finite)["Y"], ct.evaluate(p, finite)["Y"])
    monkeypatch.setattr(native, "reorder_safe", lambda poly, sizes: True)  # the plan unguarded
    assert kernel(**OVERFLOWING)["Y"][0] == 0.0, "without the guard the issue's reproducer comes back"


def test_the_guard_reads_only_what_a_plan_reorders() -> None:
    from core_teil.typing import check_program

    def poly(text: str) -> planner.Poly:
        return planner.plan(check_program(ct.parse(text), {})).stmts[0].nf.poly

    add = poly("input alloc A : [3]\ninput alloc B : [3]\noutput alloc C : [3]\nC = sub A (mul A B)\n")
    red = poly("input alloc A : [3]\noutput alloc s : []\ns = red A\n")
    assert not planner.reorder_sensitive(add)  # a - a·b: the equations' own operations
    assert planner.reorder_sensitive(red)  # a sum: blocked, vectorised, factored

    class Sizes:
        def __init__(self, largest: float) -> None:
            self.value = largest

        def largest(self, buf: planner.Buffer) -> float:
            return self.value

        def least(self, buf: planner.Buffer) -> float:
            return 1.0

    assert planner.bound(red, Sizes(2.0)) == 6.0
    assert planner.reorder_safe(red, Sizes(1e300)) and not planner.reorder_safe(red, Sizes(1e308))
    assert not planner.reorder_safe(red, Sizes(np.inf))


#: Values that overflow in sums and products (and ±inf, •); drawn for random programs.
HUGE = np.array([0.0, 1.0, -1.0, 2.0, -0.5, 1e300, -1e300, 1e200, 1e160, -1e160, 1e-300,
                 np.inf, -np.inf, np.nan])


@settings(derandomize=True, max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(well_typed_programs(undefined=None, max_depth=5, max_stmts=3), st.integers(0, 2**32 - 1),
       st.sampled_from([None, 2]))
def test_native_and_reference_agree_on_overflowing_values(case, seed, pad) -> None:
    # the hunt for the bullet above (without the guard it finds finite-for-• at once)
    rng = np.random.default_rng(seed)
    inputs = {x: rng.choice(HUGE, size=np.shape(v)) for x, v in case.inputs.items()}
    try:
        want = ct.evaluate(case.program, inputs, case.params, pad)
    except TeilError as err:  # padding and inf · 0: the same refusal from both
        with pytest.raises(type(err)):
            native.compile(case.program, case.params, pad)(**inputs)
        return
    got = native.compile(case.program, case.params, pad)(**inputs)
    for name, w in want.items():
        g, where = got[name], f"{name} of\n{ct.format(case.program)}with {inputs}, pad {pad}"
        assert not (np.isnan(w) & ~np.isnan(g)).any(), f"native {g} is not • where the reference is •: {where}"
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=where)
        np.testing.assert_array_equal(np.isinf(g) * np.sign(g), np.isinf(w) * np.sign(w), err_msg=where)
        # finite values: equal up to the rounding of a reordered sum, which at this scale
        # includes absorption (1e300 + 0.5 - 1e300 is 0 in one order and 0.5 in another)
        scale = max((float(np.max(np.abs(v[np.isfinite(v)]), initial=0.0)) for v in inputs.values()), default=0.0)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6 * scale, equal_nan=True, err_msg=where)


# --------------------------------------------------------------------------
# One dtype policy: float64, never converted
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float16, bool, complex])
def test_inputs_are_float64_everywhere(capsys, tmp_path, dtype) -> None:
    # int, float32 and float16 were converted silently while bool was refused
    p = ct.load(str(MATMUL))
    a = np.ones((2, 3), dtype=dtype)
    for entry in (lambda: ct.evaluate(p, {"A": a, "B": B}), lambda: ct.compile(p)(A=a, B=B)):
        with pytest.raises(TeilInputError) as info:
            entry()
        assert info.value.rule == "μ_allocs" and info.value.span.line == 10
        assert "complex" in info.value.message if dtype is complex else "never converted" in info.value.message
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", B)
    code, _, err = run(capsys, "run", str(MATMUL), "--input", f"A={tmp_path / 'a.npy'}",
                       "--input", f"B={tmp_path / 'b.npy'}")
    assert code == 2 and f"{MATMUL}:10:1" in err


def test_big_endian_float64_is_float64() -> None:
    # byte order is storage, not value: accepted by both engines
    p = ct.load(str(MATMUL))
    a = np.arange(6.0).reshape(2, 3).astype(">f8")
    want = np.arange(6.0).reshape(2, 3) @ B
    np.testing.assert_array_equal(ct.evaluate(p, {"A": a, "B": B})["C"], want)
    np.testing.assert_array_equal(ct.compile(p)(A=a, B=B)["C"], want)


def test_out_takes_float64_arrays_of_the_declared_shape() -> None:
    kernel = ct.compile(ct.load(str(MATMUL)))
    c = np.zeros((2, 4))
    result = kernel(A=A, B=B, out={"C": c})
    assert result["C"] is c and (c == 3.0).all()
    for out, fragment in (({"C": np.zeros((2, 4), dtype=np.float32)}, "output 'C' has dtype float32"),
                          ({"C": np.zeros((4, 2))}, "has shape [4, 2]"),
                          ({"D": c}, "'D' is not an output"), ([c], "out= must be a dict")):
        with pytest.raises(TeilInputError, match=re.escape(fragment)):
            kernel(A=A, B=B, out=out)
    # a program's own allocation named `out` is still an input by that keyword
    k2 = ct.compile(ct.parse("input alloc out : [2]\noutput alloc y : [2]\ny = add out out\n"))
    np.testing.assert_array_equal(k2(out=np.ones(2))["y"], [2.0, 2.0])
