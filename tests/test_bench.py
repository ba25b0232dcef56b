"""The verdicts of ``make bench`` (bench.targets) on made-up rows: each one can say no."""

from __future__ import annotations

import bench
from bench import Row

NAMES = ["matmul 1024", "transposed matmul 1024", "interp E=50000 n=7", "helm E=5000 n=13"]


def _rows(native_ms: dict[str, float], einsum_ms: float = 100.0) -> list[Row]:
    rows = []
    for name in NAMES:
        ms = {"native": native_ms.get(name, 10.0), "native pad 8": 50.0, "numpy.einsum": einsum_ms,
              "opt_einsum": 90.0, "hand numpy": 80.0, "memory floor": 5.0}
        vs = {m: einsum_ms / ms[m] for m in ("native", "native pad 8", "opt_einsum", "hand numpy")}
        peaks = {f"peak_{m}": 1.0 for m in ("native", "native pad 8", "numpy.einsum", "hand numpy")}
        rows.append(Row(name, ms, 1.0, vs, True, extra={**peaks, "rounds": 9, "rounds native faster": 9}))
    return rows


def verdicts(rows: list[Row]) -> dict[str, bool]:
    return {t.split(" (")[0]: ok for t, ok in bench.targets(rows)}


def test_all_met_when_native_is_fast_everywhere() -> None:
    assert all(verdicts(_rows({})).values())


def test_one_slower_kernel_misses_and_is_named() -> None:
    rows = _rows({"transposed matmul 1024": 101.0})
    assert not verdicts(rows)["no kernel slower than numpy.einsum"]
    (line,) = [t for t, _ in bench.targets(rows) if t.startswith("no kernel slower")]
    assert "transposed matmul 1024, 0.990x" in line


def test_speedup_and_memory_targets_say_no() -> None:
    assert not verdicts(_rows({"interp E=50000 n=7": 34.0}))["interp E=50000 n=7 >= 3x numpy.einsum"]
    assert not verdicts(_rows({"helm E=5000 n=13": 51.0}))["helm E=5000 n=13 >= 2x numpy.einsum"]
    assert not verdicts(_rows({"matmul 1024": 101.0}))["matmul 1024 >= 0.8x numpy matmul"]
    rows = _rows({})
    rows[2].extra["peak_native"] = 1.31
    assert not verdicts(rows)["interp peak memory <= 1.3x inputs+outputs"]
    rows = _rows({})
    rows[0].agree = False
    assert not verdicts(rows)["native agrees with numpy"]


def test_table_shows_the_rounds_won() -> None:
    assert " 9/9 " in bench.table(_rows({}))


def test_cross_core_prints_a_row_per_state_it_saw(capsys) -> None:
    # python -m bench cross-core: one round at least (the loop runs while time is left), the
    # native kernel checked against the hand-written numpy before anything is timed
    from bench.cross_core import main

    assert main(["0.01"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("mttkrp 250^3, medians in ms per state")
    rows = [line.split() for line in out[2:]]
    assert len(rows) == 1 and rows[0][0] in ("fast", "slow") and rows[0][1] == "1"
    assert len(rows[0]) == 2 + 6
