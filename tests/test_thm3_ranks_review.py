"""Review rT3 of Theorem 3 for every rank (proofs/pad_ranks.py) and of make verify's forked executor.

Each test here kills mutants that survived both ``make verify`` and the tests of
``tests/test_thm3_ranks.py``: a weakening of the rank-generic proofs (a claim dropped, the domain
premise let into the hypotheses, premises of the closure stronger than the steps conclude, fewer
hint sets or statement schemata, premise lists of the rule-derived lemmas cut), or of the
executor (a crashed child, lost or duplicated results, the job limit).  A wrong semantics or a
wrong hole assumption is decided in a fresh interpreter, as make verify decides it (Z3's search
depends on the process's history): :func:`decide` runs ``check_lemma`` in a subprocess with the
given edits applied.
"""

from __future__ import annotations

import ctypes
import faulthandler
import json
import multiprocessing as mp
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from proofs import pad_ranks, ranks, registry, run
from proofs.kernel import Book, Expect, LemmaResult, Status
from proofs.run import Done, Task, forked, in_fresh_process

ROOT = Path(__file__).resolve().parents[1]

#: Run in a fresh interpreter: ``SETUP`` defines helpers, then each edit ``(module, qualname, old,
#: new)`` is applied as a :class:`proofs.mutants.Edit` and the lemma is decided.
_CHILD = textwrap.dedent("""
    import importlib, json, sys
    import z3
    from core_teil.semantics import eval as ev
    from core_teil.semantics import symbolic as sym
    from core_teil.semantics.sequences import Seq, as_seq
    from proofs import mutants, registry
    from proofs.kernel import check_lemma

    spec = json.loads(sys.argv[1])
    exec(spec["setup"])
    patches = []
    for module, qualname, old, new in spec["edits"]:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        patches.append(mutants.Edit(obj, old, new))
    with mutants.applied(mutants.Mutant("rT3", "", "", tuple(patches), ())):
        r = check_lemma(registry.by_name()[spec["lemma"]])
    print(json.dumps({"status": r.status.value, "failed": r.failed, "counterexample": r.counterexample}))
""")


def decide(lemma: str, edits: list[tuple[str, str, str, str]], setup: str = "") -> dict[str, Any]:
    """``lemma`` decided with ``edits`` applied, in a fresh interpreter."""
    spec = json.dumps({"lemma": lemma, "edits": edits, "setup": textwrap.dedent(setup)})
    out = subprocess.run([sys.executable, "-c", _CHILD, spec], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _rank(text: str | None) -> int:
    m = re.search(r"rank (\d+)", text or "")
    assert m, text
    return int(m.group(1))


# --------------------------------------------------------------------------
# Claim (c) is checked: by the step, the base and the Pad-* lemmas for every rank
# --------------------------------------------------------------------------

#: Padded St-Stmt writes • where position 11 of k is in the padding (wrong from rank 12 on).
_UNDEF_INTO_PADDING_11 = """
def rT3_undef_from_11(k, t, v):
    t = as_seq(t)
    return z3.If(z3.And(k.length > 11, k.arr[11] > t.arr[11]), sym.UNDEF, v)
ev.rT3_undef_from_11 = rT3_undef_from_11
"""


def test_a_statement_writing_undef_into_the_padding_from_rank_12_fails_the_steps_claim_c() -> None:
    """• in the padding is allowed by (b); only (c) sees that the unpadded value on Ω(k) is not •.
    Kills: Runs.claims without claim (c) (rT3 WS7), and the domain premise let into the hypotheses
    (``not_paths`` ignored, rT3 WS1: (c) takes the reads' paths, so k within t made it vacuous)."""
    r = decide("Theorem 3 (step, all ranks)", [(
        "core_teil.semantics.eval", "st_stmt", "v = denote(stmt.expr, k, sem)",
        "v = denote(stmt.expr, k, sem); v = v if sem.pad is None else "
        "rT3_undef_from_11(k, replace(sem, pad=None).bounds(sem.typed.gamma[stmt.target]), v)")],
        _UNDEF_INTO_PADDING_11)
    assert r["status"] == "refuted" and "after St-Stmt: Inv (c)" in (r["failed"] or ""), r
    assert _rank(r["counterexample"]) >= 12


def test_an_initial_store_with_undef_in_its_padding_fails_the_bases_claim_c() -> None:
    """GenericInterpretation.guard on a Seq yielding • instead of 0: (b) allows it, (c) does not.
    Kills: the base checking claims (a) and (b) only (rT3 WB3)."""
    r = decide("Theorem 3* (all ranks)", [(
        "proofs.ranks", "GenericInterpretation.guard", "v, sym.ZERO)",
        "v, sym.UNDEF if isinstance(j, Seq) else sym.ZERO)")])
    assert r["status"] == "refuted" and "μ_pad for X : T: Inv (c)" in (r["failed"] or ""), r


def test_div_uncontrolled_fails_pad_div_for_every_rank_at_claim_c() -> None:
    """0/0 = • puts • in the padding: Pad-Div (all ranks) refutes it at (c) (the kill matrix only
    needs the ranked Pad-Div).  Kills rT3 WS7 for the expression steps."""
    done = in_fresh_process(Task("mutant", "div-uncontrolled", "Pad-Div (all ranks)"))
    assert done.result is not None, done.error
    assert done.result.status is Status.REFUTED and "Inv (c)" in (done.result.failed or ""), done.result


_ONE_INTO_PADDING_11 = """
def rT3_one_from_11(k, t, v):
    t = as_seq(t)
    return z3.If(z3.And(k.length > 11, k.arr[11] > t.arr[11]), sym.val(1), v)
ev.rT3_one_from_11 = rT3_one_from_11
"""


@pytest.mark.xfail(strict=True, reason="rT3: Theorem 3 (step, all ranks) leaves 'X = red Y' unknown under a wrong "
                   "St-Stmt (rlimit): its (b) obligation needs hints of its own")
def test_a_reduction_statement_writing_1_into_the_padding_from_rank_12_is_refuted() -> None:
    """St-Stmt writing 1 into the padding from position 11 on, for ``X = red Y`` only (the catalogue's
    mutant is refuted by the first schema, so the red schema is never asked to refute anything)."""
    r = decide("Theorem 3 (step, all ranks)", [(
        "core_teil.semantics.eval", "st_stmt", "v = denote(stmt.expr, k, sem)",
        "v = denote(stmt.expr, k, sem); v = v if sem.pad is None or type(stmt.expr).__name__ != 'Red' else "
        "rT3_one_from_11(k, replace(sem, pad=None).bounds(sem.typed.gamma[stmt.target]), v)")],
        _ONE_INTO_PADDING_11)
    assert r["status"] == "refuted" and "X = red Y" in (r["failed"] or ""), r


_UNDEF_WHERE_BEYOND_IS_UNDEF = """
def rT3_beyond(p, original, v):
    if not isinstance(p, Seq):
        return v
    return z3.If(z3.And(p.length > 11, sym.Value.is_undef(original(p))), sym.UNDEF, v)
ev.rT3_beyond = rT3_beyond
"""


def test_an_initial_store_copying_undef_from_beyond_the_original_from_rank_12_is_refuted() -> None:
    """d-pad-var putting • in the padding where the original read at ``p`` itself (not clamped) is •,
    from rank 12 on: (c) fails (the unpadded value on Ω(k) need not be •); the ranked base cannot
    see it.  The base for every rank answered unknown until its claims searched rank <= 16 for a
    counterexample (Obligation.search)."""
    r = decide("Theorem 3* (all ranks)", [(
        "core_teil.semantics.eval", "d_pad_var", "return guard_each(interp, p, t, v)",
        "return rT3_beyond(p, original, guard_each(interp, p, t, v))")], _UNDEF_WHERE_BEYOND_IS_UNDEF)
    assert r["status"] == "refuted" and "Inv (c)" in (r["failed"] or ""), r


# --------------------------------------------------------------------------
# Inv closes (all ranks): each hole assumption, for each hint set, from Inv as concluded
# --------------------------------------------------------------------------

_HOLE = ("proofs.pad_ranks", "hole_hypotheses")


@pytest.mark.parametrize(("part", "old", "new"), [
    # (a) assumed on the whole padded type: kills closure premises with (a) on T (rT3 WC2)
    ("a", 'out["a"].append(a)',
     'out["a"].append(z3.Implies(indices.within(rd.index, T), P.at(rd.index) == U.at(rd.index)))'),
    # (c) assumed for any probe, in the domain or not: kills closure premises with (c) everywhere (rT3 WC3)
    ("c", 'out["c"] += [omega_form(rd.index, probe, t, T, P, U, indices) for probe in probes]',
     'out["c"] += [z3.Implies(sym.Value.is_undef(P.at(rd.index)), sym.Value.is_undef(U.at(probe))) '
     'for probe in probes]'),
    # (b) as "0 in the padding" for transp's hint set only (arrays=False): kills a closure that
    # checks the default hint set alone (rT3 WC5)
    ("b", 'out["b"].append(b)',
     'out["b"].append(b if indices.arrays else z3.Implies(indices.in_padding(rd.index, t, T), '
     'P.at(rd.index) == sym.ZERO))'),
])
def test_a_hole_assumption_stronger_than_inv_does_not_close(part: str, old: str, new: str) -> None:
    r = decide("Inv closes (all ranks)", [(*_HOLE, old, new)])
    assert r["status"] == "refuted" and f"assumption ({part})" in (r["failed"] or ""), r


# --------------------------------------------------------------------------
# What the steps are built from
# --------------------------------------------------------------------------


def test_the_step_for_every_rank_has_obligations_for_every_statement_schema() -> None:
    """Kills a step that drops a schema (rT3 WS5: the red statement; WS6: transp onto itself), which
    no wrong St-Stmt of the catalogue notices: it is refuted by the first schemata already."""
    labels = [g.label for g in ranks.stmt_schemata()]
    built = {ob.name.split(": after St-Stmt")[0] for ob in pad_ranks.thm3_step_generic_obligations()}
    assert built == set(labels) and len(labels) == 7


#: The premises the rule-derived lemmas need (docs/lemmas.md, "The lemmas" and "Every rank").
NEEDS = {
    "Theorem 3* (all ranks)": {"Theorem 3 (step, all ranks)", "Lemma 6 & 5 (ii)* (all ranks)",
                               "Lemma 4.5 (padded, all ranks)", "St-Seq", "Inv closes (all ranks)"},
    "Theorem 2*": {"Lemma 5 (i)", "Lemma 4.5 (padded, all ranks)", "St-Seq", "Theorem 3* (all ranks)"},
    "Lemma 6 & 5 (ii)* (all ranks)": {"Inv closes (all ranks)", "Pad-Inv Ω form (all ranks)"},
    "Theorem 3 (step, all ranks)": {"Inv closes (all ranks)"},
}


@pytest.mark.parametrize(("lemma", "premise"), [(lem, p) for lem, ps in NEEDS.items() for p in sorted(ps)])
def test_a_rule_derived_lemma_is_not_accepted_without_each_premise_it_needs(lemma: str, premise: str) -> None:
    """The kernel checks only the premises a lemma lists: a premise cut from the list (rT3 P1-P4,
    P6, P7) is no longer needed, and the lemma is accepted with that premise refuted."""
    known = registry.by_name()
    book = Book(dict(known))
    for name, lem in known.items():
        ok = Status.PROVED if lem.expect is Expect.PROVED else Status.REFUTED
        book.results[name] = LemmaResult(name, Status.REFUTED if name == premise else ok, 0.0, 1, lem.expect)
    own = LemmaResult(lemma, Status.PROVED, 0.0, 1) if known[lemma].build is not None else None
    assert not book.conclude(known[lemma], own).accepted


# --------------------------------------------------------------------------
# The forked executor
# --------------------------------------------------------------------------


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """A hang fails the test (SIGALRM interrupts the executor's wait) instead of stalling the suite."""
    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the executor did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _crashing_work(task: Task) -> Done:
    if task.name.startswith("exit"):
        os._exit(3)
    if task.name.startswith("segv"):
        faulthandler.disable()  # no traceback on stderr: the test is the exit status
        ctypes.string_at(0)  # a segmentation fault
    return Done(task, error=f"ran {task.name}")


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_child_that_dies_gives_an_error_result_and_no_result_is_lost_or_duplicated(
        monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    monkeypatch.setattr(run, "work", _crashing_work)
    todo = [Task("lemma", n) for n in ("ok1", "exit1", "segv1", "ok2", "exit2", "ok3")]
    with deadline(60):
        done = list(forked(todo, jobs))
    got = sorted((d.task.name, d.error) for d in done)
    assert got == [("exit1", "the worker died (exit status 3)"), ("exit2", "the worker died (exit status 3)"),
                   ("ok1", "ran ok1"), ("ok2", "ran ok2"), ("ok3", "ran ok3"),
                   ("segv1", f"the worker died (exit status -{signal.SIGSEGV.value})")]


_ACTIVE = mp.get_context("fork").Value("i", 0)
_MOST = mp.get_context("fork").Value("i", 0)
_BARRIER = mp.get_context("fork").Barrier(2)


def _counting_work(task: Task) -> Done:
    import time

    with _ACTIVE.get_lock():
        _ACTIVE.value += 1
        _MOST.value = max(_MOST.value, _ACTIVE.value)
    time.sleep(0.3)  # long enough for a second child, if one were started, to be counted
    with _ACTIVE.get_lock():
        _ACTIVE.value -= 1
    return Done(task)


def _meeting_work(task: Task) -> Done:
    _BARRIER.wait(timeout=30)  # passes only if two children run at once
    return Done(task)


def test_the_executor_runs_at_most_jobs_children_and_uses_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run, "work", _counting_work)
    with deadline(60):
        assert len(list(forked([Task("lemma", str(n)) for n in range(3)], 1))) == 3
    assert _MOST.value == 1
    monkeypatch.setattr(run, "work", _meeting_work)
    with deadline(60):
        assert [d.error for d in forked([Task("lemma", "a"), Task("lemma", "b")], 2)] == ["", ""]
    # execute passes --jobs on
    seen: list[int] = []
    monkeypatch.setattr(run, "forked", lambda todo, jobs: (seen.append(jobs), iter(()))[1])
    run.execute(run.Run(()), [Task("lemma", "x")], 2)
    assert seen == [2]


def test_jobs_1_and_2_give_the_same_verdicts_and_rlimits() -> None:
    names = ["Inv closes (all ranks)", "Pad-Inv Ω form (all ranks)", "Theorem 3* (all ranks)"]
    todo = [Task("lemma", n) for n in names]
    with deadline(120):
        one = {d.task.name: d.result for d in forked(todo, 1)}
        two = {d.task.name: d.result for d in forked(todo, 2)}
    assert all(r is not None and r.status is Status.PROVED for r in one.values())
    def verdicts(done: dict[str, LemmaResult | None]) -> dict[str, tuple[Status, int]]:
        return {n: (r.status, r.rlimit) for n, r in done.items() if r is not None}

    assert verdicts(one) == verdicts(two) and len(verdicts(two)) == 3


def test_in_fresh_process_does_not_inherit_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lemma known only to this process is unknown to a fresh interpreter (a forked one would see it)."""
    only_here = dict(registry.by_name())
    only_here["rT3: only in the parent"] = only_here["Pad-Inv Ω form (all ranks)"]
    monkeypatch.setattr(registry, "by_name", lambda: only_here)
    done = in_fresh_process(Task("lemma", "rT3: only in the parent"))
    assert done.result is None and done.error.startswith("KeyError"), done
