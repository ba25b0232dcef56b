; program: examples/report_fig6_transposition.teil
; obligation: padded-writes-in-domain-stmt1
; lemma: report Theorem 2, Corollary 3
; statement: 1: v = transp 2 4 u
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun k5!4 () Int)
(declare-fun k4!3 () Int)
(declare-fun k3!2 () Int)
(declare-fun k2!1 () Int)
(declare-fun k1!0 () Int)
(assert (let ((a!1 (and (>= k1!0 1)
                (>= 8 k1!0)
                (>= k2!1 1)
                (>= 8 k2!1)
                (>= k3!2 1)
                (>= 8 k3!2)
                (>= k4!3 1)
                (>= 8 k4!3)
                (>= k5!4 1)
                (>= 8 k5!4))))
  (or (xor a!1 a!1))))
(check-sat)
