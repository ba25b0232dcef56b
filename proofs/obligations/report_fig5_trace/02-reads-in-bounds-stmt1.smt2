; program: examples/report_fig5_trace.teil
; obligation: reads-in-bounds-stmt1
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 1: s = contr 1 2 (contr 2 3 (prod A B))
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun m!0 () Int)
(declare-fun m!1 () Int)
(assert (let ((a!1 (not (and (and (>= m!0 1) (>= 3 m!0)) (and (>= m!1 1) (>= 4 m!1)))))
      (a!2 (not (and (and (>= m!1 1) (>= 4 m!1)) (and (>= m!0 1) (>= 3 m!0))))))
  (or (and (and (>= m!0 1) (>= 3 m!0)) (and (>= m!1 1) (>= 4 m!1)) a!1)
      (and (and (>= m!0 1) (>= 3 m!0)) (and (>= m!1 1) (>= 4 m!1)) a!2))))
(check-sat)
