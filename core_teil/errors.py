"""One error hierarchy, rooted at :class:`TeilError` (SPEC.md section 6).

Errors are values carrying a source :class:`~core_teil.lang.syntax.Span` until the
CLI renders them; the CLI is the only place that prints or exits.  Each class
fixes the exit code SPEC.md assigns to its kind of failure, and names the rule
or obligation involved so that a message can always say *why*.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar


@dataclass(frozen=True)
class Span:
    """A region of a source file: 1-based line and column, end exclusive.

    ``node`` names where a program that was not written as text came from, e.g.
    ``node 'mm' (MatMul)`` of an ONNX model (issue 12): it replaces the line and
    column in messages, which then read ``model.onnx: node 'mm' (MatMul): ...``;
    the line and column, when known, still point into the program's printed form."""

    file: str = "<string>"
    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    node: str = ""

    @property
    def known(self) -> bool:
        return self.line > 0 or bool(self.node)

    def __str__(self) -> str:
        if self.node:
            return f"{self.file}: {self.node}"
        return f"{self.file}:{self.line}:{self.column}" if self.known else self.file


NO_SPAN = Span()


def in_file(file: str) -> str:
    """``"FILE: "`` to start a message that has no line to point at, so that it still names the
    file (SPEC.md section 6); empty for a program that is no file (``<string>``, ``<ops>``)."""
    return f"{file}: " if file and not file.startswith("<") else ""


#: At most this many characters of the offending line are shown.
CONTEXT_WIDTH = 120


class TeilError(Exception):
    """Root of every error the tool reports; ``exit_code`` is SPEC.md's."""

    exit_code = 2
    kind = "error"

    def __init__(self, message: str, span: Span = NO_SPAN, rule: str | None = None,
                 source: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.rule = rule
        self.source = source

    def with_source(self, source: str | None) -> TeilError:
        if self.source is None:
            self.source = source
        return self

    def render(self) -> str:
        """``file:line:col: kind [rule]: message`` then the line and a caret (as lark)."""
        head = f"{self.span}: {self.kind}" if self.span.known else f"core-teil: {self.kind}"
        if self.rule:
            head += f" [{self.rule}]"
        lines = [f"{head}: {self.message}"]
        context = self.context()
        if context:
            lines.append(context)
        return "\n".join(lines)

    def context(self) -> str:
        if self.source is None or not self.span.known:
            return ""
        text_lines = self.source.splitlines()
        if not 1 <= self.span.line <= len(text_lines):
            return ""
        line = text_lines[self.span.line - 1].expandtabs(1)
        start = max(self.span.column, 1)
        if self.span.end_line == self.span.line and self.span.end_column > start:
            width = self.span.end_column - start
        else:
            width = 1
        width = max(1, min(width, len(line) - start + 1))
        # A very long line (a generated kernel, a fuzzed file) is clipped around the caret.
        if len(line) > CONTEXT_WIDTH:
            left = max(0, start - 1 - CONTEXT_WIDTH // 4)
            shown = line[left:left + CONTEXT_WIDTH]
            prefix = "…" if left else ""
            suffix = "…" if left + CONTEXT_WIDTH < len(line) else ""
            line = prefix + shown + suffix
            start = start - left + len(prefix)
            width = max(1, min(width, CONTEXT_WIDTH - (start - 1 - len(prefix))))
        gutter = f"{self.span.line:>5} | "
        return f"{gutter}{line}\n{' ' * len(gutter)}{' ' * (start - 1)}{'^' * width}"

    def __str__(self) -> str:
        return self.render()


class TeilSyntaxError(TeilError):
    """The text is not a program of SPEC.md section 2 (exit 2)."""

    kind = "syntax error"


class TeilTypeError(TeilError):
    """The program is ill-formed: a rule of SPEC.md section 3 fails (exit 1).

    ``counterexample`` holds a parameter assignment when a side condition
    fails only for some shapes."""

    exit_code = 1
    kind = "type error"

    def __init__(self, message: str, span: Span = NO_SPAN, rule: str | None = None,
                 source: str | None = None,
                 counterexample: dict[str, int] | None = None) -> None:
        super().__init__(message, span, rule, source)
        self.counterexample = counterexample


class TeilInputError(TeilError):
    """Bad input or usage: unreadable file, missing or ill-shaped array, bad ``--param`` (exit 2)."""

    kind = "input error"


class TeilResourceError(TeilInputError):
    """A request the machine cannot honour, e.g. an allocation too large to hold (exit 2)."""

    kind = "resource error"


class TeilUnknown(TeilError):
    """The solver could not decide a side condition within its resource limit (exit 3)."""

    exit_code = 3
    kind = "unknown"


F = TypeVar("F", bound=Callable[..., Any])


def checked_call(fn: F) -> F:
    """``fn`` as a public entry point (SPEC.md section 6: every error derives from TeilError):
    a call whose arguments do not bind to ``fn``'s signature (an unknown keyword, too many
    positional arguments, a missing one) is a :class:`TeilInputError` naming the function, the
    bad argument and how it is called, not Python's TypeError.

    Python binds the arguments before ``fn``'s body runs, so the signature is consulted only
    when ``fn`` raises a TypeError, and only a binding that fails is rewritten; a TypeError
    from inside ``fn`` passes on unchanged."""
    name = f"ct.{fn.__name__}"

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TypeError:
            sig = inspect.signature(fn)
            try:
                sig.bind(*args, **kwargs)
            except TypeError as bad:
                raise TeilInputError(f"{name}: {bad}; it is called as {name}{_bare(sig)}") from None
            raise

    return call  # type: ignore[return-value]


def _bare(sig: inspect.Signature) -> str:
    """A signature without its annotations: ``(program, inputs=None, params=None, pad=None)``."""
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))
