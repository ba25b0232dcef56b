"""Every entry point of SPEC.md section 6 refuses what is not a parsed program with a
TeilInputError (exit 2), not an AttributeError from deep inside (``ct.compile("lang full ...")``
used to fail on ``'str' object has no attribute 'params'``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import core_teil as ct

MATMUL = ct.load("examples/matmul.teil")

ENTRY_POINTS: dict[str, Callable[[Any], Any]] = {
    "check": ct.check,
    "derive": ct.derive,
    "trace": lambda p: ct.trace(p, "C[1,1]"),
    "format": ct.format,
    "evaluate": ct.evaluate,
    "compile": ct.compile,
    "prove": ct.prove,
    "emit_c": ct.emit_c,
    "batch_dimension": ct.batch_dimension,
    "equiv, first": lambda p: ct.equiv(p, MATMUL),
    "equiv, second": lambda p: ct.equiv(MATMUL, p),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("bad", ["lang full\n", None, 3, b"lang full"], ids=["str", "None", "int", "bytes"])
def test_what_is_not_a_program_is_an_input_error(entry: str, bad: Any) -> None:
    with pytest.raises(ct.TeilInputError, match=f"expected a Core-TeIL program.*not {type(bad).__name__}$"):
        ENTRY_POINTS[entry](bad)


@pytest.mark.parametrize("entry", ["check", "derive", "trace", "evaluate", "compile", "prove", "emit_c",
                                   "batch_dimension"])
def test_what_is_not_a_program_is_an_input_error_with_params_too(entry: str) -> None:
    # with params, check_params reads the program's parameters first (ct.check(text, {"n": 3}))
    call = {"trace": lambda p: ct.trace(p, "C[1,1]", {"n": 3}), "evaluate": lambda p: ct.evaluate(p, {}, {"n": 3})}
    with pytest.raises(ct.TeilInputError, match="expected a Core-TeIL program"):
        call.get(entry, lambda p: getattr(ct, entry)(p, {"n": 3}))("lang full\n")


def test_program_text_gets_the_way_to_parse_it() -> None:
    with pytest.raises(ct.TeilInputError, match=r"ct\.parse\(text\).*ct\.load\(path\)"):
        ct.compile(MATMUL.file)


def test_a_program_is_still_accepted_everywhere() -> None:
    for entry in ("check", "format", "compile", "batch_dimension"):
        ENTRY_POINTS[entry](MATMUL)


def test_a_trace_index_is_written_in_ascii_digits() -> None:
    # as --param's and --pad's (review r25: 'C[٣,1]' was read as C[3,1])
    from core_teil.teach.trace import parse_at

    typed = ct.check(MATMUL, {"l": 3, "m": 3, "n": 3}).typed
    assert parse_at(typed, "C[3,1]") == ("C", (3, 1))
    with pytest.raises(ct.TeilInputError, match="is not an index"):
        parse_at(typed, "C[\u0663,1]")
