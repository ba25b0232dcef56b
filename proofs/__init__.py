"""The meta-theory of Core-TeIL, re-checked with Z3 (``make verify`` = ``python -m proofs``).

Modules, in the order of the argument (docs/lemmas.md lists every lemma):

* :mod:`proofs.kernel`   -- obligations, lemmas, the rules of induction; what is trusted
* :mod:`proofs.schema`   -- schemata with holes, typed by typing.py and run by eval.py over Z3
* :mod:`proofs.sums`     -- sum lemmas by induction on the bound, and their instances
* :mod:`proofs.safety`   -- paper Lemmas 4.1, 4.3, 4.5, Theorems 4.4, 4.6
* :mod:`proofs.padding`  -- report section 4 as made true, and its false verbatim claims
* :mod:`proofs.laws`     -- paper section 3.6 and the evaluator's rewrites
* :mod:`proofs.prover`   -- what ``core-teil prove``'s obligations rest on, and wrong semantics it must refuse
* :mod:`proofs.wrong`    -- wrong proofs the kernel must reject (the kernel's own tests)
* :mod:`proofs.mutants`  -- one-line wrong variants (of the language, the kernel, the generator) some check must catch
* :mod:`proofs.corpus`   -- the exported obligations of examples/, re-checked
* :mod:`proofs.run`      -- the parallel driver, the table, the last line
"""
