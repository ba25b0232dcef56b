; program: examples/report_fig5_trace.teil
; obligation: padded-reads-in-bounds-stmt1
; lemma: report Lemma 5(i), Theorem 2, Corollary 3
; statement: 1: s = contr 1 2 (contr 2 3 (prod A B))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun m!0 () Int)
(declare-fun m!1 () Int)
(assert (let ((a!1 (not (and (and (>= m!0 1) (>= 8 m!0)) (and (>= m!1 1) (>= 8 m!1)))))
      (a!2 (not (and (and (>= m!1 1) (>= 8 m!1)) (and (>= m!0 1) (>= 8 m!0))))))
  (or (and (and (>= m!0 1) (>= 8 m!0)) (and (>= m!1 1) (>= 8 m!1)) a!1)
      (and (and (>= m!0 1) (>= 8 m!0)) (and (>= m!1 1) (>= 8 m!1)) a!2))))
(check-sat)
