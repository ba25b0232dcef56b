"""The locked toolchain (issue 11): the lock is complete and true, the installed
solvers are the locked ones or a run says so loudly, and no run that checked
less than everything says ``verified:``."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement

from proofs import corpus, run, toolchain

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def pins() -> list[tuple[str, str, str]]:
    """(name, version, marker) of every pin, continuation lines joined."""
    text = LOCK.read_text(encoding="utf-8").replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        if m := re.match(r"^([A-Za-z0-9][\w.-]*)==(\S+)\s*(?:;\s*(.*?))?\s*(?:--hash|$)", line):
            out.append((toolchain.canonical(m[1]), m[2], m[3] or ""))
    return out


def applies(marker: str) -> bool:
    return not marker or Marker(marker).evaluate()


def declared() -> list[Requirement]:
    project = PYPROJECT["project"]
    reqs = [*project["dependencies"], *PYPROJECT["build-system"]["requires"]]
    for extra in project["optional-dependencies"].values():
        reqs += extra
    return [Requirement(r) for r in reqs]


def test_every_pin_has_hashes():
    text = LOCK.read_text(encoding="utf-8").replace("\\\n", " ")
    for line in text.splitlines():
        if re.match(r"^[A-Za-z0-9]", line):
            assert "==" in line and "--hash=sha256:" in line, f"a pin without an exact version or hash: {line[:80]}"


def test_the_lock_satisfies_every_declared_range():
    """pyproject's ranges (what `pip install core-teil` accepts) contain the locked versions."""
    locked = {(n, v) for n, v, m in pins() if applies(m)}
    by_name = dict(locked)
    for req in declared():
        name = toolchain.canonical(req.name)
        assert name in by_name, f"{req} is declared but not locked (run `make lock`)"
        assert req.specifier.contains(by_name[name], prereleases=True), \
            f"the lock pins {name} {by_name[name]}, outside the declared range {req}"


def test_installed_packages_are_the_locked_ones():
    """`make install` installs the lock; a hand-installed version would make this run unreproducible."""
    wrong = [f"{n}: installed {toolchain.installed(n)}, locked {v}" for n, v, m in pins()
             if applies(m) and toolchain.installed(n) not in (v, None)]
    missing = [n for n, _, m in pins() if applies(m) and toolchain.installed(n) is None]
    assert not wrong and not missing, f"not as locked: {wrong}; missing: {missing}"


def test_locked_reads_the_pins(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text("z3-solver==5.4.1.0 \\\n    --hash=sha256:00\nNumPy==2.4.6 ; python_full_version < '3.12' \\\n")
    assert toolchain.locked(lock) == {"z3-solver": "5.4.1.0", "numpy": "2.4.6"}
    assert toolchain.locked(tmp_path / "absent") is None


def test_drift_from_the_lock_is_loud():
    same = toolchain.Versions({"z3-solver": "5.4.1.0", "cvc5": "1.4.2"}, {"z3-solver": "5.4.1.0", "cvc5": "1.4.2"})
    assert not same.drift and not toolchain.warning(same) and "(as locked)" in same.line()
    moved = toolchain.Versions({"z3-solver": "5.4.2.0", "cvc5": None}, {"z3-solver": "5.4.1.0", "cvc5": "1.4.2"})
    banner = "\n".join(toolchain.warning(moved))
    assert "z3-solver 5.4.2.0 is in use, but requirements.lock pins 5.4.1.0" in banner
    assert "cvc5 not installed is in use" in banner and "NOT as locked" in moved.line()
    unlocked = toolchain.Versions({"z3-solver": "5.4.1.0"}, None)
    assert not unlocked.drift and "no requirements.lock" in unlocked.line()


def test_this_run_uses_the_locked_solvers():
    v = toolchain.versions()
    assert v.pinned is not None and not v.drift, v.drift


def last_line(r: run.Run) -> tuple[bool, str, list[str]]:
    out: list[str] = []
    ok, last = run.report(r, 0.0, out)
    return ok, last, out


def test_a_missing_corpus_is_not_verified(monkeypatch):
    """Issue 11: an installed package without its corpus said `verified:` after skipping it."""
    monkeypatch.setattr(corpus, "entries", lambda: None)
    ok, last, out = last_line(run.Run(lemmas=(), with_mutants=False, with_corpus=True))
    assert not ok and last.startswith("NOT verified:")
    assert any("Corpus NOT CHECKED" in line for line in out)


def test_a_run_that_left_something_out_is_partial(monkeypatch):
    monkeypatch.setattr(corpus, "entries", lambda: None)
    partial = run.Run(lemmas=(), with_mutants=False, with_corpus=False, left_out=("no mutants", "no corpus"))
    ok, last, _ = last_line(partial)
    assert ok and last.startswith("partial (no mutants, no corpus): ") and not last.startswith("verified")


def test_a_run_on_other_solvers_says_so_before_its_verdicts(monkeypatch):
    """The banner of warning() is in the report itself, not only available to it."""
    moved = toolchain.Versions({"z3-solver": "5.4.2.0", "cvc5": "1.4.2"}, {"z3-solver": "5.4.1.0", "cvc5": "1.4.2"})
    monkeypatch.setattr(toolchain, "versions", lambda: moved)
    monkeypatch.setattr(corpus, "entries", lambda: None)
    _, _, out = last_line(run.Run(lemmas=(), with_mutants=False, with_corpus=False, left_out=("no corpus",)))
    banner = toolchain.warning(moved)
    assert "!! z3-solver 5.4.2.0 is in use, but requirements.lock pins 5.4.1.0" in banner
    start = out.index(banner[0])
    table = next(i for i, line in enumerate(out) if line.split()[:2] == ["#", "lemma"])
    assert out[start:start + len(banner)] == banner and start + len(banner) <= table, out[:table]


def test_only_is_partial(capsys):
    code = run.main(["--only", "Sum-Zero-Extension", "--jobs", "1", "--no-mutants"])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert code == 0 and re.fullmatch(r"partial \(only 1 of \d+ lemmas, no mutants, no corpus\): "
                                      r"1 lemmas \(0 for all ranks\), .*", last)


def test_the_corpus_ships_with_the_package():
    """An installed package re-checks the corpus too (pyproject package-data covers every script)."""
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["proofs"]
    shipped = {p for pat in patterns for p in (ROOT / "proofs").glob(pat)}
    entries = corpus.entries()
    assert entries, "the corpus manifest is missing"
    assert corpus.MANIFEST in shipped
    assert {corpus.ROOT / e.path for e in entries} <= shipped


@pytest.mark.skipif(sys.platform != "linux", reason="the build flags are GCC's")
def test_the_default_build_is_portable():
    """-march=native dies with SIGILL on an older CPU; it is an opt-in (CORE_TEIL_NATIVE_ARCH=1)."""
    import os

    from core_teil.native import _native

    expected = "native-arch" if os.environ.get("CORE_TEIL_NATIVE_ARCH") else "portable"
    assert _native.BUILD.split(",")[0] == expected
