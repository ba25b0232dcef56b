; program: examples/report_fig4_contraction.teil
; obligation: padded-reads-in-bounds-stmt1
; lemma: report Lemma 5(i), Theorem 2, Corollary 3
; statement: 1: C = contr 2 3 (prod A B)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun k2!1 () Int)
(declare-fun m!2 () Int)
(declare-fun k1!0 () Int)
(assert (let ((a!1 (not (and (and (>= k1!0 1) (>= 8 k1!0)) (and (>= m!2 1) (>= 8 m!2)))))
      (a!3 (not (and (and (>= m!2 1) (>= 8 m!2)) (and (>= k2!1 1) (>= 8 k2!1))))))
(let ((a!2 (and (and (and (>= k1!0 1) (>= 8 k1!0)))
                (and (and (>= k2!1 1) (>= 8 k2!1)))
                (and (>= m!2 1) (>= 8 m!2))
                a!1))
      (a!4 (and (and (and (>= k1!0 1) (>= 8 k1!0)))
                (and (and (>= k2!1 1) (>= 8 k2!1)))
                (and (>= m!2 1) (>= 8 m!2))
                a!3)))
  (or a!2 a!4))))
(check-sat)
