"""Hypothesis strategies for random TeIL syntax trees (SPEC.md section 2).

The trees are syntactically valid (they print to text the parser accepts) but
not necessarily well typed: names need not be declared, positions need not be
in range.  Shared by the parser, printer and later test modules::

    from tests.strategies import exprs, programs

    @given(programs("core"))
    def test_something(p): ...

``dialect=None`` draws the dialect too.  ``SETTINGS`` is a deterministic,
fast profile for property tests.
"""

from __future__ import annotations

from functools import cache

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from core_teil.lang.parser import KEYWORDS
from core_teil.lang.syntax import (
    ELEM_OPS,
    Alloc,
    Assume,
    Cond,
    Contr,
    ContrAt,
    Decl,
    Diag,
    DiagAt,
    Dialect,
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

__all__ = [
    "SETTINGS",
    "conds",
    "dialects",
    "dims",
    "exprs",
    "identifiers",
    "lins",
    "positions",
    "programs",
    "shapes",
]

#: Deterministic (derandomized), quick, no deadline: CI machines vary.
SETTINGS = settings(
    derandomize=True,
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_FIRST = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
_REST = _FIRST + "0123456789"

dialects: st.SearchStrategy[Dialect] = st.sampled_from(["core", "full"])

#: Identifiers ``[A-Za-z_][A-Za-z0-9_]*`` that are not keywords; short names
#: and a few near-keywords (``adds``, ``red_``) are favoured to stress the lexer.
identifiers: st.SearchStrategy[str] = st.one_of(
    st.sampled_from(["A", "B", "C", "x", "n", "m", "k", "_", "adds", "red_", "lang2", "Input"]),
    st.builds(lambda a, b: a + b, st.sampled_from(_FIRST), st.text(_REST, max_size=6)),
).filter(lambda s: s not in KEYWORDS)

#: Positions: small non-negative literals, now and then a big one (ranges are
#: the type checker's business, not the parser's).
positions: st.SearchStrategy[int] = st.one_of(st.integers(0, 9), st.integers(0, 10**30))

#: Extents and projection indices: an integer literal or a parameter name.
dims: st.SearchStrategy[int | str] = st.one_of(positions, identifiers)

shapes: st.SearchStrategy[tuple[int | str, ...]] = st.lists(dims, max_size=4).map(tuple)

_terms = st.builds(LinTerm, st.integers(-20, 20), st.one_of(st.none(), identifiers))
lins: st.SearchStrategy[Lin] = st.lists(_terms, min_size=1, max_size=4).map(lambda ts: Lin(tuple(ts)))
conds: st.SearchStrategy[Cond] = st.builds(
    Cond, lins, st.sampled_from(["<=", "<", ">=", ">", "==", "!="]), lins
)


def _compound(dialect: Dialect, sub: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    """One operator application over subtrees ``sub``, as the dialect spells them."""
    both = [
        st.builds(Elem, st.sampled_from(ELEM_OPS), sub, sub),
        st.builds(Prod, sub, sub),
    ]
    if dialect == "core":
        return st.one_of(
            *both,
            st.builds(Red, sub),
            st.builds(Contr, sub),
            st.builds(Diag, sub),
            st.builds(Transp, positions, sub),
            st.builds(Expa, dims, sub),
            st.builds(Proj, dims, sub),
        )
    return st.one_of(
        *both,
        st.builds(RedAt, positions, sub),
        st.builds(ContrAt, positions, positions, sub),
        st.builds(DiagAt, positions, positions, sub),
        st.builds(TranspAt, positions, positions, sub),
        st.builds(ExpaAt, positions, dims, sub),
        st.builds(ProjAt, positions, dims, sub),
    )


# Strategies are cached: building them afresh per draw (flatmap) makes
# hypothesis re-validate them each time, which dominated the test run time.
@cache
def exprs(dialect: Dialect | None = None, max_leaves: int = 12) -> st.SearchStrategy[Expr]:
    """Random expressions of ``dialect`` (both dialects' operators never mix in one tree)."""
    if dialect is None:
        return st.one_of(exprs("core", max_leaves), exprs("full", max_leaves))
    leaves = st.builds(Var, identifiers)
    return st.recursive(leaves, lambda sub: _compound(dialect, sub), max_leaves=max_leaves)


@cache
def _decls() -> st.SearchStrategy[Decl]:
    return st.one_of(
        st.builds(Param, st.lists(identifiers, min_size=1, max_size=3).map(tuple)),
        st.builds(Assume, st.lists(conds, min_size=1, max_size=3).map(tuple)),
        st.builds(Alloc, identifiers, shapes, st.sampled_from([None, "input", "output"])),
    )


@cache
def programs(dialect: Dialect | None = None) -> st.SearchStrategy[Program]:
    """Random programs: any declarations in any order, then statements over ``exprs(dialect)``."""
    if dialect is None:
        return st.one_of(programs("core"), programs("full"))
    stmts = st.builds(Stmt, identifiers, exprs(dialect, max_leaves=8))
    return st.builds(
        Program,
        st.just(dialect),
        st.lists(_decls(), max_size=5).map(tuple),
        st.lists(stmts, max_size=4).map(tuple),
    )
