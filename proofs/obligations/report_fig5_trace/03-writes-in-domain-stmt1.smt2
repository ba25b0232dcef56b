; program: examples/report_fig5_trace.teil
; obligation: writes-in-domain-stmt1
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 1: s = contr 1 2 (contr 2 3 (prod A B))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(assert (or (xor true true)))
(check-sat)
