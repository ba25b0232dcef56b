"""The folder layout is the architecture: each layer of ``core_teil/`` imports only the layers below it.

``lang`` (syntax, types) is the bottom; ``semantics`` reads programs; ``proving``
interprets the semantics in Z3; ``native`` runs (and emits C for) what ``proving``
certifies; ``teach`` shows derivations and traces and checks answers with the
prover; ``frontends`` build programs and may certify and compile them; the top
(``__init__``, ``cli``) wires everything.  An import against the order -- the language importing the
teaching layer for its notebook reprs, the prover importing the command line
-- is a cycle waiting to happen, and fails here with the file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "core_teil"

#: Which layers each layer may import (``errors`` and the package's ``__version__`` are everyone's).
ALLOWED: dict[str, set[str]] = {
    "lang": set(),
    "semantics": {"lang"},
    "proving": {"lang", "semantics"},
    "native": {"lang", "semantics", "proving"},
    "teach": {"lang", "semantics", "proving"},
    "frontends": {"lang", "semantics", "proving", "native"},
}
LAYERS = set(ALLOWED)
SHARED = {"errors", "__version__"}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE).parts
    return rel[0] if len(rel) > 1 else "top"


def imported_layers(source: str, here: str) -> list[tuple[int, str]]:
    """(line, layer) of every ``core_teil`` import of a module in layer ``here``, lazy ones included."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            if node.level == 0:
                if not (node.module or "").startswith("core_teil"):
                    continue
                parts = (node.module or "").split(".")[1:]
            else:
                base: list[str] = [] if here == "top" else [here]
                base = base[: max(0, len(base) - (node.level - 1))]
                parts = [*base, *(node.module.split(".") if node.module else [])]
            targets = [parts[0]] if parts else names
            out.extend((node.lineno, t) for t in targets)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("core_teil."):
                    out.append((node.lineno, a.name.split(".")[1]))
    return out


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if layer_of(p) in LAYERS)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_each_layer_imports_only_the_layers_below_it(path: Path) -> None:
    here = layer_of(path)
    bad = [f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}"
           for line, target in imported_layers(path.read_text(), here)
           if target != here and target not in SHARED and target not in ALLOWED[here]]
    assert not bad, f"{here} may import only {sorted(ALLOWED[here])}: " + "; ".join(bad)


def test_the_check_sees_a_wrong_import() -> None:
    """The check says no on a wrong input: the language importing the teaching layer (lazily, as the
    notebook reprs once did), relatively and absolutely, and the prover importing the command line."""
    lazy = "def f():\n    from ..teach.teaching import program_html\n    return program_html\n"
    assert imported_layers(lazy, "lang") == [(2, "teach")]
    assert imported_layers("import core_teil.teach.trace as tr\n", "lang") == [(1, "teach")]
    assert imported_layers("from .. import cli\n", "proving") == [(1, "cli")]
    assert imported_layers("from .syntax import Var\n", "lang") == [(1, "lang")]
    assert "teach" not in ALLOWED["lang"] and "cli" not in ALLOWED["proving"]


def test_every_module_belongs_to_a_layer() -> None:
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    # The top wires the layers: the API, the CLI, the errors every layer raises, the ONNX backend
    # (a public path of SPEC.md) and the library driver (reads every format, proves in parallel).
    assert flat == ["__init__.py", "cli.py", "errors.py", "library.py", "onnx_backend.py"], \
        f"modules outside every layer: {flat}"
