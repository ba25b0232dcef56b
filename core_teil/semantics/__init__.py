"""One semantics, several interpretations: the equations of [[e]](k) and St-Stmt (``eval``),
read on numpy arrays, on Z3 terms (``symbolic``), on index sequences of any length
(``sequences``) and as counts of arithmetic (``cost``), and the validation of what a run
is given (``inputs``).  SPEC.md section 4; paper 000, Fig. 7; report 001, section 4."""
