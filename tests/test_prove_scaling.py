"""``prove`` on long programs: work per statement must not grow with the program's length.

An outside review (r27) found ``prove`` quadratic in the number of statements: every statement
made a fresh Z3 declaration for every allocation (3000 chained statements: two minutes).  No
timing is asserted; the declarations made are counted instead."""

from __future__ import annotations

import pytest
import z3

import core_teil as ct
from core_teil.semantics import symbolic


def _chain(n: int) -> str:
    lines = ["input alloc X : [3]", "output alloc Y : [3]", *(f"alloc t{i} : [3]" for i in range(n)),
             "t0 = add X X", *(f"t{i} = add t{i - 1} X" for i in range(1, n)), f"Y = t{n - 1}"]
    return "\n".join(lines) + "\n"


def _declarations_made(n: int, monkeypatch: pytest.MonkeyPatch) -> int:
    made = []
    real = z3.Function

    def counting(name: str, *sig: z3.SortRef) -> z3.FuncDeclRef:
        made.append(name)
        return real(name, *sig)

    monkeypatch.setattr(symbolic, "_MEMORY_SYMBOLS", {}, raising=False)
    monkeypatch.setattr(z3, "Function", counting)
    assert ct.prove(ct.parse(_chain(n))).ok
    return len([m for m in made if m.startswith(("mu_", "pmu_"))])


def test_each_allocation_is_declared_once_however_many_statements(monkeypatch: pytest.MonkeyPatch) -> None:
    # n + 2 allocations of rank 1, each declared once (``mu_x``), not once per statement
    assert _declarations_made(40, monkeypatch) == 42
    assert _declarations_made(80, monkeypatch) == 82


def test_the_memo_gives_the_declaration_z3_would() -> None:
    mu = symbolic.function_memory({"A": (None, None), "s": ()}, "mu")
    assert mu["A"].eq(z3.Function("mu_A", z3.IntSort(), z3.IntSort(), symbolic.Value))
    assert mu["s"].eq(z3.Const("mu_s", symbolic.Value))
    again = symbolic.function_memory({"A": (None,)}, "mu")  # another rank: another symbol
    assert again["A"].arity() == 1 and mu["A"].arity() == 2
