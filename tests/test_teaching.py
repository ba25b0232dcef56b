"""Tests of the teaching tools: ``core-teil derive`` and ``core-teil trace`` (issue 6).

* derive: for a program exercising every typing rule of SPEC.md section 3
  and paper Fig. 8, the printed rule names and shapes are those of the
  derivation ``check_program`` built, node for node; a derivation missing
  a side condition its rule demands is refused; the LaTeX is a well-formed
  bussproofs stack (and compiles, where ``pdflatex`` exists).
* trace: paper Fig. 7 is reproduced step by step; the steps come from
  ``eval.EQUATIONS`` (a mutated equation changes the trace); ``--values``
  agrees with the reference evaluator, padded or not; bad indices exit 2.
* partial derivations (issue 16): an ill-typed program's tree stops at the
  failing rule with its premise marked (and Z3's counterexample), in text,
  LaTeX and HTML; the public API (``ct.check`` as a mapping of shapes that is
  also the typed program, ``ct.derive``, ``ct.trace``) and the short reprs.
"""

from __future__ import annotations

import html.parser
import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core_teil import cli
from core_teil.errors import TeilInputError
from core_teil.lang.parser import load, parse
from core_teil.lang.printer import format_expr
from core_teil.lang.syntax import RedAt
from core_teil.lang.typing import check_program, insert
from core_teil.semantics import eval as ev
from core_teil.semantics.eval import evaluate
from core_teil.teach.derive import DerivationMismatch, premises, render_latex, render_text
from core_teil.teach.teaching import derive, trace
from core_teil.teach.trace import Load, Op, Sigma, format_term, trace_steps

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# Every Core rule of SPEC.md section 3, with a parameterised side condition (h == n by assume).
CORE = """lang core
param m, n, h
assume h == n
alloc A : [m, h]
alloc B : [m, n]
alloc C : [m, n]
alloc s : []
C = add A B
C = mul s (sub A (proj 2 (expa 2 (div C s))))
s = red (red (contr (transp 2 (prod (transp 1 A) (transp 1 B)))))
C = proj 1 (expa 1 (diag (expa m C)))
"""

# Every full-TeIL rule of paper Fig. 8.
FULL = """lang full
param k, m, n
assume k >= 2
alloc A : [m, n]
alloc B : [k, m, n]
alloc C : [m, n]
alloc D : [k, m, n]
C = add A (proj 1 2 B)
D = add (expa 1 k A) (transp 1 3 (transp 3 1 B))
C = red 1 (diag 1 2 (contr 2 4 (prod A (prod A A))))
"""

CORE_RULES = {"OK-Stmt", "T-Var", "T-Elem", "T-SMul", "T-SDiv", "T-Prod", "T-Red", "T-Contr", "T-Diag",
              "T-Transp", "T-Expa", "T-Proj"}
FULL_RULES = {"OK-Stmt", "T-Var", "T-Elem", "T-Prod", "T-Red+", "T-Contr", "T-Diag", "T-Transp",
              "T-Expa", "T-Proj"}

NODE = re.compile(r"^[│├└─ ]*(?P<judgement>.*?)  \[(?P<rule>[A-Za-z+-]+)\](?:  (?P<rest>.*))?$")


def printed_nodes(text: str) -> list[tuple[str, str]]:
    """(judgement, rule) of every node line the text rendering prints, in order."""
    return [(m["judgement"], m["rule"]) for line in text.splitlines() if (m := NODE.match(line))]


def derivation_nodes(typed) -> list[tuple[str, str]]:
    out = []
    for sd in typed.derivations:
        out.append((f"{sd.stmt.target} = {format_expr(sd.stmt.expr)} ok", sd.rule))
        out += [(f"{format_expr(d.expr)} : [{', '.join(map(str, d.shape))}]", d.rule) for d in sd.expr.walk()]
    return out


# --------------------------------------------------------------------------
# derive
# --------------------------------------------------------------------------


@pytest.mark.parametrize(("source", "rules"), [(CORE, CORE_RULES), (FULL, FULL_RULES)], ids=["core", "full"])
def test_derive_prints_the_derivation_of_every_rule(source, rules):
    typed = check_program(parse(source, "rules.teil"))
    text = derive(typed)
    printed = printed_nodes(text)
    assert printed == derivation_nodes(typed)
    assert {rule for _, rule in printed} == rules


def test_derive_every_example(tmp_path):
    for path in sorted(EXAMPLES.glob("*.teil")):
        program = load(path)
        try:
            typed = check_program(program)
        except Exception:
            continue  # the ill-typed examples are covered by the rejection tests
        assert printed_nodes(derive(typed)) == derivation_nodes(typed), path.name


def test_side_conditions_are_symbolic_with_their_scope():
    text = derive(check_program(parse(CORE, "rules.teil")))
    assert "side: h == n (for all h, n >= 1 under assume h == n)" in text
    assert "side: 1 <= 2 < 4" in text  # T-Transp: 1 <= i < rank t
    assert "[T-Diag]  side: m == m (identical)" in text
    full = derive(check_program(parse(FULL, "full.teil")))
    assert "[T-Proj]  side: 2 <= k (for all k >= 1 under assume k >= 2)" in full
    fixed = derive(check_program(parse(CORE, "rules.teil"), {"m": 2, "n": 3, "h": 3}))
    assert "side: h == n (with h = 3, n = 3)" in fixed
    assert "parameters: m = 2, n = 3, h = 3; assume h == n" in fixed


def test_derive_refuses_a_derivation_without_its_side_condition():
    typed = check_program(parse(CORE, "rules.teil"))
    node = next(d for sd in typed.derivations for d in sd.expr.walk() if d.rule == "T-Contr")
    assert node.side, "the checker records h == n for this T-Contr"
    with pytest.raises(DerivationMismatch, match="no recorded side condition h == n"):
        premises(replace(node, side=()), typed)
    stmt = typed.derivations[0]
    assert stmt.side
    broken = replace(typed, derivations=(replace(stmt, side=()), *typed.derivations[1:]))
    with pytest.raises(DerivationMismatch):
        render_text(broken)


def bussproofs_stack(tex: str) -> list[int]:
    """Simulate bussproofs' stack; return its height at every \\DisplayProof."""
    arity = {"AxiomC": 0, "UnaryInfC": 1, "BinaryInfC": 2, "TrinaryInfC": 3, "QuaternaryInfC": 4,
             "QuinaryInfC": 5}
    heights, stack = [], 0
    for cmd in re.findall(r"\\(AxiomC|UnaryInfC|BinaryInfC|TrinaryInfC|QuaternaryInfC|QuinaryInfC|DisplayProof)",
                          tex):
        if cmd == "DisplayProof":
            heights.append(stack)
            stack = 0
            continue
        assert stack >= arity[cmd], f"{cmd} pops {arity[cmd]} from a stack of {stack}"
        stack = stack - arity[cmd] + 1
    return heights


@pytest.mark.parametrize("source", [CORE, FULL], ids=["core", "full"])
def test_latex_is_a_complete_bussproofs_document(source):
    typed = check_program(parse(source, "rules_1.teil"))
    tex = derive(typed, latex=True)
    assert tex.startswith("\\documentclass") and tex.rstrip().endswith("\\end{document}")
    assert "\\usepackage{bussproofs}" in tex
    assert bussproofs_stack(tex) == [1] * len(typed.derivations)  # small: one tree per statement
    labels = re.findall(r"\\RightLabel\{\\scriptsize ([^}]*)\}", tex)
    assert labels == [r for sd in typed.derivations for r in postorder_rules(sd)]
    assert "rules\\_1.teil" in tex  # file names are escaped


def test_large_derivations_are_cut_into_named_pieces():
    depth = 120
    expr = "x"
    for _ in range(depth):
        expr = f"add x ({expr})"
    typed = check_program(parse(f"alloc x : [2, 2]\nx = {expr}\n", "deep.teil"))
    tex = render_latex(typed)
    pieces = tex.count("\\DisplayProof")
    assert pieces > 2
    assert bussproofs_stack(tex) == [1] * pieces
    # every node is typeset exactly once: one label per derivation node
    assert tex.count("\\RightLabel") == 1 + depth + (depth + 1)  # OK-Stmt, the adds, the reads
    assert len(re.findall(r"\\mathcal\{D\}_\{\d+\}\$ is", tex)) == pieces - 1


def postorder_rules(sd) -> list[str]:
    def go(d):
        return [r for p in d.premises for r in go(p)] + [d.rule]

    return [*go(sd.expr), sd.rule]


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_compiles_with_pdflatex(tmp_path):
    deep = "x"
    for _ in range(150):
        deep = f"add x ({deep})"
    for name, source in (("core", CORE), ("full", FULL), ("deep", f"alloc x : [2, 2]\nx = {deep}\n")):
        tex = tmp_path / f"{name}.tex"
        tex.write_text(render_latex(check_program(parse(source, f"{name}.teil"))))
        run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout[-2000:]
        assert (tmp_path / f"{name}.pdf").stat().st_size > 1000


def test_derive_cli(capsys):
    assert cli.main(["derive", str(EXAMPLES / "matmul.teil")]) == 0
    out = capsys.readouterr().out
    assert "diag 2 3 (prod A B) : [l, m, n]  [T-Diag]  side: m == m (identical)" in out
    assert cli.main(["derive", "--latex", str(EXAMPLES / "matmul.teil")]) == 0
    assert "\\BinaryInfC" in capsys.readouterr().out
    assert cli.main(["derive", str(EXAMPLES / "tvm_fig3a_bad.teil")]) == 1
    assert "[T-Diag]" in capsys.readouterr().err


# --------------------------------------------------------------------------
# trace
# --------------------------------------------------------------------------


def test_trace_reproduces_paper_fig7():
    typed = check_program(load(EXAMPLES / "matmul.teil"))
    t = trace_steps(typed, "C[j1,j2]")
    assert [s.equation for s in t.steps] == ["st_stmt", "ev_red_at", "ev_diag_at", "ev_prod", "ev_var", "ev_var"]
    assert [format_term(s.term) for s in t.steps] == [
        "[[red 2 (diag 2 3 (prod A B))]][j1, j2]",
        "Σ_{m1=1..m} [[diag 2 3 (prod A B)]][j1, m1, j2]",
        "Σ_{m1=1..m} [[prod A B]][j1, m1, m1, j2]",
        "Σ_{m1=1..m} ([[A]][j1, m1] · [[B]][m1, j2])",
        "Σ_{m1=1..m} (A[j1, m1] · [[B]][m1, j2])",
        "Σ_{m1=1..m} (A[j1, m1] · B[m1, j2])",
    ]
    m1 = t.final.var
    assert t.final == Sigma(m1, t.final.n, Op("mul", Load("A", (t.index[0], m1)), Load("B", (m1, t.index[1]))))


def test_trace_concrete_index_ends_at_store_reads():
    typed = check_program(load(EXAMPLES / "matmul.teil"), {"l": 2, "m": 3, "n": 4})
    text = trace(typed, "C[1,2]")
    lines = text.splitlines()
    assert lines[1].startswith("C[1, 2] = [[red 2 (diag 2 3 (prod A B))]][1, 2]")
    assert "= Σ_{m1=1..3} [[diag 2 3 (prod A B)]][1, m1, 2]" in text
    last = [line for line in lines if line.lstrip().startswith("=")][-1]
    assert "= Σ_{m1=1..3} (A[1, m1] · B[m1, 2])" in last and last.rstrip().endswith("ev_var")
    # The legend quotes eval.py's own docstrings.
    assert f"ev_red_at: {ev.ev_red_at.__doc__.strip().splitlines()[0].replace('``', '').rstrip('.')}" in text


def test_trace_is_driven_by_eval_equations(monkeypatch):
    """A mutated equation in eval.EQUATIONS changes the trace: nothing is restated."""
    typed = check_program(load(EXAMPLES / "matmul.teil"), {"l": 2, "m": 3, "n": 4})
    before = format_term(trace_steps(typed, "C[1,2]").final)

    def ev_red_at_mutant(e, k, sem):
        """[[red i e]](k) with the summation index at the END (a seeded bug)."""
        n = sem.bound(sem.type(e.arg)[e.i - 1])
        return sem.interp.sum(n, lambda m: ev.denote(e.arg, insert(k, len(k) + 1, m), sem), e)

    monkeypatch.setitem(ev.EQUATIONS, RedAt, ev_red_at_mutant)
    mutated = trace_steps(typed, "C[1,2]")
    assert format_term(mutated.final) != before
    assert format_term(mutated.final) == "Σ_{m1=1..3} (A[1, 2] · B[2, m1])"
    assert mutated.steps[1].equation == "ev_red_at_mutant"


def test_every_step_applies_exactly_one_equation():
    typed = check_program(load(EXAMPLES / "helm.teil"), {"E": 2, "n": 2})
    t = trace_steps(typed, "v[1,2,1,2]")
    dens = [len(re.findall(r"\[\[", format_term(s.term))) for s in t.steps]
    for before, after, step in zip(dens, dens[1:], t.steps[1:], strict=False):
        # one deferred node unfolds into as many as the equation's recursive calls (0, 1 or 2)
        assert after - before in {-1, 0, 1}, step.equation
    assert dens[-1] == 0


def random_inputs(typed, seed=7):
    rng = np.random.default_rng(seed)
    shapes = typed.shapes()
    return {a.name: rng.integers(-3, 4, size=shapes[a.name]).astype(float) for a in typed.program.inputs()}


CASES = [
    ("matmul.teil", {"l": 2, "m": 3, "n": 4}, "C[2,3]"),
    ("matmul_core.teil", {"l": 2, "m": 3, "n": 2}, "C[1,2]"),
    ("taco_b.teil", {"l": 2, "m": 3, "n": 2}, "A[2,1]"),
    ("axpy.teil", {"n": 3}, "w[2]"),
    ("normalize.teil", {"n": 3}, "p[3]"),
    ("fig11_proj_expa.teil", {"k": 3, "m": 2, "n": 2}, "D[3,1,2]"),
    ("report_fig5_trace.teil", {}, "s"),
    ("helm.teil", {"E": 2, "n": 2}, "v[2,1,2,1]"),
    ("mttkrp.teil", {"I": 2, "J": 2, "K": 2, "L": 3}, "A[1,2]"),
]


@pytest.mark.parametrize(("name", "params", "at"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("pad", [None, 4])
def test_values_agree_with_the_reference_evaluator(name, params, at, pad):
    typed = check_program(load(EXAMPLES / name), params)
    inputs = random_inputs(typed)
    t = trace_steps(typed, at, inputs, pad)
    assert t.value == pytest.approx(t.reference, nan_ok=True)
    x, k = at.split("[")[0], t.index
    out = evaluate(typed, inputs, params)
    if x in out:
        assert t.reference == pytest.approx(float(out[x][tuple(j - 1 for j in k)]), nan_ok=True)
    assert "MISMATCH" not in t.render()


def test_padded_trace_guards_expa_and_reads_zero_in_the_padding():
    typed = check_program(load(EXAMPLES / "fig11_proj_expa.teil"), {"k": 2, "m": 1, "n": 2})
    inputs = random_inputs(typed)
    t = trace_steps(typed, "D[3,1,2]", inputs, pad=4)  # 3 > k = 2: in the padding
    assert "(if 3 <= 2 then A[1, 2] else 0) + B[3, 1, 2]" in t.render()
    assert t.value == 0.0 == t.reference
    with pytest.raises(TeilInputError, match="out of range"):
        trace_steps(typed, "D[3,1,2]", inputs)  # unpadded, 3 is beyond k = 2


def test_values_detects_a_disagreement(monkeypatch):
    """The --values check can fail: a trace computed with a mutant differs from the engine."""
    typed = check_program(load(EXAMPLES / "matmul.teil"), {"l": 2, "m": 3, "n": 4})
    inputs = random_inputs(typed)
    real = ev.EQUATIONS[RedAt]

    def sum_twice(e, k, sem):
        return sem.interp.arith("add", real(e, k, sem), real(e, k, sem))

    import core_teil.teach.trace as tr

    monkeypatch.setattr(tr, "step_equations", lambda: (
        {**{t: tr._rebind(f) for t, f in ev.EQUATIONS.items()}, RedAt: tr._rebind(sum_twice)},
        tr._rebind(ev.st_stmt)))
    t = trace_steps(typed, "C[1,1]", inputs)
    if t.reference != 0:
        assert "MISMATCH" in t.render()


@pytest.mark.parametrize(("at", "message"), [
    ("C[1,2,3]", "has rank 2, so it needs 2 indices, not 3"),
    ("C[0,1]", "indices are 1-based"),
    ("C[3,1]", "index 3 in dimension 1 is out of range"),
    ("C[1,x y]", "is not an index"),
    ("Q[1,1]", "allocates no 'Q'"),
    ("C[l,1]", "'l' is a shape parameter"),
    ("A[1,1]", "no statement assigns 'A'"),
    ("C 1 2", "expected an allocation"),
])
def test_bad_indices_are_input_errors(at, message):
    typed = check_program(load(EXAMPLES / "matmul.teil"), {"l": 2, "m": 3, "n": 4})
    with pytest.raises(TeilInputError, match=re.escape(message)) as info:
        trace(typed, at)
    assert info.value.exit_code == 2


def test_symbolic_extent_that_may_be_exceeded_gets_a_counterexample():
    typed = check_program(load(EXAMPLES / "matmul.teil"))
    with pytest.raises(TeilInputError, match=r"may exceed the extent n .*n = 1"):
        trace(typed, "C[1,2]")
    assert "C[1, 1] = " in trace(typed, "C[1,1]")  # 1 <= n for every n >= 1


def test_trace_cli(capsys, tmp_path):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, np.arange(1.0, 7.0).reshape(2, 3))
    np.save(b, np.arange(1.0, 13.0).reshape(3, 4))
    argv = ["trace", str(EXAMPLES / "matmul_core.teil"), "C[2,3]", "--values", "--input", f"A={a}",
            "--input", f"B={b}"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "with the inputs: Σ_{m1=1..3} (A[2, m1] · B[m1, 3]) = 113.0" in out
    assert "reference engine: C[2, 3] = 113.0" in out
    assert cli.main(["trace", str(EXAMPLES / "matmul_core.teil"), "C[9,9]", "--param", "l=2,m=3,n=4"]) == 2
    assert "[St-Stmt]" in capsys.readouterr().err
    assert cli.main(["trace", str(EXAMPLES / "matmul_core.teil"), "C[1,1]", "--values"]) == 2
    assert "missing input" in capsys.readouterr().err


def test_deep_trace_terminates_with_a_resource_error(monkeypatch):
    import core_teil.teach.trace as tr

    monkeypatch.setattr(tr, "MAX_STEPS", 3)
    typed = check_program(load(EXAMPLES / "matmul_core.teil"), {"l": 2, "m": 3, "n": 4})
    with pytest.raises(TeilInputError, match="more than 3 steps"):
        trace(typed, "C[1,1]")


# --------------------------------------------------------------------------
# Rich display
# --------------------------------------------------------------------------


class _Checker(html.parser.HTMLParser):
    VOID = frozenset({"br"})

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()


def well_formed(markup: str) -> bool:
    c = _Checker()
    c.feed(markup)
    c.close()
    return not c.stack


def test_rich_display_without_jupyter():
    program = load(EXAMPLES / "matmul.teil")
    typed = check_program(program)
    t = trace_steps(check_program(program, {"l": 2, "m": 3, "n": 4}), "C[1,2]")
    for obj, needle in ((program, "red 2 (diag 2 3 (prod A B))"), (typed, "T-Diag"),
                        (typed.derivations[0].expr, "T-Red+"), (t, "ev_diag_at")):
        markup = obj._repr_html_()
        assert well_formed(markup) and needle in markup
        latex = obj._repr_latex_()
        assert latex.startswith("$") and latex.endswith("$")
        assert latex.count("{") == latex.count("}")
    assert "\\dfrac" in typed._repr_latex_() and "T-Diag" in typed._repr_latex_()
    assert "<script" not in typed._repr_html_()
    hostile = parse("alloc x_1 : [2]\nx_1 = x_1\n", "<a&b>.teil")
    assert "&lt;a&amp;b&gt;" in check_program(hostile)._repr_html_()
    assert "x\\_1" in check_program(hostile)._repr_latex_()


# --------------------------------------------------------------------------
# partial derivations (issue 16, item 3)
# --------------------------------------------------------------------------

ILL_TYPED = """alloc A : [2, 3]
alloc v : [3]
alloc s : [3]
s = contr (transp 1 (prod A v))
s = add v v
s = add v A
"""


def test_partial_derivation_stops_at_the_failing_rule():
    import core_teil as ct
    from core_teil.teach.partial import DeriveStatus, PartialNode, PartialStmt

    ds = ct.derive(parse(ILL_TYPED, "ill.teil"))
    assert ds.status is DeriveStatus.FAILED and not ds.ok
    first, second, third = ds.statements
    assert isinstance(first, PartialStmt) and isinstance(third, PartialStmt)
    assert not isinstance(second, PartialStmt)  # a well-typed statement keeps its whole derivation
    node = first.expr
    assert isinstance(node, PartialNode) and node.rule == "T-Contr"
    assert node.failure is not None and str(node.failure.side) == "3 == 2"
    # the premises of the failing rule are derived, with their shapes
    assert [d.shape for d in node.premises] == [(3, 2, 3)]
    assert [f.rule for f in ds.failures] == ["T-Contr", "T-Elem"]
    assert ds.error is not None and ds.error.rule == "T-Contr"
    text = ds.render()
    assert "statement 1 (ill.teil:4): not well typed, the derivation stops at T-Contr" in text
    assert "contr (transp 1 (prod A v)) : ?  [T-Contr]  ✗ premise 3 == 2 fails" in text
    assert "transp 1 (prod A v) : [3, 2, 3]  [T-Transp]  side: 1 <= 1 < 3" in text
    assert "s = add v v ok  [OK-Stmt]" in text
    assert "add v A : ?  [T-Elem]  ✗ fails: `add` needs operands of one shape" in text


def test_partial_derivation_shows_the_counterexample_for_symbolic_shapes():
    import core_teil as ct

    ds = ct.derive(load(EXAMPLES / "tvm_fig3a_bad.teil"))
    text = str(ds)
    assert "red 1 (diag 1 3 (prod A B)) : ?  [T-Red+]  not derived: a premise fails" in text
    # m = 1, n = 2 and m = 2, n = 1 are equally small; which one Z3 picks depends on the process's history
    assert re.search(r"\[T-Diag\]  ✗ premise m == n fails for h = 1, m = [12], n = [12] \(diagonal dimensions 1 "
                     r"and 3 must agree\)", text)
    assert "prod A B : [m, h, n, h]  [T-Prod]" in text
    # with the parameters fixed, the premise fails with them
    fixed = str(ct.derive(load(EXAMPLES / "tvm_fig3a_bad.teil"), {"m": 2, "n": 3, "h": 1}))
    assert "✗ premise m == n fails with m = 2, n = 3" in fixed
    # OK-Stmt's own premise
    mismatch = str(ct.derive(parse("alloc A : [2]\nalloc B : [3]\nB = A\n", "m.teil")))
    assert "B = A ok?  [OK-Stmt]  Γ(B) = [3]; ✗ premise 3 == 2 fails" in mismatch
    assert "A : [2]  [T-Var]" in mismatch


def test_partial_derivation_in_latex():
    import core_teil as ct

    ds = ct.derive(load(EXAMPLES / "tvm_fig3a_bad.teil"))
    tex = ds.latex()
    assert bussproofs_stack(tex) == [1]
    assert "\\AxiomC{$\\boldsymbol{\\times}\\ \\mathit{m} = \\mathit{n}$}" in tex
    assert "\\RightLabel{\\scriptsize T-Diag \\textbf{fails}}" in tex
    assert "\\Gamma \\vdash \\mathtt{diag\\ 1\\ 3\\ (prod\\ A\\ B)} : \\,?" in tex
    assert re.search(r"The derivation stops at T-Diag: premise m == n fails for h = 1, m = [12], n = [12]", tex)
    tex = ct.derive(parse(ILL_TYPED, "ill.teil")).latex()
    assert bussproofs_stack(tex) == [1, 1, 1]
    assert "\\text{`add` needs operands of one shape" in tex
    markup = ds._repr_html_()
    assert well_formed(markup) and "✗ premise m == n" in markup
    assert "\\boldsymbol{\\times}" in ds._repr_latex_()


def test_derive_cli_on_an_ill_typed_program(capsys):
    assert cli.main(["derive", str(EXAMPLES / "tvm_fig3a_bad.teil")]) == 1
    captured = capsys.readouterr()
    assert re.search(r"✗ premise m == n fails for h = 1, m = [12], n = [12]", captured.out)
    assert "type error [T-Diag]" in captured.err and "^^^" in captured.err
    assert cli.main(["derive", "--latex", str(EXAMPLES / "tvm_fig3a_bad.teil")]) == 1
    assert "T-Diag \\textbf{fails}" in capsys.readouterr().out


def test_a_program_failing_before_its_statements_has_no_tree(capsys, tmp_path):
    import core_teil as ct

    ds = ct.derive(parse("alloc A : [2]\nalloc A : [3]\n", "dup.teil"))
    assert not ds.ok and ds.error.rule == "S-Var" and ds.statements == ()
    assert "no derivation: OK-Prog's premise S-Var fails" in ds.render()
    assert "S-Var" in ds.latex()
    path = tmp_path / "dup.teil"
    path.write_text("alloc A : [2]\nalloc A : [3]\n")
    assert cli.main(["derive", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "[S-Var]" in captured.err


def test_latex_shows_an_elided_statement_in_full():
    """interp_nested's statement is too long for the tree's conclusions, but is printed once in full."""
    tex = render_latex(check_program(load(EXAMPLES / "interp_nested.teil")))
    assert "(\\ldots{})" in tex
    assert "\\texttt{v = contr 2 6 (contr 2 6 (contr 2 6 (prod u (prod A (prod A A)))))}" in tex


# --------------------------------------------------------------------------
# the public teaching API (issue 16, item 4)
# --------------------------------------------------------------------------


def test_check_returns_a_typed_program_that_is_a_mapping_of_shapes():
    import core_teil as ct

    p = load(EXAMPLES / "matmul.teil")
    checked = ct.check(p, {"l": 2, "m": 3, "n": 4})
    shapes = {"A": (2, 3), "B": (3, 4), "C": (2, 4)}
    assert checked == shapes and shapes == checked  # both operand orders: dict.__eq__ defers
    assert checked["C"] == (2, 4) and dict(checked) == {"A": (2, 3), "B": (3, 4), "C": (2, 4)}
    assert list(checked) == ["A", "B", "C"] and len(checked) == 3 and "A" in checked
    assert checked != {"A": (2, 3)}
    assert isinstance(checked, ct.CheckedProgram) and checked.program is checked.typed.program
    # SPEC.md section 6: ct.check returns a dict[str, tuple] -- still one, for code that relies on it
    assert isinstance(checked, dict) and json.loads(json.dumps(checked)) == {"A": [2, 3], "B": [3, 4], "C": [2, 4]}
    assert checked.params == {"l": 2, "m": 3, "n": 4} and checked.symbolic == ()
    assert repr(checked) == "<CheckedProgram examples/matmul.teil: A : [2, 3], B : [3, 4], C : [2, 4]>".replace(
        "examples/matmul.teil", str(EXAMPLES / "matmul.teil"))
    symbolic = ct.check(p)
    assert symbolic["C"] == ("l", "n") and "l, m, n symbolic" in repr(symbolic)
    assert "T-Diag" in checked._repr_html_() and "\\dfrac" in checked._repr_latex_()
    assert checked.derive().ok and "T-Red+" in str(checked.derive())
    assert str(checked.trace("C[1,2]").final) == str(ct.trace(p, "C[1,2]", {"l": 2, "m": 3, "n": 4}).final)


def test_derive_and_trace_from_the_api():
    import numpy as np

    import core_teil as ct

    p = load(EXAMPLES / "matmul.teil")
    ds = ct.derive(p)
    assert ds.ok and ds.render() == derive(check_program(p))
    assert repr(ds).endswith("1 statement(s) derived>")
    t = ct.trace(p, "C[j1,j2]")
    assert [s.equation for s in t.steps] == ["st_stmt", "ev_red_at", "ev_diag_at", "ev_prod", "ev_var", "ev_var"]
    assert repr(t) == "<Trace C[j1, j2] = Σ_{m1=1..m} (A[j1, m1] · B[m1, j2]): 6 step(s)>"
    assert str(t) == t.render()
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 4))
    valued = ct.trace(p, "C[2,3]", inputs={"A": a, "B": b})  # parameters read off the inputs
    assert valued.value == valued.reference == 12.0
    with pytest.raises(TeilInputError, match="already checked"):
        ct.derive(ct.check(p), {"l": 2})
    with pytest.raises(TeilInputError, match="may exceed the extent"):
        ct.trace(p, "C[1,2]")


def test_text_reprs_are_short():
    import core_teil as ct

    p = load(EXAMPLES / "matmul.teil")
    text = repr(p)
    assert text.startswith("<Program ") and "lang full; param l, m, n" in text and "1 statement(s)" in text
    assert "Var(" not in text and len(text) < 200
    assert str(p) == ct.format(p).rstrip("\n")
    typed = check_program(p)
    assert repr(typed).startswith("<TypedProgram ") and "Derivation(" not in repr(typed)
    assert repr(typed.derivations[0].expr) == "<Derivation red 2 (diag 2 3 (prod A B)) : [l, n] by T-Red+>"
    report = ct.prove(load(EXAMPLES / "tvm_fig3a_bad.teil"))
    summary = r"1/3 proved, 2 refuted, 0 unknown in \d+\.\d\d s"
    assert re.fullmatch(rf"<Report .*tvm_fig3a_bad\.teil: {summary}>", repr(report))
    assert str(report) == report.render()


def test_report_latex_includes_the_counterexamples():
    import core_teil as ct

    report = ct.prove(load(EXAMPLES / "tvm_fig3a_bad.teil"))
    tex = report._repr_latex_()
    assert tex.startswith("\\begin{tabular}")
    assert "\\texttt{Example:}" in tex
    assert "reads~A[1,~2],~out~of~bounds" in tex
    assert tex.count("{") == tex.count("}")
    ok = ct.prove(load(EXAMPLES / "matmul.teil"))._repr_latex_()
    assert "Example" not in ok and ok.endswith("\\end{tabular}")
