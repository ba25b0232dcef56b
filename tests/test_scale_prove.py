"""``core-teil prove PATH...`` (issue 17, item 1): a library of kernels, in parallel, with a summary.

Files, directories and globs; ``--jobs``; the exit code is the worst of the kernels'
(70 > 2 > 1 > 3 > 0, core_teil/library.py); ``--json`` and ``--junit``; a single
FILE proves exactly as before (no cache, the same table).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from core_teil import library as batch
from core_teil.cli import main
from core_teil.library import KernelStatus, collect, worst
from core_teil.proving.prove import prove

ROOT = Path(__file__).resolve().parent.parent

AXPY = "param n\ninput alloc a : []\ninput alloc x : [n]\ninput alloc y : [n]\noutput alloc z : [n]\n" \
       "z = add (mul a x) y\n"
MATMUL = "lang full\nparam l, m, n\ninput alloc A : [l, m]\ninput alloc B : [m, n]\noutput alloc C : [l, n]\n" \
         "C = red 2 (diag 2 3 (prod A B))\n"
# ill-typed (paper 000 Fig. 3a): refuted, exit 1
BAD = "lang full\nparam m, n, h\ninput alloc A : [m, h]\ninput alloc B : [h, n]\noutput alloc C : [m, n]\n" \
      "C = red 1 (diag 1 3 (prod A B))\n"
UNPARSABLE = "param n\nalloc x : [n\n"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never the user's cache directory or key."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("CORE_TEIL_CACHE_KEY", "k" * 64)


def library(root: Path, **files: str) -> Path:
    for name, text in files.items():
        p = root / name.replace("__", "/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- which files ------------------------------------------------------------------


def test_collect_directories_recursively_globs_and_files_once(tmp_path) -> None:
    lib = library(tmp_path / "lib", a_teil=AXPY, sub__b_teil=MATMUL, sub__notes_txt="not a kernel")
    for f in list(lib.rglob("*_teil")) + list(lib.rglob("*_txt")):
        f.rename(f.with_name(f.name.replace("_teil", ".teil").replace("_txt", ".txt")))
    found = collect([str(lib), str(lib / "sub" / "*.teil"), str(lib / "a.teil")])
    assert [Path(f).name for f in found] == ["a.teil", "b.teil"]
    assert [Path(f).name for f in collect([str(lib / "**" / "*.teil")])] == ["a.teil", "b.teil"]


def test_a_path_that_names_nothing_is_bad_input_naming_it(capsys, tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    for arg, says in ((str(tmp_path / "nope.teil"), "no such file"), (str(tmp_path / "empty"), "no .teil or .onnx"),
                      (str(tmp_path / "*.teil"), "no file matches")):
        code, _out, err = run(capsys, "prove", arg, "--jobs", "1")
        assert code == 2 and arg in err and says in err and "Traceback" not in err
    code, _, err = run(capsys, "prove", str(ROOT / "examples" / "axpy.teil"), "--jobs", "0")
    assert code == 2 and "--jobs 0" in err


# -- verdicts and exit codes --------------------------------------------------------


def kernels(tmp_path: Path, **files: str) -> Path:
    lib = tmp_path / "lib"
    lib.mkdir(exist_ok=True)
    for name, text in files.items():
        (lib / f"{name}.teil").write_text(text)
    return lib


def test_summary_counts_and_the_worst_exit_code(capsys, tmp_path) -> None:
    lib = kernels(tmp_path, axpy=AXPY, matmul=MATMUL)
    code, out, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache")
    assert code == 0, out
    assert "2 kernels: 2 proved, 0 refuted, 0 unknown, 0 errors" in out and "slowest:" in out
    (lib / "bad.teil").write_text(BAD)
    code, out, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache")
    assert code == 1
    assert "REFUTED  " in out and "T-Diag" in out  # the refuted kernel's counterexample is shown
    (lib / "broken.teil").write_text(UNPARSABLE)
    code, out, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache")
    assert code == 2
    assert "1 errors" in out and "broken.teil:2" in out and "Traceback" not in out


def test_unknown_is_3_and_refuted_outranks_it(capsys, tmp_path) -> None:
    lib = kernels(tmp_path, matmul=MATMUL)
    # an rlimit of 1 (timeout 1e-7 s): Z3 can decide nothing, and says so
    code, out, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache", "--timeout", "1e-7")
    assert code == 3 and "UNKNOWN" in out
    # an undeclared name is refuted without a solver, so even at rlimit 1 it is refuted: 1 outranks 3
    (lib / "undeclared.teil").write_text("param n\nalloc x : [n]\nx = y\n")
    code, out, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache", "--timeout", "1e-7")
    assert code == 1 and "1 refuted, 1 unknown" in out
    assert worst([0, 3, 1]) == 1 and worst([3, 0]) == 3 and worst([1, 2, 3]) == 2 and worst([2, 70]) == 70
    assert worst([]) == 0


def test_two_processes_agree_with_one(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(batch, "IN_PROCESS", 0)  # a pool even for three kernels
    lib = kernels(tmp_path, axpy=AXPY, matmul=MATMUL, bad=BAD)
    one = batch.run([str(lib)], jobs=1)
    two = batch.run([str(lib)], jobs=2)
    assert [(Path(r.path).name, r.status, r.proved, r.refuted) for r in one.results] == \
           [(Path(r.path).name, r.status, r.proved, r.refuted) for r in two.results]
    assert two.where == "2 processes" and two.exit_code == one.exit_code == 1


def test_json_has_a_certificate_per_kernel_and_the_summary(capsys, tmp_path) -> None:
    lib = kernels(tmp_path, axpy=AXPY, bad=BAD, broken=UNPARSABLE)
    code, out, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache", "--json")
    doc = json.loads(out)
    assert code == 2 and doc["summary"]["exit_code"] == 2
    by = {Path(k["file"]).name: k for k in doc["kernels"]}
    assert by["axpy.teil"]["certificate"]["ok"] is True and by["axpy.teil"]["status"] == "proved"
    assert by["bad.teil"]["certificate"]["exit_code"] == 1
    assert by["broken.teil"]["certificate"] is None and "broken.teil" in by["broken.teil"]["error"]
    s = doc["summary"]
    assert (s["kernels"], s["proved"], s["refuted"], s["error"]) == (3, 1, 1, 1)
    assert s["solver_decided"] == s["obligations"] and s["from_cache"] == 0


def test_json_is_the_summary_document_one_kernel_per_line(capsys, tmp_path, monkeypatch) -> None:
    """``--json`` is ``Summary.to_json()`` exactly (same fields, same order), each kernel on one line."""
    lib = kernels(tmp_path, axpy=AXPY, bad=BAD, broken=UNPARSABLE)
    seen: list[batch.Summary] = []
    real = batch.Summary.to_json
    monkeypatch.setattr(batch.Summary, "to_json", lambda self: seen.append(self) or real(self))
    code, out, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache", "--json")
    assert code == 2 and len(seen) == 1
    doc = real(seen[0])
    assert json.loads(out) == doc and list(json.loads(out)) == list(doc)
    lines = out.splitlines()
    start = lines.index('  "kernels": [')
    assert [json.loads(line.strip().rstrip(",")) for line in lines[start + 1:start + 4]] == doc["kernels"]
    assert lines[start + 4] == "  ],"


def test_junit_has_a_suite_per_kernel_and_a_failure_per_refuted_obligation(capsys, tmp_path) -> None:
    lib = kernels(tmp_path, axpy=AXPY, bad=BAD, broken=UNPARSABLE)
    xml = tmp_path / "prove.xml"
    code, _, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache", "--junit", str(xml))
    assert code == 2
    root = ET.parse(xml).getroot()
    suites = {Path(s.get("name")).name: s for s in root.iter("testsuite")}
    assert set(suites) == {"axpy.teil", "bad.teil", "broken.teil"}
    assert suites["axpy.teil"].get("failures") == "0"
    assert int(suites["bad.teil"].get("failures")) == 2  # typing and reads-in-bounds
    assert suites["broken.teil"].get("errors") == "1"
    assert int(root.get("failures")) == 2 and root.get("errors") == "1"
    code, _, err = run(capsys, "prove", str(lib), "--jobs", "1", "--junit", str(tmp_path / "no" / "dir" / "x.xml"))
    assert code == 2 and "--junit" in err


def test_a_single_file_proves_exactly_as_before(capsys, tmp_path) -> None:
    f = tmp_path / "matmul.teil"
    f.write_text(MATMUL)
    code, out, _ = run(capsys, "prove", str(f))
    assert code == 0
    from core_teil.lang.parser import parse

    expected = prove(parse(MATMUL, str(f)), source=MATMUL).render()
    def strip(text: str) -> list[str]:  # the table without its times
        lines = [re.sub(r"\s+\d+ ms$", "", ln) for ln in text.splitlines() if " in " not in ln]
        return [" ".join(ln.split()) for ln in lines if not set(ln) <= {"-", " "}]  # column widths follow times

    assert strip(out.rstrip("\n")) == strip(expected)
    assert not (tmp_path / "xdg-cache").exists()  # no cache unless --cache DIR
    # an error result of the library path for a single unreadable kernel matches the single-file exit
    code, _, err = run(capsys, "prove", str(tmp_path / "missing.teil"))
    assert code == 2 and "missing.teil" in err


def test_params_apply_to_the_kernels_that_declare_them(capsys, tmp_path) -> None:
    lib = kernels(tmp_path, axpy=AXPY, matmul=MATMUL)
    code, out, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache", "--param", "n=3", "--json")
    doc = json.loads(out)
    assert code == 0
    assert [k["certificate"]["params"] for k in doc["kernels"]] == [{"n": 3}, {"n": 3}]
    # reviewer rS (L12): a kernel that does not declare n is proved without it, for every shape
    only_m = "param m\ninput alloc x : [m]\noutput alloc y : [m]\ny = add x x\n"
    (lib / "only_m.teil").write_text(only_m)
    code, out, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache", "--param", "n=3", "--json")
    by = {Path(k["file"]).name: k for k in json.loads(out)["kernels"]}
    assert code == 0 and by["only_m.teil"]["status"] == "proved" and by["only_m.teil"]["certificate"]["params"] == {}


def test_the_examples_prove_as_their_single_file_verdicts_say(tmp_path) -> None:
    summary = batch.run([str(ROOT / "examples" / "*.teil")], jobs=2, cache=tmp_path / "c")
    for r in summary.results:
        assert r.status is (KernelStatus.REFUTED if "bad" in Path(r.path).name else KernelStatus.PROVED), r.text


def test_junit_and_json_count_every_obligation_by_its_verdict(capsys, tmp_path) -> None:
    # reviewer rS (L05, L06, L07, L21): unknowns are failures in JUnit, every testcase is counted,
    # and the JSON summary counts refuted and unknown obligations apart
    lib = kernels(tmp_path, matmul=MATMUL)
    xml = tmp_path / "unknown.xml"
    code, _, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache", "--timeout", "1e-7",
                     "--junit", str(xml))
    assert code == 3
    root = ET.parse(xml).getroot()
    (suite,) = root.iter("testsuite")
    cases = list(suite.iter("testcase"))
    assert cases and all(c.find("failure") is not None and c.find("failure").get("type") == "unknown" for c in cases)
    assert suite.get("tests") == str(len(cases)) == root.get("tests")
    assert suite.get("failures") == str(len(cases)) == root.get("failures")
    (tmp_path / "two").mkdir()
    lib2 = kernels(tmp_path / "two", axpy=AXPY, bad=BAD)
    code, out, _ = run(capsys, "prove", str(lib2), "--jobs", "1", "--no-cache", "--json")
    s = json.loads(out)["summary"]
    assert code == 1 and s["obligations_refuted"] == 2 and s["obligations_unknown"] == 0
    assert s["obligations_proved"] + s["obligations_refuted"] + s["obligations_unknown"] == s["obligations"]
    code, out, _ = run(capsys, "prove", str(lib), "--jobs", "1", "--no-cache", "--timeout", "1e-7", "--json")
    s = json.loads(out)["summary"]
    assert s["obligations_unknown"] == s["obligations"] > 0 and s["obligations_refuted"] == 0
