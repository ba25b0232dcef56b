"""Parser for ``.teil`` files: text to the AST of :mod:`core_teil.lang.syntax`.

Implements the concrete syntax of SPEC.md section 2 (paper 000, Fig. 5 for
full TeIL, Fig. 12 for Core-TeIL)::

    program ::= ('lang' ('core' | 'full'))?  decl*  stmt*
    decl    ::= 'param' ID (',' ID)*
              | 'assume' cond ('and' cond)*
              | qual? 'alloc' ID ':' '[' (dim (',' dim)*)? ']'
    stmt    ::= ID '=' expr
    expr    ::= ID | '(' expr ')' | OP arg* expr+
    cond    ::= lin ('<=' | '<' | '>=' | '>' | '==' | '!=') lin
    lin     ::= ['-'] term (('+' | '-') term)*
    term    ::= INT | ID | INT '*' ID

The grammar is LL(1) apart from one token of look-ahead (``ID '='`` begins a
statement), so a hand-written recursive-descent parser suffices.  Expressions
are parsed with an explicit stack instead of recursion: nesting is bounded by
:data:`MAX_DEPTH`, and no input can make the parser raise ``RecursionError``.
Every failure is a :class:`~core_teil.errors.TeilSyntaxError` whose span
points at the offending token; messages follow lark's ``match_examples`` in
spirit, naming the typical mistake (wrong dialect, missing argument, ...).
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import NamedTuple, NoReturn

from ..errors import Span, TeilInputError, TeilSyntaxError
from .syntax import (
    Alloc,
    Assume,
    Cond,
    CondOp,
    Contr,
    ContrAt,
    Decl,
    Diag,
    DiagAt,
    Dialect,
    Dim,
    Elem,
    Expa,
    ExpaAt,
    Expr,
    Lin,
    LinTerm,
    Param,
    Prod,
    Program,
    Proj,
    ProjAt,
    Red,
    RedAt,
    Stmt,
    Transp,
    TranspAt,
    Var,
)

__all__ = ["KEYWORDS", "MAX_DEPTH", "MAX_INT_DIGITS", "MAX_SOURCE_BYTES", "load", "parse", "read_source"]

#: Deepest expression accepted (``syntax.depth``: a variable has depth 1), and
#: also the deepest nesting of parentheses.  Later passes recurse over
#: expressions, so the bound protects them as well as the parser.
MAX_DEPTH = 200

#: Longest integer literal.  CPython refuses ``int()`` of more than 4300
#: digits by default; a fixed, lower bound keeps behaviour independent of
#: ``sys.set_int_max_str_digits``.
MAX_INT_DIGITS = 4000

OPERATORS = ("add", "sub", "mul", "div", "prod", "red", "contr", "diag", "transp", "expa", "proj")
DECL_KEYWORDS = frozenset({"param", "assume", "input", "output", "alloc"})
KEYWORDS = frozenset({"lang", "core", "full", "and", *DECL_KEYWORDS, *OPERATORS})
COND_OPS: tuple[CondOp, ...] = ("<=", "<", ">=", ">", "==", "!=")

# --------------------------------------------------------------------------
# Operator signatures (SPEC.md section 2, table; paper Figs. 5 and 12)
# --------------------------------------------------------------------------

#: Per dialect and operator: the kinds of the leading non-tensor arguments
#: ("int" is a position, "dim" an integer or a parameter name) and the number
#: of tensor arguments.  Fixed arity is what makes the grammar unambiguous.
_Signature = tuple[tuple[str, ...], int]
SIGNATURES: dict[str, dict[str, _Signature]] = {
    "core": {
        "add": ((), 2), "sub": ((), 2), "mul": ((), 2), "div": ((), 2), "prod": ((), 2),
        "red": ((), 1), "contr": ((), 1), "diag": ((), 1),
        "transp": (("int",), 1), "expa": (("dim",), 1), "proj": (("dim",), 1),
    },
    "full": {
        "add": ((), 2), "sub": ((), 2), "mul": ((), 2), "div": ((), 2), "prod": ((), 2),
        "red": (("int",), 1), "contr": (("int", "int"), 1), "diag": (("int", "int"), 1),
        "transp": (("int", "int"), 1), "expa": (("int", "dim"), 1), "proj": (("int", "dim"), 1),
    },
}

#: The operators whose form differs between the dialects: mistakes with these
#: usually mean a missing or wrong ``lang`` line, so the messages say so.
_USAGE: dict[str, dict[str, str]] = {
    "core": {
        "red": "no integer position, only an expression",
        "contr": "no integer positions, only an expression",
        "diag": "no integer positions, only an expression",
        "transp": "one integer position then an expression",
        "expa": "one extent (an integer or a parameter) then an expression",
        "proj": "one index (an integer or a parameter) then an expression",
    },
    "full": {
        "red": "one integer position then an expression",
        "contr": "two integer positions then an expression",
        "diag": "two integer positions then an expression",
        "transp": "two integer positions then an expression",
        "expa": "an integer position and an extent (an integer or a parameter) then an expression",
        "proj": "an integer position and an index (an integer or a parameter) then an expression",
    },
}
_OTHER = {"core": "full", "full": "core"}

# --------------------------------------------------------------------------
# Lexer
# --------------------------------------------------------------------------

# The line breaks of ``str.splitlines``: error rendering counts lines that
# way, so the lexer must agree or carets would land on the wrong line.
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_TOKEN_RE = re.compile(
    f"(?P<skip>[ \t{_BREAKS}]+|#[^{_BREAKS}]*)"
    r"|(?P<int>[0-9]+)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op><=|>=|==|!=|[<>=:\[\],()+\-*])"
)
_NAME_CHAR = re.compile(r"[A-Za-z0-9_]")
_NAME_TAIL = re.compile(r"[A-Za-z0-9_]*")


class Token(NamedTuple):
    """One lexeme; ``kind`` is int, name, kw, op, eof or error (a deferred lexical error)."""

    kind: str
    text: str
    line: int
    column: int
    end_column: int
    value: int | str | None = None


class _Lines:
    """Maps string offsets to 1-based (line, column), counting lines as ``splitlines`` does."""

    def __init__(self, text: str) -> None:
        self.starts = [0]
        for piece in text.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(piece))

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self.starts, offset) - 1
        # An offset at the very end of text ending in a break belongs to the last line's end.
        line = min(line, max(len(self.starts) - 2, 0))
        return line + 1, offset - self.starts[line] + 1


def _describe_char(ch: str) -> str:
    """Printable characters quoted as typed; others by code point, so NULs stay visible."""
    return repr(ch) if ch.isprintable() else f"U+{ord(ch):04X}"


def _lex(text: str) -> list[Token]:
    """All tokens, ending in ``eof``, or in an ``error`` token at the first bad character.

    Lexical errors are deferred to the parser so that an earlier syntax
    error is reported first, as a streaming lexer would.
    """
    lines = _Lines(text)
    tokens: list[Token] = []
    pos, size = 0, len(text)
    while pos < size:
        m = _TOKEN_RE.match(text, pos)
        line, col = lines.position(pos)
        if m is None:
            message = f"unexpected character {_describe_char(text[pos])}"
            tokens.append(Token("error", text[pos], line, col, col + 1, message))
            return tokens
        kind, lexeme, end = m.lastgroup or "skip", m.group(), m.end()
        if kind == "int":
            token = _int_token(text, lexeme, end, line, col)
        elif kind == "name":
            token, end = _name_token(text, lexeme, end, line, col)
        elif kind == "op":
            token = Token("op", lexeme, line, col, col + len(lexeme), lexeme)
        else:
            pos = end
            continue
        tokens.append(token)
        if token.kind == "error":
            return tokens
        pos = end
    line, col = (tokens[-1].line, tokens[-1].end_column) if tokens else (1, 1)
    tokens.append(Token("eof", "", line, col, col + 1))
    return tokens


def _int_token(text: str, lexeme: str, end: int, line: int, col: int) -> Token:
    """An integer literal, or an error token for ``2A`` and for absurdly long literals."""
    end_col = col + len(lexeme)
    if end < len(text) and _NAME_CHAR.match(text, end):
        bad = lexeme + _NAME_TAIL.match(text, end).group()  # type: ignore[union-attr]
        message = f"malformed integer literal `{_shorten(bad)}` (identifiers cannot start with a digit)"
        return Token("error", bad, line, col, col + len(bad), message)
    if len(lexeme) > MAX_INT_DIGITS:
        message = f"integer literal `{_shorten(lexeme)}` is too long (more than {MAX_INT_DIGITS} digits)"
        return Token("error", lexeme, line, col, end_col, message)
    try:
        value = int(lexeme)
    except ValueError:  # sys.set_int_max_str_digits may be lower than MAX_INT_DIGITS
        message = f"integer literal `{_shorten(lexeme)}` is too long"
        return Token("error", lexeme, line, col, end_col, message)
    return Token("int", lexeme, line, col, end_col, value)


def _name_token(text: str, lexeme: str, end: int, line: int, col: int) -> tuple[Token, int]:
    """An identifier or keyword; ``red+`` (paper notation for ``red``) is one token."""
    if lexeme == "red" and text.startswith("+", end):
        return Token("kw", "red+", line, col, col + 4, "red"), end + 1
    kind = "kw" if lexeme in KEYWORDS else "name"
    return Token(kind, lexeme, line, col, col + len(lexeme), lexeme), end


def _shorten(s: str, limit: int = 24) -> str:
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _describe(tok: Token) -> str:
    """How a token is named in messages."""
    if tok.kind == "eof":
        return "end of input"
    if tok.kind == "int":
        return f"integer `{_shorten(tok.text)}`"
    if tok.kind == "kw":
        return f"keyword `{tok.text}`"
    if tok.kind == "name":
        return f"`{_shorten(tok.text)}`"
    return f"'{tok.text}'"


# --------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------


@dataclass
class _OpFrame:
    """An operator whose tensor arguments are still being read."""

    tok: Token
    op: str
    scalars: tuple[Dim, ...]
    need: int
    args: list[Expr] = field(default_factory=list)


@dataclass
class _ParenFrame:
    """An open parenthesis waiting for its expression and ``)``."""

    tok: Token


class _Parser:
    """Recursive descent over the token list; one instance parses one text."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.tokens = _lex(text)
        self.pos = 0
        self.prev: Token = self.tokens[0]
        self.dialect: Dialect = "core"

    # -- token plumbing -----------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        tok = self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]
        if tok.kind == "error":
            self.fail(str(tok.value), tok)
        return tok

    def advance(self) -> Token:
        tok = self.peek()
        if tok.kind != "eof":
            self.pos += 1
        self.prev = tok
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok.kind in ("op", "kw") and tok.text == text

    def at_stmt_start(self) -> bool:
        """``ID '='``: the one place where the grammar needs a second token of look-ahead."""
        nxt = self.peek(1)
        return self.peek().kind == "name" and nxt.kind == "op" and nxt.text == "="

    def span(self, first: Token, last: Token | None = None) -> Span:
        last = first if last is None else last
        return Span(self.file, first.line, first.column, last.line, last.end_column)

    def fail(self, message: str, where: Token | Span) -> NoReturn:
        span = where if isinstance(where, Span) else self.span(where)
        raise TeilSyntaxError(message, span, None, self.text)

    def expect(self, text: str, message: str) -> Token:
        if not self.at(text):
            self.fail(f"{message}, found {_describe(self.peek())}", self.peek())
        return self.advance()

    def name(self, role: str) -> Token:
        """An identifier that names a ``role`` (allocation, parameter)."""
        tok = self.peek()
        if tok.kind == "kw":
            self.fail(f"`{tok.text}` is a keyword and cannot name {role}", tok)
        if tok.kind != "name":
            self.fail(f"expected the name of {role}, found {_describe(tok)}", tok)
        return self.advance()

    # -- program and declarations (SPEC.md section 2) -----------------------

    def program(self) -> Program:
        if self.at("lang"):
            self.lang()
        decls: list[Decl] = []
        stmts: list[Stmt] = []
        while self.peek().kind != "eof":
            tok = self.peek()
            if tok.kind == "kw" and tok.text in DECL_KEYWORDS:
                if stmts:
                    self.fail(f"declarations must come before statements, but `{tok.text}` follows "
                              f"the statement at line {stmts[-1].span.line}", tok)
                decls.append(self.decl())
            elif stmts and self.starts_extra_argument():
                self.extra_after_statement(stmts[-1])
            else:
                stmts.append(self.stmt())
        return Program(self.dialect, tuple(decls), tuple(stmts), file=self.file)

    def lang(self) -> None:
        self.advance()
        tok = self.peek()
        if not (tok.kind == "kw" and tok.text in ("core", "full")):
            self.fail(f"expected `core` or `full` after `lang`, found {_describe(tok)}", tok)
        self.dialect = "core" if self.advance().text == "core" else "full"

    def decl(self) -> Decl:
        tok = self.peek()
        if tok.text == "param":
            return self.param()
        if tok.text == "assume":
            return self.assume()
        return self.alloc()

    def param(self) -> Param:
        first = self.advance()
        names = [self.name("a parameter").text]
        while self.at(","):
            self.advance()
            names.append(self.name("a parameter").text)
        return Param(tuple(names), span=self.span(first, self.prev))

    def assume(self) -> Assume:
        first = self.advance()
        conds = [self.cond()]
        while self.at("and"):
            self.advance()
            conds.append(self.cond())
        return Assume(tuple(conds), span=self.span(first, self.prev))

    def alloc(self) -> Alloc:
        first = self.peek()
        qual = None
        if first.text in ("input", "output"):
            qual = "input" if self.advance().text == "input" else "output"
            self.expect("alloc", f"expected `alloc` after `{qual}`")
        else:
            self.advance()
        name = self.name("an allocation").text
        self.expect(":", f"expected ':' after the allocation name `{name}`")
        self.expect("[", "expected '[' to start the shape")
        dims: list[Dim] = []
        if not self.at("]"):
            dims.append(self.dim())
            while self.at(","):
                self.advance()
                dims.append(self.dim())
        self.expect("]", "expected ']' to close the shape (or ',' and another dimension)")
        return Alloc(name, tuple(dims), qual, span=self.span(first, self.prev))

    def dim(self) -> Dim:
        tok = self.peek()
        if tok.kind == "int":
            return int(self.advance().value)  # type: ignore[arg-type]
        if tok.kind == "kw":
            self.fail(f"`{tok.text}` is a keyword and cannot name a parameter", tok)
        if tok.kind != "name":
            self.fail(f"expected a dimension (an integer or a parameter name), found {_describe(tok)}", tok)
        return self.advance().text

    # -- conditions ----------------------------------------------------------

    def cond(self) -> Cond:
        first = self.peek()
        lhs = self.lin()
        tok = self.peek()
        if not (tok.kind == "op" and tok.text in COND_OPS):
            self.fail(f"expected a comparison ({' '.join(COND_OPS)}), found {_describe(tok)}", tok)
        op: CondOp = self.advance().text  # type: ignore[assignment]
        rhs = self.lin()
        return Cond(lhs, op, rhs, span=self.span(first, self.prev))

    def lin(self) -> Lin:
        sign = 1
        if self.at("-"):
            self.advance()
            sign = -1
        terms = [self.term(sign)]
        while self.at("+") or self.at("-"):
            sign = 1 if self.advance().text == "+" else -1
            terms.append(self.term(sign))
        return Lin(tuple(terms))

    def term(self, sign: int) -> LinTerm:
        tok = self.peek()
        if tok.kind == "int":
            coef = sign * int(self.advance().value)  # type: ignore[arg-type]
            if not self.at("*"):
                return LinTerm(coef)
            self.advance()
            return LinTerm(coef, self.name("a parameter").text)
        if tok.kind == "kw":
            self.fail(f"`{tok.text}` is a keyword and cannot name a parameter", tok)
        if tok.kind != "name":
            self.fail(f"expected an integer or a parameter name, found {_describe(tok)}", tok)
        return LinTerm(sign, self.advance().text)

    # -- statements ------------------------------------------------------------

    def stmt(self) -> Stmt:
        tok = self.peek()
        nxt = self.peek(1)
        if tok.kind == "kw" and nxt.kind == "op" and nxt.text == "=":
            self.fail(f"`{tok.text}` is a keyword and cannot name an allocation", tok)
        if tok.kind == "kw" and tok.text == "lang":
            self.fail("`lang` must come first, before every declaration and statement", tok)
        if tok.kind == "kw" and tok.value in OPERATORS:
            self.fail(f"expected a statement `x = e`, found keyword `{tok.text}` (missing `x =`?)", tok)
        if tok.kind != "name":
            self.fail(f"expected a declaration or a statement `x = e`, found {_describe(tok)}", tok)
        self.advance()
        self.expect("=", f"expected '=' after `{tok.text}` (a statement is `x = e`)")
        expr = self.expr()
        return Stmt(tok.text, expr, span=self.span(tok, self.prev))

    def starts_extra_argument(self) -> bool:
        """A token that could only continue an expression, right after a complete statement."""
        tok = self.peek()
        if tok.kind == "name":
            return not self.at_stmt_start()
        return tok.kind == "int" or (tok.kind == "op" and tok.text in "()")

    def extra_after_statement(self, stmt: Stmt) -> NoReturn:
        tok = self.peek()
        if tok.kind == "op" and tok.text == ")":
            self.fail("unmatched ')'", tok)
        self.fail(f"unexpected {_describe(tok)} after the complete statement `{stmt.target} = ...` "
                  f"(too many arguments?{self.dialect_hint(stmt.expr)})", tok)

    def dialect_hint(self, expr: Expr) -> str:
        """Suggest ``lang full`` when a core operator at the end of ``expr`` took too few arguments.

        Only core needs this: full-TeIL operators take more integer arguments,
        so writing them in lang core leaves stray tokens behind, never the
        other way round.
        """
        op = _last_variant_op(expr)
        if self.dialect != "core" or op is None:
            return ""
        return f" in lang core `{op}` takes {_USAGE['core'][op]}; did you mean `lang full`?"

    # -- expressions (explicit stack: depth is bounded by MAX_DEPTH) -----------

    def expr(self) -> Expr:
        """``expr ::= ID | '(' expr ')' | OP arg* expr+`` without Python recursion."""
        stack: list[_OpFrame | _ParenFrame] = []
        depth = [0, 0]  # open operators, open parentheses
        while True:
            atom = self.descend(stack, depth)
            if atom is None:
                continue
            done = self.ascend(stack, depth, atom)
            if done is not None:
                return done

    def descend(self, stack: list[_OpFrame | _ParenFrame], depth: list[int]) -> Expr | None:
        """Read one token that starts an expression: a variable, or push a frame (return None)."""
        tok = self.peek()
        if tok.kind == "name":
            if self.at_stmt_start():
                self.operand_is_next_statement(stack, tok)
            self.advance()
            return Var(tok.text, span=self.span(tok))
        if tok.kind == "op" and tok.text == "(":
            if depth[1] >= MAX_DEPTH:
                self.fail(f"expression nested deeper than {MAX_DEPTH} levels of parentheses "
                          "(split it into several statements)", tok)
            depth[1] += 1
            stack.append(_ParenFrame(self.advance()))
            return None
        if tok.kind == "kw" and tok.value in OPERATORS:
            # An operand read under n open operators has depth n + 1 (syntax.depth).
            if depth[0] + 2 > MAX_DEPTH:
                self.fail(f"expression nested deeper than {MAX_DEPTH} levels "
                          "(split it into several statements)", tok)
            depth[0] += 1
            stack.append(self.operator())
            return None
        self.missing_operand(stack, tok)

    def ascend(self, stack: list[_OpFrame | _ParenFrame], depth: list[int], result: Expr) -> Expr | None:
        """Feed a finished operand to the open frames; the whole expression once all are closed."""
        while stack:
            top = stack[-1]
            if isinstance(top, _ParenFrame):
                self.close_paren(top, result)
                stack.pop()
                depth[1] -= 1
                continue
            top.args.append(result)
            if len(top.args) < top.need:
                return None
            stack.pop()
            depth[0] -= 1
            result = self.build(top)
        return result

    def operator(self) -> _OpFrame:
        """The operator keyword and its integer/extent arguments, read flat."""
        tok = self.advance()
        op = str(tok.value)
        kinds, need = SIGNATURES[self.dialect][op]
        scalars: list[Dim] = []
        for kind in kinds:
            arg = self.peek()
            if arg.kind == "int" or (kind == "dim" and arg.kind == "name"):
                self.advance()
                scalars.append(arg.value)  # type: ignore[arg-type]
                continue
            hint = f" (did you mean `lang {_OTHER[self.dialect]}`?)" if self.dialect == "full" else ""
            if kind == "int" and arg.kind == "name" and self.peek(1).kind == "int":
                hint = " (dimension positions are integer literals; a shape parameter cannot be one)"
            self.fail(f"`{op}` in lang {self.dialect} takes {_USAGE[self.dialect][op]}, "
                      f"found {_describe(arg)}{hint}", arg)
        return _OpFrame(tok, op, tuple(scalars), need)

    def build(self, frame: _OpFrame) -> Expr:
        """The AST node for a complete operator application (SPEC.md section 2 table)."""
        span = self.span(frame.tok, self.prev)
        op, s, a = frame.op, frame.scalars, frame.args
        if op in ("add", "sub", "mul", "div"):
            return Elem(op, a[0], a[1], span=span)  # type: ignore[arg-type]
        if op == "prod":
            return Prod(a[0], a[1], span=span)
        if self.dialect == "core":
            return _build_core(op, s, a[0], span)
        return _build_full(op, s, a[0], span)

    def close_paren(self, frame: _ParenFrame, inside: Expr) -> None:
        tok = self.peek()
        if tok.kind == "op" and tok.text == ")":
            self.advance()
            return
        if tok.kind == "eof" or self.at_stmt_start() or (tok.kind == "kw" and tok.text in DECL_KEYWORDS):
            self.fail("unterminated parenthesis: this '(' is never closed", frame.tok)
        if tok.kind in ("name", "int", "kw") or tok.text == "(":
            self.fail(f"expected ')', found {_describe(tok)} "
                      f"(too many arguments?{self.dialect_hint(inside)})", tok)
        self.fail(f"expected ')', found {_describe(tok)}", tok)

    def operand_is_next_statement(self, stack: list[_OpFrame | _ParenFrame], tok: Token) -> NoReturn:
        """``x =`` where an operand was due: the expression before it ended too early."""
        if not stack:
            self.fail(f"expected an expression after '=', found the statement `{tok.text} = ...`", tok)
        top = stack[-1]
        if isinstance(top, _ParenFrame):
            self.fail("unterminated parenthesis: this '(' is never closed", top.tok)
        self.arity_error(top)

    def missing_operand(self, stack: list[_OpFrame | _ParenFrame], tok: Token) -> NoReturn:
        """No expression can start at ``tok``: say which argument of what was expected."""
        top = stack[-1] if stack else None
        ends = tok.kind == "eof" or (tok.kind == "op" and tok.text == ")") or (
            tok.kind == "kw" and tok.text in DECL_KEYWORDS | {"lang"})
        if isinstance(top, _ParenFrame):
            if tok.kind == "eof":
                self.fail("unterminated parenthesis: this '(' is never closed", top.tok)
            if tok.kind == "op" and tok.text == ")":
                self.fail("expected an expression inside '(' ')'", tok)
        elif isinstance(top, _OpFrame):
            if tok.kind == "int" and self.dialect == "core" and top.op in _USAGE["core"] and not top.args:
                self.fail(f"`{top.op}` in lang core takes {_USAGE['core'][top.op]} "
                          "(did you mean `lang full`?)", tok)
            if ends:
                self.arity_error(top)
            self.fail(f"expected an expression as argument {len(top.args) + 1} of `{top.op}`, "
                      f"found {self.operand_description(tok)}", tok)
        self.fail(f"expected an expression, found {self.operand_description(tok)}", tok)

    @staticmethod
    def operand_description(tok: Token) -> str:
        if tok.kind == "kw" and tok.text not in OPERATORS:
            return f"keyword `{tok.text}` (keywords cannot name allocations)"
        return _describe(tok)

    def arity_error(self, frame: _OpFrame) -> NoReturn:
        n, k = frame.need, len(frame.args)
        plural = "argument" if n == 1 else "arguments"
        usage = _USAGE[self.dialect].get(frame.op)
        extra = f" (in lang {self.dialect} `{frame.op}` takes {usage})" if usage else ""
        self.fail(f"`{frame.op}` takes {n} tensor {plural}, found {k}{extra}", frame.tok)


_CORE_NAMES: dict[type[Expr], str] = {
    Red: "red", Contr: "contr", Diag: "diag", Transp: "transp", Expa: "expa", Proj: "proj",
}


def _last_variant_op(expr: Expr) -> str | None:
    """The innermost core operator on the right spine of ``expr``: the one that ends its text.

    Written ``expa 1 k A`` in lang core, ``expa`` takes ``1`` and ``k`` and
    leaves ``A`` over, so it is the operator to blame.
    """
    found = None
    node: Expr | None = expr
    while node is not None:
        found = _CORE_NAMES.get(type(node), found)
        children = node.children()
        node = children[-1] if children else None
    return found


def _build_core(op: str, s: tuple[Dim, ...], arg: Expr, span: Span) -> Expr:
    """Core-TeIL operators act on the first dimension(s) (paper Fig. 12)."""
    if op == "red":
        return Red(arg, span=span)
    if op == "contr":
        return Contr(arg, span=span)
    if op == "diag":
        return Diag(arg, span=span)
    if op == "transp":
        return Transp(int(s[0]), arg, span=span)
    if op == "expa":
        return Expa(s[0], arg, span=span)
    return Proj(s[0], arg, span=span)


def _build_full(op: str, s: tuple[Dim, ...], arg: Expr, span: Span) -> Expr:
    """Full-TeIL operators carry their 1-based positions (paper Fig. 5)."""
    i = int(s[0])
    if op == "red":
        return RedAt(i, arg, span=span)
    if op == "contr":
        return ContrAt(i, int(s[1]), arg, span=span)
    if op == "diag":
        return DiagAt(i, int(s[1]), arg, span=span)
    if op == "transp":
        return TranspAt(i, int(s[1]), arg, span=span)
    if op == "expa":
        return ExpaAt(i, s[1], arg, span=span)
    return ProjAt(i, s[1], arg, span=span)


# --------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------


def parse(text: str, file: str = "<string>") -> Program:
    """Parse the text of a ``.teil`` program (SPEC.md section 2).

    Raises :class:`TeilSyntaxError` (and nothing else) for any string that is
    not a program; the error's span is the offending token in ``file``.
    """
    if not isinstance(text, str):
        raise TeilInputError(f"{file}: expected program text as str, got {type(text).__name__}")
    return _Parser(text, str(file)).program()


#: The most bytes a ``.teil`` file may have (16 MiB; the largest example is 1.5 KB, a program
#: generated from a large ONNX graph some hundred KB).  Reading stops there, so that
#: ``/dev/zero`` or a mistaken multi-GB file is refused at once, by name (issue 11).
MAX_SOURCE_BYTES = 16 << 20


def read_source(path: str | os.PathLike[str]) -> str:
    """The text of a ``.teil`` file: the one reader of ``ct.load`` and of every CLI command.

    UTF-8, at most :data:`MAX_SOURCE_BYTES`; a leading byte-order mark (Windows editors
    write one) is not part of the program.  Anything else is a :class:`TeilInputError`
    naming the file (exit 2)."""
    if not isinstance(path, str | os.PathLike):
        raise TeilInputError(f"expected the path of a .teil file, not {type(path).__name__}")
    name = os.fspath(path)
    if not isinstance(name, str):
        raise TeilInputError(f"expected the path of a .teil file as text, not {type(name).__name__}")
    where = Span(name)
    try:
        with open(name, "rb") as handle:
            data = handle.read(MAX_SOURCE_BYTES + 1)
    except FileNotFoundError:
        raise TeilInputError(f"{name}: no such file", where) from None
    except IsADirectoryError:
        raise TeilInputError(f"{name}: is a directory, not a .teil file", where) from None
    except (OSError, ValueError) as exc:  # ValueError: e.g. a NUL byte in the path
        reason = getattr(exc, "strerror", None) or str(exc)
        raise TeilInputError(f"{name}: cannot read ({reason})", where) from None
    if len(data) > MAX_SOURCE_BYTES:
        raise TeilInputError(f"{name}: more than {MAX_SOURCE_BYTES:,} bytes, the most a .teil file may have "
                             f"(is it a program?)", where)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TeilInputError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})", where) from None
    return text.removeprefix("\ufeff")


def load(path: str | os.PathLike[str]) -> Program:
    """Read ``path`` (:func:`read_source`) and parse it."""
    return parse(read_source(path), os.fspath(path))
