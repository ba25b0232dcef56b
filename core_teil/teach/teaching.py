"""Teaching tools (issue 6): derivations, traces and rich notebook display.

A facade over :mod:`core_teil.teach.derive` (typing derivations, paper Fig. 8 /
Fig. 12; partial ones from :mod:`core_teil.teach.partial`) and
:mod:`core_teil.teach.trace` (the unfolding of ``[[e]]``, paper Fig. 7);
``cli.py`` calls :func:`derive` and :func:`trace`.

:func:`install_reprs` gives ``Program``, ``TypedProgram`` and ``Derivation``
their ``_repr_html_`` / ``_repr_latex_`` (Jupyter renders them without being a
dependency) and one-line text reprs instead of dataclass dumps.  The methods
are attached from here, when ``core_teil`` is imported, rather than written in
``lang/``: the language layer must not import the teaching layer built on top
of it.
"""

from __future__ import annotations

import html
from typing import Any

from ..lang.syntax import Program
from ..lang.typing import Derivation, TypedProgram
from .derive import derivation_html, derivation_mathjax, render_latex, render_text, typed_html, typed_mathjax
from .partial import Derivations


def derive(typed: TypedProgram | Derivations, latex: bool = False) -> str:
    """``core-teil derive``: every statement's typing derivation (text, or a LaTeX document);
    for a :class:`~core_teil.teach.partial.Derivations`, failing statements up to the failing rule."""
    if isinstance(typed, Derivations):
        return typed.latex() if latex else typed.render()
    return render_latex(typed) if latex else render_text(typed)


def trace(typed: TypedProgram, at: str, inputs: dict[str, Any] | None = None, pad: int | None = None) -> str:
    """``core-teil trace``: the unfolding of ``[[e]]`` at ``at`` (e.g. ``'C[1,2]'``), one equation a line."""
    return trace_steps(typed, at, inputs, pad).render()


def trace_steps(typed: TypedProgram, at: str, inputs: dict[str, Any] | None = None,
                pad: int | None = None) -> Any:
    """The same trace as a :class:`~core_teil.teach.trace.Trace` record (it displays itself in Jupyter)."""
    from .trace import trace_steps as steps

    return steps(typed, at, inputs, pad)


# -- rich display (Jupyter calls these through the _repr_*_ methods) ---------


def program_html(program: Program) -> str:
    from ..lang.printer import format_program

    return f'<pre class="ct-program">{html.escape(format_program(program))}</pre>'


def program_latex(program: Program) -> str:
    from ..lang.printer import format_program
    from .derive import tex_code

    rows = [tex_code(line) if line else r"\," for line in format_program(program).splitlines()]
    return r"$\begin{array}{l}" + r"\\ ".join(rows) + r"\end{array}$"


def typed_program_html(typed: TypedProgram) -> str:
    return typed_html(typed)


def typed_program_latex(typed: TypedProgram) -> str:
    return typed_mathjax(typed)


def derivation_node_html(d: Derivation) -> str:
    return derivation_html(d)


def derivation_node_latex(d: Derivation) -> str:
    return derivation_mathjax(d)


def program_repr(program: Program) -> str:
    """One line: what a program is, not the dump of its syntax tree (``print`` shows its text)."""
    from ..lang.printer import format_names, format_shape

    allocs = ", ".join(f"{a.name} : {format_shape(a.shape)}" for a in program.allocs)
    params = f"; param {format_names(program.params)}" if program.params else ""
    return (f"<Program {program.file} (lang {program.dialect}{params}): {allocs or 'no allocations'}; "
            f"{len(program.stmts)} statement(s)>")


def program_str(program: Program) -> str:
    from ..lang.printer import format_program

    return format_program(program).rstrip("\n")


def typed_program_repr(typed: TypedProgram) -> str:
    from ..lang.printer import format_shape

    shapes = ", ".join(f"{x} : {format_shape(t)}" for x, t in typed.shapes().items())
    return f"<TypedProgram {typed.program.file}: {shapes}; {len(typed.derivations)} statement(s) derived>"


def derivation_node_repr(d: Derivation) -> str:
    from ..lang.printer import format_expr, format_shape

    return f"<Derivation {format_expr(d.expr)} : {format_shape(d.shape)} by {d.rule}>"


def install_reprs() -> None:
    """Attach the notebook renderings and the one-line text reprs to the language's classes
    (called by ``core_teil/__init__``, so they are in place whenever ``core_teil.lang`` is)."""
    for cls, as_html, as_latex, as_text in (
        (Program, program_html, program_latex, program_repr),
        (TypedProgram, typed_program_html, typed_program_latex, typed_program_repr),
        (Derivation, derivation_node_html, derivation_node_latex, derivation_node_repr),
    ):
        cls._repr_html_ = as_html  # type: ignore[attr-defined]
        cls._repr_latex_ = as_latex  # type: ignore[attr-defined]
        cls.__repr__ = as_text  # type: ignore[method-assign,assignment]
    Program.__str__ = program_str  # type: ignore[method-assign,assignment]


__all__ = ["derive", "install_reprs", "trace", "trace_steps"]
