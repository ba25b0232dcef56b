"""Reviewer r19: mutation review of ac2e085, the compiled C built outside the engine's Z3 lock.

``cjit.emit`` checks and emits under the lock and returns the compile; ``cjit.prepare`` wraps
it in ``ready()`` (the compile, then the post-checks, never an exception); the engine publishes
the plan with ``cjit.COMPILING``, releases the lock, compiles, and sets ``c.cjit``.  Each test
here kills a mutant that tests/test_cjit*.py let survive, or pins the property the change is
for: another thread's ``ct.compile`` (a proof) finishes while this one's compiler runs.

Every lock check takes the lock from a helper thread *without blocking*: nothing else in
this process holds it, so the answer is immediate and the same on every run.
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
from tests.test_cjit import random_inputs
from tests.test_cjit_review import same_doubles

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine")


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """C for every plan, however small, into an empty cache: every kernel here is compiled, not found."""
    monkeypatch.setenv(cjit.ENV_DIR, str(tmp_path))
    monkeypatch.delenv(cjit.ENV_SWITCH, raising=False)
    monkeypatch.setattr(cjit, "MIN_WORK", 0)
    monkeypatch.setattr(native._native, "openmp_threads", lambda: 1)  # one thread: no batch chunks
    return tmp_path


def load(name: str) -> ct.Program:
    return ct.load(str(ROOT / "examples" / name))


def lock_is_free() -> bool:
    """Whether a thread other than the caller could take the engine's lock right now."""
    free: list[bool] = []

    def other() -> None:
        got = native._Z3.acquire(blocking=False)
        if got:
            native._Z3.release()
        free.append(got)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    return free[0]


def spy_compiles(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record, for every library cc compiles, whether the engine's lock was free meanwhile."""
    calls: list[bool] = []
    real = cjit.compile_entry

    def compiling(*args: Any) -> Any:
        calls.append(lock_is_free())
        return real(*args)

    monkeypatch.setattr(cjit, "compile_entry", compiling)
    return calls


# --------------------------------------------------------------------------
# emit proves, its function compiles
# --------------------------------------------------------------------------


def test_emit_compiles_nothing_its_function_compiles_once(fresh, monkeypatch):
    # mutants: emit compiles eagerly (its function only hands the kernel back), or looks the
    # cache up and compiles a missing library before it returns -- both under the engine's lock
    calls = spy_compiles(monkeypatch)
    p, params = load("axpy.teil"), {"n": 3}
    finish = cjit.emit(p, params, None, None, work=3, threads=1, blas=False)
    assert calls == [] and list(fresh.iterdir()) == []
    ck = finish()
    assert isinstance(ck, cjit.CKernel) and calls == [True] and ck.path.parent == fresh
    again = cjit.build(p, params, None, None, work=3, threads=1, blas=False)  # emit, then its compile
    assert again.path == ck.path and calls == [True]  # found in the cache, not compiled again


def test_ct_compile_runs_cc_with_the_lock_free_and_publishes_the_plan_first(fresh, monkeypatch):
    # mutants: the plan published with cjit None (why_not would say "runs the C" while it does
    # not), or only after the compile; publish-then-mark (a reader between the two statements
    # sees None); the compile under the lock
    calls = spy_compiles(monkeypatch)
    published: list[Any] = []

    class Recording(dict):
        def __setitem__(self, key: Any, value: Any) -> None:
            published.append(value.cjit)  # what a thread reading _compiled without the lock sees
            super().__setitem__(key, value)

    real = native.Kernel._prepare_locked

    def prepare_locked(self: native.Kernel, *args: Any) -> Any:
        if not isinstance(self._compiled, Recording):
            self._compiled = Recording(self._compiled)
        return real(self, *args)

    monkeypatch.setattr(native.Kernel, "_prepare_locked", prepare_locked)
    kernel = ct.compile(load("axpy.teil"), {"n": 3})
    assert published == [cjit.COMPILING] and calls == [True]
    assert cjit.why_not(kernel) is None
    symbolic = ct.compile(load("axpy.teil"))
    x = random_inputs(load("axpy.teil"), {"n": 3}, 0)
    symbolic(**x)
    assert published[1:] == ["symbolic parameters"] and calls == [True]


def test_another_threads_proof_finishes_while_cc_runs(fresh, monkeypatch):
    # what the change is for: a second kernel compiled (proved, planned, its own C built) on
    # another thread while the first kernel's compiler runs.  Mutant: the compile under the
    # lock -> the other thread waits for it (the join times out and the test fails)
    real = cjit.compile_entry
    main = threading.current_thread()
    other: dict[str, Any] = {}
    q, q_params = load("helm.teil"), {"E": 2, "n": 3}

    def compiling(*args: Any) -> Any:
        if threading.current_thread() is main and "kernel" not in other:
            def prove_another() -> None:
                other["kernel"] = ct.compile(q, q_params)

            t = threading.Thread(target=prove_another)
            t.start()
            t.join(30)
            other["done while cc ran"] = not t.is_alive()
            t.join()
        return real(*args)

    monkeypatch.setattr(cjit, "compile_entry", compiling)
    p, params = load("axpy.teil"), {"n": 4}
    kernel = ct.compile(p, params)
    assert other["done while cc ran"]
    assert cjit.why_not(kernel) is None and cjit.why_not(other["kernel"]) is None
    x, y = random_inputs(p, params, 1), random_inputs(q, q_params, 2)
    for k, prog, inputs, ps in ((kernel, p, x, params), (other["kernel"], q, y, q_params)):
        got, want = k(**inputs), ct.evaluate(prog, inputs, ps)
        assert all(same_doubles(got[n], want[n]) for n in want)


def test_a_padded_batched_kernel_called_while_its_c_compiles_runs_the_plan(fresh, monkeypatch):
    # another thread given the kernel during its compile (here through _prepare_locked's self, as
    # no public path hands a kernel out before ct.compile returns) sees COMPILING and runs the
    # padded plan; afterwards the chunked padded C runs.  Both give ct.evaluate(pad)'s doubles,
    # and refuse inf meeting the padding with its message.  Mutants: COMPILING taken for a
    # kernel (its .run on a str), why_not None while compiling
    from core_teil.native import planner

    monkeypatch.setattr(native._native, "openmp_threads", lambda: 2)
    monkeypatch.setattr(planner, "PARALLEL_MIN_WORK", 1)
    p, params, pad = load("interp.teil"), {"E": 5, "m": 3, "n": 3}, 4
    inputs = [random_inputs(p, params, 20), random_inputs(p, params, 21)]
    inputs[1]["A"][1, 2] = np.inf
    kernels: list[native.Kernel] = []
    real_prepare, real_compile = native.Kernel._prepare_locked, cjit.compile_entry

    def prepare_locked(self: native.Kernel, *args: Any) -> Any:
        kernels.append(self)
        return real_prepare(self, *args)

    def results(k: native.Kernel) -> list[Any]:
        out: list[Any] = []
        for x in inputs:
            try:
                out.append(k(**x))
            except ct.TeilError as exc:
                out.append(str(exc))
        return out

    meanwhile: dict[str, Any] = {}

    def compiling(*args: Any) -> Any:
        if not meanwhile:
            def call() -> None:
                meanwhile["why not"] = cjit.why_not(kernels[0])
                meanwhile["results"] = results(kernels[0])

            t = threading.Thread(target=call)
            t.start()
            t.join(60)
        return real_compile(*args)

    monkeypatch.setattr(native.Kernel, "_prepare_locked", prepare_locked)
    monkeypatch.setattr(cjit, "compile_entry", compiling)
    kernel = ct.compile(p, params, pad)
    assert kernels == [kernel] and meanwhile["why not"] == cjit.COMPILING
    (c,) = kernel._compiled.values()
    assert isinstance(c.cjit, cjit.CKernel) and c.cjit.batch is not None and c.cjit.batch.pad == pad
    assert meanwhile["results"][1].startswith("core-teil: padding error [report Theorem 3]")
    after = results(kernel)
    want = ct.evaluate(p, inputs[0], params, pad)
    with pytest.raises(ct.TeilError) as refused:
        ct.evaluate(p, inputs[1], params, pad)
    for got in (meanwhile["results"], after):
        assert same_doubles(got[0]["v"], want["v"]) and got[0]["v"].shape == want["v"].shape
        assert got[1] == str(refused.value)


# --------------------------------------------------------------------------
# A compile that fails after the lock is released
# --------------------------------------------------------------------------


def _fail_cc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    fake = tmp_path / "badcc"
    fake.write_text("#!/bin/sh\necho 'error: no' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    return f"{fake} failed: error: no"


def _fail_compile_entry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    def broken(*args: Any) -> Any:
        raise RuntimeError("linker bug")

    monkeypatch.setattr(cjit, "compile_entry", broken)
    return "RuntimeError: linker bug"


def _fail_load(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    def refused(entry: cjit.Entry) -> Any:
        raise ValueError("not a library")

    monkeypatch.setattr(cjit, "load", refused)
    return "ValueError: not a library"


@pytest.mark.parametrize("fail", [_fail_cc, _fail_compile_entry, _fail_load], ids=["cc", "compile_entry", "load"])
def test_a_compile_failing_outside_the_lock_leaves_its_reason_and_the_plan(fresh, monkeypatch, fail):
    # mutant: ready() lets an exception other than CJitUnavailable out (before ac2e085 the
    # compile was inside prepare's `except Exception`): ct.compile then failed, and the plan
    # stayed COMPILING.  An optional speed-up must never fail a compile that worked before
    why = fail(monkeypatch, fresh)
    p, params = load("helm.teil"), {"E": 2, "n": 3}
    kernel = ct.compile(p, params)
    assert cjit.why_not(kernel) == why
    (c,) = kernel._compiled.values()
    assert c.cjit == why  # a reason, not COMPILING, not None
    x = random_inputs(p, params, 3, specials=True)
    assert same_doubles(kernel(**x)["v"], ct.evaluate(p, x, params)["v"])


# --------------------------------------------------------------------------
# Threads racing to a kernel's first call
# --------------------------------------------------------------------------


def test_two_threads_first_calls_prepare_the_plan_once(fresh):
    # both threads miss the unlocked look-up in Kernel._prepare (each waits there for the
    # other); mutant: no second look under the lock -> both prove and plan, the second plan
    # replaces the first.  Both threads get ct.evaluate's doubles from one plan.
    p = load("matmul.teil")
    params = {"l": 3, "m": 4, "n": 5}
    kernel = ct.compile(p)  # symbolic: proved at the first call
    meet = threading.Barrier(2, timeout=10)
    published: list[Any] = []

    class Racing(dict):
        def __init__(self) -> None:
            super().__init__()
            self.looked: set[int] = set()

        def get(self, key: Any, default: Any = None) -> Any:
            if threading.get_ident() not in self.looked:  # the first, unlocked look of each thread
                self.looked.add(threading.get_ident())
                meet.wait()
            return super().get(key, default)

        def __setitem__(self, key: Any, value: Any) -> None:
            published.append(value)
            super().__setitem__(key, value)

    kernel._compiled = Racing()
    inputs = [random_inputs(p, params, 10 + i) for i in range(2)]
    got: list[Any] = [None, None]

    def call(i: int) -> None:
        got[i] = kernel(**inputs[i])["C"]

    ts = [threading.Thread(target=call, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert len(published) == 1 and published[0].cjit == "symbolic parameters"
    for i in range(2):
        assert got[i] is not None and same_doubles(got[i], ct.evaluate(p, inputs[i], params)["C"])


# --------------------------------------------------------------------------
# A path the change missed (review r19; fixed in Kernel._unpadded)
# --------------------------------------------------------------------------


def test_the_padded_kernels_judge_compiles_with_the_lock_free(fresh, monkeypatch):
    # a padded run meeting inf is judged by the unpadded kernel, built on demand (the first such
    # call) and, being fixed-parameter, compiled to C: that compile must not hold the lock
    p, params = load("interp.teil"), {"E": 3, "m": 3, "n": 3}
    kernel = ct.compile(p, params, 4)
    assert cjit.why_not(kernel) is None
    calls = spy_compiles(monkeypatch)
    x = random_inputs(p, params, 0)
    x["A"][0, 0] = np.inf
    with pytest.raises(ct.TeilError, match="Theorem 3"):
        kernel(**x)
    assert calls, "the judge was not compiled: a vacuous test"
    assert all(calls), "the judge's C compiled while the engine's lock was held"
