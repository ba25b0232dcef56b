"""Outside adversarial review r26b: the proof kernel's ``uses`` and the SMT-LIB2 export.

Every test here fails on the code it was written against and passes once the finding is
fixed.

1. ``proofs/kernel.py`` trusts an obligation's ``uses`` (instances of accepted lemmas)
   without checking that they are instances of anything: the vacuity check leaves them out
   unless the *hypotheses* mention ``SUM``.  So a use that contradicts the hypotheses, or
   uses that contradict each other, make any claim "proved"; the corpus of
   ``proofs/wrong.py`` has the SUM-hypothesis variant of this wrong proof
   ("contradictory hypotheses hidden by SUM instances"), not these.
2. ``kernel.decide`` keys results by lemma name: a refuted lemma with the name of an
   accepted one is silently overwritten, and a lemma using it as a premise is accepted.
3. A shape parameter named ``or`` (not a keyword of the language) makes every exported
   obligation trip the nullary-connective guard of ``smtlib.script``: ``prove --smt2-dir``,
   ``--cache``, ``--solver cvc5`` and a library run all end in an internal error (exit 70).
4. A shape parameter named ``true``, ``false`` or ``distinct`` is exported as
   ``(declare-fun true () Int)``, which no SMT-LIB2 solver accepts: the scripts of
   ``--smt2-dir`` cannot be re-checked, and ``--solver cvc5`` answers ``unknown`` (exit 3)
   on a program Z3 refutes (exit 1).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import z3

import core_teil as ct
from proofs import sums
from proofs.kernel import Lemma, Obligation, decide
from proofs.wrong import false_claim, true_claim, z3_lemma

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).with_name("core-teil")
TIMEOUT = 120

_x = z3.Int("x!r26b")


def _accepted(lemmas: list[Lemma]) -> bool:
    return decide(lemmas)[lemmas[0].name].accepted


def cli(*argv: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), *argv], capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=cwd)


# --------------------------------------------------------------------------
# 1. The kernel: uses are never checked
# --------------------------------------------------------------------------


def test_kernel_rejects_a_use_that_contradicts_sum_free_hypotheses() -> None:
    # x >= 1 |- x >= 2, "proved" because a use says x < 1: hypotheses, uses and goal are unsat
    # together, and the vacuity check asks only whether x >= 1 is satisfiable.
    lemma = Lemma("x >= 1 => x >= 2 (a use contradicts the hypotheses)", "wrong proof", "-",
                  lambda: [Obligation("x >= 1 => x >= 2", (_x >= 1,), _x < 2, uses=(_x < 1,))])
    assert not _accepted([lemma])


def test_kernel_rejects_uses_about_sum_that_contradict_each_other() -> None:
    # The kernel's argument for leaving uses out of the vacuity check is that SUM := SUMrec
    # satisfies every use; two uses that say SUM(h, n) = 0 and SUM(h, n) != 0 have no model.
    h = z3.Const("h!r26b", sums.VArr)
    n = z3.Int("n!r26b")
    from core_teil.semantics.symbolic import SUM, ZERO

    lemma = Lemma("x >= 1 => x >= 2 (contradictory SUM uses)", "wrong proof", "-",
                  lambda: [Obligation("x >= 1 => x >= 2", (_x >= 1,), _x < 2,
                                      uses=(SUM(h, n) == ZERO, SUM(h, n) != ZERO))])
    assert not _accepted([lemma])


def test_kernel_rejects_a_use_that_is_no_instance_of_its_premise() -> None:
    # A 'use' that names Sum-Absorb among its premises but is simply the claim itself.
    lemma = Lemma("x >= 1 => x >= 2 (a fake instance of Sum-Absorb)", "wrong proof", "-",
                  lambda: [Obligation("x >= 1 => x >= 2", (_x >= 1,), _x < 2, uses=(_x >= 2,))],
                  premises=(sums.ABSORB.name,))
    assert not _accepted([lemma, sums.ABSORB.lemma()])


# --------------------------------------------------------------------------
# 2. The kernel: two lemmas of one name
# --------------------------------------------------------------------------


def test_kernel_decide_does_not_let_a_namesake_hide_a_refuted_premise() -> None:
    lemmas = [z3_lemma("user", true_claim, premises=("used",)), z3_lemma("used", false_claim),
              z3_lemma("used", true_claim)]
    try:
        results = decide(lemmas)
    except ValueError:
        return  # refusing lemma names used twice (as registry.lemmas does) is a fix too
    assert not results["user"].accepted


# --------------------------------------------------------------------------
# 3. A parameter named `or`: exit 70 wherever obligations are exported
# --------------------------------------------------------------------------

OR_PROGRAM = "param or\ninput alloc X : [or]\noutput alloc Y : []\nY = red X\n"


def _or_file(tmp_path: Path, name: str = "or.teil") -> Path:
    f = tmp_path / name
    f.write_text(OR_PROGRAM)
    return f


def test_prove_smt2_dir_with_param_named_or_is_no_internal_error(tmp_path: Path) -> None:
    r = cli("prove", str(_or_file(tmp_path)), "--smt2-dir", str(tmp_path / "smt2"))
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr


def test_prove_api_smt2_dir_with_param_named_or_proves(tmp_path: Path) -> None:
    assert ct.prove(ct.parse(OR_PROGRAM)).ok  # `or` is no keyword: a valid program, proved without export
    report = ct.prove(ct.parse(OR_PROGRAM), smt2_dir=tmp_path / "smt2")
    assert report.ok


def test_prove_cache_with_param_named_or_is_no_internal_error(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "CORE_TEIL_CACHE_KEY": "r26b-" + "k" * 40}
    r = cli("prove", str(_or_file(tmp_path)), "--cache", str(tmp_path / "cache"), env=env)
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr


def test_prove_library_with_param_named_or_is_no_internal_error(tmp_path: Path) -> None:
    import os

    _or_file(tmp_path, "a.teil")
    _or_file(tmp_path, "b.teil")
    env = {**os.environ, "CORE_TEIL_CACHE_KEY": "r26b-" + "k" * 40, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    r = cli("prove", str(tmp_path / "a.teil"), str(tmp_path / "b.teil"), "--jobs", "1", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "internal error" not in r.stdout + r.stderr


def test_prove_cvc5_with_param_named_or_is_no_internal_error(tmp_path: Path) -> None:
    pytest.importorskip("cvc5")
    r = cli("prove", str(_or_file(tmp_path)), "--solver", "cvc5")
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr


# --------------------------------------------------------------------------
# 4. Parameters named after SMT-LIB2 builtins: the exported scripts are not SMT-LIB2
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["true", "false", "distinct"])
def test_smt2_scripts_of_a_param_named_like_a_builtin_recheck(tmp_path: Path, name: str) -> None:
    from core_teil.proving.smtlib import recheck_with_z3

    program = ct.parse(f"param {name}\ninput alloc X : [{name}]\noutput alloc Y : []\nY = proj 2 X\n")
    report = ct.prove(program, smt2_dir=tmp_path)
    scripts = sorted(tmp_path.glob("*.smt2"))
    assert scripts
    expected = {"proved": "unsat", "refuted": "sat"}
    for ob, path in zip(report.obligations, scripts, strict=True):
        # README: "a self-contained SMT-LIB2 script whose (check-sat) is unsat exactly when the
        # obligation holds, for any solver to re-check"
        assert recheck_with_z3(path) == expected[ob.status.value], path.read_text()


def test_cvc5_refutes_what_z3_refutes_with_a_param_named_true() -> None:
    pytest.importorskip("cvc5")
    program = ct.parse("param true\ninput alloc X : [true]\noutput alloc Y : []\nY = proj 2 X\n")
    by_z3 = ct.prove(program)
    by_cvc5 = ct.prove(program, solver="cvc5")
    assert [o.status for o in by_cvc5.obligations] == [o.status for o in by_z3.obligations]


@pytest.mark.parametrize("name", ["or", "ite", "let", "par", "exists", "sqrt", "bag", "select", "Int", "e", "RNE"])
def test_scripts_recheck_with_z3_and_cvc5_whatever_a_param_or_alloc_is_named(tmp_path: Path, name: str) -> None:
    # smtlib._renamed: every declared symbol without '!' gets one, so none is a solver's own
    # (cvc5 refuses all of these in logic ALL as plain declarations)
    from core_teil.proving.smtlib import check_cvc5, recheck_with_z3

    for text in (f"param {name}\ninput alloc X : [{name}]\noutput alloc Y : []\nY = proj 2 X\n",
                 f"param n\ninput alloc {name} : [n]\noutput alloc Y : []\nY = proj 2 {name}\n"):
        report = ct.prove(ct.parse(text), smt2_dir=tmp_path / name)
        scripts = sorted((tmp_path / name).glob("*.smt2"))
        assert len(scripts) == len(report.obligations) > 0
        expected = {"proved": "unsat", "refuted": "sat"}
        assert "sat" in {expected[o.status.value] for o in report.obligations}  # proj 2 fails at n = 1
        for ob, path in zip(report.obligations, scripts, strict=True):
            assert recheck_with_z3(path) == expected[ob.status.value], path.read_text()
            if importlib.util.find_spec("cvc5") is not None:
                assert check_cvc5(path.read_text()).status == expected[ob.status.value], path.read_text()
        for path in scripts:
            path.unlink()
