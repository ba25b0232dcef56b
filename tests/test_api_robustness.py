"""An outside robustness review of the CLI and the Python API (SPEC.md section 6): a ``--scheduler``
that never answers, or answers in another protocol; inputs named ``self`` and ``out``; calls that
do not fit a function's signature; ``ct.einsum(..., pad=M)``'s layout; ``--param`` messages;
arguments of the wrong type."""

from __future__ import annotations

import inspect
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import core_teil as ct
from core_teil import cli

ROOT = Path(__file__).resolve().parent.parent
AXPY = ROOT / "examples" / "axpy.teil"
MATMUL = ROOT / "examples" / "matmul.teil"

# --------------------------------------------------------------------------
# 1, 2: --scheduler ADDRESS answers in bounded time, or is bad input (exit 2)
# --------------------------------------------------------------------------

#: The CLI in a process of its own with the waits cut to SECONDS: before the fix, these runs
#: never returned; ``subprocess.run``'s timeout turns that into a failure, not a hung suite.
SECONDS = 2
PROVE = ("import sys; import core_teil.library as L; L.SCHEDULER_TIMEOUT = L.WORKERS_TIMEOUT = {s}; "
         "from core_teil.cli import main; sys.exit(main(sys.argv[1:]))")


def prove_on(address: str) -> tuple[int, str, float]:
    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", PROVE.format(s=SECONDS), "prove", str(MATMUL), "--scheduler",
                               address, "--no-cache"], capture_output=True, text=True, timeout=90, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"core-teil prove --scheduler {address} did not return within 90 s")
    return done.returncode, done.stderr, time.monotonic() - start


def refused(address: str, message: str) -> str:
    """``prove --scheduler address`` is bad input (exit 2) saying ``message``, with no traceback,
    well within the 90 s the run is given; its stderr."""
    code, err, seconds = prove_on(address)
    assert code == 2, err
    assert message in err
    assert "Traceback" not in err and seconds < 60
    return err


@pytest.fixture
def server() -> Iterator[Any]:
    """``server(reply)``: a TCP server on 127.0.0.1 that accepts every connection and sends
    ``reply`` on it every 50 ms (nothing: a peer that never speaks); its address."""
    listeners: list[socket.socket] = []
    held: list[socket.socket] = []

    def start(reply: bytes) -> str:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        listeners.append(s)

        def talk(c: socket.socket) -> None:
            try:
                while reply:
                    c.sendall(reply)
                    time.sleep(0.05)
            except OSError:
                pass

        def accept() -> None:
            while True:
                try:
                    c, _ = s.accept()
                except OSError:
                    return
                held.append(c)
                threading.Thread(target=talk, args=(c,), daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()
        return f"127.0.0.1:{s.getsockname()[1]}"

    yield start
    for s in listeners + held:
        s.close()


def test_a_scheduler_without_workers_is_bad_input_in_bounded_time() -> None:
    distributed = pytest.importorskip("distributed")
    import logging

    try:
        cluster = distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                           dashboard_address=":0", silence_logs=logging.ERROR)
    except Exception as exc:  # no sockets in this sandbox
        pytest.skip(f"a scheduler cannot start here: {type(exc).__name__}: {exc}")
    with cluster:
        address = cluster.scheduler_address
        refused(address, f"the scheduler at {address} has no workers (waited {SECONDS} s)")


def test_a_peer_that_accepts_and_never_speaks_is_bad_input_in_bounded_time(server: Any) -> None:
    pytest.importorskip("distributed")
    address = server(b"")
    refused(address, f"{address} did not answer as a Dask scheduler within {SECONDS} s")


def test_a_server_speaking_http_is_not_a_dask_scheduler(server: Any) -> None:
    # distributed read "HTTP/1.1 " as a frame length: a MemoryError, printed as
    # "core-teil: : out of memory; try smaller shapes"
    pytest.importorskip("distributed")
    address = server(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    assert "out of memory" not in refused(address, f"{address} is not a Dask scheduler")


@pytest.mark.parametrize(("argv", "named"), [
    (["prove", "a.teil", "b.teil"], "a.teil, b.teil"),
    (["from-einsum", "ij->ji", "2,3"], ""),
])
def test_out_of_memory_never_prints_an_empty_file_name(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                        named: str) -> None:
    import core_teil.frontends.einsum as einsum
    import core_teil.library as library

    def no_memory(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(library, "run", no_memory)
    monkeypatch.setattr(einsum, "from_einsum", no_memory)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"core-teil: {named + ': ' if named else ''}out of memory; try smaller shapes\n"


# --------------------------------------------------------------------------
# 3: any input name works with the compiled kernel
# --------------------------------------------------------------------------


def test_an_input_named_self_runs_on_the_compiled_kernel() -> None:
    p = ct.parse("input alloc self : [2]\noutput alloc y : [2]\ny = add self self\n")
    np.testing.assert_array_equal(ct.compile(p)(self=np.ones(2))["y"], [2.0, 2.0])


def test_an_input_named_out_is_still_given_as_out() -> None:
    # SPEC.md section 6: out= is the dict of output arrays; an input named out is given by that
    # keyword as an array (Kernel.__call__'s documented rule, kept)
    p = ct.parse("input alloc out : [2]\noutput alloc y : [2]\ny = add out out\n")
    k = ct.compile(p)
    np.testing.assert_array_equal(k(out=np.ones(2))["y"], [2.0, 2.0])
    q = ct.parse("input alloc x : [2]\noutput alloc y : [2]\ny = add x x\n")
    y = np.zeros(2)
    assert ct.compile(q)(x=np.ones(2), out={"y": y})["y"] is y and list(y) == [2.0, 2.0]


def test_blockwise_takes_inputs_named_as_its_own_parameters() -> None:
    pytest.importorskip("dask.array")
    p = ct.parse("param E\ninput alloc chunks : [E]\ninput alloc batch : [E]\noutput alloc v : [E]\n"
                 "v = add chunks batch\n")
    got = ct.compile(p).blockwise(2, None, chunks=np.ones(4), batch=np.arange(4.0))["v"].compute()
    np.testing.assert_array_equal(got, [1.0, 2.0, 3.0, 4.0])


# --------------------------------------------------------------------------
# 4: a call that does not fit the signature is a TeilInputError naming the function
# --------------------------------------------------------------------------

EXPORTED = sorted(name for name in ct.__all__ if inspect.isfunction(getattr(ct, name)))


def test_the_exports_are_what_this_file_checks() -> None:
    assert {"check", "compile", "einsum", "emit_c", "evaluate", "prove", "prove_library"} <= set(EXPORTED)


@pytest.mark.parametrize("name", EXPORTED)
def test_every_exported_function_refuses_arguments_outside_its_signature(name: str) -> None:
    fn = getattr(ct, name)
    required = [p for p in inspect.signature(fn).parameters.values()
                if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty]
    with pytest.raises(ct.TeilInputError, match=rf"ct\.{name}: got an unexpected keyword argument 'no_such_arg'"):
        fn(*[None] * len(required), no_such_arg=1)
    with pytest.raises(ct.TeilInputError, match=rf"ct\.{name}: missing a required argument"):
        fn()
    with pytest.raises(ct.TeilError):  # too many (or, with *args, unusable) positional arguments
        fn(*([None] * 12))


@pytest.mark.parametrize(("call", "message"), [
    (lambda p, a, b: ct.evaluate(p, {"A": a, "B": b}, {}, engine="native"),
     "ct.evaluate: got an unexpected keyword argument 'engine'"),
    (lambda p, a, b: ct.einsum("ij->ji", a, dtype=float), "ct.einsum: got an unexpected keyword argument 'dtype'"),
    (lambda p, a, b: ct.emit_c(p, {"l": 2, "m": 3, "n": 4}, bogus=1),
     "ct.emit_c: got an unexpected keyword argument 'bogus'"),
    (lambda p, a, b: ct.prove_library(str(MATMUL), bogus=1),
     "ct.prove_library: got an unexpected keyword argument 'bogus'"),
    (lambda p, a, b: ct.compile(p)(a, b), r"kernel\(...\): inputs are given by name, as kernel\(A=..., B=...\), "
                                          "not as 2 positional arguments"),
    (lambda p, a, b: ct.compile(p)(a), r"kernel\(...\): inputs are given by name, as kernel\(A=..., B=...\), "
                                       "not as 1 positional argument$"),
])
def test_the_reviews_calls_are_teil_input_errors(call: Any, message: str) -> None:
    p = ct.load(str(MATMUL))
    with pytest.raises(ct.TeilInputError, match=message):
        call(p, np.ones((2, 3)), np.ones((3, 4)))


def test_a_type_error_inside_a_function_is_not_taken_for_a_bad_call(monkeypatch: pytest.MonkeyPatch) -> None:
    import core_teil.lang.lowering as lowering

    def broken(e: Any) -> Any:
        raise TypeError("a bug")

    monkeypatch.setattr(lowering, "lower_expr", broken)
    with pytest.raises(TypeError, match="a bug"):
        ct.lower(ct.load(str(MATMUL)))


# --------------------------------------------------------------------------
# 5: ct.einsum(..., pad=M) returns a fresh C-contiguous array
# --------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["native", "reference"])
@pytest.mark.parametrize("pad", [None, 2, 3, 4])
def test_padded_einsum_returns_a_fresh_c_contiguous_array(engine: str, pad: int | None) -> None:
    a = np.arange(6.0).reshape(2, 3)
    got = ct.einsum("ij->ji", a, pad=pad, engine=engine)
    np.testing.assert_array_equal(got, a.T)
    assert got.strides == (16, 8) and got.flags.c_contiguous
    if pad is not None:  # a view would keep the whole padded store alive
        assert got.flags.owndata and got.base is None
    scalar = ct.einsum("ij->", a, pad=pad, engine=engine)
    assert scalar.shape == () and float(scalar) == 15.0


# --------------------------------------------------------------------------
# 6: --param in the flag's words, naming the file, whatever the command
# --------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["check", str(AXPY)], ["prove", str(AXPY)], ["prove", str(AXPY), "--cache", "CACHE"], ["run", str(AXPY)],
    ["lower", str(AXPY)], ["derive", str(AXPY)], ["trace", str(AXPY), "z[1]"], ["emit-c", str(AXPY), "-o", "OUT"],
], ids=lambda argv: " ".join(a for a in argv if "/" not in a))
def test_every_command_says_an_undeclared_param_in_the_flags_words(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path, argv: list[str]) -> None:
    argv = [str(tmp_path / "cache") if a == "CACHE" else str(tmp_path / "k.c") if a == "OUT" else a for a in argv]
    assert cli.main([*argv, "--param", "l=2"]) == 2
    err = capsys.readouterr().err
    assert f"{AXPY}: --param l=2: the program declares no parameter 'l' (it declares: n)" in err
    assert "params[" not in err


def test_equiv_says_an_undeclared_param_naming_both_files(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["equiv", str(AXPY), str(MATMUL), "--param", "q=2"]) == 2
    err = capsys.readouterr().err
    assert f"{AXPY} and {MATMUL}: --param q=2: neither program declares a parameter 'q'" in err


# --------------------------------------------------------------------------
# 7: an argument of the wrong type is a TeilError, whatever the argument
# --------------------------------------------------------------------------

#: Values a caller may pass by mistake: an array where a name or a mapping belongs (numpy
#: refuses its truth value), numbers where names belong, containers where numbers belong.
ODD = [None, 1, -1, 2.5, "", "x", [], {}, (1,), np.int64(3), np.float64(1.0), True, float("nan"), 10**30,
       np.zeros(3), np.zeros((2, 3), dtype=object), object()]


class _Given:
    """What the calls below are made with (built per test, not when pytest collects them)."""

    def __init__(self) -> None:
        self.p = ct.load(str(MATMUL))
        self.a, self.b = np.ones((2, 3)), np.ones((3, 4))
        self.sizes = {"l": 2, "m": 3, "n": 4}
        self.kernel = ct.compile(self.p, self.sizes)


CALLS: list[tuple[str, Callable[[_Given, Any], Any]]] = [
    ("kernel(A=?)", lambda g, v: g.kernel(A=v, B=g.b)),
    ("kernel(out=?)", lambda g, v: g.kernel(A=g.a, B=g.b, out=v)),
    ("kernel(out={C: ?})", lambda g, v: g.kernel(A=g.a, B=g.b, out={"C": v})),
    ("evaluate(inputs=?)", lambda g, v: ct.evaluate(g.p, v)),
    ("evaluate(params=?)", lambda g, v: ct.evaluate(g.p, {"A": g.a, "B": g.b}, v)),
    ("evaluate(pad=?)", lambda g, v: ct.evaluate(g.p, {"A": g.a, "B": g.b}, None, v)),
    ("compile(params=?)", lambda g, v: ct.compile(g.p, v)),
    ("compile(pad=?)", lambda g, v: ct.compile(g.p, None, v)),
    ("check(?)", lambda g, v: ct.check(v)),
    ("prove(pad=?)", lambda g, v: ct.prove(g.p, g.sizes, v)),
    ("trace(at=?)", lambda g, v: ct.trace(g.p, v)),
    ("einsum(engine=?)", lambda g, v: ct.einsum("ij,jk->ik", g.a, g.b, engine=v)),
    ("einsum(pad=?)", lambda g, v: ct.einsum("ij,jk->ik", g.a, g.b, pad=v)),
    ("einsum(out=?)", lambda g, v: ct.einsum("ij,jk->ik", g.a, g.b, out=v)),
    ("emit_c(pad=?)", lambda g, v: ct.emit_c(g.p, g.sizes, v)),
    ("batch_dimension(batch=?)", lambda g, v: ct.batch_dimension(g.p, None, v)),
    ("ops.program(?)", lambda g, v: ct.ops.program(v)),
    ("ops.nested(?)", lambda g, v: ct.ops.nested(v)),
]


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[name for name, _ in CALLS])
def test_an_argument_of_the_wrong_type_is_a_teil_error(name: str, call: Callable[[_Given, Any], Any]) -> None:
    """Each call either runs or raises a TeilError; before the fix, ``engine=np.zeros(3)`` and
    ``batch=np.zeros(3)`` raised numpy's ValueError (an array's truth value) and
    ``ops.program(1)`` an AttributeError."""
    given = _Given()
    escaped = []
    for v in ODD:
        try:
            call(given, v)
        except ct.TeilError:
            pass
        except Exception as exc:
            escaped.append(f"{name} with {type(v).__name__}: {type(exc).__name__}: {exc}")
    assert not escaped


@pytest.mark.parametrize(("call", "message"), [
    (lambda: ct.einsum("ij->ji", np.ones((2, 2)), engine=np.zeros(3)), "engine must be 'native' or 'reference'"),
    (lambda: ct.batch_dimension(ct.load(str(MATMUL)), None, np.zeros(3)),
     r"batch=array\(\[0., 0., 0.\]\): the batch dimension is named by a shape parameter, a string such as 'E', "
     "not ndarray"),
    (lambda: ct.batch_dimension(ct.load(str(MATMUL)), None, "q"), "the program declares no shape parameter 'q'"),
    (lambda: ct.ops.program(1), r"ops.program takes its outputs by name, e.g. ops.program\(v=.*not int"),
    (lambda: ct.ops.nested([ct.ops.Tensor("u", (3,))]),
     r"ops.nested takes its outputs by name, e.g. ops.nested\(v=.*not list"),
    # review r31: the kernel's own blockwise looked the batch up in a dict first (unhashable: TypeError)
    (lambda: ct.compile(ct.load(str(ROOT / "examples" / "bmm.teil")), {"nb": 4, "ni": 2, "nj": 2, "nk": 3})
     .blockwise(2, [1], A=np.ones((4, 2, 3)), B=np.ones((4, 3, 2))), "the batch dimension is named by a shape"),
])
def test_the_sweeps_findings_say_what_was_expected(call: Any, message: str) -> None:
    with pytest.raises(ct.TeilInputError, match=message):
        call()


@pytest.mark.parametrize(("value", "message"), [
    ("l=2.5", "--param 'l=2.5': '2.5' is not an integer >= 1 written in the digits 0-9"),
    ("l=0", "--param l=0: shape parameters range over integers >= 1"),
    ("l", "--param 'l': expected NAME=INTEGER, e.g. --param n=7"),
    ("l=2,l=3", "--param l is given twice, as 2 and 3"),
])
def test_a_malformed_param_names_the_file_too(capsys: pytest.CaptureFixture[str], value: str, message: str) -> None:
    assert cli.main(["check", str(MATMUL), "--param", value]) == 2
    assert f"{MATMUL}: {message}" in capsys.readouterr().err
    assert cli.main(["equiv", str(MATMUL), str(AXPY), "--param", value]) == 2
    assert f"{MATMUL} and {AXPY}: {message}" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["trace", str(MATMUL), "Q[1]"], "'Q[1]': the program allocates no 'Q' (allocations: A, B, C)"),
    (["trace", str(MATMUL), "C[1"], "'C[1': expected an allocation and a 1-based multi-index"),
    # review r31: the index's own parts
    (["trace", str(MATMUL), "C[l,1]"], "'C[l,1]': 'l' is a shape parameter; write an integer"),
    (["trace", str(MATMUL), "C[1.5,1]"], "'C[1.5,1]': '1.5' is not an index (an integer >= 1 or a name)"),
    (["run", str(MATMUL), "--input", "Z=ZPATH", "--output", "OUT"], "input 'Z': the program allocates no 'Z'"),
    (["trace", str(MATMUL), "C[i,j]", "--input", "A=APATH", "--input", "B=BPATH", "--values"],
     "evaluating with inputs (--values) needs a numeric index"),
])
def test_an_error_without_a_line_still_names_the_file(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      argv: list[str], message: str) -> None:
    np.save(tmp_path / "z.npy", np.ones(2))
    np.save(tmp_path / "a.npy", np.ones((2, 3)))
    np.save(tmp_path / "b.npy", np.ones((3, 4)))
    paths = {"ZPATH": "z.npy", "APATH": "a.npy", "BPATH": "b.npy"}
    argv = [str(tmp_path / "o.npz") if a == "OUT" else a for a in argv]
    for key, file in paths.items():
        argv = [a.replace(key, str(tmp_path / file)) for a in argv]
    assert cli.main([*argv, "--param", "l=2,m=3,n=4"]) == 2
    assert f"{MATMUL}: {message}" in capsys.readouterr().err


def test_a_program_that_is_no_file_is_not_named_as_one() -> None:
    text = MATMUL.read_text()
    with pytest.raises(ct.TeilInputError, match=r"^core-teil: input error: input 'Z': the program allocates no"):
        ct.evaluate(ct.parse(text), {"Z": np.ones(2)})
    with pytest.raises(ct.TeilInputError, match=rf"^core-teil: input error: {MATMUL}: input 'Z'"):
        ct.evaluate(ct.load(str(MATMUL)), {"Z": np.ones(2)})


@pytest.mark.parametrize(("item", "message"), [
    ("A=", f"{MATMUL}:10:1: input error: --input A=: expected NAME=PATH, e.g. --input A=a.npy (the path is empty)"),
    ("=a.npy", "core-teil: input error: --input =a.npy: expected NAME=PATH, e.g. --input A=a.npy (the name is empty)"),
])
def test_an_input_flag_with_an_empty_side_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  item: str, message: str) -> None:
    # before: "--input A=" read the path "" and said ": no such file"
    assert cli.main(["run", str(MATMUL), "--input", item, "--output", str(tmp_path / "o.npz")]) == 2
    assert message in capsys.readouterr().err
