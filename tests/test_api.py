"""The Python API of SPEC.md section 6, as `import core_teil as ct` users see it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import core_teil as ct

MATMUL = Path(__file__).resolve().parent.parent / "examples" / "matmul.teil"


def test_api_round_trip() -> None:
    p = ct.load(str(MATMUL))
    assert ct.parse(ct.format(p)) == p
    assert ct.check(p, {"l": 2, "m": 3, "n": 4}) == {"A": (2, 3), "B": (3, 4), "C": (2, 4)}
    assert ct.check(p) == {"A": ("l", "m"), "B": ("m", "n"), "C": ("l", "n")}
    assert ct.lower(p).dialect == "core"
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 4))
    expected = a @ b
    np.testing.assert_allclose(ct.evaluate(p, {"A": a, "B": b})["C"], expected)
    np.testing.assert_allclose(ct.evaluate(p, {"A": a, "B": b}, pad=4)["C"], expected)
    np.testing.assert_allclose(ct.compile(p, {"l": 2, "m": 3, "n": 4})(A=a, B=b)["C"], expected)


def test_prove_report_fields_and_no_shadowing() -> None:
    import core_teil.proving.prove  # noqa: F401 - importing the submodule must not replace ct.prove

    report = ct.prove(ct.load(str(MATMUL)))
    assert callable(ct.prove)
    assert report.ok
    for ob in report.obligations:
        assert ob.status in ("proved", "refuted", "unknown")
        assert ob.name and ob.lemma and ob.seconds >= 0
        assert ob.counterexample is None


def test_prove_refutes_the_tvm_kernel() -> None:
    report = ct.prove(ct.load(str(MATMUL.with_name("tvm_fig3a_bad.teil"))))
    assert not report.ok
    refuted = [ob for ob in report.obligations if ob.status == "refuted"]
    assert refuted and refuted[0].counterexample is not None


def test_errors_derive_from_teil_error_and_carry_a_location() -> None:
    with pytest.raises(ct.TeilError) as info:
        ct.parse("alloc A : [2]\nA = add A\n", "x.teil")
    assert info.value.span.file == "x.teil" and info.value.span.line == 2
    with pytest.raises(ct.TeilTypeError) as info2:
        ct.check(ct.parse("alloc A : [2]\nalloc B : [3]\nA = B\n"))
    assert info2.value.span.line == 3 and info2.value.rule == "OK-Stmt"
    assert issubclass(ct.TeilTypeError, ct.TeilError)
