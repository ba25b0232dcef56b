"""Nothing but a TeilError escapes the checker and the reference engine (issue 2, item 7).

Random syntax trees (mostly ill-typed) go through the type checker; mutated
example programs go through parser, checker, lowering and evaluator.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from core_teil.errors import TeilError
from core_teil.lang.lowering import lower
from core_teil.lang.parser import parse
from core_teil.lang.printer import format_program
from core_teil.lang.typing import check_program
from core_teil.semantics.eval import evaluate
from tests.strategies import SETTINGS, programs

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.teil"))
TOKENS = ["add", "sub", "mul", "div", "prod", "red", "contr", "diag", "transp", "expa", "proj", "(", ")",
          "1", "2", "3", "0", "n", "A", "B", "[", "]", ",", "=", "\n", "alloc", "param", "assume", "lang full",
          "lang core", "input", "output", "999999999999", "-1"]


def exercise(text: str) -> None:
    """Parse, check, lower and run ``text`` on small inputs; only TeilError may escape."""
    try:
        program = parse(text, "mutant.teil")
        params = {p: 2 for p in program.params}
        typed = check_program(program, params)
        if program.dialect == "full":
            check_program(lower(program), params)
        rng = np.random.default_rng(0)
        inputs = {a.name: rng.random(tuple(params.get(d, d) if isinstance(d, str) else d for d in a.shape))
                  for a in program.inputs() if all(isinstance(d, str) or d <= 6 for d in a.shape)}
        evaluate(typed, inputs, params)
    except TeilError as err:
        err.with_source(text).render()


@SETTINGS
@given(programs())
def test_checker_on_random_trees(program) -> None:
    try:
        check_program(program)
    except TeilError as err:
        err.render()


@SETTINGS
@given(st.sampled_from(EXAMPLES), st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(TOKENS),
                                                     st.sampled_from(["insert", "delete", "replace"])),
                                           min_size=1, max_size=4))
def test_mutated_examples(path: Path, edits: list[tuple[int, str, str]]) -> None:
    words = path.read_text().split(" ")
    for pos, token, how in edits:
        i = pos % (len(words) + 1)
        if how == "insert":
            words.insert(i, token)
        elif words:
            i = min(i, len(words) - 1)
            if how == "delete":
                del words[i]
            else:
                words[i] = token
    exercise(" ".join(words))


def test_every_example_survives_the_pipeline() -> None:
    for path in EXAMPLES:
        exercise(path.read_text())
        exercise(format_program(parse(path.read_text())))
