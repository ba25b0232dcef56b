; program: examples/tc_increment.teil
; obligation: padded-writes-in-domain-stmt2
; lemma: report Theorem 2, Corollary 3
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
(assert (let ((a!1 (xor (and (>= k1!0 1) (<= k1!0 (* 8 m!q8)))
                (and (>= k1!0 1) (<= k1!0 (* 8 m!q8))))))
  (or a!1)))
(check-sat)
