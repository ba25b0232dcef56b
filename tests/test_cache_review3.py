"""Review r17 (issue 17): the proof cache's check of an entry on its bytes, the place and the
contents of its key, entries that are not entries, and the library's ``--json`` for a kernel
served by the cache.  Each test kills a mutant that the earlier tests let live (the ids are
the review's, in /tmp/r17_work/mutants.py when it ran).

The serious class is a cache that says ``proved`` for an obligation nobody proved: the
forgeries below copy the victim's own payload (every field of it is public: the digest of
the script, the number of hypotheses, the solver's fields), so only the checksum stands
between them and a certificate.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core_teil import library as batch
from core_teil.cli import main
from core_teil.errors import TeilInputError
from core_teil.lang.parser import parse
from core_teil.proving import cache as cache_module
from core_teil.proving.cache import ProofCache, _canonical, prove_cached, secret_key, solver_fields
from core_teil.proving.obligations import generate
from core_teil.proving.report import Status
from core_teil.proving.smtlib import script
from tests.cache_kit import AXPY, BAD, KEY, private_cache  # noqa: F401 -- private_cache is autouse

# T-Elem needs k = 3: proved with --param k=3, refuted for every k
SQUARE_ONLY = "param k\ninput alloc A : [k]\ninput alloc B : [3]\noutput alloc C : [k]\nC = add A B\n"
MATMUL = "lang full\nparam l, m, n\ninput alloc A : [l, m]\ninput alloc B : [m, n]\noutput alloc C : [l, n]\n" \
         "C = red 2 (diag 2 3 (prod A B))\n"



def key_file(tmp_path: Path) -> Path:
    return tmp_path / "xdg-config" / "core-teil" / "cache-key"


# -- forgeries of the victim's own entry -----------------------------------------------


def victim(cache: ProofCache) -> tuple[str, Path, dict]:
    """The key, path and exact ``proved`` payload of the entry that would serve BAD's refuted obligation."""
    ob = next(o for o in generate(parse(BAD, "bad.teil")).obligations if o.label == "typing-stmt1")
    fields = solver_fields("z3", None)
    text = script(ob)
    return (cache.obligation_key(text, len(ob.hypotheses), fields),
            Path(cache._path("obligations", cache.obligation_key(text, len(ob.hypotheses), fields))),
            ProofCache._obligation_payload(text, len(ob.hypotheses), fields, 0.0))


def typing_verdict(tmp_path: Path) -> tuple[Status, ProofCache]:
    """BAD proved through the cache: the verdict of typing-stmt1, and the cache's statistics."""
    c = ProofCache(tmp_path / "cache")
    report = prove_cached(parse(BAD, "bad.teil"), cache=c, source=BAD)
    return {o.label: o.status for o in report.obligations}["typing-stmt1"], c


def _flip(digest: str, at: int) -> str:
    d = list(digest)
    d[at] = "0" if d[at] != "0" else "1"
    return "".join(d)


CHECKSUMS = {
    "zeros": lambda c, body: "0" * 64,
    "sha256": lambda c, body: hashlib.sha256(_canonical(body)).hexdigest(),
    "another key": lambda c, body: hmac.new(b"z" * 64, _canonical(body), hashlib.sha256).hexdigest(),
    "last digit changed": lambda c, body: _flip(c.checksum(body), -1),
    "first digit changed": lambda c, body: _flip(c.checksum(body), 0),
}


@pytest.mark.parametrize("layout", ["as written", "json.dumps"])
@pytest.mark.parametrize("how", list(CHECKSUMS))
def test_the_victims_own_payload_without_the_key_never_says_proved(tmp_path, how, layout) -> None:
    # r17 F03 F11 F12 F13: the earlier poisoned entries carried another obligation's digest, so
    # the payload check refused them whatever the checksum; here only the checksum can
    cache = ProofCache(tmp_path / "cache")
    key, path, payload = victim(cache)
    body = {"format": 1, "kind": "obligations", "key": key, "payload": payload}
    path.parent.mkdir(parents=True, exist_ok=True)
    encode = _canonical if layout == "as written" else (lambda e: json.dumps(e).encode())
    path.write_bytes(encode({**body, "checksum": CHECKSUMS[how](cache, body)}))
    status, c = typing_verdict(tmp_path)
    assert status is Status.REFUTED and c.stats.rejected >= 1
    # the forgery is exact but for its checksum: sealed with the key, the same entry is served
    # (once the kernel entry of the refutation just derived is gone: it would be served first)
    path.write_bytes(encode(cache.seal("obligations", key, payload)))
    shutil.rmtree(tmp_path / "cache" / "v1" / "kernels")
    assert typing_verdict(tmp_path)[0] is Status.PROVED


def test_an_entry_of_another_format_is_not_read(tmp_path) -> None:
    # r17 R01: the docstring promises that an entry written by another format is ignored
    cache = ProofCache(tmp_path / "cache")
    key, path, payload = victim(cache)
    body = {"format": 2, "kind": "obligations", "key": key, "payload": payload}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_canonical({**body, "checksum": cache.checksum(body)}))
    status, c = typing_verdict(tmp_path)
    assert status is Status.REFUTED and c.stats.rejected >= 1


def test_a_signed_entry_whose_fields_are_not_its_keys_is_counted_as_rejected(tmp_path) -> None:
    # r17 D01: the summary's "invalid entries ignored" counts it
    cache = ProofCache(tmp_path / "cache")
    key, path, payload = victim(cache)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_canonical(cache.seal("obligations", key, {**payload, "hypotheses": payload["hypotheses"] + 1})))
    status, c = typing_verdict(tmp_path)
    assert status is Status.REFUTED and c.stats.rejected == 1


def test_a_long_entry_as_written_is_checked_on_all_its_bytes_without_re_encoding(tmp_path, monkeypatch) -> None:
    # r17 F06: a kernel entry is kilobytes long; the check on the bytes covers every one of them
    cache = ProofCache(tmp_path / "cache")
    payload = {"status": "proved", "note": "x" * 5000}
    cache.write("kernels", "cd" * 32, payload)
    path = Path(cache._path("kernels", "cd" * 32))
    raw = path.read_bytes()
    with monkeypatch.context() as m:
        m.setattr(ProofCache, "checksum", lambda self, body: pytest.fail("re-encoded"))
        assert ProofCache(tmp_path / "cache").read("kernels", "cd" * 32) == payload
    path.write_bytes(raw[:-10] + b"y" + raw[-9:])  # one byte near the end
    again = ProofCache(tmp_path / "cache")
    assert again.read("kernels", "cd" * 32) is None and again.stats.rejected == 1


# -- entries that are not entries ------------------------------------------------------------


@pytest.mark.parametrize("raw", [b"[1, 2]", b'"proved"', b"null", b"7", b"{}", b'{"checksum": "00"}', b"\xff\xfe", b""])
def test_a_file_that_is_not_an_entry_is_ignored_and_counted(tmp_path, raw) -> None:
    # r17 R02 R03: JSON that is no object, or an object without the fields, is rejected, not raised
    cache = ProofCache(tmp_path / "cache")
    cache.write("obligations", "ab" * 32, {"status": "proved"})
    Path(cache._path("obligations", "ab" * 32)).write_bytes(raw)
    again = ProofCache(tmp_path / "cache")
    assert again.read("obligations", "ab" * 32) is None and again.stats.rejected == 1


def test_entries_that_are_arrays_cost_the_cache_not_the_library(capsys, tmp_path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "axpy.teil").write_text(AXPY)
    cache = str(tmp_path / "cache")
    assert main(["prove", str(lib), "--jobs", "1", "--cache", cache]) == 0
    for e in (tmp_path / "cache").rglob("*.json"):
        e.write_bytes(b"[1, 2]")
    capsys.readouterr()
    assert main(["prove", str(lib), "--jobs", "1", "--cache", cache, "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["summary"]
    assert s["proved"] == 1 and s["kernels_from_cache"] == 0 and s["cache_entries_rejected"] >= 1


def test_an_entry_that_cannot_be_read_or_written_costs_the_cache_not_the_proof(tmp_path) -> None:
    # r17 R04 W02: a directory where an entry should be, a file where the cache's v1 should be
    prove_cached(parse(AXPY, "axpy.teil"), cache=ProofCache(tmp_path / "cache"), source=AXPY)
    for e in list((tmp_path / "cache").rglob("*.json")):
        e.unlink()
        e.mkdir()
    c = ProofCache(tmp_path / "cache")
    assert prove_cached(parse(AXPY, "axpy.teil"), cache=c, source=AXPY).ok and c.stats.hits == 0
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "v1").write_text("not a directory")
    c = ProofCache(tmp_path / "flat")
    assert prove_cached(parse(AXPY, "axpy.teil"), cache=c, source=AXPY).ok and c.stats.stores == 0


# -- the key ---------------------------------------------------------------------------


def test_the_key_files_place_follows_home_and_xdg_config_home_within_a_process(tmp_path, monkeypatch) -> None:
    # r17 K01 K02: the place is cached per (XDG_CONFIG_HOME, home); a Dask worker or a notebook
    # lives across both changing
    monkeypatch.delenv("CORE_TEIL_CACHE_KEY")
    monkeypatch.delenv("XDG_CONFIG_HOME")
    keys = []
    for home in ("h1", "h2"):
        monkeypatch.setenv("HOME", str(tmp_path / home))
        keys.append(secret_key())
        assert (tmp_path / home / ".config" / "core-teil" / "cache-key").read_bytes() == keys[-1]
    for xdg in ("x1", "x2"):
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / xdg))
        keys.append(secret_key())
        assert (tmp_path / xdg / "core-teil" / "cache-key").read_bytes() == keys[-1]
    assert len(set(keys)) == 4


def test_a_key_file_rewritten_between_runs_is_read_again(tmp_path, monkeypatch) -> None:
    # r17 K03: deleting or replacing the key invalidates the cache, also for a process that stays
    monkeypatch.delenv("CORE_TEIL_CACHE_KEY")
    prove_cached(parse(AXPY, "axpy.teil"), cache=ProofCache(tmp_path / "cache"), source=AXPY)
    key_file(tmp_path).write_bytes(b"r" * 64)
    assert secret_key() == b"r" * 64
    c = ProofCache(tmp_path / "cache")
    assert prove_cached(parse(AXPY, "axpy.teil"), cache=c, source=AXPY).ok
    assert c.stats.hits == 0 and c.stats.rejected >= 1


def test_an_empty_cache_key_variable_is_not_an_empty_key(tmp_path, monkeypatch) -> None:
    # r17 K04: HMAC under b"" is a checksum anyone can compute
    monkeypatch.setenv("CORE_TEIL_CACHE_KEY", "")
    key = secret_key()
    assert key == key_file(tmp_path).read_bytes() and len(key) == 64
    cache = ProofCache(tmp_path / "cache")
    k, path, payload = victim(cache)
    body = {"format": 1, "kind": "obligations", "key": k, "payload": payload}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_canonical({**body, "checksum": hmac.new(b"", _canonical(body), hashlib.sha256).hexdigest()}))
    assert typing_verdict(tmp_path)[0] is Status.REFUTED


def test_a_key_file_written_by_hand_holds_the_same_key_as_the_variable(tmp_path, monkeypatch) -> None:
    # r17 K05: `echo $CORE_TEIL_CACHE_KEY > cache-key` on a machine that shares the cache
    prove_cached(parse(AXPY, "axpy.teil"), cache=ProofCache(tmp_path / "cache"), source=AXPY)
    key_file(tmp_path).parent.mkdir(parents=True)
    key_file(tmp_path).write_text(KEY + "\n")
    monkeypatch.delenv("CORE_TEIL_CACHE_KEY")
    c = ProofCache(tmp_path / "cache")
    assert prove_cached(parse(AXPY, "axpy.teil"), cache=c, source=AXPY).ok and c.stats.kernel_hits == 1


# -- kernel entries of the Python API (prove_cached without a kernel_key) -------------------------


def test_the_python_apis_kernel_entries_are_keyed_by_params_pad_and_generator(tmp_path, monkeypatch) -> None:
    # r17 P01 P02 P03: the library's keys by text were tested; prove_cached's own keys were not
    square = parse(SQUARE_ONLY, "square.teil")
    assert prove_cached(square, {"k": 3}, cache=ProofCache(tmp_path / "cache"), source=SQUARE_ONLY).ok
    c = ProofCache(tmp_path / "cache")
    every_k = prove_cached(square, cache=c, source=SQUARE_ONLY)
    assert every_k.exit_code == 1 and c.stats.kernel_hits == 0
    axpy = parse(AXPY, "axpy.teil")
    plain = prove_cached(axpy, cache=ProofCache(tmp_path / "cache"), source=AXPY)
    c = ProofCache(tmp_path / "cache")
    padded = prove_cached(axpy, pad=4, cache=c, source=AXPY)
    assert c.stats.kernel_hits == 0 and padded.pad == 4 and len(padded.obligations) > len(plain.obligations)
    monkeypatch.setattr(cache_module, "generator_fingerprint", lambda: "an edited generator")
    c = ProofCache(tmp_path / "cache")
    assert prove_cached(axpy, cache=c, source=AXPY).ok and c.stats.kernel_hits == 0 and c.stats.misses == 0


def test_numpy_parameters_key_the_same_kernel_entry_as_python_ones(tmp_path) -> None:
    # r17 P06: SPEC.md section 6 takes numpy integers; the key is made of the checked values
    import numpy as np

    square = parse(SQUARE_ONLY, "square.teil")
    assert prove_cached(square, {"k": np.int64(3)}, cache=ProofCache(tmp_path / "cache"), source=SQUARE_ONLY).ok
    c = ProofCache(tmp_path / "cache")
    assert prove_cached(square, {"k": 3}, cache=c, source=SQUARE_ONLY).ok and c.stats.kernel_hits == 1


def test_a_single_file_and_a_library_share_the_entry_whatever_the_order_of_the_params(capsys, tmp_path) -> None:
    # r17 P05: the CLI keys the parameters in the order given, the library sorted
    f = tmp_path / "lib" / "matmul.teil"
    f.parent.mkdir()
    f.write_text(MATMUL)
    cache = str(tmp_path / "cache")
    assert main(["prove", str(f), "--cache", cache, "--param", "n=2", "--param", "l=3"]) == 0
    summary = batch.run([str(f.parent)], jobs=1, cache=cache, params={"n": 2, "l": 3})
    assert summary.exit_code == 0 and summary.totals()["kernels_from_cache"] == 1


def _prover_modules() -> set[str]:
    """The modules of ``proving/`` that ``prove.py`` imports, transitively (``from .x import``), but the cache."""
    import ast

    root = Path(cache_module.__file__).resolve().parent
    seen: set[str] = set()
    todo = ["prove"]
    while todo:
        name = todo.pop()
        if name in seen or name == "cache":
            continue
        seen.add(name)
        for node in ast.walk(ast.parse((root / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                todo.append(node.module.split(".")[0])
    return seen


def test_an_edit_of_any_file_of_the_generator_misses_the_kernel_entries(monkeypatch) -> None:
    # r17 G01-G04: a kernel entry maps a text to the verdicts of its obligations as this code
    # generated them; an entry made before an edit of any of it (a fixed obligation, a new one
    # that would be refuted) must not be served after it
    root = Path(cache_module.__file__).resolve().parent.parent
    files = [*(root / "lang").glob("*.py"), *(root / "semantics").glob("*.py"),
             *(root / "proving" / f"{m}.py" for m in sorted(_prover_modules()))]
    assert {"obligations", "smtlib", "prove"} <= _prover_modules() and len(files) > 12
    unedited = cache_module.generator_fingerprint.__wrapped__()
    real = Path.read_bytes
    for edited in files:
        with monkeypatch.context() as m:
            m.setattr(Path, "read_bytes", lambda self, e=edited: real(self) + (b"# edited" if self == e else b""))
            assert cache_module.generator_fingerprint.__wrapped__() != unedited, edited


# -- the library's --json for kernels served by the cache -------------------------------------------


def _json_run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, list[str]]:
    capsys.readouterr()
    code = main(["prove", *argv, "--json"])
    out = capsys.readouterr().out
    lines = [ln.strip().rstrip(",") for ln in out.splitlines() if ln.startswith("    {")]
    return code, json.loads(out), lines


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_cached_kernel_is_its_fresh_certificate_and_says_it_is_cached(capsys, tmp_path, jobs) -> None:
    # r17 J01-J06 L01 L03 L08: the warm certificate is the cold one, byte for byte (the times are
    # the run's that proved it), and the kernel's line says from_cache
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "axpy.teil").write_text(AXPY)
    (lib / "square.teil").write_text(SQUARE_ONLY)
    argv = (str(lib), "--jobs", jobs, "--cache", str(tmp_path / "cache"), "--timeout", "30", "--param", "k=3")
    code, cold, _ = _json_run(capsys, *argv)
    assert code == 0 and [k["from_cache"] for k in cold["kernels"]] == [False, False]
    code, warm, warm_lines = _json_run(capsys, *argv)
    assert code == 0 and [k["from_cache"] for k in warm["kernels"]] == [True, True]
    assert [json.loads(ln) for ln in warm_lines] == warm["kernels"]  # one kernel per line
    for c, w in zip(cold["kernels"], warm["kernels"], strict=True):
        assert w["certificate"] == c["certificate"]
        assert {**w, "seconds": 0, "from_cache": None} == {**c, "seconds": 0, "from_cache": None}
    assert warm["kernels"][0]["certificate"]["symbolic"] == ["n"]
    assert warm["kernels"][0]["certificate"]["solver"]["timeout_s"] == 30.0
    # the same text under another name: served, and the certificate names the file proved now
    (tmp_path / "moved").mkdir()
    (tmp_path / "moved" / "renamed.teil").write_text(AXPY)
    code, moved, _ = _json_run(capsys, str(tmp_path / "moved"), *argv[1:])
    (k,) = moved["kernels"]
    assert k["from_cache"] is True and k["certificate"]["file"] == str(tmp_path / "moved" / "renamed.teil")


def test_a_kernel_whose_obligations_come_from_the_cache_but_not_its_entry_is_not_from_cache(capsys, tmp_path,
                                                                                             monkeypatch) -> None:
    # r17 L02: from_cache says the kernel's entry was served, not that some obligations were
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "axpy.teil").write_text(AXPY)
    argv = (str(lib), "--jobs", "1", "--cache", str(tmp_path / "cache"))
    _json_run(capsys, *argv)
    monkeypatch.setattr(cache_module, "generator_fingerprint", lambda: "an edited generator")
    _code, doc, _ = _json_run(capsys, *argv)
    assert doc["kernels"][0]["from_cache"] is False
    assert doc["summary"]["from_cache"] == doc["summary"]["obligations"] and doc["summary"]["kernels_from_cache"] == 0


def test_a_model_served_by_its_kernel_entry_says_from_cache(capsys, tmp_path) -> None:
    # r17 L04: a model is looked up after its translation, inside prove_cached
    pytest.importorskip("onnx")  # the onnx extra, which `make install` installs
    root = Path(__file__).resolve().parent.parent
    argv = (str(root / "examples" / "onnx" / "mlp.onnx"), "--jobs", "1", "--cache", str(tmp_path / "cache"))
    _json_run(capsys, *argv)
    code, doc, _ = _json_run(capsys, *argv)
    assert code == 0 and doc["kernels"][0]["from_cache"] is True and doc["summary"]["kernels_from_cache"] == 1


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_unreadable_kernel_with_the_cache_on_is_that_kernels_error(capsys, tmp_path, jobs) -> None:
    # r17 L05: the cache's lookup reads the file first; its error is the kernel's, not the run's
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "axpy.teil").write_text(AXPY)
    (lib / "latin1.teil").write_bytes(b"param n\n# caf\xe9\n")
    argv = (str(lib), "--jobs", jobs, "--cache", str(tmp_path / "cache"))
    for _ in range(2):  # cold, and with axpy's kernel entry present
        code, doc, _ = _json_run(capsys, *argv)
        by = {Path(k["file"]).name: k for k in doc["kernels"]}
        assert code == 2 and by["axpy.teil"]["status"] == "proved"
        assert by["latin1.teil"]["status"] == "error" and "latin1.teil" in by["latin1.teil"]["error"]


def test_a_warm_library_run_parses_nothing(tmp_path, monkeypatch) -> None:
    # r17 L06: the kernel entries a library run stores are the ones its lookup reads (by the file's text)
    from core_teil.lang import parser

    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "axpy.teil").write_text(AXPY)
    (lib / "square.teil").write_text(SQUARE_ONLY)
    batch.run([str(lib)], jobs=1, cache=tmp_path / "cache", params={"k": 3})
    monkeypatch.setattr(parser, "parse", lambda *a, **k: pytest.fail("parsed"))
    warm = batch.run([str(lib)], jobs=1, cache=tmp_path / "cache", params={"k": 3})
    assert warm.totals()["kernels_from_cache"] == 2 and warm.exit_code == 0


def test_each_kernel_is_one_line_even_for_a_name_with_a_line_separator(capsys, tmp_path) -> None:
    # r17 L07: a name with U+2028 (str.splitlines() splits there) stays on its kernel's line
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "a\u2028b.teil").write_text(AXPY)
    (lib / "caf\u00e9.teil").write_text(AXPY)
    code, doc, lines = _json_run(capsys, str(lib), "--jobs", "1", "--no-cache")
    assert code == 0 and [json.loads(ln) for ln in lines] == doc["kernels"]


def test_only_an_error_has_an_error_field(capsys, tmp_path) -> None:
    # r17 L09: a refuted kernel's table is its certificate, not an error
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "bad.teil").write_text(BAD)
    (lib / "axpy.teil").write_text(AXPY)
    code, doc, _ = _json_run(capsys, str(lib), "--jobs", "1", "--no-cache")
    by = {Path(k["file"]).name: k for k in doc["kernels"]}
    assert code == 1 and by["bad.teil"]["status"] == "refuted" and by["bad.teil"]["error"] is None
    assert by["axpy.teil"]["error"] is None


# -- bad inputs found by review r17 (findings 1-4 and 6): bad input with a message, or a cost to
# the cache and not to the proof; never exit 70, never a hang

AXPY_FILE = str(Path(__file__).resolve().parent.parent / "examples" / "axpy.teil")


def warm_entry(tmp_path: Path) -> Path:
    """The kernel entry a proof of axpy leaves in ``tmp_path / 'c'``."""
    assert main(["prove", AXPY_FILE, "--cache", str(tmp_path / "c")]) == 0
    (entry,) = (tmp_path / "c" / "v1" / "kernels").rglob("*.json")
    return entry


def test_a_key_that_is_not_utf8_is_a_key(tmp_path: Path) -> None:
    """Finding 1: the variable's bytes are the key (it was exit 70, UnicodeEncodeError)."""
    env = {**os.environ, "CORE_TEIL_CACHE_KEY": "x"}
    env_b = {k.encode(): v.encode() for k, v in env.items()}
    env_b[b"CORE_TEIL_CACHE_KEY"] = b"\xff\xfe" * 20
    code = "import sys; from core_teil.cli import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.run([sys.executable, "-c", code, "prove", AXPY_FILE, "--cache", str(tmp_path / "c")],
                         env=env_b, capture_output=True, timeout=300)  # type: ignore[arg-type]
    assert run.returncode == 0, run.stderr.decode()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "environb", {b"CORE_TEIL_CACHE_KEY": b"\xff\xfe" * 20})
        assert cache_module.secret_key() == b"\xff\xfe" * 20


def test_without_a_home_directory_the_cache_is_bad_input(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Finding 2: no HOME and no passwd entry (a container's --user) made platformdirs raise
    RuntimeError, exit 70; now the message says what to set."""
    import platformdirs

    def no_home(*args: object, **kwargs: object) -> str:
        raise RuntimeError("could not determine home directory")

    monkeypatch.setattr(platformdirs, "user_cache_dir", no_home)
    monkeypatch.setattr(platformdirs, "user_config_dir", no_home)
    with pytest.raises(TeilInputError, match="needs a home directory, and there is none: set HOME or XDG_CACHE_HOME"):
        cache_module.default_directory()
    monkeypatch.delenv("CORE_TEIL_CACHE_KEY")
    cache_module._key_file.cache_clear()
    try:
        with pytest.raises(TeilInputError, match="set HOME or XDG_CONFIG_HOME, or give CORE_TEIL_CACHE_KEY"):
            cache_module.secret_key()
    finally:
        cache_module._key_file.cache_clear()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_planted_as_an_entry_is_not_waited_on(tmp_path: Path) -> None:
    """Finding 3: opening a FIFO blocks until a writer comes; anyone who can write a shared
    cache could plant one.  The entry is now read only if it is a regular file."""
    entry = warm_entry(tmp_path)
    entry.unlink()
    os.mkfifo(entry)
    code = f"import sys; from core_teil.cli import main; sys.exit(main(['prove', {AXPY_FILE!r}, '--cache', " \
           f"{str(tmp_path / 'c')!r}]))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr.decode()


def test_an_endless_file_planted_as_an_entry_is_not_read_to_the_end(tmp_path: Path) -> None:
    """Finding 3: a symbolic link to /dev/zero was read until memory ran out; a link is not
    followed, and an entry larger than MAX_ENTRY_BYTES is not read whole."""
    entry = warm_entry(tmp_path)
    raw = entry.read_bytes()
    entry.unlink()
    entry.symlink_to("/dev/zero")
    assert cache_module._read_entry(str(entry)) is None
    entry.unlink()
    entry.write_bytes(raw)
    assert cache_module._read_entry(str(entry)) == raw
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cache_module, "MAX_ENTRY_BYTES", len(raw) - 1)
        assert cache_module._read_entry(str(entry)) is None
    assert main(["prove", AXPY_FILE, "--cache", str(tmp_path / "c")]) == 0


def test_a_key_file_too_short_says_how_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 4: the message said '(None)'."""
    monkeypatch.delenv("CORE_TEIL_CACHE_KEY")
    path = tmp_path / "xdg-config" / "core-teil" / "cache-key"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"abc")
    cache_module._key_file.cache_clear()
    with pytest.raises(TeilInputError, match=r"cannot make the proof cache's key \(too short to be a key: "
                                             r"3 bytes, at least 32\); set CORE_TEIL_CACHE_KEY or use --no-cache"):
        cache_module.secret_key()


def test_an_empty_cache_directory_is_the_default_for_a_file_as_for_a_library(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 6: ``prove FILE --cache ''`` wrote ./v1 into the current directory."""
    monkeypatch.chdir(tmp_path)
    assert main(["prove", AXPY_FILE, "--cache", ""]) == 0
    assert not (tmp_path / "v1").exists()
    assert list((tmp_path / "xdg-cache" / "core-teil" / "v1" / "kernels").rglob("*.json"))
    assert ProofCache(cache_module.default_directory()).stats.rejected == 0
