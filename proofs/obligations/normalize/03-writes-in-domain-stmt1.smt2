; program: examples/normalize.teil
; obligation: writes-in-domain-stmt1
; lemma: Lemma 4.5, Theorem 4.6; report Theorem 1, Corollary 2
; statement: 1: s = red x
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun n! () Int)
(assert (>= n! 1))
(assert (or (xor true true)))
(check-sat)
