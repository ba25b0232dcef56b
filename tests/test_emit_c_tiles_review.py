"""Review r15t of emit-c's vector tiles (commit 5ba96d0: ``emit_c.tile_of``, ``Emitter.tiled``,
``_Build.pad_rows``, ``_Build.copies``): tests for the mutants tests/test_emit_c_tiles.py let
survive, and for the programs it did not try.

* The tile path is compiled with ``-DCT_VECTOR=1`` (GCC's and Clang's vector extensions work
  without AVX2, so it runs on every machine with those compilers) and the scalar path with
  ``-DCT_VECTOR=0``; both compute ``ct.evaluate``'s doubles bit for bit (-0.0 sums, NaN,
  ±inf) for statements ``tile_of`` accepts in shapes interp and helm do not have: a diagonal
  read in ``L``, a constant (``proj``) index in ``R``, ``R``'s ``m`` read twice, ``R · L``,
  ``L`` free of ``m``, ``L`` an expression with a scalar and a division, rank 3 and rank 5,
  rows of 1, 17 and 32, rows of 1, 9 and 17 elements, an unqualified program (inputs ``ct_in_X``, outputs
  ``ct_out_X``), a tiled target that is not a block, a symbolic constant index.
* Statements ``tile_of`` must refuse (``R`` read at the row, or at the batch index, or along
  its diagonal, or not along the row's elements; ``L`` read along the row's elements, or
  holding a sum; rank 2; rows of 33) get no tile, and compute the same doubles.
* Claim (3): the lanes past a row's end are never read at a real element -- with NaN
  instead of 0 in the padding of ``R``'s copy (so NaN in the padding of every tiled block)
  the outputs are still the reference's.
* The vector types are as wide as the lanes the check records; ``CT_VECTOR`` follows AVX2.
* The bugs found, fixed: an allocation named ``memcpy`` or a kernel named ``strerror`` gave
  C that did not compile on the tile path (the tiles now call ``__builtin_memcpy`` and
  include no ``<string.h>``), an input whose extent equals the row's only by an ``assume``
  crashed emit-c (exit 70; such an input is no tile's ``R`` now), and a long row gave tiles
  of more accumulators than docs/decisions.md promises (no tile when a row needs more).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from tests.test_emit_c import CC, CFLAGS, ROOT, E, build, call, random_inputs
from tests.test_emit_c_loops import bits

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on this machine")

INTERP = ROOT / "examples" / "interp.teil"
FLAGS = [*CFLAGS, "-O3", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math"]

HEAD = "lang full\nparam E, n, p, m\ninput alloc A : [m, n]\n"
#: t[e, b, c] = Σ_m u[e, m, b] · A[c, m], then v = t + t: the smallest tiled group (rows of p
#: elements of m, A's copy transposed and padded), with its extents as parameters.
SMALL = HEAD + "input alloc u : [E, n, p]\nalloc t : [E, p, m]\noutput alloc v : [E, p, m]\n" \
               "t = contr 2 5 (prod u A)\nv = add t t\n"

#: (name, program, parameters, the tiles' comments expected): statements tile_of accepts.
ACCEPTED = [
    # L reads u's diagonal at the row: t[e, y, f] = Σ_m u[e, m, y, y] · A[f, m]
    ("diag_l", HEAD + "input alloc u : [E, n, p, p]\nalloc t : [E, p, m]\noutput alloc v : [E, p, m]\n"
                      "t = contr 2 5 (prod (diag 3 4 u) A)\nv = add t t\n",
     {"E": 3, "n": 5, "p": 7, "m": 5}, ["rows 1..7 of 7: 7 x 1 vectors of 8 doubles"]),
    # R with a constant index: B[2, m, f] and B[3, m, f]
    ("proj_r", "lang full\nparam E, n, m, q\ninput alloc B : [q, n, m]\ninput alloc u : [E, n, n, n]\n"
               "alloc t : [E, n, n, m]\noutput alloc v : [E, n, m, m]\n"
               "t = contr 2 5 (prod u (proj 1 2 B))\nv = contr 2 5 (prod t (proj 1 3 B))\n",
     {"E": 3, "n": 5, "m": 7, "q": 3}, ["rows 1..5 of 5: 5 x 1 vectors of 8 doubles",
                                        "rows 1..7 of 7: 7 x 1 vectors of 8 doubles"]),
    # R reads its own diagonal at m: B[m, m, f]
    ("diag_r", "lang full\nparam E, n, m\ninput alloc B : [n, n, m]\ninput alloc u : [E, n, n, n]\n"
               "alloc t : [E, n, n, m]\noutput alloc v : [E, n, n, m]\n"
               "t = contr 2 5 (prod u (diag 1 2 B))\nv = add t t\n",
     {"E": 3, "n": 5, "m": 7}, ["rows 1..5 of 5: 5 x 1 vectors of 8 doubles"]),
    # the body is R · L: t[e, b, f] = Σ_j A[f, j] · u[e, j, b]
    ("right_first", HEAD + "input alloc u : [E, n, p]\nalloc t : [E, p, m]\noutput alloc v : [E, p, m]\n"
                           "t = transp 2 3 (transp 1 2 (contr 2 4 (prod A u)))\nv = add t t\n",
     {"E": 3, "n": 6, "p": 5, "m": 7}, ["rows 1..5 of 5: 5 x 1 vectors of 8 doubles"]),
    # L free of the summation variable: t[e, b, c] = Σ_j u[e, b] · A[c, j]
    ("l_free_of_m", HEAD + "input alloc u : [E, p]\nalloc t : [E, p, m]\noutput alloc v : [E, p, m]\n"
                           "t = red 4 (prod u A)\nv = add t t\n",
     {"E": 3, "n": 6, "p": 5, "m": 7}, ["rows 1..5 of 5: 5 x 1 vectors of 8 doubles"]),
    # L an expression: s · (u / w), controlled division
    ("expr_l", HEAD + "input alloc u : [E, n, p]\ninput alloc w : [E, n, p]\ninput alloc s : []\n"
                      "alloc t : [E, p, m]\noutput alloc v : [E, p, m]\n"
                      "t = contr 2 5 (prod (mul s (div u w)) A)\nv = add t t\n",
     {"E": 3, "n": 6, "p": 5, "m": 7}, ["rows 1..5 of 5: 5 x 1 vectors of 8 doubles"]),
    # rank 3, and R read where it is (B[j, f], rows of 8 fill a vector)
    ("rank3", HEAD + "input alloc B : [m, p]\ninput alloc u : [E, n, p]\nalloc t : [E, p, m]\n"
                     "output alloc v : [E, p, p]\nt = contr 2 5 (prod u A)\nv = contr 3 4 (prod t B)\n",
     {"E": 3, "n": 6, "p": 8, "m": 7}, ["rows 1..8 of 8: 8 x 1 vectors of 8 doubles"]),
    # rank 5: two loops outside the tile
    ("rank5", "lang full\nparam E, n, m\ninput alloc A : [m, n]\ninput alloc u : [E, n, n, n, n]\n"
              "alloc t : [E, n, n, n, m]\noutput alloc v : [E, n, n, m, m]\n"
              "t = contr 2 7 (prod u A)\nv = contr 2 7 (prod t A)\n",
     {"E": 2, "n": 3, "m": 5}, ["rows 1..3 of 3: 3 x 1 vectors of 8 doubles",
                                "rows 1..5 of 5: 5 x 1 vectors of 8 doubles"]),
    ("rows1", SMALL, {"E": 2, "n": 3, "p": 1, "m": 5}, ["rows 1..1 of 1: 1 x 1 vector of 8 doubles"]),
    ("rows17", SMALL, {"E": 2, "n": 3, "p": 17, "m": 13},
     ["rows 1..9 of 17, elements 1..8 of 16: 9 x 1 vectors", "rows 10..17 of 17, elements 9..16 of 16: 8 x 1"]),
    ("rows32", SMALL, {"E": 2, "n": 2, "p": 32, "m": 3}, ["rows 1..11 of 32: 11 x 1 vectors of 4 doubles",
                                                          "rows 23..32 of 32: 10 x 1 vectors of 4 doubles"]),
    ("width1", SMALL, {"E": 2, "n": 3, "p": 3, "m": 1}, ["rows 1..3 of 3: 3 x 1 vectors of 4 doubles"]),
    ("width9", SMALL, {"E": 2, "n": 3, "p": 3, "m": 9}, ["rows 1..3 of 3, elements 1..8 of 16: 3 x 1 vectors",
                                                         "rows 1..3 of 3, elements 9..16 of 16: 3 x 1 vectors"]),
    ("width17", SMALL, {"E": 2, "n": 3, "p": 5, "m": 17}, ["rows 1..5 of 5, elements 1..8 of 24: 5 x 1 vectors",
                                                           "rows 1..5 of 5, elements 17..24 of 24: 5 x 1"]),
    # A's copy serves t's tile (group 1) and x's strided read (group 2, a sum of a sum): it is
    # padded to the tile's rows of 8 whichever reader comes last
    ("shared_copy", HEAD + "input alloc u : [E, n, p]\nalloc t : [E, p, m]\nalloc w : [E, p, m]\n"
                           "alloc x : [E, p, m]\nalloc y : [E, p, m]\noutput alloc v : [E, p, m]\n"
                           "t = contr 2 5 (prod u A)\nw = add t t\ny = add w (expa 1 E (proj 1 1 t))\n"
                           "x = red 2 (add (expa 4 m u) (expa 1 E (expa 2 p (transp 1 2 A))))\nv = add x y\n",
     {"E": 3, "n": 6, "p": 5, "m": 7}, ["rows 1..5 of 5: 5 x 1 vectors of 8 doubles"]),
    # every allocation an input (ct_in_X) and an output (ct_out_X): A and u are read, t and v written
    ("unqualified", "lang full\nparam E, n, p, m\nalloc A : [m, n]\nalloc u : [E, n, p]\nalloc t : [E, p, m]\n"
                    "alloc v : [E, p, m]\nt = contr 2 5 (prod u A)\nv = add t t\n",
     {"E": 3, "n": 6, "p": 5, "m": 7}, ["rows 1..5 of 5: 5 x 1 vectors of 8 doubles"]),
    # t is read outside its group (at e = 1): a whole workspace array, not a block, 7 lanes stored
    ("not_a_block", HEAD + "input alloc u : [E, n, p]\nalloc t : [E, p, m]\nalloc w : [E, p, m]\n"
                           "output alloc v : [E, p, m]\nt = contr 2 5 (prod u A)\nw = add t t\n"
                           "v = add w (expa 1 E (proj 1 1 t))\n",
     {"E": 3, "n": 6, "p": 5, "m": 7}, ["rows 1..5 of 5: 5 x 1 vectors of 8 doubles"]),
]

#: (name, program, parameters, the statement that must not be tiled): statements tile_of refuses.
REFUSED = [
    # R read at the row: t[e, b, c] = Σ_m u[e, m] · B[b, m, c] (R's row differs from row to row)
    ("r_at_row", "lang full\nparam E, n, p, m\ninput alloc B : [p, n, m]\ninput alloc u : [E, n]\n"
                 "alloc t : [E, p, m]\noutput alloc v : [E, p, m]\n"
                 "t = contr 2 4 (prod u B)\nv = add t t\n", {"E": 3, "n": 4, "p": 5, "m": 7}),
    # R read at the batch index: t[e, b, c] = Σ_m A[b, m] · u[e, m, c]
    ("r_at_batch", "lang full\nparam E, n, p, m\ninput alloc A : [p, n]\ninput alloc u : [E, n, m]\n"
                   "alloc t : [E, p, m]\noutput alloc v : [E, p, m]\n"
                   "t = transp 1 2 (contr 2 4 (prod A u))\nv = add t t\n", {"E": 3, "n": 4, "p": 5, "m": 7}),
    # L read along the row's elements: t[e, b, y] = Σ_m u[e, m, b, y] · A[y, m]
    ("l_at_inner", "lang full\nparam E, n, q, p\ninput alloc A : [p, n]\ninput alloc u : [E, n, q, p]\n"
                   "alloc t : [E, q, p]\noutput alloc v : [E, q, p]\n"
                   "t = contr 2 5 (diag 4 5 (prod u A))\nv = add t t\n", {"E": 3, "n": 4, "q": 5, "p": 7}),
    # L holds a sum: t[e, b, c] = Σ_m (Σ_j u[e, j, m, b]) · A[c, m]
    ("l_with_sum", "lang full\nparam E, n, p, m\ninput alloc A : [m, n]\ninput alloc u : [E, n, n, p]\n"
                   "alloc t : [E, p, m]\noutput alloc v : [E, p, m]\n"
                   "t = contr 2 5 (prod (red 2 u) A)\nv = add t t\n", {"E": 3, "n": 4, "p": 5, "m": 7}),
    # R read along its diagonal at the row's elements: D[c, c, m] (no order of D is unit-stride)
    ("r_diag_inner", "lang full\nparam E, n, p, q\ninput alloc D : [p, p, n]\ninput alloc u : [E, n, q]\n"
                     "alloc t : [E, q, p]\noutput alloc v : [E, q, p]\n"
                     "t = contr 2 5 (prod u (diag 1 2 D))\nv = add t t\n", {"E": 3, "n": 4, "p": 7, "q": 5}),
    # R not read along the row's elements: t[e, b, c] = Σ_m u[e, m, b] · w[m], broadcast over c
    ("r_free_of_inner", "lang full\nparam E, n, p, m\ninput alloc w : [n]\ninput alloc u : [E, n, p]\n"
                        "alloc t : [E, p, m]\noutput alloc v : [E, p, m]\n"
                        "t = expa 3 m (contr 2 4 (prod u w))\nv = add t t\n", {"E": 3, "n": 4, "p": 5, "m": 7}),
    # rank 2 (one loop inside the fused one): t[e, c] = Σ_m u[e, m] · A[c, m]
    ("rank2", "lang full\nparam E, n, m\ninput alloc A : [m, n]\ninput alloc u : [E, n]\nalloc t : [E, m]\n"
              "output alloc v : [E, m]\nt = contr 2 4 (prod u A)\nv = add t t\n", {"E": 3, "n": 4, "m": 7}),
    # a sum of a sum, not of a product: t[e, b, c] = Σ_j (u[e, j, b] + A[c, j])
    ("add_body", HEAD + "input alloc u : [E, n, p]\nalloc t : [E, p, m]\noutput alloc v : [E, p, m]\n"
                        "t = red 2 (add (expa 4 m u) (expa 1 E (expa 2 p (transp 1 2 A))))\nv = add t t\n",
     {"E": 3, "n": 4, "p": 5, "m": 7}),
    # rows of 33: more than MAX_TILE_ROWS
    ("rows33", SMALL, {"E": 2, "n": 2, "p": 33, "m": 3}),
]


def special_inputs(p: ct.Program, params: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """Normal values; the inputs the same for every batch element positive (so that sums of
    -0.0s stay -0.0); batch element 0 of a batched input all -0.0, element 1 with 0, NaN,
    +inf and -inf (they spread over element 1 only)."""
    inputs = random_inputs(p, params, seed, specials=False)
    for a in p.inputs():
        x = inputs.get(a.name)
        if x is None:
            continue
        if a.shape and a.shape[0] == "E":
            x[0] = -0.0
            if x[1].size >= 4:
                x[1].reshape(-1)[[0, 1, 2, 3]] = [0.0, np.nan, np.inf, -np.inf]
        else:
            inputs[a.name] = np.abs(x) + 0.5
    return inputs


def tile_comments(c: str) -> list[str]:
    return re.findall(r"/\* (rows \d+\.\.\d+ of \d+(?:, elements \d+\.\.\d+ of \d+)?: .*?) \*/", c)


def assert_reference_doubles(lib: Any, src: Any, p: ct.Program, params: dict[str, int], what: str) -> None:
    for seed in (1, 2):
        inputs = special_inputs(p, params, seed)
        want = ct.evaluate(p, inputs, params)
        for work in (False, True):
            rc, got = call(lib, src, inputs, params, work=work)
            assert rc == 0
            for name, w in want.items():
                np.testing.assert_array_equal(bits(got[name]), bits(w), err_msg=f"{what} {name} seed {seed}")


def both_paths(table: dict[str, Any], d: Path) -> dict[str, Any]:
    """The sources of ``table`` built into one library with the tiles and one without."""
    sources = list(table.values())
    return {"table": table, "libs": {"vector": build(sources, d, [*FLAGS, "-DCT_VECTOR=1"]),
                                     "scalar": build(sources, d, [*FLAGS, "-DCT_VECTOR=0"])}}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    table = {name: E.emit_c(ct.parse(text), params, name=f"tr_{name}")
             for name, text, params, *_ in ACCEPTED + REFUSED}
    return both_paths(table, tmp_path_factory.mktemp("emitc-tiles-review"))


@pytest.mark.parametrize("path", ["vector", "scalar"])
@pytest.mark.parametrize("name,text,params,tiles", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_accepted_statements_are_tiled_and_both_paths_compute_the_reference(kernels, path, name, text, params,
                                                                           tiles):
    src = kernels["table"][name]
    found = tile_comments(src.c)
    for tile in tiles:
        assert any(f.startswith(tile) for f in found), (tile, found)
    if name == "not_a_block":  # t's rows of 7 in the whole array t: 7 lanes stored, not 8
        assert all(f"ct_w_t_a[ct_k1 * 35 + {28 + i}] = ct_t2_4[{i}];" in src.c for i in range(7))
        assert "ct_t2_4[7]" not in src.c
    p = ct.parse(text)
    assert_reference_doubles(kernels["libs"][path], src, p, params, f"{name} {path}")


@pytest.mark.parametrize("path", ["vector", "scalar"])
@pytest.mark.parametrize("name,text,params", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused_statements_keep_the_scalar_loops_and_compute_the_reference(kernels, path, name, text, params):
    src = kernels["table"][name]
    assert "CT_VECTOR" not in src.c, tile_comments(src.c)
    assert_reference_doubles(kernels["libs"][path], src, ct.parse(text), params, f"{name} {path}")


def test_thirty_two_rows_are_one_statements_tiles_and_thirty_three_are_not():
    # MAX_TILE_ROWS bounds the unrolled row loop at 32 exactly (docs/decisions.md)
    p = ct.parse(SMALL)
    assert len(tile_comments(E.emit_c(p, {"E": 2, "n": 2, "p": 32, "m": 3}).c)) == 3  # 11 + 11 + 10
    assert tile_comments(E.emit_c(p, {"E": 2, "n": 2, "p": 33, "m": 3}).c) == []


def test_symbolic_rows_or_elements_get_no_tile():
    # interp with only n given: its sums have 5 terms (summed inside), but every statement's
    # rows or elements are m, unknown: nothing to unroll
    c = E.emit_c(ct.load(str(INTERP)), {"n": 5}).c
    assert "CT_VECTOR" not in c and "double ct_s1 = -0.0;" in c


def test_a_symbolic_constant_index_of_r_is_read_at_run_time(tmp_path):
    # R = B[q, m, f] with q a parameter of the call: the tile's row of R is B's q-th slice
    text = ("lang full\nparam E, n, q, m\ninput alloc B : [q, n, m]\ninput alloc u : [E, n, n, n]\n"
            "alloc t : [E, n, n, m]\noutput alloc v : [E, n, n, m]\nt = contr 2 5 (prod u (proj 1 q B))\n"
            "v = add t t\n")
    p = ct.parse(text)
    src = E.emit_c(p, {"n": 5, "m": 7}, name="tr_symproj")
    assert "memcpy(&ct_r0, &ct_w_B_t0_1_2_w8[(q - 1) * 40 + ct_m1 * 8], sizeof ct_r0);" in src.c
    for flag in ("-DCT_VECTOR=1", "-DCT_VECTOR=0"):
        lib = build([src], tmp_path, [*FLAGS, flag])
        for q in (2, 3):
            assert_reference_doubles(lib, src, p, {"E": 3, "n": 5, "m": 7, "q": q}, f"q={q} {flag}")


def test_the_lanes_past_a_rows_end_are_never_read_at_a_real_element(monkeypatch, tmp_path):
    # with NaN, not 0, in the padding of R's copies, every tile's lanes past a row's end sum
    # NaNs into the padding of its block (or drop them, for the caller's arrays): no output
    # element may see one
    real = E.Emitter.zero_lanes

    def nan_lanes(self: Any, target: Any, ext: Any) -> list[str]:
        lines = real(self, target, ext)
        assert any(line.endswith("] = 0.0;") for line in lines)
        return [line.replace("= 0.0;", "= NAN;") for line in lines]

    monkeypatch.setattr(E.Emitter, "zero_lanes", nan_lanes)
    cases = [("tr_nan_interp", INTERP, {"E": 3, "m": 7, "n": 5}), ("tr_nan_helm", ROOT / "examples" / "helm.teil",
                                                                    {"E": 3, "n": 13})]
    table = [(E.emit_c(ct.load(str(path)), params, name=name), path, params) for name, path, params in cases]
    for src, _, _ in table:
        assert "] = NAN;" in src.c and "8 * sizeof(double));" in src.c  # padded copies, whole vectors stored
    lib = build([src for src, _, _ in table], tmp_path, [*FLAGS, "-DCT_VECTOR=1"])
    for src, path, params in table:
        assert_reference_doubles(lib, src, ct.load(str(path)), params, path.name)


def test_the_vector_types_hold_the_lanes_the_check_records(monkeypatch):
    # R's rows are loaded as sizeof(ct_vN) bytes: the typedef must be N doubles wide, or the
    # load reads past what the check proved in bounds (it records lanes 1 and N)
    seen: list[Any] = []
    real = E.Emitter.vector

    def spy(self: Any, storage: Any, index: Any, lane: Any, first: int, count: int, write: bool = False) -> str:
        seen.append((storage.cname, first, count, write))
        return real(self, storage, index, lane, first, count, write)

    monkeypatch.setattr(E.Emitter, "vector", spy)
    for params, lanes in (({"E": 2, "n": 3, "p": 3, "m": 3}, 4), ({"E": 2, "n": 3, "p": 3, "m": 13}, 8)):
        seen.clear()
        c = E.emit_c(ct.parse(SMALL), params).c
        assert f"typedef double ct_v{lanes} __attribute__((vector_size({8 * lanes})));" in c
        assert re.findall(r"typedef double ct_v(\d+)", c) == [str(lanes)]
        loads = re.findall(r"ct_v(\d+) (ct_r\d+); __builtin_memcpy\(&\2, &\w+\[[^]]*\], sizeof \2\);", c)
        assert loads and {int(n) for n, _ in loads} == {lanes}
        assert {count for _, _, count, write in seen if not write} == {lanes}


def test_ct_vector_follows_avx2(tmp_path):
    # the tiles are compiled where the CPU has AVX2 (or -DCT_VECTOR=1), the loops elsewhere
    src = E.emit_c(ct.parse(SMALL), {"E": 2, "n": 3, "p": 3, "m": 7}, name="tr_avx")
    (tmp_path / src.header).write_text(src.h)
    (tmp_path / "tr_avx.c").write_text(src.c)

    def tiles_compiled(*flags: str) -> bool:
        done = subprocess.run([str(CC), "-E", *flags, "tr_avx.c"], cwd=tmp_path, capture_output=True, text=True,
                              check=True)
        return "memcpy(&ct_r0" in done.stdout

    assert tiles_compiled("-mavx2") and tiles_compiled("-mno-avx", "-DCT_VECTOR=1")
    assert not tiles_compiled("-mavx", "-mno-avx2") and not tiles_compiled("-mavx2", "-DCT_VECTOR=0")


# --------------------------------------------------------------------------
# Bugs found in review r15t, fixed (they were strict xfails)
# --------------------------------------------------------------------------


def compiles(src: Any, directory: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    (directory / src.header).write_text(src.h)
    (directory / f"{src.name}.c").write_text(src.c)
    return subprocess.run([str(CC), *CFLAGS, *flags, "-c", f"{src.name}.c", "-o", f"{src.name}.o"], cwd=directory,
                          capture_output=True, text=True, check=False)


def test_an_allocation_named_memcpy_compiles_on_the_tile_path(tmp_path):
    src = E.emit_c(ct.parse(SMALL.replace(" A", " memcpy")), {"E": 2, "n": 3, "p": 5, "m": 7}, name="tr_memcpy")
    assert "memcpy(&ct_r0" in src.c
    assert compiles(src, tmp_path, "-DCT_VECTOR=0").returncode == 0  # the loops compile
    done = compiles(src, tmp_path, "-DCT_VECTOR=1")
    assert done.returncode == 0, done.stderr  # "called object 'memcpy' is not a function"


def test_a_kernel_named_after_a_string_h_function_is_refused_or_compiles(tmp_path):
    try:
        src = E.emit_c(ct.parse(SMALL), {"E": 2, "n": 3, "p": 5, "m": 7}, name="strerror")
    except ct.TeilInputError:
        return  # refused, like the names of C_LIBRARY
    assert compiles(src, tmp_path, "-DCT_VECTOR=0").returncode == 0
    done = compiles(src, tmp_path, "-DCT_VECTOR=1")
    assert done.returncode == 0, done.stderr  # "conflicting types for 'strerror'"


def test_an_input_whose_extent_equals_the_rows_by_an_assume_is_emitted(tmp_path):
    # A : [m, n] is read along t's rows of p elements, p given, m = p only by the assume:
    # emit-c raised ValueError (exit 70 from the CLI) in Emitter.zero_lanes
    text = SMALL.replace("input alloc A", "assume p == m\ninput alloc A").replace("[E, p, m]", "[E, p, p]")
    p = ct.parse(text)
    src = E.emit_c(p, {"E": 2, "n": 3, "p": 7}, name="tr_assume")
    for flag in ("-DCT_VECTOR=1", "-DCT_VECTOR=0"):
        lib = build([src], tmp_path, [*FLAGS, flag])
        assert_reference_doubles(lib, src, p, {"E": 2, "n": 3, "p": 7, "m": 7}, flag)


def test_no_tile_holds_more_accumulators_than_the_registers_hold():
    # docs/decisions.md: "at most 12 accumulator vectors, so that they stay in AVX2's 16
    # registers"; rows of 200 elements were tiles of 25 (and rows of 2048, 256: 25k lines of
    # C that GCC -O3 took 44 s to compile)
    # (one accumulator a row since: tiles of at most 12 rows, and rows of at most 12 vectors)
    c = E.emit_c(ct.parse(SMALL), {"E": 2, "n": 8, "p": 32, "m": 96}).c
    rows = re.findall(r"/\* rows \d+\.\.\d+ of \d+(?:, elements \d+\.\.\d+ of \d+)?: (\d+) x 1 vectors?", c)
    assert len(rows) == 36 and all(int(r) <= E.TILE_ACCUMULATORS for r in rows)  # 12 vectors x 3 tiles
    assert "CT_VECTOR" not in E.emit_c(ct.parse(SMALL), {"E": 2, "n": 8, "p": 4, "m": 200}).c
