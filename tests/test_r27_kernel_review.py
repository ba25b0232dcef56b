"""Outside review r27 of the kernel owning the statements (62395e5): its surviving mutants,
each killed here by a check of the one thing it changes, and its two accepted wrong proofs
(a recursive definition without a model, statements keyed by printed text), which are now in
``proofs/wrong.py`` with their witnesses."""

from __future__ import annotations

import dataclasses

import pytest
import z3

from core_teil.semantics.symbolic import Value
from proofs import kernel, mutants, sums, wrong
from proofs.kernel import Obligation, SumStatement, alpha_equal

A, B, C, M, P, Q = z3.Ints("a!r27 b!r27 c!r27 m!r27 p!r27 q!r27")
V = z3.Const("v!r27", Value)


def test_alpha_equal_renames_bound_variables_only() -> None:
    assert alpha_equal(z3.ForAll([M], M <= 1), z3.ForAll([P], P <= 1))
    assert alpha_equal(z3.ForAll([A], z3.Exists([B], A < B)), z3.ForAll([P], z3.Exists([Q], P < Q)))
    assert alpha_equal(z3.Lambda([M], M + 1), z3.Lambda([P], P + 1))


@pytest.mark.parametrize("left, right", [
    (z3.ForAll([M], M <= 1), z3.Exists([M], M <= 1)),                   # kind: ∀ is not ∃
    (z3.ForAll([M], M >= 0), z3.Exists([M], M >= 0)),
    (z3.Lambda([M], M >= 0), z3.ForAll([M], M >= 0)),                   # λ is not ∀
    (z3.ForAll([M], M <= 1), z3.ForAll([M], M <= 0)),                   # bodies compared
    (z3.ForAll([C], z3.ForAll([M], M + C == M)),                        # the inner binder takes
     z3.ForAll([C], z3.ForAll([P, Q], Q + P == Q))),                    # over c's index
    (z3.ForAll([M], z3.BoolVal(True)), z3.ForAll([z3.Real("m!r27")], z3.BoolVal(True))),  # sorts
    (Value.is_undef(V), Value.is_val(V)),                               # both recognizers named "is"
    (M + 1, M - 1),
    (M, P),
])
def test_alpha_equal_refuses_what_is_no_renaming(left: z3.ExprRef, right: z3.ExprRef) -> None:
    assert not alpha_equal(left, right)
    assert not alpha_equal(right, left)


def test_a_statement_refuses_its_bound_in_the_requirements() -> None:
    real = sums.ABSORB.terms()
    with pytest.raises(ValueError, match="do not mention"):
        dataclasses.replace(real, requires=(real.n >= 5,))
    with pytest.raises(ValueError, match="do not mention"):
        dataclasses.replace(real, requires=(z3.ForAll([M], real.n >= M),))


def test_every_part_of_a_statement_is_in_its_key() -> None:
    real = sums.ABSORB.terms()
    changed = [dataclasses.replace(real, requires=real.requires[:1]),
               dataclasses.replace(real, lo=real.lo + 1),
               dataclasses.replace(real, premise=z3.BoolVal(False)),
               dataclasses.replace(real, conclusion=z3.Not(real.conclusion)),
               dataclasses.replace(real, requires=(*real.requires[1:], real.requires[0]))]
    keys = {s.key for s in changed}
    assert real.key not in keys and len(keys) == len(changed)
    # a requirement moved into the premise is another statement's part
    moved = dataclasses.replace(real, requires=real.requires[:1], premise=real.requires[1])
    assert moved.key != real.key


@pytest.mark.parametrize("left, right", [
    (z3.IntVal(1), z3.IntVal(2)),                                        # numerals by value
    (z3.RealVal("1/2"), z3.RealVal("1/3")),
    (z3.StringVal("ab"), z3.StringVal("cd")),                            # a value Z3 keeps internal
    (z3.Function("+", z3.IntSort(), z3.IntSort(), z3.IntSort())(A, B), A + B),  # by kind, not name
    (z3.Bool("true"), z3.BoolVal(True)),
    (z3.ForAll([M], M == M), z3.substitute(z3.ForAll([M], M == P), (P, M))),     # bound, not free m
    (z3.Int("x!r27"), z3.Real("x!r27")),                                 # by sort
    (z3.ForAll([A, B], A < B), z3.ForAll([A, B], B < A)),                # by de Bruijn index
    (z3.ForAll([A], A >= 0), z3.Exists([A], A >= 0)),                    # by quantifier
    (z3.Lambda([A], A >= 0), z3.ForAll([A], A >= 0)),
    (z3.ForAll([A], z3.BoolVal(True)), z3.ForAll([z3.Real("a!r27")], z3.BoolVal(True))),  # binder sorts
    (z3.Extract(7, 0, z3.BitVec("v!r27", 16)), z3.Extract(8, 1, z3.BitVec("v!r27", 16))),  # by parameters
])
def test_digest_tells_apart_terms_that_print_alike(left: z3.ExprRef, right: z3.ExprRef) -> None:
    assert kernel.digest([left]) != kernel.digest([right])
    assert kernel.digest([left]) == kernel.digest([left])


def test_a_statement_refuses_parts_of_the_wrong_sort() -> None:
    real = sums.ABSORB.terms()
    with pytest.raises(ValueError, match="the range is an integer"):
        dataclasses.replace(real, lo=z3.BoolVal(True))
    with pytest.raises(ValueError, match="the range is an integer"):
        dataclasses.replace(real, premise=z3.IntVal(1))
    with pytest.raises(ValueError, match="the range is an integer"):
        dataclasses.replace(real, conclusion=z3.IntVal(1))
    with pytest.raises(ValueError, match="the range is an integer"):
        dataclasses.replace(real, requires=(*real.requires, z3.IntVal(1)))


def test_an_instance_is_recorded_with_the_ways_that_justify_it_only() -> None:
    # The same formula is an instance of a statement P and, unproved, a cut conclusion of
    # Sum-Congruence: the lemma's instances must name P alone (its key is what is checked).
    h1, h2 = sums._arrays("h1!r27", "h2!r27")
    n = z3.Int("n!r27")
    cut = sums.CONGRUENCE.cut((h1, h2), n)
    hyps = (z3.IntVal(0) >= 0, z3.BoolVal(True))
    steps, _ = kernel.calculation("r27", hyps, n, [(n, (cut,))])
    via_cut = steps[-1].uses[0]
    p = SumStatement("P!r27", (), z3.Int("k!r27"), z3.IntVal(0), (), z3.BoolVal(True), cut.conclusion)
    via_p = p.instance(kernel.SUMREC, (), z3.IntVal(0))
    assert via_p.eq(via_cut)
    found: set = set()
    ob = Obligation("uses it", (), z3.BoolVal(False), uses=(via_p,))
    assert kernel.unjustified(ob, ("P!r27", sums.CONGRUENCE.name), {}, found) is None
    assert found == {(("P!r27", p.key),)}


def test_a_recursive_definition_other_than_sumrec_is_refused() -> None:
    lemmas = wrong._definition_without_a_model()
    result = kernel.decide(lemmas)[lemmas[0].name]
    assert not result.accepted and "recursive definition of g!wrong" in result.note
    # the sum laws themselves rely on SUMrec's, which is trusted
    assert kernel.decide([sums.DEFINED.lemma()])[sums.DEFINED.name].accepted


@pytest.mark.parametrize("where", ["goal", "goal under a binder", "hypothesis under a binder",
                                   "use under a binder"])
def test_a_foreign_definition_is_found_wherever_it_occurs(where: str) -> None:
    g, k = wrong._no_model(), z3.Int("k!r27")
    x = z3.Int(f"x!r27!{where}")
    hidden = {"goal": g(0) == 0, "goal under a binder": z3.ForAll([k], g(k) == 0)}.get(where, z3.BoolVal(False))
    hyps: tuple[z3.BoolRef, ...] = (x >= 1,)
    if where == "hypothesis under a binder":
        hyps = (x >= 1, z3.Or(x >= 0, z3.ForAll([k], g(k) == 0)))
    ob = Obligation(where, hyps, z3.And(x < 2, z3.Not(hidden)))
    if where == "use under a binder":
        ob = dataclasses.replace(ob, uses=(z3.ForAll([k], g(k) == 0),))
    assert "recursive definition of g!wrong" in (kernel._Definitions().foreign(ob) or "")
    assert kernel._Definitions().foreign(dataclasses.replace(ob, hypotheses=(x >= 1,), goal=x < 2, uses=())) is None


def test_statements_printed_alike_have_other_keys() -> None:
    lemmas = wrong._statement_printed_alike()
    result = kernel.decide(lemmas)[lemmas[0].name]
    assert not result.accepted and "not the lemma of that name" in (result.failed or "")


def test_restore_forgets_a_way_added_to_a_formula_already_vouched_for() -> None:
    f = sums.ABSORB.instance(kernel.SUMREC, (sums._arrays("h!r27")[0], z3.IntVal(1)), z3.Int("n!r27"))
    saved = kernel.registries()
    kernel._justify(f, "Not a lemma!r27", (), "no key")  # appended to f's existing list of ways
    assert "Not a lemma!r27" in {j.premise for j in kernel._ways(f)}
    kernel.restore(saved)
    assert {j.premise for j in kernel._ways(f)} == {sums.ABSORB.name}


def test_a_mutant_leaves_no_vouched_formula_behind() -> None:
    # review r27: a mutant's registrations made a later wrong proof pass in the same process
    name = "Z3: the claim as a use"
    with mutants.applied(mutants.BY_NAME["renaming-unchecked"]):
        assert wrong.check(wrong.PREFIX + "Z3: a use renamed into the claim").status is kernel.Status.REFUTED
    assert wrong.check(wrong.PREFIX + name).status is kernel.Status.PROVED
