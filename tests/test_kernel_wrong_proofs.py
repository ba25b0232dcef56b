"""The proof kernel tested like one: wrong proofs it must reject, wrong rules that accept them.

``proofs/wrong.py`` is a corpus of wrong proofs, at least one per way each
rule of ``proofs/kernel.py`` can be fooled; ``make verify`` runs it.  Here:
every entry is rejected, every mutant of the kernel's rules in the catalogue
makes the kernel accept one of them (so the corpus has teeth), the mutants of
issue 14 are caught by the checks that should catch them, and the mutation
mechanism itself (``Edit``) restores what it changed.
"""

from __future__ import annotations

import pytest
import z3

from proofs import kernel, mutants, registry, wrong
from proofs.kernel import Lemma, Obligation, Status, check_lemma
from proofs.run import Task, killed, work

WRONG_TARGETED = [m for m in mutants.CATALOGUE if any(t.startswith(wrong.PREFIX) for t in m.targets)]
ISSUE_14 = [m for m in mutants.CATALOGUE if m.issue]


@pytest.mark.parametrize("name", [w.name for w in wrong.CORPUS])
def test_every_wrong_proof_is_rejected(name: str) -> None:
    result = wrong.check(name)
    assert result.status is Status.PROVED, result.counterexample
    assert result.note.startswith("rejected (")


def test_the_corpus_covers_every_rule() -> None:
    rules = wrong.rules()
    for rule in ("Z3", "sum induction", "structural induction", "induction on statements", "corollary",
                 "premises", "calculation"):
        assert rules.get(rule, 0) >= 1, rule
    # the kinds of wrongness the issue asks for
    text = " ".join(w.name for w in wrong.CORPUS)
    for kind in ("contradictory", "cannot decide", "missing case", "no obligation", "not monotone",
                 "premise is false", "a step that fails", "no premises"):
        assert kind in text, kind


@pytest.mark.parametrize("mutant", WRONG_TARGETED, ids=lambda m: m.name)
def test_a_wrong_rule_accepts_a_wrong_proof(mutant: mutants.Mutant) -> None:
    targets = [t for t in mutant.targets if t.startswith(wrong.PREFIX)]
    with mutants.applied(mutant):
        fooled = [t for t in targets if wrong.check(t).status is Status.REFUTED]
    assert fooled, f"{mutant.name}: the corpus does not notice this wrong rule"
    assert all(wrong.check(t).status is Status.PROVED for t in targets), "the kernel was not restored"


@pytest.mark.parametrize("mutant", ISSUE_14, ids=lambda m: m.name)
def test_each_survivor_of_issue_14_is_killed_by_its_check(mutant: mutants.Mutant) -> None:
    results = [work(Task("mutant", mutant.name, target)) for target in mutant.targets]
    assert not [d.error for d in results if d.error]
    assert any(d.result is not None and killed(d.result) for d in results), \
        [(d.task.lemma, d.result and d.result.status) for d in results]


@pytest.mark.parametrize("name", ["Inv closes", "PadSum", "Padded extents (Definition 7)", "Assume translation",
                                  "Definition 4 (Z3 = numpy)", "prove: padded red past ⌈n⌉",
                                  "prove: initial store padded with 1", "prove: red i with a wrong bound",
                                  "prove: stuck semantics"])
def test_the_new_checks_pass_on_the_real_code(name: str) -> None:
    result = check_lemma(registry.by_name()[name])
    assert result.accepted, (result.status, result.failed, result.counterexample)


# --------------------------------------------------------------------------
# Vacuity: hypotheses apart from the goal
# --------------------------------------------------------------------------


def test_the_goal_may_be_empty_but_the_context_may_not() -> None:
    x = z3.Int("x")
    # "for every x >= 1 in an empty range ..." is true, not vacuous: the range is part of the goal
    empty_range = Lemma("empty range", "-", "-", lambda: [Obligation("x", (x >= 1,), z3.And(x < 0, x > 0))])
    assert check_lemma(empty_range).status is Status.PROVED
    contradiction = Lemma("contradiction", "-", "-", lambda: [Obligation("x", (x >= 1, x < 0), x > 0)])
    result = check_lemma(contradiction)
    assert result.status is Status.VACUOUS and "contradictory" in (result.counterexample or "")


def test_uses_join_the_vacuity_check_only_when_the_hypotheses_mention_sum() -> None:
    from core_teil.symbolic import SUM, ZERO
    from proofs import sums

    h, n = z3.Const("h", sums.VArr), z3.Int("n")
    free = Obligation("free", (n >= 1,), n < 1, uses=(SUM(h, n) == ZERO,))
    assert free.context() == free.hypotheses
    tied = Obligation("tied", (SUM(h, n) == ZERO,), n < 1, uses=(SUM(h, n) != ZERO,))
    assert len(tied.context()) == 2


# --------------------------------------------------------------------------
# The mutation mechanism
# --------------------------------------------------------------------------


def test_an_edit_swaps_the_code_and_restores_it_even_on_error() -> None:
    m = mutants.BY_NAME["sum-no-monotonicity"]
    original = kernel.sum_induction.__code__
    x = z3.Int("x")
    with pytest.raises(RuntimeError), mutants.applied(m):
        assert kernel.sum_induction.__code__ is not original
        # the change is seen through every reference: the function object itself is changed
        obligations = kernel.sum_induction("t", x, z3.IntVal(0), lambda k: k >= 0, lambda k: k >= 0)
        assert [o.name for o in obligations] == ["t: base", "t: step n -> n+1"]
        raise RuntimeError
    assert kernel.sum_induction.__code__ is original


def test_an_edit_that_does_not_apply_is_an_error() -> None:
    stale = mutants.Mutant("stale", "-", "-", (mutants.Edit(kernel.sum_induction, "no such line", "x"),), ())
    original = kernel.sum_induction.__code__
    with pytest.raises(ValueError, match="occurs 0 times"), mutants.applied(stale):
        pass
    assert kernel.sum_induction.__code__ is original


def test_an_edited_method_keeps_its_closure() -> None:
    # a method that calls super() closes over __class__: the edited code must too
    from proofs.schema import ProofInterpretation

    edit = mutants.Edit(ProofInterpretation.ceil, "self.ceil_facts.append(n <= c)", "self.ceil_facts.append(n < c)")
    m = mutants.Mutant("ceil", "-", "-", (edit,), ())
    with mutants.applied(m):
        interp = ProofInterpretation(None)  # type: ignore[arg-type]
        assert interp.ceil(z3.Int("n"), 4) is not None  # the concrete branch calls super().ceil
        interp.ceil(z3.Int("n"), z3.Int("M"))
        assert "<" in str(interp.ceil_facts[-1]) and "<=" not in str(interp.ceil_facts[-1])


def test_an_edit_of_a_file_changed_since_its_import_is_an_error(tmp_path, monkeypatch) -> None:
    # another helper editing the file while make verify runs must not turn a mutant into a
    # change of some other line
    import importlib
    import time

    (tmp_path / "edited_meanwhile.py").write_text("def f(x):\n    return x + 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("edited_meanwhile")
    time.sleep(0.01)
    (tmp_path / "edited_meanwhile.py").write_text("def f(y, z=0):\n    return max(y, z) * 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="changed since it was imported"):
        mutants.Edit(module.f, "* 2", "* 3").code()
