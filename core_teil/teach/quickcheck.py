"""``core-teil quickcheck``: random testing of a claim a student states (issue 16, item 2).

In the manner of PLT Redex's ``redex-check``: a claim is stated over
expressions with **holes**, it is tried on random well-typed instances and
random inputs, a failure is **shrunk** to a small counterexample and printed,
and a claim that survives its budget is handed on to the tools that prove
(``core-teil equiv``, ``core-teil prove --pad``).

A claim is one or two expressions in TeIL's syntax (``lang core`` or ``lang
full``, detected).  Every allocation name in them is a hole, a tensor of any
shape; every name in an extent position (``expa n X``, ``proj m X``) is a
shape parameter.  One addition to the syntax: ``smul d e`` is ``d · e`` for
an extent ``d`` (the right-hand side of the paper's equation (5),
``red (expa n e) ≅ n · e``, which TeIL cannot write); it becomes ``mul s e``
with a scalar input ``s`` holding ``d``.  The claims (:class:`Claim`):

* ``equal`` (two expressions): the same value at every index of their common
  shape, for every input in V ∪ {•} (``--values float`` adds ±inf); with
  ``--pad M`` both are evaluated padded and compared on the original domain;
* ``simulation`` (one expression, ``--pad M``): report Theorem 3 in its true
  form (docs/lemmas.md, "Inv"): the padded value equals the unpadded one on
  the original domain, the padding holds 0 or •, and • in the padding only
  where the original is • along the padded coordinates;
* ``zeros`` (one expression, ``--pad M``): the report's verbatim Lemma 5 (ii)
  and Theorem 3: equal on the original domain, and 0 in the padding;
* ``typing`` (two expressions): whatever the holes' shapes, wherever the
  left side is well typed the right side is too, with the same shape (what a
  rewrite ``lhs => rhs`` must keep).

``--unguarded-expa`` evaluates with the report's padded ``expa`` (no guard),
the variant chapter 5 shows to break Theorem 3.

Instances: the holes' ranks are enumerated (0..:data:`MAX_RANK`), the
operators' shape constraints solved by unification (:class:`Unifier`), the
remaining extents drawn from 1..``max_extent``; every instance is checked by
the real type checker before it runs, and runs on the reference engine's
interpretation (``eval.py``'s equations, the padded store of report Fig. 13).
Everything is seeded: the same claim and seed give the same verdict and the
same counterexample.  Shrinking tries smaller ranks, smaller extents and
simpler input values (0, 1, -1, ... before •, inf), keeping each change that
still falsifies the claim.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import random
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import numpy as np

from ..errors import Span, TeilError, TeilInputError, TeilSyntaxError
from ..lang.printer import format_expr, format_shape
from ..lang.syntax import (
    Contr,
    ContrAt,
    Diag,
    DiagAt,
    Elem,
    Expa,
    ExpaAt,
    Expr,
    Prod,
    Proj,
    ProjAt,
    Red,
    RedAt,
    Transp,
    TranspAt,
    Var,
    walk,
)

#: Ranks tried for each hole.
MAX_RANK = 3
#: Test cases tried before a claim counts as passed (each is one instance with one set of inputs).
BUDGET = 300
#: Extents are drawn from 1..MAX_EXTENT (small shapes find counterexamples as well as large ones do).
MAX_EXTENT = 3
#: Input values, simplest first: shrinking replaces a value by an earlier one.
REAL_VALUES = (0.0, 1.0, -1.0, 2.0, -2.0, 3.0, math.nan)
FLOAT_VALUES = (*REAL_VALUES, math.inf, -math.inf)
#: The scalar input that stands for ``d`` in ``smul d e``.
SMUL = "smul_"
#: Caps that keep a run short (bad input beyond them is exit 2, naming the cap): test cases; the largest
#: extent drawn, written in the claim (``expa 5 X``) or padded to (``--pad``); entries of one node of an instance.
MAX_BUDGET = 10_000
EXTENT_LIMIT = 16
MAX_ENTRIES = 1_000_000


class Claim(StrEnum):
    """What is claimed of the expressions."""

    EQUAL = "equal"
    SIMULATION = "simulation"
    ZEROS = "zeros"
    TYPING = "typing"


class Status(StrEnum):
    PASSED = "passed"
    FALSIFIED = "falsified"


# --------------------------------------------------------------------------
# Reading a claim
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Law:
    """A parsed claim: its expressions, dialect, holes and parameters."""

    texts: tuple[str, ...]
    exprs: tuple[Expr, ...]
    dialect: str
    holes: tuple[str, ...]
    params: tuple[str, ...]
    scalars: dict[str, str | int] = field(default_factory=dict)  # smul input name -> its extent


_SMUL = re.compile(r"\bsmul\s+([A-Za-z_][A-Za-z0-9_]*|[0-9]+)\b")


@dataclass(frozen=True)
class Rewritten:
    """A side with ``smul d`` rewritten to ``mul smul_d``, and where each rewrite sits in both texts
    (so an error in the rewritten text is shown at the student's own column, in the student's words)."""

    text: str
    original: str
    scalars: dict[str, str | int]
    spots: tuple[tuple[int, int, int, int], ...]  # (start, end) in text, (start, end) in original

    def column(self, col: int) -> int:
        """The original text's 1-based column of the rewritten text's column ``col``."""
        shift = sum((end - start) - (o_end - o_start) for start, end, o_start, o_end in self.spots if col - 1 >= end)
        return max(1, col - shift)

    def error(self, err: TeilSyntaxError, offset: int, which: str) -> TeilSyntaxError:
        """The parser's error in the student's words and columns (``smul d``, never ``mul smul_d``)."""
        col = err.span.column - offset
        for start, end, o_start, o_end in self.spots:
            if start <= col - 1 < end:  # the rewritten `mul smul_d` itself is malformed: smul lacks its tensor
                smul = self.original[o_start:o_end]
                return TeilSyntaxError(f"`{smul}` takes one tensor after its factor, as in '{smul} X'",
                                       Span(which, 1, o_start + 1, 1, o_end + 1), err.rule, source=self.original)
        message = err.message.replace("the complete statement `__side = ...`", "the complete expression")
        return TeilSyntaxError(message, _claim_span(self, err.span, offset), err.rule, source=self.original)


def _rewrite_smul(text: str) -> Rewritten:
    scalars: dict[str, str | int] = {}
    spots: list[tuple[int, int, int, int]] = []
    out, last = [], 0
    for m in _SMUL.finditer(text):
        d = m.group(1)
        name = SMUL + d
        scalars[name] = int(d) if d.isdigit() else d
        out.append(text[last:m.start()])
        start = sum(map(len, out))
        out.append(f"mul {name}")
        spots.append((start, start + len(out[-1]), m.start(), m.end()))
        last = m.end()
    out.append(text[last:])
    return Rewritten("".join(out), text, scalars, tuple(spots))


def _parse_side(side: Rewritten, dialect: str, which: str) -> Expr:
    from ..lang.parser import parse

    prefix = f"lang {dialect} __side = "
    try:
        program = parse(prefix + side.text, which)
    except TeilSyntaxError as err:
        raise side.error(err, len(prefix), which) from None
    if len(program.stmts) != 1 or program.decls:
        raise TeilInputError(f"{which}: expected one expression, e.g. 'red (expa n X)'")
    expr = program.stmts[0].expr
    _check_extents(expr, side, which, len(prefix))
    return expr


def _claim_span(side: Rewritten, span: Span, offset: int) -> Span:
    """A span of the parsed ``prefix + text`` as a span of the claim the student wrote."""
    col = side.column(max(1, span.column - offset))
    end = side.column(max(1, span.end_column - offset)) if span.end_column else col + 1
    return replace(span, line=1, end_line=1, column=col, end_column=max(col + 1, end))


def _check_extents(e: Expr, side: Rewritten, which: str, offset: int) -> None:
    """Extents written in the claim (``expa 5 X``, ``proj 2 X``) are positive and small: the checker
    rejects 0 (S-Var, T-Proj), and a large one would make every instance too large to run."""
    for node in walk(e):
        for attr, rule in (("d", "T-Expa"), ("m", "T-Proj")):
            d = getattr(node, attr, None)
            if not isinstance(d, int) or 1 <= d <= EXTENT_LIMIT:
                continue
            what = "a positive integer" if d < 1 else f"at most {EXTENT_LIMIT} (quickcheck tests small shapes)"
            raise TeilInputError(f"the claim's extent {d} must be {what}", _claim_span(side, node.span, offset),
                                 rule, source=side.original)


def parse_law(*texts: str, dialect: str | None = None) -> Law:
    """The claim's expressions, in ``dialect`` (``None``: core if both parse as core, else full)."""
    if not 1 <= len(texts) <= 2:
        raise TeilInputError("quickcheck takes one expression (a padding claim) or two (an equation)")
    rewritten = [_rewrite_smul(t) for t in texts]
    scalars = {k: v for r in rewritten for k, v in r.scalars.items()}
    names = ("<lhs>", "<rhs>")[: len(texts)]
    if dialect is None:
        try:
            exprs = tuple(_parse_side(t, "core", n) for t, n in zip(rewritten, names, strict=True))
            dialect = "core"
        except TeilSyntaxError as core_error:
            try:
                exprs = tuple(_parse_side(t, "full", n) for t, n in zip(rewritten, names, strict=True))
                dialect = "full"
            except TeilSyntaxError:
                raise core_error from None
    else:
        exprs = tuple(_parse_side(t, dialect, n) for t, n in zip(rewritten, names, strict=True))
    holes: list[str] = []
    params: list[str] = [d for d in scalars.values() if isinstance(d, str)]
    for e in exprs:
        for node in walk(e):
            if isinstance(node, Var) and node.name not in scalars and node.name not in holes:
                holes.append(node.name)
            for attr in ("d", "m"):
                d = getattr(node, attr, None)
                if isinstance(d, str) and d not in params:
                    params.append(d)
    clash = set(holes) & set(params)
    if clash:
        raise TeilInputError(f"{', '.join(sorted(clash))}: used both as a tensor (a hole) and as an extent "
                             f"(a shape parameter)")
    return Law(tuple(texts), exprs, dialect, tuple(holes), tuple(params), scalars)


# --------------------------------------------------------------------------
# Shapes: the typing rules' constraints, solved by unification
# --------------------------------------------------------------------------

Atom = tuple[str, Any]  # ("i", 3) an integer, ("p", "n") a parameter, ("v", 7) an unknown extent


class Mismatch(Exception):
    """These ranks (or extents) cannot type the expression."""


class Unifier:
    """Union-find over extents: the equalities of T-Elem, T-Diag, T-Contr, OK-Stmt."""

    def __init__(self) -> None:
        self.parent: dict[Atom, Atom] = {}
        self.fresh = itertools.count(1)
        self.bounds: list[tuple[Atom, Atom]] = []  # (m, n): T-Proj's m <= n

    def var(self) -> Atom:
        return ("v", next(self.fresh))

    def find(self, a: Atom) -> Atom:
        root = a
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while a != root:  # path compression
            self.parent[a], a = root, self.parent.get(a, a)
        return root

    def union(self, a: Atom, b: Atom) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if ra[0] == "i" and rb[0] == "i":
            raise Mismatch(f"extents {ra[1]} and {rb[1]} must agree")
        if ra[0] == "i" or (ra[0] == "p" and rb[0] == "v"):  # an integer, then a parameter, represents
            ra, rb = rb, ra
        self.parent[ra] = rb

    def unify(self, t0: tuple[Atom, ...], t1: tuple[Atom, ...]) -> None:
        if len(t0) != len(t1):
            raise Mismatch(f"ranks {len(t0)} and {len(t1)} differ")
        for a, b in zip(t0, t1, strict=True):
            self.union(a, b)


def _dim(d: Any) -> Atom:
    return ("i", d) if isinstance(d, int) else ("p", d)


def _need(ok: bool, why: str) -> None:
    if not ok:
        raise Mismatch(why)


def infer(e: Expr, holes: dict[str, tuple[Atom, ...]], u: Unifier) -> tuple[Atom, ...]:
    """The shape of ``e`` as extents to unify, one case per typing rule (SPEC.md section 3, Fig. 8)."""
    if isinstance(e, Var):
        return holes[e.name]
    if isinstance(e, Elem):
        t0, t1 = infer(e.left, holes, u), infer(e.right, holes, u)
        if e.op == "mul" and not t0 and t1:  # T-SMul
            return t1
        if e.op == "div" and not t1 and t0:  # T-SDiv
            return t0
        u.unify(t0, t1)  # T-Elem
        return t0
    if isinstance(e, Prod):
        return infer(e.left, holes, u) + infer(e.right, holes, u)
    t = infer(e.arg, holes, u)  # type: ignore[attr-defined]
    r = len(t)
    if isinstance(e, Red):
        _need(r >= 1, "red needs rank >= 1")
        return t[1:]
    if isinstance(e, Contr | Diag):
        _need(r >= 2, "needs rank >= 2")
        u.union(t[0], t[1])
        return t[2:] if isinstance(e, Contr) else t[:1] + t[2:]
    if isinstance(e, Transp):
        _need(1 <= e.i < r, "transp position")
        return t[: e.i - 1] + (t[e.i], t[e.i - 1]) + t[e.i + 1:]
    if isinstance(e, Expa):
        return (_dim(e.d), *t)
    if isinstance(e, Proj):
        _need(r >= 1, "proj needs rank >= 1")
        u.bounds.append((_dim(e.m), t[0]))
        return t[1:]
    if isinstance(e, RedAt):
        _need(1 <= e.i <= r, "red position")
        return t[: e.i - 1] + t[e.i:]
    if isinstance(e, ContrAt | DiagAt):
        _need(1 <= e.i < e.j <= r, "positions")
        u.union(t[e.i - 1], t[e.j - 1])
        kept = t[: e.j - 1] + t[e.j:]
        return kept[: e.i - 1] + kept[e.i:] if isinstance(e, ContrAt) else kept
    if isinstance(e, TranspAt):
        _need(1 <= e.i <= r and 1 <= e.j <= r and e.i != e.j, "transp positions")
        s = list(t)
        s[e.i - 1], s[e.j - 1] = s[e.j - 1], s[e.i - 1]
        return tuple(s)
    if isinstance(e, ExpaAt):
        _need(1 <= e.i <= r + 1, "expa position")
        return t[: e.i - 1] + (_dim(e.d),) + t[e.i - 1:]
    if isinstance(e, ProjAt):
        _need(1 <= e.i <= r, "proj position")
        u.bounds.append((_dim(e.m), t[e.i - 1]))
        return t[: e.i - 1] + t[e.i:]
    raise Mismatch(f"unknown operator {type(e).__name__}")


@dataclass(frozen=True)
class Frame:
    """One assignment of ranks to the holes, with the extent constraints it implies."""

    ranks: dict[str, int]
    holes: dict[str, tuple[Atom, ...]]
    sides: tuple[tuple[Atom, ...], ...]
    unifier: Unifier = field(compare=False, repr=False)


def frames(law: Law, same_shape: bool) -> list[Frame]:
    """Every rank assignment (0..MAX_RANK per hole) that types each side (and, with ``same_shape``,
    gives both sides one shape), fewest dimensions first."""
    out = []
    for ranks in sorted(itertools.product(range(MAX_RANK + 1), repeat=len(law.holes)), key=lambda r: (sum(r), r)):
        u = Unifier()
        holes = {h: tuple(u.var() for _ in range(r)) for h, r in zip(law.holes, ranks, strict=True)}
        try:
            scope = {**holes, **{s: () for s in law.scalars}}  # smul's factor is a scalar input
            sides = tuple(infer(e, scope, u) for e in law.exprs)
            if same_shape and len(sides) == 2:
                u.unify(*sides)
        except Mismatch:
            continue
        out.append(Frame(dict(zip(law.holes, ranks, strict=True)), holes, sides, u))
    return out


# --------------------------------------------------------------------------
# Instances and test cases
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Instance:
    """Concrete shapes: parameter values and each hole's shape (and the sides' shapes)."""

    params: dict[str, int]
    shapes: dict[str, tuple[int, ...]]
    sides: tuple[tuple[int, ...], ...]
    frame: Frame = field(compare=False, repr=False)

    @property
    def size(self) -> int:
        """What shrinking makes smaller: dimensions first, then extents."""
        return sum(len(t) for t in self.shapes.values()) * 1000 + sum(map(sum, self.shapes.values())) \
            + sum(self.params.values())


def assign(frame: Frame, law: Law, rng: random.Random, max_extent: int,
           fixed: dict[Atom, int] | None = None) -> Instance | None:
    """Values for the frame's extents (``fixed`` first), respecting T-Proj's bounds; None if none found."""
    u = frame.unifier
    atoms = {a for t in frame.holes.values() for a in t} | {_dim(p) for p in law.params}
    atoms |= {a for pair in u.bounds for a in pair}
    roots: dict[Atom, list[Atom]] = {}
    for a in atoms:
        roots.setdefault(u.find(a), []).append(a)
    for _ in range(20):
        value: dict[Atom, int] = {}
        for root, members in sorted(roots.items(), key=repr):
            if root[0] == "i":
                value[root] = root[1]
            else:
                given = [fixed[m] for m in members if fixed and m in fixed]
                value[root] = given[0] if given else rng.randint(1, max_extent)
        if all(value[u.find(m)] <= value[u.find(n)] for m, n in u.bounds):
            return _instance(frame, law, {a: value[u.find(a)] for a in atoms})
        fixed = None  # a bound failed with the given values: draw them all
    return None


def _instance(frame: Frame, law: Law, value: dict[Atom, int]) -> Instance:
    shapes = {h: tuple(value[a] for a in t) for h, t in frame.holes.items()}
    params = {p: value[_dim(p)] for p in law.params}
    sides = tuple(tuple(value.get(a, a[1]) if a[0] != "i" else a[1] for a in t) for t in frame.sides)
    return Instance(params, shapes, sides, frame)


def names_for(law: Law) -> tuple[str, str]:
    """The output names of an instance program: ``lhs``, ``rhs`` unless the claim uses them."""
    used = set(law.holes) | set(law.params) | set(law.scalars)
    lhs, rhs = "lhs", "rhs"
    while lhs in used or rhs in used:
        lhs, rhs = lhs + "_", rhs + "_"
    return lhs, rhs


def instance_program(law: Law, inst: Instance, file: str = "<quickcheck>") -> str:
    """The instance as a ``.teil`` program: the holes (and smul factors) as inputs, the sides as outputs."""
    lhs, rhs = names_for(law)
    lines = [f"lang {law.dialect}"]
    if law.params:
        lines.append("param " + ", ".join(law.params))
    for h in law.holes:
        lines.append(f"input alloc {h} : {format_shape(inst.shapes[h])}")
    for s in law.scalars:
        lines.append(f"input alloc {s} : []")
    for name, shape in zip((lhs, rhs), inst.sides, strict=False):
        lines.append(f"output alloc {name} : {format_shape(shape)}")
    lines.append("")
    for name, e in zip((lhs, rhs), law.exprs, strict=False):
        lines.append(f"{name} = {format_expr(e)}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Case:
    """One test: an instance and its inputs (NaN is •)."""

    instance: Instance
    inputs: dict[str, np.ndarray] = field(compare=False)


def random_inputs(law: Law, inst: Instance, rng: random.Random, values: tuple[float, ...]) -> dict[str, np.ndarray]:
    # mostly small integers, sometimes a special value: • (and ±inf) in one entry are enough to matter
    plain = [v for v in values if math.isfinite(v)]
    special = [v for v in values if not math.isfinite(v)]
    out = {}
    for h in law.holes:
        shape = inst.shapes[h]
        flat = [rng.choice(special) if special and rng.random() < 0.12 else rng.choice(plain)
                for _ in range(math.prod(shape))]
        out[h] = np.array(flat, dtype=np.float64).reshape(shape)
    for s, d in law.scalars.items():
        out[s] = np.array(float(d if isinstance(d, int) else inst.params[d]))
    return out


# --------------------------------------------------------------------------
# Running a case and judging the claim
# --------------------------------------------------------------------------


def _expa_unguarded(e: Expa, k: Any, sem: Any) -> Any:
    """The report's padded ``expa``: ``[[expa d e]]([j] ++ k') = [[e]](k')`` in the padding too (no guard)."""
    from ..semantics.eval import denote

    return denote(e.arg, k[1:], sem)


def _expa_at_unguarded(e: ExpaAt, k: Any, sem: Any) -> Any:
    """The report's padded ``expa i d``, unguarded."""
    from ..lang.typing import remove
    from ..semantics.eval import denote

    return denote(e.arg, remove(k, e.i), sem)


@contextlib.contextmanager
def semantics(unguarded_expa: bool) -> Iterator[None]:
    """eval.py's equations, or the report's reading of padded ``expa`` while the block runs."""
    from ..semantics import eval as ev

    if not unguarded_expa:
        yield
        return
    saved = ev.EQUATIONS[Expa], ev.EQUATIONS[ExpaAt]
    ev.EQUATIONS[Expa], ev.EQUATIONS[ExpaAt] = _expa_unguarded, _expa_at_unguarded
    try:
        yield
    finally:
        ev.EQUATIONS[Expa], ev.EQUATIONS[ExpaAt] = saved


@contextlib.contextmanager
def about_the_claim(law: Law) -> Iterator[None]:
    """An error in a generated instance is reported against the claim (exit 2), never as a falsification
    nor at a line of a program the student did not write."""
    try:
        yield
    except TeilError as err:
        rule = f" [{err.rule}]" if err.rule else ""
        claim = "  vs  ".join(f"'{t}'" for t in law.texts)
        raise TeilInputError(f"the claim {claim}: an instance of it is rejected ({err.kind}{rule}: {err.message}); "
                             f"check each side with `core-teil check` on a program with these shapes") from None


def _typed(law: Law, inst: Instance) -> Any:
    from ..lang.parser import parse
    from ..lang.typing import check_program

    with about_the_claim(law):
        return check_program(parse(instance_program(law, inst)), inst.params)


def run(typed: Any, inputs: dict[str, np.ndarray], pad: int | None) -> dict[str, np.ndarray]:
    """The final store, padding included (the reference engine's interpretation of eval.py)."""
    from ..semantics import eval as ev

    interp = ev.ArrayInterpretation(typed)
    store = ev.initial_store(typed, interp, inputs, pad)
    return dict(ev.eval_prog(ev.Sem(typed, interp, store, pad)))


def same(a: float, b: float) -> bool:
    """Equal values of V ∪ {•}: both • (NaN), or equal up to float rounding (±inf exactly)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@dataclass(frozen=True)
class Failure:
    """How a case falsifies the claim: where, and the values involved."""

    what: str
    index: tuple[int, ...]
    values: tuple[tuple[str, float], ...]


def judge(law: Law, claim: Claim, case: Case, pad: int | None) -> Failure | None:
    """Run the case; the failure it shows, or None."""
    with about_the_claim(law):
        return _judge(law, claim, case, pad)


def _judge(law: Law, claim: Claim, case: Case, pad: int | None) -> Failure | None:
    inst = case.instance
    typed = _typed(law, inst)
    lhs, rhs = names_for(law)
    orig = inst.sides[0]
    if claim is Claim.EQUAL:
        store = run(typed, case.inputs, pad)
        for k in np.ndindex(*orig):
            a, b = float(store[lhs][k]), float(store[rhs][k])
            if not same(a, b):
                return Failure("the two sides differ", _one(k), (("lhs", a), ("rhs", b)))
        return None
    padded = run(typed, case.inputs, pad)[lhs]
    plain = run(typed, case.inputs, None)[lhs]
    for k in np.ndindex(*orig):  # (a) padded = unpadded on the original domain
        if not same(float(padded[k]), float(plain[k])):
            return Failure("padded and unpadded runs differ on the original domain", _one(k),
                           (("padded", float(padded[k])), ("unpadded", float(plain[k]))))
    for k in np.ndindex(*padded.shape):
        if all(j < n for j, n in zip(k, orig, strict=True)):
            continue
        v = float(padded[k])
        if claim is Claim.ZEROS and v != 0.0:
            return Failure("the padding holds a value other than 0", _one(k), (("padded", v),))
        if claim is Claim.SIMULATION:
            if not (v == 0.0 or math.isnan(v)):  # (b) 0 or • in the padding
                return Failure("the padding holds a value other than 0 or •", _one(k), (("padded", v),))
            if math.isnan(v):  # (c) • only where the original is • on all of Ω(k)
                omega = [range(j, j + 1) if j < n else range(n) for j, n in zip(k, orig, strict=True)]
                for kk in itertools.product(*omega):
                    if not math.isnan(float(plain[kk])):
                        return Failure(f"• in the padding although the original at {list(_one(kk))} is not •",
                                       _one(k), (("padded", v), ("unpadded there", float(plain[kk]))))
    return None


def _one(k: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(j) + 1 for j in k)


def judge_typing(law: Law, shapes: dict[str, tuple[int, ...]], params: dict[str, int]) -> Failure | None:
    """Wherever the left side is well typed, the right side is too, with one shape (the checker's rules)."""
    from ..lang.parser import parse
    from ..lang.typing import program_context

    text = [f"lang {law.dialect}"]
    if law.params:
        text.append("param " + ", ".join(law.params))
    text += [f"alloc {h} : {format_shape(shapes[h])}" for h in law.holes]
    text += [f"alloc {s} : []" for s in law.scalars]
    checker = program_context(parse("\n".join(text) + "\n", "<typing>"), params)
    results = []
    for e in law.exprs:
        try:
            results.append(("typed", checker.infer(e).shape))
        except TeilError as err:
            results.append(("ill-typed", err.rule or err.message))
    (k0, v0), (k1, v1) = results
    if k0 == "ill-typed" or (k0 == k1 and v0 == v1):
        return None
    show_ = [f"{k} ({'by ' + v if k == 'ill-typed' else format_shape(v)})" for k, v in results]
    return Failure(f"lhs is {show_[0]}, rhs is {show_[1]}", (), ())


# --------------------------------------------------------------------------
# The search and the shrinker
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Counterexample:
    """A shrunk failing case."""

    case: Case
    failure: Failure
    program: str


@dataclass(frozen=True)
class Result:
    """The verdict on a claim (a record with a status, as ``ct.prove``'s obligations)."""

    law: Law
    claim: Claim
    status: Status
    tests: int
    shrinks: int
    seconds: float
    pad: int | None
    unguarded_expa: bool
    values: str
    counterexample: Counterexample | None = None
    frames: int = 0

    @property
    def ok(self) -> bool:
        return self.status is Status.PASSED

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def render(self) -> str:
        return render(self)

    def __str__(self) -> str:
        return self.render()


def quickcheck(*texts: str, claim: Claim | str | None = None, dialect: str | None = None, pad: int | None = None,
               unguarded_expa: bool = False, values: str = "real", budget: int = BUDGET, seed: int = 0,
               max_extent: int = MAX_EXTENT) -> Result:
    """Test a claim on ``budget`` random instances and inputs; shrink the first failure."""
    from ..semantics.inputs import check_pad

    start = time.perf_counter()
    pad = check_pad(pad)
    _check_limits(pad, budget, max_extent)
    law = parse_law(*texts, dialect=dialect)
    claim = _claim(claim, law, pad)
    if values not in ("real", "float"):
        raise TeilInputError(f"--values {values}: expected 'real' (V ∪ {{•}}) or 'float' (also ±inf)")
    if claim is Claim.TYPING and (pad is not None or unguarded_expa or values != "real"):
        raise TeilInputError("the claim 'typing' is about shapes, not values: --pad, --unguarded-expa and "
                             "--values do not apply to it")
    pool = REAL_VALUES if values == "real" else FLOAT_VALUES
    rng = random.Random(seed)
    if claim is Claim.TYPING:
        return _quickcheck_typing(law, claim, rng, budget, max_extent, start, pad, unguarded_expa, values)
    fs = frames(law, same_shape=True)
    if not fs:
        raise TeilInputError(_no_frame(law))
    tests = too_large = 0
    with semantics(unguarded_expa):
        for _ in range(budget):
            frame = fs[rng.randrange(len(fs))]
            inst = assign(frame, law, rng, max_extent)
            if inst is None:
                continue
            if not small_enough(law, inst, pad):  # drawn again: a test runs in a blink, or not at all
                too_large += 1
                continue
            case = Case(inst, random_inputs(law, inst, rng, pool))
            tests += 1
            failure = judge(law, claim, case, pad)
            if failure is not None:
                case, failure, shrinks = shrink(law, claim, case, failure, pad, fs, pool, rng)
                cex = Counterexample(case, failure, instance_program(law, case.instance))
                return Result(law, claim, Status.FALSIFIED, tests, shrinks, time.perf_counter() - start, pad,
                              unguarded_expa, values, cex, len(fs))
    if tests == 0 and too_large:
        raise TeilInputError(f"no instance of the claim is small enough to test: each has a node of more "
                             f"than {MAX_ENTRIES:,} entries{' (padded)' if pad else ''}; use smaller extents "
                             f"(--max-extent, the claim's own, --pad)")
    if tests == 0:  # never "passed" without a single test
        raise TeilInputError(f"no instance of the claim could be drawn: with extents up to {max_extent}, every "
                             f"shape the typing rules allow breaks T-Proj's premise m <= n; try a larger "
                             f"--max-extent, or check the sides with core-teil check")
    return Result(law, claim, Status.PASSED, tests, 0, time.perf_counter() - start, pad, unguarded_expa, values,
                  None, len(fs))


def _check_limits(pad: int | None, budget: int, max_extent: int) -> None:
    """The caps of a run (:data:`MAX_BUDGET`, :data:`EXTENT_LIMIT`): a run that cannot end is bad input."""
    if not 1 <= budget <= MAX_BUDGET:
        raise TeilInputError(f"--budget {budget}: the number of test cases must be between 1 and {MAX_BUDGET:,}")
    if not 1 <= max_extent <= EXTENT_LIMIT:
        raise TeilInputError(f"--max-extent {max_extent}: the largest extent must be between 1 and "
                             f"{EXTENT_LIMIT} (quickcheck tests small shapes)")
    if pad is not None and pad > EXTENT_LIMIT:
        raise TeilInputError(f"--pad {pad}: quickcheck pads to multiples of at most {EXTENT_LIMIT} "
                             f"(`core-teil prove FILE --pad M` proves the padding claim for any M)")


def small_enough(law: Law, inst: Instance, pad: int | None) -> bool:
    """Every node of the instance (padded) has at most :data:`MAX_ENTRIES` entries."""
    from ..lang.shapes import round_up
    from ..semantics.inputs import concrete_extent

    typed = _typed(law, inst)
    for derivation in typed.derivations:
        for node in derivation.expr.walk():
            extents = (concrete_extent(typed, d) for d in node.shape)
            if math.prod(round_up(n, pad) if pad else n for n in extents) > MAX_ENTRIES:
                return False
    return True


def _claim(claim: Claim | str | None, law: Law, pad: int | None) -> Claim:
    if claim is None:
        claim = Claim.EQUAL if len(law.exprs) == 2 else Claim.SIMULATION
    try:
        claim = Claim(claim)
    except ValueError:
        raise TeilInputError(f"--claim {claim}: expected one of {', '.join(c.value for c in Claim)}") from None
    two = claim in (Claim.EQUAL, Claim.TYPING)
    if two and len(law.exprs) != 2:
        raise TeilInputError(f"the claim '{claim}' compares two expressions; give LHS and RHS")
    if not two and len(law.exprs) != 1:
        raise TeilInputError(f"the claim '{claim}' is about one expression under padding; give one")
    if claim in (Claim.SIMULATION, Claim.ZEROS) and pad is None:
        raise TeilInputError(f"the claim '{claim}' is about padding: give --pad M (e.g. --pad 4)")
    return claim


def _no_frame(law: Law) -> str:
    from ..lang.printer import format_names

    sides = " and ".join(format_expr(e) for e in law.exprs)
    what = "give both sides one shape" if len(law.exprs) == 2 else "type it"
    return (f"no shapes of {format_names(law.holes) or 'the holes'} (ranks 0..{MAX_RANK}) {what}: {sides}; "
            f"check each side with core-teil check, or write the claim with transp or expa to match the shapes")


def shrink(law: Law, claim: Claim, case: Case, failure: Failure, pad: int | None, fs: list[Frame],
           pool: tuple[float, ...], rng: random.Random) -> tuple[Case, Failure, int]:
    """Greedy: keep any simpler case that still fails, until none of the candidates does."""
    shrinks = 0
    progress = True
    while progress and shrinks < 200:
        progress = False
        for candidate in _candidates(law, case, fs, pool, rng):
            got = judge(law, claim, candidate, pad)
            if got is not None:
                case, failure, shrinks, progress = candidate, got, shrinks + 1, True
                break
    return case, failure, shrinks


def _candidates(law: Law, case: Case, fs: list[Frame], pool: tuple[float, ...],
                rng: random.Random) -> Iterator[Case]:
    inst = case.instance
    # 1. fewer dimensions: another frame of smaller total rank, extents small, inputs drawn anew
    for frame in fs:
        if sum(frame.ranks.values()) >= sum(inst.frame.ranks.values()):
            break
        for _ in range(8):
            smaller = assign(frame, law, rng, 2)
            if smaller is not None:
                yield Case(smaller, random_inputs(law, smaller, rng, pool))
    # 2. smaller extents: one extent class at a time, inputs cropped to the new shapes
    u = inst.frame.unifier
    current = _values_of(inst)
    for root in sorted({u.find(a) for a in current}, key=repr):
        if root[0] == "i" or current[root] <= 1:
            continue
        for smaller_value in range(1, current[root]):
            fixed = {a: (smaller_value if u.find(a) == root else v) for a, v in current.items()}
            smaller = assign(inst.frame, law, rng, 1, fixed)
            if smaller is None or smaller.size >= inst.size:
                continue
            if all(_fits(smaller.shapes[h], inst.shapes[h]) for h in law.holes):
                inputs = {h: np.array(case.inputs[h][tuple(slice(0, n) for n in smaller.shapes[h])])
                          for h in law.holes}
                for s, d in law.scalars.items():
                    inputs[s] = np.array(float(d if isinstance(d, int) else smaller.params[d]))
                yield Case(smaller, inputs)
    # 3. simpler values: each entry replaced by a value earlier in the pool
    rank = {(_key(v)): n for n, v in enumerate(pool)}
    for h in law.holes:
        arr = case.inputs[h]
        for k in np.ndindex(*arr.shape):
            here = rank.get(_key(float(arr[k])), len(pool))
            for v in pool[:here]:
                new = dict(case.inputs)
                new[h] = arr.copy()
                new[h][k] = v
                yield Case(inst, new)


def _values_of(inst: Instance) -> dict[Atom, int]:
    out: dict[Atom, int] = {}
    for h, t in inst.frame.holes.items():
        out.update(zip(t, inst.shapes[h], strict=True))
    for p, v in inst.params.items():
        out[_dim(p)] = v
    return out


def _fits(small: tuple[int, ...], big: tuple[int, ...]) -> bool:
    return len(small) == len(big) and all(a <= b for a, b in zip(small, big, strict=True))


def _key(v: float) -> Any:
    return "nan" if math.isnan(v) else v


def _quickcheck_typing(law: Law, claim: Claim, rng: random.Random, budget: int, max_extent: int, start: float,
                       pad: int | None, unguarded_expa: bool, values: str) -> Result:
    """Typing claims: holes of random shapes, half of them drawn where both sides type (unification)."""
    fs = frames(law, same_shape=False)
    tests = 0
    for n in range(budget):
        inst = assign(fs[rng.randrange(len(fs))], law, rng, max_extent) if fs and n % 2 == 0 else None
        if inst is not None:
            shapes, params = inst.shapes, inst.params
        else:
            shapes = {h: tuple(rng.randint(1, max_extent) for _ in range(rng.randint(0, MAX_RANK)))
                      for h in law.holes}
            params = {p: rng.randint(1, max_extent) for p in law.params}
        tests += 1
        failure = judge_typing(law, shapes, params)
        if failure is not None:
            shapes, params, failure, shrinks = _shrink_typing(law, shapes, params, failure)
            fake = Instance(params, shapes, (), Frame({}, {}, (), Unifier()))
            text = "\n".join(f"{h} : {format_shape(shapes[h])}" for h in law.holes)
            cex = Counterexample(Case(fake, {}), failure, text)
            return Result(law, claim, Status.FALSIFIED, tests, shrinks, time.perf_counter() - start, pad,
                          unguarded_expa, values, cex, len(fs))
    return Result(law, claim, Status.PASSED, tests, 0, time.perf_counter() - start, pad, unguarded_expa, values,
                  None, len(fs))


def _shrink_typing(law: Law, shapes: dict[str, tuple[int, ...]], params: dict[str, int],
                   failure: Failure) -> tuple[dict[str, tuple[int, ...]], dict[str, int], Failure, int]:
    shrinks = 0
    progress = True
    while progress:
        progress = False
        options: list[tuple[dict[str, tuple[int, ...]], dict[str, int]]] = []
        for h, t in shapes.items():
            for pos in range(len(t)):
                options.append(({**shapes, h: t[:pos] + t[pos + 1:]}, params))
                if t[pos] > 1:
                    options.append(({**shapes, h: t[:pos] + (t[pos] - 1,) + t[pos + 1:]}, params))
        for p, v in params.items():
            if v > 1:
                options.append((shapes, {**params, p: v - 1}))
        for s, ps in options:
            got = judge_typing(law, s, ps)
            if got is not None:
                shapes, params, failure, shrinks, progress = s, ps, got, shrinks + 1, True
                break
    return shapes, params, failure, shrinks


# --------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------


def show(v: Any) -> str:
    """A value or an array as the counterexamples of ``equiv`` print them: • for NaN, integers bare."""
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return show(float(v))
        return "[" + ", ".join(show(x) for x in v) + "]"
    v = float(v)
    if math.isnan(v):
        return "•"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return str(int(v)) if v.is_integer() else f"{v:g}"


def describe(law: Law, claim: Claim, pad: int | None, unguarded_expa: bool) -> str:
    sides = [format_expr(e) for e in law.exprs]
    for s, d in law.scalars.items():
        sides = [t.replace(f"mul {s}", f"smul {d}") for t in sides]
    what = {Claim.EQUAL: f"{sides[0]}  ≅  {sides[-1]}",
            Claim.TYPING: f"{sides[0]}  =>  {sides[-1]} keeps the type (where lhs is well typed)",
            Claim.SIMULATION: f"{sides[0]}: padded = unpadded on the original domain, padding 0 or • "
                              f"(report Theorem 3, true form)",
            Claim.ZEROS: f"{sides[0]}: padded = unpadded on the original domain, padding 0 "
                         f"(report Lemma 5 (ii) / Theorem 3, verbatim)"}[claim]
    scope = [f"lang {law.dialect}"]
    if pad is not None:
        scope.append(f"padded to multiples of {pad}")
    if unguarded_expa:
        scope.append("expa unguarded (the report's padded expa)")
    return f"{what}   [{'; '.join(scope)}]"


def render(r: Result) -> str:
    law = r.law
    head = f"quickcheck: {describe(law, r.claim, r.pad, r.unguarded_expa)}"
    values = "V ∪ {•}" if r.values == "real" else "floats with ±inf and •"
    if r.ok:
        ranks = ", ".join(f"{h}" for h in law.holes)
        inputs = "" if r.claim is Claim.TYPING else f"; inputs in {values}"  # typing runs nothing
        lines = [head, f"OK: passed {r.tests} random test(s) ({r.frames} rank assignment(s) of {ranks or 'no holes'}"
                       f"{inputs}) in {r.seconds:.2f} s",
                 "This is evidence, not a proof."]
        lines += _next_steps(r)
        return "\n".join(lines)
    cex = r.counterexample
    assert cex is not None
    lines = [head, f"FALSIFIED after {r.tests} test(s), shrunk {r.shrinks} time(s), in {r.seconds:.2f} s:"]
    inst = cex.case.instance
    if r.claim is Claim.TYPING:
        if inst.params:
            lines.append("  " + ", ".join(f"{p} = {v}" for p, v in inst.params.items()))
        lines += [f"  {line}" for line in cex.program.splitlines()]
        lines.append(f"  {cex.failure.what}")
        lines.append("Check each side with `core-teil derive` on a program with these shapes.")
        return "\n".join(lines)
    if inst.params:
        lines.append("  " + ", ".join(f"{p} = {v}" for p, v in inst.params.items()))
    for h in law.holes:
        lines.append(f"  {h} : {format_shape(inst.shapes[h])} = {show(cex.case.inputs[h])}")
    for s, d in law.scalars.items():
        lines.append(f"  {s} = {show(cex.case.inputs[s])} (the factor {d} of smul {d})")
    at = f"[{', '.join(map(str, cex.failure.index))}]"
    lines.append(f"  {cex.failure.what}, at {at}:")
    for name, v in cex.failure.values:
        lines.append(f"    {name} = {show(v)}")
    lines.append("The instance as a program (save it and `core-teil trace` it at that index"
                 + (f" with --pad {r.pad}" if r.pad is not None else "") + "):")
    lines += [f"  {line}" if line else "" for line in cex.program.rstrip("\n").splitlines()]
    return "\n".join(lines)


def _next_steps(r: Result) -> list[str]:
    if r.claim is Claim.EQUAL:
        extra = (" (smul has no TeIL form: `make verify` proves Law (5) red∘expa)" if r.law.scalars else "")
        return ["To prove it for every shape and input: write the two sides as programs with the same inputs "
                "and one output,", f"and run `core-teil equiv LHS.teil RHS.teil`{extra}."]
    if r.claim in (Claim.SIMULATION, Claim.ZEROS):
        return ["To prove it for one program and every shape: `core-teil prove FILE --pad M` "
                "(obligation padding-simulation); `make verify` proves Theorem 3* for every program."]
    return ["To see why for given shapes: `core-teil derive` each side (the derivation stops at the rule that fails)."]


__all__ = ["BUDGET", "Claim", "Counterexample", "Result", "Status", "parse_law", "quickcheck"]
