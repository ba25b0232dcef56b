"""The proof cache (issue 17, item 2): warm runs prove nothing again, a changed kernel re-proves
only its changed obligations, and no entry -- corrupted, edited, forged with another key --
turns a refutation or an unknown into ``proved`` (core_teil/proving/cache.py says what it trusts).

Solver calls are counted twice: by the cache's own statistics and by wrapping
``prove.decide``, the one place Z3 is asked (in this process: ``jobs=1``).
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from core_teil import library as batch
from core_teil.lang.parser import parse
from core_teil.library import KernelStatus
from core_teil.proving import prove as prove_module
from core_teil.proving.cache import ProofCache, _canonical, prove_cached, secret_key, solver_fields
from core_teil.proving.obligations import generate
from core_teil.proving.report import Status
from core_teil.proving.smtlib import script
from tests.cache_kit import AXPY, BAD, private_cache  # noqa: F401 -- private_cache is autouse

HELM_LIKE = """lang full
param E, n
input alloc S : [n, n]
input alloc D : [n, n, n]
input alloc u : [E, n, n, n]
alloc t : [E, n, n, n]
output alloc v : [E, n, n, n]
t = contr 2 6 (prod u S)
t = contr 2 6 (prod t S)
v = div t (expa 1 E D)
"""
# the same kernel with its second statement changed (contracting the other index of S)
HELM_CHANGED = HELM_LIKE.replace("t = contr 2 6 (prod t S)", "t = contr 2 5 (prod t S)")



@pytest.fixture
def solver_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every call of Z3 made by ``prove`` in this process."""
    calls: list[int] = []
    real = prove_module.decide

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(prove_module, "decide", counting)
    return calls


def write(lib: Path, **files: str) -> Path:
    lib.mkdir(exist_ok=True)
    for name, text in files.items():
        (lib / f"{name}.teil").write_text(text)
    return lib


def test_a_warm_run_proves_nothing_again(tmp_path, solver_calls) -> None:
    lib = write(tmp_path / "lib", helm=HELM_LIKE, axpy=AXPY)
    cache = tmp_path / "cache"
    cold = batch.run([str(lib)], jobs=1, cache=cache)
    assert cold.exit_code == 0 and solver_calls and cold.totals()["solver_decided"] > 0
    solver_calls.clear()
    warm = batch.run([str(lib)], jobs=1, cache=cache)
    assert warm.exit_code == 0 and not solver_calls
    t = warm.totals()
    assert t["solver_decided"] == 0 and t["kernels_from_cache"] == 2 and t["from_cache"] == t["obligations"]
    # the warm certificates are the cold ones (times aside)
    strip = lambda r: [(o["label"], o["status"], o["sha256"]) for o in r.certificate["obligations"]]  # noqa: E731
    assert [strip(r) for r in warm.results] == [strip(r) for r in cold.results]
    # two processes: answered by this one from the kernel entries, no pool started
    two = batch.run([str(lib)], jobs=2, cache=cache)
    assert two.totals()["solver_decided"] == 0 and not solver_calls


def test_a_changed_kernel_reproves_only_its_changed_obligations(tmp_path, solver_calls) -> None:
    cache = ProofCache(tmp_path / "cache")
    before = prove_cached(parse(HELM_LIKE, "helm.teil"), cache=cache, source=HELM_LIKE)
    # identical obligations of one kernel (t's writes for statements 1 and 2) are decided once
    assert before.ok and cache.stats.misses == len(set(cache.recorded.values()))
    assert cache.stats.misses + cache.stats.hits == len(before.obligations)
    old_keys = set(cache.recorded.values())
    after_cache = ProofCache(tmp_path / "cache")
    solver_calls.clear()
    after = prove_cached(parse(HELM_CHANGED, "helm.teil"), cache=after_cache, source=HELM_CHANGED)
    assert after.ok
    new = {n: k for n, k in after_cache.recorded.items() if k not in old_keys}
    statement = {o.number: o.statement for o in after.obligations}
    # only obligations of statement 2 changed, and only they were decided
    assert new and {statement[n] for n in new} == {2}
    assert after_cache.stats.misses == len(set(new.values()))
    assert after_cache.stats.hits == len(after.obligations) - after_cache.stats.misses
    assert solver_calls  # the changed ones were decided (with their vacuity checks)


def test_renaming_the_file_keeps_the_obligation_entries(tmp_path) -> None:
    cache = ProofCache(tmp_path / "cache")
    prove_cached(parse(AXPY, "a.teil"), cache=cache, source=AXPY)
    again = ProofCache(tmp_path / "cache")
    prove_cached(parse("# a comment\n" + AXPY, "elsewhere/b.teil"), cache=again, source=AXPY)
    assert again.stats.misses == 0


def obligation_entry(cache: ProofCache, text: str, label: str, timeout: float | None = None) -> tuple[str, Path]:
    """The key and path of the entry that would serve obligation ``label`` of ``text``."""
    ob = next(o for o in generate(parse(text, "t.teil")).obligations if o.label == label)
    key = cache.obligation_key(script(ob), len(ob.hypotheses), solver_fields("z3", timeout))
    return key, Path(cache._path("obligations", key))


def forge(cache: ProofCache, victim: Path, victim_key: str, donor_payload: dict, how: str,
          layout: str = "json") -> None:
    """An entry saying ``proved`` for the victim obligation, made as a poisoner would; ``layout``
    ``canonical`` writes it byte for byte as ``ProofCache.write`` does (its checksum first), so
    that the reader's check on the bytes is the one that must refuse it."""
    body = {"format": 1, "kind": "obligations", "key": victim_key, "payload": donor_payload}
    if how == "edited":  # a valid entry of another obligation, renamed and its key edited
        entry = {**body, "checksum": "0" * 64}
    elif how == "sha256":  # a checksum recomputed without the key
        import hashlib

        entry = {**body, "checksum": hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"))
                                                    .encode()).hexdigest()}
    else:  # sealed with the right key: only the audit can catch it
        entry = cache.seal("obligations", victim_key, donor_payload)
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_bytes(_canonical(entry) if layout == "canonical" else json.dumps(entry).encode())


def donor_payload(cache: ProofCache, victim_text: str, timeout: float | None = None) -> dict:
    """A genuine ``proved`` payload, its digest and fields copied from the victim's own key fields."""
    prove_cached(parse(AXPY, "axpy.teil"), cache=cache, source=AXPY, timeout=timeout)
    any_entry = next((cache.root / "v1" / "obligations").rglob("*.json"))
    return json.loads(any_entry.read_text())["payload"]


@pytest.mark.parametrize("layout", ["json", "canonical"])
@pytest.mark.parametrize("how", ["edited", "sha256"])
def test_a_poisoned_entry_never_turns_a_refutation_into_proved(tmp_path, how, layout) -> None:
    cache = ProofCache(tmp_path / "cache")
    key, path = obligation_entry(cache, BAD, "typing-stmt1")
    forge(cache, path, key, donor_payload(cache, BAD), how, layout)
    report = prove_cached(parse(BAD, "bad.teil"), cache=(c := ProofCache(tmp_path / "cache")), source=BAD)
    assert {o.label: o.status for o in report.obligations}["typing-stmt1"] is Status.REFUTED
    assert c.stats.rejected >= 1 and report.exit_code == 1


def test_a_poisoned_entry_never_turns_an_unknown_into_proved(tmp_path) -> None:
    cache = ProofCache(tmp_path / "cache")
    tiny = 1e-7  # rlimit 1: every obligation is unknown, and the key says rlimit 1
    key, path = obligation_entry(cache, AXPY, "reads-in-bounds-stmt1", tiny)
    payload = {**donor_payload(ProofCache(tmp_path / "other"), AXPY), "rlimit": 1}
    forge(cache, path, key, payload, "sha256")
    c = ProofCache(tmp_path / "cache")
    report = prove_cached(parse(AXPY, "axpy.teil"), cache=c, source=AXPY, timeout=tiny)
    assert all(o.status is Status.UNKNOWN for o in report.obligations) and c.stats.rejected >= 1
    # and an unknown is never stored: no obligation entry, no kernel entry
    assert c.stats.stores == 0 and not list((tmp_path / "cache" / "v1" / "kernels").rglob("*.json"))


def test_a_forgery_with_the_key_is_caught_by_the_audit(capsys, tmp_path) -> None:
    from core_teil.cli import main

    cache = ProofCache(tmp_path / "cache")
    key, path = obligation_entry(cache, BAD, "typing-stmt1")
    forge(cache, path, key, {**donor_payload(cache, BAD)}, "sealed")
    payload = json.loads(path.read_text())["payload"]
    # the forger also needs the fields of the victim's key: the donor's digest differs, so even a
    # sealed copy is refused unless its payload is rewritten to the victim's, which we do here
    ob = next(o for o in generate(parse(BAD, "t.teil")).obligations if o.label == "typing-stmt1")
    victim = ProofCache._obligation_payload(script(ob), len(ob.hypotheses), solver_fields("z3", None), 0.0)
    assert payload["sha256"] != victim["sha256"]
    forge(cache, path, key, victim, "sealed")
    f = tmp_path / "bad.teil"
    f.write_text(BAD)
    # served without an audit: the key is the trust boundary (the module docstring says so)
    fooled = prove_cached(parse(BAD, str(f)), cache=ProofCache(tmp_path / "cache"), source=BAD)
    assert {o.label: o.status for o in fooled.obligations}["typing-stmt1"] is Status.PROVED
    capsys.readouterr()
    code = main(["prove", str(f), "--cache", str(tmp_path / "cache"), "--cache-audit"])
    _out, err = capsys.readouterr()
    assert code == 1 and "the cache says proved, the solver says refuted" in err
    assert not path.exists()  # evicted
    assert main(["prove", str(f), "--cache", str(tmp_path / "cache")]) == 1


def test_an_entry_as_written_is_checked_on_its_bytes_and_one_flipped_byte_rejects_it(tmp_path, monkeypatch) -> None:
    cache = ProofCache(tmp_path / "cache")
    payload = {"status": "proved", "note": "x" * 40}
    cache.write("obligations", "ab" * 32, payload)
    path = Path(cache._path("obligations", "ab" * 32))
    raw = path.read_bytes()
    with monkeypatch.context() as m:  # served without re-encoding the body
        m.setattr(ProofCache, "checksum", lambda self, body: pytest.fail("re-encoded"))
        assert ProofCache(tmp_path / "cache").read("obligations", "ab" * 32) == payload
    for at in (raw.index(b"xxx"), raw.index(b'"key"') + 8, len(b'{"checksum":"') + 3):
        flipped = bytearray(raw)
        flipped[at] = ord("y") if flipped[at] != ord("y") else ord("z")
        path.write_bytes(bytes(flipped))
        again = ProofCache(tmp_path / "cache")
        assert again.read("obligations", "ab" * 32) is None and again.stats.rejected == 1, at
    # an extra field, even signed, is not an entry as written
    path.write_bytes(_canonical({**json.loads(raw), "status": "proved"}))
    assert ProofCache(tmp_path / "cache").read("obligations", "ab" * 32) is None


def test_a_corrupted_entry_is_ignored_and_rewritten(tmp_path) -> None:
    cache = ProofCache(tmp_path / "cache")
    prove_cached(parse(AXPY, "axpy.teil"), cache=cache, source=AXPY)
    entries = sorted((tmp_path / "cache").rglob("*.json"))
    assert entries
    for e in entries:  # a torn write, as after a crash without the rename
        e.write_bytes(e.read_bytes()[: len(e.read_bytes()) // 2])
    again = ProofCache(tmp_path / "cache")
    report = prove_cached(parse(AXPY, "axpy.teil"), cache=again, source=AXPY)
    assert report.ok and again.stats.hits == 0 and again.stats.rejected >= 1
    third = ProofCache(tmp_path / "cache")
    prove_cached(parse(AXPY, "axpy.teil"), cache=third, source=AXPY)
    assert third.stats.misses == 0 and third.stats.kernel_hits == 1


def test_another_key_invalidates_every_entry(tmp_path, monkeypatch) -> None:
    prove_cached(parse(AXPY, "axpy.teil"), cache=ProofCache(tmp_path / "cache"), source=AXPY)
    monkeypatch.setenv("CORE_TEIL_CACHE_KEY", "z" * 64)
    other = ProofCache(tmp_path / "cache")
    prove_cached(parse(AXPY, "axpy.teil"), cache=other, source=AXPY)
    assert other.stats.hits == 0 and other.stats.rejected >= 1


def test_the_key_file_is_made_once_and_private(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("CORE_TEIL_CACHE_KEY")
    k1, k2 = secret_key(), secret_key()
    path = tmp_path / "xdg-config" / "core-teil" / "cache-key"
    assert k1 == k2 and path.exists() and (path.stat().st_mode & 0o077) == 0


def _hammer(root: str, n: int) -> int:
    """Write n entries over and over while reading them; count reads that were torn."""
    cache = ProofCache(root)
    torn = 0
    for rep in range(8):
        for i in range(n):
            cache.write("obligations", f"{i:064x}", {"status": "proved", "i": i, "rep": rep % 2})
            before = cache.stats.rejected
            got = cache.read("obligations", f"{(i * 7) % n:064x}")
            torn += cache.stats.rejected - before
            assert got is None or got["status"] == "proved"
    return torn


def test_concurrent_writers_never_leave_a_torn_entry(tmp_path) -> None:
    ctx = multiprocessing.get_context("forkserver")
    with ctx.Pool(3) as pool:
        torn = pool.starmap(_hammer, [(str(tmp_path / "cache"), 30)] * 3)
    assert torn == [0, 0, 0]
    assert not list((tmp_path / "cache").rglob("*.tmp"))  # no temporary file left behind


def test_a_refuted_kernel_is_served_with_its_counterexample(tmp_path, solver_calls) -> None:
    # a decided refutation is cached as one (tests/test_cache_refuted.py): served as its run printed it
    lib = write(tmp_path / "lib", bad=BAD)
    (cold,) = batch.run([str(lib)], jobs=1, cache=tmp_path / "cache").results
    solver_calls.clear()
    again = batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    (r,) = again.results
    assert r.status is KernelStatus.REFUTED and "Example:" in r.text and not solver_calls
    assert (r.text, r.certificate, r.exit_code, r.kernel_cached) == (cold.text, cold.certificate, 1, True)


def test_another_generator_misses_the_kernel_entries_but_not_the_obligations(tmp_path, monkeypatch) -> None:
    from core_teil.proving import cache as cache_module

    lib = write(tmp_path / "lib", helm=HELM_LIKE, axpy=AXPY)
    batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    # an edited obligation generator: a kernel entry no longer says what the kernel's obligations are
    monkeypatch.setattr(cache_module, "generator_fingerprint", lambda: "an edited generator")
    again = batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    t = again.totals()
    # ... so they are generated again, and each one whose script is unchanged is served by its entry
    assert t["kernels_from_cache"] == 0 and t["solver_decided"] == 0 and t["from_cache"] == t["obligations"]


def test_a_single_file_and_a_library_share_kernel_entries(capsys, tmp_path) -> None:
    from core_teil.cli import main

    lib = write(tmp_path / "lib", axpy=AXPY)
    assert main(["prove", str(lib / "axpy.teil"), "--cache", str(tmp_path / "cache")]) == 0
    assert "proof cache" not in capsys.readouterr().out  # proved now, not served
    again = batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
    assert again.totals()["kernels_from_cache"] == 1
    assert main(["prove", str(lib / "axpy.teil"), "--cache", str(tmp_path / "cache")]) == 0
    assert "note: every obligation was proved by an earlier run (the proof cache)" in capsys.readouterr().out


# -- review rS: kernel entries are served only for the kernel, parameters and pad they were made for

SQUARE_ONLY = "param k\ninput alloc A : [k]\ninput alloc B : [3]\noutput alloc C : [k]\nC = add A B\n"


def _library_run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    from core_teil.cli import main

    main(["prove", *argv, "--jobs", "1", "--json"])
    return json.loads(capsys.readouterr().out)


def test_a_kernel_entry_copied_under_another_kernels_key_is_rejected(tmp_path) -> None:
    cache = ProofCache(tmp_path / "cache")
    fields = solver_fields("z3", None)
    good_key, bad_key = (cache.source_key(t, {}, None, fields) for t in (AXPY, BAD))
    assert prove_cached(parse(AXPY, "axpy.teil"), cache=cache, source=AXPY, kernel_key=good_key).ok
    good, bad = Path(cache._path("kernels", good_key)), Path(cache._path("kernels", bad_key))
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(good.read_bytes())  # a genuine, correctly signed entry, under the refuted kernel's name
    again = ProofCache(tmp_path / "cache")
    report = prove_cached(parse(BAD, "bad.teil"), cache=again, source=BAD, kernel_key=bad_key)
    assert not report.ok and report.exit_code == 1 and again.stats.rejected >= 1 and again.stats.kernel_hits == 0


def test_an_entry_made_with_parameters_is_not_served_without_them(capsys, tmp_path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "square.teil").write_text(SQUARE_ONLY)
    cache = str(tmp_path / "cache")
    first = _library_run(capsys, str(lib), "--cache", cache, "--param", "k=3")
    assert first["summary"]["proved"] == 1
    second = _library_run(capsys, str(lib), "--cache", cache)  # every k: T-Elem needs k = 3
    assert second["summary"]["refuted"] == 1 and second["summary"]["kernels_from_cache"] == 0
    assert second["kernels"][0]["certificate"]["params"] in ({}, None)


def test_an_unpadded_entry_is_not_served_for_a_padded_run(capsys, tmp_path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "axpy.teil").write_text(AXPY)
    cache = str(tmp_path / "cache")
    plain = _library_run(capsys, str(lib), "--cache", cache)
    padded = _library_run(capsys, str(lib), "--cache", cache, "--pad", "4")
    assert padded["summary"]["kernels_from_cache"] == 0 and padded["summary"]["solver_decided"] >= 1
    cert_plain, cert_padded = plain["kernels"][0]["certificate"], padded["kernels"][0]["certificate"]
    assert cert_padded["pad"] == 4 and cert_plain["pad"] is None
    assert len(cert_padded["obligations"]) > len(cert_plain["obligations"])


def test_a_kernel_entry_is_not_served_once_one_of_its_obligation_entries_is_gone(tmp_path, solver_calls) -> None:
    cache = ProofCache(tmp_path / "cache")
    prove_cached(parse(AXPY, "axpy.teil"), cache=cache, source=AXPY)
    victim = next(iter(sorted((tmp_path / "cache" / "v1" / "obligations").rglob("*.json"))))
    victim.unlink()
    solver_calls.clear()
    again = ProofCache(tmp_path / "cache")
    report = prove_cached(parse(AXPY, "axpy.teil"), cache=again, source=AXPY)
    assert report.ok and again.stats.kernel_hits == 0 and again.stats.misses >= 1 and solver_calls


def test_a_key_file_too_short_to_be_a_key_is_bad_input(tmp_path, monkeypatch, capsys) -> None:
    # reviewer rS (C22): a key of a few bytes can be guessed, so entries signed with it prove nothing
    from core_teil.cli import main

    monkeypatch.delenv("CORE_TEIL_CACHE_KEY")
    path = tmp_path / "xdg-config" / "core-teil" / "cache-key"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"abc")
    f = tmp_path / "axpy.teil"
    f.write_text(AXPY)
    assert main(["prove", str(f), "--cache", str(tmp_path / "cache")]) == 2
    assert "cannot make the proof cache's key" in capsys.readouterr().err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_audit_re_decides_a_forged_kernel_entry(capsys, tmp_path, jobs) -> None:
    # reviewer rS (C23, L18): a kernel entry sealed with the key must not bypass --cache-audit
    from core_teil.cli import main

    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "bad.teil").write_text(BAD)
    cache = ProofCache(tmp_path / "cache")
    key = cache.source_key(BAD, {}, None, solver_fields("z3", None))
    good = prove_cached(parse(AXPY, "axpy.teil"), cache=cache, source=AXPY)
    forged = json.loads(json.dumps(good.to_json()))
    cache.write("kernels", key, {"report": forged, "obligations": [None] * len(forged["obligations"]),
                                 "solver": solver_fields("z3", None).fields()})
    capsys.readouterr()
    assert main(["prove", str(lib), "--jobs", jobs, "--cache", str(tmp_path / "cache"), "--cache-audit"]) == 1
    assert main(["prove", str(lib / "bad.teil"), "--cache", str(tmp_path / "cache"), "--cache-audit"]) == 1
