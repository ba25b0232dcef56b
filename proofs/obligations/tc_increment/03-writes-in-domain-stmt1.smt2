; program: examples/tc_increment.teil
; obligation: writes-in-domain-stmt1
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 1: A = B
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun m! () Int)
(declare-fun k1!0 () Int)
(assert (>= m! 1))
(assert (or (xor (and (>= k1!0 1) (<= k1!0 m!)) (and (>= k1!0 1) (<= k1!0 m!)))))
(check-sat)
