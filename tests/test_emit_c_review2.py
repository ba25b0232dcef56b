"""``core-teil emit-c`` (issue 15), second review (reviewer rS's surviving mutants).

Each test pins what a user of an emitted kernel sees, where a mutant of
``core_teil/native/emit_c.py`` changed it without any other test noticing:

* the emitter's own in-bounds check (:func:`~core_teil.native.emit_c.check_accesses`)
  refuses an emitter whose loops leave an array, for every index of every access and
  whatever loop it was checked for before (E11, E12): exit 70, and no C is written;
* signed zeros come out as IEEE arithmetic says (E14, E15): a sum of ``-0.0`` is ``-0.0``;
* guards and fills are exact at the padding boundary (E17, E22);
* kernels GCC warned about (``k <= k``, an unused padded extent) compile with ``-Werror``;
* parameters whose arrays or workspace would not fit ``ptrdiff_t`` byte offsets make the
  kernel return ``_EPARAM`` and ``*_work`` return -1 (E33, E34, E37), and concrete ones are
  refused when emitting (E36).

All kernels are compiled once, into one shared library (module-scoped fixture).
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from core_teil.cli import main
from core_teil.errors import TeilResourceError
from tests.test_emit_c import CC, MATMUL, E, assert_bits, build, call, work_size

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on this machine")

#: Every compiled kernel reports these (the header's macros).
OK, ENULL, EPARAM = 0, 1, 2
#: ``CT_MAXEL`` with a 64-bit ``ptrdiff_t``: the most doubles whose bytes a ``ptrdiff_t`` counts.
MAXEL = (2**63 - 1) // 8

PROGRAMS = {
    # a sum hoisted out of the loops (the Σ prelude), added to x
    "prelude": "param n\ninput alloc x : [n]\noutput alloc s : [n]\ns = add x (expa n (red x))\n",
    # the constant slice 3 of a padded expa: A where 3 <= k, which `assume k >= 3` makes always
    "slice": "lang full\nparam k, m\nassume k >= 3\ninput alloc A : [m]\noutput alloc C : [m]\n"
             "C = proj 1 3 (expa 1 k A)\n",
    # an output never written (• inside, 0 in the padding), and one computed from an
    # allocation never written
    "unwritten": "param n\ninput alloc x : [n]\nalloc t : [n]\noutput alloc y : [n]\noutput alloc z : [n]\n"
                 "y = add x t\n",
    # no workspace: only the arrays' element counts bound the parameters
    "copy2": "param m, n\ninput alloc A : [m, n]\noutput alloc B : [m, n]\nB = add A A\n",
    # two workspace slots of n doubles each (unfused)
    "slots": "param n\ninput alloc A : [n]\nalloc T : [n]\nalloc U : [n]\noutput alloc B : [n]\n"
             "T = add A A\nU = mul T A\nB = add T U\n",
}

#: (kernel name, program key or None for matmul, params fixed at emit time, pad, fuse)
KERNELS = [
    ("r2_matmul", None, {"l": 2, "m": 3, "n": 4}, None, True),
    ("r2_prelude", "prelude", None, None, True),
    ("r2_slice_sym", "slice", None, 4, True),
    ("r2_slice_con", "slice", {"k": 3, "m": 2}, 4, True),
    ("r2_unwritten_sym", "unwritten", None, 4, True),
    ("r2_unwritten_con", "unwritten", {"n": 3}, 4, True),
    ("r2_copy2", "copy2", None, None, True),
    ("r2_slots", "slots", None, None, False),
]


def program(key: str | None) -> ct.Program:
    return ct.load(str(MATMUL)) if key is None else ct.parse(PROGRAMS[key], f"{key}.teil")


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> tuple[ctypes.CDLL, dict[str, tuple[ct.Program, Any]]]:
    table = {}
    for name, key, params, pad, fuse in KERNELS:
        p = program(key)
        table[name] = (p, E.emit_c(p, params, pad, name=name, fuse=fuse))
    return build([s for _, s in table.values()], tmp_path_factory.mktemp("emitc-r2")), table


def bits(a: np.ndarray) -> np.ndarray:
    """The IEEE bit patterns (``np.array_equal`` equates -0.0 and +0.0)."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def entry(lib: ctypes.CDLL, src: Any, params: dict[str, int]) -> int:
    """The kernel called with ``params`` and NULL for every array.  Parameters are checked
    before pointers, so a parameter the kernel refuses gives _EPARAM, and one it accepts
    _ENULL: either way no memory is touched, even by a broken kernel."""
    fn = getattr(lib, src.name)
    fn.restype = ctypes.c_int
    args: list[Any] = [ctypes.c_ssize_t(params[a.name]) if a.role == "param" else ctypes.c_void_p(None)
                       for a in src.args]
    return int(fn(*args))


# --------------------------------------------------------------------------
# Signed zero: the sums start from -0.0 (E14, E15)
# --------------------------------------------------------------------------


def test_a_sum_of_negative_zeros_is_negative_zero_in_the_accumulating_loop(lib):
    # reviewer rS (E14): C[i, j] = Σ_k A[i, k] * B[k, j] accumulated in place from -0.0;
    # from +0.0 it is +0.0 + -0.0 = +0.0, and the sign IEEE (and ct.evaluate) gives is lost
    so, table = lib
    p, src = table["r2_matmul"]
    params = {"l": 2, "m": 3, "n": 4}
    inputs = {"A": np.full((2, 3), -0.0), "B": np.arange(1.0, 13.0).reshape(3, 4)}
    rc, got = call(so, src, inputs, params)
    want = ct.evaluate(p, inputs, params)
    assert rc == OK
    assert np.signbit(want["C"]).all() and (want["C"] == 0.0).all()
    np.testing.assert_array_equal(bits(got["C"]), bits(want["C"]))


def test_a_sum_of_negative_zeros_is_negative_zero_in_the_hoisted_sum(lib):
    # reviewer rS (E15): s = x + Σ x with x = -0.0 everywhere is -0.0 + -0.0 = -0.0; a Σ
    # started at +0.0 gives -0.0 + +0.0 = +0.0
    so, table = lib
    p, src = table["r2_prelude"]
    for n in (1, 3):
        inputs = {"x": np.full(n, -0.0)}
        rc, got = call(so, src, inputs, {"n": n})
        want = ct.evaluate(p, inputs, {"n": n})
        assert rc == OK
        assert np.signbit(want["s"]).all()
        np.testing.assert_array_equal(bits(got["s"]), bits(want["s"]))


# --------------------------------------------------------------------------
# The padding boundary (E17, E22)
# --------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "params"), [("r2_slice_sym", {"k": 3, "m": 2}), ("r2_slice_sym", {"k": 5, "m": 3}),
                                              ("r2_slice_con", {"k": 3, "m": 2})])
def test_a_constant_slice_of_a_padded_expa_at_its_last_element_is_the_array(lib, name, params):
    # reviewer rS (E17): with --pad 4, expa 1 k A has ceil_4(k) slices, the first k of them A
    # and the rest 0; slice 3 of it is A when 3 <= k, which at k = 3 is the boundary
    so, table = lib
    p, src = table[name]
    a = np.arange(1.0, params["m"] + 1.0)
    rc, got = call(so, src, {"A": a}, params)
    assert rc == OK
    want = ct.evaluate(p, {"A": a}, params, 4)
    np.testing.assert_array_equal(want["C"], a)
    assert_bits(got, want, name)
    assert (got["C"][params["m"]:] == 0.0).all()  # the padding of C


@pytest.mark.parametrize(("name", "n"), [("r2_unwritten_sym", 3), ("r2_unwritten_sym", 5), ("r2_unwritten_con", 3)])
def test_the_padding_of_never_written_values_is_exactly_zero(lib, name, n):
    # reviewer rS (E22): the fill of an allocation nobody writes is • on its extents and 0 in
    # the padding (report Fig. 13, d-pad-var); the differential test accepted • in the padding
    so, table = lib
    _, src = table[name]
    x = np.arange(1.0, n + 1.0)
    rc, got = call(so, src, {"x": x}, {"n": n})
    assert rc == OK
    size = -(-n // 4) * 4
    for out in ("y", "z"):  # y = x + t (t never written), z never written
        assert got[out].shape == (size,)
        assert np.isnan(got[out][:n]).all(), out
        np.testing.assert_array_equal(bits(got[out][n:]), bits(np.zeros(size - n)))


#: Kernels GCC rejected under -Wall -Werror (found in this review), each with parameter
#: values to run it at and what its output C is in terms of its input A.
STRICT = {
    # `k <= k` (-Wtautological-compare): an assume that always holds ...
    "self_assume": ("param k\nassume k <= k\ninput alloc A : [k]\noutput alloc C : [k]\nC = add A A\n",
                    None, [{"k": 3}], lambda a, q: 2 * a),
    # ... and the guard of slice k of a padded expa of k slices
    "self_slice": ("lang full\nparam k, m\ninput alloc A : [m]\noutput alloc C : [m]\nC = proj 1 k (expa 1 k A)\n",
                   4, [{"k": 3, "m": 2}, {"k": 1, "m": 5}], lambda a, q: a),
    # a padded extent only a Σ loops over, in no array's shape: an unused variable of
    # *_work (-Wunused-variable)
    "sum_only": ("lang full\nparam k, m\ninput alloc A : [m]\noutput alloc C : [m]\nC = red 1 (expa 1 k A)\n",
                 4, [{"k": 3, "m": 2}, {"k": 5, "m": 1}], lambda a, q: q["k"] * a),
}


def test_kernels_gcc_warned_about_compile_under_werror_and_compute(tmp_path):
    # the emitter now decides comparisons that always hold and declares in *_work only the
    # padded extents it uses; the kernels compile with the strict flags and compute
    table = {key: (ct.parse(text, f"{key}.teil"), pad, runs, want)
             for key, (text, pad, runs, want) in STRICT.items()}
    srcs = {key: E.emit_c(p, None, pad, name=f"r2_{key}") for key, (p, pad, _, _) in table.items()}
    so = build(list(srcs.values()), tmp_path)  # asserts the compiler's exit code 0
    for key, (p, pad, runs, expect) in table.items():
        src = srcs[key]
        for params in runs:
            a = np.arange(1.0, params["m" if "m" in params else "k"] + 1.0)
            rc, got = call(so, src, {"A": a}, params)
            want = ct.evaluate(p, {"A": a}, params, pad)
            assert rc == OK
            assert_bits(got, want, f"{key} at {params}")
            np.testing.assert_array_equal(want["C"], expect(a, params))
            assert work_size(so, src, params) == 0


# --------------------------------------------------------------------------
# Parameters too large for ptrdiff_t byte offsets (E33, E34, E36, E37)
# --------------------------------------------------------------------------


def test_parameters_whose_product_overflows_are_refused_by_the_kernel(lib):
    # reviewer rS (E33): m and n each within CT_MAXEL, but A : [m, n] has 2**62 elements,
    # whose bytes do not fit ptrdiff_t.  The kernel has no workspace, so only the checked
    # product of the extents stands between such parameters and wrapped offsets.
    so, table = lib
    _, src = table["r2_copy2"]
    assert work_size(so, src, {"m": 2**31, "n": 2**31}) == -1
    assert entry(so, src, {"m": 2**31, "n": 2**31}) == EPARAM
    # exactly CT_MAXEL = 2**60 - 1 = (2**30 - 1)(2**30 + 1) elements fit; 2**60 do not
    assert work_size(so, src, {"m": 2**30 - 1, "n": 2**30 + 1}) == 0
    assert entry(so, src, {"m": 2**30 - 1, "n": 2**30 + 1}) == ENULL  # accepted: then the NULL arrays
    assert work_size(so, src, {"m": 2**30, "n": 2**30}) == -1
    assert entry(so, src, {"m": 2**30, "n": 2**30}) == EPARAM
    assert work_size(so, src, {"m": MAXEL, "n": 1}) == 0
    assert work_size(so, src, {"m": MAXEL // 2 + 1, "n": 2}) == -1
    a = np.arange(6.0).reshape(2, 3)
    rc, got = call(so, src, {"A": a}, {"m": 2, "n": 3})
    assert rc == OK and (got["B"] == 2 * a).all()


def test_a_workspace_total_that_overflows_is_refused_by_the_kernel(lib):
    # reviewer rS (E34): T and U each take n doubles of workspace; at n = 2**59 each fits,
    # their 2**60 doubles do not (CT_MAXEL = 2**60 - 1)
    so, table = lib
    p, src = table["r2_slots"]
    assert work_size(so, src, {"n": 3}) == 6
    assert work_size(so, src, {"n": 2**59 - 1}) == 2**60 - 2  # the largest that fits
    assert entry(so, src, {"n": 2**59 - 1}) == ENULL
    assert work_size(so, src, {"n": 2**59}) == -1
    assert entry(so, src, {"n": 2**59}) == EPARAM
    a = np.array([1.0, -2.0, 0.5])
    for work in (False, True):
        rc, got = call(so, src, {"A": a}, {"n": 3}, work=work)
        assert rc == OK
        assert_bits(got, ct.evaluate(p, {"A": a}, {"n": 3}), "slots")


@pytest.mark.parametrize(("name", "params"), [("r2_slots", {"n": 2**61}), ("r2_slots", {"n": MAXEL + 1}),
                                              ("r2_copy2", {"m": 2**61, "n": 1}), ("r2_copy2", {"m": 1, "n": 2**62})])
def test_a_parameter_beyond_the_doubles_ptrdiff_t_counts_is_refused_by_the_kernel(lib, name, params):
    # reviewer rS (E37): CT_MAXEL is PTRDIFF_MAX / sizeof(double), not PTRDIFF_MAX: n = 2**61
    # doubles are 2**64 bytes
    so, table = lib
    _, src = table[name]
    assert work_size(so, src, params) == -1
    assert entry(so, src, params) == EPARAM


def test_a_concrete_array_beyond_ptrdiff_t_byte_offsets_is_refused_when_emitting(tmp_path, capsys):
    # reviewer rS (E36): A : [2**31, 2**31] has 2**62 elements, within PTRDIFF_MAX but not
    # its bytes (2**65); emit-c refuses it (exit 2) rather than write C that cannot hold it
    p = ct.load(str(MATMUL))
    with pytest.raises(TeilResourceError, match=r"an array of 4,611,686,018,427,387,904 elements \(extents "
                       r"\[2147483648, 2147483648\]\) does not fit a C kernel's ptrdiff_t byte offsets "
                       r"\(at most 1,152,921,504,606,846,975\)"):
        E.emit_c(p, {"l": 2**31, "m": 2**31})
    out = tmp_path / "k.c"
    assert main(["emit-c", str(MATMUL), "--param", f"l={2**31}", "--param", f"m={2**31}", "-o", str(out)]) == 2
    assert "does not fit a C kernel's ptrdiff_t byte offsets" in capsys.readouterr().err
    assert not out.exists()
    # the largest array that fits is emitted: [2**30 - 1, 2**30 + 1] (2**60 - 1 elements)
    assert E.emit_c(p, {"l": 2**30 - 1, "m": 2**30 + 1}).shape("A") == (2**30 - 1, 2**30 + 1)


# --------------------------------------------------------------------------
# The emitter's check: every index, every loop bound (E11, E12)
# --------------------------------------------------------------------------

#: matmul with B square, so that C's columns, A's columns and B's extents are all n.
SQUARE = ("lang full\nparam l, n\ninput alloc A : [l, n]\ninput alloc B : [n, n]\noutput alloc C : [l, n]\n"
          "C = red 2 (diag 2 3 (prod A B))\n")


def emit_cli(tmp_path: Path, text: str) -> tuple[int, Path]:
    src = tmp_path / "square.teil"
    src.write_text(text)
    out = tmp_path / "k.c"
    return main(["emit-c", str(src), "-o", str(out)]), out


def test_a_sum_loop_too_long_is_caught_though_its_extent_was_checked_before(monkeypatch, tmp_path, capsys):
    # reviewer rS (E11): the check remembers "a loop variable within extent n" per loop bound.
    # Here C[k1, k2] is written first with k2 over 1..n (proved), then A[k1, m1] is read with
    # the Σ's m1 over 1..ceil_8(n): the same extent n, another bound, and out of bounds.
    def long_sum(self: Any, n: Any, body: Any, node: Any) -> Any:
        m = E.LoopVar(f"m{next(self._sums)}", n if n.concrete else E.ext(n.base, 8))
        return E.Sum(m, body(m))

    monkeypatch.setattr(E.CInterpretation, "sum", long_sum)
    p = ct.parse(SQUARE, "square.teil")
    with pytest.raises(E.EmitCheckFailed) as err:
        E.emit_c(p)
    assert err.value.message == ("statement 1: read of A: index 2 ranges over 1..ceil_8(n), beyond the extent n for "
                              "some parameter values")
    assert err.value.exit_code == 70 and err.value.rule == "emit-c check: Lemma 4.3"
    code, out = emit_cli(tmp_path, SQUARE)
    assert code == 70 and not out.exists() and not out.with_suffix(".h").exists()
    assert "index 2 ranges over 1..ceil_8(n), beyond the extent n" in capsys.readouterr().err


def test_a_last_domain_loop_too_long_is_caught_at_index_2(monkeypatch, tmp_path, capsys):
    # reviewer rS (E12): only the last loop of the domain runs too far (to ceil_8(n)); the
    # first index of every access is in bounds, the second is not.  Symbolic, so that the
    # flat-offset bound (concrete extents only) cannot stand in for the per-index check.
    real = E.CInterpretation.domain

    def domain(self: Any, bounds: Any, stmt: Any) -> Any:
        ks = real(self, bounds, stmt)
        if len(ks) < 2 or ks[-1].bound.concrete:
            return ks
        return (*ks[:-1], E.LoopVar(ks[-1].name, E.ext(ks[-1].bound.base, 8)))

    monkeypatch.setattr(E.CInterpretation, "domain", domain)
    p = ct.parse(SQUARE, "square.teil")
    with pytest.raises(E.EmitCheckFailed) as err:
        E.emit_c(p)
    assert err.value.message == ("statement 1: write of C: index 2 ranges over 1..ceil_8(n), beyond the extent n "
                              "for some parameter values")
    code, out = emit_cli(tmp_path, SQUARE)
    assert code == 70 and not out.exists()
    assert "write of C: index 2 ranges over 1..ceil_8(n)" in capsys.readouterr().err
    # the same program emitted by the real emitter compiles and multiplies
    monkeypatch.undo()
    assert E.emit_c(p, {"l": 2, "n": 3}).checked == 4
