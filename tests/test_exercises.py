"""``core-teil exercise ID ANSWER`` (issue 16, item 1): every exercise of the course is checkable.

For each exercise of ``core_teil.teach.exercises.EXERCISES``: its right answer is accepted and a
typical wrong one rejected (with a hint, and a counterexample where the kind has one); the chapters'
``## Exercises`` lists and the records match one to one; malformed answers exit 2 with a message
naming the exercise, never a traceback.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core_teil import cli
from core_teil.errors import TeilInputError
from core_teil.teach.exercises import BY_ID, CHAPTERS, EXERCISES, Kind, Mark, check_answer

ROOT = Path(__file__).resolve().parent.parent
COURSE = ROOT / "docs" / "course"

MATVEC = """lang core
param n, p
input alloc M : [n, p]
input alloc x : [p]
output alloc y : [n]
y = contr (transp 2 (transp 1 (prod M x)))
"""
MATVEC_WRONG = MATVEC.replace("contr (transp 2 (transp 1 (prod M x)))", "red (transp 1 M)")
MATMUL = """lang full
param l, m, n
input alloc B : [l, m]
input alloc C : [m, n]
output alloc A : [l, n]
A = contr 2 3 (prod B C)
"""
TACO = """lang full
param l, m, n
input alloc B : [n, m, l]
input alloc C : [l]
output alloc A : [l, m]
A = transp 1 2 (red 1 (diag 3 4 (prod B C)))
"""
#: The paper's Fig. 10a (c) with TACO's declaration: well typed only when l == m, and then the transpose.
TACO_WRONG = TACO.replace("transp 1 2 (red 1 (diag 3 4 (prod B C)))", "red 1 (diag 3 4 (prod B C))").replace(
    "param l, m, n", "param l, m, n\nassume l == m")

#: (right answer, wrong answer) per exercise; a program is written to a file first.
ANSWERS: dict[str, tuple[str, str]] = {
    "1.1": ("[2, 3, 3, 4]; [2, 3, 3, 4]; none; [5]; [2]", "[2, 3, 3, 4]; [2, 3, 4, 3]; none; [5]; [2]"),
    "1.2": (MATVEC, MATVEC_WRONG),
    "1.3": ("transp 2 (transp 1 (transp 2 u))", "transp 1 (transp 2 u)"),
    "1.4": ("T-Proj k = 1", "T-Proj k = 2"),
    "2.1": ("T-Contr 3 == 2", "T-Transp 1 <= 1"),
    "2.2": ("diag A : [n]", "red (diag A) : []"),
    "2.3": ("OK-Stmt T-Transp T-Transp T-Transp T-Var", "OK-Stmt T-Transp T-Var"),
    "2.4": ("m == n and n == h", "m == n"),
    "3.1": ("Σ_{m1=1..n} (B[i, j, m1] · C[i])", "sum_{k=1..n} B[i,j,k] * C[j]"),
    "3.2": ("B[2, i, j]; A[i, j]", "B[2, i, j]; A[s, i, j]"),
    "3.3": ("[•, 0, 0]; [0, 0, 0]", "[inf, nan, 0]; [0, 0, 0]"),
    "3.4": ("5", "6"),
    "4.1": ("k >= 2", "k >= 1"),
    "4.2": ("St-Stmt", "OK-Stmt"),
    "4.3": ("sat sat unsat", "unsat unsat unsat"),
    "4.4": ("reads-in-bounds", "typing"),
    "4.5": ("WD-Diag (all ranks), 8", "WD-Diag, 8"),
    "5.1": ("[8, 16, 8]; 92%", "[8, 16, 8]; 80%"),
    "5.2": ("0 / 0 = 0", "x / 0 = 0"),
    "5.3": ("yes yes", "yes no"),
    "5.4": ("ev_expa_at", "ev_var"),
    "6.1": ("A[i, j]", "A[j, i]"),
    "6.2": ("yes", "no"),
    "6.3": ("Σ_{m1=1..m} (B[i, m1] · C[m1, j])", "Σ_{m1=1..m} (B[i, m1] · C[j, m1])"),
    "6.4": ("9; 9", "9; 5"),
    "7.1": (MATMUL, MATVEC),
    "7.2": (TACO, TACO_WRONG),
    "7.3": ("T-Diag, T-Contr", "T-Red+"),
}

#: Kinds whose wrong answers come with a counterexample (an instance, a model, a replayed run).
WITH_COUNTEREXAMPLE = {"1.2": "y differs", "2.4": "OK-Stmt fails", "4.1": "out of bounds", "5.2": "1 / 0",
                       "6.1": "your term is", "6.3": "your term is", "7.2": "A differs"}


def answer(id_: str, text: str, tmp_path: Path) -> str:
    if BY_ID[id_].kind is Kind.PROGRAM:
        path = tmp_path / f"answer_{id_.replace('.', '_')}.teil"
        path.write_text(text, encoding="utf-8")
        return str(path)
    return text


def test_every_exercise_has_answers_here():
    assert set(ANSWERS) == set(BY_ID)


@pytest.mark.parametrize("id_", sorted(BY_ID))
def test_right_answer_is_accepted_and_wrong_one_rejected(id_, tmp_path):
    good, bad = ANSWERS[id_]
    verdict = check_answer(id_, answer(id_, good, tmp_path))
    assert verdict.mark is Mark.RIGHT, verdict.render()
    assert verdict.exit_code == 0 and "solutions/" in verdict.render()
    verdict = check_answer(id_, answer(id_, bad, tmp_path))
    assert verdict.mark is Mark.WRONG, verdict.render()
    assert verdict.exit_code == 1
    assert verdict.hint or verdict.counterexample, f"{id_}: a wrong answer gets a hint or a counterexample"
    if id_ in WITH_COUNTEREXAMPLE:
        assert WITH_COUNTEREXAMPLE[id_] in verdict.counterexample, verdict.render()


def test_the_expected_answer_is_never_printed():
    """A wrong answer's verdict does not give the solution away."""
    leaks = {"2.1": "3 == 2", "4.2": "St-Stmt", "4.5": "all ranks", "5.4": "ev_expa_at", "7.3": "T-Diag"}
    for id_, secret in leaks.items():
        text = check_answer(id_, ANSWERS[id_][1]).render()
        assert secret not in text.split("\n", 1)[1], text


def test_equal_answers_in_other_words_are_right(tmp_path):
    """Checked by meaning, not by text: another equal formula, program or condition is right."""
    assert check_answer("3.1", "C[i] * sum_{k=1..n} B[i, j, k]").ok
    assert check_answer("1.3", "transp 1 (transp 2 (transp 1 u))").ok  # the other braid of the reversal
    assert check_answer("4.1", "2 <= k").ok and check_answer("4.1", "k > 1").ok
    assert not check_answer("4.1", "k >= 3").ok  # stronger than needed
    assert check_answer("5.2", "0 / s = 0").ok and check_answer("5.2", "0 / • = 0").ok
    assert check_answer("6.4", "9").ok
    assert check_answer("7.3", "T-Diag").ok
    assert check_answer("2.2", "diag (A) : [ n ]").ok
    other = MATVEC.replace("contr (transp 2 (transp 1 (prod M x)))", "contr (transp 1 (transp 2 (prod x M)))")
    assert check_answer("1.2", answer("1.2", other, tmp_path)).ok


def test_program_answers_must_follow_the_exercise(tmp_path):
    full = MATVEC.replace("lang core", "lang full").replace("contr (transp 2 (transp 1 (prod M x)))",
                                                            "contr 2 3 (prod M x)")
    v = check_answer("1.2", answer("1.2", full, tmp_path))
    assert not v.ok and "lang core" in v.message
    two_steps = MATMUL.replace("contr 2 3 (prod B C)", "red 2 (diag 2 3 (prod B C))")
    v = check_answer("7.1", answer("7.1", two_steps, tmp_path))
    assert not v.ok and "one contr" in v.message
    v = check_answer("1.3", "proj 1 (expa 1 (transp 2 (transp 1 (transp 2 u))))")
    assert not v.ok and "transp" in v.message
    ill = MATVEC.replace("transp 2 (transp 1 (prod M x))", "prod M x")
    v = check_answer("1.2", answer("1.2", ill, tmp_path))
    assert not v.ok and "T-Contr" in v.hint


@pytest.mark.parametrize(("argv", "message"), [
    (["exercise", "9.9", "x"], "no exercise '9.9'"),
    (["exercise", "1.1"], "exercise 1.1 needs an answer"),
    (["exercise", "1.1", "[2]"], "asks for 5 shapes"),
    (["exercise", "1.2", "missing.teil"], "missing.teil: no such file"),
    (["exercise", "3.1", "Σ_{m1=1..n} (B[i"], "expected"),
    (["exercise", "2.1", "T-Contr"], "exercise 2.1"),
    (["exercise", "5.3", "maybe"], "exercise 5.3"),
])
def test_bad_input_exits_2_with_the_exercise_named(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_exit_codes_and_syntax_errors_in_the_answer_file(capsys, tmp_path):
    good, bad = tmp_path / "good.teil", tmp_path / "bad.teil"
    good.write_text(MATVEC)
    bad.write_text(MATVEC_WRONG)
    assert cli.main(["exercise", "1.2", str(good)]) == 0
    assert cli.main(["exercise", "1.2", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "right" in out and "not right yet" in out and "counterexample:" in out
    broken = tmp_path / "broken.teil"
    broken.write_text("lang core\ny = red (\n")
    assert cli.main(["exercise", "1.2", str(broken)]) == 2
    err = capsys.readouterr().err
    assert f"{broken}:2:9: syntax error" in err and "^" in err
    assert cli.main(["exercise", "list"]) == 0
    listing = capsys.readouterr().out
    assert all(f"{ex.id}  " in listing for ex in EXERCISES)


def test_the_equations_are_restored_after_a_mutating_checker():
    from core_teil.lang.syntax import Proj
    from core_teil.semantics import eval as ev

    before = ev.EQUATIONS[Proj]
    check_answer("4.4", "typing")
    assert ev.EQUATIONS[Proj] is before


# -- the course and the records match ------------------------------------------------


def exercise_numbers(page: Path) -> list[int]:
    text = page.read_text(encoding="utf-8")
    section = text.split("\n## Exercises", 1)[1].split("\n## ", 1)[0]
    return [int(m) for m in re.findall(r"^(\d+)\. ", section, re.M)]


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_every_exercise_of_the_course_is_checkable(chapter):
    page = COURSE / CHAPTERS[chapter]
    numbers = exercise_numbers(page)
    assert numbers == list(range(1, len(numbers) + 1)), page.name
    ids = {f"{chapter}.{n}" for n in numbers}
    assert ids == {ex.id for ex in EXERCISES if ex.chapter == chapter}, page.name
    text = page.read_text(encoding="utf-8")
    for id_ in sorted(ids):
        assert f"core-teil exercise {id_} " in text, f"{page.name} does not say how to check exercise {id_}"
    solutions = COURSE / "solutions" / CHAPTERS[chapter]
    assert solutions.exists() and f"](solutions/{CHAPTERS[chapter]})" in text
    sol = solutions.read_text(encoding="utf-8")
    assert exercise_numbers_in_solutions(sol) == numbers, solutions.name


def exercise_numbers_in_solutions(text: str) -> list[int]:
    section = text.split("\n## Solutions", 1)[1]
    return [int(m) for m in re.findall(r"^(\d+)\. ", section, re.M)]


def test_bad_records_are_refused():
    with pytest.raises(TeilInputError, match="no exercise"):
        check_answer("0.0", "x")
