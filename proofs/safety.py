"""Type safety for all programs: paper Lemmas 4.1, 4.3, 4.5, Theorems 4.4, 4.6.

In the order of the Coq development (TensorIR ``safety/Semantics.v``): one
well-definedness step per constructor (``sem_eval_well_defined_*``), proved
over a hole; then Lemma 4.3 by the kernel's structural induction; OK-Stmt
inversion and Theorem 4.4; St-Stmt (Lemma 4.5); St-Seq and Theorem 4.6 by
induction on the statements.  Lemma 4.1 (typing is unique and computable)
compares ``typing.py`` with the rule table of SPEC.md section 3, restated
here once as :func:`spec_rules` (for every rank; :mod:`proofs.ranks` reads the same
table over shapes of unknown length): per rule with symbolic extents (Z3), and
exhaustively on every expression up to :data:`ENUM_SIZE` nodes.

"Well-defined" means what it means in the paper: evaluation never reads the
memory outside its domain (values may well be •); a read is the only way
``[[·]]`` can fail, so each step lemma has one obligation per read.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from core_teil.errors import TeilTypeError
from core_teil.lang import typing as ty
from core_teil.lang.shapes import ShapeSolver
from core_teil.lang.syntax import (
    ELEM_OPS,
    Alloc,
    Contr,
    Diag,
    Elem,
    Expa,
    Expr,
    Prod,
    Program,
    Proj,
    Red,
    Stmt,
    Transp,
    Var,
)
from core_teil.semantics import eval as ev

from .kernel import RANK_BOUND, Lemma, Obligation, Rule, case_of
from .schema import (
    CEIL,
    Instance,
    Schema,
    canonical,
    hole_program,
    hole_shape,
    index,
    instances,
    pairs,
    params_of,
    ranks,
    realistic,
    run,
    select,
    show,
    stmt_instance,
    within,
)

X, Y, S = Var("X"), Var("Y"), Var("S")


def _h(*spec: tuple[str, int]) -> dict[str, tuple]:
    return {name: hole_shape(name, r) for name, r in spec}


# --------------------------------------------------------------------------
# The schemata of each case, for every rank up to RANK_BOUND
# --------------------------------------------------------------------------


def schemata(case: str) -> Iterator[Schema]:
    """Every instance of one constructor over holes, ranks 0..R (ill-typed ones included:
    the checker decides which are typed, so a rule that accepts too much is exercised)."""
    R = RANK_BOUND
    if case == "Var":
        for r in ranks():
            yield X, _h(("X", r)), ()
    elif case.startswith("Elem."):
        op = case.split(".")[1]
        for r0, r1 in itertools.product(ranks(), ranks()):
            yield Elem(op, X, Y), _h(("X", r0), ("Y", r1)), ()
    elif case == "SMul":
        for r in ranks():
            yield Elem("mul", S, X), _h(("S", 0), ("X", r)), ()
    elif case == "SDiv":
        for r in ranks():
            yield Elem("div", X, S), _h(("X", r), ("S", 0)), ()
    elif case == "Prod":
        for r0, r1 in pairs(R):
            yield Prod(X, Y), _h(("X", r0), ("Y", r1)), ()
    elif case in ("Red", "Contr", "Diag"):
        ctor = {"Red": Red, "Contr": Contr, "Diag": Diag}[case]
        for r in ranks():
            yield ctor(X), _h(("X", r)), ()
    elif case == "Transp":
        for r in ranks():
            for i in range(0, r + 2):
                yield Transp(i, X), _h(("X", r)), ()
    elif case == "Expa":
        for r in ranks(0, R - 1):
            yield Expa("d", X), _h(("X", r)), ("d",)
    elif case == "Proj":
        for r in ranks():
            yield Proj("m", X), _h(("X", r)), ("m",)
    else:
        raise ValueError(f"no schemata for case {case!r}")


#: (lemma suffix, schemata case, induction cases covered, TensorIR lemma)
STEPS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("Var", "Var", ("Var",), "sem_eval_well_defined_Var"),
    ("Prod", "Prod", ("Prod",), "sem_eval_well_defined_Prod"),
    ("Add", "Elem.add", ("Elem.add",), "sem_eval_well_defined_Add"),
    ("Sub", "Elem.sub", ("Elem.sub",), "(report: sub)"),
    ("Mul", "Elem.mul", ("Elem.mul",), "sem_eval_well_defined_Mul"),
    ("Div", "Elem.div", ("Elem.div",), "(report: controlled div)"),
    ("SMul", "SMul", ("Elem.mul",), "sem_eval_well_defined_SMul"),
    ("SDiv", "SDiv", ("Elem.div",), "(report Fig. 9: T-SDiv)"),
    ("Transp", "Transp", ("Transp",), "sem_eval_well_defined_Transp"),
    ("Contr", "Contr", ("Contr",), "sem_eval_well_defined_Contr"),
    ("Proj", "Proj", ("Proj",), "sem_eval_well_defined_Proj"),
    ("Diag", "Diag", ("Diag",), "sem_eval_well_defined_Diag"),
    ("Expa", "Expa", ("Expa",), "sem_eval_well_defined_Expand"),
    ("Red", "Red", ("Red",), "sem_eval_well_defined_Red"),
)


# --------------------------------------------------------------------------
# Well-definedness steps (paper Lemma 4.3 / report Lemma 2 (i) and Lemma 5 (i))
# --------------------------------------------------------------------------


def domain(inst: Instance, x: str, pad: Any) -> tuple[z3.ArithRef, ...]:
    """``dom(μ x)``: ``Γ(x)``, or ``⌈Γ(x)⌉`` in the padded store (report Fig. 13)."""
    t = inst.gamma(x)
    return t if pad is None else tuple(CEIL(pad, n) for n in t)


def wd_obligations(inst: Instance, pad: Any = None) -> Iterator[Obligation]:
    """For ``k <= type(e)`` (``⌈type(e)⌉`` padded), every read the equation makes is in ``dom(μ)``."""
    sem, interp = run(inst, "w", pad)
    t = tuple(sem.bound(d) for d in inst.derivation.shape)
    k = index("k", len(t))
    ev.denote(inst.expr, k, sem)
    hyps = [*inst.hypotheses(), *interp.ceil_facts]
    if pad is not None:
        hyps.append(pad >= 1)
    for n, rd in enumerate(interp.reads):
        dom = domain(inst, rd.name, pad)
        hyps_dom = [n <= c for n, c in zip(inst.gamma(rd.name), dom, strict=True)] if pad is not None else []
        # The claim: for every k <= t and every summation index on the read's path, it is in bounds.
        goal = z3.And(within(k, t), *rd.path, z3.Not(within(rd.index, dom)))

        def explain(model: z3.ModelRef, rd: Any = rd, dom: tuple = dom) -> str:
            return (f"{inst.label}: " + show(model, [*params_of(inst), ("k", k)])
                    + f"; reads {rd.name} at " + show(model, [("index", rd.index), ("domain", dom)]))

        small = ((realistic(interp.ceil_facts, pad),) if pad is not None else ()) + (
            z3.And(*[v <= 2 for v in inst.shapes.vars.values()]),)
        yield Obligation(f"{inst.label}: read #{n + 1} of {rd.name} in bounds", (*hyps, *hyps_dom), goal, explain,
                         small, **inst.tags())


def wd_lemma(suffix: str, case: str, cases: tuple[str, ...], coq: str) -> Lemma:
    def build() -> Iterator[Obligation]:
        for inst in instances(schemata(case)):
            yield from wd_obligations(inst)

    return Lemma(f"WD-{suffix}", f"paper Lemma 4.3 case {suffix}; TensorIR {coq}; report Lemma 2 (i)",
                 f"[[{suffix.lower()} ...]](k) reads only in-bounds for k <= its type (ranks <= R)",
                 build, cases=cases, ranks=True, min_rank=MIN_RANK.get(case, 0))


#: The smallest rank at which a constructor has a typed instance (its obligations start there).
MIN_RANK = {"Red": 1, "Contr": 2, "Diag": 2, "Transp": 2, "Expa": 1, "Proj": 1}


# --------------------------------------------------------------------------
# OK-Stmt, St-Stmt, St-Seq
# --------------------------------------------------------------------------


def ok_stmt_obligations() -> Iterator[Obligation]:
    """OK-Stmt inversion: ``x = e ok`` implies ``type(e) = Γ(x)`` (the premise Theorem 4.4 uses)."""
    for r0, r1 in itertools.product(ranks(), ranks()):
        holes = _h(("X", r0), ("H", r1))
        found = stmt_instance(Stmt("X", Var("H")), holes)
        if found is None:
            continue
        inst, sd = found
        t_x, t_e = inst.dims(sd.declared), inst.dims(sd.expr.shape)
        label = f"X = H with X : rank {r0}, H : rank {r1}"
        if len(t_x) != len(t_e):
            yield Obligation(f"{label}: ranks agree", (), z3.BoolVal(True),
                             lambda m, label=label: f"{label}: OK-Stmt accepted a rank mismatch", rank=max(r0, r1))
            continue
        same = z3.And(*[a == b for a, b in zip(t_x, t_e, strict=True)])
        yield Obligation(f"{label}: extents agree", inst.hypotheses(), z3.Not(same),
                         lambda m, inst=inst, label=label: f"{label}: " + show(m, params_of(inst)), rank=max(r0, r1))


def stmt_schemata() -> Iterator[tuple[Stmt, dict[str, tuple]]]:
    """``X = H``, and the self-referencing ``X = add X H`` and ``X = transp 1 X`` (St-Stmt's pre-state)."""
    for r in ranks():
        shape = hole_shape("X", r)
        yield Stmt("X", Var("H")), {"X": shape, "H": shape}
        yield Stmt("X", Elem("add", X, Var("H"))), {"X": shape, "H": shape}
        if r >= 2:
            sym = ("n", "n", *shape[2:])
            yield Stmt("X", Transp(1, X)), {"X": sym}


def st_stmt_obligations(pad: Any = None) -> Iterator[Obligation]:
    """Lemma 4.5 (St-Stmt's premises hold; the domain is preserved; the pre-state is read)."""
    for stmt, holes in stmt_schemata():
        found = stmt_instance(stmt, holes)
        if found is None:
            yield Obligation(f"{stmt.target} = ... is ok", (), z3.BoolVal(True),
                             lambda m, stmt=stmt: f"OK-Stmt rejected the well-typed {stmt}")
            continue
        inst, _ = found
        tags = inst.tags()
        label = inst.label + (" (padded)" if pad is not None else "")
        sem, interp = run(inst, "s", pad)
        mu = sem.store
        new = ev.st_stmt(stmt, sem)
        hyps = [*inst.hypotheses(), *interp.ceil_facts]
        if pad is not None:
            hyps.append(pad >= 1)
        dom = domain(inst, stmt.target, pad)
        hyps += [n <= c for n, c in zip(inst.gamma(stmt.target), dom, strict=True)] if pad is not None else []
        writes = interp.updates
        ok = len(writes) == 1 and writes[0].name == stmt.target and set(new) == set(mu)
        yield Obligation(f"{label}: one update, of {stmt.target}; names kept", (), z3.BoolVal(not ok),
                         lambda m, w=writes: f"St-Stmt made updates {[x.name for x in w]}", **tags)
        if not ok:
            continue
        w = writes[0]
        k = w.index
        path = z3.And(*w.path)
        yield Obligation(f"{label}: writes only inside dom(μ {stmt.target})", hyps,
                         z3.And(path, z3.Not(within(k, dom))),
                         lambda m, k=k, dom=dom: "writes at " + show(m, [("k", k), ("domain", dom)]), **tags)
        yield Obligation(f"{label}: writes all of dom(μ {stmt.target})", hyps,
                         z3.And(within(k, dom), z3.Not(path)),
                         lambda m, k=k, dom=dom: "misses " + show(m, [("k", k), ("domain", dom)]), **tags)
        for n, rd in enumerate(interp.reads):
            rdom = domain(inst, rd.name, pad)
            yield Obligation(f"{label}: read #{n + 1} in bounds", hyps,
                             z3.And(path, *rd.path, z3.Not(within(rd.index, rdom))), **tags)
        # The value written at k is [[e]](k) in the memory *before* the statement.
        sem2, interp2 = run(inst, "s", pad, store=mu)
        expect = ev.denote(stmt.expr, k, sem2)
        memo: dict = {}
        yield Obligation(f"{label}: μ'({stmt.target})(k) = [[e]] μ k (pre-state)",
                         [canonical(h, memo) for h in (*hyps, *interp2.ceil_facts)],
                         canonical(z3.And(path, select(new[stmt.target], k) != expect), memo),
                         lambda m, inst=inst, k=k: "differs at " + show(m, [*params_of(inst), ("k", k)]), **tags)
        for y in mu:
            if y != stmt.target:
                yield Obligation(f"{label}: μ'({y}) = μ({y})", hyps, new[y] != mu[y], **tags)


# --------------------------------------------------------------------------
# Lemma 4.1: the checker agrees with the rules (SPEC.md section 3's table)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Logic:
    """Booleans over extents and shapes, for the one rule table :func:`spec_rules`: Python bools for
    concrete extents, Z3 terms for symbolic ones; shapes are tuples (a known rank) or, in
    :mod:`proofs.ranks`, :class:`~core_teil.semantics.sequences.Seq` (an unknown rank)."""

    eq: Callable[[Any, Any], Any]
    le: Callable[[Any, Any], Any]
    conj: Callable[..., Any]
    true: Any
    #: Two shapes of equal rank are equal (T-Elem's premise).
    same: Callable[[Any, Any], Any]


def _z3_and(*xs: Any) -> z3.BoolRef:
    return z3.And(*xs) if xs else z3.BoolVal(True)


Z3_LOGIC = Logic(lambda a, b: a == b, lambda a, b: a <= b, _z3_and, z3.BoolVal(True),
                 lambda s, u: _z3_and(*[a == b for a, b in zip(s, u, strict=True)]))
PY_LOGIC = Logic(lambda a, b: a == b, lambda a, b: a <= b, lambda *xs: all(xs), True,
                 lambda s, u: all(a == b for a, b in zip(s, u, strict=True)))


def _rank(t: Any) -> Any:
    """A shape's rank: a number for a tuple, a Z3 term for a sequence of unknown length."""
    return len(t) if isinstance(t, tuple) else t.length


def _rule(L: Logic, name: str, rank_ok: Any, premise: Callable[[], Any], shape: Callable[[], Any]) -> list:
    """One alternative of the table.  ``rank_ok`` is the rule's condition on ranks: a Python bool when
    the ranks are known (then a rule that does not apply is left out, and its premise and shape,
    which may index past the end, are never built), else a Z3 term conjoined with the premise."""
    if isinstance(rank_ok, bool):
        return [(name, premise(), shape())] if rank_ok else []
    return [(name, z3.And(rank_ok, premise()), shape())]


def _both(a: Any, b: Any) -> Any:
    return a and b if isinstance(a, bool) and isinstance(b, bool) else z3.And(a, b)


def spec_rules(e: Expr, ts: Sequence[Any], args: dict[str, Any], L: Logic) -> list[tuple[str, Any, Any]]:
    """The rules of SPEC.md section 3 that can conclude ``e : t``: (rule, premise, t).  Written once,
    for every rank: over tuples (:data:`PY_LOGIC`, :data:`Z3_LOGIC`) and over sequences of unknown
    length (``proofs.ranks.SEQ_LOGIC``), with the table's own positions (not typing.py's helpers).

    ``ts`` are the children's types; ``args`` the extents written in ``e`` (``d`` of expa, ``m``
    of proj) and, for rank-generic schemata, the position ``i`` of transp, as terms of the logic."""
    if isinstance(e, Elem):
        t0, t1 = ts
        alts = _rule(L, "T-Elem", _rank(t0) == _rank(t1), lambda: L.same(t0, t1), lambda: t0)
        if e.op == "mul":
            alts += _rule(L, "T-SMul", _rank(t0) == 0, lambda: L.true, lambda: t1)
        if e.op == "div":
            alts += _rule(L, "T-SDiv", _rank(t1) == 0, lambda: L.true, lambda: t0)
        return alts
    if isinstance(e, Prod):
        return [("T-Prod", L.true, ts[0] + ts[1])]
    (t,) = ts
    if isinstance(e, Red):
        return _rule(L, "T-Red", _rank(t) >= 1, lambda: L.true, lambda: t[1:])
    if isinstance(e, Contr):
        return _rule(L, "T-Contr", _rank(t) >= 2, lambda: L.eq(t[0], t[1]), lambda: t[2:])
    if isinstance(e, Diag):
        return _rule(L, "T-Diag", _rank(t) >= 2, lambda: L.eq(t[0], t[1]), lambda: (t[0],) + t[2:])
    if isinstance(e, Transp):
        i = args.get("i", e.i)
        return _rule(L, "T-Transp", _both(i >= 1, i < _rank(t)), lambda: L.true,
                     lambda: t[: i - 1] + (t[i], t[i - 1]) + t[i + 1 :])
    if isinstance(e, Expa):
        return [("T-Expa", L.le(1, args["d"]), (args["d"],) + t)]
    if isinstance(e, Proj):
        m = args["m"]
        return _rule(L, "T-Proj", _rank(t) >= 1, lambda: L.conj(L.le(1, m), L.le(m, t[0])), lambda: t[1:])
    raise ValueError(f"no rule for {type(e).__name__}")


RULE_CASES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("T-Var", ("Var",), ("Var",)),
    ("T-Elem", ("Elem.add", "Elem.sub", "Elem.mul", "Elem.div"), tuple(f"Elem.{op}" for op in ELEM_OPS)),
    ("T-SMul", ("SMul",), ("Elem.mul",)),
    ("T-SDiv", ("SDiv",), ("Elem.div",)),
    ("T-Prod", ("Prod",), ("Prod",)),
    ("T-Red", ("Red",), ("Red",)),
    ("T-Contr", ("Contr",), ("Contr",)),
    ("T-Diag", ("Diag",), ("Diag",)),
    ("T-Transp", ("Transp",), ("Transp",)),
    ("T-Expa", ("Expa",), ("Expa",)),
    ("T-Proj", ("Proj",), ("Proj",)),
)


def _tuple_eq(a: tuple, b: tuple) -> z3.BoolRef:
    if len(a) != len(b):
        return z3.BoolVal(False)
    return z3.And(*[x == y for x, y in zip(a, b, strict=True)]) if a else z3.BoolVal(True)


def typing_rule_obligations(case: str) -> Iterator[Obligation]:
    """For every schema of the case: checker ⟺ rule table, with symbolic extents."""
    for expr, holes, extra in schemata(case):
        program = hole_program(holes, extra)
        from .schema import Premises

        shapes = Premises(program)
        checker = ty.Checker(program, shapes, dict(holes))
        label = _label(expr, holes)
        try:
            d = checker.infer(expr)
        except TeilTypeError:
            d = None
        params = shapes.hypotheses()
        ts = [tuple(shapes.term(x) for x in holes[c.name]) for c in expr.children()] if expr.children() \
            else [tuple(shapes.term(x) for x in holes[expr.name])]  # type: ignore[attr-defined]
        args = {a: shapes.term(a) for a in extra}
        alts = [("T-Var", z3.BoolVal(True), ts[0])] if isinstance(expr, Var) else spec_rules(expr, ts, args, Z3_LOGIC)
        # The premises are antecedents of the claims (goals); the parameters are the context.
        tags = {"case": case_of(expr), "rank": max([len(t) for t in holes.values()]
                                                    + [len(t) for _, _, t in alts] + ([len(d.shape)] if d else []))}
        if d is None:
            for rule, prem, _ in alts:
                yield Obligation(f"{label}: rejected, and {rule} does not apply", params, prem,
                                 lambda m, rule=rule, label=label: f"{label}: the checker rejects what "
                                 f"{rule} derives", **tags)
            continue
        got = tuple(shapes.term(x) for x in d.shape)
        side = z3.And(*shapes.premises())
        some = z3.Or(*[z3.And(prem, _tuple_eq(t, got)) for _, prem, t in alts]) if alts else z3.BoolVal(False)
        yield Obligation(f"{label}: checker ⟹ rules ({d.rule})", params, z3.And(side, z3.Not(some)),
                         lambda m, label=label, d=d: f"{label}: the checker concludes {d.rule} "
                         f": {list(d.shape)} but no rule of SPEC.md derives it", **tags)
        for rule, prem, t in alts:
            yield Obligation(f"{label}: {rule} ⟹ checker", params, z3.And(prem, z3.Not(z3.And(side,
                             _tuple_eq(t, got)))),
                             lambda m, rule=rule, label=label, shapes=shapes: f"{label}: {rule} applies but the "
                             "checker demands more or concludes otherwise; "
                             + show(m, list(shapes.vars.items())), **tags)
        for (r1, p1, t1), (r2, p2, t2) in itertools.combinations(alts, 2):
            yield Obligation(f"{label}: {r1}, {r2} agree (uniqueness)", params, z3.And(p1, p2,
                             z3.Not(_tuple_eq(t1, t2))), **tags)


def _label(expr: Expr, holes: dict[str, tuple]) -> str:
    from .schema import repr_expr

    return repr_expr(expr, holes)


# -- exhaustive enumeration ---------------------------------------------------

#: Lemma 4.1 is checked on every Core expression with at most this many nodes over ENUM_CONTEXT.
ENUM_SIZE = 5
ENUM_CONTEXT: dict[str, tuple[int, ...]] = {"s": (), "a": (2,), "b": (2, 2), "c": (2, 3), "d": (3, 2, 2)}


def _unary() -> list[Callable[[Expr], Expr]]:
    out: list[Callable[[Expr], Expr]] = [Red, Contr, Diag]
    out += [lambda e, i=i: Transp(i, e) for i in range(0, 4)]
    out += [lambda e, d=d: Expa(d, e) for d in (0, 1, 2)]
    out += [lambda e, m=m: Proj(m, e) for m in (0, 1, 2, 3)]
    return out


def _binary() -> list[Callable[[Expr, Expr], Expr]]:
    return [*(lambda a, b, op=op: Elem(op, a, b) for op in ELEM_OPS), Prod]


def enumerate_exprs(size: int) -> dict[int, list[tuple[Expr, frozenset]]]:
    """All expressions by node count, each with its derivable types (the rules, bottom-up)."""
    by: dict[int, list[tuple[Expr, frozenset]]] = {1: [(Var(x), frozenset({t})) for x, t in ENUM_CONTEXT.items()]}
    for n in range(2, size + 1):
        out: list[tuple[Expr, frozenset]] = []
        for f in _unary():
            for e, ds in by[n - 1]:
                node = f(e)
                args = {"d": getattr(node, "d", None), "m": getattr(node, "m", None)}
                out.append((node, frozenset(t for c in ds for _, ok, t in spec_rules(node, [c], args, PY_LOGIC)
                                            if ok)))
        for f2 in _binary():
            for n0 in range(1, n - 1):
                for (e0, d0), (e1, d1) in itertools.product(by[n0], by[n - 1 - n0]):
                    node = f2(e0, e1)
                    out.append((node, frozenset(t for c0 in d0 for c1 in d1
                                                for _, ok, t in spec_rules(node, [c0, c1], {}, PY_LOGIC) if ok)))
        by[n] = out
    return by


def enumeration_obligations() -> Iterator[Obligation]:
    program = Program("core", tuple(Alloc(x, t) for x, t in ENUM_CONTEXT.items()), ())
    shapes = ShapeSolver(program)
    count, bad = 0, []
    for exprs in enumerate_exprs(ENUM_SIZE).values():
        for e, derivable in exprs:
            count += 1
            try:
                got: Any = ty.Checker(program, shapes, dict(ENUM_CONTEXT)).infer(e).shape
            except TeilTypeError:
                got = None
            if len(derivable) > 1 or (got is None) != (not derivable) or (got is not None and {got} != derivable):
                bad.append((e, got, sorted(derivable)))
                if len(bad) <= 5:  # at once: a run that stops at the first refutation stops here
                    yield Obligation(f"{_label(e, {})}", (), z3.BoolVal(True),
                                     lambda m, e=e, got=got, want=bad[-1][2]: f"{_label(e, {})}: the checker "
                                     f"says {'ill-typed' if got is None else list(got)}, the rules derive "
                                     f"{want or 'nothing'}")
    disagree = len(bad)
    yield Obligation(f"all {count} expressions of <= {ENUM_SIZE} nodes over {len(ENUM_CONTEXT)} allocations agree",
                     (), z3.BoolVal(bool(bad)), lambda m: f"{disagree} expressions disagree")


# --------------------------------------------------------------------------
# The lemmas, in the order of the Coq development
# --------------------------------------------------------------------------


def lemmas() -> list[Lemma]:
    from .ranks import GENERIC_RULES, GENERIC_STEPS  # ranks -> padding -> safety: imported when called

    out: list[Lemma] = []
    for rule, cases, covers in RULE_CASES:
        def build(cases: tuple[str, ...] = cases) -> Iterable[Obligation]:
            for case in cases:
                yield from typing_rule_obligations(case)

        out.append(Lemma(f"Lemma 4.1 case {rule}", "paper Lemma 4.1 (⇔, one rule); TensorIR sem_typing_computable",
                         f"the checker's {rule} derives exactly what SPEC.md's {rule} derives (symbolic extents)",
                         build, cases=covers, ranks=True, cost=0.6,
                         min_rank=min(MIN_RANK.get(c, 0) for c in cases)))
    out.append(Lemma("Lemma 4.1 (exhaustive)", "paper Lemma 4.1; TensorIR sem_typing_unique",
                     f"every Core expression of <= {ENUM_SIZE} nodes over {len(ENUM_CONTEXT)} allocations: "
                     "types unique, checker = rules", enumeration_obligations, Rule.ENUMERATION, cost=4.0,
                     coverage="instances"))
    # The structural lemmas rest on the rank-generic cases of proofs/ranks.py; the rank-indexed
    # cases above are their instances at ranks 0..R, kept for their small counterexamples.
    out.append(Lemma("Lemma 4.1", "paper Lemma 4.1 (typing is unique, total, computable)",
                     "Γ ⊢ e : t ⟺ type_Γ(e) = t, by structural induction over the rule cases",
                     None, Rule.STRUCTURAL,
                     premises=tuple(f"Lemma 4.1 case {r} (all ranks)" for r, _ in GENERIC_RULES)))
    for suffix, case, cases, coq in STEPS:
        out.append(wd_lemma(suffix, case, cases, coq))
    out.append(Lemma("Lemma 4.3", "paper Lemma 4.3; TensorIR sem_eval_well_defined'; report Lemma 2 (i)",
                     "Γ ⊢ e : t, μ ~ μ_allocs  ⟹  [[e]] Γ μ k well-defined for all k <= t",
                     None, Rule.STRUCTURAL, premises=tuple(f"WD-{s} (all ranks)" for s, _, _ in GENERIC_STEPS)))
    out.append(Lemma("OK-Stmt", "paper Fig. 8 OK-Stmt (inversion); report Lemma 2 (iii); TensorIR "
                     "sem_typable_expr_in_stmt", "x = e ok  ⟹  Γ(x) = type(e) (ranks <= R)",
                     ok_stmt_obligations, ranks=True))
    out.append(Lemma("Theorem 4.4", "paper Theorem 4.4; report Corollary 1; TensorIR sem_eval_well_defined",
                     "x = e in an ok program: a unique t = Γ(x) with e : t, and [[e]] well-defined on t",
                     None, Rule.COROLLARY, premises=("OK-Stmt (all ranks)", "Lemma 4.1", "Lemma 4.3")))
    out.append(Lemma("Lemma 4.5", "paper Lemma 4.5, Fig. 9 St-Stmt; TensorIR sem_step_stmt; report Corollary 2",
                     "St-Stmt's premises hold, writes exactly dom(μ x), reads the pre-state, keeps the rest",
                     lambda: st_stmt_obligations(None), ranks=True, cost=1.5))
    out.append(Lemma("Theorem 4.6", "paper Theorem 4.6; report Theorem 1; TensorIR sem_program_evaluation",
                     "an ok program evaluates fully to μ' ~ μ_allocs (induction on the statements)",
                     None, Rule.STATEMENTS, premises=("Lemma 4.5 (all ranks)", "St-Seq", "Lemma 4.3")))
    return out
