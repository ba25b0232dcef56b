"""Review of CHUNKS_PER_THREAD, OPENBLAS_THREAD_TIMEOUT and the answer parser's chain rule:
tests that kill the mutants the suite let survive (see the review's table), and two faults
the review found, fixed."""

from __future__ import annotations

import itertools
import shutil
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from core_teil.native import cjit
from tests.test_cjit_review import ROOT, cache, chunks_of, inputs_for, small, the_c, threads  # noqa: F401

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine")


def _load(name: str) -> ct.Program:
    return ct.load(str(ROOT / "examples" / name))


def _spy_chunks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, list[tuple[int, int]]]]:
    seen: list[tuple[Any, list[tuple[int, int]]]] = []
    real = cjit._chunks
    monkeypatch.setattr(cjit, "_chunks", lambda *a: seen.append((a, real(*a))) or seen[-1][1])
    return seen


# --------------------------------------------------------------------------
# cjit: several chunks only on several threads
# --------------------------------------------------------------------------


@needs_cc
def test_one_thread_runs_the_batch_as_one_chunk_when_staged(small, monkeypatch):  # noqa: F811 (the fixture)
    # mutant: teams * CHUNKS_PER_THREAD chunks on one thread too (four serial calls instead of one;
    # the staging cuts it into pieces of STAGE_BYTES anyway).  Pad 8 rounds m = 2, n = 3 up: the
    # inputs are staged, and the batch is kept on one thread (Batch.single)
    threads(monkeypatch, 1)
    p, params = _load("interp.teil"), {"E": 20, "m": 2, "n": 3}
    kernel = ct.compile(p, params, 8)
    ck = the_c(kernel)
    assert ck.batch is not None and ck.batch.single
    seen = _spy_chunks(monkeypatch)
    x = inputs_for(p, params, 3)
    assert np.array_equal(kernel(**x)["v"], ct.evaluate(p, x, params, 8)["v"])
    assert [cuts for _, cuts in seen] == [[(0, 20)]]


@needs_cc
def test_a_team_kernel_run_on_one_thread_is_one_chunk(small, monkeypatch):  # noqa: F811 (the fixture)
    # compiled for two threads, run when OpenMP has one: teams == 1, one call of the C
    threads(monkeypatch, 2)
    p, params = _load("interp.teil"), {"E": 20, "m": 2, "n": 3}
    kernel = ct.compile(p, params)
    assert the_c(kernel).batch is not None and not the_c(kernel).batch.single
    threads(monkeypatch, 1)
    calls = chunks_of(monkeypatch)
    x = inputs_for(p, params, 4)
    assert np.array_equal(kernel(**x)["v"], ct.evaluate(p, x, params)["v"])
    assert calls == [(0, 20)]


def test_chunks_never_outnumber_the_batch_indices() -> None:
    # why dropping min(b.extent, ...) is equivalent: _chunks keeps each cut once
    for extent in range(1, 30):
        for teams in range(1, 3 * extent):
            for pad in (None, 2, 4, 8):
                cuts = cjit._chunks(extent, teams, pad)
                assert cuts[0][0] == 0 and cuts[-1][1] == extent and len(cuts) <= min(extent, teams)
                assert all(hi == lo2 and lo2 % (pad or 1) == 0 for (_, hi), (lo2, _) in itertools.pairwise(cuts))
                assert cuts == cjit._chunks(extent, min(extent, teams), pad) or teams > extent


# --------------------------------------------------------------------------
# OPENBLAS_THREAD_TIMEOUT: set before numpy loads
# --------------------------------------------------------------------------


def test_numpy_loads_with_the_short_openblas_polling() -> None:
    # what counts is the environment when numpy (and its OpenBLAS) loads, not after
    import os

    code = ("import os, sys\n"
            "seen = []\n"
            "class Hook:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'numpy' and not seen:\n"
            "            seen.append(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))\n"
            "        return None\n"
            "sys.meta_path.insert(0, Hook())\n"
            "import core_teil\n"
            "import core_teil.native.engine\n"
            "print(seen)\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['20']"


# --------------------------------------------------------------------------
# answers: the chain rule's depth, its operators, the answer as messages show it
# --------------------------------------------------------------------------


def test_a_chain_gives_its_depth_back_after_it() -> None:
    # mutant: chain leaves self.depth raised by its operators; then the products of a sum add up
    # (60 products of two factors were refused).  99 operators of the sum reach the bound
    from core_teil.teach.answers import MAX_TERM_DEPTH, parse_term

    assert MAX_TERM_DEPTH == 100
    parse_term(" + ".join(["C[i] · C[i]"] * 60))
    parse_term(" - ".join(["C[i] / C[i]"] * 99))
    with pytest.raises(ct.TeilInputError, match="nests deeper than 100 levels"):
        parse_term(" - ".join(["C[i] / C[i]"] * 100))


def test_each_operator_builds_its_own_node() -> None:
    from core_teil.teach.answers import BinOp, parse_term

    t = parse_term("C[i] / C[i] - C[i] · C[i] + C[i] * C[i]")
    assert isinstance(t, BinOp) and t.op == "add" and t.b.op == "mul"
    assert t.a.op == "sub" and t.a.a.op == "div" and t.a.b.op == "mul"


def test_a_long_answer_is_cut_in_the_message_and_a_short_one_is_not() -> None:
    from core_teil.teach.answers import parse_term

    long = "C[i] + " * 100 + "+"
    with pytest.raises(ct.TeilInputError) as info:
        parse_term(long)
    assert repr(long[:60]) + "...:" in str(info.value) and len(str(info.value)) < 200
    short = "C[i] + +"
    with pytest.raises(ct.TeilInputError) as info:
        parse_term(short)
    assert repr(short) + ":" in str(info.value)


# --------------------------------------------------------------------------
# Faults found, fixed
# --------------------------------------------------------------------------


def test_chains_nested_in_parentheses_are_a_teil_error_or_a_verdict() -> None:
    script = ("from core_teil.errors import TeilError\n"
              "from core_teil.teach.exercises import check_answer\n"
              "x = 'C[i]'\n"
              "for _ in range(30):\n"
              "    x = '(' + x + ' - C[i]' * 60 + ')'\n"
              "try:\n    check_answer('3.1', x)\nexcept TeilError:\n    pass\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-300:]


def test_every_message_on_a_long_answer_is_cut() -> None:
    from core_teil.teach.answers import parse_term

    for text in ("C[i] " * 20_000, "C[i] + " * 2_000 + "$"):
        with pytest.raises(ct.TeilInputError) as info:
            parse_term(text)
        assert len(str(info.value)) < 300, (len(text), len(str(info.value)))
