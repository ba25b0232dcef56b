"""What ``core-teil equiv`` prints and writes (core_teil/proving/equiv.py, the float forms of
core_teil/proving/equiv_nf.py), from the survivors of the second independent mutant review (issue 13).

* indices are 1-based everywhere (SPEC.md section 4), in the text and in ``--json``;
* an undefined input cell prints as ``•`` (``null`` in JSON), never as a number;
* the rounding note (issue 13, item 4) is given wherever the two programs' float operations may
  differ: when they could not be built, when they differ only in an operation, or only in the
  order of the operands of ``sub`` (which, unlike ``add`` and ``mul``, is not commutative).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import core_teil as ct
from core_teil.cli import main
from core_teil.proving import equiv_nf
from core_teil.proving.equiv import _show_input

PAIRS = Path(__file__).resolve().parent.parent / "examples" / "equiv"


def pair(stem: str) -> tuple[ct.Program, ct.Program]:
    return ct.load(str(PAIRS / f"{stem}_p.teil")), ct.load(str(PAIRS / f"{stem}_q.teil"))


# --------------------------------------------------------------------------
# Indices and undefined values as SPEC.md writes them (review R49, R50, R51)
# --------------------------------------------------------------------------


def test_the_json_index_is_one_based_as_the_text(capsys: pytest.CaptureFixture[str]) -> None:
    """bad_diag_transp differs at Y[1, 2] (1-based): the JSON certificate says [1, 2] too, and the
    reference engine differs at the 0-based (0, 1)."""
    p, q = (str(PAIRS / f"bad_diag_transp_{s}.teil") for s in "pq")
    code = main(["equiv", p, q, "--json"])
    cert = json.loads(capsys.readouterr().out)
    assert code == 1
    cex = cert["outputs"][0]["counterexample"]
    assert cex["index"] == [1, 2] and cex["params"] == {"n": 2}
    inputs = {"X": np.array(cex["inputs"]["X"], dtype=float)}
    a = ct.evaluate(ct.load(p), inputs, cex["params"])["Y"][0, 1]
    b = ct.evaluate(ct.load(q), inputs, cex["params"])["Y"][0, 1]
    assert [str(int(a)), str(int(b))] == [cex["value_p"], cex["value_q"]] and a != b
    code = main(["equiv", p, q])
    assert code == 1 and "Y[1, 2] in " in capsys.readouterr().out


def test_an_undefined_input_cell_prints_as_undef() -> None:
    """bad_undef_only: X - X against Z - Z differ only where X or Z is •: the example shows that
    input as [•] (JSON null), not as [0] (on which the two programs agree).  Which of the two it
    is depends on which search finds it first (z3's model may point at either)."""
    report = ct.equiv(*pair("bad_undef_only"))
    cex = report.outputs[0].counterexample
    undef = [x for x, v in cex.inputs.items() if v == [None]]
    assert len(undef) == 1 and sorted(cex.inputs.values(), key=str) == [[0.0], [None]], cex.inputs
    (x,) = undef
    (other,) = set(cex.inputs) - {x}
    text = report.render()
    assert f"    {x} = [•]\n" in text and f"    {other} = [0]\n" in text
    assert report.to_json()["outputs"][0]["counterexample"]["inputs"][x] == [None]
    assert {cex.value_p, cex.value_q} == {"•", "0"}


def test_large_inputs_print_their_exceptions_at_one_based_indices() -> None:
    x = np.zeros((5, 5), dtype=object)
    x[0, 0], x[1, 2], x[4, 4] = 1.0, None, -2.5
    assert _show_input("X", x.tolist()) == "[5, 5] array, 0 everywhere except X[1, 1] = 1, X[2, 3] = •, X[5, 5] = -2.5"
    many = np.ones(30).tolist()
    many[29] = None
    assert _show_input("W", many) == "[30] array, 1 everywhere except W[30] = •"


# --------------------------------------------------------------------------
# The rounding note (issue 13, item 4; review R25, R26, R21)
# --------------------------------------------------------------------------

SRC = "param n\ninput alloc A : [n]\ninput alloc B : [n]\ninput alloc C : [n]\noutput alloc Y : [n]\nY = {}\n"


def _floats_differ(p: ct.Program, q: ct.Program, values: tuple[float, float, float]) -> bool:
    ins = {x: np.array([v]) for x, v in zip("ABC", values, strict=True)}
    a, b = ct.evaluate(p, ins, {"n": 1})["Y"][0], ct.evaluate(q, ins, {"n": 1})["Y"][0]
    return not (a == b or (math.isnan(a) and math.isnan(b)))


def test_float_forms_too_large_to_build_keep_the_rounding_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the float operations cannot be built (more than MAX_FORM nodes), equiv does not know
    that the two programs perform the same ones: a proof says the floats may differ."""
    p, q = pair("law4_diag_transp")
    assert ct.equiv(p, q).outputs[0].float_note == ""  # an index-map identity: the same float operations
    monkeypatch.setattr(equiv_nf, "MAX_FORM", 0)
    report = ct.equiv(p, q)
    assert report.ok and "rounding" in report.outputs[0].float_note, report.render()


def test_the_rounding_note_sees_which_operation_is_performed() -> None:
    """(A - B) + B against (A + B) - B: equal in the reals (and in V ∪ {•}), the same tree of float
    operations with other operations at its nodes, and different float results (0.1 and
    0.10000000000000003 at A = 0.1, B = 0.2)."""
    p, q = ct.parse(SRC.format("add (sub A B) B"), "p.teil"), ct.parse(SRC.format("sub (add A B) B"), "q.teil")
    assert _floats_differ(p, q, (0.1, 0.2, 0.0))
    report = ct.equiv(p, q)
    assert report.ok, report.render()
    assert "rounding" in report.outputs[0].float_note


def test_the_operands_of_sub_are_not_reordered_in_the_float_forms() -> None:
    """u - v against v - u where u = (A + B) + C and v = A + (B + C): both 0 in the reals, so equiv
    proves them equal, but u and v round differently, so the floats are 1.1e-16 and -1.1e-16 at
    0.1, 0.2, 0.3.  Sorting the operands of sub (as of the commutative add and mul) would make the
    two float forms one and drop the note."""
    u, v = "(add (add A B) C)", "(add A (add B C))"
    p, q = ct.parse(SRC.format(f"sub {u} {v}"), "p.teil"), ct.parse(SRC.format(f"sub {v} {u}"), "q.teil")
    assert _floats_differ(p, q, (0.1, 0.2, 0.3))
    report = ct.equiv(p, q)
    assert report.ok, report.render()
    assert "rounding" in report.outputs[0].float_note
    # and the normal forms do tell a - b from b - a: refuted, with a replayed counterexample
    diff = ct.equiv(ct.parse(SRC.format("sub A B"), "p.teil"), ct.parse(SRC.format("sub B A"), "q.teil"),
                    smoke=False, search_after=False)
    assert diff.exit_code == 3 and diff.outputs[0].normal_form_p != diff.outputs[0].normal_form_q
    assert ct.equiv(ct.parse(SRC.format("sub A B"), "p.teil"), ct.parse(SRC.format("sub B A"), "q.teil")).exit_code == 1
