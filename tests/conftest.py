"""Test-session settings that keep the suite off the user's own files."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_made: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    # ct.compile builds C kernels into a disk cache (core_teil/native/cjit.py); the suite's go to
    # a directory of its own, not into ~/.cache/core-teil/cjit, unless the caller chose one.
    if "CORE_TEIL_CJIT_DIR" not in os.environ:
        os.environ["CORE_TEIL_CJIT_DIR"] = tempfile.mkdtemp(prefix="core-teil-cjit-tests-")
        _made.append(os.environ["CORE_TEIL_CJIT_DIR"])


def pytest_unconfigure(config: pytest.Config) -> None:
    for path in _made:
        shutil.rmtree(path, ignore_errors=True)
