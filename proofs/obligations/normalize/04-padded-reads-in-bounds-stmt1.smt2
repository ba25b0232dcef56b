; program: examples/normalize.teil
; obligation: padded-reads-in-bounds-stmt1
; lemma: report Lemma 5(i), Theorem 2, Corollary 3
; statement: 1: s = red x
; pad: 8
; unsat <=> the obligation holds
(set-logic ALL)
(declare-fun n! () Int)
(declare-fun n!q8 () Int)
(declare-fun m!0 () Int)
(assert (>= n! 1))
(assert (< (* 8 (- n!q8 1)) n!))
(assert (<= n! (* 8 n!q8)))
(assert (let ((a!1 (and (and (>= m!0 1) (<= m!0 (* 8 n!q8))))))
(let ((a!2 (and (and (>= m!0 1) (<= m!0 (* 8 n!q8))) (not a!1))))
  (or a!2))))
(check-sat)
