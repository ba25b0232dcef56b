; program: examples/tc_increment.teil
; obligation: padded-reads-in-bounds-stmt2
; lemma: report Lemma 5(i), Theorem 2, Corollary 3
; statement: 2: A = add A C
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun m! () Int)
(declare-fun m!q8 () Int)
(declare-fun k1!0 () Int)
(assert (>= m! 1))
(assert (< (* 8 (- m!q8 1)) m!))
(assert (<= m! (* 8 m!q8)))
(assert (let ((a!1 (not (and (>= k1!0 1) (<= k1!0 (* 8 m!q8))))))
(let ((a!2 (and (and (>= k1!0 1) (<= k1!0 (* 8 m!q8))) a!1)))
  (or a!2 a!2))))
(check-sat)
