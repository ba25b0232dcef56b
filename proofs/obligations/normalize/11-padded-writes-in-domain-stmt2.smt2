; program: examples/normalize.teil
; obligation: padded-writes-in-domain-stmt2
; lemma: report Theorem 2, Corollary 3
; statement: 2: p = div x (red x)
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun n! () Int)
(declare-fun n!q8 () Int)
(declare-fun k1!0 () Int)
(assert (>= n! 1))
(assert (< (* 8 (- n!q8 1)) n!))
(assert (<= n! (* 8 n!q8)))
(assert (let ((a!1 (xor (and (>= k1!0 1) (<= k1!0 (* 8 n!q8)))
                (and (>= k1!0 1) (<= k1!0 (* 8 n!q8))))))
  (or a!1)))
(check-sat)
