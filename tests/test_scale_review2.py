"""Review rS, second round (issue 17): what a user of ``core-teil prove PATH...`` and of
``kernel.blockwise`` sees, for the mutants of core_teil/library.py and
core_teil/native/blockwise.py that survived the first suite (ids from the review's table)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import core_teil as ct
from core_teil import library as batch
from core_teil.cli import main
from core_teil.library import KernelResult, KernelStatus, Summary, collect
from core_teil.native.blockwise import BatchStatus, BlockwiseRefused, batch_dimension

ROOT = Path(__file__).resolve().parent.parent

AXPY = "param n\ninput alloc a : []\ninput alloc x : [n]\ninput alloc y : [n]\noutput alloc z : [n]\n" \
       "z = add (mul a x) y\n"
# an undeclared name: refuted without a solver (fast), exit 1
UNDECLARED = "param n\nalloc x : [n]\nx = y\n"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never the user's cache directory or key."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("CORE_TEIL_CACHE_KEY", "k" * 64)


def prove(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["prove", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def files(json_out: str) -> list[str]:
    return [Path(k["file"]).name for k in json.loads(json_out)["kernels"]]


# -- which files (L09, L11) ---------------------------------------------------------


def test_a_directory_finds_kernels_whatever_the_case_of_their_suffix(capsys, tmp_path) -> None:
    # L09: the suffix test of a directory search is case-insensitive, as a single FILE's is
    lib = tmp_path / "lib"
    (lib / "sub").mkdir(parents=True)
    (lib / "sub" / "AXPY.TEIL").write_text(AXPY)
    (lib / "notes.txt").write_text("not a kernel")
    assert collect([str(lib)]) == [str(lib / "sub" / "AXPY.TEIL")]
    code, out, err = prove(capsys, str(lib), "--jobs", "1", "--no-cache")
    assert code == 0, err
    assert "1 kernels: 1 proved, 0 refuted, 0 unknown, 0 errors" in out


def test_a_glob_names_files_not_the_directories_it_matches(capsys, tmp_path) -> None:
    # L11: a directory called old.teil is not a kernel (reading it would be an error, exit 2)
    lib = tmp_path / "lib"
    (lib / "old.teil").mkdir(parents=True)
    (lib / "axpy.teil").write_text(AXPY)
    pattern = str(lib / "*.teil")
    assert collect([pattern]) == [str(lib / "axpy.teil")]
    code, out, err = prove(capsys, pattern, "--jobs", "1", "--no-cache", "--json")
    assert code == 0, out + err
    assert files(out) == ["axpy.teil"]


# -- errors inside one kernel (L14, L25) --------------------------------------------


def test_a_bug_in_one_kernel_is_an_internal_error_70_and_the_others_are_proved(capsys, tmp_path, monkeypatch) -> None:
    # L14: an unexpected exception is core-teil's bug (70), never the user's bad input (2)
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "axpy.teil").write_text(AXPY)
    (lib / "buggy.teil").write_text(AXPY)
    real = batch._read

    def read(path: str):
        if path.endswith("buggy.teil"):
            raise ZeroDivisionError("simulated bug")
        return real(path)

    monkeypatch.setattr(batch, "_read", read)
    code, out, _ = prove(capsys, str(lib), "--jobs", "1", "--no-cache", "--json")
    assert code == 70
    by = {Path(k["file"]).name: k for k in json.loads(out)["kernels"]}
    assert by["axpy.teil"]["status"] == "proved" and by["axpy.teil"]["exit_code"] == 0
    buggy = by["buggy.teil"]
    assert buggy["status"] == "error" and buggy["exit_code"] == 70
    assert buggy["error"] == (f"{lib / 'buggy.teil'}: internal error: ZeroDivisionError: simulated bug (this is a "
                              f"bug in core-teil; prove this file alone with CORE_TEIL_DEBUG=1 for a traceback)")
    assert json.loads(out)["summary"]["exit_code"] == 70


def test_a_kernel_too_deep_for_the_interpreter_is_bad_input_2(capsys, tmp_path, monkeypatch) -> None:
    # L25: the parser bounds nesting (lang.parser.MAX_DEPTH), so no .teil file found here reaches a
    # RecursionError (a 2,000-statement chain and 199 levels of parentheses prove); the guard is
    # for what the bound does not cover, and says what the CLI's single-file path says: exit 2
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "axpy.teil").write_text(AXPY)
    (lib / "deep.teil").write_text(AXPY)
    real = batch._read

    def read(path: str):
        if path.endswith("deep.teil"):
            raise RecursionError("maximum recursion depth exceeded")
        return real(path)

    monkeypatch.setattr(batch, "_read", read)
    code, out, _ = prove(capsys, str(lib), "--jobs", "1", "--no-cache", "--json")
    assert code == 2
    by = {Path(k["file"]).name: k for k in json.loads(out)["kernels"]}
    assert by["deep.teil"]["exit_code"] == 2 and by["axpy.teil"]["exit_code"] == 0
    assert by["deep.teil"]["error"] == f"{lib / 'deep.teil'}: the program is nested too deeply for this implementation"


# -- a worker that dies (L15) -------------------------------------------------------

# Installed through PYTHONPATH in a child process and so in its forkserver and pool workers:
# proving a kernel named die.teil kills the worker as the kernel's out-of-memory killer would.
SITECUSTOMIZE = """\
import os
import signal

import core_teil.library as lib

_real = lib._prove_one


def _prove_one(task):
    if task.path.endswith("die.teil"):
        os.kill(os.getpid(), signal.SIGKILL)
    return _real(task)


lib._prove_one = _prove_one
"""

CHILD = """\
import json, sys
from core_teil import library as batch
from core_teil.cli import main
batch.IN_PROCESS = 0  # a pool even for two kernels
sys.exit(main(["prove", *sys.argv[1:], "--jobs", "2", "--no-cache", "--json"]))
"""


def test_a_worker_killed_while_proving_is_an_internal_error_70_of_that_kernel_alone(tmp_path) -> None:
    # L15: the dead worker's kernel is an internal error (70), never exit 0.  And (found here) the
    # kernels the broken pool failed with it are proved again, each in a process of its own: on
    # main every kernel of the library was reported as "the worker process failed"
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    lib = tmp_path / "lib"
    lib.mkdir()
    names = ["a.teil", "b.teil", "die.teil", "e.teil", "f.teil"]
    for name in names:
        (lib / name).write_text(UNDECLARED if name == "b.teil" else AXPY)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)])}
    r = subprocess.run([sys.executable, "-c", CHILD, str(lib)], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 70, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert [(Path(k["file"]).name, k["status"], k["exit_code"]) for k in doc["kernels"]] == \
        [("a.teil", "proved", 0), ("b.teil", "refuted", 1), ("die.teil", "error", 70), ("e.teil", "proved", 0),
         ("f.teil", "proved", 0)]
    die = doc["kernels"][2]
    assert die["error"] == (f"{lib / 'die.teil'}: the worker process failed: BrokenProcessPool: A process in the "
                            f"process pool was terminated abruptly while the future was running or pending.")
    s = doc["summary"]
    assert (s["exit_code"], s["where"], s["proved"], s["refuted"], s["error"]) == (70, "2 processes", 3, 1, 1)
    assert "Traceback" not in r.stderr


# -- the order of the results (L23, L16) --------------------------------------------


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_come_in_the_order_of_the_paths_given(capsys, tmp_path, monkeypatch, jobs) -> None:
    # L23: the lines, --json's kernels and the results follow the command line, not the file names
    monkeypatch.setattr(batch, "IN_PROCESS", 0)  # jobs=2: a pool, whose kernels finish in any order
    lib = tmp_path / "lib"
    lib.mkdir()
    names = ["c.teil", "a.teil", "d.teil", "b.teil"]
    for name in names:
        (lib / name).write_text(UNDECLARED if name == "a.teil" else AXPY)
    paths = [str(lib / n) for n in names]
    code, out, _ = prove(capsys, *paths, "--jobs", str(jobs), "--no-cache", "--json")
    assert code == 1 and files(out) == names
    code, out, _ = prove(capsys, *paths, "--jobs", str(jobs), "--no-cache")
    lines = [ln.split()[1] for ln in out.splitlines()[:4]]
    assert code == 1 and lines == paths
    assert [Path(r.path).name for r in batch.run(paths, jobs=jobs).results] == names


def test_dask_results_belong_to_their_kernels(capsys, tmp_path) -> None:
    # L16: one worker thread and 16 kernels make Dask tasks of two kernels each; the results of a
    # task are the results of its kernels, in order
    distributed = pytest.importorskip("distributed")
    import logging

    lib = tmp_path / "lib"
    lib.mkdir()
    names = [f"k{i:02d}.teil" for i in range(16)]
    for i, name in enumerate(names):
        (lib / name).write_text(UNDECLARED if i % 2 else AXPY)
    try:
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                           dashboard_address=None, silence_logs=logging.ERROR)
    except Exception as exc:  # no sockets in this sandbox
        pytest.skip(f"a LocalCluster cannot start here: {type(exc).__name__}: {exc}")
    with cluster:
        code, out, _ = prove(capsys, str(lib), "--scheduler", cluster.scheduler_address, "--no-cache", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["summary"]["where"].startswith("dask ")
    assert files(out) == names
    assert [k["status"] for k in doc["kernels"]] == ["proved", "refuted"] * 8


# -- the summary (L20) --------------------------------------------------------------


def test_the_summary_names_the_slowest_kernels_slowest_first() -> None:
    seconds = {"a.teil": 0.5, "b.teil": 3.0, "c.teil": 0.25, "d.teil": 2.0, "e.teil": 1.0, "f.teil": 4.0}
    results = tuple(KernelResult(name, KernelStatus.PROVED, 0, s) for name, s in seconds.items())
    summary = Summary(results, 11.0, 1, "1 process", None)
    slowest = "slowest: f.teil 4.00 s, b.teil 3.00 s, d.teil 2.00 s, e.teil 1.00 s, a.teil 0.50 s"
    assert slowest in summary.render().splitlines()
    assert [k["file"] for k in summary.to_json()["summary"]["slowest"]] == \
        ["f.teil", "b.teil", "d.teil", "e.teil", "a.teil"]


# -- blockwise (B12, B14, B16) ------------------------------------------------------


def test_an_output_without_the_batch_dimension_is_refused() -> None:
    # B12: s is never written, so no statement test sees it; blocks could not be concatenated
    p = ct.parse("param E, n\ninput alloc u : [E]\noutput alloc s : [n]\noutput alloc v : [E]\nv = add u u\n")
    a = batch_dimension(p)
    assert a.status is BatchStatus.REFUSED and a.param is None
    assert a.reason() == "E: output s has no E dimension, so blocks cannot be concatenated."
    pytest.importorskip("dask.array")
    with pytest.raises(BlockwiseRefused, match="output s has no E dimension"):
        ct.compile(p, {"n": 2}).blockwise(2, u=np.ones(4))


def test_a_statement_writing_a_broadcast_allocation_is_refused() -> None:
    # B14: with the batch named, t (no E) is a candidate's broadcast allocation that a block would write
    p = ct.parse("param E, n\ninput alloc u : [E]\ninput alloc w : [n]\nalloc t : [n]\noutput alloc v : [E]\n"
                 "t = add w w\nv = add u u\n")
    a = batch_dimension(p, batch="E")
    assert a.status is BatchStatus.REFUSED and a.param is None
    assert a.reason() == "E: statement 1 writes t, which has no E dimension."
    assert batch_dimension(p).reason() == "no shape parameter occurs in the shape of every statement's target"


def test_blocks_of_one_program_at_two_sizes_use_a_kernel_for_each() -> None:
    # B16: the kernels the blocks run are kept per process by program, parameters and pad
    pytest.importorskip("dask.array")
    interp = ct.load(str(ROOT / "examples" / "interp.teil"))
    k = ct.compile(interp)
    rng = np.random.default_rng(16)
    for m, n in ((2, 3), (3, 4)):
        A, u = rng.standard_normal((m, n)), rng.standard_normal((5, n, n, n))
        got = k.blockwise(2, A=A, u=u)["v"].compute()
        np.testing.assert_allclose(got, k(A=A, u=u)["v"], rtol=1e-12, atol=1e-12)

