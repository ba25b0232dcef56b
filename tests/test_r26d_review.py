"""Outside adversarial review r26d of a2affaa (the kernel checks its uses).

Each test builds a wrong proof with the public API (Lemma, Obligation, SumLaw, kernel.closed,
kernel.renamed, kernel.calculation) and asserts the kernel does NOT accept it.  Every test
fails on a2affaa.  The claim is always false: ``x >= 1 |- x >= 2`` (x = 1), or similar.
"""

from __future__ import annotations

import dataclasses

import pytest
import z3

from core_teil.semantics.symbolic import SUM
from proofs import kernel, sums
from proofs.kernel import Lemma, Obligation, decide

X = z3.Int("x!r26d")
Y = z3.Int("y!r26d")
Z = z3.Int("z!r26d")
H = z3.Const("h!r26d", sums.VArr)


def _accepted(target: Lemma, *others: Lemma) -> bool:
    return decide([target, *others])[target.name].accepted


def _false_claim(*uses: z3.BoolRef) -> Obligation:
    """x >= 1 |- x >= 2 (false at x = 1), with ``uses``."""
    return Obligation("x >= 1 |- x >= 2", (X >= 1,), X < 2, uses=tuple(uses))


def _fresh(test: str) -> None:
    """A variable of the test's own: the kernel's registry is global, so a formula one test
    registers must not stand in for another test's."""
    global X, Y, Z
    X, Y, Z = (z3.Int(f"{v}!r26d!{test}") for v in "xyz")


def test_adhoc_sumlaw_with_a_proved_laws_name_registers_a_false_instance() -> None:
    _fresh("adhoc_sumlaw_with_a_")
    # SumLaw.instance registers whatever its premise/conclusion compute under self.name.
    fake = dataclasses.replace(sums.ABSORB, premise=lambda S, h, m0, n: z3.BoolVal(True),
                               conclusion=lambda S, h, m0, n: X >= 2, requires=lambda h, m0: [],
                               lo=lambda h, m0: z3.IntVal(0))
    use = fake.instance(SUM, (H, z3.IntVal(1)), z3.IntVal(0))  # = (0 >= 0 ∧ True) -> x >= 2
    lem = Lemma("r26d adhoc law", "wrong", "-", lambda: [_false_claim(use)], premises=(sums.ABSORB.name,))
    assert not _accepted(lem, sums.ABSORB.lemma())


def test_a_statement_built_under_a_laws_name_has_another_key() -> None:
    # was: kernel.instance(name, key, formula) registered any formula (the public call is gone;
    # an instance is made from a SumStatement, and carries that statement's key)
    _fresh("statement_under_a_la")
    real = sums.ABSORB.terms()
    fake = dataclasses.replace(real, requires=(), conclusion=X >= 2)  # (1 >= 1 ∧ True) -> x >= 2
    assert fake.key != real.key
    use = fake.instance(SUM, (H, z3.IntVal(1)), z3.IntVal(1))
    lem = Lemma("r26d fake statement", "wrong", "-", lambda: [_false_claim(use)], premises=(sums.ABSORB.name,))
    result = decide([lem, sums.ABSORB.lemma()])[lem.name]
    assert not result.accepted and "that is not the lemma of that name" in result.failed


def test_an_instance_is_only_for_sum_or_sumrec() -> None:
    # a law proved for SUMrec says nothing about another function of the same sort
    other = z3.Function("other!r26d", sums.VArr, z3.IntSort(), sums.Value)
    with pytest.raises(ValueError, match="SUMrec and for SUM"):
        sums.ABSORB.instance(other, (H, z3.IntVal(1)), X)


def test_a_statement_substitutes_for_distinct_constants_only() -> None:
    real = sums.ABSORB.terms()
    with pytest.raises(ValueError, match="distinct constants"):
        dataclasses.replace(real, params=(real.params[0], real.params[0]))
    with pytest.raises(ValueError, match="distinct constants"):
        dataclasses.replace(real, params=(real.params[0], real.params[1] + 1))
    with pytest.raises(ValueError, match="do not mention"):
        dataclasses.replace(real, lo=real.n)


def test_the_law_is_proved_from_the_statement_the_key_names() -> None:
    # A law whose functions answer differently from call to call: the key its result carries is
    # that of the statement its obligations were built from, not of whatever another call made.
    _fresh("law_proved_from_the_")
    mode = ["fake"]

    def conclusion(S, h, m0, n):
        return sums.IS_UNDEF(S(h, n)) if mode[0] == "real" else z3.BoolVal(False)

    law = dataclasses.replace(sums.ABSORB, conclusion=conclusion)
    use = law.instance(SUM, (H, z3.IntVal(1)), X)  # (h(1) = • ∧ x >= 1) -> False
    user = Lemma("r26d shifting law", "wrong", "-", lambda: [
        Obligation("h(1) = •, x >= 1 |- x >= 2", (sums.IS_UNDEF(H[1]), X >= 1), X < 2, uses=(use,))],
        premises=(law.name,))
    mode[0] = "real"
    results = decide([user, law.lemma()])
    assert results[law.name].accepted and results[law.name].key == law.terms().key
    assert not results[user.name].accepted and "not the lemma of that name" in results[user.name].failed
    mode[0] = "fake"
    assert not decide([law.lemma()])[law.name].accepted  # Σ = False is not proved


def test_renamed_with_a_normal_that_is_no_renaming() -> None:
    _fresh("renamed_with_a_norma")
    real = sums.ABSORB.instance(SUM, (H, z3.IntVal(1)), X)  # a genuine instance
    with pytest.raises(ValueError, match="more than the names of bound variables"):
        kernel.renamed(real, lambda f: X >= 2)  # "normal form" = the claim
    lem = Lemma("r26d renamed", "wrong", "-", lambda: [_false_claim(kernel.renamed(real, lambda f: X >= 2))],
                premises=(sums.ABSORB.name,))
    assert not _accepted(lem, sums.ABSORB.lemma())


def test_renamed_accepts_a_renaming_of_bound_variables() -> None:
    _fresh("renamed_accepts_a_re")
    m, k = z3.Int("m!r26d"), z3.Int("k!r26d")
    real = kernel.closed([m], sums.ABSORB.instance(SUM, (H, m), X))
    out = kernel.renamed(real, lambda f: z3.ForAll([k], z3.substitute_vars(f.body(), k)))
    assert not out.eq(real) and kernel.alpha_equal(out, real)


@dataclasses.dataclass(frozen=True)
class _FakeUse:
    """A cut-shaped object (with the right name and key) whose conclusion is no instance."""

    name: str = sums.ABSORB.name
    key: str = dataclasses.field(default_factory=sums.ABSORB.key)
    premise: z3.BoolRef = dataclasses.field(default_factory=lambda: z3.BoolVal(True))
    conclusion: z3.BoolRef = dataclasses.field(default_factory=lambda: X >= 2)


@pytest.mark.parametrize("how", ["object", "copy"])
def test_cut_rule_refuses_a_cut_the_kernel_did_not_make(how: str) -> None:
    _fresh(f"cut_rule_refuses_{how}")
    def build():
        genuine = sums.ABSORB.cut((H, z3.IntVal(1)), X)
        fake = _FakeUse() if how == "object" else dataclasses.replace(genuine, premise=z3.BoolVal(True),
                                                                      conclusion=X >= 2)
        steps, _ = kernel.calculation("fake use", (X >= 1,), X, [(X, [fake])])
        yield from steps  # premise: ¬True (unsat), step: x ≠ x (unsat)
        yield _false_claim(*steps[-1].uses)  # the conclusion the cut rule would register
    lem = Lemma("r26d fake Use", "wrong", "-", build, premises=(sums.ABSORB.name,))
    result = decide([lem, sums.ABSORB.lemma()])[lem.name]
    assert not result.accepted and "no cut of a sum law" in (result.counterexample or "")


def test_cut_rule_normal_that_hides_the_step() -> None:
    _fresh("cut_rule_normal_that")
    def hide(f: z3.BoolRef) -> z3.BoolRef:  # "normal form" of every disequation: False
        if z3.is_distinct(f) or (z3.is_not(f) and z3.is_eq(f.arg(0))):
            return z3.BoolVal(False)
        return f

    def build():
        steps, links = kernel.calculation("hidden", (X >= 1,), X, [(X + 1, [])], normal=hide)
        yield from steps  # step goal normal(x ≠ x+1) = False: "proved"; link x = x+1 registered
        yield _false_claim(*links)
    assert not _accepted(Lemma("r26d normal hides step", "wrong", "-", build))


def test_link_used_under_other_hypotheses() -> None:
    _fresh("link_used_under_othe")
    # The link y = 1 holds under its step's hypothesis y = 1 only; it is then used where y >= 0.
    def build():
        steps, links = kernel.calculation("under y = 1", (Y == 1,), Y, [(z3.IntVal(1), [])])
        yield from steps
        yield Obligation("y >= 0 |- y = 1", (Y >= 0,), Y != 1, uses=tuple(links))
    result = decide([Lemma("r26d link elsewhere", "wrong", "-", build)])["r26d link elsewhere"]
    assert not result.accepted and result.status is kernel.Status.REFUTED


def test_closed_over_a_variable_the_step_hypotheses_constrain() -> None:
    _fresh("closed_over_a_variab")
    # The link y = 1 (proved under y = 1), closed over y: ∀y. y = 1, i.e. False.
    def build():
        steps, links = kernel.calculation("under y = 1", (Y == 1,), Y, [(z3.IntVal(1), [])])
        yield from steps
        yield Obligation("y = 1 |- z < 0", (Y == 1,), Z >= 0, uses=(kernel.closed([Y], links[0]),))
    assert not _accepted(Lemma("r26d closed link", "wrong", "-", build))


def test_proved_obligation_ids_are_reused_after_garbage_collection() -> None:
    _fresh("proved_obligation_id")
    # ``proved`` holds id()s of obligations the kernel no longer keeps alive; a later step
    # obligation (never discharged, and false) can get one of those ids.
    def build():
        freed: set[int] = set()
        for i in range(200):
            ob = Obligation(f"trivial {i}", (X >= 1,), X < 0)
            freed.add(id(ob))
            yield ob
            del ob  # check_lemma drops it at its next iteration
        for _ in range(2000):
            steps, links = kernel.calculation("false step", (X >= 1,), X, [(X + 1, [])])
            if id(steps[-1]) in freed:
                yield _false_claim(*links)  # x = x + 1 as a use; its step never discharged
                return
        yield Obligation("no id reused (test inconclusive)", (X >= 1,), X >= 1)  # sat: refuted
    assert not _accepted(Lemma("r26d id reuse", "wrong", "-", build))


# --------------------------------------------------------------------------
# The survivors of r26d's mutants (M1, M2, M5, M9, M11): genuine instances and links, each
# used where the kernel must still say no
# --------------------------------------------------------------------------


def _absorbed(test: str) -> tuple[tuple[z3.BoolRef, ...], z3.BoolRef]:
    """Hypotheses h(1) = •, n >= 1 and the goal "Σ_{1..n} h is not •": refuted by Sum-Absorb."""
    _fresh(test)
    return (sums.IS_UNDEF(H[1]), X >= 1), z3.Not(sums.IS_UNDEF(SUM(H, X)))


@pytest.mark.parametrize("how", ["instance", "closed", "renamed"])
def test_an_instance_of_a_lemma_not_named_as_a_premise_is_no_use(how: str) -> None:
    # M1 (premise names unchecked), M9 (renamed drops the lemma), M11 (closed drops it): each
    # would accept an instance of Sum-Absorb that the lemma does not name
    hyps, goal = _absorbed(f"unnamed_{how}")
    w = z3.Int(f"w!r26d!{how}")
    use = {"instance": lambda: sums.ABSORB.instance(SUM, (H, z3.IntVal(1)), X),
           "closed": lambda: kernel.closed([w], sums.ABSORB.instance(SUM, (H, w), X)),
           "renamed": lambda: kernel.renamed(sums.ABSORB.instance(SUM, (H, z3.IntVal(1)), X), lambda f: f)}[how]
    named = Lemma(f"r26d named {how}", "wrong", "-", lambda: [Obligation("absorbed", hyps, goal, uses=(use(),))],
                  premises=(sums.ABSORB.name,))
    unnamed = Lemma(f"r26d unnamed {how}", "wrong", "-",
                    lambda: [Obligation("absorbed", hyps, goal, uses=(use(),))])
    assert _accepted(named, sums.ABSORB.lemma())  # the same use, with its premise named
    result = decide([unnamed, sums.ABSORB.lemma()])[unnamed.name]
    assert not result.accepted and "not named as a premise" in result.note


def test_a_link_whose_step_is_never_discharged_is_no_use() -> None:
    # M2 (needs unchecked), M5 (a link registered without its step): the false link x = x + 1
    # is used, and its step obligation is never yielded
    _fresh("link_never_discharged")
    steps, links = kernel.calculation("x = x + 1", (X >= 1,), X, [(X + 1, [])])
    lem = Lemma("r26d undischarged link", "wrong", "-", lambda: [_false_claim(*links)])
    result = decide([lem])[lem.name]
    assert not result.accepted and "has not proved" in result.note
    with_steps = Lemma("r26d discharged link", "wrong", "-", lambda: [*steps, _false_claim(*links)])
    assert not _accepted(with_steps)  # its step is refuted (x != x + 1)
