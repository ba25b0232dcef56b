"""Reading a student's answer to an exercise (``core-teil exercise ID ANSWER``).

An answer is a program, or one of a few small notations the chapters use,
each read here into data the checkers of :mod:`core_teil.teach.exercises`
compare with the tool's own result:

* shapes ``[2, 3]`` or ``none``; values ``[•, 0, 2.5]`` (``•``, ``nan`` or
  ``undef`` for the undefined value, ``inf``); lists of them separated by ``;``;
* names: typing rules (``T-Contr``), equations (``ev_expa_at``), obligations;
* a *term*, the last line of a trace: ``Σ_{m1=1..n} (B[i, j, m1] · C[i])``,
  also typed as ``sum_{k=1..n} B[i,j,k] * C[i]``; it is evaluated on numbers
  (:func:`evaluate_term`) rather than compared as text, so any equal
  formula is right;
* store reads ``B[2, i, j]``; an equation of values ``0 / 0 = 0``.

Malformed notation is a :class:`~core_teil.errors.TeilInputError` (exit 2)
that shows what was expected.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import TeilInputError

UNDEF_WORDS = {"•", "nan", "undef", "undefined", "bullet"}
#: A sum's bound written as a number is at most this (the exercises' extents are below 10), and evaluating
#: a term at one index takes at most MAX_STEPS steps: an answer cannot make the checker run for hours.
MAX_SUM_BOUND = 1000
MAX_STEPS = 100_000


def items(text: str) -> list[str]:
    """The parts of an answer separated by ``;`` (or by new lines)."""
    parts = [p.strip() for p in re.split(r"[;\n]", text)]
    return [p for p in parts if p]


# --------------------------------------------------------------------------
# Shapes, values, names
# --------------------------------------------------------------------------


def parse_shape(text: str) -> tuple[int | str, ...] | None:
    """``[2, 3]`` -> ``(2, 3)``, ``[n]`` -> ``('n',)``; ``none`` (no shape: ill typed) -> None."""
    t = text.strip()
    if t.lower() in ("none", "no shape", "ill-typed", "ill typed", "-"):
        return None
    m = re.fullmatch(r"\[\s*(.*?)\s*\]", t)
    if m is None:
        raise TeilInputError(f"{text!r} is not a shape: write it as [2, 3] (or [] for a scalar), or 'none'")
    inner = m.group(1)
    if not inner:
        return ()
    out: list[int | str] = []
    for part in inner.split(","):
        p = part.strip()
        if re.fullmatch(r"\d+", p):
            out.append(int(p))
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p):
            out.append(p)
        else:
            raise TeilInputError(f"{text!r}: {p!r} is not an extent (an integer or a parameter name)")
    return tuple(out)


def parse_value(text: str) -> float:
    t = text.strip().lower()
    if t in UNDEF_WORDS:
        return math.nan
    if t in ("inf", "+inf", "∞"):
        return math.inf
    if t in ("-inf", "-∞"):
        return -math.inf
    try:
        if "/" in t:
            a, b = t.split("/", 1)
            return float(a) / float(b)
        return float(t)
    except (ValueError, ZeroDivisionError):
        raise TeilInputError(f"{text!r} is not a value: a number, or • (also nan, undef) for undefined") from None


def parse_values(text: str) -> np.ndarray:
    """A value or a (nested) vector of values: ``[•, 0, 0]``."""
    t = text.strip()
    if not t.startswith("["):
        return np.array(parse_value(t))
    depth, rows, cur = 0, [], ""
    for ch in t:
        if ch == "[":
            depth += 1
            if depth > 1:
                cur += ch
            continue
        if ch == "]":
            depth -= 1
            if depth >= 1:
                cur += ch
            continue
        if ch == "," and depth == 1:
            rows.append(cur)
            cur = ""
            continue
        cur += ch
    if depth != 0:
        raise TeilInputError(f"{text!r}: unbalanced brackets")
    if cur.strip():
        rows.append(cur)
    parts = [parse_values(r) for r in rows]
    if len({p.shape for p in parts}) > 1:
        raise TeilInputError(f"{text!r}: the rows have different lengths (a vector of vectors is rectangular)")
    return np.array(parts, dtype=np.float64)


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal in V ∪ {•}: same shape, • where the other is •, numbers equal up to rounding."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    return bool(np.all(np.isclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)))


def show_values(v: Any) -> str:
    arr = np.asarray(v, dtype=np.float64)
    if arr.ndim == 0:
        x = float(arr)
        if math.isnan(x):
            return "•"
        return str(int(x)) if x.is_integer() else f"{x:g}"
    return "[" + ", ".join(show_values(x) for x in arr) + "]"


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+.-]*(?:\s*\(all ranks\))?")


def parse_names(text: str) -> list[str]:
    """Rule, equation or obligation names, separated by blanks, commas or ``;``."""
    # from the start of a run of blanks only: `\s*` tried from each blank was quadratic in the run (review r25)
    marked = re.sub(r"(?<!\s)\s*\(all ranks\)", "\0", text)  # the rank-generic lemmas' suffix stays with its name
    names = [n.strip().replace("\0", " (all ranks)") for n in re.split(r"[,;\s]+", marked) if n.strip()]
    for n in names:
        if not _NAME.fullmatch(n):
            raise TeilInputError(f"{n!r} is not a name (a rule such as T-Contr, an equation such as ev_red)")
    return names


def norm_name(name: str) -> str:
    """Names compare without case and blanks: ``t-contr`` is ``T-Contr``, ``red+`` spelled ``Red+``."""
    return re.sub(r"\s+", " ", name.strip()).lower()


# --------------------------------------------------------------------------
# Terms (the last line of a trace) and reads
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Read:
    """``x[k]``: a store read; an index is an integer or a name (a symbolic index)."""

    name: str
    index: tuple[int | str, ...]

    def __str__(self) -> str:
        return f"{self.name}[{', '.join(map(str, self.index))}]"


@dataclass(frozen=True)
class Num:
    value: float


@dataclass(frozen=True)
class BinOp:
    op: str  # add sub mul div
    a: Any
    b: Any


@dataclass(frozen=True)
class Sum:
    var: str
    n: int | str
    body: Any


@dataclass(frozen=True)
class If:
    """``if j <= d then t else 0``: the padded ``expa``'s guard."""

    j: int | str
    d: int | str
    body: Any


_TOKEN = re.compile(r"""\s*(?:
    (?P<sum>(?<![A-Za-z0-9_])(?:Σ|sum|Sum)_?)(?=\s*\{)
  | (?P<num>\d+(?:\.\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<sym>\.\.|<=|[\[\](){},=+\-*/·•])
)""", re.X)


def shown(text: str) -> str:
    """An answer as a message shows it: a long one is cut (the whole of a 1 MB answer was repeated)."""
    return repr(text) if len(text) <= 60 else repr(text[:60]) + "..."


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise TeilInputError(f"{shown(text)}: unexpected {text[pos:pos + 10]!r} at column {pos + 1}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


#: How deep an answer's term may nest (parentheses, sums, guards, a chain's operators): the
#: parser recurses, six frames a level, and so does what reads the tree; a deeper term was a
#: RecursionError (review r25: 50,000 opening parentheses, 1,000 differences)
MAX_TERM_DEPTH = 100


class _TermParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0
        self.shown = shown(text)

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise TeilInputError(f"{self.shown}: expected {value!r}, found {tok[1] or 'the end'!r}")
        self.i += 1
        return tok

    def deeper(self) -> None:
        """One more level of the term's tree: a parenthesis, a sum, a guard, or an operator of a
        chain ``a - b - c`` (each one nests the tree to its left one level deeper, and what
        reads the tree recurses through it: review r25, 1,000 differences were a RecursionError)."""
        self.depth += 1
        if self.depth > MAX_TERM_DEPTH:
            raise TeilInputError(f"{self.shown}: the term nests deeper than {MAX_TERM_DEPTH} levels")

    def chain(self, operand: Callable[[], Any], ops: Mapping[str, str]) -> Any:
        """``operand (op operand)*``, left-nested: each operator one level deeper (:meth:`deeper`)."""
        saved = self.depth
        try:
            t = operand()
            while self.peek()[1] in ops:
                self.deeper()
                op = ops[self.take()[1]]
                t = BinOp(op, t, operand())
            return t
        finally:
            self.depth = saved

    def term(self) -> Any:
        return self.chain(self.product, {"+": "add", "-": "sub"})

    def product(self) -> Any:
        return self.chain(self.factor, {"*": "mul", "·": "mul", "/": "div"})

    def nat(self) -> int | str:
        kind, v = self.take()
        if kind == "num" and v.isdigit():
            return int(v)
        if kind == "name":
            return v
        raise TeilInputError(f"{self.shown}: expected an index or an extent, found {v or 'the end'!r}")

    def factor(self) -> Any:
        saved = self.depth
        try:
            self.deeper()
            return self._factor()
        finally:
            self.depth = saved

    def _factor(self) -> Any:
        kind, v = self.peek()
        if kind == "sum":  # Σ_{m=1..n} body: the body is a product (a big operator binds it)
            self.take()
            self.take("{")
            var = self.take()[1]
            self.take("=")
            if self.take()[1] != "1":
                raise TeilInputError(f"{self.shown}: sums run from 1 (write Σ_{{m=1..n}})")
            self.take("..")
            n = self.nat()
            if isinstance(n, int) and n > MAX_SUM_BOUND:
                raise TeilInputError(f"{self.shown}: a sum's bound is at most {MAX_SUM_BOUND} here "
                                     f"(the exercises' extents are small), not {n}")
            self.take("}")
            return Sum(var, n, self.product())
        if v == "(":
            self.take()
            t = self.term()
            self.take(")")
            return t
        if v == "•":
            self.take()
            return Num(math.nan)
        if kind == "num":
            self.take()
            return Num(float(v))
        if kind == "name" and v == "if":
            self.take()
            j = self.nat()
            self.take("<=")
            d = self.nat()
            self.take("then")
            body = self.term()
            self.take("else")
            self.take("0")
            return If(j, d, body)
        if kind == "name":
            return self.read()
        raise TeilInputError(f"{self.shown}: unexpected {v or 'end'!r}")

    def read(self) -> Read:
        name = self.take()[1]
        if self.peek()[1] != "[":
            return Read(name, ())  # a scalar: s, or s[]
        self.take("[")
        index: list[int | str] = []
        while self.peek()[1] != "]":
            index.append(self.nat())
            if self.peek()[1] == ",":
                self.take()
        self.take("]")
        return Read(name, tuple(index))


def parse_term(text: str) -> Any:
    p = _TermParser(text)
    t = p.term()
    if p.peek()[0] != "end":
        raise TeilInputError(f"{shown(text)}: unexpected {p.peek()[1]!r} after the term")
    # the tree's own height: the parser bounds its nesting, but a chain in a chain's first
    # operand, `((a - b - ...) - b - ...)`, nests the tree deeper than the parser went, and
    # what reads the tree recurses (review r25: 30 x 60 differences, a RecursionError)
    if height(t) > MAX_TERM_DEPTH:
        raise TeilInputError(f"{shown(text)}: the term nests deeper than {MAX_TERM_DEPTH} levels")
    return t


def height(t: Any) -> int:
    """The levels of a term's tree, counted without recursion."""
    best, stack = 0, [(t, 1)]
    while stack:
        node, h = stack.pop()
        best = max(best, h)
        if isinstance(node, BinOp):
            stack += [(node.a, h + 1), (node.b, h + 1)]
        elif isinstance(node, Sum | If):
            stack.append((node.body, h + 1))
    return best


def parse_read(text: str) -> Read:
    t = parse_term(text)
    if not isinstance(t, Read):
        raise TeilInputError(f"{shown(text)} is not a read such as B[2, i, j]")
    return t


def term_names(t: Any) -> set[str]:
    """Free names of a term: index variables and extents (not the sums' own variables, not tensors)."""
    if isinstance(t, Read):
        return {j for j in t.index if isinstance(j, str)}
    if isinstance(t, BinOp):
        return term_names(t.a) | term_names(t.b)
    if isinstance(t, Sum):
        return (term_names(t.body) - {t.var}) | ({t.n} if isinstance(t.n, str) else set())
    if isinstance(t, If):
        return term_names(t.body) | {x for x in (t.j, t.d) if isinstance(x, str)}
    return set()


class OutOfBounds(TeilInputError):
    """A term reads a tensor outside its shape: a wrong answer, not a malformed one."""


def evaluate_term(t: Any, store: Mapping[str, np.ndarray], env: Mapping[str, int]) -> float:
    """The value of a term, with report Definition 4's arithmetic and controlled division (Definition 8)."""
    from ..semantics.eval import ArrayInterpretation

    arith = ArrayInterpretation.arith
    steps = 0

    def nat(j: int | str, env: Mapping[str, int]) -> int:
        if isinstance(j, int):
            return j
        if j not in env:
            raise TeilInputError(f"the name {j!r} is neither an index of the exercise nor a sum's variable")
        return env[j]

    def go(u: Any, env: Mapping[str, int]) -> float:
        nonlocal steps
        steps += 1
        if steps > MAX_STEPS:
            raise TeilInputError(f"the term takes more than {MAX_STEPS:,} steps to evaluate at one index; "
                                 f"the exercises' terms take a few hundred")
        if isinstance(u, Num):
            return u.value
        if isinstance(u, Read):
            if u.name not in store:
                raise TeilInputError(f"{u}: the program has no tensor {u.name!r}")
            arr = store[u.name]
            if len(u.index) != arr.ndim:
                raise TeilInputError(f"{u}: {u.name} has rank {arr.ndim}, so it takes {arr.ndim} indices")
            k = tuple(nat(j, env) - 1 for j in u.index)
            if any(not 0 <= kj < n for kj, n in zip(k, arr.shape, strict=True)):
                raise OutOfBounds(f"{u} reads outside {u.name} : {list(arr.shape)} "
                                  f"(with {', '.join(f'{a} = {b}' for a, b in env.items())})")
            return float(arr[k])
        if isinstance(u, BinOp):
            return float(arith(None, u.op, go(u.a, env), go(u.b, env)))  # type: ignore[arg-type]
        if isinstance(u, Sum):
            total = None
            for m in range(1, nat(u.n, env) + 1):
                v = go(u.body, {**env, u.var: m})
                total = v if total is None else float(arith(None, "add", total, v))  # type: ignore[arg-type]
            return 0.0 if total is None else total
        if isinstance(u, If):
            return go(u.body, env) if nat(u.j, env) <= nat(u.d, env) else 0.0
        raise TeilInputError(f"cannot evaluate {u!r}")

    return go(t, env)


__all__ = [
    "OutOfBounds", "Read", "evaluate_term", "items", "norm_name", "parse_names", "parse_read", "parse_shape",
    "parse_term", "parse_value", "parse_values", "same_values", "show_values",
]
