"""Bad inputs to the proof cache found by review r17 (findings 1-4 and 6): each is bad input with
a message, or costs the cache and not the proof; never exit 70, never a hang."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core_teil.cli import main
from core_teil.errors import TeilInputError
from core_teil.proving import cache as cache_module
from core_teil.proving.cache import ProofCache

AXPY = str(Path(__file__).resolve().parent.parent / "examples" / "axpy.teil")
KEY = "k" * 64


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("CORE_TEIL_CACHE_KEY", KEY)


def warm_entry(tmp_path: Path) -> Path:
    """The kernel entry a proof of axpy leaves in ``tmp_path / 'c'``."""
    assert main(["prove", AXPY, "--cache", str(tmp_path / "c")]) == 0
    (entry,) = (tmp_path / "c" / "v1" / "kernels").rglob("*.json")
    return entry


def test_a_key_that_is_not_utf8_is_a_key(tmp_path: Path) -> None:
    """Finding 1: the variable's bytes are the key (it was exit 70, UnicodeEncodeError)."""
    env = {**os.environ, "CORE_TEIL_CACHE_KEY": "x"}
    env_b = {k.encode(): v.encode() for k, v in env.items()}
    env_b[b"CORE_TEIL_CACHE_KEY"] = b"\xff\xfe" * 20
    code = "import sys; from core_teil.cli import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.run([sys.executable, "-c", code, "prove", AXPY, "--cache", str(tmp_path / "c")],
                         env=env_b, capture_output=True, timeout=300)  # type: ignore[arg-type]
    assert run.returncode == 0, run.stderr.decode()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "environb", {b"CORE_TEIL_CACHE_KEY": b"\xff\xfe" * 20})
        assert cache_module.secret_key() == b"\xff\xfe" * 20


def test_without_a_home_directory_the_cache_is_bad_input(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Finding 2: no HOME and no passwd entry (a container's --user) made platformdirs raise
    RuntimeError, exit 70; now the message says what to set."""
    import platformdirs

    def no_home(*args: object, **kwargs: object) -> str:
        raise RuntimeError("could not determine home directory")

    monkeypatch.setattr(platformdirs, "user_cache_dir", no_home)
    monkeypatch.setattr(platformdirs, "user_config_dir", no_home)
    with pytest.raises(TeilInputError, match="needs a home directory, and there is none: set HOME or XDG_CACHE_HOME"):
        cache_module.default_directory()
    monkeypatch.delenv("CORE_TEIL_CACHE_KEY")
    cache_module._key_file.cache_clear()
    try:
        with pytest.raises(TeilInputError, match="set HOME or XDG_CONFIG_HOME, or give CORE_TEIL_CACHE_KEY"):
            cache_module.secret_key()
    finally:
        cache_module._key_file.cache_clear()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_planted_as_an_entry_is_not_waited_on(tmp_path: Path) -> None:
    """Finding 3: opening a FIFO blocks until a writer comes; anyone who can write a shared
    cache could plant one.  The entry is now read only if it is a regular file."""
    entry = warm_entry(tmp_path)
    entry.unlink()
    os.mkfifo(entry)
    code = f"import sys; from core_teil.cli import main; sys.exit(main(['prove', {AXPY!r}, '--cache', " \
           f"{str(tmp_path / 'c')!r}]))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr.decode()


def test_an_endless_file_planted_as_an_entry_is_not_read_to_the_end(tmp_path: Path) -> None:
    """Finding 3: a symbolic link to /dev/zero was read until memory ran out; a link is not
    followed, and an entry larger than MAX_ENTRY_BYTES is not read whole."""
    entry = warm_entry(tmp_path)
    raw = entry.read_bytes()
    entry.unlink()
    entry.symlink_to("/dev/zero")
    assert cache_module._read_entry(str(entry)) is None
    entry.unlink()
    entry.write_bytes(raw)
    assert cache_module._read_entry(str(entry)) == raw
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cache_module, "MAX_ENTRY_BYTES", len(raw) - 1)
        assert cache_module._read_entry(str(entry)) is None
    assert main(["prove", AXPY, "--cache", str(tmp_path / "c")]) == 0


def test_a_key_file_too_short_says_how_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 4: the message said '(None)'."""
    monkeypatch.delenv("CORE_TEIL_CACHE_KEY")
    path = tmp_path / "xdg-config" / "core-teil" / "cache-key"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"abc")
    cache_module._key_file.cache_clear()
    with pytest.raises(TeilInputError, match=r"cannot make the proof cache's key \(too short to be a key: "
                                             r"3 bytes, at least 32\); set CORE_TEIL_CACHE_KEY or use --no-cache"):
        cache_module.secret_key()


def test_an_empty_cache_directory_is_the_default_for_a_file_as_for_a_library(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 6: ``prove FILE --cache ''`` wrote ./v1 into the current directory."""
    monkeypatch.chdir(tmp_path)
    assert main(["prove", AXPY, "--cache", ""]) == 0
    assert not (tmp_path / "v1").exists()
    assert list((tmp_path / "xdg-cache" / "core-teil" / "v1" / "kernels").rglob("*.json"))
    assert ProofCache(cache_module.default_directory()).stats.rejected == 0
