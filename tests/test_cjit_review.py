"""Reviewer r15c: mutation review of the compiled C per plan (``core_teil.native.cjit``, issue 15).

Each test here kills at least one mutant of ``cjit.py`` (or of the engine's calls into it)
that ``tests/test_cjit.py`` let survive: the cache key's ingredients, the removal of a
damaged entry beside a whole one, the ``MIN_WORK`` boundary, the guard on emit-c's output
shapes, ``out=`` arrays written in place, chunks of the batch dimension (one per thread,
never empty), the refusal reason of an unusable cache directory, optional inputs left
out, the engine's proof reused as emit-c's certificate, and the sign of zero.
Two tests recorded bugs of cjit as strict xfails (a relative CORE_TEIL_CJIT_DIR, a compiler that
writes nothing); both are fixed.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from core_teil.native import cjit
from core_teil.native import engine as native

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cjit-review")


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch, cache: Path) -> Path:
    """C for every plan, however small, on one thread, into this module's cache."""
    monkeypatch.setenv(cjit.ENV_DIR, str(cache))
    monkeypatch.delenv(cjit.ENV_SWITCH, raising=False)
    monkeypatch.setattr(cjit, "MIN_WORK", 0)
    monkeypatch.setattr(native._native, "openmp_threads", lambda: 1)
    return cache


def threads(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """``n`` OpenMP threads, and every call of a plan large enough for them."""
    from core_teil.native import planner

    monkeypatch.setattr(native._native, "openmp_threads", lambda: n)
    monkeypatch.setattr(planner, "PARALLEL_MIN_WORK", 1)


def no_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, any step of the plan (or the reference fallback) fails the test."""

    def ran(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the plan ran")

    monkeypatch.setattr(native._native, "run", ran)
    monkeypatch.setattr(native, "gemm", ran)
    monkeypatch.setattr(native, "evaluate", ran)


def load(name: str) -> ct.Program:
    return ct.load(str(ROOT / "examples" / name))


def inputs_for(p: ct.Program, params: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = ct.check(p, dict(params))
    return {a.name: rng.standard_normal(shapes[a.name]) for a in p.inputs()}


def same_doubles(x: Any, y: Any) -> bool:
    """Equal values, NaN where NaN, and the same sign of every zero (a NaN's sign bit means nothing)."""
    x, y = np.asarray(x), np.asarray(y)
    return bool(np.array_equal(x, y, equal_nan=True)
                and np.array_equal(np.signbit(x)[~np.isnan(x)], np.signbit(y)[~np.isnan(y)]))


def the_c(kernel: native.Kernel) -> cjit.CKernel:
    """The kernel's compiled C (it has one: the plan does not run)."""
    (c,) = kernel._compiled.values()
    assert isinstance(c.cjit, cjit.CKernel), c.cjit
    return c.cjit


# --------------------------------------------------------------------------
# The cache
# --------------------------------------------------------------------------


def test_the_cache_key_changes_with_every_ingredient(monkeypatch):
    # mutants: the C text, the header, the compiler, the flags, the CPU or the machine left
    # out of the key -> a library built from other C (an older emitter), with other flags or
    # for another CPU (-march=native, a shared cache directory) would be loaded
    c, h, cc = "int teil_cjit(void) { return 1; }", "/* header 1 */", ("cc",)
    fl = (*cjit.BASE_FLAGS, "-march=native")
    monkeypatch.setattr(cjit, "cpu_identity", lambda: "cpu A")
    monkeypatch.setattr(cjit.platform, "machine", lambda: "x86_64")
    base = cjit.cache_key(c, h, cc, fl)
    assert cjit.cache_key(c, h, cc, fl) == base and len(base) == 32
    changed = {
        "C text": cjit.cache_key(c.replace("1", "2"), h, cc, fl),
        "header": cjit.cache_key(c, "/* header 2 */", cc, fl),
        "compiler": cjit.cache_key(c, h, ("clang",), fl),
        "flags": cjit.cache_key(c, h, cc, (*fl, "-fno-inline")),  # -march=native kept: the CPU still counts
    }
    portable = cjit.cache_key(c, h, cc, cjit.BASE_FLAGS)
    monkeypatch.setattr(cjit, "cpu_identity", lambda: "cpu B")
    changed["CPU (with -march=native)"] = cjit.cache_key(c, h, cc, fl)
    # without -march=native the library is the same for every CPU of the machine type
    assert cjit.cache_key(c, h, cc, cjit.BASE_FLAGS) == portable
    monkeypatch.setattr(cjit, "cpu_identity", lambda: "cpu A")
    monkeypatch.setattr(cjit.platform, "machine", lambda: "aarch64")
    changed["machine"] = cjit.cache_key(c, h, cc, fl)
    for what, key in changed.items():
        assert key != base, f"the cache key ignores the {what}"


def test_a_damaged_entry_beside_a_whole_one_is_removed(small):
    # mutant: lookup skips a damaged library without removing it (it stays, and is hashed
    # again on every lookup, for ever)
    p = load("axpy.teil")
    whole = the_c(ct.compile(p, {"n": 3})).path
    key = whole.name.split(".")[0]
    damaged = whole.with_name(f"{key}.{'0' * 64}.so")  # sorts before the whole one
    damaged.write_bytes(b"half a library")
    again = ct.compile(p, {"n": 3})
    assert cjit.why_not(again) is None and the_c(again).path == whole
    assert not damaged.exists()


def test_an_unusable_cache_directory_is_a_refusal_naming_it(small, monkeypatch, tmp_path):
    # mutant: the OSError of an unwritable cache is not turned into CJitUnavailable (the
    # reason then names an exception class instead of the directory)
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    monkeypatch.setenv(cjit.ENV_DIR, str(not_a_dir))
    p = load("helm.teil")
    kernel = ct.compile(p, {"E": 2, "n": 3})
    why = cjit.why_not(kernel)
    assert why == f"{not_a_dir}: [Errno 17] File exists: '{not_a_dir}'", why
    x = inputs_for(p, {"E": 2, "n": 3}, 1)
    assert np.array_equal(kernel(**x)["v"], ct.evaluate(p, x, {"E": 2, "n": 3})["v"])


def test_a_relative_cache_directory_is_used(small, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(cjit.ENV_DIR, ".")
    kernel = ct.compile(load("axpy.teil"), {"n": 3})
    assert cjit.why_not(kernel) is None


# --------------------------------------------------------------------------
# When the C is used
# --------------------------------------------------------------------------


def test_min_work_is_the_least_work_compiled(monkeypatch, cache):
    # mutant: `work <= MIN_WORK` (the documented bound is inclusive: >= 2^16 compiles)
    monkeypatch.setenv(cjit.ENV_DIR, str(cache))
    monkeypatch.delenv(cjit.ENV_SWITCH, raising=False)
    monkeypatch.setattr(native._native, "openmp_threads", lambda: 1)
    assert cjit.MIN_WORK == 1 << 16
    p, params = load("interp.teil"), {"E": 2, "m": 2, "n": 2}  # 96 innermost iterations a call
    monkeypatch.setattr(cjit, "MIN_WORK", 96)
    assert cjit.why_not(ct.compile(p, params)) is None
    monkeypatch.setattr(cjit, "MIN_WORK", 97)
    assert cjit.why_not(ct.compile(p, params)) == "96 innermost iterations per call: not worth a compile"


def test_emit_c_and_the_plan_must_agree_on_the_output_shapes(small, monkeypatch):
    # mutant: the comparison of emit-c's output shapes with the plan's is dropped (the C
    # would then write a buffer of the wrong size)
    from core_teil.native import emit_c

    real = emit_c.CSource.shape

    def longer(self: Any, name: str, params: Any = None) -> tuple[int, ...]:
        s = real(self, name, params)
        return (*s[:-1], s[-1] + 1) if s else s

    monkeypatch.setattr(emit_c.CSource, "shape", longer)
    p = load("axpy.teil")
    kernel = ct.compile(p, {"n": 4})
    assert cjit.why_not(kernel).startswith("emit-c's outputs (('z', (5,)), ('w', (5,))) are not the plan's")
    x = inputs_for(p, {"n": 4}, 2)
    got, want = kernel(**x), ct.evaluate(p, x, {"n": 4})
    assert all(np.array_equal(got[n], want[n]) for n in want)


def test_optional_inputs_left_out_still_run_the_c(small, monkeypatch):
    # mutant: an input that is not supplied (NULL: the C reads NaN, the convention) sends the
    # call to the plan.  report_fig4_contraction declares no qualifiers: C is an optional input.
    p = load("report_fig4_contraction.teil")
    kernel = ct.compile(p, {})
    assert cjit.why_not(kernel) is None
    x = inputs_for(p, {}, 3)
    want = ct.evaluate(p, {"A": x["A"], "B": x["B"]}, {})
    no_plan(monkeypatch)
    got = kernel(A=x["A"], B=x["B"])
    assert set(got) == set(want) and all(np.array_equal(got[n], want[n], equal_nan=True) for n in want)


def test_the_engines_proof_is_emit_cs_certificate(small, monkeypatch):
    # mutant: cjit does not hand the engine's report to emit-c, which then proves again
    from core_teil.proving import prove as proving

    calls: list[str] = []
    real = proving.prove

    def counted(program: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(program.file)
        return real(program, *args, **kwargs)

    monkeypatch.setattr(proving, "prove", counted)
    # a program text of this test only, so that no proof of it is cached in the process
    p = ct.parse("lang core\nparam n\ninput alloc x : [n]\noutput alloc y : [n]\ny = add (mul x x) x\n",
                 "r15c_certificate.teil")
    kernel = ct.compile(p, {"n": 5})
    assert cjit.why_not(kernel) is None
    assert calls == ["r15c_certificate.teil"]  # the engine's proof, once


# --------------------------------------------------------------------------
# Running the C
# --------------------------------------------------------------------------


@pytest.mark.parametrize("nthreads", [1, 2])
def test_out_arrays_are_written_in_place_by_the_c(small, monkeypatch, nthreads):
    # mutants: CKernel.run ignores its targets, or the engine does not pass them: the result
    # is then computed into a fresh array and copied (issue 15: 12 ms of page zeroing at 137 MB)
    threads(monkeypatch, nthreads)
    p, params = load("interp.teil"), {"E": 5, "m": 3, "n": 2}
    kernel = ct.compile(p, params)
    assert cjit.why_not(kernel) is None and (the_c(kernel).batch is not None) == (nthreads > 1)
    in_place: list[dict[str, bool]] = []
    real = native._write_out

    def spy(outputs: dict[str, np.ndarray], out: Any) -> dict[str, np.ndarray]:
        in_place.append({name: outputs[name] is arr for name, arr in out.items()})
        return real(outputs, out)

    monkeypatch.setattr(native, "_write_out", spy)
    x = inputs_for(p, params, 4)
    out = np.full((5, 3, 3, 3), 99.0)
    got = kernel(out={"v": out}, **x)
    assert in_place == [{"v": True}]
    assert got["v"] is out and np.array_equal(out, ct.evaluate(p, x, params)["v"])


def chunks_of(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Every (lo, hi) chunk the C is called on from now on."""
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()
    real = cjit.CKernel._call

    def spy(self: Any, base: Any, b: Any, lo: int, hi: int, workspace: Any) -> int:
        with lock:
            seen.append((lo, hi))
        return real(self, base, b, lo, hi, workspace)

    monkeypatch.setattr(cjit.CKernel, "_call", spy)
    return seen


def test_the_threads_run_contiguous_chunks(small, monkeypatch):
    # mutants: one chunk for the whole batch (the team idles), or chunks cut off by one; two
    # threads take cjit.CHUNKS_PER_THREAD = 4 chunks each, at most one per batch index
    threads(monkeypatch, 2)
    for extent, want in ((7, [(i, i + 1) for i in range(7)]),
                         (20, [(0, 2), (2, 5), (5, 7), (7, 10), (10, 12), (12, 15), (15, 17), (17, 20)])):
        p, params = load("interp.teil"), {"E": extent, "m": 2, "n": 3}
        kernel = ct.compile(p, params)
        assert the_c(kernel).batch is not None
        seen = chunks_of(monkeypatch)
        x = inputs_for(p, params, 5)
        assert np.array_equal(kernel(**x)["v"], ct.evaluate(p, x, params)["v"])
        assert sorted(seen) == want


def test_more_threads_than_batch_rows_still_run_the_c(small, monkeypatch):
    # mutant: as many chunks as threads even when the batch is shorter: an empty chunk is
    # refused by the C (EPARAM) and every such call silently goes to the plan
    threads(monkeypatch, 4)
    p, params = load("interp.teil"), {"E": 3, "m": 2, "n": 3}
    kernel = ct.compile(p, params)
    assert cjit.why_not(kernel) is None and the_c(kernel).batch is not None
    x = inputs_for(p, params, 6)
    want = ct.evaluate(p, x, params)["v"]
    seen = chunks_of(monkeypatch)
    no_plan(monkeypatch)
    assert np.array_equal(kernel(**x)["v"], want)
    assert sorted(seen) == [(0, 1), (1, 2), (2, 3)]


ZERO_CASES = [("helm.teil", {"E": 2, "n": 3}), ("normalize.teil", None), ("fig11_proj_expa.teil", None),
              ("tc_increment.teil", None), ("mttkrp.teil", None), ("axpy.teil", {"n": 5})]


@pytest.mark.parametrize(("file", "params"), ZERO_CASES, ids=[f for f, _ in ZERO_CASES])
def test_the_c_gives_the_reference_engines_sign_of_zero(small, file, params):
    # np.array_equal takes -0.0 == 0.0: tests/test_cjit.py's differential tests cannot see a
    # lost sign.  The C computes ct.evaluate's doubles, signs of zero included (sums from
    # -0.0, controlled division 0/x = +0.0); mutants: -fno-signed-zeros and the like
    p = load(file)
    params = params or {q: 3 for q in p.params}
    kernel = ct.compile(p, params)
    assert cjit.why_not(kernel) is None
    shapes = ct.check(p, dict(params))
    rng = np.random.default_rng(7)
    for fill in (-0.0, 0.0, None):
        x = {a.name: np.full(shapes[a.name], fill) if fill is not None
             else np.where(rng.random(shapes[a.name]) < 0.5, -0.0, rng.standard_normal(shapes[a.name]))
             for a in p.inputs()}
        got, want = kernel(**x), ct.evaluate(p, x, params)
        for name, w in want.items():
            assert same_doubles(got[name], w), (file, fill, name)


def test_the_c_keeps_nan_and_inf_where_the_reference_does(small):
    # x - x, x / x and y * (x - x) are NaN for x = NaN or ±inf; a compiler allowed to assume
    # finite values folds them to 0 and 1 (mutant: -ffinite-math-only, which no corpus
    # example of tests/test_cjit.py exposes)
    p = ct.parse("lang core\nparam n\ninput alloc A : [n]\ninput alloc B : [n]\noutput alloc D : [n]\n"
                 "output alloc Q : [n]\noutput alloc M : [n]\nD = sub A A\nQ = div A A\nM = mul A (sub B B)\n",
                 "r15c_specials.teil")
    kernel = ct.compile(p, {"n": 8})
    assert cjit.why_not(kernel) is None
    a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5, 1e308])
    b = np.array([1.0, 2.0, np.inf, np.nan, -0.0, 3.0, -np.inf, 4.0])
    got = kernel(A=a, B=b)
    nan = np.nan
    want = {"D": [nan, nan, nan, 0.0, 0.0, 0.0, 0.0, 0.0], "Q": [nan, nan, nan, 0.0, 0.0, 1.0, 1.0, 1.0],
            "M": [nan, nan, nan, nan, -0.0, 0.0, nan, 0.0]}
    ref = ct.evaluate(p, {"A": a, "B": b}, {"n": 8})
    assert want.keys() == ref.keys() == got.keys()
    for name, w in want.items():
        assert same_doubles(ref[name], w), (name, ref[name])  # the yardstick itself
        assert same_doubles(got[name], w), (name, got[name])


def test_a_compiler_that_writes_nothing_is_named_in_the_reason(small, monkeypatch, tmp_path):
    fake = tmp_path / "quietcc"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    p = load("helm.teil")
    kernel = ct.compile(p, {"E": 2, "n": 3})
    why = cjit.why_not(kernel)
    assert why is not None and why.startswith(f"{fake} "), why
    x = inputs_for(p, {"E": 2, "n": 3}, 9)
    assert np.array_equal(kernel(**x)["v"], ct.evaluate(p, x, {"E": 2, "n": 3})["v"])
