"""A review of the warm path (tests/test_cache_warm.py's changes): what its own tests left open.

Each test names the mutant of ``core_teil/proving/cache.py`` (or ``core_teil/__init__.py``) it
kills; each passes on the code as it is.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import core_teil
from core_teil import library as batch
from core_teil.proving.cache import ProofCache, solver_fields
from tests.cache_kit import AXPY, KEY, private_cache  # noqa: F401 -- private_cache is autouse


def proved_axpy(tmp_path: Path) -> tuple[ProofCache, Path, dict]:
    """AXPY proved through a library run: the cache, its kernel entry's path and the entry."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "axpy.teil").write_text(AXPY)
    assert batch.run([str(lib)], jobs=1, cache=tmp_path / "cache").exit_code == 0
    cache = ProofCache(tmp_path / "cache")
    path = Path(cache._path("kernels", cache.source_key(AXPY, {}, None, solver_fields("z3", None))))
    return cache, path, json.loads(path.read_text())


def warm(tmp_path: Path) -> dict[str, int]:
    return batch.run([str(tmp_path / "lib")], jobs=1, cache=tmp_path / "cache").totals()


def _obligation_keys(entry: dict) -> list[str]:
    return [k for k in entry["payload"]["obligations"] if k is not None]


def test_an_obligation_entry_replaced_by_a_directory_is_not_there(tmp_path: Path) -> None:
    # mutant: _present by os.path.exists (any file type) instead of S_ISREG
    cache, _, entry = proved_axpy(tmp_path)
    path = Path(cache._path("obligations", _obligation_keys(entry)[0]))
    path.unlink()
    path.mkdir()
    totals = warm(tmp_path)
    assert totals["kernels_from_cache"] == 0 and totals["solver_decided"] >= 1


def test_a_sealed_kernel_entry_naming_a_key_with_a_suffix_is_refused(tmp_path: Path) -> None:
    # mutant: _KEY.match (a key's prefix) instead of fullmatch: a sealed entry names keys, nothing else
    cache, _, entry = proved_axpy(tmp_path)
    key = _obligation_keys(entry)[0]
    real = Path(cache._path("obligations", key))
    shutil.copy(real, real.with_name(f"{key}x.json"))  # a file where the name with a suffix points
    real.unlink()
    payload = entry["payload"]
    payload["obligations"] = [f"{k}x" if k == key else k for k in payload["obligations"]]
    cache.write("kernels", entry["key"], payload)
    totals = warm(tmp_path)
    assert totals["kernels_from_cache"] == 0 and totals["cache_entries_rejected"] == 1
    # the control: the same entry naming the key itself (its entry back) is served
    shutil.copy(real.with_name(f"{key}x.json"), real)
    payload["obligations"] = [k[:64] if k else k for k in payload["obligations"]]
    cache.write("kernels", entry["key"], payload)
    assert warm(tmp_path)["kernels_from_cache"] == 1


def test_a_proofs_entry_that_says_not_ok_is_refused(tmp_path: Path) -> None:
    # mutant: a proof's entry served without its "ok"; no run writes ok false over proved verdicts
    cache, _, entry = proved_axpy(tmp_path)
    entry["payload"]["report"]["ok"] = False
    cache.write("kernels", entry["key"], entry["payload"])
    totals = warm(tmp_path)
    assert totals["kernels_from_cache"] == 0 and totals["cache_entries_rejected"] == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_planted_as_an_entry_is_absent_not_read(tmp_path: Path) -> None:
    # mutant: _read_entry without its regular-file check (it then reads the FIFO: nothing, "rejected")
    cache, path, _ = proved_axpy(tmp_path)
    path.unlink()
    os.mkfifo(path)
    before = cache.stats.rejected
    assert cache.read("kernels", path.stem) is None and cache.stats.rejected == before


def test_the_packages_lazy_names_are_listed_and_only_they_are_lazy() -> None:
    # mutants: __dir__ without the lazy names; __getattr__ answering None for any name
    assert {"prove", "equiv", "evaluate", "ops", "lower", "Program", "CheckedProgram", "Derivations",
            "Trace"} <= set(dir(core_teil))
    with pytest.raises(AttributeError, match="module 'core_teil' has no attribute 'no_such_name'"):
        core_teil.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        from core_teil import no_such_name  # noqa: F401


def test_the_first_str_of_a_program_in_a_fresh_process_is_its_text() -> None:
    # mutant: Program.__str__ left without its stub: the first str() fell back to the (stubbed)
    # repr, which installed the reprs and returned the one-line repr instead of the program's text
    import subprocess
    import sys

    code = (f"import core_teil as ct\np = ct.parse({AXPY!r}, 'a.teil')\n"
            "first = str(p)\nassert first == str(p) == ct.format(p).rstrip(), first\nprint(repr(p))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("<Program a.teil")
