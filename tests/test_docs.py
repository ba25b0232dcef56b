"""Every example in ``docs/`` runs, so the notes never drift from the tool (issue 6).

The conventions (also stated in ``docs/course/README.md``):

* A fenced block ```` ```teil ```` is a complete program; it must parse and
  type-check.  Words after ``teil`` in the fence's info string modify that:
  ``reject=RULE`` means type-checking must fail with that rule (e.g.
  ``reject=T-Diag``; ``reject=syntax`` for a parse error), and
  ``file=NAME.teil`` also saves the snippet as ``NAME.teil`` in the
  chapter's working directory, for the transcripts below it.
* A fenced block ```` ```console ```` is a shell transcript: each line
  ``$ COMMAND`` is run with ``bash`` in the chapter's working directory
  (which has ``examples/`` of the repository in it, as the repository root
  does), stdout and stderr together, and the lines up to the next ``$ ``
  are its expected output.  A command must exit 0, so a transcript shows a
  failing command's exit status explicitly (``...; echo "exit $?"``).
* A fenced block ```` ```pycon ```` is a Python session, checked by doctest
  (ELLIPSIS, NORMALIZE_WHITESPACE) in a fresh interpreter in the same
  working directory.

``core-teil`` commands are forked from a process that has imported only
what the console script imports (:data:`ZYGOTE`), so each one starts from
the state of a fresh ``core-teil`` process, quickly; every other command,
and every command when CORE_TEIL_DOCS_SUBPROCESS=1, runs with bash.

Comparison: trailing blanks are ignored; a ``...`` in an expected line
matches any text (as doctest's ELLIPSIS), which is how the notes elide
machine-dependent output; on both sides, durations such as ``0.12s`` or
``35 ms`` become ``<time>``, runs of two or more blanks after text become
two blanks and runs of four or more dashes become four (table columns
widen with the times they hold).
Chapters run in document order, each in a fresh temporary directory.
"""

from __future__ import annotations

import atexit
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from core_teil.errors import TeilError, TeilSyntaxError
from core_teil.lang.parser import parse
from core_teil.lang.typing import check_program

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: The course and the other notes, and the README's tour.
PAGES = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]
COURSE = DOCS / "course"
CHAPTERS = [
    "01-syntax-and-shapes.md",
    "02-typing-and-derivations.md",
    "03-denotational-semantics-and-traces.md",
    "04-type-safety-and-certificates.md",
    "05-padding-and-simulation.md",
    "06-equational-reasoning-and-the-fast-evaluator.md",
    "07-the-motivating-kernels.md",
]

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+)(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
                   re.M | re.S)
TIME = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b")
#: A solver's or library's release as the tool prints it (``z3 5.4.1``, ``Z3 5.4.1``, ``cvc5 1.4.2``);
#: transcripts say ``<version>`` instead, so that a new release changes no page (issue 11).
PACKAGES = r"z3-solver|z3|Z3|cvc5|numpy|core-teil"
VERSION = re.compile(rf"\b(?P<name>{PACKAGES})(?P<sep>[ =]+v?)\d+(?:\.\d+)+\b")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    options: dict[str, str]
    body: str

    @property
    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page
        return f"{page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        info = m["info"].split()
        lang = info[0] if info else ""
        options = dict(word.split("=", 1) if "=" in word else (word, "") for word in info[1:])
        line = text.count("\n", 0, m.start()) + 1
        body = "\n".join(s[len(m["indent"]):] for s in m["body"].splitlines()) + "\n"
        out.append(Block(page, line, lang, options, body))
    return out


def canon(line: str) -> str:
    """One line as compared: durations, and the widths of table columns, do not count."""
    line = VERSION.sub(r"\g<name>\g<sep><version>", TIME.sub("<time>", line)).rstrip()
    return re.sub(r"-{4,}", "----", re.sub(r"(?<=\S) {2,}", "  ", line))


def normalise(text: str, workdir: Path) -> list[str]:
    text = text.replace(str(workdir.resolve()), ".").replace(str(workdir), ".")
    return [canon(line) for line in text.rstrip("\n").splitlines()]


def line_matches(expected: str, actual: str) -> bool:
    if "..." not in expected:
        return expected == actual
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


def compare(expected: list[str], actual: list[str]) -> bool:
    """Line by line; an expected line that is exactly ``...`` matches any number of lines."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(compare(rest, actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and line_matches(head, actual[0]) and compare(rest, actual[1:])


def transcript(body: str) -> list[tuple[str, list[str]]]:
    runs: list[tuple[str, list[str]]] = []
    for line in body.rstrip("\n").splitlines():
        if line.startswith("$ "):
            runs.append((line[2:], []))
        elif runs:
            runs[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"output before the first `$ ` command: {line!r}")
    return runs


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as on a terminal
    env["PYTHONPATH"] = str(ROOT)
    env.pop("CORE_TEIL_DEBUG", None)
    env["COLUMNS"] = "100"
    return env


#: ``core-teil ARGS [> FILE | '| REST'] [; echo "exit $?"]``: run by the zygote (quick), else bash.
IN_PROCESS = re.compile(r'^core-teil (?P<args>[^|;>&<$`]*?)\s*(?:> (?P<file>\S+)|\| (?P<pipe>[^;]+?))?'
                        r'\s*(?P<status>; echo "exit \$\?")?$')

#: A process that has imported what the ``core-teil`` console script imports, and nothing
#: else, and forks a child per command: each command starts from the state of a fresh
#: ``core-teil`` process (Z3's global context included: counterexamples can depend on
#: what the process solved before), without paying for the imports every time.
ZYGOTE = r"""
import io, json, os, sys
from core_teil.cli import main
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            os.chdir(req["cwd"])
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            out = os.open(req["out"], flags)
            err = out if req["err"] is None else os.open(req["err"], flags)
            os.dup2(out, 1)
            os.dup2(err, 2)
            sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True)
            sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", write_through=True)
            sys.argv = ["core-teil", *req["argv"]]
            try:
                code = main(req["argv"])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        except BaseException:
            import traceback
            traceback.print_exc()
        os._exit(code if isinstance(code, int) else 1)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)
"""


class Zygote:
    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None

    def run(self, argv: list[str], workdir: Path, merge: bool) -> tuple[int, str, str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, "-c", ZYGOTE], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, env=environment())
            atexit.register(self.close)
        out, err = workdir / ".zygote.out", workdir / ".zygote.err"
        request = {"argv": argv, "cwd": str(workdir), "out": str(out), "err": None if merge else str(err)}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        code = json.loads(self.proc.stdout.readline())["code"]
        texts = [p.read_text(encoding="utf-8") if p.exists() else "" for p in (out, err)]
        for p in (out, err):
            p.unlink(missing_ok=True)
        return code, texts[0], "" if merge else texts[1]

    def close(self) -> None:
        if self.proc is None:
            return
        # stdin's end is the zygote's cue to exit; both pipes closed, or a ResourceWarning
        # ends make test
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


ZYGOTE_PROCESS = Zygote()


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str


def run_command(command: str, workdir: Path, env: dict[str, str]) -> Ran:
    """As ``bash -c command`` would, with stdout and stderr together as on a terminal.

    Plain ``core-teil`` invocations are forked from :data:`ZYGOTE` (a process
    per command would make the suite slow); set CORE_TEIL_DOCS_SUBPROCESS=1
    to run everything with bash instead."""
    m = IN_PROCESS.match(command)
    if m is None or os.environ.get("CORE_TEIL_DOCS_SUBPROCESS"):
        run = subprocess.run(["bash", "-c", command], cwd=workdir, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=300)
        return Ran(run.returncode, run.stdout)
    separate = bool(m["file"] or m["pipe"])
    code, text, err = ZYGOTE_PROCESS.run(shlex.split(m["args"]), workdir, merge=not separate)
    if m["file"]:
        (workdir / m["file"]).write_text(text, encoding="utf-8")
        text = err
    elif m["pipe"]:
        run = subprocess.run(["bash", "-c", m["pipe"]], cwd=workdir, env=env, input=text,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        text, code = err + run.stdout, run.returncode
    if m["status"]:
        text += f"exit {code}\n"
        code = 0
    return Ran(code, text)


def run_console(block: Block, workdir: Path) -> None:
    env = environment()
    for command, expected in transcript(block.body):
        run = run_command(command, workdir, env)
        actual = normalise(run.stdout, workdir)
        want = [canon(line) for line in expected]
        while want and not want[-1]:
            want.pop()
        assert run.returncode == 0, (f"{block.where}: `{command}` exited {run.returncode}; a transcript "
                                     f"shows failures with `; echo \"exit $?\"`\n{run.stdout}")
        assert compare(want, actual), (f"{block.where}: `{command}` printed\n" + "\n".join(actual)
                                       + "\n--- but the notes say (after normalising) ---\n"
                                       + "\n".join(difflib.unified_diff(want, actual, "notes", "actual",
                                                                         lineterm="")))


def check_teil(block: Block, workdir: Path) -> None:
    name = block.options.get("file")
    if name:
        (workdir / name).write_text(block.body, encoding="utf-8")
    reject = block.options.get("reject")
    try:
        check_program(parse(block.body, name or block.where))
    except TeilSyntaxError as err:
        assert reject == "syntax", f"{block.where}: unexpected syntax error\n{err.render()}"
        return
    except TeilError as err:
        assert reject is not None, f"{block.where}: the snippet is rejected\n{err.render()}"
        assert err.rule == reject, f"{block.where}: rejected by {err.rule}, the notes say {reject}"
        return
    assert reject is None, f"{block.where}: the notes say reject={reject}, but the snippet type-checks"


def run_pycon(block: Block, workdir: Path) -> None:
    """doctest in a fresh interpreter: a session may replace an equation of eval.py (chapter 4)."""
    script = workdir / f"pycon_{block.line}.txt"
    script.write_text(block.body, encoding="utf-8")
    code = ("import doctest, sys\n"
            "flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE\n"
            f"r = doctest.testfile({str(script)!r}, module_relative=False, optionflags=flags, "
            f"name={block.where!r})\n"
            "sys.exit(1 if r.failed else 0)\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=workdir, env=environment(),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert run.returncode == 0, f"{block.where}: the Python session does not reproduce\n{run.stdout}"


def workdir_for(tmp_path: Path) -> Path:
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    return tmp_path


RUNNERS = {"teil": check_teil, "console": run_console, "pycon": run_pycon}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_example_in_the_page_runs(page, tmp_path):
    workdir = workdir_for(tmp_path)
    for block in blocks(page):
        runner = RUNNERS.get(block.lang)
        if runner is not None:
            runner(block, workdir)


def test_the_course_is_complete():
    assert (COURSE / "README.md").exists()
    index = (COURSE / "README.md").read_text(encoding="utf-8")
    for name in CHAPTERS:
        page = COURSE / name
        assert page.exists(), name
        assert f"]({name})" in index, f"the index does not link {name}"
        text = page.read_text(encoding="utf-8")
        assert re.search(r"^## Exercises", text, re.M), f"{name} has no exercises"
        # the worked solutions are on a page of their own (issue 16), linked from the exercises
        solutions = COURSE / "solutions" / name
        assert f"](solutions/{name})" in text, f"{name} does not link its solutions"
        assert re.search(r"^## Solutions", solutions.read_text(encoding="utf-8"), re.M), f"{name}: no solutions"
        kinds = {b.lang for b in blocks(page)}
        assert "console" in kinds or "pycon" in kinds, f"{name} runs nothing"
    assert "../lemmas.md" in index


def prose(text: str) -> str:
    """The text without fenced blocks and code spans, where ``[[e]](k)`` is not a link."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def test_links_between_pages_resolve():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", prose(page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+://", target):
                continue
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to missing {target}"


def test_every_fence_is_recognised():
    """A fence the harness does not see (e.g. after a list marker) would hide its examples."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        fences = [n for n, line in enumerate(text.splitlines(), start=1) if "```" in line.replace("````", "")
                  and not re.match(r"^ *```", line) and re.search(r"(^|\s)```\w", line)]
        assert not fences, f"{page.relative_to(ROOT)}: fences not at the start of a line: lines {fences}"
        opened = [line for line in text.splitlines() if re.match(r"^ *```", line)]
        assert len(opened) == 2 * len(blocks(page)), f"{page.relative_to(ROOT)}: unbalanced fences"


def test_transcripts_are_only_in_console_blocks():
    for page in PAGES:
        for block in blocks(page):
            if block.lang not in RUNNERS and re.search(r"^\$ core-teil", block.body, re.M):
                raise AssertionError(f"{block.where}: a `$ core-teil` transcript in a ```{block.lang} block "
                                     f"is not executed; fence it as ```console")


# -- the harness itself must be able to fail ----------------------------------


def test_harness_detects_drift(tmp_path):
    workdir = workdir_for(tmp_path)
    page = tmp_path / "page.md"
    page.write_text("x\n\n```console\n$ core-teil check examples/matmul.teil\nA : [l, m]\nB : [m, n]\n"
                    "C : [l, WRONG]\n```\n", encoding="utf-8")
    (block,) = blocks(page)
    with pytest.raises(AssertionError, match="but the notes say"):
        run_console(block, workdir)
    page.write_text("```console\n$ core-teil check examples/tvm_fig3a_bad.teil\n...\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="exited 1"):
        run_console(blocks(page)[0], workdir)
    page.write_text("```teil reject=T-Proj\nalloc A : [2]\nalloc B : [3]\nB = A\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="rejected by OK-Stmt"):
        check_teil(blocks(page)[0], workdir)
    page.write_text("```teil\nalloc A : [2]\nA = A\n```\n\n```teil reject=T-Var\nalloc A : [2]\nA = A\n```\n",
                    encoding="utf-8")
    ok, wrong = blocks(page)
    check_teil(ok, workdir)
    with pytest.raises(AssertionError, match="type-checks"):
        check_teil(wrong, workdir)


def test_no_transcript_hard_codes_a_version():
    """Expected output says ``<version>``: a page that pins a release breaks on the next one."""
    pinned = [f"{b.where}: {m[0]}" for page in PAGES for b in blocks(page) for m in VERSION.finditer(b.body)]
    assert not pinned, "transcripts that hard-code a package version (write <version>):\n" + "\n".join(pinned)


def test_versions_are_normalised():
    assert canon("prove x  [z3 5.4.1, seed 42]") == canon("prove x  [z3 <version>, seed 42]")
    assert canon("Z3 5.4.0, seed 42; cvc5 1.4.2") == "Z3 <version>, seed 42; cvc5 <version>"
    assert VERSION.search("[z3 5.4.1, seed") and not VERSION.search("seed 42, rlimit 50,000,000")
    assert not VERSION.search("lemma 4.3"), "a lemma number is not a release"


def test_ellipsis_and_time_normalisation():
    assert compare(["a ... c", "..."], ["a b c", "x", "y"])
    assert not compare(["a ... c"], ["a b d"])
    assert compare(["...", "end"], ["x", "end"])
    assert not compare(["end"], ["end", "extra"])
    assert TIME.sub("<time>", "proved in 0.12s (35 ms)") == "proved in <time> (<time>)"
    assert canon("1  x   proved   8 ms") == canon("1  x  proved  12 ms") == "1  x  proved  <time>"
    assert canon("-  ----  ------") == canon("-  -----  ------")
    assert canon("   indented  a") == "   indented  a"  # leading blanks (tree drawings) still count


def test_in_process_runs_match_bash(tmp_path, monkeypatch):
    """The quick in-process path prints what a terminal would show for the same command."""
    workdir = workdir_for(tmp_path)
    env = environment()
    commands = [
        "core-teil check examples/fig11_proj_expa.teil --param k=3,m=2,n=5",
        'core-teil check examples/tvm_fig3a_bad.teil; echo "exit $?"',
        "core-teil derive examples/matmul_core.teil | tail -3",
        "core-teil derive --latex examples/matmul.teil > m.tex",
        "core-teil trace examples/matmul.teil 'C[1,2]' --param l=2,m=3,n=4",
        'core-teil trace examples/matmul.teil C[9] --param l=2,m=3,n=4; echo "exit $?"',
        'core-teil frobnicate x.teil; echo "exit $?"',
        'core-teil prove examples/tvm_fig3a_bad.teil; echo "exit $?"',
    ]
    assert all(IN_PROCESS.match(c) for c in commands)
    quick = [run_command(c, workdir, env) for c in commands]
    tex = (workdir / "m.tex").read_text()
    monkeypatch.setenv("CORE_TEIL_DOCS_SUBPROCESS", "1")
    slow = [run_command(c, workdir, env) for c in commands]
    assert (workdir / "m.tex").read_text() == tex
    for c, a, b in zip(commands, quick, slow, strict=True):
        assert (a.returncode, normalise(a.stdout, workdir)) == (b.returncode, normalise(b.stdout, workdir)), c


# -- maintenance: rewrite the transcripts of a page with the tool's current output --------


def update(page: Path) -> None:
    """Replace the expected output of every transcript of ``page`` by what the tool prints now.

    Transcripts with a ``...`` are left alone.  Review the result with ``git diff``:
    this accepts whatever the tool prints, right or wrong."""
    import tempfile

    text = page.read_text(encoding="utf-8")
    out, pos = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        workdir = workdir_for(Path(tmp))
        env = environment()
        for m in FENCE.finditer(text):
            block = next(b for b in blocks(page) if b.line == text.count("\n", 0, m.start()) + 1)
            out.append(text[pos:m.start()])
            pos = m.end()
            if block.lang == "teil" and block.options.get("file"):
                (workdir / block.options["file"]).write_text(block.body, encoding="utf-8")
            if block.lang != "console":
                out.append(m.group(0))
                continue
            lines: list[str] = []
            for command, expected in transcript(block.body):
                lines.append(f"$ {command}")
                if any("..." in e for e in expected):
                    lines += expected
                    continue
                ran = run_command(command, workdir, env)
                text_out = ran.stdout.replace(str(workdir.resolve()), ".").replace(str(workdir), ".")
                lines += [line.rstrip() for line in text_out.rstrip("\n").splitlines()]
            indent = m["indent"]
            body = "\n".join(indent + line if line else line for line in lines)
            out.append(f"{indent}{m['fence']}{m['info']}\n{body}\n{indent}{m['fence']}")
    out.append(text[pos:])
    page.write_text("".join(out), encoding="utf-8")


if __name__ == "__main__":
    # python tests/test_docs.py docs/course/03-denotational-semantics-and-traces.md ...
    sys.path.insert(0, str(ROOT))
    for name in sys.argv[1:]:
        update(Path(name).resolve())
