"""``proofs/obligations/``: the exported obligations of ``examples/``, kept up to date.

The corpus is what ``python -m core_teil.proving.prove_export`` writes; ``make
verify`` re-checks it with Z3 and cvc5.  Here: it is exactly what the current
code generates, its manifest is complete and well formed, and a plain Z3
(and, for a sample, cvc5) answers every script as the manifest expects.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core_teil.proving.prove_export import differences, export
from core_teil.proving.smtlib import check_cvc5, recheck_with_z3

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "proofs" / "obligations"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text()) if (CORPUS / "MANIFEST.json").exists() else None


def test_corpus_is_up_to_date(tmp_path: Path) -> None:
    export(ROOT / "examples", tmp_path / "obligations")
    diff = differences(tmp_path / "obligations", CORPUS)
    assert not diff, f"run `python -m core_teil.proving.prove_export`: {diff[:5]}"


def test_manifest_lists_every_script() -> None:
    assert MANIFEST is not None and MANIFEST["generator"]
    listed = {e["path"] for e in MANIFEST["files"]}
    on_disk = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.smt2")}
    assert listed == on_disk
    examples = {p.stem for p in (ROOT / "examples").glob("*.teil")}
    assert {Path(e["example"]).stem for e in MANIFEST["files"]} == examples
    for e in MANIFEST["files"]:
        assert e["expect"] in ("sat", "unsat")
        assert (ROOT / e["example"]).exists()
        assert Path(e["path"]).parts[0] == Path(e["example"]).stem
        assert e["obligation"] and e["lemma"]
    # the deliberately wrong kernel is the only one with expected refutations
    assert {Path(e["example"]).stem for e in MANIFEST["files"] if e["expect"] == "sat"} == {"tvm_fig3a_bad"}


def test_scripts_are_self_contained_and_small() -> None:
    for e in MANIFEST["files"]:
        text = (CORPUS / e["path"]).read_text()
        assert text.rstrip().endswith("(check-sat)")
        assert "(set-logic ALL)" in text and "(assert " in text
        assert "/work/" not in text  # no machine-specific paths
        assert len(text) < 50_000


def test_plain_z3_rechecks_the_corpus() -> None:
    wrong = [e["path"] for e in MANIFEST["files"] if recheck_with_z3(CORPUS / e["path"]) != e["expect"]]
    assert not wrong


@pytest.mark.parametrize("example", ["helm", "interp_nested", "tvm_fig3a_bad", "fig11_proj_expa"])
def test_cvc5_rechecks_a_sample(example: str) -> None:
    entries = [e for e in MANIFEST["files"] if Path(e["example"]).stem == example]
    assert entries
    for e in entries:
        answer = check_cvc5((CORPUS / e["path"]).read_text(), rlimit=50_000_000)
        assert answer.status == e["expect"], (e["path"], answer.reason)
