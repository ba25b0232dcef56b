"""Review of r25's input hardening (mutation testing): tests that pin what the r25 changes
promise but the r25 tests leave open.

Fast and deterministic.  A linear-time pattern is checked the way tests/test_answers_long.py
checks for a hang: a subprocess with a timeout far above the linear run.  Here the answers are
10^6 characters long: the linear checkers take well under a second each, and a quadratic
pattern needs about 10^12 steps (hours), so the 60-second timeout has a wide margin either way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import core_teil as ct
from core_teil.errors import NO_SPAN
from core_teil.proving.limits import Z3_UINT_MAX

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "examples" / "matmul.teil"
EQUIV = ROOT / "examples" / "equiv"
PARAMS = {"l": 2, "m": 2, "n": 2}


@pytest.fixture(scope="module")
def matmul() -> ct.Program:
    return ct.load(str(MATMUL))


# --------------------------------------------------------------------------
# Linear-time answer patterns (parse_names, _RULE, _ASSIGN, _PREMISE, _DIVISION,
# _PROGRAM_TEXT, check_reads): each long answer is refused or graded without a hang
# --------------------------------------------------------------------------

LONG = {
    "parse_names: a run of blanks before '(all ranks'": "parse_names(' ' * N + '(all ranks')",
    "_RULE and _ASSIGN: one long word (1.4)": "check_answer('1.4', 'a' * N)",
    "_PREMISE: one long word (2.1)": "check_answer('2.1', 'a' * N)",
    "_DIVISION: a/a/a/... (5.2)": "check_answer('5.2', 'a/' * N)",
    "_PROGRAM_TEXT: a run of newlines (4.2)": "check_answer('4.2', '\\n' * N + 'x')",
    "check_reads: one long word in the second part (3.2)": "check_answer('3.2', 'B[2, i, j]; ' + 'a' * N)",
}


@pytest.mark.parametrize("call", list(LONG.values()), ids=list(LONG))
def test_a_long_answer_is_read_in_linear_time(call: str) -> None:
    script = ("from core_teil.errors import TeilError\n"
              "from core_teil.teach.answers import parse_names\n"
              "from core_teil.teach.exercises import check_answer\n"
              "N = 10**6\n"
              f"try:\n    {call}\nexcept TeilError:\n    pass\n"
              "print('done')\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "done", proc.stderr[-2000:]


def test_a_premise_written_without_blanks_is_read() -> None:
    # _PREMISE keeps the operator out of its left side: `3==2` is `3 == 2` (with `(\S+)` the
    # left side was `3=` and the operator `=`)
    from core_teil.teach.exercises import check_answer

    assert check_answer("2.1", "T-Contr 3==2").ok
    assert check_answer("2.1", "T-Contr 3 == 2").ok
    assert check_answer("5.2", "0/0=0").ok


# --------------------------------------------------------------------------
# An answer's term: nesting is bounded, length is not
# --------------------------------------------------------------------------


def test_a_term_nesting_100_levels_is_read_and_deeper_is_refused() -> None:
    from core_teil.teach.answers import MAX_TERM_DEPTH, parse_term

    assert MAX_TERM_DEPTH == 100  # the bound the commit documents
    parse_term("(" * 99 + "B[i, j, 1]" + ")" * 99)  # 99 parentheses and the read: 100 levels
    with pytest.raises(ct.TeilInputError, match="nests deeper than 100 levels"):
        parse_term("(" * 100 + "B[i, j, 1]" + ")" * 100)


def test_a_flat_term_is_as_deep_as_its_chain() -> None:
    # the depth goes back down after each factor, but a chain a - b - c ... nests the tree to its
    # left one level per operator, and what reads the tree recurses through it (a chain of 1,000
    # differences was a RecursionError): 80 factors are 80 levels, 150 are too deep
    from core_teil.teach.answers import parse_term

    parse_term(" + ".join(["C[i]"] * 80))
    parse_term(" · ".join(["C[i]"] * 80))
    parse_term(" - ".join(["(C[i] · C[i])"] * 40))
    for op in ("+", "·"):
        with pytest.raises(ct.TeilInputError, match="nests deeper than 100 levels"):
            parse_term(f" {op} ".join(["C[i]"] * 150))


# --------------------------------------------------------------------------
# API argument checks
# --------------------------------------------------------------------------


def test_trace_of_a_checked_program_checks_its_inputs(matmul: ct.Program) -> None:
    # ct.trace(CheckedProgram, ..., inputs=3) reaches trace_steps, whose check_inputs says so
    checked = ct.check(matmul, PARAMS)
    with pytest.raises(ct.TeilInputError, match="inputs must be a dict"):
        ct.trace(checked, "C[1,1]", inputs=3)


@pytest.mark.parametrize("rlimit", [0, True, False, Z3_UINT_MAX + 1, 2**64])
def test_equiv_rlimit_outside_1_to_uint_max_is_refused(rlimit: object) -> None:
    # 0 is "no limit" to z3, True would be read as 1: neither is a resource limit
    p, q = ct.load(str(EQUIV / "div_distribute_p.teil")), ct.load(str(EQUIV / "div_distribute_q.teil"))
    with pytest.raises(ct.TeilInputError, match="resource limit is an integer from 1 to"):
        ct.equiv(p, q, rlimit=rlimit)


@pytest.mark.parametrize("rlimit", [1, Z3_UINT_MAX])
def test_equiv_rlimit_at_the_bounds_is_accepted(rlimit: int) -> None:
    p, q = ct.load(str(EQUIV / "div_distribute_p.teil")), ct.load(str(EQUIV / "div_distribute_q.teil"))
    report = ct.equiv(p, q, rlimit=rlimit)
    assert report.rlimit == rlimit


def test_prove_library_takes_a_path_object(tmp_path: Path) -> None:
    summary = ct.prove_library(MATMUL, jobs=1)
    assert [(r.path, type(r.path)) for r in summary.results] == [(str(MATMUL), str)]
    summary = ct.prove_library([MATMUL, str(MATMUL)], jobs=1)  # the same kernel once
    assert [r.path for r in summary.results] == [str(MATMUL)]


@pytest.mark.parametrize("paths", [[3], [str(MATMUL), None], (b"examples/matmul.teil",)])
def test_prove_library_refuses_a_list_holding_a_non_path(paths: object) -> None:
    with pytest.raises(ct.TeilInputError, match=r"ct\.prove_library: expected (a path or )?paths"):
        ct.prove_library(paths)


def test_prove_takes_an_smt2_dir_as_a_path(matmul: ct.Program, tmp_path: Path) -> None:
    ct.prove(matmul, smt2_dir=tmp_path / "smt2")
    assert list((tmp_path / "smt2").glob("*.smt2"))


@pytest.mark.parametrize("header", [3, b"k.h"])
def test_emit_c_header_of_a_wrong_type_is_refused(matmul: ct.Program, header: object) -> None:
    with pytest.raises(ct.TeilInputError, match="expected text"):
        ct.emit_c(matmul, None, None, name="kern", header=header)


# --------------------------------------------------------------------------
# emit-c: a too-large allocation is named and pointed at, used or not
# --------------------------------------------------------------------------


TOO_LARGE = {
    # every allocation is the caller's (no qualifiers): the check over all allocations
    "written": "alloc A : [3]\nalloc T : [99999999999999999999, 3]\nalloc B : [3]\nT = expa 99999999999999999999 A\n",
    "unused": "alloc A : [3]\nalloc T : [99999999999999999999, 3]\nalloc B : [3]\nB = A\n",
    # T is neither input nor output: a workspace slot, checked before the allocations
    "workspace": ("input alloc A : [3]\nalloc T : [99999999999999999999, 3]\noutput alloc B : [3]\n"
                  "T = expa 99999999999999999999 A\nB = red T\n"),
}


@pytest.mark.parametrize("src", list(TOO_LARGE.values()), ids=list(TOO_LARGE))
def test_emit_c_names_and_points_at_a_too_large_allocation(src: str) -> None:
    with pytest.raises(ct.TeilResourceError) as info:
        ct.emit_c(ct.parse(src))
    assert str(info.value).startswith("<string>:2:1: ")
    assert "T: an array of 299,999,999,999,999,999,997 elements" in str(info.value)


# --------------------------------------------------------------------------
# Program: cached allocation look-ups keep their documented meaning
# --------------------------------------------------------------------------


def test_alloc_finds_the_first_of_a_duplicated_name() -> None:
    p = ct.parse("alloc A : [2]\nalloc A : [3]\nA = A\n")
    assert p.alloc("A").shape == (2,)
    assert p.alloc("B") is None


def test_a_replaced_program_does_not_share_the_cache() -> None:
    import dataclasses
    import pickle

    p = ct.parse("input alloc X : [2]\noutput alloc Y : [2]\nY = X\n")
    assert [a.name for a in p.inputs()] == ["X"] and [a.name for a in p.outputs()] == ["Y"]
    q = dataclasses.replace(p, decls=p.decls[:1])
    assert [a.name for a in q.allocs] == ["X"] and q.alloc("Y") is None and q.outputs() == ()
    r = pickle.loads(pickle.dumps(p))
    assert r == p and r.alloc("Y") == p.alloc("Y") and r.inputs() == p.inputs()


# --------------------------------------------------------------------------
# CLI helpers: the header budget and the unusable cache
# --------------------------------------------------------------------------


def test_an_npy_header_at_the_budget_is_accepted_and_one_byte_over_refused(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from core_teil import cli
    from core_teil.semantics import inputs

    f = tmp_path / "a.npy"
    np.save(f, np.ones((3, 5)))
    monkeypatch.setattr(inputs, "memory_budget", lambda: 120)
    with open(f, "rb") as fh:
        assert cli.checked_header(fh, str(f), NO_SPAN)[0] == (3, 5)
    monkeypatch.setattr(inputs, "memory_budget", lambda: 119)
    with open(f, "rb") as fh, pytest.raises(ct.TeilInputError, match="120 bytes"):
        cli.checked_header(fh, str(f), NO_SPAN)


def test_a_cache_directory_that_cannot_be_written_gets_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # as root every directory is writable, so os.access stands in for a read-only one
    from core_teil.library import unusable_cache

    assert unusable_cache(str(tmp_path)) == ""
    assert unusable_cache(str(tmp_path / "not yet")) == ""
    monkeypatch.setattr(os, "access", lambda *a, **k: False)
    assert unusable_cache(str(tmp_path)) == f"the cache {tmp_path} is not writable: nothing was stored in it"


def test_a_ragged_list_input_is_an_input_error_naming_its_allocation(matmul: ct.Program) -> None:
    with pytest.raises(ct.TeilInputError, match="input 'A' is not an array") as info:
        ct.evaluate(matmul, {"A": [[1.0, 2.0], [3.0]], "B": np.ones((2, 2))}, PARAMS)
    assert "matmul.teil:10:" in str(info.value)


# --------------------------------------------------------------------------
# Real bugs found in review, fixed
# --------------------------------------------------------------------------


def test_a_long_chain_of_differences_is_a_teil_error_or_a_verdict() -> None:
    # in a subprocess: core_teil.library raises this process's recursion limit to 20,000
    script = ("from core_teil.errors import TeilError\n"
              "from core_teil.teach.exercises import check_answer\n"
              "try:\n    check_answer('3.1', 'C[i] - ' * 5000 + 'C[i]')\nexcept TeilError:\n    pass\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-300:]


def test_reads_with_unclosed_brackets_are_read_in_linear_time() -> None:
    script = ("from core_teil.errors import TeilError\n"
              "from core_teil.teach.exercises import check_answer\n"
              "try:\n    check_answer('3.2', 'B[2, i, j]; ' + 'a[' * 200_000)\nexcept TeilError:\n    pass\n")
    subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=10)


def test_equiv_takes_a_numpy_integer_rlimit() -> None:
    p, q = ct.load(str(EQUIV / "div_distribute_p.teil")), ct.load(str(EQUIV / "div_distribute_q.teil"))
    assert ct.equiv(p, q, rlimit=np.int64(10**6)).rlimit == 10**6


class _NoArray:
    """An array-like whose conversion fails with neither a ValueError nor a TypeError."""

    def __array__(self, *args: object, **kwargs: object) -> np.ndarray:
        raise RuntimeError("this proxy cannot be read")


@pytest.mark.parametrize("params", [PARAMS, None], ids=["given", "inferred"])
def test_an_input_numpy_cannot_convert_is_an_input_error(matmul: ct.Program, params: dict | None) -> None:
    # infer_params catches whatever np.shape raises ("numpy raises many kinds here")
    with pytest.raises(ct.TeilInputError, match="input 'A' is not an array: this proxy cannot be read"):
        ct.evaluate(matmul, {"A": _NoArray(), "B": np.ones((2, 2))}, params)
    with pytest.raises(ct.TeilInputError, match="input 'A' is not an array"):
        ct.compile(matmul, params)(A=_NoArray(), B=np.ones((2, 2)))


@pytest.mark.parametrize("bad", ["lang full\n", 3])
def test_prove_cached_refuses_what_is_not_a_program(tmp_path: Path, bad: object) -> None:
    # check_params(params, program) is where prove_cached (the CLI's and the library's way in)
    # meets the program first: it must say what it got, not fail on `program.file`
    from core_teil.proving.cache import ProofCache, prove_cached

    with pytest.raises(ct.TeilInputError, match="expected a Core-TeIL program"):
        prove_cached(bad, cache=ProofCache(str(tmp_path)))
