"""``core-teil equiv``'s counterexample search and replay (core_teil/proving/equiv_search.py),
from the survivors of the second independent mutant review (issue 13).

* with ``--pad M`` a counterexample is replayed in the *padded* semantics of both programs;
* a counterexample that falls back to the inputs the engine first showed carries *their* exact values;
* the dependency cone of an output that is an unwritten input, and of the second program, is kept
  when shrinking (else the shrunk inputs lose the difference and hundreds of random values are shown);
* the search starts at the least extents the assumptions allow (1 when they allow it);
* exact values that are not integers are shown as ``p/q (≈ x)``;
* the search's deterministic budgets (exact steps, runs, expensive shapes) are enforced, by counters.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from core_teil.lang.typing import check_program
from core_teil.proving import equiv_search
from core_teil.proving.equiv import Scope, replayed


def _arrays(inputs: dict[str, Any]) -> dict[str, np.ndarray]:
    """A counterexample's inputs (nested lists, None for •) as float arrays (NaN for •)."""
    out = {}
    for x, v in inputs.items():
        arr = np.array(v if v is not None else math.nan, dtype=object)
        out[x] = np.where(np.equal(arr, None), math.nan, arr).astype(float)
    return out


# --------------------------------------------------------------------------
# The replay is padded when equiv is asked about padded runs (review R08, R02)
# --------------------------------------------------------------------------

#: Σ_i S·X[i] against Σ_i X[i]: at S = inf the padded run of P meets inf · 0 in the padding (NaN),
#: which the reference engine refuses (eval.PaddingUnsound: Theorem 3 is about real values); the
#: unpadded runs give inf and 6.
PAD_HEAD = "param n\ninput alloc X : [n]\ninput alloc S : []\noutput alloc Y : []\n"
PAD_P, PAD_Q = PAD_HEAD + "Y = red (mul S X)\n", PAD_HEAD + "Y = red X\n"
PAD_INPUTS = {"X": np.array([1.0, 2.0, 3.0]), "S": np.array(math.inf)}


def test_the_replay_runs_the_padded_semantics() -> None:
    """A difference the unpadded runs show but the padded runs do not (here: one padded run is
    refused) is no counterexample to a claim about padded runs: the replay says no.  Replaying
    unpadded (R08) would report it; a replay that went on when only one run was refused (R02)
    would index a missing result."""
    p, q = ct.parse(PAD_P, "p.teil"), ct.parse(PAD_Q, "q.teil")
    params = {"n": 3}
    with pytest.raises(ct.TeilError, match="infinite value met the zero padding"):
        ct.evaluate(p, PAD_INPUTS, params, pad=2)
    assert equiv_search.replay(p, q, params, params, PAD_INPUTS, "Y", (), None) == ("inf", "6")
    assert equiv_search.replay(p, q, params, params, PAD_INPUTS, "Y", (), 2) is None
    assert equiv_search.replay(q, p, params, params, PAD_INPUTS, "Y", (), 2) is None
    found = equiv_search.Found("Y", (), params, PAD_INPUTS, ("•", "6"), 2, PAD_INPUTS, ("•", "6"))
    cex, why = replayed(found, p, q)
    assert cex is None and "did not replay" in why
    cex, _ = replayed(dataclasses.replace(found, pad=None), p, q)
    assert cex is not None and (cex.value_p, cex.value_q) == ("inf", "6") and cex.pad is None


def test_with_pad_every_reference_run_of_search_and_replay_is_padded(monkeypatch: pytest.MonkeyPatch) -> None:
    """equiv --pad 2 on a pair that differs: the reference engine is only ever asked for padded
    runs (the search's and the replay's), and the counterexample replays padded."""
    real = equiv_search.reference
    pads: list[int | None] = []

    def engine(prog, inputs, pad, params=None):  # type: ignore[no-untyped-def]
        pads.append(pad)
        return real(prog, inputs, pad, params)

    monkeypatch.setattr(equiv_search, "reference", engine)
    src = "param n\ninput alloc X : [n, n]\noutput alloc Y : [n, n]\nY = {}\n"
    p, q = ct.parse(src.format("X"), "p.teil"), ct.parse(src.format("transp 1 X"), "q.teil")
    report = ct.equiv(p, q, pad=2)
    assert report.exit_code == 1, report.render()
    cex = report.outputs[0].counterexample
    assert cex is not None and cex.pad == 2 and "padded to multiples of 2" in report.render()
    assert pads and set(pads) == {2}
    inputs = _arrays(cex.inputs)
    idx = tuple(i - 1 for i in cex.index)
    a = ct.evaluate(p, inputs, cex.params, pad=2)["Y"][idx]
    b = ct.evaluate(q, inputs, cex.params, pad=2)["Y"][idx]
    assert (str(int(a)), str(int(b))) == (cex.value_p, cex.value_q) and a != b


# --------------------------------------------------------------------------
# The exact values reported belong to the inputs reported (review R07)
# --------------------------------------------------------------------------


def test_a_fallback_counterexample_reports_the_exact_values_of_its_own_inputs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine that shows no difference once an input holds a 0: the shrunk inputs do not replay,
    the unshrunk ones are reported, and the exact values printed with them must be theirs
    (not those of the shrunk inputs, which are not shown)."""
    real = equiv_search.reference

    def engine(prog, inputs, pad, params=None):  # type: ignore[no-untyped-def]
        out = real(prog, inputs, pad, params)
        if out is not None and any((np.asarray(a) == 0).any() for a in inputs.values()):
            return {k: np.zeros_like(v) for k, v in out.items()}
        return out

    monkeypatch.setattr(equiv_search, "reference", engine)
    src = "param n\ninput alloc X : [n]\ninput alloc Z : [n]\noutput alloc Y : [n]\nY = {}\n"
    p, q = ct.parse(src.format("mul X Z"), "p.teil"), ct.parse(src.format("mul X X"), "q.teil")
    report = ct.equiv(p, q)
    assert report.exit_code == 1, report.render()
    cex = report.outputs[0].counterexample
    inputs = _arrays(cex.inputs)
    assert all((a != 0).all() for a in inputs.values())  # the unshrunk inputs
    idx = tuple(i - 1 for i in cex.index)
    exact = tuple(equiv_search.show(equiv_search.exact_at(check_program(prog, cex.params), inputs, "Y", idx)[0])
                  for prog in (p, q))
    assert cex.exact == exact and cex.exact[0] != cex.exact[1]
    assert (cex.value_p, cex.value_q) == exact  # integers: the engine's values are the exact ones
    assert f"gives {exact[0]} and {exact[1]}" in report.render()


# --------------------------------------------------------------------------
# Shrinking keeps the whole dependency cone (review R15, R19)
# --------------------------------------------------------------------------


def test_an_unwritten_input_that_is_an_output_is_in_its_own_cone() -> None:
    """No qualifiers: Y and Z are inputs and outputs.  P leaves Y as it is, Q writes Z - Z (0) into
    it, so Y[k] in P is the input cell Y[k] itself, which P's dependency cone must contain: shrinking
    zeroes every cell outside the cones, and without Y[k] the difference (Y[k] against 0) is lost
    and 80 random cells would be shown instead of one."""
    src = "param n\nassume n >= 40\nalloc Y : [n]\nalloc Z : [n]\n{}"
    p, q = ct.parse(src.format(""), "p.teil"), ct.parse(src.format("Y = sub Z Z\n"), "q.teil")
    report = ct.equiv(p, q)
    assert report.exit_code == 1
    cex = report.outputs[0].counterexample
    assert cex.output == "Y" and cex.params == {"n": 40} and cex.index == (1,)
    inputs = _arrays(cex.inputs)
    assert np.count_nonzero(inputs["Y"]) == 1 and inputs["Y"][0] == 1 and not inputs["Z"].any()
    assert (cex.value_p, cex.value_q) == ("1", "0")
    text = report.render()
    assert "Y = [40] array, 0 everywhere except Y[1] = 1\n" in text and "Z = [40] array, 0 everywhere\n" in text


def test_probes_keep_the_cone_of_both_programs() -> None:
    """Σ (Z - Z) against Σ X at n >= 3000 (an expensive run: exact arithmetic probes first).  P
    reads only Z, Q only X: the cone of the difference is both, and shrinking inside P's alone
    would zero X and lose it.  The counterexample is one cell X[1] = 1, not 6000 random values."""
    head = "param n\nassume n >= 3000\ninput alloc X : [n]\ninput alloc Z : [n]\noutput alloc Y : []\n"
    p, q = ct.parse(head + "Y = red (sub Z Z)\n", "p.teil"), ct.parse(head + "Y = red X\n", "q.teil")
    tp = check_program(p, {"n": 3000})
    assert equiv_search.run_cost(tp) > equiv_search.CHEAP_RUN_COST  # so the search probes
    report = ct.equiv(p, q)
    assert report.exit_code == 1
    cex = report.outputs[0].counterexample
    inputs = _arrays(cex.inputs)
    assert cex.params == {"n": 3000} and (cex.value_p, cex.value_q) == ("0", "1")
    assert np.count_nonzero(inputs["X"]) == 1 and inputs["X"][0] == 1 and not inputs["Z"].any()


# --------------------------------------------------------------------------
# The search starts at the least extents the assumptions allow (review R41)
# --------------------------------------------------------------------------


def test_the_search_starts_at_extent_one_when_the_assumptions_allow_it() -> None:
    """S / D against (S·D) / (D·D) with D = Σ_{i<=n} S - S = (n - 1)·S: equal for every n >= 2 and
    every S (S = 0 gives 0/0 = 0 on both sides), different at n = 1 only, where D = 0: S/0 = •
    but 0/0 = 0 (report Definition 8).  ``assume n >= 1`` must not move the search to n = 2."""
    src = "param n\nassume n >= 1\ninput alloc S : []\noutput alloc Y : []\nY = {}\n"
    d = "(sub (red (expa n S)) S)"
    p = ct.parse(src.format(f"div S {d}"), "p.teil")
    q = ct.parse(src.format(f"div (mul S {d}) (mul {d} {d})"), "q.teil")
    assert Scope(p, q, {}).lows == {"n": 1}
    for n in (2, 3, 4):
        for s in (0.0, 1.0, -2.0, math.nan):
            ins = {"S": np.array(s)}
            a, b = ct.evaluate(p, ins, {"n": n})["Y"], ct.evaluate(q, ins, {"n": n})["Y"]
            assert a == b or (math.isnan(a) and math.isnan(b)), (n, s)
    # the quick search before the proof alone finds it (no model of z3 to point at n = 1)
    report = ct.equiv(p, q, search_after=False)
    assert report.exit_code == 1, report.render()
    cex = report.outputs[0].counterexample
    assert cex.params == {"n": 1} and (cex.value_p, cex.value_q) == ("•", "0")
    ge5 = ct.parse("param n\nassume n >= 5\ninput alloc S : []\noutput alloc Y : []\nY = S\n", "r.teil")
    assert Scope(ge5, ge5, {}).lows == {"n": 5}


# --------------------------------------------------------------------------
# Exact values are shown exactly (review R17)
# --------------------------------------------------------------------------


def test_exact_rationals_are_shown_as_fractions_with_their_decimal() -> None:
    assert equiv_search.show(Fraction(1, 3)) == "1/3 (≈ 0.333333)"
    assert equiv_search.show(Fraction(-7, 2)) == "-7/2 (≈ -3.5)"
    assert equiv_search.show(Fraction(4, 2)) == "2"
    assert equiv_search.show(None) == "•" and equiv_search.show(5) == "5"


def test_a_counterexample_with_a_non_integer_exact_value_shows_it() -> None:
    """A/B against A/(B + B): the shrunk counterexample is A = B = 1, where Q is 1/2; shown as a
    numerator alone, the certificate would claim the exact values 1 and 1 are a difference."""
    src = "param n\ninput alloc A : [n]\ninput alloc B : [n]\noutput alloc Y : [n]\nY = {}\n"
    p, q = ct.parse(src.format("div A B"), "p.teil"), ct.parse(src.format("div A (add B B)"), "q.teil")
    report = ct.equiv(p, q)
    cex = report.outputs[0].counterexample
    assert cex.inputs == {"A": [1.0], "B": [1.0]}
    assert cex.exact == ("1", "1/2 (≈ 0.5)") and (cex.value_p, cex.value_q) == ("1", "0.5")
    assert "gives 1 and 1/2 (≈ 0.5)" in report.render()


# --------------------------------------------------------------------------
# Budgets: deterministic counts, never wall-clock (review R31, R32, R33)
# --------------------------------------------------------------------------


def test_one_exact_evaluation_stops_at_its_budget_and_at_the_work_limit() -> None:
    t = check_program(ct.parse("param n\ninput alloc X : [n]\noutput alloc Y : []\nY = red X\n", "s.teil"),
                      {"n": 3000})
    x = {"X": np.ones(3000)}
    assert equiv_search.exact_at(t, x, "Y", (), equiv_search.Budget(3001))[0] == 3000
    with pytest.raises(equiv_search.WorkExceeded):
        equiv_search.exact_at(t, x, "Y", (), equiv_search.Budget(100))
    n = equiv_search.WORK_LIMIT + 1
    big = check_program(t.program, {"n": n})
    with pytest.raises(equiv_search.WorkExceeded):  # the per-evaluation limit, whatever the search's budget
        equiv_search.exact_at(big, {"X": np.ones(n)}, "Y", (), equiv_search.Budget(10 * n))


#: Σ_{i<=2} Σ_{j<=n} X[i, j] against Σ_j (X[1, j] + X[2, j]): equal, but beyond the normal forms
#: (a Σ of literal extent 2 is not unrolled), so the search runs on every input it has and finds
#: nothing.  At n >= 3000 a reference run is expensive, so each input is probed in exact
#: arithmetic first: about 4n exact steps per run.
BUDGET_HEAD = "param n\nassume n >= {}\ninput alloc X : [2, n]\noutput alloc Y : []\n"


def _budget_pair(least: int) -> tuple[ct.Program, ct.Program]:
    head = BUDGET_HEAD.format(least)
    return (ct.parse(head + "Y = red (red X)\n", "p.teil"),
            ct.parse(head + "Y = red (add (proj 1 X) (proj 2 X))\n", "q.teil"))


@dataclasses.dataclass
class _Counters:
    steps: int = 0
    tries: list[tuple[int, int, str]] = dataclasses.field(default_factory=list)  # (n, budget left, mode)


def _count(monkeypatch: pytest.MonkeyPatch) -> _Counters:
    """Count every exact step charged (ExactInterpretation._tick) and every run the search starts."""
    counters = _Counters()
    tick, attempt = equiv_search.ExactInterpretation._tick, equiv_search._try

    def counted_tick(self, n=1):  # type: ignore[no-untyped-def]
        counters.steps += n
        return tick(self, n)

    def counted_try(tp, tq, params, inputs, outputs, pad, budget, *rest):  # type: ignore[no-untyped-def]
        counters.tries.append((params["n"], budget.left, rest[-1] if len(rest) == 3 else "both"))
        return attempt(tp, tq, params, inputs, outputs, pad, budget, *rest)

    monkeypatch.setattr(equiv_search.ExactInterpretation, "_tick", counted_tick)
    monkeypatch.setattr(equiv_search, "_try", counted_try)
    return counters


def test_only_the_two_smallest_expensive_shapes_are_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    """At n = 3000 the exact budget lasts through every input on two shapes and more: the search
    still tries no third expensive shape (at n >= 3000, n = 3002 is no simpler than n = 3000)."""
    p, q = _budget_pair(3000)
    assert equiv_search.run_cost(check_program(p, {"n": 3000})) > equiv_search.CHEAP_RUN_COST
    counters = _count(monkeypatch)
    found = equiv_search.search(p, q, ["Y"], ["n"], {}, lambda a: a["n"] >= 3000, None, True, {"n": 3000})
    assert found is None
    assert {n for n, _, _ in counters.tries} == {3000, 3001}
    assert counters.steps < equiv_search.SEARCH_BUDGET  # the budget was not what stopped it


def test_the_search_stops_when_its_exact_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    """At n = 4000 the probes spend the search's exact budget before the inputs run out: the run
    that overdraws it stops at that step (an evaluation charges at most one Σ's extent at once),
    and no run starts afterwards.  ct.equiv then answers unknown, within the sum of its searches'
    budgets (quick search, the search seeded by z3's model, the search after the proof)."""
    n = 4000
    p, q = _budget_pair(n)
    counters = _count(monkeypatch)
    found = equiv_search.search(p, q, ["Y"], ["n"], {}, lambda a: a["n"] >= n, None, True, {"n": n})
    assert found is None
    assert equiv_search.SEARCH_BUDGET <= counters.steps <= equiv_search.SEARCH_BUDGET + n
    assert counters.tries and all(left > 0 for _, left, _ in counters.tries), counters.tries[-3:]
    assert {mode for _, _, mode in counters.tries} == {"probe"}  # stopped before any reference run
    counters.steps = 0
    counters.tries.clear()
    report = ct.equiv(p, q)
    assert report.exit_code == 3 and "no counterexample among small shapes and inputs" in report.outputs[0].reason
    budget = equiv_search.SEARCH_BUDGET
    assert counters.steps <= budget // 4 + budget // 2 + budget + 3 * n
    assert all(left > 0 for _, left, _ in counters.tries)


# --------------------------------------------------------------------------
# The exact evaluator's table of shared subexpressions (review R14: an equivalent mutant)
# --------------------------------------------------------------------------


def test_a_node_shared_between_statements_is_evaluated_in_each_statements_store() -> None:
    """The exact evaluator keeps the tables of shared subexpressions by node identity.  A program
    built in Python may use one node object in two statements, where it reads two different
    stores; check_program makes the typed program a tree (syntax.as_tree), so each statement has
    nodes of its own and no table outlives the store it was computed in."""
    src = "param n\ninput alloc X : [n]\noutput alloc T : [n]\nT = add X (expa n (red X))\nT = add T (expa n (red T))\n"
    p = ct.parse(src, "p.teil")
    q = dataclasses.replace(p, stmts=(p.stmts[0], p.stmts[1], p.stmts[1]))  # the same statement object twice
    x = {"X": np.array([1.0, 2.0, 3.0])}
    exact = equiv_search.run_exact(check_program(q, {"n": 3}), x)["T"]
    assert list(exact) == [127, 128, 129]  # T = X + 6 = [7, 8, 9]; + 24; + 96
    assert list(ct.evaluate(q, x, {"n": 3})["T"]) == [127.0, 128.0, 129.0]
