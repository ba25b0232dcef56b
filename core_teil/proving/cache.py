"""A proof cache on disk, keyed by what was proved (issue 17, item 2).

Two kinds of entries, both content-addressed:

* an **obligation entry** (``proved`` only) is keyed by the SHA-256 of the obligation's exported SMT-LIB2
  script (:func:`core_teil.proving.smtlib.script` without its comment lines, so renaming a
  file changes nothing), the number of its hypotheses (the vacuity check decides those
  alone), the solver's name and the version it reports at run time, the ``rlimit`` and the
  seed.  The script is the whole question the solver is asked, so an entry is sound for any
  program, any version of the obligation generator and any statement number that asks it:
  a kernel that changes re-proves exactly the obligations whose text changed;
* a **kernel entry** is keyed by the program's canonical text (``prove.program_hash``), its
  parameters and pad, the same solver fields, and a fingerprint of the source files of the
  generator (``lang/``, ``semantics/``, ``proving/``): it lets an unchanged kernel skip even
  generating its obligations (which costs as much as proving the small ones).  It is sealed
  like any entry and holds its obligations' verdicts (its certificate) and keys, so it is served
  on one read.  A **proof** is served if it is valid, every verdict in it says ``proved``, and
  every obligation entry it names is still there (an entry the audit evicted takes the kernel
  entry out of service).  A **refutation** (every verdict proved or refuted, at least one
  refuted, each with its counterexample) is stored with the text its run printed and served as
  exactly that certificate, exit code 1, for the same file name and timeout; its ``proved``
  verdicts too must name obligation entries that are there, which no refuted obligation has,
  so a refutation relabelled as a proof is refused.

What is never served: ``unknown`` (never stored: a later run with more rlimit may prove it,
and an unknown must never become ``proved``), nor a kernel entry with an unknown among its
verdicts.

What the cache trusts: the holders of its key.  Every entry carries a checksum, an
HMAC-SHA256 under a secret key over its kind, key and payload, and its payload repeats the
fields of its key; an entry that is truncated, edited by hand, copied under another key's
name, written by another format or checksummed with another key (or with plain SHA-256) is
ignored (and counted as ``rejected``), and the obligation is decided again.  The key is
``$CORE_TEIL_CACHE_KEY`` if set (give it to every machine that shares a cache with
``--cache DIR``), else 32 random bytes made on first use in the user's config directory
(mode 0600), outside the cache directory: whoever can write the cache but not read the key
cannot make it say ``proved``.  Whoever holds the key can.  ``audit=True`` (``core-teil
prove --cache-audit``) re-decides every entry that would be served and reports each one the
solver disagrees with (and evicts it), for a cache whose writers one does not trust.

Writers never lock: an entry is written to a temporary file in its directory and renamed
over its name (``os.replace``, atomic on POSIX), so a reader sees either no entry or a
complete one, and two writers of one key write the same bytes.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: a warm library run serves certificates without them
    from .report import ObligationResult, Report

#: Bumped when the layout or the meaning of an entry changes: old entries are then not read.
FORMAT = 1
SEED = 42


def default_directory() -> Path:
    """``$XDG_CACHE_HOME/core-teil`` (platformdirs' user cache directory where it is installed)."""
    try:
        from platformdirs import user_cache_dir
    except ImportError:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "core-teil"
    return Path(_without_home(lambda: user_cache_dir("core-teil", appauthor=False), "XDG_CACHE_HOME",
                              "--cache DIR"))


def _config_directory() -> Path:
    try:
        from platformdirs import user_config_dir
    except ImportError:
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        return Path(base) / "core-teil"
    return Path(_without_home(lambda: user_config_dir("core-teil", appauthor=False), "XDG_CONFIG_HOME",
                              "CORE_TEIL_CACHE_KEY"))


def _without_home(where: Callable[[], str], variable: str, instead: str) -> str:
    """platformdirs raises RuntimeError when there is no home directory (``HOME`` unset and a
    user without a passwd entry, as in a container run with ``--user``): bad input, not a bug."""
    try:
        return where()
    except (RuntimeError, KeyError):
        from ..errors import TeilInputError

        raise TeilInputError(f"the proof cache needs a home directory, and there is none: set HOME or {variable}, "
                             f"or give {instead}, or use --no-cache") from None


def secret_key() -> bytes:
    """The key of the entries' checksums (module docstring): ``$CORE_TEIL_CACHE_KEY``, or the
    user's key file, made atomically on first use (several processes may race to make it)."""
    # Bytes as the environment holds them: a key need not be UTF-8 (os.environ would have
    # turned such bytes into surrogates that .encode() refuses).
    given = os.environb.get(b"CORE_TEIL_CACHE_KEY") if os.supports_bytes_environ else \
        os.environ.get("CORE_TEIL_CACHE_KEY", "").encode("utf-8", "surrogateescape")
    if given:
        return given
    path = _key_file(os.environ.get("XDG_CONFIG_HOME"), os.path.expanduser("~"))
    try:
        return _read_key(path)
    except OSError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".cache-key.", dir=path.parent)  # mode 0600
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(32).hex().encode())
        try:
            os.link(tmp, path)  # fails if another process made it first: then theirs is the key
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
        return _read_key(path)
    except OSError as exc:
        from ..errors import TeilInputError

        raise TeilInputError(f"{path}: cannot make the proof cache's key ({exc.strerror or exc}); set "
                             f"CORE_TEIL_CACHE_KEY or use --no-cache") from None


@lru_cache(maxsize=8)
def _key_file(xdg_config_home: str | None, home: str) -> Path:
    """Where the key file is; cached per environment (a library run opens one cache per
    kernel, and platformdirs costs 0.1 ms a call)."""
    return _config_directory() / "cache-key"


def _read_key(path: Path) -> bytes:
    key = path.read_bytes().strip()
    if len(key) < 32:
        raise OSError(errno.EINVAL, f"too short to be a key: {len(key)} bytes, at least 32")
    return key


#: The largest entry read; entries are kilobytes (a certificate of thousands of obligations
#: is a few megabytes).
MAX_ENTRY_BYTES = 64 << 20


def _read_entry(path: str) -> bytes | None:
    """The bytes of the regular file at ``path``, or ``None``: absent, not a regular file (a
    FIFO would block the run, ``/dev/zero`` fill the memory: anyone who can write a shared
    cache could plant them, no key needed), or larger than :data:`MAX_ENTRY_BYTES`."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    # os.read on the descriptor, sized by fstat: a file object per entry was a tenth of a warm
    # run's lookups; the loop still stops at the limit if the file grows while it is read
    chunks: list[bytes] = []
    size = 0
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        want = min(st.st_size, MAX_ENTRY_BYTES) + 1
        while size <= MAX_ENTRY_BYTES:
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            want = MAX_ENTRY_BYTES + 1 - size
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks) if size <= MAX_ENTRY_BYTES else None


#: A key as :func:`_sha` makes it (the name of an entry's file).
_KEY = re.compile("[0-9a-f]{64}")


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _sha(*parts: Any) -> str:
    return hashlib.sha256(_canonical(list(parts))).hexdigest()


def script_body(text: str) -> str:
    """The script without its leading ``;`` comment lines (file name, statement text, label)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) and lines[i].startswith(";"):
        i += 1
    return "\n".join(lines[i:])


#: The modules of ``proving/`` that turn a program into obligations, verdicts and the report;
#: with every module of ``lang/`` (the parser: a kernel entry may be keyed by the file's bytes)
#: and ``semantics/``.  Not ``library``, ``cache``, ``equiv*``: they decide no kernel's verdict.
GENERATOR = ("obligations", "simulation", "prove", "limits", "smtlib", "report", "counterexample", "replay")


@lru_cache(maxsize=1)
def generator_fingerprint() -> str:
    """SHA-256 of the source files that turn a program's text into obligations and verdicts.

    A kernel entry maps a program to its obligations' verdicts; that map is this code, so the
    code is part of the key (``__version__`` is not bumped by every change)."""
    root = Path(__file__).resolve().parent.parent
    files = [*(root / "lang").glob("*.py"), *(root / "semantics").glob("*.py"),
             *(root / "proving" / f"{m}.py" for m in GENERATOR)]
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


@dataclass(frozen=True)
class Solver:
    """The fields of a key that say who decided and under which limits."""

    name: str
    version: str
    rlimit: int
    seed: int = SEED

    def fields(self) -> dict[str, Any]:
        return {"solver": self.name, "solver_version": self.version, "rlimit": self.rlimit, "seed": self.seed}


@dataclass
class Stats:
    """What one run asked of the cache (mutable: counted as it goes)."""

    hits: int = 0  # obligations served as proved
    misses: int = 0  # obligations decided by the solver
    stores: int = 0
    rejected: int = 0  # entries found but not valid (checksum, key, format)
    kernel_hits: int = 0
    disagreements: list[str] = field(default_factory=list)  # audit: entries the solver contradicted

    def add(self, other: Stats) -> None:
        self.hits += other.hits
        self.misses += other.misses
        self.stores += other.stores
        self.rejected += other.rejected
        self.kernel_hits += other.kernel_hits
        self.disagreements += other.disagreements


class ProofCache:
    """One cache directory (see the module docstring for what it holds and trusts)."""

    def __init__(self, directory: str | Path, audit: bool = False) -> None:
        self.root = Path(directory)
        self.audit = audit
        self.key = secret_key()
        self.stats = Stats()
        #: The key of each obligation :meth:`discharge` saw, by number, since :meth:`start_kernel`.
        self.recorded: dict[int, str] = {}

    # -- keys -----------------------------------------------------------------

    @staticmethod
    def obligation_key(text: str, hypotheses: int, solver: Solver) -> str:
        return _sha("obligation", FORMAT, hashlib.sha256(script_body(text).encode()).hexdigest(), hypotheses,
                    solver.fields())

    @staticmethod
    def kernel_key(program_hash: str, params: dict[str, int], pad: int | None, solver: Solver) -> str:
        """The key of a kernel by its canonical text (``prove.program_hash``)."""
        return _sha("kernel", FORMAT, program_hash, sorted(params.items()), pad, solver.fields(),
                    generator_fingerprint())

    @staticmethod
    def source_key(source: str, params: dict[str, int], pad: int | None, solver: Solver) -> str:
        """The key of a ``.teil`` kernel by its file's text, so that an unchanged file is answered
        without parsing it (half of a warm run's time); ``params`` are all those given, declared
        or not.  The parser is part of :func:`generator_fingerprint`."""
        return _sha("kernel-source", FORMAT, hashlib.sha256(source.encode()).hexdigest(), sorted(params.items()),
                    pad, solver.fields(), generator_fingerprint())

    # -- entries ----------------------------------------------------------------

    def _path(self, kind: str, key: str) -> str:
        # strings, not pathlib: a warm run reads thousands of entries
        return os.path.join(self.root, f"v{FORMAT}", kind, key[:2], f"{key}.json")

    def checksum(self, body: dict[str, Any]) -> str:
        return hmac.new(self.key, _canonical(body), hashlib.sha256).hexdigest()

    def seal(self, kind: str, key: str, payload: dict[str, Any]) -> dict[str, Any]:
        """An entry: its fields and the checksum over them."""
        body = {"format": FORMAT, "kind": kind, "key": key, "payload": payload}
        return {**body, "checksum": self.checksum(body)}

    def _signed_as_written(self, raw: bytes) -> bool:
        """Whether ``raw`` is an entry as :meth:`write` writes it, with a valid checksum, decided
        on its bytes.  :meth:`write` writes ``_canonical(entry)``, whose first field (sorted) is
        the checksum, so ``'{' + the rest`` is the body's canonical text; an entry that passes
        here parses to that body.  Anything else (written by hand, reformatted) goes the slow way
        in :meth:`read`.  A warm run checks thousands of entries, and re-encoding each body to
        check it was a sixth of its time."""
        head = b'{"checksum":"'
        end = len(head) + 64
        if not raw.startswith(head) or raw[end:end + 2] != b'",':
            return False
        mac = hmac.new(self.key, b"{" + raw[end + 2:], hashlib.sha256).hexdigest()
        return hmac.compare_digest(raw[len(head):end], mac.encode())

    def read(self, kind: str, key: str) -> dict[str, Any] | None:
        """The payload of a valid entry, or ``None`` (absent, or rejected and counted)."""
        raw = _read_entry(self._path(kind, key))
        if raw is None:
            return None
        try:
            entry = json.loads(raw)
            body = {k: entry[k] for k in ("format", "kind", "key", "payload")}
            signed = self._signed_as_written(raw) or (
                isinstance(entry["checksum"], str) and hmac.compare_digest(entry["checksum"], self.checksum(body)))
            ok = (signed and len(entry) == 5
                  and body["format"] == FORMAT and body["kind"] == kind and body["key"] == key
                  and isinstance(body["payload"], dict))
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            self.stats.rejected += 1
            return None
        return body["payload"]

    def write(self, kind: str, key: str, payload: dict[str, Any]) -> None:
        """Write an entry atomically (temporary file + ``os.replace``); a full or read-only disk
        costs the cache, never the proof."""
        path = self._path(kind, key)
        data = _canonical(self.seal(kind, key, payload))
        tmp = None
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=os.path.dirname(path))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
            tmp = None
            self.stats.stores += 1
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    def evict(self, kind: str, key: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self._path(kind, key))

    # -- obligations (called by prove.prove for each obligation) ------------------

    def discharge(self, ob: Any, number: int, text: str, solver: Solver,
                  decide: Callable[[], ObligationResult]) -> ObligationResult:
        """The verdict of one obligation: ``proved`` from a valid entry, else ``decide()``
        (and a ``proved`` verdict stored).  With ``audit`` every entry is re-decided."""
        from .report import ObligationResult, Status

        key = self.obligation_key(text, len(ob.hypotheses), solver)
        self.recorded[number] = key
        payload = self.read("obligations", key)
        served = payload is not None and payload == self._obligation_payload(text, len(ob.hypotheses), solver,
                                                                              payload.get("seconds", 0.0))
        if not served and payload is not None:
            self.stats.rejected += 1  # a valid checksum over fields that do not match its key
        if served and not self.audit:
            self.stats.hits += 1
            from ..lang.printer import format_stmt

            return ObligationResult(number, ob.name, ob.lemma, ob.stmt_no,
                                    format_stmt(ob.stmt) if ob.stmt is not None else "", Status.PROVED,
                                    0.0, label=ob.label)
        self.stats.misses += 1
        result = decide()
        if served and result.status is not Status.PROVED:
            self.stats.disagreements.append(f"{ob.label}: the cache says proved, the solver says {result.status}")
            self.evict("obligations", key)
        if result.status is Status.PROVED and not served:
            self.write("obligations", key, self._obligation_payload(text, len(ob.hypotheses), solver,
                                                                    round(result.seconds, 6)))
        return result

    @staticmethod
    def _obligation_payload(text: str, hypotheses: int, solver: Solver, seconds: float) -> dict[str, Any]:
        return {"status": "proved", "sha256": hashlib.sha256(script_body(text).encode()).hexdigest(),
                "hypotheses": hypotheses, **solver.fields(), "seconds": seconds}

    # -- kernels -----------------------------------------------------------------

    def lookup_kernel(self, key: str, solver: Solver, file: str, timeout: float | None) -> Report | None:
        """The report of an unchanged, decided kernel, rebuilt from its entry (:meth:`lookup_served`)."""
        served = self.lookup_served(key, solver, file, timeout)
        return None if served is None else report_from_json(served.certificate, file, timeout, served.excerpts)

    def lookup_certificate(self, key: str, solver: Solver, file: str, timeout: float | None) -> dict[str, Any] | None:
        """The certificate (``Report.to_json``) of :meth:`lookup_served`, or ``None``."""
        served = self.lookup_served(key, solver, file, timeout)
        return None if served is None else served.certificate

    def lookup_served(self, key: str, solver: Solver, file: str, timeout: float | None) -> Served | None:
        """An unchanged kernel's certificate for ``file`` and ``timeout``, as its cold run printed
        it; ``None`` unless the entry is valid and is either

        * a proof: every verdict in it says ``proved``, or
        * a refutation (:func:`decided_refutation`): every verdict says ``proved`` or ``refuted``,
          at least one ``refuted``, each refuted one with its counterexample, and it was printed
          for this ``file`` and ``timeout`` (its counterexamples quote the file by name, its
          heading the timeout: for another name it is a miss, and the kernel is proved again),

        and every obligation entry a ``proved`` verdict in it names is still there.  A served
        entry can say ``proved`` only where each of its obligations' verdicts does.

        One authenticated read per kernel: the kernel entry is sealed like any other and binds its
        obligations' verdicts (its certificate) and their keys, so re-reading and re-checking each
        obligation entry would only re-establish what its checksum already says (it was a quarter of
        a warm run: 4,871 reads for 1,019 kernels).  What the obligation entries still decide is
        whether they are *there*: an entry the audit evicted (or a user deleted) takes every kernel
        entry naming it out of service.  A present but damaged obligation entry does not: it can
        only cost that obligation's own lookup, never make the kernel entry say more than it says."""
        payload = self.read("kernels", key)
        if payload is None:
            return None
        try:
            refutation = payload.get("refutation")
            if refutation is not None and (refutation["file"] != file or refutation["timeout"] != timeout):
                return None  # printed for another name or timeout: proved again, not refused
            # a refutation's certificate is kept as the text its run wrote: the entry's canonical
            # form sorts every dictionary, and a counterexample's are in the order it shows them
            cert = payload["report"] if refutation is None else json.loads(refutation["certificate"])
            keys = payload["obligations"]
            obs = cert["obligations"]
            ok = (set(payload) == {"report" if refutation is None else "refutation", "obligations", "solver"}
                  and payload["solver"] == solver.fields() and len(keys) == len(obs))
            if refutation is None:  # a proof
                ok = ok and cert["ok"] is True and all(o["status"] == "proved" for o in obs)
            else:
                excerpts = refutation["excerpts"]
                ok = ok and decided_refutation(cert) and isinstance(refutation["text"], str) \
                    and isinstance(excerpts, list) and len(excerpts) == len(obs) \
                    and all(e is None or isinstance(e, str) for e in excerpts)
            ok = ok and all(k is None or self._present("obligations", k)
                            for k, o in zip(keys, obs, strict=True) if o["status"] == "proved")
            served = None
            if ok and refutation is None:
                served = Served(served_certificate(cert, file, timeout))
            elif ok:
                served = Served(served_refutation(cert, file, timeout), refutation["text"], tuple(excerpts))
        except (KeyError, TypeError, ValueError, AttributeError):
            served = None
        if served is None:
            self.stats.rejected += 1
            return None
        self.stats.kernel_hits += 1
        self.stats.hits += len(served.certificate["obligations"])
        return served

    def _present(self, kind: str, key: str) -> bool:
        """Whether an entry of ``key`` is there as a regular file (``None`` keys, of obligations
        decided without a solver, are never stored, so a kernel entry names none that is)."""
        if not (isinstance(key, str) and _KEY.fullmatch(key)):
            raise ValueError(f"not a key: {key!r}")  # a sealed entry names only keys; refuse it whole
        try:
            return stat.S_ISREG(os.stat(self._path(kind, key)).st_mode)
        except OSError:
            return False

    def store_kernel(self, key: str, report: Report, solver: Solver, obligation_keys: list[str | None]) -> None:
        """A decided kernel's entry: a proof, or a refutation with the text its run printed
        (module docstring).  A kernel with an ``unknown`` verdict is never stored."""
        from .report import Status

        payload = {"report": report.to_json(), "obligations": obligation_keys, "solver": solver.fields()}
        if report.ok:
            self.write("kernels", key, payload)
            return
        if report.count(Status.UNKNOWN) or any(o.status is Status.REFUTED and o.counterexample is None
                                               for o in report.obligations):
            return
        excerpts = [o.counterexample.excerpt if o.counterexample is not None else None for o in report.obligations]
        refutation = {"certificate": json.dumps(payload.pop("report")), "file": report.file,
                      "timeout": report.timeout, "text": report.render(), "excerpts": excerpts}
        self.write("kernels", key, {**payload, "refutation": refutation})


@dataclass(frozen=True)
class Served:
    """What a kernel entry serves: the certificate (``Report.to_json``) and, for a refutation, the
    text its run printed (``Report.render``) and each obligation's counterexample excerpt (the
    source lines it quotes, which ``to_json`` leaves out) to rebuild its report from."""

    certificate: dict[str, Any]
    text: str = ""
    excerpts: tuple[str | None, ...] = ()


#: The fields of a counterexample in a certificate (``Counterexample.to_json``).
COUNTEREXAMPLE_FIELDS = ("obligation", "lemma", "statement", "location", "params", "at", "index", "what", "values",
                         "confirmation")


def decided_refutation(cert: dict[str, Any]) -> bool:
    """Whether ``cert`` is a refuted kernel's certificate with every obligation decided: ``ok``
    false and exit code 1, every verdict ``proved`` or ``refuted`` and at least one ``refuted``,
    a counterexample (with its fields) for each refuted one and none for a proved one."""
    obs = cert["obligations"]
    statuses = [o["status"] for o in obs]
    return (cert["ok"] is False and cert["exit_code"] == 1 and "refuted" in statuses
            and all(s in ("proved", "refuted") for s in statuses)
            and all(o["counterexample"] is None if o["status"] == "proved"
                    else isinstance(o["counterexample"], dict)
                    and set(o["counterexample"]) == set(COUNTEREXAMPLE_FIELDS)
                    for o in obs))


def solver_fields(solver: str, timeout: float | None) -> Solver:
    """The solver, its version as it reports it now, and the rlimit of ``timeout`` (``prove``'s).

    Once per process and arguments: a library run asks for every kernel, and the solver in a
    process does not change under it (``typed``: ``True`` is no ``1``; an argument that cannot
    be hashed is never valid, and goes to the checks that say why)."""
    try:
        hash((solver, timeout))
    except TypeError:
        return _solver_fields.__wrapped__(solver, timeout)
    return _solver_fields(solver, timeout)


@lru_cache(maxsize=16, typed=True)
def _solver_fields(solver: str, timeout: float | None) -> Solver:
    from .limits import rlimit_for

    if solver == "z3":
        version = z3_version()
    else:
        from .smtlib import cvc5_version

        version = cvc5_version()
    return Solver(solver, version, rlimit_for(timeout))


def z3_version() -> str:
    """``z3.get_version_string()`` (major.minor.build, what the obligations' keys and the
    certificates carry), read without importing Z3 where that is faithful
    (:func:`_z3_wheel_version`): the import was a fifth of a warm library run, which decides
    nothing.  Both ways give the same string (``tests/test_cache_refuted.py``)."""
    wheel = _z3_wheel_version()
    if wheel is not None:
        return wheel
    import z3

    return z3.get_version_string()


def _z3_wheel_version() -> str | None:
    """The version (major.minor.build: the wheel's is major.minor.build.revision, and Z3 reports
    the first three) of the ``z3-solver`` wheel that ``import z3`` would load, or ``None`` unless
    that is surely the library Z3 would run: the ``z3`` package found is the wheel's (its
    ``RECORD`` names ``z3/__init__.py``), the wheel's libraries are there with the sizes it
    installed them with, and none of the places ``z3core`` searches before the wheel's ``lib/``
    (the current directory, the package's own directory, or ``builtins.Z3_LIB_DIRS`` instead of
    them all) holds a library of those names.  Read by hand: ``importlib.metadata`` costs more
    to import than Z3 does."""
    import builtins
    import importlib.util

    if hasattr(builtins, "Z3_LIB_DIRS"):
        return None
    try:
        spec = importlib.util.find_spec("z3")
        if spec is None or spec.origin is None or not spec.origin.endswith("__init__.py"):
            return None
        package = os.path.dirname(os.path.realpath(spec.origin))
        site = os.path.dirname(package)
        infos = [d for d in os.listdir(site) if d.startswith("z3_solver-") and d.endswith(".dist-info")]
        if len(infos) != 1:
            return None
        info = os.path.join(site, infos[0])
        with open(os.path.join(info, "RECORD"), encoding="utf-8") as fh:
            record = {path: size for path, _, size in (line.rstrip("\n").rsplit(",", 2) for line in fh if line.strip())}
        libs = {path: size for path, size in record.items() if path.startswith("z3/lib/libz3.")}
        if "z3/__init__.py" not in record or not libs:
            return None
        for path, size in libs.items():
            if os.stat(os.path.join(site, path)).st_size != int(size):
                return None
        for name in {os.path.basename(p) for p in libs}:
            if any(os.path.exists(os.path.join(d, name)) for d in (os.path.realpath("."), package)):
                return None
        with open(os.path.join(info, "METADATA"), encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("Version:"):
                    parts = line.removeprefix("Version:").strip().split(".")
                    return ".".join(parts[:3]) if len(parts) >= 3 and all(p.isdigit() for p in parts[:3]) else None
                if not line.strip():
                    break  # the end of the headers
    except (OSError, ValueError, ImportError):
        return None
    return None


def prove_cached(program: Any, params: dict[str, int] | None = None, pad: int | None = None, *,
                 cache: ProofCache, timeout: float | None = None, solver: str = "z3",
                 smt2_dir: str | Path | None = None, source: str | None = None,
                 kernel_key: str | None = None) -> Report:
    """:func:`core_teil.proving.prove.prove` through ``cache``: an unchanged proved kernel is
    served whole (its kernel entry), any other is proved with its obligations looked up one by one.
    ``kernel_key`` replaces the key by the canonical text (``ProofCache.source_key``)."""
    from ..lang.syntax import expect_program
    from ..semantics.inputs import check_pad, check_params
    from .prove import program_hash, prove

    params = check_params(params, expect_program(program)) or {}
    pad = check_pad(pad)
    fields = solver_fields(solver, timeout)
    key = kernel_key or cache.kernel_key(program_hash(program, source), params, pad, fields)
    if smt2_dir is None and not cache.audit:  # scripts to write, or every entry to re-decide
        hit = cache.lookup_kernel(key, fields, program.file, timeout)
        if hit is not None:
            return hit
    cache.recorded = {}
    report = prove(program, params or None, pad, timeout=timeout, solver=solver, smt2_dir=smt2_dir,
                   source=source, cache=cache)
    cache.store_kernel(key, report, fields, [cache.recorded.get(o.number) for o in report.obligations])
    return report


def report_from_json(cert: dict[str, Any], file: str, timeout: float | None,
                     excerpts: tuple[str | None, ...] = ()) -> Report:
    """A decided kernel's :class:`Report` from its certificate (``Report.to_json``): a proof, or
    a refutation with its counterexamples' ``excerpts`` (:class:`Served`)."""
    from .counterexample import Counterexample
    from .report import ObligationResult, Report, Status

    def counterexample(i: int, cex: dict[str, Any] | None) -> Counterexample | None:
        if cex is None:
            return None
        return Counterexample(**{k: cex[k] for k in COUNTEREXAMPLE_FIELDS}, excerpt=excerpts[i] or "")

    obs = tuple(ObligationResult(o["number"], o["name"], o["lemma"], o["statement"], o["source"],
                                 Status(o["status"]), float(o["seconds"]), counterexample(i, o["counterexample"]),
                                 o["reason"] or "", o["sha256"] or "", None, o["label"])
                for i, o in enumerate(cert["obligations"]))
    s = cert["solver"]
    how = "proved" if all(o.status is Status.PROVED for o in obs) else "decided"
    return Report(file, cert["program_sha256"], dict(cert["params"]), tuple(cert["symbolic"]), cert["pad"],
                  s["name"], s["version"], cert["version"], int(s["rlimit"]), timeout, obs,
                  float(cert["seconds"]),
                  (f"every obligation was {how} by an earlier run (the proof cache); times are that run's",))


def served_refutation(cert: dict[str, Any], file: str, timeout: float | None) -> dict[str, Any]:
    """A refuted kernel's certificate as its run printed it for ``file`` and ``timeout`` (those
    of the entry: :meth:`ProofCache.lookup_served`), rebuilt field by field as ``Report.to_json``
    writes it once :func:`decided_refutation` holds (no script: a run that writes them is never
    served)."""
    s = cert["solver"]
    return {
        "tool": "core-teil", "version": cert["version"], "file": file,
        "program_sha256": cert["program_sha256"], "params": dict(cert["params"]), "symbolic": list(cert["symbolic"]),
        "pad": cert["pad"],
        "solver": {"name": s["name"], "version": s["version"], "random_seed": 42, "rlimit": int(s["rlimit"]),
                   "timeout_s": timeout},
        "ok": False, "exit_code": 1, "seconds": round(float(cert["seconds"]), 6),
        "obligations": [{"number": o["number"], "name": o["name"], "label": o["label"], "lemma": o["lemma"],
                         "statement": o["statement"], "source": o["source"],
                         "status": "proved" if o["status"] == "proved" else "refuted",
                         "seconds": round(float(o["seconds"]), 6), "sha256": o["sha256"] or None, "smt2": None,
                         "reason": o["reason"] or None,
                         "counterexample": None if o["counterexample"] is None else
                         {k: o["counterexample"][k] for k in COUNTEREXAMPLE_FIELDS}}
                        for o in cert["obligations"]],
    }


def served_certificate(cert: dict[str, Any], file: str, timeout: float | None) -> dict[str, Any]:
    """``report_from_json(cert, file, timeout).to_json()`` for a proved kernel's certificate,
    computed on the dictionary: a warm library run serves a thousand certificates and rebuilding
    each as a :class:`Report` to print it again was a fifth of the run (and needs the prover's
    modules).  ``tests/test_cache_warm.py`` holds the two equal, field for field and in order."""
    s = cert["solver"]
    return {
        "tool": "core-teil", "version": cert["version"], "file": file, "program_sha256": cert["program_sha256"],
        "params": dict(cert["params"]), "symbolic": list(cert["symbolic"]), "pad": cert["pad"],
        "solver": {"name": s["name"], "version": s["version"], "random_seed": 42, "rlimit": int(s["rlimit"]),
                   "timeout_s": timeout},
        "ok": True, "exit_code": 0, "seconds": round(float(cert["seconds"]), 6),
        "obligations": [{"number": o["number"], "name": o["name"], "label": o["label"], "lemma": o["lemma"],
                         "statement": o["statement"], "source": o["source"], "status": "proved",
                         "seconds": round(float(o["seconds"]), 6), "sha256": o["sha256"] or None, "smt2": None,
                         "reason": o["reason"] or None, "counterexample": None}
                        for o in cert["obligations"]],
    }


__all__ = ["FORMAT", "ProofCache", "Served", "Solver", "Stats", "decided_refutation", "default_directory",
           "generator_fingerprint", "prove_cached", "report_from_json", "script_body", "served_certificate",
           "served_refutation", "solver_fields", "z3_version"]
