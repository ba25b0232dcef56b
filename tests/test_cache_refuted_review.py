"""Review r17r of issue 17's cached refutations, the solver fields read without Z3 and the
package's import hook (h17x: fd39f43, 33f3e1c, 845f74e, 1151fa0).

Each test names the mutant it kills (applied alone, the test fails; without it, it passes), or is
one test that was a strict xfail for a bug of _AfterImport (a shared loader patched), now fixed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

import core_teil
from core_teil import library as batch
from core_teil.errors import TeilInputError
from core_teil.library import KernelStatus
from core_teil.proving import cache as cache_module
from core_teil.proving import limits
from core_teil.proving.cache import ProofCache, solver_fields
from tests.cache_kit import AXPY, BAD, KEY, private_cache  # noqa: F401 -- private_cache is autouse


def _package_dir() -> Path:
    return Path(core_teil.__file__).parent


# -- the import hook (core_teil/__init__.py: _AfterImport) ---------------------------------------------


def test_the_hook_leaves_meta_path_once_its_module_is_imported() -> None:
    # mutant: find_spec without sys.meta_path.remove(self) (the hook stays, fires on every reload)
    code = ("import sys, core_teil\n"
            "hooks = lambda: [type(f).__name__ for f in sys.meta_path if type(f).__name__ == '_AfterImport']\n"
            "print(hooks())\n"
            "import core_teil.lang.typing\n"
            "print(hooks())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['_AfterImport']", "[]"]


def test_the_hook_is_not_installed_for_a_module_already_imported() -> None:
    # mutant: install() always inserting a finder (it then never fires: the module is not found again)
    import core_teil.lang.typing as typing_module

    seen: list[object] = []
    before = list(sys.meta_path)
    core_teil._AfterImport.install("core_teil.lang.typing", seen.append)
    assert seen == [typing_module] and sys.meta_path == before


def test_the_package_imported_from_a_zip_still_types_a_program(tmp_path: Path) -> None:
    archive = tmp_path / "core_teil.zip"
    root = _package_dir()
    with zipfile.ZipFile(archive, "w") as z:
        for path in root.rglob("*.py"):
            z.write(path, Path("core_teil") / path.relative_to(root))
    code = ("import sys\n"
            f"sys.path.insert(0, {str(archive)!r})\n"
            "import core_teil\n"
            "assert core_teil.__file__.startswith(sys.path[0]), core_teil.__file__\n"
            "from core_teil.lang.typing import check_program\n"
            f"print(repr(check_program(core_teil.parse({AXPY!r}, 'a.teil')))[:40])\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-600:]
    assert run.stdout.startswith("<TypedProgram a.teil: a : [], x : [n]")


# -- the solver's limits without the solver (core_teil/proving/limits.py) --------------------------------


@pytest.mark.parametrize("timeout,rlimit", [
    (3.5e-7, 1),  # 1.75 units: truncated, not rounded
    (0.3, 1_500_000),
    (1.9999999, 9_999_999),  # truncated
    (858.993459, 4_294_967_295),  # exactly 2^32 - 1
    (858.9934592, 2**32 - 1),  # just over: capped
    (1e300, 2**32 - 1),
    (7, 35_000_000),  # an int
])
def test_rlimit_for_truncates_and_caps(timeout: float, rlimit: int) -> None:
    # mutants: round() for int() in rlimit_for; no min(Z3_UINT_MAX, ...) cap
    assert limits.rlimit_for(timeout) == rlimit
    assert solver_fields("z3", timeout).rlimit == rlimit  # the key's rlimit is the prover's


@pytest.mark.parametrize("timeout", [0, 0.0, -1, -1e-9, float("nan"), float("inf"), float("-inf"), True, False,
                                     "1", [1]])
def test_a_bad_timeout_is_refused_before_any_rlimit(timeout: object) -> None:
    # mutants: check_timeout without isfinite / without the bool check / with >= 0
    with pytest.raises(TeilInputError, match=r"timeout=.*: expected a finite number of seconds > 0"):
        limits.rlimit_for(timeout)  # type: ignore[arg-type]


# -- z3's version without z3 ---------------------------------------------------------------------------


def _wheel(tmp_path: Path, rows: list[str]) -> SimpleNamespace:
    site = tmp_path / "site"
    (site / "z3" / "lib").mkdir(parents=True)
    (site / "z3" / "__init__.py").write_text("")
    info = site / "z3_solver-9.8.7.6.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: z3-solver\nVersion: 9.8.7.6\n\n")
    (info / "RECORD").write_text("\n".join(rows) + "\n")
    return SimpleNamespace(origin=str(site / "z3" / "__init__.py"), site=site)


def test_a_wheel_without_z3s_library_does_not_name_the_library(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # mutant: `if "z3/__init__.py" not in record or not libs` without `or not libs`: a z3-solver
    # record that installed no libz3 says nothing of which library `import z3` loads
    import importlib.util

    wheel = _wheel(tmp_path, ["z3/__init__.py,sha256=x,0", "z3/z3core.py,sha256=y,0"])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: wheel if name == "z3" else None)
    monkeypatch.chdir(tmp_path)
    assert cache_module._z3_wheel_version() is None
    # the control: the same wheel with its library is read
    (wheel.site / "z3" / "lib" / "libz3.so").write_bytes(b"\0" * 3)
    (wheel.site / "z3_solver-9.8.7.6.dist-info" / "RECORD").write_text(
        "z3/__init__.py,sha256=x,0\nz3/lib/libz3.so,sha256=y,3\n")
    assert cache_module._z3_wheel_version() == "9.8.7"


# -- poisoned refutations, edited without the key ---------------------------------------------------------


def _entry(tmp_path: Path, timeout: float | None = None) -> Path:
    cache = ProofCache(tmp_path / "cache")
    return Path(cache._path("kernels", cache.source_key(BAD, {}, None, solver_fields("z3", timeout))))


@pytest.mark.parametrize("edit", [
    # the text the warm run would print: its verdict, and a counterexample's values
    (b"REFUTED", b"PROVED "),
    (b"m = 2, n = 1, h = 1", b"m = 1, n = 1, h = 1"),
    # the name and timeout the refutation was printed for
    (b'"file":"', b'"file":"/x'),
    (b'"timeout":null', b'"timeout":1.0'),
])
def test_a_refutations_text_or_scope_edited_without_the_key_is_refused(tmp_path: Path,
                                                                      edit: tuple[bytes, bytes]) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "bad.teil").write_text(BAD)
    (cold,) = batch.run([str(lib / "bad.teil")], jobs=1, cache=tmp_path / "cache").results
    path = _entry(tmp_path)
    raw = path.read_bytes()
    assert raw.count(edit[0]) >= 1, edit
    path.write_bytes(raw.replace(edit[0], edit[1], 1))
    run = batch.run([str(lib / "bad.teil")], jobs=1, cache=tmp_path / "cache")
    (r,) = run.results
    assert (r.status, r.exit_code, r.kernel_cached, run.totals()["cache_entries_rejected"]) == \
        (KernelStatus.REFUTED, 1, False, 1)
    assert r.text[r.text.index("ERROR:"):] == cold.text[cold.text.index("ERROR:"):]
    # proved again: the entry is written anew and served on the next run
    (again,) = batch.run([str(lib / "bad.teil")], jobs=1, cache=tmp_path / "cache").results
    assert again.kernel_cached and again.text == r.text  # the run that proved it again stored it


def test_a_served_refutation_fails_the_junit_report_as_the_cold_one(tmp_path: Path) -> None:
    # a refutation served from the cache must fail CI as the cold run did: --junit and --json
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "bad.teil").write_text(BAD)
    (lib / "axpy.teil").write_text(AXPY)
    out = []
    for _ in range(2):
        s = batch.run([str(lib)], jobs=1, cache=tmp_path / "cache")
        out.append((s.exit_code, s.junit().decode(), json.loads(batch.dumps(s))["summary"]))
    (cold_code, cold_xml, cold_sum), (warm_code, warm_xml, warm_sum) = out
    assert cold_code == warm_code == 1 and warm_sum["kernels_from_cache"] == 2
    timeless = [re.sub(r'time="[0-9.]+"', "", xml) for xml in (cold_xml, warm_xml)]
    assert timeless[0] == timeless[1] and 'failures="2"' in warm_xml
    keep = ("refuted", "proved", "obligations_refuted", "obligations_proved", "exit_code")
    assert {k: warm_sum[k] for k in keep} == {k: cold_sum[k] for k in keep} == \
        {"refuted": 1, "proved": 1, "obligations_refuted": 2, "obligations_proved": cold_sum["obligations_proved"],
         "exit_code": 1}


def test_the_entry_says_where_it_was_printed(tmp_path: Path) -> None:
    # the stored scope of a refutation: the file and timeout it was printed for, nothing else
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "bad.teil").write_text(BAD)
    batch.run([str(lib / "bad.teil")], jobs=1, timeout=2.0, cache=tmp_path / "cache")
    payload = json.loads(_entry(tmp_path, 2.0).read_text())["payload"]
    ref = payload["refutation"]
    assert (ref["file"], ref["timeout"]) == (str(lib / "bad.teil"), 2.0)
    assert set(ref) == {"certificate", "file", "timeout", "text", "excerpts"}
    assert os.path.basename(_entry(tmp_path, 2.0)) != os.path.basename(_entry(tmp_path, None))


def test_two_complete_wheel_records_name_no_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # mutant: `if not infos` for `if len(infos) != 1` (the first record listed wins); test_cache_refuted's
    # second record is an empty directory, so whether it kills depends on os.listdir's order
    import importlib.util

    wheel = _wheel(tmp_path, ["z3/__init__.py,sha256=x,0", "z3/lib/libz3.so,sha256=y,3"])
    (wheel.site / "z3" / "lib" / "libz3.so").write_bytes(b"\0" * 3)
    other = wheel.site / "z3_solver-1.2.3.4.dist-info"
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.4\nName: z3-solver\nVersion: 1.2.3.4\n\n")
    (other / "RECORD").write_text("z3/__init__.py,sha256=x,0\nz3/lib/libz3.so,sha256=y,3\n")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: wheel if name == "z3" else None)
    monkeypatch.chdir(tmp_path)
    assert cache_module._z3_wheel_version() is None
    other.joinpath("RECORD").unlink()
    other.joinpath("METADATA").unlink()
    other.rmdir()
    assert cache_module._z3_wheel_version() == "9.8.7"  # the control


def test_a_refutation_served_with_a_timeout_is_the_cold_certificate(tmp_path: Path) -> None:
    # mutant: served_refutation's "timeout_s" not the run's (every other warm test runs without one)
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "bad.teil").write_text(BAD)
    runs = [batch.run([str(lib / "bad.teil")], jobs=1, timeout=2.0, cache=tmp_path / "cache").results[0]
            for _ in range(2)]
    cold, warm = runs
    assert not cold.kernel_cached and warm.kernel_cached
    assert warm.certificate is not None and warm.certificate["solver"]["timeout_s"] == 2.0
    assert json.dumps(warm.certificate) == json.dumps(cold.certificate) and warm.text == cold.text
    assert "timeout 2 s" in warm.text
