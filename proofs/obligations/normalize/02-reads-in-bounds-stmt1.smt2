; program: examples/normalize.teil
; obligation: reads-in-bounds-stmt1
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 1: s = red x
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun n! () Int)
(declare-fun m!0 () Int)
(assert (>= n! 1))
(assert (let ((a!1 (not (and (and (>= m!0 1) (<= m!0 n!))))))
  (or (and (and (>= m!0 1) (<= m!0 n!)) a!1))))
(check-sat)
