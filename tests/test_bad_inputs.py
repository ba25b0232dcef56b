"""Issue 11, section 8: every bad input of the report, replayed (CLI and/or API).

Each test names the bullet it replays.  A hang is detected by a subprocess
``timeout`` that is far above the fixed run time (never an assertion on timing);
each assertion is on the exit code (SPEC.md section 6) and a specific message.
"""

from __future__ import annotations

import io
import os
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
from core_teil.cli import main
from core_teil.errors import TeilError, TeilInputError, TeilResourceError
from core_teil.native import engine as native
from core_teil.native import planner
from core_teil.semantics import eval as ev
from core_teil.teach.derive import tex_escape, tex_math
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
    from core_teil.lang.typing import check_program

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
    from core_teil.lang.syntax import Expa

    def expa_off_by_one(e, k, sem):  # reads [[e]](k' + 1)
        return ev.denote(e.arg, tuple(kj + 1 for kj in k[1:]), sem)

    monkeypatch.setitem(ev.EQUATIONS, Expa, expa_off_by_one)
    with pytest.raises(ev.SemanticsBug) as info:
        ct.evaluate(ct.parse(nest(2)), {"A": np.array([1.0, 2.0, 3.0])})
    assert info.value.rule == "Lemma 4.3" and info.value.exit_code == 70


def test_a_request_before_a_domain_is_a_semantics_bug(monkeypatch) -> None:
    # numpy reads index -1 as the last element: a wrong equation that reads one position too
    # early would get a value, silently, if the check looked only past the end
    from core_teil.lang.syntax import Expa

    def expa_one_early(e, k, sem):  # reads [[e]](k' - 1)
        return ev.denote(e.arg, tuple(kj - 1 for kj in k[1:]), sem)

    monkeypatch.setitem(ev.EQUATIONS, Expa, expa_one_early)
    with pytest.raises(ev.SemanticsBug) as info:
        ct.evaluate(ct.parse(nest(2)), {"A": np.array([1.0, 2.0, 3.0])})
    assert info.value.rule == "Lemma 4.3" and "in dimension 1 (extent 3)" in info.value.message


def prod_nest(depth: int) -> str:
    """``B = red 1 (prod A (red 1 (prod A … A)))``: each summand of a level asks for the level
    below at the same index (the right factor of ``prod``)."""
    e = "A"
    for _ in range(depth):
        e = f"red 1 (prod A ({e}))"
    return f"lang full\nparam n\ninput alloc A : [n]\noutput alloc B : [n]\nB = {e}\n"


@pytest.fixture
def store_reads(monkeypatch) -> list[int]:
    """The reference engine's reads of its store, counted: its work, measured without a clock."""
    count = [0]
    read = ev.ArrayInterpretation.read

    def counting(self: ev.ArrayInterpretation, *args: object) -> np.ndarray:
        count[0] += 1
        return read(self, *args)

    monkeypatch.setattr(ev.ArrayInterpretation, "read", counting)
    return count


@pytest.mark.parametrize(("program", "value"), [(nest, lambda a, d: a * 3.0**d),
                                                 (prod_nest, lambda a, d: a * a.sum() ** d)],
                         ids=["expa", "prod"])
def test_the_work_grows_with_the_nesting_not_exponentially(store_reads, program, value) -> None:
    # untabulated, depth d reads A 3^d times: expa's argument and prod's factors are asked
    # for at one index once per summand of the sum around them
    a = np.array([1.0, 2.0, 3.0])
    reads = []
    for depth in range(1, 7):
        store_reads[0] = 0
        np.testing.assert_array_equal(ct.evaluate(ct.parse(program(depth)), {"A": a})["B"], value(a, depth))
        reads.append(store_reads[0])
    assert reads[-1] <= 6 * reads[0], f"reads of the store by depth: {reads}"


def test_a_table_is_made_while_it_fits_its_share_of_memory(store_reads, monkeypatch) -> None:
    # 64 values are nothing next to the memory budget: two levels read A 64 times, not 64^2;
    # with a budget too small for them the subexpression is asked for again instead
    a = np.arange(64.0)
    p = ct.parse(nest(2))
    np.testing.assert_array_equal(ct.evaluate(p, {"A": a})["B"], a * 64.0**2)
    assert store_reads[0] <= 2 * 64
    store_reads[0] = 0
    monkeypatch.setattr(ev, "memory_budget", lambda: 8 * ev.TABLE_SHARE * 63)  # tables of 63 values
    np.testing.assert_array_equal(ct.evaluate(p, {"A": a})["B"], a * 64.0**2)
    assert store_reads[0] >= 64**2


def test_tables_do_not_outlive_their_statement() -> None:
    # a table holds [[e]] in the memory before its statement; kept beyond it, the tables of
    # every statement (and the memories they were made in) would add up over a run
    import tracemalloc

    if tracemalloc.is_tracing():
        pytest.skip("tracemalloc is already tracing for someone else")
    n = 100_000

    def peak(statements: int) -> int:
        p = ct.parse("param n\ninput alloc A : [n]\noutput alloc B : [n]\nB = add A A\n"
                     + "B = red (expa 2 (add B B))\n" * statements)
        a = np.ones(n)
        tracemalloc.start()
        try:
            ct.evaluate(p, {"A": a})
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    one, eight = peak(1), peak(8)
    assert eight < one + 2 * 8 * n, f"peak {one:,} bytes for one statement, {eight:,} for eight"


def test_one_expression_object_in_two_statements_sees_each_memory() -> None:
    # tables are kept per expression object; a program built through the API may use one
    # object in two statements and change the memory between them
    import dataclasses

    p = ct.parse("param n\ninput alloc A : [n]\noutput alloc B : [n]\noutput alloc C : [n]\n"
                 "B = red (expa n (add A A))\nA = add A A\nC = red (expa n (add A A))\n")
    stmts = list(p.stmts)
    stmts[2] = dataclasses.replace(stmts[2], expr=stmts[0].expr)
    shared = dataclasses.replace(p, stmts=tuple(stmts))
    assert shared.stmts[2].expr is shared.stmts[0].expr
    for program in (p, shared):
        out = ct.evaluate(program, {"A": np.array([1.0, 2.0])})
        np.testing.assert_array_equal(out["B"], [4.0, 8.0])
        np.testing.assert_array_equal(out["C"], [8.0, 16.0])


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

    from core_teil.proving.prove import Z3_UINT_MAX, rlimit_for

    code, out, _ = run(capsys, "prove", str(MATMUL), "--timeout", "1e-9", "--json")
    assert code == 3  # every obligation unknown: the limit was honoured
    assert json.loads(out)["solver"]["rlimit"] == 1
    assert rlimit_for(1e-9) == 1 and rlimit_for(1e300) == Z3_UINT_MAX
    for bad in (float("inf"), 0, True, "5"):
        with pytest.raises(TeilInputError, match=r"timeout=.*: expected a finite number of seconds > 0"):
            ct.prove(ct.load(str(MATMUL)), timeout=bad)


def test_every_limit_handed_to_z3_is_a_limit(monkeypatch) -> None:
    # Z3 reads rlimit and timeout (ms) as unsigned 32-bit numbers, and 0 as no limit at all:
    # 2**32 wraps to 0, and a timeout under a millisecond truncates to 0 ms
    handed: list[tuple[str, object]] = []
    z3_set = z3.Solver.set

    def spy(self: z3.Solver, *args: object, **keys: object) -> None:
        handed.extend(zip(args[::2], args[1::2], strict=True))
        handed.extend(keys.items())
        z3_set(self, *args, **keys)

    monkeypatch.setattr(z3.Solver, "set", spy)
    for timeout in (1e-6, 1e300):
        ct.prove(ct.load(str(MATMUL)), timeout=timeout)
    limits = [(name, value) for name, value in handed if name in ("rlimit", "timeout")]
    assert {name for name, _ in limits} == {"rlimit", "timeout"}
    assert all(isinstance(value, int) and 1 <= value <= 2**32 - 1 for _, value in limits), limits


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
    from core_teil.lang.shapes import ShapeSolver, Verdict

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
    from core_teil.lang.parser import MAX_SOURCE_BYTES

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


def test_a_file_of_exactly_the_cap_is_read(tmp_path) -> None:
    from core_teil.lang.parser import MAX_SOURCE_BYTES

    text = MATMUL.read_bytes()
    full = tmp_path / "full.teil"  # the program, then one comment line up to the last byte allowed
    full.write_bytes(text + b"#" + b"x" * (MAX_SOURCE_BYTES - len(text) - 2) + b"\n")
    assert full.stat().st_size == MAX_SOURCE_BYTES
    assert ct.format(ct.load(str(full))) == ct.format(ct.load(str(MATMUL)))


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


def test_an_archive_member_of_another_dtype_is_refused_by_its_header(capsys, tmp_path) -> None:
    # the header says int64 at the right shape: refused before the data (here 64 bytes where
    # 480 are due, so decompressing it would fail) is read, naming the member
    p = tmp_path / "v.teil"
    p.write_text("input alloc A : [2, 30]\noutput alloc B : [2, 30]\nB = add A A\n")
    _npz_claiming(tmp_path / "i.npz", "A", (2, 30), "<i8")
    code, _, err = run(capsys, "run", str(p), "--engine", "reference", "--input", f"A={tmp_path / 'i.npz'}")
    assert code == 2
    assert f"{p}:1:1: input error [μ_allocs]: {tmp_path / 'i.npz'}[A]: input 'A' has dtype int64" in err


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


def test_code_in_math_mode_keeps_its_spaces(capsys) -> None:
    # TeX drops spaces in math mode: a bare one would set `prod A B` as `prodAB`
    code, out, err = run(capsys, "derive", str(MATMUL), "--latex")
    assert code == 0, err
    codes = re.findall(r"\\mathtt\{((?:[^{}]|\{[^{}]*\})*)\}", out)
    assert r"red\ 2\ (diag\ 2\ 3\ (prod\ A\ B))" in codes
    assert not [c for c in codes if re.search(r"(?<!\\) ", c)]


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


@pytest.mark.parametrize("pad", [" 2", "+2", "２", "1_000", "2\n", "two"])
def test_a_pad_is_written_in_the_digits_0_to_9_as_a_param_is(pad) -> None:
    # int() takes ' 2', '+2', '２', '1_000' and '2\n' (fuzzing r23: each ran, exit 0); --param never did
    for command in (["run", str(MATMUL)], ["prove", str(MATMUL)], ["emit-c", str(MATMUL), "-o", os.devnull]):
        done = cli(*command, "--pad", pad)
        assert done.returncode == 2, (command, done.stderr)
        assert f"argument --pad: {pad!r} is not an integer >= 1 written in the digits 0-9" in done.stderr, command


@pytest.mark.parametrize("engine", ["reference", "native"])
@pytest.mark.parametrize("pad", [2**32, 10**400])
def test_a_pad_too_large_to_hold_is_a_resource_error_not_a_crash(capsys, tmp_path, engine, pad) -> None:
    # fuzzing r23: 10^400 overflowed human_bytes' float division, 2^32 the native plan's int64 op
    # tables (both exit 70, internal error); the padded store cannot be built: μ_allocs, exit 2
    A, B = tmp_path / "A.npy", tmp_path / "B.npy"
    np.save(A, np.ones((2, 3)))
    np.save(B, np.ones((3, 2)))
    code, _, err = run(capsys, "run", str(MATMUL), "--engine", engine, "--pad", str(pad), "--input", f"A={A}",
                       "--input", f"B={B}", "--output", str(tmp_path / "out.npz"))
    assert code == 2 and "resource error [μ_allocs]" in err and "Traceback" not in err, err
    with pytest.raises(ct.TeilResourceError, match="μ_allocs"):
        ct.compile(ct.load(str(MATMUL)), {"l": 2, "m": 3, "n": 2}, pad)


def test_an_allocation_past_what_the_native_engine_addresses_is_refused_whatever_the_budget(monkeypatch) -> None:
    # with a memory budget that would hold it, μ_allocs still refuses what the int64 op tables cannot address
    from core_teil.semantics import inputs

    monkeypatch.setattr(inputs, "memory_budget", lambda: 1 << 80)
    with pytest.raises(ct.TeilResourceError, match=r"\[μ_allocs\].*allocation A : \[4294967296, 4294967296\] "
                                                  r"\(padded to multiples of 4294967296\) has .* elements, past the"):
        ct.compile(ct.load(str(MATMUL)), {"l": 2, "m": 3, "n": 2}, 2**32)


def test_a_loop_nest_past_what_the_native_engine_addresses_is_refused_at_compile() -> None:
    # every allocation is [2], but the statement's subexpression expa K (expa K X) has 2^61 elements:
    # the plan's int64 op tables would overflow (a plan is refused before it is made, St-Stmt)
    p = ct.parse("param K\ninput alloc X : [2]\noutput alloc Y : [2]\nY = red (red (expa K (expa K X)))\n")
    with pytest.raises(ct.TeilResourceError, match=r"\[St-Stmt\].*statement Y = \.\.\.: a subexpression of "
                                                  r"2,305,843,009,213,693,952 elements is past the"):
        ct.compile(p, {"K": 2**30})
    assert ct.compile(p, {"K": 3})(X=np.ones(2))["Y"].tolist() == [9.0, 9.0]


def test_an_allocation_too_large_names_the_initial_memory(capsys, tmp_path) -> None:
    # was labelled [S-Var], the name-uniqueness rule; what cannot be built is μ_allocs (Fig. 9)
    p = tmp_path / "huge.teil"
    p.write_text("alloc s : []\noutput alloc A : [100000, 100000, 100000]\n"
                 "A = expa 100000 (expa 100000 (expa 100000 s))\n")
    code, _, err = run(capsys, "run", str(p), "--engine", "reference")
    assert code == 2 and f"{p}:2:1: resource error [μ_allocs]: allocation A" in err


def test_allocations_that_fit_one_by_one_but_not_together_are_refused(monkeypatch) -> None:
    # μ_allocs holds every allocation at once: their sum is what must fit
    from core_teil.semantics import inputs

    monkeypatch.setattr(inputs, "memory_budget", lambda: 1000)  # bytes; each allocation needs 800
    p = ct.parse("input alloc A : [100]\noutput alloc B : [100]\nB = add A A\n")
    for entry in (lambda: ct.evaluate(p, {"A": np.ones(100)}), lambda: ct.compile(p)(A=np.ones(100))):
        with pytest.raises(TeilResourceError, match=r"allocation B : \[100\] needs 800 bytes .*; all "
                                                    r"allocations together need 1,600\+ bytes, more than the 1,000"):
            entry()


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
    from core_teil.lang.typing import check_program

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


def _overflowing_by_additions(n: int) -> float:
    """An x for which ``n·x`` is finite but ``x + … + x`` (n terms, left to right) is inf: at the
    top of the float range the two round differently (searched ulp by ulp below max / n)."""
    near = (np.float64(sys.float_info.max / n).view(np.int64) + np.arange(-5000, 5000)).view(np.float64)
    with np.errstate(over="ignore"):
        total = near.copy()
        for _ in range(n - 1):
            total = total + near
        found = near[np.isinf(total) & np.isfinite(near * n)]
    assert found.size, f"no such x near max / {n}"
    return float(found[0])


def _vector(*names: str) -> str:
    return "".join(f"input alloc {x} : [1]\n" for x in names) + "output alloc Y : [1]\n"


def _five(x: str) -> str:
    return f"add (add (add (add {x} {x}) {x}) {x}) {x}"


#: Programs whose plan computes in another order than the equations, with values for which the
#: two orders overflow differently; the guard must hand each to the reference engine.
REORDERED = {
    # T·U overflows, V·T·U does not: a plan that multiplies V·T first gets 1e300
    "a partial product": (_vector("T", "U", "V") + "Y = mul V (mul T U)\n",
                          {"T": [1e300], "U": [1e300], "V": [1e-300]}),
    # the equations compute 5T = inf, then inf - inf = •: what must be bounded is the sum of
    # the ten terms ±T (10·|T|), not the largest of them
    "terms that cancel": ("input alloc T : [2]\noutput alloc Y : [2]\n"
                          f"Y = sub ({_five('T')}) ({_five('T')})\n", {"T": [4e307, 1.0]}),
    # three terms are re-associated: (A + B) + C = inf where A + (B + C) = 1e308
    "three terms": (_vector("A", "B", "C") + "Y = add A (add B C)\n",
                    {"A": [1e308], "B": [1e308], "C": [-1e308]}),
    # the plan computes 11·x where the equations add eleven x's: inf, by rounding alone
    "a sum near the largest float": ("input alloc A : [2]\noutput alloc Y : [2]\nY = red (expa 11 A)\n",
                                     {"A": [_overflowing_by_additions(11), 1.0]}),
    # the denominator V·(T·U) is inf for the equations (so W / inf = 0), 1e300 for a plan that
    # multiplies in another order; the sum around it is what asks for the division's bound
    "a reordered denominator": (_vector("T", "U", "V", "W", "H")
                                + "Y = mul (red (expa 2 (div W (mul V (mul T U))))) H\n",
                                {"T": [1e300], "U": [1e300], "V": [1e-300], "W": [5.0], "H": [1e300]}),
    # T = A·A overflows in the store, not in any input: the guard of the next statement reads
    # T's values (T·0 + T·1 = • for the equations, T·(0 + 1) = inf and 5 / inf = 0 factored)
    "an overflow in the store": ("lang full\nparam n, m\ninput alloc A : [n]\ninput alloc B : [m]\n"
                                 "input alloc W : [n]\noutput alloc T : [n]\noutput alloc Y : [n]\n"
                                 "T = mul A A\nY = div W (red 2 (prod T B))\n",
                                 {"A": [1e200], "B": [0.0, 1.0], "W": [5.0]}),
    # the reproducer where the largest |value| is not the largest value, or sits beside
    # •, and where the least non-zero |denominator| is neither the only one nor positive
    "a large negative": (OVERFLOW, {**OVERFLOWING, "A": [-1e300, 1.0], "C": [1e-10, 1.0], "W": [5.0, 5.0]}),
    "a large negative beside undefined": (OVERFLOW, {**OVERFLOWING, "A": [-1e300, 1.0, np.nan],
                                                     "C": [1e-10, 1.0, 1.0], "W": [5.0, 5.0, 5.0]}),
    "a small denominator among others": (OVERFLOW, {**OVERFLOWING, "A": [1e300, 1.0], "C": [1e-10, 1.0],
                                                    "W": [5.0, 5.0]}),
    "a small negative denominator": (OVERFLOW, {**OVERFLOWING, "A": [1e300, 1.0], "C": [-1e-10, 1.0],
                                                "W": [5.0, 5.0]}),
}


@pytest.mark.parametrize("case", REORDERED)
def test_native_agrees_where_its_order_would_overflow_otherwise(case) -> None:
    text, values = REORDERED[case]
    p, inputs = ct.parse(text), {x: np.array(v, dtype=np.float64) for x, v in values.items()}
    want, got = ct.evaluate(p, inputs), native.compile(p)(**inputs)
    for name, w in want.items():
        np.testing.assert_array_equal(got[name], w, err_msg=name)


def test_the_direct_gemm_is_guarded_too(monkeypatch) -> None:
    # one matrix product of two inputs is one BLAS call, which sums in the library's order:
    # one that sums from the last k to the first gets 1e308 where the equations get inf
    calls: list[tuple[int, ...]] = []

    def gemm_last_k_first(g: native.Gemm, a: np.ndarray, b: np.ndarray, out: np.ndarray,
                          rows: tuple[int, int] | None = None) -> None:
        calls.append(a.shape)
        acc = np.outer(a[:, -1], b[-1])
        with np.errstate(all="ignore"):
            for k in range(a.shape[1] - 2, -1, -1):
                acc = acc + np.outer(a[:, k], b[k])
        out[...] = acc

    p = ct.load(str(MATMUL))
    kernel = native.compile(p, {"l": 64, "m": 64, "n": 64})
    (c,) = kernel._compiled.values()
    assert c.direct is not None
    monkeypatch.setattr(native, "gemm", gemm_last_k_first)
    a, b = np.ones((64, 64)), np.ones((64, 64))
    np.testing.assert_array_equal(kernel(A=a, B=b)["C"], np.full((64, 64), 64.0))
    assert calls == [(64, 64)], "far from overflow, the BLAS call computes the product"
    a[:, :3] = [1e308, 1e308, -1e308]
    want = ct.evaluate(p, {"A": a, "B": b})["C"]
    assert np.isinf(want).all()
    np.testing.assert_array_equal(kernel(A=a, B=b)["C"], want)


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


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float16, bool, complex,
                                   np.complex64])
def test_inputs_are_float64_everywhere(capsys, tmp_path, dtype) -> None:
    # int, float32 and float16 were converted silently while bool was refused
    p = ct.load(str(MATMUL))
    a = np.ones((2, 3), dtype=dtype)
    for entry in (lambda: ct.evaluate(p, {"A": a, "B": B}), lambda: ct.compile(p)(A=a, B=B)):
        with pytest.raises(TeilInputError) as info:
            entry()
        assert info.value.rule == "μ_allocs" and info.value.span.line == 10
        assert "complex" in info.value.message if np.dtype(dtype).kind == "c" else \
            "never converted" in info.value.message
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
