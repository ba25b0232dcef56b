"""The result of ``core-teil prove``: a certificate, or the reasons there is none.

Frozen dataclasses with an explicit :class:`Status`; :meth:`Report.render`
is the table the CLI prints, :meth:`Report.to_json` the ``--json``
certificate, and ``_repr_html_`` / ``_repr_latex_`` show a report in a
notebook without depending on Jupyter.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..lang.printer import format_names
from .counterexample import Counterexample

EXIT_PROVED, EXIT_REFUTED, EXIT_UNKNOWN = 0, 1, 3


def kept(seconds: float) -> float:
    """A time as a report keeps it (to the microsecond, :meth:`Report.to_json`): printed from this
    too, so that a report rebuilt from its JSON (the proof cache) prints what its run printed
    (5.4996 ms was "5 ms" in a run and, kept as 5.5 ms, "6 ms" from the cache)."""
    return round(seconds, 6)


class Status(StrEnum):
    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class ObligationResult:
    """One obligation and its verdict."""

    number: int
    name: str
    lemma: str
    statement: int | None
    source: str
    status: Status
    seconds: float
    counterexample: Counterexample | None = None
    reason: str = ""
    digest: str = ""  # sha256 of its SMT-LIB2 script
    smt2: str | None = None  # where the script was written, if it was
    label: str = ""  # unique within the report, e.g. "padding-simulation-stmt1-sum2"

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "name": self.name, "label": self.label, "lemma": self.lemma,
                "statement": self.statement,
                "source": self.source, "status": str(self.status), "seconds": kept(self.seconds),
                "sha256": self.digest or None, "smt2": self.smt2, "reason": self.reason or None,
                "counterexample": self.counterexample.to_json() if self.counterexample else None}


@dataclass(frozen=True)
class Report:
    """Every obligation of one program, with how and by what it was decided."""

    file: str
    program_hash: str
    params: dict[str, int]
    symbolic: tuple[str, ...]
    pad: int | None
    solver: str
    solver_version: str
    tool_version: str
    rlimit: int
    timeout: float | None
    obligations: tuple[ObligationResult, ...]
    seconds: float
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return all(o.status is Status.PROVED for o in self.obligations)

    @property
    def exit_code(self) -> int:
        """SPEC.md section 6: 0 all proved, 1 something refuted, 3 unknown (and nothing refuted)."""
        statuses = {o.status for o in self.obligations}
        if Status.REFUTED in statuses:
            return EXIT_REFUTED
        if Status.UNKNOWN in statuses:
            return EXIT_UNKNOWN
        return EXIT_PROVED

    def count(self, status: Status) -> int:
        return sum(o.status is status for o in self.obligations)

    # -- text ---------------------------------------------------------------

    def heading(self) -> str:
        scope = []
        if self.params:
            scope.append(", ".join(f"{k}={v}" for k, v in self.params.items()))
        if self.symbolic:
            scope.append("for all " + format_names(self.symbolic) + " allowed by the assumptions")
        if self.pad is not None:
            scope.append(f"pad {self.pad}")
        solver = f"{self.solver} {self.solver_version}, seed 42, rlimit {self.rlimit:,}"
        if self.timeout is not None:
            solver += f", timeout {self.timeout:g} s"
        return f"prove {self.file}" + (f" ({'; '.join(scope)})" if scope else "") + f"  [{solver}]"

    def rows(self) -> list[tuple[str, ...]]:
        return [(str(o.number), o.name, o.lemma, "-" if o.statement is None else str(o.statement),
                 o.status.upper() if o.status is Status.REFUTED else str(o.status),
                 f"{kept(o.seconds) * 1000:.0f} ms") for o in self.obligations]

    def render(self) -> str:
        head = ("#", "obligation", "lemma", "stmt", "status", "time")
        rows = self.rows()
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        right = {0, 3, 5}

        def line(r: tuple[str, ...]) -> str:
            return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()

        out = [self.heading(), line(head), line(tuple("-" * w for w in widths))]
        out += [line(r) for r in rows]
        out.append("")
        out.append(self.summary())
        for o in self.obligations:
            if o.status is Status.REFUTED and o.counterexample is not None:
                out += ["", o.counterexample.render()]
            elif o.status is Status.UNKNOWN:
                out += ["", f"UNKNOWN: {o.label} ({o.lemma}): {o.reason}"]
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)

    def summary(self) -> str:
        n = len(self.obligations)
        text = (f"{self.count(Status.PROVED)}/{n} proved, {self.count(Status.REFUTED)} refuted, "
                f"{self.count(Status.UNKNOWN)} unknown in {kept(self.seconds):.2f} s")
        if self.ok:
            text += "\n" + "\n".join(self.conclusions())
        return text

    def conclusions(self) -> list[str]:
        """What the proved obligations add up to (by St-Seq, induction over the statements)."""
        names = {o.name for o in self.obligations}
        scope = "for every shape the assumptions allow" if self.symbolic else "for these shapes"
        out = [f"=> paper Theorem 4.6 / report Corollary 2: no out-of-bounds access, {scope}"]
        if "lowering" in names:
            out.append("=> the lowering to Core-TeIL preserves the meaning of every statement")
        if "padding-simulation" in names:
            out.append(f"=> report Theorem 3 (true form), pad {self.pad}: the padded run equals the original "
                       "on the original domain; the padding holds 0, or • where the original is •")
        return out

    # -- certificate --------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "core-teil", "version": self.tool_version, "file": self.file,
            "program_sha256": self.program_hash, "params": self.params, "symbolic": list(self.symbolic),
            "pad": self.pad,
            "solver": {"name": self.solver, "version": self.solver_version, "random_seed": 42,
                       "rlimit": self.rlimit, "timeout_s": self.timeout},
            "ok": self.ok, "exit_code": self.exit_code, "seconds": kept(self.seconds),
            "obligations": [o.to_json() for o in self.obligations],
        }

    # -- notebooks ----------------------------------------------------------

    def _repr_html_(self) -> str:
        colour = {Status.PROVED: "#1a7f37", Status.REFUTED: "#cf222e", Status.UNKNOWN: "#9a6700"}
        head = "".join(f"<th>{h}</th>" for h in ("#", "obligation", "lemma", "stmt", "status", "time"))
        body = []
        for o, r in zip(self.obligations, self.rows(), strict=True):
            cells = [html.escape(c) for c in r]
            cells[4] = f'<span style="color:{colour[o.status]}">{cells[4]}</span>'
            body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        extra = "".join(f"<pre>{html.escape(o.counterexample.render())}</pre>" for o in self.obligations
                        if o.counterexample is not None)
        return (f"<p><code>{html.escape(self.heading())}</code></p><table><thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table><p>{html.escape(self.summary())}</p>{extra}")

    def __repr__(self) -> str:
        return f"<Report {self.file}: {self.summary().splitlines()[0]}>"

    def __str__(self) -> str:
        return self.render()

    def _repr_latex_(self) -> str:
        rows = " \\\\\n".join(" & ".join(_tex(c) for c in r) for r in self.rows())
        table = ("\\begin{tabular}{rlllll}\n\\# & obligation & lemma & stmt & status & time \\\\\n\\hline\n"
                 f"{rows} \\\\\n\\end{{tabular}}")
        # the counterexamples, as the HTML repr and the text show them: one typewriter line each,
        # leading blanks kept (the caret under the source line must stay under its column)
        examples = [o.counterexample.render() for o in self.obligations if o.counterexample is not None]
        lines = [line for text in examples for line in ["", *text.splitlines()]][1:]
        if not lines:
            return table
        body = "\\\\\n".join(r"\texttt{" + (_tex(line).replace(" ", "~") or "~") + "}" for line in lines)
        return f"{table}\n\n\\noindent {body}"


#: Text-mode LaTeX for the report's strings: LaTeX's specials, and the symbols counterexamples use.
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "$": r"\$", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
        ">": r"\textgreater{}", "|": r"\textbar{}", "•": r"$\bullet$", "§": r"\S{}", "·": r"$\cdot$",
        "≤": r"$\leq$", "≥": r"$\geq$", "≠": r"$\neq$", "Σ": r"$\Sigma$", "Γ": r"$\Gamma$", "μ": r"$\mu$",
        "⌈": r"$\lceil$", "⌉": r"$\rceil$", "…": r"\ldots{}", "∪": r"$\cup$"}


def _tex(text: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in text)
