"""``core-teil prove --scheduler ADDRESS`` (issue 17, item 3): the same library proved on a Dask
cluster -- here a ``LocalCluster`` of two worker processes that the test starts (skipped, with
the reason, only if the sandbox cannot start one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core_teil.cli import main
from tests.cache_kit import AXPY, BAD, private_cache  # noqa: F401 -- autouse; the workers inherit its environment

distributed = pytest.importorskip("distributed")

MATMUL = "lang full\nparam l, m, n\ninput alloc A : [l, m]\ninput alloc B : [m, n]\noutput alloc C : [l, n]\n" \
         "C = red 2 (diag 2 3 (prod A B))\n"


@pytest.fixture(scope="module")
def cluster():
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)
    try:
        c = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                     silence_logs=logging.ERROR)
    except Exception as exc:  # no sockets or no processes in this sandbox
        pytest.skip(f"a LocalCluster cannot start here: {type(exc).__name__}: {exc}")
    try:
        yield c
    finally:
        c.close()


def test_prove_on_a_local_cluster_of_two_worker_processes(capsys, tmp_path, cluster, monkeypatch) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    for name, text in (("axpy", AXPY), ("matmul", MATMUL), ("bad", BAD)):
        (lib / f"{name}.teil").write_text(text)
    cache = tmp_path / "cache"
    code = main(["prove", str(lib), "--scheduler", cluster.scheduler_address, "--cache", str(cache), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    status = {Path(k["file"]).name: k["status"] for k in doc["kernels"]}
    assert status == {"axpy.teil": "proved", "bad.teil": "refuted", "matmul.teil": "proved"}
    s = doc["summary"]
    assert s["where"].startswith("dask ") and s["solver_decided"] > 0
    # the workers (other processes) proved them: the cache they wrote serves this process now
    code = main(["prove", str(lib), "--scheduler", cluster.scheduler_address, "--cache", str(cache), "--json"])
    s = json.loads(capsys.readouterr().out)["summary"]
    assert code == 1 and s["kernels_from_cache"] == 3  # the refutation too (tests/test_cache_refuted.py)
    with distributed.Client(cluster.scheduler_address) as client:
        assert len(client.scheduler_info()["workers"]) == 2


def test_an_address_with_no_scheduler_is_bad_input(capsys, tmp_path) -> None:
    f = tmp_path / "axpy.teil"
    f.write_text(AXPY)
    code = main(["prove", str(f), "--scheduler", "tcp://127.0.0.1:9", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2 and "--scheduler tcp://127.0.0.1:9" in err and "Traceback" not in err


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:notaport", "127.0.0.1:99999"])
def test_an_address_that_is_no_address_is_bad_input(capsys, tmp_path, address) -> None:
    # reviewer rS: reading the port raised ValueError, which left the CLI with exit 70
    f = tmp_path / "axpy.teil"
    f.write_text(AXPY)
    code = main(["prove", str(f), "--scheduler", address, "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2 and "not an address of a Dask scheduler" in err and "internal error" not in err
