; program: examples/report_fig4_contraction.teil
; obligation: writes-in-domain-stmt1
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 1: C = contr 2 3 (prod A B)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (let ((a!1 (and (>= k1!0 1) (>= 3 k1!0) (>= k2!1 1) (>= 5 k2!1))))
  (or (xor a!1 a!1))))
(check-sat)
