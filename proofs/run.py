"""``make verify``: every lemma, every mutant, the example corpus; a table; one last line.

Work is spread over the machine's cores with ``multiprocessing``: each task in
a process forked from this one (:func:`forked`: Z3's search depends on the
process's history, so a task must not inherit another's), which rebuilds its
lemma from the registry by name (Z3 objects do not pickle) and sends back only
the verdict.  Rule-derived lemmas
(structural induction, induction on statements, corollaries) are concluded
afterwards in this process by :class:`proofs.kernel.Book`.  The last line is
exactly ``verified: L lemmas (A for all ranks), O obligations, mutants killed K/M, S s``; the
exit status is non-zero if a lemma is not accepted, a mutant survives, or the
corpus disagrees with its manifest.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any

from . import corpus, registry, toolchain
from .kernel import (
    EVERY_RANK,
    RANK_BOUND,
    RULES,
    Book,
    Expect,
    Lemma,
    LemmaResult,
    Rule,
    Status,
    by_name,
    check_lemma,
    derived,
    rank_coverage,
)

# --------------------------------------------------------------------------
# Tasks (run in workers)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    kind: str  # "lemma" | "mutant" | "corpus" | "wrong" (wrong proofs, names in paths)
    name: str
    lemma: str = ""
    paths: tuple[str, ...] = ()
    cost: float = 1.0


@dataclass(frozen=True)
class Done:
    task: Task
    result: LemmaResult | None = None
    rechecks: tuple[corpus.Recheck, ...] = ()
    error: str = ""
    wrong: tuple[LemmaResult, ...] = ()


def work(task: Task) -> Done:
    from . import mutants, registry, wrong

    try:
        if task.kind == "lemma":
            return Done(task, check_lemma(registry.by_name()[task.name]))
        if task.kind == "wrong":
            return Done(task, wrong=tuple(wrong.check(name) for name in task.paths))
        if task.kind == "mutant":
            with mutants.applied(mutants.BY_NAME[task.name]):
                return Done(task, _target(task.lemma))
        with_cvc5 = corpus.cvc5_available()
        entries = {e.path: e for e in corpus.entries() or []}
        return Done(task, rechecks=tuple(corpus.recheck(entries[p], with_cvc5) for p in task.paths))
    except Exception as exc:  # a worker must report, never die silently
        return Done(task, error=f"{type(exc).__name__}: {exc}")


def _target(name: str) -> LemmaResult:
    """A mutant's target decided under the mutant: a lemma, a wrong proof (``wrong: …``: does the
    mutated kernel accept it?) or another mutant (``mutant: …``: the mutant is a weakening of
    the lemmas, killed when, with it, that wrong semantics is no longer caught)."""
    from . import mutants, registry, wrong

    if name.startswith(wrong.PREFIX):
        return wrong.check(name)
    if name.startswith(mutants.MUTANT):
        inner = mutants.BY_NAME[name.removeprefix(mutants.MUTANT)]
        t0 = time.perf_counter()
        with mutants.applied(inner):
            results = [_target(t) for t in inner.targets]
        caught = [r.name for r in results if killed(r)]
        if caught:
            return LemmaResult(name, Status.PROVED, time.perf_counter() - t0, len(results), Expect.PROVED, None,
                               None, f"{inner.name} is still caught by {', '.join(caught)}")
        return LemmaResult(name, Status.REFUTED, time.perf_counter() - t0, len(results), Expect.PROVED,
                           ", ".join(inner.targets), f"with this weakening, {inner.name} survives "
                           f"{', '.join(inner.targets)}: the lemma no longer catches it")
    return check_lemma(registry.by_name()[name], stop_at_first=True)


def known_targets(lemmas: Iterable[Lemma], with_wrong: bool) -> set[str]:
    """The targets a run can decide: its lemmas, the wrong proofs, and the mutants whose targets it runs."""
    from . import mutants, wrong

    names = {lem.name for lem in lemmas} | (wrong.names() if with_wrong else set())
    return names | {mutants.MUTANT + m.name for m in mutants.CATALOGUE if any(t in names for t in m.targets)}


# --------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------


@dataclass
class Run:
    lemmas: tuple[Lemma, ...]
    results: dict[str, LemmaResult] = field(default_factory=dict)
    kills: dict[str, dict[str, LemmaResult]] = field(default_factory=dict)
    rechecks: list[corpus.Recheck] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    with_mutants: bool = True
    with_corpus: bool = True
    #: What this run was asked to leave out (``--only``, ``--no-mutants``, ``--no-corpus``): a run
    #: that checked less than everything ends ``partial: …``, never ``verified: …``.
    left_out: tuple[str, ...] = ()
    #: The kernel's corpus of wrong proofs (proofs/wrong.py): each must be rejected.
    with_wrong: bool = False
    wrong: dict[str, LemmaResult] = field(default_factory=dict)


def tasks(lemmas: Sequence[Lemma], with_mutants: bool, with_corpus: bool, with_wrong: bool = False) -> list[Task]:
    from . import mutants, wrong

    out = [Task("lemma", lem.name, cost=lem.cost) for lem in lemmas if lem.own]
    names = known_targets(lemmas, with_wrong)
    if with_wrong:
        every = [w.name for w in wrong.CORPUS]
        out += [Task("wrong", f"wrong proofs {i // 20 + 1}", paths=tuple(every[i:i + 20]), cost=1.0)
                for i in range(0, len(every), 20)]
    if with_mutants:
        costs = {lem.name: lem.cost for lem in lemmas}

        def cost(target: str) -> float:  # what deciding the target costs, so long tasks start first
            inner = mutants.BY_NAME.get(target.removeprefix(mutants.MUTANT))
            if target.startswith(mutants.MUTANT) and inner is not None:
                return sum(cost(t) for t in inner.targets)
            return max(0.5, costs.get(target, 0.3))

        for m in mutants.CATALOGUE:
            out += [Task("mutant", m.name, target, cost=cost(target)) for target in m.targets if target in names]
    if with_corpus:
        paths = [e.path for e in corpus.entries() or []]
        chunk = max(1, len(paths) // 8)
        out += [Task("corpus", f"corpus {i // chunk + 1}", paths=tuple(paths[i:i + chunk]), cost=0.3)
                for i in range(0, len(paths), chunk)]
    return sorted(out, key=lambda t: -t.cost)


class Progress:
    """A bar on stderr (redrawn in place on a terminal, a line per tenth otherwise)."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.tty = total, 0, sys.stderr.isatty()
        self.t0 = time.perf_counter()
        self.last_tenth = -1

    def step(self, what: str) -> None:
        self.done += 1
        width = 30
        filled = width * self.done // max(self.total, 1)
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"{time.perf_counter() - self.t0:5.1f} s  {what[:40]}")
        if self.tty:
            sys.stderr.write("\r" + line.ljust(100))
            if self.done == self.total:
                sys.stderr.write("\n")
        elif (tenth := 10 * self.done // max(self.total, 1)) != self.last_tenth:
            self.last_tenth = tenth
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def execute(run: Run, todo: list[Task], jobs: int) -> None:
    progress = Progress(len(todo))
    if "fork" in mp.get_all_start_methods():
        _collect(run, forked(todo, max(jobs, 1)), progress)
        return
    # No fork (not Linux): one process, or a pool of spawned workers, each running many tasks.
    if jobs <= 1:
        _collect(run, map(work, todo), progress)
        return
    with mp.get_context("spawn").Pool(processes=jobs) as pool:
        _collect(run, pool.imap_unordered(work, todo, chunksize=1), progress)


def forked(todo: Sequence[Task], jobs: int) -> Iterator[Done]:
    """Each task in a process of its own, forked from this one, at most ``jobs`` at a time.

    Z3's search depends on the state of the process it runs in, not only on the formula: the
    same obligation, the same term in a fresh context, took 0.9M of rlimit after one history
    and ran past 8M after another (a worker that had run other lemmas first).  A pool's worker
    runs whichever tasks the scheduler hands it, so a verdict at the rlimit depended on timing.
    Forked from this process, which has built no obligation, every task starts from the same
    state: its outcome is a function of the task (and ``--jobs`` does not change it)."""
    ctx = mp.get_context("fork")
    # What every task imports is imported once, here: a child would import (and build the
    # catalogue of) proofs.mutants again for each task, 7000 page faults each.
    from . import mutants, wrong  # noqa: F401
    pending = list(todo)
    running: dict[Any, tuple[Any, Task]] = {}
    while pending or running:
        while pending and len(running) < jobs:
            task = pending.pop(0)
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(task, send), daemon=True)
            proc.start()
            send.close()
            running[recv] = (proc, task)
        for conn in wait(list(running)):
            proc, task = running.pop(conn)
            try:
                done = conn.recv()
            except EOFError:  # the child died without an answer (a crash, the OOM killer)
                proc.join()
                done = Done(task, error=f"the worker died (exit status {proc.exitcode})")
            conn.close()
            proc.join()
            yield done


def in_fresh_process(task: Task) -> Done:
    """``work(task)`` in a newly spawned interpreter: what a test that decides a lemma near its
    rlimit needs, since a test process has run Z3 on everything before it (see :func:`forked`)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(work, task).result()


def _child(task: Task, conn: Any) -> None:
    conn.send(work(task))
    conn.close()


def _collect(run: Run, outcomes: Iterable[Done], progress: Progress) -> None:
    for done in outcomes:
        t = done.task
        progress.step(t.name if t.kind != "mutant" else f"mutant {t.name}")
        if done.error:
            run.errors.append(f"{t.kind} {t.name} {t.lemma}: {done.error}")
        elif t.kind == "lemma" and done.result is not None:
            run.results[t.name] = done.result
        elif t.kind == "mutant" and done.result is not None:
            run.kills.setdefault(t.name, {})[t.lemma] = done.result
        elif t.kind == "wrong":
            run.wrong.update((r.name, r) for r in done.wrong)
        else:
            run.rechecks.extend(done.rechecks)


def conclude(run: Run) -> None:
    book = Book(by_name(run.lemmas), dict(run.results))
    for lem in derived(run.lemmas):
        book.results[lem.name] = book.conclude(lem, run.results.get(lem.name))
    run.results = book.results


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------


def killed(result: LemmaResult) -> bool:
    """Refuted, vacuous or incomplete (or an expected refutation not refuted); for a wrong proof's
    check: the kernel accepted it.  Never ``unknown``."""
    return result.rejected


def _status(r: LemmaResult | None) -> str:
    if r is None:
        return "not run"
    if r.expect is Expect.REFUTED:
        return "refuted (expected)" if r.accepted else f"{r.status.value} (EXPECTED refuted)"
    return r.status.value


def report(run: Run, seconds: float, out: list[str]) -> tuple[bool, str]:
    from . import mutants

    known = {**registry.by_name(), **{lem.name: lem for lem in run.lemmas}}
    coverage = {lem.name: rank_coverage(lem, known) for lem in run.lemmas}
    w = out.append
    w(f"Core-TeIL meta-theory: {len(run.lemmas)} lemmas over eval.py / typing.py, seed 42")
    solvers = toolchain.versions()
    w(solvers.line())
    for line in toolchain.warning(solvers):
        w(line)
    w(f"(ranks: 'all' proved over shapes of symbolic rank; '<= {RANK_BOUND}' instantiated at every rank up to "
      f"{RANK_BOUND}; a range: checked on instances; '—' the statement has no rank)")
    w("")
    w(f"{'#':>3}  {'lemma':<36} {'paper / report':<45} {'accepted by':<24} {'ranks':<9} {'status':<19} "
      f"{'obl':>5} {'time':>7}")
    w("-" * 156)
    for n, lem in enumerate(run.lemmas, start=1):
        r = run.results.get(lem.name)
        ref = lem.ref if len(lem.ref) <= 45 else lem.ref[:44] + "…"
        obl = r.obligations if r else 0
        secs = f"{r.seconds:6.2f}s" if r else ""
        w(f"{n:>3}  {lem.name:<36} {ref:<45} {lem.rule.value:<24} {coverage[lem.name]:<9} {_status(r):<19} "
          f"{obl:>5} {secs:>7}")
    w("")
    refuted = [lem for lem in run.lemmas if lem.expect is Expect.REFUTED]
    if refuted:
        w("Expected refutations (verbatim claims of the report that are false for Core-TeIL):")
        for lem in refuted:
            r = run.results.get(lem.name)
            w(f"  {lem.name}: {lem.statement}")
            if r is not None and r.counterexample:
                w(f"    counterexample: {r.counterexample}")
        w("")
    bad = [lem for lem in run.lemmas if lem.name not in run.results or not run.results[lem.name].accepted]
    for lem in bad:
        r = run.results.get(lem.name)
        w(f"NOT ACCEPTED: {lem.name} ({_status(r)})")
        if r is not None:
            for part in (r.failed, r.counterexample, r.note):
                if part:
                    w(f"    {part}")
    # -- the kernel's corpus of wrong proofs
    from . import wrong

    wrong_ok = True
    if run.with_wrong:
        # Anything but a definite rejection fails the run (a check that could not decide included).
        fooled = [r for r in run.wrong.values() if r.status is not Status.PROVED]
        missing = [e.name for e in wrong.CORPUS if wrong.PREFIX + e.name not in run.wrong]
        # The corpus checked in turn: each wrong proof is accepted by some mutant of the catalogue
        # (the one removing the check it is about), so it is wrong in the way it says, not also in
        # another way that would keep it rejected if that check went missing.
        unwitnessed = [e.name for e in wrong.CORPUS if run.with_mutants and not any(
            killed(res[wrong.PREFIX + e.name]) for res in run.kills.values() if wrong.PREFIX + e.name in res)]
        wrong_ok = not fooled and not missing and not unwitnessed
        per_rule = ", ".join(f"{rule} {n}" for rule, n in wrong.rules().items())
        w(f"wrong proofs rejected: {len(run.wrong) - len(fooled)}/{len(wrong.CORPUS)} ({per_rule})")
        for r in fooled:
            w(f"  ACCEPTED: {r.name}: {r.counterexample or r.status.value}")
        for name in missing:
            w(f"  NOT RUN: {name}")
        if run.with_mutants:
            w(f"wrong proofs witnessed: {len(wrong.CORPUS) - len(unwitnessed)}/{len(wrong.CORPUS)} "
              "(each accepted by the catalogue mutant that removes the check it is about)")
        for name in unwitnessed:
            w(f"  NO WITNESS: {name}: no mutant makes the kernel accept it (is it wrong in another way too?)")
        w("")
    # -- mutants
    names = known_targets(run.lemmas, run.with_wrong)
    catalogue = [m for m in mutants.CATALOGUE if any(t in names for t in m.targets)] if run.with_mutants else []
    k_count = 0
    if run.kills or catalogue:
        w(f"Kill matrix ({len(catalogue)} one-line mutants of the semantics, the typing rules, the proof kernel, "
          "the padding proofs and core-teil prove's obligations):")
        for m in catalogue:
            res = run.kills.get(m.name, {})
            by = sorted(t for t, r in res.items() if killed(r))  # not in the order the workers finished
            k_count += bool(by)
            cells = "  ".join(f"{t}: {'KILLED' if killed(r) else r.status.value}" for t, r in sorted(res.items()))
            w(f"  {'killed  ' if by else 'SURVIVED'} {m.name:<24} {m.where:<20} {cells}")
            if by:
                r = res[by[0]]
                why = r.counterexample or r.failed or r.note  # vacuous/incomplete say why in failed/note
                if why:
                    w(f"           e.g. {' '.join(why.split())[:150]}")
        w("")
    # -- corpus
    entries = corpus.entries()
    corpus_ok = True
    if entries is None and run.with_corpus:
        # Not a skip: the check this run was asked for could not be made.
        corpus_ok = False
        w(f"Corpus NOT CHECKED: {corpus.MANIFEST} not found (regenerate it with "
          "`python -m core_teil.proving.prove_export`, or run from a source tree or a complete install)")
    elif run.rechecks:
        z3_ok = sum(r.z3 == r.expect for r in run.rechecks)
        line = f"Corpus proofs/obligations/: {len(run.rechecks)} scripts, Z3 agrees with the manifest on {z3_ok}"
        if any(r.cvc5 is not None for r in run.rechecks):
            agree = sum(r.cvc5 == r.expect for r in run.rechecks)
            unknown = sum(r.cvc5 == "unknown" for r in run.rechecks)
            line += f"; cvc5 agrees on {agree}, unknown on {unknown}"
        else:
            line += "; cvc5 not installed"
        w(line)
        for r in run.rechecks:
            if not r.ok:
                corpus_ok = False
                w(f"  DISAGREES: {r.path}: expected {r.expect}, Z3 {r.z3}, cvc5 {r.cvc5}")
        w("")
    for e in run.errors:
        w(f"ERROR: {e}")
    accepted = sum(1 for lem in run.lemmas if lem.name in run.results and run.results[lem.name].accepted)
    obligations = sum(run.results[lem.name].obligations for lem in run.lemmas if lem.name in run.results)
    obligations += sum(1 for r in run.rechecks if r.z3 == r.expect)
    ok = not bad and k_count == len(catalogue) and corpus_ok and wrong_ok and not run.errors
    if not ok:
        w(f"FAILED: {len(bad)} lemma(s) not accepted, {len(catalogue) - k_count} mutant(s) survived"
          + ("" if corpus_ok else ", corpus disagrees")
          + ("" if wrong_ok else ", the kernel accepted a wrong proof (or one is not run or not witnessed)")
          + (f", {len(run.errors)} error(s)" if run.errors else ""))
    # Only a run that proved everything may print a line starting "verified:".
    verdict = ("verified" if not run.left_out else f"partial ({', '.join(run.left_out)})") if ok else "NOT verified"
    every = sum(1 for lem in run.lemmas if coverage[lem.name] == EVERY_RANK
                and lem.name in run.results and run.results[lem.name].accepted)
    last = f"{verdict}: {accepted} lemmas ({every} for all ranks), {obligations} obligations, " \
           f"mutants killed {k_count}/{len(catalogue)}, {seconds:.1f} s"
    return ok, last


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m proofs", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="worker processes")
    parser.add_argument("--only", action="append", default=[], help="lemmas whose name contains this")
    parser.add_argument("--no-mutants", action="store_true")
    parser.add_argument("--no-corpus", action="store_true")
    parser.add_argument("--json", metavar="FILE", help="also write every lemma's outcome (and the solvers) as JSON")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    from . import registry

    lemmas = registry.lemmas()
    if args.only:
        lemmas = tuple(lem for lem in lemmas if any(o in lem.name for o in args.only))
    left_out = tuple(what for what, skipped in (
        (f"only {len(lemmas)} of {len(registry.lemmas())} lemmas", bool(args.only)),
        ("no mutants", args.no_mutants), ("no corpus", args.no_corpus or bool(args.only))) if skipped)
    # Only the lemmas asked for are run, so the corpus (whole-program obligations) is not.
    with_corpus = not args.no_corpus and not args.only
    run = Run(lemmas, with_mutants=not args.no_mutants, with_corpus=with_corpus, left_out=left_out, with_wrong=True)
    execute(run, tasks(lemmas, run.with_mutants, run.with_corpus, run.with_wrong), args.jobs)
    conclude(run)
    out: list[str] = []
    ok, last = report(run, time.perf_counter() - t0, out)
    print("\n".join(out))
    print(last, flush=True)
    if args.json:
        write_json(run, args.json)
    return 0 if ok else 1


def write_json(run: Run, path: str) -> None:
    """Every lemma's outcome, for ``make verify-latest`` to compare two toolchains lemma by lemma."""
    import json

    solvers = toolchain.versions()
    lemmas = {}
    for lem in run.lemmas:
        r = run.results.get(lem.name)
        lemmas[lem.name] = None if r is None else {
            "status": r.status.value, "accepted": r.accepted, "obligations": r.obligations,
            "seconds": round(r.seconds, 3), "rlimit": r.rlimit, "failed": r.failed}
    data = {"solvers": solvers.used, "lemmas": lemmas,
            "mutants": {m: {t: r.status.value for t, r in res.items()} for m, res in run.kills.items()}}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


__all__ = ["RULES", "Rule", "main", "work"]
