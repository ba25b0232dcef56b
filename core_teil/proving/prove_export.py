"""Regenerate ``proofs/obligations/``: the exported obligations of ``examples/``.

    python -m core_teil.proving.prove_export            # rewrite proofs/obligations/
    python -m core_teil.proving.prove_export --check    # exit 1 if it is out of date

For every ``examples/*.teil`` the obligations of ``core-teil prove --pad 8``
(which include the unpadded ones) are written as self-contained SMT-LIB2
scripts ``proofs/obligations/<example>/<NN>-<obligation>.smt2``, and listed
in ``proofs/obligations/MANIFEST.json`` with the answer a solver must give:
``unsat`` for a proved obligation, ``sat`` for a refuted one (the corpus
includes the deliberately wrong TVM kernel).  ``make verify`` re-checks every
file with Z3 and cvc5.  Output is deterministic (stable names, sorted
manifest, no timestamps), so a test can demand that the checked-in corpus is
what this module produces.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from .report import Status

PAD = 8
ROOT = Path(__file__).resolve().parents[2]
GENERATOR = "python -m core_teil.proving.prove_export (core-teil prove --pad 8 --smt2-dir)"


def export(examples: Path, out: Path) -> dict[str, Any]:
    """Write the corpus for every example under ``examples`` into ``out``; return the manifest."""
    from ..lang.parser import parse
    from .prove import prove

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    entries = []
    skipped = []
    for teil in sorted(examples.glob("*.teil")):
        program_rel = f"examples/{teil.name}"  # the name in the scripts: machine-independent
        program = parse(teil.read_text(encoding="utf-8"), program_rel)
        target = out / teil.stem
        report = prove(program, None, PAD, smt2_dir=target)
        for o in report.obligations:
            if o.smt2 is None or o.status is Status.UNKNOWN:
                skipped.append(f"{program_rel}: {o.label} ({o.status})")
                if o.smt2 is not None:
                    Path(o.smt2).unlink()
                continue
            entries.append({
                "path": Path(o.smt2).relative_to(out).as_posix(),
                "example": program_rel,
                "obligation": o.label,
                "name": o.name,
                "lemma": o.lemma,
                "statement": o.statement,
                "pad": PAD,
                "expect": "unsat" if o.status is Status.PROVED else "sat",
            })
    manifest = {"generator": GENERATOR, "files": sorted(entries, key=lambda e: e["path"]),
                "skipped": skipped}
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def differences(a: Path, b: Path) -> list[str]:
    """Relative paths that differ between two corpus directories (empty: identical)."""
    out: list[str] = []

    def walk(cmp: filecmp.dircmp, prefix: str) -> None:
        out.extend(prefix + n for n in cmp.left_only + cmp.right_only + cmp.funny_files)
        _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
        out.extend(prefix + n for n in mismatch + errors)
        for name, sub in cmp.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(a, b, ignore=[]), "")
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m core_teil.proving.prove_export", description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=Path, default=ROOT / "examples")
    ap.add_argument("--out", type=Path, default=ROOT / "proofs" / "obligations")
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if the corpus is out of date")
    args = ap.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            export(args.examples, Path(tmp) / "obligations")
            diff = differences(Path(tmp) / "obligations", args.out) if args.out.exists() else ["(missing)"]
        if diff:
            print(f"{args.out} is out of date ({len(diff)} files differ, e.g. {diff[:3]}); "
                  f"run python -m core_teil.proving.prove_export", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    manifest = export(args.examples, args.out)
    print(f"wrote {len(manifest['files'])} obligations to {args.out}"
          + (f"; skipped {len(manifest['skipped'])} undecided" if manifest["skipped"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
