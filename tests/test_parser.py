"""Tests of core_teil.lang.parser against SPEC.md section 2 (paper 000, Figs. 5 and 12)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core_teil.errors import Span, TeilError, TeilInputError, TeilSyntaxError
from core_teil.lang.parser import KEYWORDS, MAX_DEPTH, load, parse
from core_teil.lang.printer import format_program
from core_teil.lang.syntax import (
    Alloc,
    Assume,
    Cond,
    Contr,
    ContrAt,
    Diag,
    DiagAt,
    Elem,
    Expa,
    ExpaAt,
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
    depth,
)
from tests.strategies import SETTINGS, programs

A, B, C = Var("A"), Var("B"), Var("C")


def expr_of(text: str, dialect: str = "core"):
    """The expression of the single statement ``X = text``."""
    return parse(f"lang {dialect}\nX = {text}").stmts[0].expr


def syntax_error(text: str) -> TeilSyntaxError:
    with pytest.raises(TeilSyntaxError) as info:
        parse(text, "f.teil")
    return info.value


# --------------------------------------------------------------------------
# Accepted programs
# --------------------------------------------------------------------------

MATMUL_CORE = """\
# paper 000, Fig. 7, in Core-TeIL
alloc A : [3, 4]
alloc B : [4, 5]
alloc C : [3, 5]
C = red (diag (transp 2 (prod A B)))
"""

MATMUL_FULL = """\
lang full
alloc A : [3, 4]   # paper 000, Fig. 10b
alloc B : [3, 5]
alloc C : [4, 5]
C = contr 1 3 (prod A B)
"""


def test_paper_matmul_core() -> None:
    p = parse(MATMUL_CORE)
    assert p.dialect == "core"
    assert p.decls == (Alloc("A", (3, 4)), Alloc("B", (4, 5)), Alloc("C", (3, 5)))
    assert p.stmts == (Stmt("C", Red(Diag(Transp(2, Prod(A, B))))),)


def test_paper_contraction_full() -> None:
    p = parse(MATMUL_FULL)
    assert p.dialect == "full"
    assert p.stmts == (Stmt("C", ContrAt(1, 3, Prod(A, B))),)


def test_paper_fig11_full() -> None:
    p = parse("""lang full
        alloc A : [m, n] alloc B : [k, m, n] alloc C : [m, n] alloc D : [k, m, n]
        C = add A (proj 1 2 B)
        D = add (expa 1 k A) B""")
    assert p.stmts == (
        Stmt("C", Elem("add", A, ProjAt(1, 2, B))),
        Stmt("D", Elem("add", ExpaAt(1, "k", A), B)),
    )


def test_paper_fig7_red_plus_full() -> None:
    assert expr_of("red+ 2 (diag 2 3 (prod A B))", "full") == RedAt(2, DiagAt(2, 3, Prod(A, B)))


def test_contr_is_core_primitive() -> None:
    assert expr_of("contr (prod A B)") == Contr(Prod(A, B))


@pytest.mark.parametrize(("text", "tree"), [
    ("A", A),
    ("(A)", A),
    ("((A))", A),
    ("add A B", Elem("add", A, B)),
    ("sub A B", Elem("sub", A, B)),
    ("mul A B", Elem("mul", A, B)),
    ("div A B", Elem("div", A, B)),
    ("prod A B", Prod(A, B)),
    ("red A", Red(A)),
    ("red+ A", Red(A)),
    ("contr A", Contr(A)),
    ("diag A", Diag(A)),
    ("transp 1 A", Transp(1, A)),
    ("expa 3 A", Expa(3, A)),
    ("expa n A", Expa("n", A)),
    ("proj 2 A", Proj(2, A)),
    ("proj m A", Proj("m", A)),
    ("add red A B", Elem("add", Red(A), B)),
    ("prod prod A B C", Prod(Prod(A, B), C)),
    ("add (A) (B)", Elem("add", A, B)),
    ("transp 007 A", Transp(7, A)),
])
def test_core_operators(text: str, tree: object) -> None:
    assert expr_of(text, "core") == tree


@pytest.mark.parametrize(("text", "tree"), [
    ("add A B", Elem("add", A, B)),
    ("prod A B", Prod(A, B)),
    ("red 1 A", RedAt(1, A)),
    ("red+ 1 A", RedAt(1, A)),
    ("contr 1 2 A", ContrAt(1, 2, A)),
    ("diag 1 2 A", DiagAt(1, 2, A)),
    ("transp 1 3 A", TranspAt(1, 3, A)),
    ("expa 2 n A", ExpaAt(2, "n", A)),
    ("expa 2 5 A", ExpaAt(2, 5, A)),
    ("proj 1 m A", ProjAt(1, "m", A)),
    ("proj 1 2 A", ProjAt(1, 2, A)),
    ("red 1 red 1 A", RedAt(1, RedAt(1, A))),
])
def test_full_operators(text: str, tree: object) -> None:
    assert expr_of(text, "full") == tree


def test_no_lang_line_is_core() -> None:
    assert parse("X = red A").dialect == "core"
    assert parse("lang core X = red A").dialect == "core"


def test_empty_and_comment_only_programs() -> None:
    assert parse("") == Program("core", (), ())
    assert parse("# nothing\n\n   # at all\n") == Program("core", (), ())
    assert parse("lang full") == Program("full", (), ())


def test_declarations() -> None:
    p = parse("""
        param n, m
        input alloc A : [n, 3]
        assume n >= 2 and m == n
        output alloc s : []
        alloc T : [2, m, 1]
        param k
    """)
    assert p.decls == (
        Param(("n", "m")),
        Alloc("A", ("n", 3), "input"),
        Assume((Cond(Lin((LinTerm(1, "n"),)), ">=", Lin((LinTerm(2),))),
                Cond(Lin((LinTerm(1, "m"),)), "==", Lin((LinTerm(1, "n"),))))),
        Alloc("s", (), "output"),
        Alloc("T", (2, "m", 1)),
        Param(("k",)),
    )
    assert p.params == ("n", "m", "k")


@pytest.mark.parametrize(("text", "lin"), [
    ("2*n + 1", (LinTerm(2, "n"), LinTerm(1))),
    ("n - m", (LinTerm(1, "n"), LinTerm(-1, "m"))),
    ("-n + 3", (LinTerm(-1, "n"), LinTerm(3))),
    ("- 2 * n - 0*m", (LinTerm(-2, "n"), LinTerm(0, "m"))),
    ("0", (LinTerm(0),)),
    ("-7", (LinTerm(-7),)),
])
def test_linear_terms_keep_written_order(text: str, lin: tuple[LinTerm, ...]) -> None:
    cond = parse(f"assume {text} <= 1").conds[0]
    assert cond.lhs == Lin(lin)


@pytest.mark.parametrize("op", ["<=", "<", ">=", ">", "==", "!="])
def test_condition_operators(op: str) -> None:
    assert parse(f"assume n {op} 2").conds[0].op == op


def test_newlines_are_optional_and_statements_may_span_lines() -> None:
    one_line = parse("alloc A : [3] alloc B : [3] A = add B A B = A")
    assert one_line.stmts == (Stmt("A", Elem("add", B, A)), Stmt("B", A))
    spread = parse("alloc A : [3]\nA =\n  add   # comment\n  A\n  (A)\n")
    assert spread.stmts == (Stmt("A", Elem("add", A, A)),)


def test_whitespace_variants() -> None:
    p = parse("alloc\tA:[3,4]\r\nA=A\r\n\x0cB = A\u2028C = B")
    assert [s.target for s in p.stmts] == ["A", "B", "C"]


def test_identifiers_may_contain_keywords() -> None:
    p = parse("alloc adds : [n_1] alloc red_ : [] alloc _x9 : [3] adds = red_")
    assert [a.name for a in p.allocs] == ["adds", "red_", "_x9"]


def test_huge_integers_are_kept_exactly() -> None:
    big = 10**300 + 7
    p = parse(f"alloc A : [{big}]\nA = transp {big} A")
    assert p.decls[0] == Alloc("A", (big,))
    assert p.stmts[0].expr == Transp(big, A)


def test_program_records_file_name() -> None:
    assert parse("A = B", "k.teil").file == "k.teil"


# --------------------------------------------------------------------------
# Spans (SPEC.md section 6: every message names file, line and column)
# --------------------------------------------------------------------------


def test_spans_of_declarations_and_statements() -> None:
    text = "lang core\nparam n\ninput alloc A : [n, 3]\nassume n >= 2 and n < 9\n\nC = red (diag A)\n"
    p = parse(text, "k.teil")
    param, alloc, assume = p.decls
    assert param.span == Span("k.teil", 2, 1, 2, 8)
    assert alloc.span == Span("k.teil", 3, 1, 3, 23)
    assert assume.span == Span("k.teil", 4, 1, 4, 24)
    assert assume.conds[0].span == Span("k.teil", 4, 8, 4, 14)
    assert assume.conds[1].span == Span("k.teil", 4, 19, 4, 24)
    stmt = p.stmts[0]
    assert stmt.span == Span("k.teil", 6, 1, 6, 17)
    red = stmt.expr
    assert red.span == Span("k.teil", 6, 5, 6, 17)
    assert red.arg.span == Span("k.teil", 6, 10, 6, 16)  # parentheses are not part of the node
    assert red.arg.arg.span == Span("k.teil", 6, 15, 6, 16)


def test_spans_across_lines() -> None:
    p = parse("C = add A\n  (red+ B)")
    e = p.stmts[0].expr
    assert e.span == Span("<string>", 1, 5, 2, 11)
    assert e.right.span == Span("<string>", 2, 4, 2, 10)
    assert p.stmts[0].span == Span("<string>", 1, 1, 2, 11)


def test_full_operator_span_covers_integer_arguments() -> None:
    e = parse("lang full\nC = contr 1 3 (prod A B)").stmts[0].expr
    assert e.span == Span("<string>", 2, 5, 2, 25)
    assert e.arg.span == Span("<string>", 2, 16, 2, 24)


# --------------------------------------------------------------------------
# Rejected programs: one test per kind of message
# --------------------------------------------------------------------------

ERRORS = [
    # (text, message fragment, line, column)
    ("C = add A", "`add` takes 2 tensor arguments, found 1", 1, 5),
    ("C = add A\nD = B", "`add` takes 2 tensor arguments, found 1", 1, 5),
    ("C = prod (A)", "`prod` takes 2 tensor arguments, found 1", 1, 5),
    ("C = red", "`red` takes 1 tensor argument, found 0", 1, 5),
    ("C = (add A)", "`add` takes 2 tensor arguments, found 1", 1, 6),
    ("C = transp 1 2 A", "`transp` in lang core takes one integer position then an expression "
                         "(did you mean `lang full`?)", 1, 14),
    ("C = contr 1 3 (prod A B)", "`contr` in lang core takes no integer positions", 1, 11),
    ("C = transp A", "`transp` in lang core takes one integer position then an expression, found `A`", 1, 12),
    ("lang full\nC = red A", "`red` in lang full takes one integer position then an expression, "
                             "found `A` (did you mean `lang core`?)", 2, 9),
    ("lang full\nC = diag 1 (A)", "`diag` in lang full takes two integer positions", 2, 12),
    ("lang full\nC = expa 1 A", "`expa` takes 1 tensor argument, found 0 (in lang full", 2, 5),
    ("D = add (expa 1 k A) B", "expected ')', found `A` (too many arguments? in lang core `expa`", 1, 19),
    ("C = expa 1 k A", "unexpected `A` after the complete statement", 1, 14),
    ("alloc add : [3]", "`add` is a keyword and cannot name an allocation", 1, 7),
    ("add = A", "`add` is a keyword and cannot name an allocation", 1, 1),
    ("param n, core", "`core` is a keyword and cannot name a parameter", 1, 10),
    ("alloc A : [n, red]", "`red` is a keyword and cannot name a parameter", 1, 15),
    ("C = A $", "unexpected character '$'", 1, 7),
    ("C = A\x00", "unexpected character U+0000", 1, 6),
    ("C = \u00e9", "unexpected character 'é'", 1, 5),
    ("alloc A : [3, 4", "expected ']'", 1, 16),
    ("alloc A : [3 4]", "expected ']'", 1, 14),
    ("alloc A : [3,]", "expected a dimension", 1, 14),
    ("alloc A [3]", "expected ':'", 1, 9),
    ("alloc A : 3", "expected '['", 1, 11),
    ("input A : [3]", "expected `alloc` after `input`", 1, 7),
    ("C = red (diag A", "unterminated parenthesis", 1, 9),
    ("C = red (diag A\nD = B", "unterminated parenthesis", 1, 9),
    ("C = (A\nalloc B : [1]", "unterminated parenthesis", 1, 5),
    ("C = (A B)", "expected ')', found `B`", 1, 8),
    ("C = (A ,", "expected ')', found ','", 1, 8),
    ("C = A)", "unmatched ')'", 1, 6),
    ("C =", "expected an expression", 1, 4),
    ("C = 3", "expected an expression, found integer `3`", 1, 5),
    ("C = ()", "expected an expression inside '(' ')'", 1, 6),
    ("C = add A ,", "expected an expression as argument 2 of `add`, found ','", 1, 11),
    ("C = add A and", "expected an expression as argument 2 of `add`, found keyword `and`", 1, 11),
    ("C =\nD = A", "expected an expression after '=', found the statement `D = ...`", 2, 1),
    ("C A", "expected '=' after `C`", 1, 3),
    ("add A B", "expected a statement `x = e`, found keyword `add`", 1, 1),
    ("C = A\nalloc B : [2]", "declarations must come before statements", 2, 1),
    ("C = A\nparam n", "declarations must come before statements", 2, 1),
    ("lang", "expected `core` or `full` after `lang`", 1, 5),
    ("lang rust", "expected `core` or `full` after `lang`", 1, 6),
    ("alloc A : [1]\nlang full", "`lang` must come first", 2, 1),
    ("alloc A : [2A]", "malformed integer literal `2A`", 1, 12),
    ("alloc A : [" + "9" * 5000 + "]", "is too long", 1, 12),
    ("assume n", "expected a comparison", 1, 9),
    ("assume n * 2 > 1", "expected a comparison", 1, 10),
    ("assume 2 * > 1", "expected the name of a parameter", 1, 12),
    ("assume n < 2 and", "expected an integer or a parameter name", 1, 17),
    ("assume < 2", "expected an integer or a parameter name", 1, 8),
    ("]", "expected a declaration or a statement", 1, 1),
    ("C = -1", "expected an expression, found '-'", 1, 5),
]


@pytest.mark.parametrize(("text", "fragment", "line", "column"), ERRORS)
def test_error_messages(text: str, fragment: str, line: int, column: int) -> None:
    err = syntax_error(text)
    assert fragment in err.message
    assert (err.span.file, err.span.line, err.span.column) == ("f.teil", line, column)
    assert err.source == text
    assert err.exit_code == 2


def test_first_error_wins_over_later_bad_character() -> None:
    # The lexer defers its error, so the earlier syntax error is the one reported.
    err = syntax_error("C = add A\nD = B $")
    assert "`add` takes 2 tensor arguments" in err.message


def test_rendering_names_location_line_and_caret() -> None:
    err = syntax_error("alloc A : [3]\nC = add A\n")
    text = str(err)
    assert "f.teil:2:5" in text
    assert "C = add A" in text
    lines = text.splitlines()
    caret_line = lines[-1]
    assert caret_line.strip() == "^^^"
    # The caret sits under `add` in the echoed source line.
    source_line = lines[-2]
    assert source_line[caret_line.index("^"):].startswith("add")


def test_rendering_at_end_of_input() -> None:
    text = str(syntax_error("C = red (A\n\n# trailing comment\n"))
    assert "f.teil:1:9" in text and "^" in text


def test_no_error_escapes_for_non_string() -> None:
    with pytest.raises(TeilInputError):
        parse(b"A = B")  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# Nesting depth: bounded, and never a RecursionError
# --------------------------------------------------------------------------


def nested_red(n: int) -> str:
    return "C = " + "red " * n + "A"


def test_depth_limit_is_exact() -> None:
    ok = parse(nested_red(MAX_DEPTH - 1)).stmts[0].expr
    assert depth(ok) == MAX_DEPTH
    err = syntax_error(nested_red(MAX_DEPTH))
    assert err.message.startswith(f"expression nested deeper than {MAX_DEPTH} levels")
    assert err.span.column == 5 + 4 * (MAX_DEPTH - 1)


def test_paren_limit_is_exact() -> None:
    assert parse("C = " + "(" * MAX_DEPTH + "A" + ")" * MAX_DEPTH).stmts[0].expr == A
    err = syntax_error("C = " + "(" * (MAX_DEPTH + 1) + "A" + ")" * (MAX_DEPTH + 1))
    assert err.message.startswith(f"expression nested deeper than {MAX_DEPTH} levels")


@pytest.mark.parametrize("text", [
    nested_red(10_000),
    "C = " + "(" * 10_000 + "A" + ")" * 10_000,
    "C = " + "(red " * 10_000 + "A" + ")" * 10_000,
    "C = " + "add A " * 10_000 + "A",
    "C = " + "(" * 10_000,
    "lang full\nC = " + "transp 1 2 " * 10_000 + "A",
])
def test_deep_nesting_is_a_syntax_error(text: str) -> None:
    err = syntax_error(text)
    assert err.message.startswith(f"expression nested deeper than {MAX_DEPTH} levels")


def test_long_but_shallow_programs_parse() -> None:
    # Left-nested chains are deep; many statements and wide trees are not.
    text = "alloc A : [2]\n" + "A = add A A\n" * 5000 + "B = " + "add (add A A) " * 100 + "A"
    p = parse(text)
    assert len(p.stmts) == 5001


# --------------------------------------------------------------------------
# load()
# --------------------------------------------------------------------------


def test_load_reads_utf8(tmp_path) -> None:
    path = tmp_path / "k.teil"
    path.write_text(MATMUL_CORE, encoding="utf-8")
    p = load(path)
    assert p == parse(MATMUL_CORE)
    assert p.file == str(path)
    assert p.stmts[0].span.file == str(path)


def test_load_ignores_byte_order_mark(tmp_path) -> None:
    path = tmp_path / "bom.teil"
    path.write_bytes(b"\xef\xbb\xbf" + MATMUL_FULL.encode())
    assert load(path) == parse(MATMUL_FULL)


def test_load_syntax_error_names_the_file(tmp_path) -> None:
    path = tmp_path / "bad.teil"
    path.write_text("C = add A\n")
    with pytest.raises(TeilSyntaxError) as info:
        load(path)
    assert f"{path}:1:5" in str(info.value)


@pytest.mark.parametrize("kind", ["missing", "directory", "latin1", "nul-path"])
def test_load_unreadable_is_input_error(tmp_path, kind: str) -> None:
    path = {
        "missing": tmp_path / "nope.teil",
        "directory": tmp_path,
        "latin1": tmp_path / "latin1.teil",
        "nul-path": str(tmp_path / "a") + "\x00b",
    }[kind]
    if kind == "latin1":
        path.write_bytes("C = A # café".encode("latin-1"))
    with pytest.raises(TeilInputError) as info:
        load(path)
    assert str(path) in info.value.message
    assert not isinstance(info.value, TeilSyntaxError)


# --------------------------------------------------------------------------
# Fuzzing: no input makes anything but a TeilError escape
# --------------------------------------------------------------------------

_ALPHABET = "AaBnmx_019 \t\n#()[],:=+-*<>!$\x00é\u2028\r"
_WORDS = [*sorted(KEYWORDS), "red+", "A", "B", "n", "1", "2", "(", ")", "[", "]", ",", ":", "=",
          "<=", "==", "!=", "-", "+", "*", "\n", "#", " "]


def parse_or_teil_error(text: str) -> Program | None:
    """Parse, allowing only TeilError; anything else fails the test with its traceback."""
    try:
        return parse(text)
    except TeilError as err:
        assert isinstance(err, TeilSyntaxError)
        assert err.span.line >= 1 and err.span.column >= 1
        str(err)  # rendering must not fail either
        return None


@SETTINGS
@given(st.text(_ALPHABET, max_size=60))
def test_fuzz_random_characters(text: str) -> None:
    parse_or_teil_error(text)


@SETTINGS
@given(st.text(max_size=40))
def test_fuzz_random_unicode(text: str) -> None:
    parse_or_teil_error(text)


@SETTINGS
@given(st.lists(st.sampled_from(_WORDS), max_size=30).map(" ".join))
def test_fuzz_random_token_sequences(text: str) -> None:
    parse_or_teil_error(text)


def _mutate(text: str, edits: list[tuple[int, int, int, str]]) -> str:
    """Apply character edits: (kind, position, other position, inserted text)."""
    chars = list(text)
    for kind, i, j, s in edits:
        if not chars:
            chars = list(s)
            continue
        i, j = i % len(chars), j % len(chars)
        if kind == 0:
            del chars[i]
        elif kind == 1:
            chars[i:i] = list(s)
        elif kind == 2:
            chars[i], chars[j] = chars[j], chars[i]
        else:
            chars[i] = s[:1] or chars[i]
    return "".join(chars)


_edits = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 10**6), st.integers(0, 10**6),
              st.sampled_from(_WORDS + list(_ALPHABET))),
    min_size=1, max_size=4,
)


@SETTINGS
@given(programs(), _edits)
def test_fuzz_character_mutations_of_valid_programs(p: Program, edits) -> None:
    parse_or_teil_error(_mutate(format_program(p), edits))


@SETTINGS
@given(programs(), st.data())
def test_fuzz_token_mutations_of_valid_programs(p: Program, data) -> None:
    words = format_program(p).split()
    for _ in range(data.draw(st.integers(1, 3))):
        if not words:
            break
        i = data.draw(st.integers(0, len(words) - 1))
        j = data.draw(st.integers(0, len(words) - 1))
        action = data.draw(st.sampled_from(["delete", "duplicate", "swap", "replace"]))
        if action == "delete":
            del words[i]
        elif action == "duplicate":
            words.insert(i, words[i])
        elif action == "swap":
            words[i], words[j] = words[j], words[i]
        else:
            words[i] = data.draw(st.sampled_from(_WORDS))
    parse_or_teil_error(" ".join(words))
