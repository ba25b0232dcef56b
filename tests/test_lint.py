"""``ruff`` clean (STYLE.md) is part of ``make test``, not only of ``make lint``: a long line in
a test file had passed CI (a347b8a) because nothing in the README's two commands ran ruff."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUFF = Path(sys.executable).with_name("ruff")


def ruff(*paths: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RUFF), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"),
                           *map(str, paths)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_the_project_is_ruff_clean() -> None:
    done = ruff("core_teil", "proofs", "tests", "bench")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_here_refuses_what_the_project_forbids(tmp_path: Path) -> None:
    # the project's own configuration (pyproject.toml) applies: its line length, its rules
    bad = tmp_path / "probe.py"
    bad.write_text("import os\n" + "x = '" + "y" * 130 + "'\n")
    done = ruff(bad)
    assert done.returncode == 1
    assert "F401" in done.stdout and "E501" in done.stdout
