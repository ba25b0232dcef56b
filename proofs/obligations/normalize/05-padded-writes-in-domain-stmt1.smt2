; program: examples/normalize.teil
; obligation: padded-writes-in-domain-stmt1
; lemma: report Theorem 2, Corollary 3
; statement: 1: s = red x
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun n! () Int)
(declare-fun n!q8 () Int)
(assert (>= n! 1))
(assert (< (* 8 (- n!q8 1)) n!))
(assert (<= n! (* 8 n!q8)))
(assert (or (xor true true)))
(check-sat)
