"""``make verify-latest``: the meta-theory under the newest solvers, against the locked run.

Not part of CI.  It runs ``python -m proofs`` twice -- once in this
environment (the lock), once in a throwaway virtualenv that has the newest
(or the requested) z3-solver and cvc5 from the registry, with the locked
numpy and this source tree on ``PYTHONPATH`` -- and prints, lemma by lemma,
what moved: the outcome, and the resource count Z3 spent.  This is how a
release is judged before the lock moves to it (docs/decisions.md, "The lock").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import venv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import toolchain

ROOT = Path(__file__).resolve().parent.parent


def run_proofs(python: str, out: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``python -m proofs --json out``; its exit code, and its last line preceded by what it said
    went wrong (the ``NOT ACCEPTED`` and ``ERROR`` lines)."""
    p = subprocess.run([python, "-m", "proofs", "--json", str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, check=False)
    lines = p.stdout.strip().splitlines()
    if not lines:
        return p.returncode, p.stderr.strip()[-300:]
    wrong = [line for line in lines if line.startswith(("NOT ACCEPTED", "ERROR", "FAILED", "  SURVIVED"))]
    return p.returncode, "\n  ".join([*wrong, lines[-1]])


def throwaway(where: Path, z3_spec: str, cvc5_spec: str) -> str:
    """A virtualenv with the requested solvers and this environment's (locked) numpy; its python."""
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    python = str(where / "bin" / "python")
    numpy = toolchain.installed("numpy")
    wanted = [z3_spec, cvc5_spec, f"numpy=={numpy}" if numpy else "numpy"]
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--upgrade", *wanted],
                   check=True)
    return python


def installed_in(python: str) -> dict[str, str]:
    code = ("import json, importlib.metadata as m; "
            f"print(json.dumps({{n: m.version(n) for n in {list(toolchain.SOLVERS)!r}}}))")
    return json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout)


def cell(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "not run"
    rl = entry.get("rlimit")
    return entry["status"] + ("" if rl is None else f" rlimit {rl:,}")


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """One line per lemma whose outcome or rlimit differs; then the mutants that changed."""
    out = []
    names = list(old["lemmas"]) + [n for n in new["lemmas"] if n not in old["lemmas"]]
    width = max((len(n) for n in names), default=10)
    for name in names:
        a, b = old["lemmas"].get(name), new["lemmas"].get(name)
        if a is None or b is None or a["status"] != b["status"] or a.get("rlimit") != b.get("rlimit"):
            moved = "OUTCOME" if (a or {}).get("status") != (b or {}).get("status") else "rlimit "
            out.append(f"  {moved} {name:<{width}}  {cell(a)}  ->  {cell(b)}")
    for m in sorted(set(old["mutants"]) | set(new["mutants"])):
        if old["mutants"].get(m) != new["mutants"].get(m):
            out.append(f"  mutant  {m:<{width}}  {old['mutants'].get(m)}  ->  {new['mutants'].get(m)}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m proofs.latest", description=__doc__.splitlines()[0])
    parser.add_argument("--z3", default="z3-solver", help="pip requirement for Z3 (default: the newest)")
    parser.add_argument("--cvc5", default="cvc5", help="pip requirement for cvc5 (default: the newest)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="core-teil-latest-") as tmp:
        tmpdir = Path(tmp)
        print("locked toolchain: running python -m proofs ...", flush=True)
        code_old, last_old = run_proofs(sys.executable, tmpdir / "locked.json")
        print(f"creating a throwaway environment with {args.z3}, {args.cvc5} ...", flush=True)
        try:
            python = throwaway(tmpdir / "venv", args.z3, args.cvc5)
        except subprocess.CalledProcessError:
            print(f"could not install {args.z3}, {args.cvc5} from the registry (pip said why, above)",
                  file=sys.stderr)
            return 2
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        print("other toolchain: running python -m proofs ...", flush=True)
        code_new, last_new = run_proofs(python, tmpdir / "latest.json", env)
        old = json.loads((tmpdir / "locked.json").read_text(encoding="utf-8"))
        new = json.loads((tmpdir / "latest.json").read_text(encoding="utf-8"))
        used_new = installed_in(python)
    print()
    print("locked: " + ", ".join(f"{n} {v}" for n, v in old["solvers"].items()) + f"\n  {last_old}")
    print("other:  " + ", ".join(f"{n} {v}" for n, v in used_new.items()) + f"\n  {last_new}")
    moved = diff(old, new)
    print(f"\n{len(moved)} difference(s), lemma by lemma (outcome, rlimit spent):" if moved else
          "\nno lemma's outcome or rlimit moved")
    print("\n".join(moved))
    return 0 if code_old == 0 and code_new == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
