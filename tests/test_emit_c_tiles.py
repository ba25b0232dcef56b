"""emit-c's vector tiles (issue 15, ``emit_c.tile_of``, ``Emitter.tiled``): a fused statement
``x[.., b, c] = Σ_m L · R`` computed for several rows ``b`` at once in vectors of 4 or 8
doubles, under ``#if CT_VECTOR`` (GCC or Clang with AVX2), beside the scalar loops.

Both paths compute the reference doubles bit for bit (each lane sums ``m = 1..n`` in order
from -0.0), with -0.0 sums, NaN and ±inf, for row extents that fill their vectors and that
leave lanes over; and the tile's accesses are proved like every other: a tile that stores
one lane too many, loads a row of R that was not padded, or prints its rows 0-based
produces no C.  (tests/test_emit_c_tiles_review.py, review r15t, runs both paths on the
statements tile_of accepts beyond interp and helm, and on those it must refuse.)"""

from __future__ import annotations

import re
import subprocess
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from tests.test_emit_c import CC, CFLAGS, ROOT, E, build, call
from tests.test_emit_c_loops import bits, minus_zero_inputs

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on this machine")

INTERP = ROOT / "examples" / "interp.teil"
HELM = ROOT / "examples" / "helm.teil"
NATIVE = [*CFLAGS, "-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math"]

#: (name, program, parameters): rows that fill a vector of 4 (n = 4) or of 8 (m = 8), that
#: leave lanes over (3, 5, 7, 13), A not square (m != n), and helm's S read both ways.
CASES = [("t_interp4", INTERP, {"E": 3, "m": 4, "n": 4}), ("t_interp7", INTERP, {"E": 3, "m": 7, "n": 7}),
         ("t_interp35", INTERP, {"E": 3, "m": 3, "n": 5}), ("t_interp85", INTERP, {"E": 3, "m": 8, "n": 5}),
         ("t_interp13", INTERP, {"E": 3, "m": 13, "n": 6}), ("t_helm5", HELM, {"E": 3, "n": 5}),
         ("t_helm13", HELM, {"E": 3, "n": 13})]


def native_has_vectors() -> bool:
    """Whether ``cc -march=native`` compiles the tiles (``CT_VECTOR``: GCC/Clang with AVX2)."""
    done = subprocess.run([str(CC), "-march=native", "-dM", "-E", "-x", "c", "-"], input="", capture_output=True,
                          text=True, check=False)
    return done.returncode == 0 and "__AVX2__" in done.stdout


def scalar_part(c: str) -> str:
    return "".join(re.findall(r"#else\n(.*?)#endif", c, re.S))


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    table = {name: E.emit_c(ct.load(str(path)), params, name=name) for name, path, params in CASES}
    d = tmp_path_factory.mktemp("emitc-tiles")
    libs = {"scalar": build(list(table.values()), d, [*NATIVE, "-DCT_VECTOR=0"])}
    if native_has_vectors():
        libs["vector"] = build(list(table.values()), d, NATIVE)
    return {"table": table, "libs": libs}


def test_interp_is_tiled_by_the_rows_of_its_blocks():
    seven = E.emit_c(ct.load(str(INTERP)), {"E": 3, "m": 7, "n": 7}).c
    # each statement: 7 rows of 7 elements, one vector of 8 each; A's copy padded to rows of 8
    assert seven.count("/* rows 1..7 of 7: 7 x 1 vectors of 8 doubles */") == 3
    assert "typedef double ct_v8 __attribute__((vector_size(64)));" in seven and "ct_v4" not in seven
    assert "ct_w_A_t1_0_w8[ct_k1 * 8 + 7] = 0.0;" in seven
    # t1 and t2 (blocks of one element) get rows of 8 and whole vectors; v, the caller's, 7 lanes
    assert "memcpy(&ct_e_t1_a[ct_k2 * 56 + 48], &" in seven and ", 8 * sizeof(double));" in seven
    # a part of a vector is stored lane by lane (a memcpy of it went through the stack)
    lanes = "\n".join(rf" *v\[ct_k1 \* 343 \+ ct_k2 \* 49 \+ {42 + i}\] = ct_t(\d+)_6\[{i}\];" for i in range(7))
    got = re.search(lanes, seven)
    assert got and len(set(got.groups())) == 1, got
    assert "_6[7]" not in seven and "7 * sizeof(double)" not in seven
    # the sums start from -0.0 and add L * R in the body's order, L read where it is used
    assert "{-0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0}" in seven
    assert re.search(r"ct_t\d+_6 \+= \(u\[ct_k1 \* 343 \+ ct_m1 \* 49 \+ ct_k2 \* 7 \+ 6\]\) \* ct_r0;", seven)
    four = E.emit_c(ct.load(str(INTERP)), {"E": 3, "m": 4, "n": 4}).c
    assert four.count("/* rows 1..4 of 4: 4 x 1 vectors of 4 doubles */") == 3 and "ct_v8" not in four
    assert "_w4" not in four  # rows of 4 fill their vectors: A's copy is the transposed one


def test_long_rows_are_split_into_tiles_of_at_most_twelve_vectors():
    helm = E.emit_c(ct.load(str(HELM)), {"E": 2, "n": 13}).c
    # rows of 13 are 2 vectors of 8, each computed in tiles of at most 12 rows (one accumulator
    # a row), cut evenly: 7 + 6
    for half in ("1..8", "9..16"):
        for rows in ("1..7 of 13, elements {}: 7", "8..13 of 13, elements {}: 6"):
            assert helm.count(f"/* rows {rows.format(half + ' of 16')} x 1 vectors of 8 doubles */") == 6
    # S is read along the elements both as S[c, m] (transposed) and as S[m, c]: two padded copies
    assert "ct_w_S_t1_0_w16" in helm and "ct_w_S_t0_1_w16" in helm


def test_what_is_not_a_tile_keeps_the_scalar_loops_only():
    p = ct.load(str(INTERP))
    assert "CT_VECTOR" not in E.emit_c(p, {"E": 3, "m": 3, "n": 17}).c  # a Σ of 17 accumulates
    assert "CT_VECTOR" not in E.emit_c(p, None).c  # symbolic extents
    matmul = E.emit_c(ct.load(str(ROOT / "examples" / "matmul.teil")), {"l": 2, "m": 3, "n": 4}).c
    assert "CT_VECTOR" not in matmul  # not a fused group


@pytest.mark.parametrize("path", ["scalar", "vector"])
@pytest.mark.parametrize("name,program,params", CASES, ids=[c[0] for c in CASES])
def test_tiles_and_loops_compute_the_reference_doubles_bit_for_bit(kernels, path, name, program, params):
    lib = kernels["libs"].get(path)
    if lib is None:
        pytest.skip("cc -march=native has no AVX2: the tiles are not compiled here")
    src = kernels["table"][name]
    assert "#if CT_VECTOR" in src.c
    p = ct.load(str(program))
    for seed in (1, 2):
        inputs = minus_zero_inputs(p, params, seed)
        want = ct.evaluate(p, inputs, params)["v"]
        assert np.isnan(want[1]).any() and np.isfinite(want[2]).all()
        for work in (False, True):
            rc, got = call(lib, src, inputs, params, work=work)
            assert rc == 0
            np.testing.assert_array_equal(bits(got["v"]), bits(want), err_msg=f"{name} {path} seed {seed}")


def test_the_tiles_compile_without_a_warning_under_strict_flags(tmp_path):
    src = E.emit_c(ct.load(str(HELM)), {"E": 2, "n": 13}, name="t_strict")
    (tmp_path / src.header).write_text(src.h)
    (tmp_path / "t_strict.c").write_text(src.c)
    for extra in (["-march=native"], ["-mavx2"], []):
        done = subprocess.run([str(CC), *CFLAGS, *extra, "-c", "t_strict.c", "-o", "t_strict.o"], cwd=tmp_path,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr


def test_a_tile_storing_one_lane_too_many_is_caught_by_the_check(monkeypatch):
    real = E.Emitter.vector

    def one_more(self: Any, storage: Any, index: Any, lane: Any, first: int, count: int, write: bool = False) -> str:
        return real(self, storage, index, lane, first, count + 1 if write else count, write)

    monkeypatch.setattr(E.Emitter, "vector", one_more)
    # statement 1's first tile, whose block t1 has rows padded to 8: a ninth lane
    with pytest.raises(E.EmitCheckFailed, match=r"statement 1: write of ct_e_t1_a: index 3 ranges over 9, beyond "
                                                r"the extent 8") as err:
        E.emit_c(ct.load(str(INTERP)), {"E": 3, "m": 7, "n": 7})
    assert err.value.rule == "emit-c check: Lemma 4.3"


def test_a_tile_loading_rows_of_r_that_were_not_padded_is_caught_by_the_check(monkeypatch):
    real = E._Build.copies

    def unpadded(self: Any, groups: Any, storages: Any, slots: Any) -> list[str]:
        saved = dict(self.em.tiles)
        self.em.tiles.clear()  # the copies see no tile: A's copy keeps rows of 7
        try:
            return real(self, groups, storages, slots)
        finally:
            self.em.tiles.update(saved)

    monkeypatch.setattr(E._Build, "copies", unpadded)
    with pytest.raises(E.EmitCheckFailed, match=r"read of ct_w_A_t1_0: index 2 ranges over 8, beyond the "
                                                r"extent 7"):
        E.emit_c(ct.load(str(INTERP)), {"E": 3, "m": 7, "n": 7})


def test_a_block_whose_rows_are_not_padded_gets_only_its_own_lanes(monkeypatch):
    # the padding of t1's and t2's rows is what lets a tile store whole vectors; without it the
    # tile stores 7 lanes of each row, as into the caller's v
    monkeypatch.setattr(E._Build, "pad_rows", lambda self, storages, slots: None)
    c = E.emit_c(ct.load(str(INTERP)), {"E": 3, "m": 7, "n": 7}).c
    assert "ct_e_t1_a[ct_k2 * 49 + 48] = ct_t" in c and ", 8 * sizeof(double));" not in c
    assert "ct_e_t1_a[ct_k2 * 49 + 49] = " not in c and "_6[7]" not in c


def test_a_lane_stored_past_its_row_is_caught(monkeypatch):
    # each lane of a part of a vector is an access the check sees: one lane further is a write
    # past v's last element
    real = E.Emitter.lane
    monkeypatch.setattr(E.Emitter, "lane", lambda self, storage, index, lane, at: real(self, storage, index, lane,
                                                                                        at + 1))
    with pytest.raises(E.EmitCheckFailed, match=r"write of v: index 4 ranges over 8, beyond the extent 7"):
        E.emit_c(ct.load(str(INTERP)), {"E": 3, "m": 7, "n": 7})


def test_a_tile_whose_rows_are_off_by_one_is_caught(monkeypatch, tmp_path):
    # the rows printed as constants 0-based where the index maps are 1-based: row 1 reads index 0
    real = E.Emitter.tiled

    def shifted(self: Any, st: Any, tile: Any, target: Any, storages: Any) -> list[str]:
        saved = E.ext
        monkeypatch.setattr(E, "ext", lambda base, pad=None: saved(base - 1 if isinstance(base, int) else base, pad))
        try:
            return real(self, st, tile, target, storages)
        finally:
            monkeypatch.setattr(E, "ext", saved)

    monkeypatch.setattr(E.Emitter, "tiled", shifted)
    with pytest.raises(E.EmitCheckFailed, match=r"ranges over 0, beyond the extent"):
        E.emit_c(ct.load(str(INTERP)), {"E": 3, "m": 7, "n": 7})


def test_the_last_tiled_statement_prefetches_the_next_block_of_the_batched_inputs():
    # interp: statement 3 hints u's next block (343 doubles, 43 lines) into the caches, 7 lines
    # in each of its 7 outer iterations, so that statement 1 of the next element finds it there
    c = E.emit_c(ct.load(str(INTERP)), {"E": 50000, "m": 7, "n": 7}).c
    hint = ("if (ct_k1 + 1 < 50000) for (ptrdiff_t ct_q = ct_k2 * 7; ct_q < ct_k2 * 7 + 7; ++ct_q) "
            "if (ct_q * 8 < 343) __builtin_prefetch(&u[(ct_k1 + 1) * 343 + ct_q * 8], 0, 3);")
    assert c.count("__builtin_prefetch") == 1 and hint in c
    assert c.index(hint) > c.index("/* statement 3") and hint not in scalar_part(c)  # the tiles' path only
    # helm: 2197 doubles (275 lines) over 13 iterations of statement 7; D is the same for every
    # element and S is read from its copies: only u is prefetched
    h = E.emit_c(ct.load(str(HELM)), {"E": 5000, "n": 13}).c
    assert h.count("__builtin_prefetch") == 1 and h.index("__builtin_prefetch") > h.index("/* statement 7")
    assert ("for (ptrdiff_t ct_q = ct_k2 * 22; ct_q < ct_k2 * 22 + 22; ++ct_q) "
            "if (ct_q * 8 < 2197) __builtin_prefetch(&u[(ct_k1 + 1) * 2197 + ct_q * 8], 0, 3);") in h
    # with the batch extent symbolic (cjit's chunks) the guard is the parameter
    s = E.emit_c(ct.load(str(INTERP)), {"m": 7, "n": 7}).c
    assert "if (ct_k1 + 1 < E) for (ptrdiff_t ct_q" in s
    # no fused group, or no tile: no hint
    assert "prefetch" not in E.emit_c(ct.load(str(INTERP)), {"E": 3, "m": 3, "n": 17}).c
    assert "prefetch" not in E.emit_c(ct.load(str(ROOT / "examples" / "bmm.teil")),
                                      {"nb": 2, "ni": 3, "nj": 4, "nk": 5}).c


EXPA_TWICE = """lang full

param E, n

input alloc B : [n, n, n]
input alloc A : [n, n]
alloc v : [E, n, n, n]
output alloc w : [E, n, n, n]

v = contr 2 6 (prod (expa 1 E B) A)
w = contr 2 6 (prod v A)
"""


def test_padded_statements_are_tiled_over_their_padded_extents():
    # interp n=5 with pad 4: rows of 8 (whole vectors, where unpadded 5 of 8 lanes are stored)
    p = ct.load(str(INTERP))
    padded = E.emit_c(p, {"E": 3, "m": 5, "n": 5}, 4).c
    assert padded.count("/* rows 1..8 of 8: 8 x 1 vectors of 8 doubles */") == 3
    assert "] = ct_t" not in padded  # no lane stored alone: every row is whole vectors
    # with padding a multiple of what the extents already are, the padded C is the unpadded C
    eight = E.emit_c(p, {"E": 16, "m": 8, "n": 8}, 8, name="k").c
    assert eight == E.emit_c(p, {"E": 16, "m": 8, "n": 8}, name="k").c
    # a padded expa's guard (in L, computed row by row) is tiled too
    both = E.emit_c(ct.parse(EXPA_TWICE), {"E": 3, "n": 5}, 4).c
    assert both.count("x 1 vectors of 8 doubles */") == 2 and "(ct_k1 < 3 ? B[" in both


@pytest.mark.parametrize("vector", [1, 0])
def test_padded_tiles_compute_the_padded_semantics(tmp_path, vector):
    # bit for bit ct.evaluate(..., pad) on the declared region, and the padding as Theorem 3
    # leaves it (0, or NaN where an undefined value reaches it), on the tiles and on the loops
    from tests.test_emit_c import random_inputs

    cases = [(ct.load(str(INTERP)), {"E": 3, "m": 5, "n": 5}, 4, "v"),
             (ct.load(str(HELM)), {"E": 2, "n": 5}, 4, "v"),
             (ct.parse(EXPA_TWICE), {"E": 3, "n": 5}, 4, "w"),
             (ct.parse(EXPA_TWICE), {"E": 3, "n": 3}, 2, "w")]
    sources = [E.emit_c(p, params, pad, name=f"pt{i}") for i, (p, params, pad, _) in enumerate(cases)]
    lib = build(sources, tmp_path, [*NATIVE, f"-DCT_VECTOR={vector}"])
    for (p, params, pad, out), src in zip(cases, sources, strict=True):
        assert ("x 1 vector" in src.c) and src.c.count("#if CT_VECTOR") >= 2
        for seed in (1, 2):
            x = random_inputs(p, params, seed)
            rc, got = call(lib, src, x, params)
            want = ct.evaluate(p, x, params, pad)[out]
            region = tuple(slice(0, n) for n in want.shape)
            assert rc == 0 and np.array_equal(bits(got[out][region]), bits(want)), (src.name, seed)
            rest = got[out].copy()
            rest[region] = 0.0
            assert np.all((rest == 0.0) | np.isnan(rest)), (src.name, seed)
