; program: examples/tc_increment.teil
; obligation: reads-in-bounds-stmt1
; lemma: Lemma 4.3, Theorem 4.4; report Lemma 2, Corollary 1
; statement: 1: A = B
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun m! () Int)
(declare-fun k1!0 () Int)
(assert (>= m! 1))
(assert (let ((a!1 (and (and (>= k1!0 1) (<= k1!0 m!))
                (not (and (>= k1!0 1) (<= k1!0 m!))))))
  (or a!1)))
(check-sat)
