"""Re-check ``proofs/obligations/`` (the exported obligations of ``examples/``) with Z3 and cvc5.

Each script of the manifest must get the answer the manifest expects from
Z3 (seeded, resource-limited).  cvc5, when importable, is a second opinion:
an answer contradicting the manifest is a failure; ``unknown`` (a theory
cvc5 does not decide, or its resource limit) is reported, not hidden; a
script cvc5 cannot parse is a failure.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import z3

from .kernel import RLIMIT, SEED

ROOT = Path(__file__).resolve().parent / "obligations"
MANIFEST = ROOT / "MANIFEST.json"
CVC5_RLIMIT = 50_000_000


@dataclass(frozen=True)
class Entry:
    path: str
    expect: str
    lemma: str = ""


@dataclass(frozen=True)
class Recheck:
    path: str
    expect: str
    z3: str
    cvc5: str | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.z3 == self.expect and self.cvc5 in (None, "unknown", self.expect)


def entries() -> list[Entry] | None:
    """The manifest's scripts, or ``None`` while the corpus has not been generated."""
    if not MANIFEST.exists():
        return None
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    files = data["files"] if isinstance(data, dict) else data
    out = []
    for e in files:
        if isinstance(e, str):
            out.append(Entry(e, "unsat"))
        else:
            out.append(Entry(e.get("path") or e["file"], e.get("expect", "unsat"), e.get("lemma", "")))
    return out


def cvc5_available() -> bool:
    try:
        import cvc5  # noqa: F401
    except ImportError:
        return False
    return True


def z3_answer(text: str) -> str:
    s = z3.Solver()
    s.set("random_seed", SEED)
    s.set("rlimit", RLIMIT * 4)
    s.from_string(text)
    return str(s.check())


def cvc5_answer(text: str) -> str:
    import cvc5

    solver = cvc5.Solver(cvc5.TermManager())
    solver.setOption("seed", str(SEED))
    solver.setOption("rlimit-per", str(CVC5_RLIMIT))
    parser = cvc5.InputParser(solver)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "obligation")
    symbols = parser.getSymbolManager()
    answer = "unknown"
    try:
        while True:
            cmd = parser.nextCommand()
            if cmd.isNull():
                break
            out = cmd.invoke(solver, symbols).strip()
            if out in ("sat", "unsat", "unknown"):
                answer = out
    except RuntimeError:
        # The corpus promises SMT-LIB2 that any solver reads: a script cvc5
        # cannot parse is a defect of the export, not an "unknown".
        return "parse error"
    return answer


def recheck(entry: Entry, with_cvc5: bool) -> Recheck:
    t0 = time.perf_counter()
    text = (ROOT / entry.path).read_text(encoding="utf-8")
    try:
        answer = z3_answer(text)
    except z3.Z3Exception as exc:
        answer = f"error: {exc}"
    second = cvc5_answer(text) if with_cvc5 else None
    return Recheck(entry.path, entry.expect, answer, second, time.perf_counter() - t0)
