; program: examples/report_fig6_transposition.teil
; obligation: reads-in-bounds-stmt1
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 1: v = transp 2 4 u
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun k5!4 () Int)
(declare-fun k2!1 () Int)
(declare-fun k3!2 () Int)
(declare-fun k4!3 () Int)
(declare-fun k1!0 () Int)
(assert (let ((a!1 (not (and (and (>= k1!0 1) (>= 2 k1!0))
                     (and (>= k4!3 1) (>= 3 k4!3))
                     (and (>= k3!2 1) (>= 4 k3!2))
                     (and (>= k2!1 1) (>= 5 k2!1))
                     (and (>= k5!4 1) (>= 6 k5!4))))))
  (or (and (and (>= k1!0 1) (>= 2 k1!0))
           (and (>= k2!1 1) (>= 5 k2!1))
           (and (>= k3!2 1) (>= 4 k3!2))
           (and (>= k4!3 1) (>= 3 k4!3))
           (and (>= k5!4 1) (>= 6 k5!4))
           a!1))))
(check-sat)
