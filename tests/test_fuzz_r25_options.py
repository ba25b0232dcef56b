"""Review r25's smaller findings: empty path options and an unusable proof cache are said,
not silently ignored (``--output ''`` printed the results instead of writing them;
``--smt2-dir ''`` wrote nothing; ``--cache FILE`` ran uncached without a word)."""

from __future__ import annotations

import pytest

from core_teil.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [
    ("run", "examples/matmul.teil", "--output", ""),
    ("prove", "examples/matmul.teil", "--smt2-dir", ""),
    ("prove", "examples/matmul.teil", "examples/bmm.teil", "--junit", ""),
    ("emit-c", "examples/matmul.teil", "-o", ""),
], ids=["run --output", "prove --smt2-dir", "prove --junit", "emit-c -o"])
def test_an_empty_path_is_refused(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2 and "an empty path" in err


def test_a_cache_that_is_a_file_is_said_for_one_file(capsys, tmp_path) -> None:
    f = tmp_path / "afile"
    f.write_text("x")
    code, _, err = run(capsys, "prove", "examples/matmul.teil", "--cache", str(f))
    assert code == 0 and f"note: the cache {f} is not a directory" in err


def test_a_cache_that_is_a_file_is_said_for_a_library(capsys, tmp_path) -> None:
    f = tmp_path / "afile"
    f.write_text("x")
    code, out, err = run(capsys, "prove", "examples/matmul.teil", "examples/bmm.teil", "--jobs", "1",
                         "--cache", str(f))
    assert code == 0 and f"note: the cache {f} is not a directory" in out + err


def test_a_usable_cache_gets_no_note(capsys, tmp_path) -> None:
    code, out, err = run(capsys, "prove", "examples/matmul.teil", "examples/bmm.teil", "--jobs", "1",
                         "--cache", str(tmp_path / "new"))
    assert code == 0 and "note: the cache" not in out + err
