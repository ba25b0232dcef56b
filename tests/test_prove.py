"""``core-teil prove``: certificates for the examples, and refutations that must happen.

Every kind of obligation is shown to fail on a program or a mutated
semantics that violates it, with the right counterexample: an ill-typed
program (typing, and the out-of-bounds read it leads to), ``proj`` reading
``m + 1`` (reads in bounds), loop bounds off by one (writes, domains
preserved), padded loop bounds not rounded up (padded writes), a padded
``expa`` without its guard and division without control (padding
simulation), and a wrong lowering (translation validation).  The mutants
patch ``eval.py``'s equations or the interpretations' arithmetic, never the
obligation generator: the proofs are about the semantics.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import z3

import core_teil as ct
from core_teil.cli import main
from core_teil.errors import TeilInputError
from core_teil.lang import lowering
from core_teil.lang.parser import parse
from core_teil.lang.shapes import ShapeSolver
from core_teil.lang.syntax import Diag, Expa, ExpaAt, Prod, Proj, TranspAt
from core_teil.lang.typing import check_program, remove
from core_teil.proving import replay, simulation
from core_teil.proving.obligations import Case, Obligation
from core_teil.proving.prove import discharge, prove
from core_teil.proving.report import Status
from core_teil.proving.smtlib import check_cvc5, recheck_with_z3
from core_teil.semantics import eval as ev
from core_teil.semantics import symbolic

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.teil"))
BAD = {"tvm_fig3a_bad"}  # deliberately ill-typed (paper 000, Fig. 3a)

PROJ = "param m, n\n{assume}alloc x : [n, 3]\nalloc y : [3]\ny = proj m x\n"
RED_EXPA = "param n, d\nalloc x : [n]\nalloc s : [n]\ns = red (expa d x)\n"
DIV = "param n\nalloc t : [n]\nalloc D : [n]\nalloc r : [n]\nr = div t D\n"
ADD = "param n\nalloc x : [n]\nalloc y : [n]\ny = add x x\n"
TRANSP = "lang full\nparam n\nalloc u : [n, n, n]\nalloc v : [n, n, n]\nv = transp 1 3 u\n"


def run(text: str, params: dict[str, int] | None = None, pad: int | None = None, **kw) -> ct.prove:
    return prove(parse(text, "t.teil"), params, pad, source=text, **kw)


def only(report, status: str = "refuted"):
    hits = [o for o in report.obligations if o.status == status]
    assert hits, report.render()
    return hits


def by_name(report, name: str):
    return [o for o in report.obligations if o.name == name]


# --------------------------------------------------------------------------
# The examples: proved for all shapes, and with padding
# --------------------------------------------------------------------------


@pytest.mark.parametrize("pad", [None, 8], ids=["symbolic", "pad8"])
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_is_decided(path: Path, pad: int | None) -> None:
    report = prove(ct.load(str(path)), None, pad)
    if path.stem in BAD:
        assert report.exit_code == 1 and not report.ok
        return
    assert report.ok, report.render()
    assert report.exit_code == 0
    names = {o.name for o in report.obligations}
    assert {"reads-in-bounds", "writes-in-domain"} <= names
    assert ("lowering" in names) == (ct.load(str(path)).dialect == "full")
    if pad is not None:
        assert {"padded-store-initial", "padded-reads-in-bounds", "padded-writes-in-domain",
                "padding-simulation"} <= names


def test_tvm_fig3a_is_rejected_with_unequal_extents(capsys) -> None:
    """Paper 000, section 3.7: the TVM kernel of Fig. 3a violates T-Diag unless m = n."""
    assert main(["prove", str(ROOT / "examples" / "tvm_fig3a_bad.teil")]) == 1
    out = capsys.readouterr().out
    report = prove(ct.load(str(ROOT / "examples" / "tvm_fig3a_bad.teil")))
    typing = by_name(report, "typing")[0]
    assert typing.status == Status.REFUTED
    cex = typing.counterexample
    assert cex.what.startswith("T-Diag: m == n")
    assert cex.params == {"m": 1, "n": 2, "h": 1}  # lexicographically smallest: canonical
    reads = by_name(report, "reads-in-bounds")[0]
    assert reads.status == Status.REFUTED and "out of bounds" in reads.counterexample.what
    assert "T-Diag" in out and "^" in out


def test_extents_do_not_matter() -> None:
    """Nothing is enumerated: extents of 10^9 prove like extents of 3 (times are in the report)."""
    path = str(ROOT / "examples" / "interp_nested.teil")
    for v in (3, 10**9):
        report = prove(ct.load(path), {"E": v, "m": v, "n": v}, 8)
        assert report.ok, report.render()
        assert report.params == {"E": v, "m": v, "n": v} and report.symbolic == ()


# --------------------------------------------------------------------------
# Typing (Lemma 4.1) and reads (Lemma 4.3): assume-dependent programs
# --------------------------------------------------------------------------


def test_assume_makes_proj_safe() -> None:
    assert run(PROJ.format(assume="assume m <= n\n")).ok


def test_missing_assume_refutes_typing_and_reads() -> None:
    report = run(PROJ.format(assume=""))
    assert report.exit_code == 1
    typing = by_name(report, "typing")[0]
    assert typing.status == Status.REFUTED
    assert typing.counterexample.params == {"m": 2, "n": 1}  # shrunk to the smallest failure
    assert typing.counterexample.what.startswith("T-Proj: m <= n")
    reads = by_name(report, "reads-in-bounds")[0]
    assert reads.status == Status.REFUTED
    cex = reads.counterexample
    assert cex.params == {"m": 2, "n": 1}
    assert "reads x[2, 1]" in cex.what and "x : [n, 3] = [1, 3]" in cex.what and "2 > 1" in cex.what
    # the caret stands under the read `x`, column 12 of `y = proj m x`
    line, caret = cex.excerpt.splitlines()
    assert caret.index("^") == line.index("proj m x") + len("proj m ")


def test_given_parameters_are_kept_in_the_counterexample() -> None:
    report = run(PROJ.format(assume=""), {"m": 5, "n": 3})
    assert by_name(report, "typing")[0].counterexample.params == {"m": 5, "n": 3}
    assert report.symbolic == ()


def test_structural_type_error_is_a_refuted_obligation_not_a_crash() -> None:
    report = run("alloc x : [3]\nalloc y : [3]\ny = add x z\n")
    assert report.exit_code == 1
    (ob,) = report.obligations
    assert ob.name == "typing" and ob.status == Status.REFUTED
    assert "undeclared" in ob.counterexample.what


def test_proj_reading_m_plus_1_is_refuted(monkeypatch) -> None:
    """A mutated equation (``proj`` reads slice m+1): Lemma 4.3 fails at m = n."""
    text = PROJ.format(assume="assume m <= n\n")
    assert run(text).ok
    monkeypatch.setitem(ev.EQUATIONS, Proj,
                        lambda e, k, sem: ev.denote(e.arg, (sem.interp.extent(e.m) + 1, *k), sem))
    report = run(text)
    (ob,) = only(report)
    assert ob.name == "reads-in-bounds"
    assert ob.counterexample.params == {"m": 1, "n": 1}
    assert "reads x[2, 1]" in ob.counterexample.what and "dimension 1: 2 > 1" in ob.counterexample.what


# --------------------------------------------------------------------------
# Writes (Lemma 4.5, Theorem 2): loop bounds
# --------------------------------------------------------------------------


def test_loop_bound_off_by_one_is_refuted(monkeypatch) -> None:
    def bound(self, d):
        n = self.interp.extent(d)
        return n + 1 if self.pad is None else self.interp.ceil(n, self.pad)

    monkeypatch.setattr(ev.Sem, "bound", bound)
    report = run(ADD)
    writes = by_name(report, "writes-in-domain")[0]
    assert writes.status == Status.REFUTED
    assert writes.counterexample.params == {"n": 1}
    assert "writes y[2], outside the store's extents y : [n] = [1]" in writes.counterexample.what
    assert by_name(report, "reads-in-bounds")[0].status == Status.REFUTED


def test_padded_bounds_not_rounded_up_is_refuted(monkeypatch) -> None:
    """Report Theorem 2: a padded statement must write all of ⌈Γ(x)⌉."""
    monkeypatch.setattr(ev.Sem, "bound", lambda self, d: self.interp.extent(d))
    report = run(ADD, pad=4)
    (ob,) = only(report)
    assert ob.name == "padded-writes-in-domain"
    assert ob.counterexample.params == {"n": 1}
    assert "does not write y[2]" in ob.counterexample.what and "y : [n] = [4]" in ob.counterexample.what


# --------------------------------------------------------------------------
# Padding simulation (report Lemma 6, Theorem 3)
# --------------------------------------------------------------------------


def _no_guard(monkeypatch) -> None:
    monkeypatch.setitem(ev.EQUATIONS, Expa, lambda e, k, sem: ev.denote(e.arg, k[1:], sem))
    monkeypatch.setitem(ev.EQUATIONS, ExpaAt, lambda e, k, sem: ev.denote(e.arg, remove(k, e.i), sem))


def test_padded_expa_without_guard_is_refuted(monkeypatch) -> None:
    """Report Theorem 3 is false for Core-TeIL without the padded ``expa`` guard."""
    assert run(RED_EXPA, pad=4).ok
    _no_guard(monkeypatch)
    report = run(RED_EXPA, pad=4)
    (ob,) = only(report)
    assert ob.name == "padding-simulation" and ob.label == "padding-simulation-stmt1-sum1"
    assert "contraction case" in ob.lemma
    cex = ob.counterexample
    assert cex.params == {"n": 1, "d": 1}
    assert "lies in the padding" in cex.what
    assert cex.confirmation is not None  # the reference engine reproduced it
    padded, original = (float(v) for v in cex.values.values())
    assert padded == 4 * original != 0  # Σ over ⌈d⌉ = 4 copies instead of d = 1


def test_fig11_expa_without_guard_is_refuted(monkeypatch) -> None:
    path = str(ROOT / "examples" / "fig11_proj_expa.teil")
    _no_guard(monkeypatch)
    report = prove(ct.load(path), None, 8)
    refuted = only(report)
    assert {o.name for o in refuted} == {"padding-simulation"}
    cex = refuted[0].counterexample
    assert "in the padding" in cex.what and cex.params["k"] == 2  # the assume k >= 2 is respected
    assert all(o.status == Status.PROVED for o in report.obligations if "padd" not in o.name)


def _uncontrolled_division(monkeypatch) -> None:
    """Definition 4's division instead of Definition 8's: 0/0 is • (in both interpretations)."""
    arith, np_arith = symbolic.arith, ev.ArrayInterpretation.arith

    def z3_div(op, a, b, reals=None):
        if op != "div":
            return arith(op, a, b, reals)
        undefined = z3.Or(a == symbolic.UNDEF, b == symbolic.UNDEF, b == symbolic.ZERO)
        quotient = (reals or symbolic.REAL_OPS)["div"](symbolic.Value.real(a), symbolic.Value.real(b))
        return z3.If(undefined, symbolic.UNDEF, symbolic.Value.val(quotient))

    def numpy_div(self, op, a, b):
        if op != "div":
            return np_arith(self, op, a, b)
        with np.errstate(all="ignore"):
            return np.where(np.equal(b, 0.0), np.nan, np.divide(a, b))

    monkeypatch.setattr(symbolic, "arith", z3_div)
    monkeypatch.setattr(ev.ArrayInterpretation, "arith", numpy_div)


def test_uncontrolled_division_is_refuted(monkeypatch) -> None:
    assert run(DIV, pad=2).ok
    _uncontrolled_division(monkeypatch)
    report = run(DIV, pad=2)
    (ob,) = only(report)
    assert ob.name == "padding-simulation"
    cex = ob.counterexample
    assert cex.params == {"n": 1} and cex.at == "r[2]"
    assert "in the padding" in cex.what and cex.values["padded r[2]"] == "•"
    assert cex.values["original r[1]"] != "•"


def test_helm_needs_controlled_division(monkeypatch) -> None:
    _uncontrolled_division(monkeypatch)
    report = prove(ct.load(str(ROOT / "examples" / "helm.teil")), None, 8)
    (ob,) = only(report)
    assert ob.name == "padding-simulation" and ob.statement == 4  # r = div t (expa 1 E D)
    assert report.obligations[0].status == Status.PROVED


def test_spurious_model_is_unknown_not_refuted(monkeypatch) -> None:
    """Sums are uninterpreted: without the store hypothesis Z3 finds models that the reference
    engine does not reproduce, and those must come back unknown (exit 3), never refuted."""
    monkeypatch.setattr(simulation, "store_instances", lambda *a, **k: [])
    report = prove(ct.load(str(ROOT / "examples" / "matmul.teil")), None, 8)
    unknown = only(report, "unknown")
    assert not [o for o in report.obligations if o.status == Status.REFUTED]
    assert all("spurious" in o.reason for o in unknown)
    assert report.exit_code == 3


@pytest.mark.parametrize("path", [p for p in EXAMPLES if p.stem not in BAD], ids=lambda p: p.stem)
def test_simulation_relation_holds_on_concrete_runs(path: Path) -> None:
    """What the padding obligations prove, checked on the reference engine: after every
    statement the padded store equals the original on the original domain and holds 0, or •
    where the original is • at the clamped index (inputs with • entries, pad 4)."""
    program = ct.load(str(path))
    typed = check_program(program, dict.fromkeys(program.params, 3))
    interp = ev.ArrayInterpretation(typed)
    rng = np.random.default_rng(7)
    inputs = {}
    for a in program.inputs():
        arr = rng.integers(-3, 4, size=tuple(interp.extent(d) for d in a.shape)).astype(float)
        arr[rng.random(arr.shape) < 0.1] = np.nan
        inputs[a.name] = arr
    store = ev.initial_store(typed, interp, inputs, None)
    padded = ev.initial_store(typed, interp, inputs, 4)
    for stmt in program.stmts:
        store = ev.st_stmt(stmt, ev.Sem(typed, interp, store, None))
        padded = ev.st_stmt(stmt, ev.Sem(typed, interp, padded, 4))
        for x in typed.gamma:
            witness = replay.check_relation(x, store[x], padded[x])
            assert not witness.confirmed, f"{stmt.target}: {witness.detail}"


# --------------------------------------------------------------------------
# Translation validation of the lowering (paper section 4.1)
# --------------------------------------------------------------------------


def test_wrong_lowering_is_refuted(monkeypatch) -> None:
    assert run(TRANSP).ok
    monkeypatch.setitem(lowering.LOWERINGS, TranspAt, lambda e: lowering.lower_expr(e.arg))
    report = run(TRANSP)
    (ob,) = only(report)
    assert ob.name == "lowering"
    cex = ob.counterexample
    assert cex.params == {"n": 2} and cex.confirmation is not None
    original, lowered = cex.values.values()
    assert original != lowered


def test_broken_equations_are_reported_not_crashed_on(monkeypatch) -> None:
    """Mutants written for other tools: a Python ``int`` as an index, a read of the wrong rank,
    an ``arith`` without the ``reals`` parameter.  Each is refuted or unknown, never a crash."""
    core = ct.load(str(ROOT / "examples" / "matmul_core.teil"))
    full = ct.load(str(ROOT / "examples" / "matmul.teil"))
    with monkeypatch.context() as m:
        m.setitem(ev.EQUATIONS, Diag, lambda e, k, sem: ev.denote(e.arg, (k[0], 1, *k[1:]), sem))
        # still safe, so only translation validation (full -> Core diag) can see the change
        assert prove(core, None, 8).ok
        (ob,) = only(prove(full, None, 8))
        assert ob.name == "lowering" and ob.counterexample.confirmation is not None
    with monkeypatch.context() as m:
        m.setitem(ev.EQUATIONS, Prod, lambda e, k, sem: sem.interp.arith(
            "mul", ev.denote(e.left, k[:1], sem), ev.denote(e.right, k[1:], sem)))
        report = prove(core, None, 8)
        reads = by_name(report, "reads-in-bounds")[0]
        assert reads.status == Status.REFUTED and "rank 1 index into rank 2" in reads.counterexample.what
    arith = symbolic.arith
    with monkeypatch.context() as m:
        m.setattr(symbolic, "arith", lambda op, a, b: arith(op, a, b))
        assert prove(core, None, 8).ok


# --------------------------------------------------------------------------
# Status, limits, vacuity
# --------------------------------------------------------------------------


def test_resource_limit_gives_unknown_and_exit_3() -> None:
    report = prove(ct.load(str(ROOT / "examples" / "helm.teil")), None, 8, timeout=1e-4)
    unknown = only(report, "unknown")
    assert all("resource limit" in o.reason or "timeout" in o.reason for o in unknown)
    assert report.exit_code == 3 and not report.ok


def test_inconsistent_hypotheses_are_not_a_proof() -> None:
    program = parse("param n\nalloc x : [n]\n")
    ob = Obligation("reads-in-bounds", "Lemma 4.3", None, None, (z3.BoolVal(False),),
                    (Case(z3.BoolVal(True), "read"),), ShapeSolver(program))
    result = discharge(ob, 1, "z3", 1_000_000, None, None, None)
    assert result.status == Status.UNKNOWN and "vacuous" in result.reason


def test_report_api() -> None:
    report = run(PROJ.format(assume="assume m <= n\n"), pad=2)
    assert report.ok and report.exit_code == 0
    assert all(o.status == "proved" and o.status is Status.PROVED for o in report.obligations)
    assert all(o.seconds >= 0 and o.lemma and o.counterexample is None for o in report.obligations)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.pad = 3  # type: ignore[misc]
    text = report.render()
    assert "obligation" in text and "lemma" in text and "report Theorem 3" in text
    cert = report.to_json()
    json.dumps(cert)
    assert cert["program_sha256"] and cert["version"] == ct.__version__
    assert cert["solver"]["name"] == "z3" and cert["solver"]["version"] == z3.get_version_string()
    assert [o["status"] for o in cert["obligations"]] == ["proved"] * len(report.obligations)
    assert "<table>" in report._repr_html_() and "tabular" in report._repr_latex_()


def test_report_of_a_refutation_renders_the_counterexample() -> None:
    report = run(PROJ.format(assume=""))
    text = report.render()
    assert "ERROR: typing" in text and "m = 2, n = 1" in text and "REFUTED" in text
    assert report.to_json()["obligations"][0]["counterexample"]["params"] == {"m": 2, "n": 1}
    assert "refuted" in report._repr_html_().lower()


def test_verdicts_are_deterministic(tmp_path: Path) -> None:
    path = str(ROOT / "examples" / "interp.teil")
    a = prove(ct.load(path), None, 8, smt2_dir=tmp_path / "a")
    b = prove(ct.load(path), None, 8, smt2_dir=tmp_path / "b")
    assert [(o.label, o.status, o.digest) for o in a.obligations] == \
        [(o.label, o.status, o.digest) for o in b.obligations]


# --------------------------------------------------------------------------
# SMT-LIB2 export and the second opinion
# --------------------------------------------------------------------------


@pytest.mark.parametrize("example", ["tvm_fig3a_bad", "interp_nested", "fig11_proj_expa"])
def test_exported_scripts_give_the_same_verdict(tmp_path: Path, example: str) -> None:
    report = prove(ct.load(str(ROOT / "examples" / f"{example}.teil")), None, 8, smt2_dir=tmp_path)
    for o in report.obligations:
        assert o.smt2 is not None
        text = Path(o.smt2).read_text()
        assert text.rstrip().endswith("(check-sat)") and "(set-logic ALL)" in text
        expect = "unsat" if o.status == Status.PROVED else "sat"
        assert recheck_with_z3(o.smt2) == expect, o.label
        assert check_cvc5(text, rlimit=50_000_000).status == expect, o.label


def test_cvc5_as_second_opinion() -> None:
    for name, code in (("matmul", 0), ("tvm_fig3a_bad", 1)):
        report = prove(ct.load(str(ROOT / "examples" / f"{name}.teil")), None, 8, solver="cvc5")
        assert report.exit_code == code and report.solver == "cvc5"
    bad = prove(ct.load(str(ROOT / "examples" / "tvm_fig3a_bad.teil")), solver="cvc5")
    assert by_name(bad, "typing")[0].counterexample is not None  # the model comes from z3


# --------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------


def test_cli_json_certificate(capsys, tmp_path: Path) -> None:
    path = str(ROOT / "examples" / "matmul.teil")
    assert main(["prove", path, "--pad", "8", "--json", "--smt2-dir", str(tmp_path)]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert cert["ok"] and cert["pad"] == 8 and cert["symbolic"] == ["l", "m", "n"]
    assert len(list(tmp_path.glob("*.smt2"))) == len(cert["obligations"])
    assert all(o["sha256"] and o["status"] == "proved" for o in cert["obligations"])


@pytest.mark.parametrize("argv, code", [
    (["examples/does-not-exist.teil"], 2),
    (["examples/matmul.teil", "--pad", "0"], 2),
    (["examples/matmul.teil", "--param", "n=x"], 2),
    (["examples/matmul.teil", "--param", "q=3"], 2),
    (["examples/matmul.teil", "--param", "n=0"], 2),
    (["examples/matmul.teil", "--timeout", "0.0001", "--pad", "8"], 3),
    (["examples/matmul.teil", "--param", "l=2,m=3,n=4"], 0),
])
def test_cli_exit_codes(argv: list[str], code: int, monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["prove", *argv]) == code
    assert "Traceback" not in capsys.readouterr().err


def test_smt2_dir_holds_exactly_this_runs_scripts(tmp_path):
    """A second export into the same directory must not leave the first run's scripts behind."""
    from core_teil.lang.parser import load

    program = load(str(ROOT / "examples/matmul.teil"))
    prove(program, pad=3, smt2_dir=tmp_path)
    padded = {p.name for p in tmp_path.iterdir()}
    (tmp_path / "notes.txt").write_text("mine")
    report = prove(program, smt2_dir=tmp_path)
    names = {p.name for p in tmp_path.iterdir()} - {"notes.txt"}
    assert len(names) == len(report.obligations) < len(padded)
    assert (tmp_path / "notes.txt").exists(), "only the tool's own scripts are removed"
    with pytest.raises(TeilInputError, match="cannot use it as a directory"):
        prove(program, smt2_dir=tmp_path / "notes.txt")


def test_exported_scripts_are_plain_smt_lib2():
    """No nullary and/or (Z3 prints one as a bare symbol, which cvc5 rejects): scalar padded sums."""
    from core_teil.lang.parser import load
    from core_teil.proving.smtlib import NULLARY_CONNECTIVE

    for name in ("normalize", "report_fig5_trace"):
        for ob in prove(load(str(ROOT / f"examples/{name}.teil")), pad=8, smt2_dir=None, solver="cvc5").obligations:
            assert ob.status == "proved", (name, ob.name)
    for path in (ROOT / "proofs/obligations").rglob("*.smt2"):
        body = path.read_text().split("(set-logic ALL)", 1)[1]
        assert not NULLARY_CONNECTIVE.search(body), path


def test_export_refuses_a_nullary_connective():
    import types

    import z3

    from core_teil.proving.smtlib import script
    from core_teil.semantics.eval import SemanticsBug

    ob = types.SimpleNamespace(assertions=lambda: [z3.Or(z3.And(), z3.Bool("p"))], label="bad")
    with pytest.raises(SemanticsBug, match="nullary and/or"):
        script(ob)  # type: ignore[arg-type]


def test_corpus_recheck_counts_an_unparsable_script_as_a_failure():
    from proofs import corpus

    if not corpus.cvc5_available():
        pytest.skip("cvc5 is not installed")
    assert corpus.cvc5_answer("(set-logic ALL)\n(assert (and p q") == "parse error"
