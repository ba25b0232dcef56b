"""Differential fuzzing r25 (native engine against ct.evaluate): reproducers that fail today.

An allocation that is not an ``input`` may still be given an initial value (docs/decisions.md,
"Running": "*any* allocation may be given an initial value: a declaration carries a single
qualifier, so an ``output`` that accumulates (``acc = add acc x``) has no other way in").  The
reference engine and the native plan (``CORE_TEIL_CJIT=0``) read such a value; the compiled C
(cjit) does not: emit-c's C takes only ``program.inputs()`` as arguments, and
``cjit.CKernel.run`` drops every other supplied array without a word, so the C reads the
allocation as never supplied (•, NaN).  Unpadded and padded, on one thread and in chunks, and
with the default ``MIN_WORK`` (a kernel of 70000 elements compiles on its own).  The same calls with
``CORE_TEIL_CJIT=0`` (the plan) give ct.evaluate's results.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import core_teil as ct
from core_teil.native import cjit
from core_teil.native import engine as native

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine")

ACC = "param E\ninput alloc X : [E]\noutput alloc Y : [E]\nY = add Y X\n"
UNQUALIFIED = ("lang full\nparam E\nalloc X0 : [E, 2]\ninput alloc W1 : []\noutput alloc Y0 : [E]\n"
               "Y0 = mul W1 (proj 2 1 X0)\n")
UNWRITTEN_OUTPUT = "param E\ninput alloc X : [E]\noutput alloc Y : [E]\noutput alloc Z : [E]\nY = mul X X\n"


@pytest.fixture
def private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv(cjit.ENV_DIR, str(tmp_path))
    monkeypatch.delenv(cjit.ENV_SWITCH, raising=False)


def same(x: np.ndarray, y: np.ndarray) -> bool:
    return x.shape == y.shape and bool(np.array_equal(x, y, equal_nan=True))


def test_an_accumulating_output_reads_its_initial_value_in_the_c(private_cache):
    # default MIN_WORK: 70000 elements are worth a compile, so the C runs; it returns NaN everywhere
    p = ct.parse(ACC)
    params = {"E": 70000}
    inputs = {"X": np.ones(70000), "Y": np.full(70000, 5.0)}
    want = ct.evaluate(p, inputs, params)["Y"]
    assert np.all(want == 6.0)
    kernel = ct.compile(p, params)
    assert cjit.why_not(kernel) is None
    got = kernel(**inputs)["Y"]
    assert same(got, want), f"native C: {got[:4]} ..., ct.evaluate: {want[:4]} ..."


@pytest.mark.parametrize("pad", [None, 2, 8])
@pytest.mark.parametrize("threads", [1, 2])
def test_an_unqualified_allocation_given_a_value_is_read_by_the_c(private_cache, monkeypatch, pad, threads):
    # X0 is neither input nor output; supplied, the reference reads it; the C reads NaN
    from core_teil.native import planner

    monkeypatch.setattr(cjit, "MIN_WORK", 0)
    monkeypatch.setattr(native._native, "openmp_threads", lambda: threads)
    monkeypatch.setattr(planner, "PARALLEL_MIN_WORK", 1)
    p = ct.parse(UNQUALIFIED)
    params = {"E": 5}
    inputs = {"X0": np.arange(10.0).reshape(5, 2) + 1.0, "W1": np.array(2.0)}
    want = ct.evaluate(p, inputs, params, pad)["Y0"]
    assert np.array_equal(want, [2.0, 6.0, 10.0, 14.0, 18.0])
    kernel = ct.compile(p, params, pad)
    assert cjit.why_not(kernel) is None
    got = kernel(**inputs)["Y0"]
    assert same(got, want), f"native C: {got}, ct.evaluate: {want}"


@pytest.mark.parametrize("pad", [None, 4])
def test_an_unwritten_output_given_a_value_returns_it_from_the_c(private_cache, monkeypatch, pad):
    # Z is an output no statement writes: its initial value is its result (ct.evaluate); the C gives NaN
    monkeypatch.setattr(cjit, "MIN_WORK", 0)
    monkeypatch.setattr(native._native, "openmp_threads", lambda: 1)
    p = ct.parse(UNWRITTEN_OUTPUT)
    params = {"E": 6}
    inputs = {"X": np.arange(6.0), "Z": np.full(6, 7.0)}
    want = ct.evaluate(p, inputs, params, pad)
    assert np.array_equal(want["Z"], np.full(6, 7.0))
    kernel = ct.compile(p, params, pad)
    assert cjit.why_not(kernel) is None
    got = kernel(**inputs)
    assert same(got["Y"], want["Y"])
    assert same(got["Z"], want["Z"]), f"native C: {got['Z']}, ct.evaluate: {want['Z']}"
