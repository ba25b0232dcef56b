"""Which solvers a run used, and whether they are the ones ``requirements.lock`` names.

A ``verified:`` line is a statement about the solvers that produced it: Z3's
outcomes and the resource count it spends move between releases (5.4.0 and
5.4.1 differ; 4.13 and 4.15 leave lemmas unknown at the same rlimit).  So
``make verify`` prints the versions it ran with, and says loudly when they
are not the locked ones (docs/decisions.md, "The lock").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

#: The solver distributions whose versions a run depends on.
SOLVERS = ("z3-solver", "cvc5")
#: ``requirements.lock`` of the source tree this package was installed from (absent in a wheel).
LOCK = Path(__file__).resolve().parent.parent / "requirements.lock"
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)")


def canonical(name: str) -> str:
    """PEP 503 normalisation, so that ``Z3_Solver`` and ``z3-solver`` are one name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(lock: Path = LOCK) -> dict[str, str] | None:
    """Name -> version of every pin in the lock, or ``None`` where there is no lock."""
    try:
        text = lock.read_text(encoding="utf-8")
    except OSError:
        return None
    pins: dict[str, str] = {}
    for line in text.splitlines():
        if m := _PIN.match(line):
            pins[canonical(m["name"])] = m["version"]
    return pins


def installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Versions:
    """The solvers of this run against the lock."""

    used: dict[str, str | None]
    pinned: dict[str, str] | None

    @property
    def drift(self) -> list[str]:
        """One sentence per solver whose installed version is not the locked one."""
        if self.pinned is None:
            return []
        out = []
        for name, version in self.used.items():
            want = self.pinned.get(name)
            if want is not None and version != want:
                out.append(f"{name} {version or 'not installed'} is in use, but requirements.lock pins {want}")
        return out

    def line(self) -> str:
        used = ", ".join(f"{n} {v or 'not installed'}" for n, v in self.used.items())
        if self.pinned is None:
            return f"solvers: {used} (no requirements.lock beside this package to compare with)"
        return f"solvers: {used} ({'as locked' if not self.drift else 'NOT as locked'})"


def versions(lock: Path = LOCK) -> Versions:
    return Versions({name: installed(name) for name in SOLVERS}, locked(lock))


def warning(v: Versions) -> list[str]:
    """The loud part: a banner that names every difference from the lock."""
    if not v.drift:
        return []
    bar = "!" * 78
    return [bar, *(f"!! {d}" for d in v.drift),
            "!! outcomes and rlimit counts below are not those of the locked toolchain; `make install`",
            "!! restores it (`make verify-latest` compares the newest releases deliberately)", bar]


__all__ = ["LOCK", "SOLVERS", "Versions", "canonical", "installed", "locked", "versions", "warning"]
