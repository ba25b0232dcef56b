"""A warm library run (issue 17: a 1,000-kernel library at least 20x faster warm than cold):
every kernel is looked up in the calling process before any worker is started, with one
authenticated read per kernel, and the run imports none of what it does not use.  Each test
names the change it pins; none of them may weaken what the cache serves (tests/test_scale_cache.py
and tests/test_cache_review3.py hold the cache's guarantees).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core_teil import library as batch
from core_teil.cli import build_parser, main
from core_teil.errors import TeilInputError
from core_teil.lang import parser as parser_module
from core_teil.lang.parser import parse, read_source
from core_teil.proving.cache import ProofCache, report_from_json, served_certificate, solver_fields
from tests.cache_kit import AXPY, BAD, KEY, library, private_cache  # noqa: F401 -- private_cache is autouse

# four small proved kernels: more than library.IN_PROCESS, so that a run that did not look them
# up first would start a pool for them
KERNELS = {f"k{i}": AXPY.replace("z = add (mul a x) y", body) for i, body in enumerate(
    ["z = add (mul a x) y", "z = add x y", "z = mul a x", "z = sub y x"])}



def kernel_entry(cache: ProofCache, text: str) -> Path:
    """The path of the kernel entry a library run stores for a file holding ``text``."""
    return Path(cache._path("kernels", cache.source_key(text, {}, None, solver_fields("z3", None))))


# -- in this process, before any worker -----------------------------------------------------------

WARM_RUN = """
import json, sys
from core_teil.cli import main
code = main(["prove", sys.argv[1], "--jobs", "2", "--cache", sys.argv[2], "--json"])
mods = ["concurrent.futures.process", "multiprocessing.pool", "core_teil.teach.teaching",
        "core_teil.teach.quickcheck", "core_teil.proving.equiv", "core_teil.frontends.ops",
        "core_teil.native.engine", "onnx"]
print(json.dumps({"code": code, "imported": [m for m in mods if m in sys.modules]}), file=sys.stderr)
"""


def test_a_warm_library_run_starts_no_worker_and_imports_no_other_command(tmp_path: Path) -> None:
    # the pool (concurrent.futures.process), the teaching layer (reprs on first use), the other
    # commands' modules (the parser of `prove` alone) and the package's other names (lazy)
    lib = library(tmp_path, **KERNELS)
    cache = tmp_path / "cache"
    env = {**os.environ, "CORE_TEIL_CACHE_KEY": KEY}
    cold = subprocess.run([sys.executable, "-c", WARM_RUN, str(lib), str(cache)], capture_output=True, text=True,
                          env=env, check=False)
    report = json.loads(cold.stderr.strip().splitlines()[-1])
    assert report["code"] == 0 and "concurrent.futures.process" in report["imported"]  # 4 kernels: a pool
    warm = subprocess.run([sys.executable, "-c", WARM_RUN, str(lib), str(cache)], capture_output=True, text=True,
                          env=env, check=False)
    assert json.loads(warm.stderr.strip().splitlines()[-1]) == {"code": 0, "imported": []}
    doc = json.loads(warm.stdout)
    assert doc["summary"]["kernels_from_cache"] == 4 and doc["summary"]["where"] == \
        "2 processes (0 kernels left after the cache: proved in this one)"


def test_jobs_1_looks_every_kernel_up_before_proving_any(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = library(tmp_path, axpy=AXPY, bad=BAD)
    batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    (lib / "bad.teil").write_text(BAD + "# changed: no entry\n")
    order: list[str] = []
    real_lookup, real_prove = batch.lookup, batch.prove_one
    monkeypatch.setattr(batch, "lookup", lambda t, *a: order.append("lookup " + Path(t.path).name)
                        or real_lookup(t, *a))
    monkeypatch.setattr(batch, "prove_one", lambda t: order.append("prove " + Path(t.path).name) or real_prove(t))
    warm = batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    assert order[:3] == ["lookup axpy.teil", "lookup bad.teil", "prove bad.teil"]
    assert [r.kernel_cached for r in warm.results] == [True, False] and warm.exit_code == 1


# -- one authenticated read per kernel -------------------------------------------------------------


def test_a_warm_kernel_costs_one_entry_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = library(tmp_path, **KERNELS)
    batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    reads: list[str] = []
    real = ProofCache.read
    monkeypatch.setattr(ProofCache, "read", lambda self, kind, key: reads.append(kind) or real(self, kind, key))
    warm = batch.run([str(lib)], jobs=2, cache=tmp_path / "cache")
    assert warm.totals()["kernels_from_cache"] == 4 and reads == ["kernels"] * 4


def test_a_damaged_obligation_entry_costs_its_own_lookup_not_the_kernel_entry(tmp_path: Path) -> None:
    # the kernel entry is sealed and binds the verdicts; a damaged obligation entry is still
    # refused where it is read (when the kernel is proved again: tests/test_scale_cache.py)
    lib = library(tmp_path, axpy=AXPY)
    batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    for e in (tmp_path / "cache" / "v1" / "obligations").rglob("*.json"):
        e.write_bytes(b"{}")
    warm = batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    assert warm.totals()["kernels_from_cache"] == 1 and warm.exit_code == 0


def _forge_kernel_entry(tmp_path: Path, edit, seal: bool = True) -> tuple[ProofCache, Path]:
    """BAD's kernel entry made from AXPY's proved one: its certificate and obligation keys,
    changed by ``edit(payload)``, sealed with the key (or its checksum broken)."""
    cache = ProofCache(tmp_path / "cache")
    lib = library(tmp_path, axpy=AXPY)
    batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    payload = json.loads(kernel_entry(cache, AXPY).read_text())["payload"]
    edit(payload)
    key = cache.source_key(BAD, {}, None, solver_fields("z3", None))
    cache.write("kernels", key, payload)
    path = Path(cache._path("kernels", key))
    if not seal:
        raw = path.read_bytes()
        at = raw.index(b'"lemma":"') + len(b'"lemma":"')
        path.write_bytes(raw[:at] + b"X" + raw[at + 1:])  # one byte of a lemma's name: verdicts intact
    (tmp_path / "lib" / "bad.teil").write_text(BAD)
    return cache, path


def _bad_verdict(tmp_path: Path) -> tuple[str, int]:
    run = batch.run([str(tmp_path / "lib" / "bad.teil")], jobs=2, cache=tmp_path / "cache")
    (r,) = run.results
    return str(r.status), run.totals()["kernels_from_cache"]


def test_a_kernel_entry_whose_certificate_was_edited_is_refused(tmp_path: Path) -> None:
    _forge_kernel_entry(tmp_path, lambda p: None, seal=False)
    assert _bad_verdict(tmp_path) == ("refuted", 0)


def test_a_sealed_kernel_entry_with_an_unproved_obligation_is_refused(tmp_path: Path) -> None:
    # "ok" says proved but one verdict says unknown: the entry is refused whole (only a writer
    # with the key could make it; the cache serves only what says proved in every part)
    def edit(p: dict) -> None:
        p["report"]["obligations"][0]["status"] = "unknown"

    _forge_kernel_entry(tmp_path, edit)
    assert _bad_verdict(tmp_path) == ("refuted", 0)


def test_a_sealed_kernel_entry_naming_a_path_for_an_obligation_is_refused(tmp_path: Path) -> None:
    # an obligation "key" that walks out of the obligations' directory to a file that is there
    # (the entry itself) must not stand for an obligation entry that is gone
    def edit(p: dict) -> None:
        # obligations/<key[:2]>/<key>.json with key[:2] == "..": the path of AXPY's kernel entry
        entry = os.path.relpath(kernel_entry(ProofCache(tmp_path / "cache"), AXPY), tmp_path / "cache" / "v1")
        p["obligations"][0] = "../v1/" + entry[: -len(".json")]

    _forge_kernel_entry(tmp_path, edit)
    assert _bad_verdict(tmp_path) == ("refuted", 0)
    # and the entry as forged is exactly what a sealed, proved entry is but for that name
    _forge_kernel_entry(tmp_path / "control", lambda p: None)
    assert _bad_verdict(tmp_path / "control") == ("proved", 1)  # served: only the key stood between


def test_an_evicted_obligation_entry_takes_the_kernel_entry_out_of_service(tmp_path: Path) -> None:
    lib = library(tmp_path, axpy=AXPY)
    batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    cache = ProofCache(tmp_path / "cache")
    keys = json.loads(kernel_entry(cache, AXPY).read_text())["payload"]["obligations"]
    cache.evict("obligations", next(k for k in keys if k is not None))
    warm = batch.run([str(lib)], jobs=2, cache=tmp_path / "cache")
    assert warm.totals()["kernels_from_cache"] == 0 and warm.totals()["solver_decided"] >= 1 and warm.exit_code == 0


# -- the certificate served is the one a rebuilt report prints --------------------------------------


def test_a_served_certificate_is_the_rebuilt_reports_field_for_field_and_in_order(tmp_path: Path) -> None:
    from core_teil.proving.cache import prove_cached

    cache = ProofCache(tmp_path / "cache")
    report = prove_cached(parse(AXPY, "a.teil"), {"n": 3}, 4, cache=cache, source=AXPY, timeout=30.0,
                          smt2_dir=tmp_path / "smt2")
    cert = report.to_json()
    assert any(o["smt2"] for o in cert["obligations"])  # a run that wrote its scripts: not served so
    for file, timeout in (("elsewhere/b.teil", None), ("a.teil", 2.5)):
        served = served_certificate(cert, file, timeout)
        rebuilt = report_from_json(cert, file, timeout).to_json()
        assert json.dumps(served) == json.dumps(rebuilt)  # the same keys in the same order


# -- the kernel's text, read as read_source reads it --------------------------------------------------


def test_the_lookups_reader_is_read_source_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bom = tmp_path / "bom.teil"
    bom.write_bytes(b"\xef\xbb\xbf" + AXPY.encode())
    assert batch._text(str(bom)) == read_source(bom) == AXPY
    latin1 = tmp_path / "latin1.teil"
    latin1.write_bytes(b"param n\n# caf\xe9\n")
    assert batch._text(str(latin1)) is None and batch._text(str(tmp_path)) is None
    assert batch._text(str(tmp_path / "absent.teil")) is None
    monkeypatch.setattr(parser_module, "MAX_SOURCE_BYTES", len(AXPY) - 1)
    plain = tmp_path / "plain.teil"
    plain.write_text(AXPY)
    assert batch._text(str(plain)) is None
    with pytest.raises(TeilInputError, match="more than"):
        read_source(plain)


def test_a_file_too_large_to_read_is_not_served_from_a_kernel_entry(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    lib = library(tmp_path, axpy=AXPY)
    batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    monkeypatch.setattr(parser_module, "MAX_SOURCE_BYTES", len(AXPY) - 1)
    (r,) = batch.run([str(lib)], jobs=1, cache=tmp_path / "cache").results
    assert r.exit_code == 2 and "more than" in r.text and not r.kernel_cached


# -- the solver's fields, once per process --------------------------------------------------------------


def test_the_solver_fields_are_remembered_per_argument_type() -> None:
    assert solver_fields("z3", 1) is solver_fields("z3", 1)
    with pytest.raises(TeilInputError, match="timeout=True: expected a finite number"):
        solver_fields("z3", True)  # not the entry of 1: a bool is no timeout
    with pytest.raises(TeilInputError):
        solver_fields("z3", [1])  # unhashable: checked, not a TypeError


# -- `core-teil prove` builds only its own parser ------------------------------------------------------------


def test_the_prove_only_parser_is_the_full_parsers_prove(capsys: pytest.CaptureFixture[str]) -> None:
    def prove_help(ap) -> str:
        sub = next(a for a in ap._actions if a.dest == "command")
        return sub.choices["prove"].format_help()

    assert prove_help(build_parser("prove")) == prove_help(build_parser())
    assert main(["prove", "--timeout", "0", "x.teil"]) == 2
    assert "--timeout 0" in capsys.readouterr().err
