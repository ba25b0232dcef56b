"""Review of emit-c's tiles of one vector a row (commit be400e9: ``Emitter.tiled``,
``emit_c.tile_of``): tests for the mutants tests/test_emit_c_tiles.py,
tests/test_emit_c_tiles_review.py and tests/test_emit_c.py let survive.

* The cut: every tile holds one vector of up to ``TILE_ACCUMULATORS`` rows; a column block's
  ``n`` rows are cut into ``ceil(n / 12)`` tiles of ``ceil(n / ceil(n / 12))`` rows, the last
  with the rest, covering the rows in order (rows 1-32, at and around the multiples of 12).
  "Evenly" is as even as that formula: 31 rows are 11 + 11 + 9, 25 are 9 + 9 + 7.
  (tests/test_emit_c_tiles_review.py's ``test_no_tile_holds_more_accumulators_than_the_registers_hold``
  matches only comments without an ``elements`` part, and its rows of 200 get no tile at all.)
* Rows of 12 vectors (96 elements) are tiled, of 13 (97) are not.
* An ``R · L`` body keeps its order in the tiles' products (bit for bit the two orders agree,
  so only the text tells them apart).
* The column blocks of a multi-vector row, through the emit-c check: a last vector stored
  whole into the caller's row of 13, or a load of ``R``'s next vector, produces no C.
* Both paths compute ``ct.evaluate``'s doubles for the shapes the cut changes at: rows of 12
  and 24, rows of 96 elements, and ``R · L`` with rows of two vectors.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import core_teil as ct
from tests.test_emit_c import CC, ROOT, E
from tests.test_emit_c_tiles_review import ACCEPTED, SMALL, assert_reference_doubles, both_paths

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on this machine")

HELM = ROOT / "examples" / "helm.teil"
#: t[e, b, f] = Σ_j A[f, j] · u[e, j, b]: the body is R · L (tests/test_emit_c_tiles_review.py).
RIGHT_FIRST = next(text for name, text, *_ in ACCEPTED if name == "right_first")
TILE = re.compile(r"/\* rows (\d+)\.\.(\d+) of (\d+)(?:, elements (\d+)\.\.(\d+) of (\d+))?: (\d+) x (\d+) "
                  r"vectors? of (\d+) doubles \*/")


def tiles(c: str) -> list[tuple[int, ...]]:
    """(first row, last row, rows, first element, last element, width, rows again, vectors, lanes)."""
    return [tuple(int(g) if g else 0 for g in m.groups()) for m in TILE.finditer(c)]


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@pytest.mark.parametrize("n_row", [1, 5, 11, 12, 13, 17, 23, 24, 25, 31, 32])
@pytest.mark.parametrize("m", [3, 13])
def test_each_column_block_is_cut_evenly_into_tiles_of_at_most_twelve_rows(n_row, m):
    c = E.emit_c(ct.parse(SMALL), {"E": 2, "n": 2, "p": n_row, "m": m}).c
    found = tiles(c)
    lanes = 4 if m <= 4 else 8
    width = ceil_div(m, lanes) * lanes
    count = ceil_div(n_row, E.TILE_ACCUMULATORS)
    rows = ceil_div(n_row, count)  # Tile.rows; the last tile has the rest
    sizes = [rows] * (count - 1) + [n_row - rows * (count - 1)]
    assert 1 <= sizes[-1] <= rows
    starts = [1 + sum(sizes[:k]) for k in range(count)]
    blocks = [(j * lanes + 1, (j + 1) * lanes) if width > lanes else (0, 0) for j in range(width // lanes)]
    want = [(s, s + r - 1, n_row, first, last, width if width > lanes else 0, r, 1, lanes)
            for first, last in blocks for s, r in zip(starts, sizes, strict=True)]
    assert found == want  # t's statement, the one tiled
    assert max(r for *_, r, _, _ in found) <= E.TILE_ACCUMULATORS


def test_rows_of_twelve_vectors_are_tiled_and_of_thirteen_are_not():
    # tile_of: a row wider than TILE_ACCUMULATORS vectors gets no tile (code size: one tile of
    # rows for every vector)
    twelve = E.emit_c(ct.parse(SMALL), {"E": 2, "n": 2, "p": 2, "m": 96}).c
    assert {(first, last) for _, _, _, first, last, *_ in tiles(twelve)} == \
        {(8 * j + 1, 8 * j + 8) for j in range(12)}
    assert "CT_VECTOR" not in E.emit_c(ct.parse(SMALL), {"E": 2, "n": 2, "p": 2, "m": 97}).c


def test_an_r_first_body_keeps_its_order_in_the_tiles_products():
    # IEEE multiplication commutes bit for bit (NaNs aside, which bits() equates): only the text
    # shows that R · L is printed R first and L · R L first, as the scalar loops print them
    rf = E.emit_c(ct.parse(RIGHT_FIRST), {"E": 2, "n": 3, "p": 5, "m": 13}).c
    products = re.findall(r"ct_t\d+_\d+ \+= (.*);", rf)
    assert products and all(re.fullmatch(r"ct_r[01] \* \(u\[[^]]*\]\)", p) for p in products), products[:3]
    lf = E.emit_c(ct.parse(SMALL), {"E": 2, "n": 3, "p": 5, "m": 13}).c
    products = re.findall(r"ct_t\d+_\d+ \+= (.*);", lf)
    assert products and all(re.fullmatch(r"\(u\[[^]]*\]\) \* ct_r[01]", p) for p in products), products[:3]


def test_a_last_vector_stored_whole_into_the_callers_row_is_caught_by_the_check(monkeypatch):
    # helm's rows of 13: the second vector holds elements 9..16, of which v has 9..13
    monkeypatch.setattr(E.Emitter, "lanes_stored", staticmethod(lambda stored, j, lanes: lanes))
    with pytest.raises(E.EmitCheckFailed, match=r"write of v: index 4 ranges over 16, beyond the extent 13") as err:
        E.emit_c(ct.load(str(HELM)), {"E": 2, "n": 13})
    assert err.value.rule == "emit-c check: Lemma 4.3"


def test_a_load_of_the_next_vector_of_r_is_caught_by_the_check(monkeypatch):
    # the second column block reading R's elements 17..24, past its copy's rows of 16
    real = E.Emitter.vector

    def next_one(self: Any, storage: Any, index: Any, lane: Any, first: int, count: int,
                 write: bool = False) -> str:
        return real(self, storage, index, lane, first + (8 if not write and first == 8 else 0), count, write)

    monkeypatch.setattr(E.Emitter, "vector", next_one)
    with pytest.raises(E.EmitCheckFailed, match=r"read of ct_w_S_t\d_\d_w16: index 2 ranges over 24, beyond the "
                                                r"extent 16"):
        E.emit_c(ct.load(str(HELM)), {"E": 2, "n": 13})


#: (name, program, parameters): the shapes the cut and the column blocks change at.
CASES = [("r3_rows12", SMALL, {"E": 2, "n": 3, "p": 12, "m": 13}),
         ("r3_rows24", SMALL, {"E": 2, "n": 3, "p": 24, "m": 5}),
         ("r3_width96", SMALL, {"E": 2, "n": 3, "p": 2, "m": 96}),
         ("r3_right_first13", RIGHT_FIRST, {"E": 2, "n": 3, "p": 13, "m": 13})]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    table = {name: E.emit_c(ct.parse(text), params, name=name) for name, text, params in CASES}
    return both_paths(table, tmp_path_factory.mktemp("emitc-tiles-review3"))


@pytest.mark.parametrize("path", ["vector", "scalar"])
@pytest.mark.parametrize("name,text,params", CASES, ids=[c[0] for c in CASES])
def test_both_paths_compute_the_reference_where_the_cut_changes(kernels, path, name, text, params):
    src = kernels["table"][name]
    assert "#if CT_VECTOR" in src.c
    assert_reference_doubles(kernels["libs"][path], src, ct.parse(text), params, f"{name} {path}")
