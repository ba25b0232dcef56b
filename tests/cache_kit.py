"""What the proof-cache tests share: a private cache per test, and the kernels they cache.

A test module takes the cache with ``from tests.cache_kit import private_cache``: the fixture
is autouse, so every test of that module gets its own cache and config directories (the
user's are never touched) and a fixed HMAC key."""

from __future__ import annotations

from pathlib import Path

import pytest

KEY = "k" * 64
AXPY = "param n\ninput alloc a : []\ninput alloc x : [n]\ninput alloc y : [n]\noutput alloc z : [n]\n" \
       "z = add (mul a x) y\n"
# ill-typed (paper 000 Fig. 3a): typing-stmt1 refuted (by the solver, with a replayed model), the others proved
BAD = "lang full\nparam m, n, h\ninput alloc A : [m, h]\ninput alloc B : [h, n]\noutput alloc C : [m, n]\n" \
      "C = red 1 (diag 1 3 (prod A B))\n"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("CORE_TEIL_CACHE_KEY", KEY)


def library(tmp_path: Path, **files: str) -> Path:
    """A kernel library ``tmp_path/lib`` holding ``NAME.teil`` for each ``NAME=text``."""
    lib = tmp_path / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (lib / f"{name}.teil").write_text(text)
    return lib
