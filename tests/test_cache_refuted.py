"""A decided refutation is cached as a refutation (issue 17: "a second run over an unchanged
library proves nothing again"), and a warm run imports neither Z3 nor the prover.

A kernel whose every obligation is decided (proved or refuted, at least one refuted, none
unknown) gets a sealed kernel entry holding the certificate and the text its run printed; a
warm run serves exactly those.  An unknown is never stored, and an entry that is not a
consistent refutation or proof is refused whole and the kernel proved again: the cache must
never turn a refutation into "proved" (the poisoned entries below are sealed with the key, so
only the entry's own checks stand between them and the output; and edited without it).
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from core_teil import library as batch
from core_teil.cli import main
from core_teil.lang.parser import parse
from core_teil.library import KernelStatus
from core_teil.proving import cache as cache_module
from core_teil.proving import limits
from core_teil.proving import prove as prove_module
from core_teil.proving.cache import ProofCache, solver_fields
from core_teil.proving.report import Status
from tests.cache_kit import AXPY, BAD, KEY, library, private_cache  # noqa: F401 -- private_cache is autouse


@pytest.fixture
def solver_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = prove_module.decide
    monkeypatch.setattr(prove_module, "decide", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def entry_path(tmp_path: Path, text: str, timeout: float | None = None) -> Path:
    cache = ProofCache(tmp_path / "cache")
    return Path(cache._path("kernels", cache.source_key(text, {}, None, solver_fields("z3", timeout))))


def bad_once(tmp_path: Path) -> batch.KernelResult:
    """BAD proved cold through the library: its result, and its refuted kernel entry in the cache."""
    (cold,) = batch.run([str(library(tmp_path, bad=BAD) / "bad.teil")], jobs=1, cache=tmp_path / "cache").results
    assert cold.status is KernelStatus.REFUTED and not cold.kernel_cached
    return cold


def bad_again(tmp_path: Path, jobs: int = 1) -> tuple[batch.KernelResult, dict[str, int]]:
    run = batch.run([str(tmp_path / "lib" / "bad.teil")], jobs=jobs, cache=tmp_path / "cache")
    (r,) = run.results
    return r, run.totals()


# -- served exactly as the cold run printed it --------------------------------------------------------


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_refuted_kernel_is_served_as_its_cold_run_printed_it(tmp_path: Path, solver_calls: list[int],
                                                                capsys: pytest.CaptureFixture[str], jobs: int) -> None:
    lib = library(tmp_path, axpy=AXPY, bad=BAD)
    runs = []
    for _ in range(2):  # cold, then warm: the --json one through one cache, the text one through another
        argv = ["prove", str(lib), "--jobs", str(jobs), "--cache"]
        codes = [main([*argv, str(tmp_path / "cache-json"), "--json"])]
        doc = json.loads(capsys.readouterr().out)
        codes.append(main([*argv, str(tmp_path / "cache-text")]))
        runs.append((codes, doc, capsys.readouterr().out))
    (cold_codes, cold, cold_text), (warm_codes, warm, warm_text) = runs
    assert cold_codes == warm_codes == [1, 1]
    cold_bad, warm_bad = cold["kernels"][1], warm["kernels"][1]
    assert cold_bad["from_cache"] is False and warm_bad["from_cache"] is True
    assert warm_bad["status"] == "refuted" and warm_bad["exit_code"] == 1 and warm_bad["error"] is None
    # the certificate: the same fields in the same order, the counterexamples included, their
    # dictionaries in the order the run wrote them (the entry's canonical form sorts its own)
    assert json.dumps(warm_bad["certificate"]) == json.dumps(cold_bad["certificate"])
    cexs = [o["counterexample"] for o in warm_bad["certificate"]["obligations"] if o["status"] == "refuted"]
    assert [list(c["params"]) for c in cexs] == [["m", "n", "h"]] * 2 and cexs[1]["at"] == "C[2, 1]"
    # the human output: the refutation's text as it was, after the kernel's (cached) line
    report = cold_text[cold_text.index("\nprove ") + 1:cold_text.index("\n\n2 kernels:")]
    assert report in warm_text and report.count("Example:") == 2 and "m = 2, n = 1, h = 1" in report
    assert "REFUTED  " + str(lib / "bad.teil") + "  1/3 (cached)" in warm_text
    assert cold_text.count("\n\n") == warm_text.count("\n\n")
    assert warm["summary"]["solver_decided"] == 0 and warm["summary"]["kernels_from_cache"] == 2
    assert warm["summary"]["obligations_refuted"] == 2 and warm["summary"]["exit_code"] == 1


def test_a_warm_library_run_decides_nothing(tmp_path: Path, solver_calls: list[int]) -> None:
    cold = bad_once(tmp_path)
    assert solver_calls
    solver_calls.clear()
    r, totals = bad_again(tmp_path)
    assert not solver_calls and totals["solver_decided"] == 0 and totals["cache_entries_rejected"] == 0
    assert (r.status, r.exit_code, r.kernel_cached, r.proved, r.refuted, r.unknown, r.cached) == \
        (KernelStatus.REFUTED, 1, True, 1, 2, 0, 3)
    assert (r.text, r.certificate) == (cold.text, cold.certificate)


def test_one_file_is_served_with_the_caches_note(tmp_path: Path, solver_calls: list[int],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    bad = library(tmp_path, bad=BAD) / "bad.teil"
    outs = []
    for _ in range(2):
        codes = [main(["prove", str(bad), "--cache", str(tmp_path / "cache")])]
        text = capsys.readouterr().out
        solver_calls.clear()
        codes.append(main(["prove", str(bad), "--cache", str(tmp_path / "cache"), "--json"]))
        outs.append((codes, text, json.loads(capsys.readouterr().out)))
    (cold_codes, cold_text, _), (warm_codes, warm_text, warm_json) = outs
    assert cold_codes == warm_codes == [1, 1] and not solver_calls
    assert warm_text == cold_text + "note: every obligation was decided by an earlier run (the proof cache); " \
                                    "times are that run's\n"
    # the report rebuilt from the entry prints what the run that stored it printed, counterexamples and all
    cold_json = json.loads(json.loads(entry_path(tmp_path, BAD).read_text())["payload"]["refutation"]["certificate"])
    assert json.dumps(warm_json) == json.dumps(cold_json)


def test_another_name_or_timeout_is_a_miss_not_a_refusal(tmp_path: Path, solver_calls: list[int]) -> None:
    # the counterexample quotes the file by name and the heading shows the timeout
    bad_once(tmp_path)
    (tmp_path / "lib" / "copy.teil").write_text(BAD)
    (r,) = batch.run([str(tmp_path / "lib" / "copy.teil")], jobs=1, cache=tmp_path / "cache").results
    assert (r.status, r.kernel_cached, r.rejected) == (KernelStatus.REFUTED, False, 0) and solver_calls
    assert "at " + str(tmp_path / "lib" / "copy.teil") + ":6:" in r.text and "bad.teil" not in r.text
    # 10 s is the default rlimit (the same key): printed "timeout 10 s"
    assert limits.rlimit_for(10.0) == limits.RLIMIT
    bad = str(tmp_path / "lib" / "bad.teil")
    batch.run([bad], jobs=1, cache=tmp_path / "cache")  # the entry is bad.teil's again
    (r,) = batch.run([bad], jobs=1, timeout=10.0, cache=tmp_path / "cache").results
    assert (r.kernel_cached, r.rejected) == (False, 0) and "timeout 10 s" in r.text


# -- what is never stored -------------------------------------------------------------------------------


def test_an_unknown_is_never_stored_even_beside_a_refutation(tmp_path: Path) -> None:
    cache = ProofCache(tmp_path / "cache")
    report = prove_module.prove(parse(BAD, "bad.teil"), source=BAD)
    assert report.exit_code == 1
    fields = solver_fields("z3", None)
    proved = next(i for i, o in enumerate(report.obligations) if o.status is Status.PROVED)
    obs = list(report.obligations)
    obs[proved] = dataclasses.replace(obs[proved], status=Status.UNKNOWN, reason="rlimit")
    for changed in (dataclasses.replace(report, obligations=tuple(obs)),
                    dataclasses.replace(report, obligations=tuple(
                        dataclasses.replace(o, counterexample=None) for o in report.obligations))):
        cache.store_kernel("a" * 64, changed, fields, [None] * len(obs))
        assert not Path(cache._path("kernels", "a" * 64)).exists()
    cache.store_kernel("a" * 64, report, fields, [None] * len(obs))  # the control: stored as it is
    assert Path(cache._path("kernels", "a" * 64)).exists()


def test_an_unknown_kernel_is_proved_again(tmp_path: Path, solver_calls: list[int]) -> None:
    bad = str(library(tmp_path, bad=BAD) / "bad.teil")
    for _ in range(2):
        (r,) = batch.run([bad], jobs=1, timeout=1e-6, cache=tmp_path / "cache").results  # rlimit 5: unknown
        assert r.status is KernelStatus.UNKNOWN and not r.kernel_cached
    assert not entry_path(tmp_path, BAD, 1e-6).exists()


# -- poisoned entries: refused whole, the kernel proved again -----------------------------------------------


def timeless(cert: dict[str, Any]) -> dict[str, Any]:
    """A certificate without its times (a kernel proved again takes its own)."""
    return {**cert, "seconds": 0, "obligations": [{**o, "seconds": 0} for o in cert["obligations"]]}


def _refutation(p: dict[str, Any]) -> dict[str, Any]:
    return json.loads(p["refutation"]["certificate"])


def _set_cert(p: dict[str, Any], cert: dict[str, Any]) -> None:
    p["refutation"]["certificate"] = json.dumps(cert)


def _edit_cert(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def apply(p: dict[str, Any]) -> None:
        cert = _refutation(p)
        edit(cert)
        _set_cert(p, cert)
    return apply


def _refuted(cert: dict[str, Any]) -> dict[str, Any]:
    return next(o for o in cert["obligations"] if o["status"] == "refuted")


def _as_a_proof(p: dict[str, Any]) -> None:
    # every verdict proved, ok and exit code to match, no counterexample: a proof's entry in all but
    # the refuted obligation's entry, which no run wrote
    cert = _refutation(p)
    for o in cert["obligations"]:
        o["status"], o["counterexample"] = "proved", None
    cert["ok"], cert["exit_code"] = True, 0
    p["report"] = cert
    del p["refutation"]


def _all_proved_still_a_refutation(p: dict[str, Any]) -> None:
    # every verdict proved, each naming the proved obligation's entry (which is there), ok and the
    # exit code left as they were: only the refutation's own checks stand between it and "proved"
    cert = _refutation(p)
    present = next(k for k, o in zip(p["obligations"], cert["obligations"], strict=True) if o["status"] == "proved")
    for o in cert["obligations"]:
        o["status"], o["counterexample"] = "proved", None
    p["obligations"] = [present] * len(cert["obligations"])
    _set_cert(p, cert)


POISONS: dict[str, Callable[[dict[str, Any]], None]] = {
    "every verdict proved, still a refutation": _all_proved_still_a_refutation,
    "verdict flipped to proved": _edit_cert(lambda c: _refuted(c).update(status="proved", counterexample=None)),
    "verdict flipped, counterexample kept": _edit_cert(lambda c: _refuted(c).update(status="proved")),
    "counterexample removed": _edit_cert(lambda c: _refuted(c).update(counterexample=None)),
    "counterexample emptied": _edit_cert(lambda c: _refuted(c).update(counterexample={})),
    "ok flipped": _edit_cert(lambda c: c.update(ok=True)),
    "exit code 0": _edit_cert(lambda c: c.update(exit_code=0)),
    "verdict unknown": _edit_cert(lambda c: _refuted(c).update(status="unknown")),
    "a proved verdict with a counterexample": _edit_cert(
        lambda c: next(o for o in c["obligations"] if o["status"] == "proved").update(
            counterexample=_refuted(c)["counterexample"])),
    "every verdict proved, as a proof": _as_a_proof,
    "text not text": lambda p: p["refutation"].update(text=None),
    "an excerpt short": lambda p: p["refutation"].update(excerpts=p["refutation"]["excerpts"][1:]),
    "an excerpt not text": lambda p: p["refutation"].update(excerpts=[1] * len(p["refutation"]["excerpts"])),
    "another solver": lambda p: p.update(solver={**p["solver"], "rlimit": 1}),
    "a field more": lambda p: p.update(report=_refutation(p)),
    "an obligation less": _edit_cert(lambda c: c.update(obligations=c["obligations"][1:])),
    "a proved obligation's entry gone": lambda p: p.update(obligations=["0" * 64] * len(p["obligations"])),
}


@pytest.mark.parametrize("poison", list(POISONS))
def test_a_poisoned_refutation_sealed_with_the_key_is_refused(tmp_path: Path, solver_calls: list[int],
                                                              poison: str) -> None:
    cold = bad_once(tmp_path)
    path = entry_path(tmp_path, BAD)
    cache = ProofCache(tmp_path / "cache")
    entry = json.loads(path.read_text())
    POISONS[poison](entry["payload"])
    cache.write("kernels", entry["key"], entry["payload"])
    solver_calls.clear()
    r, totals = bad_again(tmp_path, jobs=2)
    assert (r.status, r.exit_code, r.kernel_cached) == (KernelStatus.REFUTED, 1, False) and solver_calls
    assert totals["cache_entries_rejected"] == 1 and timeless(r.certificate) == timeless(cold.certificate)
    assert r.text[r.text.index("ERROR:"):] == cold.text[cold.text.index("ERROR:"):]


def test_the_poisons_control_the_same_entry_resealed_unchanged_is_served(tmp_path: Path) -> None:
    bad_once(tmp_path)
    entry = json.loads(entry_path(tmp_path, BAD).read_text())
    ProofCache(tmp_path / "cache").write("kernels", entry["key"], entry["payload"])
    r, totals = bad_again(tmp_path, jobs=2)
    assert r.kernel_cached and totals["cache_entries_rejected"] == 0


@pytest.mark.parametrize("edit", [(b'\\"status\\": \\"refuted\\"', b'\\"status\\": \\"proved\\"'),
                                  (b'\\"ok\\": false', b'\\"ok\\": true'),
                                  (b"C[2, 1]", b"C[1, 1]")])
def test_a_refutation_edited_without_the_key_is_refused(tmp_path: Path, edit: tuple[bytes, bytes]) -> None:
    bad_once(tmp_path)
    path = entry_path(tmp_path, BAD)
    raw = path.read_bytes()
    assert raw.count(edit[0]) >= 1
    path.write_bytes(raw.replace(edit[0], edit[1], 1))
    r, totals = bad_again(tmp_path)
    assert (r.status, r.kernel_cached, totals["cache_entries_rejected"]) == (KernelStatus.REFUTED, False, 1)


def test_a_refutation_under_a_proved_kernels_key_is_never_proved(tmp_path: Path) -> None:
    # BAD's sealed refutation copied to AXPY's key: served as what it says (refuted), never as proved
    bad_once(tmp_path)
    cache = ProofCache(tmp_path / "cache")
    entry = json.loads(entry_path(tmp_path, BAD).read_text())
    (tmp_path / "lib" / "axpy.teil").write_text(AXPY)
    key = cache.source_key(AXPY, {}, None, solver_fields("z3", None))
    entry["payload"]["refutation"]["file"] = str(tmp_path / "lib" / "axpy.teil")
    cache.write("kernels", key, entry["payload"])
    (r,) = batch.run([str(tmp_path / "lib" / "axpy.teil")], jobs=1, cache=tmp_path / "cache").results
    assert r.status is KernelStatus.REFUTED and r.exit_code == 1  # a key holder's forgery: it says refuted


# -- the solver's fields without the solver ---------------------------------------------------------------


def test_the_limits_are_the_provers() -> None:
    for name in ("RLIMIT", "RLIMIT_PER_SECOND", "Z3_UINT_MAX", "check_timeout", "rlimit_for"):
        assert getattr(prove_module, name) is getattr(limits, name)
    assert (limits.rlimit_for(None), limits.rlimit_for(2), limits.rlimit_for(1e-9), limits.rlimit_for(1e300)) == \
        (50_000_000, 10_000_000, 1, 2**32 - 1)


def test_z3s_version_without_z3_is_z3s_own() -> None:
    import z3

    assert cache_module._z3_wheel_version() == cache_module.z3_version() == z3.get_version_string()
    assert solver_fields("z3", None).version == z3.get_version_string()


def fake_wheel(tmp_path: Path, version: str = "9.8.7.6", lib_size: int | None = None,
               record_init: bool = True, extra_info: bool = False) -> SimpleNamespace:
    site = tmp_path / "site"
    (site / "z3" / "lib").mkdir(parents=True)
    (site / "z3" / "__init__.py").write_text("")
    (site / "z3" / "lib" / "libz3.so.9.8").write_bytes(b"\0" * 10)
    info = site / "z3_solver-9.8.7.6.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.4\nName: z3-solver\nVersion: {version}\n\nbody\n")
    rows = ["z3/__init__.py,sha256=x,0"] if record_init else []
    rows.append(f"z3/lib/libz3.so.9.8,sha256=y,{10 if lib_size is None else lib_size}")
    (info / "RECORD").write_text("\n".join(rows) + "\nz3_solver-9.8.7.6.dist-info/RECORD,,\n")
    if extra_info:
        (site / "z3_solver-1.0.dist-info").mkdir()
    return SimpleNamespace(origin=str(site / "z3" / "__init__.py"), site=site)


@pytest.mark.parametrize("case,expected", [
    ({}, "9.8.7"),
    ({"version": "9.8"}, None),
    ({"version": "9.8.x7.1"}, None),
    ({"lib_size": 11}, None),  # not the library the wheel installed
    ({"record_init": False}, None),  # a z3 package that is not the wheel's
    ({"extra_info": True}, None),  # two wheels' records: which one is it
])
def test_the_wheels_version_only_where_it_is_surely_the_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                case: dict, expected: str | None) -> None:
    import importlib.util

    wheel = fake_wheel(tmp_path, **case)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: wheel if name == "z3" else None)
    monkeypatch.chdir(tmp_path)
    assert cache_module._z3_wheel_version() == expected


@pytest.mark.parametrize("where", ["cwd", "package", "Z3_LIB_DIRS"])
def test_a_library_z3_would_load_before_the_wheels_is_not_the_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    where: str) -> None:
    import importlib.util

    wheel = fake_wheel(tmp_path)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: wheel if name == "z3" else None)
    monkeypatch.chdir(tmp_path)
    assert cache_module._z3_wheel_version() == "9.8.7"
    if where == "Z3_LIB_DIRS":
        monkeypatch.setattr(builtins, "Z3_LIB_DIRS", [str(tmp_path)], raising=False)
    else:
        (tmp_path if where == "cwd" else wheel.site / "z3").joinpath("libz3.so.9.8").write_bytes(b"")
    assert cache_module._z3_wheel_version() is None


# -- a warm run imports neither Z3 nor the prover ---------------------------------------------------------

WARM_RUN = """
import json, sys
from core_teil.cli import main
code = main(["prove", sys.argv[1], "--jobs", sys.argv[3], "--cache", sys.argv[2]])
mods = ["z3", "core_teil.proving.prove", "cvc5", "core_teil.lang.typing", "numpy"]
print(json.dumps({"code": code, "imported": [m for m in mods if m in sys.modules]}), file=sys.stderr)
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_warm_library_run_imports_neither_z3_nor_the_prover(tmp_path: Path, jobs: str) -> None:
    lib = library(tmp_path, axpy=AXPY, bad=BAD, sub=AXPY.replace("add (mul a x) y", "sub y x"))
    env = {**os.environ, "CORE_TEIL_CACHE_KEY": KEY}
    runs = [json.loads(subprocess.run([sys.executable, "-c", WARM_RUN, str(lib), str(tmp_path / "cache"), jobs],
                                      capture_output=True, text=True, env=env, check=False).stderr.splitlines()[-1])
            for _ in range(2)]
    assert runs[0]["code"] == 1 and "z3" in runs[0]["imported"]  # cold: it proved them
    assert runs[1] == {"code": 1, "imported": []}


def test_the_reprs_still_come_with_the_typed_program() -> None:
    # core_teil no longer imports lang.typing (it imports Z3): its classes get their stubs on import
    code = ("import sys, core_teil as ct\n"
            "assert 'core_teil.lang.typing' not in sys.modules and 'z3' not in sys.modules\n"
            "from core_teil.lang.typing import Derivation, TypedProgram, check_program\n"
            "print(TypedProgram.__repr__.__qualname__, Derivation._repr_html_.__qualname__)\n"
            f"print(repr(check_program(ct.parse({AXPY!r}, 'a.teil'))))\n"
            "print(TypedProgram.__repr__.__qualname__, Derivation._repr_html_.__qualname__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    stubs, shown, installed = out.splitlines()
    assert stubs == " ".join(["_reprs_on_first_use.<locals>.stub.<locals>.first_use"] * 2)
    assert shown.startswith("<TypedProgram a.teil: a : [], x : [n], y : [n], z : [n]")
    assert installed == "typed_program_repr derivation_node_html"


@pytest.mark.parametrize("seconds", [0.0054996, 0.0054994, 0.0125, 0.0044999995])
def test_a_report_rebuilt_from_its_json_prints_the_times_its_run_printed(seconds: float) -> None:
    # to_json keeps times to the microsecond; the run printed them from the same value, so that
    # the proof cache's rebuilt report prints what the run did (5.4996 ms printed "5 ms" in the
    # run and, kept as 5.5 ms, "6 ms" from the cache: test_one_file_is_served... failed in CI)
    report = prove_module.prove(parse(BAD, "bad.teil"))
    timed = dataclasses.replace(report, seconds=seconds * 7, obligations=tuple(
        dataclasses.replace(o, seconds=seconds) for o in report.obligations))
    rebuilt = cache_module.report_from_json(timed.to_json(), timed.file, timed.timeout,
                                            tuple(o.counterexample.excerpt if o.counterexample else None
                                                  for o in timed.obligations))
    assert dataclasses.replace(rebuilt, notes=()).render() == timed.render()
