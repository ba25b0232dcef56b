; program: examples/report_fig5_trace.teil
; obligation: padded-writes-in-domain-stmt1
; lemma: report Theorem 2, Corollary 3
; statement: 1: s = contr 1 2 (contr 2 3 (prod A B))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(assert (or (xor true true)))
(check-sat)
