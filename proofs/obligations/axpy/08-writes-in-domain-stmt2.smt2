; program: examples/axpy.teil
; obligation: writes-in-domain-stmt2
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 2: w = sub z y
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun n! () Int)
(declare-fun k1!0 () Int)
(assert (>= n! 1))
(assert (or (xor (and (>= k1!0 1) (<= k1!0 n!)) (and (>= k1!0 1) (<= k1!0 n!)))))
(check-sat)
