; program: examples/report_fig4_contraction.teil
; obligation: reads-in-bounds-stmt1
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 1: C = contr 2 3 (prod A B)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun k2!1 () Int)
(declare-fun m!2 () Int)
(declare-fun k1!0 () Int)
(assert (let ((a!1 (not (and (and (>= k1!0 1) (>= 3 k1!0)) (and (>= m!2 1) (>= 4 m!2)))))
      (a!3 (not (and (and (>= m!2 1) (>= 4 m!2)) (and (>= k2!1 1) (>= 5 k2!1))))))
(let ((a!2 (and (and (and (>= k1!0 1) (>= 3 k1!0)))
                (and (and (>= k2!1 1) (>= 5 k2!1)))
                (and (>= m!2 1) (>= 4 m!2))
                a!1))
      (a!4 (and (and (and (>= k1!0 1) (>= 3 k1!0)))
                (and (and (>= k2!1 1) (>= 5 k2!1)))
                (and (>= m!2 1) (>= 4 m!2))
                a!3)))
  (or a!2 a!4))))
(check-sat)
