"""What ``ct.check`` returns: a typed program that is also the mapping of its shapes.

SPEC.md section 6 promises ``ct.check(program) -> dict[str, tuple]``, and code
and notes rely on it (``ct.check(p)["C"]``, ``ct.check(p) == {"A": (2, 3), ...}``,
``isinstance(..., dict)``, ``json.dumps``).  :class:`CheckedProgram` keeps that
contract: it *is* that dict (a subclass, a fresh one per call), and it also
carries the typing derivation
(:class:`~core_teil.lang.typing.TypedProgram`), so that a checked program
displays its derivations in Jupyter, and ``.derive()`` and ``.trace()`` need
no second check.  A wrapper rather than a mapping-shaped ``TypedProgram``:
the internal record is used everywhere, and truthiness by ``len`` would
change what ``if typed:`` means there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..lang.printer import format_names, format_shape
from ..lang.syntax import Program, Shape
from ..lang.typing import TypedProgram


class CheckedProgram(dict[str, Shape]):
    """A well-typed program: ``checked["C"]`` is C's shape (parameters given are substituted)."""

    __slots__ = ("typed",)

    def __init__(self, typed: TypedProgram) -> None:
        super().__init__(typed.shapes())
        self.typed = typed

    # -- the typed program -------------------------------------------------

    @property
    def program(self) -> Program:
        return self.typed.program

    @property
    def params(self) -> dict[str, int]:
        """The parameter values given to ``ct.check``; the others are symbolic."""
        return dict(self.typed.params)

    @property
    def symbolic(self) -> tuple[str, ...]:
        return tuple(p for p in self.program.params if p not in self.typed.params)

    def side_conditions(self) -> list[Any]:
        return self.typed.side_conditions()

    def derive(self) -> Any:
        """The typing derivations (``ct.derive``), without checking again."""
        from .partial import Derivations, DeriveStatus

        return Derivations(self.program, self.typed, self.typed.derivations, DeriveStatus.DERIVED)

    def trace(self, at: str, inputs: Mapping[str, Any] | None = None, pad: int | None = None) -> Any:
        """The unfolding of ``[[e]]`` at ``at``, e.g. ``'C[1,2]'`` (``ct.trace``)."""
        from .trace import trace_steps

        return trace_steps(self.typed, at, inputs, pad)

    # -- display -------------------------------------------------------------

    def __repr__(self) -> str:
        shapes = ", ".join(f"{x} : {format_shape(t)}" for x, t in self.items())
        scope = f"; {format_names(self.symbolic)} symbolic" if self.symbolic else ""
        return f"<CheckedProgram {self.program.file}: {shapes}{scope}>"

    def _repr_html_(self) -> str:
        from .derive import typed_html

        return typed_html(self.typed)

    def _repr_latex_(self) -> str:
        from .derive import typed_mathjax

        return typed_mathjax(self.typed)


__all__ = ["CheckedProgram"]
